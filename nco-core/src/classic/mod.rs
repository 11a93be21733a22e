//! Our own reader and writer of the classic formats (CDF-1, CDF-2, CDF-5), used instead
//! of libnetcdf for classic files: no global lock (safe from many threads), large
//! positioned I/O instead of libnetcdf's 8 KiB calls, and raw big-endian transfers
//! (`copy_file_range`) when data is copied unchanged.
//!
//! The reader uses large positioned reads (`pread`) by default; `NCO_RS_MMAP=1` maps the
//! file with memmap2 instead (the same speed here, see ENGINE_NOTES). A memory map has
//! one known hazard: if another process truncates the file while we read it, touching
//! the lost pages raises SIGBUS and the process dies; with `pread` that case is an I/O
//! error naming the file. Mapped pages also count in the resident memory of the process.

pub mod header;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

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
    pub fn open(path: &str, use_pread: bool) -> Result<Reader> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
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
                            Ok(m) => Source::Map(m),
                            Err(_) => Source::Pread,
                        }
                    };
                    return Ok(Reader {
                        path: path.to_string(),
                        file,
                        source,
                        header,
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
            Source::Pread => self
                .file
                .read_exact_at(out, off)
                .map_err(|e| Error::io(&self.path, e)),
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
        let l = &self.header.layout[var];
        let es = v.ty.size() as u64;
        let n: usize = sel.iter().map(Vec::len).product();
        out.resize(n * es as usize, 0);
        let shape = meta.shape(v);
        let record = l.record.then_some(self.header.recsize);
        if !matches!(self.source, Source::Pread) {
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
                self.fetch(start, &mut out[pos..pos + runs[i].1])?;
                pos += runs[i].1;
            } else {
                scratch.resize((end - start) as usize, 0);
                self.fetch(start, &mut scratch)?;
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
    pub fn read(&self, var: usize, sel: &Selection) -> Result<Values> {
        let raw = self.read_raw(var, sel)?;
        Ok(decode_par(self.header.meta.vars[var].ty, &raw))
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

/// Decode big-endian bytes, in parallel for large buffers.
pub fn decode_par(ty: crate::types::NcType, raw: &[u8]) -> Values {
    fn dec<T: NcNum>(raw: &[u8]) -> Values {
        let n = raw.len() / T::SIZE;
        if n < (1 << 18) {
            return T::into_values(raw.chunks_exact(T::SIZE).map(T::from_be).collect());
        }
        // Written in place by the parallel collector: no zero-fill pass first.
        let mut out = Vec::with_capacity(n);
        raw.par_chunks_exact(T::SIZE)
            .map(T::from_be)
            .collect_into_vec(&mut out);
        T::into_values(out)
    }
    crate::dispatch_type!(ty, T => dec::<T>(raw); char => Values::Char(raw.to_vec());
        string => Values::Str(Vec::new()))
}

/// Encode values big-endian, in parallel for large buffers.
pub fn encode_par(v: &Values) -> Vec<u8> {
    fn enc<T: NcNum>(x: &[T]) -> Vec<u8> {
        let mut out = vec![0u8; x.len() * T::SIZE];
        if x.len() < (1 << 18) {
            for (c, &e) in out.chunks_exact_mut(T::SIZE).zip(x) {
                e.write_be(c);
            }
        } else {
            out.par_chunks_mut(T::SIZE << 16)
                .zip(x.par_chunks(1 << 16))
                .for_each(|(o, s)| {
                    for (c, &e) in o.chunks_exact_mut(T::SIZE).zip(s) {
                        e.write_be(c);
                    }
                });
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
}

impl Writer {
    /// Create `path` (truncating) with the definitions of `meta` (format Classic,
    /// Offset64 or Cdf5) and `hdr_pad` spare header bytes.
    pub fn create(path: &str, meta: &Meta, hdr_pad: u64) -> Result<Writer> {
        for v in &meta.vars {
            if !meta.format.supports(v.ty) {
                return Err(Error::var(
                    &v.name,
                    format!(
                        "type {} cannot be stored in a {} file",
                        v.ty,
                        meta.format.kind_name()
                    ),
                ));
            }
        }
        let numrecs = meta.record_dim().map_or(0, |d| meta.dims[d].len as u64);
        let header = header::plan(meta, numrecs, hdr_pad, path)?;
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        let mut w = Writer {
            path: path.to_string(),
            file,
            header,
            numrecs,
        };
        w.write_header()?;
        Ok(w)
    }

    fn write_header(&mut self) -> Result<()> {
        let begins: Vec<u64> = self.header.layout.iter().map(|l| l.begin).collect();
        let bytes = header::encode(
            &self.header.meta,
            &begins,
            self.numrecs,
            &self.header.layout,
        );
        self.file
            .write_all_at(&bytes, 0)
            .map_err(|e| Error::io(&self.path, e))
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
                self.file
                    .write_all_at(chunk, l.begin + r * self.header.recsize)
                    .map_err(|e| Error::io(&self.path, e))?;
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
            self.file
                .write_all_at(bytes, l.begin + first as u64 * row)
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// Write typed values (already in the variable's type) as in [`Writer::write_raw`].
    pub fn write(&mut self, var: usize, first: usize, values: &Values) -> Result<()> {
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
        let raw = encode_par(values);
        self.write_raw(var, first, &raw)
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
            copy_range(src.file(), *off, &self.file, dst, *len)
                .map_err(|e| Error::io(&self.path, e))?;
            if l.record {
                self.numrecs = self.numrecs.max(i as u64 + 1);
            }
        }
        Ok(())
    }

    /// Write the final record count and set the file length.
    pub fn finish(mut self) -> Result<()> {
        self.write_header()?;
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
        let end = end.max(h.header_len);
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
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "source too short",
            ));
        }
        done += n as u64;
    }
    Ok(())
}

fn copy_range_rw(src: &File, so: u64, dst: &File, d: u64, len: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; (len as usize).min(8 << 20)];
    let mut done = 0u64;
    while done < len {
        let n = ((len - done) as usize).min(buf.len());
        src.read_exact_at(&mut buf[..n], so + done)?;
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
