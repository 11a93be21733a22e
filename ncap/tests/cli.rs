//! End-to-end tests of the ncap2 binary on a small fixture (tests/data/fixture.cdl,
//! built with ncgen). Every expected value was first obtained from NCO 5.1.4's ncap2 on
//! the same fixture and script. Outputs are read back with ncdump.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ncap2")
}

fn have_tools() -> bool {
    Command::new("ncgen").arg("-version").output().is_ok()
        && Command::new("ncdump").output().is_ok()
}

struct Fx {
    dir: tempfile::TempDir,
    input: PathBuf,
}

fn fixture() -> Option<Fx> {
    if !have_tools() {
        eprintln!("ncgen/ncdump not found: skipping");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.nc");
    let cdl = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixture.cdl");
    let st = Command::new("ncgen")
        .arg("-o")
        .arg(&input)
        .arg(&cdl)
        .status()
        .unwrap();
    assert!(st.success());
    Some(Fx { dir, input })
}

impl Fx {
    fn out(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Run ncap2 with `args` then `in.nc out.nc`.
    fn run(&self, args: &[&str], out: &Path) -> Output {
        Command::new(bin())
            .args(args)
            .arg(&self.input)
            .arg(out)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> (PathBuf, String) {
        let out = self.out("out.nc");
        let o = self.run(args, &out);
        assert!(
            o.status.success(),
            "ncap2 {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        (out, String::from_utf8_lossy(&o.stdout).into_owned())
    }
}

fn ncdump(path: &Path, extra: &[&str]) -> String {
    let o = Command::new("ncdump")
        .args(extra)
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success());
    String::from_utf8_lossy(&o.stdout).into_owned()
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
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
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
    assert_eq!(decl(&out, "x"), "double x(lon) ;");
}

#[test]
fn lhs_casting_where_and_hyperslabs() {
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
    let o = Command::new(bin())
        .args(["-O", "-s", "u=s+1"])
        .arg(&fx.input)
        .arg(&fx.input)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(data(&fx.input, "u"), "3.5");
    assert_eq!(data(&fx.input, "n"), "1, 2, 3, 4, 5, 6");
}

#[test]
fn errors_exit_1_and_write_nothing() {
    let Some(fx) = fixture() else { return };
    for (script, needle) in [
        ("a=nosuch+1", "nosuch"),
        ("a=(1+", "syntax error"),
        ("a=n.nosuch()", "nosuch"),
        ("a=foo(1)", "foo"),
        ("a=lat*lon", "do not conform"),
    ] {
        let out = fx.out("bad.nc");
        let o = fx.run(&["-O", "-s", script], &out);
        assert_eq!(o.status.code(), Some(1), "{script}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("ncap2: ERROR"), "{err}");
        assert!(err.contains(needle), "{script}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists(), "{script} wrote output");
    }
}

/// An input with rows larger than a block (3 x 40000 doubles per record), so that an
/// element-wise script is evaluated in pieces of rows: a float, a double with fill
/// values and a packed short, all (time = 3, y = 3, z = 40000).
fn big_input(path: &Path) {
    use nco_core::dataset::OutFile;
    use nco_core::model::{Attr, Dim, Format, Meta, Var};
    use nco_core::types::{NcType, Values};
    let mut m = Meta::new(Format::Offset64);
    for (name, len, unlimited) in [("time", 3, true), ("y", 3, false), ("z", 40_000, false)] {
        m.dims.push(Dim {
            name: name.into(),
            len,
            unlimited,
        });
    }
    let var = |name: &str, ty, attrs| Var {
        name: name.into(),
        ty,
        dims: vec![0, 1, 2],
        attrs,
        storage: Default::default(),
    };
    m.vars
        .push(var("a", NcType::Float, vec![Attr::text("units", "K")]));
    m.vars.push(var(
        "b",
        NcType::Double,
        vec![Attr {
            name: "_FillValue".into(),
            value: Values::Double(vec![-1e30]),
        }],
    ));
    m.vars.push(var(
        "p",
        NcType::Short,
        vec![
            Attr {
                name: "scale_factor".into(),
                value: Values::Float(vec![0.5]),
            },
            Attr {
                name: "add_offset".into(),
                value: Values::Float(vec![10.0]),
            },
        ],
    ));
    let n = 3 * 3 * 40_000;
    let mut of = OutFile::create(path.to_str().unwrap(), &m, 0).unwrap();
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25 + 1.0).collect();
    let b: Vec<f64> = (0..n)
        .map(|i| {
            if i % 7 == 3 {
                -1e30
            } else {
                (i % 513) as f64 / 3.0
            }
        })
        .collect();
    let p: Vec<i16> = (0..n).map(|i| (i % 200) as i16 - 100).collect();
    of.write(0, 0, &Values::Float(a)).unwrap();
    of.write(1, 0, &Values::Double(b)).unwrap();
    of.write(2, 0, &Values::Short(p)).unwrap();
    of.finish().unwrap();
}

#[test]
fn element_wise_scripts_stream_in_blocks_with_the_whole_array_results() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.nc");
    big_input(&input);
    let script = "c=a*2+b;d=sqrt(c)-a;e=p*a;f=-p/3";
    let run = |script: &str, out: &Path| {
        let o = Command::new(bin())
            .args(["-O", "-h", "-v", "-s", script])
            .arg(&input)
            .arg(out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // The same statements, then a reduction: evaluated on whole arrays.
    let (streamed, whole) = (dir.path().join("s.nc"), dir.path().join("w.nc"));
    run(script, &streamed);
    run(&format!("{script};g=a.total()"), &whole);
    let s = nco_core::dataset::Dataset::open(streamed.to_str().unwrap()).unwrap();
    let w = nco_core::dataset::Dataset::open(whole.to_str().unwrap()).unwrap();
    for name in ["c", "d", "e", "f"] {
        let (vs, vw) = (s.meta().var(name).unwrap(), w.meta().var(name).unwrap());
        assert_eq!((vs.ty, &vs.attrs), (vw.ty, &vw.attrs), "{name}");
        let id = |d: &nco_core::dataset::Dataset| d.meta().var_id(name).unwrap();
        let (xs, xw) = (s.read_all(id(&s)).unwrap(), w.read_all(id(&w)).unwrap());
        assert_eq!(xs.len(), 360_000, "{name}");
        assert!(xs == xw, "{name}: streamed and whole-array values differ");
    }
    // And the values are what they should be: c = a*2 + b (double), fill where b is.
    let c = s.read_all(s.meta().var_id("c").unwrap()).unwrap();
    let c = c.to_f64_vec().unwrap();
    for i in [0usize, 3, 10, 200_001, 359_999] {
        let a = (i % 1000) as f32 * 0.25 + 1.0;
        let want = if i % 7 == 3 {
            -1e30
        } else {
            f64::from(a * 2.0) + (i % 513) as f64 / 3.0
        };
        assert_eq!(c[i], want, "c[{i}]");
    }
}

#[test]
fn statistics_methods_like_ncwa_operations() {
    // Values and types from NCO 5.1.4's ncap2 on the fixture: the type is kept, and
    // integer results truncate (the average before squaring, the root after it).
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
    let (out, _) = fx.ok(&["-O", "-4", "-L", "1", "-s", "tk=t*2"]);
    let h = ncdump(&out, &["-hs"]);
    assert!(h.contains("tk:_DeflateLevel = 1 ;"), "{h}");
    assert!(
        h.contains("t:_DeflateLevel = 1 ;"),
        "without -v, copies too: {h}"
    );
    // On a netCDF3 output -L is ignored with a warning, as NCO 5.1.4 does.
    let o = fx.run(
        &["-O", "-3", "-L", "1", "-v", "-s", "tk=t*2"],
        &fx.out("c.nc"),
    );
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("WARNING deflation"));
}

#[test]
fn unary_minus_binds_tighter_than_power() {
    // NCO 5.1.4 on the fixture (s = 2.5): -s^2 is (-s)^2.
    let Some(fx) = fixture() else { return };
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
    let Some(fx) = fixture() else { return };
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
