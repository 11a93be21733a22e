//! ncap2 on a small fixture of its own (tests/data/ncap.cdl, built with ncgen), and on
//! inputs with rows larger than a block. Every expected value was first obtained from
//! NCO 5.1.4's ncap2 on the same fixture and script. Outputs are read back with ncdump.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use nco_tests::{is_nco, ncap_fixture, nco, Dump, Run, Scratch};

/// A scratch folder holding a copy of the fixture as `in.nc` (some tests modify it).
struct Fx {
    dir: Scratch,
    input: PathBuf,
}

fn fixture() -> Fx {
    let dir = Scratch::new();
    let input = dir.path("in.nc");
    std::fs::copy(ncap_fixture(), &input).expect("copy the ncap2 fixture");
    Fx { dir, input }
}

impl Fx {
    fn out(&self, name: &str) -> PathBuf {
        self.dir.path(name)
    }

    /// Run ncap2 with `args` then `in.nc out.nc`.
    fn run(&self, args: &[&str], out: &Path) -> Run {
        nco("ncap2").args(args).arg(&self.input).arg(out).run()
    }

    fn ok(&self, args: &[&str]) -> (PathBuf, String) {
        let out = self.out("out.nc");
        let o = self.run(args, &out).success();
        (out, o.stdout)
    }
}

fn ncdump(path: &Path, extra: &[&str]) -> String {
    nco_tests::ncdump(extra, &path.to_string_lossy())
}

/// The data of `var` as ncdump prints it, whitespace collapsed: `1, 2, 3`.
fn data(path: &Path, var: &str) -> String {
    let text = ncdump(path, &["-v", var]);
    let body = text.split("data:").nth(1).unwrap();
    let start = body
        .find(&format!("\n {var} ="))
        .unwrap_or_else(|| panic!("{var} not in {text}"));
    let rest = &body[start + var.len() + 4..];
    let end = rest.find(';').unwrap();
    rest[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The declaration line of `var` in the header, tabs removed.
fn decl(path: &Path, var: &str) -> String {
    ncdump(path, &["-h"])
        .lines()
        .find(|l| {
            let t = l.trim_start();
            t.split_whitespace().nth(1).is_some_and(|n| {
                n == var || n.starts_with(&format!("{var}(")) || n == format!("{var};")
            })
        })
        .unwrap_or_else(|| panic!("{var} not declared"))
        .trim()
        .to_string()
}

#[test]
fn float_modulo_keeps_fill_and_attributes() {
    let fx = fixture();
    let (out, _) = fx.ok(&["-O", "-v", "-C", "-s", "tm=t%273.0f"]);
    assert_eq!(
        data(&out, "tm"),
        "270, 271, 272, 0, 1, 2, 3, _, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14"
    );
    let h = ncdump(&out, &["-h"]);
    assert!(h.contains("tm:_FillValue = -999.f ;"), "{h}");
    assert!(h.contains("tm:units = \"K\" ;"), "{h}");
}

#[test]
fn reductions_methods_and_dimension_arguments() {
    let fx = fixture();
    let (out, _) = fx.ok(&[
        "-O",
        "-v",
        "-C",
        "-s",
        "at=t.avg();tot=n.total();nav=n.avg($lon);mx=t.max($time)",
    ]);
    assert_eq!(data(&out, "at"), "278.5882");
    assert_eq!(data(&out, "tot"), "21");
    assert_eq!(data(&out, "nav"), "2, 5", "integer averages truncate");
    assert_eq!(data(&out, "mx"), "282, 283, 284, 285, 286, 287");
    assert_eq!(decl(&out, "nav"), "int nav(lat) ;");
}

#[test]
fn typing_rules_of_nco() {
    let fx = fixture();
    let (out, _) = fx.ok(&[
        "-O",
        "-v",
        "-C",
        "-s",
        "n@scale=2.5;y=n@scale*2;z=s*n;pi=4*atan(1);q=2^3;r=7/2;m=-7%3;x=p*2",
    ]);
    assert_eq!(data(&out, "y"), "4", "attribute converted to the int first");
    assert_eq!(decl(&out, "y"), "int y ;");
    assert_eq!(data(&out, "z"), "2.5, 5, 7.5, 10, 12.5, 15");
    assert_eq!(decl(&out, "z"), "float z(lat, lon) ;");
    assert_eq!(data(&out, "pi"), "3.141593");
    assert_eq!(decl(&out, "pi"), "float pi ;");
    assert_eq!(
        (data(&out, "q"), decl(&out, "q")),
        ("8".into(), "float q ;".into())
    );
    assert_eq!(data(&out, "r"), "3");
    assert_eq!(data(&out, "m"), "-1");
    // Packed p (0.5*p+10) is unpacked to double before arithmetic.
    assert_eq!(data(&out, "x"), "22, 24, 26");
    // NCO 5.1.4 declares x int here (four new variables or more: the packed type,
    // short, times an int), but double with three or fewer (`a=1;b=2;x=p*2`), and
    // truncates the unpacked values into the packed type (`w=p` is short); ours is
    // double in both (README, compatibility notes).
    if !is_nco() {
        assert_eq!(decl(&out, "x"), "double x(lon) ;");
    }
}

#[test]
fn lhs_casting_where_and_hyperslabs() {
    let fx = fixture();
    let (out, _) = fx.ok(&[
        "-O",
        "-v",
        "-s",
        "c[lat,lon]=lat*0+1.0f;w=t;where(w>280) w=0; elsewhere w=1;h=t(1,:,0:2:2).total();g=t(2,1,1)",
    ]);
    assert_eq!(data(&out, "c"), "1, 1, 1, 1, 1, 1");
    assert_eq!(decl(&out, "c"), "float c(lat, lon) ;");
    assert_eq!(
        data(&out, "w"),
        "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0",
        "a missing condition takes the elsewhere branch"
    );
    assert_eq!(data(&out, "h"), "1114");
    assert_eq!(data(&out, "g"), "286");
    // -v without -C brings the coordinates.
    assert_eq!(data(&out, "lon"), "0, 120, 240");
}

#[test]
fn compound_assignment_keeps_type_and_attributes() {
    let fx = fixture();
    let (out, _) = fx.ok(&["-h", "-O", "-v", "-s", "time+=10;n*=1.7"]);
    assert_eq!(data(&out, "time"), "11, 12, 13");
    assert!(ncdump(&out, &["-h"]).contains("time:units = \"days since 2000-01-01\""));
    assert_eq!(
        data(&out, "n"),
        "2, 4, 6, 8, 10, 12",
        "1.7 rounds to the int 2"
    );
    assert_eq!(decl(&out, "n"), "int n(lat, lon) ;");
    assert!(
        !ncdump(&out, &["-h"]).contains(":history"),
        "-h: no history"
    );
}

#[test]
fn print_and_script_files() {
    let fx = fixture();
    let script = fx.out("s.nco");
    std::fs::write(
        &script,
        "a=n.total(); // total\nprint(a);\nprint(lon,\"%g,\");\n",
    )
    .unwrap();
    // -s scripts run before -S files whatever their order.
    let (out, stdout) = fx.ok(&["-O", "-v", "-S", script.to_str().unwrap(), "-s", "c=3"]);
    assert_eq!(stdout, "a = 21 \n\n0,120,240,\n");
    assert_eq!(data(&out, "a"), "21");
    assert_eq!(data(&out, "c"), "3");
}

#[test]
fn without_v_every_input_variable_is_kept() {
    let fx = fixture();
    let (out, _) = fx.ok(&["-O", "-s", "s@note=\"hi\";k=n*lon"]);
    let h = ncdump(&out, &["-h"]);
    for v in ["float t(", "short p(", "float s ;", "float k(lat, lon) ;"] {
        assert!(h.contains(v), "{v} missing in {h}");
    }
    assert!(h.contains("s:note = \"hi\" ;"));
    assert_eq!(data(&out, "k"), "0, 240, 720, 0, 600, 1440");
}

#[test]
fn same_file_in_and_out() {
    let fx = fixture();
    nco("ncap2")
        .args(["-O", "-s", "u=s+1"])
        .arg(&fx.input)
        .arg(&fx.input)
        .succeeds();
    assert_eq!(data(&fx.input, "u"), "3.5");
    assert_eq!(data(&fx.input, "n"), "1, 2, 3, 4, 5, 6");
}

#[test]
fn errors_exit_1_and_write_nothing() {
    let fx = fixture();
    // (script, our message's needle, NCO's)
    for (script, needle, nco_needle) in [
        ("a=nosuch+1", "nosuch", Some("nosuch")),
        ("a=(1+", "syntax error", Some("unexpected token")),
        ("a=n.nosuch()", "nosuch", Some("nosuch")),
        // NCO 5.1.4 crashes (SIGSEGV) on an unknown function.
        ("a=foo(1)", "foo", None),
        ("a=lat*lon", "do not conform", Some("share no dimensions")),
    ] {
        let needle = match (is_nco(), nco_needle) {
            (false, _) => needle,
            (true, Some(n)) => n,
            (true, None) => continue,
        };
        let out = fx.out("bad.nc");
        let r = fx.run(&["-O", "-s", script], &out).clean_failure(needle);
        // NCO may print a WARNING line first.
        assert!(
            is_nco() || r.stderr.starts_with("ncap2: ERROR"),
            "{script}: {}",
            r.stderr
        );
        assert!(!out.exists(), "{script} wrote output");
    }
}

/// An input with rows larger than a block (3 x 40000 doubles per record), so that an
/// element-wise script is evaluated in pieces of rows: a float, a double with fill
/// values and a packed short, all (time = 3, y = 3, z = 40000).
fn big_input(s: &Scratch) -> String {
    let n = 3 * 3 * 40_000;
    let mut cdl = String::from(
        "netcdf big {\ndimensions:\n time = UNLIMITED ;\n y = 3 ;\n z = 40000 ;\nvariables:\n \
         float a(time, y, z) ;\n  a:units = \"K\" ;\n double b(time, y, z) ;\n  \
         b:_FillValue = -1e30 ;\n short p(time, y, z) ;\n  p:scale_factor = 0.5f ;\n  \
         p:add_offset = 10.f ;\ndata:\n",
    );
    let mut data = |name: &str, value: &dyn Fn(usize) -> String| {
        let v: Vec<String> = (0..n).map(value).collect();
        writeln!(cdl, " {name} = {} ;", v.join(", ")).unwrap();
    };
    data("a", &|i| format!("{}", a_value(i)));
    data("b", &|i| match b_value(i) {
        Some(b) => format!("{b}"),
        None => "-1e30".into(),
    });
    data("p", &|i| format!("{}", (i % 200) as i16 - 100));
    cdl.push_str("}\n");
    crate::common::cdl(s, "big", &cdl)
}

/// `big_input`'s a (a float) and b (a double, missing every 7th element).
fn a_value(i: usize) -> f32 {
    (i % 1000) as f32 * 0.25 + 1.0
}

fn b_value(i: usize) -> Option<f64> {
    (i % 7 != 3).then(|| (i % 513) as f64 / 3.0)
}

#[test]
fn element_wise_scripts_stream_in_blocks_with_the_whole_array_results() {
    let dir = Scratch::new();
    let input = big_input(&dir);
    let script = "c=a*2+b;d=sqrt(c)-a;e=p*a;f=-p/3";
    let run = |script: &str, out: &str| {
        nco("ncap2")
            .args(["-O", "-h", "-v", "-s", script])
            .arg(&input)
            .arg(out)
            .succeeds();
    };
    // The same statements, then a reduction: evaluated on whole arrays.
    let (streamed, whole) = (dir.arg("s.nc"), dir.arg("w.nc"));
    run(script, &streamed);
    run(&format!("{script};g=a.total()"), &whole);
    let (s, w) = (Dump::of(&streamed), Dump::of(&whole));
    for name in ["c", "d", "e", "f"] {
        let (vs, vw) = (s.var(name), w.var(name));
        assert_eq!(
            (&vs.ty, &vs.dims, &vs.attrs),
            (&vw.ty, &vw.dims, &vw.attrs),
            "{name}"
        );
        assert_eq!(vs.data.len(), 360_000, "{name}");
        assert!(
            vs.data == vw.data,
            "{name}: streamed and whole-array values differ"
        );
    }
    // And the values are what they should be: c = a*2 + b (double), fill where b is.
    let c = &s.var("c").data;
    for i in [0usize, 3, 10, 200_001, 359_999] {
        match b_value(i) {
            Some(b) => {
                let want = f64::from(a_value(i) * 2.0) + b;
                assert_eq!(c[i].as_f64(), Some(want), "c[{i}]");
            }
            None => assert_eq!(c[i], nco_tests::dump::Value::Fill, "c[{i}]"),
        }
    }
}

#[test]
fn statistics_methods_like_ncwa_operations() {
    // Values and types from NCO 5.1.4's ncap2 on the fixture: the type is kept, and
    // integer results truncate (the average before squaring, the root after it).
    let fx = fixture();
    let (out, _) = fx.ok(&[
        "-O",
        "-v",
        "-s",
        "a=t.rms();b=n.rms();c=t.rmssdn();d=t.sqravg();e=t.avgsqr();f=n.avgsqr();\
         g=t.rms($time);h=n.rmssdn();i=n.sqravg();k=t.mabs();l=n.mebs();m=t.mibs();\
         o=n.tabs();q=n.rms($lat);u=t.mebs($lat,$lon);w=t.tabs($time);x=(t-280).mabs();\
         y=(n-4).mebs();z=(n-4).tabs($lon)",
    ]);
    for (var, want) in [
        ("a", "278.6391"),
        ("b", "3"),
        ("c", "287.2146"),
        ("d", "77611.4"),
        ("e", "77639.77"),
        ("f", "15"),
        (
            "g",
            "276.0435, 277.065, 278.0432, 279.043, 280.0428, 281.0427",
        ),
        ("h", "4"),
        ("i", "9"),
        ("k", "287"),
        ("l", "3"),
        ("m", "270"),
        ("o", "21"),
        ("q", "2, 3, 4"),
        ("u", "272.5, 278.8, 284.5"),
        ("w", "828, 554, 834, 837, 840, 843"),
        ("x", "10"),
        ("y", "1"),
        ("z", "6, 3"),
    ] {
        assert_eq!(data(&out, var), want, "{var}");
    }
    assert_eq!(decl(&out, "b"), "int b ;");
    assert_eq!(decl(&out, "a"), "float a ;");
}

#[test]
fn deflate_applies_to_netcdf4_output_and_warns_on_netcdf3() {
    let fx = fixture();
    let (out, _) = fx.ok(&["-O", "-4", "-L", "1", "-s", "tk=t*2"]);
    let h = ncdump(&out, &["-hs"]);
    assert!(h.contains("tk:_DeflateLevel = 1 ;"), "{h}");
    assert!(
        h.contains("t:_DeflateLevel = 1 ;"),
        "without -v, copies too: {h}"
    );
    // On a netCDF3 output -L is ignored with a warning, as NCO 5.1.4 does (NCO prints
    // its warning on stdout).
    let r = fx
        .run(
            &["-O", "-3", "-L", "1", "-v", "-s", "tk=t*2"],
            &fx.out("c.nc"),
        )
        .success();
    if is_nco() {
        r.stdout_contains("WARNING Attempt to deflate");
    } else {
        r.stderr_contains("WARNING deflation");
    }
}

#[test]
fn unary_minus_binds_tighter_than_power() {
    // NCO 5.1.4 on the fixture (s = 2.5): -s^2 is (-s)^2.
    let fx = fixture();
    let (out, _) = fx.ok(&["-O", "-v", "-s", "a=-s^2;b=-2^2;c=3-s^2;e=2^-1;f=-(s^2)"]);
    for (var, want) in [
        ("a", "6.25"),
        ("b", "4"),
        ("c", "-3.25"),
        ("e", "0.5"),
        ("f", "-6.25"),
    ] {
        assert_eq!(data(&out, var), want, "{var}");
    }
}

#[test]
fn new_variables_in_script_order_up_to_three_then_sorted() {
    // NCO 5.1.4's output order, observed: up to three new variables keep the script's
    // order, four or more are sorted by name.
    let fx = fixture();
    let order = |script: &str| -> Vec<String> {
        let (out, _) = fx.ok(&["-O", "-v", "-C", "-s", script]);
        ncdump(&out, &["-h"])
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let ty = w.next()?;
                ["float", "double", "int", "short"]
                    .contains(&ty)
                    .then(|| w.next())
                    .flatten()
                    .map(|n| n.split(['(', ';']).next().unwrap_or(n).to_string())
            })
            .collect()
    };
    assert_eq!(order("zz=t*2;mm=t;aa=zz+1"), ["zz", "mm", "aa"]);
    assert_eq!(order("zz=t*2;mm=t;bb=t;aa=zz+1"), ["aa", "bb", "mm", "zz"]);
}

#[test]
fn include_files_are_found_in_nco_path_as_in_nco() {
    // `#include "inc.nco"` run from a folder without it: found in the second folder of
    // NCO_PATH (the first does not exist), in -s and in -S scripts.
    let s = Scratch::new();
    let inc = s.path("incdir");
    let work = s.path("work");
    std::fs::create_dir_all(&inc).expect("mkdir");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(inc.join("inc.nco"), "b=fld1_int*2;\n").expect("write");
    std::fs::write(work.join("s.nco"), "#include \"inc.nco\"\n").expect("write");
    let path = format!("/nonexistent:{}", inc.display());
    for script in [&["-s", "#include \"inc.nco\""][..], &["-S", "s.nco"][..]] {
        let out = work.join("o.nc").to_string_lossy().into_owned();
        nco("ncap2")
            .current_dir(&work)
            .env("NCO_PATH", &path)
            .args(["-O", "-v"])
            .args(script)
            .args([&nco_tests::fx(), &out])
            .succeeds();
        assert_eq!(
            nco_tests::value(&out, "b", "%d,", &[]),
            "14,-6,24,200000,",
            "{script:?}"
        );
        // Without NCO_PATH the file is not found: an error naming it.
        nco("ncap2")
            .current_dir(&work)
            .env("NCO_PATH", "")
            .args(["-O", "-v"])
            .args(script)
            .args([&nco_tests::fx(), &out])
            .run()
            .clean_failure("inc.nco");
    }
}
