//! List-input multi-station extraction (a capability NCO lacks): one invocation of
//! ncks or ncrcat reads each input file once and cuts out many station or region
//! hyperslabs, to many files or to one file with a `station` dimension.
//!
//! List syntax (a file, or `-` for standard input), one station per line:
//!
//! ```text
//! # comment; blank lines are skipped
//! -d lon,13.42 -d lat,52.53 berlin.nc
//! -d lon,2.35 -d lat,48.86 -v T,PS paris.nc
//! ```
//!
//! Each line holds `-d` hyperslabs (any form `-d` takes, repeated as on the command
//! line), optionally `-v` (a variable list for that station), and ends with one bare
//! word: the output file (many-files form) or the station's name (station form, when
//! the command line names one output file). Command-line `-d` options apply to every
//! station; a line's own `-d` on the same dimension replaces them.
//!
//! Station form: every line must pick single points (one index) on the same set of
//! dimensions (e.g. `lat` and `lon`); the output has a new leading dimension (`station`
//! by default) instead of those, the picked coordinates become `lat(station)`,
//! `lon(station)`, plus `station_name(station, station_name_length)` with
//! `cf_role = "timeseries_id"`, as CF discrete-sampling-geometry time series have them
//! (CF §H.2); a record dimension becomes fixed.
//!
//! All-or-nothing: every output is written to its temporary file first and renamed
//! only when all of them were written; on any error none is renamed.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};
use crate::model::{Attr, Dim, Meta, Storage, Var};
use crate::rules::hyperslab::{self, Bound, HyperslabSpec, Selection};
use crate::types::{NcType, Values};

/// The station-list options of ncks and ncrcat.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct StationArgs {
    /// Station list (file, or - for standard input): one `-d ... target` line per
    /// station (README "Multi-station extraction"); ncrcat then takes every positional
    /// argument as an input and `-o FILE` selects the one-file station form
    #[arg(long = "list", visible_alias = "stn_lst", value_name = "FILE")]
    pub list: Option<std::path::PathBuf>,
    /// Name of the station dimension of the one-file station form
    #[arg(
        long = "station_dim",
        visible_alias = "stn_dmn",
        value_name = "NAME",
        default_value = "station"
    )]
    pub station_dim: String,
}

/// One line of a station list.
#[derive(Clone, Debug, PartialEq)]
pub struct Station {
    /// 1-based line number in the list.
    pub line: usize,
    /// The line's hyperslabs.
    pub specs: Vec<HyperslabSpec>,
    /// The line's `-v` list, if any.
    pub vars: Option<String>,
    /// Output file (many-files form) or station name (station form).
    pub target: String,
}

fn line_error(line: usize, reason: impl std::fmt::Display) -> Error {
    Error::msg(format!("station list line {line}: {reason}"))
}

/// Split a line into words, honouring single and double quotes.
fn words(s: &str) -> std::result::Result<Vec<String>, &'static str> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err("unterminated quote");
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// Parse a station list. Errors name the line: unknown options, a `-d` without its
/// argument, a malformed hyperslab, a line without a target, or two targets.
pub fn parse_list(text: &str) -> Result<Vec<Station>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let w = words(body).map_err(|e| line_error(line, e))?;
        let mut specs = Vec::new();
        let mut vars = None;
        let mut target: Option<String> = None;
        let mut k = 0;
        while k < w.len() {
            let t = &w[k];
            let (opt, inline) = if let Some(rest) = t
                .strip_prefix("--dmn=")
                .or_else(|| t.strip_prefix("--dimension="))
            {
                ("-d", Some(rest.to_string()))
            } else if t.starts_with("-d") && t.len() > 2 && !t.starts_with("--") {
                ("-d", Some(t[2..].to_string()))
            } else if t == "-d" || t == "--dmn" || t == "--dimension" {
                ("-d", None)
            } else if t == "-v" || t == "--variable" {
                ("-v", None)
            } else if t.starts_with('-')
                && t.len() > 1
                && !t[1..].starts_with(|c: char| c.is_ascii_digit())
            {
                return Err(line_error(
                    line,
                    format!("unknown option {t} (only -d and -v are allowed in a list)"),
                ));
            } else {
                ("", None)
            };
            match opt {
                "-d" | "-v" => {
                    let arg = match inline {
                        Some(a) => a,
                        None => {
                            k += 1;
                            w.get(k)
                                .cloned()
                                .ok_or_else(|| line_error(line, format!("{t} needs an argument")))?
                        }
                    };
                    if opt == "-d" {
                        specs.push(HyperslabSpec::parse(&arg).map_err(|e| line_error(line, e))?);
                    } else {
                        vars = Some(arg);
                    }
                }
                _ => {
                    if target.is_some() {
                        return Err(line_error(
                            line,
                            format!("more than one output or station name ({t})"),
                        ));
                    }
                    if t.is_empty() {
                        return Err(line_error(line, "an empty output or station name (\"\")"));
                    }
                    target = Some(t.clone());
                }
            }
            k += 1;
        }
        let target =
            target.ok_or_else(|| line_error(line, "no output file or station name at the end"))?;
        out.push(Station {
            line,
            specs,
            vars,
            target,
        });
    }
    if out.is_empty() {
        return Err(Error::msg("the station list is empty"));
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for s in &out {
        if let Some(first) = seen.insert(s.target.as_str(), s.line) {
            return Err(line_error(
                s.line,
                format!("{} is also named on line {first}", s.target),
            ));
        }
    }
    Ok(out)
}

/// Read a list from a path, or standard input for `-`.
pub fn read_list(path: &std::path::Path) -> Result<Vec<Station>> {
    let text = if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Error::io("standard input", e))?;
        s
    } else {
        std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?
    };
    parse_list(&text)
}

/// Check that no two lines of a many-files list write the same file, however it is
/// spelled (`x.nc`, `./x.nc`, `sub/../x.nc`): outputs are compared by their folder's
/// resolved path and their file name. Folders that do not exist are compared as
/// written (writing there fails later with its own error).
///
/// Errors name both lines.
pub fn check_distinct_outputs(stations: &[Station]) -> Result<()> {
    let mut seen: HashMap<std::path::PathBuf, usize> = HashMap::new();
    for s in stations {
        let p = std::path::Path::new(&s.target);
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let key = dir.join(p.file_name().unwrap_or_default());
        if let Some(first) = seen.insert(key, s.line) {
            return Err(line_error(
                s.line,
                format!(
                    "{} is the same file as the output of line {first}",
                    s.target
                ),
            ));
        }
    }
    Ok(())
}

/// The hyperslabs of a station: the command line's, replaced dimension by dimension by
/// the line's own.
pub fn merged_specs(global: &[HyperslabSpec], st: &Station) -> Vec<HyperslabSpec> {
    let mut out: Vec<HyperslabSpec> = global
        .iter()
        .filter(|g| !st.specs.iter().any(|s| s.dim == g.dim))
        .cloned()
        .collect();
    out.extend(st.specs.iter().cloned());
    out
}

/// Check that every lone coordinate value a station names (`-d lat,52.53`, a point)
/// lies on the grid: within the coordinate's range widened by one grid step
/// (longitudes also modulo 360). Ranges are left to the hyperslab rules, as in a
/// separate run (a range reaching past the grid takes what lies inside it).
///
/// Errors name the line, the dimension and the value.
pub fn check_inside(
    meta: &Meta,
    read: &dyn Fn(usize) -> Result<Values>,
    st: &Station,
) -> Result<()> {
    for s in st.specs.iter().filter(|s| s.single) {
        let d = meta.dim_id(&s.dim).ok_or_else(|| {
            line_error(st.line, format!("dimension {} is not in the input", s.dim))
        })?;
        let Some(c) = hyperslab::coordinate_values(meta, read, d)? else {
            continue;
        };
        if c.is_empty() {
            continue;
        }
        let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let step = if c.len() > 1 {
            (hi - lo) / (c.len() - 1) as f64
        } else {
            0.0
        };
        let units = meta
            .var(&s.dim)
            .and_then(|v| v.attr_text("units"))
            .unwrap_or_default();
        let is_lon = units.starts_with("degree") && units.contains('E')
            || units.contains("east")
            || s.dim.starts_with("lon");
        for b in [&s.min, &s.max].into_iter().flatten() {
            if let Bound::Value(x) = b {
                let inside = |x: f64| x >= lo - step && x <= hi + step;
                let ok = inside(*x) || (is_lon && (inside(x - 360.0) || inside(x + 360.0)));
                if !ok {
                    return Err(line_error(
                        st.line,
                        format!("{} = {x} lies outside the grid ({lo} to {hi})", s.dim),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Plan of the station form: the output metadata and, per output variable, where its
/// data comes from.
#[derive(Clone, Debug)]
pub struct StationPlan {
    /// Output metadata (format set by the caller).
    pub meta: Meta,
    /// Per output variable: `Some(input var)` for data read per station or copied,
    /// `None` for `station_name`.
    pub src: Vec<Option<usize>>,
    /// Per output variable: true when it has the station dimension first.
    pub per_station: Vec<bool>,
    /// The station-picked input dimensions.
    pub station_dims: Vec<usize>,
    /// Each station's selection over the input dimensions.
    pub selections: Vec<Selection>,
}

/// Build the station form's output for `vars` (input indices, output order) of
/// `input`, given each station's resolved selection.
///
/// Errors: stations picking different dimensions, or more than one index on a picked
/// dimension (named by line).
pub fn plan_station_form(
    input: &Meta,
    vars: &[usize],
    base: &Selection,
    stations: &[Station],
    selections: Vec<Selection>,
    dim_name: &str,
) -> Result<StationPlan> {
    let picked = |s: &Station| -> Vec<usize> {
        let mut v: Vec<usize> = s
            .specs
            .iter()
            .filter_map(|x| input.dim_id(&x.dim))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let station_dims = picked(&stations[0]);
    if station_dims.is_empty() {
        return Err(line_error(
            stations[0].line,
            "the station form needs -d on the station dimensions (e.g. lat and lon)",
        ));
    }
    for (st, sel) in stations.iter().zip(&selections) {
        if picked(st) != station_dims {
            return Err(line_error(
                st.line,
                "every station must pick the same dimensions as the first line",
            ));
        }
        for &d in &station_dims {
            if sel.len(input, d) != 1 {
                return Err(line_error(
                    st.line,
                    format!("picks {} indices of {}; the station form needs single points (use the many-files form for regions)", sel.len(input, d), input.dims[d].name),
                ));
            }
        }
    }
    if input.dim_id(dim_name).is_some() {
        return Err(Error::option(
            "--station_dim",
            format!("dimension {dim_name} already exists in the input"),
        ));
    }
    let mut meta = Meta::new(input.format);
    meta.attrs = input.attrs.clone();
    crate::model::set_attr(&mut meta.attrs, Attr::text("featureType", "timeSeries"));
    meta.dims.push(Dim {
        name: dim_name.to_string(),
        len: stations.len(),
        unlimited: false,
        group: 0,
    });
    let mut dim_map: Vec<Option<usize>> = vec![None; input.dims.len()];
    let mut src = Vec::new();
    let mut per_station = Vec::new();
    let picked_coords: Vec<String> = station_dims
        .iter()
        .filter_map(|&d| input.var(&input.dims[d].name).map(|v| v.name.clone()))
        .collect();
    for &v in vars {
        let iv = &input.vars[v];
        let has = iv.dims.iter().any(|d| station_dims.contains(d));
        let mut dims = Vec::new();
        if has {
            dims.push(0);
        }
        for &d in &iv.dims {
            if station_dims.contains(&d) {
                continue;
            }
            let od = *dim_map[d].get_or_insert_with(|| {
                // A record dimension becomes fixed: the station dimension comes first.
                meta.dims.push(Dim {
                    name: input.dims[d].name.clone(),
                    len: base.len(input, d),
                    unlimited: false,
                    group: 0,
                });
                meta.dims.len() - 1
            });
            dims.push(od);
        }
        let mut ov = Var {
            name: iv.name.clone(),
            ty: iv.ty,
            dims,
            attrs: iv.attrs.clone(),
            storage: Storage::default(),
            group: 0,
        };
        let is_bounds = input.vars.iter().any(|c| {
            input.is_coord_var(c) && c.attr_text("bounds").as_deref() == Some(iv.name.as_str())
        });
        if has && !picked_coords.contains(&iv.name) && !is_bounds {
            let mut c = picked_coords.join(" ");
            c.push_str(" station_name");
            ov.set_attr(Attr::text("coordinates", c.trim()));
        }
        meta.vars.push(ov);
        src.push(Some(v));
        per_station.push(has);
    }
    let nlen = stations
        .iter()
        .map(|s| s.target.len())
        .max()
        .unwrap_or(1)
        .max(1);
    meta.dims.push(Dim {
        name: format!("{dim_name}_name_length"),
        len: nlen,
        unlimited: false,
        group: 0,
    });
    let nl = meta.dims.len() - 1;
    meta.vars.push(Var {
        name: format!("{dim_name}_name"),
        ty: NcType::Char,
        dims: vec![0, nl],
        attrs: vec![
            Attr::text("long_name", "station name"),
            Attr::text("cf_role", "timeseries_id"),
        ],
        storage: Storage::default(),
        group: 0,
    });
    src.push(None);
    per_station.push(true);
    Ok(StationPlan {
        meta,
        src,
        per_station,
        station_dims,
        selections,
    })
}

/// Memory for the stations' values read ahead at once in the many-files form, unless
/// `NCO_RS_LIST_BATCH_MB` says otherwise (read by the command-line layer): the stations
/// are taken in batches whose outputs fit in it, one pass over the inputs per batch (see
/// [`batches`]).
pub const DEFAULT_LIST_BATCH: usize = 512 << 20;

/// Split stations with output sizes `sizes` (bytes) into consecutive batches whose
/// sizes add up to at most `budget` (a larger station gets a batch of its own), so
/// memory stays bounded however many stations the list has.
pub fn batches(sizes: &[usize], budget: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut sum = 0usize;
    for (i, &b) in sizes.iter().enumerate() {
        if i > start && sum.saturating_add(b) > budget {
            out.push(start..i);
            start = i;
            sum = 0;
        }
        sum = sum.saturating_add(b);
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// One station's reads: (input variable, per-dimension indices), one entry per read.
pub type Reads = Vec<(usize, Vec<Vec<usize>>)>;

/// Bytes a station's reads bring in.
fn read_bytes(meta: &Meta, reads: &Reads) -> usize {
    reads
        .iter()
        .map(|(v, i)| i.iter().map(Vec::len).product::<usize>() * meta.vars[*v].ty.size())
        .sum()
}

/// How the many-files form reads ahead and writes, for [`write_in_batches`].
pub struct ReadAheadPlan<'a> {
    /// Each station's reads (variables of `meta`).
    pub reads: &'a [Reads],
    /// The read-ahead group of each station (stations of one group are gathered
    /// together, e.g. those taking the same records); all 0 when there is one.
    pub group: &'a [usize],
    /// Read ahead `(group, variable, selections)` in one pass over the inputs
    /// ([`crate::dataset::Dataset::prefetch`], [`crate::rules::multifile::Concat::prefetch`]).
    pub prefetch: &'a (dyn Fn(usize, usize, &[Vec<Vec<usize>>]) -> Result<()> + Sync),
    /// Forget what was read ahead and not used.
    pub clear: &'a dyn Fn(),
    /// Bytes of station values read ahead at once ([`DEFAULT_LIST_BATCH`], or
    /// `NCO_RS_LIST_BATCH_MB` MiB; 0: one station per batch, one pass per station).
    pub budget: usize,
}

/// The many-files form's driver, shared by ncks and ncrcat: stations are taken in
/// batches whose values fit `plan.budget`; for each batch, every variable is read
/// ahead for all its stations in parallel, then `emit(k, job)` writes station `k`'s
/// output (in parallel, its reads served from memory). Outputs are renamed into place
/// only when all were written (in parallel: each may free a replaced file).
///
/// Errors: the first error of a read-ahead or an output; then no output is renamed.
pub fn write_in_batches<J: Send>(
    meta: &Meta,
    jobs: Vec<J>,
    plan: &ReadAheadPlan<'_>,
    emit: &(dyn Fn(usize, J) -> Result<crate::output::TempOutput> + Sync),
) -> Result<()> {
    let sizes: Vec<usize> = plan.reads.iter().map(|r| read_bytes(meta, r)).collect();
    let groups = plan.group.iter().max().map_or(0, |g| g + 1);
    let mut jobs: Vec<Option<J>> = jobs.into_iter().map(Some).collect();
    let mut done = Vec::with_capacity(jobs.len());
    for batch in batches(&sizes, plan.budget) {
        let mut requests: Vec<BTreeMap<usize, Vec<Vec<Vec<usize>>>>> =
            vec![BTreeMap::new(); groups];
        for k in batch.clone() {
            for (v, idx) in &plan.reads[k] {
                requests[plan.group[k]]
                    .entry(*v)
                    .or_default()
                    .push(idx.clone());
            }
        }
        for (g, req) in requests.iter().enumerate() {
            let work: Vec<(&usize, &Vec<Vec<Vec<usize>>>)> = req.iter().collect();
            crate::pipeline::try_par_map(work, |(&v, sels)| (plan.prefetch)(g, v, sels))?;
        }
        let batch_jobs: Vec<(usize, J)> = batch
            .clone()
            .filter_map(|k| jobs[k].take().map(|j| (k, j)))
            .collect();
        let outs = crate::pipeline::try_par_map(batch_jobs, |(k, j)| emit(k, j));
        (plan.clear)();
        done.extend(outs?);
    }
    crate::pipeline::try_par_map(done, crate::output::TempOutput::commit)?;
    Ok(())
}

/// The `station_name` values (NUL-padded rows).
pub fn station_names(stations: &[Station], len: usize) -> Values {
    let mut b = Vec::with_capacity(stations.len() * len);
    for s in stations {
        let mut row = s.target.as_bytes().to_vec();
        row.resize(len, 0);
        b.extend_from_slice(&row[..len]);
    }
    Values::Char(b)
}

/// Reads variable data for the station form: `(input var, per-dimension indices)`.
pub type ReadFn<'a> = dyn Fn(usize, &[Vec<usize>]) -> Result<Values> + Sync + 'a;

/// Write every variable of a station-form plan into `out` (created from `plan.meta`).
pub fn write_station_form(
    plan: &StationPlan,
    stations: &[Station],
    input: &Meta,
    base: &Selection,
    read: &ReadFn<'_>,
    out: &mut crate::dataset::OutFile,
) -> Result<()> {
    let name_len = plan.meta.dims.last().map_or(1, |d| d.len);
    for (o, src) in plan.src.iter().enumerate() {
        match src {
            None => out.write(o, 0, &station_names(stations, name_len))?,
            Some(v) if !plan.per_station[o] => {
                out.write(o, 0, &read(*v, &base.for_var(input, *v))?)?
            }
            Some(v) => {
                for (k, sel) in plan.selections.iter().enumerate() {
                    out.write(o, k, &read(*v, &sel.for_var(input, *v))?)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_target_is_an_error_naming_the_line() {
        let e = parse_list("-d lon,1 a.nc\n-d lon,2 \"\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("empty"), "{e}");
    }

    use super::*;

    #[test]
    fn parses_lines_with_comments_and_quotes() {
        let l = parse_list("# stations\n\n-d lon,13.42 -d lat,52.53 berlin.nc\n-dlon,2.35 --dmn=lat,48.86 -v T 'paris x.nc' # note\n").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].line, 3);
        assert_eq!(l[0].specs.len(), 2);
        assert_eq!(l[1].target, "paris x.nc");
        assert_eq!(l[1].vars.as_deref(), Some("T"));
    }

    #[test]
    fn malformed_lines_name_their_number() {
        let e = parse_list("-d lon,1 a.nc\n-d lon,x b.nc\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = parse_list("-d lon,1\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("no output"), "{e}");
        let e = parse_list("-d lon,1 a.nc\n-d lon,2 a.nc\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("line 1"), "{e}");
        let e = parse_list("-x lon a.nc\n").unwrap_err().to_string();
        assert!(e.contains("unknown option"), "{e}");
        assert!(parse_list("# nothing\n").is_err());
    }

    #[test]
    fn batches_respect_the_budget() {
        assert_eq!(batches(&[4, 4, 4, 9, 1], 8), vec![0..2, 2..3, 3..4, 4..5]);
        assert_eq!(batches(&[1, 1, 1], 100), vec![0..3]);
        assert!(batches(&[], 8).is_empty());
    }

    #[test]
    fn line_specs_replace_global_ones() {
        let g = vec![
            HyperslabSpec::parse("time,0,3").unwrap(),
            HyperslabSpec::parse("lat,0.").unwrap(),
        ];
        let st = parse_list("-d lat,10. s1\n").unwrap().remove(0);
        let m = merged_specs(&g, &st);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].text, "lat,10.");
    }
}
