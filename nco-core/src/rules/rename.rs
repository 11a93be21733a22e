//! ncrename's renames (NCO manual, "ncrename netCDF Renamer"), checked against NCO
//! 5.1.4:
//!
//! * `-v old,new`, `-d old,new`, `-g old,new`, `-a old,new`, each repeatable; the old
//!   name is everything before the first comma, the new one everything after it (a
//!   group path in the new name is dropped: `/lat,/latitude` renames `lat` to
//!   `latitude`). A leading `.` makes the old name optional: absent, it is skipped
//!   with a note instead of an error.
//! * Renames apply in NCO's order: variables, groups, dimensions, attributes. Every
//!   old variable, group and dimension name is looked up in the file as it was before
//!   any rename, and an object is renamed at most once (`-v lat,x -v x,y` and `-v
//!   lat,x -v lat,y` both fail, as in NCO); attribute names are looked up as renamed
//!   so far. A new name already in use (the same name included) is an error.
//! * A dimension and its coordinate variable are separate objects: rename both to keep
//!   the variable a coordinate (`-d lon,longitude -v lon,longitude`).
//! * `-a` takes `[.][obj@][.]att`: without `@` the attribute is renamed in the global
//!   attributes and in every variable, and (unless optional) each of them must have
//!   it; `var@att` renames it in that variable only, `global@att` in the global
//!   attributes only; a `.` before the object makes the object optional. `@` is
//!   allowed in the new name (`var@att`), and ignored.
//!
//! Where NCO 5.1.4 contradicts its manual we follow the manual, which is the more
//! lenient: `@att` and `group@att` rename group (here: global) attributes (NCO looks
//! for an object named ""); `var@.att` skips a variable without the attribute (NCO
//! reports the variable missing). This file model has no groups below the root, so
//! `-g` only ever finds nothing (an error unless optional).

use crate::error::{Error, Result};
use crate::model::{Attr, Meta};
use crate::rules::names;

/// What a rename applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `-v`.
    Variable,
    /// `-d`.
    Dimension,
    /// `-g`.
    Group,
    /// `-a`.
    Attribute,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Variable => "variable",
            Kind::Dimension => "dimension",
            Kind::Group => "group",
            Kind::Attribute => "attribute",
        }
    }

    fn option(self) -> &'static str {
        match self {
            Kind::Variable => "-v",
            Kind::Dimension => "-d",
            Kind::Group => "-g",
            Kind::Attribute => "-a",
        }
    }
}

/// One rename request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rename {
    /// What it renames.
    pub kind: Kind,
    /// The old name as given (with its `.` and `@` parts).
    pub old: String,
    /// The new name.
    pub new: String,
}

impl Rename {
    /// Parse the argument `arg` of option `kind` (`old,new`).
    ///
    /// Errors: no comma, or an empty old or new name (naming the option).
    pub fn parse(kind: Kind, arg: &str) -> Result<Rename> {
        let bad = || Error::option(kind.option(), format!("\"{arg}\" is not old_name,new_name"));
        let (old, new) = arg.split_once(',').ok_or_else(bad)?;
        // Only the last component of a group path names the object.
        let new = new.rsplit_once('/').map_or(new, |(_, n)| n);
        if old.is_empty() || new.is_empty() {
            return Err(bad());
        }
        Ok(Rename {
            kind,
            old: old.to_string(),
            new: new.to_string(),
        })
    }
}

/// A name with its optional-presence dot removed: (name, optional).
fn optional(name: &str) -> (&str, bool) {
    match name.strip_prefix('.') {
        Some(n) => (n, true),
        None => (name, false),
    }
}

/// A name as given matches an object with short name `name` and full path `full`: a
/// plain name matches that name in any group, a path (`/obs/t2m`, `/tas`) that object
/// only (NCO 5.1.4).
fn matches(given: &str, name: &str, full: &str) -> bool {
    if given.starts_with('/') {
        given == full
    } else {
        given == name
    }
}

/// Where an attribute rename looks.
enum Objects {
    /// The global attributes and every variable (no `@`).
    All,
    /// The global attributes only (`global@`, `group@`, `@`).
    Global,
    /// One variable, by its name in the file before the renames.
    Var(String),
}

/// Apply `renames` to `meta` (the metadata of `path`), in NCO's order. Returns the new
/// metadata and the notes about optional names that were not found (one line each,
/// for stderr).
///
/// Errors: a required name that is not in the file, a new name already in use or not
/// valid in netCDF (each naming the object and the file).
pub fn apply(meta: &Meta, renames: &[Rename], path: &str) -> Result<(Meta, Vec<String>)> {
    let orig = meta;
    let mut m = meta.clone();
    let mut notes = Vec::new();
    let mut done = Done::default();
    let ordered = [
        Kind::Variable,
        Kind::Group,
        Kind::Dimension,
        Kind::Attribute,
    ];
    for kind in ordered {
        for r in renames.iter().filter(|r| r.kind == kind) {
            match kind {
                Kind::Variable => rename_object(&mut m, orig, r, path, &mut notes, &mut done.vars)?,
                Kind::Dimension => {
                    rename_object(&mut m, orig, r, path, &mut notes, &mut done.dims)?
                }
                Kind::Group => rename_group(&mut m, orig, r, path, &mut notes)?,
                Kind::Attribute => rename_attribute(&mut m, orig, r, path, &mut notes)?,
            }
        }
    }
    Ok((m, notes))
}

/// The variables and dimensions renamed so far (indices).
#[derive(Default)]
struct Done {
    vars: Vec<usize>,
    dims: Vec<usize>,
}

/// A variable or dimension rename; `done` lists the objects of its kind renamed so far.
fn rename_object(
    m: &mut Meta,
    orig: &Meta,
    r: &Rename,
    path: &str,
    notes: &mut Vec<String>,
    done: &mut Vec<usize>,
) -> Result<()> {
    let var = r.kind == Kind::Variable;
    let what = r.kind.word();
    let (name, opt) = optional(&r.old);
    // Every variable (dimension) of that name, in any group; a path names one (NCO
    // 5.1.4 renames `tas` in `/` and in `/model/diag` alike).
    let found: Vec<usize> = if var {
        (0..orig.vars.len())
            .filter(|&i| matches(name, &orig.vars[i].name, &orig.var_path(i)))
            .collect()
    } else {
        (0..orig.dims.len())
            .filter(|&i| matches(name, &orig.dims[i].name, &orig.dim_path(i)))
            .collect()
    };
    if found.is_empty() {
        if opt {
            notes.push(format!(
                "INFO optional {what} {name} is not in {path}; skipped"
            ));
            return Ok(());
        }
        return Err(Error::msg(format!(
            "{what} {name} is not in {path} (prefix it with . if it may be absent: {} .{name},{})",
            r.kind.option(),
            r.new
        )));
    }
    names::check(what, &r.new)?;
    for i in found {
        if done.contains(&i) {
            return Err(Error::msg(format!(
                "{what} {name} is renamed twice; rename it once, to its final name"
            )));
        }
        done.push(i);
        // The new name must be free in the object's own group.
        let taken = if var {
            m.var_in(m.vars[i].group, &r.new).is_some()
        } else {
            let g = m.dims[i].group;
            m.dims.iter().any(|d| d.group == g && d.name == r.new)
        };
        if taken {
            return Err(Error::msg(format!(
                "cannot rename {what} {name} to {}: {path} already has a {what} of that name",
                r.new
            )));
        }
        if var {
            m.vars[i].name = r.new.clone();
        } else {
            m.dims[i].name = r.new.clone();
        }
    }
    Ok(())
}

/// A group rename (`-g old,new`): every group of that name (a path: that one).
fn rename_group(
    m: &mut Meta,
    orig: &Meta,
    r: &Rename,
    path: &str,
    notes: &mut Vec<String>,
) -> Result<()> {
    let (name, opt) = optional(&r.old);
    let found: Vec<usize> = (1..orig.groups.len())
        .filter(|&g| matches(name, &orig.groups[g].name, &orig.group_path(g)))
        .collect();
    if found.is_empty() {
        if opt {
            notes.push(format!(
                "INFO optional group {name} is not in {path}; skipped"
            ));
            return Ok(());
        }
        return Err(Error::msg(format!(
            "group {name} is not in {path} (prefix it with . if it may be absent: -g \
             .{name},{})",
            r.new
        )));
    }
    names::check("group", &r.new)?;
    for g in found {
        let parent = m.groups[g].parent.unwrap_or(0);
        if m.child_group(parent, &r.new).is_some() {
            return Err(Error::msg(format!(
                "cannot rename group {name} to {}: {path} already has a group of that name \
                 there",
                r.new
            )));
        }
        m.groups[g].name = r.new.clone();
    }
    Ok(())
}

/// An attribute rename (see the module docs for the syntax).
fn rename_attribute(
    m: &mut Meta,
    orig: &Meta,
    r: &Rename,
    path: &str,
    notes: &mut Vec<String>,
) -> Result<()> {
    let (objects, obj_opt, att) = match r.old.split_once('@') {
        None => (Objects::All, true, r.old.as_str()),
        Some((obj, att)) => {
            let (obj, opt) = optional(obj);
            let o = if obj.is_empty()
                || obj.eq_ignore_ascii_case("global")
                || obj.eq_ignore_ascii_case("group")
            {
                Objects::Global
            } else {
                Objects::Var(obj.to_string())
            };
            (o, opt, att)
        }
    };
    let (att, att_opt) = optional(att);
    let new = r.new.rsplit_once('@').map_or(r.new.as_str(), |(_, n)| n);
    if att.is_empty() || new.is_empty() {
        return Err(Error::option(
            "-a",
            format!("\"{},{}\" is not [var@]old_name,new_name", r.old, r.new),
        ));
    }
    names::check("attribute", new)?;
    // The attribute lists to look in: Err(g) = group g's (the root's: the global
    // attributes), Ok(i) = variable i's.
    let targets: Vec<std::result::Result<usize, usize>> = match &objects {
        Objects::All => (0..m.groups.len())
            .map(Err)
            .chain((0..m.vars.len()).map(Ok))
            .collect(),
        Objects::Global => vec![Err(0)],
        // Every variable of that name (a path: that one); failing that, the groups of
        // that name or path (`-a /model@source,src`).
        Objects::Var(v) => {
            let vars: Vec<_> = (0..orig.vars.len())
                .filter(|&i| matches(v, &orig.vars[i].name, &orig.var_path(i)))
                .map(Ok)
                .collect();
            let found = if vars.is_empty() {
                (1..orig.groups.len())
                    .filter(|&g| matches(v, &orig.groups[g].name, &orig.group_path(g)))
                    .map(Err)
                    .collect()
            } else {
                vars
            };
            match found {
                found if !found.is_empty() => found,
                _ if obj_opt => {
                    notes.push(format!(
                        "INFO optional variable {v} is not in {path}; skipped"
                    ));
                    return Ok(());
                }
                _ => {
                    return Err(Error::msg(format!(
                        "variable {v} is not in {path} (prefix it with . if it may be absent: \
                     -a .{v}@{att},{new})"
                    )))
                }
            }
        }
    };
    for t in targets {
        let (owner, attrs): (String, &mut Vec<Attr>) = match t {
            Err(0) => ("the global attributes".into(), &mut m.attrs),
            Err(g) => (
                format!("the attributes of group {}", m.group_path(g)),
                &mut m.groups[g].attrs,
            ),
            Ok(i) => (format!("variable {}", m.var_ref(i)), &mut m.vars[i].attrs),
        };
        let Some(k) = attrs.iter().position(|a| a.name == att) else {
            // Without `@` (and without `.`), every group and variable must have it,
            // as NCO 5.1.4 requires.
            if att_opt {
                continue;
            }
            return Err(Error::msg(format!(
                "attribute {att} is not in {owner} of {path} (prefix it with . if it may be \
                 absent, or name the variable: var@{att}, global@{att})"
            )));
        };
        if attrs.iter().any(|a| a.name == new) {
            return Err(Error::msg(format!(
                "cannot rename attribute {att} of {owner} to {new}: it already has an \
                 attribute of that name"
            )));
        }
        attrs[k].name = new.to_string();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, Format, Storage, Var};
    use crate::types::NcType;

    fn meta() -> Meta {
        let mut m = Meta::new(Format::Classic);
        m.dims.push(Dim {
            name: "lat".into(),
            len: 2,
            unlimited: false,
            group: 0,
        });
        for n in ["lat", "t"] {
            m.vars.push(Var {
                name: n.into(),
                ty: NcType::Float,
                dims: vec![0],
                attrs: vec![Attr::text("units", "u")],
                storage: Storage::default(),
                group: 0,
            });
        }
        m.attrs.push(Attr::text("title", "x"));
        m
    }

    fn run(args: &[(Kind, &str)]) -> Result<(Meta, Vec<String>)> {
        let r: Vec<Rename> = args
            .iter()
            .map(|(k, a)| Rename::parse(*k, a).unwrap())
            .collect();
        apply(&meta(), &r, "f.nc")
    }

    #[test]
    fn parse_splits_at_the_first_comma_and_drops_paths() {
        let r = Rename::parse(Kind::Variable, "/lat,/g/latitude").unwrap();
        assert_eq!((r.old.as_str(), r.new.as_str()), ("/lat", "latitude"));
        assert!(Rename::parse(Kind::Variable, "lat").is_err());
        assert!(Rename::parse(Kind::Variable, ",x").is_err());
        assert!(Rename::parse(Kind::Variable, "x,").is_err());
    }

    #[test]
    fn old_names_are_the_files_own() {
        let e = run(&[(Kind::Variable, "lat,x"), (Kind::Variable, "lat,y")]).unwrap_err();
        assert!(e.to_string().contains("renamed twice"), "{e}");
        assert!(run(&[(Kind::Variable, "lat,x"), (Kind::Variable, "x,y")]).is_err());
        // Dimension and variable together.
        let (m, _) = run(&[(Kind::Dimension, "lat,la"), (Kind::Variable, "lat,la")]).unwrap();
        assert!(m.is_coord_var(&m.vars[0]));
        let e = run(&[(Kind::Variable, "lat,t")]).unwrap_err().to_string();
        assert!(e.contains("already has a variable"), "{e}");
        let e = run(&[(Kind::Variable, "lat,lat")]).unwrap_err().to_string();
        assert!(e.contains("already has a variable"), "{e}");
    }

    #[test]
    fn optional_names_are_skipped_with_a_note() {
        let (_, notes) = run(&[(Kind::Variable, ".nope,x"), (Kind::Group, ".g,h")]).unwrap();
        assert_eq!(notes.len(), 2);
        let e = run(&[(Kind::Dimension, "nope,x")]).unwrap_err().to_string();
        assert!(e.contains("dimension nope is not in f.nc"), "{e}");
    }

    #[test]
    fn attributes_everywhere_or_in_one_object() {
        // Without @ every object must have it unless optional.
        assert!(run(&[(Kind::Attribute, "units,U")]).is_err());
        let (m, _) = run(&[(Kind::Attribute, ".units,U")]).unwrap();
        assert!(m.vars.iter().all(|v| v.attr("U").is_some()));
        let (m, _) = run(&[(Kind::Attribute, "lat@units,t@U")]).unwrap();
        assert!(m.vars[0].attr("U").is_some() && m.vars[1].attr("units").is_some());
        let (m, _) = run(&[(Kind::Attribute, "global@title,T")]).unwrap();
        assert!(m.attr("T").is_some());
        let (m, _) = run(&[(Kind::Attribute, "@title,T")]).unwrap();
        assert!(m.attr("T").is_some());
        assert!(run(&[(Kind::Attribute, "nope@units,U")]).is_err());
        assert!(run(&[(Kind::Attribute, ".nope@units,U")]).is_ok());
        assert!(run(&[(Kind::Attribute, "lat@.nope,U")]).is_ok());
        assert!(run(&[(Kind::Attribute, "lat@nope,U")]).is_err());
        // Objects by their original names, attributes by their current ones.
        let (m, _) = run(&[
            (Kind::Variable, "lat,x"),
            (Kind::Attribute, "lat@units,U"),
            (Kind::Attribute, "lat@U,V"),
        ])
        .unwrap();
        assert!(m.vars[0].attr("V").is_some());
        let e = run(&[(Kind::Attribute, "lat@units,units")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("already has an attribute"), "{e}");
    }
}
