//! ncflint project tests on our own fixture (tests/data/fixture.cdl) and a second
//! operand made from it with other values (`second`). Each case runs NCO 5.1.4's
//! ncflint (`reference`) too and requires equal files (`compare`, which ignores
//! `history`); the values are checked by hand: w1*a + w2*b, integers rounded half to
//! even, missing where either operand is.

use crate::common::{bad_input, cdl, raw};
use nco_tests::{compare, data_dir, fx, nco, reference, value, Scratch};

/// The fixture with other values: fld2 + 10, fld_fill = 5, 6, _, _, fld_pck stored as
/// 11, 23, 35, 47 (unpacking to 6.1, 7.3, 8.5, 9.7), fld1_int + 1, 1, 2, 4,
/// fld1_sht = -1, 3, 7, 32002 does not fit: 32002 is kept below 32767, time + 10, lat
/// = -40, 40, fld_rec doubled, sc_int = 9, sc_dbl = 3.5.
fn second(s: &Scratch) -> String {
    let mut t = std::fs::read_to_string(data_dir().join("fixture.cdl")).unwrap();
    for (from, to) in [
        (
            " fld2 = 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5 ;",
            " fld2 = 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5 ;",
        ),
        (" fld_fill = 1, _, 3, _ ;", " fld_fill = 5, 6, _, _ ;"),
        (" fld_pck = 10, 20, 30, 40 ;", " fld_pck = 11, 23, 35, 47 ;"),
        (
            " fld1_int = 7, -3, 12, 100000 ;",
            " fld1_int = 8, -2, 14, 100004 ;",
        ),
        (
            " fld1_sht = -2, 0, 5, 32000 ;",
            " fld1_sht = -1, 3, 7, 32002 ;",
        ),
        (
            " time = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 ;",
            " time = 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 ;",
        ),
        (" lat = -45, 45 ;", " lat = -40, 40 ;"),
        (
            " fld_rec = 10, 20, 30, 40, 50, 60, 70, 80, 90, 100 ;",
            " fld_rec = 20, 40, 60, 80, 100, 120, 140, 160, 180, 200 ;",
        ),
        (" sc_int = 7 ;", " sc_int = 9 ;"),
        (" sc_dbl = 1.5 ;", " sc_dbl = 3.5 ;"),
    ] {
        assert!(t.contains(from), "fixture.cdl changed: {from}");
        t = t.replace(from, to);
    }
    cdl(s, "second", &t)
}

/// `ncflint ARGS fixture second out` by us and by NCO; the outputs must be equal.
/// Returns the scratch folder and our output.
#[track_caller]
fn same_as_nco(args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let b = second(&s);
    let (ours, theirs) = (s.arg("ours.nc"), s.arg("nco.nc"));
    nco("ncflint")
        .args(args)
        .args([&fx(), &b, &ours])
        .succeeds();
    reference("ncflint")
        .args(args)
        .args([&fx(), &b, &theirs])
        .succeeds();
    compare(&ours, &theirs).equal();
    (s, ours)
}

#[test]
fn one_weight_gives_the_second_one_minus_it() {
    let (_s, f) = same_as_nco(&["-h", "-w", "0.25"]);
    // 0.25*1.5 + 0.75*3.5
    assert_eq!(value(&f, "sc_dbl", "%g", &[]), "3");
    // 7.75, -2.25, 13.5, 100003 rounded half to even
    assert_eq!(value(&f, "fld1_int", "%d ", &[]), "8 -2 14 100003");
    // -1.25, 2.25, 6.5, 32001.5
    assert_eq!(value(&f, "fld1_sht", "%d ", &[]), "-1 2 6 32002");
    // Missing where either operand is.
    assert_eq!(raw(&f, "fld_fill", "%g "), "4 -999 -999 -999");
    // The record coordinate is interpolated, the others copied.
    assert_eq!(
        value(&f, "time", "%g ", &[]),
        "8.5 9.5 10.5 11.5 12.5 13.5 14.5 15.5 16.5 17.5"
    );
    assert_eq!(value(&f, "lat", "%g ", &[]), "-45 45");
    assert_eq!(
        value(&f, "fld_rec", "%d ", &[]),
        "18 35 52 70 88 105 122 140 158 175"
    );
    assert_eq!(value(&f, "name", "%s", &[]), "fixture");
}

#[test]
fn two_weights_and_fixed_record_coordinates() {
    let (_s, f) = same_as_nco(&["-h", "-w", "0.25,2", "--fix_rec_crd"]);
    assert_eq!(value(&f, "sc_dbl", "%g", &[]), "7.375");
    assert_eq!(value(&f, "time", "%g ", &[]), "1 2 3 4 5 6 7 8 9 10");
    // Packed: unpacked, each result rounded as the packed NC_SHORT would be (NCO
    // 5.1.4), written unpacked: 13.7, 16.35, 19, 21.65.
    assert_eq!(value(&f, "fld_pck", "%g ", &[]), "14 16 19 22");
    let (_s, f) = same_as_nco(&["-h"]);
    assert_eq!(value(&f, "sc_dbl", "%g", &[]), "2.5");
}

#[test]
fn interpolation_to_a_value_of_a_scalar() {
    // sc_int is 7 and 9: 8 is halfway.
    let (_s, f) = same_as_nco(&["-h", "-i", "sc_int,8"]);
    assert_eq!(value(&f, "sc_int", "%d", &[]), "8");
    assert_eq!(value(&f, "sc_dbl", "%g", &[]), "2.5");
    assert_eq!(value(&f, "fld1_sht", "%d ", &[]), "-2 2 6 32001");
    same_as_nco(&["-h", "-i", "sc_dbl,0.5", "-v", "fld2,fld_rec"]);
}

#[test]
fn netcdf4_output_and_hyperslabs() {
    let (_s, f) = same_as_nco(&[
        "-h",
        "-4",
        "-w",
        "0.5",
        "-d",
        "lon,1,2",
        "-v",
        "fld2,fld_fill",
    ]);
    assert_eq!(value(&f, "fld2", "%g ", &[]), "7.5 8.5 11.5 12.5");
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let s = Scratch::new();
    let b = second(&s);
    bad_input("ncflint", &["-i", "time,3", &fx(), &b], "time", "scalar");
    bad_input(
        "ncflint",
        &["-i", "nosuch,3", &fx(), &b],
        "nosuch",
        "nosuch",
    );
    bad_input("ncflint", &["-w", "a", &fx(), &b], "-w", "");
}

/// ncflint writes the variables (and so the dimensions) in the first input's order,
/// as NCO 5.1.4's ncflint does (only its ncbo and ncks alphabetise).
#[test]
fn variables_keep_the_input_order_as_in_nco() {
    let s = Scratch::new();
    let declared = |file: &str| -> Vec<String> {
        nco_tests::ncdump(&["-h"], file)
            .lines()
            .filter(|l| l.starts_with('\t') && !l.starts_with("\t\t") && l.contains('('))
            .map(|l| l.trim().to_string())
            .collect()
    };
    let mut got = Vec::new();
    for theirs in [true, false] {
        let out = s.arg(if theirs { "nco.nc" } else { "ours.nc" });
        let cmd = if theirs {
            reference("ncflint")
        } else {
            nco("ncflint")
        };
        cmd.arg("-O").arg(fx()).arg(fx()).arg(&out).succeeds();
        got.push(declared(&out));
    }
    assert!(got[0].len() > 5, "{:?}", got[0]);
    assert_eq!(got[1], got[0]);
}
