//! `-X lon_min,lon_max,lat_min,lat_max` auxiliary-coordinate boxes on a cell-based
//! grid (points along one dimension, latitude and longitude named by `coordinates`),
//! the grid of NCO's test file (`lat_gds`/`lon_gds` on `gds_crd`). Expected points
//! are NCO 5.1.4's (`NCO_RS_BIN_DIR=/usr/bin` runs these against it), except the
//! documented differences (README, compatibility notes).

use crate::common::{bad_input, cdl};
use nco_tests::{is_nco, nco, value, Scratch};

/// Eight points: lat -90, -30, -30, 0, 0, 30, 30, 90; lon 0, 0, 180, 0, 180, 0, 180, 0.
const GRID: &str = r#"netcdf grid {
dimensions: pt = 8 ; time = UNLIMITED ;
variables:
  double lat(pt) ; lat:standard_name = "latitude" ; lat:units = "degree" ;
  double lon(pt) ; lon:standard_name = "longitude" ; lon:units = "degree" ;
  float pt(pt) ; pt:coordinates = "lat lon" ;
  float v(pt) ; v:coordinates = "lat lon" ;
  float w(time, pt) ; w:coordinates = "lat lon" ;
  float one ;
data:
  lat = -90, -30, -30, 0, 0, 30, 30, 90 ;
  lon = 0, 0, 180, 0, 180, 0, 180, 0 ;
  pt = 0, 1, 2, 3, 4, 5, 6, 7 ;
  v = 10, 11, 12, 13, 14, 15, 16, 17 ;
  w = 0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17 ;
  one = 1 ;
}"#;

fn grid(s: &Scratch) -> String {
    cdl(s, "grid", GRID)
}

/// `op ARGS in... out`, returning `v`'s values (or `var`'s) printed with `%g `.
fn kept(op: &str, args: &[&str], inputs: &[&str], var: &str, s: &Scratch) -> String {
    let out = s.arg("out.nc");
    nco(op)
        .arg("-O")
        .args(args)
        .args(inputs)
        .arg(&out)
        .succeeds();
    value(&out, var, "%g ", &[])
}

#[test]
fn a_box_keeps_exactly_the_points_inside_it() {
    let s = Scratch::new();
    let f = grid(&s);
    let box_ = |b: &str| kept("ncks", &["-X", b, "-v", "v"], &[&f], "v", &s);
    assert_eq!(box_("0.,180.,-30.,30."), "11 12 13 14 15 16");
    // Points 1, 3, 5 only: a multi-slab of single points, every variable on pt cut.
    assert_eq!(box_("0.,10.,-30.,30."), "11 13 15");
    assert_eq!(
        kept(
            "ncks",
            &["-X", "0.,10.,-30.,30.", "-v", "v"],
            &[&f],
            "lat",
            &s
        ),
        "-30 0 30"
    );
    // Two boxes: the points of either.
    let two = [
        "-X",
        "0.,10.,-30.,-20.",
        "-X",
        "170.,190.,20.,30.",
        "-v",
        "v",
    ];
    assert_eq!(kept("ncks", &two, &[&f], "v", &s), "11 16");
    // A variable off the grid is copied whole.
    assert_eq!(
        kept(
            "ncks",
            &["-X", "0.,10.,-30.,30.", "-v", "one"],
            &[&f],
            "one",
            &s
        ),
        "1"
    );
}

#[test]
fn multi_file_operators_take_the_box() {
    let s = Scratch::new();
    let f = grid(&s);
    let b = ["-X", "0.,10.,-30.,30.", "-v", "w"];
    // ncra: the record mean of points 1, 3, 5; nces: the members' mean (one file twice).
    assert_eq!(kept("ncra", &b, &[&f, &f], "w", &s), "6 8 10");
    assert_eq!(kept("nces", &b, &[&f, &f], "w", &s), "1 3 5 11 13 15");
    assert_eq!(
        kept("ncrcat", &b, &[&f, &f], "w", &s),
        "1 3 5 11 13 15 1 3 5 11 13 15"
    );
}

/// ncwa takes -X too (NCO 5.1.4's ncwa does not have it): the mean of points 1, 3, 5.
#[test]
fn ncwa_averages_the_points_of_the_box() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let f = grid(&s);
    assert_eq!(
        kept(
            "ncwa",
            &["-X", "0.,10.,-30.,30.", "-v", "v"],
            &[&f],
            "v",
            &s
        ),
        "13"
    );
}

/// Ours: a longitude range with lon_min > lon_max wraps through 360 (170.,10. holds
/// 180 and 0, every point here; NCO 5.1.4 keeps only points 0, 1, 3, 5), and a
/// degenerate range holds the points on it (NCO refuses it).
#[test]
fn wrapped_and_degenerate_longitude_ranges() {
    let s = Scratch::new();
    let f = grid(&s);
    let box_ = |b: &str| kept("ncks", &["-X", b, "-v", "v"], &[&f], "v", &s);
    let want = if is_nco() {
        "10 11 13 15"
    } else {
        "10 11 12 13 14 15 16 17"
    };
    assert_eq!(box_("170.,10.,-90.,90."), want);
    if !is_nco() {
        assert_eq!(box_("180.,180.,-90.,90."), "12 14 16");
        assert_eq!(box_("-190.,-170.,0.,90."), "14 16", "longitudes modulo 360");
    }
}

/// A box holding no point is an error; NCO 5.1.4 keeps every point and exits 0. So is
/// a file without auxiliary coordinates (NCO ignores -X), -X with -d on the grid's
/// dimension, and a malformed box.
#[test]
fn bad_boxes_are_errors_naming_x() {
    let s = Scratch::new();
    let f = grid(&s);
    if is_nco() {
        assert_eq!(
            kept("ncks", &["-X", "10.,20.,-5.,5.", "-v", "v"], &[&f], "v", &s),
            "10 11 12 13 14 15 16 17"
        );
        return;
    }
    bad_input(
        "ncks",
        &["-X", "10.,20.,-5.,5.", "-v", "v", &f],
        "no point of lat/lon",
        "",
    );
    let plain = cdl(
        &s,
        "plain",
        "netcdf plain { dimensions: n = 2 ; variables: float x(n) ; data: x = 1, 2 ; }",
    );
    bad_input(
        "ncks",
        &["-X", "0.,10.,-30.,30.", &plain],
        "no auxiliary coordinates",
        "",
    );
    let with_d = ["-X", "0.,10.,-30.,30.", "-d", "pt,0,3", &f];
    bad_input("ncks", &with_d, "not supported yet", "");
    bad_input("nces", &["-X", "0,10,30", &f], "-X", "");
    bad_input("ncks", &["-X", "0,10,30,-30", &f], "latitude minimum", "");
}

/// Packed auxiliary coordinates are unpacked before the box is applied (lat stored
/// as shorts of 0.01 degree). NCO 5.1.4 does not take such a latitude as an
/// auxiliary coordinate and stops (README, compatibility notes).
#[test]
fn packed_auxiliary_coordinates_are_unpacked() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let f = cdl(
        &s,
        "packed",
        r#"netcdf packed { dimensions: pt = 3 ;
        variables: short lat(pt) ; lat:standard_name = "latitude" ; lat:scale_factor = 0.01 ;
          double lon(pt) ; lon:standard_name = "longitude" ;
          float v(pt) ; v:coordinates = "lat lon" ;
        data: lat = -4500, 1000, 4500 ; lon = 10, 20, 30 ; v = 1, 2, 3 ; }"#,
    );
    assert_eq!(
        kept(
            "ncks",
            &["-X", "0.,40.,-20.,20.", "-v", "v"],
            &[&f],
            "v",
            &s
        ),
        "2"
    );
}
