//! ncpdq (and ncpack, ncunpack) project tests on our own fixture
//! (tests/data/fixture.cdl).
//!
//! Tests named `ncpdq_rNN_*` / `ncpdq_nNN_*` cover the behaviour of NCO's reference
//! case with the same id (the cases .ci/run runs). Expected values are worked out by
//! hand (fld3 = 100*lat + 10*lev + lon indices; fld_rec3[t, lat, lon] = t + 4*lat +
//! lon) and are the values NCO 5.1.4 prints (`NCO_RS_BIN_DIR=/usr/bin cargo test
//! --release -p nco-tests`).

use crate::common::{self, bad_input, header_lines};
use nco_tests::{fx, is_nco, nco, value, Scratch};

/// `op ARGS fixture out` in a fresh scratch folder; returns (scratch, out path).
fn pdq(op: &str, args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco(op).args(args).arg(fx()).arg(&out).succeeds();
    (s, out)
}

/// `ncks -m --trd -C -v VAR FILE` lines containing `needle`.
fn meta_lines(file: &str, var: &str, needle: &str) -> Vec<String> {
    nco("ncks")
        .args(["-m", "--trd", "-C", "-v", var, file])
        .succeeds()
        .stdout
        .lines()
        .filter(|l| l.contains(needle))
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------- reference cases

#[test]
fn ncpdq_r01_reverse_a_coordinate() {
    let (_s, out) = pdq("ncpdq", &["-h", "-O", "-a", "-lat", "-v", "lat"]);
    assert_eq!(value(&out, "lat", "%g", &["-d", "lat,0"]), "45");
    assert_eq!(value(&out, "lat", "%g ", &[]), "45 -45");
}

#[test]
fn ncpdq_r02_reverse_three_dimensions() {
    let (_s, out) = pdq("ncpdq", &["-h", "-O", "-a", "-lat,-lev,-lon", "-v", "fld3"]);
    assert_eq!(
        value(
            &out,
            "fld3",
            "%f",
            &["-d", "lat,0", "-d", "lev,0", "-d", "lon,0"]
        ),
        "123.000000"
    );
    assert_eq!(value(&out, "lev", "%g ", &[]), "1000 500 100");
}

#[test]
fn ncpdq_r04_permute_with_multislabs_record_dimension_inward() {
    // time 0..3 and 9, lon 0 and 3: fld_rec3(lat, lon, time); lat 0, lon 3 (the second
    // kept lon), time 2 -> 2 + 3 = 5; lat 0 lon 1 is lon 3.
    let (_s, out) = pdq(
        "ncpdq",
        &[
            "-h",
            "-O",
            "-C",
            "-a",
            "lat,lon,time",
            "-v",
            "fld_rec3",
            "-d",
            "time,0,3",
            "-d",
            "time,9,9",
            "-d",
            "lon,0,0",
            "-d",
            "lon,3,3",
        ],
    );
    assert_eq!(
        value(
            &out,
            "fld_rec3",
            "%f",
            &["-d", "lat,0", "-d", "lon,1", "-d", "time,2"]
        ),
        "5.000000"
    );
    assert_eq!(
        value(&out, "fld_rec3", "%g ", &[]),
        "0 1 2 3 9 3 4 5 6 12 4 5 6 7 13 7 8 9 10 16"
    );
    assert_eq!(
        header_lines(&out, "fld_rec3("),
        "float fld_rec3(lat, lon, time) ;"
    );
    assert_eq!(
        header_lines(&out, "UNLIMITED"),
        "lat = UNLIMITED ; // (2 currently)"
    );
}

#[test]
fn ncpdq_r05_permute_and_reverse_time_with_multislabs() {
    // Reversed time order 9, 3, 2, 1, 0: index 4 is time 0; lat 1 lon 1 (lon 3): 0+4+3.
    let (_s, out) = pdq(
        "ncpdq",
        &[
            "-h",
            "-O",
            "-C",
            "-a",
            "lat,lon,-time",
            "-v",
            "fld_rec3",
            "-d",
            "time,0,3",
            "-d",
            "time,9,9",
            "-d",
            "lon,0,0",
            "-d",
            "lon,3,3",
        ],
    );
    assert_eq!(
        value(
            &out,
            "fld_rec3",
            "%f",
            &["-d", "lat,1", "-d", "lon,1", "-d", "time,4"]
        ),
        "7.000000"
    );
    assert_eq!(
        value(&out, "fld_rec3", "%g ", &[]),
        "9 3 2 1 0 12 6 5 4 3 13 7 6 5 4 16 10 9 8 7"
    );
}

#[test]
fn ncpdq_r07_permute_two_d_variable_keeps_coordinates() {
    let (_s, out) = pdq("ncpdq", &["-O", "-a", "lon,lat", "-v", "orog"]);
    nco("ncks")
        .args([
            "-C", "--trd", "-v", "orog", "-d", "lat,1,1", "-d", "lon,1,1", &out,
        ])
        .succeeds()
        .last_line_is("lon[1]=90 lat[1]=45 orog[3]=60 m");
    assert_eq!(header_lines(&out, "orog("), "float orog(lon, lat) ;");
}

#[test]
fn ncpdq_r08_permute_record_variable_time_no_longer_first() {
    let (_s, out) = pdq("ncpdq", &["-O", "-a", "lon,time", "-v", "PS"]);
    assert_eq!(header_lines(&out, "PS("), "float PS(lon, lat, time) ;");
    nco("ncks")
        .args([
            "--trd", "-v", "PS", "-d", "time,1,1", "-d", "lat,1,1", "-d", "lon,1,1", &out,
        ])
        .succeeds()
        .stdout_contains("lon[1]=90 lat[1]=45 time[1]=2 PS[31]=101501 Pa");
}

#[test]
fn ncpdq_r10_lat_becomes_the_record_dimension() {
    let (_s, out) = pdq("ncpdq", &["-h", "-O", "-a", "lat,time", "-v", "PS"]);
    assert_eq!(
        meta_lines(&out, "PS", "dimension 0"),
        ["PS dimension 0: lat, size = 2 NC_FLOAT (Record coordinate is lat)"]
    );
    nco("ncks")
        .args([
            "--trd", "-v", "PS", "-d", "time,1,1", "-d", "lat,1,1", "-d", "lon,0,0", &out,
        ])
        .succeeds()
        .stdout_contains("lat[1]=45 time[1]=2 lon[0]=0 PS[44]=101401 Pa");
}

#[test]
fn ncpdq_r12_pack_then_unpack_a_scalar() {
    // A constant (a scalar) packs to add_offset only.
    let s = Scratch::new();
    let (p, u) = (s.arg("p.nc"), s.arg("u.nc"));
    nco("ncpdq")
        .args(["-h", "-O", "-P", "all_new", "-v", "sc_dbl", &fx(), &p])
        .succeeds();
    assert_eq!(
        header_lines(&p, "sc_dbl"),
        "short sc_dbl ; | sc_dbl:add_offset = 1.5 ;"
    );
    nco("ncpdq")
        .args(["-h", "-O", "-P", "upk", "-v", "sc_dbl", &p, &u])
        .succeeds();
    assert_eq!(value(&u, "sc_dbl", "%g", &[]), "1.5");
    assert_eq!(header_lines(&u, "sc_dbl"), "double sc_dbl ;");
}

#[test]
fn ncpdq_r15_unpacking_twice_does_not_reapply_packing() {
    let s = Scratch::new();
    let (a, b) = (s.arg("a.nc"), s.arg("b.nc"));
    nco("ncpdq")
        .args(["-h", "-O", "-C", "-P", "upk", "-v", "fld_pck", &fx(), &a])
        .succeeds();
    nco("ncpdq")
        .args(["-h", "-O", "-C", "-P", "upk", "-v", "fld_pck", &a, &b])
        .succeeds();
    assert_eq!(value(&b, "fld_pck", "%f", &["-d", "lon,1"]), "7.000000");
    assert_eq!(value(&b, "fld_pck", "%g ", &[]), "6 7 8 9");
}

#[test]
fn ncpdq_n01_all_new_packs_float_to_short() {
    // add_offset = (0+123)/2 = 61.5, scale_factor = (0-123)/65532 = -0.001876946.
    let (_s, out) = pdq("ncpdq", &["-O", "-P", "all_new", "-v", "fld3"]);
    assert_eq!(
        header_lines(&out, "fld3"),
        "short fld3(lat, lev, lon) ; | fld3:units = \"K\" ; | \
         fld3:long_name = \"3-D field, 100*lat+10*lev+lon indices\" ; | \
         fld3:add_offset = 61.5f ; | fld3:scale_factor = -0.001876946f ;"
    );
    // ncks prints the packed values: the extremes are +-32766.
    assert_eq!(
        value(&out, "fld3", "%d ", &["-d", "lat,0", "-d", "lev,0"]),
        "32766 32233 31700 31168"
    );
}

#[test]
fn ncpdq_n02_u_unpacks() {
    let (_s, out) = pdq("ncpdq", &["-O", "-U", "-v", "fld_pck"]);
    assert_eq!(value(&out, "fld_pck", "%g ", &[]), "6 7 8 9");
    assert_eq!(header_lines(&out, "fld_pck"), "float fld_pck(lon) ;");
    // A packed _FillValue becomes one of the unpacked type.
    let (_s, out) = pdq("ncpdq", &["-O", "-U", "-v", "rec_pck"]);
    assert_eq!(value(&out, "rec_pck", "%g ", &[]), "1 2 3 4 5 6 7 8 9 _");
    assert_eq!(
        header_lines(&out, "rec_pck:_FillValue"),
        "rec_pck:_FillValue = -1.f ;"
    );
}

#[test]
fn ncpdq_n03_flt_byt_packs_floats_into_bytes() {
    let (_s, out) = pdq(
        "ncpdq",
        &["-O", "-P", "all_new", "-M", "flt_byt", "-v", "fld3"],
    );
    assert_eq!(header_lines(&out, "fld3("), "byte fld3(lat, lev, lon) ;");
}

#[test]
fn ncpdq_n06_packs_by_default() {
    let (_s, out) = pdq("ncpdq", &["-O", "-v", "fld3"]);
    assert_eq!(header_lines(&out, "fld3("), "short fld3(lat, lev, lon) ;");
}

// ---------------------------------------------------------------- behaviour

#[test]
fn all_xst_packs_only_what_was_packed_and_new_variables() {
    // all_xst: packed fld_pck kept as is, unpacked fld2 packed anew.
    let (_s, out) = pdq("ncpdq", &["-O", "-P", "all_xst", "-v", "fld_pck,fld2"]);
    assert_eq!(value(&out, "fld_pck", "%d ", &[]), "10 20 30 40");
    assert_eq!(
        value(&out, "fld2", "%d ", &[]),
        "32766 23404 14043 4681 -4681 -14043 -23404 -32766"
    );
    assert_eq!(header_lines(&out, "fld2("), "short fld2(lat, lon) ;");
    assert_eq!(
        header_lines(&out, "fld2:scale_factor"),
        "fld2:scale_factor = -0.000106818043093451 ;"
    );
}

#[test]
fn xst_new_repacks_packed_variables_only() {
    let (_s, out) = pdq("ncpdq", &["-O", "-P", "xst_new", "-v", "fld_pck,fld2"]);
    assert_eq!(
        value(&out, "fld_pck", "%d ", &[]),
        "32766 10922 -10922 -32766"
    );
    assert_eq!(header_lines(&out, "fld2("), "double fld2(lat, lon) ;");
    assert_eq!(
        value(&out, "fld2", "%g ", &[]),
        "1.5 2.5 3.5 4.5 5.5 6.5 7.5 8.5"
    );
}

#[test]
fn xst_new_keeps_the_attribute_order() {
    let (_s, out) = pdq("ncpdq", &["-O", "-P", "xst_new", "-v", "fld_pck"]);
    assert_eq!(
        header_lines(&out, "fld_pck:"),
        "fld_pck:scale_factor = -4.577916e-05f ; | fld_pck:add_offset = 7.5f ;"
    );
}

#[test]
fn hgh_sht_packs_only_wide_types() {
    let (_s, out) = pdq(
        "ncpdq",
        &[
            "-O",
            "-P",
            "all_new",
            "-M",
            "hgh_sht",
            "-v",
            "fld2,fld1_int,fld1_sht",
        ],
    );
    assert_eq!(header_lines(&out, "short fld2("), "short fld2(lat, lon) ;");
    assert_eq!(
        header_lines(&out, "short fld1_int("),
        "short fld1_int(lon) ;"
    );
    // NC_SHORT is not wider than short: copied as is.
    assert_eq!(value(&out, "fld1_sht", "%d ", &[]), "-2 0 5 32000");
    assert_eq!(
        header_lines(&out, "fld1_int:"),
        "fld1_int:add_offset = 49998 ; | fld1_int:scale_factor = -2 ;"
    );
}

#[test]
fn hgh_sht_packs_integers_like_nco() {
    // add_offset 49998, scale_factor -2: 7 -> (7-49998)/-2 = 24995.5 -> 24995.
    let (_s, out) = pdq(
        "ncpdq",
        &["-O", "-P", "all_new", "-M", "hgh_sht", "-v", "fld1_int"],
    );
    assert_eq!(
        value(&out, "fld1_int", "%d ", &[]),
        "24995 25000 24993 -25001"
    );
}

#[test]
fn packing_round_trip_keeps_missing_values() {
    let s = Scratch::new();
    let (p, u) = (s.arg("p.nc"), s.arg("u.nc"));
    nco("ncpdq")
        .args(["-O", "-P", "all_new", "-v", "fld_fill,rec_fill", &fx(), &p])
        .succeeds();
    assert_eq!(header_lines(&p, "short fld_fill"), "short fld_fill(lon) ;");
    nco("ncpdq").args(["-O", "-U", &p, &u]).succeeds();
    assert_eq!(value(&u, "fld_fill", "%g ", &[]), "1 _ 3 _");
    assert_eq!(value(&u, "rec_fill", "%g ", &[]), "1 _ 3 _ 5 _ 7 _ 9 _");
}

#[test]
fn packed_fill_is_the_packed_types_default() {
    // Compatibility difference (intended): NCO 5.1.4 keeps `_FillValue = -999.f` (the
    // unpacked type) on the packed short and stores -999 there, which can collide with
    // packed data; we write the short's default fill, -32767s.
    if is_nco() {
        return;
    }
    let (_s, out) = pdq("ncpdq", &["-O", "-P", "all_new", "-v", "fld_fill"]);
    assert_eq!(
        header_lines(&out, "fld_fill:_FillValue"),
        "fld_fill:_FillValue = -32767s ;"
    );
    assert_eq!(value(&out, "fld_fill", "%d ", &[]), "32766 _ -32766 _");
}

#[test]
fn ncpack_and_ncunpack_names() {
    // Debian's NCO does not install these links.
    if is_nco() {
        return;
    }
    let (_s, out) = pdq("ncpack", &["-O", "-v", "fld2"]);
    assert_eq!(header_lines(&out, "fld2("), "short fld2(lat, lon) ;");
    let (_s, out) = pdq("ncunpack", &["-O", "-v", "fld_pck"]);
    assert_eq!(header_lines(&out, "fld_pck"), "float fld_pck(lon) ;");
    assert_eq!(value(&out, "fld_pck", "%g ", &[]), "6 7 8 9");
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_unknown_dimension_in_a() {
    // Compatibility difference: NCO ignores a dimension it does not know.
    if is_nco() {
        return;
    }
    bad_input("ncpdq", &["-a", "nodim", "-v", "fld3", &fx()], "nodim", "");
}

#[test]
fn bad_packing_policy() {
    bad_input(
        "ncpdq",
        &["-P", "bogus", "-v", "fld3", &fx()],
        "bogus",
        "bogus",
    );
}

#[test]
fn bad_packing_map() {
    bad_input(
        "ncpdq",
        &["-M", "bogus", "-v", "fld3", &fx()],
        "bogus",
        "bogus",
    );
}

#[test]
fn all_new_packs_the_variables_nco_packs() {
    let (_s, out) = pdq("ncpdq", &["-O", "-P", "all_new"]);
    for decl in [
        "double hyam(lev) ;",
        "double hybm(lev) ;",
        "double stn_lat(stn) ;",
        "double stn_lon(stn) ;",
        "double gw(lat) ;",
        "short areacella(lat, lon) ;",
        "short fld2(lat, lon) ;",
    ] {
        let name = decl.split([' ', '(']).nth(1).unwrap_or("");
        assert_eq!(header_lines(&out, &format!(" {name}(")), decl, "{name}");
    }
}

#[test]
fn packing_integers_with_a_scale_below_one_keeps_the_data() {
    // A short spanning -10..25 packed into a byte (-M nxt_lsr): the scale (35/254)
    // rounds to 0 in the integer type, so NCO 5.1.4 writes no scale_factor and packs
    // x - add_offset; an earlier nco-rs wrote scale_factor = 0 and zeros (data lost).
    let s = Scratch::new();
    let f = common::cdl(
        &s,
        "ints",
        "netcdf ints { dimensions: x = 5 ; variables: short s(x) ; int i(x) ; int j(x) ; \
         data: s = -10, 0, 5, 20, 25 ; i = 1, 2, 3, 4, 5 ; j = -100000, 0, 5, 20, 100000 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncpdq")
        .args(["-O", "-M", "nxt_lsr", &f, &out])
        .succeeds();
    assert_eq!(header_lines(&out, "s:add_offset"), "s:add_offset = 8s ;");
    assert_eq!(header_lines(&out, "s:scale_factor"), "");
    assert_eq!(value(&out, "s", "%d ", &[]), "-18 -8 -3 12 17");
    assert_eq!(header_lines(&out, "i:add_offset"), "i:add_offset = 3 ;");
    assert_eq!(header_lines(&out, "i:scale_factor"), "");
    assert_eq!(value(&out, "i", "%d ", &[]), "-2 -1 0 1 2");
    assert_eq!(
        header_lines(&out, "j:scale_factor"),
        "j:scale_factor = -3 ;"
    );
    // -100000 / -3 = 33333 does not fit a short: NCO 5.1.4 keeps the low bits (-32203,
    // which unpacks to 96609); we write the fill value and warn (README, casts).
    let want = if is_nco() {
        "-32203 0 -1 -6 32203"
    } else {
        "_ 0 -1 -6 _"
    };
    assert_eq!(value(&out, "j", "%d ", &[]), want);
}

#[test]
fn packing_nan_and_infinities_become_missing() {
    // Compatibility difference (intended): NCO 5.1.4 packs NaN and +-Inf as ordinary
    // numbers (garbage after unpacking, or NaN scale factors); we pack them as the
    // packed type's fill value and give the variable that _FillValue.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let f = common::cdl(
        &s,
        "nan",
        "netcdf nan { dimensions: x = 4 ; variables: float d(x) ; float e(x) ; float h(x) ; \
         data: d = 1, NaN, 3, 5 ; e = 1, 3, -Infinity, 5 ; h = 1, 2, 4, 5 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncpdq").args(["-O", &f, &out]).succeeds();
    assert_eq!(
        header_lines(&out, "d:_FillValue"),
        "d:_FillValue = -32767s ;"
    );
    assert_eq!(value(&out, "d", "%d ", &[]), "32766 _ 0 -32766");
    assert_eq!(value(&out, "e", "%d ", &[]), "32766 0 _ -32766");
    assert_eq!(header_lines(&out, "h:_FillValue"), "", "no fill needed");
    let back = s.arg("back.nc");
    nco("ncpdq").args(["-O", "-U", &out, &back]).succeeds();
    assert_eq!(value(&back, "d", "%g ", &[]), "1 _ 3 5");
}

#[test]
fn repacking_keeps_a_packed_variable_the_map_does_not_pack() {
    // i is a short packing ints (unpacked type int); -M flt_sht packs floats only, so
    // -P all_new leaves i packed as it is (NCO 5.1.4), not unpacked.
    let s = Scratch::new();
    let f = common::cdl(
        &s,
        "pk",
        "netcdf pk { dimensions: x = 3 ; variables: short i(x) ; i:add_offset = 12500 ; \
         i:scale_factor = -1 ; data: i = 1, 2, 3 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncpdq")
        .args(["-O", "-P", "all_new", "-M", "flt_sht", &f, &out])
        .succeeds();
    assert_eq!(header_lines(&out, "i("), "short i(x) ;");
    assert_eq!(value(&out, "i", "%d ", &[]), "1 2 3");
}

#[test]
fn bad_full_disk_with_netcdf4_output_fails_cleanly() {
    // A file-size limit stands in for a full disk (SIGXFSZ ignored, so writes fail with
    // EFBIG). HDF5's exit handler used to crash on the half-written file (exit 139, as
    // NCO 5.1.4 does); now: one error line, status 1, no temporary file.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let bin = nco_tests::bin("ncpdq");
    let r = nco_tests::tool("sh")
        .args(["-c", "ulimit -f 4; trap '' XFSZ; exec \"$0\" \"$@\""])
        .arg(&bin)
        .args(["-O", "-4", "-P", "all_new", &fx(), &out])
        .run();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.starts_with("ncpdq: ERROR"), "{}", r.stderr);
    assert_eq!(r.stderr.trim().lines().count(), 1, "{}", r.stderr);
    assert!(s.files().is_empty(), "left behind: {:?}", s.files());
}

#[test]
fn unpacking_to_float_computes_in_single_precision() {
    // NCO 5.1.4 unpacks into NC_FLOAT in float arithmetic: 12345 * -0.0001831166f + 1.f
    // is -1.26057434 there, -1.26057446 when computed in double and rounded.
    let s = Scratch::new();
    let f = common::cdl(
        &s,
        "up",
        "netcdf up { dimensions: x = 3 ; variables: short p(x) ; \
         p:scale_factor = -0.0001831166f ; p:add_offset = 1.f ; p:_FillValue = -32767s ; \
         data: p = 12345, _, 27149 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncpdq").args(["-O", "-U", &f, &out]).succeeds();
    assert_eq!(value(&out, "p", "%.9g ", &[]), "-1.26057434 _ -3.97143269");
}

#[test]
fn operators_keep_the_input_variable_order_ncks_and_ncbo_alphabetise() {
    // NCO 5.1.4: ncpdq, ncwa, ncra, ncrcat, nces and ncecat write the variables in the
    // input's order; ncks and ncbo in alphabetical order.
    let s = Scratch::new();
    let f = common::cdl(
        &s,
        "order",
        "netcdf order { dimensions: time = UNLIMITED ; x = 2 ; variables: double time(time) ; \
         float zeta(time, x) ; float alpha(time, x) ; int mid(x) ; \
         data: time = 1, 2 ; zeta = 1, 2, 3, 4 ; alpha = 5, 6, 7, 8 ; mid = 1, 2 ; }",
    );
    let order = |file: &str| -> String {
        nco_tests::ncdump(&["-h"], file)
            .lines()
            .filter(|l| l.starts_with('\t') && !l.starts_with("\t\t") && !l.contains('='))
            .filter_map(|l| l.split_whitespace().nth(1))
            .map(|n| n.split(['(', ';']).next().unwrap_or(n).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for op in ["ncpdq", "ncwa", "ncra", "ncrcat", "nces", "ncecat"] {
        let out = s.arg(&format!("{op}.nc"));
        nco(op).args(["-O", &f, &out]).succeeds();
        assert_eq!(order(&out), "time zeta alpha mid", "{op}");
    }
    for (op, extra) in [("ncks", None), ("ncbo", Some(f.clone()))] {
        let out = s.arg(&format!("{op}.nc"));
        nco(op).args(["-O", &f]).args(extra).arg(&out).succeeds();
        assert_eq!(order(&out), "alpha mid time zeta", "{op}");
    }
}

/// A conversion map (`-M dbl_flt`, `flt_dbl`) converts unpacked variables and leaves
/// packed ones packed, as NCO 5.1.4 (ours unpacked them into the map's type).
#[test]
fn conversion_maps_leave_packed_variables_packed_as_nco() {
    let s = Scratch::new();
    let cdl = s.path("p.cdl");
    std::fs::write(
        &cdl,
        "netcdf p { dimensions: x = 3 ; variables: short pk(x) ; pk:scale_factor = 0.5 ; \
         pk:add_offset = 100. ; short pf(x) ; pf:scale_factor = 0.5f ; \
         pf:add_offset = 100.f ; double d(x) ; float f(x) ; \
         data: pk = 1, 2, 3 ; pf = 1, 2, 3 ; d = 1, 2, 3 ; f = 1, 2, 3 ; }",
    )
    .unwrap();
    let f = s.arg("p.nc");
    nco_tests::tool("ncgen")
        .args(["-o", &f])
        .arg(&cdl)
        .succeeds();
    for (map, want_d, want_f) in [
        ("dbl_flt", "float", "float"),
        ("flt_dbl", "double", "double"),
    ] {
        for policy in [&[][..], &["-P", "all_new"], &["-P", "xst_new"]] {
            let (a, b) = (s.arg("nco.nc"), s.arg("ours.nc"));
            for (cmd, out) in [(nco_tests::reference("ncpdq"), &a), (nco("ncpdq"), &b)] {
                cmd.args(["-O", "-M", map])
                    .args(policy)
                    .arg(&f)
                    .arg(out)
                    .succeeds();
            }
            nco_tests::compare(&a, &b).equal();
            let d = nco_tests::Dump::of(&b);
            assert_eq!(d.var("pk").ty, "short", "{map} {policy:?}");
            assert_eq!(d.var("pf").ty, "short", "{map} {policy:?}");
            if policy.is_empty() {
                assert_eq!(
                    (d.var("d").ty.as_str(), d.var("f").ty.as_str()),
                    (want_d, want_f)
                );
            }
        }
    }
}
