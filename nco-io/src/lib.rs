//! # nco-io
//!
//! netCDF files in and out, with no NCO rule: the one dataset interface the operators
//! read and write through, its two backends, output-file safety and provenance.
//! Uses only `nco-base`.
//!
//! | module | concern |
//! |---|---|
//! | [`dataset`] | the dataset interface: [`dataset::Dataset`] (read) and [`dataset::OutFile`] (write), backend per file; read-ahead |
//! | [`classic`] | our reader and writer of CDF-1/2/5 (lock-free, large I/O, raw copies) |
//! | [`h5`] | netCDF-4 data read by our chunk engine (`nco-h5`), beside libnetcdf |
//! | [`nc4`] | the libnetcdf backend (netCDF-4 metadata and what the engine does not read, DAP, `--no-mmap`) |
//! | [`output`] | temporary output files, `-O/-A`, `history` |
//! | [`chunking`] | chunk sizes fitted to an output variable, as libnetcdf accepts them |
#![deny(missing_docs)]

pub mod chunking;
pub mod classic;
pub mod dataset;
pub mod h5;
pub mod nc4;
pub mod output;
pub mod part;
pub mod udunits;

// The base modules under their usual names, for the paths `crate::types::...` below.
use nco_base::{dispatch, dispatch_type, error, model, types};

/// Refuse variable `v` when the file `format` cannot store its type (the writers of
/// both engines check each variable before defining it).
///
/// Errors: one naming the variable, its type and the format's kind.
pub(crate) fn check_storable(format: model::Format, v: &model::Var) -> error::Result<()> {
    if format.supports(v.ty) {
        return Ok(());
    }
    Err(error::Error::var(
        &v.name,
        format!(
            "type {} cannot be stored in a {} file",
            v.ty,
            format.kind_name()
        ),
    ))
}
