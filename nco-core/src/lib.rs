//! # nco-core
//!
//! The shared library of nco-rs, a Rust re-implementation of the netCDF Operators (NCO).
//! Every rule of NCO behaviour lives here once; operator crates parse arguments, call
//! this crate and write.
//!
//! | module | concern |
//! |---|---|
//! | [`types`] | netCDF types, the [`types::NcNum`] trait over the numeric types, [`types::Values`] buffers, dispatch macros |
//! | [`model`] | metadata model: dimensions, variables, attributes, formats |
//! | [`dataset`] | the dataset interface: [`dataset::Dataset`] (read) and [`dataset::OutFile`] (write), backend per file |
//! | [`classic`] | our reader and writer of CDF-1/2/5 (lock-free, large I/O, raw copies) |
//! | [`nc4`] | the libnetcdf backend (netCDF-4, DAP, `--no-mmap`) |
//! | [`hyperslab`] | `-d` parsing and resolution, multi-slabs, wrapped coordinates |
//! | [`cfmt`] | C printf formatting of values (`ncks -s`, NCO's number formats) |
//! | [`calendar`] | CF time units for date-valued bounds and rebasing |
//! | [`multifile`] | input lists (`-n`, `-p`, stdin), record selection across files, sub-cycles |
//! | [`select`] | `-v/-x/-C/-c` and CF associated variables |
//! | [`stations`] | list-input multi-station extraction (ncks/ncrcat `--list`) |
//! | [`chunking`] | `--cnk_*` and `-L` for netCDF-4 output |
//! | [`arith`] | processed variables: unpack, compute in double, write unpacked; cell_methods |
//! | [`fill`] | `_FillValue` semantics |
//! | [`packing`] | `scale_factor`/`add_offset` unpacking |
//! | [`kernels`] | generic reductions (avg, ttl, min, max, rms...) and binary operations |
//! | [`pipeline`] | ordered parallel processing with bounded memory |
//! | [`output`] | temporary output files, `-O/-A`, `history` |
//! | [`extract`] | the extraction pipeline shared by ncks and the other operators |
//! | [`cli`] | shared command-line options and process plumbing |
//! | [`rusage`] | resource usage for `-D` and the benchmark |
//! | [`progress`] | progress bars on terminals only |
//! | [`error`] | the error type |
//!
//! Glossary (NCO's terms): *hyperslab* (a start/count/stride selection on each
//! dimension), *multi-slab* (several hyperslabs on one dimension), *record dimension*
//! (the unlimited one), *fill value* (`_FillValue`, marks missing data), *packing*
//! (`scale_factor`/`add_offset`), *chunk* (the netCDF-4 storage unit).
#![deny(missing_docs)]

pub mod arith;
pub mod calendar;
pub mod cfmt;
pub mod chunking;
pub mod cli;
pub mod extract;
pub mod fill;
pub mod hyperslab;
pub mod multifile;
pub mod progress;
pub mod rules;
pub mod rusage;
pub mod select;
pub mod stations;

pub use nco_base::{alloc, cpu, error, model, types};
pub use nco_base::{dispatch, dispatch_type};
pub use nco_base::{Error, Result};
pub use nco_io::{classic, dataset, nc4, output};
pub use nco_kernels as kernels;
pub use nco_kernels::pipeline;
pub use rules::packing;
