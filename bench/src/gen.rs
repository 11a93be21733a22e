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
pub fn value(k: usize, variant: u32, t: usize, z: usize, y: usize, x: usize, nlat: usize, nlon: usize) -> f32 {
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
fn fill_slab(out: &mut [f32], k: usize, variant: u32, t: usize, z: usize, nlat: usize, nlon: usize) {
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
        &format!("nco-bench gen (generator version 1, variant {variant}, scale {})", opt.scale),
    ));
    let mut dim = |name: &str, len: usize, unlimited: bool| {
        m.dims.push(Dim {
            name: name.into(),
            len,
            unlimited,
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
        vec![text("long_name", "latitude"), text("units", "degrees_north")],
    ));
    m.vars.push(coord(
        "lon",
        NcType::Double,
        d_lon,
        vec![text("long_name", "longitude"), text("units", "degrees_east")],
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
                        let want = opt.chunks.iter().find(|(nm, _)| *nm == dd.name).map(|c| c.1);
                        let full = if dd.unlimited { 1 } else { dd.len };
                        want.unwrap_or(full).clamp(1, dd.len.max(1))
                    })
                    .collect();
                Storage {
                    chunks: Some(chunks),
                    deflate: opt.deflate.filter(|&l| l > 0),
                    shuffle: opt.shuffle,
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

/// Write `geo`'s file (main file for `variant` 0) into `opt.dir`, unless it exists and
/// `!opt.force`.
pub fn generate(geo: Geometry, variant: u32, opt: &GenOptions) -> Result<GenReport> {
    ensure_dir(&opt.dir)?;
    let path = opt.dir.join(file_name(geo, variant));
    if path.exists() && !opt.force {
        let bytes = std::fs::metadata(&path)?.len();
        return Ok(GenReport {
            path,
            bytes,
            seconds: 0.0,
            written: false,
        });
    }
    let start = Instant::now();
    let tmp = opt
        .dir
        .join(format!(".{}.pid{}.tmp", file_name(geo, variant), std::process::id()));
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
        out.write(vi, 0, &Values::Double((0..nt).map(|t| t as f64 + 0.5).collect()))
            .with_context(ctx)?;
        out.write(
            vi + 1,
            0,
            &Values::Double((0..nz).map(|z| 1000.0 * (z as f64 + 1.0) / nz as f64).collect()),
        )
        .with_context(ctx)?;
        vi += 2;
    }
    out.write(vi, 0, &Values::Double((0..nlat).map(|y| lat_deg(y, nlat)).collect()))
        .with_context(ctx)?;
    out.write(vi + 1, 0, &Values::Double((0..nlon).map(|x| lon_deg(x, nlon)).collect()))
        .with_context(ctx)?;
    vi += 2;
    if geo == Geometry::Ipcc {
        let c: Vec<f64> = (0..nlat).map(|y| lat_deg(y, nlat).to_radians().cos()).collect();
        let s: f64 = c.iter().sum();
        out.write(vi, 0, &Values::Double(c.iter().map(|w| 2.0 * w / s).collect()))
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
                out.write(id, 0, &Values::Float(vec![v])).with_context(ctx)?;
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
                        out.write(id, t, &Values::Float(vec![v])).with_context(ctx)?;
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
