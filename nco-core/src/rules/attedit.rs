//! ncatted's attribute edits (NCO manual, "ncatted netCDF Attribute Editor"), checked
//! against NCO 5.1.4 on our fixtures:
//!
//! * `-a att_nm,var_nm,mode,att_type,att_val`, repeatable, applied in the order given,
//!   each on the result of the ones before. Fewer than five fields is an error; the
//!   type and value of a delete are ignored.
//! * `var_nm`: empty for every variable (not the global attributes); `global` or
//!   `group` (any case) for the global attributes; a name holding one of
//!   `.*^$+?[](){}|\` is a POSIX extended regular expression searched in each name
//!   (unanchored: `lat|lon` also edits `stn_lat`); otherwise the exact name. A name or
//!   an expression that matches no variable is an error.
//! * `att_nm`: empty for every attribute the object has; in the modes that only touch
//!   existing attributes (`d`, `m`, `n`) a name with a regular expression character is
//!   an expression (unanchored), in the others it is taken literally.
//! * Modes: `a` append to an existing attribute of the same type (created when
//!   absent), `p` prepend likewise, `c` create only when absent, `d` delete, `m`
//!   modify only when present (the type may change), `n` append only when present,
//!   `o` overwrite or create. Appending or prepending values of another type is an
//!   error.
//! * Types: `f d l|i s c b` and, for netCDF-4 and CDF5, `ub us u|ui|ul ll|int64
//!   ull|uint64 sng|string`, or the type's full name (`float`, `ubyte`...). A type
//!   the file's format cannot hold is an error.
//! * Values: text (`c`) is everything after the fourth comma, commas included;
//!   strings (`sng`) and numbers are comma-separated lists. Integers are read as C's
//!   `strtoll` reads them (decimal, sign, leading blanks) and keep their low bits in
//!   the attribute's type (`70000` as a short is `4464`); reals as `strtod` reads them
//!   (also `nan`, `inf`, hexadecimal `0x1p3`), then rounded to the type (`1e40` as a
//!   float is infinity). Trailing characters are an error. An empty value is allowed
//!   for text and strings only.
//! * Escapes in text and strings: `\a \b \f \n \r \t \v \\ \? \' \"` are translated;
//!   any other backslash is kept, with a warning.
//! * `_FillValue`: when `m` or `o` gives a variable that already has one a new value,
//!   the variable's data equal to the old fill value (the first elements, in the
//!   variable's type) is rewritten with the new one, as NCO does; creating, deleting,
//!   appending or prepending a `_FillValue` leaves the data alone. The attribute keeps
//!   the type given (NCO does not convert it to the variable's).
//! * `-t` (type match): an edit addressed to every variable (empty `var_nm`) skips the
//!   variables whose type differs from `att_type`; named variables and expressions are
//!   edited whatever their type (NCO 5.1.4).

use regex::Regex;

use crate::error::{Error, Result};
use crate::model::{Attr, Meta};
use crate::rules::{groups, names};
use crate::types::{NcType, Values};

/// An edit mode (the third field of `-a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `a`: append (create when absent).
    Append,
    /// `c`: create when absent.
    Create,
    /// `d`: delete.
    Delete,
    /// `m`: modify when present.
    Modify,
    /// `n`: append when present.
    Nappend,
    /// `o`: overwrite or create.
    Overwrite,
    /// `p`: prepend (create when absent).
    Prepend,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "a" => Mode::Append,
            "c" => Mode::Create,
            "d" => Mode::Delete,
            "m" => Mode::Modify,
            "n" => Mode::Nappend,
            "o" => Mode::Overwrite,
            "p" => Mode::Prepend,
            _ => return None,
        })
    }

    /// Modes that touch existing attributes only, where an attribute name may be a
    /// regular expression.
    fn existing_only(self) -> bool {
        matches!(self, Mode::Delete | Mode::Modify | Mode::Nappend)
    }
}

/// What an edit applies to (the second field of `-a`).
#[derive(Clone, Debug)]
pub enum Objects {
    /// Empty: every variable.
    AllVars,
    /// `global`: the global attributes (the root group's).
    Global,
    /// `group`: the attributes of every group, the root's included (NCO 5.1.4; the
    /// root's only in a file without groups).
    AllGroups,
    /// One variable by name.
    Var(String),
    /// The variables whose names the expression matches.
    Regex(Regex),
}

/// Which attributes of an object an edit applies to (the first field of `-a`).
#[derive(Clone, Debug)]
pub enum Names {
    /// Empty: every attribute the object has.
    All,
    /// One attribute by name.
    Exact(String),
    /// The attributes whose names the expression matches (modes `d m n`).
    Regex(Regex),
}

/// One `-a` edit.
#[derive(Clone, Debug)]
pub struct AttEdit {
    /// The argument as given (for messages).
    pub spec: String,
    /// The attributes.
    pub names: Names,
    /// The objects.
    pub objects: Objects,
    /// The mode.
    pub mode: Mode,
    /// The type and values (`None` for a delete).
    pub value: Option<Values>,
}

/// A variable's data to rewrite because its `_FillValue` changed: elements equal to
/// `old` become `new` (one element each, in the variable's type).
#[derive(Clone, Debug, PartialEq)]
pub struct FillChange {
    /// Variable index.
    pub var: usize,
    /// The old fill value.
    pub old: Values,
    /// The new fill value.
    pub new: Values,
}

/// The result of [`apply`].
#[derive(Clone, Debug)]
pub struct Applied {
    /// The edited metadata.
    pub meta: Meta,
    /// Data rewrites from `_FillValue` changes, in the order they happen.
    pub fills: Vec<FillChange>,
    /// Warnings for stderr, one line each.
    pub notes: Vec<String>,
}

/// The global attributes of a `--gaa` (`--glb`, `--glb_att_add`) argument:
/// `NAME=VALUE`, several joined by `#` (NCO's key-value delimiter), each a text
/// attribute added to the output's global attributes, replacing one of that name
/// (NCO 5.1.4).
///
/// Errors (naming the option and the argument, as NCO refuses them): an item without
/// `=`, with an empty name, or with an empty value.
pub fn global_attrs(arg: &str) -> Result<Vec<(String, String)>> {
    arg.split('#')
        .map(|item| {
            let bad = |why: String| Error::option("--gaa", why);
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| bad(format!("'{item}' is not NAME=VALUE")))?;
            if name.trim().is_empty() {
                return Err(bad(format!("'{item}' has no attribute name")));
            }
            if value.is_empty() {
                return Err(bad(format!("'{item}' has no value")));
            }
            Ok((name.trim().to_string(), value.to_string()))
        })
        .collect()
}

/// The netCDF type of an ncatted (and ncap2, ncks) type letter or type name: `f d l i
/// s c b ub us u ui ul ll int64 ull uint64 sng string` or `float double int short char
/// byte ubyte ushort uint`; `None` for anything else.
pub fn type_from_letter(s: &str) -> Option<NcType> {
    Some(match s {
        "f" | "float" => NcType::Float,
        "d" | "double" => NcType::Double,
        "l" | "i" | "int" => NcType::Int,
        "s" | "short" => NcType::Short,
        "c" | "char" => NcType::Char,
        "b" | "byte" => NcType::Byte,
        "ub" | "ubyte" => NcType::UByte,
        "us" | "ushort" => NcType::UShort,
        "u" | "ui" | "ul" | "uint" => NcType::UInt,
        "ll" | "int64" => NcType::Int64,
        "ull" | "uint64" => NcType::UInt64,
        "sng" | "string" => NcType::Str,
        _ => return None,
    })
}

/// Translate C escapes in `s` as NCO does for attribute text: `\a \b \f \n \r \t \v
/// \\ \? \' \"`; any other backslash is kept as it is, with a warning pushed on
/// `notes`.
pub fn unescape(s: &str, notes: &mut Vec<String>) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let t = match b.get(i + 1) {
            Some(b'a') => Some(7),
            Some(b'b') => Some(8),
            Some(b'f') => Some(12),
            Some(b'n') => Some(b'\n'),
            Some(b'r') => Some(b'\r'),
            Some(b't') => Some(b'\t'),
            Some(b'v') => Some(11),
            Some(&c @ (b'\\' | b'?' | b'\'' | b'"')) => Some(c),
            _ => None,
        };
        match t {
            Some(c) => {
                out.push(c);
                i += 2;
            }
            None => {
                let code = b
                    .get(i + 1)
                    .map_or(String::new(), |&c| (c as char).to_string());
                notes.push(format!(
                    "WARNING no ASCII equivalent of the escape \\{code}: kept as it is"
                ));
                out.push(b'\\');
                i += 1;
            }
        }
    }
    out
}

/// Parse an integer as C's `strtoll` does (leading blanks, sign, decimal digits,
/// saturated at the i64 range), the whole token.
fn parse_int(tok: &str) -> Option<i128> {
    let t = tok.trim_start();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // Too many digits for i128 saturates like strtoll.
    let v = t.parse::<i128>().unwrap_or(if t.starts_with('-') {
        i128::MIN
    } else {
        i128::MAX
    });
    Some(v)
}

/// Parse a real as C's `strtod` does (leading blanks, decimal and exponent,
/// `nan`, `inf`, `infinity`, hexadecimal `0x1.8p3`), the whole token.
fn parse_real(tok: &str) -> Option<f64> {
    let t = tok.trim_start();
    if let Ok(v) = t.parse::<f64>() {
        return Some(v);
    }
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let hex = rest
        .strip_prefix("0x")
        .or_else(|| rest.strip_prefix("0X"))?;
    let (mant, exp) = match hex.find(['p', 'P']) {
        Some(k) => (&hex[..k], hex[k + 1..].parse::<i32>().ok()?),
        None => (hex, 0),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exp);
    Some(if neg { -v } else { v })
}

/// The values of type `ty` written `val` (see the module docs); `spec` names the edit
/// in errors.
fn parse_values(ty: NcType, val: &str, spec: &str, notes: &mut Vec<String>) -> Result<Values> {
    let bad = |tok: &str, what: &str| {
        Error::option(
            "-a",
            format!(
                "{spec}: \"{tok}\" is not {what} (the value of a {} attribute)",
                ty.nc_name()
            ),
        )
    };
    if val.is_empty() && !matches!(ty, NcType::Char | NcType::Str) {
        return Err(Error::option(
            "-a",
            format!(
                "{spec}: a value is needed in every mode but delete (an empty one only for \
                 NC_CHAR and NC_STRING)"
            ),
        ));
    }
    let toks = || val.split(',');
    Ok(match ty {
        NcType::Char => Values::Char(unescape(val, notes)),
        NcType::Str => Values::Str(
            toks()
                .map(|t| String::from_utf8_lossy(&unescape(t, notes)).into_owned())
                .collect(),
        ),
        NcType::Float | NcType::Double => {
            let mut x = Vec::new();
            for t in toks() {
                x.push(parse_real(t).ok_or_else(|| bad(t, "a number"))?);
            }
            match ty {
                NcType::Float => Values::Float(x.iter().map(|&v| v as f32).collect()),
                _ => Values::Double(x),
            }
        }
        _ => {
            let mut x = Vec::new();
            for t in toks() {
                x.push(parse_int(t).ok_or_else(|| bad(t, "an integer"))?);
            }
            // strtoll saturates at the i64 range (strtoull for the unsigned 64-bit
            // type, which reads a minus sign as wrapping); then C's cast keeps the
            // low bits.
            let x: Vec<i64> = x
                .into_iter()
                .map(|v| v.clamp(i128::from(i64::MIN), i128::from(u64::MAX)) as i64)
                .collect();
            match ty {
                NcType::Byte => Values::Byte(x.iter().map(|&v| v as i8).collect()),
                NcType::Short => Values::Short(x.iter().map(|&v| v as i16).collect()),
                NcType::Int => Values::Int(x.iter().map(|&v| v as i32).collect()),
                NcType::UByte => Values::UByte(x.iter().map(|&v| v as u8).collect()),
                NcType::UShort => Values::UShort(x.iter().map(|&v| v as u16).collect()),
                NcType::UInt => Values::UInt(x.iter().map(|&v| v as u32).collect()),
                NcType::UInt64 => Values::UInt64(x.iter().map(|&v| v as u64).collect()),
                _ => Values::Int64(x),
            }
        }
    })
}

/// One `-a` argument as the command line's parser gives it: the edit and the warnings
/// its parse produced (printed once every argument parsed).
#[derive(Clone, Debug)]
pub struct AttArg {
    /// The edit.
    pub edit: AttEdit,
    /// Warnings about escapes, one line each.
    pub notes: Vec<String>,
}

impl AttArg {
    /// Parse one `-a` argument (a clap value parser).
    ///
    /// Errors: those of [`AttEdit::parse`].
    pub fn parse(arg: &str) -> Result<AttArg> {
        let mut notes = Vec::new();
        let edit = AttEdit::parse(arg, &mut notes)?;
        Ok(AttArg { edit, notes })
    }
}

impl AttEdit {
    /// Parse one `-a` argument; warnings about escapes go to `notes`.
    ///
    /// Errors: fewer than five fields, an unknown mode or type, a bad regular
    /// expression, values that do not parse as the type (each naming the argument).
    pub fn parse(arg: &str, notes: &mut Vec<String>) -> Result<AttEdit> {
        let f: Vec<&str> = arg.splitn(5, ',').collect();
        if f.len() < 5 {
            return Err(Error::option(
                "-a",
                format!(
                    "\"{arg}\" has fewer than five fields (att_nm,var_nm,mode,att_type,att_val)"
                ),
            ));
        }
        let mode = Mode::parse(f[2]).ok_or_else(|| {
            Error::option(
                "-a",
                format!("{arg}: \"{}\" is not a mode (a, c, d, m, n, o or p)", f[2]),
            )
        })?;
        let rx = |s: &str, what: &str| {
            groups::regex(s).map_err(|e| {
                Error::option(
                    "-a",
                    format!("{arg}: bad regular expression for {what} {s}: {e}"),
                )
            })
        };
        let names = if f[0].is_empty() {
            Names::All
        } else if mode.existing_only() && groups::is_regex(f[0]) {
            Names::Regex(rx(f[0], "attribute names")?)
        } else {
            Names::Exact(f[0].to_string())
        };
        let objects = if f[1].is_empty() {
            Objects::AllVars
        } else if f[1].eq_ignore_ascii_case("global") {
            Objects::Global
        } else if f[1].eq_ignore_ascii_case("group") {
            Objects::AllGroups
        } else if groups::is_regex(f[1]) {
            Objects::Regex(rx(f[1], "variable names")?)
        } else {
            Objects::Var(f[1].to_string())
        };
        let value = if mode == Mode::Delete {
            None
        } else {
            let ty = type_from_letter(f[3]).ok_or_else(|| {
                Error::option(
                    "-a",
                    format!(
                        "{arg}: \"{}\" is not a type (f, d, l or i, s, c, b, ub, us, u, ll, ull, \
                         sng)",
                        f[3]
                    ),
                )
            })?;
            Some(parse_values(ty, f[4], arg, notes)?)
        };
        Ok(AttEdit {
            spec: arg.to_string(),
            names,
            objects,
            mode,
            value,
        })
    }
}

/// `a` followed by `b` (same type).
fn concat(a: &Values, b: &Values) -> Values {
    let mut out = a.clone();
    out.extend_from(b);
    out
}

/// The first element of `v` in type `ty` (text that does not read as a number counts
/// as 0 for a numeric variable, as in NCO); `None` when `v` is empty or the types
/// cannot meet (strings, text for a numeric variable).
fn first_as(v: &Values, ty: NcType) -> Option<Values> {
    if v.is_empty() {
        return None;
    }
    let one = v.slice(0, 1);
    match (one.nc_type(), ty) {
        (a, b) if a == b => Some(one),
        (NcType::Str, _) | (_, NcType::Str) | (_, NcType::Char) => None,
        (NcType::Char, _) => {
            let x = one.as_text().and_then(|t| parse_real(&t)).unwrap_or(0.0);
            Values::from_f64_slice(ty, &[x])
        }
        _ => one.convert(ty),
    }
}

/// Apply `edits` to `meta` in order (see the module docs); `type_match` is `-t`.
///
/// Errors: a variable name or expression matching nothing, an append of another type,
/// a type the file's format cannot hold, an attribute name netCDF refuses (each
/// naming the edit).
pub fn apply(meta: &Meta, edits: &[AttEdit], type_match: bool) -> Result<Applied> {
    let mut m = meta.clone();
    let mut fills = Vec::new();
    let mut notes = Vec::new();
    for e in edits {
        if let Some(v) = &e.value {
            if !m.format.supports(v.nc_type()) {
                return Err(Error::option(
                    "-a",
                    format!(
                        "{}: type {} is not allowed in a {} file",
                        e.spec,
                        v.nc_type().nc_name(),
                        m.format.kind_name()
                    ),
                ));
            }
        }
        let att_word = match &e.names {
            Names::Exact(n) => n.as_str(),
            _ => "(every attribute)",
        };
        let keep_type = |ty: NcType| {
            !type_match
                || e.mode == Mode::Delete
                || e.value.as_ref().map(Values::nc_type) == Some(ty)
        };
        let targets: Vec<Owner> = match &e.objects {
            Objects::Global => vec![Owner::Group(0)],
            Objects::AllGroups => (0..m.groups.len()).map(Owner::Group).collect(),
            Objects::AllVars => (0..m.vars.len())
                .filter(|&i| keep_type(m.vars[i].ty))
                .map(Owner::Var)
                .collect(),
            Objects::Var(n) => {
                // Every variable of that name, in any group (a path: that one), as NCO
                // 5.1.4; failing that, the groups of that name (their attributes).
                let vars: Vec<Owner> = (0..m.vars.len())
                    .filter(|&i| groups::names(n, &m.vars[i].name, &m.var_path(i)))
                    .map(Owner::Var)
                    .collect();
                let grps: Vec<Owner> = (1..m.groups.len())
                    .filter(|&g| groups::names(n, &m.groups[g].name, &m.group_path(g)))
                    .map(Owner::Group)
                    .collect();
                match (vars.is_empty(), grps.is_empty()) {
                    (false, _) => vars,
                    (true, false) => grps,
                    (true, true) => {
                        return Err(Error::option(
                            "-a",
                            format!(
                                "{}: the file has no variable \"{n}\", so attribute \"{att_word}\" \
                                 cannot be changed",
                                e.spec
                            ),
                        ))
                    }
                }
            }
            Objects::Regex(re) => {
                let all: Vec<usize> = (0..m.vars.len())
                    .filter(|&i| re.is_match(&m.vars[i].name))
                    .collect();
                if all.is_empty() {
                    return Err(Error::option(
                        "-a",
                        format!(
                            "{}: no variable matches \"{}\", so attribute \"{att_word}\" cannot be \
                             changed",
                            e.spec,
                            re.as_str()
                        ),
                    ));
                }
                all.into_iter().map(Owner::Var).collect()
            }
        };
        for t in targets {
            edit_object(&mut m, t, e, &mut fills, &mut notes)?;
        }
    }
    Ok(Applied {
        meta: m,
        fills,
        notes,
    })
}

/// Whose attributes an edit changes.
#[derive(Clone, Copy, Debug)]
enum Owner {
    /// A group's (the root's: the global attributes).
    Group(usize),
    /// A variable's.
    Var(usize),
}

/// Apply edit `e` to the attributes of `who`.
fn edit_object(
    m: &mut Meta,
    who: Owner,
    e: &AttEdit,
    fills: &mut Vec<FillChange>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let var = match who {
        Owner::Var(v) => Some(v),
        Owner::Group(_) => None,
    };
    let owner = match who {
        Owner::Var(v) => format!("variable {}", m.var_ref(v)),
        Owner::Group(0) => "the global attributes".to_string(),
        Owner::Group(g) => format!("the attributes of group {}", m.group_path(g)),
    };
    let attrs = match who {
        Owner::Var(v) => &m.vars[v].attrs,
        Owner::Group(g) => m.group_attrs(g),
    };
    let names: Vec<String> = match &e.names {
        Names::All => attrs.iter().map(|a| a.name.clone()).collect(),
        Names::Exact(n) => vec![n.clone()],
        Names::Regex(re) => {
            let hit: Vec<String> = attrs
                .iter()
                .filter(|a| re.is_match(&a.name))
                .map(|a| a.name.clone())
                .collect();
            if hit.is_empty() {
                notes.push(format!(
                    "WARNING {}: the regular expression \"{}\" matches no attribute of {owner}",
                    e.spec,
                    re.as_str()
                ));
            }
            hit
        }
    };
    for name in names {
        let attrs = match who {
            Owner::Var(v) => &mut m.vars[v].attrs,
            Owner::Group(g) => m.group_attrs_mut(g),
        };
        let pos = attrs.iter().position(|a| a.name == name);
        let Some(new) = &e.value else {
            if let Some(p) = pos {
                attrs.remove(p);
            }
            continue;
        };
        let old = pos.map(|p| attrs[p].value.clone());
        let value =
            match (e.mode, &old) {
                (Mode::Create, Some(_)) | (Mode::Modify | Mode::Nappend, None) => continue,
                (Mode::Append | Mode::Prepend | Mode::Nappend, Some(o)) => {
                    if o.nc_type() != new.nc_type() {
                        return Err(Error::option(
                            "-a",
                            format!(
                            "{}: attribute \"{name}\" of {owner} is of type {}, not {}: unable \
                             to {}",
                            e.spec,
                            o.nc_type().nc_name(),
                            new.nc_type().nc_name(),
                            if e.mode == Mode::Prepend { "prepend" } else { "append" }
                        ),
                        ));
                    }
                    if e.mode == Mode::Prepend {
                        concat(new, o)
                    } else {
                        concat(o, new)
                    }
                }
                _ => new.clone(),
            };
        match pos {
            Some(p) => attrs[p].value = value.clone(),
            None => {
                names::check("attribute", &name)
                    .map_err(|err| Error::option("-a", format!("{}: {err}", e.spec)))?;
                attrs.push(Attr {
                    name: name.clone(),
                    value: value.clone(),
                });
            }
        }
        // A new _FillValue given by m or o rewrites the data holding the old one.
        if let (Some(v), Some(old), true) = (
            var,
            &old,
            name == "_FillValue" && matches!(e.mode, Mode::Modify | Mode::Overwrite),
        ) {
            let ty = m.vars[v].ty;
            if let (Some(o), Some(n)) = (first_as(old, ty), first_as(&value, ty)) {
                if o != n || o.get_f64(0).is_some_and(f64::is_nan) {
                    fills.push(FillChange {
                        var: v,
                        old: o,
                        new: n,
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    #[test]
    fn values_read_as_c_reads_them() {
        let mut n = Vec::new();
        let p = |ty, s: &str| parse_values(ty, s, "x", &mut Vec::new());
        assert_eq!(
            p(NcType::Short, "70000").unwrap(),
            Values::Short(vec![4464])
        );
        assert_eq!(
            p(NcType::Byte, "200, -1").unwrap(),
            Values::Byte(vec![-56, -1])
        );
        assert!(p(NcType::Int, "1.7").is_err());
        assert!(p(NcType::Int, "0x10").is_err());
        assert!(p(NcType::Double, "1.5abc").is_err());
        assert!(p(NcType::Double, "").is_err());
        assert_eq!(
            p(NcType::Double, "0x1p3,1e-3,.5").unwrap(),
            Values::Double(vec![8.0, 0.001, 0.5])
        );
        match p(NcType::Float, "1e40,nan").unwrap() {
            Values::Float(v) => assert!(v[0].is_infinite() && v[1].is_nan()),
            v => panic!("{v:?}"),
        }
        assert_eq!(
            p(NcType::UInt64, "-1").unwrap(),
            Values::UInt64(vec![u64::MAX])
        );
        assert_eq!(
            p(NcType::Char, "a,b").unwrap(),
            Values::Char(b"a,b".to_vec())
        );
        assert_eq!(
            p(NcType::Str, "a,b").unwrap(),
            Values::Str(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            unescape(r#"a\tb\n\\\"\?\x"#, &mut n),
            b"a\tb\n\\\"?\\x".to_vec()
        );
        assert_eq!(n.len(), 1);
    }

    #[test]
    fn modes_follow_nco() {
        let mut m = Meta::new(Format::Classic);
        m.attrs.push(Attr::text("title", "t"));
        let run = |m: &Meta, a: &str| {
            let e = AttEdit::parse(a, &mut Vec::new()).unwrap();
            apply(m, &[e], false).map(|r| r.meta.attrs)
        };
        assert_eq!(
            run(&m, "title,global,a,c,_x").unwrap()[0].value,
            Values::Char(b"t_x".to_vec())
        );
        assert_eq!(
            run(&m, "title,global,p,c,x_").unwrap()[0].value,
            Values::Char(b"x_t".to_vec())
        );
        assert_eq!(
            run(&m, "title,global,c,c,z").unwrap()[0].value,
            Values::Char(b"t".to_vec())
        );
        assert_eq!(run(&m, "new,global,m,c,z").unwrap().len(), 1);
        assert_eq!(run(&m, "new,global,n,c,z").unwrap().len(), 1);
        assert_eq!(
            run(&m, "new,global,c,d,1").unwrap()[1].value,
            Values::Double(vec![1.0])
        );
        assert!(run(&m, "title,global,d,,").unwrap().is_empty());
        assert!(run(&m, "title,global,a,f,1").is_err());
        assert!(run(&m, "x,global,o,ub,1").is_err());
        assert!(AttEdit::parse("title,global,o,c", &mut Vec::new()).is_err());
        assert!(AttEdit::parse("title,global,z,c,1", &mut Vec::new()).is_err());
        assert!(AttEdit::parse("title,global,o,q,1", &mut Vec::new()).is_err());
    }
}
