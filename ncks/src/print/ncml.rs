//! NcML printing (`ncks --xml`): the netCDF Markup Language 2.2 of Unidata's
//! netCDF-Java (schema `ncml-2.2.xsd`), laid out as NCO 5.1.4 prints it.
//!
//! Rules measured on NCO 5.1.4's prints of its test file:
//! - a `<ncml:netcdf>` root with `location="file:<input as given>"` (none with
//!   `--xml_no_location`); in each group, its dimensions used by the printed variables
//!   (all with `--rad`) by name, `length` the hyperslab's, `isUnlimited="true"` for a
//!   record dimension; then its variables by name; then the group's attributes (with
//!   `-M` or a whole-file print); then its subgroups as `<ncml:group name="...">`;
//!   two spaces more per level;
//! - a variable: `type` (NcML's names: `byte short int long float double char String`;
//!   the unsigned types by their signed name, with a `_Unsigned = "true"` attribute
//!   after the others), `shape` its dimension names (`""` for a scalar); its
//!   attributes with `-m` and its `<ncml:values>` with `-H`, each when asked (as in
//!   CDL);
//! - an attribute: `type` unless text (char and NC_STRING alike), `isUnsigned="true"`
//!   for unsigned types, its values separated by a blank (numbers, `--xml_spr_nmr`) or
//!   `*` (strings, `--xml_spr_chr`; `*|*` when a value holds the separator), the
//!   separator declared by a `separator` attribute unless it is blank, when there is
//!   more than one value (one character of text, one number) or a string;
//! - floats in `%#.7g`, doubles in `%#.15g`, trailing zeros then trimmed (`1.e+36`,
//!   `73.`, `0.5`), NaN and infinities `NaN`, `Infinity`, `-Infinity`; `--fmt_val`
//!   formats float and double data; missing values are printed as their numbers;
//! - text escaped for XML: `&lt; &gt; &amp; &quot;`, newline `&#xA;`, carriage
//!   return `&#xD;`, tab `&#x9;`, DEL `&#127;`, NUL bytes left out; the other control
//!   characters, which XML 1.0 cannot hold (NCO writes `&#1;`...), are U+FFFD;
//!   char arrays print one string per row of their last dimension.
//!
//! Where NCO 5.1.4 writes XML that does not parse, ours is valid (README, compatibility
//! notes): a variable printed without attributes or values is one empty element (NCO
//! closes it twice), and names, file names and separators are escaped too.

use std::io::Write;

use nco_core::dataset::Dataset;
use nco_core::hyperslab::Selection;
use nco_core::model::{Attr, Meta};
use nco_core::types::{NcType, Values};
use nco_core::Result;

use super::{
    for_each_block, group_attrs, io, num, used_dims, value_format, var_attrs, with_point,
    NonFinite, PrintOptions, Tree,
};

/// The NcML 2.2 namespace NCO declares.
const NAMESPACE: &str = "http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2";

/// The separator of text values when the default (`*`) or the user's appears in them.
const BACKUP_SEPARATOR: &str = "*|*";

/// Print `vars` of `ds` under `sel` as NcML.
///
/// Errors: read errors, and a closed standard output.
pub(super) fn print_ncml(
    ds: &Dataset,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let tree = Tree::new(ds.meta(), vars, &o.groups);
    writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>").map_err(io)?;
    match &o.ncml.location {
        Some(loc) => writeln!(
            out,
            "<ncml:netcdf xmlns:ncml=\"{NAMESPACE}\" location=\"file:{}\">",
            escape(loc.as_bytes())
        ),
        None => writeln!(out, "<ncml:netcdf xmlns:ncml=\"{NAMESPACE}\">"),
    }
    .map_err(io)?;
    group(ds, &tree, 0, vars, sel, o, out)?;
    writeln!(out, "</ncml:netcdf>").map_err(io)
}

/// NcML options: `--xml_no_location`, `--xml_spr_chr`, `--xml_spr_nmr`.
#[derive(Clone, Debug, Default)]
pub struct NcmlOptions {
    /// The input as given, for the root's `location` (`None`: `--xml_no_location`).
    pub location: Option<String>,
    /// Separator of text values (default `*`).
    pub text_separator: Option<String>,
    /// Separator of numbers (default a blank).
    pub number_separator: Option<String>,
}

/// Group `g`'s elements and its shown subgroups.
fn group(
    ds: &Dataset,
    tree: &Tree,
    g: usize,
    vars: &[usize],
    sel: &Selection,
    o: &PrintOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    let depth = m.depth(g);
    let outer = "  ".repeat(depth);
    if g != 0 {
        let name = escape(m.groups[g].name.as_bytes());
        writeln!(out, "{outer}<ncml:group name=\"{name}\">").map_err(io)?;
    }
    let ind = format!("{outer}  ");
    for d in used_dims(m, vars, g, o.all_dims) {
        let dim = &m.dims[d];
        let unlimited = if dim.unlimited {
            "isUnlimited=\"true\" "
        } else {
            ""
        };
        writeln!(
            out,
            "{ind}<ncml:dimension name=\"{}\" length=\"{}\" {unlimited}/>",
            escape(dim.name.as_bytes()),
            sel.len(m, d)
        )
        .map_err(io)?;
    }
    for v in tree.vars_in(vars, g) {
        variable(ds, v, sel, o, &ind, out)?;
    }
    if o.global_meta {
        for a in group_attrs(o, m, g).iter() {
            attribute(a, o, &ind, out)?;
        }
    }
    for c in tree.children(g) {
        group(ds, tree, c, vars, sel, o, out)?;
    }
    if g != 0 {
        writeln!(out, "{outer}</ncml:group>").map_err(io)?;
    }
    Ok(())
}

/// NcML's name of type `t` (the unsigned types by their signed name).
fn type_name(t: NcType) -> &'static str {
    match t {
        NcType::Byte | NcType::UByte => "byte",
        NcType::Short | NcType::UShort => "short",
        NcType::Int | NcType::UInt => "int",
        NcType::Int64 | NcType::UInt64 => "long",
        NcType::Float => "float",
        NcType::Double => "double",
        NcType::Char => "char",
        NcType::Str => "String",
    }
}

fn is_unsigned(t: NcType) -> bool {
    matches!(
        t,
        NcType::UByte | NcType::UShort | NcType::UInt | NcType::UInt64
    )
}

/// Variable `v`: its element, attributes (`-m`) and values (`-H`).
fn variable(
    ds: &Dataset,
    v: usize,
    sel: &Selection,
    o: &PrintOptions,
    ind: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let m = ds.meta();
    let var = &m.vars[v];
    let shape: Vec<String> = var
        .dims
        .iter()
        .map(|&d| escape(m.dims[d].name.as_bytes()))
        .collect();
    write!(
        out,
        "{ind}<ncml:variable name=\"{}\" type=\"{}\" shape=\"{}\"",
        escape(var.name.as_bytes()),
        type_name(var.ty),
        shape.join(" ")
    )
    .map_err(io)?;
    if !o.var_meta && !o.data {
        return writeln!(out, " />").map_err(io);
    }
    writeln!(out, ">").map_err(io)?;
    let inner = format!("{ind}  ");
    if o.var_meta {
        for a in var_attrs(o, m, v).iter() {
            attribute(a, o, &inner, out)?;
        }
        if is_unsigned(var.ty) {
            writeln!(
                out,
                "{inner}<ncml:attribute name=\"_Unsigned\" value=\"true\" />"
            )
            .map_err(io)?;
        }
    }
    if o.data {
        values(ds, v, sel, o, &inner, out)?;
    }
    writeln!(out, "{ind}</ncml:variable>").map_err(io)
}

/// The separator of values of type `t`, escaped for XML: the user's or the default,
/// the backup for text when `holds` says a value contains it or the user's is empty
/// (NCO's fallback: rows would run together).
fn separator(o: &PrintOptions, t: NcType, holds: impl Fn(&str) -> bool) -> String {
    let sep = if matches!(t, NcType::Char | NcType::Str) {
        let sep = o.ncml.text_separator.as_deref().unwrap_or("*");
        if sep.is_empty() || holds(sep) {
            BACKUP_SEPARATOR
        } else {
            sep
        }
    } else {
        o.ncml.number_separator.as_deref().unwrap_or(" ")
    };
    escape(sep.as_bytes())
}

/// ` separator="..."` (`sep` escaped already) unless the separator is all blank.
fn separator_attribute(sep: &str) -> String {
    if sep.chars().all(char::is_whitespace) {
        String::new()
    } else {
        format!(" separator=\"{sep}\"")
    }
}

/// Whether values of this type and count declare their separator: more than one, or
/// a string.
fn declares_separator(t: NcType, n: usize) -> bool {
    n > 1 || (t == NcType::Str && n == 1)
}

/// Attribute `a`'s element.
fn attribute(a: &Attr, o: &PrintOptions, ind: &str, out: &mut dyn Write) -> Result<()> {
    let t = a.value.nc_type();
    let mut line = format!(
        "{ind}<ncml:attribute name=\"{}\"",
        escape(a.name.as_bytes())
    );
    if !matches!(t, NcType::Char | NcType::Str) {
        line.push_str(&format!(" type=\"{}\"", type_name(t)));
        if is_unsigned(t) {
            line.push_str(" isUnsigned=\"true\"");
        }
    }
    let sep = separator(o, t, |s| match &a.value {
        Values::Char(c) => contains(text_of(c), s),
        Values::Str(x) => x.iter().any(|v| v.contains(s)),
        _ => false,
    });
    if declares_separator(t, a.value.len()) {
        line.push_str(&separator_attribute(&sep));
    }
    let text = match &a.value {
        Values::Char(c) => escape(c),
        Values::Str(x) => x
            .iter()
            .map(|s| escape(s.as_bytes()))
            .collect::<Vec<_>>()
            .join(&sep),
        v => (0..v.len())
            .map(|i| number(v, i, None))
            .collect::<Vec<_>>()
            .join(&sep),
    };
    writeln!(out, "{line} value=\"{text}\" />").map_err(io)
}

/// Element `i` of numeric values `v`: NcML's number text, or `fmt`'s (`--fmt_val`)
/// when given for a float or double.
fn number(v: &Values, i: usize, fmt: Option<String>) -> String {
    if let Some(s) = fmt {
        return s;
    }
    let g = |x: f64, prec: usize| {
        if x.is_nan() {
            return "NaN".to_string();
        }
        if x.is_infinite() {
            return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
        }
        // `%#.Pg` with its trailing zeros trimmed.
        with_point(nco_core::cfmt::format_g(x, prec))
    };
    match v {
        Values::Float(x) => g(f64::from(x[i]), 7),
        Values::Double(x) => g(x[i], 15),
        Values::Char(c) => escape(&c[i..=i]),
        Values::Str(s) => escape(s[i].as_bytes()),
        // Integers as printf's %d and %u.
        _ => num(v, i, 0, 0, NonFinite::C),
    }
}

/// Variable `v`'s `<ncml:values>` element (its hyperslab under `sel`): numbers read in
/// blocks, text read once (it is looked through for the separator before printing).
fn values(
    ds: &Dataset,
    v: usize,
    sel: &Selection,
    o: &PrintOptions,
    ind: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let m: &Meta = ds.meta();
    let var = &m.vars[v];
    let idx = sel.for_var(m, v);
    let n: usize = idx.iter().map(Vec::len).product();
    // Missing values print as their numbers (NCO's NcML has no blank).
    let text_rows = var.ty == NcType::Char;
    let row = if text_rows {
        idx.last().map_or(1, Vec::len).max(1)
    } else {
        1
    };
    // Text is read whole, to look for the separator in it (strings and char arrays
    // are small beside numbers, which need no look), and printed from that read.
    let text = match var.ty {
        NcType::Char | NcType::Str => Some(ds.read(v, &idx)?),
        _ => None,
    };
    let sep = separator(o, var.ty, |s| match &text {
        Some(Values::Char(c)) => c.chunks(row).any(|r| contains(text_of(r), s)),
        Some(Values::Str(x)) => x.iter().any(|t| t.contains(s)),
        _ => false,
    });
    // One character of text is one string, as a scalar is: a char array declares its
    // separator when it has more than one character.
    let declared = if text_rows {
        n > 1
    } else {
        declares_separator(var.ty, n)
    };
    write!(out, "{ind}<ncml:values").map_err(io)?;
    if declared {
        write!(out, "{}", separator_attribute(&sep)).map_err(io)?;
    }
    write!(out, ">").map_err(io)?;
    let mut first = true;
    let mut print = |vals: &Values| -> Result<()> {
        match vals {
            Values::Char(c) => {
                for r in c.chunks(row) {
                    let s = if first { "" } else { sep.as_str() };
                    write!(out, "{s}{}", escape(r)).map_err(io)?;
                    first = false;
                }
            }
            _ => {
                for i in 0..vals.len() {
                    let s = if first { "" } else { sep.as_str() };
                    write!(out, "{s}{}", number(vals, i, value_format(o, vals, i))).map_err(io)?;
                    first = false;
                }
            }
        }
        Ok(())
    };
    match &text {
        Some(t) => print(t)?,
        None => for_each_block(ds, v, &idx, print)?,
    }
    writeln!(out, "</ncml:values>").map_err(io)
}

/// Text bytes up to the first NUL.
fn text_of(c: &[u8]) -> &[u8] {
    let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
    &c[..end]
}

/// Whether bytes `hay` contain `needle`.
fn contains(hay: &[u8], needle: &str) -> bool {
    let n = needle.as_bytes();
    !n.is_empty() && hay.windows(n.len()).any(|w| w == n)
}

/// Bytes escaped for XML text and attribute values (NCO's rules, module docs); bytes
/// of other characters kept (UTF-8 passes through, invalid UTF-8 is replaced).
pub fn escape(bytes: &[u8]) -> String {
    let mut s = Vec::with_capacity(bytes.len() + 8);
    for &b in bytes {
        match b {
            b'\n' => s.extend_from_slice(b"&#xA;"),
            b'\r' => s.extend_from_slice(b"&#xD;"),
            b'\t' => s.extend_from_slice(b"&#x9;"),
            b'<' => s.extend_from_slice(b"&lt;"),
            b'>' => s.extend_from_slice(b"&gt;"),
            b'&' => s.extend_from_slice(b"&amp;"),
            b'"' => s.extend_from_slice(b"&quot;"),
            0 => {}
            // XML 1.0 has no form for the other control characters, not even `&#1;`
            // (NCO's, which parsers refuse): U+FFFD stands in for each.
            c if c < 0x20 => s.extend_from_slice("\u{FFFD}".as_bytes()),
            0x7f => s.extend_from_slice(b"&#127;"),
            c => s.push(c),
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}
