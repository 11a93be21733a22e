//! ncwa, the netCDF Weighted Averager: statistics of variables over some or all of
//! their dimensions, with weights (`-w`), masks (`-m -M -T`, `-B`), hyperslabs and
//! NCO's rules for coordinates (NCO manual, "ncwa netCDF Weighted Averager").
//!
//! `ncwa [options] in.nc out.nc`. Reduced dimensions disappear (or stay with size 1
//! with `-b`); variables without a reduced dimension are copied unchanged; the
//! coordinates of reduced dimensions are averaged whatever `-y` says.

use clap::{CommandFactory, Parser};
use rayon::prelude::*;

use nco_core::arith::{self, ProcVar};
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::extract::{self, StorageArgs};
use nco_core::hyperslab::{self, Selection};
use nco_core::kernels::{self, reduce::Accum, reduce::Broadcast, reduce::Op};
use nco_core::model::{Dim, Meta, Var};
use nco_core::output::{self, TempOutput};
use nco_core::types::Values;
use nco_core::{Error, Result};

/// ncwa command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncwa",
    about = "netCDF Weighted Averager: averages (and other statistics) over dimensions, with weights and masks (NCO-compatible)",
    after_help = "Examples:\n  ncwa -a lat,lon -w gw in.nc out.nc        area-weighted mean\n  ncwa -y max -a time in.nc out.nc           maximum over time\n  ncwa -B 'lat < -60.0' -a lat in.nc out.nc  mean south of 60S"
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub arith: cli::ArithArgs,
    /// Dimensions to reduce, comma-separated (default: all)
    #[arg(short = 'a', long = "avg", visible_aliases = ["average", "dmn_avg"], value_name = "DIMS")]
    pub avg: Option<String>,
    /// Keep reduced dimensions with size 1
    #[arg(
        short = 'b',
        long = "rdd",
        visible_alias = "retain-degenerate-dimensions"
    )]
    pub retain: bool,
    /// Weight variable
    #[arg(short = 'w', long = "wgt_var", visible_aliases = ["weight", "wgt"], value_name = "VAR")]
    pub weight: Option<String>,
    /// Return the weighted sum (numerator only, no normalisation)
    #[arg(short = 'N', long = "nmr", visible_alias = "numerator")]
    pub numerator: bool,
    /// Mask variable
    #[arg(short = 'm', long = "msk_nm", visible_aliases = ["msk_var", "mask-variable", "mask_variable"], value_name = "VAR")]
    pub mask_var: Option<String>,
    /// Mask value compared with the mask variable (default 1.0)
    #[arg(short = 'M', long = "msk_val", visible_aliases = ["mask-value", "mask_value"], value_name = "VALUE", allow_hyphen_values = true)]
    pub mask_value: Option<f64>,
    /// Mask comparator: eq, ne, gt, ge, lt, le (default eq)
    #[arg(short = 'T', long = "mask_comparator", visible_aliases = ["msk_cmp_typ", "op_rlt"], value_name = "OP")]
    pub mask_op: Option<String>,
    /// Mask condition, e.g. 'lat < -60.0'
    #[arg(short = 'B', long = "mask_condition", visible_aliases = ["msk_cnd", "msk_cnd_sng"], value_name = "COND", allow_hyphen_values = true)]
    pub mask_condition: Option<String>,
    /// Statistic: avg, sqravg, avgsqr, max, min, rms, rmssdn, sqrt, ttl, mabs, mebs, mibs, tabs
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP"
    )]
    pub op: Option<String>,
    /// Do not weight or mask coordinate variables
    #[arg(
        short = 'I',
        long = "wgt_msk_crd_var",
        visible_alias = "weight_mask_coordinate_variables"
    )]
    pub no_coord_weight: bool,
    /// Do not write cell_methods attributes
    #[arg(long = "no_cll_mth", visible_alias = "no_cell_methods")]
    pub no_cell_methods: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// A mask comparison.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaskTest {
    /// Comparator.
    pub op: Cmp,
    /// Value compared with.
    pub value: f64,
}

/// Relational operator of a mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// ==
    Eq,
    /// !=
    Ne,
    /// >
    Gt,
    /// >=
    Ge,
    /// <
    Lt,
    /// <=
    Le,
}

impl Cmp {
    /// Parse `eq ne gt ge lt le` or `== != > >= < <=`.
    pub fn parse(s: &str) -> Option<Cmp> {
        Some(match s {
            "eq" | "==" | "=" => Cmp::Eq,
            "ne" | "!=" => Cmp::Ne,
            "gt" | ">" => Cmp::Gt,
            "ge" | ">=" => Cmp::Ge,
            "lt" | "<" => Cmp::Lt,
            "le" | "<=" => Cmp::Le,
            _ => return None,
        })
    }

    fn test(self, x: f64, v: f64) -> bool {
        match self {
            Cmp::Eq => x == v,
            Cmp::Ne => x != v,
            Cmp::Gt => x > v,
            Cmp::Ge => x >= v,
            Cmp::Lt => x < v,
            Cmp::Le => x <= v,
        }
    }
}

/// Parse a `-B` condition `var op value` (spaces optional).
///
/// Errors name the option and the text.
pub fn parse_condition(s: &str) -> Result<(String, MaskTest)> {
    let bad = || {
        Error::option(
            "-B",
            format!("cannot parse mask condition \"{s}\" (expected e.g. 'lat < -60.0')"),
        )
    };
    let ops = ["<=", ">=", "==", "!=", "<", ">"];
    for op in ops {
        if let Some(i) = s.find(op) {
            let name = s[..i].trim();
            let val = s[i + op.len()..].trim();
            if name.is_empty() {
                return Err(bad());
            }
            let value: f64 = val.parse().map_err(|_| bad())?;
            let cmp = Cmp::parse(op).ok_or_else(bad)?;
            return Ok((name.to_string(), MaskTest { op: cmp, value }));
        }
    }
    Err(bad())
}

/// Bytes read per block when streaming a variable.
const BLOCK_BYTES: usize = 8 << 20;

struct Aux {
    values: Vec<f64>,
    dims: Vec<usize>,
}

/// Strides into an auxiliary array (dims `aux`, shape from the selection) for each
/// dimension of `var_dims`; `None` when `aux` is not a subset of `var_dims`.
fn aux_strides(
    meta: &Meta,
    sel: &Selection,
    var_dims: &[usize],
    aux: &[usize],
) -> Option<Vec<usize>> {
    if !aux.iter().all(|d| var_dims.contains(d)) {
        return None;
    }
    let mut strides = vec![0usize; var_dims.len()];
    let mut acc = 1usize;
    for &d in aux.iter().rev() {
        let k = var_dims.iter().position(|&x| x == d)?;
        strides[k] = acc;
        acc *= sel.len(meta, d);
    }
    Some(strides)
}

enum Job {
    Copy {
        output: usize,
    },
    Reduce {
        pv: Box<ProcVar>,
        output: usize,
        coord: bool,
    },
}

/// Run ncwa with `argv`.
///
/// Errors: bad options, unknown dimension in `-a`, weight or mask variable absent,
/// bad `-T`/`-B`, weights summing to zero, and every I/O error.
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.std.common, &c.std.format))?
    else {
        return Ok(());
    };
    let op = cli.op.as_deref().map_or(Ok(Op::Avg), Op::parse)?;
    let specs = cli.std.slab.specs()?;
    let (inputs, target) = cli.std.inputs_and_target(prog, &argv, 1)?;
    let out_path = target.path.to_string_lossy().into_owned();
    let input = inputs[0].clone();
    let mask_test = match (&cli.mask_condition, &cli.mask_var) {
        (Some(c), _) => Some(parse_condition(c)?),
        (None, Some(m)) => {
            let op = match &cli.mask_op {
                Some(t) => Cmp::parse(t).ok_or_else(|| {
                    Error::option(
                        "-T",
                        format!("unknown comparator \"{t}\" (eq, ne, gt, ge, lt, le)"),
                    )
                })?,
                None => Cmp::Eq,
            };
            Some((
                m.clone(),
                MaskTest {
                    op,
                    value: cli.mask_value.unwrap_or(1.0),
                },
            ))
        }
        (None, None) => None,
    };
    let ds = Dataset::open(&input)?;
    let meta = ds.meta();
    let sel = hyperslab::resolve(
        meta,
        &specs,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| ds.read_all(v),
    )?;
    let vars = nco_core::select::select_input_order(meta, &cli.std.select.select_args())?;
    // Dimensions to reduce.
    let avg_dims: Vec<usize> = match &cli.avg {
        Some(list) => nco_core::select::split_list(list)
            .iter()
            .map(|n| {
                meta.dim_id(n).ok_or_else(|| {
                    Error::option(
                        "-a",
                        format!("dimension {n} is not in the input file {input}"),
                    )
                })
            })
            .collect::<Result<_>>()?,
        None => (0..meta.dims.len()).collect(),
    };
    let read_aux = |name: &str, what: &str| -> Result<Aux> {
        let id = meta.var_id(name).ok_or_else(|| {
            Error::var(
                name,
                format!("{what} variable is not in the input file {input}"),
            )
        })?;
        let pv = arith::prepare(meta, id, cli.arith.hdf_upk);
        let x = ds.read(id, &sel.for_var(meta, id))?;
        Ok(Aux {
            values: pv.unpacked(&x),
            dims: meta.vars[id].dims.clone(),
        })
    };
    let weight = match &cli.weight {
        Some(w) => {
            let a = read_aux(w, "weight")?;
            if a.values.iter().sum::<f64>() == 0.0 {
                return Err(Error::var(w, "weights sum to zero"));
            }
            Some(a)
        }
        None => None,
    };
    let mask = match &mask_test {
        Some((name, t)) => {
            let mut a = read_aux(name, "mask")?;
            for v in &mut a.values {
                *v = if t.op.test(*v, t.value) { 1.0 } else { 0.0 };
            }
            Some(a)
        }
        None => None,
    };
    // Output definitions.
    let mut out = Meta::new(cli.std.format.format()?.unwrap_or(meta.format));
    out.attrs = meta.attrs.clone();
    let mut dim_map: Vec<Option<usize>> = vec![None; meta.dims.len()];
    let mut jobs = Vec::with_capacity(vars.len());
    for &v in &vars {
        let var = &meta.vars[v];
        let reduced: Vec<usize> = var
            .dims
            .iter()
            .copied()
            .filter(|d| avg_dims.contains(d))
            .collect();
        let mut odims = Vec::new();
        for &d in &var.dims {
            let is_red = reduced.contains(&d);
            if is_red && !cli.retain {
                continue;
            }
            let od = *dim_map[d].get_or_insert_with(|| {
                let len = if avg_dims.contains(&d) {
                    1
                } else {
                    sel.len(meta, d)
                };
                out.dims.push(Dim {
                    name: meta.dims[d].name.clone(),
                    len,
                    unlimited: meta.dims[d].unlimited,
                });
                out.dims.len() - 1
            });
            odims.push(od);
        }
        let output = out.vars.len();
        if reduced.is_empty() {
            let mut ov = var.clone();
            ov.dims = odims;
            out.vars.push(ov);
            jobs.push(Job::Copy { output });
            continue;
        }
        let mut pv = arith::prepare(meta, v, cli.arith.hdf_upk);
        pv.out.dims = odims;
        if mask.is_some() && pv.out.attr("_FillValue").is_none() {
            // With a mask NCO gives every averaged variable a _FillValue (the type's
            // default), whether or not an element ends up masked out.
            let ty = pv.out.ty;
            nco_core::fill::set_fill_attr(&mut pv.out, ty, pv.out_fill);
        }
        let coord = meta.is_coord_var(var);
        if !cli.no_cell_methods {
            let names: Vec<String> = reduced.iter().map(|&d| meta.dims[d].name.clone()).collect();
            let method = if coord {
                Op::Avg.cell_method()
            } else {
                op.cell_method()
            };
            arith::add_cell_methods(&mut pv.out, &names, method);
        }
        out.vars.push(pv.out.clone());
        jobs.push(Job::Reduce {
            pv: Box::new(pv),
            output,
            coord,
        });
    }
    extract::warn_storage_on_classic(
        prog,
        out.format,
        &StorageArgs {
            deflate: cli.std.format.deflate,
            chunk: cli.std.format.chunk.clone(),
        },
    );
    // Compute in parallel over variables.
    let results: Vec<Result<(usize, Option<Values>, Option<Var>)>> = jobs
        .into_par_iter()
        .map(|job| match job {
            Job::Copy { output, .. } => Ok((output, None, None)),
            Job::Reduce {
                mut pv,
                output,
                coord,
            } => {
                let var = &meta.vars[pv.id];
                let this_op = if coord { Op::Avg } else { op };
                let apply_aux = !(coord && cli.no_coord_weight);
                let idx = sel.for_var(meta, pv.id);
                let shape: Vec<usize> = idx.iter().map(Vec::len).collect();
                // Output strides: kept dimensions only.
                let mut out_stride = vec![0usize; shape.len()];
                let mut acc_n = 1usize;
                for k in (0..shape.len()).rev() {
                    if !avg_dims.contains(&var.dims[k]) {
                        out_stride[k] = acc_n;
                        acc_n *= shape[k];
                    }
                }
                let wst = weight
                    .as_ref()
                    .filter(|_| apply_aux)
                    .and_then(|w| aux_strides(meta, &sel, &var.dims, &w.dims).map(|s| (w, s)));
                let mst = mask
                    .as_ref()
                    .filter(|_| apply_aux)
                    .and_then(|m| aux_strides(meta, &sel, &var.dims, &m.dims).map(|s| (m, s)));
                let mut acc = Accum::new(this_op, acc_n);
                // Stream the variable in blocks of whole rows of its first dimension.
                ds.read_blocks(pv.id, &idx, BLOCK_BYTES, |pos, x| {
                    let mut bshape = shape.clone();
                    if let Some(first) = bshape.first_mut() {
                        *first = x.len() / shape[1..].iter().product::<usize>().max(1);
                    }
                    let base = if shape.is_empty() {
                        0
                    } else {
                        pos * out_stride[0]
                    };
                    let shift =
                        |b: &(&Aux, Vec<usize>)| if shape.is_empty() { 0 } else { pos * b.1[0] };
                    kernels::add_reduce(
                        &mut acc,
                        &x,
                        &bshape,
                        &out_stride,
                        base,
                        pv.in_fill,
                        pv.pack.as_ref(),
                        wst.as_ref().map(|w| Broadcast {
                            values: &w.0.values[shift(w)..],
                            stride: &w.1,
                        }),
                        mst.as_ref().map(|m| Broadcast {
                            values: &m.0.values[shift(m)..],
                            stride: &m.1,
                        }),
                    );
                    Ok(())
                })?;
                let res = acc.finish(!cli.numerator);
                if res.iter().any(|r| r.is_some_and(f64::is_nan))
                    && wst.is_some()
                    && this_op == Op::Avg
                {
                    return Err(Error::var(
                        &var.name,
                        "weights sum to zero over the averaged elements",
                    ));
                }
                let vals = pv.finish(prog, &res);
                Ok((output, Some(vals), Some(pv.out)))
            }
        })
        .collect();
    let mut computed: Vec<Option<Values>> = vec![None; out.vars.len()];
    for r in results {
        let (o, vals, var) = r?;
        if let Some(v) = var {
            out.vars[o] = v;
        }
        computed[o] = vals;
    }
    if !cli.std.common.no_history {
        output::stamp_history(&mut out, &output::command_line(&argv));
    }
    arith::stamp_threads(&mut out, cli.std.common.threads);
    let tmp = TempOutput::new(&out_path, prog)?;
    let hdr_pad = cli.std.format.hdr_pad.unwrap_or(0);
    let mut of = OutFile::create(tmp.path(), &out, hdr_pad)?;
    for (o, v) in vars.iter().enumerate() {
        match &computed[o] {
            Some(vals) => of.write(o, 0, vals)?,
            None => extract::copy_unchanged(&ds, *v, &sel, &mut of, o)?,
        }
    }
    of.finish()?;
    tmp.commit()
}
