//! Our own reader and writer of the classic formats (CDF-1, CDF-2, CDF-5), used instead
//! of libnetcdf for classic files: no global lock (safe from many threads), large
//! positioned I/O instead of libnetcdf's 8 KiB calls, and raw big-endian transfers
//! (`copy_file_range`) when data is copied unchanged.
//!
//! The reader uses large positioned reads (`pread`) by default; `NCO_RS_MMAP=1` maps the
//! file with memmap2 instead (the same speed here, see docs/engine.md). A memory map has
//! one known hazard: if another process truncates the file while we read it, touching
//! the lost pages raises SIGBUS and the process dies; with `pread` that case is an I/O
//! error naming the file. Mapped pages also count in the resident memory of the process.

pub mod edit;
pub mod header;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::model::Meta;
use crate::types::{NcNum, Values};
pub use header::{Header, VarLayout};

/// How the reader gets bytes from the file.
enum Source {
    Map(memmap2::Mmap),
    Pread,
    Bytes(Vec<u8>),
}

/// A classic-format file opened for reading. `Sync`: share it across threads freely.
pub struct Reader {
    path: String,
    file: File,
    source: Source,
    header: Header,
    /// Bytes read through the map since its pages were last released.
    touched: std::sync::atomic::AtomicU64,
}

/// Mapped bytes read, over all mapped files, before [`Reader::release`] drops a file's
/// mapping: each of the N files open with a map is released every `1/N` of it.
pub const RELEASE_EVERY: u64 = 128 << 20;

/// Reads of at most this many bytes from a mapped file use positioned reads
/// ([`Reader::read_raw_into`]).
const SMALL_READ: usize = 64 << 10;

/// Files open with a memory map, for [`Reader::release`].
static MAPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Drop for Reader {
    fn drop(&mut self) {
        if matches!(self.source, Source::Map(_)) {
            MAPPED.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Per-dimension selection: the indices to read along each dimension, in output order.
pub type Selection = [Vec<usize>];

/// Contiguous runs of a selection: (offset of the run in the variable's element space,
/// number of elements). Calls `f` in output order.
fn for_each_run(
    shape: &[usize],
    record: Option<u64>,
    esize: u64,
    sel: &Selection,
    f: &mut dyn FnMut(u64, usize) -> Result<()>,
) -> Result<()> {
    let nd = shape.len();
    if nd == 0 {
        return f(0, 1);
    }
    if sel.iter().any(Vec::is_empty) {
        return Ok(());
    }
    // Element strides in bytes; the record dimension's stride is the record size.
    let mut stride = vec![0u64; nd];
    let mut acc = esize;
    for k in (0..nd).rev() {
        stride[k] = acc;
        acc *= shape[k] as u64;
    }
    if let Some(recsize) = record {
        stride[0] = recsize;
    }
    // Merge trailing dimensions that are fully selected in order into one block. The
    // record dimension (stride = record size) never merges with the others.
    let lo = usize::from(record.is_some());
    let is_full =
        |k: usize| sel[k].len() == shape[k] && sel[k].iter().enumerate().all(|(i, &x)| i == x);
    let is_run = |k: usize| sel[k].windows(2).all(|w| w[1] == w[0] + 1);
    let (outer_dims, run_len) = if nd == lo {
        (1, 1)
    } else {
        let mut k = nd - 1;
        let mut block = 1usize;
        while k > lo && is_full(k) {
            block *= shape[k];
            k -= 1;
        }
        if is_run(k) {
            (k, block * sel[k].len())
        } else {
            (k + 1, block)
        }
    };
    let mut idx = vec![0usize; outer_dims];
    loop {
        let mut off = 0u64;
        for d in 0..outer_dims {
            off += sel[d][idx[d]] as u64 * stride[d];
        }
        if outer_dims < nd {
            off += sel[outer_dims][0] as u64 * stride[outer_dims];
        }
        f(off, run_len)?;
        // Odometer increment.
        let mut d = outer_dims;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < sel[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

impl Reader {
    /// Open and parse a classic file. `use_pread` selects positioned reads instead of a
    /// memory map. Errors name the file (see [`header::parse`]).
    pub fn open(file_path: &Path, use_pread: bool) -> Result<Reader> {
        let file = File::open(file_path).map_err(|e| Error::io(file_path, e))?;
        // The name in messages (the OS calls take `file_path` as it is).
        let path = &file_path.display().to_string();
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        // The header is at most a few MiB in practice; read a prefix and grow if needed.
        let mut want = 64 * 1024u64;
        loop {
            let n = want.min(len) as usize;
            let mut buf = vec![0u8; n];
            file.read_exact_at(&mut buf, 0)
                .map_err(|e| Error::io(path, e))?;
            match header::parse(&buf, len, path) {
                Ok(header) => {
                    let source = if use_pread {
                        Source::Pread
                    } else {
                        // SAFETY: the map is read-only and only read through bounds-checked
                        // slices inside the file length validated by `header::parse`. The
                        // remaining hazard (another process truncating the file) is
                        // documented in the module docs, with pread (the default) as the remedy.
                        match unsafe { memmap2::Mmap::map(&file) } {
                            Ok(m) => {
                                // Pages not yet cached are then read ahead in 2 MiB
                                // folios, which later maps take with one entry each.
                                #[cfg(target_os = "linux")]
                                let _ = m.advise(memmap2::Advice::HugePage);
                                MAPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                Source::Map(m)
                            }
                            Err(_) => Source::Pread,
                        }
                    };
                    return Ok(Reader {
                        path: path.to_string(),
                        file,
                        source,
                        header,
                        touched: 0.into(),
                    });
                }
                Err(e) if (n as u64) < len && e.to_string().contains("truncated") => want *= 8,
                Err(e) => return Err(e),
            }
        }
    }

    /// A reader over an in-memory copy of a classic file (tests and fuzzing; `name`
    /// is used in messages). `devnull` stands in as the file handle.
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<Reader> {
        let header = header::parse(&bytes, bytes.len() as u64, name)?;
        let file = File::open("/dev/null").map_err(|e| Error::io("/dev/null", e))?;
        Ok(Reader {
            path: name.to_string(),
            file,
            source: Source::Bytes(bytes),
            header,
            touched: 0.into(),
        })
    }

    /// The parsed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The metadata.
    pub fn meta(&self) -> &Meta {
        &self.header.meta
    }

    /// The open file (for `copy_file_range`).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// A positioned read of `out.len()` bytes at `off`, whatever the source.
    ///
    /// Errors: a file that ends before `off + out.len()` (truncated after it was opened,
    /// e.g. by another process) is named with the byte it should reach.
    fn pread(&self, off: u64, out: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(out, off).map_err(|e| {
            let e = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                truncated_while_reading(off + out.len() as u64)
            } else {
                e
            };
            Error::io(&self.path, e)
        })
    }

    fn fetch(&self, off: u64, out: &mut [u8]) -> Result<()> {
        match &self.source {
            Source::Map(m) => {
                let s = usize::try_from(off).unwrap_or(usize::MAX);
                let e = s.saturating_add(out.len());
                let src = m.get(s..e).ok_or_else(|| Error::Format {
                    path: self.path.clone(),
                    reason: "file shrank while being read".into(),
                })?;
                out.copy_from_slice(src);
                Ok(())
            }
            Source::Pread => self.pread(off, out),
            Source::Bytes(b) => {
                let s = usize::try_from(off).unwrap_or(usize::MAX);
                let src = s
                    .checked_add(out.len())
                    .and_then(|e| b.get(s..e))
                    .ok_or_else(|| Error::Format {
                        path: self.path.clone(),
                        reason: "read past the end of the data".into(),
                    })?;
                out.copy_from_slice(src);
                Ok(())
            }
        }
    }

    /// Read the selected elements of variable `var` as raw big-endian bytes, in C order
    /// of the selection. `sel` has one index list per dimension (empty for a scalar).
    pub fn read_raw(&self, var: usize, sel: &Selection) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_raw_into(var, sel, &mut out)?;
        Ok(out)
    }

    /// [`Reader::read_raw`] into a caller's buffer (resized; reuse it across calls to
    /// avoid fresh allocations and their page faults).
    pub fn read_raw_into(&self, var: usize, sel: &Selection, out: &mut Vec<u8>) -> Result<()> {
        let meta = &self.header.meta;
        let v = &meta.vars[var];
        let es = v.ty.size() as u64;
        let n: usize = sel.iter().map(Vec::len).product();
        let bytes = n
            .checked_mul(es as usize)
            .ok_or_else(|| Error::no_memory(&v.name, usize::MAX))?;
        if bytes > out.len() {
            nco_base::error::try_room(out, bytes - out.len(), &v.name)?;
        }
        out.resize(bytes, 0);
        self.read_raw_to(var, sel, out)
    }

    /// [`Reader::read_raw`] into `out`, which holds exactly the selection's bytes.
    fn read_raw_to(&self, var: usize, sel: &Selection, out: &mut [u8]) -> Result<()> {
        self.header.check_inside(var, &self.path)?;
        let meta = &self.header.meta;
        let v = &meta.vars[var];
        let l = &self.header.layout[var];
        let es = v.ty.size() as u64;
        let shape = meta.shape(v);
        let record = l.record.then_some(self.header.recsize);
        // Small reads from a mapped file (a record coordinate, one station's column)
        // go through positioned reads too: each touched page of a map can map a whole
        // 2 MiB folio into our resident memory, for a few bytes.
        let positioned = match self.source {
            Source::Pread => true,
            Source::Map(_) => out.len() <= SMALL_READ,
            Source::Bytes(_) => false,
        };
        if !positioned {
            let mut pos = 0usize;
            for_each_run(&shape, record, es, sel, &mut |off, len| {
                let b = len * es as usize;
                self.fetch(l.begin + off, &mut out[pos..pos + b])?;
                pos += b;
                Ok(())
            })?;
            return Ok(());
        }
        // Positioned reads: coalesce nearby runs (strided or multi-slab selections) into
        // one read of their span, so a gather costs a few large system calls rather than
        // one per element.
        let mut runs: Vec<(u64, usize)> = Vec::new();
        for_each_run(&shape, record, es, sel, &mut |off, len| {
            runs.push((l.begin + off, len * es as usize));
            Ok(())
        })?;
        // A system call costs about as much as copying a few KiB: bridge smaller gaps.
        const GAP: u64 = 8 << 10;
        const SPAN: u64 = 16 << 20;
        let mut scratch = Vec::new();
        let mut pos = 0usize;
        let mut i = 0;
        while i < runs.len() {
            let start = runs[i].0;
            let mut end = start + runs[i].1 as u64;
            let mut j = i + 1;
            while j < runs.len() {
                let (o, n) = runs[j];
                if o < end || o - end > GAP || o + n as u64 - start > SPAN {
                    break;
                }
                end = o + n as u64;
                j += 1;
            }
            if j == i + 1 {
                self.pread(start, &mut out[pos..pos + runs[i].1])?;
                pos += runs[i].1;
            } else {
                scratch.resize((end - start) as usize, 0);
                self.pread(start, &mut scratch)?;
                for &(o, n) in &runs[i..j] {
                    let a = (o - start) as usize;
                    out[pos..pos + n].copy_from_slice(&scratch[a..a + n]);
                    pos += n;
                }
            }
            i = j;
        }
        Ok(())
    }

    /// Read the selected elements of variable `var`, decoded to its type.
    ///
    /// The bytes are read straight into the values' own buffer and swapped in place
    /// (one buffer the size of the selection, not a raw copy beside the decoded one).
    ///
    /// Errors: a refused allocation is [`Error::no_memory`] naming the variable; a read
    /// past the end of the file.
    pub fn read(&self, var: usize, sel: &Selection) -> Result<Values> {
        fn dec<T: NcNum>(r: &Reader, var: usize, sel: &Selection, n: usize) -> Result<Values> {
            let name = &r.header.meta.vars[var].name;
            let mut out: Vec<T> = Vec::new();
            if out.try_reserve_exact(n).is_err() {
                return Err(Error::no_memory(name, n.saturating_mul(T::SIZE)));
            }
            out.resize(n, T::default());
            // SAFETY: `T` is one of netCDF's plain number types (`NcNum` is sealed):
            // `T::SIZE` bytes each, no padding, every bit pattern a value; the slice
            // covers exactly the `n` initialised elements and is the only live view.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), n * T::SIZE)
            };
            r.read_raw_to(var, sel, bytes)?;
            fn swap<T: NcNum>(xs: &mut [T]) {
                for x in xs {
                    // SAFETY: as above, the element's own `T::SIZE` bytes.
                    let b = unsafe {
                        std::slice::from_raw_parts((x as *const T).cast::<u8>(), T::SIZE)
                    };
                    *x = T::from_be(b);
                }
            }
            if n < 4 * PIECE {
                nco_base::cpu::with_avx2(|| swap(&mut out));
            } else {
                out.par_chunks_mut(PIECE)
                    .for_each(|c| nco_base::cpu::with_avx2(|| swap(c)));
            }
            Ok(T::into_values(out))
        }
        let v = &self.header.meta.vars[var];
        let n: usize = sel.iter().map(Vec::len).product();
        if n.checked_mul(v.ty.size()).is_none() {
            return Err(Error::no_memory(&v.name, usize::MAX));
        }
        crate::dispatch_type!(v.ty, T => dec::<T>(self, var, sel, n);
            char => {
                let raw = self.read_raw(var, sel)?;
                Ok(Values::Char(raw))
            };
            string => Ok(Values::Str(Vec::new())))
    }

    /// Read many selections of variable `var` in one pass over its data, appending
    /// each one's raw big-endian bytes (in C order of the selection) to `outs[i]`.
    /// `dim0`, when given, replaces the first dimension's indices of every selection
    /// (the records a multi-file read takes from this file).
    ///
    /// This is the read of list-input station extraction: selections that agree on
    /// their leading dimensions (typically the record and level dimensions, differing
    /// only in latitude and longitude) are served together, so every page of the file
    /// is visited once, in file order, for all of them, instead of once per station.
    /// With positioned reads (no memory map) each selection is read on its own, as
    /// [`Reader::read_raw`] does.
    ///
    /// Errors: as [`Reader::read_raw`].
    pub fn gather_raw_into(
        &self,
        var: usize,
        dim0: Option<&[usize]>,
        sels: &[&Selection],
        outs: &mut [Vec<u8>],
    ) -> Result<()> {
        self.header.check_inside(var, &self.path)?;
        let meta = &self.header.meta;
        let v = &meta.vars[var];
        let l = &self.header.layout[var];
        let es = v.ty.size() as u64;
        let shape = meta.shape(v);
        let nd = shape.len();
        let Some(&first) = sels.first() else {
            return Ok(());
        };
        fn pick<'a>(dim0: Option<&'a [usize]>, s: &'a [Vec<usize>], d: usize) -> &'a [usize] {
            match dim0 {
                Some(r) if d == 0 => r,
                _ => &s[d],
            }
        }

        // A selection with its first dimension's indices replaced by `dim0`.
        let substituted = |s: &Selection| -> Vec<Vec<usize>> {
            let mut sel = s.to_vec();
            if let (Some(r), Some(d0)) = (dim0, sel.first_mut()) {
                *d0 = r.to_vec();
            }
            sel
        };
        let bytes: &[u8] = match &self.source {
            Source::Map(m) => m,
            Source::Bytes(b) => b,
            Source::Pread => {
                for (s, out) in sels.iter().zip(outs.iter_mut()) {
                    out.extend_from_slice(&self.read_raw(var, &substituted(s))?);
                }
                return Ok(());
            }
        };
        // Leading dimensions on which every selection agrees (at least the first
        // when it is overridden).
        let mut k = 0;
        while k < nd && (k == 0 && dim0.is_some() || sels.iter().all(|s| s[k] == first[k])) {
            k += 1;
        }
        if k == nd {
            // One selection (or all alike): an ordinary read, appended to each.
            let raw = self.read_raw(var, &substituted(first))?;
            for out in outs.iter_mut().take(sels.len()) {
                out.extend_from_slice(&raw);
            }
            return Ok(());
        }
        let record = l.record.then_some(self.header.recsize);
        let mut stride = vec![0u64; nd];
        let mut acc = es;
        for d in (0..nd).rev() {
            stride[d] = acc;
            acc *= shape[d] as u64;
        }
        if let Some(recsize) = record {
            stride[0] = recsize;
        }
        // Each selection's runs below the shared leading dimensions, as byte offsets
        // from the shared position (the trailing dimensions' strides are those of the
        // sub-shape, and the record dimension is always shared when k > 0).
        let mut runs: Vec<(u64, usize)> = Vec::new();
        let mut bounds: Vec<usize> = Vec::with_capacity(sels.len() + 1);
        bounds.push(0);
        for s in sels {
            let mut push = |off: u64, len: usize| {
                runs.push((off, len * es as usize));
                Ok(())
            };
            if k == 0 {
                for_each_run(&shape, record, es, s, &mut push)?;
            } else {
                for_each_run(&shape[k..], None, es, &s[k..], &mut push)?;
            }
            bounds.push(runs.len());
        }
        for (s, out) in sels.iter().zip(outs.iter_mut()) {
            let n: usize = (0..nd).map(|d| pick(dim0, s, d).len()).product();
            out.reserve(n * es as usize);
        }
        if (0..k).any(|d| pick(dim0, first, d).is_empty()) {
            return Ok(());
        }
        let short = || Error::Format {
            path: self.path.clone(),
            reason: "file shrank while being read".into(),
        };
        let mut idx = vec![0usize; k];
        loop {
            let base = l.begin
                + (0..k)
                    .map(|d| pick(dim0, first, d)[idx[d]] as u64 * stride[d])
                    .sum::<u64>();
            for (r, out) in outs.iter_mut().enumerate().take(sels.len()) {
                for &(off, n) in &runs[bounds[r]..bounds[r + 1]] {
                    let s = usize::try_from(base + off).map_err(|_| short())?;
                    let src = bytes.get(s..s + n).ok_or_else(short)?;
                    // Station points are single elements: copy those without a call.
                    match n {
                        4 => out.extend_from_slice(&<[u8; 4]>::try_from(src).unwrap_or_default()),
                        8 => out.extend_from_slice(&<[u8; 8]>::try_from(src).unwrap_or_default()),
                        _ => out.extend_from_slice(src),
                    }
                }
            }
            // Odometer over the shared leading dimensions, last fastest.
            let mut d = k;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < pick(dim0, first, d).len() {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// Note that variable `var` was read through the memory map; once the variables
    /// read since the last release (counted in the 2 MiB granules their data spans,
    /// which is what touching them may map) add up to this file's share of [`RELEASE_EVERY`]
    /// bytes (all of it divided by the number of mapped files, at least 1 MiB), drop
    /// this process's mapping of the whole file (the pages stay in the page cache and
    /// are mapped again if touched). A pass over many variables of mapped files then
    /// keeps about [`RELEASE_EVERY`] bytes of them resident, with one system call per
    /// share rather than one per variable (each call interrupts every core running our
    /// threads to flush their address translations). No effect without a map.
    pub fn release(&self, var: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Source::Map(m) = &self.source {
            // A touched page can map its whole folio (up to 2 MiB): count the 2 MiB
            // granules each extent spans, so that small record variables (a few bytes
            // per record, one folio each) count what they keep resident.
            const GRANULE: u64 = 2 << 20;
            let bytes: u64 = self
                .extents(var)
                .iter()
                .filter(|e| e.1 > 0)
                .map(|&(off, len)| ((off + len - 1) / GRANULE - off / GRANULE + 1) * GRANULE)
                .sum();
            let share = (RELEASE_EVERY / MAPPED.load(Relaxed).max(1)).max(1 << 20);
            if self.touched.fetch_add(bytes, Relaxed) + bytes >= share {
                self.touched.store(0, Relaxed);
                // SAFETY: a read-only file mapping, never written; MADV_DONTNEED only
                // unmaps its pages, which read back the same file bytes when touched
                // again. Slices into the map stay valid.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, m.len())
                };
            }
        }
    }

    /// Byte ranges (offset, length) of variable `var`'s data in the file: one range for a
    /// fixed variable, one per record for a record variable.
    pub fn extents(&self, var: usize) -> Vec<(u64, u64)> {
        let l = &self.header.layout[var];
        if l.record {
            (0..self.header.numrecs)
                .map(|r| (l.begin + r * self.header.recsize, l.bytes))
                .collect()
        } else {
            vec![(l.begin, l.bytes)]
        }
    }
}

/// Elements per parallel piece of [`decode_par`] and [`encode_par`].
const PIECE: usize = 1 << 16;

/// Decode big-endian bytes, in parallel pieces for large buffers, each a tight loop the
/// compiler vectorises (byte swaps by shuffles). Aborts when the system refuses the
/// decoded buffer, as any infallible allocation does; [`try_decode_par`] does not.
pub fn decode_par(ty: crate::types::NcType, raw: &[u8]) -> Values {
    decode_fallible(ty, raw).unwrap_or_else(|| {
        std::alloc::handle_alloc_error(
            std::alloc::Layout::from_size_align(raw.len().max(1), 8)
                .unwrap_or(std::alloc::Layout::new::<u64>()),
        )
    })
}

/// [`decode_par`] into a buffer reserved without aborting.
///
/// Errors: a refused allocation is [`Error::no_memory`] naming variable `var`.
pub fn try_decode_par(ty: crate::types::NcType, raw: &[u8], var: &str) -> Result<Values> {
    decode_fallible(ty, raw).ok_or_else(|| Error::no_memory(var, raw.len()))
}

/// The decode of [`decode_par`]; `None` when the output buffer cannot be had.
fn decode_fallible(ty: crate::types::NcType, raw: &[u8]) -> Option<Values> {
    #[inline(always)]
    fn piece<T: NcNum>(out: &mut [std::mem::MaybeUninit<T>], raw: &[u8]) {
        for (o, c) in out.iter_mut().zip(raw.chunks_exact(T::SIZE)) {
            o.write(T::from_be(c));
        }
    }
    fn dec<T: NcNum>(raw: &[u8]) -> Option<Values> {
        let n = raw.len() / T::SIZE;
        // Written in place, without a fill pass first.
        let mut out: Vec<T> = Vec::new();
        out.try_reserve_exact(n).ok()?;
        let spare = &mut out.spare_capacity_mut()[..n];
        if n < 4 * PIECE {
            nco_base::cpu::with_avx2(|| piece(spare, raw));
        } else {
            spare
                .par_chunks_mut(PIECE)
                .zip(raw.par_chunks(PIECE * T::SIZE))
                .for_each(|(o, r)| nco_base::cpu::with_avx2(|| piece(o, r)));
        }
        // SAFETY: the n elements were all written above (`raw` holds n whole elements
        // and every piece writes each of its elements).
        unsafe { out.set_len(n) };
        Some(T::into_values(out))
    }
    fn bytes(raw: &[u8]) -> Option<Values> {
        let mut v = Vec::new();
        v.try_reserve_exact(raw.len()).ok()?;
        v.extend_from_slice(raw);
        Some(Values::Char(v))
    }
    crate::dispatch_type!(ty, T => dec::<T>(raw); char => bytes(raw);
        string => Some(Values::Str(Vec::new())))
}

/// Encode values big-endian, in parallel pieces for large buffers.
pub fn encode_par(v: &Values) -> Vec<u8> {
    #[inline(always)]
    fn piece<T: NcNum>(out: &mut [u8], x: &[T]) {
        for (c, &e) in out.chunks_exact_mut(T::SIZE).zip(x) {
            e.write_be(c);
        }
    }
    fn enc<T: NcNum>(x: &[T]) -> Vec<u8> {
        let mut out = vec![0u8; x.len() * T::SIZE];
        if x.len() < 4 * PIECE {
            nco_base::cpu::with_avx2(|| piece(&mut out, x));
        } else {
            out.par_chunks_mut(T::SIZE * PIECE)
                .zip(x.par_chunks(PIECE))
                .for_each(|(o, s)| nco_base::cpu::with_avx2(|| piece(o, s)));
        }
        out
    }
    crate::dispatch!(v, x => enc(x); char c => c.clone(); string _s => Vec::new())
}

/// A classic-format file being written: the header is planned from the complete
/// definitions at creation (all definitions come before any data), data goes out with
/// positioned writes, and [`Writer::finish`] writes the final record count.
/// No fill pass: every value must be written (NOFILL semantics).
pub struct Writer {
    path: String,
    file: File,
    header: Header,
    numrecs: u64,
    /// The whole file assembled in memory while it stays under [`SMALL_FILE`] bytes,
    /// then written with one call: a small output (a station's time series) would
    /// otherwise cost one write per variable and record.
    image: Option<Vec<u8>>,
}

/// Outputs up to this size are assembled in memory and written at once.
const SMALL_FILE: u64 = 8 << 20;

impl Writer {
    /// Create `path` (truncating) with the definitions of `meta` (format Classic,
    /// Offset64 or Cdf5) and `hdr_pad` spare header bytes.
    pub fn create(file_path: &Path, meta: &Meta, hdr_pad: u64) -> Result<Writer> {
        let path = &file_path.display().to_string();
        for v in &meta.vars {
            crate::check_storable(meta.format, v)?;
        }
        let numrecs = meta.record_dim().map_or(0, |d| meta.dims[d].len as u64);
        let header = header::plan(meta, numrecs, hdr_pad, path)?;
        let file = File::create(file_path).map_err(|e| Error::io(file_path, e))?;
        let mut w = Writer {
            path: path.to_string(),
            file,
            header,
            numrecs,
            image: Some(Vec::new()),
        };
        // A file planned larger than an image is written directly from the start: the
        // image would be memory touched only to be written out when it overflows.
        if w.end() > SMALL_FILE {
            w.image = None;
        }
        w.write_header()?;
        Ok(w)
    }

    /// The file's length with `self.numrecs` records: the end of its last fixed-size
    /// variable or of its records, at least the header.
    fn end(&self) -> u64 {
        let h = &self.header;
        let fixed_end = h
            .layout
            .iter()
            .filter(|l| !l.record)
            .map(|l| l.begin + l.vsize)
            .max();
        let rec_begin = h.layout.iter().filter(|l| l.record).map(|l| l.begin).min();
        let end = match rec_begin {
            Some(b) => b + self.numrecs * h.recsize,
            None => fixed_end.unwrap_or(h.header_len),
        };
        end.max(h.header_len)
    }

    fn write_header(&mut self) -> Result<()> {
        let begins: Vec<u64> = self.header.layout.iter().map(|l| l.begin).collect();
        let bytes = header::encode(
            &self.header.meta,
            &begins,
            self.numrecs,
            &self.header.layout,
        );
        self.put(0, &bytes)
    }

    /// Write `bytes` at `off`: into the in-memory image while the file is small,
    /// to the file otherwise.
    fn put(&mut self, off: u64, bytes: &[u8]) -> Result<()> {
        let end = off + bytes.len() as u64;
        if end > SMALL_FILE {
            self.flush_image()?;
        }
        match &mut self.image {
            Some(img) => {
                let (o, e) = (off as usize, end as usize);
                if img.len() < e {
                    img.resize(e, 0);
                }
                img[o..e].copy_from_slice(bytes);
                Ok(())
            }
            None => self
                .file
                .write_all_at(bytes, off)
                .map_err(|e| Error::io(&self.path, e)),
        }
    }

    /// Write the in-memory image out and write directly from now on.
    fn flush_image(&mut self) -> Result<()> {
        if let Some(img) = self.image.take() {
            self.file
                .write_all_at(&img, 0)
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// The planned layout.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Write raw big-endian bytes of variable `var` starting at index `first` of its
    /// first dimension (a record number for record variables) and covering whole rows
    /// of the remaining dimensions. A scalar takes `first = 0`.
    pub fn write_raw(&mut self, var: usize, first: usize, bytes: &[u8]) -> Result<()> {
        let l = self.header.layout[var].clone();
        let meta = &self.header.meta;
        let v = &meta.vars[var];
        if l.record {
            let per = l.bytes as usize;
            if per == 0 {
                return Ok(());
            }
            for (i, chunk) in bytes.chunks(per).enumerate() {
                let r = (first + i) as u64;
                self.put(l.begin + r * self.header.recsize, chunk)?;
                self.numrecs = self.numrecs.max(r + 1);
            }
        } else {
            let row: u64 = if v.dims.is_empty() {
                0
            } else {
                l.bytes / meta.dims[v.dims[0]].len.max(1) as u64
            };
            if first as u64 * row + bytes.len() as u64 > l.bytes {
                return Err(Error::var(
                    &v.name,
                    "internal: write past the end of the variable",
                ));
            }
            self.put(l.begin + first as u64 * row, bytes)?;
        }
        Ok(())
    }

    /// Write raw big-endian `bytes` of variable `var` starting at the multi-index
    /// `first` (one index for each of the leading `first.len()` dimensions, at least
    /// one): they cover consecutive indices of dimension `first.len() - 1` from
    /// `first[first.len() - 1]`, whole along the later dimensions, and lie within one
    /// index of each earlier dimension (so they are contiguous in the file).
    ///
    /// Errors: a block past the end of the variable (an internal error), I/O errors.
    pub fn write_raw_at(&mut self, var: usize, first: &[usize], bytes: &[u8]) -> Result<()> {
        if first.len() <= 1 {
            return self.write_raw(var, first.first().copied().unwrap_or(0), bytes);
        }
        let l = self.header.layout[var].clone();
        let meta = &self.header.meta;
        let v = &meta.vars[var];
        let shape = meta.shape(v);
        let (k, nd) = (first.len(), shape.len());
        let past = || Error::var(&v.name, "internal: write past the end of the variable");
        if k > nd
            || first.iter().zip(&shape).skip(1).any(|(i, n)| i >= n)
            || !l.record && first[0] >= shape[0]
        {
            return Err(past());
        }
        // Byte strides of the dimensions after the first (C order).
        let mut stride = vec![v.ty.size() as u64; nd];
        for d in (1..nd - 1).rev() {
            stride[d] = stride[d + 1] * shape[d + 1] as u64;
        }
        let inner: u64 = (1..k).map(|d| first[d] as u64 * stride[d]).sum();
        if bytes.len() as u64 > stride[k - 1] * (shape[k - 1] - first[k - 1]) as u64 {
            return Err(past());
        }
        let r = first[0] as u64;
        if l.record {
            self.put(l.begin + r * self.header.recsize + inner, bytes)?;
            self.numrecs = self.numrecs.max(r + 1);
        } else {
            let row = stride[1] * shape[1] as u64;
            self.put(l.begin + r * row + inner, bytes)?;
        }
        Ok(())
    }

    /// Write typed values (already in the variable's type) as in [`Writer::write_raw`].
    pub fn write(&mut self, var: usize, first: usize, values: &Values) -> Result<()> {
        self.write_at(var, &[first], values)
    }

    /// Write typed values (already in the variable's type) as in
    /// [`Writer::write_raw_at`].
    pub fn write_at(&mut self, var: usize, first: &[usize], values: &Values) -> Result<()> {
        let want = self.header.meta.vars[var].ty;
        if values.nc_type() != want {
            return Err(Error::var(
                &self.header.meta.vars[var].name,
                format!(
                    "internal: writing {} data into a {want} variable",
                    values.nc_type()
                ),
            ));
        }
        self.write_raw_at(var, first, &encode_par(values))
    }

    /// Copy variable `src_var` of `src` unchanged into `var` (same type and shape) with
    /// in-kernel copies (`copy_file_range`), falling back to read and write.
    /// With `only = Some(r)`, copy record `r` alone.
    pub fn copy_var(
        &mut self,
        var: usize,
        src: &Reader,
        src_var: usize,
        only: Option<usize>,
    ) -> Result<()> {
        src.header.check_inside(src_var, &src.path)?;
        let l = self.header.layout[var].clone();
        let extents = src.extents(src_var);
        for (i, (off, len)) in extents.iter().enumerate() {
            if only.is_some_and(|r| r != i) {
                continue;
            }
            let dst = if l.record {
                l.begin + i as u64 * self.header.recsize
            } else {
                l.begin
            };
            if self.image.is_some() && dst + len <= SMALL_FILE {
                let mut buf = vec![0u8; *len as usize];
                src.fetch(*off, &mut buf)?;
                self.put(dst, &buf)?;
            } else {
                self.flush_image()?;
                copy_range(src.file(), *off, &self.file, dst, *len).map_err(|e| {
                    // A short source is the input's fault; anything else the output's.
                    let at = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        &src.path
                    } else {
                        &self.path
                    };
                    Error::io(at, e)
                })?;
            }
            if l.record {
                self.numrecs = self.numrecs.max(i as u64 + 1);
            }
        }
        Ok(())
    }

    /// Write the final record count and set the file length.
    pub fn finish(mut self) -> Result<()> {
        self.write_header()?;
        let end = self.end();
        if let Some(img) = &mut self.image {
            img.resize(end as usize, 0);
        }
        self.flush_image()?;
        self.file
            .set_len(end)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(())
    }
}

/// Copy `len` bytes from `src` at `src_off` to `dst` at `dst_off`.
fn copy_range(src: &File, src_off: u64, dst: &File, dst_off: u64, len: u64) -> std::io::Result<()> {
    let mut done = 0u64;
    while done < len {
        let mut so = (src_off + done) as libc::loff_t;
        let mut doff = (dst_off + done) as libc::loff_t;
        let want = (len - done).min(1 << 30) as usize;
        // SAFETY: both descriptors are open files owned by the callers for the whole
        // call; the offsets are plain integers the kernel validates.
        let n = unsafe {
            libc::copy_file_range(
                src.as_raw_fd(),
                &mut so,
                dst.as_raw_fd(),
                &mut doff,
                want,
                0,
            )
        };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            return match err.raw_os_error() {
                Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL) => {
                    copy_range_rw(src, src_off + done, dst, dst_off + done, len - done)
                }
                _ => Err(err),
            };
        }
        if n == 0 {
            return Err(truncated_while_reading(src_off + len));
        }
        done += n as u64;
    }
    Ok(())
}

/// The error of a read past the end of an input whose header said its data reaches
/// byte `end`: the file shrank after it was opened.
fn truncated_while_reading(end: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!("the file ends before byte {end}, where its data should reach: it was truncated while being read"),
    )
}

fn copy_range_rw(src: &File, so: u64, dst: &File, d: u64, len: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; (len as usize).min(8 << 20)];
    let mut done = 0u64;
    while done < len {
        let n = ((len - done) as usize).min(buf.len());
        src.read_exact_at(&mut buf[..n], so + done).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                truncated_while_reading(so + len)
            } else {
                e
            }
        })?;
        dst.write_all_at(&buf[..n], d + done)?;
        done += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(shape: &[usize], record: Option<u64>, sel: &[Vec<usize>]) -> Vec<(u64, usize)> {
        let mut v = Vec::new();
        for_each_run(shape, record, 4, sel, &mut |o, n| {
            v.push((o, n));
            Ok(())
        })
        .unwrap();
        v
    }

    /// A classic file with a record variable t(time=3, lev=2, lat=4, lon=5) and a fixed
    /// variable f(lat, lon), each element holding its own linear index.
    fn sample_file(dir: &std::path::Path) -> Reader {
        use crate::model::{Dim, Format, Storage, Var};
        use crate::types::NcType;
        let mut m = Meta::new(Format::Offset64);
        for (name, len, unlimited) in [
            ("time", 3, true),
            ("lev", 2, false),
            ("lat", 4, false),
            ("lon", 5, false),
        ] {
            m.dims.push(Dim {
                name: name.into(),
                len,
                unlimited,
                group: 0,
            });
        }
        for (name, dims) in [("f", vec![2, 3]), ("t", vec![0, 1, 2, 3])] {
            m.vars.push(Var {
                name: name.into(),
                ty: NcType::Float,
                dims,
                attrs: Vec::new(),
                storage: Storage::default(),
                group: 0,
            });
        }
        let path = dir.join("g.nc");
        let p = path.to_str().unwrap();
        let mut w = Writer::create(&path, &m, 0).unwrap();
        let f: Vec<f32> = (0..20).map(|i| i as f32).collect();
        w.write(0, 0, &Values::Float(f)).unwrap();
        let t: Vec<f32> = (0..120).map(|i| i as f32).collect();
        w.write(1, 0, &Values::Float(t)).unwrap();
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        Reader::from_bytes(p, bytes).unwrap()
    }

    #[test]
    fn read_decodes_every_type_in_place() {
        // Every classic type (CDF-5 for the unsigned and 64-bit ones), a variable large
        // enough for the parallel swap, and a strided selection.
        use crate::model::{Dim, Format, Storage, Var};
        use crate::types::NcType;
        let n = 4 * PIECE + 3;
        let mut m = Meta::new(Format::Cdf5);
        m.dims.push(Dim {
            name: "n".into(),
            len: n,
            unlimited: false,
            group: 0,
        });
        let vals = |ty: NcType| -> Values {
            let x: Vec<f64> = (0..n).map(|i| (i % 120) as f64 - 7.0).collect();
            match ty {
                NcType::Char => Values::Char((0..n).map(|i| (i % 251) as u8).collect()),
                t @ (NcType::UByte | NcType::UShort | NcType::UInt | NcType::UInt64) => {
                    let a: Vec<f64> = x.iter().map(|v| v.abs()).collect();
                    Values::from_f64_slice(t, &a).unwrap()
                }
                t => Values::from_f64_slice(t, &x).unwrap(),
            }
        };
        let types = [
            NcType::Byte,
            NcType::Char,
            NcType::Short,
            NcType::Int,
            NcType::Float,
            NcType::Double,
            NcType::UByte,
            NcType::UShort,
            NcType::UInt,
            NcType::Int64,
            NcType::UInt64,
        ];
        for (i, ty) in types.iter().enumerate() {
            m.vars.push(Var {
                name: format!("v{i}"),
                ty: *ty,
                dims: vec![0],
                attrs: Vec::new(),
                storage: Storage::default(),
                group: 0,
            });
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.nc");
        let p = path.to_str().unwrap();
        let mut w = Writer::create(&path, &m, 0).unwrap();
        for (i, ty) in types.iter().enumerate() {
            w.write(i, 0, &vals(*ty)).unwrap();
        }
        w.finish().unwrap();
        let r = Reader::from_bytes(p, std::fs::read(&path).unwrap()).unwrap();
        let odd: Vec<usize> = (1..n).step_by(3).collect();
        for (i, ty) in types.iter().enumerate() {
            let want = vals(*ty);
            assert_eq!(r.read(i, &[(0..n).collect()]).unwrap(), want, "{ty:?}");
            let got = r.read(i, std::slice::from_ref(&odd)).unwrap();
            let want_odd = match &want {
                Values::Char(c) => Values::Char(odd.iter().map(|&k| c[k]).collect()),
                w => {
                    let x: Vec<f64> = odd.iter().map(|&k| w.get_f64(k).unwrap()).collect();
                    Values::from_f64_slice(*ty, &x).unwrap()
                }
            };
            assert_eq!(got, want_odd, "{ty:?} strided");
        }
    }

    #[test]
    fn gather_matches_separate_reads() {
        let dir = tempfile::tempdir().unwrap();
        let r = sample_file(dir.path());
        let st = |y: usize, x: usize| vec![vec![0, 1, 2], vec![0, 1], vec![y], vec![x]];
        // Stations differing in lat/lon, a region, a repeated one, and a request
        // differing in its records (nothing shared).
        let sels: Vec<Vec<Vec<usize>>> = vec![
            st(0, 0),
            st(3, 4),
            vec![vec![0, 1, 2], vec![0, 1], vec![1, 2], vec![0, 2, 4]],
            st(3, 4),
        ];
        let refs: Vec<&Selection> = sels.iter().map(Vec::as_slice).collect();
        let mut outs = vec![Vec::new(); sels.len()];
        r.gather_raw_into(1, None, &refs, &mut outs).unwrap();
        for (s, o) in sels.iter().zip(&outs) {
            assert_eq!(*o, r.read_raw(1, s).unwrap());
        }
        let odd = [vec![vec![2], vec![1], vec![0], vec![1]], st(1, 1)];
        let refs: Vec<&Selection> = odd.iter().map(Vec::as_slice).collect();
        let mut outs = vec![Vec::new(); 2];
        r.gather_raw_into(1, None, &refs, &mut outs).unwrap();
        assert_eq!(outs[0], r.read_raw(1, &odd[0]).unwrap());
        assert_eq!(outs[1], r.read_raw(1, &odd[1]).unwrap());
        // The records replaced by `dim0`, appended after what the buffers held.
        let mut outs = vec![vec![9u8], Vec::new()];
        let two = [st(2, 3), st(0, 4)];
        let refs: Vec<&Selection> = two.iter().map(Vec::as_slice).collect();
        r.gather_raw_into(1, Some(&[2, 0]), &refs, &mut outs)
            .unwrap();
        let mut want = vec![9u8];
        let mut s0 = st(2, 3);
        s0[0] = vec![2, 0];
        want.extend(r.read_raw(1, &s0).unwrap());
        assert_eq!(outs[0], want);
        // Values: element (rec 2, lev 0, lat 2, lon 3) is 2*40 + 0*20 + 2*5 + 3 = 93.
        assert_eq!(
            decode_par(crate::types::NcType::Float, &outs[0][1..5]).get_f64(0),
            Some(93.0)
        );
        // A fixed variable, one selection.
        let f = [vec![vec![1, 3], vec![2]]];
        let refs: Vec<&Selection> = f.iter().map(Vec::as_slice).collect();
        let mut outs = vec![Vec::new()];
        r.gather_raw_into(0, None, &refs, &mut outs).unwrap();
        assert_eq!(outs[0], r.read_raw(0, &f[0]).unwrap());
    }

    #[test]
    fn runs_merge_full_trailing_dims() {
        // [2,3,4] all: one run of 24 elements.
        let sel = vec![vec![0, 1], vec![0, 1, 2], vec![0, 1, 2, 3]];
        assert_eq!(runs(&[2, 3, 4], None, &sel), vec![(0, 24)]);
        // lon strided: element by element.
        let sel = vec![vec![1], vec![2], vec![0, 2]];
        assert_eq!(runs(&[2, 3, 4], None, &sel), vec![(4 * 20, 1), (4 * 22, 1)]);
        // record variable: one run per record, offset by the record size.
        let sel = vec![vec![0, 2], vec![0, 1, 2], vec![0, 1, 2, 3]];
        assert_eq!(
            runs(&[3, 3, 4], Some(1000), &sel),
            vec![(0, 12), (2000, 12)]
        );
        // record variable, partial inner run.
        let sel = vec![vec![1], vec![1, 2], vec![0, 1, 2, 3]];
        assert_eq!(runs(&[3, 3, 4], Some(1000), &sel), vec![(1000 + 16, 8)]);
        // scalar
        assert_eq!(runs(&[], None, &[]), vec![(0, 1)]);
        // 1-D record variable
        let sel = vec![vec![3, 4]];
        assert_eq!(runs(&[10], Some(100), &sel), vec![(300, 1), (400, 1)]);
    }
}
