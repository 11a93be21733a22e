//! Missing values as NCO 5.1.4 treats them (NCO manual, "Missing Values"): only
//! `_FillValue` marks missing data (a `missing_value`-only variable is ordinary
//! numbers), the fill value is converted to the variable's type before comparison,
//! averagers skip missing elements, and an output element with no valid input is
//! written as the fill value (the type's default fill, with a `_FillValue` attribute
//! added, when the variable had none).

use crate::model::{Attr, Var};
use crate::types::{NcType, Values};

/// The variable's `_FillValue` converted to its type, as f64 (`None` when absent or text).
pub fn fill_value(var: &Var) -> Option<f64> {
    var.attr("_FillValue")
        .and_then(|a| a.value.convert(var.ty))
        .and_then(|v| v.get_f64(0))
}

/// The library default fill value of a numeric type (`NC_FILL_*`), as f64.
pub fn default_fill(ty: NcType) -> f64 {
    use crate::types::NcNum;
    crate::dispatch_type!(ty, T => <T as NcNum>::DEFAULT_FILL.to_f64();
        char => 0.0; string => 0.0)
}

/// Set `_FillValue` of `var` (now of type `ty`) to `value`, in type `ty`.
pub fn set_fill_attr(var: &mut Var, ty: NcType, value: f64) {
    if let Some(v) = Values::from_f64_slice(ty, &[value]) {
        var.set_attr(Attr {
            name: "_FillValue".into(),
            value: v,
        });
    }
}

/// Convert an existing `_FillValue` (and `missing_value`) of `var` to type `ty`,
/// as NCO does when a packed variable is written unpacked.
pub fn convert_fill_attrs(var: &mut Var, ty: NcType) {
    for name in ["_FillValue", "missing_value"] {
        if let Some(a) = var.attrs.iter_mut().find(|a| a.name == name) {
            if let Some(v) = a.value.convert(ty) {
                a.value = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Storage;

    #[test]
    fn fill_is_converted_to_the_variable_type() {
        let mut v = Var {
            name: "x".into(),
            ty: NcType::Float,
            dims: vec![],
            attrs: vec![Attr {
                name: "_FillValue".into(),
                value: Values::Double(vec![1e36]),
            }],
            storage: Storage::default(),
            group: 0,
        };
        assert_eq!(fill_value(&v), Some(f64::from(1e36_f32)));
        v.attrs.clear();
        assert_eq!(fill_value(&v), None, "missing_value alone does not count");
        assert_eq!(default_fill(NcType::Short), -32767.0);
    }
}
