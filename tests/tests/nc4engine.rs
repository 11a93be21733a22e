//! netCDF-4 inputs read by our chunk engine (nco-h5, behind nco-io's dataset
//! interface) against the same inputs read through libnetcdf (`NCO_RS_NO_MMAP=1`) and
//! by NCO: `tests/data/storage.cdl` (every way of storing netCDF-4 data) and NCO's
//! netCDF-4 copies of the fixture, deflated, with its default chunks and with small
//! ones. Every comparison is exact: reading does no arithmetic, and the operators do
//! the same arithmetic on the same values whichever reader gave them.

use nco_tests::{compare, fx, is_nco, nco, reference, storage_nc4, Cmd, Scratch};

/// Our operator with the chunk engine on (whatever the environment says).
fn engine(op: &str) -> Cmd {
    nco(op).env("NCO_RS_NO_MMAP", "0")
}

/// Our operator with every read through libnetcdf.
fn libnetcdf(op: &str) -> Cmd {
    nco(op).env("NCO_RS_NO_MMAP", "1")
}

fn storage() -> String {
    storage_nc4().to_string_lossy().into_owned()
}

/// Every variable of the storage fixture.
const STORAGE_VARS: [&str; 18] = [
    "t",
    "deflate",
    "fletcher_be",
    "plain_be",
    "i8",
    "u8",
    "u16",
    "u32",
    "i64",
    "u64",
    "compact",
    "scalar",
    "chars",
    "short_rec",
    "never",
    "never_nofill",
    "names",
    "n",
];

/// `ncks ARGS FILE` printed by the engine and through libnetcdf: equal.
#[track_caller]
fn same_as_libnetcdf(file: &str, args: &[&str]) -> String {
    let ours = engine("ncks").args(args).arg(file).succeeds().stdout;
    let lib = libnetcdf("ncks").args(args).arg(file).succeeds().stdout;
    assert_eq!(
        ours, lib,
        "ncks {args:?} {file}: engine and libnetcdf differ"
    );
    ours
}

/// `ncks ARGS FILE` printed by the engine, through libnetcdf and by NCO: all equal.
#[track_caller]
fn same_print(file: &str, args: &[&str]) {
    let ours = same_as_libnetcdf(file, args);
    let theirs = reference("ncks").args(args).arg(file).succeeds().stdout;
    assert_eq!(ours, theirs, "ncks {args:?} {file}: differs from NCO");
}

#[test]
fn every_storage_reads_as_through_libnetcdf_and_nco() {
    for v in STORAGE_VARS {
        let args = ["--trd", "-H", "-C", "-v", v];
        if v == "names" {
            // NCO prints NC_STRING values unquoted in this form, we quote them (a
            // printing difference, not a reading one: libnetcdf reads strings).
            same_as_libnetcdf(&storage(), &args);
        } else if v == "n" {
            // NCO prints a variable named like a dimension without the indices of its
            // own dimension: compare the values alone.
            same_print(&storage(), &["--trd", "-H", "-C", "-s", "%d,", "-v", v]);
        } else {
            same_print(&storage(), &args);
        }
    }
}

#[test]
fn hyperslabs_of_chunked_storage() {
    let f = storage();
    for v in [
        "deflate",
        "fletcher_be",
        "plain_be",
        "u64",
        "i64",
        "short_rec",
        "never",
    ] {
        for d in [
            &["-d", "t,1,4,2"][..],
            &["-d", "x,1,5,3", "-d", "y,2"],
            &["-d", "t,3,", "-d", "x,6"],
            &["-d", "x,0,1", "-d", "x,5,6", "-d", "t,0,4,4"],
        ] {
            // (A -d on a dimension the variable lacks is ignored.)
            let mut args = vec!["--trd", "-H", "-C", "-v", v];
            args.extend_from_slice(d);
            same_print(&f, &args);
        }
    }
    same_print(
        &f,
        &[
            "--trd", "-H", "-C", "-v", "chars", "-d", "y,1,2", "-d", "c,1,3",
        ],
    );
}

/// NCO's netCDF-4 copies of the fixture: deflated with its default chunks, and with
/// one-element chunks along lat and lon (many small chunks, partial reads).
fn nc4_copies(s: &Scratch) -> Vec<String> {
    let a = s.arg("deflated.nc");
    reference("ncks")
        .args(["-O", "-4", "-L", "1", &fx(), &a])
        .succeeds();
    let b = s.arg("small_chunks.nc");
    reference("ncks")
        .args([
            "-O",
            "-4",
            "-L",
            "1",
            "--cnk_plc=all",
            "--cnk_dmn",
            "lat,1",
            "--cnk_dmn",
            "lon,3",
            "--cnk_dmn",
            "time,4",
            &fx(),
            &b,
        ])
        .succeeds();
    vec![a, b]
}

/// `op ARGS INPUTS... OUT` with the engine and through libnetcdf: equal outputs.
#[track_caller]
fn same_output(op: &str, args: &[&str], inputs: &[&str], s: &Scratch, tag: &str) {
    let (a, b) = (
        s.arg(&format!("{tag}_engine.nc")),
        s.arg(&format!("{tag}_lib.nc")),
    );
    engine(op).args(args).args(inputs).arg(&a).succeeds();
    libnetcdf(op).args(args).args(inputs).arg(&b).succeeds();
    compare(&a, &b).equal();
}

#[test]
fn operators_on_netcdf4_inputs_match_libnetcdf_reads() {
    if is_nco() {
        // Both runs would be NCO's.
        return;
    }
    let s = Scratch::new();
    for (k, f) in nc4_copies(&s).iter().enumerate() {
        let f = f.as_str();
        let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
            ("ncks", vec!["-O"], vec![f]),
            (
                "ncks",
                vec!["-O", "-d", "time,1,8,3", "-d", "lon,1,2"],
                vec![f],
            ),
            ("ncks", vec!["-O", "-3"], vec![f]),
            ("ncwa", vec!["-O"], vec![f]),
            ("ncwa", vec!["-O", "-a", "lat,lon", "-w", "gw"], vec![f]),
            ("ncra", vec!["-O"], vec![f]),
            ("ncra", vec!["-O", "-d", "time,2,,2"], vec![f, f]),
            ("ncrcat", vec!["-O", "-d", "time,3,12"], vec![f, f]),
            ("nces", vec!["-O"], vec![f, f]),
            ("ncbo", vec!["-O", "--op_typ=sub"], vec![f, f]),
            ("ncpdq", vec!["-O", "-a", "lon,lat"], vec![f]),
            ("ncpdq", vec!["-O", "-a", "-lat"], vec![f]),
            ("ncpdq", vec!["-O", "-P", "all_new"], vec![f]),
            ("ncap2", vec!["-O", "-s", "z=fld3*2+orog"], vec![f]),
        ];
        for (i, (op, args, inputs)) in cases.iter().enumerate() {
            same_output(op, args, inputs, &s, &format!("{k}_{i}_{op}"));
        }
    }
}

#[test]
fn netcdf4_inputs_give_the_classic_inputs_results() {
    // The same operators on the classic fixture and on its netCDF-4 copies: the values
    // agree (formats differ, so only the data and attributes are compared).
    let s = Scratch::new();
    let classic = fx();
    for (k, f) in nc4_copies(&s).iter().enumerate() {
        for (i, (op, args)) in [
            ("ncwa", &["-O", "-a", "time"][..]),
            ("ncra", &["-O", "-d", "time,1,,3"]),
            ("ncpdq", &["-O", "-a", "lon,lat"]),
        ]
        .iter()
        .enumerate()
        {
            let (a, b) = (
                s.arg(&format!("c{k}{i}_3.nc")),
                s.arg(&format!("c{k}{i}_4.nc")),
            );
            engine(op)
                .args(*args)
                .args(["-3"])
                .arg(&classic)
                .arg(&a)
                .succeeds();
            engine(op)
                .args(*args)
                .args(["-3"])
                .arg(f)
                .arg(&b)
                .succeeds();
            compare(&a, &b).equal();
        }
    }
}
