//! `-A` in every operator that writes a new file from its inputs (ncra, ncrcat, nces,
//! ncecat, ncwa, ncbo, ncflint, ncpdq, ncap2), against NCO 5.1.4 on our fixture: each case makes
//! an output first (with NCO's ncks or the operator itself, `-O`), then appends into it
//! with both implementations; the two results must compare equal (`nco_tests::compare`,
//! exact) and the `history` of ours must hold the append's command line above the
//! first run's. An append that cannot merge (a dimension of another size) must fail
//! with one line, exit 1, and leave the existing file byte for byte as it was with no
//! temporary file beside it. The merge rule is one, `nco_core::target::Output`'s (also
//! ncks's): the output's other variables kept, a same-named variable replaced (on the
//! same dimensions only, its attributes merged), the output's global attributes kept
//! and none of the input's added (but by ncks appending a whole file, whose input's
//! replace them), the append recorded in `history` and `history_of_appended_files`.

use nco_tests::dump::Value;
use nco_tests::{assert_same_bytes, compare, fx, is_nco, nco, reference, Cmd, Dump, Scratch};

/// A program of either implementation.
fn prog(theirs: bool, op: &str) -> Cmd {
    if theirs {
        reference(op)
    } else {
        nco(op)
    }
}

/// Make the existing output with `pre` (program, arguments, inputs count), then
/// append with `op ARGS fixture×n out`; both implementations; compare the results and
/// check our history.
#[track_caller]
fn same_append(pre: (&str, &[&str], usize), op: &str, args: &[&str], n_in: usize) {
    let s = Scratch::new();
    let mut outs = Vec::new();
    for theirs in [true, false] {
        let out = s.arg(if theirs { "nco.nc" } else { "ours.nc" });
        let (p, pargs, pn) = pre;
        prog(theirs, p)
            .arg("-O")
            .args(pargs)
            .args(vec![fx(); pn])
            .arg(&out)
            .succeeds();
        prog(theirs, op)
            .arg("-A")
            .args(args)
            .args(vec![fx(); n_in])
            .arg(&out)
            .succeeds();
        outs.push(out);
    }
    if op == "ncrcat" {
        // NCO's ncrcat claims `cell_methods = "time: mean"` (README, compatibility
        // notes: ncra.rs `ncrcat_does_not_claim_a_mean`); the fixture has none.
        for out in &outs {
            reference("ncatted")
                .args(["-O", "-h", "-a", "cell_methods,,d,,"])
                .arg(out)
                .succeeds();
        }
    }
    let d = compare(&outs[0], &outs[1]).differences();
    assert!(d.is_empty(), "{op} -A {args:?}: differs from NCO: {d:?}");
    let dump = nco_tests::ncdump(&["-h"], &outs[1]);
    let hist = dump
        .lines()
        .skip_while(|l| !l.contains(":history = "))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    // NCO 5.1.4's ncap2 and ncbo -A replace the output's history with their input's
    // (README, compatibility notes: `ncap2_and_ncbo_append_keep_the_outputs_history`).
    let keeps_first = !(is_nco() && (op == "ncap2" || op == "ncbo"));
    assert!(
        hist.contains(&format!("{op} -A "))
            && hist.contains(&format!("{} -O ", pre.0)) == keeps_first,
        "{op} -A: history lacks the append above the first run: {hist}"
    );
}

/// An append that cannot merge: the output holds fld2 on two of lon's four elements.
#[track_caller]
fn failed_append_keeps_file(op: &str, args: &[&str], n_in: usize) {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    reference("ncks")
        .args(["-O", "-d", "lon,0,1", "-v", "fld2"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    let before = std::fs::read(&out).expect("read the output");
    let run = nco(op)
        .arg("-A")
        .args(args)
        .args(vec![fx(); n_in])
        .arg(&out)
        .run();
    assert_ne!(run.code, Some(0), "{op} -A {args:?} succeeded");
    assert_same_bytes(std::path::Path::new(&out), &before);
    if is_nco() {
        return; // NCO leaves its temporary file behind (README, compatibility notes)
    }
    run.clean_failure("ERROR");
    assert_eq!(s.files(), ["out.nc"], "{op}: files left beside the output");
}

const SC: (&str, &[&str], usize) = ("ncks", &["-v", "sc_int"], 1);

#[test]
fn ncra_append() {
    same_append(SC, "ncra", &["-v", "fld_rec"], 2);
    same_append(
        ("ncra", &["-v", "fld_rec", "-d", "time,0,4"], 1),
        "ncra",
        &["-v", "fld_rec"],
        1,
    );
    failed_append_keeps_file("ncra", &["-v", "fld2"], 1);
}

#[test]
fn ncrcat_append() {
    same_append(SC, "ncrcat", &["-v", "fld_rec"], 2);
    same_append(
        ("ncks", &["-v", "fld_rec,sc_int"], 1),
        "ncrcat",
        &["-v", "fld_rec", "-d", "time,5,9"],
        2,
    );
    failed_append_keeps_file("ncrcat", &["-v", "fld2"], 1);
}

#[test]
fn nces_append() {
    same_append(SC, "nces", &["-v", "fld3"], 2);
    same_append(
        ("ncks", &["-v", "fld2,sc_int"], 1),
        "nces",
        &["-y", "ttl", "-v", "fld2"],
        2,
    );
    failed_append_keeps_file("nces", &["-v", "fld2"], 2);
}

#[test]
fn ncecat_append() {
    same_append(SC, "ncecat", &["-v", "fld2"], 2);
    same_append(
        ("ncecat", &["-v", "fld2"], 2),
        "ncecat",
        &["-v", "fld2,fld1_int"],
        2,
    );
    failed_append_keeps_file("ncecat", &["-v", "orog"], 2);
}

#[test]
fn ncwa_append() {
    same_append(SC, "ncwa", &["-a", "lat", "-v", "fld2"], 1);
    // The first run's maximum over half the points is replaced by the whole maximum
    // (the same cell_methods: ncwa_append_replaces_cell_methods has another).
    same_append(
        (
            "ncwa",
            &["-y", "max", "-a", "lat,lon", "-d", "lon,0,1", "-v", "fld2"],
            1,
        ),
        "ncwa",
        &["-y", "max", "-a", "lat,lon", "-v", "fld2"],
        1,
    );
    failed_append_keeps_file("ncwa", &["-a", "lat", "-v", "fld2"], 1);
}

#[test]
fn ncbo_append() {
    same_append(SC, "ncbo", &["-v", "fld2"], 2);
    same_append(
        ("ncks", &["-v", "fld2,sc_int"], 1),
        "ncbo",
        &["--op_typ=add", "-v", "fld2"],
        2,
    );
    failed_append_keeps_file("ncbo", &["-v", "fld2"], 2);
}

#[test]
fn ncpdq_append() {
    same_append(SC, "ncpdq", &["-a", "lon,lat", "-v", "fld2"], 1);
    same_append(
        ("ncpdq", &["-a", "-lon", "-v", "fld2"], 1),
        "ncpdq",
        &["-a", "lat", "-v", "fld2"],
        1,
    );
    failed_append_keeps_file("ncpdq", &["-v", "fld2"], 1);
}

#[test]
fn ncap2_append() {
    same_append(SC, "ncap2", &["-v", "-s", "z=fld2*3"], 1);
    same_append(
        ("ncap2", &["-v", "-s", "z=fld2"], 1),
        "ncap2",
        &["-v", "-s", "z=fld2*3;w=sc_int+1"],
        1,
    );
    failed_append_keeps_file("ncap2", &["-v", "-s", "z=fld2*3;w=nosuch+1"], 1);
}

#[test]
fn ncflint_append() {
    same_append(SC, "ncflint", &["-w", "0.5", "-v", "fld2"], 2);
    same_append(
        ("ncks", &["-v", "fld2,sc_int"], 1),
        "ncflint",
        &["-w", "2,1", "-v", "fld2"],
        2,
    );
    failed_append_keeps_file("ncflint", &["-v", "fld2"], 2);
}

/// The global `title` of a file.
fn title(d: &Dump) -> String {
    let a = d
        .root()
        .attrs
        .iter()
        .find(|a| a.name == "title")
        .expect("title");
    a.values
        .iter()
        .map(|v| v.to_string().trim_matches('"').to_string())
        .collect()
}

/// The output of `ncks -O -h -v fld2,sc_int` with fld2's `units` changed to "U", a
/// new fld2 attribute `foo`, and the global `title` changed to "X".
fn edited_output(s: &Scratch, name: &str) -> String {
    let out = s.arg(name);
    reference("ncks")
        .args(["-O", "-h", "-v", "fld2,sc_int"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    reference("ncatted")
        .args(["-O", "-h", "-a", "units,fld2,o,c,U", "-a", "foo,fld2,o,c,F"])
        .args(["-a", "title,global,o,c,X"])
        .arg(&out)
        .succeeds();
    out
}

#[test]
fn replaced_variable_keeps_the_outputs_other_attributes() {
    // NCO: fld2 takes the input's units and keeps foo; the output's title stays.
    for (op, args, n) in [
        ("ncks", &["-v", "fld2"][..], 1),
        ("nces", &["-v", "fld2"][..], 2),
        ("ncecat", &["-v", "sc_dbl"][..], 2),
        ("ncflint", &["-w", "0.5", "-v", "fld2"][..], 2),
        ("ncra", &["-v", "fld_rec,fld2"][..], 1),
        ("ncpdq", &["-a", "lat,lon", "-v", "fld2"][..], 1),
    ] {
        let s = Scratch::new();
        let mut outs = Vec::new();
        for theirs in [true, false] {
            let out = edited_output(&s, if theirs { "nco.nc" } else { "ours.nc" });
            prog(theirs, op)
                .arg("-A")
                .args(args)
                .args(vec![fx(); n])
                .arg(&out)
                .succeeds();
            outs.push(out);
        }
        compare(&outs[0], &outs[1]).equal();
        let d = nco_tests::Dump::of(&outs[1]);
        let foo = d.var("fld2").attr("foo").map(|a| a.values.clone());
        assert_eq!(foo, Some(vec![Value::Text("F".into())]), "{op}");
        assert_eq!(title(&d), "X", "{op}");
    }
}

#[test]
fn appended_variable_on_other_dimensions_is_refused() {
    // The output has fld2(lat,lon); ncwa -a lat makes fld2(lon), ncpdq -a lon,lat
    // fld2(lon,lat): NCO fails writing it (ncks refuses another rank), so do we, up front.
    for (op, args) in [
        ("ncwa", &["-a", "lat", "-v", "fld2"][..]),
        ("ncpdq", &["-a", "lon,lat", "-v", "fld2"][..]),
    ] {
        let s = Scratch::new();
        let out = s.arg("out.nc");
        reference("ncks")
            .args(["-O", "-v", "fld2,sc_int"])
            .arg(fx())
            .arg(&out)
            .succeeds();
        let before = std::fs::read(&out).expect("read the output");
        let run = nco(op).arg("-A").args(args).arg(fx()).arg(&out).run();
        assert_same_bytes(std::path::Path::new(&out), &before);
        if is_nco() {
            assert_eq!(run.code, Some(1), "{op}: {run:?}");
            continue;
        }
        run.clean_failure("cannot append: it has dimensions (lat");
        assert_eq!(s.files(), ["out.nc"], "{op}: files left beside the output");
    }
}

#[test]
fn appends_record_the_inputs_history() {
    // NCO's history_of_appended_files: the first input's history, the newest first;
    // nothing with -h.
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let bare = s.arg("bare.nc");
    reference("ncks")
        .args(["-O", "-h", "-v", "sc_dbl"])
        .arg(fx())
        .arg(&bare)
        .succeeds();
    reference("ncatted")
        .args(["-O", "-h", "-a", "history,global,d,,"])
        .arg(&bare)
        .succeeds();
    reference("ncks")
        .args(["-O", "-v", "sc_int"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    nco("ncwa")
        .args(["-A", "-a", "lat", "-v", "fld2"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    nco("ncbo")
        .args(["-A", "-v", "sc_dbl"])
        .arg(&bare)
        .arg(&bare)
        .arg(&out)
        .succeeds();
    nco("ncecat")
        .args(["-A", "-h", "-v", "fld1_int"])
        .arg(fx())
        .arg(fx())
        .arg(&out)
        .succeeds();
    let text = nco_tests::ncdump(&["-h"], &out);
    let att = text
        .split(":history_of_appended_files = ")
        .nth(1)
        .expect("history_of_appended_files");
    let att = &att[..att.find(" ;").expect("end of the attribute")];
    let entries: Vec<&str> = att.split("Appended file ").skip(1).collect();
    assert_eq!(entries.len(), 2, "{att}");
    assert!(
        entries[0].starts_with(&format!("{bare} had no \\\"history\\\" attribute\\n")),
        "{att}"
    );
    assert!(
        entries[1].starts_with(&format!(
            "{} had following \\\"history\\\" attribute:\\n\",\n\t\t\t\"created by ncgen",
            fx()
        )),
        "{att}"
    );
}

#[test]
fn ncap2_and_ncbo_append_keep_the_outputs_history() {
    // NCO 5.1.4's ncap2 and ncbo -A write their input's history over the output's (the
    // first run's line is lost), ncap2 no history_of_appended_files; we keep the
    // output's history as every other operator does, and record the input's.
    for op in ["ncap2", "ncbo"] {
        let s = Scratch::new();
        let out = s.arg("out.nc");
        reference("ncks")
            .args(["-O", "-v", "sc_int"])
            .arg(fx())
            .arg(&out)
            .succeeds();
        let run = nco(op).arg("-A");
        let run = if op == "ncbo" {
            run.args(["-v", "fld2"]).arg(fx()).arg(fx())
        } else {
            run.args(["-v", "-s", "fld2=fld2*3"]).arg(fx())
        };
        run.arg(&out).succeeds();
        let text = nco_tests::ncdump(&["-h"], &out);
        assert!(text.contains(&format!("{op} -A -")), "{text}");
        assert_eq!(
            text.contains("ncks -O -v sc_int "),
            !is_nco(),
            "{op}: {text}"
        );
        let appended = !(is_nco() && op == "ncap2");
        assert_eq!(
            text.contains("history_of_appended_files"),
            appended,
            "{op}: {text}"
        );
    }
}

#[test]
fn ncbo_append_keeps_the_outputs_global_attributes() {
    // NCO 5.1.4's ncbo (and ncap2) -A write the first input's global attributes over
    // the output's (title "X" becomes the input's); its other operators, and ours, keep
    // the output's.
    for op in ["ncbo", "ncap2"] {
        let s = Scratch::new();
        let out = edited_output(&s, "out.nc");
        let run = nco(op).arg("-A");
        let run = if op == "ncbo" {
            run.args(["-v", "sc_dbl"]).arg(fx()).arg(fx())
        } else {
            run.args(["-v", "-s", "w=sc_dbl*2"]).arg(fx())
        };
        run.arg(&out).succeeds();
        let expect = if is_nco() { "nco-rs test fixture" } else { "X" };
        assert_eq!(title(&Dump::of(&out)), expect, "{op}");
    }
}

#[test]
fn replaced_variable_of_another_type_takes_the_inputs_type() {
    // The output has fld2 as float, the input as double. NCO 5.1.4 keeps the output's
    // type and converts the values into it (with a WARNING that this is "begging for
    // trouble": a double into an int truncates); we write the input's variable as it
    // is, type and values.
    let s = Scratch::new();
    let out = s.arg("out.nc");
    reference("ncap2")
        .args(["-O", "-v", "-s", "fld2=float(fld2*1.1);sc_int=sc_int"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    nco("ncks")
        .args(["-A", "-v", "fld2"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    let fld2 = Dump::of(&out).var("fld2").clone();
    let theirs = Dump::of(&fx()).var("fld2").clone();
    if is_nco() {
        assert_eq!(fld2.ty, "float");
        return;
    }
    assert_eq!(fld2.ty, "double");
    assert_eq!(fld2.data, theirs.data);
}

#[test]
fn ncwa_append_replaces_cell_methods() {
    // A mean replaced by a maximum: the values are the maximum's, and so is our
    // cell_methods; NCO 5.1.4 adds the new entry to the replaced variable's
    // ("lat, lon: mean lat, lon: maximum"), which the values no longer are.
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncwa")
        .args(["-O", "-a", "lat,lon", "-v", "fld2"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    nco("ncwa")
        .args(["-A", "-y", "max", "-a", "lat,lon", "-v", "fld2"])
        .arg(fx())
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    let fld2 = d.var("fld2");
    assert_eq!(fld2.numbers(), [8.5]);
    let cm = fld2.attr("cell_methods").map(|a| a.values.clone());
    let expect = if is_nco() {
        "lat, lon: mean lat, lon: maximum"
    } else {
        "lat, lon: maximum"
    };
    assert_eq!(cm, Some(vec![Value::Text(expect.into())]));
}

/// A global attribute's text, if the file has it.
fn global(d: &Dump, name: &str) -> Option<String> {
    d.root().attrs.iter().find(|a| a.name == name).map(|a| {
        a.values
            .iter()
            .map(|v| v.to_string().trim_matches('"').to_string())
            .collect()
    })
}

#[test]
fn appends_add_the_inputs_global_attributes_only_from_ncks_without_a_variable_list() {
    // Checked against NCO 5.1.4: an append adds none of the input's global attributes
    // (ncra, ncwa, ncks -v, ncks -x -v...), except ncks appending the whole file, whose
    // input's global attributes replace the output's (Conventions) and join them
    // (title). The output's history stays in ours (NCO 5.1.4's ncks, ncbo and ncap2
    // write the input's over it; its ncbo and ncap2 copy all the input's globals).
    let s = Scratch::new();
    let text = "netcdf mine { dimensions: other = 2 ; variables: float a(other) ; \
                :Conventions = \"mine\" ; :history = \"made by hand\" ; data: a = 1, 2 ; }";
    let cases: [(&str, &[&str], usize, bool); 8] = [
        ("ncks", &["-v", "fld2"], 1, false),
        ("ncks", &["-x", "-v", "fld2"], 1, false),
        ("ncks", &[], 1, true),
        ("ncra", &["-v", "fld_rec"], 1, false),
        ("ncwa", &["-v", "fld2"], 1, false),
        ("ncflint", &["-w", "0.5", "-v", "fld2"], 2, false),
        ("ncbo", &["-v", "fld2"], 2, is_nco()),
        ("ncap2", &["-v", "-s", "w=sc_dbl*2"], 1, is_nco()),
    ];
    for (i, (op, args, n, copies)) in cases.into_iter().enumerate() {
        let out = crate::common::cdl(&s, &format!("mine{i}"), text);
        nco(op)
            .arg("-A")
            .args(args)
            .args(vec![fx(); n])
            .arg(&out)
            .succeeds();
        let d = Dump::of(&out);
        let case = format!("{op} -A {args:?}");
        let (conventions, title) = if copies {
            (
                Some("CF-1.8".to_string()),
                Some("nco-rs test fixture".to_string()),
            )
        } else {
            (Some("mine".to_string()), None)
        };
        assert_eq!(global(&d, "Conventions"), conventions, "{case}");
        assert_eq!(global(&d, "title"), title, "{case}");
        let history = global(&d, "history").unwrap_or_default();
        assert!(history.contains(&format!("{op} -A")), "{case}: {history}");
        if !is_nco() {
            assert!(history.contains("made by hand"), "{case}: {history}");
        }
    }
}

#[test]
fn group_attributes_follow_the_global_rule_in_appends() {
    // Checked against NCO 5.1.4: ncra -A adds none of the input's group attributes
    // (its new group g2 comes without them); ncks -A of the whole file copies them
    // over the existing ones.
    let s = Scratch::new();
    let base = "netcdf gb { dimensions: time = UNLIMITED ; lat = 2 ; \
                variables: double time(time) ; float z(lat) ; :title = \"gb\" ; \
                data: time = 1, 2, 3 ; z = 5, 6 ; \
                group: g1 { variables: float a(lat) ; :g1att = \"base g1\" ; \
                :g1shared = \"base g1 shared\" ; data: a = 1, 2 ; } }";
    let input = crate::common::cdl_nc4(
        &s,
        "gi",
        "netcdf gi { dimensions: time = UNLIMITED ; lat = 2 ; \
         variables: double time(time) ; float v(time, lat) ; data: time = 1, 2, 3 ; \
         v = 1, 2, 3, 4, 5, 6 ; \
         group: g1 { variables: float b(time, lat) ; :g1shared = \"inp g1 shared\" ; \
         :g1inp = \"inp g1 only\" ; data: b = 1, 2, 3, 4, 5, 6 ; } \
         group: g2 { variables: float c(lat) ; :g2att = \"inp g2\" ; data: c = 9, 8 ; } }",
    );
    for (op, copies) in [("ncra", false), ("ncks", true)] {
        let out = crate::common::cdl_nc4(&s, &format!("gb_{op}"), base);
        nco(op).arg("-A").arg(&input).arg(&out).succeeds();
        let text = nco_tests::ncdump(&["-h"], &out);
        let has = |a: &str| text.contains(a);
        assert!(has(":g1att = \"base g1\""), "{op}: {text}");
        assert_eq!(has(":g1shared = \"inp g1 shared\""), copies, "{op}: {text}");
        assert_eq!(
            has(":g1shared = \"base g1 shared\""),
            !copies,
            "{op}: {text}"
        );
        assert_eq!(has(":g1inp = "), copies, "{op}: {text}");
        assert_eq!(has(":g2att = "), copies, "{op}: {text}");
        assert!(has("group: g2"), "{op}: {text}");
    }
}
