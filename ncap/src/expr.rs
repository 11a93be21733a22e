//! Evaluation of expressions: literals, variables, attributes, operators, hyperslabs
//! and calls of builtins (dispatched on [`Op`]).

use std::io::Write;

use nco_core::model::Dim;
use nco_core::types::{NcType, Values};
use nco_core::{Error, Result};

use crate::ast::{BinOp, Expr, SlabIdx};
use crate::builtins::{Builtin, Op};
use crate::num;
use crate::ops::Un;
use crate::print;
use crate::state::Ctx;
use crate::value::{cast, index_map, literal, Kind, Val};

impl Ctx<'_> {
    /// Evaluate an expression.
    pub fn eval(&mut self, e: &Expr) -> Result<Val> {
        match e {
            Expr::Num(ty, text) => literal(*ty, text).map(|d| Val::scalar(d, Kind::Var)),
            Expr::Str(s) => Ok(Val::scalar(Values::Char(s.as_bytes().to_vec()), Kind::Var)),
            Expr::Array(items) => {
                let vals: Vec<Val> = items.iter().map(|x| self.eval(x)).collect::<Result<_>>()?;
                let ty = vals.first().map_or(NcType::Double, Val::ty);
                let mut data = Values::with_capacity(ty, vals.len());
                for v in &vals {
                    let c = v
                        .data
                        .convert(ty)
                        .ok_or_else(|| Error::msg("array literal mixes text and numbers"))?;
                    data.extend_from(&c);
                }
                let mut v = Val::scalar(data, Kind::Var);
                v.src = None;
                Ok(v)
            }
            Expr::Var(name) => self.var_value(name),
            Expr::Att(v, a) => self.attr_value(v, a),
            Expr::Dim(d) => {
                let id = self.dim_id(d)?;
                Ok(Val::scalar(
                    Values::Int(vec![self.dims[id].len as i32]),
                    Kind::Var,
                ))
            }
            Expr::Un(op, x) => {
                let v = self.eval(x)?;
                self.unary(*op, v)
            }
            Expr::Bin(op, a, b) => {
                let a = self.eval(a)?;
                let b = self.eval(b)?;
                self.binary(*op, a, b)
            }
            Expr::Slab(base, idx) => {
                self.saw_slab = true;
                if let Expr::Var(name) = base.as_ref() {
                    if !self.vars.contains_key(name) && self.input.var(name).is_none() {
                        return Err(Error::msg(format!(
                            "{name}() is neither a function nor a variable of the input file or script"
                        )));
                    }
                }
                let v = self.eval(base)?;
                self.hyperslab(v, idx)
            }
            Expr::Call(f, args) => self.call(f, args),
        }
    }

    fn hyperslab(&mut self, v: Val, idx: &[SlabIdx]) -> Result<Val> {
        let name = v.src.clone().unwrap_or_default();
        if idx.len() != v.shape.len() {
            return Err(Error::var(
                &name,
                format!(
                    "hyperslab has {} indices but the variable has {} dimensions",
                    idx.len(),
                    v.shape.len()
                ),
            ));
        }
        let lists = self.slab_lists(&name, &v.shape, idx)?;
        let map = index_map(&v.shape, &lists);
        let data = num::gather(&v.data, &map);
        let mut dims = Vec::new();
        let mut shape = Vec::new();
        for (k, s) in idx.iter().enumerate() {
            if !s.single {
                dims.push(v.dims[k]);
                shape.push(lists[k].len());
            }
        }
        Ok(Val {
            data,
            dims,
            shape,
            ..v
        })
    }

    fn int_of(&mut self, e: &Expr) -> Result<i64> {
        let v = self.eval(e)?;
        match v.data.get_f64(0) {
            Some(x) if v.len() == 1 => Ok(x as i64),
            _ => Err(Error::msg("hyperslab indices must be single numbers")),
        }
    }

    pub(crate) fn slab_lists(
        &mut self,
        name: &str,
        shape: &[usize],
        idx: &[SlabIdx],
    ) -> Result<Vec<Vec<usize>>> {
        let mut lists = Vec::with_capacity(idx.len());
        for (k, s) in idx.iter().enumerate() {
            let n = shape[k] as i64;
            let start = match &s.start {
                Some(e) => self.int_of(e)?,
                None => 0,
            };
            let end = if s.single {
                start
            } else {
                match &s.end {
                    Some(e) => self.int_of(e)?,
                    None => n - 1,
                }
            };
            let stride = match &s.stride {
                Some(e) => self.int_of(e)?,
                None => 1,
            };
            if start < 0 || end >= n || start > end || stride < 1 {
                return Err(Error::var(
                    name,
                    format!(
                        "hyperslab {start}:{end}:{stride} is outside dimension {k} of size {n}"
                    ),
                ));
            }
            lists.push(
                (start..=end)
                    .step_by(stride as usize)
                    .map(|i| i as usize)
                    .collect(),
            );
        }
        Ok(lists)
    }

    fn call(&mut self, f: &Builtin, args: &[Expr]) -> Result<Val> {
        if args.len() < f.args {
            return Err(Error::msg(format!(
                "{}() needs {} argument(s)",
                f.name, f.args
            )));
        }
        match f.op {
            Op::Math(m) => {
                let v = self.eval(&args[0])?;
                let ty = if v.ty().is_float() {
                    v.ty()
                } else {
                    NcType::Float
                };
                self.map_unary(v, ty, Un::Math(m))
            }
            Op::Cast(ty) => {
                let v = self.eval(&args[0])?;
                cast(v, ty)
            }
            Op::Abs => {
                let v = self.eval(&args[0])?;
                let ty = v.ty();
                self.map_unary(v, ty, Un::Abs)
            }
            Op::Pow | Op::Fmod => {
                let a = self.eval(&args[0])?;
                let b = self.eval(&args[1])?;
                let op = if f.op == Op::Pow {
                    BinOp::Pow
                } else {
                    BinOp::Mod
                };
                self.binary(op, a, b)
            }
            Op::Atan2 => {
                let a = self.eval(&args[0])?;
                let b = self.eval(&args[1])?;
                self.atan2(a, b)
            }
            Op::Reduce(op) => {
                let v = self.eval(&args[0])?;
                let mut dims = Vec::new();
                for a in &args[1..] {
                    match a {
                        Expr::Dim(d) => dims.push(self.dim_id(d)?),
                        _ => eprintln!(
                            "{}: WARNING {}(): Argument {} is not a dimension",
                            self.prog,
                            f.name,
                            dims.len() + 1
                        ),
                    }
                }
                self.reduce(f.name, op, v, &dims)
            }
            Op::Size => {
                let n = match &args[0] {
                    Expr::Dim(d) => self.dims[self.dim_id(d)?].len,
                    e => self.eval(e)?.len(),
                };
                Ok(Val::scalar(Values::Int(vec![n as i32]), Kind::Var))
            }
            Op::Ndims => {
                let v = self.eval(&args[0])?;
                Ok(Val::scalar(
                    Values::Int(vec![v.dims.len() as i32]),
                    Kind::Var,
                ))
            }
            Op::Type => {
                let v = self.eval(&args[0])?;
                Ok(Val::scalar(Values::Int(vec![v.ty().code()]), Kind::Var))
            }
            Op::Print => self.print(args),
            Op::Defdim => self.defdim(args),
        }
    }

    /// `print(x[, format])`: write [`print::text`] to the output; 0.
    ///
    /// Errors: a format that is not a string or not a C format; writing.
    fn print(&mut self, args: &[Expr]) -> Result<Val> {
        let v = self.eval(&args[0])?;
        let fmt = match args.get(1) {
            Some(f) => Some(
                self.eval(f)?
                    .data
                    .as_text()
                    .ok_or_else(|| Error::msg("print(): the format must be a string"))?,
            ),
            None => None,
        };
        let text = print::text(&args[0], &v, fmt.as_deref())?;
        self.out
            .write_all(text.as_bytes())
            .map_err(|e| Error::io("stdout", e))?;
        Ok(Val::scalar(Values::Int(vec![0]), Kind::Var))
    }

    /// `defdim(name, size[, unlimited])`: define a dimension; 0.
    ///
    /// Errors: a name that is not a string, a negative size, an existing dimension.
    fn defdim(&mut self, args: &[Expr]) -> Result<Val> {
        let name = match self.eval(&args[0])?.data.as_text() {
            Some(s) => s,
            None => return Err(Error::msg("defdim() needs a dimension name string")),
        };
        let size = self.int_of(&args[1])?;
        if size < 0 {
            return Err(Error::msg(format!(
                "defdim(\"{name}\"): negative size {size}"
            )));
        }
        let unlimited = args.len() > 2;
        if self.dims.iter().any(|d| d.name == name) {
            return Err(Error::msg(format!(
                "defdim(): dimension {name} already exists"
            )));
        }
        self.dims.push(Dim {
            name,
            len: size as usize,
            unlimited,
        });
        self.use_dim(self.dims.len() - 1);
        Ok(Val::scalar(Values::Int(vec![0]), Kind::Var))
    }
}
