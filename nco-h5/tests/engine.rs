//! The prototype engine against libnetcdf on files libnetcdf writes: reads (whole,
//! hyperslabs, one value, both chunk indexes), direct chunk writes read back by
//! libnetcdf, and damaged chunks reported as errors.

use nco_h5::index::{H5File, IndexBy};
use nco_h5::read::{read_sel, read_slab};
use nco_h5::write::RowsWrite;

/// v(t, y, x) floats, t unlimited (5 records), chunks 2x4x4 (partial edge chunks),
/// deflate 1 + shuffle; w(y, x) doubles, contiguous. Value of v at (t, y, x):
/// 100 t + 10 y + x; of w: y - x / 8.
fn make(path: &str) {
    // Test threads call libnetcdf too: keep HDF5 from printing expected errors.
    nco_h5::index::quiet();
    let mut f = netcdf::create_with(path, netcdf::Options::NETCDF4).unwrap();
    f.add_unlimited_dimension("t").unwrap();
    f.add_dimension("y", 7).unwrap();
    f.add_dimension("x", 9).unwrap();
    let mut v = f.add_variable::<f32>("v", &["t", "y", "x"]).unwrap();
    v.set_chunking(&[2, 4, 4]).unwrap();
    v.set_compression(1, true).unwrap();
    let vals: Vec<f32> = (0..5 * 7 * 9)
        .map(|i| (100 * (i / 63) + 10 * (i / 9 % 7) + i % 9) as f32)
        .collect();
    v.put_values(&vals, (&[0, 0, 0][..], &[5, 7, 9][..]))
        .unwrap();
    let mut w = f.add_variable::<f64>("w", &["y", "x"]).unwrap();
    let wv: Vec<f64> = (0..63)
        .map(|i| (i / 9) as f64 - (i % 9) as f64 / 8.0)
        .collect();
    w.put_values(&wv, netcdf::Extents::All).unwrap();
    f.close().unwrap();
}

fn engine_read(path: &str, name: &str, by: IndexBy, start: &[u64], count: &[u64]) -> Vec<u8> {
    let file = nco_h5::File::open(path).unwrap();
    let mut v = file.var(&format!("/{name}")).unwrap();
    if by != IndexBy::None {
        // Chunk addresses from libhdf5 instead of the Rust walk: the same.
        let h5 = H5File::open(path, false).unwrap();
        let c = h5.var(name, by).unwrap();
        if !v.contiguous {
            assert_eq!(c.locs, v.locs, "{name}");
        }
        v.locs = if v.contiguous { v.locs } else { c.locs };
    }
    let n: u64 = count.iter().product();
    let mut out = vec![0u8; n as usize * v.elem];
    read_slab(&v, &file, start, count, &mut out).unwrap();
    out
}

fn lib_read(path: &str, name: &str, start: &[usize], count: &[usize], es: usize) -> Vec<u8> {
    nco_h5::index::quiet();
    let f = netcdf::open(path).unwrap();
    let v = f.variable(name).unwrap();
    let mut out = vec![0u8; count.iter().product::<usize>() * es];
    v.get_raw_values_into(&mut out, (start, count)).unwrap();
    out
}

#[test]
fn reads_equal_libnetcdf() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.nc");
    let path = path.to_str().unwrap();
    make(path);
    for by in [IndexBy::None, IndexBy::Coord] {
        for (start, count) in [
            ([0, 0, 0], [5, 7, 9]),
            ([1, 2, 3], [3, 4, 5]),
            ([4, 6, 8], [1, 1, 1]),
            ([0, 3, 0], [5, 1, 9]),
        ] {
            let got = engine_read(path, "v", by, &start, &count);
            let s: Vec<usize> = start.iter().map(|&x| x as usize).collect();
            let c: Vec<usize> = count.iter().map(|&x| x as usize).collect();
            assert_eq!(got, lib_read(path, "v", &s, &c, 4), "{by:?} {start:?}");
        }
        let got = engine_read(path, "w", by, &[2, 1], &[3, 8]);
        assert_eq!(got, lib_read(path, "w", &[2, 1], &[3, 8], 8), "{by:?} w");
    }
    // One value, decoded: 100 * 4 + 10 * 6 + 8.
    let one = engine_read(path, "v", IndexBy::None, &[4, 6, 8], &[1, 1, 1]);
    assert_eq!(f32::from_ne_bytes(one.try_into().unwrap()), 468.0);
    // Index lists: reversed, repeated, strided, and past the extent (read as the pad).
    let file = nco_h5::File::open(path).unwrap();
    let v = file.var("/v").unwrap();
    let sel = vec![vec![4, 0, 6], vec![6, 6, 1], vec![8, 0, 2, 4, 6]];
    let mut out = vec![0u8; 3 * 3 * 5 * 4];
    read_sel(&v, &file, &sel, &(-1.0f32).to_ne_bytes(), &mut out).unwrap();
    let got: Vec<f32> = out
        .chunks_exact(4)
        .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
        .collect();
    let mut want = Vec::new();
    for &t in &sel[0] {
        for &y in &sel[1] {
            for &x in &sel[2] {
                want.push(if t >= 5 {
                    -1.0
                } else {
                    (100 * t + 10 * y + x) as f32
                });
            }
        }
    }
    assert_eq!(got, want);
}

#[test]
fn requests_outside_the_variable_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.nc");
    let path = path.to_str().unwrap();
    make(path);
    let file = nco_h5::File::open(path).unwrap();
    let v = file.var("/v").unwrap();
    let mut out = vec![0u8; 4 * 2];
    let e = read_slab(&v, &file, &[4, 0, 0], &[2, 1, 1], &mut out).unwrap_err();
    assert!(e.to_string().contains("past dimension 0"), "{e}");
    let e = read_sel(&v, &file, &[vec![0], vec![0]], &[0; 4], &mut out).unwrap_err();
    assert!(e.to_string().contains("rank"), "{e}");
}

#[test]
fn damaged_chunks_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.nc");
    let path = path.to_str().unwrap();
    make(path);
    let v = nco_h5::File::open(path).unwrap().var("/v").unwrap();
    let loc = v.locs[0];
    let mut bytes = std::fs::read(path).unwrap();
    for b in &mut bytes[(loc.addr + loc.size / 2) as usize..][..4] {
        *b ^= 0xa5;
    }
    std::fs::write(path, &bytes).unwrap();
    let file = nco_h5::File::open(path).unwrap();
    let mut out = vec![0u8; 4];
    let e = read_slab(&v, &file, &[0, 0, 0], &[1, 1, 1], &mut out).unwrap_err();
    assert!(e.to_string().contains("corrupt data"), "{e}");
    // The file cut below the last chunk's end: refused before reading.
    make(path);
    let bytes = std::fs::read(path).unwrap();
    let last = v.locs.iter().max_by_key(|l| l.addr).unwrap();
    std::fs::write(path, &bytes[..(last.addr + 1) as usize]).unwrap();
    let file = nco_h5::File::open(path).unwrap();
    let e = read_slab(
        &v,
        &file,
        &[0, 0, 0],
        &[5, 7, 9],
        &mut vec![0u8; 5 * 63 * 4],
    )
    .unwrap_err();
    assert!(e.to_string().contains("past the end of the file"), "{e}");
}

#[test]
fn direct_chunk_writes_read_back_through_libnetcdf() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.nc");
    let path = path.to_str().unwrap();
    nco_h5::index::quiet();
    {
        let mut f = netcdf::create_with(path, netcdf::Options::NETCDF4).unwrap();
        f.add_unlimited_dimension("t").unwrap();
        f.add_dimension("y", 7).unwrap();
        f.add_dimension("x", 9).unwrap();
        let mut v = f.add_variable::<f32>("v", &["t", "y", "x"]).unwrap();
        v.set_chunking(&[2, 4, 4]).unwrap();
        v.set_compression(1, true).unwrap();
        f.close().unwrap();
    }
    let vals: Vec<f32> = (0..5 * 63).map(|i| i as f32 * 0.25).collect();
    let bytes: Vec<u8> = vals.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let w = H5File::open(path, true).unwrap();
    // Records 0-1, then 2-4 (the last, partial chunk row), growing the record dimension.
    w.write_rows("v", 0, &bytes[..2 * 63 * 4]).unwrap();
    w.write_rows("v", 2, &bytes[2 * 63 * 4..]).unwrap();
    // Not on a chunk boundary: refused.
    assert!(w.write_rows("v", 3, &bytes[..63 * 4]).is_err());
    drop(w);
    let f = netcdf::open(path).unwrap();
    assert_eq!(f.dimension("t").unwrap().len(), 5);
    let back: Vec<f32> = f
        .variable("v")
        .unwrap()
        .get_values(netcdf::Extents::All)
        .unwrap();
    assert_eq!(back, vals);
}

#[test]
fn several_datasets_written_in_one_parallel_batch_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.nc");
    let path = path.to_str().unwrap();
    nco_h5::index::quiet();
    {
        let mut f = netcdf::create_with(path, netcdf::Options::NETCDF4).unwrap();
        f.add_unlimited_dimension("t").unwrap();
        f.add_dimension("y", 37).unwrap();
        f.add_dimension("x", 41).unwrap();
        // Shuffled 4-byte and 8-byte elements (the byte shuffle's fast paths and their
        // scalar rests), edge chunks along y and x, two deflate levels.
        let mut a = f.add_variable::<f32>("a", &["t", "y", "x"]).unwrap();
        a.set_chunking(&[2, 16, 32]).unwrap();
        a.set_compression(1, true).unwrap();
        let mut b = f.add_variable::<f64>("b", &["y", "x"]).unwrap();
        b.set_chunking(&[10, 41]).unwrap();
        b.set_compression(4, true).unwrap();
        f.close().unwrap();
    }
    let av: Vec<f32> = (0..3 * 37 * 41).map(|i| (i as f32).sin() * 1e3).collect();
    let bv: Vec<f64> = (0..37 * 41).map(|i| f64::from(i) / 7.0 - 50.0).collect();
    let ab: Vec<u8> = av.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let bb: Vec<u8> = bv.iter().flat_map(|x| x.to_ne_bytes()).collect();
    let w = H5File::open(path, true).unwrap();
    let mut a = w.var("/a", IndexBy::None).unwrap();
    let mut b = w.var("/b", IndexBy::None).unwrap();
    // Records 0-1 and 2 (the record dimension grows), and all of b, in one call.
    let (a01, a2) = ab.split_at(2 * 37 * 41 * 4);
    w.prepare_rows(&mut a, 0, a01.len()).unwrap();
    w.prepare_rows(&mut a, 2, a2.len()).unwrap();
    w.prepare_rows(&mut b, 0, bb.len()).unwrap();
    let writes = [
        RowsWrite {
            var: &a,
            first: 0,
            data: a01,
        },
        RowsWrite {
            var: &b,
            first: 0,
            data: &bb,
        },
        RowsWrite {
            var: &a,
            first: 2,
            data: a2,
        },
    ];
    w.write_many(&writes).unwrap();
    // Not on a chunk boundary: refused before anything is written.
    assert!(w.prepare_rows(&mut a, 1, 37 * 41 * 4).is_err());
    drop(w);
    let f = netcdf::open(path).unwrap();
    assert_eq!(f.dimension("t").unwrap().len(), 3);
    let back: Vec<f32> = f
        .variable("a")
        .unwrap()
        .get_values(netcdf::Extents::All)
        .unwrap();
    assert_eq!(back, av);
    let back: Vec<f64> = f
        .variable("b")
        .unwrap()
        .get_values(netcdf::Extents::All)
        .unwrap();
    assert_eq!(back, bv);
}

#[test]
fn chunks_read_in_parts_come_from_the_decoded_chunks_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.nc");
    let path = path.to_str().unwrap();
    make(path);
    let file = nco_h5::File::open(path).unwrap();
    let v = file.var("/v").unwrap();
    // Record by record (chunks of 2 records: the way a streaming operator with units
    // smaller than a chunk reads), twice: the reads of the second record of each chunk
    // come from the chunks the first kept, and everything equals libnetcdf.
    for pass in 0..2 {
        for t in 0..5u64 {
            let mut out = vec![0u8; 63 * 4];
            read_slab(&v, &file, &[t, 0, 0], &[1, 7, 9], &mut out).unwrap();
            let want = lib_read(path, "v", &[t as usize, 0, 0], &[1, 7, 9], 4);
            assert_eq!(out, want, "pass {pass} t {t}");
            if t == 0 {
                // The first record's chunks are kept, whole (the next record is to
                // come).
                let kept = file
                    .decoded(v.locs[0].addr)
                    .expect("chunk 0 was read in parts");
                assert_eq!(kept.len(), v.chunk_bytes());
            }
            if t == 1 {
                // Its last record read, a chunk is forgotten (nothing more of it is
                // to come, and it would push out chunks still in use).
                assert!(file.decoded(v.locs[0].addr).is_none(), "pass {pass}");
            }
        }
    }
    // A point of a chunk's last record (a station from many files, one record each)
    // is not kept; a point of its first record is (a point's time series read record
    // by record would inflate the chunk once per record).
    let file = nco_h5::File::open(path).unwrap();
    let mut out = vec![0u8; 4];
    read_slab(&v, &file, &[1, 1, 1], &[1, 1, 1], &mut out).unwrap();
    assert_eq!(out, lib_read(path, "v", &[1, 1, 1], &[1, 1, 1], 4));
    assert!(file.decoded(v.locs[0].addr).is_none());
    read_slab(&v, &file, &[0, 1, 1], &[1, 1, 1], &mut out).unwrap();
    assert_eq!(out, lib_read(path, "v", &[0, 1, 1], &[1, 1, 1], 4));
    assert!(file.decoded(v.locs[0].addr).is_some());
}

#[test]
fn chunks_read_by_pieces_of_a_record_are_kept_until_their_last_piece() {
    // Chunks of (2, 4, 4): a read of one record and two of a chunk's four rows of y
    // (whole along x) is one of a stream through the chunk in its own order (ncbo's
    // units over levels of a record): the chunk is kept for the next pieces, and
    // forgotten once the last piece (second record, last rows) is read.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.nc");
    let path = path.to_str().unwrap();
    make(path);
    let file = nco_h5::File::open(path).unwrap();
    let v = file.var("/v").unwrap();
    let pieces = [(0u64, 0u64), (0, 2), (1, 0), (1, 2)];
    for (i, &(t, y)) in pieces.iter().enumerate() {
        let mut out = vec![0u8; 2 * 9 * 4];
        read_slab(&v, &file, &[t, y, 0], &[1, 2, 9], &mut out).unwrap();
        let want = lib_read(path, "v", &[t as usize, y as usize, 0], &[1, 2, 9], 4);
        assert_eq!(out, want, "piece {i}");
        let kept = file.decoded(v.locs[0].addr).is_some();
        assert_eq!(kept, i < 3, "piece {i}: kept until the chunk's last piece");
    }
}

#[test]
fn chunks_copied_as_stored_read_back_identically() {
    let dir = tempfile::tempdir().unwrap();
    let src_path = dir.path().join("s.nc");
    let src_path = src_path.to_str().unwrap();
    make(src_path);
    // The destination: v with the same chunks and filters, u with another level.
    let dst_path = dir.path().join("d.nc");
    let dst_path = dst_path.to_str().unwrap();
    {
        let mut f = netcdf::create_with(dst_path, netcdf::Options::NETCDF4).unwrap();
        f.add_unlimited_dimension("t").unwrap();
        f.add_dimension("y", 7).unwrap();
        f.add_dimension("x", 9).unwrap();
        for (name, level) in [("v", 1), ("u", 5)] {
            let mut v = f.add_variable::<f32>(name, &["t", "y", "x"]).unwrap();
            v.set_chunking(&[2, 4, 4]).unwrap();
            v.set_compression(level, true).unwrap();
        }
        f.close().unwrap();
    }
    let src = nco_h5::File::open(src_path).unwrap();
    let sv = src.var("/v").unwrap();
    let w = H5File::open(dst_path, true).unwrap();
    let mut dv = w.var("/v", IndexBy::None).unwrap();
    let du = w.var("/u", IndexBy::None).unwrap();
    assert!(H5File::can_copy_chunks(&dv, &sv));
    // Another deflate level: the chunks would have to be encoded again.
    assert!(!H5File::can_copy_chunks(&du, &sv));
    w.copy_chunks(&mut dv, &sv, &src).unwrap();
    assert_eq!(dv.shape, sv.shape);
    drop(w);
    // The stored bytes are the source's, chunk by chunk, and read back as the source.
    let dst = nco_h5::File::open(dst_path).unwrap();
    let back = dst.var("/v").unwrap();
    assert_eq!(back.locs.len(), sv.locs.len());
    for (a, b) in sv.locs.iter().zip(&back.locs) {
        let mut x = vec![0u8; a.size as usize];
        let mut y = vec![0u8; b.size as usize];
        std::os::unix::fs::FileExt::read_exact_at(src.handle(), &mut x, a.addr).unwrap();
        std::os::unix::fs::FileExt::read_exact_at(dst.handle(), &mut y, b.addr).unwrap();
        assert_eq!(x, y);
    }
    assert_eq!(
        lib_read(dst_path, "v", &[0, 0, 0], &[5, 7, 9], 4),
        lib_read(src_path, "v", &[0, 0, 0], &[5, 7, 9], 4)
    );
    let f = netcdf::open(dst_path).unwrap();
    assert_eq!(f.dimension("t").unwrap().len(), 5);
}
