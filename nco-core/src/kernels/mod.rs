//! Generic kernels over the numeric types: reductions ([`reduce`]) shared by ncwa, ncra
//! and nces, element-wise binary operations ([`binary`]) for ncbo, and the glue that
//! dispatches a runtime-typed [`Values`] buffer to them and builds typed results.

pub mod binary;
pub mod reduce;

use crate::packing::Packing;
use crate::types::{NcNum, NcType, Values};
use reduce::{Accum, Broadcast};

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

/// Typed output of type `ty` from results (`None` becomes `fill`), with NCO's
/// conversion (integers rounded, ties to even, wrapping when out of range). Returns the
/// values and how many results were out of the type's range.
pub fn to_values(results: &[Option<f64>], ty: NcType, fill: f64) -> (Values, usize) {
    fn conv<T: NcNum>(r: &[Option<f64>], fill: f64) -> (Values, usize) {
        let mut over = 0;
        let v: Vec<T> = r
            .iter()
            .map(|x| match x {
                Some(x) => {
                    if !T::fits(*x) {
                        over += 1;
                    }
                    T::from_f64(*x)
                }
                None => T::from_f64(fill),
            })
            .collect();
        (T::into_values(v), over)
    }
    crate::dispatch_type!(ty, T => conv::<T>(results, fill);
        char => (Values::Char(vec![0; results.len()]), 0);
        string => (Values::Str(vec![String::new(); results.len()]), 0))
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
