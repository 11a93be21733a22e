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
    let p = map_shared(&f, len).context("mmap for mincore")?;
    // SAFETY: we never dereference the mapping, ask mincore about exactly the mapped
    // range into a vector of one byte per page, and unmap it.
    unsafe {
        let rc = libc::mincore(p, len, vec.as_mut_ptr().cast());
        libc::munmap(p, len);
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("mincore");
        }
    }
    let resident = vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
    Ok((resident * page as u64).min(len as u64))
}

/// Size of a PMD-mapped folio (a transparent huge page) on x86-64 and arm64 (4 KiB pages).
const HUGE: usize = 2 << 20;

/// Fraction (0 to 1) of `path`'s 2 MiB-aligned extents that the page cache holds as
/// 2 MiB folios, or `None` when the kernel maps no file huge pages (transparent huge
/// pages off, or a kernel without large folios in the page cache). Maps the file with
/// `MADV_HUGEPAGE`, touches one byte per 2 MiB (reading uncached parts from disk) and
/// reads this mapping's `FilePmdMapped` in `/proc/self/smaps`.
///
/// Why the bench cares: a file still cached as it was written holds small folios, a
/// file read from disk holds 2 MiB ones (readahead of a large file), and a memory map
/// costs one page-table entry per folio page on the first and one per 2 MiB on the
/// second. Errors: the file cannot be opened or mapped.
pub fn huge_folio_fraction(path: &Path) -> Result<Option<f64>> {
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.is_empty() || thp.contains("[never]") {
        return Ok(None);
    }
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = f.metadata()?.len() as usize;
    let extents = len / HUGE;
    if extents == 0 {
        return Ok(None);
    }
    let p = map_shared(&f, len).context("mmap")?;
    // SAFETY: a read-only mapping of a file we keep open; we only read bytes inside its
    // length, then unmap it. Nothing else holds the pointer.
    let pmd_kb = unsafe {
        libc::madvise(p, len, libc::MADV_HUGEPAGE);
        let base = p as *const u8;
        let mut sum = 0u8;
        for i in 0..extents {
            sum = sum.wrapping_add(std::ptr::read_volatile(base.add(i * HUGE)));
        }
        std::hint::black_box(sum);
        let kb = file_pmd_mapped_kb(p as usize);
        libc::munmap(p, len);
        kb
    };
    Ok(pmd_kb.map(|kb| (kb as f64 * 1024.0 / (extents * HUGE) as f64).min(1.0)))
}

/// `FilePmdMapped` (kB) of this process's mapping starting at `start`.
fn file_pmd_mapped_kb(start: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let head = format!("{start:x}-");
    let mut inside = false;
    for line in smaps.lines() {
        // A mapping's header line starts with its range; attribute lines with "Name:".
        let is_header = line
            .split_whitespace()
            .next()
            .is_some_and(|w| w.contains('-') && !w.ends_with(':'));
        if is_header {
            inside = line.starts_with(&head);
        } else if inside {
            if let Some(rest) = line.strip_prefix("FilePmdMapped:") {
                return rest.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
    }
    None
}

/// Bring `path` into the page cache as a read from disk leaves it: when less than
/// half of it is cached in 2 MiB folios ([`huge_folio_fraction`]; typically a file
/// still cached as the generator wrote it), evict it and read it back sequentially.
/// Returns the fractions before and after (`None` when the kernel maps no file huge
/// pages; nothing is done then).
///
/// Errors: the file cannot be read.
pub fn settle(path: &Path) -> Result<Option<(f64, f64)>> {
    let Some(before) = huge_folio_fraction(path)? else {
        return Ok(None);
    };
    if before >= 0.5 {
        return Ok(Some((before, before)));
    }
    evict(path)?;
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = std::io::Read::read(&mut f, &mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
    }
    let after = huge_folio_fraction(path)?.unwrap_or(0.0);
    Ok(Some((before, after)))
}

/// A read-only shared mapping of the first `len` bytes of `f` (unmap it with
/// `libc::munmap(p, len)`).
fn map_shared(f: &File, len: usize) -> std::io::Result<*mut libc::c_void> {
    // SAFETY: a new read-only mapping at an address the kernel chooses; it aliases
    // nothing of ours, and the caller unmaps it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p)
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

    #[test]
    fn settle_leaves_a_read_file_in_large_folios_where_the_kernel_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.bin");
        let mut f = File::create(&p).unwrap();
        // Written in small pieces: cached (if at all) in small folios.
        for _ in 0..(16 << 20) / 4096 {
            f.write_all(&[3u8; 4096]).unwrap();
        }
        drop(f);
        let Some((before, after)) = settle(&p).unwrap() else {
            return; // no file huge pages on this kernel: nothing to settle
        };
        assert!((0.0..=1.0).contains(&before) && (0.0..=1.0).contains(&after));
        if before >= 0.5 {
            assert_eq!(before, after, "a settled file is left alone");
        }
        // A settled file is not evicted again.
        let again = settle(&p).unwrap().unwrap();
        if after >= 0.5 {
            assert_eq!(again.0, again.1);
        }
        // The bytes are intact.
        let mut buf = Vec::new();
        File::open(&p).unwrap().read_to_end(&mut buf).unwrap();
        assert!(buf.len() == 16 << 20 && buf.iter().all(|&b| b == 3));
    }

    #[test]
    fn smaps_lookup_finds_no_mapping_at_an_unmapped_address() {
        assert_eq!(file_pmd_mapped_kb(8), None);
    }
}
