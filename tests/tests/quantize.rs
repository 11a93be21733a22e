//! Quantization (`--ppc`, `--baa`, NCO manual "Precision-Preserving Compression") on
//! `tests/data/quantize.cdl`: every bit-adjustment algorithm and decimal rounding as
//! NCO 5.1.4's ncks gives them (values from NCO 5.1.4; `NCO_RS_BIN_DIR=/usr/bin` runs the
//! same checks against it, skipping those where NCO 5.1.4 is wrong: README,
//! compatibility notes), the attributes it records, the variables `default` leaves
//! alone, the other operators, and the refusals.

use nco_tests::dump::Value;
use nco_tests::{is_nco, nco, quantize_fixture, Dump, Scratch};

fn qx() -> String {
    quantize_fixture().to_string_lossy().into_owned()
}

/// Numbers as ncdump prints them (`_` is the fill value, kept as NaN).
fn nums(text: &str) -> Vec<f64> {
    text.split(',')
        .map(str::trim)
        .map(|t| {
            if t == "_" {
                f64::NAN
            } else {
                t.parse().unwrap()
            }
        })
        .collect()
}

/// Bit-exact comparison (signs of zeros and NaN included).
#[track_caller]
fn same(got: &[f64], want: &[f64], what: &str) {
    let bits = |x: &[f64]| -> Vec<u64> {
        x.iter()
            .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
            .collect()
    };
    assert_eq!(bits(got), bits(want), "{what}: got {got:?}, want {want:?}");
}

/// `ncks ARGS quantize.nc out.nc`, dumped.
fn ncks(s: &Scratch, args: &[&str]) -> Dump {
    let out = s.arg("out.nc");
    nco("ncks")
        .arg("-O")
        .args(args)
        .arg(qx())
        .arg(&out)
        .succeeds();
    Dump::of(&out)
}

fn int_attr(d: &Dump, var: &str, att: &str) -> Option<i128> {
    d.var(var).attr(att).map(|a| match &a.values[0] {
        Value::Int(i) => *i,
        v => panic!("{var}:{att} is {v}, not an int"),
    })
}

const GBR: &str = "QuantizeGranularBitRoundNumberOfSignificantDigits";

#[test]
fn every_algorithm_as_nco_quantizes() {
    // (--baa, precision, attribute, T, D): NCO 5.1.4 `ncks -4 --baa=N --ppc T,D=P`.
    let cases = [
        (0, 3, "QuantizeBitGroomNumberOfSignificantDigits",
         "273.125, 280.499969, _, 0.00123500812, 1.23438367e+10, 3.14160132, 2.71777344, 1.41455066, -17.34375, 12347.999",
         "0.0999755859375, 0.12002563476562499, 0.12298583984375, 0.12341308593749999, 0.123443603515625, 0.12347412109374999, 0.123443603515625, 0.12347412109374999, 0.123443603515625, 123469823.99999999"),
        (1, 3, "QuantizeBitShaveNumberOfSignificantDigits",
         "273.125, 280.375, _, 0.0012345314, 1.23438367e+10, 3.140625, 2.71777344, 1.4140625, -17.34375, 12344",
         "0.0999755859375, 0.1199951171875, 0.12298583984375, 0.123382568359375, 0.123443603515625, 0.123443603515625, 0.123443603515625, 0.123443603515625, 0.123443603515625, 123437056"),
        (2, 3, "QuantizeBitSetNumberOfSignificantDigits",
         "273.249969, 280.499969, _, 0.00123500812, 1.234803e+10, 3.14160132, 2.71874976, 1.41455066, -17.3515606, 12347.999",
         "0.10000610351562499, 0.12002563476562499, 0.12301635742187499, 0.12341308593749999, 0.12347412109374999, 0.12347412109374999, 0.12347412109374999, 0.12347412109374999, 0.12347412109374999, 123469823.99999999"),
        (3, 3, "QuantizeDigitRoundNumberOfSignificantDigits",
         "273.5, 280.5, _, 0.00123214722, 1.23144765e+10, 3.14453125, 2.71484375, 1.41796875, -17.34375, 12320",
         "0.100006103515625, 0.11962890625, 0.12255859375, 0.12353515625, 0.12353515625, 0.12353515625, 0.12353515625, 0.12353515625, 0.12353515625, 123469824"),
        (4, 3, GBR,
         "273, 280, _, 0.00123596191, 1.2348031e+10, 3.140625, 2.71875, 1.4140625, -17.375, 12352",
         "0.099609375, 0.1201171875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 123207680"),
        (5, 3, "QuantizeBitGroomRoundNumberOfSignificantDigits",
         "273.125, 280.5, _, 0.0012345314, 1.23438367e+10, 3.14160156, 2.71875, 1.4140625, -17.34375, 12344",
         "0.100006103515625, 0.1199951171875, 0.12298583984375, 0.1234130859375, 0.123443603515625, 0.123443603515625, 0.123443603515625, 0.123443603515625, 0.123443603515625, 123469824"),
        (6, 9, "QuantizeHalfShaveNumberOfSignificantDigits",
         "273.25, 280.25, _, 0.00123500824, 1.23396424e+10, 3.14257812, 2.71679688, 1.41503906, -17.359375, 12344",
         "0.10003662109375, 0.12005615234375, 0.12298583984375, 0.12335205078125, 0.12347412109375, 0.12347412109375, 0.12347412109375, 0.12347412109375, 0.12347412109375, 123404288"),
        (8, 9, "QuantizeBitRoundNumberOfSignificantBits",
         "273, 280.5, _, 0.00123405457, 1.2348031e+10, 3.140625, 2.71875, 1.4140625, -17.34375, 12352",
         "0.0999755859375, 0.1199951171875, 0.123046875, 0.1234130859375, 0.1234130859375, 0.1234130859375, 0.1234130859375, 0.1234130859375, 0.1234130859375, 123469824"),
    ];
    let s = Scratch::new();
    for (baa, p, attr, t, d) in cases {
        let dump = ncks(
            &s,
            &["-4", &format!("--baa={baa}"), "--ppc", &format!("T,D={p}")],
        );
        same(
            &dump.var("T").numbers(),
            &nums(t),
            &format!("T, --baa={baa}"),
        );
        same(
            &dump.var("D").numbers(),
            &nums(d),
            &format!("D, --baa={baa}"),
        );
        assert_eq!(int_attr(&dump, "T", attr), Some(p), "--baa={baa}");
        assert_eq!(int_attr(&dump, "D", attr), Some(p), "--baa={baa}");
        // Not named, not quantized, no attribute.
        assert_eq!(dump.var("Z").attr(attr).map(|_| ()), None);
    }
}

#[test]
fn bit_groom_counts_parity_within_records_of_netcdf3_files() {
    // NCO 5.1.4 copies netCDF3 record variables a record at a time: BitGroom shaves the
    // first element of each record; in a netCDF-4 file it alternates over the whole.
    let s = Scratch::new();
    let d3 = ncks(&s, &["--baa=0", "--ppc", "D=2"]);
    let d = d3.var("D").numbers();
    let d4 = ncks(&s, &["-4", "--baa=0", "--ppc", "D=2"]);
    let e = d4.var("D").numbers();
    // Element 5 (0.123456) starts the second record: shaved (smaller) in the netCDF3
    // file, set (larger) as an odd element in the netCDF-4 one.
    assert!(d[5] < 0.123456 && e[5] > 0.123456, "{d:?} {e:?}");
    assert!(d[0] < 0.1 && d[1] > 0.12, "{d:?}");
    assert_eq!(d[..5], e[..5]);
}

#[test]
fn decimal_digits_round_floats_and_integers() {
    let s = Scratch::new();
    let d = ncks(&s, &["--ppc", "T=.1#n,s=.-2#D=.-3"]);
    same(
        &d.var("T").numbers(),
        &nums(
            "273.125, 280.4375, _, 0, 1.23456788e+10, 3.125, 2.6875, 1.4375, -17.375, 12345.6875",
        ),
        "T=.1",
    );
    same(
        &d.var("D").numbers(),
        &nums("0, 0, 0, 0, 0, 0, 0, 0, 0, 123456512"),
        "D=.-3",
    );
    let n = d.var("n").numbers();
    // 2^7 = 128 for two decimal digits.
    assert_eq!(n[..6], nums("12288, -12288, 0, 0, 99968, 0")[..]);
    assert_eq!(n[7..], nums("-2147483648, 0, 0")[..]);
    let sh = d.var("s").numbers();
    assert_eq!(sh[1..], nums("-32768, 1024, -1024, 0")[..]);
    if !is_nco() {
        // 2147483647 and 32767 round up past their types: kept at the largest value
        // (NCO 5.1.4 wraps them to the most negative one).
        assert_eq!(n[6], 2147483647.0);
        assert_eq!(sh[0], 32767.0);
    }
    for (v, p) in [("T", 1), ("n", -2), ("s", -2), ("D", -3)] {
        assert_eq!(int_attr(&d, v, "least_significant_digit"), Some(p), "{v}");
    }
}

#[test]
fn default_leaves_coordinates_bounds_and_integers_alone() {
    let s = Scratch::new();
    let d = ncks(&s, &["--ppc", "default=3"]);
    for v in ["T", "D", "Z"] {
        assert_eq!(int_attr(&d, v, GBR), Some(3), "{v}");
    }
    for v in ["time", "lat", "lat_bnds", "n", "s"] {
        assert!(d.var(v).attr(GBR).is_none(), "{v}");
    }
    same(
        &d.var("lat").numbers(),
        &nums("-45.123455999999997, 45.123455999999997"),
        "lat",
    );
    // Named explicitly, a coordinate is quantized; a later key overrides default.
    let e = ncks(&s, &["--ppc", "default=3#lat=2", "--ppc", "T=5"]);
    assert_eq!(int_attr(&e, "lat", GBR), Some(2));
    assert_eq!(int_attr(&e, "T", GBR), Some(5));
    assert_eq!(int_attr(&e, "D", GBR), Some(3));
}

#[test]
fn zeros_negative_zeros_and_nan_stay_as_they_are() {
    if is_nco() {
        // NCO 5.1.4: Granular BitRound turns NaN into -0, DigitRound -0 into 2^-11,
        // HalfShave 0 into 1.47e-39, BitGroom -0 into a negative subnormal.
        return;
    }
    let s = Scratch::new();
    for baa in ["0", "2", "3", "4", "6", "8"] {
        let out = s.arg("out.nc");
        nco("ncks")
            .args(["-O", "-4", &format!("--baa={baa}"), "--ppc", "Z=4"])
            .arg(qx())
            .arg(&out)
            .succeeds();
        // (The dump parser reads -0 as 0: look at ncdump's text.)
        let text = nco_tests::ncdump(&["-v", "Z"], &out);
        assert!(text.contains(" Z = 0, -0, NaNf, "), "--baa={baa}: {text}");
    }
}

#[test]
fn brute_force_stays_within_half_a_unit_of_the_last_digit() {
    let s = Scratch::new();
    let d = ncks(&s, &["-4", "--baa=7", "--ppc", "T,D=3"]);
    // Floats as NCO 5.1.4 gives them.
    same(
        &d.var("T").numbers(),
        &nums(
            "273, 280.499969, _, 0.0012359618, 1.23144765e+10, 3.14453101, 2.71484375, \
             1.41796863, -17.3125, 12351.999",
        ),
        "T",
    );
    if is_nco() {
        // NCO 5.1.4's doubles stray beyond the bound (0.1 becomes 0.09765625).
        return;
    }
    let original = nums(
        "0.1, 0.12, 0.123, 0.1234, 0.12345, 0.123456, 0.1234567, 0.12345678, 0.123456789, 123456789.0",
    );
    for (x, q) in original.iter().zip(d.var("D").numbers()) {
        let bound = 0.5 * 10f64.powf(x.abs().log10().floor() - 3.0 + 1.0);
        assert!((x - q).abs() < bound, "{x} -> {q} (bound {bound})");
        assert_ne!(*x, q);
    }
}

#[test]
fn too_many_digits_leave_a_variable_unquantized() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let run = nco("ncks")
        .args(["-O", "--ppc", "T=8#D=15"])
        .arg(qx())
        .arg(&out)
        .succeeds();
    if !is_nco() {
        // NCO 5.1.4 prints this on stdout.
        assert!(
            run.stderr
                .contains("NSD) requested = 8 too high for variable T"),
            "{}",
            run.stderr
        );
    }
    let d = Dump::of(&out);
    assert!(d.var("T").attr(GBR).is_none());
    same(
        &d.var("T").numbers()[..2],
        &nums("273.151245, 280.456787"),
        "T",
    );
    assert_eq!(int_attr(&d, "D", GBR), Some(15));
}

#[test]
fn an_existing_attribute_keeps_the_coarser_precision() {
    let s = Scratch::new();
    let (a, b) = (s.arg("a.nc"), s.arg("b.nc"));
    nco("ncks")
        .args(["-O", "--ppc", "T=3"])
        .arg(qx())
        .arg(&a)
        .succeeds();
    nco("ncks")
        .args(["-O", "--ppc", "T=5"])
        .arg(&a)
        .arg(&b)
        .succeeds();
    assert_eq!(int_attr(&Dump::of(&b), "T", GBR), Some(3));
    nco("ncks")
        .args(["-O", "--ppc", "T=2"])
        .arg(&a)
        .arg(&b)
        .succeeds();
    assert_eq!(int_attr(&Dump::of(&b), "T", GBR), Some(2));
}

#[test]
fn every_operator_quantizes_what_it_writes() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let x = qx();
    let x = x.as_str();
    let run = |op: &str, args: &[&str], files: &[&str]| {
        nco(op)
            .args(["-O", "--ppc", "default=3"])
            .args(args)
            .args(files)
            .arg(&out)
            .succeeds();
        Dump::of(&out)
    };
    let gbr_t =
        "273, 280, _, 0.00123596191, 1.2348031e+10, 3.140625, 2.71875, 1.4140625, -17.375, 12352";
    let gbr_d = "0.099609375, 0.1201171875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 123207680";
    // Record means, means over x, sums (NCO 5.1.4's values).
    let d = run("ncra", &[], &[x, x]);
    same(
        &d.var("T").numbers(),
        &nums("138, 142, 1.4140625, -8.671875, 6.17401549e+09"),
        "ncra T",
    );
    same(
        &d.var("D").numbers(),
        &nums("0.111328125, 0.1220703125, 0.123046875, 0.123046875, 61734912"),
        "ncra D",
    );
    assert_eq!(int_attr(&d, "T", GBR), Some(3));
    let d = run("ncwa", &["-a", "x"], &[x]);
    same(
        &d.var("T").numbers(),
        &nums("3.08700774e+09, 2464"),
        "ncwa T",
    );
    same(
        &d.var("D").numbers(),
        &nums("0.1181640625, 24707072"),
        "ncwa D",
    );
    assert_eq!(int_attr(&d, "D", GBR), Some(3));
    let d = run("ncbo", &["--op_typ=add"], &[x, x]);
    same(
        &d.var("T").numbers(),
        &nums(
            "546, 561, _, 0.00247192383, 2.4696062e+10, 6.28125, 5.4375, 2.828125, -34.6875, 24704",
        ),
        "ncbo T",
    );
    if !is_nco() {
        // NCO 5.1.4's ncbo quantizes without recording it.
        assert_eq!(int_attr(&d, "T", GBR), Some(3));
    }
    // Operators that write the values they read.
    for (op, args, files) in [
        ("nces", &[][..], &[x, x][..]),
        ("ncflint", &[][..], &[x, x][..]),
        ("ncpdq", &["-a", "x,time"][..], &[x][..]),
    ] {
        let d = run(op, args, files);
        let mut t = d.var("T").numbers();
        let mut dd = d.var("D").numbers();
        if op == "ncpdq" {
            // Back from (x, time) to (time, x).
            let un = |v: &[f64]| (0..10).map(|i| v[(i % 5) * 2 + i / 5]).collect::<Vec<_>>();
            t = un(&t);
            dd = un(&dd);
        }
        same(&t, &nums(gbr_t), &format!("{op} T"));
        same(&dd, &nums(gbr_d), &format!("{op} D"));
        assert_eq!(int_attr(&d, "D", GBR), Some(3), "{op}");
    }
    let d = run("ncrcat", &[], &[x, x]);
    let want: Vec<f64> = nums(gbr_d).repeat(2);
    same(&d.var("D").numbers(), &want, "ncrcat D");
    let d = run("ncecat", &[], &[x, x]);
    same(&d.var("D").numbers(), &want, "ncecat D");
    assert_eq!(int_attr(&d, "D", GBR), Some(3));
}

#[test]
fn quantized_files_compress_smaller() {
    // A smooth field of 40,000 doubles: quantized to 3 digits and deflated, a fraction
    // of the deflated original.
    let s = Scratch::new();
    let values: Vec<String> = (0..40_000)
        .map(|i| {
            format!(
                "{}",
                280.0 + (f64::from(i) * 0.001).sin() * 10.0 + f64::from(i) * 1e-7
            )
        })
        .collect();
    let cdl = format!(
        "netcdf big {{ dimensions: x = 40000 ; variables: double v(x) ; data: v = {} ; }}",
        values.join(", ")
    );
    let src = crate::common::cdl(&s, "big", &cdl);
    let (plain, quant) = (s.arg("plain.nc"), s.arg("quant.nc"));
    nco("ncks")
        .args(["-O", "-4", "-L", "1"])
        .arg(&src)
        .arg(&plain)
        .succeeds();
    nco("ncks")
        .args(["-O", "-4", "-L", "1", "--ppc", "default=3"])
        .arg(&src)
        .arg(&quant)
        .succeeds();
    let size = |p: &str| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&quant) * 2 < size(&plain),
        "{} vs {}",
        size(&quant),
        size(&plain)
    );
}

#[test]
fn quantization_applies_to_appends_and_group_paths() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-O", "-v", "n"])
        .arg(qx())
        .arg(&out)
        .succeeds();
    nco("ncks")
        .args(["-A", "-v", "T", "--ppc", "T=3"])
        .arg(qx())
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(int_attr(&d, "T", GBR), Some(3));
    assert_eq!(d.var("T").numbers()[0], 273.0);
    // A full path names one variable of a group; a short name every one of that name.
    let g = nco_tests::gx();
    nco("ncks")
        .args(["-O", "--ppc", "/model/diag/tas=2"])
        .arg(&g)
        .arg(&out)
        .succeeds();
    let text = nco_tests::ncdump(&["-h"], &out);
    assert_eq!(text.matches(GBR).count(), 1, "{text}");
    nco("ncks")
        .args(["-O", "--ppc", "tas=2"])
        .arg(&g)
        .arg(&out)
        .succeeds();
    let text = nco_tests::ncdump(&["-h"], &out);
    assert_eq!(text.matches(GBR).count(), 2, "{text}");
}

#[test]
fn bad_quantization_arguments_are_refused_without_output() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    for args in [
        &["--ppc", "nope=3"][..],
        &["--ppc", "T=0"][..],
        &["--ppc", "T=x"][..],
        &["--ppc", "T"][..],
        &["--ppc", "T=3", "--baa=9"][..],
    ] {
        let run = nco("ncks").args(args).arg(qx()).arg(&out).run();
        if is_nco() {
            // NCO 5.1.4 accepts --baa=9 and fails later; the others it refuses too.
            assert_ne!(run.code, Some(0), "{args:?}");
        } else {
            run.code_is(1).stderr_one_line();
        }
        assert!(!std::path::Path::new(&out).exists(), "{args:?}");
    }
    if !is_nco() {
        nco("ncks")
            .args(["--ppc", "nope=3"])
            .arg(qx())
            .arg(&out)
            .run()
            .stderr_contains("nope matches no variable");
    }
}

#[test]
fn algorithms_and_synonyms_in_every_quantizing_operator() {
    if is_nco() {
        // NCO 5.1.4 has --baa in ncks only, and its --qnt abbreviates --qnt_alg.
        return;
    }
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let x = qx();
    nco("ncra")
        .args(["-O", "--baa=shv", "--qnt", "D=3"])
        .args([&x, &x, &out])
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(
        int_attr(&d, "D", "QuantizeBitShaveNumberOfSignificantDigits"),
        Some(3)
    );
    nco("ncwa")
        .args(["-O", "--qnt_alg=bitround", "--quantize", "T=9", "-a", "x"])
        .args([&x, &out])
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(
        int_attr(&d, "T", "QuantizeBitRoundNumberOfSignificantBits"),
        Some(9)
    );
    // ncap2 has no quantization (as NCO's): refused, nothing written.
    std::fs::remove_file(&out).unwrap();
    nco("ncap2")
        .args(["-O", "--ppc", "default=3", "-s", "a=1", &x, &out])
        .run()
        .clean_failure("--ppc");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn record_appends_quantize_the_new_records_only() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-O", "-v", "D"])
        .arg(qx())
        .arg(&out)
        .succeeds();
    nco("ncrcat")
        .args(["--rec_apn", "--ppc", "D=3", "-v", "D"])
        .arg(qx())
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    let mut want = nums(
        "0.1, 0.12, 0.123, 0.1234, 0.12345, 0.123456, 0.1234567, 0.12345678, 0.123456789, 123456789",
    );
    want.extend(nums(
        "0.099609375, 0.1201171875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 0.123046875, 123207680",
    ));
    same(&d.var("D").numbers(), &want, "D after --rec_apn");
    assert_eq!(int_attr(&d, "D", GBR), Some(3));
}

#[test]
fn unpacked_variables_record_their_quantization() {
    // ncpdq -U writes the unpacked values quantized, with the attribute (NCO 5.1.4).
    let s = Scratch::new();
    let src = crate::common::cdl(
        &s,
        "pk",
        "netcdf pk { dimensions: x = 3 ; variables: float p(x) ; p:scale_factor = 0.5f ; \
         data: p = 1.2345, 2.3456, 3.4567 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncpdq")
        .args(["-O", "-U", "--ppc", "p=2"])
        .arg(&src)
        .arg(&out)
        .succeeds();
    let d = Dump::of(&out);
    assert_eq!(int_attr(&d, "p", GBR), Some(2));
    assert!(d.var("p").attr("scale_factor").is_none());
}

#[test]
fn decimal_digits_coarser_than_every_double_give_zeros() {
    if is_nco() {
        // NCO 5.1.4 aborts beyond 16 decimal digits (an assertion).
        return;
    }
    let s = Scratch::new();
    let d = ncks(&s, &["--ppc", "D=.-400"]);
    assert!(d.var("D").numbers().iter().all(|&x| x == 0.0));
    assert_eq!(int_attr(&d, "D", "least_significant_digit"), Some(-400));
    // A precision beyond the 32-bit range is refused.
    let out = s.arg("o2.nc");
    nco("ncks")
        .args(["--ppc", "D=99999999999"])
        .arg(qx())
        .arg(&out)
        .run()
        .clean_failure("--ppc");
}

#[test]
fn seven_digits_keep_exact_powers_of_two() {
    if is_nco() {
        // NCO 5.1.4: 1 becomes 2, 0.5 becomes 0, 64 becomes -0, -64 becomes 0.
        return;
    }
    let s = Scratch::new();
    let src = crate::common::cdl(
        &s,
        "p2",
        "netcdf p2 { dimensions: x = 5 ; variables: float f(x) ; \
         data: f = 1, 0.5, 64, -64, 65536 ; }",
    );
    let out = s.arg("out.nc");
    nco("ncks")
        .args(["-O", "--ppc", "f=7"])
        .arg(&src)
        .arg(&out)
        .succeeds();
    same(
        &Dump::of(&out).var("f").numbers(),
        &nums("1, 0.5, 64, -64, 65536"),
        "f=7",
    );
}
