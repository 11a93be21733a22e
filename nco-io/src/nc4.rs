//! The libnetcdf backend (the C library through `netcdf-sys`): netCDF-4/HDF5 files with
//! their groups, every atomic type (NC_STRING included) and their storage (chunks,
//! deflate, shuffle), DAP URLs, and classic files when our own reader or writer is
//! switched off (`--no-mmap`, `NCO_RS_NO_MMAP=1`, `NCO_RS_LIB_WRITE=1`).
//!
//! Every libnetcdf call here holds the library's process-wide (re-entrant) lock, which
//! HDF5 needs: libnetcdf is not thread-safe.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use nco_h5::syslib::nc;
use netcdf_sys as sys;

use crate::error::{Error, Result};
use crate::model::{Attr, Dim, Format, Meta, Storage, Var};
use crate::types::{NcNum, NcType, Values};

/// A libnetcdf status code, displayed as `nc_strerror` words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NcStatus(pub i32);

impl fmt::Display for NcStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: nc_strerror returns a pointer to a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(nc::nc_strerror(self.0)) };
        write!(f, "{} (netCDF error {})", text.to_string_lossy(), self.0)
    }
}

impl std::error::Error for NcStatus {}

type Nc<T> = std::result::Result<T, NcStatus>;

fn check(rc: c_int) -> Nc<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(NcStatus(rc))
    }
}

/// Run `f` with the process's standard error (file descriptor 2) sent to a temporary
/// file, and return what was written there. libnetcdf's DAP2 client prints its curl
/// and parser messages there itself (several lines for an unreachable server or a 404
/// before the error code comes back); a failed URL open is one line of ours instead,
/// with curl's reason in it ([`with_dap_detail`]). Called with the library lock held;
/// when the temporary file cannot be made, `f` runs with standard error as it is.
fn captured_stderr<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;
    let Ok(mut tmp) = tempfile::tempfile() else {
        return (f(), String::new());
    };
    // SAFETY: dup and dup2 on descriptors this process owns; 2 is restored before
    // returning and the copy closed.
    let saved = unsafe { libc::dup(2) };
    if saved < 0 {
        return (f(), String::new());
    }
    // SAFETY: as above.
    if unsafe { libc::dup2(tmp.as_raw_fd(), 2) } < 0 {
        unsafe { libc::close(saved) };
        return (f(), String::new());
    }
    REAL_STDERR.store(saved, std::sync::atomic::Ordering::SeqCst);
    let out = f();
    REAL_STDERR.store(-1, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: as above.
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    let mut said = String::new();
    if tmp.rewind().is_ok() {
        let _ = tmp.read_to_string(&mut said);
    }
    (out, said)
}

/// The real standard error while [`captured_stderr`] has descriptor 2 elsewhere (-1
/// otherwise): where the DAP watchdog writes.
static REAL_STDERR: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// The libnetcdf call on a DAP URL in progress: its URL and when it must be done by.
static DAP_CALL: Mutex<Option<(String, std::time::Instant, u64)>> = Mutex::new(None);

/// Run `f`, one libnetcdf call (or a few) on the DAP URL `url`, with a time limit
/// ([`crate::dataset::IoConfig::dap_timeout_s`]): libnetcdf's DAP2 client waits for a
/// server that accepts and never answers as long as it takes (NCO 5.1.4 hangs). Past the
/// limit a watchdog thread prints one line naming the URL, removes this process's
/// temporary outputs and exits with status 1. Called with the library lock held (one
/// call at a time).
fn dap_call<T>(url: &str, f: impl FnOnce() -> T) -> T {
    let limit = crate::dataset::io_config()
        .dap_timeout_s
        .unwrap_or(crate::dataset::DEFAULT_DAP_TIMEOUT_S);
    if limit == 0 {
        return f();
    }
    static WATCHDOG: std::sync::Once = std::sync::Once::new();
    WATCHDOG.call_once(|| {
        std::thread::spawn(|| loop {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let late = DAP_CALL
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .as_ref()
                .filter(|(_, by, _)| std::time::Instant::now() > *by)
                .map(|(url, _, limit)| (url.clone(), *limit));
            if let Some((url, limit)) = late {
                dap_timed_out(&url, limit);
            }
        });
    });
    let by = std::time::Instant::now() + std::time::Duration::from_secs(limit);
    *DAP_CALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((url.to_string(), by, limit));
    let out = f();
    *DAP_CALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    out
}

/// The end of a DAP call past its limit: one line on the real standard error, no
/// temporary output left, exit status 1.
fn dap_timed_out(url: &str, limit: u64) -> ! {
    let prog = std::env::args_os()
        .next()
        .map(PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "nco-rs".into());
    let line = format!(
        "{prog}: ERROR {url}: no answer from the DAP server within {limit} s (NCO_RS_DAP_TIMEOUT sets the limit in seconds, 0 for none)\n"
    );
    let fd = REAL_STDERR.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: writing a buffer to a descriptor this process owns (the real standard
    // error, or 2), then exiting without running destructors: the main thread is inside
    // libnetcdf and holds its lock.
    unsafe {
        libc::write(
            if fd >= 0 { fd } else { 2 },
            line.as_ptr().cast(),
            line.len(),
        );
        crate::output::remove_temporaries();
        libc::_exit(1)
    }
}

/// `e` with the reason libnetcdf's DAP2 client printed (`said`, its `Error:` lines,
/// e.g. "curl error: Couldn't connect to server"), when there is one.
fn with_dap_detail(e: Error, said: &str) -> Error {
    let reasons = dap_reasons(said);
    if reasons.is_empty() {
        return e;
    }
    Error::msg(format!("{e}: {}", reasons.join("; ")))
}

/// The reasons in the `Error:` lines libnetcdf's DAP2 client printed.
fn dap_reasons(said: &str) -> Vec<&str> {
    said.lines()
        .filter_map(|l| l.split_once("Error:").map(|(_, r)| r))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// A DAP call that libnetcdf reported as a success after its DAP2 client printed an
/// error: seen when a server closes the connection in the middle of a data answer
/// sent without a length ("DAP DATADDS packet is apparently too short"), the values
/// then being zeros where the answer stopped. NCO 5.1.4 takes them and exits 0.
#[derive(Debug)]
struct IncompleteAnswer(String);

impl fmt::Display for IncompleteAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the DAP server's answer was incomplete ({}), values refused",
            self.0
        )
    }
}

impl std::error::Error for IncompleteAnswer {}

/// One libnetcdf call (or a few) on the DAP URL `url` (for variable `var`, when it
/// reads one), as every such call runs: under its time limit ([`dap_call`]), with
/// libnetcdf's own messages held back ([`captured_stderr`]) and their reason added to a
/// failure ([`with_dap_detail`]). A call that succeeds although the DAP client printed
/// an error fails with [`IncompleteAnswer`]: never values made of a broken answer.
fn on_url<T>(url: &str, var: Option<&str>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let (out, said) = dap_call(url, || captured_stderr(f));
    let out = out.map_err(|e| with_dap_detail(e, &said))?;
    let reasons = dap_reasons(&said);
    if reasons.is_empty() {
        Ok(out)
    } else {
        Err(Error::netcdf(
            url,
            var,
            IncompleteAnswer(reasons.join("; ")),
        ))
    }
}

/// The library lock (re-entrant: a function holding it may call another that takes it).
/// HDF5's error printing is switched off on the calling thread first ([`quiet_hdf5`]).
fn lock() -> impl Drop {
    quiet_hdf5();
    sys::libnetcdf_lock.lock()
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Switch libhdf5's error printing off on the calling thread, once per thread, before
/// it calls libnetcdf. The system libhdf5 is built thread-safe, so that setting is per
/// thread, and libnetcdf switches it off only on the thread that first opens a file:
/// an error on any other thread (a rayon worker reading a damaged chunk, an absent
/// attribute libnetcdf probes for) printed an `HDF5-DIAG` trace of a dozen lines
/// before our one-line error.
pub fn quiet_hdf5() {
    QUIET.with(|q| {
        if !q.get() && nco_h5::index::quiet() {
            q.set(true);
        }
    });
}

/// Load libnetcdf before the first call into it ([`nco_h5::syslib`]: it is not linked,
/// so a run on classic files never loads it).
///
/// Errors: the library does not load; the message names `path`, the file that needs it.
fn load_library(path: &str) -> Result<()> {
    nco_h5::syslib::load().map_err(|e| Error::msg(format!("{path}: {e}")))
}

fn c_name(path: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::msg(format!("{path}: NUL in name {s:?}")))
}

/// The file name as libnetcdf takes it: the exact bytes of `file` (a name that is not
/// UTF-8 is opened as it is).
fn c_path(file: &Path) -> Result<CString> {
    CString::new(file.as_os_str().as_bytes())
        .map_err(|_| Error::msg(format!("{}: NUL in file name", file.display())))
}

/// A name buffer for the `nc_inq_*name` calls.
fn name_buf() -> [c_char; sys::NC_MAX_NAME as usize + 1] {
    [0; sys::NC_MAX_NAME as usize + 1]
}

fn from_buf(b: &[c_char]) -> String {
    // SAFETY: libnetcdf NUL-terminates names within NC_MAX_NAME + 1 bytes, and the
    // buffer was zeroed first.
    unsafe { CStr::from_ptr(b.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Raw pointer to the elements of a numeric or character buffer (strings are handled
/// apart by every caller).
fn data_ptr(v: &Values) -> *const c_void {
    crate::dispatch!(v, x => x.as_ptr().cast(); char c => c.as_ptr().cast();
        string s => s.as_ptr().cast())
}

fn data_ptr_mut(v: &mut Values) -> *mut c_void {
    crate::dispatch!(v, x => x.as_mut_ptr().cast(); char c => c.as_mut_ptr().cast();
        string s => s.as_mut_ptr().cast())
}

/// Strings read as C pointers, copied out and handed back to libnetcdf.
///
/// # Safety
/// `ptrs` must hold pointers returned by libnetcdf for strings (or null), and the
/// library lock must be held.
unsafe fn take_strings(mut ptrs: Vec<*mut c_char>) -> Vec<String> {
    let out = ptrs
        .iter()
        .map(|&p| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: a non-null string from libnetcdf is NUL-terminated.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        })
        .collect();
    // SAFETY: the pointers came from libnetcdf (caller's contract).
    unsafe { nc::nc_free_string(ptrs.len(), ptrs.as_mut_ptr()) };
    out
}

/// C strings for a string buffer (NULs inside a string end it, as C would see it).
fn c_strings(s: &[String]) -> Vec<CString> {
    s.iter()
        .map(|x| {
            let end = x.find('\0').unwrap_or(x.len());
            CString::new(&x[..end]).unwrap_or_default()
        })
        .collect()
}

/// Read attribute `name` of `varid` (NC_GLOBAL for a group's own).
///
/// # Safety
/// The library lock must be held and `ncid` be an open group.
unsafe fn get_att(ncid: c_int, varid: c_int, name: &CStr) -> Nc<Values> {
    let mut xtype = 0;
    let mut len = 0usize;
    // SAFETY: valid ids and out-pointers (caller's contract).
    check(unsafe { nc::nc_inq_att(ncid, varid, name.as_ptr(), &mut xtype, &mut len) })?;
    let ty = NcType::from_code(xtype).ok_or(NcStatus(sys::NC_EBADTYPE))?;
    if ty == NcType::Str {
        let mut ptrs = vec![std::ptr::null_mut(); len];
        // SAFETY: room for `len` string pointers.
        check(unsafe { nc::nc_get_att_string(ncid, varid, name.as_ptr(), ptrs.as_mut_ptr()) })?;
        // SAFETY: the pointers were just filled by libnetcdf.
        return Ok(Values::Str(unsafe { take_strings(ptrs) }));
    }
    let mut v = Values::zeros(ty, len);
    if len > 0 {
        // SAFETY: `v` holds `len` elements of the attribute's own type.
        check(unsafe { nc::nc_get_att(ncid, varid, name.as_ptr(), data_ptr_mut(&mut v)) })?;
    }
    Ok(v)
}

/// All attributes of `varid` in file order.
///
/// # Safety
/// As [`get_att`].
unsafe fn get_atts(ncid: c_int, varid: c_int, natts: c_int) -> Nc<Vec<Attr>> {
    let mut out = Vec::with_capacity(natts.max(0) as usize);
    for i in 0..natts {
        let mut b = name_buf();
        // SAFETY: the buffer holds NC_MAX_NAME + 1 bytes.
        check(unsafe { nc::nc_inq_attname(ncid, varid, i, b.as_mut_ptr()) })?;
        let name = from_buf(&b);
        // SAFETY: the name was NUL-terminated by libnetcdf.
        let value = unsafe { get_att(ncid, varid, CStr::from_ptr(b.as_ptr())) }?;
        out.push(Attr { name, value });
    }
    Ok(out)
}

/// Write attribute `name` (of type `value`'s, converted to `as_type` when given).
///
/// # Safety
/// The library lock must be held and `ncid` be a group in define mode.
unsafe fn put_att(ncid: c_int, varid: c_int, name: &CStr, value: &Values) -> Nc<()> {
    match value {
        Values::Char(c) => {
            // SAFETY: `c` holds `c.len()` bytes.
            check(unsafe {
                nc::nc_put_att_text(ncid, varid, name.as_ptr(), c.len(), c.as_ptr().cast())
            })
        }
        Values::Str(s) => {
            let cs = c_strings(s);
            let mut ptrs: Vec<*const c_char> = cs.iter().map(|c| c.as_ptr()).collect();
            // SAFETY: `ptrs` holds `s.len()` NUL-terminated strings alive for the call.
            check(unsafe {
                nc::nc_put_att_string(ncid, varid, name.as_ptr(), ptrs.len(), ptrs.as_mut_ptr())
            })
        }
        v => {
            let ty = v.nc_type().code();
            // SAFETY: `v` holds `v.len()` elements of type `ty`.
            check(unsafe { nc::nc_put_att(ncid, varid, name.as_ptr(), ty, v.len(), data_ptr(v)) })
        }
    }
}

fn format_of(code: c_int) -> Format {
    match code {
        sys::NC_FORMAT_CLASSIC => Format::Classic,
        sys::NC_FORMAT_64BIT_OFFSET => Format::Offset64,
        sys::NC_FORMAT_CDF5 => Format::Cdf5,
        sys::NC_FORMAT_NETCDF4_CLASSIC => Format::Netcdf4Classic,
        _ => Format::Netcdf4,
    }
}

/// Ask libnetcdf for the on-disk format of `path` (`nc_inq_format`).
pub fn inquire_format(path: &Path) -> Result<Format> {
    let r = LibReader::open(path)?;
    Ok(r.meta.format)
}

/// A file opened through libnetcdf for reading. The handle may be closed once the
/// metadata is read ([`LibReader::close_handle`]: the chunk engine reads the data) and
/// is opened again when a read needs it.
pub struct LibReader {
    /// The name in messages.
    path: String,
    /// The file as opened (its exact bytes).
    file: PathBuf,
    handle: Mutex<Option<Handle>>,
    meta: Meta,
    /// (group index into `meta.groups`, variable id) of each variable of `meta`.
    loc: Vec<(usize, c_int)>,
    /// A netCDF3 file's own descriptor and its length when opened: libnetcdf reads the
    /// missing part of a netCDF3 file that shrank while open as fill values, silently,
    /// so every read checks the length after the fact.
    shrink_guard: Option<(std::fs::File, u64)>,
    /// `file` is a DAP URL: reads go through [`on_url`].
    remote: bool,
    /// A DAP URL's blocks read ahead ([`LibReader::read_from_blocks`]; not
    /// [`crate::dataset::ReadAhead`], which holds exact selections of the list mode).
    ahead: Box<Mutex<Vec<DapBlock>>>,
}

/// The most bytes one read-ahead from a DAP URL asks for.
const READ_AHEAD_BYTES: usize = 16 << 20;

/// The most bytes of a bounding box read from a DAP URL in one request for a
/// selection of several runs (a reversal, multi-slabs) that would otherwise be one
/// request per combination of runs.
const BOUNDING_BOX_BYTES: usize = 256 << 20;

/// The most bytes of read-ahead blocks a DAP reader keeps (the oldest go first).
const READ_AHEAD_KEPT: usize = 2 * READ_AHEAD_BYTES;

/// A block of one variable read from a DAP URL in one request: of variable `var`, the
/// indices `first..first + records` of its first dimension (records, or rows), and
/// along each other dimension `k` the indices `bounds[k].0..=bounds[k].1`, row-major
/// in `values`.
struct DapBlock {
    var: usize,
    first: usize,
    records: usize,
    bounds: Vec<(usize, usize)>,
    values: Values,
}

/// An open libnetcdf file: its id and the id of each group of the metadata.
struct Handle {
    ncid: c_int,
    gids: Vec<c_int>,
}

impl Handle {
    /// Close the file.
    fn close(self) {
        let _g = lock();
        // SAFETY: the file is open; the handle is consumed.
        unsafe { nc::nc_close(self.ncid) };
    }
}

impl Drop for LibReader {
    fn drop(&mut self) {
        self.close_handle();
    }
}

/// Walks a file's groups into a [`Meta`].
struct Walk {
    meta: Meta,
    loc: Vec<(usize, c_int)>,
    /// libnetcdf id of each group of `meta`.
    gids: Vec<c_int>,
    /// libnetcdf dimension id -> index into `meta.dims`.
    dim_of: std::collections::HashMap<c_int, usize>,
}

impl Walk {
    /// Read group `gid` (already `meta.groups[g]`) and its subgroups.
    ///
    /// # Safety
    /// The library lock must be held and `gid` be an open group.
    unsafe fn group(&mut self, gid: c_int, g: usize, path: &str) -> Result<()> {
        let ne = |rc: NcStatus| Error::netcdf(path, None, rc);
        let nc4 = self.meta.format.is_netcdf4();
        let (dimids, unlim, varids, natts) = if nc4 {
            let mut n = 0;
            // SAFETY: valid group id; the first call counts, the second fills.
            check(unsafe { nc::nc_inq_dimids(gid, &mut n, std::ptr::null_mut(), 0) })
                .map_err(ne)?;
            let mut dimids = vec![0; n as usize];
            check(unsafe { nc::nc_inq_dimids(gid, &mut n, dimids.as_mut_ptr(), 0) }).map_err(ne)?;
            let mut nu = 0;
            check(unsafe { nc::nc_inq_unlimdims(gid, &mut nu, std::ptr::null_mut()) })
                .map_err(ne)?;
            let mut unlim = vec![0; nu as usize];
            check(unsafe { nc::nc_inq_unlimdims(gid, &mut nu, unlim.as_mut_ptr()) }).map_err(ne)?;
            let mut nv = 0;
            check(unsafe { nc::nc_inq_varids(gid, &mut nv, std::ptr::null_mut()) }).map_err(ne)?;
            let mut varids = vec![0; nv as usize];
            check(unsafe { nc::nc_inq_varids(gid, &mut nv, varids.as_mut_ptr()) }).map_err(ne)?;
            let mut na = 0;
            check(unsafe { nc::nc_inq_natts(gid, &mut na) }).map_err(ne)?;
            (dimids, unlim, varids, na)
        } else {
            let (mut nd, mut nv, mut na, mut ul) = (0, 0, 0, -1);
            // SAFETY: valid file id and out-pointers.
            check(unsafe { nc::nc_inq(gid, &mut nd, &mut nv, &mut na, &mut ul) }).map_err(ne)?;
            let unlim = if ul >= 0 { vec![ul] } else { Vec::new() };
            ((0..nd).collect(), unlim, (0..nv).collect(), na)
        };
        for &id in &dimids {
            let mut b = name_buf();
            let mut len = 0usize;
            // SAFETY: the buffer holds NC_MAX_NAME + 1 bytes.
            check(unsafe { nc::nc_inq_dim(gid, id, b.as_mut_ptr(), &mut len) }).map_err(ne)?;
            self.dim_of.insert(id, self.meta.dims.len());
            self.meta.dims.push(Dim {
                name: from_buf(&b),
                len,
                unlimited: unlim.contains(&id),
                group: g,
            });
        }
        // SAFETY: valid group id (lock held by the caller).
        let attrs = unsafe { get_atts(gid, sys::NC_GLOBAL, natts) }.map_err(ne)?;
        *self.meta.group_attrs_mut(g) = attrs;
        for &vid in &varids {
            // SAFETY: as for this function.
            unsafe { self.var(gid, vid, g, path, nc4) }?;
        }
        if nc4 {
            let mut n = 0;
            // SAFETY: the first call counts, the second fills.
            check(unsafe { nc::nc_inq_grps(gid, &mut n, std::ptr::null_mut()) }).map_err(ne)?;
            let mut subs = vec![0; n as usize];
            check(unsafe { nc::nc_inq_grps(gid, &mut n, subs.as_mut_ptr()) }).map_err(ne)?;
            for sub in subs {
                let mut b = name_buf();
                // SAFETY: the buffer holds NC_MAX_NAME + 1 bytes.
                check(unsafe { nc::nc_inq_grpname(sub, b.as_mut_ptr()) }).map_err(ne)?;
                self.meta.groups.push(crate::model::Group {
                    name: from_buf(&b),
                    parent: Some(g),
                    attrs: Vec::new(),
                });
                let sg = self.meta.groups.len() - 1;
                self.gids.push(sub);
                // SAFETY: `sub` is an open group of this file.
                unsafe { self.group(sub, sg, path) }?;
            }
        }
        Ok(())
    }

    /// Read variable `vid` of group `gid`.
    ///
    /// # Safety
    /// As [`Walk::group`].
    unsafe fn var(
        &mut self,
        gid: c_int,
        vid: c_int,
        g: usize,
        path: &str,
        nc4: bool,
    ) -> Result<()> {
        let mut b = name_buf();
        let (mut xtype, mut ndims, mut natts) = (0, 0, 0);
        // SAFETY: a first call for the rank, then one with room for the dimension ids.
        check(unsafe {
            nc::nc_inq_var(
                gid,
                vid,
                b.as_mut_ptr(),
                &mut xtype,
                &mut ndims,
                std::ptr::null_mut(),
                &mut natts,
            )
        })
        .map_err(|e| Error::netcdf(path, None, e))?;
        let name = from_buf(&b);
        let ve = |rc: NcStatus| Error::netcdf(path, Some(&name), rc);
        let mut dimids = vec![0; ndims as usize];
        check(unsafe { nc::nc_inq_vardimid(gid, vid, dimids.as_mut_ptr()) }).map_err(ve)?;
        let ty = NcType::from_code(xtype).ok_or_else(|| {
            Error::var(
                &name,
                format!(
                    "{path}: user-defined types (compound, enum, vlen, opaque) are not supported"
                ),
            )
        })?;
        let dims = dimids
            .iter()
            .map(|id| {
                self.dim_of.get(id).copied().ok_or_else(|| {
                    Error::var(
                        &name,
                        format!("{path}: a dimension outside this variable's scope"),
                    )
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        // SAFETY: valid ids (lock held by the caller).
        let attrs = unsafe { get_atts(gid, vid, natts) }.map_err(ve)?;
        let mut storage = Storage::default();
        if nc4 && ndims > 0 {
            let mut kind = 0;
            let mut sizes = vec![0usize; ndims as usize];
            // SAFETY: room for one chunk size per dimension.
            check(unsafe { nc::nc_inq_var_chunking(gid, vid, &mut kind, sizes.as_mut_ptr()) })
                .map_err(ve)?;
            if kind == sys::NC_CHUNKED {
                storage.chunks = Some(sizes);
            }
            let (mut shuffle, mut deflate, mut level) = (0, 0, 0);
            // SAFETY: valid ids and out-pointers.
            check(unsafe {
                nc::nc_inq_var_deflate(gid, vid, &mut shuffle, &mut deflate, &mut level)
            })
            .map_err(ve)?;
            storage.shuffle = shuffle != 0;
            storage.deflate = (deflate != 0).then_some(level);
            let mut fletcher32 = 0;
            // SAFETY: valid ids and out-pointer.
            check(unsafe { nc::nc_inq_var_fletcher32(gid, vid, &mut fletcher32) }).map_err(ve)?;
            storage.fletcher32 = fletcher32 != 0;
        }
        self.meta.vars.push(Var {
            name,
            ty,
            dims,
            attrs,
            storage,
            group: g,
        });
        self.loc.push((g, vid));
        Ok(())
    }
}

impl LibReader {
    /// Open `path` (a file or a DAP URL) and read the metadata of all its groups.
    ///
    /// Errors: a file libnetcdf cannot open, or with user-defined types (named).
    pub fn open(file: &Path) -> Result<LibReader> {
        // The name in messages (libnetcdf takes `file`'s bytes as they are).
        let path = &file.display().to_string();
        let c = c_path(file)?;
        load_library(path)?;
        let _g = lock();
        let mut ncid = 0;
        // SAFETY: the lock is held; `c` outlives the call.
        let mut open = || {
            check(unsafe { nc::nc_open(c.as_ptr(), sys::NC_NOWRITE, &mut ncid) })
                .map_err(|e| Error::netcdf(path, None, e))
        };
        let remote = crate::dataset::is_url(file);
        if remote {
            on_url(path, None, open)?;
        } else {
            open()?;
        }
        // From here on the reader owns the handle and closes it when dropped.
        let mut reader = LibReader {
            path: path.to_string(),
            file: file.to_path_buf(),
            handle: Mutex::new(Some(Handle {
                ncid,
                gids: vec![ncid],
            })),
            meta: Meta::new(Format::Classic),
            loc: Vec::new(),
            shrink_guard: None,
            remote,
            ahead: Box::default(),
        };
        let mut fmt = 0;
        // SAFETY: the file is open.
        check(unsafe { nc::nc_inq_format(ncid, &mut fmt) })
            .map_err(|e| Error::netcdf(path, None, e))?;
        let mut walk = Walk {
            meta: Meta::new(format_of(fmt)),
            loc: Vec::new(),
            gids: vec![ncid],
            dim_of: Default::default(),
        };
        // SAFETY: the lock is held; `ncid` is the open root group.
        unsafe { walk.group(ncid, 0, path) }?;
        reader.meta = walk.meta;
        reader.loc = walk.loc;
        if let Some(h) = reader.handle.get_mut().ok().and_then(|h| h.as_mut()) {
            h.gids = walk.gids;
        }
        if !reader.meta.format.is_netcdf4() {
            reader.shrink_guard = std::fs::File::open(file)
                .and_then(|f| Ok((f.metadata()?.len(), f)))
                .ok()
                .map(|(len, f)| (f, len));
        }
        Ok(reader)
    }

    /// True when the file has groups below the root group.
    pub fn has_subgroups(&self) -> bool {
        self.meta.has_groups()
    }

    /// Close the libnetcdf handle (and with it libnetcdf's and HDF5's caches of this
    /// file); the metadata stays, and a later read opens the file again.
    pub fn close_handle(&self) {
        let h = self
            .handle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(h) = h {
            h.close();
        }
    }

    /// The open handle, the file opened again (and its groups found by name) if it was
    /// closed.
    fn handle(&self) -> Result<MutexGuard<'_, Option<Handle>>> {
        let mut h = self
            .handle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if h.is_none() {
            let path = self.path.as_str();
            let ne = |e: NcStatus| Error::netcdf(path, None, e);
            let c = c_path(&self.file)?;
            let _g = lock();
            let mut ncid = 0;
            // SAFETY: the lock is held; `c` outlives the call.
            check(unsafe { nc::nc_open(c.as_ptr(), sys::NC_NOWRITE, &mut ncid) }).map_err(ne)?;
            let mut handle = Handle {
                ncid,
                gids: vec![ncid],
            };
            for grp in &self.meta.groups[1..] {
                let name = c_name(path, &grp.name)?;
                let mut gid = 0;
                let parent = handle.gids[grp.parent.unwrap_or(0)];
                // SAFETY: `parent` is an open group (parents come first).
                let rc = unsafe { nc::nc_inq_grp_ncid(parent, name.as_ptr(), &mut gid) };
                if let Err(e) = check(rc) {
                    handle.close();
                    return Err(ne(e));
                }
                handle.gids.push(gid);
            }
            *h = Some(handle);
        }
        Ok(h)
    }

    /// Errors when a netCDF3 file is shorter than when it was opened.
    fn check_not_shrunk(&self) -> Result<()> {
        if let Some((f, len)) = &self.shrink_guard {
            let now = f.metadata().map_err(|e| Error::io(&self.path, e))?.len();
            if now < *len {
                return Err(Error::io(
                    &self.path,
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("the file shrank from {len} to {now} bytes: it was truncated while being read"),
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The metadata.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The hidden (virtual) attributes libnetcdf keeps of a netCDF-4 file, as ncks
    /// `--hdn` prints them (NCO 5.1.4's order): the root group's `_Format`,
    /// `_SOURCE_FORMAT`, `_NCProperties`, `_IsNetcdf4`, `_SuperblockVersion`; and
    /// per variable its byte order (`"little"`, `"big"`; `None` for one-byte types,
    /// strings and netCDF3 files). Empty for netCDF3 files.
    ///
    /// Errors: libnetcdf's.
    pub fn hidden_attributes(&self) -> Result<(Vec<Attr>, Vec<Option<&'static str>>)> {
        let format = self.meta.format;
        if !format.is_netcdf4() || self.remote {
            return Ok((Vec::new(), vec![None; self.meta.vars.len()]));
        }
        let guard = self.handle()?;
        let Some(h) = guard.as_ref() else {
            return Ok((Vec::new(), vec![None; self.meta.vars.len()]));
        };
        let _g = lock();
        let kind = match format {
            Format::Netcdf4Classic => "netCDF-4 classic model",
            _ => "netCDF-4",
        };
        let mut globals = vec![
            Attr::text("_Format", kind),
            Attr::text("_SOURCE_FORMAT", "NC_FORMATX_NC_HDF5"),
        ];
        for name in [c"_NCProperties", c"_IsNetcdf4", c"_SuperblockVersion"] {
            // SAFETY: the lock is held and `h.ncid` is the open root group.
            if let Ok(value) = unsafe { get_att(h.ncid, sys::NC_GLOBAL, name) } {
                globals.push(Attr {
                    name: name.to_string_lossy().into_owned(),
                    value,
                });
            }
        }
        let mut order = Vec::with_capacity(self.meta.vars.len());
        for (v, &(g, varid)) in self.loc.iter().enumerate() {
            if self.meta.vars[v].ty.size() <= 1 || self.meta.vars[v].ty == NcType::Str {
                order.push(None);
                continue;
            }
            let mut e = 0;
            // SAFETY: the lock is held; `gids[g]` is open and holds variable `varid`.
            let rc = unsafe { nc::nc_inq_var_endian(h.gids[g], varid, &mut e) };
            order.push(check(rc).ok().map(|()| {
                if e == sys::NC_ENDIAN_BIG {
                    "big"
                } else {
                    "little"
                }
            }));
        }
        Ok((globals, order))
    }

    /// Read the selection `sel` (one index list per dimension) of variable `var`.
    ///
    /// Errors: libnetcdf's, and a netCDF3 file truncated while open.
    pub fn read(&self, var: usize, sel: &[Vec<usize>]) -> Result<Values> {
        quiet_hdf5();
        let vals = if self.remote {
            // One DAP call at a time (the lock is re-entrant).
            let _g = lock();
            match self.read_from_blocks(var, sel)? {
                Some(vals) => vals,
                None => {
                    let name = &self.meta.vars[var].name;
                    on_url(&self.path, Some(name), || self.read_unchecked(var, sel))?
                }
            }
        } else {
            self.read_unchecked(var, sel)?
        };
        self.check_not_shrunk()?;
        Ok(vals)
    }

    /// A read of part of a variable from a DAP URL, served from a block of the
    /// variable read in one request: along its first dimension, from the first index
    /// asked for on, as many rows as fit in [`READ_AHEAD_BYTES`], over the bounding box
    /// of `sel`'s other dimensions; later reads inside the block take no request.
    /// Operators that stream (ncra and ncrcat a record at a time, nces and ncbo in
    /// pieces of about 256 KiB) read a variable in many calls; through libnetcdf's
    /// DAP2 client each call is one HTTP request, which a server answers at its
    /// per-request cost (pydap: about 0.15 s on a file of 100 variables). A selection
    /// outside one block but made of several index runs (a reversal, multi-slabs) is
    /// read as its bounding box in one request (up to [`BOUNDING_BOX_BYTES`]). `None`:
    /// a single hyperslab that fills a block by itself, or a read of nothing (the
    /// caller reads `sel` in one request).
    fn read_from_blocks(&self, var: usize, sel: &[Vec<usize>]) -> Result<Option<Values>> {
        let v = &self.meta.vars[var];
        let Some(&d0) = v.dims.first() else {
            return Ok(None);
        };
        let rows = self.meta.dims[d0].len;
        if sel.len() != v.dims.len() || sel.iter().any(Vec::is_empty) || v.ty == NcType::Str {
            return Ok(None);
        }
        let span = |s: &[usize]| {
            let lo = s.iter().copied().min().unwrap_or(0);
            (lo, s.iter().copied().max().unwrap_or(lo))
        };
        let (lo0, hi0) = span(&sel[0]);
        let bounds: Vec<(usize, usize)> = sel[1..].iter().map(|s| span(s)).collect();
        let per_row = bounds
            .iter()
            .map(|(lo, hi)| hi - lo + 1)
            .product::<usize>()
            .saturating_mul(v.ty.size().max(1));
        // Blocks are aligned (block k holds rows k*per_block..), so that pieces asked
        // for out of order (parallel windows) fall into the same block.
        let per_block = (READ_AHEAD_BYTES / per_row.max(1)).clamp(1, rows.max(1));
        let first = lo0 / per_block * per_block;
        let records = per_block.min(rows - first);
        if hi0 >= first + records || hi0 - lo0 + 1 >= records {
            // Not inside one block. A selection of several runs along some dimension
            // (a reversal, `-d` multi-slabs, a stride change) would be one request per
            // combination of runs: its bounding box is read in one, when not too large.
            let simple = sel.iter().all(|s| runs_of(s).len() == 1);
            let bbox = (hi0 - lo0 + 1).saturating_mul(per_row);
            if simple || bbox > BOUNDING_BOX_BYTES {
                return Ok(None);
            }
            let mut box_sel: Vec<Vec<usize>> = vec![(lo0..=hi0).collect()];
            box_sel.extend(bounds.iter().map(|&(lo, hi)| (lo..=hi).collect()));
            let values = on_url(&self.path, Some(&v.name), || {
                self.read_unchecked(var, &box_sel)
            })?;
            return Ok(Some(gather_block(&values, lo0, &bounds, sel)));
        }
        let mut kept = self
            .ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let hit = kept.iter().position(|b| {
            b.var == var
                && b.first <= lo0
                && hi0 < b.first + b.records
                && b.bounds
                    .iter()
                    .zip(&bounds)
                    .all(|(c, w)| c.0 <= w.0 && w.1 <= c.1)
        });
        let at = match hit {
            Some(k) => k,
            None => {
                let mut block_sel: Vec<Vec<usize>> = vec![(first..first + records).collect()];
                block_sel.extend(bounds.iter().map(|&(lo, hi)| (lo..=hi).collect()));
                let values = on_url(&self.path, Some(&v.name), || {
                    self.read_unchecked(var, &block_sel)
                })?;
                let bytes = |b: &DapBlock| b.values.len() * b.values.nc_type().size().max(1);
                let new = records * per_row;
                while !kept.is_empty()
                    && kept.iter().map(bytes).sum::<usize>() + new > READ_AHEAD_KEPT
                {
                    kept.remove(0);
                }
                kept.push(DapBlock {
                    var,
                    first,
                    records,
                    bounds: bounds.clone(),
                    values,
                });
                kept.len() - 1
            }
        };
        let b = &kept[at];
        Ok(Some(gather_block(&b.values, b.first, &b.bounds, sel)))
    }

    fn read_unchecked(&self, var: usize, sel: &[Vec<usize>]) -> Result<Values> {
        let v = &self.meta.vars[var];
        let ve = |e: NcStatus| Error::netcdf(&self.path, Some(&v.name), e);
        let n: usize = sel.iter().map(Vec::len).product();
        if n == 0 {
            return Ok(Values::with_capacity(v.ty, 0));
        }
        let handle = self.handle()?;
        let (g, vid) = self.loc[var];
        let gid = handle.as_ref().map_or(0, |h| h.gids[g]);
        let runs: Vec<Vec<Run>> = sel.iter().map(|s| runs_of(s)).collect();
        // The result's room is asked for without aborting first, so that a refused
        // allocation (`ulimit -v`) is an error naming the variable.
        let total = n
            .checked_mul(v.ty.size().max(1))
            .ok_or_else(|| Error::no_memory(&v.name, usize::MAX))?;
        let mut probe: Vec<u8> = Vec::new();
        nco_base::error::try_room(&mut probe, total, &v.name)?;
        drop(probe);
        let _g = lock();
        if runs.iter().all(|r| r.len() == 1) {
            // One hyperslab: read straight into the result.
            let start: Vec<usize> = runs.iter().map(|r| r[0].0).collect();
            let count: Vec<usize> = runs.iter().map(|r| r[0].1).collect();
            let stride: Vec<isize> = runs.iter().map(|r| r[0].2 as isize).collect();
            // SAFETY: the lock is held; the buffer holds the product of `count`.
            return unsafe { get_slab(gid, vid, v.ty, &start, &count, &stride) }.map_err(ve);
        }
        // Several runs along some dimension: one read per combination, scattered into
        // the output.
        let shape: Vec<usize> = sel.iter().map(Vec::len).collect();
        let mut ostride = vec![1usize; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            ostride[k] = ostride[k + 1] * shape[k + 1];
        }
        let mut out = Values::zeros(v.ty, n);
        let mut pick = vec![0usize; runs.len()];
        loop {
            let run: Vec<Run> = (0..runs.len()).map(|k| runs[k][pick[k]]).collect();
            let start: Vec<usize> = run.iter().map(|r| r.0).collect();
            let count: Vec<usize> = run.iter().map(|r| r.1).collect();
            let stride: Vec<isize> = run.iter().map(|r| r.2 as isize).collect();
            // SAFETY: the lock is held; the buffer holds the product of `count`.
            let block = unsafe { get_slab(gid, vid, v.ty, &start, &count, &stride) }.map_err(ve)?;
            let mut pos = Vec::with_capacity(block.len());
            let mut cnt = vec![0usize; run.len()];
            loop {
                pos.push(
                    (0..run.len())
                        .map(|k| (run[k].3 + cnt[k]) * ostride[k])
                        .sum(),
                );
                if !odometer(&mut cnt, &count) {
                    break;
                }
            }
            scatter(&mut out, &block, &pos);
            let lens: Vec<usize> = runs.iter().map(Vec::len).collect();
            if !odometer(&mut pick, &lens) {
                break;
            }
        }
        Ok(out)
    }
}

/// The elements of selection `sel` (one index list per dimension) out of `block`,
/// which holds row-major the indices from `first` on of the first dimension and, along
/// each other dimension `k`, `bounds[k].0..=bounds[k].1` (`sel` must lie inside).
fn gather_block(
    block: &Values,
    first: usize,
    bounds: &[(usize, usize)],
    sel: &[Vec<usize>],
) -> Values {
    let lens: Vec<usize> = bounds.iter().map(|(lo, hi)| hi - lo + 1).collect();
    let mut stride = vec![1usize; lens.len()];
    for k in (0..lens.len().saturating_sub(1)).rev() {
        stride[k] = stride[k + 1] * lens[k + 1];
    }
    let row = lens.iter().product::<usize>();
    let shape: Vec<usize> = sel.iter().map(Vec::len).collect();
    let mut idx = Vec::with_capacity(shape.iter().product());
    let mut pick = vec![0usize; shape.len()];
    loop {
        idx.push(
            (sel[0][pick[0]] - first) * row
                + (1..shape.len())
                    .map(|k| (sel[k][pick[k]] - bounds[k - 1].0) * stride[k - 1])
                    .sum::<usize>(),
        );
        if !odometer(&mut pick, &shape) {
            break;
        }
    }
    block.gather(&idx)
}

/// Read one strided hyperslab of type `ty`.
///
/// # Safety
/// The library lock must be held; the ids must be open.
unsafe fn get_slab(
    gid: c_int,
    vid: c_int,
    ty: NcType,
    start: &[usize],
    count: &[usize],
    stride: &[isize],
) -> Nc<Values> {
    let m: usize = count.iter().product();
    if ty == NcType::Str {
        let mut ptrs: Vec<*mut c_char> = vec![std::ptr::null_mut(); m];
        // SAFETY: room for `m` string pointers.
        check(unsafe {
            nc::nc_get_vars(
                gid,
                vid,
                start.as_ptr(),
                count.as_ptr(),
                stride.as_ptr(),
                ptrs.as_mut_ptr().cast(),
            )
        })?;
        // SAFETY: the pointers were filled by libnetcdf.
        return Ok(Values::Str(unsafe { take_strings(ptrs) }));
    }
    let mut out = Values::zeros(ty, m);
    // SAFETY: `out` holds `m` elements of the variable's own type.
    check(unsafe {
        nc::nc_get_vars(
            gid,
            vid,
            start.as_ptr(),
            count.as_ptr(),
            stride.as_ptr(),
            data_ptr_mut(&mut out),
        )
    })?;
    Ok(out)
}

/// Decode native-endian bytes of type `ty`.
pub(crate) fn decode_ne(ty: NcType, raw: &[u8]) -> Values {
    fn dec<T: NcNum>(raw: &[u8]) -> Values {
        T::into_values(raw.chunks_exact(T::SIZE).map(T::from_ne).collect())
    }
    crate::dispatch_type!(ty, T => dec::<T>(raw); char => Values::Char(raw.to_vec());
        string => Values::Str(Vec::new()))
}

/// `out[pos[i]] = block[i]` for buffers of the same type.
fn scatter(out: &mut Values, block: &Values, pos: &[usize]) {
    fn num<T: NcNum>(out: &mut Values, block: &Values, pos: &[usize]) {
        if let (Some(o), Some(b)) = (T::vec_of_mut(out), T::slice_of(block)) {
            for (&p, &x) in pos.iter().zip(b) {
                o[p] = x;
            }
        }
    }
    match (out, block) {
        (Values::Char(o), Values::Char(b)) => {
            for (&p, &x) in pos.iter().zip(b) {
                o[p] = x;
            }
        }
        (Values::Str(o), Values::Str(b)) => {
            for (&p, x) in pos.iter().zip(b) {
                o[p].clone_from(x);
            }
        }
        (o, b) => {
            let ty = b.nc_type();
            crate::dispatch_type!(ty, T => num::<T>(o, b, pos); char => (); string => ());
        }
    }
}

/// Advance a multi-index; false when it wrapped around to all zeros.
fn odometer(idx: &mut [usize], lens: &[usize]) -> bool {
    for k in (0..idx.len()).rev() {
        idx[k] += 1;
        if idx[k] < lens[k] {
            return true;
        }
        idx[k] = 0;
    }
    false
}

/// An arithmetic run of an index list: (start, count, stride, output offset).
type Run = (usize, usize, usize, usize);

/// Split an index list into arithmetic runs.
fn runs_of(s: &[usize]) -> Vec<Run> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if i + 1 < s.len() && s[i + 1] > s[i] {
            let step = s[i + 1] - s[i];
            let mut j = i + 1;
            while j + 1 < s.len() && s[j + 1] > s[j] && s[j + 1] - s[j] == step {
                j += 1;
            }
            out.push((s[i], j - i + 1, step, i));
            i = j + 1;
        } else {
            out.push((s[i], 1, 1, i));
            i += 1;
        }
    }
    out
}

/// A file being written through libnetcdf (netCDF-4 formats, or classic ones when our
/// writer is switched off).
pub struct LibWriter {
    path: String,
    ncid: c_int,
    open: bool,
    meta: Meta,
    /// (group id, variable id) of each variable of `meta`.
    loc: Vec<(c_int, c_int)>,
}

impl Drop for LibWriter {
    fn drop(&mut self) {
        if self.open {
            let _g = lock();
            // SAFETY: the file is open (a failed run: the caller removes it).
            unsafe { nc::nc_close(self.ncid) };
        }
    }
}

impl LibWriter {
    /// Create `path` with all definitions of `meta` (format chosen by `meta.format`):
    /// its groups, dimensions, attributes and variables, storage settings applied
    /// (chunks fitted to the output, deflate and shuffle; none on NC_STRING variables,
    /// which HDF5 cannot filter), NOFILL on every classic-format variable without
    /// `_FillValue` (netCDF-4 ones keep fill mode, as NCO writes them), and end define
    /// mode.
    ///
    /// Errors: groups or a type the format cannot hold (named), libnetcdf's errors.
    pub fn create(file: &Path, meta: &Meta) -> Result<LibWriter> {
        // The name in messages (libnetcdf takes `file`'s bytes as they are).
        let path = &file.display().to_string();
        let cmode = match meta.format {
            Format::Classic => sys::NC_CLOBBER,
            Format::Offset64 => sys::NC_64BIT_OFFSET,
            Format::Cdf5 => sys::NC_64BIT_DATA,
            Format::Netcdf4 => sys::NC_NETCDF4,
            Format::Netcdf4Classic => sys::NC_NETCDF4 | sys::NC_CLASSIC_MODEL,
        };
        if meta.has_groups() && meta.format != Format::Netcdf4 {
            return Err(Error::msg(format!(
                "{path}: groups need a netCDF-4 output (a {} file has only the root group)",
                meta.format.kind_name()
            )));
        }
        let c = c_path(file)?;
        load_library(path)?;
        let ne = |e: NcStatus| Error::netcdf(path, None, e);
        let _g = lock();
        let mut ncid = 0;
        // SAFETY: the lock is held; `c` outlives the call.
        check(unsafe { nc::nc_create(c.as_ptr(), cmode, &mut ncid) }).map_err(ne)?;
        let mut w = LibWriter {
            path: path.to_string(),
            ncid,
            open: true,
            meta: meta.clone(),
            loc: Vec::with_capacity(meta.vars.len()),
        };
        let mut gids = vec![ncid; meta.groups.len()];
        for (g, grp) in meta.groups.iter().enumerate().skip(1) {
            let name = c_name(path, &grp.name)?;
            let parent = gids[grp.parent.unwrap_or(0)];
            // SAFETY: `parent` is a group of this file, defined before its subgroups.
            check(unsafe { nc::nc_def_grp(parent, name.as_ptr(), &mut gids[g]) }).map_err(ne)?;
        }
        let mut dimids = vec![0; meta.dims.len()];
        for (i, d) in meta.dims.iter().enumerate() {
            let name = c_name(path, &d.name)?;
            let len = if d.unlimited {
                sys::NC_UNLIMITED
            } else {
                d.len
            };
            // SAFETY: a group of this file in define mode.
            check(unsafe { nc::nc_def_dim(gids[d.group], name.as_ptr(), len, &mut dimids[i]) })
                .map_err(ne)?;
        }
        for (g, &gid) in gids.iter().enumerate() {
            for a in meta.group_attrs(g) {
                let name = c_name(path, &a.name)?;
                // SAFETY: a group of this file in define mode.
                unsafe { put_att(gid, sys::NC_GLOBAL, &name, &a.value) }.map_err(ne)?;
            }
        }
        for v in &meta.vars {
            let (gid, vid) = w.define_var(v, &gids, &dimids)?;
            w.loc.push((gid, vid));
        }
        // SAFETY: the file is open in define mode.
        check(unsafe { nc::nc_enddef(ncid) }).map_err(ne)?;
        Ok(w)
    }

    /// Define variable `v` with its attributes and storage; returns its ids.
    fn define_var(&self, v: &Var, gids: &[c_int], dimids: &[c_int]) -> Result<(c_int, c_int)> {
        let path = self.path.as_str();
        let meta = &self.meta;
        let ve = |e: NcStatus| Error::netcdf(path, Some(&v.name), e);
        crate::check_storable(meta.format, v)?;
        let gid = gids[v.group];
        let name = c_name(path, &v.name)?;
        let ids: Vec<c_int> = v.dims.iter().map(|&d| dimids[d]).collect();
        let mut vid = 0;
        // SAFETY: the lock is held (by `create`); ids are this file's.
        check(unsafe {
            nc::nc_def_var(
                gid,
                name.as_ptr(),
                v.ty.code(),
                ids.len() as c_int,
                ids.as_ptr(),
                &mut vid,
            )
        })
        .map_err(ve)?;
        for a in &v.attrs {
            let an = c_name(path, &a.name)?;
            let value = if a.name == "_FillValue" {
                a.value.convert(v.ty).unwrap_or_else(|| a.value.clone())
            } else {
                a.value.clone()
            };
            // SAFETY: as above.
            unsafe { put_att(gid, vid, &an, &value) }.map_err(ve)?;
        }
        if meta.format.is_netcdf4() && !v.dims.is_empty() && v.ty != NcType::Str {
            // Chunks carried over from an input are fitted to this output's shape.
            if let Some(ch) = v
                .storage
                .chunks
                .as_deref()
                .and_then(|c| crate::chunking::fit(c, meta, v))
            {
                // SAFETY: one chunk size per dimension.
                check(unsafe { nc::nc_def_var_chunking(gid, vid, sys::NC_CHUNKED, ch.as_ptr()) })
                    .map_err(ve)?;
            }
            let level = v.storage.deflate.filter(|&l| l > 0);
            if level.is_some() || v.storage.shuffle {
                // SAFETY: valid ids.
                check(unsafe {
                    nc::nc_def_var_deflate(
                        gid,
                        vid,
                        c_int::from(v.storage.shuffle),
                        c_int::from(level.is_some()),
                        level.unwrap_or(0),
                    )
                })
                .map_err(ve)?;
            }
            if v.storage.fletcher32 {
                // SAFETY: valid ids.
                check(unsafe { nc::nc_def_var_fletcher32(gid, vid, 1) }).map_err(ve)?;
            }
        }
        if v.attr("_FillValue").is_none() && v.ty != NcType::Str && !meta.format.is_netcdf4() {
            // Classic formats only (no fill pass over the data); netCDF-4 variables keep
            // libnetcdf's fill mode, as NCO 5.1.4 writes them (no `_NoFill`): chunks
            // are written whole, so it costs nothing there.
            // SAFETY: every variable of the output is written in full by the operator
            // before the file is closed (the writer's contract), so no unwritten cell
            // is ever read back.
            check(unsafe { nc::nc_def_var_fill(gid, vid, sys::NC_NOFILL, std::ptr::null()) })
                .map_err(ve)?;
        }
        Ok((gid, vid))
    }

    /// Write `values` (the variable's own type) into variable `var` from index `first`
    /// of its first dimension, covering whole rows of the other dimensions.
    pub fn write(&mut self, var: usize, first: usize, values: &Values) -> Result<()> {
        self.write_at(var, &[first], values)
    }

    /// Write values from the multi-index `first` (at least one index) as
    /// [`crate::classic::Writer::write_raw_at`] describes: consecutive indices of
    /// dimension `first.len() - 1`, whole along the later ones.
    ///
    /// Errors: a piece past the end of a fixed dimension, libnetcdf's errors.
    pub fn write_at(&mut self, var: usize, first: &[usize], values: &Values) -> Result<()> {
        let v = &self.meta.vars[var];
        let (gid, vid) = self.loc[var];
        let (start, count) = if v.dims.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let k = first.len().clamp(1, v.dims.len());
            let lens: Vec<usize> = v.dims.iter().map(|&d| self.meta.dims[d].len).collect();
            let inner: usize = lens[k..].iter().product();
            let mut start = first.to_vec();
            start.resize(lens.len(), 0);
            let mut count = vec![1usize; k];
            count[k - 1] = values.len().checked_div(inner).unwrap_or(0);
            count.extend_from_slice(&lens[k..]);
            if count[k - 1] == 0 {
                return Ok(());
            }
            (start, count)
        };
        let _g = lock();
        let rc = if let Values::Str(s) = values {
            let cs = c_strings(s);
            let ptrs: Vec<*const c_char> = cs.iter().map(|c| c.as_ptr()).collect();
            // SAFETY: the lock is held; `ptrs` holds the product of `count` strings.
            unsafe {
                nc::nc_put_vara(
                    gid,
                    vid,
                    start.as_ptr(),
                    count.as_ptr(),
                    ptrs.as_ptr().cast(),
                )
            }
        } else {
            // SAFETY: the lock is held; `values` holds the product of `count` elements
            // of the variable's type (OutFile converts before calling).
            unsafe { nc::nc_put_vara(gid, vid, start.as_ptr(), count.as_ptr(), data_ptr(values)) }
        };
        check(rc).map_err(|e| write_error(&self.path, Some(&v.name), e))
    }

    /// Close the file, reporting libnetcdf's error if closing fails.
    pub fn finish(mut self) -> Result<()> {
        self.open = false;
        let _g = lock();
        // SAFETY: the file is open; it is not used again.
        check(unsafe { nc::nc_close(self.ncid) }).map_err(|e| write_error(&self.path, None, e))
    }
}

/// The error of a failed libnetcdf write to `path`. libnetcdf reports a full disk or a
/// file-size limit on a netCDF-4 file as "HDF error"; the system's reason is named
/// first when it is one of those (from `errno` right after the call, or a file system
/// with no space left), libnetcdf's words after it.
fn write_error(path: &str, var: Option<&str>, e: NcStatus) -> Error {
    let errno = std::io::Error::last_os_error().raw_os_error();
    let full = |dir: &std::path::Path| -> bool {
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: statvfs fills the zeroed struct we own; `c` is NUL-terminated.
        unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            libc::statvfs(c.as_ptr(), &mut st) == 0 && st.f_bavail == 0
        }
    };
    let reason = match errno {
        Some(n @ (libc::ENOSPC | libc::EFBIG | libc::EDQUOT)) => Some(n),
        _ => {
            let dir = std::path::Path::new(path)
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            full(dir).then_some(libc::ENOSPC)
        }
    };
    match reason {
        Some(n) => {
            let os = std::io::Error::from_raw_os_error(n);
            let what = match var {
                Some(v) => format!("{os} (writing variable {v}; libnetcdf: {e})"),
                None => format!("{os} (libnetcdf: {e})"),
            };
            Error::io(path, std::io::Error::new(os.kind(), what))
        }
        None => Error::netcdf(path, var, e),
    }
}

/// The netCDF library in use, as `nc_inq_libvers` words it (`4.9.0 of Aug  7 2022
/// 23:41:41 $`, the trailing `$` removed).
pub fn netcdf_version() -> String {
    if let Err(e) = nco_h5::syslib::load() {
        return format!("not available: {e}");
    }
    // SAFETY: nc_inq_libvers returns a pointer to a static NUL-terminated string.
    let p = unsafe { nc::nc_inq_libvers() };
    if p.is_null() {
        return "unknown".to_string();
    }
    // SAFETY: `p` is non-null and points to a static C string (see above).
    let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
    s.trim().trim_end_matches('$').trim().to_string()
}

/// The HDF5 library libnetcdf is linked to (`1.10.8`), `None` while libnetcdf is not
/// loaded ([`nco_h5::syslib`]; nco-rs links neither library).
pub fn hdf5_version() -> Option<String> {
    if !nco_h5::syslib::is_loaded() {
        return None;
    }
    let (mut a, mut b, mut c) = (0u32, 0u32, 0u32);
    // SAFETY: the three pointers are to our own integers.
    (unsafe { nco_h5::syslib::h5::H5get_libversion(&mut a, &mut b, &mut c) } >= 0)
        .then(|| format!("{a}.{b}.{c}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_block_picks_a_selection_out_of_its_bounding_block() {
        // A 4x5x6 variable whose element (i,j,k) is 100i+10j+k; the block holds rows
        // 1..3 and, of the other dimensions, 1..=3 and 2..=5.
        let (first, bounds) = (1, vec![(1, 3), (2, 5)]);
        let mut block = Vec::new();
        for i in 1..3 {
            for j in 1..=3 {
                for k in 2..=5 {
                    block.push(100 * i + 10 * j + k);
                }
            }
        }
        let sel = vec![vec![2, 1], vec![3, 1], vec![5, 2, 4]];
        let got = gather_block(&Values::Int(block), first, &bounds, &sel);
        let mut want = Vec::new();
        for &i in &sel[0] {
            for &j in &sel[1] {
                for &k in &sel[2] {
                    want.push((100 * i + 10 * j + k) as i32);
                }
            }
        }
        assert_eq!(got, Values::Int(want));
    }

    #[test]
    fn runs_split_arithmetic_progressions() {
        assert_eq!(runs_of(&[0, 1, 2, 3]), vec![(0, 4, 1, 0)]);
        assert_eq!(runs_of(&[0, 2, 4, 1, 3]), vec![(0, 3, 2, 0), (1, 2, 2, 3)]);
        assert_eq!(runs_of(&[3, 0, 1]), vec![(3, 1, 1, 0), (0, 2, 1, 1)]);
        assert_eq!(runs_of(&[5]), vec![(5, 1, 1, 0)]);
    }

    /// Groups, strings, unsigned and 64-bit types and storage survive a write and a read.
    #[test]
    fn groups_strings_and_storage_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.nc");
        let path = path.as_path();
        let mut m = Meta::new(Format::Netcdf4);
        m.attrs.push(Attr {
            name: "tags".into(),
            value: Values::Str(vec!["a".into(), "b c".into()]),
        });
        m.dims.push(Dim::new("time", 2, true));
        m.dims.push(Dim::new("x", 3, false));
        let g = m.add_group(0, "inner");
        let h = m.add_group(g, "deeper");
        m.groups[g].attrs.push(Attr::text("note", "inside"));
        m.dims.push(Dim {
            group: g,
            ..Dim::new("band", 2, false)
        });
        let mut s = Var::new("names", NcType::Str, vec![1]);
        s.attrs.push(Attr {
            name: "kinds".into(),
            value: Values::Str(vec!["k".into()]),
        });
        m.vars.push(s);
        let mut t = Var::new("t", NcType::Float, vec![0, 2, 1]);
        t.group = h;
        t.storage = Storage {
            chunks: Some(vec![1, 2, 3]),
            deflate: Some(3),
            shuffle: true,
            fletcher32: true,
            quantize: None,
        };
        m.vars.push(t);
        let mut u = Var::new("u", NcType::UInt64, vec![1]);
        u.group = g;
        m.vars.push(u);
        let mut w = LibWriter::create(path, &m).unwrap();
        let names = Values::Str(vec!["one".into(), "".into(), "three\"3".into()]);
        w.write(0, 0, &names).unwrap();
        w.write(1, 0, &Values::Float((0..12).map(|i| i as f32).collect()))
            .unwrap();
        w.write(2, 0, &Values::UInt64(vec![u64::MAX, 0, 7]))
            .unwrap();
        w.finish().unwrap();

        let r = LibReader::open(path).unwrap();
        let rm = r.meta();
        assert_eq!(rm.groups.len(), 3);
        assert_eq!(rm.group_path(2), "/inner/deeper");
        assert_eq!(rm.group_attrs(1), &m.groups[g].attrs[..]);
        assert_eq!(rm.attrs, m.attrs);
        let t = rm.var_id("/inner/deeper/t").unwrap();
        assert_eq!(rm.vars[t].storage, m.vars[1].storage);
        assert_eq!(rm.dim_path(rm.vars[t].dims[1]), "/inner/band");
        assert_eq!(
            r.read(t, &[vec![1], vec![0, 1], vec![0, 2]]).unwrap(),
            Values::Float(vec![6.0, 8.0, 9.0, 11.0])
        );
        let n = rm.var_id("/names").unwrap();
        assert_eq!(r.read(n, &[vec![0, 1, 2]]).unwrap(), names);
        assert_eq!(
            r.read(n, &[vec![2, 0]]).unwrap(),
            Values::Str(vec!["three\"3".into(), "one".into()])
        );
        assert_eq!(rm.vars[n].attrs, m.vars[0].attrs);
        let u = rm.var_id("/inner/u").unwrap();
        assert_eq!(
            r.read(u, &[vec![0, 1, 2]]).unwrap(),
            Values::UInt64(vec![u64::MAX, 0, 7])
        );
    }
}
