//! The input format of the chunk-decoder fuzz target (`nco-h5/fuzz`, see
//! docs/netcdf4-engine.md, "Fuzzing"): a five-byte description of a variable's storage
//! followed by one stored chunk, so that any byte string is a case. Shared by the fuzz
//! target, its seed generator (real chunks of our fixtures) and the test that replays
//! the seed corpus on every `cargo test`.
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | bits 0-1: element size 1, 2, 4 or 8 bytes; bit 2: big-endian; bit 3: decode into the caller's buffer |
//! | 1 | the pipeline, in the order applied: bit 0 Fletcher-32 first, bit 1 shuffle, bit 2 deflate, bit 3 Fletcher-32 last |
//! | 2 | the chunk's filter mask (bit k: filter k skipped) |
//! | 3-4 | elements in the chunk, little-endian (0 means 1) |
//! | 5.. | the stored chunk |

use crate::filters::Filter;
use crate::layout::{Kind, VarIndex};

/// One decoding case: the storage description, the chunk's filter mask, whether to
/// decode into a caller's buffer, and the stored bytes.
pub struct Case {
    /// The variable (one chunk of `elems` elements).
    pub var: VarIndex,
    /// The chunk's filter mask.
    pub mask: u32,
    /// Decode into a buffer of the chunk's size instead of scratch.
    pub whole: bool,
    /// The stored chunk.
    pub stored: Vec<u8>,
}

/// The case `data` describes, or `None` when it is shorter than the description.
pub fn case(data: &[u8]) -> Option<Case> {
    if data.len() < 5 {
        return None;
    }
    let elem = 1usize << (data[0] & 3);
    let elems = u64::from(u16::from_le_bytes([data[3], data[4]])).max(1);
    let p = data[1];
    let mut filters = Vec::new();
    if p & 1 != 0 {
        filters.push(Filter::Fletcher32);
    }
    if p & 2 != 0 {
        filters.push(Filter::Shuffle(elem));
    }
    if p & 4 != 0 {
        filters.push(Filter::Deflate(1));
    }
    if p & 8 != 0 {
        filters.push(Filter::Fletcher32);
    }
    let var = VarIndex {
        name: "/fuzz".into(),
        shape: vec![elems],
        chunk: vec![elems],
        contiguous: false,
        elem,
        kind: Kind::Int { signed: false },
        big_endian: data[0] & 4 != 0,
        filters,
        locs: Vec::new(),
        fill: vec![0; elem],
    };
    Some(Case {
        var,
        mask: u32::from(data[2]),
        whole: data[0] & 8 != 0,
        stored: data[5..].to_vec(),
    })
}

/// The input describing chunk `stored` of `v` (whose shape is taken as one chunk of
/// `v.chunk_elems()` elements, at most 65535) with filter mask `mask`, or `None` when
/// `v`'s pipeline or element size has no encoding here.
pub fn encode(v: &VarIndex, mask: u32, stored: &[u8], whole: bool) -> Option<Vec<u8>> {
    let size_code = match v.elem {
        1 => 0u8,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => return None,
    };
    let mut p = 0u8;
    let mut seen_data_filter = false;
    for f in &v.filters {
        match f {
            Filter::Fletcher32 if !seen_data_filter => p |= 1,
            Filter::Fletcher32 => p |= 8,
            Filter::Shuffle(_) if !seen_data_filter => {
                p |= 2;
                seen_data_filter = true;
            }
            Filter::Deflate(_) => {
                p |= 4;
                seen_data_filter = true;
            }
            Filter::Shuffle(_) => return None,
        }
    }
    let elems = u16::try_from(v.chunk_elems()).ok()?;
    let mut out = vec![
        size_code | u8::from(v.big_endian) << 2 | u8::from(whole) << 3,
        p,
        u8::try_from(mask).ok()?,
    ];
    out.extend_from_slice(&elems.to_le_bytes());
    out.extend_from_slice(stored);
    Some(out)
}

/// Decode the case `data` describes; the result does not matter, only that decoding
/// returns (an error for anything that does not decode) without a panic or an access
/// out of bounds, and that a successful decode has the chunk's size.
pub fn run(data: &[u8]) {
    let Some(mut c) = case(data) else {
        return;
    };
    let want = c.var.chunk_bytes();
    let mut inflater = libdeflater::Decompressor::new();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; want];
    let whole = c.whole.then_some(&mut buf[..]);
    if let Ok(out) = crate::read::decode_stored(
        &c.var,
        c.mask,
        &mut c.stored,
        &mut inflater,
        &mut a,
        &mut b,
        whole,
    ) {
        assert_eq!(out.len(), want, "a decoded chunk has the chunk's size");
    }
}
