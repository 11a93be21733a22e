//! Runs split across processes without MPI (job arrays, background jobs): `--part I/N`
//! computes the partial statistic of share I of N of a run's items (ncra's records,
//! nces's members: [`crate::rules::partial`]) and writes it to a part file
//! ([`nco_io::part`]); `--merge` reads every part of the run, checks they belong
//! together, and combines their accumulators in part order into the ones a single
//! process would have ended with, which the operator finishes and writes as usual.
//! The concatenators (ncrcat, ncecat) put their share of the records or members
//! themselves in the part ([`PartFile::add_values`]), as the output gets them; the
//! merge writes each where it belongs ([`Parts::values`]): bit for bit the single
//! process's output.
//!
//! What is exact: counts, weight sums, minima, maxima and every integer-valued sum
//! below 2^53 are the single process's, bit for bit. A floating-point sum is
//! regrouped: ((a+b)+c)+d becomes (a+b)+(c+d), each in double precision, so a merged
//! mean of n records differs from the single process's by at most about n·2⁻⁵³ of the
//! sum of the magnitudes, before its rounding to the output type (which, for `float`
//! outputs, almost always hides it).

use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use md5::{Digest, Md5};

use crate::error::{Error, Result};
use crate::kernels::reduce::{Accum, Op};
use crate::rules::partial::PartSpec;
use crate::types::Values;
use nco_io::part::{self, InputStamp, PartHeader, PartReader};

/// The identity of a run: a digest of the operator, our version, `options` (the
/// operator's parsed options with the inputs, the output and `--part` taken out, as
/// text) and the stamps of its inputs. Every part of one run has the same; a part of
/// another command line or of changed inputs has another.
pub fn run_id(prog: &str, options: &str, stamps: &[InputStamp]) -> String {
    let mut h = Md5::new();
    for s in [prog, env!("CARGO_PKG_VERSION"), options] {
        h.update(s.as_bytes());
        h.update([0]);
    }
    for s in stamps {
        h.update(s.path.as_os_str().as_encoded_bytes());
        h.update([0]);
        h.update(s.len.to_le_bytes());
        h.update(s.mtime_ns.to_le_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The stamps of `inputs` now.
///
/// Errors: an input cannot be examined (named).
pub fn stamps(inputs: &[PathBuf]) -> Result<Vec<InputStamp>> {
    inputs.iter().map(|p| InputStamp::of(p)).collect()
}

/// One part of a run being computed: which part, the run's identity, its command line.
pub struct PartPlan {
    prog: String,
    spec: PartSpec,
    /// The items' sizes when they are shared by size ([`PartSpec::share_by`]).
    sizes: Option<Vec<u64>>,
    /// The run read its input names from standard input.
    stdin: bool,
    run: String,
    argv: Vec<String>,
    stamps: Vec<InputStamp>,
}

impl PartPlan {
    /// Part `spec` of the run of `prog` with `options` ([`run_id`]) over `inputs`,
    /// started by `argv` (recorded without `--part` for the merge to plan from).
    ///
    /// Errors: an argument that is not UTF-8 text (a part file records its command
    /// line as text), an input that cannot be examined.
    pub fn new(
        prog: &str,
        spec: PartSpec,
        options: &str,
        argv: &[OsString],
        inputs: &[PathBuf],
    ) -> Result<PartPlan> {
        let mut args = Vec::with_capacity(argv.len());
        let mut it = argv.iter();
        while let Some(a) = it.next() {
            let a = a.to_str().ok_or_else(|| {
                Error::option(
                    "--part",
                    format!("argument {} is not UTF-8 text", a.to_string_lossy()),
                )
            })?;
            if a == "--part" {
                it.next();
                continue;
            }
            if !a.starts_with("--part=") {
                args.push(a.to_string());
            }
        }
        let stamps = stamps(inputs)?;
        Ok(PartPlan {
            prog: prog.to_string(),
            spec,
            sizes: None,
            stdin: false,
            run: run_id(prog, options, &stamps),
            argv: args,
            stamps,
        })
    }

    /// Share the items by their `sizes` (one per item) instead of their count
    /// ([`PartSpec::share_by`]); the merge is given the same sizes.
    pub fn by_sizes(mut self, sizes: Vec<u64>) -> PartPlan {
        self.sizes = Some(sizes);
        self
    }

    /// Record that the run read its input names from standard input, for the merged
    /// output's provenance ([`Parts::stamp`]).
    pub fn stdin_inputs(mut self, from_stdin: bool) -> PartPlan {
        self.stdin = from_stdin;
        self
    }

    /// This part's share of `total` items.
    pub fn share(&self, total: usize) -> Range<usize> {
        self.spec.share_by(total, self.sizes.as_deref())
    }

    /// Start the part file `dest`, to which [`PartFile::add`] appends accumulators as
    /// they are computed.
    ///
    /// Errors: as [`nco_io::part::PartWriter::create`].
    pub fn create(&self, dest: &Path) -> Result<PartFile<'_>> {
        Ok(PartFile {
            plan: self,
            w: part::PartWriter::create(dest, &self.prog)?,
            buf: Vec::new(),
        })
    }

    /// [`PartPlan::create`] in memory: an MPI rank's part, called `name` in messages,
    /// whose bytes [`PartFile::finish`] returns.
    pub fn in_memory(&self, name: &str) -> PartFile<'_> {
        PartFile {
            plan: self,
            w: part::PartWriter::in_memory(name),
            buf: Vec::new(),
        }
    }
}

/// A part file being written ([`PartPlan::create`]); nothing is left of it unless
/// [`PartFile::finish`] succeeds.
pub struct PartFile<'a> {
    plan: &'a PartPlan,
    w: part::PartWriter,
    buf: Vec<u8>,
}

impl PartFile<'_> {
    /// This part's share of `total` items.
    pub fn share(&self, total: usize) -> Range<usize> {
        self.plan.share(total)
    }

    /// Append accumulator `acc` under `key` (the merge finds it by its key).
    ///
    /// Errors: the write fails (naming the part file).
    pub fn add(&mut self, key: &str, acc: &Accum) -> Result<()> {
        self.buf.clear();
        acc.encode(&mut self.buf);
        self.w.add(key, &self.buf)
    }

    /// Append the operator's own `bytes` under `key` (read back by [`Parts::entry`]).
    ///
    /// Errors: the write fails (naming the part file).
    pub fn add_bytes(&mut self, key: &str, bytes: &[u8]) -> Result<()> {
        self.w.add(key, bytes)
    }

    /// Append the values `vals` under `key`: a concatenation's records or members,
    /// already in the output's type, which the merge writes where they belong
    /// ([`Parts::values`]).
    ///
    /// Errors: the write fails (naming the part file).
    pub fn add_values(&mut self, key: &str, vals: &Values) -> Result<()> {
        self.buf.clear();
        part::encode_values(vals, &mut self.buf);
        self.w.add(key, &self.buf)
    }

    /// Finish the part: its share of `total` items recorded, the file renamed into
    /// place (`None`), or the bytes of a part in memory.
    ///
    /// Errors: a write fails (naming the part file).
    pub fn finish(self, total: usize) -> Result<Option<Vec<u8>>> {
        let plan = self.plan;
        let share = plan.share(total);
        let header = PartHeader {
            version: env!("CARGO_PKG_VERSION").to_string(),
            prog: plan.prog.clone(),
            run: plan.run.clone(),
            part: plan.spec.index,
            parts: plan.spec.count,
            argv: plan.argv.clone(),
            inputs: plan.stamps.clone(),
            inputs_from_stdin: plan.stdin,
            share: (share.start, share.end),
            total,
            entries: Vec::new(),
        };
        self.w.finish(header)
    }
}

/// The part files of one run, their headers read and checked against each other, in
/// part order.
pub struct Parts {
    readers: Vec<PartReader>,
}

impl Parts {
    /// Open the part files `files` of a run of `prog` and check that they are every
    /// part of one run, once each.
    ///
    /// Errors (each naming the file): not a part file, damaged or truncated, written
    /// by another operator or version of nco-rs, a part of another run than the first
    /// file's, a part given twice; a part of the run missing from `files`.
    pub fn open(prog: &str, files: &[PathBuf]) -> Result<Parts> {
        if files.is_empty() {
            return Err(Error::option("--merge", "no part files given"));
        }
        let readers = files
            .iter()
            .map(|f| PartReader::open(f))
            .collect::<Result<Vec<_>>>()?;
        Parts::check(prog, readers)
    }

    /// The parts of an MPI run, received from its ranks in rank order (`rank N`
    /// naming each in messages), checked as [`Parts::open`] checks files.
    ///
    /// Errors: as [`Parts::open`].
    pub fn from_ranks(prog: &str, parts: Vec<Vec<u8>>) -> Result<Parts> {
        let readers = parts
            .into_iter()
            .enumerate()
            .map(|(r, bytes)| PartReader::from_bytes(&format!("rank {r}"), bytes))
            .collect::<Result<Vec<_>>>()?;
        Parts::check(prog, readers)
    }

    fn check(prog: &str, opened: Vec<PartReader>) -> Result<Parts> {
        let mut readers: Vec<PartReader> = Vec::with_capacity(opened.len());
        for r in opened {
            let f = r.path().to_path_buf();
            let f = f.as_path();
            let h = &r.header;
            let why = if h.prog != prog {
                Some(format!("a part file of {}, not of {prog}", h.prog))
            } else if h.version != env!("CARGO_PKG_VERSION") {
                Some(format!(
                    "written by nco-rs {}, this is {}",
                    h.version,
                    env!("CARGO_PKG_VERSION")
                ))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(format_error(f, why));
            }
            if let Some(first) = readers.first() {
                let first: &PartReader = first;
                let f0 = &first.header;
                if h.run != f0.run || h.parts != f0.parts {
                    return Err(format_error(
                        f,
                        format!(
                            "a part of another run than {} ({})",
                            first.path().display(),
                            run_difference(h, f0)
                        ),
                    ));
                }
                if let Some(same) = readers
                    .iter()
                    .find(|o: &&PartReader| o.header.part == h.part)
                {
                    return Err(format_error(
                        f,
                        format!(
                            "part {}/{} given twice (also {})",
                            h.part,
                            h.parts,
                            same.path().display()
                        ),
                    ));
                }
            }
            readers.push(r);
        }
        readers.sort_by_key(|r| r.header.part);
        let h0 = &readers[0].header;
        if let Some(missing) = (1..=h0.parts).find(|&k| !readers.iter().any(|r| r.header.part == k))
        {
            return Err(Error::option(
                "--merge",
                format!(
                    "part {missing}/{} of run {} is missing (given: {} file(s); a failed part writes no file)",
                    h0.parts,
                    short(&h0.run),
                    readers.len()
                ),
            ));
        }
        Ok(Parts { readers })
    }

    /// The first part's header: the run's command line and inputs.
    pub fn header(&self) -> &PartHeader {
        &self.readers[0].header
    }

    /// The merged output's provenance in `target`: its `history` line names the run
    /// the parts computed as well as the merge (`ncra --merge p1.nc p2.nc out.nc;
    /// merging the parts of: ncra -y max in1.nc in2.nc p1.nc`), and the input list
    /// the run read from standard input is recorded, as the single run records it
    /// (unless `file_list` is false: `-H`).
    pub fn stamp(&self, target: &mut crate::target::Target, file_list: bool) {
        let h = self.header();
        if let Some(c) = target.provenance.command.as_mut() {
            c.push_str("; merging the parts of: ");
            c.push_str(&h.argv.join(" "));
        }
        if h.inputs_from_stdin && file_list {
            target.provenance.input_list = Some(
                h.inputs
                    .iter()
                    .map(|s| s.path.display().to_string())
                    .collect(),
            );
        }
    }

    /// Check the run against what the merge planned from its command line: the
    /// inputs unchanged since the parts were written, the same run identity for
    /// `options`, and each part's share of `total` items the one its index gives
    /// (by the items' `sizes` when given, [`PartSpec::share_by`]).
    ///
    /// Errors: an input missing or changed (named), the identity or shares differ
    /// (naming the part file).
    pub fn check_run(
        &self,
        prog: &str,
        options: &str,
        total: usize,
        sizes: Option<&[u64]>,
    ) -> Result<()> {
        let h0 = self.header();
        for s in &h0.inputs {
            let now = InputStamp::of(&s.path)?;
            if &now != s {
                return Err(format_error(
                    &s.path,
                    "input changed since the part files were written (size or modification time); compute the parts again",
                ));
            }
        }
        let run = run_id(prog, options, &h0.inputs);
        for r in &self.readers {
            let h = &r.header;
            let spec = PartSpec {
                index: h.part,
                count: h.parts,
            };
            let share = spec.share_by(total, sizes);
            if h.run != run {
                return Err(format_error(
                    r.path(),
                    "its run's identity does not match its recorded command line and inputs",
                ));
            }
            if h.total != total || (h.share.0, h.share.1) != (share.start, share.end) {
                return Err(format_error(
                    r.path(),
                    format!(
                        "holds items {}..{} of {}, the merge's plan gives part {}/{} items {}..{} of {total}",
                        h.share.0, h.share.1, h.total, h.part, h.parts, share.start, share.end
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Check that every part holds exactly the entries `expected` gives for its share
    /// of the items (a statistic's accumulators, the same keys for every part; a
    /// concatenation's value blocks, its share's), before anything is written.
    ///
    /// Errors: a part lacks an expected entry or holds one the run does not make
    /// (naming the part file and the key).
    pub fn expect_entries(&self, expected: impl Fn(Range<usize>) -> Vec<String>) -> Result<()> {
        for r in &self.readers {
            let h = &r.header;
            let want = expected(h.share.0..h.share.1);
            if let Some(k) = want.iter().find(|k| !r.has(k)) {
                return Err(format_error(r.path(), format!("lacks {k}")));
            }
            // A part's keys are distinct (PartReader refuses a key twice), so a part
            // holding every expected key and no more has as many.
            if want.len() != h.entries.len() {
                let want: std::collections::HashSet<&str> =
                    want.iter().map(String::as_str).collect();
                let extra = h.entries.iter().find(|e| !want.contains(e.key.as_str()));
                return Err(format_error(
                    r.path(),
                    format!(
                        "holds {}, which this run does not make",
                        extra.map_or("an entry", |e| e.key.as_str())
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Each part's share of the items, in part order.
    pub fn shares(&self) -> Vec<Range<usize>> {
        self.readers
            .iter()
            .map(|r| r.header.share.0..r.header.share.1)
            .collect()
    }

    /// The bytes stored under `key` ([`PartFile::add_bytes`]) in the part whose share
    /// holds item `item`, and that part's name for messages.
    ///
    /// Errors: no part holds `item`, the entry is missing or damaged (naming the part
    /// file and key).
    pub fn entry(&self, item: usize, key: &str) -> Result<(&[u8], &Path)> {
        let r = self
            .readers
            .iter()
            .find(|r| (r.header.share.0..r.header.share.1).contains(&item))
            .ok_or_else(|| Error::msg(format!("internal: no part holds item {item}")))?;
        Ok((r.read_entry(key)?, r.path()))
    }

    /// The values stored under `key` in the part whose share holds item `item` (a
    /// record or member of a concatenation), which must be `len` elements.
    ///
    /// Errors: no part holds `item`, the entry is missing or damaged, or of another
    /// size (naming the part file and key).
    pub fn values(&self, item: usize, key: &str, len: usize) -> Result<Values> {
        let (bytes, path) = self.entry(item, key)?;
        let vals =
            part::decode_values(bytes).map_err(|e| format_error(path, format!("{key}: {e}")))?;
        if vals.len() != len {
            return Err(format_error(
                path,
                format!("{key}: {} values, the output needs {len}", vals.len()),
            ));
        }
        Ok(vals)
    }

    /// The accumulator of statistic `op` under `key` combined from every part, in part
    /// order (checked by [`Parts::expect_entries`]). Called from any thread, as
    /// the output is written: memory holds the accumulators being finished, not the
    /// whole output's.
    ///
    /// Errors: an entry missing or damaged, of another size than the first part's
    /// (naming the part file and key).
    pub fn accumulator(&self, key: &str, op: Op) -> Result<Accum> {
        thread_local! {
            /// The later parts' accumulators are decoded here, memory reused.
            static SCRATCH: std::cell::RefCell<Accum> = std::cell::RefCell::new(Accum::new(Op::Avg, 0));
        }
        let mut out: Option<Accum> = None;
        for r in &self.readers {
            let bytes = r.read_entry(key)?;
            let damaged = |e: String| format_error(r.path(), format!("{key}: {e}"));
            let Some(a) = out.as_mut() else {
                let (acc, used) = Accum::decode(op, bytes).map_err(|e| damaged(e.to_string()))?;
                if used != bytes.len() {
                    return Err(damaged("damaged accumulator record".into()));
                }
                out = Some(acc);
                continue;
            };
            SCRATCH.with_borrow_mut(|acc| {
                let used = acc
                    .decode_into(op, bytes)
                    .map_err(|e| damaged(e.to_string()))?;
                if used != bytes.len() {
                    return Err(damaged("damaged accumulator record".into()));
                }
                if a.len() != acc.len() {
                    return Err(damaged("size differs between parts".into()));
                }
                a.merge(acc);
                Ok(())
            })?;
        }
        out.ok_or_else(|| Error::msg("internal: a merge without parts"))
    }
}

/// What differs between the runs of part headers `a` and `b`, in words: the part
/// count, the options (the arguments only one command line has, inputs and part files
/// left out), or else the inputs.
fn run_difference(a: &PartHeader, b: &PartHeader) -> String {
    if a.parts != b.parts {
        return format!("{} parts, not {}", a.parts, b.parts);
    }
    let inputs = |h: &PartHeader| -> Vec<String> {
        h.inputs
            .iter()
            .map(|s| s.path.display().to_string())
            .collect()
    };
    let (ia, ib) = (inputs(a), inputs(b));
    // The last argument is the part file itself, and the inputs are compared below.
    // The options a run's identity leaves out (the merge's own command line gives
    // them) are left out here too, with the values of those that take one.
    let options = |h: &PartHeader, ins: &[String]| -> Vec<String> {
        let n = h.argv.len().saturating_sub(1);
        let mut out = Vec::new();
        let mut it = h.argv.iter().take(n).skip(1);
        while let Some(x) = it.next() {
            if ins.contains(x) || NOT_COMPARED.contains(&x.as_str()) {
                continue;
            }
            if NOT_COMPARED_WITH_VALUE.contains(&x.as_str()) {
                it.next();
                continue;
            }
            out.push(x.clone());
        }
        out
    };
    let (oa, ob) = (options(a, &ia), options(b, &ib));
    if oa != ob {
        let only = |x: &[String], y: &[String]| -> String {
            let d: Vec<&str> = x
                .iter()
                .filter(|t| !y.contains(t))
                .map(String::as_str)
                .collect();
            if d.is_empty() {
                "nothing".into()
            } else {
                format!("`{}`", d.join(" "))
            }
        };
        let (here, there) = (only(&oa, &ob), only(&ob, &oa));
        if here == there {
            return "options differ: the same arguments in another order".into();
        }
        return format!("options differ: {here} here, {there} there");
    }
    if ia != ib {
        return format!("other inputs: {} here, {} there", ia.len(), ib.len());
    }
    "the inputs changed between the parts (size or modification time)".into()
}

/// Options of a part's command line that its run's identity does not include
/// ([`crate::cli::split_options_text`]), left out when two runs are compared in words.
const NOT_COMPARED: &[&str] = &[
    "-O",
    "--ovr",
    "--overwrite",
    "-h",
    "--hst",
    "--history",
    "-q",
    "--quiet",
];

/// [`NOT_COMPARED`]'s options that take a value as the next argument.
const NOT_COMPARED_WITH_VALUE: &[&str] = &[
    "-t",
    "--thr_nbr",
    "--threads",
    "--omp_num_threads",
    "-D",
    "--dbg_lvl",
    "--debug-level",
    "-p",
    "--pth",
    "--path",
];

fn format_error(path: &Path, why: impl Into<String>) -> Error {
    Error::Format {
        path: path.display().to_string(),
        reason: why.into(),
    }
}

/// The first 12 digits of a run identity, for messages.
fn short(run: &str) -> &str {
    &run[..run.len().min(12)]
}
