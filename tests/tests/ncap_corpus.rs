//! ncap2's differential corpus: every script `tests/data/ncap2/NAME.nco` runs with NCO
//! 5.1.4's ncap2 (`/usr/bin/ncap2`) and with ours on the corpus fixture
//! (`tests/data/ncap2.cdl`), and the two outputs must compare equal
//! (`nco_tests::compare`: exact values, types, dimensions and attributes, matched by
//! name), or the difference must be a documented deviation (README, compatibility
//! notes) whose value the script states and the test asserts.
//!
//! A script's first lines may hold directives, `//@ key: value`:
//!
//! - `//@ args: -v -4` the options before the script (default `-v`; `-O` is always
//!   added, except with `-A`);
//! - `//@ s: TEXT` a `-s TEXT` given before the script file (repeatable; the script
//!   itself is always given with `-S`, run in `tests/data/ncap2` so that `#include`
//!   finds its files);
//! - `//@ input: none` no input file (the output only);
//! - `//@ pre: ARGS` (with `-A`) the output exists first, made by `ncap2 -O ARGS in out`
//!   with the same implementation;
//! - `//@ stdout` what the script prints must be the same too;
//! - `//@ error` both implementations must fail; ours with exit status 1, one line
//!   `ncap2: ERROR ...` and no output file;
//! - `//@ deviation: WHY` the outputs differ on purpose (the README names it); then
//!   `//@ ours: VAR = V1, V2` (our values, ncdump's `_` for a missing one),
//!   `//@ ours-type: VAR TYPE`, `//@ ours-stdout: TEXT` and `//@ ours-stderr: NEEDLE`
//!   state what ours gives, and NCO must still differ.
//!
//! Run it alone with `cargo test --release -p nco-tests ncap_corpus`; it prints the
//! counts (scripts, equal to NCO, documented deviations).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use nco_tests::dump::Value;
use nco_tests::{compare, data_dir, is_nco, ncap2_corpus_fixture, nco, reference, Cmd, Dump};
use nco_tests::{Run, Scratch};

/// One script of the corpus and its directives.
#[derive(Debug, Default)]
struct Case {
    name: String,
    file: PathBuf,
    args: Vec<String>,
    pre_s: Vec<String>,
    no_input: bool,
    pre: Option<Vec<String>>,
    stdout: bool,
    error: bool,
    deviation: Option<String>,
    ours: Vec<(String, String)>,
    ours_type: Vec<(String, String)>,
    ours_stdout: Option<String>,
    ours_stderr: Vec<String>,
}

fn corpus_dir() -> PathBuf {
    data_dir().join("ncap2")
}

/// Split an option list at blanks, keeping `'...'` together (quotes removed).
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in s.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

fn parse_case(file: &Path) -> Case {
    let text = std::fs::read_to_string(file).expect("read a corpus script");
    let mut c = Case {
        name: file.file_stem().unwrap().to_string_lossy().into_owned(),
        file: file.to_path_buf(),
        args: vec!["-v".into()],
        ..Case::default()
    };
    for line in text.lines() {
        let Some(d) = line.strip_prefix("//@") else {
            continue;
        };
        let d = d.trim();
        let (key, value) = d
            .split_once(':')
            .map_or((d, ""), |(k, v)| (k.trim(), v.trim()));
        match key {
            "args" => c.args = words(value),
            "s" => c.pre_s.push(value.to_string()),
            "input" if value == "none" => c.no_input = true,
            "pre" => c.pre = Some(words(value)),
            "stdout" => c.stdout = true,
            "error" => c.error = true,
            "deviation" => c.deviation = Some(value.to_string()),
            "ours" => {
                let (v, vals) = value.split_once('=').expect("ours: VAR = VALUES");
                c.ours.push((v.trim().into(), vals.trim().into()));
            }
            "ours-type" => {
                let (v, t) = value.split_once(' ').expect("ours-type: VAR TYPE");
                c.ours_type.push((v.trim().into(), t.trim().into()));
            }
            "ours-stdout" => c.ours_stdout = Some(value.replace("\\n", "\n")),
            "ours-stderr" => c.ours_stderr.push(value.to_string()),
            other => panic!("{}: unknown directive {other}", file.display()),
        }
    }
    c
}

fn cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/data/ncap2 exists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "nco"))
        // `inc_*.nco` are files the others #include.
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("inc_"))
        .collect();
    files.sort();
    files.iter().map(|f| parse_case(f)).collect()
}

/// Run `case` with the program `prog` (made fresh by `mk` for each command) writing
/// `out` in `dir`.
fn run_one(mk: &dyn Fn() -> Cmd, case: &Case, dir: &Scratch, out: &Path) -> Run {
    let input = ncap2_corpus_fixture();
    if let Some(pre) = &case.pre {
        let mut cmd = mk().arg("-O").args(pre);
        cmd = cmd.arg(input);
        cmd.arg(out).current_dir(&corpus_dir()).succeeds();
    }
    let mut cmd = mk().current_dir(&corpus_dir());
    if !case.args.iter().any(|a| a == "-A") {
        cmd = cmd.arg("-O");
    }
    cmd = cmd.args(&case.args);
    for s in &case.pre_s {
        cmd = cmd.arg("-s").arg(s);
    }
    cmd = cmd.arg("-S").arg(&case.file);
    if !case.no_input {
        cmd = cmd.arg(input);
    }
    let _ = dir;
    cmd.arg(out).run()
}

/// Our value list of `var` in `file`, ncdump-style (`1, 2.5, _`).
fn values_of(d: &Dump, var: &str) -> String {
    let Some(v) = d.root().vars.iter().find(|v| v.name == var) else {
        return format!("(no variable {var})");
    };
    v.data
        .iter()
        .map(|x| match x {
            Value::Int(i) => i.to_string(),
            Value::Real(r) => format!("{r}"),
            Value::Fill => "_".into(),
            Value::Text(t) => format!("\"{t}\""),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What went wrong with `case` (empty: it passed), and whether it is a deviation.
fn check(case: &Case) -> Vec<String> {
    let dir = Scratch::new();
    let (a, b) = (dir.path("nco.nc"), dir.path("ours.nc"));
    let theirs = run_one(&|| reference("ncap2"), case, &dir, &a);
    let ours = run_one(&|| nco("ncap2"), case, &dir, &b);
    let mut bad = Vec::new();
    if case.error {
        if theirs.code == Some(0) {
            bad.push(format!("NCO succeeds:\n{}", theirs.stdout));
        }
        if ours.code != Some(1) || ours.stderr.contains("panicked") {
            bad.push(format!("ours exits {:?}: {}", ours.code, ours.stderr));
        } else if !is_nco() {
            let lines: Vec<&str> = ours.stderr.lines().filter(|l| !l.is_empty()).collect();
            if lines.len() != 1 || !lines[0].starts_with("ncap2: ERROR") {
                bad.push(format!("ours: not a one-line error: {}", ours.stderr));
            }
            if b.exists() && case.pre.is_none() {
                bad.push("ours wrote an output".into());
            }
        }
        if case.pre.is_some() && !is_nco() {
            // A failed -A leaves the existing output as it was.
            let d = compare(&a.to_string_lossy(), &b.to_string_lossy()).differences();
            if !d.is_empty() {
                bad.push(format!("the existing output changed: {}", d.join("; ")));
            }
        }
        return bad;
    }
    if theirs.code != Some(0) && case.deviation.is_none() {
        bad.push(format!("NCO fails: {}{}", theirs.stdout, theirs.stderr));
        return bad;
    }
    if ours.code != Some(0) {
        bad.push(format!("ours fails: {}", ours.stderr));
        return bad;
    }
    let diffs = if theirs.code == Some(0) {
        compare(&a.to_string_lossy(), &b.to_string_lossy()).differences()
    } else {
        vec!["NCO fails".into()]
    };
    let stdout_differs = case.stdout && theirs.stdout != ours.stdout;
    match &case.deviation {
        None => {
            bad.extend(diffs);
            if stdout_differs {
                bad.push(format!(
                    "stdout differs:\n--- NCO ---\n{}--- ours ---\n{}",
                    theirs.stdout, ours.stdout
                ));
            }
        }
        Some(_) if is_nco() => {}
        Some(why) => {
            if diffs.is_empty() && !stdout_differs && theirs.stderr == ours.stderr {
                bad.push(format!("documented deviation ({why}) but NCO now agrees"));
            }
            let d = Dump::of(&b.to_string_lossy());
            for (var, want) in &case.ours {
                let got = values_of(&d, var);
                if &got != want {
                    bad.push(format!("ours: {var} = {got}, the script states {want}"));
                }
            }
            for (var, ty) in &case.ours_type {
                let got = d.root().vars.iter().find(|v| &v.name == var).map(|v| &v.ty);
                if got != Some(ty) {
                    bad.push(format!("ours: {var} is {got:?}, the script states {ty}"));
                }
            }
            if let Some(s) = &case.ours_stdout {
                if &ours.stdout != s {
                    bad.push(format!(
                        "ours prints {:?}, the script states {s:?}",
                        ours.stdout
                    ));
                }
            }
            for n in &case.ours_stderr {
                if !ours.stderr.contains(n.as_str()) {
                    bad.push(format!("ours: stderr {:?} lacks {n:?}", ours.stderr));
                }
            }
        }
    }
    bad
}

#[test]
fn corpus_matches_nco() {
    let cases = cases();
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(c) = cases.get(i) else { break };
                let bad = check(c);
                if !bad.is_empty() {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {}", c.name, bad.join("\n    ")));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    let failed = |c: &Case| {
        failures
            .iter()
            .any(|f| f.starts_with(&format!("{}: ", c.name)))
    };
    let count = |dev: bool| {
        cases
            .iter()
            .filter(|c| c.deviation.is_some() == dev && !failed(c))
            .count()
    };
    println!(
        "ncap2 corpus: {} scripts, {} equal to NCO ({} of them errors in both), {} documented deviations, {} failing",
        cases.len(),
        count(false),
        cases.iter().filter(|c| c.error && !failed(c)).count(),
        count(true),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corpus scripts fail:\n  {}",
        failures.len(),
        cases.len(),
        failures.join("\n  ")
    );
}
