//! Quantization: NCO's precision-preserving compression (`--ppc`, `--baa`) on a buffer
//! of values about to be stored. Quantized values compress far better (the discarded
//! bits become runs of equal bits) and keep the precision asked for.
//!
//! Two families (NCO manual, "Precision-Preserving Compression"; the algorithms are
//! those of the papers each variant cites):
//!
//! * **decimal significant digits** (`T=.2`): every element is rounded to a multiple of
//!   a power of two at least as fine as the asked decimal place,
//!   `x := rint(x * 2^b) / 2^b` with `b = ceil(|dsd| * log2(10))` (`2^-b` for a negative
//!   `dsd`), computed in double precision with ties to even; integer types (negative
//!   `dsd` only) are rounded exactly in integer arithmetic and kept in range;
//! * **significant digits or bits** (`T=3`), floating-point types only, on the IEEE-754
//!   bits of each element: the insignificant explicit bits of its significand are
//!   shaved (zeroed), set, or rounded away (BitGroom, BitShave, BitSet, BitGroomRound,
//!   BruteForce with `ceil(nsd * log2(10)) + 1` bits kept; HalfShave and BitRound with
//!   `nsb` bits kept; DigitRound and Granular BitRound choose the bits of each value from
//!   its magnitude).
//!
//! Elements equal to the fill value are left alone (the variable's `_FillValue`; for
//! the bit algorithms the type's default fill when it has none, as NCO 5.1.4 compares),
//! and so are zeros of either sign and non-finite values (NCO 5.1.4 turns `-0.0` into a
//! small positive number under DigitRound and NaN payloads into other NaNs: README,
//! compatibility notes). BitGroom and BruteForce alternate by the parity of the
//! element's index in the variable (row-major), counted from the `first` index the
//! caller gives for the buffer's first element.

use crate::types::{NcNum, Values};
use nco_base::model::{Precision, Quantize, QuantizeAlgorithm};

/// log2(10), bits per decimal digit, as NCO computes it (`M_LN10 / M_LN2`).
const BITS_PER_DIGIT: f64 = std::f64::consts::LN_10 / std::f64::consts::LN_2;
/// log10(2), decimal digits per bit (`M_LN2 / M_LN10`).
const DIGITS_PER_BIT: f64 = std::f64::consts::LN_2 / std::f64::consts::LN_10;
/// log10(2) to nine digits, as the Digit Rounding paper's code writes it (the
/// approximation is the algorithm's: results depend on it).
#[allow(clippy::approx_constant)]
const DIGITS_PER_BIT_DGR: f64 = 0.301029996;
/// Digit Rounding's table: for significands below each bound, the decimal logarithm
/// of the bin's lower bound (nine digits, as in the paper's code).
#[allow(clippy::approx_constant)]
const DGR_LOG10_TABLE: [(f64, f64); 5] = [
    (0.6, -0.301029996),
    (0.7, -0.221848749),
    (0.8, -0.154901959),
    (0.9, -0.096910013),
    (1.0, -0.045757490),
];

/// Quantize `values` in place as `q` says. `fill` is the variable's `_FillValue`
/// (converted to its type, as f64; `None` when it has none); `first` is the index of
/// the first element in the variable, and BitGroom's and BruteForce's parity counts
/// from the start of each run of `period` elements (a record), or from the variable's
/// start when `period` is 0. Types a quantization does not
/// apply to (text, bytes, integers under significant digits) are left unchanged; the
/// planning layer does not ask for them.
pub fn quantize(q: &Quantize, values: &mut Values, fill: Option<f64>, first: u64, period: u64) {
    match q.precision {
        Precision::Decimal(dsd) => decimal(dsd, values, fill),
        Precision::Significant(n) => match values {
            Values::Float(v) => significant(q.algorithm, n, v, fill, first, period),
            Values::Double(v) => significant(q.algorithm, n, v, fill, first, period),
            _ => {}
        },
    }
}

/// The IEEE-754 types and what the bit algorithms need of them.
trait Ieee: NcNum {
    /// Explicit significand bits (23, 52).
    const MANT: u32;
    /// Bit width (32, 64).
    const WIDTH: u32;
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
    fn finite(self) -> bool;
    fn from_f64_round(x: f64) -> Self;
    /// The BruteForce error bound, `0.5 * 10^(floor(log10|raw|) - nsd + 1)`, in the
    /// type's own arithmetic (as NCO computes it), as f64.
    fn brute_bound(raw: Self, nsd: i32) -> f64;
    /// `|a| - |b|` in the type's arithmetic, as f64.
    fn abs_diff(a: Self, b: Self) -> f64;
}

impl Ieee for f32 {
    const MANT: u32 = 23;
    const WIDTH: u32 = 32;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_bits(b: u64) -> f32 {
        f32::from_bits(b as u32)
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn from_f64_round(x: f64) -> f32 {
        x as f32
    }
    fn brute_bound(raw: f32, nsd: i32) -> f64 {
        let e = raw.abs().log10().floor();
        f64::from(0.5f32 * 10f32.powf(e - nsd as f32 + 1.0))
    }
    fn abs_diff(a: f32, b: f32) -> f64 {
        f64::from(a.abs() - b.abs())
    }
}

impl Ieee for f64 {
    const MANT: u32 = 52;
    const WIDTH: u32 = 64;
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_bits(b: u64) -> f64 {
        f64::from_bits(b)
    }
    fn finite(self) -> bool {
        self.is_finite()
    }
    fn from_f64_round(x: f64) -> f64 {
        x
    }
    fn brute_bound(raw: f64, nsd: i32) -> f64 {
        // NCO takes the floor as an integer here.
        let e = raw.abs().log10().floor() as i32;
        0.5 * 10f64.powf(f64::from(e - nsd + 1))
    }
    fn abs_diff(a: f64, b: f64) -> f64 {
        a.abs() - b.abs()
    }
}

/// All-ones in the low `T::WIDTH` bits.
fn width_mask<T: Ieee>() -> u64 {
    if T::WIDTH == 64 {
        u64::MAX
    } else {
        (1u64 << T::WIDTH) - 1
    }
}

/// The masks that remove `zero` low bits: (keep mask, removed bits, the most
/// significant removed bit).
fn masks<T: Ieee>(zero: u32) -> (u64, u64, u64) {
    let all = width_mask::<T>();
    let keep = if zero >= T::WIDTH {
        0
    } else {
        (all << zero) & all
    };
    let removed = !keep & all;
    let half = removed & (keep >> 1);
    (keep, removed, half)
}

/// `value = mantissa * 2^exponent` with `0.5 <= |mantissa| < 1` (C's `frexp`) for
/// finite non-zero `x`.
fn frexp(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: scale into the normal range first.
        let (m, e) = frexp(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, exp - 1022)
}

/// `2^n` exactly (0 below the subnormal range, infinity above the normal one).
fn pow2(n: i32) -> f64 {
    if n > 1023 {
        f64::INFINITY
    } else if n >= -1022 {
        f64::from_bits(((n + 1023) as u64) << 52)
    } else if n >= -1074 {
        f64::from_bits(1u64 << (n + 1074))
    } else {
        0.0
    }
}

/// The significant-digit (or bit) algorithms on floats.
fn significant<T: Ieee>(
    alg: QuantizeAlgorithm,
    n: i32,
    v: &mut [T],
    fill: Option<f64>,
    first: u64,
    period: u64,
) {
    use QuantizeAlgorithm as A;
    let fill = fill.map_or(T::DEFAULT_FILL, T::from_f64_round);
    // Elements a bit algorithm leaves alone: fill values, zeros, NaN and infinities.
    let skip = |x: T| x == fill || x == T::default() || !x.finite();
    let all = width_mask::<T>();
    match alg {
        A::DigitRound => {
            for x in v.iter_mut().filter(|x| !skip(**x)) {
                *x = digit_round(*x, n);
            }
            return;
        }
        A::GranularBitRound => {
            for x in v.iter_mut().filter(|x| !skip(**x)) {
                *x = granular_bit_round(*x, n);
            }
            return;
        }
        _ => {}
    }
    // The uniform algorithms keep the same number of explicit bits everywhere.
    let kept = if alg.counts_bits() {
        n
    } else {
        (f64::from(n) * BITS_PER_DIGIT).ceil() as i32 + 1
    };
    if kept >= T::MANT as i32 || kept < 1 {
        return;
    }
    let zero = T::MANT - kept as u32;
    let (keep, removed, half) = masks::<T>(zero);
    let odd = |k: usize| {
        let i = first + k as u64;
        let i = if period > 0 { i % period } else { i };
        i % 2 == 1
    };
    for (k, x) in v.iter_mut().enumerate() {
        if skip(*x) {
            continue;
        }
        let b = x.bits();
        let shaved = b & keep;
        let set = b | removed;
        let q = match alg {
            A::BitGroom if odd(k) => set,
            A::BitGroom | A::BitShave => shaved,
            A::BitSet => set,
            A::BitGroomRound | A::BitRound => (b.wrapping_add(half) & all) & keep,
            A::HalfShave => shaved | half,
            A::BruteForce => {
                *x = brute_force(*x, n, keep, odd(k));
                continue;
            }
            A::DigitRound | A::GranularBitRound => unreachable!("handled above"),
        };
        *x = T::from_bits(q);
    }
}

/// Digit Rounding of one finite non-zero value to `nsd` digits: the quantum is the
/// power of two below the value's last significant digit (from the table's estimate
/// of its decimal logarithm); the value is reconstructed at the centre of its bin.
fn digit_round<T: Ieee>(x: T, nsd: i32) -> T {
    let val = x.to_f64();
    let (mnt, e) = frexp(val);
    // A negative significand stays in the first bin, as in the paper's code.
    let approx = DGR_LOG10_TABLE
        .iter()
        .find(|(bound, _)| mnt <= *bound)
        .map_or(DGR_LOG10_TABLE[4].1, |t| t.1);
    let digits = (f64::from(e) * DIGITS_PER_BIT_DGR + approx).floor() as i32 + 1;
    let power = (BITS_PER_DIGIT * f64::from(digits - nsd)).floor() as i32;
    let quantum = pow2(power);
    let sign = if val < 0.0 { -1.0 } else { 1.0 };
    T::from_f64_round(sign * ((val.abs() / quantum).floor() + 0.5) * quantum)
}

/// Granular BitRound of one finite non-zero value to `nsd` digits: the explicit bits
/// this value's magnitude needs for `nsd` digits, IEEE-rounded.
fn granular_bit_round<T: Ieee>(x: T, nsd: i32) -> T {
    let (mnt, e) = frexp(x.to_f64());
    let m = mnt.abs();
    let log_m = m.log10();
    let digits = (f64::from(e) * DIGITS_PER_BIT + log_m).floor() as i32 + 1;
    let power = (BITS_PER_DIGIT * f64::from(digits - nsd)).floor() as i32;
    let bits_needed = ((f64::from(e) - BITS_PER_DIGIT * log_m).floor() as i32 - power).abs() - 1;
    let zero = T::MANT as i32 - bits_needed;
    if zero <= 0 {
        return x;
    }
    let (keep, _, half) = masks::<T>(zero.min(T::WIDTH as i32 - 1) as u32);
    T::from_bits((x.bits().wrapping_add(half) & width_mask::<T>()) & keep)
}

/// BruteForce on one value: starting from BitGroom's mask, shave (even elements) or
/// set (odd) one more bit at a time while the change stays below half a unit of the
/// last significant digit; the last value within the bound is kept.
fn brute_force<T: Ieee>(x: T, nsd: i32, base: u64, odd: bool) -> T {
    let all = width_mask::<T>();
    let one = T::from_f64_round(1.0);
    if !odd && x == one {
        return x;
    }
    let bound = T::brute_bound(x, nsd);
    let mut mask = base;
    let apply = |b: u64, mask: u64| if odd { b | (!mask & all) } else { b & mask };
    let mut cur = T::from_bits(apply(x.bits(), mask));
    loop {
        let prev = cur;
        mask = (mask << 1) & all;
        cur = T::from_bits(apply(cur.bits(), mask));
        let err = T::abs_diff(x, cur);
        let err = if odd { err.abs() } else { err };
        if err >= bound || cur == one || cur == T::default() || !cur.finite() || mask == 0 {
            return prev;
        }
    }
}

/// Decimal-digit rounding of every element but fill values (only the `_FillValue`
/// attribute's, as NCO compares here).
fn decimal(dsd: i32, values: &mut Values, fill: Option<f64>) {
    let bits = (f64::from(dsd.unsigned_abs()) * BITS_PER_DIGIT).ceil() as i32;
    let bits = if dsd < 0 { -bits } else { bits };
    match values {
        Values::Float(v) => {
            let fill = fill.map(|f| f as f32);
            for x in v.iter_mut().filter(|x| Some(**x) != fill) {
                *x = round_float(f64::from(*x), bits) as f32;
            }
        }
        Values::Double(v) => {
            for x in v.iter_mut().filter(|x| Some(**x) != fill) {
                *x = round_float(*x, bits);
            }
        }
        Values::Short(v) if dsd < 0 => round_ints(v, -bits, fill),
        Values::UShort(v) if dsd < 0 => round_ints(v, -bits, fill),
        Values::Int(v) if dsd < 0 => round_ints(v, -bits, fill),
        Values::UInt(v) if dsd < 0 => round_ints(v, -bits, fill),
        Values::Int64(v) if dsd < 0 => round_ints(v, -bits, fill),
        Values::UInt64(v) if dsd < 0 => round_ints(v, -bits, fill),
        _ => {}
    }
}

/// `rint(x * 2^bits) / 2^bits` (ties to even); `x` itself where the scaled value is
/// not finite (already a multiple of the quantum, or NaN); zero (of `x`'s sign) where
/// the quantum is beyond every finite value (`2^-bits` past the double range).
fn round_float(x: f64, bits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if bits < -1074 {
        return 0f64.copysign(x);
    }
    let scale = pow2(bits);
    let scaled = x * scale;
    if !scaled.is_finite() {
        return x;
    }
    scaled.round_ties_even() / scale
}

/// Round integers to the nearest multiple of `2^bits` (ties to even), exactly, the
/// result kept within the type's range (the nearest representable value at the ends;
/// NCO wraps there).
fn round_ints<T: NcNum + Into<i128> + TryFrom<i128>>(v: &mut [T], bits: i32, fill: Option<f64>) {
    let bits = bits.clamp(0, 100) as u32;
    let q: i128 = 1i128 << bits;
    let fill = fill.map(T::from_f64);
    let (lo, hi) = range::<T>();
    for x in v.iter_mut().filter(|x| Some(**x) != fill) {
        let n: i128 = (*x).into();
        let down = n.div_euclid(q) * q;
        let rest = n - down;
        let up = down + q;
        let r = match (2 * rest).cmp(&q) {
            std::cmp::Ordering::Less => down,
            std::cmp::Ordering::Greater => up,
            // A tie: the even multiple.
            std::cmp::Ordering::Equal => {
                if down.div_euclid(q) % 2 == 0 {
                    down
                } else {
                    up
                }
            }
        };
        let r = r.clamp(lo, hi);
        if let Ok(y) = T::try_from(r) {
            *x = y;
        }
    }
}

/// The range of an integer type, as i128.
fn range<T: NcNum + Into<i128> + TryFrom<i128>>() -> (i128, i128) {
    let bits = (T::SIZE * 8) as u32;
    let signed = T::try_from(-1i128).is_ok();
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(algorithm: QuantizeAlgorithm, precision: Precision) -> Quantize {
        Quantize {
            algorithm,
            precision,
        }
    }

    /// NCO 5.1.4's `ncks -4 --ppc default=3` of in.nc's `ppc_dbl` and `ppc_big`
    /// (Granular BitRound, the default).
    #[test]
    fn granular_bit_round_matches_nco() {
        let mut d = Values::Double(vec![
            0.0,
            0.1,
            0.12,
            0.123,
            0.1234,
            0.12345,
            0.123456,
            0.1234567,
            0.12345678,
            0.123456789,
        ]);
        let g = q(
            QuantizeAlgorithm::GranularBitRound,
            Precision::Significant(3),
        );
        quantize(&g, &mut d, None, 0, 0);
        assert_eq!(
            d,
            Values::Double(vec![
                0.0,
                0.099609375,
                0.1201171875,
                0.123046875,
                0.123046875,
                0.123046875,
                0.123046875,
                0.123046875,
                0.123046875,
                0.123046875
            ])
        );
        let mut big = Values::Double((1..=10).map(|k| 123456789.0 * 10f64.powi(k - 11)).collect());
        quantize(&g, &mut big, None, 0, 0);
        assert_eq!(
            big,
            Values::Double(vec![
                0.0123291015625,
                0.123046875,
                1.234375,
                12.375,
                123.0,
                1232.0,
                12352.0,
                123392.0,
                1236992.0,
                12320768.0
            ])
        );
    }

    #[test]
    fn fill_values_zeros_and_non_finite_values_stay() {
        let g = q(QuantizeAlgorithm::BitRound, Precision::Significant(3));
        let mut v = Values::Float(vec![-999.0, -0.0, f32::NAN, f32::INFINITY, 1.1]);
        quantize(&g, &mut v, Some(-999.0), 0, 0);
        let Values::Float(v) = v else { unreachable!() };
        assert_eq!(v[0], -999.0);
        assert_eq!(v[1].to_bits(), (-0.0f32).to_bits());
        assert!(v[2].is_nan());
        assert_eq!(v[3], f32::INFINITY);
        assert_ne!(v[4], 1.1);
    }

    #[test]
    fn bit_groom_alternates_by_index_parity() {
        let g = q(QuantizeAlgorithm::BitGroom, Precision::Significant(2));
        let x = 1.2345f32;
        let mut v = Values::Float(vec![x, x, x]);
        quantize(&g, &mut v, None, 1, 0);
        let Values::Float(v) = v else { unreachable!() };
        // kept = ceil(2 * 3.32) + 1 = 8 bits: the low 15 shaved or set.
        let (set, shaved) = (x.to_bits() | 0x7fff, x.to_bits() & !0x7fff);
        assert_eq!(
            v.iter().map(|y| y.to_bits()).collect::<Vec<_>>(),
            [set, shaved, set]
        );
        // Records of 2: indices 1 2 3 are 1 0 1 within them.
        let mut r = Values::Float(vec![x, x, x]);
        quantize(&g, &mut r, None, 1, 2);
        let Values::Float(r) = r else { unreachable!() };
        assert_eq!(
            r.iter().map(|y| y.to_bits()).collect::<Vec<_>>(),
            [set, shaved, set]
        );
        let mut r = Values::Float(vec![x, x, x]);
        quantize(&g, &mut r, None, 2, 3);
        let Values::Float(r) = r else { unreachable!() };
        assert_eq!(
            r.iter().map(|y| y.to_bits()).collect::<Vec<_>>(),
            [shaved, shaved, set]
        );
    }

    #[test]
    fn decimal_digits_round_to_powers_of_two() {
        let d = q(QuantizeAlgorithm::default(), Precision::Decimal(3));
        let mut v = Values::Double(vec![0.1234567, 1e300 * 10.0]);
        quantize(&d, &mut v, None, 0, 0);
        assert_eq!(v.get_f64(0), Some((0.1234567f64 * 1024.0).round() / 1024.0));
        let mut i = Values::Short(vec![12345, 32767, -32768, 24, 8]);
        let h = q(QuantizeAlgorithm::default(), Precision::Decimal(-1));
        quantize(&h, &mut i, None, 0, 0);
        // 2^4 = 16: 12345 -> 12352, 32767 -> 32768 kept in range, 24 ties to 32, 8 to 0.
        assert_eq!(i, Values::Short(vec![12352, 32767, -32768, 32, 0]));
    }

    #[test]
    fn frexp_and_pow2_are_exact() {
        assert_eq!(frexp(1.0), (0.5, 1));
        assert_eq!(frexp(-3.0), (-0.75, 2));
        assert_eq!(frexp(f64::MIN_POSITIVE / 4.0), (0.5, -1023));
        assert_eq!(pow2(-1074), f64::from_bits(1));
        assert_eq!(pow2(10), 1024.0);
    }
}
