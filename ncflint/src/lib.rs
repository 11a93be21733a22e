//! ncflint, the netCDF File Interpolator: `w1*file1 + w2*file2` variable by variable
//! (NCO manual, "ncflint netCDF File Interpolator"), on the two-file engine it shares
//! with ncbo ([`nco_core::pair::write_pair`]). The weights come from `-w w1[,w2]` (one weight: `w2 = 1 -
//! w1`; none: both 0.5) or from `-i var,val`: the scalar `var` is `v1` in the first
//! file and `v2` in the second, and `w1 = (val - v2)/(v1 - v2)`, `w2 = 1 - w1`, so that
//! `var` itself interpolates to `val`.
//!
//! As NCO 5.1.4 does: coordinate-like and text variables that are not record variables
//! are copied from the first file, record coordinates are interpolated unless
//! `--fix_rec_crd`, and the CF grid variables NCO fixes by name are copied
//! ([`nco_core::arith::is_fixed_ncflint`]); results are missing where either operand
//! is; integers round half to even; packed variables are unpacked and their results
//! rounded as the packed type would (NCO's behaviour), then written unpacked.

use std::ffi::OsString;

use clap::{CommandFactory, Parser};

use nco_core::arith;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::Dataset;
use nco_core::extract::RecordChange;
use nco_core::pair::{self, Combine, Operand};
use nco_core::{Error, Result};

/// ncflint command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncflint",
    about = "netCDF File Interpolator: weighted sums w1*file1 + w2*file2, variable by variable (NCO-compatible)",
    after_help = "Examples:\n  ncflint -w 0.25 jan.nc feb.nc mix.nc            0.25*jan + 0.75*feb\n  ncflint -w 1,1 a.nc b.nc sum.nc                 a + b\n  ncflint -i time,3.5 t3.nc t4.nc t35.nc          weights so that time becomes 3.5\n\nNot yet: -N (normalised weights), -X boxes, --ppc."
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub arith: cli::ArithArgs,
    /// Weights w1[,w2] of the first and second file (one weight: w2 = 1 - w1)
    #[arg(
        short = 'w',
        long = "wgt_var",
        visible_alias = "weight",
        value_name = "W1[,W2]",
        allow_hyphen_values = true,
        value_parser = weights_of
    )]
    pub weights: Option<Weights>,
    /// Interpolate to var = value: the weights come from the scalar var of both files
    #[arg(
        short = 'i',
        long = "ntp_var",
        visible_alias = "interpolate",
        value_name = "VAR,VALUE",
        allow_hyphen_values = true,
        value_parser = interpolation_of
    )]
    pub interpolate: Option<Interpolation>,
    /// Copy record coordinate variables from the first file instead of interpolating
    #[arg(long = "fix_rec_crd")]
    pub fix_rec_crd: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

fn number(opt: &str, s: &str) -> Result<f64> {
    s.trim()
        .parse::<f64>()
        .map_err(|_| Error::option(opt, format!("\"{s}\" is not a number")))
}

/// The weights of `-w`: of the first file and of the second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights(pub f64, pub f64);

/// Parse `-w w1[,w2]` (one weight: `w2 = 1 - w1`).
///
/// Errors: not one or two numbers.
pub fn weights_of(s: &str) -> Result<Weights> {
    let parts: Vec<&str> = s.split(',').collect();
    match parts[..] {
        [w1] => {
            let w1 = number("-w", w1)?;
            Ok(Weights(w1, 1.0 - w1))
        }
        [w1, w2] => Ok(Weights(number("-w", w1)?, number("-w", w2)?)),
        _ => Err(Error::option("-w", format!("\"{s}\" is not w1 or w1,w2"))),
    }
}

/// The target of `-i var,value`: the variable and the value it interpolates to.
#[derive(Clone, Debug, PartialEq)]
pub struct Interpolation {
    /// The scalar variable of both files.
    pub var: String,
    /// The value it takes in the output.
    pub value: f64,
}

/// Parse `-i var,value`.
///
/// Errors: no comma, a value that is not a number.
pub fn interpolation_of(s: &str) -> Result<Interpolation> {
    let (var, val) = s
        .split_once(',')
        .ok_or_else(|| Error::option("-i", format!("\"{s}\" is not var,value")))?;
    Ok(Interpolation {
        var: var.to_string(),
        value: number("-i", val)?,
    })
}

/// The unpacked value of the scalar `name` in `ds`.
///
/// Errors: absent, not a scalar, text.
fn scalar(ds: &Dataset, name: &str, hdf: bool) -> Result<f64> {
    let m = ds.meta();
    let v = m.var_id(name).ok_or_else(|| {
        Error::var(
            name,
            format!(
                "(the -i interpolation variable) is not in {}",
                ds.path().display()
            ),
        )
    })?;
    if m.var_len(&m.vars[v]) != 1 || !arith::is_arith(m.vars[v].ty) {
        return Err(Error::var(
            name,
            "must be a numeric scalar to serve as the -i interpolation variable",
        ));
    }
    let p = arith::prepare(m, v, hdf);
    let x = p.unpacked(&ds.read(v, &vec![vec![0]; m.vars[v].dims.len()])?);
    Ok(x[0])
}

/// Run ncflint.
///
/// Errors: bad weights, an interpolation variable that is absent, not a scalar or
/// equal in both files, variables missing from the second file or of other shapes
/// (each naming the variable), bad options, I/O errors; the output is not written then.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    if cli.weights.is_some() && cli.interpolate.is_some() {
        return Err(Error::option("-i", "give -w or -i, not both"));
    }
    let specs = cli.std.slab.specs(prog)?;
    let (inputs, target) = cli.std.inputs_and_target(prog, &argv, 2)?;
    let a = Dataset::open(&inputs[0])?;
    let b = Dataset::open(&inputs[1])?;
    let hdf = cli.arith.hdf_upk;
    let (w1, w2) = match (&cli.weights, &cli.interpolate) {
        (Some(Weights(w1, w2)), _) => (*w1, *w2),
        (None, Some(Interpolation { var, value: val })) => {
            let val = *val;
            let (v1, v2) = (scalar(&a, var, hdf)?, scalar(&b, var, hdf)?);
            if v1 == v2 {
                return Err(Error::var(
                    var,
                    format!("is {v1} in both files: no weights interpolate it to {val}"),
                ));
            }
            let w1 = (val - v2) / (v1 - v2);
            (w1, 1.0 - w1)
        }
        (None, None) => (0.5, 0.5),
    };
    let sel_a = cli.std.slab.resolve_specs(&a, specs)?;
    // The second file is cut on the dimensions it has.
    let specs_b: Vec<_> = specs
        .iter()
        .filter(|s| b.meta().dim_id(&s.dim).is_some())
        .cloned()
        .collect();
    let sel_b = cli.std.slab.resolve_specs(&b, &specs_b)?;
    let vars = nco_core::select::select_input_order(a.meta(), &cli.std.select_args())?;
    let rec = RecordChange::default();
    let args = cli.std.select_args();
    let planned = target
        .plan_selection(a.meta(), &vars, &sel_a, &rec, &args)?
        .meta;
    let fix_rec_crd = cli.fix_rec_crd;
    pair::write_pair(
        prog,
        Combine::Weights(w1, w2),
        Operand {
            ds: &a,
            sel: &sel_a,
        },
        Operand {
            ds: &b,
            sel: &sel_b,
        },
        &vars,
        planned,
        &target,
        hdf,
        |m, v| arith::is_fixed_ncflint(m, v, fix_rec_crd),
    )
}
