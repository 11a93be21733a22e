//! Running one measured child process: spawn with `std::process::Command`, wall clock
//! with `Instant`, and reap with `wait4` for *that* child's CPU times, peak memory and
//! block I/O (never `RUSAGE_CHILDREN`, whose peak memory is the largest child so far).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The outcome of one child.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Measure {
    /// Wall seconds from spawn to reap.
    pub wall: f64,
    /// User CPU seconds.
    pub user: f64,
    /// System CPU seconds.
    pub sys: f64,
    /// Peak resident set size in bytes.
    pub max_rss: u64,
    /// Bytes read from block devices (`ru_inblock` × 512).
    pub in_bytes: u64,
    /// Bytes written to block devices (`ru_oublock` × 512).
    pub out_bytes: u64,
    /// Exit code, when the child exited.
    pub code: Option<i32>,
    /// Signal number, when the child was killed by a signal.
    pub signal: Option<i32>,
    /// CPU seconds (user+sys) the loopback OPeNDAP server spent while the child ran
    /// (`run --dap`; 0 otherwise).
    pub server_cpu: f64,
}

impl Measure {
    /// True when the child exited with status 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// "exit 3" / "signal 11 (crashed)" / "ok".
    pub fn status_text(&self) -> String {
        match (self.code, self.signal) {
            (Some(0), _) => "ok".into(),
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            _ => "unknown status".into(),
        }
    }

    /// Sum of a sequence of children (times and I/O add up, peak memory is the max).
    pub fn accumulate(&mut self, m: &Measure) {
        self.wall += m.wall;
        self.user += m.user;
        self.sys += m.sys;
        self.max_rss = self.max_rss.max(m.max_rss);
        self.in_bytes += m.in_bytes;
        self.out_bytes += m.out_bytes;
        self.server_cpu += m.server_cpu;
        if self.code.is_none_or(|c| c == 0) && self.signal.is_none() {
            self.code = m.code;
            self.signal = m.signal;
        }
    }
}

/// How to start children.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    /// Pin the child to this CPU (`sched_setaffinity` in the child before `exec`).
    pub pin_cpu: Option<usize>,
}

fn from_rusage(r: &libc::rusage) -> (f64, f64, u64, u64, u64) {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (
        tv(r.ru_utime),
        tv(r.ru_stime),
        r.ru_maxrss as u64 * 1024,
        r.ru_inblock as u64 * 512,
        r.ru_oublock as u64 * 512,
    )
}

/// Run `argv` (program first) with stdout and stderr appended to `log` (or discarded),
/// stdin closed, and measure it. Errors only when the program cannot be started.
pub fn run(argv: &[String], log: Option<&Path>, launch: &Launch) -> std::io::Result<Measure> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::null());
    match log {
        Some(p) => {
            let f = File::options().create(true).append(true).open(p)?;
            cmd.stdout(f.try_clone()?).stderr(f);
        }
        None => {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    if let Some(cpu) = launch.pin_cpu {
        // SAFETY: the closure runs in the forked child before exec and only calls
        // async-signal-safe functions on a stack-allocated cpu set.
        unsafe {
            cmd.pre_exec(move || {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let start = Instant::now();
    let child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    let (status, r) = wait4(pid)?;
    let wall = start.elapsed().as_secs_f64();
    drop(child); // already reaped; dropping a Child neither waits nor kills
    let (user, sys, max_rss, in_bytes, out_bytes) = from_rusage(&r);
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Ok(Measure {
        wall,
        user,
        sys,
        max_rss,
        in_bytes,
        out_bytes,
        code,
        signal,
        server_cpu: 0.0,
    })
}

/// Reap child `pid` with `wait4`, retrying on EINTR.
fn wait4(pid: libc::pid_t) -> std::io::Result<(i32, libc::rusage)> {
    // SAFETY: wait4 writes into the status and rusage we own.
    unsafe {
        let mut status = 0;
        let mut r: libc::rusage = std::mem::zeroed();
        loop {
            let rc = libc::wait4(pid, &mut status, 0, &mut r);
            if rc == pid {
                return Ok((status, r));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Median of `xs` (mean of the middle two for an even count); 0 for none.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Element-wise medians of several measures (status from the first failing one).
pub fn median_measure(ms: &[Measure]) -> Measure {
    let pick = |f: &dyn Fn(&Measure) -> f64| median(&ms.iter().map(f).collect::<Vec<_>>());
    let bad = ms.iter().find(|m| !m.ok()).or(ms.first());
    Measure {
        wall: pick(&|m| m.wall),
        user: pick(&|m| m.user),
        sys: pick(&|m| m.sys),
        max_rss: pick(&|m| m.max_rss as f64) as u64,
        in_bytes: pick(&|m| m.in_bytes as f64) as u64,
        out_bytes: pick(&|m| m.out_bytes as f64) as u64,
        code: bad.and_then(|m| m.code),
        signal: bad.and_then(|m| m.signal),
        server_cpu: pick(&|m| m.server_cpu),
    }
}

/// CPU seconds (user+sys, from `/proc/PID/stat`) of process `root` and of its live
/// descendants, plus what its reaped children used (`cutime`+`cstime`): the cost of a
/// server whose workers are its children (gunicorn). `None` when `root` is gone.
pub fn tree_cpu_seconds(root: u32) -> Option<f64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // (pid, ppid, utime+stime, cutime+cstime) of every process readable now.
    let mut procs: Vec<(u32, u32, u64, u64)> = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may hold spaces.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        // rest[0] is the state (field 3); ppid is field 4, utime..cstime fields 14..17.
        procs.push((pid, num(1) as u32, num(11) + num(12), num(13) + num(14)));
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    let root_stat = procs.iter().find(|p| p.0 == root)?;
    let ticks: u64 = procs
        .iter()
        .filter(|p| tree.contains(&p.0))
        .map(|p| p.2)
        .sum::<u64>()
        + root_stat.3;
    Some(ticks as f64 / hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_cpu_counts_the_descendants() {
        // A shell that starts a busy child and waits: the shell itself uses almost no
        // CPU, so the time counted is the child's.
        let mut sh = Command::new("sh")
            .args(["-c", "yes > /dev/null & sleep 0.8; kill $!; wait"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let busy = tree_cpu_seconds(sh.id()).unwrap();
        sh.wait().unwrap();
        assert!(busy > 0.2, "counted {busy} s");
        assert!(
            tree_cpu_seconds(sh.id()).is_none(),
            "a reaped process is gone"
        );
    }

    fn sv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reaps_exit_code_and_cpu_time_of_that_child() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // A child that burns CPU for a moment, then exits 3.
        let m = run(
            &sv(&[
                "sh",
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3",
            ]),
            None,
            &Launch::default(),
        )
        .unwrap();
        assert_eq!(m.code, Some(3));
        assert_eq!(m.signal, None);
        assert!(!m.ok());
        assert_eq!(m.status_text(), "exit 3");
        assert!(m.user > 0.01, "user time {}", m.user);
        assert!(m.wall >= m.user * 0.5);
        assert!(m.max_rss > 100 * 1024, "peak rss {}", m.max_rss);
    }

    #[test]
    fn peak_memory_is_this_childs_not_the_largest_so_far() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // First a child that touches ~400 MB, then a small one: the small one's peak must
        // be its own (RUSAGE_CHILDREN would report the 400 MB again).
        let big = run(
            &sv(&[
                "python3",
                "-c",
                "b = bytearray(400_000_000); b[::4096] = b'x' * len(b[::4096])",
            ]),
            None,
            &Launch::default(),
        )
        .unwrap();
        assert!(big.ok(), "{big:?}");
        assert!(big.max_rss > 390_000_000, "big peak {}", big.max_rss);
        let small = run(&sv(&["true"]), None, &Launch::default()).unwrap();
        assert!(small.ok());
        // The child's peak includes this test process's RSS at spawn (Linux keeps it
        // across exec), so compare with the big child rather than an absolute figure.
        assert!(
            small.max_rss + 200_000_000 < big.max_rss,
            "small peak {} vs big {}",
            small.max_rss,
            big.max_rss
        );
    }

    #[test]
    fn signal_is_reported_as_a_crash() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let m = run(
            &sv(&["sh", "-c", "kill -SEGV $$"]),
            None,
            &Launch::default(),
        )
        .unwrap();
        assert_eq!(m.code, None);
        assert_eq!(m.signal, Some(libc::SIGSEGV));
        assert!(m.status_text().contains("signal 11"));
    }

    #[test]
    fn missing_program_is_an_error() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let e = run(&sv(&["/nonexistent/ncwa"]), None, &Launch::default()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn pinning_restricts_the_child() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let m = run(
            &sv(&["sh", "-c", "grep Cpus_allowed_list /proc/self/status"]),
            Some(&log),
            &Launch { pin_cpu: Some(0) },
        )
        .unwrap();
        assert!(m.ok());
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.trim().ends_with("\t0"), "{text}");
    }

    #[test]
    fn medians_and_sums() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        let a = Measure {
            wall: 1.0,
            user: 0.5,
            max_rss: 10,
            code: Some(0),
            ..Default::default()
        };
        let b = Measure {
            wall: 3.0,
            user: 1.5,
            max_rss: 30,
            code: Some(0),
            ..Default::default()
        };
        let c = Measure {
            wall: 2.0,
            user: 1.0,
            max_rss: 20,
            code: Some(1),
            ..Default::default()
        };
        let m = median_measure(&[a.clone(), b.clone(), c]);
        assert_eq!(m.wall, 2.0);
        assert_eq!(m.max_rss, 20);
        assert_eq!(m.code, Some(1));
        let mut s = Measure {
            code: Some(0),
            ..Default::default()
        };
        s.accumulate(&a);
        s.accumulate(&b);
        assert_eq!(s.wall, 4.0);
        assert_eq!(s.max_rss, 30);
        assert!(s.ok());
    }
}
