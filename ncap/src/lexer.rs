//! Tokens of the ncap2 language: names (also `'quoted names'`, NCO manual "ID Quoting"),
//! `$dim` references (`$0` for a variable's first dimension), `var@att` references,
//! typed number literals (NCO's suffixes), strings (`"..."` NC_CHAR, `"..."s`
//! NC_STRING), `#include "file"`, operators and punctuation. `//` and `/* */` comments
//! are skipped.

use nco_core::types::NcType;
use nco_core::{Error, Result};

/// A token with its position (1-based line and column) for error messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What was read.
    pub tok: Tok,
    /// Line (1-based).
    pub line: usize,
    /// Column (1-based).
    pub col: usize,
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name (variable, function, keyword).
    Ident(String),
    /// `$name`: a dimension (`$0`, `$1`... the dimensions of a method's object).
    Dim(String),
    /// `var@att` (`var` empty for a bare `@att`; `global` for global attributes).
    Att(String, String),
    /// A number with its netCDF type and its text (for exact integer parsing).
    Num(NcType, String),
    /// A string literal (NC_CHAR), escapes translated.
    Str(String),
    /// A string literal with the `s` suffix (NC_STRING).
    NcString(String),
    /// `#include "file"`.
    Include(String),
    /// An operator or punctuation mark.
    Punct(&'static str),
    /// End of input.
    Eof,
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "{s}"),
            Tok::Dim(s) => write!(f, "${s}"),
            Tok::Att(v, a) => write!(f, "{v}@{a}"),
            Tok::Num(_, s) => write!(f, "{s}"),
            Tok::Str(s) => write!(f, "\"{s}\""),
            Tok::NcString(s) => write!(f, "\"{s}\"s"),
            Tok::Include(s) => write!(f, "#include \"{s}\""),
            Tok::Punct(p) => write!(f, "{p}"),
            Tok::Eof => write!(f, "end of script"),
        }
    }
}

/// Operators and punctuation, longest first where one is the start of another.
const PUNCTS: [&str; 37] = [
    "+=", "-=", "*=", "/=", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "<<", ">>", "(", ")",
    "[", "]", "{", "}", ",", ";", ":", "=", "+", "-", "*", "/", "%", "^", "<", ">", "!", ".", "?",
    "&", "|",
];

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Characters allowed in a quoted name besides letters, digits and `_`.
fn is_quoted_name(c: u8) -> bool {
    is_name(c) || b"-+.():".contains(&c)
}

/// Split `src` into tokens (the last one is [`Tok::Eof`]).
///
/// Errors: an unterminated string, comment or quoted name, a character outside the
/// language.
pub fn lex(src: &str) -> Result<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0usize;
    let (mut line, mut line_start) = (1usize, 0usize);
    while i < b.len() {
        let c = b[i];
        let col = i - line_start + 1;
        let push = |out: &mut Vec<Token>, tok: Tok| out.push(Token { tok, line, col });
        if c == b'\n' {
            line += 1;
            line_start = i + 1;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b[i..].starts_with(b"/*") {
            let end = src[i + 2..]
                .find("*/")
                .ok_or_else(|| syntax(line, col, "unterminated comment"))?;
            for (k, &ch) in b[i..i + 2 + end].iter().enumerate() {
                if ch == b'\n' {
                    line += 1;
                    line_start = i + k + 1;
                }
            }
            i += end + 4;
            continue;
        }
        if c == b'#' {
            let rest = &src[i + 1..];
            let Some(r) = rest.strip_prefix("include") else {
                return Err(syntax(line, col, "unexpected character '#'"));
            };
            let r2 = r.trim_start_matches([' ', '\t']);
            let skipped = r.len() - r2.len();
            if !r2.starts_with('"') {
                return Err(syntax(line, col, "#include needs a \"file name\""));
            }
            let end = r2[1..]
                .find('"')
                .ok_or_else(|| syntax(line, col, "unterminated #include file name"))?;
            push(&mut out, Tok::Include(r2[1..1 + end].to_string()));
            i += 1 + "include".len() + skipped + end + 2;
            continue;
        }
        if c == b'"' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match b.get(j) {
                    None => return Err(syntax(line, col, "unterminated string")),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        // The escaped character, whole (it may be multi-byte UTF-8).
                        let Some(e) = src[j + 1..].chars().next() else {
                            return Err(syntax(line, col, "unterminated string"));
                        };
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            '0' => '\0',
                            'r' => '\r',
                            'a' => '\x07',
                            'b' => '\x08',
                            'f' => '\x0c',
                            'v' => '\x0b',
                            other => other,
                        });
                        j += 1 + e.len_utf8();
                    }
                    Some(_) => {
                        // Keep multi-byte UTF-8 intact.
                        let ch = src[j..].chars().next().unwrap_or('?');
                        s.push(ch);
                        j += ch.len_utf8();
                    }
                }
            }
            let nc_string =
                b.get(j + 1) == Some(&b's') && !b.get(j + 2).is_some_and(|&c| is_name(c));
            if nc_string {
                push(&mut out, Tok::NcString(s));
                i = j + 2;
            } else {
                push(&mut out, Tok::Str(s));
                i = j + 1;
            }
            continue;
        }
        if c == b'\'' {
            // A quoted name: a variable, `var@att`, or `$dim`.
            let end = src[i + 1..]
                .find('\'')
                .ok_or_else(|| syntax(line, col, "unterminated quoted name"))?;
            let body = &src[i + 1..i + 1 + end];
            let tok = if let Some(d) = body.strip_prefix('$') {
                Tok::Dim(d.to_string())
            } else if let Some((v, a)) = body.split_once('@') {
                Tok::Att(v.to_string(), a.to_string())
            } else {
                Tok::Ident(body.to_string())
            };
            let ok = body
                .bytes()
                .all(|c| is_quoted_name(c) || c == b'@' || c == b'$');
            if body.is_empty() || !ok {
                return Err(syntax(line, col, &format!("bad quoted name '{body}'")));
            }
            push(&mut out, tok);
            i += end + 2;
            continue;
        }
        if c == b'$' {
            let mut j = i + 1;
            while j < b.len() && is_name(b[j]) {
                j += 1;
            }
            if j == i + 1 {
                return Err(syntax(line, col, "expected a dimension name after $"));
            }
            push(&mut out, Tok::Dim(src[i + 1..j].to_string()));
            i = j;
            continue;
        }
        if c == b'@' {
            let (att, j) = name_at(b, src, i + 1);
            if att.is_empty() {
                return Err(syntax(line, col, "expected an attribute name after @"));
            }
            push(&mut out, Tok::Att("global".into(), att));
            i = j;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, j) = number(b, src, i).map_err(|m| syntax(line, col, &m))?;
            push(&mut out, tok);
            i = j;
            continue;
        }
        if is_name_start(c) {
            let mut j = i;
            while j < b.len() && is_name(b[j]) {
                j += 1;
            }
            let name = src[i..j].to_string();
            if b.get(j) == Some(&b'@') {
                let (att, k) = name_at(b, src, j + 1);
                if att.is_empty() {
                    return Err(syntax(line, col, "expected an attribute name after @"));
                }
                push(&mut out, Tok::Att(name, att));
                i = k;
            } else {
                push(&mut out, Tok::Ident(name));
                i = j;
            }
            continue;
        }
        match PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            Some(p) => {
                push(&mut out, Tok::Punct(p));
                i += p.len();
            }
            None => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(syntax(line, col, &format!("unexpected character '{ch}'")));
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        line,
        col: b.len() - line_start + 1,
    });
    Ok(out)
}

fn name_at(b: &[u8], src: &str, start: usize) -> (String, usize) {
    let mut j = start;
    while j < b.len() && is_name(b[j]) {
        j += 1;
    }
    (src[start..j].to_string(), j)
}

/// A syntax error at a position.
pub fn syntax(line: usize, col: usize, msg: &str) -> Error {
    Error::msg(format!("{line}:{col}: syntax error: {msg}"))
}

/// Read a number literal starting at `i`: digits, optional fraction and exponent, then
/// NCO's type suffix (`f d s b l ub us u ul ll ull`, any case).
fn number(b: &[u8], src: &str, i: usize) -> std::result::Result<(Tok, usize), String> {
    let mut j = i;
    let mut float = false;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    if j < b.len() && b[j] == b'.' {
        float = true;
        j += 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
    }
    if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
        let mut k = j + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        if k < b.len() && b[k].is_ascii_digit() {
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            float = true;
            j = k;
        }
    }
    let text = src[i..j].to_string();
    let mut k = j;
    while k < b.len() && b[k].is_ascii_alphabetic() {
        k += 1;
    }
    let suffix = src[j..k].to_ascii_lowercase();
    let ty = match suffix.as_str() {
        "" => {
            if float {
                NcType::Double
            } else {
                NcType::Int
            }
        }
        "f" => NcType::Float,
        "d" => NcType::Double,
        "s" if !float => NcType::Short,
        "b" if !float => NcType::Byte,
        "l" if !float => NcType::Int,
        "ub" if !float => NcType::UByte,
        "us" if !float => NcType::UShort,
        "u" | "ul" if !float => NcType::UInt,
        "ll" if !float => NcType::Int64,
        "ull" if !float => NcType::UInt64,
        _ => return Err(format!("bad number suffix in \"{}\"", &src[i..k])),
    };
    Ok((Tok::Num(ty, text), k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn escapes_of_multi_byte_characters_keep_them_whole() {
        // Found by fuzzing: a backslash before a multi-byte character split it (panic).
        assert_eq!(
            toks("s=\"a\\\u{d9}b\\\\\";")[2],
            Tok::Str("a\u{d9}b\\".into())
        );
        assert!(lex("s=\"a\\").is_err());
        assert!(lex("s=\"\\\u{d9}").is_err());
    }

    #[test]
    fn literals_get_nco_types() {
        let t = toks("1 1.0 1.0f 2s 3b 4ub 5us 6u 7ll 8ull 1e3 .5 2l 3d");
        let tys: Vec<NcType> = t
            .iter()
            .filter_map(|t| match t {
                Tok::Num(ty, _) => Some(*ty),
                _ => None,
            })
            .collect();
        use NcType::*;
        assert_eq!(
            tys,
            vec![
                Int, Double, Float, Short, Byte, UByte, UShort, UInt, Int64, UInt64, Double,
                Double, Int, Double
            ]
        );
    }

    #[test]
    fn names_attributes_dims_and_operators() {
        let t = toks("a[$lat,$lon]+=x@units*global@t; // c\n b/* x */>=1 @g '$0' 'a-b@c+d' x<<2");
        assert_eq!(t[0], Tok::Ident("a".into()));
        assert_eq!(t[2], Tok::Dim("lat".into()));
        assert_eq!(t[6], Tok::Punct("+="));
        assert_eq!(t[7], Tok::Att("x".into(), "units".into()));
        assert_eq!(t[9], Tok::Att("global".into(), "t".into()));
        assert_eq!(t[11], Tok::Ident("b".into()));
        assert_eq!(t[12], Tok::Punct(">="));
        assert_eq!(t[14], Tok::Att("global".into(), "g".into()));
        assert_eq!(t[15], Tok::Dim("0".into()));
        assert_eq!(t[16], Tok::Att("a-b".into(), "c+d".into()));
        assert_eq!(t[18], Tok::Punct("<<"));
        assert_eq!(*t.last().unwrap(), Tok::Eof);
    }

    #[test]
    fn strings_includes_and_errors() {
        assert_eq!(toks("\"a\\nb\"")[0], Tok::Str("a\nb".into()));
        assert_eq!(toks("\"ab\"s")[0], Tok::NcString("ab".into()));
        assert_eq!(
            toks("#include \"x.nco\"\na=1")[0],
            Tok::Include("x.nco".into())
        );
        assert!(lex("\"open").is_err());
        assert!(lex("a = 1 # 2").is_err());
        assert!(lex("1.5s").is_err());
    }

    #[test]
    fn positions_after_a_multi_line_comment() {
        let t = lex("/* one\n two\n */ a=1;\n  b").unwrap();
        assert_eq!((t[0].line, t[0].col), (3, 5));
        assert_eq!((t[4].line, t[4].col), (4, 3));
    }
}
