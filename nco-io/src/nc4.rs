//! The libnetcdf backend (through the `netcdf` crate): netCDF-4/HDF5 files, DAP URLs,
//! and classic files when our own reader is switched off (`--no-mmap`,
//! `NCO_RS_NO_MMAP=1`). Every call here is serialised by the crate's process-wide lock.
//!
//! Only the root group is read (groups are outside what nco-rs supports today).

use std::cell::Cell;
use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};

use netcdf::types::{FloatType, IntType, NcTypeDescriptor, NcVariableType};
use netcdf::AttributeValue;

use crate::error::{Error, Result};
use crate::model::{Attr, Dim, Format, Meta, Storage, Var};
use crate::types::{NcNum, NcType, Values};

/// NC_CHAR element for typed puts and gets through the crate.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct NcChar(u8);

// SAFETY: `NcChar` is a transparent u8, the C type libnetcdf uses for NC_CHAR.
unsafe impl NcTypeDescriptor for NcChar {
    fn type_descriptor() -> NcVariableType {
        NcVariableType::Char
    }
}

fn to_nc_type(t: &NcVariableType) -> Option<NcType> {
    Some(match t {
        NcVariableType::Char => NcType::Char,
        NcVariableType::String => NcType::Str,
        NcVariableType::Int(IntType::I8) => NcType::Byte,
        NcVariableType::Int(IntType::U8) => NcType::UByte,
        NcVariableType::Int(IntType::I16) => NcType::Short,
        NcVariableType::Int(IntType::U16) => NcType::UShort,
        NcVariableType::Int(IntType::I32) => NcType::Int,
        NcVariableType::Int(IntType::U32) => NcType::UInt,
        NcVariableType::Int(IntType::I64) => NcType::Int64,
        NcVariableType::Int(IntType::U64) => NcType::UInt64,
        NcVariableType::Float(FloatType::F32) => NcType::Float,
        NcVariableType::Float(FloatType::F64) => NcType::Double,
        _ => return None,
    })
}

fn from_nc_type(t: NcType) -> NcVariableType {
    match t {
        NcType::Char => NcVariableType::Char,
        NcType::Str => NcVariableType::String,
        NcType::Byte => NcVariableType::Int(IntType::I8),
        NcType::UByte => NcVariableType::Int(IntType::U8),
        NcType::Short => NcVariableType::Int(IntType::I16),
        NcType::UShort => NcVariableType::Int(IntType::U16),
        NcType::Int => NcVariableType::Int(IntType::I32),
        NcType::UInt => NcVariableType::Int(IntType::U32),
        NcType::Int64 => NcVariableType::Int(IntType::I64),
        NcType::UInt64 => NcVariableType::Int(IntType::U64),
        NcType::Float => NcVariableType::Float(FloatType::F32),
        NcType::Double => NcVariableType::Float(FloatType::F64),
    }
}

fn attr_from(v: AttributeValue) -> Values {
    use AttributeValue as A;
    match v {
        A::Uchar(x) => Values::UByte(vec![x]),
        A::Uchars(x) => Values::UByte(x),
        A::Schar(x) => Values::Byte(vec![x]),
        A::Schars(x) => Values::Byte(x),
        A::Ushort(x) => Values::UShort(vec![x]),
        A::Ushorts(x) => Values::UShort(x),
        A::Short(x) => Values::Short(vec![x]),
        A::Shorts(x) => Values::Short(x),
        A::Uint(x) => Values::UInt(vec![x]),
        A::Uints(x) => Values::UInt(x),
        A::Int(x) => Values::Int(vec![x]),
        A::Ints(x) => Values::Int(x),
        A::Ulonglong(x) => Values::UInt64(vec![x]),
        A::Ulonglongs(x) => Values::UInt64(x),
        A::Longlong(x) => Values::Int64(vec![x]),
        A::Longlongs(x) => Values::Int64(x),
        A::Float(x) => Values::Float(vec![x]),
        A::Floats(x) => Values::Float(x),
        A::Double(x) => Values::Double(vec![x]),
        A::Doubles(x) => Values::Double(x),
        A::Str(s) => Values::Char(s.into_bytes()),
        A::Strs(s) => Values::Str(s),
    }
}

fn attr_to(v: &Values) -> AttributeValue {
    use AttributeValue as A;
    match v {
        Values::UByte(x) => A::Uchars(x.clone()),
        Values::Byte(x) => A::Schars(x.clone()),
        Values::UShort(x) => A::Ushorts(x.clone()),
        Values::Short(x) => A::Shorts(x.clone()),
        Values::UInt(x) => A::Uints(x.clone()),
        Values::Int(x) => A::Ints(x.clone()),
        Values::UInt64(x) => A::Ulonglongs(x.clone()),
        Values::Int64(x) => A::Longlongs(x.clone()),
        Values::Float(x) => A::Floats(x.clone()),
        Values::Double(x) => A::Doubles(x.clone()),
        Values::Char(c) => A::Str(String::from_utf8_lossy(c).into_owned()),
        Values::Str(s) => A::Strs(s.clone()),
    }
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
        if !q.get() {
            nco_h5::index::quiet();
            q.set(true);
        }
    });
}

/// Ask libnetcdf for the on-disk format of `path` (`nc_inq_format`).
pub fn inquire_format(path: &str) -> Result<Format> {
    quiet_hdf5();
    let c = CString::new(path).map_err(|_| Error::msg(format!("{path}: NUL in file name")))?;
    let _guard = netcdf_sys::libnetcdf_lock.lock();
    let mut ncid = 0;
    let mut fmt = 0;
    // SAFETY: the global libnetcdf lock is held; `c` outlives the call; the handle is
    // closed before the lock is released.
    unsafe {
        let rc = netcdf_sys::nc_open(c.as_ptr(), netcdf_sys::NC_NOWRITE, &mut ncid);
        if rc != 0 {
            return Err(Error::netcdf(path, None, netcdf::Error::Netcdf(rc)));
        }
        let rc = netcdf_sys::nc_inq_format(ncid, &mut fmt);
        netcdf_sys::nc_close(ncid);
        if rc != 0 {
            return Err(Error::netcdf(path, None, netcdf::Error::Netcdf(rc)));
        }
    }
    Ok(match fmt {
        netcdf_sys::NC_FORMAT_CLASSIC => Format::Classic,
        netcdf_sys::NC_FORMAT_64BIT_OFFSET => Format::Offset64,
        netcdf_sys::NC_FORMAT_CDF5 => Format::Cdf5,
        netcdf_sys::NC_FORMAT_NETCDF4_CLASSIC => Format::Netcdf4Classic,
        _ => Format::Netcdf4,
    })
}

/// Deflate level (`None` when not compressed) and shuffle filter of the variables
/// `names` of the netCDF-4 file `path` (`nc_inq_var_deflate`), in that order.
fn deflate_of(path: &str, names: &[String]) -> Result<Vec<(Option<i32>, bool)>> {
    quiet_hdf5();
    let c = CString::new(path).map_err(|_| Error::msg(format!("{path}: NUL in file name")))?;
    let _guard = netcdf_sys::libnetcdf_lock.lock();
    let mut ncid = 0;
    let mut out = Vec::with_capacity(names.len());
    // SAFETY: the global libnetcdf lock is held; every pointer outlives its call; the
    // handle is closed before the lock is released.
    unsafe {
        let rc = netcdf_sys::nc_open(c.as_ptr(), netcdf_sys::NC_NOWRITE, &mut ncid);
        if rc != 0 {
            return Err(Error::netcdf(path, None, netcdf::Error::Netcdf(rc)));
        }
        for n in names {
            let (mut varid, mut shuffle, mut deflate, mut level) = (0, 0, 0, 0);
            let cn = CString::new(n.as_str()).unwrap_or_default();
            let ok = netcdf_sys::nc_inq_varid(ncid, cn.as_ptr(), &mut varid) == 0
                && netcdf_sys::nc_inq_var_deflate(
                    ncid,
                    varid,
                    &mut shuffle,
                    &mut deflate,
                    &mut level,
                ) == 0;
            out.push(if ok {
                ((deflate != 0).then_some(level), shuffle != 0)
            } else {
                (None, false)
            });
        }
        netcdf_sys::nc_close(ncid);
    }
    Ok(out)
}

/// A file opened through libnetcdf for reading. The handle may be closed once the
/// metadata is read ([`LibReader::close_handle`]: the engine reads the data) and is
/// opened again when a read needs it.
pub struct LibReader {
    path: String,
    file: Mutex<Option<netcdf::File>>,
    meta: Meta,
    /// True when the root group has groups under it (which nco-rs does not read).
    subgroups: bool,
    /// A netCDF3 file's own descriptor and its length when opened: libnetcdf reads the
    /// missing part of a netCDF3 file that shrank while open as fill values, silently,
    /// so every read checks the length after the fact.
    shrink_guard: Option<(std::fs::File, u64)>,
}

impl LibReader {
    /// Open `path` (a file or a DAP URL) and read its root-group metadata.
    pub fn open(path: &str) -> Result<LibReader> {
        quiet_hdf5();
        let format = inquire_format(path)?;
        let file = netcdf::open(path).map_err(|e| Error::netcdf(path, None, e))?;
        let mut meta = Meta::new(format);
        for d in file.dimensions() {
            meta.dims.push(Dim {
                name: d.name(),
                len: d.len(),
                unlimited: d.is_unlimited(),
            });
        }
        for a in file.attributes() {
            let value = a.value().map_err(|e| Error::netcdf(path, None, e))?;
            meta.attrs.push(Attr {
                name: a.name().to_string(),
                value: attr_from(value),
            });
        }
        for v in file.variables() {
            let name = v.name();
            let ty = to_nc_type(&v.vartype()).ok_or_else(|| {
                Error::var(
                    &name,
                    format!("{path}: user-defined types are not supported"),
                )
            })?;
            let mut dims = Vec::new();
            for d in v.dimensions() {
                let id = meta.dim_id(&d.name()).ok_or_else(|| {
                    Error::var(
                        &name,
                        format!("{path}: dimension {} is in a parent group", d.name()),
                    )
                })?;
                dims.push(id);
            }
            let mut attrs = Vec::new();
            for a in v.attributes() {
                let value = a.value().map_err(|e| Error::netcdf(path, Some(&name), e))?;
                attrs.push(Attr {
                    name: a.name().to_string(),
                    value: attr_from(value),
                });
            }
            let chunks = if format.is_netcdf4() {
                v.chunking().ok().flatten()
            } else {
                None
            };
            let storage = Storage {
                chunks,
                deflate: None,
                shuffle: false,
            };
            meta.vars.push(Var {
                name,
                ty,
                dims,
                attrs,
                storage,
            });
        }
        if format.is_netcdf4() {
            let names: Vec<String> = meta.vars.iter().map(|v| v.name.clone()).collect();
            for (v, (deflate, shuffle)) in meta.vars.iter_mut().zip(deflate_of(path, &names)?) {
                v.storage.deflate = deflate;
                v.storage.shuffle = shuffle;
            }
        }
        let subgroups = format.is_netcdf4() && file.groups().is_ok_and(|mut g| g.next().is_some());
        let shrink_guard = if format.is_netcdf4() {
            None
        } else {
            std::fs::File::open(path)
                .and_then(|f| Ok((f.metadata()?.len(), f)))
                .ok()
                .map(|(len, f)| (f, len))
        };
        Ok(LibReader {
            path: path.to_string(),
            file: Mutex::new(Some(file)),
            meta,
            subgroups,
            shrink_guard,
        })
    }

    /// True when the file has groups below the root group (nco-rs reads only the root
    /// group's dimensions, variables and attributes).
    pub fn has_subgroups(&self) -> bool {
        self.subgroups
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

    /// Close the libnetcdf handle (and with it libnetcdf's and HDF5's caches of this
    /// file); the metadata stays, and a later read opens the file again.
    pub fn close_handle(&self) {
        let mut f = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *f = None;
    }

    /// The libnetcdf handle, opened again if it was closed.
    fn handle(&self) -> Result<MutexGuard<'_, Option<netcdf::File>>> {
        let mut f = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if f.is_none() {
            *f = Some(netcdf::open(&self.path).map_err(|e| Error::netcdf(&self.path, None, e))?);
        }
        Ok(f)
    }

    /// Read the selection `sel` (one index list per dimension) of variable `var`.
    ///
    /// Errors: libnetcdf's, and a netCDF3 file truncated while open.
    pub fn read(&self, var: usize, sel: &[Vec<usize>]) -> Result<Values> {
        quiet_hdf5();
        let vals = self.read_unchecked(var, sel)?;
        self.check_not_shrunk()?;
        Ok(vals)
    }

    fn read_unchecked(&self, var: usize, sel: &[Vec<usize>]) -> Result<Values> {
        let v = &self.meta.vars[var];
        let guard = self.handle()?;
        let file = guard.as_ref().expect("opened by handle()");
        let nv = file
            .variable(&v.name)
            .ok_or_else(|| Error::var(&v.name, format!("{}: vanished", self.path)))?;
        let n: usize = sel.iter().map(Vec::len).product();
        if n == 0 {
            return Ok(Values::with_capacity(v.ty, 0));
        }
        if v.ty == NcType::Str {
            let mut out = Vec::with_capacity(n);
            for_each_index(sel, |idx| {
                let s = nv
                    .get_string(idx)
                    .map_err(|e| Error::netcdf(&self.path, Some(&v.name), e))?;
                out.push(s);
                Ok(())
            })?;
            return Ok(Values::Str(out));
        }
        let es = v.ty.size();
        let runs: Vec<Vec<(usize, usize, usize, usize)>> = sel.iter().map(|s| runs_of(s)).collect();
        let total = n
            .checked_mul(es)
            .ok_or_else(|| Error::no_memory(&v.name, usize::MAX))?;
        let mut out = Vec::new();
        nco_base::error::try_room(&mut out, total, &v.name)?;
        out.resize(total, 0);
        // Output strides (elements) over the selection shape.
        let shape: Vec<usize> = sel.iter().map(Vec::len).collect();
        let mut ostride = vec![1usize; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            ostride[k] = ostride[k + 1] * shape[k + 1];
        }
        let mut pick = vec![0usize; runs.len()];
        loop {
            let start: Vec<usize> = (0..runs.len()).map(|k| runs[k][pick[k]].0).collect();
            let count: Vec<usize> = (0..runs.len()).map(|k| runs[k][pick[k]].1).collect();
            let stride: Vec<isize> = (0..runs.len())
                .map(|k| runs[k][pick[k]].2 as isize)
                .collect();
            let ext: Vec<netcdf::Extent> = (0..runs.len())
                .map(|k| netcdf::Extent::SliceCount {
                    start: start[k],
                    count: count[k],
                    stride: stride[k],
                })
                .collect();
            let m: usize = count.iter().product();
            let mut buf = Vec::new();
            nco_base::error::try_room(&mut buf, m * es, &v.name)?;
            buf.resize(m * es, 0);
            nv.get_raw_values_into(&mut buf, ext)
                .map_err(|e| Error::netcdf(&self.path, Some(&v.name), e))?;
            // Scatter the block into the output.
            let offs: Vec<usize> = (0..runs.len()).map(|k| runs[k][pick[k]].3).collect();
            let mut i = 0usize;
            let mut cnt = vec![0usize; runs.len()];
            loop {
                let o: usize = (0..runs.len())
                    .map(|k| (offs[k] + cnt[k]) * ostride[k])
                    .sum::<usize>();
                out[o * es..(o + 1) * es].copy_from_slice(&buf[i * es..(i + 1) * es]);
                i += 1;
                if !odometer(&mut cnt, &count) {
                    break;
                }
            }
            let lens: Vec<usize> = runs.iter().map(Vec::len).collect();
            if !odometer(&mut pick, &lens) {
                break;
            }
        }
        try_decode_ne(v.ty, &out, &v.name)
    }
}

/// Decode native-endian bytes of type `ty`.
pub(crate) fn decode_ne(ty: NcType, raw: &[u8]) -> Values {
    fn dec<T: NcNum>(raw: &[u8]) -> Values {
        T::into_values(raw.chunks_exact(T::SIZE).map(T::from_ne).collect())
    }
    crate::dispatch_type!(ty, T => dec::<T>(raw); char => Values::Char(raw.to_vec());
        string => Values::Str(Vec::new()))
}

/// Decode native-endian bytes of type `ty` into a buffer reserved without aborting.
///
/// Errors: a refused allocation is [`Error::no_memory`] naming variable `var`.
fn try_decode_ne(ty: NcType, raw: &[u8], var: &str) -> Result<Values> {
    fn dec<T: NcNum>(raw: &[u8], var: &str) -> Result<Values> {
        let mut out = Vec::new();
        nco_base::error::try_room(&mut out, raw.len() / T::SIZE, var)?;
        out.extend(raw.chunks_exact(T::SIZE).map(T::from_ne));
        Ok(T::into_values(out))
    }
    fn bytes(raw: &[u8], var: &str) -> Result<Values> {
        let mut out = Vec::new();
        nco_base::error::try_room(&mut out, raw.len(), var)?;
        out.extend_from_slice(raw);
        Ok(Values::Char(out))
    }
    crate::dispatch_type!(ty, T => dec::<T>(raw, var); char => bytes(raw, var);
        string => Ok(Values::Str(Vec::new())))
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

fn for_each_index(sel: &[Vec<usize>], mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    let lens: Vec<usize> = sel.iter().map(Vec::len).collect();
    let mut pick = vec![0usize; sel.len()];
    loop {
        let idx: Vec<usize> = (0..sel.len()).map(|k| sel[k][pick[k]]).collect();
        f(&idx)?;
        if !odometer(&mut pick, &lens) {
            return Ok(());
        }
    }
}

/// Split an index list into arithmetic runs: (start, count, stride, output offset).
fn runs_of(s: &[usize]) -> Vec<(usize, usize, usize, usize)> {
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
    file: netcdf::FileMut,
    meta: Meta,
}

impl LibWriter {
    /// Create `path` with all definitions of `meta` (format chosen by `meta.format`),
    /// storage settings applied, NOFILL on every variable, and end define mode.
    pub fn create(path: &str, meta: &Meta) -> Result<LibWriter> {
        use netcdf::Options;
        quiet_hdf5();
        let opts = match meta.format {
            Format::Classic => Options::empty(),
            Format::Offset64 => Options::_64BIT_OFFSET,
            Format::Cdf5 => Options::_64BIT_DATA,
            Format::Netcdf4 => Options::NETCDF4,
            Format::Netcdf4Classic => Options::NETCDF4 | Options::CLASSIC,
        };
        let ne = |e| Error::netcdf(path, None, e);
        let mut file = netcdf::create_with(path, opts).map_err(ne)?;
        for d in &meta.dims {
            if d.unlimited {
                file.add_unlimited_dimension(&d.name).map_err(ne)?;
            } else {
                file.add_dimension(&d.name, d.len).map_err(ne)?;
            }
        }
        for a in &meta.attrs {
            file.add_attribute(&a.name, attr_to(&a.value)).map_err(ne)?;
        }
        for v in &meta.vars {
            let ve = |e| Error::netcdf(path, Some(&v.name), e);
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
            let dnames: Vec<&str> = v.dims.iter().map(|&d| meta.dims[d].name.as_str()).collect();
            let mut nv = file
                .add_variable_with_type(&v.name, &dnames, &from_nc_type(v.ty))
                .map_err(ve)?;
            // _FillValue must be set through the fill-value API on netCDF-4 files.
            for a in &v.attrs {
                if a.name == "_FillValue" && meta.format.is_netcdf4() {
                    set_fill(&mut nv, &a.value, v.ty).map_err(ve)?;
                } else {
                    nv.put_attribute(&a.name, attr_to(&a.value)).map_err(ve)?;
                }
            }
            if meta.format.is_netcdf4() && !v.dims.is_empty() {
                // Chunks carried over from an input are fitted to this output's shape.
                if let Some(ch) = v
                    .storage
                    .chunks
                    .as_deref()
                    .and_then(|c| crate::chunking::fit(c, meta, v))
                {
                    nv.set_chunking(&ch).map_err(ve)?;
                }
                if let Some(l) = v.storage.deflate.filter(|&l| l > 0) {
                    nv.set_compression(l, v.storage.shuffle).map_err(ve)?;
                } else if v.storage.shuffle {
                    nv.set_compression(0, true).map_err(ve)?;
                }
            }
            if v.attr("_FillValue").is_none() {
                // SAFETY: every variable of the output is written in full by the operator
                // before the file is closed (the writer's contract), so no unwritten cell
                // is ever read back.
                unsafe { nv.set_nofill() }.map_err(ve)?;
            }
        }
        file.enddef().map_err(ne)?;
        Ok(LibWriter {
            path: path.to_string(),
            file,
            meta: meta.clone(),
        })
    }

    /// Write `values` (the variable's own type) into variable `var` from index `first`
    /// of its first dimension, covering whole rows of the other dimensions.
    pub fn write(&mut self, var: usize, first: usize, values: &Values) -> Result<()> {
        self.write_at(var, &[first], values)
    }

    /// Write values from the multi-index `first` (at least one index) as
    /// [`crate::classic::Writer::write_raw_at`] describes: consecutive indices of
    /// dimension `first.len() - 1`, whole along the later ones.
    pub fn write_at(&mut self, var: usize, first: &[usize], values: &Values) -> Result<()> {
        quiet_hdf5();
        let v = &self.meta.vars[var];
        let path = &self.path;
        let mut nv = self
            .file
            .variable_mut(&v.name)
            .ok_or_else(|| Error::var(&v.name, format!("{path}: not defined")))?;
        if v.dims.is_empty() {
            return put(&mut nv, values, &[], &[]).map_err(|e| write_error(path, Some(&v.name), e));
        }
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
        put(&mut nv, values, &start, &count).map_err(|e| write_error(path, Some(&v.name), e))
    }

    /// Close the file, reporting libnetcdf's error if closing fails.
    pub fn finish(self) -> Result<()> {
        quiet_hdf5();
        let path = self.path;
        self.file.close().map_err(|e| write_error(&path, None, e))
    }
}

/// The error of a failed libnetcdf write to `path`. libnetcdf reports a full disk or a
/// file-size limit on a netCDF-4 file as "HDF error"; the system's reason is named
/// first when it is one of those (from `errno` right after the call, or a file system
/// with no space left), libnetcdf's words after it.
fn write_error(path: &str, var: Option<&str>, e: netcdf::Error) -> Error {
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

fn set_fill(nv: &mut netcdf::VariableMut<'_>, val: &Values, ty: NcType) -> netcdf::Result<()> {
    let val = val.convert(ty).unwrap_or_else(|| val.clone());
    match &val {
        Values::Byte(x) => nv.set_fill_value(x[0]),
        Values::UByte(x) => nv.set_fill_value(x[0]),
        Values::Short(x) => nv.set_fill_value(x[0]),
        Values::UShort(x) => nv.set_fill_value(x[0]),
        Values::Int(x) => nv.set_fill_value(x[0]),
        Values::UInt(x) => nv.set_fill_value(x[0]),
        Values::Int64(x) => nv.set_fill_value(x[0]),
        Values::UInt64(x) => nv.set_fill_value(x[0]),
        Values::Float(x) => nv.set_fill_value(x[0]),
        Values::Double(x) => nv.set_fill_value(x[0]),
        Values::Char(x) => nv.set_fill_value(NcChar(x.first().copied().unwrap_or(0))),
        Values::Str(_) => Ok(()),
    }
}

fn put(
    nv: &mut netcdf::VariableMut<'_>,
    values: &Values,
    start: &[usize],
    count: &[usize],
) -> netcdf::Result<()> {
    let ext: netcdf::Extents = if start.is_empty() {
        netcdf::Extents::All
    } else {
        (start, count).try_into()?
    };
    match values {
        Values::Byte(x) => nv.put_values(x, ext),
        Values::UByte(x) => nv.put_values(x, ext),
        Values::Short(x) => nv.put_values(x, ext),
        Values::UShort(x) => nv.put_values(x, ext),
        Values::Int(x) => nv.put_values(x, ext),
        Values::UInt(x) => nv.put_values(x, ext),
        Values::Int64(x) => nv.put_values(x, ext),
        Values::UInt64(x) => nv.put_values(x, ext),
        Values::Float(x) => nv.put_values(x, ext),
        Values::Double(x) => nv.put_values(x, ext),
        Values::Char(c) => {
            let v: Vec<NcChar> = c.iter().map(|&b| NcChar(b)).collect();
            nv.put_values(&v, ext)
        }
        Values::Str(s) => {
            // One element at a time: the crate has no bulk string put.
            let mut idx = vec![0usize; count.len()];
            for item in s {
                let mut full = idx.clone();
                for (k, f) in full.iter_mut().enumerate() {
                    *f += start[k];
                }
                nv.put_string(item, full.as_slice())?;
                odometer(&mut idx, count);
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::runs_of;

    #[test]
    fn runs_split_arithmetic_progressions() {
        assert_eq!(runs_of(&[0, 1, 2, 3]), vec![(0, 4, 1, 0)]);
        assert_eq!(runs_of(&[0, 2, 4, 1, 3]), vec![(0, 3, 2, 0), (1, 2, 2, 3)]);
        assert_eq!(runs_of(&[3, 0, 1]), vec![(3, 1, 1, 0), (0, 2, 1, 1)]);
        assert_eq!(runs_of(&[5]), vec![(5, 1, 1, 0)]);
    }
}
