//! Writes through HDF5's direct chunk write: chunks cut from the caller's buffer,
//! shuffled, deflated and checksummed in parallel (rayon), then stored in order with
//! `H5Dwrite_chunk` (HDF5 1.10.2+), which bypasses HDF5's own filter pipeline and chunk
//! cache. The file's definitions (dimensions, variables, attributes, chunking and
//! filters) are made by libnetcdf beforehand; the file is then opened through libhdf5.

use std::ffi::{c_void, CString};

use hdf5_metno_sys::h5p;
use rayon::prelude::*;

use crate::filters::{self, Filter};
use crate::index::{odometer, H5File, IndexBy};
use crate::layout::VarIndex;
use crate::syslib::h5;
use crate::{Error, Result};

/// Chunks encoded per batch and thread before the batch is written (bounds memory to
/// about this many encoded chunks per thread).
const BATCH_PER_THREAD: usize = 4;

impl H5File {
    /// Write rows `first..first + rows` of dimension 0 of dataset `name` (all of a
    /// scalar) from `data`, as [`H5File::write_rows_of`] with the dataset's storage
    /// described first.
    ///
    /// Errors: as [`H5File::write_rows_of`]; a dataset libhdf5 cannot describe.
    pub fn write_rows(&self, name: &str, first: u64, data: &[u8]) -> Result<()> {
        let mut v = self.var(name, IndexBy::None)?;
        self.write_rows_of(&mut v, first, data)
    }

    /// Write rows `first..` of dimension 0 of the dataset `v` describes (its storage as
    /// [`H5File::var`] gives it, `v.name` its path) from `data` (native byte order,
    /// row-major, whole along the other dimensions), growing the dataset along
    /// dimension 0 when it is shorter (an unlimited dimension; `v.shape` follows).
    /// `first` and the end of the rows must fall on chunk boundaries of dimension 0 (or
    /// the end of the variable): direct chunk writes store whole chunks, the parts of
    /// edge chunks past the extent padded with the fill value.
    ///
    /// Errors: a row range not on chunk boundaries, a buffer of the wrong size, HDF5
    /// failures (named).
    pub fn write_rows_of(&self, v: &mut VarIndex, first: u64, data: &[u8]) -> Result<()> {
        self.prepare_rows(v, first, data.len())?;
        let one = [RowsWrite {
            var: v,
            first,
            data,
        }];
        self.write_many(&one).map_err(|(_, e)| e)
    }

    /// Check that `bytes` bytes from row `first` are whole rows of `v` on chunk
    /// boundaries of dimension 0 (or up to the end of the variable), and grow the
    /// dataset along dimension 0 when they end past it (an unlimited dimension;
    /// `v.shape` follows): what [`H5File::write_many`] needs of each of its writes.
    ///
    /// Errors: a scalar, a row range not on chunk boundaries, a size that is not whole
    /// rows, HDF5 failures (named).
    pub fn prepare_rows(&self, v: &mut VarIndex, first: u64, bytes: usize) -> Result<()> {
        let end = check_rows(v, first, bytes)?;
        if end > v.shape[0] {
            let c = cname(&v.name)?;
            let mut dims = v.shape.clone();
            dims[0] = end;
            let _g = hdf5_metno_sys::LOCK.lock();
            crate::index::quiet();
            // SAFETY: the HDF5 lock is held; the dataset id is checked and closed; `dims`
            // has the dataset's rank.
            unsafe {
                let did = h5::H5Dopen2(self.fid, c.as_ptr(), h5p::H5P_DEFAULT);
                if did < 0 {
                    return Err(Error::Hdf5("H5Dopen2".into()));
                }
                let rc = h5::H5Dset_extent(did, dims.as_ptr());
                h5::H5Dclose(did);
                if rc < 0 {
                    return Err(Error::Hdf5("H5Dset_extent".into()));
                }
            }
            v.shape = dims;
        }
        Ok(())
    }

    /// Store several row ranges, of one dataset or of several, each checked and its
    /// dataset grown by [`H5File::prepare_rows`] first: the chunks of all of them are
    /// encoded together in parallel (so variables of one or two chunks each still keep
    /// every thread busy), in batches of a few chunks per thread, and each batch stored
    /// in order under the HDF5 lock.
    ///
    /// Errors: the index of the write that failed, with a deflate level out of range or
    /// HDF5's failure (named).
    pub fn write_many(&self, writes: &[RowsWrite]) -> std::result::Result<(), (usize, Error)> {
        let mut names = Vec::with_capacity(writes.len());
        let mut levels = Vec::with_capacity(writes.len());
        // (write, chunk offset), the chunks covering each write's rows in row-major order.
        let mut coords: Vec<(usize, Vec<u64>)> = Vec::new();
        for (w, rw) in writes.iter().enumerate() {
            let v = rw.var;
            names.push(cname(&v.name).map_err(|e| (w, e))?);
            levels.push(deflate_level(v).map_err(|e| (w, e))?);
            coords.extend(
                chunk_offsets(v, rw.first, rw.data.len())
                    .into_iter()
                    .map(|off| (w, off)),
            );
        }
        let batch = BATCH_PER_THREAD * rayon::current_num_threads();
        for part in coords.chunks(batch) {
            let encoded: Vec<Vec<u8>> = part
                .par_iter()
                .map_init(
                    || (Vec::new(), Vec::new()),
                    |(a, b), (w, off)| {
                        let rw = &writes[*w];
                        let len0 = rw.var.shape[0];
                        with_compressor(levels[*w], |z| {
                            encode_chunk(rw.var, len0, rw.first, rw.data, off, z, a, b)
                        })
                        .map(|()| encoded(a))
                        .map_err(|e| (*w, e))
                    },
                )
                .collect::<std::result::Result<_, _>>()?;
            let items = part
                .iter()
                .zip(&encoded)
                .map(|((w, off), buf)| (*w, off.as_slice(), 0, buf.as_slice()));
            self.store_chunks(&names, items)?;
        }
        Ok(())
    }
}

impl H5File {
    /// Whether the chunks of `src` can be stored into `dst` as they are (no decoding):
    /// both chunked with the same chunk shape, element, byte order and filter pipeline
    /// (levels included), the same shape but for an unlimited first dimension, and
    /// every chunk of `src` written (a chunk never written reads as the fill value,
    /// which may differ).
    pub fn can_copy_chunks(dst: &VarIndex, src: &VarIndex) -> bool {
        !dst.contiguous
            && !src.contiguous
            && dst.chunk == src.chunk
            && dst.elem == src.elem
            && dst.kind == src.kind
            && dst.big_endian == src.big_endian
            && dst.filters == src.filters
            && dst.shape.len() == src.shape.len()
            && dst.shape.get(1..) == src.shape.get(1..)
            && !src.shape.is_empty()
            && src.locs.iter().all(|l| l.allocated())
    }

    /// Store every chunk of `src` (a dataset of `file`) into `dst` as it is stored
    /// there, stored bytes and filter mask, growing `dst` along its first dimension to
    /// `src`'s length: a copy with no inflate and no deflate. [`H5File::can_copy_chunks`]
    /// must hold.
    ///
    /// Errors: a chunk past the end of `file` ([`Error::Corrupt`]), I/O and HDF5
    /// failures (named).
    pub fn copy_chunks(
        &self,
        dst: &mut VarIndex,
        src: &VarIndex,
        file: &crate::File,
    ) -> Result<()> {
        if !Self::can_copy_chunks(dst, src) {
            return Err(Error::Request(
                "chunks that cannot be copied as stored".into(),
            ));
        }
        if src.shape[0] > dst.shape[0] {
            let rowb = src.shape[1..].iter().product::<u64>() as usize * src.elem;
            self.prepare_rows(dst, 0, src.shape[0] as usize * rowb)?;
        }
        let c = cname(&dst.name)?;
        let grid = src.grid();
        let rank = grid.len();
        let file_len = file.len();
        // Batches of about 64 MiB of stored bytes: read outside the lock, stored under it.
        let mut at = 0usize;
        let mut g = vec![0u64; rank];
        while at < src.locs.len() {
            let mut end = at;
            let mut bytes = 0u64;
            while end < src.locs.len() && (end == at || bytes < 64 << 20) {
                bytes += src.locs[end].size;
                end += 1;
            }
            let mut bufs = Vec::with_capacity(end - at);
            for loc in &src.locs[at..end] {
                loc.check_within(file_len)?;
                let mut buf = vec![0u8; loc.size as usize];
                std::os::unix::fs::FileExt::read_exact_at(file.handle(), &mut buf, loc.addr)?;
                bufs.push(buf);
            }
            let offs: Vec<Vec<u64>> = (at..end)
                .map(|_| {
                    let off = g.iter().zip(&src.chunk).map(|(i, c)| i * c).collect();
                    odometer(&mut g, &grid);
                    off
                })
                .collect();
            let items = src.locs[at..end]
                .iter()
                .zip(&offs)
                .zip(&bufs)
                .map(|((loc, off), buf)| (0, off.as_slice(), loc.mask, buf.as_slice()));
            self.store_chunks(std::slice::from_ref(&c), items)
                .map_err(|(_, e)| e)?;
            at = end;
        }
        Ok(())
    }
}

impl H5File {
    /// Store encoded chunks under the HDF5 lock, in order: each item is (the index of
    /// its dataset's path in `names`, its offset, HDF5's filter mask, its stored bytes);
    /// a dataset stays open while the items of one dataset follow each other.
    ///
    /// Errors: the index of the dataset that failed, with HDF5's failure (named, with
    /// the system error of a full disk or a file-size limit).
    fn store_chunks<'a>(
        &self,
        names: &[CString],
        items: impl Iterator<Item = (usize, &'a [u64], u32, &'a [u8])>,
    ) -> std::result::Result<(), (usize, Error)> {
        let _g = hdf5_metno_sys::LOCK.lock();
        crate::index::quiet();
        // The dataset open now: (index in `names`, id).
        let mut open: Option<(usize, hdf5_metno_sys::h5i::hid_t)> = None;
        let close = |open: &mut Option<(usize, hdf5_metno_sys::h5i::hid_t)>| {
            if let Some((_, did)) = open.take() {
                // SAFETY: `did` is a dataset id this loop opened and has not closed.
                unsafe { h5::H5Dclose(did) };
            }
        };
        for (w, off, mask, buf) in items {
            if open.is_none_or(|(ow, _)| ow != w) {
                close(&mut open);
                // SAFETY: the HDF5 lock is held; the name is NUL-terminated.
                let did = unsafe { h5::H5Dopen2(self.fid, names[w].as_ptr(), h5p::H5P_DEFAULT) };
                if did < 0 {
                    return Err((w, Error::Hdf5("H5Dopen2".into())));
                }
                open = Some((w, did));
            }
            let did = open.expect("a dataset just opened").1;
            clear_errno();
            // SAFETY: the HDF5 lock is held; `did` is open; the offset has the dataset's
            // rank and the buffer the length passed.
            let rc = unsafe {
                h5::H5Dwrite_chunk(
                    did,
                    h5p::H5P_DEFAULT,
                    mask,
                    off.as_ptr(),
                    buf.len(),
                    buf.as_ptr().cast::<c_void>(),
                )
            };
            if rc < 0 {
                let e = storage_error("H5Dwrite_chunk");
                close(&mut open);
                return Err((w, e));
            }
        }
        close(&mut open);
        Ok(())
    }
}

/// One row range for [`H5File::write_many`]: rows `first..` of dimension 0 of the
/// dataset `var` describes, from `data` (native byte order, row-major, whole rows),
/// already checked and the dataset grown by [`H5File::prepare_rows`].
pub struct RowsWrite<'a> {
    /// The dataset's storage (its current shape, chunks, filters, fill value).
    pub var: &'a VarIndex,
    /// The first row along dimension 0, on a chunk boundary.
    pub first: u64,
    /// The rows' bytes.
    pub data: &'a [u8],
}

/// Check that `bytes` bytes from row `first` are whole rows of `v` starting on a
/// chunk boundary of dimension 0 and ending on one or at or past its current extent;
/// returns the row they end at.
///
/// Errors: a scalar, a size that is not whole rows, rows off the chunk boundaries.
fn check_rows(v: &VarIndex, first: u64, bytes: usize) -> Result<u64> {
    let rank = v.shape.len();
    let inner: u64 = v.shape.iter().skip(1).product();
    let rowb = inner * v.elem as u64;
    if rank == 0 || rowb == 0 {
        return Err(Error::Unsupported("direct chunk writes of scalars".into()));
    }
    if bytes as u64 % rowb != 0 {
        return Err(Error::Request(format!(
            "{bytes} bytes is not whole rows of {rowb}"
        )));
    }
    let end = first + bytes as u64 / rowb;
    let c0 = v.chunk[0];
    if first % c0 != 0 || (end % c0 != 0 && end < v.shape[0]) {
        return Err(Error::Request(format!(
            "rows {first}..{end} are not on chunk boundaries of {c0}"
        )));
    }
    Ok(end)
}

/// A dataset path as HDF5 takes it.
fn cname(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| Error::Request("NUL in name".into()))
}

/// The deflate level of `v`'s pipeline (1 when it has no deflate: unused then).
///
/// Errors: a level libdeflate does not have.
fn deflate_level(v: &VarIndex) -> Result<libdeflater::CompressionLvl> {
    let level = v
        .filters
        .iter()
        .find_map(|f| match f {
            Filter::Deflate(l) => Some(*l as i32),
            _ => None,
        })
        .unwrap_or(1);
    libdeflater::CompressionLvl::new(level)
        .map_err(|_| Error::Request(format!("deflate level {level}")))
}

/// The offsets of the chunks covering `bytes` bytes of whole rows of `v` from row
/// `first` (on a chunk boundary), in row-major order of the chunk grid.
fn chunk_offsets(v: &VarIndex, first: u64, bytes: usize) -> Vec<Vec<u64>> {
    let rank = v.shape.len();
    let rowb = v.shape.iter().skip(1).product::<u64>() * v.elem as u64;
    let rows = bytes as u64 / rowb.max(1);
    let grid = v.grid();
    let span: Vec<u64> = std::iter::once(rows.div_ceil(v.chunk[0]))
        .chain(grid[1..].iter().copied())
        .collect();
    let mut offs = Vec::new();
    if span.contains(&0) {
        return offs;
    }
    let mut g = vec![0u64; rank];
    loop {
        let mut off: Vec<u64> = g.iter().zip(&v.chunk).map(|(i, c)| i * c).collect();
        off[0] += first;
        offs.push(off);
        if !odometer(&mut g, &span) {
            break;
        }
    }
    offs
}

/// The chunks of a row range of one dataset, encoded away from the file (on the
/// thread that computed them, [`encode_rows`]) and stored later, in the writer's
/// order, with [`H5File::store_encoded`]: the values need not wait for the writer.
#[derive(Debug)]
pub struct EncodedRows {
    /// The first row along dimension 0 (on a chunk boundary).
    pub first: u64,
    /// Bytes of the rows before encoding (whole rows).
    pub bytes: usize,
    /// (offset of the chunk, its stored bytes), in row-major order of the chunk grid.
    chunks: Vec<(Vec<u64>, Vec<u8>)>,
}

thread_local! {
    /// A compressor per deflate level, kept by each thread that encodes chunks.
    static COMPRESSORS: std::cell::RefCell<Vec<(i32, libdeflater::Compressor)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `f` with the calling thread's compressor for level `lvl` (made on first use).
fn with_compressor<R>(
    lvl: libdeflater::CompressionLvl,
    f: impl FnOnce(&mut libdeflater::Compressor) -> R,
) -> R {
    COMPRESSORS.with_borrow_mut(|zs| {
        let key = i32::from(lvl);
        let at = match zs.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                zs.push((key, libdeflater::Compressor::new(lvl)));
                zs.len() - 1
            }
        };
        f(&mut zs[at].1)
    })
}

/// Encode rows `first..` of dimension 0 of the dataset `v` describes from `data`
/// (native byte order, row-major, whole rows) as [`H5File::write_many`] would, on the
/// calling thread, for [`H5File::store_encoded`]. The rows must start on a chunk
/// boundary of dimension 0 and end on one or at or past the dataset's current extent
/// (edges padded with the fill value, the extent taken as the rows' end when they
/// pass it, as [`H5File::prepare_rows`] grows it).
///
/// Errors: a scalar, rows not on chunk boundaries or not whole, a deflate level out
/// of range.
pub fn encode_rows<D: AsRef<[u8]>>(v: &VarIndex, first: u64, data: D) -> Result<EncodedRows> {
    let bytes = data.as_ref().len();
    let end = check_rows(v, first, bytes)?;
    let len0 = v.shape[0].max(end);
    let lvl = deflate_level(v)?;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let offs = chunk_offsets(v, first, bytes);
    let chunks = with_compressor(lvl, move |z| -> Result<Vec<(Vec<u64>, Vec<u8>)>> {
        let mut chunks = Vec::with_capacity(offs.len());
        if let [off] = offs.as_slice() {
            if let (Some(run), Some(f)) = (whole_run(v, len0, first, off), v.filters.first()) {
                // One chunk: its first stage reads the caller's data, which is freed
                // before the others run (the peak is two chunk buffers, not three).
                let src = &data.as_ref()[run..run + v.chunk_bytes()];
                filter_stage(f, src, z, &mut b)?;
                drop(data);
                std::mem::swap(&mut a, &mut b);
                filter_chunk(&v.filters[1..], None, z, &mut a, &mut b)?;
                a.shrink_to_fit();
                chunks.push((off.clone(), a));
                return Ok(chunks);
            }
        }
        for off in offs {
            encode_chunk(v, len0, first, data.as_ref(), &off, z, &mut a, &mut b)?;
            chunks.push((off, encoded(&mut a)));
        }
        Ok(chunks)
    })?;
    Ok(EncodedRows {
        first,
        bytes,
        chunks,
    })
}

impl H5File {
    /// Store rows encoded by [`encode_rows`] into the dataset `v` describes, growing it
    /// along dimension 0 first when they end past it ([`H5File::prepare_rows`]).
    ///
    /// Errors: as [`H5File::prepare_rows`]; HDF5 failures (named).
    pub fn store_encoded(&self, v: &mut VarIndex, rows: &EncodedRows) -> Result<()> {
        self.prepare_rows(v, rows.first, rows.bytes)?;
        let names = [cname(&v.name)?];
        let items = rows
            .chunks
            .iter()
            .map(|(off, c)| (0, off.as_slice(), 0, c.as_slice()));
        self.store_chunks(&names, items).map_err(|(_, e)| e)
    }
}

/// Cut the chunk at `off` out of `data` (rows from `first`), pad edges with the fill
/// value (the dataset taken as `len0` rows long), and apply the variable's filters in
/// order. A whole chunk of whole rows in native order is filtered straight from
/// `data` (no copy into the chunk buffer).
#[allow(clippy::too_many_arguments)]
fn encode_chunk(
    v: &VarIndex,
    len0: u64,
    first: u64,
    data: &[u8],
    off: &[u64],
    z: &mut libdeflater::Compressor,
    a: &mut Vec<u8>,
    b: &mut Vec<u8>,
) -> Result<()> {
    let rank = v.shape.len();
    let es = v.elem;
    let want = v.chunk_bytes();
    let len = |k: usize| if k == 0 { len0 } else { v.shape[k] };
    // The extent of the chunk inside the dataset; edges past it are the fill value.
    let ext: Vec<u64> = (0..rank)
        .map(|k| v.chunk[k].min(len(k).saturating_sub(off[k])))
        .collect();
    let swap = v.swaps_bytes();
    if let Some(at) = whole_run(v, len0, first, off).filter(|_| !v.filters.is_empty()) {
        let src = data
            .get(at..at + want)
            .ok_or_else(|| Error::Request("rows shorter than their chunks".into()))?;
        return filter_chunk(&v.filters, Some(src), z, a, b);
    }
    a.clear();
    if ext == v.chunk {
        // Every byte is copied over below.
        a.resize(want, 0);
    } else {
        a.reserve(want);
        for _ in 0..want / es {
            a.extend_from_slice(&v.fill);
        }
    }
    let mut cstride = vec![1u64; rank];
    let mut dstride = vec![1u64; rank];
    for k in (0..rank - 1).rev() {
        cstride[k] = cstride[k + 1] * v.chunk[k + 1];
        dstride[k] = dstride[k + 1] * v.shape[k + 1];
    }
    let run = ext[rank - 1] as usize * es;
    let outer = &ext[..rank - 1];
    let mut g = vec![0u64; rank - 1];
    if run > 0 && ext.iter().all(|&e| e > 0) {
        loop {
            let mut ci = 0u64;
            // Rows count from `first` (the data's first row) along dimension 0.
            let mut di = off[rank - 1] - if rank == 1 { first } else { 0 };
            for k in 0..rank - 1 {
                ci += g[k] * cstride[k];
                let row = off[k] + g[k] - if k == 0 { first } else { 0 };
                di += row * dstride[k];
            }
            let (ci, di) = (ci as usize * es, di as usize * es);
            a[ci..ci + run].copy_from_slice(&data[di..di + run]);
            if !odometer(&mut g, outer) {
                break;
            }
        }
    }
    if swap {
        for e in a.chunks_exact_mut(es) {
            e.reverse();
        }
    }
    filter_chunk(&v.filters, None, z, a, b)
}

/// Where the chunk at `off` starts in `data` (rows from `first`, the dataset taken as
/// `len0` rows long) when it is one run of it in the stored byte order: a whole chunk
/// (not an edge) of whole rows, native order. `None` otherwise (cut and padded).
fn whole_run(v: &VarIndex, len0: u64, first: u64, off: &[u64]) -> Option<usize> {
    let rank = v.shape.len();
    let whole = (0..rank).all(|k| {
        let len = if k == 0 { len0 } else { v.shape[k] };
        off[k] + v.chunk[k] <= len
    });
    (whole && v.chunk[1..] == v.shape[1..] && !v.swaps_bytes())
        .then(|| (off[0] - first) as usize * v.chunk_bytes() / v.chunk[0] as usize)
}

/// The encoded chunk in `a` taken out: cloned when `a` is more than twice its size
/// (the bigger buffer stays for the next chunk), else moved.
fn encoded(a: &mut Vec<u8>) -> Vec<u8> {
    if a.capacity() > 2 * a.len() {
        a.clone()
    } else {
        std::mem::take(a)
    }
}

/// Apply `filters` in order to a chunk's bytes: `src` when given, else those in `a`;
/// the encoded chunk is left in `a` (`b` is a stage buffer).
fn filter_chunk(
    filters: &[Filter],
    src: Option<&[u8]>,
    z: &mut libdeflater::Compressor,
    a: &mut Vec<u8>,
    b: &mut Vec<u8>,
) -> Result<()> {
    // Whether the chunk's bytes are in `a` (else still in `src`).
    let mut in_a = src.is_none();
    for f in filters {
        let input: &[u8] = match (in_a, src) {
            (false, Some(s)) => s,
            _ => a,
        };
        filter_stage(f, input, z, b)?;
        std::mem::swap(a, b);
        in_a = true;
    }
    if let (false, Some(s)) = (in_a, src) {
        a.clear();
        a.extend_from_slice(s);
    }
    Ok(())
}

/// One filter `f` applied to `input`, the result in `out`.
fn filter_stage(
    f: &Filter,
    input: &[u8],
    z: &mut libdeflater::Compressor,
    out: &mut Vec<u8>,
) -> Result<()> {
    match f {
        Filter::Shuffle(s) => {
            out.resize(input.len(), 0);
            filters::shuffle(input, *s, out);
        }
        Filter::Deflate(_) => filters::deflate(z, input, out)?,
        Filter::Fletcher32 => {
            let sum = filters::fletcher32(input);
            out.clear();
            out.extend_from_slice(input);
            out.extend_from_slice(&sum.to_le_bytes());
        }
    }
    Ok(())
}

/// Reset `errno`, so a failure's system error can be told from an earlier one.
fn clear_errno() {
    // SAFETY: errno is thread-local; writing it has no other effect.
    unsafe { *libc::__errno_location() = 0 };
}

/// The error of a failed HDF5 write `what`: the system's when the file system refused
/// it (no space, file too large, quota, I/O error, read-only), so the message says why;
/// HDF5's otherwise.
fn storage_error(what: &str) -> Error {
    let os = std::io::Error::last_os_error();
    match os.raw_os_error() {
        Some(libc::ENOSPC | libc::EFBIG | libc::EDQUOT | libc::EIO | libc::EROFS) => Error::Io(os),
        _ => Error::Hdf5(what.into()),
    }
}
