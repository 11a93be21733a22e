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

use clap::{CommandFactory, Parser};

use nco_core::arith;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::extract::{self, RecordChange, StorageArgs};
use nco_core::hyperslab::{self, Selection};
use nco_core::kernels::binary::{self, BinOp};
use nco_core::model::Meta;
use nco_core::output::{self, TempOutput};
use nco_core::{Error, Result};

/// ncbo command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncbo",
    about = "netCDF Binary Operator: add, subtract, multiply or divide two files variable by variable (NCO-compatible)",
    after_help = "Examples:\n  ncbo -y sbt run.nc ctl.nc diff.nc          difference (ncdiff run.nc ctl.nc diff.nc)\n  ncbo -y dvd a.nc clim.nc ratio.nc          clim.nc may lack the record dimension"
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub arith: cli::ArithArgs,
    /// Operation: sbt (default), add, mlt, dvd, or + - * / and NCO's synonyms
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP",
        allow_hyphen_values = true
    )]
    pub op: Option<String>,
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
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.std.common, &c.std.format))?
    else {
        return Ok(());
    };
    let op = match &cli.op {
        Some(s) => BinOp::parse(s)?,
        None => op_of_program(prog),
    };
    let specs = cli.std.slab.specs()?;
    let (inputs, out_path) = cli.std.inputs_and_output(prog, 2)?;
    let a = Dataset::open(&inputs[0])?;
    let b = Dataset::open(&inputs[1])?;
    let (am, bm) = (a.meta(), b.meta());
    let sel_a = hyperslab::resolve(
        am,
        &specs,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| a.read_all(v),
    )?;
    let specs_b: Vec<_> = specs
        .iter()
        .filter(|s| bm.dim_id(&s.dim).is_some())
        .cloned()
        .collect();
    let sel_b = hyperslab::resolve(
        bm,
        &specs_b,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| b.read_all(v),
    )?;
    let vars = nco_core::select::select(am, &cli.std.select.select_args())?;
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
        deflate: cli.std.format.deflate,
        chunk: cli.std.format.chunk.clone(),
    };
    let format = cli.std.format.format()?.unwrap_or(am.format);
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
        let mut pa = arith::prepare(am, j.va, cli.arith.hdf_upk);
        pa.place_as(&meta.vars[j.out]);
        let pb = arith::prepare(bm, j.vb, cli.arith.hdf_upk);
        // Results can be missing when either operand has missing values, or when an
        // integer result divides by zero: then the output needs a _FillValue, decided
        // here because the definitions are written before any data.
        let int_div = op == BinOp::Div && !pa.out.ty.is_float();
        let zero_divisor = int_div && {
            let x = b.read(j.vb, &sel_b.for_var(bm, j.vb))?;
            pb.unpacked(&x).contains(&0.0)
        };
        if (pb.in_fill.is_some() || zero_divisor) && pa.out.attr("_FillValue").is_none() {
            let ty = pa.out.ty;
            nco_core::fill::set_fill_attr(&mut pa.out, ty, pa.out_fill);
        }
        meta.vars[j.out] = pa.out.clone();
        procs.push((pa, pb));
    }
    if !cli.std.common.no_history {
        output::stamp_history(&mut meta, &argv);
    }
    arith::stamp_threads(&mut meta, cli.std.common.threads);
    let tmp = TempOutput::new(&out_path, prog)?;
    let mut of = OutFile::create(tmp.path(), &meta, cli.std.format.hdr_pad.unwrap_or(0))?;
    // Copied variables first, then the computed ones.
    let computed: Vec<bool> = (0..vars.len())
        .map(|o| jobs.iter().any(|j| j.out == o))
        .collect();
    for (o, &v) in vars.iter().enumerate() {
        if !computed[o] {
            extract::copy_unchanged(&a, v, &sel_a, &mut of, o)?;
        }
    }
    // The operands of each job: (larger file, its variable, its selection, smaller
    // file, variable, selection), and the smaller operand read whole when it is
    // broadcast through a map.
    type Side<'d> = (&'d Dataset, usize, Vec<Vec<usize>>);
    let sides: Vec<(Side<'_>, Side<'_>)> = jobs
        .iter()
        .map(|j| {
            let sa = (&a, j.va, sel_a.for_var(am, j.va));
            let sb = (&b, j.vb, sel_b.for_var(bm, j.vb));
            if j.swap {
                (sb, sa)
            } else {
                (sa, sb)
            }
        })
        .collect();
    let mut small_whole: Vec<Option<Vec<f64>>> = Vec::with_capacity(jobs.len());
    for ((j, (pa, pb)), (_, (small, small_id, small_idx))) in jobs.iter().zip(&procs).zip(&sides) {
        let psmall = if j.swap { pa } else { pb };
        small_whole.push(match &j.map {
            Some(_) => Some(psmall.unpacked(&small.read(*small_id, small_idx)?)),
            None => None,
        });
    }
    // Units of about 256 KiB of the larger operand (rows, or pieces of a row), computed
    // in parallel windows while the previous window is written
    // (pipeline::for_each_ordered).
    let mut units: Vec<(usize, nco_core::pipeline::Block)> = Vec::new();
    for (ji, ((big, big_id, big_idx), _)) in sides.iter().enumerate() {
        let es = big.meta().vars[*big_id].ty.size();
        let blocks = nco_core::pipeline::blocks(big_idx, es, 256 << 10);
        units.extend(blocks.into_iter().map(|b| (ji, b)));
    }
    // Values of a unit, with its count of integer divisions by zero and of overflows.
    let compute = |u: usize| -> Result<(nco_core::types::Values, usize, usize)> {
        let (ji, unit) = &units[u];
        let ji = *ji;
        let (j, (pa, pb)) = (&jobs[ji], &procs[ji]);
        let ((big, big_id, big_idx), (small, small_id, small_idx)) = &sides[ji];
        let (pbig, psmall) = if j.swap { (pb, pa) } else { (pa, pb) };
        let block = |idx: &[Vec<usize>]| unit.select(idx);
        let xbig = big.read(*big_id, &block(big_idx))?;
        let fill = pa.out_fill;
        if pa.pack.is_none() && pb.pack.is_none() && j.map.is_none() && !j.swap {
            // Same shapes, no packing: compute in the stored type when it is exact.
            let xs = small.read(*small_id, &block(small_idx))?;
            if let Some(vals) =
                binary::apply_same_float(op, &xbig, pa.in_fill, &xs, pb.in_fill, fill)
            {
                return Ok((vals, 0, 0));
            }
        }
        let fbig = pbig.unpacked(&xbig);
        let start = unit.offset(big_idx);
        let fsmall: Vec<f64> = match (&small_whole[ji], &j.map) {
            (Some(s), Some(m)) => m[start..start + fbig.len()].iter().map(|&k| s[k]).collect(),
            _ => psmall.unpacked(&small.read(*small_id, &block(small_idx))?),
        };
        let (fa, fb) = if j.swap {
            (&fsmall, &fbig)
        } else {
            (&fbig, &fsmall)
        };
        let (fa_miss, fb_miss) = (
            pa.in_fill.map(|_| pa.out_fill),
            pb.in_fill.map(|_| pb.out_fill),
        );
        let mut r = binary::apply(op, fa, fa_miss, fb, fb_miss, None, fill);
        let mut bad = 0;
        if !pa.out.ty.is_float() {
            for v in r.iter_mut().filter(|v| !v.is_finite()) {
                *v = fill;
                bad += 1;
            }
            if op == BinOp::Div {
                // Integer division truncates toward zero, as C's does in NCO (7/-2 is -3),
                // where the conversion of other results rounds.
                for v in r.iter_mut() {
                    *v = v.trunc();
                }
            }
        }
        let (vals, over) = nco_core::kernels::to_values_plain(&r, pa.out.ty);
        Ok((vals, bad, over))
    };
    let mut counts = vec![(0usize, 0usize); jobs.len()];
    nco_core::pipeline::for_each_ordered(units.len(), compute, |u, (vals, bad, over)| {
        let (ji, unit) = &units[u];
        counts[*ji].0 += bad;
        counts[*ji].1 += over;
        let ((_, _, big_idx), _) = &sides[*ji];
        of.write_at(jobs[*ji].out, &unit.first(big_idx), &vals)
    })?;
    for ((pa, _), (bad, over)) in procs.iter().zip(counts) {
        if bad > 0 {
            eprintln!("{prog}: WARNING {bad} element(s) of {} are divisions by zero; written as the fill value", pa.out.name);
        }
        arith::warn_overflow(prog, &pa.out.name, pa.out.ty, over);
    }
    of.finish()?;
    tmp.commit()
}
