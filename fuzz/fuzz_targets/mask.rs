//! Fuzz target `mask` (body: `nco_tests::fuzz::mask`; README "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nco_tests::fuzz::mask(data));
