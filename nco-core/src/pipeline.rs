//! Ordered parallel processing with bounded memory: items are computed in parallel in
//! windows of a few per thread and their results handed, in order, to a sequential
//! sink (usually the output writer). Peak memory is the window's results, not the
//! whole file's.

use rayon::prelude::*;

use crate::error::Result;

/// Compute `f(i)` for `i in 0..n` in parallel windows of `2 × threads` items and pass
/// each result to `sink(i, result)` in increasing `i`. Stops at the first error.
pub fn for_each_ordered<R: Send>(
    n: usize,
    f: impl Fn(usize) -> Result<R> + Sync,
    mut sink: impl FnMut(usize, R) -> Result<()>,
) -> Result<()> {
    let window = (2 * rayon::current_num_threads()).max(1);
    let mut start = 0;
    while start < n {
        let end = (start + window).min(n);
        let results: Vec<Result<R>> = (start..end).into_par_iter().map(&f).collect();
        for (k, r) in results.into_iter().enumerate() {
            sink(start + k, r?)?;
        }
        start = end;
    }
    Ok(())
}

/// Compute `f(item)` for every item in parallel and return the results in order, or
/// an error (the first in order when several fail).
pub fn try_par_map<T: Send, R: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> Result<R> + Sync + Send,
) -> Result<Vec<R>> {
    items.into_par_iter().map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_and_errors_stop() {
        let mut seen = Vec::new();
        for_each_ordered(
            10,
            |i| Ok(i * i),
            |i, r| {
                seen.push((i, r));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..10).map(|i| (i, i * i)).collect::<Vec<_>>());
        let r = for_each_ordered(
            10,
            |i| {
                if i == 3 {
                    Err(crate::Error::msg("x"))
                } else {
                    Ok(i)
                }
            },
            |_, _| Ok(()),
        );
        assert!(r.is_err());
    }
}
