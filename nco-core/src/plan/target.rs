//! An operator's output from the command line to the renamed file, in two values:
//!
//! * [`Target`]: where the output goes and how an existing file there is treated
//!   (`-O`, `-A`), which format and storage it is written in (`-3`..`-7`, `--fl_fmt`,
//!   `-L`, `--cnk_*`, `--hdr_pad`) and what provenance it records ([`Provenance`]:
//!   `history`, the input list, the thread count). The command-line layer builds it;
//!   operators plan their output through it ([`Target::format_for`],
//!   [`Target::plan_extract`]), so the format choice and NCO's warning about netCDF-4
//!   storage options on a netCDF3 output are made once.
//! * [`Output`]: the file being written, the temporary file, its writer, the `-A`
//!   merge and the provenance stamp in one value, created from the planned metadata
//!   ([`Output::create`]). [`Output::commit`] finishes the writer and renames the
//!   temporary file over the destination; dropping an uncommitted `Output` removes the
//!   temporary file, so a failed run never leaves a half-written or clobbered output
//!   (NCO manual, "Temporary Output Files").
//!
//! Variable indices given to an `Output` are those of the planned metadata: when the
//! output is merged into an existing file (`-A`, NCO manual "Appending Variables") the
//! `Output` maps them to the merged file's, so an operator writes the same way whether
//! it creates or appends.

use std::path::{Path, PathBuf};

use crate::dataset::{Dataset, OutFile};
use crate::error::Result;
use crate::model::{Format, Meta};
use crate::output::{self, Existing, TempOutput};
pub use crate::plan::extract::AppendGlobals;
use crate::plan::extract::{self, AppendSource, Layout, Plan, RecordChange, StorageArgs};
use crate::plan::{arith, digest};
use crate::rules::hyperslab::Selection;
use crate::rules::multifile;

/// What an output records about how it was made, stamped by [`Output::create`] in
/// NCO's order: `history` (and the `NCO` attribute), then the input list, then the
/// thread count.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// The command line prepended to the `history` global attribute (`None` with `-h`).
    pub command: Option<String>,
    /// Input names for the `nco_input_file_number`/`nco_input_file_list` global
    /// attributes (multi-file operators whose names came from standard input, unless
    /// `-H`).
    pub input_list: Option<Vec<String>>,
    /// The `-t` thread count for `nco_openmp_thread_number` (`None`: not given, or an
    /// operator NCO does not thread, such as ncks).
    pub threads: Option<usize>,
    /// The (first) input's name, which an append (`-A`) records with that input's
    /// `history` in the `history_of_appended_files` global attribute, as NCO does
    /// (unless `-h`). `None`: no input named (ncap2 without one).
    pub source: Option<PathBuf>,
    /// `--gaa` global text attributes (name, value), added after `history` and before
    /// the `NCO` attribute when that is new, replacing attributes of the same name in
    /// place, as NCO 5.1.4 orders them (with or without `-h`).
    pub global_attrs: Vec<(String, String)>,
}

impl Provenance {
    /// Stamp `meta`'s global attributes (see the type's docs for the order).
    pub fn stamp(&self, meta: &mut Meta) {
        let had_nco = meta.attr("NCO").is_some();
        if let Some(c) = &self.command {
            output::stamp_history(meta, c);
        }
        // New ones go before the NCO attribute this stamp added (it stays last), as NCO
        // writes them; others replace theirs in place or follow.
        let nco_added = !had_nco && meta.attrs.last().is_some_and(|a| a.name == "NCO");
        for (name, value) in &self.global_attrs {
            let attr = crate::model::Attr::text(name, value);
            if nco_added && meta.attr(name).is_none() {
                let at = meta.attrs.len() - 1;
                meta.attrs.insert(at, attr);
            } else {
                crate::model::set_attr(&mut meta.attrs, attr);
            }
        }
        if let Some(files) = &self.input_list {
            multifile::stamp_input_list(meta, files);
        }
        arith::stamp_threads(meta, self.threads);
    }

    /// Record, in the metadata `meta` merged into an existing file (`-A`), the
    /// `history` of the appended input ([`Provenance::source`]; `None` when it has
    /// none) in `history_of_appended_files`, as NCO does; nothing with `-h`.
    pub fn stamp_appended(&self, meta: &mut Meta, history: Option<&str>) {
        if self.command.is_some() {
            let file = self
                .source
                .as_deref()
                .map(Path::to_string_lossy)
                .unwrap_or_default();
            output::stamp_appended_history(meta, &file, history);
        }
    }
}

/// Where and how an operator writes its output (see the module docs).
#[derive(Clone, Debug)]
pub struct Target {
    /// The operator's name, for the temporary file's name and for warnings.
    pub prog: String,
    /// The output file.
    pub path: PathBuf,
    /// How an existing file at `path` is treated: [`Existing::Append`] merges into it.
    pub existing: Existing,
    /// The requested format (`-3`..`-7`, `--fl_fmt`); `None` keeps the input's.
    pub format: Option<Format>,
    /// netCDF-4 storage: `-L` and the chunking options.
    pub storage: StorageArgs,
    /// Extra bytes of header padding in a netCDF3 output (`--hdr_pad`).
    pub hdr_pad: u64,
    /// What the output records about its making.
    pub provenance: Provenance,
    /// Report the MD5 digest of each variable of the finished output on stderr
    /// (`<prog>: INFO MD5(var) = ...`, [`digest::digests`] of the temporary file
    /// before it is renamed): `--md5_dgs` of the multi-file operators.
    pub md5_report: bool,
    /// What becomes of the input's global attributes when the output is merged into
    /// an existing file (`-A`); see [`AppendGlobals`].
    pub append_globals: AppendGlobals,
}

impl Target {
    /// The output format for an input of format `input`: the existing file's when
    /// appending, else the requested one, else `input`. Warns on stderr, as NCO does,
    /// when netCDF-4 storage options are given for a netCDF3 output (they are then
    /// ignored).
    ///
    /// Errors: an existing output to append to that cannot be opened.
    pub fn format_for(&self, input: Format) -> Result<Format> {
        let format = match self.appended_format()? {
            Some(f) => f,
            None => self.format.unwrap_or(input),
        };
        extract::warn_storage_on_classic(&self.prog, format, &self.storage);
        Ok(format)
    }

    /// The format of the existing file appended to (`-A`, which keeps it), `None`
    /// when not appending.
    ///
    /// Errors: an existing output that cannot be opened.
    pub fn appended_format(&self) -> Result<Option<Format>> {
        if self.existing != Existing::Append {
            return Ok(None);
        }
        Ok(Some(Dataset::open(&self.path)?.meta().format))
    }

    /// The extraction plan of `vars` (input indices, in output order) under `sel`,
    /// in the format [`Target::format_for`] chooses and with this target's storage.
    ///
    /// Errors: those of [`Target::format_for`] and [`extract::plan`].
    pub fn plan_extract(
        &self,
        input: &Meta,
        vars: &[usize],
        sel: &Selection,
        rec: &RecordChange,
    ) -> Result<Plan> {
        self.plan_extract_with(input, vars, sel, rec, &Layout::default())
    }

    /// [`Target::plan_extract`] with the groups laid out as `layout` says (`-G`, the
    /// groups `-g` keeps without variables; see [`extract::plan_with`]).
    ///
    /// Errors: those of [`Target::format_for`] and [`extract::plan_with`].
    pub fn plan_extract_with(
        &self,
        input: &Meta,
        vars: &[usize],
        sel: &Selection,
        rec: &RecordChange,
        layout: &Layout,
    ) -> Result<Plan> {
        let format = self.format_for(input.format)?;
        let mut plan = extract::plan_with(input, vars, sel, format, rec, &self.storage, layout)?;
        for n in std::mem::take(&mut plan.notes) {
            eprintln!("{}: INFO {n}", self.prog);
        }
        Ok(plan)
    }

    /// [`Target::plan_extract`] of the selection `args` made (`vars`), keeping the
    /// groups it keeps without variables ([`crate::select::whole_groups`]: every group
    /// `-g` selects, without `-v`): the output plan of every operator that writes from
    /// its inputs without `-G` (ncra, ncrcat, nces, ncecat, ncwa, ncbo, ncflint, ncpdq).
    ///
    /// Errors: those of [`Target::plan_extract_with`]; a `-g` item that selects nothing.
    pub fn plan_selection(
        &self,
        input: &Meta,
        vars: &[usize],
        sel: &Selection,
        rec: &RecordChange,
        args: &crate::select::SelectArgs,
    ) -> Result<Plan> {
        let layout = Layout {
            gpe: None,
            groups: crate::select::whole_groups(input, args)?,
            all_dims: false,
        };
        self.plan_extract_with(input, vars, sel, rec, &layout)
    }
}

/// The existing output an [`Output`] is merged into (`-A`).
struct Merged {
    /// The existing file, read while the merged one is written.
    old: Dataset,
    /// Where each variable of the merged file comes from.
    sources: Vec<AppendSource>,
    /// The merged file's index of each planned variable.
    file_var: Vec<usize>,
    /// True once the existing file's variables were copied.
    copied: bool,
}

/// An output being written (see the module docs). Fields drop in order: the writer,
/// then the existing file merged into, then the temporary file (removed unless
/// committed).
pub struct Output {
    file: OutFile,
    merged: Option<Merged>,
    tmp: TempOutput,
    /// The operator's name when the finished file's digests are reported
    /// ([`Target::md5_report`]).
    digests_of: Option<String>,
}

impl Output {
    /// Create the temporary output of `target` with the planned metadata `meta`,
    /// stamped with the target's provenance; with [`Existing::Append`], `meta` merged
    /// into the existing file's ([`extract::merge_append`]: dimensions must agree in
    /// size, same-named variables are replaced, their old records past the new ones
    /// kept, [`extract::kept_records`]).
    ///
    /// Planning the temporary file removes leftovers of dead runs for the same output,
    /// and an append holds the existing file's [`output::UpdateLock`] until the commit
    /// ([`TempOutput::for_update`]).
    ///
    /// Errors: an output folder that does not exist or is not writable, a merge that
    /// does not agree, and the writer's errors.
    pub fn create(target: &Target, mut meta: Meta) -> Result<Output> {
        // An append locks the existing file before reading it, so a concurrent update
        // waits for this one instead of losing it (released after the rename).
        let tmp = if target.existing == Existing::Append {
            TempOutput::for_update(&target.path, &target.prog)?
        } else {
            TempOutput::new(&target.path, &target.prog)?
        };
        let mut appended_history = None;
        let mut kept = Vec::new();
        let merged = if target.existing == Existing::Append {
            appended_history = Some(meta.attr("history").and_then(|a| a.value.as_text()));
            let old = Dataset::open(&target.path)?;
            let (merged_meta, sources) =
                extract::merge_append(old.meta(), &meta, target.append_globals)?;
            kept = extract::kept_records(old.meta(), &meta, &sources);
            let mut file_var = vec![0; meta.vars.len()];
            for (i, s) in sources.iter().enumerate() {
                if let AppendSource::New(k) = *s {
                    file_var[k] = i;
                }
            }
            meta = merged_meta;
            Some(Merged {
                old,
                sources,
                file_var,
                copied: false,
            })
        } else {
            None
        };
        let had_nco = meta.attr("NCO").is_some();
        target.provenance.stamp(&mut meta);
        if let Some(h) = appended_history {
            target.provenance.stamp_appended(&mut meta, h.as_deref());
            // An `NCO` attribute new to the file goes last, after
            // history_of_appended_files (NCO 5.1.4's order).
            if !had_nco {
                if let Some(i) = meta.attrs.iter().position(|a| a.name == "NCO") {
                    let a = meta.attrs.remove(i);
                    meta.attrs.push(a);
                }
            }
        }
        // Made storable in the output format once, for every operator (NCO's ncks
        // conversions of the netCDF-4 types into netCDF3 files).
        let (mut meta, notes) = crate::rules::formats::storable(&meta)?;
        for n in notes {
            eprintln!("{}: WARNING {n}", target.prog);
        }
        let filters = quantizers(&mut meta, &target.prog);
        let mut file =
            OutFile::create(tmp.path(), &meta, target.hdr_pad).map_err(|e| tmp.naming(e))?;
        for (v, f) in filters {
            file.set_filter(v, f);
        }
        if let Some(m) = &merged {
            // Old records past the new ones stay (see extract::kept_records).
            for &i in &kept {
                copy_whole(&m.old, i, &mut file, i)?;
            }
        }
        Ok(Output {
            file,
            merged,
            tmp,
            digests_of: target.md5_report.then(|| target.prog.clone()),
        })
    }

    /// The file's index of planned variable `o`.
    fn var(&self, o: usize) -> usize {
        self.merged.as_ref().map_or(o, |m| m.file_var[o])
    }

    /// The metadata of the file being written (the merged one when appending).
    pub fn meta(&self) -> &Meta {
        self.file.meta()
    }

    /// The writer itself, whose variable indices are the file's: the planned ones
    /// unless appending.
    pub fn writer(&mut self) -> &mut OutFile {
        &mut self.file
    }

    /// Write values of planned variable `o` from index `first` of its first dimension
    /// ([`OutFile::write`]).
    pub fn write(&mut self, o: usize, first: usize, values: &crate::types::Values) -> Result<()> {
        let v = self.var(o);
        self.file
            .write(v, first, values)
            .map_err(|e| self.tmp.naming(e))
    }

    /// An encoder of whole chunk rows of planned variable `o` for the threads that
    /// compute its values ([`OutFile::encoder`]: netCDF-4 outputs our engine writes).
    pub fn encoder(&self, o: usize) -> Option<crate::dataset::RowsEncoder> {
        self.file.encoder(self.var(o))
    }

    /// Write a piece of planned variable `o` from index `first` of its first
    /// dimension: values, or chunk rows its [`Output::encoder`] encoded
    /// ([`OutFile::write_piece`]).
    pub fn write_piece(
        &mut self,
        o: usize,
        first: usize,
        piece: crate::dataset::Piece,
    ) -> Result<()> {
        let v = self.var(o);
        self.file
            .write_piece(v, first, piece)
            .map_err(|e| self.tmp.naming(e))
    }

    /// Write the `--cb` time and bounds values over the planned time coordinate and
    /// bounds ([`crate::climatology::typed_values`]), after the computed ones.
    ///
    /// Errors: values that do not fit the variables' types, the writer's.
    pub fn write_climatology(&mut self, c: &crate::climatology::Climatology) -> Result<()> {
        let planned = self.file.meta().clone();
        for (v, vals) in crate::climatology::typed_values(c, &planned)? {
            self.write(v, 0, &vals)?;
        }
        Ok(())
    }

    /// Write values of planned variable `o` from the multi-index `first`
    /// ([`OutFile::write_at`]).
    pub fn write_at(
        &mut self,
        o: usize,
        first: &[usize],
        values: &crate::types::Values,
    ) -> Result<()> {
        let v = self.var(o);
        self.file
            .write_at(v, first, values)
            .map_err(|e| self.tmp.naming(e))
    }

    /// Copy input variable `s` of `ds` under `sel` into planned variable `o` unchanged
    /// ([`extract::copy_unchanged`]).
    pub fn copy_unchanged(
        &mut self,
        ds: &Dataset,
        s: usize,
        sel: &Selection,
        o: usize,
    ) -> Result<()> {
        let v = self.var(o);
        extract::copy_unchanged(ds, s, sel, &mut self.file, v)
    }

    /// Copy the selection `sel` of input variable `s` of `ds` into planned variable `o`
    /// ([`extract::copy_selected`]).
    pub fn copy_selected(
        &mut self,
        ds: &Dataset,
        s: usize,
        sel: &Selection,
        o: usize,
    ) -> Result<()> {
        let v = self.var(o);
        extract::copy_selected(ds, s, sel, &mut self.file, v)
    }

    /// Copy the data of every variable of the extraction `plan` from `ds` under `sel`
    /// ([`extract::copy_data`]); when appending, the merged file's variables in its
    /// order, the existing file's copied unchanged.
    pub fn copy_plan(&mut self, ds: &Dataset, plan: &Plan, sel: &Selection) -> Result<()> {
        let Some(m) = &mut self.merged else {
            return extract::copy_data(ds, plan, sel, &mut self.file);
        };
        for (i, s) in m.sources.iter().enumerate() {
            match *s {
                AppendSource::Existing(j) => copy_whole(&m.old, j, &mut self.file, i)?,
                AppendSource::New(k) => {
                    extract::copy_selected(ds, plan.src[k], sel, &mut self.file, i)?;
                }
            }
        }
        m.copied = true;
        Ok(())
    }

    /// Finish the writer (and, when appending, copy the existing file's variables not
    /// yet copied) and close the existing file, leaving the temporary file for the
    /// caller to commit: [`TempOutput::commit`], or all at once for the outputs of a
    /// station list.
    ///
    /// Errors: the writer's.
    pub fn finish(self) -> Result<TempOutput> {
        let Output {
            mut file,
            merged,
            tmp,
            digests_of,
        } = self;
        if let Some(m) = &merged {
            if !m.copied {
                for (i, s) in m.sources.iter().enumerate() {
                    if let AppendSource::Existing(j) = *s {
                        copy_whole(&m.old, j, &mut file, i)?;
                    }
                }
            }
        }
        file.finish().map_err(|e| tmp.naming(e))?;
        // Close the existing file before the new one replaces it.
        drop(merged);
        if let Some(prog) = digests_of {
            report_digests(&prog, tmp.path()).map_err(|e| tmp.naming(e))?;
        }
        Ok(tmp)
    }

    /// Hold `lock` (of the existing file this output replaces, taken before it was
    /// read: ncrcat's `--rec_apn`) until the output is committed or dropped.
    pub fn hold(&mut self, lock: output::UpdateLock) {
        self.tmp.hold(lock);
    }

    /// Finish the writer and move the temporary file over the destination.
    ///
    /// Errors: the writer's, and a failed rename.
    pub fn commit(self) -> Result<()> {
        self.finish()?.commit()
    }
}

/// The quantization filters of the variables of the output `meta` planned to be
/// quantized ([`extract::apply_quantize`]), their attributes recorded
/// ([`crate::quantize::stamp`], warnings printed); a variable whose stored type the
/// precision does not apply to (one packed into integers since) is left unquantized,
/// with a warning and without the attribute recorded for it.
fn quantizers(meta: &mut Meta, prog: &str) -> Vec<(usize, crate::dataset::WriteFilter)> {
    let mut out = Vec::new();
    for v in 0..meta.vars.len() {
        let path = meta.var_path(v);
        let var = &mut meta.vars[v];
        let Some(q) = var.storage.quantize else {
            continue;
        };
        if crate::quantize::applies(var.ty, q.precision, q.algorithm, |_| {}) {
            // Recorded here for every operator (a no-op where the arithmetic already
            // placed it before cell_methods, `arith::ProcVar::place_as`).
            if let Some(w) = crate::quantize::stamp(var, &path, &q) {
                eprintln!("{prog}: WARNING {w}");
            }
        } else {
            eprintln!(
                "{prog}: WARNING --ppc: {path} is written packed (as {}), so it is not quantized",
                var.ty
            );
            var.storage.quantize = None;
            crate::quantize::unstamp(var, &q);
        }
    }
    for (v, var) in meta.vars.iter().enumerate() {
        let Some(q) = var.storage.quantize else {
            continue;
        };
        let fill = crate::fill::fill_value(var);
        // BitGroom's parity counts from each record of a netCDF3 record variable
        // (NCO 5.1.4 copies those a record at a time), else from the variable's start.
        let record = if meta.format.is_classic_family() && meta.is_record_var(var) {
            meta.shape(var)[1..].iter().product::<usize>().max(1) as u64
        } else {
            0
        };
        let filter = move |vals: &mut crate::types::Values, at: u64| {
            crate::kernels::quantize::quantize(&q, vals, fill, at, record);
        };
        out.push((v, Box::new(filter) as crate::dataset::WriteFilter));
    }
    out
}

/// Report on stderr the MD5 digest of every variable of the finished file at `path`,
/// in its order, as ncks words them (short names).
///
/// Errors: the file's read errors.
fn report_digests(prog: &str, path: &Path) -> Result<()> {
    let ds = Dataset::open(path)?;
    let meta = ds.meta();
    let all: Vec<usize> = (0..meta.vars.len()).collect();
    eprintln!("{prog}: INFO Will perform MD5 digests of input and output hyperslabs");
    for (i, d) in digest::digests(&ds, meta, |v| v, &Selection::default(), &all)? {
        eprintln!("{prog}: INFO MD5({}) = {d}", meta.vars[i].name);
    }
    Ok(())
}

/// Copy the whole of variable `j` of the existing output `old` into variable `i` of
/// the merged file: bytes straight from file to file when both are classic.
fn copy_whole(old: &Dataset, j: usize, file: &mut OutFile, i: usize) -> Result<()> {
    if !file.copy_var_raw(i, old, j)? {
        extract::copy_selected(old, j, &Selection::default(), file, i)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attr, Dim, Storage, Var};
    use crate::types::{NcType, Values};

    fn one_var(name: &str, len: usize) -> Meta {
        let mut m = Meta::new(Format::Classic);
        m.dims.push(Dim {
            name: "x".into(),
            len,
            unlimited: false,
            group: 0,
        });
        m.vars.push(Var {
            name: name.into(),
            ty: NcType::Int,
            dims: vec![0],
            attrs: Vec::new(),
            storage: Storage::default(),
            group: 0,
        });
        m
    }

    fn target(path: PathBuf, existing: Existing) -> Target {
        Target {
            prog: "ncks".into(),
            path,
            existing,
            format: None,
            storage: StorageArgs::default(),
            hdr_pad: 0,
            md5_report: false,
            append_globals: AppendGlobals::Existing,
            provenance: Provenance {
                command: Some("ncks in.nc out.nc".into()),
                input_list: None,
                threads: Some(2),
                source: Some("in.nc".into()),
                global_attrs: Vec::new(),
            },
        }
    }

    fn leftovers(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn output_is_committed_or_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.nc");
        let t = target(path.clone(), Existing::Create);
        let mut out = Output::create(&t, one_var("a", 2)).unwrap();
        out.write(0, 0, &Values::Int(vec![1, 2])).unwrap();
        drop(out);
        assert!(!path.exists());
        assert!(leftovers(dir.path()).is_empty());
        let mut out = Output::create(&t, one_var("a", 2)).unwrap();
        out.write(0, 0, &Values::Int(vec![1, 2])).unwrap();
        out.commit().unwrap();
        let ds = Dataset::open(&path).unwrap();
        let m = ds.meta();
        let h = m.attr("history").unwrap().value.as_text().unwrap();
        assert!(h.ends_with(": ncks in.nc out.nc"), "{h}");
        assert!(m.attr("NCO").is_some());
        assert_eq!(
            m.attr("nco_openmp_thread_number").unwrap().value,
            Values::Int(vec![2])
        );
        assert_eq!(ds.read_all(0).unwrap(), Values::Int(vec![1, 2]));
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn appending_maps_planned_variables_to_the_merged_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.nc");
        let mut out =
            Output::create(&target(path.clone(), Existing::Create), one_var("b", 2)).unwrap();
        out.write(0, 0, &Values::Int(vec![7, 8])).unwrap();
        out.commit().unwrap();
        // Planned variable 0 ("a") is the merged file's second; "b" is copied at commit.
        let t = target(path.clone(), Existing::Append);
        assert_eq!(t.format_for(Format::Netcdf4).unwrap(), Format::Classic);
        let mut out = Output::create(&t, one_var("a", 2)).unwrap();
        out.write(0, 0, &Values::Int(vec![1, 2])).unwrap();
        out.commit().unwrap();
        let ds = Dataset::open(&path).unwrap();
        let names: Vec<&str> = ds.meta().vars.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(ds.read_all(0).unwrap(), Values::Int(vec![7, 8]));
        assert_eq!(ds.read_all(1).unwrap(), Values::Int(vec![1, 2]));
        // No `history` in the planned output: the append records that its input had none.
        let h = ds
            .meta()
            .attr("history_of_appended_files")
            .and_then(|a| a.value.as_text())
            .unwrap();
        assert!(
            h.ends_with(": Appended file in.nc had no \"history\" attribute\n"),
            "{h}"
        );
        drop(ds);
        // A variable of both files keeps the existing attributes the new one lacks; the
        // new one's replace those of the same name.
        let mut b = one_var("b", 2);
        b.vars[0].attrs = vec![Attr::text("units", "m")];
        b.attrs = vec![Attr::text("history", "made by hand")];
        let mut out = Output::create(&t, b.clone()).unwrap();
        out.write(0, 0, &Values::Int(vec![3, 4])).unwrap();
        out.commit().unwrap();
        let mut b2 = one_var("b", 2);
        b2.vars[0].attrs = vec![Attr::text("units", "K"), Attr::text("foo", "F")];
        let mut out = Output::create(&t, b2).unwrap();
        out.write(0, 0, &Values::Int(vec![5, 6])).unwrap();
        out.commit().unwrap();
        let ds = Dataset::open(path.to_str().unwrap()).unwrap();
        let bv = &ds.meta().vars[0];
        assert_eq!(bv.attr_text("units").as_deref(), Some("K"));
        assert_eq!(bv.attr_text("foo").as_deref(), Some("F"));
        assert_eq!(ds.read_all(0).unwrap(), Values::Int(vec![5, 6]));
        drop(ds);
        // A variable of both files on other dimensions cannot be merged.
        let before = std::fs::read(&path).unwrap();
        let mut other = one_var("b", 2);
        other.dims[0].name = "y".into();
        let e = Output::create(&t, other).err().unwrap().to_string();
        assert!(e.contains("variable /b: cannot append"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        // A dimension of another size cannot be merged; the output is left as it was.
        let before = std::fs::read(&path).unwrap();
        assert!(Output::create(&t, one_var("c", 3)).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert!(leftovers(dir.path()).is_empty());
    }
}
