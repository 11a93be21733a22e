//! `run --dap`: the loopback OPeNDAP server the DAP rows read from. It is the server the
//! integration tests use (`tests/dap/serve.py`: pydap's file server with its mends, from
//! the virtual environment `scripts/dap-venv.sh` makes), serving the data folder on a
//! free port of 127.0.0.1, and it stops when the bench is done with it (or gone).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The repository this bench was built from (serve.py and the virtual environment).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Python of the server's virtual environment: `$NCO_RS_DAP_PYTHON`, else
/// `target/dap-venv/bin/python` of the repository.
fn python() -> PathBuf {
    match std::env::var_os("NCO_RS_DAP_PYTHON").filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => repo().join("target/dap-venv/bin/python"),
    }
}

/// A running loopback server; dropping it stops it.
pub struct DapServer {
    /// `http://127.0.0.1:PORT`: the base URL of the served folder.
    pub base: String,
    child: Child,
}

impl DapServer {
    /// Start the server on `dir` and wait (up to 60 s) until it answers.
    ///
    /// Errors: the virtual environment or serve.py is missing (with the command that
    /// makes it), the server cannot start, or it does not answer in time (with its log).
    pub fn start(dir: &Path, log: &Path) -> Result<DapServer> {
        let py = python();
        let script = repo().join("tests/dap/serve.py");
        if !py.exists() {
            bail!(
                "{} missing: run `bash scripts/dap-venv.sh` first (it makes the DAP server's Python environment)",
                py.display()
            );
        }
        if !script.exists() {
            bail!("{} missing", script.display());
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let out = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let child = Command::new(&py)
            .arg(&script)
            .args(["--port", &port.to_string(), "--data"])
            .arg(dir)
            .args(["--parent", &std::process::id().to_string()])
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("cannot start {}", py.display()))?;
        let mut server = DapServer {
            base: format!("http://127.0.0.1:{port}"),
            child,
        };
        let start = Instant::now();
        while !answers(port) {
            if let Ok(Some(status)) = server.child.try_wait() {
                bail!(
                    "the DAP server exited ({status}); its log {}: {}",
                    log.display(),
                    std::fs::read_to_string(log).unwrap_or_default().trim()
                );
            }
            if start.elapsed() > Duration::from_secs(60) {
                bail!(
                    "the DAP server did not answer in 60 s; its log {}: {}",
                    log.display(),
                    std::fs::read_to_string(log).unwrap_or_default().trim()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(server)
    }

    /// The server's main process (its workers are its children).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for DapServer {
    fn drop(&mut self) {
        // SIGTERM: gunicorn's master stops its workers, then itself.
        // SAFETY: kill has no memory preconditions; the pid is our unreaped child.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True when something on `port` answers `GET /` with HTTP 200 (the folder's index).
fn answers(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    if write!(s, "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/") && &head[9..12] == b"200"
}
