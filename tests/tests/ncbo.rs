//! ncbo (and ncdiff, ncadd, ncsub, ncmult, ncdivide) project tests on our own fixture
//! (tests/data/fixture.cdl) and on small files built with ncgen.
//!
//! Tests named `ncbo_rNN_*` / `ncbo_nNN_*` cover the behaviour of NCO's reference case
//! with the same id (the cases .ci/run runs). Expected values are worked out by hand
//! (fld3 = 100*lat + 10*lev + lon indices, fld2 = 1.5..8.5) and are the values NCO
//! 5.1.4 prints (`NCO_RS_BIN_DIR=/usr/bin cargo test --release -p nco-tests`).

use crate::common::{bad_input, cdl, header_lines, raw};
use nco_tests::{fx, is_nco, nco, reference, value, Scratch};

/// `op ARGS out` in a fresh scratch folder (inputs are in ARGS); returns (scratch, out).
fn run(op: &str, args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco(op).args(args).arg(&out).succeeds();
    (s, out)
}

/// A second operand: fld_fill(lon) = _, 2, 3, 4 (_FillValue -999) and
/// fld2(lon) = 1, 2, 4, 8, to broadcast against fld2(lat, lon).
fn operand(s: &Scratch) -> String {
    cdl(
        s,
        "ff",
        "netcdf ff { dimensions: lon = 4 ; variables: float fld_fill(lon) ; \
         fld_fill:_FillValue = -999.f ; double fld2(lon) ; \
         data: fld_fill = _, 2, 3, 4 ; fld2 = 1, 2, 4, 8 ; }",
    )
}

// ---------------------------------------------------------------- reference cases

#[test]
fn ncbo_r01_missing_scalar_stays_missing() {
    let (_s, out) = run(
        "ncbo",
        &["-h", "-O", "--op_typ=-", "-v", "sc_fill", &fx(), &fx()],
    );
    assert_eq!(raw(&out, "sc_fill", "%g"), "1e+36");
}

#[test]
fn ncbo_r02_difference_at_a_missing_element() {
    let (_s, out) = run(
        "ncbo",
        &[
            "-h",
            "-O",
            "--op_typ=-",
            "-d",
            "lon,1",
            "-v",
            "fld_fill",
            &fx(),
            &fx(),
        ],
    );
    assert_eq!(raw(&out, "fld_fill", "%g"), "-999");
}

#[test]
fn ncbo_r03_difference_without_fill_value() {
    // missing_value alone is not honoured: 1e36 - 1e36 = 0 like 73 - 73.
    let (_s, out) = run(
        "ncbo",
        &[
            "-h",
            "-O",
            "--op_typ=-",
            "-d",
            "lon,0",
            "-v",
            "fld_nofill",
            &fx(),
            &fx(),
        ],
    );
    assert_eq!(value(&out, "fld_nofill", "%f", &[]), "0.000000");
    let (_s, out) = run(
        "ncbo",
        &["-O", "--op_typ=-", "-v", "fld_nofill", &fx(), &fx()],
    );
    assert_eq!(value(&out, "fld_nofill", "%g ", &[]), "0 0 0 0");
}

#[test]
fn ncbo_r04_ncdiff_is_subtraction() {
    let (_s, out) = run(
        "ncdiff",
        &["-h", "-O", "-d", "lon,1", "-v", "fld_fill", &fx(), &fx()],
    );
    assert_eq!(raw(&out, "fld_fill", "%g"), "-999");
    let (_s, out) = run("ncdiff", &["-O", "-v", "fld2", &fx(), &fx()]);
    assert_eq!(value(&out, "fld2", "%g ", &[]), "0 0 0 0 0 0 0 0");
}

#[test]
fn ncbo_r05_broadcast_a_time_average_against_the_full_file() {
    // rec_fill mean is 5: record 2 gives 3 - 5 = -2, record 1 stays missing.
    let s = Scratch::new();
    let (avg, out) = (s.arg("avg.nc"), s.arg("out.nc"));
    nco("ncwa")
        .args(["-C", "-h", "-O", "-v", "rec_fill", &fx(), &avg])
        .succeeds();
    nco("ncbo")
        .args(["-C", "-h", "-O", "-v", "rec_fill", &fx(), &avg, &out])
        .succeeds();
    assert_eq!(
        value(&out, "rec_fill", "%f", &["-d", "time,2"]),
        "-2.000000"
    );
    assert_eq!(
        raw(&out, "rec_fill", "%g "),
        "-4 -999 -2 -999 0 -999 2 -999 4 -999"
    );
}

#[test]
fn ncbo_r06_three_d_minus_one_d_lon_operand() {
    // sum of fld3 = 1476; the lon operand 0,1,2,3 is subtracted 6 times: 1476 - 36.
    let s = Scratch::new();
    let lon_op = cdl(
        &s,
        "lon_op",
        "netcdf lon_op { dimensions: lon = 4 ; variables: float fld3(lon) ; \
         data: fld3 = 0, 1, 2, 3 ; }",
    );
    let (a, d, t) = (s.arg("a.nc"), s.arg("d.nc"), s.arg("t.nc"));
    nco("ncks")
        .args(["-C", "-O", "-v", "fld3", &fx(), &a])
        .succeeds();
    nco("ncbo")
        .args(["-C", "-h", "-O", &a, &lon_op, &d])
        .succeeds();
    assert_eq!(
        value(&d, "fld3", "%g ", &["-d", "lat,1", "-d", "lev,2"]),
        "120 120 120 120"
    );
    nco("ncwa")
        .args(["-C", "-h", "-O", "-y", "ttl", "-v", "fld3", &d, &t])
        .succeeds();
    assert_eq!(value(&t, "fld3", "%f", &[]), "1440.000000");
}

#[test]
fn ncbo_n01_add() {
    let (_s, out) = run("ncbo", &["-O", "-y", "add", "-v", "fld3", &fx(), &fx()]);
    assert_eq!(
        value(&out, "fld3", "%g ", &["-d", "lat,1", "-d", "lev,2"]),
        "240 242 244 246"
    );
}

#[test]
fn ncbo_n02_multiply() {
    let (_s, out) = run("ncbo", &["-O", "-y", "mlt", "-v", "fld3", &fx(), &fx()]);
    assert_eq!(
        value(&out, "fld3", "%g ", &["-d", "lat,1", "-d", "lev,2"]),
        "14400 14641 14884 15129"
    );
}

#[test]
fn ncbo_n03_divide_by_itself_gives_ones() {
    let (_s, out) = run("ncbo", &["-O", "-y", "dvd", "-v", "fld2", &fx(), &fx()]);
    assert_eq!(value(&out, "fld2", "%g ", &[]), "1 1 1 1 1 1 1 1");
}

#[test]
fn ncbo_n04_doubled_minus_original() {
    let s = Scratch::new();
    let dbl = cdl(
        &s,
        "dbl",
        "netcdf dbl { dimensions: time = UNLIMITED ; variables: int fld_rec(time) ; \
         data: fld_rec = 20, 40, 60, 80, 100, 120, 140, 160, 180, 200 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncbo")
        .args(["-O", "--op_typ=sbt", "-v", "fld_rec", &dbl, &fx(), &out])
        .succeeds();
    assert_eq!(
        value(&out, "fld_rec", "%d ", &[]),
        "10 20 30 40 50 60 70 80 90 100"
    );
    assert_eq!(header_lines(&out, "fld_rec("), "int fld_rec(time) ;");
}

// ---------------------------------------------------------------- behaviour

#[test]
fn every_operation_and_alias_with_broadcasting_and_fills() {
    // fld2(lat, lon) op fld2(lon) = 1, 2, 4, 8; fld_fill: 1,_,3,_ op _,2,3,4.
    let s = Scratch::new();
    let ff = operand(&s);
    let out = s.arg("out.nc");
    let cases = [
        (
            &["add", "+"][..],
            "-999 -999 6 -999",
            "2.5 4.5 7.5 12.5 6.5 8.5 11.5 16.5",
        ),
        (
            &["sbt", "-", "sub"][..],
            "-999 -999 0 -999",
            "0.5 0.5 -0.5 -3.5 4.5 4.5 3.5 0.5",
        ),
        (
            &["mlt", "*", "mult", "multiply"][..],
            "-999 -999 9 -999",
            "1.5 5 14 36 5.5 13 30 68",
        ),
        (
            &["dvd", "/", "divide"][..],
            "-999 -999 1 -999",
            "1.5 1.25 0.875 0.5625 5.5 3.25 1.875 1.0625",
        ),
    ];
    for (names, fill, bcast) in cases {
        for op in names {
            nco("ncbo")
                .args(["-O", "-y", op, "-v", "fld_fill,fld2", &fx(), &ff, &out])
                .succeeds();
            assert_eq!(raw(&out, "fld_fill", "%g "), fill, "-y {op}");
            assert_eq!(raw(&out, "fld2", "%g "), bcast, "-y {op}");
            assert_eq!(
                header_lines(&out, "fld2("),
                "double fld2(lat, lon) ;",
                "-y {op}"
            );
        }
    }
}

#[test]
fn broadcasting_the_first_operand() {
    // The smaller operand first: the result still has the larger shape.
    let s = Scratch::new();
    let ff = operand(&s);
    let out = s.arg("out.nc");
    nco("ncbo")
        .args(["-O", "-v", "fld2", &ff, &fx(), &out])
        .succeeds();
    assert_eq!(
        value(&out, "fld2", "%g ", &[]),
        "-0.5 -0.5 0.5 3.5 -4.5 -4.5 -3.5 -0.5"
    );
    assert_eq!(header_lines(&out, "fld2("), "double fld2(lat, lon) ;");
}

#[test]
fn operator_names_ncadd_ncsub_ncmult_ncdivide() {
    // Debian's NCO does not install these links.
    if is_nco() {
        return;
    }
    for (op, want) in [
        ("ncadd", "3 5 7 9 11 13 15 17"),
        ("ncsub", "0 0 0 0 0 0 0 0"),
        ("ncmult", "2.25 6.25 12.25 20.25 30.25 42.25 56.25 72.25"),
        ("ncdivide", "1 1 1 1 1 1 1 1"),
    ] {
        let (_s, out) = run(op, &["-O", "-v", "fld2", &fx(), &fx()]);
        assert_eq!(value(&out, "fld2", "%g ", &[]), want, "{op}");
    }
}

#[test]
fn packed_operands_are_unpacked() {
    // fld_pck unpacks to 6..9; the result is float, unpacked; rec_pck keeps its fill.
    let (_s, out) = run(
        "ncbo",
        &["-O", "-y", "add", "-v", "fld_pck,rec_pck", &fx(), &fx()],
    );
    assert_eq!(value(&out, "fld_pck", "%g ", &[]), "12 14 16 18");
    assert_eq!(
        value(&out, "rec_pck", "%g ", &[]),
        "2 4 6 8 10 12 14 16 18 _"
    );
    assert_eq!(header_lines(&out, "fld_pck"), "float fld_pck(lon) ;");
    assert_eq!(
        header_lines(&out, "rec_pck:_FillValue"),
        "rec_pck:_FillValue = -1.f ;"
    );
    let (_s, out) = run("ncbo", &["-O", "-y", "mlt", "-v", "fld_pck", &fx(), &fx()]);
    assert_eq!(value(&out, "fld_pck", "%g ", &[]), "36 49 64 81");
}

#[test]
fn integers_keep_their_type() {
    let (_s, out) = run(
        "ncbo",
        &["-O", "-y", "add", "-v", "fld1_int,fld1_sht", &fx(), &fx()],
    );
    assert_eq!(value(&out, "fld1_int", "%d ", &[]), "14 -6 24 200000");
    // 64000 does not fit NC_SHORT and wraps: 64000 - 65536 = -1536.
    assert_eq!(value(&out, "fld1_sht", "%d ", &[]), "-4 0 10 -1536");
}

#[test]
fn integer_division_by_zero_does_not_crash() {
    // Compatibility difference: NCO 5.1.4 dies of SIGFPE on 0/0 in fld1_sht.
    if is_nco() {
        return;
    }
    let (_s, out) = run(
        "ncbo",
        &["-O", "-y", "dvd", "-v", "fld1_int,fld1_sht", &fx(), &fx()],
    );
    assert_eq!(value(&out, "fld1_int", "%d ", &[]), "1 1 1 1");
    // 0/0 in fld1_sht is missing (the default short fill), not a garbage integer.
    let v = value(&out, "fld1_sht", "%d ", &["--no_blank"]);
    assert!(v.contains("-32767"), "{v}");
}

#[test]
fn integer_division_truncates_toward_zero() {
    // NCO 5.1.4 divides integers as C does: 7/-2 is -3, 1/3 is 0 (not rounded).
    let s = Scratch::new();
    let a = cdl(
        &s,
        "num",
        "netcdf num { dimensions: x = 6 ; variables: int i(x) ; short h(x) ; \
         data: i = 3, -3, 7, -7, 1, 9 ; h = -1466, 5, 9, -9, 4, 100 ; }",
    );
    let b = cdl(
        &s,
        "den",
        "netcdf den { dimensions: x = 6 ; variables: int i(x) ; short h(x) ; \
         data: i = 2, 2, -2, -2, 3, 4 ; h = -266, 2, -2, 2, 3, 7 ; }",
    );
    let out = s.arg("q.nc");
    nco("ncbo")
        .args(["-O", "--op_typ=dvd", &a, &b, &out])
        .succeeds();
    assert_eq!(value(&out, "i", "%d ", &[]), "1 -1 -3 3 0 2");
    assert_eq!(value(&out, "h", "%d ", &[]), "5 2 -4 -4 1 14");
}

#[test]
fn hyperslab_below_the_input_chunk_size_on_netcdf4() {
    // Chunks of 3 along y; -d y,1,2 leaves 2: the output's chunks must fit (libnetcdf
    // refuses larger ones), and -L applies. NCO 5.1.4 writes chunks 2, 4 here too.
    let s = Scratch::new();
    let text = "netcdf c { dimensions: y = 3 ; x = 4 ; variables: float v(y, x) ; \
                v:_ChunkSizes = 3, 4 ; :_Format = \"netCDF-4\" ; \
                data: v = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ; }";
    let a = cdl(&s, "a", text);
    let b = cdl(&s, "b", &text.replace("netcdf c", "netcdf d"));
    let out = s.arg("d.nc");
    nco("ncbo")
        .args(["-O", "-L", "1", "--op_typ=add", "-d", "y,1,2", &a, &b, &out])
        .succeeds();
    assert_eq!(value(&out, "v", "%g ", &[]), "10 12 14 16 18 20 22 24");
    let h = nco_tests::ncdump(&["-hs"], &out);
    assert!(h.contains("v:_ChunkSizes = 2, 4 ;"), "{h}");
    assert!(h.contains("v:_DeflateLevel = 1 ;"), "{h}");
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_variable_missing_from_the_second_file() {
    let s = Scratch::new();
    let ff = operand(&s);
    // NCO: "nco_xtr_mk() reports user-supplied variable name ... 'orog' is not in".
    bad_input("ncbo", &["-C", "-v", "orog", &fx(), &ff], "orog", "orog");
}

#[test]
fn bad_non_conformable_shapes() {
    let s = Scratch::new();
    let lat_op = cdl(
        &s,
        "lat_op",
        "netcdf lat_op { dimensions: lat = 2 ; variables: int fld1_int(lat) ; \
         data: fld1_int = 1, 2 ; }",
    );
    bad_input(
        "ncbo",
        &["-v", "fld1_int", &fx(), &lat_op],
        "fld1_int",
        "fld1_int",
    );
}

#[test]
fn bad_missing_input_file() {
    let s = Scratch::new();
    let missing = s.arg("nosuch.nc");
    bad_input("ncbo", &["-v", "fld2", &fx(), &missing], &missing, &missing);
}

#[test]
fn bad_operation_name() {
    bad_input(
        "ncbo",
        &["-y", "pow", "-v", "fld2", &fx(), &fx()],
        "pow",
        "pow",
    );
}

#[test]
fn ncbo_copies_fixed_and_associated_variables() {
    let (_s, out) = run("ncbo", &["-O", &fx(), &fx()]);
    for (var, want) in [
        ("gw", "0.25 0.75"),
        ("hyam", "0.1 0.05 0"),
        ("hybm", "0 0.45 1"),
        ("lev_bnd", "0 300 300 750 750 1013.25"),
        ("stn_lat", "10 20 30"),
        ("stn_lon", "100 200 300"),
    ] {
        assert_eq!(value(&out, var, "%g ", &[]), want, "{var}");
    }
    assert_eq!(value(&out, "orog", "%g ", &[]), "0 0 0 0 0 0 0 0");
}

// ------------------------------------------- two files that differ (issue 16 item 7)

/// tests/data/ncbo2.cdl, the second operand that shares four variables with the
/// fixture, in other types.
fn second() -> String {
    nco_tests::ncbo2_fixture().to_string_lossy().into_owned()
}

/// The variables `file` declares, in its order (`ncdump -h`).
fn declared(file: &str) -> Vec<String> {
    let text = nco_tests::ncdump(&["-h"], file);
    let body = text.split("variables:").nth(1).unwrap_or("");
    let body = body.split("// global attributes:").next().unwrap_or("");
    body.lines()
        .map(str::trim)
        .filter(|l| !l.contains(':') && l.ends_with(" ;"))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|n| n.split('(').next().unwrap_or(n).to_string())
        .collect()
}

#[test]
fn ncbo_works_on_the_variables_both_files_share() {
    let s = Scratch::new();
    let (theirs, ours) = (s.arg("nco.nc"), s.arg("ours.nc"));
    let cases: [(&[&str], &[&str]); 6] = [
        (&[], &["fld1_int", "fld1_sht", "fld_fill", "lon"]),
        (&["-v", "fld_fill"], &["fld_fill", "lon"]),
        (&["-C", "-v", "fld_fill"], &["fld_fill"]),
        (
            &["-v", "fld.*"],
            &["fld1_int", "fld1_sht", "fld_fill", "lon"],
        ),
        (&["-x", "-v", "fld1_int"], &["fld1_sht", "fld_fill", "lon"]),
        (
            &["-x", "-v", "fld1_int,fld2,nosuch"],
            &["fld1_sht", "fld_fill", "lon"],
        ),
    ];
    for (args, want) in cases {
        // Either order: the first file's extra variables are skipped, the second's too.
        for (a, b) in [(fx(), second()), (second(), fx())] {
            reference("ncbo")
                .arg("-O")
                .args(args)
                .args([&a, &b, &theirs])
                .succeeds();
            nco("ncbo")
                .arg("-O")
                .args(args)
                .args([&a, &b, &ours])
                .succeeds();
            assert_eq!(declared(&ours), declared(&theirs), "ncbo {args:?} {a} {b}");
            assert_eq!(declared(&ours), want, "ncbo {args:?} {a} {b}");
        }
    }
    // A name -v asks for that the second file lacks is an error in both.
    let r = reference("ncbo")
        .args(["-O", "-v", "fld2", &fx(), &second(), &theirs])
        .run();
    assert_eq!(r.code, Some(1), "NCO accepted -v fld2");
    bad_input("ncbo", &["-v", "fld2", &fx(), &second()], "fld2", "fld2");
}

#[test]
fn ncbo_promotes_types_and_shares_one_missing_value_as_nco() {
    // fixture: fld_fill float 1,_,3,_ (fill -999); fld1_int int 7,-3,12,100000;
    // fld1_sht short -2,0,5,32000. ncbo2: fld_fill double 0.5,0.5,-999,0.25 (no fill);
    // fld1_int float 1,2,-3,4 (fill -3); fld1_sht int 1,2,3,70000.
    // The second's -999 is the first's fill: missing. The first's fld1_int has no fill,
    // so the second's (-3) is both's: the first's -3 is missing too (NCO's rule).
    // Integer products that overflow wrap, as in NCO (with our warning).
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let cases = [
        ("sbt", "0.5 _ _ _", "6 _ _ 99996", "-3 -2 2 -38000"),
        ("add", "1.5 _ _ _", "8 _ _ 100004", "-1 2 8 102000"),
        ("mlt", "0.5 _ _ _", "7 _ _ 400000", "-2 0 15 -2054967296"),
    ];
    for (op, fill, int, short) in cases {
        nco("ncbo")
            .args(["-O", "-y", op, &fx(), &second(), &out])
            .succeeds();
        assert_eq!(
            header_lines(&out, "fld_fill("),
            "double fld_fill(lon) ;",
            "{op}"
        );
        assert_eq!(
            header_lines(&out, "fld1_int("),
            "float fld1_int(lon) ;",
            "{op}"
        );
        assert_eq!(
            header_lines(&out, "fld1_sht("),
            "int fld1_sht(lon) ;",
            "{op}"
        );
        assert_eq!(value(&out, "fld_fill", "%g ", &[]), fill, "{op}");
        assert_eq!(value(&out, "fld1_sht", "%d ", &[]), short, "{op}");
        if is_nco() {
            // NCO writes the missing results as -3 without declaring a _FillValue,
            // and declares fld_fill's in the first file's type (README).
            assert_eq!(
                value(&out, "fld1_int", "%g ", &[]),
                int.replace('_', "-3"),
                "{op}"
            );
            assert_eq!(header_lines(&out, "fld1_int:_FillValue"), "");
            assert_eq!(
                header_lines(&out, "fld_fill:_FillValue"),
                "fld_fill:_FillValue = -999.f ;"
            );
        } else {
            assert_eq!(value(&out, "fld1_int", "%g ", &[]), int, "{op}");
            assert_eq!(
                header_lines(&out, "fld1_int:_FillValue"),
                "fld1_int:_FillValue = -3.f ;"
            );
            assert_eq!(
                header_lines(&out, "fld_fill:_FillValue"),
                "fld_fill:_FillValue = -999. ;"
            );
        }
    }
}

/// 64-bit integers past 2^53 subtract exactly in NCO 5.1.4; ours go through doubles
/// (README Known bugs).
#[test]
fn int64_beyond_two_to_the_53_subtract_exactly_as_nco() {
    let s = Scratch::new();
    let nc4 = |name: &str, data: &str| {
        let text = format!(
            "netcdf {name} {{\ndimensions:\n n = 2 ;\nvariables:\n int64 v(n) ;\ndata:\n v = {data} ;\n}}\n"
        );
        crate::common::cdl_nc4(&s, name, &text)
    };
    let a = nc4("i64a", "9007199254740993, 123456789012345679");
    let b = nc4("i64b", "0, 1");
    let out = s.arg("d.nc");
    nco("ncbo")
        .args(["-O"])
        .arg(&a)
        .arg(&b)
        .arg(&out)
        .succeeds();
    assert_eq!(
        raw(&out, "v", "%lld "),
        "9007199254740993 123456789012345678"
    );
}

#[test]
fn int64_overflow_wraps_and_the_other_elements_stay_exact_as_nco() {
    let s = Scratch::new();
    let nc4 = |name: &str, data: &str| {
        let text = format!(
            "netcdf {name} {{\ndimensions:\n x = 3 ;\nvariables:\n int64 v(x) ;\ndata:\n v = {data} ;\n}}\n"
        );
        crate::common::cdl_nc4(&s, name, &text)
    };
    let a = nc4("o1", "9007199254740993, 9223372036854775807, 5");
    let b = nc4("o2", "2, 1, 5");
    let out = s.arg("d.nc");
    nco("ncbo")
        .args(["-O", "-y", "add"])
        .arg(&a)
        .arg(&b)
        .arg(&out)
        .succeeds();
    assert_eq!(
        raw(&out, "v", "%lld "),
        "9007199254740995 -9223372036854775808 10"
    );
}

/// Products of 32-bit integers past 2^53 wrap exactly as NCO 5.1.4's (computed in the
/// type, modulo 2^32): through doubles their low bits were lost (-1946474496), and an
/// NC_UINT product past 2^63 was the fill value. Values from NCO 5.1.4's
/// `ncbo --op_typ=mlt` on the same file.
#[test]
fn thirty_two_bit_products_wrap_exactly_as_nco() {
    let s = Scratch::new();
    let f = crate::common::cdl_nc4(
        &s,
        "i32",
        "netcdf i32 { dimensions: x = 3 ; variables: int i(x) ; uint u(x) ; \
         data: i = 2000000001, -1999999999, 7 ; u = 4000000001, 3000000001, 5 ; }",
    );
    let out = s.arg("m.nc");
    nco("ncbo")
        .args(["-O", "--op_typ=mlt"])
        .arg(&f)
        .arg(&f)
        .arg(&out)
        .succeeds();
    assert_eq!(raw(&out, "i", "%d "), "-1946474495 -1356539903 49");
    assert_eq!(raw(&out, "u", "%u "), "1393971201 1210366977 25");
}

/// Integers whose operands declare different missing values (here only the first
/// has `_FillValue = 5`) are computed in their own type too (break test: they went
/// through doubles, `2147483647 * 2147483647` gave 0 and the 64-bit results the fill
/// value). Values from NCO 5.1.4 on the same files, in both orders.
#[test]
fn integers_with_different_missing_values_stay_exact_as_nco() {
    let s = Scratch::new();
    let a = crate::common::cdl_nc4(
        &s,
        "fa",
        "netcdf fa { dimensions: x = 3 ; variables: int v(x) ; v:_FillValue = 5 ; \
         int64 w(x) ; w:_FillValue = 5LL ; uint64 u(x) ; u:_FillValue = 5ULL ; \
         data: v = 2147483647, 7, -7 ; w = 9223372036854775807, 7, -7 ; \
         u = 18446744073709551615, 7, 9 ; }",
    );
    let b = crate::common::cdl_nc4(
        &s,
        "fb",
        "netcdf fb { dimensions: x = 3 ; variables: int v(x) ; int64 w(x) ; uint64 u(x) ; \
         data: v = 2147483647, 2, 2 ; w = 1, 2, 2 ; u = 2, 2, 2 ; }",
    );
    let out = s.arg("m.nc");
    for (first, second) in [(&a, &b), (&b, &a)] {
        nco("ncbo")
            .args(["-O", "--op_typ=mlt"])
            .arg(first)
            .arg(second)
            .arg(&out)
            .succeeds();
        assert_eq!(raw(&out, "v", "%d "), "1 14 -14");
        assert_eq!(raw(&out, "w", "%lld "), "9223372036854775807 14 -14");
        assert_eq!(raw(&out, "u", "%llu "), "18446744073709551614 14 18");
    }
    nco("ncbo")
        .args(["-O", "--op_typ=add"])
        .arg(&a)
        .arg(&b)
        .arg(&out)
        .succeeds();
    assert_eq!(raw(&out, "w", "%lld "), "-9223372036854775808 9 -5");
}

#[test]
#[ignore = "known bug: ncbo broadcasts and mixes 64-bit integers through doubles"]
fn int64_broadcast_and_mixed_types_are_exact_as_nco() {
    let s = Scratch::new();
    let nc4 = |name: &str, text: &str| crate::common::cdl_nc4(&s, name, text);
    let p1 = nc4(
        "p1",
        "netcdf p1 { dimensions: x = 2 ; variables: int64 v(x) ; data: v = 9007199254740993, 1 ; }",
    );
    let p3 = nc4(
        "p3",
        "netcdf p3 { dimensions: y = 2 ; x = 2 ; variables: int64 v(y, x) ; data: v = 9007199254740993, 1, 2, 3 ; }",
    );
    let mx = nc4(
        "mx",
        "netcdf mx { dimensions: x = 2 ; variables: int v(x) ; data: v = 1, 2 ; }",
    );
    let out = s.arg("d.nc");
    nco("ncbo")
        .args(["-O", "-y", "add", &p3, &p1, &out])
        .succeeds();
    assert_eq!(
        raw(&out, "v", "%lld "),
        "18014398509481986 2 9007199254740995 4"
    );
    nco("ncbo")
        .args(["-O", "-y", "add", &p1, &mx, &out])
        .succeeds();
    assert_eq!(raw(&out, "v", "%lld "), "9007199254740994 3");
}
