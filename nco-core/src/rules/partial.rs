//! `--part I/N`: which share of a run's items (ncra's records, nces's members) part I
//! of N computes. The shares are contiguous and as equal as whole items allow (the
//! first `total % N` parts take one more), so the parts merged in order meet every
//! item once, in the order one process meets them.

use std::ops::Range;

use crate::error::{Error, Result};

/// Part `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartSpec {
    /// This part, 1..=count.
    pub index: usize,
    /// Number of parts.
    pub count: usize,
}

impl PartSpec {
    /// Parse `I/N` (`--part 3/8`).
    ///
    /// Errors: not two whole numbers `I/N` with `1 <= I <= N`, naming `--part`.
    pub fn parse(s: &str) -> Result<PartSpec> {
        let bad = || {
            Error::option(
                "--part",
                format!("'{s}' is not I/N with 1 <= I <= N (part I of N, e.g. 2/8)"),
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(PartSpec { index, count })
    }

    /// This part's share of `total` items: `[first, end)`.
    pub fn share(&self, total: usize) -> Range<usize> {
        let (q, r) = (total / self.count, total % self.count);
        let i = self.index - 1;
        let first = i * q + i.min(r);
        first..first + q + usize::from(i < r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_item_once_in_order() {
        for total in [0usize, 1, 5, 16, 17] {
            for count in 1..=6 {
                let mut next = 0;
                for index in 1..=count {
                    let s = PartSpec { index, count }.share(total);
                    assert_eq!(s.start, next);
                    assert!(s.len() <= total / count + 1 && s.len() >= total / count);
                    next = s.end;
                }
                assert_eq!(next, total);
            }
        }
    }

    #[test]
    fn part_arguments() {
        assert_eq!(
            PartSpec::parse("2/8").unwrap(),
            PartSpec { index: 2, count: 8 }
        );
        for bad in ["0/2", "3/2", "2", "a/b", "1/0", "-1/2", ""] {
            assert!(PartSpec::parse(bad).is_err(), "{bad}");
        }
    }
}
