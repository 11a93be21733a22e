//! netCDF's rules for names of dimensions, variables and attributes (netCDF User
//! Guide, "Names"; what libnetcdf's `NC_check_name` refuses with NC_EBADNAME): not
//! empty, at most 256 bytes, first character a letter, a digit, `_` or any non-ASCII
//! character, no `/`, no control character, no trailing blank.

use crate::error::{Error, Result};

/// The longest name netCDF accepts, in bytes (`NC_MAX_NAME`).
pub const MAX_NAME: usize = 256;

/// Check `name` against netCDF's rules; `what` ("variable", "dimension", "attribute")
/// names the object in the error.
///
/// Errors: a name netCDF refuses, quoted with the reason.
pub fn check(what: &str, name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::msg(format!(
            "{what} name \"{name}\" is not valid in netCDF: {why}"
        )))
    };
    let Some(first) = name.chars().next() else {
        return bad("it is empty");
    };
    if name.len() > MAX_NAME {
        return bad("it is longer than 256 bytes");
    }
    if first.is_ascii() && !(first.is_ascii_alphanumeric() || first == '_') {
        return bad("it must start with a letter, a digit or _");
    }
    if name.contains('/') {
        return bad("it holds /");
    }
    if name.chars().any(|c| c.is_ascii_control()) {
        return bad("it holds a control character");
    }
    if name.ends_with(char::is_whitespace) {
        return bad("it ends with a blank");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netcdf_names() {
        for ok in ["lat", "_x", "2m_temp", "u.*s", "a b", "température", "Ω"] {
            assert!(check("variable", ok).is_ok(), "{ok}");
        }
        for bad in ["", "a/b", " a", ".x", "a ", "a\nb", &"x".repeat(257)] {
            let e = check("variable", bad).unwrap_err().to_string();
            assert!(e.starts_with("variable name"), "{e}");
        }
    }
}
