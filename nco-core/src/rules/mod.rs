//! NCO's rules: what the operators' options and the files' attributes mean.

pub mod packing;
