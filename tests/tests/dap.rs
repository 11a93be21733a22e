//! OPeNDAP (DAP2) inputs, read from a real server on loopback: pydap's file server
//! (`tests/dap/serve.py`, run by the Python of the virtual environment
//! `scripts/dap-venv.sh` makes, `target/dap-venv`, or `$NCO_RS_DAP_PYTHON`) serving the
//! fixture. A missing server makes these tests fail with that hint, never skip.
//!
//! Each operator gives from the URL the values it gives from the local file. What DAP2
//! changes on the way, for NCO 5.1.4 as for us (both read URLs through libnetcdf's DAP2
//! client), and so what the comparisons leave out: numeric attributes arrive with six
//! significant digits (pydap writes them with `%.6g`), a char variable `name(len)`
//! arrives as `name(maxStrlen64)`, signed bytes as shorts; the record dimension stays
//! a record dimension because the server names it (`DODS_EXTRA`).

use nco_tests::{compare, data_dir, fixture, is_nco, nco, value, Scratch};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The variables the comparisons read: a 3-D record variable, integer and packed
/// record variables with fill values, a variable with fill values, a packed one, scalars.
const VARS: &str = "PS,fld_rec,rec_fill,rec_pck,fld_fill,fld_pck,sc_dbl,sc_int";

struct Server {
    /// `http://127.0.0.1:PORT`
    base: String,
    /// PORT.
    port: u16,
    /// The folder served.
    dir: PathBuf,
    _child: Child,
}

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("NCO_RS_DAP_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    data_dir().join("../../target/dap-venv/bin/python")
}

/// The loopback server of this test process, started on first use on a free port. It
/// stops by itself when this process is gone (`--parent`).
fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let py = python();
        assert!(
            py.exists(),
            "{} missing: run `bash scripts/dap-venv.sh` (the README's test command does)",
            py.display()
        );
        let dir = std::env::temp_dir().join(format!("nco-rs-dap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(fixture(), dir.join("fixture.nc")).unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.join("server.log")).unwrap();
        let child = Command::new(&py)
            .arg(data_dir().join("../dap/serve.py"))
            .args(["--port", &port.to_string(), "--data"])
            .arg(&dir)
            .args(["--parent", &std::process::id().to_string()])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start the DAP server");
        let base = format!("http://127.0.0.1:{port}");
        let start = Instant::now();
        while get(port, "/fixture.nc.dds").is_none() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the DAP server did not answer in 60 s; its log: {}",
                std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Server {
            base,
            port,
            dir,
            _child: child,
        }
    })
}

/// The body of a 200 answer to `GET path`, or None.
fn get(port: u16, path: &str) -> Option<String> {
    let text = String::from_utf8(fetch_raw(port, path)?).ok()?;
    let status = text.lines().next().unwrap_or("");
    (status.starts_with("HTTP/") && status.split(' ').nth(1) == Some("200"))
        .then(|| text.split("\r\n\r\n").nth(1).unwrap_or("").to_string())
}

fn url() -> String {
    format!("{}/fixture.nc", server().base)
}

/// `op args... INPUTS out` once with the URL and once with the local file (each input
/// slot `@` is the input); both succeed and give the same values and dimensions.
#[track_caller]
fn same_from_url(op: &str, args: &[&str]) {
    let s = Scratch::new();
    let local = fixture().display().to_string();
    let url = url();
    let from_url = s.arg("url.nc");
    let from_file = s.arg("local.nc");
    for (input, out) in [(&url, &from_url), (&local, &from_file)] {
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "@" { input.as_str() } else { *a })
            .collect();
        nco(op).args(&args).arg(out).succeeds();
    }
    compare(&from_url, &from_file).without_attributes().equal();
}

#[test]
fn ncks_reads_a_url_as_the_file() {
    same_from_url("ncks", &["-O", "-v", VARS, "@"]);
    // A hyperslab by index and by coordinate value, a stride.
    same_from_url(
        "ncks",
        &[
            "-O",
            "-v",
            VARS,
            "-d",
            "time,2,8,3",
            "-d",
            "lon,90.,270.",
            "@",
        ],
    );
    // The record dimension is still one.
    nco("ncks")
        .args(["-m", "-v", "fld_rec", &url()])
        .succeeds()
        .stdout_contains("time = UNLIMITED ; // (10 currently)");
    // Values printed from the URL are the file's.
    assert_eq!(
        value(&url(), "fld_rec", "%d ", &["-d", "time,0,3"]),
        "10 20 30 40"
    );
}

#[test]
fn ncra_ncrcat_read_a_url_as_the_file() {
    same_from_url("ncra", &["-O", "-v", VARS, "@"]);
    same_from_url("ncra", &["-O", "-v", VARS, "-d", "time,1,,2", "@"]);
    same_from_url("ncrcat", &["-O", "-v", VARS, "-d", "time,2,6", "@", "@"]);
    // `-p URL_PREFIX` before relative names, also names read from standard input.
    let s = Scratch::new();
    let (with_p, listed, local) = (s.arg("p.nc"), s.arg("listed.nc"), s.arg("local.nc"));
    let base = server().base.clone();
    nco("ncrcat")
        .args([
            "-O",
            "-v",
            VARS,
            "-p",
            &base,
            "fixture.nc",
            "fixture.nc",
            &with_p,
        ])
        .succeeds();
    let names = "fixture.nc fixture.nc\n";
    let mut child = Command::new(nco_tests::bin("ncrcat"))
        .args(["-O", "-v", VARS, "-p", &base, &listed])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(names.as_bytes())
        .unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "ncrcat with names on stdin: {}",
        String::from_utf8_lossy(&done.stderr)
    );
    let f = fixture().display().to_string();
    nco("ncrcat")
        .args(["-O", "-v", VARS, &f, &f, &local])
        .succeeds();
    compare(&with_p, &local).without_attributes().equal();
    compare(&listed, &local).without_attributes().equal();
}

#[test]
fn nces_ncwa_read_a_url_as_the_file() {
    same_from_url("nces", &["-O", "-v", VARS, "@", "@"]);
    same_from_url("ncwa", &["-O", "-v", VARS, "-a", "time,lon", "@"]);
    same_from_url("ncwa", &["-O", "-v", "PS", "-a", "lat", "-w", "gw", "@"]);
}

#[test]
fn ncbo_ncpdq_ncap2_read_a_url_as_the_file() {
    let local = fixture().display().to_string();
    same_from_url("ncbo", &["-O", "-v", VARS, "--op_typ=sub", "@", &local]);
    same_from_url("ncpdq", &["-O", "-v", "PS,fld_rec", "-a", "lon,lat", "@"]);
    same_from_url("ncpdq", &["-O", "-v", "PS", "-P", "all_new", "@"]);
    same_from_url(
        "ncap2",
        &["-O", "-v", "-s", "t=PS*2+fld_rec;m=fld_fill.avg()", "@"],
    );
}

/// A port nothing listens on (free when asked).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_bad_url_is_a_one_line_error_naming_it() {
    let s = Scratch::new();
    let out = s.path("out.nc");
    let gone = format!("http://127.0.0.1:{}/fixture.nc", free_port());
    let missing = format!("{}/no_such_file.nc", server().base);
    for (u, why) in [
        (&gone, "Couldn't connect to server"),
        (&missing, "file not found"),
    ] {
        // In the scratch folder: NCO 5.1.4, when a URL fails, tries to fetch the file
        // into the current folder under its base name (and leaves it there, empty).
        let run = nco("ncks")
            .current_dir(s.dir())
            .args(["-O", "-v", "PS", u])
            .arg(&out)
            .run();
        let run = run.clean_failure(u);
        if !is_nco() {
            run.stderr_contains(why);
        }
        assert!(!out.exists(), "{u}: an output was written");
    }
    // DAP4 (`#dap4`): libnetcdf 4.9.0's DAP4 client cannot open pydap's DAP4 answers;
    // one line naming the URL (NCO 5.1.4 goes on to wget and HPSS; not run against it).
    if !is_nco() {
        let dap4 = format!("{}#dap4", url());
        nco("ncks")
            .current_dir(s.dir())
            .args(["-O", "-v", "PS", &dap4])
            .arg(&out)
            .run()
            .clean_failure(&dap4);
        assert!(!out.exists());
    }
    // A variable the server does not have: the error names it; no output.
    nco("ncks")
        .current_dir(s.dir())
        .args(["-O", "-v", "no_such_var", &url()])
        .arg(&out)
        .run()
        .clean_failure("no_such_var");
    assert!(!out.exists());
    // An old output survives a failure (and nothing but it is left in the folder).
    std::fs::write(&out, b"old").unwrap();
    nco("ncra")
        .current_dir(s.dir())
        .args(["-O", &gone])
        .arg(&out)
        .run()
        .clean_failure(&gone);
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
    if !is_nco() {
        assert_eq!(s.files(), vec!["out.nc".to_string()]);
    }
}

/// A server that accepts connections and never answers: ours gives up after
/// `NCO_RS_DAP_TIMEOUT` seconds with one line naming the URL, exit 1, no output and no
/// temporary file left. NCO 5.1.4 waits for ever there (not run against NCO).
#[test]
fn a_server_that_never_answers_is_an_error_after_the_time_limit() {
    if is_nco() {
        return;
    }
    let mute = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = mute.local_addr().unwrap().port();
    // Accept and hold every connection, reading nothing and writing nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in mute.incoming() {
            held.push(c);
        }
    });
    let s = Scratch::new();
    let u = format!("http://127.0.0.1:{port}/fixture.nc");
    let start = Instant::now();
    nco("ncks")
        .current_dir(s.dir())
        .env("NCO_RS_DAP_TIMEOUT", "2")
        .args(["-O", "-v", "PS", &u, "out.nc"])
        .run()
        .clean_failure(&u)
        .stderr_contains("no answer from the DAP server within 2 s");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    assert!(took >= Duration::from_secs(2), "gave up early: {took:?}");
    assert_eq!(s.files(), Vec::<String>::new());
}

/// The whole answer (status line, headers and body) to `GET path` on `port`, or None
/// when nothing answers there.
fn fetch_raw(port: u16, path: &str) -> Option<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    Some(raw)
}

/// What a proxy before the real server does with each `.dods` (data) answer.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    /// Passes it through whole.
    Whole,
    /// Sends headers with the full `Content-Length`, then half of the body, then closes.
    HalfWithLength,
    /// Sends half of the body as an answer whose end is the connection's close.
    HalfWithoutLength,
}

/// A proxy before the real server that passes the DDS and DAS through whole and does
/// `answer` with each `.dods` answer, counting the `.dods` requests in `dods`.
/// Returns its port.
fn proxy(answer: Answer, dods: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> u16 {
    let real = server().port;
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in proxy.incoming() {
            let Ok(mut c) = c else { continue };
            let dods = dods.clone();
            std::thread::spawn(move || {
                let mut req = Vec::new();
                let mut byte = [0u8; 1];
                while !req.ends_with(b"\r\n\r\n") {
                    match c.read(&mut byte) {
                        Ok(1) => req.push(byte[0]),
                        _ => return,
                    }
                }
                let req = String::from_utf8_lossy(&req);
                let path = req.split(' ').nth(1).unwrap_or("/").to_string();
                let Some(raw) = fetch_raw(real, &path) else {
                    return;
                };
                let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
                    return;
                };
                let (head, body) = (&raw[..split], &raw[split + 4..]);
                let head: Vec<&str> = std::str::from_utf8(head)
                    .unwrap_or("")
                    .split("\r\n")
                    .filter(|l| {
                        let l = l.to_ascii_lowercase();
                        !l.starts_with("content-length:") && !l.starts_with("connection:")
                    })
                    .collect();
                if path.contains(".dods") {
                    dods.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                let keep = if path.contains(".dods") && answer != Answer::Whole {
                    body.len() / 2
                } else {
                    body.len()
                };
                let length = if answer != Answer::HalfWithoutLength || keep == body.len() {
                    format!("Content-Length: {}\r\n", body.len())
                } else {
                    String::new()
                };
                let _ = write!(
                    c,
                    "{}\r\n{length}Connection: close\r\n\r\n",
                    head.join("\r\n")
                );
                let _ = c.write_all(&body[..keep]);
                let _ = c.flush();
                let _ = c.shutdown(std::net::Shutdown::Both);
            });
        }
    });
    port
}

/// `big.nc` in the served folder (made once; its path, which the comparisons read
/// locally): variables too large for libnetcdf's prefetch of small variables, `big(x)` of 500000 floats and the record variable
/// `rec_big(time, y)` (10 records of 20000 floats, `time` from the fixture), each
/// element a different value (so that a value read from the wrong place shows).
fn served_big_file() -> PathBuf {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(|| {
        let s = Scratch::new();
        nco("ncap2")
            .args([
                "-O",
                "-v",
                "-s",
                concat!(
                    "defdim(\"x\",500000);big[$x]=array(0.5f,1.0f,$x);defdim(\"y\",20000);",
                    "rec_big[$time,$y]=float(time)*100000.0f+array(0.25f,1.0f,$y);"
                ),
            ])
            .arg(fixture())
            .arg(s.path("big.nc"))
            .succeeds();
        let big = server().dir.join("big.nc");
        std::fs::copy(s.path("big.nc"), server().dir.join("big.tmp")).unwrap();
        std::fs::rename(server().dir.join("big.tmp"), &big).unwrap();
        big
    })
    .clone()
}

/// Operators that stream a variable in many reads ask a DAP server for large blocks
/// (libnetcdf makes each read one HTTP request): ncra and ncrcat, which read a record
/// at a time, get the 10 records of `rec_big` in at most 3 data requests; nces and
/// ncbo, which read pieces of about 256 KiB, get `big` (2 MB) of each input in one
/// (each open also fetches the file's small variables in one request); a reversal
/// (ncpdq `-a -x`) and `-d` multi-slabs take one request for their bounding box
/// instead of one per index run. The values are those of the local file. NCO 5.1.4
/// asks once per record, and once per slab (not run against NCO).
#[test]
fn streamed_reads_from_a_url_are_few_large_requests() {
    if is_nco() {
        return;
    }
    let local = served_big_file().display().to_string();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let port = proxy(Answer::Whole, count.clone());
    let u = format!("http://127.0.0.1:{port}/big.nc");
    let s = Scratch::new();
    let none: &[&str] = &[];
    for (op, var, slab, inputs, most) in [
        ("ncra", "rec_big", none, 1, 3),
        ("ncrcat", "rec_big", none, 1, 3),
        // A strided hyperslab inside the records (the block is its bounding box).
        (
            "ncrcat",
            "rec_big",
            &["-d", "y,100,5000,7", "-d", "time,1,8,2"][..],
            1,
            3,
        ),
        // A reversal: one index run per element, one request for the whole.
        ("ncpdq", "big", &["-a", "-x"][..], 1, 2),
        // Multi-slabs: one request for their bounding box.
        (
            "ncks",
            "rec_big",
            &[
                "-d",
                "y,0,9",
                "-d",
                "y,15000,15009",
                "-d",
                "time,1,2",
                "-d",
                "time,6,7",
            ][..],
            1,
            2,
        ),
        ("nces", "big", none, 2, 4),
        ("ncbo", "big", &["-d", "x,1000,400000,3"][..], 2, 4),
    ] {
        count.store(0, std::sync::atomic::Ordering::SeqCst);
        let (from_url, from_file) = (s.arg(&format!("{op}_url.nc")), s.arg(&format!("{op}.nc")));
        let run = |input: &str, out: &str| {
            nco(op)
                .args(["-O", "-v", var])
                .args(slab)
                .args(vec![input; inputs])
                .arg(out)
                .succeeds();
        };
        run(&u, &from_url);
        let asked = count.load(std::sync::atomic::Ordering::SeqCst);
        run(&local, &from_file);
        compare(&from_url, &from_file).without_attributes().equal();
        assert!(
            (1..=most).contains(&asked),
            "{op} {slab:?}: {asked} data requests, at most {most} expected"
        );
    }
}

/// A server that drops the connection in the middle of a data answer: of the small
/// variables libnetcdf fetches together, and of a large variable fetched alone, with
/// and without a `Content-Length` (without one, libnetcdf's DAP client prints "DAP
/// DATADDS packet is apparently too short" and returns success with zeros where the
/// answer stopped: NCO 5.1.4 writes those zeros and exits 0; not run against NCO).
/// Ours: one line naming the URL (and the variable), exit 1, no output.
#[test]
fn a_connection_dropped_mid_read_is_an_error_naming_the_url() {
    if is_nco() {
        return;
    }
    served_big_file();
    for answer in [Answer::HalfWithLength, Answer::HalfWithoutLength] {
        let port = proxy(answer, Default::default());
        let s = Scratch::new();
        let fixture_url = format!("http://127.0.0.1:{port}/fixture.nc");
        let big_url = format!("http://127.0.0.1:{port}/big.nc");
        for (op, args, u, why) in [
            (
                "ncks",
                vec!["-O", "-v", "PS,fld_rec"],
                &fixture_url,
                "variable PS",
            ),
            ("ncra", vec!["-O", "-v", "PS"], &fixture_url, "(variable "),
            ("ncks", vec!["-O", "-v", "big"], &big_url, "variable big"),
            ("ncwa", vec!["-O", "-v", "big"], &big_url, "variable big"),
        ] {
            nco(op)
                .current_dir(s.dir())
                .args(&args)
                .arg(u)
                .arg("out.nc")
                .run()
                .clean_failure(u)
                .stderr_contains(why);
            assert_eq!(s.files(), Vec::<String>::new(), "{op} {u}: files left");
        }
    }
}
