//! Which variables the size- and rank-preserving arithmetic operators (ncbo, nces, and
//! ncpdq when packing) copy from the first file instead of computing on: NCO 5.1.4's
//! coordinate-like variables (named in any `bounds`, `climatology` or `coordinates`
//! attribute, whatever the `Conventions`; not those named by a `grid_mapping`) and, in
//! files declaring CF conventions, its list of grid variables by name. Expected values are the ones NCO
//! 5.1.4 writes (`NCO_RS_BIN_DIR=/usr/bin cargo test --release -p nco-tests fixed::`).

use crate::common::{cdl, raw};
use nco_tests::{nco, Scratch};

/// Two members: `b` and `aux` are named by attributes of other variables, `crs` by a
/// `grid_mapping` (an ordinary variable for NCO); `v` is a plain field. Values of the second are the first's + 10.
fn members(s: &Scratch, conventions: &str) -> (String, String) {
    // Variable, its shape, its values in the first member.
    const VARS: [(&str, &str, &[i32]); 11] = [
        ("x", "x", &[0, 1]),
        ("x_b", "x, nb", &[0, 1, 1, 2]),
        ("v", "x", &[1, 2]),
        ("aux", "x", &[3, 4]),
        ("b", "x", &[5, 6]),
        ("crs", "", &[7]),
        ("gw", "x", &[8, 9]),
        ("ORO", "x", &[10, 11]),
        ("msk_land", "x", &[12, 13]),
        ("nlon", "x", &[14, 15]),
        ("wnummax", "x", &[16, 17]),
    ];
    let m = |name: &str, add: i32| {
        let mut defs = String::new();
        let mut data = String::new();
        for (v, shape, vals) in VARS {
            let ty = if v == "crs" { "int" } else { "float" };
            let shape = if shape.is_empty() {
                String::new()
            } else {
                format!("({shape})")
            };
            defs.push_str(&format!("{ty} {v}{shape} ; "));
            let vals: Vec<String> = vals.iter().map(|x| (x + add).to_string()).collect();
            data.push_str(&format!("{v} = {} ; ", vals.join(", ")));
        }
        cdl(
            s,
            name,
            &format!(
                "netcdf {name} {{ dimensions: x = 2 ; nb = 2 ; variables: {defs} \
                 x:bounds = \"x_b\" ; v:coordinates = \"aux\" ; v:grid_mapping = \"crs\" ; \
                 v:bounds = \"b\" ; {conventions} data: {data} }}"
            ),
        )
    };
    (m("m1", 0), m("m2", 10))
}

#[test]
fn ncbo_copies_variables_named_by_cf_attributes_without_conventions() {
    let s = Scratch::new();
    let (a, b) = members(&s, "");
    let out = s.arg("out.nc");
    nco("ncbo").args(["-h", &b, &a, &out]).succeeds();
    assert_eq!(raw(&out, "v", "%g "), "10 10");
    for (var, want) in [("x_b", "10 11 11 12"), ("aux", "13 14"), ("b", "15 16")] {
        assert_eq!(raw(&out, var, "%g "), want, "{var}");
    }
    assert_eq!(raw(&out, "crs", "%d"), "10");
    // Without Conventions the grid names are ordinary fields.
    assert_eq!(raw(&out, "gw", "%g "), "10 10");
    assert_eq!(raw(&out, "ORO", "%g "), "10 10");
}

#[test]
fn nces_copies_grid_variables_by_name_with_cf_conventions() {
    let s = Scratch::new();
    let (a, b) = members(&s, ":Conventions = \"CF-1.8\" ;");
    let out = s.arg("out.nc");
    nco("nces").args(["-h", &a, &b, &out]).succeeds();
    assert_eq!(raw(&out, "v", "%g "), "6 7");
    for (var, want) in [
        ("x_b", "0 1 1 2"),
        ("aux", "3 4"),
        ("b", "5 6"),
        ("gw", "8 9"),
        ("ORO", "10 11"),
        ("msk_land", "12 13"),
    ] {
        assert_eq!(raw(&out, var, "%g "), want, "{var}");
    }
    assert_eq!(raw(&out, "crs", "%d"), "12");
    // Not in NCO 5.1.4's list: averaged.
    assert_eq!(raw(&out, "nlon", "%g "), "19 20");
    assert_eq!(raw(&out, "wnummax", "%g "), "21 22");
}

#[test]
fn ncecat_stacks_a_grid_mapping_variable_not_a_bounds_one() {
    let s = Scratch::new();
    let (a, b) = members(&s, "");
    let out = s.arg("out.nc");
    nco("ncecat").args(["-h", &a, &b, &out]).succeeds();
    let h = nco_tests::ncdump(&["-h"], &out);
    assert!(h.contains("int crs(record) ;"), "{h}");
    assert!(h.contains("float b(x) ;"), "{h}");
    assert!(h.contains("float v(record, x) ;"), "{h}");
}
