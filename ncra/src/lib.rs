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

use clap::{CommandFactory, FromArgMatches, Parser};
use rayon::prelude::*;

use nco_core::arith::{self, ProcVar};
use nco_core::calendar;
use nco_core::cli::{self, CommonArgs, FormatArgs, SlabArgs, VarArgs};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::extract::{self, StorageArgs};
use nco_core::hyperslab::{self, Selection};
use nco_core::kernels::{self, reduce::Accum, reduce::Op};
use nco_core::model::Meta;
use nco_core::multifile::{self, RecordPick};
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
    /// Input files, then the output file
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
    /// Generate input names: count,digits,increment
    #[arg(short = 'n', long = "nintap", value_name = "NBR,DGT,INC")]
    pub nintap: Option<String>,
    /// Do not write the input-file-list global attributes
    #[arg(short = 'H', long = "fl_lst_in", visible_alias = "file_list")]
    pub no_file_list: bool,
    /// Unpack with the HDF convention
    #[arg(long = "hdf_upk", visible_alias = "hdf_unpack")]
    pub hdf_upk: bool,
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
    let concat = cli.pseudonym.as_deref().unwrap_or(prog) == "ncrcat";
    let prog = if concat { "ncrcat" } else { "ncra" };
    let op = cli.op.as_deref().map_or(Ok(Op::Avg), Op::parse)?;
    let specs = cli.slab.specs()?;
    let inputs = multifile::inputs(
        &cli.files,
        cli.common.output.as_deref(),
        cli.common.path.as_deref(),
        cli.nintap.as_deref(),
    )?;
    let existing = output::resolve_existing(
        prog,
        &inputs.output,
        cli.common.overwrite || cli.rec_apn,
        cli.common.append,
    )?;
    if existing == Existing::Append {
        return Err(Error::option(
            "-A",
            format!("appending is not supported by {prog}; use -O or --rec_apn"),
        ));
    }
    let sets = multifile::open_all(&inputs.files)?;
    let first = sets[0].meta();
    let rec = first.record_dim().ok_or_else(|| {
        Error::msg(format!(
            "{}: has no record dimension, which {prog} needs",
            sets[0].path()
        ))
    })?;
    let rec_name = first.dims[rec].name.clone();
    for ds in &sets {
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
    for ds in &sets {
        let m = ds.meta();
        let d = m.dim_id(&rec_name).unwrap_or(0);
        let coord = hyperslab::coordinate_values(m, &|v| ds.read_all(v), d)?;
        let units = m.var(&rec_name).and_then(|v| v.attr_text("units"));
        per_file.push((m.dims[d].len, coord, units));
    }
    let picks = multifile::pick_records(&specs, &rec_name, &per_file, cli.slab.fortran)?;
    let fixed_specs: Vec<_> = specs
        .iter()
        .filter(|s| s.dim != rec_name)
        .cloned()
        .collect();
    let sel = hyperslab::resolve(
        first,
        &fixed_specs,
        cli.slab.fortran,
        cli.slab.user_order,
        &|v| sets[0].read_all(v),
    )?;
    let vars = nco_core::select::select(first, &cli.select.select_args())?;
    multifile::check_fixed_dims(&sets, &vars)?;
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
        deflate: cli.format.deflate,
        chunk: cli.format.chunk.clone(),
    };
    let format = cli.format.format()?.unwrap_or(first.format);
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
        let mut pv = arith::prepare(first, v, cli.hdf_upk);
        pv.out.dims = meta.vars[o].dims.clone();
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
    if !cli.common.no_history {
        output::stamp_history(&mut meta, &argv);
    }
    if !cli.no_file_list {
        multifile::stamp_input_list(&mut meta, &inputs);
    }
    arith::stamp_threads(&mut meta, cli.common.threads);

    // --rec_apn: the existing output's records come first.
    let appended = if cli.rec_apn && std::path::Path::new(&inputs.output).exists() {
        Some(Dataset::open(&inputs.output)?)
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
            Error::msg(format!(
                "{}: --rec_apn needs a record dimension",
                inputs.output
            ))
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
        if !cli.common.no_history {
            output::stamp_history(&mut am, &argv);
        }
        meta = am;
    }
    let tmp = TempOutput::new(&inputs.output, prog)?;
    let mut of = OutFile::create(tmp.path(), &meta, cli.format.hdr_pad.unwrap_or(0))?;
    if let Some(a) = &appended {
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
    let work: Vec<Result<Outcome>> = vars
        .par_iter()
        .enumerate()
        .map(|(o, &v)| -> Result<Outcome> {
            let var = &first.vars[v];
            let Some(oi) = out_index(&var.name) else {
                return Ok((o, Vec::new()));
            };
            let mut chunks = Vec::new();
            if !first.is_record_var(var) {
                if appended.is_none() {
                    let idx = sel.for_var(first, v);
                    chunks.push((0, sets[0].read(v, &idx)?));
                }
                return Ok((oi, chunks));
            }
            let mut idx = sel.for_var(first, v);
            if concat || procs[o].is_none() {
                // Concatenate (ncrcat, or non-arithmetic record variables in ncra).
                let rebase = if concat && first.is_coord_var(var) {
                    rebase_factors(&sets, &rec_name)
                } else {
                    Vec::new()
                };
                let picks_used: Vec<&RecordPick> = if concat {
                    picks.iter().collect()
                } else {
                    picks.iter().take(out_records).collect()
                };
                let mut k = 0;
                while k < picks_used.len() {
                    let f = picks_used[k].file;
                    let mut run = vec![picks_used[k].record];
                    while k + run.len() < picks_used.len() && picks_used[k + run.len()].file == f {
                        run.push(picks_used[k + run.len()].record);
                    }
                    let ds = &sets[f];
                    let vid = ds.meta().var_id(&var.name).unwrap_or(v);
                    idx[0] = run.clone();
                    let mut vals = ds.read(vid, &idx)?;
                    if let Some(&(fac, off)) = rebase.get(f) {
                        if fac != 1.0 || off != 0.0 {
                            let x: Vec<f64> = vals
                                .to_f64_vec()
                                .unwrap_or_default()
                                .iter()
                                .map(|x| x * fac + off)
                                .collect();
                            vals = Values::from_f64_slice(var.ty, &x).unwrap_or(vals);
                        }
                    }
                    chunks.push((base_records + k, vals));
                    k += run.len();
                }
                return Ok((oi, chunks));
            }
            let mut pv = procs[o]
                .clone()
                .ok_or_else(|| Error::msg("internal: no arithmetic plan"))?;
            let this_op = if first.is_coord_var(var) { Op::Avg } else { op };
            let n: usize = idx[1..].iter().map(Vec::len).product();
            for g in 0..groups {
                let mut acc = Accum::new(this_op, n);
                for p in picks.iter().filter(|p| p.group == g || !cli.mro) {
                    let ds = &sets[p.file];
                    let vid = ds.meta().var_id(&var.name).unwrap_or(v);
                    idx[0] = vec![p.record];
                    let x = ds.read(vid, &idx)?;
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
                    kernels::add_elementwise(&mut acc, &x, pv.in_fill, pv.pack.as_ref(), w);
                }
                let normalize = !(cli.numerator && !first.is_coord_var(var));
                let res = acc.finish(normalize);
                let vals = pv.finish(prog, &res);
                chunks.push((base_records + g, vals));
            }
            pb.inc(1);
            Ok((oi, chunks))
        })
        .collect();
    pb.finish_and_clear();
    for r in work {
        let (oi, chunks) = r?;
        for (first_rec, vals) in chunks {
            of.write(oi, first_rec, &vals)?;
        }
    }
    drop(appended);
    of.finish()?;
    tmp.commit()
}

/// Per-file (factor, offset) converting the record coordinate to the first file's
/// units (identity when units agree or are not time units).
fn rebase_factors(sets: &[Dataset], rec_name: &str) -> Vec<(f64, f64)> {
    let units = |m: &Meta| m.var(rec_name).and_then(|v| v.attr_text("units"));
    let cal = sets[0]
        .meta()
        .var(rec_name)
        .and_then(|v| v.attr_text("calendar"));
    let first = units(sets[0].meta());
    sets.iter()
        .map(|ds| match (&first, units(ds.meta())) {
            (Some(a), Some(b)) if *a != b => {
                calendar::rebase(&b, a, cal.as_deref()).unwrap_or((1.0, 0.0))
            }
            _ => (1.0, 0.0),
        })
        .collect()
}
