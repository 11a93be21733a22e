//! NCO's rules: what the operators' options and the files' attributes mean. Uses the
//! lower crates only (nco-base, nco-kernels, nco-io), never [`crate::plan`] or
//! [`crate::cli`].

pub mod attedit;
pub mod auxbox;
pub mod calendar;
pub mod cell_methods;
pub mod cfmt;
pub mod chunking;
pub mod climatology;
pub mod fill;
pub mod formats;
pub mod groups;
pub mod hyperslab;
pub mod mask;
pub mod multifile;
pub mod names;
pub mod packing;
pub mod partial;
pub mod quantize;
pub mod rename;
pub mod select;
pub mod stations;
