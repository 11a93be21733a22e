//! Climatology bounds (`--cb yr_srt,yr_end,mth_srt,mth_end,tpd` of ncra, ncrcat and
//! nces; NCO manual, "Climatology and Bounds Support"): the output of a climatological
//! average gets the time and bounds CF §7.4 prescribes for climatological statistics,
//! computed from the years, months and timesteps per day given, instead of the average
//! of the inputs' times.
//!
//! Rules measured on NCO 5.1.4 (ncclimo's way of calling it):
//! - the time coordinate is the root variable `time` (or `Time`); its `bounds`
//!   attribute names time bounds, its `climatology` attribute climatology bounds; with
//!   both, neither, or a named variable missing, `--cb` does nothing (a warning);
//! - the mode: with `tpd` 0 (monthly input) and months 1 to 12 (an annual mean of
//!   monthly or seasonal climatologies), 3 inputs with climatology bounds keep them
//!   (`clm2clm`, the DJF season), 4 or 12 turn them into time bounds (`clm2bnd`, the
//!   annual mean), anything else is ambiguous (an error, as NCO stops); otherwise time
//!   bounds become climatology bounds (`bnd2clm`) and climatology bounds stay;
//! - `bnd2clm` renames the bounds variable `climatology_bounds` (or the name of an
//!   existing `climatology` attribute) and gives the time coordinate a `climatology`
//!   attribute in place of `bounds`; `clm2bnd` the reverse (`time_bnds`); the renamed
//!   bounds take the coordinate's `units` and `calendar` when they have none;
//! - values, in the coordinate's units and calendar (`noleap` when it has none, with a
//!   warning): with `tpd` 0 the time is day 15 of the first month of the first year,
//!   the bounds the first day of that month and the first day of the month after the
//!   last month of the last year; with `tpd` N > 0, N times, the middles of the N
//!   steps of the first day, and N bounds from the start of each step to the end of
//!   the same step on the last day;
//! - ncra and ncrcat (unless `--no_cll_mth`; not nces) write `cell_methods = "time:
//!   mean within years time: mean over years"` (with `time: mean within days` first when
//!   `tpd` > 1; `time: mean` for `clm2bnd`) on every numeric variable of the time
//!   dimension, and none on the bounds. `-A` (and `--rec_apn`) is refused: the existing
//!   file's time bounds would stay beside the new ones.
//!
//! Ours differs where NCO 5.1.4 is wrong (README, compatibility notes): statistics other
//! than the mean are named for what they are (`-y max`: `time: mean within years time:
//! maximum over years`; NCO says `mean` whatever the statistic), an output with another
//! number of records than the climatology's times is refused (NCO's ncrcat writes values
//! read past the end of its arrays into the other records), and a `--cb` that does
//! nothing says so at every debug level.

use crate::calendar;
use crate::model::{Attr, Meta};
use crate::types::{NcType, Values};
use crate::{Error, Result};

/// The `--cb` numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClimoInfo {
    /// First year.
    pub first_year: i64,
    /// Last year.
    pub last_year: i64,
    /// First month, 1-12.
    pub first_month: i64,
    /// Last month, 1-12.
    pub last_month: i64,
    /// Timesteps per day: 0 for monthly (or seasonal) means, N for N steps a day.
    pub steps_per_day: u32,
}

impl ClimoInfo {
    /// Parse `yr_srt,yr_end,mth_srt,mth_end,tpd`.
    ///
    /// Errors (naming `--cb`): another number of fields (NCO 5.1.4 accepts a units and a
    /// calendar field and ignores them: ours refuses them), a field that is not an
    /// integer, months outside 1-12, a last year before the first, a negative `tpd`.
    pub fn parse(text: &str) -> Result<ClimoInfo> {
        let bad = |why: String| Error::option("--cb", format!("\"{text}\": {why}"));
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if fields.len() != 5 {
            return Err(bad(format!(
                "needs five fields yr_srt,yr_end,mth_srt,mth_end,tpd, {} given",
                fields.len()
            )));
        }
        let num = |i: usize, what: &str| -> Result<i64> {
            fields[i]
                .parse::<i64>()
                .map_err(|_| bad(format!("{what} \"{}\" is not an integer", fields[i])))
        };
        let info = ClimoInfo {
            first_year: num(0, "the start year")?,
            last_year: num(1, "the end year")?,
            first_month: num(2, "the start month")?,
            last_month: num(3, "the end month")?,
            steps_per_day: u32::try_from(num(4, "the timesteps per day")?)
                .map_err(|_| bad("the timesteps per day cannot be negative".into()))?,
        };
        for m in [info.first_month, info.last_month] {
            if !(1..=12).contains(&m) {
                return Err(bad(format!("month {m} is not in 1-12")));
            }
        }
        if info.last_year < info.first_year {
            return Err(bad("the end year is before the start year".into()));
        }
        Ok(info)
    }
}

/// How the bounds change ([module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClimoMode {
    /// Time bounds become climatology bounds.
    BoundsToClimo,
    /// Climatology bounds stay.
    ClimoToClimo,
    /// Climatology bounds become time bounds (an annual mean of climatologies).
    ClimoToBounds,
}

/// The planned climatology of one output: its time and bounds variables (indices of
/// the output's definitions) and their values.
#[derive(Clone, Debug, PartialEq)]
pub struct Climatology {
    /// The mode.
    pub mode: ClimoMode,
    /// The time coordinate.
    pub time: usize,
    /// The bounds variable (under its new name).
    pub bounds: usize,
    /// The time values (`max(1, tpd)` of them).
    pub time_values: Vec<f64>,
    /// The bounds values, two per time.
    pub bounds_values: Vec<f64>,
}

/// What planning gives: the plan, or the reason `--cb` does nothing (NCO's warnings).
#[derive(Clone, Debug, PartialEq)]
pub enum ClimoPlan {
    /// Apply this.
    Apply(Climatology),
    /// Nothing to do, for this reason.
    Off(String),
}

/// Plan the climatology of an output: `first` is the first input, `out` the planned
/// output's definitions (edited here: attributes, the renamed bounds, and
/// `cell_methods` when `over_years` gives the statistic of each output variable,
/// ncra's case: its CF name, `mean`, `maximum`...), `files` the number of inputs;
/// warnings that do not stop it are pushed on `notes`.
///
/// Errors (naming `--cb`): ambiguous months, the time coordinate or its bounds left
/// out of the output (`-v`, `-C`), an output with other than `max(1, tpd)` records, a name the renamed
/// bounds would take already used, a time coordinate without `since` units or in a
/// calendar we do not know.
pub fn plan(
    info: &ClimoInfo,
    first: &Meta,
    out: &mut Meta,
    files: usize,
    over_years: Option<&dyn Fn(usize) -> &'static str>,
    notes: &mut Vec<String>,
) -> Result<ClimoPlan> {
    let off = |why: &str| {
        Ok(ClimoPlan::Off(format!(
            "--cb: {why}; climatology bounds not written"
        )))
    };
    let Some(t_in) = first.var_in(0, "time").or_else(|| first.var_in(0, "Time")) else {
        return off("no time coordinate (time or Time) in the first input");
    };
    let time_name = first.vars[t_in].name.clone();
    let text = |name: &str| {
        first.vars[t_in]
            .attr(name)
            .filter(|a| matches!(a.value, Values::Char(_)))
            .and_then(|a| a.value.as_text())
    };
    let (bounds_attr, climo_attr) = (text("bounds"), text("climatology"));
    if bounds_attr.is_some() && climo_attr.is_some() {
        return off(&format!(
            "{time_name} has both a bounds and a climatology attribute (ambiguous)"
        ));
    }
    let Some(existing) = bounds_attr.clone().or_else(|| climo_attr.clone()) else {
        return off(&format!(
            "{time_name} has neither a bounds nor a climatology attribute"
        ));
    };
    if first.var_in(0, &existing).is_none() {
        return off(&format!(
            "{time_name}'s bounds variable {existing} is not in the input"
        ));
    }
    let tpd = info.steps_per_day;
    let mode = if tpd == 0 && info.first_month == 1 && info.last_month == 12 {
        match (climo_attr.is_some(), files) {
            (true, 3) => ClimoMode::ClimoToClimo,
            (true, 4 | 12) => ClimoMode::ClimoToBounds,
            // NCO 5.1.4 stops there (exit status 1).
            _ => {
                return Err(Error::option(
                    "--cb",
                    "months 1 to 12 of monthly input are ambiguous (an annual mean takes 3, \
                     4 or 12 climatologies with climatology bounds)",
                ))
            }
        }
    } else if bounds_attr.is_some() {
        ClimoMode::BoundsToClimo
    } else {
        ClimoMode::ClimoToClimo
    };
    let missing = |what: &str| {
        Error::option(
            "--cb",
            format!("{what} is not in the output (keep it: it is not excluded by -v, -x or -C)"),
        )
    };
    let time = out
        .var_in(0, &time_name)
        .ok_or_else(|| missing(&time_name))?;
    let bounds = out.var_in(0, &existing).ok_or_else(|| missing(&existing))?;
    let n = tpd.max(1) as usize;
    let rec_len = out.vars[time].dims.first().map_or(1, |&d| out.dims[d].len);
    if rec_len != n {
        return Err(Error::option(
            "--cb",
            format!(
                "the output has {rec_len} records of {time_name}, the climatology {n} \
                 (one per timestep of the day, or one for monthly input)"
            ),
        ));
    }
    if out.vars[bounds].dims.len() != 2 || out.dims[out.vars[bounds].dims[1]].len != 2 {
        return Err(Error::var(
            &existing,
            "--cb: the bounds variable is not (time, 2)",
        ));
    }
    // The new names.
    let climo_name = climo_attr.unwrap_or_else(|| "climatology_bounds".into());
    let bounds_name = bounds_attr.unwrap_or_else(|| "time_bnds".into());
    let (new_name, keep_attr, drop_attr) = match mode {
        ClimoMode::BoundsToClimo => (Some(&climo_name), ("climatology", &climo_name), "bounds"),
        ClimoMode::ClimoToBounds => (Some(&bounds_name), ("bounds", &bounds_name), "climatology"),
        ClimoMode::ClimoToClimo => (None, ("climatology", &climo_name), ""),
    };
    // Values, in the coordinate's units and calendar.
    let units = out.vars[time]
        .attr("units")
        .and_then(|a| a.value.as_text())
        .ok_or_else(|| Error::var(&time_name, "--cb: the time coordinate has no units"))?;
    let cal = match out.vars[time]
        .attr("calendar")
        .and_then(|a| a.value.as_text())
    {
        Some(c) => c,
        None => {
            notes.push(format!(
                "--cb: {time_name} has no calendar attribute: the noleap calendar is assumed (as NCO does)"
            ));
            "noleap".into()
        }
    };
    if calendar::Calendar::parse(Some(&cal)).is_none() {
        return Err(Error::var(
            &time_name,
            format!("--cb: unknown calendar \"{cal}\""),
        ));
    }
    let (time_values, bounds_values) = values(info, &units, &cal).ok_or_else(|| {
        Error::var(
            &time_name,
            format!("--cb: units \"{units}\" are not <unit> since <date>"),
        )
    })?;
    // Definitions.
    if let Some(name) = new_name {
        if out.var_in(0, name).is_some_and(|v| v != bounds) {
            return Err(Error::var(
                name,
                "--cb: the bounds would be renamed to this name, which another variable has",
            ));
        }
        let t = &mut out.vars[time];
        t.remove_attr(keep_attr.0);
        t.remove_attr(drop_attr);
        // NCO's order: appended, before the cell_methods ncra adds afterwards (not
        // before one the input had), time bounds last.
        let had_methods = first.vars[t_in].attr("cell_methods").is_some();
        let at = match mode {
            ClimoMode::ClimoToBounds => None,
            _ if had_methods => None,
            _ => t.attrs.iter().position(|a| a.name == "cell_methods"),
        }
        .unwrap_or(t.attrs.len());
        t.attrs.insert(at, Attr::text(keep_attr.0, keep_attr.1));
        for key in ["units", "calendar"] {
            if out.vars[bounds].attr(key).is_none() {
                if let Some(a) = out.vars[time].attr(key).cloned() {
                    out.vars[bounds].attrs.push(a);
                }
            }
        }
        out.vars[bounds].name = name.clone();
    }
    if let Some(stat_of) = over_years {
        let text = |stat: &str| match (mode, tpd) {
            (ClimoMode::ClimoToBounds, _) => format!("time: {stat}"),
            (_, t) if t > 1 => {
                format!("time: mean within days time: mean within years time: {stat} over years")
            }
            _ => format!("time: mean within years time: {stat} over years"),
        };
        let time_dim = out.vars[time].dims.first().copied();
        for (i, v) in out.vars.iter_mut().enumerate() {
            let on_time = time_dim.is_some_and(|d| v.dims.contains(&d));
            if !on_time || matches!(v.ty, NcType::Char | NcType::Str) {
                continue;
            }
            if i == bounds {
                v.remove_attr("cell_methods");
            } else {
                v.set_attr(Attr::text("cell_methods", &text(stat_of(i))));
            }
        }
    }
    Ok(ClimoPlan::Apply(Climatology {
        mode,
        time,
        bounds,
        time_values,
        bounds_values,
    }))
}

/// [`plan`], its warnings printed on stderr as `<prog>: WARNING ...`: the plan to
/// apply, or `None` when `--cb` does nothing.
///
/// Errors: [`plan`]'s.
pub fn apply_or_warn(
    prog: &str,
    info: &ClimoInfo,
    first: &Meta,
    out: &mut Meta,
    files: usize,
    over_years: Option<&dyn Fn(usize) -> &'static str>,
) -> Result<Option<Climatology>> {
    let mut notes = Vec::new();
    let p = plan(info, first, out, files, over_years, &mut notes)?;
    for n in notes {
        eprintln!("{prog}: WARNING {n}");
    }
    match p {
        ClimoPlan::Apply(c) => Ok(Some(c)),
        ClimoPlan::Off(why) => {
            eprintln!("{prog}: WARNING {why}");
            Ok(None)
        }
    }
}

/// The time and bounds values of `info` in `units` and calendar `cal` ([module
/// docs](self)); `None` when the units are not `<unit> since <date>`.
fn values(info: &ClimoInfo, units: &str, cal: &str) -> Option<(Vec<f64>, Vec<f64>)> {
    let (unit_secs, _) = calendar::parse_units(units)?;
    let at = |y: i64, m: i64, d: i64| {
        calendar::date_to_value(&format!("{y:04}-{m:02}-{d:02}"), units, Some(cal))
    };
    let (end_year, end_month) = if info.last_month == 12 {
        (info.last_year + 1, 1)
    } else {
        (info.last_year, info.last_month + 1)
    };
    let start = at(info.first_year, info.first_month, 1)?;
    let end = at(end_year, end_month, 1)?;
    if info.steps_per_day == 0 {
        let mid = at(info.first_year, info.first_month, 15)?;
        return Some((vec![mid], vec![start, end]));
    }
    let n = info.steps_per_day as usize;
    // Hours of a step, in the coordinate's units.
    let step = 24.0 / n as f64 * 3600.0 / unit_secs;
    let day = 24.0 * 3600.0 / unit_secs;
    let times = (0..n)
        .map(|i| start + step / 2.0 + step * i as f64)
        .collect();
    let mut bounds = Vec::with_capacity(2 * n);
    for i in 0..n {
        let lo = start + step * i as f64;
        // From the step's start on the first day to its end on the last day.
        bounds.extend([lo, lo + (end - start) - (day - step)]);
    }
    Some((times, bounds))
}

/// The values to write over an output's planned time and bounds, each in its
/// variable's type.
///
/// Errors: a value the type cannot hold.
pub fn typed_values(c: &Climatology, out: &Meta) -> Result<[(usize, Values); 2]> {
    let typed = |v: usize, x: &[f64]| {
        Values::Double(x.to_vec())
            .convert(out.vars[v].ty)
            .ok_or_else(|| Error::var(&out.vars[v].name, "--cb: values do not fit its type"))
    };
    Ok([
        (c.time, typed(c.time, &c.time_values)?),
        (c.bounds, typed(c.bounds, &c.bounds_values)?),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_checks_the_fields() {
        let i = ClimoInfo::parse("2000,2002,1,1,0").expect("parse");
        assert_eq!(
            (
                i.first_year,
                i.last_year,
                i.first_month,
                i.last_month,
                i.steps_per_day
            ),
            (2000, 2002, 1, 1, 0)
        );
        for bad in [
            "2000,2002,1,1",
            "2000,2002,1,13,0",
            "2002,2000,1,1,0",
            "a,2,1,1,0",
            "2000,2002,1,1,-1",
            "2000,2002,1,1,0,days since 2000-01-01",
        ] {
            assert!(ClimoInfo::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn monthly_and_diurnal_values() {
        let i = ClimoInfo::parse("2000,2002,1,1,0").expect("parse");
        let (t, b) = values(&i, "days since 2000-01-01", "noleap").expect("values");
        assert_eq!(t, [14.0]);
        assert_eq!(b, [0.0, 761.0]);
        let i = ClimoInfo::parse("2000,2001,12,2,4").expect("parse");
        let (t, b) = values(&i, "hours since 2000-12-01", "noleap").expect("values");
        assert_eq!(t, [3.0, 9.0, 15.0, 21.0]);
        // To 2001-03-01 (2160 hours), less the last day's steps after each one.
        assert_eq!(b[..2], [0.0, 2160.0 - 18.0]);
        assert_eq!(b[6..], [18.0, 2160.0]);
    }
}
