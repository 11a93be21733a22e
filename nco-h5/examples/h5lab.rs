//! Measurements behind docs/netcdf4-engine.md: the engine's reads and writes against
//! libnetcdf (the netcdf crate) and against the pure-Rust `hdf5-reader` crate.
//!
//! ```text
//! h5lab read  FILE lib|ours|rs|rs-deflate THREADS [REPS]  every variable whole
//! h5lab slab  FILE lib|ours|rs            THREADS [REPS]  a hyperslab of every 4-D variable
//! h5lab point FILE lib|ours|rs                    [REPS]  one value of every 4-D variable
//! h5lab floor FILE                        THREADS [REPS]  inflate every chunk, nothing else
//! h5lab index FILE coord|index                    [REPS]  build every variable's chunk index
//! h5lab write IN OUT lib|direct           THREADS [REPS]  copy IN to a new netCDF-4 OUT
//! ```
//! Each prints the median wall time of REPS runs (default 5) and a checksum of the values
//! read (equal checksums: equal bytes).

use std::time::Instant;

use nco_h5::index::{H5File, IndexBy};
use nco_h5::read::{inflate_floor, read_slab};
use nco_h5::VarIndex;

type Res<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The engine's view of a file, with chunk addresses from the Rust walk (`by` None) or
/// from libhdf5.
struct Eng {
    file: nco_h5::File,
    h5: Option<(H5File, IndexBy)>,
}

impl Eng {
    fn open(path: &str, by: Option<IndexBy>) -> Res<Eng> {
        let h5 = match by {
            Some(b) => Some((H5File::open(path, false)?, b)),
            None => None,
        };
        Ok(Eng {
            file: nco_h5::File::open(path)?,
            h5,
        })
    }

    fn var(&self, name: &str) -> Res<VarIndex> {
        let mut v = self.file.var(&format!("/{name}"))?;
        if let Some((h5, by)) = &self.h5 {
            if !v.contiguous {
                v.locs = h5.var(name, *by)?.locs;
            }
        }
        Ok(v)
    }
}

fn main() -> Res<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| a.get(i).map(String::as_str).unwrap_or("");
    let num = |i: usize, d: usize| a.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match arg(0) {
        "read" | "slab" | "point" => {
            let (file, mode) = (arg(1), arg(2));
            let (threads, reps) = if arg(0) == "point" {
                (1, num(3, 5))
            } else {
                (num(3, 1), num(4, 5))
            };
            let what = arg(0).to_string();
            run(threads, reps, || read(&what, file, mode))
        }
        "floor" => {
            let file = arg(1).to_string();
            run(num(2, 1), num(3, 5), || floor(&file))
        }
        "index" => {
            let by = match arg(2) {
                "index" => Some(IndexBy::Index),
                "rust" => None,
                _ => Some(IndexBy::Coord),
            };
            let file = arg(1).to_string();
            run(1, num(3, 5), || index(&file, by))
        }
        "write" => {
            let (inp, out, mode) = (arg(1), arg(2), arg(3));
            run(num(4, 1), num(5, 3), || write(inp, out, mode))
        }
        "deflate" => {
            let file = arg(1).to_string();
            let level = num(3, 1) as i32;
            run(num(2, 1), 3, || deflate_all(&file, level))
        }
        "locs" => {
            // The first allocated chunk of a variable: offset and stored size.
            let v = Eng::open(arg(1), None)?.var(arg(2))?;
            let l = v.locs.iter().find(|l| l.allocated()).ok_or("no chunk")?;
            println!("{} {}", l.addr, l.size);
            Ok(())
        }
        "h5cmp" => {
            // Plain HDF5 datasets: the engine (both indexes) against hdf5-reader's read.
            let path = arg(1);
            let h5 = H5File::open(path, false)?;
            let eng = Eng::open(path, None)?;
            let rs = hdf5_reader::Hdf5File::open(path)?;
            for name in &a[2..] {
                let v = eng.var(name)?;
                let c = h5.var(name, IndexBy::Coord).map(|c| c.locs == v.locs);
                let mut buf = vec![0u8; v.shape.iter().product::<u64>() as usize * v.elem];
                read_slab(&v, &eng.file, &vec![0; v.shape.len()], &v.shape, &mut buf)?;
                let want = rs.dataset(&format!("/{name}"))?.read_native_bytes()?;
                println!(
                    "{name}: filters {:?}, same as hdf5-reader {}, same chunks as libhdf5 {:?}",
                    v.filters,
                    buf == want,
                    c
                );
            }
            Ok(())
        }
        "unshuffle" => {
            let src: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + i / 3) as u8).collect();
            let mut dst = vec![0u8; src.len()];
            let t = Instant::now();
            for _ in 0..1000 {
                nco_h5::filters::unshuffle(&src, 4, &mut dst);
            }
            let s = t.elapsed().as_secs_f64();
            println!(
                "unshuffle 4-byte, 1 MiB chunks: {:.2} GB/s",
                1000.0 * src.len() as f64 / s / 1e9
            );
            Ok(())
        }
        _ => Err("usage: see the top of examples/h5lab.rs".into()),
    }
}

/// Run `f` `reps` times on a pool of `threads`, print the median time and the checksum.
fn run(threads: usize, reps: usize, f: impl Fn() -> Res<u64> + Send + Sync) -> Res<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let mut times = Vec::new();
    let mut cpus = Vec::new();
    let mut sum = 0;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let c = cpu_seconds();
        sum = pool.install(|| {
            nco_h5::index::quiet();
            f()
        })?;
        times.push(t.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - c);
    }
    cpus.sort_by(f64::total_cmp);
    times.sort_by(f64::total_cmp);
    let med = times[times.len() / 2];
    println!(
        "median {:.4} s (min {:.4}, max {:.4}) cpu {:.4} s checksum {sum:016x}",
        med,
        times[0],
        times[times.len() - 1],
        cpus[cpus.len() / 2]
    );
    Ok(())
}

/// User plus system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// A cheap checksum of `bytes` folded into `h` (8 bytes at a time, so that it costs
/// little beside the reads it checks).
fn fnv(h: &mut u64, bytes: &[u8]) {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    for w in words {
        let x = u64::from_le_bytes(w.try_into().unwrap());
        *h = (*h ^ x).wrapping_mul(0x100_0000_01b3);
    }
    for &b in tail {
        *h = (*h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
}

fn elem_size(t: &netcdf::types::NcVariableType) -> usize {
    use netcdf::types::{FloatType, IntType, NcVariableType as T};
    match t {
        T::Float(FloatType::F32) | T::Int(IntType::I32 | IntType::U32) => 4,
        T::Float(FloatType::F64) | T::Int(IntType::I64 | IntType::U64) => 8,
        T::Int(IntType::I16 | IntType::U16) => 2,
        _ => 1,
    }
}

/// The request for variable of shape `shape`: whole, a hyperslab (4-D only) or one point.
fn request(what: &str, shape: &[u64]) -> Option<(Vec<u64>, Vec<u64>)> {
    match what {
        "read" => Some((vec![0; shape.len()], shape.to_vec())),
        _ if shape.len() != 4 => None,
        // time 2..6, lev 4..12, lat 10..50, lon 20..100 (scale 0.25: 8, 32, 64, 128).
        "slab" => Some((vec![2, 4, 10, 20], vec![4, 8, 40, 80])),
        _ => Some((vec![5, 17, 33, 77], vec![1, 1, 1, 1])),
    }
}

fn read(what: &str, path: &str, mode: &str) -> Res<u64> {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    match mode {
        "lib" => {
            let f = netcdf::open(path)?;
            for v in f.variables() {
                let shape: Vec<u64> = v.dimensions().iter().map(|d| d.len() as u64).collect();
                let Some((start, count)) = request(what, &shape) else {
                    continue;
                };
                let n: u64 = count.iter().product();
                let mut buf = vec![0u8; n as usize * elem_size(&v.vartype())];
                let start: Vec<usize> = start.iter().map(|&x| x as usize).collect();
                let count: Vec<usize> = count.iter().map(|&x| x as usize).collect();
                if shape.is_empty() {
                    v.get_raw_values_into(&mut buf, netcdf::Extents::All)?;
                } else {
                    v.get_raw_values_into(&mut buf, (start.as_slice(), count.as_slice()))?;
                }
                fnv(&mut h, &buf);
            }
        }
        "ours" | "ours-rs" => {
            let by = if mode == "ours" {
                Some(IndexBy::Coord)
            } else {
                None
            };
            let names = var_names(path)?;
            let h5 = Eng::open(path, by)?;
            for name in names {
                // Index only what the request needs: a point or a slab needs the
                // variable's index too (built once per variable).
                let v = h5.var(&name)?;
                let Some((start, count)) = request(what, &v.shape) else {
                    continue;
                };
                let n: u64 = count.iter().product();
                let mut buf = vec![0u8; n as usize * v.elem];
                read_slab(&v, &h5.file, &start, &count, &mut buf)?;
                fnv(&mut h, &buf);
            }
        }
        "rs" | "rs-deflate" => {
            let opts = hdf5_reader::OpenOptions::default();
            let opts = if mode == "rs-deflate" {
                let mut reg = hdf5_reader::FilterRegistry::new();
                reg.register(
                    1,
                    Box::new(|_f, src: &[u8], _es| {
                        let mut d = libdeflater::Decompressor::new();
                        // The decoded size is not passed to filters: grow until it fits.
                        let mut out = vec![0u8; src.len() * 4 + 1024];
                        loop {
                            match d.zlib_decompress(src, &mut out) {
                                Ok(n) => {
                                    out.truncate(n);
                                    return Ok(out);
                                }
                                Err(libdeflater::DecompressionError::InsufficientSpace) => {
                                    let l = out.len() * 2;
                                    out.resize(l, 0);
                                }
                                Err(e) => {
                                    return Err(hdf5_reader::error::Error::InvalidData(format!(
                                        "{e:?}"
                                    )))
                                }
                            }
                        }
                    }),
                );
                opts.with_filter_registry(reg)
            } else {
                opts
            };
            let names = var_names(path)?;
            let f = hdf5_reader::Hdf5File::open_with_options(path, opts)?;
            for name in names {
                let ds = f.dataset(&name)?;
                let shape = ds.shape().to_vec();
                let Some((start, count)) = request(what, &shape) else {
                    continue;
                };
                let bytes: Vec<u8> = match ds.raw_element_size()? {
                    4 => {
                        let x: Vec<f32> = if what == "read" {
                            ds.read_array_parallel::<f32>()?.into_raw_vec_and_offset().0
                        } else {
                            let sel = slice(&start, &count);
                            ds.read_slice_parallel::<f32>(&sel)?
                                .into_raw_vec_and_offset()
                                .0
                        };
                        x.iter().flat_map(|v| v.to_ne_bytes()).collect()
                    }
                    _ => {
                        let x: Vec<f64> = if what == "read" {
                            ds.read_array_parallel::<f64>()?.into_raw_vec_and_offset().0
                        } else {
                            let sel = slice(&start, &count);
                            ds.read_slice_parallel::<f64>(&sel)?
                                .into_raw_vec_and_offset()
                                .0
                        };
                        x.iter().flat_map(|v| v.to_ne_bytes()).collect()
                    }
                };
                fnv(&mut h, &bytes);
            }
        }
        _ => return Err(format!("unknown mode {mode}").into()),
    }
    Ok(h)
}

fn slice(start: &[u64], count: &[u64]) -> hdf5_reader::SliceInfo {
    hdf5_reader::SliceInfo {
        selections: start
            .iter()
            .zip(count)
            .map(|(&s, &c)| hdf5_reader::SliceInfoElem::Slice {
                start: s,
                end: s + c,
                step: 1,
            })
            .collect(),
    }
}

/// The root group's variable names, in file order, through libnetcdf.
fn var_names(path: &str) -> Res<Vec<String>> {
    let f = netcdf::open(path)?;
    Ok(f.variables().map(|v| v.name()).collect())
}

fn floor(path: &str) -> Res<u64> {
    let names = var_names(path)?;
    let h5 = Eng::open(path, None)?;
    let vars: Vec<VarIndex> = names.iter().map(|n| h5.var(n)).collect::<Result<_, _>>()?;
    let mut n = 0;
    for v in &vars {
        n += inflate_floor(v, &h5.file)?;
    }
    Ok(n)
}

fn index(path: &str, by: Option<IndexBy>) -> Res<u64> {
    let names = var_names(path)?;
    let h5 = Eng::open(path, by)?;
    let mut n = 0;
    for name in names {
        n += h5.var(&name)?.locs.len() as u64;
    }
    Ok(n)
}

/// Copy every variable of `inp` (read by our engine) to a new netCDF-4 file `out` with
/// the input's chunking, deflate level 1 and shuffle: through libnetcdf, or with
/// definitions by libnetcdf and data by direct chunk writes.
fn write(inp: &str, out: &str, mode: &str) -> Res<u64> {
    let src = netcdf::open(inp)?;
    let h5 = Eng::open(inp, None)?;
    let mut dst = netcdf::create_with(out, netcdf::Options::NETCDF4)?;
    for d in src.dimensions() {
        if d.is_unlimited() {
            dst.add_unlimited_dimension(&d.name())?;
        } else {
            dst.add_dimension(&d.name(), d.len())?;
        }
    }
    let mut vars = Vec::new();
    for v in src.variables() {
        let dims: Vec<String> = v.dimensions().iter().map(|d| d.name()).collect();
        let dims: Vec<&str> = dims.iter().map(String::as_str).collect();
        let mut nv = dst.add_variable_with_type(&v.name(), &dims, &v.vartype())?;
        let chunked = v.chunking()?;
        if let Some(ch) = &chunked {
            nv.set_chunking(ch)?;
            nv.set_compression(1, true)?;
        }
        // SAFETY: every variable is written in full below.
        unsafe { nv.set_nofill()? };
        vars.push((v.name(), chunked.is_some()));
    }
    dst.enddef()?;
    let data: Vec<(String, VarIndex, Vec<u8>)> = vars
        .iter()
        .map(|(name, _)| {
            let v = h5.var(name)?;
            let mut buf = vec![0u8; v.shape.iter().product::<u64>() as usize * v.elem];
            read_slab(&v, &h5.file, &vec![0; v.shape.len()], &v.shape, &mut buf)?;
            Ok((name.clone(), v, buf))
        })
        .collect::<Res<_>>()?;
    let t = Instant::now();
    let c = cpu_seconds();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    if mode == "lib" {
        for (name, v, buf) in &data {
            let mut nv = dst.variable_mut(name).ok_or("vanished")?;
            let ext = if v.shape.is_empty() {
                netcdf::Extents::All
            } else {
                let z = vec![0usize; v.shape.len()];
                let c: Vec<usize> = v.shape.iter().map(|&x| x as usize).collect();
                (z.as_slice(), c.as_slice()).try_into()?
            };
            if v.elem == 4 {
                let x: Vec<f32> = buf
                    .chunks_exact(4)
                    .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
                    .collect();
                nv.put_values(&x, ext)?;
            } else {
                let x: Vec<f64> = buf
                    .chunks_exact(8)
                    .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
                    .collect();
                nv.put_values(&x, ext)?;
            }
            fnv(&mut h, buf);
        }
        dst.close()?;
    } else {
        // Variables not chunked (contiguous, scalars) go through libnetcdf before the
        // file is closed and reopened through libhdf5 for the chunked ones.
        for ((name, v, buf), (_, chunked)) in data.iter().zip(&vars) {
            if *chunked {
                continue;
            }
            let mut nv = dst.variable_mut(name).ok_or("vanished")?;
            if v.elem == 4 {
                let x: Vec<f32> = buf
                    .chunks_exact(4)
                    .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
                    .collect();
                nv.put_values(&x, netcdf::Extents::All)?;
            } else {
                let x: Vec<f64> = buf
                    .chunks_exact(8)
                    .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
                    .collect();
                nv.put_values(&x, netcdf::Extents::All)?;
            }
        }
        dst.close()?;
        let w = H5File::open(out, true)?;
        for ((name, _, buf), (_, chunked)) in data.iter().zip(&vars) {
            if !*chunked {
                continue;
            }
            w.write_rows(name, 0, buf)?;
            fnv(&mut h, buf);
        }
        drop(w);
    }
    eprintln!(
        "write phase {:.4} s, cpu {:.4} s",
        t.elapsed().as_secs_f64(),
        cpu_seconds() - c
    );
    Ok(h)
}

/// Shuffle and deflate (at `level`) every chunk of every chunked variable, decoded
/// beforehand: the compression floor of a netCDF-4 write. Returns the compressed bytes.
fn deflate_all(path: &str, level: i32) -> Res<u64> {
    use rayon::prelude::*;
    let names = var_names(path)?;
    let h5 = Eng::open(path, None)?;
    let mut chunks = Vec::new();
    for name in names {
        let v = h5.var(&name)?;
        if v.filters.is_empty() {
            continue;
        }
        let grid = v.grid();
        let mut g = vec![0u64; grid.len()];
        loop {
            let start: Vec<u64> = g.iter().zip(&v.chunk).map(|(i, c)| i * c).collect();
            let count: Vec<u64> = (0..g.len())
                .map(|k| v.chunk[k].min(v.shape[k] - start[k]))
                .collect();
            let n: u64 = count.iter().product();
            let mut buf = vec![0u8; n as usize * v.elem];
            read_slab(&v, &h5.file, &start, &count, &mut buf)?;
            chunks.push((v.elem, buf));
            let mut carry = true;
            for k in (0..g.len()).rev() {
                if carry {
                    g[k] += 1;
                    carry = g[k] == grid[k];
                    if carry {
                        g[k] = 0;
                    }
                }
            }
            if carry {
                break;
            }
        }
    }
    if std::env::var_os("H5LAB_ZLIB").is_some() {
        let t = Instant::now();
        let total: u64 = chunks
            .par_iter()
            .map(|(es, c)| {
                let mut a = vec![0u8; c.len()];
                nco_h5::filters::shuffle(c, *es, &mut a);
                let mut z = flate2::write::ZlibEncoder::new(
                    Vec::new(),
                    flate2::Compression::new(level as u32),
                );
                std::io::Write::write_all(&mut z, &a).map(|()| z.finish().unwrap().len() as u64)
            })
            .sum::<Result<u64, _>>()?;
        eprintln!(
            "system zlib, compress only: {:.4} s, {total} bytes",
            t.elapsed().as_secs_f64()
        );
        return Ok(total);
    }
    let lvl = libdeflater::CompressionLvl::new(level).map_err(|_| "level")?;
    let t = Instant::now();
    let total: u64 = chunks
        .par_iter()
        .map_init(
            || (libdeflater::Compressor::new(lvl), Vec::new(), Vec::new()),
            |(z, a, b), (es, c)| {
                a.resize(c.len(), 0);
                nco_h5::filters::shuffle(c, *es, a);
                nco_h5::filters::deflate(z, a, b).map(|()| b.len() as u64)
            },
        )
        .sum::<Result<u64, _>>()?;
    eprintln!(
        "compress only: {:.4} s for {} chunks, {} -> {} bytes",
        t.elapsed().as_secs_f64(),
        chunks.len(),
        chunks.iter().map(|c| c.1.len()).sum::<usize>(),
        total
    );
    Ok(total)
}
