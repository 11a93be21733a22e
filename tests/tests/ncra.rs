//! ncra and ncrcat project tests on our own fixture (tests/data/fixture.cdl) and on
//! small files built with ncgen from CDL text in the scratch folder.
//!
//! Tests named `ncra_rNN_*` / `ncrcat_rNN_*` cover the behaviour of NCO's reference
//! case with the same id (the cases .ci/run runs). The fixture's record variables: time
//! = 1..10, fld_rec = 10*time, rec_fill = 1,_,3,_..9,_ (_FillValue -999), rec_pck packs
//! 1..9 then missing. Expected values are worked out by hand and are the values NCO
//! 5.1.4 prints (`NCO_RS_BIN_DIR=/usr/bin cargo test --release -p nco-tests`).

use crate::common::{bad_input, cdl, header_lines, raw};
use nco_tests::{bin, fx, is_nco, nco, reference, tool, value, Scratch};
use std::path::Path;

/// `op ARGS out` in a fresh scratch folder (inputs are in ARGS); returns (scratch, out).
fn run(op: &str, args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco(op).args(args).arg(&out).succeeds();
    (s, out)
}

/// A small record file: `time` (with `units`), `x(time)` and `y(time, lon)` (with a
/// _FillValue of -999), lon = 2.
fn rec_file(s: &Scratch, name: &str, units: &str, time: &str, x: &str, y: &str) -> String {
    cdl(
        s,
        name,
        &format!(
            "netcdf {name} {{
dimensions: time = UNLIMITED ; lon = 2 ;
variables:
  double time(time) ; time:units = \"{units}\" ;
  float x(time) ;
  float y(time, lon) ; y:_FillValue = -999.f ;
  float lon(lon) ;
data:
  time = {time} ; x = {x} ; y = {y} ; lon = 0, 90 ;
}}"
        ),
    )
}

const DAYS: &str = "days since 2000-01-01";

/// Fixture-like time series shifted by `shift` days (`time = 1+shift ..`), `count`
/// records from index `first`.
fn shifted_times(s: &Scratch, name: &str, shift: usize, first: usize, count: usize) -> String {
    let t: Vec<String> = (first..first + count)
        .map(|i| (i + 1 + shift).to_string())
        .collect();
    let t = t.join(", ");
    cdl(
        s,
        name,
        &format!(
            "netcdf {name} {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
             time:units = \"{DAYS}\" ; data: time = {t} ; }}"
        ),
    )
}

// ---------------------------------------------------------------- ncra reference cases

#[test]
fn ncra_r01_integer_mean_across_two_files() {
    let (_s, out) = run("ncra", &["-h", "-O", "-v", "fld_rec", &fx(), &fx()]);
    assert_eq!(value(&out, "fld_rec", "%d", &[]), "55");
}

#[test]
fn ncra_r02_record_mean_skips_fill_value() {
    let (_s, out) = run("ncra", &["-h", "-O", "-v", "rec_fill", &fx()]);
    assert_eq!(value(&out, "rec_fill", "%f", &[]), "5.000000");
}

#[test]
fn ncra_r04_packed_record_mean_with_missing_values() {
    // rec_pck unpacks to 1..9 and one missing record: mean 5, written unpacked.
    let (_s, out) = run("ncra", &["-h", "-O", "-v", "rec_pck", &fx()]);
    assert_eq!(value(&out, "rec_pck", "%f", &[]), "5.000000");
    assert_eq!(header_lines(&out, "rec_pck("), "float rec_pck(time) ;");
    assert_eq!(
        header_lines(&out, "rec_pck:_FillValue"),
        "rec_pck:_FillValue = -1.f ;"
    );
    assert_eq!(header_lines(&out, "scale_factor"), "");
    assert_eq!(header_lines(&out, "add_offset"), "");
}

#[test]
fn ncra_r09_total_across_two_files() {
    // 2 * (1+3+5+7+9) = 50.
    let (_s, out) = run(
        "ncra",
        &["-h", "-O", "-y", "ttl", "-v", "rec_fill", &fx(), &fx()],
    );
    assert_eq!(value(&out, "rec_fill", "%f", &[]), "50.000000");
}

#[test]
fn ncra_r11_record_coordinate_is_averaged_even_with_ttl() {
    let (_s, out) = run(
        "ncra",
        &["-h", "-O", "-y", "ttl", "-v", "time,fld_rec", &fx(), &fx()],
    );
    assert_eq!(value(&out, "time", "%f", &[]), "5.500000");
    assert_eq!(value(&out, "fld_rec", "%d", &[]), "1100");
}

#[test]
fn ncra_r12_rec_apn_appends_the_mean() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-h", "-O", "-v", "fld_rec", &fx(), &out])
        .succeeds();
    nco("ncra")
        .args([
            "-h",
            "--no_tmp_fl",
            "--rec_apn",
            "-v",
            "fld_rec",
            &fx(),
            &out,
        ])
        .succeeds();
    assert_eq!(value(&out, "fld_rec", "%d", &["-d", "time,10"]), "55");
    assert_eq!(value(&out, "time", "%g ", &[]), "1 2 3 4 5 6 7 8 9 10 5.5");
}

#[test]
fn ncra_r14_per_file_weights() {
    // Files of equal record counts: (1*(1+2+3) + 3*(10+20+30)) / (3*1 + 3*3) = 15.5.
    // y: column 0 of the first file is 1,3,5 (weight 1), of the second _,_,_;
    // column 1: 2 (weight 1) and 20,40,60 (weight 3): 362/10 = 36.2.
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let b = rec_file(
        &s,
        "b",
        DAYS,
        "4, 5, 6",
        "10, 20, 30",
        "_, 20, _, 40, _, 60",
    );
    let out = s.arg("out.nc");
    nco("ncra")
        .args(["-h", "-O", "-w", "1,3", &a, &b, &out])
        .succeeds();
    assert_eq!(value(&out, "x", "%g", &[]), "15.5");
    assert_eq!(value(&out, "y", "%g, ", &[]), "3, 36.2,");
}

#[test]
fn ncra_per_file_weights_unequal_record_counts() {
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let b = rec_file(&s, "b", DAYS, "4, 5", "10, 20", "_, 20, _, 40");
    let out = s.arg("out.nc");
    nco("ncra")
        .args(["-O", "-w", "1,3", "-v", "x,y", &a, &b, &out])
        .succeeds();
    assert_eq!(value(&out, "x", "%g", &[]), "9.6");
    // Variables with missing values are normalised by the sum of valid weights.
    assert_eq!(value(&out, "y", "%g ", &[]), "3 26");
}

#[test]
fn ncra_r16_mro_sub_cycle_running_average() {
    let (_s, out) = run(
        "ncra",
        &[
            "-h",
            "-O",
            "-C",
            "--mro",
            "-d",
            "time,0,,2,2",
            "-v",
            "fld_rec",
            &fx(),
        ],
    );
    assert_eq!(value(&out, "fld_rec", "%d, ", &[]), "15, 35, 55, 75, 95,");
    let (_s, out) = run(
        "ncra",
        &[
            "-O",
            "-C",
            "--mro",
            "-d",
            "time,0,,2,2",
            "-v",
            "time",
            &fx(),
        ],
    );
    assert_eq!(value(&out, "time", "%g, ", &[]), "1.5, 3.5, 5.5, 7.5, 9.5,");
}

#[test]
fn ncra_n01_mean_over_strided_hyperslab() {
    let (_s, out) = run(
        "ncra",
        &["-O", "-C", "-d", "time,0,,2", "-v", "fld_rec", &fx()],
    );
    assert_eq!(value(&out, "fld_rec", "%d", &[]), "50");
}

#[test]
fn ncra_n03_threads_attribute() {
    let (_s, out) = run("ncra", &["-O", "-t", "2", "-v", "fld_rec", &fx()]);
    let dump = nco_tests::ncdump(&["-h"], &out);
    assert!(
        dump.lines()
            .any(|l| l.replace('\t', "") == ":nco_openmp_thread_number = 2 ;"),
        "{dump}"
    );
}

// ---------------------------------------------------------------- ncra behaviour

#[test]
fn ncra_stride_continues_across_file_boundary() {
    // Records 1 and 4 of a (1,2,3) + b (10,20): 2 and 20 -> 11.
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let b = rec_file(&s, "b", DAYS, "4, 5", "10, 20", "_, 20, _, 40");
    let out = s.arg("out.nc");
    nco("ncra")
        .args(["-O", "-d", "time,1,,3", "-v", "x", &a, &b, &out])
        .succeeds();
    assert_eq!(value(&out, "x", "%g", &[]), "11");
}

#[test]
fn ncra_fill_skipped_across_files_and_all_missing_stays_missing() {
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let b = rec_file(&s, "b", DAYS, "4, 5", "10, 20", "_, 20, _, 40");
    let out = s.arg("out.nc");
    nco("ncra").args(["-O", &a, &b, &out]).succeeds();
    // y column 0: 1,3,5 -> 3; column 1: 2,20,40 -> 20.6667.
    assert_eq!(value(&out, "y", "%g ", &[]), "3 20.6667");
    assert_eq!(value(&out, "x", "%g", &[]), "7.2");
    // Odd records of rec_fill are all missing.
    let (_s, out) = run("ncra", &["-O", "-d", "time,1,,2", "-v", "rec_fill", &fx()]);
    assert_eq!(raw(&out, "rec_fill", "%g"), "-999");
}

#[test]
fn ncra_generated_file_names() {
    // -n 3,2,1 from h01.nc reads h01.nc, h02.nc, h03.nc: x = 1, 2, 6 -> mean 3.
    let s = Scratch::new();
    for (i, x) in [(1, "1"), (2, "2"), (3, "6")] {
        rec_file(&s, &format!("h0{i}"), DAYS, &i.to_string(), x, "0, 0");
    }
    let out = s.arg("out.nc");
    nco("ncra")
        .args(["-O", "-n", "3,2,1", "-v", "x", &s.arg("h01.nc"), &out])
        .succeeds();
    assert_eq!(value(&out, "x", "%g", &[]), "3");
    nco("ncrcat")
        .args(["-O", "-n", "3,2,1", "-v", "x", &s.arg("h01.nc"), &out])
        .succeeds();
    assert_eq!(value(&out, "x", "%g ", &[]), "1 2 6");
}

#[test]
fn ncra_file_names_from_stdin() {
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let b = rec_file(&s, "b", DAYS, "4, 5", "10, 20", "_, 20, _, 40");
    let out = s.arg("out.nc");
    let script = format!(
        "echo '{a} {b}' | '{}' -O -v x '{out}'",
        bin("ncra").display()
    );
    tool("sh").args(["-c", &script]).succeeds();
    assert_eq!(value(&out, "x", "%g", &[]), "7.2");
    let dump = nco_tests::ncdump(&["-h"], &out);
    let gatts: Vec<String> = dump
        .lines()
        .filter(|l| l.contains("nco_input_file"))
        .map(|l| l.replace('\t', ""))
        .collect();
    assert_eq!(
        gatts,
        [
            ":nco_input_file_number = 2 ;".to_string(),
            format!(":nco_input_file_list = \"{a} {b}\" ;"),
        ]
    );
}

#[test]
fn ncra_every_statistic_over_records() {
    // x over a + b: 1, 2, 3, 10, 20.
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let b = rec_file(&s, "b", DAYS, "4, 5", "10, 20", "_, 20, _, 40");
    let out = s.arg("out.nc");
    for (op, want) in [
        ("avg", "7.2"),
        ("ttl", "36"),
        ("max", "20"),
        ("min", "1"),
        ("sqravg", "51.84"),
        ("avgsqr", "102.8"),
        ("rms", "10.139"),
        ("rmssdn", "11.3358"),
        ("sqrt", "2.68328"),
        ("mabs", "20"),
        ("mebs", "7.2"),
        ("mibs", "1"),
        ("tabs", "36"),
    ] {
        nco("ncra")
            .args(["-O", "-y", op, "-v", "x", &a, &b, &out])
            .succeeds();
        assert_eq!(value(&out, "x", "%g", &[]), want, "-y {op}");
    }
}

// ---------------------------------------------------------------- ncrcat reference cases

#[test]
fn ncrcat_r01_concatenate_with_fill_values() {
    let (_s, out) = run("ncrcat", &["-h", "-O", "-v", "rec_fill", &fx(), &fx()]);
    assert_eq!(
        value(&out, "rec_fill", "%f", &["-d", "time,12"]),
        "3.000000"
    );
    assert_eq!(raw(&out, "rec_fill", "%g ").split(' ').count(), 20);
    assert_eq!(value(&out, "rec_fill", "%g", &["-d", "time,11"]), "_");
}

#[test]
fn ncrcat_r02_coordinate_record_limits_apply_per_file() {
    let (_s, out) = run(
        "ncrcat",
        &[
            "-h",
            "-O",
            "-v",
            "fld_rec",
            &fx(),
            &fx(),
            "-d",
            "time,2.,3.",
        ],
    );
    assert_eq!(value(&out, "fld_rec", "%d ", &[]), "20 30 20 30");
}

#[test]
fn ncrcat_r03_multislab_concatenation_then_max() {
    let (s, out) = run(
        "ncrcat",
        &[
            "-h",
            "-O",
            "-v",
            "fld_rec3",
            "-d",
            "time,,2",
            "-d",
            "lat,0,0",
            "-d",
            "lon,0,0",
            "-d",
            "lon,3,3",
            &fx(),
            &fx(),
        ],
    );
    // -d time,,2 counts records across the files: the first file's 0..2 only.
    assert_eq!(value(&out, "fld_rec3", "%g ", &[]), "0 3 1 4 2 5");
    let out1 = s.arg("max.nc");
    nco("ncwa")
        .args(["-h", "-O", "-y", "max", &out, &out1])
        .succeeds();
    assert_eq!(value(&out1, "fld_rec3", "%f", &[]), "5.000000");
}

#[test]
fn ncrcat_r05_stride_continues_across_file_boundary() {
    let s = Scratch::new();
    let t2 = shifted_times(&s, "t2", 10, 0, 10);
    let out = s.arg("out.nc");
    nco("ncrcat")
        .args([
            "-O",
            "-C",
            "-v",
            "time",
            "-d",
            "time,0,,4",
            &fx(),
            &t2,
            &out,
        ])
        .succeeds();
    assert_eq!(value(&out, "time", "%2.f,", &[]), " 1, 5, 9,13,17,");
}

#[test]
fn ncrcat_r07_stride_across_files_with_different_record_counts() {
    // 1..10 + 11..15 + 26..28: records 10, 12, 14, 16 are 11, 13, 15, 27.
    let s = Scratch::new();
    let t1 = shifted_times(&s, "t1", 10, 0, 5);
    let t3 = shifted_times(&s, "t3", 20, 5, 3);
    let out = s.arg("out.nc");
    nco("ncrcat")
        .args([
            "-O",
            "-C",
            "-v",
            "time",
            "-d",
            "time,10,,2",
            &fx(),
            &t1,
            &t3,
            &out,
        ])
        .succeeds();
    assert_eq!(value(&out, "time", "%2.f,", &[]), "11,13,15,27,");
}

#[test]
fn ncrcat_r08_time_rebased_to_first_file_units() {
    // The second file counts days from 1999-12-31: its 1..10 become 0..9 in the
    // first file's units; total 55 + 45 = 100, i.e. a mean of 5 (ncwa averages the
    // coordinate even with -y ttl). Hours are rebased too.
    let s = Scratch::new();
    let t2 = cdl(
        &s,
        "t2",
        "netcdf t2 { dimensions: time = UNLIMITED ; variables: double time(time) ; \
         time:units = \"days since 1999-12-31\" ; data: time = 1,2,3,4,5,6,7,8,9,10 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncrcat")
        .args(["-O", "-C", "-v", "time", &fx(), &t2, &out])
        .succeeds();
    let ttl = s.arg("ttl.nc");
    nco("ncwa")
        .args(["-O", "-y", "ttl", "-v", "time", &out, &ttl])
        .succeeds();
    assert_eq!(value(&ttl, "time", "%g", &[]), "5");
    assert_eq!(value(&out, "time", "%g ", &["-d", "time,9,11"]), "10 0 1");
    let c = rec_file(
        &s,
        "c",
        "hours since 2000-01-01",
        "36, 48",
        "7, 8",
        "1, 1, 1, 1",
    );
    nco("ncrcat")
        .args(["-O", "-C", "-v", "time", &fx(), &c, &out])
        .succeeds();
    assert_eq!(value(&out, "time", "%g ", &["-d", "time,9,"]), "10 1.5 2");
}

#[test]
fn ncrcat_r10_rec_apn_appends_all_records() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-h", "-O", "-v", "fld_rec", &fx(), &out])
        .succeeds();
    nco("ncrcat")
        .args([
            "-h",
            "--no_tmp_fl",
            "--rec_apn",
            "-v",
            "fld_rec",
            &fx(),
            &out,
        ])
        .succeeds();
    assert_eq!(value(&out, "fld_rec", "%d", &["-d", "time,19"]), "100");
}

/// A record file for `--rec_apn`: `time` = `time`, fixed `fix(lon)` = `fix`, the
/// scalar `sc` = `sc`, and `y(time, lon)`.
fn apn_file(s: &Scratch, name: &str, time: &str, fix: &str, sc: &str) -> String {
    cdl(
        s,
        name,
        &format!(
            "netcdf {name} {{
dimensions: time = UNLIMITED ; lon = 2 ;
variables:
  double time(time) ; time:units = \"{DAYS}\" ;
  float lon(lon) ; float fix(lon) ; int sc ; float y(time, lon) ;
data:
  time = {time} ; lon = 0, 90 ; fix = {fix} ; sc = {sc} ; y = 1, 2, 3, 4 ;
}}"
        ),
    )
}

#[test]
fn rec_apn_writes_the_inputs_fixed_variables_as_nco() {
    // NCO 5.1.4: the existing output's fixed variables take the new input's values
    // (fix 5, 6 and sc 9, not the output's 1, 2 and 7), in ncrcat and ncra alike.
    for op in ["ncrcat", "ncra"] {
        let s = Scratch::new();
        let out = apn_file(&s, "out", "1, 2", "1, 2", "7");
        let b = apn_file(&s, "b", "3, 4", "5, 6", "9");
        nco(op).args(["-h", "--rec_apn", &b, &out]).succeeds();
        assert_eq!(value(&out, "fix", "%g ", &[]), "5 6", "{op}");
        assert_eq!(value(&out, "sc", "%d", &[]), "9", "{op}");
        let times = if op == "ncra" { "1 2 3.5" } else { "1 2 3 4" };
        assert_eq!(value(&out, "time", "%g ", &[]), times, "{op}");
        let y = if op == "ncra" {
            "1 2 3 4 2 3"
        } else {
            "1 2 3 4 1 2 3 4"
        };
        assert_eq!(value(&out, "y", "%g ", &[]), y, "{op}");
    }
}

#[test]
fn rec_apn_with_overwrite_is_refused_as_in_nco() {
    let s = Scratch::new();
    let out = apn_file(&s, "out", "1, 2", "1, 2", "7");
    let b = apn_file(&s, "b", "3, 4", "5, 6", "9");
    let before = std::fs::read(&out).expect("read output");
    let want = if is_nco() {
        "FORCE_OVERWRITE and FORCE_APPEND"
    } else {
        "--rec_apn"
    };
    nco("ncrcat")
        .args(["-h", "-O", "--rec_apn", &b, &out])
        .run()
        .clean_failure(want);
    nco_tests::assert_same_bytes(Path::new(&out), &before);
}

#[test]
fn rec_apn_of_a_narrower_hyperslab_is_refused() {
    // The output's y has lon = 2 values per record, the new records 1. NCO 5.1.4
    // writes them into the corner and leaves zeros beside (y = 1 2 3 4 1 0 3 0, fix
    // = 5 2): a silent wrong answer, so ours refuses, naming the variable (README).
    let s = Scratch::new();
    let out = apn_file(&s, "out", "1, 2", "1, 2", "7");
    let b = apn_file(&s, "b", "3, 4", "5, 6", "9");
    if is_nco() {
        nco("ncrcat")
            .args(["-h", "--rec_apn", "-d", "lon,0,0", &b, &out])
            .succeeds();
        assert_eq!(value(&out, "y", "%g ", &[]), "1 2 3 4 1 0 3 0");
        assert_eq!(value(&out, "fix", "%g ", &[]), "5 2");
        return;
    }
    let before = std::fs::read(&out).expect("read output");
    for vars in [&[][..], &["-C", "-v", "y"][..]] {
        nco("ncrcat")
            .args(["-h", "--rec_apn", "-d", "lon,0,0"])
            .args(vars)
            .args([&b, &out])
            .run()
            .clean_failure("differs from the inputs'");
        nco_tests::assert_same_bytes(Path::new(&out), &before);
    }
}

// ---------------------------------------------------------------- ncrcat behaviour

#[test]
fn ncrcat_packed_variables_stay_packed() {
    let (_s, out) = run("ncrcat", &["-O", "-v", "rec_pck", &fx(), &fx()]);
    assert_eq!(header_lines(&out, "rec_pck("), "short rec_pck(time) ;");
    // ncks prints the packed shorts: missing, then 0 and 2 (1 and 2 unpacked).
    assert_eq!(value(&out, "rec_pck", "%d ", &["-d", "time,9,11"]), "_ 0 2");
}

#[test]
fn ncrcat_does_not_claim_a_mean() {
    // Compatibility difference: NCO 5.1.4 writes cell_methods = "time: mean" on
    // concatenated record variables, which concatenation is not.
    if is_nco() {
        return;
    }
    let (_s, out) = run("ncrcat", &["-O", "-v", "fld_rec3", &fx(), &fx()]);
    assert_eq!(header_lines(&out, "cell_methods"), "");
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_missing_file_in_the_middle() {
    let s = Scratch::new();
    let missing = s.arg("nosuch.nc");
    for op in ["ncra", "ncrcat"] {
        bad_input(op, &[&fx(), &missing, &fx()], &missing, &missing);
    }
}

#[test]
fn bad_fixed_dimensions_disagree() {
    // Compatibility difference: NCO reads past the smaller dimension and succeeds.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "1, 2, 3", "1, 2, 3", "1, 2, 3, _, 5, _");
    let d = cdl(
        &s,
        "d",
        "netcdf d { dimensions: time = UNLIMITED ; lon = 3 ; variables: double time(time) ; \
         float x(time) ; float y(time, lon) ; float lon(lon) ; \
         data: time = 7 ; x = 1 ; y = 1, 2, 3 ; lon = 0, 1, 2 ; }",
    );
    for op in ["ncra", "ncrcat"] {
        bad_input(op, &[&a, &d], "lon", "");
    }
}

#[test]
fn bad_record_hyperslab_selects_nothing() {
    bad_input(
        "ncrcat",
        &["-d", "time,20.,30.", &fx(), &fx()],
        "time",
        "No records",
    );
    bad_input("ncra", &["-d", "time,20.,30.", &fx()], "time", "No records");
}

#[test]
fn bad_input_without_record_dimension() {
    let s = Scratch::new();
    let nr = cdl(
        &s,
        "nr",
        "netcdf nr { dimensions: lon = 2 ; variables: float x(lon) ; data: x = 1, 2 ; }",
    );
    for op in ["ncra", "ncrcat"] {
        // NCO: "no variables fit criteria for processing".
        bad_input(op, &[&nr], "record", "no variables fit");
    }
}

/// A run with nothing to compute fails as NCO 5.1.4's does ("no variables fit
/// criteria for processing", exit 1, no output): ncra and ncrcat without a numeric
/// record variable, ncwa without a numeric variable on an averaged dimension; with
/// one, both succeed. Each case runs NCO beside ours.
#[test]
fn nothing_to_process_is_an_error_as_in_nco() {
    let s = Scratch::new();
    let cases: [(&str, &[&str], bool); 8] = [
        ("ncra", &["-v", "lat"], false),
        ("ncra", &["-v", "sc_dbl,name"], false),
        ("ncrcat", &["-v", "P0"], false),
        ("ncwa", &["-a", "time", "-v", "lat,gw"], false),
        ("ncwa", &["-v", "sc_dbl,sc_int"], false),
        ("ncra", &["-v", "fld_rec"], true),
        ("ncrcat", &["-v", "time"], true),
        ("ncwa", &["-a", "time", "-v", "lat,PS"], true),
    ];
    for (k, (op, args, ok)) in cases.iter().enumerate() {
        for theirs in [true, false] {
            let out = s.arg(&format!("o{k}{theirs}.nc"));
            let cmd = if theirs { reference(op) } else { nco(op) };
            let r = cmd.arg("-O").args(*args).arg(fx()).arg(&out).run();
            if *ok {
                r.success();
            } else {
                // NCO prints its error on standard output, ours on standard error.
                let r = r.code_is(1);
                assert!(
                    format!("{}{}", r.stdout, r.stderr)
                        .contains("no variables fit criteria for processing"),
                    "{r:?}"
                );
                assert!(!Path::new(&out).exists(), "{op} {args:?} wrote {out}");
            }
        }
    }
}

/// `--mro` without sub-cycles writes one output record per selected record (NCO 5.1.4,
/// with or without `-d`); an empty stride before a subcycle is the subcycle
/// (`time,0,,,2` takes every record once) and an empty last field is refused.
#[test]
fn mro_without_subcycles_and_empty_strides_as_nco() {
    let s = Scratch::new();
    let out = s.arg("o.nc");
    let recs = |op: &str, args: &[&str]| {
        nco(op)
            .args(["-O"])
            .args(args)
            .args([&fx(), &fx(), &out])
            .succeeds();
        nco_tests::Dump::of(&out).var("fld_rec").numbers()
    };
    let all: Vec<f64> = (1..=10).map(|i| 10.0 * f64::from(i)).collect();
    let twice: Vec<f64> = all.iter().chain(&all).copied().collect();
    assert_eq!(recs("ncra", &["--mro"]), twice);
    assert_eq!(
        recs("ncra", &["--mro", "-d", "time,0,,4"]),
        [10.0, 50.0, 90.0, 30.0, 70.0]
    );
    assert_eq!(recs("ncrcat", &["-d", "time,0,,,2"]), twice);
    assert_eq!(recs("ncra", &["-d", "time,,,,2"]), [55.0]);
    assert_eq!(
        recs("ncra", &["--mro", "-d", "time,0,,,5"]),
        [30.0, 80.0, 30.0, 80.0]
    );
    for bad in ["time,0,5,", "time,0,5,2,"] {
        nco("ncra")
            .args(["-O", "-d", bad, &fx(), &fx(), &out])
            .run()
            .clean_failure(if is_nco() { "" } else { bad });
    }
}

#[test]
fn record_coordinate_bounds_are_in_the_first_files_units_across_files() {
    // NCO 5.1.4: the -d values on the record coordinate are in the first file's units;
    // the second file's "days since 2000-01-03" 0, 1, 2 are days 2, 3, 4 of the first's.
    let s = Scratch::new();
    let a = rec_file(&s, "a", DAYS, "0, 1, 2", "1, 2, 3", "1, 1, 2, 2, 3, 3");
    let b = rec_file(
        &s,
        "b",
        "days since 2000-01-03",
        "0, 1, 2",
        "4, 5, 6",
        "4, 4, 5, 5, 6, 6",
    );
    let out = s.arg("cat.nc");
    nco("ncrcat")
        .args(["-O", "-d", "time,1.5,3.5", &a, &b, &out])
        .succeeds();
    assert_eq!(raw(&out, "time", "%g,"), "2,2,3,");
    assert_eq!(raw(&out, "x", "%g,"), "3,4,5,");
    let avg = s.arg("avg.nc");
    nco("ncra")
        .args(["-O", "-d", "time,1.5,3.5", &a, &b, &avg])
        .succeeds();
    assert_eq!(value(&avg, "x", "%g", &[]), "4");
    assert_eq!(value(&avg, "time", "%.4f", &[]), "2.3333");
}

#[test]
fn ncrcat_refuses_a_groups_own_record_dimension_instead_of_misreading_it() {
    // Each file's group g1 has its own record dimension (3 records; the root's has 2)
    // and its own time units. Read along the root's, its records would be cut to 2 and
    // not rebased: refused, saying so, where NCO 5.1.4 concatenates each group's.
    let s = Scratch::new();
    let file = |name: &str, month: &str, a: [i32; 2], b: [i32; 3]| {
        crate::common::cdl_nc4(
            &s,
            name,
            &format!(
                "netcdf u {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
                 time:units = \"days since 2000-{month}-01\" ; float a(time) ; \
                 data: time = 0, 1 ; a = {}, {} ; \
                 group: g1 {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
                 time:units = \"hours since 2000-{month}-01\" ; float b(time) ; \
                 data: time = 0, 1, 2 ; b = {}, {}, {} ; }} }}",
                a[0], a[1], b[0], b[1], b[2]
            ),
        )
    };
    let u1 = file("u1", "01", [1, 11], [1, 21, 31]);
    let u2 = file("u2", "02", [2, 12], [2, 22, 32]);
    let out = s.arg("out.nc");
    let r = nco("ncrcat").args(["-O", &u1, &u2, &out]).run();
    if is_nco() {
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(value(&out, "/g1/b", "%g,", &[]), "1,21,31,2,22,32,");
    } else {
        r.clean_failure("a record dimension of its own group");
        assert!(!Path::new(&out).exists());
    }
    // The group extracted first is a file with one record dimension: concatenated and
    // rebased as NCO does.
    let (g1, g2) = (s.arg("g1.nc"), s.arg("g2.nc"));
    for (from, to) in [(&u1, &g1), (&u2, &g2)] {
        nco("ncks").args(["-O", "-g", "g1", from, to]).succeeds();
    }
    nco("ncrcat").args(["-O", &g1, &g2, &out]).succeeds();
    assert_eq!(value(&out, "/g1/b", "%g,", &[]), "1,21,31,2,22,32,");
    assert_eq!(value(&out, "/g1/time", "%g,", &[]), "0,1,2,744,745,746,");
}

/// Overlapping sub-cycles (longer than the stride) are taken only when all their
/// records lie in one file: a cycle across the boundary of two 12-record files, and
/// the short last one, are left out, by ncra (with and without --mro) and ncrcat.
/// Values from NCO 5.1.4 on the same files (break test: ours averaged both, 12 records
/// instead of 10 with --mro, 11.98 instead of 11.5 without).
#[test]
fn overlapping_subcycles_stay_within_one_file_as_nco() {
    let s = Scratch::new();
    let file = |name: &str, first: usize| {
        let t: Vec<String> = (first..first + 12).map(|i| i.to_string()).collect();
        let text = format!(
            "netcdf {name} {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
             data: time = {} ; }}",
            t.join(", ")
        );
        cdl(&s, name, &text)
    };
    let (a, b) = (file("ov0", 0), file("ov1", 12));
    let out = s.arg("o.nc");
    let run = |op: &str, args: &[&str]| {
        nco(op)
            .arg("-O")
            .args(args)
            .arg(&a)
            .arg(&b)
            .arg(&out)
            .succeeds();
        raw(&out, "time", "%g ")
    };
    assert_eq!(
        run("ncra", &["--mro", "-d", "time,0,,2,3"]),
        "1 3 5 7 9 13 15 17 19 21"
    );
    assert_eq!(run("ncra", &["-d", "time,0,,2,4"]), "11.5");
    assert_eq!(
        run("ncrcat", &["-d", "time,0,,2,3"]),
        "0 1 2 2 3 4 4 5 6 6 7 8 8 9 10 12 13 14 14 15 16 16 17 18 18 19 20 20 21 22"
    );
    // Cycles that do not overlap may cross the boundary and end short, as in NCO.
    assert_eq!(
        run("ncra", &["--mro", "-d", "time,2,,5,4"]),
        "3.5 8.5 13.5 18.5 22.5"
    );
}

/// `-Y` names ncra or ncrcat; NCO's other pseudonyms (ncge: group ensembles) are
/// refused in one line, not run as ncra (break test: `-Y ncge` gave ncra's average).
#[test]
fn other_pseudonyms_are_refused() {
    if is_nco() {
        // NCO runs them (README: anything of NCO not supported is an error).
        return;
    }
    bad_input(
        "ncra",
        &["-Y", "ncge", &fx(), &fx()],
        "pseudonym \"ncge\" is not supported",
        "",
    );
    let s = Scratch::new();
    let out = s.arg("c.nc");
    nco("ncra")
        .args(["-O", "-Y", "ncrcat"])
        .arg(fx())
        .arg(fx())
        .arg(&out)
        .succeeds();
    assert_eq!(
        header_lines(&out, "time = UNLIMITED"),
        "time = UNLIMITED ; // (20 currently)"
    );
}
