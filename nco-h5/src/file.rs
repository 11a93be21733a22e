//! An HDF5 file opened for the engine: one file descriptor shared by `hdf5-reader`'s
//! header and index parsing and by our positioned chunk reads; no libhdf5.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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
    /// This open file's number among the files opened by the process (the key of its
    /// chunks in [`DECODED`]).
    id: u64,
}

/// Bytes of decoded chunks the process keeps for reads of parts of chunks, over all
/// open files (the most recent chunk is kept whatever its size): a streaming operator
/// reads a chunk row of each of a few inputs at a time (nces: one per member), and a
/// run over thousands of files keeps no more than this.
pub const DECODED_CHUNK_BYTES: usize = 48 << 20;

/// Chunks decoded for reads that needed only part of them, so that a chunk read piece
/// by piece (streaming operators whose units are smaller than the chunks) is inflated
/// once: the process's, over all open files, within [`DECODED_CHUNK_BYTES`].
static DECODED: Mutex<DecodedChunks> = Mutex::new(DecodedChunks::new(DECODED_CHUNK_BYTES));

/// Files opened so far (their ids).
static OPENED: AtomicU64 = AtomicU64::new(0);

/// Signalled when a chunk being decoded for [`DECODED`] is kept or abandoned
/// ([`Claim`]).
static DECODING: Condvar = Condvar::new();

/// Decoded chunks by (file id, file offset), least recently used first, forgotten in
/// that order beyond a budget of bytes (the most recent always kept); and the chunks
/// a thread is decoding for the store right now, so that another thread wanting the
/// same one waits for it instead of inflating it a second time (two units of a
/// streaming operator starting on one chunk together).
pub struct DecodedChunks {
    budget: usize,
    bytes: usize,
    entries: Vec<((u64, u64), Arc<Vec<u8>>)>,
    decoding: Vec<(u64, u64)>,
}

/// A chunk of [`DECODED`] being decoded by this thread ([`File::decoded_or_claim`]):
/// [`Claim::keep`] stores it; dropped (kept or not, or on an error) it wakes the
/// threads waiting for it.
pub struct Claim {
    key: (u64, u64),
}

impl Claim {
    /// Keep the chunk's decoded bytes (its whole decoded size, moved in, not copied)
    /// for the reads of its other parts, within [`DECODED_CHUNK_BYTES`]; returned
    /// shared for this read.
    pub fn keep(self, bytes: Vec<u8>) -> Arc<Vec<u8>> {
        let bytes = Arc::new(bytes);
        decoded_chunks().put(self.key, bytes.clone());
        bytes
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut d = decoded_chunks();
        d.decoding.retain(|&k| k != self.key);
        drop(d);
        DECODING.notify_all();
    }
}

/// What [`File::decoded_or_claim`] found.
pub enum Decoded {
    /// The chunk's decoded bytes.
    Kept(Arc<Vec<u8>>),
    /// Not kept: this thread decodes it (and may keep it through the claim).
    Claimed(Claim),
}

impl DecodedChunks {
    /// An empty store keeping up to `budget` bytes.
    pub const fn new(budget: usize) -> DecodedChunks {
        DecodedChunks {
            budget,
            bytes: 0,
            entries: Vec::new(),
            decoding: Vec::new(),
        }
    }

    /// The chunk under `key`, which becomes the most recently used.
    pub fn get(&mut self, key: (u64, u64)) -> Option<Arc<Vec<u8>>> {
        let at = self.entries.iter().position(|(k, _)| *k == key)?;
        let e = self.entries.remove(at);
        let bytes = e.1.clone();
        self.entries.push(e);
        Some(bytes)
    }

    /// Keep `bytes` under `key` as the most recent, forgetting the least recent chunks
    /// beyond the budget.
    pub fn put(&mut self, key: (u64, u64), bytes: Arc<Vec<u8>>) {
        self.remove(|k| k == key);
        self.bytes += bytes.len();
        self.entries.push((key, bytes));
        while self.entries.len() > 1 && self.bytes > self.budget {
            self.bytes -= self.entries.remove(0).1.len();
        }
    }

    /// Forget the chunks whose key `gone` picks.
    pub fn remove(&mut self, gone: impl Fn((u64, u64)) -> bool) {
        let mut freed = 0;
        self.entries.retain(|(k, b)| {
            let keep = !gone(*k);
            if !keep {
                freed += b.len();
            }
            keep
        });
        self.bytes -= freed;
    }
}

/// [`File::decoded_or_claim`] of the chunk under `key`.
fn claim_or_kept(key: (u64, u64)) -> Decoded {
    let mut d = decoded_chunks();
    loop {
        if let Some(bytes) = d.get(key) {
            return Decoded::Kept(bytes);
        }
        if !d.decoding.contains(&key) {
            d.decoding.push(key);
            return Decoded::Claimed(Claim { key });
        }
        d = DECODING.wait(d).unwrap_or_else(|p| p.into_inner());
    }
}

fn decoded_chunks() -> std::sync::MutexGuard<'static, DecodedChunks> {
    DECODED.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for File {
    /// A closed file's decoded chunks are forgotten.
    fn drop(&mut self) {
        let id = self.id;
        decoded_chunks().remove(|(f, _)| f == id);
    }
}

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
            id: OPENED.fetch_add(1, Ordering::Relaxed),
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

    /// The decoded bytes of this file's chunk stored at file offset `addr`, when a
    /// read of part of it kept them ([`Claim::keep`]) and they were not forgotten
    /// since (a look only: no claim).
    pub fn decoded(&self, addr: u64) -> Option<Arc<Vec<u8>>> {
        decoded_chunks().get((self.id, addr))
    }

    /// The decoded bytes of this file's chunk at `addr` when a read of part of it
    /// kept them ([`Claim::keep`]) and they were not forgotten since; else, once no
    /// other thread is decoding it (waiting for one that is), the claim to decode it,
    /// which makes other threads wanting it wait in turn.
    pub fn decoded_or_claim(&self, addr: u64) -> Decoded {
        claim_or_kept((self.id, addr))
    }

    /// Forget this file's decoded chunk at `addr` (a read took its last rows: a
    /// streaming operator is done with it, and its bytes would only push out chunks
    /// still in use).
    pub fn forget_decoded(&self, addr: u64) {
        decoded_chunks().remove(|k| k == (self.id, addr));
    }

    /// The storage and chunk index of dataset `path` (`/name`, `/group/name`); see
    /// [`crate::layout::describe`] for the errors.
    pub fn var(&self, path: &str) -> Result<VarIndex> {
        crate::layout::describe(&self.h5, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_chunks_are_forgotten_least_recent_first_beyond_the_budget() {
        let mut d = DecodedChunks::new(100);
        d.put((0, 1), Arc::new(vec![1; 51]));
        d.put((0, 2), Arc::new(vec![2; 51]));
        // Both do not fit: the least recent went.
        assert!(d.get((0, 1)).is_none());
        assert_eq!(d.get((0, 2)).unwrap()[0], 2);
        // Another file's chunk at the same offset is another chunk.
        d.put((1, 2), Arc::new(vec![3; 8]));
        assert_eq!(d.get((1, 2)).unwrap()[0], 3);
        // A use makes a chunk the most recent; the most recent stays whatever its size.
        assert!(d.get((0, 2)).is_some());
        d.put((0, 4), Arc::new(vec![4; 200]));
        assert!(d.get((0, 4)).is_some());
        assert!(d.get((0, 2)).is_none() && d.get((1, 2)).is_none());
        // A closed file's chunks go.
        d.put((5, 1), Arc::new(vec![5; 10]));
        d.remove(|(f, _)| f == 5);
        assert!(d.get((5, 1)).is_none());
        assert_eq!(d.bytes, 0);
    }

    #[test]
    fn a_chunk_being_decoded_is_waited_for_not_decoded_twice() {
        // A file id no open file has (the store is the process's).
        let id = OPENED.fetch_add(1, Ordering::Relaxed) + 1_000_000;
        let key = (id, 64);
        let claim = match claim_or_kept(key) {
            Decoded::Claimed(c) => c,
            Decoded::Kept(_) => panic!("nothing kept yet"),
        };
        let waiter = std::thread::spawn(move || match claim_or_kept(key) {
            Decoded::Kept(b) => b[0],
            Decoded::Claimed(_) => 0,
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !waiter.is_finished(),
            "the second thread waits for the first"
        );
        claim.keep(vec![7; 16]);
        assert_eq!(waiter.join().unwrap(), 7, "and then finds the kept chunk");
        // A claim dropped without keeping lets the next thread claim it.
        decoded_chunks().remove(|k| k == key);
        drop(claim_or_kept(key));
        assert!(matches!(claim_or_kept(key), Decoded::Claimed(_)));
    }
}
