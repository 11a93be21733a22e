//! The arithmetic of packing with `scale_factor`/`add_offset` (NCO manual, "Packed
//! data"; CF §8.1): unpacking one value or a buffer, NCO 5.1.4's packing parameters
//! and its packing loops. Reading the parameters from a variable's attributes is a
//! rule of the layer above (`nco_core::packing::packing_of`).
//!
//! Unpacking (netCDF convention): `unpacked = scale_factor * packed + add_offset`;
//! with `--hdf_upk` the HDF convention `scale_factor * (packed - add_offset)`.

use crate::types::NcType;

/// Packing parameters of a variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packing {
    /// `scale_factor` (1 when absent).
    pub scale_factor: f64,
    /// `add_offset` (0 when absent).
    pub add_offset: f64,
    /// Type of the unpacked data (type of the packing attributes).
    pub unpacked_type: NcType,
    /// HDF convention (`--hdf_upk`).
    pub hdf: bool,
}

impl Packing {
    /// Unpack one value.
    #[inline]
    pub fn unpack(&self, x: f64) -> f64 {
        if self.hdf {
            self.scale_factor * (x - self.add_offset)
        } else {
            self.scale_factor * x + self.add_offset
        }
    }
}

/// Unpack `x` into single precision when the unpacked type is NC_FLOAT, computing in
/// single precision as NCO 5.1.4's ncpdq does (`scale_factor * x + add_offset` in
/// float, or `scale_factor * (x - add_offset)` with `hdf`; the double-precision
/// result rounded to float differs in the last bit for about a third of the values).
/// Elements equal to `fill` (the packed missing value) become `out_fill`. `None`
/// when the unpacked type is not NC_FLOAT or `x` is not numeric.
pub fn unpack_single(
    x: &crate::types::Values,
    fill: Option<f64>,
    p: &Packing,
    out_fill: f64,
) -> Option<crate::types::Values> {
    use crate::types::{NcNum, Values};
    fn conv<T: NcNum>(x: &[T], fill: Option<f64>, p: &Packing, out_fill: f64) -> Values {
        let fill = fill.map(T::from_f64);
        let (sf, ao, of) = (p.scale_factor as f32, p.add_offset as f32, out_fill as f32);
        Values::Float(
            x.iter()
                .map(|&e| {
                    let v = e.to_f64() as f32;
                    if fill == Some(e) {
                        of
                    } else if p.hdf {
                        sf * (v - ao)
                    } else {
                        sf * v + ao
                    }
                })
                .collect(),
        )
    }
    if p.unpacked_type != NcType::Float || !x.nc_type().is_numeric() {
        return None;
    }
    Some(crate::dispatch!(x, v => conv(v, fill, p, out_fill);
        char _c => unreachable!("numeric");
        string _s => unreachable!("numeric")))
}

/// Spread of packed integer values NCO 5.1.4 uses for each packed type (the packed
/// data fill `[-ndrv/2, ndrv/2]`, keeping the type's default fill value free).
pub fn pack_range(ty: NcType) -> Option<f64> {
    Some(match ty {
        NcType::Byte | NcType::UByte => 254.0,
        NcType::Short | NcType::UShort => 65532.0,
        NcType::Int | NcType::UInt => 4_294_967_293.0,
        _ => return None,
    })
}

/// Pack the whole of `x` (unpacked stored values, missing elements equal to `missing`)
/// into integer type `ty` as NCO 5.1.4 does (nco_pck.c behaviour): `add_offset =
/// (min+max)/2`, `scale_factor = (min-max)/ndrv` (negative, as NCO's code has it),
/// `packed = lrint((x-add_offset)/scale_factor)`; a constant field gets scale 0 and
/// offset = the value. Missing and non-finite elements become the packed type's
/// default fill value (NCO writes 0 there and keeps the unpacked `_FillValue`, which
/// collides with real data; see README). A packed value that does not fit `ty`
/// becomes the fill value too ([`pack_with`]). Returns the packed
/// values, (scale_factor, add_offset) and the number of values that did not fit; `None`
/// for a type that does not pack. ncpdq does the same in two streamed passes (range,
/// then blocks).
pub fn pack(
    x: &crate::types::Values,
    missing: Option<f64>,
    ty: NcType,
) -> Option<(crate::types::Values, f64, f64, usize)> {
    let r = crate::valid_range(x, missing, None);
    let (lo, hi) = if r.lo > r.hi {
        (0.0, 0.0)
    } else {
        (r.lo, r.hi)
    };
    let work = x.nc_type();
    let (sf, ao) = pack_params_for(lo, hi, ty, work)?;
    let (packed, unfit) = match pack_float(x, missing, ty, sf, ao) {
        Some(p) => p,
        None => pack_with(&x.to_f64_vec()?, missing, ty, sf, ao, work)?,
    };
    Some((packed, sf, ao, unfit))
}

/// `(scale_factor, add_offset)` NCO 5.1.4 chooses for data in `[min, max]` packed into
/// `ty` (see [`pack`]); `None` for a type that does not pack.
pub fn pack_params(min: f64, max: f64, ty: NcType) -> Option<(f64, f64)> {
    let ndrv = pack_range(ty)?;
    let ao = (min + max) / 2.0;
    let sf = if max == min { 0.0 } else { (min - max) / ndrv };
    Some((sf, ao))
}

/// [`pack_params`] for data of type `work`: for integer data the parameters are stored
/// in that type, so they are rounded (ties to even) to integers, and a scale that
/// rounds to 0 (a range narrower than the packed type's) becomes 1, which is not
/// written: the data are packed as `x - add_offset`, as NCO 5.1.4 does (`ncpdq -M
/// nxt_lsr` on a short ranging over -10..25 writes `add_offset = 8s` and no
/// `scale_factor`). A constant field keeps scale 0 (no attribute either).
pub fn pack_params_for(min: f64, max: f64, ty: NcType, work: NcType) -> Option<(f64, f64)> {
    let (sf, ao) = pack_params(min, max, ty)?;
    if work.is_float() || sf == 0.0 {
        return Some((sf, ao));
    }
    let r = sf.round_ties_even();
    let sf = if r == 0.0 { 1.0 } else { r };
    Some((sf, ao.round_ties_even()))
}

/// Pack with known parameters; missing (or non-finite) values become the packed
/// type's default fill value. The arithmetic `(x - add_offset) / scale_factor` runs in
/// the unpacked type `work`, as NCO 5.1.4 does (checked element by element against its
/// output): single precision for NC_FLOAT, double for NC_DOUBLE, and for integer types
/// integer arithmetic with the parameters rounded to that type and a truncating
/// division (lossy, but NCO's; the parameters are stored in that type too). A packed
/// value outside `ty`'s range becomes the fill value by the overflow-safe cast
/// ([`crate::cast`]; NCO keeps the low bits, so the value unpacks to an unrelated
/// number); a packed value equal to the fill value (the minimum packs to it) is kept,
/// as NCO keeps it. Returns the packed values and the number that did not fit.
pub fn pack_with(
    x: &[f64],
    missing: Option<f64>,
    ty: NcType,
    sf: f64,
    ao: f64,
    work: NcType,
) -> Option<(crate::types::Values, usize)> {
    use crate::types::NcNum;
    fn conv<T: NcNum>(
        x: &[f64],
        missing: Option<f64>,
        sf: f64,
        ao: f64,
        work: NcType,
    ) -> (crate::types::Values, usize) {
        let fill = T::DEFAULT_FILL;
        let (sf32, ao32) = (sf as f32, ao as f32);
        let (sfi, aoi) = (sf.round_ties_even() as i64, ao.round_ties_even() as i64);
        let mut unfit = 0usize;
        let mut put = |q: f64| {
            let (p, ok) = crate::cast::cast_or(q, fill);
            unfit += usize::from(!ok);
            p
        };
        let packed = x
            .iter()
            .map(|&v| {
                if Some(v) == missing || !v.is_finite() {
                    fill
                } else if sf == 0.0 {
                    T::from_f64(0.0)
                } else if work == NcType::Float {
                    put(f64::from((v as f32 - ao32) / sf32))
                } else if work.is_float() {
                    put((v - ao) / sf)
                } else if sfi == 0 {
                    T::from_f64(0.0)
                } else {
                    put(((v as i64 - aoi) / sfi) as f64)
                }
            })
            .collect();
        (T::into_values(packed), unfit)
    }
    if !ty.is_numeric() {
        return None;
    }
    Some(
        crate::dispatch_type!(ty, T => conv::<T>(x, missing, sf, ao, work);
        char => (crate::types::Values::Char(Vec::new()), 0);
        string => (crate::types::Values::Str(Vec::new()), 0)),
    )
}

/// Floating-point element types, which pack in their own precision.
trait Real: crate::types::NcNum + std::ops::Sub<Output = Self> + std::ops::Div<Output = Self> {
    const NAN: Self;
}
impl Real for f32 {
    const NAN: f32 = f32::NAN;
}
impl Real for f64 {
    const NAN: f64 = f64::NAN;
}

/// [`pack_with`] for unpacked floating-point data (NC_FLOAT or NC_DOUBLE, the work type
/// being the data's own type, as NCO 5.1.4 has it) straight from the stored values:
/// elements equal to `fill` (the variable's missing value, in its type) or not finite
/// become the packed type's default fill value. Same results (and count of values that
/// do not fit) as [`pack_with`] element for element, without the f64 copy or a branch
/// per element, so the compiler vectorises it. `None` when `x` is not floating point or
/// `ty` does not pack.
pub fn pack_float(
    x: &crate::types::Values,
    fill: Option<f64>,
    ty: NcType,
    sf: f64,
    ao: f64,
) -> Option<(crate::types::Values, usize)> {
    use crate::types::{NcNum, Values};
    use nco_base::cpu::with_avx2;
    #[inline(always)]
    fn kernel<S: Real, P: NcNum>(x: &[S], fill: Option<f64>, sf: f64, ao: f64) -> (Values, usize) {
        // No fill: NaN equals nothing.
        let fl = fill.map_or(S::NAN, S::from_f64);
        let missing = |v: S| (v == fl) | !v.to_f64().is_finite();
        let mut unfit = 0usize;
        let packed: Vec<P> = if sf == 0.0 {
            let zero = P::from_f64(0.0);
            x.iter()
                .map(|&v| if missing(v) { P::DEFAULT_FILL } else { zero })
                .collect()
        } else {
            let (sfs, aos) = (S::from_f64(sf), S::from_f64(ao));
            let q = |v: S| ((v - aos) / sfs).to_f64();
            // Blocks of 2048 quotients (in L1), each pass over them without a branch,
            // so the compiler vectorises it. For |q| < 2^51, q + 1.5*2^52 rounds q to an
            // integer n (ties to even) and its low 32 mantissa bits are n's low 32 bits,
            // which give the packed value (at most 32 bits) when n fits the packed type;
            // otherwise (or when n is the packed fill value) the element becomes the
            // fill value, as [`crate::cast`] has it. A block with a larger valid quotient
            // (only from absurd parameters) is done again element by element.
            const BLOCK: usize = 2048;
            const MAGIC: f64 = 6_755_399_441_055_744.0;
            const TWO51: f64 = 2_251_799_813_685_248.0;
            debug_assert!(P::SIZE <= 4, "packed types have at most 32 bits");
            let mut packed: Vec<P> = Vec::with_capacity(x.len());
            let mut qs = [0f64; BLOCK];
            for c in x.chunks(BLOCK) {
                let qs = &mut qs[..c.len()];
                for (o, &v) in qs.iter_mut().zip(c) {
                    *o = q(v);
                }
                // `!(|q| < 2^51)` on purpose: it is true for a NaN quotient too, which
                // must count as large.
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let large = qs
                    .iter()
                    .zip(c)
                    .fold(false, |w, (&q, &v)| w | (!(q.abs() < TWO51) & !missing(v)));
                if large {
                    packed.extend(c.iter().map(|&v| {
                        if missing(v) {
                            P::DEFAULT_FILL
                        } else {
                            let (p, ok) = crate::cast::cast_or(q(v), P::DEFAULT_FILL);
                            unfit += usize::from(!ok);
                            p
                        }
                    }));
                } else {
                    let start = packed.len();
                    packed.resize(start + c.len(), P::DEFAULT_FILL);
                    for ((o, &q), &v) in packed[start..].iter_mut().zip(qs.iter()).zip(c) {
                        let shifted = q + MAGIC;
                        let low = shifted.to_bits() as u32 as i32;
                        let p = P::from_i64_wrapping(i64::from(low));
                        let fits = P::fits(shifted - MAGIC);
                        let miss = missing(v);
                        unfit += usize::from(!miss & !fits);
                        *o = if miss | !fits { P::DEFAULT_FILL } else { p };
                    }
                }
            }
            packed
        };
        (P::into_values(packed), unfit)
    }
    fn to<P: NcNum>(x: &Values, fill: Option<f64>, sf: f64, ao: f64) -> Option<(Values, usize)> {
        match x {
            Values::Float(v) => Some(with_avx2(|| kernel::<f32, P>(v, fill, sf, ao))),
            Values::Double(v) => Some(with_avx2(|| kernel::<f64, P>(v, fill, sf, ao))),
            _ => None,
        }
    }
    pack_range(ty)?;
    crate::dispatch_type!(ty, P => to::<P>(x, fill, sf, ao);
        char => None;
        string => None)
}

#[cfg(test)]
mod pack_tests {
    use super::*;
    use crate::types::Values;

    #[test]
    fn packs_like_nco_5_1_4() {
        let x: Vec<f64> = (0..24).map(f64::from).collect();
        let (v, sf, ao, unfit) = pack(&Values::Double(x), None, NcType::Short).unwrap();
        assert_eq!(unfit, 0);
        assert_eq!(ao, 11.5);
        assert!((sf as f32 - (-0.000_350_973_6_f32)).abs() < 1e-10);
        let Values::Short(s) = v else {
            panic!("short expected")
        };
        assert_eq!((s[0], s[1], s[23]), (32766, 29917, -32766));
        let (v, sf, ao, _) =
            pack(&Values::Double(vec![3.0, 1e36]), Some(1e36), NcType::Short).unwrap();
        assert_eq!((sf, ao), (0.0, 3.0));
        assert_eq!(
            v,
            Values::Short(vec![0, -32767]),
            "missing goes to the packed fill"
        );
    }

    #[test]
    fn pack_float_equals_pack_with() {
        let mut x: Vec<f64> = (0..997)
            .map(|i| (f64::from(i) * 0.37).sin() * 250.0 + 3.0)
            .collect();
        x.extend([1e36, f64::NAN, f64::INFINITY, -f64::INFINITY, 0.0, -0.0]);
        for (ty, src) in [(NcType::Float, true), (NcType::Double, false)] {
            let stored = if src {
                Values::Float(x.iter().map(|&v| v as f32).collect())
            } else {
                Values::Double(x.clone())
            };
            let back: Vec<f64> = stored.to_f64_vec().unwrap();
            for fill in [None, Some(1e36)] {
                // pack_with sees the missing value as the fill, like ncpdq's unpacked f64 copy
                let stored_fill = fill.map(|f| if src { f64::from(f as f32) } else { f });
                for pty in [
                    NcType::Byte,
                    NcType::UByte,
                    NcType::Short,
                    NcType::UShort,
                    NcType::Int,
                    NcType::UInt,
                ] {
                    for (sf, ao) in [
                        pack_params(-247.0, 253.0, pty).unwrap(),
                        (0.0, 5.0),
                        (-0.01, 1.0),
                    ] {
                        let fast = pack_float(&stored, stored_fill, pty, sf, ao).unwrap();
                        let slow = pack_with(&back, stored_fill, pty, sf, ao, ty).unwrap();
                        if (sf, ao) == (-0.01, 1.0) && pty == NcType::Byte {
                            assert!(slow.1 > 0, "values beyond the byte range are counted");
                        }
                        assert_eq!(
                            fast, slow,
                            "{ty:?} -> {pty:?} sf {sf} ao {ao} fill {fill:?}"
                        );
                    }
                }
            }
        }
        assert!(pack_float(&Values::Int(vec![1]), None, NcType::Short, 1.0, 0.0).is_none());
        // Integer data whose NCO parameters (scale rounded to -1) spread it beyond a
        // byte: the values that do not fit become the fill value and are counted,
        // where NCO wraps (0 packs as -66 and unpacks as 256).
        let (sf, ao) = pack_params_for(0.0, 380.0, NcType::Byte, NcType::Int).unwrap();
        assert_eq!((sf, ao), (-1.0, 190.0));
        let (v, unfit) = pack_with(
            &[0.0, 190.0, 380.0, 63.0],
            None,
            NcType::Byte,
            sf,
            ao,
            NcType::Int,
        )
        .unwrap();
        assert_eq!((v, unfit), (Values::Byte(vec![-127, 0, -127, 127]), 2));
        assert!(pack_float(&Values::Float(vec![1.0]), None, NcType::Float, 1.0, 0.0).is_none());
    }
}
