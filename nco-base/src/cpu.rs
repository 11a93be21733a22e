//! Processor features chosen at run time. The binaries are built for the baseline
//! x86-64 (SSE2); the hot loops (decoding, reductions, packing) are compiled a second
//! time for AVX2 and [`with_avx2`] picks that copy when the processor has it.

/// Run `f` compiled for AVX2 when the processor has it (checked once per call, a few
/// nanoseconds), else for the baseline x86-64 (SSE2) the binaries are built for. The
/// kernels `f` calls are `#[inline(always)]` so that they are compiled into the AVX2
/// body: eight single-precision lanes instead of four, and vector conversions SSE2 lacks.
/// Results are the same bit for bit (IEEE operations; Rust never fuses a multiply
/// and an add on its own).
#[inline(always)]
pub fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn run<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        // SAFETY: the processor supports AVX2 (checked just above).
        return unsafe { run(f) };
    }
    f()
}
