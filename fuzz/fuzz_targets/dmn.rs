//! Fuzz target `dmn` (body: `nco_tests::fuzz::dmn`; README "Fuzzing").
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nco_tests::fuzz::dmn(data));
