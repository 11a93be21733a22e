//! CF-associated variables under the reducing operators (issue 16, items 2 and 3):
//! which statistic bounds, auxiliary coordinates and coordinates get under `-y`
//! (`nco_core::arith::reduction`), `cell_methods` entries not repeated
//! (`nco_core::rules::cell_methods`, CF 7.3) and `coordinates` attributes naming only
//! variables the output has, on small files built with ncgen. Values are NCO 5.1.4's;
//! where ours differ on purpose the tests check NCO's when run against it
//! (`NCO_RS_BIN_DIR=/usr/bin`) and ours otherwise (README, compatibility notes).

use crate::common::{cdl, data};
use nco_tests::{is_nco, ncdump, nco, Scratch};

/// Three records with `time_bnds` (named by `bounds`), `aux` (named by `v`'s
/// `coordinates`), `clim` (bounds-shaped but named by nothing), `lat` with
/// `lat_bnds`, data `v(time, lat)` and weights `w(time)`.
const CF: &str = "netcdf cf { dimensions: time = UNLIMITED ; nbnd = 2 ; lat = 2 ; \
    variables: double time(time) ; time:units = \"days since 2000-01-01\" ; \
    time:bounds = \"time_bnds\" ; double time_bnds(time, nbnd) ; double clim(time, nbnd) ; \
    float lat(lat) ; lat:bounds = \"lat_bnds\" ; float lat_bnds(lat, nbnd) ; \
    float aux(time) ; float v(time, lat) ; v:coordinates = \"aux\" ; float w(time) ; \
    data: time = 1, 3, 8 ; time_bnds = 0, 2, 2, 4, 4, 12 ; clim = 0, 2, 2, 4, 4, 12 ; \
    lat = -45, 45 ; lat_bnds = -90, 0, 0, 90 ; aux = 1, -2, 4 ; v = 1, 2, -3, 4, 5, 6 ; \
    w = 1, 2, 3 ; }";

#[track_caller]
fn reduce(op: &str, args: &[&str], s: &Scratch, inp: &str) -> String {
    let out = s.arg("out.nc");
    nco(op)
        .args(["-h", "-O"])
        .args(args)
        .arg(inp)
        .arg(&out)
        .succeeds();
    out
}

/// (statistic, clim, v, w) of NCO 5.1.4's ncra over the three records; time is 4,
/// time_bnds 2, 6 and aux 1 (their means) for every statistic.
const NCRA: &[(&str, &str, &str, &str)] = &[
    ("avg", "2, 6", "1, 4", "2"),
    ("ttl", "6, 18", "3, 12", "6"),
    ("max", "4, 12", "5, 6", "3"),
    ("min", "0, 2", "-3, 2", "1"),
    ("mabs", "4, 12", "5, 6", "3"),
    ("mibs", "0, 2", "1, 2", "1"),
    ("mebs", "2, 6", "3, 4", "2"),
    ("tabs", "6, 18", "9, 12", "6"),
    ("sqravg", "4, 36", "1, 16", "4"),
    (
        "sqrt",
        "1.4142135623731, 2.44948974278318",
        "1, 2",
        "1.414214",
    ),
    (
        "rms",
        "2.58198889747161, 7.39369100427294",
        "3.41565, 4.320494",
        "2.160247",
    ),
    (
        "rmssdn",
        "3.16227766016838, 9.05538513813742",
        "4.1833, 5.291502",
        "2.645751",
    ),
];

#[test]
fn ncra_averages_bounds_and_auxiliary_coordinates_for_every_statistic() {
    let s = Scratch::new();
    let inp = cdl(&s, "cf", CF);
    for (op, clim, v, w) in NCRA {
        let out = reduce("ncra", &["-y", op], &s, &inp);
        assert_eq!(data(&out, "time"), "time = 4", "-y {op}");
        assert_eq!(data(&out, "time_bnds"), "time_bnds = 2, 6", "-y {op}");
        assert_eq!(data(&out, "aux"), "aux = 1", "-y {op}");
        assert_eq!(data(&out, "clim"), format!("clim = {clim}"), "-y {op}");
        assert_eq!(data(&out, "v"), format!("v = {v}"), "-y {op}");
        assert_eq!(data(&out, "w"), format!("w = {w}"), "-y {op}");
        assert_eq!(
            data(&out, "lat_bnds"),
            "lat_bnds = -90, 0, 0, 90",
            "-y {op}"
        );
        assert_eq!(
            attr_line(&out, "time_bnds", "cell_methods"),
            "time_bnds:cell_methods = \"time: mean\" ;",
            "-y {op}"
        );
    }
    // -N: the numerator of the mean, for the coordinate-like variables too.
    let out = reduce("ncra", &["-N"], &s, &inp);
    assert_eq!(data(&out, "time"), "time = 12");
    assert_eq!(data(&out, "time_bnds"), "time_bnds = 6, 18");
    assert_eq!(data(&out, "aux"), "aux = 3");
}

#[test]
fn ncwa_weights_bounds_unless_told_not_to() {
    let s = Scratch::new();
    let inp = cdl(&s, "cf", CF);
    for op in ["ttl", "max", "rms"] {
        let out = reduce("ncwa", &["-a", "time", "-y", op], &s, &inp);
        assert_eq!(data(&out, "time_bnds"), "time_bnds = 2, 6", "-y {op}");
        assert_eq!(data(&out, "aux"), "aux = 1", "-y {op}");
        // Weighted: (1*1 + 2*3 + 3*8) / 6.
        let out = reduce("ncwa", &["-a", "time", "-y", op, "-w", "w"], &s, &inp);
        assert_eq!(data(&out, "time"), "time = 5.16666666666667", "-y {op} -w");
        assert_eq!(
            data(&out, "time_bnds"),
            "time_bnds = 2.66666666666667, 7.66666666666667",
            "-y {op} -w"
        );
        assert_eq!(data(&out, "aux"), "aux = 1.5", "-y {op} -w");
        let out = reduce("ncwa", &["-a", "time", "-y", op, "-w", "w", "-I"], &s, &inp);
        assert_eq!(data(&out, "time_bnds"), "time_bnds = 2, 6", "-y {op} -I");
        let out = reduce("ncwa", &["-a", "time", "-y", op, "-N"], &s, &inp);
        assert_eq!(data(&out, "time_bnds"), "time_bnds = 6, 18", "-y {op} -N");
    }
    let out = reduce("ncwa", &["-a", "time", "-y", "ttl"], &s, &inp);
    assert_eq!(data(&out, "clim"), "clim = 6, 18");
    assert_eq!(data(&out, "v"), "v = 3, 12");
}

/// Variables whose `cell_methods` already say something, over `time` and `lat`.
const CM: &str = "netcdf cm { dimensions: time = UNLIMITED ; lat = 2 ; variables: \
    double time(time) ; float lat(lat) ; \
    float a(time, lat) ; a:cell_methods = \"time: mean\" ; \
    float b(time, lat) ; b:cell_methods = \"area: mean time: maximum\" ; \
    float c(time, lat) ; c:cell_methods = \"time:mean\" ; \
    float d(time, lat) ; d:cell_methods = \"time: mean (interval: 1 hr)\" ; \
    float e(time, lat) ; e:cell_methods = \"lat: time: mean\" ; \
    float f(time, lat) ; f:coordinates = \"lat gone\" ; \
    data: time = 1, 2 ; lat = 1, 2 ; a = 1, 2, 3, 4 ; b = 1, 2, 3, 4 ; c = 1, 2, 3, 4 ; \
    d = 1, 2, 3, 4 ; e = 1, 2, 3, 4 ; f = 1, 2, 3, 4 ; }";

/// The header line of attribute `att` of variable `var` (`var:att = ... ;`), blanks
/// squeezed; empty when the variable lacks it.
fn attr_line(file: &str, var: &str, att: &str) -> String {
    let key = format!("{var}:{att} =");
    ncdump(&["-h"], file)
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(&key))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn cell_methods(file: &str, var: &str) -> String {
    attr_line(file, var, "cell_methods")
}

#[test]
fn cell_methods_already_there_are_not_repeated() {
    let s = Scratch::new();
    let inp = cdl(&s, "cm", CM);
    let out = reduce("ncra", &[], &s, &inp);
    assert_eq!(cell_methods(&out, "a"), "a:cell_methods = \"time: mean\" ;");
    assert_eq!(
        cell_methods(&out, "b"),
        "b:cell_methods = \"area: mean time: maximum time: mean\" ;"
    );
    assert_eq!(
        cell_methods(&out, "d"),
        "d:cell_methods = \"time: mean (interval: 1 hr)\" ;"
    );
    assert_eq!(
        cell_methods(&out, "e"),
        "e:cell_methods = \"lat: time: mean\" ;"
    );
    let out = reduce("ncra", &["-y", "max"], &s, &inp);
    assert_eq!(
        cell_methods(&out, "a"),
        "a:cell_methods = \"time: mean time: maximum\" ;"
    );
    assert_eq!(
        cell_methods(&out, "b"),
        "b:cell_methods = \"area: mean time: maximum\" ;"
    );
    let out = reduce("ncwa", &["-a", "time,lat"], &s, &inp);
    assert_eq!(
        cell_methods(&out, "a"),
        "a:cell_methods = \"time: mean time, lat: mean\" ;"
    );
    assert_eq!(
        cell_methods(&out, "d"),
        "d:cell_methods = \"time: mean (interval: 1 hr) time, lat: mean\" ;"
    );
    assert_eq!(
        cell_methods(&out, "f"),
        "f:cell_methods = \"time, lat: mean\" ;"
    );
}

#[test]
fn cell_methods_in_other_spellings_are_recognised() {
    // NCO 5.1.4 looks for the entry as a substring: it misses `time:mean` (no blank)
    // and a joint entry over both dimensions, and appends the same method again.
    let s = Scratch::new();
    let inp = cdl(&s, "cm", CM);
    let ra = reduce("ncra", &[], &s, &inp);
    let c = cell_methods(&ra, "c");
    let out = reduce("ncwa", &["-a", "time,lat"], &s, &inp);
    let e = cell_methods(&out, "e");
    if is_nco() {
        assert_eq!(c, "c:cell_methods = \"time:mean time: mean\" ;");
        assert_eq!(e, "e:cell_methods = \"lat: time: mean time, lat: mean\" ;");
        return;
    }
    assert_eq!(c, "c:cell_methods = \"time:mean\" ;");
    assert_eq!(e, "e:cell_methods = \"lat: time: mean\" ;");
}

#[test]
fn cell_methods_that_only_look_alike_are_extended() {
    // NCO 5.1.4 finds "time: mean" inside `time: mean_absolute_value` and inside
    // `time: mean time: maximum` (whose last method is the maximum) and appends nothing;
    // an empty attribute gets a leading blank.
    let s = Scratch::new();
    let inp = cdl(
        &s,
        "c",
        "netcdf c { dimensions: time = UNLIMITED ; variables: double time(time) ; \
         float a(time) ; a:cell_methods = \"\" ; \
         float b(time) ; b:cell_methods = \"time: mean_absolute_value\" ; \
         float d(time) ; d:cell_methods = \"time: mean time: maximum\" ; \
         data: time = 1, 2 ; a = 1, 2 ; b = 1, 2 ; d = 1, 2 ; }",
    );
    let out = reduce("ncra", &[], &s, &inp);
    let got = [
        cell_methods(&out, "a"),
        cell_methods(&out, "b"),
        cell_methods(&out, "d"),
    ];
    let want = if is_nco() {
        [
            "a:cell_methods = \" time: mean\" ;",
            "b:cell_methods = \"time: mean_absolute_value\" ;",
            "d:cell_methods = \"time: mean time: maximum\" ;",
        ]
    } else {
        [
            "a:cell_methods = \"time: mean\" ;",
            "b:cell_methods = \"time: mean_absolute_value time: mean\" ;",
            "d:cell_methods = \"time: mean time: maximum time: mean\" ;",
        ]
    };
    assert_eq!(got, want);
}

#[test]
fn ncwa_coordinates_name_only_variables_the_output_has() {
    let s = Scratch::new();
    let inp = cdl(&s, "cm", CM);
    let out = reduce("ncwa", &["-a", "time,lat"], &s, &inp);
    let f = attr_line(&out, "f", "coordinates");
    let cf = cdl(&s, "cf", CF);
    let sub = reduce("ncwa", &["-C", "-a", "time", "-v", "v"], &s, &cf);
    let v = attr_line(&sub, "v", "coordinates");
    if is_nco() {
        // NCO drops the averaged coordinate (still in the output, now a scalar
        // coordinate) and keeps the names of variables that are not there.
        assert_eq!(f, "f:coordinates = \"gone\" ;");
        assert_eq!(v, "v:coordinates = \"aux\" ;");
        return;
    }
    assert_eq!(f, "f:coordinates = \"lat\" ;");
    assert_eq!(v, "");
}

/// Integers `a = 1, 2`, `b = -1, -2`, `c = 2, 3` over two records.
const INTS: &str = "netcdf ints { dimensions: time = UNLIMITED ; variables: double time(time) ; \
    int a(time) ; int b(time) ; int c(time) ; data: time = 1, 2 ; a = 1, 2 ; b = -1, -2 ; \
    c = 2, 3 ; }";

#[test]
fn numerator_of_ncra_is_the_bare_sum_and_of_ncwa_is_finished() {
    // -N: NCO 5.1.4's ncra writes the accumulated sum (of x, or of x*x for rms and
    // rmssdn) without squaring or rooting it; its ncwa squares or roots the numerator.
    let s = Scratch::new();
    let inp = cdl(&s, "cf", CF);
    for (op, v, w, clim) in [
        ("rms", "35, 56", "14", "20, 164"),
        ("rmssdn", "35, 56", "14", "20, 164"),
        ("sqravg", "3, 12", "6", "6, 18"),
        ("sqrt", "3, 12", "6", "6, 18"),
        ("mebs", "9, 12", "6", "6, 18"),
        ("ttl", "3, 12", "6", "6, 18"),
    ] {
        let out = reduce("ncra", &["-N", "-y", op], &s, &inp);
        assert_eq!(data(&out, "v"), format!("v = {v}"), "ncra -N -y {op}");
        assert_eq!(data(&out, "w"), format!("w = {w}"), "ncra -N -y {op}");
        assert_eq!(
            data(&out, "clim"),
            format!("clim = {clim}"),
            "ncra -N -y {op}"
        );
        assert_eq!(
            data(&out, "time_bnds"),
            "time_bnds = 6, 18",
            "ncra -N -y {op}"
        );
    }
    for (op, v) in [
        ("rms", "5.91608, 7.483315"),
        ("sqravg", "9, 144"),
        ("sqrt", "1.732051, 3.464102"),
    ] {
        let out = reduce("ncwa", &["-a", "time", "-N", "-y", op], &s, &inp);
        assert_eq!(data(&out, "v"), format!("v = {v}"), "ncwa -N -y {op}");
    }
}

#[test]
fn weights_multiply_absolute_values() {
    // lat weights z = -1, 2: mibs is min(w*|x|) and mabs max(w*|x|) (NCO 5.1.4).
    let s = Scratch::new();
    let inp = cdl(&s, "cf", CF_FIXED);
    let out = reduce("ncwa", &["-a", "lat", "-y", "mibs", "-w", "z"], &s, &inp);
    assert_eq!(data(&out, "v"), "v = -1, -3, -5");
    let out = reduce("ncwa", &["-a", "lat", "-y", "mabs", "-w", "z"], &s, &inp);
    assert_eq!(data(&out, "v"), "v = 4, 8, 12");
}

/// [`CF`] with a fixed variable `z(lat)` for weights over `lat`.
const CF_FIXED: &str = "netcdf cf { dimensions: time = UNLIMITED ; lat = 2 ; \
    variables: double time(time) ; float lat(lat) ; float v(time, lat) ; float z(lat) ; \
    data: time = 1, 3, 8 ; lat = -45, 45 ; v = 1, 2, -3, 4, 5, 6 ; z = -1, 2 ; }";

#[test]
fn ncwa_tabs_is_the_total_of_absolute_values() {
    // NCO 5.1.4's ncwa ignores the absolute value under -y tabs (its ncra and nces do
    // not): 1 - 3 + 5 = 3 instead of 9 (README, compatibility notes).
    let s = Scratch::new();
    let inp = cdl(&s, "cf", CF);
    let ra = reduce("ncra", &["-y", "tabs"], &s, &inp);
    assert_eq!(data(&ra, "v"), "v = 9, 12");
    let out = reduce("ncwa", &["-a", "time", "-y", "tabs"], &s, &inp);
    // Bounds stay averaged.
    assert_eq!(data(&out, "time_bnds"), "time_bnds = 2, 6");
    let plain = data(&out, "v");
    let out = reduce("ncwa", &["-a", "time", "-y", "tabs", "-w", "w"], &s, &inp);
    let weighted = data(&out, "v");
    if is_nco() {
        assert_eq!(plain, "v = 3, 12");
        assert_eq!(weighted, "v = 10, 28");
        return;
    }
    assert_eq!(plain, "v = 9, 12");
    // 1*1 + 2*3 + 3*5, 1*2 + 2*4 + 3*6.
    assert_eq!(weighted, "v = 22, 28");
}

#[test]
fn integer_mean_of_absolute_values_is_rounded_as_the_mean() {
    // An integer result of -y avg is rounded half to even (NCO 5.1.4: 1.5 -> 2,
    // 2.5 -> 2); NCO truncates that of -y mebs (1.5 -> 1). Ours rounds both alike
    // (README, compatibility notes).
    let s = Scratch::new();
    let inp = cdl(&s, "ints", INTS);
    for op in ["ncra", "ncwa"] {
        let args: &[&str] = if op == "ncwa" { &["-a", "time"] } else { &[] };
        let avg = reduce(op, &[args, &["-y", "avg"]].concat(), &s, &inp);
        assert_eq!(data(&avg, "a"), "a = 2", "{op}");
        assert_eq!(data(&avg, "b"), "b = -2", "{op}");
        assert_eq!(data(&avg, "c"), "c = 2", "{op}");
        let mebs = reduce(op, &[args, &["-y", "mebs"]].concat(), &s, &inp);
        assert_eq!(data(&mebs, "c"), "c = 2", "{op}");
        let (a, b) = (data(&mebs, "a"), data(&mebs, "b"));
        if is_nco() {
            assert_eq!((a.as_str(), b.as_str()), ("a = 1", "b = 1"), "{op}");
        } else {
            assert_eq!((a.as_str(), b.as_str()), ("a = 2", "b = 2"), "{op}");
        }
    }
}

/// `v(time, lat, lon)` = 1..24 and `ORO(lat, lon)` for masks.
const MASK: &str = "netcdf m { dimensions: time = UNLIMITED ; lat = 4 ; lon = 3 ; \
    variables: double time(time) ; float lat(lat) ; float lon(lon) ; float ORO(lat, lon) ; \
    float v(time, lat, lon) ; float u(lat) ; float gw(lat) ; \
    data: time = 1, 2 ; lat = -60, -20, 20, 60 ; lon = 0, 120, 240 ; \
    ORO = 1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1 ; \
    v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 ; \
    u = 1, 2, 3, 4 ; gw = 1, 2, 2, 1 ; }";

fn masked_mean(s: &Scratch, inp: &str, args: &[&str]) -> String {
    let out = reduce(
        "ncwa",
        &[&["-a", "lat,lon", "-v", "v"], args].concat(),
        s,
        inp,
    );
    data(&out, "v")
}

#[test]
fn masks_with_every_comparison() {
    // NCO 5.1.4 gives each of these (-m/-T/-M and the plain -B form).
    let s = Scratch::new();
    let inp = cdl(&s, "m", MASK);
    for (t, v) in [
        ("eq", "v = _, _"),
        ("ne", "v = 6.5, 18.5"),
        ("gt", "v = 6, 18"),
        ("ge", "v = 6, 18"),
        ("lt", "v = 7.2, 19.2"),
        ("le", "v = 7.2, 19.2"),
    ] {
        let got = masked_mean(&s, &inp, &["-m", "ORO", "-M", "0.5", "-T", t]);
        assert_eq!(got, v, "-T {t}");
    }
    for (c, v) in [
        ("ORO == 1", "v = 6, 18"),
        ("ORO != 1", "v = 7.2, 19.2"),
        ("lat < -40.", "v = 2, 14"),
        ("lat >= 20", "v = 9.5, 21.5"),
        ("lat <= -20", "v = 3.5, 15.5"),
        ("1 == ORO", "v = 6, 18"),
    ] {
        assert_eq!(masked_mean(&s, &inp, &["-B", c]), v, "-B '{c}'");
    }
    // A mask on lat only, with weights: lat > 40 keeps the last row (10, 11, 12).
    let out = reduce(
        "ncwa",
        &[
            "-a", "lat,lon", "-m", "u", "-M", "3", "-T", "gt", "-w", "gw",
        ],
        &s,
        &inp,
    );
    assert_eq!(data(&out, "v"), "v = 11, 23");
}

#[test]
fn masks_reversed_and_compound() {
    // The right means, checked by hand and with NCO 5.1.4 given the same mask as a
    // variable (ncap2 'msk = ...', then ncwa -m msk -M 1 -T eq). NCO 5.1.4's -B reads
    // only `name op value` and silently returns other means for these (README,
    // compatibility notes).
    let s = Scratch::new();
    let inp = cdl(&s, "m", MASK);
    let cases = [
        // rows -20, 20, 60: 4..12.
        ("-40. < lat", "v = 8, 20", "v = 2, 14"),
        // rows -60, -20, 20: 1..9.
        ("20 >= lat", "v = 5, 17", "v = 9.5, 21.5"),
        // rows -20, 20: 4..9.
        ("lat > -40. && lat < 40.", "v = 6.5, 18.5", "v = 2, 14"),
        // rows -60, 60.
        ("lat < -40. || lat > 40.", "v = 6.5, 18.5", "v = 8, 20"),
        // row -60 and ORO == 1 elsewhere: (1+2+3+5+6+7+8+12)/8.
        ("(lat < -40.) || (ORO == 1)", "v = 5.5, 17.5", "v = _, _"),
        ("!(ORO == 1)", "v = 7.2, 19.2", "v = 6, 18"),
    ];
    for (c, ours, nco_wrong) in cases {
        let want = if is_nco() { nco_wrong } else { ours };
        assert_eq!(masked_mean(&s, &inp, &["-B", c]), want, "-B '{c}'");
    }
}
