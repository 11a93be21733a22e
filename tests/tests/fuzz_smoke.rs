//! A short stable-toolchain smoke of the fuzz targets (README "Fuzzing"; the long runs
//! use cargo-fuzz on nightly): every seed of `fuzz/corpus/<target>/`, then
//! `NCO_RS_FUZZ_SMOKE` (default 20 000) inputs per target made from the seeds by a
//! fixed-seed mutator (byte flips, insertions of tokens the parsers care about,
//! splices of two seeds, truncations), each through `nco_tests::fuzz::<target>`.
//! A panic fails the test with the input that caused it.

use std::path::Path;

use nco_tests::fuzz::TARGETS;

/// Tokens the parsers treat specially, for the mutator to insert.
const TOKENS: &[&str] = &[
    ",",
    ",,",
    "-",
    ".",
    "e",
    "e308",
    "-1",
    "0",
    "18446744073709551616",
    "nan",
    "inf",
    "-inf",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "*",
    "+",
    "^",
    "|",
    "\\",
    "\"",
    "'",
    "#",
    "\n",
    " ",
    ":",
    ";",
    "$",
    "@",
    "=",
    "==",
    "<",
    ">=",
    "!=",
    "-d",
    "-v",
    "--dmn=",
    "where",
    "elsewhere",
    "if",
    "else",
    "2000-01-01",
    "T",
    "lat",
    "lon",
    "time",
    "\u{0}",
    "é",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut v = seeds[rng.below(seeds.len())].clone();
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(5) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                v.splice(at..at, t.iter().copied());
            }
            2 => {
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len() + 1);
                v.splice(at..at, other[from..].iter().copied());
            }
            3 => v.truncate(at),
            _ => {
                let n = rng.below(64);
                let t = TOKENS[rng.below(TOKENS.len())].repeat(n);
                v.splice(at..at, t.bytes());
            }
        }
    }
    v
}

#[test]
fn every_fuzz_target_survives_its_seeds_and_mutations() {
    let n: usize = std::env::var("NCO_RS_FUZZ_SMOKE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    for &(name, target) in TARGETS {
        let dir = corpus.join(name);
        let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| std::fs::read(e.expect("entry").path()).expect("read seed"))
            .collect();
        seeds.sort();
        assert!(
            seeds.len() >= 4,
            "{name}: too few seeds in {}",
            dir.display()
        );
        let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ name.len() as u64);
        let inputs = seeds
            .iter()
            .cloned()
            .chain((0..n).map(|_| mutate(&mut rng, &seeds)));
        for input in inputs {
            let r = std::panic::catch_unwind(|| target(&input));
            assert!(
                r.is_ok(),
                "fuzz target {name} panicked on {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }
}
