//! Hyperslab reads from a [`VarIndex`]: only the chunks the hyperslab meets, each read
//! with one positioned read, decoded and copied into the caller's buffer, chunks in
//! parallel (rayon), no lock held.

use std::fs::File;
use std::os::unix::fs::FileExt;

use rayon::prelude::*;

use crate::filters::{self, Filter};
use crate::index::{odometer, Loc, VarIndex};
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

/// Per-thread scratch buffers and the decompressor.
struct Scratch {
    inflater: libdeflater::Decompressor,
    stored: Vec<u8>,
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            inflater: libdeflater::Decompressor::new(),
            stored: Vec::new(),
            a: Vec::new(),
            b: Vec::new(),
        }
    }
}

/// Read the hyperslab `start`/`count` (elements per dimension) of `v` from `file`
/// (whose length is `file_len`) into `out`, in native byte order, row-major over
/// `count`. `out` holds exactly `count`'s product times the element size.
///
/// Errors: a hyperslab outside the variable or a wrong buffer size
/// ([`Error::Request`]); a chunk past the end of the file, a bad deflate stream, a
/// checksum mismatch ([`Error::Corrupt`]); I/O errors.
pub fn read_slab(
    v: &VarIndex,
    file: &File,
    file_len: u64,
    start: &[u64],
    count: &[u64],
    out: &mut [u8],
) -> Result<()> {
    let rank = v.shape.len();
    if start.len() != rank || count.len() != rank {
        return Err(Error::Request(format!("hyperslab of rank {rank} expected")));
    }
    for k in 0..rank {
        if start[k] + count[k] > v.shape[k] {
            return Err(Error::Request(format!(
                "hyperslab {}+{} past dimension {k} of length {}",
                start[k], count[k], v.shape[k]
            )));
        }
    }
    let n: u64 = count.iter().product();
    if out.len() as u64 != n * v.elem as u64 {
        return Err(Error::Request(format!(
            "buffer of {} bytes for {n} elements",
            out.len()
        )));
    }
    if n == 0 {
        return Ok(());
    }
    let grid = v.grid();
    let lo: Vec<u64> = (0..rank).map(|k| start[k] / v.chunk[k]).collect();
    let hi: Vec<u64> = (0..rank)
        .map(|k| (start[k] + count[k] - 1) / v.chunk[k] + 1)
        .collect();
    let span: Vec<u64> = (0..rank).map(|k| hi[k] - lo[k]).collect();
    let nchunks: u64 = span.iter().product();
    let mut ids = Vec::with_capacity(nchunks as usize);
    let mut g = vec![0u64; rank];
    loop {
        let mut lin = 0u64;
        for k in 0..rank {
            lin = lin * grid[k] + lo[k] + g[k];
        }
        ids.push(lin);
        if !odometer(&mut g, &span) {
            break;
        }
    }
    let dst = Out(out.as_mut_ptr(), out.len());
    let one = |s: &mut Scratch, lin: u64| -> Result<()> {
        let coord = unlinear(lin, &grid);
        let cstart: Vec<u64> = (0..rank).map(|k| coord[k] * v.chunk[k]).collect();
        let loc = v.locs[lin as usize];
        let bytes = decode_chunk(v, file, file_len, loc, s)?;
        copy_into(v, &cstart, bytes, start, count, dst);
        Ok(())
    };
    if ids.len() == 1 {
        let mut s = Scratch::new();
        one(&mut s, ids[0])
    } else {
        ids.par_iter()
            .try_for_each_init(Scratch::new, |s, &lin| one(s, lin))
    }
}

fn unlinear(mut lin: u64, grid: &[u64]) -> Vec<u64> {
    let mut c = vec![0u64; grid.len()];
    for k in (0..grid.len()).rev() {
        c[k] = lin % grid[k];
        lin /= grid[k];
    }
    c
}

/// The decoded bytes of one chunk (native order), in one of the scratch buffers; a
/// chunk never written decodes to the fill value.
fn decode_chunk<'s>(
    v: &VarIndex,
    file: &File,
    file_len: u64,
    loc: Loc,
    s: &'s mut Scratch,
) -> Result<&'s [u8]> {
    let want = v.chunk_bytes();
    if !loc.allocated() {
        s.a.clear();
        for _ in 0..want / v.elem.max(1) {
            s.a.extend_from_slice(&v.fill);
        }
        return Ok(&s.a);
    }
    if loc
        .addr
        .checked_add(loc.size)
        .is_none_or(|end| end > file_len)
    {
        return Err(Error::Corrupt(format!(
            "chunk at offset {} of {} bytes is past the end of the file ({file_len} bytes)",
            loc.addr, loc.size
        )));
    }
    s.stored.resize(loc.size as usize, 0);
    file.read_exact_at(&mut s.stored, loc.addr)?;
    // Filters are undone last first; `cur` names the buffer holding the data so far:
    // 0 = stored, 1 = a, 2 = b.
    let mut cur = 0u8;
    let mut tail = s.stored.len();
    for (k, f) in v.filters.iter().enumerate().rev() {
        if loc.mask & (1 << k) != 0 {
            continue;
        }
        let (src, dst): (&[u8], &mut Vec<u8>) = match cur {
            0 => (&s.stored[..tail], &mut s.a),
            1 => (&s.a[..tail], &mut s.b),
            _ => (&s.b[..tail], &mut s.a),
        };
        match f {
            Filter::Fletcher32 => {
                tail = filters::check_fletcher32(src)?.len();
                continue;
            }
            Filter::Deflate(_) => {
                // Checksums added before deflating are inside the stream.
                let sums = v.filters[..k]
                    .iter()
                    .enumerate()
                    .filter(|&(j, f)| *f == Filter::Fletcher32 && loc.mask & (1 << j) == 0)
                    .count();
                dst.resize(want + 4 * sums, 0);
                filters::inflate(&mut s.inflater, src, dst)?;
            }
            Filter::Shuffle(es) => {
                dst.resize(src.len(), 0);
                filters::unshuffle(src, *es, dst);
            }
        }
        tail = dst.len();
        cur = match cur {
            0 | 2 => 1,
            _ => 2,
        };
    }
    let data: &mut [u8] = match cur {
        0 => &mut s.stored[..tail],
        1 => &mut s.a[..tail],
        _ => &mut s.b[..tail],
    };
    if data.len() != want {
        return Err(Error::Corrupt(format!(
            "chunk decodes to {} bytes, expected {want}",
            data.len()
        )));
    }
    if v.big_endian != cfg!(target_endian = "big") && v.elem > 1 {
        for e in data.chunks_exact_mut(v.elem) {
            e.reverse();
        }
    }
    Ok(data)
}

/// Copy the part of the decoded chunk starting at `cstart` that lies in the hyperslab
/// `start`/`count` into the output.
fn copy_into(v: &VarIndex, cstart: &[u64], chunk: &[u8], start: &[u64], count: &[u64], out: Out) {
    let rank = v.shape.len();
    let es = v.elem;
    if rank == 0 {
        // SAFETY: a scalar's output holds exactly one element, written by this one task.
        unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr(), out.0, es.min(out.1)) };
        return;
    }
    let lo: Vec<u64> = (0..rank).map(|k| start[k].max(cstart[k])).collect();
    let hi: Vec<u64> = (0..rank)
        .map(|k| (start[k] + count[k]).min(cstart[k] + v.chunk[k]))
        .collect();
    let ext: Vec<u64> = (0..rank).map(|k| hi[k] - lo[k]).collect();
    let mut cstride = vec![1u64; rank];
    let mut ostride = vec![1u64; rank];
    for k in (0..rank - 1).rev() {
        cstride[k] = cstride[k + 1] * v.chunk[k + 1];
        ostride[k] = ostride[k + 1] * count[k + 1];
    }
    let run = (ext[rank - 1] as usize) * es;
    let outer = &ext[..rank - 1];
    let mut g = vec![0u64; rank - 1];
    loop {
        let mut ci = lo[rank - 1] - cstart[rank - 1];
        let mut oi = lo[rank - 1] - start[rank - 1];
        for k in 0..rank - 1 {
            ci += (lo[k] - cstart[k] + g[k]) * cstride[k];
            oi += (lo[k] - start[k] + g[k]) * ostride[k];
        }
        let (ci, oi) = (ci as usize * es, oi as usize * es);
        debug_assert!(oi + run <= out.1 && ci + run <= chunk.len());
        // SAFETY: `oi + run` is within the output (the run lies inside the hyperslab),
        // `ci + run` within the decoded chunk, and no other task writes these bytes.
        unsafe { std::ptr::copy_nonoverlapping(chunk.as_ptr().add(ci), out.0.add(oi), run) };
        if !odometer(&mut g, outer) {
            break;
        }
    }
}

/// Read and inflate every stored chunk of `v` without unshuffling or copying (the
/// decompression floor of the measurements). Returns the decoded bytes.
pub fn inflate_floor(v: &VarIndex, file: &File) -> Result<u64> {
    let want = v.chunk_bytes();
    v.locs
        .par_iter()
        .filter(|l| l.allocated())
        .try_fold(
            || (Scratch::new(), 0u64),
            |(mut s, n), l| {
                s.stored.resize(l.size as usize, 0);
                file.read_exact_at(&mut s.stored, l.addr)?;
                s.a.resize(want, 0);
                if v.filters.iter().any(|f| matches!(f, Filter::Deflate(_))) {
                    filters::inflate(&mut s.inflater, &s.stored, &mut s.a)?;
                }
                Ok((s, n + want as u64))
            },
        )
        .map(|r| r.map(|(_, n)| n))
        .try_reduce(|| 0, |a, b| Ok(a + b))
}
