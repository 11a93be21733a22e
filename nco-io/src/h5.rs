//! netCDF-4 data read by our chunk engine (`nco-h5`): the bulk data path of netCDF-4
//! inputs, beside libnetcdf, which keeps the metadata and whatever the engine does not
//! read (NC_STRING and other variable-length data, compact storage, filters we do not
//! decode, datasets whose shape or type disagrees with the netCDF metadata).
//!
//! Each variable is looked up once, at its first read, by its HDF5 dataset path
//! ([`h5_path`]), and its storage checked against the netCDF metadata: element type,
//! rank, dimension lengths. Reads then go straight to the engine: chunks found by the
//! Rust index walk, read with positioned reads and decoded in parallel on the rayon
//! pool (`-t`), with no lock. Indices past a dataset's extent (a variable shorter than
//! its unlimited dimension) read as the netCDF fill value, as libnetcdf returns them.
//! Design and measurements: docs/netcdf4-engine.md.

use std::path::Path;
use std::sync::OnceLock;

use nco_h5::{Kind, VarIndex};

use crate::error::{Error, Result};
use crate::model::{Meta, Var};
use crate::types::{NcNum, NcType, Values};

/// How one variable is read.
enum Slot {
    /// By the engine, with this storage description.
    Engine(VarIndex),
    /// By libnetcdf, for this reason (a filter we do not decode is named in it).
    Lib(String),
}

/// The engine's side of one netCDF-4 input: the file and each variable's storage,
/// described on first use.
pub struct H5Reader {
    file: nco_h5::File,
    slots: Vec<OnceLock<Slot>>,
}

/// The HDF5 dataset path of variable `v` (the root group's variables are `/name`).
pub fn h5_path(meta: &Meta, v: &Var) -> String {
    meta.path_in(v.group, &v.name)
}

/// libnetcdf's name for the dataset of a variable that has a dimension's name without
/// being its coordinate variable (the dimension scale takes the plain name).
fn non_coord_path(meta: &Meta, v: &Var) -> String {
    meta.path_in(v.group, &format!("_nc4_non_coord_{}", v.name))
}

/// An error when `file` is shorter than its superblock says (cut short in a copy or a
/// download).
fn truncation(file: &nco_h5::File) -> Result<()> {
    match file.truncated() {
        Some((end, len)) => Err(Error::Format {
            path: file.path().display().to_string(),
            reason: format!("truncated HDF5 file: {len} bytes of the {end} its superblock gives"),
        }),
        None => Ok(()),
    }
}

/// Check that the HDF5 file at `path` is not shorter than its superblock says, before
/// libnetcdf opens it (libnetcdf says only "HDF error"). A file our parser cannot read
/// passes (libnetcdf judges it).
///
/// Errors: a truncated file (named, with both lengths).
pub fn check_not_truncated(path: &Path) -> Result<()> {
    match nco_h5::File::open(path) {
        Ok(f) => truncation(&f),
        Err(_) => Ok(()),
    }
}

/// Whether the engine's element type is netCDF type `ty`.
fn same_type(ty: NcType, v: &VarIndex) -> bool {
    let (kind, size) = match ty {
        NcType::Byte => (Kind::Int { signed: true }, 1),
        NcType::UByte => (Kind::Int { signed: false }, 1),
        NcType::Short => (Kind::Int { signed: true }, 2),
        NcType::UShort => (Kind::Int { signed: false }, 2),
        NcType::Int => (Kind::Int { signed: true }, 4),
        NcType::UInt => (Kind::Int { signed: false }, 4),
        NcType::Int64 => (Kind::Int { signed: true }, 8),
        NcType::UInt64 => (Kind::Int { signed: false }, 8),
        NcType::Float => (Kind::Float, 4),
        NcType::Double => (Kind::Float, 8),
        NcType::Char => (Kind::Char, 1),
        NcType::Str => return false,
    };
    v.kind == kind && v.elem == size
}

impl H5Reader {
    /// Open `path` for the engine, for the variables of `meta` (its netCDF metadata,
    /// read by libnetcdf).
    ///
    /// Errors: the file cannot be opened or its superblock is damaged (named).
    pub fn open(path: &Path, meta: &Meta) -> Result<H5Reader> {
        let file = nco_h5::File::open(path).map_err(|e| Error::Format {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        truncation(&file)?;
        Ok(H5Reader {
            file,
            slots: (0..meta.vars.len()).map(|_| OnceLock::new()).collect(),
        })
    }

    /// How variable `var` of `meta` is read: the engine's storage description, or
    /// `Err(reason)` when libnetcdf reads it. A damaged header or chunk index is an
    /// error (named), not a fallback.
    fn slot(&self, meta: &Meta, var: usize) -> Result<&Slot> {
        if let Some(s) = self.slots[var].get() {
            return Ok(s);
        }
        let slot = self.describe(meta, var)?;
        Ok(self.slots[var].get_or_init(|| slot))
    }

    fn describe(&self, meta: &Meta, var: usize) -> Result<Slot> {
        let v = &meta.vars[var];
        if v.ty == NcType::Str {
            return Ok(Slot::Lib("variable-length strings".into()));
        }
        let dims: Vec<u64> = v.dims.iter().map(|&d| meta.dims[d].len as u64).collect();
        let fits = |x: &VarIndex| {
            same_type(v.ty, x)
                && x.shape.len() == dims.len()
                && x.shape.iter().zip(&v.dims).all(|(&n, &d)| {
                    let dim = &meta.dims[d];
                    n == dim.len as u64 || (dim.unlimited && n <= dim.len as u64)
                })
        };
        // libnetcdf names a variable's dataset `_nc4_non_coord_<name>` when a
        // dimension of the same name is not its first dimension.
        let non_coord = meta
            .dim_in_scope(v.group, &v.name)
            .is_some_and(|d| v.dims.first() != Some(&d));
        let paths = if non_coord {
            [non_coord_path(meta, v), h5_path(meta, v)]
        } else {
            [h5_path(meta, v), non_coord_path(meta, v)]
        };
        let mut why = String::new();
        for path in paths {
            match self.file.var(&path) {
                Ok(x) if fits(&x) => return Ok(Slot::Engine(x)),
                Ok(x) => {
                    why = format!(
                        "dataset {path} of shape {:?} does not match the variable",
                        x.shape
                    )
                }
                Err(e @ nco_h5::Error::Corrupt(_)) => {
                    return Err(Error::Format {
                        path: self.file.path().display().to_string(),
                        reason: format!("variable {}: {e}", v.name),
                    })
                }
                Err(e) => {
                    if why.is_empty() || !matches!(e, nco_h5::Error::Unsupported(_)) {
                        why = e.to_string();
                    }
                    if matches!(e, nco_h5::Error::UnsupportedFilter(_)) {
                        break;
                    }
                }
            }
        }
        Ok(Slot::Lib(why))
    }

    /// Whether the engine reads variable `var` (false: libnetcdf does), with the reason
    /// when it does not.
    ///
    /// Errors: a damaged header or chunk index (named).
    pub fn engine_reads(&self, meta: &Meta, var: usize) -> Result<std::result::Result<(), &str>> {
        Ok(match self.slot(meta, var)? {
            Slot::Engine(_) => Ok(()),
            Slot::Lib(why) => Err(why.as_str()),
        })
    }

    /// The file the engine reads.
    pub fn file(&self) -> &nco_h5::File {
        &self.file
    }

    /// The engine's storage description of variable `var`, when the engine reads it.
    ///
    /// Errors: a damaged header or chunk index (named).
    pub fn storage(&self, meta: &Meta, var: usize) -> Result<Option<&VarIndex>> {
        Ok(match self.slot(meta, var)? {
            Slot::Engine(x) => Some(x),
            Slot::Lib(_) => None,
        })
    }

    /// The chunk shape the engine reads variable `var` in, when it reads it.
    pub fn chunk_shape(&self, meta: &Meta, var: usize) -> Option<&[u64]> {
        match self.slot(meta, var).ok()? {
            Slot::Engine(x) => Some(&x.chunk),
            Slot::Lib(_) => None,
        }
    }

    /// Read the selection `sel` (one index list per dimension) of variable `var` of
    /// `meta`, or `None` when libnetcdf must read it.
    ///
    /// Errors: damaged data (a bad deflate stream, a checksum mismatch, a chunk past the
    /// end of the file), named with the file and variable; I/O errors.
    pub fn read(&self, meta: &Meta, var: usize, sel: &[Vec<usize>]) -> Result<Option<Values>> {
        let Slot::Engine(x) = self.slot(meta, var)? else {
            return Ok(None);
        };
        let v = &meta.vars[var];
        let n: usize = sel.iter().map(Vec::len).product();
        let named = |e: nco_h5::Error| Error::Format {
            path: self.file.path().display().to_string(),
            reason: format!("variable {}: {e}", v.name),
        };
        let pad = pad_bytes(v);
        let values = with_values(v.ty, n, |buf| {
            nco_h5::read::read_sel(x, &self.file, sel, &pad, buf).map_err(named)
        })?;
        Ok(Some(values))
    }
}

/// What indices past a dataset's extent read as, in native bytes: the variable's
/// `_FillValue`, or the netCDF default fill of its type (libnetcdf's rule).
fn pad_bytes(v: &Var) -> Vec<u8> {
    fn one<T: NcNum>(v: &Var) -> Vec<u8> {
        let x: T = v
            .attr("_FillValue")
            .and_then(|a| a.value.convert(T::TYPE))
            .and_then(|c| T::slice_of(&c).and_then(|s| s.first().copied()))
            .unwrap_or(T::DEFAULT_FILL);
        let mut out = vec![0u8; T::SIZE];
        // SAFETY: `T` is a plain number of `T::SIZE` bytes; this copies its bytes.
        unsafe {
            std::ptr::copy_nonoverlapping((&x as *const T).cast::<u8>(), out.as_mut_ptr(), T::SIZE)
        };
        out
    }
    crate::dispatch_type!(v.ty, T => one::<T>(v);
        char => vec![v.attr("_FillValue").and_then(|a| match &a.value {
            Values::Char(c) => c.first().copied(),
            _ => None,
        }).unwrap_or(0)];
        string => vec![0])
}

/// Values of type `ty` and length `n`, filled by `f` through their native bytes (no
/// copy: `f` writes into the vector the values are returned in).
fn with_values(ty: NcType, n: usize, f: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<Values> {
    fn typed<T: NcNum>(n: usize, f: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<Values> {
        let mut v: Vec<T> = vec![T::default(); n];
        // SAFETY: `T` is a plain number (integers, floats): every byte pattern is a
        // valid value, and the slice covers exactly the vector's `n` elements.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), n * T::SIZE) };
        f(bytes)?;
        Ok(T::into_values(v))
    }
    crate::dispatch_type!(ty, T => typed::<T>(n, f);
        char => {
            let mut v = vec![0u8; n];
            f(&mut v)?;
            Ok(Values::Char(v))
        };
        string => Err(Error::msg("strings are read by libnetcdf")))
}

/// The native bytes of numeric or character values (no copy).
fn ne_bytes(v: &Values) -> &[u8] {
    fn of<T: NcNum>(v: &Values) -> &[u8] {
        let s = T::slice_of(v).unwrap_or(&[]);
        // SAFETY: `T` is a plain number; the slice covers exactly the values' bytes.
        unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
    }
    crate::dispatch_type!(v.nc_type(), T => of::<T>(v);
        char => match v { Values::Char(c) => c.as_slice(), _ => &[] };
        string => &[])
}

/// An engine error on variable `var` of file `path`, for the user.
fn named(path: &str, var: &Var, e: impl std::fmt::Display) -> Error {
    named_var(path, &var.name, e)
}

/// [`named`] by the variable's name.
pub(crate) fn named_var(path: &str, name: &str, e: impl std::fmt::Display) -> Error {
    Error::Format {
        path: path.into(),
        reason: format!("variable {name}: {e}"),
    }
}

/// The rows of one chunk row ("band": `chunk[0]` rows along the first dimension, the
/// whole of the others) of a variable being written, gathered until complete.
struct Band {
    /// The band's values, native order, row-major.
    buf: Vec<u8>,
    /// Elements written so far.
    filled: usize,
    /// The pieces written: (multi-index of the first element, element offset in the
    /// band, elements, leading dimensions the piece was given with), to hand to
    /// libnetcdf if the band cannot be written whole.
    pieces: Vec<(Vec<usize>, usize, usize, usize)>,
}

/// A variable written by the engine: its storage as libhdf5 describes it once
/// libnetcdf has defined it, and its chunk rows in progress.
struct OutVar {
    desc: VarIndex,
    /// Elements in one row along the first dimension.
    row: usize,
    /// The first dimension's length, `None` when unlimited.
    rows: Option<usize>,
    /// Bands in progress, by band number.
    bands: std::collections::BTreeMap<usize, Band>,
    /// Written through libnetcdf from now on (too many bands in progress at once).
    lib: bool,
}

/// Encodes whole chunk rows of one variable of a netCDF-4 output on the thread that
/// computed them (shuffle, deflate, Fletcher-32 as libnetcdf defined the variable), so
/// that the writer only stores them ([`H5Writer::write_encoded`]): a computed
/// variable's chunks are deflated in parallel where they are made, and what waits for
/// the writer is the encoded chunks, not the values.
#[derive(Clone, Debug)]
pub struct RowsEncoder {
    var: usize,
    desc: VarIndex,
    /// Elements in one row along the first dimension.
    row: usize,
    /// The first dimension's length, `None` when unlimited.
    rows: Option<usize>,
    ty: NcType,
    path: String,
    name: String,
}

/// Chunk rows of one variable encoded by a [`RowsEncoder`], for
/// [`H5Writer::write_encoded`].
#[derive(Debug)]
pub struct EncodedPiece {
    /// The output's variable.
    pub var: usize,
    rows: nco_h5::write::EncodedRows,
}

impl EncodedPiece {
    /// The first row along the variable's first dimension.
    pub fn first(&self) -> usize {
        self.rows.first as usize
    }
}

impl RowsEncoder {
    /// `values` (of the variable's type, rows from `first` along its first dimension)
    /// encoded as the output's chunks when they are whole chunk rows: starting on a
    /// chunk boundary and ending on one (or at the end of a fixed first dimension).
    /// Otherwise the values themselves, for the writer. The values are freed as soon
    /// as the encoding no longer needs them (after the first filter of a single chunk).
    ///
    /// Errors: encoding failures (named with the file and variable).
    pub fn encode(&self, first: usize, values: Values) -> Result<crate::dataset::Piece> {
        use crate::dataset::Piece;
        let n = values.len();
        let c0 = self.desc.chunk[0] as usize;
        if values.nc_type() != self.ty || n == 0 || n % self.row != 0 || first % c0 != 0 {
            return Ok(Piece::Values(values));
        }
        let count = n / self.row;
        let end = first + count;
        let whole = match self.rows {
            Some(len) => end <= len && (count % c0 == 0 || end == len),
            None => count % c0 == 0,
        };
        if !whole {
            return Ok(Piece::Values(values));
        }
        let rows = nco_h5::write::encode_rows(&self.desc, first as u64, ValueBytes(values))
            .map_err(|e| named_var(&self.path, &self.name, e))?;
        Ok(Piece::Encoded(EncodedPiece {
            var: self.var,
            rows,
        }))
    }
}

/// Values seen as their native-order bytes.
struct ValueBytes(Values);

impl AsRef<[u8]> for ValueBytes {
    fn as_ref(&self) -> &[u8] {
        ne_bytes(&self.0)
    }
}

/// Bands of one variable in progress at once before its writes go to libnetcdf
/// instead (writes in an order that leaves chunk rows open).
const MAX_OPEN_BANDS: usize = 8;

/// The engine's side of a netCDF-4 output: chunked numeric and character variables
/// are gathered by chunk row, encoded (shuffle, deflate, Fletcher-32 as libnetcdf
/// defined them) in parallel and stored with HDF5's direct chunk write, through a
/// second libhdf5 handle on the file libnetcdf created (libhdf5 shares one open file
/// between handles). Everything else, and chunk rows left incomplete, goes through
/// libnetcdf.
pub struct H5Writer {
    h5: nco_h5::index::H5File,
    vars: Vec<Option<OutVar>>,
    path: String,
    /// Complete chunk rows not stored yet: (variable, first row, values), stored
    /// together once they hold [`pending_budget`] bytes, so that the chunks of many
    /// small variables (one or two chunks each) are encoded in parallel.
    pending: Vec<(usize, u64, Vec<u8>)>,
    pending_bytes: usize,
}

/// Bytes of complete chunk rows gathered before they are encoded and stored: 8 MiB per
/// thread (at least 16 MiB), a few chunks of NCO's default sizes per thread.
fn pending_budget() -> usize {
    (8usize << 20) * rayon::current_num_threads().max(2)
}

impl H5Writer {
    /// The engine's side of `path`, just created by libnetcdf with every definition of
    /// `meta` (define mode ended).
    ///
    /// Errors: libhdf5 cannot open the file (named).
    pub fn open(path: &Path, meta: &Meta) -> Result<H5Writer> {
        let h5 = nco_h5::index::H5File::open(path, true).map_err(|e| Error::Format {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let mut vars = Vec::with_capacity(meta.vars.len());
        for v in &meta.vars {
            vars.push(Self::out_var(&h5, meta, v));
        }
        Ok(H5Writer {
            h5,
            vars,
            path: path.display().to_string(),
            pending: Vec::new(),
            pending_bytes: 0,
        })
    }

    /// The engine's record of variable `v`, when the engine writes it: chunked, of a
    /// numeric or character type, with filters we encode.
    fn out_var(h5: &nco_h5::index::H5File, meta: &Meta, v: &Var) -> Option<OutVar> {
        // Direct writes go by rows of the first dimension: an unlimited dimension after
        // it (its extent still 0 while records come) is libnetcdf's.
        let later_unlimited = v.dims.iter().skip(1).any(|&d| meta.dims[d].unlimited);
        if v.ty == NcType::Str || v.dims.is_empty() || later_unlimited {
            return None;
        }
        let desc = h5
            .var(&h5_path(meta, v), nco_h5::index::IndexBy::None)
            .ok()
            .filter(|d| !d.contiguous && same_type(v.ty, d))?;
        let dims: Vec<&crate::model::Dim> = v.dims.iter().map(|&d| &meta.dims[d]).collect();
        let row = dims[1..].iter().map(|d| d.len).product();
        Some(OutVar {
            desc,
            row,
            rows: (!dims[0].unlimited).then_some(dims[0].len),
            bands: Default::default(),
            lib: false,
        })
    }

    /// Store variable `src_var` of `src` (of metadata `src_meta`) into `var` as its
    /// chunks are stored there, with no decoding and no encoding, when the engine
    /// writes `var`, nothing of it was written yet and both have the same chunks,
    /// filters and shape ([`nco_h5::index::H5File::can_copy_chunks`]). Returns false
    /// (nothing done) otherwise.
    ///
    /// Errors: a damaged input (named with its file and variable), HDF5 failures.
    pub fn copy_var_raw(
        &mut self,
        meta: &Meta,
        var: usize,
        src: &H5Reader,
        src_meta: &Meta,
        src_var: usize,
    ) -> Result<bool> {
        let Some(o) = self.vars[var]
            .as_mut()
            .filter(|o| !o.lib && o.bands.is_empty())
        else {
            return Ok(false);
        };
        let Some(x) = src.storage(src_meta, src_var)? else {
            return Ok(false);
        };
        let (sv, ov) = (&src_meta.vars[src_var], &meta.vars[var]);
        // The last chunk row along an unlimited dimension may hold stored bytes past the
        // extent (a file written without fill): copied, they would become values when
        // another program adds records. Such a variable is encoded again, its edge
        // padded with the fill value (found by a break test).
        let open_edge = ov.dims.first().is_some_and(|&d| meta.dims[d].unlimited)
            && x.shape
                .first()
                .zip(x.chunk.first())
                .is_some_and(|(n, c)| n % c != 0);
        if sv.ty != ov.ty
            || open_edge
            || src_meta.shape(sv) != meta.shape(ov)
            || !nco_h5::index::H5File::can_copy_chunks(&o.desc, x)
        {
            return Ok(false);
        }
        let r = self.h5.copy_chunks(&mut o.desc, x, &src.file);
        r.map_err(|e| Error::Format {
            path: src.file.path().display().to_string(),
            reason: format!("variable {}: {e}", sv.name),
        })?;
        // Written whole: a later piece (an append's new records over the copied ones)
        // writes over it, which libnetcdf does.
        o.lib = true;
        Ok(true)
    }

    /// An encoder of whole chunk rows of variable `var` for the threads that compute
    /// its values ([`RowsEncoder`]), when the engine writes `var`.
    pub fn encoder(&self, meta: &Meta, var: usize) -> Option<RowsEncoder> {
        let o = self.vars[var].as_ref().filter(|o| !o.lib && o.row > 0)?;
        let v = &meta.vars[var];
        Some(RowsEncoder {
            var,
            desc: o.desc.clone(),
            row: o.row,
            rows: o.rows,
            ty: v.ty,
            path: self.path.clone(),
            name: v.name.clone(),
        })
    }

    /// Store chunk rows a [`RowsEncoder`] of this output encoded. They must not have
    /// been written before in part (the encoder's caller writes each row range once).
    ///
    /// Errors: rows of a variable libnetcdf writes now or partly written already
    /// (internal errors), HDF5 failures (named).
    pub fn write_encoded(&mut self, meta: &Meta, e: EncodedPiece) -> Result<()> {
        let v = &meta.vars[e.var];
        let Some(o) = self.vars[e.var].as_mut().filter(|o| !o.lib) else {
            return Err(named(
                &self.path,
                v,
                "internal: encoded rows of a variable libnetcdf writes",
            ));
        };
        let c0 = o.desc.chunk[0] as usize;
        let first = e.rows.first as usize / c0;
        let rows = e.rows.bytes / (o.row * v.ty.size()).max(1);
        let last = (e.rows.first as usize + rows).div_ceil(c0);
        if o.bands.range(first..last).next().is_some() {
            return Err(named(
                &self.path,
                v,
                "internal: encoded rows over rows partly written",
            ));
        }
        self.h5
            .store_encoded(&mut o.desc, &e.rows)
            .map_err(|err| named(&self.path, v, err))
    }

    /// Whether the engine writes variable `var`.
    pub fn writes(&self, var: usize) -> bool {
        self.vars[var].as_ref().is_some_and(|o| !o.lib)
    }

    /// Write `values` (the variable's type) of variable `var` from the multi-index
    /// `first`, as [`crate::dataset::OutFile::write_at`] describes, into its chunk
    /// rows; complete chunk rows are encoded and stored. Returns false (nothing done)
    /// when the engine does not write `var`: libnetcdf must.
    ///
    /// Errors: a piece past the end of the variable; HDF5 failures (named); what
    /// libnetcdf says when a variable's pieces go to it.
    pub fn write_at(
        &mut self,
        lib: &mut crate::nc4::LibWriter,
        meta: &Meta,
        var: usize,
        first: &[usize],
        values: &Values,
    ) -> Result<bool> {
        let v = &meta.vars[var];
        let Some(o) = self.vars[var].as_mut().filter(|o| !o.lib) else {
            return Ok(false);
        };
        let lens: Vec<usize> = v.dims.iter().map(|&d| meta.dims[d].len).collect();
        let rank = lens.len();
        let k = first.len().clamp(1, rank);
        let inner: usize = lens[k..].iter().product();
        let n = values.len();
        if n == 0 {
            return Ok(true);
        }
        let bad = || {
            Error::var(
                &v.name,
                format!("a piece of {n} values at {first:?} is past the end of the variable"),
            )
        };
        let count = n
            .checked_div(inner)
            .filter(|c| c * inner == n)
            .ok_or_else(bad)?;
        for (i, &f) in first.iter().enumerate().take(k - 1) {
            if f >= lens[i] && !(i == 0 && o.rows.is_none()) {
                return Err(bad());
            }
        }
        let last = first.get(k - 1).copied().unwrap_or(0);
        if (k > 1 || o.rows.is_some()) && last + count > lens[k - 1] {
            return Err(bad());
        }
        // The piece's element offset in the variable (row-major), and its bytes.
        let mut stride = vec![1usize; rank];
        for i in (0..rank - 1).rev() {
            stride[i] = stride[i + 1] * lens[i + 1];
        }
        let start: usize = first.iter().take(k).zip(&stride).map(|(f, s)| f * s).sum();
        let bytes = ne_bytes(values);
        let es = v.ty.size();
        let c0 = o.desc.chunk[0] as usize;
        let band_elems = c0 * o.row;
        // A piece over elements already written (an append writing new records over
        // the old ones it copied first): the bands cannot tell the extent from the
        // count of elements written, so the variable goes through libnetcdf from now
        // on, which writes over what is there (the caller writes this piece).
        let overlaps = (start / band_elems..=(start + n - 1) / band_elems).any(|b| {
            let Some(band) = o.bands.get(&b) else {
                return false;
            };
            let lo = start.max(b * band_elems) - b * band_elems;
            let hi = (start + n).min((b + 1) * band_elems) - b * band_elems;
            band.pieces
                .iter()
                .any(|&(_, off, m, _)| lo < off + m && off < hi)
        });
        if overlaps {
            let bands = std::mem::take(&mut o.bands);
            o.lib = true;
            self.flush(meta)?;
            Self::to_lib(lib, v, var, bands)?;
            return Ok(false);
        }
        // Split along bands (a piece of whole rows may span several).
        let mut at = 0usize;
        while at < n {
            let e = start + at;
            let b = e / band_elems;
            let off = e - b * band_elems;
            let take = (band_elems - off).min(n - at);
            let rows_here = o.rows.map_or(c0, |r| c0.min(r - b * c0));
            let band = o.bands.entry(b).or_insert_with(|| Band {
                buf: vec![0u8; rows_here * o.row * es],
                filled: 0,
                pieces: Vec::new(),
            });
            if (off + take) * es > band.buf.len() {
                return Err(bad());
            }
            band.buf[off * es..(off + take) * es]
                .copy_from_slice(&bytes[at * es..(at + take) * es]);
            band.filled += take;
            // The piece's first multi-index, for libnetcdf if it comes to that.
            let mut idx = Vec::with_capacity(rank);
            let mut r = e;
            for s in &stride {
                idx.push(r / s);
                r %= s;
            }
            band.pieces.push((idx, off, take, k));
            if band.filled == band.buf.len() / es {
                let band = o.bands.remove(&b).expect("the band just filled");
                self.pending_bytes += band.buf.len();
                self.pending.push((var, (b * c0) as u64, band.buf));
            }
            at += take;
        }
        if o.bands.len() > MAX_OPEN_BANDS {
            // Written in an order that leaves chunk rows open: libnetcdf from now on.
            let bands = std::mem::take(&mut o.bands);
            o.lib = true;
            self.flush(meta)?;
            Self::to_lib(lib, v, var, bands)?;
        }
        if self.pending_bytes >= pending_budget() {
            self.flush(meta)?;
        }
        Ok(true)
    }

    /// Encode and store the complete chunk rows gathered (all variables' together, in
    /// parallel).
    ///
    /// Errors: HDF5 failures, naming the file and variable.
    fn flush(&mut self, meta: &Meta) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        for (var, first, buf) in &pending {
            let o = self.vars[*var]
                .as_mut()
                .expect("pending rows of an engine variable");
            self.h5
                .prepare_rows(&mut o.desc, *first, buf.len())
                .map_err(|e| named(&self.path, &meta.vars[*var], e))?;
        }
        let writes: Vec<nco_h5::write::RowsWrite> = pending
            .iter()
            .map(|(var, first, buf)| nco_h5::write::RowsWrite {
                var: &self.vars[*var].as_ref().expect("an engine variable").desc,
                first: *first,
                data: buf,
            })
            .collect();
        self.h5
            .write_many(&writes)
            .map_err(|(w, e)| named(&self.path, &meta.vars[pending[w].0], e))
    }

    /// Hand the pieces gathered in `bands` of variable `var` to libnetcdf.
    fn to_lib(
        lib: &mut crate::nc4::LibWriter,
        v: &Var,
        var: usize,
        bands: std::collections::BTreeMap<usize, Band>,
    ) -> Result<()> {
        let es = v.ty.size();
        for band in bands.into_values() {
            for (idx, off, n, k) in &band.pieces {
                let vals = crate::nc4::decode_ne(v.ty, &band.buf[off * es..(off + n) * es]);
                lib.write_at(var, &idx[..*k], &vals)?;
            }
        }
        Ok(())
    }

    /// Store what is left: the last, short chunk row of a variable along an unlimited
    /// dimension directly (its extent ends there), anything else incomplete through
    /// libnetcdf; then close the engine's handle (before libnetcdf closes the file).
    ///
    /// Errors: HDF5 or libnetcdf failures (named).
    pub fn finish(mut self, lib: &mut crate::nc4::LibWriter, meta: &Meta) -> Result<()> {
        let mut rests = Vec::new();
        for var in 0..self.vars.len() {
            let Some(o) = self.vars[var].as_mut() else {
                continue;
            };
            let v = &meta.vars[var];
            let es = v.ty.size();
            let c0 = o.desc.chunk[0] as usize;
            let bands = std::mem::take(&mut o.bands);
            let mut rest = std::collections::BTreeMap::new();
            let last = bands.keys().next_back().copied();
            for (b, band) in bands {
                // A prefix of whole rows of the last band of a record variable.
                let rows = band.filled / o.row.max(1);
                let prefix = o.rows.is_none()
                    && Some(b) == last
                    && rows * o.row == band.filled
                    && band
                        .pieces
                        .iter()
                        .all(|(_, off, n, _)| off + n <= band.filled);
                if prefix && rows > 0 {
                    let mut data = band.buf;
                    data.truncate(rows * o.row * es);
                    self.pending_bytes += data.len();
                    self.pending.push((var, (b * c0) as u64, data));
                } else {
                    rest.insert(b, band);
                }
            }
            if !rest.is_empty() {
                rests.push((var, rest));
            }
        }
        // Chunk rows stored directly first, then the pieces libnetcdf writes (other
        // chunks of the same variables).
        self.flush(meta)?;
        for (var, rest) in rests {
            Self::to_lib(lib, &meta.vars[var], var, rest)?;
        }
        drop(self);
        Ok(())
    }
}
