//! `gen`: the synthetic benchmark files, made in-process and deterministically.
//!
//! * `ipcc_dly_T85.nc`: the T85 IPCC daily proxy of NCO's benchmark (`gcm_T85.cdl`):
//!   `time` = 8 records, `lev` = 32, `lat` = 128, `lon` = 256; 128 NC_FLOAT variables
//!   (8 scalars `d0_NN`, 8 `[time]` `d1_NN`, 16 `[lat,lon]` `d2_NN`, 64 `[time,lat,lon]`
//!   `d3_NN`, 32 `[time,lev,lat,lon]` `d4_NN`), coordinates `time, lev, lat, lon` with
//!   units and Gaussian-like weights `gw[lat]`. About 1.1 GB.
//! * `stl_5km.nc`: the 5 km satellite proxy (`stl_5km.cdl`): 8 NC_FLOAT `[lat,lon]`
//!   variables on 2160 × 4320 with coordinates. About 300 MB.
//!
//! Values are a smooth field plus a per-variable offset (see [`value`]): every variable
//! varies along each of its dimensions, none is constant or zero. A `variant` number
//! shifts offsets and phases so that the partner file used by the `ncbo` row differs
//! from the main file by a non-constant field.
//!
//! Files are written to a temporary name in the target folder, synced, and renamed
//! when complete: an interrupted or failed `gen` never leaves a file that looks done.

use std::f64::consts::PI;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use nco_core::dataset::OutFile;
use nco_core::model::{Attr, Dim, Format, Meta, Storage, Var};
use nco_core::types::{NcType, Values};
use rayon::prelude::*;

/// Which benchmark geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Geometry {
    /// `ipcc_dly_T85.nc`.
    Ipcc,
    /// `stl_5km.nc`.
    Stl,
}

impl Geometry {
    /// File stem (`ipcc_dly_T85`, `stl_5km`).
    pub fn stem(self) -> &'static str {
        match self {
            Geometry::Ipcc => "ipcc_dly_T85",
            Geometry::Stl => "stl_5km",
        }
    }

    /// Parse `ipcc`, `ipcc_dly_T85`, `stl`, `stl_5km`.
    pub fn parse(s: &str) -> Option<Geometry> {
        match s {
            "ipcc" | "ipcc_dly_T85" | "t85" | "T85" => Some(Geometry::Ipcc),
            "stl" | "stl_5km" | "5km" => Some(Geometry::Stl),
            _ => None,
        }
    }
}

/// Options of `gen` (also used by `run` when the files are absent).
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Output folder.
    pub dir: PathBuf,
    /// On-disk format.
    pub format: Format,
    /// Deflate level (netCDF-4 only).
    pub deflate: Option<i32>,
    /// Shuffle filter (netCDF-4 only).
    pub shuffle: bool,
    /// Chunk sizes per dimension name (netCDF-4 only); dimensions not named get their
    /// full length (record dimension: 1).
    pub chunks: Vec<(String, usize)>,
    /// Size factor in (0, 1]: the horizontal grid is scaled by its square root.
    pub scale: f64,
    /// Rewrite files that already exist.
    pub force: bool,
    /// Sync the file before renaming it (on by default: cold-cache runs need clean pages).
    pub sync: bool,
}

impl GenOptions {
    /// Defaults: 64-bit offset, full size, into `dir`.
    pub fn new(dir: PathBuf) -> GenOptions {
        GenOptions {
            dir,
            format: Format::Offset64,
            deflate: None,
            shuffle: false,
            chunks: Vec::new(),
            scale: 1.0,
            force: false,
            sync: true,
        }
    }
}

/// What one generated file was.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GenReport {
    /// Final path.
    pub path: PathBuf,
    /// Bytes on disk (file length).
    pub bytes: u64,
    /// Seconds spent (computing, writing, syncing); 0 when the file already existed.
    pub seconds: f64,
    /// False when an existing file was kept.
    pub written: bool,
}

/// Sizes after scaling: (time, lev, lat, lon).
pub fn dims_for(geo: Geometry, scale: f64) -> (usize, usize, usize, usize) {
    let f = scale.clamp(1e-9, 1.0).sqrt();
    let sc = |n: usize| ((n as f64 * f).round() as usize).max(2);
    match geo {
        Geometry::Ipcc => (8, 32, sc(128), sc(256)),
        Geometry::Stl => (0, 0, sc(2160), sc(4320)),
    }
}

/// File name of `geo`'s file; `variant` 0 is the main file, 1 the `ncbo` partner
/// (`<stem>_b.nc`).
pub fn file_name(geo: Geometry, variant: u32) -> String {
    if variant == 0 {
        format!("{}.nc", geo.stem())
    } else {
        format!("{}_b.nc", geo.stem())
    }
}

/// Per-variable constants of the value formula.
#[derive(Clone, Copy, Debug)]
struct Coefs {
    off: f64,
    amp: f64,
    phase: f64,
}

fn coefs(k: usize, variant: u32) -> Coefs {
    let v = variant as f64;
    Coefs {
        off: 1.0 + 0.5 * k as f64 + 0.1 * v * ((k % 5) as f64 + 1.0),
        amp: 0.5 + 0.01 * (k % 7) as f64,
        phase: 0.37 * k as f64 + 0.5 * v,
    }
}

/// The value of variable number `k` (0-based over the data variables of the file) at
/// `(t, z, y, x)` (0 for absent dimensions) on an `nlat × nlon` grid, for `variant`:
/// `off + amp·(sin(φ_y)·cos(2πx/nlon + phase) + 0.25·sin(0.7t + 0.3z + phase))` where
/// `φ_y` is the latitude of row `y`. Computed in f64, stored as f32.
pub fn value(
    k: usize,
    variant: u32,
    t: usize,
    z: usize,
    y: usize,
    x: usize,
    nlat: usize,
    nlon: usize,
) -> f32 {
    let c = coefs(k, variant);
    let a = c.amp * lat_deg(y, nlat).to_radians().sin();
    let b = (2.0 * PI * x as f64 / nlon as f64 + c.phase).cos();
    let tz = c.off + c.amp * 0.25 * (0.7 * t as f64 + 0.3 * z as f64 + c.phase).sin();
    (tz + a * b) as f32
}

fn lat_deg(y: usize, nlat: usize) -> f64 {
    -90.0 + (y as f64 + 0.5) * 180.0 / nlat as f64
}

fn lon_deg(x: usize, nlon: usize) -> f64 {
    x as f64 * 360.0 / nlon as f64
}

/// Fill one horizontal slab `[lat,lon]` of variable `k` at `(t, z)`, in parallel rows.
fn fill_slab(
    out: &mut [f32],
    k: usize,
    variant: u32,
    t: usize,
    z: usize,
    nlat: usize,
    nlon: usize,
) {
    let c = coefs(k, variant);
    let bx: Vec<f64> = (0..nlon)
        .map(|x| (2.0 * PI * x as f64 / nlon as f64 + c.phase).cos())
        .collect();
    let tz = c.off + c.amp * 0.25 * (0.7 * t as f64 + 0.3 * z as f64 + c.phase).sin();
    out.par_chunks_mut(nlon).enumerate().for_each(|(y, row)| {
        let a = c.amp * lat_deg(y, nlat).to_radians().sin();
        for (o, b) in row.iter_mut().zip(&bx) {
            *o = (tz + a * b) as f32;
        }
    });
}

fn text(name: &str, s: &str) -> Attr {
    Attr::text(name, s)
}

fn coord(name: &str, ty: NcType, dim: usize, attrs: Vec<Attr>) -> Var {
    Var {
        name: name.into(),
        ty,
        dims: vec![dim],
        attrs,
        storage: Storage::default(),
        group: 0,
    }
}

/// The metadata of `geo`'s file (data variables last, in `d0, d1, d2, d3, d4` order).
pub fn build_meta(geo: Geometry, opt: &GenOptions, variant: u32) -> Meta {
    let (nt, nz, nlat, nlon) = dims_for(geo, opt.scale);
    let mut m = Meta::new(opt.format);
    let title = match geo {
        Geometry::Ipcc => "nco-rs synthetic T85 IPCC daily proxy (NCO benchmark gcm_T85 geometry)",
        Geometry::Stl => "nco-rs synthetic 5 km satellite proxy (NCO benchmark stl_5km geometry)",
    };
    m.attrs.push(text("Conventions", "CF-1.6"));
    m.attrs.push(text("title", title));
    m.attrs.push(text(
        "source",
        &format!(
            "nco-bench gen (generator version 1, variant {variant}, scale {})",
            opt.scale
        ),
    ));
    let mut dim = |name: &str, len: usize, unlimited: bool| {
        m.dims.push(Dim {
            name: name.into(),
            len,
            unlimited,
            group: 0,
        });
        m.dims.len() - 1
    };
    let (d_time, d_lev) = match geo {
        Geometry::Ipcc => (Some(dim("time", nt, true)), Some(dim("lev", nz, false))),
        Geometry::Stl => (None, None),
    };
    let d_lat = dim("lat", nlat, false);
    let d_lon = dim("lon", nlon, false);
    if let (Some(t), Some(z)) = (d_time, d_lev) {
        m.vars.push(coord(
            "time",
            NcType::Double,
            t,
            vec![
                text("long_name", "time"),
                text("units", "days since 2000-01-01 00:00:00"),
                text("calendar", "standard"),
            ],
        ));
        m.vars.push(coord(
            "lev",
            NcType::Double,
            z,
            vec![
                text("long_name", "pressure level"),
                text("units", "hPa"),
                text("positive", "down"),
            ],
        ));
    }
    m.vars.push(coord(
        "lat",
        NcType::Double,
        d_lat,
        vec![
            text("long_name", "latitude"),
            text("units", "degrees_north"),
        ],
    ));
    m.vars.push(coord(
        "lon",
        NcType::Double,
        d_lon,
        vec![
            text("long_name", "longitude"),
            text("units", "degrees_east"),
        ],
    ));
    let groups: Vec<(u8, usize, Vec<usize>)> = match geo {
        Geometry::Ipcc => {
            m.vars.push(coord(
                "gw",
                NcType::Double,
                d_lat,
                vec![text("long_name", "Gaussian weights"), text("units", "1")],
            ));
            let (t, z) = (d_time.unwrap_or(0), d_lev.unwrap_or(0));
            vec![
                (0, 8, vec![]),
                (1, 8, vec![t]),
                (2, 16, vec![d_lat, d_lon]),
                (3, 64, vec![t, d_lat, d_lon]),
                (4, 32, vec![t, z, d_lat, d_lon]),
            ]
        }
        Geometry::Stl => vec![(2, 8, vec![d_lat, d_lon])],
    };
    let dims_now = m.dims.clone();
    for (rank, n, dims) in groups {
        for i in 0..n {
            let storage = if opt.format.is_netcdf4() && !dims.is_empty() {
                let chunks = dims
                    .iter()
                    .map(|&d| {
                        let dd = &dims_now[d];
                        let want = opt
                            .chunks
                            .iter()
                            .find(|(nm, _)| *nm == dd.name)
                            .map(|c| c.1);
                        let full = if dd.unlimited { 1 } else { dd.len };
                        want.unwrap_or(full).clamp(1, dd.len.max(1))
                    })
                    .collect();
                Storage {
                    chunks: Some(chunks),
                    deflate: opt.deflate.filter(|&l| l > 0),
                    shuffle: opt.shuffle,
                    fletcher32: false,
                    quantize: None,
                }
            } else {
                Storage::default()
            };
            m.vars.push(Var {
                name: format!("d{rank}_{i:02}"),
                ty: NcType::Float,
                dims: dims.clone(),
                attrs: vec![
                    text("long_name", &format!("synthetic {rank}-D field {i}")),
                    text("units", "K"),
                ],
                storage,
                group: 0,
            });
        }
    }
    m
}

/// Index of the first data variable (`d0_00` or `d2_00`) in [`build_meta`]'s order.
fn first_data_var(m: &Meta) -> usize {
    m.vars
        .iter()
        .position(|v| v.name.starts_with('d') && v.name.as_bytes().get(2) == Some(&b'_'))
        .unwrap_or(m.vars.len())
}

/// Removes the temporary file unless disarmed.
struct TmpGuard(Option<PathBuf>);

impl Drop for TmpGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Check that `dir` exists (creating it) and is writable, with a clear message.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the data folder {}", dir.display()))?;
    let probe = dir.join(format!(".nco-bench-probe.{}", std::process::id()));
    File::create(&probe)
        .with_context(|| format!("the data folder {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Whether the file at `path` is the one `gen` would write (format, dimensions,
/// variables, source attribute, and a complete length); the reason when not.
fn existing_matches(
    path: &Path,
    geo: Geometry,
    opt: &GenOptions,
    variant: u32,
) -> std::result::Result<(), String> {
    let want = build_meta(geo, opt, variant);
    let ds = nco_core::dataset::Dataset::open(path.to_str().unwrap_or_default())
        .map_err(|e| e.to_string())?;
    let m = ds.meta();
    if m.format != want.format {
        return Err(format!(
            "format {} instead of {}",
            m.format.kind_name(),
            want.format.kind_name()
        ));
    }
    if m.dims != want.dims {
        return Err("dimensions differ (another --scale?)".into());
    }
    let names = |m: &Meta| {
        m.vars
            .iter()
            .map(|v| (v.name.clone(), v.ty, v.dims.clone()))
            .collect::<Vec<_>>()
    };
    if names(m) != names(&want) {
        return Err("variables differ".into());
    }
    if m.attr("source") != want.attr("source") {
        return Err("made by another generator version or options".into());
    }
    if want.format.is_classic_family() {
        let data: u64 = want
            .vars
            .iter()
            .map(|v| (want.var_len(v) * v.ty.size()) as u64)
            .sum();
        let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
        if len < data {
            return Err(format!("truncated ({len} bytes, data alone needs {data})"));
        }
    }
    Ok(())
}

/// Write `geo`'s file (main file for `variant` 0) into `opt.dir`, unless it exists and
/// `!opt.force`.
pub fn generate(geo: Geometry, variant: u32, opt: &GenOptions) -> Result<GenReport> {
    ensure_dir(&opt.dir)?;
    let path = opt.dir.join(file_name(geo, variant));
    if path.exists() && !opt.force {
        match existing_matches(&path, geo, opt, variant) {
            Ok(()) => {
                let bytes = std::fs::metadata(&path)?.len();
                return Ok(GenReport {
                    path,
                    bytes,
                    seconds: 0.0,
                    written: false,
                });
            }
            Err(why) => eprintln!("nco-bench: {} will be rewritten: {why}", path.display()),
        }
    }
    let start = Instant::now();
    let tmp = opt.dir.join(format!(
        ".{}.pid{}.tmp",
        file_name(geo, variant),
        std::process::id()
    ));
    let mut guard = TmpGuard(Some(tmp.clone()));
    let tmp_s = tmp.to_str().context("data folder path is not UTF-8")?;
    let meta = build_meta(geo, opt, variant);
    let mut out = OutFile::create(tmp_s, &meta, 0)
        .with_context(|| format!("cannot create {}", tmp.display()))?;
    let (nt, nz, nlat, nlon) = dims_for(geo, opt.scale);
    let ctx = || format!("writing {} failed", path.display());

    // Coordinates.
    let mut vi = 0;
    if geo == Geometry::Ipcc {
        out.write(
            vi,
            0,
            &Values::Double((0..nt).map(|t| t as f64 + 0.5).collect()),
        )
        .with_context(ctx)?;
        out.write(
            vi + 1,
            0,
            &Values::Double(
                (0..nz)
                    .map(|z| 1000.0 * (z as f64 + 1.0) / nz as f64)
                    .collect(),
            ),
        )
        .with_context(ctx)?;
        vi += 2;
    }
    out.write(
        vi,
        0,
        &Values::Double((0..nlat).map(|y| lat_deg(y, nlat)).collect()),
    )
    .with_context(ctx)?;
    out.write(
        vi + 1,
        0,
        &Values::Double((0..nlon).map(|x| lon_deg(x, nlon)).collect()),
    )
    .with_context(ctx)?;
    vi += 2;
    if geo == Geometry::Ipcc {
        let c: Vec<f64> = (0..nlat)
            .map(|y| lat_deg(y, nlat).to_radians().cos())
            .collect();
        let s: f64 = c.iter().sum();
        out.write(
            vi,
            0,
            &Values::Double(c.iter().map(|w| 2.0 * w / s).collect()),
        )
        .with_context(ctx)?;
        vi += 1;
    }
    debug_assert_eq!(vi, first_data_var(&meta));

    // Data variables, numbered k = 0.. in file order.
    let plane = nlat * nlon;
    let data: Vec<(usize, usize)> = meta.vars[vi..]
        .iter()
        .enumerate()
        .map(|(k, v)| (vi + k, v.dims.len()))
        .collect();
    let total_steps = data
        .iter()
        .map(|&(_, r)| match r {
            4 => (nt * nz) as u64,
            3 => nt as u64,
            _ => 1,
        })
        .sum::<u64>();
    let pb = nco_core::progress::bar(total_steps, &format!("gen {}", file_name(geo, variant)));
    // Fixed (non-record) variables first: scalars, then 2-D.
    for (k, &(id, rank)) in data.iter().enumerate() {
        match (geo, rank) {
            (_, 0) => {
                let v = value(k, variant, 0, 0, 0, 0, nlat, nlon);
                out.write(id, 0, &Values::Float(vec![v]))
                    .with_context(ctx)?;
                pb.inc(1);
            }
            (_, 2) => {
                let mut buf = vec![0f32; plane];
                fill_slab(&mut buf, k, variant, 0, 0, nlat, nlon);
                out.write(id, 0, &Values::Float(buf)).with_context(ctx)?;
                pb.inc(1);
            }
            _ => {}
        }
    }
    // Record variables record by record, so the file is written front to back.
    if geo == Geometry::Ipcc {
        for t in 0..nt {
            for (k, &(id, rank)) in data.iter().enumerate() {
                match rank {
                    1 => {
                        let v = value(k, variant, t, 0, 0, 0, nlat, nlon);
                        out.write(id, t, &Values::Float(vec![v]))
                            .with_context(ctx)?;
                    }
                    3 => {
                        let mut buf = vec![0f32; plane];
                        fill_slab(&mut buf, k, variant, t, 0, nlat, nlon);
                        out.write(id, t, &Values::Float(buf)).with_context(ctx)?;
                        pb.inc(1);
                    }
                    4 => {
                        let mut buf = vec![0f32; nz * plane];
                        buf.par_chunks_mut(plane).enumerate().for_each(|(z, s)| {
                            fill_slab(s, k, variant, t, z, nlat, nlon);
                        });
                        out.write(id, t, &Values::Float(buf)).with_context(ctx)?;
                        pb.inc(nz as u64);
                    }
                    _ => {}
                }
            }
        }
    }
    out.finish().with_context(ctx)?;
    if opt.sync {
        File::open(&tmp)
            .and_then(|f| f.sync_data())
            .with_context(ctx)?;
    }
    std::fs::rename(&tmp, &path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    guard.0 = None;
    pb.finish_and_clear();
    let bytes = std::fs::metadata(&path)?.len();
    Ok(GenReport {
        path,
        bytes,
        seconds: start.elapsed().as_secs_f64(),
        written: true,
    })
}

/// Parse `--chunk` text `dim=len,dim=len` (also `dim/len`, `dim:len`).
pub fn parse_chunks(s: &str) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let Some((d, n)) = part.split_once(['=', '/', ':']) else {
            bail!("bad chunk size '{part}': expected dim=len");
        };
        let n: usize = n
            .trim()
            .parse()
            .with_context(|| format!("bad chunk length in '{part}'"))?;
        if n == 0 {
            bail!("chunk length must be at least 1 in '{part}'");
        }
        out.push((d.trim().to_string(), n));
    }
    Ok(out)
}

/// NCO's spelling of a format (accepted back by [`parse_format`]).
pub fn format_name(f: Format) -> &'static str {
    match f {
        Format::Classic => "classic",
        Format::Offset64 => "64bit_offset",
        Format::Cdf5 => "cdf5",
        Format::Netcdf4 => "netcdf4",
        Format::Netcdf4Classic => "netcdf4_classic",
    }
}

/// Parse a format name as NCO spells it.
pub fn parse_format(s: &str) -> Result<Format> {
    Ok(match s {
        "classic" | "3" => Format::Classic,
        "64bit" | "64bit_offset" | "6" => Format::Offset64,
        "cdf5" | "64bit_data" | "5" => Format::Cdf5,
        "netcdf4" | "nc4" | "4" => Format::Netcdf4,
        "netcdf4_classic" | "nc4classic" | "7" => Format::Netcdf4Classic,
        _ => bail!("unknown format '{s}' (classic, 64bit_offset, cdf5, netcdf4, netcdf4_classic)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nco_core::dataset::Dataset;

    const SCALE: f64 = 0.001; // T85: lat 4, lon 8; stl: lat 68, lon 137

    fn opts(dir: &Path) -> GenOptions {
        let mut o = GenOptions::new(dir.to_path_buf());
        o.scale = SCALE;
        o.sync = false;
        o
    }

    fn floats(v: Values) -> Vec<f32> {
        match v {
            Values::Float(x) => x,
            other => panic!("expected NC_FLOAT, got {}", other.nc_type()),
        }
    }

    #[test]
    fn scaled_dimensions() {
        assert_eq!(dims_for(Geometry::Ipcc, 1.0), (8, 32, 128, 256));
        assert_eq!(dims_for(Geometry::Stl, 1.0), (0, 0, 2160, 4320));
        assert_eq!(dims_for(Geometry::Ipcc, SCALE), (8, 32, 4, 8));
        assert_eq!(dims_for(Geometry::Stl, 0.25), (0, 0, 1080, 2160));
    }

    #[test]
    fn full_size_metadata_matches_the_spec() {
        let m = build_meta(Geometry::Ipcc, &GenOptions::new("x".into()), 0);
        let count = |r: usize| {
            m.vars
                .iter()
                .filter(|v| v.name.starts_with('d') && v.dims.len() == r && v.ty == NcType::Float)
                .count()
        };
        assert_eq!(
            [count(0), count(1), count(2), count(3), count(4)],
            [8, 8, 16, 64, 32]
        );
        let data: usize = m
            .vars
            .iter()
            .filter(|v| v.ty == NcType::Float)
            .map(|v| m.var_len(v) * 4)
            .sum();
        assert_eq!(data, 1_142_948_128); // ≈1.1 GB of NC_FLOAT data
        assert!(m.dims[0].unlimited && m.dims[0].name == "time");
        assert_eq!(m.var("gw").map(|v| m.shape(v)), Some(vec![128]));
        let s = build_meta(Geometry::Stl, &GenOptions::new("x".into()), 0);
        let sdata: usize = s
            .vars
            .iter()
            .filter(|v| v.ty == NcType::Float)
            .map(|v| s.var_len(v) * 4)
            .sum();
        assert_eq!(sdata, 298_598_400);
        assert_eq!(s.vars.iter().filter(|v| v.ty == NcType::Float).count(), 8);
    }

    #[test]
    fn ipcc_file_shapes_types_and_values() {
        let dir = tempfile::tempdir().unwrap();
        let r = generate(Geometry::Ipcc, 0, &opts(dir.path())).unwrap();
        assert!(r.written);
        assert_eq!(r.path, dir.path().join("ipcc_dly_T85.nc"));
        let ds = Dataset::open(r.path.to_str().unwrap()).unwrap();
        let m = ds.meta();
        assert_eq!(m.format, Format::Offset64);
        let dims: Vec<(&str, usize, bool)> = m
            .dims
            .iter()
            .map(|d| (d.name.as_str(), d.len, d.unlimited))
            .collect();
        assert_eq!(
            dims,
            [
                ("time", 8, true),
                ("lev", 32, false),
                ("lat", 4, false),
                ("lon", 8, false)
            ]
        );
        assert_eq!(m.vars.len(), 5 + 128);
        // file size = header + fixed data + 8 records
        let data: u64 = m
            .vars
            .iter()
            .map(|v| (m.var_len(v) * v.ty.size()) as u64)
            .sum();
        assert!(
            r.bytes >= data && r.bytes < data + 64 * 1024,
            "{} vs {data}",
            r.bytes
        );
        // coordinates
        let lat = ds.read_named("lat").unwrap().unwrap().to_f64_vec().unwrap();
        assert_eq!(lat, vec![-67.5, -22.5, 22.5, 67.5]);
        let time = ds
            .read_named("time")
            .unwrap()
            .unwrap()
            .to_f64_vec()
            .unwrap();
        assert_eq!(time[0], 0.5);
        assert_eq!(time[7], 7.5);
        let gw = ds.read_named("gw").unwrap().unwrap().to_f64_vec().unwrap();
        assert!((gw.iter().sum::<f64>() - 2.0).abs() < 1e-12);
        assert_eq!(
            m.var("lat").unwrap().attr_text("units").as_deref(),
            Some("degrees_north")
        );
        // values at a few indices, k = the data variable's number in file order
        let k_of = |name: &str| m.var_id(name).unwrap() - m.var_id("d0_00").unwrap();
        let d4 = floats(ds.read_named("d4_07").unwrap().unwrap());
        assert_eq!(d4.len(), 8 * 32 * 4 * 8);
        let k = k_of("d4_07");
        assert_eq!(k, 8 + 8 + 16 + 64 + 7);
        for &(t, z, y, x) in &[(0, 0, 0, 0), (7, 31, 3, 7), (3, 10, 2, 5)] {
            let i = ((t * 32 + z) * 4 + y) * 8 + x;
            assert_eq!(d4[i], value(k, 0, t, z, y, x, 4, 8), "at {t},{z},{y},{x}");
        }
        // the formula itself, by hand at one point: k = 0 (d0_00), scalar
        let d0 = floats(ds.read_named("d0_00").unwrap().unwrap());
        let expect = 1.0
            + 0.5 * ((0.7f64 * 0.0 + 0.0).sin() * 0.25)
            + 0.5 * (-67.5f64).to_radians().sin() * 1.0;
        assert!(
            (f64::from(d0[0]) - expect).abs() < 1e-6,
            "{} vs {expect}",
            d0[0]
        );
        let d3 = floats(ds.read_named("d3_63").unwrap().unwrap());
        let k3 = k_of("d3_63");
        assert_eq!(d3[(5 * 4 + 1) * 8 + 2], value(k3, 0, 5, 0, 1, 2, 4, 8));
        let d1 = floats(ds.read_named("d1_03").unwrap().unwrap());
        assert_eq!(d1.len(), 8);
        // no variable is constant, and offsets differ between variables
        let mut means = Vec::new();
        for v in m.vars.iter().filter(|v| v.ty == NcType::Float) {
            let x = floats(ds.read_named(&v.name).unwrap().unwrap());
            let (lo, hi) = x
                .iter()
                .fold((f32::MAX, f32::MIN), |(a, b), &y| (a.min(y), b.max(y)));
            if !v.dims.is_empty() {
                assert!(hi > lo, "{} is constant", v.name);
            }
            assert!(lo > 0.0, "{} has non-positive values", v.name);
            means.push(x.iter().map(|&y| f64::from(y)).sum::<f64>() / x.len() as f64);
        }
        means.dedup();
        assert_eq!(means.len(), 128);
        // nothing left behind
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["ipcc_dly_T85.nc".to_string()]);
    }

    #[test]
    fn stl_file_and_partner_differ_non_trivially() {
        let dir = tempfile::tempdir().unwrap();
        let o = opts(dir.path());
        let a = generate(Geometry::Stl, 0, &o).unwrap();
        let b = generate(Geometry::Stl, 1, &o).unwrap();
        assert_eq!(b.path.file_name().unwrap(), "stl_5km_b.nc");
        let da = Dataset::open(a.path.to_str().unwrap()).unwrap();
        let db = Dataset::open(b.path.to_str().unwrap()).unwrap();
        let m = da.meta();
        assert_eq!(
            m.dims.iter().map(|d| d.len).collect::<Vec<_>>(),
            vec![68, 137]
        );
        assert_eq!(m.vars.iter().filter(|v| v.ty == NcType::Float).count(), 8);
        let x = floats(da.read_named("d2_05").unwrap().unwrap());
        let y = floats(db.read_named("d2_05").unwrap().unwrap());
        assert_eq!(x[68 * 137 - 1], value(5, 0, 0, 0, 67, 136, 68, 137));
        let diff: Vec<f32> = x.iter().zip(&y).map(|(p, q)| p - q).collect();
        let (lo, hi) = diff
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &d| (a.min(d), b.max(d)));
        assert!(hi - lo > 0.1, "difference must vary: {lo}..{hi}");
        // existing files are kept unless forced
        let again = generate(Geometry::Stl, 0, &o).unwrap();
        assert!(!again.written);
    }

    #[test]
    fn netcdf4_with_chunks_and_deflate() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let mut o = opts(dir.path());
        o.format = Format::Netcdf4;
        o.deflate = Some(1);
        o.shuffle = true;
        o.chunks = parse_chunks("lev=8,lat=2").unwrap();
        let r = generate(Geometry::Ipcc, 0, &o).unwrap();
        let ds = Dataset::open(r.path.to_str().unwrap()).unwrap();
        assert_eq!(ds.meta().format, Format::Netcdf4);
        let v = ds.meta().var("d4_00").unwrap();
        assert_eq!(v.storage.chunks.as_deref(), Some(&[1, 8, 2, 8][..]));
        let k = ds.meta().var_id("d4_00").unwrap() - ds.meta().var_id("d0_00").unwrap();
        let x = floats(ds.read_named("d4_00").unwrap().unwrap());
        assert_eq!(x[(2 * 32 + 3) * 32 + 9], value(k, 0, 2, 3, 1, 1, 4, 8));
    }

    #[test]
    fn failures_are_clear_and_leave_no_file() {
        // a data folder that cannot be made
        let e = generate(
            Geometry::Stl,
            0,
            &GenOptions {
                dir: "/proc/nco-bench-no".into(),
                ..opts(Path::new("/"))
            },
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("cannot create the data folder /proc/nco-bench-no"),
            "{e:#}"
        );
        // the final rename fails (a non-empty folder has the file's name): no temp left
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("stl_5km.nc")).unwrap();
        std::fs::write(dir.path().join("stl_5km.nc/x"), b"x").unwrap();
        let mut o = opts(dir.path());
        o.force = true;
        let e = generate(Geometry::Stl, 0, &o).unwrap_err();
        assert!(format!("{e:#}").contains("cannot rename"), "{e:#}");
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, vec!["stl_5km.nc".to_string()]);
        // a truncated or foreign file under the final name is rewritten, not trusted
        let dir2 = tempfile::tempdir().unwrap();
        let o2 = opts(dir2.path());
        let good = generate(Geometry::Stl, 0, &o2).unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&good.path)
            .unwrap();
        f.set_len(good.bytes / 2).unwrap();
        drop(f);
        let again = generate(Geometry::Stl, 0, &o2).unwrap();
        assert!(again.written, "a truncated file must be rewritten");
        assert_eq!(again.bytes, good.bytes);
        let mut other = opts(dir2.path());
        other.scale = 0.002;
        assert!(
            generate(Geometry::Stl, 0, &other).unwrap().written,
            "another scale must be rewritten"
        );
        // option parsing
        assert!(parse_chunks("lat=0").is_err());
        assert!(parse_chunks("lat").is_err());
        assert_eq!(
            parse_chunks("lat=4,lon/8").unwrap(),
            vec![("lat".to_string(), 4), ("lon".to_string(), 8)]
        );
        assert_eq!(parse_format("64bit_offset").unwrap(), Format::Offset64);
        assert!(parse_format("hdf9").is_err());
        for f in [
            Format::Classic,
            Format::Offset64,
            Format::Cdf5,
            Format::Netcdf4,
            Format::Netcdf4Classic,
        ] {
            assert_eq!(parse_format(format_name(f)).unwrap(), f);
        }
    }
}
