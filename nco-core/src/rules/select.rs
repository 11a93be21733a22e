//! Variable selection: `-v`/`-x` lists with regular expressions, `-C`/`-c`, and the
//! coordinate and CF-associated variables NCO carries along (NCO manual, "Subsetting
//! Files", "Subsetting Coordinate Variables", "CF Conventions").
//!
//! Rules, checked against NCO 5.1.4:
//! * a list item without regular-expression characters must name a variable (else an
//!   error); an item with them is a POSIX-style regular expression searched in each
//!   name (`^three_*` matches `three`) and may match nothing;
//! * unless `-C`, the coordinate variables of every extracted variable's dimensions
//!   are added, and so are the variables named by the CF attributes `coordinates`,
//!   `bounds`, `climatology`, `formula_terms`, `ancillary_variables`, `cell_measures`
//!   and `grid_mapping` (`--no_frm_trm`, `--no_cll_msr` switch two off), repeatedly
//!   until nothing new is added; an extracted `lev` also brings its interface twin
//!   `ilev` as NCO 5 does;
//! * `-c` adds every coordinate variable of the file; `-c` without `-v` extracts the
//!   coordinates (and what they bring) only; `-c -x -v` of a coordinate is an error
//!   unless `-C`;
//! * `-x` excludes the list; a plain name that is absent excludes nothing (no error);
//!   excluding a variable that another extracted variable needs as coordinate or
//!   CF-associated variable is an error unless `-C`;
//! * an empty item (`-v ''`, `-v a,,b`, `-v a,`) is an error;
//! * the result is in alphabetical (byte) order of full paths, as NCO writes and
//!   prints it (for a file without groups: of names);
//! * in files with groups, items name variables by short name or path and `-g`
//!   restricts the list to some groups ([`crate::rules::groups`]); a coordinate is the
//!   variable of its dimension's group, and names in CF attributes are looked up from
//!   the variable's group outwards.

use crate::error::{Error, Result};
use crate::model::Meta;
use crate::rules::groups::{select_groups, Item};
use crate::types::NcType;

/// Whether a list item is a regular expression (defined with the other naming rules in
/// [`crate::rules::groups`]).
pub use crate::rules::groups::is_regex;

/// What the user asked for.
#[derive(Clone, Debug, Default)]
pub struct SelectArgs {
    /// `-v` list items (names or regular expressions); empty = all variables.
    pub vars: Vec<String>,
    /// `-x`: exclude the list instead.
    pub exclude: bool,
    /// `-C`: do not add coordinate or associated variables.
    pub no_coords: bool,
    /// `-c`: add all coordinate variables.
    pub all_coords: bool,
    /// `--no_frm_trm`: do not follow `formula_terms`.
    pub no_formula_terms: bool,
    /// `--no_cll_msr`: do not follow `cell_measures`.
    pub no_cell_measures: bool,
    /// `-g` list items (group names or regular expressions); empty = all groups.
    pub groups: Vec<String>,
    /// `--unn`: with `-g` and `-v`, the union of the groups' variables and the listed
    /// variables (of any group), instead of the listed variables of the groups.
    pub union: bool,
    /// Extract the variables CF attributes name even in a file that does not
    /// [`declares_cf`] (`-X`, whose boxes need the auxiliary coordinates).
    pub cf_always: bool,
}

/// Names referenced by one CF attribute value.
fn referenced(attr: &str, text: &str) -> Vec<String> {
    match attr {
        // "a: hyam b: hybm" / "area: areacella": every token after a "key:" token.
        "formula_terms" | "cell_measures" => text
            .split_whitespace()
            .filter(|t| !t.ends_with(':'))
            .map(str::to_string)
            .collect(),
        // "crs" or "crs: lat lon": names only.
        "grid_mapping" => text
            .split_whitespace()
            .filter(|t| !t.ends_with(':'))
            .map(str::to_string)
            .collect(),
        _ => text.split_whitespace().map(str::to_string).collect(),
    }
}

/// Coordinate variables of `var`'s dimensions, as indices.
pub fn coordinates_of(meta: &Meta, var: usize) -> Vec<usize> {
    meta.vars[var]
        .dims
        .iter()
        .filter_map(|&d| meta.coord_var(d))
        .collect()
}

/// True when the file's `Conventions` (or `conventions`) global attribute, as text
/// (NC_CHAR), declares CF 1.x: it holds `CF-1.` or `CF1.` (`CF-1.8`,
/// `ACDD-1.3, CF-1.6`, `CF1.6`). NCO 5.1.4 extracts the variables CF attributes name
/// only then (checked by running its ncks: `CF`, `CF-1`, `cf-1.6`, `CF/1.6`,
/// `COARDS`, an attribute named `CONVENTIONS` and an NC_STRING one do not count).
pub fn declares_cf(meta: &Meta) -> bool {
    meta.attrs
        .iter()
        .filter(|a| a.name == "Conventions" || a.name == "conventions")
        .filter(|a| matches!(a.value, crate::types::Values::Char(_)))
        .filter_map(|a| a.value.as_text())
        .any(|t| t.contains("CF-1.") || t.contains("CF1."))
}

/// Variables named by `var`'s CF attributes (only in a file that [`declares_cf`]),
/// and `ilev` for `lev`, as indices.
pub fn cf_associated(meta: &Meta, var: usize, args: &SelectArgs) -> Vec<usize> {
    let v = &meta.vars[var];
    let mut out = Vec::new();
    if v.name == "lev" {
        out.extend(meta.var_in_scope(v.group, "ilev"));
    }
    if !(args.cf_always || declares_cf(meta)) {
        return out;
    }
    let mut attrs = vec![
        "coordinates",
        "bounds",
        "climatology",
        "ancillary_variables",
        "grid_mapping",
    ];
    if !args.no_formula_terms {
        attrs.push("formula_terms");
    }
    if !args.no_cell_measures {
        attrs.push("cell_measures");
    }
    for a in attrs {
        if let Some(t) = v.attr_text(a) {
            out.extend(
                referenced(a, &t)
                    .iter()
                    .filter_map(|n| meta.var_in_scope(v.group, n)),
            );
        }
    }
    out
}

/// Everything `var` brings along: its coordinates and CF-associated variables.
pub fn associated(meta: &Meta, var: usize, args: &SelectArgs) -> Vec<usize> {
    let mut out = coordinates_of(meta, var);
    out.extend(cf_associated(meta, var, args));
    out
}

/// The groups an output of the selection `args` holds even when none of their
/// variables is written: without `-v`, every group `-g` selects (all groups without
/// `-g`), as NCO 5.1.4 copies, prints and computes (`ncks`, `ncra` keep an input
/// group that has attributes only); none with `-v`, or with `-x -g`.
///
/// Errors: a `-g` item that selects no group.
pub fn whole_groups(meta: &Meta, args: &SelectArgs) -> Result<Vec<usize>> {
    // With -v, or -x -g (which excludes the groups), only the written variables'
    // groups.
    if !args.vars.is_empty() || (args.exclude && !args.groups.is_empty()) {
        return Ok(Vec::new());
    }
    let keep = crate::rules::groups::select_groups(meta, &args.groups)?;
    Ok((0..keep.len()).filter(|&g| keep[g]).collect())
}

/// [`select`] in the input file's order, the order NCO 5.1.4's ncwa, ncra, ncrcat,
/// nces, ncecat, ncpdq and ncflint write (its ncks and ncbo alphabetise; checked with
/// each).
///
/// Errors: as [`select`].
pub fn select_input_order(meta: &Meta, args: &SelectArgs) -> Result<Vec<usize>> {
    let mut vars = select(meta, args)?;
    vars.sort_unstable();
    Ok(vars)
}

/// NCO's refusal of a run with nothing to compute: at least one of the selected
/// variables `vars` must be numeric (not NC_CHAR or NC_STRING) and lie on one of the
/// dimensions `dims` (ncra and ncrcat: the record dimension; ncwa: the averaged ones).
/// `what` says what was looked for, for the message.
///
/// Errors: none qualifies, "no variables fit criteria for processing" (NCO 5.1.4's
/// words; it exits 1 there too, checked with its ncra, ncrcat and ncwa).
pub fn require_processed(meta: &Meta, vars: &[usize], dims: &[usize], what: &str) -> Result<()> {
    let fits = vars.iter().any(|&i| {
        let v = &meta.vars[i];
        !matches!(v.ty, NcType::Char | NcType::Str) && v.dims.iter().any(|d| dims.contains(d))
    });
    if fits {
        return Ok(());
    }
    Err(Error::msg(format!(
        "no variables fit criteria for processing: the extraction list has no {what}"
    )))
}

/// Resolve the extraction list to variable indices in alphabetical order (of full
/// paths).
///
/// Errors: a plain name that is not in the file (or not in the `-g` groups); a `-g`
/// item that matches no group; `-x` of a variable others need without `-C` (the
/// messages name the variable or group).
pub fn select(meta: &Meta, args: &SelectArgs) -> Result<Vec<usize>> {
    let n = meta.vars.len();
    let in_groups = select_groups(meta, &args.groups)?;
    let grouped: Vec<bool> = meta.vars.iter().map(|v| in_groups[v.group]).collect();
    // --unn (NCO 5.1.4, measured): `-g G -v V` keeps V in every group and every
    // variable of G; with -x, everything else.
    let union = args.union && !args.vars.is_empty() && !args.groups.is_empty();
    let allowed = if union {
        vec![true; n]
    } else {
        grouped.clone()
    };
    let mut listed = vec![false; n];
    for text in &args.vars {
        let item = Item::parse("-v", text)?;
        let mut any = false;
        for (i, v) in meta.vars.iter().enumerate() {
            if (allowed[i] || item.is_path()) && item.matches(&v.name, &meta.var_path(i)) {
                listed[i] = true;
                any = true;
            }
        }
        // With -x an absent name excludes nothing (NCO: scripts run one exclusion
        // over files that differ).
        if !any && !item.is_regex() && !args.exclude {
            return Err(Error::var(
                text,
                "is not in the input file (-v names an unknown variable)",
            ));
        }
    }
    let mut keep: Vec<bool> = if args.vars.is_empty() && args.exclude && !args.groups.is_empty() {
        // `-x -g G`: every variable outside the groups G (NCO 5.1.4).
        allowed.iter().map(|&a| !a).collect()
    } else if args.vars.is_empty() {
        // `-c` alone: the coordinates only (and, below, what they bring).
        allowed
            .iter()
            .map(|&a| a && !args.exclude && !args.all_coords)
            .collect()
    } else if args.exclude && union {
        // `-x -g G -v V --unn`: every variable but the union (NCO 5.1.4, measured).
        (0..n).map(|i| !(listed[i] || grouped[i])).collect()
    } else if args.exclude {
        // `-g G -x -v V` excludes the variables V of the groups G and keeps every
        // other variable, in any group (NCO 5.1.4).
        (0..n).map(|i| !listed[i]).collect()
    } else if union {
        (0..n).map(|i| listed[i] || grouped[i]).collect()
    } else {
        listed.clone()
    };
    if args.all_coords {
        for (i, v) in meta.vars.iter().enumerate() {
            if meta.is_coord_var(v) {
                if args.exclude && listed[i] && !args.no_coords {
                    return Err(Error::var(
                        &v.name,
                        "cannot be excluded: it is a coordinate variable and -c extracts \
                         every one; add -C to exclude it",
                    ));
                }
                keep[i] = true;
            }
        }
    }
    if !args.no_coords {
        // The coordinates of the requested variables, then the closure over CF
        // attributes (which does not add the coordinates of what it pulls in: NCO
        // extracts PS for lev's formula_terms without PS's time coordinate).
        let requested: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
        let add = |keep: &mut Vec<bool>, from: usize, a: usize| -> Result<bool> {
            if keep[a] {
                return Ok(false);
            }
            if args.exclude && listed[a] {
                return Err(Error::var(
                    &meta.vars[a].name,
                    format!(
                        "cannot be excluded: it is a coordinate or CF-associated variable of {}; \
                         add -C to exclude it",
                        meta.vars[from].name
                    ),
                ));
            }
            keep[a] = true;
            Ok(true)
        };
        for &i in &requested {
            for c in coordinates_of(meta, i) {
                add(&mut keep, i, c)?;
            }
        }
        let mut changed = true;
        while changed {
            changed = false;
            for i in 0..n {
                if keep[i] {
                    for a in cf_associated(meta, i, args) {
                        changed |= add(&mut keep, i, a)?;
                    }
                }
            }
        }
    }
    let mut out: Vec<usize> = (0..n).filter(|&i| keep[i]).collect();
    if meta.has_groups() {
        out.sort_by_cached_key(|&a| meta.var_path(a));
    } else {
        out.sort_by(|&a, &b| {
            meta.vars[a]
                .name
                .as_bytes()
                .cmp(meta.vars[b].name.as_bytes())
        });
    }
    Ok(out)
}

/// ncbo's extraction list: [`select`] in the first file, less the variables the second
/// file (named `second_name` in messages) lacks. NCO 5.1.4 skips those, so one command
/// runs over pairs of files with different extra variables.
///
/// Errors: those of [`select`]; a plain `-v` name (without `-x`) that is not in the
/// second file, as in NCO.
pub fn select_shared(
    first: &Meta,
    second: &Meta,
    second_name: &str,
    args: &SelectArgs,
) -> Result<Vec<usize>> {
    let in_second = |item: &Item| {
        (0..second.vars.len()).any(|i| item.matches(&second.vars[i].name, &second.var_path(i)))
    };
    if !args.exclude {
        for text in &args.vars {
            let item = Item::parse("-v", text)?;
            if !item.is_regex() && !in_second(&item) {
                return Err(Error::var(
                    text,
                    format!("is not in the second input file {second_name}"),
                ));
            }
        }
    }
    let mut vars = select(first, args)?;
    let paths: std::collections::HashSet<String> =
        (0..second.vars.len()).map(|i| second.var_path(i)).collect();
    vars.retain(|&v| paths.contains(&first.var_path(v)));
    Ok(vars)
}

/// Split a comma-separated `-v` or `-g` argument into items, keeping empty ones
/// (`-v ''`, `-v a,,b`, `-v a,`), which [`select`] refuses as NCO does.
pub fn split_items(s: &str) -> Vec<String> {
    // A comma inside braces belongs to a counted repetition (`Q[0-9]{2,}`, `{2,3}`),
    // as NCO 5.1.4 reads it; inside brackets it still separates (`Q[,1]` is two items
    // there too).
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(s[start..].trim().to_string());
    items
}

/// Split a comma-separated list into items, dropping empty ones.
pub fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// Remove from every `coordinates` attribute of `meta` the names of variables `meta`
/// does not have (CF §5: the attribute names variables of the file), dropping an
/// attribute left empty. For outputs whose variables were subset after the attributes
/// were copied (ncwa `-C -v`); NCO 5.1.4 leaves such names dangling.
pub fn prune_coordinates(meta: &mut Meta) {
    let names: std::collections::HashSet<String> =
        meta.vars.iter().map(|v| v.name.clone()).collect();
    for v in &mut meta.vars {
        let Some(text) = v.attr_text("coordinates") else {
            continue;
        };
        let kept: Vec<&str> = text
            .split_whitespace()
            .filter(|w| names.contains(*w))
            .collect();
        if kept.len() == text.split_whitespace().count() {
            continue;
        }
        if kept.is_empty() {
            v.remove_attr("coordinates");
        } else {
            v.set_attr(crate::model::Attr::text("coordinates", &kept.join(" ")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attr, Dim, Format, Storage, Var};
    use crate::types::NcType;

    #[test]
    fn commas_of_counted_repetitions_do_not_split_items() {
        assert_eq!(split_items("Q[0-9]{2,3},one"), ["Q[0-9]{2,3}", "one"]);
        assert_eq!(split_items("a{2,}"), ["a{2,}"]);
        assert_eq!(split_items("a,,b"), ["a", "", "b"]);
        assert_eq!(
            split_items("Q[,1]"),
            ["Q[", "1]"],
            "brackets do not protect commas (NCO)"
        );
        assert_eq!(split_items(""), [""]);
    }

    fn meta() -> Meta {
        let mut m = Meta::new(Format::Classic);
        m.dims.push(Dim {
            name: "lev".into(),
            len: 3,
            unlimited: false,
            group: 0,
        });
        let var = |name: &str, dims: Vec<usize>, attrs: Vec<Attr>| Var {
            name: name.into(),
            ty: NcType::Float,
            dims,
            attrs,
            storage: Storage::default(),
            group: 0,
        };
        m.vars.push(var(
            "lev",
            vec![0],
            vec![
                Attr::text("bounds", "lev_bnd"),
                Attr::text("formula_terms", "a: hyam p0: P0"),
            ],
        ));
        m.vars.push(var("lev_bnd", vec![0], vec![]));
        m.vars.push(var("hyam", vec![0], vec![]));
        m.vars.push(var("P0", vec![], vec![]));
        m.vars.push(var("three", vec![0], vec![]));
        m.vars.push(var("three_x", vec![], vec![]));
        m
    }

    fn names(m: &Meta, ids: &[usize]) -> Vec<String> {
        ids.iter().map(|&i| m.vars[i].name.clone()).collect()
    }

    #[test]
    fn coordinates_attributes_name_only_variables_present() {
        let mut m = meta();
        m.vars[4].set_attr(Attr::text("coordinates", "P0 height"));
        m.vars[5].set_attr(Attr::text("coordinates", "gone  away"));
        m.vars[2].set_attr(Attr::text("coordinates", "lev P0"));
        prune_coordinates(&mut m);
        assert_eq!(m.vars[4].attr_text("coordinates").as_deref(), Some("P0"));
        assert!(m.vars[5].attr("coordinates").is_none());
        assert_eq!(
            m.vars[2].attr_text("coordinates").as_deref(),
            Some("lev P0")
        );
    }

    #[test]
    fn coordinates_and_cf_associates_follow() {
        let mut m = meta();
        // Without CF Conventions only the dimensions' coordinates follow (NCO 5.1.4).
        let a = SelectArgs {
            vars: vec!["three".into()],
            ..Default::default()
        };
        assert_eq!(names(&m, &select(&m, &a).unwrap()), ["lev", "three"]);
        let x = SelectArgs {
            cf_always: true,
            ..a.clone()
        };
        assert_eq!(
            names(&m, &select(&m, &x).unwrap()),
            ["P0", "hyam", "lev", "lev_bnd", "three"]
        );
        for (text, cf) in [
            ("CF-1.8", true),
            ("ACDD-1.3, CF-1.6", true),
            ("CF1.6", true),
            ("CF", false),
            ("CF-1", false),
            ("cf-1.6", false),
            ("COARDS", false),
        ] {
            m.attrs = vec![Attr::text("Conventions", text)];
            assert_eq!(declares_cf(&m), cf, "{text}");
        }
        m.attrs = vec![Attr::text("conventions", "CF-1.6")];
        assert!(declares_cf(&m), "the name in lower case too");
        m.attrs = vec![Attr::text("CONVENTIONS", "CF-1.6")];
        assert!(!declares_cf(&m), "not in other cases");
        m.attrs = vec![Attr {
            name: "Conventions".into(),
            value: crate::types::Values::Str(vec!["CF-1.6".into()]),
        }];
        assert!(!declares_cf(&m), "not as NC_STRING");
        m.attrs = vec![Attr::text("conventions", "CF-1.6")];
        let a = SelectArgs {
            vars: vec!["three".into()],
            ..Default::default()
        };
        assert_eq!(
            names(&m, &select(&m, &a).unwrap()),
            ["P0", "hyam", "lev", "lev_bnd", "three"]
        );
        let a = SelectArgs {
            vars: vec!["three".into()],
            no_coords: true,
            ..Default::default()
        };
        assert_eq!(names(&m, &select(&m, &a).unwrap()), ["three"]);
    }

    #[test]
    fn regex_exclude_and_errors() {
        let m = meta();
        let a = SelectArgs {
            vars: vec!["^three_*".into()],
            no_coords: true,
            ..Default::default()
        };
        assert_eq!(names(&m, &select(&m, &a).unwrap()), ["three", "three_x"]);
        let a = SelectArgs {
            vars: vec!["nosuch".into()],
            ..Default::default()
        };
        assert!(select(&m, &a).unwrap_err().to_string().contains("nosuch"));
        let a = SelectArgs {
            vars: vec!["lev".into()],
            exclude: true,
            ..Default::default()
        };
        assert!(select(&m, &a).is_err());
        let a = SelectArgs {
            vars: vec!["lev".into()],
            exclude: true,
            no_coords: true,
            ..Default::default()
        };
        assert!(!names(&m, &select(&m, &a).unwrap()).contains(&"lev".to_string()));
    }
}
