//! Multi-station list mode (`--list`), a capability of nco-rs that NCO lacks: every
//! test returns early when the binaries under test are NCO's.
//!
//! - `ncks --list FILE in.nc`: many files, each list line `-d lon,X -d lat,Y [-v vars]
//!   out.nc`;
//! - `ncks --list FILE in.nc out.nc`: station form, the last word of a line is a station
//!   name; one output with a `station` dimension, `station_name`, lat(station),
//!   lon(station);
//! - `ncrcat --list FILE a.nc b.nc` (every positional argument is an input) and
//!   `ncrcat --list FILE -o out.nc a.nc b.nc` (station form).
//!
//! List outputs must equal separate ncks/ncrcat runs with the same `-d` options
//! (compared with `nco_tests::compare`, exact; it ignores history) and a failed
//! list writes none of its outputs.

use std::path::Path;

use nco_tests::{bin, fx, is_nco, nco, tool, value, Scratch};

/// Stations on the fixture grid (lat -45, 45; lon 0, 90, 180, 270): (name, -d options,
/// per-line -v).
const STATIONS: [(&str, &str, &str); 3] = [
    ("berlin", "-d lon,90. -d lat,45.", ""),
    ("paris", "-d lon,270. -d lat,-45.", "-v orog,PS"),
    ("rome", "-d lon,1 -d lat,0", ""),
];

/// Require `a` and `b` equal (values exact, attributes, dimensions).
#[track_caller]
fn same_file(a: &str, b: &str) {
    nco_tests::compare(a, b).equal();
}

/// Write the list file `name` with `lines` and return its path.
fn list(s: &Scratch, name: &str, lines: &[String]) -> String {
    let p = s.arg(name);
    std::fs::write(&p, lines.join("\n") + "\n").expect("write list");
    p
}

/// Many-files list lines for STATIONS, outputs `<name>.nc` in the scratch folder, with
/// a comment and a blank line.
fn many_files_lines(s: &Scratch) -> Vec<String> {
    let mut v = vec!["# station list".to_string(), String::new()];
    for (name, d, vars) in STATIONS {
        v.push(format!("{d} {vars} {}", s.arg(&format!("{name}.nc"))));
    }
    v
}

fn split(opts: &str) -> Vec<&str> {
    opts.split_whitespace().collect()
}

// ---------------------------------------------------------------- ncks

#[test]
fn ncks_many_files_equal_separate_runs() {
    ncks_many_files_with_batch(None);
}

#[test]
fn ncks_many_files_one_station_per_batch() {
    ncks_many_files_with_batch(Some("0"));
}

fn ncks_many_files_with_batch(batch_mb: Option<&str>) {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let l = list(&s, "list.txt", &many_files_lines(&s));
    let mut cmd = nco("ncks");
    if let Some(mb) = batch_mb {
        cmd = cmd.env("NCO_RS_LIST_BATCH_MB", mb);
    }
    cmd.args(["--list", &l, &fx()]).succeeds();
    for (name, d, vars) in STATIONS {
        let sep = s.arg(&format!("{name}.sep.nc"));
        nco("ncks")
            .args(split(d))
            .args(split(vars))
            .args([&fx(), &sep])
            .succeeds();
        same_file(&s.arg(&format!("{name}.nc")), &sep);
        let a = value(&s.arg(&format!("{name}.nc")), "PS", "%g ", &[]);
        assert_eq!(a, value(&sep, "PS", "%g ", &[]), "{name}");
    }
    // The per-line -v list applies to its line only.
    assert_eq!(
        nco_tests::header_count(&s.arg("paris.nc"), "fld3("),
        0,
        "paris has -v orog,PS"
    );
    assert_eq!(nco_tests::header_count(&s.arg("berlin.nc"), "fld3("), 1);
}

#[test]
fn ncks_command_line_options_apply_to_every_station() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let l = list(&s, "list.txt", &many_files_lines(&s));
    nco("ncks")
        .args(["-C", "-v", "fld3", "-d", "lev,1,2", "--list", &l, &fx()])
        .succeeds();
    for (name, d, _) in STATIONS.iter().filter(|st| st.2.is_empty()) {
        let sep = s.arg(&format!("{name}.sep.nc"));
        nco("ncks")
            .args(["-C", "-v", "fld3", "-d", "lev,1,2"])
            .args(split(d))
            .args([&fx(), &sep])
            .succeeds();
        same_file(&s.arg(&format!("{name}.nc")), &sep);
    }
    // berlin: lat 1, lon 1, lev 1..2 -> 111, 121.
    assert_eq!(value(&s.arg("berlin.nc"), "fld3", "%g ", &[]), "111 121");
}

#[test]
fn ncks_station_form_values_equal_separate_runs() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let lines: Vec<String> = STATIONS
        .iter()
        .map(|(name, d, _)| format!("{d} {name}"))
        .collect();
    let l = list(&s, "list.txt", &lines);
    let out = s.arg("stations.nc");
    nco("ncks")
        .args(["--list", &l, "-v", "orog,PS,fld3", &fx(), &out])
        .succeeds();
    let hdr = nco_tests::ncdump(&["-h"], &out);
    for decl in [
        "\tstation = 3 ;",
        "\tfloat PS(station, time) ;",
        "\tfloat fld3(station, lev) ;",
        "\tfloat orog(station) ;",
        "\tfloat lat(station) ;",
        "\tfloat lon(station) ;",
        "\tchar station_name(station, station_name_length) ;",
        "\t\tstation_name:cf_role = \"timeseries_id\" ;",
    ] {
        assert!(hdr.contains(decl), "lacks {decl:?}\n{hdr}");
    }
    for (i, (name, d, _)) in STATIONS.iter().enumerate() {
        let sep = s.arg(&format!("{name}.sep.nc"));
        nco("ncks")
            .args(split(d))
            .args(["-v", "orog,PS,fld3", &fx(), &sep])
            .succeeds();
        let at = format!("station,{i}");
        for var in ["orog", "PS", "fld3", "lat", "lon"] {
            assert_eq!(
                value(&out, var, "%g ", &["-d", &at]),
                value(&sep, var, "%g ", &[]),
                "{name}: {var}"
            );
        }
        assert_eq!(
            value(&out, "station_name", "%s", &["-d", &at]),
            *name,
            "station_name"
        );
    }
    // berlin is lat 45, lon 90: orog 60.
    assert_eq!(value(&out, "orog", "%g ", &[]), "60 40 20");
}

#[test]
fn ncks_list_from_stdin() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let out = s.arg("berlin.nc");
    let script = format!(
        "printf '%s\\n' '-d lon,90. -d lat,45. {out}' | '{}' --list - '{}'",
        bin("ncks").display(),
        fx()
    );
    tool("sh").args(["-c", &script]).succeeds();
    let sep = s.arg("sep.nc");
    nco("ncks")
        .args(["-d", "lon,90.", "-d", "lat,45.", &fx(), &sep])
        .succeeds();
    same_file(&out, &sep);
    assert_eq!(value(&out, "orog", "%g", &[]), "60");
}

// ---------------------------------------------------------------- ncrcat

#[test]
fn ncrcat_many_files_equal_separate_runs() {
    ncrcat_many_files_with_batch(None);
}

/// With no memory for reading ahead, every station is its own batch (one pass over the
/// inputs each): the outputs are the same.
#[test]
fn ncrcat_many_files_one_station_per_batch() {
    ncrcat_many_files_with_batch(Some("0"));
}

fn ncrcat_many_files_with_batch(batch_mb: Option<&str>) {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let l = list(&s, "list.txt", &many_files_lines(&s));
    let mut cmd = nco("ncrcat");
    if let Some(mb) = batch_mb {
        cmd = cmd.env("NCO_RS_LIST_BATCH_MB", mb);
    }
    cmd.args(["--list", &l, "-v", "PS,fld_rec3", &fx(), &fx()])
        .succeeds();
    for (name, d, vars) in STATIONS {
        let sep = s.arg(&format!("{name}.sep.nc"));
        let vars = if vars.is_empty() {
            "-v PS,fld_rec3"
        } else {
            vars
        };
        nco("ncrcat")
            .args(split(d))
            .args(split(vars))
            .args([&fx(), &fx(), &sep])
            .succeeds();
        let got = s.arg(&format!("{name}.nc"));
        same_file(&got, &sep);
        assert_eq!(
            value(&got, "PS", "%g ", &[]),
            value(&sep, "PS", "%g ", &[]),
            "{name}"
        );
    }
    assert_eq!(
        nco_tests::header_count(&s.arg("berlin.nc"), "time = UNLIMITED ; // (20 currently)"),
        1
    );
}

#[test]
fn ncrcat_station_form_values_equal_separate_runs() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let lines: Vec<String> = STATIONS
        .iter()
        .map(|(name, d, _)| format!("{d} {name}"))
        .collect();
    let l = list(&s, "list.txt", &lines);
    let out = s.arg("stations.nc");
    nco("ncrcat")
        .args(["--list", &l, "-v", "PS", "-o", &out, &fx(), &fx()])
        .succeeds();
    assert_eq!(
        nco_tests::header_count(&out, "float PS(station, time) ;"),
        1
    );
    assert_eq!(nco_tests::header_count(&out, "\ttime = 20 ;"), 1);
    for (i, (name, d, _)) in STATIONS.iter().enumerate() {
        let sep = s.arg(&format!("{name}.sep.nc"));
        nco("ncrcat")
            .args(split(d))
            .args(["-v", "PS", &fx(), &fx(), &sep])
            .succeeds();
        let at = format!("station,{i}");
        for var in ["PS", "lat", "lon", "time"] {
            assert_eq!(
                value(&out, var, "%g ", &["-d", &at]),
                value(&sep, var, "%g ", &[]),
                "{name}: {var}"
            );
        }
    }
}

// ---------------------------------------------------------------- bad lists

/// Run `op --list LIST [extra] fixture [fixture]` expecting exit 1 with a one-line error
/// containing `needle`, and require that no `.nc` file appeared in the scratch folder.
#[track_caller]
fn list_fails(op: &str, lines: &[String], extra: &[&str], needle: &str) {
    let s = Scratch::new();
    let l = list(&s, "list.txt", lines);
    let mut cmd = nco(op).args(["--list", &l]).args(extra).arg(fx());
    if op == "ncrcat" {
        cmd = cmd.arg(fx());
    }
    cmd.run().clean_failure(needle);
    let written: Vec<String> = s.files().into_iter().filter(|f| f != "list.txt").collect();
    assert_eq!(written, Vec::<String>::new(), "{op}: outputs written");
}

/// Three stations whose second line is `bad`, outputs in `s`'s folder.
fn with_bad_second_line(s: &Scratch, bad: &str) -> Vec<String> {
    vec![
        format!("-d lon,90. -d lat,45. {}", s.arg("a.nc")),
        bad.to_string(),
        format!("-d lon,0. -d lat,-45. {}", s.arg("c.nc")),
    ]
}

#[test]
fn bad_malformed_line_is_reported_with_its_number() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let dir = s.dir().display().to_string();
    for op in ["ncks", "ncrcat"] {
        // No output name at the end.
        let lines = with_bad_second_line(&s, "-d lon,0. -d lat,45.");
        list_fails(op, &lines, &[], "line 2");
        // A -d without its argument.
        let lines = with_bad_second_line(&s, &format!("-d lon -d lat,45. {dir}/b.nc"));
        list_fails(op, &lines, &[], "line 2");
        // An option lists may not hold.
        let lines = with_bad_second_line(&s, &format!("-d lon,0. -d lat,45. -x {dir}/b.nc"));
        list_fails(op, &lines, &[], "line 2");
    }
    assert_eq!(s.files(), Vec::<String>::new());
}

#[test]
fn bad_station_outside_the_grid() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let b = s.arg("b.nc");
    for op in ["ncks", "ncrcat"] {
        let lines = with_bad_second_line(&s, &format!("-d lon,0. -d lat,200. {b}"));
        list_fails(op, &lines, &[], "line 2");
        let lines = with_bad_second_line(&s, &format!("-d lon,9 -d lat,0 {b}"));
        list_fails(op, &lines, &[], "line 2");
    }
    // Station form too.
    let out = s.arg("st.nc");
    let lines = vec![
        "-d lon,90. -d lat,45. berlin".to_string(),
        "-d lon,0. -d lat,200. nowhere".to_string(),
    ];
    list_fails("ncks", &lines, &[], "line 2");
    assert!(!Path::new(&out).exists());
    assert_eq!(s.files(), Vec::<String>::new());
}

#[test]
fn bad_duplicate_output_names() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let a = s.arg("a.nc");
    for op in ["ncks", "ncrcat"] {
        let lines = with_bad_second_line(&s, &format!("-d lon,0. -d lat,45. {a}"));
        list_fails(op, &lines, &[], "line 2");
    }
    assert_eq!(s.files(), Vec::<String>::new());
}

/// The same output spelled another way (`./a.nc`) is still the same file: refused,
/// naming the line, and nothing written.
#[test]
fn bad_duplicate_output_spelled_differently() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let a = s.arg("a.nc");
    let dir = Path::new(&a)
        .parent()
        .expect("scratch folder")
        .display()
        .to_string();
    for op in ["ncks", "ncrcat"] {
        let lines = vec![
            format!("-d lon,90. -d lat,45. {a}"),
            format!("-d lon,0. -d lat,45. {dir}/./a.nc"),
        ];
        list_fails(op, &lines, &[], "line 2");
    }
    assert_eq!(s.files(), Vec::<String>::new());
}

/// A coordinate range reaching past the grid takes what lies inside it, as in a
/// separate run; only a lone point outside the grid is refused.
#[test]
fn range_reaching_past_the_grid_equals_a_separate_run() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let got = s.arg("r.nc");
    let l = list(&s, "list.txt", &[format!("-d lat,0.,80. -v PS {got}")]);
    nco("ncks").args(["--list", &l, &fx()]).succeeds();
    let sep = s.arg("r.sep.nc");
    nco("ncks")
        .args(["-d", "lat,0.,80.", "-v", "PS", &fx(), &sep])
        .succeeds();
    same_file(&got, &sep);
    // lat 45 only (the fixture's lat is -45, 45).
    assert_eq!(value(&got, "lat", "%g ", &[]), "45");
}

#[test]
fn bad_duplicate_station_names() {
    if is_nco() {
        return;
    }
    let out = Scratch::new();
    let o = out.arg("st.nc");
    let lines = vec![
        "-d lon,90. -d lat,45. berlin".to_string(),
        "-d lon,0. -d lat,45. berlin".to_string(),
    ];
    let s = Scratch::new();
    let l = list(&s, "list.txt", &lines);
    nco("ncks")
        .args(["--list", &l, &fx(), &o])
        .run()
        .clean_failure("berlin");
    nco("ncrcat")
        .args(["--list", &l, "-o", &o, &fx(), &fx()])
        .run()
        .clean_failure("berlin");
    assert_eq!(out.files(), Vec::<String>::new());
}

#[test]
fn bad_unwritable_output_writes_none() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let missing_dir = s.arg("no/such/folder/b.nc");
    for op in ["ncks", "ncrcat"] {
        let lines = with_bad_second_line(&s, &format!("-d lon,0. -d lat,45. {missing_dir}"));
        list_fails(op, &lines, &[], "no/such/folder");
    }
    assert_eq!(s.files(), Vec::<String>::new());
}

#[test]
fn bad_list_file_missing() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let l = s.arg("nolist.txt");
    nco("ncks")
        .args(["--list", &l, &fx()])
        .run()
        .clean_failure("nolist.txt");
}
