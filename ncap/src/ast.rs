//! The syntax tree of ncap2 scripts, shared by the parser (which builds it) and the
//! evaluator (which walks it). A script is a list of [`Stmt`]; calls hold their entry of
//! the [`builtins`](crate::builtins) table, resolved when parsing. Assignments are
//! expressions (`z=a+=b*=10` is valid ncap2), so that an assignment statement is a
//! [`StmtKind::Expr`] holding an [`Expr::Assign`].

use std::sync::Arc;

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
    /// `<<`: the left value where it is less than the right, else the right (clipping).
    ClipLt,
    /// `>>`: the left value where it is greater than the right, else the right.
    ClipGt,
    /// `min(a, b)` element-wise (a builtin, evaluated as an operator).
    Min,
    /// `max(a, b)` element-wise.
    Max,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`
    Not,
}

/// One index of a hyperslab: `i`, `:`, `a:b`, `a:b:s` (ends inclusive, 0-based; negative
/// indices count from the end, `-1` being the last).
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
    /// A string literal (NC_CHAR).
    Str(String),
    /// A string literal of type NC_STRING (`"..."s`).
    NcString(String),
    /// A value list `{a, b, c}`.
    Array(Vec<Expr>),
    /// A variable.
    Var(String),
    /// `var@att` (`global@att` for global attributes).
    Att(String, String),
    /// `$dim` (its size where a number is needed).
    Dim(String),
    /// `/$a,$b/`: a list of dimensions (an argument of `array()`).
    DimList(Vec<String>),
    /// Binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Unary operation.
    Un(UnOp, Box<Expr>),
    /// A call of a builtin `f(args)`; a method `x.f(args)` is `f(x, args)`.
    Call(&'static Builtin, Vec<Expr>),
    /// A hyperslab `x(i, a:b:s, ...)`.
    Slab(Box<Expr>, Vec<SlabIdx>),
    /// `c ? a : b`.
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// An assignment, whose value is the assigned variable's (or attribute's) new value.
    Assign(Box<Lhs>, AssignOp, Box<Expr>),
    /// `++x` / `x++` / `--x` / `x--`: `inc` for `++`, `prefix` when written before.
    Step {
        /// The variable or attribute changed.
        target: Box<Lhs>,
        /// `++` (else `--`).
        inc: bool,
        /// Written before the target (the value is the new one; else the old one).
        prefix: bool,
    },
    /// `&x`: an argument passed by reference (the sort map of `sort(x, &map)`...).
    Ref(Box<Lhs>),
    /// `*v`, `v[dims]`, `*v[dims]`: a declaration, valid only as an assignment's target
    /// (the parser turns it into [`Lhs::Var`]).
    Declare {
        /// Name.
        name: String,
        /// `*`: a RAM variable.
        ram: bool,
        /// The dimensions of an LHS cast.
        cast: Option<Vec<String>>,
    },
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
    /// `v`, `*v` (a RAM variable) or `v[dims]` (LHS casting: the listed dimensions give
    /// the shape).
    Var {
        /// Name.
        name: String,
        /// Declared with `*`: kept in memory, not written (unless `ram_write()`).
        ram: bool,
        /// Dimension names of a cast, `None` without brackets.
        cast: Option<Vec<String>>,
    },
    /// `v@att` / `global@att`.
    Att(String, String),
    /// `v(i, a:b, ...)`: assign into part of a variable.
    Slab {
        /// Name.
        name: String,
        /// Declared with `*`.
        ram: bool,
        /// The hyperslab.
        idx: Vec<SlabIdx>,
    },
}

impl Lhs {
    /// The variable (or `var` of `var@att`) named.
    pub fn name(&self) -> &str {
        match self {
            Lhs::Var { name, .. } | Lhs::Slab { name, .. } => name,
            Lhs::Att(v, _) => v,
        }
    }
}

/// Where a statement starts, for messages: the script piece (`command-line script`, a
/// file name), line and column (1-based) and the statement's first token.
#[derive(Clone, Debug, PartialEq)]
pub struct Pos {
    /// The script piece.
    pub piece: Arc<str>,
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
    /// The first token, as written.
    pub token: String,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{} (at \"{}\")",
            self.piece, self.line, self.col, self.token
        )
    }
}

/// A statement and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it starts.
    pub pos: Pos,
}

/// Statements.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// An expression evaluated for its effect: assignments, `print(x)`, `defdim(...)`.
    Expr(Expr),
    /// `where(cond) stmt [elsewhere stmt]`
    Where(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `if(cond) stmt [else stmt]`
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `while(cond) stmt`
    While(Expr, Vec<Stmt>),
    /// `for(init; cond; step) stmt` (each part optional).
    For(Option<Expr>, Option<Expr>, Option<Expr>, Vec<Stmt>),
    /// `break`
    Break,
    /// `continue`
    Continue,
    /// `exit(code)`: stop the script (the output is written as it stands).
    Exit(Option<Expr>),
    /// `{ stmts }`
    Block(Vec<Stmt>),
}

impl Stmt {
    /// The assignment `lhs op e` of a plain assignment statement, `None` for others.
    pub fn assignment(&self) -> Option<(&Lhs, AssignOp, &Expr)> {
        match &self.kind {
            StmtKind::Expr(Expr::Assign(l, op, e)) => Some((l, *op, e)),
            _ => None,
        }
    }
}
