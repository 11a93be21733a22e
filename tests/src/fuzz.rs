//! The bodies of the fuzz targets (`fuzz/`, run with cargo-fuzz, README "Fuzzing") and
//! of their short stable smoke in the integration tests (`fuzz_smoke`): each takes any
//! bytes, feeds them to one parser of hostile text, and checks what a parse that
//! succeeds promises. A panic (or a crash, or running out of stack) is the defect found;
//! an `Err` is the parser doing its job.
//!
//! | target | parser |
//! |---|---|
//! | `dmn` | `-d`: `HyperslabSpec::parse`, then resolved on small dimensions with ascending, descending, NaN and infinite coordinates and a time axis |
//! | `var` | `-v`: `select::split_list` and `select::select` (names and regular expressions) |
//! | `op` | `-y`: `reduce::Op::parse`, `binary::BinOp::parse` |
//! | `mask` | `-B`: `rules::mask::MaskExpr::parse` |
//! | `ncap2` | the ncap2 script parser, `ncap::parser::parse` |
//! | `stations` | the station list, `stations::parse_list` |

use nco_core::hyperslab::{self, DimInfo, HyperslabSpec};
use nco_core::model::{Attr, Dim, Format, Meta, Storage, Var};
use nco_core::select::{self, SelectArgs};
use nco_core::types::{NcType, Values};

/// The fuzz targets by name, for the smoke test and the corpus folders.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("dmn", dmn),
    ("var", var),
    ("op", op),
    ("mask", mask),
    ("ncap2", ncap2),
    ("stations", stations),
];

/// Largest input a target looks at: hostile text on a command line or in a list is
/// short; longer inputs only slow the search.
const MAX: usize = 4096;

fn text(data: &[u8]) -> Option<&str> {
    if data.len() > MAX {
        return None;
    }
    std::str::from_utf8(data).ok()
}

/// Coordinates a `-d` is resolved against (each with length 1..=7).
fn coordinates() -> Vec<(Vec<f64>, Option<&'static str>)> {
    vec![
        (vec![-45.0, 45.0], None),
        (vec![0.0, 90.0, 180.0, 270.0], None),
        (vec![1000.0, 850.0, 500.0], None),
        (vec![f64::NAN, 10.0, f64::NAN, 30.0], None),
        (vec![f64::NEG_INFINITY, 0.0, f64::INFINITY], None),
        (vec![7.0], None),
        (
            vec![0.0, 31.0, 59.0, 90.0, 120.0, 151.0, 181.0],
            Some("days since 2000-01-01"),
        ),
    ]
}

/// `-d`: parse; a parsed spec resolves (on every test dimension, both index bases) to
/// indices inside the dimension, or to an error.
pub fn dmn(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let Ok(spec) = HyperslabSpec::parse(s) else {
        return;
    };
    assert!(spec.stride > 0, "{s:?}: stride 0 accepted");
    for (c, units) in coordinates() {
        for with_coord in [true, false] {
            let info = DimInfo {
                len: c.len(),
                coord: with_coord.then_some(c.as_slice()),
                units,
                calendar: None,
            };
            for fortran in [false, true] {
                if let Ok(idx) = hyperslab::resolve_one(&spec, &info, fortran) {
                    assert!(
                        idx.iter().all(|&i| i < c.len()),
                        "{s:?} on {c:?}: index outside the dimension: {idx:?}"
                    );
                }
            }
        }
    }
}

/// A small file's metadata: coordinates, a formula_terms variable, bounds, a cell measure.
fn meta() -> Meta {
    let mut m = Meta::new(Format::Classic);
    for (name, len, unlimited) in [("time", 3, true), ("lat", 2, false), ("lon", 4, false)] {
        m.dims.push(Dim {
            name: name.into(),
            len,
            unlimited,
            group: 0,
        });
    }
    let var = |name: &str, dims: Vec<usize>, attrs: Vec<Attr>| Var {
        name: name.into(),
        ty: NcType::Float,
        dims,
        attrs,
        storage: Storage::default(),
        group: 0,
    };
    m.vars = vec![
        var("time", vec![0], vec![]),
        var("lat", vec![1], vec![Attr::text("bounds", "lat_bnds")]),
        var("lon", vec![2], vec![]),
        var("lat_bnds", vec![1], vec![]),
        var("area", vec![1, 2], vec![]),
        var(
            "T",
            vec![0, 1, 2],
            vec![
                Attr::text("cell_measures", "area: area"),
                Attr::text("coordinates", "lat lon"),
            ],
        ),
        var("PS", vec![0, 1, 2], vec![]),
        var(
            "lev",
            vec![],
            vec![Attr::text("formula_terms", "a: a b: b ps: PS")],
        ),
    ];
    m.attrs.push(Attr {
        name: "Conventions".into(),
        value: Values::Char(b"CF-1.6".to_vec()),
    });
    m
}

/// `-v`: split, then select with every switch combination; a selection holds valid,
/// distinct variable indices.
pub fn var(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let m = meta();
    let vars = select::split_list(s);
    // One combination of the four switches per input, from the input's bytes (so
    // mutations reach each of the 16): every select compiles the regular expressions
    // again, and all 16 per input made the target 16 times slower.
    let bits = data
        .iter()
        .fold(data.len() as u8, |a, &b| a.wrapping_add(b))
        & 15;
    let args = SelectArgs {
        vars,
        exclude: bits & 1 != 0,
        no_coords: bits & 2 != 0,
        all_coords: bits & 4 != 0,
        no_formula_terms: bits & 8 != 0,
        no_cell_measures: bits & 8 != 0,
        groups: Vec::new(),
        union: false,
        cf_always: bits & 1 != 0,
    };
    if let Ok(sel) = select::select(&m, &args) {
        let mut seen = vec![false; m.vars.len()];
        for &v in &sel {
            assert!(v < m.vars.len(), "{s:?}: variable {v} does not exist");
            assert!(!seen[v], "{s:?}: variable {v} selected twice");
            seen[v] = true;
        }
    }
}

/// `-y`: both operation parsers.
pub fn op(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let _ = nco_core::kernels::reduce::Op::parse(s);
    let _ = nco_core::kernels::binary::BinOp::parse(s);
}

/// `-B`: a parsed condition names at least one variable, none of them empty.
pub fn mask(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(e) = nco_core::rules::mask::MaskExpr::parse(s) {
        let names = e.variables();
        assert!(!names.is_empty(), "{s:?}: no variable name");
        assert!(
            names.iter().all(|n| !n.trim().is_empty()),
            "{s:?}: {names:?}"
        );
    }
}

/// The ncap2 parser.
pub fn ncap2(data: &[u8]) {
    let Some(s) = text(data) else { return };
    let _ = ncap::parser::parse(s);
}

/// The station list: a parsed station has a target and a line number inside the text.
pub fn stations(data: &[u8]) {
    let Some(s) = text(data) else { return };
    if let Ok(list) = nco_core::stations::parse_list(s) {
        let lines = s.lines().count();
        for st in list {
            assert!(!st.target.is_empty(), "{s:?}: station without target");
            assert!(st.line >= 1 && st.line <= lines, "{s:?}: line {}", st.line);
        }
    }
}
