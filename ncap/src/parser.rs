//! The ncap2 grammar as a recursive-descent parser producing the syntax tree
//! ([`ast`](crate::ast)). Operator precedence, loosest first (NCO manual, "Operator
//! precedence and associativity"): assignments `= += -= *= /=` (right to left), `?:`,
//! `||`, `&&`, `== !=`, `< > <= >=`, `<< >>`, `+ -`, `* / %`, `^` (right to left; its
//! operands may carry the prefix operators `- + ! ++ --`, which bind tighter, as in
//! NCO), postfix (methods `.f(...)`, hyperslabs `(i,j:k:s)`, `++ --`).
//!
//! Statements: expressions, blocks `{...}`, `if/else`, `where/elsewhere`, `while`,
//! `for(;;)`, `break`, `continue`, `exit(n)`, and `#include "file"` (the file's
//! statements in place, the file found relative to the current folder or along
//! `NCO_PATH`).

use std::path::PathBuf;
use std::sync::Arc;

use nco_core::{Error, Result};

use crate::ast::{AssignOp, BinOp, Expr, Lhs, Pos, SlabIdx, Stmt, StmtKind, UnOp};
use crate::builtins;
use crate::lexer::{lex, syntax, Tok, Token};

/// How deep `#include`s may nest (a file including itself stops there).
const MAX_INCLUDE_DEPTH: usize = 32;

/// Deepest nesting of statements and expressions (blocks, parentheses, prefix
/// operators, chained assignments and powers, each level counted) the parser takes: a
/// script nested deeper is an error, not a stack overflow (found by fuzzing: 400
/// parentheses). Scripts people write stay far below.
const MAX_NESTING: usize = 192;

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    piece: Arc<str>,
    depth: usize,
    /// Statement and expression levels open now (at most [`MAX_NESTING`]).
    nest: usize,
    /// Folders searched for a relative `#include` name not in the current folder
    /// (`NCO_PATH`, read by the CLI layer: `nco_core::cli::env::include_path`).
    include_path: Arc<[PathBuf]>,
}

/// Parse a whole script (`piece` names it in messages: `command-line script`, a file).
///
/// Errors: the first token that does not fit the grammar, with its line and column; an
/// `#include` file that cannot be read.
pub fn parse(src: &str) -> Result<Vec<Stmt>> {
    parse_piece(src, "command-line script", &[])
}

/// [`parse`], naming the piece; a relative `#include` name not in the current folder
/// is looked for in each of `include_path`, in order (NCO's `NCO_PATH`).
pub fn parse_piece(src: &str, piece: &str, include_path: &[PathBuf]) -> Result<Vec<Stmt>> {
    parse_at(src, piece, 0, &Arc::from(include_path))
}

fn parse_at(
    src: &str,
    piece: &str,
    depth: usize,
    include_path: &Arc<[PathBuf]>,
) -> Result<Vec<Stmt>> {
    let toks = lex(src).map_err(|e| Error::msg(format!("{piece}:{e}")))?;
    let mut p = Parser {
        toks,
        pos: 0,
        piece: Arc::from(piece),
        depth,
        nest: 0,
        include_path: include_path.clone(),
    };
    let mut out = Vec::new();
    while p.peek() != &Tok::Eof {
        if p.eat(";") {
            continue;
        }
        p.stmt_into(&mut out)?;
    }
    Ok(out)
}

/// The text of an `#include`d file: `name` as given (relative to the current folder),
/// else in each folder of `include_path` for a relative name.
fn include_text(name: &str, include_path: &[PathBuf]) -> Option<(String, String)> {
    if let Ok(t) = std::fs::read_to_string(name) {
        return Some((name.to_string(), t));
    }
    if std::path::Path::new(name).is_absolute() {
        return None;
    }
    include_path.iter().find_map(|d| {
        let p = d.join(name);
        std::fs::read_to_string(&p)
            .ok()
            .map(|t| (p.display().to_string(), t))
    })
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        let i = (self.pos + k).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn next(&mut self) -> Tok {
        let t = self.toks[self.pos].tok.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(k) if k == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.next();
            true
        } else {
            false
        }
    }

    fn err_at(&self, at: usize, what: &str) -> Error {
        let t = &self.toks[at.min(self.toks.len() - 1)];
        let e = syntax(
            t.line,
            t.col,
            &format!("unexpected token \"{}\", expected {what}", t.tok),
        );
        Error::msg(format!("{}:{e}", self.piece))
    }

    fn err(&self, what: &str) -> Error {
        self.err_at(self.pos, what)
    }

    fn expect(&mut self, p: &str) -> Result<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(&format!("\"{p}\"")))
        }
    }

    fn here(&self) -> Pos {
        let t = &self.toks[self.pos];
        Pos {
            piece: self.piece.clone(),
            line: t.line,
            col: t.col,
            token: t.tok.to_string(),
        }
    }

    /// A statement or a braced block, as the body of if/where/while/for.
    fn body(&mut self) -> Result<Vec<Stmt>> {
        let mut v = Vec::new();
        self.stmt_into(&mut v)?;
        if v.len() == 1 {
            if let StmtKind::Block(_) = v[0].kind {
                let Stmt { kind, .. } = v.remove(0);
                let StmtKind::Block(b) = kind else {
                    unreachable!()
                };
                return Ok(b);
            }
        }
        Ok(v)
    }

    fn end_stmt(&mut self) -> Result<()> {
        if self.eat(";") || matches!(self.peek(), Tok::Eof) || self.is("}") {
            Ok(())
        } else {
            Err(self.err("\";\""))
        }
    }

    /// Parse one statement (an `#include` gives the included file's statements) into
    /// `out`.
    fn stmt_into(&mut self, out: &mut Vec<Stmt>) -> Result<()> {
        if let Tok::Include(name) = self.peek().clone() {
            let at = self.pos;
            self.next();
            if self.depth >= MAX_INCLUDE_DEPTH {
                return Err(self.err_at(at, "an #include nested less deeply"));
            }
            let Some((path, text)) = include_text(&name, &self.include_path) else {
                let t = &self.toks[at];
                return Err(Error::msg(format!(
                    "{}:{}:{}: cannot read the #include file \"{name}\"",
                    self.piece, t.line, t.col
                )));
            };
            out.extend(parse_at(&text, &path, self.depth + 1, &self.include_path)?);
            self.eat(";");
            return Ok(());
        }
        out.push(self.stmt()?);
        Ok(())
    }

    fn stmt(&mut self) -> Result<Stmt> {
        self.nested(|p| {
            let pos = p.here();
            let kind = p.stmt_kind()?;
            Ok(Stmt { kind, pos })
        })
    }

    /// `f` one level deeper, refused past [`MAX_NESTING`] levels.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.nest >= MAX_NESTING {
            return Err(self.err(&format!(
                "a script nested less deeply (at most {MAX_NESTING} levels of blocks, \
                 parentheses and operators)"
            )));
        }
        self.nest += 1;
        let r = f(self);
        self.nest -= 1;
        r
    }

    fn paren_expr(&mut self) -> Result<Expr> {
        self.expect("(")?;
        let e = self.expr()?;
        self.expect(")")?;
        Ok(e)
    }

    fn stmt_kind(&mut self) -> Result<StmtKind> {
        if self.eat("{") {
            let mut v = Vec::new();
            while !self.eat("}") {
                if matches!(self.peek(), Tok::Eof) {
                    return Err(self.err("\"}\""));
                }
                if self.eat(";") {
                    continue;
                }
                self.stmt_into(&mut v)?;
            }
            return Ok(StmtKind::Block(v));
        }
        if let Tok::Ident(k) = self.peek().clone() {
            let paren = matches!(self.peek_at(1), Tok::Punct("("));
            match k.as_str() {
                "where" | "if" | "while" if paren => {
                    self.next();
                    let cond = self.paren_expr()?;
                    let then = self.body()?;
                    if k == "while" {
                        return Ok(StmtKind::While(cond, then));
                    }
                    let other = if k == "where" { "elsewhere" } else { "else" };
                    let els = if self.is_word(other) {
                        self.next();
                        self.body()?
                    } else {
                        Vec::new()
                    };
                    return Ok(if k == "where" {
                        StmtKind::Where(cond, then, els)
                    } else {
                        StmtKind::If(cond, then, els)
                    });
                }
                "for" if paren => {
                    self.next();
                    self.expect("(")?;
                    let part = |p: &mut Parser, end: &str| -> Result<Option<Expr>> {
                        if p.eat(end) {
                            return Ok(None);
                        }
                        let e = p.expr()?;
                        p.expect(end)?;
                        Ok(Some(e))
                    };
                    let init = part(self, ";")?;
                    let cond = part(self, ";")?;
                    let step = part(self, ")")?;
                    let body = self.body()?;
                    return Ok(StmtKind::For(init, cond, step, body));
                }
                "break" | "continue" => {
                    self.next();
                    self.end_stmt()?;
                    return Ok(if k == "break" {
                        StmtKind::Break
                    } else {
                        StmtKind::Continue
                    });
                }
                "exit" if paren => {
                    self.next();
                    self.expect("(")?;
                    let code = if self.is(")") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(")")?;
                    self.end_stmt()?;
                    return Ok(StmtKind::Exit(code));
                }
                _ => {}
            }
        }
        let e = self.expr()?;
        self.end_stmt()?;
        Ok(StmtKind::Expr(e))
    }

    fn expr(&mut self) -> Result<Expr> {
        self.assignment()
    }

    /// `lhs op= expr` (right to left) or a conditional expression.
    fn assignment(&mut self) -> Result<Expr> {
        self.nested(Self::assignment_here)
    }

    fn assignment_here(&mut self) -> Result<Expr> {
        let start = self.pos;
        let e = self.ternary()?;
        let op = match self.peek() {
            Tok::Punct("=") => AssignOp::Set,
            Tok::Punct("+=") => AssignOp::Add,
            Tok::Punct("-=") => AssignOp::Sub,
            Tok::Punct("*=") => AssignOp::Mul,
            Tok::Punct("/=") => AssignOp::Div,
            _ => return Ok(e),
        };
        let Some(lhs) = to_lhs(e) else {
            return Err(self.err_at(start, "a variable, attribute or hyperslab to assign to"));
        };
        self.next();
        let rhs = self.assignment()?;
        Ok(Expr::Assign(Box::new(lhs), op, Box::new(rhs)))
    }

    fn ternary(&mut self) -> Result<Expr> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.assignment()?;
            self.expect(":")?;
            let b = self.ternary()?;
            return Ok(Expr::Ternary(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, level: usize) -> Result<Expr> {
        const LEVELS: [&[(&str, BinOp)]; 7] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("<<", BinOp::ClipLt), (">>", BinOp::ClipGt)],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Mod)],
        ];
        if level == LEVELS.len() {
            return self.power();
        }
        let mut lhs = self.binary(level + 1)?;
        'outer: loop {
            for (p, op) in LEVELS[level] {
                if self.eat(p) {
                    let rhs = self.binary(level + 1)?;
                    lhs = Expr::Bin(*op, Box::new(lhs), Box::new(rhs));
                    continue 'outer;
                }
            }
            return Ok(lhs);
        }
    }

    /// A power, whose operands may carry prefix operators: NCO's ncap2 binds unary
    /// minus tighter than `^` (`-x^2` is `(-x)^2`, `-2^2` is 4; NCO 5.1.4).
    fn power(&mut self) -> Result<Expr> {
        self.nested(Self::power_here)
    }

    fn power_here(&mut self) -> Result<Expr> {
        let base = self.prefixed()?;
        if self.eat("^") {
            let exp = self.power()?;
            return Ok(Expr::Bin(BinOp::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn prefixed(&mut self) -> Result<Expr> {
        self.nested(Self::prefixed_here)
    }

    fn prefixed_here(&mut self) -> Result<Expr> {
        if self.eat("-") {
            let e = self.prefixed()?;
            return Ok(match e {
                // Fold negative literals so that `-2` keeps the literal's type.
                Expr::Num(t, s) if !s.starts_with('-') => Expr::Num(t, format!("-{s}")),
                e => Expr::Un(UnOp::Neg, Box::new(e)),
            });
        }
        if self.eat("+") {
            return self.prefixed();
        }
        if self.eat("!") {
            return Ok(Expr::Un(UnOp::Not, Box::new(self.prefixed()?)));
        }
        if self.is("++") || self.is("--") {
            let start = self.pos;
            let inc = self.next() == Tok::Punct("++");
            let e = self.prefixed()?;
            let Some(target) = to_lhs(e) else {
                return Err(self.err_at(start + 1, "a variable or attribute after ++/--"));
            };
            return Ok(Expr::Step {
                target: Box::new(target),
                inc,
                prefix: true,
            });
        }
        if self.is("&") {
            let start = self.pos;
            self.next();
            let e = self.postfix()?;
            let Some(target) = to_lhs(e) else {
                return Err(self.err_at(start + 1, "a variable or attribute after &"));
            };
            return Ok(Expr::Ref(Box::new(target)));
        }
        self.postfix()
    }

    fn args(&mut self) -> Result<Vec<Expr>> {
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.expr()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(args)
    }

    fn postfix(&mut self) -> Result<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.is(".") {
                self.next();
                let at = self.pos;
                let name = match self.next() {
                    Tok::Ident(n) => n,
                    _ => return Err(self.err_at(at, "a method name")),
                };
                let mut args = vec![e];
                // `x.size` and `x.size()` are the same; arguments follow `(`.
                if self.eat("(") {
                    args.extend(self.args()?);
                }
                let Some(f) = builtins::lookup(&name) else {
                    let t = &self.toks[at];
                    return Err(Error::msg(format!(
                        "{}:{}:{}: unknown method \"{name}\"",
                        self.piece, t.line, t.col
                    )));
                };
                e = Expr::Call(f, args);
            } else if self.is("(")
                && matches!(
                    e,
                    Expr::Var(_)
                        | Expr::Slab(..)
                        | Expr::Att(..)
                        | Expr::Declare { cast: None, .. }
                )
            {
                self.next();
                let idx = self.slab_list()?;
                e = Expr::Slab(Box::new(e), idx);
            } else if self.is("[") && matches!(e, Expr::Var(_) | Expr::Declare { cast: None, .. }) {
                // LHS casting `v[$a,$b]`: only valid before an assignment.
                self.next();
                let mut dims = Vec::new();
                loop {
                    let at = self.pos;
                    match self.next() {
                        Tok::Dim(d) | Tok::Ident(d) => dims.push(d),
                        Tok::Punct("]") if dims.is_empty() => break,
                        _ => return Err(self.err_at(at, "a dimension name")),
                    }
                    if self.eat("]") {
                        break;
                    }
                    self.expect(",")?;
                }
                e = match e {
                    Expr::Var(name) => Expr::Declare {
                        name,
                        ram: false,
                        cast: Some(dims),
                    },
                    Expr::Declare { name, ram, .. } => Expr::Declare {
                        name,
                        ram,
                        cast: Some(dims),
                    },
                    _ => unreachable!(),
                };
            } else if (self.is("++") || self.is("--")) && to_lhs(e.clone()).is_some() {
                let inc = self.next() == Tok::Punct("++");
                let target = to_lhs(e).expect("checked");
                e = Expr::Step {
                    target: Box::new(target),
                    inc,
                    prefix: false,
                };
            } else {
                return Ok(e);
            }
        }
    }

    /// Parse `idx, idx, ... )` after the opening parenthesis.
    fn slab_list(&mut self) -> Result<Vec<SlabIdx>> {
        let mut out = Vec::new();
        loop {
            let start = if self.is(":") || self.is(",") || self.is(")") {
                None
            } else {
                Some(self.expr()?)
            };
            let mut idx = SlabIdx {
                start,
                end: None,
                stride: None,
                single: true,
            };
            if self.eat(":") {
                idx.single = false;
                if !self.is(":") && !self.is(",") && !self.is(")") {
                    idx.end = Some(self.expr()?);
                }
                if self.eat(":") && !self.is(",") && !self.is(")") {
                    idx.stride = Some(self.expr()?);
                }
            } else if idx.start.is_none() {
                return Err(self.err("an index"));
            }
            out.push(idx);
            if self.eat(")") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    fn primary(&mut self) -> Result<Expr> {
        let start = self.pos;
        match self.next() {
            Tok::Num(t, s) => Ok(Expr::Num(t, s)),
            Tok::Str(s) => Ok(Expr::Str(s)),
            Tok::NcString(s) => Ok(Expr::NcString(s)),
            Tok::Dim(d) => Ok(Expr::Dim(d)),
            Tok::Att(v, a) => Ok(Expr::Att(v, a)),
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("{") => {
                let mut v = Vec::new();
                loop {
                    v.push(self.expr()?);
                    if self.eat("}") {
                        break;
                    }
                    self.expect(",")?;
                }
                Ok(Expr::Array(v))
            }
            // `/$a,$b/`: a dimension list (only where an operand starts, so never a
            // division).
            Tok::Punct("/") => {
                let mut dims = Vec::new();
                loop {
                    let at = self.pos;
                    match self.next() {
                        Tok::Dim(d) => dims.push(d),
                        _ => return Err(self.err_at(at, "a dimension ($name)")),
                    }
                    if self.eat("/") {
                        break;
                    }
                    self.expect(",")?;
                }
                Ok(Expr::DimList(dims))
            }
            // `*name`: a RAM variable (where it is defined).
            Tok::Punct("*") => match self.next() {
                Tok::Ident(name) => Ok(Expr::Declare {
                    name,
                    ram: true,
                    cast: None,
                }),
                _ => Err(self.err_at(start + 1, "a variable name after *")),
            },
            Tok::Ident(name) => {
                let is_var_like = !self.is("(");
                match builtins::lookup(&name).filter(|_| !is_var_like) {
                    Some(f) => {
                        self.next();
                        let args = self.args()?;
                        Ok(Expr::Call(f, args))
                    }
                    None => Ok(Expr::Var(name)),
                }
            }
            _ => Err(self.err_at(start, "an expression")),
        }
    }
}

/// The assignment target an expression denotes: `v`, `*v`, `v[dims]`, `*v[dims]`,
/// `v@att`, `v(slab)`, `*v(slab)`.
fn to_lhs(e: Expr) -> Option<Lhs> {
    match e {
        Expr::Var(name) => Some(Lhs::Var {
            name,
            ram: false,
            cast: None,
        }),
        Expr::Declare { name, ram, cast } => Some(Lhs::Var { name, ram, cast }),
        Expr::Att(v, a) => Some(Lhs::Att(v, a)),
        Expr::Slab(base, idx) => match *base {
            Expr::Var(name) => Some(Lhs::Slab {
                name,
                ram: false,
                idx,
            }),
            Expr::Declare {
                name,
                ram,
                cast: None,
            } => Some(Lhs::Slab { name, ram, idx }),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nco_core::types::NcType;

    fn one(s: &str) -> StmtKind {
        let mut v = parse(s).unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        v.remove(0).kind
    }

    fn assign(s: &str) -> (Lhs, AssignOp, Expr) {
        match one(s) {
            StmtKind::Expr(Expr::Assign(l, op, e)) => (*l, op, *e),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn precedence_and_power() {
        let (_, _, e) = assign("x=1+2*3^2");
        let Expr::Bin(BinOp::Add, _, r) = e else {
            panic!("{e:?}")
        };
        let Expr::Bin(BinOp::Mul, _, p) = *r else {
            panic!()
        };
        assert!(matches!(*p, Expr::Bin(BinOp::Pow, _, _)));
        let (_, _, e) = assign("x=-2");
        assert_eq!(e, Expr::Num(NcType::Int, "-2".into()));
        // Unary minus binds tighter than ^, as in NCO: -x^2 is (-x)^2.
        let (_, _, e) = assign("y=-x^2");
        let Expr::Bin(BinOp::Pow, b, _) = e else {
            panic!("{e:?}")
        };
        assert!(matches!(*b, Expr::Un(UnOp::Neg, _)));
        let (_, _, e) = assign("y=a<<2+1");
        assert!(matches!(e, Expr::Bin(BinOp::ClipLt, _, _)));
        let (_, _, e) = assign("y=a>1?2:3");
        assert!(matches!(e, Expr::Ternary(..)));
    }

    #[test]
    fn lhs_forms() {
        let (l, op, _) = assign("a[$lat,lon]=1");
        assert!(
            matches!(l, Lhs::Var { cast: Some(ref d), ram: false, .. } if d == &["lat", "lon"])
        );
        assert_eq!(op, AssignOp::Set);
        let (l, _, _) = assign("*a[$lat]=1");
        assert!(matches!(
            l,
            Lhs::Var {
                cast: Some(_),
                ram: true,
                ..
            }
        ));
        let (l, _, _) = assign("*tmp=2");
        assert!(matches!(
            l,
            Lhs::Var {
                ram: true,
                cast: None,
                ..
            }
        ));
        let (l, op, _) = assign("time+=10;");
        assert!(matches!(l, Lhs::Var { cast: None, .. }));
        assert_eq!(op, AssignOp::Add);
        assert!(matches!(assign("v@units=\"m\"").0, Lhs::Att(..)));
        assert!(matches!(assign("v(0,:)=1").0, Lhs::Slab { .. }));
        assert!(matches!(one("print(v)"), StmtKind::Expr(Expr::Call(..))));
        // Assignments are expressions, right to left.
        let (_, _, e) = assign("z=a+=b*=10");
        assert!(matches!(e, Expr::Assign(_, AssignOp::Add, _)));
        assert!(matches!(
            assign("n=i++").2,
            Expr::Step {
                inc: true,
                prefix: false,
                ..
            }
        ));
        assert!(matches!(
            one("--x"),
            StmtKind::Expr(Expr::Step {
                inc: false,
                prefix: true,
                ..
            })
        ));
    }

    #[test]
    fn statements() {
        let StmtKind::For(Some(_), Some(_), Some(_), body) =
            one("for(*i=0;i<3;i++){ a+=i; if(a>2) break; }")
        else {
            panic!()
        };
        assert_eq!(body.len(), 2);
        assert!(matches!(
            one("while(i<3) i++;"),
            StmtKind::While(_, ref b) if b.len() == 1
        ));
        let StmtKind::If(_, _, e) = one("if(a) b=1; else if(c) b=2; else b=3;") else {
            panic!()
        };
        assert!(matches!(e[0].kind, StmtKind::If(..)));
        assert!(matches!(one("exit(2);"), StmtKind::Exit(Some(_))));
        let (_, _, e) = assign("a=array(1,2,/$lat,$lon/)");
        let Expr::Call(f, args) = e else { panic!() };
        assert_eq!(f.name, "array");
        assert_eq!(args[2], Expr::DimList(vec!["lat".into(), "lon".into()]));
        let (_, _, e) = assign("a=b/$lat.size");
        assert!(matches!(e, Expr::Bin(BinOp::Div, _, _)));
    }

    #[test]
    fn slabs_methods_where() {
        let (_, _, e) = assign("hs=v(1,:,0:3:2).total()");
        let Expr::Call(f, args) = e else { panic!() };
        assert_eq!(f.name, "total");
        let Expr::Slab(_, idx) = &args[0] else {
            panic!()
        };
        assert_eq!(idx.len(), 3);
        assert!(idx[0].single && !idx[1].single && idx[2].stride.is_some());
        let StmtKind::Where(_, t, e) = one("where(w > 10) w=0; elsewhere {w=1;}") else {
            panic!()
        };
        assert_eq!((t.len(), e.len()), (1, 1));
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_stack_overflow() {
        // On a stack of the main thread's size (found by fuzzing: 400 parentheses
        // overflowed it).
        let run = || {
            let ok = format!("a={}1{};", "(".repeat(50), ")".repeat(50));
            assert!(parse(&ok).is_ok());
            for deep in [
                format!("a={}1{};", "(".repeat(5000), ")".repeat(5000)),
                format!("a={}1;", "-".repeat(5000)),
                format!("a=2{};", "^2".repeat(5000)),
                format!("{}a=1;{}", "{".repeat(5000), "}".repeat(5000)),
                format!("{}1;", "a=".repeat(5000)),
            ] {
                let e = parse(&deep).unwrap_err().to_string();
                assert!(e.contains("nested less deeply"), "{e}");
            }
        };
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn syntax_errors_name_the_token_and_position() {
        let e = parse("a=(1+").unwrap_err().to_string();
        assert!(e.contains("end of script"), "{e}");
        let e = parse("a=1 b=2").unwrap_err().to_string();
        assert!(e.contains("\"b\"") && e.contains("1:5"), "{e}");
        assert!(parse("a=lat.nosuch()").is_err());
        let e = parse("/* a\n b */ a=1;\n c=)").unwrap_err().to_string();
        assert!(e.contains("3:4"), "{e}");
        assert!(parse("3=a").is_err());
    }
}
