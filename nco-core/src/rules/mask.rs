//! Masks of ncwa (NCO manual, "Mask condition"): `-m VAR -T CMP -M VALUE`, or a
//! condition `-B 'EXPR'`, keep the elements where the condition holds.
//!
//! A condition compares a variable with a number, the variable on either side
//! (`lat > -40.` or `-40. < lat`), with any of the six comparisons `== != < <= > >=`
//! (or their Fortran names `eq ne lt le gt ge`, as `-T` takes them); conditions combine
//! with `&&`, `||`, `!` and parentheses, `&&` binding tighter than `||`. Numbers take
//! C's forms (`-60`, `-60.`, `1.5e3`, an `f`/`d` suffix).
//!
//! The mask lives on the union of the dimensions of the variables it names (in the
//! file's dimension order): each variable's values are repeated over the dimensions it
//! lacks, so `lat > 0 && ORO == 1` masks `(lat, lon)`. A variable is masked only when
//! it has every dimension of the mask (NCO applies a mask variable only to variables
//! that contain its dimensions, checked with `-m`).
//!
//! NCO 5.1.4 reads `-B` as `name op value` only: it takes `-40. < lat` and compound
//! conditions for something else and returns a wrong mean without a message (README,
//! compatibility notes).

use crate::error::{Error, Result};

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `==`, `eq`.
    Eq,
    /// `!=`, `ne`.
    Ne,
    /// `>`, `gt`.
    Gt,
    /// `>=`, `ge`.
    Ge,
    /// `<`, `lt`.
    Lt,
    /// `<=`, `le`.
    Le,
}

impl Cmp {
    /// Parse `eq ne gt ge lt le` or `== != > >= < <=` (`=` is `==`).
    pub fn parse(s: &str) -> Option<Cmp> {
        Some(match s {
            "eq" | "==" | "=" => Cmp::Eq,
            "ne" | "!=" => Cmp::Ne,
            "gt" | ">" => Cmp::Gt,
            "ge" | ">=" => Cmp::Ge,
            "lt" | "<" => Cmp::Lt,
            "le" | "<=" => Cmp::Le,
            _ => return None,
        })
    }

    /// Parse the `-T` comparator (a clap value parser).
    ///
    /// Errors: an unknown comparator (naming `-T`).
    pub fn parse_option(t: &str) -> Result<Cmp> {
        Cmp::parse(t).ok_or_else(|| {
            Error::option(
                "-T",
                format!("unknown comparator \"{t}\" (eq, ne, gt, ge, lt, le)"),
            )
        })
    }

    /// `x CMP v`.
    pub fn test(self, x: f64, v: f64) -> bool {
        match self {
            Cmp::Eq => x == v,
            Cmp::Ne => x != v,
            Cmp::Gt => x > v,
            Cmp::Ge => x >= v,
            Cmp::Lt => x < v,
            Cmp::Le => x <= v,
        }
    }

    /// The comparison with its sides swapped (`v < x` is `x > v`).
    fn mirrored(self) -> Cmp {
        match self {
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            other => other,
        }
    }
}

/// A mask condition.
#[derive(Clone, Debug, PartialEq)]
pub enum MaskExpr {
    /// `var CMP value`.
    Compare {
        /// The variable compared.
        var: String,
        /// The comparison, with the variable on the left.
        op: Cmp,
        /// The number.
        value: f64,
    },
    /// Both hold.
    And(Box<MaskExpr>, Box<MaskExpr>),
    /// Either holds.
    Or(Box<MaskExpr>, Box<MaskExpr>),
    /// Does not hold.
    Not(Box<MaskExpr>),
}

/// One token of a condition.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Num(f64),
    Cmp(Cmp),
    And,
    Or,
    Not,
    Open,
    Close,
}

fn tokens(s: &str) -> std::result::Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        let two = s.get(i..i + 2).unwrap_or("");
        if c.is_whitespace() {
            i += 1;
        } else if let Some(op) = ["==", "!=", "<=", ">=", "&&", "||"]
            .iter()
            .find(|o| **o == two)
        {
            out.push(match *op {
                "&&" => Tok::And,
                "||" => Tok::Or,
                o => Tok::Cmp(Cmp::parse(o).unwrap_or(Cmp::Eq)),
            });
            i += 2;
        } else if "<>=".contains(c) {
            out.push(Tok::Cmp(Cmp::parse(&c.to_string()).unwrap_or(Cmp::Eq)));
            i += 1;
        } else if c == '!' {
            out.push(Tok::Not);
            i += 1;
        } else if c == '(' || c == ')' {
            out.push(if c == '(' { Tok::Open } else { Tok::Close });
            i += 1;
        } else if c.is_ascii_digit()
            || c == '.'
            || ((c == '-' || c == '+') && starts_number(&b[i + 1..]))
        {
            // A number: sign, digits, point, exponent, optional f/d suffix.
            let start = i;
            i += 1;
            while i < b.len() {
                let d = b[i] as char;
                let exp_sign = (d == '-' || d == '+') && matches!(b[i - 1], b'e' | b'E');
                if d.is_ascii_digit() || d == '.' || d == 'e' || d == 'E' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            let text = &s[start..i];
            if i < b.len() && matches!(b[i], b'f' | b'F' | b'd' | b'D') {
                i += 1;
            }
            let v: f64 = text.parse().map_err(|_| format!("bad number \"{text}\""))?;
            out.push(Tok::Num(v));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || matches!(b[i], b'_' | b'@' | b'/' | b'-' | b'.'))
            {
                // '-' and '.' may appear in netCDF names, but not before an operator.
                if matches!(b[i], b'-' | b'.')
                    && !b
                        .get(i + 1)
                        .is_some_and(|n| n.is_ascii_alphanumeric() || *n == b'_')
                {
                    break;
                }
                i += 1;
            }
            let word = &s[start..i];
            // Fortran comparison names between dots or blanks (`.lt.`) are not NCO's; the
            // bare words are taken only where a comparison is expected (see `parse`).
            out.push(Tok::Name(word.to_string()));
        } else {
            return Err(format!("unexpected character '{c}'"));
        }
    }
    Ok(out)
}

fn starts_number(rest: &[u8]) -> bool {
    rest.first()
        .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn or(&mut self) -> std::result::Result<MaskExpr, String> {
        let mut e = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            e = MaskExpr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> std::result::Result<MaskExpr, String> {
        let mut e = self.unary()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            e = MaskExpr::And(Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }

    fn unary(&mut self) -> std::result::Result<MaskExpr, String> {
        match self.peek() {
            Some(Tok::Not) => {
                self.pos += 1;
                Ok(MaskExpr::Not(Box::new(self.unary()?)))
            }
            Some(Tok::Open) => {
                self.pos += 1;
                let e = self.or()?;
                match self.next() {
                    Some(Tok::Close) => Ok(e),
                    _ => Err("a '(' is not closed".into()),
                }
            }
            _ => self.comparison(),
        }
    }

    fn comparison(&mut self) -> std::result::Result<MaskExpr, String> {
        let lhs = self.next().ok_or("a comparison is missing")?;
        let op = match self.next() {
            Some(Tok::Cmp(c)) => c,
            Some(Tok::Name(w)) if Cmp::parse(&w).is_some() => Cmp::parse(&w).unwrap_or(Cmp::Eq),
            _ => return Err("expected a comparison (== != < <= > >=)".into()),
        };
        let rhs = self.next().ok_or("a comparison lacks its right side")?;
        match (lhs, rhs) {
            (Tok::Name(var), Tok::Num(value)) => Ok(MaskExpr::Compare { var, op, value }),
            (Tok::Num(value), Tok::Name(var)) => Ok(MaskExpr::Compare {
                var,
                op: op.mirrored(),
                value,
            }),
            (Tok::Name(_), Tok::Name(_)) => Err("a comparison needs a number on one side".into()),
            _ => Err("a comparison needs a variable on one side and a number on the other".into()),
        }
    }
}

impl MaskExpr {
    /// Parse a `-B` condition (see the module docs).
    ///
    /// Errors name the option and the text.
    pub fn parse(s: &str) -> Result<MaskExpr> {
        let bad = |why: String| {
            Error::option(
                "-B",
                format!("cannot parse mask condition \"{s}\": {why} (e.g. 'lat < -60.0', '-40. < lat && lat < 40.')"),
            )
        };
        let toks = tokens(s).map_err(bad)?;
        let mut p = Parser { toks, pos: 0 };
        let e = p.or().map_err(bad)?;
        if p.pos < p.toks.len() {
            return Err(bad("unexpected text after the condition".into()));
        }
        Ok(e)
    }

    /// The mask of `-m var -T op -M value`.
    pub fn compare(var: &str, op: Cmp, value: f64) -> MaskExpr {
        MaskExpr::Compare {
            var: var.to_string(),
            op,
            value,
        }
    }

    /// The variables the condition names, each once, in order of appearance.
    pub fn variables(&self) -> Vec<String> {
        fn walk(e: &MaskExpr, out: &mut Vec<String>) {
            match e {
                MaskExpr::Compare { var, .. } => {
                    if !out.contains(var) {
                        out.push(var.clone());
                    }
                }
                MaskExpr::And(a, b) | MaskExpr::Or(a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                MaskExpr::Not(a) => walk(a, out),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// Evaluate the condition. `operands` holds, for each of [`MaskExpr::variables`] in
    /// that order, its values (C order) and dimension ids; `len(d)` is the selected
    /// length of dimension `d`. Returns the mask (1 where the condition holds, 0
    /// elsewhere, C order) and its dimensions: the union of the operands' dimensions,
    /// sorted by id.
    ///
    /// Errors: an operand whose value count does not match its dimensions.
    pub fn eval(
        &self,
        operands: &[(Vec<f64>, Vec<usize>)],
        len: &dyn Fn(usize) -> usize,
    ) -> Result<(Vec<f64>, Vec<usize>)> {
        let names = self.variables();
        let mut dims: Vec<usize> = operands.iter().flat_map(|o| o.1.iter().copied()).collect();
        dims.sort_unstable();
        dims.dedup();
        let shape: Vec<usize> = dims.iter().map(|&d| len(d)).collect();
        let n: usize = shape.iter().product();
        // Each operand broadcast onto the union: stride per union dimension.
        let mut strides = Vec::with_capacity(operands.len());
        for (k, (vals, odims)) in operands.iter().enumerate() {
            let want: usize = odims.iter().map(|&d| len(d)).product();
            if vals.len() != want {
                return Err(Error::var(
                    names.get(k).map_or("mask", String::as_str),
                    format!("mask operand has {} values for {want} elements", vals.len()),
                ));
            }
            let mut st = vec![0usize; dims.len()];
            let mut acc = 1usize;
            for &d in odims.iter().rev() {
                let u = dims.iter().position(|&x| x == d).unwrap_or(0);
                st[u] = acc;
                acc *= len(d);
            }
            strides.push(st);
        }
        let mut out = vec![0.0; n];
        let mut idx = vec![0usize; dims.len()];
        for o in out.iter_mut() {
            let value = |var: &str| -> f64 {
                let k = names.iter().position(|v| v == var).unwrap_or(0);
                let off: usize = idx.iter().zip(&strides[k]).map(|(i, s)| i * s).sum();
                operands[k].0[off]
            };
            *o = if self.holds(&value) { 1.0 } else { 0.0 };
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        Ok((out, dims))
    }

    /// True when the condition holds for the variables' values `value(name)`.
    fn holds(&self, value: &dyn Fn(&str) -> f64) -> bool {
        match self {
            MaskExpr::Compare { var, op, value: v } => op.test(value(var), *v),
            MaskExpr::And(a, b) => a.holds(value) && b.holds(value),
            MaskExpr::Or(a, b) => a.holds(value) || b.holds(value),
            MaskExpr::Not(a) => !a.holds(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(var: &str, op: Cmp, value: f64) -> MaskExpr {
        MaskExpr::compare(var, op, value)
    }

    #[test]
    fn conditions_in_either_order_and_all_comparisons() {
        assert_eq!(
            MaskExpr::parse("lat < -60.0").unwrap(),
            cmp("lat", Cmp::Lt, -60.0)
        );
        assert_eq!(
            MaskExpr::parse("lat<-60").unwrap(),
            cmp("lat", Cmp::Lt, -60.0)
        );
        assert_eq!(
            MaskExpr::parse("-40. < lat").unwrap(),
            cmp("lat", Cmp::Gt, -40.0)
        );
        assert_eq!(
            MaskExpr::parse("-40.<=lat").unwrap(),
            cmp("lat", Cmp::Ge, -40.0)
        );
        assert_eq!(
            MaskExpr::parse("1 == ORO").unwrap(),
            cmp("ORO", Cmp::Eq, 1.0)
        );
        assert_eq!(
            MaskExpr::parse("ORO != 1.5e0f").unwrap(),
            cmp("ORO", Cmp::Ne, 1.5)
        );
        assert_eq!(MaskExpr::parse("2 > x").unwrap(), cmp("x", Cmp::Lt, 2.0));
        assert_eq!(
            MaskExpr::parse("x >= 1e-3").unwrap(),
            cmp("x", Cmp::Ge, 1e-3)
        );
        assert_eq!(MaskExpr::parse("x lt 3").unwrap(), cmp("x", Cmp::Lt, 3.0));
        assert_eq!(
            MaskExpr::parse("lat_bnds-x > 3").unwrap(),
            cmp("lat_bnds-x", Cmp::Gt, 3.0)
        );
    }

    #[test]
    fn compound_conditions_with_precedence() {
        let e = MaskExpr::parse("lat > -40. && lat < 40. || !(ORO == 1)").unwrap();
        let want = MaskExpr::Or(
            Box::new(MaskExpr::And(
                Box::new(cmp("lat", Cmp::Gt, -40.0)),
                Box::new(cmp("lat", Cmp::Lt, 40.0)),
            )),
            Box::new(MaskExpr::Not(Box::new(cmp("ORO", Cmp::Eq, 1.0)))),
        );
        assert_eq!(e, want);
        assert_eq!(e.variables(), vec!["lat", "ORO"]);
        for bad in [
            "lat",
            "lat >",
            "lat > abc",
            "1 < 2",
            "(lat > 1",
            "lat > 1 )",
            "lat > 1 &&",
            "a < b",
            "lat ? 3",
        ] {
            let err = MaskExpr::parse(bad).unwrap_err().to_string();
            assert!(err.contains("-B") && err.contains(bad), "{bad}: {err}");
        }
    }

    #[test]
    fn masks_broadcast_over_the_union_of_dimensions() {
        // lat (dim 1, 4 values) and ORO (dims 1, 2: 4 x 3).
        let lat = vec![-60.0, -20.0, 20.0, 60.0];
        let oro = vec![1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let len = |d: usize| [2, 4, 3][d];
        let e = MaskExpr::parse("-40. < lat && ORO == 1").unwrap();
        let (m, dims) = e
            .eval(&[(lat.clone(), vec![1]), (oro, vec![1, 2])], &len)
            .unwrap();
        assert_eq!(dims, vec![1, 2]);
        assert_eq!(m, vec![0., 0., 0., 0., 1., 1., 1., 1., 0., 0., 0., 1.]);
        let e = MaskExpr::parse("(lat < -40.) || (lat > 40.)").unwrap();
        let (m, dims) = e.eval(&[(lat, vec![1])], &len).unwrap();
        assert_eq!((m, dims), (vec![1., 0., 0., 1.], vec![1]));
        assert!(e.eval(&[(vec![1.0], vec![1])], &len).is_err());
    }
}
