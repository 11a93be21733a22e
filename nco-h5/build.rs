//! Find the shared-object name (soname) of the system libnetcdf the build sees, so that
//! the operators load that library at run time ([`syslib`](src/syslib.rs)) instead of
//! linking it: `libnetcdf.so` is the development link; its target, by the libtool
//! convention `libnetcdf.so.MAJOR[.MINOR.PATCH]`, gives `libnetcdf.so.MAJOR`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let mut dirs: Vec<PathBuf> = Command::new("pkg-config")
        .args(["--variable=libdir", "netcdf"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .collect();
    dirs.extend(
        [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/usr/local/lib",
        ]
        .map(PathBuf::from),
    );
    let soname = dirs
        .iter()
        .filter_map(|d| std::fs::read_link(d.join("libnetcdf.so")).ok())
        .filter_map(|t| t.file_name().map(|n| n.to_string_lossy().into_owned()))
        .find_map(|n| {
            let major = n
                .strip_prefix("libnetcdf.so.")?
                .split('.')
                .next()?
                .to_string();
            (!major.is_empty() && major.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("libnetcdf.so.{major}"))
        })
        .unwrap_or_else(|| "libnetcdf.so".to_string());
    println!("cargo:rustc-env=NCO_RS_LIBNETCDF_SONAME={soname}");
}
