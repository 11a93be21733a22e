//! The process allocator: the system allocator (glibc malloc, tuned by
//! `nco_core::cli::run_main`), with the buffers large enough to get their own mapping
//! (at least [`HUGE`], glibc's `mmap` threshold as the operators set it) advised for
//! transparent huge pages (`madvise(MADV_HUGEPAGE)`, which this kernel's default THP
//! mode, `madvise`, requires). A whole-variable array of ncap2 or a whole-file read is
//! then faulted in 2 MiB at a time instead of 4 KiB: measured on the full-size
//! `ipcc_dly_T85.nc`, ncap2's five-statement script takes 0.66 s instead of 1.12 s,
//! its system time 0.58 s instead of 1.10 s (the same effect as glibc's own
//! `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, which only an environment variable set
//! before start-up can turn on).
//!
//! Only own mappings are advised: they are returned to the system when freed, so the
//! advice never outlives the buffer or spreads to small allocations.

use std::alloc::{GlobalAlloc, Layout, System};

/// Buffers of at least this many bytes are advised (glibc's largest `mmap`
/// threshold, the one `nco_core::cli::run_main` sets).
pub const HUGE: usize = 32 << 20;

/// [`System`] with large buffers advised for transparent huge pages.
pub struct Allocator;

#[cfg(target_os = "linux")]
fn advise(p: *mut u8, size: usize) {
    const TWO_MIB: usize = 2 << 20;
    if size < HUGE || p.is_null() {
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
        let w: Vec<u64> = (0..(super::HUGE as u64 / 8)).collect();
        assert_eq!(w[w.len() - 1], super::HUGE as u64 / 8 - 1);
    }
}
