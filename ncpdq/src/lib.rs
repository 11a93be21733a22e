//! ncpdq, netCDF Permute Dimensions Quickly / Pack Data Quietly (NCO manual, "ncpdq"):
//! re-order (`-a lat,lon,time`) and reverse (`-a -lat`) dimensions, and pack or unpack
//! variables (`-P` policy, `-M` map, `-U`). Installed also as ncpack and ncunpack.
//!
//! * `-a` is positional: in each variable, the listed dimensions it has take the places
//!   those dimensions occupy, in the listed order; a leading `-` reverses a dimension.
//!   When the record dimension is listed but not first, the first listed dimension
//!   becomes the record dimension.
//! * Without `-a` and `-P`, ncpdq packs (`all_new`, map `flt_sht`); with `-a` alone it
//!   only permutes. Coordinates, bounds and grid properties (gw, area) are never packed.

use clap::{CommandFactory, Parser};
use rayon::prelude::*;
use std::ffi::OsString;

use nco_core::arith;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::Dataset;
use nco_core::extract::RecordChange;
use nco_core::hyperslab::Selection;
use nco_core::kernels::permute::permute;
use nco_core::model::Meta;
use nco_core::packing;
use nco_core::pipeline;
use nco_core::target::Output;
use nco_core::types::{NcType, Values};
use nco_core::{Error, Result};

/// ncpdq command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncpdq",
    about = "netCDF Permute Dimensions Quickly, Pack Data Quietly (NCO-compatible)",
    after_help = "Examples:\n  ncpdq -a lat,lon,time in.nc out.nc         make time the innermost dimension\n  ncpdq -a -lat in.nc out.nc                 reverse latitudes\n  ncpdq -P all_new -M flt_sht in.nc out.nc   pack floats into shorts\n  ncpdq -U in.nc out.nc                      unpack"
)]
pub struct Cli {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub std: OperatorArgs,
    /// Dimension order, e.g. lat,lon,time; a leading - reverses a dimension (-lat)
    #[arg(short = 'a', long = "arrange", visible_aliases = ["permute", "reorder", "rdr"], value_name = "DIMS", allow_hyphen_values = true)]
    pub arrange: Option<String>,
    /// Packing policy: all_new, all_xst, xst_new, upk
    #[arg(
        short = 'P',
        long = "pck_plc",
        visible_alias = "pack_policy",
        value_name = "POLICY",
        value_parser = Policy::parse
    )]
    pub policy: Option<Policy>,
    /// Packing map: flt_sht, flt_byt, hgh_sht, hgh_byt, nxt_lsr, dbl_flt, flt_dbl
    #[arg(
        short = 'M',
        long = "pck_map",
        visible_alias = "map",
        value_name = "MAP",
        value_parser = PackMap::parse
    )]
    pub map: Option<PackMap>,
    /// Unpack (same as -P upk)
    #[arg(short = 'U', long = "unpack", visible_alias = "upk")]
    pub unpack: bool,
    /// Unpack with the HDF convention
    #[arg(long = "hdf_upk", visible_alias = "hdf_unpack")]
    pub hdf_upk: bool,
    /// Allow multiple record dimensions (netCDF-4)
    #[arg(long = "mrd")]
    pub mrd: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// Packing policy (`-P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Leave packing alone (permutation only).
    None,
    /// Pack everything, repacking packed variables.
    AllNew,
    /// Pack unpacked variables, copy packed ones.
    AllXst,
    /// Repack only packed variables.
    XstNew,
    /// Unpack.
    Unpack,
}

impl Policy {
    /// Parse a `-P` name (NCO's, with or without `pck_plc_`).
    ///
    /// Errors: an unknown policy (naming `-P`).
    pub fn parse(s: &str) -> Result<Policy> {
        Ok(match s.trim_start_matches("pck_plc_") {
            "all_new" | "all_new_att" => Policy::AllNew,
            "all_xst" | "all_xst_att" => Policy::AllXst,
            "xst_new" | "xst_new_att" => Policy::XstNew,
            "upk" | "unpack" | "upk_all" => Policy::Unpack,
            _ => {
                return Err(Error::option(
                    "-P",
                    format!("unknown packing policy \"{s}\""),
                ))
            }
        })
    }
}

/// Packing map (`-M`): the packed type of an unpacked type, or a plain conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackMap {
    /// float, double -> short
    FltSht,
    /// float, double -> byte
    FltByt,
    /// types wider than short -> short
    HghSht,
    /// types wider than byte -> byte
    HghByt,
    /// each type to the next smaller one
    NxtLsr,
    /// double -> float (conversion, no packing)
    DblFlt,
    /// float -> double (conversion, no packing)
    FltDbl,
}

impl PackMap {
    /// Parse a `-M` name (NCO's, with or without `pck_map_`).
    ///
    /// Errors: an unknown map (naming `-M`).
    pub fn parse(s: &str) -> Result<PackMap> {
        Ok(match s.trim_start_matches("pck_map_") {
            "flt_sht" => PackMap::FltSht,
            "flt_byt" => PackMap::FltByt,
            "hgh_sht" => PackMap::HghSht,
            "hgh_byt" => PackMap::HghByt,
            "nxt_lsr" => PackMap::NxtLsr,
            "dbl_flt" | "dbl_sgl" => PackMap::DblFlt,
            "flt_dbl" | "sgl_dbl" => PackMap::FltDbl,
            _ => return Err(Error::option("-M", format!("unknown packing map \"{s}\""))),
        })
    }

    /// (target type, true when it packs rather than converts) for `ty`, `None` when the
    /// map leaves `ty` alone.
    fn target(self, ty: NcType) -> Option<(NcType, bool)> {
        use NcType as T;
        let wide = |t: T| {
            matches!(
                t,
                T::Float | T::Double | T::Int | T::UInt | T::Int64 | T::UInt64
            )
        };
        match self {
            PackMap::FltSht => ty.is_float().then_some((T::Short, true)),
            PackMap::FltByt => ty.is_float().then_some((T::Byte, true)),
            PackMap::HghSht => wide(ty).then_some((T::Short, true)),
            PackMap::HghByt => (wide(ty) || ty == T::Short).then_some((T::Byte, true)),
            PackMap::NxtLsr => match ty {
                T::Double | T::Int64 | T::UInt64 => Some((T::Int, true)),
                T::Float | T::Int | T::UInt => Some((T::Short, true)),
                T::Short | T::UShort => Some((T::Byte, true)),
                _ => None,
            },
            PackMap::DblFlt => (ty == T::Double).then_some((T::Float, false)),
            PackMap::FltDbl => (ty == T::Float).then_some((T::Double, false)),
        }
    }
}

/// What ncpdq does to a variable's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// Copied as stored.
    Copy,
    /// Unpacked.
    Unpack,
    /// Packed into this type.
    Pack(NcType),
    /// Converted to this type (no packing: `-M dbl_flt`, `flt_dbl`).
    Convert(NcType),
}

/// The action of `policy` and `map` on variable `v` of `m`: coordinates, NCO's other
/// fixed variables and text are copied.
fn action(policy: Policy, map: PackMap, m: &Meta, v: usize, hdf: bool) -> Action {
    let var = &m.vars[v];
    let packing = packing::packing_of(var, hdf);
    if !arith::is_arith(var.ty) || arith::is_fixed_by_convention(m, v) {
        return Action::Copy;
    }
    let packed = packing.is_some();
    let target = map.target(packing.map_or(var.ty, |p| p.unpacked_type));
    match (policy, packed, target) {
        (Policy::None, _, _) => Action::Copy,
        (Policy::Unpack, true, _) => Action::Unpack,
        (Policy::Unpack, false, _) => Action::Copy,
        (Policy::AllXst, true, _) => Action::Copy,
        (Policy::XstNew, false, _) => Action::Copy,
        (_, _, Some((t, true))) => Action::Pack(t),
        (_, false, Some((t, false))) => Action::Convert(t),
        // A packed variable whose unpacked type the map does not pack, or only converts
        // (`-M dbl_flt`, `flt_dbl`), stays packed as it is (NCO 5.1.4; ours unpacked it
        // under a conversion map).
        (_, true, None | Some((_, false))) => Action::Copy,
        (_, false, None) => Action::Copy,
    }
}

/// Run ncpdq (or ncpack / ncunpack).
///
/// Errors: unknown dimension in `-a`, a dimension listed twice, bad `-P`/`-M`, a
/// permutation that would put the record dimension inside a variable of a format that
/// allows one record dimension, I/O errors.
pub fn run(prog: &str, argv: Vec<OsString>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| &c.std.common)? else {
        return Ok(());
    };
    let policy = if cli.unpack || prog == "ncunpack" {
        Policy::Unpack
    } else if let Some(p) = cli.policy {
        p
    } else if cli.arrange.is_some() {
        Policy::None
    } else {
        Policy::AllNew
    };
    let map = cli.map.unwrap_or(PackMap::FltSht);
    let specs = cli.std.slab.specs(prog)?;
    let (inputs, target) = cli.std.inputs_and_target(prog, &argv, 1)?;
    let ds = Dataset::open(&inputs[0])?;
    let m = ds.meta();
    let order = arrangement(cli.arrange.as_deref(), &ds)?;
    let sel = cli.std.slab.resolve_specs(&ds, specs)?;
    let sel_args = cli.std.select_args();
    let vars = nco_core::select::select_input_order(m, &sel_args)?;
    let arr = Arrangement::new(m, &vars, &order);
    let plan = target.plan_selection(m, &vars, &sel, &arr.record_change(m), &sel_args)?;
    let mut meta = plan.meta;
    arr.permute(m, &mut meta, cli.mrd)?;
    let hdf = cli.hdf_upk;
    let actions: Vec<Action> = vars
        .iter()
        .map(|&v| action(policy, map, m, v, hdf))
        .collect();
    let job = Job {
        ds: &ds,
        sel: &sel,
        vars: &vars,
        hdf,
        params: pack_params(&ds, &sel, &vars, &actions, hdf)?,
        actions,
        arr,
    };
    job.define(&mut meta);
    // Values that do not fit the packed or converted type become its fill value,
    // declared in the header (the output is written again when a variable had none).
    let out = arith::write_declaring_fills(prog, |declare| {
        let mut meta = meta.clone();
        arith::declare_fills(&mut meta, declare);
        let mut out = Output::create(&target, meta.clone())?;
        let unfit = job.write(&mut out)?;
        Ok((out, meta, unfit))
    })?;
    out.commit()
}

/// The `-a` list: (input dimension, reversed) in the order given; a name stands for
/// every dimension of that name, in any group (`/lat` and `/obs/lat`, as NCO 5.1.4
/// treats names), a path for that one.
///
/// Errors: a dimension not in the input, or listed twice.
fn arrangement(arrange: Option<&str>, ds: &Dataset) -> Result<Vec<(usize, bool)>> {
    let mut order: Vec<(usize, bool)> = Vec::new();
    let Some(a) = arrange else {
        return Ok(order);
    };
    for item in nco_core::select::split_list(a) {
        let (name, rev) = match item.strip_prefix('-') {
            Some(n) => (n.to_string(), true),
            None => (item.clone(), false),
        };
        let named = nco_core::groups::dims_named(ds.meta(), &name);
        if named.is_empty() {
            return Err(Error::option(
                "-a",
                format!(
                    "dimension {name} is not in the input file {}",
                    ds.path().display()
                ),
            ));
        }
        for d in named {
            if order.iter().any(|(x, _)| *x == d) {
                return Err(Error::option(
                    "-a",
                    format!("dimension {name} is listed twice"),
                ));
            }
            order.push((d, rev));
        }
    }
    Ok(order)
}

/// What `-a` does to the variables: each one's permutation, the reversed dimensions
/// and the record dimension's move.
struct Arrangement {
    /// Per variable, `perm[k]` = input position of output dimension `k`.
    perms: Vec<Vec<usize>>,
    /// Per input dimension: reversed.
    reversed: Vec<bool>,
    /// The input's record dimension, and the output's (the first listed dimension
    /// when the record dimension is listed but not first).
    old_rec: Option<usize>,
    new_rec: Option<usize>,
}

impl Arrangement {
    /// The arrangement `order` (from [`arrangement`]) of `vars` of `m`: in each
    /// variable, the listed dimensions it has take the places those dimensions
    /// occupy, in the listed order.
    fn new(m: &Meta, vars: &[usize], order: &[(usize, bool)]) -> Arrangement {
        let listed: Vec<usize> = order.iter().map(|x| x.0).collect();
        let perms = vars
            .iter()
            .map(|&v| {
                let dims = &m.vars[v].dims;
                let positions = (0..dims.len()).filter(|&k| listed.contains(&dims[k]));
                let in_order = listed
                    .iter()
                    .filter_map(|d| dims.iter().position(|x| x == d));
                let mut perm: Vec<usize> = (0..dims.len()).collect();
                for (p, src) in positions.zip(in_order) {
                    perm[p] = src;
                }
                perm
            })
            .collect();
        let old_rec = m.record_dim();
        let new_rec = match old_rec {
            Some(r) if listed.contains(&r) && listed[0] != r => Some(listed[0]),
            other => other,
        };
        Arrangement {
            perms,
            reversed: (0..m.dims.len())
                .map(|d| order.iter().any(|&(x, r)| x == d && r))
                .collect(),
            old_rec,
            new_rec,
        }
    }

    /// The record dimension made fixed when another one takes its place.
    fn record_change(&self, m: &Meta) -> RecordChange {
        match (self.old_rec, self.new_rec) {
            (Some(o), Some(n)) if o != n => RecordChange {
                fix: Some(m.dims[o].name.clone()),
                make: None,
            },
            _ => RecordChange::default(),
        }
    }

    /// Permute the dimensions of the planned output `meta` of input `m`, making the
    /// new record dimension unlimited.
    ///
    /// Errors: a variable whose record dimension would not come first, without
    /// `--mrd` (`mrd`).
    fn permute(&self, m: &Meta, meta: &mut Meta, mrd: bool) -> Result<()> {
        if let (Some(o), Some(n)) = (self.old_rec, self.new_rec) {
            if o != n {
                if let Some(od) = meta.dim_id(&m.dims[n].name) {
                    meta.dims[od].unlimited = true;
                }
            }
        }
        for (o, perm) in self.perms.iter().enumerate() {
            let dims = meta.vars[o].dims.clone();
            meta.vars[o].dims = perm.iter().map(|&k| dims[k]).collect();
            // Chunk sizes follow their dimensions.
            if let Some(c) = meta.vars[o].storage.chunks.clone() {
                if c.len() == perm.len() {
                    meta.vars[o].storage.chunks = Some(perm.iter().map(|&k| c[k]).collect());
                }
            }
            let dd = &meta.vars[o].dims;
            if dd.iter().skip(1).any(|&d| meta.dims[d].unlimited) && !mrd {
                return Err(Error::var(
                    &meta.vars[o].name,
                    "the permutation puts the record dimension after another dimension; list it first or use --mrd with netCDF-4 output",
                ));
            }
        }
        Ok(())
    }

    /// True when output variable `o`'s first dimension stays first (`second`: its
    /// second one second).
    fn stays(&self, o: usize, second: bool) -> bool {
        let k = usize::from(second);
        self.perms[o].get(k).is_none_or(|&p| p == k)
    }
}

/// (scale_factor, add_offset, holds non-finite values) of a packed variable.
type Params = Option<(f64, f64, bool)>;

/// Pass 1: the packing parameters of each packed variable, from its range under
/// `sel` (read once, in blocks, the variables in parallel); whether it holds
/// non-finite values (packed as missing: the variable then needs a fill value).
///
/// Errors: read errors.
fn pack_params(
    ds: &Dataset,
    sel: &Selection,
    vars: &[usize],
    actions: &[Action],
    hdf: bool,
) -> Result<Vec<Params>> {
    let m = ds.meta();
    vars.par_iter()
        .enumerate()
        .map(|(o, &v)| -> Result<Params> {
            let Action::Pack(t) = actions[o] else {
                return Ok(None);
            };
            let pv = arith::prepare(m, v, hdf);
            let r = arith::valid_range_of(ds, &pv, &sel.for_var(m, v))?;
            let (lo, hi) = if r.lo > r.hi {
                (0.0, 0.0)
            } else {
                (r.lo, r.hi)
            };
            Ok(packing::pack_params_for(lo, hi, t, pv.out.ty)
                .map(|(sf, ao)| (sf, ao, r.non_finite > 0)))
        })
        .collect()
}

/// One ncpdq output: the input and its selection, each variable's action and
/// packing parameters, and the arrangement.
struct Job<'a> {
    ds: &'a Dataset,
    sel: &'a Selection,
    vars: &'a [usize],
    hdf: bool,
    actions: Vec<Action>,
    params: Vec<Params>,
    arr: Arrangement,
}

impl Job<'_> {
    /// (scale_factor, add_offset, holds non-finite values) of output variable `o`.
    fn chosen(&self, o: usize) -> (f64, f64, bool) {
        self.params[o].unwrap_or((0.0, 0.0, false))
    }

    /// Give the planned variables of `meta` the type and attributes of their action.
    fn define(&self, meta: &mut Meta) {
        let m = self.ds.meta();
        for (o, &v) in self.vars.iter().enumerate() {
            let out = &mut meta.vars[o];
            let pv = || arith::prepare(m, v, self.hdf);
            match self.actions[o] {
                Action::Copy => {}
                Action::Unpack => {
                    let pv = pv();
                    out.ty = pv.out.ty;
                    out.attrs = pv.out.attrs;
                }
                Action::Convert(t) => {
                    out.attrs = pv().out.attrs;
                    out.ty = t;
                    nco_core::fill::convert_fill_attrs(out, t);
                }
                Action::Pack(t) => {
                    let pv = pv();
                    let (sf, ao, non_finite) = self.chosen(o);
                    // Repacking keeps the packing attributes where the input had them.
                    out.attrs = m.vars[v].attrs.clone();
                    let missing = pv.in_fill.is_some() || non_finite;
                    packing::mark_packed(out, t, pv.out.ty, sf, ao, missing);
                }
            }
        }
    }

    /// Pass 2: every variable into `out`, in units computed in parallel windows and
    /// written in order ([`pipeline::for_each_ordered`]). Returns the counts of values
    /// that did not fit their packed or converted type.
    fn write(&self, out: &mut Output) -> Result<arith::Unfit> {
        let units = self.units();
        let m = self.ds.meta();
        let mut unfit = arith::Unfit::default();
        pipeline::for_each_ordered(
            units.len(),
            |u| self.unit_values(units[u].0, units[u].1.as_ref()),
            |u, (vals, n)| {
                let (o, block) = &units[u];
                let v = self.vars[*o];
                unfit.add_filled(&m.vars[v].name, n);
                match block {
                    // Unchanged: copy straight from the input.
                    None => out.copy_unchanged(self.ds, v, self.sel, *o),
                    Some(b) => {
                        let first = b.first(&self.sel.for_var(self.ds.meta(), v));
                        out.write_at(*o, &first, &vals)
                    }
                }
            },
        )?;
        Ok(unfit)
    }

    /// The units of work: per variable, its blocks (`None`: copied unchanged as a
    /// whole). A variable whose first dimension stays first (kept in order, reversed,
    /// or with its other dimensions re-ordered) is cut into blocks of rows, or pieces
    /// of a row when the second dimension stays too (bounded memory, no page-fault
    /// storm); one whose first dimension moves is one unit (it needs all of it).
    fn units(&self) -> Vec<(usize, Option<pipeline::Block>)> {
        let m = self.ds.meta();
        let arr = &self.arr;
        let mut units = Vec::new();
        for (o, &v) in self.vars.iter().enumerate() {
            let identity = arr.perms[o].iter().enumerate().all(|(k, &p)| k == p)
                && !m.vars[v].dims.iter().any(|&d| arr.reversed[d]);
            if self.actions[o] == Action::Copy && identity {
                units.push((o, None));
                continue;
            }
            let idx = self.sel.for_var(m, v);
            let es = m.vars[v].ty.size();
            let blocks = if arr.stays(o, false) && arr.stays(o, true) {
                pipeline::blocks(&idx, es, 256 << 10)
            } else {
                let max_bytes = if arr.stays(o, false) {
                    256 << 10
                } else {
                    usize::MAX
                };
                let cols = idx.get(1).map_or(1, Vec::len);
                pipeline::row_blocks(&idx, es, max_bytes)
                    .into_iter()
                    .map(|(pos, len)| pipeline::Block {
                        rows: pos..pos + len,
                        cols: 0..cols,
                    })
                    .collect()
            };
            units.extend(blocks.into_iter().map(|b| (o, Some(b))));
        }
        units
    }

    /// The output values of block `block` of output variable `o` (nothing for a
    /// variable copied whole): read in output order, permuted, then unpacked, packed
    /// or converted; with the number of values that did not fit the packed or
    /// converted type (written as its fill value, [`nco_core::kernels::cast`]).
    fn unit_values(&self, o: usize, block: Option<&pipeline::Block>) -> Result<(Values, usize)> {
        let m = self.ds.meta();
        let v = self.vars[o];
        let Some(b) = block else {
            return Ok((Values::with_capacity(m.vars[v].ty, 0), 0));
        };
        let mut idx = self.sel.for_var(m, v);
        let mut rev: Vec<bool> = m.vars[v]
            .dims
            .iter()
            .map(|&d| self.arr.reversed[d])
            .collect();
        if !idx.is_empty() {
            // The block's rows (and columns, for a piece of a row) are read in output
            // order, so those dimensions need no reversal afterwards.
            let flip = self.arr.stays(o, false) && rev[0];
            idx[0] = part(&idx[0], &b.rows, flip);
            rev[0] &= !flip;
            if idx.len() > 1 && b.cols.len() < idx[1].len() {
                idx[1] = part(&idx[1], &b.cols, rev[1]);
                rev[1] = false;
            }
        }
        let shape: Vec<usize> = idx.iter().map(Vec::len).collect();
        let x = permute(self.ds.read(v, &idx)?, &shape, &self.arr.perms[o], &rev);
        let action = self.actions[o];
        if action == Action::Copy {
            return Ok((x, 0));
        }
        let pv = arith::prepare(m, v, self.hdf);
        let (sf, ao, _) = self.chosen(o);
        match (action, &pv.pack) {
            (Action::Pack(t), None) => {
                // Unpacked floating-point data packs straight from its stored values.
                if let Some(p) = packing::pack_float(&x, pv.in_fill, t, sf, ao) {
                    return Ok(p);
                }
            }
            (Action::Unpack, Some(p)) => {
                if let Some(u) = packing::unpack_single(&x, pv.in_fill, p, pv.out_fill) {
                    return Ok((u, 0));
                }
            }
            _ => {}
        }
        let f = pv.unpacked(&x);
        let miss = pv.in_fill.map(|_| pv.out_fill);
        let res = || -> Vec<Option<f64>> {
            f.iter()
                .map(|&y| if Some(y) == miss { None } else { Some(y) })
                .collect()
        };
        Ok(match action {
            Action::Pack(t) => packing::pack_with(&f, miss, t, sf, ao, pv.out.ty).unwrap_or((x, 0)),
            Action::Convert(t) => nco_core::kernels::to_values(&res(), t, pv.out_fill),
            _ => nco_core::kernels::to_values(&res(), pv.out.ty, pv.out_fill),
        })
    }
}

/// Positions `at` of `list` (a block's rows or columns), or, when the dimension is
/// `reversed`, the mirrored positions read backwards (output position k of a reversed
/// dimension is input position n-1-k).
fn part(list: &[usize], at: &std::ops::Range<usize>, reversed: bool) -> Vec<usize> {
    let n = list.len();
    if reversed {
        at.clone().map(|k| list[n - 1 - k]).collect()
    } else {
        list[at.clone()].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_and_reverse() {
        let x = Values::Int((0..6).collect());
        // [2,3] transposed
        assert_eq!(
            permute(x.clone(), &[2, 3], &[1, 0], &[false, false]),
            Values::Int(vec![0, 3, 1, 4, 2, 5])
        );
        // reverse the first dimension
        assert_eq!(
            permute(x, &[2, 3], &[0, 1], &[true, false]),
            Values::Int(vec![3, 4, 5, 0, 1, 2])
        );
        assert!(Policy::parse("bogus").is_err());
        assert_eq!(
            PackMap::FltSht.target(NcType::Float),
            Some((NcType::Short, true))
        );
        assert_eq!(PackMap::FltSht.target(NcType::Int), None);
    }
}
