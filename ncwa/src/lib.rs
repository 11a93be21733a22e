//! ncwa, the netCDF Weighted Averager: statistics of variables over some or all of
//! their dimensions, with weights (`-w`), masks (`-m -M -T`, `-B`), hyperslabs and
//! NCO's rules for coordinates (NCO manual, "ncwa netCDF Weighted Averager").
//!
//! `ncwa [options] in.nc out.nc`. Reduced dimensions disappear (or stay with size 1
//! with `-b`); variables without a reduced dimension are copied unchanged;
//! coordinate-like variables (coordinates, bounds, auxiliary coordinates) are averaged
//! whatever `-y` says (`nco_core::arith::reduction`); `cell_methods` gains the
//! reduction unless it already records it, and `coordinates` attributes name only
//! variables the output has.

use clap::{CommandFactory, Parser};
use rayon::prelude::*;
use std::ffi::OsString;

use nco_core::arith::{self, ProcVar};
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::Dataset;
use nco_core::hyperslab::Selection;
use nco_core::kernels::{self, reduce::Accum, reduce::Broadcast, reduce::Op};
use nco_core::model::{Meta, Var};
use nco_core::rules::mask::{Cmp, MaskExpr};
use nco_core::target::{Output, Target};
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
    #[arg(short = 'T', long = "mask_comparator", visible_aliases = ["msk_cmp_typ", "op_rlt"], value_name = "OP", value_parser = Cmp::parse_option)]
    pub mask_op: Option<Cmp>,
    /// Mask condition, e.g. 'lat < -60.0'
    #[arg(short = 'B', long = "mask_condition", visible_aliases = ["msk_cnd", "msk_cnd_sng"], value_name = "COND", allow_hyphen_values = true)]
    pub mask_condition: Option<String>,
    /// Statistic: avg, sqravg, avgsqr, max, min, rms, rmssdn, sqrt, ttl, mabs, mebs, mibs, tabs
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP",
        value_parser = Op::parse
    )]
    pub op: Option<Op>,
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

/// Bytes read per block when streaming a variable.
const BLOCK_BYTES: usize = 8 << 20;

/// A weight or mask variable, unpacked, under the selection.
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

/// The part of auxiliary array `a` (strides `stride`) from row `first` of the
/// variable's first dimension on.
fn aux_part<'a>(a: &'a Aux, stride: &'a [usize], first: usize) -> Broadcast<'a> {
    let shift = stride.first().map_or(0, |s| first * s);
    Broadcast {
        values: &a.values[shift..],
        stride,
    }
}

/// What happens to each output variable.
enum Job {
    /// Copied unchanged (no reduced dimension).
    Copy,
    /// Reduced (the statistic and weights by [`arith::reduction`]).
    Reduce { pv: Box<ProcVar> },
}

/// Run ncwa with `argv`.
///
/// Errors: bad options, unknown dimension in `-a`, weight or mask variable absent,
/// bad `-T`/`-B`, weights summing to zero, and every I/O error.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    let op = cli.op.unwrap_or(Op::Avg);
    let specs = cli.std.slab.specs(prog)?;
    let (inputs, target) = cli.std.inputs_and_target(prog, &argv, 1)?;
    let input = &inputs[0];
    let mask_test = mask_test(&cli)?;
    let ds = Dataset::open(input)?;
    let meta = ds.meta();
    let sel = cli.std.slab.resolve_specs(&ds, specs)?;
    let vars = nco_core::select::select_input_order(meta, &cli.std.select.select_args())?;
    let avg_dims = reduced_dims(cli.avg.as_deref(), meta, input)?;
    nco_core::select::require_processed(
        meta,
        &vars,
        &avg_dims,
        "numeric variable on a dimension to average",
    )?;
    let weight = match &cli.weight {
        Some(w) => {
            let a = read_aux(&ds, &sel, w, "weight", cli.arith.hdf_upk)?;
            if a.values.iter().sum::<f64>() == 0.0 {
                return Err(Error::var(w, "weights sum to zero"));
            }
            Some(a)
        }
        None => None,
    };
    let mask = match &mask_test {
        Some(cond) => Some(mask_of(&ds, &sel, cond, cli.arith.hdf_upk)?),
        None => None,
    };
    let r = Reduction {
        ds: &ds,
        sel: &sel,
        avg_dims: &avg_dims,
        op,
        weight: weight.as_ref(),
        mask: mask.as_ref(),
        no_coord_weight: cli.no_coord_weight,
        normalize: !cli.numerator,
    };
    let (out, jobs) = define(&cli, &r, &vars, &target)?;
    r.write(prog, &vars, jobs, out, &target)
}

impl Reduction<'_> {
    /// Compute the reduced variables of `jobs` (in parallel over variables) and write
    /// them, with the variables copied unchanged, into the output `out` defines
    /// (positions as `vars`, the input's variables), committed to `target`.
    ///
    /// Errors: reduction, read and write failures (named).
    fn write(
        &self,
        prog: &str,
        vars: &[usize],
        jobs: Vec<Job>,
        mut out: Meta,
        target: &Target,
    ) -> Result<()> {
        let r = self;
        let results: Vec<Result<Option<(Values, Var)>>> = jobs
            .into_par_iter()
            .map(|job| match job {
                Job::Copy => Ok(None),
                Job::Reduce { mut pv } => {
                    let vals = r.reduce(prog, &mut pv)?;
                    Ok(Some((vals, pv.out)))
                }
            })
            .collect();
        let mut computed: Vec<Option<Values>> = vec![None; out.vars.len()];
        for (o, res) in results.into_iter().enumerate() {
            if let Some((vals, var)) = res? {
                out.vars[o] = var;
                computed[o] = Some(vals);
            }
        }
        // `coordinates` attributes name only variables the output has (CF 5: a `-v`
        // subset drops the auxiliary coordinates they name).
        nco_core::select::prune_coordinates(&mut out);
        let mut file = Output::create(target, out)?;
        for (o, v) in vars.iter().enumerate() {
            match &computed[o] {
                Some(vals) => file.write(o, 0, vals)?,
                None => file.copy_unchanged(r.ds, *v, r.sel, o)?,
            }
        }
        file.commit()
    }
}

/// The mask test of `-B`, or of `-m` with `-M` and `-T`: (mask variable, test).
///
/// Errors: a `-B` condition that cannot be parsed, an unknown `-T`.
fn mask_test(cli: &Cli) -> Result<Option<MaskExpr>> {
    Ok(match (&cli.mask_condition, &cli.mask_var) {
        (Some(c), _) => Some(MaskExpr::parse(c)?),
        (None, Some(m)) => {
            let op = cli.mask_op.unwrap_or(Cmp::Eq);
            let value = cli.mask_value.unwrap_or(1.0);
            Some(MaskExpr::compare(m, op, value))
        }
        (None, None) => None,
    })
}

/// The mask of condition `cond` under the selection: 1 where it holds, 0 elsewhere,
/// on the union of the dimensions of the variables it names
/// ([`nco_core::rules::mask`]); applied to the variables that have all of them.
///
/// Errors: a variable of the condition is not in the input (named), read errors.
fn mask_of(ds: &Dataset, sel: &Selection, cond: &MaskExpr, hdf: bool) -> Result<Aux> {
    let meta = ds.meta();
    let mut operands = Vec::new();
    for name in cond.variables() {
        let a = read_aux(ds, sel, &name, "mask", hdf)?;
        operands.push((a.values, a.dims));
    }
    let (values, dims) = cond.eval(&operands, &|d| sel.len(meta, d))?;
    Ok(Aux { values, dims })
}

/// The dimensions `-a` reduces (all without it); a name is every dimension of that name,
/// in any group ([`nco_core::groups::dims_named`]).
///
/// Errors: a dimension not in the input (named).
fn reduced_dims(avg: Option<&str>, meta: &Meta, input: &std::path::Path) -> Result<Vec<usize>> {
    let Some(list) = avg else {
        return Ok((0..meta.dims.len()).collect());
    };
    let mut dims = Vec::new();
    for n in nco_core::select::split_list(list) {
        let named = nco_core::groups::dims_named(meta, &n);
        if named.is_empty() {
            return Err(Error::option(
                "-a",
                format!("dimension {n} is not in the input file {}", input.display()),
            ));
        }
        dims.extend(named);
    }
    Ok(dims)
}

/// Read the weight or mask variable `name` (`what`) under `sel`, unpacked.
///
/// Errors: the variable is not in the input, and read errors.
fn read_aux(ds: &Dataset, sel: &Selection, name: &str, what: &str, hdf: bool) -> Result<Aux> {
    let meta = ds.meta();
    let id = meta.var_id(name).ok_or_else(|| {
        Error::var(
            name,
            format!(
                "{what} variable is not in the input file {}",
                ds.path().display()
            ),
        )
    })?;
    let pv = arith::prepare(meta, id, hdf);
    let x = ds.read(id, &sel.for_var(meta, id))?;
    Ok(Aux {
        values: pv.unpacked(&x),
        dims: meta.vars[id].dims.clone(),
    })
}

/// The output's definitions (planned for `target` as an extraction of `vars`, groups
/// and storage included, [`nco_core::extract::plan_with`]) and what happens to each
/// variable of `vars`: reduced dimensions removed (kept with size 1 with `-b`, their
/// chunk length 1), variables without one copied, the others reduced (with a
/// `_FillValue` when masked, and `cell_methods`).
///
/// Errors: the plan's (a `-g` item that selects nothing, names that collide in a
/// netCDF3 output).
fn define(
    cli: &Cli,
    r: &Reduction<'_>,
    vars: &[usize],
    target: &Target,
) -> Result<(Meta, Vec<Job>)> {
    let (meta, sel, avg_dims) = (r.ds.meta(), r.sel, r.avg_dims);
    let rec = nco_core::extract::RecordChange::default();
    let args = cli.std.select.select_args();
    let mut out = target.plan_selection(meta, vars, sel, &rec, &args)?.meta;
    // The output dimensions the reduction removes (or keeps with size 1).
    let mut reduced_out = vec![false; out.dims.len()];
    for (o, &v) in vars.iter().enumerate() {
        for (k, d) in meta.vars[v].dims.iter().enumerate() {
            if avg_dims.contains(d) {
                reduced_out[out.vars[o].dims[k]] = true;
            }
        }
    }
    for ov in &mut out.vars {
        if let Some(c) = ov.storage.chunks.as_mut() {
            *c = ov
                .dims
                .iter()
                .zip(c.iter())
                .filter(|(&d, _)| cli.retain || !reduced_out[d])
                .map(|(&d, &n)| if reduced_out[d] { 1 } else { n })
                .collect();
        }
        if !cli.retain {
            ov.dims.retain(|&d| !reduced_out[d]);
        }
    }
    if cli.retain {
        for (d, dim) in out.dims.iter_mut().enumerate() {
            if reduced_out[d] {
                dim.len = 1;
            }
        }
    } else {
        let kept: Vec<usize> = (0..out.dims.len()).filter(|&d| !reduced_out[d]).collect();
        let mut renumber = vec![0; out.dims.len()];
        for (new, &old) in kept.iter().enumerate() {
            renumber[old] = new;
        }
        out.dims = kept.iter().map(|&d| out.dims[d].clone()).collect();
        for ov in &mut out.vars {
            for d in &mut ov.dims {
                *d = renumber[*d];
            }
        }
    }
    let mut jobs = Vec::with_capacity(vars.len());
    for (o, &v) in vars.iter().enumerate() {
        let var = &meta.vars[v];
        let reduced: Vec<usize> = var
            .dims
            .iter()
            .copied()
            .filter(|d| avg_dims.contains(d))
            .collect();
        if reduced.is_empty() {
            jobs.push(Job::Copy);
            continue;
        }
        let mut pv = arith::prepare(meta, v, cli.arith.hdf_upk);
        pv.place_as(&out.vars[o]);
        if r.mask.is_some() && pv.out.attr("_FillValue").is_none() {
            // With a mask NCO gives every averaged variable a _FillValue (the type's
            // default), whether or not an element ends up masked out.
            let ty = pv.out.ty;
            nco_core::fill::set_fill_attr(&mut pv.out, ty, pv.out_fill);
        }
        if !cli.no_cell_methods {
            let names: Vec<String> = reduced.iter().map(|&d| meta.dims[d].name.clone()).collect();
            let method = r.reduction(v).op.cell_method();
            arith::add_cell_methods(&mut pv.out, &names, method);
        }
        out.vars[o] = pv.out.clone();
        jobs.push(Job::Reduce { pv: Box::new(pv) });
    }
    Ok((out, jobs))
}

/// The reduction of one run: which dimensions, which statistic, the weights and mask.
struct Reduction<'a> {
    ds: &'a Dataset,
    sel: &'a Selection,
    avg_dims: &'a [usize],
    op: Op,
    weight: Option<&'a Aux>,
    mask: Option<&'a Aux>,
    /// `-I`: coordinates are neither weighted nor masked.
    no_coord_weight: bool,
    /// Divide by the weight sum (not with `-N`).
    normalize: bool,
}

impl Reduction<'_> {
    /// The statistic of variable `v` and whether the weights and mask apply: NCO's
    /// rule for coordinate-like variables ([`arith::reduction`]).
    fn reduction(&self, v: usize) -> arith::Reduction {
        let reducer = arith::Reducer::Ncwa {
            no_coord_weights: self.no_coord_weight,
        };
        arith::reduction(self.ds.meta(), v, self.op, reducer)
    }

    /// The reduced values of the variable `pv` plans, streamed in blocks of whole rows
    /// of its first dimension; `pv`'s output definition gains a `_FillValue` when a
    /// result is missing.
    ///
    /// Errors: weights summing to zero over the averaged elements, read errors.
    fn reduce(&self, prog: &str, pv: &mut ProcVar) -> Result<Values> {
        let (meta, sel) = (self.ds.meta(), self.sel);
        let var = &meta.vars[pv.id];
        let red = self.reduction(pv.id);
        let this_op = red.op;
        let apply_aux = red.weighted;
        let idx = sel.for_var(meta, pv.id);
        let shape: Vec<usize> = idx.iter().map(Vec::len).collect();
        // Output strides: kept dimensions only.
        let mut out_stride = vec![0usize; shape.len()];
        let mut acc_n = 1usize;
        for k in (0..shape.len()).rev() {
            if !self.avg_dims.contains(&var.dims[k]) {
                out_stride[k] = acc_n;
                acc_n *= shape[k];
            }
        }
        let strides = |a: &Aux| aux_strides(meta, sel, &var.dims, &a.dims);
        let wst = self
            .weight
            .filter(|_| apply_aux)
            .and_then(|w| Some((w, strides(w)?)));
        let mst = self
            .mask
            .filter(|_| apply_aux)
            .and_then(|m| Some((m, strides(m)?)));
        let mut acc = Accum::new(this_op, acc_n);
        // A NaN in the data or the weights makes a NaN mean (as in NCO), which is then
        // not the sign of weights summing to zero.
        let mut nan_in = wst
            .as_ref()
            .is_some_and(|(w, _)| w.values.iter().any(|v| !v.is_finite()));
        self.ds.read_blocks(pv.id, &idx, BLOCK_BYTES, |pos, x| {
            // (Only a weighted mean asks; a typed scan, not one dispatch per value.)
            if !nan_in && wst.is_some() {
                nan_in = match &x {
                    Values::Float(v) => v.iter().any(|f| f.is_nan()),
                    Values::Double(v) => v.iter().any(|f| f.is_nan()),
                    _ => false,
                };
            }
            let mut bshape = shape.clone();
            if let Some(first) = bshape.first_mut() {
                *first = x.len() / shape[1..].iter().product::<usize>().max(1);
            }
            let base = if shape.is_empty() {
                0
            } else {
                pos * out_stride[0]
            };
            let first = if shape.is_empty() { 0 } else { pos };
            kernels::add_reduce(
                &mut acc,
                &x,
                &bshape,
                &out_stride,
                base,
                pv.in_fill,
                pv.pack.as_ref(),
                wst.as_ref().map(|(a, st)| aux_part(a, st, first)),
                mst.as_ref().map(|(a, st)| aux_part(a, st, first)),
            );
            Ok(())
        })?;
        let res = acc.finish(self.normalize);
        if !nan_in
            && res.iter().any(|r| r.is_some_and(f64::is_nan))
            && wst.is_some()
            && this_op == Op::Avg
        {
            return Err(Error::var(
                &var.name,
                "weights sum to zero over the averaged elements",
            ));
        }
        // Results that do not fit the output type are its fill value (declared: the
        // header is written after computing), with one warning line.
        let (vals, casts) = pv.finish(&res);
        arith::warn_overflow(prog, &pv.out.name, pv.out.ty, casts, pv.out_fill);
        Ok(vals)
    }
}
