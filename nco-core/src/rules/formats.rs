//! What an output format can hold, and how NCO 5.1.4 makes an output's metadata fit it.
//! Every operator's output goes through [`storable`] once, in
//! [`crate::target::Output::create`] (and the edit flow's copies), before the writer
//! defines anything; the writers themselves only refuse what is still not storable.
//!
//! - netCDF3 formats (CDF-1, CDF-2, CDF-5) have one record dimension, the first of
//!   every variable using it: later unlimited dimensions (a netCDF-4 input may have
//!   several) become fixed at their current length; a variable with the record
//!   dimension after its first dimension is refused.
//! - Types a format cannot hold take the nearest one it can ([`stored_type`]), as NCO's
//!   ncks converts (`ncks -3 in4.nc out.nc`): NC_UBYTE as NC_SHORT; NC_USHORT, NC_UINT,
//!   NC_INT64 and NC_UINT64 as NC_INT. Variables change type; their values must fit
//!   (a value outside NC_INT's range is an error when written, as NCO's NC_ERANGE).
//! - Attributes of those types are converted as C converts integers (keeping the low
//!   bits, as NCO does: NC_UINT 4000000000 becomes -294967296); we add one warning line
//!   per attribute whose value changed. An NC_STRING attribute becomes text: its first
//!   string, as NCO keeps it.
//! - NC_STRING variables are refused in formats without strings (NCO 5.1.4 fails too,
//!   when it writes their data); groups are refused in every format but netCDF-4.
//!
//! NCO 5.1.4's other operators (ncra, ncwa, ncpdq, ncap2...) do not convert: they fail
//! on the first such variable (`nco_def_var`, NC_EBADTYPE). Ours convert as its ncks
//! does (README, compatibility notes).

use crate::error::{Error, Result};
use crate::model::{Attr, Format, Meta};
use crate::types::{NcNum, NcType, Values};

/// The type a value of type `ty` is stored as in `format`: `ty` itself when the
/// format holds it, else the nearest type it holds, as NCO 5.1.4's ncks converts:
/// NC_UBYTE to NC_SHORT; NC_USHORT, NC_UINT, NC_INT64 and NC_UINT64 to NC_INT;
/// NC_STRING to NC_CHAR (which only an attribute can use: its first string).
pub fn stored_type(format: Format, ty: NcType) -> NcType {
    if format.supports(ty) {
        return ty;
    }
    match ty {
        NcType::UByte => NcType::Short,
        NcType::Str => NcType::Char,
        NcType::UShort | NcType::UInt | NcType::Int64 | NcType::UInt64 => NcType::Int,
        t => t,
    }
}

/// `value` (an integer type) as integer type `ty`, each element converted as C's
/// integer assignment converts it (the low bits kept, as NCO converts attributes).
/// `None` when either type is not an integer type.
fn wrap_to(value: &Values, ty: NcType) -> Option<Values> {
    fn bits<T: NcNum>(x: &[T]) -> Vec<i64> {
        x.iter().map(|&e| e.to_i64_wrapping()).collect()
    }
    fn to<T: NcNum>(x: &[i64]) -> Values {
        T::into_values(x.iter().map(|&e| T::from_i64_wrapping(e)).collect())
    }
    let integer = |t: NcType| t.is_numeric() && !t.is_float();
    if !integer(value.nc_type()) || !integer(ty) {
        return None;
    }
    let b = crate::dispatch!(value, x => bits(x); char _c => return None; string _s => return None);
    crate::dispatch_type!(ty, T => Some(to::<T>(&b)); char => None; string => None)
}

/// Convert attribute `a` (of `owner`) to what `format` holds; a warning line (without
/// the program name) when a value changed.
fn fix_attr(format: Format, owner: &str, a: &mut Attr) -> Option<String> {
    let ty = a.value.nc_type();
    if format.supports(ty) {
        return None;
    }
    if let Values::Str(s) = &a.value {
        a.value = Values::Char(s.first().cloned().unwrap_or_default().into_bytes());
        return None;
    }
    let to = stored_type(format, ty);
    let conv = wrap_to(&a.value, to)?;
    let changed = a
        .value
        .to_f64_vec()
        .zip(conv.to_f64_vec())
        .is_some_and(|(x, y)| x != y);
    let note = changed.then(|| {
        format!(
            "attribute {owner}{} ({ty}) does not fit {to}, the type a {} file stores it \
             as: written with its low bits kept, as NCO 5.1.4 writes it",
            a.name,
            format.kind_name()
        )
    });
    a.value = conv;
    note
}

/// `meta` made storable in its format (see the module docs), with one warning line
/// (without the program name) per attribute whose value the conversion changed.
///
/// Errors: a variable with the record dimension other than first in a netCDF3 format;
/// an NC_STRING variable in a format without strings (both named, with the remedies);
/// groups in a format other than netCDF-4.
pub fn storable(meta: &Meta) -> Result<(Meta, Vec<String>)> {
    let mut m = meta.clone();
    let format = m.format;
    if m.has_groups() && format != Format::Netcdf4 {
        return Err(Error::msg(format!(
            "groups need a netCDF-4 output (-4, --fl_fmt=netcdf4; a {} file has only the root group)",
            format.kind_name()
        )));
    }
    if format.is_classic_family() {
        // A length of 0 in a netCDF3 header marks the record dimension: a fixed one of
        // length 0 would read back as a second record dimension (a file libnetcdf
        // refuses). NCO 5.1.4 writes length 1 there, with made-up values.
        if let Some(d) = m.dims.iter().find(|d| !d.unlimited && d.len == 0) {
            return Err(Error::msg(format!(
                "dimension {} would be a fixed dimension of length 0, which netCDF3 formats \
                 cannot store (it has no records: leave it out, or write netCDF-4 with -4)",
                d.name
            )));
        }
        if let Some(rec) = m.record_dim() {
            for d in m.dims.iter_mut().skip(rec + 1) {
                d.unlimited = false;
            }
            if let Some(v) = m
                .vars
                .iter()
                .find(|v| v.dims.iter().skip(1).any(|&d| d == rec))
            {
                return Err(Error::var(
                    &v.name,
                    format!(
                        "has the record dimension {} after its first dimension, which netCDF3 \
                         formats cannot store (write netCDF-4 with -4, or put it first with \
                         ncpdq -a)",
                        m.dims[rec].name
                    ),
                ));
            }
        }
    }
    let mut notes = Vec::new();
    for i in 0..m.vars.len() {
        let ty = m.vars[i].ty;
        if !format.supports(ty) {
            if ty == NcType::Str {
                return Err(Error::var(
                    &m.var_path(i),
                    format!(
                        "is an NC_STRING variable, which a {} file cannot store (strings \
                         need netCDF-4: write with -4, or leave it out with -x -v)",
                        format.kind_name()
                    ),
                ));
            }
            m.vars[i].ty = stored_type(format, ty);
        }
        let owner = format!("{}:", m.var_path(i));
        let v = &mut m.vars[i];
        for a in v.attrs.iter_mut() {
            notes.extend(fix_attr(format, &owner, a));
        }
        let ty = v.ty;
        if let Some(f) = v.attrs.iter_mut().find(|a| a.name == "_FillValue") {
            if f.value.nc_type() != ty {
                if let Some(c) = f.value.convert(ty) {
                    f.value = c;
                }
            }
        }
    }
    for a in m.attrs.iter_mut() {
        notes.extend(fix_attr(format, "global ", a));
    }
    for g in m.groups.iter_mut() {
        for a in g.attrs.iter_mut() {
            notes.extend(fix_attr(format, "group ", a));
        }
    }
    Ok((m, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, Var};

    fn attr(name: &str, value: Values) -> Attr {
        Attr {
            name: name.into(),
            value,
        }
    }

    #[test]
    fn netcdf4_types_take_ncos_netcdf3_types_and_attributes_wrap() {
        let mut m = Meta::new(Format::Classic);
        m.dims.push(Dim {
            name: "x".into(),
            len: 2,
            unlimited: false,
            group: 0,
        });
        let mut v = Var::new("u", NcType::UInt64, vec![0]);
        v.attrs = vec![
            attr("_FillValue", Values::UInt64(vec![7])),
            attr("big", Values::UInt64(vec![18_000_000_000_000_000_000])),
            attr("ub", Values::UByte(vec![200])),
            attr("s", Values::Str(vec!["a".into(), "bc".into()])),
        ];
        m.vars.push(v);
        m.vars.push(Var::new("b", NcType::UByte, vec![0]));
        let (s, notes) = storable(&m).unwrap();
        assert_eq!(s.vars[0].ty, NcType::Int);
        assert_eq!(s.vars[1].ty, NcType::Short);
        let a = |n: &str| s.vars[0].attr(n).unwrap().value.clone();
        assert_eq!(a("_FillValue"), Values::Int(vec![7]));
        // 18e18 mod 2^32 = 3305635840, as a signed int (NCO 5.1.4's value).
        assert_eq!(a("big"), Values::Int(vec![-989_331_456]));
        assert_eq!(a("ub"), Values::Short(vec![200]));
        assert_eq!(a("s"), Values::Char(b"a".to_vec()));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("big"), "{notes:?}");
        // CDF-5 holds them all but strings.
        m.format = Format::Cdf5;
        let (s, notes) = storable(&m).unwrap();
        assert_eq!(s.vars[0].ty, NcType::UInt64);
        assert!(notes.is_empty());
    }

    #[test]
    fn string_variables_and_late_record_dimensions_are_refused() {
        let mut m = Meta::new(Format::Offset64);
        for (name, unlimited) in [("t", true), ("r", true)] {
            m.dims.push(Dim {
                name: name.into(),
                len: 2,
                unlimited,
                group: 0,
            });
        }
        m.vars.push(Var::new("z", NcType::Double, vec![1]));
        let (s, _) = storable(&m).unwrap();
        assert!(s.dims[0].unlimited && !s.dims[1].unlimited);
        m.vars.push(Var::new("f", NcType::Double, vec![1, 0]));
        let e = storable(&m).unwrap_err().to_string();
        assert!(e.contains("f") && e.contains("record dimension t"), "{e}");
        m.vars.pop();
        m.vars.push(Var::new("s", NcType::Str, vec![1]));
        let e = storable(&m).unwrap_err().to_string();
        assert!(e.contains("NC_STRING"), "{e}");
    }
}
