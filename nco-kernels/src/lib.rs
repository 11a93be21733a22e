//! # nco-kernels
//!
//! Generic kernels over the numeric types, on slices and [`Values`] buffers: they
//! never open, read or write a file (the layers above do, and hand them the data).
//! Uses only `nco-base`.
//!
//! | module | concern |
//! |---|---|
//! | this crate's root | the glue that dispatches a runtime-typed [`Values`] buffer (or raw big-endian bytes) to the kernels and builds typed results; valid ranges |
//! | [`reduce`] | reductions (avg, ttl, min, max, rms...) shared by ncwa, ncra and nces |
//! | [`binary`] | element-wise binary operations (ncbo) |
//! | [`cast`] | the overflow-safe cast of computed values into an output type (values that do not fit become the fill value, counted) |
//! | [`permute`] | dimension re-ordering and reversal (ncpdq) |
//! | [`quantize`] | NCO's precision-preserving compression (`--ppc`, `--baa`) of values about to be stored |
//! | [`packing`] | the `scale_factor`/`add_offset` arithmetic: unpacking, NCO's packing parameters and packing loops |
//! | [`pipeline`] | ordered parallel processing with bounded memory |
#![deny(missing_docs)]

pub mod binary;
pub mod cast;
pub mod packing;
pub mod permute;
pub mod pipeline;
pub mod quantize;
pub mod reduce;

// The base modules under their usual names, for the paths `crate::types::...` below.
use nco_base::{dispatch, dispatch_type, error, types};

use crate::packing::Packing;
use crate::types::{NcNum, NcType, Values};
use nco_base::cpu::with_avx2;
use reduce::{Accum, Broadcast};

/// Replace every element of `x` equal to `old` by `new` (both one element of `x`'s
/// type), as ncatted rewrites the data when a `_FillValue` changes (NCO 5.1.4,
/// `nco_aed_prc`): integer and text elements compare exactly; floating ones as numbers
/// when `old` is finite (so `-0.0` matches `0.0`), and every non-finite element (NaN,
/// infinities) matches an `old` that is not finite. Strings are left alone. Returns the
/// number of elements replaced.
pub fn replace_value(x: &mut Values, old: &Values, new: &Values) -> usize {
    fn rep<T: NcNum>(x: &mut [T], old: T, new: T) -> usize {
        let mut n = 0;
        if T::TYPE.is_float() && !old.to_f64().is_finite() {
            for v in x.iter_mut().filter(|v| !v.to_f64().is_finite()) {
                *v = new;
                n += 1;
            }
        } else {
            for v in x.iter_mut().filter(|v| **v == old) {
                *v = new;
                n += 1;
            }
        }
        n
    }
    fn first<T: NcNum>(v: &Values) -> Option<T> {
        T::slice_of(v).and_then(|s| s.first().copied())
    }
    match x {
        Values::Char(c) => match (old, new) {
            (Values::Char(o), Values::Char(w)) if !o.is_empty() && !w.is_empty() => {
                let (o, w) = (o[0], w[0]);
                let mut n = 0;
                for b in c.iter_mut().filter(|b| **b == o) {
                    *b = w;
                    n += 1;
                }
                n
            }
            _ => 0,
        },
        Values::Str(_) => 0,
        _ => dispatch!(x, v => match (first(old), first(new)) {
            (Some(o), Some(w)) => rep(v, o, w),
            _ => 0,
        }; char _c => 0; string _s => 0),
    }
}

fn typed_fill<T: NcNum>(fill: Option<f64>) -> Option<T> {
    fill.map(T::from_f64)
}

/// [`Accum::add_elementwise`] on a runtime-typed buffer; `fill` in the buffer's type
/// (as f64). Text buffers are ignored.
pub fn add_elementwise(
    acc: &mut Accum,
    x: &Values,
    fill: Option<f64>,
    pack: Option<&Packing>,
    w: f64,
) {
    crate::dispatch!(x, v => acc.add_elementwise(v, typed_fill(fill), pack, w); char _c => {}; string _s => {})
}

/// [`Accum::add_elementwise_be`] for raw big-endian bytes of type `ty`.
pub fn add_elementwise_be(
    acc: &mut Accum,
    ty: NcType,
    raw: &[u8],
    fill: Option<f64>,
    pack: Option<&Packing>,
    w: f64,
) {
    crate::dispatch_type!(ty, T => acc.add_elementwise_be::<T>(raw, typed_fill(fill), pack, w);
        char => {}; string => {})
}

/// [`Accum::add_member_blocks_ne`] for native-order bytes of type `ty` (text types
/// add nothing, as [`add_elementwise`]).
///
/// Errors: those of `blocks`.
pub fn add_member_blocks_ne<E>(
    acc: &mut Accum,
    ty: NcType,
    fill: Option<f64>,
    pack: Option<&Packing>,
    w: f64,
    blocks: impl FnOnce(&mut dyn FnMut(usize, &[u8])) -> Result<(), E>,
) -> Result<(), E> {
    crate::dispatch_type!(ty, T => acc.add_member_blocks_ne::<T, E>(typed_fill(fill), pack, w, blocks);
        char => Ok(()); string => Ok(()))
}

/// [`Accum::add_reduce`] on a runtime-typed buffer.
pub fn add_reduce(
    acc: &mut Accum,
    x: &Values,
    shape: &[usize],
    out_stride: &[usize],
    out_base: usize,
    fill: Option<f64>,
    pack: Option<&Packing>,
    weight: Option<Broadcast<'_>>,
    mask: Option<Broadcast<'_>>,
) {
    crate::dispatch!(x, v => acc.add_reduce(v, shape, out_stride, out_base, typed_fill(fill), pack, weight, mask);
        char _c => {}; string _s => {})
}

/// Typed output of type `ty` from results (`None` becomes `fill`) by the overflow-safe
/// cast in its [`cast::Overflow::Fill`] form (integers rounded, ties to even; a result
/// that does not fit the type becomes `fill`). Returns the values and how many results
/// did not fit.
pub fn to_values(results: &[Option<f64>], ty: NcType, fill: f64) -> (Values, usize) {
    let (v, c) = cast::cast_results(results, ty, fill, cast::Overflow::Fill);
    (v, c.filled)
}

/// [`to_values`] under `mode` ([`cast::cast_results`]), with both counts.
pub fn to_values_with(
    results: &[Option<f64>],
    ty: NcType,
    fill: f64,
    mode: cast::Overflow,
) -> (Values, cast::Casts) {
    cast::cast_results(results, ty, fill, mode)
}

/// Typed output of type `ty` from results in which missing elements already hold the
/// fill value `fill`, under `mode` ([`cast::cast_values_with`]), with the counts of
/// values that did not fit.
pub fn to_values_plain(
    results: &[f64],
    ty: NcType,
    fill: f64,
    mode: cast::Overflow,
) -> (Values, cast::Casts) {
    cast::cast_values_with(results, ty, fill, mode)
}

/// What [`valid_range`] finds in a buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidRange {
    /// Smallest valid (not the fill value, finite) element after unpacking; +inf
    /// when there is none.
    pub lo: f64,
    /// Largest valid element; -inf when there is none.
    pub hi: f64,
    /// Elements that are not the fill value and not finite (NaN, +-Inf): packing
    /// writes them as missing, so the packed variable needs a fill value.
    pub non_finite: u64,
}

impl ValidRange {
    /// Nothing seen yet.
    pub const EMPTY: ValidRange = ValidRange {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
        non_finite: 0,
    };

    /// The range of two buffers together.
    pub fn merge(self, o: ValidRange) -> ValidRange {
        ValidRange {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
            non_finite: self.non_finite + o.non_finite,
        }
    }
}

/// Minimum and maximum of the valid (not `fill`, finite) elements after unpacking
/// (+inf, -inf when there are none), and the count of non-finite ones.
pub fn valid_range(x: &Values, fill: Option<f64>, pack: Option<&Packing>) -> ValidRange {
    crate::dispatch!(x, v => with_avx2(#[inline(always)] || range(v, typed_fill(fill), pack));
        char _c => ValidRange::EMPTY;
        string _s => ValidRange::EMPTY)
}

/// [`valid_range`] of raw big-endian bytes of type `ty` (a classic file's layout),
/// decoded in small pieces that stay in the first-level cache instead of into a copy
/// of the whole block.
pub fn valid_range_be(
    ty: NcType,
    raw: &[u8],
    fill: Option<f64>,
    pack: Option<&Packing>,
) -> ValidRange {
    #[inline(always)]
    fn pieces<T: NcNum>(raw: &[u8], fill: Option<T>, pack: Option<&Packing>) -> ValidRange {
        const PIECE: usize = 2048;
        let mut buf = [T::default(); PIECE];
        let mut r = ValidRange::EMPTY;
        for c in raw.chunks(PIECE * T::SIZE) {
            let n = c.len() / T::SIZE;
            for (o, b) in buf[..n].iter_mut().zip(c.chunks_exact(T::SIZE)) {
                *o = T::from_be(b);
            }
            r = r.merge(range(&buf[..n], fill, pack));
        }
        r
    }
    if !ty.is_numeric() {
        return ValidRange::EMPTY;
    }
    crate::dispatch_type!(ty, T => with_avx2(#[inline(always)] || pieces::<T>(raw, typed_fill(fill), pack));
        char => unreachable!("numeric type");
        string => unreachable!("numeric type"))
}

#[inline(always)]
fn range<T: NcNum>(x: &[T], fill: Option<T>, pack: Option<&Packing>) -> ValidRange {
    let (has_fill, f) = (fill.is_some(), fill.unwrap_or(T::DEFAULT_FILL));
    let is_fill = |e: T| has_fill & (e == f);
    match pack {
        // Unpacked data compare in their own type: eight single-precision lanes per
        // AVX2 register instead of four doubles.
        None => lanes::<T, T, 16>(x, is_fill, |e| e, NcNum::to_f64),
        Some(p) => lanes::<T, f64, 8>(x, is_fill, |e| p.unpack(e.to_f64()), |v| v),
    }
}

/// [`ValidRange`] of `x` with `L` independent lanes updated by selects, not branches:
/// the min/max chains do not wait on each other and the compiler vectorises the loop.
/// Elements are compared as `value(e)` (of type `V`); the lanes start at the first
/// valid element.
#[inline(always)]
fn lanes<T: NcNum, V: Copy + PartialOrd, const L: usize>(
    x: &[T],
    is_fill: impl Fn(T) -> bool,
    value: impl Fn(T) -> V,
    to_f64: impl Fn(V) -> f64,
) -> ValidRange {
    let finite = |v: V| to_f64(v).is_finite();
    let bad = |e: T| u64::from(!is_fill(e) & !finite(value(e)));
    let Some(first) = x.iter().position(|&e| !is_fill(e) & finite(value(e))) else {
        return ValidRange {
            non_finite: x.iter().map(|&e| bad(e)).sum(),
            ..ValidRange::EMPTY
        };
    };
    let mut non_finite: u64 = x[..first].iter().map(|&e| bad(e)).sum();
    let x = &x[first..];
    let start = value(x[0]);
    let (mut lo, mut hi) = ([start; L], [start; L]);
    let mut one = |k: usize, e: T| {
        let v = value(e);
        let skip = is_fill(e);
        let ok = !skip & finite(v);
        non_finite += u64::from(!skip & !ok);
        lo[k] = if ok & (v < lo[k]) { v } else { lo[k] };
        hi[k] = if ok & (v > hi[k]) { v } else { hi[k] };
    };
    let chunks = x.chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        let c: &[T; L] = c.try_into().expect("chunks_exact yields L elements");
        for (k, &e) in c.iter().enumerate() {
            one(k, e);
        }
    }
    for (k, &e) in rest.iter().enumerate() {
        one(k, e);
    }
    ValidRange {
        lo: lo.iter().map(|&v| to_f64(v)).fold(f64::INFINITY, f64::min),
        hi: hi
            .iter()
            .map(|&v| to_f64(v))
            .fold(f64::NEG_INFINITY, f64::max),
        non_finite,
    }
}

/// Unpack a buffer to f64, keeping missing elements (equal to `fill`) as `out_fill`.
pub fn to_f64_unpacked(
    x: &Values,
    fill: Option<f64>,
    pack: Option<&Packing>,
    out_fill: f64,
) -> Vec<f64> {
    fn conv<T: NcNum>(x: &[T], fill: Option<T>, pack: Option<&Packing>, out_fill: f64) -> Vec<f64> {
        x.iter()
            .map(|&e| {
                if fill == Some(e) {
                    out_fill
                } else {
                    let v = e.to_f64();
                    pack.map_or(v, |p| p.unpack(v))
                }
            })
            .collect()
    }
    crate::dispatch!(x, v => conv(v, typed_fill(fill), pack, out_fill);
        char c => c.iter().map(|&b| f64::from(b)).collect();
        string s => vec![0.0; s.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_range_skips_fill_nan_and_infinities_in_every_type() {
        let ident = Packing {
            scale_factor: 1.0,
            add_offset: 0.0,
            unpacked_type: NcType::Double,
            hdf: false,
        };
        // 40 elements: the extremes sit at various lanes, invalid values around them.
        let mut x: Vec<f64> = (0..40).map(|i| f64::from((i * 17) % 23) - 7.0).collect();
        x[3] = -99.0; // fill, would be the minimum
        x[38] = 1e9; // valid maximum, in the remainder
        let mut xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        xf[0] = f32::NAN;
        xf[5] = f32::INFINITY;
        xf[6] = f32::NEG_INFINITY;
        for v in [
            Values::Float(xf),
            Values::Double(x.clone()),
            Values::Int(x.iter().map(|&v| v as i32).collect()),
            Values::Short(
                x.iter()
                    .map(|&v| v.clamp(-30000.0, 30000.0) as i16)
                    .collect(),
            ),
        ] {
            let native = valid_range(&v, Some(-99.0), None);
            let via_f64 = valid_range(&v, Some(-99.0), Some(&ident));
            assert_eq!(native, via_f64, "{:?}", v.nc_type());
            assert_eq!(native.lo, -7.0, "{:?}", v.nc_type());
            let floats = matches!(v, Values::Float(_));
            assert_eq!(
                native.non_finite,
                if floats { 3 } else { 0 },
                "{:?}",
                v.nc_type()
            );
        }
        let none = valid_range(&Values::Float(vec![f32::NAN, -99.0]), Some(-99.0), None);
        assert_eq!(
            (none.lo, none.hi, none.non_finite),
            (f64::INFINITY, f64::NEG_INFINITY, 1),
            "no valid element, one NaN"
        );
        assert_eq!(
            valid_range(&Values::Float(vec![]), None, None),
            ValidRange::EMPTY
        );
    }

    #[test]
    fn replace_value_follows_ncos_fill_rules() {
        let mut x = Values::Float(vec![1.0, -999.0, f32::NAN, 0.0, -0.0]);
        assert_eq!(
            replace_value(
                &mut x,
                &Values::Float(vec![-999.0]),
                &Values::Float(vec![5.0])
            ),
            1
        );
        assert_eq!(
            replace_value(&mut x, &Values::Float(vec![0.0]), &Values::Float(vec![7.0])),
            2
        );
        let mut y = Values::Double(vec![1.0, f64::NAN, f64::INFINITY, 2.0]);
        let n = replace_value(
            &mut y,
            &Values::Double(vec![f64::NAN]),
            &Values::Double(vec![-1.0]),
        );
        assert_eq!((n, y), (2, Values::Double(vec![1.0, -1.0, -1.0, 2.0])));
        let mut z = Values::Int(vec![-99, 3, -99]);
        replace_value(&mut z, &Values::Int(vec![-99]), &Values::Int(vec![-5]));
        assert_eq!(z, Values::Int(vec![-5, 3, -5]));
        let mut c = Values::Char(b"a_b_".to_vec());
        replace_value(
            &mut c,
            &Values::Char(b"_".to_vec()),
            &Values::Char(b"x".to_vec()),
        );
        assert_eq!(c, Values::Char(b"axbx".to_vec()));
        match x {
            Values::Float(v) => assert_eq!(v[..2], [1.0, 5.0]),
            _ => unreachable!(),
        }
    }
}
