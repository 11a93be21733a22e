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

use nco_core::arith;
use nco_core::cli::{self, OperatorArgs};
use nco_core::dataset::{Block, Dataset, OutFile};
use nco_core::extract::{self, RecordChange, StorageArgs};
use nco_core::hyperslab;
use nco_core::kernels::permute::permute;
use nco_core::kernels::ValidRange;
use nco_core::model::Attr;
use nco_core::output::{self, TempOutput};
use nco_core::packing;
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
        value_name = "POLICY"
    )]
    pub policy: Option<String>,
    /// Packing map: flt_sht, flt_byt, hgh_sht, hgh_byt, nxt_lsr, dbl_flt, flt_dbl
    #[arg(
        short = 'M',
        long = "pck_map",
        visible_alias = "map",
        value_name = "MAP"
    )]
    pub map: Option<String>,
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
    fn parse(s: &str) -> Result<Policy> {
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
    fn parse(s: &str) -> Result<PackMap> {
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

/// Run ncpdq (or ncpack / ncunpack).
///
/// Errors: unknown dimension in `-a`, a dimension listed twice, bad `-P`/`-M`, a
/// permutation that would put the record dimension inside a variable of a format that
/// allows one record dimension, I/O errors.
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.std.common, &c.std.format))?
    else {
        return Ok(());
    };
    let policy = if cli.unpack || prog == "ncunpack" {
        Policy::Unpack
    } else if let Some(p) = &cli.policy {
        Policy::parse(p)?
    } else if cli.arrange.is_some() {
        Policy::None
    } else {
        Policy::AllNew
    };
    let map = cli
        .map
        .as_deref()
        .map_or(Ok(PackMap::FltSht), PackMap::parse)?;
    let specs = cli.std.slab.specs()?;
    let (inputs, target) = cli.std.inputs_and_target(prog, &argv, 1)?;
    let out_path = target.path.to_string_lossy().into_owned();
    let ds = Dataset::open(&inputs[0])?;
    let m = ds.meta();
    // -a list.
    let mut order: Vec<(usize, bool)> = Vec::new();
    if let Some(a) = &cli.arrange {
        for item in nco_core::select::split_list(a) {
            let (name, rev) = match item.strip_prefix('-') {
                Some(n) => (n.to_string(), true),
                None => (item.clone(), false),
            };
            let d = m.dim_id(&name).ok_or_else(|| {
                Error::option(
                    "-a",
                    format!("dimension {name} is not in the input file {}", ds.path()),
                )
            })?;
            if order.iter().any(|(x, _)| *x == d) {
                return Err(Error::option(
                    "-a",
                    format!("dimension {name} is listed twice"),
                ));
            }
            order.push((d, rev));
        }
    }
    let reversed: Vec<bool> = (0..m.dims.len())
        .map(|d| order.iter().any(|&(x, r)| x == d && r))
        .collect();
    let sel = hyperslab::resolve(
        m,
        &specs,
        cli.std.slab.fortran,
        cli.std.slab.user_order,
        &|v| ds.read_all(v),
    )?;
    let vars = nco_core::select::select_input_order(m, &cli.std.select.select_args())?;
    // New record dimension.
    let old_rec = m.record_dim();
    let listed: Vec<usize> = order.iter().map(|x| x.0).collect();
    let new_rec = match old_rec {
        Some(r) if listed.contains(&r) && listed[0] != r => Some(listed[0]),
        other => other,
    };
    let rec_change = match (old_rec, new_rec) {
        (Some(o), Some(n)) if o != n => RecordChange {
            fix: Some(m.dims[o].name.clone()),
            make: None,
        },
        _ => RecordChange::default(),
    };
    let storage = StorageArgs {
        deflate: cli.std.format.deflate,
        chunk: cli.std.format.chunk.clone(),
    };
    let format = cli.std.format.format()?.unwrap_or(m.format);
    extract::warn_storage_on_classic(prog, format, &storage);
    let plan = extract::plan(m, &vars, &sel, format, &rec_change, &storage)?;
    let mut meta = plan.meta.clone();
    if let (Some(o), Some(n)) = (old_rec, new_rec) {
        if o != n {
            if let Some(od) = meta.dim_id(&m.dims[n].name) {
                meta.dims[od].unlimited = true;
            }
        }
    }
    // Permutation of each variable: perm[k] = input position of output dimension k.
    let perms: Vec<Vec<usize>> = vars
        .iter()
        .map(|&v| {
            let dims = &m.vars[v].dims;
            let positions: Vec<usize> = (0..dims.len())
                .filter(|&k| listed.contains(&dims[k]))
                .collect();
            let in_order: Vec<usize> = listed
                .iter()
                .filter_map(|d| dims.iter().position(|x| x == d))
                .collect();
            let mut perm: Vec<usize> = (0..dims.len()).collect();
            for (p, src) in positions.iter().zip(in_order) {
                perm[*p] = src;
            }
            perm
        })
        .collect();
    for (o, perm) in perms.iter().enumerate() {
        let dims = meta.vars[o].dims.clone();
        meta.vars[o].dims = perm.iter().map(|&k| dims[k]).collect();
        let dd = &meta.vars[o].dims;
        if dd.iter().skip(1).any(|&d| meta.dims[d].unlimited) && !cli.mrd {
            return Err(Error::var(
                &meta.vars[o].name,
                "the permutation puts the record dimension after another dimension; list it first or use --mrd with netCDF-4 output",
            ));
        }
    }
    // Packing decisions.
    #[derive(Clone, Copy)]
    enum Action {
        Copy,
        Unpack,
        Pack(NcType),
        Convert(NcType),
    }
    let actions: Vec<Action> = vars
        .iter()
        .map(|&v| {
            let var = &m.vars[v];
            let packed = packing::packing_of(var, cli.hdf_upk).is_some();
            if !arith::is_arith(var.ty) || arith::is_fixed_by_convention(m, v) {
                return Action::Copy;
            }
            let unpacked_ty =
                packing::packing_of(var, cli.hdf_upk).map_or(var.ty, |p| p.unpacked_type);
            let target = map.target(unpacked_ty);
            match (policy, packed, target) {
                (Policy::None, _, _) => Action::Copy,
                (Policy::Unpack, true, _) => Action::Unpack,
                (Policy::Unpack, false, _) => Action::Copy,
                (Policy::AllXst, true, _) => Action::Copy,
                (Policy::XstNew, false, _) => Action::Copy,
                (_, _, Some((t, true))) => Action::Pack(t),
                (_, false, Some((t, false))) => Action::Convert(t),
                // A packed variable whose unpacked type the map does not pack stays
                // packed as it is (NCO 5.1.4).
                (_, true, None) => Action::Copy,
                (_, true, _) => Action::Unpack,
                (_, false, None) => Action::Copy,
            }
        })
        .collect();
    let hdf = cli.hdf_upk;
    // Pass 1: the packing parameters need each packed variable's range before the
    // output can be defined; read those variables once, in blocks, in parallel.
    // Each packed variable's parameters, and whether it holds non-finite values
    // (packed as missing: the variable then needs a fill value).
    type Params = Option<(f64, f64, bool)>;
    let params: Vec<Result<Params>> = vars
        .par_iter()
        .enumerate()
        .map(|(o, &v)| -> Result<Params> {
            let Action::Pack(t) = actions[o] else {
                return Ok(None);
            };
            let pv = arith::prepare(m, v, hdf);
            let mut r = ValidRange::EMPTY;
            let ty = m.vars[v].ty;
            ds.read_blocks_raw(v, &sel.for_var(m, v), 1 << 20, |_, x| {
                r = r.merge(match x {
                    Block::Be(raw) => {
                        nco_core::kernels::valid_range_be(ty, raw, pv.in_fill, pv.pack.as_ref())
                    }
                    Block::Values(x) => {
                        nco_core::kernels::valid_range(&x, pv.in_fill, pv.pack.as_ref())
                    }
                });
                Ok(())
            })?;
            let (lo, hi) = if r.lo > r.hi {
                (0.0, 0.0)
            } else {
                (r.lo, r.hi)
            };
            Ok(packing::pack_params_for(lo, hi, t, pv.out.ty)
                .map(|(sf, ao)| (sf, ao, r.non_finite > 0)))
        })
        .collect();
    let params: Vec<Params> = params.into_iter().collect::<Result<_>>()?;
    // (scale_factor, add_offset, holds non-finite values) of variable o.
    let chosen = |o: usize| params[o].unwrap_or((0.0, 0.0, false));
    for (o, &v) in vars.iter().enumerate() {
        let out = &mut meta.vars[o];
        match actions[o] {
            Action::Copy => {}
            Action::Unpack => {
                let pv = arith::prepare(m, v, hdf);
                out.ty = pv.out.ty;
                out.attrs = pv.out.attrs.clone();
            }
            Action::Convert(t) => {
                let pv = arith::prepare(m, v, hdf);
                out.attrs = pv.out.attrs.clone();
                out.ty = t;
                nco_core::fill::convert_fill_attrs(out, t);
            }
            Action::Pack(t) => {
                let pv = arith::prepare(m, v, hdf);
                let (sf, ao, _) = chosen(o);
                // Repacking keeps the packing attributes where the input had them.
                out.attrs = m.vars[v].attrs.clone();
                let ut = pv.out.ty;
                nco_core::fill::convert_fill_attrs(out, ut);
                // Missing and non-finite values are packed as the packed type's fill.
                if pv.in_fill.is_some() || chosen(o).2 {
                    out.remove_attr("missing_value");
                    nco_core::fill::set_fill_attr(out, t, nco_core::fill::default_fill(t));
                }
                let write_sf = sf != 0.0 && sf != 1.0;
                let write_ao = ao != 0.0 || !write_sf;
                if !write_sf {
                    out.remove_attr("scale_factor");
                }
                if !write_ao {
                    out.remove_attr("add_offset");
                }
                if write_ao {
                    out.set_attr(Attr {
                        name: "add_offset".into(),
                        value: Values::from_f64_slice(ut, &[ao])
                            .unwrap_or(Values::Double(vec![ao])),
                    });
                }
                if write_sf {
                    out.set_attr(Attr {
                        name: "scale_factor".into(),
                        value: Values::from_f64_slice(ut, &[sf])
                            .unwrap_or(Values::Double(vec![sf])),
                    });
                }
                out.ty = t;
            }
        }
    }
    if !cli.std.common.no_history {
        output::stamp_history(&mut meta, &output::command_line(&argv));
    }
    arith::stamp_threads(&mut meta, cli.std.common.threads);
    let tmp = TempOutput::new(&out_path, prog)?;
    let mut of = OutFile::create(tmp.path(), &meta, cli.std.format.hdr_pad.unwrap_or(0))?;
    // Pass 2: units of work, computed in parallel windows and written in order. A
    // variable whose first dimension stays first (kept in order, reversed, or with its
    // other dimensions re-ordered) is cut into 4 MiB blocks of rows (bounded memory, no
    // page-fault storm); one whose first dimension moves is one unit (it needs all
    // of it).
    let identity = |o: usize| {
        let v = vars[o];
        perms[o].iter().enumerate().all(|(k, &p)| k == p)
            && !m.vars[v].dims.iter().any(|&d| reversed[d])
    };
    let first_stays = |o: usize| perms[o].first().is_none_or(|&p| p == 0);
    let second_stays = |o: usize| perms[o].get(1).is_none_or(|&p| p == 1);
    // Per unit: the variable, and its block (None: copied unchanged as a whole).
    let mut units: Vec<(usize, Option<nco_core::pipeline::Block>)> = Vec::new();
    for (o, &v) in vars.iter().enumerate() {
        if matches!(actions[o], Action::Copy) && identity(o) {
            units.push((o, None));
            continue;
        }
        let idx = sel.for_var(m, v);
        let es = m.vars[v].ty.size();
        let blocks = if first_stays(o) && second_stays(o) {
            // Rows, or pieces of a row when a row is large.
            nco_core::pipeline::blocks(&idx, es, 256 << 10)
        } else {
            let max_bytes = if first_stays(o) {
                256 << 10
            } else {
                usize::MAX
            };
            let cols = idx.get(1).map_or(1, Vec::len);
            nco_core::pipeline::row_blocks(&idx, es, max_bytes)
                .into_iter()
                .map(|(pos, len)| nco_core::pipeline::Block {
                    rows: pos..pos + len,
                    cols: 0..cols,
                })
                .collect()
        };
        units.extend(blocks.into_iter().map(|b| (o, Some(b))));
    }
    // Positions `at` of `list` (a block's rows or columns), or, when the dimension is
    // reversed, the mirrored positions read backwards (output position k of a
    // reversed dimension is input position n-1-k).
    let part = |list: &[usize], at: &std::ops::Range<usize>, reversed: bool| -> Vec<usize> {
        let n = list.len();
        if reversed {
            at.clone().map(|k| list[n - 1 - k]).collect()
        } else {
            list[at.clone()].to_vec()
        }
    };
    let compute = |u: usize| -> Result<Values> {
        let (o, block) = &units[u];
        let (o, v) = (*o, vars[*o]);
        let Some(b) = block else {
            return Ok(Values::with_capacity(m.vars[v].ty, 0));
        };
        let mut idx = sel.for_var(m, v);
        let mut rev: Vec<bool> = m.vars[v].dims.iter().map(|&d| reversed[d]).collect();
        if !idx.is_empty() {
            // The block's rows (and columns, for a piece of a row) are read in output
            // order, so those dimensions need no reversal afterwards.
            let flip = first_stays(o) && rev[0];
            idx[0] = part(&idx[0], &b.rows, flip);
            rev[0] &= !flip;
            if idx.len() > 1 && b.cols.len() < idx[1].len() {
                idx[1] = part(&idx[1], &b.cols, rev[1]);
                rev[1] = false;
            }
        }
        let shape: Vec<usize> = idx.iter().map(Vec::len).collect();
        let x = permute(ds.read(v, &idx)?, &shape, &perms[o], &rev);
        Ok(match actions[o] {
            Action::Copy => x,
            Action::Unpack | Action::Pack(_) | Action::Convert(_) => {
                let pv = arith::prepare(m, v, hdf);
                if let (Action::Pack(t), None) = (actions[o], &pv.pack) {
                    // Unpacked floating-point data packs straight from its stored values.
                    let (sf, ao, _) = chosen(o);
                    if let Some(p) = packing::pack_float(&x, pv.in_fill, t, sf, ao) {
                        return Ok(p);
                    }
                }
                if let (Action::Unpack, Some(p)) = (actions[o], &pv.pack) {
                    if let Some(u) = packing::unpack_single(&x, pv.in_fill, p, pv.out_fill) {
                        return Ok(u);
                    }
                }
                let f = pv.unpacked(&x);
                let miss = pv.in_fill.map(|_| pv.out_fill);
                let res = || -> Vec<Option<f64>> {
                    f.iter()
                        .map(|&y| if Some(y) == miss { None } else { Some(y) })
                        .collect()
                };
                match actions[o] {
                    Action::Pack(t) => {
                        let (sf, ao, _) = chosen(o);
                        packing::pack_with(&f, miss, t, sf, ao, pv.out.ty).unwrap_or(x)
                    }
                    Action::Convert(t) => nco_core::kernels::to_values(&res(), t, pv.out_fill).0,
                    _ => nco_core::kernels::to_values(&res(), pv.out.ty, pv.out_fill).0,
                }
            }
        })
    };
    nco_core::pipeline::for_each_ordered(units.len(), compute, |u, vals| {
        let (o, block) = &units[u];
        match block {
            // Unchanged: copy straight from the input.
            None => extract::copy_unchanged(&ds, vars[*o], &sel, &mut of, *o),
            Some(b) => of.write_at(*o, &b.first(&sel.for_var(m, vars[*o])), &vals),
        }
    })?;
    of.finish()?;
    tmp.commit()
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
