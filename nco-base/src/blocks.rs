//! The blocks a selection is streamed in: whole rows along its first dimension, or
//! pieces of one row along its second when a row is too large. Pure planning over
//! index lists (one per dimension); the readers, the ordered parallel map and the
//! operators all cut their work with it.

/// The bytes a streaming operator's unit of work holds by default: 256 KiB.
pub const UNIT_BYTES: usize = 256 << 10;

/// The largest chunk [`unit_bytes`] makes one unit of for an operator reading pieces
/// of a chunk well from the engine's decoded copy (ncbo): 4 MiB.
pub const MAX_CHUNK_UNIT_BYTES: usize = 4 << 20;

/// The bytes of a streaming unit over a variable stored in chunks of `chunks`
/// elements (`None`: contiguous) of `elem_size` bytes: [`UNIT_BYTES`], or one chunk
/// when chunks are larger but not past `max_chunk` (a larger chunk is read piece by
/// piece from the engine's decoded copy: units of part of it would only hold more
/// memory). Units of whole rows then start and end on chunk boundaries when a chunk
/// spans whole rows (NCO's default chunks of a 4-D variable: one record, every level,
/// latitude and longitude), so each chunk is decoded once, straight into one unit's
/// buffer, and two threads never want the same chunk at once (measured on the bench's
/// deflated ipcc files, ncbo: 256 KiB units decoded each 1 MiB chunk four times).
/// `max_chunk` is [`MAX_CHUNK_UNIT_BYTES`], or larger for an operator whose pieces
/// would need many files' chunks kept at once (nces's members).
pub fn unit_bytes(chunks: Option<&[usize]>, elem_size: usize, max_chunk: usize) -> usize {
    let chunk = chunks.map_or(0, |c| c.iter().product::<usize>().saturating_mul(elem_size));
    if chunk > max_chunk {
        return UNIT_BYTES;
    }
    chunk.max(UNIT_BYTES)
}

/// The blocks of whole rows (along the first dimension) a selection is streamed in:
/// `(first row, rows)` pairs covering `sel[0]` in order, each about `max_bytes` of
/// elements of `elem_size` bytes and at least one row. A scalar selection (no
/// dimensions) is one block `(0, 0)`; a selection without rows has none.
pub fn row_blocks(sel: &[Vec<usize>], elem_size: usize, max_bytes: usize) -> Vec<(usize, usize)> {
    let Some(rows) = sel.first().map(Vec::len) else {
        return vec![(0, 0)];
    };
    let row_bytes = sel[1..].iter().map(Vec::len).product::<usize>() * elem_size;
    let per = (max_bytes / row_bytes.max(1)).max(1);
    (0..rows)
        .step_by(per)
        .map(|pos| (pos, per.min(rows - pos)))
        .collect()
}

/// A block of a selection streamed in pieces ([`blocks`]): positions `rows` of the
/// first dimension's index list and `cols` of the second's (all of them unless the
/// block is a piece of one row). Every block is contiguous in the selection's C order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Positions in the first dimension's indices.
    pub rows: std::ops::Range<usize>,
    /// Positions in the second dimension's indices (`0..1` for fewer than two
    /// dimensions).
    pub cols: std::ops::Range<usize>,
}

impl Block {
    /// The block's part of `sel` (one index list per dimension, as the block's
    /// selection came from).
    pub fn select(&self, sel: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut out = sel.to_vec();
        if let Some(first) = out.first_mut() {
            *first = first[self.rows.clone()].to_vec();
        }
        if let Some(second) = out.get_mut(1) {
            *second = second[self.cols.clone()].to_vec();
        }
        out
    }

    /// Where the block starts in a variable written with `sel`'s shape, for
    /// `nco_io::dataset::OutFile::write_at`: its first row, and its first column when
    /// it is a piece of a row.
    pub fn first(&self, sel: &[Vec<usize>]) -> Vec<usize> {
        match sel.get(1) {
            Some(c) if self.cols.len() < c.len() => vec![self.rows.start, self.cols.start],
            _ => vec![self.rows.start],
        }
    }

    /// Offset of the block's first element in `sel`'s elements (C order).
    pub fn offset(&self, sel: &[Vec<usize>]) -> usize {
        let inner: usize = sel.iter().skip(2).map(Vec::len).product();
        let row = sel.get(1).map_or(1, Vec::len) * inner;
        self.rows.start * row + self.cols.start * inner
    }
}

/// [`row_blocks`] as [`Block`]s (whole rows, every column).
pub fn whole_rows(sel: &[Vec<usize>], elem_size: usize, max_bytes: usize) -> Vec<Block> {
    let cols = sel.get(1).map_or(1, Vec::len);
    row_blocks(sel, elem_size, max_bytes)
        .into_iter()
        .map(|(pos, len)| Block {
            rows: pos..pos + len,
            cols: 0..cols,
        })
        .collect()
}

/// The blocks a selection is streamed in, about `max_bytes` of elements of
/// `elem_size` bytes each, in order: whole rows along the first dimension when a row
/// fits (at least one row), otherwise pieces of one row along the second dimension
/// (at least one index of it). A scalar selection is one block; a selection with no
/// elements has none.
pub fn blocks(sel: &[Vec<usize>], elem_size: usize, max_bytes: usize) -> Vec<Block> {
    if sel.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    if sel.is_empty() {
        return vec![Block {
            rows: 0..1,
            cols: 0..1,
        }];
    }
    let rows = sel[0].len();
    let cols = sel.get(1).map_or(1, Vec::len);
    let inner = sel.iter().skip(2).map(Vec::len).product::<usize>() * elem_size;
    if sel.len() < 2 || cols * inner <= max_bytes {
        return whole_rows(sel, elem_size, max_bytes);
    }
    let per = (max_bytes / inner.max(1)).max(1);
    (0..rows)
        .flat_map(|r| {
            (0..cols).step_by(per).map(move |c| Block {
                rows: r..r + 1,
                cols: c..(c + per).min(cols),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_fit_chunks_between_the_default_and_the_cap() {
        assert_eq!(unit_bytes(None, 4, MAX_CHUNK_UNIT_BYTES), UNIT_BYTES);
        assert_eq!(
            unit_bytes(Some(&[1, 8, 8]), 4, MAX_CHUNK_UNIT_BYTES),
            UNIT_BYTES
        );
        assert_eq!(
            unit_bytes(Some(&[1, 32, 64, 128]), 4, MAX_CHUNK_UNIT_BYTES),
            1 << 20
        );
        assert_eq!(
            unit_bytes(Some(&[512, 1024]), 4, MAX_CHUNK_UNIT_BYTES),
            2 << 20
        );
        assert_eq!(
            unit_bytes(Some(&[1080, 2160]), 4, MAX_CHUNK_UNIT_BYTES),
            UNIT_BYTES
        );
        assert_eq!(
            unit_bytes(Some(&[1080, 2160]), 4, 64 << 20),
            1080 * 2160 * 4
        );
        // One row per unit on those 1 MiB chunks: each unit is one chunk.
        let full = |n: usize| (0..n).collect::<Vec<usize>>();
        let sel = vec![full(3), full(32), full(64), full(128)];
        let b = blocks(
            &sel,
            4,
            unit_bytes(Some(&[1, 32, 64, 128]), 4, MAX_CHUNK_UNIT_BYTES),
        );
        assert_eq!(b.len(), 3);
        assert!(b.iter().all(|b| b.rows.len() == 1 && b.cols == (0..32)));
    }

    #[test]
    fn blocks_are_rows_or_pieces_of_a_row_in_order() {
        let full = |n: usize| (0..n).collect::<Vec<usize>>();
        // Rows of 3 x 4 elements (48 bytes of f32): two rows per 100-byte block.
        let sel = vec![full(5), full(3), full(4)];
        let b = blocks(&sel, 4, 100);
        assert_eq!(
            b.iter().map(|b| b.rows.clone()).collect::<Vec<_>>(),
            [0..2, 2..4, 4..5]
        );
        assert!(b.iter().all(|b| b.cols == (0..3)));
        assert_eq!(b[1].first(&sel), vec![2]);
        assert_eq!(b[1].offset(&sel), 24);
        // Rows larger than a block: pieces of two columns (32 bytes) of one row.
        let b = blocks(&sel, 4, 40);
        assert_eq!(b.len(), 10);
        assert_eq!((b[1].rows.clone(), b[1].cols.clone()), (0..1, 2..3));
        assert_eq!(b[1].first(&sel), vec![0, 2]);
        assert_eq!(b[3].offset(&sel), 12 + 8);
        let sub = b[3].select(&[vec![7, 8, 9, 10, 11], vec![5, 6, 7], full(4)]);
        assert_eq!(sub, vec![vec![8], vec![7], full(4)]);
        // Together the blocks cover every element once, in order.
        let mut next = 0;
        for blk in &b {
            assert_eq!(blk.offset(&sel), next);
            next += blk.rows.len() * blk.cols.len() * 4;
        }
        assert_eq!(next, 60);
        // Fewer than two dimensions, a scalar, nothing.
        assert_eq!(blocks(&[full(10)], 8, 16).len(), 5);
        assert_eq!(
            blocks(&[], 8, 16),
            vec![Block {
                rows: 0..1,
                cols: 0..1
            }]
        );
        assert!(blocks(&[vec![], full(2)], 8, 16).is_empty());
    }

    #[test]
    fn row_blocks_cover_the_rows_in_order() {
        let sel = vec![(0..10).collect::<Vec<_>>(), vec![0, 1, 2, 3]];
        // 4 elements of 4 bytes a row: 40 bytes a block is 2 rows.
        assert_eq!(
            row_blocks(&sel, 4, 40),
            vec![(0, 2), (2, 2), (4, 2), (6, 2), (8, 2)]
        );
        assert_eq!(
            row_blocks(&sel, 4, 1),
            (0..10).map(|p| (p, 1)).collect::<Vec<_>>()
        );
        assert_eq!(row_blocks(&sel, 4, usize::MAX), vec![(0, 10)]);
        assert_eq!(row_blocks(&[], 8, 40), vec![(0, 0)], "a scalar");
        assert!(row_blocks(&[vec![], vec![0]], 8, 40).is_empty(), "no rows");
    }
}
