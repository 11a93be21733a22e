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
use std::collections::HashMap;
use std::ffi::OsString;
use std::ops::Range;
use std::path::PathBuf;

use nco_core::arith::{self, ProcVar};
use nco_core::cli::ranks::Ranks;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::Dataset;
use nco_core::hyperslab::Selection;
use nco_core::kernels::{self, reduce::Accum, reduce::Broadcast, reduce::Op};
use nco_core::model::{Meta, Var};
use nco_core::partial::{PartFile, Parts};
use nco_core::rules::mask::{Cmp, MaskExpr};
use nco_core::target::{Output, Target};
use nco_core::types::Values;
use nco_core::{Error, Result};

/// ncwa command line.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "ncwa",
    about = "netCDF Weighted Averager: averages (and other statistics) over dimensions, with weights and masks (NCO-compatible)",
    after_help = "Examples:\n  ncwa -a lat,lon -w gw in.nc out.nc        area-weighted mean\n  ncwa -y max -a time in.nc out.nc           maximum over time\n  ncwa -B 'lat < -60.0' -a lat in.nc out.nc  mean south of 60S\n  ncwa --part 1/2 in.nc p1.nc                half of the variables (by size), as a part file\n  ncwa --merge p1.nc p2.nc out.nc            the parts combined: the whole run's output"
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
    #[command(flatten)]
    #[allow(missing_docs)]
    pub parts: cli::PartArgs,
}

nco_core::split_cli!(Cli, one_input);

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

/// Run ncwa with `argv`: alone, as one part of a split run (`--part`), merging the
/// parts (`--merge`) or across MPI ranks. A split run shares the reduced variables by
/// their size ([`nco_core::rules::partial::PartSpec::share_by`]); each variable is
/// reduced whole by one part, so the merged output is the single process's, bit for
/// bit.
///
/// Errors: bad options, unknown dimension in `-a`, weight or mask variable absent,
/// bad `-T`/`-B`, weights summing to zero, and every I/O error.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    match cli::split_run(prog, command, &cli, None)? {
        cli::SplitRun::Merge(run, parts) => execute(prog, &argv, &run, Some(parts)),
        cli::SplitRun::Ranks(ranks) => execute_ranks(prog, &argv, &cli, &ranks),
        cli::SplitRun::Alone => execute(prog, &argv, &cli, None),
    }
}

/// The run of one command line planned: the input opened, its selection, weights and
/// mask read, the output defined.
struct Planned {
    input: PathBuf,
    target: Target,
    ds: Dataset,
    sel: Selection,
    vars: Vec<usize>,
    avg_dims: Vec<usize>,
    weight: Option<Aux>,
    mask: Option<Aux>,
}

impl Planned {
    /// Plan the run of `cli`.
    ///
    /// Errors: as [`run`]'s, but for the reduction itself.
    fn of(prog: &str, argv: &[OsString], cli: &Cli) -> Result<Planned> {
        let specs = cli.std.slab.specs(prog)?;
        let (inputs, target) = cli.std.inputs_and_target(prog, argv, 1)?;
        let input = inputs[0].clone();
        let mask_test = mask_test(cli)?;
        let ds = Dataset::open(&input)?;
        let meta = ds.meta();
        let sel = cli.std.slab.resolve_specs(&ds, specs)?;
        let vars = nco_core::select::select_input_order(meta, &cli.std.select_args())?;
        let avg_dims = reduced_dims(cli.avg.as_deref(), meta, &input)?;
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
        Ok(Planned {
            input,
            target,
            ds,
            sel,
            vars,
            avg_dims,
            weight,
            mask,
        })
    }

    /// The reduction of the run of `cli`.
    fn reduction<'a>(&'a self, cli: &Cli) -> Reduction<'a> {
        Reduction {
            ds: &self.ds,
            sel: &self.sel,
            avg_dims: &self.avg_dims,
            op: cli.op.unwrap_or(Op::Avg),
            weight: self.weight.as_ref(),
            mask: self.mask.as_ref(),
            no_coord_weight: cli.no_coord_weight,
            normalize: !cli.numerator,
        }
    }
}

/// One run of the command line `cli`; `merging`, the part files whose accumulators
/// replace the reading of the reduced variables (`--merge`).
fn execute(prog: &str, argv: &[OsString], cli: &Cli, merging: Option<Parts>) -> Result<()> {
    let split = cli.parts.part.is_some() || merging.is_some();
    if split && cli.std.common.append {
        return Err(cli::not_in_split_runs("-A"));
    }
    let mut run = Planned::of(prog, argv, cli)?;
    if let Some(parts) = &merging {
        parts.stamp(&mut run.target, false);
    }
    let r = run.reduction(cli);
    let (out, jobs) = define(cli, &r, &run.vars, &run.target)?;
    if let Some(spec) = cli.parts.part {
        nco_core::rules::formats::storable(&out)?;
        let plan = cli::part_plan(prog, cli, spec, argv, std::slice::from_ref(&run.input))?
            .by_sizes(r.sizes(&jobs));
        let file = plan.create(&run.target.path)?;
        return r.write_part(&jobs, file).map(drop);
    }
    let sums = match merging {
        Some(parts) => Some(r.merge_parts(prog, cli, &jobs, parts)?),
        None => None,
    };
    r.write(prog, &run.vars, jobs, out, &run.target, sums)?
        .commit()
}

/// One run of the command line `cli` across MPI `ranks`: each rank reduces its share
/// of the variables (by size, as `--part` does); rank 0 merges the parts in rank order
/// and writes the output. Every step that can fail is agreed on by all ranks, so a
/// failure anywhere stops every rank with nothing written.
fn execute_ranks(prog: &str, argv: &[OsString], cli: &Cli, ranks: &Ranks) -> Result<()> {
    if cli.std.common.append {
        return ranks.agree(Err(cli::not_in_split_runs("-A")));
    }
    let run = ranks.agree(Planned::of(prog, argv, cli))?;
    let r = run.reduction(cli);
    let (out, jobs) = ranks.agree(define(cli, &r, &run.vars, &run.target).and_then(|d| {
        nco_core::rules::formats::storable(&d.0)?;
        Ok(d)
    }))?;
    let plan = ranks
        .agree(cli::part_plan(
            prog,
            cli,
            ranks.spec(),
            argv,
            std::slice::from_ref(&run.input),
        ))?
        .by_sizes(r.sizes(&jobs));
    let name = format!("rank {}", ranks.rank());
    let mine = ranks.agree(r.write_part(&jobs, plan.in_memory(&name)))?;
    ranks.write_on_root(mine, |all| {
        let sums = r.merge_parts(prog, cli, &jobs, Parts::from_ranks(prog, all)?)?;
        r.write(prog, &run.vars, jobs, out, &run.target, Some(sums))
    })
}

/// A reduced variable's partial result: its accumulator, and whether a NaN was met
/// in its data or weights (which tells a NaN mean from weights summing to zero).
type Sum = (Accum, bool);

impl Reduction<'_> {
    /// Compute the reduced variables of `jobs` (in parallel over variables; from
    /// `sums`, the merged parts' accumulators by variable path, when merging) and
    /// write them, with the variables copied unchanged, into the output `out` defines
    /// (positions as `vars`, the input's variables), to be committed to `target`.
    ///
    /// Errors: reduction, read and write failures (named).
    fn write(
        &self,
        prog: &str,
        vars: &[usize],
        jobs: Vec<Job>,
        mut out: Meta,
        target: &Target,
        mut sums: Option<HashMap<String, Sum>>,
    ) -> Result<Output> {
        let r = self;
        let meta = r.ds.meta();
        let given: Vec<Option<Sum>> = jobs
            .iter()
            .map(|job| match (job, sums.as_mut()) {
                (Job::Reduce { pv }, Some(m)) => m.remove(&meta.var_path(pv.id)),
                _ => None,
            })
            .collect();
        let merging = sums.is_some();
        let results: Vec<Result<Option<(Values, Var)>>> = jobs
            .into_par_iter()
            .zip(given)
            .map(|(job, sum)| match job {
                Job::Copy => Ok(None),
                Job::Reduce { mut pv } => {
                    let (acc, nan_in) = match sum {
                        Some(s) => s,
                        None if merging => {
                            return Err(Error::var(
                                &meta.vars[pv.id].name,
                                "internal: no merged partial result",
                            ))
                        }
                        None => r.accumulate(&pv)?,
                    };
                    let vals = r.finish(prog, &mut pv, acc, nan_in)?;
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
        Ok(file)
    }

    /// The sizes (elements under the selection) of the reduced variables of `jobs`,
    /// in order: the items a split run shares.
    fn sizes(&self, jobs: &[Job]) -> Vec<u64> {
        let meta = self.ds.meta();
        reduced_ids(jobs)
            .map(|v| {
                let idx = self.sel.for_var(meta, v);
                idx.iter().map(|d| d.len() as u64).product()
            })
            .collect()
    }

    /// `--part` (and an MPI rank): the accumulators of this part's share of the
    /// reduced variables of `jobs` (in parallel over variables), added to `file`;
    /// the bytes of a part in memory.
    ///
    /// Errors: read errors, the part file cannot be written (named).
    fn write_part(&self, jobs: &[Job], mut file: PartFile<'_>) -> Result<Option<Vec<u8>>> {
        let meta = self.ds.meta();
        let pvs: Vec<&ProcVar> = jobs
            .iter()
            .filter_map(|j| match j {
                Job::Reduce { pv } => Some(pv.as_ref()),
                Job::Copy => None,
            })
            .collect();
        let share = file.share(pvs.len());
        let sums: Vec<Result<Sum>> = pvs[share.clone()]
            .par_iter()
            .map(|pv| self.accumulate(pv))
            .collect();
        let mut buf = Vec::new();
        for (pv, sum) in pvs[share].iter().zip(sums) {
            let (acc, nan_in) = sum?;
            buf.clear();
            buf.push(u8::from(nan_in));
            acc.encode(&mut buf);
            file.add_bytes(&meta.var_path(pv.id), &buf)?;
        }
        file.finish(pvs.len())
    }

    /// `--merge` (and rank 0 of an MPI run): the parts checked against the run of
    /// `cli` (reduced variables `jobs`), each variable's accumulator read from the
    /// part that reduced it, by variable path.
    ///
    /// Errors: as [`Parts::check_run`] and [`Parts::expect_entries`], a damaged
    /// accumulator (naming the part file and variable).
    fn merge_parts(
        &self,
        prog: &str,
        cli: &Cli,
        jobs: &[Job],
        parts: Parts,
    ) -> Result<HashMap<String, Sum>> {
        let meta = self.ds.meta();
        let ids: Vec<usize> = reduced_ids(jobs).collect();
        let sizes = self.sizes(jobs);
        let options = cli::split_options_text(cli);
        parts.check_run(prog, &options, ids.len(), Some(&sizes))?;
        let keys = |share: Range<usize>| -> Vec<String> {
            ids[share].iter().map(|&v| meta.var_path(v)).collect()
        };
        parts.expect_entries(keys)?;
        let mut sums = HashMap::with_capacity(ids.len());
        for (i, &v) in ids.iter().enumerate() {
            let key = meta.var_path(v);
            let (bytes, path) = parts.entry(i, &key)?;
            let damaged = || Error::Format {
                path: path.display().to_string(),
                reason: format!("{key}: damaged accumulator record"),
            };
            let (&flag, rest) = bytes.split_first().ok_or_else(damaged)?;
            let op = self.reduction(v).op;
            let (acc, used) = Accum::decode(op, rest).map_err(|_| damaged())?;
            if flag > 1 || used != rest.len() {
                return Err(damaged());
            }
            sums.insert(key, (acc, flag == 1));
        }
        Ok(sums)
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
    let args = cli.std.select_args();
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

    /// The weights or mask `aux` as they apply to variable `v` (not to a coordinate
    /// NCO's rule exempts, nor to a variable on other dimensions), with their strides
    /// into it ([`aux_strides`]).
    fn applied<'a>(&self, aux: Option<&'a Aux>, v: usize) -> Option<(&'a Aux, Vec<usize>)> {
        let meta = self.ds.meta();
        let a = aux.filter(|_| self.reduction(v).weighted)?;
        Some((a, aux_strides(meta, self.sel, &meta.vars[v].dims, &a.dims)?))
    }

    /// The accumulator of the variable `pv` plans, streamed in blocks of whole rows of
    /// its first dimension, and whether a NaN was met in its data or weights.
    ///
    /// Errors: read errors.
    fn accumulate(&self, pv: &ProcVar) -> Result<Sum> {
        let (meta, sel) = (self.ds.meta(), self.sel);
        let var = &meta.vars[pv.id];
        let red = self.reduction(pv.id);
        let this_op = red.op;
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
        let wst = self.applied(self.weight, pv.id);
        let mst = self.applied(self.mask, pv.id);
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
        Ok((acc, nan_in))
    }

    /// The reduced values of the variable `pv` plans from its accumulator `acc`
    /// ([`Reduction::accumulate`]); `pv`'s output definition gains a `_FillValue`
    /// when a result is missing.
    ///
    /// Errors: weights summing to zero over the averaged elements.
    fn finish(&self, prog: &str, pv: &mut ProcVar, acc: Accum, nan_in: bool) -> Result<Values> {
        let var = &self.ds.meta().vars[pv.id];
        let this_op = self.reduction(pv.id).op;
        let wst = self.applied(self.weight, pv.id);
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

/// The variables (ids in the input) of the reduced jobs of `jobs`, in order.
fn reduced_ids(jobs: &[Job]) -> impl Iterator<Item = usize> + '_ {
    jobs.iter().filter_map(|j| match j {
        Job::Reduce { pv } => Some(pv.id),
        Job::Copy => None,
    })
}
