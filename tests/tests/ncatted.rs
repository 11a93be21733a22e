//! ncatted project tests on our fixture (tests/data/fixture.cdl), classic and
//! netCDF-4. Most run the same edits with NCO 5.1.4's ncatted (`reference`) on a second
//! copy and require equal files (`compare`, which ignores `history`), then check the
//! edited values by hand; the rest check hand-worked results and pass against NCO too
//! (`NCO_RS_BIN_DIR=/usr/bin`), except where noted: our failures leave the file as it
//! was (NCO edits as it goes), and our messages are one line.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nco_tests::{
    assert_same_bytes, compare, fixture, fixture_nc4, is_nco, ncdump, nco, reference, value,
    Scratch,
};

/// Two copies of `fixture` (a path), edited in place by us and by NCO with `args`; the
/// files must be equal. Returns the scratch folder and our file.
#[track_caller]
fn same_on(fixture: &Path, args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let (ours, theirs) = (s.arg("ours.nc"), s.arg("nco.nc"));
    std::fs::copy(fixture, &ours).unwrap();
    std::fs::copy(fixture, &theirs).unwrap();
    nco("ncatted").args(args).arg(&ours).succeeds();
    reference("ncatted").args(args).arg(&theirs).succeeds();
    compare(&ours, &theirs).equal();
    (s, ours)
}

/// [`same_on`] the classic fixture.
#[track_caller]
fn same_as_nco(args: &[&str]) -> (Scratch, String) {
    same_on(fixture(), args)
}

/// The values of `var` read as numbers, its `_FillValue` deleted first in a copy
/// (so that fill values print as numbers, not `_`).
fn raw(f: &str, var: &str, format: &str) -> String {
    let s = Scratch::new();
    let c = s.arg("raw.nc");
    std::fs::copy(f, &c).unwrap();
    let del = format!("_FillValue,{var},d,,");
    reference("ncatted").args(["-h", "-a", &del, &c]).succeeds();
    value(&c, var, format, &[])
}

fn header(f: &str) -> String {
    ncdump(&["-h"], f)
}

fn inode(p: &str) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

#[test]
fn every_mode() {
    let (_s, f) = same_as_nco(&["-h", "-a", "units,lat,a,c,_x", "-a", "units,lon,p,c,pre_"]);
    let h = header(&f);
    assert!(h.contains("lat:units = \"degrees_north_x\""), "{h}");
    assert!(h.contains("lon:units = \"pre_degrees_east\""), "{h}");
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "units,lat,c,c,no",
        "-a",
        "foo,lat,c,d,1.5",
        "-a",
        "bar,lat,m,d,1",
        "-a",
        "long_name,lat,m,f,2",
        "-a",
        "baz,lat,n,c,x",
        "-a",
        "units,lon,n,c,_n",
    ]);
    let h = header(&f);
    assert!(h.contains("lat:units = \"degrees_north\""), "{h}");
    assert!(h.contains("lat:foo = 1.5 ;"), "{h}");
    assert!(h.contains("lat:long_name = 2.f ;"), "{h}");
    assert!(!h.contains("bar") && !h.contains("baz"), "{h}");
    assert!(h.contains("lon:units = \"degrees_east_n\""), "{h}");
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "units,lat,d,,",
        "-a",
        "nosuch,lat,d,,",
        "-a",
        "title,global,o,c,T",
        "-a",
        "new,global,o,d,1,2,3",
    ]);
    let h = header(&f);
    assert!(!h.contains("lat:units"), "{h}");
    assert!(h.contains(":title = \"T\""), "{h}");
    assert!(h.contains(":new = 1., 2., 3. ;"), "{h}");
}

#[test]
fn every_classic_type_and_how_values_are_read() {
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "f,sc_int,o,f,1e40,nan,-1.5",
        "-a",
        "d,sc_int,o,d,0x1p3,1e-3,.5",
        "-a",
        "l,sc_int,o,l, 5,-7",
        "-a",
        "i,sc_int,o,i,+3",
        "-a",
        "s,sc_int,o,s,70000",
        "-a",
        "b,sc_int,o,b,200",
        "-a",
        "c,sc_int,o,c,a,b",
        "-a",
        "e,sc_int,o,c,",
        "-a",
        "float,sc_int,o,float,1",
        "-a",
        "double,sc_int,o,double,2",
        "-a",
        "short,sc_int,o,short,3",
        "-a",
        "byte,sc_int,o,byte,4",
        "-a",
        "int,sc_int,o,int,5",
    ]);
    let h = header(&f);
    for want in [
        "sc_int:f = Infinityf, NaNf, -1.5f ;",
        "sc_int:d = 8., 0.001, 0.5 ;",
        "sc_int:l = 5, -7 ;",
        "sc_int:i = 3 ;",
        "sc_int:s = 4464s ;",
        "sc_int:b = -56b ;",
        "sc_int:c = \"a,b\" ;",
        "sc_int:e = \"\" ;",
        "sc_int:float = 1.f ;",
        "sc_int:double = 2. ;",
        "sc_int:short = 3s ;",
        "sc_int:byte = 4b ;",
        "sc_int:int = 5 ;",
    ] {
        assert!(h.contains(want), "{want}\n{h}");
    }
}

#[test]
fn netcdf4_types_and_strings() {
    let (_s, f) = same_on(
        fixture_nc4(),
        &[
            "-h",
            "-a",
            "ub,sc_int,o,ub,1,255",
            "-a",
            "us,sc_int,o,us,2",
            "-a",
            "u,sc_int,o,u,3",
            "-a",
            "ui,sc_int,o,ui,4",
            "-a",
            "ul,sc_int,o,ul,5",
            "-a",
            "ll,sc_int,o,ll,-6",
            "-a",
            "int64,sc_int,o,int64,7",
            "-a",
            "ull,sc_int,o,ull,8",
            "-a",
            "uint64,sc_int,o,uint64,9",
            "-a",
            "sng,sc_int,o,sng,a,b",
            "-a",
            "string,sc_int,o,string,c",
            "-a",
            "units,lat,a,c,_x",
            "-a",
            "units,fld2,o,sng,m",
        ],
    );
    let h = header(&f);
    for want in [
        "sc_int:ub = 1UB, 255UB ;",
        "sc_int:us = 2US ;",
        "sc_int:u = 3U ;",
        "sc_int:ui = 4U ;",
        "sc_int:ul = 5U ;",
        "sc_int:ll = -6LL ;",
        "sc_int:int64 = 7LL ;",
        "sc_int:ull = 8ULL ;",
        "sc_int:uint64 = 9ULL ;",
        "string sc_int:sng = \"a\", \"b\" ;",
        "string sc_int:string = \"c\" ;",
        "lat:units = \"degrees_north_x\" ;",
        "string fld2:units = \"m\" ;",
    ] {
        assert!(h.contains(want), "{want}\n{h}");
    }
}

#[test]
fn escapes_in_text_values() {
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        r#"t,sc_int,o,c,a\tb\nc\\d\"e\'f\?g\ah"#,
        "-a",
        r"k,sc_int,o,c,keep\x\,",
    ]);
    let h = header(&f);
    assert!(h.contains(r#"sc_int:t = "a\tb\n","#), "{h}");
    assert!(h.contains(r#""c\\d\"e\'f?g\007h" ;"#), "{h}");
    assert!(h.contains(r#"sc_int:k = "keep\\x\\," ;"#), "{h}");
}

#[test]
fn which_variables_and_attributes_an_edit_touches() {
    // Every variable, never the global attributes.
    let (_s, f) = same_as_nco(&["-h", "-a", "units,,o,c,U"]);
    let h = header(&f);
    assert!(h.contains("fld1_int:units = \"U\""), "{h}");
    assert!(!h.contains("\t\t:units"), "{h}");
    // global, group, any case.
    same_as_nco(&["-h", "-a", "title,GLOBAL,o,c,Q", "-a", "x,Group,o,c,y"]);
    // Regular expressions search each name (stn_lat too); plain names are exact.
    let (_s, f) = same_as_nco(&["-h", "-a", "units,lat|lon,o,c,Z", "-a", "u,^l.*,o,c,L"]);
    let h = header(&f);
    assert!(h.contains("stn_lat:units = \"Z\""), "{h}");
    assert!(h.contains("lev_bnd:u = \"L\""), "{h}");
    assert!(!h.contains("fld2:u ="), "{h}");
    // An empty attribute name: every attribute the object has.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        ",lat,m,c,Q",
        "-a",
        ",lon,a,c,Q",
        "-a",
        ",global,d,,",
    ]);
    let h = header(&f);
    assert!(
        h.contains("lat:units = \"Q\"") && h.contains("lat:long_name = \"Q\""),
        "{h}"
    );
    assert!(h.contains("lon:units = \"degrees_eastQ\""), "{h}");
    assert!(!h.contains(":title"), "{h}");
    // Attribute expressions in d, m and n; literal names in the other modes.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "u.*,lat,d,,",
        "-a",
        "l.*,lon,m,c,Q",
        "-a",
        "l.*,lev,a,c,Q",
        "-a",
        "title|Conv.*,global,d,,",
    ]);
    let h = header(&f);
    assert!(!h.contains("lat:units"), "{h}");
    assert!(h.contains("lon:long_name = \"Q\""), "{h}");
    assert!(h.contains("lev:l.\\* = \"Q\""), "{h}");
    assert!(!h.contains(":title") && !h.contains(":Conventions"), "{h}");
    // -t: every variable of the type only; expressions and names whatever the type.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-t",
        "-a",
        "foo,,o,d,2",
        "-a",
        "bar,.*,o,s,1",
        "-a",
        "baz,lat,o,d,3",
    ]);
    let h = header(&f);
    assert!(
        h.contains("gw:foo = 2. ;") && !h.contains("\tlat:foo"),
        "{h}"
    );
    assert!(
        h.contains("fld1_sht:bar = 1s ;") && h.contains("fld1_int:bar = 1s ;"),
        "{h}"
    );
    assert!(h.contains("lat:baz = 3. ;"), "{h}");
}

#[test]
fn a_new_fill_value_rewrites_the_old_one_in_the_data() {
    // m and o on a variable with a _FillValue: the old fill becomes the new one.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "_FillValue,fld_fill,m,f,-1",
        "-a",
        "_FillValue,rec_int_fill,o,i,7",
        "-a",
        "_FillValue,rec_pck,o,s,3",
    ]);
    assert_eq!(raw(&f, "fld_fill", "%g "), "1 -1 3 -1");
    assert_eq!(raw(&f, "rec_int_fill", "%d "), "7 2 3 4 5 6 7 8 7 7");
    assert_eq!(raw(&f, "rec_pck", "%d "), "0 2 4 6 8 10 12 14 16 3");
    // Another type for the attribute: kept as given, the data converted.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "_FillValue,fld_fill,o,d,-2",
        "-a",
        "_FillValue,rec_int_fill,m,s,4",
    ]);
    assert!(header(&f).contains("fld_fill:_FillValue = -2. ;"));
    assert_eq!(raw(&f, "fld_fill", "%g "), "1 -2 3 -2");
    assert_eq!(raw(&f, "rec_int_fill", "%d "), "4 2 3 4 5 6 7 8 4 4");
    // Successive changes compose.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "_FillValue,fld_fill,o,f,1",
        "-a",
        "_FillValue,fld_fill,o,f,5",
    ]);
    assert_eq!(raw(&f, "fld_fill", "%g "), "5 5 3 5");
    // Creating, deleting, appending or prepending leaves the data alone, as does a
    // variable without a _FillValue before.
    let (_s, f) = same_as_nco(&[
        "-h",
        "-a",
        "_FillValue,fld_fill,d,,",
        "-a",
        "_FillValue,rec_fill,a,f,5",
        "-a",
        "_FillValue,sc_fill,p,f,6",
        "-a",
        "_FillValue,fld_nofill,o,f,73",
        "-a",
        "_FillValue,fld2,c,d,1.5",
    ]);
    assert_eq!(raw(&f, "fld_fill", "%g "), "1 -999 3 -999");
    assert_eq!(raw(&f, "fld_nofill", "%g "), "73 1e+36 73 1e+36");
    assert_eq!(raw(&f, "fld2", "%g "), "1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5");
    // Every variable at once, and netCDF-4.
    same_as_nco(&["-h", "-a", "_FillValue,,o,f,-1"]);
    let (_s, f) = same_on(fixture_nc4(), &["-h", "-a", "_FillValue,fld_fill,o,f,-1"]);
    assert_eq!(raw(&f, "fld_fill", "%g "), "1 -1 3 -1");
}

#[test]
fn history_records_the_edit() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    nco("ncatted")
        .args(["-a", "units,lat,o,c,x", &f])
        .succeeds();
    let h = header(&f);
    assert!(h.contains("ncatted -a units,lat,o,c,x"), "{h}");
    assert!(h.contains("created by ncgen"), "{h}");
}

#[test]
fn errors_are_one_line_and_leave_the_file_as_it_was() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let before = std::fs::read(&f).unwrap();
    for (args, needle) in [
        (&["-a", "units,lat,d"][..], "units,lat,d"),
        (&["-a", "units,lat,z,c,x"], "z"),
        (&["-a", "units,lat,o,q,x"], "q"),
        (&["-a", "units,lat,o,d,"], "units,lat,o,d,"),
        (&["-a", "x,sc_int,o,i,1.7"], "1.7"),
        (&["-a", "x,sc_int,o,d,1.5abc"], "1.5abc"),
        (&["-a", "x,nosuch,o,d,1"], "nosuch"),
        (&["-a", "x,zz.*,o,d,1"], "x"),
        (&["-a", "units,lat,a,f,1"], "units"),
        (&["-a", "x,sc_int,o,ub,1"], "x"),
        (&["-a", "x,sc_int,o,sng,a"], "x"),
    ] {
        nco("ncatted")
            .args(args)
            .arg(&f)
            .run()
            .clean_failure(needle);
        assert_same_bytes(Path::new(&f), &before);
    }
    nco("ncatted").arg(&f).run().clean_failure("-a");
    if is_nco() {
        return;
    }
    // A failing edit after good ones changes nothing (NCO would keep the first).
    nco("ncatted")
        .args(["-a", "units,lat,o,c,x", "-a", "x,nosuch,o,d,1", &f])
        .run()
        .clean_failure("nosuch");
    assert_same_bytes(Path::new(&f), &before);
}

#[test]
fn in_place_when_the_header_has_room_else_a_new_file() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    // Shorter: rewritten where it is.
    let ino = inode(&f);
    nco("ncatted")
        .args(["-h", "-a", "title,global,o,c,t", &f])
        .succeeds();
    assert_eq!(inode(&f), ino);
    // Longer than the room: a new file, the data moved.
    let long = "x".repeat(5000);
    let arg = format!("title,global,o,c,{long}");
    nco("ncatted")
        .args(["-h", "--hdr_pad", "2000", "-a", &arg, &f])
        .succeeds();
    assert!(header(&f).contains(&long));
    assert_eq!(
        value(&f, "fld_rec", "%d ", &[]),
        "10 20 30 40 50 60 70 80 90 100"
    );
    // With room left by --hdr_pad, a later edit fits in place.
    let ino = inode(&f);
    let len = std::fs::metadata(&f).unwrap().len();
    nco("ncatted")
        .args([
            "-h",
            "-a",
            "a_new_attribute,fld2,o,c,fits in the padding",
            &f,
        ])
        .succeeds();
    assert_eq!(
        (inode(&f), std::fs::metadata(&f).unwrap().len()),
        (ino, len)
    );
    assert_eq!(
        value(&f, "fld2", "%g ", &[]),
        "1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5"
    );
    // An output leaves the input alone.
    let before = std::fs::read(&f).unwrap();
    let (out, theirs) = (s.arg("out.nc"), s.arg("nco.nc"));
    nco("ncatted")
        .args(["-h", "-a", "units,lat,o,c,Q", &f, &out])
        .succeeds();
    reference("ncatted")
        .args(["-h", "-a", "units,lat,o,c,Q", &f, &theirs])
        .succeeds();
    assert_same_bytes(Path::new(&f), &before);
    compare(&out, &theirs).equal();
    nco("ncatted")
        .args(["-h", "-a", "units,lat,o,c,Q", &f, &out])
        .run()
        .clean_failure("out.nc");
}

/// `--gaa name=value` beside `-a` edits adds global text attributes, as NCO's does.
#[test]
fn gaa_adds_global_attributes_beside_the_edits() {
    let (_s, ours) = same_as_nco(&[
        "-h",
        "--gaa",
        "project=test#run=2",
        "-a",
        "units,lat,o,c,deg",
    ]);
    let header = ncdump(&["-h"], &ours);
    for line in [
        ":project = \"test\" ;",
        ":run = \"2\" ;",
        "lat:units = \"deg\" ;",
    ] {
        assert!(header.contains(line), "{line} in\n{header}");
    }
}

/// `--gaa` alone adds the attributes, as NCO's does.
#[test]
fn gaa_alone_adds_global_attributes() {
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    nco("ncatted").args(["-h", "--glb", "k=v", &f]).succeeds();
    let header = ncdump(&["-h"], &f);
    assert!(header.contains(":k = \"v\" ;"), "{header}");
}
