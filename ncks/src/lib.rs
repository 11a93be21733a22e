//! ncks, the netCDF Kitchen Sink: extract variables and hyperslabs into a new file
//! (or append them to an existing one), convert between netCDF formats, and print
//! files as CDL, traditional text or JSON. Drop-in for NCO 5.1.4's `ncks`
//! (NCO manual, "ncks netCDF Kitchen Sink").
//!
//! `ncks [options] in.nc [out.nc]`: with an output file, extract; without, print.

pub mod print;

use std::io::Write;
use std::path::Path;

use clap::{CommandFactory, Parser};
use nco_core::cfmt::{unescape, CFormat};
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::extract::{self, AppendSource, RecordChange, StorageArgs};
use nco_core::hyperslab::{self, Selection};
use nco_core::output::{self, Existing, TempOutput};
use nco_core::{Error, Result};

use print::{PrintOptions, Style};

/// ncks command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncks",
    about = "netCDF Kitchen Sink: extract, convert, append and print netCDF files (NCO-compatible)",
    after_help = "Examples:\n  ncks -v T -d lat,-30.,30. in.nc out.nc   extract T between 30S and 30N\n  ncks -H --trd -v lev in.nc                 print lev's values\n  ncks -O -4 -L 1 in.nc out.nc               convert to compressed netCDF-4"
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    /// Print data
    #[arg(short = 'H', long = "data", visible_alias = "hieronymus")]
    pub print_data: bool,
    /// Print variable metadata
    #[arg(short = 'm', long = "mtd", visible_alias = "metadata")]
    pub print_var_meta: bool,
    /// Print global metadata
    #[arg(short = 'M', long = "Mtd", visible_alias = "Metadata")]
    pub print_global_meta: bool,
    /// Print everything with units, no coordinates (same as -C -H -M -m -u)
    #[arg(short = 'P', long = "prn", visible_alias = "print")]
    pub print_all: bool,
    /// printf-style format for each printed value (e.g. '%8.3f,')
    #[arg(
        short = 's',
        long = "sng_fmt",
        visible_alias = "string",
        value_name = "FORMAT",
        allow_hyphen_values = true
    )]
    pub string_format: Option<String>,
    /// Print in NCO's traditional format (name[i]=value)
    #[arg(long = "trd", visible_alias = "traditional")]
    pub traditional: bool,
    /// Print in CDL (the default)
    #[arg(long = "cdl")]
    pub cdl: bool,
    /// Print as JSON
    #[arg(long = "json", visible_aliases = ["jsn"])]
    pub json: bool,
    /// Print units after values (traditional format)
    #[arg(short = 'u', long = "units")]
    pub units: bool,
    /// Print missing values as numbers instead of _
    #[arg(long = "no_blank", visible_aliases = ["no-blank", "noblank"])]
    pub no_blank: bool,
    /// Traditional format: no dimension indices or coordinates before values
    #[arg(short = 'Q')]
    pub quiet_indices: bool,
    /// Print values only
    #[arg(short = 'V', long = "val")]
    pub values_only: bool,
    /// Keep the file's variable order instead of alphabetising (deprecated NCO switch)
    #[arg(short = 'a', long = "abc", visible_aliases = ["no_abc", "no-abc", "no_alphabetize"])]
    pub no_alphabetize: bool,
    /// Make this dimension (or all) a fixed dimension in the output
    #[arg(long = "fix_rec_dmn", value_name = "DIM")]
    pub fix_rec_dmn: Option<String>,
    /// Make this dimension the record dimension in the output
    #[arg(long = "mk_rec_dmn", value_name = "DIM")]
    pub mk_rec_dmn: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub stations: nco_core::stations::StationArgs,
}

/// The clap command (for help and documentation tests).
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// Run ncks with `argv` (program name first).
///
/// Errors: every failure, already worded for the user (missing input, bad option,
/// unknown variable or dimension, unwritable output...).
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.std.common, &c.std.format))?
    else {
        return Ok(());
    };
    let specs = cli.std.slab.specs()?;
    let mut files = cli.std.files.clone();
    if let Some(o) = &cli.std.common.output {
        files.push(o.clone());
    }
    let (input, output) = match files.len() {
        0 => {
            return Err(Error::msg(
                "no input file given (usage: ncks [options] in.nc [out.nc])",
            ))
        }
        1 => (files[0].clone(), None),
        2 => (files[0].clone(), Some(files[1].clone())),
        n => {
            return Err(Error::msg(format!(
                "ncks takes one input and one output file, {n} files given"
            )))
        }
    };
    let input = cli::with_prefix(cli.std.common.path.as_deref(), &input);
    if let Some(list) = &cli.stations.list {
        return run_list(prog, &argv, &cli, &input, output.as_deref(), list, &specs);
    }
    if let Some(out) = &output {
        // Fail early on an unusable output, before reading anything.
        if Path::new(out).is_dir() {
            return Err(Error::msg(format!("{out}: output is a directory")));
        }
    }
    let ds = Dataset::open(&input)?;
    let meta = ds.meta();
    let mut sel_args = cli.std.select.select_args();
    if cli.print_all {
        sel_args.no_coords = true;
    }
    let mut vars = nco_core::select::select(meta, &sel_args)?;
    if cli.no_alphabetize {
        vars.sort_unstable();
    }
    let sel = hyperslab::resolve(
        meta,
        &specs,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| ds.read_all(v),
    )?;
    match output {
        Some(out) => {
            let existing = output::resolve_existing(
                prog,
                &out,
                cli.std.common.overwrite,
                cli.std.common.append,
            )?;
            write_output(prog, &argv, &cli, &ds, &vars, &sel, &out, existing)?.commit()
        }
        None => print_file(&cli, &ds, &vars, &sel, &input),
    }
}

fn print_file(cli: &Cli, ds: &Dataset, vars: &[usize], sel: &Selection, input: &str) -> Result<()> {
    let explicit = cli.print_data || cli.print_var_meta || cli.print_global_meta || cli.print_all;
    let all = !explicit;
    let style = if cli.json {
        Style::Json
    } else if cli.traditional {
        Style::Trd
    } else {
        Style::Cdl
    };
    let format = match &cli.string_format {
        Some(f) => Some(CFormat::parse(&unescape(f))?),
        None => None,
    };
    let opts = PrintOptions {
        style,
        data: cli.print_data || cli.print_all || all,
        var_meta: cli.print_var_meta || cli.print_all || all,
        // Global metadata by default only when the whole file is printed (NCO 5).
        global_meta: cli.print_global_meta
            || cli.print_all
            || (all && cli.std.select.vars.is_none()),
        units: cli.units || cli.print_all || all,
        format,
        no_blank: cli.no_blank,
        quiet_indices: cli.quiet_indices,
        values_only: cli.values_only,
        name: Path::new(input)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    if cli.std.common.quiet {
        return Ok(());
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    print::print(ds, vars, sel, &opts, &mut out)?;
    out.flush().map_err(|e| Error::io("standard output", e))
}

#[allow(clippy::too_many_arguments)]
fn write_output(
    prog: &str,
    argv: &[String],
    cli: &Cli,
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    out: &str,
    existing: Existing,
) -> Result<TempOutput> {
    let in_meta = ds.meta();
    let storage = StorageArgs {
        deflate: cli.std.format.deflate,
        chunk: cli.std.format.chunk.clone(),
    };
    let rec = RecordChange {
        fix: cli.fix_rec_dmn.clone(),
        make: cli.mk_rec_dmn.clone(),
    };
    let appended = if existing == Existing::Append {
        Some(Dataset::open(out)?)
    } else {
        None
    };
    let format = match (&appended, cli.std.format.format()?) {
        (Some(a), _) => a.meta().format,
        (None, Some(f)) => f,
        (None, None) => in_meta.format,
    };
    extract::warn_storage_on_classic(prog, format, &storage);
    let plan = extract::plan(in_meta, vars, sel, format, &rec, &storage)?;
    let tmp = TempOutput::new(out, prog)?;
    let hdr_pad = cli.std.format.hdr_pad.unwrap_or(0);
    match &appended {
        None => {
            let mut meta = plan.meta.clone();
            if !cli.std.common.no_history {
                output::stamp_history(&mut meta, argv);
            }
            let mut of = OutFile::create(tmp.path(), &meta, hdr_pad)?;
            extract::copy_data(ds, &plan, sel, &mut of, 0)?;
            of.finish()?;
        }
        Some(old) => {
            let (mut meta, sources) = extract::merge_append(old.meta(), &plan.meta)?;
            if !cli.std.common.no_history {
                output::stamp_history(&mut meta, argv);
            }
            let mut of = OutFile::create(tmp.path(), &meta, hdr_pad)?;
            for (i, s) in sources.iter().enumerate() {
                match *s {
                    AppendSource::Existing(j) => {
                        let full = Selection::default();
                        if !of.copy_var_raw(i, old, j)? {
                            extract::copy_selected(old, j, &full, &mut of, i)?;
                        }
                    }
                    AppendSource::New(k) => {
                        extract::copy_selected(ds, plan.src[k], sel, &mut of, i)?;
                    }
                }
            }
            of.finish()?;
        }
    }
    drop(appended);
    Ok(tmp)
}

/// List-input multi-station extraction: one pass over the input for every station of
/// the list; many outputs (no output file on the command line) or one output with a
/// station dimension. All outputs are renamed into place only when all were written.
fn run_list(
    prog: &str,
    argv: &[String],
    cli: &Cli,
    input: &str,
    output: Option<&str>,
    list: &str,
    specs: &[nco_core::hyperslab::HyperslabSpec],
) -> Result<()> {
    use nco_core::stations;
    let stations_list = stations::read_list(list)?;
    // A map touches only the pages the stations need, with no system call per read.
    let ds = Dataset::open_with(input, &nco_core::dataset::io_config().mapped())?;
    let meta = ds.meta();
    let read_all = |v: usize| ds.read_all(v);
    let mut selections = Vec::with_capacity(stations_list.len());
    for st in &stations_list {
        stations::check_inside(meta, &read_all, st)?;
        let merged = stations::merged_specs(specs, st);
        let sel = hyperslab::resolve(
            meta,
            &merged,
            cli.std.slab.fortran,
            cli.std.slab.user_order,
            &read_all,
        )
        .map_err(|e| Error::msg(format!("station list line {}: {e}", st.line)))?;
        selections.push(sel);
    }
    match output {
        None => {
            // Many files: each station's output goes through the ordinary extraction,
            // after the input was read once for a batch of stations.
            stations::check_distinct_outputs(&stations_list)?;
            let on_line =
                |line: usize| move |e: Error| Error::msg(format!("station list line {line}: {e}"));
            let mut jobs = Vec::with_capacity(stations_list.len());
            for (st, sel) in stations_list.iter().zip(selections) {
                let mut sa = cli.std.select.select_args();
                if let Some(v) = &st.vars {
                    sa.vars = nco_core::select::split_list(v);
                }
                let vars = nco_core::select::select(meta, &sa).map_err(on_line(st.line))?;
                let existing = output::resolve_existing(
                    prog,
                    &st.target,
                    cli.std.common.overwrite,
                    cli.std.common.append,
                )
                .map_err(on_line(st.line))?;
                jobs.push((st, vars, sel, existing));
            }
            // The reads of the variables a station cuts (the others are copied whole).
            let reads: Vec<stations::Reads> = jobs
                .iter()
                .map(|(_, vars, sel, _)| {
                    vars.iter()
                        .filter(|&&v| meta.vars[v].dims.iter().any(|&d| sel.restricts(d)))
                        .flat_map(|&v| {
                            extract::selected_reads(meta, v, sel)
                                .into_iter()
                                .map(move |(_, i)| (v, i))
                        })
                        .collect()
                })
                .collect();
            let group = vec![0; jobs.len()];
            stations::write_in_batches(
                meta,
                jobs,
                &stations::ReadAheadPlan {
                    reads: &reads,
                    group: &group,
                    prefetch: &|_, v, sels| ds.prefetch(v, sels),
                    clear: &|| ds.clear_prefetched(),
                    budget: cli::env::settings().list_batch_bytes,
                },
                &|_, (st, vars, sel, existing)| {
                    write_output(prog, argv, cli, &ds, &vars, &sel, &st.target, existing)
                        .map_err(on_line(st.line))
                },
            )
        }
        Some(out) => {
            output::resolve_existing(prog, out, cli.std.common.overwrite, cli.std.common.append)?;
            let vars = nco_core::select::select(meta, &cli.std.select.select_args())?;
            let base = hyperslab::resolve(
                meta,
                specs,
                cli.std.slab.fortran,
                cli.std.slab.user_order,
                &read_all,
            )?;
            let mut plan = stations::plan_station_form(
                meta,
                &vars,
                &base,
                &stations_list,
                selections,
                &cli.stations.station_dim,
            )?;
            plan.meta.format = cli.std.format.format()?.unwrap_or(meta.format);
            if !cli.std.common.no_history {
                output::stamp_history(&mut plan.meta, argv);
            }
            let tmp = TempOutput::new(out, prog)?;
            let mut of =
                OutFile::create(tmp.path(), &plan.meta, cli.std.format.hdr_pad.unwrap_or(0))?;
            let read = |v: usize, idx: &[Vec<usize>]| ds.read(v, idx);
            stations::write_station_form(&plan, &stations_list, meta, &base, &read, &mut of)?;
            of.finish()?;
            tmp.commit()
        }
    }
}
