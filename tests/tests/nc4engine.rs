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
const STORAGE_VARS: [&str; 19] = [
    "t",
    "deflate",
    "fletcher_be",
    "checked",
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

// ------------------------------------------------------------------ bad input

/// A copy of the storage fixture in `s`, damaged by `damage` (given the file's bytes and
/// the engine's view of the intact file, to find chunks by).
fn damaged(s: &Scratch, name: &str, damage: impl FnOnce(&mut Vec<u8>, &nco_h5::File)) -> String {
    let intact = nco_h5::File::open(&storage()).expect("open the storage fixture");
    let mut bytes = std::fs::read(storage()).expect("read the storage fixture");
    damage(&mut bytes, &intact);
    let out = s.arg(name);
    std::fs::write(&out, &bytes).expect("write the damaged copy");
    out
}

/// The first chunk of variable `var` of the intact fixture.
fn first_chunk(f: &nco_h5::File, var: &str) -> nco_h5::Loc {
    let v = f.var(&format!("/{var}")).expect("variable of the fixture");
    v.locs[0]
}

/// `ncks -H -v VAR FILE` and `ncwa -t 2 FILE OUT` (every variable read on two threads)
/// fail cleanly with the engine and through libnetcdf: exit 1, one line naming the
/// variable (with the engine, also `what` went wrong), no output left.
#[track_caller]
fn fails_cleanly(file: &str, var: &str, what: &str) {
    if !is_nco() {
        engine("ncks")
            .args(["-H", "-v", var, file])
            .run()
            .clean_failure(&format!("variable {var}: corrupt data: "))
            .stderr_contains(what);
        libnetcdf("ncks")
            .args(["-H", "-v", var, file])
            .run()
            .clean_failure(&format!("variable {var}"));
        for mode in ["0", "1"] {
            let s = Scratch::new();
            let out = s.arg("out.nc");
            nco("ncwa")
                .env("NCO_RS_NO_MMAP", mode)
                .args(["-O", "-t", "2", file, &out])
                .run()
                .clean_failure(&format!("variable {var}"));
            assert!(!std::path::Path::new(&out).exists(), "ncwa left {out}");
        }
    }
    // NCO fails too, naming the variable.
    reference("ncks")
        .args(["-H", "-v", var, file])
        .run()
        .code_is(1);
}

#[test]
fn a_bad_deflate_stream_is_a_one_line_error() {
    let s = Scratch::new();
    let f = damaged(&s, "bad_deflate.nc", |b, h5| {
        let l = first_chunk(h5, "deflate");
        // Past the zlib header: the stream itself.
        for x in &mut b[(l.addr + 2) as usize..(l.addr + l.size) as usize] {
            *x ^= 0x5a;
        }
    });
    fails_cleanly(&f, "deflate", "bad deflate stream");
}

#[test]
fn a_fletcher32_mismatch_is_a_one_line_error() {
    let s = Scratch::new();
    let f = damaged(&s, "bad_sum.nc", |b, h5| {
        let l = first_chunk(h5, "checked");
        b[(l.addr + 5) as usize] ^= 1;
    });
    fails_cleanly(&f, "checked", "Fletcher-32 checksum mismatch");
}

#[test]
fn a_chunk_past_the_end_of_the_file_is_a_one_line_error() {
    let s = Scratch::new();
    let f = damaged(&s, "past_eof.nc", |b, h5| {
        // The chunk's address in its B-tree node (version 1 nodes carry no checksum).
        let l = first_chunk(h5, "plain_be");
        let at = l.addr.to_le_bytes();
        let hits: Vec<usize> = (0..b.len() - 8).filter(|&i| b[i..i + 8] == at).collect();
        assert_eq!(hits.len(), 1, "the chunk address appears once");
        let far = (b.len() as u64 + (1 << 20)).to_le_bytes();
        b[hits[0]..hits[0] + 8].copy_from_slice(&far);
    });
    fails_cleanly(&f, "plain_be", "past the end of the file");
}

#[test]
fn a_filter_nobody_decodes_is_named() {
    // deflate's pipeline (version 2: shuffle of 4-byte elements, then deflate level 1)
    // with the deflate replaced by HDF5 filter 9, which no library registers; the
    // object header's checksum is recomputed so the header itself stays valid.
    let s = Scratch::new();
    let f = damaged(&s, "filter9.nc", |b, _| {
        let pipeline = [2u8, 2, 2, 0, 1, 0, 1, 0, 4, 0, 0, 0, 1, 0];
        let hits: Vec<usize> = (0..b.len() - pipeline.len())
            .filter(|&i| b[i..i + pipeline.len()] == pipeline)
            .collect();
        assert_eq!(hits.len(), 1, "deflate's filter pipeline appears once");
        let at = hits[0] + 12;
        b[at] = 9;
        // The enclosing object header chunk: "OHDR", version, flags, optional times
        // and attribute phase change values, the chunk size, the messages, then the
        // Jenkins lookup3 checksum of everything before it.
        let start = (0..at)
            .rev()
            .find(|&i| &b[i..i + 4] == b"OHDR")
            .expect("object header");
        let flags = b[start + 5];
        let mut p = start + 6;
        if flags & 0x20 != 0 {
            p += 16;
        }
        if flags & 0x10 != 0 {
            p += 4;
        }
        let width = 1usize << (flags & 3);
        let mut size = [0u8; 8];
        size[..width].copy_from_slice(&b[p..p + width]);
        let end = p + width + u64::from_le_bytes(size) as usize;
        assert!(end > at, "the pipeline is in the first header chunk");
        let sum = hdf5_reader::checksum::jenkins_lookup3(&b[start..end]);
        b[end..end + 4].copy_from_slice(&sum.to_le_bytes());
    });
    if !is_nco() {
        for mode in ["0", "1"] {
            nco("ncks")
                .env("NCO_RS_NO_MMAP", mode)
                .args(["-H", "-v", "deflate", &f])
                .run()
                .clean_failure("deflate");
        }
        engine("ncks")
            .args(["-H", "-v", "deflate", &f])
            .run()
            .clean_failure("unsupported HDF5 filter 9");
        // The other variables read as before.
        let ok = engine("ncks")
            .args(["--trd", "-H", "-C", "-v", "fletcher_be", &f])
            .succeeds()
            .stdout;
        let want = engine("ncks")
            .args(["--trd", "-H", "-C", "-v", "fletcher_be", &storage()])
            .succeeds()
            .stdout;
        assert_eq!(ok, want);
    }
    reference("ncks")
        .args(["-H", "-v", "deflate", &f])
        .run()
        .code_is(1);
}

#[test]
fn a_truncated_netcdf4_file_is_a_one_line_error() {
    let s = Scratch::new();
    let f = damaged(&s, "cut.nc", |b, _| {
        let keep = b.len() * 3 / 5;
        b.truncate(keep);
    });
    for mode in ["0", "1"] {
        if is_nco() {
            break;
        }
        nco("ncks")
            .env("NCO_RS_NO_MMAP", mode)
            .args(["-H", &f])
            .run()
            .clean_failure("cut.nc: truncated HDF5 file");
    }
    crate::common::bad_input("ncwa", &[&f], "cut.nc", "cut.nc");
}

// ------------------------------------------------------------------ writes

/// Every variable's values as netCDF4-python reads them (Debian's python3-netcdf4,
/// which `.ci/run` installs), one line each.
fn python_values(file: &str) -> String {
    let py = if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let script = "import sys, netCDF4\n\
        d = netCDF4.Dataset(sys.argv[1])\n\
        d.set_auto_mask(False)\n\
        for n, v in sorted(d.variables.items()):\n\
        \x20   print(n, v.dtype, v.shape, v[...].tolist())\n";
    nco_tests::tool(py)
        .args(["-c", script, file])
        .succeeds()
        .stdout
}

/// `ncdump` of `file` without its first line (the file name) and its history.
fn dump_text(file: &str) -> String {
    nco_tests::ncdump(&[], file)
        .lines()
        .skip(1)
        .filter(|l| !l.contains(":history") && !l.contains(":NCO"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn engine_outputs_read_identically_in_ncdump_nco_and_netcdf4_python() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let copies = nc4_copies(&s);
    let classic = fx();
    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        ("ncks", vec!["-O", "-4", "-L", "1"], vec![&classic]),
        (
            "ncks",
            vec!["-O", "-7", "-L", "5", "--cnk_dmn", "time,3"],
            vec![&classic],
        ),
        ("ncks", vec!["-O"], vec![&copies[1]]),
        (
            "ncks",
            vec!["-O", "-d", "time,1,8,3", "-d", "lon,1,2"],
            vec![&copies[0]],
        ),
        (
            "ncra",
            vec!["-O", "--mro", "-d", "time,,,2,2"],
            vec![&copies[1]],
        ),
        ("ncrcat", vec!["-O"], vec![&copies[0], &copies[1]]),
        ("ncwa", vec!["-O", "-a", "lat"], vec![&copies[1]]),
        ("ncpdq", vec!["-O", "-a", "lon,lat"], vec![&copies[0]]),
        (
            "ncbo",
            vec!["-O", "--op_typ=add"],
            vec![&copies[0], &copies[1]],
        ),
        (
            "ncap2",
            vec!["-O", "-4", "-L", "1", "-s", "z=fld3*2"],
            vec![&classic],
        ),
    ];
    for (i, (op, args, inputs)) in cases.iter().enumerate() {
        let (a, b) = (
            s.arg(&format!("w{i}_engine.nc")),
            s.arg(&format!("w{i}_lib.nc")),
        );
        engine(op).args(args).args(inputs).arg(&a).succeeds();
        libnetcdf(op).args(args).args(inputs).arg(&b).succeeds();
        let what = format!("{op} {args:?}");
        assert_eq!(dump_text(&a), dump_text(&b), "{what}: ncdump differs");
        let nco_print = |f: &str| {
            reference("ncks")
                .args(["--trd", "-H", "-C", f])
                .succeeds()
                .stdout
        };
        assert_eq!(
            nco_print(&a),
            nco_print(&b),
            "{what}: NCO reads them differently"
        );
        assert_eq!(
            python_values(&a),
            python_values(&b),
            "{what}: netCDF4-python differs"
        );
        // The storage is what libnetcdf would have written.
        let storage = |f: &str| {
            nco_tests::ncdump(&["-hs"], f)
                .lines()
                .filter(|l| {
                    ["_ChunkSizes", "_DeflateLevel", "_Shuffle"]
                        .iter()
                        .any(|k| l.contains(k))
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(storage(&a), storage(&b), "{what}: storage differs");
    }
}

#[test]
fn deflated_outputs_are_shuffled_as_nco_writes_them() {
    // NCO 5.1.4 turns the shuffle filter on with -L; the file sizes then agree within a
    // few percent (libdeflate's streams are about 1% larger than zlib's).
    let s = Scratch::new();
    let (ours, theirs) = (s.arg("ours.nc"), s.arg("nco.nc"));
    nco("ncks")
        .args(["-O", "-4", "-L", "1", &fx(), &ours])
        .succeeds();
    reference("ncks")
        .args(["-O", "-4", "-L", "1", &fx(), &theirs])
        .succeeds();
    let shuffled = |f: &str| {
        nco_tests::ncdump(&["-hs"], f)
            .lines()
            .filter(|l| l.contains("fld3:_Shuffle = \"true\""))
            .count()
    };
    assert_eq!(shuffled(&ours), 1);
    assert_eq!(shuffled(&theirs), 1);
    compare(&ours, &theirs).without_attributes().equal();
}
