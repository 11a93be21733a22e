//! netCDF external types, the [`NcNum`] trait over the ten numeric types, and the
//! runtime-typed buffer [`Values`].
//!
//! The list of numeric types appears only in two macros of this module:
//! `impl_nc_num!` (the trait implementations) and [`dispatch!`](crate::dispatch)
//! (runtime tag to monomorphised generic call). Kernels are ordinary generic functions
//! bounded on [`NcNum`]; they are never copied per type.
//!
//! Source of the type codes, sizes and default fill values: the netCDF User Guide,
//! "Data Types" and `netcdf.h` (`NC_FILL_*`).

use std::fmt;

/// A netCDF external data type (the `nc_type` of the C library).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NcType {
    /// NC_BYTE: signed 8-bit integer.
    Byte,
    /// NC_CHAR: 8-bit character (text).
    Char,
    /// NC_SHORT: signed 16-bit integer.
    Short,
    /// NC_INT: signed 32-bit integer.
    Int,
    /// NC_FLOAT: IEEE 754 single precision.
    Float,
    /// NC_DOUBLE: IEEE 754 double precision.
    Double,
    /// NC_UBYTE: unsigned 8-bit integer (netCDF-4 and CDF-5).
    UByte,
    /// NC_USHORT: unsigned 16-bit integer (netCDF-4 and CDF-5).
    UShort,
    /// NC_UINT: unsigned 32-bit integer (netCDF-4 and CDF-5).
    UInt,
    /// NC_INT64: signed 64-bit integer (netCDF-4 and CDF-5).
    Int64,
    /// NC_UINT64: unsigned 64-bit integer (netCDF-4 and CDF-5).
    UInt64,
    /// NC_STRING: variable-length string (netCDF-4 only).
    Str,
}

impl NcType {
    /// The `nc_type` code of `netcdf.h` (NC_BYTE = 1 ... NC_STRING = 12).
    pub fn code(self) -> i32 {
        match self {
            NcType::Byte => 1,
            NcType::Char => 2,
            NcType::Short => 3,
            NcType::Int => 4,
            NcType::Float => 5,
            NcType::Double => 6,
            NcType::UByte => 7,
            NcType::UShort => 8,
            NcType::UInt => 9,
            NcType::Int64 => 10,
            NcType::UInt64 => 11,
            NcType::Str => 12,
        }
    }

    /// The type for an `nc_type` code, `None` for codes outside 1..=12.
    pub fn from_code(code: i32) -> Option<NcType> {
        Some(match code {
            1 => NcType::Byte,
            2 => NcType::Char,
            3 => NcType::Short,
            4 => NcType::Int,
            5 => NcType::Float,
            6 => NcType::Double,
            7 => NcType::UByte,
            8 => NcType::UShort,
            9 => NcType::UInt,
            10 => NcType::Int64,
            11 => NcType::UInt64,
            12 => NcType::Str,
            _ => return None,
        })
    }

    /// Size of one element in bytes (a string is counted as one pointer-sized handle: 8).
    pub fn size(self) -> usize {
        match self {
            NcType::Byte | NcType::Char | NcType::UByte => 1,
            NcType::Short | NcType::UShort => 2,
            NcType::Int | NcType::UInt | NcType::Float => 4,
            NcType::Double | NcType::Int64 | NcType::UInt64 | NcType::Str => 8,
        }
    }

    /// The C-library name, as NCO prints it in `--trd` metadata (`NC_FLOAT`).
    pub fn nc_name(self) -> &'static str {
        match self {
            NcType::Byte => "NC_BYTE",
            NcType::Char => "NC_CHAR",
            NcType::Short => "NC_SHORT",
            NcType::Int => "NC_INT",
            NcType::Float => "NC_FLOAT",
            NcType::Double => "NC_DOUBLE",
            NcType::UByte => "NC_UBYTE",
            NcType::UShort => "NC_USHORT",
            NcType::UInt => "NC_UINT",
            NcType::Int64 => "NC_INT64",
            NcType::UInt64 => "NC_UINT64",
            NcType::Str => "NC_STRING",
        }
    }

    /// The CDL keyword (`float`, `ushort`, `string`...), as ncdump and `ncks --cdl` print it.
    pub fn cdl_name(self) -> &'static str {
        match self {
            NcType::Byte => "byte",
            NcType::Char => "char",
            NcType::Short => "short",
            NcType::Int => "int",
            NcType::Float => "float",
            NcType::Double => "double",
            NcType::UByte => "ubyte",
            NcType::UShort => "ushort",
            NcType::UInt => "uint",
            NcType::Int64 => "int64",
            NcType::UInt64 => "uint64",
            NcType::Str => "string",
        }
    }

    /// True for the six types of the classic data model (CDF-1/CDF-2 files).
    pub fn is_classic(self) -> bool {
        matches!(
            self,
            NcType::Byte
                | NcType::Char
                | NcType::Short
                | NcType::Int
                | NcType::Float
                | NcType::Double
        )
    }

    /// True for the ten numeric types (everything but NC_CHAR and NC_STRING).
    pub fn is_numeric(self) -> bool {
        !matches!(self, NcType::Char | NcType::Str)
    }

    /// True for NC_FLOAT and NC_DOUBLE.
    pub fn is_float(self) -> bool {
        matches!(self, NcType::Float | NcType::Double)
    }

    /// Rank of the type in NCO's arithmetic promotion order: a binary operation on two
    /// variables gives the type with the higher rank (NCO manual, "Type Conversion").
    pub fn precision_rank(self) -> u8 {
        match self {
            NcType::Char | NcType::Str => 0,
            NcType::Byte => 1,
            NcType::UByte => 2,
            NcType::Short => 3,
            NcType::UShort => 4,
            NcType::Int => 5,
            NcType::UInt => 6,
            NcType::Int64 => 7,
            NcType::UInt64 => 8,
            NcType::Float => 9,
            NcType::Double => 10,
        }
    }
}

impl fmt::Display for NcType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.nc_name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The ten numeric netCDF types as Rust types: i8, u8, i16, u16, i32, u32, i64, u64, f32, f64.
///
/// Sealed: implemented only by this module's `impl_nc_num!` macro.
pub trait NcNum:
    sealed::Sealed + Copy + Send + Sync + PartialEq + PartialOrd + Default + fmt::Debug + 'static
{
    /// The netCDF type tag.
    const TYPE: NcType;
    /// The library default fill value (`NC_FILL_*` of `netcdf.h`).
    const DEFAULT_FILL: Self;
    /// Size in bytes.
    const SIZE: usize;
    /// Exact for all integers up to 2^53 and for floats.
    fn to_f64(self) -> f64;
    /// Conversion as NCO does it (`nco_var_cnf_typ`): to integer types by rounding to
    /// the nearest integer with ties to even (C's `lrint` in the default rounding mode)
    /// and then keeping the low bits, as C's integer cast does, so an out-of-range value
    /// wraps (`ncwa -y ttl` on NC_SHORT 17000+17000 gives -31536 in NCO); NaN gives 0.
    /// For values known to fit (attributes already in range, fill values, exact
    /// integers); computed outputs go through [`NcNum::from_f64_checked`].
    fn from_f64(x: f64) -> Self;
    /// Decode one big-endian element (the classic format's byte order); `b.len() == SIZE`.
    fn from_be(b: &[u8]) -> Self;
    /// Encode one element big-endian into `out` (`out.len() == SIZE`).
    fn write_be(self, out: &mut [u8]);
    /// Decode one native-endian element.
    fn from_ne(b: &[u8]) -> Self;
    /// Append the element's native-endian bytes to `out`.
    fn extend_ne(self, out: &mut Vec<u8>);
    /// The overflow-safe conversion, the project's rule wherever a computed f64 becomes an
    /// element of an output (averages, sums, differences, packed and unpacked values,
    /// casts): integer types round as [`NcNum::from_f64`] does (nearest, ties to even)
    /// and give `None` when `x` is NaN or infinite or rounds outside the type's range;
    /// floating types take every value (IEEE rounding: a double beyond NC_FLOAT's range
    /// becomes an infinity, as single-precision arithmetic would give). Callers write the output
    /// variable's fill value for `None` and count it (see `nco_kernels::cast`); NCO
    /// wraps instead (README, compatibility notes).
    fn from_f64_checked(x: f64) -> Option<Self>;
    /// True when [`NcNum::from_f64_checked`] converts `x` (`x` fits the type).
    #[inline]
    fn fits(x: f64) -> bool {
        Self::from_f64_checked(x).is_some()
    }
    /// Wrap the vector into the matching [`Values`] variant.
    fn into_values(v: Vec<Self>) -> Values;
    /// Borrow the matching variant's vector, `None` for another type.
    fn slice_of(v: &Values) -> Option<&[Self]>;
    /// Mutably borrow the matching variant's vector, `None` for another type.
    fn vec_of_mut(v: &mut Values) -> Option<&mut Vec<Self>>;
    /// Wrapping conversion from i64, as C integer assignment truncates (used where NCO
    /// wraps, e.g. `ncwa -y ttl` on NC_SHORT).
    fn from_i64_wrapping(x: i64) -> Self;
    /// The value's two's-complement bits as i64, as C's cast to a 64-bit integer keeps
    /// them (an NC_UINT64 beyond i64's range becomes negative; floats saturate). With
    /// [`NcNum::from_i64_wrapping`] it gives C's integer assignment between any two
    /// integer types (keeping the low bits).
    fn to_i64_wrapping(self) -> i64;
}

/// Round to the nearest integer, ties to even (C's `rint`/`lrint` in the default
/// rounding mode), without a libm call and without a branch (the compiler vectorises
/// it): adding and removing 2^52 to |x| rounds in the FPU's round-to-nearest-even mode
/// for |x| < 2^52, where every sum has a unit in the last place of 1; larger values are
/// integers already. The sign (and C's `-0.0` for small negatives) is put back after.
#[inline(always)]
pub fn round_ties_even_fast(x: f64) -> f64 {
    const TWO52: f64 = 4_503_599_627_370_496.0;
    let a = x.abs();
    let r = if a < TWO52 { (a + TWO52) - TWO52 } else { a };
    r.copysign(x)
}

/// The parts of an [`NcNum`] implementation that differ between integer and floating
/// types: conversion from f64 and the range check.
macro_rules! nc_num_conversions {
    (int, $t:ty, $tag:ident) => {
        #[inline]
        fn from_f64(x: f64) -> Self {
            // Native conversions only (no i128 or libm calls on the hot path):
            // f64 -> i64/u64 saturate (NaN -> 0), then the cast keeps the low bits.
            let r = round_ties_even_fast(x);
            if NcType::$tag as u8 == NcType::UInt64 as u8 && r >= 0.0 {
                (r as u64) as $t
            } else {
                (r as i64) as $t
            }
        }
        #[inline(always)]
        fn from_f64_checked(x: f64) -> Option<Self> {
            // Selects only (no branch), so loops over it vectorise. The bounds are exact
            // in f64 for types up to 32 bits; for the 64-bit types MAX rounds up to
            // 2^63 or 2^64, which does not fit, hence the strict comparison there.
            let r = round_ties_even_fast(x);
            let hi = <$t>::MAX as f64;
            let wide = std::mem::size_of::<$t>() == 8;
            let ok = (r >= <$t>::MIN as f64) & ((r < hi) | ((r == hi) & !wide));
            ok.then(|| Self::from_f64(r))
        }
    };
    (float, $t:ty, $tag:ident) => {
        #[inline]
        fn from_f64(x: f64) -> Self {
            x as $t
        }
        #[inline(always)]
        fn from_f64_checked(x: f64) -> Option<Self> {
            Some(x as $t)
        }
    };
}

macro_rules! impl_nc_num {
    ($kind:ident: $($t:ty => $tag:ident, $fill:expr, $variant:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl NcNum for $t {
            const TYPE: NcType = NcType::$tag;
            const DEFAULT_FILL: Self = $fill;
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn to_f64(self) -> f64 { self as f64 }
            nc_num_conversions!($kind, $t, $tag);
            #[inline]
            fn from_be(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_be_bytes(a)
            }
            #[inline]
            fn write_be(self, out: &mut [u8]) { out.copy_from_slice(&self.to_be_bytes()); }
            #[inline]
            fn from_ne(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_ne_bytes(a)
            }
            #[inline]
            fn extend_ne(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_ne_bytes()); }
            fn into_values(v: Vec<Self>) -> Values { Values::$variant(v) }
            fn slice_of(v: &Values) -> Option<&[Self]> {
                if let Values::$variant(x) = v { Some(x) } else { None }
            }
            fn vec_of_mut(v: &mut Values) -> Option<&mut Vec<Self>> {
                if let Values::$variant(x) = v { Some(x) } else { None }
            }
            #[inline]
            fn from_i64_wrapping(x: i64) -> Self { x as $t }
            #[inline]
            fn to_i64_wrapping(self) -> i64 { self as i64 }
        }
    )*};
}

impl_nc_num! { int:
    i8 => Byte, -127, Byte;
    u8 => UByte, 255, UByte;
    i16 => Short, -32767, Short;
    u16 => UShort, 65535, UShort;
    i32 => Int, -2_147_483_647, Int;
    u32 => UInt, 4_294_967_295, UInt;
    i64 => Int64, -9_223_372_036_854_775_806, Int64;
    u64 => UInt64, 18_446_744_073_709_551_614, UInt64;
}
impl_nc_num! { float:
    f32 => Float, 9.969_21e36, Float;
    f64 => Double, 9.969_209_968_386_869e36, Double;
}

/// A runtime-typed buffer of netCDF values: variable data (row-major, C order) or an
/// attribute's value. NC_CHAR is kept as raw bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// NC_BYTE
    Byte(Vec<i8>),
    /// NC_CHAR (raw bytes, not necessarily UTF-8 nor NUL-free)
    Char(Vec<u8>),
    /// NC_SHORT
    Short(Vec<i16>),
    /// NC_INT
    Int(Vec<i32>),
    /// NC_FLOAT
    Float(Vec<f32>),
    /// NC_DOUBLE
    Double(Vec<f64>),
    /// NC_UBYTE
    UByte(Vec<u8>),
    /// NC_USHORT
    UShort(Vec<u16>),
    /// NC_UINT
    UInt(Vec<u32>),
    /// NC_INT64
    Int64(Vec<i64>),
    /// NC_UINT64
    UInt64(Vec<u64>),
    /// NC_STRING
    Str(Vec<String>),
}

/// Call a generic function on the typed vector inside a [`Values`].
///
/// `dispatch!(values, v => expr)` binds `v` to the inner `Vec<T>` (or `&Vec<T>`,
/// `&mut Vec<T>` following how `values` is passed) for each numeric variant and
/// evaluates `expr`; the `char` and `string` arms are given after `;`.
///
/// ```ignore
/// let n = dispatch!(&vals, v => v.len(); char c => c.len(); string s => s.len());
/// ```
#[macro_export]
macro_rules! dispatch {
    ($val:expr, $v:ident => $num:expr; char $c:ident => $chr:expr; string $s:ident => $str:expr) => {
        match $val {
            $crate::types::Values::Byte($v) => $num,
            $crate::types::Values::Short($v) => $num,
            $crate::types::Values::Int($v) => $num,
            $crate::types::Values::Float($v) => $num,
            $crate::types::Values::Double($v) => $num,
            $crate::types::Values::UByte($v) => $num,
            $crate::types::Values::UShort($v) => $num,
            $crate::types::Values::UInt($v) => $num,
            $crate::types::Values::Int64($v) => $num,
            $crate::types::Values::UInt64($v) => $num,
            $crate::types::Values::Char($c) => $chr,
            $crate::types::Values::Str($s) => $str,
        }
    };
}

/// Call a generic function for a runtime [`NcType`]: `dispatch_type!(ty, T => expr;
/// char => e1; string => e2)` evaluates `expr` with the type alias `T` bound to the
/// matching Rust numeric type.
#[macro_export]
macro_rules! dispatch_type {
    ($ty:expr, $T:ident => $num:expr; char => $chr:expr; string => $str:expr) => {
        match $ty {
            $crate::types::NcType::Byte => {
                type $T = i8;
                $num
            }
            $crate::types::NcType::Short => {
                type $T = i16;
                $num
            }
            $crate::types::NcType::Int => {
                type $T = i32;
                $num
            }
            $crate::types::NcType::Float => {
                type $T = f32;
                $num
            }
            $crate::types::NcType::Double => {
                type $T = f64;
                $num
            }
            $crate::types::NcType::UByte => {
                type $T = u8;
                $num
            }
            $crate::types::NcType::UShort => {
                type $T = u16;
                $num
            }
            $crate::types::NcType::UInt => {
                type $T = u32;
                $num
            }
            $crate::types::NcType::Int64 => {
                type $T = i64;
                $num
            }
            $crate::types::NcType::UInt64 => {
                type $T = u64;
                $num
            }
            $crate::types::NcType::Char => $chr,
            $crate::types::NcType::Str => $str,
        }
    };
}

impl Values {
    /// The netCDF type of the buffer.
    pub fn nc_type(&self) -> NcType {
        dispatch!(self, v => elem_type(v); char _c => NcType::Char; string _s => NcType::Str)
    }

    /// Number of elements (bytes for NC_CHAR).
    pub fn len(&self) -> usize {
        dispatch!(self, v => v.len(); char c => c.len(); string s => s.len())
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An empty buffer of type `ty` with room for `cap` elements.
    pub fn with_capacity(ty: NcType, cap: usize) -> Values {
        dispatch_type!(ty, T => T::into_values(Vec::<T>::with_capacity(cap));
            char => Values::Char(Vec::with_capacity(cap));
            string => Values::Str(Vec::with_capacity(cap)))
    }

    /// `n` elements of type `ty`, all zero (empty strings for NC_STRING).
    pub fn zeros(ty: NcType, n: usize) -> Values {
        dispatch_type!(ty, T => T::into_values(vec![T::default(); n]);
            char => Values::Char(vec![0; n]);
            string => Values::Str(vec![String::new(); n]))
    }

    /// Element `i` as f64 (`None` for text, or out of range).
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        dispatch!(self, v => v.get(i).map(|x| x.to_f64()); char _c => None; string _s => None)
    }

    /// All elements as f64 (`None` for text).
    pub fn to_f64_vec(&self) -> Option<Vec<f64>> {
        dispatch!(self, v => Some(v.iter().map(|x| x.to_f64()).collect()); char _c => None;
            string _s => None)
    }

    /// Build a buffer of type `ty` from f64 values with NCO's conversion rule
    /// ([`NcNum::from_f64`]); `None` for text types.
    pub fn from_f64_slice(ty: NcType, x: &[f64]) -> Option<Values> {
        dispatch_type!(ty, T => Some(T::into_values(x.iter().map(|&v| T::from_f64(v)).collect()));
            char => None; string => None)
    }

    /// Convert to another numeric type with NCO's rule; text converts only to itself.
    pub fn convert(&self, ty: NcType) -> Option<Values> {
        if self.nc_type() == ty {
            return Some(self.clone());
        }
        let x = self.to_f64_vec()?;
        Values::from_f64_slice(ty, &x)
    }

    /// Text of an NC_CHAR buffer up to its first NUL, lossily decoded; strings joined by
    /// commas; numbers `None`.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Values::Char(c) => {
                let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
                Some(String::from_utf8_lossy(&c[..end]).into_owned())
            }
            Values::Str(s) => Some(s.join(",")),
            _ => None,
        }
    }

    /// Keep the elements at `idx` (in that order).
    pub fn gather(&self, idx: &[usize]) -> Values {
        dispatch!(self, v => NcNum::into_values(idx.iter().map(|&i| v[i]).collect());
            char c => Values::Char(idx.iter().map(|&i| c[i]).collect());
            string s => Values::Str(idx.iter().map(|&i| s[i].clone()).collect()))
    }

    /// Append all of `other` (same type) to `self`; false when the types differ.
    pub fn extend_from(&mut self, other: &Values) -> bool {
        match (self, other) {
            (Values::Char(a), Values::Char(b)) => a.extend_from_slice(b),
            (Values::Str(a), Values::Str(b)) => a.extend_from_slice(b),
            (a, b) => {
                fn ext<T: NcNum>(a: &mut Values, b: &Values) -> bool {
                    match (T::vec_of_mut(a), T::slice_of(b)) {
                        (Some(x), Some(y)) => {
                            x.extend_from_slice(y);
                            true
                        }
                        _ => false,
                    }
                }
                let ty = a.nc_type();
                return dispatch_type!(ty, T => ext::<T>(a, b); char => false; string => false);
            }
        }
        true
    }

    /// Copy of the elements `start..start+count`.
    pub fn slice(&self, start: usize, count: usize) -> Values {
        let r = start..start + count;
        dispatch!(self, v => NcNum::into_values(v[r].to_vec());
            char c => Values::Char(c[r].to_vec());
            string s => Values::Str(s[r].to_vec()))
    }

    /// Append the elements to `out` in this machine's byte order, as a C program holds
    /// them in memory (NCO's `-b` binary files and `--md5_dgs` digests are of those
    /// bytes); NC_CHAR as its bytes. Returns false, appending nothing, for NC_STRING,
    /// which has no fixed-size form.
    pub fn encode_ne(&self, out: &mut Vec<u8>) -> bool {
        fn enc<T: NcNum>(x: &[T], out: &mut Vec<u8>) -> bool {
            out.reserve(x.len() * T::SIZE);
            for &e in x {
                e.extend_ne(out);
            }
            true
        }
        dispatch!(self, v => enc(v, out); char c => {
            out.extend_from_slice(c);
            true
        }; string _s => false)
    }
}

fn elem_type<T: NcNum>(_: &[T]) -> NcType {
    T::TYPE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_bytes_are_the_in_memory_elements() {
        let mut out = Vec::new();
        assert!(Values::Short(vec![1, -2]).encode_ne(&mut out));
        assert!(Values::Char(b"ab".to_vec()).encode_ne(&mut out));
        let mut want = [1i16.to_ne_bytes(), (-2i16).to_ne_bytes()].concat();
        want.extend_from_slice(b"ab");
        assert_eq!(out, want);
        assert!(!Values::Str(vec!["x".into()]).encode_ne(&mut out));
        assert_eq!(out.len(), 6, "a string appends nothing");
    }

    #[test]
    fn codes_round_trip() {
        for c in 1..=12 {
            assert_eq!(NcType::from_code(c).map(NcType::code), Some(c));
        }
        assert_eq!(NcType::from_code(0), None);
        assert_eq!(NcType::from_code(13), None);
    }

    #[test]
    fn integer_conversion_rounds_ties_to_even_like_lrint() {
        assert_eq!(i16::from_f64(2.5), 2);
        assert_eq!(i16::from_f64(3.5), 4);
        assert_eq!(i16::from_f64(-2.7), -3);
        assert_eq!(
            i16::from_f64(34000.0),
            -31536,
            "wraps like C's (short)lrint"
        );
        assert!(!i16::fits(34000.0) && i16::fits(-32768.0));
        assert!(i16::fits(-32768.4) && !i16::fits(-32768.6) && i16::fits(32767.5 - 1e-9));
        assert_eq!(i32::from_f64(f64::NAN), 0);
        assert_eq!(u8::from_f64(-3.0), 253, "C cast keeps the low bits");
    }

    #[test]
    fn fast_rounding_matches_round_ties_even() {
        for x in [
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.5,
            -2.5,
            2.4999,
            1e15 + 0.5,
            -7.5,
            3.0,
            1e300,
            -1e300,
            -0.4,
            // The unit in the last place is 1/2 here; an earlier version lost odd
            // integers and halves in [2^51, 2^52).
            2_251_799_813_685_249.0,
            2_251_799_813_685_249.5,
            -2_251_799_813_685_250.5,
            4_503_599_627_370_495.5,
            f64::INFINITY,
        ] {
            let (a, b) = (round_ties_even_fast(x), x.round_ties_even());
            assert!(
                a == b && a.is_sign_negative() == b.is_sign_negative(),
                "{x}: {a} vs {b}"
            );
        }
        assert_eq!(u64::from_f64(1.8e19), 18_000_000_000_000_000_000);
        assert_eq!(i64::from_f64(-9.0e18), -9_000_000_000_000_000_000);
    }

    #[test]
    fn checked_conversion_refuses_what_does_not_fit() {
        assert_eq!(i32::from_f64_checked(-3e10), None);
        assert_eq!(i32::from_f64_checked(1e36), None);
        assert_eq!(i32::from_f64_checked(f64::NAN), None);
        assert_eq!(i32::from_f64_checked(f64::INFINITY), None);
        assert_eq!(i32::from_f64_checked(-2_147_483_648.4), Some(i32::MIN));
        assert_eq!(
            i32::from_f64_checked(2_147_483_647.5),
            None,
            "rounds to 2^31"
        );
        assert_eq!(i16::from_f64_checked(2.5), Some(2), "ties to even");
        assert_eq!(u8::from_f64_checked(-0.4), Some(0));
        assert_eq!(u8::from_f64_checked(-0.6), None);
        assert_eq!(u8::from_f64_checked(255.49), Some(255));
        // 64-bit bounds: i64::MAX as f64 is 2^63, which does not fit.
        assert_eq!(i64::from_f64_checked(9_223_372_036_854_775_808.0), None);
        assert_eq!(
            i64::from_f64_checked(-9_223_372_036_854_775_808.0),
            Some(i64::MIN)
        );
        assert_eq!(
            u64::from_f64_checked(1.8e19),
            Some(18_000_000_000_000_000_000)
        );
        assert_eq!(u64::from_f64_checked(1.9e19), None);
        // Floats take every value, with IEEE rounding.
        assert_eq!(f32::from_f64_checked(1e39), Some(f32::INFINITY));
        assert_eq!(f32::from_f64_checked(3.4e38), Some(3.4e38));
        assert!(f32::from_f64_checked(f64::NAN).is_some_and(f32::is_nan));
        assert_eq!(
            f32::from_f64_checked(f64::NEG_INFINITY),
            Some(f32::NEG_INFINITY)
        );
        assert_eq!(f64::from_f64_checked(1e300), Some(1e300));
    }

    #[test]
    fn default_fills_match_netcdf_h() {
        assert_eq!(f32::DEFAULT_FILL, 9.969_21e36_f32);
        assert_eq!(i16::DEFAULT_FILL, -32767);
        assert_eq!(i8::DEFAULT_FILL, -127);
    }

    #[test]
    fn values_convert_gather_extend() {
        let v = Values::Double(vec![1.4, 2.5, 3.5]);
        assert_eq!(v.convert(NcType::Short), Some(Values::Short(vec![1, 2, 4])));
        assert_eq!(v.gather(&[2, 0]), Values::Double(vec![3.5, 1.4]));
        let mut a = Values::Int(vec![1]);
        assert!(a.extend_from(&Values::Int(vec![2, 3])));
        assert!(!a.extend_from(&Values::Float(vec![2.0])));
        assert_eq!(a, Values::Int(vec![1, 2, 3]));
        assert_eq!(
            Values::Char(b"ab\0c".to_vec()).as_text().as_deref(),
            Some("ab")
        );
    }
}
