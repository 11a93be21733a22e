//! The fuzz target's seed corpus (`fuzz/corpus/chunk_decode`, real chunks of our
//! fixtures) replayed through the chunk decoder on every `cargo test`, each seed also
//! with deterministic damage (bytes flipped, cut short, description bytes changed), so
//! the decoding path is exercised on bad input without nightly Rust. The coverage-
//! guided run (a million inputs and more) is `cargo fuzz`: docs/netcdf4-engine.md.

use nco_h5::fuzzing::{case, run};

fn seeds() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/chunk_decode");
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("the seed corpus is in the repository")
        .map(|e| std::fs::read(e.expect("corpus entry").path()).expect("read a seed"))
        .collect();
    out.sort();
    out
}

#[test]
fn seeds_decode_and_damage_is_an_error_not_a_crash() {
    let seeds = seeds();
    assert!(seeds.len() >= 10, "the corpus has {} seeds", seeds.len());
    let mut decoded = 0;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for s in &seeds {
        // Every seed is a real chunk: it decodes.
        let c = case(s).expect("a seed has a description");
        let mut stored = c.stored.clone();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut d = libdeflater::Decompressor::new();
        if nco_h5::read::decode_stored(&c.var, c.mask, &mut stored, &mut d, &mut a, &mut b, None)
            .is_ok()
        {
            decoded += 1;
        }
        run(s);
        for _ in 0..300 {
            let mut m = s.clone();
            match next() % 4 {
                0 => {
                    let i = (next() as usize) % m.len();
                    m[i] ^= 1 << (next() % 8);
                }
                1 => {
                    let n = (next() as usize) % m.len();
                    m.truncate(n);
                }
                2 => {
                    let i = (next() as usize) % 5.min(m.len());
                    m[i] = next() as u8;
                }
                _ => {
                    let i = (next() as usize) % m.len();
                    let extra = (next() % 64) as usize;
                    m.splice(i..i, std::iter::repeat_n(next() as u8, extra));
                }
            }
            run(&m);
        }
    }
    assert_eq!(decoded, seeds.len(), "every seed decodes");
}
