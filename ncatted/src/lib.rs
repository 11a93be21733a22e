//! ncatted, the netCDF Attribute Editor: appends, creates, deletes, modifies and
//! overwrites attributes of one file (NCO manual, "ncatted netCDF Attribute Editor").
//! The rules of `-a att_nm,var_nm,mode,att_type,att_val` are [`nco_core::attedit`]'s;
//! the file is written by [`nco_core::edit`]: in place when no output is given (a
//! classic header that still fits is rewritten where it is, instantly), through a
//! temporary file otherwise, or when a `_FillValue` change rewrites data.

use std::ffi::OsString;

use clap::{ArgAction, CommandFactory, Parser};

use nco_core::attedit::{self, AttArg};
use nco_core::cli::{self, EditArgs};
use nco_core::edit::{Edit, Editable, Replace};
use nco_core::Result;

/// ncatted command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncatted",
    about = "netCDF Attribute Editor: append, create, delete, modify, overwrite attributes of a file, in place or into a new one (NCO-compatible)",
    after_help = "Modes: a append, c create, d delete, m modify, n append if present, o overwrite, p prepend.\nTypes: f d l|i s c b, and for netCDF-4/CDF5 ub us u ll ull sng (or float, double, int, ...).\nvar_nm: empty for every variable, global (or group) for the global attributes, a regular expression, or a name.\natt_nm: empty for every attribute; a regular expression in modes d, m, n.\nText values keep their commas and translate \\n \\t \\\\ \\\" ... ; other values are comma-separated lists.\nA new _FillValue given by m or o also rewrites the data holding the old one (as NCO does).\n\nExamples:\n  ncatted -a units,T,o,c,K in.nc                      in place\n  ncatted -a history,global,d,, in.nc out.nc           into out.nc\n  ncatted -a _FillValue,,o,f,-999 -t in.nc             every float variable\n  ncatted -a valid_range,u,o,s,-10,10 in.nc\n\nGroups: a name stands for that attribute or variable in every group, a path for one.\n--gaa NAME=VALUE adds global text attributes (alone, too).\nNot yet: -l/-R/--hpss remote files."
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub edit: EditArgs,
    /// Attribute edit att_nm,var_nm,mode,att_type,att_val (repeatable, applied in order)
    #[arg(short = 'a', long = "attribute", visible_alias = "att", value_name = "ATT,VAR,MODE,TYPE,VALUE", action = ArgAction::Append, allow_hyphen_values = true, value_parser = AttArg::parse)]
    pub attributes: Vec<AttArg>,
    /// Type match: an edit of every variable (empty var_nm) touches only the variables
    /// of att_type
    #[arg(short = 't', long = "typ_mch", visible_alias = "type_match")]
    pub type_match: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// Run ncatted.
///
/// Errors: no edit, malformed edits, variables not found, appends of another type,
/// types the format cannot hold, I/O errors: each one line naming the edit, the
/// object or the file; the file (or the output) is left as it was.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start_edit::<Cli>(command(), &argv, prog, |c| &c.edit)? else {
        return Ok(());
    };
    let notes: Vec<&String> = cli.attributes.iter().flat_map(|a| &a.notes).collect();
    let edits: Vec<_> = cli.attributes.iter().map(|a| a.edit.clone()).collect();
    if edits.is_empty() && cli.edit.gaa.global_attrs.is_empty() {
        return Err(nco_core::Error::msg(
            "nothing to edit: give -a att_nm,var_nm,mode,att_type,att_val or --gaa (try --help)",
        ));
    }
    let (input, output) = cli.edit.input_and_output(prog)?;
    let file = Editable::open(&input)?;
    let done = attedit::apply(file.meta(), &edits, cli.type_match)?;
    for n in notes.into_iter().chain(&done.notes) {
        eprintln!("{prog}: {n}");
    }
    let mut meta = done.meta;
    cli.edit.provenance(&argv).stamp(&mut meta);
    let replace = done
        .fills
        .into_iter()
        .map(|f| Replace {
            var: f.var,
            old: f.old,
            new: f.new,
        })
        .collect();
    let edit = Edit { meta, replace };
    file.apply(
        prog,
        &edit,
        output.as_deref(),
        cli.edit.hdr_pad.unwrap_or(0),
    )?;
    Ok(())
}
