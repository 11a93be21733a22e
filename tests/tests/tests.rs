//! The integration tests of nco-rs, in one test binary (as ripgrep keeps them): one
//! module per operator or feature, helpers in `common` and in the `nco_tests` library
//! (`tests/src`). Every test runs the operator binaries (found by `nco_tests::bin`),
//! so `NCO_RS_BIN_DIR=/usr/bin cargo test --release -p nco-tests` runs the same suite
//! against NCO itself.
//!
//! Run one module or test by name: `cargo test --release -p nco-tests ncwa::` or
//! `cargo test --release -p nco-tests -- differential::diff_ncbo`.

mod common;

mod append;
mod aux_coords;
mod bench;
mod casts;
mod cf_reduce;
mod chunking;
mod climatology;
mod dap;
mod differential;
mod digests;
mod edge;
mod faults;
mod fixed;
mod fuzz_smoke;
mod groups;
mod harness;
mod install;
mod limits;
mod nc3types;
mod nc4engine;
mod ncap;
mod ncap_corpus;
mod ncap_slab;
mod ncatted;
mod ncbo;
mod nces;
mod ncflint;
mod ncks;
mod ncml;
mod ncpdq;
mod ncpdq_blocks;
mod ncra;
mod ncrename;
mod ncwa;
mod options;
mod parts;
mod paths;
mod print_options;
mod printing;
mod quantize;
mod selection;
mod startup;
mod stations;
mod times;
