//! Compatibility check behind docs/netcdf4-engine.md: every numeric variable of every
//! group of each file given, read whole by the engine, by `hdf5-reader` and by
//! libnetcdf, compared byte for byte; plus one hyperslab per variable (the middle half of
//! each dimension) by the engine against libnetcdf.
//!
//! ```text
//! h5check FILE...
//! ```
//! Prints one line per file: variables checked, skipped (with the reason), mismatches.

use nco_h5::index::{H5File, IndexBy};
use nco_h5::read::read_slab;

type Res<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn main() -> Res<()> {
    let mut bad = 0;
    for path in std::env::args().skip(1) {
        match check(&path) {
            Ok((n, skipped, mism)) => {
                bad += mism.len();
                println!(
                    "{path}: {n} variables equal; skipped {}: {}; MISMATCH {}: {}",
                    skipped.len(),
                    skipped.join(", "),
                    mism.len(),
                    mism.join(", ")
                );
            }
            Err(e) => {
                bad += 1;
                println!("{path}: ERROR {e}");
            }
        }
    }
    if bad > 0 {
        std::process::exit(1);
    }
    Ok(())
}

fn elem_size(t: &netcdf::types::NcVariableType) -> Option<usize> {
    use netcdf::types::{FloatType, IntType, NcVariableType as T};
    Some(match t {
        T::Float(FloatType::F32) | T::Int(IntType::I32 | IntType::U32) => 4,
        T::Float(FloatType::F64) | T::Int(IntType::I64 | IntType::U64) => 8,
        T::Int(IntType::I16 | IntType::U16) => 2,
        T::Int(IntType::I8 | IntType::U8) | T::Char => 1,
        _ => return None,
    })
}

/// (group path, variable) pairs of the whole file.
fn walk(g: &netcdf::Group<'_>, prefix: &str, out: &mut Vec<String>) {
    for v in g.variables() {
        out.push(format!("{prefix}{}", v.name()));
    }
    for sub in g.groups() {
        walk(&sub, &format!("{prefix}{}/", sub.name()), out);
    }
}

fn lib_read(f: &netcdf::File, name: &str, start: &[u64], count: &[u64]) -> Res<Vec<u8>> {
    let v = f.variable(name).ok_or("no variable")?;
    let es = elem_size(&v.vartype()).ok_or("type")?;
    let n: u64 = count.iter().product();
    let mut buf = vec![0u8; n as usize * es];
    if n == 0 {
        return Ok(buf);
    }
    if start.is_empty() {
        v.get_raw_values_into(&mut buf, netcdf::Extents::All)?;
    } else {
        let s: Vec<usize> = start.iter().map(|&x| x as usize).collect();
        let c: Vec<usize> = count.iter().map(|&x| x as usize).collect();
        v.get_raw_values_into(&mut buf, (s.as_slice(), c.as_slice()))?;
    }
    Ok(buf)
}

fn check(path: &str) -> Res<(usize, Vec<String>, Vec<String>)> {
    let f = netcdf::open(path)?;
    let mut names = Vec::new();
    walk(&f.root().ok_or("no root group")?, "", &mut names);
    let h5 = H5File::open(path, false)?;
    let rs = hdf5_reader::Hdf5File::open(path)?;
    let file = nco_h5::File::open(path)?;
    let (mut ok, mut skipped, mut mism) = (0, Vec::new(), Vec::new());
    for name in names {
        let ty = f.variable(&name).ok_or("vanished")?.vartype();
        if elem_size(&ty).is_none() {
            skipped.push(format!("{name} ({ty:?})"));
            continue;
        }
        let v = match file.var(&format!("/{name}")) {
            Ok(v) => v,
            Err(e) => {
                skipped.push(format!("{name} ({e})"));
                continue;
            }
        };
        // The pure-Rust description agrees with libhdf5's, chunk addresses included.
        match h5.var(&name, IndexBy::Coord) {
            Ok(c) => {
                let same = c.shape == v.shape
                    && c.elem == v.elem
                    && c.kind == v.kind
                    && c.big_endian == v.big_endian
                    && c.filters == v.filters
                    && (c.fill == v.fill || v.fill.iter().all(|&b| b == 0))
                    && (v.contiguous || (c.chunk == v.chunk && c.locs == v.locs));
                if !same {
                    mism.push(format!(
                        "{name} (storage differs from libhdf5's: {c:?} {v:?})"
                    ));
                }
            }
            Err(e) => mism.push(format!("{name} (libhdf5: {e})")),
        }
        let zero = vec![0u64; v.shape.len()];
        let want = lib_read(&f, &name, &zero, &v.shape)?;
        let mut got = vec![0u8; want.len()];
        if let Err(e) = read_slab(&v, &file, &zero, &v.shape, &mut got) {
            mism.push(format!("{name} ({e})"));
            continue;
        }
        let mut same = got == want;
        // A hyperslab: the middle half of every dimension.
        let start: Vec<u64> = v.shape.iter().map(|&n| n / 4).collect();
        let count: Vec<u64> = v.shape.iter().map(|&n| (n / 2).max(1).min(n)).collect();
        if v.shape.iter().all(|&n| n > 0) {
            let want_s = lib_read(&f, &name, &start, &count)?;
            let mut got_s = vec![0u8; want_s.len()];
            read_slab(&v, &file, &start, &count, &mut got_s)?;
            same &= got_s == want_s;
        }
        // hdf5-reader, whole variable, in native bytes.
        let rs_same = rs
            .dataset(&format!("/{name}"))
            .and_then(|d| d.read_native_bytes())
            .map(|b| b == want);
        match rs_same {
            Ok(true) => {}
            Ok(false) => mism.push(format!("{name} (hdf5-reader)")),
            Err(e) => mism.push(format!("{name} (hdf5-reader: {e})")),
        }
        if same {
            ok += 1;
        } else {
            mism.push(name);
        }
    }
    Ok((ok, skipped, mism))
}
