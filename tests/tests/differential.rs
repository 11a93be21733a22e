//! Differential tests: the system NCO (`/usr/bin/<op>`) and the binaries under test run
//! the same command on our fixture, and the results must be equal.
//!
//! Tolerance: ncks copies values without arithmetic, so every comparison here is
//! **exact** (printed text byte for byte; nccmp with `--rtol 0 --atol 0`). Operators
//! that compute will state their own tolerance next to their tests.
//!
//! File comparisons use ../shared/tools/nccmp (beside the repository; it is never
//! copied into it). When ../shared is absent those tests print why and return.

use std::path::{Path, PathBuf};

use nco_tests::{fx, nco, tool, Cmd, Scratch};

/// The reference NCO operator (always the system one, whatever NCO_RS_BIN_DIR says).
fn reference(op: &str) -> Cmd {
    let p = Path::new("/usr/bin").join(op);
    assert!(
        p.is_file(),
        "NCO's {op} is not installed (apt-get install nco)"
    );
    tool(&p.to_string_lossy())
}

fn nccmp() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tools/nccmp");
    if p.is_file() {
        Some(p)
    } else {
        eprintln!(
            "skipped: {} is absent (../shared is not beside the repository)",
            p.display()
        );
        None
    }
}

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
/// outputs to be equal by nccmp (exact) and to print the same `ncks --trd -H` text.
#[track_caller]
fn same_output(args: &[&str]) {
    let Some(cmp) = nccmp() else { return };
    let s = Scratch::new();
    let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
    reference("ncks").args(args).arg(fx()).arg(&a).succeeds();
    nco("ncks").args(args).arg(fx()).arg(&b).succeeds();
    tool(&cmp.to_string_lossy())
        .args([&a, &b, "--rtol", "0", "--atol", "0"])
        .succeeds();
    let dump = |f: &str| reference("ncks").args(["--trd", "-H", f]).succeeds().stdout;
    assert_eq!(dump(&b), dump(&a), "ncks {args:?}: printed data differ");
}

// ------------------------------------------------------------------ printing

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
