//! Chunk sizes as libnetcdf accepts them for an output variable. The chunking policy
//! of the command line (`--cnk_*`) is `nco_core::chunking`.

use crate::model::{Meta, Var};

/// Chunk sizes `chunks` (an input's) fitted to output variable `v` of `meta`: `None`
/// when their rank differs from `v`'s (a dimension was averaged away), otherwise no
/// larger than `v`'s fixed dimensions (a hyperslab may have cut one below its chunk
/// size, which libnetcdf refuses; record dimensions take any chunk size).
pub fn fit(chunks: &[usize], meta: &Meta, v: &Var) -> Option<Vec<usize>> {
    (chunks.len() == v.dims.len()).then(|| {
        chunks
            .iter()
            .zip(&v.dims)
            .map(|(&n, &d)| {
                let dim = &meta.dims[d];
                if dim.unlimited {
                    n
                } else {
                    n.min(dim.len.max(1))
                }
            })
            .collect()
    })
}
