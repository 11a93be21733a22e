//! The process allocator: the system allocator (glibc malloc, tuned by
//! `nco_core::cli::run_main`), with large buffers (at least [`ADVISED`]) advised for
//! transparent huge pages (`madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of the
//! buffer, which this kernel's default THP mode, `madvise`, requires). A
//! whole-variable array of ncap2 or a whole-file read is then faulted in 2 MiB at a
//! time instead of 4 KiB: measured on the full-size `ipcc_dly_T85.nc`, ncap2's
//! five-statement script takes 0.66 s instead of 1.12 s, its system time 0.58 s
//! instead of 1.10 s (the same effect as glibc's own
//! `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, which only an environment variable set
//! before start-up can turn on).
//!
//! Buffers of at least [`HUGE`] get their own mapping, returned to the system when
//! freed, advice and all. Smaller advised buffers lie in glibc's heap: the advice stays
//! on those whole 2 MiB pages after the buffer is freed, and the small allocations
//! later made there are served from huge pages too (as with glibc's tunable, which
//! advises the whole heap). The heap is kept, not trimmed (`M_TRIM_THRESHOLD` 1 GiB),
//! so the pages are faulted once and reused.

use std::alloc::{GlobalAlloc, Layout, System};

/// Buffers of at least this many bytes get their own mapping (glibc's largest `mmap`
/// threshold, the one `nco_core::cli::run_main` sets).
pub const HUGE: usize = 32 << 20;

/// Buffers of at least this many bytes are advised: 4 MiB, half a 4-D variable of the
/// quarter-size benchmark file. Measured there (bench row 6b, ncap2's five-statement
/// script on 8 MiB variables): 4,400 page faults instead of 8,500 with advice from
/// [`HUGE`] on, 0.058 s wall instead of 0.067 s.
pub const ADVISED: usize = 4 << 20;

/// [`System`] with large buffers advised for transparent huge pages.
pub struct Allocator;

#[cfg(target_os = "linux")]
fn advise(p: *mut u8, size: usize) {
    const TWO_MIB: usize = 2 << 20;
    if size < ADVISED || p.is_null() {
        return;
    }
    let start = (p as usize).next_multiple_of(TWO_MIB);
    let end = (p as usize + size) & !(TWO_MIB - 1);
    if end > start {
        // SAFETY: the range lies inside the allocation just made; MADV_HUGEPAGE
        // changes no contents, only how later page faults are served. A failure
        // (no THP support) leaves ordinary pages.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_p: *mut u8, _size: usize) {}

// SAFETY: every call is forwarded to `System` unchanged; `advise` only adds advice to
// memory the caller now owns.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if new_size > layout.size() {
            advise(p, new_size);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn large_buffers_work_as_usual() {
        // Allocation, zeroing, growth and release through the process allocator.
        let mut v = vec![0u8; super::HUGE + 12345];
        assert!(v.iter().all(|&b| b == 0));
        v[super::HUGE] = 7;
        v.resize(2 * super::HUGE, 1);
        assert_eq!((v[super::HUGE], v[2 * super::HUGE - 1], v[0]), (7, 1, 0));
        // Advised buffers inside glibc's heap, freed and reused by small ones.
        let heap: Vec<Vec<u32>> = (0..4).map(|i| vec![i; super::ADVISED / 4 + 1]).collect();
        assert!(heap
            .iter()
            .enumerate()
            .all(|(i, h)| h.iter().all(|&x| x == i as u32)));
        drop(heap);
        let small: Vec<Vec<u8>> = (0..1000).map(|i| vec![i as u8; 4000]).collect();
        assert!(small
            .iter()
            .enumerate()
            .all(|(i, s)| s.iter().all(|&x| x == i as u8)));
        let w: Vec<u64> = (0..(super::HUGE as u64 / 8)).collect();
        assert_eq!(w[w.len() - 1], super::HUGE as u64 / 8 - 1);
    }
}
