//! `run`: the wishlist on the benchmark files, each operator a measured child process,
//! ours and NCO's (and CDO's equivalent) alternating in the same run, then a check that
//! our output equals NCO's.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::cache;
use crate::compare::{compare_in_child, Tol};
use crate::gen::{self, GenOptions, Geometry};
use crate::proc::{self, Launch, Measure};
use crate::report::{Check, Report, Row, RunInfo, State, ToolRuns};
use crate::wishlist::{
    member_names, shell_line, Kind, Plan, Source, Tool, LIST_TARGET_VS_NCO, LIST_TARGET_VS_OURS,
    STATIONS,
};

/// Options of `run`.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Data folder (generated files, links), unless `url`.
    pub data_dir: PathBuf,
    /// OPeNDAP base URL for the inputs (no generation, no eviction).
    pub url: Option<String>,
    /// Results folder (table, CSV, JSON, SVG).
    pub out_dir: PathBuf,
    /// Scratch folder for the operators' outputs and logs.
    pub scratch: PathBuf,
    /// Files for the multi-file rows.
    pub files: usize,
    /// Repeats per tool per row.
    pub repeats: usize,
    /// Repeats for CDO (informational; its station row reads the whole file per call).
    pub cdo_repeats: usize,
    /// `-t N` for NCO and us, `-P N` for CDO.
    pub threads: Option<usize>,
    /// Evict inputs from the page cache before every measured run.
    pub cold: bool,
    /// Pin every child to this CPU.
    pub pin_cpu: Option<usize>,
    /// Rows to run, each on a geometry.
    pub rows: Vec<(Kind, Geometry)>,
    /// Our binaries.
    pub bin_dir: PathBuf,
    /// NCO's binaries (`None`: search PATH).
    pub nco_dir: Option<PathBuf>,
    /// Run NCO.
    pub with_nco: bool,
    /// Run CDO where it has an equivalent.
    pub with_cdo: bool,
    /// Relative tolerance override for the check.
    pub rtol: Option<f64>,
    /// Generation settings for missing files.
    pub gen: GenOptions,
    /// Keep the operators' outputs in the scratch folder.
    pub keep_outputs: bool,
    /// Also time our operator with every read and write through libnetcdf
    /// (`--no-mmap`), as a third side of each row (the netCDF-4 rows).
    pub libnetcdf_side: bool,
    /// Appended to every row's id and title (the netCDF-4 rows: which inputs).
    pub label: Option<(String, String)>,
    /// Process id of the loopback OPeNDAP server serving `url` (`run --dap`): its CPU
    /// time during each measured run goes into [`Measure::server_cpu`].
    pub server_pid: Option<u32>,
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.is_file()
        && p.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// Our binary for `kind` in `bin_dir` (primary name or an alias).
pub fn find_ours(kind: Kind, bin_dir: &Path) -> Option<PathBuf> {
    std::iter::once(kind.operator())
        .chain(kind.aliases().iter().copied())
        .map(|n| bin_dir.join(n))
        .find(|p| is_executable(p))
}

/// A program on PATH (or in `dir`), never from `exclude` (our own folder).
pub fn find_program(names: &[&str], dir: Option<&Path>, exclude: &Path) -> Option<PathBuf> {
    let ex = exclude.canonicalize().ok();
    let dirs: Vec<PathBuf> = match dir {
        Some(d) => vec![d.to_path_buf()],
        None => std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default(),
    };
    for n in names {
        for d in &dirs {
            if d.canonicalize().ok().is_some_and(|c| Some(c) == ex) {
                continue;
            }
            let p = d.join(n);
            if is_executable(&p) {
                return Some(p);
            }
        }
    }
    None
}

fn first_line_of(argv: &[&str]) -> String {
    std::process::Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .ok()
        .map(|o| {
            let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
            t.push_str(&String::from_utf8_lossy(&o.stderr));
            t.lines()
                .find(|l| l.contains("version"))
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

fn last_log_line(p: &Path) -> String {
    std::fs::read_to_string(p)
        .ok()
        .and_then(|t| {
            t.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_default()
}

/// Unique real files behind `inputs` (links resolved), for eviction and the I/O floor.
fn real_files(inputs: &[String]) -> Vec<PathBuf> {
    let mut set = BTreeSet::new();
    for i in inputs {
        if let Ok(c) = Path::new(i).canonicalize() {
            set.insert(c);
        }
    }
    set.into_iter().collect()
}

/// Create `<stem>_NN.nc` links to `<stem>.nc` for the multi-file rows.
pub(crate) fn make_links(dir: &Path, geo: Geometry, n: usize) -> Result<()> {
    let target = gen::file_name(geo, 0);
    for name in member_names(geo, n) {
        let p = dir.join(&name);
        if std::fs::read_link(&p).is_ok_and(|t| t == Path::new(&target)) {
            continue;
        }
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(&target, &p)
            .with_context(|| format!("cannot create the link {}", p.display()))?;
    }
    Ok(())
}

/// Read every input once (like `cat` to /dev/null) and write `out_bytes` to a scratch
/// file: the time no implementation can beat on this machine (for this cache state).
fn io_floor(inputs: &[String], out_bytes: u64, scratch: &Path, cold: bool) -> Result<f64> {
    if cold {
        for f in real_files(inputs) {
            cache::evict(&f)?;
        }
    }
    let mut buf = vec![0u8; 8 << 20];
    let start = Instant::now();
    for i in inputs {
        let mut f = std::fs::File::open(i)?;
        while f.read(&mut buf)? > 0 {}
    }
    let tmp = scratch.join(format!(".io_floor.{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        buf.fill(1);
        let mut left = out_bytes;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            f.write_all(&buf[..n])?;
            left -= n as u64;
        }
    }
    let t = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(tmp);
    Ok(t)
}

struct Side {
    tool: Tool,
    /// Row 5c's third side: our operator in the separate calls NCO needs; with
    /// `lib`, the netCDF-4 rows' third side: our operator through libnetcdf.
    separate: bool,
    lib: bool,
    prog: PathBuf,
    cmds: Vec<Vec<String>>,
    outs: Vec<PathBuf>,
    log: PathBuf,
    runs: Vec<Measure>,
    failed: Option<String>,
    /// The in-place rows: (source, work file) copied (and synced) before each run,
    /// untimed; the command edits the work file, its output.
    prep: Option<(PathBuf, PathBuf)>,
}

/// Copy `from` to `to` and flush it to disk, so that the timed edit of `to` neither
/// pays for the copy nor for its write-back.
fn fresh_copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    std::fs::File::open(to)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("cannot sync {}", to.display()))
}

fn remove_outputs(outs: &[PathBuf]) {
    for o in outs {
        let _ = std::fs::remove_file(o);
    }
}

fn run_side(side: &mut Side, inputs: &[String], opt: &RunOptions, launch: &Launch) {
    if opt.cold && opt.url.is_none() {
        for f in real_files(inputs) {
            if let Err(e) = cache::evict(&f) {
                eprintln!("nco-bench: warning: {e:#}");
            }
        }
    }
    remove_outputs(&side.outs);
    if let Some((from, to)) = &side.prep {
        if let Err(e) = fresh_copy(from, to) {
            side.failed = Some(format!("{e:#}"));
            return;
        }
    }
    let mut total = Measure {
        code: Some(0),
        ..Default::default()
    };
    let server_cpu = || opt.server_pid.and_then(proc::tree_cpu_seconds);
    for argv in &side.cmds {
        let before = server_cpu();
        match proc::run(argv, Some(&side.log), launch) {
            Ok(mut m) => {
                if let (Some(a), Some(b)) = (before, server_cpu()) {
                    m.server_cpu = b - a;
                }
                total.accumulate(&m);
                if !m.ok() {
                    let why = last_log_line(&side.log);
                    side.failed = Some(format!(
                        "{} ({}){}",
                        m.status_text(),
                        shell_line(argv),
                        if why.is_empty() {
                            String::new()
                        } else {
                            format!(": {why}")
                        }
                    ));
                    break;
                }
            }
            Err(e) => {
                side.failed = Some(format!("cannot start {}: {e}", argv[0]));
                break;
            }
        }
    }
    side.runs.push(total);
}

fn tool_runs(side: &Side) -> ToolRuns {
    match &side.failed {
        Some(why) => ToolRuns {
            state: State::Failed,
            detail: why.clone(),
            runs: side.runs.clone(),
            median: None,
        },
        None => ToolRuns {
            state: State::Ok,
            detail: side.prog.display().to_string(),
            median: Some(proc::median_measure(&side.runs)),
            runs: side.runs.clone(),
        },
    }
}

/// Give freed heap memory back to the system. A child's peak RSS starts at the harness's
/// RSS when it is spawned (Linux keeps it across exec), so the harness stays small.
pub fn trim_heap() {
    // SAFETY: malloc_trim only releases free memory of glibc's allocator.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Order of the sides (given as (tool, separate)) in repeat `rep`: ours, NCO, our
/// separate calls on even repeats, the reverse on odd ones (so ours and NCO alternate
/// in first place, as in every row); CDO always last.
pub fn run_order(roles: &[(Tool, bool)], rep: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..roles.len()).collect();
    order.sort_by_key(|&i| {
        let base = match roles[i] {
            (Tool::Ours, false) => 0,
            (Tool::Nco, _) => 1,
            (Tool::Ours, true) => 2,
            (Tool::Cdo, _) => return 9,
        };
        if rep % 2 == 0 {
            base
        } else {
            2 - base
        }
    });
    order
}

/// Row 5c's note: the list-mode targets with the measured ratios (wall).
pub fn list_targets_note(vs_nco: Option<f64>, vs_ours: Option<f64>) -> String {
    let part = |what: &str, target: f64, got: Option<f64>| match got {
        Some(r) => format!(
            ">= {target:.0}x faster than {STATIONS} separate {what}: {r:.1}x, {}",
            if r >= target { "met" } else { "NOT met" }
        ),
        None => format!(">= {target:.0}x faster than {STATIONS} separate {what}: not measured"),
    };
    format!(
        "list mode targets (wall): {}; {}",
        part("NCO ncrcat runs", LIST_TARGET_VS_NCO, vs_nco),
        part("runs of our ncrcat", LIST_TARGET_VS_OURS, vs_ours)
    )
}

/// Run one row.
pub fn run_row(plan: &Plan, opt: &RunOptions, launch: &Launch, input_problem: Option<&str>) -> Row {
    let kind = plan.kind;
    let (rtol0, atol, atol_int) = plan.tolerance();
    let rtol = opt.rtol.unwrap_or(rtol0);
    let (id_suffix, title_suffix) = opt.label.clone().unwrap_or_default();
    let tag = format!("row{}{id_suffix}_{}", kind.id(), plan.geo.stem());
    let mut row = Row {
        id: format!("{}{id_suffix}", kind.id()),
        title: format!("{}{title_suffix}", kind.title(plan.files)),
        operator: kind.operator().into(),
        geometry: plan.geo.stem().into(),
        inputs: plan.inputs.len(),
        command: String::new(),
        ours: ToolRuns::absent(State::Skipped, ""),
        nco: ToolRuns::absent(State::Skipped, ""),
        cdo: ToolRuns::absent(State::Skipped, ""),
        speedup_vs_nco: None,
        speedup_vs_cdo: None,
        cpu_speedup_vs_nco: None,
        check: Check::NotCompared,
        check_detail: String::new(),
        rtol,
        atol,
        io_floor: None,
        ours_separate: None,
        speedup_vs_ours_separate: None,
        cpu_speedup_vs_ours_separate: None,
        note: None,
        ours_libnetcdf: None,
        engine_vs_libnetcdf: None,
        cpu_engine_vs_libnetcdf: None,
    };
    if let Some((c, _)) = plan.commands(
        Tool::Ours,
        kind.operator(),
        opt.threads,
        &opt.scratch.join(format!("{tag}_{}", Tool::Ours.label())),
    ) {
        row.command = c.first().map(|a| shell_line(a)).unwrap_or_default();
        if c.len() > 1 {
            row.command
                .push_str(&format!("  (and {} more calls)", c.len() - 1));
        }
    }
    if let Some(p) = input_problem {
        let msg = format!("input not available: {p}");
        row.ours = ToolRuns::absent(State::Failed, msg.clone());
        row.nco = ToolRuns::absent(State::Failed, msg);
        return row;
    }
    let logs = opt.scratch.join("logs");
    let _ = std::fs::create_dir_all(&logs);
    // The in-place rows' source: the input, or a copy with a roomy header (written by
    // our ncks once per row, untimed; both tools then edit copies of it).
    let edit_source = match (kind.in_place(), &opt.url) {
        (None, _) => None,
        (Some(_), Some(_)) => {
            let msg = "the in-place rows edit local copies, not remote files".to_string();
            row.ours = ToolRuns::absent(State::Skipped, msg.clone());
            row.nco = ToolRuns::absent(State::Skipped, msg);
            return row;
        }
        (Some(false), None) => Some(PathBuf::from(&plan.inputs[0])),
        (Some(true), None) => {
            let padded = opt.scratch.join(format!("{tag}_padded.nc"));
            let ncks = opt.bin_dir.join("ncks");
            let pad = crate::wishlist::EDIT_PAD.to_string();
            let made = std::process::Command::new(&ncks)
                .args(["-O", "-h", "--hdr_pad", &pad, &plan.inputs[0]])
                .arg(&padded)
                .status();
            if !made.is_ok_and(|s| s.success()) {
                let msg = format!("cannot make the padded copy with {}", ncks.display());
                row.ours = ToolRuns::absent(State::Failed, msg.clone());
                row.nco = ToolRuns::absent(State::Failed, msg);
                return row;
            }
            Some(padded)
        }
    };
    let mut sides: Vec<Side> = Vec::new();
    let make = |tool: Tool, separate: bool, prog: PathBuf| -> Option<Side> {
        let lib = separate && kind != Kind::StationsList;
        let label = if lib {
            format!("{}_libnetcdf", tool.label())
        } else if separate {
            format!("{}_separate", tool.label())
        } else {
            tool.label().to_string()
        };
        let prefix = opt.scratch.join(format!("{tag}_{label}"));
        let prog_s = prog.to_string_lossy();
        let (mut cmds, outs) = if separate && !lib {
            plan.separate_station_calls(&prog_s, opt.threads, &prefix)
        } else {
            plan.commands(tool, &prog_s, opt.threads, &prefix)?
        };
        if lib {
            for c in &mut cmds {
                c.insert(1, "--no-mmap".to_string());
            }
        }
        let log = logs.join(format!("{tag}_{label}.log"));
        let _ = std::fs::remove_file(&log);
        let mut side = Side {
            tool,
            separate,
            lib,
            prog,
            cmds,
            outs,
            log,
            runs: Vec::new(),
            failed: None,
            prep: None,
        };
        if let (Some(src), Some(work)) = (&edit_source, side.outs.first()) {
            side.prep = Some((src.clone(), work.clone()));
        }
        if kind == Kind::StationsList && tool == Tool::Ours && !separate {
            // The list file the one call reads, beside its outputs.
            let list = Plan::list_file(&prefix);
            let written = plan
                .station_list(&side.outs)
                .map_err(|e| anyhow::anyhow!(e))
                .and_then(|text| write_atomic(&list, &text));
            if let Err(e) = written {
                side.failed = Some(format!("cannot write the station list: {e:#}"));
            }
        }
        Some(side)
    };
    match find_ours(kind, &opt.bin_dir) {
        Some(p) => {
            if kind == Kind::StationsList || opt.libnetcdf_side {
                sides.extend(make(Tool::Ours, true, p.clone()));
            }
            sides.extend(make(Tool::Ours, false, p));
        }
        None => {
            row.ours = ToolRuns::absent(
                State::NotBuilt,
                format!(
                    "{} is not built (looked in {})",
                    kind.operator(),
                    opt.bin_dir.display()
                ),
            )
        }
    }
    if opt.with_nco {
        let mut names = vec![kind.operator()];
        names.extend(kind.aliases());
        match find_program(&names, opt.nco_dir.as_deref(), &opt.bin_dir) {
            Some(p) => sides.extend(make(Tool::Nco, false, p)),
            None => {
                row.nco = ToolRuns::absent(
                    State::NotInstalled,
                    format!("{} not found on PATH", kind.operator()),
                )
            }
        }
    }
    if opt.with_cdo {
        let probe = plan
            .commands(Tool::Cdo, "cdo", None, Path::new("x"))
            .is_some();
        if !probe {
            row.cdo = ToolRuns::absent(State::NoEquivalent, "no CDO equivalent");
        } else {
            match find_program(&["cdo"], None, &opt.bin_dir) {
                Some(p) => sides.extend(make(Tool::Cdo, false, p)),
                None => row.cdo = ToolRuns::absent(State::NotInstalled, "cdo not found on PATH"),
            }
        }
    }
    trim_heap();
    // Alternate: ours first on even repeats, NCO first on odd ones; CDO last. Row 5c:
    // list mode, NCO's calls, our calls on even repeats, the reverse on odd ones.
    let roles: Vec<(Tool, bool)> = sides.iter().map(|s| (s.tool, s.separate)).collect();
    for rep in 0..opt.repeats.max(opt.cdo_repeats) {
        let order = run_order(&roles, rep);
        for i in order {
            if sides[i].tool == Tool::Cdo && rep >= opt.cdo_repeats {
                continue;
            }
            if sides[i].tool != Tool::Cdo && rep >= opt.repeats {
                continue;
            }
            if sides[i].failed.is_none() {
                run_side(&mut sides[i], &plan.inputs, opt, launch);
            }
        }
    }
    for s in &sides {
        let tr = tool_runs(s);
        match s.tool {
            Tool::Ours if s.lib => row.ours_libnetcdf = Some(tr),
            Tool::Ours if s.separate => row.ours_separate = Some(tr),
            Tool::Ours => row.ours = tr,
            Tool::Nco => row.nco = tr,
            Tool::Cdo => row.cdo = tr,
        }
    }
    if let (Some(o), Some(n)) = (row.ours.wall(), row.nco.wall()) {
        row.speedup_vs_nco = Some(n / o.max(1e-9));
    }
    let cpu = |t: &ToolRuns| t.wall().and(t.median.as_ref()).map(|m| m.user + m.sys);
    if let (Some(o), Some(n)) = (cpu(&row.ours), cpu(&row.nco)) {
        row.cpu_speedup_vs_nco = Some(n / o.max(1e-9));
    }
    if let (Some(o), Some(c)) = (row.ours.wall(), row.cdo.wall()) {
        row.speedup_vs_cdo = Some(c / o.max(1e-9));
    }
    if let Some(sep) = &row.ours_separate {
        if let (Some(o), Some(s)) = (row.ours.wall(), sep.wall()) {
            row.speedup_vs_ours_separate = Some(s / o.max(1e-9));
        }
        if let (Some(o), Some(s)) = (cpu(&row.ours), cpu(sep)) {
            row.cpu_speedup_vs_ours_separate = Some(s / o.max(1e-9));
        }
        row.note = Some(list_targets_note(
            row.speedup_vs_nco,
            row.speedup_vs_ours_separate,
        ));
    }
    if let Some(lib) = &row.ours_libnetcdf {
        if let (Some(o), Some(l)) = (row.ours.wall(), lib.wall()) {
            row.engine_vs_libnetcdf = Some(l / o.max(1e-9));
        }
        if let (Some(o), Some(l)) = (cpu(&row.ours), cpu(lib)) {
            row.cpu_engine_vs_libnetcdf = Some(l / o.max(1e-9));
        }
        let peak = |t: &ToolRuns| t.median.as_ref().map(|m| m.max_rss);
        row.note = Some(format!(
            "chunk engine vs libnetcdf (nco-rs --no-mmap): {} s vs {} s wall: {} wall, {} CPU; peak {} vs {}",
            row.ours.cell(),
            lib.cell(),
            ratio_text(row.engine_vs_libnetcdf),
            ratio_text(row.cpu_engine_vs_libnetcdf),
            peak(&row.ours).map_or("-".into(), mb_text),
            peak(lib).map_or("-".into(), mb_text),
        ));
    }
    // Check our outputs against NCO's (row 5c: a few of the list outputs, and of our
    // separate calls' outputs, against NCO's separate outputs).
    let ours = sides.iter().find(|s| s.tool == Tool::Ours && !s.separate);
    let ours_sep = sides
        .iter()
        .find(|s| s.tool == Tool::Ours && s.separate && !s.lib);
    let ours_lib = sides.iter().find(|s| s.lib);
    let nco = sides.iter().find(|s| s.tool == Tool::Nco);
    match (ours, nco) {
        (Some(o), Some(n))
            if o.failed.is_none()
                && n.failed.is_none()
                && !matches!(ours_sep, Some(s) if s.failed.is_some()) =>
        {
            let tol = Tol {
                rtol,
                atol,
                atol_int,
            };
            let exact = Tol {
                rtol: 0.0,
                atol: 0.0,
                atol_int: 0.0,
            };
            let picked = plan.checked_outputs(o.outs.len().min(n.outs.len()));
            // (label, ours, reference, tolerance, waivers): our outputs against NCO's;
            // row 5c also our separate calls' against NCO's, and the list outputs
            // against our separate calls' exactly (no waiver).
            let mut pairs = vec![("", o, n, tol, plan.waivers())];
            if let Some(sep) = ours_sep {
                pairs.push(("our separate calls: ", sep, n, tol, plan.waivers()));
                pairs.push(("list mode vs our separate calls: ", o, sep, exact, &[]));
            }
            if let Some(lib) = ours_lib.filter(|s| s.failed.is_none()) {
                // The chunk engine and libnetcdf give the same values exactly.
                pairs.push(("engine vs libnetcdf: ", o, lib, exact, &[]));
            }
            let mut problems = Vec::new();
            'pairs: for (who, x, y, t, w) in pairs {
                for &k in &picked {
                    let (a, b) = (&x.outs[k], &y.outs[k]);
                    let (a_s, b_s) = (a.to_string_lossy(), b.to_string_lossy());
                    if kind.text_output() {
                        // Printed text: NCO's, byte for byte (streamed: a whole text
                        // read here would raise this process's peak memory, which
                        // every later child's peak then reports as its floor).
                        match same_bytes(a, b) {
                            Ok(None) => {}
                            Ok(Some((x, y))) => problems.push(format!(
                                "{who}{}: the text differs from NCO's ({x} and {y} bytes)",
                                a.display()
                            )),
                            Err(e) => problems.push(format!("{who}{}: {e}", a.display())),
                        }
                        if !problems.is_empty() {
                            break 'pairs;
                        }
                        continue;
                    }
                    match compare_in_child(&a_s, &b_s, t, w) {
                        Ok(None) => {}
                        Ok(Some(d)) => problems.push(format!("{who}{}: {d}", a.display())),
                        Err(e) => problems.push(format!("{who}{e:#}")),
                    }
                    if !problems.is_empty() {
                        break 'pairs;
                    }
                }
            }
            if problems.is_empty() {
                row.check = Check::Equal;
                row.check_detail = if ours_sep.is_some() {
                    let waived: Vec<String> = plan
                        .waivers()
                        .iter()
                        .map(|w| format!("{}=\"{}\"", w.attr, w.value))
                        .collect();
                    format!(
                        "{} of {} list-mode outputs (numbers {:?}) and the same of our separate calls equal NCO's within rtol {rtol:e}, atol {atol:e} (NCO's {} not required: ours leaves it out on purpose), and the list-mode ones equal our separate calls' exactly",
                        picked.len(),
                        o.outs.len(),
                        picked,
                        waived.join(", ")
                    )
                } else if kind.text_output() {
                    format!("{} printed text(s) equal NCO's byte for byte", picked.len())
                } else {
                    format!(
                        "{} output file(s) equal within rtol {rtol:e}, atol {atol:e}",
                        picked.len()
                    )
                };
            } else {
                row.check = Check::Different;
                row.check_detail = problems.join("\n");
            }
        }
        _ => row.check_detail = "not compared: needs successful runs of both nco-rs and NCO".into(),
    }
    if kind == Kind::Deflate {
        // The output's size against NCO's (the target: within 3%).
        let size = |s: Option<&Side>| {
            s.filter(|s| s.failed.is_none())
                .and_then(|s| s.outs.first())
                .and_then(|p| p.metadata().ok())
                .map(|m| m.len())
        };
        if let (Some(a), Some(b)) = (size(ours), size(nco)) {
            let text = format!(
                "output size: nco-rs {:.1} MB, NCO {:.1} MB ({:+.1}%)",
                a as f64 / 1e6,
                b as f64 / 1e6,
                (a as f64 / b.max(1) as f64 - 1.0) * 100.0
            );
            row.note = Some(match row.note.take() {
                Some(n) => format!("{n}; {text}"),
                None => text,
            });
        }
    }
    if kind == Kind::StationsList && !opt.keep_outputs {
        let _ = std::fs::remove_file(Plan::list_file(
            &opt.scratch.join(format!("{tag}_{}", Tool::Ours.label())),
        ));
    }
    // I/O floor: read the inputs, write an output as big as NCO's (or ours).
    if kind.has_io_floor() && opt.url.is_none() {
        let size = [nco, ours]
            .into_iter()
            .flatten()
            .filter(|s| s.failed.is_none())
            .find_map(|s| {
                s.outs
                    .first()
                    .and_then(|p| p.metadata().ok())
                    .map(|m| m.len())
            });
        if let Some(bytes) = size {
            match io_floor(&plan.inputs, bytes, &opt.scratch, opt.cold) {
                Ok(t) => row.io_floor = Some(t),
                Err(e) => eprintln!("nco-bench: warning: I/O floor of row {}: {e:#}", row.id),
            }
        }
    }
    if !opt.keep_outputs {
        for s in &sides {
            remove_outputs(&s.outs);
        }
    }
    if kind.in_place() == Some(true) {
        if let Some(p) = &edit_source {
            let _ = std::fs::remove_file(p);
        }
    }
    row
}

/// Compare two files in 1 MiB blocks: `None` when their bytes are equal, else their
/// lengths.
///
/// Errors: either cannot be read.
fn same_bytes(a: &Path, b: &Path) -> std::io::Result<Option<(u64, u64)>> {
    use std::io::Read;
    let (la, lb) = (a.metadata()?.len(), b.metadata()?.len());
    if la != lb {
        return Ok(Some((la, lb)));
    }
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut x)?;
        if n == 0 {
            return Ok(None);
        }
        fb.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(Some((la, lb)));
        }
    }
}

/// "2.3x" or "-".
fn ratio_text(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}x"))
}

/// Bytes as "12 MB".
fn mb_text(b: u64) -> String {
    format!("{:.0} MB", b as f64 / 1e6)
}

pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn host_line() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let k = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{} Linux {}", h.trim(), k.trim())
}

fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = nco_core::calendar::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Write `text` to `path` through a temporary name.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename to {}", path.display()))?;
    Ok(())
}

/// Generate one file in a child `nco-bench gen`, so that the harness stays small (a
/// measured child's peak RSS starts at the harness's RSS at spawn).
fn gen_in_child(geo: Geometry, variant: u32, g: &GenOptions) -> std::result::Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find nco-bench itself: {e}"))?;
    let which = match (geo, variant) {
        (Geometry::Ipcc, 0) => "ipcc",
        (Geometry::Ipcc, _) => "partner",
        (Geometry::Stl, 0) => "stl",
        (Geometry::Stl, _) => "stl_b",
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("gen")
        .arg("--exact-dir")
        .arg(&g.dir)
        .args(["--which", which, "--format", gen::format_name(g.format)])
        .args(["--scale", &g.scale.to_string()]);
    if let Some(l) = g.deflate {
        cmd.args(["--deflate", &l.to_string()]);
    }
    if g.shuffle {
        cmd.arg("--shuffle");
    }
    if !g.chunks.is_empty() {
        let spec: Vec<String> = g.chunks.iter().map(|(d, n)| format!("{d}={n}")).collect();
        cmd.args(["--chunk", &spec.join(",")]);
    }
    if g.force {
        cmd.arg("--force");
    }
    if !g.sync {
        cmd.arg("--no-sync");
    }
    let st = cmd
        .status()
        .map_err(|e| format!("cannot run nco-bench gen: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!(
            "{} could not be generated in {} (see the error above)",
            gen::file_name(geo, variant),
            g.dir.display()
        ))
    }
}

/// [`cache::settle`] each file in a child process (`nco-bench settle-probe`): mapping
/// the inputs here would raise the runner's peak memory, which every child inherits as
/// its own at exec. Per file: the (before, after) 2 MiB-folio fractions, if measurable.
fn settle_in_child(files: &[PathBuf]) -> std::result::Result<Vec<Option<(f64, f64)>>, String> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find nco-bench itself: {e}"))?;
    let out = std::process::Command::new(exe)
        .arg("settle-probe")
        .args(files)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run nco-bench settle-probe: {e}"))?;
    if !out.status.success() {
        return Err("settling the inputs in the page cache failed (see above)".into());
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace().map(str::parse::<f64>);
            match (w.next(), w.next()) {
                (Some(Ok(b)), Some(Ok(a))) => Some((b, a)),
                _ => None,
            }
        })
        .collect())
}

/// Generate the files the rows of `opt` need in its data folder (those missing), with
/// the links of the multi-file rows; each failure as ((geometry, variant), reason),
/// also printed.
pub fn generate_inputs(opt: &RunOptions) -> Vec<((Geometry, u32), String)> {
    let mut problems: Vec<((Geometry, u32), String)> = Vec::new();
    let mut need: BTreeSet<(u8, u32)> = BTreeSet::new();
    for &(k, g) in &opt.rows {
        let gi = if g == Geometry::Ipcc { 0 } else { 1 };
        need.insert((gi, 0));
        if k.two_inputs() {
            need.insert((gi, 1));
        }
    }
    for (gi, variant) in need {
        let geo = if gi == 0 {
            Geometry::Ipcc
        } else {
            Geometry::Stl
        };
        if let Err(e) = gen_in_child(geo, variant, &opt.gen) {
            eprintln!("nco-bench: error: {e}");
            problems.push(((geo, variant), e));
        }
    }
    let max_files = opt.files.max(1);
    for geo in [Geometry::Ipcc, Geometry::Stl] {
        if opt.rows.iter().any(|&(k, g)| g == geo && k.multi_file())
            && !problems.iter().any(|((g, v), _)| *g == geo && *v == 0)
        {
            if let Err(e) = make_links(&opt.data_dir, geo, max_files) {
                eprintln!("nco-bench: error: {e:#}");
                problems.push(((geo, 0), format!("{e:#}")));
            }
        }
    }
    problems
}

/// Prepare inputs (generate missing files, links), run every row, and return the report.
pub fn run_all(opt: &RunOptions) -> Result<Report> {
    let mut opt = opt.clone();
    if let Err(e) = std::fs::create_dir_all(&opt.scratch) {
        let alt = std::env::temp_dir().join(format!("nco-bench-scratch.{}", std::process::id()));
        eprintln!(
            "nco-bench: warning: cannot create the scratch folder {} ({e}); using {}",
            opt.scratch.display(),
            alt.display()
        );
        std::fs::create_dir_all(&alt)
            .with_context(|| format!("cannot create {}", alt.display()))?;
        opt.scratch = alt;
    }
    let opt = &opt;
    let src = match &opt.url {
        Some(u) => Source::Url(u.clone()),
        None => Source::Dir(opt.data_dir.clone()),
    };
    // Generate what the chosen rows need, once per file; remember failures per file.
    let problems = if opt.url.is_none() {
        generate_inputs(opt)
    } else {
        Vec::new()
    };
    // Warm runs read inputs cached as a read from disk leaves them (cache::settle).
    let mut settled = String::new();
    if opt.url.is_none() && !opt.cold {
        let mut inputs = Vec::new();
        for &(kind, geo) in &opt.rows {
            inputs.extend(Plan::new(kind, geo, opt.files, opt.gen.scale, &src).inputs);
        }
        let (mut reread, mut fracs) = (0, Vec::new());
        match settle_in_child(&real_files(&inputs)) {
            Ok(states) => {
                for (before, after) in states.into_iter().flatten() {
                    reread += usize::from(before < 0.5);
                    fracs.push(after);
                }
            }
            Err(e) => eprintln!("nco-bench: warning: {e}"),
        }
        if !fracs.is_empty() {
            let lo = fracs.iter().copied().fold(1.0, f64::min);
            settled = format!(
                " (inputs in 2 MiB page-cache folios: {:.0}% or more; {reread} of {} re-read from disk first)",
                lo * 100.0,
                fracs.len()
            );
        }
    }
    let launch = Launch {
        pin_cpu: opt.pin_cpu,
    };
    trim_heap();
    let baseline = proc::run(&["true".to_string()], None, &launch).map_or(0, |m| m.max_rss);
    let nco_version = if opt.with_nco {
        match find_program(&["ncks"], opt.nco_dir.as_deref(), &opt.bin_dir) {
            Some(p) => first_line_of(&[&p.to_string_lossy(), "--version"]),
            None => "NCO not found".into(),
        }
    } else {
        "NCO not run".into()
    };
    let cdo_version = if opt.with_cdo {
        match find_program(&["cdo"], None, &opt.bin_dir) {
            Some(p) => first_line_of(&[&p.to_string_lossy(), "--version"]),
            None => "CDO not found".into(),
        }
    } else {
        "CDO not run".into()
    };
    let info = RunInfo {
        date: utc_now(),
        host: host_line(),
        load_start: loadavg(),
        load_end: String::new(),
        cpus: cache::cpus_allowed(),
        cache: if opt.url.is_some() {
            "remote (OPeNDAP)".into()
        } else if opt.cold {
            "cold (inputs evicted with posix_fadvise DONTNEED before each run; guest page cache only)".into()
        } else {
            format!("warm{settled}")
        },
        threads: opt.threads,
        pin_cpu: opt.pin_cpu,
        repeats: opt.repeats,
        cdo_repeats: opt.cdo_repeats,
        files: opt.files,
        scale: opt.gen.scale,
        source: match &src {
            Source::Dir(d) => d.display().to_string(),
            Source::Url(u) => u.clone(),
        },
        nco_version,
        cdo_version,
        baseline_rss: baseline,
        bin_dir: opt.bin_dir.display().to_string(),
    };
    let mut rows = Vec::new();
    for &(kind, geo) in &opt.rows {
        let plan = Plan::new(kind, geo, opt.files, opt.gen.scale, &src);
        let problem = problems
            .iter()
            .find(|((g, v), _)| *g == geo && (*v == 0 || kind.two_inputs()))
            .map(|(_, e)| e.as_str());
        let t0 = Instant::now();
        eprintln!(
            "nco-bench: row {} {} on {} ...",
            kind.id(),
            kind.title(opt.files),
            geo.stem()
        );
        let row = run_row(&plan, opt, &launch, problem);
        let fmt = |t: &ToolRuns| match t.wall() {
            Some(w) => format!("{w:.2} s"),
            None => format!("{:?}", t.state).to_lowercase(),
        };
        eprintln!(
            "nco-bench: row {}: nco-rs {}, NCO {}, CDO {}, check {:?} ({:.0} s)",
            row.id,
            fmt(&row.ours),
            fmt(&row.nco),
            fmt(&row.cdo),
            row.check,
            t0.elapsed().as_secs_f64()
        );
        rows.push(row);
    }
    let mut info = info;
    info.load_end = loadavg();
    Ok(Report { info, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_compare_block_by_block() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&a, &big).unwrap();
        std::fs::write(&b, &big).unwrap();
        let mut other = big.clone();
        other[2_500_000] ^= 1;
        std::fs::write(&c, &other).unwrap();
        assert_eq!(same_bytes(&a, &b).unwrap(), None);
        assert_eq!(same_bytes(&a, &c).unwrap(), Some((3_000_000, 3_000_000)));
        std::fs::write(&c, &big[..10]).unwrap();
        assert_eq!(same_bytes(&a, &c).unwrap(), Some((3_000_000, 10)));
    }

    #[test]
    fn sides_alternate_and_cdo_is_last() {
        let two = [(Tool::Ours, false), (Tool::Nco, false), (Tool::Cdo, false)];
        assert_eq!(run_order(&two, 0), vec![0, 1, 2]);
        assert_eq!(run_order(&two, 1), vec![1, 0, 2]);
        // row 5c: sides made as (separate, list, NCO)
        let three = [(Tool::Ours, true), (Tool::Ours, false), (Tool::Nco, false)];
        assert_eq!(run_order(&three, 0), vec![1, 2, 0]);
        assert_eq!(run_order(&three, 1), vec![0, 2, 1]);
        assert_eq!(run_order(&three, 2), vec![1, 2, 0]);
        assert_eq!(run_order(&[(Tool::Nco, false)], 1), vec![0]);
    }

    #[test]
    fn list_note_quotes_the_targets() {
        let n = list_targets_note(Some(31.26), Some(9.5));
        assert!(
            n.contains(">= 20x faster than 50 separate NCO ncrcat runs: 31.3x, met"),
            "{n}"
        );
        assert!(
            n.contains(">= 10x faster than 50 separate runs of our ncrcat: 9.5x, NOT met"),
            "{n}"
        );
        let n = list_targets_note(None, Some(10.0));
        assert!(n.contains("NCO ncrcat runs: not measured"), "{n}");
        assert!(n.contains("10.0x, met"), "{n}");
    }
}
