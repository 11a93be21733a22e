//! Differential tests: the system NCO (`/usr/bin/<op>`) and the binaries under test run
//! the same command on our fixture, and the results must be equal.
//!
//! Tolerance: ncks copies values without arithmetic, so every comparison here is
//! **exact** (printed text byte for byte; files by `nco_tests::compare` without a
//! tolerance). Operators that compute state their own tolerance next to their tests.
//!
//! NCO is always the system's (`nco_tests::reference`, /usr/bin); a test fails when it
//! is not installed.

use nco_tests::{compare, fx, nco, reference, Scratch};

/// Run `ncks ARGS fixture` with both implementations and require identical stdout.
#[track_caller]
fn same_print(args: &[&str]) {
    let theirs = reference("ncks").args(args).arg(fx()).succeeds();
    let ours = nco("ncks").args(args).arg(fx()).succeeds();
    assert_eq!(
        ours.stdout, theirs.stdout,
        "ncks {args:?}: stdout differs from NCO's"
    );
}

/// Run `ncks ARGS fixture out` with both implementations, then require the two
/// outputs to be equal (exact) and to print the same `ncks --trd -H` text.
#[track_caller]
fn same_output(args: &[&str]) {
    let s = Scratch::new();
    let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
    reference("ncks").args(args).arg(fx()).arg(&a).succeeds();
    nco("ncks").args(args).arg(fx()).arg(&b).succeeds();
    compare(&a, &b).equal();
    let dump = |f: &str| reference("ncks").args(["--trd", "-H", f]).succeeds().stdout;
    assert_eq!(dump(&b), dump(&a), "ncks {args:?}: printed data differ");
}

// ------------------------------------------------------------------ printing

/// A file whose variables are larger than the blocks printing reads at a time (a few
/// MiB): `v(time, x)` floats (1200 x 1000), `w(n)` doubles (600 000), both with
/// values that vary, and `c(m, len)` chars (600 000 x 8, all fill), built with NCO.
fn large_print_input(s: &Scratch) -> String {
    let cdl = s.path("large.cdl");
    std::fs::write(
        &cdl,
        "netcdf large { dimensions: time = 1200 ; x = 1000 ; n = 600000 ; m = 600000 ; \
         len = 8 ; variables: float v(time, x) ; double w(n) ; char c(m, len) ; }",
    )
    .expect("write CDL");
    let empty = s.arg("empty.nc");
    nco_tests::tool("ncgen")
        .args(["-o", &empty])
        .arg(&cdl)
        .succeeds();
    let nc = s.arg("large.nc");
    reference("ncap2")
        .args([
            "-O",
            "-s",
            "v=float(array(0.5,0.37,v)*3.3);w=array(-1.0,1.0/3,w)",
        ])
        .args([&empty, &nc])
        .succeeds();
    nc
}

#[test]
fn diff_print_variables_larger_than_a_print_block() {
    // Printing reads a variable in blocks along its first dimension; the text across
    // block boundaries must be NCO's, byte for byte, in each style (CDL, JSON, traditional).
    let s = Scratch::new();
    let nc = large_print_input(&s);
    for args in [
        &["-C", "-v", "v,w,c"][..],
        &["--json", "-C", "-v", "v,w,c"][..],
        &[
            "--json",
            "-C",
            "-v",
            "v",
            "-d",
            "time,590,610",
            "-d",
            "x,0,,7",
        ][..],
        &["-H", "-C", "-v", "w"][..],
        &["--trd", "-H", "-C", "-v", "w"][..],
        &[
            "--trd", "-H", "-C", "-s", "%.3f,", "-v", "w", "-d", "n,1,,3",
        ][..],
        &[
            "--trd",
            "-H",
            "-C",
            "-v",
            "v",
            "-d",
            "time,590,610",
            "-d",
            "x,0,,7",
        ][..],
    ] {
        let theirs = reference("ncks").args(args).arg(&nc).succeeds();
        let ours = nco("ncks").args(args).arg(&nc).succeeds();
        assert!(
            ours.stdout == theirs.stdout,
            "ncks {args:?}: stdout differs from NCO's"
        );
    }
}

#[test]
fn diff_print_traditional_3d_slab() {
    same_print(&[
        "--trd", "-H", "-C", "-v", "fld3", "-d", "lat,1", "-d", "lon,1,,2",
    ]);
}

#[test]
fn diff_print_traditional_record_stride() {
    same_print(&["--trd", "-H", "-v", "fld_rec", "-d", "time,2,8,3"]);
}

#[test]
fn diff_print_traditional_metadata() {
    same_print(&["--trd", "-m", "-C", "-v", "PS,fld_fill,fld_pck,name"]);
}

#[test]
fn diff_print_cdl_whole_variables() {
    same_print(&["-C", "-v", "fld_fill,fld_nofill,fld_pck,fld1_sht,fld2,name"]);
}

#[test]
fn diff_print_cdl_whole_file() {
    same_print(&[]);
}

#[test]
fn diff_print_global_metadata() {
    same_print(&["-M"]);
}

#[test]
fn diff_print_cdl_data_only() {
    same_print(&["-H", "-C", "-v", "fld3", "-d", "lev,500.,1000."]);
}

#[test]
fn diff_print_json() {
    // Fill values and dimension order are known bugs (tests in ncks.rs).
    same_print(&["--jsn", "-C", "-v", "fld2,fld1_sht,sc_dbl"]);
}

#[test]
fn diff_print_string_format() {
    same_print(&[
        "-H",
        "-C",
        "--trd",
        "-s",
        "%.3f;",
        "-v",
        "fld2",
        "-d",
        "lon,90.,180.",
    ]);
}

/// `-s` without `--trd` prints in the traditional style (issue 16 item 12): the
/// everyday `x=$(ncks -H -C -s '%f' -v v f.nc)` gives the bare value, byte for byte
/// as NCO 5.1.4 (`1.500000`, a newline, the blank line after the variable).
#[test]
fn diff_print_string_format_without_trd() {
    same_print(&["-H", "-C", "-s", "%f", "-v", "sc_dbl"]);
    same_print(&["-H", "-C", "-s", "%f\\n", "-v", "fld2"]);
    same_print(&["-H", "-s", "%g\\t", "-v", "fld_rec3", "-d", "time,0,1"]);
    // Without -H the header lines come first, as with --trd.
    same_print(&["-C", "-s", "%.1f,", "-v", "fld_rec3", "-d", "time,0,1"]);
    same_print(&["-m", "-C", "-s", "%g", "-v", "fld2"]);
}

/// `-s` escapes as NCO 5.1.4 translates them: `\a \b \f \n \r \t \v \\ \? \' \"`;
/// any other (`\x`, `\0`, `\e`) is kept as it is (with a warning on stderr).
#[test]
fn diff_print_string_format_escapes() {
    same_print(&["-H", "-C", "-s", r#"%g\a\b\f\r\t\v\\\?\'\"|"#, "-v", "fld2"]);
    same_print(&["-H", "-C", "-s", r"[%5.2f]\x\0\e\n", "-v", "fld2"]);
    same_print(&["-H", "-C", "-s", r"%f%%\\n\", "-v", "sc_dbl"]);
}

#[test]
fn diff_print_no_blank_and_units() {
    same_print(&[
        "--trd",
        "-H",
        "-u",
        "--no_blank",
        "-C",
        "-v",
        "fld_fill,orog",
    ]);
}

#[test]
fn diff_print_wrapped_longitude() {
    same_print(&["--trd", "-H", "-C", "-v", "orog", "-d", "lon,270.,90."]);
}

#[test]
fn diff_print_calendar_hyperslab() {
    same_print(&[
        "--trd",
        "-H",
        "-v",
        "time_udunits",
        "-d",
        "time_udunits,1999-12-08 03:00:0.0,1999-12-09 03:00:0.0",
    ]);
}

// ------------------------------------------------------------------ extraction

#[test]
fn diff_extract_whole_file() {
    same_output(&["-O"]);
}

#[test]
fn diff_extract_multislab_without_coordinates() {
    same_output(&[
        "-O", "-C", "-v", "fld3", "-d", "lev,0,0", "-d", "lev,2,2", "-d", "lon,1,,2",
    ]);
}

#[test]
fn diff_extract_cell_measures_and_aux_coordinates() {
    same_output(&["-O", "-v", "orog,stn_val"]);
}

#[test]
fn diff_extract_record_hyperslab() {
    same_output(&["-O", "-v", "fld_rec3,fld_rec", "-d", "time,3,7"]);
}

#[test]
fn diff_extract_fix_rec_dmn() {
    same_output(&["-O", "--fix_rec_dmn", "time", "-v", "fld_rec3"]);
}

#[test]
fn diff_extract_exclude() {
    same_output(&["-O", "-x", "-v", "fld3,fld2"]);
    // Excluding coordinates and CF-associated variables needs -C.
    same_output(&["-O", "-C", "-x", "-v", "fld3,PS,lev"]);
}

#[test]
fn diff_extract_netcdf4_deflate() {
    same_output(&[
        "-O",
        "-4",
        "-L",
        "1",
        "-C",
        "-v",
        "fld3,fld_fill,fld_pck,name",
    ]);
}

#[test]
fn diff_extract_netcdf4_classic() {
    same_output(&["-O", "-7", "-C", "-v", "fld2,fld1_int,fld_rec"]);
}

#[test]
fn diff_extract_cdf5_and_64bit_offset() {
    same_output(&["-O", "-5", "-C", "-v", "fld1_sht,fld2"]);
    same_output(&["-O", "-6", "-C", "-v", "fld1_sht,fld2"]);
}

// ------------------------------------------------------------------ arithmetic operators
//
// Tolerance: operators that compute (ncwa, ncra, nces, ncbo, ncpdq packing) are
// compared within a relative tolerance of 1e-6 (values and numeric attributes);
// copies (ncrcat, ncecat, ncpdq permutations) exactly.

/// Relative tolerance of arithmetic results.
const ARITH: f64 = 1e-6;
/// Exact comparison (copies).
const EXACT: f64 = 0.0;

/// Run `op -O ARGS INPUTS out` with NCO and with ours, then compare the two outputs
/// at relative tolerance `rtol` (attributes too unless `no_att`).
#[track_caller]
fn same_op(op: &str, args: &[&str], inputs: &[&str], rtol: f64, no_att: bool) {
    let s = Scratch::new();
    let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
    reference(op)
        .arg("-O")
        .args(args)
        .args(inputs)
        .arg(&a)
        .succeeds();
    nco(op).arg("-O").args(args).args(inputs).arg(&b).succeeds();
    let c = compare(&a, &b).rtol(rtol);
    if no_att {
        c.without_attributes().equal();
    } else {
        c.equal();
    }
}

/// The variables section of `ncdump -h FILE` without `cell_methods` lines, sorted (the
/// variable order of the two implementations may differ).
fn variables_without_cell_methods(file: &str) -> Vec<String> {
    let mut v: Vec<String> = nco_tests::ncdump(&["-h"], file)
        .lines()
        .skip_while(|l| !l.starts_with("variables:"))
        .take_while(|l| !l.starts_with("// global attributes:"))
        .filter(|l| !l.contains(":cell_methods"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn diff_ncwa_weighted_average_over_lat_lon() {
    let f = fx();
    same_op(
        "ncwa",
        &["-a", "lat,lon", "-w", "gw", "-v", "fld3,orog"],
        &[&f],
        ARITH,
        false,
    );
    same_op(
        "ncwa",
        &["-a", "lat,lon", "-w", "areacella", "-y", "ttl"],
        &[&f],
        ARITH,
        false,
    );
}

#[test]
fn diff_ncwa_statistics_with_fills_and_packing() {
    let f = fx();
    for op in ["avg", "rms", "max", "min", "ttl"] {
        same_op(
            "ncwa",
            &[
                "-a",
                "lon",
                "-y",
                op,
                "-v",
                "fld3,fld_fill,fld_pck,fld1_int",
            ],
            &[&f],
            ARITH,
            false,
        );
    }
    same_op(
        "ncwa",
        &[
            "-a",
            "time",
            "-y",
            "max",
            "-v",
            "fld_rec3,rec_fill,rec_pck,rec_int_fill",
        ],
        &[&f],
        ARITH,
        false,
    );
}

#[test]
fn diff_ncwa_retain_degenerate_and_whole_file() {
    let f = fx();
    same_op(
        "ncwa",
        &["-b", "-a", "lon", "-v", "orog,fld3"],
        &[&f],
        ARITH,
        false,
    );
    // name (NC_CHAR: NCO averages characters) and stn_val (NCO mangles its coordinates
    // attribute to "_lat stn_lon") are left out.
    same_op("ncwa", &["-x", "-v", "name,stn_val"], &[&f], ARITH, false);
}

#[test]
fn diff_ncwa_mask_values() {
    // Values only: NCO also adds _FillValue attributes to masked variables (known bug,
    // ncwa.rs: mask_adds_fill_value_attributes).
    let f = fx();
    same_op(
        "ncwa",
        &[
            "-N", "-a", "lat", "-w", "gw", "-m", "orog", "-M", "20", "-T", "gt", "-v", "fld2",
        ],
        &[&f],
        ARITH,
        true,
    );
}

#[test]
fn diff_ncra_whole_files_weights_and_subcycles() {
    let f = fx();
    same_op("ncra", &[], &[&f, &f], ARITH, false);
    same_op("ncra", &["-y", "ttl"], &[&f, &f], ARITH, false);
    same_op(
        "ncra",
        &["-w", "1,2", "-v", "fld_rec3,rec_fill,rec_pck,time"],
        &[&f, &f],
        ARITH,
        false,
    );
    same_op("ncra", &["--mro", "-d", "time,0,,3,2"], &[&f], ARITH, false);
}

#[test]
fn diff_ncrcat_whole_files_and_stride() {
    // Known, intended difference: NCO 5.1.4 writes cell_methods = "time: mean" on
    // concatenated record variables; ours does not. Attributes are compared below
    // without that one.
    let f = fx();
    for args in [&[][..], &["-d", "time,1,,3", "-v", "PS,time,rec_pck"][..]] {
        same_op("ncrcat", args, &[&f, &f], EXACT, true);
        let s = Scratch::new();
        let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
        reference("ncrcat")
            .arg("-O")
            .args(args)
            .args([&f, &f, &a])
            .succeeds();
        nco("ncrcat")
            .arg("-O")
            .args(args)
            .args([&f, &f, &b])
            .succeeds();
        assert_eq!(
            variables_without_cell_methods(&b),
            variables_without_cell_methods(&a),
            "ncrcat {args:?}: variable metadata"
        );
    }
}

#[test]
fn diff_nces_and_ncea() {
    let f = fx();
    same_op("nces", &[], &[&f, &f, &f], ARITH, false);
    same_op("nces", &["-y", "max"], &[&f, &f], ARITH, false);
    same_op(
        "ncea",
        &["-y", "rms", "-v", "fld3,fld_pck,rec_fill"],
        &[&f, &f],
        ARITH,
        false,
    );
}

#[test]
fn diff_ncecat() {
    let f = fx();
    same_op(
        "ncecat",
        &["-u", "ens", "-v", "fld3,sc_dbl"],
        &[&f, &f],
        EXACT,
        false,
    );
    // stn_lat/stn_lon (auxiliary coordinates) are a known bug (nces.rs:
    // ncecat_does_not_stack_auxiliary_coordinates).
    same_op(
        "ncecat",
        &["-x", "-v", "stn_val,stn_lat,stn_lon"],
        &[&f, &f],
        EXACT,
        false,
    );
}

#[test]
fn diff_ncbo() {
    let f = fx();
    for op in ["add", "sbt", "mlt", "dvd"] {
        same_op(
            "ncbo",
            &[
                "-C",
                "-y",
                op,
                "-v",
                "fld3,fld2,PS,fld_rec3,fld_fill,rec_pck,orog",
            ],
            &[&f, &f],
            ARITH,
            false,
        );
    }
}

#[test]
fn diff_ncpdq_permutations() {
    let f = fx();
    same_op(
        "ncpdq",
        &["-a", "lat,time", "-v", "PS"],
        &[&f],
        EXACT,
        false,
    );
    same_op("ncpdq", &["-a", "-lon,lat"], &[&f], EXACT, false);
    same_op(
        "ncpdq",
        &["-a", "lev,-lat", "-v", "fld3"],
        &[&f],
        EXACT,
        false,
    );
}

#[test]
fn diff_ncpdq_packing() {
    let f = fx();
    same_op("ncpdq", &["-P", "upk"], &[&f], ARITH, false);
    // Variables with a _FillValue pack differently on purpose (ncpdq.rs:
    // packed_fill_is_the_packed_types_default); which associated variables are packed
    // is a known bug (ncpdq.rs: all_new_packs_the_variables_nco_packs).
    same_op(
        "ncpdq",
        &[
            "-P",
            "all_new",
            "-C",
            "-v",
            "fld3,fld2,PS,fld_rec3,fld_rec,fld1_int,fld1_sht,fld_pck,sc_dbl,time_udunits",
        ],
        &[&f],
        ARITH,
        false,
    );
    same_op(
        "ncpdq",
        &["-P", "all_new", "-M", "flt_byt", "-C", "-v", "fld3,fld2,PS"],
        &[&f],
        ARITH,
        false,
    );
}
