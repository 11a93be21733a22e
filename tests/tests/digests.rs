//! ncks's `-b` unformatted binary file and its `--md5_dgs` / `--md5_wrt_att` MD5
//! digests, on our fixture (tests/data/fixture.cdl) and the strings fixture. The
//! digests quoted are NCO 5.1.4's (`NCO_RS_BIN_DIR=/usr/bin` runs them against it);
//! each is also checked against `md5sum` of the bytes it digests.

use nco_tests::{fx, is_nco, nco, strings_fixture, tool, Scratch};

/// NCO 5.1.4's digest of the fixture's `fld1_int = 7, -3, 12, 100000` (NC_INT).
const MD5_FLD1_INT: &str = "94c6a0c809d52146f15b794db09feae0";

/// The bytes of the values as this machine holds them.
fn ne<T: Copy, const N: usize>(xs: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    xs.iter().flat_map(|&x| f(x)).collect()
}

/// `md5sum FILE`'s digest.
fn md5sum(file: &str) -> String {
    let r = tool("md5sum").arg(file).succeeds();
    r.stdout
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn binary_file_holds_the_extracted_values_one_after_the_other() {
    let s = Scratch::new();
    let (bin, out) = (s.arg("v.bin"), s.arg("out.nc"));
    nco("ncks")
        .args(["-O", "-C", "-v", "fld1_sht,fld1_int,name,lon", "-b", &bin])
        .args([&fx(), &out])
        .succeeds();
    let mut want = ne(&[7i32, -3, 12, 100000], i32::to_ne_bytes);
    want.extend(ne(&[-2i16, 0, 5, 32000], i16::to_ne_bytes));
    want.extend(ne(&[0f32, 90., 180., 270.], f32::to_ne_bytes));
    want.extend(b"fixture\0");
    assert_eq!(std::fs::read(&bin).expect("binary file"), want);
    assert!(std::path::Path::new(&out).exists(), "the netCDF output too");
}

/// Into a netCDF3 output without `-d`, the fixed variables come first (NCO's order of
/// copying); a hyperslab, or a netCDF-4 output, keeps the output's order.
#[test]
fn binary_file_order_follows_ncos_copy_order() {
    let s = Scratch::new();
    let (bin, out) = (s.arg("v.bin"), s.arg("out.nc"));
    let run = |extra: &[&str]| {
        nco("ncks")
            .args(["-O", "-C", "-v", "fld_rec,sc_int", "-b", &bin])
            .args(extra)
            .args([&fx(), &out])
            .succeeds();
        std::fs::read(&bin).expect("binary file")
    };
    let recs = |n: usize| {
        ne(
            &[10i32, 20, 30, 40, 50, 60, 70, 80, 90, 100][..n],
            i32::to_ne_bytes,
        )
    };
    let seven = 7i32.to_ne_bytes().to_vec();
    assert_eq!(run(&[]), [seven.clone(), recs(10)].concat(), "fixed first");
    assert_eq!(run(&["-d", "time,0,1"]), [recs(2), seven.clone()].concat());
    assert_eq!(run(&["-4"]), [recs(10), seven].concat(), "netCDF-4");
}

#[test]
fn md5_digests_are_reported_at_debug_level_1_and_written_as_attributes() {
    let s = Scratch::new();
    let (bin, out) = (s.arg("v.bin"), s.arg("out.nc"));
    let r = nco("ncks")
        .args([
            "-O",
            "-D",
            "1",
            "--md5_dgs",
            "-C",
            "-v",
            "fld1_int",
            "-b",
            &bin,
        ])
        .args([&fx(), &out])
        .succeeds();
    let line = format!("INFO MD5(fld1_int) = {MD5_FLD1_INT}");
    assert!(r.stderr.contains(&line), "{}", r.stderr);
    assert_eq!(
        md5sum(&bin),
        MD5_FLD1_INT,
        "the digest of the binary file's bytes"
    );
    // Without -D the digest is computed but not shown; printing digests too.
    let quiet = nco("ncks")
        .args(["-O", "--md5_dgs", "-C", "-v", "fld1_int", &fx(), &out])
        .succeeds();
    assert!(!quiet.stderr.contains("MD5("), "{}", quiet.stderr);
    let printed = nco("ncks")
        .args([
            "-D",
            "1",
            "--md5_digest",
            "-C",
            "-H",
            "-v",
            "fld1_int",
            &fx(),
        ])
        .succeeds();
    assert!(printed.stderr.contains(&line), "{}", printed.stderr);
    // --md5_wrt_att: the attribute, replaced (not repeated) when the output is digested again.
    let again = s.arg("again.nc");
    for (src, dst) in [(fx(), out.clone()), (out.clone(), again.clone())] {
        nco("ncks")
            .args(["-O", "--md5_wrt_att", "-C", "-v", "fld1_int", &src, &dst])
            .succeeds();
    }
    let header = nco("ncks")
        .args(["-m", "-v", "fld1_int", &again])
        .succeeds();
    let attr = format!("fld1_int:MD5 = \"{MD5_FLD1_INT}\" ;");
    assert_eq!(header.stdout.matches(&attr).count(), 1, "{}", header.stdout);
}

/// The digest is of the hyperslab: `-d lon,1,2` digests -3, 12.
#[test]
fn md5_digest_is_of_the_hyperslab() {
    let s = Scratch::new();
    let (bytes, out) = (s.path("want.bin"), s.arg("out.nc"));
    std::fs::write(&bytes, ne(&[-3i32, 12], i32::to_ne_bytes)).expect("write bytes");
    let want = md5sum(&bytes.to_string_lossy());
    let r = nco("ncks")
        .args([
            "-O",
            "-D",
            "1",
            "--md5_dgs",
            "-C",
            "-v",
            "fld1_int",
            "-d",
            "lon,1,2",
        ])
        .args([&fx(), &out])
        .succeeds();
    assert!(
        r.stderr.contains(&format!("MD5(fld1_int) = {want}")),
        "{}",
        r.stderr
    );
}

/// NC_STRING: NCO 5.1.4 digests the strings' addresses (a digest that changes from run
/// to run) and writes pointers into `-b` files. Ours digests each string's bytes and a
/// NUL, and refuses the variable in a binary file (README, compatibility notes).
#[test]
fn string_variables_digest_their_text_and_are_refused_in_binary_files() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let (bytes, out, bin) = (s.path("want.bin"), s.arg("out.nc"), s.arg("v.bin"));
    std::fs::write(&bytes, b"s1\0s two\0\0").expect("write bytes");
    let want = md5sum(&bytes.to_string_lossy());
    let input = strings_fixture().to_string_lossy().into_owned();
    let r = nco("ncks")
        .args(["-O", "-D", "1", "--md5_dgs", "-v", "label", &input, &out])
        .succeeds();
    assert!(
        r.stderr.contains(&format!("MD5(label) = {want}")),
        "{}",
        r.stderr
    );
    std::fs::remove_file(&out).expect("remove output");
    nco("ncks")
        .args(["-O", "-v", "label", "-b", &bin, &input, &out])
        .run()
        .clean_failure("label");
    assert_eq!(
        s.files(),
        ["want.bin"],
        "no output, no binary file, no leftovers"
    );
}

#[test]
fn bad_binary_file_without_an_output_or_in_a_missing_folder() {
    let s = Scratch::new();
    let bin = s.arg("v.bin");
    let want = if is_nco() {
        "Native binary files"
    } else {
        "-b"
    };
    nco("ncks")
        .args(["-b", &bin, "-v", "fld1_int", &fx()])
        .run()
        .clean_failure(want);
    let out = s.arg("out.nc");
    let missing = s.arg("no/such/dir/v.bin");
    let want = if is_nco() {
        "binary output file"
    } else {
        "no/such/dir"
    };
    nco("ncks")
        .args(["-O", "-b", &missing, "-v", "fld1_int", &fx(), &out])
        .run()
        .clean_failure(want);
    assert!(
        !std::path::Path::new(&out).exists(),
        "no netCDF output either"
    );
    if !is_nco() {
        assert_eq!(s.files(), Vec::<String>::new(), "no leftovers");
    }
}

/// A `-b` file that cannot replace its path (a folder, the netCDF output itself) is
/// refused before anything is written: the old output stays.
#[test]
fn bad_binary_targets_leave_the_old_output() {
    if is_nco() {
        return; // NCO 5.1.4 writes the output and fails on the binary file after.
    }
    let s = Scratch::new();
    let out = s.arg("out.nc");
    std::fs::write(&out, b"old output").expect("old output");
    std::fs::create_dir(s.path("dir")).expect("folder");
    for (bin, why) in [
        (s.arg("dir"), "is a folder"),
        (out.clone(), "is the netCDF output"),
    ] {
        nco("ncks")
            .args(["-O", "-b", &bin, "-v", "fld1_int", &fx(), &out])
            .run()
            .clean_failure(why);
        assert_eq!(std::fs::read(&out).expect("output"), b"old output");
    }
    assert_eq!(s.files(), ["dir", "out.nc"], "no temporary files");
}

/// Into netCDF-4 classic, NC_USHORT is stored as NC_INT: the `MD5` attribute is the
/// digest of the stored values, the one a digest of the output gives (NCO 5.1.4's).
/// Into netCDF3, NCO's attribute is of the unconverted values; ours still of the
/// stored ones (README, compatibility notes).
#[test]
fn md5_attribute_is_of_the_stored_type() {
    let s = Scratch::new();
    let input = s.arg("types.nc");
    tool("ncgen")
        .args(["-k", "nc4", "-o", &input])
        .arg(nco_tests::data_dir().join("nc4types.cdl"))
        .succeeds();
    let out = s.arg("out.nc");
    for fmt in ["-7", "-3"] {
        nco("ncks")
            .args(["-O", fmt, "--md5_wrt_att", "-C", "-v", "us", &input, &out])
            .succeeds();
        let again = nco("ncks")
            .args(["-D", "1", "--md5_dgs", "-C", "-H", "-v", "us", &out])
            .succeeds();
        let digest = again
            .stderr
            .lines()
            .find_map(|l| l.split("MD5(us) = ").nth(1))
            .unwrap_or_else(|| panic!("no digest in {}", again.stderr))
            .to_string();
        let header = nco("ncks").args(["-m", "-v", "us", &out]).succeeds().stdout;
        assert!(header.contains("int us("), "{header}");
        let same = header.contains(&format!("us:MD5 = \"{digest}\""));
        assert_eq!(same, fmt == "-7" || !is_nco(), "{fmt}: {digest}\n{header}");
    }
}

/// `--md5_dgs` of the multi-file operators (ncrcat, ncra, nces, ncecat): at `-D 1`, the
/// digest of each variable of the output as written, worded as ncks's. NCO 5.1.4
/// accepts the option there, announces digests and computes none (README,
/// compatibility notes).
#[test]
fn multi_file_operators_digest_their_outputs() {
    let s = Scratch::new();
    let out = s.arg("out.nc");
    let digest_of = |bytes: Vec<u8>| {
        let f = s.arg("bytes.bin");
        std::fs::write(&f, bytes).expect("bytes");
        md5sum(&f)
    };
    let recs: Vec<i32> = (1..=10).map(|i| 10 * i).collect();
    let twice: Vec<i32> = recs.iter().chain(&recs).copied().collect();
    let fld1 = [7i32, -3, 12, 100000];
    // ncecat stacks every variable along a new record dimension.
    let fld1_twice = digest_of(ne(&[fld1, fld1].concat(), i32::to_ne_bytes));
    let cases = [
        (
            "ncrcat",
            digest_of(ne(&twice, i32::to_ne_bytes)),
            MD5_FLD1_INT.to_string(),
        ),
        (
            "ncra",
            digest_of(ne(&[55i32], i32::to_ne_bytes)),
            MD5_FLD1_INT.into(),
        ),
        (
            "nces",
            digest_of(ne(&recs, i32::to_ne_bytes)),
            MD5_FLD1_INT.into(),
        ),
        (
            "ncecat",
            digest_of(ne(&twice, i32::to_ne_bytes)),
            fld1_twice,
        ),
    ];
    for (op, fld_rec, fld1_int) in cases {
        let r = nco(op)
            .args(["-O", "-D", "1", "--md5_dgs", "-C", "-v", "fld_rec,fld1_int"])
            .args([&fx(), &fx(), &out])
            .succeeds();
        assert!(
            r.stderr
                .contains(&format!("{op}: INFO Will perform MD5 digests")),
            "{op}: {}",
            r.stderr
        );
        if is_nco() {
            assert!(!r.stderr.contains("MD5(fld_rec)"), "{op}: {}", r.stderr);
            continue;
        }
        let line = |v: &str, d: &str| format!("{op}: INFO MD5({v}) = {d}");
        assert!(
            r.stderr.contains(&line("fld1_int", &fld1_int)),
            "{op}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(&line("fld_rec", &fld_rec)),
            "{op}: {}",
            r.stderr
        );
        // Without -D, nothing is reported.
        let quiet = nco(op)
            .args(["-O", "--md5_dgs", "-C", "-v", "fld_rec", &fx(), &fx(), &out])
            .succeeds();
        assert!(!quiet.stderr.contains("MD5"), "{op}: {}", quiet.stderr);
    }
}
