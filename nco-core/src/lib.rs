//! # nco-core
//!
//! The shared library of nco-rs, a Rust re-implementation of the netCDF Operators (NCO).
//! Every rule of NCO behaviour lives here once; operator crates parse arguments, call
//! this crate and write. Operator crates depend on this crate only: it re-exports the
//! lower crates' modules under its own name (`nco_core::dataset`, `nco_core::types`...).
//!
//! ## Layers
//!
//! Each layer uses only the layers below it. Between crates the compiler enforces it;
//! inside this crate the three folders are checked by a unit test (`cargo test -p
//! nco-core layering`), which names the file and line of any upward use.
//!
//! | layer | where | concern |
//! |---|---|---|
//! | cli | [`cli`] (`src/cli/`) | clap argument groups, the operators' start and `main!`, the environment, `-D` resource usage |
//! | plan | [`plan`] (`src/plan/`) | flows that read inputs, run kernels and write outputs |
//! | rules | [`rules`] (`src/rules/`) | what NCO's options and the files' attributes mean |
//! | I/O | crate `nco-io` | netCDF files in and out: dataset interface, backends, output files |
//! | kernels | crate `nco-kernels` | generic kernels on slices and buffers, the ordered parallel pipeline (no I/O) |
//! | base | crate `nco-base` | error, types, metadata model, block planning, processor features, allocator |
//!
//! `nco-io` and `nco-kernels` use only `nco-base`, not each other.
//!
//! | module | layer | concern |
//! |---|---|---|
//! | [`cli`] | cli | shared command-line options and process plumbing ([`cli::run_main`], [`main!`]) |
//! | [`cli::env`] | cli | the `NCO_RS_*` environment variables, read once at start |
//! | [`cli::rusage`] | cli | resource usage for `-D` |
//! | [`extract`] | plan | the extraction flow shared by ncks and the other operators |
//! | [`arith`] | plan | processed variables: unpack, compute in double, write unpacked; cell_methods |
//! | [`edit`] | plan | metadata edits of one file (ncatted, ncrename): a classic header rewritten in place when it fits, a new file otherwise |
//! | [`partial`] | plan | `--part I/N` part files and `--merge`: a run split across processes, its partial statistics combined ([`rules::partial`] picks the shares) |
//! | [`progress`] | plan | progress bars on terminals only |
//! | [`target`] | plan | an operator's output: format and storage planned once, provenance, the file written through a temporary one and committed ([`target::Output`]) |
//! | [`hyperslab`] | rules | `-d` parsing and resolution, multi-slabs, wrapped coordinates |
//! | [`select`] | rules | `-v/-x/-C/-c` and CF associated variables |
//! | [`multifile`] | rules | input lists (`-n`, `-p`, stdin), record selection across files, sub-cycles |
//! | [`stations`] | rules | list-input multi-station extraction (ncks/ncrcat `--list`) |
//! | [`chunking`] | rules | `--cnk_*` and `-L` for netCDF-4 output |
//! | [`fill`] | rules | `_FillValue` semantics |
//! | [`quantize`] | rules | `--ppc`/`--baa`: which variables are quantized and how (the arithmetic is [`kernels::quantize`]) |
//! | [`packing`] | rules | `scale_factor`/`add_offset` attributes (the arithmetic is [`kernels::packing`]) |
//! | [`calendar`] | rules | CF time units for date-valued bounds and rebasing |
//! | [`names`] | rules | netCDF's rules for names |
//! | [`attedit`] | rules | ncatted's `-a att,var,mode,type,value` edits, `_FillValue` changes |
//! | [`rename`] | rules | ncrename's `-v -d -g -a old,new` and their `.` and `@` forms |
//! | [`cfmt`] | rules | C printf formatting of values (`ncks -s`, NCO's number formats) |
//! | [`dataset`] | I/O | the dataset interface: [`dataset::Dataset`] (read) and [`dataset::OutFile`] (write), backend per file |
//! | [`classic`] | I/O | our reader and writer of CDF-1/2/5 (lock-free, large I/O, raw copies) |
//! | [`nc4`] | I/O | the libnetcdf backend (netCDF-4, DAP, `--no-mmap`) |
//! | [`output`] | I/O | temporary output files, `-O/-A`, `history` |
//! | [`kernels`] | kernels | generic reductions (avg, ttl, min, max, rms...), binary operations, permutation, packing |
//! | [`pipeline`] | kernels | ordered parallel processing with bounded memory |
//! | [`types`] | base | netCDF types, the [`types::NcNum`] trait over the numeric types, [`types::Values`] buffers, dispatch macros |
//! | [`model`] | base | metadata model: dimensions, variables, attributes, formats |
//! | [`blocks`] | base | the blocks (whole rows, pieces of a row) a selection is streamed in |
//! | [`cpu`] | base | processor features chosen at run time |
//! | [`alloc`] | base | the process allocator each binary installs (through [`main!`]) |
//! | [`error`] | base | the error type |
//!
//! Glossary (NCO's terms): *hyperslab* (a start/count/stride selection on each
//! dimension), *multi-slab* (several hyperslabs on one dimension), *record dimension*
//! (the unlimited one), *fill value* (`_FillValue`, marks missing data), *packing*
//! (`scale_factor`/`add_offset`), *chunk* (the netCDF-4 storage unit).
#![deny(missing_docs)]

pub mod cli;
pub mod plan;
pub mod rules;

#[cfg(test)]
mod layering;

pub use nco_base::{alloc, blocks, cpu, error, model, types};
pub use nco_base::{dispatch, dispatch_type};
pub use nco_base::{Error, Result};
pub use nco_io::{classic, dataset, nc4, output, udunits};
pub use nco_kernels as kernels;
pub use nco_kernels::pipeline;
pub use plan::{arith, digest, edit, extract, pair, partial, progress, target};
pub use rules::{
    attedit, auxbox, calendar, cfmt, chunking, climatology, fill, groups, hyperslab, multifile,
    names, packing, quantize, rename, select, stations,
};
