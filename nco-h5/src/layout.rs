//! One variable's storage as plain data: element type and byte order, shape, chunk
//! shape, filter pipeline, fill value and the address of every chunk. Built from the
//! dataset's object header by the pure-Rust `hdf5-reader` crate ([`describe`]), with no
//! libhdf5 call and no lock; reads use it with positioned reads of their own.

use hdf5_reader::messages::datatype::{Datatype, StringSize};
use hdf5_reader::messages::fill_value::FillTime;
use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::ByteOrder;

use crate::filters::Filter;
use crate::{Error, Result};

pub use crate::locate::Loc;

/// The class of a variable's elements, as far as the engine reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A two's-complement integer, signed or not.
    Int {
        /// Whether the integer is signed.
        signed: bool,
    },
    /// An IEEE float.
    Float,
    /// A one-byte fixed-length string: netCDF's NC_CHAR.
    Char,
}

/// One variable's storage: everything a read or write needs, with no HDF5 handle.
#[derive(Clone, Debug)]
pub struct VarIndex {
    /// Dataset path in the file (`/name`, `/group/name`).
    pub name: String,
    /// Current shape (elements per dimension, slowest first; empty for a scalar).
    pub shape: Vec<u64>,
    /// Chunk shape. Contiguous storage is read in blocks of whole rows along the first
    /// dimension of about [`CONTIGUOUS_BLOCK`] bytes, described as chunks of that shape.
    pub chunk: Vec<u64>,
    /// Contiguous storage (unfiltered; its last row block may be short).
    pub contiguous: bool,
    /// Element size in bytes.
    pub elem: usize,
    /// Element class.
    pub kind: Kind,
    /// Stored big-endian (netCDF's `endian = "big"`); reads convert to native order.
    pub big_endian: bool,
    /// Filter pipeline in the order the writer applied it.
    pub filters: Vec<Filter>,
    /// Chunk locations in row-major order of the chunk grid.
    pub locs: Vec<Loc>,
    /// What a chunk never written reads as, native order (`elem` bytes): the dataset's
    /// fill value when one is defined and written, zeros otherwise (libhdf5 leaves the
    /// reader's buffer untouched then, and libnetcdf's callers pass zeroed buffers).
    pub fill: Vec<u8>,
}

impl VarIndex {
    /// The index of dataset `name` of `shape` before its layout is read: one chunk the
    /// size of the whole dataset, not contiguous, no filters and no chunk locations yet
    /// (the layout readers, [`crate::layout`] from the object header and
    /// [`crate::index`] through libhdf5, fill those in).
    pub fn new(
        name: &str,
        shape: Vec<u64>,
        elem: usize,
        kind: Kind,
        big_endian: bool,
        fill: Vec<u8>,
    ) -> VarIndex {
        VarIndex {
            name: name.into(),
            chunk: shape.clone(),
            shape,
            contiguous: false,
            elem,
            kind,
            big_endian,
            filters: Vec::new(),
            locs: Vec::new(),
            fill,
        }
    }

    /// Chunks along each dimension.
    pub fn grid(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.chunk)
            .map(|(&n, &c)| n.div_ceil(c.max(1)))
            .collect()
    }

    /// Bytes of one decoded chunk.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk.iter().product::<u64>() as usize * self.elem
    }

    /// Elements of one chunk.
    pub fn chunk_elems(&self) -> u64 {
        self.chunk.iter().product()
    }

    /// Whether the stored bytes are in the other byte order than this machine's (and
    /// elements have more than one byte): reads and writes swap them.
    pub fn swaps_bytes(&self) -> bool {
        self.big_endian != cfg!(target_endian = "big") && self.elem > 1
    }
}

/// About how many bytes of contiguous storage one read task takes.
pub const CONTIGUOUS_BLOCK: u64 = 1 << 20;

/// The largest decoded chunk the engine accepts (HDF5's own limit is 4 GiB); a larger
/// chunk shape in a header is taken as damage.
pub const MAX_CHUNK_BYTES: u64 = 1 << 32;

fn rs(e: hdf5_reader::error::Error) -> Error {
    Error::Corrupt(e.to_string())
}

/// Whether `e` says a path names no dataset (possibly wrapped with the path).
fn not_found(e: &hdf5_reader::error::Error) -> bool {
    use hdf5_reader::error::Error as E;
    match e {
        E::DatasetNotFound(_) | E::GroupNotFound(_) => true,
        E::Context { source, .. } => not_found(source),
        _ => false,
    }
}

/// The element class, size and byte order of an HDF5 datatype the engine reads.
///
/// Errors: any other type ([`Error::Unsupported`], named).
fn element(dt: &Datatype) -> Result<(Kind, usize, bool)> {
    let be = |o: &ByteOrder| *o == ByteOrder::BigEndian;
    match dt {
        Datatype::FixedPoint {
            size,
            signed,
            byte_order,
        } if matches!(size, 1 | 2 | 4 | 8) => Ok((
            Kind::Int { signed: *signed },
            *size as usize,
            be(byte_order) && *size > 1,
        )),
        Datatype::FloatingPoint { size, byte_order } if matches!(size, 4 | 8) => {
            Ok((Kind::Float, *size as usize, be(byte_order)))
        }
        Datatype::String {
            size: StringSize::Fixed(1),
            ..
        } => Ok((Kind::Char, 1, false)),
        other => Err(Error::Unsupported(format!("HDF5 type {other:?}"))),
    }
}

/// The storage of dataset `path` of `f` (see [`VarIndex`]), chunk index included.
///
/// Errors: no such dataset or a damaged header or index ([`Error::Corrupt`]); compact,
/// virtual or external storage, or a type other than an integer, float or NC_CHAR
/// ([`Error::Unsupported`]); a filter we do not decode ([`Error::UnsupportedFilter`]).
pub fn describe(f: &hdf5_reader::Hdf5File, path: &str) -> Result<VarIndex> {
    let ds = f.dataset(path).map_err(|e| {
        if not_found(&e) {
            Error::Unsupported(format!("no dataset {path}"))
        } else {
            rs(e)
        }
    })?;
    let hdr = f.get_or_parse_header(ds.address()).map_err(rs)?;
    let (mut space, mut dtype, mut layout, mut pipeline) = (None, None, None, None);
    let (mut fill_value, mut never) = (None, false);
    let mut external = false;
    for m in &hdr.messages {
        match m {
            HdfMessage::Dataspace(d) => space = Some(d),
            HdfMessage::Datatype(d) => dtype = Some(&d.datatype),
            HdfMessage::DataLayout(l) => layout = Some(&l.layout),
            HdfMessage::FilterPipeline(p) => pipeline = Some(p),
            HdfMessage::ExternalFiles(_) => external = true,
            HdfMessage::FillValue(fv) => {
                // The fill-time codes of the message are 0 on allocation, 1 never, 2
                // if set (HDF5 file format specification, "Fill Value Message");
                // hdf5-reader 0.12.1 names them IfSet, Always and Never in that order,
                // so its `Always` is HDF5's "never".
                never |= fv.fill_time == FillTime::Always;
                if fv.defined {
                    if let Some(v) = &fv.value {
                        fill_value = Some(v.clone());
                    }
                }
            }
            _ => {}
        }
    }
    let space = space.ok_or_else(|| Error::Corrupt("dataset without a dataspace".into()))?;
    let Some(dtype) = dtype else {
        return Err(Error::Unsupported("shared (committed) datatype".into()));
    };
    let layout = layout.ok_or_else(|| Error::Corrupt("dataset without a layout".into()))?;
    if external {
        return Err(Error::Unsupported("external raw data files".into()));
    }
    let (kind, elem, big_endian) = element(dtype)?;
    let shape = space.dims.clone();
    let n = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::Corrupt("dataspace too large".into()))?;
    let mut fill = vec![0u8; elem];
    if let Some(v) = fill_value.filter(|v| v.len() == elem && !never) {
        fill = v;
        if big_endian != cfg!(target_endian = "big") {
            fill.reverse();
        }
    }
    let mut var = VarIndex::new(path, shape.clone(), elem, kind, big_endian, fill);
    match layout {
        DataLayout::Contiguous { address, size } => {
            var.contiguous = true;
            let want = n
                .checked_mul(elem as u64)
                .ok_or_else(|| Error::Corrupt("dataspace too large".into()))?;
            let sb = f.superblock();
            let undefined = *address == u64::MAX
                || (sb.offset_size < 8 && *address == (1u64 << (8 * sb.offset_size)) - 1);
            if *size < want && !undefined {
                return Err(Error::Corrupt(format!(
                    "contiguous storage of {size} bytes for {want} bytes of data"
                )));
            }
            // Row blocks of about CONTIGUOUS_BLOCK bytes along the first dimension.
            let row = want / shape.first().copied().filter(|&r| r > 0).unwrap_or(1);
            if let Some(c0) = var.chunk.first_mut() {
                *c0 = (CONTIGUOUS_BLOCK / row.max(1)).clamp(1, (*c0).max(1));
            }
            for c in var.chunk.iter_mut() {
                *c = (*c).max(1);
            }
            let rows_per = var.chunk.first().copied().unwrap_or(1);
            let blocks = var.grid().iter().product::<u64>().max(1);
            for b in 0..blocks {
                let first = b * rows_per * row;
                var.locs.push(if undefined || want == 0 {
                    Loc::UNALLOCATED
                } else {
                    Loc {
                        addr: address
                            .checked_add(first)
                            .filter(|&a| a != u64::MAX)
                            .ok_or_else(|| Error::Corrupt("contiguous data address".into()))?,
                        size: (rows_per * row).min(want - first),
                        mask: 0,
                    }
                });
            }
        }
        DataLayout::Chunked { dims, .. } => {
            let rank = shape.len();
            let mut chunk: Vec<u64> = dims.iter().map(|&d| u64::from(d)).collect();
            if chunk.len() == rank + 1 {
                chunk.pop();
            }
            if chunk.len() != rank || chunk.contains(&0) {
                return Err(Error::Corrupt(format!(
                    "chunk shape {chunk:?} for a dataspace of rank {rank}"
                )));
            }
            chunk
                .iter()
                .try_fold(elem as u64, |a, &d| a.checked_mul(d))
                .filter(|&b| b <= MAX_CHUNK_BYTES)
                .ok_or_else(|| Error::Corrupt(format!("chunk shape {chunk:?} too large")))?;
            var.chunk = chunk;
            if let Some(p) = pipeline {
                for fd in &p.filters {
                    var.filters.push(Filter::from_hdf5(
                        i32::from(fd.id),
                        &fd.client_data,
                        elem,
                        fd.name.as_deref().unwrap_or(filter_name(fd.id)),
                    )?);
                }
            }
            let grid = crate::locate::Grid {
                shape: &var.shape,
                chunk: &var.chunk,
                elem: var.elem,
                filtered: !var.filters.is_empty(),
            };
            var.locs = crate::locate::chunk_locs(f, &ds, layout, &grid)?;
        }
        DataLayout::Compact { .. } => {
            return Err(Error::Unsupported("compact storage".into()));
        }
    }
    // HDF5 addresses count from the superblock, which a user block moves.
    let base = f.superblock().base_address;
    for l in var.locs.iter_mut().filter(|l| l.allocated()) {
        l.addr = l
            .addr
            .checked_add(base)
            .filter(|&a| a != u64::MAX)
            .ok_or_else(|| Error::Corrupt(format!("chunk address {} out of range", l.addr)))?;
    }
    Ok(var)
}

/// The registered name of HDF5 filter `id`, for messages (HDF5's list of registered
/// filters).
pub fn filter_name(id: u16) -> &'static str {
    match id {
        1 => "deflate",
        2 => "shuffle",
        3 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        305 => "lzo",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32004 => "lz4",
        32008 => "bitshuffle",
        32013 => "zfp",
        32015 => "zstd",
        32017 => "sz",
        32026 => "blosc2",
        _ => "unregistered",
    }
}
