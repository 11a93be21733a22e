//! Two files combined variable by variable, shared by ncbo (`a op b`) and ncflint
//! (`w1*a + w2*b`): the plan of each computed variable (which operand is larger and how
//! the smaller is broadcast onto it, ncbo's type promotion and shared missing value,
//! ncflint's rounding as the packed type), the blocks computed in parallel and written
//! in order, copies of the variables either operator takes from the first file.
//!
//! Rules (NCO 5.1.4, checked by the ncbo and ncflint tests): the second file's variable
//! may have a subset of the first's dimensions, or the other way round, and is
//! broadcast; the result is missing wherever either operand is; packed data is
//! unpacked; integer results that overflow wrap (warned), other values an integer
//! output cannot hold are its fill value.

use crate::arith::{self, ProcVar};
use crate::dataset::Dataset;
use crate::hyperslab::Selection;
use crate::kernels::binary::{self, BinOp};
use crate::kernels::cast::{Casts, Overflow};
use crate::model::{Dim, Meta};
use crate::pipeline;
use crate::target::{Output, Target};
use crate::types::{NcType, Values};
use crate::{Error, Result};

fn named_dims(m: &Meta, v: usize, sel: &Selection) -> Vec<(String, usize)> {
    m.vars[v]
        .dims
        .iter()
        .map(|&d| (m.dims[d].name.clone(), sel.len(m, d)))
        .collect()
}

/// How the two operands combine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Combine {
    /// ncbo's operation: `a op b`.
    Op(BinOp),
    /// ncflint's weights: `w1*a + w2*b`; the results of a packed variable are rounded
    /// as its packed type would hold them, then written unpacked (NCO 5.1.4).
    Weights(f64, f64),
}

/// One operand file: the dataset and its selection.
#[derive(Clone, Copy)]
pub struct Operand<'d> {
    /// The file.
    pub ds: &'d Dataset,
    /// Its hyperslabs.
    pub sel: &'d Selection,
}

impl Operand<'_> {
    /// The file's metadata.
    pub fn meta(&self) -> &Meta {
        self.ds.meta()
    }

    /// Variable `v`'s index lists under the selection.
    fn idx(&self, v: usize) -> Vec<Vec<usize>> {
        self.sel.for_var(self.meta(), v)
    }
}

/// A computed variable: output variable `out` is `op(va, vb)` of the two files.
struct Job {
    out: usize,
    va: usize,
    vb: usize,
    /// true when the second operand holds the larger shape.
    swap: bool,
    /// The smaller operand's element under each element of the larger (broadcast).
    map: Option<Vec<usize>>,
    /// The operands' arithmetic plans (the output definition is `pa.out`).
    pa: ProcVar,
    pb: ProcVar,
    /// The first operand's stored type, when its results are rounded as it.
    round_as: Option<NcType>,
}

impl Job {
    /// (larger operand's plan, smaller's).
    fn by_size(&self) -> (&ProcVar, &ProcVar) {
        if self.swap {
            (&self.pb, &self.pa)
        } else {
            (&self.pa, &self.pb)
        }
    }
}

/// Write `meta` (the planned output: `vars` of the first file, selected and placed)
/// into `target`: the variables `fixed` names, and text, are copied from the first
/// file, the others are `comb` of the two files (ncbo's engine, shared with ncflint).
/// `hdf` is `--hdf_upk`. Warnings go to stderr under `prog`.
///
/// Errors: variables missing from the second file or text there, shapes that do not
/// conform, dimensions of other sizes (each naming the variable), I/O errors; the
/// output is not committed then.
#[allow(clippy::too_many_arguments)]
pub fn write_pair(
    prog: &str,
    comb: Combine,
    a: Operand<'_>,
    b: Operand<'_>,
    vars: &[usize],
    mut meta: Meta,
    target: &Target,
    hdf: bool,
    fixed: impl Fn(&Meta, usize) -> bool,
) -> Result<()> {
    let mut jobs = Vec::new();
    for (o, &va) in vars.iter().enumerate() {
        if fixed(a.meta(), va) || !arith::is_arith(a.meta().vars[va].ty) {
            continue;
        }
        let j = plan_job(comb, a, b, o, va, &mut meta, hdf)?;
        meta.vars[o] = j.pa.out.clone();
        jobs.push(j);
    }
    // Values that do not fit an integer output become its fill value; a variable
    // without _FillValue then needs one declared, and the output is written again
    // (arith::write_declaring_fills).
    let (out, divisions) = arith::write_declaring_fills(prog, |declare| {
        let mut meta = meta.clone();
        arith::declare_fills(&mut meta, declare);
        let mut out = Output::create(target, meta.clone())?;
        // Copied variables first, then the computed ones.
        for (o, &v) in vars.iter().enumerate() {
            if !jobs.iter().any(|j| j.out == o) {
                out.copy_unchanged(a.ds, v, a.sel, o)?;
            }
        }
        let counts = compute(comb, a, b, &jobs, &mut out)?;
        let mut unfit = arith::Unfit::default();
        for (j, &(_, casts)) in jobs.iter().zip(&counts) {
            unfit.add(&j.pa.out.name, casts);
        }
        Ok(((out, counts), meta, unfit))
    })?;
    for (j, (bad, _)) in jobs.iter().zip(divisions) {
        if bad > 0 {
            eprintln!("{prog}: WARNING {bad} element(s) of {} are divisions by zero; written as the fill value", j.pa.out.name);
        }
    }
    out.commit()
}

/// The job computing output variable `o` from variable `va` of the first file. When the
/// second file's variable is the larger, `meta`'s variable takes its dimensions.
///
/// Errors: the variable is missing from the second file or text there, or the shapes
/// do not conform.
fn plan_job(
    comb: Combine,
    a: Operand<'_>,
    b: Operand<'_>,
    o: usize,
    va: usize,
    meta: &mut Meta,
    hdf: bool,
) -> Result<Job> {
    let (am, bm) = (a.meta(), b.meta());
    let var = &am.vars[va];
    let vb = bm.var_like(am, va).ok_or_else(|| {
        Error::var(
            &am.var_path(va),
            format!("is not in the second input file {}", b.ds.path().display()),
        )
    })?;
    if !arith::is_arith(bm.vars[vb].ty) {
        return Err(Error::var(&var.name, "is text in the second file"));
    }
    let da = named_dims(am, va, a.sel);
    let db = named_dims(bm, vb, b.sel);
    let (swap, map) = match binary::broadcast_map(&da, &db) {
        Ok(m) => (false, m),
        Err(e1) => match binary::broadcast_map(&db, &da) {
            Ok(m) => (true, m),
            Err(_) => {
                return Err(Error::var(
                    &var.name,
                    format!("shapes do not conform: {e1}"),
                ))
            }
        },
    };
    if swap {
        // The output takes the second operand's (larger) shape.
        let mut dims = Vec::new();
        let group = meta.vars[o].group;
        for (name, len) in &db {
            let id = match meta.dim_in_scope(group, name) {
                Some(id) if meta.dims[id].len == *len => id,
                Some(_) => {
                    return Err(Error::var(
                        &var.name,
                        format!("dimension {name} differs in size between the files"),
                    ))
                }
                None => {
                    let bd = bm.dim_in_scope(bm.vars[vb].group, name).unwrap_or(0);
                    meta.dims.push(Dim {
                        name: name.clone(),
                        len: *len,
                        unlimited: bm.dims[bd].unlimited,
                        group,
                    });
                    meta.dims.len() - 1
                }
            };
            dims.push(id);
        }
        meta.vars[o].dims = dims;
    }
    let mut pa = arith::prepare(am, va, hdf);
    pa.place_as(&meta.vars[o]);
    let pb = arith::prepare(bm, vb, hdf);
    if let Combine::Op(_) = comb {
        // ncbo's type promotion and shared missing value (ncflint keeps the first
        // operand's type, as NCO's does).
        arith::pair_with(&mut pa, &pb);
    }
    // Results can be missing when either operand has missing values, or when an
    // integer result divides by zero: then the output needs a _FillValue, decided
    // here because the definitions are written before any data.
    let int_div = comb == Combine::Op(BinOp::Div) && !pa.out.ty.is_float();
    let zero_divisor = int_div && pb.unpacked(&b.ds.read(vb, &b.idx(vb))?).contains(&0.0);
    if (pb.in_fill.is_some() || zero_divisor) && pa.out.attr("_FillValue").is_none() {
        let ty = pa.out.ty;
        crate::fill::set_fill_attr(&mut pa.out, ty, pa.out_fill);
    }
    let round_as = match comb {
        Combine::Weights(..) if pa.pack.is_some() => Some(var.ty),
        _ => None,
    };
    Ok(Job {
        out: o,
        va,
        vb,
        swap,
        map,
        pa,
        pb,
        round_as,
    })
}

/// Compute every job into `out`, in units of about 256 KiB of the larger operand
/// (rows, or pieces of a row) computed in parallel windows while the previous window
/// is written ([`pipeline::for_each_ordered`]). Returns each job's counts of integer
/// divisions by zero and of overflows.
fn compute(
    comb: Combine,
    a: Operand<'_>,
    b: Operand<'_>,
    jobs: &[Job],
    out: &mut Output,
) -> Result<Vec<(usize, Casts)>> {
    // The operands of each job, (larger, its variable), (smaller, its variable), and
    // the smaller operand read whole when it is broadcast through a map.
    let sides: Vec<((Operand<'_>, usize), (Operand<'_>, usize))> = jobs
        .iter()
        .map(|j| {
            if j.swap {
                ((b, j.vb), (a, j.va))
            } else {
                ((a, j.va), (b, j.vb))
            }
        })
        .collect();
    let mut small_whole: Vec<Option<Vec<f64>>> = Vec::with_capacity(jobs.len());
    for (j, (_, (small, sv))) in jobs.iter().zip(&sides) {
        small_whole.push(match &j.map {
            Some(_) => Some(
                j.by_size()
                    .1
                    .unpacked(&small.ds.read(*sv, &small.idx(*sv))?),
            ),
            None => None,
        });
    }
    let mut units: Vec<(usize, pipeline::Block)> = Vec::new();
    for (ji, ((big, bv), _)) in sides.iter().enumerate() {
        let var = &big.meta().vars[*bv];
        let es = var.ty.size();
        let unit = pipeline::unit_bytes(
            var.storage.chunks.as_deref(),
            es,
            pipeline::MAX_CHUNK_UNIT_BYTES,
        );
        let blocks = pipeline::blocks(&big.idx(*bv), es, unit);
        units.extend(blocks.into_iter().map(|b| (ji, b)));
    }
    // Values of a unit, with its count of integer divisions by zero and of overflows.
    let unit_values = |u: usize| -> Result<(Values, usize, Casts)> {
        let (ji, unit) = &units[u];
        let (j, ((big, bv), (small, sv))) = (&jobs[*ji], &sides[*ji]);
        let big_idx = big.idx(*bv);
        let xbig = big.ds.read(*bv, &unit.select(&big_idx))?;
        let read_small = || small.ds.read(*sv, &unit.select(&small.idx(*sv)));
        let (pa, pb) = (&j.pa, &j.pb);
        let same = pa.pack.is_none() && pb.pack.is_none() && j.map.is_none() && !j.swap;
        if let (Combine::Op(op), true) = (comb, same) {
            // Same shapes, no packing: compute in the stored type when it is exact.
            let xs = read_small()?;
            // (Equal missing values: then "either operand is its fill" is ncbo's rule.)
            if let Some(vals) = (pa.in_fill == pb.in_fill)
                .then(|| {
                    binary::apply_same_float(op, &xbig, pa.in_fill, &xs, pb.in_fill, pa.out_fill)
                })
                .flatten()
            {
                return Ok((vals, 0, Casts::default()));
            }
            // Integers exactly in their own type, with their exact fill values.
            let fill_a = big.meta().vars[*bv]
                .attr("_FillValue")
                .filter(|_| pa.in_fill.is_some());
            let fill_b = small.meta().vars[*sv]
                .attr("_FillValue")
                .filter(|_| pb.in_fill.is_some());
            // (A missing value given otherwise, `missing_value`, takes the double path.)
            let known = (pa.in_fill.is_none() || fill_a.is_some())
                && (pb.in_fill.is_none() || fill_b.is_some());
            if let Some(vals) = known
                .then(|| {
                    binary::apply_same_int(
                        op,
                        &xbig,
                        fill_a.map(|a| &a.value),
                        &xs,
                        fill_b.map(|a| &a.value),
                        pa.out.attr("_FillValue").or(fill_b).map(|a| &a.value),
                    )
                })
                .flatten()
            {
                return Ok(vals);
            }
        }
        let (pbig, psmall) = j.by_size();
        let fbig = pbig.unpacked(&xbig);
        let start = unit.offset(&big_idx);
        let fsmall: Vec<f64> = match (&small_whole[*ji], &j.map) {
            (Some(s), Some(m)) => m[start..start + fbig.len()].iter().map(|&k| s[k]).collect(),
            _ => psmall.unpacked(&read_small()?),
        };
        let (fa, fb) = if j.swap {
            (&fsmall, &fbig)
        } else {
            (&fbig, &fsmall)
        };
        Ok(combine(comb, j, fa, fb))
    };
    let mut counts = vec![(0usize, Casts::default()); jobs.len()];
    pipeline::for_each_ordered(units.len(), unit_values, |u, (vals, bad, over)| {
        let (ji, unit) = &units[u];
        counts[*ji].0 += bad;
        counts[*ji].1 = counts[*ji].1.plus(over);
        let ((big, bv), _) = &sides[*ji];
        out.write_at(jobs[*ji].out, &unit.first(&big.idx(*bv)), &vals)
    })?;
    Ok(counts)
}

/// `op(a, b)` element by element, unpacked operands `fa` and `fb` of plans `pa` and
/// `pb` (missing where either is), typed as `pa`'s output by the overflow-safe cast;
/// with the counts of integer divisions by zero and of results that do not fit the
/// output type (both written as the fill value).
fn combine(comb: Combine, j: &Job, fa: &[f64], fb: &[f64]) -> (Values, usize, Casts) {
    let (pa, pb) = (&j.pa, &j.pb);
    let fill = pa.out_fill;
    let (fa_miss, fb_miss) = (
        pa.in_fill.map(|_| pa.out_fill),
        pb.in_fill.map(|_| pb.out_fill),
    );
    let mut r = match comb {
        Combine::Op(op) => {
            // One missing value for both operands (NCO's): the second's own missing
            // values become it, and its values equal to it are missing too.
            let m = arith::pair_missing(pa, pb);
            let translated: Vec<f64>;
            let fb = match (fb_miss, m) {
                (Some(own), Some(m)) if own != m => {
                    translated = fb.iter().map(|&y| if y == own { m } else { y }).collect();
                    &translated[..]
                }
                _ => fb,
            };
            binary::apply(op, fa, m, fb, m, None, fill)
        }
        Combine::Weights(w1, w2) => binary::weighted_sum(w1, fa, fa_miss, w2, fb, fb_miss, fill),
    };
    if let Some(ty) = j.round_as {
        binary::round_as(&mut r, ty, fill);
    }
    let mut bad = 0;
    if !pa.out.ty.is_float() {
        for v in r.iter_mut().filter(|v| !v.is_finite()) {
            *v = fill;
            bad += 1;
        }
        if comb == Combine::Op(BinOp::Div) {
            // Integer division truncates toward zero, as C's does in NCO (7/-2 is -3),
            // where the conversion of other results rounds.
            for v in r.iter_mut() {
                *v = v.trunc();
            }
        }
    }
    // Integer arithmetic on two integer operands wraps as NCO's does (warned); other
    // conversions into an integer type give the fill value (nco_kernels::cast).
    let mode = if pa.overflow == Overflow::Wrap && pb.overflow == Overflow::Wrap {
        Overflow::Wrap
    } else {
        Overflow::Fill
    };
    let (vals, casts) = crate::kernels::to_values_plain(&r, pa.out.ty, fill, mode);
    (vals, bad, casts)
}
