//! The in-memory metadata model of a netCDF dataset (root group): dimensions,
//! variables, attributes and the on-disk format. Both backends (our classic-format
//! reader and libnetcdf) fill this model; writers take it.
//!
//! Source: netCDF User Guide, "The netCDF Data Model" (classic model; groups and
//! user-defined types of the enhanced model are not represented).

use crate::types::{NcType, Values};

/// On-disk format of a netCDF file (`ncdump -k` names in the docs of each variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// CDF-1, "classic" (`-3`, `--fl_fmt=classic`).
    Classic,
    /// CDF-2, "64-bit offset" (`-6`, `--fl_fmt=64bit_offset`).
    Offset64,
    /// CDF-5, "cdf5" / 64-bit data (`-5`, `--fl_fmt=64bit_data`).
    Cdf5,
    /// HDF5-based "netCDF-4" (`-4`, `--fl_fmt=netcdf4`).
    Netcdf4,
    /// HDF5-based "netCDF-4 classic model" (`-7`, `--fl_fmt=netcdf4_classic`).
    Netcdf4Classic,
}

impl Format {
    /// True for CDF-1/2/5 (the formats our own reader and writer handle).
    pub fn is_classic_family(self) -> bool {
        matches!(self, Format::Classic | Format::Offset64 | Format::Cdf5)
    }

    /// True for the HDF5-based formats (chunking and deflate apply).
    pub fn is_netcdf4(self) -> bool {
        matches!(self, Format::Netcdf4 | Format::Netcdf4Classic)
    }

    /// The name `ncdump -k` prints.
    pub fn kind_name(self) -> &'static str {
        match self {
            Format::Classic => "classic",
            Format::Offset64 => "64-bit offset",
            Format::Cdf5 => "cdf5",
            Format::Netcdf4 => "netCDF-4",
            Format::Netcdf4Classic => "netCDF-4 classic model",
        }
    }

    /// True when `ty` can be stored in this format (the extended integer types and
    /// NC_STRING need CDF-5 or netCDF-4; NC_STRING needs netCDF-4).
    pub fn supports(self, ty: NcType) -> bool {
        match self {
            Format::Classic | Format::Offset64 | Format::Netcdf4Classic => ty.is_classic(),
            Format::Cdf5 => ty != NcType::Str,
            Format::Netcdf4 => true,
        }
    }
}

/// A dimension: name, current length, and whether it is the unlimited (record) dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    /// Name.
    pub name: String,
    /// Current length in elements (for the record dimension: the number of records).
    pub len: usize,
    /// True for an unlimited (record) dimension.
    pub unlimited: bool,
}

/// An attribute: a name and a typed value (text as NC_CHAR bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// Name.
    pub name: String,
    /// Value; NC_CHAR for text.
    pub value: Values,
}

impl Attr {
    /// A text (NC_CHAR) attribute.
    pub fn text(name: &str, s: &str) -> Attr {
        Attr {
            name: name.to_string(),
            value: Values::Char(s.as_bytes().to_vec()),
        }
    }
}

/// Storage settings of a netCDF-4 variable (ignored for classic files).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Storage {
    /// Chunk sizes in elements, one per dimension; `None` for contiguous storage.
    pub chunks: Option<Vec<usize>>,
    /// Deflate level 0..=9; 0 or `None` for no compression.
    pub deflate: Option<i32>,
    /// Byte-shuffle filter.
    pub shuffle: bool,
}

/// A variable's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Name.
    pub name: String,
    /// External type.
    pub ty: NcType,
    /// Dimensions, as indices into [`Meta::dims`], slowest-varying first.
    pub dims: Vec<usize>,
    /// Attributes in file order.
    pub attrs: Vec<Attr>,
    /// netCDF-4 storage (chunking, deflate); default for classic files.
    pub storage: Storage,
}

impl Var {
    /// The attribute called `name` (exact match).
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// Text of a character attribute `name`.
    pub fn attr_text(&self, name: &str) -> Option<String> {
        self.attr(name).and_then(|a| a.value.as_text())
    }

    /// Set (replace or add) an attribute.
    pub fn set_attr(&mut self, attr: Attr) {
        set_attr(&mut self.attrs, attr);
    }

    /// Remove an attribute; true when it was present.
    pub fn remove_attr(&mut self, name: &str) -> bool {
        let n = self.attrs.len();
        self.attrs.retain(|a| a.name != name);
        n != self.attrs.len()
    }
}

/// Replace the attribute of the same name in `attrs`, or append it.
pub fn set_attr(attrs: &mut Vec<Attr>, attr: Attr) {
    if let Some(a) = attrs.iter_mut().find(|a| a.name == attr.name) {
        *a = attr;
    } else {
        attrs.push(attr);
    }
}

/// Metadata of a whole dataset (root group).
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// On-disk format.
    pub format: Format,
    /// Dimensions in definition order.
    pub dims: Vec<Dim>,
    /// Variables in definition order.
    pub vars: Vec<Var>,
    /// Global attributes in file order.
    pub attrs: Vec<Attr>,
}

impl Meta {
    /// An empty dataset of the given format.
    pub fn new(format: Format) -> Meta {
        Meta {
            format,
            dims: Vec::new(),
            vars: Vec::new(),
            attrs: Vec::new(),
        }
    }

    /// Index of the dimension called `name`.
    pub fn dim_id(&self, name: &str) -> Option<usize> {
        self.dims.iter().position(|d| d.name == name)
    }

    /// Index of the variable called `name`.
    pub fn var_id(&self, name: &str) -> Option<usize> {
        self.vars.iter().position(|v| v.name == name)
    }

    /// The variable called `name`.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Index of the record (unlimited) dimension, if any (the first one for netCDF-4).
    pub fn record_dim(&self) -> Option<usize> {
        self.dims.iter().position(|d| d.unlimited)
    }

    /// Shape of variable `v` in elements, slowest first.
    pub fn shape(&self, v: &Var) -> Vec<usize> {
        v.dims.iter().map(|&d| self.dims[d].len).collect()
    }

    /// Number of elements of variable `v` (1 for a scalar).
    pub fn var_len(&self, v: &Var) -> usize {
        v.dims.iter().map(|&d| self.dims[d].len).product()
    }

    /// True when `v`'s first dimension is a record (unlimited) dimension.
    pub fn is_record_var(&self, v: &Var) -> bool {
        v.dims.first().is_some_and(|&d| self.dims[d].unlimited)
    }

    /// True when `v` is a coordinate variable: one dimension, named like it
    /// (netCDF User Guide, "Coordinate Variables").
    pub fn is_coord_var(&self, v: &Var) -> bool {
        v.dims.len() == 1 && self.dims[v.dims[0]].name == v.name
    }

    /// Global attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }
}
