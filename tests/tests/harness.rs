//! The harness itself: `nco_tests::Dump` reads what ncdump prints, and
//! `nco_tests::compare` finds what differs between two files (the differential and
//! station tests rely on it to fail when files differ).

use crate::common::cdl;
use nco_tests::dump::Value;
use nco_tests::{compare, fixture, fixture_nc4, Dump, Scratch};

#[test]
fn dump_reads_the_fixture() {
    let d = Dump::of(&fixture().to_string_lossy());
    assert_eq!(d.format, "classic");
    let root = d.root();
    let time = root.dims.iter().find(|x| x.name == "time").unwrap();
    assert_eq!((time.len, time.unlimited), (10, true));
    assert_eq!(d.var("PS").dims, ["time", "lat", "lon"]);
    assert_eq!(d.var("PS").data.len(), 10 * 2 * 4);
    assert_eq!(d.var("PS").data[1], Value::Int(101_100));
    assert_eq!(d.var("name").data, [Value::Text("fixture".into())]);
    assert_eq!(d.var("sc_fill").data, [Value::Fill]);
    assert_eq!(d.var("fld_pck").attr_f64("add_offset"), Some(5.0));
    assert_eq!(d.var("fld_pck").attr("scale_factor").unwrap().ty, "float");
    assert_eq!(d.var("hyam").numbers(), [0.1, 0.05, 0.0]);
}

#[test]
fn compare_finds_format_values_attributes_and_variables() {
    let (classic, nc4) = (fixture().to_string_lossy(), fixture_nc4().to_string_lossy());
    compare(&classic, &classic).equal();
    assert_eq!(
        compare(&classic, &nc4).differences(),
        ["format classic != netCDF-4"]
    );
    let s = Scratch::new();
    let text = |v: &str, att: &str, extra: &str| {
        format!(
            "netcdf x {{\ndimensions:\n n = 3 ;\nvariables:\n double v(n) ;\n  v:a = {att} ;\n \
             {extra}\n :history = \"{v}\" ;\ndata:\n v = {v} ;\n}}\n"
        )
    };
    let a = cdl(&s, "a", &text("1, 2, 3", "1.", ""));
    let b = cdl(&s, "b", &text("1, 2.0000001, 3", "1.f", "int w ;"));
    assert_eq!(
        compare(&a, &b).differences(),
        [
            "variable w: only in the second file",
            "v@a: type double != float",
            "v: 1 of 3 values differ, the first at 1: 2 != 2.0000001",
        ]
    );
    // history differs too, and is not compared; within 1e-6 the values are equal.
    assert_eq!(
        compare(&a, &b)
            .rtol(1e-6)
            .without_attributes()
            .differences(),
        ["variable w: only in the second file"]
    );
}
