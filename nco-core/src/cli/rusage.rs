//! Resource usage of this process (`getrusage(RUSAGE_SELF)`) for the `-D` report. (The
//! benchmark measures its children itself, with `wait4`.)

use std::time::{Duration, Instant};

/// CPU times and peak resident memory of a process.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// User CPU time in seconds.
    pub user: f64,
    /// System CPU time in seconds.
    pub sys: f64,
    /// Peak resident set size in bytes (Linux reports KiB; converted here).
    pub max_rss: u64,
}

fn from_raw(r: &libc::rusage) -> Usage {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Usage {
        user: tv(r.ru_utime),
        sys: tv(r.ru_stime),
        max_rss: r.ru_maxrss as u64 * 1024,
    }
}

/// Usage of the calling process so far.
pub fn self_usage() -> Usage {
    // SAFETY: getrusage fills the zeroed struct we own.
    unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut r);
        from_raw(&r)
    }
}

/// One-line report: wall, user, system seconds and peak memory since `start`.
pub fn report(start: Instant) -> String {
    let u = self_usage();
    format_usage(start.elapsed(), &u)
}

/// Format a usage line (`wall 1.234 s, user 0.9 s, system 0.3 s, peak memory 12.3 MB`).
pub fn format_usage(wall: Duration, u: &Usage) -> String {
    format!(
        "rusage: wall {:.3} s, user {:.3} s, system {:.3} s, peak memory {:.1} MB",
        wall.as_secs_f64(),
        u.user,
        u.sys,
        u.max_rss as f64 / 1e6
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_usage_is_positive() {
        let u = self_usage();
        assert!(u.max_rss > 0);
        assert!(report(Instant::now()).contains("peak memory"));
    }
}
