//! Job-array mode (`--part I/N` and `--merge`, ours alone: NCO has neither): a run split
//! into parts, each written by its own process, merged into the output the single
//! process writes, whose values are NCO 5.1.4's. Bad parts are refused with one line
//! naming the file, exit 1 and no output.

use crate::common::cdl;
use nco_tests::dump::compare;
use nco_tests::{is_nco, nco, reference, Scratch};
use std::path::Path;

/// `count` record files `m01.nc..` of 3 records each: `time` (days, going on across
/// files), `x(time)` float with decimals, `y(time, lon)` float with a `_FillValue` in
/// some records, `n(time)` int, `lon(lon)` fixed. Returns their paths in order.
fn members(s: &Scratch, count: usize) -> Vec<String> {
    (0..count)
        .map(|f| {
            let rec = |k: usize| f * 3 + k;
            let list = |g: &dyn Fn(usize) -> String| (0..3).map(g).collect::<Vec<_>>().join(", ");
            let time = list(&|k| (rec(k) as f64 + 0.5).to_string());
            let x = list(&|k| format!("{:.3}", (rec(k) as f64 * 0.731).sin() * 10.0));
            let y = list(&|k| {
                let r = rec(k);
                let a = if r % 4 == 1 {
                    "-999".into()
                } else {
                    format!("{:.2}", r as f64 * 1.7)
                };
                format!("{a}, {:.4}, -3.25", 100.0 / (r + 1) as f64)
            });
            let n = list(&|k| (rec(k) * 7 % 11).to_string());
            cdl(
                s,
                &format!("m{:02}", f + 1),
                &format!(
                    "netcdf m {{ dimensions: time = UNLIMITED ; lon = 3 ;
variables:
  double time(time) ; time:units = \"days since 2000-01-01\" ;
  float x(time) ;
  float y(time, lon) ; y:_FillValue = -999.f ;
  int n(time) ;
  float lon(lon) ;
data: time = {time} ; x = {x} ; y = {y} ; n = {n} ; lon = 0, 120, 240 ; }}"
                ),
            )
        })
        .collect()
}

/// `ncra OPTS --part k/parts INPUTS part_k.nc` for every k (in reverse, as an array's
/// tasks may finish in any order); the part files in order.
fn parts(s: &Scratch, op: &str, opts: &[&str], inputs: &[String], count: usize) -> Vec<String> {
    let files: Vec<String> = (1..=count)
        .map(|k| s.arg(&format!("part_{k}.nc")))
        .collect();
    for k in (1..=count).rev() {
        nco(op)
            .args(opts)
            .arg("--part")
            .arg(format!("{k}/{count}"))
            .args(inputs)
            .arg(&files[k - 1])
            .succeeds();
    }
    files
}

/// `op OPTS INPUTS` run whole, by NCO 5.1.4, and split into each of `counts` parts
/// then merged (the part files given in reverse order): the merged output is the
/// whole run's and has NCO's values, within the regrouping of floating-point sums
/// (plan::partial: at most about n·2^-53 of the sum of magnitudes before rounding to
/// float); exactly the whole run's when `exact`.
#[track_caller]
fn split_matches_whole(
    s: &Scratch,
    op: &str,
    opts: &[&str],
    inputs: &[String],
    counts: &[usize],
    exact: bool,
) {
    let whole = s.arg("whole.nc");
    nco(op)
        .arg("-O")
        .args(opts)
        .args(inputs)
        .arg(&whole)
        .succeeds();
    let theirs = s.arg("nco.nc");
    reference(op)
        .arg("-O")
        .args(opts)
        .args(inputs)
        .arg(&theirs)
        .succeeds();
    let all: Vec<String> = opts
        .iter()
        .map(|o| o.to_string())
        .chain(inputs.iter().cloned())
        .collect();
    for &count in counts {
        let mut given = parts(s, op, &["-O"], &all, count);
        given.reverse();
        let merged = s.arg("merged.nc");
        nco(op)
            .args(["-O", "--merge"])
            .args(&given)
            .arg(&merged)
            .succeeds();
        // ncrcat's outputs claim no mean in cell_methods, as NCO 5.1.4's do (README,
        // compatibility notes): their values are compared.
        let vs_nco = compare(&merged, &theirs).rtol(1e-6);
        if op == "ncrcat" {
            vs_nco.without_attributes().equal();
        } else {
            vs_nco.equal();
        }
        if exact {
            compare(&merged, &whole).equal();
        } else {
            compare(&merged, &whole).rtol(1e-6).equal();
        }
    }
}

#[test]
fn ncra_parts_merge_to_the_single_process_output_and_ncos_values() {
    if is_nco() {
        return; // --part and --merge are ours
    }
    let s = Scratch::new();
    let inputs = members(&s, 16);
    let cases: &[(&[&str], bool)] = &[
        (&[], false),
        (&["-y", "max"], true),
        (&["-y", "min"], true),
        (&["-y", "rmssdn"], false),
        (&["-y", "ttl", "-N"], false),
        (&["--mro", "-d", "time,2,40,3"], false),
        (&["-d", "time,5.0,30.0"], false),
        (&["-w", "1,2,3,4,5,6,7,8,1,2,3,4,5,6,7,8"], false),
        (&["-v", "y,n", "-C"], false),
    ];
    for (opts, exact) in cases {
        split_matches_whole(&s, "ncra", opts, &inputs, &[2, 3, 5, 16], *exact);
    }
}

#[test]
fn ncra_merged_integers_counts_and_extremes_are_exact() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 7);
    for opts in [
        &["-v", "n,lon"][..],
        &["-y", "max"],
        &["-y", "mibs"],
        &["-y", "ttl", "-v", "n"],
    ] {
        let whole = s.arg("whole.nc");
        nco("ncra")
            .arg("-O")
            .args(opts)
            .args(&inputs)
            .arg(&whole)
            .succeeds();
        let all: Vec<String> = opts
            .iter()
            .map(|o| o.to_string())
            .chain(inputs.iter().cloned())
            .collect();
        let p = parts(&s, "ncra", &["-O"], &all, 3);
        let merged = s.arg("merged.nc");
        nco("ncra")
            .args(["-O", "--merge"])
            .args(&p)
            .arg(&merged)
            .succeeds();
        compare(&merged, &whole).equal();
    }
}

/// `ncra --merge ARGS out.nc` fails with one line containing `needle`, exit 1, no
/// output created and an existing one untouched (with -O).
#[track_caller]
fn merge_refused(s: &Scratch, args: &[String], needle: &str) {
    let out = s.path("out.nc");
    let _ = std::fs::remove_file(&out);
    nco("ncra")
        .arg("--merge")
        .args(args)
        .arg(&out)
        .run()
        .clean_failure(needle);
    assert!(!out.exists(), "created {}", out.display());
    std::fs::write(&out, b"older output").unwrap();
    nco("ncra")
        .args(["-O", "--merge"])
        .args(args)
        .arg(&out)
        .run()
        .clean_failure(needle);
    assert_eq!(std::fs::read(&out).unwrap(), b"older output");
    std::fs::remove_file(&out).unwrap();
    no_temporaries(s);
}

/// No temporary file is left in the scratch folder.
#[track_caller]
fn no_temporaries(s: &Scratch) {
    let left: Vec<String> = s
        .files()
        .into_iter()
        .filter(|f| f.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn ncra_bad_parts_are_refused_naming_the_file() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 4);
    let p = parts(&s, "ncra", &[], &inputs, 3);
    let other = s.arg("other.nc");
    nco("ncra")
        .args(["-y", "max", "--part", "2/3"])
        .args(&inputs)
        .arg(&other)
        .succeeds();
    let v = |xs: &[&String]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    merge_refused(&s, &v(&[&p[0], &p[2]]), "part 2/3 of run");
    merge_refused(&s, &v(&[&p[0], &p[1], &p[1], &p[2]]), "given twice");
    merge_refused(
        &s,
        &v(&[&p[0], &other, &p[2]]),
        "a part of another run than",
    );
    merge_refused(
        &s,
        &v(&[&p[0], &inputs[0], &p[2]]),
        "not a part file of nco-rs",
    );
    let bytes = std::fs::read(&p[2]).unwrap();
    let cut = s.arg("cut.nc");
    std::fs::write(&cut, &bytes[..bytes.len() - 30]).unwrap();
    merge_refused(
        &s,
        &v(&[&p[0], &p[1], &cut]),
        "truncated or damaged part file",
    );
    // A byte flipped inside an accumulator: refused by its checksum, never merged.
    let mut flipped = bytes.clone();
    flipped[40] ^= 0xa5;
    let bad = s.arg("flipped.nc");
    std::fs::write(&bad, &flipped).unwrap();
    merge_refused(&s, &v(&[&p[0], &p[1], &bad]), "do not match their checksum");
    // The output forgotten: the last part file is not taken as the output.
    let r = nco("ncra")
        .arg("--merge")
        .args(&p)
        .run()
        .clean_failure("is a part file");
    assert!(
        r.stderr.contains("give the output after the part files"),
        "{}",
        r.stderr
    );
    let mut with_opts = vec!["-v".to_string(), "x".to_string()];
    with_opts.extend(p.iter().cloned());
    merge_refused(
        &s,
        &with_opts,
        "takes the run's options from its part files",
    );
    // An input that changed after the parts were written.
    let t = std::fs::File::options()
        .append(true)
        .open(&inputs[3])
        .unwrap();
    t.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30))
        .unwrap();
    drop(t);
    merge_refused(&s, &p, "input changed since the part files were written");
    // What does not split is refused before anything is written.
    let out = s.arg("o.nc");
    nco("ncra")
        .args(["--part", "3/2"])
        .args(&inputs)
        .arg(&out)
        .run()
        .clean_failure("is not I/N");
    nco("ncra")
        .args(["--rec_apn", "--part", "1/2"])
        .args(&inputs)
        .arg(&out)
        .run()
        .clean_failure("--rec_apn");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn ncra_parts_refuse_an_output_their_format_cannot_hold_before_any_work() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let g = crate::common::cdl_nc4(
        &s,
        "g",
        "netcdf g { dimensions: time = UNLIMITED ; variables: double time(time) ; data: time = 1, 2 ; group: sub { variables: float x(time) ; data: x = 1, 2 ; } }",
    );
    let part = s.arg("p1.nc");
    nco("ncra")
        .args(["-7", "--part", "1/2", &g, &g, &part])
        .run()
        .clean_failure("groups need a netCDF-4 output");
    assert!(!std::path::Path::new(&part).exists());
    no_temporaries(&s);
    // Parts of two command lines: the merge says which options differ.
    let inputs = members(&s, 2);
    let (a, b) = (s.arg("a.nc"), s.arg("b.nc"));
    nco("ncra")
        .args(["--part", "1/2"])
        .args(&inputs)
        .arg(&a)
        .succeeds();
    nco("ncra")
        .args(["-y", "max", "--part", "2/2"])
        .args(&inputs)
        .arg(&b)
        .succeeds();
    let r = nco("ncra")
        .args(["--merge", &a, &b])
        .arg(s.arg("o.nc"))
        .run()
        .clean_failure("a part of another run");
    assert!(
        r.stderr
            .contains("options differ: `-y max` here, nothing there"),
        "{}",
        r.stderr
    );
}

#[test]
fn ncra_part_of_an_unreadable_input_writes_no_part_file() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let mut inputs = members(&s, 3);
    let broken = s.arg("broken.nc");
    std::fs::write(&broken, b"CDF\x01 not really").unwrap();
    inputs.push(broken.clone());
    let part = s.arg("part_2.nc");
    nco("ncra")
        .args(["--part", "2/2"])
        .args(&inputs)
        .arg(&part)
        .run()
        .clean_failure("broken.nc");
    assert!(!std::path::Path::new(&part).exists());
    no_temporaries(&s);
}

#[test]
fn nces_parts_merge_to_the_single_process_output_and_ncos_values() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 6);
    let cases: &[(&[&str], bool)] = &[
        (&[], false),
        (&["-y", "max"], true),
        (&["-y", "rmssdn"], false),
        (&["-d", "lon,1,2", "-v", "y"], false),
        (&["-w", "1,2,3,4,5,6"], false),
    ];
    // Eight parts of six members: two parts have no member and merge as nothing.
    for (opts, exact) in cases {
        split_matches_whole(&s, "nces", opts, &inputs, &[2, 4, 8], *exact);
    }
    // A part file of nces is not one of ncra, nor of ncecat.
    let p = parts(&s, "nces", &["-O"], &inputs, 2);
    let out = s.arg("o.nc");
    for op in ["ncra", "ncecat"] {
        nco(op)
            .arg("--merge")
            .args(&p)
            .arg(&out)
            .run()
            .clean_failure(&format!("a part file of nces, not of {op}"));
    }
    assert!(!std::path::Path::new(&out).exists());
}

/// Record files like [`members`]' whose `time` units differ from file to file (hours,
/// then days since another date), so ncrcat rebases later files' times to the first
/// file's units; with a text record variable `c(time, len)`.
fn rebased_members(s: &Scratch, count: usize) -> Vec<String> {
    (0..count)
        .map(|f| {
            let (units, scale) = if f % 2 == 0 {
                ("hours since 2000-01-01", 24.0)
            } else {
                ("days since 1999-12-31", 1.0)
            };
            let day = |k: usize| (f * 3 + k) as f64 + if f % 2 == 0 { 0.0 } else { 1.0 };
            let list = |g: &dyn Fn(usize) -> String| (0..3).map(g).collect::<Vec<_>>().join(", ");
            let time = list(&|k| (day(k) * scale).to_string());
            let x = list(&|k| format!("{:.3}", ((f * 3 + k) as f64).cos()));
            let c = list(&|k| format!("\"r{:02}\"", f * 3 + k));
            cdl(
                s,
                &format!("t{:02}", f + 1),
                &format!(
                    "netcdf t {{ dimensions: time = UNLIMITED ; len = 3 ;
variables:
  double time(time) ; time:units = \"{units}\" ;
  float x(time) ;
  char c(time, len) ;
data: time = {time} ; x = {x} ; c = {c} ; }}"
                ),
            )
        })
        .collect()
}

#[test]
fn ncrcat_and_ncecat_parts_merge_to_the_single_process_output_bit_for_bit() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 16);
    // Concatenation is exact: every merged output is the single process's, bit for bit
    // (and NCO's values).
    let cases: &[&[&str]] = &[
        &[],
        &["-d", "time,2,40,3"],
        &["-d", "time,5.0,30.0"],
        &["-v", "y,n", "-C"],
        &["-d", "lon,1,2", "-d", "time,,,2"],
    ];
    for opts in cases {
        split_matches_whole(&s, "ncrcat", opts, &inputs, &[2, 3, 5, 16, 60], true);
    }
    // Later files' times rebased to the first file's units, and text records.
    let rebased = rebased_members(&s, 5);
    split_matches_whole(&s, "ncrcat", &[], &rebased, &[2, 4], true);
    split_matches_whole(
        &s,
        "ncrcat",
        &["-d", "time,20.0,200.0"],
        &rebased,
        &[3],
        true,
    );
    // ncecat: members stacked along the new record dimension; eight parts of six
    // members leave two parts without a member.
    let six = &inputs[..6];
    for opts in [&[][..], &["-u", "ens", "-d", "lon,0,1"], &["-v", "x,lon"]] {
        split_matches_whole(&s, "ncecat", opts, six, &[2, 4, 8], true);
    }
    // A part of ncrcat is not one of ncra; a flipped byte in a block of records is
    // refused by its checksum, never written.
    let p = parts(&s, "ncrcat", &["-O"], &inputs, 2);
    let out = s.arg("o.nc");
    nco("ncra")
        .arg("--merge")
        .args(&p)
        .arg(&out)
        .run()
        .clean_failure("a part file of ncrcat, not of ncra");
    let mut bytes = std::fs::read(&p[1]).unwrap();
    bytes[40] ^= 0x5a;
    std::fs::write(&p[1], &bytes).unwrap();
    nco("ncrcat")
        .arg("--merge")
        .args(&p)
        .arg(&out)
        .run()
        .clean_failure("do not match their checksum");
    assert!(!std::path::Path::new(&out).exists());
    no_temporaries(&s);
}

#[test]
fn ncwa_parts_share_the_variables_by_size_and_merge_bit_for_bit() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let fixture = [nco_tests::fx()];
    // (Left out: the text variable `name`, whose character codes NCO 5.1.4 averages
    // into "a" where ours writes an empty string, and `stn_val`, whose `coordinates`
    // NCO garbles: README, compatibility notes.)
    let cases: &[&[&str]] = &[
        &["-x", "-v", "name,stn_val"],
        &["-a", "lat,lon", "-w", "gw"],
        &["-y", "max", "-a", "lon"],
        &["-a", "lon", "-B", "orog > 25", "-v", "fld2,fld3,orog"],
        &["-a", "time", "-v", "rec_pck,rec_fill,sc_fill"],
        &["-N", "-a", "lat", "-b"],
    ];
    // Each variable is reduced whole by one part: the single process's bits. Nine
    // parts of fewer large variables leave some parts empty.
    for opts in cases {
        split_matches_whole(&s, "ncwa", opts, &fixture, &[2, 3, 9], true);
    }
    // Refused: appending, and a part of another operator.
    let out = s.arg("o.nc");
    nco("ncwa")
        .args(["-A", "--part", "1/2", &fixture[0], &out])
        .run()
        .clean_failure("not with --part, --merge or mpirun");
    let p = parts(&s, "nces", &["-O"], &members(&s, 2), 2);
    nco("ncwa")
        .arg("--merge")
        .args(&p)
        .arg(&out)
        .run()
        .clean_failure("a part file of nces, not of ncwa");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn ncrcat_parts_carry_netcdf4_strings_and_groups() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs: Vec<String> = (0..4)
        .map(|f| {
            crate::common::cdl_nc4(
                &s,
                &format!("g{f}"),
                &format!(
                    "netcdf g {{ dimensions: time = UNLIMITED ; variables: double time(time) ; \
                     string name(time) ; data: time = {a}, {b} ; name = \"rec {a}\", \"é {b}\" ; \
                     group: sub {{ variables: int64 k(time) ; data: k = {a}, -{b} ; }} }}",
                    a = 2 * f,
                    b = 2 * f + 1
                ),
            )
        })
        .collect();
    split_matches_whole(&s, "ncrcat", &[], &inputs, &[2, 3, 8], true);
}

#[test]
fn ncecat_leaves_the_ccm_base_date_scalars_unstacked_as_nco_does() {
    let s = Scratch::new();
    let cdl_text = |conv: &str| {
        format!(
            "netcdf cv {{ dimensions: time = UNLIMITED ; x = 2 ; variables: double time(time) ; \
             int nbdate ; int nbsec ; int ndbase ; int nsbase ; int ntrk ; int ntrm ; int ntrn ; \
             int date(time) ; float gw(x) ; float plain ; {conv} \
             data: time = 1 ; nbdate = 640224 ; nbsec = 1 ; ndbase = 2 ; nsbase = 3 ; ntrk = 4 ; \
             ntrm = 5 ; ntrn = 6 ; date = 7 ; gw = 1, 2 ; plain = 8 ; }}"
        )
    };
    let with = cdl(&s, "with", &cdl_text(":Conventions = \"CF-1.0\" ;"));
    let without = cdl(&s, "without", &cdl_text(""));
    let out = s.arg("out.nc");
    nco("ncecat").args(["-O", &with, &with, &out]).succeeds();
    let dump = nco_tests::ncdump(&["-h"], &out);
    let h: Vec<&str> = dump.lines().collect();
    for scalar in [
        "nbdate", "nbsec", "ndbase", "nsbase", "ntrk", "ntrm", "ntrn",
    ] {
        let line = format!("int {scalar} ;");
        assert!(h.iter().any(|l| l.trim() == line), "{scalar}: {h:?}");
    }
    for stacked in [
        "int date(record, time) ;",
        "float gw(record, x) ;",
        "float plain(record) ;",
    ] {
        assert!(h.iter().any(|l| l.trim() == stacked), "{stacked}: {h:?}");
    }
    // Without CF/CCM/CCSM Conventions they are stacked like any variable.
    nco("ncecat")
        .args(["-O", &without, &without, &out])
        .succeeds();
    let dump = nco_tests::ncdump(&["-h"], &out);
    assert!(
        dump.lines().any(|l| l.trim() == "int nbdate(record) ;"),
        "{dump}"
    );
}

// ------------------------------------------------------------------------------- MPI

/// `mpirun -np N target/mpi/OP ARGS`.
fn mpi(np: usize, op: &str) -> nco_tests::Cmd {
    nco_tests::mpirun(np, &nco_tests::mpi_bin(op))
}

#[test]
fn mpi_ranks_write_the_merged_parts_output_bit_for_bit() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 16);
    let fixture = vec![nco_tests::fx()];
    for (op, opts) in [
        ("ncwa", &["-x", "-v", "name,stn_val"][..]),
        ("ncwa", &["-a", "lat,lon", "-w", "gw", "-y", "rms"][..]),
        ("ncra", &[][..]),
        ("ncra", &["-y", "rms", "--mro", "-d", "time,1,,4"][..]),
        (
            "ncra",
            &["-w", "1,2,3,4,5,6,7,8,1,2,3,4,5,6,7,8", "-t", "1"][..],
        ),
        ("nces", &[][..]),
        ("nces", &["-y", "max", "-v", "y"][..]),
        ("ncrcat", &[][..]),
        ("ncrcat", &["-d", "time,1,,4", "-v", "y"][..]),
        ("ncecat", &["-u", "ens"][..]),
    ] {
        let inputs = if op == "ncwa" { &fixture } else { &inputs };
        let theirs = s.arg("nco.nc");
        reference(op)
            .arg("-O")
            .args(opts)
            .args(inputs)
            .arg(&theirs)
            .succeeds();
        let all: Vec<String> = opts
            .iter()
            .map(|o| o.to_string())
            .chain(inputs.iter().cloned())
            .collect();
        for np in [2, 3] {
            let ranks = s.arg("ranks.nc");
            mpi(np, op).arg("-O").args(&all).arg(&ranks).succeeds();
            // The ranks' parts are merged in rank order, as --merge merges part files:
            // the same bits.
            let p = parts(&s, op, &["-O"], &all, np);
            let merged = s.arg("merged.nc");
            nco(op)
                .args(["-O", "--merge"])
                .args(&p)
                .arg(&merged)
                .succeeds();
            compare(&ranks, &merged).equal();
            let vs_nco = compare(&ranks, &theirs).rtol(1e-6);
            if op == "ncrcat" {
                vs_nco.without_attributes().equal();
            } else {
                vs_nco.equal();
            }
        }
        // One rank is one process.
        let one = s.arg("one.nc");
        mpi(1, op).arg("-O").args(&all).arg(&one).succeeds();
        let whole = s.arg("whole.nc");
        nco(op).arg("-O").args(&all).arg(&whole).succeeds();
        compare(&one, &whole).equal();
    }
}

#[test]
fn mpi_a_failing_rank_stops_every_rank_with_nothing_written() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let mut inputs = members(&s, 4);
    // The last member's data cut short: its header reads, its records do not, so only
    // the rank whose share holds it fails.
    let last = inputs.pop().unwrap();
    let bytes = std::fs::read(&last).unwrap();
    let cut = s.arg("cut.nc");
    std::fs::write(&cut, &bytes[..bytes.len() - 8]).unwrap();
    inputs.push(cut);
    let out = s.path("out.nc");
    std::fs::write(&out, b"older output").unwrap();
    let r = mpi(2, "ncra").arg("-O").args(&inputs).arg(&out).run();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("ncra: ERROR rank 1 of 2: ") && r.stderr.contains("cut.nc"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("ncra: ERROR rank 0 of 2: stopped, rank 1 failed"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"older output");
    no_temporaries(&s);
    // Members of different shapes: every rank names the file.
    let odd = cdl(
        &s,
        "odd",
        "netcdf odd { dimensions: time = UNLIMITED ; lon = 2 ; variables: double time(time) ; float x(time) ; float y(time, lon) ; int n(time) ; float lon(lon) ; data: time = 1 ; x = 1 ; y = 1, 2 ; n = 1 ; lon = 0, 1 ; }",
    );
    let r = mpi(2, "nces")
        .arg("-O")
        .args(&inputs[..2])
        .arg(&odd)
        .arg(&out)
        .run();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    for rank in 0..2 {
        assert!(
            r.stderr
                .contains(&format!("nces: ERROR rank {rank} of 2: ")),
            "{}",
            r.stderr
        );
    }
    assert!(r.stderr.contains("odd.nc"), "{}", r.stderr);
    assert_eq!(std::fs::read(&out).unwrap(), b"older output");
}

#[test]
fn mpi_what_does_not_split_is_refused_on_every_rank() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 2);
    let out = s.arg("out.nc");
    let p = parts(&s, "ncra", &[], &inputs, 2);
    let no: &[String] = &[];
    let stations = s.path("st.txt");
    std::fs::write(&stations, "lon=0 a.nc\n").unwrap();
    let list: Vec<String> = ["--list".to_string(), stations.display().to_string()]
        .into_iter()
        .chain(inputs.iter().cloned())
        .collect();
    let merge: Vec<String> = ["--merge".to_string()]
        .into_iter()
        .chain(p.iter().cloned())
        .collect();
    for (program, args, needle) in [
        (
            nco_tests::mpi_bin("ncrcat"),
            &list[..],
            "ncrcat --list does not run across MPI ranks yet",
        ),
        (
            nco_tests::bin("ncbo"),
            no,
            "ncbo does not run across MPI ranks yet",
        ),
        (
            nco_tests::bin("ncks"),
            no,
            "ncks does not run across MPI ranks yet",
        ),
        // One process merges; under mpirun every rank would.
        (
            nco_tests::mpi_bin("ncra"),
            &merge[..],
            "ncra --merge does not run across MPI ranks yet",
        ),
        // A build without the feature would write the whole output on every rank.
        (nco_tests::bin("ncra"), no, "this build has no MPI support"),
    ] {
        let ins: &[String] = if args.is_empty() { &inputs } else { &[] };
        let r = nco_tests::mpirun(2, &program)
            .args(args)
            .args(ins)
            .arg(&out)
            .run();
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        // Each rank refuses at once; mpirun may end the other before it prints.
        assert!(
            (0..2).any(|rank| r
                .stderr
                .contains(&format!("ERROR rank {rank} of 2: {needle}"))),
            "{}",
            r.stderr
        );
        assert!(!std::path::Path::new(&out).exists());
    }
    // The feature changes nothing outside mpirun: -r names Open MPI.
    let r = nco_tests::Cmd::program(nco_tests::mpi_bin("ncra"))
        .arg("-r")
        .succeeds();
    assert!(
        r.stdout.contains("Linked to MPI library version Open MPI"),
        "{}",
        r.stdout
    );
}

#[test]
fn merged_outputs_record_the_run_and_misuses_are_named() {
    if is_nco() {
        return;
    }
    let s = Scratch::new();
    let inputs = members(&s, 3);
    let sh = |cmd: String| nco_tests::tool("sh").args(["-c", &cmd]).succeeds();
    let ncrcat = nco_tests::bin("ncrcat").display().to_string();
    let list = inputs.join(" ");
    // Input names from standard input: the merged output records them, as the single
    // run does, and its history names the run the parts computed.
    let (whole, merged) = (s.arg("whole.nc"), s.arg("merged.nc"));
    sh(format!(
        "echo '{list}' | '{ncrcat}' -O -d time,1,7 '{whole}'"
    ));
    let p: Vec<String> = (1..=2).map(|k| s.arg(&format!("p{k}.nc"))).collect();
    for (k, part) in p.iter().enumerate() {
        sh(format!(
            "echo '{list}' | '{ncrcat}' -O -d time,1,7 --part {}/2 '{part}'",
            k + 1
        ));
    }
    nco("ncrcat")
        .args(["-O", "--merge", &p[0], &p[1], &merged])
        .succeeds();
    let gatts = |f: &str| -> Vec<String> {
        nco_tests::ncdump(&["-h"], f)
            .lines()
            .filter(|l| l.contains("nco_input_file"))
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert_eq!(gatts(&merged), gatts(&whole));
    assert_eq!(gatts(&merged).len(), 2, "{:?}", gatts(&merged));
    let dump = nco_tests::ncdump(&["-h"], &merged);
    assert!(
        dump.contains("--merge")
            && dump.contains("; merging the parts of: ")
            && dump.contains("ncrcat -O -d time,1,7 "),
        "{dump}"
    );
    compare(&merged, &whole).without_attributes().equal();
    // Under mpirun the other ranks would see no input names: refused on every rank.
    let r = nco_tests::tool("sh")
        .args([
            "-c",
            &format!(
                "echo '{list}' | mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --mca pml ob1 -np 2 '{}' -O '{}'",
                nco_tests::mpi_bin("ncrcat").display(),
                s.arg("ranks.nc")
            ),
        ])
        .run();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("standard input reaches rank 0 only"),
        "{}",
        r.stderr
    );
    // A folder given as a part file, and parts whose inputs are not found from here.
    let folder = s.path("folder");
    std::fs::create_dir(&folder).unwrap();
    let out = s.arg("o.nc");
    nco("ncrcat")
        .arg("--merge")
        .arg(&folder)
        .args(&p)
        .arg(&out)
        .run()
        .clean_failure("is a folder, not a part file");
    let sub = s.path("run");
    std::fs::create_dir(&sub).unwrap();
    let rel: Vec<String> = inputs
        .iter()
        .map(|f| format!("../{}", Path::new(f).file_name().unwrap().to_str().unwrap()))
        .collect();
    let q: Vec<String> = (1..=2).map(|k| format!("q{k}.nc")).collect();
    for (k, part) in q.iter().enumerate() {
        nco("ncrcat")
            .current_dir(&sub)
            .args(["--part", &format!("{}/2", k + 1)])
            .args(&rel)
            .arg(part)
            .succeeds();
    }
    let q_abs: Vec<String> = q
        .iter()
        .map(|f| sub.join(f).display().to_string())
        .collect();
    nco("ncrcat")
        .current_dir(&sub)
        .arg("--merge")
        .args(&q)
        .arg("here.nc")
        .succeeds();
    nco("ncrcat")
        .arg("--merge")
        .args(&q_abs)
        .arg(s.arg("there.nc"))
        .current_dir(&sub.join(".."))
        .run()
        .clean_failure("relative to the folder the parts ran in");
    // Two runs compared in words leave out what the merge's own command line gives.
    let (a, b) = (s.arg("a.nc"), s.arg("b.nc"));
    nco("ncrcat")
        .args(["-O", "-t", "1", "--part", "1/2"])
        .args(&inputs)
        .arg(&a)
        .succeeds();
    nco("ncrcat")
        .args(["-v", "x", "--part", "2/2"])
        .args(&inputs)
        .arg(&b)
        .succeeds();
    let r = nco("ncrcat")
        .args(["--merge", &a, &b, &out])
        .run()
        .clean_failure("a part of another run");
    assert!(
        r.stderr
            .contains("options differ: `-v x` here, nothing there"),
        "{}",
        r.stderr
    );
}
