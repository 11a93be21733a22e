//! The engine's modules use each other in one direction only: no module reaches,
//! through `crate::` paths in its code (comments and doc links left out), a module
//! that reaches it back. A failure names the cycle.

use std::collections::{BTreeMap, BTreeSet};

/// The modules each source file of `src/` names in code as `crate::<module>`.
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("read src/") {
        let path = entry.expect("a directory entry").path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".rs"))
            .map(str::to_string)
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path).expect("read a source file");
        let mut used = BTreeSet::new();
        for line in text.lines() {
            // Code only: what comes before a line comment (doc links included).
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let m: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // `crate::{Error, Result}` and `crate::Error` name lib.rs's items.
                let is_module = m.chars().next().is_some_and(|c| c.is_ascii_lowercase());
                if is_module && m != name {
                    used.insert(m);
                }
            }
        }
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
