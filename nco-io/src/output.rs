//! Output-file safety and provenance, as NCO does it (NCO manual, "Temporary Output
//! Files", "History Attribute"):
//!
//! * the output is written to `<out>.pid<PID>.<op>.tmp` in the output's folder and
//!   renamed over `<out>` only on success; on any error, panic or Ctrl-C the temporary
//!   file is removed and an existing output is left untouched;
//! * an existing output needs `-O` (overwrite) or `-A` (append); without either, a
//!   terminal is asked, and anything else is an error (exit 1);
//! * the `history` global attribute gets `"<ctime date>: <command line>"` prepended
//!   (unless `-h`), and the `NCO` attribute names the version emulated;
//! * leftovers: a process killed with SIGKILL cannot remove its temporary file, so
//!   planning a temporary output removes those of the same output left by processes
//!   that no longer exist ([`remove_leftovers`]);
//! * locks: a run that updates an existing file (an append, `--rec_apn`, an in-place
//!   edit) holds an exclusive lock on it from before it reads it until its new version
//!   is renamed into place ([`UpdateLock`]), so concurrent updates of one file are
//!   serialised instead of one silently losing the other's work.

use std::ffi::CString;
use std::fs::File;
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Once;

use crate::error::{Error, Result};
use crate::model::{set_attr, Attr, Meta};
use crate::types::Values;

/// What to do with an output file that already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// The output does not exist: create it.
    Create,
    /// Replace it (`-O`, or the user answered `o`).
    Overwrite,
    /// Merge into it (`-A`, or the user answered `a`).
    Append,
}

/// Decide how to treat output `path` given `-O` and `-A`.
///
/// Errors: both `-O` and `-A`; an existing output with neither and no terminal to ask
/// (NCO gives up after failed reads and exits 1), or the user answering `e`.
pub fn resolve_existing(
    prog: &str,
    file: &Path,
    overwrite: bool,
    append: bool,
) -> Result<Existing> {
    if overwrite && append {
        return Err(Error::option(
            "-O/-A",
            "overwrite (-O) and append (-A) are mutually exclusive",
        ));
    }
    if !file.exists() {
        return Ok(Existing::Create);
    }
    if overwrite {
        return Ok(Existing::Overwrite);
    }
    if append {
        return Ok(Existing::Append);
    }
    let path = file.display();
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::msg(format!(
            "output file {path} exists; use -O to overwrite it or -A to append to it"
        )));
    }
    for _ in 0..10 {
        eprint!("{prog}: overwrite {path} (o), append to it (a), or exit (e)? ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        match line.trim() {
            "o" | "O" => return Ok(Existing::Overwrite),
            "a" | "A" => return Ok(Existing::Append),
            "e" | "E" => break,
            _ => {}
        }
    }
    Err(Error::msg(format!(
        "output file {path} exists and was left unchanged"
    )))
}

// Temporary files to remove if the process is interrupted (async-signal-safe list).
const SLOTS: usize = 64;
static TMP_SLOTS: [AtomicPtr<libc::c_char>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static HANDLER: Once = Once::new();

extern "C" fn on_signal(sig: libc::c_int) {
    remove_temporaries();
    // SAFETY: _exit is async-signal-safe; 128+signal is the shell convention.
    unsafe { libc::_exit(128 + sig) };
}

/// Remove the temporary outputs of this process now (async-signal-safe): before an
/// exit that skips the usual clean-up (a signal, a DAP call past its time limit).
pub(crate) fn remove_temporaries() {
    for slot in &TMP_SLOTS {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: `p` is a NUL-terminated path leaked by `register`; unlink is
            // async-signal-safe.
            unsafe { libc::unlink(p) };
        }
    }
}

fn register(path: &Path) -> Option<usize> {
    HANDLER.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installing a handler that only calls async-signal-safe functions.
            unsafe {
                libc::signal(
                    sig,
                    on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
                )
            };
        }
    });
    let c = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let raw = c.into_raw();
    for (i, slot) in TMP_SLOTS.iter().enumerate() {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                raw,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            return Some(i);
        }
    }
    // SAFETY: `raw` came from `CString::into_raw` just above and was not stored.
    drop(unsafe { CString::from_raw(raw) });
    None
}

fn unregister(i: usize) {
    let p = TMP_SLOTS[i].swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` came from `CString::into_raw` in `register` and is released once.
        drop(unsafe { CString::from_raw(p) });
    }
}

/// The names of the programs whose temporary files [`remove_leftovers`] may remove:
/// nco-rs's operators and their aliases (NCO's programs of the same names write
/// temporary files of the same form).
pub const OPERATOR_NAMES: &[&str] = &[
    "ncks", "ncra", "ncrcat", "nces", "ncea", "ncecat", "ncwa", "ncbo", "ncdiff", "ncadd", "ncsub",
    "ncmult", "ncdivide", "ncpdq", "ncpack", "ncunpack", "ncap2", "ncap", "ncatted", "ncrename",
    "ncflint",
];

/// The process id in `name` when it is the name of a temporary file of output `dest_name`
/// as [`TempOutput`] makes them: `<dest_name>.pid<PID>.<op>.tmp` with `op` one of
/// [`OPERATOR_NAMES`]; `None` for any other name.
pub fn leftover_pid(dest_name: &str, name: &str) -> Option<u32> {
    let rest = name.strip_prefix(dest_name)?.strip_prefix(".pid")?;
    let rest = rest.strip_suffix(".tmp")?;
    let (pid, op) = rest.split_once('.')?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || pid.starts_with('0') {
        return None;
    }
    if !OPERATOR_NAMES.contains(&op) {
        return None;
    }
    pid.parse().ok()
}

/// True when a process `pid` exists on this machine (in this PID namespace); a process
/// of another user counts as existing.
fn process_exists(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks whether the process exists; nothing is sent.
    if unsafe { libc::kill(p, 0) } == 0 {
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Remove the temporary files of output `dest` (in its folder `dir`) left behind by
/// processes that no longer exist, e.g. killed with SIGKILL. A file is removed only when
/// all of these hold: its name is `<dest's name>.pid<PID>.<op>.tmp` with `op` one of our
/// operators ([`leftover_pid`]), no process `PID` exists, it is a regular file (not a
/// link), and it belongs to the user running this process. Returns the paths removed.
///
/// Limits: the process check sees this machine's processes only; a run on another
/// machine writing into the same network folder, or in another PID namespace, looks
/// dead from here. Errors reading the folder are ignored (nothing is removed).
pub fn remove_leftovers(dir: &Path, dest: &Path) -> Vec<PathBuf> {
    let Some(dest_name) = dest.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let me = std::process::id();
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| leftover_pid(dest_name, n)) else {
            continue;
        };
        if pid == me || process_exists(pid) {
            continue;
        }
        let path = e.path();
        let Ok(md) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if md.file_type().is_file() && md.uid() == uid && std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// An exclusive lock on an existing file that this run updates (an append with `-A`,
/// ncrcat's `--rec_apn`, an in-place edit), held from before the file is read until its
/// new version has replaced it; released on drop. A second run taking the lock on the
/// same file waits (saying so on standard error) until the first has finished, then
/// reads the first one's result.
///
/// The lock is an open-file-description lock (`fcntl(F_OFD_SETLKW)`) on the whole file,
/// not `flock`: HDF5 takes `flock` locks of its own when libnetcdf opens a netCDF-4 file,
/// and would refuse to open a file we hold with `flock` ("HDF error"); the two kinds of
/// lock do not interact on Linux. Advisory: it serialises runs that take it (nco-rs's),
/// not other programs. Because the updated file is replaced by a rename, the lock is
/// taken again when the path names another file once it is granted.
#[derive(Debug)]
pub struct UpdateLock {
    _file: File,
    path: PathBuf,
}

fn ofd_lock(file: &File, wait: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed flock is a valid value; the fields are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    let cmd = if wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: `fl` outlives the call; the descriptor is open for as long as `file`.
        if unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl UpdateLock {
    /// Lock the existing file `path` for an update by `prog`, waiting while another run
    /// holds it.
    ///
    /// Errors: the file cannot be opened for writing (missing, no permission), or the
    /// file system refuses the lock.
    pub fn acquire(path: impl AsRef<Path>, prog: &str) -> Result<UpdateLock> {
        let path = path.as_ref();
        let mut said = false;
        loop {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            if let Err(e) = ofd_lock(&file, false) {
                if !matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) {
                    return Err(Error::io(path, e));
                }
                if !said {
                    eprintln!(
                        "{prog}: waiting for another run that is updating {}",
                        path.display()
                    );
                    said = true;
                }
                ofd_lock(&file, true).map_err(|e| Error::io(path, e))?;
            }
            // The other run may have renamed a new file over the one we locked.
            let held = file.metadata().map_err(|e| Error::io(path, e))?;
            match std::fs::metadata(path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                    return Ok(UpdateLock {
                        _file: file,
                        path: path.to_path_buf(),
                    })
                }
                Ok(_) => continue,
                Err(e) => return Err(Error::io(path, e)),
            }
        }
    }

    /// The locked file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A temporary output file beside the final one; removed on drop unless committed.
/// Planning one also removes leftovers of dead processes for the same output
/// ([`remove_leftovers`]). It may hold the [`UpdateLock`] of the file it replaces, which
/// is then released only after the rename.
pub struct TempOutput {
    tmp: PathBuf,
    dest: PathBuf,
    slot: Option<usize>,
    committed: bool,
    lock: Option<UpdateLock>,
}

impl TempOutput {
    /// Plan `<dest>.pid<PID>.<prog>.tmp`. Errors when the output's folder does not exist
    /// or is not writable (checked before any work is done).
    pub fn new(dest: &Path, prog: &str) -> Result<TempOutput> {
        let dest = dest.to_path_buf();
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(Error::io(
                &dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "output folder does not exist"),
            ));
        }
        let cdir = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::msg("NUL in output path"))?;
        // SAFETY: `cdir` is a valid NUL-terminated string for the duration of the call.
        if unsafe { libc::access(cdir.as_ptr(), libc::W_OK) } != 0 {
            return Err(Error::io(&dir, std::io::Error::last_os_error()));
        }
        remove_leftovers(&dir, &dest);
        let mut name = dest.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".pid{}.{prog}.tmp", std::process::id()));
        let tmp = dir.join(name);
        let slot = register(&tmp);
        Ok(TempOutput {
            tmp,
            dest,
            slot,
            committed: false,
            lock: None,
        })
    }

    /// Plan the temporary file of an update of the existing file `dest` (an append, an
    /// in-place edit): take its [`UpdateLock`] first (waiting for another run updating
    /// it), so the caller reads `dest` only once no other run can replace it. The lock
    /// is released after [`TempOutput::commit`] (or when the update fails).
    ///
    /// Errors: those of [`TempOutput::new`] and [`UpdateLock::acquire`].
    pub fn for_update(dest: &Path, prog: &str) -> Result<TempOutput> {
        let mut t = TempOutput::new(dest, prog)?;
        t.lock = Some(UpdateLock::acquire(dest, prog)?);
        Ok(t)
    }

    /// Hold `lock` until this output is committed or dropped (for a caller that took the
    /// lock before planning the temporary file).
    pub fn hold(&mut self, lock: UpdateLock) {
        self.lock = Some(lock);
    }

    /// The temporary path to write to.
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Error `e`, met writing the temporary file, naming the final path instead
    /// ([`Error::naming`]): the user never asked for the temporary name.
    pub fn naming(&self, e: Error) -> Error {
        e.naming(&self.tmp, &self.dest)
    }

    /// Move the finished temporary file over the destination.
    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))?;
        self.committed = true;
        // The lock (if any) goes with `self`, after the rename.
        Ok(())
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
        if let Some(i) = self.slot.take() {
            unregister(i);
        }
    }
}

/// The text of the `NCO` global attribute of NCO 5.1.4, which nco-rs emulates.
pub const NCO_ATTR: &str =
    "netCDF Operators version 5.1.4 (Homepage = http://nco.sf.net, Code = http://github.com/nco/nco)";

/// The current local time in C `ctime` form without the newline (`Mon Nov 30 07:44:53 2026`).
pub fn ctime_now() -> String {
    // SAFETY: time/localtime_r/strftime on stack buffers we own.
    unsafe {
        let t = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        let mut buf = [0u8; 64];
        let fmt = c"%a %b %e %H:%M:%S %Y";
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), &tm);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}

/// The command line as `history` records it: the arguments joined by spaces.
///
/// The history is text: a name that is not UTF-8 is recorded with its invalid bytes
/// replaced (the file itself is opened by its exact name).
pub fn command_line(argv: &[std::ffi::OsString]) -> String {
    let args: Vec<_> = argv.iter().map(|a| a.to_string_lossy()).collect();
    args.join(" ")
}

/// Prepend `"<date>: <command>"` to the `history` global attribute (with a newline
/// between the new line and the old text), create it when absent, and set the `NCO`
/// attribute. Attribute-name lookup of `history` is case-insensitive as in NCO.
/// `command` is the command line ([`command_line`]).
pub fn stamp_history(meta: &mut Meta, command: &str) {
    let line = format!("{}: {command}", ctime_now());
    let existing = meta
        .attrs
        .iter()
        .position(|a| a.name.eq_ignore_ascii_case("history"));
    match existing {
        Some(i) => {
            let old = meta.attrs[i].value.as_text().unwrap_or_default();
            meta.attrs[i].value = Values::Char(format!("{line}\n{old}").into_bytes());
        }
        None => meta.attrs.push(Attr::text("history", &line)),
    }
    set_nco_attr(meta);
}

/// The `history_of_appended_files` global attribute of an output appended to (`-A`):
/// prepend `"<date>: Appended file <file> had following \"history\" attribute:\n<history>\n"`
/// (or `"... had no \"history\" attribute\n"` when `history` is `None`) to its text,
/// creating it when absent, as NCO 5.1.4 records the history of the input whose
/// variables were appended (the first input). `history` is that input's.
pub fn stamp_appended_history(meta: &mut Meta, file: &str, history: Option<&str>) {
    const NAME: &str = "history_of_appended_files";
    let entry = match history {
        Some(h) => format!(
            "{}: Appended file {file} had following \"history\" attribute:\n{h}\n",
            ctime_now()
        ),
        None => format!(
            "{}: Appended file {file} had no \"history\" attribute\n",
            ctime_now()
        ),
    };
    let old = meta
        .attr(NAME)
        .and_then(|a| a.value.as_text())
        .unwrap_or_default();
    set_attr(&mut meta.attrs, Attr::text(NAME, &format!("{entry}{old}")));
}

/// Set the `NCO` global attribute (version provenance).
pub fn set_nco_attr(meta: &mut Meta) {
    set_attr(&mut meta.attrs, Attr::text("NCO", NCO_ATTR));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

    #[test]
    fn appended_history_prepends_an_entry() {
        let mut m = Meta::new(Format::Classic);
        stamp_appended_history(&mut m, "a.nc", Some("made by ncgen"));
        stamp_appended_history(&mut m, "b.nc", None);
        let h = m
            .attr("history_of_appended_files")
            .unwrap()
            .value
            .as_text()
            .unwrap();
        let lines: Vec<&str> = h.split('\n').collect();
        assert!(
            lines[0].ends_with(": Appended file b.nc had no \"history\" attribute"),
            "{h}"
        );
        assert!(
            lines[1].ends_with(": Appended file a.nc had following \"history\" attribute:"),
            "{h}"
        );
        assert_eq!(&lines[2..], ["made by ncgen", ""]);
    }

    #[test]
    fn history_prepends_a_line() {
        let mut m = Meta::new(Format::Classic);
        stamp_history(&mut m, &command_line(&["ncks".into(), "-O".into()]));
        let h = m.attr("history").unwrap().value.as_text().unwrap();
        assert!(h.ends_with(": ncks -O"), "{h}");
        stamp_history(&mut m, "ncwa");
        let h = m.attr("history").unwrap().value.as_text().unwrap();
        assert!(h.contains(": ncwa\n") && h.ends_with(": ncks -O"), "{h}");
        assert_eq!(m.attr("NCO").unwrap().value.as_text().unwrap(), NCO_ATTR);
    }

    #[test]
    fn temp_output_is_removed_unless_committed() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("o.nc");
        let t = TempOutput::new(&dest, "ncks").unwrap();
        let name = t.path().file_name().unwrap().to_str().unwrap();
        assert!(
            name.contains(".pid") && name.ends_with(".ncks.tmp"),
            "{name}"
        );
        std::fs::write(t.path(), b"x").unwrap();
        let p = t.path().to_path_buf();
        drop(t);
        assert!(!p.exists());
        let t = TempOutput::new(&dest, "ncks").unwrap();
        std::fs::write(t.path(), b"y").unwrap();
        t.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"y");
    }

    #[test]
    fn leftover_names_are_ours_only() {
        assert_eq!(leftover_pid("o.nc", "o.nc.pid123.ncks.tmp"), Some(123));
        assert_eq!(leftover_pid("o.nc", "o.nc.pid9.ncrcat.tmp"), Some(9));
        for other in [
            "o.nc",
            "o.nc.pid123.ncks",
            "o.nc.pid.ncks.tmp",
            "o.nc.pid12a.ncks.tmp",
            "o.nc.pid012.ncks.tmp",
            "o.nc.pid123.vim.tmp",
            "xo.nc.pid123.ncks.tmp",
            "o.nc.x.pid123.ncks.tmp",
            "o.nc.pid123.ncks.tmp.keep",
            "o.nc.pid99999999999999999999.ncks.tmp",
        ] {
            assert_eq!(leftover_pid("o.nc", other), None, "{other}");
        }
    }

    /// The id of a process that has just exited (and been reaped).
    /// A PID no process has, found without starting one: a child started here would
    /// inherit the descriptors HDF5 holds open (without close-on-exec) in tests running
    /// beside this one, and with them HDF5's `flock` on those files, so that a test
    /// reopening its own netCDF-4 file while the child lived failed with "HDF error".
    fn dead_pid() -> u32 {
        let max = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(32768);
        (2..max)
            .rev()
            .find(|&p| !process_exists(p))
            .expect("some PID is free")
    }

    #[test]
    fn leftovers_of_dead_processes_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let dead = dead_pid();
        let gone = d.join(format!("o.nc.pid{dead}.ncks.tmp"));
        // pid 1 always exists; our own pid is the run itself.
        let alive = d.join("o.nc.pid1.ncra.tmp");
        let mine = d.join(format!("o.nc.pid{}.ncks.tmp", std::process::id()));
        let other_output = d.join(format!("p.nc.pid{dead}.ncks.tmp"));
        let not_ours = d.join(format!("o.nc.pid{dead}.editor.tmp"));
        for p in [&gone, &alive, &mine, &other_output, &not_ours] {
            std::fs::write(p, b"x").unwrap();
        }
        let link = d.join(format!("o.nc.pid{}.ncwa.tmp", dead_pid()));
        std::os::unix::fs::symlink(&alive, &link).unwrap();
        let removed = remove_leftovers(d, &d.join("o.nc"));
        assert_eq!(removed, vec![gone.clone()]);
        assert!(!gone.exists());
        for p in [&alive, &mine, &other_output, &not_ours, &link] {
            assert!(
                std::fs::symlink_metadata(p).is_ok(),
                "{} was removed",
                p.display()
            );
        }
        // Planning a temporary output does the same.
        std::fs::write(&gone, b"x").unwrap();
        let t = TempOutput::new(&d.join("o.nc"), "ncks").unwrap();
        assert!(!gone.exists());
        drop(t);
    }

    #[test]
    fn update_lock_serialises_updates_and_follows_a_rename() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("o.nc");
        std::fs::write(&f, b"1").unwrap();
        let first = UpdateLock::acquire(&f, "ncks").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let f2 = f.clone();
        let waiter = std::thread::spawn(move || {
            let l = UpdateLock::acquire(&f2, "ncks").unwrap();
            // Granted only after the first update replaced the file: we see its result.
            tx.send(std::fs::read(&f2).unwrap()).unwrap();
            drop(l);
        });
        // The waiter cannot have the lock while we hold it.
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(300))
            .is_err());
        let new = dir.path().join("o.nc.new");
        std::fs::write(&new, b"2").unwrap();
        std::fs::rename(&new, &f).unwrap();
        drop(first);
        assert_eq!(rx.recv().unwrap(), b"2");
        waiter.join().unwrap();
    }

    #[test]
    fn update_lock_of_a_missing_file_is_an_error() {
        let e = UpdateLock::acquire("/nonexistent/o.nc", "ncks").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/o.nc"), "{e}");
    }

    #[test]
    fn both_overwrite_and_append_is_an_error() {
        assert!(resolve_existing("ncks", Path::new("/nonexistent"), true, true).is_err());
        assert_eq!(
            resolve_existing("ncks", Path::new("/nonexistent/x"), false, false).unwrap(),
            Existing::Create
        );
    }
}
