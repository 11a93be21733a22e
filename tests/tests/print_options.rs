//! ncks printing options: `--cal` / `--dt_fmt` (time values as dates), `--rad` (every
//! dimension), `--prn_fl` (print into a file). Expected lines are NCO 5.1.4's prints of
//! the small file below (`NCO_RS_BIN_DIR=/usr/bin` runs the same checks against it).

use crate::common::cdl;
use nco_tests::{is_nco, nco, Scratch};

/// Time variables in three calendars and forms: a coordinate with a time zone and its
/// bounds (which take its units, CF §7.1), a 360-day calendar, seconds with a fill
/// value and fractions, and a variable that is not time.
const CAL: &str = r#"netcdf cal {
dimensions: time = UNLIMITED ; nv = 2 ; n = 3 ;
variables:
  double time(time) ; time:units = "days since 1964-03-12 12:09:00 -9:00" ;
    time:calendar = "gregorian" ; time:bounds = "time_bnds" ;
  double time_bnds(time, nv) ;
  double t360(n) ; t360:units = "days since 2013-01-01" ; t360:calendar = "360_day" ;
  double s(n) ; s:units = "seconds since 2000-01-01" ; s:_FillValue = -1. ;
  double h(n) ; h:units = "hours since 1900-01-01 00:00:0.0" ;
  float x(n) ; x:units = "K" ;
data:
  time = 1, 2 ; time_bnds = 0.5, 1.5, 1.5, 2.5 ;
  t360 = 58, 59, 60 ; s = 0.5, -1, 86399.5 ; h = 876018, 876024, 876030 ; x = 1, 2, 3 ;
}"#;

/// The data lines (`name = ...` and the rows below them) of `ncks ARGS -H file`.
fn data_lines(args: &[&str], file: &str) -> String {
    let r = nco("ncks").args(args).args(["-H", file]).succeeds();
    let data = r.stdout.split("data:").nth(1).unwrap_or_default();
    data.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('}'))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn cal_prints_time_values_as_dates_in_their_calendar() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    let want = [
        r#"h = "1999-12-08 18:00:00", "1999-12-09", "1999-12-09 06:00:00" ;"#,
        r#"s = "2000-01-01 00:00:0.5000000", _, "2000-01-01 23:59:59.5000000" ;"#,
        r#"t360 = "2013-02-29", "2013-02-30", "2013-03-01" ;"#,
        r#"time = "1964-03-13 21:09:00", "1964-03-14 21:09:00" ;"#,
        "time_bnds =",
        r#""1964-03-13 09:09:00", "1964-03-14 09:09:00","#,
        r#""1964-03-14 09:09:00", "1964-03-15 09:09:00" ;"#,
        "x = 1, 2, 3 ;",
    ]
    .join("\n");
    assert_eq!(data_lines(&["--cal"], &f), want);
    assert_eq!(
        data_lines(&["--dt_fmt=1"], &f),
        want,
        "--dt_fmt 1 implies --cal"
    );
    assert_eq!(data_lines(&["--cal", "--dt_fmt=0"], &f), want);
    // --dt_fmt 0 alone is the default form without --cal: numbers.
    assert!(data_lines(&["--dt_fmt=0"], &f).contains("t360 = 58, 59, 60 ;"));
    let micro = data_lines(&["--dt_fmt=2", "-v", "s"], &f);
    assert_eq!(
        micro,
        r#"s = "2000-01-01 00:00:00.500000", _, "2000-01-01 23:59:59.500000" ;"#
    );
    let iso = data_lines(&["--dt_fmt=3", "-v", "t360"], &f);
    assert_eq!(
        iso,
        r#"t360 = "2013-02-29T00:00:00.000000", "2013-02-30T00:00:00.000000", "2013-03-01T00:00:00.000000" ;"#
    );
    // Traditional lines keep the numbers, as NCO's.
    let trd = nco("ncks")
        .args(["--cal", "--trd", "-H", "-C", "-v", "t360", &f])
        .succeeds();
    assert!(trd.stdout.contains("t360[0]=58"), "{}", trd.stdout);
}

/// NCO 5.1.4 computes the dates of NC_FLOAT values in single precision: `1.f` days
/// since 1964-03-12 12:09:00 -9:00 prints as 21:09:20, its float bounds 0.5 as
/// 09:08:16. Ours are exact (README, compatibility notes).
#[test]
fn cal_dates_of_float_values_are_exact() {
    let s = Scratch::new();
    let f = cdl(
        &s,
        "flt",
        r#"netcdf flt { dimensions: time = 1 ; nv = 2 ;
        variables: float time(time) ; time:units = "days since 1964-03-12 12:09:00 -9:00" ;
        time:bounds = "tb" ; float tb(time, nv) ;
        data: time = 1 ; tb = 0.5, 1.5 ; }"#,
    );
    let want = if is_nco() {
        "tb =\n\"1964-03-13 09:08:16\", \"1964-03-14 09:08:16\" ;\ntime = \"1964-03-13 21:09:20\" ;"
    } else {
        "tb =\n\"1964-03-13 09:09:00\", \"1964-03-14 09:09:00\" ;\ntime = \"1964-03-13 21:09:00\" ;"
    };
    assert_eq!(data_lines(&["--cal"], &f), want);
}

/// A duration (`units = "second"`, no `since`) is not a date: ours prints its numbers;
/// NCO 5.1.4 prints dates counted from UDUnits' origin, 2001-01-01 (README).
#[test]
fn cal_leaves_durations_as_numbers() {
    let s = Scratch::new();
    let f = cdl(
        &s,
        "dur",
        r#"netcdf dur { dimensions: n = 2 ; variables: double d(n) ; d:units = "second" ;
        data: d = 1, 2 ; }"#,
    );
    let want = if is_nco() {
        r#"d = "2001-01-01 00:00:01", "2001-01-01 00:00:02" ;"#
    } else {
        "d = 1, 2 ;"
    };
    assert_eq!(data_lines(&["--cal"], &f), want);
}

/// A text attribute with newlines prints whole, in one CDL string, with or without
/// `--cal`; NCO 5.1.4 prints `"",` and the last line, dropping the first (README).
#[test]
fn text_attributes_with_newlines_print_whole() {
    let s = Scratch::new();
    let f = cdl(
        &s,
        "att",
        r#"netcdf att { variables: int i ; i:note = "one\ntwo\n" ; data: i = 1 ; }"#,
    );
    let header = |args: &[&str]| nco("ncks").args(args).args(["-m", &f]).succeeds().stdout;
    let want = if is_nco() {
        "i:note = \"\",\n        \"two\\n\" ;"
    } else {
        r#"i:note = "one\ntwo\n" ;"#
    };
    for args in [&[][..], &["--cal"]] {
        let h = header(args);
        assert!(h.contains(want), "{args:?}: {h}");
    }
}

#[test]
fn bad_date_format_is_refused() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    if !is_nco() {
        // NCO 5.1.4 takes --dt_fmt=4 and prints binary garbage.
        nco("ncks")
            .args(["--dt_fmt=4", "-H", &f])
            .run()
            .clean_failure("--dt_fmt");
    }
}

#[test]
fn rad_prints_every_dimension() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    let dims = |args: &[&str]| {
        let r = nco("ncks").args(args).args(["-v", "x", &f]).succeeds();
        let head = r
            .stdout
            .split("variables:")
            .next()
            .unwrap_or_default()
            .to_string();
        head.lines()
            .filter(|l| l.contains(" = "))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(dims(&[]), "n = 3 ;");
    assert_eq!(
        dims(&["--rad"]),
        "n = 3 ; nv = 2 ; time = UNLIMITED ; // (2 currently)"
    );
    let json = nco("ncks")
        .args(["--rad", "--json", "-v", "x", &f])
        .succeeds();
    assert!(json.stdout.contains("\"nv\": 2"), "{}", json.stdout);
}

#[test]
fn prn_fl_prints_into_the_file_and_nothing_on_standard_output() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    let file = s.arg("printed.txt");
    let r = nco("ncks")
        .args(["--prn_fl", &file, "-H", "-v", "x", &f])
        .succeeds();
    assert_eq!(r.stdout, "");
    let printed = std::fs::read_to_string(&file).expect("printed file");
    let direct = nco("ncks").args(["-H", "-v", "x", &f]).succeeds();
    assert_eq!(printed, direct.stdout);
    if !is_nco() {
        let missing = s.arg("no/such/dir/p.txt");
        nco("ncks")
            .args(["--prn_fl", &missing, "-v", "x", &f])
            .run()
            .clean_failure("no/such/dir");
        // Nothing is printed when an output file is given.
        let out = s.arg("out.nc");
        nco("ncks")
            .args(["--prn_fl", &file, "-v", "x", &f, &out])
            .run()
            .clean_failure("--prn_fl");
    }
}

/// `--jsn_fmt`: 1-3 the default JSON; 4 added, flat data arrays; 0 and 4 without the
/// variables' `shape` and `type`. NCO 5.1.4 leaves a lone `,` where those were (its
/// JSON does not parse); ours parses (README, compatibility notes).
#[test]
fn jsn_fmt_levels() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    let print = |lvl: &str| {
        nco("ncks")
            .args([&format!("--jsn_fmt={lvl}"), "-C", "-v", "time_bnds", &f])
            .succeeds()
            .stdout
    };
    let default = nco("ncks")
        .args(["--json", "-C", "-v", "time_bnds", &f])
        .succeeds();
    assert_eq!(print("2"), default.stdout, "--jsn_fmt implies --json");
    assert!(print("2").contains("\"data\": [[0.5, 1.5], [1.5, 2.5]]"));
    let six = print("6");
    assert!(six.contains("\"data\": [0.5, 1.5, 1.5, 2.5]"), "{six}");
    assert!(six.contains("\"type\": \"double\""), "{six}");
    let four = print("4");
    assert!(four.contains("\"data\": [0.5, 1.5, 1.5, 2.5]"), "{four}");
    assert!(!four.contains("\"type\""), "{four}");
    if !is_nco() {
        for text in [print("0"), four] {
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
        }
        nco("ncks")
            .args(["--jsn_fmt=8", &f])
            .run()
            .clean_failure("--jsn_fmt");
    }
}

/// `--hdn`: the hidden attributes of a netCDF-4 file after the others, NCO 5.1.4's
/// names, order and rules (none for scalars' `_Storage`, none of `_Endianness` for
/// one-byte types and strings); the file's own at the end of the global attributes.
#[test]
fn hdn_prints_hidden_attributes_of_netcdf4_files() {
    let f = nco_tests::gx();
    let r = nco("ncks").args(["--hdn", "-m", "-M", &f]).succeeds();
    let text = r.stdout;
    let tas = [
        "tas:_FillValue = -1.e+30f ;",
        "tas:_Storage = \"chunked\" ;",
        "tas:_ChunkSizes = 2, 3, 4 ;",
        "tas:_DeflateLevel = 5 ;",
        "tas:_Shuffle = \"true\" ;",
        "tas:_Endianness = \"little\" ;",
    ];
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .position(|l| *l == tas[1])
        .expect("tas:_Storage");
    assert_eq!(&lines[at - 1..at + 5], tas, "{text}");
    for (line, present) in [
        ("mask:_Storage = \"contiguous\" ;", true),
        ("mask:_Endianness", false),
        ("city:_Endianness", false),
        ("scalar:_Storage", false),
        ("scalar:_Endianness = \"little\" ;", true),
        (":_Format = \"netCDF-4\" ;", true),
        (":_IsNetcdf4 = 1 ;", true),
        (":_NCProperties = \"version=2,netcdf=", true),
    ] {
        assert_eq!(text.contains(line), present, "{line}:\n{text}");
    }
    // Without --hdn, and for netCDF3 files, none.
    let plain = nco("ncks").args(["-m", "-M", &f]).succeeds().stdout;
    assert!(!plain.contains("_Storage") && !plain.contains("_Format"));
    let nc3 = nco("ncks")
        .args(["--hdn", "-m", "-M", &nco_tests::fx()])
        .succeeds();
    for hidden in ["_Storage", "_Endianness", "_Format", "_NCProperties"] {
        assert!(!nc3.stdout.contains(hidden), "{hidden}: {}", nc3.stdout);
    }
}

/// `--cal` in traditional and JSON prints: dates when nothing chose what to print (no
/// -H, -m, -M, -P), a missing value empty; numbers otherwise (NCO 5.1.4's rules).
#[test]
fn cal_in_traditional_and_json_prints() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    let trd = nco("ncks")
        .args(["--cal", "--trd", "-C", "-v", "s", &f])
        .succeeds()
        .stdout;
    assert!(
        trd.contains("s[0]=2000-01-01 00:00:0.5000000 seconds since 2000-01-01"),
        "{trd}"
    );
    assert!(trd.contains("s[1]= seconds since 2000-01-01"), "{trd}");
    let json = nco("ncks")
        .args(["--cal", "--json", "-C", "-v", "t360", &f])
        .succeeds()
        .stdout;
    assert!(
        json.contains(r#""data": ["2013-02-29", "2013-02-30", "2013-03-01"]"#),
        "{json}"
    );
    let chosen = nco("ncks")
        .args(["--cal", "--json", "-H", "-C", "-v", "t360", &f])
        .succeeds();
    assert!(
        chosen.stdout.contains(r#""data": [58, 59, 60]"#),
        "{}",
        chosen.stdout
    );
}

/// `--rad` into an output: every dimension of the input, the unused ones fixed (the
/// record dimension no variable uses too), as NCO 5.1.4 writes them.
#[test]
fn rad_keeps_every_dimension_in_outputs() {
    let s = Scratch::new();
    let f = cdl(&s, "cal", CAL);
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-O", "--rad", "-v", "x", &f, &out])
        .succeeds();
    let header = nco_tests::ncdump(&["-h"], &out);
    for d in ["n = 3 ;", "nv = 2 ;", "time = 2 ;"] {
        assert!(header.contains(d), "{d} in\n{header}");
    }
    nco("ncks").args(["-O", "-v", "x", &f, &out]).succeeds();
    assert!(
        !nco_tests::ncdump(&["-h"], &out).contains("nv ="),
        "without --rad"
    );
}

/// Units NCO 5.1.4 (UDUnits) reads: an ISO `Z` after the reference time,
/// milliseconds, `after` for `since`.
#[test]
fn cal_reads_iso_utc_milliseconds_and_after() {
    let s = Scratch::new();
    for (units, want) in [
        (
            "seconds since 1970-01-01T00:00:00Z",
            r#"v = "1970-01-01 00:00:01", "1970-01-01 00:41:40" ;"#,
        ),
        (
            "milliseconds since 2000-01-01",
            r#"v = "2000-01-01 00:00:0.0010000", "2000-01-01 00:00:2.5000000" ;"#,
        ),
        (
            "minutes after 2000-01-01",
            r#"v = "2000-01-01 00:01:00", "2000-01-02 17:40:00" ;"#,
        ),
    ] {
        let f = cdl(
            &s,
            "u",
            &format!(
                "netcdf u {{ dimensions: n = 2 ; variables: double v(n) ; v:units = \"{units}\" ; \
                 data: v = 1, 2500 ; }}"
            ),
        );
        assert_eq!(data_lines(&["--cal", "-C"], &f), want, "{units}");
    }
}

/// `standard` is CF's mixed calendar, Julian before 1582-10-15, as NCO 5.1.4 counts
/// (36500 days since 1500-01-01 is 1599-12-17); `proleptic_gregorian` is Gregorian
/// at every date here (1599-12-08), where NCO 5.1.4 counts it as the mixed calendar
/// (README, compatibility notes).
#[test]
fn standard_calendar_is_julian_before_1582() {
    let s = Scratch::new();
    for (cal, ours, nco_) in [
        ("standard", "1599-12-17", "1599-12-17"),
        ("proleptic_gregorian", "1599-12-08", "1599-12-17"),
    ] {
        let f = cdl(
            &s,
            "old",
            &format!(
                "netcdf old {{ variables: double t ; t:units = \"days since 1500-01-01\" ; \
                 t:calendar = \"{cal}\" ; data: t = 36500 ; }}"
            ),
        );
        let want = if is_nco() { nco_ } else { ours };
        assert_eq!(
            data_lines(&["--cal"], &f),
            format!("t = \"{want}\" ;"),
            "{cal}"
        );
    }
}

/// `--fmt_val`: the printf format of float and double data in CDL and JSON, trailing
/// zeros of the decimals trimmed (none kept in CDL, one in JSON), integers, attributes,
/// missing values and NaN as without it; `-s` wins; traditional prints ignore it (NCO
/// 5.1.4). Numbers longer than 24 characters are whole here, NCO cuts them at 24
/// characters (README, compatibility notes).
#[test]
fn fmt_val_formats_floating_point_data() {
    let s = Scratch::new();
    let f = cdl(
        &s,
        "fv",
        r#"netcdf fv { dimensions: n = 4 ;
        variables: double d(n) ; d:_FillValue = -9. ; d:scale = 1.25 ;
          float x(n) ; int i(n) ; double big ;
        data: d = 0.5, -90, _, 1234.5678 ; x = 1, 2.5, NaN, 1e-3 ; i = 1, 2, 3, 4 ;
          big = 1e30 ; }"#,
    );
    let cdl = data_lines(&["--fmt_val=%8.3f", "-v", "d,x,i"], &f);
    assert_eq!(
        cdl,
        "d =    0.5,  -90., _, 1234.568 ;\ni = 1, 2, 3, 4 ;\nx =    1.,    2.5, NaNf,    0.001 ;"
    );
    let head = nco("ncks")
        .args(["--fmt_val=%8.3f", "-v", "d", &f])
        .succeeds();
    assert!(head.stdout.contains("d:scale = 1.25 ;"), "{}", head.stdout);
    let e = data_lines(&["--fmt_val=%.2e", "-v", "x"], &f);
    assert_eq!(e, "x = 1.e+00, 2.5e+00, NaNf, 1.e-03 ;");
    let json = nco("ncks")
        .args(["--json", "--fmt_val=%.2e", "-C", "-v", "x", &f])
        .succeeds();
    assert!(
        json.stdout
            .contains("\"data\": [1.0e+00, 2.50e+00, null, 1.0e-03]"),
        "{}",
        json.stdout
    );
    let trd = nco("ncks")
        .args(["--trd", "-H", "-C", "--fmt_val=%.3f", "-v", "x", &f])
        .succeeds();
    assert!(trd.stdout.contains("n[1] x[1]=2.5"), "{}", trd.stdout);
    // NCO 5.1.4 prints `-s` values before its CDL there; ours formats them inside it.
    let both = data_lines(&["--cdl", "-s", "%.1f", "--fmt_val=%.3f", "-v", "x"], &f);
    assert!(both.contains("1.0"), "{both}");
    assert!(!both.contains("1.000"), "-s wins: {both}");
    let big = data_lines(&["--fmt_val=%.1f", "-v", "big"], &f);
    let want = if is_nco() {
        "big = 100000000000000001988462 ;"
    } else {
        "big = 1000000000000000019884624838656. ;"
    };
    assert_eq!(big, want);
    if !is_nco() {
        nco("ncks")
            .args(["--fmt_val=%d", &f])
            .run()
            .clean_failure("--fmt_val");
    }
}

/// `--cal` of `months since` and `years since` (UDUnits' fixed lengths: a year of
/// 3.15569259747e7 s, a month a twelfth of it, as NCO 5.1.4 converts them) and of
/// UDUnits' compact reference dates (`days since 20000101`).
#[test]
fn cal_months_years_and_compact_dates() {
    let s = Scratch::new();
    let f = cdl(
        &s,
        "mo",
        r#"netcdf mo { dimensions: t = 3 ;
        variables: double m(t) ; m:units = "months since 2000-01-01" ;
          double y(t) ; y:units = "years since 2000-01-01" ;
          double z(t) ; z:units = "days since 20000101" ;
        data: m = 0, 1, 13 ; y = 0, 1, 2.5 ; z = 0, 1, 2 ; }"#,
    );
    let want = [
        r#"m = "2000-01-01", "2000-01-31 10:29:3.8312250", "2001-01-30 16:17:49.8059250" ;"#,
        r#"y = "2000-01-01", "2000-12-31 05:48:45.9747000", "2002-07-02 02:31:54.9367500" ;"#,
        r#"z = "2000-01-01", "2000-01-02", "2000-01-03" ;"#,
    ]
    .join("\n");
    assert_eq!(data_lines(&["--cal"], &f), want);
}
