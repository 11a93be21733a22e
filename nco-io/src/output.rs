//! Output-file safety and provenance, as NCO does it (NCO manual, "Temporary Output
//! Files", "History Attribute"):
//!
//! * the output is written to `<out>.pid<PID>.<op>.tmp` in the output's folder and
//!   renamed over `<out>` only on success; on any error, panic or Ctrl-C the temporary
//!   file is removed and an existing output is left untouched;
//! * an existing output needs `-O` (overwrite) or `-A` (append); without either, a
//!   terminal is asked, and anything else is an error (exit 1);
//! * the `history` global attribute gets `"<ctime date>: <command line>"` prepended
//!   (unless `-h`), and the `NCO` attribute names the version emulated.

use std::ffi::CString;
use std::io::{BufRead, IsTerminal, Write};
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
pub fn resolve_existing(prog: &str, path: &str, overwrite: bool, append: bool) -> Result<Existing> {
    if overwrite && append {
        return Err(Error::option(
            "-O/-A",
            "overwrite (-O) and append (-A) are mutually exclusive",
        ));
    }
    if !Path::new(path).exists() {
        return Ok(Existing::Create);
    }
    if overwrite {
        return Ok(Existing::Overwrite);
    }
    if append {
        return Ok(Existing::Append);
    }
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
    for slot in &TMP_SLOTS {
        let p = slot.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: `p` is a NUL-terminated path leaked by `register`; unlink is
            // async-signal-safe.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: _exit is async-signal-safe; 128+signal is the shell convention.
    unsafe { libc::_exit(128 + sig) };
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

/// A temporary output file beside the final one; removed on drop unless committed.
pub struct TempOutput {
    tmp: PathBuf,
    dest: PathBuf,
    slot: Option<usize>,
    committed: bool,
}

impl TempOutput {
    /// Plan `<dest>.pid<PID>.<prog>.tmp`. Errors when the output's folder does not exist
    /// or is not writable (checked before any work is done).
    pub fn new(dest: &str, prog: &str) -> Result<TempOutput> {
        let dest = PathBuf::from(dest);
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
        let mut name = dest.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".pid{}.{prog}.tmp", std::process::id()));
        let tmp = dir.join(name);
        let slot = register(&tmp);
        Ok(TempOutput {
            tmp,
            dest,
            slot,
            committed: false,
        })
    }

    /// The temporary path to write to.
    pub fn path(&self) -> &str {
        self.tmp.to_str().unwrap_or_default()
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Move the finished temporary file over the destination.
    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| Error::io(&self.dest, e))?;
        self.committed = true;
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
pub fn command_line(argv: &[String]) -> String {
    argv.join(" ")
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

/// Set the `NCO` global attribute (version provenance).
pub fn set_nco_attr(meta: &mut Meta) {
    set_attr(&mut meta.attrs, Attr::text("NCO", NCO_ATTR));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Format;

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
        let t = TempOutput::new(dest.to_str().unwrap(), "ncks").unwrap();
        assert!(t.path().contains(".pid") && t.path().ends_with(".ncks.tmp"));
        std::fs::write(t.path(), b"x").unwrap();
        let p = t.path().to_string();
        drop(t);
        assert!(!Path::new(&p).exists());
        let t = TempOutput::new(dest.to_str().unwrap(), "ncks").unwrap();
        std::fs::write(t.path(), b"y").unwrap();
        t.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"y");
    }

    #[test]
    fn both_overwrite_and_append_is_an_error() {
        assert!(resolve_existing("ncks", "/nonexistent", true, true).is_err());
        assert_eq!(
            resolve_existing("ncks", "/nonexistent/x", false, false).unwrap(),
            Existing::Create
        );
    }
}
