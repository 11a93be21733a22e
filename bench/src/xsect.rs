//! `xsect`: the cross-section benchmark of Unidata's `nctime`, through
//! nco-core's own reader and writer (classic formats) and libnetcdf (netCDF-4).
//!
//! One 4-D variable per classic type (`byte_var char_var short_var long_var float_var
//! double_var`) on dims `w` (record by default), `x`, `y`, `z`; value at (i,j,k,l) =
//! `1000i + 100j + 10k + l` cast like C. Per type: time a put of the whole variable, then
//! gets of nctime's 16 cross sections (1 point, 4 vectors, 6 planes, 4 cubes, the whole
//! slab), repeating each call in doubling batches until a batch takes `min_time`, and
//! verify the first returned values against the formula.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::model::{Dim, Format, Meta, Storage, Var};
use nco_core::types::{NcType, Values};

/// Options of `xsect`.
#[derive(Clone, Debug)]
pub struct XsectOptions {
    /// Edge lengths d0..d3.
    pub shape: [usize; 4],
    /// d0 is the record dimension.
    pub record: bool,
    /// Formats to test.
    pub formats: Vec<Format>,
    /// Types to test, nctime order.
    pub types: Vec<NcType>,
    /// Batch threshold in seconds.
    pub min_time: f64,
    /// Cap on repetitions per batch.
    pub max_reps: u64,
    /// Evict the file before the first call of every cross section.
    pub cold: bool,
    /// netCDF-4 chunk sizes (None: library default).
    pub chunks: Option<Vec<usize>>,
    /// netCDF-4 deflate level.
    pub deflate: Option<i32>,
    /// netCDF-4 shuffle.
    pub shuffle: bool,
    /// Folder for the files.
    pub dir: PathBuf,
}

/// The six classic types in nctime order and their variable names.
pub const TYPES: [(NcType, &str); 6] = [
    (NcType::Byte, "byte_var"),
    (NcType::Char, "char_var"),
    (NcType::Short, "short_var"),
    (NcType::Int, "long_var"),
    (NcType::Float, "float_var"),
    (NcType::Double, "double_var"),
];

/// Parse a type name (`byte,char,short,int|long,float,double`).
pub fn parse_type(s: &str) -> Result<NcType> {
    Ok(match s {
        "byte" => NcType::Byte,
        "char" => NcType::Char,
        "short" => NcType::Short,
        "int" | "long" => NcType::Int,
        "float" => NcType::Float,
        "double" => NcType::Double,
        _ => bail!("unknown type '{s}' (byte, char, short, int, float, double)"),
    })
}

fn formula(i: usize, j: usize, k: usize, l: usize) -> i64 {
    (1000 * i + 100 * j + 10 * k + l) as i64
}

/// Values of type `ty` for the elements listed by `sel` (one index list per dim).
fn expected(ty: NcType, sel: &[Vec<usize>; 4]) -> Values {
    let mut f = Vec::new();
    for &i in &sel[0] {
        for &j in &sel[1] {
            for &k in &sel[2] {
                for &l in &sel[3] {
                    f.push(formula(i, j, k, l));
                }
            }
        }
    }
    match ty {
        NcType::Byte => Values::Byte(f.iter().map(|&v| v as i8).collect()),
        NcType::Char => Values::Char(f.iter().map(|&v| v as u8).collect()),
        NcType::Short => Values::Short(f.iter().map(|&v| v as i16).collect()),
        NcType::Int => Values::Int(f.iter().map(|&v| v as i32).collect()),
        NcType::Float => Values::Float(f.iter().map(|&v| v as f32).collect()),
        _ => Values::Double(f.iter().map(|&v| v as f64).collect()),
    }
}

/// nctime's 16 cross sections: (start, count) per shape, in its order.
pub fn cross_sections(d: [usize; 4]) -> Vec<([usize; 4], [usize; 4])> {
    let mut v = vec![([d[0] / 2, d[1] / 2, d[2] / 2, d[3] / 2], [1, 1, 1, 1])];
    let span = |axes: &[usize]| {
        let mut c = [1usize; 4];
        for &a in axes {
            c[a] = d[a];
        }
        ([0usize; 4], c)
    };
    for a in 0..4 {
        v.push(span(&[a]));
    }
    for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
        v.push(span(&[a, b]));
    }
    for t in [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]] {
        v.push(span(&t));
    }
    v.push(span(&[0, 1, 2, 3]));
    v
}

fn thread_cpu() -> f64 {
    // SAFETY: getrusage fills the zeroed struct we own.
    unsafe {
        let mut r: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut r);
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        tv(r.ru_utime) + tv(r.ru_stime)
    }
}

struct Timing {
    reps: u64,
    wall: f64,
    cpu: f64,
}

/// Repeat `f` in doubling batches until a batch takes `min_time` wall seconds.
fn batch(min_time: f64, max_reps: u64, mut f: impl FnMut() -> Result<()>) -> Result<Timing> {
    let mut reps = 1u64;
    loop {
        let (c0, t0) = (thread_cpu(), Instant::now());
        for _ in 0..reps {
            f()?;
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu = thread_cpu() - c0;
        if wall >= min_time || reps >= max_reps {
            return Ok(Timing { reps, wall, cpu });
        }
        reps *= 2;
    }
}

fn fmt_name(f: Format) -> &'static str {
    match f {
        Format::Classic => "classic",
        Format::Offset64 => "64bit_offset",
        Format::Cdf5 => "cdf5",
        Format::Netcdf4 => "netcdf4",
        Format::Netcdf4Classic => "netcdf4_classic",
    }
}

/// CSV header of `xsect`.
pub const HEADER: &str = "format,type,op,shape,n_values,bytes,reps,wall_us_per_call,cpu_us_per_call,MB_per_s,first_us,first_cold,nctime_equiv_us,verified";

/// Run the study; returns the CSV text. A verification failure is an error.
pub fn run(opt: &XsectOptions) -> Result<String> {
    std::fs::create_dir_all(&opt.dir)
        .with_context(|| format!("cannot create {}", opt.dir.display()))?;
    let d = opt.shape;
    let mut csv = String::from(HEADER);
    csv.push('\n');
    for &format in &opt.formats {
        let path = opt.dir.join(format!("xsect_{}.nc", fmt_name(format)));
        let ps = path.to_string_lossy().into_owned();
        let mut meta = Meta::new(format);
        for (i, n) in ["w", "x", "y", "z"].iter().enumerate() {
            meta.dims.push(Dim {
                name: (*n).into(),
                len: d[i],
                unlimited: i == 0 && opt.record,
                group: 0,
            });
        }
        let types: Vec<(NcType, &str)> = TYPES
            .iter()
            .copied()
            .filter(|(t, _)| opt.types.contains(t))
            .collect();
        for (ty, name) in &types {
            let storage = if format.is_netcdf4() {
                Storage {
                    chunks: opt.chunks.clone(),
                    deflate: opt.deflate,
                    shuffle: opt.shuffle,
                    fletcher32: false,
                    quantize: None,
                }
            } else {
                Storage::default()
            };
            meta.vars.push(Var {
                name: (*name).into(),
                ty: *ty,
                dims: vec![0, 1, 2, 3],
                attrs: vec![],
                storage,
                group: 0,
            });
        }
        let full: [Vec<usize>; 4] = std::array::from_fn(|i| (0..d[i]).collect());
        let mut out =
            OutFile::create(&ps, &meta, 0).with_context(|| format!("cannot create {ps}"))?;
        let n_all: usize = d.iter().product();
        for (vi, (ty, _)) in types.iter().enumerate() {
            let vals = expected(*ty, &full);
            let t0 = Instant::now();
            out.write(vi, 0, &vals)?;
            let first = t0.elapsed().as_secs_f64();
            let t = batch(opt.min_time, opt.max_reps, || Ok(out.write(vi, 0, &vals)?))?;
            row(
                &mut csv, format, *ty, "put", d, n_all, &t, first, false, true,
            );
        }
        out.finish()?;
        let ds = Dataset::open(&ps)?;
        for (ty, name) in &types {
            let vi = ds.meta().var_id(name).context("variable vanished")?;
            for (start, count) in cross_sections(d) {
                let sel: [Vec<usize>; 4] =
                    std::array::from_fn(|i| (start[i]..start[i] + count[i]).collect());
                let n: usize = count.iter().product();
                if opt.cold {
                    crate::cache::evict(Path::new(&ps))?;
                }
                let t0 = Instant::now();
                let got = ds.read(vi, &sel)?;
                let first = t0.elapsed().as_secs_f64();
                let ok = got == expected(*ty, &sel);
                if !ok {
                    bail!(
                        "{ps}: {name} cross section {:?} does not hold the expected values",
                        count
                    );
                }
                let t = batch(opt.min_time, opt.max_reps, || {
                    ds.read(vi, &sel)?;
                    Ok(())
                })?;
                row(
                    &mut csv, format, *ty, "get", count, n, &t, first, opt.cold, ok,
                );
            }
        }
    }
    Ok(csv)
}

fn row(
    csv: &mut String,
    format: Format,
    ty: NcType,
    op: &str,
    count: [usize; 4],
    n: usize,
    t: &Timing,
    first: f64,
    cold: bool,
    verified: bool,
) {
    let bytes = n * ty.size();
    let per = t.wall / t.reps as f64;
    let _ = writeln!(
        csv,
        "{},{},{op},{}x{}x{}x{},{n},{bytes},{},{:.3},{:.3},{:.2},{:.1},{cold},{:.3},{verified}",
        fmt_name(format),
        ty.cdl_name(),
        count[0],
        count[1],
        count[2],
        count[3],
        t.reps,
        per * 1e6,
        t.cpu / t.reps as f64 * 1e6,
        bytes as f64 / per / 1e6,
        first * 1e6,
        t.wall / (t.reps + 1) as f64 * 1e6,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_sections_in_nctime_order() {
        let s = cross_sections([10, 20, 30, 40]);
        assert_eq!(s.len(), 16);
        assert_eq!(s[0], ([5, 10, 15, 20], [1, 1, 1, 1]));
        assert_eq!(s[1].1, [10, 1, 1, 1]);
        assert_eq!(s[4].1, [1, 1, 1, 40]);
        assert_eq!(s[5].1, [10, 20, 1, 1]);
        assert_eq!(s[10].1, [1, 1, 30, 40]);
        assert_eq!(s[11].1, [10, 20, 30, 1]);
        assert_eq!(s[15].1, [10, 20, 30, 40]);
    }

    #[test]
    fn small_study_verifies_every_format_and_type() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let opt = XsectOptions {
            shape: [3, 4, 5, 6],
            record: true,
            formats: vec![Format::Offset64, Format::Cdf5, Format::Netcdf4],
            types: TYPES.iter().map(|t| t.0).collect(),
            min_time: 0.0,
            max_reps: 1,
            cold: false,
            chunks: None,
            deflate: None,
            shuffle: false,
            dir: dir.path().to_path_buf(),
        };
        let csv = run(&opt).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], HEADER);
        // per format and type: 1 put + 16 gets
        assert_eq!(lines.len(), 1 + 3 * 6 * 17);
        assert!(lines.iter().skip(1).all(|l| l.ends_with(",true")));
        let l = lines
            .iter()
            .find(|l| l.starts_with("cdf5,short,get,3x4x5x6,"))
            .unwrap();
        assert!(l.contains(",360,720,1,"), "{l}"); // 360 values, 720 bytes, 1 rep
        assert!(lines
            .iter()
            .any(|l| l.starts_with("netcdf4,char,put,3x4x5x6,360,360,")));
        // byte wraps like a C cast: element (2,3,4,5) = 2345 -> 2345 mod 256 = 41
        assert_eq!(
            expected(NcType::Byte, &[vec![2], vec![3], vec![4], vec![5]]),
            Values::Byte(vec![41])
        );
    }
}
