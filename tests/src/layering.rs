//! Reading a crate's source for the modules its files name through `crate::` paths, for
//! the tests that keep each crate's layers in one direction of use (nco-core's
//! `layering` unit test).

use std::path::Path;

/// `text` with comments, string and character literals blanked (newlines kept), so
/// that only code is searched.
pub fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p)
        } else if rest.starts_with(b"/*") {
            text[i + 2..].find("*/").map_or(b.len(), |p| i + p + 4)
        } else if rest.starts_with(b"r\"") || rest.starts_with(b"r#\"") {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            text[i + 2 + hashes..]
                .find(&close)
                .map_or(b.len(), |p| i + 2 + hashes + p + close.len())
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if rest[0] == b'\'' && rest.get(1) == Some(&b'\\') {
            rest[2..]
                .iter()
                .position(|&c| c == b'\'')
                .map_or(b.len(), |p| i + p + 3)
        } else if rest[0] == b'\'' && rest.get(2) == Some(&b'\'') {
            i + 3
        } else {
            i += 1;
            continue;
        };
        blank(&mut out, i, end);
        i = end;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The first path segments `text` names after `crate::` (`crate::m::x`, `$crate::m`,
/// `crate::{m, n::x}`, also across lines), with the line (1-based) of each; comments
/// and literals are not searched.
pub fn crate_refs(text: &str) -> Vec<(usize, String)> {
    let code = code_only(text);
    let b = code.as_bytes();
    let line_of = |at: usize| 1 + b[..at].iter().filter(|&&c| c == b'\n').count();
    let ident_at = |at: usize| -> (String, usize) {
        let mut j = at;
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        (code[at..j].to_string(), j)
    };
    let skip_ws = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = code[from..].find("crate::") {
        let at = from + p;
        from = at + "crate::".len();
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let j = skip_ws(from);
        if b.get(j) != Some(&b'{') {
            let (m, _) = ident_at(j);
            out.push((line_of(j), m));
            continue;
        }
        // A group: the first segment of each top-level item.
        let (mut j, mut depth, mut item_start) = (j + 1, 1, true);
        while j < b.len() && depth > 0 {
            j = skip_ws(j);
            match b.get(j) {
                Some(b'{') => depth += 1,
                Some(b'}') => depth -= 1,
                Some(b',') if depth == 1 => item_start = true,
                Some(&c) if depth == 1 && item_start && is_ident(c) => {
                    let (m, k) = ident_at(j);
                    out.push((line_of(j), m));
                    item_start = false;
                    j = k;
                    continue;
                }
                _ => {}
            }
            j += 1;
        }
    }
    out
}

/// Every `.rs` file under `dir`, as (path relative to `dir` with `/` separators,
/// text), sorted by path. Panics (fails the test) when `dir` cannot be read.
pub fn rust_files(dir: &Path) -> Vec<(String, String)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let e = e.expect("readable folder entry");
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let path = e.path();
            if path.is_dir() {
                walk(&path, &rel, out);
            } else if rel.ends_with(".rs") {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push((rel, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_path_is_seen() {
        let text = "use crate::ast::Expr;\nuse crate::{\n    num::{self, x},\n    eval,\n};\n\
                    // crate::lib in a comment\nlet s = \"crate::lib\"; let c = '\"'; \
                    f(crate::parser::parse);\nnco_crate::x(); $crate::cli::run();";
        let refs: Vec<(usize, String)> = crate_refs(text);
        let want = [
            (1, "ast"),
            (3, "num"),
            (4, "eval"),
            (7, "parser"),
            (8, "cli"),
        ];
        let want: Vec<(usize, String)> = want.iter().map(|&(l, m)| (l, m.into())).collect();
        assert_eq!(refs, want);
    }
}
