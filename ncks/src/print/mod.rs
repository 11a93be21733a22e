//! ncks printing: CDL (NCO 5's default), traditional (`--trd`), JSON, and NcML
//! (`--xml`, [`ncml`]), with `-H`
//! data, `-m` variable metadata, `-M` global metadata, `-s FORMAT`, `-u` units,
//! `--no_blank`. Layouts and number formats follow NCO 5.1.4's output (checked by
//! differential tests against it): CDL floats `%.7g`, doubles `%.15g`; traditional
//! floats `%g`, doubles `%.12g`; missing values (`_FillValue`) print as `_`.

use std::collections::HashMap;
use std::io::Write;

use nco_core::calendar::{DateStyle, TimeUnits};
use nco_core::cfmt::{format_g, Arg, CFormat};
use nco_core::dataset::Dataset;
use nco_core::hyperslab::Selection;
use nco_core::model::{Attr, Meta, Var};
use nco_core::types::{NcType, Values};
use nco_core::{Error, Result};

mod ncml;
pub use ncml::NcmlOptions;

/// Printing style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// CDL, as `ncdump` and NCO 5 print it.
    Cdl,
    /// NCO's traditional `name[i]=value` lines.
    Trd,
    /// JSON.
    Json,
    /// NcML (`--xml`).
    Xml,
}

/// What to print.
#[derive(Clone, Debug)]
pub struct PrintOptions {
    /// Style.
    pub style: Style,
    /// `-H`: data.
    pub data: bool,
    /// `-m`: variable metadata.
    pub var_meta: bool,
    /// `-M`: global metadata.
    pub global_meta: bool,
    /// `-u` (or the default all-on mode): units after values (traditional style).
    pub units: bool,
    /// `-s`: printf format for each value.
    pub format: Option<CFormat>,
    /// `--no_blank`: print missing values as numbers.
    pub no_blank: bool,
    /// `-Q`: no dimension indices in traditional data lines.
    pub quiet_indices: bool,
    /// `-V`: values only.
    pub values_only: bool,
    /// Name printed after `netcdf` (the file's stem).
    pub name: String,
    /// Groups shown even when none of their variables is printed (with their
    /// attributes): those `-g` selects when no `-v` is given, as in a copy.
    pub groups: Vec<usize>,
    /// `--cal` / `--dt_fmt`: CDL data of variables with time units as dates.
    pub dates: Option<DateStyle>,
    /// Dates in traditional and JSON prints too: NCO 5.1.4 prints them there only
    /// when no `-H`, `-m`, `-M` or `-P` chose what to print.
    pub dates_everywhere: bool,
    /// `--rad`: every dimension of a printed group, used or not.
    pub all_dims: bool,
    /// `--jsn_fmt`: JSON verbosity: `shape` and `type` of variables unless the level
    /// is 0 or 4; flat data arrays (no nested brackets) when 4 is added.
    pub json_format: u8,
    /// `--hdn`: the hidden attributes of a netCDF-4 file ([`Hidden::of`]).
    pub hidden: Option<Hidden>,
    /// `--fmt_val`: printf format of float and double data (not attributes) in CDL, NcML and
    /// JSON, trailing zeros of the decimals then trimmed
    /// ([`nco_core::cfmt::trim_trailing_zeros`]), as NCO 5.1.4 prints them; `-s` wins.
    pub value_format: Option<CFormat>,
    /// NcML's options (`--xml` style).
    pub ncml: NcmlOptions,
}

/// The hidden (special) attributes `--hdn` prints after the others (NCO 5.1.4's
/// names, order and rules; none for netCDF3 files): the root group's file-level ones,
/// and per variable the storage libnetcdf reports.
#[derive(Clone, Debug, Default)]
pub struct Hidden {
    /// Root group: `_Format`, `_SOURCE_FORMAT`, `_NCProperties`, `_IsNetcdf4`,
    /// `_SuperblockVersion`.
    pub globals: Vec<Attr>,
    /// Per variable: its byte order (`None`: one-byte types, strings).
    pub endianness: Vec<Option<&'static str>>,
}

impl Hidden {
    /// Those of `ds`.
    ///
    /// Errors: libnetcdf's.
    pub fn of(ds: &Dataset) -> Result<Hidden> {
        let (globals, endianness) = ds.hidden_attributes()?;
        Ok(Hidden {
            globals,
            endianness,
        })
    }

    /// Variable `v`'s: `_Storage` (not for scalars), `_ChunkSizes`, `_DeflateLevel`,
    /// `_Shuffle`, `_Endianness`, each when it applies.
    fn of_var(&self, m: &Meta, v: usize) -> Vec<Attr> {
        if !m.format.is_netcdf4() {
            return Vec::new();
        }
        let var = &m.vars[v];
        let mut out = Vec::new();
        if !var.dims.is_empty() {
            let kind = if var.storage.chunks.is_some() {
                "chunked"
            } else {
                "contiguous"
            };
            out.push(Attr::text("_Storage", kind));
        }
        if let Some(c) = &var.storage.chunks {
            let sizes = c.iter().map(|&x| x as i32).collect();
            out.push(Attr {
                name: "_ChunkSizes".into(),
                value: Values::Int(sizes),
            });
        }
        if let Some(l) = var.storage.deflate.filter(|&l| l > 0) {
            out.push(Attr {
                name: "_DeflateLevel".into(),
                value: Values::Int(vec![l]),
            });
        }
        if var.storage.shuffle {
            out.push(Attr::text("_Shuffle", "true"));
        }
        if var.storage.fletcher32 {
            out.push(Attr::text("_Fletcher32", "true"));
        }
        if let Some(e) = self.endianness.get(v).copied().flatten() {
            out.push(Attr::text("_Endianness", e));
        }
        out
    }
}

/// Variable `v`'s attributes as printed: its own, then the hidden ones with `--hdn`
/// (in NcML only `_ChunkSizes`, as NCO 5.1.4 prints them there).
fn var_attrs<'a>(o: &PrintOptions, m: &'a Meta, v: usize) -> std::borrow::Cow<'a, [Attr]> {
    match &o.hidden {
        Some(h) => {
            let mut a = m.vars[v].attrs.clone();
            let xml = o.style == Style::Xml;
            a.extend(
                h.of_var(m, v)
                    .into_iter()
                    .filter(|x| !xml || x.name == "_ChunkSizes"),
            );
            std::borrow::Cow::Owned(a)
        }
        None => std::borrow::Cow::Borrowed(&m.vars[v].attrs),
    }
}

/// Group `g`'s attributes as printed: the root's followed by the hidden ones with
/// `--hdn` (none in NcML, as NCO 5.1.4).
fn group_attrs<'a>(o: &PrintOptions, m: &'a Meta, g: usize) -> std::borrow::Cow<'a, [Attr]> {
    match &o.hidden {
        Some(h) if g == 0 && o.style != Style::Xml && !h.globals.is_empty() => {
            let mut a = m.group_attrs(g).to_vec();
            a.extend(h.globals.iter().cloned());
            std::borrow::Cow::Owned(a)
        }
        _ => std::borrow::Cow::Borrowed(m.group_attrs(g)),
    }
}

fn io(e: std::io::Error) -> Error {
    Error::io("standard output", e)
}

/// Bytes of values printing holds at once: a variable is read and printed in blocks
/// of about this size along its first dimension, so memory does not grow with it.
const PRINT_BLOCK_BYTES: usize = 4 << 20;

/// Read the hyperslab `idx` (per-dimension index lists) of variable `v` in order, in
/// blocks of whole rows of its first dimension of about [`PRINT_BLOCK_BYTES`] each
/// ([`Dataset::read_blocks`]: at least one row, ending on chunk boundaries of a
/// chunked variable), and give each block to `each`. A scalar is one block; a
/// selection with no elements gives none.
///
/// Errors: read errors, and whatever `each` returns (a closed standard output ends
/// the reading at once).
fn for_each_block(
    ds: &Dataset,
    v: usize,
    idx: &[Vec<usize>],
    mut each: impl FnMut(&Values) -> Result<()>,
) -> Result<()> {
    ds.read_blocks(v, idx, PRINT_BLOCK_BYTES, |_, vals| each(&vals))
}

/// Print `vars` (input indices) of `ds` under `sel` to `out`.
pub fn print(
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    match o.style {
        Style::Trd => print_trd(ds, vars, sel, o, out),
        Style::Cdl => print_cdl(ds, vars, sel, o, out),
        Style::Json => print_json(ds, vars, sel, o, out),
        Style::Xml => ncml::print_ncml(ds, vars, sel, o, out),
    }
}

/// ncks `--chk_nan`: look through the NC_FLOAT and NC_DOUBLE variables of `vars` (in
/// print order, under `sel`) for a NaN; at the first one print NCO 5.1.4's line on
/// standard output (`ncks: INFO nco_chk_nan() reports variable /v has first NaNf at
/// hyperslab element 1, exiting now.`, `NaN` for a double, the element's index in the
/// hyperslab) and fail with [`Error::Reported`] (exit status 1). Nothing is printed
/// when there is none.
///
/// Errors: read errors; the NaN found.
pub fn check_nan(ds: &Dataset, vars: &[usize], sel: &Selection) -> Result<()> {
    let m = ds.meta();
    for &v in vars {
        let word = match m.vars[v].ty {
            NcType::Float => "NaNf",
            NcType::Double => "NaN",
            _ => continue,
        };
        let idx = sel.for_var(m, v);
        let mut found = None;
        let mut seen = 0usize;
        let r = ds.read_blocks(v, &idx, PRINT_BLOCK_BYTES, |_, vals| {
            if let Some(i) = (0..vals.len()).find(|&i| vals.get_f64(i).is_some_and(f64::is_nan)) {
                found = Some(seen + i);
                return Err(Error::Reported);
            }
            seen += vals.len();
            Ok(())
        });
        match (r, found) {
            (Err(Error::Reported), Some(i)) => {
                let stdout = std::io::stdout();
                let mut out = stdout.lock();
                writeln!(
                    out,
                    "ncks: INFO nco_chk_nan() reports variable {} has first {word} at hyperslab \
                     element {i}, exiting now.",
                    m.var_path(v)
                )
                .and_then(|()| out.flush())
                .map_err(io)?;
                return Err(Error::Reported);
            }
            (r, _) => r?,
        }
    }
    Ok(())
}

/// How a printing style spells a NaN or an infinity (NCO 5.1.4's spellings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NonFinite {
    /// C's `printf`: `nan`, `-nan`, `inf`, `-inf` (traditional data lines, `-s`).
    C,
    /// The CDL words without a type suffix: `NaN`, `Infinity`, `-Infinity`
    /// (traditional attribute lines).
    Words,
    /// CDL, which `ncgen` reads back: the words, with `f` after a float's
    /// (`NaNf`, `-Infinityf`) in data and attributes alike.
    Cdl,
    /// JSON, which has no such numbers: `null`.
    Null,
}

/// The text of `x` in style `how` when `x` is a NaN or an infinity, `None` when it is
/// finite (or when C's `printf` spells it). `float` says the value is a float (CDL's
/// `f` suffix). A NaN's sign is not printed in CDL (ncgen has no `-NaN`).
fn non_finite(x: f64, float: bool, how: NonFinite) -> Option<String> {
    if x.is_finite() || how == NonFinite::C {
        return None;
    }
    let word = if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    };
    Some(match how {
        NonFinite::Null => "null".into(),
        NonFinite::Cdl if float => format!("{word}f"),
        _ => word.into(),
    })
}

/// Default number text of element `i`: `float_prec`/`double_prec` significant digits,
/// NaNs and infinities spelled `how`.
fn num(v: &Values, i: usize, float_prec: usize, double_prec: usize, how: NonFinite) -> String {
    match v {
        Values::Float(x) => {
            let x = f64::from(x[i]);
            non_finite(x, true, how).unwrap_or_else(|| format_g(x, float_prec))
        }
        Values::Double(x) => {
            non_finite(x[i], false, how).unwrap_or_else(|| format_g(x[i], double_prec))
        }
        Values::Str(s) => format!("\"{}\"", s[i]),
        Values::Char(c) => (c[i] as char).to_string(),
        _ => match Arg::of(v, i) {
            Arg::Int(n) => n.to_string(),
            Arg::UInt(n) => n.to_string(),
            _ => String::new(),
        },
    }
}

/// Element `i` of float or double data printed with `--fmt_val`'s format, when one is
/// given and the value is finite (NaNs and infinities keep their style's spelling).
fn value_format(o: &PrintOptions, v: &Values, i: usize) -> Option<String> {
    // JSON keeps one zero after the point: `20.` is no JSON number.
    let keep = usize::from(o.style == Style::Json);
    let f = o.value_format.as_ref()?;
    let x = match v {
        Values::Float(x) => f64::from(x[i]),
        Values::Double(x) => x[i],
        _ => return None,
    };
    if !x.is_finite() {
        return None;
    }
    let mut s = f.format(Arg::Float(x));
    nco_core::cfmt::trim_trailing_zeros(&mut s, keep);
    Some(s)
}

/// Missing-value mask source: the variable's `_FillValue`, converted to its type.
fn fill_of(var: &Var) -> Option<Values> {
    var.attr("_FillValue").and_then(|a| a.value.convert(var.ty))
}

fn is_missing(v: &Values, i: usize, fill: &Option<Values>) -> bool {
    let Some(f) = fill else { return false };
    match (v, f) {
        (Values::Char(a), Values::Char(b)) => b.first() == Some(&a[i]),
        (Values::Str(_), _) => false,
        _ => match (v.get_f64(i), f.get_f64(0)) {
            (Some(a), Some(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => false,
        },
    }
}

/// Coordinate values of each dimension, read once.
struct Coords<'a> {
    ds: &'a Dataset,
    cache: HashMap<usize, Option<(Values, usize)>>,
}

impl Coords<'_> {
    /// Coordinate variable values of dimension `d` and the coordinate's var index.
    fn get(&mut self, d: usize) -> Result<Option<&(Values, usize)>> {
        if !self.cache.contains_key(&d) {
            let m = self.ds.meta();
            let c = match m.coord_var(d) {
                Some(v) => Some((self.ds.read_all(v)?, v)),
                None => None,
            };
            self.cache.insert(d, c);
        }
        Ok(self.cache.get(&d).and_then(Option::as_ref))
    }
}

/// The units printed after traditional values: the variable's, else (a bounds
/// variable) its coordinate's, as NCO 5.1.4 prints them (CF §7.1: bounds take their
/// coordinate's units).
fn units_text(m: &Meta, v: usize) -> String {
    let var = &m.vars[v];
    var.attr_text("units")
        .or_else(|| m.bounded_by(v).and_then(|c| c.attr_text("units")))
        .unwrap_or_else(|| "(no units)".into())
}

fn print_trd(
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    if o.global_meta {
        // The root's record dimension only (NCO 5.1.4 prints no line for one of a
        // subgroup).
        if let Some(r) = m.record_dim().filter(|&r| m.dims[r].group == 0) {
            writeln!(
                out,
                "Root record dimension 0: name = {}, size = {}\n",
                m.dims[r].name,
                sel.len(m, r)
            )
            .map_err(io)?;
        }
        let globals = group_attrs(o, m, 0);
        if !globals.is_empty() {
            writeln!(out, "Global attributes:").map_err(io)?;
            for (i, a) in globals.iter().enumerate() {
                writeln!(out, "Global attribute {i}: {}", trd_attr(a)).map_err(io)?;
            }
            writeln!(out).map_err(io)?;
        }
        // Then each shown group's attributes, in order of group paths (NCO 5.1.4).
        let tree = Tree::new(m, vars, &o.groups);
        let mut shown: Vec<(String, usize)> = (1..m.groups.len())
            .filter(|&g| tree.shown[g] && !m.groups[g].attrs.is_empty())
            .map(|g| (m.group_path(g), g))
            .collect();
        shown.sort();
        for (path, g) in shown {
            writeln!(out, "Group {path} attributes:").map_err(io)?;
            for (i, a) in m.groups[g].attrs.iter().enumerate() {
                writeln!(out, "Group attribute {i}: {}", trd_attr(a)).map_err(io)?;
            }
            writeln!(out).map_err(io)?;
        }
    }
    if o.var_meta {
        for &v in vars {
            trd_path_line(m, v, out)?;
            trd_var_meta(m, v, sel, o, out)?;
        }
    }
    if o.data {
        let mut coords = Coords {
            ds,
            cache: HashMap::new(),
        };
        for &v in vars {
            if o.format.is_none() {
                trd_path_line(m, v, out)?;
            }
            trd_var_data(ds, v, sel, o, &mut coords, out)?;
        }
    }
    Ok(())
}

/// The full path of variable `v` on a line of its own before its traditional-style
/// metadata or data, for a variable outside the root group (NCO 5.1.4).
fn trd_path_line(m: &Meta, v: usize, out: &mut dyn Write) -> Result<()> {
    if m.vars[v].group != 0 {
        writeln!(out, "{}", m.var_path(v)).map_err(io)?;
    }
    Ok(())
}

/// How traditional-style metadata names dimension `d` of a variable of group `g`: the
/// short name in its own group, the full path when an ancestor defines it (NCO 5.1.4:
/// `t2m dimension 0: /time`).
fn trd_dim_name(m: &Meta, d: usize, g: usize) -> String {
    if m.dims[d].group == g {
        m.dims[d].name.clone()
    } else {
        m.dim_path(d)
    }
}

fn trd_attr(a: &Attr) -> String {
    let v = &a.value;
    let text = match v {
        Values::Char(c) => String::from_utf8_lossy(c)
            .trim_end_matches('\0')
            .to_string(),
        Values::Str(x) => x.join(", "),
        // As the traditional values: floats %g, doubles %.12g (NCO 5.1.4).
        _ => (0..v.len())
            .map(|i| num(v, i, 6, 12, NonFinite::Words))
            .collect::<Vec<_>>()
            .join(", "),
    };
    format!(
        "{}, size = {} {}, value = {}",
        a.name,
        v.len(),
        v.nc_type(),
        text
    )
}

fn trd_var_meta(
    m: &Meta,
    v: usize,
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let var = &m.vars[v];
    let nd = var.dims.len();
    let plural = |n: usize, w: &str| {
        if n == 1 {
            format!("{n} {w}")
        } else {
            format!("{n} {w}s")
        }
    };
    let packed = var.attr("scale_factor").is_some() || var.attr("add_offset").is_some();
    let yn = |b: bool| if b { "yes" } else { "no" };
    writeln!(
        out,
        "{}: type {}, {}, {}, compressed? {}, chunked? {}, packed? {}",
        var.name,
        var.ty,
        plural(nd, "dimension"),
        plural(var.attrs.len(), "attribute"),
        yn(var.storage.deflate.is_some_and(|l| l > 0)),
        yn(var.storage.chunks.is_some()),
        yn(packed)
    )
    .map_err(io)?;
    if let Some(level) = var.storage.deflate.filter(|&l| l > 0) {
        let with = if var.storage.shuffle {
            "with"
        } else {
            "without"
        };
        writeln!(
            out,
            "{} compression (Lempel-Ziv {with} shuffling) level = {level}",
            var.name
        )
        .map_err(io)?;
    }
    let lens: Vec<usize> = var.dims.iter().map(|&d| sel.len(m, d)).collect();
    let n: usize = lens.iter().product();
    let shape = if lens.is_empty() {
        "1".to_string()
    } else {
        lens.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("*")
    };
    writeln!(
        out,
        "{} size (RAM) = {}*sizeof({}) = {}*{} = {} bytes",
        var.name,
        shape,
        var.ty,
        n,
        var.ty.size(),
        n * var.ty.size()
    )
    .map_err(io)?;
    for (k, &d) in var.dims.iter().enumerate() {
        let dim = &m.dims[d];
        let coord = m.coord_var(d);
        let dname = trd_dim_name(m, d, var.group);
        let rec = if dim.unlimited { "Record " } else { "" };
        // A chunked variable's chunk length along the dimension follows the size.
        let chunk = match &var.storage.chunks {
            Some(c) => c
                .get(k)
                .map(|n| format!(", chunksize = {n}"))
                .unwrap_or_default(),
            None => String::new(),
        };
        let desc = match coord {
            Some(c) => format!(" {}{chunk} ({rec}coordinate is {dname})", m.vars[c].ty),
            None => format!("{chunk} ({rec}non-coordinate dimension)"),
        };
        // NCO capitalises the first word inside the parentheses.
        let desc = capitalise_paren(&desc);
        writeln!(
            out,
            "{} dimension {k}: {dname}, size = {}{desc}",
            var.name, lens[k]
        )
        .map_err(io)?;
    }
    if var.ty == NcType::Str {
        writeln!(
            out,
            "{} size (RAM) above is space required for pointers only, full size of strings is unknown until data are read",
            var.name
        )
        .map_err(io)?;
    }
    for (i, a) in var_attrs(o, m, v).iter().enumerate() {
        writeln!(out, "{} attribute {i}: {}", var.name, trd_attr(a)).map_err(io)?;
    }
    writeln!(out).map_err(io)?;
    Ok(())
}

fn capitalise_paren(s: &str) -> String {
    match s.find('(') {
        Some(i) => {
            let mut out = s[..=i].to_string();
            let mut rest = s[i + 1..].chars();
            if let Some(c) = rest.next() {
                out.extend(c.to_uppercase());
            }
            out.extend(rest);
            out
        }
        None => s.to_string(),
    }
}

/// Absolute flat index of an element given its absolute per-dimension indices.
/// Row-major flat index of the position `abs` in a variable of shape `full`.
fn flat(abs: impl IntoIterator<Item = usize>, full: &[usize]) -> usize {
    abs.into_iter()
        .zip(full)
        .fold(0, |acc, (i, &n)| acc * n + i)
}

fn trd_value(vals: &Values, i: usize, fill: &Option<Values>, o: &PrintOptions) -> String {
    if is_missing(vals, i, fill) && !o.no_blank {
        return match &o.format {
            Some(f) => f.with_text("_"),
            None => "_".into(),
        };
    }
    match (&o.format, vals) {
        // Strings print bare in traditional lines (NCO 5.1.4: `s[0]=s1`).
        (None, Values::Str(s)) => s[i].clone(),
        (Some(f), _) => f.format(Arg::of(vals, i)),
        (None, _) => num(vals, i, 6, 12, NonFinite::C),
    }
}

fn trd_var_data(
    ds: &Dataset,
    v: usize,
    sel: &Selection,
    o: &PrintOptions,
    coords: &mut Coords<'_>,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    let var = &m.vars[v];
    let idx = sel.for_var(m, v);
    let fill = fill_of(var);
    let units = if o.units {
        units_text(m, v)
    } else {
        String::new()
    };
    if let Some(f) = &o.format {
        // Values only, formatted, then an empty line.
        if var.ty == NcType::Char && f.conversion() == Some('s') {
            let vals = ds.read(v, &idx)?;
            let text = f.format(Arg::Str(&vals.as_text().unwrap_or_default()));
            out.write_all(text.as_bytes()).map_err(io)?;
        } else {
            for_each_block(ds, v, &idx, |vals| {
                for i in 0..vals.len() {
                    out.write_all(trd_value(vals, i, &fill, o).as_bytes())
                        .map_err(io)?;
                }
                Ok(())
            })?;
        }
        writeln!(out).map_err(io)?;
        writeln!(out).map_err(io)?;
        return Ok(());
    }
    if var.dims.is_empty() {
        let vals = ds.read(v, &idx)?;
        let val = if var.ty == NcType::Char {
            // A NUL prints as an empty string (NCO 5.1.4), any other character quoted.
            match vals.as_text().unwrap_or_default() {
                t if t.is_empty() => "\"\"".to_string(),
                t => format!("'{t}'"),
            }
        } else {
            let dates = o.dates_everywhere.then(|| var_dates(o, m, v)).flatten();
            date_text(&vals, 0, &fill, dates.as_ref())
                .unwrap_or_else(|| trd_value(&vals, 0, &fill, o))
        };
        if o.values_only {
            writeln!(out, "{val}").map_err(io)?;
        } else {
            writeln!(out, "{} = {val} {units}", var.name).map_err(io)?;
        }
        writeln!(out).map_err(io)?;
        return Ok(());
    }
    let full: Vec<usize> = var.dims.iter().map(|&d| m.dims[d].len).collect();
    let lens: Vec<usize> = idx.iter().map(Vec::len).collect();
    let nd = lens.len();
    let is_coord = m.is_coord_var(var);
    // Prefix text of each (dim, position) pair.
    let mut prefix: Vec<Vec<String>> = Vec::with_capacity(nd);
    for (k, &d) in var.dims.iter().enumerate() {
        let dname = &m.dims[d].name;
        let own = is_coord && k == 0;
        let c = if own { None } else { coords.get(d)?.cloned() };
        let texts = idx[k]
            .iter()
            .map(|&a| match &c {
                _ if own => String::new(),
                Some((cv, cid)) => {
                    let cfill = fill_of(&m.vars[*cid]);
                    let t = if is_missing(cv, a, &cfill) {
                        "_".into()
                    } else {
                        num(cv, a, 6, 12, NonFinite::C)
                    };
                    format!("{dname}[{a}]={t} ")
                }
                None => format!("{dname}[{a}] "),
            })
            .collect();
        prefix.push(texts);
    }
    // Position of the next element printed, per dimension, and one line's text.
    let mut pos = vec![0usize; nd];
    let mut line = String::new();
    if var.ty == NcType::Char {
        // One line per row of the last dimension (a 1-D variable is one row).
        let row = lens[nd - 1];
        let mut print_rows = |c: &Values, pos: &mut Vec<usize>, line: &mut String| -> Result<()> {
            let c = match c {
                Values::Char(c) => c.as_slice(),
                _ => &[],
            };
            for bytes in c.chunks(row.max(1)) {
                line.clear();
                if !o.quiet_indices && !o.values_only {
                    for (k, p) in prefix.iter().enumerate().take(nd - 1) {
                        line.push_str(&p[pos[k]]);
                    }
                    line.push_str(&prefix[nd - 1][0]);
                }
                let end = bytes.iter().position(|&b| b == 0);
                let text = String::from_utf8_lossy(&bytes[..end.unwrap_or(bytes.len())]);
                let quoted = if end.is_some() {
                    format!("\"{text}\"")
                } else {
                    format!("'{text}'")
                };
                let abs = (0..nd - 1).map(|k| idx[k][pos[k]]);
                let start = flat(abs.chain([idx[nd - 1][0]]), &full);
                // The range ends at the NUL after the text, or at the row's last
                // character.
                let last = start + end.unwrap_or(row.max(1) - 1);
                if o.values_only {
                    line.push_str(&quoted);
                } else {
                    line.push_str(&format!("{}[{start}--{last}]={quoted} {units}", var.name));
                }
                writeln!(out, "{line}").map_err(io)?;
                // advance outer dims
                for k in (0..nd - 1).rev() {
                    pos[k] += 1;
                    if pos[k] < lens[k] {
                        break;
                    }
                    pos[k] = 0;
                }
            }
            Ok(())
        };
        if nd == 1 {
            print_rows(&ds.read(v, &idx)?, &mut pos, &mut line)?;
        } else {
            for_each_block(ds, v, &idx, |c| print_rows(c, &mut pos, &mut line))?;
        }
        writeln!(out).map_err(io)?;
        return Ok(());
    }
    let dates = o.dates_everywhere.then(|| var_dates(o, m, v)).flatten();
    for_each_block(ds, v, &idx, |vals| {
        for i in 0..vals.len() {
            line.clear();
            let val = date_text(vals, i, &fill, dates.as_ref())
                .unwrap_or_else(|| trd_value(vals, i, &fill, o));
            if o.values_only {
                line.push_str(&val);
            } else {
                if !o.quiet_indices {
                    for (k, p) in prefix.iter().enumerate() {
                        line.push_str(&p[pos[k]]);
                    }
                }
                let at = flat(pos.iter().enumerate().map(|(k, &p)| idx[k][p]), &full);
                line.push_str(&format!("{}[{at}]={val} {units}", var.name));
            }
            writeln!(out, "{line}").map_err(io)?;
            for k in (0..nd).rev() {
                pos[k] += 1;
                if pos[k] < lens[k] {
                    break;
                }
                pos[k] = 0;
            }
        }
        Ok(())
    })?;
    writeln!(out).map_err(io)?;
    Ok(())
}

/// A `%g` number with a decimal point, as `%#g` with its trailing zeros trimmed
/// prints it (`1.e+36`, `73.`; NaN and infinities as they are): CDL attributes and
/// NcML numbers.
fn with_point(s: String) -> String {
    if s.contains(['.', 'n', 'i']) {
        s
    } else if s.contains('e') {
        s.replacen('e', ".e", 1)
    } else {
        format!("{s}.")
    }
}

/// CDL text of an attribute value (`1.e+36f`, `37s`, `"text"`...).
pub fn cdl_attr_value(v: &Values) -> String {
    let dot = with_point;
    match v {
        Values::Char(c) => cdl_string(c),
        Values::Str(s) => s
            .iter()
            .map(|x| cdl_string(x.as_bytes()))
            .collect::<Vec<_>>()
            .join(", "),
        _ => (0..v.len())
            .map(|i| match v {
                Values::Float(x) => non_finite(f64::from(x[i]), true, NonFinite::Cdl)
                    .unwrap_or_else(|| format!("{}f", dot(format_g(f64::from(x[i]), 7)))),
                Values::Double(x) => non_finite(x[i], false, NonFinite::Cdl)
                    .unwrap_or_else(|| dot(format_g(x[i], 15))),
                Values::Byte(x) => format!("{}b", x[i]),
                Values::Short(x) => format!("{}s", x[i]),
                Values::UByte(x) => format!("{}ub", x[i]),
                Values::UShort(x) => format!("{}us", x[i]),
                Values::UInt(x) => format!("{}u", x[i]),
                Values::Int64(x) => format!("{}ll", x[i]),
                Values::UInt64(x) => format!("{}ull", x[i]),
                _ => num(v, i, 7, 15, NonFinite::Cdl),
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// CDL line of attribute `a` of variable `owner` (`""` for a global attribute), without
/// the indent: `owner:name = value ;`, after the keyword `string` when the attribute is
/// an NC_STRING (netCDF-4) one, as ncdump and NCO print it (without the keyword ncgen
/// would make a char attribute of a single string).
fn cdl_attr_line(owner: &str, a: &Attr) -> String {
    let keyword = if matches!(a.value, Values::Str(_)) {
        "string "
    } else {
        ""
    };
    format!(
        "{keyword}{}:{} = {} ;",
        cdl_name(owner),
        cdl_name(&a.name),
        cdl_attr_value(&a.value)
    )
}

/// A name as CDL writes it: the characters CDL reserves (blanks, punctuation) and a
/// leading digit escaped with a backslash, as NCO 5.1.4 and ncdump print them
/// (`char\ att`, `\1ab`); `ncgen` reads the name back.
fn cdl_name(name: &str) -> std::borrow::Cow<'_, str> {
    const SPECIAL: &str = " !\"#$&'()*,:;<=>?[\\]^`{|}~";
    let lead_digit = name.starts_with(|c: char| c.is_ascii_digit());
    if !lead_digit && !name.chars().any(|c| SPECIAL.contains(c)) {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if SPECIAL.contains(c) || (i == 0 && lead_digit) {
            out.push('\\');
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

fn cdl_string(c: &[u8]) -> String {
    let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
    let mut s = String::from("\"");
    for ch in String::from_utf8_lossy(&c[..end]).chars() {
        match ch {
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            // NCO 5.1.4 escapes single quotes too (ncgen reads either).
            '\'' => s.push_str("\\'"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The groups a print shows: those of the printed variables and their ancestors, the
/// root always, and the groups `-g` selects when no `-v` is given (NCO 5.1.4 prints
/// the groups a copy of the same selection would write). Visited depth first, each
/// group's subgroups in the file's order (NCO's copies define them alphabetically,
/// its prints follow the file).
struct Tree<'a> {
    m: &'a Meta,
    shown: Vec<bool>,
}

impl<'a> Tree<'a> {
    /// The groups shown when printing `vars` of `m`, with the `extra` groups.
    fn new(m: &'a Meta, vars: &[usize], extra: &[usize]) -> Tree<'a> {
        Tree {
            m,
            shown: nco_core::groups::needed(m, vars, extra),
        }
    }

    /// The shown subgroups of `g`, in the file's order.
    fn children(&self, g: usize) -> Vec<usize> {
        let mut c = self.m.subgroups(g);
        c.retain(|&s| self.shown[s]);
        c
    }

    /// The printed variables of group `g`, in print order.
    fn vars_in(&self, vars: &[usize], g: usize) -> Vec<usize> {
        vars.iter()
            .copied()
            .filter(|&v| self.m.vars[v].group == g)
            .collect()
    }
}

/// Dimensions of group `g` that the printed variables use (of any group), in the
/// file's order; all of them with `--rad` (`all`).
fn group_dims(m: &Meta, vars: &[usize], g: usize, all: bool) -> Vec<usize> {
    if all {
        return (0..m.dims.len())
            .filter(|&d| m.dims[d].group == g)
            .collect();
    }
    let mut ds: Vec<usize> = vars
        .iter()
        .flat_map(|&v| m.vars[v].dims.iter().copied())
        .filter(|&d| m.dims[d].group == g)
        .collect();
    ds.sort_unstable();
    ds.dedup();
    ds
}

/// [`group_dims`] sorted by name (CDL's order).
fn used_dims(m: &Meta, vars: &[usize], g: usize, all: bool) -> Vec<usize> {
    let mut ds = group_dims(m, vars, g, all);
    ds.sort_by(|&a, &b| m.dims[a].name.as_bytes().cmp(m.dims[b].name.as_bytes()));
    ds
}

/// Print in CDL, groups nested as NCO 5.1.4 prints them.
fn print_cdl(
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let tree = Tree::new(ds.meta(), vars, &o.groups);
    writeln!(out, "netcdf {} {{", o.name).map_err(io)?;
    cdl_group(ds, &tree, 0, vars, sel, o, out)?;
    writeln!(out, "}} // group /").map_err(io)
}

/// Print group `g`'s sections (inside its braces) and its shown subgroups: dimensions,
/// variables, attributes, data, each section after a blank line but the first, as
/// NCO 5.1.4 lays them out (the root's global attributes are followed by a blank
/// line, other groups' attributes are not).
fn cdl_group(
    ds: &Dataset,
    tree: &Tree,
    g: usize,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    let ind = "  ".repeat(m.depth(g) + 1);
    let w = |out: &mut dyn Write, s: std::fmt::Arguments| writeln!(out, "{s}").map_err(io);
    let dims = used_dims(m, vars, g, o.all_dims);
    let gvars = tree.vars_in(vars, g);
    if !dims.is_empty() {
        w(out, format_args!("{ind}dimensions:"))?;
        for d in dims.iter().copied() {
            let dim = &m.dims[d];
            let n = sel.len(m, d);
            if dim.unlimited {
                w(
                    out,
                    format_args!(
                        "{ind}  {} = UNLIMITED ; // ({n} currently)",
                        cdl_name(&dim.name)
                    ),
                )?;
            } else {
                w(out, format_args!("{ind}  {} = {n} ;", cdl_name(&dim.name)))?;
            }
        }
    }
    if !gvars.is_empty() {
        if !dims.is_empty() {
            writeln!(out).map_err(io)?;
        }
        w(out, format_args!("{ind}variables:"))?;
        for (k, &v) in gvars.iter().enumerate() {
            let var = &m.vars[v];
            if k > 0 {
                writeln!(out).map_err(io)?;
            }
            let dims = if var.dims.is_empty() {
                String::new()
            } else {
                let names: Vec<_> = var
                    .dims
                    .iter()
                    .map(|&d| cdl_name(&m.dims[d].name))
                    .collect();
                format!("({})", names.join(","))
            };
            w(
                out,
                format_args!(
                    "{ind}  {} {}{dims} ;",
                    var.ty.cdl_name(),
                    cdl_name(&var.name)
                ),
            )?;
            if o.var_meta {
                for a in var_attrs(o, m, v).iter() {
                    w(
                        out,
                        format_args!("{ind}    {}", cdl_attr_line(&var.name, a)),
                    )?;
                }
            }
        }
    }
    let attrs = group_attrs(o, m, g);
    if o.global_meta && !attrs.is_empty() {
        let kind = if g == 0 { "global" } else { "group" };
        writeln!(out).map_err(io)?;
        w(out, format_args!("{ind}// {kind} attributes:"))?;
        for a in attrs.iter() {
            w(out, format_args!("{ind}  {}", cdl_attr_line("", a)))?;
        }
        if g == 0 {
            writeln!(out).map_err(io)?;
        }
    }
    if o.data && !gvars.is_empty() {
        writeln!(out).map_err(io)?;
        w(out, format_args!("{ind}data:"))?;
        for &v in &gvars {
            cdl_var_data(ds, v, sel, o, &ind, out)?;
        }
    }
    for c in tree.children(g) {
        w(out, format_args!("{ind}group: {} {{", m.groups[c].name))?;
        cdl_group(ds, tree, c, vars, sel, o, out)?;
        w(out, format_args!("{ind}}} // group {}", m.group_path(c)))?;
    }
    Ok(())
}

/// `--cal`: how variable `v`'s values print as dates, when it is numeric and has time
/// units (NCO 5.1.4); a bounds variable without units takes its coordinate's (CF
/// §7.1).
fn var_dates(o: &PrintOptions, m: &Meta, v: usize) -> Option<(TimeUnits, DateStyle)> {
    let var = &m.vars[v];
    let st = o.dates.filter(|_| var.ty.is_numeric())?;
    let owner = if var.attr("units").is_some() {
        var
    } else {
        m.bounded_by(v)?
    };
    let units = owner.attr_text("units")?;
    let u = TimeUnits::parse(&units, owner.attr_text("calendar").as_deref())?;
    Some((u, st))
}

/// A value as a date (`--cal`), `None` when it does not print as one; a missing value
/// is the empty text (NCO 5.1.4's traditional and JSON prints).
fn date_text(
    vals: &Values,
    i: usize,
    fill: &Option<Values>,
    dates: Option<&(TimeUnits, DateStyle)>,
) -> Option<String> {
    let (u, st) = dates?;
    if is_missing(vals, i, fill) {
        return Some(String::new());
    }
    u.format_value(vals.get_f64(i)?, *st)
}

fn cdl_value(
    vals: &Values,
    i: usize,
    fill: &Option<Values>,
    o: &PrintOptions,
    dates: Option<&(TimeUnits, DateStyle)>,
) -> String {
    if is_missing(vals, i, fill) && !o.no_blank {
        return "_".into();
    }
    if let Some(date) = dates.and_then(|(u, st)| u.format_value(vals.get_f64(i)?, *st)) {
        return format!("\"{date}\"");
    }
    match (&o.format, vals) {
        (Some(f), _) => f.format(Arg::of(vals, i)),
        // Quotes and backslashes escaped, as ncdump and NCO write string data.
        (None, Values::Str(s)) => cdl_string(s[i].as_bytes()),
        (None, _) => {
            value_format(o, vals, i).unwrap_or_else(|| num(vals, i, 7, 15, NonFinite::Cdl))
        }
    }
}

/// Print the CDL data of variable `v` (its hyperslab under `sel`), the name indented
/// by `ind` and two spaces (the rows of a multi-dimensional array too), read and
/// printed in blocks ([`for_each_block`]).
fn cdl_var_data(
    ds: &Dataset,
    v: usize,
    sel: &Selection,
    o: &PrintOptions,
    ind: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    let var = &m.vars[v];
    let idx = sel.for_var(m, v);
    let fill = fill_of(var);
    let dates = var_dates(o, m, v);
    let dates = dates.as_ref();
    let lens: Vec<usize> = idx.iter().map(Vec::len).collect();
    let lead = format!("{ind}  ");
    write!(out, "{lead}{} = ", cdl_name(&var.name)).map_err(io)?;
    // Separators go before every item but the first: ", " between values of a row,
    // ", \n" between rows (each row on its own line).
    let mut first = true;
    if var.ty == NcType::Char {
        let row = lens.last().copied().unwrap_or(0).max(1);
        let multi = lens.len() > 1;
        if multi {
            writeln!(out).map_err(io)?;
        }
        let mut rows = |c: &Values| -> Result<()> {
            let c = match c {
                Values::Char(c) => c.as_slice(),
                _ => &[],
            };
            let row = if multi { row } else { c.len().max(1) };
            for r in c.chunks(row) {
                let sep = match (first, multi) {
                    (true, _) => "",
                    (false, true) => ", \n",
                    (false, false) => ", ",
                };
                let indent = if multi { lead.as_str() } else { "" };
                write!(out, "{sep}{indent}{}", cdl_string(r)).map_err(io)?;
                first = false;
            }
            Ok(())
        };
        if multi {
            for_each_block(ds, v, &idx, rows)?;
        } else {
            rows(&ds.read(v, &idx)?)?;
        }
    } else if lens.len() <= 1 {
        for_each_block(ds, v, &idx, |vals| {
            for i in 0..vals.len() {
                let sep = if first { "" } else { ", " };
                write!(out, "{sep}{}", cdl_value(vals, i, &fill, o, dates)).map_err(io)?;
                first = false;
            }
            Ok(())
        })?;
    } else {
        let row = lens[lens.len() - 1].max(1);
        writeln!(out).map_err(io)?;
        for_each_block(ds, v, &idx, |vals| {
            for i in 0..vals.len() {
                let sep = match (i % row == 0, first) {
                    (true, true) => "",
                    (true, false) => ", \n",
                    (false, _) => ", ",
                };
                let pad = if i % row == 0 { lead.as_str() } else { "" };
                write!(out, "{sep}{pad}{}", cdl_value(vals, i, &fill, o, dates)).map_err(io)?;
                first = false;
            }
            Ok(())
        })?;
    }
    writeln!(out, " ;").map_err(io)?;
    writeln!(out).map_err(io)
}

fn json_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn json_value(v: &Values, i: usize, _fill: &Option<Values>) -> String {
    // NCO prints missing values as their number, like any other value.
    match v {
        Values::Str(s) => json_string(&s[i]),
        _ => num(v, i, 7, 15, NonFinite::Null),
    }
}

fn json_attr(a: &Values) -> String {
    match a {
        Values::Char(_) => json_string(&a.as_text().unwrap_or_default()),
        _ if a.len() == 1 => json_value(a, 0, &None),
        _ => format!(
            "[{}]",
            (0..a.len())
                .map(|i| json_value(a, i, &None))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Nested JSON arrays of shape `lens` whose element of flat index `i` is `leaf(i)`
/// (row-major; `base` is the flat index of the first element).
fn json_nest(lens: &[usize], base: usize, leaf: &dyn Fn(usize) -> String) -> String {
    if lens.is_empty() {
        return leaf(base);
    }
    let inner: usize = lens[1..].iter().product();
    let items: Vec<String> = (0..lens[0])
        .map(|i| json_nest(&lens[1..], base + i * inner, leaf))
        .collect();
    format!("[{}]", items.join(", "))
}

/// Writes nested JSON arrays of shape `lens` (row-major) one leaf at a time, so a
/// variable's data can be printed block by block: the text is that of
/// [`json_nest`] (`[[a, b], [c, d]]`).
struct JsonNest {
    /// Per dimension `d`, the leaves in one array at that depth (`lens[d..]`).
    strides: Vec<usize>,
    /// Leaves written so far.
    done: usize,
}

impl JsonNest {
    fn new(lens: &[usize]) -> JsonNest {
        let strides = (0..lens.len())
            .map(|d| lens[d..].iter().product())
            .collect();
        JsonNest { strides, done: 0 }
    }

    /// Write the brackets and separator before the next leaf.
    fn before_leaf(&mut self, out: &mut dyn Write) -> Result<()> {
        let i = self.done;
        // How many innermost arrays this leaf opens (all of them at the first).
        let opens = self
            .strides
            .iter()
            .rev()
            .take_while(|&&s| i % s == 0)
            .count();
        if i > 0 {
            for _ in 0..opens {
                out.write_all(b"]").map_err(io)?;
            }
            out.write_all(b", ").map_err(io)?;
        }
        for _ in 0..opens {
            out.write_all(b"[").map_err(io)?;
        }
        self.done += 1;
        Ok(())
    }

    /// Close the arrays after the last leaf.
    fn finish(&self, out: &mut dyn Write) -> Result<()> {
        for _ in 0..self.strides.len() {
            out.write_all(b"]").map_err(io)?;
        }
        Ok(())
    }
}

/// Write the JSON data of variable `v` of `ds` (the hyperslab `idx`), read and printed
/// in blocks ([`for_each_block`]). A char variable is text along its last dimension:
/// one string (up to its first NUL) per row, nested over the other dimensions
/// (NCO 5.1.4: `["ab", "cdef"]` for a 2-D char array, one string for 0-D and 1-D ones).
fn write_json_data(
    ds: &Dataset,
    v: usize,
    idx: &[Vec<usize>],
    fill: &Option<Values>,
    flat: bool,
    dates: Option<&(TimeUnits, DateStyle)>,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let leaf = |vals: &Values, i: usize| match date_text(vals, i, fill, dates) {
        Some(d) => json_string(&d),
        None => value_format(o, vals, i).unwrap_or_else(|| json_value(vals, i, fill)),
    };
    let mut lens: Vec<usize> = idx.iter().map(Vec::len).collect();
    let is_char = ds.meta().vars[v].ty == NcType::Char;
    // --jsn_fmt 4 and up: one flat array (of strings for a char array).
    let keep = usize::from(is_char);
    if flat && lens.len() > 1 + keep {
        let split = lens.len() - keep;
        let outer: usize = lens[..split].iter().product();
        lens = std::iter::once(outer)
            .chain(lens[split..].iter().copied())
            .collect();
    }
    if lens.contains(&0) || (is_char && lens.len() < 2) {
        // Nothing to stream (an empty array, or one string).
        let vals = ds.read(v, idx)?;
        let text = match &vals {
            Values::Char(c) => {
                let (outer, row) = match lens.split_last() {
                    Some((&row, outer)) => (outer, row),
                    None => (&lens[..], c.len()),
                };
                let text = |r: usize| {
                    let bytes = c.get(r * row..(r + 1) * row).unwrap_or_default();
                    json_string(&Values::Char(bytes.to_vec()).as_text().unwrap_or_default())
                };
                json_nest(outer, 0, &text)
            }
            _ => json_nest(&lens, 0, &|i| leaf(&vals, i)),
        };
        return out.write_all(text.as_bytes()).map_err(io);
    }
    let (shape, row) = if is_char {
        (&lens[..lens.len() - 1], lens[lens.len() - 1])
    } else {
        (&lens[..], 1)
    };
    let mut nest = JsonNest::new(shape);
    for_each_block(ds, v, idx, |vals| {
        match vals {
            Values::Char(c) => {
                for bytes in c.chunks(row) {
                    nest.before_leaf(out)?;
                    let t = Values::Char(bytes.to_vec()).as_text().unwrap_or_default();
                    out.write_all(json_string(&t).as_bytes()).map_err(io)?;
                }
            }
            _ => {
                for i in 0..vals.len() {
                    nest.before_leaf(out)?;
                    out.write_all(leaf(vals, i).as_bytes()).map_err(io)?;
                }
            }
        }
        Ok(())
    })?;
    nest.finish(out)
}

/// Print in NCO's JSON style: the metadata as text, each variable's data written in
/// blocks as it is read (memory does not grow with the variable); groups nested under
/// `"groups"` as NCO 5.1.4 prints them.
fn print_json(
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let tree = Tree::new(ds.meta(), vars, &o.groups);
    json_group(ds, &tree, 0, vars, sel, o, out)?;
    writeln!(out).map_err(io)
}

/// Write group `g` as a JSON object (from its `{` to its `}`): its sections
/// `"dimensions"` (file order), `"variables"`, `"attributes"` and `"groups"`, each
/// present when not empty, keys indented by two spaces more than the object's own
/// indentation (the root's is none, a group's is that of its key); an object without
/// sections holds one empty line, as in NCO.
fn json_group(
    ds: &Dataset,
    tree: &Tree,
    g: usize,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    let close = if g == 0 {
        String::new()
    } else {
        " ".repeat(4 * m.depth(g))
    };
    let ind = format!("{close}  ");
    let mut sections = 0;
    let mut section = |out: &mut dyn Write, name: &str| -> Result<()> {
        let sep = if sections == 0 { "\n" } else { ",\n" };
        sections += 1;
        write!(out, "{sep}{ind}\"{name}\": {{").map_err(io)
    };
    write!(out, "{{").map_err(io)?;
    let dims: Vec<String> = group_dims(m, vars, g, o.all_dims)
        .iter()
        .map(|&d| format!("{ind}  {}: {}", json_string(&m.dims[d].name), sel.len(m, d)))
        .collect();
    if !dims.is_empty() {
        section(out, "dimensions")?;
        write!(out, "\n{}\n{ind}}}", dims.join(",\n")).map_err(io)?;
    }
    let gvars = tree.vars_in(vars, g);
    if !gvars.is_empty() {
        section(out, "variables")?;
    }
    for (k, &v) in gvars.iter().enumerate() {
        let var = &m.vars[v];
        let mut fields = Vec::new();
        let typed = o.json_format & 3 != 0;
        if typed && !var.dims.is_empty() {
            let names: Vec<String> = var
                .dims
                .iter()
                .map(|&d| json_string(&m.dims[d].name))
                .collect();
            fields.push(format!("{ind}    \"shape\": [{}]", names.join(", ")));
        }
        if typed {
            fields.push(format!("{ind}    \"type\": \"{}\"", var.ty.cdl_name()));
        }
        // (NCO 5.1.4 prints no attributes object, hidden ones neither, for a variable
        // without attributes of its own.)
        let attrs = var_attrs(o, m, v);
        if o.var_meta && !var.attrs.is_empty() {
            let a: Vec<String> = attrs
                .iter()
                .map(|a| {
                    let (name, value) = (json_string(&a.name), json_attr(&a.value));
                    format!("{ind}      {name}: {value}")
                })
                .collect();
            fields.push(format!(
                "{ind}    \"attributes\": {{\n{}\n{ind}    }}",
                a.join(",\n")
            ));
        }
        let sep = if k == 0 { "\n" } else { ",\n" };
        let name = json_string(&var.name);
        write!(out, "{sep}{ind}  {name}: {{\n{}", fields.join(",\n")).map_err(io)?;
        if o.data {
            let comma = if fields.is_empty() { "" } else { ",\n" };
            write!(out, "{comma}{ind}    \"data\": ").map_err(io)?;
            let flat = o.json_format & 4 != 0;
            let dates = o.dates_everywhere.then(|| var_dates(o, m, v)).flatten();
            let idx = sel.for_var(m, v);
            write_json_data(ds, v, &idx, &fill_of(var), flat, dates.as_ref(), o, out)?;
        }
        write!(out, "\n{ind}  }}").map_err(io)?;
    }
    if !gvars.is_empty() {
        write!(out, "\n{ind}}}").map_err(io)?;
    }
    let attrs = group_attrs(o, m, g);
    if o.global_meta && !attrs.is_empty() {
        let a: Vec<String> = attrs
            .iter()
            .map(|a| format!("{ind}  {}: {}", json_string(&a.name), json_attr(&a.value)))
            .collect();
        section(out, "attributes")?;
        write!(out, "\n{}\n{ind}}}", a.join(",\n")).map_err(io)?;
    }
    let children = tree.children(g);
    if !children.is_empty() {
        section(out, "groups")?;
        for (k, &c) in children.iter().enumerate() {
            let sep = if k == 0 { "\n" } else { ",\n" };
            write!(out, "{sep}{ind}  {}: ", json_string(&m.groups[c].name)).map_err(io)?;
            json_group(ds, tree, c, vars, sel, o, out)?;
        }
        write!(out, "\n{ind}}}").map_err(io)?;
    }
    if sections == 0 {
        writeln!(out).map_err(io)?;
    }
    write!(out, "\n{close}}}").map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_spellings() {
        let neg_nan = -f64::NAN;
        assert!(neg_nan.is_sign_negative());
        let cases = [
            (
                NonFinite::Cdl,
                true,
                ["NaNf", "NaNf", "Infinityf", "-Infinityf"],
            ),
            (
                NonFinite::Cdl,
                false,
                ["NaN", "NaN", "Infinity", "-Infinity"],
            ),
            (
                NonFinite::Words,
                true,
                ["NaN", "NaN", "Infinity", "-Infinity"],
            ),
            (NonFinite::Null, false, ["null", "null", "null", "null"]),
        ];
        for (how, float, want) in cases {
            let got: Vec<String> = [f64::NAN, neg_nan, f64::INFINITY, f64::NEG_INFINITY]
                .iter()
                .map(|&x| non_finite(x, float, how).unwrap())
                .collect();
            assert_eq!(got, want, "{how:?} float={float}");
        }
        assert_eq!(non_finite(1.5, true, NonFinite::Cdl), None);
        // C's printf spelling, sign of a NaN included (NCO's traditional data lines).
        let c = Values::Double(vec![neg_nan, f64::NEG_INFINITY]);
        assert_eq!(num(&c, 0, 6, 12, NonFinite::C), "-nan");
        assert_eq!(num(&c, 1, 6, 12, NonFinite::C), "-inf");
        assert_eq!(
            cdl_attr_value(&Values::Float(vec![f32::NAN, 2.0])),
            "NaNf, 2.f"
        );
    }
}
