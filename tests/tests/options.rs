//! Options every operator shares with NCO 5.1.4 that are not about selection or
//! storage: `--gaa` (`--glb`, `--glb_att_add`) global attributes, ncks `--chk_nan`, and the refusal of options not supported yet. Each case runs NCO
//! (`/usr/bin`, `nco_tests::reference`) beside the binaries under test on the fixture.

use nco_tests::{fx, is_nco, ncdump, nco, reference, Scratch};

/// The global attributes of `file` as `ncdump -h` prints them, without the text of
/// `history` (its date and program path differ from run to run).
fn globals(file: &str) -> Vec<String> {
    let text = ncdump(&["-h"], file);
    let body = text.split("// global attributes:").nth(1).unwrap_or("");
    let mut out = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix(':') {
            let name = name.split(' ').next().unwrap_or("");
            out.push(if name == "history" {
                "history".to_string()
            } else {
                line.to_string()
            });
        }
    }
    out
}

#[test]
fn global_attributes_are_added_as_in_nco() {
    // New ones after history and before the NCO attribute, `title` replaced in place,
    // several in one argument joined by '#', the three spellings of the option.
    let s = Scratch::new();
    let gaa = [
        "--gaa",
        "foo=bar#baz=x y,z",
        "--glb",
        "title=T",
        "--glb_att_add",
        "n=1",
    ];
    let (f, out, theirs) = (fx(), s.arg("ours.nc"), s.arg("nco.nc"));
    let cases: [(&str, &[&str], usize); 10] = [
        ("ncks", &[], 1),
        ("ncks", &["-h"], 1),
        ("ncra", &[], 2),
        ("ncrcat", &[], 2),
        ("nces", &[], 2),
        ("ncecat", &[], 2),
        ("ncwa", &[], 1),
        ("ncbo", &[], 2),
        ("ncflint", &[], 2),
        ("ncap2", &["-s", "z=1"], 1),
    ];
    for (op, args, inputs) in cases {
        let ins = vec![f.as_str(); inputs];
        nco(op)
            .arg("-O")
            .args(gaa)
            .args(args)
            .args(&ins)
            .arg(&out)
            .succeeds();
        reference(op)
            .arg("-O")
            .args(gaa)
            .args(args)
            .args(&ins)
            .arg(&theirs)
            .succeeds();
        let (a, b) = (globals(&out), globals(&theirs));
        assert_eq!(a, b, "{op} {args:?}");
        assert!(
            a.contains(&":foo = \"bar\" ;".to_string())
                && a.contains(&":baz = \"x y,z\" ;".to_string())
                && a.contains(&":title = \"T\" ;".to_string()),
            "{op}: {a:?}"
        );
    }
}

#[test]
fn bad_global_attributes_are_refused_as_in_nco() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    for bad in ["foo", "=x", "foo=", "a=1#b"] {
        nco("ncks")
            .args(["-O", "--gaa", bad, &fx(), &out])
            .run()
            .clean_failure(if is_nco() { "" } else { "--gaa" });
        // (NCO 5.1.4 leaves its temporary file `out.nc.pid<N>.ncks.tmp` behind.)
        if !is_nco() {
            assert_eq!(s.files(), Vec::<String>::new(), "--gaa {bad}");
        }
    }
}

/// ncks `--chk_nan` as NCO 5.1.4: instead of printing, the floating-point variables
/// are searched for a NaN in print order; the first one found is one INFO line on
/// standard output naming its path, "NaNf" (float) or "NaN" (double) and its index in
/// the hyperslab, exit status 1; none found, nothing printed and exit status 0; when
/// writing an output the option changes nothing (NCO's too).
#[test]
fn chk_nan_reports_the_first_nan_as_nco() {
    let s = Scratch::new();
    let cdl = s.path("nan.cdl");
    std::fs::write(
        &cdl,
        "netcdf nan { dimensions: x = 3 ; variables: double w(x) ; float a(x) ; \
         int i(x) ; data: w = 1, NaN, 3 ; a = 1, 2, NaNf ; i = 1, 2, 3 ; \
         group: sub { variables: float u(x) ; data: u = NaNf, 2, 3 ; } }",
    )
    .unwrap();
    let f = s.arg("nan.nc");
    nco_tests::tool("ncgen")
        .args(["-k", "nc4", "-o", &f])
        .arg(&cdl)
        .succeeds();
    let cases: &[(&[&str], Option<&str>)] = &[
        (&[], Some("/a has first NaNf at hyperslab element 2")),
        (
            &["-v", "w,u"],
            Some("/sub/u has first NaNf at hyperslab element 0"),
        ),
        (
            &["-v", "w"],
            Some("/w has first NaN at hyperslab element 1"),
        ),
        (
            &["-d", "x,1,2", "-v", "w"],
            Some("/w has first NaN at hyperslab element 0"),
        ),
        (&["-d", "x,0,1", "-v", "a"], None),
        (&["-v", "i"], None),
    ];
    for &(args, want) in cases {
        let theirs = reference("ncks").arg("--chk_nan").args(args).arg(&f).run();
        let ours = nco("ncks").arg("--chk_nan").args(args).arg(&f).run();
        assert_eq!(ours.stdout, theirs.stdout, "--chk_nan {args:?}");
        assert_eq!(ours.code, theirs.code, "--chk_nan {args:?}");
        match want {
            Some(w) => {
                let line = format!("ncks: INFO nco_chk_nan() reports variable {w}, exiting now.\n");
                assert_eq!(ours.stdout, line);
                assert_eq!(ours.code, Some(1));
            }
            None => {
                assert!(ours.stdout.is_empty(), "{}", ours.stdout);
                assert_eq!(ours.code, Some(0));
            }
        }
    }
    let out = s.arg("o.nc");
    nco("ncks").args(["-O", "--chk_nan", &f, &out]).succeeds();
    assert!(std::path::Path::new(&out).exists());
}

/// NCO options nco-rs does not support yet are refused with a line naming the option
/// and saying so (README, "Not yet"), not as unknown options; no output is written.
#[test]
fn options_not_supported_yet_say_so() {
    if is_nco() {
        return; // NCO supports them.
    }
    let s = Scratch::new();
    let out = s.arg("out.nc");
    for (op, arg) in [
        ("ncks", "--cmp=zstd"),
        ("ncks", "--map=map.nc"),
        ("ncks", "--xtn_var=area"),
        ("ncra", "--codec=shf"),
        ("ncks", "--hpss"),
        ("nces", "--nsm_grp"),
        ("ncra", "-G"),
        ("ncks", "-l"),
    ] {
        let name = arg.split('=').next().unwrap_or(arg);
        let r = nco(op)
            .args(["-O", arg, &fx(), &out])
            .run()
            .clean_failure(name);
        assert!(
            r.stderr.contains("not supported yet"),
            "{op} {arg}: {}",
            r.stderr
        );
        assert_eq!(s.files(), Vec::<String>::new(), "{op} {arg}");
    }
    // An option NCO does not have either stays an unknown option.
    let r = nco("ncks")
        .args(["--no_such_option", &fx()])
        .run()
        .clean_failure("--no_such_option");
    assert!(!r.stderr.contains("not supported yet"), "{}", r.stderr);
}
