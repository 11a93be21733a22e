//! Tokens of the ncap2 language: names, `$dim` references, `var@att` references,
//! typed number literals (NCO's suffixes), strings, operators and punctuation.
//! `//` and `/* */` comments are skipped.

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
    /// `$name`: a dimension.
    Dim(String),
    /// `var@att` (`var` empty for a bare `@att`; `global` for global attributes).
    Att(String, String),
    /// A number with its netCDF type and its text (for exact integer parsing).
    Num(NcType, String),
    /// A string literal, escapes translated.
    Str(String),
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
            Tok::Punct(p) => write!(f, "{p}"),
            Tok::Eof => write!(f, "end of script"),
        }
    }
}

const PUNCTS: [&str; 33] = [
    "+=", "-=", "*=", "/=", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "(", ")", "[", "]",
    "{", "}", ",", ";", ":", "=", "+", "-", "*", "/", "%", "^", "<", ">", "!", ".", "?",
];

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Split `src` into tokens (the last one is [`Tok::Eof`]).
///
/// Errors: an unterminated string or comment, a character outside the language.
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
            for &ch in &b[i..i + 2 + end] {
                if ch == b'\n' {
                    line += 1;
                }
            }
            i += end + 4;
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
                        let e = b.get(j + 1).copied().unwrap_or(b'\\');
                        s.push(match e {
                            b'n' => '\n',
                            b't' => '\t',
                            b'0' => '\0',
                            other => other as char,
                        });
                        j += 2;
                    }
                    Some(_) => {
                        // Keep multi-byte UTF-8 intact.
                        let ch = src[j..].chars().next().unwrap_or('?');
                        s.push(ch);
                        j += ch.len_utf8();
                    }
                }
            }
            push(&mut out, Tok::Str(s));
            i = j + 1;
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
            push(&mut out, Tok::Att(String::new(), att));
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
    Error::msg(format!("syntax error in script at {line}:{col}: {msg}"))
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
        let t = toks("a[$lat,$lon]+=x@units*global@t; // c\n b/* x */>=1");
        assert_eq!(t[0], Tok::Ident("a".into()));
        assert_eq!(t[2], Tok::Dim("lat".into()));
        assert_eq!(t[6], Tok::Punct("+="));
        assert_eq!(t[7], Tok::Att("x".into(), "units".into()));
        assert_eq!(t[9], Tok::Att("global".into(), "t".into()));
        assert_eq!(t[11], Tok::Ident("b".into()));
        assert_eq!(t[12], Tok::Punct(">="));
        assert_eq!(*t.last().unwrap(), Tok::Eof);
    }

    #[test]
    fn strings_and_errors() {
        assert_eq!(toks("\"a\\nb\"")[0], Tok::Str("a\nb".into()));
        assert!(lex("\"open").is_err());
        assert!(lex("a = 1 # 2").is_err());
        assert!(lex("1.5s").is_err());
    }
}
