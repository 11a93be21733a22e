//! The text `print()` writes: ncap2's default layouts, or a C format.

use nco_core::cfmt;
use nco_core::types::Values;
use nco_core::Result;

use crate::ast::Expr;
use crate::value::Val;

/// What `print(e)` (with `fmt`, `print(e, fmt)`) writes for the value `v` of `e`: with a
/// format, the C format applied to each element (or to the text), then a newline for a
/// variable only; without, a variable as `name = x` or `name[i]=x` lines, text as it
/// is, anything else as `name, size = n type, value = ...` (NCO 5.1.4's layouts).
///
/// Errors: a format that is not a valid C format.
pub(crate) fn text(e: &Expr, v: &Val, fmt: Option<&str>) -> Result<String> {
    let mut s = String::new();
    if let Some(fmt) = fmt {
        let cf = cfmt::CFormat::parse(&cfmt::unescape(fmt))?;
        if let (Some(t), false) = (v.data.as_text(), matches!(*v.data, Values::Str(_))) {
            s.push_str(&cf.format(cfmt::Arg::Str(&t)));
        } else {
            for i in 0..v.len() {
                s.push_str(&cf.format(cfmt::Arg::of(&v.data, i)));
            }
        }
        if matches!(e, Expr::Var(_)) {
            s.push('\n');
        }
    } else if let (Some(t), false) = (v.data.as_text(), matches!(e, Expr::Var(_))) {
        s.push_str(&t);
    } else {
        match e {
            Expr::Var(name) if !v.is_text() => {
                if v.is_scalar() {
                    s.push_str(&format!("{name} = {} \n", fmt_elem(&v.data, 0)));
                } else {
                    for i in 0..v.len() {
                        s.push_str(&format!("{name}[{i}]={} \n", fmt_elem(&v.data, i)));
                    }
                }
                s.push('\n');
            }
            _ => {
                let name = match e {
                    Expr::Att(var, att) => format!("{var}@{att}"),
                    _ => v.src.clone().unwrap_or_default(),
                };
                let value = match v.data.as_text() {
                    Some(t) => t,
                    None => (0..v.len())
                        .map(|i| fmt_elem(&v.data, i))
                        .collect::<Vec<_>>()
                        .join(", "),
                };
                s.push_str(&format!(
                    "{name}, size = {} {}, value = {value}\n",
                    v.len(),
                    v.ty().nc_name()
                ));
            }
        }
    }
    Ok(s)
}

/// What `sprint(v[, fmt])` gives: the C format applied to each element (or to the
/// text), concatenated; without a format, the elements in ncap2's default layout
/// separated by commas.
///
/// Errors: a format that is not a valid C format.
pub(crate) fn sprint(v: &Val, fmt: Option<&str>) -> Result<String> {
    let mut s = String::new();
    match fmt {
        Some(fmt) => {
            let cf = cfmt::CFormat::parse(&cfmt::unescape(fmt))?;
            if let (Some(t), false) = (v.data.as_text(), matches!(*v.data, Values::Str(_))) {
                s.push_str(&cf.format(cfmt::Arg::Str(&t)));
            } else {
                for i in 0..v.len() {
                    s.push_str(&cf.format(cfmt::Arg::of(&v.data, i)));
                }
            }
        }
        None => match v.data.as_text() {
            Some(t) => s.push_str(&t),
            None => {
                // print()'s layout of a value, without its newline.
                let parts: Vec<String> = (0..v.len()).map(|i| fmt_elem(&v.data, i)).collect();
                s.push_str(&format!(
                    "{}, size = {} {}, value = {}",
                    v.src.as_deref().unwrap_or(""),
                    v.len(),
                    v.ty().nc_name(),
                    parts.join(", ")
                ));
            }
        },
    }
    Ok(s)
}

/// One element in ncap2's default print format (`%g` float, `%.12g` double, integers).
fn fmt_elem(v: &Values, i: usize) -> String {
    match v {
        Values::Float(x) => cfmt::format_g(f64::from(x[i]), 6),
        Values::Double(x) => cfmt::format_g(x[i], 12),
        Values::Int64(x) => x[i].to_string(),
        Values::UInt64(x) => x[i].to_string(),
        Values::Char(c) => (c[i] as char).to_string(),
        Values::Str(s) => s[i].clone(),
        other => format!("{}", other.get_f64(i).unwrap_or(0.0) as i64),
    }
}
