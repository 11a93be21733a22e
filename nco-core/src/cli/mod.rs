//! Command-line pieces shared by every operator, with NCO's exact spellings (NCO
//! manual, "Shared Options"): clap argument groups flattened into each operator's
//! parser, the process plumbing ([`run_main`]: one-line errors, exit status 1 for every
//! failure, 0 for `--help`/`--version`, SIGPIPE's status on a closed pipe), thread-pool set-up,
//! the environment read once at start ([`env`]) and the `-D` rusage report ([`rusage`]).
//! The top layer of nco-core: it may use every module below.
//!
//! Repeat semantics follow NCO (getopt): a repeated option keeps the last value
//! (`-v one -v three` keeps `three`), except `-d` and `--cnk_dmn`, which accumulate.
//! Unambiguous prefixes of long options are accepted (`--versio`).

pub mod env;
pub mod ranks;
pub mod rusage;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use clap::{ArgAction, Args};

use crate::dataset::Dataset;
use crate::error::{Error, Result};
use crate::model::Format;
use crate::output::Existing;
use crate::plan::extract::StorageArgs;
use crate::plan::target::{Provenance, Target};
use crate::rules::chunking::ChunkArgs;
use crate::rules::hyperslab::{self, HyperslabSpec, Selection};
pub use crate::rules::multifile::with_prefix;
use crate::rules::select::{split_items, SelectArgs};
use crate::rules::stations;

static DEBUG: AtomicU32 = AtomicU32::new(0);

/// The `-D` debug level set by the running operator.
pub fn debug_level() -> u32 {
    DEBUG.load(Ordering::Relaxed)
}

/// Options every operator takes.
#[derive(Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// Overwrite an existing output file without asking
    #[arg(short = 'O', long = "ovr", visible_alias = "overwrite")]
    pub overwrite: bool,
    /// Append: merge the output into an existing file without asking (its other
    /// variables kept, same-named ones replaced, dimensions must agree)
    #[arg(short = 'A', long = "apn", visible_alias = "append")]
    pub append: bool,
    /// Do not add this command to the `history` global attribute
    #[arg(short = 'h', long = "hst", visible_alias = "history")]
    pub no_history: bool,
    /// Debug level: 1 or more reports wall, user and system time and peak memory at exit
    #[arg(
        short = 'D',
        long = "dbg_lvl",
        visible_alias = "debug-level",
        value_name = "LEVEL"
    )]
    pub debug: Option<u32>,
    /// Quiet: print nothing but errors (debug level 0)
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Path prefix for input file names (not for the output)
    #[arg(short = 'p', long = "pth", visible_alias = "path", value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Output file name (otherwise the last positional argument)
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "fl_out",
        value_name = "FILE"
    )]
    pub output: Option<PathBuf>,
    /// Threads for computation (default: all cores)
    #[arg(
        short = 't',
        long = "thr_nbr",
        visible_aliases = ["threads", "omp_num_threads"],
        value_name = "N"
    )]
    pub threads: Option<usize>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub gaa: GlobalAttrArgs,
    /// Accepted for NCO compatibility; the output still goes through a temporary file
    /// in its own folder, renamed on success (free, and a failed run never leaves a
    /// half-written output)
    #[arg(long = "no_tmp_fl")]
    pub no_tmp_fl: bool,
    /// Write through a temporary file (the default)
    #[arg(long = "wrt_tmp_fl")]
    pub wrt_tmp_fl: bool,
    /// Read and write every file through libnetcdf, not our classic-format engine
    #[arg(long = "no-mmap", visible_alias = "no_mmap")]
    pub no_mmap: bool,
    /// Print the version and the netCDF and HDF5 library versions in use, then exit
    #[arg(short = 'r', long = "revision", visible_alias = "vrs")]
    pub revision: bool,
    /// Print the version and the libraries in use (as -r), then exit
    #[arg(long = "version")]
    pub version: bool,
    /// Print this help, then exit
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// Everything an operator's command line shares: the files and the common, selection,
/// hyperslab and format options, flattened into each operator's parser.
#[derive(Args, Debug, Clone, Default)]
pub struct OperatorArgs {
    /// Input file(s), then the output file (ncks: the output is optional: without it, print)
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
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
}

impl OperatorArgs {
    /// The variable selection of this command line ([`VarArgs::select_args`]); with
    /// `-X` boxes, the auxiliary coordinates CF attributes name are extracted whatever
    /// the file's `Conventions` (NCO 5.1.4's ncks, checked).
    pub fn select_args(&self) -> SelectArgs {
        let mut a = self.select.select_args();
        a.cf_always = !self.slab.aux.is_empty();
        a
    }

    /// For operators taking exactly `n_inputs` inputs and one output (ncwa, ncbo,
    /// ncpdq, ncflint): the inputs (prefixed with `-p`) and the output's [`Target`]
    /// (the last file, or `-o`; the first input its [`Provenance::source`]), after
    /// checking that an existing output may be replaced (`-O`) or merged into (`-A`).
    ///
    /// Errors: a wrong number of files (the message gives the usage), an existing
    /// output without `-O` or `-A`.
    pub fn inputs_and_target(
        &self,
        prog: &str,
        argv: &[OsString],
        n_inputs: usize,
    ) -> Result<(Vec<PathBuf>, Target)> {
        let mut files = self.files.clone();
        if let Some(o) = &self.common.output {
            files.push(o.clone());
        }
        if files.len() != n_inputs + 1 {
            let what = if n_inputs == 1 {
                "one input"
            } else {
                "two input files"
            };
            return Err(Error::msg(format!(
                "{prog} takes {what} and one output file, {} given (usage: {prog} [options] {}out.nc)",
                files.len(),
                "in.nc ".repeat(n_inputs)
            )));
        }
        let out = files.pop().unwrap_or_default();
        let existing = self.common.existing(prog, &out)?;
        let mut target = self.target(prog, argv, &out, existing);
        let inputs: Vec<PathBuf> = files
            .iter()
            .map(|f| with_prefix(self.common.path.as_deref(), f))
            .collect();
        target.provenance.source = inputs.first().cloned();
        Ok((inputs, target))
    }

    /// The [`Target`] of output `path` (see [`target`]).
    pub fn target(&self, prog: &str, argv: &[OsString], path: &Path, existing: Existing) -> Target {
        target(prog, argv, &self.common, &self.format, path, existing)
    }
}

/// The [`Target`] of output `path` for this command line: treated as `existing`
/// ([`CommonArgs::existing`]), in the format and storage of `format`, with the
/// provenance `common` asks for (`history` unless `-h`, the `-t` thread count).
pub fn target(
    prog: &str,
    argv: &[OsString],
    common: &CommonArgs,
    format: &FormatArgs,
    path: &Path,
    existing: Existing,
) -> Target {
    Target {
        prog: prog.to_string(),
        path: path.into(),
        existing,
        format: format.format(),
        storage: StorageArgs {
            deflate: format.deflate,
            chunk: format.chunk.clone(),
            quantize: format.quantize.args(),
        },
        hdr_pad: format.hdr_pad.unwrap_or(0),
        md5_report: false,
        append_globals: crate::plan::target::AppendGlobals::Existing,
        provenance: Provenance {
            command: (!common.no_history).then(|| crate::output::command_line(argv)),
            input_list: None,
            threads: common.threads,
            source: None,
            global_attrs: common.gaa.pairs(),
        },
    }
}

/// `--gaa` (`--glb`, `--glb_att_add`), in every operator that writes a file.
#[derive(Args, Debug, Clone, Default)]
pub struct GlobalAttrArgs {
    /// Add (or replace) a global text attribute of the output: NAME=VALUE, several
    /// joined by '#' (repeatable)
    #[arg(
        long = "gaa",
        visible_aliases = ["glb", "glb_att_add"],
        value_name = "NAME=VALUE",
        value_parser = parse_global_attrs
    )]
    pub global_attrs: Vec<GlobalAttrs>,
}

impl GlobalAttrArgs {
    /// Every (name, value) given, in order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.global_attrs.iter().flat_map(|g| g.0.clone()).collect()
    }
}

/// The attributes of one `--gaa` argument ([`crate::attedit::global_attrs`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GlobalAttrs(pub Vec<(String, String)>);

fn parse_global_attrs(s: &str) -> std::result::Result<GlobalAttrs, String> {
    crate::attedit::global_attrs(s)
        .map(GlobalAttrs)
        .map_err(|e| match e {
            Error::Option { reason, .. } => reason,
            e => e.to_string(),
        })
}

impl CommonArgs {
    /// How an existing output `path` is treated, from `-O` and `-A` (asking on a
    /// terminal when neither is given, [`crate::output::resolve_existing`]). An append
    /// is carried out by the output itself ([`crate::target::Output`]), the same for
    /// every operator.
    ///
    /// Errors: both `-O` and `-A`; an existing output with neither and no terminal, or
    /// the user declining.
    pub fn existing(&self, prog: &str, path: &Path) -> Result<Existing> {
        crate::output::resolve_existing(prog, path, self.overwrite, self.append)
    }
}

/// The command line the operators that edit one file's metadata share (ncatted,
/// ncrename): `in.nc [out.nc]`, the file edited in place when no output is given, and
/// NCO's common options that apply to an edit. (ncatted's `-t` is its type match, so
/// these operators do not take [`CommonArgs`]' thread count.)
#[derive(Args, Debug, Clone, Default)]
pub struct EditArgs {
    /// The file to edit, then the output (without one, the file is edited in place)
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Overwrite an existing output file without asking
    #[arg(short = 'O', long = "ovr", visible_alias = "overwrite")]
    pub overwrite: bool,
    /// Refused: an edit writes a whole file (NCO accepts -A here and does nothing with it)
    #[arg(short = 'A', long = "apn", visible_alias = "append")]
    pub append: bool,
    /// Do not add this command to the `history` global attribute (nor the `NCO` one)
    #[arg(short = 'h', long = "hst", visible_alias = "history")]
    pub no_history: bool,
    /// Debug level: 1 or more reports wall, user and system time and peak memory at exit
    #[arg(
        short = 'D',
        long = "dbg_lvl",
        visible_alias = "debug-level",
        value_name = "LEVEL"
    )]
    pub debug: Option<u32>,
    /// Quiet: print nothing but errors (debug level 0)
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Path prefix for the input file name (not for the output)
    #[arg(short = 'p', long = "pth", visible_alias = "path", value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Output file name (otherwise the second positional argument, if any)
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "fl_out",
        value_name = "FILE"
    )]
    pub output: Option<PathBuf>,
    /// Accepted for NCO compatibility: the input never comes from standard input, so
    /// there is no input-file-list attribute to leave out
    #[arg(short = 'H', long = "fl_lst_in", visible_alias = "file_list")]
    pub no_file_list: bool,
    /// Keep at least this many free bytes after a netCDF3 header (room for later edits
    /// in place); the data moves only when the header does not fit
    #[arg(long = "hdr_pad", visible_alias = "header_pad", value_name = "BYTES")]
    pub hdr_pad: Option<u64>,
    /// Read every file through libnetcdf (classic files are still edited by our engine)
    #[arg(long = "no-mmap", visible_alias = "no_mmap")]
    pub no_mmap: bool,
    /// Print the version and the netCDF and HDF5 library versions in use, then exit
    #[arg(short = 'r', long = "revision", visible_alias = "vrs")]
    pub revision: bool,
    /// Print the version and the libraries in use (as -r), then exit
    #[arg(long = "version")]
    pub version: bool,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub gaa: GlobalAttrArgs,
    /// Print this help, then exit
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
}

impl EditArgs {
    /// The common options these arguments stand for.
    pub fn common(&self) -> CommonArgs {
        CommonArgs {
            overwrite: self.overwrite,
            append: self.append,
            no_history: self.no_history,
            debug: self.debug,
            quiet: self.quiet,
            path: self.path.clone(),
            output: self.output.clone(),
            no_mmap: self.no_mmap,
            revision: self.revision,
            gaa: self.gaa.clone(),
            ..CommonArgs::default()
        }
    }

    /// The file to edit (prefixed with `-p`) and the output, `None` to edit in place,
    /// after checking that an existing output may be replaced (`-O`).
    ///
    /// Errors: no file or more than two; an existing output without `-O`; `-A`.
    pub fn input_and_output(&self, prog: &str) -> Result<(PathBuf, Option<PathBuf>)> {
        let mut files = self.files.clone();
        if let Some(o) = &self.output {
            files.push(o.clone());
        }
        if files.is_empty() || files.len() > 2 {
            return Err(Error::msg(format!(
                "{prog} takes one input file and an optional output file, {} given (usage: \
                 {prog} [options] in.nc [out.nc])",
                files.len()
            )));
        }
        if self.append {
            return Err(Error::option(
                "-A",
                format!("appending is not supported by {prog}: it writes a whole file"),
            ));
        }
        let input = with_prefix(self.path.as_deref(), &files[0]);
        let output = match files.get(1) {
            Some(o) => {
                crate::output::resolve_existing(prog, o, self.overwrite, false)?;
                Some(o.clone())
            }
            None => None,
        };
        Ok((input, output))
    }

    /// What the edited file records about the edit: the command line in `history`
    /// (and the `NCO` attribute) unless `-h`.
    pub fn provenance(&self, argv: &[OsString]) -> Provenance {
        Provenance {
            command: (!self.no_history).then(|| crate::output::command_line(argv)),
            input_list: None,
            threads: None,
            source: None,
            global_attrs: self.gaa.pairs(),
        }
    }
}

/// Arithmetic options of the operators that compute (ncwa, ncra, nces, ncbo).
#[derive(Args, Debug, Clone, Default)]
pub struct ArithArgs {
    /// Unpack with the HDF convention scale_factor*(packed-add_offset)
    #[arg(long = "hdf_upk", visible_alias = "hdf_unpack")]
    pub hdf_upk: bool,
    /// Arithmetic in double precision (the default; accepted for NCO compatibility)
    #[arg(long = "dbl", visible_alias = "rth_dbl")]
    pub dbl: bool,
    /// Single-precision arithmetic in NCO; nco-rs always computes in double
    #[arg(long = "flt", visible_alias = "rth_flt")]
    pub flt: bool,
}

/// Job-array mode of the multi-file operators (ncra, ncrcat, nces, ncecat): a run
/// split across processes that need not share anything but a file system
/// ([`crate::plan::partial`]).
#[derive(Args, Debug, Clone, Default)]
pub struct PartArgs {
    /// Compute only part I of N of the run (ncra, ncrcat: a share of the records; nces,
    /// ncecat: of the members) and write its partial statistic (or its records or
    /// members) to the output, a part file for --merge (e.g. one Slurm array task each:
    /// --part $((SLURM_ARRAY_TASK_ID+1))/N)
    #[arg(long = "part", value_name = "I/N", value_parser = crate::rules::partial::PartSpec::parse)]
    pub part: Option<crate::rules::partial::PartSpec>,
    /// Combine the part files given (every part of one run, any order) into the output
    /// the whole run writes: `ncra --merge part_*.nc out.nc` (the run's options come
    /// from the parts; -O, -h, -D, -t from this command line)
    #[arg(long = "merge", conflicts_with = "part")]
    pub merge: bool,
}

/// The refusal of option `name` (`-A`, `--rec_apn`, `--list`) in a split run.
pub fn not_in_split_runs(name: &str) -> Error {
    Error::option(
        name,
        "not with --part, --merge or mpirun (append to the merged output afterwards)",
    )
}

/// The command line of an operator that splits (`--part`, `--merge`): the argument
/// groups the job-array helpers change.
pub trait SplitCli: clap::FromArgMatches + Clone + std::fmt::Debug {
    /// The operator's files, output and common options.
    fn std_mut(&mut self) -> &mut OperatorArgs;
    /// The input-list options (`-n`) of a multi-file operator (none for ncwa).
    fn inputs_mut(&mut self) -> Option<&mut InputListArgs>;
    /// `--part`, `--merge`.
    fn parts_mut(&mut self) -> &mut PartArgs;
    /// `--part`, `--merge`, to read.
    fn parts(&self) -> &PartArgs;
}

/// How the run of a splitting operator goes ([`split_run`]).
pub enum SplitRun<C> {
    /// `--merge`: the command line the parts recorded, and the parts.
    Merge(C, crate::plan::partial::Parts),
    /// Under `mpirun` with several ranks.
    Ranks(ranks::Ranks),
    /// One process (a `--part` among them).
    Alone,
}

/// The way the command line `cli` of `prog` runs: a merge (checked to run as one
/// process), across MPI ranks, or alone. `single` names the mode of `cli` that runs
/// as one process only (ncrcat, a station list), refused under `mpirun`; `--part` is
/// one too.
///
/// Errors: as [`merge_command_line`] and [`ranks::Ranks::start`].
pub fn split_run<C: SplitCli>(
    prog: &str,
    cmd: impl Fn() -> clap::Command,
    cli: &C,
    single: Option<&str>,
) -> Result<SplitRun<C>> {
    if cli.parts().merge {
        // One process merges; under mpirun every rank would.
        ranks::Ranks::start(&format!("{prog} --merge"), false)?;
        let (run, parts) = merge_command_line(prog, cmd, cli)?;
        return Ok(SplitRun::Merge(run, parts));
    }
    let part = format!("{prog} --part (a part per job already)");
    let single = single.or(cli.parts().part.is_some().then_some(part.as_str()));
    Ok(
        match ranks::Ranks::start(single.unwrap_or(prog), single.is_none())? {
            Some(r) => SplitRun::Ranks(r),
            None => SplitRun::Alone,
        },
    )
}

/// The options of `cli` that decide a split run's result, as text for its identity
/// ([`crate::plan::partial::run_id`]): everything but the inputs and output (stamped
/// separately), `--part`/`--merge`, and what the merge's own command line gives (`-O`,
/// `-h`, `-D`, `-q`, `-t`, `-p`, temporary-file switches).
pub fn split_options_text<C: SplitCli>(cli: &C) -> String {
    let mut c = cli.clone();
    c.std_mut().files.clear();
    if let Some(i) = c.inputs_mut() {
        i.nintap = None;
    }
    *c.parts_mut() = PartArgs::default();
    let common = &mut c.std_mut().common;
    *common = CommonArgs {
        gaa: common.gaa.clone(),
        no_mmap: common.no_mmap,
        ..CommonArgs::default()
    };
    format!("{c:?}")
}

/// The plan of part `spec` (`--part`'s, or an MPI rank's) of the run of `cli` over
/// `inputs`, its identity from [`split_options_text`].
///
/// Errors: as [`crate::plan::partial::PartPlan::new`].
pub fn part_plan<C: SplitCli>(
    prog: &str,
    cli: &C,
    spec: crate::rules::partial::PartSpec,
    argv: &[OsString],
    inputs: &[PathBuf],
) -> Result<crate::plan::partial::PartPlan> {
    let options = split_options_text(cli);
    crate::plan::partial::PartPlan::new(prog, spec, &options, argv, inputs)
}

/// `--merge`: the part files of `cli` (positional; the last argument or `-o` is the
/// output) opened and checked, and the command line of the run they record, with the
/// run's inputs, this command line's output and its own common options (`-O`, `-h`,
/// `-D`, `-q`, `-t`). `cmd` is the operator's clap command.
///
/// Errors: options other than those given (the run's come from its parts), no part
/// files or no output, and those of [`crate::plan::partial::Parts::open`].
pub fn merge_command_line<C: SplitCli>(
    prog: &str,
    cmd: impl Fn() -> clap::Command,
    cli: &C,
) -> Result<(C, crate::plan::partial::Parts)> {
    let bare: C = recorded(cmd(), &[prog.to_string()])?;
    if split_options_text(cli) != split_options_text(&bare) {
        return Err(Error::option(
            "--merge",
            "takes the run's options from its part files: give only the part files, the output and -O, -h, -D, -q, -t, -p",
        ));
    }
    let mut mine = cli.clone();
    let std = mine.std_mut();
    let mut files = std::mem::take(&mut std.files);
    let out = match std.common.output.take() {
        Some(o) => o,
        None => files
            .pop()
            .ok_or_else(|| Error::option("--merge", "no part files and output given"))?,
    };
    let files: Vec<PathBuf> = files
        .iter()
        .map(|f| with_prefix(std.common.path.as_deref(), f))
        .collect();
    if nco_io::part::PartReader::open(&out).is_ok() {
        return Err(Error::option(
            "--merge",
            format!(
                "the last argument, {}, is a part file: give the output after the part files",
                out.display()
            ),
        ));
    }
    let parts = crate::plan::partial::Parts::open(prog, &files)?;
    let h = parts.header();
    if let Some(s) = h.inputs.iter().find(|s| !s.path.exists()) {
        return Err(Error::Format {
            path: s.path.display().to_string(),
            reason: "no such input: the merge opens the run's inputs by the names its parts were given, relative to the folder the parts ran in".into(),
        });
    }
    let mut run: C = recorded(cmd(), &h.argv)?;
    *run.parts_mut() = PartArgs::default();
    if let Some(i) = run.inputs_mut() {
        i.nintap = None;
    }
    let std = run.std_mut();
    std.files = h.inputs.iter().map(|s| s.path.clone()).collect();
    std.files.push(out);
    std.common = CommonArgs {
        gaa: std.common.gaa.clone(),
        no_mmap: std.common.no_mmap,
        output: None,
        path: None,
        ..mine.std_mut().common.clone()
    };
    Ok((run, parts))
}

/// The command line `argv` a part file recorded, parsed with `cmd` as the run that
/// wrote the part parsed it (for `--merge` to plan the same output).
///
/// Errors: the recorded command line no longer parses (one line).
pub fn recorded<C: clap::FromArgMatches>(cmd: clap::Command, argv: &[String]) -> Result<C> {
    let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
    parse_with(cmd, &argv)?
        .ok_or_else(|| Error::option("--merge", "the parts' recorded command line asks for help"))
}

/// Input-list options of the multi-file operators (ncra, ncrcat, nces, ncecat), and
/// their `--md5_dgs`.
#[derive(Args, Debug, Clone, Default)]
pub struct InputListArgs {
    /// MD5 digests of the output's variables, reported with -D 1 or more
    /// (`ncrcat: INFO MD5(var) = ...`, of the values written, in this machine's byte
    /// order, as ncks reports them)
    #[arg(long = "md5_dgs", visible_alias = "md5_digest")]
    pub md5_digests: bool,
    /// Climatology bounds (ncra, ncrcat, nces): the output's time and bounds are those
    /// of the climatology of years yr_srt-yr_end, months mth_srt-mth_end, tpd
    /// timesteps per day (0: monthly means), CF's climatology_bounds
    #[arg(
        long = "cb",
        visible_aliases = ["clm_bnd", "clm_nfo", "climatology_information"],
        value_name = "YR_SRT,YR_END,MTH_SRT,MTH_END,TPD"
    )]
    pub climatology: Option<String>,
    /// Generate input names: count,digits,increment
    #[arg(short = 'n', long = "nintap", value_name = "NBR,DGT,INC")]
    pub nintap: Option<String>,
    /// Do not write the input-file-list global attributes
    #[arg(short = 'H', long = "fl_lst_in", visible_alias = "file_list")]
    pub no_file_list: bool,
}

impl InputListArgs {
    /// `--cb`: the climatology of this run's output definitions `out` (edited,
    /// [`crate::climatology::plan`]), `None` without `--cb` or when it does nothing
    /// (warned on stderr). `first` is the first input, `files` the number of inputs,
    /// `over_years` the statistic of each output variable for `cell_methods` (ncra,
    /// ncrcat; `None`: nces, `--no_cll_mth`).
    ///
    /// Errors (naming `--cb`): with `appending` (`-A`, `--rec_apn`: the existing file's
    /// time bounds would stay beside the new ones), a bad `--cb` text, the plan's.
    pub fn climatology(
        &self,
        prog: &str,
        appending: bool,
        first: &crate::model::Meta,
        out: &mut crate::model::Meta,
        files: usize,
        over_years: Option<&dyn Fn(usize) -> &'static str>,
    ) -> Result<Option<crate::climatology::Climatology>> {
        let Some(text) = &self.climatology else {
            return Ok(None);
        };
        if appending {
            return Err(Error::option(
                "--cb",
                "does not combine with -A or --rec_apn yet: write a new file",
            ));
        }
        let info = crate::climatology::ClimoInfo::parse(text)?;
        crate::climatology::apply_or_warn(prog, &info, first, out, files, over_years)
    }

    /// Give `target` the digest report `--md5_dgs` asks for: only at `-D 1` or more,
    /// where it is shown (NCO 5.1.4 announces digests there and computes none).
    pub fn digests_into(&self, target: &mut Target) {
        target.md5_report = self.md5_digests && debug_level() >= 1;
    }
}

/// Variable selection options (`-v -x -C -c`).
#[derive(Args, Debug, Clone, Default)]
pub struct VarArgs {
    /// Variables to process: comma-separated names or regular expressions
    #[arg(
        short = 'v',
        long = "variable",
        visible_alias = "var",
        value_name = "LIST",
        allow_hyphen_values = true
    )]
    pub vars: Option<String>,
    /// Exclude the -v variables instead of extracting them
    #[arg(short = 'x', long = "xcl", visible_alias = "exclude")]
    pub exclude: bool,
    /// Do not add coordinate and CF-associated variables
    #[arg(short = 'C', long = "no_crd", visible_aliases = ["xcl_ass_var", "no-coords"])]
    pub no_coords: bool,
    /// Add all coordinate variables of the file
    #[arg(short = 'c', long = "crd", visible_aliases = ["xtr_ass_var", "coords"])]
    pub all_coords: bool,
    /// Do not follow CF formula_terms attributes
    #[arg(long = "no_frm_trm")]
    pub no_formula_terms: bool,
    /// Do not follow CF cell_measures attributes
    #[arg(long = "no_cll_msr")]
    pub no_cell_measures: bool,
    /// Groups to process: comma-separated names or paths (with their subgroups) or
    /// regular expressions
    #[arg(
        short = 'g',
        long = "grp",
        visible_alias = "group",
        value_name = "LIST",
        allow_hyphen_values = true
    )]
    pub groups: Option<String>,
    /// With -g and -v: the union of the groups' variables and the -v variables (of any
    /// group), instead of the -v variables of those groups
    #[arg(long = "unn", visible_alias = "union")]
    pub union: bool,
}

impl VarArgs {
    /// The literal selection request.
    pub fn select_args(&self) -> SelectArgs {
        SelectArgs {
            vars: self.vars.as_deref().map(split_items).unwrap_or_default(),
            exclude: self.exclude,
            no_coords: self.no_coords,
            all_coords: self.all_coords,
            no_formula_terms: self.no_formula_terms,
            no_cell_measures: self.no_cell_measures,
            // An empty -g (or item) is an error (NCO's), not "every group".
            groups: self.groups.as_deref().map(split_items).unwrap_or_default(),
            union: self.union,
            cf_always: false,
        }
    }
}

/// Hyperslab options (`-d`, `-F`, `--msa_usr_rdr`, `-X`).
#[derive(Args, Debug, Clone, Default)]
pub struct SlabArgs {
    /// Hyperslab dim,min,max,stride[,subcycle] by index (integers) or coordinate value
    /// (with a decimal point); repeat for multi-slabs
    #[arg(
        short = 'd',
        long = "dmn",
        visible_alias = "dimension",
        value_name = "DIM,[MIN],[MAX],[STRIDE]",
        action = ArgAction::Append,
        allow_hyphen_values = true,
        value_parser = HyperslabSpec::parse
    )]
    pub dims: Vec<HyperslabSpec>,
    /// Fortran (1-based, inclusive) indices in -d
    #[arg(short = 'F', long = "ftn", visible_alias = "fortran")]
    pub fortran: bool,
    /// Keep multi-slabs in the order given instead of increasing index order
    #[arg(long = "msa_usr_rdr", visible_alias = "msa")]
    pub user_order: bool,
    /// Auxiliary-coordinate box lon_min,lon_max,lat_min,lat_max (degrees): keep the
    /// points of a cell-based grid (latitude and longitude named by a `coordinates`
    /// attribute, on one dimension) inside it; repeat for several boxes
    #[arg(
        short = 'X',
        long = "auxiliary",
        visible_alias = "aux",
        value_name = "LON_MIN,LON_MAX,LAT_MIN,LAT_MAX",
        action = ArgAction::Append,
        allow_hyphen_values = true,
        value_parser = crate::auxbox::AuxBox::parse
    )]
    pub aux: Vec<crate::auxbox::AuxBox>,
}

impl SlabArgs {
    /// The selection of every `-d` in `ds` (coordinate values read from it), with
    /// `-F` and `--msa_usr_rdr` applied.
    ///
    /// Errors: those of [`hyperslab::resolve`].
    pub fn resolve(&self, ds: &Dataset) -> Result<Selection> {
        self.resolve_specs(ds, &self.dims)
    }

    /// Every `-d` of operator `prog` (parsed by the option's value parser), checked
    /// against the rules that depend on the operator.
    ///
    /// Errors: those of [`HyperslabSpec::check_operator`].
    pub fn specs(&self, prog: &str) -> Result<&[HyperslabSpec]> {
        HyperslabSpec::check_operator(prog, &self.dims)?;
        Ok(&self.dims)
    }

    /// The selection of `specs` (the command line's changed: a station's, those on
    /// dimensions a file has) in `ds`, with `-F` and `--msa_usr_rdr` applied.
    ///
    /// Errors: those of [`hyperslab::resolve`].
    pub fn resolve_specs(&self, ds: &Dataset, specs: &[HyperslabSpec]) -> Result<Selection> {
        let mut sel = hyperslab::resolve(ds.meta(), specs, self.fortran, self.user_order, &|v| {
            ds.read_all(v)
        })?;
        if !self.aux.is_empty() {
            let meta = ds.meta();
            for (d, picked) in crate::auxbox::select(meta, &self.aux, &|v| ds.read_all(v))? {
                if sel.restricts(d) {
                    return Err(Error::option(
                        "-X",
                        format!(
                            "-X and -d on dimension {} together are not supported yet",
                            meta.dims[d].name
                        ),
                    ));
                }
                if sel.dims.len() < meta.dims.len() {
                    sel.dims.resize(meta.dims.len(), None);
                }
                sel.dims[d] = Some(picked);
            }
        }
        Ok(sel)
    }

    /// The selection of station `st` of a station list in `ds`: `specs` (the command
    /// line's) replaced by the line's own ([`stations::merged_specs`]), after checking
    /// that its points lie on the grid ([`stations::check_inside`]).
    ///
    /// Errors: a point off the grid, and a selection that fails (naming the line).
    pub fn resolve_station(
        &self,
        ds: &Dataset,
        specs: &[HyperslabSpec],
        st: &stations::Station,
    ) -> Result<Selection> {
        stations::check_inside(ds.meta(), &|v| ds.read_all(v), st)?;
        self.resolve_specs(ds, &stations::merged_specs(specs, st))
            .map_err(|e| Error::msg(format!("station list line {}: {e}", st.line)))
    }
}

/// Output format and storage options.
#[derive(Args, Debug, Clone, Default)]
pub struct FormatArgs {
    /// Write netCDF3 classic (CDF-1)
    #[arg(short = '3')]
    pub classic: bool,
    /// Write netCDF-4 (HDF5)
    #[arg(short = '4', visible_alias = "netcdf4")]
    pub netcdf4: bool,
    /// Write CDF-5 (64-bit data)
    #[arg(short = '5')]
    pub cdf5: bool,
    /// Write 64-bit offset (CDF-2)
    #[arg(short = '6', visible_alias = "64bit_offset")]
    pub offset64: bool,
    /// Write netCDF-4 classic model
    #[arg(short = '7')]
    pub netcdf4_classic: bool,
    /// Output format: classic, 64bit_offset, 64bit_data, netcdf4, netcdf4_classic
    #[arg(
        long = "fl_fmt",
        visible_alias = "file_format",
        value_name = "FORMAT",
        value_parser = parse_format
    )]
    pub fl_fmt: Option<Format>,
    /// Deflate level 0-9 for netCDF-4 output
    #[arg(
        short = 'L',
        long = "dfl_lvl",
        visible_alias = "deflate",
        value_name = "LEVEL",
        value_parser = parse_deflate
    )]
    pub deflate: Option<i32>,
    /// Extra bytes of header padding in netCDF3 output
    #[arg(long = "hdr_pad", visible_alias = "header_pad", value_name = "BYTES")]
    pub hdr_pad: Option<u64>,
    /// Chunking options (netCDF-4 output).
    #[command(flatten)]
    pub chunk: ChunkArgs,
    /// Quantization options (any output format).
    #[command(flatten)]
    pub quantize: QuantizeCli,
}

/// `--ppc` and `--baa` (NCO's precision-preserving compression,
/// [`crate::quantize`]).
#[derive(Args, Debug, Clone, Default)]
pub struct QuantizeCli {
    /// Quantize: VAR[,VAR...]=PRC, several joined by '#' (repeatable). PRC: significant
    /// digits (T=3) or, after a dot, decimal digits (T=.2 hundredths, T=.-2 hundreds).
    /// VAR: a name, full path or regular expression, or 'default' for every
    /// floating-point variable but coordinates and bounds. Add -L 1 (netCDF-4) for the
    /// smaller file
    #[arg(
        long = "ppc",
        visible_aliases = ["precision_preserving_compression", "quantize", "qnt"],
        value_name = "VAR=PRC",
        value_parser = parse_ppc_items
    )]
    pub ppc: Vec<PpcItems>,
    /// Quantization algorithm of significant digits: 0 BitGroom, 1 BitShave, 2 BitSet,
    /// 3 DigitRound, 4 Granular BitRound (default), 5 BitGroomRound, 6 HalfShave (bits),
    /// 7 BruteForce, 8 BitRound (bits); or btg shv set dgr gbr bgr sh2 brt btr
    #[arg(
        long = "baa",
        visible_aliases = ["bit_alg", "qnt_alg", "quantize_algorithm"],
        value_name = "ALG",
        value_parser = parse_baa
    )]
    pub algorithm: Option<crate::model::QuantizeAlgorithm>,
}

/// The `KEY=PRC` items of one `--ppc` argument.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PpcItems(pub Vec<(String, crate::model::Precision)>);

fn option_reason(e: Error) -> String {
    match e {
        Error::Option { reason, .. } => reason,
        e => e.to_string(),
    }
}

fn parse_ppc_items(s: &str) -> std::result::Result<PpcItems, String> {
    crate::quantize::parse_ppc(s)
        .map(PpcItems)
        .map_err(option_reason)
}

fn parse_baa(s: &str) -> std::result::Result<crate::model::QuantizeAlgorithm, String> {
    crate::quantize::parse_algorithm(s).map_err(option_reason)
}

impl QuantizeCli {
    /// The quantization asked for (none without `--ppc`).
    pub fn args(&self) -> crate::quantize::QuantizeArgs {
        crate::quantize::QuantizeArgs {
            items: self.ppc.iter().flat_map(|p| p.0.clone()).collect(),
            algorithm: self.algorithm.unwrap_or_default(),
        }
    }
}

impl FormatArgs {
    /// The requested output format, `None` to keep the input's.
    pub fn format(&self) -> Option<Format> {
        if self.fl_fmt.is_some() {
            return self.fl_fmt;
        }
        if self.netcdf4 {
            Some(Format::Netcdf4)
        } else if self.netcdf4_classic {
            Some(Format::Netcdf4Classic)
        } else if self.cdf5 {
            Some(Format::Cdf5)
        } else if self.offset64 {
            Some(Format::Offset64)
        } else if self.classic {
            Some(Format::Classic)
        } else {
            None
        }
    }
}

/// Parse a `--fl_fmt` name (NCO's names and their short forms).
///
/// Errors: an unknown name.
pub fn parse_format(f: &str) -> Result<Format> {
    Ok(match f.to_ascii_lowercase().as_str() {
        "classic" | "3" | "nc3" | "netcdf3" => Format::Classic,
        "64bit_offset" | "64bit" | "6" | "64" => Format::Offset64,
        "64bit_data" | "cdf5" | "5" | "pnetcdf" => Format::Cdf5,
        "netcdf4" | "4" | "nc4" | "hdf5" => Format::Netcdf4,
        "netcdf4_classic" | "7" | "nc7" | "netcdf4classic" => Format::Netcdf4Classic,
        _ => return Err(Error::option("--fl_fmt", format!("unknown format \"{f}\""))),
    })
}

/// Parse a `-L` deflate level.
///
/// Errors: not an integer in 0..9.
pub fn parse_deflate(s: &str) -> Result<i32> {
    let l: i32 = s
        .trim()
        .parse()
        .map_err(|_| Error::option("-L", format!("deflate level \"{s}\" is not an integer")))?;
    if !(0..=9).contains(&l) {
        return Err(Error::option(
            "-L",
            format!("deflate level {l} is not in 0..9"),
        ));
    }
    Ok(l)
}

/// Configure the global rayon pool for `-t N` (0 or absent: all cores).
pub fn set_threads(n: Option<usize>) {
    if let Some(n) = n.filter(|&n| n > 0) {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global();
    }
}

/// Apply what every operator does with the common options before any work: the
/// debug level, the thread pool, and the libnetcdf switch.
pub fn apply_common(c: &CommonArgs) {
    let lvl = if c.quiet { 0 } else { c.debug.unwrap_or(0) };
    DEBUG.store(lvl, Ordering::Relaxed);
    set_threads(c.threads);
    if c.no_mmap {
        crate::dataset::set_io_config(crate::dataset::IoConfig {
            force_libnetcdf: true,
            ..crate::dataset::io_config()
        });
    }
}

/// The version line (`ncks (nco-rs) 0.1.0, compatible with NCO ... 5.1.4`).
pub fn version_line(prog: &str) -> String {
    format!(
        "{prog} (nco-rs) {}, compatible with NCO netCDF Operators version 5.1.4\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What `-r` and `--version` print: the version line, then the libraries in use with
/// their versions (netCDF, HDF5, as NCO's `-r` names the netCDF library it is linked
/// to), and MPI's (when built with the `mpi` feature).
pub fn version_text(prog: &str) -> String {
    let mut s = version_line(prog);
    for (lib, v) in crate::dataset::library_versions() {
        s.push_str(&format!("Linked to {lib} library version {v}\n"));
    }
    match ranks::Ranks::library_version() {
        Some(v) => s.push_str(&format!("Linked to MPI library version {v}\n")),
        None => s.push_str("MPI: not built (build with --features mpi for mpirun)\n"),
    }
    s
}

/// Turn a clap parse failure into the operator's result: `--help`/`--version` print and
/// succeed (exit 0); anything else is a one-line error (exit 1, NCO's status).
pub fn clap_error(e: clap::Error) -> Result<()> {
    match e.kind() {
        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
            print_out(&e.to_string())
        }
        // A value our parser refused: its own message, which names the option.
        // Another parser's (a number's) message does not, so clap's line is kept.
        clap::error::ErrorKind::ValueValidation => {
            match std::error::Error::source(&e).and_then(|r| r.downcast_ref::<Error>()) {
                Some(reason) => Err(Error::msg(reason.to_string())),
                None => Err(Error::msg(format!("{} (try --help)", first_line(&e)))),
            }
        }
        clap::error::ErrorKind::UnknownArgument => {
            let arg = match e.get(clap::error::ContextKind::InvalidArg) {
                Some(clap::error::ContextValue::String(a)) => a.clone(),
                _ => String::new(),
            };
            match not_yet(&arg) {
                Some(what) => Err(Error::msg(format!(
                    "{arg}: {what} of NCO 5.1.4 is not supported yet by nco-rs"
                ))),
                None => Err(Error::msg(format!("{} (try --help)", first_line(&e)))),
            }
        }
        _ => Err(Error::msg(format!("{} (try --help)", first_line(&e)))),
    }
}

/// What NCO 5.1.4's option `arg` (`--ppc`, `--map=f.nc`) does, when it is one nco-rs
/// does not support yet (README, "Not yet"), so that its refusal says so.
fn not_yet(arg: &str) -> Option<&'static str> {
    let name = arg.trim_start_matches('-');
    let name = name.split('=').next().unwrap_or(name);
    const TABLE: &[(&[&str], &str)] = &[
        (
            &["cmp", "cmp_sng", "codec", "compress"],
            "compression codecs (--cmp)",
        ),
        (
            &[
                "map",
                "rgr_map",
                "rgr",
                "regridding",
                "rnr_thr",
                "rnr",
                "xtn_var",
                "extensive",
                "area_wgt",
                "chk_map",
                "vrt_in",
                "vrt_out",
                "s1d",
                "sparse",
                "hrz",
                "is_hrz",
            ],
            "regridding and vertical interpolation",
        ),
        (
            &["hpss", "hpss_try", "lcl", "local", "rtn", "retain"],
            "retrieval of remote files",
        ),
        (
            &["bfr_sz", "buffer_size", "uio", "share_all"],
            "netCDF3 buffer tuning",
        ),
        (&["l", "R"], "retrieval of remote files"),
        (&["G", "gpe"], "group path editing (-G) outside ncks"),
        (
            &[
                "nsm_grp",
                "ensemble_group",
                "nsm_sfx",
                "ensemble_suffix",
                "gag",
                "aggregate_group",
            ],
            "ensembles of groups (--nsm_grp, --gag)",
        ),
        (
            &["nsm_fl", "ensemble_file"],
            "the --nsm_fl switch (ensembles of files are the default)",
        ),
        (&["prw", "per_record_weights"], "per-record weights (--prw)"),
        (
            &["mrd", "multiple_record_dimensions"],
            "multiple record dimensions (--mrd)",
        ),
        (
            &["ddra", "mdl_cmp", "dbg_fl", "fl_dbg"],
            "the debugging and modeling switches",
        ),
        (&["hdf", "hdf4"], "HDF4 input"),
        (
            &["srm", "lst_rnk_ge2", "sng_fmt_mem"],
            "the streaming and listing switches of ncks",
        ),
    ];
    TABLE
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, what)| *what)
}

/// A comma-separated list of finite numbers given to `option` (`-w 1,2.5,3`), as
/// ncra's and nces's weights are written.
///
/// Errors: an item that is not a finite number, naming `option` and the item.
pub fn number_list(option: &str, text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| Error::option(option, format!("weight '{x}' is not a number")))
        })
        .collect()
}

/// The first line of clap's message, without its `error: `.
fn first_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("");
    first.trim_start_matches("error: ").to_string()
}

/// The start every operator shares: parse `argv` with `cmd` into `C` (option values
/// typed by their parsers), print the version for `-r` and apply the common options
/// (debug level, threads, libnetcdf switch). `Ok(None)` means "done" (help, version or
/// `-r` printed).
///
/// Errors: malformed options (one line naming the option, exit 1).
pub fn start<C: clap::FromArgMatches>(
    cmd: clap::Command,
    argv: &[OsString],
    prog: &str,
    common: impl Fn(&C) -> &CommonArgs,
) -> Result<Option<C>> {
    let Some(c) = parse_with(cmd, argv)? else {
        return Ok(None);
    };
    let common = common(&c);
    if common.revision || common.version {
        print_out(&version_text(prog))?;
        return Ok(None);
    }
    refuse_ranks(prog)?;
    apply_common(common);
    Ok(Some(c))
}

/// The operators that split a run across MPI ranks (the others refuse a launch with
/// several ranks: each rank would write the whole output).
const SPLITS_ACROSS_RANKS: [&str; 6] = ["ncra", "ncrcat", "nces", "ncea", "ncecat", "ncwa"];

/// Refuse a launch by `mpirun` with several ranks of an operator that does not split.
///
/// Errors: as [`ranks::Ranks::start`].
fn refuse_ranks(prog: &str) -> Result<()> {
    if SPLITS_ACROSS_RANKS.contains(&prog) {
        return Ok(());
    }
    ranks::Ranks::start(prog, false).map(drop)
}

/// [`start`] for the operators that edit one file's metadata (ncatted, ncrename),
/// whose shared options are [`EditArgs`].
///
/// Errors: malformed options (one line, exit 1).
pub fn start_edit<C: clap::FromArgMatches>(
    cmd: clap::Command,
    argv: &[OsString],
    prog: &str,
    shared: impl Fn(&C) -> &EditArgs,
) -> Result<Option<C>> {
    let Some(c) = parse_with(cmd, argv)? else {
        return Ok(None);
    };
    let e = shared(&c);
    if e.revision || e.version {
        print_out(&version_text(prog))?;
        return Ok(None);
    }
    refuse_ranks(prog)?;
    apply_common(&e.common());
    Ok(Some(c))
}

/// Parse `argv` with `cmd` into `C`; `Ok(None)` when `--help` or `--version` printed.
fn parse_with<C: clap::FromArgMatches>(cmd: clap::Command, argv: &[OsString]) -> Result<Option<C>> {
    let matches = match cmd.try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return clap_error(e).map(|()| None),
    };
    C::from_arg_matches(&matches)
        .map(Some)
        .map_err(|e| Error::msg(e.to_string()))
}

/// Build a clap command with the settings every operator shares.
pub fn configure(cmd: clap::Command) -> clap::Command {
    cmd.disable_help_flag(true)
        .disable_version_flag(true)
        .version(concat!(
            env!("CARGO_PKG_VERSION"),
            " (compatible with NCO 5.1.4)"
        ))
        .infer_long_args(true)
        .args_override_self(true)
        .dont_collapse_args_in_usage(true)
}

/// Write `text` to standard output (help, version): a closed pipe is an error
/// [`run_main`] ends quietly, where `print!` would panic.
fn print_out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("standard output", e))
}

fn is_broken_pipe(e: &Error) -> bool {
    matches!(e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// End the process as a closed standard output ends NCO and other C programs
/// (`ncks -H -v v big.nc | head -2`): silently, killed by SIGPIPE (status 141 in the
/// shell, which `set -o pipefail` scripts see). Rust ignores SIGPIPE, so the write
/// failed with EPIPE instead and our clean-up (temporary outputs) has already run;
/// the default action is restored and the signal raised now.
fn exit_on_closed_pipe() -> ! {
    // SAFETY: restoring a signal's default action and raising it in this process; the
    // fall-back `_exit` is reached only if the signal were blocked.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
        libc::_exit(128 + libc::SIGPIPE)
    }
}

/// Keep large buffers in the heap instead of fresh `mmap`s: the operators allocate and
/// free many multi-megabyte buffers (blocks, records), and every fresh mapping costs a
/// page fault per 4 KiB on first touch (about 0.5 s per GiB here, docs/engine.md). With
/// these glibc settings freed blocks are reused at no cost.
fn tune_allocator() {
    // SAFETY: mallopt only changes glibc's allocation thresholds; called before any
    // thread is started.
    unsafe {
        // 32 MiB is the largest threshold glibc accepts on 64-bit systems; the
        // operators' streaming blocks stay below it.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        // One arena for every thread: each rayon thread's own arena kept the high
        // water of the buffers that thread had held, untrimmed, so the process's
        // resident memory was the sum of those (nces over 4 deflated stl_5km files: 142
        // MB resident, 90 MB of heap at its peak; 123 MB with one arena, and no slower:
        // the operators allocate buffers per block, not per element).
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Run an operator: collect argv, call `run`, print any error as one line
/// `<prog>: ERROR <message>` (a message of several lines joined, [`Error::one_line`])
/// and return exit status 1; print the `-D` rusage report.
pub fn run_main(prog: &str, run: fn(&str, Vec<OsString>) -> Result<()>) -> ExitCode {
    let start = Instant::now();
    let _ = PROG.set(prog.to_string());
    tune_allocator();
    env::install();
    let name = prog.to_string();
    // A bug must still end as one line and exit status 1, never a backtrace.
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = crate::error::one_line(&msg);
        error_line(&format!(
            "{name}: ERROR internal error (please report): {msg}{at}\n"
        ));
    }));
    let argv: Vec<OsString> = std::env::args_os().collect();
    let result = match std::panic::catch_unwind(|| run(prog, argv)) {
        Ok(r) => r,
        Err(_) => fail_exit(),
    };
    if debug_level() >= 1 {
        error_line(&format!("{prog}: {}\n", crate::cli::rusage::report(start)));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => exit_on_closed_pipe(),
        Err(Error::Reported) => fail_exit(),
        Err(e) => {
            error_line(&format!("{prog}: ERROR {}\n", e.one_line()));
            fail_exit()
        }
    }
}

/// The operator's name as [`run_main`] was given it (for lines printed before it
/// returns).
static PROG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The running operator's name (`nco-rs` outside [`run_main`]).
pub(crate) fn prog_name() -> &'static str {
    PROG.get().map_or("nco-rs", String::as_str)
}

/// Write `line` to standard error in one `write` (not piece by piece as `eprintln!`
/// may): the error lines of MPI ranks sharing one stderr never interleave.
pub(crate) fn error_line(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Exit with status 1 after a failure, without the C libraries' exit handlers: after a
/// failed netCDF-4 write (a full disk), HDF5's handler closes the files it still holds
/// and crashes on them (SIGSEGV, found by a break test; NCO 5.1.4 crashes the same
/// way). Our own clean-up (the temporary output) has run by then; standard output is
/// flushed first.
fn fail_exit() -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process at once; nothing of ours is left to drop.
    unsafe { libc::_exit(1) }
}

/// [`cli::SplitCli`](crate::cli::SplitCli) for an operator's command line `$cli` whose
/// argument groups are the fields `std` ([`OperatorArgs`]), `inputs`
/// ([`InputListArgs`]) and `parts` ([`PartArgs`]): `nco_core::split_cli!(Cli);`; for
/// one without input-list options (ncwa), `nco_core::split_cli!(Cli, one_input);`.
#[macro_export]
macro_rules! split_cli {
    ($cli:ty) => {
        $crate::split_cli!(@impl $cli, self, Some(&mut self.inputs));
    };
    ($cli:ty, one_input) => {
        $crate::split_cli!(@impl $cli, self, None);
    };
    (@impl $cli:ty, $s:ident, $inputs:expr) => {
        impl $crate::cli::SplitCli for $cli {
            fn std_mut(&mut self) -> &mut $crate::cli::OperatorArgs {
                &mut self.std
            }
            fn inputs_mut(&mut $s) -> Option<&mut $crate::cli::InputListArgs> {
                $inputs
            }
            fn parts_mut(&mut self) -> &mut $crate::cli::PartArgs {
                &mut self.parts
            }
            fn parts(&self) -> &$crate::cli::PartArgs {
                &self.parts
            }
        }
    };
}

/// `fn main` of an operator binary: `nco_core::main!("ncks", ncks::run);`. It also
/// installs the process allocator ([`crate::alloc::Allocator`]): each binary chooses
/// its allocator, a library never does.
#[macro_export]
macro_rules! main {
    ($prog:expr, $run:path) => {
        #[global_allocator]
        static ALLOCATOR: $crate::alloc::Allocator = $crate::alloc::Allocator;

        fn main() -> std::process::ExitCode {
            $crate::cli::run_main($prog, $run)
        }
    };
}
