//! The output file, once the script has run: which variables it holds and where each
//! comes from (computed by the script, or copied from the input with the script's
//! attribute changes), its dimensions in NCO's order, and its data (computed values,
//! copies, or the blocks of a streamed evaluation).

use nco_core::dataset::Dataset;
use nco_core::hyperslab::Selection;
use nco_core::model::{Attr, Dim, Format, Meta, Var};
use nco_core::target::{Output, Target};
use nco_core::types::Values;
use nco_core::{Error, Result};

use crate::state::Ctx;
use crate::stream::Stream;

/// What the output holds besides the script's variables (its format, storage and
/// provenance are the [`Target`]'s).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-v`: only the variables the script defines (and their coordinates).
    pub only_defined: bool,
    /// `-C`: no coordinate variables are added.
    pub no_coords: bool,
    /// `-c`: every coordinate variable of the input is added.
    pub all_coords: bool,
}

/// Where an output variable's data comes from.
enum Source {
    /// Computed by the script (name in [`Ctx::vars`]).
    New(String),
    /// Copied from the input variable, with (possibly changed) attributes.
    Copy(usize, Vec<Attr>),
}

/// Write the output of the script run in `ctx` over `ds` to `target` as `format`,
/// through a temporary file committed at the end ([`Output`]); a streamed script
/// (`stream`) computes and writes its blocks now.
///
/// Errors: an NC_STRING variable in a netCDF3 format, a text variable to pad, those of the
/// streamed evaluation, and every I/O error (nothing is left at the output then).
pub fn write(
    opts: &Options,
    ds: Option<&Dataset>,
    ctx: &Ctx<'_>,
    target: &Target,
    format: Format,
    stream: Option<&Stream<'_>>,
) -> Result<()> {
    let plan = variables(ctx, opts);
    let meta = define(ctx, &plan, format, opts, target)?;
    // Variables computed on a hyperslab are padded to their dimensions (not when
    // streamed: a streamed script has no hyperslab).
    let mut datas: Vec<Option<Values>> = Vec::with_capacity(plan.len());
    for (_, src) in &plan {
        datas.push(match (src, stream) {
            (Source::New(n), None) => padded(ctx, n)?,
            _ => None,
        });
    }
    let mut out = Output::create(target, meta)?;
    // Planned indices: the Output maps them to the merged file's with `-A` (the
    // existing file's other variables are copied at commit).
    let mut streamed: Vec<(usize, String)> = Vec::new();
    for (o, (_, src)) in plan.iter().enumerate() {
        match src {
            Source::New(n) if stream.is_some() => streamed.push((o, n.clone())),
            Source::New(n) => match &datas[o] {
                Some(d) => out.write(o, 0, d)?,
                None => out.write(o, 0, &ctx.vars[n].val.data)?,
            },
            Source::Copy(id, _) => {
                let ds = ds.ok_or_else(|| {
                    Error::var(&ctx.input.vars[*id].name, "copied without an input file")
                })?;
                out.copy_unchanged(ds, *id, &Selection::default(), o)?;
            }
        }
    }
    if let (Some(st), Some(ds)) = (stream, ds) {
        // A streamed script is planned only when not appending: its indices are the
        // file's.
        st.write(&target.prog, ds, &streamed, out.writer())?;
    }
    out.commit()
}

/// The output variables in order: the script's (in [`Ctx::output_order`]), then, with
/// `-v`, the coordinates of the dimensions used (unless `-C`; all with `-c`) and the
/// input variables whose attributes the script changed; without `-v`, every other input
/// variable.
fn variables(ctx: &Ctx<'_>, opts: &Options) -> Vec<(String, Source)> {
    let input = &ctx.input;
    let mut plan: Vec<(String, Source)> = Vec::new();
    for n in ctx.output_order() {
        if !ctx.vars[&n].ram {
            plan.push((n.clone(), Source::New(n)));
        }
    }
    // A RAM variable of an input variable's name leaves the input's in the output.
    let written = |n: &str| ctx.vars.get(n).is_some_and(|v| !v.ram);
    let attrs_of = |name: &str, id: usize| -> Vec<Attr> {
        ctx.touched
            .get(name)
            .cloned()
            .unwrap_or_else(|| input.vars[id].attrs.clone())
    };
    let planned = |plan: &Vec<(String, Source)>, n: &str| plan.iter().any(|(m, _)| m == n);
    if !opts.only_defined {
        for (id, v) in input.vars.iter().enumerate() {
            if !written(&v.name) {
                plan.push((v.name.clone(), Source::Copy(id, attrs_of(&v.name, id))));
            }
        }
        return plan;
    }
    let mut coords: Vec<usize> = Vec::new();
    if !opts.no_coords {
        // The dimensions used, and those of input variables whose attributes changed
        // (written too).
        let touched_dims = ctx
            .touched_order
            .iter()
            .filter_map(|n| input.var(n))
            .flat_map(|v| v.dims.iter().copied());
        let used: Vec<usize> = ctx.dims_used.iter().copied().chain(touched_dims).collect();
        for &d in &used {
            if d < input.dims.len() {
                if coords
                    .iter()
                    .any(|&c| input.vars[c].name == input.dims[d].name)
                {
                    continue;
                }
                if let Some(id) = input.var_id(&input.dims[d].name) {
                    if input.is_coord_var(&input.vars[id]) {
                        coords.push(id);
                    }
                }
            }
        }
    }
    if opts.all_coords {
        for (id, v) in input.vars.iter().enumerate() {
            if input.is_coord_var(v) && !coords.contains(&id) {
                coords.push(id);
            }
        }
    }
    // Coordinates follow the input's variable order.
    coords.sort_unstable();
    for id in coords {
        let n = input.vars[id].name.clone();
        if !planned(&plan, &n) {
            plan.push((n.clone(), Source::Copy(id, attrs_of(&n, id))));
        }
    }
    for n in &ctx.touched_order {
        if let Some(id) = input.var_id(n) {
            if !planned(&plan, n) {
                plan.push((n.clone(), Source::Copy(id, attrs_of(n, id))));
            }
        }
    }
    plan
}

/// The output's metadata: the global attributes, the dimensions (first in order of use,
/// then, without `-v`, the input's and `defdim`'s others, then any an output variable
/// still needs), the variables of `plan`, and their storage. Types `format` cannot
/// hold are converted when the output is created (`nco_core::rules::formats`).
fn define(
    ctx: &Ctx<'_>,
    plan: &[(String, Source)],
    format: Format,
    opts: &Options,
    target: &Target,
) -> Result<Meta> {
    let input = &ctx.input;
    let var_dims = |src: &Source| -> Vec<usize> {
        match src {
            Source::New(n) => ctx.vars[n].val.dims.clone(),
            Source::Copy(id, _) => input.vars[*id].dims.clone(),
        }
    };
    let used_by_vars: Vec<usize> = plan.iter().flat_map(|(_, s)| var_dims(s)).collect();
    let mut dim_order: Vec<usize> = ctx.dims_used.clone();
    if !opts.only_defined {
        // The input's dimensions that some output variable uses and every `defdim`
        // (NCO 5.1.4 drops an input dimension no variable uses).
        for d in 0..ctx.dims.len() {
            let kept = d >= input.dims.len() || used_by_vars.contains(&d);
            if kept && !dim_order.contains(&d) {
                dim_order.push(d);
            }
        }
    }
    for (_, s) in plan {
        for d in var_dims(s) {
            if !dim_order.contains(&d) {
                dim_order.push(d);
            }
        }
    }
    let mut out = Meta::new(format);
    out.attrs = ctx.globals.clone();
    // A record dimension no output variable uses is written with no records, as NCO does.
    let mut dim_map = vec![usize::MAX; ctx.dims.len()];
    for (o, &d) in dim_order.iter().enumerate() {
        dim_map[d] = o;
        let mut dim: Dim = ctx.dims[d].clone();
        if dim.unlimited && !used_by_vars.contains(&d) {
            dim.len = 0;
        }
        out.dims.push(dim);
    }
    for (name, src) in plan {
        let dims = var_dims(src).iter().map(|&d| dim_map[d]).collect();
        let (ty, attrs, storage) = match src {
            Source::New(n) => (
                ctx.vars[n].val.ty(),
                ctx.vars[n].attrs.clone(),
                Default::default(),
            ),
            Source::Copy(id, attrs) => (
                input.vars[*id].ty,
                attrs.clone(),
                input.vars[*id].storage.clone(),
            ),
        };
        out.vars.push(Var {
            name: name.clone(),
            ty,
            dims,
            attrs,
            storage,
            group: 0,
        });
    }
    // Chunking and deflate (-L, --cnk_*) as the other operators apply them (a copied
    // variable keeps its input chunk sizes unless chunking options are given).
    nco_core::extract::warn_storage_on_classic(&target.prog, format, &target.storage);
    // A script variable that replaces an input variable of the same name and
    // dimensions (`b=b+1`) is stored as that variable was (chunks, filters), as NCO
    // 5.1.4 stores it; ours wrote it contiguous and unfiltered (found by a break test).
    let replaced = |o: usize, name: &str| {
        let id = input.var_id(name)?;
        let (iv, ov) = (&input.vars[id], &out.vars[o]);
        let same = iv.dims.len() == ov.dims.len()
            && iv.dims.iter().zip(&ov.dims).all(|(&a, &b)| {
                input.dims[a].name == out.dims[b].name && input.dims[a].len == out.dims[b].len
            });
        same.then_some(id)
    };
    let src: Vec<usize> = plan
        .iter()
        .enumerate()
        .map(|(o, (name, s))| match s {
            Source::Copy(id, _) => *id,
            Source::New(_) => replaced(o, name).unwrap_or(usize::MAX),
        })
        .collect();
    nco_core::extract::apply_storage(&mut out, input, &src, &target.storage);
    Ok(out)
}

/// The data of the script's variable `n` padded to its whole dimensions when it was
/// computed on a hyperslab of them (`None` when it already covers them): the values go
/// at the hyperslab's start in each dimension ([`crate::value::Val::slab`]), and the
/// elements outside are left at the type's default fill value, as NCO 5.1.4 leaves
/// them unwritten.
///
/// Errors: a text variable to pad.
fn padded(ctx: &Ctx<'_>, n: &str) -> Result<Option<Values>> {
    let v = &ctx.vars[n].val;
    let full: Vec<usize> = v.dims.iter().map(|&d| ctx.dims[d].len).collect();
    crate::value::padded(v, &full).map_err(|why| Error::var(n, why))
}
