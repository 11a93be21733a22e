//! Installing nco-rs like a tool (`scripts/install.sh`, README "Install"): every
//! operator and alias, man pages and completions land where each program looks, beside
//! another program of the same name without overwriting it. The Debian package is
//! checked by `.ci/run` (`dpkg -i` into the machine, then an operator run from it).

use std::path::{Path, PathBuf};

use nco_tests::{is_nco, own_bin, Cmd, Scratch};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repository root")
        .to_path_buf()
}

fn install(prefix: &Path, extra: &[&str]) -> Cmd {
    Cmd::program(PathBuf::from("bash"))
        .arg(repo().join("scripts/install.sh"))
        .args(["--no-build", "--prefix"])
        .arg(prefix)
        .args(extra)
}

/// The names nco-dist installs.
fn names() -> Vec<String> {
    let r = Cmd::program(own_bin("nco-dist")).arg("names").succeeds();
    r.stdout.lines().map(str::to_string).collect()
}

#[test]
fn install_puts_operators_man_pages_and_completions_where_they_are_looked_for() {
    if is_nco() {
        eprintln!("nothing to check against NCO: this is nco-rs's installer");
        return;
    }
    let s = Scratch::new();
    let p = s.path("prefix");
    install(&p, &[]).succeeds();
    let names = names();
    assert!(names.len() >= 18, "{names:?}");
    for n in &names {
        let exe = p.join("bin").join(n);
        let r = Cmd::program(exe.clone()).arg("--version").succeeds();
        assert!(r.stdout.contains("nco-rs"), "{n}: {r:?}");
        let page = std::fs::read_to_string(p.join(format!("share/man/man1/{n}.1")))
            .unwrap_or_else(|e| panic!("man page of {n}: {e}"));
        assert!(page.contains(&format!(".TH {n} 1")), "{n}");
        assert!(
            page.contains("Examples:"),
            "{n}: no examples in the man page"
        );
        let bash =
            std::fs::read_to_string(p.join(format!("share/bash-completion/completions/{n}")))
                .unwrap_or_else(|e| panic!("bash completion of {n}: {e}"));
        assert!(bash.contains(&format!("complete -F _{n}")), "{n}");
        assert!(
            p.join(format!("share/zsh/site-functions/_{n}")).is_file(),
            "{n}: zsh"
        );
        assert!(
            p.join(format!("share/fish/vendor_completions.d/{n}.fish"))
                .is_file(),
            "{n}: fish"
        );
    }
    // bash itself loads and uses the completion: `ncks --rec<TAB>` is not an option of
    // ncks, `ncrcat --rec_<TAB>` completes to --rec_apn.
    let script = format!(
        "source {}; COMP_WORDS=(ncrcat --rec_a); COMP_CWORD=1; _ncrcat ncrcat --rec_a ncrcat; echo \"${{COMPREPLY[@]}}\"",
        p.join("share/bash-completion/completions/ncrcat").display()
    );
    let r = Cmd::program(PathBuf::from("bash"))
        .args(["-c", &script])
        .succeeds();
    assert_eq!(r.stdout.trim(), "--rec_apn", "{r:?}");
    // Installing again over our own files is fine.
    install(&p, &[]).succeeds();
}

#[test]
fn install_never_overwrites_another_program_of_the_same_name() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let p = s.path("prefix");
    std::fs::create_dir_all(p.join("bin")).expect("mkdir");
    let theirs = p.join("bin/ncks");
    std::fs::write(&theirs, "#!/bin/sh\necho NCO\n").expect("write");
    let mut perm = std::fs::metadata(&theirs).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&theirs, perm).expect("chmod");
    let r = install(&p, &[]).run().code_is(1);
    assert!(r.stderr.contains("is not nco-rs's"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(&theirs).expect("read"),
        "#!/bin/sh\necho NCO\n"
    );
    assert!(
        !p.join("bin/ncra").exists(),
        "nothing is installed after a refusal"
    );
    // --force replaces it.
    install(&p, &["--force"]).succeeds();
    let r = Cmd::program(theirs).arg("--version").succeeds();
    assert!(r.stdout.contains("nco-rs"));
}
