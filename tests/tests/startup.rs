//! libnetcdf (and the libhdf5 it links) is loaded the first time a file needs it, not
//! linked (nco-h5's `syslib`): a run on netCDF3 files never maps the 46 libraries and
//! their constructors, and a system without a loadable libnetcdf still runs on netCDF3
//! files and says in one line why a netCDF-4 file cannot be read.

use nco_tests::{bin, fixture, fixture_nc4, is_nco, nco, Cmd, Scratch};

/// Our operator with our own netCDF3 reader and writer (whatever the environment says:
/// `.ci/run` runs the suite a second time with every read through libnetcdf).
fn own_io(op: &str) -> Cmd {
    nco(op)
        .env("NCO_RS_NO_MMAP", "0")
        .env("NCO_RS_LIB_WRITE", "0")
}

/// `cmd -O -v lat INPUT OUT`: the smallest extraction.
fn extract(cmd: Cmd, input: &std::path::Path, out: &std::path::Path) -> Cmd {
    cmd.args(["-O", "-v", "lat"]).arg(input).arg(out)
}

/// `cmd` fails with exit 1, one line naming every one of `needles`, and no `out`.
#[track_caller]
fn refused(cmd: Cmd, needles: &[&str], out: &std::path::Path) {
    let r = cmd.fails_with_code(1);
    let err = r.stderr.trim();
    assert_eq!(err.lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{n} not in: {err}");
    }
    assert!(!out.exists(), "{} written", out.display());
}

/// The libraries an executable names as NEEDED (`objdump -p`, binutils).
fn needed(exe: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("objdump")
        .arg("-p")
        .arg(exe)
        .output()
        .expect("objdump (binutils) runs");
    assert!(out.status.success(), "objdump -p {}", exe.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("NEEDED"))
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn operators_do_not_link_libnetcdf_or_libhdf5() {
    if is_nco() {
        return; // NCO links them; this is a property of our build
    }
    for op in [
        "ncks", "ncra", "ncrcat", "nces", "ncecat", "ncwa", "ncbo", "ncap2", "ncpdq", "ncatted",
        "ncrename", "ncflint",
    ] {
        let libs = needed(&bin(op));
        assert!(
            libs.iter().any(|l| l.starts_with("libc.so")),
            "{op}: {libs:?}"
        );
        assert!(
            !libs
                .iter()
                .any(|l| l.contains("netcdf") || l.contains("hdf5")),
            "{op} links {libs:?}"
        );
    }
}

/// A netCDF3 run does not load libnetcdf; a netCDF-4 input does. The dynamic loader's
/// own report (`LD_DEBUG=files`, every object it opens, on standard error) tells.
#[test]
fn netcdf3_runs_never_load_libnetcdf() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let out = s.path("one.nc");
    let r = extract(own_io("ncks").env("LD_DEBUG", "files"), fixture(), &out).succeeds();
    assert!(std::path::Path::new(&out).exists());
    assert!(
        r.stderr.contains("libc.so"),
        "LD_DEBUG reported nothing: {}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("libnetcdf"),
        "libnetcdf loaded for a netCDF3 run"
    );
    // A netCDF-4 input loads it.
    let r = extract(nco("ncks").env("LD_DEBUG", "files"), fixture_nc4(), &out).succeeds();
    assert!(
        r.stderr.contains("libnetcdf"),
        "netCDF-4 input without libnetcdf?"
    );
}

/// `NCO_RS_LIBNETCDF` naming a library that is not there, or one that loads but lacks
/// libnetcdf's functions (libm): a one-line error naming it (and the missing function),
/// exit 1, no output; no quiet fallback to the system's library.
#[test]
fn an_unusable_libnetcdf_is_one_line_naming_it() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let out = s.path("o.nc");
    let with_lib = |lib: &str| nco("ncks").env("NCO_RS_LIBNETCDF", lib);
    let nc4 = fixture_nc4().to_string_lossy().into_owned();
    refused(
        extract(
            with_lib("/nonexistent/libnetcdf.so.99"),
            fixture_nc4(),
            &out,
        ),
        &["/nonexistent/libnetcdf.so.99", &nc4],
        &out,
    );
    refused(
        extract(with_lib("libm.so.6"), fixture_nc4(), &out),
        &["libm.so.6", "nc_close", &nc4],
        &out,
    );
    // The same library choice does not matter to netCDF3 files read and written by
    // our own engine; through libnetcdf it is the same one-line error.
    extract(
        own_io("ncks").env("NCO_RS_LIBNETCDF", "libm.so.6"),
        fixture(),
        &out,
    )
    .succeeds();
    std::fs::remove_file(&out).expect("the output of the run above");
    refused(
        extract(
            with_lib("libm.so.6").env("NCO_RS_NO_MMAP", "1"),
            fixture(),
            &out,
        ),
        &["libm.so.6"],
        &out,
    );
}
