//! ncap2, the netCDF Arithmetic Processor: runs a script of assignments over the
//! variables of an input file and writes the results (NCO manual, "ncap2 netCDF
//! Arithmetic Processor"; the typing rules are listed in the evaluator's notes).
//!
//! `ncap2 [-v] [-C] -s 'script' [-S file] in.nc out.nc`. The script language
//! implemented here is a subset of ncap2's: assignments (`= += -= *= /=`), attributes
//! (`v@att`, `global@att`), LHS casting (`v[$lat,$lon]=...`), `defdim()`, typed
//! literals and arrays, arithmetic, comparison and logical operators, hyperslabs
//! (`v(1,:,0:3:2)`), reductions (`.total() .avg() .min() .max()` and ncwa's other
//! statistics `.rms() .rmssdn() .sqravg() .avgsqr() .mabs() .mebs() .mibs() .tabs()`,
//! optionally over `$dims`), math functions and type casts, `where()/elsewhere`, `if/else`, `print()`.
//!
//! Modules, lowest first (each uses only those before it; checked by a test):
//! [`builtins`] (the table of functions and methods), [`ast`] (the syntax tree),
//! [`lexer`] (tokens), [`parser`] (script text to syntax tree), [`num`] (typed
//! element-wise kernels), [`eval`] (semantics and state). This file parses the command
//! line and writes the output.
#![deny(missing_docs)]

pub mod ast;
pub mod builtins;
pub mod eval;
pub mod lexer;
pub mod num;
pub mod parser;

use clap::{ArgAction, CommandFactory, Parser};

use nco_core::cli::{self, CommonArgs, FormatArgs};
use nco_core::dataset::{Dataset, OutFile};
use nco_core::model::{Attr, Dim, Meta, Var};
use nco_core::output::{self, Existing, TempOutput};
use nco_core::types::Values;
use nco_core::{Error, Result};

use eval::Ctx;

/// ncap2 command line.
#[derive(Parser, Debug)]
#[command(
    name = "ncap2",
    about = "netCDF Arithmetic Processor: compute variables and attributes with a script (NCO-compatible)",
    after_help = "Examples:\n  ncap2 -O -s 'tpt_c=tpt-273.15f' in.nc out.nc\n  ncap2 -O -v -s 'one_ll[lat,lon]=1.0;t=three_dmn_var.total()' in.nc out.nc\n  ncap2 -O -S script.nco in.nc out.nc"
)]
pub struct Cli {
    /// Input file, then the output file
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub common: CommonArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub format: FormatArgs,
    /// Script text (statements separated by ';'); repeatable
    #[arg(short = 's', long = "spt", visible_aliases = ["script"], value_name = "SCRIPT",
          action = ArgAction::Append, allow_hyphen_values = true)]
    pub scripts: Vec<String>,
    /// Script file; repeatable
    #[arg(short = 'S', long = "fl_spt", visible_aliases = ["script-file", "fl_script"],
          value_name = "FILE", action = ArgAction::Append)]
    pub script_files: Vec<String>,
    /// Write only the variables the script defines (plus their coordinates unless -C)
    #[arg(short = 'v', long = "variable", visible_alias = "var")]
    pub only_defined: bool,
    /// Do not add coordinate variables
    #[arg(short = 'C', long = "no_crd", visible_aliases = ["xcl_ass_var", "no-coords"])]
    pub no_coords: bool,
    /// Add all coordinate variables of the input
    #[arg(short = 'c', long = "crd", visible_aliases = ["xtr_ass_var", "coords"])]
    pub all_coords: bool,
}

/// The clap command.
pub fn command() -> clap::Command {
    cli::configure(Cli::command())
}

/// The script pieces: every `-s` text in order, then every `-S` file (NCO runs the
/// command-line scripts before the script files, wherever they appear).
fn scripts(cli: &Cli) -> Result<Vec<(String, String)>> {
    let mut parts: Vec<(String, String)> = cli
        .scripts
        .iter()
        .map(|s| ("command-line script".to_string(), s.clone()))
        .collect();
    for f in &cli.script_files {
        let text = std::fs::read_to_string(f).map_err(|e| Error::io(f, e))?;
        parts.push((f.clone(), text));
    }
    Ok(parts)
}

/// Where an output variable's data comes from.
enum Source {
    /// Computed by the script (name in [`Ctx::vars`]).
    New(String),
    /// Copied from the input variable, with (possibly changed) attributes.
    Copy(usize, Vec<Attr>),
}

/// Run ncap2 with `argv`.
///
/// Errors: bad options, script syntax errors, unknown variables, functions or
/// dimensions, shapes that do not conform, and every I/O error. Nothing is written on
/// error.
pub fn run(prog: &str, argv: Vec<String>) -> Result<()> {
    let Some(cli) = cli::start::<Cli>(command(), &argv, prog, |c| (&c.common, &c.format))? else {
        return Ok(());
    };
    let mut stmts = Vec::new();
    for (name, text) in scripts(&cli)? {
        let s = parser::parse(&text).map_err(|e| Error::msg(format!("{name}: {e}")))?;
        stmts.extend(s);
    }
    if stmts.is_empty() {
        return Err(Error::msg(
            "no script given (use -s 'statements' or -S file)",
        ));
    }
    let mut files = cli.files.clone();
    if let Some(o) = &cli.common.output {
        files.push(o.clone());
    }
    let (input, out_path) = match files.len() {
        2 => (
            Some(cli::with_prefix(cli.common.path.as_deref(), &files[0])),
            files[1].clone(),
        ),
        1 => (None, files[0].clone()),
        n => {
            return Err(Error::msg(format!(
                "{prog} takes an input and an output file, {n} given (usage: {prog} -s 'script' in.nc out.nc)"
            )))
        }
    };
    // With one file, it is read (when it exists) and replaced.
    let input = input.or_else(|| {
        std::path::Path::new(&out_path)
            .exists()
            .then(|| out_path.clone())
    });
    let existing = if input.as_deref() == Some(out_path.as_str()) && cli.files.len() == 1 {
        Existing::Overwrite
    } else {
        output::resolve_existing(prog, &out_path, cli.common.overwrite, cli.common.append)?
    };
    if existing == Existing::Append {
        return Err(Error::option(
            "-A",
            "appending is not supported by ncap2 in nco-rs; use -O",
        ));
    }
    let ds = match &input {
        Some(p) => Some(Dataset::open(p)?),
        None => None,
    };
    let format = cli.format.format()?.unwrap_or(match &ds {
        Some(d) => d.meta().format,
        None => nco_core::model::Format::Classic,
    });
    // An element-wise script over a netCDF3 input written to a netCDF3 output is
    // evaluated in blocks (Stream); the context below then evaluates the first block,
    // for the output's definitions. Not for netCDF-4 files: blocks across HDF5 chunks
    // would decompress (or rewrite) every chunk once per block.
    let stream = ds
        .as_ref()
        .filter(|d| d.classic().is_some() && format.is_classic_family())
        .and_then(|d| Stream::new(&stmts, d.meta()));
    let stdout = std::io::stdout();
    let mut ctx = Ctx::new(ds.as_ref(), Box::new(stdout.lock()), prog);
    if let Some(st) = &stream {
        ctx.set_block(st.dims.clone(), st.selection(0));
    }
    // NCO stamps the history (and NCO attribute) before the script runs, so attributes
    // the script adds come after them.
    if !cli.common.no_history {
        let mut m = Meta::new(ctx.input.format);
        m.attrs = std::mem::take(&mut ctx.globals);
        output::stamp_history(&mut m, &argv);
        ctx.globals = m.attrs;
    }
    ctx.run(&stmts)?;
    write_output(
        prog,
        &cli,
        ds.as_ref(),
        &ctx,
        &out_path,
        format,
        stream.as_ref(),
    )
}

/// Bytes of each input variable's block in a streamed evaluation: a few arrays of
/// this size per statement stay in the processor's caches.
const UNIT_BYTES: usize = 256 << 10;

/// Streamed evaluation of an element-wise script ([`eval::blockwise_dims`]): the
/// script runs on blocks of its input variables ([`nco_core::pipeline::blocks`]), in
/// parallel, and each block of every computed variable is written as soon as it and
/// those before it are done, so memory holds a few blocks, not whole variables.
struct Stream<'s> {
    stmts: &'s [ast::Stmt],
    /// Input dimensions of the script's input variables.
    dims: Vec<usize>,
    /// The whole selection of those variables (every index of each dimension).
    full: Vec<Vec<usize>>,
    /// The blocks.
    units: Vec<nco_core::pipeline::Block>,
}

impl<'s> Stream<'s> {
    /// The stream of `stmts` over `input`, or `None` when the script is not
    /// element-wise or its variables are empty.
    fn new(stmts: &'s [ast::Stmt], input: &Meta) -> Option<Stream<'s>> {
        let dims = eval::blockwise_dims(stmts, input)?;
        let full: Vec<Vec<usize>> = dims
            .iter()
            .map(|&d| (0..input.dims[d].len).collect())
            .collect();
        // Blocks sized for the widest type (8 bytes).
        let units = nco_core::pipeline::blocks(&full, 8, UNIT_BYTES);
        if units.is_empty() {
            return None;
        }
        Some(Stream {
            stmts,
            dims,
            full,
            units,
        })
    }

    /// Block `u` as a selection (one index list per dimension).
    fn selection(&self, u: usize) -> Vec<Vec<usize>> {
        self.units[u].select(&self.full)
    }

    /// Evaluate every block and write the variables `outs` (script names, with their
    /// output variable indices) into `of`, in order.
    ///
    /// Errors: those of the evaluation and of writing.
    fn write(
        &self,
        prog: &str,
        ds: &Dataset,
        outs: &[(usize, String)],
        of: &mut OutFile,
    ) -> Result<()> {
        let compute = |u: usize| -> Result<Vec<Values>> {
            let mut c = Ctx::new(Some(ds), Box::new(std::io::sink()), prog);
            c.set_block(self.dims.clone(), self.selection(u));
            c.run(self.stmts)?;
            outs.iter()
                .map(|(_, n)| {
                    c.vars
                        .remove(n)
                        .map(|v| v.val.data)
                        .ok_or_else(|| Error::var(n, "not computed by the script"))
                })
                .collect()
        };
        nco_core::pipeline::for_each_ordered(self.units.len(), compute, |u, vals| {
            let first = self.units[u].first(&self.full);
            for ((o, _), v) in outs.iter().zip(vals) {
                of.write_at(*o, &first, &v)?;
            }
            Ok(())
        })
    }
}

fn write_output(
    prog: &str,
    cli: &Cli,
    ds: Option<&Dataset>,
    ctx: &Ctx<'_>,
    out_path: &str,
    format: nco_core::model::Format,
    stream: Option<&Stream<'_>>,
) -> Result<()> {
    let input = &ctx.input;
    let mut plan: Vec<(String, Source)> = Vec::new();
    for n in ctx.output_order() {
        plan.push((n.clone(), Source::New(n)));
    }
    let attrs_of = |name: &str, id: usize| -> Vec<Attr> {
        ctx.touched
            .get(name)
            .cloned()
            .unwrap_or_else(|| input.vars[id].attrs.clone())
    };
    let planned = |plan: &Vec<(String, Source)>, n: &str| plan.iter().any(|(m, _)| m == n);
    if cli.only_defined {
        let mut coords: Vec<usize> = Vec::new();
        if !cli.no_coords {
            for &d in &ctx.dims_used {
                if d < input.dims.len() {
                    if let Some(id) = input.var_id(&input.dims[d].name) {
                        if input.is_coord_var(&input.vars[id]) {
                            coords.push(id);
                        }
                    }
                }
            }
        }
        if cli.all_coords {
            for (id, v) in input.vars.iter().enumerate() {
                if input.is_coord_var(v) && !coords.contains(&id) {
                    coords.push(id);
                }
            }
        }
        // Coordinates follow the input's variable order.
        coords.sort_unstable();
        for id in coords {
            let n = input.vars[id].name.clone();
            if !planned(&plan, &n) {
                plan.push((n.clone(), Source::Copy(id, attrs_of(&n, id))));
            }
        }
        for n in &ctx.touched_order {
            if let Some(id) = input.var_id(n) {
                if !planned(&plan, n) {
                    plan.push((n.clone(), Source::Copy(id, attrs_of(n, id))));
                }
            }
        }
    } else {
        for (id, v) in input.vars.iter().enumerate() {
            if !ctx.vars.contains_key(&v.name) {
                plan.push((v.name.clone(), Source::Copy(id, attrs_of(&v.name, id))));
            }
        }
    }
    // Dimensions: first use order, then (without -v) the input's and defdim's others,
    // then whatever an output variable still needs.
    let mut dim_order: Vec<usize> = ctx.dims_used.clone();
    if !cli.only_defined {
        for d in 0..ctx.dims.len() {
            if !dim_order.contains(&d) {
                dim_order.push(d);
            }
        }
    }
    let var_dims = |src: &Source| -> Vec<usize> {
        match src {
            Source::New(n) => ctx.vars[n].val.dims.clone(),
            Source::Copy(id, _) => input.vars[*id].dims.clone(),
        }
    };
    for (_, s) in &plan {
        for d in var_dims(s) {
            if !dim_order.contains(&d) {
                dim_order.push(d);
            }
        }
    }
    let mut out = Meta::new(format);
    out.attrs = ctx.globals.clone();
    // A record dimension no output variable uses is written with no records, as NCO does.
    let used_by_vars: Vec<usize> = plan.iter().flat_map(|(_, s)| var_dims(s)).collect();
    let mut dim_map = vec![usize::MAX; ctx.dims.len()];
    for (o, &d) in dim_order.iter().enumerate() {
        dim_map[d] = o;
        let mut dim: Dim = ctx.dims[d].clone();
        if dim.unlimited && !used_by_vars.contains(&d) {
            dim.len = 0;
        }
        out.dims.push(dim);
    }
    for (name, src) in &plan {
        let dims = var_dims(src).iter().map(|&d| dim_map[d]).collect();
        let (ty, attrs, storage) = match src {
            Source::New(n) => (
                ctx.vars[n].val.ty(),
                ctx.vars[n].attrs.clone(),
                Default::default(),
            ),
            Source::Copy(id, attrs) => (
                input.vars[*id].ty,
                attrs.clone(),
                input.vars[*id].storage.clone(),
            ),
        };
        if !format.supports(ty) {
            return Err(Error::var(
                name,
                format!(
                    "type {ty} cannot be stored in a {} file (write netCDF-4 with -4 or CDF-5 with -5)",
                    format.kind_name()
                ),
            ));
        }
        out.vars.push(Var {
            name: name.clone(),
            ty,
            dims,
            attrs,
            storage,
        });
    }
    // Chunking and deflate (-L, --cnk_*) as the other operators apply them (a copied
    // variable keeps its input chunk sizes unless chunking options are given).
    let storage = nco_core::extract::StorageArgs {
        deflate: cli.format.deflate,
        chunk: cli.format.chunk.clone(),
    };
    nco_core::extract::warn_storage_on_classic(prog, format, &storage);
    let src: Vec<usize> = plan
        .iter()
        .map(|(_, s)| match s {
            Source::Copy(id, _) => *id,
            Source::New(_) => usize::MAX,
        })
        .collect();
    nco_core::extract::apply_storage(&mut out, input, &src, &storage);
    // Padded (hyperslabbed) variables need a fill value attribute.
    let mut datas: Vec<Option<Values>> = Vec::with_capacity(plan.len());
    for (_, src) in &plan {
        let (Source::New(n), None) = (src, stream) else {
            datas.push(None);
            continue;
        };
        let v = &ctx.vars[n].val;
        let full: Vec<usize> = v.dims.iter().map(|&d| ctx.dims[d].len).collect();
        if full == v.shape {
            datas.push(None);
            continue;
        }
        // Elements outside the hyperslab are left at the fill value, as NCO leaves them
        // unwritten.
        let ty = v.ty();
        let fill = v.fill.unwrap_or_else(|| nco_core::fill::default_fill(ty));
        let n_full: usize = full.iter().product();
        let mut buf = Values::from_f64_slice(ty, &vec![fill; n_full])
            .ok_or_else(|| Error::var(n, "cannot pad a text variable"))?;
        let lists: Vec<Vec<usize>> = v.shape.iter().map(|&s| (0..s).collect()).collect();
        let map = eval::index_map(&full, &lists);
        num::with_type!(ty, T => {
            let dst = <T as nco_core::types::NcNum>::vec_of_mut(&mut buf).expect("same type");
            let src = num::slice::<T>(&v.data);
            for (i, &m) in map.iter().enumerate() {
                dst[m] = src[i];
            }
        }; text => {});
        datas.push(Some(buf));
    }
    nco_core::arith::stamp_threads(&mut out, cli.common.threads);
    let tmp = TempOutput::new(out_path, prog)?;
    let hdr_pad = cli.format.hdr_pad.unwrap_or(0);
    let mut of = OutFile::create(tmp.path(), &out, hdr_pad)?;
    let mut streamed: Vec<(usize, String)> = Vec::new();
    for (o, (_, src)) in plan.iter().enumerate() {
        match src {
            Source::New(n) if stream.is_some() => streamed.push((o, n.clone())),
            Source::New(n) => match &datas[o] {
                Some(d) => of.write(o, 0, d)?,
                None => of.write(o, 0, &ctx.vars[n].val.data)?,
            },
            Source::Copy(id, _) => {
                let ds = ds.expect("copied variables come from the input");
                if !of.copy_var_raw(o, ds, *id)? {
                    let vals = ds.read_all(*id)?;
                    of.write(o, 0, &vals)?;
                }
            }
        }
    }
    if let (Some(st), Some(ds)) = (stream, ds) {
        st.write(prog, ds, &streamed, &mut of)?;
    }
    of.finish()?;
    tmp.commit()
}

/// The crate's layers, checked: each module may use only the modules before it in
/// [`ORDER`](layering::ORDER). The check reads the `crate::` paths of every library
/// file under `src/` (`cargo test -p ncap layering`).
#[cfg(test)]
mod layering {
    use std::path::Path;

    /// ncap's modules, lowest first. A file `src/m.rs` (or `src/m/...`) is module `m`;
    /// `lib` is the crate root, above every module.
    pub const ORDER: &[&str] = &["builtins", "ast", "lexer", "parser", "num", "eval", "lib"];

    /// `text` with comments, string and character literals blanked (newlines kept), so
    /// that only code is searched.
    fn code_only(text: &str) -> String {
        let b = text.as_bytes();
        let mut out = b.to_vec();
        let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
            for c in &mut out[from..to.min(b.len())] {
                if *c != b'\n' {
                    *c = b' ';
                }
            }
        };
        let mut i = 0;
        while i < b.len() {
            let rest = &b[i..];
            let end = if rest.starts_with(b"//") {
                rest.iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p)
            } else if rest.starts_with(b"/*") {
                text[i + 2..].find("*/").map_or(b.len(), |p| i + p + 4)
            } else if rest.starts_with(b"r\"") || rest.starts_with(b"r#") {
                let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
                let close = format!("\"{}", "#".repeat(hashes));
                text[i + 2 + hashes..]
                    .find(&close)
                    .map_or(b.len(), |p| i + 2 + hashes + p + close.len())
            } else if rest[0] == b'"' {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                j + 1
            } else if rest[0] == b'\'' && rest.get(1) == Some(&b'\\') {
                rest[2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map_or(b.len(), |p| i + p + 3)
            } else if rest[0] == b'\'' && rest.get(2) == Some(&b'\'') {
                i + 3
            } else {
                i += 1;
                continue;
            };
            blank(&mut out, i, end);
            i = end;
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    fn is_ident(c: u8) -> bool {
        c.is_ascii_alphanumeric() || c == b'_'
    }

    /// The modules `text` names through `crate::` paths (`crate::m::x`, `crate::{m, n::x}`,
    /// also across lines), with the line of each.
    pub fn crate_refs(text: &str) -> Vec<(usize, String)> {
        let code = code_only(text);
        let b = code.as_bytes();
        let line_of = |at: usize| 1 + b[..at].iter().filter(|&&c| c == b'\n').count();
        let ident_at = |at: usize| -> (String, usize) {
            let mut j = at;
            while j < b.len() && is_ident(b[j]) {
                j += 1;
            }
            (code[at..j].to_string(), j)
        };
        let skip_ws = |mut j: usize| {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            j
        };
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(p) = code[from..].find("crate::") {
            let at = from + p;
            from = at + "crate::".len();
            if at > 0 && is_ident(b[at - 1]) {
                continue;
            }
            let j = skip_ws(from);
            if b.get(j) != Some(&b'{') {
                let (m, _) = ident_at(j);
                out.push((line_of(j), m));
                continue;
            }
            // A group: the first segment of each top-level item.
            let (mut j, mut depth, mut item_start) = (j + 1, 1, true);
            while j < b.len() && depth > 0 {
                j = skip_ws(j);
                match b.get(j) {
                    Some(b'{') => depth += 1,
                    Some(b'}') => depth -= 1,
                    Some(b',') if depth == 1 => item_start = true,
                    Some(&c) if depth == 1 && item_start && is_ident(c) => {
                        let (m, k) = ident_at(j);
                        out.push((line_of(j), m));
                        item_start = false;
                        j = k;
                        continue;
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        out
    }

    /// The module a library file under `src/` belongs to (`None` for binaries).
    fn module_of(rel: &Path) -> Option<String> {
        let first = rel.components().next()?.as_os_str().to_str()?;
        match first {
            "main.rs" | "bin" => None,
            f => Some(f.strip_suffix(".rs").unwrap_or(f).to_string()),
        }
    }

    /// Every use of a module at or above the user's layer, as `file:line: message`; also
    /// files of modules [`ORDER`] does not list.
    pub fn violations(files: &[(String, String)]) -> Vec<String> {
        let layer = |m: &str| ORDER.iter().position(|o| *o == m);
        let mut bad = Vec::new();
        for (rel, text) in files {
            let Some(user) = module_of(Path::new(rel)) else {
                continue;
            };
            let Some(lu) = layer(&user) else {
                bad.push(format!(
                    "src/{rel}: module {user} is not in layering::ORDER"
                ));
                continue;
            };
            for (line, m) in crate_refs(text) {
                match layer(&m) {
                    Some(lm) if lm < lu || m == user => {}
                    _ => bad.push(format!(
                        "src/{rel}:{line}: {user} uses crate::{m}, which is not below it \
                         (layers, lowest first: {})",
                        ORDER.join(", ")
                    )),
                }
            }
        }
        bad
    }

    fn library_files(dir: &Path, rel: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).expect("src is readable") {
            let e = e.expect("src is readable");
            let (path, rel) = (e.path(), rel.join(e.file_name()));
            if path.is_dir() {
                library_files(&path, &rel, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&path).expect("source is UTF-8");
                out.push((rel.to_string_lossy().into_owned(), text));
            }
        }
    }

    #[test]
    fn modules_use_only_the_layers_below() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        library_files(&src, Path::new(""), &mut files);
        files.sort();
        for m in ORDER {
            let file = if *m == "lib" {
                "lib.rs".into()
            } else {
                format!("{m}.rs")
            };
            assert!(
                files
                    .iter()
                    .any(|(f, _)| *f == file || f.starts_with(&format!("{m}/"))),
                "layering::ORDER lists {m}, which has no file in src/"
            );
        }
        let bad = violations(&files);
        assert!(bad.is_empty(), "upward uses:\n{}", bad.join("\n"));
    }

    #[test]
    fn every_form_of_path_is_seen() {
        let text = "use crate::ast::Expr;\nuse crate::{\n    num::{self, x},\n    eval,\n};\n\
                    // crate::lib in a comment\nlet s = \"crate::lib\"; let c = '\"'; \
                    f(crate::parser::parse);\nnco_crate::x();";
        let refs: Vec<(usize, String)> = crate_refs(text);
        let want = [(1, "ast"), (3, "num"), (4, "eval"), (7, "parser")];
        let want: Vec<(usize, String)> = want.iter().map(|&(l, m)| (l, m.into())).collect();
        assert_eq!(refs, want);
        let files = vec![("num.rs".to_string(), "use crate::eval::Ctx;".to_string())];
        let bad = violations(&files);
        assert!(bad.len() == 1 && bad[0].starts_with("src/num.rs:1: num uses crate::eval"));
    }
}
