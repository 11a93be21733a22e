//! Fuzz target `var` (body: `nco_tests::fuzz::var`; README "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nco_tests::fuzz::var(data));
