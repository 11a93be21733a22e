//! Any byte string, read as a storage description and a stored chunk
//! (`nco_h5::fuzzing`), goes through the engine's whole chunk decoding path: inflate,
//! unshuffle, Fletcher-32 checks, byte order, into scratch or the caller's buffer. It
//! must return, never panic or touch memory out of bounds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nco_h5::fuzzing::run(data);
});
