//! The builtins that reshape or build values, on evaluated values ([`Val`]):
//! `reverse()`, `permute()`, `array()`, `mask()`, `sort()` and its maps, `push()`'s
//! concatenation and `make_bounds()` (NCO manual, "Arrays and hyperslabs", "Sort
//! methods", "make_bounds() function").

use nco_core::model::Dim;
use nco_core::types::{NcNum, NcType, Values};
use nco_core::{Error, Result};

use crate::num::{self, with_type};
use crate::value::{Kind, Val};

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * shape[k + 1];
    }
    s
}

/// `v` with the order of its elements reversed along `dims`.
///
/// Errors: a dimension `v` does not have.
pub(crate) fn reverse(v: Val, dims: &[usize]) -> Result<Val> {
    let mut flip = vec![false; v.dims.len()];
    for d in dims {
        let k =
            v.dims.iter().position(|x| x == d).ok_or_else(|| {
                Error::msg("reverse(): the dimension is not one of the variable's")
            })?;
        flip[k] = true;
    }
    let st = strides(&v.shape);
    let n = v.len();
    let map: Vec<usize> = (0..n)
        .map(|i| {
            let mut src = 0;
            for k in 0..v.shape.len() {
                let c = (i / st[k]) % v.shape[k];
                let c = if flip[k] { v.shape[k] - 1 - c } else { c };
                src += c * st[k];
            }
            src
        })
        .collect();
    let data = num::gather(&v.data, &map);
    Ok(Val {
        data: data.into(),
        ..v
    })
}

/// `v` with its dimensions in the order `order` (all of them, once each).
///
/// Errors: a list that is not a reordering of `v`'s dimensions; moving the record
/// dimension from the first place (NCO manual: use ncpdq).
pub(crate) fn permute(v: Val, order: &[usize], all: &[Dim]) -> Result<Val> {
    let mut ks = Vec::with_capacity(order.len());
    for d in order {
        match v.dims.iter().position(|x| x == d) {
            Some(k) if !ks.contains(&k) => ks.push(k),
            _ => {
                return Err(Error::msg(format!(
                    "permute(): dimension {} is not one of the variable's, or is given twice",
                    all[*d].name
                )))
            }
        }
    }
    if ks.len() != v.dims.len() {
        return Err(Error::msg(
            "permute(): every dimension of the variable must be given",
        ));
    }
    if let Some(&d0) = v.dims.first() {
        if all[d0].unlimited && ks[0] != 0 {
            return Err(Error::msg(format!(
                "permute(): the record dimension {} must stay first (use ncpdq to change it)",
                all[d0].name
            )));
        }
    }
    let st = strides(&v.shape);
    let new_shape: Vec<usize> = ks.iter().map(|&k| v.shape[k]).collect();
    let nst = strides(&new_shape);
    let map: Vec<usize> = (0..v.len())
        .map(|i| {
            ks.iter()
                .enumerate()
                .map(|(j, &k)| ((i / nst[j]) % new_shape[j]) * st[k])
                .sum()
        })
        .collect();
    let data = num::gather(&v.data, &map);
    Ok(Val {
        data: data.into(),
        dims: ks.iter().map(|&k| v.dims[k]).collect(),
        shape: new_shape,
        slab: None,
        ..v
    })
}

/// `array(start, step, shape)`: `start + i*step` in the type of `start`.
///
/// Errors: text arguments.
pub(crate) fn array(start: &Val, step: &Val, dims: Vec<usize>, shape: Vec<usize>) -> Result<Val> {
    let ty = start.ty();
    let (Some(s0), Some(inc)) = (start.data.get_f64(0), step.data.get_f64(0)) else {
        return Err(Error::msg("array(): the start and step must be numbers"));
    };
    let n: usize = shape.iter().product();
    let data = with_type!(ty, T => {
        // The step is taken in the start's type, the sum in it too.
        let s = T::from_f64(s0);
        let d = T::from_f64(inc);
        let mut out = Vec::with_capacity(n);
        let mut x = s;
        for _ in 0..n {
            out.push(x);
            x = num::Arith::add(x, d);
        }
        T::into_values(out)
    }; text => return Err(Error::msg("array(): the start must be a number")));
    Ok(Val {
        data: data.into(),
        dims,
        shape,
        fill: None,
        kind: Kind::Var,
        src: None,
        slab: None,
    })
}

/// `mask(v, idx)`: the elements of `v` at the flat indices `idx`, shaped like `idx`.
///
/// Errors: an index outside `v`.
pub(crate) fn mask(v: Val, idx: &Val) -> Result<Val> {
    let ix = idx.data.to_f64_vec().unwrap_or_default();
    let mut map = Vec::with_capacity(ix.len());
    for x in ix {
        if x < 0.0 || x as usize >= v.len() {
            return Err(Error::msg(format!(
                "mask(): index {x} is outside 0-{}",
                v.len().saturating_sub(1)
            )));
        }
        map.push(x as usize);
    }
    Ok(Val {
        data: num::gather(&v.data, &map).into(),
        dims: idx.dims.clone(),
        shape: idx.shape.clone(),
        slab: None,
        src: idx.src.clone(),
        ..v
    })
}

/// `v`'s elements sorted (descending when `desc`) whatever its dimensions, and the sort
/// map: element `i` of the result is element `map[i]` of `v`.
pub(crate) fn sort(v: &Val, desc: bool) -> (Val, Vec<i32>) {
    let x = v.data.to_f64_vec().unwrap_or_default();
    let mut map: Vec<usize> = (0..x.len()).collect();
    map.sort_by(|&a, &b| {
        let o = x[a].partial_cmp(&x[b]).unwrap_or(std::cmp::Ordering::Equal);
        if desc {
            o.reverse()
        } else {
            o
        }
    });
    let data = num::gather(&v.data, &map);
    (
        v.with_data(data, v.fill),
        map.iter().map(|&m| m as i32).collect(),
    )
}

/// `remap(v, map)` (`unmap`: its inverse): `map` applied to each run of `map.len()`
/// elements of `v`.
///
/// Errors: a size of `v` that is not a multiple of the map's; an index outside it.
pub(crate) fn remap(v: Val, map: &Val, inverse: bool) -> Result<Val> {
    let m: Vec<usize> = map
        .data
        .to_f64_vec()
        .unwrap_or_default()
        .iter()
        .map(|&x| x as usize)
        .collect();
    if m.is_empty() || v.len() % m.len() != 0 || m.iter().any(|&i| i >= m.len()) {
        return Err(Error::msg(format!(
            "remap(): the map ({} elements) does not fit the variable ({} elements)",
            m.len(),
            v.len()
        )));
    }
    let k = m.len();
    let mut full = vec![0usize; v.len()];
    for b in 0..v.len() / k {
        for (i, &j) in m.iter().enumerate() {
            if inverse {
                full[b * k + j] = b * k + i;
            } else {
                full[b * k + i] = b * k + j;
            }
        }
    }
    let data = num::gather(&v.data, &full);
    Ok(Val {
        data: data.into(),
        ..v
    })
}

/// The map undoing sort map `m`.
///
/// Errors: a map that is not a permutation.
pub(crate) fn invert_map(m: Val) -> Result<Val> {
    let x = m.data.to_f64_vec().unwrap_or_default();
    let mut inv = vec![-1i32; x.len()];
    for (i, &j) in x.iter().enumerate() {
        let j = j as usize;
        if j >= inv.len() || inv[j] >= 0 {
            return Err(Error::msg("invert_map(): the map is not a permutation"));
        }
        inv[j] = i as i32;
    }
    let data = Values::Int(inv);
    Ok(Val {
        data: data.into(),
        fill: None,
        ..m
    })
}

/// `a` followed by `b` (converted to `a`'s type), without dimensions: `push()`.
///
/// Errors: text with numbers.
pub(crate) fn concat(a: &Val, b: &Val) -> Result<Val> {
    let ty = a.ty();
    let mut data = (*a.data).clone();
    let c = match (&*a.data, &*b.data) {
        (Values::Str(_), Values::Char(c)) => Values::Str(vec![String::from_utf8_lossy(c).into()]),
        (Values::Char(_), Values::Str(_)) => {
            return Err(Error::msg("push(): a string cannot be appended to text"))
        }
        _ => b
            .data
            .convert(ty)
            .ok_or_else(|| Error::msg("push(): text and numbers do not mix"))?,
    };
    data.extend_from(&c);
    Ok(Val::scalar(data, Kind::Attr))
}

/// The cell bounds `(n, nv)` of the 1-D coordinate `c` (in double): each cell runs
/// between the midpoints with its neighbours, the end cells as far out as in.
///
/// Errors: not 1-D, fewer than 2 values, `nv` other than 2.
pub(crate) fn make_bounds(c: &Val, nv: usize, nv_len: usize) -> Result<Val> {
    if c.dims.len() != 1 || c.len() < 2 || nv_len != 2 {
        return Err(Error::msg(
            "make_bounds(): needs a 1-D coordinate of at least 2 values and a dimension of size 2",
        ));
    }
    let x = c.data.to_f64_vec().unwrap_or_default();
    let n = x.len();
    let mid: Vec<f64> = (0..n - 1).map(|i| 0.5 * (x[i] + x[i + 1])).collect();
    let mut b = Vec::with_capacity(2 * n);
    for i in 0..n {
        let lo = if i == 0 {
            x[0] - (mid[0] - x[0])
        } else {
            mid[i - 1]
        };
        let hi = if i == n - 1 {
            x[n - 1] + (x[n - 1] - mid[n - 2])
        } else {
            mid[i]
        };
        b.push(lo);
        b.push(hi);
    }
    let ty = if c.ty().is_float() {
        c.ty()
    } else {
        NcType::Double
    };
    let data = Values::from_f64_slice(ty, &b).ok_or_else(|| Error::msg("make_bounds() of text"))?;
    Ok(Val {
        data: data.into(),
        dims: vec![c.dims[0], nv],
        shape: vec![n, 2],
        fill: None,
        kind: Kind::Var,
        src: None,
        slab: None,
    })
}
