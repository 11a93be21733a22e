//! Values during evaluation ([`Val`]) and the rules on them that need no evaluation
//! state: type promotion ranks, broadcasting and reshaping to a shape, conversions, and
//! number literals.

use nco_core::types::{NcType, Values};
use nco_core::{Error, Result};

use crate::num;

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
}

impl Val {
    pub(crate) fn scalar(data: Values, kind: Kind) -> Val {
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

    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn is_scalar(&self) -> bool {
        self.dims.is_empty() && self.data.len() == 1
    }

    pub(crate) fn is_text(&self) -> bool {
        matches!(self.ty(), NcType::Char | NcType::Str)
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
pub(crate) fn cast_keep(v: Val, ty: NcType) -> Val {
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

pub(crate) fn cast(v: Val, ty: NcType) -> Result<Val> {
    if v.is_text() {
        return Err(Error::msg("cannot convert text to a number"));
    }
    if ty == NcType::Char {
        return Err(Error::msg("char() is not supported"));
    }
    Ok(cast_keep(v, ty))
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
