//! ncrename project tests on our fixture (tests/data/fixture.cdl), classic and
//! netCDF-4. Most run the same command with NCO 5.1.4's ncrename (`reference`) on a
//! second copy and require equal files (`compare`, which ignores `history`); the rest
//! check hand-worked results and pass against NCO too (`NCO_RS_BIN_DIR=/usr/bin`),
//! except the documented differences, which return early for NCO: a renamed
//! netCDF-4 coordinate keeps its values (NCO's, through libnetcdf, reads back as fill
//! values, netcdf-c issue 597), groups below the root are refused, and the `@att` and
//! `var@.att` forms follow NCO's manual where NCO 5.1.4 fails.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nco_tests::{
    assert_same_bytes, compare, fixture_nc4, is_nco, ncdump, nco, reference, value, Scratch,
};

/// Two copies of the classic fixture, renamed in place by us and by NCO with `args`;
/// the files must be equal. Returns the scratch folder and our file.
#[track_caller]
fn same_as_nco(args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let (ours, theirs) = (s.copy_fixture("ours.nc"), s.copy_fixture("nco.nc"));
    nco("ncrename").args(args).arg(&ours).succeeds();
    reference("ncrename").args(args).arg(&theirs).succeeds();
    compare(&ours, &theirs).equal();
    (s, ours)
}

fn size(p: &str) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

fn inode(p: &str) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

#[test]
fn renames_a_variable_in_place() {
    let (_s, f) = same_as_nco(&["-h", "-v", "fld2,field"]);
    assert_eq!(
        value(&f, "field", "%g ", &[]),
        "1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5"
    );
}

#[test]
fn renames_a_dimension_and_its_coordinate_together() {
    let (_s, f) = same_as_nco(&["-h", "-d", "lat,latitude", "-v", "lat,latitude"]);
    let h = ncdump(&["-h"], &f);
    assert!(h.contains("float latitude(latitude) ;"), "{h}");
    assert!(h.contains("float fld3(latitude, lev, lon) ;"), "{h}");
    assert_eq!(value(&f, "latitude", "%g ", &[]), "-45 45");
}

#[test]
fn a_dimension_alone_leaves_its_variable_a_plain_one() {
    let (_s, f) = same_as_nco(&["-h", "-d", "lon,x"]);
    assert!(ncdump(&["-h"], &f).contains("float lon(x) ;"));
}

#[test]
fn renames_the_record_dimension_and_attributes() {
    same_as_nco(&["-h", "-d", "time,t", "-a", ".units,UNITS"]);
    same_as_nco(&["-h", "-a", "lat@units,U", "-a", "global@title,TITLE"]);
    same_as_nco(&["-h", "-a", "fld2@units,fld2@U"]);
    same_as_nco(&["-h", "-a", ".global@.nosuch,x", "-a", "/lat@long_name,ln"]);
}

#[test]
fn old_names_are_the_files_own_and_renamed_once() {
    let (_s, f) = same_as_nco(&["-h", "-v", "lat,lon2", "-v", "lon,lat"]);
    let h = ncdump(&["-h"], &f);
    assert!(
        h.contains("float lon2(lat) ;") && h.contains("float lat(lon) ;"),
        "{h}"
    );
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let before = std::fs::read(&f).unwrap();
    for args in [["-v", "lat,x", "-v", "x,y"], ["-v", "lat,x", "-v", "lat,y"]] {
        let r = nco("ncrename").args(args).arg(&f).run();
        if is_nco() {
            // NCO fails (after it renamed lat in place: it edits as it goes).
            assert_eq!(r.code, Some(1));
            std::fs::write(&f, &before).unwrap();
        } else {
            r.clean_failure(if args[3] == "x,y" {
                "x"
            } else {
                "renamed twice"
            });
            assert_same_bytes(Path::new(&f), &before);
        }
    }
}

#[test]
fn optional_names_may_be_absent() {
    let (_s, f) = same_as_nco(&["-h", "-v", ".nosuch,x", "-d", ".nodim,y", "-v", "sc_dbl,s"]);
    assert!(ncdump(&["-h"], &f).contains("double s ;"));
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let r = nco("ncrename")
        .args(["-h", "-v", ".nosuch,x", &f])
        .succeeds();
    // NCO writes its note on standard output.
    assert!(r.stderr.contains("nosuch") || is_nco() && r.stdout.contains("nosuch"));
}

#[test]
fn history_records_the_rename() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    nco("ncrename").args(["-v", "fld2,g", &f]).succeeds();
    let h = ncdump(&["-h"], &f);
    assert!(h.contains("ncrename -v fld2,g"), "{h}");
    assert!(h.contains(":NCO = \"netCDF Operators version 5.1.4"), "{h}");
    assert!(h.contains("created by ncgen"), "{h}");
}

#[test]
fn an_output_file_leaves_the_input_alone() {
    let s = Scratch::new();
    let f = s.copy_fixture("in.nc");
    let before = std::fs::read(&f).unwrap();
    let (out, theirs) = (s.arg("out.nc"), s.arg("nco.nc"));
    nco("ncrename")
        .args(["-h", "-v", "fld2,g", &f, &out])
        .succeeds();
    reference("ncrename")
        .args(["-h", "-v", "fld2,g", &f, &theirs])
        .succeeds();
    assert_same_bytes(Path::new(&f), &before);
    compare(&out, &theirs).equal();
    // An existing output needs -O.
    let old = std::fs::read(&out).unwrap();
    nco("ncrename")
        .args(["-h", "-v", "fld2,h", &f, &out])
        .run()
        .clean_failure("out.nc");
    assert_same_bytes(Path::new(&out), &old);
    nco("ncrename")
        .args(["-O", "-h", "-v", "fld2,h", &f, "-o", &out])
        .succeeds();
    assert!(ncdump(&["-h"], &out).contains("double h(lat, lon) ;"));
}

#[test]
fn a_header_with_room_is_rewritten_where_it_is() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let base = size(&f);
    // --hdr_pad leaves room after the header: the data moves once...
    nco("ncrename")
        .args(["-h", "--hdr_pad", "1000", "-v", "fld2,f2", &f])
        .succeeds();
    assert!(size(&f) >= base + 1000, "{} -> {}", base, size(&f));
    // ...and longer names later fit in place: same file, same size.
    let (ino, len) = (inode(&f), size(&f));
    nco("ncrename")
        .args([
            "-h",
            "-v",
            "f2,a_much_longer_name_for_the_field",
            "-d",
            "lat,latitude",
            &f,
        ])
        .succeeds();
    assert_eq!((inode(&f), size(&f)), (ino, len));
    assert_eq!(
        value(&f, "a_much_longer_name_for_the_field", "%g ", &[]),
        "1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5"
    );
    assert_eq!(
        value(&f, "fld_rec", "%d ", &[]),
        "10 20 30 40 50 60 70 80 90 100"
    );
}

#[test]
fn a_header_that_grows_past_its_room_moves_the_data() {
    let long = format!("fld2,{}", "n".repeat(200));
    let (_s, f) = same_as_nco(&["-h", "-v", &long, "-d", "time,a_longer_record_dimension"]);
    assert_eq!(
        value(
            &f,
            "PS",
            "%g ",
            &["-d", "a_longer_record_dimension,9", "-d", "lat,1"]
        ),
        "101409 101509 101609 101709"
    );
    // NCO's reader agrees.
    reference("ncks")
        .args([
            "-H",
            "-C",
            "--trd",
            "-v",
            "fld_rec",
            "-d",
            "a_longer_record_dimension,9",
            &f,
        ])
        .succeeds()
        .stdout_contains("fld_rec[9]=100");
}

#[test]
fn in_place_keeps_the_file_permissions() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let long = format!("fld2,{}", "n".repeat(250));
    nco("ncrename").args(["-h", "-v", &long, &f]).succeeds();
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, 0o640);
}

#[test]
fn netcdf4_coordinate_renames_keep_their_values() {
    if is_nco() {
        // NCO 5.1.4 through libnetcdf 4.9 writes fill values here (netcdf-c issue 597).
        return;
    }
    let s = Scratch::new();
    for args in [
        vec!["-d", "lat,latitude", "-v", "lat,latitude"],
        vec!["-v", "lat,latitude"],
        vec!["-d", "lat,latitude"],
    ] {
        let f = s.arg("f4.nc");
        std::fs::copy(fixture_nc4(), &f).unwrap();
        nco("ncrename").arg("-h").args(&args).arg(&f).succeeds();
        let coord = if args.contains(&"-v") {
            "latitude"
        } else {
            "lat"
        };
        assert_eq!(value(&f, coord, "%g ", &[]), "-45 45", "{args:?}");
        // Readable by ncdump and NCO, the rest intact, storage kept.
        let h = ncdump(&["-hs"], &f);
        assert!(
            h.contains("netCDF-4") || h.contains("_Format = \"netCDF-4\""),
            "{h}"
        );
        reference("ncks")
            .args([
                "-H", "-C", "--trd", "-v", "fld3", "-d", "lev,1", "-d", "lon,2", &f,
            ])
            .succeeds()
            .stdout_contains("fld3[")
            .stdout_contains("=112");
        let orig = ncdump(&["-hs"], &fixture_nc4().to_string_lossy());
        let deflated = |t: &str| t.matches("_DeflateLevel").count();
        assert_eq!(deflated(&h), deflated(&orig), "{args:?}");
        let other: Vec<String> = nco_tests::compare(&f, &fixture_nc4().to_string_lossy())
            .differences()
            .into_iter()
            .filter(|d| !d.contains("lat"))
            .collect();
        assert!(other.is_empty(), "{args:?}: {other:?}");
    }
}

#[test]
fn manual_forms_nco_refuses() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    nco("ncrename")
        .args(["-h", "-a", "@title,TITLE", "-a", "lat@.nosuch,x", &f])
        .succeeds();
    assert!(ncdump(&["-h"], &f).contains(":TITLE = \"nco-rs test fixture\""));
    nco("ncrename")
        .args(["-h", "-v", "lat,latitude", "-a", "lat@units,U", &f])
        .succeeds();
    assert!(ncdump(&["-h"], &f).contains("latitude:U = \"degrees_north\""));
}

#[test]
fn groups_are_refused_or_optional() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let before = std::fs::read(&f).unwrap();
    nco("ncrename")
        .args(["-g", "g1,g2", &f])
        .run()
        .clean_failure("g1");
    assert_same_bytes(Path::new(&f), &before);
    nco("ncrename").args(["-h", "-g", ".g1,g2", &f]).succeeds();
}

#[test]
fn netcdf4_groups_are_not_lost() {
    let s = Scratch::new();
    let cdl = s.path("g.cdl");
    std::fs::write(
        &cdl,
        "netcdf g { dimensions: x = 1 ; variables: int a(x) ; data: a = 1 ; \
         group: sub { variables: int b ; data: b = 2 ; } }",
    )
    .unwrap();
    let f = s.arg("g.nc");
    nco_tests::tool("ncgen")
        .args(["-k", "netCDF-4", "-o", &f])
        .arg(&cdl)
        .succeeds();
    nco("ncrename").args(["-v", "a,c", &f]).succeeds();
    let d = nco_tests::Dump::of(&f);
    let sub = d
        .groups
        .iter()
        .find(|g| g.path == "/sub")
        .expect("group /sub kept");
    assert_eq!(sub.vars[0].name, "b");
    assert_eq!(sub.vars[0].numbers(), [2.0]);
    assert_eq!(d.var("c").numbers(), [1.0]);
}

#[test]
fn bad_renames_are_one_line_errors_and_change_nothing() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let before = std::fs::read(&f).unwrap();
    for (args, needle, nco_needle) in [
        (vec!["-v", "nosuch,x"], "nosuch", "nosuch"),
        (vec!["-d", "nosuch,x"], "nosuch", "nosuch"),
        (vec!["-v", "lat,lon"], "lon", "lon"),
        (vec!["-d", "lat,lon"], "lon", "lon"),
        (vec!["-v", "lat,lat"], "lat", "lat"),
        (vec!["-a", "units,U"], "units", "units"),
        (vec!["-a", "lat@units,long_name"], "long_name", "long_name"),
        (vec!["-a", "nosuch@units,U"], "nosuch", "nosuch"),
        (vec!["-a", "lat@nosuch,U"], "nosuch", "nosuch"),
        (vec!["-v", "lat"], "-v", "ncrename"),
        (vec!["-v", "lat,.x"], ".x", "illegal characters"),
    ] {
        let want = if is_nco() { nco_needle } else { needle };
        let r = nco("ncrename").args(&args).arg(&f).run();
        if is_nco() && args == ["-v", "lat"] {
            // NCO prints its usage and exits 1.
            assert_eq!(r.code, Some(1), "{args:?}");
            continue;
        }
        r.clean_failure(want);
        assert_same_bytes(Path::new(&f), &before);
    }
    // Nothing to rename, a missing file, appending.
    if !is_nco() {
        nco("ncrename")
            .arg(&f)
            .run()
            .clean_failure("nothing to rename");
        nco("ncrename")
            .args(["-A", "-v", "lat,x", &f, &s.arg("o.nc")])
            .run()
            .clean_failure("-A");
    }
    nco("ncrename")
        .args(["-v", "lat,x", &s.arg("missing.nc")])
        .run()
        .clean_failure("missing.nc");
    assert_same_bytes(Path::new(&f), &before);
    assert_eq!(s.files(), ["f.nc"]);
}

/// `--gaa name=value` adds global text attributes beside the renames, as NCO's does;
/// alone it is refused (nothing to rename), as by NCO.
#[test]
fn gaa_adds_global_attributes_beside_renames() {
    let s = Scratch::new();
    let (f, out) = (s.copy_fixture("f.nc"), s.arg("out.nc"));
    nco("ncrename")
        .args(["-h", "--gaa", "k=v#j=w", "-v", "PS,ps", &f, &out])
        .succeeds();
    let header = ncdump(&["-h"], &out);
    for line in ["float ps(", ":k = \"v\" ;", ":j = \"w\" ;"] {
        assert!(header.contains(line), "{line} in\n{header}");
    }
    let want = if is_nco() {
        "must specify something"
    } else {
        "nothing to rename"
    };
    nco("ncrename")
        .args(["-h", "--gaa", "k=v", &f])
        .run()
        .clean_failure(want);
}
