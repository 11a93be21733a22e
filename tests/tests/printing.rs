//! How ncks prints values that scripts and `ncgen` read back (issue 16, item 13): NaNs
//! and infinities in every style (CDL, traditional, JSON; data and attributes), NC_STRING
//! attributes in CDL, and char arrays in JSON and traditional lines.
//!
//! Every printed form is compared byte for byte with NCO 5.1.4's (`/usr/bin/ncks`, the
//! test fails when it is not installed) on our fixtures `tests/data/printing.cdl`
//! (built as classic and as netCDF-4) and `tests/data/strings.cdl` (netCDF-4). The
//! round trips `ncks --cdl f.nc | ncgen` are compared with the original file by
//! `nco_tests::compare` (exact; a NaN equals only a NaN, a float attribute only a float
//! one, a string attribute only a string one).

use nco_tests::{
    compare, nco, printing_fixture, printing_fixture_nc4, reference, strings_fixture, tool, Scratch,
};

fn path(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The printing fixture as classic and as netCDF-4 files.
fn printing_files() -> [String; 2] {
    [path(printing_fixture()), path(printing_fixture_nc4())]
}

/// `ncks ARGS FILE` by NCO and by us: the same stdout, byte for byte.
#[track_caller]
fn same_print(args: &[&str], file: &str) {
    let theirs = reference("ncks").args(args).arg(file).succeeds();
    let ours = nco("ncks").args(args).arg(file).succeeds();
    assert_eq!(
        ours.stdout, theirs.stdout,
        "ncks {args:?} {file}: stdout differs from NCO's"
    );
}

/// `ncks --cdl FILE > f.cdl; ncgen [-k nc4] -o f.nc f.cdl` with our ncks: the file
/// made from the printed CDL equals `file`. Returns the printed CDL.
#[track_caller]
fn round_trip(file: &str, nc4: bool) -> String {
    let s = Scratch::new();
    let cdl = nco("ncks").args(["--cdl", file]).succeeds().stdout;
    let text = s.path("printed.cdl");
    std::fs::write(&text, &cdl).expect("write printed CDL");
    let back = s.arg("back.nc");
    let kind: &[&str] = if nc4 { &["-k", "nc4"] } else { &[] };
    tool("ncgen")
        .args(kind)
        .args(["-o", &back])
        .arg(&text)
        .succeeds();
    compare(file, &back).equal();
    cdl
}

// ------------------------------------------------------------ NaN and infinities

#[test]
fn nonfinite_cdl_as_nco() {
    for f in printing_files() {
        for args in [
            &[][..],
            &["--cdl", "-H"],
            &["-m", "-M"],
            &["-H", "-C", "-v", "flt,dbl,grid,flt_sc,dbl_sc,nan_fill"],
        ] {
            same_print(args, &f);
        }
    }
}

#[test]
fn nonfinite_traditional_as_nco() {
    for f in printing_files() {
        for args in [
            &["--trd"][..],
            &["--trd", "-H"],
            &["--trd", "-m", "-M", "-C", "-v", "flt,dbl,nan_fill"],
            &["--trd", "-H", "-V", "-C", "-v", "flt,dbl,grid"],
            &["--trd", "-H", "-Q", "-v", "series"],
            &[
                "--trd",
                "-H",
                "-C",
                "-s",
                "%g,",
                "-v",
                "flt,dbl,grid,nan_fill",
            ],
            &["--trd", "-H", "-C", "-s", "%e\\n", "-v", "series"],
        ] {
            same_print(args, &f);
        }
    }
}

#[test]
fn nonfinite_json_as_nco() {
    for f in printing_files() {
        for args in [&["--json"][..], &["--json", "-H"], &["--json", "-m", "-M"]] {
            same_print(args, &f);
        }
    }
}

#[test]
fn nonfinite_cdl_round_trips_through_ncgen() {
    let [classic, nc4] = printing_files();
    let cdl = round_trip(&classic, false);
    // Not vacuous: the fixture's NaNs and infinities went through the printed text.
    for word in ["NaNf", "-Infinityf", "Infinity,", "NaN ;"] {
        assert!(cdl.contains(word), "no {word} in the printed CDL:\n{cdl}");
    }
    round_trip(&nc4, true);
}

// ------------------------------------------------------------ NC_STRING attributes

#[test]
fn string_attributes_as_nco() {
    let f = path(strings_fixture());
    for args in [
        &[][..],
        &["-m"],
        &["-M"],
        &["--trd"],
        &["--trd", "-m", "-M"],
        &["--json", "-m", "-M"],
    ] {
        same_print(args, &f);
    }
}

#[test]
fn string_attributes_round_trip_through_ncgen() {
    // Without the `string` keyword ncgen would make char attributes of them.
    let cdl = round_trip(&path(strings_fixture()), true);
    assert!(
        cdl.contains("string :g_multi = ") && cdl.contains("string names:flags = "),
        "{cdl}"
    );
}

// ------------------------------------------------------------ char arrays

#[test]
fn json_char_arrays_as_nco() {
    for f in printing_files() {
        for v in ["names", "cube", "word", "letter"] {
            same_print(&["--json", "-H", "-C", "-v", v], &f);
        }
        same_print(&["--json", "-H", "-C", "-v", "names", "-d", "y,1"], &f);
    }
    same_print(
        &["--json", "-H", "-C", "-v", "names,label"],
        &path(strings_fixture()),
    );
}

#[test]
fn traditional_char_rows_and_strings_as_nco() {
    for f in printing_files() {
        same_print(&["--trd", "-H", "-C", "-v", "names,cube,word,letter"], &f);
    }
    same_print(
        &["--trd", "-H", "-C", "-v", "names,label"],
        &path(strings_fixture()),
    );
}

#[test]
fn traditional_string_values_with_a_format_as_nco() {
    // `-s '%s'` formats each element of a string variable (we printed `0` for each).
    same_print(
        &["--trd", "-H", "-C", "-s", "[%s]\\n", "-v", "label"],
        &path(strings_fixture()),
    );
}

// ------------------------------------------------------------ names, quotes, bounds

/// Names with the characters CDL reserves, a leading digit, single quotes in text,
/// a bounds variable without units, an empty char scalar, attributes of many digits.
const ODD: &str = r#"netcdf odd {
dimensions: x = 2 ; nv = 2 ;
variables:
  float x(x) ; x:units = "m" ; x:bounds = "x_bnds" ;
  float x_bnds(x, nv) ;
  int v ; v:char\ att\ with\ spaces = "it's" ; v:\1ab = 1 ; v:comma\, = 2 ;
    v:dbl = 298.27940504282 ; v:flt = -0.001205518f ; v:sq = "a'b" ;
  char nul ;
  char q(x) ;
data:
  x = 1, 2 ; x_bnds = 0.5, 1.5, 1.5, 2.5 ; v = 7 ; nul = "" ; q = "'" ;
}"#;

#[test]
fn reserved_characters_quotes_bounds_and_precision_as_nco() {
    let s = Scratch::new();
    let f = crate::common::cdl(&s, "odd", ODD);
    for args in [
        &[][..],
        &["--trd"],
        &["--json"],
        &["--trd", "-H", "-C", "-v", "x_bnds,nul"],
    ] {
        same_print(args, &f);
    }
    let cdl = round_trip(&f, false);
    // Not vacuous: the escapes went through the printed text.
    for word in [
        "v:char\\ att\\ with\\ spaces = \"it\\'s\" ;",
        "v:\\1ab = 1 ;",
        "v:comma\\, = 2 ;",
    ] {
        assert!(cdl.contains(word), "no {word} in the printed CDL:\n{cdl}");
    }
    let trd = nco("ncks")
        .args(["--trd", "-m", "-v", "v", &f])
        .succeeds()
        .stdout;
    assert!(trd.contains("value = 298.279405043"), "{trd}");
    let bounds = nco("ncks")
        .args(["--trd", "-u", "-H", "-C", "-v", "x_bnds", &f])
        .succeeds();
    assert!(
        bounds.stdout.contains("x_bnds[0]=0.5 m"),
        "{}",
        bounds.stdout
    );
}
