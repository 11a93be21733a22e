//! Helpers shared by the test modules (`crate::common`): small inputs built with
//! `ncgen` from CDL text, and the bad-input contract.

use std::path::Path;

use nco_tests::{assert_same_bytes, is_nco, nco, tool, Scratch};

/// Write `text` to `<name>.cdl` in the scratch folder, build `<name>.nc` from it with
/// `ncgen` (classic format) and return the path of the netCDF file.
#[track_caller]
pub fn cdl(s: &Scratch, name: &str, text: &str) -> String {
    ncgen(s, name, text, &[])
}

/// [`cdl`] into a netCDF-4 file (`ncgen -k nc4`: groups, strings, several unlimited
/// dimensions, chunking and filters).
#[track_caller]
pub fn cdl_nc4(s: &Scratch, name: &str, text: &str) -> String {
    ncgen(s, name, text, &["-k", "nc4"])
}

#[track_caller]
fn ncgen(s: &Scratch, name: &str, text: &str, kind: &[&str]) -> String {
    let src = s.path(&format!("{name}.cdl"));
    std::fs::write(&src, text).expect("write CDL");
    let out = s.arg(&format!("{name}.nc"));
    tool("ncgen")
        .args(kind)
        .args(["-o", &out])
        .arg(&src)
        .succeeds();
    out
}

/// `ncks -C -H --trd --no_blank -s FMT -v VAR FILE` (missing values printed as the
/// fill value), last line.
#[track_caller]
pub fn raw(file: &str, var: &str, format: &str) -> String {
    nco("ncks")
        .args([
            "-C",
            "-H",
            "--trd",
            "--no_blank",
            "-s",
            format,
            "-v",
            var,
            file,
        ])
        .succeeds()
        .stdout_last_line()
        .to_string()
}

/// The lines of `ncdump -h FILE` that contain `needle` (global attributes, which
/// hold the command line, excluded), tabs removed, joined by `" | "`.
#[track_caller]
pub fn header_lines(file: &str, needle: &str) -> String {
    nco_tests::ncdump(&["-h"], file)
        .lines()
        .filter(|l| l.contains(needle) && !l.trim_start().starts_with(':'))
        .map(|l| l.replace('\t', ""))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The bad-input contract of every operator: `op ARGS OUT` exits 1 with a one-line
/// error naming `needle` (for NCO, whose wording differs, `nco_needle`), creates no
/// output (and, for us, leaves no temporary file), and with `-O` over an existing
/// output leaves that file untouched.
#[track_caller]
pub fn bad_input(op: &str, args: &[&str], needle: &str, nco_needle: &str) {
    let want = if is_nco() { nco_needle } else { needle };
    let s = Scratch::new();
    let out = s.path("out.nc");
    nco(op).args(args).arg(&out).run().clean_failure(want);
    assert!(!out.exists(), "{op} {args:?}: created {}", out.display());
    if !is_nco() {
        // NCO leaves `out.nc.pid<N>.<op>.tmp` behind; we leave nothing.
        assert_eq!(s.files(), Vec::<String>::new(), "{op} {args:?}: leftovers");
    }
    let before = b"previous output, not netCDF".to_vec();
    std::fs::write(&out, &before).expect("write old output");
    nco(op)
        .arg("-O")
        .args(args)
        .arg(&out)
        .run()
        .clean_failure(want);
    assert_same_bytes(Path::new(&out), &before);
}

/// The data line `name = ... ;` of `ncdump -v name file`, blanks squeezed.
#[track_caller]
pub fn data(file: &str, name: &str) -> String {
    let text = nco_tests::ncdump(&["-v", name], file);
    let body = text.split("data:").nth(1).unwrap_or("");
    let start = body
        .find(&format!(" {name} ="))
        .unwrap_or_else(|| panic!("{name} not in {text}"));
    let rest = &body[start..];
    let end = rest.find(';').unwrap_or(rest.len());
    rest[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}
