//! # nco-h5
//!
//! The netCDF-4/HDF5 chunk engine of nco-rs (design and measurements:
//! docs/netcdf4-engine.md). Reads need no libhdf5; writes store chunks through it.
//!
//! | module | concern |
//! |---|---|
//! | [`file`] | an HDF5 file opened by the engine: one descriptor, positioned reads |
//! | [`layout`] | each variable's storage (type, byte order, shape, chunks, filters, fill value, chunk addresses) from its object header, by the pure-Rust `hdf5-reader` crate |
//! | [`locate`] | the chunk index walk (every index type of HDF5 1.8-1.14), linear in the number of chunks |
//! | [`read`] | selection reads that touch only the chunks they need, each chunk read with one positioned read and decoded (inflate, unshuffle, Fletcher-32, byte order) in parallel with rayon, outside any lock, straight into the caller's buffer |
//! | [`filters`] | the codecs: deflate (libdeflate), shuffle, Fletcher-32 |
//! | [`write`] | chunks encoded in parallel and stored with HDF5's direct chunk write (`H5Dwrite_chunk`) into a file whose definitions libnetcdf made |
//! | [`fuzzing`] | the input format of the chunk-decoder fuzz target (`fuzz/`) |
//! | [`index`] | the system libhdf5: files opened for writing; chunk addresses through libhdf5 as a cross-check |
//! | [`syslib`] | the system libnetcdf and its libhdf5, loaded the first time a file needs them (not linked) |
#![deny(missing_docs)]

pub mod file;
pub mod filters;
pub mod fuzzing;
pub mod index;
pub mod layout;
pub mod locate;
pub mod read;
pub mod syslib;
pub mod write;

pub use file::File;
pub use layout::{Kind, Loc, VarIndex};

/// Errors of the engine. The caller adds the file and variable names.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// libhdf5 refused a call (the call is named).
    #[error("HDF5: {0} failed")]
    Hdf5(String),
    /// A filter the engine does not decode (named; the caller falls back to libnetcdf).
    #[error("unsupported HDF5 filter {0}")]
    UnsupportedFilter(String),
    /// A layout or type the engine does not handle (the caller falls back to
    /// libnetcdf).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Stored data that cannot be decoded: bad deflate stream, checksum mismatch, a
    /// chunk past the end of the file, a damaged header or chunk index.
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// A request outside the variable.
    #[error("{0}")]
    Request(String),
    /// An I/O error.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The engine's result type.
pub type Result<T> = std::result::Result<T, Error>;
