//! ncra (netCDF Record Averager) and ncrcat (netCDF Record Concatenator): record
//! statistics and record concatenation across any number of files (NCO manual, "ncra",
//! "ncrcat"). The program name (or `-Y ncrcat`) picks the mode.
//!
//! * ncra: every record variable is reduced over the selected records of all files (one
//!   output record, or one per sub-cycle with `--mro`), per-file weights `-w w1,w2,...` or
//!   a per-record weight variable `-w var`; the record coordinate is always averaged;
//!   fixed variables are copied from the first file.
//! * ncrcat: the selected records are concatenated; a record coordinate whose `units`
//!   differ from the first file's is rebased to them; fixed variables come from the first
//!   file.
//!
//! Both stream variable by variable with every input open once, so memory is bounded by
//! one record of a variable, not by file size or count.

use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};

use nco_core::arith::{self, ProcVar};
use nco_core::cli::ranks::Ranks;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{self, Dataset};
use nco_core::extract::RecordChange;
use nco_core::hyperslab::{HyperslabSpec, Selection};
use nco_core::kernels::cast::Casts;
use nco_core::kernels::reduce::{Accum, Op};
use nco_core::model::{Meta, Var};
use nco_core::output::{self, Existing};
use nco_core::partial::{PartFile, Parts};
use nco_core::target::{Output, Provenance, Target};
use nco_core::types::Values;
use nco_core::{climatology, groups, multifile, pipeline, stations};
use nco_core::{Error, Result};

/// ncra / ncrcat command line.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "ncra",
    about = "netCDF Record Averager (ncra) and Record Concatenator (ncrcat), NCO-compatible",
    after_help = "Examples:\n  ncra jan.nc feb.nc mar.nc q1.nc           mean over all records\n  ncrcat -d time,0,,2 a.nc b.nc out.nc       every other record of both files\n  ls *.nc | ncra -O out.nc                   file names from standard input\n  ncra --part 2/4 in_*.nc p2.nc              a quarter of the records (one job of an array)\n  ncra --merge p1.nc p2.nc p3.nc p4.nc out.nc  the four parts combined: the whole run's output\n  ncrcat --part 1/2 in_*.nc p1.nc            the first half of the records, as a part file"
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
    /// Statistic (ncra): avg, sqravg, avgsqr, max, min, rms, rmssdn, sqrt, ttl, mabs, mebs, mibs, tabs
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP",
        value_parser = Op::parse
    )]
    pub op: Option<Op>,
    /// Weights: one number per file (w1,w2,...) or a per-record weight variable
    #[arg(short = 'w', long = "wgt", visible_aliases = ["weight", "wgt_var"], value_name = "WEIGHTS", allow_hyphen_values = true, value_parser = WeightArg::parse)]
    pub weight: Option<WeightArg>,
    /// With -w, return the weighted sum (no normalisation)
    #[arg(short = 'N', long = "nmr", visible_aliases = ["numerator", "no_nrm_by_wgt", "no_normalize_by_weight"])]
    pub numerator: bool,
    /// Multi-record output: one output record per sub-cycle
    #[arg(long = "mro")]
    pub mro: bool,
    /// Append the output records to the existing output file (its fixed variables take the inputs' values; not with -O)
    #[arg(long = "rec_apn", visible_alias = "record_append")]
    pub rec_apn: bool,
    /// Do not write cell_methods attributes
    #[arg(long = "no_cll_mth", visible_alias = "no_cell_methods")]
    pub no_cell_methods: bool,
    /// Run as another operator: ncra or ncrcat (NCO's others, such as ncge, are refused)
    #[arg(
        short = 'Y',
        long = "pseudonym",
        visible_alias = "prg_nm",
        value_name = "NAME"
    )]
    pub pseudonym: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub stations: nco_core::stations::StationArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub parts: cli::PartArgs,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// The `-w` argument as given: numbers, or the name of a weight variable.
#[derive(Clone, Debug, PartialEq)]
pub enum WeightArg {
    /// `w1,w2,...`: one number per input file.
    Numbers(Vec<f64>),
    /// The name of a per-record weight variable.
    Var(String),
}

impl WeightArg {
    /// Parse `-w`: a comma-separated list of numbers, otherwise a variable name.
    ///
    /// Errors: an empty argument.
    pub fn parse(w: &str) -> Result<WeightArg> {
        if w.trim().is_empty() {
            return Err(Error::option("-w", "empty weight list"));
        }
        // Not numbers: the name of a weight variable.
        Ok(match cli::number_list("-w", w) {
            Ok(n) => WeightArg::Numbers(n),
            Err(_) => WeightArg::Var(w.to_string()),
        })
    }
}

/// The `-w` weights.
enum Weights {
    None,
    /// One number per input file.
    PerFile(Vec<f64>),
    /// A per-record weight variable.
    Var(String),
}

/// Run ncra or ncrcat (chosen by `prog` or `-Y`).
///
/// Errors: a missing input (named), files whose fixed dimensions or variables
/// disagree, a record hyperslab that selects nothing, an input without a record
/// dimension, bad options.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    // NCO's other pseudonyms (ncge, ncfe...) run other operators' modes: refused, not
    // run as ncra (break test).
    if let Some(p) = cli
        .pseudonym
        .as_deref()
        .filter(|p| !matches!(*p, "ncra" | "ncrcat"))
    {
        return Err(Error::option(
            "-Y",
            format!(
                "pseudonym \"{p}\" is not supported (ncra and ncrcat only; for ensembles use nces)"
            ),
        ));
    }
    let concat = cli.pseudonym.as_deref().unwrap_or(prog) == "ncrcat";
    let prog = if concat { "ncrcat" } else { "ncra" };
    // The station list does not split: it runs as one process, refused under mpirun.
    let single = cli
        .stations
        .list
        .is_some()
        .then(|| format!("{prog} --list"));
    match cli::split_run(prog, command, &cli, single.as_deref())? {
        cli::SplitRun::Merge(run, parts) => execute(prog, &argv, &run, Some(parts)),
        cli::SplitRun::Ranks(ranks) => execute_ranks(prog, &argv, &cli, &ranks),
        cli::SplitRun::Alone => execute(prog, &argv, &cli, None),
    }
}

/// One run of the command line `cli` across MPI `ranks`: each rank accumulates (ncra)
/// or reads (ncrcat) its share of the records, as `--part` does; rank 0 merges the
/// parts in rank order and writes the output. Every step that can fail is agreed on by all ranks
/// ([`Ranks::agree`]), so a failure anywhere stops every rank with nothing written.
fn execute_ranks(prog: &str, argv: &[OsString], cli: &Cli, ranks: &Ranks) -> Result<()> {
    let specs = ranks.agree(cli.std.slab.specs(prog))?;
    ranks.agree(refuse_in_parts(cli))?;
    ranks.agree(multifile::refuse_stdin_under_ranks(
        &cli.std.files,
        cli.std.common.output.as_deref(),
    ))?;
    let (inputs, sets) = ranks.agree(open_inputs(cli))?;
    let plan = ranks.agree(cli::part_plan(prog, cli, ranks.spec(), argv, &inputs.files))?;
    let mut ra = Ra {
        prog,
        argv,
        cli,
        concat: prog == "ncrcat",
        op: cli.op.unwrap_or(Op::Avg),
        inputs: &inputs,
        sets: &sets,
        parts: None,
    };
    let p = ranks.agree(
        ra.target(&inputs.output)
            .and_then(|t| ra.prepare(specs, None, t)),
    )?;
    let name = format!("rank {}", ranks.rank());
    let mine = ranks.agree(ra.write_part(&p, plan.in_memory(&name)))?;
    ranks.write_on_root(mine, |all| {
        ra.merge_parts(&p, Parts::from_ranks(prog, all)?)?;
        ra.emit(p, None)
    })
}

nco_core::split_cli!(Cli);

/// One run of the command line `cli`; `merging`, the part files whose partial
/// statistics replace the reading of records (`--merge`).
fn execute(prog: &str, argv: &[OsString], cli: &Cli, merging: Option<Parts>) -> Result<()> {
    let concat = prog == "ncrcat";
    let op = cli.op.unwrap_or(Op::Avg);
    let specs = cli.std.slab.specs(prog)?;
    if cli.parts.part.is_some() || merging.is_some() {
        refuse_in_parts(cli)?;
    }
    let (inputs, sets) = open_inputs(cli)?;
    let part = match cli.parts.part {
        Some(spec) => Some(
            cli::part_plan(prog, cli, spec, argv, &inputs.files)?.stdin_inputs(inputs.from_stdin),
        ),
        None => None,
    };
    let mut ra = Ra {
        prog,
        argv,
        cli,
        concat,
        op,
        inputs: &inputs,
        sets: &sets,
        parts: None,
    };
    let Some(list) = &cli.stations.list else {
        let target = ra.target(&inputs.output)?;
        let mut p = ra.prepare(specs, None, target)?;
        if let Some(plan) = &part {
            return ra.write_part(&p, plan.create(&p.target.path)?).map(drop);
        }
        if let Some(parts) = merging {
            parts.stamp(&mut p.target, !cli.inputs.no_file_list);
            ra.merge_parts(&p, parts)?;
        }
        return ra.emit(p, None)?.commit();
    };
    if !concat {
        return Err(Error::option(
            "--list",
            "the station list is for ncrcat (and ncks), not ncra",
        ));
    }
    // The station list's plans name variables by their short names (issue 17).
    for (f, ds) in inputs.files.iter().zip(&sets) {
        groups::refuse_subgroups("ncrcat --list", f, ds.meta())?;
    }
    let stations_list = stations::read_list(list)?;
    if inputs.output.as_os_str().is_empty() {
        return ra.many_files(specs, &stations_list);
    }
    ra.station_form(specs, &stations_list)
}

/// The options of a split run that do not split: appending (`-A`, `--rec_apn`) and
/// the station list.
///
/// Errors: each, naming it.
fn refuse_in_parts(cli: &Cli) -> Result<()> {
    let refused = [
        (cli.std.common.append, "-A"),
        (cli.rec_apn, "--rec_apn"),
        (cli.stations.list.is_some(), "--list"),
    ];
    match refused.iter().find(|(given, _)| *given) {
        Some((_, name)) => Err(cli::not_in_split_runs(name)),
        None => Ok(()),
    }
}

/// The inputs (prefixed with `-p`) and the output of the command line, and the opened
/// inputs. With `--list` every positional argument is an input, `-o` names the one
/// output of the station form, and the inputs are mapped into memory.
///
/// Errors: no input or no output given, an input that cannot be opened (named).
fn open_inputs(cli: &Cli) -> Result<(multifile::Inputs, Vec<Dataset>)> {
    if cli.stations.list.is_none() {
        let inputs = multifile::inputs(
            &cli.std.files,
            cli.std.common.output.as_deref(),
            cli.std.common.path.as_deref(),
            cli.inputs.nintap.as_deref(),
        )?;
        let sets = multifile::open_all(&inputs.files)?;
        return Ok((inputs, sets));
    }
    let files: Vec<PathBuf> = cli
        .std
        .files
        .iter()
        .map(|f| cli::with_prefix(cli.std.common.path.as_deref(), f))
        .collect();
    if files.is_empty() {
        return Err(Error::msg("no input files given"));
    }
    let sets = files
        .iter()
        .map(|f| Dataset::open_with(f, &dataset::io_config().mapped()))
        .collect::<Result<Vec<_>>>()?;
    let inputs = multifile::Inputs {
        files,
        output: cli.std.common.output.clone().unwrap_or_default(),
        from_stdin: false,
    };
    Ok((inputs, sets))
}

/// One run of ncra or ncrcat: the command line and the opened inputs.
struct Ra<'a> {
    prog: &'a str,
    argv: &'a [OsString],
    cli: &'a Cli,
    /// ncrcat (concatenate) rather than ncra (reduce).
    concat: bool,
    op: Op,
    inputs: &'a multifile::Inputs,
    sets: &'a [Dataset],
    /// `--merge`: the run's parts, checked; their accumulators (by
    /// [`partial_key`]) or, for ncrcat, their blocks of records (by
    /// [`record_block_key`]) replace the reading of the inputs' records.
    parts: Option<Parts>,
}

/// Everything one output needs before its data: the selected variables, records and
/// hyperslab, the output metadata and the arithmetic plans.
struct Prepared {
    target: Target,
    vars: Vec<usize>,
    sel: Selection,
    picks: Vec<multifile::RecordPick>,
    meta: Meta,
    procs: Vec<Option<ProcVar>>,
    weights: Weights,
    groups: usize,
    out_records: usize,
    appended: Option<Dataset>,
    /// The `--rec_apn` output's lock, held until the new output replaces it.
    lock: Option<output::UpdateLock>,
    base_records: usize,
    /// The later files' time values in the first file's units and calendar.
    times: multifile::TimeAlign,
    /// `--cb`: the time and bounds written over the computed ones.
    climo: Option<climatology::Climatology>,
}

impl Prepared {
    /// The reads (first output record, per-dimension indices; record positions into
    /// the picks) that copy variable `o` (position in `vars`) of this output from the
    /// inputs: concatenated record variables in blocks of about 64 MiB, fixed
    /// variables in one read. Empty for variables computed by ncra.
    fn copy_reads(&self, first: &Meta, o: usize, concat: bool) -> Vec<(usize, Vec<Vec<usize>>)> {
        let v = self.vars[o];
        let var = &first.vars[v];
        let mut idx = self.sel.for_var(first, v);
        if !first.is_record_var(var) {
            // Fixed variables are written from the inputs, over an appended-to
            // output's own (NCO 5.1.4's --rec_apn).
            return vec![(0, idx)];
        }
        if !(concat || self.procs[o].is_none()) {
            return Vec::new();
        }
        let n = if concat {
            self.picks.len()
        } else {
            self.out_records
        };
        self.record_blocks(first, o, 0..n)
            .into_iter()
            .map(|b| {
                let at = self.base_records + b.start;
                idx[0] = b.collect();
                (at, idx.clone())
            })
            .collect()
    }

    /// The records `range` of record variable `o` (position in `vars`) in blocks of
    /// about 64 MiB: how records are copied, and how ncrcat's parts hold them.
    fn record_blocks(&self, first: &Meta, o: usize, range: Range<usize>) -> Vec<Range<usize>> {
        let v = self.vars[o];
        let idx = self.sel.for_var(first, v);
        let row: usize = idx[1..].iter().map(Vec::len).product::<usize>() * first.vars[v].ty.size();
        let per = ((64usize << 20) / row.max(1)).max(1);
        let mut out = Vec::new();
        let mut k = range.start;
        while k < range.end {
            let end = (k + per).min(range.end);
            out.push(k..end);
            k = end;
        }
        out
    }

    /// The number of elements of one record of record variable `o` under the
    /// selection.
    fn record_len(&self, first: &Meta, o: usize) -> usize {
        let idx = self.sel.for_var(first, self.vars[o]);
        idx[1..].iter().map(Vec::len).product()
    }

    /// The records of output group `g` (all of them when there is one output record:
    /// without `--mro` or an interleave).
    fn group(&self, g: usize) -> impl Iterator<Item = &multifile::RecordPick> {
        self.group_in(g, 0..self.picks.len())
    }

    /// The records of output group `g` among the picks `share` (a part's).
    fn group_in(
        &self,
        g: usize,
        share: Range<usize>,
    ) -> impl Iterator<Item = &multifile::RecordPick> {
        let split = self.groups > 1;
        self.picks[share]
            .iter()
            .filter(move |p| p.group == g || !split)
    }
}

impl Ra<'_> {
    /// The target of output `out_path`: an existing output is replaced with `-O`,
    /// merged into with `-A` (the output's own rule, [`Output::create`]) or added to
    /// along the record dimension with `--rec_apn`.
    ///
    /// Errors: both `-O` (or `--rec_apn`) and `-A`, an existing output with neither
    /// and no terminal to ask, a bad format option.
    fn target(&self, out_path: &Path) -> Result<Target> {
        let (prog, cli) = (self.prog, self.cli);
        let common = &cli.std.common;
        // NCO 5.1.4 refuses -O with --rec_apn (both force the output's fate).
        if common.overwrite && cli.rec_apn {
            return Err(Error::option(
                "-O/--rec_apn",
                "overwrite (-O) and record append (--rec_apn) are mutually exclusive",
            ));
        }
        let existing = output::resolve_existing(
            prog,
            out_path,
            common.overwrite || cli.rec_apn,
            common.append,
        )?;
        let mut target = cli.std.target(prog, self.argv, out_path, existing);
        cli.inputs.digests_into(&mut target);
        target.provenance.source = self.inputs.files.first().cloned();
        if !cli.inputs.no_file_list {
            target.provenance.input_list = self.inputs.recorded();
        }
        Ok(target)
    }

    /// One output, first half: check the inputs and options and plan the output to
    /// `target`. `specs` are the hyperslabs, `vars_override` a `-v` list replacing the
    /// command line's.
    fn prepare(
        &self,
        specs: &[HyperslabSpec],
        vars_override: Option<String>,
        mut target: Target,
    ) -> Result<Prepared> {
        let (cli, sets) = (self.cli, self.sets);
        let first = sets[0].meta();
        let rec = multifile::record_dim(sets, self.prog)?;
        let rec_name = first.dims[rec].name.clone();
        multifile::check_record_dims(sets, &rec_name)?;
        let (picks, groups) = self.record_picks(specs, &rec_name)?;
        let times = multifile::TimeAlign::of_picked(sets, &rec_name, Some(&picks))?;
        let fixed_specs: Vec<_> = specs
            .iter()
            .filter(|s| s.dim != rec_name)
            .cloned()
            .collect();
        let sel = cli.std.slab.resolve_specs(&sets[0], &fixed_specs)?;
        let mut sel_args = cli.std.select_args();
        if let Some(v) = &vars_override {
            sel_args.vars = nco_core::select::split_items(v);
        }
        let vars = nco_core::select::select_input_order(first, &sel_args)?;
        multifile::refuse_other_record_dims(first, rec, &vars, self.prog)?;
        nco_core::select::require_processed(
            first,
            &vars,
            &[rec],
            "numeric variable on the record dimension",
        )?;
        multifile::check_fixed_dims(sets, &vars)?;
        let weights = self.weights()?;
        multifile::check_record_vars(sets, &vars)?;
        let out_records = if self.concat { picks.len() } else { groups };
        // Output definitions: the first file's variables, record dimension resized
        // (after the chunk sizes were chosen, as NCO chooses them, from the first
        // file's selected records).
        let plan =
            target.plan_selection(first, &vars, &sel, &RecordChange::default(), &sel_args)?;
        let mut meta = plan.meta;
        if let Some(d) = meta.record_dim() {
            meta.dims[d].len = out_records;
        }
        times.promote(first, &mut meta);
        let procs = self.arithmetic(&vars, &rec_name, &times, &mut meta);
        let climo = self.climatology(&vars, &mut meta)?;
        let (lock, appended) = self.open_appended(&target)?;
        let base_records = appended.as_ref().map_or(0, |a| {
            let m = a.meta();
            m.record_dim().map_or(0, |d| m.dims[d].len)
        });
        if let Some(a) = &appended {
            meta = records_appended(a, &target, &meta, base_records + out_records)?;
            // The output keeps its own global attributes: only history is added.
            target.provenance = Provenance {
                command: target.provenance.command.take(),
                ..Provenance::default()
            };
        }
        Ok(Prepared {
            target,
            vars,
            sel,
            picks,
            meta,
            procs,
            weights,
            groups,
            out_records,
            appended,
            lock,
            base_records,
            times,
            climo,
        })
    }

    /// The records `specs` pick along the record dimension `rec_name` across the inputs,
    /// each with its output group, and the number of groups (output records of ncra).
    /// `--mro` without sub-cycles makes every selected record an output record (NCO
    /// 5.1.4, with or without `-d`); an interleave makes one output record per
    /// interleaved group, `--mro` or not (NCO manual, "Interleave"; NCO 5.1.4
    /// measured); otherwise ncra writes one record.
    ///
    /// Errors: as [`multifile::pick_records_in`].
    fn record_picks(
        &self,
        specs: &[HyperslabSpec],
        rec_name: &str,
    ) -> Result<(Vec<multifile::RecordPick>, usize)> {
        let cli = self.cli;
        let mut picks =
            multifile::pick_records_in(self.sets, specs, rec_name, cli.std.slab.fortran)?;
        let on_rec =
            |f: fn(&HyperslabSpec) -> bool| specs.iter().any(|s| s.dim == rec_name && f(s));
        let grouped = on_rec(|s| s.subcycle.is_some_and(|n| n > 1));
        if cli.mro && !grouped {
            for (i, p) in picks.iter_mut().enumerate() {
                p.group = i;
            }
        }
        let interleaved = on_rec(|s| s.interleave.is_some_and(|n| n > 1));
        let groups = if cli.mro || interleaved {
            picks.iter().map(|p| p.group).max().unwrap_or(0) + 1
        } else {
            1
        };
        Ok((picks, groups))
    }

    /// `--cb`: the climatology bounds of the output `meta` (of the first input's
    /// variables `vars`); each variable's statistic names it in `cell_methods`, and
    /// ncrcat's records are means too (ncclimo's diurnal path; NCO rewrites them the
    /// same way).
    ///
    /// Errors: as [`cli::InputArgs::climatology`].
    fn climatology(
        &self,
        vars: &[usize],
        meta: &mut Meta,
    ) -> Result<Option<climatology::Climatology>> {
        let (cli, first) = (self.cli, self.sets[0].meta());
        let stat = |o: usize| {
            let v = vars.get(o).copied().unwrap_or(0);
            arith::reduction(first, v, self.op, arith::Reducer::Ncra)
                .op
                .cell_method()
        };
        let mean = |_: usize| "mean";
        let over: Option<&dyn Fn(usize) -> &'static str> = match (self.concat, cli.no_cell_methods)
        {
            (_, true) => None,
            (true, false) => Some(&mean),
            (false, false) => Some(&stat),
        };
        let appending = cli.rec_apn || cli.std.common.append;
        cli.inputs
            .climatology(self.prog, appending, first, meta, self.sets.len(), over)
    }

    /// `--rec_apn` into an existing output: its lock and the output opened (its
    /// records come first). The output is locked before it is read, so a concurrent
    /// `--rec_apn` into the same file waits for this one instead of losing its records.
    /// `(None, None)` otherwise.
    ///
    /// Errors: the lock or the open fails; the output or an input has subgroups (their
    /// records would be matched by short name), naming the file.
    fn open_appended(
        &self,
        target: &Target,
    ) -> Result<(Option<output::UpdateLock>, Option<Dataset>)> {
        if !(self.cli.rec_apn && Path::new(&target.path).exists()) {
            return Ok((None, None));
        }
        let lock = output::UpdateLock::acquire(&target.path, self.prog)?;
        let old = Dataset::open(&target.path)?;
        let what = format!("{} --rec_apn", self.prog);
        groups::refuse_subgroups(&what, &target.path, old.meta())?;
        for (f, ds) in self.inputs.files.iter().zip(self.sets) {
            groups::refuse_subgroups(&what, f, ds.meta())?;
        }
        Ok((Some(lock), Some(old)))
    }

    /// The `-w` weights: numbers, one per input, or a weight variable.
    ///
    /// Errors: as many numbers as inputs are not given, or the weight variable is not
    /// in the first input.
    fn weights(&self) -> Result<Weights> {
        let Some(w) = &self.cli.weight else {
            return Ok(Weights::None);
        };
        let n_files = self.sets.len();
        match w {
            WeightArg::Numbers(n) if n.len() == n_files => Ok(Weights::PerFile(n.clone())),
            WeightArg::Numbers(n) => Err(Error::option(
                "-w",
                format!("{} weights given for {n_files} input files", n.len()),
            )),
            WeightArg::Var(v) if self.sets[0].meta().var_id(v).is_none() => {
                Err(Error::var(v, "weight variable is not in the input file"))
            }
            WeightArg::Var(v) => Ok(Weights::Var(v.clone())),
        }
    }

    /// The arithmetic plans of ncra's computed variables (numeric record variables;
    /// none for ncrcat), their definitions put into the planned `meta` with
    /// `cell_methods` on the record dimension `rec_name`.
    fn arithmetic(
        &self,
        vars: &[usize],
        rec_name: &str,
        times: &multifile::TimeAlign,
        meta: &mut Meta,
    ) -> Vec<Option<ProcVar>> {
        let cli = self.cli;
        let first = self.sets[0].meta();
        let mut procs: Vec<Option<ProcVar>> = vec![None; vars.len()];
        for (o, &v) in vars.iter().enumerate() {
            let var = &first.vars[v];
            if !first.is_record_var(var) || self.concat || !arith::is_arith(var.ty) {
                continue;
            }
            let mut pv = arith::prepare(first, v, cli.arith.hdf_upk);
            pv.place_as(&meta.vars[o]);
            let ty = times.output_type(v, pv.out.ty);
            if ty != pv.out.ty {
                // An integer time whose later values are not whole numbers: NC_DOUBLE.
                pv.out.ty = ty;
                nco_core::fill::convert_fill_attrs(&mut pv.out, ty);
                pv.out_fill = nco_core::fill::fill_value(&pv.out)
                    .unwrap_or_else(|| nco_core::fill::default_fill(ty));
                pv.overflow = nco_core::kernels::cast::Overflow::Fill;
            }
            if !cli.no_cell_methods {
                let red = arith::reduction(first, v, self.op, arith::Reducer::Ncra);
                let method = red.op.cell_method();
                arith::add_cell_methods(&mut pv.out, &[rec_name.to_string()], method);
            }
            meta.vars[o] = pv.out.clone();
            procs[o] = Some(pv);
        }
        procs
    }

    /// One output, second half: write the planned output to its temporary file,
    /// returned for the caller to commit. `view`, when given, is the concatenated view
    /// to read from (holding values read ahead for this output); otherwise one is made.
    /// Results that do not fit an integer output are its fill value, declared in the
    /// header ([`arith::write_declaring_fills`]), with one warning line per variable.
    /// The `--rec_apn` lock moves from the plan into the output, held until it commits.
    fn emit(&self, mut p: Prepared, view: Option<&multifile::Concat<'_>>) -> Result<Output> {
        let lock = p.lock.take();
        let mut out =
            arith::write_declaring_fills(self.prog, |declare| self.emit_once(&p, view, declare))?;
        if let Some(l) = lock {
            out.hold(l);
        }
        // Close an appended-to output before the new one replaces it.
        drop(p);
        Ok(out)
    }

    /// One attempt of [`Ra::emit`], with `_FillValue` declared on the variables
    /// `declare`: the output, its definition, and the results that did not fit.
    fn emit_once(
        &self,
        p: &Prepared,
        view: Option<&multifile::Concat<'_>>,
        declare: &[String],
    ) -> Result<(Output, Meta, arith::Unfit)> {
        let sets = self.sets;
        let first = sets[0].meta();
        let mut meta = p.meta.clone();
        arith::declare_fills(&mut meta, declare);
        let mut out = Output::create(&p.target, meta.clone())?;
        if let Some(a) = &p.appended {
            // The appended-to output's records, and its fixed variables the inputs do
            // not replace.
            let replaced = |name: &str| {
                p.vars.iter().any(|&v| {
                    let var = &first.vars[v];
                    var.name == name && !first.is_record_var(var)
                })
            };
            for (i, v) in a.meta().vars.iter().enumerate() {
                if a.meta().is_record_var(v) || !replaced(&v.name) {
                    // Its values stay as they are: --ppc quantizes the new records only,
                    // as NCO 5.1.4 does.
                    let filter = out.writer().take_filter(i);
                    out.copy_selected(a, i, &Selection::default(), i)?;
                    if let Some(f) = filter {
                        out.writer().set_filter(i, f);
                    }
                }
            }
        }
        let own;
        let cc = match view {
            Some(c) => c,
            None => {
                own = concat_view(sets, &p.picks, p.times.clone());
                &own
            }
        };
        let pb = nco_core::progress::bar(p.vars.len() as u64, self.prog);
        // Each variable is computed in parallel windows and written as soon as its turn
        // comes: memory holds a few variables' output records, not the whole output.
        let compute = |o: usize| -> Result<(usize, Vec<(usize, Values)>, Casts)> {
            let v = p.vars[o];
            let var = &first.vars[v];
            let Some(oi) = p.meta.var_like(first, v) else {
                return Ok((o, Vec::new(), Casts::default()));
            };
            let mut chunks = Vec::new();
            if !first.is_record_var(var) {
                for (at, idx) in p.copy_reads(first, o, self.concat) {
                    chunks.push((at, sets[0].read(v, &idx)?));
                }
                return Ok((oi, chunks, Casts::default()));
            }
            let Some(pv) = p.procs[o].as_ref().filter(|_| !self.concat) else {
                if let (true, Some(parts)) = (self.concat, &self.parts) {
                    return Ok((oi, self.merged_records(p, o, parts)?, Casts::default()));
                }
                // Concatenate (ncrcat, or non-arithmetic record variables in ncra), in
                // blocks of records to bound memory.
                for (at, idx) in p.copy_reads(first, o, self.concat) {
                    chunks.push((at, cc.read(v, &idx)?));
                }
                return Ok((oi, chunks, Casts::default()));
            };
            let (chunks, casts) = self.reduce(p, v, pv)?;
            pb.inc(1);
            Ok((oi, chunks, casts))
        };
        let mut unfit = arith::Unfit::default();
        pipeline::for_each_ordered(p.vars.len(), compute, |_, (oi, chunks, casts)| {
            unfit.add(&meta.var_ref(oi), casts);
            for (first_rec, vals) in chunks {
                out.write(oi, first_rec, &vals)?;
            }
            Ok(())
        })?;
        pb.finish_and_clear();
        if let Some(c) = &p.climo {
            out.write_climatology(c)?;
        }
        Ok((out, meta, unfit))
    }

    /// The accumulator of output group `g` of variable `v` (of the first input) over
    /// the picks `share` (all of them, or a part's): every record's values, weighted
    /// by `-w`, time values converted to the first input's units.
    ///
    /// Errors: the weight variable is missing from an input, read errors.
    fn accumulate(
        &self,
        p: &Prepared,
        v: usize,
        pv: &ProcVar,
        g: usize,
        share: Range<usize>,
    ) -> Result<Accum> {
        let first = self.sets[0].meta();
        let red = arith::reduction(first, v, self.op, arith::Reducer::Ncra);
        let mut idx = p.sel.for_var(first, v);
        let n: usize = idx[1..].iter().map(Vec::len).product();
        let mut buf = Vec::new();
        let mut acc = Accum::new(red.op, n);
        for pick in p.group_in(g, share) {
            let ds = &self.sets[pick.file];
            let vid = ds.meta().var_like(first, v).unwrap_or(v);
            idx[0] = vec![pick.record];
            let w = record_weight(&p.weights, ds, pick)?;
            let w = if red.weighted { w } else { 1.0 };
            if p.times.get(pick.file, v).is_some() {
                self.add_converted(&mut acc, p, pick.file, v, vid, &idx, pv, w)?;
                continue;
            }
            // Each input's own missing value and packing.
            let (fill, pack) = arith::own_fill_and_packing(ds.meta(), vid, self.cli.arith.hdf_upk);
            arith::accumulate_from(&mut acc, ds, vid, &idx, fill, pack.as_ref(), w, &mut buf)?;
        }
        Ok(acc)
    }

    /// The variables (of the first input) whose records ncra reduces: with their
    /// position in the output plan and their arithmetic plan.
    fn reduced<'p>(&self, p: &'p Prepared) -> Vec<(usize, &'p ProcVar)> {
        let first = self.sets[0].meta();
        if self.concat {
            return Vec::new();
        }
        (0..p.vars.len())
            .filter_map(|o| {
                let v = p.vars[o];
                let pv = p.procs[o].as_ref()?;
                (first.is_record_var(&first.vars[v]) && p.meta.var_like(first, v).is_some())
                    .then_some((v, pv))
            })
            .collect()
    }

    /// The keys of the partial results of the run planned as `p` (what a merge
    /// expects of every part).
    fn partial_keys(&self, p: &Prepared) -> Vec<String> {
        let first = self.sets[0].meta();
        let mut keys = Vec::new();
        for (v, _) in self.reduced(p) {
            keys.extend((0..p.groups).map(|g| partial_key(first, v, g)));
        }
        keys
    }

    /// The record variables ncrcat concatenates: positions in the output plan `p`.
    fn concatenated(&self, p: &Prepared) -> Vec<usize> {
        let first = self.sets[0].meta();
        (0..p.vars.len())
            .filter(|&o| {
                let v = p.vars[o];
                first.is_record_var(&first.vars[v]) && p.meta.var_like(first, v).is_some()
            })
            .collect()
    }

    /// The keys of ncrcat's part holding the records `share`: one per block of
    /// records of every concatenated variable.
    fn record_block_keys(&self, p: &Prepared, share: Range<usize>) -> Vec<String> {
        let first = self.sets[0].meta();
        let mut keys = Vec::new();
        for o in self.concatenated(p) {
            for b in p.record_blocks(first, o, share.clone()) {
                keys.push(record_block_key(first, p.vars[o], b.start));
            }
        }
        keys
    }

    /// ncrcat's `--part` (and an MPI rank): this part's share of the selected records
    /// of every record variable, in blocks as the output gets them (time values
    /// already in the first input's units), variables in parallel windows.
    ///
    /// Errors: read errors, the part file cannot be written (named).
    fn write_record_part(&self, p: &Prepared, mut file: PartFile<'_>) -> Result<Option<Vec<u8>>> {
        let first = self.sets[0].meta();
        let share = file.share(p.picks.len());
        let cc = concat_view(self.sets, &p.picks, p.times.clone());
        let vars = self.concatenated(p);
        let pb = nco_core::progress::bar(vars.len() as u64, self.prog);
        let compute = |k: usize| -> Result<Vec<(String, Values)>> {
            let o = vars[k];
            let v = p.vars[o];
            let mut idx = p.sel.for_var(first, v);
            let mut blocks = Vec::new();
            for b in p.record_blocks(first, o, share.clone()) {
                let key = record_block_key(first, v, b.start);
                idx[0] = b.collect();
                blocks.push((key, cc.read(v, &idx)?));
            }
            pb.inc(1);
            Ok(blocks)
        };
        pipeline::for_each_ordered(vars.len(), compute, |_, blocks| {
            for (key, vals) in &blocks {
                file.add_values(key, vals)?;
            }
            Ok(())
        })?;
        pb.finish_and_clear();
        file.finish(p.picks.len())
    }

    /// ncrcat's `--merge`: the blocks of record variable `o` (position in the plan
    /// `p`) from the parts holding them, each at its output record.
    ///
    /// Errors: as [`Parts::values`].
    fn merged_records(
        &self,
        p: &Prepared,
        o: usize,
        parts: &Parts,
    ) -> Result<Vec<(usize, Values)>> {
        let first = self.sets[0].meta();
        let per = p.record_len(first, o);
        let shares = parts.shares();
        let mut out = Vec::new();
        for share in shares {
            for b in p.record_blocks(first, o, share) {
                let key = record_block_key(first, p.vars[o], b.start);
                let vals = parts.values(b.start, &key, b.len() * per)?;
                out.push((p.base_records + b.start, vals));
            }
        }
        Ok(out)
    }

    /// `--part` (and an MPI rank): the accumulators of this part's share of the
    /// records, of every reduced variable and output group, added to `file` as they
    /// are computed, variables in parallel windows (ncrcat: the records themselves,
    /// [`Ra::write_record_part`]); the bytes of a part in memory.
    ///
    /// Errors: read errors, the part file cannot be written (named).
    fn write_part(&self, p: &Prepared, mut file: PartFile<'_>) -> Result<Option<Vec<u8>>> {
        let first = self.sets[0].meta();
        // An output its format cannot hold (groups in a classic file) fails every part
        // before any work, not the merge.
        nco_core::rules::formats::storable(&p.meta)?;
        if self.concat {
            return self.write_record_part(p, file);
        }
        let share = file.share(p.picks.len());
        let reduced = self.reduced(p);
        let pb = nco_core::progress::bar(reduced.len() as u64, self.prog);
        let compute = |k: usize| -> Result<Vec<Accum>> {
            let (v, pv) = reduced[k];
            let accs = (0..p.groups)
                .map(|g| self.accumulate(p, v, pv, g, share.clone()))
                .collect::<Result<Vec<_>>>()?;
            pb.inc(1);
            Ok(accs)
        };
        pipeline::for_each_ordered(reduced.len(), compute, |k, accs| {
            for (g, acc) in accs.iter().enumerate() {
                file.add(&partial_key(first, reduced[k].0, g), acc)?;
            }
            Ok(())
        })?;
        pb.finish_and_clear();
        file.finish(p.picks.len())
    }

    /// `--merge` (and rank 0 of an MPI run): the parts checked against the run planned
    /// as `p`, each holding what the run expects of it, kept in [`Ra::parts`] for
    /// [`Ra::emit`] (which merges each variable's accumulators as it writes it).
    ///
    /// Errors: as [`Parts::check_run`] and [`Parts::expect_entries`].
    fn merge_parts(&mut self, p: &Prepared, parts: Parts) -> Result<()> {
        let options = cli::split_options_text(self.cli);
        parts.check_run(self.prog, &options, p.picks.len(), None)?;
        if self.concat {
            parts.expect_entries(|share| self.record_block_keys(p, share))?;
        } else {
            let keys = self.partial_keys(p);
            parts.expect_entries(|_| keys.clone())?;
        }
        self.parts = Some(parts);
        Ok(())
    }

    /// ncra's output records of variable `v` (of the first input), one per group:
    /// the statistic over the group's records of every input, weighted by `-w`, with
    /// the counts of results that did not fit the output type.
    ///
    /// Errors: the weight variable is missing from an input, read errors.
    fn reduce(
        &self,
        p: &Prepared,
        v: usize,
        pv: &ProcVar,
    ) -> Result<(Vec<(usize, Values)>, Casts)> {
        let cli = self.cli;
        let first = self.sets[0].meta();
        // Coordinate-like variables (the record coordinate, bounds, auxiliary
        // coordinates) are averaged without weights whatever -y says (NCO 5.1.4).
        let red = arith::reduction(first, v, self.op, arith::Reducer::Ncra);
        let this_op = red.op;
        let mut chunks = Vec::with_capacity(p.groups);
        let mut casts = Casts::default();
        for g in 0..p.groups {
            let acc = match &self.parts {
                Some(parts) => parts.accumulator(&partial_key(first, v, g), this_op)?,
                None => self.accumulate(p, v, pv, g, 0..p.picks.len())?,
            };
            // -N gives the numerator of every average, coordinate-like ones too (NCO).
            let normalize = !cli.numerator;
            // Per-file weights of an average without a fill value take NCO 5.1.4's own
            // normalisation; everything else is typed straight from the accumulator.
            let per_file = match (&p.weights, normalize, this_op) {
                (Weights::PerFile(ws), true, Op::Avg) if red.weighted && pv.in_fill.is_none() => {
                    Some(ws)
                }
                _ => None,
            };
            let Some(ws) = per_file else {
                let (vals, c) = if normalize {
                    acc.finish_values(true, pv.out.ty, pv.out_fill, pv.overflow)
                } else {
                    // -N: the bare sums, not squared or rooted (NCO 5.1.4's ncra).
                    let sums = acc.sums();
                    nco_core::kernels::to_values_with(&sums, pv.out.ty, pv.out_fill, pv.overflow)
                };
                casts = casts.plus(c);
                chunks.push((p.base_records + g, vals));
                continue;
            };
            let mut res = acc.finish(normalize);
            let group: Vec<_> = p.group(g).collect();
            nco_normalisation(&mut res, &group, ws);
            let (vals, c) =
                nco_core::kernels::to_values_with(&res, pv.out.ty, pv.out_fill, pv.overflow);
            casts = casts.plus(c);
            chunks.push((p.base_records + g, vals));
        }
        Ok((chunks, casts))
    }
}

impl Ra<'_> {
    /// Add the values of time variable `v` (of the first input; `vid` in input `file`)
    /// under `idx` into `acc`, converted to the first input's units and calendar
    /// ([`multifile::TimeAlign`]): read with the input's own fill value and packing, as
    /// a packing composed with the conversion when it is affine, through dates
    /// otherwise.
    ///
    /// Errors: read errors, a date the first input's calendar lacks.
    #[allow(clippy::too_many_arguments)]
    fn add_converted(
        &self,
        acc: &mut Accum,
        p: &Prepared,
        file: usize,
        v: usize,
        vid: usize,
        idx: &[Vec<usize>],
        pv: &ProcVar,
        w: f64,
    ) -> Result<()> {
        let ds = &self.sets[file];
        let own = &ds.meta().vars[vid];
        let (own_fill, own_pack) =
            arith::own_fill_and_packing(ds.meta(), vid, self.cli.arith.hdf_upk);
        if let Some(pk) = p.times.as_packing(file, v, own_pack.as_ref(), pv.out.ty) {
            let mut buf = Vec::new();
            return arith::accumulate_from(acc, ds, vid, idx, own_fill, Some(&pk), w, &mut buf);
        }
        let x = ds.read(vid, idx)?;
        let miss = own_fill.map(|_| pv.out_fill);
        let mut f =
            nco_core::kernels::to_f64_unpacked(&x, own_fill, own_pack.as_ref(), pv.out_fill);
        p.times.convert(file, v, &own.name, &mut f, miss)?;
        nco_core::kernels::add_elementwise(acc, &Values::Double(f), miss, None, w);
        Ok(())
    }
}

/// The key of ncrcat's block of records of variable `v` of `first` that starts at
/// selected record `start` (counted across the inputs) in a part file.
fn record_block_key(first: &Meta, v: usize, start: usize) -> String {
    format!("{}@{start}", first.var_path(v))
}

/// The key of the partial result of output group `g` of variable `v` of `first` in a
/// part file.
fn partial_key(first: &Meta, v: usize, g: usize) -> String {
    format!("{}#{g}", first.var_path(v))
}

/// The weight of record `pick` of input `ds`.
///
/// Errors: the weight variable is missing from `ds`, read errors.
fn record_weight(weights: &Weights, ds: &Dataset, pick: &multifile::RecordPick) -> Result<f64> {
    Ok(match weights {
        Weights::None => 1.0,
        Weights::PerFile(ws) => ws[pick.file],
        Weights::Var(name) => {
            let wid = ds.meta().var_id(name).ok_or_else(|| {
                Error::var(
                    name,
                    format!("weight variable is missing from {}", ds.path().display()),
                )
            })?;
            ds.read(wid, &[vec![pick.record]])?
                .get_f64(0)
                .unwrap_or(1.0)
        }
    })
}

/// NCO 5.1.4's normalisation of per-file weights `ws` for a variable without a fill
/// value: by the record count of the group `group` times the mean file weight (the
/// same as the weight sum when every file has as many records), where the averaged
/// results `res` were divided by the sum of valid weights; we follow it.
fn nco_normalisation(res: &mut [Option<f64>], group: &[&multifile::RecordPick], ws: &[f64]) {
    let wsum: f64 = group.iter().map(|p| ws[p.file]).sum();
    let mean_w = ws.iter().sum::<f64>() / ws.len() as f64;
    let denom = group.len() as f64 * mean_w;
    if denom != 0.0 {
        for r in res.iter_mut().flatten() {
            *r *= wsum / denom;
        }
    }
}

/// The definitions of `--rec_apn`'s output: the existing output `a`'s (its own
/// variables and attributes), the record dimension grown to `records`.
///
/// Errors: the existing output has no record dimension, or a variable's type differs
/// from the new records' (`planned`).
fn records_appended(a: &Dataset, target: &Target, planned: &Meta, records: usize) -> Result<Meta> {
    let mut am = a.meta().clone();
    let rd = am.record_dim().ok_or_else(|| {
        Error::msg(format!(
            "{}: --rec_apn needs a record dimension",
            target.path.display()
        ))
    })?;
    am.dims[rd].len = records;
    for k in 0..am.vars.len() {
        let Some(mv) = planned.var(&am.vars[k].name) else {
            continue;
        };
        // The new records are quantized as planned (--ppc; Output::create records the
        // attribute).
        am.vars[k].storage.quantize = mv.storage.quantize;
        let v = &am.vars[k];
        if mv.ty != v.ty {
            return Err(Error::var(
                &v.name,
                "type differs between the output and the new records",
            ));
        }
        // New records go beside the output's own, and a fixed variable is written
        // over the output's own: either way its shape (past the record dimension)
        // must agree. NCO 5.1.4 writes a narrower hyperslab into the corner.
        let past_record = |m: &Meta, var: &Var| {
            let mut shape = m.shape(var);
            if m.is_record_var(var) {
                shape.remove(0);
            }
            shape
        };
        if past_record(planned, mv) != past_record(&am, v) {
            return Err(Error::var(
                &v.name,
                format!(
                    "shape {:?} in {} differs from the inputs' {:?}",
                    past_record(&am, v),
                    target.path.display(),
                    past_record(planned, mv)
                ),
            ));
        }
    }
    Ok(am)
}

/// The concatenated view of the inputs ncrcat reads from (time values converted to the
/// first file's units and calendar by `times`; ncra reads its non-arithmetic record
/// variables through it).
fn concat_view<'a>(
    sets: &'a [Dataset],
    picks: &'a [multifile::RecordPick],
    times: multifile::TimeAlign,
) -> multifile::Concat<'a> {
    multifile::Concat::new(sets, picks, times)
}

impl Ra<'_> {
    /// ncrcat's many-files list form: one output per station, each the same as a
    /// separate ncrcat run would write. Every input is read once per batch of stations
    /// (all of them unless their outputs exceed the read-ahead budget), variable by
    /// variable for all stations at once; the outputs are then written in parallel and
    /// renamed into place only when all were written.
    fn many_files(
        &self,
        specs: &[HyperslabSpec],
        stations_list: &[stations::Station],
    ) -> Result<()> {
        let sets = self.sets;
        stations::check_distinct_outputs(stations_list)?;
        let first = sets[0].meta();
        let on_line =
            |line: usize| move |e: Error| Error::msg(format!("station list line {line}: {e}"));
        // Outputs are checked one by one (this may ask on a terminal), then planned in
        // parallel.
        let mut targets = Vec::with_capacity(stations_list.len());
        for st in stations_list {
            targets.push(
                self.target(Path::new(&st.target))
                    .map_err(on_line(st.line))?,
            );
        }
        let jobs: Vec<_> = stations_list.iter().zip(targets).collect();
        let preps = pipeline::try_par_map(jobs, |(st, target)| {
            let merged = stations::merged_specs(specs, st);
            stations::check_inside(first, &|v| sets[0].read_all(v), st)?;
            self.prepare(&merged, st.vars.clone(), target)
                .map_err(on_line(st.line))
        })?;
        // Each station's reads (input variable, indices).
        let reads: Vec<stations::Reads> = preps
            .iter()
            .map(|p| {
                (0..p.vars.len())
                    .flat_map(|o| {
                        let v = p.vars[o];
                        p.copy_reads(first, o, true)
                            .into_iter()
                            .map(move |r| (v, r.1))
                    })
                    .collect()
            })
            .collect();
        // Stations with the same records share one concatenated view of the inputs.
        let mut record_sets: Vec<Vec<multifile::RecordPick>> = Vec::new();
        let mut view_of = Vec::with_capacity(preps.len());
        for p in &preps {
            let g = match record_sets.iter().position(|r| *r == p.picks) {
                Some(g) => g,
                None => {
                    record_sets.push(p.picks.clone());
                    record_sets.len() - 1
                }
            };
            view_of.push(g);
        }
        let times = preps.first().map(|p| p.times.clone()).unwrap_or_default();
        let views: Vec<multifile::Concat<'_>> = record_sets
            .iter()
            .map(|picks| concat_view(sets, picks, times.clone()))
            .collect();
        let written = stations::write_in_batches(
            first,
            preps,
            &stations::ReadAheadPlan {
                reads: &reads,
                group: &view_of,
                prefetch: &|g, v, sels| views[g].prefetch(v, sels),
                clear: &|| views.iter().for_each(|cc| cc.ahead.clear()),
                budget: cli::env::settings().list_batch_bytes,
            },
            &|s, p| {
                self.emit(p, Some(&views[view_of[s]]))
                    .and_then(Output::finish)
                    .map_err(on_line(stations_list[s].line))
            },
        );
        for w in views.iter().flat_map(multifile::Concat::warnings) {
            eprintln!("{}: {w}", self.prog);
        }
        written
    }

    /// ncrcat's station form: one output (`-o`) with a station dimension, the records
    /// of all inputs concatenated for every station.
    fn station_form(
        &self,
        specs: &[HyperslabSpec],
        stations_list: &[stations::Station],
    ) -> Result<()> {
        let (cli, sets) = (self.cli, self.sets);
        let out_path = &self.inputs.output;
        // The station form always writes a new file (-A is accepted, as an overwrite).
        cli.std.common.existing(self.prog, out_path)?;
        let first = sets[0].meta();
        let rec = multifile::record_dim(sets, self.prog)?;
        let rec_name = first.dims[rec].name.clone();
        let picks = multifile::pick_records_in(sets, specs, &rec_name, cli.std.slab.fortran)?;
        let fixed: Vec<_> = specs
            .iter()
            .filter(|s| s.dim != rec_name)
            .cloned()
            .collect();
        let mut base = cli.std.slab.resolve_specs(&sets[0], &fixed)?;
        base.dims[rec] = Some((0..picks.len()).collect());
        let mut selections = Vec::with_capacity(stations_list.len());
        for st in stations_list {
            if st.specs.iter().any(|s| s.dim == rec_name) {
                return Err(Error::msg(format!(
                    "station list line {}: the station form takes record hyperslabs from the command line only",
                    st.line
                )));
            }
            let mut sel = cli.std.slab.resolve_station(&sets[0], &fixed, st)?;
            sel.dims[rec] = Some((0..picks.len()).collect());
            selections.push(sel);
        }
        let vars = nco_core::select::select_input_order(first, &cli.std.select_args())?;
        multifile::check_fixed_dims(sets, &vars)?;
        let mut plan = stations::plan_station_form(
            first,
            &vars,
            &base,
            stations_list,
            selections,
            &cli.stations.station_dim,
        )?;
        let mut target = cli
            .std
            .target(self.prog, self.argv, out_path, Existing::Overwrite);
        target.provenance = Provenance {
            command: target.provenance.command.take(),
            ..Provenance::default()
        };
        plan.meta.format = target.format.unwrap_or(first.format);
        let times = multifile::TimeAlign::of(sets, &rec_name)?;
        times.promote(first, &mut plan.meta);
        let concat = concat_view(sets, &picks, times);
        let mut out = Output::create(&target, plan.meta.clone())?;
        let read = |v: usize, idx: &[Vec<usize>]| concat.read(v, idx);
        stations::write_station_form(&plan, stations_list, first, &base, &read, out.writer())?;
        for w in concat.warnings() {
            eprintln!("{}: {w}", self.prog);
        }
        out.commit()
    }
}
