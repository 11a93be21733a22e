//! Dimension re-ordering and reversal (ncpdq `-a`, NCO manual "ncpdq netCDF Permute
//! Dimensions Quickly"), written once for every element type.

use crate::types::{NcNum, Values};

/// Re-order a C-order array of `shape`: output dimension `k` is input dimension
/// `perm[k]`, and `rev[j]` reverses input dimension `j`. Returns the output in C order
/// of the permuted shape. One pass, no index table: the innermost output dimension is
/// copied as a run (forward, backward or strided) and the outer offsets are updated
/// incrementally, so memory is the input plus the output.
///
/// `perm` must be a permutation of `0..shape.len()` and `rev` as long as `shape`;
/// `x.len()` must be the product of `shape`.
pub fn permute_slice<T: Clone>(x: &[T], shape: &[usize], perm: &[usize], rev: &[bool]) -> Vec<T> {
    let nd = shape.len();
    let n: usize = shape.iter().product();
    if nd == 0 || n == 0 {
        return x.to_vec();
    }
    let mut in_stride = vec![1isize; nd];
    for k in (0..nd - 1).rev() {
        in_stride[k] = in_stride[k + 1] * shape[k + 1] as isize;
    }
    // Start at the input's last index along reversed dimensions; each output
    // dimension steps through the input by its input dimension's stride, negated when
    // reversed.
    let mut base: isize = (0..nd)
        .filter(|&j| rev[j])
        .map(|j| (shape[j] as isize - 1) * in_stride[j])
        .sum();
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let step: Vec<isize> = perm
        .iter()
        .map(|&p| if rev[p] { -in_stride[p] } else { in_stride[p] })
        .collect();
    let inner = out_shape[nd - 1];
    let s_in = step[nd - 1];
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; nd - 1];
    loop {
        let b = base as usize;
        match s_in {
            1 => out.extend_from_slice(&x[b..b + inner]),
            -1 => out.extend(x[b + 1 - inner..=b].iter().rev().cloned()),
            _ => {
                let mut o = base;
                for _ in 0..inner {
                    out.push(x[o as usize].clone());
                    o += s_in;
                }
            }
        }
        let mut k = nd - 1;
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            idx[k] += 1;
            base += step[k];
            if idx[k] < out_shape[k] {
                break;
            }
            base -= step[k] * out_shape[k] as isize;
            idx[k] = 0;
        }
    }
}

/// [`permute_slice`] on a runtime-typed buffer (numbers, characters or strings); the
/// buffer itself comes back when nothing moves.
pub fn permute(x: Values, shape: &[usize], perm: &[usize], rev: &[bool]) -> Values {
    let identity = perm.iter().enumerate().all(|(k, &p)| k == p) && !rev.iter().any(|&r| r);
    if identity || shape.is_empty() {
        return x;
    }
    crate::dispatch!(&x, v => NcNum::into_values(permute_slice(v, shape, perm, rev));
        char c => Values::Char(permute_slice(c, shape, perm, rev));
        string s => Values::Str(permute_slice(s, shape, perm, rev)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious definition, element by element, to check the fast one against.
    fn reference(x: &[i32], shape: &[usize], perm: &[usize], rev: &[bool]) -> Vec<i32> {
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let n: usize = shape.iter().product();
        let mut out = Vec::with_capacity(n);
        for lin in 0..n {
            let mut rem = lin;
            let mut o = vec![0; shape.len()];
            for k in (0..shape.len()).rev() {
                o[k] = rem % out_shape[k];
                rem /= out_shape[k];
            }
            let mut i = vec![0; shape.len()];
            for (k, &p) in perm.iter().enumerate() {
                i[p] = if rev[p] { shape[p] - 1 - o[k] } else { o[k] };
            }
            let off = i.iter().zip(shape).fold(0, |a, (&ix, &s)| a * s + ix);
            out.push(x[off]);
        }
        out
    }

    #[test]
    fn matches_the_definition() {
        let shape = [2, 3, 4];
        let x: Vec<i32> = (0..24).collect();
        let perms = [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1], [2, 0, 1]];
        for perm in perms {
            for r in 0..8u8 {
                let rev = [r & 1 != 0, r & 2 != 0, r & 4 != 0];
                assert_eq!(
                    permute_slice(&x, &shape, &perm, &rev),
                    reference(&x, &shape, &perm, &rev),
                    "perm {perm:?} rev {rev:?}"
                );
            }
        }
        // Reversing every dimension reverses the array.
        let all = permute_slice(&x, &shape, &[0, 1, 2], &[true; 3]);
        assert_eq!(all, (0..24).rev().collect::<Vec<_>>());
        // Transpose of a 2x3 matrix, through the typed entry point.
        let t = permute(
            Values::Int(vec![1, 2, 3, 4, 5, 6]),
            &[2, 3],
            &[1, 0],
            &[false, false],
        );
        assert_eq!(t, Values::Int(vec![1, 4, 2, 5, 3, 6]));
    }
}
