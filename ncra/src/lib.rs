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

use clap::{CommandFactory, Parser};

use nco_core::arith::{self, ProcVar};
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{self, Dataset, OutFile};
use nco_core::extract::{self, StorageArgs};
use nco_core::hyperslab::{self, Selection};
use nco_core::kernels::reduce::{Accum, Op};
use nco_core::multifile;
use nco_core::output::{self, Existing, TempOutput};
use nco_core::types::Values;
use nco_core::{Error, Result};

/// ncra / ncrcat command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncra",
    about = "netCDF Record Averager (ncra) and Record Concatenator (ncrcat), NCO-compatible",
    after_help = "Examples:\n  ncra jan.nc feb.nc mar.nc q1.nc           mean over all records\n  ncrcat -d time,0,,2 a.nc b.nc out.nc       every other record of both files\n  ls *.nc | ncra -O out.nc                   file names from standard input"
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
        value_name = "OP"
    )]
    pub op: Option<String>,
    /// Weights: one number per file (w1,w2,...) or a per-record weight variable
    #[arg(short = 'w', long = "wgt", visible_aliases = ["weight", "wgt_var"], value_name = "WEIGHTS", allow_hyphen_values = true)]
    pub weight: Option<String>,
    /// With -w, return the weighted sum (no normalisation)
    #[arg(short = 'N', long = "nmr", visible_alias = "numerator")]
    pub numerator: bool,
    /// Multi-record output: one output record per sub-cycle
    #[arg(long = "mro")]
    pub mro: bool,
    /// Append the output records to the existing output file
    #[arg(long = "rec_apn", visible_alias = "record_append")]
    pub rec_apn: bool,
    /// Do not write cell_methods attributes
    #[arg(long = "no_cll_mth", visible_alias = "no_cell_methods")]
    pub no_cell_methods: bool,
    /// Run as another operator (ncrcat)
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
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

enum Weights {
    None,
    PerFile(Vec<f64>),
    Var(String),
}

/// Run ncra or ncrcat (chosen by `prog` or `-Y`).
///
/// Errors: a missing input (named), files whose fixed dimensions or variables
/// disagree, a record hyperslab that selects nothing, an input without a record
/// dimension, bad options.
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.std.common, &c.std.format))?
    else {
        return Ok(());
    };
    let concat = cli.pseudonym.as_deref().unwrap_or(prog) == "ncrcat";
    let prog = if concat { "ncrcat" } else { "ncra" };
    let op = cli.op.as_deref().map_or(Ok(Op::Avg), Op::parse)?;
    let specs = cli.std.slab.specs()?;
    let list_mode = cli.stations.list.is_some();
    let inputs = if list_mode {
        // With --list every positional argument is an input; -o names the one output
        // of the station form.
        let files: Vec<String> = cli
            .std
            .files
            .iter()
            .map(|f| cli::with_prefix(cli.std.common.path.as_deref(), f))
            .collect();
        if files.is_empty() {
            return Err(Error::msg("no input files given"));
        }
        multifile::Inputs {
            files,
            output: cli.std.common.output.clone().unwrap_or_default(),
            from_stdin: false,
        }
    } else {
        multifile::inputs(
            &cli.std.files,
            cli.std.common.output.as_deref(),
            cli.std.common.path.as_deref(),
            cli.inputs.nintap.as_deref(),
        )?
    };
    let sets = if list_mode {
        inputs
            .files
            .iter()
            .map(|f| Dataset::open_with(f, &dataset::io_config().mapped()))
            .collect::<Result<Vec<_>>>()?
    } else {
        multifile::open_all(&inputs.files)?
    };
    let Some(list) = &cli.stations.list else {
        check_output(prog, &cli, &inputs.output)?;
        let p = prepare(
            prog,
            &argv,
            &cli,
            concat,
            op,
            &specs,
            &inputs,
            &sets,
            None,
            &inputs.output,
        )?;
        return emit(prog, &cli, concat, op, &sets, p, None)?.commit();
    };
    if !concat {
        return Err(Error::option(
            "--list",
            "the station list is for ncrcat (and ncks), not ncra",
        ));
    }
    let stations_list = nco_core::stations::read_list(list)?;
    if inputs.output.is_empty() {
        return many_files(
            prog,
            &argv,
            &cli,
            op,
            &specs,
            &inputs,
            &sets,
            &stations_list,
        );
    }
    station_form(prog, &argv, &cli, &specs, &inputs, &sets, &stations_list)
}

/// ncrcat's many-files list form: one output per station, each the same as a separate
/// ncrcat run would write. Every input is read once per batch of stations (all of them
/// unless their outputs exceed [`nco_core::stations::DEFAULT_LIST_BATCH`] or
/// `NCO_RS_LIST_BATCH_MB`), variable by
/// variable for all stations at once; the outputs are then written in parallel and
/// renamed into place only when all were written.
#[allow(clippy::too_many_arguments)]
fn many_files(
    prog: &str,
    argv: &[String],
    cli: &Cli,
    op: Op,
    specs: &[hyperslab::HyperslabSpec],
    inputs: &multifile::Inputs,
    sets: &[Dataset],
    stations_list: &[nco_core::stations::Station],
) -> Result<()> {
    use nco_core::stations;
    stations::check_distinct_outputs(stations_list)?;
    let first = sets[0].meta();
    let on_line =
        |line: usize| move |e: Error| Error::msg(format!("station list line {line}: {e}"));
    // Outputs are checked one by one (this may ask on a terminal), then planned in
    // parallel.
    for st in stations_list {
        check_output(prog, cli, &st.target).map_err(on_line(st.line))?;
    }
    let preps = nco_core::pipeline::try_par_map(stations_list.iter().collect(), |st| {
        let merged = stations::merged_specs(specs, st);
        stations::check_inside(first, &|v| sets[0].read_all(v), st)?;
        prepare(
            prog,
            argv,
            cli,
            true,
            op,
            &merged,
            inputs,
            sets,
            st.vars.clone(),
            &st.target,
        )
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
    let rec_name = preps
        .first()
        .map(|p| p.rec_name.clone())
        .unwrap_or_default();
    let views: Vec<multifile::Concat<'_>> = record_sets
        .iter()
        .map(|picks| concat_view(sets, picks, &rec_name, true))
        .collect();
    stations::write_in_batches(
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
            emit(prog, cli, true, op, sets, p, Some(&views[view_of[s]]))
                .map_err(on_line(stations_list[s].line))
        },
    )
}

/// Everything one output needs before its data: the selected variables, records and
/// hyperslab, the output metadata and the arithmetic plans.
struct Prepared {
    out_path: String,
    vars: Vec<usize>,
    sel: Selection,
    picks: Vec<multifile::RecordPick>,
    rec_name: String,
    meta: nco_core::model::Meta,
    procs: Vec<Option<ProcVar>>,
    weights: Weights,
    groups: usize,
    out_records: usize,
    appended: Option<Dataset>,
    base_records: usize,
}

impl Prepared {
    /// The reads (first output record, per-dimension indices; record positions into
    /// the picks) that copy variable `o` (position in `vars`) of this output from the
    /// inputs: concatenated record variables in blocks of about 64 MiB, fixed
    /// variables in one read. Empty for variables computed by ncra.
    fn copy_reads(
        &self,
        first: &nco_core::model::Meta,
        o: usize,
        concat: bool,
    ) -> Vec<(usize, Vec<Vec<usize>>)> {
        let v = self.vars[o];
        let var = &first.vars[v];
        let mut idx = self.sel.for_var(first, v);
        if !first.is_record_var(var) {
            return if self.appended.is_none() {
                vec![(0, idx)]
            } else {
                Vec::new()
            };
        }
        if !(concat || self.procs[o].is_none()) {
            return Vec::new();
        }
        let n = if concat {
            self.picks.len()
        } else {
            self.out_records
        };
        let row: usize = idx[1..].iter().map(Vec::len).product::<usize>() * var.ty.size();
        let per = ((64usize << 20) / row.max(1)).max(1);
        let mut out = Vec::new();
        let mut k = 0;
        while k < n {
            let end = (k + per).min(n);
            idx[0] = (k..end).collect();
            out.push((self.base_records + k, idx.clone()));
            k = end;
        }
        out
    }
}

/// How an existing output `out_path` is treated (asking on a terminal without `-O`);
/// ncra and ncrcat do not append (`-A`), they add records with `--rec_apn`.
///
/// Errors: `-A`, an existing output without `-O` and no terminal to ask.
fn check_output(prog: &str, cli: &Cli, out_path: &str) -> Result<()> {
    let existing = output::resolve_existing(
        prog,
        out_path,
        cli.std.common.overwrite || cli.rec_apn,
        cli.std.common.append,
    )?;
    if existing == Existing::Append {
        return Err(Error::option(
            "-A",
            format!("appending is not supported by {prog}; use -O or --rec_apn"),
        ));
    }
    Ok(())
}

/// One ncra/ncrcat output from the opened inputs `sets`, first half: check the inputs
/// and options and plan the output (the caller has checked the output path with
/// [`check_output`]). `specs` are the hyperslabs, `vars_override` a `-v` list
/// replacing the command line's, `out_path` the output.
#[allow(clippy::too_many_lines, clippy::too_many_arguments)]
fn prepare(
    prog: &str,
    argv: &[String],
    cli: &Cli,
    concat: bool,
    op: Op,
    specs: &[hyperslab::HyperslabSpec],
    inputs: &multifile::Inputs,
    sets: &[Dataset],
    vars_override: Option<String>,
    out_path: &str,
) -> Result<Prepared> {
    let first = sets[0].meta();
    let rec = first.record_dim().ok_or_else(|| {
        Error::msg(format!(
            "{}: has no record dimension, which {prog} needs",
            sets[0].path()
        ))
    })?;
    let rec_name = first.dims[rec].name.clone();
    for ds in sets {
        if ds
            .meta()
            .dim_id(&rec_name)
            .is_none_or(|d| !ds.meta().dims[d].unlimited)
        {
            return Err(Error::msg(format!(
                "{}: has no record dimension {rec_name}",
                ds.path()
            )));
        }
    }
    // Record selection across files.
    let mut per_file = Vec::with_capacity(sets.len());
    for ds in sets {
        let m = ds.meta();
        let d = m.dim_id(&rec_name).unwrap_or(0);
        let coord = hyperslab::coordinate_values(m, &|v| ds.read_all(v), d)?;
        let units = m.var(&rec_name).and_then(|v| v.attr_text("units"));
        per_file.push((m.dims[d].len, coord, units));
    }
    let picks = multifile::pick_records(specs, &rec_name, &per_file, cli.std.slab.fortran)?;
    let fixed_specs: Vec<_> = specs
        .iter()
        .filter(|s| s.dim != rec_name)
        .cloned()
        .collect();
    let sel = hyperslab::resolve(
        first,
        &fixed_specs,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| sets[0].read_all(v),
    )?;
    let mut sel_args = cli.std.select.select_args();
    if let Some(v) = &vars_override {
        sel_args.vars = nco_core::select::split_list(v);
    }
    let vars = nco_core::select::select_input_order(first, &sel_args)?;
    multifile::check_fixed_dims(sets, &vars)?;
    let weights = match &cli.weight {
        None => Weights::None,
        Some(w) => {
            let nums: std::result::Result<Vec<f64>, _> =
                w.split(',').map(|x| x.trim().parse::<f64>()).collect();
            match nums {
                Ok(n) if n.len() == sets.len() => Weights::PerFile(n),
                Ok(n) => {
                    return Err(Error::option(
                        "-w",
                        format!("{} weights given for {} input files", n.len(), sets.len()),
                    ))
                }
                Err(_) => {
                    if first.var_id(w).is_none() {
                        return Err(Error::var(w, "weight variable is not in the input file"));
                    }
                    Weights::Var(w.clone())
                }
            }
        }
    };
    for ds in &sets[1..] {
        for &v in &vars {
            let var = &first.vars[v];
            if first.is_record_var(var) && ds.meta().var_id(&var.name).is_none() {
                return Err(Error::var(
                    &var.name,
                    format!("is missing from input file {}", ds.path()),
                ));
            }
        }
    }
    let groups = if cli.mro {
        picks.iter().map(|p| p.group).max().unwrap_or(0) + 1
    } else {
        1
    };
    let out_records = if concat { picks.len() } else { groups };

    // Output definitions: the first file's variables, record dimension resized.
    let storage = StorageArgs {
        deflate: cli.std.format.deflate,
        chunk: cli.std.format.chunk.clone(),
    };
    let format = cli.std.format.format()?.unwrap_or(first.format);
    extract::warn_storage_on_classic(prog, format, &storage);
    let mut rec_sel = sel.clone();
    rec_sel.dims[rec] = Some((0..out_records).collect());
    let plan = extract::plan(
        first,
        &vars,
        &rec_sel,
        format,
        &extract::RecordChange::default(),
        &storage,
    )?;
    let mut meta = plan.meta.clone();
    let mut procs: Vec<Option<ProcVar>> = vec![None; vars.len()];
    for (o, &v) in vars.iter().enumerate() {
        let var = &first.vars[v];
        if !first.is_record_var(var) || concat || !arith::is_arith(var.ty) {
            continue;
        }
        let mut pv = arith::prepare(first, v, cli.arith.hdf_upk);
        pv.place_as(&meta.vars[o]);
        if !cli.no_cell_methods {
            let coord = first.is_coord_var(var);
            let method = if coord {
                Op::Avg.cell_method()
            } else {
                op.cell_method()
            };
            arith::add_cell_methods(&mut pv.out, std::slice::from_ref(&rec_name), method);
        }
        meta.vars[o] = pv.out.clone();
        procs[o] = Some(pv);
    }
    if !cli.std.common.no_history {
        output::stamp_history(&mut meta, &output::command_line(argv));
    }
    if !cli.inputs.no_file_list {
        if let Some(files) = inputs.recorded() {
            multifile::stamp_input_list(&mut meta, &files);
        }
    }
    arith::stamp_threads(&mut meta, cli.std.common.threads);

    // --rec_apn: the existing output's records come first.
    let appended = if cli.rec_apn && std::path::Path::new(out_path).exists() {
        Some(Dataset::open(out_path)?)
    } else {
        None
    };
    let base_records = match &appended {
        Some(a) => {
            let m = a.meta();
            m.record_dim().map_or(0, |d| m.dims[d].len)
        }
        None => 0,
    };
    if let Some(a) = &appended {
        // The output keeps its own variables; ours are appended to the record ones.
        let mut am = a.meta().clone();
        let rd = am.record_dim().ok_or_else(|| {
            Error::msg(format!("{}: --rec_apn needs a record dimension", out_path))
        })?;
        am.dims[rd].len = base_records + out_records;
        for v in &mut am.vars {
            if let Some(mv) = meta.var(&v.name) {
                if mv.ty != v.ty {
                    return Err(Error::var(
                        &v.name,
                        "type differs between the output and the new records",
                    ));
                }
            }
        }
        am.attrs = a.meta().attrs.clone();
        if !cli.std.common.no_history {
            output::stamp_history(&mut am, &output::command_line(argv));
        }
        meta = am;
    }
    Ok(Prepared {
        out_path: out_path.to_string(),
        vars,
        sel,
        picks,
        rec_name,
        meta,
        procs,
        weights,
        groups,
        out_records,
        appended,
        base_records,
    })
}

/// Second half of one output: write the planned output to a temporary file, returned
/// for the caller to commit. `view`,
/// when given, is the concatenated view to read from (holding values read ahead for
/// this output); otherwise one is made.
#[allow(clippy::too_many_lines)]
fn emit(
    prog: &str,
    cli: &Cli,
    concat: bool,
    op: Op,
    sets: &[Dataset],
    p: Prepared,
    view: Option<&multifile::Concat<'_>>,
) -> Result<TempOutput> {
    let first = sets[0].meta();
    let Prepared {
        out_path,
        vars,
        sel,
        picks,
        rec_name,
        meta,
        procs,
        weights,
        groups,
        out_records: _,
        appended,
        base_records,
    } = &p;
    let (vars, sel, picks, meta, procs, groups, base_records) =
        (vars, sel, picks, meta, procs, *groups, *base_records);
    let tmp = TempOutput::new(out_path, prog)?;
    let mut of = OutFile::create(tmp.path(), meta, cli.std.format.hdr_pad.unwrap_or(0))?;
    if let Some(a) = appended {
        for (i, _) in a.meta().vars.iter().enumerate() {
            let full = Selection::default();
            extract::copy_selected(a, i, &full, &mut of, i)?;
        }
    }
    let out_index = |name: &str| meta.var_id(name);
    let pb = nco_core::progress::bar(vars.len() as u64, prog);
    // Compute per variable (in parallel), then write in order.
    type Outcome = (usize, Vec<(usize, Values)>);
    let weights_ref = &weights;
    // Each variable is computed in parallel windows and written as soon as its turn
    // comes: memory holds a few variables' output records, not the whole output.
    let compute = |o: usize| -> Result<Outcome> {
        let v = vars[o];
        let var = &first.vars[v];
        let Some(oi) = out_index(&var.name) else {
            return Ok((o, Vec::new()));
        };
        let mut chunks = Vec::new();
        if !first.is_record_var(var) {
            for (at, idx) in p.copy_reads(first, o, concat) {
                chunks.push((at, sets[0].read(v, &idx)?));
            }
            return Ok((oi, chunks));
        }
        let mut idx = sel.for_var(first, v);
        if concat || procs[o].is_none() {
            // Concatenate (ncrcat, or non-arithmetic record variables in ncra), in
            // blocks of records to bound memory.
            let own;
            let cc = match view {
                Some(c) => c,
                None => {
                    own = concat_view(sets, picks, rec_name, concat);
                    &own
                }
            };
            for (at, idx) in p.copy_reads(first, o, concat) {
                chunks.push((at, cc.read(v, &idx)?));
            }
            return Ok((oi, chunks));
        }
        let mut pv = procs[o]
            .clone()
            .ok_or_else(|| Error::msg("internal: no arithmetic plan"))?;
        let this_op = if first.is_coord_var(var) { Op::Avg } else { op };
        let n: usize = idx[1..].iter().map(Vec::len).product();
        let mut buf = Vec::new();
        for g in 0..groups {
            let mut acc = Accum::new(this_op, n);
            for p in picks.iter().filter(|p| p.group == g || !cli.mro) {
                let ds = &sets[p.file];
                let vid = ds.meta().var_id(&var.name).unwrap_or(v);
                idx[0] = vec![p.record];
                let w = match weights_ref {
                    Weights::None => 1.0,
                    Weights::PerFile(ws) => ws[p.file],
                    Weights::Var(name) => {
                        let m = ds.meta();
                        let wid = m.var_id(name).ok_or_else(|| {
                            Error::var(
                                name,
                                format!("weight variable is missing from {}", ds.path()),
                            )
                        })?;
                        ds.read(wid, &[vec![p.record]])?.get_f64(0).unwrap_or(1.0)
                    }
                };
                // The record coordinate is averaged without weights.
                let w = if first.is_coord_var(var) { 1.0 } else { w };
                arith::accumulate_from(
                    &mut acc,
                    ds,
                    vid,
                    &idx,
                    pv.in_fill,
                    pv.pack.as_ref(),
                    w,
                    &mut buf,
                )?;
            }
            let normalize = !cli.numerator || first.is_coord_var(var);
            // Per-file weights of an average without a fill value take NCO 5.1.4's own
            // normalisation (below); everything else is typed straight from the
            // accumulator.
            let per_file = match (weights_ref, normalize, this_op) {
                (Weights::PerFile(ws), true, Op::Avg)
                    if !first.is_coord_var(var) && pv.in_fill.is_none() =>
                {
                    Some(ws)
                }
                _ => None,
            };
            let Some(ws) = per_file else {
                let (vals, over) = acc.finish_values(normalize, pv.out.ty, pv.out_fill);
                arith::warn_overflow(prog, &pv.out.name, pv.out.ty, over);
                chunks.push((base_records + g, vals));
                continue;
            };
            // NCO 5.1.4 normalises per-file weights by the record count times the mean
            // file weight for variables without a fill value (the same as the weight
            // sum when every file has as many records), by the sum of valid weights
            // otherwise; we follow it.
            let mut res = acc.finish(normalize);
            let group: Vec<_> = picks.iter().filter(|p| p.group == g || !cli.mro).collect();
            let wsum: f64 = group.iter().map(|p| ws[p.file]).sum();
            let mean_w = ws.iter().sum::<f64>() / ws.len() as f64;
            let denom = group.len() as f64 * mean_w;
            if denom != 0.0 {
                for r in res.iter_mut().flatten() {
                    *r *= wsum / denom;
                }
            }
            let vals = pv.finish(prog, &res);
            chunks.push((base_records + g, vals));
        }
        pb.inc(1);
        Ok((oi, chunks))
    };
    nco_core::pipeline::for_each_ordered(vars.len(), compute, |_, (oi, chunks)| {
        for (first_rec, vals) in chunks {
            of.write(oi, first_rec, &vals)?;
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    // Close an appended-to output before the new one replaces it.
    drop(p);
    of.finish()?;
    Ok(tmp)
}

/// The concatenated view of the inputs ncrcat reads from (records rebased to the first
/// file's time units); ncra copies non-arithmetic record variables without rebasing.
fn concat_view<'a>(
    sets: &'a [Dataset],
    picks: &'a [multifile::RecordPick],
    rec_name: &str,
    concat: bool,
) -> multifile::Concat<'a> {
    multifile::Concat {
        sets,
        picks,
        rebase: if concat {
            multifile::rebase_factors(sets, rec_name)
        } else {
            Vec::new()
        },
        ahead: Default::default(),
    }
}

/// ncrcat's station form: one output (`-o`) with a station dimension, the records of
/// all inputs concatenated for every station.
fn station_form(
    prog: &str,
    argv: &[String],
    cli: &Cli,
    specs: &[hyperslab::HyperslabSpec],
    inputs: &multifile::Inputs,
    sets: &[Dataset],
    stations_list: &[nco_core::stations::Station],
) -> Result<()> {
    use nco_core::stations;
    output::resolve_existing(
        prog,
        &inputs.output,
        cli.std.common.overwrite,
        cli.std.common.append,
    )?;
    let first = sets[0].meta();
    let rec = first.record_dim().ok_or_else(|| {
        Error::msg(format!(
            "{}: has no record dimension, which {prog} needs",
            sets[0].path()
        ))
    })?;
    let rec_name = first.dims[rec].name.clone();
    let mut per_file = Vec::with_capacity(sets.len());
    for ds in sets {
        let m = ds.meta();
        let d = m.dim_id(&rec_name).ok_or_else(|| {
            Error::msg(format!("{}: has no record dimension {rec_name}", ds.path()))
        })?;
        let coord = hyperslab::coordinate_values(m, &|v| ds.read_all(v), d)?;
        let units = m.var(&rec_name).and_then(|v| v.attr_text("units"));
        per_file.push((m.dims[d].len, coord, units));
    }
    let picks = multifile::pick_records(specs, &rec_name, &per_file, cli.std.slab.fortran)?;
    let read_all = |v: usize| sets[0].read_all(v);
    let fixed: Vec<_> = specs
        .iter()
        .filter(|s| s.dim != rec_name)
        .cloned()
        .collect();
    let mut base = hyperslab::resolve(
        first,
        &fixed,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &read_all,
    )?;
    base.dims[rec] = Some((0..picks.len()).collect());
    let mut selections = Vec::with_capacity(stations_list.len());
    for st in stations_list {
        if st.specs.iter().any(|s| s.dim == rec_name) {
            return Err(Error::msg(format!(
                "station list line {}: the station form takes record hyperslabs from the command line only",
                st.line
            )));
        }
        stations::check_inside(first, &read_all, st)?;
        let merged = stations::merged_specs(&fixed, st);
        let mut sel = hyperslab::resolve(
            first,
            &merged,
            cli.std.slab.fortran,
            cli.std.slab.user_order,
            &read_all,
        )
        .map_err(|e| Error::msg(format!("station list line {}: {e}", st.line)))?;
        sel.dims[rec] = Some((0..picks.len()).collect());
        selections.push(sel);
    }
    let vars = nco_core::select::select_input_order(first, &cli.std.select.select_args())?;
    multifile::check_fixed_dims(sets, &vars)?;
    let mut plan = stations::plan_station_form(
        first,
        &vars,
        &base,
        stations_list,
        selections,
        &cli.stations.station_dim,
    )?;
    plan.meta.format = cli.std.format.format()?.unwrap_or(first.format);
    if !cli.std.common.no_history {
        output::stamp_history(&mut plan.meta, &output::command_line(argv));
    }
    let concat = concat_view(sets, &picks, &rec_name, true);
    let tmp = TempOutput::new(&inputs.output, prog)?;
    let mut of = OutFile::create(tmp.path(), &plan.meta, cli.std.format.hdr_pad.unwrap_or(0))?;
    let read = |v: usize, idx: &[Vec<usize>]| concat.read(v, idx);
    stations::write_station_form(&plan, stations_list, first, &base, &read, &mut of)?;
    of.finish()?;
    tmp.commit()
}
