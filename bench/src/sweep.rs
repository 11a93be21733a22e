//! `sweep`: the AR4 chunking sweep, after Hartnett's `tst_ar4` study in netCDF-C, with
//! one row per configuration, cold cache by default.
//!
//! A synthetic file shaped like the AR4 `pr_A1` file (dims `lon=256, lat=128, bnds=2,
//! time=UNLIMITED`, `pr(time,lat,lon)` float with `_FillValue = 1e20f`) is written once per
//! chunk shape (classic for `0,0,0`), one horizontal slab at a time, then evicted. Each
//! (file, cache) pair is measured by two fresh child processes (`nco-bench sweep-probe`),
//! one reading horizontal slabs, one reading time series, each after eviction; the parent
//! reaps them with `wait4` for block input and peak memory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::model::{Attr, Dim, Format, Meta, Storage, Var};
use nco_core::types::{NcType, Values};

use crate::proc::{self, Launch};

/// Generator version, printed with the results (file sizes and deflate timings depend on it).
pub const GENERATOR: &str = "ar4-synth-1";

/// Options of `sweep`.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Number of records (1560 in the AR4 file).
    pub records: usize,
    /// Chunk shapes; `[0,0,0]` is the classic baseline.
    pub shapes: Vec<[usize; 3]>,
    /// Chunk-cache sizes in bytes for the readers.
    pub caches: Vec<usize>,
    /// Deflate levels (0 = none).
    pub deflates: Vec<i32>,
    /// Shuffle with deflate.
    pub shuffle: bool,
    /// Read every k-th lat and lon for the series mode.
    pub ser_stride: usize,
    /// Evict before each probe.
    pub cold: bool,
    /// Folder for the files.
    pub dir: PathBuf,
    /// Pin probes to a CPU.
    pub pin: Option<usize>,
}

const NLAT: usize = 128;
const NLON: usize = 256;

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `pr` at (t, y, x): smooth seasonal field plus counter-based noise keyed on (t,y,x).
pub fn pr_value(t: usize, y: usize, x: usize) -> f32 {
    use std::f64::consts::PI;
    let tf = t as f64;
    let u = (splitmix(((t as u64) << 32) | ((y as u64) << 16) | x as u64) >> 11) as f64
        / (1u64 << 53) as f64;
    let v = 1e-5
        * (1.0 + 0.5 * (2.0 * PI * tf / 12.0).sin() * (PI * (y as f64 - 63.5) / 128.0).cos())
        * (1.0 + 0.3 * (2.0 * PI * x as f64 / 256.0 + tf / 7.0).sin())
        + 1e-6 * u;
    v as f32
}

fn build_meta(records: usize, shape: [usize; 3], deflate: i32, shuffle: bool) -> Meta {
    let nc4 = shape != [0, 0, 0];
    let mut m = Meta::new(if nc4 {
        Format::Netcdf4
    } else {
        Format::Offset64
    });
    for (n, len, unl) in [
        ("lon", NLON, false),
        ("lat", NLAT, false),
        ("bnds", 2, false),
        ("time", records, true),
    ] {
        m.dims.push(Dim {
            name: n.into(),
            len,
            unlimited: unl,
            group: 0,
        });
    }
    let dbl = |name: &str, dims: Vec<usize>| Var {
        name: name.into(),
        ty: NcType::Double,
        dims,
        attrs: vec![],
        storage: Storage::default(),
        group: 0,
    };
    m.vars.push(dbl("lon", vec![0]));
    m.vars.push(dbl("lat", vec![1]));
    m.vars.push(dbl("time", vec![3]));
    m.vars.push(dbl("lon_bnds", vec![0, 2]));
    m.vars.push(dbl("lat_bnds", vec![1, 2]));
    m.vars.push(dbl("time_bnds", vec![3, 2]));
    m.vars.push(Var {
        name: "pr".into(),
        ty: NcType::Float,
        dims: vec![3, 1, 0],
        attrs: vec![
            Attr {
                name: "_FillValue".into(),
                value: Values::Float(vec![1e20]),
            },
            Attr::text("units", "kg m-2 s-1"),
        ],
        storage: if nc4 {
            Storage {
                chunks: Some(shape.to_vec()),
                deflate: (deflate > 0).then_some(deflate),
                shuffle: shuffle && deflate > 0,
                fletcher32: false,
                quantize: None,
            }
        } else {
            Storage::default()
        },
        group: 0,
    });
    m.attrs.push(Attr::text(
        "source",
        &format!("nco-bench sweep, generator {GENERATOR}"),
    ));
    m
}

fn set_global_cache(bytes: usize) {
    // SAFETY: plain libnetcdf call setting the default cache for files opened afterwards.
    unsafe {
        netcdf_sys::nc_set_chunk_cache(bytes, 7919, 0.75);
    }
}

/// Write one configuration's file; returns (path, seconds).
fn write_file(opt: &SweepOptions, shape: [usize; 3], deflate: i32) -> Result<(PathBuf, f64)> {
    let name = if shape == [0, 0, 0] {
        "ar4_classic.nc".to_string()
    } else {
        format!(
            "ar4_{}_{}_{}_d{deflate}{}.nc",
            shape[0],
            shape[1],
            shape[2],
            if opt.shuffle { "s" } else { "" }
        )
    };
    let path = opt.dir.join(name);
    let ps = path.to_string_lossy().into_owned();
    let meta = build_meta(opt.records, shape, deflate, opt.shuffle);
    if shape != [0, 0, 0] {
        // Hold one row of chunks so no chunk is evicted and rewritten while filling.
        let row = NLAT.div_ceil(shape[1].max(1))
            * NLON.div_ceil(shape[2].max(1))
            * shape.iter().product::<usize>()
            * 4;
        set_global_cache(row.clamp(64 << 20, 1 << 30));
    }
    let t0 = Instant::now();
    let mut out = OutFile::create(&ps, &meta, 0).with_context(|| format!("cannot create {ps}"))?;
    out.write(
        0,
        0,
        &Values::Double((0..NLON).map(|x| x as f64 * 1.40625).collect()),
    )?;
    out.write(
        1,
        0,
        &Values::Double(
            (0..NLAT)
                .map(|y| -89.0 + y as f64 * 178.0 / 127.0)
                .collect(),
        ),
    )?;
    out.write(
        3,
        0,
        &Values::Double(
            (0..NLON * 2)
                .map(|i| (i / 2) as f64 * 1.40625 + (i % 2) as f64 * 1.40625 - 0.703125)
                .collect(),
        ),
    )?;
    out.write(
        4,
        0,
        &Values::Double(
            (0..NLAT * 2)
                .map(|i| -90.0 + (i / 2 + i % 2) as f64 * 180.0 / 128.0)
                .collect(),
        ),
    )?;
    out.write(
        2,
        0,
        &Values::Double((0..opt.records).map(|t| t as f64 * 30.0 + 15.0).collect()),
    )?;
    out.write(
        5,
        0,
        &Values::Double(
            (0..opt.records * 2)
                .map(|i| (i / 2 + i % 2) as f64 * 30.0)
                .collect(),
        ),
    )?;
    let mut slab = vec![0f32; NLAT * NLON];
    for t in 0..opt.records {
        for y in 0..NLAT {
            for x in 0..NLON {
                slab[y * NLON + x] = pr_value(t, y, x);
            }
        }
        out.write(6, t, &Values::Float(slab.clone()))?;
    }
    out.finish()?;
    let secs = t0.elapsed().as_secs_f64();
    Ok((path, secs))
}

/// The child side: open `file` with chunk cache `cache`, read in `mode` ("hor"/"ser"),
/// print `first_us avg_us reads chunks c0 c1 c2 deflate shuffle`.
pub fn probe(file: &str, mode: &str, cache: usize, stride: usize) -> Result<String> {
    set_global_cache(cache);
    let ds = Dataset::open(file)?;
    let vi = ds.meta().var_id("pr").context("no variable pr")?;
    let v = &ds.meta().vars[vi];
    let nt = ds.meta().shape(v)[0];
    let (nlat, nlon) = (ds.meta().shape(v)[1], ds.meta().shape(v)[2]);
    let mut first = 0.0;
    let mut n = 0usize;
    let t0 = Instant::now();
    let check = |x: &Values, t: usize, y: usize, xx: usize| -> Result<()> {
        if x.get_f64(0) != Some(f64::from(pr_value(t, y, xx))) {
            bail!("{file}: pr[{t},{y},{xx}] does not hold the generated value");
        }
        Ok(())
    };
    match mode {
        "hor" => {
            let lat: Vec<usize> = (0..nlat).collect();
            let lon: Vec<usize> = (0..nlon).collect();
            for t in 0..nt {
                let s = Instant::now();
                let x = ds.read(vi, &[vec![t], lat.clone(), lon.clone()])?;
                if t == 0 {
                    first = s.elapsed().as_secs_f64();
                    check(&x, 0, 0, 0)?;
                }
                n += 1;
            }
        }
        "ser" => {
            let time: Vec<usize> = (0..nt).collect();
            let stride = stride.max(1);
            for y in (0..nlat).step_by(stride) {
                for x in (0..nlon).step_by(stride) {
                    let s = Instant::now();
                    let got = ds.read(vi, &[time.clone(), vec![y], vec![x]])?;
                    if n == 0 {
                        first = s.elapsed().as_secs_f64();
                        check(&got, 0, y, x)?;
                    }
                    n += 1;
                }
            }
        }
        _ => bail!("probe mode must be hor or ser"),
    }
    let total = t0.elapsed().as_secs_f64();
    Ok(format!(
        "{:.0} {:.0} {n}",
        first * 1e6,
        total / n.max(1) as f64 * 1e6
    ))
}

/// TSV header (the tst_ar4 columns plus extras).
pub const HEADER: &str = "cs[0]\tcs[1]\tcs[2]\tcache(MB)\tdeflate\tshuffle\t1st_read_hor(us)\tavg_read_hor(us)\t1st_read_ser(us)\tavg_read_ser(us)\tfile_size(B)\tdeflate_level\twrite_s\tser_stride\tcold\thor_inblock_B\tser_inblock_B\thor_maxrss_KiB\tser_maxrss_KiB";

/// Run the sweep; returns the TSV text (also printed row by row on stderr as it goes).
pub fn run(opt: &SweepOptions, exe: &Path) -> Result<String> {
    std::fs::create_dir_all(&opt.dir)
        .with_context(|| format!("cannot create {}", opt.dir.display()))?;
    let mut out = format!("# nco-bench sweep, generator {GENERATOR}, records {}, reader nco-rs (classic) / libnetcdf (netCDF-4)\n{HEADER}\n", opt.records);
    let launch = Launch { pin_cpu: opt.pin };
    for &shape in &opt.shapes {
        let deflates: Vec<i32> = if shape == [0, 0, 0] {
            vec![0]
        } else {
            opt.deflates.clone()
        };
        for deflate in deflates {
            let (path, write_s) = write_file(opt, shape, deflate)?;
            let size = std::fs::metadata(&path)?.len();
            let caches: Vec<usize> = if shape == [0, 0, 0] {
                vec![0]
            } else {
                opt.caches.clone()
            };
            for cache in caches {
                let mut res: Vec<(String, proc::Measure)> = Vec::new();
                for mode in ["hor", "ser"] {
                    if opt.cold {
                        crate::cache::evict(&path)?;
                    }
                    let log = opt.dir.join(format!(".probe.{}.log", std::process::id()));
                    let _ = std::fs::remove_file(&log);
                    let argv: Vec<String> = vec![
                        exe.to_string_lossy().into_owned(),
                        "sweep-probe".into(),
                        path.to_string_lossy().into_owned(),
                        mode.into(),
                        cache.to_string(),
                        opt.ser_stride.to_string(),
                    ];
                    let m = proc::run(&argv, Some(&log), &launch)?;
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    let _ = std::fs::remove_file(&log);
                    if !m.ok() {
                        bail!(
                            "probe {mode} of {} failed ({}): {}",
                            path.display(),
                            m.status_text(),
                            text.trim()
                        );
                    }
                    res.push((text.trim().to_string(), m));
                }
                let f = |i: usize, k: usize| {
                    res[i].0.split_whitespace().nth(k).unwrap_or("").to_string()
                };
                let mbytes = if shape == [0, 0, 0] {
                    0.0
                } else {
                    cache as f64 / 1_048_576.0
                };
                let mut line = String::new();
                let _ = write!(
                    line,
                    "{}\t{}\t{}\t{mbytes:.1}\t{}\t{}\t{}\t{}\t{}\t{}\t{size}\t{deflate}\t{write_s:.2}\t{}\t{}\t{}\t{}\t{}\t{}",
                    shape[0],
                    shape[1],
                    shape[2],
                    u8::from(deflate > 0),
                    u8::from(opt.shuffle && deflate > 0),
                    f(0, 0),
                    f(0, 1),
                    f(1, 0),
                    f(1, 1),
                    opt.ser_stride,
                    u8::from(opt.cold),
                    res[0].1.in_bytes,
                    res[1].1.in_bytes,
                    res[0].1.max_rss / 1024,
                    res[1].1.max_rss / 1024,
                );
                eprintln!("{line}");
                out.push_str(&line);
                out.push('\n');
            }
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(out)
}

/// Parse `a,b,c` chunk shapes separated by `;` or spaces (`0,0,0` = classic).
pub fn parse_shapes(s: &str) -> Result<Vec<[usize; 3]>> {
    let mut v = Vec::new();
    for part in s.split([';', ' ']).filter(|p| !p.is_empty()) {
        let n: Vec<usize> = part
            .split(',')
            .map(|x| x.trim().parse::<usize>())
            .collect::<std::result::Result<_, _>>()
            .with_context(|| format!("bad chunk shape '{part}'"))?;
        if n.len() != 3 || (n.contains(&0) && n != [0, 0, 0]) {
            bail!("chunk shape '{part}' needs three lengths ≥ 1 (or 0,0,0 for classic)");
        }
        v.push([n[0], n[1], n[2]]);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_deterministic_and_small_positive() {
        assert_eq!(pr_value(3, 4, 5), pr_value(3, 4, 5));
        assert_ne!(pr_value(3, 4, 5), pr_value(3, 4, 6));
        let v = pr_value(0, 0, 0);
        assert!(v > 1e-6 && v < 3e-5, "{v}");
    }

    #[test]
    fn shapes_parse() {
        assert_eq!(
            parse_shapes("0,0,0;1,128,256 7,8,18").unwrap(),
            vec![[0, 0, 0], [1, 128, 256], [7, 8, 18]]
        );
        assert!(parse_shapes("1,2").is_err());
        assert!(parse_shapes("0,2,3").is_err());
    }

    #[test]
    fn probe_reads_and_verifies_a_small_file() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let opt = SweepOptions {
            records: 6,
            shapes: vec![],
            caches: vec![],
            deflates: vec![0],
            shuffle: false,
            ser_stride: 64,
            cold: false,
            dir: dir.path().to_path_buf(),
            pin: None,
        };
        for shape in [[0, 0, 0], [2, 64, 128]] {
            let (p, _) = write_file(&opt, shape, if shape[0] == 0 { 0 } else { 1 }).unwrap();
            let hor = probe(p.to_str().unwrap(), "hor", 1 << 20, 64).unwrap();
            assert!(hor.ends_with(" 6"), "6 slabs read: {hor}");
            let ser = probe(p.to_str().unwrap(), "ser", 1 << 20, 64).unwrap();
            assert!(ser.ends_with(" 8"), "2 x 4 series read: {ser}");
            let ds = Dataset::open(p.to_str().unwrap()).unwrap();
            let v = ds.meta().var("pr").unwrap();
            assert_eq!(ds.meta().shape(v), vec![6, 128, 256]);
            if shape[0] == 2 {
                assert_eq!(v.storage.chunks.as_deref(), Some(&[2, 64, 128][..]));
            }
        }
    }
}
