//! Packing with `scale_factor`/`add_offset` (NCO manual, "Packed data"; CF §8.1): the
//! rules that read and rewrite a variable's packing attributes. The arithmetic
//! (unpacking, NCO's packing parameters and loops) is [`nco_kernels::packing`],
//! re-exported here.
//!
//! A missing attribute means scale 1 or offset 0. The unpacked type is the type of
//! `scale_factor` (else of `add_offset`). Arithmetic operators unpack every variable they
//! process and write it unpacked, with `_FillValue` converted to the unpacked type.

pub use nco_kernels::packing::*;

use crate::model::{Attr, Var};
use crate::types::{NcType, Values};

/// The packing of `var`, `None` when it has neither `scale_factor` nor `add_offset`.
pub fn packing_of(var: &Var, hdf: bool) -> Option<Packing> {
    let sf = var.attr("scale_factor");
    let ao = var.attr("add_offset");
    if sf.is_none() && ao.is_none() {
        return None;
    }
    let get =
        |a: Option<&crate::model::Attr>, d: f64| a.and_then(|a| a.value.get_f64(0)).unwrap_or(d);
    let unpacked_type = sf.or(ao).map_or(NcType::Double, |a| a.value.nc_type());
    Some(Packing {
        scale_factor: get(sf, 1.0),
        add_offset: get(ao, 0.0),
        unpacked_type: if unpacked_type.is_numeric() {
            unpacked_type
        } else {
            NcType::Double
        },
        hdf,
    })
}

/// Remove the packing attributes of a variable being written unpacked and give it the
/// unpacked type (converting `_FillValue` and `missing_value`).
pub fn mark_unpacked(var: &mut Var, p: &Packing) {
    var.remove_attr("scale_factor");
    var.remove_attr("add_offset");
    var.ty = p.unpacked_type;
    crate::rules::fill::convert_fill_attrs(var, p.unpacked_type);
}

/// Give `var` (the input variable's definition and attributes, unpacked type
/// `unpacked`) the definition of its packed form of type `ty` with parameters `sf`
/// (scale_factor) and `ao` (add_offset), as NCO 5.1.4's ncpdq writes it: the fill
/// attributes in the unpacked type, a `_FillValue` of the packed type's default (and
/// no `missing_value`) when values are `missing` (fill values or non-finite values
/// to pack), `scale_factor` only when it is neither 0 nor 1, `add_offset` when it is
/// not 0 or there is no `scale_factor`; both attributes in the unpacked type.
pub fn mark_packed(var: &mut Var, ty: NcType, unpacked: NcType, sf: f64, ao: f64, missing: bool) {
    crate::rules::fill::convert_fill_attrs(var, unpacked);
    if missing {
        var.remove_attr("missing_value");
        crate::rules::fill::set_fill_attr(var, ty, crate::rules::fill::default_fill(ty));
    }
    let write_sf = sf != 0.0 && sf != 1.0;
    let write_ao = ao != 0.0 || !write_sf;
    if !write_sf {
        var.remove_attr("scale_factor");
    }
    if !write_ao {
        var.remove_attr("add_offset");
    }
    let attr = |name: &str, x: f64| Attr {
        name: name.into(),
        value: Values::from_f64_slice(unpacked, &[x]).unwrap_or(Values::Double(vec![x])),
    };
    if write_ao {
        var.set_attr(attr("add_offset", ao));
    }
    if write_sf {
        var.set_attr(attr("scale_factor", sf));
    }
    var.ty = ty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Storage;

    #[test]
    fn netcdf_and_hdf_conventions() {
        let v = Var {
            name: "pck_7".into(),
            ty: NcType::Short,
            dims: vec![],
            attrs: vec![
                Attr {
                    name: "scale_factor".into(),
                    value: Values::Double(vec![4.0]),
                },
                Attr {
                    name: "add_offset".into(),
                    value: Values::Double(vec![3.0]),
                },
            ],
            storage: Storage::default(),
            group: 0,
        };
        assert_eq!(packing_of(&v, false).unwrap().unpack(1.0), 7.0);
        assert_eq!(packing_of(&v, true).unwrap().unpack(1.0), -8.0);
        let mut w = v.clone();
        mark_unpacked(&mut w, &packing_of(&v, false).unwrap());
        assert_eq!(w.ty, NcType::Double);
        assert!(w.attr("scale_factor").is_none());
    }
}
