//! Dates in CF time units (`hours since 1900-01-01 00:00:0.0`): enough of UDUnits for
//! date-valued hyperslab bounds and for converting time values between files.
//!
//! Calendars (CF conventions §4.4.1): `standard`/`gregorian` (CF's mixed calendar:
//! Julian before 1582-10-15), `proleptic_gregorian`, `julian`, `noleap`/`365_day`, `all_leap`/`366_day`,
//! `360_day`; a missing `calendar` attribute is `standard`. Units are `second`,
//! `minute`, `hour`, `day` and `week` (with plurals and abbreviations) since a date;
//! `month` and `year`, whose length UDUnits fixes at a twelfth of a tropical year,
//! are not taken (CF advises against them), so a conversion that needs them fails.
//!
//! [`TimeConversion`] converts values from one file's units and calendar to another's
//! (ncra, ncrcat across files): within one calendar it is affine (`x * factor +
//! offset`); between calendars it goes through the date (day and time of day), and a
//! date the target calendar lacks (30 February into `standard`, 29 February into
//! `noleap`) is an error.

/// A broken-down date and time (time zone already applied: UTC).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DateTime {
    /// Year.
    pub year: i64,
    /// Month 1..=12.
    pub month: i64,
    /// Day 1..=31.
    pub day: i64,
    /// Seconds since midnight (may hold a fraction; a time zone may push it out of 0..86400).
    pub seconds: f64,
}

/// Parse `YYYY-MM-DD[( |T)hh[:mm[:ss[.f]]]][ Z|UTC|(+|-)h[:mm]]`.
pub fn parse_date(s: &str) -> Option<DateTime> {
    let s = s.trim();
    let (date, rest) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], s[i + 1..].trim()),
        None => (s, ""),
    };
    // UDUnits' compact form `20000101` (eight digits, no dashes).
    let compact;
    let date = if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) {
        compact = format!("{}-{}-{}", &date[..4], &date[4..6], &date[6..]);
        compact.as_str()
    } else {
        date
    };
    let mut it = date.splitn(3, '-');
    let year: i64 = it.next()?.parse().ok()?;
    let month: i64 = it.next()?.parse().ok()?;
    let day: i64 = it.next().unwrap_or("1").parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut seconds = 0.0;
    let mut tz = "";
    if !rest.is_empty() {
        let (time, zone) = match rest.find(' ') {
            Some(i) => (&rest[..i], rest[i + 1..].trim()),
            None => (rest, ""),
        };
        // ISO 8601's `Z` (UTC) right after the time: `00:00:00Z`, `T00Z`.
        let time = time.strip_suffix(['Z', 'z']).unwrap_or(time);
        tz = zone;
        let f: Vec<&str> = time.split(':').collect();
        let h: f64 = f.first()?.parse().ok()?;
        let m: f64 = f.get(1).map_or(Some(0.0), |x| x.parse().ok())?;
        let sec: f64 = f.get(2).map_or(Some(0.0), |x| x.parse().ok())?;
        seconds = h * 3600.0 + m * 60.0 + sec;
    }
    let tz = tz.trim();
    if !tz.is_empty() && tz != "Z" && tz != "UTC" && tz != "GMT" {
        let (sign, body) = match tz.as_bytes()[0] {
            b'-' => (-1.0, &tz[1..]),
            b'+' => (1.0, &tz[1..]),
            _ => (1.0, tz),
        };
        let mut p = body.split(':');
        let h: f64 = p.next()?.parse().ok()?;
        let m: f64 = p.next().map_or(Some(0.0), |x| x.parse().ok())?;
        // Local time minus the offset is UTC.
        seconds -= sign * (h * 3600.0 + m * 60.0);
    }
    Some(DateTime {
        year,
        month,
        day,
        seconds,
    })
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    // Proleptic Gregorian day number relative to 1970-01-01 (H. Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since an arbitrary fixed origin for `dt` in `calendar` (a name this module
/// does not know counts as `standard`, as NCO takes it), without checking that the
/// date exists there.
fn day_number(dt: &DateTime, calendar: Option<&str>) -> f64 {
    let cal = Calendar::parse(calendar).unwrap_or(Calendar::Standard);
    cal.day_count(dt.year, dt.month, dt.day) as f64 + dt.seconds / 86_400.0
}

/// The Julian calendar's day number of a date, on the same origin as
/// [`days_from_civil`] (1970-01-01 Gregorian; Richards' algorithm).
fn julian_days(year: i64, month: i64, day: i64) -> i64 {
    let a = (14 - month) / 12;
    let y = year + 4800 - a;
    let m = month + 12 * a - 3;
    day + (153 * m + 2) / 5 + 365 * y + y.div_euclid(4) - 32_083 - 2_440_588
}

/// The Julian date of day number `n` (the inverse of [`julian_days`]).
fn julian_date(n: i64) -> (i64, i64, i64) {
    let c = n + 2_440_588 + 32_082;
    let d = (4 * c + 3).div_euclid(1461);
    let e = c - (1461 * d).div_euclid(4);
    let m = (5 * e + 2) / 153;
    let day = e - (153 * m + 2) / 5 + 1;
    let month = m + 3 - 12 * (m / 10);
    (d - 4800 + m / 10, month, day)
}

/// UDUnits' year in seconds, 3.15569259747e7 (its `year`, from which `month` is a
/// twelfth).
const UDUNITS_YEAR: f64 = 31_556_925.974_7;

/// The first day of the Gregorian calendar in the mixed `standard` calendar
/// (1582-10-15, the day after Julian 1582-10-04).
const GREGORIAN_START: (i64, i64, i64) = (1582, 10, 15);

/// Seconds in one unit of a CF time unit name, `None` when not a time unit. Months
/// and years are UDUnits' fixed lengths (a year of 3.15569259747e7 s, a month a
/// twelfth of it), as NCO 5.1.4 prints their dates (CF §4.4 advises against them;
/// [`TimeConversion`] does not convert them between files).
pub fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit.trim().to_ascii_lowercase().as_str() {
        "second" | "seconds" | "sec" | "secs" | "s" => 1.0,
        "millisecond" | "milliseconds" | "msec" | "msecs" | "ms" => 1e-3,
        "microsecond" | "microseconds" | "usec" | "usecs" | "us" => 1e-6,
        "minute" | "minutes" | "min" | "mins" => 60.0,
        "hour" | "hours" | "hr" | "hrs" | "h" => 3600.0,
        "day" | "days" | "d" => 86_400.0,
        "week" | "weeks" => 7.0 * 86_400.0,
        "month" | "months" | "mon" | "mons" => UDUNITS_YEAR / 12.0,
        "year" | "years" | "yr" | "yrs" => UDUNITS_YEAR,
        _ => return None,
    })
}

/// Split `"<unit> since <date>"` into the unit's seconds and the reference date
/// (UDUnits' other words for `since` too: `after`, `from`, `ref`, `@`).
pub fn parse_units(units: &str) -> Option<(f64, DateTime)> {
    let lower = units.to_ascii_lowercase();
    let (i, word) = [" since ", " after ", " from ", " ref ", " @ "]
        .iter()
        .find_map(|w| lower.find(w).map(|i| (i, w.len())))?;
    let secs = unit_seconds(&units[..i])?;
    let date = parse_date(&units[i + word..])?;
    Some((secs, date))
}

/// Convert a date string to a coordinate value in `units` (e.g. 876018 for
/// `1999-12-08 18:00:0.0` in `hours since 1900-01-01 00:00:0.0`).
pub fn date_to_value(date: &str, units: &str, calendar: Option<&str>) -> Option<f64> {
    let (secs, reference) = parse_units(units)?;
    let d = parse_date(date)?;
    let days = day_number(&d, calendar) - day_number(&reference, calendar);
    Some(days * 86_400.0 / secs)
}

/// A CF calendar (§4.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calendar {
    /// `standard`, `gregorian`: CF's mixed calendar, Julian up to 1582-10-04, then
    /// Gregorian from 1582-10-15 (the ten days between do not exist), as NCO (UDUnits)
    /// counts.
    Standard,
    /// `proleptic_gregorian`: Gregorian at every date.
    ProlepticGregorian,
    /// `julian`.
    Julian,
    /// `noleap`, `365_day`.
    NoLeap,
    /// `all_leap`, `366_day`.
    AllLeap,
    /// `360_day`.
    Day360,
}

impl Calendar {
    /// The calendar an attribute names (`None` attribute: `standard`); `None` for a name
    /// this module does not know (`none`, a misspelling).
    pub fn parse(name: Option<&str>) -> Option<Calendar> {
        let name = name.map_or("standard".to_string(), |n| n.trim().to_ascii_lowercase());
        Some(match name.as_str() {
            "standard" | "gregorian" | "" => Calendar::Standard,
            "proleptic_gregorian" => Calendar::ProlepticGregorian,
            "julian" => Calendar::Julian,
            "noleap" | "365_day" | "no_leap" => Calendar::NoLeap,
            "all_leap" | "366_day" => Calendar::AllLeap,
            "360_day" => Calendar::Day360,
            _ => return None,
        })
    }

    fn days_in_month(self, year: i64, month: i64) -> i64 {
        const LEN: [i64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let gregorian = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let leap = match self {
            Calendar::Standard if year < GREGORIAN_START.0 => year.rem_euclid(4) == 0,
            Calendar::Standard | Calendar::ProlepticGregorian => gregorian,
            Calendar::Julian => year.rem_euclid(4) == 0,
            Calendar::NoLeap => false,
            Calendar::AllLeap => true,
            Calendar::Day360 => return 30,
        };
        LEN[(month - 1) as usize] + i64::from(month == 2 && leap)
    }

    /// Day number of a date (any fixed origin per calendar); `None` when the date does
    /// not exist in the calendar.
    fn day(self, year: i64, month: i64, day: i64) -> Option<i64> {
        if !(1..=12).contains(&month) || day < 1 || day > self.days_in_month(year, month) {
            return None;
        }
        let skipped = (year, month) == (1582, 10) && (5..15).contains(&day);
        if self == Calendar::Standard && skipped {
            return None;
        }
        Some(self.day_count(year, month, day))
    }

    /// [`Calendar::day`] without checking that the date exists (a day past the end
    /// of a month runs on into the next).
    fn day_count(self, year: i64, month: i64, day: i64) -> i64 {
        const CUM: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
        let m = month.clamp(1, 12);
        match self {
            Calendar::Standard if (year, month, day) < GREGORIAN_START => {
                julian_days(year, month, day)
            }
            Calendar::Standard | Calendar::ProlepticGregorian => days_from_civil(year, month, day),
            Calendar::Julian => julian_days(year, month, day),
            Calendar::NoLeap => year * 365 + CUM[(m - 1) as usize] + day - 1,
            Calendar::AllLeap => year * 366 + CUM[(m - 1) as usize] + i64::from(m > 2) + day - 1,
            Calendar::Day360 => year * 360 + (month - 1) * 30 + day - 1,
        }
    }

    /// The date of day number `n` (the inverse of `day`).
    fn date(self, n: i64) -> (i64, i64, i64) {
        let from_year_day = |year: i64, mut doy: i64, cal: Calendar| {
            let mut month = 1;
            while doy >= cal.days_in_month(year, month) {
                doy -= cal.days_in_month(year, month);
                month += 1;
            }
            (year, month, doy + 1)
        };
        let (gy, gm, gd) = GREGORIAN_START;
        match self {
            Calendar::Standard if n < days_from_civil(gy, gm, gd) => julian_date(n),
            Calendar::Standard | Calendar::ProlepticGregorian => civil_from_days(n),
            Calendar::Julian => julian_date(n),
            Calendar::NoLeap => from_year_day(n.div_euclid(365), n.rem_euclid(365), self),
            Calendar::AllLeap => from_year_day(n.div_euclid(366), n.rem_euclid(366), self),
            Calendar::Day360 => {
                let (y, r) = (n.div_euclid(360), n.rem_euclid(360));
                (y, r / 30 + 1, r % 30 + 1)
            }
        }
    }
}

/// Proleptic Gregorian date (year, month 1-12, day 1-31) of day number `n` (days since
/// 1970-01-01; H. Hinnant's algorithm).
pub fn civil_from_days(n: i64) -> (i64, i64, i64) {
    let z = n + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// CF time units with their calendar: `<unit> since <date>`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeUnits {
    /// Seconds in one unit.
    pub unit_seconds: f64,
    /// The reference date.
    pub reference: DateTime,
    /// The calendar.
    pub calendar: Calendar,
}

impl TimeUnits {
    /// Parse `units` and the `calendar` attribute; `None` when `units` are not time
    /// units this module knows or the calendar is unknown.
    pub fn parse(units: &str, calendar: Option<&str>) -> Option<TimeUnits> {
        let (unit_seconds, reference) = parse_units(units)?;
        Some(TimeUnits {
            unit_seconds,
            reference,
            calendar: Calendar::parse(calendar)?,
        })
    }

    /// Days (with fraction) since the calendar's origin of the reference date.
    fn reference_day(&self) -> Option<f64> {
        let r = &self.reference;
        let d = self.calendar.day(r.year, r.month, r.day)?;
        Some(d as f64 + r.seconds / 86_400.0)
    }
}

/// How ncks `--cal` prints dates (`--dt_fmt`, NCO 5.1.4's forms, measured).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateStyle {
    /// `--dt_fmt 0` or `1` (and `--cal` alone): `1964-03-13` at midnight,
    /// `1964-03-13 21:09:00` at a whole second, `2000-01-01 00:00:0.5000000` (the
    /// seconds with 7 decimals, unpadded, as NCO prints them) otherwise.
    Short,
    /// `--dt_fmt 2`: `1964-03-13 21:09:00.000000`.
    Micro,
    /// `--dt_fmt 3`: ISO 8601, `1964-03-13T21:09:00.000000`.
    Iso,
}

impl TimeUnits {
    /// Value `x` (in these units) as a date in the calendar, printed in `style`;
    /// `None` for a value that is not finite or lies beyond a billion days, or a
    /// reference date the calendar lacks. The time of day is rounded to the style's
    /// last decimal (a rounding to midnight moves to the next day).
    pub fn format_value(&self, x: f64, style: DateStyle) -> Option<String> {
        let r = &self.reference;
        let day0 = self.calendar.day(r.year, r.month, r.day)?;
        let secs = r.seconds + x * self.unit_seconds;
        let mut days = (secs / 86_400.0).floor();
        if !days.is_finite() || days.abs() > 1e9 {
            return None;
        }
        let scale = match style {
            DateStyle::Short => 1e7,
            DateStyle::Micro | DateStyle::Iso => 1e6,
        };
        let mut tod = ((secs - days * 86_400.0) * scale).round() / scale;
        if tod >= 86_400.0 {
            days += 1.0;
            tod = 0.0;
        }
        let (y, mo, d) = self.calendar.date(day0 + days as i64);
        let date = format!("{y:04}-{mo:02}-{d:02}");
        let (h, rest) = ((tod / 3600.0).floor(), tod % 3600.0);
        let (mi, sec) = ((rest / 60.0).floor(), rest % 60.0);
        let hm = format!("{h:02}:{mi:02}");
        Some(match style {
            DateStyle::Short if tod == 0.0 => date,
            DateStyle::Short if sec.fract() == 0.0 => format!("{date} {hm}:{sec:02}"),
            DateStyle::Short => format!("{date} {hm}:{sec:.7}"),
            DateStyle::Micro => format!("{date} {hm}:{sec:09.6}"),
            DateStyle::Iso => format!("{date}T{hm}:{sec:09.6}"),
        })
    }
}

/// A conversion of time values from one file's units and calendar to another's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeConversion {
    /// The same units and calendar.
    Identity,
    /// `x * factor + offset` (the same calendar, other units or reference dates).
    Affine {
        /// Ratio of the unit lengths.
        factor: f64,
        /// The source reference date in target units.
        offset: f64,
    },
    /// Through the date: the calendars differ.
    ByDate {
        /// Source units.
        from: TimeUnits,
        /// Target units.
        to: TimeUnits,
    },
}

/// Why a time conversion cannot be made.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeError {
    /// The units or calendar on one side are not known time units (their description).
    Units(String),
    /// A value whose date does not exist in the target calendar (`YYYY-MM-DD`).
    NoSuchDate(String),
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeError::Units(u) => write!(f, "cannot convert {u}"),
            TimeError::NoSuchDate(d) => write!(f, "is {d}, a date the target calendar lacks"),
        }
    }
}

impl TimeConversion {
    /// The conversion from values in (`from_units`, `from_calendar`) to values in
    /// (`to_units`, `to_calendar`) (the `units` and `calendar` attributes as written).
    ///
    /// Errors: either side's units are not time units ([`TimeUnits::parse`]) or name
    /// an unknown calendar, or a reference date does not exist in its calendar.
    pub fn new(
        from_units: &str,
        from_calendar: Option<&str>,
        to_units: &str,
        to_calendar: Option<&str>,
    ) -> Result<TimeConversion, TimeError> {
        let side = |u: &str, c: Option<&str>| {
            TimeUnits::parse(u, c).ok_or_else(|| {
                TimeError::Units(match c {
                    Some(c) => format!("time units \"{u}\" with calendar \"{c}\""),
                    None => format!("time units \"{u}\""),
                })
            })
        };
        // Months and years are UDUnits' fixed lengths, not calendar months: values in
        // them are not converted between files (CF §4.4 advises against them).
        for u in [from_units, to_units] {
            if parse_units(u).is_some_and(|(secs, _)| secs >= UDUNITS_YEAR / 12.0) {
                return Err(TimeError::Units(format!(
                    "time units \"{u}\" (months and years have no fixed length in a calendar)"
                )));
            }
        }
        let (from, to) = (
            side(from_units, from_calendar)?,
            side(to_units, to_calendar)?,
        );
        let bad_ref = |t: &TimeUnits| {
            let r = t.reference;
            TimeError::NoSuchDate(format!("{:04}-{:02}-{:02}", r.year, r.month, r.day))
        };
        let (fd, td) = (
            from.reference_day().ok_or_else(|| bad_ref(&from))?,
            to.reference_day().ok_or_else(|| bad_ref(&to))?,
        );
        if from.calendar != to.calendar {
            return Ok(TimeConversion::ByDate { from, to });
        }
        let factor = from.unit_seconds / to.unit_seconds;
        let offset = (fd - td) * 86_400.0 / to.unit_seconds;
        Ok(if factor == 1.0 && offset == 0.0 {
            TimeConversion::Identity
        } else {
            TimeConversion::Affine { factor, offset }
        })
    }

    /// Convert one value. NaN and infinities stay as they are.
    ///
    /// Errors: across calendars, a date the target calendar lacks.
    pub fn apply(&self, x: f64) -> Result<f64, TimeError> {
        match *self {
            TimeConversion::Identity => Ok(x),
            TimeConversion::Affine { factor, offset } => Ok(x * factor + offset),
            TimeConversion::ByDate { from, to } => {
                if !x.is_finite() {
                    return Ok(x);
                }
                let fd = from.reference_day().unwrap_or(0.0);
                let td = to.reference_day().unwrap_or(0.0);
                let days = fd + x * from.unit_seconds / 86_400.0;
                let day = days.floor();
                let frac = days - day;
                let (y, m, d) = from.calendar.date(day as i64);
                let there = to
                    .calendar
                    .day(y, m, d)
                    .ok_or_else(|| TimeError::NoSuchDate(format!("{y:04}-{m:02}-{d:02}")))?;
                Ok((there as f64 + frac - td) * 86_400.0 / to.unit_seconds)
            }
        }
    }

    /// `(factor, offset)` when the conversion is affine (the identity is `(1, 0)`).
    pub fn affine(&self) -> Option<(f64, f64)> {
        match *self {
            TimeConversion::Identity => Some((1.0, 0.0)),
            TimeConversion::Affine { factor, offset } => Some((factor, offset)),
            TimeConversion::ByDate { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NCO 5.1.4's `ncks --cal` / `--dt_fmt` prints of its test file's variables.
    /// CF's mixed calendar for `standard`: Julian up to 1582-10-04, then 1582-10-15;
    /// NCO 5.1.4 (UDUnits) dates are so (36500 days since 1500-01-01 is 1599-12-17).
    #[test]
    fn standard_is_julian_before_1582_10_15() {
        let p = |cal: &str, units: &str, x: f64| {
            TimeUnits::parse(units, Some(cal))
                .and_then(|u| u.format_value(x, DateStyle::Short))
                .unwrap_or_default()
        };
        assert_eq!(
            p("standard", "days since 1500-01-01", 36500.0),
            "1599-12-17"
        );
        assert_eq!(p("gregorian", "days since 1582-10-01", 4.0), "1582-10-15");
        assert_eq!(
            p("proleptic_gregorian", "days since 1500-01-01", 36500.0),
            "1599-12-08"
        );
        assert_eq!(p("julian", "days since 1582-10-01", 4.0), "1582-10-05");
        assert_eq!(Calendar::Standard.day(1582, 10, 10), None, "a skipped day");
        assert_eq!(
            Calendar::Standard.day(1500, 2, 29).map(|_| ()),
            Some(()),
            "Julian leap"
        );
        assert_eq!(
            date_to_value("1582-10-15", "days since 1582-10-04", Some("standard")),
            Some(1.0)
        );
        // A `-d` date in a julian file counts Julian days (1900 is a leap year there).
        assert_eq!(
            date_to_value("1900-03-01", "days since 1900-02-28", Some("julian")),
            Some(2.0)
        );
        assert_eq!(
            date_to_value(
                "1900-03-01",
                "days since 1900-02-28",
                Some("proleptic_gregorian")
            ),
            Some(1.0)
        );
    }

    #[test]
    fn iso_utc_suffix_sub_second_units_and_other_words_for_since() {
        let p = |units: &str, x: f64| {
            TimeUnits::parse(units, None)
                .and_then(|u| u.format_value(x, DateStyle::Short))
                .unwrap_or_default()
        };
        assert_eq!(
            p("seconds since 1970-01-01T00:00:00Z", 1.0),
            "1970-01-01 00:00:01"
        );
        assert_eq!(
            p("seconds since 1970-01-01 00:00:00Z", 1.0),
            "1970-01-01 00:00:01"
        );
        assert_eq!(p("days since 1970-01-01T00Z", 1.0), "1970-01-02");
        assert_eq!(
            p("milliseconds since 2000-01-01", 1500.0),
            "2000-01-01 00:00:1.5000000"
        );
        assert_eq!(p("ms since 2000-01-01", 60_000.0), "2000-01-01 00:01:00");
        assert_eq!(
            p("microseconds since 2000-01-01", 2e6),
            "2000-01-01 00:00:02"
        );
        assert_eq!(p("minutes after 2000-01-01", 90.0), "2000-01-01 01:30:00");
        assert_eq!(p("days from 2000-01-01", 1.0), "2000-01-02");
    }

    #[test]
    fn values_print_as_nco_prints_them_with_cal() {
        let p = |units: &str, cal: Option<&str>, x: f64, style: DateStyle| {
            TimeUnits::parse(units, cal)
                .and_then(|u| u.format_value(x, style))
                .unwrap_or_default()
        };
        let tz = "days since 1964-03-12 12:09:00 -9:00";
        assert_eq!(p(tz, None, 1.0, DateStyle::Short), "1964-03-13 21:09:00");
        assert_eq!(
            p(tz, None, 1.0, DateStyle::Micro),
            "1964-03-13 21:09:00.000000"
        );
        assert_eq!(
            p(tz, None, 1.0, DateStyle::Iso),
            "1964-03-13T21:09:00.000000"
        );
        let hours = "hours since 1900-01-01 00:00:0.0";
        assert_eq!(
            p(hours, None, 876_018.0, DateStyle::Short),
            "1999-12-08 18:00:00"
        );
        assert_eq!(p(hours, None, 876_024.0, DateStyle::Short), "1999-12-09");
        let d = "days since 2013-01-01";
        assert_eq!(p(d, Some("360_day"), 59.0, DateStyle::Short), "2013-02-30");
        assert_eq!(p(d, Some("366_day"), 59.0, DateStyle::Short), "2013-02-29");
        assert_eq!(p(d, Some("julian"), 59.0, DateStyle::Short), "2013-03-01");
        assert_eq!(
            p(
                "days since 1964-2-28",
                Some("360_day"),
                1.0,
                DateStyle::Short
            ),
            "1964-02-29"
        );
        let s = "seconds since 2000-01-01";
        assert_eq!(
            p(s, None, 0.5, DateStyle::Short),
            "2000-01-01 00:00:0.5000000"
        );
        assert_eq!(
            p(s, None, 59.9999, DateStyle::Micro),
            "2000-01-01 00:00:59.999900"
        );
        assert_eq!(
            p(s, None, 1e-7, DateStyle::Micro),
            "2000-01-01 00:00:00.000000"
        );
        assert_eq!(
            p(s, None, 86_399.999_999_9, DateStyle::Micro),
            "2000-01-02 00:00:00.000000"
        );
        assert_eq!(p(s, None, f64::NAN, DateStyle::Short), "");
        assert_eq!(p(s, None, 1e300, DateStyle::Short), "");
    }

    #[test]
    fn nco_time_udunits_values() {
        let u = "hours since 1900-01-01 00:00:0.0";
        assert_eq!(
            date_to_value("1999-12-08 18:00:0.0", u, None),
            Some(876_018.0)
        );
        assert_eq!(
            date_to_value("1999-12-09 12:00:0.0", u, None),
            Some(876_036.0)
        );
    }

    #[test]
    fn conversion_with_time_zone() {
        let (f, o) = TimeConversion::new(
            "days since 1964-03-22 12:09:00 -9:00",
            None,
            "days since 1964-03-12",
            None,
        )
        .unwrap()
        .affine()
        .unwrap();
        assert_eq!(f, 1.0);
        assert!((o - (10.0 + (12.0 * 3600.0 + 540.0 + 9.0 * 3600.0) / 86_400.0)).abs() < 1e-9);
    }

    #[test]
    fn calendars() {
        let d = parse_date("2001-03-01").unwrap();
        let e = parse_date("2001-02-28").unwrap();
        assert_eq!(
            day_number(&d, Some("360_day")) - day_number(&e, Some("360_day")),
            3.0
        );
        assert_eq!(
            day_number(&d, Some("noleap")) - day_number(&e, Some("noleap")),
            1.0
        );
        assert!(parse_date("not a date").is_none());
    }

    #[test]
    fn conversions_between_units_and_epochs() {
        // hours since 2000-03-01 into days since 2000-01-01 (2000 is a leap year).
        let c = TimeConversion::new(
            "hours since 2000-03-01",
            Some("standard"),
            "days since 2000-01-01",
            None,
        )
        .unwrap();
        assert_eq!(c.affine(), Some((1.0 / 24.0, 60.0)));
        assert_eq!(c.apply(372.0), Ok(75.5));
        // Days since another epoch into hours: no truncation of the fraction.
        let c = TimeConversion::new(
            "days since 2000-01-01",
            None,
            "hours since 2000-03-01 06:00:00",
            None,
        )
        .unwrap();
        assert_eq!(c.apply(15.5), Ok(-1074.0));
        let same = TimeConversion::new(
            "days since 2000-01-01",
            Some("gregorian"),
            "days since 2000-01-01 00:00:00",
            Some("standard"),
        );
        assert_eq!(same, Ok(TimeConversion::Identity));
        // gregorian (mixed) and proleptic_gregorian agree from 1582-10-15 on only.
        let c = TimeConversion::new(
            "days since 2000-01-01",
            Some("gregorian"),
            "days since 2000-01-01",
            Some("proleptic_gregorian"),
        )
        .unwrap();
        assert_eq!(c.apply(15.5), Ok(15.5));
        // 200000 days before 2000 is in 1452, where a Julian date is 9 days behind the
        // Gregorian one: the same date is 9 days earlier in the proleptic calendar.
        assert_eq!(c.apply(-200_000.0), Ok(-200_009.0));
        assert!(matches!(
            TimeConversion::new(
                "months since 2000-01-01",
                None,
                "days since 2000-01-01",
                None
            ),
            Err(TimeError::Units(_))
        ));
        assert!(TimeConversion::new(
            "days since 2000-01-01",
            Some("lunar"),
            "days since 2000-01-01",
            None
        )
        .is_err());
    }

    #[test]
    fn conversions_between_calendars_go_through_the_date() {
        // Day 59 of noleap 2000 is 1 March, day 60 of the leap year 2000.
        let c = TimeConversion::new(
            "days since 2000-01-01",
            Some("noleap"),
            "days since 2000-01-01",
            Some("standard"),
        )
        .unwrap();
        assert_eq!(c.apply(59.0), Ok(60.0));
        assert_eq!(c.apply(365.25), Ok(366.25), "2001-01-01 06:00");
        // 360_day: day 59 is 30 February, which the standard calendar lacks.
        let c = TimeConversion::new(
            "days since 2000-01-01",
            Some("360_day"),
            "days since 2000-01-01",
            None,
        )
        .unwrap();
        assert_eq!(c.apply(360.0), Ok(366.0));
        assert_eq!(
            c.apply(59.0),
            Err(TimeError::NoSuchDate("2000-02-30".into()))
        );
        // Julian: 1900 is a leap year there, not in the Gregorian calendar; the
        // calendars are 13 days apart in 1900-2099.
        let j = TimeConversion::new(
            "days since 1900-01-01",
            Some("julian"),
            "days since 1900-01-01",
            Some("standard"),
        )
        .unwrap();
        assert_eq!(j.apply(0.0), Ok(0.0), "same label, same day number offset");
        assert!(Calendar::Julian.day(1900, 2, 29).is_some());
        assert_eq!(Calendar::Standard.day(1900, 2, 29), None);
        for cal in [
            Calendar::Standard,
            Calendar::Julian,
            Calendar::NoLeap,
            Calendar::AllLeap,
            Calendar::Day360,
        ] {
            for n in [-800_000, -1, 0, 59, 365, 366, 10_000, 800_000] {
                let (y, m, d) = cal.date(n);
                assert_eq!(cal.day(y, m, d), Some(n), "{cal:?} {n}");
            }
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(
            Calendar::Julian.date(Calendar::Standard.day(1582, 10, 15).unwrap()),
            (1582, 10, 5)
        );
    }
}
