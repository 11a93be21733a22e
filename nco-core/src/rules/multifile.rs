//! Input lists of the multi-file operators (ncra, ncrcat, nces, ncecat) and record
//! selection across files (NCO manual, "Specifying Input Files", "Hyperslabs" for
//! multi-file operators, "Subcycle").
//!
//! * Inputs are the positional arguments but the last (the output), each prefixed by
//!   `-p`; `-n nbr,dgt,inc` generates `nbr` names from the first by counting in its
//!   last `dgt` digits before the extension; with only an output given, names are read
//!   from standard input (whitespace separated) and recorded in the
//!   `nco_input_file_number`/`nco_input_file_list` global attributes (unless `-H`).
//! * Index bounds of a record hyperslab count records across the whole concatenation
//!   and the stride carries across file boundaries; coordinate-value bounds are applied
//!   file by file. The fifth field (sub-cycle) groups `subcycle` consecutive records
//!   starting every `stride` records.

use std::io::Read;

use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::model::{Attr, Meta};
use crate::rules::hyperslab::{self, Bound, DimInfo, HyperslabSpec};
use crate::types::Values;

/// Expand `-n nbr,dgt,inc` from the first input name.
///
/// Errors: malformed `-n`, or a name without `dgt` digits before its extension.
pub fn generate_names(first: &str, spec: &str) -> Result<Vec<String>> {
    let bad = |r: &str| Error::option("-n", format!("\"{spec}\": {r}"));
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    let num = |i: usize, d: i64| -> Result<i64> {
        match parts.get(i).filter(|s| !s.is_empty()) {
            Some(s) => s.parse::<i64>().map_err(|_| bad("fields must be integers")),
            None => Ok(d),
        }
    };
    let nbr = num(0, 0)?;
    let dgt = num(1, 3)?;
    let inc = num(2, 1)?;
    if nbr < 1 || dgt < 1 || inc == 0 {
        return Err(bad("need nbr >= 1, dgt >= 1, inc != 0"));
    }
    let (stem, ext) = match first.rfind('.') {
        Some(i) if !first[i..].contains('/') => (&first[..i], &first[i..]),
        _ => (first, ""),
    };
    let d = dgt as usize;
    if stem.len() < d || !stem[stem.len() - d..].bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(&format!(
            "{first} does not end in {dgt} digits before its extension"
        )));
    }
    let base = &stem[..stem.len() - d];
    let start: i64 = stem[stem.len() - d..]
        .parse()
        .map_err(|_| bad("bad digits"))?;
    Ok((0..nbr)
        .map(|k| format!("{base}{:0width$}{ext}", start + k * inc, width = d))
        .collect())
}

/// Prefix an input name with `-p` (unless it is absolute or a URL).
pub fn with_prefix(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        Some(p) if !name.starts_with('/') && !name.contains("://") => {
            format!("{}/{}", p.trim_end_matches('/'), name)
        }
        _ => name.to_string(),
    }
}

/// The input file list and whether it came from standard input.
pub struct Inputs {
    /// Input names, prefixed.
    pub files: Vec<String>,
    /// Output name.
    pub output: String,
    /// True when the names were read from standard input.
    pub from_stdin: bool,
}

/// Split positional arguments into inputs and output (see the module docs).
///
/// Errors: no output, or no inputs (and nothing on standard input).
pub fn inputs(
    positional: &[String],
    output: Option<&str>,
    prefix: Option<&str>,
    n_spec: Option<&str>,
) -> Result<Inputs> {
    let mut pos = positional.to_vec();
    let output = match output {
        Some(o) => o.to_string(),
        None => pos
            .pop()
            .ok_or_else(|| Error::msg("no output file given"))?,
    };
    let mut from_stdin = false;
    if pos.is_empty() {
        let mut s = String::new();
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Error::io("standard input", e))?;
        }
        pos = s.split_whitespace().map(str::to_string).collect();
        from_stdin = true;
        if pos.is_empty() {
            return Err(Error::msg(
                "no input files given (on the command line or standard input)",
            ));
        }
    }
    if let Some(n) = n_spec {
        pos = generate_names(&pos[0], n)?;
    }
    let files = pos.iter().map(|f| with_prefix(prefix, f)).collect();
    Ok(Inputs {
        files,
        output,
        from_stdin,
    })
}

impl Inputs {
    /// The names NCO records in the output's input-list attributes: all of them when
    /// they were read from standard input, else none.
    pub fn recorded(&self) -> Option<Vec<String>> {
        self.from_stdin.then(|| self.files.clone())
    }
}

/// Set the input-list global attributes NCO writes for names read from standard input
/// (`nco_input_file_number`, `nco_input_file_list`) to `files`.
pub fn stamp_input_list(meta: &mut Meta, files: &[String]) {
    crate::model::set_attr(
        &mut meta.attrs,
        Attr {
            name: "nco_input_file_number".into(),
            value: Values::Int(vec![files.len() as i32]),
        },
    );
    crate::model::set_attr(
        &mut meta.attrs,
        Attr::text("nco_input_file_list", &files.join(" ")),
    );
}

/// Open every input. Errors name the failing file.
pub fn open_all(files: &[String]) -> Result<Vec<Dataset>> {
    files.iter().map(|f| Dataset::open(f)).collect()
}

/// Check that every file has the first file's fixed (non-record) dimensions used by
/// the variables `vars` (indices in the first file) with the same sizes. Errors name
/// the file and the dimension.
pub fn check_fixed_dims(sets: &[Dataset], vars: &[usize]) -> Result<()> {
    let first = sets[0].meta();
    let mut used: Vec<usize> = vars
        .iter()
        .flat_map(|&v| first.vars[v].dims.clone())
        .collect();
    used.sort_unstable();
    used.dedup();
    for ds in &sets[1..] {
        let m = ds.meta();
        for d in used
            .iter()
            .map(|&d| &first.dims[d])
            .filter(|d| !d.unlimited)
        {
            match m.dim_id(&d.name) {
                Some(i) if m.dims[i].len == d.len => {}
                Some(i) => {
                    return Err(Error::msg(format!(
                        "{}: dimension {} has size {} but {} in {}",
                        ds.path(),
                        d.name,
                        m.dims[i].len,
                        d.len,
                        sets[0].path()
                    )))
                }
                None => {
                    return Err(Error::msg(format!(
                        "{}: dimension {} of {} is missing",
                        ds.path(),
                        d.name,
                        sets[0].path()
                    )))
                }
            }
        }
    }
    Ok(())
}

/// The record dimension of the first input, which the record operators need (`prog`
/// names the operator in the error).
///
/// Errors: the first input has no record dimension.
pub fn record_dim(sets: &[Dataset], prog: &str) -> Result<usize> {
    sets[0].meta().record_dim().ok_or_else(|| {
        Error::msg(format!(
            "{}: has no record dimension, which {prog} needs",
            sets[0].path()
        ))
    })
}

/// Check that every input has `rec_name` as its record dimension.
///
/// Errors name the first input that has not.
pub fn check_record_dims(sets: &[Dataset], rec_name: &str) -> Result<()> {
    for ds in sets {
        let m = ds.meta();
        if m.dim_id(rec_name).is_none_or(|d| !m.dims[d].unlimited) {
            return Err(Error::msg(format!(
                "{}: has no record dimension {rec_name}",
                ds.path()
            )));
        }
    }
    Ok(())
}

/// Check that every input holds the record variables of `vars` (indices in the first
/// input).
///
/// Errors name the variable and the first input that lacks it.
pub fn check_record_vars(sets: &[Dataset], vars: &[usize]) -> Result<()> {
    let first = sets[0].meta();
    for ds in &sets[1..] {
        for &v in vars {
            let var = &first.vars[v];
            if first.is_record_var(var) && ds.meta().var_id(&var.name).is_none() {
                return Err(Error::var(
                    &var.name,
                    format!("is missing from input file {}", ds.path()),
                ));
            }
        }
    }
    Ok(())
}

/// Check that the members of an ensemble (nces, ncecat) agree with the first on the
/// type and shape of every variable of `vars` (indices in the first).
///
/// Errors name the variable and the files (with their types and shapes).
pub fn check_members(sets: &[Dataset], vars: &[usize]) -> Result<()> {
    let first = sets[0].meta();
    for ds in &sets[1..] {
        let m = ds.meta();
        for &v in vars {
            let var = &first.vars[v];
            let other = m.var(&var.name).ok_or_else(|| {
                Error::var(
                    &var.name,
                    format!("is missing from member file {}", ds.path()),
                )
            })?;
            if other.ty != var.ty || m.shape(other) != first.shape(var) {
                return Err(Error::var(
                    &var.name,
                    format!(
                        "differs in type or shape between {} ({} {:?}) and {} ({} {:?})",
                        sets[0].path(),
                        var.ty,
                        first.shape(var),
                        ds.path(),
                        other.ty,
                        m.shape(other)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The records the `-d` specs on the record dimension `rec_name` select across the
/// inputs ([`pick_records`], with each input's record count, coordinate and units).
///
/// Errors: an input without `rec_name`, bad bounds, a selection that picks nothing.
pub fn pick_records_in(
    sets: &[Dataset],
    specs: &[HyperslabSpec],
    rec_name: &str,
    fortran: bool,
) -> Result<Vec<RecordPick>> {
    let mut per_file = Vec::with_capacity(sets.len());
    for ds in sets {
        let m = ds.meta();
        let d = m.dim_id(rec_name).ok_or_else(|| {
            Error::msg(format!("{}: has no record dimension {rec_name}", ds.path()))
        })?;
        let coord = hyperslab::coordinate_values(m, &|v| ds.read_all(v), d)?;
        let units = m.var(rec_name).and_then(|v| v.attr_text("units"));
        per_file.push((m.dims[d].len, coord, units));
    }
    pick_records(specs, rec_name, &per_file, fortran)
}

/// One selected record: file index, record index in that file, and its group
/// (sub-cycle) number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordPick {
    /// Index of the file in the input list.
    pub file: usize,
    /// Record index within that file.
    pub record: usize,
    /// Group number (0 without sub-cycles; one output record per group with `--mro`).
    pub group: usize,
}

/// Select records across files from the `-d` specs on the record dimension `rec_name`
/// (see the module docs). `coord` gives each file's record coordinate (if any) and
/// record count.
///
/// Errors: bad bounds, or a selection that picks no record.
pub fn pick_records(
    specs: &[HyperslabSpec],
    rec_name: &str,
    files: &[(usize, Option<Vec<f64>>, Option<String>)],
    fortran: bool,
) -> Result<Vec<RecordPick>> {
    let mine: Vec<&HyperslabSpec> = specs.iter().filter(|s| s.dim == rec_name).collect();
    let total: usize = files.iter().map(|f| f.0).sum();
    let mut out = Vec::new();
    if mine.is_empty() {
        for (fi, f) in files.iter().enumerate() {
            out.extend((0..f.0).map(|r| RecordPick {
                file: fi,
                record: r,
                group: 0,
            }));
        }
        return Ok(out);
    }
    let is_coord = |b: &Option<Bound>| matches!(b, Some(Bound::Value(_) | Bound::Date(_)));
    for spec in mine {
        if is_coord(&spec.min) || is_coord(&spec.max) {
            // Per file, by coordinate value; the stride counts within the whole list.
            let mut k = 0usize;
            for (fi, (n, coord, units)) in files.iter().enumerate() {
                if *n == 0 {
                    continue;
                }
                let info = DimInfo {
                    len: *n,
                    coord: coord.as_deref(),
                    units: units.as_deref(),
                    calendar: None,
                };
                let one = HyperslabSpec {
                    stride: 1,
                    ..spec.clone()
                };
                let idx = match hyperslab::resolve_one(&one, &info, fortran) {
                    Ok(i) => i,
                    Err(_) => continue,
                };
                for r in idx {
                    if k % spec.stride == 0 {
                        out.push(RecordPick {
                            file: fi,
                            record: r,
                            group: 0,
                        });
                    }
                    k += 1;
                }
            }
        } else {
            let info = DimInfo {
                len: total,
                coord: None,
                units: None,
                calendar: None,
            };
            let sub = spec.subcycle.unwrap_or(1);
            let base = HyperslabSpec {
                stride: 1,
                subcycle: None,
                ..spec.clone()
            };
            let span = hyperslab::resolve_one(&base, &info, fortran)?;
            let mut globals = Vec::new();
            let mut group = 0usize;
            let mut i = 0usize;
            while i < span.len() {
                for j in 0..sub {
                    if let Some(&g) = span.get(i + j) {
                        globals.push((g, group));
                    }
                }
                group += 1;
                i += spec.stride.max(1);
                if sub == 1 {
                    group = 0;
                }
            }
            for (g, grp) in globals {
                let mut rest = g;
                for (fi, f) in files.iter().enumerate() {
                    if rest < f.0 {
                        out.push(RecordPick {
                            file: fi,
                            record: rest,
                            group: grp,
                        });
                        break;
                    }
                    rest -= f.0;
                }
            }
        }
    }
    if out.is_empty() {
        return Err(Error::msg(format!(
            "the record hyperslab on {rec_name} selects no record in any input file"
        )));
    }
    Ok(out)
}

/// The concatenation of the selected records of several files, read like one dataset
/// whose record dimension has one entry per pick (ncrcat's view of its inputs).
pub struct Concat<'a> {
    /// The inputs.
    pub sets: &'a [Dataset],
    /// The selected records, in output order.
    pub picks: &'a [RecordPick],
    /// Per file (factor, offset) applied to the record coordinate (time rebasing).
    pub rebase: Vec<(f64, f64)>,
    /// Reads prepared by [`Concat::prefetch`].
    pub ahead: crate::dataset::ReadAhead,
}

impl Concat<'_> {
    /// Values of variable `v` read from file `f`, converted to the first file's time
    /// units when `v` is the record coordinate and the units differ.
    fn rebased(&self, f: usize, v: usize, vals: Values) -> Values {
        let first = self.sets[0].meta();
        let var = &first.vars[v];
        if !first.is_coord_var(var) {
            return vals;
        }
        match self.rebase.get(f).filter(|r| **r != (1.0, 0.0)) {
            Some(&(fac, off)) => {
                let x: Vec<f64> = vals
                    .to_f64_vec()
                    .unwrap_or_default()
                    .iter()
                    .map(|x| x * fac + off)
                    .collect();
                Values::from_f64_slice(var.ty, &x).unwrap_or(vals)
            }
            None => vals,
        }
    }

    /// Variable `name`'s index in input file `f`.
    ///
    /// Errors: the variable is missing from that file (named).
    fn var_in(&self, f: usize, name: &str) -> Result<usize> {
        let ds = &self.sets[f];
        ds.meta()
            .var_id(name)
            .ok_or_else(|| Error::var(name, format!("is missing from input file {}", ds.path())))
    }

    /// Split positions into the picks into runs from one file: `(file, its records)`,
    /// in order.
    fn segments(&self, pos: &[usize]) -> Vec<(usize, Vec<usize>)> {
        let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
        for &p in pos {
            let pick = &self.picks[p];
            match out.last_mut() {
                Some((f, recs)) if *f == pick.file => recs.push(pick.record),
                _ => out.push((pick.file, vec![pick.record])),
            }
        }
        out
    }

    /// Read variable `v` (index in the first file) with per-dimension indices `idx`;
    /// for record variables `idx[0]` holds positions into the picks.
    ///
    /// Errors: the variable is missing from a file (named), I/O errors.
    pub fn read(&self, v: usize, idx: &[Vec<usize>]) -> Result<Values> {
        if let Some(vals) = self.ahead.take(v, idx) {
            return Ok(vals);
        }
        let first = self.sets[0].meta();
        let var = &first.vars[v];
        if !first.is_record_var(var) {
            return self.sets[0].read(v, idx);
        }
        let mut out: Option<Values> = None;
        let mut sub = idx.to_vec();
        for (f, recs) in self.segments(&idx[0]) {
            let ds = &self.sets[f];
            let vid = self.var_in(f, &var.name)?;
            sub[0] = recs;
            let vals = self.rebased(f, v, ds.read(vid, &sub)?);
            match &mut out {
                None => out = Some(vals),
                Some(o) => {
                    o.extend_from(&vals);
                }
            }
        }
        Ok(out.unwrap_or_else(|| Values::with_capacity(var.ty, 0)))
    }

    /// Read ahead what later [`Concat::read`] calls of variable `v` with each of
    /// `reqs` (per-dimension indices, as for `read`) will return: every input is read
    /// once for all requests ([`Dataset::gather`]), and each request's records are
    /// concatenated (and rebased) now, for `read` to hand out.
    ///
    /// Errors: the variable is missing from a file (named), I/O errors.
    pub fn prefetch(&self, v: usize, reqs: &[Vec<Vec<usize>>]) -> Result<()> {
        let first = self.sets[0].meta();
        let var = &first.vars[v];
        let groups = crate::dataset::distinct_selections(reqs);
        if !first.is_record_var(var) {
            let distinct: Vec<&[Vec<usize>]> = groups.iter().map(|g| g.0).collect();
            let values = self.sets[0].gather(v, &distinct)?;
            for ((s, n), vals) in groups.into_iter().zip(values) {
                self.ahead.put(v, s, vals, n);
            }
            return Ok(());
        }
        let rebased = first.is_coord_var(var) && self.rebase.iter().any(|r| *r != (1.0, 0.0));
        let all_classic = self.sets.iter().all(|d| d.classic().is_some());
        if rebased || !all_classic {
            // The record coordinate in other units, or a file read by libnetcdf: read
            // each request as `read` would (few and small, or no faster path).
            for (s, n) in groups {
                let vals = self.read(v, s)?;
                self.ahead.put(v, s, vals, n);
            }
            return Ok(());
        }
        // Requests taking the same records are gathered together, file by file, their
        // bytes appended to one buffer per request in output order.
        let es = var.ty.size();
        let mut outs: Vec<Vec<u8>> = groups
            .iter()
            .map(|(s, _)| Vec::with_capacity(s.iter().map(Vec::len).product::<usize>() * es))
            .collect();
        let mut done = vec![false; groups.len()];
        for g in 0..groups.len() {
            if done[g] {
                continue;
            }
            let pos = &groups[g].0[0];
            let members: Vec<usize> = (g..groups.len())
                .filter(|&h| !done[h] && groups[h].0[0] == *pos)
                .collect();
            let sels: Vec<&[Vec<usize>]> = members.iter().map(|&h| groups[h].0).collect();
            let mut bufs: Vec<Vec<u8>> = members
                .iter()
                .map(|&h| std::mem::take(&mut outs[h]))
                .collect();
            for (f, recs) in self.segments(pos) {
                let ds = &self.sets[f];
                let vid = self.var_in(f, &var.name)?;
                ds.gather_raw_into(vid, Some(&recs), &sels, &mut bufs)?;
            }
            for (&h, b) in members.iter().zip(bufs) {
                outs[h] = b;
                done[h] = true;
            }
        }
        for ((s, n), raw) in groups.into_iter().zip(outs) {
            self.ahead
                .put(v, s, crate::dataset::decode_raw(var.ty, &raw), n);
        }
        Ok(())
    }
}

/// Per-file (factor, offset) converting `rec_name`'s values to the first file's units
/// (identity when the units agree or are not time units).
pub fn rebase_factors(sets: &[Dataset], rec_name: &str) -> Vec<(f64, f64)> {
    let units = |m: &Meta| m.var(rec_name).and_then(|v| v.attr_text("units"));
    let cal = sets[0]
        .meta()
        .var(rec_name)
        .and_then(|v| v.attr_text("calendar"));
    let first = units(sets[0].meta());
    sets.iter()
        .map(|ds| match (&first, units(ds.meta())) {
            (Some(a), Some(b)) if *a != b => {
                crate::rules::calendar::rebase(&b, a, cal.as_deref()).unwrap_or((1.0, 0.0))
            }
            _ => (1.0, 0.0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_counting() {
        assert_eq!(
            generate_names("in1.nc", "2,1,1").unwrap(),
            vec!["in1.nc", "in2.nc"]
        );
        assert_eq!(
            generate_names("a_05.nc", "3,2,5").unwrap(),
            vec!["a_05.nc", "a_10.nc", "a_15.nc"]
        );
        assert!(generate_names("in.nc", "2,1,1").is_err());
        assert!(generate_names("in1.nc", "x").is_err());
    }

    #[test]
    fn stride_carries_across_files() {
        let files = vec![(10, None, None), (5, None, None), (3, None, None)];
        let s = HyperslabSpec::parse("time,10,,2").unwrap();
        let p = pick_records(&[s], "time", &files, false).unwrap();
        let got: Vec<(usize, usize)> = p.iter().map(|r| (r.file, r.record)).collect();
        assert_eq!(got, vec![(1, 0), (1, 2), (1, 4), (2, 1)]);
    }

    #[test]
    fn subcycles_group_records() {
        let files = vec![(10, None, None)];
        let s = HyperslabSpec::parse("time,0,,2,2").unwrap();
        let p = pick_records(&[s], "time", &files, false).unwrap();
        assert_eq!(p.len(), 10);
        assert_eq!(
            p[2],
            RecordPick {
                file: 0,
                record: 2,
                group: 1
            }
        );
    }

    #[test]
    fn coordinate_bounds_apply_per_file() {
        let c: Vec<f64> = (1..=10).map(f64::from).collect();
        let files = vec![(10, Some(c.clone()), None), (10, Some(c), None)];
        let s = HyperslabSpec::parse("time,2.,3.").unwrap();
        let p = pick_records(&[s], "time", &files, false).unwrap();
        let got: Vec<(usize, usize)> = p.iter().map(|r| (r.file, r.record)).collect();
        assert_eq!(got, vec![(0, 1), (0, 2), (1, 1), (1, 2)]);
    }
}
