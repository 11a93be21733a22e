//! # nco-h5
//!
//! Prototype of the netCDF-4/HDF5 chunk engine (see docs/netcdf4-engine.md):
//!
//! * [`index`]: each variable's storage (chunk shape, filters, type, byte order, fill
//!   value) and the file address and size of every chunk, found once per variable
//!   through the system libhdf5 (`H5Dget_chunk_info_by_coord`), under the process-wide
//!   HDF5 lock;
//! * [`locate`]: the same chunk addresses found by walking the chunk index with the
//!   pure-Rust `hdf5-reader` crate (linear in the number of chunks; libhdf5 1.10.8 is
//!   quadratic);
//! * [`read`]: hyperslab reads that touch only the chunks they need, each chunk read
//!   with one positioned read and decoded (inflate, unshuffle, Fletcher-32, byte order)
//!   in parallel with rayon, outside any lock, straight into the caller's buffer;
//! * [`write`]: chunks encoded in parallel and stored with HDF5's direct chunk write
//!   (`H5Dwrite_chunk`) into a file whose definitions libnetcdf made;
//! * [`filters`]: the codecs.
#![deny(missing_docs)]

pub mod filters;
pub mod index;
pub mod locate;
pub mod read;
pub mod write;

/// Errors of the engine. The caller adds the file and variable names.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// libhdf5 refused a call (the call is named).
    #[error("HDF5: {0} failed")]
    Hdf5(String),
    /// A storage layout, type or filter the engine does not read (the caller falls back
    /// to libnetcdf).
    #[error("unsupported filter {0}")]
    UnsupportedFilter(String),
    /// A layout or type the engine does not handle.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Stored data that cannot be decoded: bad deflate stream, checksum mismatch, a
    /// chunk past the end of the file.
    #[error("corrupt chunk: {0}")]
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
