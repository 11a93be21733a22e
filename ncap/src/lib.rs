//! ncap2, the netCDF Arithmetic Processor: runs a script of assignments over the
//! variables of an input file and writes the results (NCO manual, "ncap2 netCDF
//! Arithmetic Processor"; typing rules in [`ops`] and [`exec`]).
//!
//! `ncap2 [-v] [-C] [-A] -s 'script' [-S file] in.nc out.nc`. The language (NCO
//! manual, "ncap2 netCDF Arithmetic Processor"): statements (`if/else`, `while`, `for`,
//! `break`, `continue`, blocks, `exit()`, `#include`), assignments as expressions
//! (`= += -= *= /=`, `++ --`, `?:`), RAM variables (`*v=...`), attributes (`v@att`,
//! `global@att`, `@att`), LHS casting (`v[$lat,$lon]=...`), `defdim()` and dimension
//! sizes (`$time.size`), typed literals and value lists, NC_STRING literals (`"s"s`),
//! arithmetic, comparison, logical and clipping (`<< >>`) operators, hyperslabs on
//! both sides (`v(1,:,0:3:2)`, negative indices from the end), and the builtins of
//! [`builtins::BUILTINS`] (math, casts, reductions over `$dims`, missing values,
//! `reverse() permute() array() mask() sort()`, text, `print()`).
//!
//! Modules, lowest first; each uses only the modules listed before it (the test
//! `layering` reads every `crate::` path to keep it so):
//!
//! - language: [`builtins`] (the table of functions and methods), [`ast`] (the syntax
//!   tree), [`lexer`] (tokens), [`parser`] (script text to syntax tree);
//! - kernels: [`num`] (typed element-wise arithmetic and reductions on slices);
//! - values: [`value`] (values, broadcasting, conversions), [`print`](mod@print) (what `print()`
//!   writes);
//! - evaluation: [`state`] (the state, reading inputs), [`ops`] (operations on values),
//!   [`funcs`] (builtins that reshape or build values), [`assign`] (storing values),
//!   [`expr`] (expressions, assignments and calls), [`exec`] (statements);
//! - driver: [`stream`] (block evaluation), [`outfile`] (the output file), and this file
//!   (the command line and [`run`]).
//!
//! [`run`] works in two passes: the script runs once (on the first block when it is
//! streamed) to define the outputs, then the output file is defined and written (the
//! blocks of a streamed script are computed then).
#![deny(missing_docs)]

pub mod assign;
pub mod ast;
pub mod builtins;
pub mod exec;
pub mod expr;
pub mod funcs;
pub mod lexer;
pub mod num;
pub mod ops;
pub mod outfile;
pub mod parser;
pub mod print;
pub mod state;
pub mod stream;
pub mod value;

use clap::{ArgAction, CommandFactory, Parser};
use std::ffi::OsString;
use std::path::PathBuf;

use nco_core::cli::{self, CommonArgs, FormatArgs};
use nco_core::dataset::Dataset;
use nco_core::model::{Format, Meta};
use nco_core::output::{self, Existing};
use nco_core::target::Target;
use nco_core::{Error, Result};

use ast::Stmt;
use state::Ctx;
use stream::Stream;

/// ncap2 command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncap2",
    about = "netCDF Arithmetic Processor: compute variables and attributes with a script (NCO-compatible)",
    after_help = "Examples:\n  ncap2 -O -s 'tpt_c=tpt-273.15f' in.nc out.nc\n  ncap2 -O -v -s 'one_ll[lat,lon]=1.0;t=three_dmn_var.total()' in.nc out.nc\n  ncap2 -O -S script.nco in.nc out.nc"
)]
pub struct Cli {
    /// Input file, then the output file
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub format: FormatArgs,
    /// Script text (statements separated by ';'); repeatable
    #[arg(short = 's', long = "spt", visible_aliases = ["script"], value_name = "SCRIPT",
          action = ArgAction::Append, allow_hyphen_values = true)]
    pub scripts: Vec<String>,
    /// Script file; repeatable
    #[arg(short = 'S', long = "fl_spt", visible_aliases = ["script-file", "fl_script"],
          value_name = "FILE", action = ArgAction::Append)]
    pub script_files: Vec<PathBuf>,
    /// Write only the variables the script defines (plus their coordinates unless -C)
    #[arg(short = 'v', long = "variable", visible_alias = "var")]
    pub only_defined: bool,
    /// Do not add coordinate variables
    #[arg(short = 'C', long = "no_crd", visible_aliases = ["xcl_ass_var", "no-coords"])]
    pub no_coords: bool,
    /// Add all coordinate variables of the input
    #[arg(short = 'c', long = "crd", visible_aliases = ["xtr_ass_var", "coords"])]
    pub all_coords: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    // Quantization is refused here (see `run`): not in the help.
    cli::configure(Cli::command())
        .mut_arg("ppc", |a| a.hide(true))
        .mut_arg("algorithm", |a| a.hide(true))
}

/// The script pieces: every `-s` text in order, then every `-S` file (NCO runs the
/// command-line scripts before the script files, wherever they appear).
fn scripts(cli: &Cli) -> Result<Vec<(String, String)>> {
    let mut parts: Vec<(String, String)> = cli
        .scripts
        .iter()
        .map(|s| ("command-line script".to_string(), s.clone()))
        .collect();
    for f in &cli.script_files {
        let text = std::fs::read_to_string(f).map_err(|e| Error::io(f, e))?;
        parts.push((f.display().to_string(), text));
    }
    Ok(parts)
}

/// Run ncap2 with `argv`: parse the scripts, open the input, run the script (on its
/// first block when it is streamed) to learn the outputs' definitions, then write the
/// output ([`outfile::write`], which computes and writes the blocks of a streamed
/// script).
///
/// Errors: bad options, script syntax errors, unknown variables, functions or
/// dimensions, shapes that do not conform, and every I/O error. Nothing is written on
/// error.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.common)? else {
        return Ok(());
    };
    if cli.format.quantize.args().any() {
        // NCO 5.1.4's ncap2 has no --ppc (its availability list leaves ncap2 out).
        return Err(nco_core::Error::option(
            "--ppc",
            "ncap2 does not quantize (as NCO 5.1.4's ncap2): quantize its output with ncks --ppc",
        ));
    }
    let stmts = parse_scripts(&cli)?;
    let (input, mut target) = files(prog, &argv, &cli)?;
    let append = target.existing == Existing::Append;
    let ds = input.as_deref().map(Dataset::open).transpose()?;
    if let (Some(f), Some(ds)) = (&input, &ds) {
        nco_core::groups::refuse_subgroups(prog, f, ds.meta())?;
    }
    // `-A` keeps the existing file's format.
    let format = match (target.appended_format()?, target.format, &ds) {
        (Some(f), _, _) | (None, Some(f), _) => f,
        (None, None, Some(d)) => d.meta().format,
        (None, None, None) => Format::Classic,
    };
    // Appended variables go through the merge with the existing file, whole.
    let stream = if append {
        None
    } else {
        Stream::plan(&stmts, ds.as_ref(), format)
    };
    let stdout = std::io::stdout();
    let mut ctx = Ctx::new(ds.as_ref(), Box::new(stdout.lock()), prog);
    if let Some(st) = &stream {
        st.start(&mut ctx);
    }
    // NCO stamps the history (and NCO attribute) before the script runs, so attributes
    // the script adds come after them; appending stamps the existing file's history
    // (in the merge).
    // The --gaa attributes go with them, before a new NCO attribute.
    if let Some(command) = target.provenance.command.take_if(|_| !append) {
        let mut m = Meta::new(ctx.input.format);
        m.attrs = std::mem::take(&mut ctx.globals);
        let now = nco_core::target::Provenance {
            command: Some(command),
            global_attrs: std::mem::take(&mut target.provenance.global_attrs),
            ..Default::default()
        };
        now.stamp(&mut m);
        ctx.globals = m.attrs;
    }
    ctx.run(&stmts)?;
    let opts = outfile::Options {
        only_defined: cli.only_defined,
        no_coords: cli.no_coords,
        all_coords: cli.all_coords,
    };
    outfile::write(&opts, ds.as_ref(), &ctx, &target, format, stream.as_ref())?;
    if ctx.exit_code != 0 {
        // `exit(n)`: the output is written, then ncap2 exits with status n (NCO 5.1.4).
        std::process::exit(ctx.exit_code);
    }
    Ok(())
}

/// The statements of every script piece ([`scripts`]), in order.
///
/// Errors: a script file that cannot be read, a syntax error (naming its piece), no
/// statement at all.
fn parse_scripts(cli: &Cli) -> Result<Vec<Stmt>> {
    let mut stmts = Vec::new();
    let include_path = nco_core::cli::env::include_path();
    for (name, text) in scripts(cli)? {
        stmts.extend(parser::parse_piece(&text, &name, &include_path)?);
    }
    if stmts.is_empty() {
        return Err(Error::msg(
            "no script given (use -s 'statements' or -S file)",
        ));
    }
    Ok(stmts)
}

/// The input file (`None` without one) and the output's target. With one file, it is
/// read (when it exists) and replaced.
///
/// Errors: other than one or two files; an existing output without `-O` or `-A`
/// (NCO's question).
fn files(prog: &str, argv: &[OsString], cli: &Cli) -> Result<(Option<PathBuf>, Target)> {
    let mut files = cli.files.clone();
    if let Some(o) = &cli.common.output {
        files.push(o.clone());
    }
    let (input, out_path) = match files.len() {
        2 => (
            Some(cli::with_prefix(cli.common.path.as_deref(), &files[0])),
            files[1].clone(),
        ),
        1 => (None, files[0].clone()),
        n => {
            return Err(Error::msg(format!(
                "{prog} takes an input and an output file, {n} given (usage: {prog} -s 'script' in.nc out.nc)"
            )))
        }
    };
    let input = input.or_else(|| out_path.exists().then(|| out_path.clone()));
    let existing = if input.as_ref() == Some(&out_path) && cli.files.len() == 1 {
        Existing::Overwrite
    } else {
        output::resolve_existing(prog, &out_path, cli.common.overwrite, cli.common.append)?
    };
    let mut target = cli::target(prog, argv, &cli.common, &cli.format, &out_path, existing);
    target.provenance.source = input.clone();
    Ok((input, target))
}

/// The crate's layers, checked: each module may use only the modules before it in
/// [`ORDER`](layering::ORDER). The check reads the `crate::` paths of every library
/// file under `src/` (`cargo test -p ncap layering`).
#[cfg(test)]
mod layering {
    use std::path::Path;

    use nco_tests::layering::{crate_refs, rust_files};

    /// ncap's modules, lowest first. A file `src/m.rs` (or `src/m/...`) is module `m`;
    /// `lib` is the crate root, above every module.
    pub const ORDER: &[&str] = &[
        "builtins", "ast", "lexer", "parser", "num", "value", "print", "state", "ops", "funcs",
        "assign", "expr", "exec", "stream", "outfile", "lib",
    ];

    /// The module a library file under `src/` belongs to (`None` for binaries).
    fn module_of(rel: &Path) -> Option<String> {
        let first = rel.components().next()?.as_os_str().to_str()?;
        match first {
            "main.rs" | "bin" => None,
            f => Some(f.strip_suffix(".rs").unwrap_or(f).to_string()),
        }
    }

    /// Every use of a module at or above the user's layer, as `file:line: message`; also
    /// files of modules [`ORDER`] does not list.
    pub fn violations(files: &[(String, String)]) -> Vec<String> {
        let layer = |m: &str| ORDER.iter().position(|o| *o == m);
        let mut bad = Vec::new();
        for (rel, text) in files {
            let Some(user) = module_of(Path::new(rel)) else {
                continue;
            };
            let Some(lu) = layer(&user) else {
                bad.push(format!(
                    "src/{rel}: module {user} is not in layering::ORDER"
                ));
                continue;
            };
            for (line, m) in crate_refs(text) {
                match layer(&m) {
                    Some(lm) if lm < lu || m == user => {}
                    _ => bad.push(format!(
                        "src/{rel}:{line}: {user} uses crate::{m}, which is not below it \
                         (layers, lowest first: {})",
                        ORDER.join(", ")
                    )),
                }
            }
        }
        bad
    }

    #[test]
    fn modules_use_only_the_layers_below() {
        let files = rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        for m in ORDER {
            let file = if *m == "lib" {
                "lib.rs".into()
            } else {
                format!("{m}.rs")
            };
            assert!(
                files
                    .iter()
                    .any(|(f, _)| *f == file || f.starts_with(&format!("{m}/"))),
                "layering::ORDER lists {m}, which has no file in src/"
            );
        }
        let bad = violations(&files);
        assert!(bad.is_empty(), "upward uses:\n{}", bad.join("\n"));
    }

    #[test]
    fn an_upward_use_is_reported_with_its_file_and_line() {
        let files = vec![
            ("num.rs".to_string(), "use crate::exec::run;".to_string()),
            ("exec.rs".to_string(), "use crate::num::x;".to_string()),
        ];
        let bad = violations(&files);
        assert!(
            bad.len() == 1 && bad[0].starts_with("src/num.rs:1: num uses crate::exec"),
            "{bad:?}"
        );
    }
}
