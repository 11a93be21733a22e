//! Seed corpus of the chunk-decoder fuzz target: every stored chunk (up to 64 KiB
//! stored, 65535 elements) of every variable of the files given, in the fuzz input
//! format of `nco_h5::fuzzing`, written to DIR as `<file>-<variable>-<chunk>`; one
//! chunk of each pipeline and element size is enough, so at most `PER` (default 2)
//! chunks of each kind are kept.
//!
//! ```text
//! fuzz_seeds DIR [PER] FILE...
//! ```

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

type Res<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args.first().ok_or("usage: fuzz_seeds DIR [PER] FILE...")?;
    let (per, files) = match args.get(1).and_then(|a| a.parse::<usize>().ok()) {
        Some(n) => (n, &args[2..]),
        None => (2, &args[1..]),
    };
    let mut kinds: HashMap<String, usize> = HashMap::new();
    let mut written = 0;
    for path in files {
        let f = nco_h5::File::open(path)?;
        let stem = std::path::Path::new(path)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("file")
            .to_string();
        for name in dataset_names(path)? {
            let Ok(v) = f.var(&name) else { continue };
            let kind = format!("{:?} {} {}", v.filters, v.elem, v.big_endian);
            for (i, l) in v.locs.iter().enumerate() {
                if !l.allocated() || l.size > 1 << 16 || v.contiguous {
                    continue;
                }
                let n = kinds.entry(kind.clone()).or_default();
                if *n >= per {
                    break;
                }
                let mut stored = vec![0u8; l.size as usize];
                f.handle().read_exact_at(&mut stored, l.addr)?;
                let Some(input) = nco_h5::fuzzing::encode(&v, l.mask, &stored, i % 2 == 0) else {
                    continue;
                };
                let out = format!(
                    "{dir}/{stem}-{}-{i}",
                    name.trim_start_matches('/').replace('/', "_")
                );
                std::fs::write(out, input)?;
                *n += 1;
                written += 1;
            }
        }
    }
    println!("{written} seeds in {dir}");
    Ok(())
}

/// The dataset paths of a file, through hdf5-reader (groups walked).
fn dataset_names(path: &str) -> Res<Vec<String>> {
    let f = hdf5_reader::Hdf5File::open(path)?;
    let mut out = Vec::new();
    let mut todo = vec![f.root_group()?];
    while let Some(g) = todo.pop() {
        for d in g.datasets()? {
            out.push(format!("{}/{}", g.name().trim_end_matches('/'), d.name()));
        }
        todo.extend(g.groups()?);
    }
    Ok(out)
}
