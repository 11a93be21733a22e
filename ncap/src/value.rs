//! Values during evaluation ([`Val`]) and the rules on them that need no evaluation
//! state: type promotion ranks, broadcasting and reshaping to a shape, conversions, and
//! number literals.

use nco_core::types::{NcType, Values};
use nco_core::{Error, Result};
use std::sync::Arc;

use nco_core::types::NcNum;

use crate::num::{self, with_type};

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
    /// Elements (row-major), shared: a variable's value read by an expression, or an
    /// input read again, is the same buffer until one of them is written
    /// ([`Arc::make_mut`] copies it then).
    pub data: Arc<Values>,
    /// Dimension ids (into the evaluation state's dimension table); empty for scalars and anonymous lists.
    pub dims: Vec<usize>,
    /// Length along each of `dims` (may be shorter than the dimension after a hyperslab).
    pub shape: Vec<usize>,
    /// Missing value, in the type of `data`.
    pub fill: Option<f64>,
    /// Promotion behaviour.
    pub kind: Kind,
    /// The variable whose attributes a new variable copies.
    pub src: Option<String>,
    /// Set when the value is (computed from) a hyperslab: the start of the value along
    /// each of `dims` in the whole dimension. A variable defined from a hyperslab that
    /// does not cover its dimensions is written at these offsets, the rest of it left
    /// at the type's default fill value (as NCO 5.1.4 writes `y=lon(1:2)`); hyperslab
    /// values conform to others of the same number of elements whatever their
    /// dimensions (`x[$time]=lon(:)`).
    pub slab: Option<Vec<usize>>,
}

impl Val {
    pub(crate) fn scalar(data: Values, kind: Kind) -> Val {
        Val {
            data: Arc::new(data),
            dims: Vec::new(),
            shape: Vec::new(),
            fill: None,
            kind,
            src: None,
            slab: None,
        }
    }

    /// Type of the elements.
    pub fn ty(&self) -> NcType {
        self.data.nc_type()
    }

    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn is_scalar(&self) -> bool {
        self.dims.is_empty() && self.data.len() == 1
    }

    pub(crate) fn is_text(&self) -> bool {
        matches!(self.ty(), NcType::Char | NcType::Str)
    }

    /// A value of this shape with other data (and `fill`).
    pub(crate) fn with_data(&self, data: Values, fill: Option<f64>) -> Val {
        Val {
            data: Arc::new(data),
            dims: self.dims.clone(),
            shape: self.shape.clone(),
            fill,
            kind: self.kind,
            src: self.src.clone(),
            slab: self.slab.clone(),
        }
    }
}

pub(crate) fn rank(t: NcType) -> u8 {
    t.precision_rank()
}

/// How an operand reaches the common shape.
pub(crate) enum Bcast {
    Same,
    Scalar,
    Map(Vec<usize>),
}

impl Bcast {
    pub(crate) fn apply(&self, v: &Values) -> Option<Values> {
        match self {
            Bcast::Map(m) => Some(num::gather(v, m)),
            _ => None,
        }
    }

    /// The operand's elements in the common shape (moved unless broadcast).
    pub(crate) fn place(&self, v: Values) -> Values {
        match self {
            Bcast::Map(m) => num::gather(&v, m),
            _ => v,
        }
    }
}

/// Map from each element of target shape to the element of `src` (whose dims are a
/// subset of the target's, same lengths); `None` when not a subset.
pub(crate) fn bcast_map(
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

/// The data of `v`, computed on a hyperslab of dimensions of lengths `full`, padded to
/// them (`Ok(None)` when it already covers them): the values go at the hyperslab's
/// start in each dimension ([`Val::slab`]), the elements outside are the type's
/// default fill value, as NCO 5.1.4 leaves them unwritten in the output it reads
/// such a variable back from.
///
/// Errors: a text variable to pad.
pub(crate) fn padded(v: &Val, full: &[usize]) -> std::result::Result<Option<Values>, &'static str> {
    if full == v.shape.as_slice() {
        return Ok(None);
    }
    let ty = v.ty();
    let fill = nco_core::fill::default_fill(ty);
    let n_full: usize = full.iter().product();
    let mut buf =
        Values::from_f64_slice(ty, &vec![fill; n_full]).ok_or("cannot pad a text variable")?;
    let starts = v.slab.clone().unwrap_or_else(|| vec![0; v.shape.len()]);
    let lists: Vec<Vec<usize>> = v
        .shape
        .iter()
        .zip(&starts)
        .zip(full)
        .map(|((&s, &at), &len)| {
            let at = at.min(len.saturating_sub(s));
            (at..at + s).collect()
        })
        .collect();
    let map = index_map(full, &lists);
    with_type!(ty, T => {
        let dst = <T as NcNum>::vec_of_mut(&mut buf).expect("same type");
        let src = num::slice::<T>(&v.data);
        for (i, &m) in map.iter().enumerate() {
            dst[m] = src[i];
        }
    }; text => {});
    Ok(Some(buf))
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
pub(crate) fn reshape(v: Val, dims: &[usize], shape: &[usize], name: &str) -> Result<Val> {
    let n: usize = shape.iter().product();
    if v.dims == dims && v.shape == shape {
        return Ok(v);
    }
    if v.is_scalar() || (v.dims.is_empty() && v.len() == n) {
        let data = if v.len() == n {
            v.data
        } else {
            num::gather(&v.data, &vec![0; n]).into()
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
            data: num::gather(&v.data, &m).into(),
            dims: dims.to_vec(),
            shape: shape.to_vec(),
            ..v
        }),
        // Same number of elements on other dimensions (`lev[$lev]=depth`, which NCO
        // 5.1.4 refuses too): say so, and how to take the values in order.
        None if v.len() == n => Err(Error::var(
            name,
            format!(
                "the value has the variable's {n} elements but on other dimensions \
                 (broadcasting needs shared dimensions); a hyperslab such as x(:) takes \
                 its values in order"
            ),
        )),
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
/// Values outside the range of an integer `ty` (and NaN) become missing: the value's
/// fill value in `ty`, else the type's default fill (which becomes the value's fill);
/// returns how many did (NCO 5.1.4 wraps them silently, `int(1e36)` giving 0 or -1
/// depending on the machine).
pub(crate) fn convert_checked(v: Val, ty: NcType) -> (Val, usize) {
    if v.ty() == ty || v.is_text() || matches!(ty, NcType::Char | NcType::Str) {
        return (v, 0);
    }
    // A fill value outside the new type's range becomes the type's default fill.
    let fill = v.fill.map(|f| {
        if ty.is_float() || with_type!(ty, T => T::fits(f); text => true) {
            num::in_type(f, ty)
        } else {
            nco_core::fill::default_fill(ty)
        }
    });
    if ty.is_float() || !v.ty().is_float() && num::int_fits(v.ty(), ty) {
        let data = v.data.convert(ty).map_or_else(|| v.data.clone(), Arc::new);
        return (Val { data, fill, ..v }, 0);
    }
    let src_fill = v.fill;
    let x = v.data.to_f64_vec().unwrap_or_default();
    let out_fill = fill.unwrap_or_else(|| nco_core::fill::default_fill(ty));
    let (data, over) = with_type!(ty, T => {
        let mut over = 0usize;
        let out: Vec<T> = x
            .iter()
            .map(|&e| {
                if src_fill == Some(e) {
                    T::from_f64(out_fill)
                } else if T::fits(e) {
                    T::from_f64(e)
                } else {
                    over += 1;
                    T::from_f64(out_fill)
                }
            })
            .collect();
        (Arc::new(T::into_values(out)), over)
    }; text => (v.data.clone(), 0));
    let fill = if over > 0 { Some(out_fill) } else { fill };
    (Val { data, fill, ..v }, over)
}

/// [`convert_checked`], warning on stderr (naming `what`) when values were out of range.
pub(crate) fn convert_warn(v: Val, ty: NcType, what: &str, prog: &str) -> Val {
    let (v, over) = convert_checked(v, ty);
    if over > 0 {
        eprintln!(
            "{prog}: WARNING {what}: {over} value(s) outside the range of {ty} became missing ({})",
            v.fill.map_or_else(String::new, |f| format!("{f}"))
        );
    }
    v
}

/// Convert to `ty` with NCO's rounding (out-of-range values wrap; for the conversions
/// of operands to their common type, which never narrow a value's range).
pub(crate) fn cast_keep(v: Val, ty: NcType) -> Val {
    if v.ty() == ty || v.is_text() {
        return v;
    }
    let data = v.data.convert(ty).map_or(v.data, Arc::new);
    Val {
        data,
        fill: v.fill.map(|f| num::in_type(f, ty)),
        ..v
    }
}

/// The value of a number literal of type `ty`.
pub(crate) fn literal(ty: NcType, text: &str) -> Result<Values> {
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
