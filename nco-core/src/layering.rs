//! The layers of this crate go one way: a file under `src/<layer>/` may use its own
//! layer, the layers below it and the lower crates (re-exported at the crate root:
//! `crate::dataset`, `crate::types`...), never a layer above. The crate graph keeps
//! nco-base, nco-kernels and nco-io below this crate; this test keeps the folders in
//! order. Run it with `cargo test -p nco-core layering`; a failure names the file and
//! line of each upward use.

use std::path::Path;

use nco_tests::layering::{crate_refs, rust_files};

/// This crate's layers, lowest first; each is a folder `src/<layer>/`.
const LAYERS: &[&str] = &["rules", "plan", "cli"];

/// Files at the top of `src/`, which declare the layers and re-export them.
const ROOT_FILES: &[&str] = &["lib.rs", "layering.rs"];

/// The layer of module `m` named as `crate::m`: a layer itself, or a module of one
/// (re-exported at the root, `crate::hyperslab`); `None` for the lower crates'
/// modules and the root's other items (below every layer).
fn layer_of(m: &str, files: &[(String, String)]) -> Option<usize> {
    LAYERS.iter().position(|l| *l == m).or_else(|| {
        LAYERS.iter().position(|l| {
            files
                .iter()
                .any(|(f, _)| *f == format!("{l}/{m}.rs") || f.starts_with(&format!("{l}/{m}/")))
        })
    })
}

/// Every use of a layer above the user's, as `src/file:line: message`; also files
/// outside the layer folders.
fn violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, text) in files {
        if ROOT_FILES.contains(&rel.as_str()) {
            continue;
        }
        let top = rel.split('/').next().unwrap_or_default();
        let Some(user) = LAYERS.iter().position(|l| *l == top) else {
            bad.push(format!(
                "src/{rel}: not in a layer folder (layers, lowest first: {})",
                LAYERS.join(", ")
            ));
            continue;
        };
        for (line, m) in crate_refs(text) {
            if let Some(used) = layer_of(&m, files).filter(|&u| u > user) {
                bad.push(format!(
                    "src/{rel}:{line}: {} uses crate::{m}, of layer {}, which is above it \
                     (layers, lowest first: {})",
                    LAYERS[user],
                    LAYERS[used],
                    LAYERS.join(", ")
                ));
            }
        }
    }
    bad
}

#[test]
fn layers_use_only_themselves_and_the_layers_below() {
    let files = rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for l in LAYERS {
        assert!(
            files.iter().any(|(f, _)| f.starts_with(&format!("{l}/"))),
            "LAYERS lists {l}, which has no folder src/{l}/"
        );
    }
    let bad = violations(&files);
    assert!(bad.is_empty(), "upward uses:\n{}", bad.join("\n"));
}

#[test]
fn an_upward_use_is_reported_with_its_file_and_line() {
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let files = vec![
        file(
            "cli/mod.rs",
            "use crate::rules::hyperslab;\nuse crate::plan::extract;",
        ),
        file(
            "plan/extract.rs",
            "use crate::{dataset::Dataset, hyperslab};",
        ),
        file("rules/hyperslab.rs", "use crate::model::Meta;"),
        file(
            "rules/multifile.rs",
            "use crate::rules::hyperslab;\n\nfn f() { crate::cli::with_prefix(None, \"x\"); }",
        ),
        file("rules/stations.rs", "use crate::{fill, extract::Plan};"),
        file("stray.rs", ""),
    ];
    let bad = violations(&files);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].starts_with("src/rules/multifile.rs:3: rules uses crate::cli, of layer cli"));
    assert!(bad[1].starts_with("src/rules/stations.rs:1: rules uses crate::extract, of layer plan"));
    assert!(bad[2].starts_with("src/stray.rs: not in a layer folder"));
}
