//! ncpdq on rows larger than its 256 KiB blocks, which it then streams in pieces of a
//! row: reversing and packing must give what they give on whole arrays.

use std::path::Path;
use std::process::Command;

use nco_core::dataset::{Dataset, OutFile};
use nco_core::model::{Attr, Dim, Format, Meta, Var};
use nco_core::types::{NcType, Values};

const T: usize = 2;
const Y: usize = 3;
const X: usize = 40_000;

fn value(t: usize, y: usize, x: usize) -> f32 {
    ((t * Y + y) * X + x) as f32 * 0.5 - 1000.0
}

/// v(time = 2 records, y = 3, x = 40000) floats, with a fill value at a few points.
fn input(path: &Path) {
    let mut m = Meta::new(Format::Offset64);
    for (name, len, unlimited) in [("time", T, true), ("y", Y, false), ("x", X, false)] {
        m.dims.push(Dim {
            name: name.into(),
            len,
            unlimited,
        });
    }
    m.vars.push(Var {
        name: "v".into(),
        ty: NcType::Float,
        dims: vec![0, 1, 2],
        attrs: vec![Attr {
            name: "_FillValue".into(),
            value: Values::Float(vec![-9999.0]),
        }],
        storage: Default::default(),
    });
    let mut of = OutFile::create(path.to_str().unwrap(), &m, 0).unwrap();
    let mut data = Vec::with_capacity(T * Y * X);
    for t in 0..T {
        for y in 0..Y {
            for x in 0..X {
                data.push(if x % 9973 == 5 {
                    -9999.0
                } else {
                    value(t, y, x)
                });
            }
        }
    }
    of.write(0, 0, &Values::Float(data)).unwrap();
    of.finish().unwrap();
}

fn ncpdq(args: &[&str], input: &Path, output: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_ncpdq"))
        .args(["-O", "-h"])
        .args(args)
        .arg(input)
        .arg(output)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn read_v(path: &Path) -> Vec<f64> {
    let ds = Dataset::open(path.to_str().unwrap()).unwrap();
    let id = ds.meta().var_id("v").unwrap();
    let raw = ds.read_all(id).unwrap();
    // Packed outputs are unpacked here the CF way.
    let var = &ds.meta().vars[id];
    let num = |name: &str, dflt: f64| {
        var.attr(name)
            .and_then(|a| a.value.get_f64(0))
            .unwrap_or(dflt)
    };
    let (sf, ao) = (num("scale_factor", 1.0), num("add_offset", 0.0));
    let fill = num("_FillValue", f64::NAN);
    raw.to_f64_vec()
        .unwrap()
        .into_iter()
        .map(|x| if x == fill { -9999.0 } else { x * sf + ao })
        .collect()
}

#[test]
fn reversing_every_dimension_in_pieces_of_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (i, o) = (dir.path().join("in.nc"), dir.path().join("rev.nc"));
    input(&i);
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
    // Half a step, plus the rounding of the single-precision add_offset (about 59000).
    let dir = tempfile::tempdir().unwrap();
    let (i, o) = (dir.path().join("in.nc"), dir.path().join("pk.nc"));
    input(&i);
    ncpdq(&["-P", "all_new"], &i, &o);
    let ds = Dataset::open(o.to_str().unwrap()).unwrap();
    let var = ds.meta().var("v").unwrap();
    assert_eq!(var.ty, NcType::Short);
    // NCO packs with a negative scale factor: (min - max) / (2^16 - 2).
    let sf = var.attr("scale_factor").unwrap().value.get_f64(0).unwrap();
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
