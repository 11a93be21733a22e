//! Writes through HDF5's direct chunk write: chunks cut from the caller's buffer,
//! shuffled, deflated and checksummed in parallel (rayon), then stored in order with
//! `H5Dwrite_chunk` (HDF5 1.10.2+), which bypasses HDF5's own filter pipeline and chunk
//! cache. The file's definitions (dimensions, variables, attributes, chunking and
//! filters) are made by libnetcdf beforehand; the file is then opened through libhdf5.

use std::ffi::{c_void, CString};

use hdf5_metno_sys::h5::hsize_t;
use hdf5_metno_sys::{h5d, h5p};
use rayon::prelude::*;

use crate::filters::{self, Filter};
use crate::index::{odometer, H5File, IndexBy};
use crate::layout::VarIndex;
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
        let name = v.name.clone();
        let rank = v.shape.len();
        let inner: u64 = v.shape.iter().skip(1).product();
        let rowb = inner * v.elem as u64;
        if rank == 0 || rowb == 0 {
            return Err(Error::Unsupported("direct chunk writes of scalars".into()));
        }
        if data.len() as u64 % rowb != 0 {
            return Err(Error::Request(format!(
                "{} bytes is not whole rows of {rowb}",
                data.len()
            )));
        }
        let rows = data.len() as u64 / rowb;
        let end = first + rows;
        let c0 = v.chunk[0];
        if first % c0 != 0 || (end % c0 != 0 && end < v.shape[0]) {
            return Err(Error::Request(format!(
                "rows {first}..{end} are not on chunk boundaries of {c0}"
            )));
        }
        let c = CString::new(name.as_str()).map_err(|_| Error::Request("NUL in name".into()))?;
        if end > v.shape[0] {
            let mut dims = v.shape.clone();
            dims[0] = end;
            let _g = hdf5_metno_sys::LOCK.lock();
            crate::index::quiet();
            // SAFETY: the HDF5 lock is held; the dataset id is checked and closed; `dims`
            // has the dataset's rank.
            unsafe {
                let did = h5d::H5Dopen2(self.fid, c.as_ptr(), h5p::H5P_DEFAULT);
                if did < 0 {
                    return Err(Error::Hdf5("H5Dopen2".into()));
                }
                let rc = h5d::H5Dset_extent(did, dims.as_ptr());
                h5d::H5Dclose(did);
                if rc < 0 {
                    return Err(Error::Hdf5("H5Dset_extent".into()));
                }
            }
            v.shape = dims;
        }
        let v: &VarIndex = v;
        // The chunks covering the rows, in row-major grid order.
        let grid = v.grid();
        let span: Vec<u64> = std::iter::once(rows.div_ceil(c0))
            .chain(grid[1..].iter().copied())
            .collect();
        let mut coords = Vec::new();
        let mut g = vec![0u64; rank];
        loop {
            let mut off: Vec<u64> = g.iter().zip(&v.chunk).map(|(i, c)| i * c).collect();
            off[0] += first;
            coords.push(off);
            if !odometer(&mut g, &span) {
                break;
            }
        }
        let batch = BATCH_PER_THREAD * rayon::current_num_threads();
        let level = v
            .filters
            .iter()
            .find_map(|f| match f {
                Filter::Deflate(l) => Some(*l as i32),
                _ => None,
            })
            .unwrap_or(1);
        let lvl = libdeflater::CompressionLvl::new(level)
            .map_err(|_| Error::Request(format!("deflate level {level}")))?;
        for part in coords.chunks(batch) {
            let encoded: Vec<Vec<u8>> = part
                .par_iter()
                .map_init(
                    || (libdeflater::Compressor::new(lvl), Vec::new(), Vec::new()),
                    |(z, a, b), off| encode_chunk(v, first, data, off, z, a, b),
                )
                .collect::<Result<_>>()?;
            let _g = hdf5_metno_sys::LOCK.lock();
            // SAFETY: the HDF5 lock is held; the dataset id is checked and closed; each
            // offset has the dataset's rank and each buffer the length passed.
            unsafe {
                let did = h5d::H5Dopen2(self.fid, c.as_ptr(), h5p::H5P_DEFAULT);
                if did < 0 {
                    return Err(Error::Hdf5("H5Dopen2".into()));
                }
                for (off, buf) in part.iter().zip(&encoded) {
                    let off: Vec<hsize_t> = off.clone();
                    clear_errno();
                    let rc = h5d::H5Dwrite_chunk(
                        did,
                        h5p::H5P_DEFAULT,
                        0,
                        off.as_ptr(),
                        buf.len(),
                        buf.as_ptr().cast::<c_void>(),
                    );
                    if rc < 0 {
                        let e = storage_error("H5Dwrite_chunk");
                        h5d::H5Dclose(did);
                        return Err(e);
                    }
                }
                h5d::H5Dclose(did);
            }
        }
        Ok(())
    }
}

/// Cut the chunk at `off` out of `data` (rows from `first`), pad edges with the fill
/// value, and apply the variable's filters in order.
fn encode_chunk(
    v: &VarIndex,
    first: u64,
    data: &[u8],
    off: &[u64],
    z: &mut libdeflater::Compressor,
    a: &mut Vec<u8>,
    b: &mut Vec<u8>,
) -> Result<Vec<u8>> {
    let rank = v.shape.len();
    let es = v.elem;
    let want = v.chunk_bytes();
    a.clear();
    a.reserve(want);
    for _ in 0..want / es {
        a.extend_from_slice(&v.fill);
    }
    // Copy the rows of the chunk that exist (edges stay fill).
    let ext: Vec<u64> = (0..rank)
        .map(|k| v.chunk[k].min(v.shape[k].saturating_sub(off[k])))
        .collect();
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
    if v.big_endian != cfg!(target_endian = "big") && es > 1 {
        for e in a.chunks_exact_mut(es) {
            e.reverse();
        }
    }
    for f in &v.filters {
        match f {
            Filter::Shuffle(s) => {
                b.resize(a.len(), 0);
                filters::shuffle(a, *s, b);
                std::mem::swap(a, b);
            }
            Filter::Deflate(_) => {
                filters::deflate(z, a, b)?;
                std::mem::swap(a, b);
            }
            Filter::Fletcher32 => {
                let sum = filters::fletcher32(a);
                a.extend_from_slice(&sum.to_le_bytes());
            }
        }
    }
    Ok(a.clone())
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
