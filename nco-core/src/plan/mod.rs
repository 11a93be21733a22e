//! The flows the operators share, which read inputs, run kernels and write outputs:
//! the output of a command line and the file being written ([`target`]), extraction,
//! processed (arithmetic) variables, two files combined (ncbo, ncflint: [`pair`]),
//! progress of long copies. Uses
//! [`crate::rules`] and the lower crates, never [`crate::cli`].

pub mod arith;
pub mod digest;
pub mod edit;
pub mod extract;
pub mod pair;
pub mod partial;
pub mod progress;
pub mod target;
