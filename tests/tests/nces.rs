//! nces (alias ncea) and ncecat project tests on our own fixture
//! (tests/data/fixture.cdl) and on small member files built with ncgen.
//!
//! Tests named `nces_rNN_*` / `ncecat_rNN_*` cover the behaviour of NCO's reference
//! case with the same id (the cases .ci/run runs). Expected values are worked out by
//! hand and are the values NCO 5.1.4 prints (`NCO_RS_BIN_DIR=/usr/bin cargo test
//! --release -p nco-tests`).

use crate::common::{bad_input, cdl, header_lines, raw};
use nco_tests::{fx, is_nco, nco, value, Scratch};

/// `op ARGS out` in a fresh scratch folder (inputs are in ARGS); returns (scratch, out).
fn run(op: &str, args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco(op).args(args).arg(&out).succeeds();
    (s, out)
}

/// Three ensemble members: v (float, _FillValue -999) and k (int), n = 3.
fn members(s: &Scratch) -> [String; 3] {
    let m = |name: &str, v: &str, k: &str| {
        cdl(
            s,
            name,
            &format!(
                "netcdf {name} {{ dimensions: n = 3 ; variables: float v(n) ; \
                 v:_FillValue = -999.f ; int k(n) ; data: v = {v} ; k = {k} ; }}"
            ),
        )
    };
    [
        m("m1", "1, -2, _", "1, -2, 7"),
        m("m2", "3, 4, _", "2, -5, 8"),
        m("m3", "-4, _, _", "4, -4, 8"),
    ]
}

// ---------------------------------------------------------------- nces reference cases

#[test]
fn nces_r01_integer_ensemble_mean_at_one_time() {
    let (_s, out) = run(
        "nces",
        &["-h", "-O", "-v", "fld_rec", "-d", "time,4", &fx(), &fx()],
    );
    assert_eq!(value(&out, "fld_rec", "%d", &[]), "50");
}

#[test]
fn nces_r02_total_of_a_missing_scalar_stays_missing() {
    let (_s, out) = run(
        "nces",
        &["-h", "-O", "-y", "ttl", "-v", "sc_fill", &fx(), &fx()],
    );
    assert_eq!(raw(&out, "sc_fill", "%g"), "1e+36");
}

#[test]
fn nces_r04_packed_variable_is_unpacked() {
    // fld_pck = 10*0.1 + 5 = 6 at lon 0; written as float without packing attributes.
    let (_s, out) = run("nces", &["-h", "-O", "-C", "-v", "fld_pck", &fx()]);
    assert_eq!(
        value(&out, "fld_pck", "%e", &["-d", "lon,0"]),
        "6.000000e+00"
    );
    assert_eq!(header_lines(&out, "fld_pck"), "float fld_pck(lon) ;");
}

#[test]
fn nces_r05_integer_missing_values_stay_missing() {
    let (_s, out) = run("nces", &["-h", "-O", "-v", "rec_int_fill", &fx(), &fx()]);
    assert_eq!(
        raw(&out, "rec_int_fill", "%d "),
        "-99 2 3 4 5 6 7 8 -99 -99"
    );
}

#[test]
fn nces_r07_packing_convention_across_three_files() {
    let (_s, out) = run("nces", &["-h", "-O", "-v", "fld_pck", &fx(), &fx(), &fx()]);
    assert_eq!(value(&out, "fld_pck", "%f", &["-d", "lon,1"]), "7.000000");
    // Packed with a _FillValue: the fill is converted to the unpacked type.
    let (_s, out) = run("nces", &["-O", "-v", "rec_pck", &fx(), &fx()]);
    assert_eq!(raw(&out, "rec_pck", "%g "), "1 2 3 4 5 6 7 8 9 -1");
    assert_eq!(
        header_lines(&out, "rec_pck"),
        "float rec_pck(time) ; | rec_pck:_FillValue = -1.f ; | \
         rec_pck:long_name = \"packed: unpacks to 1..9 then missing\" ;"
    );
}

#[test]
fn nces_r08_hdf_unpacking_convention() {
    // HDF: (packed - add_offset) * scale_factor = (20 - 5) * 0.1 = 1.5 at lon 1.
    let (_s, out) = run(
        "nces",
        &[
            "-h",
            "-O",
            "--hdf_upk",
            "-v",
            "fld_pck",
            &fx(),
            &fx(),
            &fx(),
        ],
    );
    assert_eq!(value(&out, "fld_pck", "%g ", &[]), "0.5 1.5 2.5 3.5");
}

#[test]
fn nces_r10_ncea_alias_with_mebs() {
    let (_s, out) = run("ncea", &["-y", "mebs", "-v", "sc_dbl", "-O", &fx(), &fx()]);
    nco("ncks")
        .args(["-C", "-H", "--trd", "-v", "sc_dbl", &out])
        .succeeds()
        .last_line_is("sc_dbl = 1.5");
    let s = Scratch::new();
    let [m1, m2, m3] = members(&s);
    let out = s.arg("out.nc");
    nco("ncea")
        .args(["-O", "-y", "mebs", "-v", "v", &m1, &m2, &m3, &out])
        .succeeds();
    assert_eq!(raw(&out, "v", "%.6g "), "2.66667 3 -999");
}

// ---------------------------------------------------------------- nces behaviour

/// NCO 5.1.4 over members m1..m3: (op, v with fills, k integers).
const OPS: [(&str, &str, &str); 13] = [
    ("avg", "0 1 -999", "2 -4 8"),
    ("sqravg", "0 1 -999", "5 13 59"),
    ("avgsqr", "8.66667 10 -999", "7 15 59"),
    ("max", "3 4 -999", "4 -2 8"),
    ("min", "-4 -2 -999", "1 -5 7"),
    ("rms", "2.94392 3.16228 -999", "3 4 8"),
    ("rmssdn", "3.60555 4.47214 -999", "3 5 9"),
    ("sqrt", "0 1 -999", "2 0 3"),
    ("ttl", "0 2 -999", "7 -11 23"),
    ("mabs", "4 4 -999", "4 5 8"),
    ("mebs", "2.66667 3 -999", "2 3 7"),
    ("mibs", "1 2 -999", "1 2 7"),
    ("tabs", "8 6 -999", "7 11 23"),
];

#[test]
fn nces_every_statistic() {
    let s = Scratch::new();
    let [m1, m2, m3] = members(&s);
    let out = s.arg("out.nc");
    for (op, v, k) in OPS {
        nco("nces")
            .args(["-O", "-y", op, &m1, &m2, &m3, &out])
            .succeeds();
        assert_eq!(raw(&out, "v", "%.6g "), v, "-y {op} v");
        // The integer sqrt of a negative mean is NaN: NCO 5.1.4 writes 0, we write the
        // fill value (README, casts).
        let k = if op == "sqrt" && !is_nco() {
            "2 _ 3"
        } else {
            k
        };
        if op != "mebs" {
            assert_eq!(value(&out, "k", "%d ", &[]), k, "-y {op} k");
        }
    }
}

/// Compatibility difference (README): integer `mebs` is rounded like every other
/// integer average; NCO 5.1.4 truncates it (7/3 -> 2, 11/3 -> 3) while it rounds `avg`.
#[test]
fn nces_integer_mebs_rounds_like_avg() {
    let s = Scratch::new();
    let [m1, m2, m3] = members(&s);
    let out = s.arg("out.nc");
    nco("nces")
        .args(["-O", "-y", "mebs", "-v", "k", &m1, &m2, &m3, &out])
        .succeeds();
    let want = if is_nco() { "2 3 7" } else { "2 4 8" };
    assert_eq!(value(&out, "k", "%d ", &[]), want);
}

/// `nces -w`: member weights give Σwx / Σw over the members valid at each element
/// (v[1]: (-2*1 + 4*2) / 3; integers rounded as every integer mean).
#[test]
fn nces_member_weights_give_a_weighted_mean_over_the_valid_members() {
    let s = Scratch::new();
    let [m1, m2, m3] = members(&s);
    let out = s.arg("out.nc");
    nco("nces")
        .args(["-O", "-w", "1,2,1", &m1, &m2, &m3, &out])
        .succeeds();
    assert_eq!(raw(&out, "v", "%g "), "0.75 2 -999");
    assert_eq!(value(&out, "k", "%d ", &[]), "2 -4 8");
}

/// `nces -N`: the (weighted) sums, not divided. An element that no member has stays
/// missing here; NCO 5.1.4 writes 0 there (README, compatibility notes).
#[test]
fn nces_numerator_gives_the_weighted_sums() {
    let s = Scratch::new();
    let [m1, m2, m3] = members(&s);
    let out = s.arg("out.nc");
    let none = if is_nco() { "0" } else { "-999" };
    for (w, v, k) in [
        (Some("1,2,1"), "3 6", "9 -16 31"),
        (None, "0 2", "7 -11 23"),
    ] {
        let mut args = vec!["-O", "-N"];
        if let Some(w) = w {
            args.extend(["-w", w]);
        }
        nco("nces")
            .args(&args)
            .args([&m1, &m2, &m3, &out])
            .succeeds();
        assert_eq!(raw(&out, "v", "%g "), format!("{v} {none}"), "{args:?}");
        assert_eq!(value(&out, "k", "%d ", &[]), k, "{args:?}");
    }
}

/// Bad `-w` lists stop with one line naming `-w` and write nothing. NCO 5.1.4 takes
/// weights with other statistics than the mean and writes wrong values (infinities,
/// zeros, missing values), and aborts on an assertion when they sum to zero.
#[test]
fn nces_bad_member_weights_are_refused() {
    let s = Scratch::new();
    let [m1, m2, m3] = members(&s);
    bad_input(
        "nces",
        &["-w", "1,2", &m1, &m2, &m3],
        "-w",
        "weight array has 2",
    );
    bad_input("nces", &["-w", "1,x,1", &m1, &m2, &m3], "-w", "\"x\"");
    if !is_nco() {
        bad_input(
            "nces",
            &["-y", "max", "-w", "1,2,1", &m1, &m2, &m3],
            "-w",
            "",
        );
        bad_input("nces", &["-w", "1,-1,0", &m1, &m2, &m3], "-w", "");
        bad_input("ncecat", &["-w", "1,2,1", &m1, &m2, &m3], "-w", "");
    }
}

// ---------------------------------------------------------------- ncecat reference cases

#[test]
fn ncecat_r01_concatenate_two_scalar_files() {
    let s = Scratch::new();
    let (a, b, out) = (s.arg("a.nc"), s.arg("b.nc"), s.arg("out.nc"));
    for f in [&a, &b] {
        nco("ncks")
            .args(["-h", "-O", "-v", "sc_dbl", &fx(), f])
            .succeeds();
    }
    nco("ncecat").args(["-h", "-O", &a, &b, &out]).succeeds();
    assert_eq!(value(&out, "sc_dbl", "%6.3f, ", &[]), " 1.500,  1.500,");
    assert_eq!(header_lines(&out, "sc_dbl("), "double sc_dbl(record) ;");
}

#[test]
fn ncecat_r02_multislab_then_average() {
    // fld2 at lon 0, 1, 3: mean 29/6 in the fixture, +100 in the second member.
    let s = Scratch::new();
    let g = cdl(
        &s,
        "g",
        "netcdf g { dimensions: lat = 2 ; lon = 4 ; variables: double fld2(lat, lon) ; \
         data: fld2 = 101.5, 102.5, 103.5, 104.5, 105.5, 106.5, 107.5, 108.5 ; }",
    );
    let (cat, avg) = (s.arg("cat.nc"), s.arg("avg.nc"));
    nco("ncecat")
        .args([
            "-C",
            "-h",
            "-O",
            "-d",
            "lon,0,1",
            "-d",
            "lon,3,3",
            "-v",
            "fld2",
            &fx(),
            &g,
            &cat,
        ])
        .succeeds();
    assert_eq!(
        header_lines(&cat, "fld2("),
        "double fld2(record, lat, lon) ;"
    );
    nco("ncwa")
        .args(["-C", "-h", "-O", "-y", "avg", "-v", "fld2", &cat, &avg])
        .succeeds();
    assert_eq!(value(&avg, "fld2", "%g", &[]), "54.8333");
}

#[test]
fn ncecat_r04_coordinates_do_not_gain_the_record_dimension() {
    let (_s, out) = run(
        "ncecat",
        &[
            "-h",
            "-O",
            "-v",
            "time,lat,lon,fld_rec3",
            &fx(),
            &fx(),
            &fx(),
        ],
    );
    nco("ncks")
        .args(["-C", "-H", "--trd", "-v", "lat", "-d", "lat,1", &out])
        .succeeds()
        .last_line_is("lat[1]=45");
    assert_eq!(header_lines(&out, "lat("), "float lat(lat) ;");
    assert_eq!(header_lines(&out, "time("), "double time(time) ;");
    assert_eq!(
        header_lines(&out, "fld_rec3("),
        "float fld_rec3(record, time, lat, lon) ;"
    );
    assert_eq!(
        header_lines(&out, "UNLIMITED"),
        "record = UNLIMITED ; // (3 currently)"
    );
}

#[test]
fn ncecat_n02_u_names_the_new_record_dimension() {
    let (_s, out) = run("ncecat", &["-O", "-u", "ens", "-v", "sc_dbl", &fx(), &fx()]);
    assert_eq!(header_lines(&out, "sc_dbl("), "double sc_dbl(ens) ;");
    assert_eq!(
        header_lines(&out, "UNLIMITED"),
        "ens = UNLIMITED ; // (2 currently)"
    );
}

#[test]
fn ncecat_keeps_packing_and_fills() {
    let (_s, out) = run("ncecat", &["-O", "-v", "fld_fill,fld_pck", &fx(), &fx()]);
    assert_eq!(value(&out, "fld_fill", "%g ", &[]), "1 _ 3 _ 1 _ 3 _");
    assert_eq!(
        header_lines(&out, "short fld_pck"),
        "short fld_pck(record, lon) ;"
    );
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_member_missing() {
    let s = Scratch::new();
    let missing = s.arg("nosuch.nc");
    for op in ["nces", "ncecat"] {
        bad_input(op, &["-v", "fld2", &fx(), &missing], &missing, &missing);
    }
}

#[test]
fn bad_members_differ_in_shape() {
    let s = Scratch::new();
    let a = cdl(
        &s,
        "a",
        "netcdf a { dimensions: n = 3 ; variables: float x(n) ; data: x = 1, 2, 3 ; }",
    );
    let b = cdl(
        &s,
        "b",
        "netcdf b { dimensions: n = 3 ; m = 2 ; variables: float x(n, m) ; \
         data: x = 1, 2, 3, 4, 5, 6 ; }",
    );
    // NCO: `Variable "x" changed number of dimensions from 1 to 2`.
    bad_input("nces", &["-v", "x", &a, &b], "x", "\"x\"");
}

#[test]
fn bad_members_differ_in_type() {
    // Compatibility difference: NCO converts the second member silently.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let a = cdl(
        &s,
        "a",
        "netcdf a { dimensions: n = 3 ; variables: float x(n) ; data: x = 1, 2, 3 ; }",
    );
    let b = cdl(
        &s,
        "b",
        "netcdf b { dimensions: n = 3 ; variables: double x(n) ; data: x = 1, 2, 3 ; }",
    );
    bad_input("nces", &["-v", "x", &a, &b], "x", "");
}

#[test]
fn ncecat_does_not_stack_auxiliary_coordinates() {
    let (_s, out) = run("ncecat", &["-O", &fx(), &fx()]);
    assert_eq!(header_lines(&out, "stn_lat("), "double stn_lat(stn) ;");
    assert_eq!(header_lines(&out, "stn_lon("), "double stn_lon(stn) ;");
    assert_eq!(
        header_lines(&out, "lev_bnd("),
        "float lev_bnd(lev, vrt_nbr) ;"
    );
    assert_eq!(
        header_lines(&out, "stn_val("),
        "float stn_val(record, stn) ;"
    );
}

#[test]
fn nces_extremes_treat_nan_as_nco_does() {
    // NCO 5.1.4 takes the first member's value and replaces it only by a greater
    // (smaller) one: an element NaN in the first member stays NaN, NaN in a later member
    // is skipped, and an element NaN everywhere is NaN (not +-inf).
    let s = Scratch::new();
    let m = |name: &str, v: &str| {
        cdl(
            &s,
            name,
            &format!(
                "netcdf {name} {{ dimensions: n = 3 ; variables: double v(n) ; data: v = {v} ; }}"
            ),
        )
    };
    let (a, b, c) = (
        m("a", "NaN, 5, NaN"),
        m("b", "1, NaN, NaN"),
        m("c", "2, 7, NaN"),
    );
    for (y, want) in [("min", "nan 5 nan"), ("max", "nan 7 nan")] {
        let out = s.arg(&format!("{y}.nc"));
        nco("nces")
            .args(["-O", "-y", y, &a, &b, &c, &out])
            .succeeds();
        assert_eq!(value(&out, "v", "%g ", &[]).to_lowercase(), want, "{y}");
    }
    let out = s.arg("later.nc");
    nco("nces")
        .args(["-O", "-y", "min", &b, &a, &c, &out])
        .succeeds();
    assert_eq!(value(&out, "v", "%g ", &[]).to_lowercase(), "1 nan nan");
}

#[test]
fn bad_ncecat_takes_no_statistic() {
    // NCO 5.1.4's ncecat has no -y: a usage error, exit 1, no output.
    let s = Scratch::new();
    let out = s.arg("o.nc");
    let r = nco("ncecat")
        .args(["-O", "-y", "max", &fx(), &fx(), &out])
        .fails_with_code(1);
    if !is_nco() {
        assert!(r.stderr.contains("-y"), "{}", r.stderr);
    }
    assert!(!std::path::Path::new(&out).exists());
}

/// Members that pack and mark missing values each their own way (one packed with
/// its own scale and offset, one not packed, each with its own `_FillValue`): every
/// member is unpacked and skipped with its own attributes, as NCO 5.1.4 does, by
/// nces across members and by ncra across the files' records. Ours used the first
/// file's for all (found by a break test: 0.1 K off on ERA-style packed series,
/// another file's fill value averaged as data).
#[test]
fn each_member_is_unpacked_and_skipped_with_its_own_attributes() {
    let s = Scratch::new();
    let m = |name: &str, atts: &str, t: &str| {
        cdl(
            &s,
            name,
            &format!(
                "netcdf {name} {{ dimensions: time = UNLIMITED ; n = 2 ; variables: \
                 double time(time) ; short t(time, n) ; {atts} \
                 data: time = 0, 1 ; t = {t} ; }}"
            ),
        )
    };
    let files = [
        m(
            "a",
            "t:scale_factor = 0.5 ; t:add_offset = 10. ; t:_FillValue = -1s ;",
            "2, 4, -1, 6",
        ),
        m(
            "b",
            "t:scale_factor = 2. ; t:add_offset = 0. ; t:_FillValue = -7s ;",
            "3, -7, 5, 1",
        ),
        m("c", "t:_FillValue = -9s ;", "1, 2, -9, 3"),
    ];
    // Unpacked: a 11 12 _ 13, b 6 _ 10 2, c 1 2 _ 3.
    for (op, want) in [("nces", "6,7,10,6,"), ("ncra", "7,6.4,")] {
        let out = s.arg(&format!("{op}.nc"));
        nco(op).arg("-O").args(&files).arg(&out).succeeds();
        let got = nco("ncks")
            .args(["-C", "-H", "--trd", "-s", "%g,", "-v", "t", &out])
            .succeeds()
            .stdout
            .replace('\n', "");
        assert_eq!(got, want, "{op}");
    }
}
