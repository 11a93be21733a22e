//! The syntax tree of ncap2 scripts, shared by the parser (which builds it) and the
//! evaluator (which walks it). A script is a list of [`Stmt`]; calls hold their entry of
//! the [`builtins`](crate::builtins) table, resolved when parsing.

use nco_core::types::NcType;

use crate::builtins::Builtin;

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%` (C remainder for integers, `fmod` for floats)
    Mod,
    /// `^` (power)
    Pow,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
}

/// One index of a hyperslab: `i`, `:`, `a:b`, `a:b:s` (ends inclusive, 0-based).
#[derive(Clone, Debug, PartialEq)]
pub struct SlabIdx {
    /// Start (`None` = 0).
    pub start: Option<Expr>,
    /// End, inclusive (`None` = last).
    pub end: Option<Expr>,
    /// Stride (`None` = 1).
    pub stride: Option<Expr>,
    /// True when written as a single index (the dimension is dropped).
    pub single: bool,
}

/// Expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A number literal of a type, with its text.
    Num(NcType, String),
    /// A string literal.
    Str(String),
    /// `{a, b, c}`
    Array(Vec<Expr>),
    /// A variable.
    Var(String),
    /// `var@att` (`global@att` for global attributes).
    Att(String, String),
    /// `$dim` (its size where a number is needed).
    Dim(String),
    /// Binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Unary operation.
    Un(UnOp, Box<Expr>),
    /// A call of a builtin `f(args)`; a method `x.f(args)` is `f(x, args)`.
    Call(&'static Builtin, Vec<Expr>),
    /// A hyperslab `x(i, a:b:s, ...)`.
    Slab(Box<Expr>, Vec<SlabIdx>),
}

/// Assignment operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`
    Set,
    /// `+=`
    Add,
    /// `-=`
    Sub,
    /// `*=`
    Mul,
    /// `/=`
    Div,
}

/// The left-hand side of an assignment.
#[derive(Clone, Debug, PartialEq)]
pub enum Lhs {
    /// `v` or `v[dims]` (LHS casting: the listed dimensions give the shape).
    Var {
        /// Name.
        name: String,
        /// Dimension names of a cast, `None` without brackets.
        cast: Option<Vec<String>>,
    },
    /// `v@att` / `global@att`.
    Att(String, String),
    /// `v(i, a:b, ...)`: assign into part of a variable.
    Slab(String, Vec<SlabIdx>),
}

/// Statements.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `lhs op expr`
    Assign(Lhs, AssignOp, Expr),
    /// An expression evaluated for its effect (`print(x)`, `defdim(...)`).
    Expr(Expr),
    /// `where(cond) stmt [elsewhere stmt]`
    Where(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `if(cond) stmt [else stmt]`
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `{ stmts }`
    Block(Vec<Stmt>),
}
