//! Every function and method ncap2 knows, in one table ([`BUILTINS`]).
//!
//! The parser looks names up here to tell a call `f(x)` from a hyperslab `v(0,:)` and to
//! reject unknown methods; the call in the syntax tree then holds its table entry, and the
//! evaluator dispatches on the entry's [`Op`]. Adding a function is one row here plus its
//! implementation: a new name for an existing operation (a cast, a reduction, a math
//! function) is the row alone; a new math function is also a [`MathFn`] variant with its
//! formula in `num`; a new kind of function is an [`Op`] variant with its evaluation.
//!
//! Every builtin can be called as a function, `f(x, ...)`, or as a method of its first
//! argument, `x.f(...)` (NCO manual, "Methods and functions").

use nco_core::types::NcType;

/// Unary math functions (computed in the argument's floating type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    /// sqrt
    Sqrt,
    /// exp
    Exp,
    /// natural log
    Log,
    /// log10
    Log10,
    /// sin
    Sin,
    /// cos
    Cos,
    /// tan
    Tan,
    /// asin
    Asin,
    /// acos
    Acos,
    /// atan
    Atan,
    /// sinh
    Sinh,
    /// cosh
    Cosh,
    /// tanh
    Tanh,
    /// asinh
    Asinh,
    /// acosh
    Acosh,
    /// atanh
    Atanh,
    /// floor
    Floor,
    /// ceil
    Ceil,
    /// round half away from zero
    Round,
    /// truncate toward zero
    Trunc,
    /// `rint`, `nearbyint`: NCO 5.1.4 rounds halves away from zero (as `round`)
    Rint,
    /// error function
    Erf,
    /// complementary error function
    Erfc,
    /// gamma function (C's `tgamma`)
    Gamma,
    /// log of the absolute value of the gamma function (C's `lgamma`)
    Lgamma,
    /// |x|, in the floating type (`fabs`)
    Fabs,
}

/// Reductions over all or some dimensions: the statistics of ncwa's `-y`, as ncap2
/// methods (`x.rms()`, `x.avg($time)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// Sum.
    Total,
    /// Sum divided by the number of valid elements.
    Avg,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Square of the average.
    SqrAvg,
    /// Average of the squares.
    AvgSqr,
    /// Root of the average of the squares.
    Rms,
    /// Root of the sum of the squares over (valid elements - 1).
    RmsSdn,
    /// Maximum absolute value.
    MAbs,
    /// Average absolute value.
    MEbs,
    /// Minimum absolute value.
    MIbs,
    /// Sum of absolute values.
    TAbs,
}

/// The missing-value methods (NCO manual, "Missing values ncap2").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// `set_miss(v, x)`: `x` becomes the missing value (data unchanged).
    Set,
    /// `change_miss(v, x)`: the missing value and the missing elements become `x`.
    Change,
    /// `get_miss(v)`: the missing value.
    Get,
    /// `delete_miss(v)`: no missing value any more.
    Delete,
    /// `number_miss(v)`: how many elements are missing.
    Number,
    /// `has_miss(v)`: 1 when the variable has a missing value.
    Has,
    /// `missing(v)`, `mask_miss(v)`: 1 where an element is missing, else 0.
    Mask,
}

/// What a builtin computes; the evaluator has one case for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Element-wise math function, in the argument's floating type (NC_FLOAT for
    /// integers).
    Math(MathFn),
    /// Absolute value, in the argument's type.
    Abs,
    /// Square, in the argument's type (`sqr`).
    Sqr,
    /// Conversion to a type (NCO's rounding; out-of-range values become missing).
    Cast(NcType),
    /// `convert(x, type_code)`: conversion to the type of a netCDF type code.
    Convert,
    /// `pow(a, b)`: `a ^ b`.
    Pow,
    /// `fmod(a, b)`: `a % b`.
    Fmod,
    /// `atan2(y, x)`, always NC_DOUBLE.
    Atan2,
    /// A reduction, over the dimensions given as further arguments (all without);
    /// `min(a, b)` and `max(a, b)` of two values are element-wise.
    Reduce(Reduce),
    /// Number of elements (of a dimension given as `$dim`).
    Size,
    /// Number of dimensions.
    Ndims,
    /// The netCDF type code.
    Type,
    /// 1 when the variable or attribute exists, else 0.
    Exists,
    /// A missing-value method.
    Miss(Miss),
    /// `reverse(x, $d...)`: reverse the order along dimensions.
    Reverse,
    /// `permute(x, $d...)`: reorder the dimensions.
    Permute,
    /// `array(start, step, $dim | var | /$d1,$d2/)`: a regularly spaced array.
    Array,
    /// `mask(x, idx)`: the elements of `x` at the (flat) indices `idx`.
    Mask,
    /// `make_bounds(coord, $nv[, "name"])`: cell bounds of a 1-D coordinate.
    MakeBounds,
    /// `sprint(x[, fmt])`: text (NC_CHAR); `sprint4`: NC_STRING.
    Sprint(bool),
    /// `push(a, b)`: `b` appended to `a`.
    Push,
    /// `strlen(s)`: length of a text value.
    Strlen,
    /// `atoi(s)` / `atol(s)`: the integer a text holds.
    Atoi(NcType),
    /// `sort(x[, &map])`, `asort`: ascending; `dsort` descending.
    Sort(bool),
    /// `remap(x, map)`: `x` reordered by a sort map.
    Remap,
    /// `unmap(x, map)`: undo `remap`.
    Unmap,
    /// `invert_map(map)`.
    InvertMap,
    /// `ram_write(v)`: a RAM variable becomes an output variable.
    RamWrite,
    /// `ram_delete(v)`: forget a RAM variable (or an attribute).
    RamDelete,
    /// `print(x[, format])`: write to standard output.
    Print,
    /// `defdim(name, size[, unlimited])`: define a dimension.
    Defdim,
}

impl Op {
    /// True when each element of the result depends only on the same element of the
    /// arguments, with the result's type decided by the arguments' types alone: such
    /// calls can be evaluated block by block.
    pub fn is_elementwise(self) -> bool {
        matches!(
            self,
            Op::Math(_) | Op::Abs | Op::Sqr | Op::Cast(_) | Op::Pow | Op::Fmod | Op::Atan2
        )
    }

    /// The most arguments the operation uses (`None`: any number, as a reduction's
    /// dimensions); further arguments are ignored with a warning, as NCO does.
    pub fn max_args(self) -> Option<usize> {
        Some(match self {
            Op::Math(_) | Op::Abs | Op::Sqr | Op::Cast(_) | Op::Size | Op::Ndims | Op::Type => 1,
            Op::Exists | Op::Strlen | Op::Atoi(_) | Op::InvertMap => 1,
            Op::RamWrite | Op::RamDelete => 1,
            Op::Miss(Miss::Set | Miss::Change) => 2,
            Op::Miss(_) => 1,
            Op::Convert | Op::Pow | Op::Fmod | Op::Atan2 | Op::Mask => 2,
            Op::Sprint(_) | Op::Push | Op::Print | Op::Remap | Op::Unmap | Op::Sort(_) => 2,
            Op::Array | Op::Defdim | Op::MakeBounds => 3,
            Op::Reduce(_) | Op::Reverse | Op::Permute => return None,
        })
    }
}

/// One function or method of the table.
#[derive(Debug, PartialEq, Eq)]
pub struct Builtin {
    /// The name as written in scripts (aliases have rows of their own).
    pub name: &'static str,
    /// Arguments needed, a method's object counting as the first; further arguments are
    /// the operation's options (a reduction's dimensions, print's format).
    pub args: usize,
    /// What it computes.
    pub op: Op,
}

const fn entry(name: &'static str, args: usize, op: Op) -> Builtin {
    Builtin { name, args, op }
}

use MathFn::*;
use Op::{Abs, Atan2, Cast, Defdim, Fmod, Math, Ndims, Pow, Print, Size, Type};

/// Every function and method ncap2 knows (as implemented here).
pub static BUILTINS: &[Builtin] = &[
    // Math functions.
    entry("sqrt", 1, Math(Sqrt)),
    entry("exp", 1, Math(Exp)),
    entry("log", 1, Math(Log)),
    entry("ln", 1, Math(Log)),
    entry("log10", 1, Math(Log10)),
    entry("sin", 1, Math(Sin)),
    entry("cos", 1, Math(Cos)),
    entry("tan", 1, Math(Tan)),
    entry("asin", 1, Math(Asin)),
    entry("acos", 1, Math(Acos)),
    entry("atan", 1, Math(Atan)),
    entry("sinh", 1, Math(Sinh)),
    entry("cosh", 1, Math(Cosh)),
    entry("tanh", 1, Math(Tanh)),
    entry("asinh", 1, Math(Asinh)),
    entry("acosh", 1, Math(Acosh)),
    entry("atanh", 1, Math(Atanh)),
    entry("floor", 1, Math(Floor)),
    entry("ceil", 1, Math(Ceil)),
    entry("round", 1, Math(Round)),
    entry("trunc", 1, Math(Trunc)),
    entry("rint", 1, Math(Rint)),
    entry("nearbyint", 1, Math(Rint)),
    entry("erf", 1, Math(Erf)),
    entry("erfc", 1, Math(Erfc)),
    entry("gamma", 1, Math(Gamma)),
    entry("lgamma", 1, Math(Lgamma)),
    entry("fabs", 1, Math(Fabs)),
    entry("abs", 1, Abs),
    entry("sqr", 1, Op::Sqr),
    entry("pow", 2, Pow),
    entry("fmod", 2, Fmod),
    entry("atan2", 2, Atan2),
    // Casts (`long` is NC_INT, `ulong` NC_UINT, as in NCO).
    entry("byte", 1, Cast(NcType::Byte)),
    entry("char", 1, Cast(NcType::Char)),
    entry("short", 1, Cast(NcType::Short)),
    entry("int", 1, Cast(NcType::Int)),
    entry("long", 1, Cast(NcType::Int)),
    entry("float", 1, Cast(NcType::Float)),
    entry("double", 1, Cast(NcType::Double)),
    entry("ubyte", 1, Cast(NcType::UByte)),
    entry("ushort", 1, Cast(NcType::UShort)),
    entry("uint", 1, Cast(NcType::UInt)),
    entry("int64", 1, Cast(NcType::Int64)),
    entry("uint64", 1, Cast(NcType::UInt64)),
    entry("ulong", 1, Cast(NcType::UInt)),
    entry("convert", 2, Op::Convert),
    // Reductions (methods, optionally over `$dims`).
    entry("total", 1, Op::Reduce(Reduce::Total)),
    entry("ttl", 1, Op::Reduce(Reduce::Total)),
    entry("sum", 1, Op::Reduce(Reduce::Total)),
    entry("avg", 1, Op::Reduce(Reduce::Avg)),
    entry("mean", 1, Op::Reduce(Reduce::Avg)),
    entry("min", 1, Op::Reduce(Reduce::Min)),
    entry("max", 1, Op::Reduce(Reduce::Max)),
    entry("sqravg", 1, Op::Reduce(Reduce::SqrAvg)),
    entry("avgsqr", 1, Op::Reduce(Reduce::AvgSqr)),
    entry("rms", 1, Op::Reduce(Reduce::Rms)),
    entry("rmssdn", 1, Op::Reduce(Reduce::RmsSdn)),
    entry("mabs", 1, Op::Reduce(Reduce::MAbs)),
    entry("mebs", 1, Op::Reduce(Reduce::MEbs)),
    entry("mibs", 1, Op::Reduce(Reduce::MIbs)),
    entry("tabs", 1, Op::Reduce(Reduce::TAbs)),
    entry("ttlabs", 1, Op::Reduce(Reduce::TAbs)),
    // Metadata.
    entry("size", 1, Size),
    entry("ndims", 1, Ndims),
    entry("type", 1, Type),
    entry("exists", 1, Op::Exists),
    // Missing values.
    entry("set_miss", 2, Op::Miss(Miss::Set)),
    entry("change_miss", 2, Op::Miss(Miss::Change)),
    entry("get_miss", 1, Op::Miss(Miss::Get)),
    entry("delete_miss", 1, Op::Miss(Miss::Delete)),
    entry("number_miss", 1, Op::Miss(Miss::Number)),
    entry("has_miss", 1, Op::Miss(Miss::Has)),
    entry("missing", 1, Op::Miss(Miss::Mask)),
    entry("mask_miss", 1, Op::Miss(Miss::Mask)),
    // Shapes and arrays.
    entry("reverse", 1, Op::Reverse),
    entry("permute", 1, Op::Permute),
    entry("array", 3, Op::Array),
    entry("mask", 2, Op::Mask),
    entry("make_bounds", 2, Op::MakeBounds),
    // Text.
    entry("sprint", 1, Op::Sprint(false)),
    entry("sprint4", 1, Op::Sprint(true)),
    entry("push", 2, Op::Push),
    entry("strlen", 1, Op::Strlen),
    entry("atoi", 1, Op::Atoi(NcType::Int)),
    entry("atol", 1, Op::Atoi(NcType::Int64)),
    // Sorting.
    entry("sort", 1, Op::Sort(false)),
    entry("asort", 1, Op::Sort(false)),
    entry("dsort", 1, Op::Sort(true)),
    entry("remap", 2, Op::Remap),
    entry("unmap", 2, Op::Unmap),
    entry("invert_map", 1, Op::InvertMap),
    // RAM variables.
    entry("ram_write", 1, Op::RamWrite),
    entry("ram_delete", 1, Op::RamDelete),
    // Effects.
    entry("print", 1, Print),
    entry("defdim", 2, Defdim),
];

/// The builtin called `name`, if ncap2 knows one.
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, b) in BUILTINS.iter().enumerate() {
            assert!(
                BUILTINS[..i].iter().all(|o| o.name != b.name),
                "{} listed twice",
                b.name
            );
            assert!(std::ptr::eq(lookup(b.name).unwrap(), b));
            if let Some(m) = b.op.max_args() {
                assert!(m >= b.args, "{}", b.name);
            }
        }
        assert_eq!(lookup("ln").unwrap().op, lookup("log").unwrap().op);
        assert!(lookup("nosuch").is_none());
    }
}
