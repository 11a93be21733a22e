//! The engine's modules use each other in one direction only: no module reaches,
//! through `crate::` paths in its code (comments and doc links left out), a module
//! that reaches it back. A failure names the cycle.

use std::collections::{BTreeMap, BTreeSet};

use nco_tests::layering::{crate_refs, rust_files};

/// The modules each source file of `src/` names in code as `crate::<module>` (the
/// crate root's items, `crate::Error`, left out).
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for (rel, text) in rust_files(&dir) {
        let name = rel.strip_suffix(".rs").unwrap_or(&rel).to_string();
        let used = crate_refs(&text)
            .into_iter()
            .map(|(_, m)| m)
            .filter(|m| m.starts_with(|c: char| c.is_ascii_lowercase()) && *m != name)
            .collect();
        out.insert(name, used);
    }
    out
}

#[test]
fn modules_use_each_other_in_one_direction() {
    let graph = uses();
    assert!(graph.contains_key("locate") && graph.contains_key("layout"));
    // Depth-first search from every module; a module met again on the current path
    // closes a cycle.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(i) = path.iter().position(|p| p == m) {
            panic!("modules in a cycle: {} -> {m}", path[i..].join(" -> "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m.to_string());
        for n in graph.get(m).into_iter().flatten() {
            visit(n, graph, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
    // The two that used each other: the chunk index walk needs no storage description.
    assert!(graph["locate"].is_empty(), "{:?}", graph["locate"]);
}
