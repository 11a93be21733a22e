//! Element-wise binary operations with broadcasting (ncbo; NCO manual, "ncbo netCDF
//! Binary Operator"): the result is missing wherever either operand is missing, and the
//! second operand may have fewer dimensions than the first (a subset, in order), its
//! values repeated over the dimensions it lacks.

use crate::error::{Error, Result};

/// The four operations of ncbo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// Addition.
    Add,
    /// Subtraction (first minus second).
    Sub,
    /// Multiplication.
    Mul,
    /// Division (first divided by second).
    Div,
}

impl BinOp {
    /// Parse NCO's names and synonyms: `add + addition`, `sbt - dff diff sub subtract
    /// subtraction`, `mlt * mult multiply multiplication`, `dvd / divide division`.
    ///
    /// Errors name the option `-y`.
    pub fn parse(s: &str) -> Result<BinOp> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "add" | "+" | "addition" => BinOp::Add,
            "sbt" | "-" | "dff" | "diff" | "sub" | "subtract" | "subtraction" => BinOp::Sub,
            "mlt" | "*" | "mult" | "multiply" | "multiplication" => BinOp::Mul,
            "dvd" | "/" | "divide" | "division" => BinOp::Div,
            _ => {
                return Err(Error::option(
                    "-y",
                    format!("unknown binary operation \"{s}\""),
                ))
            }
        })
    }

    /// Apply to two values.
    #[inline]
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
        }
    }
}

/// Index of the element of `small` (dimensions `small_dims`, a subsequence of
/// `big_dims` by name) that broadcasts onto each element of `big`.
///
/// Errors when `small_dims` is not an ordered subset of `big_dims` with equal lengths.
pub fn broadcast_map(
    big_dims: &[(String, usize)],
    small_dims: &[(String, usize)],
) -> Result<Option<Vec<usize>>> {
    if big_dims == small_dims {
        return Ok(None);
    }
    // Stride of each big dimension in the small array (0 when absent).
    let mut strides = vec![0usize; big_dims.len()];
    let mut pos = 0usize;
    for (name, len) in small_dims {
        let k = big_dims[pos..]
            .iter()
            .position(|(n, _)| n == name)
            .map(|p| p + pos)
            .ok_or_else(|| Error::msg(format!("dimension {name} of the second operand is not a dimension of the first (in order)")))?;
        if big_dims[k].1 != *len {
            return Err(Error::msg(format!(
                "dimension {name} has size {len} in the second operand but {} in the first",
                big_dims[k].1
            )));
        }
        pos = k + 1;
    }
    let mut acc = 1usize;
    for (name, len) in small_dims.iter().rev() {
        if let Some(k) = big_dims.iter().position(|(n, _)| n == name) {
            strides[k] = acc;
        }
        acc *= len;
    }
    let n: usize = big_dims.iter().map(|d| d.1).product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; big_dims.len()];
    for _ in 0..n {
        out.push(idx.iter().zip(&strides).map(|(i, s)| i * s).sum());
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < big_dims[k].1 {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(Some(out))
}

/// `a op b[map]` element by element, in parallel for large arrays; missing (`== fill`)
/// where either operand is missing. `a_fill`/`b_fill` are each operand's missing value,
/// `out_fill` the result's.
pub fn apply(
    op: BinOp,
    a: &[f64],
    a_fill: Option<f64>,
    b: &[f64],
    b_fill: Option<f64>,
    map: Option<&[usize]>,
    out_fill: f64,
) -> Vec<f64> {
    use rayon::prelude::*;
    let one = |(i, &x): (usize, &f64)| {
        let y = map.map_or_else(|| b[i], |m| b[m[i]]);
        if a_fill == Some(x) || b_fill == Some(y) {
            out_fill
        } else {
            op.apply(x, y)
        }
    };
    if a.len() < 1 << 16 {
        return a.iter().enumerate().map(one).collect();
    }
    let mut out = Vec::with_capacity(a.len());
    a.par_iter().enumerate().map(one).collect_into_vec(&mut out);
    out
}

/// Element-wise `a op b` directly in the operands' own floating type, when both are
/// NC_FLOAT or both NC_DOUBLE and `op` is not division (then the result equals NCO's
/// double-precision computation rounded back: sums, differences and products of two
/// floats are exact in double). Missing where either operand equals its fill; the
/// result's missing value is `out_fill`. `None` when the fast path does not apply.
pub fn apply_same_float(
    op: BinOp,
    a: &crate::types::Values,
    a_fill: Option<f64>,
    b: &crate::types::Values,
    b_fill: Option<f64>,
    out_fill: f64,
) -> Option<crate::types::Values> {
    use crate::types::{NcNum, Values};
    if op == BinOp::Div {
        return None;
    }
    // One pass without a branch per element (missing operands select the fill), the
    // operation chosen outside the loop, so the compiler vectorises it. Callers
    // parallelise over blocks.
    #[inline(always)]
    fn run<T: NcNum>(
        x: &[T],
        y: &[T],
        fills: (Option<f64>, Option<f64>, f64),
        f: impl Fn(T, T) -> T,
    ) -> Vec<T> {
        let (a_fill, b_fill, out_fill) = fills;
        let (ha, fa) = (a_fill.is_some(), T::from_f64(a_fill.unwrap_or(0.0)));
        let (hb, fb) = (b_fill.is_some(), T::from_f64(b_fill.unwrap_or(0.0)));
        let of = T::from_f64(out_fill);
        let mut out = vec![of; x.len().min(y.len())];
        for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
            let r = f(x, y);
            *o = if (ha & (x == fa)) | (hb & (y == fb)) {
                of
            } else {
                r
            };
        }
        out
    }
    macro_rules! run {
        ($x:expr, $y:expr, $t:ty, $variant:ident) => {{
            let fills = (a_fill, b_fill, out_fill);
            Some(Values::$variant(nco_base::cpu::with_avx2(
                #[inline(always)]
                || match op {
                    BinOp::Add => run::<$t>($x, $y, fills, |x, y| x + y),
                    BinOp::Sub => run::<$t>($x, $y, fills, |x, y| x - y),
                    _ => run::<$t>($x, $y, fills, |x, y| x * y),
                },
            )))
        }};
    }
    match (a, b) {
        (Values::Float(x), Values::Float(y)) if x.len() == y.len() => run!(x, y, f32, Float),
        (Values::Double(x), Values::Double(y)) if x.len() == y.len() => run!(x, y, f64, Double),
        _ => None,
    }
}

/// Element-wise `a op b` in exact integer arithmetic of the operands' own type, when
/// both are of one integer type and one length: double precision cannot hold the
/// 64-bit types' values past 2^53, nor the products of 32-bit ones (2000000001^2 needs
/// 62 bits), and NCO 5.1.4 computes integers in their own type, so its wrapped
/// results are exact modulo the type's width. Missing (the result's missing value
/// `out_fill`, the type's default when `None`) where an operand equals the pair's one
/// missing value, the first's fill value (`a_fill`) or else the second's (`b_fill`,
/// the `_FillValue` attributes' values, exact), or the second equals its own (NCO
/// 5.1.4's rule for operands of different missing values). Results past the type's range wrap around as C's (NCO's) do, counted in
/// the returned [`crate::cast::Casts`]; division truncates toward zero, and a zero
/// divisor gives the missing value, counted (NCO 5.1.4 stops with SIGFPE there).
/// `None` when the path does not apply.
pub fn apply_same_int(
    op: BinOp,
    a: &crate::types::Values,
    a_fill: Option<&crate::types::Values>,
    b: &crate::types::Values,
    b_fill: Option<&crate::types::Values>,
    out_fill: Option<&crate::types::Values>,
) -> Option<(crate::types::Values, usize, crate::cast::Casts)> {
    use crate::types::{NcNum, Values};
    /// One operation: the wrapped result and whether it wrapped; `None` for a zero
    /// divisor.
    type Step<T> = fn(T, T) -> Option<(T, bool)>;
    fn run<T: NcNum>(
        x: &[T],
        y: &[T],
        fills: [Option<&Values>; 3],
        f: Step<T>,
    ) -> Option<(Vec<T>, usize, crate::cast::Casts)> {
        let first = |v: Option<&Values>| v.and_then(|v| T::slice_of(v)?.first().copied());
        let (fa, fb) = (first(fills[0]), first(fills[1]));
        // One missing value for both (NCO's): the first's, else the second's; the
        // second's own is missing too.
        let m = fa.or(fb);
        let of = first(fills[2]).unwrap_or(T::DEFAULT_FILL);
        if x.len() != y.len() {
            return None;
        }
        let (mut zero, mut casts) = (0usize, crate::cast::Casts::default());
        let out = x
            .iter()
            .zip(y)
            .map(|(&x, &y)| {
                if Some(x) == m || Some(y) == m || Some(y) == fb {
                    return of;
                }
                match f(x, y) {
                    Some((r, wrapped)) => {
                        casts.wrapped += usize::from(wrapped);
                        r
                    }
                    None => {
                        zero += 1;
                        of
                    }
                }
            })
            .collect();
        Some((out, zero, casts))
    }
    macro_rules! step {
        ($t:ty) => {{
            let f: Step<$t> = match op {
                BinOp::Add => |x, y| Some(x.overflowing_add(y)),
                BinOp::Sub => |x, y| Some(x.overflowing_sub(y)),
                BinOp::Mul => |x, y| Some(x.overflowing_mul(y)),
                BinOp::Div => |x, y| (y != 0).then(|| x.overflowing_div(y)),
            };
            f
        }};
    }
    let fills = [a_fill, b_fill, out_fill];
    // One arm per integer type: the operands' own type, the result in it.
    macro_rules! same_type {
        ($($v:ident: $t:ty),*) => {
            match (a, b) {
                $((Values::$v(x), Values::$v(y)) => {
                    run(x, y, fills, step!($t)).map(|(v, z, c)| (Values::$v(v), z, c))
                })*
                _ => None,
            }
        };
    }
    same_type!(Byte: i8, UByte: u8, Short: i16, UShort: u16, Int: i32, UInt: u32, Int64: i64, UInt64: u64)
}

/// `w1*a + w2*b` element by element (ncflint's interpolation, computed as NCO does:
/// each operand weighted, then the two added), in parallel for large arrays; missing
/// (`out_fill`) where either operand is missing (`== a_fill` or `== b_fill`).
pub fn weighted_sum(
    w1: f64,
    a: &[f64],
    a_fill: Option<f64>,
    w2: f64,
    b: &[f64],
    b_fill: Option<f64>,
    out_fill: f64,
) -> Vec<f64> {
    use rayon::prelude::*;
    let one = |(&x, &y): (&f64, &f64)| {
        if a_fill == Some(x) || b_fill == Some(y) {
            out_fill
        } else {
            w1 * x + w2 * y
        }
    };
    if a.len() < 1 << 16 {
        return a.iter().zip(b).map(one).collect();
    }
    let mut out = Vec::with_capacity(a.len());
    a.par_iter().zip(b).map(one).collect_into_vec(&mut out);
    out
}

/// Round every element of `x` but those equal to `fill` as type `ty` stores it
/// ([`crate::types::NcNum::from_f64`]: to the nearest integer, ties to even, for the
/// integer types), keeping it as f64; text types leave `x` alone. ncflint does this
/// to the results of packed variables (NCO 5.1.4).
pub fn round_as(x: &mut [f64], ty: crate::types::NcType, fill: f64) {
    use crate::types::NcNum;
    fn run<T: NcNum>(x: &mut [f64], fill: f64) {
        for v in x.iter_mut().filter(|v| **v != fill) {
            *v = T::from_f64(*v).to_f64();
        }
    }
    nco_base::dispatch_type!(ty, T => run::<T>(x, fill); char => (); string => ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_type_float_path_equals_the_double_path() {
        use crate::types::Values;
        let x: Vec<f64> = (0..37).map(|i| f64::from(i) * 1.37 - 20.0).collect();
        let mut y: Vec<f64> = (0..37).map(|i| 3.1 - f64::from(i) * 0.77).collect();
        let mut x = x;
        x[3] = -999.0; // a's fill
        y[5] = 1e20; // b's fill
        x[7] = f64::NAN;
        for op in [BinOp::Add, BinOp::Sub, BinOp::Mul] {
            let want = apply(op, &x, Some(-999.0), &y, Some(1e20), None, -5.0);
            let d = apply_same_float(
                op,
                &Values::Double(x.clone()),
                Some(-999.0),
                &Values::Double(y.clone()),
                Some(1e20),
                -5.0,
            );
            let Some(Values::Double(d)) = d else {
                panic!("double path")
            };
            for (i, (a, b)) in d.iter().zip(&want).enumerate() {
                assert!(
                    a == b || (a.is_nan() && b.is_nan()),
                    "{op:?} {i}: {a} vs {b}"
                );
            }
            assert_eq!((d[3], d[5]), (-5.0, -5.0), "missing operands");
            let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let yf: Vec<f32> = y.iter().map(|&v| v as f32).collect();
            let (x2, y2): (Vec<f64>, Vec<f64>) = (
                xf.iter().map(|&v| f64::from(v)).collect(),
                yf.iter().map(|&v| f64::from(v)).collect(),
            );
            // The fill value as the float variable stores it.
            let fb = f64::from(1e20_f32);
            let want = apply(op, &x2, Some(-999.0), &y2, Some(fb), None, -5.0);
            let Some(Values::Float(f)) = apply_same_float(
                op,
                &Values::Float(xf),
                Some(-999.0),
                &Values::Float(yf),
                Some(1e20),
                -5.0,
            ) else {
                panic!("float path")
            };
            for (i, (a, b)) in f.iter().zip(&want).enumerate() {
                let b = *b as f32;
                assert!(
                    *a == b || (a.is_nan() && b.is_nan()),
                    "{op:?} {i}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn broadcast_lon_over_three_dims() {
        let big = vec![
            ("lat".to_string(), 2),
            ("lev".to_string(), 1),
            ("lon".to_string(), 3),
        ];
        let small = vec![("lon".to_string(), 3)];
        let m = broadcast_map(&big, &small).unwrap().unwrap();
        assert_eq!(m, vec![0, 1, 2, 0, 1, 2]);
        let small = vec![("lat".to_string(), 2)];
        let m = broadcast_map(&big, &small).unwrap().unwrap();
        assert_eq!(m, vec![0, 0, 0, 1, 1, 1]);
        assert!(broadcast_map(&big, &[("x".to_string(), 2)]).is_err());
        assert!(broadcast_map(&big, &[("lon".to_string(), 4)]).is_err());
    }

    #[test]
    fn sixty_four_bit_integers_are_exact() {
        use crate::types::{NcNum, Values};
        let a = Values::Int64(vec![9_007_199_254_740_993, 123_456_789_012_345_679, -5, 7]);
        let b = Values::Int64(vec![0, 1, -5, -2]);
        let fill = Values::Int64(vec![-5]);
        let (r, zero, casts) =
            apply_same_int(BinOp::Sub, &a, Some(&fill), &b, None, Some(&fill)).unwrap();
        assert!(
            matches!(r, Values::Int64(ref v) if v == &[9_007_199_254_740_993, 123_456_789_012_345_678, -5, 9])
        );
        assert_eq!((zero, casts.wrapped), (0, 0));
        // A zero divisor is missing (counted), the others exact.
        let (r, zero, _) = apply_same_int(BinOp::Div, &a, None, &b, None, None).unwrap();
        assert!(
            matches!(r, Values::Int64(ref v) if v == &[i64::DEFAULT_FILL, 123_456_789_012_345_679, 1, -3])
        );
        assert_eq!(zero, 1);
        // Overflow wraps, as C's does, counted.
        let big = Values::Int64(vec![i64::MAX, 9_007_199_254_740_993]);
        let one = Values::Int64(vec![1, 2]);
        let (r, _, casts) = apply_same_int(BinOp::Add, &big, None, &one, None, None).unwrap();
        assert!(matches!(r, Values::Int64(ref v) if v == &[i64::MIN, 9_007_199_254_740_995]));
        assert_eq!(casts.wrapped, 1);
        let u = Values::UInt64(vec![u64::MAX, 7]);
        let (r, _, _) = apply_same_int(
            BinOp::Div,
            &u,
            None,
            &Values::UInt64(vec![1, 2]),
            None,
            None,
        )
        .unwrap();
        assert!(matches!(r, Values::UInt64(ref v) if v == &[u64::MAX, 3]));
    }

    #[test]
    fn missing_propagates() {
        let r = apply(
            BinOp::Sub,
            &[1.0, 5.0],
            Some(5.0),
            &[1.0, 1.0],
            None,
            None,
            -1.0,
        );
        assert_eq!(r, vec![0.0, -1.0]);
        assert_eq!(BinOp::parse("-").unwrap(), BinOp::Sub);
        assert!(BinOp::parse("pow").is_err());
    }
}
