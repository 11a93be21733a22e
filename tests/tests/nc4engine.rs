//! netCDF-4 inputs read by our chunk engine (nco-h5, behind nco-io's dataset
//! interface) against the same inputs read through libnetcdf (`NCO_RS_NO_MMAP=1`) and
//! by NCO: `tests/data/storage.cdl` (every way of storing netCDF-4 data) and NCO's
//! netCDF-4 copies of the fixture, deflated, with its default chunks and with small
//! ones. Every comparison is exact: reading does no arithmetic, and the operators do
//! the same arithmetic on the same values whichever reader gave them.
//!
//! Also: damaged files (one-line errors); outputs written by the engine against the
//! same outputs written by libnetcdf alone, read back by ncdump, NCO and
//! netCDF4-python, and against NCO's own outputs; and files other programs wrote (NCO
//! `-4`/`-7`, ncgen `-k nc4`/`-k nc7`, netCDF4-python through `tests/data/nc4python.py`)
//! read by the engine as through libnetcdf and by NCO.

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
    let intact = nco_h5::File::open(storage()).expect("open the storage fixture");
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

/// The storage attributes `ncdump -hs` shows for `file`, one line each.
fn storage_lines(file: &str) -> String {
    nco_tests::ncdump(&["-hs"], file)
        .lines()
        .filter(|l| {
            [
                "_ChunkSizes",
                "_DeflateLevel",
                "_Shuffle",
                "_Fletcher32",
                "_Endianness",
                "_Storage",
            ]
            .iter()
            .any(|k| l.contains(k))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `op ARGS INPUTS... OUT` written with the engine and by libnetcdf alone
/// (`NCO_RS_NO_MMAP=1`): ncdump, NCO's ncks and netCDF4-python read both files alike,
/// and their storage (chunks, filters) is the same. With `nco_values`, the engine's
/// output also holds the values NCO's own operator writes (`rtol`: 0 for copies, a
/// float's last bits for arithmetic, whose order of summation differs from NCO's).
/// With `deflated_var`, that deflated variable's stored chunks are the engine's.
#[track_caller]
fn written_alike(
    s: &Scratch,
    tag: &str,
    (op, args, inputs): (&str, &[&str], &[&str]),
    nco_values: Option<f64>,
    deflated_var: Option<&str>,
) {
    let (a, b) = (
        s.arg(&format!("{tag}_engine.nc")),
        s.arg(&format!("{tag}_lib.nc")),
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
    assert_eq!(
        storage_lines(&a),
        storage_lines(&b),
        "{what}: storage differs"
    );
    if let Some(var) = deflated_var {
        // The engine, not libnetcdf, wrote the chunks: its deflate streams are
        // libdeflate's, not zlib's, so the stored bytes differ where the values agree.
        let (ca, cb) = (stored_chunks(&a, var), stored_chunks(&b, var));
        assert!(!ca.is_empty(), "{what}: {var} has no chunk");
        assert_ne!(ca, cb, "{what}: {var}'s chunks are libnetcdf's");
    }
    if let Some(rtol) = nco_values {
        let c = s.arg(&format!("{tag}_nco.nc"));
        reference(op).args(args).args(inputs).arg(&c).succeeds();
        compare(&a, &c).without_attributes().rtol(rtol).equal();
    }
}

#[test]
fn engine_outputs_read_identically_in_ncdump_nco_and_netcdf4_python() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let copies = nc4_copies(&s);
    let classic = fx();
    // (float averages: NCO sums in another order)
    let mean = Some(1e-6);
    let cases: Vec<(&str, Vec<&str>, Vec<&str>, Option<f64>)> = vec![
        (
            "ncks",
            vec!["-O", "-4", "-L", "1"],
            vec![&classic],
            Some(0.0),
        ),
        (
            "ncks",
            vec!["-O", "-7", "-L", "5", "--cnk_dmn", "time,3"],
            vec![&classic],
            Some(0.0),
        ),
        ("ncks", vec!["-O"], vec![&copies[1]], Some(0.0)),
        (
            "ncks",
            vec!["-O", "-d", "time,1,8,3", "-d", "lon,1,2"],
            vec![&copies[0]],
            Some(0.0),
        ),
        (
            "ncra",
            vec!["-O", "--mro", "-d", "time,,,2,2"],
            vec![&copies[1]],
            mean,
        ),
        (
            "ncrcat",
            vec!["-O"],
            vec![&copies[0], &copies[1]],
            Some(0.0),
        ),
        ("ncwa", vec!["-O", "-a", "lat"], vec![&copies[1]], mean),
        (
            "ncpdq",
            vec!["-O", "-a", "lon,lat"],
            vec![&copies[0]],
            Some(0.0),
        ),
        // Record dimension reversed, one record per chunk: written backwards.
        (
            "ncpdq",
            vec!["-O", "-a", "-time", "--cnk_dmn", "time,1"],
            vec![&copies[1]],
            Some(0.0),
        ),
        (
            "ncbo",
            vec!["-O", "--op_typ=add"],
            vec![&copies[0], &copies[1]],
            Some(0.0),
        ),
        (
            "ncap2",
            vec!["-O", "-4", "-L", "1", "-s", "z=fld3*2"],
            vec![&classic],
            Some(0.0),
        ),
    ];
    for (i, (op, args, inputs, nco_values)) in cases.iter().enumerate() {
        let deflated = args.contains(&"-L").then_some("fld3");
        written_alike(
            &s,
            &format!("w{i}"),
            (op, args, inputs),
            *nco_values,
            deflated,
        );
    }
}

/// The stored bytes of every written chunk of variable `var` of `f`, in grid order.
fn stored_chunks(f: &str, var: &str) -> Vec<Vec<u8>> {
    let h5 = nco_h5::File::open(f).expect("open the file");
    let bytes = std::fs::read(f).expect("read the file");
    let v = h5.var(&format!("/{var}")).expect("the variable");
    v.locs
        .iter()
        .filter(|l| l.addr != u64::MAX)
        .map(|l| bytes[l.addr as usize..(l.addr + l.size) as usize].to_vec())
        .collect()
}

#[test]
fn chunks_of_an_unchanged_copy_are_copied_as_stored() {
    // netCDF-4 to netCDF-4 with the input's chunks and filters (a copy, an -L equal
    // to the input's): the stored chunks go across as they are, not inflated and
    // deflated again (a record variable whose records fill its last chunk row, and a
    // fixed one with partial edge chunks); the values are NCO's copy's.
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let cdl = "netcdf raw {\ndimensions:\n time = UNLIMITED ;\n y = 3 ;\n x = 5 ;\n\
        variables:\n double time(time) ;\n float a(time, y, x) ;\n\
        a:_ChunkSizes = 2, 3, 5 ;\n  a:_DeflateLevel = 1 ;\n  a:_Shuffle = \"true\" ;\n\
        short b(y, x) ;\n  b:_ChunkSizes = 2, 2 ;\n  b:_DeflateLevel = 1 ;\n\
        data:\n time = 0, 1, 2, 3 ;\n a = 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5,\n\
        10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5,\n\
        23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5, 32.5, 33.5, 34.5, 35.5,\n\
        36.5, 37.5, 38.5, 39.5, 40.5, 41.5, 42.5, 43.5, 44.5, 45.5, 46.5, 47.5, 48.5,\n\
        49.5, 50.5, 51.5, 52.5, 53.5, 54.5, 55.5, 56.5, 57.5, 58.5, 59.5 ;\n\
        b = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 ;\n}\n";
    let f = crate::common::cdl_nc4(&s, "raw", cdl);
    for (i, extra) in [&[][..], &["-L", "1"][..]].iter().enumerate() {
        let out = s.arg(&format!("raw{i}.nc"));
        let theirs = s.arg(&format!("raw{i}_nco.nc"));
        let mut args = vec!["-O"];
        args.extend_from_slice(extra);
        nco("ncks").args(&args).arg(&f).arg(&out).succeeds();
        reference("ncks")
            .args(&args)
            .arg(&f)
            .arg(&theirs)
            .succeeds();
        compare(&out, &theirs).without_attributes().equal();
        // (-L adds shuffle to b, as NCO does: b is encoded again then.)
        let vars: &[&str] = if extra.is_empty() {
            &["a", "b"]
        } else {
            &["a"]
        };
        for var in vars {
            let (x, y) = (stored_chunks(&f, var), stored_chunks(&out, var));
            assert!(!x.is_empty(), "{var} has no chunk");
            assert_eq!(x, y, "{extra:?}: {var}'s chunks are not the input's");
        }
    }
}

#[test]
fn a_partial_last_record_chunk_is_not_copied_as_stored() {
    // A file written without fill (netCDF4-python's set_fill_off) leaves stored bytes
    // (zeros) in the rows of its last record chunk past the records. Copied as stored,
    // they became values once another program added records; NCO, and ours now, write
    // fill values there (found by a break test).
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let input = s.arg("nofill.nc");
    let py = |script: &str, file: &str| {
        nco_tests::tool("/usr/bin/python3")
            .args(["-c", script, file])
            .succeeds()
            .stdout
    };
    py(
        "import sys, netCDF4 as nc, numpy as np\n\
         d = nc.Dataset(sys.argv[1], 'w'); d.set_fill_off()\n\
         d.createDimension('time', None); d.createDimension('x', 40)\n\
         d.createVariable('time', 'f8', ('time',))[:] = np.arange(5.)\n\
         v = d.createVariable('v', 'f4', ('time', 'x'), chunksizes=(8, 4))\n\
         v[:] = np.arange(200, dtype='f4').reshape(5, 40) + 1000\n\
         d.close()\n",
        &input,
    );
    let grow_and_read = "import sys, netCDF4 as nc\n\
        d = nc.Dataset(sys.argv[1], 'a'); d['time'][7] = 7; d['v'][7, :] = 1; d.close()\n\
        d = nc.Dataset(sys.argv[1]); d.set_auto_mask(False)\n\
        print(d['v'][5:7, :4].ravel().tolist())\n";
    let (a, b) = (s.arg("nofill_ours.nc"), s.arg("nofill_nco.nc"));
    nco("ncks").args(["-O"]).arg(&input).arg(&a).succeeds();
    reference("ncks")
        .args(["-O"])
        .arg(&input)
        .arg(&b)
        .succeeds();
    let (ours_rows, nco_rows) = (py(grow_and_read, &a), py(grow_and_read, &b));
    assert!(nco_rows.contains("9.969"), "{nco_rows}");
    assert_eq!(ours_rows, nco_rows);
}

#[test]
fn variables_with_a_later_unlimited_dimension_are_written_as_nco() {
    // An unlimited dimension that is not a variable's first (x, time), and two
    // unlimited dimensions: the engine writes by rows of the first dimension, so these
    // go through libnetcdf (the engine refused them: "direct chunk writes of scalars").
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let cdl = "netcdf later {\ndimensions:\n time = UNLIMITED ;\n t2 = UNLIMITED ;\n x = 4 ;\n\
        variables:\n double time(time) ;\n float xt(x, time) ;\n  xt:_ChunkSizes = 2, 2 ;\n\
        int tt(time, t2) ;\n  tt:_ChunkSizes = 3, 4 ;\ndata:\n time = 0, 1, 2 ;\n\
        xt = {0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11} ;\n\
        tt = {0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 13, 14} ;\n}\n";
    let input = crate::common::cdl_nc4(&s, "later", cdl);
    for (i, args) in [&["-O"][..], &["-O", "-d", "time,0,1"][..]]
        .iter()
        .enumerate()
    {
        let (a, b) = (s.arg(&format!("l{i}.nc")), s.arg(&format!("l{i}_nco.nc")));
        nco("ncks").args(*args).arg(&input).arg(&a).succeeds();
        reference("ncks").args(*args).arg(&input).arg(&b).succeeds();
        // (The harness's dump does not parse the braces ncdump prints for these:
        // compared as NCO prints them, values and shapes.)
        let print = |f: &str| {
            reference("ncks")
                .args(["--trd", "-H", "-C", f])
                .succeeds()
                .stdout
        };
        assert!(print(&a).contains("tt[9]=9"), "{}", print(&a));
        assert_eq!(print(&a), print(&b), "{args:?}");
    }
}

#[test]
fn every_storage_is_written_by_the_engine_as_by_libnetcdf_and_nco() {
    // The storage fixture (every type, partial edge chunks, a variable shorter than its
    // unlimited dimension, unwritten chunks) through the engine's writer. NC_STRING
    // variables are left out: nco-rs does not write them yet (issue 17).
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let f = storage();
    let x = ["-x", "-v", "names"];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        let mut v = vec!["-O"];
        v.extend_from_slice(&x);
        v.extend_from_slice(extra);
        v
    };
    let cases: Vec<(&str, Vec<&str>, Vec<&str>, Option<f64>)> = vec![
        ("ncks", with(&[]), vec![&f], Some(0.0)),
        // (Level 2: the input's chunks and filters with -L 1 would be copied as
        // stored, see chunks_of_an_unchanged_copy_are_copied_as_stored.)
        (
            "ncks",
            with(&["-4", "-L", "2", "--cnk_dmn", "t,2"]),
            vec![&f],
            Some(0.0),
        ),
        (
            "ncks",
            with(&["--cnk_plc=all", "--cnk_dmn", "x,2", "--cnk_dmn", "y,1"]),
            vec![&f],
            Some(0.0),
        ),
        (
            "ncks",
            with(&["-d", "t,1,3", "-d", "x,2,"]),
            vec![&f],
            Some(0.0),
        ),
        ("ncrcat", with(&[]), vec![&f, &f, &f], Some(0.0)),
        // (n left out: NCO takes a variable named like a dimension for its coordinate
        // and does not stack it, whatever its dimensions; nco-rs stacks it.)
        (
            "ncecat",
            vec!["-O", "-x", "-v", "names,n"],
            vec![&f, &f],
            Some(0.0),
        ),
        ("ncra", with(&[]), vec![&f, &f], Some(1e-6)),
        ("ncpdq", with(&["-a", "x,y"]), vec![&f], Some(0.0)),
    ];
    for (i, (op, args, inputs, nco_values)) in cases.iter().enumerate() {
        let deflated = args.contains(&"-L").then_some("deflate");
        written_alike(
            &s,
            &format!("s{i}"),
            (op, args, inputs),
            *nco_values,
            deflated,
        );
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

// ------------------------------------------------------------------ files others wrote

/// Python with netCDF4-python (Debian's python3-netcdf4, which `.ci/run` installs).
fn python() -> &'static str {
    if std::path::Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// netCDF-4 files written by other programs than ours: NCO's `-4 -L 1` and `-7 -L 1`
/// copies of the fixture, ncgen's `-k nc4` and `-k nc7` builds of it, and
/// `tests/data/nc4python.py`'s file written by netCDF4-python.
fn foreign_files(s: &Scratch) -> Vec<String> {
    let mut files = vec![nc4_copies(s).swap_remove(0)];
    let classic7 = s.arg("nco_7.nc");
    reference("ncks")
        .args(["-O", "-7", "-L", "1", &fx(), &classic7])
        .succeeds();
    files.push(classic7);
    files.push(nco_tests::fixture_nc4().to_string_lossy().into_owned());
    let ncgen7 = s.arg("ncgen_7.nc");
    let cdl = nco_tests::data_dir().join("fixture.cdl");
    nco_tests::tool("ncgen")
        .args(["-k", "nc7", "-o", &ncgen7])
        .arg(&cdl)
        .succeeds();
    files.push(ncgen7);
    let py = s.arg("python.nc");
    nco_tests::tool(python())
        .arg(nco_tests::data_dir().join("nc4python.py"))
        .arg(&py)
        .succeeds();
    files.push(py);
    files
}

#[test]
fn files_other_programs_wrote_read_as_through_libnetcdf_and_nco() {
    let s = Scratch::new();
    for f in foreign_files(&s) {
        let dump = nco_tests::Dump::of(&f);
        for v in &dump.root().vars {
            same_print(&f, &["--trd", "-H", "-C", "-v", &v.name]);
        }
        if f.ends_with("python.nc") {
            // Hyperslabs across the chunks: partial chunks, strides, the B-tree of
            // one-element chunks, records from each appended piece.
            for d in [
                &["-d", "time,2,9,3", "-d", "lat,3,30,4", "-d", "lon,10,45,3"][..],
                &["-d", "lat,36", "-d", "lon,49"],
                &["-d", "lat,4,6", "-d", "lon,6,8", "-d", "time,7,8"],
            ] {
                let mut args = vec!["--trd", "-H", "-C", "-v", "v,w,f"];
                args.extend_from_slice(d);
                same_print(&f, &args);
            }
        }
    }
}

#[test]
fn strided_reads_past_a_short_variable_keep_its_values() {
    // p of the netCDF4-python file is written for records 2 to 5 of 12: its dataset
    // ends at record 5. libnetcdf 4.9's strided reads that run past a dataset's end
    // return the fill value for the records before it too (netcdf-c issue 1380, open;
    // NCO and netCDF4-python show the same): time 2,9,3 gives p[2], then the fill
    // value for record 5. The engine reads record 5's values, as libnetcdf itself does
    // without a stride.
    if is_nco() {
        // NCO reads through libnetcdf's strided reads.
        return;
    }
    let s = Scratch::new();
    let f = s.arg("python.nc");
    nco_tests::tool(python())
        .arg(nco_tests::data_dir().join("nc4python.py"))
        .arg(&f)
        .succeeds();
    // The printed lines, blank ones left out.
    let print = |cmd: Cmd, d: &str| -> Vec<String> {
        cmd.args([
            "--trd",
            "-H",
            "-C",
            "-v",
            "p",
            "-d",
            d,
            "-d",
            "lat,3,30,4",
            &f,
        ])
        .succeeds()
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
    };
    // Each record alone, through libnetcdf (no stride along time): the truth.
    let want: Vec<String> = ["time,2", "time,5", "time,8"]
        .iter()
        .flat_map(|d| print(libnetcdf("ncks"), d))
        .collect();
    let strided = print(engine("ncks"), "time,2,9,3");
    assert_eq!(strided, want);
    assert!(
        strided.contains(&"time[5]=2.5 lat[3] p[188]=114 ".to_string()),
        "{strided:?}"
    );
    // The engine's operators see record 5 as well.
    let (a, b) = (s.arg("a.nc"), s.arg("b.nc"));
    engine("ncks")
        .args(["-O", "-v", "p", "-d", "time,2,9,3", &f, &a])
        .succeeds();
    engine("ncks")
        .args(["-O", "-v", "p", "-d", "time,5", &f, &b])
        .succeeds();
    let at = |file: &str, d: &str| {
        engine("ncks")
            .args(["--trd", "-H", "-C", "-s", "%g,", "-v", "p", "-d", d, file])
            .succeeds()
            .stdout
    };
    assert_eq!(at(&a, "time,1"), at(&b, "time,0"));
    assert!(
        at(&b, "time,0").starts_with("111,112,"),
        "{}",
        at(&b, "time,0")
    );
}

#[test]
fn operators_on_files_other_programs_wrote_match_libnetcdf_reads() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    for (k, f) in foreign_files(&s).iter().enumerate() {
        let f = f.as_str();
        let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
            ("ncks", vec!["-O"], vec![f]),
            ("ncwa", vec!["-O"], vec![f]),
            ("ncra", vec!["-O", "-d", "time,1,,2"], vec![f]),
            ("ncrcat", vec!["-O"], vec![f, f]),
            ("ncbo", vec!["-O", "--op_typ=sub"], vec![f, f]),
        ];
        for (i, (op, args, inputs)) in cases.iter().enumerate() {
            same_output(op, args, inputs, &s, &format!("f{k}_{i}_{op}"));
        }
    }
}

/// nces over deflated members whose variable is one chunk of 4.4 MB, larger than the
/// default unit (the bench's stl_5km shape): each unit is one chunk, every member's
/// decoded once straight into the unit's buffer, with 3 members and with 18 (past
/// what the decoded-chunk store holds: units of part of a chunk re-inflated every
/// member for every unit there, 4x NCO's time). The output equals NCO's and ours
/// through libnetcdf.
#[test]
fn nces_of_members_in_one_large_chunk_equals_nco_and_libnetcdf() {
    let s = Scratch::new();
    let mut members = Vec::new();
    for m in 0..3 {
        let f = s.arg(&format!("m{m}.nc"));
        nco_tests::tool("/usr/bin/python3")
            .args([
                "-c",
                "import sys, netCDF4 as nc, numpy as np\n\
                 d = nc.Dataset(sys.argv[1], 'w'); m = int(sys.argv[2])\n\
                 d.createDimension('y', 1100); d.createDimension('x', 1000)\n\
                 v = d.createVariable('v', 'f4', ('y', 'x'), zlib=True, complevel=1,\n\
                 \x20   shuffle=True, chunksizes=(1100, 1000))\n\
                 v[:] = (np.arange(1100000, dtype='f4').reshape(1100, 1000) % 977) * (m + 1) / 7\n\
                 d.close()\n",
                &f,
                &m.to_string(),
            ])
            .succeeds();
        members.push(f);
    }
    let (ours, lib) = (s.arg("ours.nc"), s.arg("lib.nc"));
    let many: Vec<String> = members.iter().cycle().take(18).cloned().collect();
    for (t, members) in [("1", &members), ("2", &members), ("2", &many)] {
        for (out, no_mmap) in [(&ours, "0"), (&lib, "1")] {
            nco("nces")
                .env("NCO_RS_NO_MMAP", no_mmap)
                .args(["-O", "-t", t])
                .args(members)
                .arg(out)
                .succeeds();
        }
        let d = compare(&ours, &lib).differences();
        assert!(
            d.is_empty(),
            "-t {t}: chunk engine and libnetcdf differ: {d:?}"
        );
        let theirs = s.arg("nco.nc");
        reference("nces")
            .arg("-O")
            .args(members)
            .arg(&theirs)
            .succeeds();
        let d = compare(&ours, &theirs).differences();
        assert!(
            d.is_empty(),
            "{} members: differs from NCO: {d:?}",
            members.len()
        );
    }
}

/// nces's computed chunk rows of netCDF-4 outputs are encoded by the threads that
/// compute them (the writer only stores them), on every path of that encoding: one
/// chunk of whole rows (filtered straight from the values), chunk rows cut from rows
/// wider than the chunks, a fixed first dimension ending in a short edge chunk
/// (padded), big-endian storage with Fletcher-32, and a record variable whose last
/// chunk row is short (its values go to the writer instead). The single-chunk members
/// (`one`, and `packed` with missing values and packing) are added into the
/// accumulator block by block as they are unshuffled. Members written by
/// netCDF4-python; the output equals NCO's and ours through libnetcdf, with the same
/// storage (chunks, filters, byte order) as libnetcdf writes.
#[test]
fn nces_encoding_chunk_rows_where_computed_equals_nco_and_libnetcdf() {
    let s = Scratch::new();
    let mut members = Vec::new();
    for m in 0..3 {
        let f = s.arg(&format!("e{m}.nc"));
        nco_tests::tool("/usr/bin/python3")
            .args([
                "-c",
                "import sys, netCDF4 as nc, numpy as np\n\
                 d = nc.Dataset(sys.argv[1], 'w'); m = int(sys.argv[2])\n\
                 d.createDimension('time', None); d.createDimension('y', 100)\n\
                 d.createDimension('x', 80); d.createDimension('r', 7); d.createDimension('c', 30)\n\
                 t = d.createVariable('time', 'f8', ('time',)); t[:] = np.arange(6)\n\
                 a = d.createVariable('one', 'f4', ('y', 'x'), zlib=True, complevel=1,\n\
                 \x20   shuffle=True, chunksizes=(100, 80))\n\
                 a[:] = (np.arange(8000, dtype='f4').reshape(100, 80) % 97) * (m + 1) / 3\n\
                 b = d.createVariable('cut', 'f4', ('time', 'y', 'x'), zlib=True, complevel=2,\n\
                 \x20   shuffle=True, chunksizes=(2, 50, 40))\n\
                 b[:] = (np.arange(48000, dtype='f4').reshape(6, 100, 80) % 89) - m\n\
                 c = d.createVariable('edge', 'f8', ('r', 'c'), zlib=True, complevel=1,\n\
                 \x20   fletcher32=True, endian='big', chunksizes=(3, 30))\n\
                 c[:] = np.arange(210.0).reshape(7, 30) * (m + 2) / 7\n\
                 e = d.createVariable('short', 'i4', ('time', 'c'), zlib=True, complevel=1,\n\
                 \x20   shuffle=True, chunksizes=(4, 30), fill_value=-99)\n\
                 v = np.arange(180, dtype='i4').reshape(6, 30) * (m + 1)\n\
                 v[m, 3] = -99\n\
                 e[:] = v\n\
                 p = d.createVariable('packed', 'i2', ('y', 'x'), zlib=True, complevel=1,\n\
                 \x20   shuffle=True, chunksizes=(100, 80), fill_value=-999)\n\
                 p.set_auto_maskandscale(False); p.scale_factor = 0.25; p.add_offset = 10.0\n\
                 q = (np.arange(8000, dtype='i2').reshape(100, 80) % 503) * (m + 1)\n\
                 q[m::7, 5] = -999\n\
                 p[:] = q\n\
                 d.close()\n",
                &f,
                &m.to_string(),
            ])
            .succeeds();
        members.push(f);
    }
    let inputs: Vec<&str> = members.iter().map(String::as_str).collect();
    for t in ["1", "2"] {
        let args = ["-O", "-t", t];
        written_alike(
            &s,
            &format!("t{t}"),
            ("nces", &args, &inputs),
            Some(0.0),
            (!is_nco()).then_some("one"),
        );
    }
    // The big-endian input's checksums stay, its byte order becomes the native one.
    // NCO 5.1.4 gives every variable the filters of the first compressed one it
    // writes (here `one`'s: no checksum, and level 1 for `cut` too; README
    // compatibility notes), so this is ours only.
    if is_nco() {
        return;
    }
    let storage = storage_lines(&s.arg("t2_engine.nc"));
    assert!(
        storage.contains("edge:_Fletcher32 = \"true\"")
            && storage.contains("edge:_Endianness = \"little\""),
        "the checksummed variable: {storage}"
    );
}

/// Fletcher-32 checksums of the input stay in a copy (with the engine and through
/// libnetcdf) and `-L` drops them, as NCO 5.1.4 does; `--hdn` shows them where NCO
/// does (after `_Shuffle`).
#[test]
fn copies_keep_fletcher32_checksums_and_deflate_options_drop_them_as_nco() {
    let s = Scratch::new();
    let f = s.arg("sum.nc");
    nco_tests::tool("/usr/bin/python3")
        .args([
            "-c",
            "import sys, netCDF4 as nc, numpy as np\n\
             d = nc.Dataset(sys.argv[1], 'w')\n\
             d.createDimension('r', 7); d.createDimension('c', 30)\n\
             v = d.createVariable('v', 'f8', ('r', 'c'), zlib=True, complevel=1,\n\
             \x20   fletcher32=True, chunksizes=(3, 30))\n\
             v[:] = np.arange(210.0).reshape(7, 30) / 7\n\
             d.close()\n",
            &f,
        ])
        .succeeds();
    for (k, (args, kept)) in [(&["-O"][..], true), (&["-O", "-L", "5"], false)]
        .into_iter()
        .enumerate()
    {
        for no_mmap in ["0", "1"] {
            let out = s.arg(&format!("out{k}_{no_mmap}.nc"));
            nco("ncks")
                .env("NCO_RS_NO_MMAP", no_mmap)
                .args(args)
                .arg(&f)
                .arg(&out)
                .succeeds();
            let storage = storage_lines(&out);
            assert_eq!(
                storage.contains("v:_Fletcher32 = \"true\""),
                kept,
                "ncks {args:?}: {storage}"
            );
            compare(&out, &f).without_attributes().equal();
        }
    }
    nco("ncks")
        .args(["--hdn", "-m", &f])
        .succeeds()
        .stdout_contains("v:_Shuffle = \"true\" ;\n      v:_Fletcher32 = \"true\" ;");
}

/// ncecat stacks a netCDF-4 member's chunked variable with one member per chunk along
/// the new dimension and the member's own chunk sizes along the others, as NCO 5.1.4
/// does (ours took libnetcdf's default chunks of whole dimensions; found by a break
/// test).
#[test]
fn ncecat_keeps_the_members_chunk_sizes_under_the_new_dimension() {
    let s = Scratch::new();
    let f = s.arg("m.nc");
    nco_tests::tool("/usr/bin/python3")
        .args([
            "-c",
            "import sys, netCDF4 as nc, numpy as np\n\
             d = nc.Dataset(sys.argv[1], 'w')\n\
             d.createDimension('time', None); d.createDimension('lat', 6); d.createDimension('lon', 8)\n\
             a = d.createVariable('a', 'f4', ('time', 'lat', 'lon'), zlib=True, chunksizes=(2, 3, 8))\n\
             a[:] = np.arange(192, dtype='f4').reshape(4, 6, 8)\n\
             c = d.createVariable('c', 'i4', ('time', 'lat', 'lon'), chunksizes=(4, 2, 2))\n\
             c[:] = np.arange(192, dtype='i4').reshape(4, 6, 8)\n\
             d.close()\n",
            &f,
        ])
        .succeeds();
    let out = s.arg("out.nc");
    nco("ncecat").args(["-O", &f, &f]).arg(&out).succeeds();
    let storage = storage_lines(&out);
    for want in [
        "a:_ChunkSizes = 1, 2, 3, 8 ;",
        "c:_ChunkSizes = 1, 4, 2, 2 ;",
    ] {
        assert!(storage.contains(want), "{want}: {storage}");
    }
}

/// ncap2 storing a script variable that replaces an input variable of the same name
/// and shape (`b=b+1`) keeps that variable's chunk sizes, deflate level and shuffle,
/// as NCO 5.1.4 does (ours wrote it contiguous and unfiltered; found by a break test).
#[test]
fn ncap2_replacing_a_variable_keeps_its_chunks_and_compression() {
    let s = Scratch::new();
    let f = s.arg("in.nc");
    nco_tests::tool("/usr/bin/python3")
        .args([
            "-c",
            "import sys, netCDF4 as nc, numpy as np\n\
             d = nc.Dataset(sys.argv[1], 'w')\n\
             d.createDimension('time', None); d.createDimension('lat', 6); d.createDimension('lon', 8)\n\
             b = d.createVariable('b', 'f8', ('time', 'lat', 'lon'), zlib=True, complevel=6,\n\
             \x20   shuffle=True, chunksizes=(1, 6, 8))\n\
             b[:] = np.arange(192.0).reshape(4, 6, 8)\n\
             c = d.createVariable('c', 'i4', ('time', 'lat', 'lon'), chunksizes=(4, 2, 2))\n\
             c[:] = np.arange(192, dtype='i4').reshape(4, 6, 8)\n\
             d.close()\n",
            &f,
        ])
        .succeeds();
    let out = s.arg("out.nc");
    nco("ncap2")
        .args(["-O", "-v", "-s", "b=b+1;c=c+1", &f])
        .arg(&out)
        .succeeds();
    let storage = storage_lines(&out);
    for want in [
        "b:_ChunkSizes = 1, 6, 8 ;",
        "b:_DeflateLevel = 6 ;",
        "b:_Shuffle = \"true\" ;",
        "c:_ChunkSizes = 4, 2, 2 ;",
    ] {
        assert!(storage.contains(want), "{want}: {storage}");
    }
}
