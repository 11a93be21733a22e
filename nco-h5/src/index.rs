//! The system libhdf5: files opened read-write for [`crate::write`], and each
//! variable's storage and chunk addresses found through libhdf5 (a cross-check of
//! [`crate::layout::describe`] in the tests and the measurements; reads do not use it).
//!
//! Every libhdf5 call here holds `hdf5_metno_sys::LOCK` (the lock the netcdf crate takes
//! for libnetcdf too: the Debian HDF5 is not thread-safe). The index is plain data
//! afterwards: reads use it with positioned reads of their own, outside the lock.
//!
//! HDF5 1.10 has no chunk iterator (`H5Dchunk_iter` is 1.14), and
//! `H5Dget_chunk_info(index)` walks the chunk index from its start on every call (a
//! whole variable costs n²/2 visits), so the index is built with
//! `H5Dget_chunk_info_by_coord`, one B-tree lookup per chunk of the chunk grid.

use std::ffi::{c_char, c_uint, c_void, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;

use hdf5_metno_sys::h5::{haddr_t, herr_t, hsize_t, HADDR_UNDEF};
use hdf5_metno_sys::h5d::H5D_layout_t;
use hdf5_metno_sys::h5i::hid_t;
use hdf5_metno_sys::{h5e, h5f, h5p, h5t};

use crate::filters::Filter;
use crate::layout::{Kind, Loc, VarIndex};
use crate::syslib::h5;
use crate::{Error, Result};

/// How to ask libhdf5 for chunk addresses (both kept for the measurements of
/// docs/netcdf4-engine.md and as a cross-check of [`crate::layout::describe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexBy {
    /// `H5Dget_chunk_info_by_coord` for each chunk of the grid (one lookup each).
    Coord,
    /// `H5Dget_chunk_info` for each index 0..n (each call walks the index from the start).
    Index,
    /// No chunk addresses (storage only, for writing).
    None,
}

/// An HDF5 file opened read-only (or read-write for [`crate::write`]) through libhdf5.
pub struct H5File {
    pub(crate) fid: hid_t,
    path: PathBuf,
}

fn check(rc: herr_t, what: &str) -> Result<()> {
    if rc < 0 {
        Err(Error::Hdf5(what.into()))
    } else {
        Ok(())
    }
}

fn check_id(id: hid_t, what: &str) -> Result<hid_t> {
    if id < 0 {
        Err(Error::Hdf5(what.into()))
    } else {
        Ok(id)
    }
}

/// Closes an HDF5 identifier when dropped (with the closing function for its kind).
struct Id(hid_t, unsafe fn(hid_t) -> herr_t);

impl Drop for Id {
    fn drop(&mut self) {
        // SAFETY: the id was returned valid by libhdf5 and is closed once, by its kind's
        // function; the caller holds the HDF5 lock (every `Id` lives inside a locked scope).
        unsafe {
            (self.1)(self.0);
        }
    }
}

/// Stop libhdf5 printing its error stack on the calling thread. The Debian libhdf5 is
/// built thread-safe, so its error reporting is set per thread: libnetcdf switches the
/// printing off on the thread that first opened a file only, and HDF5 calls made on
/// other threads (rayon workers) print "HDF5-DIAG" traces for errors libnetcdf expects
/// (absent optional attributes) unless this is called on each of them. Does nothing
/// and returns `false` while libhdf5 is not loaded ([`crate::syslib`]): there is
/// nothing to quiet, and loading it here would load it for runs that never need it.
pub fn quiet() -> bool {
    if !crate::syslib::is_loaded() {
        return false;
    }
    // SAFETY: H5Eset_auto2 on the default stack with no handler only changes this
    // thread's error-printing setting.
    unsafe {
        h5::H5Eset_auto2(h5e::H5E_DEFAULT, None, ptr::null_mut());
    }
    true
}

impl H5File {
    /// Open `path` through libhdf5, read-only or read-write.
    pub fn open(path: impl AsRef<Path>, write: bool) -> Result<H5File> {
        let path = path.as_ref();
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| Error::Request("NUL in file name".into()))?;
        crate::syslib::load().map_err(|e| Error::Unsupported(e.to_string()))?;
        let _g = hdf5_metno_sys::LOCK.lock();
        let flags = if write {
            h5f::H5F_ACC_RDWR
        } else {
            h5f::H5F_ACC_RDONLY
        };
        quiet();
        // SAFETY: the HDF5 lock is held; `c` outlives the call.
        let fid = unsafe { h5::H5Fopen(c.as_ptr(), flags, h5p::H5P_DEFAULT) };
        Ok(H5File {
            fid: check_id(fid, "H5Fopen")?,
            path: path.to_path_buf(),
        })
    }

    /// The path this file was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The storage and chunk index of dataset `name` (a netCDF variable: its name, or
    /// `group/name`).
    ///
    /// Errors: no such dataset; compact or virtual storage, or a type other than an
    /// integer or float ([`Error::Unsupported`]); a filter we do not decode
    /// ([`Error::UnsupportedFilter`]).
    pub fn var(&self, name: &str, by: IndexBy) -> Result<VarIndex> {
        let c = CString::new(name).map_err(|_| Error::Request("NUL in variable name".into()))?;
        let _g = hdf5_metno_sys::LOCK.lock();
        quiet();
        // SAFETY (this whole block): the HDF5 lock is held; every id is checked before
        // use and closed by its guard; every out-pointer points to a live local of the
        // type libhdf5 writes; buffers passed with a length are at least that long.
        unsafe {
            let did = Id(
                check_id(
                    h5::H5Dopen2(self.fid, c.as_ptr(), h5p::H5P_DEFAULT),
                    "H5Dopen2",
                )?,
                h5::H5Dclose,
            );
            let tid = Id(
                check_id(h5::H5Dget_type(did.0), "H5Dget_type")?,
                h5::H5Tclose,
            );
            let class = h5::H5Tget_class(tid.0);
            // netCDF's NC_CHAR is a fixed-length HDF5 string of one byte.
            let char1 = class == h5t::H5T_class_t::H5T_STRING
                && h5::H5Tis_variable_str(tid.0) == 0
                && h5::H5Tget_size(tid.0) == 1;
            if class != h5t::H5T_class_t::H5T_INTEGER
                && class != h5t::H5T_class_t::H5T_FLOAT
                && !char1
            {
                return Err(Error::Unsupported(format!("HDF5 type class {class:?}")));
            }
            let elem = h5::H5Tget_size(tid.0);
            let big_endian = !char1 && h5::H5Tget_order(tid.0) == h5t::H5T_order_t::H5T_ORDER_BE;
            let sid = Id(
                check_id(h5::H5Dget_space(did.0), "H5Dget_space")?,
                h5::H5Sclose,
            );
            let rank = h5::H5Sget_simple_extent_ndims(sid.0);
            check(rank, "H5Sget_simple_extent_ndims")?;
            let mut shape = vec![0 as hsize_t; rank as usize];
            check(
                h5::H5Sget_simple_extent_dims(sid.0, shape.as_mut_ptr(), ptr::null_mut()),
                "H5Sget_simple_extent_dims",
            )?;
            let dcpl = Id(
                check_id(h5::H5Dget_create_plist(did.0), "H5Dget_create_plist")?,
                h5::H5Pclose,
            );
            let mut fill = vec![0u8; elem];
            // No fill value defined leaves zeros, HDF5's default fill. Strings have no
            // native type: their fill is read in the stored type.
            if char1 {
                h5::H5Pget_fill_value(dcpl.0, tid.0, fill.as_mut_ptr().cast::<c_void>());
            } else {
                let ntid = Id(
                    check_id(
                        h5::H5Tget_native_type(tid.0, h5t::H5T_direction_t::H5T_DIR_DEFAULT),
                        "H5Tget_native_type",
                    )?,
                    h5::H5Tclose,
                );
                h5::H5Pget_fill_value(dcpl.0, ntid.0, fill.as_mut_ptr().cast::<c_void>());
            }
            let layout = h5::H5Pget_layout(dcpl.0);
            let kind = if char1 {
                Kind::Char
            } else if class == h5t::H5T_class_t::H5T_FLOAT {
                Kind::Float
            } else {
                Kind::Int {
                    signed: h5::H5Tget_sign(tid.0) == h5t::H5T_sign_t::H5T_SGN_2,
                }
            };
            let mut v = VarIndex::new(name, shape.clone(), elem, kind, big_endian, fill);
            match layout {
                H5D_layout_t::H5D_CONTIGUOUS => {
                    v.contiguous = true;
                    let addr = h5::H5Dget_offset(did.0);
                    let n: u64 = shape.iter().product();
                    v.locs.push(Loc {
                        addr: if addr == HADDR_UNDEF { u64::MAX } else { addr },
                        size: n * elem as u64,
                        mask: 0,
                    });
                }
                H5D_layout_t::H5D_CHUNKED => {
                    let mut chunk = vec![0 as hsize_t; rank as usize];
                    check(
                        h5::H5Pget_chunk(dcpl.0, rank, chunk.as_mut_ptr()),
                        "H5Pget_chunk",
                    )?;
                    v.chunk = chunk;
                    v.filters = filters_of(dcpl.0, elem)?;
                    if by != IndexBy::None {
                        v.locs = chunk_locs(did.0, &v, by)?;
                    }
                }
                other => return Err(Error::Unsupported(format!("HDF5 layout {other:?}"))),
            }
            Ok(v)
        }
    }
}

impl Drop for H5File {
    fn drop(&mut self) {
        let _g = hdf5_metno_sys::LOCK.lock();
        // SAFETY: the lock is held; `fid` is the valid file id opened by `open`, closed once.
        unsafe {
            h5::H5Fclose(self.fid);
        }
    }
}

/// The filter pipeline of a dataset creation property list.
///
/// # Safety
/// The HDF5 lock is held and `dcpl` is a valid creation property list.
unsafe fn filters_of(dcpl: hid_t, elem: usize) -> Result<Vec<Filter>> {
    // SAFETY: as the function's contract; the buffers are as long as the lengths given.
    unsafe {
        let n = h5::H5Pget_nfilters(dcpl);
        check(n, "H5Pget_nfilters")?;
        let mut out = Vec::new();
        for k in 0..n as c_uint {
            let mut flags: c_uint = 0;
            let mut ncd: usize = 8;
            let mut cd = [0 as c_uint; 8];
            let mut name = [0 as c_char; 64];
            let mut config: c_uint = 0;
            let id = h5::H5Pget_filter2(
                dcpl,
                k,
                &mut flags,
                &mut ncd,
                cd.as_mut_ptr(),
                name.len(),
                name.as_mut_ptr(),
                &mut config,
            );
            check(id, "H5Pget_filter2")?;
            let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy();
            out.push(Filter::from_hdf5(id, &cd[..ncd.min(8)], elem, &name)?);
        }
        Ok(out)
    }
}

/// Every chunk's location, in row-major order of the chunk grid.
///
/// # Safety
/// The HDF5 lock is held and `did` is a valid chunked dataset whose shape and chunk
/// shape are `v.shape` and `v.chunk`.
unsafe fn chunk_locs(did: hid_t, v: &VarIndex, by: IndexBy) -> Result<Vec<Loc>> {
    let grid = v.grid();
    let total: u64 = grid.iter().product();
    let mut locs = vec![Loc::UNALLOCATED; total as usize];
    if total == 0 {
        return Ok(locs);
    }
    let rank = grid.len();
    // SAFETY: as the function's contract; out-pointers are live locals, `off` has `rank`
    // elements as libhdf5 reads and writes for this dataset.
    unsafe {
        match by {
            IndexBy::Coord => {
                let mut g = vec![0u64; rank];
                for loc in locs.iter_mut() {
                    let off: Vec<hsize_t> = g.iter().zip(&v.chunk).map(|(i, c)| i * c).collect();
                    let (mut mask, mut addr, mut size): (c_uint, haddr_t, hsize_t) = (0, 0, 0);
                    let rc = h5::H5Dget_chunk_info_by_coord(
                        did,
                        off.as_ptr(),
                        &mut mask,
                        &mut addr,
                        &mut size,
                    );
                    check(rc, "H5Dget_chunk_info_by_coord")?;
                    if addr != HADDR_UNDEF {
                        *loc = Loc { addr, size, mask };
                    }
                    odometer(&mut g, &grid);
                }
            }
            IndexBy::None => {}
            IndexBy::Index => {
                let mut n: hsize_t = 0;
                let sid = Id(
                    check_id(h5::H5Dget_space(did), "H5Dget_space")?,
                    h5::H5Sclose,
                );
                check(
                    h5::H5Dget_num_chunks(did, sid.0, &mut n),
                    "H5Dget_num_chunks",
                )?;
                let mut off = vec![0 as hsize_t; rank];
                for i in 0..n {
                    let (mut mask, mut addr, mut size): (c_uint, haddr_t, hsize_t) = (0, 0, 0);
                    let rc = h5::H5Dget_chunk_info(
                        did,
                        sid.0,
                        i,
                        off.as_mut_ptr(),
                        &mut mask,
                        &mut addr,
                        &mut size,
                    );
                    check(rc, "H5Dget_chunk_info")?;
                    let mut lin = 0u64;
                    for k in 0..rank {
                        lin = lin * grid[k] + off[k] / v.chunk[k];
                    }
                    if let Some(l) = locs.get_mut(lin as usize) {
                        *l = Loc { addr, size, mask };
                    }
                }
            }
        }
    }
    Ok(locs)
}

/// Advance a multi-index within `lens`; false when it wrapped to zeros.
pub(crate) fn odometer(idx: &mut [u64], lens: &[u64]) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < lens[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}
