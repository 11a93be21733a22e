//! Hyperslabs: parsing `-d dim,min,max,stride[,subcycle[,interleave]]` and resolving
//! them against a file into one index list per dimension (NCO manual, "Hyperslabs",
//! "Multislabs", "Wrapped Coordinates", "UDUnits Support").
//!
//! Rules (all checked against NCO 5.1.4):
//! * a bound with a decimal point or exponent is a coordinate value, a bare integer an
//!   index (even on a coordinate dimension); a date string (`1999-12-08 18:00:0.0`) is a
//!   coordinate value converted with the coordinate's `units` (`hours since ...`); a
//!   number followed by a unit (`0.4 micron`) is converted to the coordinate's `units`
//!   through UDUnits-2;
//! * omitted bounds mean the start / end; a lone bound (`-d lon,3`) means min = max;
//!   negative indices count from the end; `-F` makes indices 1-based;
//! * a lone coordinate value picks the nearest coordinate (ties to the lower index);
//!   a coordinate range that brackets no value is an error;
//! * `min > max` wraps around (index ranges and coordinate ranges alike): the slab runs
//!   from min to the end, then from the start to max; on a decreasing coordinate
//!   (`lat = 90, 45, ..., -90`) a coordinate range `min > max` is an error (NCO 5.1.4
//!   refuses `-d lat,50.,-50.` there too), and `min <= max` selects the values between;
//! * bounds of one `-d` are of one kind (two indices, two coordinate values or two
//!   dates); present stride, subcycle and interleave fields hold positive integers;
//!   an integer bound is an index however large (and then out of range);
//! * several `-d` on one dimension form a multi-slab: the union of their indices in
//!   increasing order (or in the order given with `--msa_usr_rdr`).

use crate::error::{Error, Result};
use crate::model::Meta;
use crate::types::Values;

/// One bound as the user typed it.
#[derive(Clone, Debug, PartialEq)]
pub enum Bound {
    /// Integer index (0-based unless `-F`; negative counts from the end).
    Index(i64),
    /// Coordinate value.
    Value(f64),
    /// Date string, converted through the coordinate's `units`.
    Date(String),
    /// A coordinate value with its unit (`0.4 micron`), converted to the coordinate's
    /// `units` through UDUnits-2 (NCO manual, "UDUnits Support").
    WithUnits(f64, String),
}

/// One `-d` argument, parsed without any file (the literal stage).
#[derive(Clone, Debug, PartialEq)]
pub struct HyperslabSpec {
    /// The original text (for messages).
    pub text: String,
    /// Dimension name.
    pub dim: String,
    /// Lower bound; `None` = from the start.
    pub min: Option<Bound>,
    /// Upper bound; `None` = to the end.
    pub max: Option<Bound>,
    /// True when only one bound was given (`-d lon,3`): max = min.
    pub single: bool,
    /// Stride in elements (>= 1).
    pub stride: usize,
    /// Sub-cycle length (ncra `--mro`, 5th field), if given.
    pub subcycle: Option<usize>,
    /// Interleave stride (6th field), if given.
    pub interleave: Option<usize>,
}

fn parse_bound(s: &str, spec: &str) -> Result<Option<Bound>> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let bad = |reason: String| Error::Hyperslab {
        spec: spec.into(),
        reason,
    };
    // An integer (sign and decimal digits only) is an index, however large: NCO 5.1.4
    // reads `99999999999999999999` as an index (clamped), never as a coordinate value.
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<i64>()
            .map(|i| Some(Bound::Index(i)))
            .map_err(|_| {
                bad(format!(
                    "index {s} is outside every dimension's index range"
                ))
            });
    }
    if let Ok(x) = s.parse::<f64>() {
        if x.is_nan() {
            return Err(bad(format!("bound \"{s}\" is not a number")));
        }
        return Ok(Some(Bound::Value(x)));
    }
    if crate::rules::calendar::parse_date(s).is_some() {
        return Ok(Some(Bound::Date(s.to_string())));
    }
    // A number, blanks, then a unit: `0.4 micron`, `400 nm`.
    if let Some((num, unit)) = s.split_once(char::is_whitespace) {
        if let Ok(x) = num.parse::<f64>() {
            if x.is_finite() && !unit.trim().is_empty() {
                return Ok(Some(Bound::WithUnits(x, unit.trim().to_string())));
            }
        }
    }
    Err(bad(format!("bound \"{s}\" is not a number")))
}

impl Bound {
    /// How NCO reads the bound, for messages: an index or a coordinate value (a date
    /// is a coordinate value of its own kind).
    fn kind(&self) -> &'static str {
        match self {
            Bound::Index(_) => "a dimension index",
            Bound::Value(_) | Bound::WithUnits(..) => "a coordinate value",
            Bound::Date(_) => "a date",
        }
    }

    /// True for the bounds that are coordinate values (numbers, dates, numbers with
    /// units), false for indices.
    pub fn is_coordinate(bound: &Option<Bound>) -> bool {
        matches!(bound, Some(b) if !matches!(b, Bound::Index(_)))
    }
}

impl HyperslabSpec {
    /// Parse `dim,min,max,stride,subcycle,interleave` (fields after `dim` optional).
    ///
    /// Errors (each as NCO 5.1.4 refuses the spec): fewer than two or more than six
    /// fields; `dim,` (no minimum) and `dim,,` (no bound and no stride); a stride,
    /// subcycle or interleave field that is present but empty, zero, negative or not an
    /// integer; bounds of different kinds (`lat,2,1e3`: an index and a coordinate value;
    /// a number and a date); an integer bound beyond the 64-bit range.
    pub fn parse(text: &str) -> Result<HyperslabSpec> {
        let parts: Vec<&str> = text.split(',').collect();
        let bad = |r: &str| Error::Hyperslab {
            spec: text.into(),
            reason: r.into(),
        };
        if parts[0].trim().is_empty() {
            return Err(bad("no dimension name"));
        }
        if parts.len() < 2 {
            return Err(bad(
                "must specify at least two arguments (dim,min[,max[,stride]])",
            ));
        }
        if parts.len() > 6 {
            return Err(bad(
                "too many fields (dim,min,max,stride,subcycle,interleave)",
            ));
        }
        let min = parse_bound(parts[1], text)?;
        let max = match parts.get(2) {
            Some(s) => parse_bound(s, text)?,
            None => None,
        };
        if parts.len() == 2 && min.is_none() {
            return Err(bad("must specify a minimum value"));
        }
        if parts.len() == 3 && min.is_none() && max.is_none() {
            return Err(bad(
                "must specify a minimum and/or a maximum value since the stride is also empty",
            ));
        }
        if let (Some(a), Some(b)) = (&min, &max) {
            if a.kind() != b.kind() {
                return Err(bad(&format!(
                    "limits must be of the same kind: \"{}\" is {}, \"{}\" is {} (a bound with \
                     a decimal point or an exponent is a coordinate value, an integer an index)",
                    parts[1].trim(),
                    a.kind(),
                    parts[2].trim(),
                    b.kind()
                )));
            }
        }
        // A field that is present must hold a positive integer; an empty one is refused
        // at the end and takes its default before a later field, as NCO 5.1.4 does: an
        // empty stride before a subcycle is the subcycle (`time,0,,,2` takes every
        // record once, in groups of 2; NCO measured with ncrcat).
        let last = parts.len() - 1;
        let positive = |i: usize, what: &str| -> Result<Option<usize>> {
            match parts.get(i).map(|s| s.trim()) {
                None => Ok(None),
                Some("") if i < last => Ok(None),
                Some(s) => match s.parse::<usize>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => Err(bad(&format!(
                        "{what} \"{s}\" must be specified as a positive integer"
                    ))),
                },
            }
        };
        let subcycle = positive(4, "subcycle")?;
        let stride = positive(3, "stride")?.unwrap_or(subcycle.unwrap_or(1));
        let interleave = positive(5, "interleave")?;
        Ok(HyperslabSpec {
            text: text.to_string(),
            dim: parts[0].trim().to_string(),
            single: parts.len() == 2,
            min,
            max,
            stride,
            subcycle,
            interleave,
        })
    }

    /// Check the `-d` specs of operator `prog` against the rules that depend on it.
    ///
    /// Errors: a subcycle (fifth field) outside ncra and ncrcat, the only operators
    /// that group records (NCO 5.1.4 refuses it in the others the same way).
    pub fn check_operator(prog: &str, specs: &[HyperslabSpec]) -> Result<()> {
        if !matches!(prog, "ncra" | "ncrcat") {
            if let Some(s) = specs.iter().find(|s| s.subcycle.is_some()) {
                return Err(Error::Hyperslab {
                    spec: s.text.clone(),
                    reason: format!(
                        "subcycle hyperslabs (a fifth field) exist only in ncra and ncrcat, not in {prog}"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Inputs the resolver needs about one dimension of a file.
pub struct DimInfo<'a> {
    /// Dimension length.
    pub len: usize,
    /// Coordinate values, if the dimension has a coordinate variable.
    pub coord: Option<&'a [f64]>,
    /// The coordinate's `units` attribute (for date bounds).
    pub units: Option<&'a str>,
    /// The coordinate's `calendar` attribute.
    pub calendar: Option<&'a str>,
}

/// Resolve one spec to an ordered index list (may wrap). `fortran` = `-F`.
///
/// Errors name the spec: index out of range, coordinate bound on a dimension without
/// a coordinate variable, a coordinate range that brackets no value.
pub fn resolve_one(spec: &HyperslabSpec, info: &DimInfo<'_>, fortran: bool) -> Result<Vec<usize>> {
    let n = info.len as i64;
    let bad = |r: String| Error::Hyperslab {
        spec: spec.text.clone(),
        reason: r,
    };
    if n == 0 {
        return Err(bad(format!("dimension {} has length 0", spec.dim)));
    }
    let to_value = |b: &Bound| -> Result<Option<f64>> {
        match b {
            Bound::Index(_) => Ok(None),
            Bound::Value(x) => Ok(Some(*x)),
            Bound::Date(s) => {
                let units = info.units.ok_or_else(|| {
                    bad(format!(
                        "date bound needs a units attribute on coordinate {}",
                        spec.dim
                    ))
                })?;
                crate::rules::calendar::date_to_value(s, units, info.calendar)
                    .map(Some)
                    .ok_or_else(|| bad(format!("cannot convert \"{s}\" with units \"{units}\"")))
            }
            Bound::WithUnits(x, unit) => {
                let units = info.units.ok_or_else(|| {
                    bad(format!(
                        "a bound with units needs a units attribute on coordinate {}",
                        spec.dim
                    ))
                })?;
                crate::udunits::convert(*x, unit, units)
                    .map(Some)
                    .map_err(|e| bad(format!("{e} (the units of {} are \"{units}\")", spec.dim)))
            }
        }
    };
    let is_coord = Bound::is_coordinate;
    let (lo, hi): (usize, usize);
    if is_coord(&spec.min) || is_coord(&spec.max) {
        let c = info.coord.ok_or_else(|| {
            bad(format!(
                "coordinate value given but {} has no coordinate variable",
                spec.dim
            ))
        })?;
        let vmin = match &spec.min {
            Some(b) => to_value(b)?,
            None => None,
        };
        let vmax = match &spec.max {
            Some(b) => to_value(b)?,
            None => None,
        };
        // A lone value, or a range whose bounds are equal (NCO 5.1.4: `-d lon,100.,100.`
        // picks 90 as `-d lon,100.` does): the nearest point, among the coordinate
        // values that are numbers (a NaN coordinate is never nearest).
        if spec.single || (vmin.is_some() && vmin == vmax) {
            let x = vmin.unwrap_or(0.0);
            if !x.is_finite() {
                return Err(bad(format!(
                    "a single coordinate value must be finite, not {x}"
                )));
            }
            let best = (0..c.len())
                .filter(|&i| !c[i].is_nan())
                .min_by(|&i, &j| (c[i] - x).abs().total_cmp(&(c[j] - x).abs()));
            return match best {
                Some(b) => Ok(vec![b]),
                None => Err(bad(format!(
                    "coordinate {} has no value that is a number",
                    spec.dim
                ))),
            };
        }
        let lo_v = vmin.unwrap_or(f64::NEG_INFINITY);
        let hi_v = vmax.unwrap_or(f64::INFINITY);
        if lo_v > hi_v && decreasing(c) {
            // A wrapped range is defined on increasing coordinates (longitudes) only.
            // NCO 5.1.4 refuses it here when both halves hold values, and selects every
            // point (those of neither half too) when one half is empty: refused always.
            return Err(bad(format!(
                "domain {lo_v} <= {} <= {hi_v} brackets no coordinate values ({} decreases: \
                 a wrapped range is not defined on it; give the bounds as min <= max)",
                spec.dim, spec.dim
            )));
        }
        if lo_v > hi_v {
            // Wrapped range: [min, end] then [start, max] in coordinate terms.
            let first: Vec<usize> = (0..c.len()).filter(|&i| c[i] >= lo_v).collect();
            let second: Vec<usize> = (0..c.len()).filter(|&i| c[i] <= hi_v).collect();
            let mut out: Vec<usize> = first.into_iter().chain(second).collect();
            if out.is_empty() {
                return Err(bad(format!(
                    "range brackets no coordinate values of {}",
                    spec.dim
                )));
            }
            out = stride_list(&out, spec.stride);
            return Ok(out);
        }
        let inside: Vec<usize> = (0..c.len())
            .filter(|&i| c[i] >= lo_v && c[i] <= hi_v)
            .collect();
        if inside.is_empty() {
            return Err(bad(format!(
                "domain {lo_v} <= {} <= {hi_v} brackets no coordinate values",
                spec.dim
            )));
        }
        // Monotonic coordinates give a contiguous run; keep index order either way.
        lo = inside[0];
        hi = *inside.last().unwrap_or(&lo);
        if inside.len() != hi - lo + 1 {
            return Ok(stride_list(&inside, spec.stride));
        }
    } else {
        let idx = |b: &Option<Bound>, default: i64| -> Result<i64> {
            let mut i = match b {
                Some(Bound::Index(i)) => *i,
                _ => return Ok(default),
            };
            if fortran {
                if i == 0 {
                    return Err(bad("-F indices start at 1".into()));
                }
                if i > 0 {
                    i -= 1;
                }
            }
            if i < 0 {
                i += n;
            }
            if i < 0 || i >= n {
                return Err(bad(format!(
                    "index range {} does not fall within valid dimension index range 0 <= {} <= {}",
                    i,
                    spec.dim,
                    n - 1
                )));
            }
            Ok(i)
        };
        let a = idx(&spec.min, 0)?;
        let b = if spec.single {
            a
        } else {
            idx(&spec.max, n - 1)?
        };
        if a > b {
            let all: Vec<usize> = (a as usize..n as usize).chain(0..=b as usize).collect();
            return Ok(stride_list(&all, spec.stride));
        }
        lo = a as usize;
        hi = b as usize;
    }
    Ok((lo..=hi).step_by(spec.stride).collect())
}

/// True when the coordinate values that are numbers (at least two) strictly decrease.
fn decreasing(c: &[f64]) -> bool {
    let mut it = c.iter().filter(|x| !x.is_nan());
    let Some(mut prev) = it.next() else {
        return false;
    };
    let mut n = 1;
    for x in it {
        if x >= prev {
            return false;
        }
        prev = x;
        n += 1;
    }
    n >= 2
}

fn stride_list(v: &[usize], stride: usize) -> Vec<usize> {
    v.iter().copied().step_by(stride).collect()
}

/// Read the 1-D coordinate of dimension `dim` (the variable of its name in its
/// group, [`Meta::coord_var`]: `/obs/lat` for `/obs`'s `lat`) as f64 values, if there
/// is one.
pub fn coordinate_values(
    meta: &Meta,
    read: &dyn Fn(usize) -> Result<Values>,
    dim: usize,
) -> Result<Option<Vec<f64>>> {
    match meta.coord_var(dim) {
        Some(v) if meta.vars[v].ty.is_numeric() => Ok(read(v)?.to_f64_vec()),
        _ => Ok(None),
    }
}

/// The resolved selection of a whole file: for each dimension, the indices kept
/// (`None` = all, untouched).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// Index list per dimension of the file (`meta.dims` order).
    pub dims: Vec<Option<Vec<usize>>>,
}

impl Selection {
    /// Index lists for variable `var` (full ranges where nothing was selected).
    pub fn for_var(&self, meta: &Meta, var: usize) -> Vec<Vec<usize>> {
        meta.vars[var]
            .dims
            .iter()
            .map(|&d| match self.dims.get(d).and_then(Option::as_ref) {
                Some(l) => l.clone(),
                None => (0..meta.dims[d].len).collect(),
            })
            .collect()
    }

    /// Length of dimension `d` after selection.
    pub fn len(&self, meta: &Meta, d: usize) -> usize {
        self.dims
            .get(d)
            .and_then(Option::as_ref)
            .map_or(meta.dims[d].len, Vec::len)
    }

    /// True when nothing is selected on any dimension.
    pub fn is_empty(&self) -> bool {
        self.dims.iter().all(Option::is_none)
    }

    /// True when dimension `d` is restricted.
    pub fn restricts(&self, d: usize) -> bool {
        self.dims.get(d).is_some_and(Option::is_some)
    }
}

/// Resolve all `-d` specs against `meta`. `read` reads a whole variable by index.
/// `user_order` keeps multi-slabs in the order given (`--msa_usr_rdr`).
///
/// Errors: unknown dimension (named), and every error of [`resolve_one`].
pub fn resolve(
    meta: &Meta,
    specs: &[HyperslabSpec],
    fortran: bool,
    user_order: bool,
    read: &dyn Fn(usize) -> Result<Values>,
) -> Result<Selection> {
    let mut sel = Selection {
        dims: vec![None; meta.dims.len()],
    };
    for (d, dim) in meta.dims.iter().enumerate() {
        let mine: Vec<&HyperslabSpec> = specs.iter().filter(|s| s.dim == dim.name).collect();
        if mine.is_empty() {
            continue;
        }
        let coord = coordinate_values(meta, read, d)?;
        let cvar = meta.coord_var(d).map(|v| &meta.vars[v]);
        let units = cvar.and_then(|v| v.attr_text("units"));
        let calendar = cvar.and_then(|v| v.attr_text("calendar"));
        let info = DimInfo {
            len: dim.len,
            coord: coord.as_deref(),
            units: units.as_deref(),
            calendar: calendar.as_deref(),
        };
        let lists: Vec<Vec<usize>> = mine
            .iter()
            .map(|s| resolve_one(s, &info, fortran))
            .collect::<Result<_>>()?;
        let merged = if lists.len() == 1 {
            lists.into_iter().next().unwrap_or_default()
        } else if user_order {
            lists.concat()
        } else {
            let mut all: Vec<usize> = lists.concat();
            all.sort_unstable();
            all.dedup();
            all
        };
        sel.dims[d] = Some(merged);
    }
    for s in specs {
        if meta.dim_id(&s.dim).is_none() {
            return Err(Error::Hyperslab {
                spec: s.text.clone(),
                reason: format!("dimension {} is not in the input file", s.dim),
            });
        }
    }
    Ok(sel)
}

#[cfg(test)]
mod tests {
    #[test]
    fn nan_and_infinite_coordinates() {
        let c = [f64::NAN, 10.0, f64::NAN, 30.0];
        let one = |t: &str| resolve_one(&HyperslabSpec::parse(t).unwrap(), &info(&c), false);
        // The nearest point is never a NaN one (it was index 0, the first NaN).
        assert_eq!(one("x,1.").unwrap(), [1]);
        assert_eq!(one("x,29.").unwrap(), [3]);
        // Ranges skip NaN coordinates.
        assert_eq!(one("x,0.,100.").unwrap(), [1, 3]);
        assert!(one("x,11.,29.").is_err());
        // Equal bounds pick the nearest point, as a lone value does (NCO 5.1.4).
        assert_eq!(one("x,29.,29.").unwrap(), [3]);
        // A NaN bound is refused; an infinite one bounds nothing.
        assert!(HyperslabSpec::parse("x,nan").is_err());
        assert!(HyperslabSpec::parse("x,0.,NaN").is_err());
        assert_eq!(one("x,-inf,inf").unwrap(), [1, 3]);
        assert!(one("x,inf").is_err());
        let all_nan = [f64::NAN; 3];
        let spec = HyperslabSpec::parse("x,1.").unwrap();
        assert!(resolve_one(&spec, &info(&all_nan), false).is_err());
        let inf = [f64::NEG_INFINITY, 0.0, f64::INFINITY];
        let spec = HyperslabSpec::parse("x,5.").unwrap();
        assert_eq!(resolve_one(&spec, &info(&inf), false).unwrap(), [1]);
        let spec = HyperslabSpec::parse("x,1e300,inf").unwrap();
        assert_eq!(resolve_one(&spec, &info(&inf), false).unwrap(), [2]);
    }

    use super::*;

    fn info(c: &[f64]) -> DimInfo<'_> {
        DimInfo {
            len: c.len(),
            coord: Some(c),
            units: None,
            calendar: None,
        }
    }

    fn r(spec: &str, c: &[f64]) -> Result<Vec<usize>> {
        resolve_one(&HyperslabSpec::parse(spec).unwrap(), &info(c), false)
    }

    const LON: [f64; 4] = [0.0, 90.0, 180.0, 270.0];

    #[test]
    fn index_forms() {
        assert_eq!(r("lon,1,2", &LON).unwrap(), vec![1, 2]);
        assert_eq!(r("lon,-1", &LON).unwrap(), vec![3]);
        assert_eq!(r("lon,-2", &LON).unwrap(), vec![2]);
        assert_eq!(r("lon,,2", &LON).unwrap(), vec![0, 1, 2]);
        assert_eq!(r("lon,2,", &LON).unwrap(), vec![2, 3]);
        assert_eq!(r("lon,0,,2", &LON).unwrap(), vec![0, 2]);
        assert_eq!(r("lon,3,1", &LON).unwrap(), vec![3, 0, 1]);
        assert!(r("lon,5", &LON).is_err());
        let f = resolve_one(&HyperslabSpec::parse("lon,2,3").unwrap(), &info(&LON), true);
        assert_eq!(f.unwrap(), vec![1, 2]);
    }

    #[test]
    fn coordinate_forms() {
        assert_eq!(r("lon,270.,90.", &LON).unwrap(), vec![3, 0, 1]);
        assert_eq!(r("lon,400.", &LON).unwrap(), vec![3]);
        assert_eq!(r("lon,90.,,2", &LON).unwrap(), vec![1, 3]);
        assert!(r("lon,100.,110.", &LON).is_err());
        let lat = [-90.0, 90.0];
        assert_eq!(
            r("lat,0.", &lat).unwrap(),
            vec![0],
            "ties go to the lower index"
        );
        assert_eq!(r("lat,10.", &lat).unwrap(), vec![1]);
        let lev = [100.0, 500.0, 1000.0];
        assert_eq!(r("lev,800.,200.", &lev).unwrap(), vec![2, 0]);
    }

    #[test]
    fn malformed_specs() {
        assert!(HyperslabSpec::parse(",1").is_err());
        assert!(
            HyperslabSpec::parse("lon").is_err(),
            "NCO needs at least dim,min"
        );
        assert!(HyperslabSpec::parse("lon,a").is_err());
        assert!(HyperslabSpec::parse("lon,1,2,0").is_err());
        assert!(HyperslabSpec::parse("lon,1,2,x").is_err());
        let s = HyperslabSpec::parse("time,0,,2,2").unwrap();
        assert_eq!((s.stride, s.subcycle), (2, Some(2)));
        // NCO 5.1.4 refuses each of these.
        for bad in [
            "lat,",
            "lat,,",
            "lat,,,",
            "lat,0,,",
            "lat,0,1,1,",
            "lat,0,1,1,1,",
            "lat,0,1,1,1,0",
            "lat,2,1e3",
            "lat,1.,1",
            "lat,0,2000-01-01",
            "lat,1.,2000-01-01",
            "lat,99999999999999999999",
        ] {
            assert!(HyperslabSpec::parse(bad).is_err(), "{bad}");
        }
        for good in [
            "lat,,1",
            "lat,,,2",
            "lat,1,",
            "lat,1.,2e3",
            "t,2000-01-01,2000-02-01",
        ] {
            assert!(HyperslabSpec::parse(good).is_ok(), "{good}");
        }
        let s = HyperslabSpec::parse("time,0,,2,2,3").unwrap();
        assert_eq!(s.interleave, Some(3));
        let specs = [HyperslabSpec::parse("time,0,,2,2").unwrap()];
        assert!(HyperslabSpec::check_operator("ncra", &specs).is_ok());
        assert!(HyperslabSpec::check_operator("ncrcat", &specs).is_ok());
        assert!(HyperslabSpec::check_operator("ncks", &specs).is_err());
    }

    #[test]
    fn decreasing_coordinates() {
        let lat = [90.0, 45.0, 0.0, -45.0, -90.0];
        assert_eq!(r("lat,-50.,50.", &lat).unwrap(), [1, 2, 3]);
        assert_eq!(r("lat,50.,", &lat).unwrap(), [0]);
        assert_eq!(r("lat,,-50.", &lat).unwrap(), [4]);
        assert_eq!(r("lat,-100.,100.,2", &lat).unwrap(), [0, 2, 4]);
        // No wrapped ranges on a decreasing axis, and no range between neighbours.
        for bad in [
            "lat,50.,-50.",
            "lat,100.,60.",
            "lat,-60.,-100.",
            "lat,1.,44.",
        ] {
            assert!(r(bad, &lat).is_err(), "{bad}");
        }
        // One value, or NaNs around decreasing ones.
        assert!(!decreasing(&[1.0]));
        assert!(decreasing(&[f64::NAN, 3.0, f64::NAN, 1.0]));
        assert!(!decreasing(&[3.0, 3.0, 1.0]));
    }
}
