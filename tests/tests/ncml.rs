//! ncks `--xml` (NcML 2.2) printing and its options (`--xml_no_location`,
//! `--xml_spr_chr`, `--xml_spr_nmr`), on a netCDF-4 file with a group, unsigned and
//! 64-bit integers, strings, char arrays, fill values, NaN and text that XML escapes.
//! Expected text is NCO 5.1.4's print (`NCO_RS_BIN_DIR=/usr/bin` runs the same checks
//! against it) except where the README's compatibility notes say ours differs.

use nco_tests::{is_nco, nco, tool, Scratch};

const NM: &str = r#"netcdf nm {
dimensions: time = UNLIMITED ; x = 3 ; len = 4 ;
variables:
  double time(time) ; time:units = "days since 2000-01-01" ;
  float t(time, x) ; t:_FillValue = -9.f ; t:valid_range = 0.f, 100.f ;
    t:note = "a < b & \"c\"\tone\ntwo" ;
  ushort u(x) ; u:flags = 1us, 2us ;
  char name(x, len) ;
  string s(x) ; string s:tags = "a*b", "c" ; string s:one = "solo" ;
  int64 big ;
  char c ;
  :title = "NcML test" ; :version = 2 ;
data:
  time = 1, 2 ; t = 1, 2.5, _, 1e36, NaN, 0.125 ; u = 1, 65535, 7 ;
  name = "ab", "c*d", "" ; s = "x", "y z", "" ; big = 9007199254740993 ; c = "q" ;
group: g1 {
  dimensions: y = 2 ;
  variables: byte b(y) ; b:flag_values = 1b ;
  :where = "inner" ;
  data: b = -1, 127 ;
}
}"#;

/// The fixture as netCDF-4 (`ncgen -k nc4`), named `nm.nc` in `s`'s folder.
fn nm(s: &Scratch) -> String {
    let src = s.path("nm.cdl");
    std::fs::write(&src, NM).expect("write CDL");
    let out = s.arg("nm.nc");
    tool("ncgen")
        .args(["-k", "nc4", "-o", &out])
        .arg(&src)
        .succeeds();
    out
}

/// `ncks --xml ARGS nm.nc` run in the fixture's folder (so `location` is `nm.nc`).
fn xml(s: &Scratch, args: &[&str]) -> String {
    nm(s);
    nco("ncks")
        .current_dir(&s.path("."))
        .arg("--xml")
        .args(args)
        .arg("nm.nc")
        .succeeds()
        .stdout
}

/// The whole print: dimensions and variables by name, attributes, values, the group.
#[test]
fn xml_prints_the_file_as_ncml() {
    let s = Scratch::new();
    // NCO 5.1.4 looks for the separator in the first row of a char array only, so
    // `c*d` goes out ambiguously with `*` between rows; ours switches to `*|*`.
    let names = if is_nco() {
        r#"<ncml:values separator="*">ab*c*d*</ncml:values>"#
    } else {
        r#"<ncml:values separator="*|*">ab*|*c*d*|*</ncml:values>"#
    };
    let want = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<ncml:netcdf xmlns:ncml="http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2" location="file:nm.nc">
  <ncml:dimension name="len" length="4" />
  <ncml:dimension name="time" length="2" isUnlimited="true" />
  <ncml:dimension name="x" length="3" />
  <ncml:variable name="big" type="long" shape="">
    <ncml:values>9007199254740993</ncml:values>
  </ncml:variable>
  <ncml:variable name="c" type="char" shape="">
    <ncml:values>q</ncml:values>
  </ncml:variable>
  <ncml:variable name="name" type="char" shape="x len">
    {names}
  </ncml:variable>
  <ncml:variable name="s" type="String" shape="x">
    <ncml:attribute name="tags" separator="*|*" value="a*b*|*c" />
    <ncml:attribute name="one" separator="*" value="solo" />
    <ncml:values separator="*">x*y z*</ncml:values>
  </ncml:variable>
  <ncml:variable name="t" type="float" shape="time x">
    <ncml:attribute name="_FillValue" type="float" value="-9." />
    <ncml:attribute name="valid_range" type="float" value="0. 100." />
    <ncml:attribute name="note" separator="*" value="a &lt; b &amp; &quot;c&quot;&#x9;one&#xA;two" />
    <ncml:values>1. 2.5 -9. 1.e+36 NaN 0.125</ncml:values>
  </ncml:variable>
  <ncml:variable name="time" type="double" shape="time">
    <ncml:attribute name="units" separator="*" value="days since 2000-01-01" />
    <ncml:values>1. 2.</ncml:values>
  </ncml:variable>
  <ncml:variable name="u" type="short" shape="x">
    <ncml:attribute name="flags" type="short" isUnsigned="true" value="1 2" />
    <ncml:attribute name="_Unsigned" value="true" />
    <ncml:values>1 65535 7</ncml:values>
  </ncml:variable>
  <ncml:attribute name="title" separator="*" value="NcML test" />
  <ncml:attribute name="version" type="int" value="2" />
  <ncml:group name="g1">
    <ncml:dimension name="y" length="2" />
    <ncml:variable name="b" type="byte" shape="y">
      <ncml:attribute name="flag_values" type="byte" value="1" />
      <ncml:values>-1 127</ncml:values>
    </ncml:variable>
    <ncml:attribute name="where" separator="*" value="inner" />
  </ncml:group>
</ncml:netcdf>
"#
    );
    let got = xml(&s, &[]);
    assert_eq!(got, want);
    assert_eq!(
        nco("ncks")
            .current_dir(&s.path("."))
            .args(["--ncml", "nm.nc"])
            .succeeds()
            .stdout,
        want,
        "--ncml is --xml"
    );
}

/// `-m` attributes without values, `-H` values without attributes or the file's
/// attributes, `-M` the file's attributes; every print parses as XML (NCO 5.1.4's `-M`
/// print closes each variable twice and does not).
#[test]
fn xml_parts_and_well_formed_prints() {
    let s = Scratch::new();
    let meta = xml(&s, &["-m", "-v", "u,g1/b"]);
    assert!(meta.contains(
        "  <ncml:variable name=\"u\" type=\"short\" shape=\"x\">\n    <ncml:attribute name=\"flags\""
    ));
    assert!(!meta.contains("<ncml:values"), "{meta}");
    assert!(!meta.contains("NcML test"), "{meta}");
    assert!(
        meta.contains("  <ncml:group name=\"g1\">\n    <ncml:dimension name=\"y\" length=\"2\" />")
    );
    let data = xml(&s, &["-H", "-v", "big,t"]);
    assert!(data.contains("<ncml:values>1. 2.5 -9. 1.e+36 NaN 0.125</ncml:values>"));
    assert!(!data.contains("<ncml:attribute"), "{data}");
    let globals = xml(&s, &["-M"]);
    assert!(
        globals.contains("  <ncml:attribute name=\"title\" separator=\"*\" value=\"NcML test\" />")
    );
    if is_nco() {
        assert!(
            globals.contains("shape=\"x\" />\n  </ncml:variable>"),
            "{globals}"
        );
        return;
    }
    assert!(globals
        .contains("  <ncml:variable name=\"u\" type=\"short\" shape=\"x\" />\n  <ncml:attribute name=\"title\""));
    for text in [xml(&s, &[]), meta, data, globals] {
        let doc =
            roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("not XML ({e}):\n{text}"));
        assert_eq!(doc.root_element().tag_name().name(), "netcdf");
    }
}

/// `--xml_no_location`, `--xml_spr_nmr`, `--xml_spr_chr` (each implying `--xml`),
/// hyperslabbed lengths, `--fmt_val`, `--hdn` (only `_ChunkSizes` in NcML), and
/// `--json` winning over `--xml`.
#[test]
fn xml_options() {
    let s = Scratch::new();
    let f = nm(&s);
    let run = |args: &[&str]| {
        nco("ncks")
            .current_dir(&s.path("."))
            .args(args)
            .arg("nm.nc")
            .succeeds()
            .stdout
    };
    let nmr = run(&["--xml_spr_nmr=, ", "--xml_no_location", "-H", "-v", "time"]);
    assert!(nmr.contains(
        "<ncml:netcdf xmlns:ncml=\"http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2\">\n"
    ));
    assert!(
        nmr.contains("<ncml:values separator=\", \">1., 2.</ncml:values>"),
        "{nmr}"
    );
    let chr = run(&["--xml_spr_chr=|", "-H", "-v", "s,name"]);
    assert!(
        chr.contains("<ncml:values separator=\"|\">ab|c*d|</ncml:values>"),
        "{chr}"
    );
    assert!(
        chr.contains("<ncml:values separator=\"|\">x|y z|</ncml:values>"),
        "{chr}"
    );
    let slab = run(&["--xml", "-H", "-v", "name", "-d", "len,0,1"]);
    assert!(
        slab.contains("<ncml:dimension name=\"len\" length=\"2\" />"),
        "{slab}"
    );
    assert!(
        slab.contains("<ncml:values separator=\"*|*\">ab*|*c**|*</ncml:values>"),
        "{slab}"
    );
    let fv = run(&[
        "--xml",
        "-H",
        "-C",
        "-v",
        "t",
        "-d",
        "time,0",
        "--fmt_val=%.2f",
    ]);
    assert!(fv.contains("<ncml:values>1. 2.5 -9.</ncml:values>"), "{fv}");
    let hdn = run(&["--xml", "--hdn", "-m", "-v", "t"]);
    assert!(
        hdn.contains("<ncml:attribute name=\"_ChunkSizes\" type=\"int\" value=\"1 3\" />"),
        "{hdn}"
    );
    assert!(
        !hdn.contains("_Storage") && !hdn.contains("_Format"),
        "{hdn}"
    );
    if !is_nco() {
        // Separators XML reserves are escaped in the values too; an empty text
        // separator falls back to `*|*` (NCO's fallback); each print parses.
        let amp = run(&["--xml_spr_nmr=&", "-H", "-v", "time"]);
        assert!(
            amp.contains("<ncml:values separator=\"&amp;\">1.&amp;2.</ncml:values>"),
            "{amp}"
        );
        let empty = run(&["--xml_spr_chr=", "-H", "-v", "name"]);
        assert!(empty.contains("separator=\"*|*\">ab*|*c*d*|*<"), "{empty}");
        for text in [amp, empty] {
            roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("not XML ({e}):\n{text}"));
        }
    }
    let json = run(&["--xml", "--json", "-v", "c"]);
    assert!(json.trim_start().starts_with('{'), "{json}");
    if !is_nco() {
        nco("ncks")
            .args(["--xml", "-s", "%f", &f])
            .run()
            .clean_failure("-s");
    }
}

/// Control characters XML 1.0 cannot hold (NCO writes `&#1;`, which parsers refuse)
/// are written as U+FFFD; tab and carriage return as their references.
#[test]
fn xml_control_characters_keep_the_print_well_formed() {
    let s = Scratch::new();
    let f = crate::common::cdl(
        &s,
        "ctl",
        "netcdf ctl { variables: int v ; v:ctrl = \"a\\001b\\rc\\td\" ; data: v = 1 ; }",
    );
    let r = nco("ncks").args(["--xml", "-v", "v", &f]).succeeds();
    if is_nco() {
        assert!(
            r.stdout.contains("value=\"a&#1;b&#xD;c&#x9;d\""),
            "{}",
            r.stdout
        );
        return;
    }
    assert!(
        r.stdout.contains("value=\"a\u{FFFD}b&#xD;c&#x9;d\""),
        "{}",
        r.stdout
    );
    roxmltree::Document::parse(&r.stdout)
        .unwrap_or_else(|e| panic!("not XML ({e}):\n{}", r.stdout));
    nco("ncks")
        .args(["--xml_spr_nmr=", &f])
        .run()
        .clean_failure("--xml_spr_nmr");
}
