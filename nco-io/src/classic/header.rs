//! Encoding and decoding of the classic-format header (CDF-1, CDF-2, CDF-5) and the
//! data layout it implies (where each variable's bytes start, the record size).
//!
//! Source: "The NetCDF Classic Format Specification" and "The CDF-5 format" of the
//! netCDF User Guide (grammar `header = magic numrecs dim_list gatt_list var_list`).
//! Layout rules follow netCDF-C's writer, so a file we write is byte-identical to one
//! libnetcdf writes for the same definitions: data starts right after the header (plus
//! `--hdr_pad` bytes), fixed variables in definition order, then the record section;
//! each variable's per-record size is padded to 4 bytes, except that a file with exactly
//! one record variable packs its records without padding.

use crate::error::{Error, Result};
use crate::model::{Attr, Dim, Format, Meta, Storage, Var};
use crate::types::{NcNum, NcType, Values};

const NC_DIMENSION: u32 = 0x0A;
const NC_VARIABLE: u32 = 0x0B;
const NC_ATTRIBUTE: u32 = 0x0C;
/// `numrecs` value meaning "streaming: count records from the file size".
const STREAMING32: u64 = 0xFFFF_FFFF;
/// Upper bound on any count read from a header, to refuse absurd files early.
const MAX_LIST: u64 = 1 << 24;

/// Where a variable's data lives in a classic file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarLayout {
    /// Byte offset of the first element (of record 0 for record variables).
    pub begin: u64,
    /// Bytes of one record (record variables) or of the whole variable (fixed ones),
    /// unpadded: product of the non-record dimension lengths times the element size.
    pub bytes: u64,
    /// Bytes the variable occupies per record (or in all), padded to 4 as written.
    pub vsize: u64,
    /// True for record variables.
    pub record: bool,
}

/// A decoded classic header: the metadata, each variable's layout, the record size.
#[derive(Clone, Debug)]
pub struct Header {
    /// Dimensions, variables and attributes (format is Classic, Offset64 or Cdf5).
    pub meta: Meta,
    /// Layout of each variable, in the order of `meta.vars`.
    pub layout: Vec<VarLayout>,
    /// Bytes from one record to the next.
    pub recsize: u64,
    /// Size of the encoded header in bytes (without padding).
    pub header_len: u64,
    /// Number of records recorded in (or computed for) the file.
    pub numrecs: u64,
    /// Length of the file the header was read from, in bytes (`u64::MAX` for a header
    /// planned for writing). Variables whose data end past it cannot be read
    /// ([`Header::check_inside`]).
    pub file_len: u64,
}

impl Header {
    /// The byte after the last of variable `var`'s data (0 for a record variable of a
    /// file without records); `u64::MAX` when that overflows.
    pub fn data_end(&self, var: usize) -> u64 {
        let l = &self.layout[var];
        if !l.record {
            return l.begin.saturating_add(l.bytes);
        }
        if self.numrecs == 0 {
            // No records, no data: a record variable's offset may lie past the end of
            // a file with no records (ncgen writes them so).
            return 0;
        }
        (self.numrecs - 1)
            .checked_mul(self.recsize)
            .and_then(|x| x.checked_add(l.begin))
            .and_then(|x| x.checked_add(l.bytes))
            .unwrap_or(u64::MAX)
    }

    /// Fail when variable `var`'s data do not all lie inside the file: a file cut short
    /// (a copy or download that stopped) whose header is intact is still read, its
    /// header printed and the variables inside it extracted, but reading one past the
    /// end is this error naming it (NCO 5.1.4 reads zeros there and succeeds).
    pub fn check_inside(&self, var: usize, path: &dyn std::fmt::Display) -> Result<()> {
        let end = self.data_end(var);
        if end <= self.file_len {
            return Ok(());
        }
        Err(Error::Format {
            path: path.to_string(),
            reason: format!(
                "variable {} lies past the end of the file (its data end at byte {end}, the \
                 file has {} bytes): the file is truncated",
                self.meta.vars[var].name, self.file_len
            ),
        })
    }
}

fn version(format: Format) -> u8 {
    match format {
        Format::Classic => 1,
        Format::Offset64 => 2,
        _ => 5,
    }
}

fn pad4(n: u64) -> u64 {
    (n + 3) & !3
}

/// A cursor over header bytes that turns every overrun into a "truncated" error.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    v5: bool,
    path: &'a str,
}

impl Cursor<'_> {
    fn bad(&self, what: &str) -> Error {
        Error::Format {
            path: self.path.to_string(),
            reason: what.to_string(),
        }
    }
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(self.bad("header is truncated (file ends inside the header)")),
        }
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(<u32 as NcNum>::from_be(self.take(4)?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(<u64 as NcNum>::from_be(self.take(8)?))
    }
    /// NON_NEG: 4 bytes in CDF-1/2, 8 in CDF-5.
    fn non_neg(&mut self) -> Result<u64> {
        if self.v5 {
            self.u64()
        } else {
            Ok(u64::from(self.u32()?))
        }
    }
    fn name(&mut self) -> Result<String> {
        let n = self.non_neg()?;
        if n > 1 << 16 {
            return Err(self.bad("a name in the header is longer than 65536 bytes"));
        }
        let b = self.take(pad4(n) as usize)?;
        Ok(String::from_utf8_lossy(&b[..n as usize]).into_owned())
    }
    fn list_len(&mut self, tag: u32, what: &str) -> Result<u64> {
        let t = self.u32()?;
        let n = self.non_neg()?;
        if t == 0 && n == 0 {
            return Ok(0);
        }
        if t != tag {
            return Err(self.bad(&format!("bad {what} list tag {t:#x}")));
        }
        if n > MAX_LIST {
            return Err(self.bad(&format!("absurd {what} count {n}")));
        }
        Ok(n)
    }
    fn attrs(&mut self) -> Result<Vec<Attr>> {
        let n = self.list_len(NC_ATTRIBUTE, "attribute")?;
        let mut out = Vec::with_capacity((n as usize).min(1024));
        for _ in 0..n {
            let name = self.name()?;
            let code = self.u32()?;
            let ty = NcType::from_code(code as i32)
                .filter(|t| *t != NcType::Str)
                .ok_or_else(|| self.bad(&format!("attribute {name} has bad type {code}")))?;
            let count = self.non_neg()?;
            let bytes = count
                .checked_mul(ty.size() as u64)
                .filter(|&b| b <= self.buf.len() as u64)
                .ok_or_else(|| self.bad(&format!("attribute {name} is larger than the file")))?;
            let raw = self.take(pad4(bytes) as usize)?;
            let value = decode_be(ty, &raw[..bytes as usize]);
            out.push(Attr { name, value });
        }
        Ok(out)
    }
}

/// Decode big-endian bytes of type `ty` into a [`Values`] (NC_STRING is not a classic type
/// and decodes to an empty list).
pub fn decode_be(ty: NcType, raw: &[u8]) -> Values {
    fn dec<T: NcNum>(raw: &[u8]) -> Values {
        T::into_values(raw.chunks_exact(T::SIZE).map(T::from_be).collect())
    }
    crate::dispatch_type!(ty, T => dec::<T>(raw); char => Values::Char(raw.to_vec());
        string => Values::Str(Vec::new()))
}

/// Encode values big-endian, appending to `out`.
pub fn encode_be(v: &Values, out: &mut Vec<u8>) {
    fn enc<T: NcNum>(x: &[T], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + x.len() * T::SIZE, 0);
        for (c, &e) in out[start..].chunks_exact_mut(T::SIZE).zip(x) {
            e.write_be(c);
        }
    }
    crate::dispatch!(v, x => enc(x, out); char c => out.extend_from_slice(c);
        string _s => {})
}

/// Parse a classic header from the start of a file of `file_len` bytes.
///
/// Errors ([`Error::Format`], naming `path`): wrong magic or version byte, truncated
/// header, bad list tags, absurd counts, unknown types, dimension ids out of range,
/// sizes that overflow, or a variable starting inside the header. Data past the end of
/// the file (a truncated file) is refused when read ([`Header::check_inside`]).
pub fn parse(buf: &[u8], file_len: u64, path: &str) -> Result<Header> {
    if buf.len() < 4 || &buf[..3] != b"CDF" {
        return Err(Error::Format {
            path: path.to_string(),
            reason: "not a netCDF classic file (bad magic number)".into(),
        });
    }
    let format = match buf[3] {
        1 => Format::Classic,
        2 => Format::Offset64,
        5 => Format::Cdf5,
        v => {
            return Err(Error::Format {
                path: path.to_string(),
                reason: format!("unknown classic format version byte {v}"),
            })
        }
    };
    let mut c = Cursor {
        buf,
        pos: 4,
        v5: format == Format::Cdf5,
        path,
    };
    let numrecs_raw = c.non_neg()?;
    let streaming = numrecs_raw == STREAMING32 || (c.v5 && numrecs_raw == u64::MAX);

    let ndims = c.list_len(NC_DIMENSION, "dimension")?;
    let mut dims = Vec::with_capacity((ndims as usize).min(1024));
    for _ in 0..ndims {
        let name = c.name()?;
        let len = c.non_neg()?;
        dims.push(Dim {
            name,
            len: len as usize,
            unlimited: len == 0,
            group: 0,
        });
    }
    let attrs = c.attrs()?;
    let nvars = c.list_len(NC_VARIABLE, "variable")?;
    let mut vars = Vec::with_capacity((nvars as usize).min(1024));
    let mut begins = Vec::with_capacity((nvars as usize).min(1024));
    for _ in 0..nvars {
        let name = c.name()?;
        let nd = c.non_neg()?;
        if nd > 1024 {
            return Err(c.bad(&format!("variable {name} has {nd} dimensions")));
        }
        let mut vdims = Vec::with_capacity((nd as usize).min(1024));
        for k in 0..nd {
            let id = c.non_neg()?;
            if id >= ndims {
                return Err(c.bad(&format!("variable {name} names dimension id {id}")));
            }
            if k > 0 && dims[id as usize].unlimited {
                return Err(c.bad(&format!("variable {name}: record dimension not first")));
            }
            vdims.push(id as usize);
        }
        let vattrs = c.attrs()?;
        let code = c.u32()?;
        let ty = NcType::from_code(code as i32)
            .filter(|t| *t != NcType::Str)
            .ok_or_else(|| c.bad(&format!("variable {name} has bad type {code}")))?;
        let _vsize = c.non_neg()?;
        let begin = if format == Format::Classic {
            u64::from(c.u32()?)
        } else {
            c.u64()?
        };
        vars.push(Var {
            name,
            ty,
            dims: vdims,
            attrs: vattrs,
            storage: Storage::default(),
            group: 0,
        });
        begins.push(begin);
    }
    let header_len = c.pos as u64;
    let mut meta = Meta {
        format,
        dims,
        vars,
        attrs,
        groups: vec![Default::default()],
    };
    let (mut layout, recsize) = layout_sizes(&meta, path)?;
    for (l, b) in layout.iter_mut().zip(&begins) {
        l.begin = *b;
    }
    // Records actually present: from the header, or from the file size when streaming.
    let rec_begin = layout.iter().filter(|l| l.record).map(|l| l.begin).min();
    let numrecs = match (streaming, rec_begin) {
        (true, Some(b)) if recsize > 0 => file_len.saturating_sub(b) / recsize,
        (true, _) => 0,
        (false, _) => numrecs_raw,
    };
    if numrecs > file_len.max(1) {
        return Err(Error::Format {
            path: path.to_string(),
            reason: format!("absurd record count {numrecs} (the file has {file_len} bytes)"),
        });
    }
    for d in meta.dims.iter_mut().filter(|d| d.unlimited) {
        d.len = numrecs as usize;
    }
    for v in &meta.vars {
        // A dimension longer than the file has bytes cannot index real data: refuse it
        // before anyone allocates index lists for it.
        for &d in &v.dims {
            let dim = &meta.dims[d];
            if !dim.unlimited && dim.len as u64 > file_len.max(1) {
                return Err(Error::Format {
                    path: path.to_string(),
                    reason: format!(
                        "dimension {} of variable {} has absurd length {} (the file has {file_len} bytes)",
                        dim.name, v.name, dim.len
                    ),
                });
            }
        }
    }
    // A variable starting inside the header means a corrupt header; data past the end
    // of the file (a truncated file) is refused only when read (Header::check_inside).
    if let Some(v) = meta
        .vars
        .iter()
        .zip(&layout)
        .find(|(_, l)| l.begin < header_len)
    {
        return Err(Error::Format {
            path: path.to_string(),
            reason: format!(
                "variable {} starts at byte {}, inside the header ({header_len} bytes): the \
                 header is corrupt",
                v.0.name, v.1.begin
            ),
        });
    }
    Ok(Header {
        meta,
        layout,
        recsize,
        header_len,
        numrecs,
        file_len,
    })
}

/// Per-variable sizes and the record size for `meta` (begins left at 0).
///
/// Errors when a size overflows 64 bits.
pub fn layout_sizes(meta: &Meta, path: &str) -> Result<(Vec<VarLayout>, u64)> {
    let mut out = Vec::with_capacity(meta.vars.len());
    for v in &meta.vars {
        let record = meta.is_record_var(v);
        let skip = usize::from(record);
        let mut bytes = v.ty.size() as u64;
        for &d in &v.dims[skip..] {
            bytes = bytes
                .checked_mul(meta.dims[d].len as u64)
                .ok_or_else(|| Error::Format {
                    path: path.to_string(),
                    reason: format!("variable {} is too large", v.name),
                })?;
        }
        out.push(VarLayout {
            begin: 0,
            bytes,
            vsize: pad4(bytes),
            record,
        });
    }
    let recs: Vec<&VarLayout> = out.iter().filter(|l| l.record).collect();
    let recsize = if recs.len() == 1 {
        recs[0].bytes
    } else {
        recs.iter().map(|l| l.vsize).sum()
    };
    Ok((out, recsize))
}

/// Encode the header of `meta` with `numrecs` records and the given data begins.
pub fn encode(meta: &Meta, begins: &[u64], numrecs: u64, layout: &[VarLayout]) -> Vec<u8> {
    let v5 = meta.format == Format::Cdf5;
    let mut out = Vec::with_capacity(1024);
    let non_neg = |out: &mut Vec<u8>, x: u64| {
        if v5 {
            out.extend_from_slice(&x.to_be_bytes());
        } else {
            out.extend_from_slice(&(x as u32).to_be_bytes());
        }
    };
    let name = |out: &mut Vec<u8>, s: &str| {
        non_neg(out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
        out.resize(pad4(out.len() as u64) as usize, 0);
    };
    let attrs = |out: &mut Vec<u8>, attrs: &[Attr]| {
        if attrs.is_empty() {
            out.extend_from_slice(&0u32.to_be_bytes());
            non_neg(out, 0);
            return;
        }
        out.extend_from_slice(&NC_ATTRIBUTE.to_be_bytes());
        non_neg(out, attrs.len() as u64);
        for a in attrs {
            name(out, &a.name);
            out.extend_from_slice(&(a.value.nc_type().code() as u32).to_be_bytes());
            non_neg(out, a.value.len() as u64);
            encode_be(&a.value, out);
            out.resize(pad4(out.len() as u64) as usize, 0);
        }
    };
    out.extend_from_slice(b"CDF");
    out.push(version(meta.format));
    non_neg(&mut out, numrecs);
    if meta.dims.is_empty() {
        out.extend_from_slice(&0u32.to_be_bytes());
        non_neg(&mut out, 0);
    } else {
        out.extend_from_slice(&NC_DIMENSION.to_be_bytes());
        non_neg(&mut out, meta.dims.len() as u64);
        for d in &meta.dims {
            name(&mut out, &d.name);
            non_neg(&mut out, if d.unlimited { 0 } else { d.len as u64 });
        }
    }
    attrs(&mut out, &meta.attrs);
    if meta.vars.is_empty() {
        out.extend_from_slice(&0u32.to_be_bytes());
        non_neg(&mut out, 0);
    } else {
        out.extend_from_slice(&NC_VARIABLE.to_be_bytes());
        non_neg(&mut out, meta.vars.len() as u64);
        for ((v, &b), l) in meta.vars.iter().zip(begins).zip(layout) {
            name(&mut out, &v.name);
            non_neg(&mut out, v.dims.len() as u64);
            for &d in &v.dims {
                non_neg(&mut out, d as u64);
            }
            attrs(&mut out, &v.attrs);
            out.extend_from_slice(&(v.ty.code() as u32).to_be_bytes());
            // vsize is a 32-bit field in CDF-1/2; too-large values are written as 2^32-1
            // (netCDF classic spec: readers recompute it).
            let vsize = if !v5 && l.vsize > u64::from(u32::MAX) {
                u64::from(u32::MAX)
            } else {
                l.vsize
            };
            non_neg(&mut out, vsize);
            if meta.format == Format::Classic {
                out.extend_from_slice(&(b as u32).to_be_bytes());
            } else {
                out.extend_from_slice(&b.to_be_bytes());
            }
        }
    }
    out
}

/// Plan the layout of a new file: header bytes, begins and record size.
///
/// `hdr_pad` extra bytes are reserved after the header (NCO's `--hdr_pad`). Errors when
/// the data does not fit the format's offset or size fields (e.g. a CDF-1 file over
/// 2 GiB): the message suggests `-6` or `-5`.
pub fn plan(meta: &Meta, numrecs: u64, hdr_pad: u64, path: &str) -> Result<Header> {
    let (mut layout, recsize) = layout_sizes(meta, path)?;
    // Header length does not depend on begin values, only on their width.
    let zeros = vec![0u64; meta.vars.len()];
    let header_len = encode(meta, &zeros, numrecs, &layout).len() as u64;
    let mut pos = header_len + pad4(hdr_pad);
    for l in layout.iter_mut().filter(|l| !l.record) {
        l.begin = pos;
        pos += l.vsize;
    }
    for l in layout.iter_mut().filter(|l| l.record) {
        l.begin = pos;
        pos += l.vsize;
    }
    let too_big = |what: &str| Error::Format {
        path: path.to_string(),
        reason: format!(
            "{what} does not fit the {} format; use -6 (64-bit offset) or -5 (CDF-5)",
            meta.format.kind_name()
        ),
    };
    match meta.format {
        Format::Classic if pos > i32::MAX as u64 => return Err(too_big("an offset over 2 GiB")),
        Format::Classic | Format::Offset64 => {
            // Only the last fixed variable and the last record variable may exceed 4 GiB.
            let n = layout.len();
            for (i, l) in layout.iter().enumerate() {
                if l.vsize > u64::from(u32::MAX) - 3 && i + 1 != n {
                    return Err(too_big("a variable over 4 GiB"));
                }
            }
        }
        _ => {}
    }
    Ok(Header {
        meta: meta.clone(),
        layout,
        recsize,
        header_len,
        numrecs,
        file_len: u64::MAX,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Meta {
        let mut m = Meta::new(Format::Offset64);
        m.dims.push(Dim {
            name: "time".into(),
            len: 2,
            unlimited: true,
            group: 0,
        });
        m.dims.push(Dim {
            name: "x".into(),
            len: 3,
            unlimited: false,
            group: 0,
        });
        m.attrs.push(Attr::text("title", "t"));
        m.vars.push(Var {
            name: "a".into(),
            ty: NcType::Short,
            dims: vec![1],
            attrs: vec![Attr {
                name: "v".into(),
                value: Values::Double(vec![1.5]),
            }],
            storage: Storage::default(),
            group: 0,
        });
        m.vars.push(Var {
            name: "r".into(),
            ty: NcType::Short,
            dims: vec![0, 1],
            attrs: vec![],
            storage: Storage::default(),
            group: 0,
        });
        m
    }

    #[test]
    fn plan_then_parse_round_trips() {
        let m = sample();
        let h = plan(&m, 2, 0, "x.nc").unwrap();
        let begins: Vec<u64> = h.layout.iter().map(|l| l.begin).collect();
        let mut bytes = encode(&m, &begins, 2, &h.layout);
        assert_eq!(bytes.len() as u64, h.header_len);
        // fixed a: 6 bytes padded to 8; one record variable of 6 bytes, packed.
        assert_eq!(h.layout[0].begin, h.header_len);
        assert_eq!(h.layout[1].begin, h.header_len + 8);
        assert_eq!(h.recsize, 6);
        let total = h.layout[1].begin + 2 * 6;
        bytes.resize(total as usize, 0);
        let p = parse(&bytes, total, "x.nc").unwrap();
        assert_eq!(p.meta, m);
        assert_eq!(p.numrecs, 2);
        assert_eq!(p.layout, h.layout);
    }

    #[test]
    fn truncated_and_bad_magic_are_errors() {
        let m = sample();
        let h = plan(&m, 2, 0, "x.nc").unwrap();
        let begins: Vec<u64> = h.layout.iter().map(|l| l.begin).collect();
        let bytes = encode(&m, &begins, 2, &h.layout);
        // Data past the end: the header is read, that variable's data refused.
        let h = parse(&bytes, bytes.len() as u64, "x.nc").unwrap();
        let past = (0..h.layout.len())
            .find(|&v| h.data_end(v) > bytes.len() as u64)
            .expect("a variable past the end");
        let e = h.check_inside(past, &"x.nc").unwrap_err().to_string();
        assert!(
            e.contains(&format!("variable {} lies past the end", m.vars[past].name))
                && e.contains("truncated"),
            "{e}"
        );
        let e = parse(&bytes[..20], 20, "x.nc").unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = parse(b"HDF\x01rest", 8, "x.nc").unwrap_err();
        assert!(e.to_string().contains("magic"), "{e}");
        let e = parse(b"CDF\x03rest", 8, "x.nc").unwrap_err();
        assert!(e.to_string().contains("version"), "{e}");
    }

    #[test]
    fn hdr_pad_shifts_data_by_exactly_the_pad() {
        let m = sample();
        let a = plan(&m, 0, 0, "x").unwrap();
        let b = plan(&m, 0, 1000, "x").unwrap();
        assert_eq!(b.layout[0].begin - a.layout[0].begin, 1000);
    }
}
