//! The ncap2 grammar (the subset nco-rs supports) as a recursive-descent parser producing
//! an AST. Operator precedence, loosest first: `||`, `&&`, `== !=`, `< > <= >=`,
//! `+ -`, `* / %`, `^` (right-associative; its operands may carry prefix `- + !`, which
//! bind tighter, as in NCO), postfix (methods `.f(...)`, hyperslabs `(i,j:k:s)`).

use nco_core::{Error, Result};

use crate::ast::{AssignOp, BinOp, Expr, Lhs, SlabIdx, Stmt, UnOp};
use crate::builtins;
use crate::lexer::{lex, syntax, Tok, Token};

struct Parser {
    toks: Vec<Token>,
    pos: usize,
}

/// Parse a whole script.
///
/// Errors: the first token that does not fit the grammar, with its position.
pub fn parse(src: &str) -> Result<Vec<Stmt>> {
    let toks = lex(src)?;
    let mut p = Parser { toks, pos: 0 };
    let mut out = Vec::new();
    while p.peek() != &Tok::Eof {
        if p.eat(";") {
            continue;
        }
        out.push(p.stmt()?);
    }
    Ok(out)
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

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.next();
            true
        } else {
            false
        }
    }

    fn err(&self, what: &str) -> Error {
        let t = &self.toks[self.pos];
        syntax(
            t.line,
            t.col,
            &format!("unexpected token \"{}\", expected {what}", t.tok),
        )
    }

    fn expect(&mut self, p: &str) -> Result<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(&format!("\"{p}\"")))
        }
    }

    /// A statement or a braced block, as the body of where/if.
    fn body(&mut self) -> Result<Vec<Stmt>> {
        Ok(match self.stmt()? {
            Stmt::Block(b) => b,
            s => vec![s],
        })
    }

    fn end_stmt(&mut self) -> Result<()> {
        if self.eat(";") || matches!(self.peek(), Tok::Eof) || self.is("}") {
            Ok(())
        } else {
            Err(self.err("\";\""))
        }
    }

    fn stmt(&mut self) -> Result<Stmt> {
        if self.eat("{") {
            let mut v = Vec::new();
            while !self.eat("}") {
                if matches!(self.peek(), Tok::Eof) {
                    return Err(self.err("\"}\""));
                }
                if self.eat(";") {
                    continue;
                }
                v.push(self.stmt()?);
            }
            return Ok(Stmt::Block(v));
        }
        if let Tok::Ident(k) = self.peek().clone() {
            if (k == "where" || k == "if") && matches!(self.peek_at(1), Tok::Punct("(")) {
                self.next();
                self.expect("(")?;
                let cond = self.expr()?;
                self.expect(")")?;
                let then = self.body()?;
                let other = if k == "where" { "elsewhere" } else { "else" };
                let els = if matches!(self.peek(), Tok::Ident(e) if e == other) {
                    self.next();
                    self.body()?
                } else {
                    Vec::new()
                };
                return Ok(if k == "where" {
                    Stmt::Where(cond, then, els)
                } else {
                    Stmt::If(cond, then, els)
                });
            }
        }
        // Try an assignment: find the LHS shape first.
        let save = self.pos;
        if let Some(lhs) = self.lhs()? {
            let op = match self.peek() {
                Tok::Punct("=") => Some(AssignOp::Set),
                Tok::Punct("+=") => Some(AssignOp::Add),
                Tok::Punct("-=") => Some(AssignOp::Sub),
                Tok::Punct("*=") => Some(AssignOp::Mul),
                Tok::Punct("/=") => Some(AssignOp::Div),
                _ => None,
            };
            if let Some(op) = op {
                self.next();
                let e = self.expr()?;
                self.end_stmt()?;
                return Ok(Stmt::Assign(lhs, op, e));
            }
        }
        self.pos = save;
        let e = self.expr()?;
        self.end_stmt()?;
        Ok(Stmt::Expr(e))
    }

    /// Parse a possible assignment target; `None` (position unspecified) when the
    /// tokens are not one.
    fn lhs(&mut self) -> Result<Option<Lhs>> {
        match self.next() {
            Tok::Att(v, a) => Ok(Some(Lhs::Att(v, a))),
            Tok::Ident(name) => {
                if self.eat("[") {
                    let mut dims = Vec::new();
                    loop {
                        match self.next() {
                            Tok::Dim(d) | Tok::Ident(d) => dims.push(d),
                            _ => return Ok(None),
                        }
                        if self.eat("]") {
                            break;
                        }
                        if !self.eat(",") {
                            return Ok(None);
                        }
                    }
                    Ok(Some(Lhs::Var {
                        name,
                        cast: Some(dims),
                    }))
                } else if self.is("(") {
                    if builtins::lookup(&name).is_some() {
                        return Ok(None);
                    }
                    self.next();
                    let idx = self.slab_list()?;
                    Ok(Some(Lhs::Slab(name, idx)))
                } else {
                    Ok(Some(Lhs::Var { name, cast: None }))
                }
            }
            _ => Ok(None),
        }
    }

    fn expr(&mut self) -> Result<Expr> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<Expr> {
        const LEVELS: [&[(&str, BinOp)]; 6] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Mod)],
        ];
        if level == LEVELS.len() {
            return self.unary();
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
    fn unary(&mut self) -> Result<Expr> {
        self.power()
    }

    fn prefixed(&mut self) -> Result<Expr> {
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
        self.postfix()
    }

    fn power(&mut self) -> Result<Expr> {
        let base = self.prefixed()?;
        if self.eat("^") {
            let exp = self.power()?;
            return Ok(Expr::Bin(BinOp::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr> {
        let mut e = self.primary()?;
        loop {
            if self.is(".") {
                self.next();
                let name = match self.next() {
                    Tok::Ident(n) => n,
                    _ => return Err(self.err("a method name")),
                };
                let mut args = vec![e];
                // `x.size` and `x.size()` are the same; arguments follow `(`.
                if self.eat("(") && !self.eat(")") {
                    loop {
                        args.push(self.expr()?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                let Some(f) = builtins::lookup(&name) else {
                    return Err(Error::msg(format!("unknown method or function \"{name}\"")));
                };
                e = Expr::Call(f, args);
            } else if self.is("(") && matches!(e, Expr::Var(_) | Expr::Slab(..)) {
                self.next();
                let idx = self.slab_list()?;
                e = Expr::Slab(Box::new(e), idx);
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
            Tok::Ident(name) => match builtins::lookup(&name).filter(|_| self.is("(")) {
                Some(f) => {
                    self.next();
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
                    Ok(Expr::Call(f, args))
                }
                None => Ok(Expr::Var(name)),
            },
            _ => {
                self.pos = start;
                Err(self.err("an expression"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nco_core::types::NcType;

    fn one(s: &str) -> Stmt {
        let mut v = parse(s).unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        v.remove(0)
    }

    #[test]
    fn precedence_and_power() {
        let Stmt::Assign(_, _, e) = one("x=1+2*3^2") else {
            panic!()
        };
        let Expr::Bin(BinOp::Add, _, r) = e else {
            panic!("{e:?}")
        };
        let Expr::Bin(BinOp::Mul, _, p) = *r else {
            panic!()
        };
        assert!(matches!(*p, Expr::Bin(BinOp::Pow, _, _)));
        let Stmt::Assign(_, _, e) = one("x=-2") else {
            panic!()
        };
        assert_eq!(e, Expr::Num(NcType::Int, "-2".into()));
        // Unary minus binds tighter than ^, as in NCO: -x^2 is (-x)^2.
        let Stmt::Assign(_, _, e) = one("y=-x^2") else {
            panic!()
        };
        let Expr::Bin(BinOp::Pow, b, _) = e else {
            panic!("{e:?}")
        };
        assert!(matches!(*b, Expr::Un(UnOp::Neg, _)));
    }

    #[test]
    fn lhs_forms() {
        assert!(matches!(
            one("a[$lat,lon]=1"),
            Stmt::Assign(Lhs::Var { cast: Some(ref d), .. }, AssignOp::Set, _) if d == &["lat", "lon"]
        ));
        assert!(matches!(
            one("time+=10;"),
            Stmt::Assign(Lhs::Var { cast: None, .. }, AssignOp::Add, _)
        ));
        assert!(matches!(
            one("v@units=\"m\""),
            Stmt::Assign(Lhs::Att(..), _, _)
        ));
        assert!(matches!(one("v(0,:)=1"), Stmt::Assign(Lhs::Slab(..), _, _)));
        assert!(matches!(one("print(v)"), Stmt::Expr(Expr::Call(..))));
    }

    #[test]
    fn slabs_methods_where() {
        let Stmt::Assign(_, _, e) = one("hs=v(1,:,0:3:2).total()") else {
            panic!()
        };
        let Expr::Call(f, args) = e else { panic!() };
        assert_eq!(f.name, "total");
        let Expr::Slab(_, idx) = &args[0] else {
            panic!()
        };
        assert_eq!(idx.len(), 3);
        assert!(idx[0].single && !idx[1].single && idx[2].stride.is_some());
        let Stmt::Where(_, t, e) = one("where(w > 10) w=0; elsewhere {w=1;}") else {
            panic!()
        };
        assert_eq!((t.len(), e.len()), (1, 1));
    }

    #[test]
    fn syntax_errors_name_the_token() {
        let e = parse("a=(1+").unwrap_err().to_string();
        assert!(e.contains("end of script"), "{e}");
        let e = parse("a=1 b=2").unwrap_err().to_string();
        assert!(e.contains("\"b\""), "{e}");
        assert!(parse("a=lat.nosuch()").is_err());
    }
}
