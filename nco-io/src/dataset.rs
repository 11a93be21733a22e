//! The one dataset interface the operators use: [`Dataset`] for input files and
//! [`OutFile`] for outputs, each choosing a backend per file.
//!
//! * Classic files (CDF-1/2/5) are read by our own reader ([`crate::classic`]), lock-free
//!   and safe to share across threads, and written by our own writer.
//! * netCDF-4/HDF5 files have their metadata read by libnetcdf ([`crate::nc4`]) and
//!   their data by our chunk engine ([`crate::h5`]) where it applies (libnetcdf reads
//!   the rest); DAP URLs go through libnetcdf.
//! * An [`IoConfig`] can force libnetcdf for reading every file, the data of netCDF-4
//!   files included (`--no-mmap`, for comparison), and for writing classic files too
//!   (then `--hdr_pad` is not available: the netcdf crate does not wrap `nc__enddef`).
//!   The command-line layer fills it from the options and the environment and installs
//!   it ([`set_io_config`]); this crate never reads the environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, RwLock};

use crate::classic;
use crate::error::{Error, Result};
pub use crate::h5::{EncodedPiece, RowsEncoder};
use crate::h5::{H5Reader, H5Writer};
use crate::model::{Attr, Meta};
use crate::nc4::{LibReader, LibWriter};
use crate::types::Values;

/// How files are opened and created: which backend reads and writes classic files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoConfig {
    /// Read every input through libnetcdf, classic files too (`--no-mmap`).
    pub force_libnetcdf: bool,
    /// Map classic inputs into memory instead of positioned reads (best for many
    /// small scattered reads, e.g. station extraction: only the touched pages are read,
    /// with no system call per read).
    pub mmap: bool,
    /// Write classic outputs through libnetcdf too.
    pub lib_write: bool,
    /// Seconds one libnetcdf call on a DAP URL (an open, a read) may take before the
    /// operator gives up with an error naming the URL: `None` for
    /// [`DEFAULT_DAP_TIMEOUT_S`], `Some(0)` for no limit.
    pub dap_timeout_s: Option<u64>,
}

/// The default limit of one libnetcdf call on a DAP URL, in seconds
/// ([`IoConfig::dap_timeout_s`]): long enough for a large hyperslab over a slow link,
/// short enough that a server that never answers does not hang a pipeline.
pub const DEFAULT_DAP_TIMEOUT_S: u64 = 300;

impl IoConfig {
    /// This configuration with classic inputs mapped into memory.
    pub fn mapped(self) -> IoConfig {
        IoConfig { mmap: true, ..self }
    }
}

static CONFIG: RwLock<IoConfig> = RwLock::new(IoConfig {
    force_libnetcdf: false,
    mmap: false,
    lib_write: false,
    dap_timeout_s: None,
});

/// Make `config` the process default, used by [`Dataset::open`] and [`OutFile::create`]
/// from now on (set once at start by the command-line layer).
pub fn set_io_config(config: IoConfig) {
    *CONFIG
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = config;
}

/// The process default [`IoConfig`] (all off until [`set_io_config`]).
pub fn io_config() -> IoConfig {
    *CONFIG
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// True when `path` is a DAP (OPeNDAP) URL: read through libnetcdf's DAP2 client, never
/// through a local-file path.
pub fn is_url(path: &Path) -> bool {
    let Some(path) = path.to_str() else {
        return false;
    };
    path.starts_with("http://") || path.starts_with("https://") || path.starts_with("dods://")
}

enum Reader {
    Classic(classic::Reader),
    Lib(LibReader),
    /// netCDF-4: metadata (and what the engine does not read) by libnetcdf, data by
    /// the engine.
    Nc4(LibReader, H5Reader),
}

/// One selection read ahead: its values and how many reads will still ask for it.
struct Ahead {
    sel: Vec<Vec<usize>>,
    values: Values,
    left: usize,
}

/// Values read ahead for later reads of exactly the same selections: list-input
/// station extraction reads every input once for all stations, then writes each
/// station's output through the ordinary read calls, which find their values here.
/// A read of a selection not held here goes to the file as usual, so a selection read
/// differently is only slower, never wrong.
#[derive(Default)]
pub struct ReadAhead {
    /// By (variable, fingerprint of the selection).
    map: Mutex<HashMap<(usize, u64), Vec<Ahead>>>,
    any: AtomicBool,
}

/// A cheap fingerprint of a selection (multiply-xor over its indices and lengths), to
/// find read-ahead selections without hashing or copying them in full.
fn fingerprint(sel: &[Vec<usize>]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut mix = |x: usize| h = (h.rotate_left(5) ^ x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for d in sel {
        mix(d.len());
        for &i in d {
            mix(i);
        }
    }
    h
}

impl ReadAhead {
    /// Keep `values` of selection `sel` of variable `var` for `reads` later reads.
    pub fn put(&self, var: usize, sel: &[Vec<usize>], values: Values, reads: usize) {
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let list = map.entry((var, fingerprint(sel))).or_default();
        match list.iter_mut().find(|e| e.sel == sel) {
            Some(e) => e.left += reads,
            None => list.push(Ahead {
                sel: sel.to_vec(),
                values,
                left: reads,
            }),
        }
        self.any.store(true, Ordering::Release);
    }

    /// The values kept for selection `sel` of variable `var`, if any (forgotten after
    /// their last expected read).
    pub fn take(&self, var: usize, sel: &[Vec<usize>]) -> Option<Values> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let list = map.get_mut(&(var, fingerprint(sel)))?;
        let k = list.iter().position(|e| e.sel == sel)?;
        list[k].left -= 1;
        Some(if list[k].left == 0 {
            list.swap_remove(k).values
        } else {
            list[k].values.clone()
        })
    }

    /// Forget everything kept.
    pub fn clear(&self) {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        self.any.store(false, Ordering::Release);
    }
}

/// Group equal selections: the distinct ones in first-seen order, with how many times
/// each was listed.
pub fn distinct_selections(sels: &[Vec<Vec<usize>>]) -> Vec<(&[Vec<usize>], usize)> {
    let mut index: HashMap<(u64, usize), Vec<usize>> = HashMap::new();
    let mut out: Vec<(&[Vec<usize>], usize)> = Vec::new();
    for s in sels {
        let fp = fingerprint(s);
        let bucket = index.entry((fp, s.len())).or_default();
        match bucket.iter().find(|&&k| out[k].0 == s.as_slice()) {
            Some(&k) => out[k].1 += 1,
            None => {
                bucket.push(out.len());
                out.push((s.as_slice(), 1));
            }
        }
    }
    out
}

/// The libraries the dataset layer reads and writes through, with their versions, for
/// `-r`/`--version` (NCO's `-r` prints the netCDF library's): `("netCDF", "4.9.0 of
/// ...")`, `("HDF5", "1.10.8")`. Asked of the libraries only when called.
pub fn library_versions() -> Vec<(&'static str, String)> {
    let mut v = vec![("netCDF", crate::nc4::netcdf_version())];
    v.push((
        "HDF5",
        crate::nc4::hdf5_version().unwrap_or_else(|| "not loaded".to_string()),
    ));
    v
}

/// Decode raw big-endian bytes of type `ty` (what [`Dataset::gather_raw_into`] and
/// [`Dataset::read_raw_be_into`] return) into values, in parallel for large buffers.
pub fn decode_raw(ty: crate::types::NcType, raw: &[u8]) -> Values {
    classic::decode_par(ty, raw)
}

/// A block of [`Dataset::read_blocks_raw`].
pub enum Block<'a> {
    /// Raw big-endian bytes (classic files, read by our engine).
    Be(&'a [u8]),
    /// Decoded values (files read through libnetcdf).
    Values(Values),
}

/// The row blocks of [`nco_base::blocks::row_blocks`] for a variable stored in chunks
/// of `c0` rows: each block takes whole bands of rows from one chunk row (consecutive
/// positions of `sel[0]` in the same chunk row), as many as fit in about `max_bytes`
/// and at least one band, so a chunk row is decoded once, not once per block. Memory:
/// at most the larger of `max_bytes` and one chunk row.
pub fn chunk_row_blocks(
    sel: &[Vec<usize>],
    elem_size: usize,
    max_bytes: usize,
    c0: usize,
) -> Vec<(usize, usize)> {
    let Some(rows) = sel.first() else {
        return vec![(0, 0)];
    };
    let row_bytes = sel[1..].iter().map(Vec::len).product::<usize>() * elem_size;
    let per = (max_bytes / row_bytes.max(1)).max(1);
    let band_end = |mut q: usize| {
        let b = rows[q] / c0;
        while q < rows.len() && rows[q] / c0 == b {
            q += 1;
        }
        q
    };
    let mut out = Vec::new();
    let mut p = 0;
    while p < rows.len() {
        let mut q = band_end(p);
        while q < rows.len() {
            let next = band_end(q);
            if next - p > per {
                break;
            }
            q = next;
        }
        out.push((p, q - p));
        p = q;
    }
    out
}

/// An input dataset opened for reading.
pub struct Dataset {
    path: PathBuf,
    reader: Reader,
    /// Selections read ahead by [`Dataset::prefetch`] for [`Dataset::read`].
    ahead: ReadAhead,
    /// A classic file read through libnetcdf: its header as our parser reads it, so a
    /// variable past the end of a truncated file is refused as by our reader
    /// ([`classic::header::Header::check_inside`]; libnetcdf reads zeros there).
    classic_header: Option<Box<classic::header::Header>>,
}

/// One index list per dimension of `var`, selecting everything.
pub fn full_selection(meta: &Meta, var: usize) -> Vec<Vec<usize>> {
    meta.vars[var]
        .dims
        .iter()
        .map(|&d| (0..meta.dims[d].len).collect())
        .collect()
}

impl Dataset {
    /// Open `path` with the process default [`IoConfig`] ([`io_config`]). Errors name
    /// the file: missing or unreadable, not netCDF, truncated or corrupt header.
    pub fn open(path: impl AsRef<Path>) -> Result<Dataset> {
        Self::open_with(path.as_ref(), &io_config())
    }

    /// Open `path` with `config`: libnetcdf for every file when it says so, classic
    /// files mapped into memory or read with positioned reads. Errors: as
    /// [`Dataset::open`].
    pub fn open_with(path: &Path, config: &IoConfig) -> Result<Dataset> {
        let name = path.display().to_string();
        let mut checked = None;
        if !is_url(path) {
            let md = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
            if md.is_dir() {
                return Err(Error::Format {
                    path: name.clone(),
                    reason: "is a directory".into(),
                });
            }
            let mut magic = [0u8; 4];
            let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            let n = std::os::unix::fs::FileExt::read_at(&f, &mut magic, 0)
                .map_err(|e| Error::io(path, e))?;
            let classic = n == 4 && &magic[..3] == b"CDF";
            let hdf = n == 4 && &magic[1..4] == b"HDF";
            if !classic && !hdf {
                return Err(Error::Format {
                    path: name.clone(),
                    reason: "not a netCDF file (unknown file format)".into(),
                });
            }
            if classic && !config.force_libnetcdf {
                // Positioned reads by default: as fast as a memory map here (docs/engine.md),
                // immune to truncation by another process, and they do not count the
                // whole file in our resident memory. `config.mmap` maps instead.
                let use_pread = !config.mmap;
                let r = classic::Reader::open(path, use_pread)?;
                return Ok(Dataset::with_reader(path, Reader::Classic(r)));
            }
            if classic {
                // Validate with our parser first: libnetcdf accepts some truncated files.
                checked = Some(Box::new(
                    classic::Reader::open(path, true)?.header().clone(),
                ));
            }
            if hdf {
                crate::h5::check_not_truncated(path)?;
            }
        }
        let r = LibReader::open(path)?;
        if checked.is_some() {
            let mut ds = Dataset::with_reader(path, Reader::Lib(r));
            ds.classic_header = checked;
            return Ok(ds);
        }
        if !is_url(path) && !config.force_libnetcdf && r.meta().format.is_netcdf4() {
            // A file libnetcdf opens but the engine's parser does not stays with
            // libnetcdf.
            if let Ok(h5) = H5Reader::open(path, r.meta()) {
                // The engine reads the data: libnetcdf's handle (and its caches) is
                // opened again only for what the engine does not read.
                r.close_handle();
                return Ok(Dataset::with_reader(path, Reader::Nc4(r, h5)));
            }
        }
        Ok(Dataset::with_reader(path, Reader::Lib(r)))
    }

    fn with_reader(path: &Path, reader: Reader) -> Dataset {
        Dataset {
            path: path.to_path_buf(),
            reader,
            ahead: ReadAhead::default(),
            classic_header: None,
        }
    }

    /// The path or URL this dataset was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The metadata.
    pub fn meta(&self) -> &Meta {
        match &self.reader {
            Reader::Classic(r) => r.meta(),
            Reader::Lib(r) | Reader::Nc4(r, _) => r.meta(),
        }
    }

    /// Read the selected elements (one index list per dimension, in output order; empty
    /// for a scalar) of variable `var` (index into `meta().vars`), in its own type.
    pub fn read(&self, var: usize, sel: &[Vec<usize>]) -> Result<Values> {
        if let Some(v) = self.ahead.take(var, sel) {
            return Ok(v);
        }
        match &self.reader {
            Reader::Classic(r) => r.read(var, sel),
            Reader::Lib(r) => {
                if let Some(h) = &self.classic_header {
                    h.check_inside(var, &self.path.display())?;
                }
                r.read(var, sel)
            }
            Reader::Nc4(lib, h5) => match h5.read(lib.meta(), var, sel)? {
                Some(v) => Ok(v),
                None => lib.read(var, sel).map_err(|e| self.explained(var, e)),
            },
        }
    }

    /// Read the distinct selections `sels` of variable `var` in one pass over the file
    /// (see [`crate::classic::Reader::gather_raw_into`]); the mapped pages of `var` are
    /// released afterwards, so memory holds the values, not the file.
    ///
    /// Errors: as [`Dataset::read`].
    pub fn gather(&self, var: usize, sels: &[&[Vec<usize>]]) -> Result<Vec<Values>> {
        let ty = self.meta().vars[var].ty;
        let mut outs = vec![Vec::new(); sels.len()];
        if self.gather_raw_into(var, None, sels, &mut outs)? {
            return Ok(outs.iter().map(|b| classic::decode_par(ty, b)).collect());
        }
        sels.iter().map(|s| self.read(var, s)).collect()
    }

    /// [`Dataset::gather`] as raw big-endian bytes appended to `outs`, with `dim0`
    /// (when given) replacing the first dimension's indices of every selection; see
    /// [`crate::classic::Reader::gather_raw_into`]. Returns false (nothing read) when
    /// this file is not read by our classic reader.
    ///
    /// Errors: as [`Dataset::read`].
    pub fn gather_raw_into(
        &self,
        var: usize,
        dim0: Option<&[usize]>,
        sels: &[&[Vec<usize>]],
        outs: &mut [Vec<u8>],
    ) -> Result<bool> {
        match &self.reader {
            Reader::Classic(r) => {
                r.gather_raw_into(var, dim0, sels, outs)?;
                r.release(var);
                Ok(true)
            }
            Reader::Lib(_) | Reader::Nc4(..) => Ok(false),
        }
    }

    /// A libnetcdf read error of variable `var` with the reason the engine did not
    /// read it, when that names a filter (libnetcdf only says "HDF error").
    fn explained(&self, var: usize, e: Error) -> Error {
        let Reader::Nc4(lib, h5) = &self.reader else {
            return e;
        };
        match h5.engine_reads(lib.meta(), var) {
            Ok(Err(why)) if why.contains("filter") => Error::Format {
                path: self.path.display().to_string(),
                reason: format!(
                    "variable {}: {why}, and libnetcdf failed too: {e}",
                    lib.meta().vars[var].name
                ),
            },
            _ => e,
        }
    }

    /// Read the selections `sels` of variable `var` in one pass over the file
    /// ([`Dataset::gather`]) and keep them for the [`Dataset::read`] calls of exactly
    /// these selections that will follow (a selection listed twice is served twice).
    /// Call [`Dataset::clear_prefetched`] after the outputs are written.
    ///
    /// Errors: as [`Dataset::read`].
    pub fn prefetch(&self, var: usize, sels: &[Vec<Vec<usize>>]) -> Result<()> {
        let groups = distinct_selections(sels);
        let distinct: Vec<&[Vec<usize>]> = groups.iter().map(|g| g.0).collect();
        let values = self.gather(var, &distinct)?;
        for ((s, n), v) in groups.into_iter().zip(values) {
            self.ahead.put(var, s, v, n);
        }
        Ok(())
    }

    /// Forget every selection kept by [`Dataset::prefetch`] and not yet read.
    pub fn clear_prefetched(&self) {
        self.ahead.clear();
    }

    /// Read the selection `sel` of variable `var` in blocks of whole rows along its
    /// first dimension, at most about `max_bytes` each, calling `f(pos, values)` with
    /// `pos` the position of the block's first row within `sel[0]`. Scalars come as
    /// one block. Bounds memory for large variables.
    pub fn read_blocks(
        &self,
        var: usize,
        sel: &[Vec<usize>],
        max_bytes: usize,
        mut f: impl FnMut(usize, Values) -> Result<()>,
    ) -> Result<()> {
        self.blocks(var, sel, max_bytes, |pos, idx| f(pos, self.read(var, idx)?))
    }

    /// [`Dataset::read_blocks`] without decoding when this file is read by our classic
    /// reader: `f` gets each block's raw big-endian bytes (one buffer, reused), or the
    /// decoded values from libnetcdf otherwise.
    pub fn read_blocks_raw(
        &self,
        var: usize,
        sel: &[Vec<usize>],
        max_bytes: usize,
        mut f: impl FnMut(usize, Block<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut buf = Vec::new();
        self.blocks(var, sel, max_bytes, |pos, idx| {
            if self.read_raw_be_into(var, idx, &mut buf)? {
                f(pos, Block::Be(&buf))
            } else {
                f(pos, Block::Values(self.read(var, idx)?))
            }
        })
    }

    /// The row blocks of [`Dataset::read_blocks`]: `f(pos, selection of the block)`.
    fn blocks(
        &self,
        var: usize,
        sel: &[Vec<usize>],
        max_bytes: usize,
        mut f: impl FnMut(usize, &[Vec<usize>]) -> Result<()>,
    ) -> Result<()> {
        if sel.is_empty() {
            return f(0, sel);
        }
        let es = self.meta().vars[var].ty.size();
        let mut idx = sel.to_vec();
        let plan = match self.chunk_rows(var)? {
            Some(c0) if c0 > 1 => chunk_row_blocks(sel, es, max_bytes, c0),
            _ => nco_base::blocks::row_blocks(sel, es, max_bytes),
        };
        for (pos, len) in plan {
            idx[0] = sel[0][pos..pos + len].to_vec();
            f(pos, &idx)?;
        }
        Ok(())
    }

    /// The chunk length along the first dimension of variable `var` when our engine
    /// reads it (blocks then end on chunk boundaries, so no chunk is decoded twice).
    fn chunk_rows(&self, var: usize) -> Result<Option<usize>> {
        let Reader::Nc4(lib, h5) = &self.reader else {
            return Ok(None);
        };
        if h5.engine_reads(lib.meta(), var)?.is_err() {
            return Ok(None);
        }
        Ok(h5
            .chunk_shape(lib.meta(), var)
            .and_then(|c| c.first())
            .map(|&c| c as usize))
    }

    /// Read the selection of variable `var` as raw big-endian bytes into `buf` when
    /// this file is read by our classic reader; returns false (nothing read) otherwise.
    pub fn read_raw_be_into(
        &self,
        var: usize,
        sel: &[Vec<usize>],
        buf: &mut Vec<u8>,
    ) -> Result<bool> {
        match &self.reader {
            Reader::Classic(r) => r.read_raw_into(var, sel, buf).map(|()| true),
            Reader::Lib(_) | Reader::Nc4(..) => Ok(false),
        }
    }

    /// The selection `sel` of variable `var` as a reader of native-order blocks
    /// ([`NativeBlocks`]), when our netCDF-4 engine can read it without a whole
    /// decoded copy: exactly one whole stored chunk, shuffled, in native byte order
    /// ([`nco_h5::read::whole_shuffled_chunk`]). `None` otherwise (read it with
    /// [`Dataset::read`]).
    ///
    /// Errors: a damaged header or chunk index (named).
    pub fn native_blocks(
        &self,
        var: usize,
        sel: &[Vec<usize>],
    ) -> Result<Option<NativeBlocks<'_>>> {
        let Reader::Nc4(lib, h5) = &self.reader else {
            return Ok(None);
        };
        if self.ahead.any.load(Ordering::Acquire) {
            return Ok(None);
        }
        let Some(x) = h5.storage(lib.meta(), var)? else {
            return Ok(None);
        };
        Ok(
            nco_h5::read::whole_shuffled_chunk(x, sel).map(|loc| NativeBlocks {
                h5,
                index: x,
                loc,
                name: &lib.meta().vars[var].name,
            }),
        )
    }

    /// Read all of variable `var`.
    pub fn read_all(&self, var: usize) -> Result<Values> {
        let sel = full_selection(self.meta(), var);
        self.read(var, &sel)
    }

    /// Read variable `name` entirely, if it exists.
    pub fn read_named(&self, name: &str) -> Result<Option<Values>> {
        match self.meta().var_id(name) {
            Some(id) => self.read_all(id).map(Some),
            None => Ok(None),
        }
    }

    /// True when the file has groups below the root group, which nco-rs does not read
    /// (a netCDF-4 file; classic files have none).
    pub fn has_subgroups(&self) -> bool {
        match &self.reader {
            Reader::Classic(_) => false,
            Reader::Lib(r) | Reader::Nc4(r, _) => r.has_subgroups(),
        }
    }

    /// The hidden attributes of a netCDF-4 file ([`LibReader::hidden_attributes`]);
    /// none for netCDF3 files.
    ///
    /// Errors: libnetcdf's.
    pub fn hidden_attributes(&self) -> Result<(Vec<Attr>, Vec<Option<&'static str>>)> {
        match &self.reader {
            Reader::Classic(_) => Ok((Vec::new(), vec![None; self.meta().vars.len()])),
            Reader::Lib(r) | Reader::Nc4(r, _) => r.hidden_attributes(),
        }
    }

    /// Our classic reader, when this file uses it (for raw copies).
    pub fn classic(&self) -> Option<&classic::Reader> {
        match &self.reader {
            Reader::Classic(r) => Some(r),
            Reader::Lib(_) | Reader::Nc4(..) => None,
        }
    }
}

enum Writer {
    Classic(classic::Writer),
    Lib(LibWriter),
    /// netCDF-4: chunked data by the engine, definitions (and what the engine does not
    /// write) by libnetcdf. (Fields drop in order: the engine's libhdf5 handle closes
    /// before libnetcdf's.)
    Nc4(H5Writer, LibWriter),
}

/// Fail when a value of `values` lies outside the range of `ty` (integer types).
fn check_range(
    name: &str,
    values: &Values,
    ty: crate::types::NcType,
    format: crate::model::Format,
) -> Result<()> {
    use crate::types::NcNum;
    let Some(x) = values.to_f64_vec() else {
        return Ok(());
    };
    fn first_bad<T: NcNum>(x: &[f64]) -> Option<f64> {
        x.iter().copied().find(|&v| !T::fits(v))
    }
    let bad = crate::dispatch_type!(ty, T => first_bad::<T>(&x); char => None; string => None);
    match bad {
        Some(v) => Err(Error::var(
            name,
            format!(
                "value {v} ({}) does not fit {ty}, the type a {} file stores it as \
                 (NCO 5.1.4 writes a wrapped value there: write netCDF-4 with -4, or convert it with ncap2 first)",
                values.nc_type(),
                format.kind_name()
            ),
        )),
        None => Ok(()),
    }
}

/// A transformation of a variable's values just before they are stored (quantization:
/// the planning layer registers one per quantized variable, [`OutFile::set_filter`]).
/// It gets the values, already in the variable's type, and the linear index (row-major,
/// over the variable's whole shape) of the first of them.
pub type WriteFilter = Box<dyn Fn(&mut Values, u64) + Send + Sync>;

/// One whole chunk of a netCDF-4 variable read as blocks of native-order bytes
/// ([`Dataset::native_blocks`]).
pub struct NativeBlocks<'a> {
    h5: &'a H5Reader,
    index: &'a nco_h5::VarIndex,
    loc: nco_h5::Loc,
    name: &'a str,
}

impl NativeBlocks<'_> {
    /// Hand the chunk's bytes to `f` in order, in blocks of about `block` bytes:
    /// `f(byte offset, bytes)` ([`nco_h5::read::decode_chunk_blocks`]).
    ///
    /// Errors: damaged data (a bad deflate stream, a checksum mismatch, a chunk past
    /// the end of the file), named with the file and variable.
    pub fn read(self, block: usize, f: &mut dyn FnMut(usize, &[u8])) -> Result<()> {
        let file = self.h5.file();
        nco_h5::read::decode_chunk_blocks(self.index, file, self.loc, block, &mut |at, b| {
            f(at, b);
            Ok(())
        })
        .map_err(|e| crate::h5::named_var(&file.path().display().to_string(), self.name, e))
    }
}

/// What a thread computing a variable hands the writer: its values, or its chunk rows
/// already encoded ([`OutFile::encoder`]).
#[derive(Debug)]
pub enum Piece {
    /// Values of the variable (any type the variable's converts from).
    Values(Values),
    /// Whole chunk rows, encoded.
    Encoded(crate::h5::EncodedPiece),
}

/// An output file being written: definitions first (all at [`OutFile::create`]), then data.
pub struct OutFile {
    writer: Writer,
    meta: Meta,
    /// The filter of each variable that has one (by variable index).
    filters: Vec<Option<WriteFilter>>,
}

impl OutFile {
    /// Create `path` with every definition of `meta`, with the process default
    /// [`IoConfig`] ([`io_config`]). Classic formats use our writer (with `hdr_pad`
    /// spare header bytes); netCDF-4 formats have their definitions made by libnetcdf
    /// and their chunked data written by our engine ([`crate::h5::H5Writer`];
    /// libnetcdf writes everything when `config` forces it for reading or writing).
    /// `meta` must be storable in its format (the operators make it so with
    /// `nco_core::rules::formats::storable`); the writers refuse a type the format
    /// cannot hold.
    pub fn create(path: impl AsRef<Path>, meta: &Meta, hdr_pad: u64) -> Result<OutFile> {
        Self::create_with(path.as_ref(), meta, hdr_pad, &io_config())
    }

    /// [`OutFile::create`] with `config` (`lib_write` or `force_libnetcdf`: libnetcdf
    /// for every format).
    pub fn create_with(
        path: &Path,
        meta: &Meta,
        hdr_pad: u64,
        config: &IoConfig,
    ) -> Result<OutFile> {
        let writer = if meta.format.is_classic_family() && !config.lib_write {
            Writer::Classic(classic::Writer::create(path, meta, hdr_pad)?)
        } else if meta.format.is_netcdf4() && !config.lib_write && !config.force_libnetcdf {
            let lib = LibWriter::create(path, meta)?;
            let h5 = H5Writer::open(path, meta)?;
            Writer::Nc4(h5, lib)
        } else {
            Writer::Lib(LibWriter::create(path, meta)?)
        };
        Ok(OutFile {
            writer,
            meta: meta.clone(),
            filters: Vec::new(),
        })
    }

    /// Pass every value later written to variable `var` through `filter` first. Raw
    /// copies ([`OutFile::copy_var_raw`], [`OutFile::copy_record_raw`]) of a filtered
    /// variable are refused (they return false), so its callers write it value by value.
    pub fn set_filter(&mut self, var: usize, filter: WriteFilter) {
        if self.filters.len() <= var {
            self.filters.resize_with(var + 1, || None);
        }
        self.filters[var] = Some(filter);
    }

    /// Remove variable `var`'s [`WriteFilter`] and give it back (to write values that
    /// must stay as they are, such as an existing output's records, then
    /// [`OutFile::set_filter`] it again).
    pub fn take_filter(&mut self, var: usize) -> Option<WriteFilter> {
        self.filters.get_mut(var).and_then(Option::take)
    }

    /// True when variable `var` has a [`WriteFilter`].
    fn filtered(&self, var: usize) -> bool {
        self.filters.get(var).is_some_and(Option::is_some)
    }

    /// The output's metadata.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Write values (in the variable's type) from index `first` of the first dimension
    /// (record number for record variables), covering whole rows of the others.
    pub fn write(&mut self, var: usize, first: usize, values: &Values) -> Result<()> {
        self.write_at(var, &[first], values)
    }

    /// Write values (in the variable's type, or converted) from the multi-index `first`
    /// (one index for each leading dimension): they cover consecutive indices of
    /// dimension `first.len() - 1` and the whole of the later dimensions, within one
    /// index of each earlier one (a piece of a row). `write_at(v, &[r], x)` is
    /// `write(v, r, x)`.
    ///
    /// Errors: a piece past the end of the variable, conversion and I/O errors; a value
    /// outside the range of the type a netCDF3 format stores a netCDF-4 integer type as
    /// (NCO 5.1.4 fails there too, with libnetcdf's NC_ERANGE).
    pub fn write_at(&mut self, var: usize, first: &[usize], values: &Values) -> Result<()> {
        let want = self.meta.vars[var].ty;
        if values.nc_type() != want {
            // Values of a type the format cannot hold were planned for a variable the
            // format made narrower (nco_core::rules::formats): they must fit.
            if !self.meta.format.supports(values.nc_type()) {
                check_range(&self.meta.vars[var].name, values, want, self.meta.format)?;
            }
            let conv = values.convert(want).ok_or_else(|| {
                Error::var(
                    &self.meta.vars[var].name,
                    format!("cannot convert {} to {want}", values.nc_type()),
                )
            })?;
            return self.write_owned(var, first, conv);
        }
        if self.filtered(var) {
            return self.write_owned(var, first, values.clone());
        }
        self.store(var, first, values)
    }

    /// [`OutFile::write_at`] of values the caller gives up: a filtered variable's values
    /// are filtered in place (no copy).
    ///
    /// Errors: as [`OutFile::write_at`].
    pub fn write_owned(&mut self, var: usize, first: &[usize], values: Values) -> Result<()> {
        let want = self.meta.vars[var].ty;
        if values.nc_type() != want || !self.filtered(var) {
            return self.write_at(var, first, &values);
        }
        let mut values = values;
        if let Some(Some(filter)) = self.filters.get(var) {
            let shape = self.meta.shape(&self.meta.vars[var]);
            let mut at = 0u64;
            let mut stride = 1u64;
            for d in (0..shape.len()).rev() {
                if d < first.len() {
                    at += first[d] as u64 * stride;
                }
                stride *= shape[d] as u64;
            }
            filter(&mut values, at);
        }
        self.store(var, first, &values)
    }

    /// An encoder of whole chunk rows of variable `var`, for the threads that compute
    /// its values ([`crate::h5::RowsEncoder`]): netCDF-4 outputs whose variable our
    /// engine writes and that has no write filter (`--ppc`); `None` otherwise.
    pub fn encoder(&self, var: usize) -> Option<crate::h5::RowsEncoder> {
        match &self.writer {
            Writer::Nc4(h5, _) if !self.filtered(var) => h5.encoder(&self.meta, var),
            _ => None,
        }
    }

    /// Write a piece: values ([`OutFile::write_owned`] from row `first`) or chunk rows
    /// an [`OutFile::encoder`] of this file encoded.
    ///
    /// Errors: as [`OutFile::write_at`] and [`crate::h5::H5Writer::write_encoded`].
    pub fn write_piece(&mut self, var: usize, first: usize, piece: Piece) -> Result<()> {
        match piece {
            Piece::Values(v) => self.write_owned(var, &[first], v),
            Piece::Encoded(e) => match &mut self.writer {
                Writer::Nc4(h5, _) if e.var == var && e.first() == first => {
                    h5.write_encoded(&self.meta, e)
                }
                _ => Err(Error::var(
                    &self.meta.vars[var].name,
                    "internal: encoded rows for another file, variable or row",
                )),
            },
        }
    }

    /// Write values already of the variable's type and filtered.
    fn store(&mut self, var: usize, first: &[usize], values: &Values) -> Result<()> {
        match &mut self.writer {
            Writer::Classic(w) => w.write_at(var, first, values),
            Writer::Lib(w) => w.write_at(var, first, values),
            Writer::Nc4(h5, lib) => {
                if h5.write_at(lib, &self.meta, var, first, values)? {
                    Ok(())
                } else {
                    lib.write_at(var, first, values)
                }
            }
        }
    }

    /// Copy the whole of `src`'s variable `src_var` into `var` unchanged when the type
    /// and shape agree and both files are classic, or both netCDF-4 with the same chunks
    /// and filters (the stored chunks are copied, not decoded and encoded again).
    /// Returns false (nothing done) otherwise.
    pub fn copy_var_raw(&mut self, var: usize, src: &Dataset, src_var: usize) -> Result<bool> {
        if self.filtered(var) {
            return Ok(false);
        }
        if let (Writer::Nc4(h5, _), Reader::Nc4(_, r)) = (&mut self.writer, &src.reader) {
            // netCDF-4 to netCDF-4 with the same chunks and filters: the chunks as
            // stored.
            return h5.copy_var_raw(&self.meta, var, r, src.meta(), src_var);
        }
        let (Writer::Classic(w), Some(r)) = (&mut self.writer, src.classic()) else {
            return Ok(false);
        };
        let sm = r.meta();
        let (sv, ov) = (&sm.vars[src_var], &self.meta.vars[var]);
        // Raw copies keep the byte layout: the record-ness must agree too (a record
        // variable made fixed, or the reverse, goes through the element path).
        if sv.ty != ov.ty
            || sm.shape(sv) != self.meta.shape(ov)
            || sm.is_record_var(sv) != self.meta.is_record_var(ov)
        {
            return Ok(false);
        }
        w.copy_var(var, r, src_var, None)?;
        Ok(true)
    }

    /// Like [`OutFile::copy_var_raw`] for one record `rec` of a record variable, so a
    /// caller can copy record by record across variables and write the output's
    /// record section sequentially. Returns false (nothing done) when not eligible.
    pub fn copy_record_raw(
        &mut self,
        var: usize,
        src: &Dataset,
        src_var: usize,
        rec: usize,
    ) -> Result<bool> {
        if self.filtered(var) {
            return Ok(false);
        }
        let (Writer::Classic(w), Some(r)) = (&mut self.writer, src.classic()) else {
            return Ok(false);
        };
        let sm = r.meta();
        let (sv, ov) = (&sm.vars[src_var], &self.meta.vars[var]);
        if sv.ty != ov.ty
            || sm.shape(sv) != self.meta.shape(ov)
            || !sm.is_record_var(sv)
            || !self.meta.is_record_var(ov)
        {
            return Ok(false);
        }
        w.copy_var(var, r, src_var, Some(rec))?;
        Ok(true)
    }

    /// Finish the file (final record count, close). Must be called on success.
    pub fn finish(self) -> Result<()> {
        match self.writer {
            Writer::Classic(w) => w.finish(),
            Writer::Lib(w) => w.finish(),
            Writer::Nc4(h5, mut lib) => {
                h5.finish(&mut lib, &self.meta)?;
                lib.finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record variable v(time=2, y=3, z=4) and a fixed one f(y=3, z=4), doubles.
    fn piece_meta(format: crate::model::Format) -> Meta {
        use crate::model::{Dim, Var};
        let mut m = Meta::new(format);
        for (name, len, unlimited) in [("time", 2, true), ("y", 3, false), ("z", 4, false)] {
            m.dims.push(Dim {
                name: name.into(),
                len,
                unlimited,
                group: 0,
            });
        }
        for (name, dims) in [("v", vec![0, 1, 2]), ("f", vec![1, 2])] {
            m.vars.push(Var {
                name: name.into(),
                ty: crate::types::NcType::Double,
                dims,
                attrs: Vec::new(),
                storage: Default::default(),
                group: 0,
            });
        }
        m
    }

    #[test]
    fn write_at_places_pieces_of_rows_in_every_format() {
        use crate::model::Format;
        for format in [Format::Offset64, Format::Netcdf4] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.nc");
            let path = path.as_path();
            let meta = piece_meta(format);
            let mut of = OutFile::create(path, &meta, 0).unwrap();
            // v: record 1 first, then record 0 in pieces along y (one of 2 rows of z,
            // one of 1); each element's value is its flat index.
            let val = |r: usize, y: std::ops::Range<usize>| {
                Values::Double(
                    (r * 12 + y.start * 4..r * 12 + y.end * 4)
                        .map(|i| i as f64)
                        .collect(),
                )
            };
            of.write_at(0, &[1], &val(1, 0..3)).unwrap();
            of.write_at(0, &[0, 1], &val(0, 1..3)).unwrap();
            of.write_at(0, &[0, 0], &val(0, 0..1)).unwrap();
            // f: a fixed variable, pieces along its second dimension.
            let f = |y: usize, z: std::ops::Range<usize>| {
                Values::Double(z.map(|k| (100 + y * 4 + k) as f64).collect())
            };
            for y in 0..3 {
                of.write_at(1, &[y, 2], &f(y, 2..4)).unwrap();
                of.write_at(1, &[y, 0], &f(y, 0..2)).unwrap();
            }
            // Pieces past the end are refused.
            assert!(of.write_at(1, &[2, 3], &f(2, 0..2)).is_err());
            assert!(of.write_at(0, &[0, 3], &val(0, 0..1)).is_err());
            of.finish().unwrap();
            let ds = Dataset::open(path).unwrap();
            let v = ds.read_all(0).unwrap().to_f64_vec().unwrap();
            assert_eq!(
                v,
                (0..24).map(|i| i as f64).collect::<Vec<_>>(),
                "{format:?}"
            );
            let f = ds.read_all(1).unwrap().to_f64_vec().unwrap();
            assert_eq!(
                f,
                (100..112).map(|i| i as f64).collect::<Vec<_>>(),
                "{format:?}"
            );
        }
    }

    /// Chunked, deflated variables written by the engine in pieces, in every order the
    /// chunk-row buffers must handle: whole rows spanning chunk rows, pieces of rows,
    /// chunk rows completed out of order, more open chunk rows than the engine keeps
    /// (libnetcdf takes over), and a last, short chunk row of a record variable.
    #[test]
    fn chunk_rows_are_gathered_from_pieces_in_any_order() {
        use crate::model::{Dim, Format, Storage, Var};
        let dir = tempfile::tempdir().unwrap();
        let mut m = Meta::new(Format::Netcdf4);
        for (name, len, unlimited) in [("t", 11, true), ("y", 5, false), ("z", 3, false)] {
            m.dims.push(Dim {
                name: name.into(),
                len,
                unlimited,
                group: 0,
            });
        }
        let storage = |c: &[usize]| Storage {
            chunks: Some(c.to_vec()),
            deflate: Some(1),
            shuffle: true,
            fletcher32: false,
            quantize: None,
        };
        for (name, dims, chunks) in [
            ("rec", vec![0, 1, 2], vec![3, 2, 2]),
            ("fix", vec![1, 2], vec![2, 3]),
            ("late", vec![0, 1, 2], vec![1, 5, 3]),
        ] {
            m.vars.push(Var {
                name: name.into(),
                ty: crate::types::NcType::Int,
                dims,
                attrs: Vec::new(),
                storage: storage(&chunks),
                group: 0,
            });
        }
        let val = |at: usize, n: usize| Values::Int((at..at + n).map(|i| i as i32).collect());
        {
            let path = dir.path().join("c.nc");
            let path = path.to_str().unwrap();
            let mut of = OutFile::create(path, &m, 0).unwrap();
            let Writer::Nc4(h5, _) = &of.writer else {
                panic!("the engine writes netCDF-4 outputs");
            };
            assert!(h5.writes(0) && h5.writes(1) && h5.writes(2));
            // rec: records 4..11 whole (chunk rows 1-3, the last short), then record 3
            // and records 0-2 in pieces of rows.
            of.write(0, 4, &val(4 * 15, 7 * 15)).unwrap();
            of.write(0, 3, &val(3 * 15, 15)).unwrap();
            for r in [2, 0, 1] {
                of.write_at(0, &[r, 3], &val(r * 15 + 9, 6)).unwrap();
                of.write_at(0, &[r, 0], &val(r * 15, 9)).unwrap();
            }
            // fix: rows backwards.
            for y in (0..5).rev() {
                of.write(1, y, &val(100 + y * 3, 3)).unwrap();
            }
            // late: every record's second half first, leaving 11 chunk rows open.
            for r in 0..11 {
                of.write_at(2, &[r, 2], &val(r * 15 + 6, 9)).unwrap();
            }
            for r in (0..11).rev() {
                of.write_at(2, &[r, 0], &val(r * 15, 6)).unwrap();
            }
            of.finish().unwrap();
            let ds = Dataset::open(path).unwrap();
            assert_eq!(ds.meta().dims[0].len, 11);
            for (v, want) in [(0, val(0, 165)), (1, val(100, 15)), (2, val(0, 165))] {
                assert_eq!(ds.read_all(v).unwrap(), want, "{}", m.vars[v].name);
            }
        }
    }

    #[test]
    fn read_ahead_serves_each_expected_read_once() {
        let ra = ReadAhead::default();
        let a = vec![vec![0, 1], vec![3]];
        let b = vec![vec![0, 1], vec![4]];
        assert!(ra.take(0, &a).is_none());
        ra.put(0, &a, Values::Float(vec![1.0, 2.0]), 2);
        ra.put(0, &b, Values::Float(vec![3.0, 4.0]), 1);
        assert_eq!(ra.take(0, &a), Some(Values::Float(vec![1.0, 2.0])));
        assert!(ra.take(1, &a).is_none(), "another variable");
        assert_eq!(ra.take(0, &b), Some(Values::Float(vec![3.0, 4.0])));
        assert!(ra.take(0, &b).is_none(), "served once");
        assert_eq!(ra.take(0, &a), Some(Values::Float(vec![1.0, 2.0])));
        assert!(ra.take(0, &a).is_none());
        ra.put(0, &a, Values::Float(vec![5.0]), 1);
        ra.clear();
        assert!(ra.take(0, &a).is_none());
    }

    #[test]
    fn distinct_selections_count_repeats() {
        let s = vec![vec![vec![1]], vec![vec![2]], vec![vec![1]]];
        let d = distinct_selections(&s);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0], (s[0].as_slice(), 2));
        assert_eq!(d[1], (s[1].as_slice(), 1));
    }
}
