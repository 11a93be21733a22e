//! Test harness of nco-rs: runs the operator *binaries* (ours, or NCO's when
//! `NCO_RS_BIN_DIR` points at them) on netCDF fixtures built from our own CDL files.
//!
//! The pieces, in the spirit of uutils' `uutests` and ripgrep's `tests/util.rs`:
//!
//! - [`bin`] finds an operator: `$NCO_RS_BIN_DIR/<op>` when that variable is set, else
//!   the workspace's `target/release/<op>`, then `target/debug/<op>` (found from the
//!   test executable's own path). A missing binary makes the test **fail**, never skip:
//!   run `cargo build --release --workspace --bins` first (`cargo test` does not build
//!   other packages' binaries).
//! - [`is_nco`] tells whether the binaries under test are NCO itself; the whole suite
//!   must pass that way too (`NCO_RS_BIN_DIR=/usr/bin cargo test`). Tests of documented
//!   compatibility differences return early when it is true.
//! - [`Scratch`] is a per-test temporary folder; [`fixture`] is `tests/data/fixture.cdl`
//!   built once per test process with `ncgen` (classic, or netCDF-4 with
//!   [`fixture_nc4`]); [`storage_nc4`] is `tests/data/storage.cdl`, every way of
//!   storing netCDF-4 data.
//! - [`nco`] returns a [`Cmd`]; running it gives a [`Run`] with chainable checks
//!   (`.succeeds()`, `.fails_with_code(1)`, `.stderr_contains(..)`,
//!   `.stdout_last_line()`...). Every command runs with stdin closed (not a terminal).
//!   [`tool`] runs a netCDF utility (`ncgen`, `ncdump`) from `PATH` the same way, and
//!   [`reference`] NCO's own operator (for differential tests). A missing tool fails
//!   the test with a hint (`.ci/run` installs them all).
//! - [`dump`] reads a file through `ncdump` into dimensions, variables, attributes and
//!   values; [`compare`] checks two files as a user would (exact or within a tolerance).
//! - [`layering`] reads a crate's source for its `crate::` paths, for the tests that keep
//!   each crate's layers in one direction of use.

pub mod dump;
pub mod fuzz;
pub mod layering;

pub use dump::{compare, Dump};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Folder with our CDL fixtures (`tests/data`).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// The workspace's `target` folder, found from the running test executable
/// (`target/<profile>/deps/<test>-<hash>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test executable");
    let deps = exe.parent().expect("test executable has a parent folder");
    let profile = deps.parent().expect("deps folder has a parent");
    profile
        .parent()
        .expect("profile folder has a parent")
        .to_path_buf()
}

/// Path of operator `op` (`"ncks"`, `"ncra"`...). Panics (fails the test) when the
/// binary does not exist.
pub fn bin(op: &str) -> PathBuf {
    if let Some(dir) = std::env::var_os("NCO_RS_BIN_DIR").filter(|d| !d.is_empty()) {
        let p = Path::new(&dir).join(op);
        assert!(
            p.is_file(),
            "{op} not found in NCO_RS_BIN_DIR={}",
            Path::new(&dir).display()
        );
        return p;
    }
    let target = target_dir();
    for profile in ["release", "debug"] {
        let p = target.join(profile).join(op);
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "{op} not found under {}/{{release,debug}}: run `cargo build --release --workspace --bins` first",
        target.display()
    );
}

/// Path of `name`, a binary of ours that NCO does not have (`nco-bench`): always the
/// workspace's, whatever `NCO_RS_BIN_DIR` says. Panics (fails the test) when it does
/// not exist.
pub fn own_bin(name: &str) -> PathBuf {
    let target = target_dir();
    ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile).join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} not found under {}/{{release,debug}}: run `cargo build --release --workspace --bins` first",
                target.display()
            )
        })
}

/// Path of operator `op` built with the `mpi` feature (`target/mpi/`, made by
/// `scripts/mpi-build.sh`, which the README's test command runs). Panics (fails the
/// test) when it is missing.
pub fn mpi_bin(op: &str) -> PathBuf {
    let p = target_dir().join("mpi").join(op);
    assert!(
        p.is_file(),
        "{} missing: run `bash scripts/mpi-build.sh` (bash .ci/run does)",
        p.display()
    );
    p
}

/// `mpirun -np N` (Open MPI, as root too, more ranks than cores allowed) of `program`.
/// Panics (fails the test) when mpirun is not installed.
pub fn mpirun(np: usize, program: &Path) -> Cmd {
    assert!(
        Path::new("/usr/bin/mpirun").exists(),
        "mpirun missing: apt-get install openmpi-bin (scripts/mpi-build.sh installs it)"
    );
    Cmd::program(PathBuf::from("/usr/bin/mpirun"))
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "--mca",
            "btl",
            "self,vader",
            "--mca",
            "pml",
            "ob1",
            "-np",
        ])
        .arg(np.to_string())
        .arg(program)
}

/// True when the binaries under test are NCO's (their `--version` text does not name
/// nco-rs). Used only to guard tests of documented compatibility differences.
pub fn is_nco() -> bool {
    static NCO: OnceLock<bool> = OnceLock::new();
    *NCO.get_or_init(|| {
        let out = Command::new(bin("ncks"))
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .expect("run ncks --version");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Ours print `ncks (nco-rs) ...` for --version and -r; NCO's text does not.
        !text.contains("nco-rs") && !text.contains("compatible with NCO")
    })
}

/// True when the tests run as root (permission bits do not stop root).
pub fn is_root() -> bool {
    // `id -u` keeps the harness free of unsafe FFI.
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Build `tests/data/<cdl>` into `<target>/nco-tests/<out>` once per process with
/// `ncgen [kind_args]`. The file is written under a temporary name and renamed, so
/// concurrent test processes never see a half-written fixture.
fn build_fixture(
    cell: &'static OnceLock<PathBuf>,
    cdl: &str,
    out: &str,
    kind: &[&str],
) -> &'static Path {
    cell.get_or_init(|| {
        let dir = target_dir().join("nco-tests");
        std::fs::create_dir_all(&dir).expect("create target/nco-tests");
        let dest = dir.join(out);
        let tmp = dir.join(format!("{out}.{}.part", std::process::id()));
        let status = Command::new("ncgen")
            .args(kind)
            .arg("-o")
            .arg(&tmp)
            .arg(data_dir().join(cdl))
            .stdin(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("cannot run ncgen ({e}): install netcdf-bin"));
        assert!(status.success(), "ncgen failed on tests/data/{cdl}");
        std::fs::rename(&tmp, &dest).expect("rename fixture into place");
        dest
    })
}

/// `tests/data/fixture.cdl` as a netCDF3 classic file (read-only: copy it before
/// modifying). See the CDL for its variables and values.
pub fn fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "fixture.cdl", "fixture.nc", &[])
}

/// The same fixture as a netCDF-4 (HDF5) file.
pub fn fixture_nc4() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "fixture.cdl", "fixture_nc4.nc", &["-k", "netCDF-4"])
}

/// `tests/data/storage.cdl` as a netCDF-4 file: one variable per way of storing data
/// (filters, byte orders, contiguous, compact, unwritten chunks, strings...).
pub fn storage_nc4() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "storage.cdl", "storage_nc4.nc", &["-k", "netCDF-4"])
}

/// `tests/data/groups.cdl` as a netCDF-4 file (read-only): nested groups, a dimension
/// shadowed in an inner group, string variables and attributes, the unsigned and
/// 64-bit types, compressed and chunked variables.
pub fn groups_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "groups.cdl", "groups.nc", &["-k", "nc4"])
}

/// [`groups_fixture`] as a string argument.
pub fn gx() -> String {
    groups_fixture().to_string_lossy().into_owned()
}

/// `ncdump -hs FILE` storage lines, one per variable: `path: key=value; ...` with the
/// variable's `_Storage`, `_ChunkSizes`, `_DeflateLevel` and `_Shuffle` (sorted by
/// path), for comparing how two files store their variables.
#[track_caller]
pub fn storage(file: &str) -> Vec<String> {
    let text = ncdump(&["-hs"], file);
    let mut group: Vec<String> = Vec::new();
    let mut out: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in text.lines().map(str::trim) {
        if let Some(g) = line.strip_prefix("group: ") {
            group.push(g.trim_end_matches(" {").to_string());
        } else if line.starts_with("} // group") {
            group.pop();
        } else if let Some((var, rest)) = line.split_once(':') {
            let key = rest.split_whitespace().next().unwrap_or("");
            if var.is_empty()
                || !["_Storage", "_ChunkSizes", "_DeflateLevel", "_Shuffle"].contains(&key)
            {
                continue;
            }
            let path = format!(
                "/{}",
                group
                    .iter()
                    .chain([&var.to_string()])
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("/")
            );
            let value = rest
                .trim_start_matches(key)
                .trim()
                .trim_start_matches('=')
                .trim()
                .trim_end_matches(" ;");
            out.entry(path).or_default().push(format!("{key}={value}"));
        }
    }
    out.into_iter()
        .map(|(k, mut v)| {
            v.sort();
            format!("{k}: {}", v.join("; "))
        })
        .collect()
}

/// `tests/data/ncap.cdl` (the ncap2 tests' small fixture) as a netCDF3 classic file
/// (read-only: copy it before modifying).
pub fn ncap_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "ncap.cdl", "ncap.nc", &[])
}

/// `tests/data/ncap2.cdl` (the fixture of ncap2's differential corpus,
/// `tests/data/ncap2/*.nco`) as a netCDF3 classic file (read-only).
pub fn ncap2_corpus_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "ncap2.cdl", "ncap2_corpus.nc", &[])
}

/// `tests/data/descending.cdl` (decreasing coordinates `lat` and `lev`) as a netCDF3
/// classic file (read-only).
pub fn descending_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "descending.cdl", "descending.nc", &[])
}

/// `tests/data/printing.cdl` (NaNs and infinities in data and attributes, char arrays
/// of 0 to 3 dimensions) as a netCDF3 classic file (read-only).
pub fn printing_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "printing.cdl", "printing.nc", &[])
}

/// [`printing_fixture`] as a netCDF-4 file (`ncgen -k nc4`).
pub fn printing_fixture_nc4() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "printing.cdl", "printing_nc4.nc", &["-k", "nc4"])
}

/// `tests/data/strings.cdl` (NC_STRING attributes and a string variable) as a
/// netCDF-4 file (read-only).
pub fn strings_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "strings.cdl", "strings.nc", &["-k", "nc4"])
}

/// `tests/data/ncbo2.cdl` (ncbo's second operand for the fixture) as a netCDF3
/// classic file (read-only).
pub fn ncbo2_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "ncbo2.cdl", "ncbo2.nc", &[])
}

/// `tests/data/quantize.cdl` (values for `--ppc`: a float with a fill value, doubles
/// of growing precision, integers at their limits, zeros, negative zero and NaN) as a
/// netCDF3 classic file (read-only).
pub fn quantize_fixture() -> &'static Path {
    static F: OnceLock<PathBuf> = OnceLock::new();
    build_fixture(&F, "quantize.cdl", "quantize.nc", &[])
}

/// A per-test scratch folder, removed when dropped.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// A new empty folder.
    pub fn new() -> Self {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("nco-tests.")
                .tempdir()
                .expect("create scratch folder"),
        }
    }

    /// The folder itself.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `name` inside the folder (not created).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `name` inside the folder as a string argument.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    /// Copy the classic fixture into the folder as `name` (for tests that modify
    /// their input) and return its path as a string.
    pub fn copy_fixture(&self, name: &str) -> String {
        let p = self.path(name);
        std::fs::copy(fixture(), &p).expect("copy fixture");
        p.to_string_lossy().into_owned()
    }

    /// Names of the files in the folder, sorted.
    pub fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir())
            .expect("list scratch folder")
            .map(|e| {
                e.expect("folder entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }
}

/// The fixture path as a string argument.
pub fn fx() -> String {
    fixture().to_string_lossy().into_owned()
}

/// A command under construction. Arguments are kept for failure messages.
pub struct Cmd {
    cmd: Command,
    shown: Vec<String>,
}

/// Operator `op` (looked up with [`bin`]).
pub fn nco(op: &str) -> Cmd {
    Cmd::new(bin(op), op)
}

/// A tool from `PATH` (`ncdump`, `ncgen`), never redirected to `NCO_RS_BIN_DIR`.
pub fn tool(name: &str) -> Cmd {
    Cmd::new(PathBuf::from(name), name)
}

/// NCO's own operator `op` (`/usr/bin/<op>`, whatever `NCO_RS_BIN_DIR` says), the
/// reference of differential tests. Panics (fails the test) when NCO is not installed.
#[track_caller]
pub fn reference(op: &str) -> Cmd {
    let p = Path::new("/usr/bin").join(op);
    assert!(
        p.is_file(),
        "NCO's {op} is not installed: apt-get install nco (bash .ci/run installs it)"
    );
    let shown = p.to_string_lossy().into_owned();
    Cmd::new(p, &shown)
}

impl Cmd {
    /// Any program, by path (shown by its file name in messages).
    pub fn program(path: PathBuf) -> Self {
        let shown = path
            .file_name()
            .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
            .into_owned();
        Cmd::new(path, &shown)
    }

    fn new(program: PathBuf, shown: &str) -> Self {
        let mut cmd = Command::new(program);
        cmd.stdin(Stdio::null());
        Cmd {
            cmd,
            shown: vec![shown.to_string()],
        }
    }

    /// Add one argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.shown.push(a.as_ref().to_string_lossy().into_owned());
        self.cmd.arg(a);
        self
    }

    /// Add several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for a in args {
            self = self.arg(a);
        }
        self
    }

    /// Set an environment variable for the child.
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.cmd.env(k, v);
        self
    }

    /// Run it in folder `d`.
    pub fn current_dir(mut self, d: &Path) -> Self {
        self.cmd.current_dir(d);
        self
    }

    /// Run and collect the result (no check).
    pub fn run(mut self) -> Run {
        let cmdline = self.shown.join(" ");
        let out = self.cmd.output().unwrap_or_else(|e| {
            panic!("cannot run `{cmdline}`: {e} (bash .ci/run installs the tools the tests use)")
        });
        Run {
            cmdline,
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Run and require exit status 0.
    pub fn succeeds(self) -> Run {
        self.run().success()
    }

    /// Run and require exit status `code`.
    pub fn fails_with_code(self, code: i32) -> Run {
        self.run().code_is(code)
    }
}

/// A finished command.
#[derive(Debug, Clone)]
pub struct Run {
    /// The command as run (for messages).
    pub cmdline: String,
    /// Exit status (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    fn context(&self) -> String {
        format!(
            "command: {}\nexit: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.cmdline, self.code, self.stdout, self.stderr
        )
    }

    /// Require exit status 0.
    #[track_caller]
    pub fn success(self) -> Self {
        assert_eq!(self.code, Some(0), "expected success\n{}", self.context());
        self
    }

    /// Require exit status `code`, and no panic message.
    #[track_caller]
    pub fn code_is(self, code: i32) -> Self {
        assert_eq!(
            self.code,
            Some(code),
            "wrong exit status\n{}",
            self.context()
        );
        assert!(
            !self.stderr.contains("panicked"),
            "panic\n{}",
            self.context()
        );
        self
    }

    /// The last non-empty stdout line, trailing blanks removed (what NCO's suite and
    /// `run_cases` compare).
    pub fn stdout_last_line(&self) -> &str {
        self.stdout
            .lines()
            .map(str::trim_end)
            .rfind(|l| !l.is_empty())
            .unwrap_or("")
    }

    /// Require the last non-empty stdout line to be `expect`.
    #[track_caller]
    pub fn last_line_is(self, expect: &str) -> Self {
        assert_eq!(self.stdout_last_line(), expect, "\n{}", self.context());
        self
    }

    /// Require stdout to be exactly `expect`.
    #[track_caller]
    pub fn stdout_is(self, expect: &str) -> Self {
        assert_eq!(self.stdout, expect, "\n{}", self.context());
        self
    }

    /// Require stdout to contain `needle`.
    #[track_caller]
    pub fn stdout_contains(self, needle: &str) -> Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Require stdout not to contain `needle`.
    #[track_caller]
    pub fn stdout_lacks(self, needle: &str) -> Self {
        assert!(
            !self.stdout.contains(needle),
            "stdout has {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Require stderr to contain `needle`.
    #[track_caller]
    pub fn stderr_contains(self, needle: &str) -> Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{}",
            self.context()
        );
        self
    }

    /// Require stderr to be a single line (our error style: `op: ERROR ...`). NCO
    /// prints several lines (HINTs, `nco_err_exit()` traces), so this check is
    /// skipped when the binaries under test are NCO's.
    #[track_caller]
    pub fn stderr_one_line(self) -> Self {
        if !is_nco() {
            let lines: Vec<&str> = self
                .stderr
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect();
            assert_eq!(
                lines.len(),
                1,
                "expected a one-line error\n{}",
                self.context()
            );
        }
        self
    }

    /// The whole bad-input contract: exit status 1, no panic, a one-line error on
    /// stderr that contains `needle` (the file, variable or option at fault). NCO
    /// prints many of its errors on stdout, over several lines; when the binaries under
    /// test are NCO's, the needle may be in either stream and the line count is not
    /// checked.
    #[track_caller]
    pub fn clean_failure(self, needle: &str) -> Self {
        let r = self.code_is(1);
        if is_nco() {
            assert!(
                r.stderr.contains(needle) || r.stdout.contains(needle),
                "output lacks {needle:?}\n{}",
                r.context()
            );
            return r;
        }
        r.stderr_contains(needle).stderr_one_line()
    }
}

/// `ncks -C -H --trd -s FORMAT -v VAR [extra] FILE`, returning the last stdout line:
/// the `ncks -H -C -s '%g'` idiom of NCO's regression suite.
#[track_caller]
pub fn value(file: &str, var: &str, format: &str, extra: &[&str]) -> String {
    nco("ncks")
        .args(["-C", "-H", "--trd", "-s", format, "-v", var])
        .args(extra)
        .arg(file)
        .succeeds()
        .stdout_last_line()
        .to_string()
}

/// `ncdump ARGS FILE` (the system tool), stdout.
#[track_caller]
pub fn ncdump(args: &[&str], file: &str) -> String {
    tool("ncdump").args(args).arg(file).succeeds().stdout
}

/// Number of stdout lines of `ncdump -h FILE` that contain `needle`.
#[track_caller]
pub fn header_count(file: &str, needle: &str) -> usize {
    ncdump(&["-h"], file)
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

/// Assert that two files have the same bytes (an output left untouched).
#[track_caller]
pub fn assert_same_bytes(a: &Path, before: &[u8]) {
    let now = std::fs::read(a).unwrap_or_else(|e| panic!("read {}: {e}", a.display()));
    assert!(now == before, "{} was modified", a.display());
}
