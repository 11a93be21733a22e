//! The overflow-safe cast: how a computed f64 becomes an element of an output of any
//! numeric type, written once for every operator (ncwa, ncra, nces, ncbo, ncpdq, and
//! ncap2's casts and ncflint as they come to use it).
//!
//! Integer types round to the nearest integer, ties to even (C's `lrint`, NCO's
//! rounding); floating types take every value (IEEE rounding: beyond NC_FLOAT's range
//! is an infinity, as in NCO). A value an integer type cannot hold goes one of two
//! ways, the caller's [`Overflow`]:
//!
//! - [`Overflow::Fill`], for conversions of floating-point data into an integer type
//!   (ncap2's `int(1e36)`, `-3e10` into NC_INT, ncpdq packing a value beyond the
//!   packed type or unpacking into an integer type too small): the output's fill
//!   value. NCO keeps the low bits of C's conversion (`int(1e36)` is -1), a number
//!   with no relation to the data and no sign of what happened.
//! - [`Overflow::Wrap`], for integer arithmetic on integer data (totals and other
//!   statistics of NC_SHORT or NC_INT data, ncbo on two integer operands): the result
//!   is kept modulo the type's width, as NCO's operators keep the input's integer type
//!   and C's integer conversion wraps. This is NCO's documented behaviour, which its
//!   own regression suite pins (`ncwa -y ttl` of 17000 + 17000 in NC_SHORT is
//!   -31536), so it is kept, and announced: every wrapped value is counted for a
//!   warning. A value that is not an integer of the 64-bit range at all (NaN from
//!   `-y sqrt` of a negative mean, infinities, beyond ±2^63, where C's conversion is
//!   undefined) has no modular meaning and takes the fill value in this mode too
//!   (NCO writes 0 or garbage).
//!
//! Counts come back as [`Casts`]; `nco_core::arith::Unfit` turns them into one warning
//! line per variable and makes the output declare the fill value it wrote.

use crate::types::{NcNum, NcType, Values};

/// What becomes of a value an integer output type cannot hold (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// The output's fill value.
    Fill,
    /// The value modulo the type's width (integer arithmetic on integer data); the
    /// fill value for values that are not integers of the 64-bit range.
    Wrap,
}

/// How many values of a conversion did not fit their type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Casts {
    /// Written as the fill value.
    pub filled: usize,
    /// Wrapped around ([`Overflow::Wrap`]).
    pub wrapped: usize,
}

impl Casts {
    /// Both counts together.
    pub fn total(&self) -> usize {
        self.filled + self.wrapped
    }

    /// The sum of two tallies.
    pub fn plus(self, o: Casts) -> Casts {
        Casts {
            filled: self.filled + o.filled,
            wrapped: self.wrapped + o.wrapped,
        }
    }
}

/// `x` in type `T`, or `fill` when it does not fit; the flag tells whether it fitted.
/// Branch-free, so loops over it vectorise. This is [`Overflow::Fill`].
#[inline(always)]
pub fn cast_or<T: NcNum>(x: f64, fill: T) -> (T, bool) {
    match T::from_f64_checked(x) {
        Some(v) => (v, true),
        None => (fill, false),
    }
}

/// `x` in type `T` under `mode`: the value, and whether it was wrapped or replaced by
/// `fill`.
#[inline(always)]
pub fn cast_with<T: NcNum>(x: f64, fill: T, mode: Overflow) -> (T, bool, bool) {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    match T::from_f64_checked(x) {
        Some(v) => (v, false, false),
        None if mode == Overflow::Wrap && x.abs() < TWO63 => (T::from_f64(x), true, false),
        None => (fill, false, true),
    }
}

/// Every element of `x` in type `T` ([`cast_or`]), with the number that did not fit
/// and became `fill`.
pub fn cast_slice<T: NcNum>(x: &[f64], fill: T) -> (Vec<T>, usize) {
    let mut unfit = 0usize;
    let out = x
        .iter()
        .map(|&v| {
            let (y, ok) = cast_or(v, fill);
            unfit += usize::from(!ok);
            y
        })
        .collect();
    (out, unfit)
}

/// Every element of `x` in type `T` under `mode` ([`cast_with`]), with the counts.
pub fn cast_slice_with<T: NcNum>(x: &[f64], fill: T, mode: Overflow) -> (Vec<T>, Casts) {
    let mut c = Casts::default();
    let out = x
        .iter()
        .map(|&v| {
            let (y, w, f) = cast_with(v, fill, mode);
            c.wrapped += usize::from(w);
            c.filled += usize::from(f);
            y
        })
        .collect();
    (out, c)
}

/// [`cast_slice`] into a runtime type `ty`; `fill` is the output's fill value (already
/// in `ty`'s range: a converted `_FillValue` or the type's default). Text types give
/// zeros (NC_CHAR) or empty strings, nothing counted.
pub fn cast_values(x: &[f64], ty: NcType, fill: f64) -> (Values, usize) {
    let (v, c) = cast_values_with(x, ty, fill, Overflow::Fill);
    (v, c.filled)
}

/// [`cast_slice_with`] into a runtime type `ty` (see [`cast_values`]).
pub fn cast_values_with(x: &[f64], ty: NcType, fill: f64, mode: Overflow) -> (Values, Casts) {
    crate::dispatch_type!(ty, T => {
        let (v, n) = cast_slice_with::<T>(x, T::from_f64(fill), mode);
        (T::into_values(v), n)
    };
        char => (Values::Char(vec![0; x.len()]), Casts::default());
        string => (Values::Str(vec![String::new(); x.len()]), Casts::default()))
}

/// [`cast_values_with`] of results where `None` is a missing result (written as
/// `fill`, not counted).
pub fn cast_results(
    results: &[Option<f64>],
    ty: NcType,
    fill: f64,
    mode: Overflow,
) -> (Values, Casts) {
    fn conv<T: NcNum>(r: &[Option<f64>], fill: T, mode: Overflow) -> (Values, Casts) {
        let mut c = Casts::default();
        let v: Vec<T> = r
            .iter()
            .map(|x| match x {
                Some(x) => {
                    let (y, w, f) = cast_with(*x, fill, mode);
                    c.wrapped += usize::from(w);
                    c.filled += usize::from(f);
                    y
                }
                None => fill,
            })
            .collect();
        (T::into_values(v), c)
    }
    crate::dispatch_type!(ty, T => conv::<T>(results, T::from_f64(fill), mode);
        char => (Values::Char(vec![0; results.len()]), Casts::default());
        string => (Values::Str(vec![String::new(); results.len()]), Casts::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_that_do_not_fit_become_the_fill_value_and_are_counted() {
        let x = [-3e10, 1e36, 7.5, f64::NAN, -2.5, f64::INFINITY];
        let (v, n) = cast_values(&x, NcType::Int, -2_147_483_647.0);
        let f = -2_147_483_647;
        assert_eq!(v, Values::Int(vec![f, f, 8, f, -2, f]));
        assert_eq!(n, 4);
        let (v, n) = cast_values(&[34000.0, -32768.0, 1.0], NcType::Short, -99.0);
        assert_eq!((v, n), (Values::Short(vec![-99, -32768, 1]), 1));
        let (v, n) = cast_values(&[1e39, 1.5, f64::NAN], NcType::Float, 9.969_21e36);
        let Values::Float(v) = v else { panic!("float") };
        assert_eq!((v[0], v[1], n), (f32::INFINITY, 1.5, 0));
        assert!(v[2].is_nan(), "NaN is a float value, not an overflow");
        let (v, c) = cast_results(
            &[Some(300.0), None, Some(3.0)],
            NcType::UByte,
            255.0,
            Overflow::Fill,
        );
        assert_eq!(
            (v, c.filled, c.wrapped),
            (Values::UByte(vec![255, 255, 3]), 1, 0)
        );
        let (v, n) = cast_values(&[1.0], NcType::Char, 0.0);
        assert_eq!((v, n), (Values::Char(vec![0]), 0));
    }

    #[test]
    fn integer_arithmetic_wraps_and_non_numbers_still_fill() {
        // NCO's ncwa -y ttl on NC_SHORT: 17000 + 17000 is -31536.
        let x = [34000.0, f64::NAN, -3e10, 1e36, 5.0];
        let (v, c) = cast_values_with(&x, NcType::Short, -32767.0, Overflow::Wrap);
        let wrapped_3e10 = (-30_000_000_000_i64) as i16;
        assert_eq!(
            v,
            Values::Short(vec![-31536, -32767, wrapped_3e10, -32767, 5])
        );
        assert_eq!(
            c,
            Casts {
                filled: 2,
                wrapped: 2
            }
        );
        assert_eq!(c.total(), 4);
    }

    #[test]
    fn generic_over_every_integer_type() {
        fn check<T: NcNum>(hi: f64, over: f64) {
            let fill = T::DEFAULT_FILL;
            let (v, n) = cast_slice::<T>(&[hi, over, 1.0], fill);
            assert_eq!(n, 1, "{:?}", T::TYPE);
            assert_eq!(v[1], fill, "{:?}", T::TYPE);
            assert_eq!(v[0].to_f64(), hi, "{:?}", T::TYPE);
        }
        check::<i8>(127.0, 128.0);
        check::<u8>(255.0, 256.0);
        check::<i16>(32767.0, 32768.0);
        check::<u16>(65535.0, 65536.0);
        check::<i32>(2_147_483_647.0, 2_147_483_648.0);
        check::<u32>(4_294_967_295.0, 4_294_967_296.0);
        // The largest doubles below 2^63 and 2^64, and 2^63, 2^64 themselves.
        check::<i64>(9_223_372_036_854_774_784.0, 9_223_372_036_854_775_808.0);
        check::<u64>(18_446_744_073_709_549_568.0, 18_446_744_073_709_551_616.0);
    }
}
