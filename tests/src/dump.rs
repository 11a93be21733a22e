//! A netCDF file as `ncdump` shows it, and a comparison of two files built on it.
//!
//! [`Dump::of`] runs `ncdump -p 9,17 FILE` (every float with 9 significant digits and
//! every double with 17, so that two different values never print alike) and `ncdump
//! -k FILE`, and parses the text into groups, dimensions, variables, attributes and
//! values. The harness reads files only through the system's `ncdump`, never through
//! the code under test.
//!
//! [`compare`] checks two files the way a user would look at them: the format, the
//! groups, each group's dimensions (length, unlimited), variables (type, dimensions,
//! attributes, values) and attributes, matched by name (order does not matter).
//! Numbers are equal within `atol + rtol * |b|` (exact by default); a NaN equals a NaN,
//! a missing value (ncdump's `_`) only a missing value, text only the same text. The
//! provenance attributes NCO writes into the root group (`history`, `NCO`,
//! `history_of_appended_files`, `nco_openmp_thread_number`, `nco_input_file_number`,
//! `nco_input_file_list`) are not compared: they name commands, dates and versions.

use std::fmt;

use crate::tool;

/// One value as ncdump prints it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (kept exact, whatever its width).
    Int(i128),
    /// A floating-point number (also `NaN`, `Infinity`).
    Real(f64),
    /// A missing value: ncdump prints `_` where a value equals the variable's fill value.
    Fill,
    /// A quoted string (escapes as ncdump writes them), for `char` and `string` data.
    Text(String),
}

impl Value {
    /// The number, `None` for [`Value::Fill`] and [`Value::Text`].
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Real(x) => Some(x),
            Value::Fill | Value::Text(_) => None,
        }
    }

    fn close(&self, other: &Value, tol: Tolerance) -> bool {
        match (self, other) {
            // Integers compare exactly (as f64, 2^53 + 1 would equal 2^53) unless a
            // tolerance is asked for.
            (Value::Int(x), Value::Int(y)) if x == y || tol.is_exact() => x == y,
            (Value::Fill, Value::Fill) => true,
            (Value::Text(x), Value::Text(y)) => x == y,
            _ => match (self.as_f64(), other.as_f64()) {
                (Some(x), Some(y)) => tol.close(x, y),
                _ => false,
            },
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(x) => write!(f, "{x:?}"),
            Value::Fill => f.write_str("_"),
            Value::Text(t) => write!(f, "\"{t}\""),
        }
    }
}

/// A dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct Dim {
    /// Name.
    pub name: String,
    /// Length (the current number of records for an unlimited dimension).
    pub len: usize,
    /// True for an unlimited (record) dimension.
    pub unlimited: bool,
}

/// An attribute: its CDL type (`char`, `string`, `byte`, `short`, `int`, `float`,
/// `double`, `ubyte`, `ushort`, `uint`, `int64`, `uint64`, read from ncdump's value
/// suffixes) and values.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    /// Name.
    pub name: String,
    /// CDL type.
    pub ty: String,
    /// Values (one [`Value::Text`] per string for `char` and `string`).
    pub values: Vec<Value>,
}

/// A variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    /// Name.
    pub name: String,
    /// CDL type (`float`, `int64`, `char`...).
    pub ty: String,
    /// Dimension names, slowest first.
    pub dims: Vec<String>,
    /// Attributes in file order.
    pub attrs: Vec<Attr>,
    /// Values in file order (row-major); for `char` data one string per row.
    pub data: Vec<Value>,
}

impl Var {
    /// Attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// The first value of attribute `name` as a number.
    pub fn attr_f64(&self, name: &str) -> Option<f64> {
        self.attr(name)?.values.first()?.as_f64()
    }

    /// The values as numbers, missing values (`_`) as NaN. Panics on text.
    #[track_caller]
    pub fn numbers(&self) -> Vec<f64> {
        self.data
            .iter()
            .map(|v| match v {
                Value::Fill => f64::NAN,
                v => v
                    .as_f64()
                    .unwrap_or_else(|| panic!("{}: {v} is not a number", self.name)),
            })
            .collect()
    }
}

/// A group (the root group has the path `/`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Group {
    /// `/`, `/sub`, `/sub/inner`...
    pub path: String,
    /// Dimensions defined in this group.
    pub dims: Vec<Dim>,
    /// Variables of this group.
    pub vars: Vec<Var>,
    /// Attributes of the group (global attributes for the root group).
    pub attrs: Vec<Attr>,
}

/// A whole file as ncdump shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dump {
    /// `ncdump -k`: `classic`, `64-bit offset`, `cdf5`, `netCDF-4`, `netCDF-4 classic
    /// model`.
    pub format: String,
    /// Every group, the root first, then in file order.
    pub groups: Vec<Group>,
}

impl Dump {
    /// Dump `file` with the system's ncdump (a test fails when ncdump is missing or
    /// cannot read the file).
    #[track_caller]
    pub fn of(file: &str) -> Dump {
        let text = tool("ncdump").args(["-p", "9,17", file]).succeeds().stdout;
        let format = tool("ncdump").args(["-k", file]).succeeds().stdout;
        let mut d = parse(&text).unwrap_or_else(|e| panic!("cannot parse ncdump of {file}: {e}"));
        d.format = format.trim().to_string();
        d
    }

    /// The root group.
    pub fn root(&self) -> &Group {
        &self.groups[0]
    }

    /// Variable `name` of the root group. Panics when absent.
    #[track_caller]
    pub fn var(&self, name: &str) -> &Var {
        self.root()
            .vars
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("no variable {name}"))
    }
}

/// Global attributes that record provenance (commands, dates, versions), not content.
const PROVENANCE: [&str; 6] = [
    "history",
    "NCO",
    "history_of_appended_files",
    "nco_openmp_thread_number",
    "nco_input_file_number",
    "nco_input_file_list",
];

#[derive(Clone, Copy, Debug)]
struct Tolerance {
    rtol: f64,
    atol: f64,
}

impl Tolerance {
    fn is_exact(self) -> bool {
        self.rtol == 0.0 && self.atol == 0.0
    }

    fn close(self, x: f64, y: f64) -> bool {
        x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= self.atol + self.rtol * y.abs()
    }
}

/// A comparison of two files under construction: see [`compare`].
#[must_use = "call .equal() or .differences()"]
pub struct Compare {
    a: String,
    b: String,
    tol: Tolerance,
    attributes: bool,
}

/// Compare files `a` and `b` (exact, attributes included, see the module notes);
/// finish with [`Compare::equal`] or [`Compare::differences`].
pub fn compare(a: &str, b: &str) -> Compare {
    Compare {
        a: a.to_string(),
        b: b.to_string(),
        tol: Tolerance {
            rtol: 0.0,
            atol: 0.0,
        },
        attributes: true,
    }
}

impl Compare {
    /// Numbers (values and numeric attributes) may differ by `rtol * |b|`.
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.tol.rtol = rtol;
        self
    }

    /// Numbers may differ by `atol` (added to the relative tolerance).
    pub fn atol(mut self, atol: f64) -> Self {
        self.tol.atol = atol;
        self
    }

    /// Compare no attributes (of groups or variables).
    pub fn without_attributes(mut self) -> Self {
        self.attributes = false;
        self
    }

    /// Every difference found, one line each (empty when the files are equal).
    #[track_caller]
    pub fn differences(&self) -> Vec<String> {
        differences(
            &Dump::of(&self.a),
            &Dump::of(&self.b),
            self.tol,
            self.attributes,
        )
    }

    /// Require the files to be equal; the failure lists the differences.
    #[track_caller]
    pub fn equal(self) {
        let d = self.differences();
        assert!(
            d.is_empty(),
            "{} and {} differ ({:?}{}):\n  {}",
            self.a,
            self.b,
            self.tol,
            if self.attributes {
                ""
            } else {
                ", attributes not compared"
            },
            d.join("\n  ")
        );
    }
}

fn by_name<T>(items: &[T], name: impl Fn(&T) -> &str) -> Vec<(&str, &T)> {
    let mut v: Vec<(&str, &T)> = items.iter().map(|t| (name(t), t)).collect();
    v.sort_by(|x, y| x.0.cmp(y.0));
    v
}

/// Pair up items by name: both, only in a, only in b.
fn pair<'a, T>(
    a: &'a [T],
    b: &'a [T],
    name: impl Fn(&T) -> &str + Copy,
) -> (Vec<(&'a T, &'a T)>, Vec<&'a str>, Vec<&'a str>) {
    let (xa, xb) = (by_name(a, name), by_name(b, name));
    let both = xa
        .iter()
        .filter_map(|(n, x)| xb.iter().find(|(m, _)| m == n).map(|(_, y)| (*x, *y)))
        .collect();
    let only_a = xa
        .iter()
        .filter(|(n, _)| !xb.iter().any(|(m, _)| m == n))
        .map(|(n, _)| *n)
        .collect();
    let only_b = xb
        .iter()
        .filter(|(n, _)| !xa.iter().any(|(m, _)| m == n))
        .map(|(n, _)| *n)
        .collect();
    (both, only_a, only_b)
}

fn attr_differences(
    out: &mut Vec<String>,
    at: &str,
    a: &[Attr],
    b: &[Attr],
    skip: &[&str],
    tol: Tolerance,
) {
    let keep = |v: &[Attr]| -> Vec<Attr> {
        v.iter()
            .filter(|x| !skip.contains(&x.name.as_str()))
            .cloned()
            .collect()
    };
    let (a, b) = (keep(a), keep(b));
    let (both, only_a, only_b) = pair(&a, &b, |x| x.name.as_str());
    for n in only_a {
        out.push(format!("{at}@{n}: only in the first file"));
    }
    for n in only_b {
        out.push(format!("{at}@{n}: only in the second file"));
    }
    for (x, y) in both {
        if x.ty != y.ty {
            out.push(format!("{at}@{}: type {} != {}", x.name, x.ty, y.ty));
        } else if x.values.len() != y.values.len()
            || x.values
                .iter()
                .zip(&y.values)
                .any(|(u, w)| !u.close(w, tol))
        {
            out.push(format!(
                "{at}@{}: {} != {}",
                x.name,
                list(&x.values),
                list(&y.values)
            ));
        }
    }
}

fn list(v: &[Value]) -> String {
    let s: Vec<String> = v.iter().map(Value::to_string).collect();
    s.join(", ")
}

fn differences(a: &Dump, b: &Dump, tol: Tolerance, attributes: bool) -> Vec<String> {
    let mut out = Vec::new();
    if a.format != b.format {
        out.push(format!("format {} != {}", a.format, b.format));
    }
    let (groups, only_a, only_b) = pair(&a.groups, &b.groups, |g| g.path.as_str());
    for p in only_a {
        out.push(format!("group {p}: only in the first file"));
    }
    for p in only_b {
        out.push(format!("group {p}: only in the second file"));
    }
    for (ga, gb) in groups {
        let at = |n: &str| {
            if ga.path == "/" {
                n.to_string()
            } else {
                format!("{}/{n}", ga.path)
            }
        };
        let (dims, only_a, only_b) = pair(&ga.dims, &gb.dims, |d| d.name.as_str());
        for n in only_a {
            out.push(format!("dimension {}: only in the first file", at(n)));
        }
        for n in only_b {
            out.push(format!("dimension {}: only in the second file", at(n)));
        }
        for (x, y) in dims {
            if (x.len, x.unlimited) != (y.len, y.unlimited) {
                let show =
                    |d: &Dim| format!("{}{}", d.len, if d.unlimited { " (unlimited)" } else { "" });
                out.push(format!(
                    "dimension {}: {} != {}",
                    at(&x.name),
                    show(x),
                    show(y)
                ));
            }
        }
        if attributes {
            let skip: &[&str] = if ga.path == "/" { &PROVENANCE } else { &[] };
            let name = if ga.path == "/" {
                "global attribute ".to_string()
            } else {
                format!("group {} attribute ", ga.path)
            };
            let mut found = Vec::new();
            attr_differences(&mut found, "", &ga.attrs, &gb.attrs, skip, tol);
            out.extend(found.into_iter().map(|d| format!("{name}{}", &d[1..])));
        }
        let (vars, only_a, only_b) = pair(&ga.vars, &gb.vars, |v| v.name.as_str());
        for n in only_a {
            out.push(format!("variable {}: only in the first file", at(n)));
        }
        for n in only_b {
            out.push(format!("variable {}: only in the second file", at(n)));
        }
        for (x, y) in vars {
            let n = at(&x.name);
            if x.dims != y.dims {
                out.push(format!(
                    "{n}: dimensions ({}) != ({})",
                    x.dims.join(", "),
                    y.dims.join(", ")
                ));
                continue;
            }
            if x.ty != y.ty {
                out.push(format!("{n}: type {} != {}", x.ty, y.ty));
            }
            if attributes {
                attr_differences(&mut out, &n, &x.attrs, &y.attrs, &[], tol);
            }
            if x.data.len() != y.data.len() {
                out.push(format!("{n}: {} values != {}", x.data.len(), y.data.len()));
                continue;
            }
            let bad: Vec<usize> = (0..x.data.len())
                .filter(|&i| !x.data[i].close(&y.data[i], tol))
                .collect();
            if let Some(&i) = bad.first() {
                out.push(format!(
                    "{n}: {} of {} values differ, the first at {i}: {} != {}",
                    bad.len(),
                    x.data.len(),
                    x.data[i],
                    y.data[i]
                ));
            }
        }
    }
    out
}

// ------------------------------------------------------------------ parsing ncdump text

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Punct(char),
    Comment(String),
}

/// A token and whether whitespace came before it (`string :att` vs `var:att`).
type Spaced = (Tok, bool);

fn tokens(text: &str) -> Result<Vec<Spaced>, String> {
    let mut out = Vec::new();
    let mut it = text.chars().peekable();
    let mut spaced = true;
    while let Some(c) = it.next() {
        match c {
            c if c.is_whitespace() => {
                spaced = true;
                continue;
            }
            '"' => {
                let mut s = String::new();
                loop {
                    match it.next() {
                        None => return Err("unterminated string".into()),
                        Some('"') => break,
                        Some('\\') => {
                            s.push('\\');
                            s.extend(it.next());
                        }
                        Some(c) => s.push(c),
                    }
                }
                out.push((Tok::Str(s), spaced));
            }
            '/' if it.peek() == Some(&'/') => {
                let mut s = String::new();
                for c in it.by_ref() {
                    if c == '\n' {
                        break;
                    }
                    s.push(c);
                }
                out.push((Tok::Comment(s[1..].trim().to_string()), spaced));
                spaced = true;
                continue;
            }
            '=' | ',' | ';' | ':' | '(' | ')' | '{' | '}' => out.push((Tok::Punct(c), spaced)),
            _ => {
                let mut w = String::from(c);
                if c == '\\' {
                    w.extend(it.next());
                }
                while let Some(&n) = it.peek() {
                    if n.is_whitespace() || "=,;:(){}\"".contains(n) {
                        break;
                    }
                    it.next();
                    w.push(n);
                    if n == '\\' {
                        w.extend(it.next());
                    }
                }
                out.push((Tok::Word(w), spaced));
            }
        }
        spaced = false;
    }
    Ok(out)
}

/// A value token of type `ty` (a variable's type), or of the type its suffix says
/// (`ty` empty: attributes). Returns the CDL type and the value.
fn value(tok: &Tok, ty: &str) -> Result<(String, Value), String> {
    let w = match tok {
        Tok::Str(s) => {
            let t = if ty.is_empty() { "char" } else { ty };
            return Ok((t.to_string(), Value::Text(s.clone())));
        }
        Tok::Word(w) => w.as_str(),
        t => return Err(format!("unexpected {t:?} among values")),
    };
    if w == "_" {
        return Ok((ty.to_string(), Value::Fill));
    }
    let lower = w.to_ascii_lowercase();
    let real_word = |s: &str| {
        let t = s.trim_start_matches(['-', '+']);
        t.contains(['.', 'e']) || t.starts_with("nan") || t.starts_with("inf")
    };
    // Suffixes of CDL constants, longest first.
    let (body, suffix_ty) = [
        ("ull", "uint64"),
        ("ll", "int64"),
        ("ub", "ubyte"),
        ("us", "ushort"),
        ("u", "uint"),
        ("b", "byte"),
        ("s", "short"),
        ("f", "float"),
    ]
    .iter()
    .find(|(s, t)| lower.ends_with(s) && !(*t == "float" && lower.ends_with("inf")))
    .map_or((lower.as_str(), ""), |(s, t)| {
        (&lower[..lower.len() - s.len()], t)
    });
    let int_ok = !real_word(body);
    let ty = if !ty.is_empty() {
        ty.to_string()
    } else if !suffix_ty.is_empty() {
        suffix_ty.to_string()
    } else if int_ok {
        "int".to_string()
    } else {
        "double".to_string()
    };
    if int_ok {
        if let Ok(i) = body.parse::<i128>() {
            return Ok((ty, Value::Int(i)));
        }
    }
    body.parse::<f64>()
        .map(|x| (ty, Value::Real(x)))
        .map_err(|_| format!("not a value: {w}"))
}

fn word(t: &Tok) -> Option<&str> {
    match t {
        Tok::Word(w) => Some(w),
        _ => None,
    }
}

/// The values of a statement's right-hand side (commas between them).
fn values(rhs: &[Spaced], ty: &str) -> Result<(String, Vec<Value>), String> {
    let mut found_ty = ty.to_string();
    let mut v = Vec::new();
    for (t, _) in rhs {
        if *t == Tok::Punct(',') || matches!(t, Tok::Comment(_)) {
            continue;
        }
        let (t, x) = value(t, ty)?;
        if found_ty.is_empty() {
            found_ty = t;
        }
        v.push(x);
    }
    Ok((found_ty, v))
}

#[derive(PartialEq)]
enum Section {
    None,
    Dims,
    Vars,
    Data,
}

/// Parse the text of `ncdump -p 9,17 FILE` (the format is left empty).
pub fn parse(text: &str) -> Result<Dump, String> {
    let toks = tokens(text)?;
    let mut groups: Vec<Group> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut section = Section::None;
    let mut i = 0;
    let at = |i: usize| toks.get(i).map(|t| &t.0);
    while i < toks.len() {
        let (t, _) = &toks[i];
        // Group openings: `netcdf NAME {` and `group: NAME {`.
        if let (Some("netcdf"), true) = (word(t), stack.is_empty()) {
            let open = (i..toks.len())
                .find(|&k| toks[k].0 == Tok::Punct('{'))
                .ok_or("no { after netcdf")?;
            groups.push(Group {
                path: "/".into(),
                ..Group::default()
            });
            stack.push(0);
            i = open + 1;
            continue;
        }
        // A header (`group: NAME`, `data:`) has blank after its colon; an attribute of
        // a variable so named (`data:units`) has none.
        let header = at(i + 1) == Some(&Tok::Punct(':')) && toks.get(i + 2).is_none_or(|t| t.1);
        if word(t) == Some("group") && header {
            let name = at(i + 2).and_then(word).ok_or("group without a name")?;
            let parent = &groups[*stack.last().ok_or("group outside the file")?].path;
            let path = if parent == "/" {
                format!("/{name}")
            } else {
                format!("{parent}/{name}")
            };
            groups.push(Group {
                path,
                ..Group::default()
            });
            stack.push(groups.len() - 1);
            section = Section::None;
            i += 4;
            continue;
        }
        if *t == Tok::Punct('}') {
            stack.pop();
            section = Section::None;
            i += 1;
            continue;
        }
        if let Tok::Comment(_) = t {
            i += 1;
            continue;
        }
        if let (Some(w), true) = (word(t), header) {
            let s = match w {
                "dimensions" => Some(Section::Dims),
                "variables" => Some(Section::Vars),
                "data" => Some(Section::Data),
                "types" => return Err("user-defined types are not supported".into()),
                _ => None,
            };
            if let Some(s) = s {
                section = s;
                i += 2;
                continue;
            }
        }
        // A statement, up to its `;`.
        let end = (i..toks.len())
            .find(|&k| toks[k].0 == Tok::Punct(';'))
            .ok_or("statement without ;")?;
        let st = &toks[i..end];
        // Global attributes of a file without variables follow no `variables:` header.
        if st[0].0 == Tok::Punct(':') && section != Section::Data {
            section = Section::Vars;
        }
        let g = &mut groups[*stack.last().ok_or("statement outside the file")?];
        let eq = st.iter().position(|t| t.0 == Tok::Punct('='));
        match (&section, eq) {
            (Section::Dims, Some(1)) => {
                let name = word(&st[0].0).ok_or("dimension without a name")?;
                let len = word(&st[2].0).ok_or("dimension without a length")?;
                let dim = if len == "UNLIMITED" {
                    // `name = UNLIMITED ; // (N currently)`
                    let n = match at(end + 1) {
                        Some(Tok::Comment(c)) => c
                            .trim_start_matches('(')
                            .split_whitespace()
                            .next()
                            .and_then(|n| n.parse().ok()),
                        _ => None,
                    };
                    Dim {
                        name: name.into(),
                        len: n.ok_or_else(|| format!("{name}: no current length"))?,
                        unlimited: true,
                    }
                } else {
                    Dim {
                        name: name.into(),
                        len: len.parse().map_err(|_| format!("{name}: length {len}"))?,
                        unlimited: false,
                    }
                };
                g.dims.push(dim);
            }
            (Section::Vars, Some(eq)) => {
                // `[type] [var]:att = values ;`
                let colon = st[..eq]
                    .iter()
                    .position(|t| t.0 == Tok::Punct(':'))
                    .ok_or("attribute without :")?;
                let name = st
                    .get(colon + 1)
                    .and_then(|t| word(&t.0))
                    .ok_or("attribute without a name")?;
                let lhs: Vec<&str> = st[..colon].iter().filter_map(|t| word(&t.0)).collect();
                let (ty, var) = if st[colon].1 {
                    (lhs.first().copied(), None) // `string :att` or `:att`
                } else {
                    (
                        (lhs.len() == 2).then(|| lhs[0]),
                        Some(*lhs.last().ok_or("attribute without a variable")?),
                    )
                };
                let (found, vals) = values(&st[eq + 1..], ty.unwrap_or(""))?;
                let attr = Attr {
                    name: name.into(),
                    ty: found,
                    values: vals,
                };
                match var {
                    None => g.attrs.push(attr),
                    Some(v) => g
                        .vars
                        .iter_mut()
                        .rev()
                        .find(|x| x.name == v)
                        .ok_or_else(|| format!("attribute of undeclared {v}"))?
                        .attrs
                        .push(attr),
                }
            }
            (Section::Vars, None) => {
                // `type name[(dim, ...)] ;`
                let ty = word(&st[0].0).ok_or("declaration without a type")?;
                let name = st
                    .get(1)
                    .and_then(|t| word(&t.0))
                    .ok_or("declaration without a name")?;
                let dims = st[2..]
                    .iter()
                    .filter_map(|t| word(&t.0))
                    .map(String::from)
                    .collect();
                g.vars.push(Var {
                    name: name.into(),
                    ty: ty.into(),
                    dims,
                    attrs: Vec::new(),
                    data: Vec::new(),
                });
            }
            (Section::Data, Some(1)) => {
                let name = word(&st[0].0).ok_or("data without a name")?;
                let var = g
                    .vars
                    .iter_mut()
                    .find(|v| v.name == name)
                    .ok_or_else(|| format!("data of undeclared {name}"))?;
                var.data = values(&st[2..], &var.ty.clone())?.1;
            }
            _ => {
                return Err(format!(
                    "unexpected statement {:?}",
                    st.iter().map(|t| &t.0).collect::<Vec<_>>()
                ))
            }
        }
        i = end + 1;
    }
    if groups.is_empty() {
        return Err("no `netcdf NAME {` line".into());
    }
    Ok(Dump {
        format: String::new(),
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"netcdf t4 {
dimensions:
	x = 2 ;
	time = UNLIMITED ; // (3 currently)
variables:
	double d(x) ;
		d:a_dbl = 1., 2.5 ;
		d:a_int = 3 ;
		d:a_i64 = 9007199254740993LL ;
		d:a_ub = 3UB ;
		d:a_f = 0.100000001f, NaNf, -Infinityf ;
		d:a_s = -1s ;
		string d:a_str = "hi", "there" ;
		d:_FillValue = -1. ;
	char c(time, x) ;
	int64 big ;

// global attributes:
		string :gstr = "g" ;
		:gtxt = "multi\nline \"q\" ;" ;
data:

 d = 1, _ ;

 c =
  "ab",
  "cd",
  "e" ;

 big = 9007199254740993 ;

group: sub {
  dimensions:
  	y = 1 ;
  variables:
  	float v(y) ;
  		v:units = "K" ;
  data:

   v = 1.5 ;
  } // group sub
}
"#;

    #[test]
    fn parses_what_ncdump_prints() {
        let d = parse(TEXT).unwrap();
        assert_eq!(d.groups.len(), 2);
        let root = d.root();
        assert_eq!(
            root.dims,
            [
                Dim {
                    name: "x".into(),
                    len: 2,
                    unlimited: false
                },
                Dim {
                    name: "time".into(),
                    len: 3,
                    unlimited: true
                },
            ]
        );
        let v = d.var("d");
        assert_eq!(
            (v.ty.as_str(), v.dims.as_slice()),
            ("double", &["x".to_string()][..])
        );
        let ty = |n: &str| v.attr(n).unwrap().ty.clone();
        for (n, t) in [
            ("a_dbl", "double"),
            ("a_int", "int"),
            ("a_i64", "int64"),
            ("a_ub", "ubyte"),
            ("a_f", "float"),
            ("a_s", "short"),
            ("a_str", "string"),
            ("_FillValue", "double"),
        ] {
            assert_eq!(ty(n), t, "{n}");
        }
        assert_eq!(
            v.attr("a_i64").unwrap().values,
            [Value::Int(9_007_199_254_740_993)]
        );
        let f = &v.attr("a_f").unwrap().values;
        assert_eq!(f[0], Value::Real(0.100000001));
        assert!(matches!(f[1], Value::Real(x) if x.is_nan()));
        assert_eq!(f[2], Value::Real(f64::NEG_INFINITY));
        assert_eq!(v.data, [Value::Int(1), Value::Fill]);
        assert_eq!(
            d.var("c").data,
            ["ab", "cd", "e"].map(|s| Value::Text(s.into()))
        );
        assert_eq!(d.var("big").data, [Value::Int(9_007_199_254_740_993)]);
        assert_eq!(root.attrs[0].ty, "string");
        assert_eq!(
            root.attrs[1].values,
            [Value::Text(r#"multi\nline \"q\" ;"#.into())]
        );
        let sub = &d.groups[1];
        assert_eq!(sub.path, "/sub");
        assert_eq!(sub.vars[0].data, [Value::Real(1.5)]);
        assert_eq!(sub.vars[0].attrs[0].name, "units");
    }

    #[test]
    fn differences_are_named() {
        let a = parse(TEXT).unwrap();
        let exact = Tolerance {
            rtol: 0.0,
            atol: 0.0,
        };
        assert!(differences(&a, &a, exact, true).is_empty());
        let mut b = a.clone();
        b.groups[0].vars[0].data[0] = Value::Real(1.0 + 1e-9);
        b.groups[0].vars[2].data[0] = Value::Int(9_007_199_254_740_992);
        b.groups[0].attrs[1].values[0] = Value::Text("other".into());
        b.groups[0].attrs.push(Attr {
            name: "history".into(),
            ty: "char".into(),
            values: vec![],
        });
        b.groups[1].dims[0].len = 2;
        let d = differences(&a, &b, exact, true);
        assert_eq!(
            d,
            [
                r#"global attribute gtxt: "multi\nline \"q\" ;" != "other""#,
                "big: 1 of 1 values differ, the first at 0: 9007199254740993 != 9007199254740992",
                "d: 1 of 2 values differ, the first at 0: 1 != 1.000000001",
                "dimension /sub/y: 1 != 2",
            ]
        );
        // Within a relative tolerance, and without attributes.
        let loose = Tolerance {
            rtol: 1e-6,
            atol: 0.0,
        };
        assert_eq!(
            differences(&a, &b, loose, false),
            ["dimension /sub/y: 1 != 2"]
        );
    }
}
