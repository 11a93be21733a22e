//! End to end: `nco-bench run` on tiny files with stand-in operators that crash, fail
//! and give a wrong answer; every row is still reported and the exit status says so.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn have(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
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
    let nco = have("ncpdq") && have("ncks");
    let out = tmp.path().join("res");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nco-bench"));
    cmd.args([
        "run",
        "--scale",
        "0.001",
        "--repeats",
        "1",
        "--no-cdo",
        "--only",
        "1,4,7,5b",
    ])
    .arg("--dir")
    .arg(tmp.path().join("data"))
    .arg("--bin-dir")
    .arg(&bin)
    .arg("--out")
    .arg(&out);
    if !nco {
        cmd.arg("--no-nco");
    }
    let o = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
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
    if nco {
        assert!(row("7").contains("WRONG ANSWER"), "{}", row("7"));
        assert!(
            stdout.contains("row 7: our output differs from NCO's"),
            "{stdout}"
        );
    }
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
    let o = Command::new(env!("CARGO_BIN_EXE_nco-bench"))
        .args(["run", "--frobnicate"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--frobnicate"));
    let o = Command::new(env!("CARGO_BIN_EXE_nco-bench"))
        .args(["run", "--only", "99"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown row '99'"));
}
