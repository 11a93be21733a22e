//! End to end: `nco-bench run` on tiny files with stand-in operators that crash, fail
//! and give a wrong answer; every row is still reported and the exit status says so.
//! nco-bench is always the workspace's (`nco_tests::own_bin`), NCO the system's.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nco_tests::{own_bin, Cmd};

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn bench() -> Cmd {
    Cmd::program(own_bin("nco-bench"))
}

/// `nco-bench run` of rows `only` (plus `extra` options) on tiny inputs (scale 0.001,
/// one repeat, no CDO) made in `tmp/data`, our operators from `bin`, NCO's from
/// /usr/bin, results in `tmp/res`.
fn tiny_run(tmp: &Path, bin: &Path, only: &str, extra: &[&str]) -> Cmd {
    bench()
        .args([
            "run",
            "--scale",
            "0.001",
            "--repeats",
            "1",
            "--no-cdo",
            "--only",
            only,
        ])
        .args(extra)
        .arg("--dir")
        .arg(tmp.join("data"))
        .args(["--nco-dir", "/usr/bin", "--bin-dir"])
        .arg(bin)
        .arg("--out")
        .arg(tmp.join("res"))
}

#[test]
fn failures_crashes_and_wrong_answers_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    script(&bin, "ncwa", "kill -SEGV $$");
    script(
        &bin,
        "ncbo",
        "echo 'ncbo: ERROR something broke' >&2; exit 1",
    );
    // "packs" by copying: a fast wrong answer when compared with NCO's packed output
    let last = "eval out=\\${$#}; eval in=\\${$(($#-1))}; cp \"$in\" \"$out\"";
    script(&bin, "ncpdq", last);
    for op in ["ncpdq", "ncks"] {
        assert!(
            Path::new("/usr/bin").join(op).is_file(),
            "NCO's {op} is not installed: apt-get install nco (bash .ci/run installs it)"
        );
    }
    let out = tmp.path().join("res");
    let o = tiny_run(tmp.path(), &bin, "1,4,7,5b", &[]).fails_with_code(1);
    let stdout = &o.stdout;
    let row = |id: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("row {id} missing:\n{stdout}"))
            .to_string()
    };
    assert!(row("1").contains("FAILED"), "{}", row("1"));
    assert!(
        stdout.contains("row 1: nco-rs killed by signal 11"),
        "{stdout}"
    );
    assert!(row("4").contains("FAILED"));
    assert!(stdout.contains("ncbo: ERROR something broke"), "{stdout}");
    assert!(row("5b").contains("not built"), "{}", row("5b"));
    assert!(row("7").contains("WRONG ANSWER"), "{}", row("7"));
    assert!(
        stdout.contains("row 7: our output differs from NCO's"),
        "{stdout}"
    );
    for ext in ["txt", "csv", "json", "svg"] {
        assert!(
            out.join(format!("results.{ext}")).is_file(),
            "results.{ext}"
        );
    }
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    // the generated inputs are complete files with no temporaries beside them
    let data = tmp.path().join("data").join("scale-0.001");
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn bad_usage_is_rejected_with_status_2() {
    bench()
        .args(["run", "--frobnicate"])
        .fails_with_code(2)
        .stderr_contains("--frobnicate");
    bench()
        .args(["run", "--only", "99"])
        .fails_with_code(1)
        .stderr_contains("unknown row '99'");
}

#[test]
fn netcdf4_rows_time_the_engine_against_libnetcdf_and_nco() {
    // Rows 1 and 9 on tiny files: the classic rows, then the same rows on deflated
    // (z) and unfiltered (u) netCDF-4 inputs with our operator through libnetcdf as a
    // third side; every output checked against NCO's, and the engine's against
    // libnetcdf's exactly. (Times are reported, not asserted.)
    let tmp = tempfile::tempdir().unwrap();
    let ours = own_bin("ncks");
    let bin = ours.parent().unwrap();
    assert!(bin.join("ncwa").is_file(), "build the operators first");
    let out = tmp.path().join("res");
    let o = tiny_run(tmp.path(), bin, "1,9", &["--nc4"]).succeeds();
    let stdout = &o.stdout;
    for id in ["1", "9", "1z", "9z", "1u", "9u"] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{id} ")))
            .unwrap_or_else(|| panic!("row {id} missing:\n{stdout}"));
        assert!(line.contains("equal"), "{line}");
    }
    for id in ["1z", "9z", "1u", "9u"] {
        assert!(
            stdout.contains(&format!(
                "row {id}: chunk engine vs libnetcdf (nco-rs --no-mmap): "
            )),
            "{stdout}"
        );
    }
    assert!(stdout.contains("row 9: output size: nco-rs "), "{stdout}");
    assert!(
        stdout.contains("deflate 1 + shuffle]") && stdout.contains("no filters]"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "{csv}");
    let json = std::fs::read_to_string(out.join("results.json")).unwrap();
    assert!(json.contains("\"engine_vs_libnetcdf\""), "{json}");
    // The netCDF-4 inputs are netCDF-4, deflated where asked.
    let z = tmp
        .path()
        .join("data/scale-0.001/nc4-deflate1-shuffle/ipcc_dly_T85.nc");
    let hs = nco_tests::ncdump(&["-hs"], &z.to_string_lossy());
    assert!(hs.contains(":_Format = \"netCDF-4\""), "{hs}");
    assert!(hs.contains("_DeflateLevel = 1"), "{hs}");
}

#[test]
fn dap_rows_read_the_inputs_from_the_loopback_server() {
    // Row 1 on tiny files, then once more with its inputs read through the loopback
    // OPeNDAP server (needs scripts/dap-venv.sh, as the DAP tests): the row "1d" is
    // checked against NCO reading the same URL, and its note gives the server's CPU
    // time of each side, which is never zero (the server did the reading).
    let tmp = tempfile::tempdir().unwrap();
    let ours = own_bin("ncks");
    let bin = ours.parent().unwrap();
    let o = tiny_run(tmp.path(), bin, "1", &["--dap", "--dap-scale", "0.001"]).succeeds();
    let stdout = &o.stdout;
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("1d "))
        .unwrap_or_else(|| panic!("row 1d missing:\n{stdout}"));
    assert!(line.contains("equal"), "{line}");
    assert!(
        stdout.contains("inputs from OPeNDAP, loopback]"),
        "{stdout}"
    );
    let note = stdout
        .lines()
        .find(|l| l.starts_with("row 1d: server CPU per run: nco-rs "))
        .unwrap_or_else(|| panic!("no server CPU note:\n{stdout}"));
    let secs: Vec<f64> = note
        .split(' ')
        .filter_map(|w| w.parse::<f64>().ok())
        .collect();
    assert!(secs.len() >= 2 && secs[0] > 0.0 && secs[1] > 0.0, "{note}");
    // The server is gone when the bench is.
    let served = tmp.path().join("data/scale-0.001").display().to_string();
    let left = std::process::Command::new("pgrep")
        .args(["-f", &format!("serve.py .*{served}")])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "a server is left: {left:?}");
}

/// `nco-bench scale` on tiny files: every variant runs, its output is checked (a
/// stand-in ncra whose merge writes a wrong answer makes the study fail), and the MPI
/// rows come from the MPI build.
#[test]
fn scale_study_times_every_variant_and_checks_the_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    bench()
        .args(["gen", "--which", "ipcc", "--scale", "0.001", "--dir"])
        .arg(&data)
        .succeeds();
    let ours = nco_tests::bin("ncra");
    let bin_dir = ours.parent().unwrap().to_path_buf();
    let mpi_dir = nco_tests::mpi_bin("ncra").parent().unwrap().to_path_buf();
    let study = |bin: &Path| {
        bench()
            .args([
                "scale",
                "--scale",
                "0.001",
                "--files",
                "4",
                "--repeats",
                "1",
                "--dir",
            ])
            .arg(&data)
            .arg("--bin-dir")
            .arg(bin)
            .arg("--mpi-dir")
            .arg(&mpi_dir)
            .arg("--out")
            .arg(tmp.path().join("res"))
    };
    let r = study(&bin_dir).succeeds();
    for row in [
        "| one process, -t 1 |",
        "| one process, -t 2 |",
        "| --part 1/2 and 2/2 at once (-t 1 each), then --merge |",
        "| mpirun -np 2 (-t 1 per rank) |",
        "mpirun -np 2 vs -np 1:",
        "-np 2's equal to the merged parts' exactly",
    ] {
        assert!(r.stdout.contains(row), "{row} missing:\n{}", r.stdout);
    }
    let saved = std::fs::read_to_string(tmp.path().join("res/scale.txt")).unwrap();
    assert_eq!(saved, r.stdout);
    // A stand-in whose two-thread run computes the maximum instead: a wrong answer,
    // caught by the study's check.
    let fake = tmp.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    script(
        &fake,
        "ncra",
        &format!(
            "case \" $* \" in *' -t 2 '*) exec {0} -y max \"$@\";; esac; exec {0} \"$@\"",
            ours.display()
        ),
    );
    let r = study(&fake).run();
    assert_ne!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("one process, -t 2: the output differs from one process's"),
        "{}",
        r.stderr
    );
}
