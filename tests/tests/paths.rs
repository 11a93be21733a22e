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

/// The same edit or interpolation on names that are not UTF-8 and on plain names, by
/// us and by NCO 5.1.4: the four results are the same file, and each is where its exact
/// name says.
#[test]
fn editors_and_ncflint_take_non_utf8_names() {
    let s = Scratch::new();
    // (operator, its options, whether it edits its input in place)
    let runs: [(&str, &[&str], bool); 5] = [
        ("ncatted", &["-a", "units,lat,o,c,K"], true),
        ("ncatted", &["-a", "long_name,,d,,"], false),
        ("ncrename", &["-v", "lat,LAT", "-d", "lon,LON"], true),
        ("ncrename", &["-a", "lat@units,u"], false),
        ("ncflint", &["-w", "0.25"], false),
    ];
    for (i, (op, opts, in_place)) in runs.into_iter().enumerate() {
        let mut bodies = Vec::new();
        for (who, plain) in [
            ("ours", false),
            ("nco", false),
            ("ours", true),
            ("nco", true),
        ] {
            let name = |stem: &str| {
                let stem = format!("{stem}{i}_{who}");
                if plain {
                    s.path(&format!("{stem}.nc"))
                } else {
                    odd(s.dir(), &stem)
                }
            };
            let input = name("in");
            copy_fixture(&input);
            let cmd = match who {
                "ours" => nco(op),
                _ => nco_tests::reference(op),
            };
            let mut cmd = cmd.args(["-O", "-h"]).args(opts).arg(&input);
            let out = if in_place {
                input.clone()
            } else {
                let out = name("out");
                if op == "ncflint" {
                    // The second input: the first with its values doubled.
                    let second = name("second");
                    tool("ncap2")
                        .args(["-O", "-h", "-s", "fld3=fld3*2"])
                        .arg(&input)
                        .arg(&second)
                        .succeeds();
                    cmd = cmd.arg(&second);
                }
                cmd = cmd.arg(&out);
                out
            };
            cmd.succeeds();
            assert!(out.is_file(), "{op} {opts:?} ({who}): no {}", out.display());
            bodies.push(body(&out));
        }
        for (b, who) in bodies[1..]
            .iter()
            .zip(["NCO", "ours on plain names", "NCO on plain names"])
        {
            assert_eq!(&bodies[0], b, "{op} {opts:?}: ours on odd names vs {who}");
        }
    }
    let mangled = std::fs::read_dir(s.dir())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .find(|n| n.contains('\u{fffd}'));
    assert_eq!(mangled, None, "a name was converted lossily");
}

/// A bad option value of ncatted, ncrename or ncflint is one line naming the option,
/// exit 1, before anything is opened: the input (named by bytes that are not UTF-8) keeps
/// its bytes and nothing else is made.
#[test]
fn bad_values_of_editors_and_ncflint_name_the_option_and_touch_nothing() {
    // (operator, options, the option the error names, NCO's needle: NCO names the
    // value or prints its usage, over several lines, on either stream)
    let cases: [(&str, &[&str], &str, &str); 12] = [
        ("ncatted", &["-a", "units,lat"], "-a", "fewer than five"),
        (
            "ncatted",
            &["-a", "units,lat,x,c,K"],
            "-a",
            "`x' is not a supported mode",
        ),
        (
            "ncatted",
            &["-a", "units,lat,o,q,K"],
            "-a",
            "`q' is not a supported",
        ),
        ("ncatted", &["-a", "units,lat,o,f,abc"], "-a", "\"abc\""),
        ("ncrename", &["-v", "lat"], "-v", "ncrename"),
        ("ncrename", &["-v", ",x"], "-v", "ncrename"),
        ("ncrename", &["-d", "lat,"], "-d", "ncrename"),
        ("ncrename", &["-a", "units"], "-a", "ncrename"),
        ("ncrename", &["-g", "g1"], "-g", "ncrename"),
        ("ncflint", &["-w", "abc"], "-w", "\"abc\""),
        (
            "ncflint",
            &["-w", "1,2,3"],
            "-w",
            "too many arguments to -w",
        ),
        ("ncflint", &["-i", "lat,x"], "-i", "\"x\""),
    ];
    let s = Scratch::new();
    let input = odd(s.dir(), "in");
    copy_fixture(&input);
    let before = std::fs::read(&input).unwrap();
    let out = odd(s.dir(), "out");
    for (op, args, named, nco_needle) in cases {
        let mut cmd = nco(op).args(args).arg(&input);
        if op == "ncflint" {
            cmd = cmd.arg(&input).arg(&out);
        }
        let r = cmd.run().code_is(1);
        if nco_tests::is_nco() {
            assert!(
                r.stderr.contains(nco_needle) || r.stdout.contains(nco_needle),
                "{op} {args:?}: {}{}",
                r.stdout,
                r.stderr
            );
        } else {
            let line = r.stderr.trim_end();
            assert!(
                !line.contains('\n') && line.starts_with(&format!("{op}: ERROR option {named}:")),
                "{op} {args:?}: {line}"
            );
        }
        assert_eq!(std::fs::read(&input).unwrap(), before, "{op} {args:?}");
        let made: Vec<_> = std::fs::read_dir(s.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.as_os_str() != input.file_name().unwrap())
            .collect();
        assert!(made.is_empty(), "{op} {args:?} made {made:?}");
    }
}
