//! Evaluation of expressions: literals, variables, attributes, operators, hyperslabs,
//! assignments (which are expressions in ncap2), `++`/`--`, the conditional operator
//! and calls of builtins (dispatched on [`Op`]; the larger ones are in [`funcs`]).
//!
//! [`funcs`]: crate::funcs

use std::io::Write;

use nco_core::model::{Attr, Dim};
use nco_core::types::{NcType, Values};
use nco_core::{Error, Result};

use crate::assign::Mask;
use crate::ast::{AssignOp, BinOp, Expr, Lhs, SlabIdx};
use crate::builtins::{Builtin, Miss, Op};
use crate::funcs;
use crate::num;
use crate::ops::Un;
use crate::print;
use crate::state::Ctx;
use crate::value::{convert_warn, literal, reshape, Kind, Val};

/// True when every element of `v` that is not missing is nonzero (vacuously true when
/// all are missing): NCO's truth of a condition in `if`, `while`, `for` and `?:`.
pub(crate) fn truth(v: &Val) -> bool {
    match v.data.to_f64_vec() {
        Some(x) => x.iter().all(|&e| v.fill == Some(e) || e != 0.0),
        None => v.data.as_text().is_some_and(|t| !t.is_empty()),
    }
}

/// The type of a value list: its first member's (NCO 5.1.4 gives `{1b,2s,3,4.0f}` the
/// type NC_BYTE, where the manual says the most precise member's).
fn list_type(vals: &[Val]) -> NcType {
    vals.first().map_or(NcType::Double, Val::ty)
}

impl Ctx<'_> {
    /// Evaluate an expression.
    pub fn eval(&mut self, e: &Expr) -> Result<Val> {
        match e {
            Expr::Num(ty, text) => literal(*ty, text).map(|d| Val::scalar(d, Kind::Var)),
            Expr::Str(s) => Ok(Val::scalar(Values::Char(s.as_bytes().to_vec()), Kind::Attr)),
            Expr::NcString(s) => Ok(Val::scalar(Values::Str(vec![s.clone()]), Kind::Attr)),
            Expr::Array(items) => {
                let vals: Vec<Val> = items.iter().map(|x| self.eval(x)).collect::<Result<_>>()?;
                let ty = list_type(&vals);
                let mut data = Values::with_capacity(ty, vals.len());
                for v in &vals {
                    let c = if v.ty() == ty {
                        (*v.data).clone()
                    } else {
                        v.data
                            .convert(ty)
                            .ok_or_else(|| Error::msg("a value list mixes text and numbers"))?
                    };
                    data.extend_from(&c);
                }
                Ok(Val::scalar(data, Kind::Attr))
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
            Expr::DimList(_) => Err(Error::msg(
                "a dimension list /$a,$b/ is only an argument of array()",
            )),
            Expr::Un(op, x) => {
                let v = self.eval(x)?;
                self.unary(*op, v)
            }
            Expr::Bin(op, a, b) => {
                let a = self.eval(a)?;
                let b = self.eval(b)?;
                self.binary(*op, a, b)
            }
            Expr::Ternary(c, a, b) => {
                let c = self.eval(c)?;
                if truth(&c) {
                    self.eval(a)
                } else {
                    self.eval(b)
                }
            }
            Expr::Slab(base, idx) => self.eval_slab(base, idx),
            Expr::Call(f, args) => self.call(f, args),
            Expr::Assign(lhs, op, e) => self.eval_assign(lhs, *op, e, None),
            Expr::Step {
                target,
                inc,
                prefix,
            } => self.step(target, *inc, *prefix),
            Expr::Ref(t) => Err(Error::msg(format!(
                "&{} (a reference) is only an argument of sort() and push()",
                t.name()
            ))),
            Expr::Declare { name, .. } => Err(Error::msg(format!(
                "*{name} or {name}[...] declares a variable: it must be assigned to"
            ))),
        }
    }

    /// The value of `x(idx)`: an input variable is read at the hyperslab only.
    fn eval_slab(&mut self, base: &Expr, idx: &[SlabIdx]) -> Result<Val> {
        self.saw_slab = true;
        if let Expr::Var(name) = base {
            if !self.vars.contains_key(name) {
                let Some(shape) = self.input_shape(name) else {
                    return Err(Error::msg(format!(
                        "{name}() is neither a function nor a variable of the input file or script"
                    )));
                };
                let lists = self.slab_lists(name, &shape, idx)?;
                let v = self.read_input_at(name, &lists)?;
                return Ok(slab_result(v, &shape, idx, &lists));
            }
        }
        let mut v = self.eval(base)?;
        let name = v.src.clone().unwrap_or_default();
        // A script variable computed on a hyperslab is indexed in its whole dimensions,
        // the elements outside the hyperslab missing (NCO 5.1.4 reads it back from the
        // output: `y=lat(1:2); z=y(2:3)` takes y's elements 2 and 3).
        if v.slab.is_some() && !v.dims.is_empty() {
            let full: Vec<usize> = v.dims.iter().map(|&d| self.dims[d].len).collect();
            if let Ok(Some(data)) = crate::value::padded(&v, &full) {
                let fill = v.fill.or(Some(nco_core::fill::default_fill(v.ty())));
                v = Val {
                    data: data.into(),
                    shape: full,
                    fill,
                    slab: None,
                    ..v
                };
            }
        }
        // Attributes and lists are one-dimensional.
        let shape = if v.dims.is_empty() && v.len() != 1 || v.shape.is_empty() && idx.len() == 1 {
            vec![v.len()]
        } else {
            v.shape.clone()
        };
        let lists = self.slab_lists(&name, &shape, idx)?;
        let map = crate::value::index_map(&shape, &lists);
        let data = num::gather(&v.data, &map);
        if v.dims.is_empty() {
            return Ok(Val {
                data: data.into(),
                slab: None,
                ..v
            });
        }
        let whole = Val {
            data: data.into(),
            ..v
        };
        Ok(slab_result(whole, &shape, idx, &lists))
    }

    fn int_of(&mut self, e: &Expr) -> Result<i64> {
        let v = self.eval(e)?;
        match v.data.get_f64(0) {
            Some(x) if v.len() == 1 => Ok(x as i64),
            _ => Err(Error::msg("hyperslab indices must be single numbers")),
        }
    }

    /// The index lists of hyperslab `idx` of a variable of shape `shape`: negative
    /// indices count from the end (`-1` is the last), ends are inclusive.
    ///
    /// Errors: a rank that differs, an index outside the dimension, a stride below 1.
    pub(crate) fn slab_lists(
        &mut self,
        name: &str,
        shape: &[usize],
        idx: &[SlabIdx],
    ) -> Result<Vec<Vec<usize>>> {
        if idx.len() != shape.len() {
            return Err(Error::var(
                name,
                format!(
                    "the hyperslab has {} indices but the variable has {} dimensions",
                    idx.len(),
                    shape.len()
                ),
            ));
        }
        let mut lists = Vec::with_capacity(idx.len());
        for (k, s) in idx.iter().enumerate() {
            let n = shape[k] as i64;
            let wrap = |i: i64| if i < 0 { i + n } else { i };
            let start = match &s.start {
                Some(e) => wrap(self.int_of(e)?),
                None => 0,
            };
            let end = if s.single {
                start
            } else {
                match &s.end {
                    Some(e) => wrap(self.int_of(e)?),
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

    /// Evaluate `lhs op e` (under a where() mask): the value is the target's new value.
    pub(crate) fn eval_assign(
        &mut self,
        lhs: &Lhs,
        op: AssignOp,
        e: &Expr,
        mask: Option<&Mask>,
    ) -> Result<Val> {
        match lhs {
            Lhs::Att(var, att) => {
                let v = self.eval(e)?;
                self.store_att(var, att, op, v)?;
                self.attr_value(var, att)
            }
            Lhs::Var { name, ram, cast } => {
                let cast = match cast {
                    Some(names) => {
                        let ids: Vec<usize> = names
                            .iter()
                            .map(|n| self.dim_id(n))
                            .collect::<Result<_>>()?;
                        for &d in &ids {
                            self.use_dim(d);
                        }
                        let shape = ids.iter().map(|&d| self.dims[d].len).collect();
                        Some((ids, shape))
                    }
                    None => None,
                };
                let old_template = self.template.take();
                let old_slab = std::mem::replace(&mut self.saw_slab, false);
                self.pending_attrs = None;
                self.template = cast.clone();
                let r = self.eval(e);
                self.template = old_template;
                let mut rhs = r?;
                if let Some((ids, shape)) = &cast {
                    let n: usize = shape.iter().product();
                    rhs = if rhs.slab.is_some() && rhs.len() == n {
                        Val {
                            dims: ids.clone(),
                            shape: shape.clone(),
                            slab: None,
                            ..rhs
                        }
                    } else {
                        reshape(rhs, ids, shape, name)?
                    };
                }
                let r = self.store(name, op, rhs, cast.is_some(), *ram, mask);
                self.saw_slab = old_slab;
                r?;
                self.var_value(name)
            }
            Lhs::Slab { name, ram, idx } => {
                if mask.is_some() {
                    return Err(Error::var(
                        name,
                        "a hyperslab cannot be assigned inside where() (assign a RAM copy, then the copy)",
                    ));
                }
                let rhs = self.eval(e)?;
                // A variable computed on a hyperslab is indexed in its whole dimensions
                // (`y=lat(1:2); y(0)=5` sets lat's first element, as NCO 5.1.4).
                let full = self.vars.get(name).and_then(|v| {
                    let v = &v.val;
                    let full: Vec<usize> = v.dims.iter().map(|&d| self.dims[d].len).collect();
                    let data = crate::value::padded(v, &full).ok().flatten()?;
                    (v.slab.is_some()).then_some((data, full))
                });
                if let (Some((data, full)), Some(var)) = (full, self.vars.get_mut(name)) {
                    var.val.data = data.into();
                    var.val.shape = full;
                    var.val.slab = None;
                }
                let shape = match self.vars.get(name) {
                    Some(v) => v.val.shape.clone(),
                    None => self.input_shape(name).ok_or_else(|| {
                        Error::var(name, "is not a variable of the input file or script")
                    })?,
                };
                let lists = self.slab_lists(name, &shape, idx)?;
                self.store_slab(name, &lists, op, rhs.clone(), *ram)?;
                Ok(rhs)
            }
        }
    }

    /// `++x`, `x++`, `--x`, `x--`: the value is the new one (prefix) or the old one.
    fn step(&mut self, target: &Lhs, inc: bool, prefix: bool) -> Result<Val> {
        let one = Expr::Num(NcType::Int, "1".into());
        let op = if inc { AssignOp::Add } else { AssignOp::Sub };
        let old = match target {
            Lhs::Var { name, .. } => self.var_value(name)?,
            Lhs::Att(v, a) => self.attr_value(v, a)?,
            Lhs::Slab { .. } => Val::scalar(Values::Int(vec![0]), Kind::Var),
        };
        let new = self.eval_assign(target, op, &one, None)?;
        Ok(if prefix { new } else { old })
    }

    /// The dimensions `$d` named by the arguments (`$0`, `$1`... are the dimensions of
    /// `of`), warning about arguments that are not dimensions.
    fn dim_args(&self, f: &str, args: &[Expr], of: &Val) -> Result<Vec<usize>> {
        let mut dims = Vec::new();
        for (i, a) in args.iter().enumerate() {
            match a {
                Expr::Dim(d) => dims.push(self.dim_ref(d, of)?),
                Expr::DimList(ds) => {
                    for d in ds {
                        dims.push(self.dim_ref(d, of)?);
                    }
                }
                _ => eprintln!(
                    "{}: WARNING {f}(): Argument {} is not a dimension",
                    self.prog,
                    i + 1
                ),
            }
        }
        Ok(dims)
    }

    /// Dimension `$d` (`$0`.. the dimensions of `of`).
    fn dim_ref(&self, d: &str, of: &Val) -> Result<usize> {
        if let Ok(k) = d.parse::<usize>() {
            return of.dims.get(k).copied().ok_or_else(|| {
                Error::msg(format!(
                    "${k}: the value has {} dimension(s)",
                    of.dims.len()
                ))
            });
        }
        self.dim_id(d)
    }

    fn call(&mut self, f: &Builtin, args: &[Expr]) -> Result<Val> {
        if args.len() < f.args {
            return Err(Error::msg(format!(
                "{}() needs {} argument(s), {} given",
                f.name,
                f.args,
                args.len()
            )));
        }
        let two_arg_minmax = matches!(
            f.op,
            Op::Reduce(crate::builtins::Reduce::Min | crate::builtins::Reduce::Max)
        ) && args.len() == 2
            && !matches!(args[1], Expr::Dim(_) | Expr::DimList(_));
        if let Some(m) = f.op.max_args() {
            if args.len() > m && !two_arg_minmax {
                eprintln!(
                    "{}: WARNING {}(): called with {} arguments, uses {m}; the others are ignored",
                    self.prog,
                    f.name,
                    args.len()
                );
            }
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
                self.cast(v, ty, f.name)
            }
            Op::Convert => {
                let v = self.eval(&args[0])?;
                let code = self.int_of(&args[1])?;
                let ty = NcType::from_code(code as i32)
                    .ok_or_else(|| Error::msg(format!("convert(): {code} is not a netCDF type")))?;
                self.cast(v, ty, f.name)
            }
            Op::Abs => {
                let v = self.eval(&args[0])?;
                let ty = v.ty();
                self.map_unary(v, ty, Un::Abs)
            }
            Op::Sqr => {
                let v = self.eval(&args[0])?;
                self.binary(BinOp::Mul, v.clone(), v)
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
                if two_arg_minmax {
                    let b = self.eval(&args[1])?;
                    let bop = if op == crate::builtins::Reduce::Min {
                        BinOp::Min
                    } else {
                        BinOp::Max
                    };
                    return self.binary(bop, v, b);
                }
                let dims = self.dim_args(f.name, &args[1..], &v)?;
                self.reduce(f.name, op, v, &dims)
            }
            Op::Size => {
                let n = match &args[0] {
                    Expr::Dim(d) => self.dims[self.dim_id(d)?].len,
                    e => {
                        let v = self.eval(e)?;
                        match &*v.data {
                            Values::Char(c) if v.dims.is_empty() => c.len(),
                            _ => v.len(),
                        }
                    }
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
            Op::Exists => {
                let found = match &args[0] {
                    Expr::Var(n) => self.vars.contains_key(n) || self.input.var(n).is_some(),
                    Expr::Att(v, a) => self.attr_value(v, a).is_ok(),
                    e => self.eval(e).is_ok(),
                };
                Ok(Val::scalar(Values::Int(vec![i32::from(found)]), Kind::Var))
            }
            Op::Miss(m) => self.miss(f.name, m, args),
            Op::Reverse => {
                let v = self.eval(&args[0])?;
                let dims = self.dim_args(f.name, &args[1..], &v)?;
                funcs::reverse(v, &dims)
            }
            Op::Permute => {
                let v = self.eval(&args[0])?;
                let dims = self.dim_args(f.name, &args[1..], &v)?;
                funcs::permute(v, &dims, &self.dims)
            }
            Op::Array => self.array(args),
            Op::Mask => {
                let v = self.eval(&args[0])?;
                let idx = self.eval(&args[1])?;
                funcs::mask(v, &idx)
            }
            Op::MakeBounds => self.make_bounds(args),
            Op::Sprint(string4) => {
                let v = self.eval(&args[0])?;
                let fmt = match args.get(1) {
                    Some(f) => Some(self.text_arg(f, "sprint")?),
                    None => None,
                };
                let text = print::sprint(&v, fmt.as_deref())?;
                Ok(Val::scalar(
                    if string4 {
                        Values::Str(vec![text])
                    } else {
                        Values::Char(text.into_bytes())
                    },
                    Kind::Attr,
                ))
            }
            Op::Push => self.push(args),
            Op::Strlen => {
                let v = self.eval(&args[0])?;
                let n = v.data.as_text().map_or(0, |t| t.len());
                Ok(Val::scalar(Values::Int(vec![n as i32]), Kind::Var))
            }
            Op::Atoi(ty) => {
                let t = self.text_arg(&args[0], f.name)?;
                let x: i64 = t.trim().parse().unwrap_or(0);
                let d = if ty == NcType::Int64 {
                    Values::Int64(vec![x])
                } else {
                    Values::Int(vec![x as i32])
                };
                Ok(Val::scalar(d, Kind::Var))
            }
            Op::Sort(desc) => {
                let v = self.eval(&args[0])?;
                let (sorted, map) = funcs::sort(&v, desc);
                if let Some(Expr::Ref(target)) = args.get(1) {
                    let m = sorted.with_data(Values::Int(map), None);
                    let m = Val {
                        src: None,
                        kind: Kind::Var,
                        ..m
                    };
                    self.store(target.name(), AssignOp::Set, m, false, false, None)?;
                }
                Ok(sorted)
            }
            Op::Remap | Op::Unmap => {
                let v = self.eval(&args[0])?;
                let m = self.eval(&args[1])?;
                funcs::remap(v, &m, f.op == Op::Unmap)
            }
            Op::InvertMap => {
                let m = self.eval(&args[0])?;
                funcs::invert_map(m)
            }
            Op::RamWrite | Op::RamDelete => {
                let name = match &args[0] {
                    Expr::Var(n) => n.clone(),
                    Expr::Att(v, a) if f.op == Op::RamDelete => {
                        self.delete_att(v, a);
                        return Ok(Val::scalar(Values::Int(vec![1]), Kind::Var));
                    }
                    _ => {
                        return Err(Error::msg(format!(
                            "{}(): the argument must be a variable name",
                            f.name
                        )))
                    }
                };
                let ok = match self.vars.get_mut(&name) {
                    Some(v) if f.op == Op::RamWrite => {
                        v.ram = false;
                        true
                    }
                    Some(_) => {
                        self.vars.remove(&name);
                        true
                    }
                    None => false,
                };
                Ok(Val::scalar(Values::Int(vec![i32::from(ok)]), Kind::Var))
            }
            Op::Print => self.print(args),
            Op::Defdim => self.defdim(args),
        }
    }

    /// Conversion to `ty` with NCO's rounding; out-of-range values become missing, with
    /// a warning naming the function.
    fn cast(&mut self, v: Val, ty: NcType, f: &str) -> Result<Val> {
        if v.is_text() {
            if ty == NcType::Char {
                return Ok(v);
            }
            return Err(Error::msg(format!(
                "{f}(): cannot convert text to a number"
            )));
        }
        if ty == NcType::Char {
            let x = v.data.to_f64_vec().unwrap_or_default();
            let data = Values::Char(x.iter().map(|&e| e as u8).collect());
            return Ok(v.with_data(data, None));
        }
        let what = format!("{f}() of {}", v.src.as_deref().unwrap_or("a value"));
        Ok(convert_warn(v, ty, &what, &self.prog))
    }

    /// A text argument (a string or a text attribute).
    fn text_arg(&mut self, e: &Expr, f: &str) -> Result<String> {
        self.eval(e)?
            .data
            .as_text()
            .ok_or_else(|| Error::msg(format!("{f}(): the argument must be text")))
    }

    /// The missing-value methods; the ones that change a variable work on variables the
    /// script has written (NCO warns and returns 0 for others).
    fn miss(&mut self, f: &str, m: Miss, args: &[Expr]) -> Result<Val> {
        let int = |x: i32| Ok(Val::scalar(Values::Int(vec![x]), Kind::Var));
        match m {
            Miss::Get | Miss::Number | Miss::Has | Miss::Mask => {
                let v = self.eval(&args[0])?;
                match m {
                    Miss::Get => {
                        let ty = v.ty();
                        let x = v.fill.unwrap_or_else(|| nco_core::fill::default_fill(ty));
                        let d = Values::from_f64_slice(ty, &[x])
                            .ok_or_else(|| Error::msg("get_miss() of text"))?;
                        Ok(Val::scalar(d, Kind::Var))
                    }
                    Miss::Number => {
                        let n = match (v.fill, v.data.to_f64_vec()) {
                            (Some(fl), Some(x)) => x.iter().filter(|&&e| e == fl).count(),
                            _ => 0,
                        };
                        int(n as i32)
                    }
                    Miss::Has => int(i32::from(v.fill.is_some())),
                    _ => {
                        let x = v.data.to_f64_vec().unwrap_or_default();
                        let flags: Vec<f64> = x
                            .iter()
                            .map(|&e| f64::from(u8::from(v.fill == Some(e))))
                            .collect();
                        let data = Values::from_f64_slice(v.ty(), &flags)
                            .ok_or_else(|| Error::msg("missing() of text"))?;
                        Ok(v.with_data(data, None))
                    }
                }
            }
            Miss::Set | Miss::Change | Miss::Delete => {
                let Expr::Var(name) = &args[0] else {
                    return Err(Error::msg(format!(
                        "{f}(): the first argument must be a variable name"
                    )));
                };
                let x = match args.get(1) {
                    Some(e) => self.eval(e)?.data.get_f64(0),
                    None => None,
                };
                let Some(ov) = self.vars.get_mut(name) else {
                    eprintln!(
                        "{}: WARNING {f}(): unable to find variable: {name}",
                        self.prog
                    );
                    return int(0);
                };
                let ty = ov.val.ty();
                ov.attrs.retain(|a| a.name != "_FillValue");
                match m {
                    Miss::Delete => ov.val.fill = None,
                    _ => {
                        let new = num::in_type(x.unwrap_or(0.0), ty);
                        if m == Miss::Change {
                            if let Some(old) = ov.val.fill {
                                let mut d = ov.val.data.to_f64_vec().unwrap_or_default();
                                for e in &mut d {
                                    if *e == old {
                                        *e = new;
                                    }
                                }
                                if let Some(nd) = Values::from_f64_slice(ty, &d) {
                                    ov.val.data = nd.into();
                                }
                            }
                        }
                        ov.val.fill = Some(new);
                        ov.attrs.push(Attr {
                            name: "_FillValue".into(),
                            value: Values::from_f64_slice(ty, &[new]).expect("numeric"),
                        });
                        crate::state::sort_attrs(&mut ov.attrs);
                    }
                }
                int(1)
            }
        }
    }

    /// Remove attribute `var@att` (`ram_delete(v@att)`).
    fn delete_att(&mut self, var: &str, att: &str) {
        if var == "global" || var.is_empty() {
            self.globals.retain(|a| a.name != att);
        } else if let Some(ov) = self.vars.get_mut(var) {
            ov.attrs.retain(|a| a.name != att);
        } else if let Some(iv) = self.input.var(var) {
            let a = self
                .touched
                .entry(var.to_string())
                .or_insert_with(|| iv.attrs.clone());
            a.retain(|x| x.name != att);
            if !self.touched_order.iter().any(|n| n == var) {
                self.touched_order.push(var.to_string());
            }
        }
    }

    /// `array(start, step, $dim | template | /$d1,$d2/)`.
    fn array(&mut self, args: &[Expr]) -> Result<Val> {
        let start = self.eval(&args[0])?;
        let step = self.eval(&args[1])?;
        let (dims, shape): (Vec<usize>, Vec<usize>) = match &args[2] {
            Expr::Dim(d) => {
                let id = self.dim_id(d)?;
                (vec![id], vec![self.dims[id].len])
            }
            Expr::DimList(ds) => {
                let ids: Vec<usize> = ds.iter().map(|d| self.dim_id(d)).collect::<Result<_>>()?;
                let shape = ids.iter().map(|&d| self.dims[d].len).collect();
                (ids, shape)
            }
            e => {
                let t = self.eval(e)?;
                (t.dims.clone(), t.shape.clone())
            }
        };
        for &d in &dims {
            self.use_dim(d);
        }
        funcs::array(&start, &step, dims, shape)
    }

    /// `make_bounds(coord, $nv[, "bounds name"])`.
    fn make_bounds(&mut self, args: &[Expr]) -> Result<Val> {
        let c = self.eval(&args[0])?;
        let Expr::Dim(nv) = &args[1] else {
            return Err(Error::msg(
                "make_bounds(): the second argument must be a dimension ($nv)",
            ));
        };
        let nv = self.dim_id(nv)?;
        self.use_dim(nv);
        let b = funcs::make_bounds(&c, nv, self.dims[nv].len)?;
        // NCO 5.1.4 names the coordinate's dimension (with its `$`) and copies its units.
        let mut attrs = vec![Attr {
            name: "long_name".into(),
            value: Values::Char(
                format!("Bounds for ${} coordinate", self.dims[c.dims[0]].name).into_bytes(),
            ),
        }];
        if let Some(u) = c
            .src
            .as_deref()
            .and_then(|s| self.attrs_of(s))
            .and_then(|a| a.into_iter().find(|a| a.name == "units"))
        {
            attrs.push(u);
        }
        self.pending_attrs = Some(attrs);
        if let (Some(a), Expr::Var(cname)) = (args.get(2), &args[0]) {
            let name = self.text_arg(a, "make_bounds")?;
            let v = Val::scalar(Values::Char(name.into_bytes()), Kind::Attr);
            self.store_att(cname, "bounds", AssignOp::Set, v)?;
        }
        Ok(b)
    }

    /// `push(a, b)`: `b` appended to `a` (converted to `a`'s type); `push(&att, b)`
    /// appends to the attribute and gives its new size.
    fn push(&mut self, args: &[Expr]) -> Result<Val> {
        let b = self.eval(&args[1])?;
        if let Expr::Ref(t) = &args[0] {
            let Lhs::Att(var, att) = t.as_ref() else {
                return Err(Error::msg("push(&x, ...): x must be an attribute"));
            };
            let joined = match self.attr_value(var, att) {
                Ok(a) => funcs::concat(&a, &b)?,
                Err(_) => b,
            };
            let n = joined.len();
            self.store_att(var, att, AssignOp::Set, joined)?;
            return Ok(Val::scalar(Values::Int(vec![n as i32]), Kind::Var));
        }
        let a = self.eval(&args[0])?;
        funcs::concat(&a, &b)
    }

    /// `print(x[, format])`: write [`print::text`] to the output; 0.
    ///
    /// Errors: a format that is not a string or not a C format; writing.
    fn print(&mut self, args: &[Expr]) -> Result<Val> {
        // Printing a variable does not bring its dimensions into the output (NCO 5.1.4).
        let used = self.dims_used.clone();
        let v = self.eval(&args[0])?;
        if matches!(args[0], Expr::Var(_)) {
            self.dims_used = used;
        }
        let fmt = match args.get(1) {
            Some(f) => Some(self.text_arg(f, "print")?),
            None => None,
        };
        let text = print::text(&args[0], &v, fmt.as_deref())?;
        self.out
            .write_all(text.as_bytes())
            .map_err(|e| Error::io("stdout", e))?;
        Ok(Val::scalar(Values::Int(vec![0]), Kind::Var))
    }

    /// `defdim(name, size[, fixed])`: define a dimension (size 0, or a third argument
    /// 0 or `NC_UNLIMITED`, makes it unlimited); 0.
    ///
    /// Errors: a name that is not a string, a negative size, an existing dimension.
    fn defdim(&mut self, args: &[Expr]) -> Result<Val> {
        let name = self.text_arg(&args[0], "defdim")?;
        let size = self.int_of(&args[1])?;
        if size < 0 {
            return Err(Error::msg(format!(
                "defdim(\"{name}\"): negative size {size}"
            )));
        }
        let unlimited = match args.get(2) {
            Some(e) => self.int_of(e)? == 0,
            None => size == 0,
        };
        if self.dims.iter().any(|d| d.name == name) {
            return Err(Error::msg(format!(
                "defdim(): dimension {name} already exists"
            )));
        }
        self.dims.push(Dim {
            name,
            len: size as usize,
            unlimited,
            group: 0,
        });
        self.use_dim(self.dims.len() - 1);
        Ok(Val::scalar(Values::Int(vec![0]), Kind::Var))
    }
}

/// The value of hyperslab `lists` of a variable of shape `full` (`v` holds the selected
/// elements with `v.dims` the variable's): when every dimension not given a single
/// index is whole, those given one are dropped; otherwise NCO 5.1.4 keeps every
/// dimension, the value placed at the hyperslab's start in each (see [`Val::slab`]).
fn slab_result(v: Val, full: &[usize], idx: &[SlabIdx], lists: &[Vec<usize>]) -> Val {
    let whole = idx
        .iter()
        .zip(lists)
        .zip(full)
        .all(|((s, l), &n)| s.single || (l.len() == n && l.first() == Some(&0)));
    let (mut dims, mut shape, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    for (k, s) in idx.iter().enumerate() {
        if !whole || !s.single {
            dims.push(v.dims[k]);
            shape.push(lists[k].len());
            starts.push(if whole { 0 } else { lists[k][0] });
        }
    }
    // A partial hyperslab of one element is a scalar (NCO 5.1.4: `y=lat(1:1)`,
    // `T(0,1,1:1)`).
    if !whole && v.data.len() == 1 {
        return Val {
            dims: Vec::new(),
            shape: Vec::new(),
            slab: None,
            ..v
        };
    }
    Val {
        dims,
        shape,
        slab: Some(starts),
        ..v
    }
}
