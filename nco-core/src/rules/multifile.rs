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
//!   starting every `stride` records; sub-cycles longer than the stride (overlapping)
//!   are taken only when all their records lie in one file, as NCO 5.1.4 does.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::model::{Attr, Meta};
use crate::rules::calendar::{Calendar, TimeConversion};
use crate::rules::hyperslab::{self, Bound, DimInfo, HyperslabSpec};
use crate::rules::packing::Packing;
use crate::types::{NcType, Values};

/// Expand `-n nbr,dgt,inc` from the first input name.
///
/// Errors: malformed `-n`, or a name without `dgt` digits before its extension.
pub fn generate_names(first: &Path, spec: &str) -> Result<Vec<PathBuf>> {
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
    // The name's bytes as they are (a name need not be UTF-8); the digits are ASCII.
    let name = first.as_os_str().as_bytes();
    let (stem, ext) = match name.iter().rposition(|&b| b == b'.') {
        Some(i) if !name[i..].contains(&b'/') => name.split_at(i),
        _ => (name, &b""[..]),
    };
    let d = dgt as usize;
    let digits = stem.len().checked_sub(d).map(|at| stem.split_at(at));
    let Some((base, digits)) = digits.filter(|(_, g)| g.iter().all(u8::is_ascii_digit)) else {
        return Err(bad(&format!(
            "{} does not end in {dgt} digits before its extension",
            first.display()
        )));
    };
    let start: i64 = String::from_utf8_lossy(digits)
        .parse()
        .map_err(|_| bad("bad digits"))?;
    Ok((0..nbr)
        .map(|k| {
            let mut n = base.to_vec();
            n.extend(format!("{:0width$}", start + k * inc, width = d).bytes());
            n.extend_from_slice(ext);
            PathBuf::from(OsString::from_vec(n))
        })
        .collect())
}

/// Prefix an input name with `-p` (unless it is absolute or a URL).
pub fn with_prefix(prefix: Option<&Path>, name: &Path) -> PathBuf {
    let url = name.to_str().is_some_and(|n| n.contains("://"));
    match prefix {
        Some(p) if !name.is_absolute() && !url => p.join(name),
        _ => name.to_path_buf(),
    }
}

/// The input file list and whether it came from standard input.
pub struct Inputs {
    /// Input names, prefixed.
    pub files: Vec<PathBuf>,
    /// Output name.
    pub output: PathBuf,
    /// True when the names were read from standard input.
    pub from_stdin: bool,
}

/// Split positional arguments into inputs and output (see the module docs).
///
/// Errors: no output, or no inputs (and nothing on standard input).
pub fn inputs(
    positional: &[PathBuf],
    output: Option<&Path>,
    prefix: Option<&Path>,
    n_spec: Option<&str>,
) -> Result<Inputs> {
    let mut pos = positional.to_vec();
    let output = match output {
        Some(o) => o.to_path_buf(),
        None => pos
            .pop()
            .ok_or_else(|| Error::msg("no output file given"))?,
    };
    let mut from_stdin = false;
    if pos.is_empty() {
        // Names are bytes separated by white space (a name need not be UTF-8).
        let mut s = Vec::new();
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            std::io::stdin()
                .read_to_end(&mut s)
                .map_err(|e| Error::io("standard input", e))?;
        }
        pos = s
            .split(u8::is_ascii_whitespace)
            .filter(|n| !n.is_empty())
            .map(|n| PathBuf::from(OsString::from_vec(n.to_vec())))
            .collect();
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

/// Refuse, under `mpirun`, a command line without input names (which [`inputs`]
/// would read from standard input: Open MPI gives it to rank 0 only, so the other
/// ranks would see none).
///
/// Errors: no input name among `positional` (the last is the output unless `output`,
/// `-o`, is given).
pub fn refuse_stdin_under_ranks(positional: &[PathBuf], output: Option<&Path>) -> Result<()> {
    if positional.len() > usize::from(output.is_none()) {
        return Ok(());
    }
    Err(Error::msg(
        "under mpirun give the input files on the command line: standard input reaches rank 0 only",
    ))
}

impl Inputs {
    /// The names NCO records in the output's input-list attributes: all of them when
    /// they were read from standard input, else none (attribute text: a name that is
    /// not UTF-8 has its invalid bytes replaced).
    pub fn recorded(&self) -> Option<Vec<String>> {
        self.from_stdin
            .then(|| self.files.iter().map(|f| f.display().to_string()).collect())
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
pub fn open_all(files: &[PathBuf]) -> Result<Vec<Dataset>> {
    files.iter().map(Dataset::open).collect()
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
        for (d, od) in used
            .iter()
            .map(|&d| (&first.dims[d], d))
            .filter(|(d, _)| !d.unlimited)
        {
            match m.dim_like(first, od) {
                Some(i) if m.dims[i].len == d.len => {}
                Some(i) => {
                    return Err(Error::msg(format!(
                        "{}: dimension {} has size {} but {} in {}",
                        ds.path().display(),
                        d.name,
                        m.dims[i].len,
                        d.len,
                        sets[0].path().display()
                    )))
                }
                None => {
                    return Err(Error::msg(format!(
                        "{}: dimension {} of {} is missing",
                        ds.path().display(),
                        d.name,
                        sets[0].path().display()
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
            sets[0].path().display()
        ))
    })
}

/// Refuse the variables of `vars` (indices in `first`) on an unlimited dimension other
/// than the run's record dimension `rec`: a group's own record dimension (netCDF-4),
/// along which NCO concatenates and averages each group separately. We do not yet,
/// and reading them along `rec` would give wrong records, so `prog` stops instead.
///
/// Errors: the first such variable, naming it and its dimension.
pub fn refuse_other_record_dims(
    first: &crate::model::Meta,
    rec: usize,
    vars: &[usize],
    prog: &str,
) -> Result<()> {
    for &v in vars {
        let var = &first.vars[v];
        if let Some(&d) = var
            .dims
            .iter()
            .find(|&&d| d != rec && first.dims[d].unlimited)
        {
            return Err(Error::var(
                &first.var_path(v),
                format!(
                    "is on {}, a record dimension of its own group: {prog} handles one record dimension per run ({}) and does not yet handle a group's own (exclude the group's variables on it, its coordinate variable too, with -x -v, or extract the group with ncks -g first)",
                    first.dim_path(d),
                    first.dim_path(rec)
                ),
            ));
        }
    }
    Ok(())
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
                ds.path().display()
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
            if first.is_record_var(var) && ds.meta().var_like(first, v).is_none() {
                return Err(Error::var(
                    &var.name,
                    format!("is missing from input file {}", ds.path().display()),
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
            let other = m.var_like(first, v).map(|o| &m.vars[o]).ok_or_else(|| {
                Error::var(
                    &first.var_path(v),
                    format!("is missing from member file {}", ds.path().display()),
                )
            })?;
            if other.ty != var.ty || m.shape(other) != first.shape(var) {
                return Err(Error::var(
                    &var.name,
                    format!(
                        "differs in type or shape between {} ({} {:?}) and {} ({} {:?})",
                        sets[0].path().display(),
                        var.ty,
                        first.shape(var),
                        ds.path().display(),
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
            Error::msg(format!(
                "{}: has no record dimension {rec_name}",
                ds.path().display()
            ))
        })?;
        let coord = hyperslab::coordinate_values(m, &|v| ds.read_all(v), d)?;
        let units = m.var(rec_name).and_then(|v| v.attr_text("units"));
        per_file.push((m.dims[d].len, coord, units));
    }
    // Coordinate values of -d are in the first file's units (NCO 5.1.4: `ncrcat -d
    // time,1.5,3.5` over "days since 2000-01-01" then "days since 2000-01-03" picks
    // 2 of the first file and 2, 3 of the second in the first's days): a later
    // file's time coordinate is converted to them before the bounds are compared.
    let by_value = specs.iter().any(|s| {
        s.dim == rec_name && (Bound::is_coordinate(&s.min) || Bound::is_coordinate(&s.max))
    });
    if let (true, Some(v0)) = (
        by_value,
        sets.first().and_then(|ds| ds.meta().var_id(rec_name)),
    ) {
        let align = TimeAlign::of(sets, rec_name)?;
        let first_units = per_file[0].2.clone();
        for (f, pf) in per_file.iter_mut().enumerate().skip(1) {
            if let (Some(c), true) = (pf.1.as_mut(), align.get(f, v0).is_some()) {
                align.convert(f, v0, rec_name, c, None)?;
                pf.2 = first_units.clone();
            }
        }
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
    let is_coord = Bound::is_coordinate;
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
            // Interleave (sixth field, NCO manual "Interleave"): the records of each
            // sub-cycle at offsets k, k + ilv, k + 2 ilv... form group k, for k below
            // ilv, in that order (ncrcat writes them so; ncra one record each).
            let ilv = spec.interleave.unwrap_or(1).max(1);
            while i < span.len() {
                if ilv > 1 {
                    for k in 0..ilv {
                        let members: Vec<usize> = (k..sub)
                            .step_by(ilv)
                            .filter_map(|j| span.get(i + j).copied())
                            .collect();
                        if !members.is_empty() {
                            globals.extend(members.into_iter().map(|g| (g, group)));
                            group += 1;
                        }
                    }
                } else if sub > spec.stride.max(1) && !whole_in_one_file(&span, i, sub, files) {
                    // Overlapping sub-cycles (longer than the stride): NCO 5.1.4 takes
                    // only those whose records all lie in one file, so a cycle that
                    // crosses a file boundary or runs past the last record is left out
                    // (shorter ones are kept when cycles do not overlap).
                } else {
                    for j in 0..sub {
                        if let Some(&g) = span.get(i + j) {
                            globals.push((g, group));
                        }
                    }
                    group += 1;
                    if sub == 1 {
                        group = 0;
                    }
                }
                i += spec.stride.max(1);
            }
            for (g, grp) in globals {
                if let Some((file, record)) = locate(files, g) {
                    out.push(RecordPick {
                        file,
                        record,
                        group: grp,
                    });
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

/// The file and record of record `g` of the concatenation of `files`; `None` past
/// the last.
fn locate(files: &[(usize, Option<Vec<f64>>, Option<String>)], g: usize) -> Option<(usize, usize)> {
    let mut rest = g;
    for (fi, f) in files.iter().enumerate() {
        if rest < f.0 {
            return Some((fi, rest));
        }
        rest -= f.0;
    }
    None
}

/// Whether the `sub` records of `span` from position `i` all exist and lie in one of
/// `files` (counted across the concatenation).
fn whole_in_one_file(
    span: &[usize],
    i: usize,
    sub: usize,
    files: &[(usize, Option<Vec<f64>>, Option<String>)],
) -> bool {
    let file_of = |g: usize| locate(files, g).map(|(f, _)| f);
    match (span.get(i), span.get(i + sub - 1)) {
        (Some(&a), Some(&b)) => file_of(a).is_some() && file_of(a) == file_of(b),
        _ => false,
    }
}

/// The time-valued variables of multi-file inputs and how each later file's values
/// convert to the first file's units and calendar, before any arithmetic or
/// concatenation (ncra, ncrcat): the record coordinate and the variables its `bounds`
/// and `climatology` attributes name in the first file (CF §7.1, §7.4). A variable's
/// units and calendar are its own attributes, or else the record coordinate's in the
/// same file (CF bounds inherit them). Values are converted in double precision
/// ([`crate::rules::calendar::TimeConversion`]), so an integer time of one file meets a
/// double time of another without truncation.
#[derive(Clone, Debug, Default)]
pub struct TimeAlign {
    /// (file, variable in the first file, conversion), the non-identity ones only.
    conv: Vec<(usize, usize, TimeConversion)>,
    /// The input paths, for messages.
    paths: Vec<String>,
    /// Integer time variables of the first file written in NC_DOUBLE.
    promoted: Vec<usize>,
}

impl TimeAlign {
    /// The conversions of `sets` (record dimension `rec_name`), every record of the
    /// later files deciding whether an integer time needs NC_DOUBLE.
    ///
    /// Errors: time units (`... since ...`) or a calendar that cannot be converted to
    /// the first file's (naming the file, the variable and both units), or a conversion
    /// needed on a packed variable.
    pub fn of(sets: &[Dataset], rec_name: &str) -> Result<TimeAlign> {
        TimeAlign::of_picked(sets, rec_name, None)
    }

    /// [`TimeAlign::of`] where only the records `picks` selects decide whether an
    /// integer time needs NC_DOUBLE (records `-d` leaves out are not written, so their
    /// values do not change the output's type; NCO 5.1.4 keeps the integer type then).
    ///
    /// Errors: as [`TimeAlign::of`].
    pub fn of_picked(
        sets: &[Dataset],
        rec_name: &str,
        picks: Option<&[RecordPick]>,
    ) -> Result<TimeAlign> {
        let first = sets[0].meta();
        let Some(rec) = first.var_id(rec_name) else {
            return Ok(TimeAlign::default());
        };
        let mut names = vec![rec_name.to_string()];
        for a in ["bounds", "climatology"] {
            if let Some(b) = first.vars[rec].attr_text(a) {
                let b = b.trim().to_string();
                if first.var_id(&b).is_some() && !names.contains(&b) {
                    names.push(b);
                }
            }
        }
        // Units and calendar of variable `name` in `m`, inherited from the record
        // coordinate when absent.
        let attrs = |m: &Meta, name: &str| {
            let own = m.var(name);
            let coord = m.var(rec_name);
            let get = |a: &str| {
                own.and_then(|v| v.attr_text(a))
                    .or_else(|| coord.and_then(|v| v.attr_text(a)))
            };
            (get("units"), get("calendar"))
        };
        let mut conv = Vec::new();
        for (f, ds) in sets.iter().enumerate().skip(1) {
            let m = ds.meta();
            for name in &names {
                let Some(vid) = m.var_id(name) else { continue };
                let (tu, tc) = attrs(first, name);
                let (fu, fc) = attrs(m, name);
                let (Some(tu), Some(fu)) = (tu, fu) else {
                    continue;
                };
                if tu == fu && Calendar::parse(tc.as_deref()) == Calendar::parse(fc.as_deref()) {
                    continue;
                }
                let is_time = |u: &str| u.to_ascii_lowercase().contains(" since ");
                if !is_time(&tu) && !is_time(&fu) {
                    // Other units (not time): left as they are, as NCO does.
                    continue;
                }
                let c =
                    TimeConversion::new(&fu, fc.as_deref(), &tu, tc.as_deref()).map_err(|e| {
                        Error::var(
                            name,
                            format!(
                                "in {}: {e} to the first file's \"{tu}\"{} ({})",
                                ds.path().display(),
                                tc.as_deref()
                                    .map(|c| format!(" with calendar \"{c}\""))
                                    .unwrap_or_default(),
                                sets[0].path().display()
                            ),
                        )
                    })?;
                if c == TimeConversion::Identity {
                    continue;
                }
                if crate::rules::packing::packing_of(&m.vars[vid], false).is_some() {
                    return Err(Error::var(
                        name,
                        format!(
                            "in {} is packed and its time units differ from the first file's; unpack it first (ncpdq -U)",
                            ds.path().display()
                        ),
                    ));
                }
                let v = first.var_id(name).unwrap_or(rec);
                conv.push((f, v, c));
            }
        }
        let mut align = TimeAlign {
            conv,
            paths: sets
                .iter()
                .map(|d| d.path().display().to_string())
                .collect(),
            promoted: Vec::new(),
        };
        // An integer time of the first file takes the later files' values exactly: in
        // NC_DOUBLE when one of them, in the first file's units, is not a whole number
        // (NCO 5.1.4 rounds it into the integer type, a 12-hour error for a half day).
        // The record coordinate and its bounds go together (all integer ones become
        // NC_DOUBLE), so that ncra's mean bounds stay those of its mean time. Time
        // variables are small (one value or two per record): read whole.
        let ints: Vec<usize> = names
            .iter()
            .filter_map(|n| first.var_id(n))
            .filter(|&v| first.vars[v].ty.is_numeric() && !first.vars[v].ty.is_float())
            .collect();
        // Per file, which of its records are written.
        let picked: Option<Vec<Vec<bool>>> = picks.filter(|_| !ints.is_empty()).map(|ps| {
            let mut w: Vec<Vec<bool>> = sets
                .iter()
                .map(|ds| {
                    let m = ds.meta();
                    vec![false; m.dim_id(rec_name).map_or(0, |d| m.dims[d].len)]
                })
                .collect();
            for p in ps {
                if let Some(b) = w.get_mut(p.file).and_then(|r| r.get_mut(p.record)) {
                    *b = true;
                }
            }
            w
        });
        let mut inexact = false;
        'vars: for &v in &ints {
            let name = &first.vars[v].name;
            for (f, ds) in sets.iter().enumerate().skip(1) {
                let m = ds.meta();
                let Some(vid) = m.var_id(name) else { continue };
                if !m.vars[vid].ty.is_float() && align.get(f, v).is_none() {
                    continue;
                }
                let own_fill = crate::rules::fill::fill_value(&m.vars[vid]);
                let mut x = ds.read_all(vid)?.to_f64_vec().unwrap_or_default();
                align.convert(f, v, name, &mut x, own_fill)?;
                // The records of this file that are written (all without `picks`).
                let records = m.dim_id(rec_name).map_or(1, |d| m.dims[d].len).max(1);
                let per = (x.len() / records).max(1);
                let written = |e: usize| {
                    picked
                        .as_ref()
                        .is_none_or(|w| w[f].get(e / per).copied().unwrap_or(false))
                };
                if x.iter().enumerate().any(|(e, &x)| {
                    Some(x) != own_fill && x.is_finite() && x.fract() != 0.0 && written(e)
                }) {
                    inexact = true;
                    break 'vars;
                }
            }
        }
        if inexact {
            align.promoted = ints;
        }
        Ok(align)
    }

    /// The output type of time variable `var` (index in the first file) of type `ty`
    /// in the first file: NC_DOUBLE when the first file's type is an integer type that
    /// cannot hold a later file's values, `ty` otherwise.
    pub fn output_type(&self, var: usize, ty: NcType) -> NcType {
        if self.promoted.contains(&var) {
            NcType::Double
        } else {
            ty
        }
    }

    /// The variables (indices in the first file) written in NC_DOUBLE instead of the
    /// first file's integer type ([`TimeAlign::output_type`]).
    pub fn promoted(&self) -> &[usize] {
        &self.promoted
    }

    /// Give the promoted variables of the output definition `out` (found by name)
    /// their NC_DOUBLE type, fill attributes converted.
    pub fn promote(&self, first: &Meta, out: &mut Meta) {
        for &v in &self.promoted {
            if let Some(o) = out.var_like(first, v) {
                let var = &mut out.vars[o];
                var.ty = NcType::Double;
                crate::rules::fill::convert_fill_attrs(var, NcType::Double);
            }
        }
    }

    /// The conversion of variable `var` (index in the first file) of file `file`;
    /// `None` when its values are already in the first file's units.
    pub fn get(&self, file: usize, var: usize) -> Option<&TimeConversion> {
        self.conv
            .iter()
            .find(|(f, v, _)| *f == file && *v == var)
            .map(|c| &c.2)
    }

    /// True when some file's values of `var` need converting.
    pub fn converts(&self, var: usize) -> bool {
        self.conv.iter().any(|c| c.1 == var)
    }

    /// True when nothing needs converting.
    pub fn is_empty(&self) -> bool {
        self.conv.is_empty()
    }

    /// For an affine conversion, the packing that reads file `file`'s stored values of
    /// `var` straight into the first file's units (composed with the variable's own
    /// `pack`, if any): what ncra's accumulators take. `None` when nothing converts
    /// or the conversion goes through dates ([`TimeAlign::convert`]).
    pub fn as_packing(
        &self,
        file: usize,
        var: usize,
        pack: Option<&Packing>,
        unpacked_type: NcType,
    ) -> Option<Packing> {
        let (factor, offset) = self.get(file, var)?.affine()?;
        let (sf, ao, hdf) =
            pack.map_or((1.0, 0.0, false), |p| (p.scale_factor, p.add_offset, p.hdf));
        // (sf * x + ao) * factor + offset, or with --hdf_upk sf * (x - ao) * factor + offset.
        Some(if hdf {
            Packing {
                scale_factor: sf * factor,
                add_offset: ao - offset / (sf * factor),
                unpacked_type,
                hdf: true,
            }
        } else {
            Packing {
                scale_factor: sf * factor,
                add_offset: ao * factor + offset,
                unpacked_type,
                hdf: false,
            }
        })
    }

    /// Convert values of `var` read from file `file` (in f64, missing values already
    /// replaced by `missing`, which is kept) to the first file's units.
    ///
    /// Errors: a date the first file's calendar lacks (naming the file and variable).
    pub fn convert(
        &self,
        file: usize,
        var: usize,
        name: &str,
        x: &mut [f64],
        missing: Option<f64>,
    ) -> Result<()> {
        let Some(c) = self.get(file, var) else {
            return Ok(());
        };
        for v in x.iter_mut() {
            if Some(*v) == missing {
                continue;
            }
            *v = c.apply(*v).map_err(|e| {
                Error::var(
                    name,
                    format!(
                        "value {v} in {} {e} (the first file's, {})",
                        self.paths.get(file).map_or("", String::as_str),
                        self.paths.first().map_or("", String::as_str)
                    ),
                )
            })?;
        }
        Ok(())
    }
}

/// The concatenation of the selected records of several files, read like one dataset
/// whose record dimension has one entry per pick (ncrcat's view of its inputs). Values
/// of a later file come in the first file's type (by the overflow-safe cast) and, for
/// the time variables of [`TimeAlign`], in its units and calendar.
pub struct Concat<'a> {
    /// The inputs.
    pub sets: &'a [Dataset],
    /// The selected records, in output order.
    pub picks: &'a [RecordPick],
    /// Time conversions of the later files (empty: read values as they are).
    pub times: TimeAlign,
    /// Reads prepared by [`Concat::prefetch`].
    pub ahead: crate::dataset::ReadAhead,
    /// Per variable name: values converted to an integer type that were not whole
    /// numbers (rounded), and values that did not fit the type (written as the fill
    /// value); reported by [`Concat::warnings`].
    notes: std::sync::Mutex<std::collections::BTreeMap<String, (usize, usize)>>,
}

impl<'a> Concat<'a> {
    /// The view of the `picks` of `sets`, with the time conversions `times`.
    pub fn new(sets: &'a [Dataset], picks: &'a [RecordPick], times: TimeAlign) -> Concat<'a> {
        Concat {
            sets,
            picks,
            times,
            ahead: Default::default(),
            notes: Default::default(),
        }
    }

    /// One warning line per variable whose converted values were rounded to an
    /// integer type or did not fit the first file's type.
    pub fn warnings(&self) -> Vec<String> {
        let notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = self.sets[0].meta();
        let mut out = Vec::new();
        for (name, &(rounded, unfit)) in notes.iter() {
            let ty = first.var(name).map_or(NcType::Double, |v| v.ty);
            if rounded > 0 {
                out.push(format!(
                    "WARNING {rounded} value(s) of {name} from later files are not whole numbers in the first file's units and were rounded to its type {ty}"
                ));
            }
            if unfit > 0 {
                out.push(format!(
                    "WARNING {unfit} value(s) of {name} from later files do not fit the first file's type {ty} and were written as the fill value"
                ));
            }
        }
        out
    }
}

impl Concat<'_> {
    /// Values of variable `v` read from file `f`, in the first file's type and, for the
    /// time variables, converted to its units and calendar.
    ///
    /// Errors: a date the first file's calendar lacks.
    fn rebased(&self, f: usize, v: usize, vals: Values) -> Result<Values> {
        let first = self.sets[0].meta();
        let var = &first.vars[v];
        let ty = self.times.output_type(v, var.ty);
        let converts = self.times.get(f, v).is_some();
        if !converts && vals.nc_type() == ty {
            return Ok(vals);
        }
        if !ty.is_numeric() || !vals.nc_type().is_numeric() {
            return Ok(vals);
        }
        let fm = self.sets[f].meta();
        let own_fill = fm
            .var_like(first, v)
            .and_then(|o| crate::rules::fill::fill_value(&fm.vars[o]));
        let out_fill = crate::rules::fill::fill_value(var)
            .unwrap_or_else(|| crate::rules::fill::default_fill(ty));
        let mut x = vals.to_f64_vec().unwrap_or_default();
        let mut missing = Vec::new();
        if own_fill.is_some() {
            missing = x.iter().map(|&e| Some(e) == own_fill).collect();
        }
        self.times.convert(f, v, &var.name, &mut x, own_fill)?;
        let mut rounded = 0;
        if !ty.is_float() {
            rounded = x
                .iter()
                .enumerate()
                .filter(|&(i, &e)| {
                    !missing.get(i).copied().unwrap_or(false)
                        && e.is_finite()
                        && (e - e.round()).abs() > 1e-9 * e.abs().max(1.0)
                })
                .count();
        }
        for (e, &m) in x.iter_mut().zip(&missing) {
            if m {
                *e = out_fill;
            }
        }
        let (out, unfit) = nco_kernels::cast::cast_values(&x, ty, out_fill);
        if rounded + unfit > 0 {
            let mut notes = self
                .notes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let e = notes.entry(var.name.clone()).or_default();
            e.0 += rounded;
            e.1 += unfit;
        }
        Ok(out)
    }

    /// The index in input file `f` of variable `v` of the first file (matched by path,
    /// [`Meta::var_like`]).
    ///
    /// Errors: the variable is missing from that file (named).
    fn var_in(&self, f: usize, v: usize) -> Result<usize> {
        let ds = &self.sets[f];
        let first = self.sets[0].meta();
        ds.meta().var_like(first, v).ok_or_else(|| {
            Error::var(
                &first.var_path(v),
                format!("is missing from input file {}", ds.path().display()),
            )
        })
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
            let vid = self.var_in(f, v)?;
            sub[0] = recs;
            let vals = self.rebased(f, v, ds.read(vid, &sub)?)?;
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
        let converted = self.times.converts(v)
            || self.times.promoted().contains(&v)
            || self.sets[1..].iter().any(|d| {
                d.meta()
                    .var_like(first, v)
                    .is_some_and(|o| d.meta().vars[o].ty != var.ty)
            });
        let all_classic = self.sets.iter().all(|d| d.classic().is_some());
        if converted || !all_classic {
            // Time values in other units, another type in a later file, or a file read
            // by libnetcdf: read each request as `read` would (few and small, or no
            // faster path).
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
                let vid = self.var_in(f, v)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_counting() {
        let names = |first: &str, spec: &str| generate_names(Path::new(first), spec);
        assert_eq!(
            names("in1.nc", "2,1,1").unwrap(),
            [Path::new("in1.nc"), Path::new("in2.nc")]
        );
        assert_eq!(
            names("a_05.nc", "3,2,5").unwrap(),
            [
                Path::new("a_05.nc"),
                Path::new("a_10.nc"),
                Path::new("a_15.nc")
            ]
        );
        assert!(names("in.nc", "2,1,1").is_err());
        assert!(names("in1.nc", "x").is_err());
        // A name that is not UTF-8 keeps its bytes.
        let first = PathBuf::from(OsString::from_vec(b"d\xff1.nc".to_vec()));
        let got = generate_names(&first, "2,1,1").unwrap();
        assert_eq!(got[1].as_os_str().as_bytes(), b"d\xff2.nc");
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
