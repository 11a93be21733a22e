//! ncbo, the netCDF Binary Operator: `file1 op file2` variable by variable (NCO manual,
//! "ncbo netCDF Binary Operator"). Installed also as ncdiff (subtract), ncadd, ncsub,
//! ncmult and ncdivide, the operation then taken from the program name; `-y` overrides.
//!
//! The second file's variable may have a subset of the first's dimensions (or the other
//! way round) and is broadcast; coordinates are copied from the first file; the result
//! is missing wherever either operand is missing (the second file's fill mapped onto the
//! first's); packed data is unpacked; the result keeps the first operand's (unpacked)
//! type. Division by zero follows IEEE arithmetic (±inf, NaN) for floating types, as in
//! NCO.

use clap::{CommandFactory, FromArgMatches, Parser};
use rayon::prelude::*;

use nco_core::arith;
use nco_core::cli::{self, CommonArgs, FormatArgs, SlabArgs, VarArgs};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::extract::{self, RecordChange, StorageArgs};
use nco_core::hyperslab::{self, Selection};
use nco_core::kernels::binary::{self, BinOp};
use nco_core::model::Meta;
use nco_core::output::{self, Existing, TempOutput};
use nco_core::types::Values;
use nco_core::{Error, Result};

/// ncbo command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncbo",
    about = "netCDF Binary Operator: add, subtract, multiply or divide two files variable by variable (NCO-compatible)",
    after_help = "Examples:\n  ncbo -y sbt run.nc ctl.nc diff.nc          difference (ncdiff run.nc ctl.nc diff.nc)\n  ncbo -y dvd a.nc clim.nc ratio.nc          clim.nc may lack the record dimension"
)]
pub struct Cli {
    /// First input, second input, then the output file
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub select: VarArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub slab: SlabArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub format: FormatArgs,
    /// Operation: sbt (default), add, mlt, dvd, or + - * / and NCO's synonyms
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP",
        allow_hyphen_values = true
    )]
    pub op: Option<String>,
    /// Unpack with the HDF convention
    #[arg(long = "hdf_upk", visible_alias = "hdf_unpack")]
    pub hdf_upk: bool,
    /// Arithmetic in double precision (the default)
    #[arg(long = "dbl", visible_alias = "rth_dbl")]
    pub dbl: bool,
    /// Single-precision arithmetic in NCO; nco-rs always computes in double
    #[arg(long = "flt", visible_alias = "rth_flt")]
    pub flt: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// The operation implied by the program name.
fn op_of_program(prog: &str) -> BinOp {
    match prog {
        "ncadd" => BinOp::Add,
        "ncmult" | "ncmultiply" => BinOp::Mul,
        "ncdivide" => BinOp::Div,
        _ => BinOp::Sub,
    }
}

fn named_dims(m: &Meta, v: usize, sel: &Selection) -> Vec<(String, usize)> {
    m.vars[v]
        .dims
        .iter()
        .map(|&d| (m.dims[d].name.clone(), sel.len(m, d)))
        .collect()
}

/// Run ncbo (or an alias; `prog` picks the default operation).
///
/// Errors: variables missing from the second file, non-conformable shapes, differing
/// record lengths (each naming the variable), bad options, I/O errors.
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let matches = match command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return cli::clap_error(e),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(|e| Error::msg(e.to_string()))?;
    if cli.common.revision {
        print!("{}", cli::version_text(prog));
        return Ok(());
    }
    cli::apply_common(&cli.common);
    cli.format.check()?;
    let op = match &cli.op {
        Some(s) => BinOp::parse(s)?,
        None => op_of_program(prog),
    };
    let specs = cli.slab.specs()?;
    let mut files = cli.files.clone();
    if let Some(o) = &cli.common.output {
        files.push(o.clone());
    }
    if files.len() != 3 {
        return Err(Error::msg(format!(
            "{prog} takes two input files and one output file, {} given",
            files.len()
        )));
    }
    let out_path = files[2].clone();
    let existing =
        output::resolve_existing(prog, &out_path, cli.common.overwrite, cli.common.append)?;
    if existing == Existing::Append {
        return Err(Error::option(
            "-A",
            format!("appending is not supported by {prog}; use -O"),
        ));
    }
    let a = Dataset::open(&cli::with_prefix(cli.common.path.as_deref(), &files[0]))?;
    let b = Dataset::open(&cli::with_prefix(cli.common.path.as_deref(), &files[1]))?;
    let (am, bm) = (a.meta(), b.meta());
    let sel_a = hyperslab::resolve(am, &specs, cli.slab.fortran, cli.slab.user_order, &|v| {
        a.read_all(v)
    })?;
    let specs_b: Vec<_> = specs
        .iter()
        .filter(|s| bm.dim_id(&s.dim).is_some())
        .cloned()
        .collect();
    let sel_b = hyperslab::resolve(bm, &specs_b, cli.slab.fortran, cli.slab.user_order, &|v| {
        b.read_all(v)
    })?;
    let vars = nco_core::select::select(am, &cli.select.select_args())?;
    // Which variables are computed, and which operand is the larger.
    struct Job {
        out: usize,
        va: usize,
        vb: usize,
        /// true when the second operand holds the larger shape.
        swap: bool,
        map: Option<Vec<usize>>,
    }
    let mut jobs = Vec::new();
    let storage = StorageArgs {
        deflate: cli.format.deflate,
        chunk: cli.format.chunk.clone(),
    };
    let format = cli.format.format()?.unwrap_or(am.format);
    extract::warn_storage_on_classic(prog, format, &storage);
    let plan = extract::plan(
        am,
        &vars,
        &sel_a,
        format,
        &RecordChange::default(),
        &storage,
    )?;
    let mut meta = plan.meta.clone();
    for (o, &va) in vars.iter().enumerate() {
        let var = &am.vars[va];
        if arith::is_fixed_by_convention(am, va) || !arith::is_arith(var.ty) {
            continue;
        }
        let vb = bm.var_id(&var.name).ok_or_else(|| {
            Error::var(
                &var.name,
                format!("is not in the second input file {}", b.path()),
            )
        })?;
        if !arith::is_arith(bm.vars[vb].ty) {
            return Err(Error::var(&var.name, "is text in the second file"));
        }
        let da = named_dims(am, va, &sel_a);
        let db = named_dims(bm, vb, &sel_b);
        let (swap, map) = match binary::broadcast_map(&da, &db) {
            Ok(m) => (false, m),
            Err(e1) => match binary::broadcast_map(&db, &da) {
                Ok(m) => (true, m),
                Err(_) => {
                    return Err(Error::var(
                        &var.name,
                        format!("shapes do not conform: {e1}"),
                    ))
                }
            },
        };
        if swap {
            // The output takes the second operand's (larger) shape.
            let mut dims = Vec::new();
            for (name, len) in &db {
                let id = match meta.dim_id(name) {
                    Some(id) if meta.dims[id].len == *len => id,
                    Some(_) => {
                        return Err(Error::var(
                            &var.name,
                            format!("dimension {name} differs in size between the files"),
                        ))
                    }
                    None => {
                        let bd = bm.dim_id(name).unwrap_or(0);
                        meta.dims.push(nco_core::model::Dim {
                            name: name.clone(),
                            len: *len,
                            unlimited: bm.dims[bd].unlimited,
                        });
                        meta.dims.len() - 1
                    }
                };
                dims.push(id);
            }
            meta.vars[o].dims = dims;
        }
        jobs.push(Job {
            out: o,
            va,
            vb,
            swap,
            map,
        });
    }
    let mut procs = Vec::with_capacity(jobs.len());
    for j in &jobs {
        let mut pa = arith::prepare(am, j.va, cli.hdf_upk);
        pa.out.dims = meta.vars[j.out].dims.clone();
        meta.vars[j.out] = pa.out.clone();
        let pb = arith::prepare(bm, j.vb, cli.hdf_upk);
        procs.push((pa, pb));
    }
    if !cli.common.no_history {
        output::stamp_history(&mut meta, &argv);
    }
    arith::stamp_threads(&mut meta, cli.common.threads);
    let results: Vec<Result<(usize, Values)>> = jobs
        .par_iter()
        .zip(procs.par_iter())
        .map(|(j, (pa, pb))| {
            let mut pa = pa.clone();
            let xa = a.read(j.va, &sel_a.for_var(am, j.va))?;
            let xb = b.read(j.vb, &sel_b.for_var(bm, j.vb))?;
            let fa = pa.unpacked(&xa);
            let fb = pb.unpacked(&xb);
            let fill = pa.out_fill;
            let has_a = pa.in_fill.is_some();
            let has_b = pb.in_fill.is_some();
            let r = if j.swap {
                // Larger operand second: iterate over it, broadcasting the first.
                let mut out = Vec::with_capacity(fb.len());
                for (i, &y) in fb.iter().enumerate() {
                    let x = j.map.as_ref().map_or_else(|| fa[i], |m| fa[m[i]]);
                    let miss = (has_a && x == fill) || (has_b && y == pb.out_fill);
                    out.push(if miss { fill } else { op.apply(x, y) });
                }
                out
            } else {
                binary::apply(
                    op,
                    &fa,
                    has_a.then_some(fill),
                    &fb,
                    has_b.then_some(pb.out_fill),
                    j.map.as_deref(),
                    fill,
                )
            };
            let any_fill = has_a || has_b;
            // An integer result that is not a number (division by zero) is missing,
            // not a garbage integer (NCO dies of SIGFPE there).
            let int_out = !pa.out.ty.is_float();
            let mut bad = 0usize;
            let res: Vec<Option<f64>> = r
                .into_iter()
                .map(|v| {
                    if any_fill && v == fill {
                        None
                    } else if int_out && !v.is_finite() {
                        bad += 1;
                        None
                    } else {
                        Some(v)
                    }
                })
                .collect();
            if bad > 0 {
                eprintln!(
                    "{prog}: WARNING {bad} element(s) of {} are divisions by zero; written as the fill value",
                    pa.out.name
                );
            }
            Ok((j.out, pa.finish(prog, &res)))
        })
        .collect();
    let mut computed: Vec<Option<Values>> = vec![None; vars.len()];
    for r in results {
        let (o, v) = r?;
        computed[o] = Some(v);
    }
    let tmp = TempOutput::new(&out_path, prog)?;
    let mut of = OutFile::create(tmp.path(), &meta, cli.format.hdr_pad.unwrap_or(0))?;
    for (o, &v) in vars.iter().enumerate() {
        match &computed[o] {
            Some(vals) => of.write(o, 0, vals)?,
            None => {
                let untouched = am.vars[v].dims.iter().all(|&d| !sel_a.restricts(d));
                if !(untouched && of.copy_var_raw(o, &a, v)?) {
                    extract::copy_selected(&a, v, &sel_a, &mut of, o)?;
                }
            }
        }
    }
    of.finish()?;
    tmp.commit()
}
