//! Groups in NCO's options (NCO manual, "Group Path Editing", "Subsetting Files"):
//! how list items name variables and groups, which groups `-g` selects, and how `-G`
//! edits the group path of everything written.
//!
//! Rules, checked against NCO 5.1.4 on nested-group files:
//! * a `-v`/`-x` item without `/` names every variable of that short name, in any
//!   group (`-v tas` takes `/tas` and `/model/diag/tas`); an item with `/` names the
//!   variables whose full path is it or ends with it after a `/` (`-v diag/tas`,
//!   `-v /model/ta`; `-v /tas` also takes `/model/diag/tas`);
//! * a regular expression is searched in the short name, or in the full path when it
//!   contains `/` (`-v '^t'`, `-v '/model/.*'`);
//! * `-g` items name groups the same way (by short name or path suffix); a named group
//!   brings its subgroups, a group matched by a regular expression does not; an item
//!   that selects nothing is an error naming it;
//! * `-G name` prepends `name` to every group path, `-G name:N` first deletes the N
//!   leading levels, `-G name@N` (or `name:-N`) the N trailing ones, `-G name:` (`-G :`
//!   alone) deletes them all (flattening).

use std::path::Path;

use regex::Regex;

use crate::error::{Error, Result};
use crate::model::Meta;

/// Refuse the file `path` (metadata `meta`) when it has groups below the root group,
/// for an operator `prog` that does not handle groups yet: it would mix up variables of
/// the same name in different groups, or drop the groups, where NCO keeps them.
///
/// Errors: `<path>: groups are not supported yet by <prog>`.
pub fn refuse_subgroups(prog: &str, path: impl AsRef<Path>, meta: &Meta) -> Result<()> {
    if meta.has_groups() {
        return Err(Error::Format {
            path: path.as_ref().display().to_string(),
            reason: format!("groups are not supported yet by {prog}"),
        });
    }
    Ok(())
}

/// True when a name given for matching holds a character of a regular expression
/// (`.*^$+?[](){}|\`), so NCO treats it as one rather than as a plain name.
pub fn is_regex(s: &str) -> bool {
    s.chars().any(|c| ".*^$+?[](){}|\\".contains(c))
}

/// True when the plain (not regular-expression) list item `item` names an object with
/// short name `short` and full path `full` (see the module notes).
pub fn names(item: &str, short: &str, full: &str) -> bool {
    if !item.contains('/') {
        return short == item;
    }
    let tail = item.trim_start_matches('/');
    full == item || (!tail.is_empty() && full.ends_with(&format!("/{tail}")))
}

/// The groups an output (or a print) of the variables `vars` of `meta` holds, one flag
/// per group: the root, the variables' groups and their ancestors, and the `extra`
/// groups (those `-g` keeps without variables, [`crate::select::whole_groups`]) with
/// theirs.
pub fn needed(meta: &Meta, vars: &[usize], extra: &[usize]) -> Vec<bool> {
    let mut need = vec![false; meta.groups.len()];
    need[0] = true;
    let wanted = vars
        .iter()
        .map(|&v| meta.vars[v].group)
        .chain(extra.iter().copied());
    for g in wanted {
        let mut at = Some(g);
        while let Some(i) = at {
            need[i] = true;
            at = meta.groups[i].parent;
        }
    }
    need
}

/// The dimensions `item` names in option lists that take dimension names (ncwa and
/// ncpdq `-a`): a name every dimension of that name, in any group (`lat` is `/lat`
/// and `/obs/lat`, as NCO 5.1.4 takes it); a path that one ([`names`]). Empty when
/// none.
pub fn dims_named(meta: &Meta, item: &str) -> Vec<usize> {
    (0..meta.dims.len())
        .filter(|&d| names(item, &meta.dims[d].name, &meta.dim_path(d)))
        .collect()
}

/// A compiled list item: a plain name or path, or a regular expression.
#[derive(Clone, Debug)]
pub enum Item {
    /// A name or path, matched by [`names`].
    Plain(String),
    /// A regular expression searched in the short name, or in the full path when the
    /// expression contains `/`.
    Regex(Regex, bool),
}

/// Compile the regular expression `s` (list items, ncatted names).
///
/// Errors: the reason on one line (`unclosed group`), without the regex crate's
/// drawing of the pattern under it.
pub fn regex(s: &str) -> std::result::Result<Regex, String> {
    Regex::new(s).map_err(|e| {
        let text = match e {
            regex::Error::Syntax(text) => text,
            other => other.to_string(),
        };
        text.lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("error: "))
            .map_or_else(|| crate::error::one_line(&text), str::to_string)
    })
}

impl Item {
    /// Compile `s` (the option name is for the error message).
    ///
    /// Errors: a bad regular expression, an empty item.
    pub fn parse(opt: &str, s: &str) -> Result<Item> {
        if s.is_empty() {
            return Err(Error::option(
                opt,
                "an empty name in the list (remove consecutive or trailing commas)",
            ));
        }
        if is_regex(s) {
            let re = regex(s)
                .map_err(|e| Error::option(opt, format!("bad regular expression {s}: {e}")))?;
            Ok(Item::Regex(re, s.contains('/')))
        } else {
            Ok(Item::Plain(s.to_string()))
        }
    }

    /// True when the item matches an object with short name `short` and full path `full`.
    pub fn matches(&self, short: &str, full: &str) -> bool {
        match self {
            Item::Plain(p) => names(p, short, full),
            Item::Regex(re, true) => re.is_match(full),
            Item::Regex(re, false) => re.is_match(short),
        }
    }

    /// True for a plain path (a name with a `/`), which `-g` does not restrict
    /// (`ncks -g obs -v /tas` extracts `/tas` and `/model/diag/tas`, NCO 5.1.4).
    pub fn is_path(&self) -> bool {
        matches!(self, Item::Plain(p) if p.contains('/'))
    }

    /// True for a regular expression.
    pub fn is_regex(&self) -> bool {
        matches!(self, Item::Regex(..))
    }
}

/// The groups `-g items` selects, one flag per group of `meta` (all when `items` is
/// empty). A group named by a plain item brings its subgroups.
///
/// Errors: an item that matches no group (named, as NCO does), a bad regular
/// expression.
pub fn select_groups(meta: &Meta, items: &[String]) -> Result<Vec<bool>> {
    let n = meta.groups.len();
    if items.is_empty() {
        return Ok(vec![true; n]);
    }
    let mut keep = vec![false; n];
    for s in items {
        let item = Item::parse("-g", s)?;
        let mut any = false;
        for g in 0..n {
            if item.matches(&meta.groups[g].name, &meta.group_path(g)) {
                any = true;
                if item.is_regex() {
                    keep[g] = true;
                } else {
                    for (h, k) in keep.iter_mut().enumerate() {
                        if meta.is_within(h, g) {
                            *k = true;
                        }
                    }
                }
            }
        }
        if !any {
            return Err(Error::option(
                "-g",
                format!("no group of the input file is named or matches {s}"),
            ));
        }
    }
    Ok(keep)
}

/// How `-G` edits group paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpeMode {
    /// `-G name`: prepend `name`.
    Append,
    /// `-G name:N`: delete the N leading levels, then prepend `name`.
    Delete(usize),
    /// `-G name@N` or `-G name:-N`: delete the N trailing levels, then prepend `name`.
    Backspace(usize),
    /// `-G name:` (`-G :`): delete every level, then prepend `name`.
    Flatten,
}

/// A group path edit (`-G`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpe {
    /// The group path to prepend, without leading or trailing `/` (may be empty).
    pub name: String,
    /// The edit.
    pub mode: GpeMode,
}

impl Gpe {
    /// Flatten everything into the root group (`-G :`, and how a netCDF3 output
    /// stores a file with groups).
    pub fn flatten() -> Gpe {
        Gpe {
            name: String::new(),
            mode: GpeMode::Flatten,
        }
    }

    /// Parse a `-G` argument (see the module notes).
    ///
    /// Errors: both `:` and `@`, a level that is not a number, a negative level after
    /// `@`.
    pub fn parse(arg: &str) -> Result<Gpe> {
        let bad = |why: &str| Error::option("-G", format!("{arg}: {why}"));
        let (colon, at) = (arg.find(':'), arg.find('@'));
        if colon.is_some() && at.is_some() {
            return Err(bad("a group path edit has a colon or an at-sign, not both"));
        }
        let (name, mode) = match colon.or(at) {
            None => (arg, GpeMode::Append),
            Some(i) => {
                let (name, num) = (&arg[..i], &arg[i + 1..]);
                if num.is_empty() {
                    if at.is_some() {
                        return Err(bad("no level after the at-sign"));
                    }
                    (name, GpeMode::Flatten)
                } else {
                    let n: i64 = num
                        .parse()
                        .map_err(|_| bad("the level must be an integer"))?;
                    match (colon.is_some(), n) {
                        (true, n) if n < 0 => (name, GpeMode::Backspace(n.unsigned_abs() as usize)),
                        (_, n) if n < 0 => return Err(bad("the level must not be negative")),
                        (true, n) => (name, GpeMode::Delete(n as usize)),
                        (false, n) => (name, GpeMode::Backspace(n as usize)),
                    }
                }
            }
        };
        Ok(Gpe {
            name: name.trim_matches('/').to_string(),
            mode,
        })
    }

    /// The edited form of group path `path` (`/` for the root).
    pub fn apply(&self, path: &str) -> String {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let kept: &[&str] = match self.mode {
            GpeMode::Append => &parts,
            GpeMode::Delete(n) => &parts[n.min(parts.len())..],
            GpeMode::Backspace(n) => &parts[..parts.len().saturating_sub(n)],
            GpeMode::Flatten => &[],
        };
        let mut out: Vec<&str> = self.name.split('/').filter(|p| !p.is_empty()).collect();
        out.extend_from_slice(kept);
        format!("/{}", out.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_errors_are_the_reason_on_one_line() {
        assert_eq!(regex("fld(").unwrap_err(), "unclosed group");
        assert_eq!(regex("[a").unwrap_err(), "unclosed character class");
        assert!(regex("^fld.*$").is_ok());
    }

    #[test]
    fn items_name_short_names_and_path_suffixes() {
        assert!(names("tas", "tas", "/model/diag/tas"));
        assert!(names("/tas", "tas", "/model/diag/tas"), "as NCO 5.1.4");
        assert!(names("diag/tas", "tas", "/model/diag/tas"));
        assert!(!names("iag/tas", "tas", "/model/diag/tas"));
        assert!(names("/model/ta", "ta", "/model/ta"));
        assert!(!names("/model/ta", "tas", "/model/tas"));
        let re = Item::parse("-v", "^t").unwrap();
        assert!(re.matches("tas", "/model/diag/tas"));
        let re = Item::parse("-v", "/model/.*").unwrap();
        assert!(re.matches("pr", "/model/diag/pr") && !re.matches("model", "/model_x"));
        assert!(Item::parse("-v", "").is_err());
    }

    #[test]
    fn group_path_edits() {
        let p = |a: &str| Gpe::parse(a).unwrap();
        assert_eq!(p(":").apply("/model/diag"), "/");
        assert_eq!(p("new").apply("/"), "/new");
        assert_eq!(p("new").apply("/model"), "/new/model");
        assert_eq!(p(":1").apply("/model/diag"), "/diag");
        assert_eq!(p(":1").apply("/model"), "/");
        assert_eq!(p("x:1").apply("/model/diag"), "/x/diag");
        assert_eq!(p("x@1").apply("/model/diag"), "/x/model");
        assert_eq!(p(":-1"), p("@1"));
        assert_eq!(p("/out/").name, "out");
        assert!(Gpe::parse("a:1@2").is_err());
        assert!(Gpe::parse("a:x").is_err());
        assert!(Gpe::parse("a@").is_err());
    }
}
