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
pub fn h5_path(v: &Var) -> String {
    format!("/{}", v.name)
}

/// libnetcdf's name for the dataset of a variable that has a dimension's name without
/// being its coordinate variable (the dimension scale takes the plain name).
fn non_coord_path(v: &Var) -> String {
    format!("/_nc4_non_coord_{}", v.name)
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
    pub fn open(path: &str, meta: &Meta) -> Result<H5Reader> {
        let file = nco_h5::File::open(path).map_err(|e| Error::Format {
            path: path.into(),
            reason: e.to_string(),
        })?;
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
            .dims
            .iter()
            .position(|d| d.name == v.name)
            .is_some_and(|d| v.dims.first() != Some(&d));
        let paths = if non_coord {
            [non_coord_path(v), h5_path(v)]
        } else {
            [h5_path(v), non_coord_path(v)]
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
                        path: self.file.path().into(),
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
            path: self.file.path().into(),
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
