//! The one error type of nco-rs. Every variant names what the user must fix (a file,
//! variable, dimension or option); operators print it as a single line
//! `<op>: ERROR <message>` and exit with status 1, as NCO 5.1.4 does for every failure.

use std::path::PathBuf;

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in an operator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A command-line option is malformed or conflicts with another.
    #[error("option {name}: {reason}")]
    Option {
        /// The option as the user spelled it (`-d`, `--cnk_plc`).
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A `-d` hyperslab cannot be parsed or selects nothing.
    #[error("hyperslab -d {spec}: {reason}")]
    Hyperslab {
        /// The text of the `-d` argument.
        spec: String,
        /// What is wrong.
        reason: String,
    },
    /// A variable is missing or unusable.
    #[error("variable {var}: {reason}")]
    Variable {
        /// Variable name.
        var: String,
        /// What is wrong.
        reason: String,
    },
    /// A file is not a valid netCDF file of a format we read.
    #[error("{path}: {reason}")]
    Format {
        /// File name.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// An operating-system error on a file.
    #[error("{}: {source}", path.display())]
    Io {
        /// File name.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An error from libnetcdf.
    #[error("{path}{}: {source}", var.as_ref().map(|v| format!(" (variable {v})")).unwrap_or_default())]
    Netcdf {
        /// File name.
        path: String,
        /// Variable concerned, if any.
        var: Option<String>,
        /// libnetcdf's error (the `netcdf` crate's, kept as a boxed error so this
        /// crate does not link libnetcdf).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Any other failure, already worded for the user.
    #[error("{0}")]
    Msg(String),
    /// A run that ends with exit status 1 having said why itself, in NCO's words (ncks
    /// `--chk_nan` finding a NaN): nothing more is printed.
    #[error("(already reported)")]
    Reported,
}

/// `text` on one line: its lines trimmed and joined by one blank, empty ones dropped
/// (the operators' errors and warnings are one line each, whatever a library's message
/// looks like).
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Error {
    /// This error with file `tmp` named `dest` instead: errors met while writing a
    /// temporary output name the file the user asked for.
    pub fn naming(self, tmp: &std::path::Path, dest: &std::path::Path) -> Error {
        let (t, d) = (tmp.display().to_string(), dest.display().to_string());
        let fix = |s: String| if s.contains(&t) { s.replace(&t, &d) } else { s };
        match self {
            Error::Format { path, reason } => Error::Format {
                path: fix(path),
                reason: fix(reason),
            },
            Error::Io { path, source } if path == tmp => Error::Io {
                path: dest.to_path_buf(),
                source,
            },
            Error::Netcdf { path, var, source } => Error::Netcdf {
                path: fix(path),
                var,
                source,
            },
            Error::Msg(m) => Error::Msg(fix(m)),
            Error::Variable { var, reason } => Error::Variable {
                var,
                reason: fix(reason),
            },
            other => other,
        }
    }

    /// The message on one line ([`one_line`]), as the operators print it.
    pub fn one_line(&self) -> String {
        one_line(&self.to_string())
    }

    /// An [`Error::Msg`].
    pub fn msg(s: impl Into<String>) -> Error {
        Error::Msg(s.into())
    }

    /// An [`Error::Option`].
    pub fn option(name: &str, reason: impl Into<String>) -> Error {
        Error::Option {
            name: name.to_string(),
            reason: reason.into(),
        }
    }

    /// An [`Error::Variable`].
    pub fn var(var: &str, reason: impl Into<String>) -> Error {
        Error::Variable {
            var: var.to_string(),
            reason: reason.into(),
        }
    }

    /// The error of an allocation of `bytes` bytes for variable `var` that the system
    /// refused (a `ulimit -v`, a full machine): "not enough memory for variable X (N
    /// bytes)", instead of the abort an infallible allocation ends in.
    pub fn no_memory(var: &str, bytes: usize) -> Error {
        Error::Msg(format!(
            "not enough memory for variable {var} ({bytes} bytes)"
        ))
    }

    /// An [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Wrap a libnetcdf error with its file and variable.
    pub fn netcdf(
        path: &str,
        var: Option<&str>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error::Netcdf {
            path: path.to_string(),
            var: var.map(str::to_string),
            source: Box::new(source),
        }
    }
}

/// Make room for `n` elements of `T` in `v` (its capacity becomes at least
/// `v.len() + n`) without aborting when the system refuses: the large buffers
/// of the read paths are reserved through this.
///
/// Errors: [`Error::no_memory`] naming `var`, also when the size overflows.
pub fn try_room<T>(v: &mut Vec<T>, n: usize, var: &str) -> Result<()> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(Error::no_memory(var, bytes));
    }
    v.try_reserve_exact(n)
        .map_err(|_| Error::no_memory(var, bytes))
}

#[cfg(test)]
mod room_tests {
    use super::*;

    #[test]
    fn messages_of_several_lines_print_as_one() {
        let e = Error::msg("regex parse error:\n    fld(\n       ^\nerror: unclosed group\n");
        assert_eq!(
            e.one_line(),
            "regex parse error: fld( ^ error: unclosed group"
        );
        assert_eq!(one_line("one line"), "one line");
    }

    #[test]
    fn a_refused_allocation_is_an_error_naming_the_variable() {
        let mut v: Vec<u64> = Vec::new();
        let e = try_room(&mut v, usize::MAX / 4, "T")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("not enough memory for variable T ("), "{e}");
        let e = try_room(&mut v, 1 << 60, "T").unwrap_err().to_string();
        assert_eq!(
            e,
            format!("not enough memory for variable T ({} bytes)", 8u64 << 60)
        );
        try_room(&mut v, 10, "T").unwrap();
        assert!(v.capacity() >= 10);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn naming_puts_the_destination_for_the_temporary_file() {
        let (t, d) = (
            std::path::Path::new("/x/o.nc.pid7.ncks.tmp"),
            std::path::Path::new("/x/o.nc"),
        );
        let e = super::Error::Format {
            path: "/x/o.nc.pid7.ncks.tmp".into(),
            reason: "too big".into(),
        };
        assert_eq!(e.naming(t, d).to_string(), "/x/o.nc: too big");
        let m = super::Error::Msg("writing /x/o.nc.pid7.ncks.tmp failed".into());
        assert_eq!(m.naming(t, d).to_string(), "writing /x/o.nc failed");
    }
}
