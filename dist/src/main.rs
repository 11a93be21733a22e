//! nco-dist: what installing nco-rs puts on a machine besides the operators, generated
//! from the operators' clap definitions (each operator crate's `command()`): a man page
//! per installed name (`clap_mangen`) and bash, zsh and fish completions
//! (`clap_complete`). `scripts/install.sh` and `scripts/deb.sh` (the Debian package)
//! call it.
//!
//! ```text
//! nco-dist names            the installed names, one a line
//! nco-dist stage DIR        DIR/bin (the operators, copied from beside nco-dist),
//!                           DIR/man/NAME.1, DIR/bash/NAME, DIR/zsh/_NAME,
//!                           DIR/fish/NAME.fish
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap_complete::Shell;

/// Every installed name and the clap command it runs: each operator and each alias
/// (an alias is the same program under another name, as NCO installs them).
pub const OPERATORS: &[(&str, fn() -> clap::Command)] = &[
    ("ncks", ncks::command),
    ("ncra", ncra::command),
    ("ncrcat", ncra::command),
    ("nces", ncea::command),
    ("ncea", ncea::command),
    ("ncecat", ncea::command),
    ("ncwa", ncwa::command),
    ("ncbo", ncbo::command),
    ("ncdiff", ncbo::command),
    ("ncadd", ncbo::command),
    ("ncsub", ncbo::command),
    ("ncmult", ncbo::command),
    ("ncdivide", ncbo::command),
    ("ncpdq", ncpdq::command),
    ("ncpack", ncpdq::command),
    ("ncunpack", ncpdq::command),
    ("ncap2", ncap::command),
    ("ncap", ncap::command),
    ("ncrename", ncrename::command),
    ("ncatted", ncatted::command),
    ("ncflint", ncflint::command),
];

/// The clap command of installed name `name`, named so (man page title, usage line,
/// completion function).
fn command_for(name: &'static str, make: fn() -> clap::Command) -> clap::Command {
    make().name(name).bin_name(name).display_name(name)
}

/// The man page of `name` (roff), with the operator's examples and a note on where NCO's
/// own documentation is.
fn man_page(name: &'static str, make: fn() -> clap::Command) -> std::io::Result<Vec<u8>> {
    let cmd = command_for(name, make);
    let man = clap_mangen::Man::new(cmd)
        .section("1")
        .source(format!("nco-rs {}", env!("CARGO_PKG_VERSION")))
        .manual("nco-rs");
    let mut out = Vec::new();
    man.render(&mut out)?;
    out.extend_from_slice(
        b".SH \"SEE ALSO\"\nThe NCO manual, http://nco.sf.net/nco.html: nco-rs takes NCO 5.1.4's options; \
the README of nco-rs lists where it differs on purpose.\n",
    );
    Ok(out)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

fn mkdir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Write everything an install needs into `dir` (see the crate docs).
fn stage(dir: &Path) -> Result<(), String> {
    let here = std::env::current_exe()
        .map_err(|e| format!("cannot find nco-dist's own folder: {e}"))?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let sub = |s: &str| dir.join(s);
    for s in ["bin", "man", "bash", "zsh", "fish"] {
        mkdir(&sub(s))?;
    }
    for &(name, make) in OPERATORS {
        let exe = here.join(name);
        std::fs::copy(&exe, sub("bin").join(name)).map_err(|e| {
            format!(
                "{}: {e} (build the operators first: cargo build --release --workspace --bins)",
                exe.display()
            )
        })?;
        let page = man_page(name, make).map_err(|e| format!("man page of {name}: {e}"))?;
        write(&sub("man").join(format!("{name}.1")), &page)?;
        for (shell, folder, file) in [
            (Shell::Bash, "bash", name.to_string()),
            (Shell::Zsh, "zsh", format!("_{name}")),
            (Shell::Fish, "fish", format!("{name}.fish")),
        ] {
            let mut cmd = command_for(name, make);
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, name, &mut buf);
            write(&sub(folder).join(file), &buf)?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["names"] => {
            for (name, _) in OPERATORS {
                println!("{name}");
            }
            Ok(())
        }
        ["stage", dir] => stage(Path::new(dir)),
        _ => Err("usage: nco-dist names | nco-dist stage DIR".to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nco-dist: ERROR {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_man_page_with_its_examples_and_completions() {
        for &(name, make) in OPERATORS {
            let page = String::from_utf8(man_page(name, make).unwrap()).unwrap();
            assert!(page.contains(&format!(".TH {name} 1")), "{name}: {page}");
            assert!(page.contains("Examples:"), "{name} has no examples");
            assert!(page.contains("\\-O"), "{name}: options missing");
            let mut cmd = command_for(name, make);
            let mut buf = Vec::new();
            clap_complete::generate(Shell::Bash, &mut cmd, name, &mut buf);
            let text = String::from_utf8(buf).unwrap();
            assert!(
                text.contains(&format!("complete -F _{name}")),
                "{name}: {text}"
            );
            assert!(text.contains("--rec_apn") == (name == "ncra" || name == "ncrcat"));
        }
    }

    /// The binaries of the workspace's packages, read from their manifests: each
    /// `[[bin]]` name, each `src/bin/NAME.rs`, and the package's own name for a
    /// `src/main.rs` no `[[bin]]` names.
    fn workspace_binaries() -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |p: &Path| {
            std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        };
        let quoted = |line: &str| line.split('"').nth(1).map(str::to_string);
        let top = read(&root.join("Cargo.toml"));
        let members = top
            .lines()
            .find(|l| l.trim_start().starts_with("members"))
            .expect("members in the workspace's Cargo.toml");
        let mut bins = Vec::new();
        for member in members.split('"').skip(1).step_by(2) {
            let dir = root.join(member);
            let manifest = read(&dir.join("Cargo.toml"));
            let mut section = "";
            let mut package = None;
            let mut main_named = false;
            for line in manifest.lines().map(str::trim) {
                if line.starts_with('[') {
                    section = line;
                } else if section == "[package]" && line.starts_with("name") {
                    package = quoted(line);
                } else if section == "[[bin]]" && line.starts_with("name") {
                    bins.extend(quoted(line));
                } else if section == "[[bin]]" && line.starts_with("path") {
                    main_named |= quoted(line).as_deref() == Some("src/main.rs");
                }
            }
            if dir.join("src/main.rs").is_file() && !main_named {
                bins.extend(package);
            }
            if let Ok(entries) = std::fs::read_dir(dir.join("src/bin")) {
                for e in entries.flatten() {
                    let path = e.path();
                    if path.extension().is_some_and(|x| x == "rs") {
                        bins.extend(path.file_stem().map(|s| s.to_string_lossy().into_owned()));
                    }
                }
            }
        }
        bins.sort();
        bins.dedup();
        bins
    }

    #[test]
    fn every_operator_binary_of_the_workspace_is_installed() {
        let mut installed: Vec<String> = OPERATORS.iter().map(|(n, _)| n.to_string()).collect();
        installed.sort();
        let operators: Vec<String> = workspace_binaries()
            .into_iter()
            .filter(|b| b != "nco-bench" && b != "nco-dist")
            .collect();
        assert!(operators.len() >= 21, "{operators:?}");
        assert_eq!(
            installed, operators,
            "OPERATORS and the workspace's binaries differ"
        );
    }
}
