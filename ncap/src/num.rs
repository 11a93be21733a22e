//! Element-wise arithmetic in the operands' own netCDF type, as ncap2 computes (float
//! stays float, integer division truncates, `%` is C's remainder or `fmod`), with
//! missing values propagated. One trait, [`Arith`], extends nco-core's `NcNum` with the
//! operations; it is implemented by two macros (integers, floats) and every kernel is a
//! generic function dispatched at run time with nco-core's `dispatch_type!`.
//! Large arrays are processed in parallel chunks with rayon.

use rayon::prelude::*;

use nco_core::types::{NcNum, NcType, Values};

use crate::ast::BinOp;
use crate::builtins::{MathFn, Reduce};

/// Elements per parallel chunk; smaller arrays run on one thread.
const PAR_CHUNK: usize = 1 << 15;

/// Arithmetic of one numeric type.
pub trait Arith: NcNum {
    /// a + b (integers wrap)
    fn add(self, b: Self) -> Self;
    /// a - b (integers wrap)
    fn sub(self, b: Self) -> Self;
    /// a * b (integers wrap)
    fn mul(self, b: Self) -> Self;
    /// a / b (integers truncate; division by zero gives 0)
    fn div(self, b: Self) -> Self;
    /// C remainder / fmod (integer remainder by zero gives 0)
    fn rem(self, b: Self) -> Self;
    /// a ^ b (integers through f64, converted back)
    fn pow(self, b: Self) -> Self;
    /// -a (integers wrap)
    fn neg(self) -> Self;
    /// |a|
    fn abs(self) -> Self;
    /// 1 or 0.
    fn from_bool(b: bool) -> Self;
    /// a != 0
    fn truth(self) -> bool;
    /// A math function (floats only; integers go through f64).
    fn math(self, f: MathFn) -> Self;
    /// atan2(self, x)
    fn atan2(self, x: Self) -> Self;
}

macro_rules! float_math {
    ($x:expr, $f:expr) => {
        match $f {
            MathFn::Sqrt => $x.sqrt(),
            MathFn::Exp => $x.exp(),
            MathFn::Log => $x.ln(),
            MathFn::Log10 => $x.log10(),
            MathFn::Sin => $x.sin(),
            MathFn::Cos => $x.cos(),
            MathFn::Tan => $x.tan(),
            MathFn::Asin => $x.asin(),
            MathFn::Acos => $x.acos(),
            MathFn::Atan => $x.atan(),
            MathFn::Sinh => $x.sinh(),
            MathFn::Cosh => $x.cosh(),
            MathFn::Tanh => $x.tanh(),
            MathFn::Asinh => special::Special::special($x, special::F::Asinh),
            MathFn::Acosh => special::Special::special($x, special::F::Acosh),
            MathFn::Atanh => special::Special::special($x, special::F::Atanh),
            MathFn::Floor => $x.floor(),
            MathFn::Ceil => $x.ceil(),
            MathFn::Round => $x.round(),
            MathFn::Trunc => $x.trunc(),
            // NCO 5.1.4's rint and nearbyint round halves away from zero.
            MathFn::Rint => $x.round(),
            MathFn::Fabs => $x.abs(),
            MathFn::Erf => special::Special::special($x, special::F::Erf),
            MathFn::Erfc => special::Special::special($x, special::F::Erfc),
            MathFn::Gamma => special::Special::special($x, special::F::Gamma),
            MathFn::Lgamma => special::Special::special($x, special::F::Lgamma),
        }
    };
}

macro_rules! impl_arith {
    (int: $($t:ty),*) => {$(
        impl Arith for $t {
            #[inline] fn add(self, b: Self) -> Self { self.wrapping_add(b) }
            #[inline] fn sub(self, b: Self) -> Self { self.wrapping_sub(b) }
            #[inline] fn mul(self, b: Self) -> Self { self.wrapping_mul(b) }
            #[inline] fn div(self, b: Self) -> Self { self.checked_div(b).unwrap_or(0) }
            #[inline] fn rem(self, b: Self) -> Self { self.checked_rem(b).unwrap_or(0) }
            #[inline] fn pow(self, b: Self) -> Self { Self::from_f64(self.to_f64().powf(b.to_f64())) }
            #[inline] fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            #[inline] fn abs(self) -> Self { if self < (0 as $t) { self.neg() } else { self } }
            #[inline] fn from_bool(b: bool) -> Self { b as $t }
            #[inline] fn truth(self) -> bool { self != 0 }
            #[inline] fn math(self, f: MathFn) -> Self { Self::from_f64(float_math!(self.to_f64(), f)) }
            #[inline] fn atan2(self, x: Self) -> Self { Self::from_f64(self.to_f64().atan2(x.to_f64())) }
        }
    )*};
    (float: $($t:ty),*) => {$(
        impl Arith for $t {
            #[inline] fn add(self, b: Self) -> Self { self + b }
            #[inline] fn sub(self, b: Self) -> Self { self - b }
            #[inline] fn mul(self, b: Self) -> Self { self * b }
            #[inline] fn div(self, b: Self) -> Self { self / b }
            #[inline] fn rem(self, b: Self) -> Self { self % b }
            #[inline] fn pow(self, b: Self) -> Self { self.powf(b) }
            #[inline] fn neg(self) -> Self { -self }
            #[inline] fn abs(self) -> Self { <$t>::abs(self) }
            #[inline] fn from_bool(b: bool) -> Self { if b { 1.0 } else { 0.0 } }
            #[inline] fn truth(self) -> bool { self != 0.0 }
            #[inline] fn math(self, f: MathFn) -> Self { float_math!(self, f) }
            #[inline] fn atan2(self, x: Self) -> Self { <$t>::atan2(self, x) }
        }
    )*};
}

impl_arith!(int: i8, u8, i16, u16, i32, u32, i64, u64);
impl_arith!(float: f32, f64);

/// Call `$e` with `$T` bound to the Rust type of a numeric [`NcType`]; text types
/// evaluate `$text`.
macro_rules! with_type {
    ($ty:expr, $T:ident => $e:expr; text => $text:expr) => {
        nco_core::dispatch_type!($ty, $T => $e; char => $text; string => $text)
    };
}
pub(crate) use with_type;

#[inline]
fn apply<T: Arith>(op: BinOp, a: T, b: T) -> T {
    match op {
        BinOp::Add => a.add(b),
        BinOp::Sub => a.sub(b),
        BinOp::Mul => a.mul(b),
        BinOp::Div => a.div(b),
        BinOp::Mod => a.rem(b),
        BinOp::Pow => a.pow(b),
        BinOp::Lt => T::from_bool(a < b),
        BinOp::Gt => T::from_bool(a > b),
        BinOp::Le => T::from_bool(a <= b),
        BinOp::Ge => T::from_bool(a >= b),
        BinOp::Eq => T::from_bool(a == b),
        BinOp::Ne => T::from_bool(a != b),
        BinOp::And => T::from_bool(a.truth() && b.truth()),
        BinOp::Or => T::from_bool(a.truth() || b.truth()),
        BinOp::ClipLt | BinOp::Min => {
            if a < b {
                a
            } else {
                b
            }
        }
        BinOp::ClipGt | BinOp::Max => {
            if a > b {
                a
            } else {
                b
            }
        }
    }
}

/// One operand of a kernel: a whole array or one value repeated.
#[derive(Clone, Copy)]
pub enum Side<'a, T> {
    /// Element i is `s[i]`.
    Array(&'a [T]),
    /// Every element is this value.
    Scalar(T),
}

/// The side for buffer `s`: a scalar when `scalar`.
pub fn side<T: Copy>(s: &[T], scalar: bool) -> Side<'_, T> {
    if scalar {
        Side::Scalar(s[0])
    } else {
        Side::Array(s)
    }
}

impl<T: Copy> Side<'_, T> {
    #[inline]
    fn at(&self, i: usize) -> T {
        match self {
            Side::Array(s) => s[i],
            Side::Scalar(x) => *x,
        }
    }
}

/// `f(0..n)` collected, in parallel for large arrays.
fn fill_with<T: Send, F: Fn(usize) -> T + Sync + Send>(n: usize, f: F) -> Vec<T> {
    if n < 2 * PAR_CHUNK {
        return (0..n).map(f).collect();
    }
    (0..n)
        .into_par_iter()
        .with_min_len(PAR_CHUNK)
        .map(f)
        .collect()
}

/// `a op b` over `n` elements in type `T`; where `a == fa` or `b == fb` the result is
/// `fout` (missing).
pub fn binary<T: Arith>(
    op: BinOp,
    n: usize,
    a: Side<'_, T>,
    b: Side<'_, T>,
    fa: Option<T>,
    fb: Option<T>,
    fout: T,
) -> Vec<T> {
    match a {
        Side::Array(x) => {
            let mut d = x[..n].to_vec();
            binary_into(op, &mut d, b, true, fa, fb, fout);
            d
        }
        Side::Scalar(x) => {
            let mut d = match b {
                Side::Array(y) => y[..n].to_vec(),
                Side::Scalar(y) => vec![y; n],
            };
            binary_into(op, &mut d, Side::Scalar(x), false, fa, fb, fout);
            d
        }
    }
}

/// In place: `dst = dst op other` (`dst_left`) or `dst = other op dst`, with missing
/// values as in [`binary`] (`fa` belongs to the left operand, `fb` to the right).
/// Runs in parallel chunks for large arrays.
pub fn binary_into<T: Arith>(
    op: BinOp,
    dst: &mut [T],
    other: Side<'_, T>,
    dst_left: bool,
    fa: Option<T>,
    fb: Option<T>,
    fout: T,
) {
    // One monomorphised loop per operator so the no-missing-value loops vectorise.
    macro_rules! go {
        ($f:expr) => {
            run_op(dst, other, dst_left, fa, fb, fout, $f)
        };
    }
    match op {
        BinOp::Add => go!(|a: T, b: T| a.add(b)),
        BinOp::Sub => go!(|a: T, b: T| a.sub(b)),
        BinOp::Mul => go!(|a: T, b: T| a.mul(b)),
        BinOp::Div => go!(|a: T, b: T| a.div(b)),
        BinOp::Mod => go!(|a: T, b: T| a.rem(b)),
        BinOp::Pow => go!(|a: T, b: T| a.pow(b)),
        op => go!(move |a: T, b: T| apply(op, a, b)),
    }
}

fn run_op<T: Arith, F: Fn(T, T) -> T + Sync + Send>(
    dst: &mut [T],
    other: Side<'_, T>,
    dst_left: bool,
    fa: Option<T>,
    fb: Option<T>,
    fout: T,
    f: F,
) {
    let chunk = |base: usize, d: &mut [T]| {
        let len = d.len();
        match (other, fa, fb, dst_left) {
            (Side::Array(o), None, None, true) => {
                for (x, &y) in d.iter_mut().zip(&o[base..base + len]) {
                    *x = f(*x, y);
                }
            }
            (Side::Array(o), None, None, false) => {
                for (x, &y) in d.iter_mut().zip(&o[base..base + len]) {
                    *x = f(y, *x);
                }
            }
            (Side::Scalar(y), None, None, true) => {
                for x in d.iter_mut() {
                    *x = f(*x, y);
                }
            }
            (Side::Scalar(y), None, None, false) => {
                for x in d.iter_mut() {
                    *x = f(y, *x);
                }
            }
            _ => {
                for (j, x) in d.iter_mut().enumerate() {
                    let o = other.at(base + j);
                    let (l, r) = if dst_left { (*x, o) } else { (o, *x) };
                    *x = if fa == Some(l) || fb == Some(r) {
                        fout
                    } else {
                        f(l, r)
                    };
                }
            }
        }
    };
    if dst.len() < 2 * PAR_CHUNK {
        chunk(0, dst);
    } else {
        dst.par_chunks_mut(PAR_CHUNK)
            .enumerate()
            .for_each(|(c, d)| chunk(c * PAR_CHUNK, d));
    }
}

/// `f(x)` element by element, keeping missing elements.
pub fn unary<T: Arith, F: Fn(T) -> T + Sync + Send>(x: &[T], fill: Option<T>, f: F) -> Vec<T> {
    let mut d = x.to_vec();
    unary_into(&mut d, fill, f);
    d
}

/// In place: `x = f(x)`, keeping missing elements; parallel for large arrays.
pub fn unary_into<T: Arith, F: Fn(T) -> T + Sync + Send>(x: &mut [T], fill: Option<T>, f: F) {
    let chunk = |d: &mut [T]| {
        for v in d {
            if fill != Some(*v) {
                *v = f(*v);
            }
        }
    };
    if x.len() < 2 * PAR_CHUNK {
        chunk(x);
    } else {
        x.par_chunks_mut(PAR_CHUNK).for_each(chunk);
    }
}

/// The special functions and inverse hyperbolic functions, in the precision of the
/// argument, from the C library's math library: C99's `erf erfc tgamma lgamma asinh
/// acosh atanh` and their `f` versions, which are what NCO calls (Rust's own inverse
/// hyperbolic functions differ from them in the last bit).
mod special {
    #[link(name = "m")]
    extern "C" {
        fn erf(x: f64) -> f64;
        fn erff(x: f32) -> f32;
        fn erfc(x: f64) -> f64;
        fn erfcf(x: f32) -> f32;
        fn tgamma(x: f64) -> f64;
        fn tgammaf(x: f32) -> f32;
        fn lgamma(x: f64) -> f64;
        fn lgammaf(x: f32) -> f32;
        fn asinh(x: f64) -> f64;
        fn asinhf(x: f32) -> f32;
        fn acosh(x: f64) -> f64;
        fn acoshf(x: f32) -> f32;
        fn atanh(x: f64) -> f64;
        fn atanhf(x: f32) -> f32;
    }

    /// A special function.
    #[derive(Clone, Copy)]
    pub enum F {
        Erf,
        Erfc,
        Gamma,
        Lgamma,
        Asinh,
        Acosh,
        Atanh,
    }

    /// A float type with the special functions.
    pub trait Special: Copy {
        /// `f(self)`.
        fn special(self, f: F) -> Self;
    }

    impl Special for f32 {
        fn special(self, f: F) -> f32 {
            // SAFETY: pure C math functions of one float, no pointers (lgammaf's sign
            // goes to a thread-local of the C library).
            unsafe {
                match f {
                    F::Erf => erff(self),
                    F::Erfc => erfcf(self),
                    F::Gamma => tgammaf(self),
                    F::Lgamma => lgammaf(self),
                    F::Asinh => asinhf(self),
                    F::Acosh => acoshf(self),
                    F::Atanh => atanhf(self),
                }
            }
        }
    }

    impl Special for f64 {
        fn special(self, f: F) -> f64 {
            // SAFETY: as for f32.
            unsafe {
                match f {
                    F::Erf => erf(self),
                    F::Erfc => erfc(self),
                    F::Gamma => tgamma(self),
                    F::Lgamma => lgamma(self),
                    F::Asinh => asinh(self),
                    F::Acosh => acosh(self),
                    F::Atanh => atanh(self),
                }
            }
        }
    }
}

/// True when every value of the integer type `from` is a value of `to`.
pub fn int_fits(from: NcType, to: NcType) -> bool {
    fn range(t: NcType) -> Option<(i128, i128)> {
        Some(match t {
            NcType::Byte => (i8::MIN.into(), i8::MAX.into()),
            NcType::UByte => (0, u8::MAX.into()),
            NcType::Short => (i16::MIN.into(), i16::MAX.into()),
            NcType::UShort => (0, u16::MAX.into()),
            NcType::Int => (i32::MIN.into(), i32::MAX.into()),
            NcType::UInt => (0, u32::MAX.into()),
            NcType::Int64 => (i64::MIN.into(), i64::MAX.into()),
            NcType::UInt64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }
    match (range(from), range(to)) {
        (Some((a, b)), Some((c, d))) => a >= c && b <= d,
        _ => false,
    }
}

/// Move the typed vector out of `v` (which must be of type `T`).
pub fn take<T: NcNum>(mut v: Values) -> Vec<T> {
    std::mem::take(T::vec_of_mut(&mut v).expect("kernel called with a buffer of another type"))
}

/// A shared value as an owned buffer of type `ty`: moved out when this is its only
/// holder and it has that type already, copied or converted otherwise.
pub fn owned_as(v: std::sync::Arc<Values>, ty: NcType) -> Values {
    if v.nc_type() == ty {
        std::sync::Arc::unwrap_or_clone(v)
    } else {
        as_type(&v, ty).into_owned()
    }
}

/// The typed vector of `v` (which must be of type `T`).
pub fn slice<T: NcNum>(v: &Values) -> &[T] {
    T::slice_of(v).expect("kernel called with a buffer of another type")
}

/// `v` converted to `ty` (borrowed when it already has that type). Text is kept as is.
pub fn as_type(v: &Values, ty: NcType) -> std::borrow::Cow<'_, Values> {
    if v.nc_type() == ty {
        return std::borrow::Cow::Borrowed(v);
    }
    match v.convert(ty) {
        Some(c) => std::borrow::Cow::Owned(c),
        None => std::borrow::Cow::Borrowed(v),
    }
}

/// Convert one f64 to `ty` with NCO's rule and back to f64 (the value a fill or
/// literal takes in that type).
pub fn in_type(x: f64, ty: NcType) -> f64 {
    with_type!(ty, T => T::from_f64(x).to_f64(); text => x)
}

/// Gather `src` through `map` (element i of the result is `src[map[i]]`).
pub fn gather(src: &Values, map: &[usize]) -> Values {
    if map.len() >= 2 * PAR_CHUNK {
        if let Some(r) = with_type!(src.nc_type(), T => {
            let s = slice::<T>(src);
            Some(T::into_values(fill_with(map.len(), |i| s[map[i]])))
        }; text => None)
        {
            return r;
        }
    }
    src.gather(map)
}

/// Reduce `x` (shape `shape`) into `out_n` results; element `idx` goes to output
/// `sum(idx[k] * ostride[k])`. Sums accumulate in the type itself, element by element in
/// storage order, as NCO does (so float totals carry float rounding); averages divide in
/// the type (integer averages truncate). The squares (`avgsqr`, `rms`, `rmssdn`) and
/// absolute values (`mabs`, `mebs`, `mibs`, `tabs`) are taken in the type too, and the
/// root of an integer result truncates: NCO 5.1.4 gives `rms` of the ints 1..6 as 3 and
/// `sqravg` as 9 (the truncated average 3, squared). Missing elements (`== fill`) are
/// skipped; an output with no valid element is `fill` (0 without one).
pub fn reduce<T: Arith>(
    op: Reduce,
    x: &[T],
    fill: Option<T>,
    shape: &[usize],
    ostride: &[usize],
    out_n: usize,
) -> Vec<T> {
    // Counts of 4 bytes when no output can reach 2^32 elements (half the memory).
    if u32::try_from(x.len()).is_ok() {
        reduce_counting::<T, u32>(op, x, fill, shape, ostride, out_n)
    } else {
        reduce_counting::<T, usize>(op, x, fill, shape, ostride, out_n)
    }
}

/// A count of valid elements ([`reduce`]).
trait Count: Copy + Default + PartialEq + std::ops::AddAssign + From<bool> {
    fn count(self) -> f64;
}

impl Count for u32 {
    fn count(self) -> f64 {
        f64::from(self)
    }
}

impl Count for usize {
    fn count(self) -> f64 {
        self as f64
    }
}

fn reduce_counting<T: Arith, C: Count>(
    op: Reduce,
    x: &[T],
    fill: Option<T>,
    shape: &[usize],
    ostride: &[usize],
    out_n: usize,
) -> Vec<T> {
    let (mut acc, cnt) = match op {
        Reduce::AvgSqr | Reduce::Rms | Reduce::RmsSdn => {
            accumulate::<T, C>(x, fill, shape, ostride, out_n, |r| r.mul(r), T::add)
        }
        Reduce::MIbs => accumulate::<T, C>(x, fill, shape, ostride, out_n, T::abs, min_of),
        Reduce::MAbs => accumulate::<T, C>(x, fill, shape, ostride, out_n, T::abs, max_of),
        Reduce::MEbs | Reduce::TAbs => {
            accumulate::<T, C>(x, fill, shape, ostride, out_n, T::abs, T::add)
        }
        Reduce::Min => accumulate::<T, C>(x, fill, shape, ostride, out_n, |r| r, min_of),
        Reduce::Max => accumulate::<T, C>(x, fill, shape, ostride, out_n, |r| r, max_of),
        _ => accumulate::<T, C>(x, fill, shape, ostride, out_n, |r| r, T::add),
    };
    // Square root in the type; an integer root truncates (as C's cast of sqrt()).
    let root = |m: T| {
        let r = m.to_f64().sqrt();
        T::from_f64(if T::TYPE.is_float() { r } else { r.trunc() })
    };
    for (a, &c) in acc.iter_mut().zip(&cnt) {
        let c = c.count();
        let n = T::from_f64(c);
        *a = match op {
            _ if c == 0.0 => fill.unwrap_or_default(),
            Reduce::Avg | Reduce::AvgSqr | Reduce::MEbs => a.div(n),
            Reduce::SqrAvg => {
                let m = a.div(n);
                m.mul(m)
            }
            Reduce::Rms => root(a.div(n)),
            Reduce::RmsSdn => root(a.div(T::from_f64(c - 1.0))),
            _ => *a,
        };
    }
    acc
}

fn min_of<T: Arith>(a: T, b: T) -> T {
    if b < a {
        b
    } else {
        a
    }
}

fn max_of<T: Arith>(a: T, b: T) -> T {
    if b > a {
        b
    } else {
        a
    }
}

/// The accumulation of [`reduce`]: each valid element, transformed by `pre`, starts its
/// output or is combined into it by `combine`, in storage order; returns the accumulators
/// and the counts of valid elements. Walks the input by runs of its last dimension (one
/// output step `ostride[last]` apart) so that the odometer moves once per run.
fn accumulate<T: Arith, C: Count>(
    x: &[T],
    fill: Option<T>,
    shape: &[usize],
    ostride: &[usize],
    out_n: usize,
    pre: impl Fn(T) -> T,
    combine: impl Fn(T, T) -> T,
) -> (Vec<T>, Vec<C>) {
    let mut acc = vec![T::default(); out_n];
    let mut cnt = vec![C::default(); out_n];
    let Some((&run, outer)) = shape.split_last() else {
        // A scalar: one element into one output.
        if let (Some(&raw), true) = (x.first(), out_n > 0) {
            if fill != Some(raw) {
                acc[0] = pre(raw);
                cnt[0] = C::from(true);
            }
        }
        return (acc, cnt);
    };
    if run == 0 {
        return (acc, cnt);
    }
    let step = ostride[outer.len()];
    let mut idx = vec![0usize; outer.len()];
    let mut o = 0usize;
    // One element into its output, without branches (so runs into consecutive
    // outputs vectorise): a missing element leaves both as they were.
    let add_one = |a: &mut T, c: &mut C, raw: T| {
        let valid = fill != Some(raw);
        let xi = pre(raw);
        let next = if *c == C::default() {
            xi
        } else {
            combine(*a, xi)
        };
        *a = if valid { next } else { *a };
        *c += C::from(valid);
    };
    for row in x.chunks_exact(run) {
        match step {
            0 => {
                let (a, c) = (&mut acc[o], &mut cnt[o]);
                row.iter().for_each(|&raw| add_one(a, c, raw));
            }
            1 => {
                let outs = acc[o..o + run].iter_mut().zip(&mut cnt[o..o + run]);
                outs.zip(row).for_each(|((a, c), &raw)| add_one(a, c, raw));
            }
            _ => {
                for (j, &raw) in row.iter().enumerate() {
                    let oj = o + j * step;
                    add_one(&mut acc[oj], &mut cnt[oj], raw);
                }
            }
        }
        for k in (0..outer.len()).rev() {
            idx[k] += 1;
            o += ostride[k];
            if idx[k] < outer[k] {
                break;
            }
            o -= ostride[k] * idx[k];
            idx[k] = 0;
        }
    }
    (acc, cnt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_semantics_follow_c() {
        assert_eq!(7i32.div(2), 3);
        assert_eq!((-7i32).rem(3), -1);
        assert_eq!(5i32.div(0), 0);
        assert_eq!(i16::MAX.add(1), i16::MIN);
        assert_eq!(2i32.pow(3), 8);
        assert_eq!((-3i8).abs(), 3);
    }

    #[test]
    fn float_semantics() {
        let r = binary(
            BinOp::Mod,
            2,
            Side::Array(&[273.1f32, 274.5]),
            Side::Scalar(273.0),
            None,
            None,
            0.0,
        );
        assert_eq!(r[0], 273.1f32 % 273.0);
        assert!((r[1] - 1.5).abs() < 1e-6);
        assert_eq!(1.0f32.math(MathFn::Atan) * 4.0, std::f32::consts::PI);
        assert_eq!(2.5f64.math(MathFn::Rint), 3.0);
    }

    #[test]
    fn missing_values_propagate() {
        let r = binary(
            BinOp::Add,
            4,
            Side::Array(&[73.0f32, 1e36, 73.0, 1e36]),
            Side::Scalar(1.0),
            Some(1e36),
            None,
            1e36,
        );
        assert_eq!(r, vec![74.0, 1e36, 74.0, 1e36]);
        let c = binary(
            BinOp::Gt,
            3,
            Side::Array(&[1i32, 5, -99]),
            Side::Scalar(2),
            Some(-99),
            None,
            -99,
        );
        assert_eq!(c, vec![0, 1, -99]);
        assert_eq!(
            unary(&[4.0f64, -1.0], Some(-1.0), |x| x.math(MathFn::Sqrt)),
            vec![2.0, -1.0]
        );
    }

    #[test]
    fn reductions_skip_missing_and_keep_the_type() {
        // 2x3, reduce over the second dimension.
        let x = [1i32, 2, -99, 4, 5, 7];
        let r = reduce(Reduce::Avg, &x, Some(-99), &[2, 3], &[1, 0], 2);
        assert_eq!(r, vec![1, 5], "(1+2)/2 truncates to 1");
        let r = reduce(Reduce::Total, &x, Some(-99), &[2, 3], &[0, 0], 1);
        assert_eq!(r, vec![19]);
        let r = reduce(Reduce::Max, &x, Some(-99), &[2, 3], &[0, 1], 3);
        assert_eq!(r, vec![4, 5, 7]);
        let r = reduce(Reduce::Min, &[-99i32, -99], Some(-99), &[2], &[0], 1);
        assert_eq!(r, vec![-99], "all missing stays missing");
        // Float sums accumulate in float.
        let big = vec![0.1f32; 1 << 20];
        let t = reduce(Reduce::Total, &big, None, &[1 << 20], &[0], 1)[0];
        let seq = big.iter().fold(0.0f32, |a, &b| a + b);
        assert_eq!(t, seq);
    }

    #[test]
    fn big_arrays_run_in_parallel_with_the_same_result() {
        let n = 5 * PAR_CHUNK + 7;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let r = binary(
            BinOp::Mul,
            n,
            Side::Array(&a),
            Side::Scalar(2.0),
            None,
            None,
            0.0,
        );
        assert_eq!(r.len(), n);
        assert!(r.iter().enumerate().all(|(i, &x)| x == 2.0 * i as f32));
        let m: Vec<usize> = (0..n).rev().collect();
        let g = gather(&Values::Float(a), &m);
        assert_eq!(g.get_f64(0), Some((n - 1) as f64));
    }
}
