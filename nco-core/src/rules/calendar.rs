//! Dates in CF time units (`hours since 1900-01-01 00:00:0.0`): enough of UDUnits for
//! date-valued hyperslab bounds and for rebasing record coordinates across files.
//!
//! Calendars (CF conventions §4.4.1): `standard`/`gregorian`/`proleptic_gregorian`
//! (treated as proleptic Gregorian), `noleap`/`365_day`, `all_leap`/`366_day`, `360_day`.

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

/// Days since an arbitrary fixed origin for `dt` in `calendar`.
fn day_number(dt: &DateTime, calendar: Option<&str>) -> f64 {
    const CUM: [i64; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let cal = calendar.unwrap_or("standard").to_ascii_lowercase();
    let days = match cal.as_str() {
        "noleap" | "365_day" => dt.year * 365 + CUM[(dt.month - 1) as usize] + dt.day - 1,
        "all_leap" | "366_day" => {
            let leap = i64::from(dt.month > 2);
            dt.year * 366 + CUM[(dt.month - 1) as usize] + leap + dt.day - 1
        }
        "360_day" => dt.year * 360 + (dt.month - 1) * 30 + dt.day - 1,
        _ => days_from_civil(dt.year, dt.month, dt.day),
    };
    days as f64 + dt.seconds / 86_400.0
}

/// Seconds in one unit of a CF time unit name, `None` when not a time unit.
pub fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit.trim().to_ascii_lowercase().as_str() {
        "second" | "seconds" | "sec" | "secs" | "s" => 1.0,
        "minute" | "minutes" | "min" | "mins" => 60.0,
        "hour" | "hours" | "hr" | "hrs" | "h" => 3600.0,
        "day" | "days" | "d" => 86_400.0,
        "week" | "weeks" => 7.0 * 86_400.0,
        _ => return None,
    })
}

/// Split `"<unit> since <date>"` into the unit's seconds and the reference date.
pub fn parse_units(units: &str) -> Option<(f64, DateTime)> {
    let lower = units.to_ascii_lowercase();
    let i = lower.find(" since ")?;
    let secs = unit_seconds(&units[..i])?;
    let date = parse_date(&units[i + 7..])?;
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

/// Factor and offset that convert values in `from` units to `to` units
/// (`to_value = from_value * factor + offset`), `None` when either is not a time unit.
pub fn rebase(from: &str, to: &str, calendar: Option<&str>) -> Option<(f64, f64)> {
    let (fs, fref) = parse_units(from)?;
    let (ts, tref) = parse_units(to)?;
    let offset_days = day_number(&fref, calendar) - day_number(&tref, calendar);
    Some((fs / ts, offset_days * 86_400.0 / ts))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn rebase_with_time_zone() {
        let (f, o) = rebase(
            "days since 1964-03-22 12:09:00 -9:00",
            "days since 1964-03-12",
            None,
        )
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
}
