//! Page-cache control without root: evict one file's pages with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` after `fdatasync` (dirty pages would stay), and
//! measure residency with `mincore` on an untouched mapping.
//!
//! "Cold" here means cold in this kernel's page cache only: a hypervisor or a disk
//! controller may still cache below us. Reports say so and show the child's block input.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::{Context, Result};

/// Drop `path`'s clean pages from the page cache (following symbolic links).
/// Returns the bytes still resident afterwards (0 when eviction worked).
pub fn evict(path: &Path) -> Result<u64> {
    for attempt in 0..2 {
        let f = File::open(path)
            .with_context(|| format!("cannot open {} to evict it", path.display()))?;
        // SAFETY: plain syscalls on a file descriptor we own for the duration of the calls.
        unsafe {
            libc::fdatasync(f.as_raw_fd());
            libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        let left = resident_bytes(path).unwrap_or(0);
        if left == 0 || attempt == 1 {
            return Ok(left);
        }
    }
    Ok(0)
}

/// Bytes of `path` resident in the page cache (mincore on a mapping never touched).
pub fn resident_bytes(path: &Path) -> Result<u64> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = f.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: we map the file read-only, never dereference the mapping, ask mincore about
    // exactly the mapped range into a vector of one byte per page, and unmap it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error()).context("mmap for mincore");
        }
        let rc = libc::mincore(p, len, vec.as_mut_ptr().cast());
        libc::munmap(p, len);
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("mincore");
        }
    }
    let resident = vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
    Ok((resident * page as u64).min(len as u64))
}

/// Number of CPUs this process may run on.
pub fn cpus_allowed() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn evict_drops_a_file_we_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 4 << 20]).unwrap();
        drop(f);
        let mut buf = Vec::new();
        File::open(&p).unwrap().read_to_end(&mut buf).unwrap();
        assert_eq!(buf.len(), 4 << 20);
        assert!(resident_bytes(&p).unwrap() > 0, "just read, must be cached");
        let left = evict(&p).unwrap();
        // Some file systems (tmpfs) cannot drop pages; there the residency stays full.
        let fs_can_evict = left < (4 << 20);
        if fs_can_evict {
            assert_eq!(left, 0);
        }
    }
}
