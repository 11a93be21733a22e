//! ncwa project tests on our own fixture (tests/data/fixture.cdl).
//!
//! Tests named `ncwa_rNN_*` / `ncwa_nNN_*` cover the behaviour of NCO's reference case
//! with the same id (the cases .ci/run runs), on our fixture. Expected values are
//! worked out by hand where possible (fld3 = 100*lat + 10*lev + lon indices, gw = 0.25,
//! 0.75) and are the values NCO 5.1.4 prints (`NCO_RS_BIN_DIR=/usr/bin cargo test
//! --release -p nco-tests`).

use crate::common::{bad_input, cdl, header_lines, raw};
use nco_tests::{fx, is_nco, nco, value, Scratch};

/// `ncwa ARGS fixture out` in a fresh scratch folder; returns (scratch, out path).
fn ncwa(args: &[&str]) -> (Scratch, String) {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncwa").args(args).arg(fx()).arg(&out).succeeds();
    (s, out)
}

/// The `cell_methods` line of `ncks -m` for `var`.
fn cell_methods(file: &str, var: &str) -> String {
    nco("ncks")
        .args(["-m", "--trd", "-C", "-v", var, file])
        .succeeds()
        .stdout
        .lines()
        .find(|l| l.contains("cell_methods"))
        .unwrap_or("")
        .to_string()
}

// ---------------------------------------------------------------- reference cases

#[test]
fn ncwa_r02_numerator_weighted_sum() {
    // -N: sum of w*x = 0.25*(10+20+30+40) + 0.75*(50+60+70+80) = 220.
    let (_s, out) = ncwa(&["-N", "-h", "-O", "-a", "lat,lon", "-w", "gw", "-v", "orog"]);
    assert_eq!(value(&out, "orog", "%g", &[]), "220");
}

#[test]
fn ncwa_r03_average_skips_fill_value() {
    let (_s, out) = ncwa(&["-h", "-O", "-a", "lon", "-v", "fld_fill"]);
    assert_eq!(value(&out, "fld_fill", "%f", &[]), "2.000000");
}

#[test]
fn ncwa_r04_missing_value_attribute_alone_is_not_missing() {
    // fld_nofill has missing_value but no _FillValue: NCO 5.1.4 averages the 1e36s.
    let (_s, out) = ncwa(&["-h", "-O", "-a", "lon", "-v", "fld_nofill"]);
    assert_eq!(value(&out, "fld_nofill", "%g", &[]), "5e+35");
}

#[test]
fn ncwa_r05_mask_on_the_coordinate_itself() {
    let (_s, out) = ncwa(&[
        "-h", "-O", "-v", "lat", "-m", "lat", "-M", "45.0", "-T", "eq", "-a", "lat",
    ]);
    assert_eq!(value(&out, "lat", "%e", &[]), "4.500000e+01");
}

#[test]
fn ncwa_r07_masked_and_weighted_average() {
    // lev > 100 keeps lev 500 and 1000, weights hybm 0.45 and 1:
    // (10*0.45 + 20*1)/1.45 = 16.8966 at lat 0, lon 0.
    let (_s, out) = ncwa(&[
        "-h", "-O", "-v", "fld3", "-m", "lev", "-M", "100.0", "-T", "gt", "-a", "lev", "-w", "hybm",
    ]);
    assert_eq!(
        value(&out, "fld3", "%g ", &[]),
        "16.8966 17.8966 18.8966 19.8966 116.897 117.897 118.897 119.897"
    );
}

#[test]
fn ncwa_r12_max_over_all_dimensions() {
    let (_s, out) = ncwa(&["-h", "-O", "-y", "max", "-v", "fld_rec3"]);
    assert_eq!(value(&out, "fld_rec3", "%f", &[]), "16.000000");
}

#[test]
fn ncwa_r13_short_total_wraps_around() {
    // 20000 + 20000 + 1000 = 41000 does not fit NC_SHORT: NCO keeps the type and the
    // sum wraps to 41000 - 65536 = -24536.
    let s = Scratch::new();
    let inp = cdl(
        &s,
        "sht",
        "netcdf sht { dimensions: n = 3 ; variables: short s(n) ; data: s = 20000, 20000, 1000 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncwa")
        .args(["-h", "-O", "-y", "ttl", "-v", "s", &inp, &out])
        .succeeds();
    assert_eq!(value(&out, "s", "%d", &[]), "-24536");
}

/// Compatibility difference (README): the wrapped integer total is NCO's value, but we
/// also warn on stderr; NCO wraps silently.
#[test]
fn integer_overflow_wraps_like_nco_and_warns() {
    let s = Scratch::new();
    let inp = cdl(
        &s,
        "sht",
        "netcdf sht { dimensions: n = 3 ; variables: short s(n) ; data: s = 20000, 20000, 1000 ; }",
    );
    let out = s.arg("out.nc");
    let r = nco("ncwa")
        .args(["-h", "-O", "-y", "ttl", "-v", "s", &inp, &out])
        .succeeds();
    assert_eq!(value(&out, "s", "%d", &[]), "-24536");
    if is_nco() {
        return;
    }
    r.stderr_contains("WARNING").stderr_contains("overflow");
}

#[test]
fn ncwa_r18_b_keeps_averaged_dimension_of_size_one() {
    let (_s, out) = ncwa(&["-h", "-O", "-a", "lon", "-b", "-v", "lon"]);
    nco("ncks")
        .args(["-C", "-H", "--trd", "-v", "lon", &out])
        .succeeds()
        .last_line_is("lon[0]=135");
    let (_s2, out2) = ncwa(&["-O", "-a", "lon", "-b", "-v", "orog"]);
    assert_eq!(header_lines(&out2, "orog("), "float orog(lat, lon) ;");
    assert_eq!(header_lines(&out2, "lon = "), "lon = 1 ;");
    assert_eq!(value(&out2, "orog", "%g ", &[]), "25 65");
}

#[test]
fn ncwa_r19_mask_condition_true_nowhere_gives_missing() {
    let (_s, out) = ncwa(&[
        "-O",
        "-C",
        "-v",
        "lat",
        "-a",
        "lat",
        "--mask_condition",
        "lat < -50.0",
    ]);
    nco("ncks")
        .args(["-H", "--trd", "-v", "lat", &out])
        .succeeds()
        .last_line_is("lat = _");
}

#[test]
fn ncwa_r21_weight_mask_and_hyperslab_together() {
    // lat 0..90 keeps lat index 1; fld2 > 6 keeps lon 1..3: 6*60 + 7*70 + 8*80 = 1490.
    let (_s, out) = ncwa(&[
        "-O",
        "-C",
        "-y",
        "ttl",
        "-v",
        "orog",
        "-d",
        "lat,0.,90.",
        "-w",
        "areacella",
        "-m",
        "fld2",
        "-M",
        "6.0",
        "-T",
        "gt",
    ]);
    nco("ncks")
        .args(["-H", "--trd", "-v", "orog", &out])
        .succeeds()
        .last_line_is("orog = 1490");
}

#[test]
fn ncwa_r22_cell_methods_for_time_and_lon() {
    let (_s, out) = ncwa(&[
        "--op_typ=max",
        "-O",
        "-v",
        "fld_rec3,sc_dbl",
        "-a",
        "time,lon",
    ]);
    assert!(
        cell_methods(&out, "fld_rec3")
            .ends_with("cell_methods, size = 18 NC_CHAR, value = time, lon: maximum"),
        "{}",
        cell_methods(&out, "fld_rec3")
    );
    // A variable without the averaged dimensions gets none.
    assert_eq!(cell_methods(&out, "sc_dbl"), "");
}

#[test]
fn ncwa_r25_record_weight_over_all_dimensions() {
    // fld_rec3[t,i] = t + i, weights fld_rec = 10(t+1):
    // sum (t+1)(t+3.5) / sum (t+1) = 522.5/55 = 9.5.
    let (_s, out) = ncwa(&["-h", "-O", "-C", "-w", "fld_rec", "-v", "fld_rec3"]);
    assert_eq!(value(&out, "fld_rec3", "%f", &[]), "9.500000");
}

#[test]
fn ncwa_n01_weighted_average_leaves_one_value_per_level() {
    // lev 0: 0.25*1.5 + 0.75*101.5 = 76.5.
    let (_s, out) = ncwa(&["-O", "-a", "lat,lon", "-w", "gw", "-v", "fld3"]);
    assert_eq!(value(&out, "fld3", "%g ", &[]), "76.5 86.5 96.5");
}

// ---------------------------------------------------------------- statistics

/// NCO 5.1.4's results: (op, fld3 lev 1 and fld_fill averaged over lon, unweighted |
/// fld3 and orog averaged over lat,lon with -w gw | fld1_sht and fld1_int over lon).
const OPS: [(&str, &str, &str, &str); 13] = [
    ("avg", "11.5 111.5|2", "76.5 86.5 96.5|55", "8001|25004"),
    (
        "sqravg",
        "132.25 12432.2|4",
        "5852.25 7482.25 9312.25|3025",
        "-16671|625200016",
    ),
    (
        "avgsqr",
        "133.5 12433.5|5",
        "7728.5 9358.5 11188.5|3450",
        "16391|-1794967246",
    ),
    ("max", "13 113|3", "77.25 84.75 92.25|60", "32000|100000"),
    ("min", "10 110|1", "0 2.5 5|2.5", "-2|-3"),
    (
        "rms",
        "11.5542 111.506|2.23607",
        "87.9119 96.7393 105.776|58.7367",
        "16000|50000",
    ),
    (
        "rmssdn",
        "13.3417 128.756|3.16228",
        "87.9119 96.7393 105.776|58.7367",
        "18475|57735",
    ),
    (
        "sqrt",
        "3.39117 10.5594|1.41421",
        "8.74643 9.30054 9.82344|7.4162",
        "89|158",
    ),
    ("ttl", "46 446|4", "306 346 386|220", "32003|100016"),
    ("mabs", "13 113|3", "77.25 84.75 92.25|60", "32000|100000"),
    ("mebs", "11.5 111.5|2", "76.5 86.5 96.5|55", "8001|25005"),
    ("mibs", "10 110|1", "0 2.5 5|2.5", "0|3"),
    ("tabs", "46 446|4", "306 346 386|220", "32003|100016"),
];

#[test]
fn every_statistic_with_and_without_weights() {
    for (op, plain, weighted, _) in OPS {
        let (_s, out) = ncwa(&["-O", "-y", op, "-a", "lon", "-v", "fld3,fld_fill"]);
        let got = format!(
            "{}|{}",
            value(&out, "fld3", "%.6g ", &["-d", "lev,1"]),
            value(&out, "fld_fill", "%.6g ", &[])
        );
        assert_eq!(got, plain, "-y {op} unweighted");
        let (_s, out) = ncwa(&[
            "-O",
            "-y",
            op,
            "-a",
            "lat,lon",
            "-w",
            "gw",
            "-v",
            "fld3,orog",
        ]);
        let got = format!(
            "{}|{}",
            value(&out, "fld3", "%.6g ", &[]),
            value(&out, "orog", "%.6g ", &[])
        );
        assert_eq!(got, weighted, "-y {op} -w gw");
    }
}

#[test]
fn every_statistic_on_integers_keeps_the_type() {
    // Averages of integers are rounded (8000.75 -> 8001); squares overflow and wrap.
    for (op, _, _, ints) in OPS {
        if op == "mebs" || op == "tabs" {
            continue; // compatibility difference: integer_mebs_rounds_and_tabs_sums_absolute_values
        }
        let (_s, out) = ncwa(&["-O", "-y", op, "-a", "lon", "-v", "fld1_sht,fld1_int"]);
        let got = format!(
            "{}|{}",
            value(&out, "fld1_sht", "%d", &[]),
            value(&out, "fld1_int", "%d", &[])
        );
        assert_eq!(got, ints, "-y {op} on integers");
        assert_eq!(header_lines(&out, "short fld1_sht"), "short fld1_sht ;");
    }
}

#[test]
/// Compatibility differences (README): on integers NCO 5.1.4 truncates `mebs` (while it
/// rounds `avg`) and its `tabs` sums the signed values; ours rounds `mebs` and `tabs`
/// sums absolute values, as the statistic's definition says.
fn integer_mebs_rounds_and_tabs_sums_absolute_values() {
    for (op, _, _, ints) in OPS.iter().filter(|o| o.0 == "mebs" || o.0 == "tabs") {
        let (_s, out) = ncwa(&["-O", "-y", op, "-a", "lon", "-v", "fld1_sht,fld1_int"]);
        let got = format!(
            "{}|{}",
            value(&out, "fld1_sht", "%d", &[]),
            value(&out, "fld1_int", "%d", &[])
        );
        let ours = if *op == "mebs" {
            "8002|25006"
        } else {
            "32007|100022"
        };
        let want = if is_nco() { *ints } else { ours };
        assert_eq!(got, want, "-y {op} on integers");
    }
}

#[test]
fn cell_methods_name_every_statistic_as_nco() {
    let names = [
        ("avg", "mean"),
        ("sqravg", "square_of_mean"),
        ("avgsqr", "variance"),
        ("max", "maximum"),
        ("min", "minimum"),
        ("rms", "root_mean_square"),
        ("rmssdn", "root_mean_square_nm1"),
        ("sqrt", "square_root_of_mean"),
        ("ttl", "sum"),
        ("mabs", "maximum_absolute_value"),
        ("mebs", "mean_absolute_value"),
        ("mibs", "minimum_absolute_value"),
        ("tabs", "sum absolute_value"),
    ];
    for (op, name) in names {
        let (_s, out) = ncwa(&["-O", "-y", op, "-a", "lat,lon", "-v", "orog"]);
        let line = cell_methods(&out, "orog");
        assert!(
            line.ends_with(&format!("value = lat, lon: {name}")),
            "-y {op}: {line}"
        );
    }
}

#[test]
fn no_cll_mth_writes_no_cell_methods() {
    let (_s, out) = ncwa(&["-O", "--no_cll_mth", "-a", "lon", "-v", "orog"]);
    assert_eq!(header_lines(&out, "cell_methods"), "");
}

#[test]
fn n_without_weights_is_the_plain_sum() {
    let (_s, out) = ncwa(&["-O", "-N", "-a", "lat", "-v", "orog"]);
    assert_eq!(value(&out, "orog", "%g ", &[]), "60 80 100 120");
}

#[test]
fn two_dimensional_weight() {
    // sum(area*fld2)/sum(area) = 222/36 = 6.16667; orog: 2040/36 = 56.6667.
    let (_s, out) = ncwa(&["-O", "-a", "lat,lon", "-w", "areacella", "-v", "fld2,orog"]);
    assert_eq!(value(&out, "fld2", "%.6g", &[]), "6.16667");
    assert_eq!(value(&out, "orog", "%.6g", &[]), "56.6667");
}

#[test]
fn mask_comparators() {
    // orog = 10..80; fld2 = orog/10 - ... (1.5..8.5); mask value 40 is orog[0,3].
    for (t, want) in [
        ("eq", "4.5"),
        ("ne", "5.07143"),
        ("lt", "2.5"),
        ("le", "3"),
        ("gt", "7"),
        ("ge", "6.5"),
    ] {
        let (_s, out) = ncwa(&[
            "-O", "-a", "lat,lon", "-m", "orog", "-M", "40", "-T", t, "-v", "fld2",
        ]);
        assert_eq!(value(&out, "fld2", "%g", &[]), want, "-T {t}");
    }
}

#[test]
fn mask_condition_b() {
    let (_s, out) = ncwa(&["-O", "-a", "lon", "-B", "orog > 25", "-v", "fld2"]);
    assert_eq!(value(&out, "fld2", "%g ", &[]), "4 7");
    // Nothing left at lat 1: fld2 has no _FillValue, so the default float fill.
    let (_s, out) = ncwa(&["-O", "-a", "lon", "-B", "orog <= 25", "-v", "fld2"]);
    assert_eq!(raw(&out, "fld2", "%g "), "2 9.96921e+36");
}

#[test]
fn masked_packed_variable_gets_a_fill_value_of_its_own_type() {
    // Compatibility difference: NCO 5.1.4 gives the unpacked float mean of a packed
    // variable the packed type's _FillValue (-32767s), of another type than the
    // variable it describes; ours is the float default fill.
    if is_nco() {
        return;
    }
    let (_s, out) = ncwa(&["-O", "-a", "lon", "-B", "orog > 25", "-v", "fld_pck"]);
    assert_eq!(
        header_lines(&out, "fld_pck:_FillValue").trim(),
        "fld_pck:_FillValue = 9.96921e+36f ;"
    );
    assert!(header_lines(&out, "float fld_pck").contains("float fld_pck ;"));
    assert_eq!(value(&out, "fld_pck", "%g", &[]), "7.5");
}

#[test]
fn all_missing_gives_missing() {
    let (_s, out) = ncwa(&[
        "-O",
        "-a",
        "time",
        "-y",
        "max",
        "-d",
        "time,1,,2",
        "-v",
        "rec_fill",
    ]);
    assert_eq!(raw(&out, "rec_fill", "%g"), "-999");
    let (_s, out) = ncwa(&["-O", "-a", "time", "-v", "sc_fill,rec_fill"]);
    assert_eq!(raw(&out, "sc_fill", "%g"), "1e+36");
    assert_eq!(value(&out, "rec_fill", "%g", &[]), "5");
}

#[test]
fn fill_value_skipped_by_total() {
    let (_s, out) = ncwa(&["-O", "-a", "lon", "-y", "ttl", "-v", "fld_fill"]);
    assert_eq!(value(&out, "fld_fill", "%g", &[]), "4");
}

#[test]
fn packed_input_is_written_unpacked() {
    // fld_pck = 10..40 * 0.1 + 5 = 6..9: mean 7.5, float, packing attributes gone.
    let (_s, out) = ncwa(&["-O", "-a", "lon", "-v", "fld_pck"]);
    assert_eq!(value(&out, "fld_pck", "%g", &[]), "7.5");
    assert_eq!(header_lines(&out, "fld_pck ;"), "float fld_pck ;");
    assert_eq!(header_lines(&out, "scale_factor"), "");
    assert_eq!(header_lines(&out, "add_offset"), "");
    // Packed with a _FillValue: the fill is converted to the unpacked type.
    let (_s, out) = ncwa(&["-O", "-a", "time", "-v", "rec_pck"]);
    assert_eq!(value(&out, "rec_pck", "%g", &[]), "5");
    assert_eq!(
        header_lines(&out, "rec_pck"),
        "float rec_pck ; | rec_pck:_FillValue = -1.f ; | \
         rec_pck:long_name = \"packed: unpacks to 1..9 then missing\" ; | \
         rec_pck:cell_methods = \"time: mean\" ;"
    );
}

#[test]
fn integer_fill_and_integer_average() {
    // rec_int_fill: 2..8 valid -> 5; fld_rec 10..100 -> 55.
    let (_s, out) = ncwa(&["-O", "-a", "time", "-v", "rec_int_fill,fld_rec"]);
    assert_eq!(value(&out, "rec_int_fill", "%d", &[]), "5");
    assert_eq!(value(&out, "fld_rec", "%d", &[]), "55");
    assert_eq!(header_lines(&out, "int rec_int_fill"), "int rec_int_fill ;");
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_unknown_dimension_in_a() {
    // NCO's message does not name the dimension ("no variables fit criteria").
    bad_input(
        "ncwa",
        &["-a", "nodim", "-v", "fld3", &fx()],
        "nodim",
        "ERROR",
    );
}

#[test]
fn bad_weight_variable_absent() {
    bad_input(
        "ncwa",
        &["-a", "lon", "-w", "nowgt", "-v", "fld3", &fx()],
        "nowgt",
        "nowgt",
    );
}

#[test]
fn bad_mask_variable_absent() {
    bad_input(
        "ncwa",
        &["-a", "lon", "-m", "nomsk", "-v", "fld3", &fx()],
        "nomsk",
        "nomsk",
    );
    bad_input(
        "ncwa",
        &["-a", "lon", "-B", "nomsk > 3", "-v", "fld3", &fx()],
        "nomsk",
        "nomsk",
    );
}

#[test]
fn bad_comparator_t() {
    bad_input(
        "ncwa",
        &[
            "-a",
            "lon",
            "-m",
            "orog",
            "-M",
            "1",
            "-T",
            "xx",
            "-v",
            "fld3",
            &fx(),
        ],
        "xx",
        "xx",
    );
}

#[test]
fn bad_mask_condition_b() {
    bad_input(
        "ncwa",
        &["-a", "lon", "-B", "orog", "-v", "fld3", &fx()],
        "orog",
        "orog",
    );
    bad_input(
        "ncwa",
        &["-a", "lon", "-B", "orog > abc", "-v", "fld3", &fx()],
        "orog > abc",
        "orog > abc",
    );
}

#[test]
fn bad_weights_summing_to_zero() {
    // Compatibility difference: NCO writes NaN where the weights (hyam, 0 at lev 2)
    // sum to zero; we refuse with an error naming the variable.
    if is_nco() {
        return;
    }
    bad_input(
        "ncwa",
        &["-a", "lat", "-w", "hyam", "-v", "fld3", &fx()],
        "fld3",
        "",
    );
}

#[test]
fn mask_adds_fill_value_attributes() {
    let (_s, out) = ncwa(&[
        "-O", "-a", "lon", "-m", "orog", "-M", "0", "-T", "gt", "-v", "fld2",
    ]);
    assert_eq!(
        header_lines(&out, "_FillValue"),
        "lon:_FillValue = 9.96921e+36f ; | fld2:_FillValue = 9.96920996838687e+36 ;"
    );
}

#[test]
fn output_keeps_the_input_variable_order() {
    let (_s, out) = ncwa(&["-O", "-a", "lon", "-v", "orog,fld2,lat"]);
    let hdr = nco_tests::ncdump(&["-h"], &out);
    let order: Vec<&str> = hdr
        .lines()
        .filter(|l| l.starts_with('\t') && !l.starts_with("\t\t") && l.contains('('))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|d| d.split('(').next().unwrap_or(d))
        .collect();
    assert_eq!(order, ["lat", "areacella", "orog", "fld2"], "{hdr}");
}

#[test]
fn chunked_netcdf4_input_with_a_dimension_averaged_away() {
    // The input's chunks (rank 2) cannot apply to the rank-1 output: they used to reach
    // libnetcdf and fail ("slices does not match"). NCO 5.1.4 gives the same values.
    let s = Scratch::new();
    let input = cdl(
        &s,
        "c",
        "netcdf c { dimensions: y = 2 ; x = 4 ; variables: float v(y, x) ; \
         v:_ChunkSizes = 1, 2 ; :_Format = \"netCDF-4\" ; \
         data: v = 1, 2, 3, 4, 5, 6, 7, 8 ; }",
    );
    let out = s.arg("o.nc");
    nco("ncwa").args(["-O", "-a", "y", &input, &out]).succeeds();
    assert_eq!(value(&out, "v", "%g ", &[]), "3 4 5 6");
}
