//! Mutation fuzzer of the classic-format header parser and reader (see fuzz/README.md).
//!
//! Usage: `fuzz_header [ITERATIONS] [SEED]`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use nco_core::classic::Reader;
use nco_core::dataset::full_selection;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut b = seeds[rng.below(seeds.len())].clone();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        if b.is_empty() {
            break;
        }
        match rng.below(6) {
            0 => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            2 | 3 => {
                let interesting: [u64; 9] = [
                    0,
                    1,
                    2,
                    4,
                    0x7fff_ffff,
                    0xffff_ffff,
                    0x8000_0000,
                    b.len() as u64,
                    u64::MAX,
                ];
                let v = interesting[rng.below(interesting.len())];
                let wide = rng.below(2) == 0;
                let w = if wide { 8 } else { 4 };
                if b.len() >= w {
                    let i = rng.below(b.len() / 4) * 4;
                    let i = i.min(b.len() - w);
                    if wide {
                        b[i..i + 8].copy_from_slice(&v.to_be_bytes());
                    } else {
                        b[i..i + 4].copy_from_slice(&(v as u32).to_be_bytes());
                    }
                }
            }
            4 => {
                let n = rng.below(b.len() + 1);
                b.truncate(n);
            }
            _ => {
                let i = rng.below(b.len());
                let j = rng.below(b.len());
                let n = rng.below(64).min(b.len() - i.max(j));
                let chunk = b[i..i + n].to_vec();
                b.splice(j..j, chunk);
            }
        }
    }
    b
}

fn exercise(bytes: Vec<u8>) {
    let Ok(r) = Reader::from_bytes("fuzz", bytes) else {
        return;
    };
    let meta = r.meta().clone();
    for v in 0..meta.vars.len() {
        if meta.var_len(&meta.vars[v]) > 1 << 20 {
            continue;
        }
        let sel = full_selection(&meta, v);
        let _ = r.read(v, &sel);
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iterations: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus");
    let mut seeds = Vec::new();
    for e in std::fs::read_dir(dir).expect("fuzz/corpus exists") {
        let p = e.expect("corpus entry").path();
        seeds.push(std::fs::read(&p).expect("readable seed"));
    }
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed | 1);
    let mut parsed = 0u64;
    let mut crashes = 0u64;
    for i in 0..iterations {
        let input = mutate(&mut rng, &seeds);
        let keep = input.clone();
        if nco_core::classic::header::parse(&input, input.len() as u64, "fuzz").is_ok() {
            parsed += 1;
        }
        if catch_unwind(AssertUnwindSafe(|| exercise(input))).is_err() {
            crashes += 1;
            let path = format!("{}/fuzz/crash-{i}.nc", env!("CARGO_MANIFEST_DIR"));
            let _ = std::fs::write(&path, &keep);
            eprintln!("panic on input {i}, saved to {path}");
        }
    }
    println!("{iterations} inputs, {parsed} parsed as valid headers, {crashes} crashes");
    if crashes > 0 {
        std::process::exit(1);
    }
}
