//! Fuzz target `stations` (body: `nco_tests::fuzz::stations`; README "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nco_tests::fuzz::stations(data));
