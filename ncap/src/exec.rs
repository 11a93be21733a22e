//! Execution of statements: assignment to variables, attributes and hyperslabs,
//! `where`/`elsewhere`, `if`/`else` and blocks, following NCO 5.1.4's rules (each checked
//! against the system ncap2):
//!
//! * a new variable takes the result type and copies the attributes of the first
//!   variable of the right-hand side (plus those of an input variable of the same name),
//!   sorted by name; a variable already written by the script keeps its type;
//!   `+= -= *= /=` convert the right-hand side to the variable's type first.
//! * with LHS casting (`v[lat,lon]=...`) the right-hand side is broadcast to the listed
//!   dimensions.

use std::io::Write;

use nco_core::model::Attr;
use nco_core::types::{NcNum, NcType, Values};
use nco_core::{Error, Result};

use crate::ast::{AssignOp, BinOp, Expr, Lhs, SlabIdx, Stmt};
use crate::num::{self, with_type};
use crate::state::{sort_attrs, Ctx, OutVar, Place};
use crate::value::{cast_keep, index_map, reshape, Kind, Val};

impl Ctx<'_> {
    /// Run statements in order.
    pub fn run(&mut self, stmts: &[Stmt]) -> Result<()> {
        for s in stmts {
            self.stmt(s, None)?;
        }
        self.out.flush().map_err(|e| Error::io("stdout", e))
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
            val = masked(val, &cur, cond, *negate, ty, name)?;
        }
        for &d in &val.dims {
            self.use_dim(d);
        }
        if mask.is_some() {
            self.place(name, Place::First);
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
        let attrs = self.new_var_attrs(name, &mut val, ty, cast);
        let class = if val.kind == Kind::Attr {
            Place::Last
        } else if self.saw_slab || mask.is_some() {
            Place::First
        } else {
            Place::ByName
        };
        self.place(name, class);
        self.touched.remove(name);
        self.vars.insert(name.to_string(), OutVar { val, attrs });
        Ok(())
    }

    /// The attributes of a new variable `name` holding `val` (of type `ty`): those of
    /// the first variable of the right-hand side, then those of an input variable of the
    /// same name (not under LHS casting, `cast`), without packing attributes, with
    /// `val`'s fill value as `_FillValue`, or, without one, `val` taking the
    /// `_FillValue` so inherited; sorted by name.
    fn new_var_attrs(&self, name: &str, val: &mut Val, ty: NcType, cast: bool) -> Vec<Attr> {
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
        attrs
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

/// Under `where(cond)` (`negate`: under `elsewhere`), `val` where the condition holds and
/// the variable's current value `cur` elsewhere, in type `ty`; the fill value is the
/// current one, else `val`'s.
///
/// Errors: a condition that does not conform to the variable's shape.
fn masked(
    mut val: Val,
    cur: &Val,
    cond: &Val,
    negate: bool,
    ty: NcType,
    name: &str,
) -> Result<Val> {
    let cond = reshape(cond.clone(), &val.dims, &val.shape, name)?;
    let c = cond.data.to_f64_vec().unwrap_or_default();
    let keep: Vec<bool> = c
        .iter()
        .map(|&x| {
            // A missing condition counts as false: elsewhere applies there.
            let holds = cond.fill != Some(x) && x != 0.0;
            holds != negate
        })
        .collect();
    let cur_data = num::as_type(&cur.data, ty).into_owned();
    val.data = with_type!(ty, T => {
            let n = num::slice::<T>(&val.data);
            let o = num::slice::<T>(&cur_data);
            T::into_values(keep.iter().enumerate().map(|(i, &k)| if k { n[i] } else { o[i] }).collect())
        }; text => unreachable!());
    val.fill = cur.fill.map(|f| num::in_type(f, ty)).or(val.fill);
    Ok(val)
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use nco_core::types::NcType;

    use super::*;
    use crate::parser::parse;

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
