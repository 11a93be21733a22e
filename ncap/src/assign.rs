//! Storing evaluated values: into variables (new, RAM, or already written), attributes
//! and hyperslabs of variables, under a `where()` mask, following NCO 5.1.4's rules
//! (each checked against the system ncap2):
//!
//! * a new variable takes the result type and copies the attributes of the first
//!   variable of the right-hand side (plus those of an input variable of the same name,
//!   except under LHS casting), sorted by name; a variable already written by the
//!   script keeps its type and shape; `+= -= *= /=` convert the right-hand side to the
//!   variable's type first.
//! * with LHS casting (`v[lat,lon]=...`) the right-hand side is broadcast to the listed
//!   dimensions (the caller reshapes it).
//! * under `where(c)` only the elements where `c` holds (missing counts as false) take
//!   the new values; under `elsewhere` the others.

use nco_core::model::Attr;
use nco_core::types::{NcNum, NcType, Values};
use nco_core::{Error, Result};
use std::sync::Arc;

use crate::ast::{AssignOp, BinOp};
use crate::num::{self, with_type};
use crate::state::{sort_attrs, Ctx, OutVar, Place};
use crate::value::{cast_keep, convert_warn, index_map, reshape, Kind, Val};

/// A `where()` mask: the condition and whether the assignment is in the `elsewhere`
/// part.
pub type Mask = (Val, bool);

/// The operation of a compound assignment.
pub(crate) fn compound(op: AssignOp) -> BinOp {
    match op {
        AssignOp::Add | AssignOp::Set => BinOp::Add,
        AssignOp::Sub => BinOp::Sub,
        AssignOp::Mul => BinOp::Mul,
        AssignOp::Div => BinOp::Div,
    }
}

impl Ctx<'_> {
    /// Set attribute `var@att` (`global@att`) to `v` (with `op`, combined with its
    /// current value).
    ///
    /// Errors: an unknown variable; a compound assignment to a missing attribute.
    pub(crate) fn store_att(&mut self, var: &str, att: &str, op: AssignOp, v: Val) -> Result<()> {
        let mut v = v;
        if op != AssignOp::Set {
            // An attribute keeps its type (`a@min++` of a double stays double).
            let cur = self.attr_value(var, att)?;
            let ty = cur.ty();
            let mut rhs = cast_keep(v, ty);
            rhs.kind = Kind::Attr;
            v = self.binary(compound(op), cur, rhs)?;
        }
        let value = Arc::unwrap_or_clone(v.data);
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

    /// Store `rhs` into variable `name` with `op` (and a where() mask); `cast`: the
    /// right-hand side was LHS-cast; `ram`: a RAM variable is declared (`*v=`).
    pub(crate) fn store(
        &mut self,
        name: &str,
        op: AssignOp,
        mut rhs: Val,
        cast: bool,
        ram: bool,
        mask: Option<&Mask>,
    ) -> Result<()> {
        if rhs.is_text() && (op != AssignOp::Set || mask.is_some()) {
            return Err(Error::var(name, "arithmetic on text is not supported"));
        }
        let existing = self.vars.contains_key(name);
        let needs_current = op != AssignOp::Set || mask.is_some();
        let mut current = if existing && (op == AssignOp::Set) == mask.is_some() {
            // Updated in place under where() or by an operator (`x += y`): taken out of
            // the table rather than copied (it is stored back below; an error ends the
            // run, so nothing sees the gap).
            let ov = self.vars.get_mut(name).expect("existing");
            let gap = Val {
                fill: ov.val.fill,
                ..Val::scalar(Values::Double(Vec::new()), Kind::Var)
            };
            let mut v = std::mem::replace(&mut ov.val, gap);
            self.release_input(&v.data);
            v.kind = Kind::Var;
            v.src = Some(name.to_string());
            Some(v)
        } else if existing || needs_current {
            Some(self.var_value(name)?)
        } else {
            None
        };
        // The current value's description (its data may be consumed just below).
        let described = current
            .as_ref()
            .map(|c| (c.ty(), c.dims.clone(), c.shape.clone(), c.slab.clone()));
        if op != AssignOp::Set {
            // Without where() the current value is not needed again: moved into the
            // operation, whose result can then take its buffer.
            let cur = match mask {
                Some(_) => current.clone().expect("loaded"),
                None => current.take().expect("loaded"),
            };
            let ty = cur.ty();
            rhs = cast_keep(rhs, ty);
            rhs = self.binary(compound(op), cur, rhs)?;
        }
        // The shape and type the stored value must have: a variable already written
        // (or updated in place by an operator or where()) keeps its own.
        let (ty, dims, shape, slab) = match described {
            Some(c) if !cast => c,
            Some((ty, ..)) if existing => {
                (ty, rhs.dims.clone(), rhs.shape.clone(), rhs.slab.clone())
            }
            _ => (
                rhs.ty(),
                rhs.dims.clone(),
                rhs.shape.clone(),
                rhs.slab.clone(),
            ),
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
        } else if mask.is_some() && rhs.is_scalar() {
            // Under where() a single value is spread by the mask itself, not broadcast
            // into a copy the size of the variable first.
            Val {
                dims: dims.clone(),
                shape: shape.clone(),
                ..rhs
            }
        } else if rhs.slab.is_some() && rhs.len() == shape.iter().product::<usize>() {
            Val {
                dims: dims.clone(),
                shape: shape.clone(),
                ..rhs
            }
        } else {
            reshape(rhs, &dims, &shape, name)?
        };
        val.slab = slab;
        if !val.is_text() && val.ty() != ty {
            val = convert_warn(val, ty, name, &self.prog);
        }
        if let Some((cond, negate)) = mask {
            let cur = current.expect("loaded for where()");
            val = masked(val, cur, cond, *negate, ty, name)?;
        }
        for &d in &val.dims {
            self.use_dim(d);
        }
        if mask.is_some() {
            self.place(name, Place::First);
        }
        if let Some(ov) = self.vars.get_mut(name) {
            if let Some(f) = val.fill {
                if ov.val.fill.is_none() && !ov.attrs.iter().any(|a| a.name == "_FillValue") {
                    nco_core::model::set_attr(
                        &mut ov.attrs,
                        Attr {
                            name: "_FillValue".into(),
                            value: Values::from_f64_slice(ty, &[f]).expect("numeric"),
                        },
                    );
                }
            }
            val.fill = ov.val.fill.or(val.fill);
            ov.val = val;
            return Ok(());
        }
        let attrs = match self.pending_attrs.take() {
            Some(a) => a,
            None => self.new_var_attrs(name, &mut val, ty, cast),
        };
        let class = if val.kind == Kind::Attr {
            Place::Last
        } else if self.saw_slab || mask.is_some() {
            Place::First
        } else {
            Place::ByName
        };
        self.place(name, class);
        self.touched.remove(name);
        self.vars
            .insert(name.to_string(), OutVar { val, attrs, ram });
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

    /// Store `rhs` into the hyperslab `lists` (one index list per dimension) of
    /// variable `name` (an input variable is copied to the output first), with `op`.
    ///
    /// Errors: a value of another number of elements (not one).
    pub(crate) fn store_slab(
        &mut self,
        name: &str,
        lists: &[Vec<usize>],
        op: AssignOp,
        rhs: Val,
        ram: bool,
    ) -> Result<()> {
        if !self.vars.contains_key(name) {
            let v = self.var_value(name)?;
            self.store(name, AssignOp::Set, v, false, ram, None)?;
        }
        let cur = &self.vars[name].val;
        let map = index_map(&cur.shape, lists);
        let ty = cur.ty();
        let mut rhs = rhs;
        if op != AssignOp::Set {
            let part = Val {
                data: num::gather(&cur.data, &map).into(),
                dims: Vec::new(),
                shape: Vec::new(),
                ..cur.clone()
            };
            rhs = cast_keep(rhs, ty);
            rhs = self.binary(compound(op), part, rhs)?;
        }
        if !(rhs.len() == 1 || rhs.len() == map.len()) {
            return Err(Error::var(
                name,
                format!(
                    "the hyperslab has {} elements but the value has {}",
                    map.len(),
                    rhs.len()
                ),
            ));
        }
        let rhs = if rhs.ty() == ty {
            rhs
        } else {
            convert_warn(rhs, ty, name, &self.prog)
        };
        let ov = self.vars.get_mut(name).expect("stored");
        with_type!(ty, T => {
            let dst = T::vec_of_mut(Arc::make_mut(&mut ov.val.data)).expect("same type");
            let src = num::slice::<T>(&rhs.data);
            for (i, &m) in map.iter().enumerate() {
                dst[m] = if src.len() == 1 { src[0] } else { src[i] };
            }
        }; text => {
            match (Arc::make_mut(&mut ov.val.data), &*rhs.data) {
                (Values::Char(dst), Values::Char(src)) if !src.is_empty() => {
                    for (i, &m) in map.iter().enumerate() {
                        dst[m] = if src.len() == 1 { src[0] } else { *src.get(i).unwrap_or(&0) };
                    }
                }
                (Values::Str(dst), Values::Str(src)) if !src.is_empty() => {
                    for (i, &m) in map.iter().enumerate() {
                        dst[m] = if src.len() == 1 { src[0].clone() } else { src[i].clone() };
                    }
                }
                _ => return Err(Error::var(name, "text and numbers do not mix in a hyperslab")),
            }
        });
        Ok(())
    }
}

/// Under `where(cond)` (`negate`: under `elsewhere`), `val` where the condition holds and
/// the variable's current value `cur` elsewhere, in type `ty`; the fill value is the
/// current one, else `val`'s. `val` has `cur`'s number of elements or is one value
/// (spread where the condition holds); the result is `val`'s description over `cur`'s
/// buffer, updated in place (no copy of the variable is made).
///
/// Errors: a condition that does not conform to the variable's shape.
fn masked(mut val: Val, cur: Val, cond: &Val, negate: bool, ty: NcType, name: &str) -> Result<Val> {
    let n = cur.len();
    let reshaped;
    let cond = if cond.len() == n
        && (cond.slab.is_some() || (cond.dims == val.dims && cond.shape == val.shape))
    {
        cond
    } else {
        reshaped = reshape(cond.clone(), &val.dims, &val.shape, name)?;
        &reshaped
    };
    if cond.len() != n || !(val.len() == 1 || val.len() == n) {
        return Err(Error::var(
            name,
            format!(
                "the where() condition has {} elements, the variable {n} and the value {}",
                cond.len(),
                val.len()
            ),
        ));
    }
    let fill = cur.fill;
    let mut data = num::owned_as(cur.data, ty);
    with_type!(cond.ty(), C => {
        let c = num::slice::<C>(&cond.data);
        // A missing condition counts as false: elsewhere applies there.
        let holds = |k: C| {
            let x = k.to_f64();
            (cond.fill != Some(x) && x != 0.0) != negate
        };
        with_type!(ty, T => {
            let dst = T::vec_of_mut(&mut data).expect("converted to the type");
            let src = num::slice::<T>(&val.data);
            let pairs = dst.iter_mut().zip(c);
            if let [one] = src {
                pairs.for_each(|(d, &k)| *d = if holds(k) { *one } else { *d });
            } else {
                pairs.zip(src).for_each(|((d, &k), &s)| *d = if holds(k) { s } else { *d });
            }
        }; text => unreachable!("text is refused under where()"))
    }; text => return Err(Error::msg("where() condition must be numeric")));
    val.data = data.into();
    val.fill = fill.map(|f| num::in_type(f, ty)).or(val.fill);
    Ok(val)
}
