//! Inputs at the edges of the data model (README "Faults and bad input"): NaN and
//! infinite coordinates and weights, a record dimension with no records, and so
//! variables with no elements.

use nco_tests::{is_nco, nco, Run, Scratch};

use crate::common::cdl;

const EDGE: &str = "netcdf edge {
dimensions:
  lon = 4 ;
  time = UNLIMITED ;
variables:
  float lon(lon) ;
  float w(lon) ;
  float winf(lon) ;
  float x(lon) ;
  double time(time) ;
  float r(time, lon) ;
data:
  lon = NaN, 10, NaN, 30 ;
  w = 1, NaN, 1, 1 ;
  winf = 1, 1, Infinity, 1 ;
  x = 1, 2, 3, 4 ;
}
";

/// `ncks -C -H --trd -v VAR [extra] FILE`, stdout.
fn print(file: &str, var: &str, extra: &[&str]) -> String {
    nco("ncks")
        .args(["-C", "-H", "--trd", "-v", var])
        .args(extra)
        .arg(file)
        .succeeds()
        .stdout
}

#[test]
fn nan_coordinates_are_never_picked_as_nearest_and_never_in_a_range() {
    let s = Scratch::new();
    let f = cdl(&s, "edge", EDGE);
    if is_nco() {
        // NCO picks index 0 (a NaN) for any lone value, and keeps NaN points inside a
        // range: a documented difference.
        assert!(print(&f, "x", &["-d", "lon,1."]).contains("x[0]=1"));
        return;
    }
    assert!(print(&f, "x", &["-d", "lon,1."]).contains("x[1]=2"));
    assert!(print(&f, "x", &["-d", "lon,29."]).contains("x[3]=4"));
    let range = print(&f, "x", &["-d", "lon,0.,100."]);
    assert!(
        range.contains("x[1]=2") && range.contains("x[3]=4"),
        "{range}"
    );
    assert!(
        !range.contains("x[2]"),
        "a NaN coordinate was inside the range: {range}"
    );
    nco("ncks")
        .args(["-H", "-v", "x", "-d", "lon,nan", &f])
        .run()
        .clean_failure("lon,nan");
}

#[test]
fn nan_and_infinite_weights_give_nan_as_in_nco() {
    let s = Scratch::new();
    let f = cdl(&s, "edge", EDGE);
    for w in ["w", "winf"] {
        let out = s.arg(&format!("{w}.nc"));
        nco("ncwa")
            .args(["-O", "-a", "lon", "-w", w, "-v", "x", &f, &out])
            .succeeds();
        let v = print(&out, "x", &[]);
        // printf's sign of a NaN is not meaningful (NCO prints "nan" here too).
        assert!(v.contains("x = nan") || v.contains("x = -nan"), "{w}: {v}");
    }
    // Without weights the NaN coordinate does not matter: the mean of x is 2.5.
    let out = s.arg("plain.nc");
    nco("ncwa")
        .args(["-O", "-a", "lon", "-v", "x", &f, &out])
        .succeeds();
    assert!(print(&out, "x", &[]).contains("x = 2.5"));
}

/// Exit 0, or 1 with a one-line error; never a signal.
#[track_caller]
fn no_crash(r: Run) -> Run {
    assert!(matches!(r.code, Some(0 | 1)), "crashed or odd exit: {r:?}");
    if r.code == Some(1) && !is_nco() {
        return r.stderr_one_line();
    }
    r
}

#[test]
fn zero_records_and_variables_with_no_elements() {
    let s = Scratch::new();
    let f = cdl(&s, "edge", EDGE);
    let out = s.arg("out.nc");
    // Copies, concatenations and element-wise operations give outputs with no records
    // (NCO agrees).
    for args in [
        vec!["ncks", "-O", &f, &out],
        vec!["ncbo", "-O", "-v", "r", &f, &f, &out],
        vec!["nces", "-O", "-v", "r", &f, &f, &out],
    ] {
        nco(args[0]).args(&args[1..]).succeeds();
        let h = nco_tests::ncdump(&["-h"], &out);
        assert!(
            h.contains("time = UNLIMITED ; // (0 currently)"),
            "{args:?}: {h}"
        );
        assert!(print(&out, "r", &[]).trim().is_empty(), "{args:?}");
    }
    // ncecat makes the empty record dimension fixed with length 0, which netCDF3
    // cannot hold (see ncecat_of_empty_record_dimension): refused in one line.
    let r = nco("ncecat").args(["-O", "-v", "r", &f, &f, &out]).run();
    if is_nco() {
        assert_eq!(r.code, Some(0), "{r:?}");
    } else {
        r.clean_failure("length 0");
    }
    if !is_nco() {
        // NCO crashes (SIGSEGV) on these; ours finish or say why in one line.
        let r = no_crash(nco("ncrcat").args(["-O", &f, &f, &out]).run());
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(nco_tests::ncdump(&["-h"], &out).contains("(0 currently)"));
        no_crash(nco("ncra").args(["-O", &f, &out]).run());
    }
    // Reductions and rearrangements of a variable with no elements: a result or a
    // one-line error, never a crash.
    for args in [
        vec!["ncwa", "-O", "-a", "time", "-v", "r", &f, &out],
        vec!["ncwa", "-O", "-v", "r", &f, &out],
        vec!["ncpdq", "-O", "-a", "lon,time", "-v", "r", &f, &out],
        vec!["ncap2", "-O", "-s", "s=r*2", &f, &out],
        vec!["ncap2", "-O", "-s", "t=r.total()", &f, &out],
        vec!["ncks", "-O", "-d", "time,0", &f, &out],
    ] {
        no_crash(nco(args[0]).args(&args[1..]).run());
    }
}

/// ncecat of files whose record dimension has no records: that dimension becomes
/// fixed with length 0, which a netCDF3 header cannot hold (0 marks the record
/// dimension; ours wrote a file libnetcdf refuses). Ours refuses it, naming the
/// dimension; NCO 5.1.4 writes length 1 with made-up values (README). netCDF-4 keeps it.
#[test]
fn ncecat_of_empty_record_dimension() {
    let s = Scratch::new();
    let z = cdl(
        &s,
        "z",
        "netcdf z { dimensions: time = UNLIMITED ; x = 2 ; \
         variables: float v(time, x) ; double time(time) ; float w(x) ; data: w = 1, 2 ; }",
    );
    let out = s.arg("zo.nc");
    if is_nco() {
        nco("ncecat").args(["-O", &z, &z, &out]).succeeds();
        return;
    }
    nco("ncecat")
        .args(["-O", &z, &z, &out])
        .run()
        .clean_failure("dimension time");
    assert!(!std::path::Path::new(&out).exists());
    nco("ncecat").args(["-O", "-4", &z, &z, &out]).succeeds();
    let d = nco_tests::Dump::of(&out);
    assert_eq!(d.var("w").numbers(), [1.0, 2.0, 1.0, 2.0]);
}
