//! The `cell_methods` attribute (CF conventions §7.3) as the reducing operators (ncra,
//! ncwa) extend it: after reducing over dimensions `d1, d2` with a method, they record
//! `"d1, d2: method"` (NCO 5.1.4's spelling of the entry; CF's own is `d1: d2:
//! method`), unless the attribute already says so.
//!
//! The attribute is a sequence of entries `name: [name: ...] method [where ...] [over
//! ...] [within ...] [(comment)]`, in the order the operations were applied. An
//! entry is *already there* when the last entry that names any of the reduced
//! dimensions names all of them (maybe more, `area: time: mean` for `time`) with the
//! same method: a mean of means over the same dimensions is still described by one
//! `time: mean` (CMIP6 monthly means averaged again stay `time: mean`, not `time: mean
//! time: mean`), while `time: mean time: maximum` averaged over time again becomes
//! `time: mean time: maximum time: mean` (the mean of maxima).
//!
//! NCO 5.1.4 instead searches the attribute text for the new entry as a substring: it
//! appends to `time:mean` (no blank) and to `lat: lon: mean` (CF's spelling of the
//! same entry), does not append to `time: mean_absolute_value` or to `time: mean time:
//! maximum`, and starts an empty attribute with a blank (README, compatibility notes).

/// One parsed entry: the names before the method, and the method word.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    names: Vec<String>,
    method: String,
}

/// Split a `cell_methods` text into entries (names and method word; qualifiers and
/// comments are skipped). Tolerant: `time:mean` (no blank) and `lat, lon: mean` (NCO's
/// spelling) parse as `time: mean` and `lat: lon: mean`.
fn entries(text: &str) -> Vec<Entry> {
    // Drop comments in parentheses, then read words; a word ending in ':' is a name.
    let mut plain = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let plain = plain.replace(',', ":").replace(':', ": ");
    let mut out: Vec<Entry> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for w in plain.split_whitespace() {
        if let Some(n) = w.strip_suffix(':') {
            names.push(n.to_string());
        } else if !names.is_empty() {
            out.push(Entry {
                names: std::mem::take(&mut names),
                method: w.to_string(),
            });
        }
        // Other words (where/over/within and their operands) qualify the last entry.
    }
    out
}

/// True when `text` already records `method` over all of `dims` (see the module docs).
pub fn already_there(text: &str, dims: &[String], method: &str) -> bool {
    let method = method.split_whitespace().next().unwrap_or(method);
    entries(text)
        .iter()
        .rev()
        .find(|e| e.names.iter().any(|n| dims.contains(n)))
        .is_some_and(|e| e.method == method && dims.iter().all(|d| e.names.contains(d)))
}

/// The `cell_methods` text after reducing over `dims` with `method` (`None` when the
/// attribute is unchanged): `old` with `"d1, d2: method"` appended (separated by one
/// blank), or that entry alone when there was no attribute or it was blank.
pub fn extended(old: Option<&str>, dims: &[String], method: &str) -> Option<String> {
    if dims.is_empty() {
        return None;
    }
    let entry = format!("{}: {method}", dims.join(", "));
    match old.map(str::trim) {
        Some(t) if !t.is_empty() => {
            (!already_there(t, dims, method)).then(|| format!("{} {entry}", old.unwrap_or(t)))
        }
        _ => Some(entry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(old: &str, dims: &[&str], m: &str) -> String {
        let d: Vec<String> = dims.iter().map(|s| s.to_string()).collect();
        extended(Some(old), &d, m).unwrap_or_else(|| old.to_string())
    }

    #[test]
    fn entries_parse_cf_and_nco_spellings() {
        let e = entries("area: mean time: mean (interval: 1 hr) lat: lon: max where land");
        let names: Vec<_> = e
            .iter()
            .map(|e| (e.names.join("+"), e.method.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("area".into(), "mean"),
                ("time".into(), "mean"),
                ("lat+lon".into(), "max")
            ]
        );
        let e = entries("lat, lon: mean time:mean");
        assert_eq!(e[0].names, vec!["lat", "lon"]);
        assert_eq!(
            e[1],
            Entry {
                names: vec!["time".into()],
                method: "mean".into()
            }
        );
    }

    #[test]
    fn an_entry_already_there_is_not_repeated() {
        // As NCO 5.1.4 writes them (checked with ncra and ncwa).
        assert_eq!(ext("time: mean", &["time"], "mean"), "time: mean");
        assert_eq!(
            ext("area: mean time: mean", &["time"], "mean"),
            "area: mean time: mean"
        );
        assert_eq!(
            ext("time: mean (interval: 1 hr)", &["time"], "mean"),
            "time: mean (interval: 1 hr)"
        );
        assert_eq!(
            ext("time: mean area: mean", &["time"], "mean"),
            "time: mean area: mean"
        );
        assert_eq!(
            ext(
                "time: mean within years time: mean over years",
                &["time"],
                "mean"
            ),
            "time: mean within years time: mean over years"
        );
        assert_eq!(
            ext("time: maximum", &["time"], "mean"),
            "time: maximum time: mean"
        );
        assert_eq!(
            ext("time: mean", &["time"], "maximum"),
            "time: mean time: maximum"
        );
        assert_eq!(
            ext("lat: mean lon: mean", &["lat"], "mean"),
            "lat: mean lon: mean"
        );
        assert_eq!(
            ext("lat: mean lon: mean", &["lat", "lon"], "mean"),
            "lat: mean lon: mean lat, lon: mean"
        );
        assert_eq!(
            ext("time: mean", &["lat", "lon"], "mean"),
            "time: mean lat, lon: mean"
        );
        assert_eq!(
            ext("time: mean", &["time", "lat", "lon"], "maximum"),
            "time: mean time, lat, lon: maximum"
        );
        // Where NCO 5.1.4's substring search goes wrong.
        assert_eq!(ext("time:mean", &["time"], "mean"), "time:mean");
        assert_eq!(
            ext("lat: lon: mean", &["lat", "lon"], "mean"),
            "lat: lon: mean"
        );
        assert_eq!(
            ext("lat, lon: mean", &["lon", "lat"], "mean"),
            "lat, lon: mean"
        );
        assert_eq!(
            ext("area: time: mean", &["time"], "mean"),
            "area: time: mean"
        );
        assert_eq!(
            ext("time: mean_absolute_value", &["time"], "mean"),
            "time: mean_absolute_value time: mean"
        );
        assert_eq!(
            ext("time: mean time: maximum", &["time"], "mean"),
            "time: mean time: maximum time: mean"
        );
        assert_eq!(
            extended(Some(""), &["time".into()], "mean").as_deref(),
            Some("time: mean")
        );
        assert_eq!(
            extended(None, &["time".into()], "mean").as_deref(),
            Some("time: mean")
        );
        assert_eq!(extended(None, &[], "mean"), None);
        // tabs' two-word method compares by its first word.
        assert_eq!(
            ext("time: sum absolute_value", &["time"], "sum absolute_value"),
            "time: sum absolute_value"
        );
    }
}
