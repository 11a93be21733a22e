//! What the arithmetic operators (ncwa, ncra, nces, ncbo) share about a *processed*
//! variable: it is read in its stored type, unpacked on the fly, computed in double
//! precision (NCO's default since 4.3.6) and written unpacked, in the unpacked type,
//! with `_FillValue` converted to that type; results go into the output type by the
//! overflow-safe cast (`nco_kernels::cast`: integers rounded, ties to even; a result an
//! integer type cannot hold wraps when it comes from integer arithmetic on integer
//! data, as in NCO, and is the fill value otherwise), counted in [`Unfit`] and
//! reported in one warning line per variable (README, compatibility notes).

use crate::dataset::{Block, Dataset};
use crate::error::Result;
use crate::kernels::cast::{Casts, Overflow};
use crate::kernels::{self, reduce::Accum, reduce::Op};
use crate::model::{Attr, Meta, Var};
use crate::rules::fill;
use crate::rules::packing::{self, Packing};
use crate::types::{NcType, Values};

/// A variable the operator computes on.
#[derive(Clone, Debug)]
pub struct ProcVar {
    /// Index of the variable in the input file.
    pub id: usize,
    /// Missing value in the stored (packed) type, as f64.
    pub in_fill: Option<f64>,
    /// Packing of the stored data.
    pub pack: Option<Packing>,
    /// Output definition (unpacked type, converted fill attributes).
    pub out: Var,
    /// Value written for missing results.
    pub out_fill: f64,
    /// What becomes of results the output type cannot hold: they wrap for integer
    /// data read as they are (integer arithmetic, NCO's), and are the fill value for
    /// packed data (a conversion of floating-point values).
    pub overflow: Overflow,
}

impl ProcVar {
    /// Take the planned output variable's dimensions, group and storage (chunks
    /// fitted to the output, `-L`, `--ppc` with its attribute): the rest of the output definition (type,
    /// attributes) is this variable's.
    pub fn place_as(&mut self, planned: &Var) {
        self.out.dims = planned.dims.clone();
        self.out.group = planned.group;
        self.out.storage = planned.storage.clone();
        // The quantization attribute planned with it, before the operator adds
        // cell_methods (as NCO orders them; warnings come when the output is created).
        if let Some(q) = planned.storage.quantize {
            let _ = crate::quantize::stamp(&mut self.out, "", &q);
        }
    }
}

/// Prepare variable `id` of `meta` for arithmetic (`hdf` = `--hdf_upk`).
pub fn prepare(meta: &Meta, id: usize, hdf: bool) -> ProcVar {
    let var = &meta.vars[id];
    let (in_fill, pack) = own_fill_and_packing(meta, id, hdf);
    let mut out = var.clone();
    if let Some(p) = &pack {
        packing::mark_unpacked(&mut out, p);
    }
    let out_fill = fill::fill_value(&out).unwrap_or_else(|| fill::default_fill(out.ty));
    let overflow = if var.ty.is_float() || pack.is_some() {
        Overflow::Fill
    } else {
        Overflow::Wrap
    };
    ProcVar {
        id,
        in_fill,
        pack,
        out,
        out_fill,
        overflow,
    }
}

impl ProcVar {
    /// Typed output values from results (`None` = missing) by the overflow-safe cast
    /// under [`ProcVar::overflow`], with the counts of results that did not fit the
    /// output type. Adds a `_FillValue` attribute (the type's default) when a result
    /// is missing or became the fill value and the variable had none: for operators
    /// that define the output after computing (ncwa); the others use
    /// [`write_declaring_fills`].
    pub fn finish(&mut self, results: &[Option<f64>]) -> (Values, Casts) {
        let (vals, c) = kernels::to_values_with(results, self.out.ty, self.out_fill, self.overflow);
        if (c.filled > 0 || results.iter().any(Option::is_none))
            && self.out.attr("_FillValue").is_none()
        {
            let ty = self.out.ty;
            fill::set_fill_attr(&mut self.out, ty, self.out_fill);
        }
        (vals, c)
    }

    /// Results as f64 after unpacking: the stored values with missing ones as `out_fill`.
    pub fn unpacked(&self, x: &Values) -> Vec<f64> {
        kernels::to_f64_unpacked(x, self.in_fill, self.pack.as_ref(), self.out_fill)
    }
}

/// ncbo's rules for its two operands `a` (first file) and `b` (checked against NCO
/// 5.1.4): the result has the type of the higher [`NcType::precision_rank`] (float with
/// double gives double, an integer with float gives float, of two integers of one
/// width the unsigned one), its fill attributes converted to it; the two operands share
/// one missing value, the first's when it has one, else the second's, which is then
/// the result's ([`pair_missing`]).
pub fn pair_with(a: &mut ProcVar, b: &ProcVar) {
    let ty = if b.out.ty.precision_rank() > a.out.ty.precision_rank() {
        b.out.ty
    } else {
        a.out.ty
    };
    if ty != a.out.ty {
        fill::convert_fill_attrs(&mut a.out, ty);
        a.out.ty = ty;
        if a.out.attr("_FillValue").is_none() {
            a.out_fill = fill::default_fill(ty);
        }
        if ty.is_float() {
            a.overflow = Overflow::Fill;
        }
    }
    if a.in_fill.is_none() && b.in_fill.is_some() {
        a.out_fill = b.out_fill;
    }
}

/// The one missing value of ncbo's operands ([`pair_with`]): the first's, else the
/// second's, as values of the unpacked operands.
pub fn pair_missing(a: &ProcVar, b: &ProcVar) -> Option<f64> {
    a.in_fill
        .map(|_| a.out_fill)
        .or(b.in_fill.map(|_| b.out_fill))
}

/// The missing value and packing of variable `id` of `meta` as that file stores it:
/// every input of a multi-file operator (ncra's records, nces's members) is skipped
/// and unpacked with its own `_FillValue`/`missing_value` and `scale_factor`/
/// `add_offset`, as NCO 5.1.4 does (files of one series often carry their own
/// packing); the first input's plan describes the output.
pub fn own_fill_and_packing(meta: &Meta, id: usize, hdf: bool) -> (Option<f64>, Option<Packing>) {
    let var = &meta.vars[id];
    (fill::fill_value(var), packing::packing_of(var, hdf))
}

/// Bytes of the blocks a whole netCDF-4 chunk is added in ([`accumulate_from`]): a
/// block and its slice of the accumulator stay in the core's caches.
const NATIVE_BLOCK_BYTES: usize = 64 << 10;

/// Read the selection `idx` of variable `var` of `ds` and add it element-wise into
/// `acc`: straight from the file's big-endian bytes into the reused `buf` for classic
/// files (no decoded copy, no fresh allocation), block by block for a whole shuffled
/// netCDF-4 chunk ([`Dataset::native_blocks`]), through typed values otherwise.
pub fn accumulate_from(
    acc: &mut Accum,
    ds: &Dataset,
    var: usize,
    idx: &[Vec<usize>],
    fill: Option<f64>,
    pack: Option<&Packing>,
    w: f64,
    buf: &mut Vec<u8>,
) -> Result<()> {
    let ty = ds.meta().vars[var].ty;
    if ds.read_raw_be_into(var, idx, buf)? {
        kernels::add_elementwise_be(acc, ty, buf, fill, pack, w);
    } else if let Some(blocks) = ds.native_blocks(var, idx)? {
        // One whole shuffled netCDF-4 chunk: unshuffled and added 64 KiB at a time,
        // with no decoded copy of the chunk (nces's members, one chunk a unit).
        kernels::add_member_blocks_ne(acc, ty, fill, pack, w, |sink| {
            blocks.read(NATIVE_BLOCK_BYTES, sink)
        })?;
    } else {
        kernels::add_elementwise(acc, &ds.read(var, idx)?, fill, pack, w);
    }
    Ok(())
}

/// The valid range of variable `pv.id` of `ds` under the index lists `idx`, after
/// unpacking (fill values skipped; non-finite values counted): what NCO's packing
/// parameters are computed from. Read in blocks of about 1 MiB, straight from the
/// file's big-endian bytes for classic files.
///
/// Errors: read errors.
pub fn valid_range_of(
    ds: &Dataset,
    pv: &ProcVar,
    idx: &[Vec<usize>],
) -> Result<kernels::ValidRange> {
    let mut r = kernels::ValidRange::EMPTY;
    let ty = ds.meta().vars[pv.id].ty;
    ds.read_blocks_raw(pv.id, idx, 1 << 20, |_, x| {
        r = r.merge(match x {
            Block::Be(raw) => kernels::valid_range_be(ty, raw, pv.in_fill, pv.pack.as_ref()),
            Block::Values(x) => kernels::valid_range(&x, pv.in_fill, pv.pack.as_ref()),
        });
        Ok(())
    })?;
    Ok(r)
}

/// Warn on stderr, in one line, about the values of `var` that did not fit its output
/// type `ty`: those that wrapped around (integer arithmetic, as in NCO) and those
/// written as the fill value `fill` (README compatibility notes). Nothing when both
/// counts are 0.
pub fn warn_overflow(prog: &str, var: &str, ty: NcType, c: Casts, fill: f64) {
    let wrapped = (c.wrapped > 0).then(|| {
        format!(
            "{} integer result(s) of {var} overflow {ty} and wrap around as in NCO",
            c.wrapped
        )
    });
    let filled = (c.filled > 0).then(|| {
        format!(
            "{} value(s) of {var} do not fit {ty} (out of range, or not a number) and were written as the fill value {fill}",
            c.filled
        )
    });
    let parts: Vec<String> = wrapped.into_iter().chain(filled).collect();
    if !parts.is_empty() {
        eprintln!(
            "{prog}: WARNING {}; promote the variable (e.g. ncap2 or ncpdq -M) for exact results",
            parts.join("; ")
        );
    }
}

/// Counts of values that did not fit their output type, per output variable (by
/// name), gathered over all the blocks, records and groups an operator computes, so
/// that each variable gets one warning line ([`Unfit::warn`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unfit {
    counts: std::collections::BTreeMap<String, Casts>,
}

impl Unfit {
    /// Count values of variable `var` that did not fit.
    pub fn add(&mut self, var: &str, c: Casts) {
        if c.total() > 0 {
            let e = self.counts.entry(var.to_string()).or_default();
            *e = e.plus(c);
        }
    }

    /// Count `n` values of `var` written as the fill value.
    pub fn add_filled(&mut self, var: &str, n: usize) {
        self.add(
            var,
            Casts {
                filled: n,
                wrapped: 0,
            },
        );
    }

    /// Add another tally.
    pub fn merge(&mut self, other: Unfit) {
        for (k, c) in other.counts {
            self.add(&k, c);
        }
    }

    /// True when every value fitted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The counts of variable `var`.
    pub fn count(&self, var: &str) -> Casts {
        self.counts.get(var).copied().unwrap_or_default()
    }

    /// The variables with values written as the fill value and no `_FillValue` in
    /// `meta` (the output's definition): their fill value, the type's default, is
    /// written but not declared, so the output must be defined again with it.
    pub fn undeclared(&self, meta: &Meta) -> Vec<String> {
        self.counts
            .iter()
            .filter(|(k, c)| {
                c.filled > 0 && meta.var(k).is_some_and(|v| v.attr("_FillValue").is_none())
            })
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// One warning line per variable of `meta` (the output's definition).
    pub fn warn(&self, prog: &str, meta: &Meta) {
        for (name, &c) in &self.counts {
            if let Some(v) = meta.var(name) {
                let f = fill::fill_value(v).unwrap_or_else(|| fill::default_fill(v.ty));
                warn_overflow(prog, name, v.ty, c, f);
            }
        }
    }
}

/// Declare `_FillValue` (the type's default, the value written for results that do
/// not fit) on the variables `names` of `meta` ([`Meta::var_ref`]: names in the root
/// group, full paths elsewhere) that have none.
pub fn declare_fills(meta: &mut Meta, names: &[String]) {
    let refs: Vec<String> = (0..meta.vars.len()).map(|v| meta.var_ref(v)).collect();
    for (v, r) in meta.vars.iter_mut().zip(refs) {
        if names.contains(&r) && v.attr("_FillValue").is_none() && v.ty.is_numeric() {
            let ty = v.ty;
            fill::set_fill_attr(v, ty, fill::default_fill(ty));
        }
    }
}

/// Write an output whose definition (header) comes before its values, so that every
/// value that does not fit its type is a declared fill value: `attempt(declare)`
/// defines the output with `_FillValue` added on the variables `declare` (see
/// [`declare_fills`]), writes it, and returns the result (typically the finished
/// temporary output, not yet committed), the output's definition and its [`Unfit`]
/// tally. When some variable without `_FillValue` had values that did not fit, the
/// attempt is dropped (a temporary output removes itself) and made again declaring
/// it; the warnings of the final attempt are printed, one line per variable. Costs a
/// second pass only when a value did not fit a variable without a fill value.
///
/// Errors: those of `attempt`.
pub fn write_declaring_fills<T>(
    prog: &str,
    mut attempt: impl FnMut(&[String]) -> Result<(T, Meta, Unfit)>,
) -> Result<T> {
    let mut declare: Vec<String> = Vec::new();
    loop {
        let (out, meta, unfit) = attempt(&declare)?;
        let more: Vec<String> = unfit
            .undeclared(&meta)
            .into_iter()
            .filter(|n| !declare.contains(n))
            .collect();
        if more.is_empty() {
            unfit.warn(prog, &meta);
            return Ok(out);
        }
        drop(out);
        declare.extend(more);
    }
}

/// Append `"<dims>: <method>"` to the variable's `cell_methods` unless it is already
/// there ([`crate::rules::cell_methods`], CF §7.3), as NCO's averagers do unless
/// `--no_cll_mth`.
pub fn add_cell_methods(var: &mut Var, dims: &[String], method: &str) {
    let old = var.attr_text("cell_methods");
    if let Some(text) = crate::rules::cell_methods::extended(old.as_deref(), dims, method) {
        var.set_attr(Attr::text("cell_methods", &text));
    }
}

/// The operator reducing over a dimension (`-y`), for [`reduction`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reducer {
    /// ncra: over the record dimension, across files.
    Ncra,
    /// ncwa: over `-a` dimensions.
    Ncwa {
        /// `-I` was given: weights and masks stay off the coordinate-like variables.
        no_coord_weights: bool,
    },
}

/// How a reduced variable is computed: its statistic, and whether the weights (`-w`)
/// and the mask apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The statistic.
    pub op: Op,
    /// True when the weights (and ncwa's mask) apply.
    pub weighted: bool,
}

/// The statistic NCO 5.1.4's ncra and ncwa compute on variable `v` of `meta` (which
/// has a reduced dimension) under `-y op`, measured with every statistic (`avg mabs
/// mebs mibs min max rms rmssdn sqravg sqrt ttl tabs`), with and without `-w`, `-N`
/// and `-I`:
///
/// - coordinate-like variables ([`is_coordinate_like`]: coordinate variables, and
///   variables named by any variable's `bounds`, `climatology` or `coordinates`
///   attribute) are averaged whatever `-y` says (`time_bnds` under `-y ttl` is the
///   mean of the bounds, not their sum) and get `cell_methods = "<dims>: mean"`;
///   ncra averages them without weights, ncwa with its weights and mask unless `-I`;
///   with `-N` both give the numerator of that mean (the weighted sum);
/// - every other variable takes `op`, with the weights and mask;
/// - variables without a reduced dimension are not reduced: copied (ncwa) or, without
///   the record dimension, taken from the first file (ncra); not decided here.
pub fn reduction(meta: &Meta, v: usize, op: Op, reducer: Reducer) -> Reduction {
    if !is_coordinate_like(meta, v) {
        return Reduction { op, weighted: true };
    }
    let weighted = match reducer {
        Reducer::Ncra => false,
        Reducer::Ncwa { no_coord_weights } => !no_coord_weights,
    };
    Reduction {
        op: Op::Avg,
        weighted,
    }
}

/// Record the thread count in the `nco_openmp_thread_number` global attribute, as NCO's
/// threaded operators do when `-t` is given.
pub fn stamp_threads(meta: &mut Meta, threads: Option<usize>) {
    if let Some(t) = threads {
        crate::model::set_attr(
            &mut meta.attrs,
            Attr {
                name: "nco_openmp_thread_number".into(),
                value: Values::Int(vec![t as i32]),
            },
        );
    }
}

/// True when the file declares CF, CCM or CCSM conventions in its `Conventions` global
/// attribute (NCO applies its convention rules only then).
pub fn follows_conventions(meta: &Meta) -> bool {
    meta.attrs
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case("Conventions"))
        .and_then(|a| a.value.as_text())
        .is_some_and(|t| t.contains("CF") || t.contains("CCM") || t.contains("CCSM"))
}

/// Variables NCO 5.1.4's size- and rank-preserving arithmetic operators (ncbo, nces,
/// ncflint) copy from the first file instead of computing on, and ncpdq does not pack
/// (checked by running them): coordinate-like variables ([`is_coordinate_like`]), and,
/// in files declaring CF/CCM/CCSM `Conventions`, the grid and date variables of
/// [`is_fixed_by_name`].
pub fn is_fixed_by_convention(meta: &Meta, v: usize) -> bool {
    is_coordinate_like(meta, v) || is_fixed_by_name(meta, v)
}

/// True for the variables NCO 5.1.4 treats as fixed by their name in files declaring
/// CF/CCM/CCSM `Conventions`: the CCM/CCSM grid and date variables (`gw`, `area`,
/// `ORO`, `hyai`, `hyam`, `hybi`, `hybm`, `date`, `datesec`, `nbdate`, ...), names
/// starting with `msk_` or `wgt_`, and the usual multi-dimensional coordinate names
/// (`lat`, `lon`, `lev`, `depth`, `latitude`, `longitude`, `latixy`, `longxy`).
/// Checked by running NCO 5.1.4's nces, ncbo and ncflint (`nlon` and `wnummax` are
/// processed).
pub fn is_fixed_by_name(meta: &Meta, v: usize) -> bool {
    const NAMES: &[&str] = &[
        "ORO",
        "area",
        "date",
        "datesec",
        "depth",
        "depth_bnds",
        "gw",
        "hyai",
        "hyam",
        "hybi",
        "hybm",
        "lat",
        "lat_bnds",
        "latitude",
        "latixy",
        "lev",
        "lon",
        "lon_bnds",
        "longitude",
        "longxy",
        "mdt",
        "mhisf",
        "nbdate",
        "nbsec",
        "ndbase",
        "nsbase",
        "ntrk",
        "ntrm",
        "ntrn",
    ];
    let name = meta.vars[v].name.as_str();
    follows_conventions(meta)
        && (NAMES.contains(&name) || name.starts_with("msk_") || name.starts_with("wgt_"))
}

/// True for the CCM/CCSM base-date and truncation scalars (`nbdate`, `nbsec`,
/// `ndbase`, `nsbase`, `ntrk`, `ntrm`, `ntrn`) in files declaring CF/CCM/CCSM
/// `Conventions`: NCO 5.1.4's ncecat copies them as they are instead of stacking them
/// along the new record dimension (checked by running it, with and without
/// `Conventions`; `date`, `datesec`, `gw` and the other names of
/// [`is_fixed_by_name`] are stacked).
pub fn is_unstacked_by_name(meta: &Meta, v: usize) -> bool {
    const NAMES: &[&str] = &[
        "nbdate", "nbsec", "ndbase", "nsbase", "ntrk", "ntrm", "ntrn",
    ];
    follows_conventions(meta) && NAMES.contains(&meta.vars[v].name.as_str())
}

/// NCO's coordinate-like variables, whatever the file's `Conventions`: coordinate
/// variables, and variables named in any variable's `bounds`, `climatology` or
/// `coordinates` attribute (a blank-separated list; checked by running NCO 5.1.4's
/// ncbo, nces, ncecat and ncflint on a file without `Conventions`: a variable named by
/// a `grid_mapping` is computed on like any other).
/// ncecat does not stack these; ncbo, nces and ncflint copy them (ncflint computes the
/// record ones, see [`is_fixed_ncflint`]).
pub fn is_coordinate_like(meta: &Meta, v: usize) -> bool {
    let var = &meta.vars[v];
    if meta.is_coord_var(var) {
        return true;
    }
    meta.vars.iter().any(|o| {
        ["bounds", "climatology", "coordinates"].iter().any(|a| {
            o.attr_text(a)
                .is_some_and(|t| t.split_whitespace().any(|w| w == var.name))
        })
    })
}

/// Variables ncflint copies from the first file (NCO 5.1.4): non-record
/// coordinate-like and text variables, record coordinate-like variables too with
/// `--fix_rec_crd` (`fix_rec_crd`), and the variables fixed by name
/// ([`is_fixed_by_name`]). Record text variables are interpolated as numbers, as NCO
/// does.
pub fn is_fixed_ncflint(meta: &Meta, v: usize, fix_rec_crd: bool) -> bool {
    let var = &meta.vars[v];
    let record = meta.is_record_var(var);
    let crd = is_coordinate_like(meta, v);
    ((crd || !var.ty.is_numeric()) && !record)
        || (crd && record && fix_rec_crd)
        || is_fixed_by_name(meta, v)
}

/// True when `ty` takes part in arithmetic (numbers; not text).
pub fn is_arith(ty: NcType) -> bool {
    ty.is_numeric()
}
