//! `--part I/N`: which share of a run's items (ncra's records, nces's members) part I
//! of N computes. The shares are contiguous and as equal as whole items allow (the
//! first `total % N` parts take one more), so the parts merged in order meet every
//! item once, in the order one process meets them. Items of unequal sizes (ncwa's
//! variables) are shared by size instead ([`PartSpec::share_by`]).

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

    /// This part's share of `total` items, by count, or by size when `sizes` (one per
    /// item) are given: the contiguous items whose middle falls in this part's
    /// `1/count` of the total size (an item larger than a share makes a part empty).
    /// Every item lands in exactly one part, in order.
    pub fn share_by(&self, total: usize, sizes: Option<&[u64]>) -> Range<usize> {
        let Some(sizes) = sizes else {
            return self.share(total);
        };
        let sum: u128 = sizes.iter().map(|&x| u128::from(x)).sum();
        let count = self.count as u128;
        // Each item's part (0-based), from where its middle falls: never decreasing
        // along the items, so each part's items are contiguous.
        let mut before = 0u128;
        let part: Vec<usize> = sizes
            .iter()
            .map(|&size| {
                let middle = 2 * before + u128::from(size);
                before += u128::from(size);
                if sum == 0 {
                    0
                } else {
                    ((middle * count) / (2 * sum)).min(count - 1) as usize
                }
            })
            .collect();
        let first = part.iter().take_while(|&&p| p + 1 < self.index).count();
        let len = part[first..]
            .iter()
            .take_while(|&&p| p + 1 == self.index)
            .count();
        first..first + len
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
    fn shares_by_size_cover_every_item_once_in_order_and_balance() {
        let cases: [&[u64]; 5] = [
            &[],
            &[5],
            &[1, 1, 1, 1],
            &[100, 1, 1, 1, 1, 50, 50],
            &[0, 0, 3],
        ];
        for sizes in cases {
            for count in 1..=5 {
                let mut next = 0;
                for index in 1..=count {
                    let s = PartSpec { index, count }.share_by(sizes.len(), Some(sizes));
                    assert_eq!(s.start, next, "{sizes:?} {index}/{count}");
                    next = s.end;
                }
                assert_eq!(next, sizes.len(), "{sizes:?} /{count}");
            }
        }
        let two = |i| PartSpec { index: i, count: 2 }.share_by(7, Some(&[100, 1, 1, 1, 1, 50, 50]));
        // 100+1+1 against 1+1+50+50: the middles of the small items decide.
        assert_eq!((two(1), two(2)), (0..3, 3..7));
        assert_eq!(PartSpec { index: 2, count: 3 }.share_by(4, None), 2..3);
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
