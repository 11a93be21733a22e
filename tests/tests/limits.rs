//! Memory limits (README "Faults and bad input"): under an address-space limit
//! (`ulimit -v`, RLIMIT_AS) a variable too large to hold is a one-line error naming it
//! and its size, not an abort; operators that stream (ncra over records, ncks copying)
//! finish within the same limit.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use nco_tests::{bin, is_nco, tool, Run, Scratch};

/// Values per record of `big`.
const N: u64 = 1 << 20;
/// Records of `big`: 256 x 4 MiB = 1 GiB.
const RECORDS: u64 = 256;

/// A 1 GiB classic file, sparse on disk: `float big(time, n)` with [`RECORDS`] records
/// of zeros (ncgen writes the header with no records; the record count is then set and
/// the file extended).
fn big_input(s: &Scratch) -> String {
    let cdl = s.path("big.cdl");
    std::fs::write(
        &cdl,
        format!("netcdf big {{\ndimensions:\n n = {N} ;\n time = UNLIMITED ;\nvariables:\n float big(time, n) ;\n}}\n"),
    )
    .expect("write CDL");
    let nc = s.path("big.nc");
    tool("ncgen").arg("-o").arg(&nc).arg(&cdl).succeeds();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&nc)
        .expect("open");
    let len = f.metadata().expect("stat").len();
    // CDF-1: the record count is the big-endian u32 after the 4-byte magic.
    std::os::unix::fs::FileExt::write_all_at(&f, &(RECORDS as u32).to_be_bytes(), 4)
        .expect("write numrecs");
    f.set_len(len + RECORDS * N * 4).expect("extend");
    nc.to_string_lossy().into_owned()
}

/// Run `op args` with its address space limited to `mib` MiB.
fn limited(op: &str, args: &[&str], mib: u64) -> Run {
    let mut c = Command::new(bin(op));
    c.args(args).stdin(Stdio::null());
    // SAFETY: only setrlimit between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: mib << 20,
                rlim_max: mib << 20,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().expect("run");
    Run {
        cmdline: format!("{op} {} (ulimit -v {})", args.join(" "), mib << 10),
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The address-space limit of these tests: enough for an operator's threads and
/// libraries, far from the 1 GiB variable.
const LIMIT_MIB: u64 = 768;

#[test]
fn a_variable_too_large_for_the_memory_limit_is_a_clear_error() {
    if is_nco() {
        eprintln!("NCO reports failed allocations in its own words; the message is ours");
        return;
    }
    let s = Scratch::new();
    let input = big_input(&s);
    let out = s.arg("out.nc");
    let want = format!(
        "not enough memory for variable big ({} bytes)",
        RECORDS * N * 4
    );
    // ncap2 evaluates a reduction over the whole variable, so it reads all of big at
    // once: through our reader and through libnetcdf.
    for (op, args) in [
        ("ncap2", vec!["-O", "-s", "t=big.total()", &input, &out]),
        (
            "ncap2",
            vec!["--no-mmap", "-O", "-s", "t=big.total()", &input, &out],
        ),
    ] {
        let r = limited(op, &args, LIMIT_MIB);
        let r = r.clean_failure(&want);
        assert!(!r.stderr.contains("internal error"), "{r:?}");
        assert!(!Path::new(&out).exists(), "{op}: an output was left");
    }
}

#[test]
fn streaming_operators_stay_within_the_memory_limit() {
    let s = Scratch::new();
    let input = big_input(&s);
    let out = s.arg("mean.nc");
    // ncra reads record by record: the 1 GiB variable averages within 768 MiB.
    limited("ncra", &["-O", &input, &out], LIMIT_MIB).success();
    let r = Command::new(bin("ncks"))
        .args(["-H", "-C", "--trd", "-v", "big", "-d", "n,0,1", &out])
        .output()
        .expect("ncks");
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("big[0]=0") && text.contains("big[1]=0"),
        "{text}"
    );
}
