//! # nco-base
//!
//! The bottom layer of nco-rs: what every other crate of the workspace uses, with no
//! I/O and no NCO rule. Nothing here depends on another crate of the workspace.
//!
//! | module | concern |
//! |---|---|
//! | [`error`] | the one error type ([`Error`]) and [`Result`] |
//! | [`types`] | netCDF types, the [`types::NcNum`] trait over the numeric types, [`types::Values`] buffers, the dispatch macros ([`dispatch!`], [`dispatch_type!`]) |
//! | [`model`] | metadata model: dimensions, variables, attributes, formats, storage |
//! | [`blocks`] | the blocks (whole rows, pieces of a row) a selection is streamed in |
//! | [`cpu`] | processor features chosen at run time ([`cpu::with_avx2`]) |
//! | [`alloc`] | the process allocator each binary installs ([`alloc::Allocator`]) |
#![deny(missing_docs)]

pub mod alloc;
pub mod blocks;
pub mod cpu;
pub mod error;
pub mod model;
pub mod types;

pub use error::{Error, Result};

/// The process allocator for this crate's own unit tests (binaries install it through
/// `nco_core::main!`).
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: alloc::Allocator = alloc::Allocator;
