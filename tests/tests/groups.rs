//! Files with groups (tests/data/groups.cdl as netCDF-4): copies keep the groups,
//! their attributes, string variables and attributes and the netCDF-4 types as NCO
//! 5.1.4 does; `-v`/`-x` items and `-g` name variables and groups by name or path;
//! `-G` edits group paths; netCDF3 outputs flatten the groups. Files are compared
//! with NCO's own output of the same command (exact: ncks does no arithmetic).

use nco_tests::{compare, gx, is_nco, nco, reference, storage, tool, Dump, Scratch};

/// Run `ncks ARGS groups.nc out` with NCO and with the binaries under test; require
/// equal files.
#[track_caller]
fn same_as_nco(args: &[&str]) -> (Scratch, String, String) {
    let s = Scratch::new();
    let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
    reference("ncks").args(args).arg(gx()).arg(&a).succeeds();
    nco("ncks").args(args).arg(gx()).arg(&b).succeeds();
    compare(&a, &b).equal();
    (s, a, b)
}

/// The variables (full paths) and groups of a file.
fn layout(file: &str) -> (Vec<String>, Vec<String>) {
    let d = Dump::of(file);
    let mut vars: Vec<String> = d
        .groups
        .iter()
        .flat_map(|g| {
            let p = g.path.trim_end_matches('/').to_string();
            g.vars.iter().map(move |v| format!("{p}/{}", v.name))
        })
        .collect();
    vars.sort();
    let mut groups: Vec<String> = d.groups.iter().map(|g| g.path.clone()).collect();
    groups.sort();
    (vars, groups)
}

#[test]
fn copy_keeps_groups_strings_and_types_as_nco() {
    let (_s, _a, b) = same_as_nco(&["-O"]);
    let (vars, groups) = layout(&b);
    assert_eq!(groups, ["/", "/empty", "/model", "/model/diag", "/obs"]);
    assert!(
        vars.contains(&"/model/diag/tas".to_string()) && vars.contains(&"/obs/site".to_string())
    );
    let d = Dump::of(&b);
    let obs = d.groups.iter().find(|g| g.path == "/obs").unwrap();
    assert_eq!(
        obs.dims.iter().find(|x| x.name == "lat").map(|x| x.len),
        Some(2),
        "the shadowing lat"
    );
}

#[test]
fn copy_keeps_each_variables_compression_and_chunks() {
    // NCO 5.1.4 applies the first compressed variable's level (with shuffle) to every
    // later variable; we keep each variable's own filters (README, compatibility).
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let out = s.arg("o.nc");
    nco("ncks").args(["-O", &gx(), &out]).succeeds();
    let st = storage(&out);
    let find = |p: &str| {
        st.iter()
            .find(|l| l.starts_with(&format!("{p}: ")))
            .unwrap_or_else(|| panic!("{p} in {st:?}"))
            .clone()
    };
    assert_eq!(
        find("/tas"),
        "/tas: _ChunkSizes=2, 3, 4; _DeflateLevel=5; _Shuffle=\"true\"; _Storage=\"chunked\""
    );
    assert_eq!(
        find("/model/ta"),
        "/model/ta: _ChunkSizes=1, 1, 3, 4; _DeflateLevel=2; _Storage=\"chunked\""
    );
    assert_eq!(
        find("/model/diag/pr"),
        "/model/diag/pr: _ChunkSizes=4, 3; _Storage=\"chunked\""
    );
    assert_eq!(find("/lat"), "/lat: _Storage=\"contiguous\"");
    let input = storage(&gx());
    let count = |v: &[String]| v.iter().filter(|l| l.contains("_DeflateLevel")).count();
    assert_eq!(count(&st), count(&input), "{st:?}");
}

#[test]
fn minus_l_deflates_with_shuffle_everything_but_strings_and_scalars_as_nco() {
    let (_s, a, b) = same_as_nco(&["-O", "-L", "3"]);
    let (x, y) = (storage(&a), storage(&b));
    for (l, m) in x.iter().zip(&y) {
        // Deflate and shuffle as NCO; chunks of once-contiguous variables are
        // libnetcdf's defaults in both.
        assert_eq!(l, m);
    }
    assert_eq!(x.len(), y.len());
    assert!(y
        .iter()
        .any(|l| l.starts_with("/scalar: ") && !l.contains("Deflate")));
    assert!(y
        .iter()
        .any(|l| l.starts_with("/obs/site: ") && !l.contains("Deflate")));
}

#[test]
fn minus_l_0_removes_compression_as_nco() {
    let (_s, a, b) = same_as_nco(&["-O", "-L", "0"]);
    assert_eq!(storage(&a), storage(&b));
}

#[test]
fn variables_by_name_path_and_regex_as_nco() {
    for v in [
        "tas",
        "/tas",
        "diag/tas",
        "/model/ta",
        "^t",
        "/model/.*",
        "lat",
        "city,site",
    ] {
        let (_s, _a, b) = same_as_nco(&["-O", "-v", v]);
        assert!(!layout(&b).0.is_empty(), "{v}");
    }
    let (_s, _a, b) = same_as_nco(&["-O", "-C", "-v", "/model/ta"]);
    assert_eq!(layout(&b).0, ["/model/ta"]);
    let (_s, _a, b) = same_as_nco(&["-O", "-x", "-v", "tas,site,city,label"]);
    assert!(!layout(&b).0.iter().any(|v| v.ends_with("/tas")));
}

#[test]
fn groups_by_name_path_and_regex_as_nco() {
    for g in ["model", "diag", "/model/diag", "mod.*", "obs,empty"] {
        same_as_nco(&["-O", "-g", g]);
    }
    let (_s, _a, b) = same_as_nco(&["-O", "-g", "model", "-v", "ta"]);
    assert_eq!(
        layout(&b).0,
        ["/lat", "/lon", "/model/level", "/model/ta", "/time"]
    );
    let (_s, _a, b) = same_as_nco(&["-O", "-g", "diag"]);
    assert_eq!(layout(&b).1, ["/", "/model", "/model/diag"]);
    // -x -g: everything outside the groups (ours wrote an empty /obs, no variables).
    for g in ["obs", "model", "obs,diag", "^o.*"] {
        same_as_nco(&["-O", "-x", "-g", g]);
    }
    // A path in -v is not restricted by -g (NCO 5.1.4): /tas names every variable
    // whose path ends in /tas.
    let (_s, _a, b) = same_as_nco(&["-O", "-g", "obs", "-v", "/tas"]);
    assert!(layout(&b).0.contains(&"/model/diag/tas".to_string()));
    same_as_nco(&["-O", "-x", "-g", "obs", "-v", "/tas"]);
    let (_s, _a, b) = same_as_nco(&["-O", "-x", "-g", "obs"]);
    assert_eq!(layout(&b).1, ["/", "/model", "/model/diag"]);
    assert!(layout(&b).0.contains(&"/tas".to_string()));
    // A coordinate range on a dimension name two groups define (/lat, /obs/lat): each
    // takes its own coordinate's values (ours stopped: no coordinate variable).
    same_as_nco(&["-O", "-d", "lat,0.,15."]);
    let (_s, _a, b) = same_as_nco(&["-O", "-d", "lat,0.,25.", "-v", "band,tas"]);
    let d = Dump::of(&b);
    let band = group(&d, "/obs")
        .vars
        .iter()
        .find(|v| v.name == "band")
        .unwrap();
    assert_eq!(band.numbers(), [1.0, 2.0]);
    assert_eq!(d.var("tas").numbers().len(), 4 * 4);
}

/// `--unn`: `-g G -v V` keeps V in every group and every variable of G (the union),
/// as NCO 5.1.4 does; without it, only the V of G; with `-x`, all but the union.
#[test]
fn union_of_groups_and_variables_as_nco() {
    let (_s, _a, b) = same_as_nco(&["-O", "-g", "obs", "-v", "tas", "--unn"]);
    let vars = layout(&b).0;
    for v in ["/tas", "/model/diag/tas", "/obs/band", "/obs/t2m", "/lat"] {
        assert!(vars.contains(&v.to_string()), "{v} in {vars:?}");
    }
    let (_s, _a, b) = same_as_nco(&["-O", "-C", "-g", "model", "-v", "t2m", "--union"]);
    assert_eq!(
        layout(&b).0,
        [
            "/model/diag/pr",
            "/model/diag/tas",
            "/model/label",
            "/model/level",
            "/model/ta",
            "/obs/t2m"
        ]
    );
    // With -x: every variable but the union; /obs goes with its variables.
    let (_s, _a, b) = same_as_nco(&["-O", "-x", "-g", "obs", "-v", "pr", "--unn"]);
    let (vars, groups) = layout(&b);
    for v in ["/model/diag/pr", "/obs/band", "/obs/t2m", "/obs/lat"] {
        assert!(!vars.contains(&v.to_string()), "{v} in {vars:?}");
    }
    for v in ["/tas", "/model/diag/tas", "/model/ta", "/time"] {
        assert!(vars.contains(&v.to_string()), "{v} not in {vars:?}");
    }
    assert!(!groups.contains(&"/obs".to_string()), "{groups:?}");
}

#[test]
fn group_path_editing_as_nco() {
    same_as_nco(&["-O", "-g", "model", "-G", ":"]);
    same_as_nco(&["-O", "-v", "ta", "-G", "new"]);
    same_as_nco(&["-O", "-g", "diag", "-G", ":1"]);
    let (_s, _a, b) = same_as_nco(&["-O", "-g", "diag", "-G", ":1"]);
    assert_eq!(layout(&b).1, ["/", "/diag"]);
}

#[test]
fn netcdf3_outputs_flatten_groups_and_convert_types_as_nco() {
    let (_s, _a, b) = same_as_nco(&["-O", "-3", "-v", "t2m,pr"]);
    assert_eq!(Dump::of(&b).groups.len(), 1);
    let (_s, _a, b) = same_as_nco(&["-O", "-3", "-v", "ucount,mask"]);
    let d = Dump::of(&b);
    for (v, t) in [("mask", "short"), ("ucount", "int")] {
        assert_eq!(d.var(v).ty, t, "{v}");
    }
    // Values outside NC_INT's range fail in NCO (NC_ERANGE) and here, naming the
    // variable, with no output.
    let (r, s) = (Scratch::new(), Scratch::new());
    let out = s.arg("o.nc");
    for v in ["big", "ubig", "uid"] {
        reference("ncks")
            .args(["-O", "-3", "-v", v, &gx(), &r.arg("o.nc")])
            .run()
            .code_is(1);
        nco("ncks")
            .args(["-O", "-3", "-v", v, &gx(), &out])
            .run()
            .clean_failure(v);
    }
    // NCO leaves its temporary file behind on these failures; ours nothing.
    if !is_nco() {
        assert!(s.files().is_empty(), "no output left: {:?}", s.files());
    }
}

#[test]
fn bad_group_requests_fail_cleanly() {
    let s = Scratch::new();
    let out = s.arg("o.nc");
    nco("ncks")
        .args(["-O", "-g", "nosuch", &gx(), &out])
        .run()
        .clean_failure("nosuch");
    nco("ncks")
        .args(["-O", "-g", "", &gx(), &out])
        .run()
        .clean_failure("empty");
    nco("ncks")
        .args(["-O", "-v", "/nosuch/x", &gx(), &out])
        .run()
        .clean_failure("/nosuch/x");
    // Two variables at one path once the groups are flattened.
    nco("ncks")
        .args(["-O", "-G", ":", &gx(), &out])
        .run()
        .clean_failure("lat");
    // NC_STRING variables cannot go into netCDF3 files, groups not into netCDF-4
    // classic-model ones (NCO fails too, with a libnetcdf error naming neither).
    if !is_nco() {
        nco("ncks")
            .args(["-O", "-3", "-v", "site", &gx(), &out])
            .run()
            .clean_failure("/obs/site");
        nco("ncks")
            .args(["-O", "-7", "-x", "-v", "city,label,site", &gx(), &out])
            .run()
            .clean_failure("groups");
    }
    // NCO leaves its temporary file behind on these failures; ours nothing.
    if !is_nco() {
        assert!(s.files().is_empty(), "no output left: {:?}", s.files());
    }
}

/// Group `path` of a dump. Panics when absent.
#[track_caller]
fn group<'a>(d: &'a Dump, path: &str) -> &'a nco_tests::dump::Group {
    d.groups
        .iter()
        .find(|g| g.path == path)
        .unwrap_or_else(|| panic!("no group {path}"))
}

/// The text values of variable `var` of group `path` (`_` where ncdump prints a fill
/// value: the empty string is NC_STRING's default fill).
#[track_caller]
fn texts(d: &Dump, path: &str, var: &str) -> Vec<String> {
    let v = group(d, path)
        .vars
        .iter()
        .find(|v| v.name == var)
        .unwrap_or_else(|| panic!("no variable {path}/{var}"));
    assert_eq!(v.ty, "string", "{path}/{var}");
    v.data
        .iter()
        .map(|x| match x {
            nco_tests::dump::Value::Text(t) => t.clone(),
            nco_tests::dump::Value::Fill => "_".to_string(),
            other => panic!("{path}/{var}: {other:?} is not text"),
        })
        .collect()
}

#[test]
fn string_variables_in_groups_are_copied_subset_and_sliced_as_nco() {
    // A plain copy: the NC_STRING variables of the root and of the subgroups, and the
    // string attributes of a group (libnetcdf refused them before: "Invalid argument").
    let (_s, _a, b) = same_as_nco(&["-O"]);
    let d = Dump::of(&b);
    assert_eq!(texts(&d, "/obs", "site"), ["north", "_"]);
    assert_eq!(texts(&d, "/model", "label"), ["low", "mid"]);
    assert_eq!(
        texts(&d, "/", "city"),
        ["Santiago", "Quito", "Cairo \\\"old\\\""]
    );
    let members = group(&d, "/model")
        .attrs
        .iter()
        .find(|a| a.name == "members")
        .expect("/model:members");
    assert_eq!(members.ty, "string");
    assert_eq!(
        members.values,
        [
            nco_tests::dump::Value::Text("r1".into()),
            nco_tests::dump::Value::Text("r2".into())
        ]
    );
    // Extracted by path, and hyperslabbed along the group's own dimension.
    let (_s, _a, b) = same_as_nco(&["-O", "-v", "/obs/site", "-d", "station,1"]);
    let d = Dump::of(&b);
    assert_eq!(texts(&d, "/obs", "site"), ["_"]);
    let (_s, _a, b) = same_as_nco(&["-O", "-v", "label", "-d", "level,0"]);
    let d = Dump::of(&b);
    assert_eq!(texts(&d, "/model", "label"), ["low"]);
}

#[test]
fn operators_without_groups_refuse_files_with_groups() {
    // NCO handles groups in every operator; ours all but ncap2 (and ncrcat's --list
    // and --rec_apn) do, and these must say so rather than mix up /lat and /obs/lat
    // or drop the groups (issue 17).
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let g = gx();
    let (out, other) = (s.arg("out.nc"), s.arg("other.nc"));
    std::fs::copy(&g, &other).unwrap();
    let one_line = |op: &str, args: &[&str], file: &str| {
        let r = nco(op).args(args).run().clean_failure(file);
        let want = format!("{op}: ERROR {file}: groups are not supported yet by {op}");
        assert_eq!(r.stderr.trim_end(), want);
    };
    one_line("ncap2", &["-O", "-s", "x=1", &g, &out], &g);
    // ncrcat's station list and --rec_apn match variables by short name yet.
    let list = s.arg("stations.txt");
    std::fs::write(&list, "lat,0 lon,0\n").unwrap();
    let r = nco("ncrcat")
        .args(["--list", &list, &g, "-o", &out])
        .run()
        .clean_failure(&g);
    assert!(r
        .stderr
        .contains("groups are not supported yet by ncrcat --list"));
    std::fs::copy(&g, &other).unwrap();
    let before = std::fs::read(&other).unwrap();
    let r = nco("ncrcat")
        .args(["--rec_apn", &g, &other])
        .run()
        .clean_failure(&other);
    assert!(r
        .stderr
        .contains("groups are not supported yet by ncrcat --rec_apn"));
    assert_eq!(std::fs::read(&other).unwrap(), before);
    assert!(!std::path::Path::new(&out).exists(), "ncap2 wrote {out}");
}

/// ncatted and ncrename edit files with groups as NCO 5.1.4: a variable, dimension or
/// group name stands for every object of that name in any group (`tas` is `/tas` and
/// `/model/diag/tas`), a path for that one; ncatted on a group's name edits the group's
/// attributes, `group` every group's; ncrename `-g` renames groups, `var@att` in
/// every variable of the name, `group@att` or `/path@att` in that group, `.att` in
/// every group and variable that has it (a path in ncrename names that one object).
/// (Renaming a netCDF-4 coordinate and its dimension together: NCO's values turn to
/// fill values, README; left out.)
#[test]
fn editors_edit_groups_as_nco() {
    let s = Scratch::new();
    let cases: &[(&str, &[&str])] = &[
        ("ncatted", &["-a", "units,tas,o,c,degK"]),
        ("ncatted", &["-a", "note,global,o,c,hi"]),
        ("ncatted", &["-a", "units,,d,,"]),
        ("ncatted", &["-a", "long_name,^t.*,c,c,x"]),
        ("ncatted", &["-a", "_FillValue,t2m,o,l,-5"]),
        ("ncatted", &["-a", "source,model,o,c,new"]),
        ("ncatted", &["-a", "units,/model/diag/tas,o,c,C"]),
        ("ncatted", &["-a", "_FillValue,tas,m,f,-999"]),
        ("ncrename", &["-v", "tas,tsurf"]),
        ("ncrename", &["-d", "lat,latitude"]),
        ("ncrename", &["-v", "/obs/t2m,t2"]),
        ("ncrename", &["-g", "obs,observations"]),
        ("ncrename", &["-g", ".nosuch,x"]),
        ("ncrename", &["-a", "tas@units,u2"]),
        ("ncrename", &["-d", "/obs/lat,olat"]),
        ("ncrename", &["-v", "/tas,tt"]),
        ("ncrename", &["-a", ".units,u"]),
        ("ncrename", &["-a", ".source,s2"]),
        ("ncrename", &["-a", "/model@source,src"]),
        ("ncrename", &["-a", "model@source,src"]),
        ("ncrename", &["-a", "/model/diag@note,n2"]),
        ("ncrename", &["-a", "/tas@units,uu"]),
        ("ncatted", &["-a", "note,group,o,c,hi"]),
        ("ncatted", &["-a", "note,group,d,,"]),
    ];
    for &(op, args) in cases {
        let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
        std::fs::copy(gx(), &a).unwrap();
        std::fs::copy(gx(), &b).unwrap();
        reference(op).args(args).arg(&a).succeeds();
        nco(op).args(args).arg(&b).succeeds();
        let d = compare(&a, &b).differences();
        assert!(d.is_empty(), "{op} {args:?}: differs from NCO: {d:?}");
    }
    // Without `@` or `.`, every group and variable must have the attribute (NCO).
    for args in [["-a", "title,t"], ["-a", "note,nn"]] {
        let f = s.arg("bad.nc");
        std::fs::copy(gx(), &f).unwrap();
        let before = std::fs::read(&f).unwrap();
        nco("ncrename").args(args).arg(&f).fails_with_code(1);
        // NCO's failed ncrename has changed the file (README); ours leaves it.
        if !is_nco() {
            assert!(
                std::fs::read(&f).unwrap() == before,
                "{args:?} changed the file"
            );
        }
    }
    let out = s.arg("renamed.nc");
    std::fs::copy(gx(), &out).unwrap();
    nco("ncrename")
        .args(["-v", "tas,tsurf", "-g", "obs,observations", &out])
        .succeeds();
    let (vars, groups) = layout(&out);
    for v in ["/tsurf", "/model/diag/tsurf", "/observations/t2m"] {
        assert!(vars.contains(&v.to_string()), "{v} not in {vars:?}");
    }
    assert!(!groups.contains(&"/obs".to_string()), "{groups:?}");
}

/// ncks prints a file with groups as NCO 5.1.4 does, byte for byte: CDL (each group
/// nested in its parent, its dimensions, variables, attributes and data, sections
/// after blank lines as NCO spaces them), JSON (`"groups"` objects) and the
/// traditional style (group attributes after the global ones, a variable outside the
/// root after a line with its path, dimensions of other groups by path, coordinate
/// values from the coordinate in scope: `/obs/lat`, not `/lat`), for the whole
/// file, metadata, data, and selections by variable, path and group (a group is
/// shown when a printed variable is in it or below it, or `-g` selects it without
/// `-v`); string data with quotes escaped.
#[test]
fn printing_shows_groups_as_nco() {
    let g = gx();
    let cases: &[&[&str]] = &[
        &[],
        &["-m"],
        &["-M"],
        &["-H"],
        &["-v", "ta"],
        &["-v", "tas"],
        &["-v", "/tas"],
        &["-m", "-v", "pr"],
        &["-H", "-v", "pr"],
        &["-C", "-v", "ta"],
        &["-C", "-v", "t2m"],
        &["-g", "obs"],
        &["-g", "diag"],
        &["-g", "empty"],
        &["-v", "scalar"],
        &["-M", "-v", "scalar"],
        &["-d", "time,1,2", "-v", "ta"],
        &["-v", "code,label,city"],
        &["--json"],
        &["--json", "-v", "ta,pr"],
        &["--json", "-m"],
        &["--json", "-M"],
        &["--json", "-g", "empty"],
        &["--json", "-H", "-g", "obs"],
        &["--trd"],
        &["--trd", "-m"],
        &["--trd", "-M"],
        &["--trd", "-v", "tas"],
        &["--trd", "-g", "obs"],
        &["--trd", "-C", "-v", "t2m"],
        &["--trd", "-V", "-v", "t2m"],
        &["--trd", "-s", "%g ", "-v", "pr"],
        &[
            "--trd",
            "-d",
            "time,1,2",
            "-d",
            "lat,0",
            "-v",
            "pr,t2m,band",
        ],
    ];
    for &args in cases {
        let theirs = reference("ncks").args(args).arg(&g).succeeds();
        let ours = nco("ncks").args(args).arg(&g).succeeds();
        assert!(
            ours.stdout == theirs.stdout,
            "ncks {args:?}: stdout differs from NCO's:\n{}\n---- NCO:\n{}",
            ours.stdout,
            theirs.stdout
        );
    }
    let whole = nco("ncks").arg(&g).succeeds().stdout;
    for line in [
        "  group: model {",
        "    group: diag {",
        "      data:",
        "        pr = ",
        "    } // group /model/diag",
        "  } // group /empty",
        r#"    city = "Santiago", "Quito", "Cairo \"old\"" ;"#,
    ] {
        assert!(
            whole.lines().any(|l| l == line),
            "no line {line:?} in\n{whole}"
        );
    }
    // /obs/band's coordinate is /obs/lat (10, 20), not /lat (-30, 0, 30).
    let trd = nco("ncks")
        .args(["--trd", "-v", "band"])
        .arg(&g)
        .succeeds()
        .stdout;
    for line in [
        "/obs/band",
        "band dimension 0: lat, size = 2 NC_FLOAT (Coordinate is lat)",
        "lat[1]=20 band[1]=2 (no units)",
    ] {
        assert!(trd.lines().any(|l| l == line), "no line {line:?} in\n{trd}");
    }
}

/// A second and a third groups file for the record operators: later times, other
/// values, and (the third) the times in days since another epoch.
fn later_groups_files(s: &Scratch) -> (String, String) {
    let cdl = std::fs::read_to_string(nco_tests::data_dir().join("groups.cdl")).unwrap();
    let second = cdl
        .replace("time = 0, 6, 12, 18 ;", "time = 24, 30, 36, 42 ;")
        .replace("t2m = 27315", "t2m = 27415")
        .replace("pr = 0, 1, 2", "pr = 5, 1, 2");
    let third = cdl
        .replace("hours since 2020-01-01", "days since 2020-01-03")
        .replace("time = 0, 6, 12, 18 ;", "time = 0, 0.25, 0.5, 0.75 ;");
    let mut out = Vec::new();
    for (name, text) in [("g2", second), ("g3", third)] {
        let c = s.path(&format!("{name}.cdl"));
        std::fs::write(&c, text).unwrap();
        let nc = s.arg(&format!("{name}.nc"));
        tool("ncgen")
            .args(["-k", "nc4", "-o", &nc])
            .arg(&c)
            .succeeds();
        out.push(nc);
    }
    (out[0].clone(), out[1].clone())
}

/// ncra and ncrcat over files with groups give NCO 5.1.4's file: every group kept
/// (one with attributes only too, without -v), each variable matched across the files
/// by its path (`/tas` and `/model/diag/tas` apart), group variables on the root's
/// record dimension averaged or concatenated, later files' times converted, with
/// `-v`, `-g`, `-C`, record hyperslabs, `--mro`, `-y`, `-L`. NCO's ncrcat writes
/// `cell_methods = "time: mean"` (README), removed before comparing.
#[test]
fn record_operators_keep_groups_as_nco() {
    let s = Scratch::new();
    let (g2, g3) = later_groups_files(&s);
    let g = gx();
    let cases: &[&[&str]] = &[
        &[],
        &["-v", "ta,t2m"],
        &["-v", "/tas"],
        &["-g", "obs"],
        &["-C", "-v", "pr"],
        &["-d", "time,0,,2"],
        &["--mro", "-d", "time,0,,2,2"],
        &["-x", "-g", "obs"],
        &["-d", "lat,0.,15."],
        &["-y", "max"],
        &["-y", "ttl"],
        &["-L", "1"],
    ];
    for op in ["ncra", "ncrcat"] {
        for &args in cases {
            let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
            for (cmd, out) in [(reference(op), &a), (nco(op), &b)] {
                cmd.arg("-O")
                    .args(args)
                    .args([&g, &g2, &g3])
                    .arg(out)
                    .succeeds();
                if op == "ncrcat" {
                    reference("ncatted")
                        .args(["-O", "-h", "-a", "cell_methods,,d,,"])
                        .arg(out)
                        .succeeds();
                }
            }
            let d = compare(&a, &b).differences();
            assert!(d.is_empty(), "{op} {args:?}: differs from NCO: {d:?}");
        }
    }
    // The group variables were averaged: /obs/t2m over 12 records, its fill skipped.
    let out = s.arg("mean.nc");
    nco("ncra")
        .args(["-O", "-v", "t2m", &g, &g2, &g3, &out])
        .succeeds();
    let d = Dump::of(&out);
    let t2m = group(&d, "/obs")
        .vars
        .iter()
        .find(|v| v.name == "t2m")
        .expect("/obs/t2m")
        .numbers();
    assert_eq!(t2m.len(), 2, "{t2m:?}");
    let want0: f64 = (27315.0 + 27415.0 + 27315.0 + 3.0 * (27319.0 + 27321.0)) / 9.0;
    assert!((t2m[0] - want0.round()).abs() < 0.5, "{t2m:?} vs {want0}");
}

/// nces and ncecat over members with groups give NCO 5.1.4's file: every group kept,
/// each variable matched across the members by its path, averaged (or stacked along
/// the new record dimension), with `-v`, `-g`, `-C`, hyperslabs, `-y`, `-L`. The
/// 64-bit variables `big` and `ubig` are left out: NCO's mean of 18e18 (NC_UINT64)
/// three times is 9223372036854775808, ours 18e18.
#[test]
fn ensemble_operators_keep_groups_as_nco() {
    let s = Scratch::new();
    let (g2, g3) = later_groups_files(&s);
    let g = gx();
    let cases: &[&[&str]] = &[
        &["-x", "-v", "big,ubig"],
        &["-v", "ta,t2m"],
        &["-v", "/tas"],
        &["-g", "obs"],
        &["-C", "-v", "pr"],
        &["-d", "time,1,2", "-v", "tas,pr,t2m"],
        &["-L", "1", "-v", "ta,pr,site"],
    ];
    for op in ["nces", "ncecat"] {
        for &args in cases
            .iter()
            .chain([&["-y", "max", "-v", "ta,pr,t2m"][..]].iter())
        {
            if op == "ncecat" && args.contains(&"-y") {
                continue;
            }
            let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
            for (cmd, out) in [(reference(op), &a), (nco(op), &b)] {
                cmd.arg("-O")
                    .args(args)
                    .args([&g, &g2, &g3])
                    .arg(out)
                    .succeeds();
            }
            let d = compare(&a, &b).differences();
            assert!(d.is_empty(), "{op} {args:?}: differs from NCO: {d:?}");
        }
    }
    // /obs/t2m averaged over the members (27315, 27415, 27315 at the first element).
    let out = s.arg("mean.nc");
    nco("nces")
        .args(["-O", "-v", "t2m", &g, &g2, &g3, &out])
        .succeeds();
    let d = Dump::of(&out);
    let t2m = group(&d, "/obs")
        .vars
        .iter()
        .find(|v| v.name == "t2m")
        .expect("/obs/t2m")
        .numbers();
    assert_eq!(t2m[0], 27348.0, "{t2m:?}");
}

/// ncwa on a file with groups gives NCO 5.1.4's file: every group kept, `-a NAME`
/// reducing every dimension of that name in any group (`/lat` and `/obs/lat`), a path
/// only that one, with `-b`, `-y`, `-C`, `-g`. (NCO crashes, SIGSEGV, on this file
/// unless its string variables are left out; the char variable `code`, which NCO
/// averages as numbers, is left out too.)
#[test]
fn ncwa_keeps_groups_as_nco() {
    let g = gx();
    let cases: &[&[&str]] = &[
        &["-x", "-v", "city,label,site,code"],
        &["-a", "lat", "-v", "tas,band,pr,t2m"],
        &["-a", "/lat", "-v", "tas,band"],
        &["-a", "time", "-v", "ta,t2m"],
        &["-b", "-a", "time", "-v", "tas,t2m"],
        &["-y", "max", "-a", "time,lat", "-v", "ta,pr"],
        &["-a", "lon", "-v", "tas,ta"],
        &["-C", "-v", "pr"],
        &["-g", "diag"],
    ];
    let s = Scratch::new();
    for &args in cases {
        let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
        for (cmd, out) in [(reference("ncwa"), &a), (nco("ncwa"), &b)] {
            cmd.arg("-O").args(args).arg(&g).arg(out).succeeds();
        }
        let d = compare(&a, &b).differences();
        assert!(d.is_empty(), "ncwa {args:?}: differs from NCO: {d:?}");
    }
    // /obs/band (on /obs/lat: 1, 2) averaged by -a lat, as /tas is over /lat.
    let out = s.arg("mean.nc");
    nco("ncwa")
        .args(["-O", "-a", "lat", "-v", "band", &g, &out])
        .succeeds();
    let d = Dump::of(&out);
    let band = group(&d, "/obs")
        .vars
        .iter()
        .find(|v| v.name == "band")
        .unwrap();
    assert!(band.dims.is_empty(), "{band:?}");
    assert_eq!(band.numbers(), [2.0], "short mean of 1, 2 rounds to 2");
}

/// ncpdq on a file with groups gives NCO 5.1.4's file: every group kept, `-a NAME`
/// permuting or reversing every dimension of that name in any group (`/lat` and
/// `/obs/lat`), packing as NCO (variables without missing values: ours packs those
/// differently, README). `-g G -x -v V` excludes V in G only, keeping everything else,
/// as NCO (ours kept only the groups G: ncks and every operator).
#[test]
fn ncpdq_keeps_groups_as_nco() {
    let g = gx();
    let cases: &[&[&str]] = &[
        &["-a", "lat,lon", "-v", "tas,ta,band"],
        &["-a", "-lat", "-v", "tas,band,t2m"],
        &["-a", "-time", "-v", "pr,t2m"],
        &["-a", "-lat,-lon", "-x", "-v", "city,label,site,code"],
        &["-a", "time,lat", "-v", "t2m,band,pr"],
        &["-P", "all_new", "-v", "ta,band,level"],
    ];
    let s = Scratch::new();
    for &args in cases {
        let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
        for (cmd, out) in [(reference("ncpdq"), &a), (nco("ncpdq"), &b)] {
            cmd.arg("-O").args(args).arg(&g).arg(out).succeeds();
        }
        let d = compare(&a, &b).differences();
        assert!(d.is_empty(), "ncpdq {args:?}: differs from NCO: {d:?}");
    }
    for op in ["ncks", "ncra"] {
        let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
        let args = ["-O", "-g", "obs", "-x", "-v", "site"];
        reference(op).args(args).arg(&g).arg(&a).succeeds();
        nco(op).args(args).arg(&g).arg(&b).succeeds();
        let d = compare(&a, &b).differences();
        assert!(d.is_empty(), "{op} {args:?}: differs from NCO: {d:?}");
        let (vars, _) = layout(&b);
        assert!(
            vars.contains(&"/model/ta".to_string()) && !vars.contains(&"/obs/site".to_string())
        );
    }
    // /obs/band reversed with -a -lat, as /tas is along /lat.
    let out = s.arg("rev.nc");
    nco("ncpdq")
        .args(["-O", "-a", "-lat", "-v", "band", &g, &out])
        .succeeds();
    let d = Dump::of(&out);
    let band = group(&d, "/obs")
        .vars
        .iter()
        .find(|v| v.name == "band")
        .unwrap();
    assert_eq!(band.numbers(), [2.0, 1.0]);
}

/// ncbo and ncflint on two files with groups give NCO 5.1.4's file: every group of
/// the first kept, each variable matched in the second by its path, with `-v`, `-g`,
/// `-C`, hyperslabs. NCO's ncbo drops the attributes of the groups below the root
/// (`/model:source`...), ours keeps them (README); the 64-bit `big`, `ubig` are left
/// out (NCO's NC_UINT64 arithmetic is wrong above 2^63).
#[test]
fn two_file_operators_keep_groups_as_nco() {
    let s = Scratch::new();
    let (g2, _) = later_groups_files(&s);
    let g = gx();
    let cases: &[&[&str]] = &[
        &["-x", "-v", "city,label,site,code,big,ubig"],
        &["-v", "ta,t2m"],
        &["-v", "/tas"],
        &["-g", "obs", "-v", "t2m,band"],
        &["-C", "-v", "pr"],
        &["-d", "time,1,2", "-v", "tas,pr,t2m"],
    ];
    for op in ["ncbo", "ncflint"] {
        for &args in cases {
            let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
            for (cmd, out) in [(reference(op), &a), (nco(op), &b)] {
                cmd.arg("-O").args(args).args([&g, &g2]).arg(out).succeeds();
            }
            let d: Vec<String> = compare(&a, &b)
                .differences()
                .into_iter()
                .filter(|d| {
                    !(op == "ncbo"
                        && !is_nco()
                        && d.starts_with("group /model")
                        && d.ends_with("only in the second file"))
                })
                .collect();
            assert!(d.is_empty(), "{op} {args:?}: differs from NCO: {d:?}");
        }
    }
    // The difference of /obs/t2m: 27315 - 27415 at the first element; the group
    // attributes kept.
    let out = s.arg("diff.nc");
    nco("ncbo")
        .args(["-O", "-v", "t2m,ta", &g, &g2, &out])
        .succeeds();
    let d = Dump::of(&out);
    let t2m = group(&d, "/obs")
        .vars
        .iter()
        .find(|v| v.name == "t2m")
        .unwrap();
    assert_eq!(t2m.numbers()[0], -100.0);
    if !is_nco() {
        assert!(group(&d, "/model").attrs.iter().any(|a| a.name == "source"));
    }
}

/// `-A` of fewer records into a netCDF-4 file keeps the file's later records (NCO
/// 5.1.4's rule): ours wrote the new records after the old ones (6 records from 4 + 2)
/// when its chunk writer saw records written twice. NCO leaves a stray `eulaVlliF_`
/// attribute in place of `_FillValue` there (its temporary name for it), so its fill
/// values read as numbers: compared as numbers, fill values by their value.
#[test]
fn netcdf4_append_of_fewer_records_keeps_the_later_ones_as_nco() {
    let s = Scratch::new();
    let (g2, _) = later_groups_files(&s);
    let mut dumps = Vec::new();
    for (theirs, name) in [(true, "nco.nc"), (false, "ours.nc")] {
        let out = s.arg(name);
        std::fs::copy(gx(), &out).unwrap();
        let cmd = if theirs {
            reference("ncks")
        } else {
            nco("ncks")
        };
        cmd.args(["-A", "-d", "time,1,2", "-v", "tas,t2m", &g2, &out])
            .succeeds();
        dumps.push(Dump::of(&out));
    }
    let values = |d: &Dump, path: &str, var: &str, fill: f64| -> Vec<f64> {
        let v = group(d, path).vars.iter().find(|v| v.name == var).unwrap();
        v.numbers()
            .into_iter()
            .map(|x| if x.is_nan() { fill } else { x })
            .collect()
    };
    for (path, var, fill) in [
        ("/", "time", 0.0),
        ("/", "tas", -1e30),
        ("/obs", "t2m", -999.0),
    ] {
        let (a, b) = (
            values(&dumps[0], path, var, fill),
            values(&dumps[1], path, var, fill),
        );
        let same = a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(x, y)| (x - y).abs() <= 1e-6 * x.abs().max(1.0));
        assert!(same, "{path} {var}: NCO {a:?}, ours {b:?}");
    }
    assert_eq!(dumps[1].var("time").numbers(), [30.0, 36.0, 12.0, 18.0]);
    let t2m = values(&dumps[1], "/obs", "t2m", -999.0);
    assert_eq!(
        t2m,
        [-999.0, 27318.0, 27319.0, 27320.0, 27319.0, 27320.0, 27321.0, 27322.0]
    );
}
