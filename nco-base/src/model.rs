//! The in-memory metadata model of a netCDF dataset: a tree of groups with their
//! dimensions, variables and attributes, and the on-disk format. Both backends (our
//! classic-format reader and libnetcdf) fill this model; writers take it.
//!
//! The tree is kept flat: [`Meta::groups`] lists every group, the root first (index 0),
//! each naming its parent; [`Meta::dims`] and [`Meta::vars`] list the dimensions and
//! variables of all groups, each naming its group ([`Dim::group`], [`Var::group`]).
//! A variable's dimensions are indices into [`Meta::dims`] and may belong to its group
//! or to an ancestor (netCDF scoping: a dimension is visible in the group that defines
//! it and in every group below, unless an inner group defines one of the same name).
//! A file without groups (every classic file) has only the root group, and everything
//! in it has group 0: code that ignores groups sees the classic model unchanged.
//!
//! Source: netCDF User Guide, "The netCDF Data Model" and "Groups" (the enhanced model;
//! user-defined types are not represented).

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

/// A dimension: name, current length, whether it is unlimited (a record dimension),
/// and the group defining it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    /// Name (short, without the group path).
    pub name: String,
    /// Current length in elements (for the record dimension: the number of records).
    pub len: usize,
    /// True for an unlimited (record) dimension.
    pub unlimited: bool,
    /// The group defining it (index into [`Meta::groups`]; 0 is the root).
    pub group: usize,
}

impl Dim {
    /// A dimension of the root group.
    pub fn new(name: &str, len: usize, unlimited: bool) -> Dim {
        Dim {
            name: name.to_string(),
            len,
            unlimited,
            group: 0,
        }
    }
}

/// A group: its name, its parent and its attributes (netCDF-4; classic files have the
/// root group only).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Group {
    /// Name (empty for the root group).
    pub name: String,
    /// The parent group (index into [`Meta::groups`]); `None` for the root.
    pub parent: Option<usize>,
    /// The group's attributes; always empty for the root, whose attributes (the global
    /// attributes) are [`Meta::attrs`].
    pub attrs: Vec<Attr>,
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

/// Storage settings of a netCDF-4 variable (ignored for classic files): what a reader
/// found and what a writer applies, whichever backend (libnetcdf or our own HDF5 chunk
/// engine) does the work.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Storage {
    /// Chunk sizes in elements, one per dimension; `None` for contiguous storage (or,
    /// for a variable that must be chunked, the library's default chunks).
    pub chunks: Option<Vec<usize>>,
    /// Deflate level 0..=9; 0 or `None` for no compression.
    pub deflate: Option<i32>,
    /// Byte-shuffle filter.
    pub shuffle: bool,
    /// Fletcher-32 checksum of each chunk (kept from the input as NCO 5.1.4 keeps it,
    /// dropped when a compression option says how to store the variable).
    pub fletcher32: bool,
    /// Quantization of the values before they are stored (NCO's `--ppc`, which applies
    /// to netCDF3 outputs too); `None` for values stored as given. Writers carry it
    /// out through the filter the planning layer registers for the variable; readers
    /// never set it (a quantized file is recognized by its attributes only).
    pub quantize: Option<Quantize>,
}

/// A bit-adjustment algorithm of NCO's precision-preserving compression (`--baa N`,
/// NCO 5.1.4's numbering; NCO manual, "Precision-Preserving Compression"). Each keeps a
/// number of significant digits (NSD), except [`QuantizeAlgorithm::HalfShave`] and
/// [`QuantizeAlgorithm::BitRound`], which keep a number of explicit significand bits
/// (NSB).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QuantizeAlgorithm {
    /// 0: shave the insignificant bits of even elements, set those of odd ones.
    BitGroom,
    /// 1: shave (zero) the insignificant bits.
    BitShave,
    /// 2: set (to one) the insignificant bits.
    BitSet,
    /// 3: Digit Rounding (Delaunay et al. 2019): a per-value quantum from a table of
    /// decimal logarithms.
    DigitRound,
    /// 4, NCO 5.1.4's default: Granular BitRound, bits kept per value, IEEE rounding.
    #[default]
    GranularBitRound,
    /// 5: IEEE rounding of the significand to the bits BitGroom keeps.
    BitGroomRound,
    /// 6: shave, then set the most significant of the shaved bits (NSB).
    HalfShave,
    /// 7: BitGroom refined one bit at a time while within the error bound.
    BruteForce,
    /// 8: IEEE rounding to NSB explicit bits (Klöwer et al. 2021).
    BitRound,
}

impl QuantizeAlgorithm {
    /// Every algorithm, in NCO's `--baa` order (index = number).
    pub const ALL: [QuantizeAlgorithm; 9] = [
        QuantizeAlgorithm::BitGroom,
        QuantizeAlgorithm::BitShave,
        QuantizeAlgorithm::BitSet,
        QuantizeAlgorithm::DigitRound,
        QuantizeAlgorithm::GranularBitRound,
        QuantizeAlgorithm::BitGroomRound,
        QuantizeAlgorithm::HalfShave,
        QuantizeAlgorithm::BruteForce,
        QuantizeAlgorithm::BitRound,
    ];

    /// True for the algorithms whose precision counts significand bits (NSB), not
    /// decimal digits.
    pub fn counts_bits(self) -> bool {
        matches!(
            self,
            QuantizeAlgorithm::HalfShave | QuantizeAlgorithm::BitRound
        )
    }

    /// The name of the attribute NCO 5.1.4 records the precision in, on each variable
    /// it quantizes with this algorithm (`QuantizeGranularBitRoundNumberOfSignificantDigits`...;
    /// HalfShave's says "Digits" though it counts bits, as NCO 5.1.4 writes it).
    pub fn attr_name(self) -> &'static str {
        match self {
            QuantizeAlgorithm::BitGroom => "QuantizeBitGroomNumberOfSignificantDigits",
            QuantizeAlgorithm::BitShave => "QuantizeBitShaveNumberOfSignificantDigits",
            QuantizeAlgorithm::BitSet => "QuantizeBitSetNumberOfSignificantDigits",
            QuantizeAlgorithm::DigitRound => "QuantizeDigitRoundNumberOfSignificantDigits",
            QuantizeAlgorithm::GranularBitRound => {
                "QuantizeGranularBitRoundNumberOfSignificantDigits"
            }
            QuantizeAlgorithm::BitGroomRound => "QuantizeBitGroomRoundNumberOfSignificantDigits",
            QuantizeAlgorithm::HalfShave => "QuantizeHalfShaveNumberOfSignificantDigits",
            QuantizeAlgorithm::BruteForce => "QuantizeBruteForceNumberOfSignificantDigits",
            QuantizeAlgorithm::BitRound => "QuantizeBitRoundNumberOfSignificantBits",
        }
    }
}

/// The precision a quantized variable keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Significant digits (or, for [`QuantizeAlgorithm::counts_bits`], explicit
    /// significand bits), at least 1: `--ppc T=3`. Floating-point types only.
    Significant(i32),
    /// Decimal significant digits: digits after the decimal point, negative for digits
    /// before it (`--ppc T=.2` keeps hundredths, `T=.-2` hundreds), by rounding to a
    /// power of two (integer types too, with negative values only).
    Decimal(i32),
}

/// How a variable is quantized: the algorithm of significant-digit precisions and the
/// precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantize {
    /// The algorithm ([`Precision::Decimal`] always rounds, whatever it is).
    pub algorithm: QuantizeAlgorithm,
    /// The precision kept.
    pub precision: Precision,
}

impl Quantize {
    /// The attribute NCO 5.1.4 records this quantization in, and its value:
    /// `least_significant_digit` for decimal precisions, the algorithm's
    /// ([`QuantizeAlgorithm::attr_name`]) otherwise.
    pub fn attr(&self) -> (&'static str, i32) {
        match self.precision {
            Precision::Decimal(d) => ("least_significant_digit", d),
            Precision::Significant(n) => (self.algorithm.attr_name(), n),
        }
    }
}

impl Storage {
    /// True when the variable is compressed (deflate level above 0).
    pub fn is_compressed(&self) -> bool {
        self.deflate.is_some_and(|l| l > 0)
    }
}

/// A variable's metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Name (short, without the group path: [`Meta::var_path`] gives the full one).
    pub name: String,
    /// External type.
    pub ty: NcType,
    /// Dimensions, as indices into [`Meta::dims`], slowest-varying first.
    pub dims: Vec<usize>,
    /// Attributes in file order.
    pub attrs: Vec<Attr>,
    /// netCDF-4 storage (chunking, deflate); default for classic files.
    pub storage: Storage,
    /// The group holding it (index into [`Meta::groups`]; 0 is the root).
    pub group: usize,
}

impl Var {
    /// A variable of the root group, without attributes, with default storage.
    pub fn new(name: &str, ty: NcType, dims: Vec<usize>) -> Var {
        Var {
            name: name.to_string(),
            ty,
            dims,
            attrs: Vec::new(),
            storage: Storage::default(),
            group: 0,
        }
    }

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

/// Metadata of a whole dataset: every group, dimension and variable (see the module
/// notes for how the tree is kept).
#[derive(Clone, Debug, PartialEq)]
pub struct Meta {
    /// On-disk format.
    pub format: Format,
    /// Dimensions of every group, in definition order (a group's before its
    /// subgroups').
    pub dims: Vec<Dim>,
    /// Variables of every group, in definition order (a group's before its
    /// subgroups').
    pub vars: Vec<Var>,
    /// Global attributes (the root group's) in file order.
    pub attrs: Vec<Attr>,
    /// Every group, the root first; a parent always comes before its subgroups.
    pub groups: Vec<Group>,
}

impl Meta {
    /// An empty dataset of the given format (the root group only).
    pub fn new(format: Format) -> Meta {
        Meta {
            format,
            dims: Vec::new(),
            vars: Vec::new(),
            attrs: Vec::new(),
            groups: vec![Group::default()],
        }
    }

    /// True when the dataset has groups besides the root.
    pub fn has_groups(&self) -> bool {
        self.groups.len() > 1
    }

    /// Add group `name` under `parent` and return its index (an existing group of that
    /// name and parent is returned as it is).
    pub fn add_group(&mut self, parent: usize, name: &str) -> usize {
        if let Some(g) = self.child_group(parent, name) {
            return g;
        }
        self.groups.push(Group {
            name: name.to_string(),
            parent: Some(parent),
            attrs: Vec::new(),
        });
        self.groups.len() - 1
    }

    /// The subgroup `name` of `parent`.
    pub fn child_group(&self, parent: usize, name: &str) -> Option<usize> {
        (1..self.groups.len())
            .find(|&g| self.groups[g].parent == Some(parent) && self.groups[g].name == name)
    }

    /// The subgroups of `g`, in definition order.
    pub fn subgroups(&self, g: usize) -> Vec<usize> {
        (1..self.groups.len())
            .filter(|&c| self.groups[c].parent == Some(g))
            .collect()
    }

    /// Full path of group `g`: `/` for the root, `/model/diag` for a nested group.
    pub fn group_path(&self, g: usize) -> String {
        let mut names = Vec::new();
        let mut at = Some(g);
        while let Some(i) = at.filter(|&i| i != 0) {
            names.push(self.groups[i].name.as_str());
            at = self.groups[i].parent;
        }
        names.reverse();
        format!("/{}", names.join("/"))
    }

    /// `name` prefixed with the full path of group `g` (`/tas`, `/model/ta`).
    pub fn path_in(&self, g: usize, name: &str) -> String {
        let p = self.group_path(g);
        if p == "/" {
            format!("/{name}")
        } else {
            format!("{p}/{name}")
        }
    }

    /// Full path of variable `v` (`/tas`, `/model/diag/pr`).
    pub fn var_path(&self, v: usize) -> String {
        self.path_in(self.vars[v].group, &self.vars[v].name)
    }

    /// How messages and per-variable tables name variable `v`: its name in the root
    /// group (`tas`, as for files without groups), its full path elsewhere
    /// (`/model/diag/tas`); [`Meta::var_id`] finds it again from either.
    pub fn var_ref(&self, v: usize) -> String {
        match self.vars[v].group {
            0 => self.vars[v].name.clone(),
            _ => self.var_path(v),
        }
    }

    /// Full path of dimension `d` (`/time`, `/obs/station`).
    pub fn dim_path(&self, d: usize) -> String {
        self.path_in(self.dims[d].group, &self.dims[d].name)
    }

    /// The group at full path `path` (`/`, `/model`, `/model/diag`; a trailing `/` is
    /// allowed).
    pub fn group_by_path(&self, path: &str) -> Option<usize> {
        let mut g = 0;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            g = self.child_group(g, part)?;
        }
        Some(g)
    }

    /// True when group `g` is `ancestor` or lies below it.
    pub fn is_within(&self, g: usize, ancestor: usize) -> bool {
        let mut at = Some(g);
        while let Some(i) = at {
            if i == ancestor {
                return true;
            }
            at = self.groups[i].parent;
        }
        false
    }

    /// Depth of group `g` (0 for the root).
    pub fn depth(&self, g: usize) -> usize {
        let mut n = 0;
        let mut at = self.groups[g].parent;
        while let Some(i) = at {
            n += 1;
            at = self.groups[i].parent;
        }
        n
    }

    /// The attributes of group `g` (the global attributes for the root).
    pub fn group_attrs(&self, g: usize) -> &[Attr] {
        if g == 0 {
            &self.attrs
        } else {
            &self.groups[g].attrs
        }
    }

    /// Mutable attributes of group `g` (the global attributes for the root).
    pub fn group_attrs_mut(&mut self, g: usize) -> &mut Vec<Attr> {
        if g == 0 {
            &mut self.attrs
        } else {
            &mut self.groups[g].attrs
        }
    }

    /// The dimension called `name` as seen from group `g`: defined in `g` or, failing
    /// that, in its nearest ancestor that defines one (netCDF scoping).
    pub fn dim_in_scope(&self, g: usize, name: &str) -> Option<usize> {
        let mut at = Some(g);
        while let Some(i) = at {
            if let Some(d) = self
                .dims
                .iter()
                .position(|d| d.group == i && d.name == name)
            {
                return Some(d);
            }
            at = self.groups[i].parent;
        }
        None
    }

    /// The variable called `name` as seen from group `g`: in `g` or, failing that, in
    /// its nearest ancestor holding one (how NCO resolves the names in CF attributes
    /// such as `coordinates` and `bounds`).
    pub fn var_in_scope(&self, g: usize, name: &str) -> Option<usize> {
        if name.starts_with('/') {
            return self.var_id(name);
        }
        let mut at = Some(g);
        while let Some(i) = at {
            if let Some(v) = self.var_in(i, name) {
                return Some(v);
            }
            at = self.groups[i].parent;
        }
        None
    }

    /// The variable called `name` in group `g` (that group only).
    pub fn var_in(&self, g: usize, name: &str) -> Option<usize> {
        self.vars
            .iter()
            .position(|v| v.group == g && v.name == name)
    }

    /// Index of the dimension `name`: a full path (`/obs/station`) names one dimension;
    /// a short name is looked up in the root group first, then in the other groups in
    /// definition order.
    pub fn dim_id(&self, name: &str) -> Option<usize> {
        if name.starts_with('/') {
            let (g, short) = self.split_path(name)?;
            return self
                .dims
                .iter()
                .position(|d| d.group == g && d.name == short);
        }
        self.dims
            .iter()
            .position(|d| d.group == 0 && d.name == name)
            .or_else(|| self.dims.iter().position(|d| d.name == name))
    }

    /// Index of the variable `name`: a full path (`/model/ta`) names one variable; a
    /// short name is looked up in the root group first, then in the other groups in
    /// definition order.
    pub fn var_id(&self, name: &str) -> Option<usize> {
        if name.starts_with('/') {
            let (g, short) = self.split_path(name)?;
            return self.var_in(g, short);
        }
        self.var_in(0, name)
            .or_else(|| self.vars.iter().position(|v| v.name == name))
    }

    /// The variable of this dataset at the full path of variable `v` of `other`: how the
    /// multi-file operators match a variable of their first input in the others (by
    /// path, so `/tas` and `/model/diag/tas` stay apart; for files without groups, by
    /// name).
    pub fn var_like(&self, other: &Meta, v: usize) -> Option<usize> {
        let var = &other.vars[v];
        if var.group == 0 {
            return self.var_in(0, &var.name);
        }
        self.var_id(&other.var_path(v))
    }

    /// The dimension of this dataset at the full path of dimension `d` of `other` (see
    /// [`Meta::var_like`]).
    pub fn dim_like(&self, other: &Meta, d: usize) -> Option<usize> {
        self.dim_id(&other.dim_path(d))
    }

    /// The variable `name` (as [`Meta::var_id`] finds it).
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.var_id(name).map(|i| &self.vars[i])
    }

    /// Split a full path into its group and the last name (`/model/ta` -> (model, "ta")).
    fn split_path<'a>(&self, path: &'a str) -> Option<(usize, &'a str)> {
        let (dir, short) = path.rsplit_once('/')?;
        Some((self.group_by_path(dir)?, short))
    }

    /// The coordinate variable of dimension `d`: the variable of `d`'s group named like
    /// it, with `d` as its only dimension.
    pub fn coord_var(&self, d: usize) -> Option<usize> {
        let dim = &self.dims[d];
        self.var_in(dim.group, &dim.name)
            .filter(|&v| self.vars[v].dims == [d])
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

    /// True when `v` is a coordinate variable: one dimension, named like it and
    /// defined in its group (netCDF User Guide, "Coordinate Variables").
    pub fn is_coord_var(&self, v: &Var) -> bool {
        v.dims.len() == 1 && {
            let d = &self.dims[v.dims[0]];
            d.name == v.name && d.group == v.group
        }
    }

    /// Global attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The variable whose `bounds` or `climatology` attribute names variable `v` (of
    /// the same group): the coordinate `v` bounds (CF §7.1, §7.4), whose units and
    /// calendar `v` takes when it has none.
    pub fn bounded_by(&self, v: usize) -> Option<&Var> {
        let var = &self.vars[v];
        self.vars.iter().find(|c| {
            c.group == var.group
                && ["bounds", "climatology"]
                    .iter()
                    .any(|a| c.attr_text(a).as_deref().map(str::trim) == Some(var.name.as_str()))
        })
    }
}
