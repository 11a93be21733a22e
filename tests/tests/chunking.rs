//! NCO's chunking of a netCDF3 input's variables into a netCDF-4 output (NCO 5.1.4's
//! default there: policy `all`, Rew's balanced shape for rank 3, the lefter product
//! otherwise; docs/chunking.md), with and without `-L`, `--cnk_byt`, hyperslabs and
//! other maps, on `tests/data/chunks.cdl`. The shapes are NCO 5.1.4's (`ncdump -hs`);
//! `NCO_RS_BIN_DIR=/usr/bin` checks them against it.

use nco_tests::{nco, storage, Scratch};

/// `path: _ChunkSizes` (or `contiguous`) of every variable, in name order.
fn shapes(file: &str) -> Vec<String> {
    storage(file)
        .into_iter()
        .map(|line| {
            let (path, rest) = line.split_once(": ").unwrap_or((&line, ""));
            let chunks = rest
                .split("; ")
                .find_map(|kv| kv.strip_prefix("_ChunkSizes="))
                .map_or("contiguous".to_string(), str::to_string);
            format!("{path}: {chunks}")
        })
        .collect()
}

/// `tests/data/chunks.cdl` as a netCDF3 file in `s`.
fn source(s: &Scratch) -> String {
    let cdl = std::fs::read_to_string(nco_tests::data_dir().join("chunks.cdl")).unwrap();
    crate::common::cdl(s, "chunks", &cdl)
}

fn chunked(s: &Scratch, args: &[&str]) -> Vec<String> {
    let src = source(s);
    let out = s.arg("out.nc");
    nco("ncks")
        .arg("-O")
        .args(args)
        .arg(&src)
        .arg(&out)
        .succeeds();
    shapes(&out)
}

#[test]
fn netcdf3_inputs_get_ncos_chunk_shapes() {
    let s = Scratch::new();
    let want = |list: &[&str]| list.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        chunked(&s, &["-4"]),
        want(&[
            "/b3: 2048, 2, 4",
            "/f2: 100, 200",
            "/fix3: 32, 64, 128",
            "/ps: 1024, 2, 4",
            "/r1: 512",
            "/small: contiguous",
            "/t3: 32, 64, 128",
            "/t4: 4, 32, 64, 128",
        ])
    );
    // Deflated variables must be chunked, however small.
    let l1 = chunked(&s, &["-4", "-L", "1"]);
    assert!(l1.contains(&"/small: 200".to_string()), "{l1:?}");
    assert_eq!(
        chunked(&s, &["-4", "--cnk_byt=65536"]),
        want(&[
            "/b3: 256, 2, 4",
            "/f2: 100, 200",
            "/fix3: 8, 32, 64",
            "/ps: 128, 2, 4",
            "/r1: 512",
            "/small: contiguous",
            "/t3: 4, 45, 91",
            "/t4: 1, 32, 64, 128",
        ])
    );
    // A record hyperslab: shapes of the records selected.
    assert_eq!(
        chunked(&s, &["-4", "-d", "time,0,4"]),
        want(&[
            "/b3: 1620, 2, 4",
            "/f2: 100, 200",
            "/fix3: 32, 64, 128",
            "/ps: 810, 2, 4",
            "/r1: 5",
            "/small: contiguous",
            "/t3: 25, 64, 128",
            "/t4: 4, 32, 64, 128",
        ])
    );
    assert_eq!(
        chunked(&s, &["-4", "--cnk_map=prd", "--cnk_scl=1000"]),
        want(&[
            "/b3: 8, 2, 4",
            "/f2: 32, 32",
            "/fix3: 10, 10, 10",
            "/ps: 8, 2, 4",
            "/r1: 8",
            "/small: contiguous",
            "/t3: 8, 10, 10",
            "/t4: 6, 6, 6, 6",
        ])
    );
}

#[test]
fn ncpdq_chunk_sizes_follow_their_dimensions() {
    let s = Scratch::new();
    let src = source(&s);
    let out = s.arg("out.nc");
    nco("ncpdq")
        .args(["-O", "-4", "-a", "lon,lat", "-v", "fix3,t3"])
        .arg(&src)
        .arg(&out)
        .succeeds();
    let got = shapes(&out);
    assert!(got.contains(&"/fix3: 32, 128, 64".to_string()), "{got:?}");
    assert!(got.contains(&"/t3: 32, 128, 64".to_string()), "{got:?}");
}
