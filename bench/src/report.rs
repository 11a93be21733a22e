//! Results and their renderings: the terminal table, CSV, JSON and an SVG chart of the
//! speed-ups against NCO.

use std::fmt::Write as _;

use crate::proc::Measure;

/// What happened to one tool on one row.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// All runs exited 0.
    Ok,
    /// Our operator is not built (no binary).
    NotBuilt,
    /// The reference tool is not installed.
    NotInstalled,
    /// The tool has no equivalent of this operation.
    NoEquivalent,
    /// Not run (skipped by option).
    Skipped,
    /// A run failed or crashed; detail says how.
    Failed,
}

/// One tool's runs on one row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ToolRuns {
    /// State.
    pub state: State,
    /// Program used, failure detail or why not run.
    pub detail: String,
    /// Every measured run (for multi-call rows, each is the sum over the calls).
    pub runs: Vec<Measure>,
    /// Element-wise median of the runs.
    pub median: Option<Measure>,
}

impl ToolRuns {
    /// A tool that did not run.
    pub fn absent(state: State, detail: impl Into<String>) -> ToolRuns {
        ToolRuns {
            state,
            detail: detail.into(),
            runs: Vec::new(),
            median: None,
        }
    }

    /// Median wall seconds when the tool ran successfully.
    pub fn wall(&self) -> Option<f64> {
        (self.state == State::Ok)
            .then(|| self.median.as_ref().map(|m| m.wall))
            .flatten()
    }

    /// The median wall time in seconds ("1.23"), or what happened instead.
    pub fn cell(&self) -> String {
        match self.state {
            State::Ok => self
                .median
                .as_ref()
                .map_or("-".into(), |m| format!("{:.2}", m.wall)),
            State::NotBuilt => "not built".into(),
            State::NotInstalled => "not installed".into(),
            State::NoEquivalent => "-".into(),
            State::Skipped => "skipped".into(),
            State::Failed => "FAILED".into(),
        }
    }
}

/// Outcome of comparing our output with NCO's.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Equal within tolerance.
    Equal,
    /// Different: a wrong answer.
    Different,
    /// Could not compare (one side missing or failed).
    NotCompared,
}

/// One row of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// "1".."8" (5a/5b).
    pub id: String,
    /// Description.
    pub title: String,
    /// Operator name.
    pub operator: String,
    /// Geometry file stem.
    pub geometry: String,
    /// Number of input files.
    pub inputs: usize,
    /// Our command line (the NCO one differs only in the program).
    pub command: String,
    /// nco-rs.
    pub ours: ToolRuns,
    /// NCO.
    pub nco: ToolRuns,
    /// CDO.
    pub cdo: ToolRuns,
    /// NCO wall / our wall (>1: we are faster).
    pub speedup_vs_nco: Option<f64>,
    /// CDO wall / our wall.
    pub speedup_vs_cdo: Option<f64>,
    /// NCO CPU (user+sys) / our CPU: steadier than wall on a loaded machine.
    pub cpu_speedup_vs_nco: Option<f64>,
    /// Check of our output against NCO's.
    pub check: Check,
    /// First differences or the reason for not comparing.
    pub check_detail: String,
    /// Relative tolerance used.
    pub rtol: f64,
    /// Absolute tolerance used (floating point).
    pub atol: f64,
    /// Seconds to read the inputs and write an output of NCO's output size (None: n/a).
    pub io_floor: Option<f64>,
    /// Row 5c: our operator in the 50 separate calls NCO needs (`ours` is then the one
    /// list-mode call); `None` on the other rows.
    pub ours_separate: Option<ToolRuns>,
    /// Row 5c: our separate calls' wall / our list-mode wall (the gain of list mode).
    pub speedup_vs_ours_separate: Option<f64>,
    /// Row 5c: the same for CPU (user+sys).
    pub cpu_speedup_vs_ours_separate: Option<f64>,
    /// A note printed under the table (row 5c: the list-mode targets and the ratios).
    pub note: Option<String>,
    /// netCDF-4 rows (`run --nc4`): our operator with every read and write through
    /// libnetcdf (`--no-mmap`), timed in the same repeats; `None` on the other rows.
    pub ours_libnetcdf: Option<ToolRuns>,
    /// Our libnetcdf-path wall / our wall (>1: the chunk engine is faster).
    pub engine_vs_libnetcdf: Option<f64>,
    /// The same for CPU (user+sys).
    pub cpu_engine_vs_libnetcdf: Option<f64>,
}

impl Row {
    /// True when this row makes the run fail: a failure, a crash, a wrong answer.
    pub fn failed(&self) -> bool {
        self.ours.state == State::Failed
            || self.nco.state == State::Failed
            || self
                .ours_separate
                .as_ref()
                .is_some_and(|t| t.state == State::Failed)
            || self
                .ours_libnetcdf
                .as_ref()
                .is_some_and(|t| t.state == State::Failed)
            || self.check == Check::Different
    }

    /// True when a binary (ours or NCO) was missing.
    pub fn missing(&self) -> bool {
        matches!(self.ours.state, State::NotBuilt) || matches!(self.nco.state, State::NotInstalled)
    }
}

/// Settings that qualify every number.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunInfo {
    /// Start time (UTC, RFC 3339-ish).
    pub date: String,
    /// Host name and kernel.
    pub host: String,
    /// Load averages (1, 5, 15 min) when the run started and ended: other work on the
    /// machine inflates wall times (CPU times much less).
    pub load_start: String,
    /// Load averages at the end.
    pub load_end: String,
    /// CPUs available.
    pub cpus: usize,
    /// Warm or cold page cache, with the method.
    pub cache: String,
    /// Threads passed to the tools (`None`: each tool's default).
    pub threads: Option<usize>,
    /// CPU pinning.
    pub pin_cpu: Option<usize>,
    /// Repeats per tool per row.
    pub repeats: usize,
    /// Repeats for CDO.
    pub cdo_repeats: usize,
    /// Files for multi-file rows.
    pub files: usize,
    /// Size factor of the generated files.
    pub scale: f64,
    /// Data folder or URL.
    pub source: String,
    /// NCO version line.
    pub nco_version: String,
    /// CDO version line.
    pub cdo_version: String,
    /// Peak RSS of `/bin/true` spawned the same way (the floor of the memory column).
    pub baseline_rss: u64,
    /// Our binaries' folder.
    pub bin_dir: String,
}

/// The whole result.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// Settings.
    pub info: RunInfo,
    /// Rows in wishlist order.
    pub rows: Vec<Row>,
}

fn mb(b: u64) -> String {
    format!("{:.0}", b as f64 / 1e6)
}

fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |x| format!("{x:.2}x"))
}

fn check_cell(r: &Row) -> String {
    match r.check {
        Check::Equal if r.rtol == 0.0 => "equal (exact)".into(),
        Check::Equal => format!("equal (rtol {:.0e})", r.rtol),
        Check::Different => "WRONG ANSWER".into(),
        Check::NotCompared => "-".into(),
    }
}

/// Render the terminal table (plain text, aligned columns) with its header notes.
pub fn table(rep: &Report) -> String {
    let i = &rep.info;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "nco-bench: {} repeats per tool (median quoted; CDO {}), {} files for multi-file rows, scale {}, {} cache, threads {}, {}",
        i.repeats,
        i.cdo_repeats,
        i.files,
        i.scale,
        i.cache,
        i.threads.map_or("tool default".into(), |t| format!("-t {t}")),
        i.pin_cpu.map_or("not pinned".into(), |c| format!("pinned to CPU {c}")),
    );
    let _ = writeln!(
        s,
        "host {} ({} CPUs), {}; {}; {}",
        i.host, i.cpus, i.date, i.nco_version, i.cdo_version
    );
    let _ = writeln!(s, "load average at start {}, at end {} (other work inflates wall times; the CPU speed-up is steadier)", i.load_start, i.load_end);
    let _ = writeln!(
        s,
        "times are wall seconds; vs NCO = NCO wall / ours (>1 = nco-rs faster), cpu = the same for user+sys; RSS = peak resident MB of the child, mapped file pages included (floor {} MB: /bin/true)",
        mb(i.baseline_rss)
    );
    let header = [
        "#",
        "operation",
        "file",
        "ours s",
        "user",
        "sys",
        "RSS",
        "NCO s",
        "user",
        "sys",
        "RSS",
        "vs NCO",
        "cpu",
        "CDO s",
        "vs CDO",
        "I/O floor",
        "check",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in &rep.rows {
        let part = |t: &ToolRuns| -> [String; 4] {
            match (&t.state, &t.median) {
                (State::Ok, Some(m)) => [
                    format!("{:.2}", m.wall),
                    format!("{:.2}", m.user),
                    format!("{:.2}", m.sys),
                    mb(m.max_rss),
                ],
                _ => [t.cell(), String::new(), String::new(), String::new()],
            }
        };
        let [ow, ou, osy, orss] = part(&r.ours);
        let [nw, nu, ns, nrss] = part(&r.nco);
        rows.push(vec![
            r.id.clone(),
            r.title.clone(),
            r.geometry.clone(),
            ow,
            ou,
            osy,
            orss,
            nw,
            nu,
            ns,
            nrss,
            ratio(r.speedup_vs_nco),
            ratio(r.cpu_speedup_vs_nco),
            r.cdo.cell(),
            ratio(r.speedup_vs_cdo),
            r.io_floor.map_or("-".into(), |f| format!("{f:.2}")),
            check_cell(r),
        ]);
    }
    let ncol = header.len();
    let widths: Vec<usize> = (0..ncol)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (n, r) in rows.iter().enumerate() {
        let mut line = String::new();
        for c in 0..ncol {
            let w = widths[c];
            let cell = &r[c];
            if c == 1 || c == 2 || c == ncol - 1 {
                let _ = write!(line, "{cell:<w$}");
            } else {
                let _ = write!(line, "{cell:>w$}");
            }
            if c + 1 < ncol {
                line.push_str("  ");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
        if n == 0 {
            let _ = writeln!(
                s,
                "{}",
                "-".repeat(widths.iter().sum::<usize>() + 2 * (ncol - 1))
            );
        }
    }
    let notes: Vec<String> = rep
        .rows
        .iter()
        .flat_map(|r| {
            let mut v = Vec::new();
            if let Some(sep) = &r.ours_separate {
                let cpu = |t: &ToolRuns| {
                    t.wall()
                        .and(t.median.as_ref())
                        .map_or("-".to_string(), |m| format!("{:.2}", m.user + m.sys))
                };
                v.push(format!(
                    "row {}: nco-rs list mode (1 call) vs nco-rs in {} separate calls: {} s vs {} s wall, {} s vs {} s cpu: {} wall, {} cpu",
                    r.id,
                    crate::wishlist::STATIONS,
                    r.ours.cell(),
                    sep.cell(),
                    cpu(&r.ours),
                    cpu(sep),
                    ratio(r.speedup_vs_ours_separate),
                    ratio(r.cpu_speedup_vs_ours_separate),
                ));
            }
            if let Some(n) = &r.note {
                v.push(format!("row {}: {n}", r.id));
            }
            let sep = r.ours_separate.as_ref().map(|t| ("nco-rs (separate calls)", t));
            let lib = r.ours_libnetcdf.as_ref().map(|t| ("nco-rs --no-mmap", t));
            for (who, t) in [("nco-rs", &r.ours), ("NCO", &r.nco), ("CDO", &r.cdo)]
                .into_iter()
                .chain(sep)
                .chain(lib)
            {
                if matches!(
                    t.state,
                    State::Failed | State::NotBuilt | State::NotInstalled
                ) {
                    v.push(format!("row {}: {who} {}", r.id, t.detail));
                }
            }
            if r.check == Check::Different {
                v.push(format!(
                    "row {}: our output differs from NCO's: {}",
                    r.id,
                    r.check_detail.replace('\n', "; ")
                ));
            }
            v
        })
        .collect();
    for n in notes {
        let _ = writeln!(s, "{n}");
    }
    s
}

fn csv_field(x: &str) -> String {
    if x.contains([',', '"', '\n']) {
        format!("\"{}\"", x.replace('"', "\"\""))
    } else {
        x.to_string()
    }
}

/// CSV, one line per row with medians; empty fields where a tool did not run.
pub fn csv(rep: &Report) -> String {
    let mut s = String::from(
        "id,operation,operator,geometry,inputs,cache,threads,repeats,\
ours_state,ours_wall_s,ours_user_s,ours_sys_s,ours_maxrss_bytes,ours_inblock_bytes,\
nco_state,nco_wall_s,nco_user_s,nco_sys_s,nco_maxrss_bytes,nco_inblock_bytes,\
cdo_state,cdo_wall_s,speedup_vs_nco,cpu_speedup_vs_nco,speedup_vs_cdo,io_floor_s,check,rtol,atol,command,\
ours_separate_state,ours_separate_wall_s,ours_separate_user_s,ours_separate_sys_s,\
speedup_vs_ours_separate,cpu_speedup_vs_ours_separate\n",
    );
    let state = |t: &ToolRuns| {
        serde_json::to_value(&t.state)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    };
    let m = |t: &ToolRuns| -> [String; 5] {
        match (&t.state, &t.median) {
            (State::Ok, Some(m)) => [
                format!("{:.4}", m.wall),
                format!("{:.4}", m.user),
                format!("{:.4}", m.sys),
                m.max_rss.to_string(),
                m.in_bytes.to_string(),
            ],
            _ => Default::default(),
        }
    };
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.4}"));
    for r in &rep.rows {
        let o = m(&r.ours);
        let n = m(&r.nco);
        let (sep_state, sep) = match &r.ours_separate {
            Some(t) => (state(t), m(t)),
            None => (String::new(), Default::default()),
        };
        let check = serde_json::to_value(&r.check)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let fields = [
            r.id.clone(),
            r.title.clone(),
            r.operator.clone(),
            r.geometry.clone(),
            r.inputs.to_string(),
            rep.info.cache.clone(),
            rep.info.threads.map_or("default".into(), |t| t.to_string()),
            rep.info.repeats.to_string(),
            state(&r.ours),
            o[0].clone(),
            o[1].clone(),
            o[2].clone(),
            o[3].clone(),
            o[4].clone(),
            state(&r.nco),
            n[0].clone(),
            n[1].clone(),
            n[2].clone(),
            n[3].clone(),
            n[4].clone(),
            state(&r.cdo),
            opt(r.cdo.wall()),
            opt(r.speedup_vs_nco),
            opt(r.cpu_speedup_vs_nco),
            opt(r.speedup_vs_cdo),
            opt(r.io_floor),
            check,
            format!("{:e}", r.rtol),
            format!("{:e}", r.atol),
            r.command.clone(),
            sep_state,
            sep[0].clone(),
            sep[1].clone(),
            sep[2].clone(),
            opt(r.speedup_vs_ours_separate),
            opt(r.cpu_speedup_vs_ours_separate),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        s.push_str(&line.join(","));
        s.push('\n');
    }
    s
}

/// JSON of the whole report (settings, every run, medians, checks).
pub fn json(rep: &Report) -> String {
    serde_json::to_string_pretty(rep).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Width in pixels of `text` in the chart's sans-serif at `size` px, estimated on the
/// generous side (0.62 em a character; 0.68 em bold), so that text sized by it stays
/// inside the canvas whatever the renderer's font.
fn text_width(text: &str, size: f64, bold: bool) -> f64 {
    text.chars().count() as f64 * char_width(size, bold)
}

/// The estimated width of one character (see [`text_width`]).
fn char_width(size: f64, bold: bool) -> f64 {
    size * if bold { 0.68 } else { 0.62 }
}

/// `text` broken at spaces into lines of at most `width` pixels (a word longer than
/// that alone on its line, cut to fit).
fn wrap(text: &str, width: f64, size: f64, bold: bool) -> Vec<String> {
    let per_line = ((width / char_width(size, bold)) as usize).max(8);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        let word: String = word.chars().take(per_line).collect();
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > per_line {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A row title and its bracketed suffix (`"ncwa ... [netCDF-4 in, no filters]"` gives
/// `("ncwa ...", Some("netCDF-4 in, no filters"))`).
fn split_title(title: &str) -> (&str, Option<&str>) {
    match title.rfind(" [") {
        Some(k) if title.ends_with(']') => (&title[..k], Some(&title[k + 2..title.len() - 1])),
        _ => (title, None),
    }
}

/// SVG bar chart of the speed-ups per row, NCO's and CDO's side by side (two bars a
/// row, CDO's where it has the operation), on a log2 axis with 1× marked; rows without
/// a ratio say why. Every text is sized to stay inside the canvas (the title wraps, the
/// margins fit the longest label and the longest value; a test renders the chart and
/// checks it).
pub fn svg(rep: &Report) -> String {
    const FONT: f64 = 12.0;
    const TITLE: f64 = 15.0;
    const BAR: f64 = 13.0;
    const GAP: f64 = 10.0;
    let label = |r: &Row| format!("{} {} ({})", r.id, split_title(&r.title).0, r.geometry);
    // One chart per kind of input (the rows' bracketed title suffix: netCDF-4 inputs,
    // OPeNDAP...), in order of first appearance.
    let mut groups: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in &rep.rows {
        let kind = split_title(&r.title)
            .1
            .map_or_else(|| "inputs as generated".to_string(), str::to_string);
        match groups.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, rows)) => rows.push(r),
            None => groups.push((kind, vec![r])),
        }
    }
    let left = rep
        .rows
        .iter()
        .map(|r| text_width(&label(r), FONT, false))
        .fold(180.0, f64::max)
        + 20.0;
    // The value printed after each bar (and the reason of a row without one).
    let tag = |r: &Row| -> String {
        let Some(v) = r.speedup_vs_nco else {
            return match (&r.ours.state, &r.nco.state) {
                (State::NotBuilt, _) => "nco-rs operator not built".to_string(),
                (State::Failed, _) => "nco-rs FAILED".to_string(),
                (_, State::NotInstalled) => "NCO not installed".to_string(),
                (_, State::Failed) => "NCO failed".to_string(),
                _ => "no ratio".to_string(),
            };
        };
        let mut t = format!("{v:.2}x");
        if r.check == Check::Different {
            t.push_str(" WRONG ANSWER");
        }
        if let Some(g) = r.speedup_vs_ours_separate {
            t.push_str(&format!(
                " ({g:.1}x vs our {} calls)",
                crate::wishlist::STATIONS
            ));
        }
        t
    };
    let cdo_tag = |c: f64| format!("{c:.2}x vs CDO");
    let right = rep
        .rows
        .iter()
        .map(|r| {
            let cdo = r
                .speedup_vs_cdo
                .map_or(0.0, |c| text_width(&cdo_tag(c), FONT, false));
            text_width(&tag(r), FONT, false).max(cdo)
        })
        .fold(60.0, f64::max)
        + 16.0;
    let plot_w = 420.0;
    let width = (left + plot_w + right).ceil();
    let title = format!(
        "nco-rs speed-up over NCO and CDO (their wall time / nco-rs wall time, median of {}; {} cache)",
        rep.info.repeats, rep.info.cache
    );
    let title_lines = wrap(&title, width - 20.0, TITLE, true);
    let legend_y = 14.0 + title_lines.len() as f64 * (TITLE + 5.0) + 10.0;
    let row_h = 2.0 * BAR + GAP;
    // Each chart: its heading, its rows, its axis labels.
    let block_h = |rows: usize| 22.0 + rows.max(1) as f64 * row_h + 30.0;
    let height =
        (legend_y + 12.0 + groups.iter().map(|(_, r)| block_h(r.len())).sum::<f64>() + 8.0).ceil();
    let ratios: Vec<f64> = rep
        .rows
        .iter()
        .flat_map(|r| [r.speedup_vs_nco, r.speedup_vs_cdo])
        .flatten()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = ratios
        .iter()
        .copied()
        .fold(0.5f64, f64::min)
        .log2()
        .floor()
        .min(-1.0);
    let hi = ratios
        .iter()
        .copied()
        .fold(2.0f64, f64::max)
        .log2()
        .ceil()
        .max(1.0);
    let xpos = |r: f64| left + (r.log2().clamp(lo, hi) - lo) / (hi - lo) * plot_w;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="{FONT}">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (k, line) in title_lines.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="10" y="{:.1}" font-size="{TITLE}" font-weight="bold">{}</text>"#,
            14.0 + TITLE + k as f64 * (TITLE + 5.0) - 4.0,
            xml(line)
        );
    }
    let mut lx = 10.0;
    for (colour, what) in [
        ("#2e86c1", "vs NCO"),
        ("#e67e22", "vs NCO, slower"),
        ("#27ae60", "vs CDO"),
        ("#c0392b", "different answer"),
    ] {
        let _ = writeln!(
            s,
            r#"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{colour}"/>"#,
            legend_y - 10.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{legend_y:.1}">{what}</text>"#,
            lx + 16.0
        );
        lx += 16.0 + text_width(what, FONT, false) + 18.0;
    }
    let bar = |s: &mut String, y: f64, v: f64, colour: &str| -> f64 {
        let (x1, x2) = (xpos(1.0), xpos(v));
        let (x, w) = if x2 >= x1 {
            (x1, x2 - x1)
        } else {
            (x2, x1 - x2)
        };
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="{colour}"/>"#,
            w.max(1.0)
        );
        x + w.max(1.0)
    };
    let mut y0 = legend_y + 12.0;
    for (kind, rows) in &groups {
        let _ = writeln!(
            s,
            r#"<text x="10" y="{:.1}" font-size="13" font-weight="bold">{}</text>"#,
            y0 + 16.0,
            xml(kind)
        );
        let top = y0 + 22.0;
        let bottom = top + rows.len().max(1) as f64 * row_h;
        let mut e = lo as i32;
        while e <= hi as i32 {
            let x = xpos(2f64.powi(e));
            let label = if e >= 0 {
                format!("{}x", 1u64 << e)
            } else {
                format!("1/{}x", 1u64 << (-e))
            };
            let stroke = if e == 0 { "#000" } else { "#ccc" };
            let _ = writeln!(
                s,
                r#"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="{stroke}"/>"#
            );
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
                bottom + 16.0
            );
            e += 1;
        }
        for (i, r) in rows.iter().enumerate() {
            let y = top + i as f64 * row_h;
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                left - 8.0,
                y + BAR + 4.0,
                xml(&label(r))
            );
            match r.speedup_vs_nco {
                Some(v) => {
                    let colour = match (&r.check, v >= 1.0) {
                        (Check::Different, _) => "#c0392b",
                        (_, true) => "#2e86c1",
                        (_, false) => "#e67e22",
                    };
                    let end = bar(&mut s, y, v, colour);
                    let _ = writeln!(
                        s,
                        r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                        end.max(xpos(1.0)) + 4.0,
                        y + BAR - 2.0,
                        xml(&tag(r))
                    );
                }
                None => {
                    let _ = writeln!(
                        s,
                        r##"<text x="{:.1}" y="{:.1}" fill="#777">{}</text>"##,
                        xpos(1.0) + 4.0,
                        y + BAR - 2.0,
                        xml(&tag(r))
                    );
                }
            }
            if let Some(c) = r.speedup_vs_cdo.filter(|v| v.is_finite() && *v > 0.0) {
                let yc = y + BAR;
                let end = bar(&mut s, yc, c, "#27ae60");
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                    end.max(xpos(1.0)) + 4.0,
                    yc + BAR - 2.0,
                    cdo_tag(c)
                );
            }
        }
        y0 += block_h(rows.len());
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn m(wall: f64) -> Measure {
        Measure {
            wall,
            user: wall * 0.8,
            sys: 0.1,
            max_rss: 50_000_000,
            in_bytes: 0,
            out_bytes: 0,
            code: Some(0),
            signal: None,
            server_cpu: 0.0,
        }
    }

    fn ok(wall: f64) -> ToolRuns {
        ToolRuns {
            state: State::Ok,
            detail: "prog".into(),
            runs: vec![m(wall)],
            median: Some(m(wall)),
        }
    }

    pub(crate) fn sample() -> Report {
        let base = Row {
            id: "1".into(),
            title: "ncwa average all variables to scalars".into(),
            operator: "ncwa".into(),
            geometry: "ipcc_dly_T85".into(),
            inputs: 1,
            command: "ncwa -O in.nc out.nc".into(),
            ours: ok(2.0),
            nco: ok(8.0),
            cdo: ToolRuns::absent(State::NoEquivalent, "no CDO equivalent"),
            speedup_vs_nco: Some(4.0),
            speedup_vs_cdo: None,
            cpu_speedup_vs_nco: Some(3.0),
            check: Check::Equal,
            check_detail: String::new(),
            rtol: 1e-5,
            atol: 1e-6,
            io_floor: Some(0.5),
            ours_separate: None,
            speedup_vs_ours_separate: None,
            cpu_speedup_vs_ours_separate: None,
            note: None,
            ours_libnetcdf: None,
            engine_vs_libnetcdf: None,
            cpu_engine_vs_libnetcdf: None,
        };
        let mut r2 = base.clone();
        r2.id = "2".into();
        r2.title = "ncra time-average 4 files".into();
        r2.operator = "ncra".into();
        r2.ours = ToolRuns::absent(State::NotBuilt, "ncra not built (looked in /x)");
        r2.speedup_vs_nco = None;
        r2.check = Check::NotCompared;
        r2.command = "ncra -O a.nc, b.nc out.nc".into();
        let mut r3 = base.clone();
        r3.id = "4".into();
        r3.ours = ok(1.0);
        r3.speedup_vs_nco = Some(8.0);
        r3.check = Check::Different;
        r3.check_detail = "d4_00: values differ".into();
        r3.speedup_vs_cdo = Some(104.5);
        r3.title = "ncwa average all variables to scalars [netCDF-4 in, no filters]".into();
        let mut r5c = base.clone();
        r5c.id = "5c".into();
        r5c.title = "ncrcat --list 50 stations from 4 files (1 call vs 50)".into();
        r5c.operator = "ncrcat".into();
        r5c.ours = ok(0.5);
        r5c.nco = ok(12.5);
        r5c.ours_separate = Some(ok(6.0));
        r5c.speedup_vs_nco = Some(25.0);
        r5c.speedup_vs_ours_separate = Some(12.0);
        r5c.cpu_speedup_vs_ours_separate = Some(10.5);
        r5c.note = Some("list mode targets: met".into());
        r5c.io_floor = None;
        Report {
            info: RunInfo {
                date: "2026-01-01T00:00:00Z".into(),
                host: "test".into(),
                load_start: "0.10 0.20 0.30".into(),
                load_end: "0.40 0.50 0.60".into(),
                cpus: 2,
                cache: "warm".into(),
                threads: None,
                pin_cpu: None,
                repeats: 3,
                cdo_repeats: 1,
                files: 4,
                scale: 1.0,
                source: "data".into(),
                nco_version: "NCO 5.1.4".into(),
                cdo_version: "CDO 2.1.1".into(),
                baseline_rss: 1_500_000,
                bin_dir: "target/release".into(),
            },
            rows: vec![base, r2, r3, r5c],
        }
    }

    #[test]
    fn table_shows_numbers_ratios_and_plain_states() {
        let t = table(&sample());
        let lines: Vec<&str> = t.lines().collect();
        let row1 = lines
            .iter()
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap();
        assert!(row1.contains("2.00"), "{row1}");
        assert!(row1.contains("8.00"));
        assert!(row1.contains("4.00x"));
        assert!(row1.contains("50"), "RSS in MB: {row1}");
        assert!(row1.contains("equal (rtol 1e-5)"));
        let row2 = lines
            .iter()
            .find(|l| l.trim_start().starts_with("2 "))
            .unwrap();
        assert!(row2.contains("not built"), "{row2}");
        let row4 = lines
            .iter()
            .find(|l| l.trim_start().starts_with("4 "))
            .unwrap();
        assert!(row4.contains("WRONG ANSWER"));
        assert!(t.contains("row 2: nco-rs ncra not built"));
        assert!(t.contains("row 4: our output differs from NCO's: d4_00: values differ"));
        // columns aligned: every data line has the same position for "vs NCO"
        assert!(lines[0].contains("warm cache"));
        // row 5c: ours = list mode, NCO = its separate calls; our separate calls below
        let row5c = lines
            .iter()
            .find(|l| l.trim_start().starts_with("5c "))
            .unwrap();
        assert!(row5c.contains("0.50"), "{row5c}");
        assert!(row5c.contains("12.50"), "{row5c}");
        assert!(row5c.contains("25.00x"), "{row5c}");
        assert!(
            t.contains("row 5c: nco-rs list mode (1 call) vs nco-rs in 50 separate calls: 0.50 s vs 6.00 s wall, 0.50 s vs 4.90 s cpu: 12.00x wall, 10.50x cpu"),
            "{t}"
        );
        assert!(t.contains("row 5c: list mode targets: met"), "{t}");
        assert!(!t.contains("row 1: nco-rs list mode"));
    }

    #[test]
    fn csv_has_a_header_and_one_line_per_row_with_quoting() {
        let c = csv(&sample());
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        let header: Vec<&str> = lines[0].split(',').collect();
        assert_eq!(header[0], "id");
        assert_eq!(header.len(), 36);
        assert_eq!(header[35], "cpu_speedup_vs_ours_separate");
        assert!(lines[1].starts_with("1,ncwa average all variables to scalars,ncwa,ipcc_dly_T85,1,warm,default,3,ok,2.0000,1.6000,0.1000,50000000,0,ok,8.0000"));
        assert!(lines[1].contains(",4.0000,3.0000,"));
        assert!(lines[1].ends_with(",equal,1e-5,1e-6,ncwa -O in.nc out.nc,,,,,,"));
        assert!(
            lines[4].ends_with(",ok,6.0000,4.8000,0.1000,12.0000,10.5000"),
            "{}",
            lines[4]
        );
        assert_eq!(lines[4].split(',').count(), 36);
        assert!(lines[2].contains(",not_built,,,,,,ok,"));
        assert!(lines[2].ends_with("\"ncra -O a.nc, b.nc out.nc\",,,,,,"));
        assert!(lines[3].contains(",different,"));
    }

    #[test]
    fn json_round_trips_the_numbers() {
        let j: serde_json::Value = serde_json::from_str(&json(&sample())).unwrap();
        assert_eq!(j["info"]["repeats"], 3);
        assert_eq!(j["rows"][0]["ours"]["median"]["wall"], 2.0);
        assert_eq!(j["rows"][0]["speedup_vs_nco"], 4.0);
        assert_eq!(j["rows"][1]["ours"]["state"], "not_built");
        assert_eq!(j["rows"][2]["check"], "different");
        assert!(j["rows"][0]["ours_separate"].is_null());
        assert_eq!(j["rows"][3]["ours_separate"]["median"]["wall"], 6.0);
        assert_eq!(j["rows"][3]["speedup_vs_ours_separate"], 12.0);
        assert_eq!(j["rows"][3]["note"], "list mode targets: met");
    }

    #[test]
    fn svg_has_a_bar_per_ratio_and_reasons() {
        let s = svg(&sample());
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        // Background, four legend squares, three bars against NCO, one against CDO.
        assert_eq!(s.matches("<rect").count(), 1 + 4 + 3 + 1);
        assert!(s.contains("104.50x vs CDO"));
        // One chart per kind of input, the kind as its heading, not in the labels.
        assert!(s.contains(">inputs as generated</text>"));
        assert!(s.contains(">netCDF-4 in, no filters</text>"));
        assert!(s.contains(">4 ncwa average all variables to scalars (ipcc_dly_T85)</text>"));
        assert!(s.contains("4.00x"));
        assert!(s.contains("8.00x WRONG ANSWER"));
        assert!(s.contains("nco-rs operator not built"));
        assert!(s.contains("25.00x (12.0x vs our 50 calls)"));
    }

    /// The chart rendered (rsvg-convert, Debian's librsvg2-bin) on a canvas with a
    /// 40-pixel white margin around it: every pixel of the margin must stay white, so no
    /// text or bar leaves the chart's own canvas; and the chart must hold dark (text)
    /// pixels, so the check is not of an empty picture.
    #[test]
    fn rendered_chart_keeps_every_text_on_its_canvas() {
        let mut rep = sample();
        // The longest title and labels a real run has.
        rep.info.cache =
            "warm (inputs in 2 MiB page-cache folios: 62% or more; 0 of 3 re-read from disk first)"
                .into();
        let chart = svg(&rep);
        let head_end = chart.find('>').unwrap() + 1;
        let (w, h) = (attr(&chart, "width"), attr(&chart, "height"));
        const M: f64 = 40.0;
        let framed = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}"><rect width="100%" height="100%" fill="white"/><g transform="translate({M},{M})">{}</g></svg>"#,
            w + 2.0 * M,
            h + 2.0 * M,
            chart[..head_end].replace("<svg ", "<svg overflow=\"visible\" ") + &chart[head_end..]
        );
        let dir = tempfile::tempdir().unwrap();
        let (src, png_path) = (dir.path().join("c.svg"), dir.path().join("c.png"));
        std::fs::write(&src, framed).unwrap();
        let st = std::process::Command::new("rsvg-convert")
            .arg("-o")
            .arg(&png_path)
            .arg(&src)
            .status()
            .expect("run rsvg-convert (apt-get install librsvg2-bin)");
        assert!(st.success());
        let decoder = png::Decoder::new(std::fs::File::open(&png_path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        let (pw, ph) = (info.width as usize, info.height as usize);
        let mut outside = Vec::new();
        let mut dark = 0;
        for yy in 0..ph {
            for xx in 0..pw {
                let p = &buf[(yy * pw + xx) * channels..][..channels.min(3)];
                let white = p.iter().all(|&c| c >= 250);
                let inside = (xx as f64) >= M
                    && (xx as f64) < M + w
                    && (yy as f64) >= M
                    && (yy as f64) < M + h;
                if !white && !inside {
                    outside.push((xx, yy));
                }
                if p.iter().all(|&c| c < 80) {
                    dark += 1;
                }
            }
        }
        assert!(
            outside.is_empty(),
            "{} pixels outside the {w}x{h} canvas, first at {:?}",
            outside.len(),
            outside.first()
        );
        assert!(dark > 1000, "only {dark} dark pixels: nothing drawn?");
    }

    /// A numeric attribute of the root element.
    fn attr(svg: &str, name: &str) -> f64 {
        let key = format!("{name}=\"");
        let at = svg.find(&key).unwrap() + key.len();
        svg[at..].split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn a_failed_separate_side_fails_the_row() {
        let mut r = sample().rows[3].clone();
        assert!(!r.failed());
        r.ours_separate = Some(ToolRuns::absent(State::Failed, "exit 1 (ncrcat ...)"));
        assert!(r.failed());
        let rep = Report {
            info: sample().info,
            rows: vec![r],
        };
        assert!(table(&rep).contains("row 5c: nco-rs (separate calls) exit 1 (ncrcat ...)"));
    }
}
