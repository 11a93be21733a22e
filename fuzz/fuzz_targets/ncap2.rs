//! Fuzz target `ncap2` (body: `nco_tests::fuzz::ncap2`; README "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nco_tests::fuzz::ncap2(data));
