//! The environment variables nco-rs reads, read once when a program starts
//! ([`install`], called by [`super::run_main`] and by nco-bench) into the
//! configuration values the lower layers take. No module below this one reads the
//! environment.
//!
//! | variable | effect |
//! |---|---|
//! | `NCO_RS_NO_MMAP` (set, not empty, not `0`) | read every input through libnetcdf, as `--no-mmap` |
//! | `NCO_RS_MMAP` (set, not `0`) | map classic inputs into memory instead of positioned reads |
//! | `NCO_RS_LIB_WRITE` (set, not empty, not `0`) | write classic outputs through libnetcdf too |
//! | `NCO_RS_DAP_TIMEOUT` | seconds one libnetcdf call on a DAP URL may take (default 300; 0: no limit) |
//! | `NCO_RS_LIST_BATCH_MB` | memory for the list form's read-ahead, in MiB (default 512; 0: one station per pass) |
//! | `NCO_PATH` | folders (`:`-separated) where ncap2 looks for a relative `#include` file ([`include_path`]) |

use std::ffi::OsString;
use std::sync::OnceLock;

use crate::dataset::{set_io_config, IoConfig};
use crate::stations::DEFAULT_LIST_BATCH;

/// What the environment asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// How files are opened and created ([`crate::dataset`]).
    pub io: IoConfig,
    /// Bytes of station values the list form reads ahead at once
    /// ([`crate::stations::ReadAheadPlan::budget`]).
    pub list_batch_bytes: usize,
}

impl Settings {
    /// The settings given by the variables `var` returns (the environment's, for
    /// [`Settings::from_env`]).
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Settings {
        let on = |name: &str| var(name).is_some_and(|v| v != "0" && !v.is_empty());
        Settings {
            io: IoConfig {
                force_libnetcdf: on("NCO_RS_NO_MMAP"),
                mmap: var("NCO_RS_MMAP").is_some_and(|v| v != "0"),
                lib_write: on("NCO_RS_LIB_WRITE"),
                dap_timeout_s: var("NCO_RS_DAP_TIMEOUT")
                    .and_then(|v| v.to_str()?.trim().parse::<u64>().ok()),
            },
            list_batch_bytes: var("NCO_RS_LIST_BATCH_MB")
                .and_then(|v| v.to_str()?.trim().parse::<usize>().ok())
                .map_or(DEFAULT_LIST_BATCH, |mb| mb << 20),
        }
    }

    /// The settings of this process's environment.
    pub fn from_env() -> Settings {
        Settings::from_vars(|name| std::env::var_os(name))
    }
}

/// The folders of `NCO_PATH` (`:`-separated, empty entries skipped), where ncap2 looks
/// for a relative `#include` file not in the current folder, as NCO does.
pub fn include_path() -> Vec<std::path::PathBuf> {
    include_path_of(std::env::var_os("NCO_PATH"))
}

fn include_path_of(value: Option<OsString>) -> Vec<std::path::PathBuf> {
    value
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Read the environment (the first call only) and install its I/O configuration as the
/// process default ([`crate::dataset::set_io_config`]); returns the settings.
pub fn install() -> &'static Settings {
    let s = settings();
    set_io_config(s.io);
    s
}

/// The settings read from the environment (read on the first call).
pub fn settings() -> &'static Settings {
    SETTINGS.get_or_init(Settings::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nco_path_gives_its_folders_in_order() {
        let p = include_path_of(Some(OsString::from("/a::b/c:")));
        assert_eq!(p, [std::path::PathBuf::from("/a"), "b/c".into()]);
        assert!(include_path_of(None).is_empty());
    }

    #[test]
    fn variables_give_the_settings() {
        let vars = |set: &'static [(&'static str, &'static str)]| {
            Settings::from_vars(move |n| {
                set.iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| OsString::from(v))
            })
        };
        let none = vars(&[]);
        assert_eq!(none.io, IoConfig::default());
        assert_eq!(none.list_batch_bytes, 512 << 20);
        let all = vars(&[
            ("NCO_RS_NO_MMAP", "1"),
            ("NCO_RS_MMAP", "yes"),
            ("NCO_RS_LIB_WRITE", "1"),
            ("NCO_RS_LIST_BATCH_MB", " 3 "),
            ("NCO_RS_DAP_TIMEOUT", "5"),
        ]);
        assert_eq!(
            all.io,
            IoConfig {
                force_libnetcdf: true,
                mmap: true,
                lib_write: true,
                dap_timeout_s: Some(5),
            }
        );
        assert_eq!(all.list_batch_bytes, 3 << 20);
        // Off: 0, or empty for the switches that say so.
        let off = vars(&[
            ("NCO_RS_NO_MMAP", ""),
            ("NCO_RS_MMAP", "0"),
            ("NCO_RS_LIB_WRITE", "0"),
            ("NCO_RS_LIST_BATCH_MB", "many"),
        ]);
        assert_eq!(off.io, IoConfig::default());
        assert_eq!(off.list_batch_bytes, 512 << 20);
        assert!(vars(&[("NCO_RS_MMAP", "")]).io.mmap, "NCO_RS_MMAP= maps");
        assert_eq!(vars(&[("NCO_RS_LIST_BATCH_MB", "0")]).list_batch_bytes, 0);
    }
}
