//! An HDF5 file opened for the engine: one file descriptor shared by `hdf5-reader`'s
//! header and index parsing and by our positioned chunk reads; no libhdf5.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hdf5_reader::storage::{Storage, StorageBuffer};

use crate::layout::VarIndex;
use crate::{Error, Result};

/// The file as `hdf5-reader` storage: positioned reads of exactly the bytes asked for.
struct Pread {
    file: Arc<fs::File>,
    len: u64,
}

impl Storage for Pread {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|e| e > self.len) {
            return Err(hdf5_reader::error::Error::UnexpectedEof {
                offset,
                needed: len as u64,
                available: self.len.saturating_sub(offset),
            });
        }
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, offset)?;
        Ok(StorageBuffer::from_vec(buf))
    }
}

/// An HDF5 file opened read-only by the engine.
pub struct File {
    path: PathBuf,
    file: Arc<fs::File>,
    len: u64,
    h5: hdf5_reader::Hdf5File,
    /// Chunks decoded for reads that needed only part of them, most recent
    /// last, so that reads of a chunk piece by piece (streaming operators whose units
    /// are smaller than the chunks) inflate it once.
    decoded: Mutex<Vec<(u64, Arc<[u8]>)>>,
}

/// Bytes of decoded chunks a file keeps for reads of parts of chunks (the most recent
/// chunk is kept whatever its size). Per input file: a streaming operator reads one
/// chunk row of each input at a time.
pub const DECODED_CHUNK_BYTES: usize = 16 << 20;

impl File {
    /// Open `path` and parse its superblock (no dataset is read yet).
    ///
    /// Errors: the file cannot be opened ([`Error::Io`]), or is not HDF5 or has a
    /// damaged superblock ([`Error::Corrupt`]).
    pub fn open(path: impl AsRef<Path>) -> Result<File> {
        let path = path.as_ref();
        let file = Arc::new(fs::File::open(path)?);
        let len = file.metadata()?.len();
        let storage = Arc::new(Pread {
            file: file.clone(),
            len,
        });
        // No chunk cache: the engine reads chunks itself.
        let opts = hdf5_reader::OpenOptions {
            chunk_cache_bytes: 0,
            ..Default::default()
        };
        let h5 = hdf5_reader::Hdf5File::from_storage_with_options(storage, opts)
            .map_err(|e| Error::Corrupt(e.to_string()))?;
        Ok(File {
            path: path.to_path_buf(),
            file,
            len,
            h5,
            decoded: Mutex::new(Vec::new()),
        })
    }

    /// The path this file was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length in bytes when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty (never, for a file that opened).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `Some((end, len))` when the superblock says the file ends at byte `end` but it
    /// has only `len` bytes: the file was cut short.
    pub fn truncated(&self) -> Option<(u64, u64)> {
        let sb = self.h5.superblock();
        let end = sb.eof_address.checked_add(sb.base_address)?;
        (sb.eof_address != u64::MAX && end > self.len).then_some((end, self.len))
    }

    /// The open file, for positioned reads.
    pub fn handle(&self) -> &fs::File {
        &self.file
    }

    /// The decoded bytes of the chunk stored at file offset `addr`, when a read of
    /// part of it kept them ([`File::keep_decoded`]).
    pub fn decoded(&self, addr: u64) -> Option<Arc<[u8]>> {
        let mut d = self.decoded.lock().unwrap_or_else(|p| p.into_inner());
        let at = d.iter().position(|(a, _)| *a == addr)?;
        let e = d.remove(at);
        let bytes = e.1.clone();
        d.push(e);
        Some(bytes)
    }

    /// Keep the decoded bytes of the chunk stored at `addr` (its whole decoded size)
    /// for later reads of other parts of it, forgetting the least recent chunks
    /// beyond [`DECODED_CHUNK_BYTES`].
    pub fn keep_decoded(&self, addr: u64, bytes: &[u8]) {
        let mut d = self.decoded.lock().unwrap_or_else(|p| p.into_inner());
        d.retain(|(a, _)| *a != addr);
        d.push((addr, Arc::from(bytes)));
        let mut total: usize = d.iter().map(|(_, b)| b.len()).sum();
        while d.len() > 1 && total > DECODED_CHUNK_BYTES {
            total -= d.remove(0).1.len();
        }
    }

    /// The storage and chunk index of dataset `path` (`/name`, `/group/name`); see
    /// [`crate::layout::describe`] for the errors.
    pub fn var(&self, path: &str) -> Result<VarIndex> {
        crate::layout::describe(&self.h5, path)
    }
}
