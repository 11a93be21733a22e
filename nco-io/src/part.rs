//! Part files: the partial result of one share of a run split across processes
//! (`--part I/N`, job arrays), combined by `--merge` into the output one process would
//! have written.
//!
//! Layout (little-endian, our own; nothing else reads it):
//!
//! ```text
//! "NCO-RS PART\n"   12 bytes, the magic
//! entries           their bytes one after the other, in the header's order
//! header            JSON (PartHeader): the run, this part's share, the entries
//! header length     u64
//! ```
//!
//! The header comes last so that a part is written as its entries are computed,
//! without holding them all.
//!
//! A part file is written through a temporary file and renamed into place, as every
//! output is ([`crate::output::TempOutput`]): a failed or killed part leaves no part
//! file, so the merge reports it missing instead of combining half a result.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::output::TempOutput;
use crate::types::{NcType, Values};

/// The first bytes of every part file.
pub const MAGIC: &[u8; 12] = b"NCO-RS PART\n";

/// What identifies an input file's contents cheaply: its path as given, size in
/// bytes and modification time (nanoseconds since the epoch). A merge refuses inputs
/// whose stamp changed since the parts were written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputStamp {
    /// The path as the run named it.
    pub path: PathBuf,
    /// Size in bytes.
    pub len: u64,
    /// Modification time, nanoseconds since 1970-01-01 UTC.
    pub mtime_ns: i64,
}

impl InputStamp {
    /// The stamp of `path` now.
    ///
    /// Errors: `path` cannot be examined (named).
    pub fn of(path: &Path) -> Result<InputStamp> {
        let m = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        Ok(InputStamp {
            path: path.to_path_buf(),
            len: m.len(),
            mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
        })
    }
}

/// One entry of a part file: a name the operator chose (a variable and output record,
/// say), its size in bytes and the CRC-32 of its bytes (a damaged entry is refused,
/// never merged; CRC-32 catches every burst of up to 32 flipped bits, at several GB/s).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The operator's key.
    pub key: String,
    /// Bytes.
    pub len: u64,
    /// CRC-32 (IEEE) of the bytes.
    pub crc32: u32,
}

/// The header of a part file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartHeader {
    /// The nco-rs version that wrote it (a merge needs the same).
    pub version: String,
    /// The operator (`ncra`, `nces`).
    pub prog: String,
    /// The run's identity: a digest of the options and input stamps, the same for
    /// every part of one run.
    pub run: String,
    /// This part, 1-based.
    pub part: usize,
    /// Number of parts of the run.
    pub parts: usize,
    /// The command line of the run (`--part` taken out), one argument each.
    pub argv: Vec<String>,
    /// The run's inputs, every one (not only this part's share).
    pub inputs: Vec<InputStamp>,
    /// True when the run read its input names from standard input (its output then
    /// records them, as NCO's does: `nco_input_file_list`).
    #[serde(default)]
    pub inputs_from_stdin: bool,
    /// This part's share of the run's items (records for ncra, members for nces):
    /// `[first, end)` of `total`.
    pub share: (usize, usize),
    /// Number of items of the whole run.
    pub total: usize,
    /// The entries, in the order of their bytes.
    pub entries: Vec<Entry>,
}

/// Where a part goes: a file (through a temporary file renamed into place) or memory
/// (an MPI rank's part, sent to the rank that merges).
enum Sink {
    File {
        tmp: TempOutput,
        w: std::io::BufWriter<std::fs::File>,
    },
    Memory(Vec<u8>),
}

/// A part being written, entry by entry; a file one is renamed into place by
/// [`PartWriter::finish`] (dropped unfinished, it leaves nothing).
pub struct PartWriter {
    sink: Sink,
    /// The file named in errors (the destination, or the rank's name).
    name: PathBuf,
    entries: Vec<Entry>,
}

impl PartWriter {
    /// Start part file `dest` of `prog`.
    ///
    /// Errors: the folder is missing or not writable (naming it).
    pub fn create(dest: &Path, prog: &str) -> Result<PartWriter> {
        let tmp = TempOutput::new(dest, prog)?;
        let f = std::fs::File::create(tmp.path()).map_err(|e| Error::io(dest, e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        w.write_all(MAGIC).map_err(|e| Error::io(dest, e))?;
        Ok(PartWriter {
            sink: Sink::File { tmp, w },
            name: dest.to_path_buf(),
            entries: Vec::new(),
        })
    }

    /// Start a part in memory, called `name` in messages.
    pub fn in_memory(name: &str) -> PartWriter {
        PartWriter {
            sink: Sink::Memory(MAGIC.to_vec()),
            name: PathBuf::from(name),
            entries: Vec::new(),
        }
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.sink {
            Sink::File { w, .. } => w.write_all(bytes).map_err(|e| Error::io(&self.name, e)),
            Sink::Memory(v) => {
                v.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Append entry `key` with `bytes`.
    ///
    /// Errors: the write fails (naming the part file).
    pub fn add(&mut self, key: &str, bytes: &[u8]) -> Result<()> {
        self.put(bytes)?;
        self.entries.push(Entry {
            key: key.to_string(),
            len: bytes.len() as u64,
            crc32: crc32fast::hash(bytes),
        });
        Ok(())
    }

    /// Write `header` (its entries set to those added) and its length; a file is
    /// flushed to disk and renamed into place (`None`), a part in memory returned.
    ///
    /// Errors: a write fails (naming the part file).
    pub fn finish(mut self, mut header: PartHeader) -> Result<Option<Vec<u8>>> {
        header.entries = std::mem::take(&mut self.entries);
        let json = serde_json::to_vec(&header)
            .map_err(|e| Error::msg(format!("{}: {e}", self.name.display())))?;
        self.put(&json)?;
        self.put(&(json.len() as u64).to_le_bytes())?;
        match self.sink {
            Sink::Memory(v) => Ok(Some(v)),
            Sink::File { tmp, w } => {
                // Flushed, not synced: a part is an output like any other (the rename
                // makes it visible whole; the page cache carries it to the merge).
                w.into_inner()
                    .map_err(|e| Error::io(&self.name, e.into_error()))?;
                tmp.commit()?;
                Ok(None)
            }
        }
    }
}

/// The bytes of an open part.
enum Body {
    /// A part file, mapped into memory: entries are read where they lie, on any
    /// thread, and only the pages a merge touches are read.
    Mapped(memmap2::Mmap),
    /// A part received from an MPI rank.
    Bytes(Vec<u8>),
}

/// An open part (a file, or bytes received from a rank): its header and where each
/// entry lies. Entries are read by key ([`PartReader::read_entry`]) from any thread.
pub struct PartReader {
    path: PathBuf,
    body: Body,
    /// Each entry's key: its offset, length and CRC-32.
    index: std::collections::HashMap<String, (usize, usize, u32)>,
    /// The header.
    pub header: PartHeader,
}

impl PartReader {
    /// Open part file `path` and read its header.
    ///
    /// Errors: `path` cannot be read, is not a part file, or its header is damaged or
    /// its size does not match the entries it announces (a truncated file), naming it.
    pub fn open(path: &Path) -> Result<PartReader> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = f.metadata().map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            return Err(Error::Format {
                path: path.display().to_string(),
                reason: "is a folder, not a part file".into(),
            });
        }
        let size = meta.len();
        if size < 20 {
            return Err(Error::Format {
                path: path.display().to_string(),
                reason: "not a part file of nco-rs (written by --part)".into(),
            });
        }
        // SAFETY: the map is read only; a part file is ours, written once through a
        // temporary file and renamed into place, and not changed while a merge reads
        // it (as the inputs the classic engine maps are not).
        let map = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| Error::io(path, e))?;
        PartReader::from_body(path, Body::Mapped(map))
    }

    /// A part held in memory, called `name` in messages.
    ///
    /// Errors: as [`PartReader::open`].
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Result<PartReader> {
        PartReader::from_body(Path::new(name), Body::Bytes(bytes))
    }

    fn from_body(path: &Path, body: Body) -> Result<PartReader> {
        let bad = |why: &str| Error::Format {
            path: path.display().to_string(),
            reason: why.to_string(),
        };
        let all: &[u8] = match &body {
            Body::Mapped(m) => m,
            Body::Bytes(b) => b,
        };
        let size = all.len() as u64;
        if size < 20 || &all[..12] != MAGIC {
            return Err(bad("not a part file of nco-rs (written by --part)"));
        }
        let tail: [u8; 8] = all[all.len() - 8..].try_into().unwrap_or_default();
        let n = u64::from_le_bytes(tail);
        if n > size - 20 {
            return Err(bad("truncated or damaged part file (no header at its end)"));
        }
        let json = &all[(size - 8 - n) as usize..all.len() - 8];
        let header: PartHeader = serde_json::from_slice(json)
            .map_err(|e| bad(&format!("truncated or damaged part file ({e})")))?;
        let body_len: u64 = header.entries.iter().map(|e| e.len).sum();
        if 20 + n + body_len != size {
            return Err(bad(&format!(
                "truncated or damaged part file: {size} bytes, its header announces {}",
                20 + n + body_len
            )));
        }
        let mut index = std::collections::HashMap::with_capacity(header.entries.len());
        let mut at = MAGIC.len();
        for e in &header.entries {
            let len = e.len as usize;
            if index.insert(e.key.clone(), (at, len, e.crc32)).is_some() {
                return Err(bad(&format!("damaged part file: entry {} twice", e.key)));
            }
            at += len;
        }
        Ok(PartReader {
            path: path.to_path_buf(),
            body,
            index,
            header,
        })
    }

    /// The file's path (or the rank's name).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn all(&self) -> &[u8] {
        match &self.body {
            Body::Mapped(m) => m,
            Body::Bytes(b) => b,
        }
    }

    /// Whether the part holds entry `key`.
    pub fn has(&self, key: &str) -> bool {
        self.index.contains_key(key)
    }

    /// The bytes of entry `key`, checked against their checksum.
    ///
    /// Errors: no entry `key`, or its bytes do not match their checksum (naming the
    /// file and key).
    pub fn read_entry(&self, key: &str) -> Result<&[u8]> {
        let &(at, len, crc) = self.index.get(key).ok_or_else(|| Error::Format {
            path: self.path.display().to_string(),
            reason: format!("lacks {key}"),
        })?;
        let bytes = &self.all()[at..at + len];
        if crc32fast::hash(bytes) != crc {
            return Err(Error::Format {
                path: self.path.display().to_string(),
                reason: format!(
                    "damaged part file: the bytes of {key} do not match their checksum"
                ),
            });
        }
        Ok(bytes)
    }
}

/// The byte order of the machine, recorded with every value block: a part moved to a
/// machine of the other order is refused, not misread.
const NATIVE_ORDER: u8 = if cfg!(target_endian = "little") { 1 } else { 2 };

/// Append `vals` to `out` as a value block of a part entry (what a concatenation's
/// part carries: records or members already converted to the output's type): the
/// netCDF type code (i32), the byte order, the element count (u64), then the elements
/// in this machine's order (NC_STRING: each one's length, u64, and UTF-8 bytes).
pub fn encode_values(vals: &Values, out: &mut Vec<u8>) {
    out.extend_from_slice(&vals.nc_type().code().to_le_bytes());
    out.push(NATIVE_ORDER);
    out.extend_from_slice(&(vals.len() as u64).to_le_bytes());
    if let Values::Str(s) = vals {
        for x in s {
            out.extend_from_slice(&(x.len() as u64).to_le_bytes());
            out.extend_from_slice(x.as_bytes());
        }
    } else {
        vals.encode_ne(out);
    }
}

/// The values of a block [`encode_values`] wrote, which must fill `bytes` exactly.
///
/// Errors: an unknown type, another byte order, another size than announced, a
/// string that is not UTF-8 (a damaged or foreign block).
pub fn decode_values(bytes: &[u8]) -> Result<Values> {
    let bad = |why: &str| Error::msg(format!("damaged value block: {why}"));
    if bytes.len() < 13 {
        return Err(bad("too short"));
    }
    let code = i32::from_le_bytes(bytes[0..4].try_into().unwrap_or_default());
    let ty = NcType::from_code(code).ok_or_else(|| bad(&format!("type code {code}")))?;
    if bytes[4] != NATIVE_ORDER {
        return Err(bad("written on a machine of the other byte order"));
    }
    let n = usize::try_from(u64::from_le_bytes(
        bytes[5..13].try_into().unwrap_or_default(),
    ))
    .map_err(|_| bad("count too large"))?;
    let body = &bytes[13..];
    if ty == NcType::Str {
        let mut out = Vec::with_capacity(n.min(body.len()));
        let mut at = 0usize;
        for _ in 0..n {
            let len = body
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
                .and_then(|l| usize::try_from(l).ok())
                .ok_or_else(|| bad("truncated string length"))?;
            let s = body
                .get(at + 8..(at + 8).saturating_add(len))
                .ok_or_else(|| bad("truncated string"))?;
            out.push(String::from_utf8(s.to_vec()).map_err(|_| bad("string not UTF-8"))?);
            at += 8 + len;
        }
        if at != body.len() {
            return Err(bad("bytes past its strings"));
        }
        return Ok(Values::Str(out));
    }
    if n.checked_mul(ty.size()) != Some(body.len()) {
        return Err(bad(&format!(
            "{} bytes for {n} elements of {}",
            body.len(),
            ty.nc_name()
        )));
    }
    Ok(crate::nc4::decode_ne(ty, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_blocks_round_trip_every_type_and_refuse_damage() {
        let all = [
            Values::Byte(vec![-1, 2]),
            Values::Char(b"ab\0".to_vec()),
            Values::Short(vec![-300, 7]),
            Values::Int(vec![i32::MIN, 5]),
            Values::Float(vec![1.5, f32::NAN]),
            Values::Double(vec![-0.0, 1e300]),
            Values::UByte(vec![255]),
            Values::UShort(vec![65535]),
            Values::UInt(vec![u32::MAX]),
            Values::Int64(vec![i64::MIN]),
            Values::UInt64(vec![u64::MAX]),
            Values::Str(vec!["é".into(), String::new(), "xyz".into()]),
        ];
        for v in &all {
            let mut b = Vec::new();
            encode_values(v, &mut b);
            let back = decode_values(&b).unwrap();
            assert_eq!(back.nc_type(), v.nc_type());
            let (mut x, mut y) = (Vec::new(), Vec::new());
            encode_values(&back, &mut x);
            encode_values(v, &mut y);
            assert_eq!(x, y, "{:?}", v.nc_type());
            assert!(decode_values(&b[..b.len() - 1]).is_err());
            let mut foreign = b.clone();
            foreign[0] = 99;
            assert!(decode_values(&foreign).is_err(), "unknown type code");
            foreign = b.clone();
            foreign[4] = 3 - NATIVE_ORDER;
            assert!(decode_values(&foreign).is_err(), "other byte order");
        }
    }
}
