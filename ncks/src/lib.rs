//! ncks, the netCDF Kitchen Sink: extract variables and hyperslabs into a new file
//! (or append them to an existing one), convert between netCDF formats, and print
//! files as CDL, traditional text or JSON. Drop-in for NCO 5.1.4's `ncks`
//! (NCO manual, "ncks netCDF Kitchen Sink").
//!
//! `ncks [options] in.nc [out.nc]`: with an output file, extract; without, print.

pub mod print;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use nco_core::calendar::DateStyle;
use nco_core::cfmt::{unescape_noting, CFormat};
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::Dataset;
use nco_core::extract::{self, RecordChange};
use nco_core::hyperslab::{HyperslabSpec, Selection};
use nco_core::output::Existing;
use nco_core::target::{AppendGlobals, Output, Target};
use nco_core::{digest, groups, stations};
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
    /// JSON verbosity (implies --json): 0 without the variables' shape and type, 1-3
    /// with them (NCO 5.1.4 prints 1, 2 and 3 alike), plus 4 for flat data arrays
    #[arg(long = "jsn_fmt", visible_alias = "json_format", value_name = "0-7",
          value_parser = clap::value_parser!(u8).range(0..=7))]
    pub json_format: Option<u8>,
    /// Print units after values (traditional format)
    #[arg(short = 'u', long = "units")]
    pub units: bool,
    /// Print missing values as numbers instead of _
    #[arg(long = "no_blank", visible_aliases = ["no-blank", "noblank"])]
    pub no_blank: bool,
    /// Traditional format: no dimension indices or coordinates before values
    #[arg(short = 'Q')]
    pub quiet_indices: bool,
    /// Check the printed floating-point variables for NaN instead of printing them:
    /// the first one found is reported and the exit status is 1 (NCO's `--chk_nan`;
    /// ignored when writing an output, as in NCO)
    #[arg(long = "chk_nan")]
    pub check_nan: bool,
    /// Print values only
    #[arg(short = 'V', long = "val")]
    pub values_only: bool,
    /// Keep the file's variable order instead of alphabetising (deprecated NCO switch)
    #[arg(short = 'a', long = "abc", visible_aliases = ["no_abc", "no-abc", "no_alphabetize", "alphabetize"])]
    pub no_alphabetize: bool,
    /// Make this dimension (or all) a fixed dimension in the output
    #[arg(long = "fix_rec_dmn", value_name = "DIM")]
    pub fix_rec_dmn: Option<String>,
    /// Make this dimension the record dimension in the output
    #[arg(long = "mk_rec_dmn", value_name = "DIM")]
    pub mk_rec_dmn: Option<String>,
    /// Group path editing of the output: NAME prepends a group, NAME:N deletes N
    /// leading levels first, NAME@N N trailing ones, `:` flattens every group
    #[arg(
        short = 'G',
        long = "gpe",
        value_name = "NAME[:N|@N]",
        allow_hyphen_values = true
    )]
    pub gpe: Option<String>,
    /// CDL printing: values of variables with time units (`<unit> since <date>`)
    /// printed as dates in their calendar
    #[arg(long = "cal", visible_aliases = ["calendar", "cln"])]
    pub calendar: bool,
    /// Date format of --cal (1-3 imply it): 0 or 1 `1964-03-13 21:09:00` (the date
    /// alone at midnight), 2 `1964-03-13 21:09:00.000000`, 3 ISO 8601
    /// `1964-03-13T21:09:00.000000`
    #[arg(long = "dt_fmt", visible_alias = "date_format", value_name = "0-3",
          value_parser = clap::value_parser!(u8).range(0..=3))]
    pub date_format: Option<u8>,
    /// Print into this file instead of standard output
    #[arg(long = "prn_fl", visible_aliases = ["print_file", "fl_prn"], value_name = "FILE")]
    pub print_file: Option<PathBuf>,
    /// Printing: also show the hidden (special) attributes of a netCDF-4 file:
    /// `_Storage`, `_ChunkSizes`, `_DeflateLevel`, `_Shuffle`, `_Endianness` of each
    /// variable, `_Format`, `_NCProperties`... of the file
    #[arg(long = "hdn", visible_alias = "hidden")]
    pub hidden: bool,
    /// Retain all dimensions: every dimension of the printed or written groups, used
    /// by a variable or not
    #[arg(long = "rad", visible_alias = "retain_all_dimensions")]
    pub all_dims: bool,
    /// Also write the extracted values, unformatted, to this binary file: each
    /// variable's hyperslab in this machine's byte order, one after the other (fixed
    /// variables first for a netCDF3 output), as NCO does; needs an output file
    #[arg(
        short = 'b',
        long = "fl_bnr",
        visible_alias = "binary-file",
        value_name = "FILE"
    )]
    pub binary: Option<PathBuf>,
    /// MD5 digests of the variables extracted or printed, reported with -D 1 or more
    /// (`ncks: INFO MD5(var) = ...`, of the values in this machine's byte order)
    #[arg(long = "md5_dgs", visible_alias = "md5_digest")]
    pub md5_digest: bool,
    /// Write each extracted variable's MD5 digest into the output as its `MD5`
    /// attribute
    #[arg(
        long = "md5_wrt_att",
        visible_aliases = ["md5_write_attribute", "md5_wrt", "md5_write"]
    )]
    pub md5_attribute: bool,
    /// printf format of float and double values printed in CDL, JSON or NcML (e.g.
    /// `%.3f`; trailing zeros of the decimals trimmed, as NCO does; `-s` wins)
    #[arg(
        long = "fmt_val",
        visible_aliases = ["val_fmt", "value_format"],
        value_name = "FORMAT",
        allow_hyphen_values = true
    )]
    pub value_format: Option<String>,
    /// Print as NcML (netCDF Markup Language 2.2)
    #[arg(long = "xml", visible_alias = "ncml")]
    pub xml: bool,
    /// NcML without the root's `location` attribute (implies --xml)
    #[arg(long = "xml_no_location", visible_alias = "ncml_no_location")]
    pub xml_no_location: bool,
    /// NcML separator of text values (default `*`; implies --xml)
    #[arg(long = "xml_spr_chr", value_name = "SEP", allow_hyphen_values = true)]
    pub xml_text_separator: Option<String>,
    /// NcML separator of numbers (default a blank; implies --xml)
    #[arg(long = "xml_spr_nmr", value_name = "SEP", allow_hyphen_values = true)]
    pub xml_number_separator: Option<String>,
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
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    let specs = cli.std.slab.specs(prog)?;
    let (input, output) = files(&cli)?;
    if cli.print_file.is_some() && output.is_some() {
        return Err(Error::option(
            "--prn_fl",
            "nothing is printed when an output file is given",
        ));
    }
    if cli.binary.is_some() && (output.is_none() || cli.stations.list.is_some()) {
        let why = if output.is_none() {
            "a binary file is written beside a netCDF output: give an output file"
        } else {
            "not supported yet with --list"
        };
        return Err(Error::option("-b", why));
    }
    if let Some(list) = &cli.stations.list {
        return run_list(prog, &argv, &cli, &input, output.as_deref(), list, specs);
    }
    if let Some(out) = &output {
        // Fail early on an unusable output, before reading anything.
        if out.is_dir() {
            let out = out.display();
            return Err(Error::msg(format!("{out}: output is a directory")));
        }
    }
    let ds = Dataset::open(&input)?;
    let mut sel_args = cli.std.select_args();
    if cli.print_all {
        sel_args.no_coords = true;
    }
    let mut vars = nco_core::select::select(ds.meta(), &sel_args)?;
    if cli.no_alphabetize {
        vars.sort_unstable();
    }
    let sel = cli.std.slab.resolve_specs(&ds, specs)?;
    match output {
        Some(out) => {
            let existing = cli.std.common.existing(prog, &out)?;
            let mut target = target(prog, &argv, &cli, &out, existing);
            target.provenance.source = Some(input.clone());
            let binary = match &cli.binary {
                Some(b) => Some(side_file("-b", b, Some(&out), prog)?),
                None => None,
            };
            let (out, plan) = extract_to(&target, &cli, &ds, &vars, &sel)?;
            if let Some(bin) = binary {
                write_binary(&ds, &plan, &sel, slabbed(&cli), &bin)?;
                out.commit()?;
                return bin.commit();
            }
            out.commit()
        }
        None => print_file(&cli, &ds, &vars, &sel, &input),
    }
}

/// The input, and the output when one is given (`-o` or a second file).
///
/// Errors: no file, or more than two.
fn files(cli: &Cli) -> Result<(PathBuf, Option<PathBuf>)> {
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
    Ok((
        cli::with_prefix(cli.std.common.path.as_deref(), &input),
        output,
    ))
}

/// The target of output `out`; ncks records no thread count (NCO does not thread it).
/// An append without a variable list copies the input's global attributes over the
/// existing file's, one with `-v` (or `-x -v`) adds none (NCO 5.1.4, [`AppendGlobals`]).
fn target(prog: &str, argv: &[OsString], cli: &Cli, out: &Path, existing: Existing) -> Target {
    let mut target = cli.std.target(prog, argv, out, existing);
    target.provenance.threads = None;
    if cli.std.select.vars.is_none() {
        target.append_globals = AppendGlobals::Replaced;
    }
    target
}

/// Extract `vars` under `sel` from `ds` into `target` (merged into it with `-A`),
/// with the record-dimension changes asked for and the `--md5_*` digests; returned
/// for the caller to commit, with its plan.
fn extract_to(
    target: &Target,
    cli: &Cli,
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
) -> Result<(Output, extract::Plan)> {
    let rec = RecordChange {
        fix: cli.fix_rec_dmn.clone(),
        make: cli.mk_rec_dmn.clone(),
    };
    let layout = extract::Layout {
        gpe: cli.gpe.as_deref().map(groups::Gpe::parse).transpose()?,
        groups: nco_core::select::whole_groups(ds.meta(), &cli.std.select_args())?,
        all_dims: cli.all_dims,
    };
    let mut plan = target.plan_extract_with(ds.meta(), vars, sel, &rec, &layout)?;
    if cli.md5_digest || cli.md5_attribute {
        let order = digest::copy_order(&plan.meta, slabbed(cli));
        let digests = digest::digests(ds, &plan.meta, |i| plan.src[i], sel, &order)?;
        report_digests(&plan.meta, &digests);
        if cli.md5_attribute {
            digest::put_md5_attributes(&mut plan.meta, &digests);
        }
    }
    let mut out = Output::create(target, plan.meta.clone())?;
    out.copy_plan(ds, &plan, sel)?;
    Ok((out, plan))
}

/// True when a hyperslab was asked for (`-d` or `-X`): NCO then copies in output order.
fn slabbed(cli: &Cli) -> bool {
    !cli.std.slab.dims.is_empty() || !cli.std.slab.aux.is_empty()
}

/// `ncks: INFO MD5(var) = digest` for each digest, with `-D 1` or more (NCO's words).
fn report_digests(meta: &nco_core::model::Meta, digests: &[(usize, String)]) {
    if cli::debug_level() >= 1 {
        eprintln!("ncks: INFO Will perform MD5 digests of input and output hyperslabs");
        for (i, d) in digests {
            // NCO 5.1.4 names a variable of a group by its short name here.
            eprintln!("ncks: INFO MD5({}) = {d}", meta.vars[*i].name);
        }
    }
}

/// The temporary file of a file written beside the output or instead of standard
/// output (`-b`, `--prn_fl`), after checking, before any work, that it can replace
/// `path`: not the netCDF output `out`, not a folder, and writable when it exists (an
/// immutable file fails here, not after the output was renamed into place).
///
/// Errors: each of those, naming `option` and the file.
fn side_file(
    option: &str,
    path: &Path,
    out: Option<&Path>,
    prog: &str,
) -> Result<nco_core::output::TempOutput> {
    let shown = path.display();
    let same = |a: &Path, b: &Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    };
    if out.is_some_and(|o| same(o, path)) {
        return Err(Error::option(
            option,
            format!("{shown} is the netCDF output file"),
        ));
    }
    if path.is_dir() {
        return Err(Error::option(option, format!("{shown} is a folder")));
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::option(option, format!("{shown}: {e}")))?;
    }
    nco_core::output::TempOutput::new(path, prog).map_err(|e| Error::option(option, e.to_string()))
}

/// ncks's `-b`: the extracted values of `plan`'s variables, in NCO's order, into the
/// temporary binary file `bin` (renamed by the caller after the netCDF output).
///
/// Errors: an NC_STRING variable, write errors (naming the file).
fn write_binary(
    ds: &Dataset,
    plan: &extract::Plan,
    sel: &Selection,
    slabbed: bool,
    bin: &nco_core::output::TempOutput,
) -> Result<()> {
    let name = bin.dest().display().to_string();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .create(true)
        .open(bin.path())
        .map_err(|e| Error::io(&name, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let order = digest::copy_order(&plan.meta, slabbed);
    digest::write_binary(ds, plan, sel, &order, &mut w, &name)
}

fn print_file(
    cli: &Cli,
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    input: &Path,
) -> Result<()> {
    let explicit = cli.print_data || cli.print_var_meta || cli.print_global_meta || cli.print_all;
    let all = !explicit;
    // `-s` prints in the traditional style unless --cdl or --json asks otherwise: NCO
    // 5.1.4 does (`ncks -H -C -s '%f' -v v f.nc` prints `3.141590`, the shell idiom
    // `x=$(ncks ...)`), and mixes its CDL or JSON with the formatted values when one
    // of them is given; ours then formats the values inside the CDL or JSON.
    if cli.xml_number_separator.as_deref() == Some("") {
        return Err(Error::option(
            "--xml_spr_nmr",
            "an empty separator would run the numbers together",
        ));
    }
    let xml = cli.xml
        || cli.xml_no_location
        || cli.xml_text_separator.is_some()
        || cli.xml_number_separator.is_some();
    if xml && (cli.string_format.is_some() || cli.traditional) {
        let opt = if cli.traditional { "--trd" } else { "-s" };
        return Err(Error::option(
            opt,
            "traditional printing does not combine with --xml (NcML): choose one",
        ));
    }
    // JSON wins over NcML, as in NCO 5.1.4.
    let style = if cli.json || cli.json_format.is_some() {
        Style::Json
    } else if xml {
        Style::Xml
    } else if cli.traditional || (cli.string_format.is_some() && !cli.cdl) {
        Style::Trd
    } else {
        Style::Cdl
    };
    let format = match &cli.string_format {
        Some(f) => {
            let mut notes = Vec::new();
            let text = unescape_noting(f, &mut notes);
            for n in notes {
                eprintln!("ncks: {n}");
            }
            Some(CFormat::parse(&text)?)
        }
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
        // The CDL name is text: invalid UTF-8 bytes of the file name are replaced.
        name: input
            .file_stem()
            .map(|s| Path::new(s).display().to_string())
            .unwrap_or_default(),
        groups: nco_core::select::whole_groups(ds.meta(), &cli.std.select_args())?,
        // --dt_fmt 1-3 implies --cal; 0 is the default form, only with --cal (NCO).
        dates: match (cli.calendar, cli.date_format) {
            (_, Some(2)) => Some(DateStyle::Micro),
            (_, Some(3)) => Some(DateStyle::Iso),
            (_, Some(1)) | (true, _) => Some(DateStyle::Short),
            (false, _) => None,
        },
        dates_everywhere: all,
        all_dims: cli.all_dims,
        json_format: cli.json_format.unwrap_or(2),
        hidden: if cli.hidden {
            Some(print::Hidden::of(ds)?)
        } else {
            None
        },
        ncml: print::NcmlOptions {
            location: (!cli.xml_no_location).then(|| input.display().to_string()),
            text_separator: cli.xml_text_separator.clone(),
            number_separator: cli.xml_number_separator.clone(),
        },
        value_format: match &cli.value_format {
            Some(f) => Some(CFormat::parse_floating("--fmt_val", f)?),
            None => None,
        },
    };
    if cli.check_nan {
        return print::check_nan(ds, vars, sel);
    }
    if cli.md5_digest || cli.md5_attribute {
        // The printed variables are digested in the order printed (NCO 5.1.4).
        report_digests(
            ds.meta(),
            &digest::digests(ds, ds.meta(), |v| v, sel, vars)?,
        );
    }
    if cli.std.common.quiet {
        return Ok(());
    }
    if let Some(path) = &cli.print_file {
        // Written through a temporary file: a failed print leaves no half file.
        let tmp = side_file("--prn_fl", path, None, "ncks")?;
        let name = path.display().to_string();
        let file = std::fs::File::create(tmp.path()).map_err(|e| Error::io(&name, e))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        print::print(ds, vars, sel, &opts, &mut out)?;
        out.flush().map_err(|e| Error::io(&name, e))?;
        return tmp.commit();
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    print::print(ds, vars, sel, &opts, &mut out)?;
    out.flush().map_err(|e| Error::io("standard output", e))
}

/// List-input multi-station extraction: one pass over the input for every station of
/// the list; many outputs (no output file on the command line) or one output with a
/// station dimension. All outputs are renamed into place only when all were written.
fn run_list(
    prog: &str,
    argv: &[OsString],
    cli: &Cli,
    input: &Path,
    output: Option<&Path>,
    list: &Path,
    specs: &[HyperslabSpec],
) -> Result<()> {
    let stations_list = stations::read_list(list)?;
    // A map touches only the pages the stations need, with no system call per read.
    let ds = Dataset::open_with(input, &nco_core::dataset::io_config().mapped())?;
    let selections = stations_list
        .iter()
        .map(|st| cli.std.slab.resolve_station(&ds, specs, st))
        .collect::<Result<Vec<_>>>()?;
    match output {
        None => many_files(prog, argv, cli, &ds, &stations_list, selections),
        Some(out) => {
            // The station form always writes a new file (-A is accepted, as an overwrite).
            cli.std.common.existing(prog, out)?;
            let target = target(prog, argv, cli, out, Existing::Overwrite);
            let meta = ds.meta();
            let vars = nco_core::select::select(meta, &cli.std.select_args())?;
            let base = cli.std.slab.resolve_specs(&ds, specs)?;
            let mut plan = stations::plan_station_form(
                meta,
                &vars,
                &base,
                &stations_list,
                selections,
                &cli.stations.station_dim,
            )?;
            plan.meta.format = target.format.unwrap_or(meta.format);
            let mut out = Output::create(&target, plan.meta.clone())?;
            let read = |v: usize, idx: &[Vec<usize>]| ds.read(v, idx);
            stations::write_station_form(&plan, &stations_list, meta, &base, &read, out.writer())?;
            out.commit()
        }
    }
}

/// The many-files form: each station's output goes through the ordinary extraction,
/// after the input was read once for a batch of stations.
fn many_files(
    prog: &str,
    argv: &[OsString],
    cli: &Cli,
    ds: &Dataset,
    stations_list: &[stations::Station],
    selections: Vec<Selection>,
) -> Result<()> {
    let meta = ds.meta();
    stations::check_distinct_outputs(stations_list)?;
    let on_line =
        |line: usize| move |e: Error| Error::msg(format!("station list line {line}: {e}"));
    let mut jobs = Vec::with_capacity(stations_list.len());
    for (st, sel) in stations_list.iter().zip(selections) {
        let mut sa = cli.std.select_args();
        if let Some(v) = &st.vars {
            sa.vars = nco_core::select::split_items(v);
        }
        let vars = nco_core::select::select(meta, &sa).map_err(on_line(st.line))?;
        let target = cli
            .std
            .common
            .existing(prog, Path::new(&st.target))
            .map(|existing| {
                let mut t = target(prog, argv, cli, Path::new(&st.target), existing);
                t.provenance.source = Some(ds.path().into());
                if st.vars.is_some() {
                    t.append_globals = AppendGlobals::Existing;
                }
                t
            })
            .map_err(on_line(st.line))?;
        jobs.push((st, vars, sel, target));
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
        &|_, (st, vars, sel, target)| {
            extract_to(&target, cli, ds, &vars, &sel)
                .and_then(|(out, _)| out.finish())
                .map_err(on_line(st.line))
        },
    )
}
