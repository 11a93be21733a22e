//! The extraction pipeline: from an input dataset, a variable list and a resolved
//! hyperslab selection, define the output (dimensions in order of first use by the
//! alphabetically sorted variables, as NCO writes them) and copy the data, unchanged
//! bytes straight from file to file where nothing is cut (classic to classic), the
//! selected elements otherwise, in blocks that bound memory.
//!
//! Also the `-A` merge of new variables into an existing output (NCO manual, "Appending
//! Variables"): dimensions must agree in size; same-named variables are replaced.

use crate::dataset::{Dataset, OutFile};
use crate::error::{Error, Result};
use crate::model::{set_attr, Dim, Format, Meta, Storage, Var};
use crate::rules::chunking::ChunkArgs;
use crate::rules::groups::Gpe;
use crate::rules::hyperslab::Selection;
use crate::rules::quantize::QuantizeArgs;

/// Bytes read per block when copying a selection (bounds peak memory).
const BLOCK_BYTES: usize = 64 << 20;

/// Record-dimension changes requested with ncks `--fix_rec_dmn` / `--mk_rec_dmn`.
#[derive(Clone, Debug, Default)]
pub struct RecordChange {
    /// Make this dimension (or `all`) fixed.
    pub fix: Option<String>,
    /// Make this dimension the record dimension.
    pub make: Option<String>,
}

/// Storage settings to apply to netCDF-4 outputs.
#[derive(Clone, Debug, Default)]
pub struct StorageArgs {
    /// `-L` deflate level.
    pub deflate: Option<i32>,
    /// Chunking options.
    pub chunk: ChunkArgs,
    /// `--ppc`, `--baa`: quantization (all output formats).
    pub quantize: QuantizeArgs,
}

/// An output definition and, for each output variable, its source variable index.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Output metadata.
    pub meta: Meta,
    /// Input variable index of each output variable.
    pub src: Vec<usize>,
    /// INFO lines for the user (precisions too high to quantize with), printed by
    /// [`crate::target::Target::plan_extract_with`].
    pub notes: Vec<String>,
}

/// How an output lays out groups (beyond those of the written variables).
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// `-G`: the group path edit applied to every group written.
    pub gpe: Option<Gpe>,
    /// Input groups written even when none of their variables is (with their
    /// attributes): ncks keeps every group `-g` selects, and all without `-v`.
    pub groups: Vec<usize>,
    /// `--rad` (ncks): every dimension of the written groups, used or not, as NCO
    /// 5.1.4 writes them: the unused ones after the used ones, fixed (a record
    /// dimension no variable uses too); a name already taken in the output's group, as
    /// by flattening, is not written twice.
    pub all_dims: bool,
}

/// Define the output of extracting `vars` (input indices, in output order) with `sel`,
/// keeping the groups of the variables (see [`plan_with`]).
///
/// Errors: as [`plan_with`].
pub fn plan(
    input: &Meta,
    vars: &[usize],
    sel: &Selection,
    format: Format,
    rec: &RecordChange,
    storage: &StorageArgs,
) -> Result<Plan> {
    plan_with(input, vars, sel, format, rec, storage, &Layout::default())
}

/// Define the output of extracting `vars` (input indices, in output order) with `sel`:
/// every group holding a variable written (and its ancestors, and `layout.groups`) is
/// written with its attributes, at its own path or at the path `layout.gpe` makes of
/// it; a netCDF3 output, which has no groups, gets everything in its root group (the
/// attributes of the other groups after the global ones, the first of a name kept), as
/// NCO 5.1.4 writes it. Output groups are defined in alphabetical order of their paths,
/// dimensions in each group in order of first use by the variables.
///
/// Errors: `--mk_rec_dmn` on a dimension that is not the first of every variable using
/// it; two variables, or two dimensions of different sizes, that the layout puts at the
/// same path (both named).
pub fn plan_with(
    input: &Meta,
    vars: &[usize],
    sel: &Selection,
    format: Format,
    rec: &RecordChange,
    storage: &StorageArgs,
    layout: &Layout,
) -> Result<Plan> {
    let mut meta = Meta::new(format);
    let gpe = layout
        .gpe
        .clone()
        .or_else(|| format.is_classic_family().then(Gpe::flatten));
    let gmap = map_groups(input, vars, layout, gpe.as_ref(), &mut meta);
    let mut dim_map: Vec<Option<usize>> = vec![None; input.dims.len()];
    if let Some(m) = &rec.make {
        let d = input
            .dim_id(m)
            .ok_or_else(|| Error::option("--mk_rec_dmn", format!("no dimension {m}")))?;
        for &v in vars {
            let var = &input.vars[v];
            if var.dims.contains(&d) && var.dims[0] != d {
                return Err(Error::var(
                    &var.name,
                    format!("--mk_rec_dmn {m}: {m} is not this variable's first dimension"),
                ));
            }
        }
    }
    for &v in vars {
        let iv = &input.vars[v];
        let mut dims = Vec::with_capacity(iv.dims.len());
        for &d in &iv.dims {
            let od = match dim_map[d] {
                Some(od) => od,
                None => {
                    let id = &input.dims[d];
                    let mut unlimited = id.unlimited;
                    if let Some(f) = &rec.fix {
                        if f == "all" || *f == id.name {
                            unlimited = false;
                        }
                    }
                    if let Some(m) = &rec.make {
                        unlimited = *m == id.name;
                    }
                    let dim = Dim {
                        name: id.name.clone(),
                        len: sel.len(input, d),
                        unlimited,
                        group: gmap[id.group].unwrap_or(0),
                    };
                    let od = match meta
                        .dims
                        .iter()
                        .position(|o| o.group == dim.group && o.name == dim.name)
                    {
                        Some(o) if meta.dims[o] == dim => o,
                        Some(o) => {
                            return Err(Error::msg(format!(
                                "dimensions {} and {} would both be {} in the output, with \
                                 different sizes (netCDF3 outputs and -G flatten groups; \
                                 select fewer variables with -v or -g)",
                                input.dim_path(d),
                                input.dim_path(origin(&dim_map, o)),
                                meta.dim_path(o)
                            )))
                        }
                        None => {
                            meta.dims.push(dim);
                            meta.dims.len() - 1
                        }
                    };
                    dim_map[d] = Some(od);
                    od
                }
            };
            dims.push(od);
        }
        if iv.ty == crate::types::NcType::Str && !format.supports(iv.ty) {
            return Err(Error::var(
                &input.var_path(v),
                format!(
                    "is an NC_STRING variable, which a {} file cannot store (strings need \
                     netCDF-4: write with -4, or leave it out with -x -v)",
                    format.kind_name()
                ),
            ));
        }
        let group = gmap[iv.group].unwrap_or(0);
        if let Some(o) = meta.var_in(group, &iv.name) {
            let other = vars[o];
            return Err(Error::var(
                &input.var_path(v),
                format!(
                    "and {} would both be {} in the output (netCDF3 outputs and -G \
                     flatten groups; select one with -v or -g)",
                    input.var_path(other),
                    meta.var_path(o)
                ),
            ));
        }
        meta.vars.push(Var {
            name: iv.name.clone(),
            ty: iv.ty,
            dims,
            attrs: iv.attrs.clone(),
            storage: Storage::default(),
            group,
        });
    }
    if layout.all_dims {
        for (d, id) in input.dims.iter().enumerate() {
            let Some(group) = gmap[id.group] else {
                continue;
            };
            if dim_map[d].is_some()
                || meta
                    .dims
                    .iter()
                    .any(|o| o.group == group && o.name == id.name)
            {
                continue;
            }
            // Fixed, of its (selected) length, even the record dimension: no variable
            // writes records along it (NCO 5.1.4).
            meta.dims.push(Dim {
                name: id.name.clone(),
                len: sel.len(input, d),
                unlimited: false,
                group,
            });
        }
    }
    apply_storage(&mut meta, input, vars, storage);
    let notes = apply_quantize(&mut meta, input, vars, &storage.quantize)?;
    Ok(Plan {
        meta,
        src: vars.to_vec(),
        notes,
    })
}

/// Set the quantization `--ppc` asks for on each output variable (`src[i]` is output
/// variable `i`'s input variable), in any output format ([`crate::quantize::plan`]);
/// returns the INFO lines about precisions too high to apply. The attributes are
/// recorded and the values quantized when the output is written
/// ([`crate::target::Output::create`]).
///
/// Errors: a `--ppc` key that matches no variable of `input`, a bad regular expression.
pub fn apply_quantize(
    meta: &mut Meta,
    input: &Meta,
    src: &[usize],
    args: &QuantizeArgs,
) -> Result<Vec<String>> {
    if !args.any() {
        return Ok(Vec::new());
    }
    let (per_input, notes) = crate::quantize::plan(input, args)?;
    for (i, &s) in src.iter().enumerate() {
        meta.vars[i].storage.quantize = per_input.get(s).copied().flatten();
    }
    Ok(notes)
}

/// The input dimension that became output dimension `o` (for messages).
fn origin(dim_map: &[Option<usize>], o: usize) -> usize {
    dim_map.iter().position(|&m| m == Some(o)).unwrap_or(0)
}

/// Define in `out` the groups an output of `vars` needs (their groups and ancestors,
/// and `layout.groups`), at the paths `gpe` makes of them, in alphabetical order of
/// output paths, with their attributes; returns each input group's output group.
fn map_groups(
    input: &Meta,
    vars: &[usize],
    layout: &Layout,
    gpe: Option<&Gpe>,
    out: &mut Meta,
) -> Vec<Option<usize>> {
    let n = input.groups.len();
    let need = crate::rules::groups::needed(input, vars, &layout.groups);
    let path_of = |g: usize| {
        let p = input.group_path(g);
        gpe.map_or(p.clone(), |e| e.apply(&p))
    };
    let mut order: Vec<(String, usize)> = (0..n)
        .filter(|&g| need[g])
        .map(|g| (path_of(g), g))
        .collect();
    order.sort();
    let mut gmap = vec![None; n];
    for (path, g) in order {
        let mut og = 0;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            og = out.add_group(og, part);
        }
        gmap[g] = Some(og);
        for a in input.group_attrs(g) {
            let attrs = out.group_attrs_mut(og);
            if !attrs.iter().any(|b| b.name == a.name) {
                attrs.push(a.clone());
            }
        }
    }
    gmap
}

/// Set chunking and compression on a netCDF-4 output: chunks as
/// [`ChunkArgs::chunks_for`] chooses them (a netCDF-4 input's kept by default, NCO's
/// own chunking for a netCDF3 input's variables); `-L N` deflates
/// every variable but scalars and strings at level N with the shuffle filter, as NCO
/// does (`-L 0` removes compression); without `-L` each variable keeps its input's
/// deflate level and shuffle (NCO 5.1.4 instead applies the level of the first
/// compressed variable it copies, with shuffle, to every later one: see the README's
/// compatibility notes).
pub fn apply_storage(meta: &mut Meta, input: &Meta, src: &[usize], storage: &StorageArgs) {
    if !meta.format.is_netcdf4() {
        return;
    }
    for (i, &s) in src.iter().enumerate() {
        let in_st = input
            .vars
            .get(s)
            .filter(|_| input.format.is_netcdf4())
            .map(|v| v.storage.clone())
            .unwrap_or_default();
        let v = meta.vars[i].clone();
        let filterable = !v.dims.is_empty() && v.ty != crate::types::NcType::Str;
        // NCO 5.1.4 shuffles whatever it deflates (`ncks -4 -L 1` writes
        // `_Shuffle = "true"`): 30% smaller files of floats at level 1.
        // The input's Fletcher-32 checksums stay unless `-L` says how to store the
        // variable (NCO 5.1.4: `ncks -L 5` and `-7 -L 1` drop them, a plain copy or
        // an operator's output keeps them).
        let (deflate, shuffle, fletcher32) = match storage.deflate {
            _ if !filterable => (None, false, false),
            Some(l) => (Some(l).filter(|&l| l > 0), l > 0, false),
            None => (
                in_st.deflate.filter(|&l| l > 0),
                in_st.shuffle,
                in_st.fletcher32,
            ),
        };
        let record_cut = input.vars.get(s).is_some_and(|iv| {
            iv.dims.len() == v.dims.len()
                && iv.dims.iter().zip(&v.dims).any(|(&id, &od)| {
                    meta.dims[od].unlimited && input.dims[id].len != meta.dims[od].len
                })
        });
        let ctx = crate::rules::chunking::ChunkContext {
            input: in_st.chunks.as_deref(),
            input_netcdf4: input.format.is_netcdf4(),
            compressed: deflate.is_some(),
            record_cut,
        };
        let chunks = storage.chunk.chunks_for(meta, &v, ctx);
        let out = &mut meta.vars[i];
        out.storage.chunks = chunks;
        out.storage.deflate = deflate;
        out.storage.shuffle = shuffle;
        out.storage.fletcher32 = fletcher32;
    }
}

/// Warn (stderr) when netCDF-4-only storage options are given for a netCDF3 output,
/// as NCO does; the options are then ignored.
pub fn warn_storage_on_classic(prog: &str, format: Format, storage: &StorageArgs) {
    if format.is_netcdf4() {
        return;
    }
    if storage.deflate.is_some_and(|l| l > 0) {
        eprintln!(
            "{prog}: WARNING deflation (-L) is only supported by netCDF-4 output formats; \
             the {} output is written without it (use -4 or -7)",
            format.kind_name()
        );
    }
    if storage.chunk.any() {
        eprintln!(
            "{prog}: WARNING chunking options apply only to netCDF-4 output; ignored for the {} output",
            format.kind_name()
        );
    }
}

/// Copy the data of every planned variable from `input` into `out` (output variable
/// `i` is variable `i` of `out`).
pub fn copy_data(input: &Dataset, plan: &Plan, sel: &Selection, out: &mut OutFile) -> Result<()> {
    let im = input.meta();
    let pb = crate::plan::progress::bar(plan.src.len() as u64, "copying variables");
    // Unchanged record variables are copied afterwards record by record across
    // variables, so the output's interleaved record section is written in order
    // (sequential writes, as cp does) rather than strided variable by variable.
    let mut by_record = Vec::new();
    for (i, &s) in plan.src.iter().enumerate() {
        let v = &im.vars[s];
        let untouched = v.dims.iter().all(|&d| !sel.restricts(d));
        let out_rec = out.meta().is_record_var(&out.meta().vars[i]);
        if untouched && im.is_record_var(v) && input.classic().is_some() && out_rec {
            by_record.push((i, s));
            continue;
        }
        copy_unchanged(input, s, sel, out, i)?;
        pb.inc(1);
    }
    let nrec = im.record_dim().map_or(0, |d| im.dims[d].len);
    let mut fallback = vec![false; by_record.len()];
    for r in 0..nrec {
        for (k, &(o, s)) in by_record.iter().enumerate() {
            if !fallback[k] && !out.copy_record_raw(o, input, s, r)? {
                fallback[k] = true;
            }
        }
    }
    for (k, &(o, s)) in by_record.iter().enumerate() {
        if fallback[k] || nrec == 0 {
            copy_selected(input, s, sel, out, o)?;
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(())
}

/// Copy input variable `s` under `sel` to output variable `o` unchanged: straight from
/// file to file when nothing is cut and both are classic files, else through
/// [`copy_selected`]. The one path every operator uses for the variables it copies.
pub fn copy_unchanged(
    input: &Dataset,
    s: usize,
    sel: &Selection,
    out: &mut OutFile,
    o: usize,
) -> Result<()> {
    let untouched = input.meta().vars[s].dims.iter().all(|&d| !sel.restricts(d));
    if !(untouched && out.copy_var_raw(o, input, s)?) {
        copy_selected(input, s, sel, out, o)?;
    }
    Ok(())
}

/// Copy the selection of input variable `s` to output variable `o`, in blocks along
/// the first dimension.
pub fn copy_selected(
    input: &Dataset,
    s: usize,
    sel: &Selection,
    out: &mut OutFile,
    o: usize,
) -> Result<()> {
    for (at, idx) in selected_reads(input.meta(), s, sel) {
        let vals = input.read(s, &idx)?;
        out.write_owned(o, &[at], vals)?;
    }
    Ok(())
}

/// The reads [`copy_selected`] makes of input variable `s`: (first output index along
/// the first dimension, per-dimension indices), in blocks of about 64 MiB along the
/// first dimension; one read for a scalar.
pub fn selected_reads(im: &Meta, s: usize, sel: &Selection) -> Vec<(usize, Vec<Vec<usize>>)> {
    let mut idx = sel.for_var(im, s);
    if idx.is_empty() {
        return vec![(0, idx)];
    }
    let row: usize = idx[1..].iter().map(Vec::len).product::<usize>() * im.vars[s].ty.size();
    let per_block = (BLOCK_BYTES / row.max(1)).max(1);
    let first = std::mem::take(&mut idx[0]);
    first
        .chunks(per_block)
        .enumerate()
        .map(|(b, chunk)| {
            let mut i = idx.clone();
            i[0] = chunk.to_vec();
            (b * per_block, i)
        })
        .collect()
}

/// The input's global attributes in an append (`-A`, NCO manual "Appending
/// Variables"), checked against NCO 5.1.4: ncra, ncrcat, nces, ncecat, ncwa, ncpdq,
/// ncflint and ncks with a variable list (`-v`, with or without `-x`) keep the
/// existing file's global attributes and add none of the input's
/// ([`AppendGlobals::Existing`]); ncks appending a whole file copies the input's over
/// them ([`AppendGlobals::Replaced`]). Either way the existing file's `history` and
/// `history_of_appended_files` stay, and the append is stamped on them
/// (`target::Provenance`): NCO 5.1.4's ncks, ncbo and ncap2 write the input's
/// `history` over the output's, and its ncbo and ncap2 all of the input's global
/// attributes, which we do not (README, compatibility notes). The attributes of the
/// groups below the root follow the same rule (a group new to the file comes without
/// its attributes unless they are copied, as in NCO 5.1.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AppendGlobals {
    /// The existing file's global attributes only.
    #[default]
    Existing,
    /// The input's global attributes replace the same-named ones, the others kept.
    Replaced,
}

/// Merge `new` (a plan for the appended variables) into the metadata of an existing
/// output `old` (NCO manual, "Appending Variables", and NCO 5.1.4's behaviour):
/// groups and dimensions matched by path (dimension sizes must agree, a record
/// dimension takes the longer length); a variable of the same path is replaced by the
/// new one (its values and type) when it lies on the same dimensions, keeping the
/// existing variable's attributes the new one lacks (the new one's replace those of
/// the same name); the global and group attributes of `new` as `globals` says.
///
/// Returns the merged metadata and, for each merged variable, where it comes from.
///
/// Errors: a dimension whose size differs between the files (named); a variable of
/// both files on other dimensions (NCO refuses it too, or fails writing it).
pub fn merge_append(
    old: &Meta,
    new: &Meta,
    globals: AppendGlobals,
) -> Result<(Meta, Vec<AppendSource>)> {
    let mut meta = old.clone();
    let mut sources: Vec<AppendSource> = (0..old.vars.len()).map(AppendSource::Existing).collect();
    let mut gmap = Vec::with_capacity(new.groups.len());
    for g in 0..new.groups.len() {
        let og = match new.groups[g].parent {
            None => 0,
            Some(p) => meta.add_group(gmap[p], &new.groups[g].name),
        };
        gmap.push(og);
    }
    let mut map = Vec::with_capacity(new.dims.len());
    for d in &new.dims {
        let group = gmap[d.group];
        match meta
            .dims
            .iter()
            .position(|o| o.group == group && o.name == d.name)
        {
            Some(od) => {
                let o = &meta.dims[od];
                if o.len != d.len && !(o.unlimited && d.unlimited) {
                    return Err(Error::msg(format!(
                        "cannot append: dimension {} has size {} in the output file but {} in the input",
                        meta.dim_path(od), o.len, d.len
                    )));
                }
                if o.unlimited && d.unlimited {
                    meta.dims[od].len = o.len.max(d.len);
                }
                map.push(od);
            }
            None => {
                meta.dims.push(Dim { group, ..d.clone() });
                map.push(meta.dims.len() - 1);
            }
        }
    }
    for (i, v) in new.vars.iter().enumerate() {
        let mut nv = v.clone();
        nv.dims = v.dims.iter().map(|&d| map[d]).collect();
        nv.group = gmap[v.group];
        match meta.var_in(nv.group, &v.name) {
            Some(j) => {
                let ov = &meta.vars[j];
                if ov.dims != nv.dims {
                    let shape = |dims: &[usize]| {
                        if dims.is_empty() {
                            return "no dimensions".to_string();
                        }
                        let names: Vec<&str> =
                            dims.iter().map(|&d| meta.dims[d].name.as_str()).collect();
                        format!("dimensions ({})", names.join(","))
                    };
                    return Err(Error::var(
                        &meta.var_path(j),
                        format!(
                            "cannot append: it has {} in the output file but {} in the input; \
                             remove it from the output first (ncks -x -v {})",
                            shape(&ov.dims),
                            shape(&nv.dims),
                            v.name
                        ),
                    ));
                }
                // The existing variable's attributes stay, those of the appended one
                // replace the same-named ones (NCO 5.1.4).
                let mut attrs = ov.attrs.clone();
                for a in std::mem::take(&mut nv.attrs) {
                    set_attr(&mut attrs, a);
                }
                nv.attrs = attrs;
                meta.vars[j] = nv;
                sources[j] = AppendSource::New(i);
            }
            None => {
                meta.vars.push(nv);
                sources.push(AppendSource::New(i));
            }
        }
    }
    if globals == AppendGlobals::Replaced {
        for (g, &og) in gmap.iter().enumerate() {
            for a in new.group_attrs(g) {
                if og != 0 || (a.name != "history" && a.name != "history_of_appended_files") {
                    set_attr(meta.group_attrs_mut(og), a.clone());
                }
            }
        }
    }
    Ok((meta, sources))
}

/// The replaced record variables of a merge ([`merge_append`] of `new` into `old`,
/// `sources` its result) whose existing records outnumber the new ones: indices of
/// the existing (and merged) variables. NCO writes an appended variable into the
/// existing one, so records past the new ones keep their old values (`ncrcat -A` of 5
/// records into a file of 10 leaves records 5 to 9 as they were); the merged file gets
/// these variables' old values first, then the new records over them. A variable whose
/// type changed is not kept (its old bytes do not fit): the records past the new ones
/// are fill values.
pub fn kept_records(old: &Meta, new: &Meta, sources: &[AppendSource]) -> Vec<usize> {
    let records = |m: &Meta, v: &Var| {
        v.dims
            .first()
            .filter(|&&d| m.dims[d].unlimited)
            .map(|&d| m.dims[d].len)
    };
    sources
        .iter()
        .enumerate()
        .take(old.vars.len())
        .filter_map(|(i, s)| match *s {
            AppendSource::New(k) => {
                let (ov, nv) = (&old.vars[i], &new.vars[k]);
                let more = match (records(old, ov), records(new, nv)) {
                    (Some(o), Some(n)) => o > n,
                    _ => false,
                };
                (more && ov.ty == nv.ty).then_some(i)
            }
            AppendSource::Existing(_) => None,
        })
        .collect()
}

/// Where a variable of a merged (`-A`) output comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendSource {
    /// Variable `i` of the existing output.
    Existing(usize),
    /// Variable `i` of the new plan.
    New(usize),
}
