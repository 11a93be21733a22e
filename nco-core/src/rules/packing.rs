//! Packing with `scale_factor`/`add_offset` (NCO manual, "Packed data"; CF §8.1): the
//! rules that read and rewrite a variable's packing attributes. The arithmetic
//! (unpacking, NCO's packing parameters and loops) is [`nco_kernels::packing`],
//! re-exported here.
//!
//! A missing attribute means scale 1 or offset 0. The unpacked type is the type of
//! `scale_factor` (else of `add_offset`). Arithmetic operators unpack every variable they
//! process and write it unpacked, with `_FillValue` converted to the unpacked type.

pub use nco_kernels::packing::*;

use crate::model::Var;
use crate::types::NcType;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attr, Storage};
    use crate::types::Values;

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
        };
        assert_eq!(packing_of(&v, false).unwrap().unpack(1.0), 7.0);
        assert_eq!(packing_of(&v, true).unwrap().unpack(1.0), -8.0);
        let mut w = v.clone();
        mark_unpacked(&mut w, &packing_of(&v, false).unwrap());
        assert_eq!(w.ty, NcType::Double);
        assert!(w.attr("scale_factor").is_none());
    }
}
