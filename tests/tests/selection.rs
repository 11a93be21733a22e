//! Selection on the command line (issue 16, item 8): which variables `-v`, `-x`, `-c`
//! and `-C` extract, and which `-d` specs are accepted and what they select. Each case
//! runs NCO 5.1.4 (`/usr/bin`, `nco_tests::reference`; a test fails when it is not
//! installed) beside the binaries under test on our fixtures: the exit statuses must
//! agree, the outputs must be equal (exact) and the printed values identical. Where
//! NCO 5.1.4 is wrong the test states our answer, and NCO's when the binaries under
//! test are NCO's (README, compatibility notes).

use crate::common::cdl;
use nco_tests::{compare, descending_fixture, fx, is_nco, nco, reference, Scratch};

/// `ncks ARGS fixture out.nc` with NCO and with ours: both fail (ours with a one-line
/// error), or both succeed with equal outputs.
#[track_caller]
fn same_extraction(args: &[&str]) {
    let s = Scratch::new();
    let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
    let theirs = reference("ncks").args(args).arg(fx()).arg(&a).run();
    let ours = nco("ncks").args(args).arg(fx()).arg(&b).run();
    assert_eq!(
        ours.code, theirs.code,
        "ncks {args:?}: exit status differs from NCO's\nNCO: {}{}\nours: {}",
        theirs.stdout, theirs.stderr, ours.stderr
    );
    if theirs.code == Some(0) {
        compare(&a, &b).equal();
    } else {
        ours.clean_failure("ERROR");
    }
}

/// `ncks -H --trd -C ARGS file` with NCO and with ours: the same exit status and, on
/// success, the same printed text.
#[track_caller]
fn same_print(file: &str, args: &[&str]) {
    let theirs = reference("ncks")
        .args(["-H", "--trd", "-C"])
        .args(args)
        .arg(file)
        .run();
    let ours = nco("ncks")
        .args(["-H", "--trd", "-C"])
        .args(args)
        .arg(file)
        .run();
    assert_eq!(
        ours.code, theirs.code,
        "ncks {args:?}: exit status differs from NCO's\nNCO: {}{}\nours: {}{}",
        theirs.stdout, theirs.stderr, ours.stdout, ours.stderr
    );
    if theirs.code == Some(0) {
        assert_eq!(
            ours.stdout, theirs.stdout,
            "ncks {args:?}: printed values differ"
        );
    } else {
        ours.clean_failure("ERROR");
    }
}

fn desc() -> String {
    descending_fixture().to_string_lossy().into_owned()
}

#[test]
fn exclude_of_an_absent_name_is_a_no_op_as_in_nco() {
    for args in [
        &["-x", "-v", "nosuch"][..],
        &["-x", "-v", "fld2,nosuch"],
        &["-x", "-v", "nosuch,nosuch2", "-C"],
        &["-c", "-x", "-v", "nosuch"],
        &["-x", "-v", "nos.*"],
    ] {
        same_extraction(args);
    }
    // Still an error without -x.
    same_extraction(&["-v", "nosuch"]);
    same_extraction(&["-v", "fld2,nosuch"]);
    // The whole file, less fld2: nothing else went missing.
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-x", "-v", "fld2,nosuch"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    let header = nco_tests::ncdump(&["-h"], &out);
    assert!(!header.contains("fld2("), "{header}");
    assert!(header.contains("fld3(lat, lev, lon)"), "{header}");
    // The other operators share the rule.
    for op in ["ncwa", "ncra", "ncpdq", "nces"] {
        let out = s.arg(&format!("{op}.nc"));
        nco(op)
            .args(["-x", "-v", "nosuch,fld2"])
            .arg(fx())
            .arg(&out)
            .succeeds();
    }
}

#[test]
fn coords_alone_extracts_coordinates_only_as_in_nco() {
    // -c alone: every coordinate and what it brings (lev's bounds and formula terms);
    // with -C: the coordinates alone.
    for args in [
        &["-c"][..],
        &["-c", "-C"],
        &["-c", "-v", "fld2"],
        &["-c", "-v", "fld_rec"],
        &["-c", "-x", "-v", "fld2"],
        // Excluding a coordinate -c extracts: an error, unless -C (then kept).
        &["-c", "-x", "-v", "lat"],
        &["-c", "-C", "-x", "-v", "lat"],
    ] {
        same_extraction(args);
    }
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-c", "-C"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    let header = nco_tests::ncdump(&["-h"], &out);
    for v in ["lat(lat)", "lon(lon)", "lev(lev)", "time(time)"] {
        assert!(header.contains(v), "{v}: {header}");
    }
    assert!(!header.contains("fld"), "{header}");
}

#[test]
fn empty_variable_names_are_errors_as_in_nco() {
    for list in ["", "lat,,lon", "lat,", ",lat"] {
        same_extraction(&["-v", list]);
        same_extraction(&["-x", "-v", list]);
    }
    let s = Scratch::new();
    for op in ["ncwa", "ncra", "ncpdq", "nces"] {
        nco(op)
            .args(["-v", ""])
            .arg(fx())
            .arg(s.arg(&format!("{op}.nc")))
            .run()
            .clean_failure("empty");
    }
}

#[test]
fn malformed_hyperslab_specs_are_errors_as_in_nco() {
    for spec in [
        "lat,",
        "lat,,",
        "lat,,,",
        "lat,0,,",
        "lat,0,1,1,",
        "lat,0,1,,",
        "lat,2,1e3",
        "lat,1e3,2",
        "lat,1.0,1",
        "lat,99999999999999999999",
        "lat,-99999999999999999999",
        "lat,5,1",
        // Subcycles are ncra's and ncrcat's only.
        "lat,0,1,1,1",
        "lat,0,1,1,1,1",
        "lat,0,1,1,1,1,1",
        "lat,0,1,1,1,1,1,1",
        // Accepted forms, for contrast.
        "lat,,1",
        "lat,,,2",
        "lat,1,",
        "lat,1e30",
        "lat,-1",
        "lat,0.,1e3",
    ] {
        same_print(&fx(), &["-v", "lat", "-d", spec]);
    }
    // A date with an index or with a number is refused too; two dates are a range.
    for spec in [
        "time,0,2000-01-05",
        "time,1.,2000-01-05",
        "time,2000-01-02,2000-01-05",
    ] {
        same_print(&fx(), &["-v", "time", "-d", spec]);
    }
}

#[test]
fn subcycles_only_in_ncra_and_ncrcat_as_in_nco() {
    let s = Scratch::new();
    let spec = "time,0,9,5,2";
    for op in ["ncks", "ncwa", "nces", "ncecat", "ncpdq"] {
        let (a, b) = (s.arg(&format!("{op}_n.nc")), s.arg(&format!("{op}_o.nc")));
        let theirs = reference(op)
            .args(["-v", "fld_rec", "-d", spec])
            .arg(fx())
            .arg(&a)
            .run();
        assert_eq!(theirs.code, Some(1), "NCO's {op} accepted {spec}");
        nco(op)
            .args(["-v", "fld_rec", "-d", spec])
            .arg(fx())
            .arg(&b)
            .run()
            .clean_failure("ncra and ncrcat");
    }
    for op in ["ncbo", "ncflint"] {
        nco(op)
            .args(["-v", "fld_rec", "-d", spec])
            .arg(fx())
            .arg(fx())
            .arg(s.arg(&format!("{op}.nc")))
            .run()
            .clean_failure("ncra and ncrcat");
    }
    for op in ["ncra", "ncrcat"] {
        for spec in [spec, "time,0,9,5,2,1"] {
            let (a, b) = (s.arg("n.nc"), s.arg("o.nc"));
            reference(op)
                .args(["-O", "-v", "fld_rec", "-d", spec])
                .arg(fx())
                .arg(&a)
                .succeeds();
            nco(op)
                .args(["-O", "-v", "fld_rec", "-d", spec])
                .arg(fx())
                .arg(&b)
                .succeeds();
            // Values only: ncrcat's cell_methods differ on purpose (README).
            compare(&a, &b).without_attributes().equal();
        }
    }
    // An empty or non-positive interleave is refused by both.
    for spec in [
        "time,0,9,5,2,",
        "time,0,9,5,2,0",
        "time,0,9,5,2,-1",
        "time,0,,2,",
    ] {
        let theirs = reference("ncra")
            .args(["-O", "-d", spec])
            .arg(fx())
            .arg(s.arg("n.nc"))
            .run();
        assert_eq!(theirs.code, Some(1), "NCO's ncra accepted {spec}");
        nco("ncra")
            .args(["-O", "-d", spec])
            .arg(fx())
            .arg(s.arg("o.nc"))
            .run()
            .clean_failure("time");
    }
}

#[test]
fn descending_coordinate_ranges_as_in_nco() {
    for spec in [
        "lat,-50.,50.",
        "lat,50.,",
        "lat,,-50.",
        "lat,-10.,10.",
        "lat,-100.,100.",
        "lat,0.",
        "lat,44.",
        "lat,-50.,50.,2",
        // min > max with values on both sides: refused (no wrap on a decreasing axis).
        "lat,50.,-50.",
        "lat,50.,-50.,2",
        "lat,10.,-10.",
        "lat,44.,1.",
        "lev,200.,800.",
        "lev,800.,200.",
    ] {
        same_print(&desc(), &["-v", "v,w", "-d", spec]);
    }
}

/// The ranges on a decreasing coordinate where NCO 5.1.4 selects points outside the
/// range: a `min > max` range with nothing on one side (`lat,100.,60.`), and a
/// `min < max` range between two neighbours (`lat,1.,44.`). NCO returns every point,
/// rotated; ours refuses them ("brackets no coordinate values").
#[test]
fn descending_ranges_nco_gets_wrong_are_refused() {
    let cases = [
        (
            "lat,100.,60.",
            "lat[1]=45 lat[2]=0 lat[3]=-45 lat[4]=-90 lat[0]=90",
        ),
        (
            "lat,-60.,-100.",
            "lat[4]=-90 lat[0]=90 lat[1]=45 lat[2]=0 lat[3]=-45",
        ),
        (
            "lat,1.,44.",
            "lat[2]=0 lat[3]=-45 lat[4]=-90 lat[0]=90 lat[1]=45",
        ),
    ];
    for (spec, nco_says) in cases {
        let run = nco("ncks")
            .args(["-H", "--trd", "-C", "-v", "lat", "-d", spec])
            .arg(desc())
            .run();
        if is_nco() {
            let got = run
                .success()
                .stdout
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(got, nco_says, "{spec}");
        } else {
            run.clean_failure("brackets no coordinate values");
        }
    }
}

/// An upper index beyond the 64-bit range: NCO 5.1.4 prints nothing and exits 0;
/// ours is an error naming the index, as a lower one is in both.
#[test]
fn index_beyond_64_bits_is_out_of_range() {
    let run = nco("ncks")
        .args([
            "-H",
            "--trd",
            "-C",
            "-v",
            "lat",
            "-d",
            "lat,0,99999999999999999999",
        ])
        .arg(fx())
        .run();
    if is_nco() {
        assert_eq!(run.success().stdout.trim(), "");
    } else {
        run.clean_failure("99999999999999999999");
    }
}

/// The interleave (sixth `-d` field, NCO manual "Interleave"): within each sub-cycle
/// the records at offsets k, k + ilv... are one group; ncrcat writes the groups in
/// turn, ncra one record each (with or without `--mro`). Values are the manual's
/// examples, which NCO 5.1.4 gives.
#[test]
fn interleave_as_nco() {
    let s = Scratch::new();
    let seq = |name: &str, from: i32| {
        let vals: Vec<String> = (from..from + 10).map(|x| x.to_string()).collect();
        crate::common::cdl(
            &s,
            name,
            &format!(
                "netcdf {name} {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
                 float v(time) ; data: time = {0} ; v = {0} ; }}",
                vals.join(", ")
            ),
        )
    };
    let (in1, in2) = (seq("in1", 1), seq("in2", 11));
    let in12 = s.arg("in12.nc");
    nco("ncrcat").args(["-O", &in1, &in2, &in12]).succeeds();
    let out = s.arg("o.nc");
    let v = |op: &str, d: &str, files: &[&str]| {
        nco(op)
            .args(["-O", "-d", d])
            .args(files)
            .arg(&out)
            .succeeds();
        nco_tests::Dump::of(&out).var("v").numbers()
    };
    assert_eq!(
        v("ncra", "time,,,,10,5", &[&in1]),
        [3.5, 4.5, 5.5, 6.5, 7.5]
    );
    assert_eq!(
        v("ncrcat", "time,2,,10,4,2", &[&in12]),
        [3.0, 5.0, 4.0, 6.0, 13.0, 15.0, 14.0, 16.0]
    );
    assert_eq!(
        v("ncra", "time,2,,10,4,2", &[&in12]),
        [4.0, 5.0, 14.0, 15.0]
    );
    assert_eq!(
        v("ncra", "time,,,,10,2", &[&in1, &in2]),
        [5.0, 6.0, 15.0, 16.0]
    );
    assert_eq!(v("ncra", "time,,,,10,2", &[&in12]), [5.0, 6.0, 15.0, 16.0]);
    if !is_nco() {
        // A sub-cycle across two files: ours as over the concatenated records; NCO
        // 5.1.4 stops ("interleaved sub-cycle crosses file boundary").
        assert_eq!(
            v("ncra", "time,,,,4,2", &[&in1, &in2]),
            v("ncra", "time,,,,4,2", &[&in12])
        );
    }
    let (a, b) = (s.arg("n.nc"), s.arg("ours.nc"));
    let args = ["-O", "-v", "fld_rec", "-d", "time,0,9,5,2,2"];
    reference("ncra").args(args).arg(fx()).arg(&a).succeeds();
    nco("ncra").args(args).arg(fx()).arg(&b).succeeds();
    compare(&a, &b).equal();
}

/// Bounds with units (`-d wvl,'0.4 micron','0.7 micron'`) are converted to the
/// coordinate's units through UDUnits-2, as NCO converts them; a unit UDUnits-2 does
/// not know, or one that cannot be converted, is an error naming the spec.
#[test]
fn bounds_with_units_are_converted_through_udunits() {
    let s = Scratch::new();
    let f = crate::common::cdl(
        &s,
        "wvl",
        r#"netcdf wvl { dimensions: wvl = 3 ; lev = 3 ;
        variables: float wvl(wvl) ; wvl:units = "meter" ; float lev(lev) ; lev:units = "hPa" ;
        data: wvl = 0.5e-6, 1.0e-6, 2.0e-6 ; lev = 100, 500, 1000 ; }"#,
    );
    let picked = |var: &str, d: &str| nco_tests::value(&f, var, "%g ", &["-d", d]);
    assert_eq!(picked("wvl", "wvl,0.4 micron,1.5 micron"), "5e-07 1e-06");
    assert_eq!(picked("wvl", "wvl,400 nm,800 nm"), "5e-07");
    assert_eq!(
        picked("wvl", "wvl,0.9 micron"),
        "1e-06",
        "the nearest value"
    );
    assert_eq!(picked("lev", "lev,40000 Pa,90000 Pa"), "500");
    let out = s.arg("out.nc");
    for (d, why) in [
        ("wvl,1 second,2 second", "second"),
        ("wvl,1 blarg,2 blarg", "blarg"),
    ] {
        let r = nco("ncks").args(["-O", "-d", d, &f, &out]).run();
        if is_nco() {
            // NCO 5.1.4 warns that a time-to-length conversion is meaningless and
            // goes on; it stops on an unknown unit.
            assert!(r.stderr.contains(why), "{d}: {}", r.stderr);
        } else {
            r.clean_failure(why);
        }
    }
}

/// A counted repetition keeps its comma (`{1,3}`): NCO 5.1.4 does not split the `-v`
/// list inside braces.
#[test]
fn counted_repetitions_in_variable_regexes() {
    same_extraction(&["-v", "fld[0-9]{1,3}_.*,sc_int"]);
    same_extraction(&["-v", "^fld[0-9]{1,}"]);
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-O", "-C", "-v", "fld[0-9]{1,3}_.*,sc_int", &fx(), &out])
        .succeeds();
    let header = nco_tests::ncdump(&["-h"], &out);
    for v in ["fld1_int(", "fld1_sht(", "int sc_int ;"] {
        assert!(header.contains(v), "{v} in\n{header}");
    }
}

/// A coordinate range with equal bounds picks the nearest value, as a lone value does
/// (NCO 5.1.4: `-d lon,100.,100.` gives lon = 90).
#[test]
fn equal_coordinate_bounds_pick_the_nearest_value() {
    same_extraction(&["-v", "lon", "-d", "lon,100.,100."]);
    assert_eq!(
        nco_tests::value(&fx(), "lon", "%g", &["-d", "lon,100.,100."]),
        "90"
    );
}

#[test]
fn cf_attributes_bring_their_variables_only_in_files_declaring_cf() {
    // NCO 5.1.4 extracts the variables `coordinates`, `cell_measures`, `bounds`,
    // `ancillary_variables` and `grid_mapping` name only when `Conventions` declares
    // CF 1.x ("CF-1." or "CF1." in its text); the dimensions' coordinates always.
    let s = Scratch::new();
    let text = |conv: &str| {
        format!(
            "netcdf d {{ dimensions: time = UNLIMITED ; x = 2 ; nb = 2 ; variables: \
             double time(time) ; time:bounds = \"time_bnds\" ; double time_bnds(time, nb) ; \
             float T(time, x) ; T:coordinates = \"lat\" ; T:cell_measures = \"area: ar\" ; \
             T:ancillary_variables = \"q\" ; T:grid_mapping = \"crs\" ; float lat(x) ; \
             float ar(x) ; float q(time, x) ; int crs ; {conv} \
             data: time = 1 ; time_bnds = 0, 1 ; T = 5, 6 ; lat = 1, 2 ; ar = 1, 1 ; \
             q = 1, 1 ; crs = 0 ; }}"
        )
    };
    let names = |f: &str| -> Vec<String> {
        let out = s.arg("out.nc");
        nco("ncks").args(["-O", "-v", "T", f, &out]).succeeds();
        let mut v: Vec<String> = nco_tests::ncdump(&["-h"], &out)
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let ty = ["float ", "double ", "int "]
                    .iter()
                    .find(|t| l.starts_with(*t))?;
                Some(l[ty.len()..].split(['(', ' ']).next()?.to_string())
            })
            .collect();
        v.sort();
        v
    };
    for (conv, want) in [
        ("", &["T", "time"][..]),
        (":Conventions = \"CF\" ;", &["T", "time"]),
        (
            ":Conventions = \"CF-1.6\" ;",
            &["T", "ar", "crs", "lat", "q", "time", "time_bnds"],
        ),
    ] {
        let f = cdl(&s, "d", &text(conv));
        assert_eq!(names(&f), want, "{conv}");
    }
}

#[test]
fn record_multislabs_take_every_slab_in_ncrcat_and_ncra() {
    // Compatibility difference: NCO 5.1.4's ncrcat and ncra take only the first of two
    // -d slabs on the record dimension (record 0 here) and exit 0; its ncks takes
    // both, as ours does everywhere.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let f = cdl(
        &s,
        "r",
        "netcdf r { dimensions: time = UNLIMITED ; variables: double time(time) ; \
         float v(time) ; data: time = 0, 1, 2 ; v = 10, 11, 12 ; }",
    );
    let out = s.arg("out.nc");
    let slabs = ["-O", "-d", "time,0,0", "-d", "time,2,2"];
    nco("ncrcat").args(slabs).args([&f, &f, &out]).succeeds();
    assert_eq!(nco_tests::value(&out, "v", "%g,", &[]), "10,12,");
    nco("ncra").args(slabs).args([&f, &f, &out]).succeeds();
    assert_eq!(nco_tests::value(&out, "v", "%g,", &[]), "11,");
    nco("ncks").args(slabs).args([&f, &out]).succeeds();
    assert_eq!(nco_tests::value(&out, "v", "%g,", &[]), "10,12,");
}
