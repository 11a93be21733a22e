//! C `printf` formatting of single values, through the C library's own `snprintf`, so
//! that `ncks -s FORMAT` and NCO's default number formats (`%g`, `%.7g`, `%.12g`...)
//! print exactly as NCO's C code prints them.
//!
//! A user format is validated first: at most one conversion, no `*` width or
//! precision, no `%n`. The value is passed in the C type the conversion expects
//! (NCO passes the variable's own type, so `%g` on an integer prints garbage there;
//! here the integer is converted to double and printed correctly, see README).

use std::ffi::CString;

use crate::error::{Error, Result};

/// A value to format.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// Signed integer.
    Int(i64),
    /// Unsigned integer.
    UInt(u64),
    /// Floating point.
    Float(f64),
    /// Text (for `%s`).
    Str(&'a str),
}

/// A validated format: literal text around at most one conversion.
#[derive(Clone, Debug)]
pub struct CFormat {
    prefix: String,
    /// The conversion without length modifiers, e.g. `%-8.3` (flags, width, precision).
    spec: String,
    conv: Option<char>,
    suffix: String,
}

/// Translate backslash escapes (`\n`, `\t`, `\\`, `\"`, `\'`) as NCO does for `-s`.
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

impl CFormat {
    /// Parse and validate a printf format. Errors name the option `-s`.
    pub fn parse(fmt: &str) -> Result<CFormat> {
        let bad = |r: &str| Error::option("-s", format!("format \"{fmt}\": {r}"));
        let b: Vec<char> = fmt.chars().collect();
        let mut i = 0;
        let mut prefix = String::new();
        let mut spec = String::new();
        let mut conv = None;
        let mut suffix = String::new();
        while i < b.len() {
            let c = b[i];
            let target = if conv.is_none() {
                &mut prefix
            } else {
                &mut suffix
            };
            if c != '%' {
                target.push(c);
                i += 1;
                continue;
            }
            if b.get(i + 1) == Some(&'%') {
                target.push_str("%%");
                i += 2;
                continue;
            }
            if conv.is_some() {
                return Err(bad("more than one conversion"));
            }
            let mut s = String::from("%");
            i += 1;
            while i < b.len() && "-+ #0'".contains(b[i]) {
                s.push(b[i]);
                i += 1;
            }
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '.') {
                s.push(b[i]);
                i += 1;
            }
            while i < b.len() && "hlLqjzt".contains(b[i]) {
                i += 1;
            }
            let c = *b.get(i).ok_or_else(|| bad("ends inside a conversion"))?;
            if !"diouxXeEfFgGaAcs".contains(c) {
                return Err(bad(&format!("unsupported conversion %{c}")));
            }
            spec = s;
            conv = Some(c);
            i += 1;
        }
        Ok(CFormat {
            prefix,
            spec,
            conv,
            suffix,
        })
    }

    /// The conversion character, if any.
    pub fn conversion(&self) -> Option<char> {
        self.conv
    }

    /// The format with the conversion replaced by `text` (NCO prints `_` for missing
    /// values this way).
    pub fn with_text(&self, text: &str) -> String {
        let unpct = |s: &str| s.replace("%%", "%");
        if self.conv.is_none() {
            return unpct(&self.prefix);
        }
        format!("{}{}{}", unpct(&self.prefix), text, unpct(&self.suffix))
    }

    /// Format one value.
    pub fn format(&self, arg: Arg<'_>) -> String {
        let Some(conv) = self.conv else {
            return self.with_text("");
        };
        let full = |modifier: &str, c: char| {
            format!("{}{}{modifier}{c}{}", self.prefix, self.spec, self.suffix)
        };
        match (conv, arg) {
            ('d' | 'i', a) => snprintf_i64(&full("ll", conv), as_i64(a)),
            ('o' | 'u' | 'x' | 'X', a) => snprintf_u64(&full("ll", conv), as_u64(a)),
            ('c', a) => snprintf_c(&full("", 'c'), as_i64(a)),
            ('s', Arg::Str(s)) => snprintf_str(&full("", 's'), s),
            ('s', a) => snprintf_str(&full("", 's'), &plain(a)),
            (c, a) => snprintf_f64(&full("", c), as_f64(a)),
        }
    }
}

fn plain(a: Arg<'_>) -> String {
    match a {
        Arg::Int(i) => i.to_string(),
        Arg::UInt(u) => u.to_string(),
        Arg::Float(f) => format_g(f, 6),
        Arg::Str(s) => s.to_string(),
    }
}

fn as_i64(a: Arg<'_>) -> i64 {
    match a {
        Arg::Int(i) => i,
        Arg::UInt(u) => u as i64,
        Arg::Float(f) => f as i64,
        Arg::Str(s) => s.bytes().next().map_or(0, i64::from),
    }
}

fn as_u64(a: Arg<'_>) -> u64 {
    match a {
        Arg::Int(i) => i as u64,
        Arg::UInt(u) => u,
        Arg::Float(f) => f as u64,
        Arg::Str(s) => s.bytes().next().map_or(0, u64::from),
    }
}

fn as_f64(a: Arg<'_>) -> f64 {
    match a {
        Arg::Int(i) => i as f64,
        Arg::UInt(u) => u as f64,
        Arg::Float(f) => f,
        Arg::Str(_) => 0.0,
    }
}

fn run_snprintf(f: impl Fn(*mut libc::c_char, usize) -> libc::c_int) -> String {
    let mut buf = vec![0u8; 128];
    loop {
        let n = f(buf.as_mut_ptr().cast(), buf.len());
        if n < 0 {
            return String::new();
        }
        let n = n as usize;
        if n < buf.len() {
            buf.truncate(n);
            return String::from_utf8_lossy(&buf).into_owned();
        }
        buf.resize(n + 1, 0);
    }
}

fn cstr(fmt: &str) -> CString {
    CString::new(fmt.replace('\0', "")).unwrap_or_default()
}

fn snprintf_i64(fmt: &str, x: i64) -> String {
    let c = cstr(fmt);
    // SAFETY: the format was validated by `CFormat::parse` to hold exactly one signed
    // integer conversion, given the `ll` modifier here, and a long long argument.
    run_snprintf(|p, n| unsafe { libc::snprintf(p, n, c.as_ptr(), x as libc::c_longlong) })
}

fn snprintf_c(fmt: &str, x: i64) -> String {
    let c = cstr(fmt);
    // SAFETY: one `%c` conversion, given an int.
    run_snprintf(|p, n| unsafe { libc::snprintf(p, n, c.as_ptr(), x as libc::c_int) })
}

fn snprintf_u64(fmt: &str, x: u64) -> String {
    let c = cstr(fmt);
    // SAFETY: one unsigned conversion with the `ll` modifier, given an unsigned long long.
    run_snprintf(|p, n| unsafe { libc::snprintf(p, n, c.as_ptr(), x as libc::c_ulonglong) })
}

fn snprintf_f64(fmt: &str, x: f64) -> String {
    let c = cstr(fmt);
    // SAFETY: one floating conversion, given a double.
    run_snprintf(|p, n| unsafe { libc::snprintf(p, n, c.as_ptr(), x) })
}

fn snprintf_str(fmt: &str, s: &str) -> String {
    let c = cstr(fmt);
    let a = cstr(s);
    // SAFETY: one `%s` conversion, given a NUL-terminated string that outlives the call.
    run_snprintf(|p, n| unsafe { libc::snprintf(p, n, c.as_ptr(), a.as_ptr()) })
}

/// `%.{prec}g` of a double, as C prints it.
pub fn format_g(x: f64, prec: usize) -> String {
    snprintf_f64(&format!("%.{prec}g"), x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_c() {
        let f = CFormat::parse("%4.1f,").unwrap();
        assert_eq!(f.format(Arg::Float(12.0)), "12.0,");
        assert_eq!(
            CFormat::parse("%d").unwrap().format(Arg::Int(-31536)),
            "-31536"
        );
        assert_eq!(
            CFormat::parse("%g").unwrap().format(Arg::Float(1e36)),
            "1e+36"
        );
        assert_eq!(
            CFormat::parse("%e").unwrap().format(Arg::Float(3.0)),
            "3.000000e+00"
        );
        assert_eq!(
            CFormat::parse("%2.f,").unwrap().format(Arg::Float(5.0)),
            " 5,"
        );
        assert_eq!(CFormat::parse("%i").unwrap().format(Arg::Int(10)), "10");
        assert_eq!(
            CFormat::parse("%g").unwrap().format(Arg::Int(3)),
            "3",
            "ints print right"
        );
        assert_eq!(CFormat::parse("%g ").unwrap().with_text("_"), "_ ");
        assert_eq!(CFormat::parse("%c").unwrap().format(Arg::Int(65)), "A");
        assert_eq!(format_g(std::f64::consts::PI, 12), "3.14159265359");
    }

    #[test]
    fn rejects_dangerous_formats() {
        assert!(CFormat::parse("%n").is_err());
        assert!(CFormat::parse("%*d").is_err());
        assert!(CFormat::parse("%d %d").is_err());
        assert!(CFormat::parse("%").is_err());
        assert_eq!(unescape("a\\nb"), "a\nb");
    }
}
