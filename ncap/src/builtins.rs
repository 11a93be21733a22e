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
    /// round half to even (`rint`, `nearbyint`)
    Rint,
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

/// What a builtin computes; the evaluator has one case for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Element-wise math function, in the argument's floating type (NC_FLOAT for
    /// integers).
    Math(MathFn),
    /// Absolute value, in the argument's type.
    Abs,
    /// Conversion to a type (NCO's rounding).
    Cast(NcType),
    /// `pow(a, b)`: `a ^ b`.
    Pow,
    /// `fmod(a, b)`: `a % b`.
    Fmod,
    /// `atan2(y, x)`, always NC_DOUBLE.
    Atan2,
    /// A reduction, over the dimensions given as further arguments (all without).
    Reduce(Reduce),
    /// Number of elements (of a dimension given as `$dim`).
    Size,
    /// Number of dimensions.
    Ndims,
    /// The netCDF type code.
    Type,
    /// `print(x[, format])`: write to standard output.
    Print,
    /// `defdim(name, size[, unlimited])`: define a dimension.
    Defdim,
}

impl Op {
    /// True when each element of the result depends only on the same element of the
    /// arguments, with the result's type decided by the arguments' types alone: such
    /// calls can be evaluated block by block (`atan2` could, but is not yet).
    pub fn is_elementwise(self) -> bool {
        matches!(
            self,
            Op::Math(_) | Op::Abs | Op::Cast(_) | Op::Pow | Op::Fmod
        )
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
    entry("abs", 1, Abs),
    entry("fabs", 1, Abs),
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
    // Reductions (methods, optionally over `$dims`).
    entry("total", 1, Op::Reduce(Reduce::Total)),
    entry("ttl", 1, Op::Reduce(Reduce::Total)),
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
    // Metadata.
    entry("size", 1, Size),
    entry("ndims", 1, Ndims),
    entry("type", 1, Type),
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
        }
        assert_eq!(lookup("ln").unwrap().op, lookup("log").unwrap().op);
        assert!(lookup("nosuch").is_none());
    }
}
