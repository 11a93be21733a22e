//! Metadata edits of one file (ncatted, ncrename): the same variables with new names
//! and attributes, and, for a changed `_FillValue`, one value of a variable replaced by
//! another. NCO edits the file itself when no output is given and edits a copy
//! otherwise; so do we, without ever leaving a half-written file:
//!
//! * a classic file edited in place whose new header fits before its data (with the
//!   `--hdr_pad` bytes asked for) and whose values do not change gets its header
//!   rewritten in place, one positioned write, the data untouched: instant whatever
//!   the file's size;
//! * anything else is written to a temporary file beside the destination (the header,
//!   then the data section copied in the kernel, moved by one shift when the header
//!   grew, then the replaced values), renamed over the destination at the end; an
//!   input replaced in place keeps its permissions;
//! * a netCDF-4 file is written anew through libnetcdf with the same chunking, deflate
//!   and shuffle settings: libnetcdf's own renames corrupt renamed coordinates
//!   (netcdf-c issue 597, still in 4.9: the renamed coordinate variable reads back as
//!   fill values), so we never rename inside an HDF5 file. Files with groups below the
//!   root are refused (nco-rs reads only the root group).

use std::path::{Path, PathBuf};

use crate::classic::{self, edit as cedit};
use crate::dataset::{full_selection, Dataset, OutFile};
use crate::error::{Error, Result};
use crate::model::Meta;
use crate::output::TempOutput;
use crate::plan::extract;
use crate::rules::hyperslab::Selection;
use crate::types::Values;

/// Bytes per block when a netCDF-4 variable's values are replaced while copied.
const BLOCK_BYTES: usize = 64 << 20;

/// Replace `old` by `new` (one element each, in the variable's type) in variable `var`.
#[derive(Clone, Debug, PartialEq)]
pub struct Replace {
    /// Variable index (the same in the input and the edited metadata).
    pub var: usize,
    /// The value to replace.
    pub old: Values,
    /// Its replacement.
    pub new: Values,
}

/// An edit: the new metadata (the input's variables, dimensions and their order,
/// types and shapes unchanged) and the values to replace.
#[derive(Clone, Debug)]
pub struct Edit {
    /// The edited metadata.
    pub meta: Meta,
    /// Values to replace, per variable.
    pub replace: Vec<Replace>,
}

/// How an edit was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The header was rewritten in the file itself.
    HeaderInPlace,
    /// A new file replaced the destination.
    NewFile,
}

// One value per run: the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
enum Source {
    Classic(classic::Reader),
    Other(Dataset),
}

/// A file opened for a metadata edit.
pub struct Editable {
    path: PathBuf,
    src: Source,
}

impl Editable {
    /// Open `path`: classic files with our reader (whatever `--no-mmap` says: the edit
    /// works on the file's bytes), others through libnetcdf.
    ///
    /// Errors: those of opening the file; a URL.
    pub fn open(path: &Path) -> Result<Editable> {
        if path.to_str().is_some_and(|p| p.contains("://")) {
            return Err(Error::msg(format!(
                "{}: remote files cannot be edited; copy the file first",
                path.display()
            )));
        }
        let ds = Dataset::open(path)?;
        let src = if ds.meta().format.is_classic_family() {
            drop(ds);
            Source::Classic(classic::Reader::open(path, true)?)
        } else {
            Source::Other(ds)
        };
        Ok(Editable {
            path: path.to_path_buf(),
            src,
        })
    }

    /// The file's metadata.
    pub fn meta(&self) -> &Meta {
        match &self.src {
            Source::Classic(r) => r.meta(),
            Source::Other(d) => d.meta(),
        }
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `edit` into `output`, or into the file itself when `output` is `None`,
    /// with at least `hdr_pad` free bytes after a classic header (see the module docs).
    /// An existing `output` is replaced (the caller checked `-O`).
    ///
    /// Errors: attribute types the format cannot hold, the classic format's offset
    /// limit, I/O errors (each naming the file); the destination is left as it was.
    pub fn apply(
        self,
        prog: &str,
        edit: &Edit,
        output: Option<&Path>,
        hdr_pad: u64,
    ) -> Result<Written> {
        let dest = output.unwrap_or(&self.path).to_path_buf();
        match self.src {
            Source::Classic(r) => {
                let len = r
                    .file()
                    .metadata()
                    .map_err(|e| Error::io(&self.path, e))?
                    .len();
                let plan = cedit::plan(r.header(), len, &edit.meta, hdr_pad, &self.path)?;
                if output.is_none() && plan.fits() && edit.replace.is_empty() {
                    drop(r);
                    cedit::write_in_place(&self.path, &plan)?;
                    return Ok(Written::HeaderInPlace);
                }
                let tmp = TempOutput::new(&dest, prog)?;
                cedit::write_copy(&r, &plan, tmp.path())?;
                for rep in &edit.replace {
                    cedit::rewrite_var(tmp.path(), rep.var, &mut |v| {
                        crate::kernels::replace_value(v, &rep.old, &rep.new);
                    })?;
                }
                drop(r);
                finish(tmp, &self.path, output.is_none())
            }
            Source::Other(ds) => {
                let tmp = TempOutput::new(&dest, prog)?;
                let (meta, notes) = crate::rules::formats::storable(&edit.meta)?;
                for n in notes {
                    eprintln!("{prog}: WARNING {n}");
                }
                let mut of = OutFile::create(tmp.path(), &meta, hdr_pad)?;
                for v in 0..edit.meta.vars.len() {
                    let reps: Vec<&Replace> = edit.replace.iter().filter(|r| r.var == v).collect();
                    if reps.is_empty() {
                        extract::copy_selected(&ds, v, &Selection::default(), &mut of, v)?;
                        continue;
                    }
                    let sel = full_selection(ds.meta(), v);
                    ds.read_blocks(v, &sel, BLOCK_BYTES, |pos, mut vals| {
                        for r in &reps {
                            crate::kernels::replace_value(&mut vals, &r.old, &r.new);
                        }
                        of.write(v, pos, &vals)
                    })?;
                }
                of.finish()?;
                drop(ds);
                finish(tmp, &self.path, output.is_none())
            }
        }
    }
}

/// Give a file replacing `input` in place the input's permissions, then rename it
/// over the destination.
fn finish(tmp: TempOutput, input: &Path, in_place: bool) -> Result<Written> {
    if in_place {
        let perm = std::fs::metadata(input)
            .map_err(|e| Error::io(input, e))?
            .permissions();
        std::fs::set_permissions(tmp.path(), perm).map_err(|e| Error::io(tmp.path(), e))?;
    }
    tmp.commit()?;
    Ok(Written::NewFile)
}
