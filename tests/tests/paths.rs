//! File names that are not UTF-8: every operator opens and writes them by their exact
//! bytes (Linux file names are bytes), with `-p`, several inputs and standard input.
//! The results are compared with the same runs on plain names.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use nco_tests::{fixture, nco, tool, Scratch};

/// `name` with a byte that is not UTF-8 (0xff) before its extension.
fn odd(dir: &Path, stem: &str) -> PathBuf {
    let mut n = stem.as_bytes().to_vec();
    n.extend_from_slice(b"\xff.nc");
    dir.join(OsString::from_vec(n))
}

/// `ncdump` of `file` without its first line (which names the file).
fn body(file: &Path) -> String {
    let out = tool("ncdump").arg(file).succeeds().stdout;
    out.lines().skip(1).collect::<Vec<_>>().join("\n")
}

/// Copy the fixture to `to`.
fn copy_fixture(to: &Path) {
    std::fs::copy(fixture(), to).expect("copy fixture");
}

#[test]
fn non_utf8_names_are_read_and_written_exactly() {
    let s = Scratch::new();
    let (a, b) = (odd(s.dir(), "in1"), odd(s.dir(), "in2"));
    copy_fixture(&a);
    copy_fixture(&b);
    let (plain_a, plain_b) = (s.path("p1.nc"), s.path("p2.nc"));
    copy_fixture(&plain_a);
    copy_fixture(&plain_b);
    // (operator, its options, number of inputs)
    let runs: [(&str, &[&str], usize); 6] = [
        ("ncks", &["-v", "fld3"], 1),
        ("ncwa", &["-a", "lat"], 1),
        ("ncpdq", &["-a", "lon,lat"], 1),
        ("ncbo", &["-y", "sbt"], 2),
        ("ncra", &[], 2),
        ("ncap2", &["-s", "x=fld3*2"], 1),
    ];
    for (op, opts, n) in runs {
        let out = odd(s.dir(), &format!("out_{op}"));
        let plain_out = s.path(&format!("plain_{op}.nc"));
        let ins: Vec<&Path> = [a.as_path(), b.as_path()][..n].to_vec();
        let plain_ins: Vec<&Path> = [plain_a.as_path(), plain_b.as_path()][..n].to_vec();
        nco(op)
            .args(["-O", "-h"])
            .args(opts)
            .args(&ins)
            .arg(&out)
            .succeeds();
        nco(op)
            .args(["-O", "-h"])
            .args(opts)
            .args(&plain_ins)
            .arg(&plain_out)
            .succeeds();
        assert!(out.is_file(), "{op}: no output under its exact name");
        assert_eq!(body(&out), body(&plain_out), "{op}");
    }
    // No other name was made (a lossy conversion would have made "out_ncks\u{fffd}.nc").
    let names: Vec<Vec<u8>> = std::fs::read_dir(s.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    let mangled = names
        .iter()
        .filter_map(|n| std::str::from_utf8(n).ok())
        .find(|n| n.contains('\u{fffd}'));
    assert_eq!(mangled, None, "a name was converted lossily");
}

#[test]
fn non_utf8_prefix_and_generated_names() {
    let s = Scratch::new();
    let dir = odd(s.dir(), "dir");
    std::fs::create_dir(&dir).unwrap();
    // f<0xff>01.nc, f<0xff>02.nc, f<0xff>03.nc: the digits -n counts end the stem.
    let member = |i: u8| {
        PathBuf::from(OsString::from_vec(vec![
            b'f',
            0xff,
            b'0',
            b'0' + i,
            b'.',
            b'n',
            b'c',
        ]))
    };
    for i in 1..=3 {
        copy_fixture(&dir.join(member(i)));
    }
    let first = member(1);
    let out = odd(s.dir(), "avg");
    // -p with a folder whose name is not UTF-8, and -n counting from such a name.
    nco("ncra")
        .args(["-O", "-h", "-n", "3,2,1"])
        .arg("-p")
        .arg(&dir)
        .arg(&first)
        .arg(&out)
        .succeeds();
    let plain = s.path("plain.nc");
    nco("ncra")
        .args(["-O", "-h"])
        .args([fixture(), fixture(), fixture()])
        .arg(&plain)
        .succeeds();
    assert_eq!(body(&out), body(&plain));
    // A missing input is named in the error.
    let r = nco("ncks").arg(odd(s.dir(), "missing")).fails_with_code(1);
    assert!(r.stderr.contains("missing"), "{}", r.stderr);
}
