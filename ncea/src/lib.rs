//! nces (netCDF Ensemble Statistics, also installed as ncea) and ncecat (netCDF
//! Ensemble Concatenator) (NCO manual, "nces", "ncecat"). The program name picks the
//! mode.
//!
//! * nces: each variable's statistic (`-y`, mean by default) element by element across
//!   the input files (ensemble members), fill values skipped, packed data unpacked;
//!   coordinate variables and their bounds are taken from the first file.
//! * ncecat: the files are glued along a new leading record dimension (`-u name`,
//!   `record` by default) of every variable except coordinates and their bounds; an
//!   existing record dimension becomes fixed; `-M` skips the first file's global
//!   attributes.
//!
//! Memory is bounded by one variable (or hyperslab) times a small constant,
//! independent of the number of members: members are streamed into one accumulator.

use clap::{CommandFactory, Parser};

use nco_core::arith::{self, ProcVar};
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::OutFile;
use nco_core::extract::{self, RecordChange, StorageArgs};
use nco_core::hyperslab;
use nco_core::kernels::reduce::{Accum, Op};
use nco_core::model::Dim;
use nco_core::multifile;
use nco_core::output::{self, Existing, TempOutput};
use nco_core::pipeline;
use nco_core::types::Values;
use nco_core::{Error, Result};

/// nces / ncecat command line.
#[derive(Parser, Debug)]
#[command(
    name = "nces",
    about = "netCDF Ensemble Statistics (nces, ncea) and Ensemble Concatenator (ncecat), NCO-compatible",
    after_help = "Examples:\n  nces m1.nc m2.nc m3.nc mean.nc             ensemble mean\n  nces -y max -n 32,2,1 m01.nc max.nc        maximum over m01.nc..m32.nc\n  ncecat -u member m1.nc m2.nc all.nc        stack members along 'member'"
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
    /// Statistic (nces): avg, sqravg, avgsqr, max, min, rms, rmssdn, sqrt, ttl, mabs, mebs, mibs, tabs
    #[arg(
        short = 'y',
        long = "op_typ",
        visible_alias = "operation",
        value_name = "OP"
    )]
    pub op: Option<String>,
    /// Name of the new record dimension (ncecat)
    #[arg(
        short = 'u',
        long = "ulm_nm",
        visible_alias = "rcd_nm",
        value_name = "NAME"
    )]
    pub record_name: Option<String>,
    /// Do not copy the first file's global attributes (ncecat)
    #[arg(short = 'M', long = "glb_mtd_spp", visible_alias = "no_glb_mtd")]
    pub no_global_meta: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// Run nces/ncea or ncecat (chosen by `prog`).
///
/// Errors: a missing member file, members whose variables differ in shape or type
/// (naming the file and variable), bad options.
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.std.common, &c.std.format))?
    else {
        return Ok(());
    };
    let concat = prog == "ncecat";
    let op = cli.op.as_deref().map_or(Ok(Op::Avg), Op::parse)?;
    let specs = cli.std.slab.specs()?;
    let inputs = multifile::inputs(
        &cli.std.files,
        cli.std.common.output.as_deref(),
        cli.std.common.path.as_deref(),
        cli.inputs.nintap.as_deref(),
    )?;
    let existing = output::resolve_existing(
        prog,
        &inputs.output,
        cli.std.common.overwrite,
        cli.std.common.append,
    )?;
    if existing == Existing::Append {
        return Err(Error::option(
            "-A",
            format!("appending is not supported by {prog}; use -O"),
        ));
    }
    let sets = multifile::open_all(&inputs.files)?;
    let first = sets[0].meta();
    let sel = hyperslab::resolve(
        first,
        &specs,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| sets[0].read_all(v),
    )?;
    let vars = nco_core::select::select_input_order(first, &cli.std.select.select_args())?;
    // Members must agree on every selected variable's type and shape.
    for ds in &sets[1..] {
        let m = ds.meta();
        for &v in &vars {
            let var = &first.vars[v];
            let other = m.var(&var.name).ok_or_else(|| {
                Error::var(
                    &var.name,
                    format!("is missing from member file {}", ds.path()),
                )
            })?;
            if other.ty != var.ty || m.shape(other) != first.shape(var) {
                return Err(Error::var(
                    &var.name,
                    format!(
                        "differs in type or shape between {} ({} {:?}) and {} ({} {:?})",
                        sets[0].path(),
                        var.ty,
                        first.shape(var),
                        ds.path(),
                        other.ty,
                        m.shape(other)
                    ),
                ));
            }
        }
    }
    let storage = StorageArgs {
        deflate: cli.std.format.deflate,
        chunk: cli.std.format.chunk.clone(),
    };
    let format = cli.std.format.format()?.unwrap_or(first.format);
    extract::warn_storage_on_classic(prog, format, &storage);
    let rec_change = if concat {
        RecordChange {
            fix: Some("all".into()),
            make: None,
        }
    } else {
        RecordChange::default()
    };
    let plan = extract::plan(first, &vars, &sel, format, &rec_change, &storage)?;
    let mut meta = plan.meta.clone();
    let stacked: Vec<bool> = vars
        .iter()
        .map(|&v| concat && !arith::is_coordinate_like(first, v))
        .collect();
    if concat {
        let name = cli.record_name.clone().unwrap_or_else(|| "record".into());
        if meta.dim_id(&name).is_some() {
            return Err(Error::option(
                "-u",
                format!("dimension {name} already exists in the input"),
            ));
        }
        meta.dims.insert(
            0,
            Dim {
                name,
                len: sets.len(),
                unlimited: true,
            },
        );
        for v in &mut meta.vars {
            for d in &mut v.dims {
                *d += 1;
            }
        }
        for (o, v) in meta.vars.iter_mut().enumerate() {
            if stacked[o] {
                v.dims.insert(0, 0);
            }
        }
        if cli.no_global_meta {
            meta.attrs.clear();
        }
    }
    let mut procs: Vec<Option<ProcVar>> = vec![None; vars.len()];
    if !concat {
        for (o, &v) in vars.iter().enumerate() {
            if arith::is_fixed_by_convention(first, v) || !arith::is_arith(first.vars[v].ty) {
                continue;
            }
            let mut pv = arith::prepare(first, v, cli.arith.hdf_upk);
            pv.place_as(&meta.vars[o]);
            meta.vars[o] = pv.out.clone();
            procs[o] = Some(pv);
        }
    }
    if !cli.std.common.no_history {
        output::stamp_history(&mut meta, &output::command_line(&argv));
    }
    if !cli.inputs.no_file_list {
        if let Some(files) = inputs.recorded() {
            multifile::stamp_input_list(&mut meta, &files);
        }
    }
    arith::stamp_threads(&mut meta, cli.std.common.threads);
    let tmp = TempOutput::new(&inputs.output, prog)?;
    let mut of = OutFile::create(tmp.path(), &meta, cli.std.format.hdr_pad.unwrap_or(0))?;
    let pb = nco_core::progress::bar(vars.len() as u64, prog);
    if concat {
        for (o, &v) in vars.iter().enumerate() {
            if !stacked[o] {
                extract::copy_unchanged(&sets[0], v, &sel, &mut of, o)?;
            } else {
                for (k, ds) in sets.iter().enumerate() {
                    let m = ds.meta();
                    let id = m.var_id(&first.vars[v].name).unwrap_or(v);
                    let vals = ds.read(id, &sel.for_var(first, v))?;
                    of.write(o, k, &vals)?;
                }
            }
            pb.inc(1);
        }
    } else {
        // Copied variables first; then the computed ones in units of at most 4 MiB of
        // rows, processed in parallel windows and written in order: memory is bounded
        // by a few units, whatever the variable size or the number of members.
        for (o, &v) in vars.iter().enumerate() {
            if procs[o].is_none() {
                extract::copy_unchanged(&sets[0], v, &sel, &mut of, o)?;
            }
        }
        let mut units: Vec<(usize, usize, usize)> = Vec::new();
        for (o, &v) in vars.iter().enumerate() {
            if procs[o].is_none() {
                continue;
            }
            let idx = sel.for_var(first, v);
            let blocks = pipeline::row_blocks(&idx, first.vars[v].ty.size(), 256 << 10);
            units.extend(blocks.into_iter().map(|(pos, len)| (o, pos, len)));
        }
        let compute = |u: usize| -> Result<Values> {
            let (o, pos, len) = units[u];
            let v = vars[o];
            let pv = procs[o]
                .as_ref()
                .ok_or_else(|| Error::msg("internal: no arithmetic plan"))?;
            let mut idx = sel.for_var(first, v);
            if let Some(f) = idx.first_mut() {
                *f = f[pos..pos + len].to_vec();
            }
            let n: usize = idx.iter().map(Vec::len).product();
            let mut acc = Accum::new(op, n);
            let mut buf = Vec::new();
            for ds in &sets {
                let id = ds.meta().var_id(&first.vars[v].name).unwrap_or(v);
                arith::accumulate_from(
                    &mut acc,
                    ds,
                    id,
                    &idx,
                    pv.in_fill,
                    pv.pack.as_ref(),
                    1.0,
                    &mut buf,
                )?;
            }
            let (vals, over) = acc.finish_values(true, pv.out.ty, pv.out_fill);
            arith::warn_overflow(prog, &pv.out.name, pv.out.ty, over);
            Ok(vals)
        };
        pipeline::for_each_ordered(units.len(), compute, |u, vals| {
            let (o, pos, _) = units[u];
            if pos == 0 {
                pb.inc(1);
            }
            of.write(o, pos, &vals)
        })?;
    }
    pb.finish_and_clear();
    of.finish()?;
    tmp.commit()
}
