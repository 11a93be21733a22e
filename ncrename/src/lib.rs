//! ncrename, the netCDF Renamer: renames dimensions, variables, attributes (and groups)
//! of one file (NCO manual, "ncrename netCDF Renamer"). The rules of the `-v -d -g -a
//! old,new` arguments are [`nco_core::rename`]'s; the file is written by
//! [`nco_core::edit`]: in place when no output is given (a classic header that still
//! fits is rewritten where it is, instantly), through a temporary file otherwise.

use std::ffi::OsString;

use clap::{ArgAction, CommandFactory, Parser};

use nco_core::cli::{self, EditArgs};
use nco_core::edit::{Edit, Editable};
use nco_core::rename::{self, Kind, Rename};
use nco_core::Result;

/// ncrename command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncrename",
    about = "netCDF Renamer: rename dimensions, variables and attributes of a file, in place or into a new one (NCO-compatible)",
    after_help = "A leading . makes an old name optional (absent: skipped, not an error). Old names are the file's own, before any rename.\n\nExamples:\n  ncrename -v p,pressure -v .t,temperature in.nc      in place; t need not exist\n  ncrename -d lon,longitude -v lon,longitude in.nc    a dimension and its coordinate\n  ncrename -a u@long_name,largo_nombre in.nc out.nc   one variable's attribute, into out.nc\n  ncrename -a .units,UNITS -a global@title,TITLE in.nc\n\nGroups: a name stands for that object in every group, a path for one; -g renames groups.\n--gaa NAME=VALUE adds global text attributes beside the renames.\nNot yet: -l/-R/--hpss remote files."
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub edit: EditArgs,
    /// Rename attribute [.][var@][.]old to new (repeatable; no var@: everywhere)
    #[arg(short = 'a', long = "attribute", value_name = "OLD,NEW", action = ArgAction::Append, allow_hyphen_values = true, value_parser = |a: &str| Rename::parse(Kind::Attribute, a))]
    pub attributes: Vec<Rename>,
    /// Rename dimension [.]old to new (repeatable)
    #[arg(short = 'd', long = "dmn", visible_alias = "dimension", value_name = "OLD,NEW", action = ArgAction::Append, allow_hyphen_values = true, value_parser = |a: &str| Rename::parse(Kind::Dimension, a))]
    pub dimensions: Vec<Rename>,
    /// Rename group [.]old to new (repeatable)
    #[arg(short = 'g', long = "grp", visible_alias = "group", value_name = "OLD,NEW", action = ArgAction::Append, allow_hyphen_values = true, value_parser = |a: &str| Rename::parse(Kind::Group, a))]
    pub groups: Vec<Rename>,
    /// Rename variable [.]old to new (repeatable)
    #[arg(short = 'v', long = "variable", value_name = "OLD,NEW", action = ArgAction::Append, allow_hyphen_values = true, value_parser = |a: &str| Rename::parse(Kind::Variable, a))]
    pub variables: Vec<Rename>,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// Run ncrename.
///
/// Errors: nothing to rename, malformed renames, required names absent, new names in
/// use, I/O errors: each one line naming the option, the object or the file; the
/// file (or the output) is left as it was.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start_edit::<Cli>(command(), &argv, prog, |c| &c.edit)? else {
        return Ok(());
    };
    // The order NCO applies them in: variables, groups, dimensions, attributes.
    let renames: Vec<Rename> = [
        &cli.variables,
        &cli.groups,
        &cli.dimensions,
        &cli.attributes,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    if renames.is_empty() {
        // --gaa alone is refused too, as by NCO 5.1.4 (use ncatted).
        return Err(nco_core::Error::msg(
            "nothing to rename: give -v, -d, -a or -g old,new (try --help)",
        ));
    }
    let (input, output) = cli.edit.input_and_output(prog)?;
    let file = Editable::open(&input)?;
    let name = file.path().display().to_string();
    let (mut meta, notes) = rename::apply(file.meta(), &renames, &name)?;
    for n in notes {
        eprintln!("{prog}: {n}");
    }
    cli.edit.provenance(&argv).stamp(&mut meta);
    let edit = Edit {
        meta,
        replace: Vec::new(),
    };
    file.apply(
        prog,
        &edit,
        output.as_deref(),
        cli.edit.hdr_pad.unwrap_or(0),
    )?;
    Ok(())
}
