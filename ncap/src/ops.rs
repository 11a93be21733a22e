//! Operations on values ([`Val`]): unary and binary arithmetic, element-wise functions,
//! `atan2` and reductions, following NCO 5.1.4's rules (each checked against the system
//! ncap2):
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
//!   result's fill is that of the operand the other conforms to (the first of two of
//!   the same shape), else the other's. Packed variables are unpacked when read.

use nco_core::types::{NcNum, NcType};
use nco_core::{Error, Result};
use std::sync::Arc;

use crate::ast::{BinOp, UnOp};
use crate::builtins::{MathFn, Reduce};
use crate::num::{self, with_type, Arith};
use crate::state::Ctx;
use crate::value::{bcast_map, rank, Bcast, Kind, Val};

/// A unary element function.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Un {
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

impl Ctx<'_> {
    pub(crate) fn unary(&mut self, op: UnOp, v: Val) -> Result<Val> {
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
            slab,
        } = v;
        let data = with_type!(ty, T => {
            let mut x = num::take::<T>(Arc::unwrap_or_clone(data));
            let f = fill.map(T::from_f64);
            match op {
                UnOp::Neg => num::unary_into(&mut x, f, |a: T| a.neg()),
                UnOp::Not => num::unary_into(&mut x, f, |a: T| T::from_bool(!a.truth())),
            }
            T::into_values(x)
        }; text => unreachable!());
        Ok(Val {
            data: data.into(),
            dims,
            shape,
            fill,
            kind,
            src,
            slab,
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
        // Hyperslabs match others of their length (NCO 5.1.4: `depth(1:2)+lon(2:3)`).
        if (a.slab.is_some() || b.slab.is_some()) && a.len() == b.len() {
            return Ok((a.dims.clone(), a.shape.clone(), Bcast::Same, Bcast::Same));
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

    pub(crate) fn binary(&mut self, op: BinOp, a: Val, b: Val) -> Result<Val> {
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
        // NCO's one missing value: that of the operand the other is made to conform to
        // (the first when they have the same shape), else the other's; an operand
        // without a missing value of its own has its elements equal to it masked too.
        // Each operand's own missing value is always honoured (NCO 5.1.4 ignores the
        // second one's when both have one: README, compatibility notes).
        let a_leads = dims == a.dims && shape == a.shape;
        let fout = if a_leads { fa.or(fb) } else { fb.or(fa) };
        let (fa, fb) = (fa.or(fout), fb.or(fout));
        let n = match (&ma, &mb) {
            (Bcast::Map(m), _) | (_, Bcast::Map(m)) => m.len(),
            (Bcast::Scalar, _) => b.len(),
            _ => a.len(),
        };
        let a_scalar = matches!(ma, Bcast::Scalar);
        let b_scalar = matches!(mb, Bcast::Scalar);
        let slab = if dims == a.dims && shape == a.shape && a.slab.is_some() {
            a.slab.clone()
        } else if dims == b.dims && shape == b.shape {
            b.slab.clone()
        } else {
            None
        };
        let src = a.src.or(b.src);
        let pa = ma.place(num::owned_as(a.data, ty));
        let pb = mb.place(num::owned_as(b.data, ty));
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
            data: data.into(),
            dims,
            shape,
            fill: fout,
            kind,
            src,
            slab,
        })
    }

    pub(crate) fn map_unary(&mut self, v: Val, ty: NcType, u: Un) -> Result<Val> {
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
            slab,
            ..
        } = v;
        let c = num::owned_as(data, ty);
        let data = with_type!(ty, T => {
            let mut x = num::take::<T>(c);
            num::unary_into(&mut x, fill.map(T::from_f64), |x: T| un(u, x));
            T::into_values(x)
        }; text => unreachable!());
        Ok(Val {
            data: data.into(),
            dims,
            shape,
            fill,
            kind,
            src,
            slab,
        })
    }

    pub(crate) fn atan2(&mut self, a: Val, b: Val) -> Result<Val> {
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
        }; text => unreachable!())
        .into();
        r.fill = fill;
        Ok(r)
    }

    /// The reduction `op` (the method called `f`) over `dims` (all when empty),
    /// skipping missing elements; the result keeps the type (integer averages and
    /// roots truncate, as in NCO).
    pub(crate) fn reduce(&mut self, f: &str, op: Reduce, v: Val, dims: &[usize]) -> Result<Val> {
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
            data: data.into(),
            dims: keep.iter().map(|&k| v.dims[k]).collect(),
            shape: out_shape,
            fill,
            kind: v.kind,
            src: v.src,
            slab: None,
        })
    }
}
