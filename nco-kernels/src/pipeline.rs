//! Ordered parallel processing with bounded memory: items are computed in parallel in
//! windows of a few per thread and their results handed, in order, to a sequential
//! sink (usually the output writer). Peak memory is the window's results, not the
//! whole file's. The block planning the callers cut their work with is
//! [`nco_base::blocks`], re-exported here.

use rayon::prelude::*;

use crate::error::Result;

pub use nco_base::blocks::{
    blocks, row_blocks, unit_bytes, whole_rows, Block, MAX_CHUNK_UNIT_BYTES, UNIT_BYTES,
};

/// Compute `f(i)` for `i in 0..n` in parallel windows of `2 × threads` items and pass
/// each result to `sink(i, result)` in increasing `i`, on the calling thread. With more
/// than one thread the next window is computed by a helper thread while the calling
/// thread sinks the current one (writing overlaps computing), so at most two windows
/// of results are held at once. Not from a pool thread (one of several outputs written
/// in parallel: a pool thread blocking on a helper that waits for the pool could
/// deadlock) nor with one thread (`-t 1` is one thread): there the next window is
/// computed after the current one is sunk. Stops at the first error, in order: an
/// error of `f(i)` or of `sink` ends the call once the window being computed beside it
/// has finished, and that window's results are dropped.
pub fn for_each_ordered<R: Send>(
    n: usize,
    f: impl Fn(usize) -> Result<R> + Sync,
    sink: impl FnMut(usize, R) -> Result<()>,
) -> Result<()> {
    for_each_ordered_in(n, 2, f, sink)
}

/// [`for_each_ordered`] in windows of `per_thread` items per thread (at least one): a
/// caller whose items are large (an nces unit of one 9 MB chunk, its accumulator twice
/// that) holds fewer at once with one item per thread.
pub fn for_each_ordered_in<R: Send>(
    n: usize,
    per_thread: usize,
    f: impl Fn(usize) -> Result<R> + Sync,
    mut sink: impl FnMut(usize, R) -> Result<()>,
) -> Result<()> {
    let window = (per_thread.max(1) * rayon::current_num_threads()).max(1);
    let compute = |start: usize| -> Vec<Result<R>> {
        (start..(start + window).min(n))
            .into_par_iter()
            .map(&f)
            .collect()
    };
    if n == 0 {
        return Ok(());
    }
    let overlap = rayon::current_thread_index().is_none() && rayon::current_num_threads() > 1;
    let mut start = 0;
    let mut current = compute(0);
    std::thread::scope(|scope| -> Result<()> {
        loop {
            let end = start + current.len();
            let ahead = (overlap && end < n).then(|| scope.spawn(move || compute(end)));
            let mut sunk = Ok(());
            for (k, r) in current.into_iter().enumerate() {
                sunk = r.and_then(|r| sink(start + k, r));
                if sunk.is_err() {
                    break;
                }
            }
            let ahead = ahead.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            sunk?;
            if end >= n {
                return Ok(());
            }
            current = ahead.unwrap_or_else(|| compute(end));
            start = end;
        }
    })
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
                    Err(crate::error::Error::msg("x"))
                } else {
                    Ok(i)
                }
            },
            |_, _| Ok(()),
        );
        assert!(r.is_err());
        // A failing sink ends the call: nothing after it is sunk, across windows too.
        let mut sunk = Vec::new();
        let r = for_each_ordered(50, Ok, |i, v| {
            if i == 7 {
                return Err(crate::error::Error::msg("disk full"));
            }
            sunk.push(v);
            Ok(())
        });
        assert!(r.unwrap_err().to_string().contains("disk full"));
        assert_eq!(sunk, (0..7).collect::<Vec<_>>());
        // Many windows: every result arrives once, in order.
        let mut all = Vec::new();
        for_each_ordered(
            1000,
            |i| Ok(i * 2),
            |i, v| {
                all.push((i, v));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(all, (0..1000).map(|i| (i, i * 2)).collect::<Vec<_>>());
        // From inside the pool (outputs written in parallel), with every pool thread
        // busy the same way: no deadlock, same results.
        let sums: Vec<usize> = (0..8)
            .into_par_iter()
            .map(|k| {
                let mut s = 0;
                for_each_ordered(
                    100,
                    |i| Ok(i + k),
                    |_, v| {
                        s += v;
                        Ok(())
                    },
                )
                .unwrap();
                s
            })
            .collect();
        assert_eq!(sums, (0..8).map(|k| 4950 + 100 * k).collect::<Vec<_>>());
    }
}
