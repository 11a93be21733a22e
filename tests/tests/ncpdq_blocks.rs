//! ncpdq on rows larger than its 256 KiB blocks, which it then streams in pieces of a
//! row: reversing and packing must give what they give on whole arrays.

use std::fmt::Write as _;

use nco_tests::{is_nco, nco, Dump, Scratch};

const T: usize = 2;
const Y: usize = 3;
const X: usize = 40_000;

fn value(t: usize, y: usize, x: usize) -> f32 {
    ((t * Y + y) * X + x) as f32 * 0.5 - 1000.0
}

/// v(time = 2 records, y = 3, x = 40000) floats, with a fill value at a few points
/// (64-bit offset format), built with ncgen; returns the path.
fn input(s: &Scratch) -> String {
    let mut cdl = format!(
        "netcdf in {{\ndimensions:\n time = UNLIMITED ;\n y = {Y} ;\n x = {X} ;\n\
         variables:\n float v(time, y, x) ;\n  v:_FillValue = -9999.f ;\ndata:\n v = "
    );
    for t in 0..T {
        for y in 0..Y {
            for x in 0..X {
                let first = t + y + x == 0;
                let v = if x % 9973 == 5 {
                    -9999.0
                } else {
                    value(t, y, x)
                };
                write!(cdl, "{}{v}", if first { "" } else { ", " }).unwrap();
            }
        }
    }
    cdl.push_str(" ;\n}\n");
    let src = s.path("in.cdl");
    std::fs::write(&src, cdl).expect("write CDL");
    let out = s.arg("in.nc");
    nco_tests::tool("ncgen")
        .args(["-k", "64-bit offset", "-o", &out])
        .arg(&src)
        .succeeds();
    out
}

fn ncpdq(args: &[&str], input: &str, output: &str) {
    nco("ncpdq")
        .args(["-O", "-h"])
        .args(args)
        .args([input, output])
        .succeeds();
}

/// v's values (read with ncdump), unpacked the CF way; missing values as -9999.
fn read_v(path: &str) -> Vec<f64> {
    let d = Dump::of(path);
    let var = d.var("v");
    let sf = var.attr_f64("scale_factor").unwrap_or(1.0);
    let ao = var.attr_f64("add_offset").unwrap_or(0.0);
    var.numbers()
        .into_iter()
        .map(|x| if x.is_nan() { -9999.0 } else { x * sf + ao })
        .collect()
}

#[test]
fn reversing_every_dimension_in_pieces_of_rows() {
    let dir = Scratch::new();
    let (i, o) = (input(&dir), dir.arg("rev.nc"));
    ncpdq(&["-a", "-time,-y,-x"], &i, &o);
    let got = read_v(&o);
    let original = read_v(&i);
    assert_eq!(got.len(), T * Y * X);
    for t in 0..T {
        for y in 0..Y {
            for x in [0, 1, 4999, 20_000, X - 1] {
                let at = |t, y, x| (t * Y + y) * X + x;
                assert_eq!(
                    got[at(t, y, x)],
                    original[at(T - 1 - t, Y - 1 - y, X - 1 - x)],
                    "({t},{y},{x})"
                );
            }
        }
    }
    // Every element once: the reversed output reversed again is the input.
    let mut back = got.clone();
    back.reverse();
    assert!(back == original);
}

#[test]
fn packing_in_pieces_of_rows_round_trips_within_half_a_step() {
    // NCO 5.1.4 stores the unpacked fill value (-9999) in the packed shorts, where packed
    // data can take the same value: the documented difference of
    // ncpdq::packed_fill_is_the_packed_types_default.
    if is_nco() {
        return;
    }
    // Half a step, plus the rounding of the single-precision add_offset (about 59000).
    let dir = Scratch::new();
    let (i, o) = (input(&dir), dir.arg("pk.nc"));
    ncpdq(&["-P", "all_new"], &i, &o);
    let d = Dump::of(&o);
    let var = d.var("v");
    assert_eq!(var.ty, "short");
    // NCO packs with a negative scale factor: (min - max) / (2^16 - 2).
    let sf = var.attr_f64("scale_factor").expect("scale_factor");
    let got = read_v(&o);
    let original = read_v(&i);
    for (k, (g, w)) in got.iter().zip(&original).enumerate() {
        if *w == -9999.0 {
            assert_eq!(*g, -9999.0, "fill at {k}");
        } else {
            assert!(
                (g - w).abs() <= sf.abs() * 0.5 + 0.01,
                "{k}: {g} vs {w} (scale {sf})"
            );
        }
    }
}
