//! Evaluation of ncap2 statements against an input dataset, following NCO 5.1.4's
//! rules (each checked against the system ncap2):
//!
//! * types: integer literal NC_INT, `1.0` NC_DOUBLE; variable ∘ variable gives the more
//!   precise type, a literal counts as a variable; variable ∘ attribute gives the
//!   variable's type (the attribute is converted first, rounding); attribute ∘
//!   attribute the more precise. Math functions of integers compute in NC_FLOAT;
//!   `^` of two integers gives NC_FLOAT. Arithmetic runs in the result type.
//! * shapes: an operand whose dimensions are a subset of the other's is broadcast; with
//!   LHS casting (`v[lat,lon]=...`) operands that are subsets of the cast are broadcast
//!   to it.
//! * missing values: `_FillValue` only; a result is missing where an operand is; the
//!   result's fill is the first operand's, else the second's. Packed variables are
//!   unpacked when read.
//! * assignment: a new variable takes the result type and copies the attributes of the
//!   first variable of the right-hand side (plus those of an input variable of the same
//!   name), sorted by name; a variable already written by the script keeps its type;
//!   `+= -= *= /=` convert the right-hand side to the variable's type first.

use std::collections::HashMap;
use std::io::Write;

use nco_core::arith;
use nco_core::cfmt;
use nco_core::dataset::Dataset;
use nco_core::model::{Attr, Dim, Meta};
use nco_core::types::{NcNum, NcType, Values};
use nco_core::{Error, Result};

use crate::ast::{AssignOp, BinOp, Expr, Lhs, SlabIdx, Stmt, UnOp};
use crate::builtins::{Builtin, MathFn, Op, Reduce};
use crate::num::{self, with_type, Arith};

/// Whether a value behaves as a variable or as an attribute in type promotion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Variables, literals, results involving a variable.
    Var,
    /// Attribute values and results of attribute-only expressions.
    Attr,
}

/// A value during evaluation.
#[derive(Clone, Debug)]
pub struct Val {
    /// Elements (row-major).
    pub data: Values,
    /// Dimension ids (into [`Ctx::dims`]); empty for scalars and anonymous lists.
    pub dims: Vec<usize>,
    /// Length along each of `dims` (may be shorter than the dimension after a hyperslab).
    pub shape: Vec<usize>,
    /// Missing value, in the type of `data`.
    pub fill: Option<f64>,
    /// Promotion behaviour.
    pub kind: Kind,
    /// The variable whose attributes a new variable copies.
    pub src: Option<String>,
}

impl Val {
    fn scalar(data: Values, kind: Kind) -> Val {
        Val {
            data,
            dims: Vec::new(),
            shape: Vec::new(),
            fill: None,
            kind,
            src: None,
        }
    }

    /// Type of the elements.
    pub fn ty(&self) -> NcType {
        self.data.nc_type()
    }

    fn len(&self) -> usize {
        self.data.len()
    }

    fn is_scalar(&self) -> bool {
        self.dims.is_empty() && self.data.len() == 1
    }

    fn is_text(&self) -> bool {
        matches!(self.ty(), NcType::Char | NcType::Str)
    }
}

/// A variable written by the script.
#[derive(Clone, Debug)]
pub struct OutVar {
    /// Its current value (type fixed at first assignment).
    pub val: Val,
    /// Attributes (sorted by name at definition).
    pub attrs: Vec<Attr>,
}

/// The evaluation state.
pub struct Ctx<'a> {
    ds: Option<&'a Dataset>,
    /// Input metadata (empty without an input file).
    pub input: Meta,
    /// Dimension table: the input's, then `defdim` ones.
    pub dims: Vec<Dim>,
    /// Dimensions in order of first use.
    pub dims_used: Vec<usize>,
    /// Variables written by the script.
    pub vars: HashMap<String, OutVar>,
    /// Attribute lists of input variables changed by `v@att=` (not otherwise written).
    pub touched: HashMap<String, Vec<Attr>>,
    /// Order in which input variables were touched.
    pub touched_order: Vec<String>,
    /// Global attributes (input's, with script changes).
    pub globals: Vec<Attr>,
    template: Option<(Vec<usize>, Vec<usize>)>,
    /// Output position class of each written variable (see [`Ctx::output_order`]).
    placement: HashMap<String, (u8, usize)>,
    /// A hyperslab was evaluated in the current statement.
    saw_slab: bool,
    /// Streamed evaluation ([`Ctx::set_block`]): input variables with these dimensions
    /// are read at this selection only.
    block: Option<(Vec<usize>, Vec<Vec<usize>>)>,
    /// Input variables read for the current block, by name.
    block_inputs: HashMap<String, Val>,
    out: Box<dyn Write + 'a>,
    prog: String,
}

/// The dimensions of a script that can be evaluated block by block, or `None`.
///
/// A script qualifies when every statement is a plain assignment `name = expr` to a
/// new variable (not an input variable), and every `expr` is built from number
/// literals, input variables that all have the same dimensions (at least one),
/// variables the script defined before, `+ - * / % ^`, unary minus, and element-wise
/// functions (math functions, casts, `abs`, `pow`, `fmod`), with at least one
/// variable. Each element of the results then depends only on the same element of
/// the inputs, so evaluating the script on blocks of the inputs
/// ([`Ctx::set_block`]) gives the blocks of the whole-array results: same values,
/// types, fill values and attributes.
pub fn blockwise_dims(stmts: &[Stmt], input: &Meta) -> Option<Vec<usize>> {
    fn expr_ok(
        e: &Expr,
        input: &Meta,
        defined: &[&str],
        dims: &mut Option<Vec<usize>>,
        saw: &mut bool,
    ) -> bool {
        match e {
            Expr::Num(t, _) => t.is_numeric(),
            Expr::Var(n) if defined.contains(&n.as_str()) => {
                *saw = true;
                true
            }
            Expr::Var(n) => {
                let Some(v) = input.var(n) else {
                    return false;
                };
                if !v.ty.is_numeric() || v.dims.is_empty() {
                    return false;
                }
                *saw = true;
                match dims {
                    Some(d) => *d == v.dims,
                    None => {
                        *dims = Some(v.dims.clone());
                        true
                    }
                }
            }
            Expr::Bin(op, a, b) => {
                matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow
                ) && expr_ok(a, input, defined, dims, saw)
                    && expr_ok(b, input, defined, dims, saw)
            }
            Expr::Un(UnOp::Neg, a) => expr_ok(a, input, defined, dims, saw),
            Expr::Call(f, args) => {
                f.op.is_elementwise()
                    && args.len() == f.args
                    && args.iter().all(|a| expr_ok(a, input, defined, dims, saw))
            }
            _ => false,
        }
    }
    let mut dims = None;
    let mut defined: Vec<&str> = Vec::new();
    for s in stmts {
        let Stmt::Assign(Lhs::Var { name, cast: None }, AssignOp::Set, e) = s else {
            return None;
        };
        if input.var(name).is_some() {
            return None;
        }
        let mut saw = false;
        if !expr_ok(e, input, &defined, &mut dims, &mut saw) || !saw {
            return None;
        }
        defined.push(name);
    }
    dims
}

fn rank(t: NcType) -> u8 {
    t.precision_rank()
}

fn sort_attrs(attrs: &mut [Attr]) {
    attrs.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
}

impl<'a> Ctx<'a> {
    /// A context reading from `ds` (or from nothing), printing to `out`.
    pub fn new(ds: Option<&'a Dataset>, out: Box<dyn Write + 'a>, prog: &str) -> Ctx<'a> {
        let input = ds.map_or_else(
            || Meta::new(nco_core::model::Format::Classic),
            |d| d.meta().clone(),
        );
        Ctx {
            ds,
            dims: input.dims.clone(),
            globals: input.attrs.clone(),
            input,
            dims_used: Vec::new(),
            vars: HashMap::new(),
            touched: HashMap::new(),
            touched_order: Vec::new(),
            template: None,
            placement: HashMap::new(),
            saw_slab: false,
            block: None,
            block_inputs: HashMap::new(),
            out,
            prog: prog.to_string(),
        }
    }

    /// Evaluate for one block of an element-wise script ([`blockwise_dims`]): input
    /// variables whose dimensions are `dims` are read at `sel` (one index list per
    /// dimension) instead of whole, so every value computed from them covers that
    /// block only.
    pub fn set_block(&mut self, dims: Vec<usize>, sel: Vec<Vec<usize>>) {
        self.block = Some((dims, sel));
    }

    /// Run statements in order.
    pub fn run(&mut self, stmts: &[Stmt]) -> Result<()> {
        for s in stmts {
            self.stmt(s, None)?;
        }
        self.out.flush().map_err(|e| Error::io("stdout", e))
    }

    /// Names of the written variables in NCO's output order: variables defined from a
    /// hyperslab or updated under where() first (script order), then the others sorted
    /// by name (in script order when the script writes three variables or fewer),
    /// then those computed from attributes only (script order). This mimics what NCO
    /// 5.1.4 was observed to do.
    pub fn output_order(&self) -> Vec<String> {
        let mut names: Vec<&String> = self.vars.keys().collect();
        let by_name = names.len() > 3;
        names.sort_by(|a, b| {
            let (ca, sa) = self.placement.get(*a).copied().unwrap_or((1, 0));
            let (cb, sb) = self.placement.get(*b).copied().unwrap_or((1, 0));
            ca.cmp(&cb).then(if ca == 1 && by_name {
                a.as_bytes().cmp(b.as_bytes())
            } else {
                sa.cmp(&sb)
            })
        });
        names.into_iter().cloned().collect()
    }

    fn place(&mut self, name: &str, class: u8) {
        let seq = self.placement.len();
        let e = self
            .placement
            .entry(name.to_string())
            .or_insert((class, seq));
        if class == 0 && e.0 == 1 {
            *e = (0, seq);
        }
    }

    fn use_dim(&mut self, d: usize) {
        if !self.dims_used.contains(&d) {
            self.dims_used.push(d);
        }
    }

    fn dim_id(&self, name: &str) -> Result<usize> {
        self.dims
            .iter()
            .position(|d| d.name == name)
            .ok_or_else(|| Error::msg(format!("dimension {name} is not defined")))
    }

    fn stmt(&mut self, s: &Stmt, mask: Option<&(Val, bool)>) -> Result<()> {
        match s {
            Stmt::Assign(lhs, op, e) => self.assign(lhs, *op, e, mask),
            Stmt::Expr(e) => self.eval(e).map(|_| ()),
            Stmt::Block(b) => {
                for s in b {
                    self.stmt(s, mask)?;
                }
                Ok(())
            }
            Stmt::If(c, t, e) => {
                let v = self.eval(c)?;
                let truth = v
                    .data
                    .to_f64_vec()
                    .is_some_and(|x| x.iter().any(|&x| x != 0.0));
                for s in if truth { t } else { e } {
                    self.stmt(s, mask)?;
                }
                Ok(())
            }
            Stmt::Where(c, t, e) => {
                let cond = self.eval(c)?;
                if cond.is_text() {
                    return Err(Error::msg("where() condition must be numeric"));
                }
                let pos = (cond.clone(), false);
                for s in t {
                    self.stmt(s, Some(&pos))?;
                }
                let neg = (cond, true);
                for s in e {
                    self.stmt(s, Some(&neg))?;
                }
                Ok(())
            }
        }
    }

    // ----- variables and attributes ---------------------------------------------------

    /// The current attributes of variable `name` (script's, touched, or input's).
    fn attrs_of(&self, name: &str) -> Option<Vec<Attr>> {
        if let Some(v) = self.vars.get(name) {
            return Some(v.attrs.clone());
        }
        if let Some(a) = self.touched.get(name) {
            return Some(a.clone());
        }
        self.input.var(name).map(|v| v.attrs.clone())
    }

    /// Read an input variable, unpacked, with its fill value.
    fn read_input(&mut self, name: &str) -> Result<Option<Val>> {
        let Some(id) = self.input.var_id(name) else {
            return Ok(None);
        };
        let ds = self.ds.expect("input variables come from a dataset");
        let pv = arith::prepare(&self.input, id, false);
        let var = &self.input.vars[id];
        let block_shape: Option<Vec<usize>> = match &self.block {
            Some((dims, sel)) if *dims == var.dims => Some(sel.iter().map(Vec::len).collect()),
            _ => None,
        };
        let raw = match &self.block {
            Some((_, sel)) if block_shape.is_some() => ds.read(id, sel)?,
            _ => ds.read_all(id)?,
        };
        let (data, fill) = match &pv.pack {
            Some(_) if raw.nc_type().is_numeric() => {
                let x = pv.unpacked(&raw);
                let fill = pv.in_fill.map(|_| pv.out_fill);
                let data = Values::from_f64_slice(pv.out.ty, &x)
                    .ok_or_else(|| Error::var(name, "cannot unpack"))?;
                (data, fill)
            }
            _ => (raw, pv.in_fill),
        };
        let dims = self.input.vars[id].dims.clone();
        for &d in &dims {
            self.use_dim(d);
        }
        let shape =
            block_shape.unwrap_or_else(|| dims.iter().map(|&d| self.input.dims[d].len).collect());
        Ok(Some(Val {
            data,
            dims,
            shape,
            fill,
            kind: Kind::Var,
            src: Some(name.to_string()),
        }))
    }

    fn var_value(&mut self, name: &str) -> Result<Val> {
        if let Some(v) = self.vars.get(name) {
            let mut v = v.val.clone();
            v.kind = Kind::Var;
            v.src = Some(name.to_string());
            return Ok(v);
        }
        // A block's inputs are small: keep each one read for the block's other uses
        // (`x*x` reads x once).
        if let Some(v) = self.block_inputs.get(name) {
            return Ok(v.clone());
        }
        let v = self.read_input(name)?.ok_or_else(|| {
            Error::var(
                name,
                "is not in the input file nor defined by the script (unknown variable)",
            )
        })?;
        if self.block.is_some() {
            self.block_inputs.insert(name.to_string(), v.clone());
        }
        Ok(v)
    }

    fn attr_value(&self, var: &str, att: &str) -> Result<Val> {
        let attrs = if var == "global" || var.is_empty() {
            Some(self.globals.clone())
        } else {
            self.attrs_of(var)
        };
        let attrs =
            attrs.ok_or_else(|| Error::var(var, "unknown variable in attribute reference"))?;
        let a = attrs
            .iter()
            .find(|a| a.name == att)
            .ok_or_else(|| Error::msg(format!("attribute {var}@{att} does not exist")))?;
        Ok(Val::scalar(a.value.clone(), Kind::Attr))
    }

    // ----- expressions ----------------------------------------------------------------

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

    fn unary(&mut self, op: UnOp, v: Val) -> Result<Val> {
        if v.is_text() {
            return Err(Error::msg("arithmetic on text is not supported"));
        }
        let ty = v.ty();
        let Val {
            data,
            dims,
            shape,
            fill,
            kind,
            src,
        } = v;
        let data = with_type!(ty, T => {
            let mut x = num::take::<T>(data);
            let f = fill.map(T::from_f64);
            match op {
                UnOp::Neg => num::unary_into(&mut x, f, |a: T| a.neg()),
                UnOp::Not => num::unary_into(&mut x, f, |a: T| T::from_bool(!a.truth())),
            }
            T::into_values(x)
        }; text => unreachable!());
        Ok(Val {
            data,
            dims,
            shape,
            fill,
            kind,
            src,
        })
    }

    /// Shapes of two operands made to agree: the common dims/shape and, for each
    /// operand, `None` (already that shape, or a scalar) or a gather map.
    fn conform(&self, a: &Val, b: &Val) -> Result<(Vec<usize>, Vec<usize>, Bcast, Bcast)> {
        if a.dims == b.dims && a.shape == b.shape && a.len() == b.len() {
            return Ok((a.dims.clone(), a.shape.clone(), Bcast::Same, Bcast::Same));
        }
        if b.is_scalar() {
            return Ok((a.dims.clone(), a.shape.clone(), Bcast::Same, Bcast::Scalar));
        }
        if a.is_scalar() {
            return Ok((b.dims.clone(), b.shape.clone(), Bcast::Scalar, Bcast::Same));
        }
        // Anonymous lists (attributes, array literals) match by length.
        if a.dims.is_empty() && a.len() == b.len() {
            return Ok((b.dims.clone(), b.shape.clone(), Bcast::Same, Bcast::Same));
        }
        if b.dims.is_empty() && a.len() == b.len() {
            return Ok((a.dims.clone(), a.shape.clone(), Bcast::Same, Bcast::Same));
        }
        if let Some(m) = bcast_map(&b.dims, &b.shape, &a.dims, &a.shape) {
            return Ok((a.dims.clone(), a.shape.clone(), Bcast::Same, Bcast::Map(m)));
        }
        if let Some(m) = bcast_map(&a.dims, &a.shape, &b.dims, &b.shape) {
            return Ok((b.dims.clone(), b.shape.clone(), Bcast::Map(m), Bcast::Same));
        }
        if let Some((td, ts)) = &self.template {
            if let (Some(ma), Some(mb)) = (
                bcast_map(&a.dims, &a.shape, td, ts),
                bcast_map(&b.dims, &b.shape, td, ts),
            ) {
                return Ok((td.clone(), ts.clone(), Bcast::Map(ma), Bcast::Map(mb)));
            }
        }
        let names = |v: &Val| {
            v.dims
                .iter()
                .map(|&d| self.dims[d].name.clone())
                .collect::<Vec<_>>()
                .join(",")
        };
        Err(Error::msg(format!(
            "operands {}({}) and {}({}) do not conform: neither has all the other's dimensions",
            a.src.as_deref().unwrap_or("expression"),
            names(a),
            b.src.as_deref().unwrap_or("expression"),
            names(b)
        )))
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val) -> Result<Val> {
        if a.is_text() || b.is_text() {
            return Err(Error::msg("arithmetic on text is not supported"));
        }
        let mut ty = match (a.kind, b.kind) {
            (Kind::Attr, Kind::Var) => b.ty(),
            (Kind::Var, Kind::Attr) => a.ty(),
            _ => {
                if rank(a.ty()) >= rank(b.ty()) {
                    a.ty()
                } else {
                    b.ty()
                }
            }
        };
        if op == BinOp::Pow && !ty.is_float() {
            ty = NcType::Float;
        }
        let kind = if a.kind == Kind::Var || b.kind == Kind::Var {
            Kind::Var
        } else {
            Kind::Attr
        };
        let (dims, shape, ma, mb) = self.conform(&a, &b)?;
        let fa = a.fill.map(|f| num::in_type(f, ty));
        let fb = b.fill.map(|f| num::in_type(f, ty));
        let fout = fa.or(fb);
        let n = match (&ma, &mb) {
            (Bcast::Map(m), _) | (_, Bcast::Map(m)) => m.len(),
            (Bcast::Scalar, _) => b.len(),
            _ => a.len(),
        };
        let a_scalar = matches!(ma, Bcast::Scalar);
        let b_scalar = matches!(mb, Bcast::Scalar);
        let src = a.src.or(b.src);
        let pa = ma.place(num::into_type(a.data, ty));
        let pb = mb.place(num::into_type(b.data, ty));
        let data = with_type!(ty, T => {
            let (fa, fb) = (fa.map(T::from_f64), fb.map(T::from_f64));
            let fo = T::from_f64(fout.unwrap_or(0.0));
            let (mut xa, mut xb) = (num::take::<T>(pa), num::take::<T>(pb));
            if !a_scalar || b_scalar {
                num::binary_into(op, &mut xa[..n], num::side(&xb, b_scalar), true, fa, fb, fo);
                xa.truncate(n);
                T::into_values(xa)
            } else {
                num::binary_into(op, &mut xb[..n], num::Side::Scalar(xa[0]), false, fa, fb, fo);
                xb.truncate(n);
                T::into_values(xb)
            }
        }; text => unreachable!());
        Ok(Val {
            data,
            dims,
            shape,
            fill: fout,
            kind,
            src,
        })
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

    fn slab_lists(
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
            Op::Print => {
                self.print(&args[0], args.get(1))?;
                Ok(Val::scalar(Values::Int(vec![0]), Kind::Var))
            }
            Op::Defdim => {
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
    }

    fn map_unary(&mut self, v: Val, ty: NcType, u: Un) -> Result<Val> {
        if v.is_text() {
            return Err(Error::msg("arithmetic on text is not supported"));
        }
        let fill = v.fill.map(|x| num::in_type(x, ty));
        let Val {
            data,
            dims,
            shape,
            kind,
            src,
            ..
        } = v;
        let c = num::into_type(data, ty);
        let data = with_type!(ty, T => {
            let mut x = num::take::<T>(c);
            num::unary_into(&mut x, fill.map(T::from_f64), |x: T| un(u, x));
            T::into_values(x)
        }; text => unreachable!());
        Ok(Val {
            data,
            dims,
            shape,
            fill,
            kind,
            src,
        })
    }

    fn atan2(&mut self, a: Val, b: Val) -> Result<Val> {
        // Shaped like a binary operation; always computed and typed in double, as NCO
        // 5.1.4 does (atan2 of two floats is a double there).
        let mut r = self.binary(BinOp::Add, a.clone(), b.clone())?;
        let ty = NcType::Double;
        let (_, _, ma, mb) = self.conform(&a, &b)?;
        let ca = num::as_type(&a.data, ty);
        let cb = num::as_type(&b.data, ty);
        let ga = ma.apply(&ca);
        let gb = mb.apply(&cb);
        let fill = r.fill.map(|x| num::in_type(x, ty));
        let (fa, fb) = (a.fill, b.fill);
        let n = r.len();
        r.data = with_type!(ty, T => {
            let xa = num::slice::<T>(ga.as_ref().unwrap_or(&ca));
            let xb = num::slice::<T>(gb.as_ref().unwrap_or(&cb));
            let at = |s: &[T], i: usize| if s.len() == 1 { s[0] } else { s[i] };
            T::into_values((0..n).map(|i| {
                let (y, x) = (at(xa, i), at(xb, i));
                if fa.is_some_and(|f| y.to_f64() == f) || fb.is_some_and(|f| x.to_f64() == f) {
                    T::from_f64(fill.unwrap_or(0.0))
                } else {
                    y.atan2(x)
                }
            }).collect())
        }; text => unreachable!());
        r.fill = fill;
        Ok(r)
    }

    /// The reduction `op` (the method called `f`) over `dims` (all when empty),
    /// skipping missing elements; the result keeps the type (integer averages and
    /// roots truncate, as in NCO).
    fn reduce(&mut self, f: &str, op: Reduce, v: Val, dims: &[usize]) -> Result<Val> {
        if v.is_text() {
            return Err(Error::msg(format!("{f}() of text is not supported")));
        }
        let all = dims.is_empty();
        let keep: Vec<usize> = (0..v.dims.len())
            .filter(|&k| !all && !dims.contains(&v.dims[k]))
            .collect();
        for d in dims {
            if !v.dims.contains(d) {
                eprintln!(
                    "{}: WARNING {f}(): dimension {} is not a dimension of the argument",
                    self.prog, self.dims[*d].name
                );
            }
        }
        let out_shape: Vec<usize> = keep.iter().map(|&k| v.shape[k]).collect();
        let out_n: usize = out_shape.iter().product();
        // Output index of every input element.
        let mut ostride = vec![0usize; v.shape.len()];
        let mut acc = 1usize;
        for &k in keep.iter().rev() {
            ostride[k] = acc;
            acc *= v.shape[k];
        }
        let ty = v.ty();
        let fill = v.fill;
        let data = with_type!(ty, T => T::into_values(num::reduce(
            op,
            num::slice::<T>(&v.data),
            fill.map(T::from_f64),
            &v.shape,
            &ostride,
            out_n,
        )); text => unreachable!());
        Ok(Val {
            data,
            dims: keep.iter().map(|&k| v.dims[k]).collect(),
            shape: out_shape,
            fill,
            kind: v.kind,
            src: v.src,
        })
    }

    fn print(&mut self, e: &Expr, fmt: Option<&Expr>) -> Result<()> {
        let v = self.eval(e)?;
        let fmt = match fmt {
            Some(f) => Some(
                self.eval(f)?
                    .data
                    .as_text()
                    .ok_or_else(|| Error::msg("print(): the format must be a string"))?,
            ),
            None => None,
        };
        let mut s = String::new();
        if let Some(fmt) = fmt {
            let cf = cfmt::CFormat::parse(&cfmt::unescape(&fmt))?;
            if let Some(t) = v.data.as_text() {
                s.push_str(&cf.format(cfmt::Arg::Str(&t)));
            } else {
                for i in 0..v.len() {
                    s.push_str(&cf.format(arg_of(&v.data, i)));
                }
            }
            s.push('\n');
        } else {
            match e {
                Expr::Var(name) if !v.is_text() => {
                    if v.is_scalar() {
                        s.push_str(&format!("{name} = {} \n", fmt_elem(&v.data, 0)));
                    } else {
                        for i in 0..v.len() {
                            s.push_str(&format!("{name}[{i}]={} \n", fmt_elem(&v.data, i)));
                        }
                    }
                    s.push('\n');
                }
                _ => {
                    let name = match e {
                        Expr::Att(var, att) => format!("{var}@{att}"),
                        _ => v.src.clone().unwrap_or_default(),
                    };
                    let value = match v.data.as_text() {
                        Some(t) => t,
                        None => (0..v.len())
                            .map(|i| fmt_elem(&v.data, i))
                            .collect::<Vec<_>>()
                            .join(", "),
                    };
                    s.push_str(&format!(
                        "{name}, size = {} {}, value = {value}\n",
                        v.len(),
                        v.ty().nc_name()
                    ));
                }
            }
        }
        self.out
            .write_all(s.as_bytes())
            .map_err(|e| Error::io("stdout", e))
    }

    // ----- assignment -----------------------------------------------------------------

    fn assign(
        &mut self,
        lhs: &Lhs,
        op: AssignOp,
        e: &Expr,
        mask: Option<&(Val, bool)>,
    ) -> Result<()> {
        self.saw_slab = false;
        match lhs {
            Lhs::Att(var, att) => self.assign_att(var, att, op, e),
            Lhs::Var { name, cast } => {
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
                self.template = cast.clone();
                let r = self.eval(e);
                self.template = old_template;
                let mut rhs = r?;
                if let Some((ids, shape)) = &cast {
                    rhs = reshape(rhs, ids, shape, name)?;
                }
                self.store(name, op, rhs, cast.is_some(), mask)
            }
            Lhs::Slab(name, idx) => {
                if mask.is_some() {
                    return Err(Error::msg(
                        "hyperslab assignment inside where() is not supported",
                    ));
                }
                let rhs = self.eval(e)?;
                self.assign_slab(name, idx, op, rhs)
            }
        }
    }

    fn assign_att(&mut self, var: &str, att: &str, op: AssignOp, e: &Expr) -> Result<()> {
        let mut v = self.eval(e)?;
        if op != AssignOp::Set {
            let cur = self.attr_value(var, att)?;
            v = self.binary(compound(op), cur, v)?;
        }
        let value = match v.data {
            Values::Str(s) => Values::Char(s.join(",").into_bytes()),
            d => d,
        };
        let attr = Attr {
            name: att.to_string(),
            value,
        };
        if var == "global" || var.is_empty() {
            nco_core::model::set_attr(&mut self.globals, attr);
            return Ok(());
        }
        if let Some(ov) = self.vars.get_mut(var) {
            nco_core::model::set_attr(&mut ov.attrs, attr);
            return Ok(());
        }
        let Some(iv) = self.input.var(var) else {
            return Err(Error::var(
                var,
                "cannot set an attribute of an unknown variable",
            ));
        };
        if !self.touched.contains_key(var) {
            self.touched.insert(var.to_string(), iv.attrs.clone());
            self.touched_order.push(var.to_string());
        }
        nco_core::model::set_attr(self.touched.get_mut(var).expect("inserted"), attr);
        Ok(())
    }

    /// Store `rhs` into variable `name` with `op` (and a where() mask).
    fn store(
        &mut self,
        name: &str,
        op: AssignOp,
        mut rhs: Val,
        cast: bool,
        mask: Option<&(Val, bool)>,
    ) -> Result<()> {
        if rhs.is_text() && (op != AssignOp::Set || mask.is_some()) {
            return Err(Error::var(name, "arithmetic on text is not supported"));
        }
        let existing = self.vars.contains_key(name);
        let needs_current = op != AssignOp::Set || mask.is_some();
        let current = if existing || needs_current {
            Some(self.var_value(name)?)
        } else {
            None
        };
        if op != AssignOp::Set {
            let cur = current.clone().expect("loaded");
            let ty = cur.ty();
            rhs = cast_keep(rhs, ty);
            rhs = self.binary(compound(op), cur, rhs)?;
        }
        // The shape and type the stored value must have: a variable already written
        // (or updated in place by an operator or where()) keeps its own.
        let (ty, dims, shape) = match &current {
            Some(c) if !cast => (c.ty(), c.dims.clone(), c.shape.clone()),
            Some(c) if existing => (c.ty(), rhs.dims.clone(), rhs.shape.clone()),
            _ => (rhs.ty(), rhs.dims.clone(), rhs.shape.clone()),
        };
        // Anonymous lists cannot be written: give a 1-D list a dimension of its length.
        if rhs.dims.is_empty() && rhs.len() > 1 && dims.is_empty() {
            return Err(Error::var(
                name,
                "an array without dimensions needs LHS casting, e.g. v[lon]={...}",
            ));
        }
        let mut val = if rhs.dims == dims && rhs.shape == shape {
            rhs
        } else {
            reshape(rhs, &dims, &shape, name)?
        };
        if !val.is_text() {
            val = cast_keep(val, ty);
        }
        if let Some((cond, negate)) = mask {
            let cur = current.expect("loaded for where()");
            let cond = reshape(cond.clone(), &dims, &shape, name)?;
            let c = cond.data.to_f64_vec().unwrap_or_default();
            let keep: Vec<bool> = c
                .iter()
                .map(|&x| {
                    // A missing condition counts as false: elsewhere applies there.
                    let holds = cond.fill != Some(x) && x != 0.0;
                    holds != *negate
                })
                .collect();
            let cur_data = num::as_type(&cur.data, ty).into_owned();
            val.data = with_type!(ty, T => {
                let n = num::slice::<T>(&val.data);
                let o = num::slice::<T>(&cur_data);
                T::into_values(keep.iter().enumerate().map(|(i, &k)| if k { n[i] } else { o[i] }).collect())
            }; text => unreachable!());
            val.fill = cur.fill.map(|f| num::in_type(f, ty)).or(val.fill);
        }
        for &d in &val.dims {
            self.use_dim(d);
        }
        if mask.is_some() {
            self.place(name, 0);
        }
        if let Some(ov) = self.vars.get_mut(name) {
            if let Some(f) = val.fill {
                if ov.val.fill.is_none() {
                    nco_core::model::set_attr(
                        &mut ov.attrs,
                        Attr {
                            name: "_FillValue".into(),
                            value: Values::from_f64_slice(ty, &[f]).expect("numeric"),
                        },
                    );
                }
            }
            val.fill = val.fill.or(ov.val.fill);
            ov.val = val;
            return Ok(());
        }
        // A new output variable: attributes of the first RHS variable, then of an
        // input variable of the same name.
        let mut attrs: Vec<Attr> = Vec::new();
        if let Some(src) = &val.src {
            if let Some(a) = self.attrs_of(src) {
                attrs = a;
            }
        }
        for a in ["scale_factor", "add_offset", "_FillValue"] {
            attrs.retain(|x| x.name != a);
        }
        // An input variable of the same name lends its attributes, except under LHS
        // casting (observed in NCO 5.1.4).
        if let Some(own) = self.attrs_of(name).filter(|_| !cast) {
            for a in own {
                if a.name != "scale_factor" && a.name != "add_offset" {
                    nco_core::model::set_attr(&mut attrs, a);
                }
            }
        }
        if !val.is_text() {
            match val.fill {
                Some(f) => {
                    attrs.retain(|x| x.name != "_FillValue");
                    attrs.push(Attr {
                        name: "_FillValue".into(),
                        value: Values::from_f64_slice(ty, &[f]).expect("numeric"),
                    });
                }
                None => {
                    if let Some(a) = attrs.iter_mut().find(|x| x.name == "_FillValue") {
                        if let Some(c) = a.value.convert(ty) {
                            a.value = c;
                        }
                        val.fill = a.value.get_f64(0);
                    }
                }
            }
        } else {
            attrs.retain(|x| x.name != "_FillValue");
        }
        sort_attrs(&mut attrs);
        let class = if val.kind == Kind::Attr {
            2
        } else if self.saw_slab || mask.is_some() {
            0
        } else {
            1
        };
        self.place(name, class);
        self.touched.remove(name);
        self.vars.insert(name.to_string(), OutVar { val, attrs });
        Ok(())
    }

    fn assign_slab(&mut self, name: &str, idx: &[SlabIdx], op: AssignOp, rhs: Val) -> Result<()> {
        if !self.vars.contains_key(name) {
            let v = self.var_value(name)?;
            self.store(name, AssignOp::Set, v, false, None)?;
        }
        let cur = self.vars[name].val.clone();
        if idx.len() != cur.shape.len() {
            return Err(Error::var(
                name,
                "hyperslab rank differs from the variable's",
            ));
        }
        let lists = self.slab_lists(name, &cur.shape, idx)?;
        let map = index_map(&cur.shape, &lists);
        let part = Val {
            data: num::gather(&cur.data, &map),
            dims: Vec::new(),
            shape: Vec::new(),
            ..cur.clone()
        };
        let ty = cur.ty();
        let mut rhs = cast_keep(rhs, ty);
        if op != AssignOp::Set {
            rhs = self.binary(compound(op), part, rhs)?;
        }
        if !(rhs.len() == 1 || rhs.len() == map.len()) {
            return Err(Error::var(
                name,
                format!(
                    "hyperslab has {} elements but the value has {}",
                    map.len(),
                    rhs.len()
                ),
            ));
        }
        let rhs = cast_keep(rhs, ty);
        let ov = self.vars.get_mut(name).expect("stored");
        let mut data = ov.val.data.clone();
        with_type!(ty, T => {
            let dst = T::vec_of_mut(&mut data).expect("same type");
            let src = num::slice::<T>(&rhs.data);
            for (i, &m) in map.iter().enumerate() {
                dst[m] = if src.len() == 1 { src[0] } else { src[i] };
            }
        }; text => return Err(Error::var(name, "hyperslab assignment of text")));
        ov.val.data = data;
        Ok(())
    }
}

/// The operation of a compound assignment.
fn compound(op: AssignOp) -> BinOp {
    match op {
        AssignOp::Add | AssignOp::Set => BinOp::Add,
        AssignOp::Sub => BinOp::Sub,
        AssignOp::Mul => BinOp::Mul,
        AssignOp::Div => BinOp::Div,
    }
}

/// How an operand reaches the common shape.
enum Bcast {
    Same,
    Scalar,
    Map(Vec<usize>),
}

impl Bcast {
    fn apply(&self, v: &Values) -> Option<Values> {
        match self {
            Bcast::Map(m) => Some(num::gather(v, m)),
            _ => None,
        }
    }

    /// The operand's elements in the common shape (moved unless broadcast).
    fn place(&self, v: Values) -> Values {
        match self {
            Bcast::Map(m) => num::gather(&v, m),
            _ => v,
        }
    }
}

/// Map from each element of target shape to the element of `src` (whose dims are a
/// subset of the target's, same lengths); `None` when not a subset.
fn bcast_map(
    src_d: &[usize],
    src_s: &[usize],
    tgt_d: &[usize],
    tgt_s: &[usize],
) -> Option<Vec<usize>> {
    if src_d.len() > tgt_d.len() {
        return None;
    }
    let mut strides = vec![0usize; tgt_d.len()];
    let mut acc = 1usize;
    for (k, d) in src_d.iter().enumerate().rev() {
        let t = tgt_d.iter().position(|x| x == d)?;
        if tgt_s[t] != src_s[k] {
            return None;
        }
        strides[t] = acc;
        acc *= src_s[k];
    }
    let n: usize = tgt_s.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; tgt_s.len()];
    let mut off = 0usize;
    for _ in 0..n {
        out.push(off);
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            off += strides[k];
            if idx[k] < tgt_s[k] {
                break;
            }
            off -= strides[k] * idx[k];
            idx[k] = 0;
        }
    }
    Some(out)
}

/// Flat indices of the elements selected by one index list per dimension.
pub(crate) fn index_map(shape: &[usize], lists: &[Vec<usize>]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1];
    }
    let mut out = vec![0usize];
    for (k, l) in lists.iter().enumerate() {
        let st = strides[k];
        out = out
            .iter()
            .flat_map(|&b| l.iter().map(move |&i| b + i * st))
            .collect();
    }
    out
}

/// Give `v` the dims/shape `dims`: broadcast a subset, reshape an anonymous list of the
/// right length.
fn reshape(v: Val, dims: &[usize], shape: &[usize], name: &str) -> Result<Val> {
    let n: usize = shape.iter().product();
    if v.dims == dims && v.shape == shape {
        return Ok(v);
    }
    if v.is_scalar() || (v.dims.is_empty() && v.len() == n) {
        let data = if v.len() == n {
            v.data
        } else {
            num::gather(&v.data, &vec![0; n])
        };
        return Ok(Val {
            data,
            dims: dims.to_vec(),
            shape: shape.to_vec(),
            ..v
        });
    }
    match bcast_map(&v.dims, &v.shape, dims, shape) {
        Some(m) => Ok(Val {
            data: num::gather(&v.data, &m),
            dims: dims.to_vec(),
            shape: shape.to_vec(),
            ..v
        }),
        None => Err(Error::var(
            name,
            format!(
                "the value (shape {:?}) does not fit the variable's shape {:?}",
                v.shape, shape
            ),
        )),
    }
}

/// Convert to `ty` (NCO's rounding), fill converted too; kind and shape kept.
fn cast_keep(v: Val, ty: NcType) -> Val {
    if v.ty() == ty || v.is_text() {
        return v;
    }
    let data = v.data.convert(ty).unwrap_or(v.data);
    Val {
        data,
        fill: v.fill.map(|f| num::in_type(f, ty)),
        ..v
    }
}

fn cast(v: Val, ty: NcType) -> Result<Val> {
    if v.is_text() {
        return Err(Error::msg("cannot convert text to a number"));
    }
    if ty == NcType::Char {
        return Err(Error::msg("char() is not supported"));
    }
    Ok(cast_keep(v, ty))
}

/// The value of a number literal of type `ty`.
fn literal(ty: NcType, text: &str) -> Result<Values> {
    let bad = || Error::msg(format!("bad number \"{text}\""));
    if ty.is_float() {
        let x: f64 = text.parse().map_err(|_| bad())?;
        return Values::from_f64_slice(ty, &[x]).ok_or_else(bad);
    }
    Ok(match ty {
        NcType::Int64 => Values::Int64(vec![text.parse().map_err(|_| bad())?]),
        NcType::UInt64 => Values::UInt64(vec![text.parse().map_err(|_| bad())?]),
        _ => {
            let x: i64 = text.parse().map_err(|_| bad())?;
            Values::from_f64_slice(ty, &[x as f64]).ok_or_else(bad)?
        }
    })
}

/// A unary element function.
#[derive(Clone, Copy, Debug)]
enum Un {
    Math(MathFn),
    Abs,
}

#[inline]
fn un<T: Arith>(u: Un, x: T) -> T {
    match u {
        Un::Math(f) => x.math(f),
        Un::Abs => x.abs(),
    }
}

fn arg_of(v: &Values, i: usize) -> cfmt::Arg<'static> {
    match v.nc_type() {
        NcType::Float | NcType::Double => cfmt::Arg::Float(v.get_f64(i).unwrap_or(0.0)),
        NcType::UInt64 => match v {
            Values::UInt64(x) => cfmt::Arg::UInt(x[i]),
            _ => cfmt::Arg::UInt(0),
        },
        _ => cfmt::Arg::Int(v.get_f64(i).unwrap_or(0.0) as i64),
    }
}

/// One element in ncap2's default print format (`%g` float, `%.12g` double, integers).
fn fmt_elem(v: &Values, i: usize) -> String {
    match v {
        Values::Float(x) => cfmt::format_g(f64::from(x[i]), 6),
        Values::Double(x) => cfmt::format_g(x[i], 12),
        Values::Int64(x) => x[i].to_string(),
        Values::UInt64(x) => x[i].to_string(),
        Values::Char(c) => (c[i] as char).to_string(),
        Values::Str(s) => s[i].clone(),
        other => format!("{}", other.get_f64(i).unwrap_or(0.0) as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;

    #[test]
    fn element_wise_scripts_are_evaluated_in_blocks_others_whole() {
        use nco_core::model::{Dim, Var};
        let mut m = Meta::new(nco_core::model::Format::Classic);
        for (name, len) in [("t", 4), ("x", 5)] {
            m.dims.push(Dim {
                name: name.into(),
                len,
                unlimited: false,
            });
        }
        for (name, ty, dims) in [
            ("a", NcType::Float, vec![0, 1]),
            ("b", NcType::Short, vec![0, 1]),
            ("c", NcType::Float, vec![1]),
            ("s", NcType::Double, vec![]),
            ("txt", NcType::Char, vec![0, 1]),
        ] {
            m.vars.push(Var {
                name: name.into(),
                ty,
                dims,
                attrs: Vec::new(),
                storage: Default::default(),
            });
        }
        let dims = |script: &str| blockwise_dims(&parse(script).unwrap(), &m);
        for ok in [
            "y=a*2+b",
            "y=-a;z=sqrt(y*y)+pow(a,2)-fmod(b,3)+abs(a)+double(b)",
            "y=a/b;z=y%2.5f^2",
        ] {
            assert_eq!(dims(ok), Some(vec![0, 1]), "{ok}");
        }
        for whole in [
            "y=a+c",           // another shape
            "y=a*s",           // a scalar variable
            "y=2*3",           // no variable
            "y=a;z=y.total()", // a reduction
            "y=a(0:1,:)",      // a hyperslab
            "a=a*2",           // an input variable replaced
            "y=a;y+=1",        // compound assignment
            "y[$t,$x]=a",      // LHS cast
            "y=a;print(y)",    // output
            "y=a>1",           // comparison
            "y=a*a@scale",     // attribute
            "y=txt",           // text
            "y=atan2(a,b)",    // not in the element-wise list
            "where(a>1) y=a;", // masks
        ] {
            assert_eq!(dims(whole), None, "{whole}");
        }
    }

    /// Run `script` with no input file; the written variables and the printed text.
    fn run(script: &str) -> (HashMap<String, OutVar>, String) {
        let mut buf = Vec::new();
        let vars = {
            let mut ctx = Ctx::new(None, Box::new(&mut buf), "ncap2");
            ctx.run(&parse(script).unwrap()).unwrap();
            std::mem::take(&mut ctx.vars)
        };
        (vars, String::from_utf8(buf).unwrap())
    }

    fn val(vars: &HashMap<String, OutVar>, name: &str) -> (NcType, Vec<f64>) {
        let v = &vars[name].val;
        (v.ty(), v.data.to_f64_vec().unwrap())
    }

    fn err(script: &str) -> String {
        let mut ctx = Ctx::new(None, Box::new(std::io::sink()), "ncap2");
        ctx.run(&parse(script).unwrap()).unwrap_err().to_string()
    }

    #[test]
    fn literal_typing_and_integer_arithmetic() {
        let (v, _) = run("a=3/2;b=3.0/2;c=1s+2b;d=2^3;e=4*atan(1);f=-7%3;g=2.5f*2");
        assert_eq!(val(&v, "a"), (NcType::Int, vec![1.0]));
        assert_eq!(val(&v, "b"), (NcType::Double, vec![1.5]));
        assert_eq!(val(&v, "c"), (NcType::Short, vec![3.0]));
        assert_eq!(val(&v, "d"), (NcType::Float, vec![8.0]));
        assert_eq!(
            val(&v, "e"),
            (NcType::Float, vec![f64::from(std::f32::consts::PI)])
        );
        assert_eq!(val(&v, "f"), (NcType::Int, vec![-1.0]));
        assert_eq!(val(&v, "g"), (NcType::Float, vec![5.0]));
    }

    #[test]
    fn defdim_lhs_cast_hyperslab_and_reductions() {
        let (v, _) = run("defdim(\"a\",3);defdim(\"b\",4);m[$a,$b]=10;c=m(1,1);\
             r[$b]={1,2,3,4};s[$a,$b]=r*2;t=s.total();u=s(:,1:3:2).total();w=s.avg($a)");
        assert_eq!(val(&v, "m").1, vec![10.0; 12]);
        assert_eq!(val(&v, "c"), (NcType::Int, vec![10.0]));
        assert_eq!(val(&v, "s").1[4..8], [2.0, 4.0, 6.0, 8.0]);
        assert_eq!(val(&v, "t").1, vec![60.0]);
        assert_eq!(val(&v, "u").1, vec![36.0]);
        assert_eq!(val(&v, "w").1, vec![2.0, 4.0, 6.0, 8.0]);
        assert_eq!(v["w"].val.dims.len(), 1);
    }

    #[test]
    fn atan2_is_double_whatever_its_arguments() {
        // NCO 5.1.4: atan2 of two floats is a double (checked with ncap2 -s).
        let (v, _) = run("a=atan2(1.0f,2.0f);b=atan2(1,2);c=atan2(1.0,-1.0)");
        let want = 1f64.atan2(2.0);
        assert_eq!(val(&v, "a"), (NcType::Double, vec![want]));
        assert_eq!(val(&v, "b"), (NcType::Double, vec![want]));
        assert_eq!(val(&v, "c"), (NcType::Double, vec![1f64.atan2(-1.0)]));
    }

    #[test]
    fn attributes_convert_to_the_variable_type() {
        let (v, _) = run("x=1.5;x@scale=2.5;y=x@scale*2;z=x@scale*2.0f;q=x@scale+x@scale");
        assert_eq!(val(&v, "y"), (NcType::Int, vec![4.0]));
        assert_eq!(val(&v, "z"), (NcType::Float, vec![5.0]));
        assert_eq!(val(&v, "q"), (NcType::Double, vec![5.0]));
        assert!(v["x"].attrs.iter().any(|a| a.name == "scale"));
    }

    #[test]
    fn where_elsewhere_and_compound_assignment() {
        let (v, _) = run(
            "defdim(\"n\",5);x[$n]={1,5,2,8,3};where(x>2) x=0; elsewhere x=x*10;\
             y=x;y+=1.7;z[$n]=1.5f;z*=2",
        );
        assert_eq!(val(&v, "x").1, vec![10.0, 0.0, 20.0, 0.0, 0.0]);
        assert_eq!(val(&v, "y"), (NcType::Int, vec![12.0, 2.0, 22.0, 2.0, 2.0]));
        assert_eq!(val(&v, "z"), (NcType::Float, vec![3.0; 5]));
    }

    #[test]
    fn missing_values_propagate_and_are_skipped() {
        let (v, _) = run(
            "defdim(\"n\",4);x[$n]={73.0f,-1.0f,73.0f,-1.0f};x@_FillValue=-1.0f;\
             z=x;t=z.total();m=z.min();y=z+1",
        );
        // As in NCO 5.1.4, a _FillValue set by the script does not make the script's own
        // values missing during the run.
        assert_eq!(val(&v, "t").1, vec![144.0]);
        assert_eq!(val(&v, "m").1, vec![-1.0]);
        assert_eq!(val(&v, "y").1, vec![74.0, 0.0, 74.0, 0.0]);
        // Kernel level: the fill of either operand makes the result missing.
        let r = num::binary(
            BinOp::Mul,
            3,
            num::Side::Array(&[1.0f64, 2.0, 3.0]),
            num::Side::Array(&[-9.0, 5.0, 5.0]),
            None,
            Some(-9.0),
            -9.0,
        );
        assert_eq!(r, vec![-9.0, 10.0, 15.0]);
    }

    #[test]
    fn print_formats() {
        let (_, out) =
            run("a=55.0;print(a);b=1.5f;print(b,\"%.2f\");defdim(\"n\",2);c[$n]=2;print(c)");
        assert_eq!(out, "a = 55 \n\n1.50\nc[0]=2 \nc[1]=2 \n\n");
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert!(err("a=nosuch*2").contains("nosuch"));
        assert!(
            err("defdim(\"a\",2);defdim(\"b\",3);x[$a]=1;y[$b]=1;z=x*y").contains("do not conform")
        );
        assert!(err("x=3;y=x(5)").contains("hyperslab"));
        assert!(err("x[$nodim]=1").contains("nodim"));
    }
}
