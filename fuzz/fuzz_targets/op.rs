//! Fuzz target `op` (body: `nco_tests::fuzz::op`; README "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nco_tests::fuzz::op(data));
