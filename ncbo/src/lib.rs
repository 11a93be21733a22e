//! ncbo, the netCDF Binary Operator: `file1 op file2` variable by variable (NCO manual,
//! "ncbo netCDF Binary Operator"). Installed also as ncdiff (subtract), ncadd, ncsub,
//! ncmult and ncdivide, the operation then taken from the program name; `-y` overrides.
//!
//! The second file's variable may have a subset of the first's dimensions (or the other
//! way round) and is broadcast; coordinates are copied from the first file; the result
//! is missing wherever either operand is missing (the second file's fill mapped onto the
//! first's); packed data is unpacked; the result keeps the first operand's (unpacked)
//! type. Division by zero follows IEEE arithmetic (±inf, NaN) for floating types, as in
//! NCO.

use clap::{CommandFactory, Parser};
use std::ffi::OsString;

use nco_core::arith;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::Dataset;
use nco_core::extract::RecordChange;
use nco_core::kernels::binary::BinOp;
use nco_core::pair::{write_pair, Combine, Operand};
use nco_core::Result;

/// ncbo command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncbo",
    about = "netCDF Binary Operator: add, subtract, multiply or divide two files variable by variable (NCO-compatible)",
    after_help = "Examples:\n  ncbo -y sbt run.nc ctl.nc diff.nc          difference (ncdiff run.nc ctl.nc diff.nc)\n  ncbo -y dvd a.nc clim.nc ratio.nc          clim.nc may lack the record dimension"
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub arith: cli::ArithArgs,
    /// Operation: sbt (default), add, mlt, dvd, or + - * / and NCO's synonyms
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP",
        allow_hyphen_values = true,
        value_parser = BinOp::parse
    )]
    pub op: Option<BinOp>,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// The operation implied by the program name.
fn op_of_program(prog: &str) -> BinOp {
    match prog {
        "ncadd" => BinOp::Add,
        "ncmult" | "ncmultiply" => BinOp::Mul,
        "ncdivide" => BinOp::Div,
        _ => BinOp::Sub,
    }
}

/// Run ncbo (or an alias; `prog` picks the default operation).
///
/// Errors: variables missing from the second file, non-conformable shapes, differing
/// record lengths (each naming the variable), bad options, I/O errors.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    let op = cli.op.unwrap_or_else(|| op_of_program(prog));
    let specs = cli.std.slab.specs(prog)?;
    let (inputs, target) = cli.std.inputs_and_target(prog, &argv, 2)?;
    let a = Dataset::open(&inputs[0])?;
    let b = Dataset::open(&inputs[1])?;
    let sel_a = cli.std.slab.resolve_specs(&a, specs)?;
    // The second file is cut on the dimensions it has.
    let specs_b: Vec<_> = specs
        .iter()
        .filter(|s| b.meta().dim_id(&s.dim).is_some())
        .cloned()
        .collect();
    let sel_b = cli.std.slab.resolve_specs(&b, &specs_b)?;
    let (a, b) = (
        Operand {
            ds: &a,
            sel: &sel_a,
        },
        Operand {
            ds: &b,
            sel: &sel_b,
        },
    );
    let vars = nco_core::select::select_shared(
        a.meta(),
        b.meta(),
        &b.ds.path().display().to_string(),
        &cli.std.select_args(),
    )?;
    let rec = RecordChange::default();
    let args = cli.std.select_args();
    let planned = target
        .plan_selection(a.meta(), &vars, &sel_a, &rec, &args)?
        .meta;
    write_pair(
        prog,
        Combine::Op(op),
        a,
        b,
        &vars,
        planned,
        &target,
        cli.arith.hdf_upk,
        arith::is_fixed_by_convention,
    )
}
