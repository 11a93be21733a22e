//! Faults while an operator runs, as a user meets them (README "Faults and bad input"):
//! a run killed with SIGKILL or stopped with SIGINT/SIGTERM, a full disk (a small tmpfs,
//! and a file-size limit), a read-only output folder, concurrent runs writing one output,
//! an input that is also the output, an input truncated while it is read, and printing
//! into a pipe its reader closes.
//!
//! Tests that need root (mounting a tmpfs) skip with a message otherwise; CI runs as root.
//! Runs are caught while they write by watching for their temporary file: the input is
//! 32 MB of random floats written with `-4 -L 9`, which takes long enough (about a
//! second) to be seen; nothing here depends on how long a run takes.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nco_tests::{assert_same_bytes, bin, fx, is_nco, is_root, nco, tool, Run, Scratch};

/// Elements of each of the two variables of [`random_input`].
const N: usize = 4_000_000;

/// A classic file with two float variables of [`N`] random values (`a_slow(n)`, then
/// `z_big(m)`), built once: slow to deflate, so a run can be caught while it writes.
fn random_input() -> &'static Path {
    static F: OnceLock<(Scratch, PathBuf)> = OnceLock::new();
    &F.get_or_init(|| {
        let s = Scratch::new();
        let cdl = s.path("rnd.cdl");
        std::fs::write(
            &cdl,
            format!("netcdf rnd {{\ndimensions:\n n = {N} ;\n m = {N} ;\nvariables:\n float a_slow(n) ;\n float z_big(m) ;\n}}\n"),
        )
        .expect("write CDL");
        let nc = s.path("rnd.nc");
        tool("ncgen").arg("-o").arg(&nc).arg(&cdl).succeeds();
        // Overwrite the data (the last 8*N bytes) with xorshift noise.
        let len = std::fs::metadata(&nc).expect("stat").len() as usize;
        let mut bytes = std::fs::read(&nc).expect("read");
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for w in bytes[len - 8 * N..].chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w.copy_from_slice(&x.to_le_bytes());
        }
        std::fs::write(&nc, bytes).expect("write");
        (s, nc)
    })
    .1
}

/// Start operator `op` with `args` (no standard input, output captured).
fn spawn(op: &str, args: &[&str]) -> Child {
    Command::new(bin(op))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {op}: {e}"))
}

/// The temporary files in `dir` (names containing `.pid`).
fn temp_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list folder")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".pid") && n.ends_with(".tmp"))
        .collect();
    v.sort();
    v
}

/// Wait until `child` has a temporary file in `dir` (it is writing its output); fails
/// when the child ends first or nothing appears within a minute.
#[track_caller]
fn wait_for_temp(child: &mut Child, dir: &Path) {
    let t0 = Instant::now();
    while temp_files(dir).is_empty() {
        if let Some(st) = child.try_wait().expect("try_wait") {
            panic!("the run ended ({st}) before it was seen writing");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no temporary file appeared"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill");
}

/// Wait for `child` and collect it as a [`Run`].
fn finish(child: Child, what: &str) -> Run {
    let out = child.wait_with_output().expect("wait");
    Run {
        cmdline: what.to_string(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// An old output in `s` (a copy of the fixture) and its bytes.
fn old_output(s: &Scratch) -> (String, Vec<u8>) {
    let out = s.copy_fixture("out.nc");
    let bytes = std::fs::read(&out).expect("read");
    (out, bytes)
}

#[test]
fn kill_9_leaves_a_temp_file_that_the_next_run_removes() {
    let s = Scratch::new();
    let (out, before) = old_output(&s);
    let input = random_input().to_string_lossy().into_owned();
    let mut c = spawn("ncks", &["-O", "-4", "-L", "9", &input, &out]);
    wait_for_temp(&mut c, s.dir());
    signal(&c, libc::SIGKILL);
    let r = finish(c, "ncks -O -4 -L 9 rnd.nc out.nc (killed)");
    assert_eq!(r.code, None, "killed by a signal");
    assert_same_bytes(Path::new(&out), &before);
    // Nothing can clean up after SIGKILL: the temporary file stays...
    let left = temp_files(s.dir());
    assert_eq!(left.len(), 1, "{left:?}");
    if is_nco() {
        eprintln!("NCO leaves it there; removing leftovers is ours");
        return;
    }
    // ...until the next run writing that output, which removes it.
    nco("ncks")
        .args(["-O", "-v", "fld2", &fx(), &out])
        .succeeds();
    assert!(temp_files(s.dir()).is_empty(), "{:?}", temp_files(s.dir()));
    assert_eq!(s.files(), ["out.nc"]);
}

#[test]
fn sigint_and_sigterm_remove_the_temp_file_and_keep_the_old_output() {
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let s = Scratch::new();
        let (out, before) = old_output(&s);
        let input = random_input().to_string_lossy().into_owned();
        let mut c = spawn("ncks", &["-O", "-4", "-L", "9", &input, &out]);
        wait_for_temp(&mut c, s.dir());
        signal(&c, sig);
        let r = finish(c, name);
        assert_ne!(r.code, Some(0), "{name}: {r:?}");
        assert_same_bytes(Path::new(&out), &before);
        if is_nco() {
            continue;
        }
        assert_eq!(r.code, Some(128 + sig), "{name}: {r:?}");
        assert_eq!(s.files(), ["out.nc"], "{name}");
    }
}

/// A tmpfs of `size` mounted on `dir` for the test's life (root only).
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, opts: &str) -> Mount {
        std::fs::create_dir_all(dir).expect("mkdir");
        tool("mount")
            .args(["-t", "tmpfs", "-o", opts, "nco-tests"])
            .arg(dir)
            .succeeds();
        Mount(dir.to_path_buf())
    }

    fn remount(&self, opts: &str) {
        tool("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.0)
            .succeeds();
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn full_disk_fails_cleanly_and_keeps_the_old_output() {
    if !is_root() {
        eprintln!("skipped: mounting a small tmpfs needs root (CI runs as root)");
        return;
    }
    let s = Scratch::new();
    let m = Mount::tmpfs(&s.path("disk"), "size=2m");
    let out = m.0.join("out.nc");
    std::fs::copy(nco_tests::fixture(), &out).expect("copy");
    let before = std::fs::read(&out).expect("read");
    let input = random_input().to_string_lossy().into_owned();
    for fmt in ["-3", "-4"] {
        nco("ncks")
            .args(["-O", fmt, &input])
            .arg(&out)
            .run()
            .clean_failure("No space left on device");
        assert_same_bytes(&out, &before);
        if !is_nco() {
            assert!(temp_files(&m.0).is_empty(), "{fmt}: {:?}", temp_files(&m.0));
        }
    }
}

#[test]
fn file_size_limit_fails_cleanly_and_keeps_the_old_output() {
    let s = Scratch::new();
    let (out, before) = old_output(&s);
    let input = random_input().to_string_lossy().into_owned();
    for fmt in ["-3", "-4"] {
        let mut c = Command::new(bin("ncks"));
        c.args(["-O", fmt, &input, &out]).stdin(Stdio::null());
        // SAFETY: between fork and exec only async-signal-safe calls (setrlimit,
        // signal). Ignoring SIGXFSZ makes a write past the limit fail with EFBIG, as
        // on a quota, instead of killing the process.
        unsafe {
            c.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 1 << 20,
                    rlim_max: 1 << 20,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        let o = c.output().expect("run ncks");
        let r = Run {
            cmdline: format!("ncks -O {fmt} rnd.nc out.nc (RLIMIT_FSIZE 1 MiB)"),
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        };
        r.clean_failure(if is_nco() { "out.nc" } else { "File too large" });
        assert_same_bytes(Path::new(&out), &before);
        if !is_nco() {
            assert_eq!(s.files(), ["out.nc"], "{fmt}");
        }
    }
}

#[test]
fn read_only_output_folder_fails_before_reading() {
    let s = Scratch::new();
    let dir = s.path("ro");
    let _m;
    if is_root() {
        // Permission bits do not stop root: a read-only mount does.
        _m = Mount::tmpfs(&dir, "size=1m");
        std::fs::copy(nco_tests::fixture(), dir.join("out.nc")).expect("copy");
        _m.remount("ro");
    } else {
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::copy(nco_tests::fixture(), dir.join("out.nc")).expect("copy");
        let mut perm = std::fs::metadata(&dir).expect("stat").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o555);
        std::fs::set_permissions(&dir, perm).expect("chmod");
    }
    let out = dir.join("out.nc");
    let before = std::fs::read(&out).expect("read");
    nco("ncks")
        .args(["-O", "-v", "fld2", &fx()])
        .arg(&out)
        .run()
        .clean_failure("ro");
    assert_same_bytes(&out, &before);
}

/// Records of the record dimension of `file`.
fn records(file: &str) -> usize {
    let h = nco_tests::ncdump(&["-h"], file);
    let line = h
        .lines()
        .find(|l| l.contains("UNLIMITED"))
        .unwrap_or_else(|| panic!("no record dimension in {h}"));
    let n = line
        .split('(')
        .nth(1)
        .and_then(|t| t.split_whitespace().next());
    n.and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("cannot read the record count in {line:?}"))
}

#[test]
fn concurrent_rec_apn_keeps_every_append() {
    if is_nco() {
        eprintln!("NCO loses appends made at the same time; the lock is ours");
        return;
    }
    let fixture = fx();
    let base = records(&fixture);
    for trial in 0..3 {
        let s = Scratch::new();
        let out = s.copy_fixture("out.nc");
        let writers: Vec<Child> = (0..4)
            .map(|_| spawn("ncrcat", &["--rec_apn", "-h", &fixture, &out]))
            .collect();
        for (i, c) in writers.into_iter().enumerate() {
            finish(c, &format!("ncrcat --rec_apn #{i}")).success();
        }
        assert_eq!(records(&out), base * 5, "trial {trial}: an append was lost");
        assert_eq!(s.files(), ["out.nc"], "trial {trial}");
    }
}

#[test]
fn concurrent_appends_keep_every_variable() {
    if is_nco() {
        eprintln!("NCO loses appends made at the same time; the lock is ours");
        return;
    }
    let vars = ["fld1_int", "fld1_sht", "fld2", "orog"];
    for trial in 0..3 {
        let s = Scratch::new();
        let out = s.path("out.nc");
        nco("ncks").args(["-v", "P0", &fx()]).arg(&out).succeeds();
        let out = out.to_string_lossy().into_owned();
        let writers: Vec<Child> = vars
            .iter()
            .map(|v| spawn("ncks", &["-A", "-C", "-h", "-v", v, &fx(), &out]))
            .collect();
        for (c, v) in writers.into_iter().zip(vars) {
            finish(c, &format!("ncks -A -v {v}")).success();
        }
        let h = nco_tests::ncdump(&["-h"], &out);
        for v in vars {
            assert!(
                h.contains(&format!(" {v}(")),
                "trial {trial}: {v} lost\n{h}"
            );
        }
        assert_eq!(s.files(), ["out.nc"], "trial {trial}");
    }
}

#[test]
fn concurrent_overwrites_leave_one_whole_output() {
    let vars = ["fld1_int", "fld1_sht", "fld2", "orog"];
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let writers: Vec<Child> = vars
        .iter()
        .map(|v| spawn("ncks", &["-O", "-C", "-v", v, &fx(), &out]))
        .collect();
    for (c, v) in writers.into_iter().zip(vars) {
        finish(c, &format!("ncks -O -v {v}")).success();
    }
    // The last rename wins; the output is one run's, whole.
    let h = nco_tests::ncdump(&["-h"], &out);
    let present: Vec<&str> = vars
        .iter()
        .copied()
        .filter(|v| h.contains(&format!(" {v}(")))
        .collect();
    assert_eq!(present.len(), 1, "{present:?}\n{h}");
    nco_tests::ncdump(&[], &out);
    assert_eq!(s.files(), ["out.nc"]);
}

#[test]
fn input_equal_to_output() {
    use nco_tests::dump::Dump;
    let s = Scratch::new();
    let f = s.copy_fixture("f.nc");
    let before = Dump::of(&f);
    // Overwrite a file with an extract of itself: the input is read whole before the
    // new file is renamed over it.
    nco("ncks").args(["-O", "-v", "fld2", &f, &f]).succeeds();
    let after = Dump::of(&f);
    assert_eq!(after.var("fld2").data, before.var("fld2").data);
    assert!(!after.root().vars.iter().any(|v| v.name == "orog"));
    // Append a file's variable to itself: nothing to add, the file stays whole.
    let g = s.copy_fixture("g.nc");
    nco("ncks").args(["-A", "-v", "fld2", &g, &g]).succeeds();
    assert_eq!(Dump::of(&g).var("fld2").data, before.var("fld2").data);
    assert_eq!(Dump::of(&g).var("orog").data, before.var("orog").data);
    // ncbo: the difference of a file with itself, written over it.
    let h = s.copy_fixture("h.nc");
    nco("ncbo")
        .args(["-O", "-v", "fld2", &h, &h, &h])
        .succeeds();
    let d = Dump::of(&h);
    assert!(
        d.var("fld2").numbers().iter().all(|&x| x == 0.0),
        "{:?}",
        d.var("fld2").data
    );
    assert_eq!(s.files(), ["f.nc", "g.nc", "h.nc"]);
}

#[test]
fn input_truncated_while_read_is_an_error_naming_it() {
    // Our reader (pread), the in-kernel copy (plain classic to classic), libnetcdf.
    for (what, extra) in [
        ("our reader", vec!["-4", "-L", "9"]),
        ("in-kernel copy", vec!["-3"]),
        ("libnetcdf", vec!["--no-mmap", "-4", "-L", "9"]),
    ] {
        let s = Scratch::new();
        let input = s.path("in.nc");
        std::fs::copy(random_input(), &input).expect("copy");
        let len = std::fs::metadata(&input).expect("stat").len();
        let (out, before) = old_output(&s);
        let input = input.to_string_lossy().into_owned();
        let mut args = vec!["-O"];
        args.extend(&extra);
        args.extend([input.as_str(), out.as_str()]);
        let mut c = spawn("ncks", &args);
        wait_for_temp(&mut c, s.dir());
        signal(&c, libc::SIGSTOP);
        // Cut z_big (the second half of the data) while the run is stopped.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&input)
            .expect("open");
        f.set_len(len - 4 * N as u64 + 1000).expect("truncate");
        signal(&c, libc::SIGCONT);
        let r = finish(
            c,
            &format!("ncks {} (input truncated: {what})", args.join(" ")),
        );
        if is_nco() {
            // NCO reads the missing part as fill values and succeeds.
            continue;
        }
        r.clean_failure("in.nc")
            .stderr_contains("truncated while being read");
        assert_same_bytes(Path::new(&out), &before);
        assert_eq!(temp_files(s.dir()), Vec::<String>::new(), "{what}");
    }
}

#[test]
fn closed_pipe_ends_printing_as_in_nco() {
    // `ncks -H -v z_big rnd.nc | head -2`: 4 million values (about 60 MB of CDL) into
    // a pipe closed after two lines. As NCO (and C programs) do, the run ends at the
    // next write, killed by SIGPIPE (status 141 in a shell), saying nothing; before,
    // ours printed the whole variable into the closed pipe and exited 0.
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let input = random_input().to_string_lossy().into_owned();
    for style in [
        &["-H"][..],
        &["-H", "--trd"][..],
        &["-H", "-s", "%g\\n"][..],
        &["--json"][..],
    ] {
        let mut child = spawn("ncks", &[style, &["-C", "-v", "z_big", &input]].concat());
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().expect("a first line").expect("read a line");
        assert!(!first.is_empty(), "{style:?}: {first:?}");
        drop(lines);
        let out = child.wait_with_output().expect("wait for ncks");
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGPIPE),
            "{style:?}: {:?}",
            out.status
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{style:?}");
    }
}
