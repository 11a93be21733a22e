//! nces (netCDF Ensemble Statistics, also installed as ncea) and ncecat (netCDF
//! Ensemble Concatenator) (NCO manual, "nces", "ncecat"). The program name picks the
//! mode.
//!
//! * nces: each variable's statistic (`-y`, mean by default) element by element across
//!   the input files (ensemble members), fill values skipped, packed data unpacked;
//!   coordinate variables and their bounds are taken from the first file.
//! * ncecat: the files are glued along a new leading record dimension (`-u name`,
//!   `record` by default) of every variable except coordinates and their bounds; an
//!   existing record dimension becomes fixed; `-M` skips the first file's global
//!   attributes.
//!
//! Memory is bounded by one variable (or hyperslab) times a small constant,
//! independent of the number of members: members are streamed into one accumulator.

use clap::{CommandFactory, Parser};
use std::ffi::OsString;
use std::ops::Range;

use nco_core::arith::{self, ProcVar};
use nco_core::cli::ranks::Ranks;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{Dataset, Piece};
use nco_core::extract::RecordChange;
use nco_core::hyperslab::Selection;
use nco_core::kernels::cast::Casts;
use nco_core::kernels::reduce::{Accum, Op};
use nco_core::model::{Dim, Meta};
use nco_core::partial::{PartFile, Parts};
use nco_core::select::SelectArgs;
use nco_core::target::{Output, Target};
use nco_core::types::Values;
use nco_core::{multifile, pipeline};
use nco_core::{Error, Result};

/// The largest chunk an nces unit holds whole (see [`Members::unit_bytes`]).
const WHOLE_CHUNK_UNIT_BYTES: usize = 64 << 20;

/// nces / ncecat command line.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "nces",
    about = "netCDF Ensemble Statistics (nces, ncea) and Ensemble Concatenator (ncecat), NCO-compatible",
    after_help = "Examples:\n  nces m1.nc m2.nc m3.nc mean.nc             ensemble mean\n  nces -y max -n 32,2,1 m01.nc max.nc        maximum over m01.nc..m32.nc\n  ncecat -u member m1.nc m2.nc all.nc        stack members along 'member'\n  nces --part 1/2 m*.nc p1.nc                half of the members (one job of an array)\n  nces --merge p1.nc p2.nc mean.nc           the parts combined: the whole run's output\n  ncecat --part 2/2 m*.nc p2.nc              the second half of the members, stacked later"
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub arith: cli::ArithArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub inputs: cli::InputListArgs,
    /// Statistic (nces): avg, sqravg, avgsqr, max, min, rms, rmssdn, sqrt, ttl, mabs, mebs, mibs, tabs
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP",
        value_parser = Op::parse
    )]
    pub op: Option<Op>,
    /// Name of the new record dimension (ncecat)
    #[arg(
        short = 'u',
        long = "ulm_nm",
        visible_alias = "rcd_nm",
        value_name = "NAME"
    )]
    pub record_name: Option<String>,
    /// Do not copy the first file's global attributes (ncecat)
    #[arg(short = 'M', long = "glb_mtd_spp", visible_alias = "no_glb_mtd")]
    pub no_global_meta: bool,
    /// Weights of the members (nces, with the mean): one number per input file,
    /// w1,w2,...; the result is Σwx / Σw over the members valid at each element
    #[arg(
        short = 'w',
        long = "wgt",
        visible_aliases = ["weight", "wgt_var"],
        value_name = "W1,W2,...",
        allow_hyphen_values = true,
        value_parser = parse_weights
    )]
    pub weights: Option<MemberWeights>,
    /// Numerator (nces): write the (weighted) sums, not divided by the weights or counts
    #[arg(short = 'N', long = "nmr", visible_aliases = ["numerator", "no_nrm_by_wgt", "no_normalize_by_weight"])]
    pub numerator: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub parts: cli::PartArgs,
}

nco_core::split_cli!(Cli);

/// nces's `-w`: one weight per member, in the order of the inputs.
#[derive(Clone, Debug)]
pub struct MemberWeights(pub Vec<f64>);

/// Parse `-w w1,w2,...` (numbers).
///
/// Errors: an item that is not a finite number.
fn parse_weights(w: &str) -> Result<MemberWeights> {
    cli::number_list("-w", w).map(MemberWeights)
}

/// Check nces's `-w` weights against the run: one per member; the mean only (NCO
/// 5.1.4 takes weights with other statistics and writes wrong values: infinities,
/// zeros, missing values); positive weights when they divide (a zero total makes NCO
/// 5.1.4 abort on an assertion, a member-wise total of zero would divide by zero).
///
/// Errors: each of those, naming `-w`.
fn check_weights(w: &[f64], members: usize, op: Op, numerator: bool) -> Result<()> {
    if w.len() != members {
        return Err(Error::option(
            "-w",
            format!("{} weights given for {members} input files", w.len()),
        ));
    }
    if op != Op::Avg {
        return Err(Error::option(
            "-w",
            "member weights apply to the mean only (-y avg), not to other statistics",
        ));
    }
    if !numerator && w.iter().any(|&x| x <= 0.0) {
        return Err(Error::option(
            "-w",
            "weights of a mean must be positive (with -N, any numbers give a weighted sum)",
        ));
    }
    Ok(())
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// Run nces/ncea or ncecat (chosen by `prog`).
///
/// Errors: a missing member file, members whose variables differ in shape or type
/// (naming the file and variable), bad options.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    if prog == "ncecat" {
        refuse_statistics(&cli)?;
    }
    match cli::split_run(prog, command, &cli, None)? {
        cli::SplitRun::Merge(run, parts) => execute(prog, &argv, &run, Some(parts)),
        cli::SplitRun::Ranks(ranks) => execute_ranks(prog, &argv, &cli, &ranks),
        cli::SplitRun::Alone => execute(prog, &argv, &cli, None),
    }
}

/// One run of the command line `cli`; `merging`, the part files whose partial
/// statistics replace the reading of members (`--merge`).
fn execute(prog: &str, argv: &[OsString], cli: &Cli, merging: Option<Parts>) -> Result<()> {
    if (cli.parts.part.is_some() || merging.is_some()) && cli.std.common.append {
        return Err(cli::not_in_split_runs("-A"));
    }
    let mut run = Planned::of(prog, argv, cli)?;
    if let Some(parts) = &merging {
        parts.stamp(&mut run.target, !cli.inputs.no_file_list);
    }
    let part = match cli.parts.part {
        Some(spec) => Some(
            cli::part_plan(prog, cli, spec, argv, &run.inputs.files)?
                .stdin_inputs(run.inputs.from_stdin),
        ),
        None => None,
    };
    let mut members = run.members(prog, cli);
    let (op, target, sel_args) = (run.op, &run.target, &run.sel_args);
    if prog == "ncecat" {
        if let Some(plan) = &part {
            members.share = plan.share(run.sets.len());
            let file = plan.create(&target.path)?;
            return members
                .write_stacked_part(cli, target, sel_args, file)
                .map(drop);
        }
        return members
            .concatenate(cli, target, sel_args, merging)?
            .commit();
    }
    if let Some(plan) = &part {
        members.share = plan.share(run.sets.len());
        let file = plan.create(&target.path)?;
        return members
            .write_part(cli, op, target, sel_args, file)
            .map(drop);
    }
    if let Some(parts) = merging {
        members.merge_parts(cli, &run, parts)?;
    }
    members.reduce(cli, op, target, sel_args)?.commit()
}

/// One run of the command line `cli` across MPI `ranks`: each rank accumulates (nces)
/// or reads (ncecat) its share of the members, as `--part` does; rank 0 merges the
/// parts in rank order and writes the output; every step that can fail is agreed on
/// by all ranks.
fn execute_ranks(prog: &str, argv: &[OsString], cli: &Cli, ranks: &Ranks) -> Result<()> {
    if cli.std.common.append {
        return ranks.agree(Err(cli::not_in_split_runs("-A")));
    }
    ranks.agree(multifile::refuse_stdin_under_ranks(
        &cli.std.files,
        cli.std.common.output.as_deref(),
    ))?;
    let run = ranks.agree(Planned::of(prog, argv, cli))?;
    let plan = ranks.agree(cli::part_plan(
        prog,
        cli,
        ranks.spec(),
        argv,
        &run.inputs.files,
    ))?;
    let mut members = run.members(prog, cli);
    members.share = plan.share(run.sets.len());
    let (op, target, sel_args) = (run.op, &run.target, &run.sel_args);
    let concat = prog == "ncecat";
    let name = format!("rank {}", ranks.rank());
    let file = plan.in_memory(&name);
    let mine = ranks.agree(if concat {
        members.write_stacked_part(cli, target, sel_args, file)
    } else {
        members.write_part(cli, op, target, sel_args, file)
    })?;
    ranks.write_on_root(mine, |all| {
        let parts = Parts::from_ranks(prog, all)?;
        members.share = 0..run.sets.len();
        if concat {
            return members.concatenate(cli, target, sel_args, Some(parts));
        }
        members.merge_parts(cli, &run, parts)?;
        members.reduce(cli, op, target, sel_args)
    })
}

/// A run of nces or ncecat planned from its command line: inputs opened, hyperslab,
/// variables and output planned.
struct Planned {
    inputs: multifile::Inputs,
    sets: Vec<Dataset>,
    sel: Selection,
    sel_args: SelectArgs,
    vars: Vec<usize>,
    target: Target,
    op: Op,
}

impl Planned {
    /// Plan the run of `cli`.
    ///
    /// Errors: a missing member file, members whose variables differ in shape or type
    /// (naming the file and variable), bad options.
    fn of(prog: &str, argv: &[OsString], cli: &Cli) -> Result<Planned> {
        let op = cli.op.unwrap_or(Op::Avg);
        let specs = cli.std.slab.specs(prog)?;
        let inputs = multifile::inputs(
            &cli.std.files,
            cli.std.common.output.as_deref(),
            cli.std.common.path.as_deref(),
            cli.inputs.nintap.as_deref(),
        )?;
        let existing = cli.std.common.existing(prog, &inputs.output)?;
        let sets = multifile::open_all(&inputs.files)?;
        let first = sets[0].meta();
        let sel = cli.std.slab.resolve_specs(&sets[0], specs)?;
        let sel_args = cli.std.select_args();
        let vars = nco_core::select::select_input_order(first, &sel_args)?;
        multifile::check_members(&sets, &vars)?;
        if let Some(w) = &cli.weights {
            check_weights(&w.0, sets.len(), op, cli.numerator)?;
        }
        let mut target = cli.std.target(prog, argv, &inputs.output, existing);
        cli.inputs.digests_into(&mut target);
        target.provenance.source = inputs.files.first().cloned();
        if !cli.inputs.no_file_list {
            target.provenance.input_list = inputs.recorded();
        }
        Ok(Planned {
            inputs,
            sets,
            sel,
            sel_args,
            vars,
            target,
            op,
        })
    }

    /// The members of this run, every one of them accumulated.
    fn members<'a>(&'a self, prog: &'a str, cli: &'a Cli) -> Members<'a> {
        Members {
            prog,
            sets: &self.sets,
            sel: &self.sel,
            vars: &self.vars,
            weights: cli.weights.as_ref().map(|w| w.0.as_slice()),
            numerator: cli.numerator,
            hdf: cli.arith.hdf_upk,
            share: 0..self.sets.len(),
            parts: None,
        }
    }
}

/// ncecat's refusal of the options of a statistic (`-y`, `-w`, `-N`, `--cb`).
///
/// Errors: the option given, named.
fn refuse_statistics(cli: &Cli) -> Result<()> {
    if cli.op.is_some() {
        // NCO 5.1.4's ncecat has no -y (it stops with a usage error); ours took it and
        // did nothing with it.
        return Err(Error::option(
            "-y",
            "ncecat concatenates and computes no statistic (use nces -y)",
        ));
    }
    if cli.weights.is_some() || cli.numerator {
        let o = if cli.numerator { "-N" } else { "-w" };
        return Err(Error::option(
            o,
            "ncecat concatenates and computes no statistic",
        ));
    }
    if cli.inputs.climatology.is_some() {
        return Err(Error::option(
            "--cb",
            "climatology bounds are for ncra, ncrcat and nces, not ncecat",
        ));
    }
    Ok(())
}

/// The members of one run (the first one's variables `vars` under `sel`).
struct Members<'a> {
    prog: &'a str,
    sets: &'a [Dataset],
    sel: &'a Selection,
    vars: &'a [usize],
    /// nces `-w`: one weight per member (checked by [`check_weights`]).
    weights: Option<&'a [f64]>,
    /// nces `-N`: the sums, not normalised.
    numerator: bool,
    /// `--hdf_upk`: the HDF packing convention, for each member's own packing.
    hdf: bool,
    /// The members accumulated (all of them, or a `--part`'s share).
    share: Range<usize>,
    /// `--merge`: the run's parts, checked, whose accumulators (by unit key,
    /// [`Members::unit_key`]) replace the reading of the members.
    parts: Option<Parts>,
}

impl Members<'_> {
    /// ncecat's output definitions planned into `target`, and which variables are
    /// stacked ([`Members::stack`]).
    ///
    /// Errors: planning failures (named), as [`Members::stack`].
    fn stack_plan(
        &self,
        cli: &Cli,
        target: &Target,
        sel_args: &SelectArgs,
    ) -> Result<(Meta, Vec<bool>)> {
        let first = self.sets[0].meta();
        let rec_change = RecordChange {
            fix: Some("all".into()),
            make: None,
        };
        let mut meta = target
            .plan_selection(first, self.vars, self.sel, &rec_change, sel_args)?
            .meta;
        let stacked = self.stack(cli, &mut meta)?;
        Ok((meta, stacked))
    }

    /// ncecat: the members stacked along a new record dimension into `target` (every
    /// existing record dimension becomes fixed), read from the members or, merging,
    /// from `parts` (checked first against the run and its plan: every member of
    /// every stacked variable present); the output for the caller to commit.
    ///
    /// Errors: planning, reading and writing failures (named), and as
    /// [`Parts::check_run`] and [`Parts::expect_entries`].
    fn concatenate(
        &self,
        cli: &Cli,
        target: &Target,
        sel_args: &SelectArgs,
        parts: Option<Parts>,
    ) -> Result<Output> {
        let (meta, stacked) = self.stack_plan(cli, target, sel_args)?;
        if let Some(parts) = &parts {
            let options = cli::split_options_text(cli);
            parts.check_run(self.prog, &options, self.sets.len(), None)?;
            parts.expect_entries(|share| self.member_keys(&stacked, share))?;
        }
        let mut out = Output::create(target, meta)?;
        self.write_stacked(&stacked, &mut out, parts)?;
        Ok(out)
    }

    /// The key of ncecat's member `k` of variable `o` (position in `vars`) in a part
    /// file.
    fn member_key(&self, o: usize, k: usize) -> String {
        format!("{}@{k}", self.sets[0].meta().var_path(self.vars[o]))
    }

    /// The keys of ncecat's part holding the members `share`.
    fn member_keys(&self, stacked: &[bool], share: Range<usize>) -> Vec<String> {
        let mut keys = Vec::new();
        for o in (0..self.vars.len()).filter(|&o| stacked[o]) {
            keys.extend(share.clone().map(|k| self.member_key(o, k)));
        }
        keys
    }

    /// ncecat's `--part` (and an MPI rank): the stacked variables of this part's
    /// share of the members, as read, added to `file`; the bytes of a part in memory.
    ///
    /// Errors: planning and read errors, the part file cannot be written (named).
    fn write_stacked_part(
        &self,
        cli: &Cli,
        target: &Target,
        sel_args: &SelectArgs,
        mut file: PartFile<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let (meta, stacked) = self.stack_plan(cli, target, sel_args)?;
        nco_core::rules::formats::storable(&meta)?;
        let first = self.sets[0].meta();
        let vars: Vec<usize> = (0..self.vars.len()).filter(|&o| stacked[o]).collect();
        let pb = nco_core::progress::bar(vars.len() as u64, self.prog);
        let compute = |i: usize| -> Result<Vec<Values>> {
            let v = self.vars[vars[i]];
            let idx = self.sel.for_var(first, v);
            let vals = self
                .share
                .clone()
                .map(|k| {
                    let ds = &self.sets[k];
                    ds.read(ds.meta().var_like(first, v).unwrap_or(v), &idx)
                })
                .collect::<Result<Vec<_>>>()?;
            pb.inc(1);
            Ok(vals)
        };
        pipeline::for_each_ordered(vars.len(), compute, |i, vals| {
            for (k, x) in self.share.clone().zip(&vals) {
                file.add_values(&self.member_key(vars[i], k), x)?;
            }
            Ok(())
        })?;
        pb.finish_and_clear();
        file.finish(self.sets.len())
    }

    /// nces: statistic `op` over the members into `target` (with `--cb`'s climatology
    /// bounds), committed. Results that do not fit an integer output become its fill
    /// value, declared in the header (the output is written again when a variable had
    /// none).
    ///
    /// Errors: planning, reading and writing failures (named).
    fn reduce(&self, cli: &Cli, op: Op, target: &Target, sel_args: &SelectArgs) -> Result<Output> {
        let first = self.sets[0].meta();
        let mut meta = self.plan(target, sel_args)?;
        let procs = self.arithmetic(cli.arith.hdf_upk, &mut meta);
        // --cb: nces writes no cell_methods (NCO 5.1.4 keeps the members').
        let append = cli.std.common.append;
        let climo =
            cli.inputs
                .climatology(self.prog, append, first, &mut meta, self.sets.len(), None)?;
        let out = arith::write_declaring_fills(self.prog, |declare| {
            let mut meta = meta.clone();
            arith::declare_fills(&mut meta, declare);
            let mut out = Output::create(target, meta.clone())?;
            let unfit = self.write_statistics(op, &procs, &meta, &mut out)?;
            if let Some(c) = &climo {
                out.write_climatology(c)?;
            }
            Ok((out, meta, unfit))
        })?;
        Ok(out)
    }

    /// `--merge` (and rank 0 of an MPI run): the parts checked against the run
    /// `run`, each holding the accumulators the run expects, kept in
    /// [`Members::parts`] (merged unit by unit as the output is written).
    ///
    /// Errors: as [`Parts::check_run`] and [`Parts::expect_entries`].
    fn merge_parts(&mut self, cli: &Cli, run: &Planned, parts: Parts) -> Result<()> {
        let options = cli::split_options_text(cli);
        parts.check_run(self.prog, &options, self.sets.len(), None)?;
        let mut meta = self.plan(&run.target, &run.sel_args)?;
        let procs = self.arithmetic(cli.arith.hdf_upk, &mut meta);
        let keys = self.partial_keys(&procs);
        parts.expect_entries(|_| keys.clone())?;
        self.parts = Some(parts);
        Ok(())
    }

    /// nces's output definitions (before the arithmetic's), planned into `target`.
    ///
    /// Errors: planning failures (named).
    fn plan(&self, target: &Target, sel_args: &SelectArgs) -> Result<Meta> {
        let first = self.sets[0].meta();
        Ok(target
            .plan_selection(
                first,
                self.vars,
                self.sel,
                &RecordChange::default(),
                sel_args,
            )?
            .meta)
    }

    /// The bytes of a unit of work over variable `v` of the first member: one chunk
    /// when chunks are larger than 256 KiB, up to [`WHOLE_CHUNK_UNIT_BYTES`]
    /// ([`pipeline::unit_bytes`]), so every member's chunk is decoded once, straight
    /// into the unit's buffer, whatever the number of members. Units of part of a
    /// chunk need every member's decoded chunk kept between units: past the store's
    /// budget (17 members of 9 MB) each unit inflated them all again, 4x NCO's time on
    /// 20 members.
    fn unit_bytes(&self, v: usize) -> usize {
        let var = &self.sets[0].meta().vars[v];
        pipeline::unit_bytes(
            var.storage.chunks.as_deref(),
            var.ty.size(),
            WHOLE_CHUNK_UNIT_BYTES,
        )
    }

    /// The units of work of nces's computed variables: (position in `vars`, first row,
    /// rows), rows of [`Members::unit_bytes`], in output order.
    fn units(&self, procs: &[Option<ProcVar>]) -> Vec<(usize, usize, usize)> {
        let first = self.sets[0].meta();
        let mut units = Vec::new();
        for (o, &v) in self.vars.iter().enumerate() {
            if procs[o].is_none() {
                continue;
            }
            let idx = self.sel.for_var(first, v);
            let size = first.vars[v].ty.size();
            let blocks = pipeline::row_blocks(&idx, size, self.unit_bytes(v));
            units.extend(blocks.into_iter().map(|(pos, len)| (o, pos, len)));
        }
        units
    }

    /// The key of the partial result of unit (variable `o`, first row `pos`) in a part
    /// file.
    fn unit_key(&self, o: usize, pos: usize) -> String {
        format!("{}@{pos}", self.sets[0].meta().var_path(self.vars[o]))
    }

    /// The keys of the partial results of the run (what a merge expects of every
    /// part).
    fn partial_keys(&self, procs: &[Option<ProcVar>]) -> Vec<String> {
        self.units(procs)
            .into_iter()
            .map(|(o, pos, _)| self.unit_key(o, pos))
            .collect()
    }

    /// The accumulator of unit `(o, pos, len)` over the members of [`Members::share`],
    /// weighted by `-w`, each member unpacked and its missing values skipped with its
    /// own attributes.
    ///
    /// Errors: read errors.
    fn accumulate(&self, op: Op, (o, pos, len): (usize, usize, usize)) -> Result<Accum> {
        let first = self.sets[0].meta();
        let v = self.vars[o];
        let mut idx = self.sel.for_var(first, v);
        if let Some(f) = idx.first_mut() {
            *f = f[pos..pos + len].to_vec();
        }
        let n: usize = idx.iter().map(Vec::len).product();
        let mut acc = Accum::new(op, n);
        let mut buf = Vec::new();
        for m in self.share.clone() {
            let ds = &self.sets[m];
            let id = ds.meta().var_like(first, v).unwrap_or(v);
            let w = self.weights.map_or(1.0, |w| w[m]);
            // Each member's own missing value and packing.
            let (fill, pack) = arith::own_fill_and_packing(ds.meta(), id, self.hdf);
            arith::accumulate_from(&mut acc, ds, id, &idx, fill, pack.as_ref(), w, &mut buf)?;
        }
        Ok(acc)
    }

    /// `--part` (and an MPI rank): the accumulators of this part's share of the
    /// members, unit by unit in parallel windows, added to `file` as they come; the
    /// bytes of a part in memory.
    ///
    /// Errors: planning and read errors, the part file cannot be written (named).
    fn write_part(
        &self,
        cli: &Cli,
        op: Op,
        target: &Target,
        sel_args: &SelectArgs,
        mut file: PartFile<'_>,
    ) -> Result<Option<Vec<u8>>> {
        let mut meta = self.plan(target, sel_args)?;
        let procs = self.arithmetic(cli.arith.hdf_upk, &mut meta);
        // An output its format cannot hold (groups in a classic file) fails every part
        // before any work, not the merge.
        nco_core::rules::formats::storable(&meta)?;
        let units = self.units(&procs);
        let pb = nco_core::progress::bar(units.len() as u64, self.prog);
        let compute = |u: usize| -> Result<Accum> {
            let acc = self.accumulate(op, units[u])?;
            pb.inc(1);
            Ok(acc)
        };
        pipeline::for_each_ordered(units.len(), compute, |u, acc| {
            file.add(&self.unit_key(units[u].0, units[u].1), &acc)
        })?;
        pb.finish_and_clear();
        file.finish(self.sets.len())
    }

    /// ncecat's output definitions: the new leading record dimension (`-u`, `record`
    /// by default) added to every variable except coordinate-like ones and the CCM base-date
    /// scalars ([`arith::is_unstacked_by_name`]); without the
    /// first file's global attributes with `-M`. Returns which variables are stacked.
    ///
    /// Errors: the new dimension's name is already taken.
    fn stack(&self, cli: &Cli, meta: &mut Meta) -> Result<Vec<bool>> {
        let first = self.sets[0].meta();
        let stacked: Vec<bool> = self
            .vars
            .iter()
            .map(|&v| {
                !(arith::is_coordinate_like(first, v) || arith::is_unstacked_by_name(first, v))
            })
            .collect();
        let name = cli.record_name.clone().unwrap_or_else(|| "record".into());
        if meta.dim_id(&name).is_some() {
            return Err(Error::option(
                "-u",
                format!("dimension {name} already exists in the input"),
            ));
        }
        meta.dims.insert(
            0,
            Dim {
                name,
                len: self.sets.len(),
                unlimited: true,
                group: 0,
            },
        );
        for v in &mut meta.vars {
            for d in &mut v.dims {
                *d += 1;
            }
        }
        for (o, v) in meta.vars.iter_mut().enumerate() {
            if stacked[o] {
                v.dims.insert(0, 0);
                // Chunks planned for the member's variable (a netCDF-4 input's own)
                // gain one member along the new dimension, as NCO 5.1.4 chunks them.
                if let Some(c) = v
                    .storage
                    .chunks
                    .as_mut()
                    .filter(|c| c.len() + 1 == v.dims.len())
                {
                    c.insert(0, 1);
                }
            }
        }
        if cli.no_global_meta {
            meta.attrs.clear();
        }
        Ok(stacked)
    }

    /// ncecat's data: the `stacked` variables member by member along the new
    /// dimension (from the members, or from `parts` when merging), the others copied
    /// from the first member.
    fn write_stacked(
        &self,
        stacked: &[bool],
        out: &mut Output,
        parts: Option<Parts>,
    ) -> Result<()> {
        let (sets, sel) = (self.sets, self.sel);
        let first = sets[0].meta();
        let pb = nco_core::progress::bar(self.vars.len() as u64, self.prog);
        for (o, &v) in self.vars.iter().enumerate() {
            if !stacked[o] {
                out.copy_unchanged(&sets[0], v, sel, o)?;
            } else {
                let idx = sel.for_var(first, v);
                let len: usize = idx.iter().map(Vec::len).product();
                for (k, ds) in sets.iter().enumerate() {
                    let vals = match &parts {
                        Some(parts) => parts.values(k, &self.member_key(o, k), len)?,
                        None => ds.read(ds.meta().var_like(first, v).unwrap_or(v), &idx)?,
                    };
                    out.write(o, k, &vals)?;
                }
            }
            pb.inc(1);
        }
        pb.finish_and_clear();
        Ok(())
    }

    /// nces's arithmetic plans (none for NCO's fixed variables and text, which are
    /// copied), their definitions put into the planned `meta`.
    fn arithmetic(&self, hdf: bool, meta: &mut Meta) -> Vec<Option<ProcVar>> {
        let first = self.sets[0].meta();
        let mut procs: Vec<Option<ProcVar>> = vec![None; self.vars.len()];
        for (o, &v) in self.vars.iter().enumerate() {
            if arith::is_fixed_by_convention(first, v) || !arith::is_arith(first.vars[v].ty) {
                continue;
            }
            let mut pv = arith::prepare(first, v, hdf);
            pv.place_as(&meta.vars[o]);
            meta.vars[o] = pv.out.clone();
            procs[o] = Some(pv);
        }
        procs
    }

    /// nces's data: copied variables first; then the statistic `op` of the computed
    /// ones across the members, in units of rows of about 256 KiB processed in
    /// parallel windows and written in order: memory is bounded by a few units,
    /// whatever the variable size or the number of members. Returns the counts of
    /// results that did not fit their output type, by [`Meta::var_ref`] of the planned
    /// output `meta`.
    fn write_statistics(
        &self,
        op: Op,
        procs: &[Option<ProcVar>],
        meta: &Meta,
        out: &mut Output,
    ) -> Result<arith::Unfit> {
        let (sets, sel, vars) = (self.sets, self.sel, self.vars);
        let pb = nco_core::progress::bar(vars.len() as u64, self.prog);
        for (o, &v) in vars.iter().enumerate() {
            if procs[o].is_none() {
                out.copy_unchanged(&sets[0], v, sel, o)?;
            }
        }
        let units = self.units(procs);
        // Chunk rows of netCDF-4 outputs are encoded by the thread that computed them:
        // what waits for the writer is the deflated chunks, and the deflating is done
        // in parallel with the rest of the work.
        let encoders: Vec<_> = (0..vars.len())
            .map(|o| procs[o].as_ref().and_then(|_| out.encoder(o)))
            .collect();
        let compute = |u: usize| -> Result<(Piece, Casts)> {
            let (o, pos, _) = units[u];
            let pv = procs[o]
                .as_ref()
                .ok_or_else(|| Error::msg("internal: no arithmetic plan"))?;
            let acc = match &self.parts {
                Some(parts) => parts.accumulator(&self.unit_key(o, pos), op)?,
                None => self.accumulate(op, units[u])?,
            };
            let (vals, casts) = if self.numerator {
                // -N: the bare (weighted) sums, as NCO 5.1.4's nces and ncra write
                // them; an element no member has stays missing (NCO writes 0 there).
                let sums = acc.sums();
                let (ty, fill, mode) = (pv.out.ty, pv.out_fill, pv.overflow);
                nco_core::kernels::to_values_with(&sums, ty, fill, mode)
            } else {
                acc.finish_values(true, pv.out.ty, pv.out_fill, pv.overflow)
            };
            drop(acc);
            let piece = match &encoders[o] {
                Some(e) => e.encode(pos, vals)?,
                None => Piece::Values(vals),
            };
            Ok((piece, casts))
        };
        let mut unfit = arith::Unfit::default();
        // Units of whole large chunks: one per thread in a window (each holds its
        // accumulator, twice the chunk, while computed, and its result until written).
        let large = procs
            .iter()
            .zip(vars)
            .any(|(p, &v)| p.is_some() && self.unit_bytes(v) > pipeline::MAX_CHUNK_UNIT_BYTES);
        let per_thread = if large { 1 } else { 2 };
        pipeline::for_each_ordered_in(units.len(), per_thread, compute, |u, (piece, casts)| {
            let (o, pos, _) = units[u];
            if pos == 0 {
                pb.inc(1);
            }
            if procs[o].is_some() {
                unfit.add(&meta.var_ref(o), casts);
            }
            out.write_piece(o, pos, piece)
        })?;
        pb.finish_and_clear();
        Ok(unfit)
    }
}
