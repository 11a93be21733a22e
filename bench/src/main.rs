//! `nco-bench`: synthetic benchmark files (`gen`) and the NCO operator benchmark suite
//! (`run`), measuring nco-rs against NCO (and CDO) process by process.
//!
//! Exit status: 0 all good; 1 an operator failed or crashed, or gave a wrong answer, or
//! an input could not be made; 2 bad usage; 3 everything that ran was right but an
//! operator binary (ours or NCO's) was missing (`--allow-missing` turns this into 0).

mod cache;
mod compare;
mod dap;
mod gen;
mod proc;
mod report;
mod run;
mod scale;
mod sweep;
mod wishlist;
mod xsect;

/// The process allocator of nco-rs's operators, so that the in-process reads and
/// writes of `gen`, `xsect` and `sweep` allocate as the operators do.
#[global_allocator]
static ALLOCATOR: nco_core::alloc::Allocator = nco_core::alloc::Allocator;

/// Tests that spawn processes or use libnetcdf run one at a time (HDF5 is not
/// thread-safe and forked children inherit its open files).
#[cfg(test)]
pub(crate) static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use gen::{GenOptions, Geometry};
use wishlist::Kind;

#[derive(Parser, Debug)]
#[command(
    name = "nco-bench",
    version,
    about = "Synthetic benchmark files and the NCO operator benchmark suite"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once
enum Cmd {
    /// Write the benchmark files (ipcc_dly_T85.nc ~1.1 GB, stl_5km.nc ~300 MB).
    Gen(GenArgs),
    /// Run the operator wishlist against NCO (and CDO), writing table, CSV, JSON and SVG.
    Run(RunArgs),
    /// I/O study: nctime-like cross sections for every format and type (CSV on stdout).
    Xsect(XsectArgs),
    /// I/O study: the AR4 chunking sweep, tst_ar4 columns (TSV on stdout).
    Sweep(SweepArgs),
    /// Scaling study: ncra over N files as one process (-t 1, -t 2), as two parts plus
    /// --merge, and under mpirun -np 1 and -np 2 (when target/mpi/ holds the MPI build).
    Scale(ScaleArgs),
    /// (internal) compare two outputs in a child process (keeps the runner small).
    #[command(hide = true)]
    CompareProbe {
        ours: String,
        reference: String,
        rtol: f64,
        atol: f64,
        atol_int: f64,
        /// Waived attributes as attr=value.
        waive: Vec<String>,
    },
    /// (internal) settle inputs in the page cache (`cache::settle`) in a child, so the
    /// runner's own peak memory (which children inherit at exec) stays small. Prints
    /// "before after" fractions per file, or "none".
    #[command(hide = true)]
    SettleProbe { files: Vec<PathBuf> },
    /// (internal) one measured reader of the sweep.
    #[command(hide = true)]
    SweepProbe {
        file: String,
        mode: String,
        cache: usize,
        stride: usize,
    },
}

#[derive(Args, Debug)]
struct XsectArgs {
    /// Edge lengths d0,d1,d2,d3.
    #[arg(long, default_value = "10,20,30,40")]
    shape: String,
    /// Make d0 a fixed dimension (default: the record dimension).
    #[arg(long)]
    fixed: bool,
    /// Formats (comma list).
    #[arg(
        long,
        default_value = "classic,64bit_offset,cdf5,netcdf4,netcdf4_classic"
    )]
    format: String,
    /// Types (comma list).
    #[arg(long, default_value = "byte,char,short,int,float,double")]
    types: String,
    /// Batch threshold in seconds.
    #[arg(long, default_value_t = 0.1)]
    min_time: f64,
    /// Cap on repetitions per batch.
    #[arg(long, default_value_t = 1 << 20)]
    max_reps: u64,
    /// Evict the file before the first call of every cross section.
    #[arg(long)]
    cold: bool,
    /// netCDF-4 chunk sizes c0,c1,c2,c3 (default: library default).
    #[arg(long)]
    chunking: Option<String>,
    /// netCDF-4 deflate level.
    #[arg(long)]
    deflate: Option<i32>,
    /// netCDF-4 shuffle.
    #[arg(long)]
    shuffle: bool,
    /// Folder for the files (default: <data>/xsect).
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct ScaleArgs {
    /// Data folder (as for run; the files of --scale live in <dir>/scale-<S>).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Size factor of ipcc_dly_T85.nc (as for run).
    #[arg(long, default_value_t = 0.25)]
    scale: f64,
    /// Number of input files (links to ipcc_dly_T85.nc).
    #[arg(long, default_value_t = 32)]
    files: usize,
    /// Repeats per variant (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Folder of our binaries (default: beside nco-bench).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Folder of our MPI binaries (default: <bin-dir>/../mpi, made by scripts/mpi-build.sh).
    #[arg(long)]
    mpi_dir: Option<PathBuf>,
    /// Output folder (scale.txt and the outputs).
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

fn cmd_scale(a: &ScaleArgs) -> Result<u8> {
    let mut dir = a
        .dir
        .clone()
        .or_else(|| std::env::var_os("DATA").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("data"));
    if a.scale != 1.0 {
        dir = dir.join(format!("scale-{}", a.scale));
    }
    let bin_dir = a.bin_dir.clone().unwrap_or_else(default_bin_dir);
    let mpi_dir = a
        .mpi_dir
        .clone()
        .unwrap_or_else(|| bin_dir.join("..").join("mpi"));
    let text = scale::run(&scale::ScaleOptions {
        dir,
        files: a.files,
        repeats: a.repeats,
        bin_dir,
        mpi_dir,
        out: a.out.clone(),
    })?;
    print!("{text}");
    Ok(0)
}

#[derive(Args, Debug)]
struct SweepArgs {
    /// Records of pr(time,128,256) (1560 in the AR4 file).
    #[arg(long, default_value_t = 1560)]
    records: usize,
    /// Chunk shapes separated by ';' (0,0,0 = the classic baseline).
    #[arg(
        long,
        default_value = "0,0,0;1,128,256;16,32,64;32,64,128;64,128,256;7,8,18;224,48,97"
    )]
    shapes: String,
    /// Chunk-cache sizes in MiB (comma list).
    #[arg(long, default_value = "1,16")]
    caches: String,
    /// Deflate levels (comma list; 0 = none).
    #[arg(long, default_value = "0")]
    deflate: String,
    /// Shuffle with deflate.
    #[arg(long)]
    shuffle: bool,
    /// Series mode reads every k-th lat and lon.
    #[arg(long, default_value_t = 8)]
    ser_stride: usize,
    /// Warm cache (default: evict before every probe).
    #[arg(long)]
    warm: bool,
    /// Pin the probes to this CPU.
    #[arg(long)]
    pin: Option<usize>,
    /// Folder for the files (default: <data>/sweep).
    #[arg(long)]
    dir: Option<PathBuf>,
}

fn default_data() -> PathBuf {
    std::env::var_os("DATA").map_or_else(|| PathBuf::from("data"), PathBuf::from)
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| anyhow::anyhow!("bad {what} '{x}'"))
        })
        .collect()
}

fn cmd_xsect(a: &XsectArgs) -> Result<u8> {
    let d: Vec<usize> = list(&a.shape, "--shape length")?;
    if d.len() != 4 || d.contains(&0) {
        bail!("--shape needs four lengths >= 1");
    }
    let chunks = match &a.chunking {
        Some(c) => Some(list::<usize>(c, "chunk length")?),
        None => None,
    };
    let opt = xsect::XsectOptions {
        shape: [d[0], d[1], d[2], d[3]],
        record: !a.fixed,
        formats: a
            .format
            .split(',')
            .map(gen::parse_format)
            .collect::<Result<_>>()?,
        types: a
            .types
            .split(',')
            .map(xsect::parse_type)
            .collect::<Result<_>>()?,
        min_time: a.min_time,
        max_reps: a.max_reps.max(1),
        cold: a.cold,
        chunks,
        deflate: a.deflate,
        shuffle: a.shuffle,
        dir: a
            .dir
            .clone()
            .unwrap_or_else(|| default_data().join("xsect")),
    };
    print!("{}", xsect::run(&opt)?);
    Ok(0)
}

fn cmd_sweep(a: &SweepArgs) -> Result<u8> {
    let opt = sweep::SweepOptions {
        records: a.records.max(1),
        shapes: sweep::parse_shapes(&a.shapes)?,
        caches: list::<f64>(&a.caches, "cache size")?
            .iter()
            .map(|m| (m * 1_048_576.0) as usize)
            .collect(),
        deflates: list(&a.deflate, "deflate level")?,
        shuffle: a.shuffle,
        ser_stride: a.ser_stride.max(1),
        cold: !a.warm,
        dir: a
            .dir
            .clone()
            .unwrap_or_else(|| default_data().join("sweep")),
        pin: a.pin,
    };
    let exe = std::env::current_exe().context("cannot find the nco-bench executable")?;
    print!("{}", sweep::run(&opt, &exe)?);
    Ok(0)
}

#[derive(Args, Debug, Clone)]
struct FileArgs {
    /// Data folder (default: $DATA, else ./data).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// File format: 64bit_offset (default), classic, cdf5, netcdf4, netcdf4_classic.
    #[arg(long, default_value = "64bit_offset")]
    format: String,
    /// Deflate level 1-9 (netCDF-4 formats only).
    #[arg(long, value_name = "LEVEL")]
    deflate: Option<i32>,
    /// Shuffle filter (netCDF-4 formats only).
    #[arg(long)]
    shuffle: bool,
    /// Chunk sizes, e.g. time=1,lev=8,lat=64,lon=128 (netCDF-4 formats only; unnamed
    /// dimensions get their full length, the record dimension 1).
    #[arg(long, value_name = "SPEC")]
    chunk: Option<String>,
    /// Size factor in (0,1] for small quick files (the lat/lon grid is scaled by its
    /// square root). Default: 1 for gen and run --full, 0.25 for run. Files of another
    /// scale than 1 live in <dir>/scale-<S>.
    #[arg(long)]
    scale: Option<f64>,
}

#[derive(Args, Debug)]
struct GenArgs {
    #[command(flatten)]
    files: FileArgs,
    /// Which files: ipcc, stl, and/or partner (the ncbo partner ipcc_dly_T85_b.nc).
    #[arg(long, value_delimiter = ',', default_value = "ipcc,stl")]
    which: Vec<String>,
    /// Rewrite files that exist.
    #[arg(long)]
    force: bool,
    /// Do not fdatasync before the rename (faster; cold-cache runs then evict less).
    #[arg(long)]
    no_sync: bool,
    /// (internal) write into exactly this folder (no scale-<S> subfolder).
    #[arg(long, hide = true)]
    exact_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    files: FileArgs,
    /// The whole wishlist at full size: scale 1, 32 files for the multi-file rows, both
    /// geometries (the default is scale 0.25, 4 files, each row on NCO's geometry).
    #[arg(long)]
    full: bool,
    /// Files for the multi-file rows (ncra, nces, 5c); default 4, 32 with --full.
    #[arg(long)]
    nfiles: Option<usize>,
    /// Repeats per tool per row (median quoted).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Repeats for CDO's equivalents (timed for information, not checked).
    #[arg(long, default_value_t = 1)]
    cdo_repeats: usize,
    /// Threads: passed as -t N to NCO and us, -P N to CDO (default: each tool's default).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Evict the inputs from the page cache before every run (posix_fadvise, no root).
    #[arg(long)]
    cold: bool,
    /// Pin every measured child to this CPU.
    #[arg(long, value_name = "CPU")]
    pin: Option<usize>,
    /// Geometry: natural (NCO's choice per row), ipcc, stl, or both.
    #[arg(long, default_value = "natural")]
    geometry: String,
    /// Only these rows (e.g. 1,2,5a,ncpdq).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Read the inputs from this OPeNDAP base URL instead of the data folder.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Folder of our operators (default: $NCO_RS_BIN_DIR, else the folder of nco-bench).
    #[arg(long, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
    /// Folder of NCO's operators (default: search PATH).
    #[arg(long, value_name = "DIR")]
    nco_dir: Option<PathBuf>,
    /// Do not run NCO.
    #[arg(long)]
    no_nco: bool,
    /// Do not run CDO.
    #[arg(long)]
    no_cdo: bool,
    /// Relative tolerance of the check against NCO (default 1e-5).
    #[arg(long)]
    rtol: Option<f64>,
    /// Results folder (results.txt/.csv/.json/.svg).
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    out: PathBuf,
    /// Scratch folder for operator outputs and logs (default: <data>/scratch).
    #[arg(long, value_name = "DIR")]
    scratch: Option<PathBuf>,
    /// Keep the operators' outputs in the scratch folder.
    #[arg(long)]
    keep_outputs: bool,
    /// Exit 0 even when an operator binary is missing (failures still exit 1).
    #[arg(long)]
    allow_missing: bool,
    /// Also run rows 1, 2, 3, 4 and 9 (those of --only, 5a too) on netCDF-4 inputs,
    /// once deflated (level 1 + shuffle, rows "<id>z") and once without filters
    /// (rows "<id>u"), each with a third side: our operator through libnetcdf
    /// (--no-mmap), so the chunk engine's gain shows beside NCO's ratio. The files go
    /// to <data>/nc4-deflate1-shuffle and <data>/nc4.
    #[arg(long)]
    nc4: bool,
    /// Also run the chosen rows (5a and 5c only when --only names them) with their
    /// inputs read from OPeNDAP URLs (rows "<id>d"):
    /// the loopback server of the DAP tests (tests/dap/serve.py; `bash
    /// scripts/dap-venv.sh` makes its Python environment) serves the data folder, ours and
    /// NCO read the same URLs, and each row's note gives the server's CPU time per run.
    #[arg(long)]
    dap: bool,
    /// Size factor of the files the --dap rows read (made in <dir>/scale-<S> when
    /// absent; default 0.05: 57 MB for ipcc_dly_T85). The loopback server (pydap)
    /// costs about 0.15 s per request, so the DAP rows' time goes mostly with the
    /// number of requests, NCO's the most.
    #[arg(long, value_name = "S", default_value_t = 0.05)]
    dap_scale: f64,
}

fn data_dir(a: &FileArgs) -> PathBuf {
    a.dir
        .clone()
        .or_else(|| std::env::var_os("DATA").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("data"))
}

fn gen_options(a: &FileArgs, default_scale: f64) -> Result<GenOptions> {
    let scale = a.scale.unwrap_or(default_scale);
    if !(scale > 0.0 && scale <= 1.0) {
        bail!("--scale must be in (0, 1], got {scale}");
    }
    let mut dir = data_dir(a);
    if scale != 1.0 {
        dir = dir.join(format!("scale-{scale}"));
    }
    let mut o = GenOptions::new(dir);
    o.format = gen::parse_format(&a.format)?;
    o.deflate = a.deflate;
    o.shuffle = a.shuffle;
    if let Some(c) = &a.chunk {
        o.chunks = gen::parse_chunks(c)?;
    }
    if !o.format.is_netcdf4() && (a.deflate.is_some() || a.shuffle || a.chunk.is_some()) {
        bail!("--deflate, --shuffle and --chunk need --format netcdf4 or netcdf4_classic");
    }
    if let Some(l) = a.deflate {
        if !(0..=9).contains(&l) {
            bail!("--deflate must be 0..9, got {l}");
        }
    }
    o.scale = scale;
    Ok(o)
}

fn cmd_gen(a: &GenArgs) -> Result<u8> {
    let mut o = gen_options(&a.files, 1.0)?;
    if let Some(d) = &a.exact_dir {
        o.dir = d.clone();
    }
    o.force = a.force;
    o.sync = !a.no_sync;
    let mut failed = false;
    for w in &a.which {
        let (geo, variant) = match w.as_str() {
            "partner" | "ipcc_b" => (Geometry::Ipcc, 1),
            "stl_b" => (Geometry::Stl, 1),
            other => match Geometry::parse(other) {
                Some(g) => (g, 0),
                None => bail!("unknown file '{other}' (ipcc, stl, partner, stl_b)"),
            },
        };
        match gen::generate(geo, variant, &o) {
            Ok(r) if r.written => println!(
                "{}: {:.1} MB in {:.2} s ({:.0} MB/s{})",
                r.path.display(),
                r.bytes as f64 / 1e6,
                r.seconds,
                r.bytes as f64 / 1e6 / r.seconds.max(1e-9),
                if o.sync {
                    ", synced to disk"
                } else {
                    ", not synced"
                }
            ),
            Ok(r) => println!(
                "{}: exists ({:.1} MB), kept (use --force to rewrite)",
                r.path.display(),
                r.bytes as f64 / 1e6
            ),
            Err(e) => {
                eprintln!("nco-bench: error: {e:#}");
                failed = true;
            }
        }
    }
    Ok(u8::from(failed))
}

fn default_bin_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("NCO_RS_BIN_DIR") {
        return PathBuf::from(d);
    }
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.to_path_buf()))
        .unwrap_or_else(|| PathBuf::from("."))
}

fn cmd_run(a: &RunArgs) -> Result<u8> {
    let gen = gen_options(&a.files, if a.full { 1.0 } else { 0.25 })?;
    let files = a.nfiles.unwrap_or(if a.full { 32 } else { 4 });
    if files == 0 {
        bail!("--nfiles must be at least 1");
    }
    if a.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    if let Some(c) = a.pin {
        let n = cache::cpus_allowed();
        if c >= n {
            bail!("--pin {c}: only CPUs 0..{} are available", n - 1);
        }
    }
    let kinds: Vec<Kind> = if a.only.is_empty() {
        wishlist::ALL.to_vec()
    } else {
        let mut v = Vec::new();
        for s in &a.only {
            let matched: Vec<Kind> = wishlist::ALL
                .iter()
                .copied()
                .filter(|k| Kind::parse(s) == Some(*k) || (s == k.operator() && !v.contains(k)))
                .collect();
            if matched.is_empty() {
                bail!("unknown row '{s}' (1, 2, 3, 4, 5a, 5b, 5c, 6, 6b, 7, 8, 9, 10, 11, 11b, 12, 13 or an operator name)");
            }
            for k in matched {
                if !v.contains(&k) {
                    v.push(k);
                }
            }
        }
        v.sort_by_key(|k| wishlist::ALL.iter().position(|x| x == k));
        v
    };
    let geometry = if a.full && a.geometry == "natural" {
        "both"
    } else {
        a.geometry.as_str()
    };
    let mut rows = Vec::new();
    for k in kinds {
        let geos: Vec<Geometry> = match geometry {
            "natural" => vec![k.natural_geometry()],
            "both" | "all" => vec![Geometry::Ipcc, Geometry::Stl],
            g => vec![Geometry::parse(g)
                .with_context(|| format!("unknown geometry '{g}' (natural, ipcc, stl, both)"))?],
        };
        for g in geos {
            if k.applies_to(g) {
                rows.push((k, g));
            }
        }
    }
    let data_dir = gen.dir.clone();
    let scratch = a
        .scratch
        .clone()
        .unwrap_or_else(|| data_dir.join("scratch"));
    let opt = run::RunOptions {
        data_dir,
        url: a.url.clone(),
        out_dir: a.out.clone(),
        scratch,
        files,
        repeats: a.repeats,
        cdo_repeats: a.cdo_repeats,
        threads: a.threads,
        cold: a.cold,
        pin_cpu: a.pin,
        rows,
        bin_dir: a.bin_dir.clone().unwrap_or_else(default_bin_dir),
        nco_dir: a.nco_dir.clone(),
        with_nco: !a.no_nco,
        with_cdo: !a.no_cdo,
        rtol: a.rtol,
        gen,
        keep_outputs: a.keep_outputs,
        libnetcdf_side: false,
        label: None,
        server_pid: None,
    };
    if opt.url.is_none() {
        if let Err(e) = gen::ensure_dir(&opt.data_dir) {
            // Keep going: every row is still reported, as "input not available".
            eprintln!("nco-bench: error: {e:#}");
        }
    }
    std::fs::create_dir_all(&opt.out_dir)
        .with_context(|| format!("cannot create the results folder {}", opt.out_dir.display()))?;
    let mut rep = run::run_all(&opt)?;
    if a.nc4 {
        let nc4_kinds = [
            Kind::Ncwa,
            Kind::Ncra,
            Kind::Nces,
            Kind::Ncbo,
            Kind::Stations,
            Kind::Deflate,
        ];
        // Row 5a (50 calls per repeat, three sides) only when --only names it.
        let nc4_rows: Vec<(Kind, Geometry)> = opt
            .rows
            .iter()
            .copied()
            .filter(|(k, _)| nc4_kinds.contains(k) && (*k != Kind::Stations || !a.only.is_empty()))
            .collect();
        for (sub, deflate, id, title) in [
            (
                "nc4-deflate1-shuffle",
                Some(1),
                "z",
                " [netCDF-4 in, deflate 1 + shuffle]",
            ),
            ("nc4", None, "u", " [netCDF-4 in, no filters]"),
        ] {
            let mut o = opt.clone();
            o.gen.format = gen::parse_format("netcdf4")?;
            o.gen.deflate = deflate;
            o.gen.shuffle = deflate.is_some();
            o.gen.chunks = Vec::new();
            o.gen.dir = opt.gen.dir.join(sub);
            o.data_dir = o.gen.dir.clone();
            o.rows = nc4_rows.clone();
            o.libnetcdf_side = true;
            o.label = Some((id.to_string(), title.to_string()));
            if let Err(e) = gen::ensure_dir(&o.data_dir) {
                eprintln!("nco-bench: error: {e:#}");
            }
            let r = run::run_all(&o)?;
            rep.rows.extend(r.rows);
            rep.info.load_end = r.info.load_end;
        }
    }
    if a.dap {
        if opt.url.is_some() {
            bail!("--dap starts its own server: it does not go with --url");
        }
        let mut files = a.files.clone();
        files.scale = Some(a.dap_scale);
        let mut o = opt.clone();
        // Rows 5a and 5c (50 calls per side, each a new open of the URL; NCO's 5c asks
        // once per record, variable, file and station: hours on pydap) only when
        // --only names them.
        o.rows.retain(|(k, _)| {
            !matches!(k, Kind::Stations | Kind::StationsList) || !a.only.is_empty()
        });
        o.gen = gen_options(&files, a.dap_scale)?;
        o.data_dir = o.gen.dir.clone();
        if a.scratch.is_none() {
            o.scratch = o.data_dir.join("scratch");
        }
        rep.rows.extend(dap_rows(&o)?);
        rep.info.load_end = run::loadavg();
    }
    let table = report::table(&rep);
    println!("{table}");
    let out = &opt.out_dir;
    run::write_atomic(&out.join("results.txt"), &table)?;
    run::write_atomic(&out.join("results.csv"), &report::csv(&rep))?;
    run::write_atomic(&out.join("results.json"), &report::json(&rep))?;
    run::write_atomic(&out.join("results.svg"), &report::svg(&rep))?;
    println!("results: {}/results.{{txt,csv,json,svg}}", out.display());
    if rep.rows.iter().any(|r| r.failed()) {
        return Ok(1);
    }
    if rep.rows.iter().any(|r| r.missing()) && !a.allow_missing {
        eprintln!("nco-bench: some operators are not built or not installed (exit 3; --allow-missing gives 0)");
        return Ok(3);
    }
    Ok(0)
}

/// The rows of `opt` once more, their inputs read through the loopback OPeNDAP server
/// serving the data folder; each row's note: the server's CPU seconds per run.
fn dap_rows(opt: &run::RunOptions) -> Result<Vec<report::Row>> {
    gen::ensure_dir(&opt.data_dir)?;
    if let Some((_, e)) = run::generate_inputs(opt).first() {
        bail!("the inputs of the DAP rows: {e}");
    }
    std::fs::create_dir_all(&opt.scratch)?;
    let server = dap::DapServer::start(&opt.data_dir, &opt.scratch.join("dap-server.log"))?;
    eprintln!(
        "nco-bench: OPeNDAP server on {} serving {}",
        server.base,
        opt.data_dir.display()
    );
    let mut o = opt.clone();
    o.url = Some(server.base.clone());
    o.server_pid = Some(server.pid());
    o.with_cdo = false;
    o.cold = false;
    o.label = Some(("d".into(), " [inputs from OPeNDAP, loopback]".into()));
    let mut rows = run::run_all(&o)?.rows;
    for r in &mut rows {
        let cpu = |t: &report::ToolRuns| t.wall().and(t.median.as_ref()).map(|m| m.server_cpu);
        let (ours, nco) = (cpu(&r.ours), cpu(&r.nco));
        let fmt = |c: Option<f64>| c.map_or("-".to_string(), |c| format!("{c:.2} s"));
        let ratio = match (ours, nco) {
            (Some(a), Some(b)) if a > 0.0 => format!(" ({:.2}x)", b / a),
            _ => String::new(),
        };
        let server_note = format!(
            "server CPU per run: nco-rs {}, NCO {}{ratio}",
            fmt(ours),
            fmt(nco)
        );
        r.note = Some(match r.note.take() {
            Some(n) => format!("{n}; {server_note}"),
            None => server_note,
        });
    }
    drop(server);
    Ok(rows)
}

fn main() -> ExitCode {
    // NCO_RS_NO_MMAP and the other NCO_RS_* variables apply to the bench's own reads
    // and writes too.
    nco_core::cli::env::install();
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Gen(a) => cmd_gen(a),
        Cmd::Run(a) => cmd_run(a),
        Cmd::Xsect(a) => cmd_xsect(a),
        Cmd::Sweep(a) => cmd_sweep(a),
        Cmd::Scale(a) => cmd_scale(a),
        Cmd::CompareProbe {
            ours,
            reference,
            rtol,
            atol,
            atol_int,
            waive,
        } => {
            let waivers: Vec<compare::Waiver> = waive
                .iter()
                .filter_map(|w| w.split_once('='))
                .map(|(a, v)| compare::Waiver {
                    attr: Box::leak(a.to_string().into_boxed_str()),
                    value: Box::leak(v.to_string().into_boxed_str()),
                })
                .collect();
            let tol = compare::Tol {
                rtol: *rtol,
                atol: *atol,
                atol_int: *atol_int,
            };
            compare::compare(ours, reference, tol, &waivers).map(|r| {
                match r {
                    None => println!("EQUAL"),
                    Some(d) => println!("DIFF {d}"),
                }
                0
            })
        }
        Cmd::SettleProbe { files } => files
            .iter()
            .try_for_each(|f| {
                match cache::settle(f)? {
                    Some((b, a)) => println!("{b} {a}"),
                    None => println!("none"),
                }
                Ok(())
            })
            .map(|()| 0),
        Cmd::SweepProbe {
            file,
            mode,
            cache,
            stride,
        } => sweep::probe(file, mode, *cache, *stride).map(|line| {
            println!("{line}");
            0
        }),
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("nco-bench: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
