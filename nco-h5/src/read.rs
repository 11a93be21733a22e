//! Selection reads from a [`VarIndex`]: only the chunks the selection meets, each read
//! with one positioned read, decoded and copied into the caller's buffer (straight into
//! it when the chunk lands there whole), chunks in parallel (rayon), no lock held.
//!
//! A selection is one index list per dimension (any order, repeats allowed), as the
//! dataset interface of nco-io asks; [`read_slab`] is the start/count form.

use std::cell::RefCell;

use rayon::prelude::*;

use crate::file::File;
use crate::filters::{self, Filter};
use crate::index::odometer;
use crate::layout::{Loc, VarIndex};
use crate::{Error, Result};

/// The caller's output buffer, shared by the chunk tasks: each task writes only the
/// elements of its own chunk, and distinct chunks hold distinct elements.
#[derive(Clone, Copy)]
struct Out(*mut u8, usize);

// SAFETY: tasks write disjoint byte ranges of the buffer (see `Out`), which outlives the
// parallel loop that uses it.
unsafe impl Send for Out {}
// SAFETY: as above.
unsafe impl Sync for Out {}

/// Scratch buffers and the decompressor of one thread: the stored bytes and two
/// buffers for the filter stages (so at most three chunks a thread).
pub struct Scratch {
    inflater: libdeflater::Decompressor,
    stored: Vec<u8>,
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch::new()
    }
}

impl Scratch {
    /// Empty buffers (they grow to the chunks decoded).
    pub fn new() -> Scratch {
        Scratch {
            inflater: libdeflater::Decompressor::new(),
            stored: Vec::new(),
            a: Vec::new(),
            b: Vec::new(),
        }
    }
}

thread_local! {
    /// Each thread's scratch, reused across chunks and reads (no chunk task calls back
    /// into rayon, so a thread never needs two at once).
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::new());
}

fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        // Re-entered (never expected): a fresh scratch for this call.
        Err(_) => f(&mut Scratch::new()),
    })
}

/// The positions of one dimension's index list that fall in one chunk along that
/// dimension (or past the dataset's extent): `(output position, offset in the chunk)`.
struct Group {
    /// Chunk coordinate along the dimension; `u64::MAX` for indices past the extent.
    chunk: u64,
    pos: Vec<(usize, usize)>,
}

const BEYOND: u64 = u64::MAX;

/// Split one dimension's indices by chunk, in chunk order (positions in output order
/// within each).
fn groups_of(sel: &[usize], len: u64, chunk: u64) -> Vec<Group> {
    let key = |i: usize| {
        if i as u64 >= len {
            BEYOND
        } else {
            i as u64 / chunk
        }
    };
    let mut order: Vec<(u64, usize)> = sel.iter().enumerate().map(|(p, &i)| (key(i), p)).collect();
    if !order.windows(2).all(|w| w[0] <= w[1]) {
        order.sort_unstable();
    }
    let mut out: Vec<Group> = Vec::new();
    for (c, p) in order {
        let off = if c == BEYOND {
            0
        } else {
            (sel[p] as u64 - c * chunk) as usize
        };
        match out.last_mut() {
            Some(g) if g.chunk == c => g.pos.push((p, off)),
            _ => out.push(Group {
                chunk: c,
                pos: vec![(p, off)],
            }),
        }
    }
    out
}

/// Runs of consecutive output positions with consecutive chunk offsets:
/// `(output position, chunk offset, length)`.
fn runs(pos: &[(usize, usize)]) -> Vec<(usize, usize, usize)> {
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    for &(p, o) in pos {
        match out.last_mut() {
            Some((p0, o0, n)) if *p0 + *n == p && *o0 + *n == o => *n += 1,
            _ => out.push((p, o, 1)),
        }
    }
    out
}

/// Read the selection `sel` (one index list per dimension; indices at or past the
/// dataset's extent read as `pad`) of `v` from `file` into `out`, in native byte order,
/// row-major over the selection's shape. `out` holds exactly the product of the list
/// lengths times the element size; `pad` is one element.
///
/// Errors: a selection of the wrong rank or a wrong buffer size ([`Error::Request`]);
/// a chunk past the end of the file, a bad deflate stream, a checksum mismatch
/// ([`Error::Corrupt`]); I/O errors.
pub fn read_sel(
    v: &VarIndex,
    file: &File,
    sel: &[Vec<usize>],
    pad: &[u8],
    out: &mut [u8],
) -> Result<()> {
    let rank = v.shape.len();
    let es = v.elem;
    if sel.len() != rank {
        return Err(Error::Request(format!(
            "selection of rank {} for a variable of rank {rank}",
            sel.len()
        )));
    }
    if pad.len() != es {
        return Err(Error::Request(format!("pad of {} bytes", pad.len())));
    }
    let n = sel
        .iter()
        .try_fold(1usize, |a, s| a.checked_mul(s.len()))
        .and_then(|n| n.checked_mul(es));
    if n != Some(out.len()) {
        return Err(Error::Request(format!(
            "buffer of {} bytes for the selection",
            out.len()
        )));
    }
    if out.is_empty() {
        return Ok(());
    }
    let chunks: u64 = v.grid().iter().product();
    if chunks > 0 && v.locs.len() as u64 != chunks {
        return Err(Error::Request("chunk index does not match the grid".into()));
    }
    if rank == 0 {
        return with_scratch(|s| {
            let bytes = decode_chunk(v, file, v.locs[0], s, None)?;
            out.copy_from_slice(&bytes[..es]);
            Ok(())
        });
    }
    let groups: Vec<Vec<Group>> = (0..rank)
        .map(|k| groups_of(&sel[k], v.shape[k], v.chunk[k]))
        .collect();
    let shape: Vec<usize> = sel.iter().map(Vec::len).collect();
    let mut ostride = vec![1usize; rank];
    let mut cstride = vec![1usize; rank];
    for k in (0..rank - 1).rev() {
        ostride[k] = ostride[k + 1] * shape[k + 1];
        cstride[k] = cstride[k + 1] * v.chunk[k + 1] as usize;
    }
    let grid = v.grid();
    let counts: Vec<usize> = groups.iter().map(Vec::len).collect();
    let total: usize = counts.iter().product();
    let dst = Out(out.as_mut_ptr(), out.len());
    let plan = Plan {
        v,
        ostride: &ostride,
        cstride: &cstride,
        shape: &shape,
        es,
    };
    let one = |task: usize| -> Result<()> {
        // The task's group along each dimension, from its number (mixed radix).
        let mut gs: Vec<&Group> = Vec::with_capacity(rank);
        let mut t = task;
        for k in (0..rank).rev() {
            gs.push(&groups[k][t % counts[k]]);
            t /= counts[k];
        }
        gs.reverse();
        if gs.iter().any(|g| g.chunk == BEYOND) {
            plan.scatter(&gs, None, pad, dst);
            return Ok(());
        }
        let mut lin = 0u64;
        for k in 0..rank {
            lin = lin * grid[k] + gs[k].chunk;
        }
        let loc = v.locs[lin as usize];
        with_scratch(|s| {
            if let Some(at) = plan.whole(&gs) {
                // SAFETY: the chunk's elements are exactly bytes `at..at + chunk_bytes`
                // of the output (checked by `whole`), written by this task only.
                let whole =
                    unsafe { std::slice::from_raw_parts_mut(dst.0.add(at), v.chunk_bytes()) };
                decode_chunk(v, file, loc, s, Some(whole))?;
            } else if !loc.allocated() {
                let bytes = decode_chunk(v, file, loc, s, None)?;
                plan.scatter(&gs, Some(bytes), pad, dst);
            } else {
                // A read of rows of a chunk: the decoded chunk is kept for the reads of
                // its next rows (each would inflate or read the whole chunk again), and
                // forgotten once a read takes its last rows.
                let more = plan.continues(&gs);
                match file.decoded_or_claim(loc.addr) {
                    crate::file::Decoded::Kept(bytes) => {
                        plan.scatter(&gs, Some(&bytes), pad, dst);
                        if !more {
                            file.forget_decoded(loc.addr);
                        }
                    }
                    crate::file::Decoded::Claimed(claim) if more => {
                        // Decoded into its own buffer, which the store then owns (no
                        // copy, no second stage buffer).
                        let mut buf = vec![0u8; v.chunk_bytes()];
                        decode_chunk(v, file, loc, s, Some(&mut buf))?;
                        let bytes = claim.keep(buf);
                        plan.scatter(&gs, Some(&bytes), pad, dst);
                    }
                    crate::file::Decoded::Claimed(_claim) => {
                        let bytes = decode_chunk(v, file, loc, s, None)?;
                        plan.scatter(&gs, Some(bytes), pad, dst);
                    }
                }
            }
            Ok(())
        })
    };
    if total == 1 {
        one(0)
    } else {
        (0..total).into_par_iter().try_for_each(one)
    }
}

/// The shapes and strides a read copies with.
struct Plan<'a> {
    v: &'a VarIndex,
    ostride: &'a [usize],
    cstride: &'a [usize],
    shape: &'a [usize],
    es: usize,
}

impl Plan<'_> {
    /// Whether a read of the part `gs` of a chunk looks like one of a stream of reads
    /// through the chunk with more to come, so that its decoded bytes are worth
    /// keeping for the next: rows along the first dimension that stop before the
    /// chunk's last (streaming operators read their next unit from the rows after,
    /// whatever they take of the other dimensions: a record at a time of a hyperslab
    /// of part of the longitudes, of chunks spanning many records, would otherwise
    /// inflate every chunk once per record); or, within one index of each dimension
    /// before some dimension `k`, the chunk's whole extent along every dimension after
    /// `k` and not up to the chunk's last element (levels of a chunk of one record:
    /// ncbo's units of a (1, 32, 64, 128) chunk). A read that takes a chunk's last
    /// rows, such as a point of each file's chunk of one record (a station from many
    /// files), is not.
    fn continues(&self, gs: &[&Group]) -> bool {
        let v = self.v;
        let rank = gs.len();
        let extent = |k: usize| {
            let c = v.chunk[k];
            c.min(v.shape[k] - gs[k].chunk * c) as usize
        };
        let last_row = gs[0].pos.iter().map(|&(_, o)| o).max().unwrap_or(0);
        if last_row + 1 < extent(0) {
            return true;
        }
        // The distinct offsets read along each dimension.
        let offsets: Vec<Vec<usize>> = gs
            .iter()
            .map(|g| {
                let mut seen: Vec<usize> = g.pos.iter().map(|&(_, o)| o).collect();
                seen.sort_unstable();
                seen.dedup();
                seen
            })
            .collect();
        let whole = |k: usize| offsets[k].len() == extent(k);
        // The first dimension after which everything is whole.
        let mut k = rank - 1;
        while k > 0 && whole(k) {
            k -= 1;
        }
        if (k == 0 && whole(0)) || (k + 1 == rank && rank > 1) {
            // The whole chunk, or nothing after `k` whole (a point or a column).
            return false;
        }
        if offsets[..k].iter().any(|o| o.len() != 1) {
            return false;
        }
        let at_end = (0..=k).all(|j| offsets[j].last().is_some_and(|&o| o + 1 >= extent(j)));
        !at_end
    }

    /// The output byte offset where chunk `gs` lands whole and in order (its decoded
    /// bytes are one run of the output), if it does.
    fn whole(&self, gs: &[&Group]) -> Option<usize> {
        let mut spread = false;
        let mut at = 0usize;
        for (k, g) in gs.iter().enumerate() {
            let c = self.v.chunk[k] as usize;
            let pos = &g.pos;
            let (p0, o0) = pos[0];
            if pos.len() != c
                || o0 != 0
                || pos
                    .iter()
                    .enumerate()
                    .any(|(i, &(p, o))| p != p0 + i || o != i)
            {
                return None;
            }
            // After a dimension spanning several indices, later rows must be whole
            // output rows.
            if spread && self.shape[k] != c {
                return None;
            }
            spread |= c > 1;
            at += p0 * self.ostride[k];
        }
        Some(at * self.es)
    }

    /// Copy the elements of the chunk whose groups are `gs` from its decoded bytes (or
    /// `pad` for each, when `chunk` is `None`) to their places in the output.
    fn scatter(&self, gs: &[&Group], chunk: Option<&[u8]>, pad: &[u8], out: Out) {
        let rank = gs.len();
        let es = self.es;
        let last = runs(&gs[rank - 1].pos);
        let outer: Vec<u64> = gs[..rank - 1].iter().map(|g| g.pos.len() as u64).collect();
        let mut g = vec![0u64; rank - 1];
        loop {
            let (mut o, mut c) = (0usize, 0usize);
            for k in 0..rank - 1 {
                let (p, off) = gs[k].pos[g[k] as usize];
                o += p * self.ostride[k];
                c += off * self.cstride[k];
            }
            for &(p, off, n) in &last {
                let oi = (o + p) * es;
                let len = n * es;
                debug_assert!(oi + len <= out.1);
                match chunk {
                    Some(bytes) => {
                        let ci = (c + off) * es;
                        debug_assert!(ci + len <= bytes.len());
                        // SAFETY: `oi + len` is within the output (positions come from
                        // the selection's shape), `ci + len` within the decoded chunk
                        // (offsets are below the chunk shape), and no other task writes
                        // these output bytes.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                bytes.as_ptr().add(ci),
                                out.0.add(oi),
                                len,
                            )
                        };
                    }
                    None => {
                        for e in 0..n {
                            // SAFETY: as above, one element of the same run.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    pad.as_ptr(),
                                    out.0.add(oi + e * es),
                                    es,
                                )
                            };
                        }
                    }
                }
            }
            if !odometer(&mut g, &outer) {
                break;
            }
        }
    }
}

/// Read the hyperslab `start`/`count` (elements per dimension) of `v` into `out`, as
/// [`read_sel`] with the index ranges.
///
/// Errors: a hyperslab outside the variable ([`Error::Request`]); as [`read_sel`].
pub fn read_slab(
    v: &VarIndex,
    file: &File,
    start: &[u64],
    count: &[u64],
    out: &mut [u8],
) -> Result<()> {
    if start.len() != count.len() || start.len() != v.shape.len() {
        return Err(Error::Request(format!(
            "hyperslab of rank {} expected",
            v.shape.len()
        )));
    }
    for k in 0..start.len() {
        if start[k]
            .checked_add(count[k])
            .is_none_or(|e| e > v.shape[k])
        {
            return Err(Error::Request(format!(
                "hyperslab {}+{} past dimension {k} of length {}",
                start[k], count[k], v.shape[k]
            )));
        }
    }
    let sel: Vec<Vec<usize>> = start
        .iter()
        .zip(count)
        .map(|(&s, &c)| (s as usize..(s + c) as usize).collect())
        .collect();
    read_sel(v, file, &sel, &v.fill.clone(), out)
}

/// The chunk the selection `sel` (one index list per dimension) of `v` is exactly:
/// each list one whole chunk's range along its dimension, in order, inside the
/// extent, the chunk stored, shuffled last (undone last) and in native byte order.
/// [`decode_chunk_blocks`] reads it without its whole unshuffled copy; `None` for
/// anything else (read with [`read_sel`]).
pub fn whole_shuffled_chunk(v: &VarIndex, sel: &[Vec<usize>]) -> Option<Loc> {
    let rank = v.shape.len();
    if sel.len() != rank || rank == 0 || v.contiguous || v.swaps_bytes() {
        return None;
    }
    let grid = v.grid();
    if v.locs.len() as u64 != grid.iter().product::<u64>() {
        return None;
    }
    let mut lin = 0u64;
    for k in 0..rank {
        let (s, c) = (&sel[k], v.chunk[k] as usize);
        let first = *s.first()?;
        if s.len() != c || first % c != 0 || (first + c) as u64 > v.shape[k] {
            return None;
        }
        if s.iter().enumerate().any(|(i, &x)| x != first + i) {
            return None;
        }
        lin = lin * grid[k] + (first / c) as u64;
    }
    let loc = *v.locs.get(lin as usize)?;
    (loc.allocated() && shuffle_undone_last(v, loc.mask).is_some()).then_some(loc)
}

/// The pipeline position of the shuffle (of whole elements) when it is the last
/// filter a chunk with filter mask `mask` undoes, and can be marked skipped (one of
/// the mask's 32 bits).
fn shuffle_undone_last(v: &VarIndex, mask: u32) -> Option<usize> {
    let (k, f) = active(v, mask).last()?;
    (k < 32 && *f == Filter::Shuffle(v.elem)).then_some(k)
}

/// Decode the chunk at `loc` of `v` (one [`whole_shuffled_chunk`] found) and hand its
/// bytes, native order, to `f` in order, in blocks of about `block` bytes of whole
/// elements: `f(byte offset in the chunk, bytes)`. Every filter but the shuffle is
/// undone into the thread's stage buffer; the shuffle is undone one block at a time
/// into a small buffer, so the chunk's values are never whole in memory a second time
/// (an nces member's chunk is added into the accumulator block by block).
///
/// Errors: as [`read_sel`]; a chunk that is not shuffled last ([`Error::Request`]);
/// an error of `f`, as it returned it.
pub fn decode_chunk_blocks(
    v: &VarIndex,
    file: &File,
    loc: Loc,
    block: usize,
    f: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
) -> Result<()> {
    let es = v.elem.max(1);
    let Some(k) = shuffle_undone_last(v, loc.mask) else {
        return Err(Error::Request("a chunk not shuffled last".into()));
    };
    let per = (block / es).max(1);
    let mut out = vec![0u8; per * es];
    with_scratch(|s| {
        // The shuffle marked as skipped: the rest of the pipeline is undone.
        let unshuffled = Loc {
            mask: loc.mask | (1 << k),
            ..loc
        };
        let shuffled = decode_chunk(v, file, unshuffled, s, None)?;
        let n = shuffled.len() / es;
        let mut e0 = 0;
        while e0 < n {
            let m = per.min(n - e0);
            filters::unshuffle_part(shuffled, es, e0, &mut out[..m * es]);
            f(e0 * es, &out[..m * es])?;
            e0 += m;
        }
        Ok(())
    })
}

/// The decoded bytes of one chunk (native order): written into `whole` when given
/// (which has the chunk's size) and returned from it, or in one of the scratch buffers.
/// A chunk never written decodes to the fill value.
fn decode_chunk<'s>(
    v: &VarIndex,
    file: &File,
    loc: Loc,
    s: &'s mut Scratch,
    whole: Option<&'s mut [u8]>,
) -> Result<&'s [u8]> {
    let want = v.chunk_bytes();
    if !loc.allocated() {
        let dst: &mut [u8] = match whole {
            Some(w) => w,
            None => {
                s.a.resize(want, 0);
                &mut s.a
            }
        };
        fill_with(dst, &v.fill);
        return Ok(dst);
    }
    loc.check_within(file.len())?;
    let size = usize::try_from(loc.size).map_err(|_| Error::Corrupt("chunk too large".into()))?;
    if v.contiguous && size <= want {
        // A row block of contiguous storage: the last may be short (the rest of the
        // buffer lies past the extent and is never copied out).
        let dst: &mut [u8] = match whole {
            Some(w) => w,
            None => {
                s.a.resize(want, 0);
                &mut s.a
            }
        };
        read_at(file, &mut dst[..size], loc.addr)?;
        swap_order(v, &mut dst[..size]);
        return Ok(dst);
    }
    if active(v, loc.mask).next().is_none() && size == want {
        // Unfiltered: read straight into place.
        let dst: &mut [u8] = match whole {
            Some(w) => w,
            None => {
                s.a.resize(want, 0);
                &mut s.a
            }
        };
        read_at(file, dst, loc.addr)?;
        swap_order(v, dst);
        return Ok(dst);
    }
    s.stored.resize(size, 0);
    read_at(file, &mut s.stored, loc.addr)?;
    let Scratch {
        inflater,
        stored,
        a,
        b,
    } = s;
    decode_stored(v, loc.mask, stored, inflater, a, b, whole)
}

fn read_at(file: &File, buf: &mut [u8], at: u64) -> Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file.handle(), buf, at).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::Corrupt(format!("chunk at offset {at} is past the end of the file"))
        } else {
            Error::Io(e)
        }
    })
}

/// The filters of `v` a chunk with filter mask `mask` went through, with their
/// positions in the pipeline, last applied first (the order they are undone).
fn active(v: &VarIndex, mask: u32) -> impl Iterator<Item = (usize, &Filter)> {
    v.filters
        .iter()
        .enumerate()
        .rev()
        .filter(move |(k, _)| *k >= 32 || mask & (1 << k) == 0)
}

fn fill_with(dst: &mut [u8], fill: &[u8]) {
    if fill.iter().all(|&b| b == 0) {
        dst.fill(0);
    } else {
        for e in dst.chunks_exact_mut(fill.len()) {
            e.copy_from_slice(fill);
        }
    }
}

fn swap_order(v: &VarIndex, data: &mut [u8]) {
    if v.swaps_bytes() {
        match v.elem {
            2 => data.chunks_exact_mut(2).for_each(|e| e.swap(0, 1)),
            4 => data.chunks_exact_mut(4).for_each(|e| {
                let w = u32::from_ne_bytes([e[0], e[1], e[2], e[3]]).swap_bytes();
                e.copy_from_slice(&w.to_ne_bytes());
            }),
            _ => data.chunks_exact_mut(v.elem).for_each(<[u8]>::reverse),
        }
    }
}

/// Undo the filters of `v` (those a chunk with filter `mask` went through) on its
/// stored bytes `stored`, with `a` and `b` as stage buffers; the decoded chunk (native
/// order, exactly [`VarIndex::chunk_bytes`]) goes to `whole` when given (the chunk's
/// size) or to a stage buffer, and is returned.
///
/// This is the whole decoding path of a chunk, from bytes that may be anything: a
/// stream that does not decode, decodes to another size, or fails its checksum is an
/// error, never a read or write out of bounds (the fuzz target of the crate drives it).
///
/// Errors: [`Error::Corrupt`], saying what was wrong.
pub fn decode_stored<'s>(
    v: &VarIndex,
    mask: u32,
    stored: &'s mut [u8],
    inflater: &mut libdeflater::Decompressor,
    a: &'s mut Vec<u8>,
    b: &'s mut Vec<u8>,
    whole: Option<&'s mut [u8]>,
) -> Result<&'s [u8]> {
    let want = v.chunk_bytes();
    let stages: Vec<(usize, &Filter)> = active(v, mask).collect();
    // Checksums added before deflating are inside the stream: the inflated size is the
    // chunk plus 4 bytes for each Fletcher-32 applied before the deflate.
    let sums_before = |k: usize| {
        stages
            .iter()
            .filter(|&&(j, f)| j < k && *f == Filter::Fletcher32)
            .count()
    };
    // The last data-moving stage may write straight into `whole` when nothing is
    // stripped after it.
    let last_move = stages
        .iter()
        .rposition(|(_, f)| !matches!(f, Filter::Fletcher32));
    let direct = whole.is_some()
        && last_move.is_some()
        && !stages.iter().any(|(_, f)| **f == Filter::Fletcher32);
    let mut whole = whole;
    // `cur`: 0 = stored, 1 = a, 2 = b, 3 = whole; `len`: bytes of data in it.
    let mut cur = 0u8;
    let mut len = stored.len();
    for (i, &(k, f)) in stages.iter().enumerate() {
        if *f == Filter::Fletcher32 {
            let src: &[u8] = match cur {
                0 => &stored[..len],
                1 => &a[..len],
                _ => &b[..len],
            };
            len = filters::check_fletcher32(src)?.len();
            continue;
        }
        let to_whole = direct && Some(i) == last_move;
        let out_len = match f {
            Filter::Deflate(_) => want + 4 * sums_before(k),
            _ => len,
        };
        let (src, dst): (&[u8], &mut [u8]) = if to_whole {
            let w = whole.as_deref_mut().expect("direct implies a whole buffer");
            if w.len() != out_len {
                return Err(Error::Corrupt(format!(
                    "chunk decodes to {out_len} bytes, expected {want}"
                )));
            }
            let src: &[u8] = match cur {
                0 => &stored[..len],
                1 => &a[..len],
                _ => &b[..len],
            };
            (src, w)
        } else {
            match cur {
                0 => {
                    a.resize(out_len, 0);
                    (&stored[..len], &mut a[..])
                }
                1 => {
                    b.resize(out_len, 0);
                    (&a[..len], &mut b[..])
                }
                _ => {
                    a.resize(out_len, 0);
                    (&b[..len], &mut a[..])
                }
            }
        };
        match f {
            Filter::Deflate(_) => filters::inflate(inflater, src, dst)?,
            Filter::Shuffle(es) => filters::unshuffle(src, *es, dst),
            Filter::Fletcher32 => unreachable!("handled above"),
        }
        len = out_len;
        cur = if to_whole {
            3
        } else {
            match cur {
                0 | 2 => 1,
                _ => 2,
            }
        };
    }
    if len != want {
        return Err(Error::Corrupt(format!(
            "chunk decodes to {len} bytes, expected {want}"
        )));
    }
    let data: &'s mut [u8] = match (cur, whole) {
        (3, Some(w)) => w,
        (0, Some(w)) => {
            w.copy_from_slice(&stored[..len]);
            w
        }
        (1, Some(w)) => {
            w.copy_from_slice(&a[..len]);
            w
        }
        (_, Some(w)) => {
            w.copy_from_slice(&b[..len]);
            w
        }
        (0, None) => &mut stored[..len],
        (1, None) => &mut a[..len],
        (_, None) => &mut b[..len],
    };
    swap_order(v, data);
    Ok(data)
}

/// Read and inflate every stored chunk of `v` on all threads without unshuffling or
/// copying (the decompression floor of the measurements). Returns the decoded bytes.
///
/// Errors: as [`read_sel`].
pub fn inflate_floor(v: &VarIndex, file: &File) -> Result<u64> {
    let want = v.chunk_bytes();
    let deflated = v.filters.iter().any(|f| matches!(f, Filter::Deflate(_)));
    v.locs
        .par_iter()
        .filter(|l| l.allocated())
        .map(|l| {
            with_scratch(|s| {
                if l.addr.checked_add(l.size).is_none_or(|e| e > file.len()) {
                    return Err(Error::Corrupt("chunk past the end of the file".into()));
                }
                s.stored.resize(l.size as usize, 0);
                read_at(file, &mut s.stored, l.addr)?;
                if deflated {
                    let sums = v
                        .filters
                        .iter()
                        .filter(|f| **f == Filter::Fletcher32)
                        .count();
                    s.a.resize(want + 4 * sums, 0);
                    filters::inflate(&mut s.inflater, &s.stored, &mut s.a)?;
                }
                Ok(want as u64)
            })
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_split_by_chunk_and_mark_indices_past_the_extent() {
        let g = groups_of(&[5, 0, 1, 9, 4], 8, 4);
        let got: Vec<(u64, Vec<(usize, usize)>)> =
            g.into_iter().map(|g| (g.chunk, g.pos)).collect();
        assert_eq!(
            got,
            vec![
                (0, vec![(1, 0), (2, 1)]),
                (1, vec![(0, 1), (4, 0)]),
                (BEYOND, vec![(3, 0)]),
            ]
        );
        assert_eq!(
            runs(&[(0, 2), (1, 3), (2, 0), (4, 1)]),
            vec![(0, 2, 2), (2, 0, 1), (4, 1, 1)]
        );
    }
}
