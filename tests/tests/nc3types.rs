//! netCDF-4 types written into netCDF3 outputs (issue 16, item 10): converted as NCO
//! 5.1.4's ncks converts them (NC_UBYTE as NC_SHORT; NC_USHORT, NC_UINT, NC_INT64 and
//! NC_UINT64 as NC_INT; attributes with their low bits kept; a string attribute as its
//! first string), by every operator through the one rule `nco_core::rules::formats`.
//! Each case runs NCO 5.1.4 (`/usr/bin`, `nco_tests::reference`; a test fails when it is
//! not installed) beside the binaries under test on `tests/data/nc4types.cdl`.

use nco_tests::{compare, data_dir, is_nco, nco, reference, tool, Scratch};

/// `tests/data/nc4types.cdl` built as netCDF-4 in the scratch folder.
fn nc4types(s: &Scratch) -> String {
    let out = s.arg("nc4types.nc");
    tool("ncgen")
        .args(["-k", "nc4", "-o", &out])
        .arg(data_dir().join("nc4types.cdl"))
        .succeeds();
    out
}

/// `-x -v big,s,sc`: leaves out the variables NCO cannot convert (`big`, beyond
/// NC_INT, and the strings).
fn fitting() -> [&'static str; 3] {
    ["-x", "-v", "big,s,sc"]
}

#[test]
fn netcdf3_outputs_convert_netcdf4_types_as_ncos_ncks() {
    let s = Scratch::new();
    let input = nc4types(&s);
    for fmt in ["-3", "-5", "-6", "-7"] {
        let (a, b) = (
            s.arg(&format!("nco{fmt}.nc")),
            s.arg(&format!("ours{fmt}.nc")),
        );
        reference("ncks")
            .args([fmt])
            .args(fitting())
            .args([&input, &a])
            .succeeds();
        nco("ncks")
            .args([fmt])
            .args(fitting())
            .args([&input, &b])
            .succeeds();
        compare(&a, &b).equal();
        // Not vacuous: the netCDF3 formats hold NC_UBYTE as NC_SHORT, CDF-5 holds it.
        let header = nco_tests::ncdump(&["-h"], &b);
        let want = if fmt == "-5" {
            "ubyte ub(time, x)"
        } else {
            "short ub(time, x)"
        };
        assert!(header.contains(want), "ncks {fmt}: {header}");
    }
}

#[test]
fn every_operator_converts_as_ncks_does() {
    // NCO 5.1.4's other operators fail on these types in a netCDF3 output
    // (nco_def_var, NC_EBADTYPE); ours convert as its ncks does (README): the reference
    // is NCO's operator writing netCDF-4, converted by NCO's `ncks -3`.
    let s = Scratch::new();
    let input = nc4types(&s);
    let cases: [(&str, &[&str], usize); 9] = [
        ("ncra", &[], 2),
        ("ncrcat", &[], 2),
        ("ncecat", &[], 2),
        ("nces", &[], 2),
        ("ncflint", &["-w", "0.5,0.5"], 2),
        ("ncbo", &["--op_typ=sbt"], 2),
        ("ncwa", &[], 1),
        ("ncpdq", &["-a", "x,time"], 1),
        ("ncks", &["-d", "x,1,2"], 1),
    ];
    for (op, args, inputs) in cases {
        let ins = vec![input.clone(); inputs];
        let (t4, a, b) = (s.arg("t4.nc"), s.arg("nco.nc"), s.arg("ours.nc"));
        reference(op)
            .arg("-O")
            .args(fitting())
            .args(args)
            .args(&ins)
            .arg(&t4)
            .succeeds();
        reference("ncks").args(["-O", "-3", &t4, &a]).succeeds();
        let ours = nco(op)
            .args(["-O", "-3"])
            .args(fitting())
            .args(args)
            .args(&ins)
            .arg(&b)
            .run();
        if is_nco() && op != "ncks" {
            // The difference itself: NCO's operator fails.
            assert_eq!(ours.code, Some(1), "NCO's {op} -3: {}", ours.stderr);
            continue;
        }
        assert_eq!(ours.code, Some(0), "{op} -3: {}", ours.stderr);
        // ncrcat: NCO 5.1.4's `cell_methods = "time: mean"`, which ours does not
        // claim of a concatenation (README; ncra::ncrcat_does_not_claim_a_mean).
        let d: Vec<String> = compare(&a, &b)
            .differences()
            .into_iter()
            .filter(|l| !(op == "ncrcat" && l.ends_with("@cell_methods: only in the first file")))
            .collect();
        assert!(d.is_empty(), "{op} {args:?}: {d:?}");
    }
    // ncap2 too (NCO's fails the same way); `q` is computed, the others copied.
    let (t4, a, b) = (s.arg("t4.nc"), s.arg("nco.nc"), s.arg("ours.nc"));
    let input_fit = s.arg("fit.nc");
    reference("ncks")
        .args(fitting())
        .args([&input, &input_fit])
        .succeeds();
    reference("ncap2")
        .args(["-O", "-s", "q=ub*2", &input_fit, &t4])
        .succeeds();
    reference("ncks").args(["-O", "-3", &t4, &a]).succeeds();
    let ours = nco("ncap2")
        .args(["-O", "-3", "-s", "q=ub*2", &input_fit, &b])
        .run();
    if is_nco() {
        assert_eq!(ours.code, Some(1), "NCO's ncap2 -3: {}", ours.stderr);
        return;
    }
    assert_eq!(ours.code, Some(0), "ncap2 -3: {}", ours.stderr);
    compare(&a, &b).equal();
}

#[test]
fn values_beyond_the_netcdf3_type_are_errors_as_in_nco() {
    // `big` holds 4000000000, beyond NC_INT: NCO fails with NC_ERANGE, we with one line
    // naming the variable; neither leaves an output.
    let s = Scratch::new();
    let input = nc4types(&s);
    let (a, b) = (s.path("nco.nc"), s.path("ours.nc"));
    let theirs = reference("ncks")
        .args(["-3", "-v", "big", &input])
        .arg(&a)
        .run();
    assert_eq!(theirs.code, Some(1), "NCO: {}", theirs.stderr);
    nco("ncks")
        .args(["-3", "-v", "big", &input])
        .arg(&b)
        .run()
        .clean_failure("big");
    assert!(!a.exists() && !b.exists());
}

#[test]
fn string_variables_are_refused_in_netcdf3_outputs_as_in_nco() {
    let s = Scratch::new();
    let input = nc4types(&s);
    for v in ["s", "sc"] {
        for fmt in ["-3", "-5"] {
            let (a, b) = (s.path("nco.nc"), s.path("ours.nc"));
            let theirs = reference("ncks").args([fmt, "-v", v, &input]).arg(&a).run();
            if v == "sc" && fmt == "-5" {
                // NCO 5.1.4 writes the scalar string "scalar" into CDF-5 as the char
                // 's' and succeeds (README); ours refuses it as every other string.
                assert_eq!(theirs.code, Some(0), "NCO -v {v} {fmt}: {}", theirs.stderr);
                assert!(nco_tests::ncdump(&[], &a.to_string_lossy()).contains("sc = \"s\""));
                std::fs::remove_file(&a).expect("remove");
                if is_nco() {
                    continue;
                }
            } else {
                assert_eq!(theirs.code, Some(1), "NCO -v {v} {fmt}: {}", theirs.stderr);
            }
            nco("ncks")
                .args([fmt, "-v", v, &input])
                .arg(&b)
                .run()
                .clean_failure(if is_nco() { "ERROR" } else { "NC_STRING" });
            assert!(!b.exists(), "-v {v} {fmt}: an output was left");
        }
    }
}

#[test]
fn attributes_beyond_int_are_wrapped_as_nco_with_one_warning_each() {
    // The values are NCO's (compared in the first test); we also say which changed.
    let s = Scratch::new();
    let input = nc4types(&s);
    let out = s.arg("ours.nc");
    let r = nco("ncks").args(["-3", "-v", "f", &input, &out]).succeeds();
    if is_nco() {
        return;
    }
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("WARNING")).collect();
    assert_eq!(warnings.len(), 3, "{}", r.stderr);
    for (w, att) in warnings.iter().zip(["att_ui", "att_i64", "att_u64"]) {
        assert!(w.starts_with("ncks: WARNING") && w.contains(att), "{w}");
    }
}
