//! The operator wishlist of NCO's benchmark (Zender & Mangalam; `nco_bm.pl --benchmark`),
//! as command lines for our operators, NCO's and, where it has an equivalent, CDO's.
//!
//! Each row runs the same arguments through our binary and NCO's; only the program
//! differs. CDO rows are equivalents (same data work, different metadata) and are timed
//! but not checked.

use std::path::{Path, PathBuf};

use crate::compare::Waiver;
use crate::gen::{dims_for, Geometry};

/// Which implementation runs a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Tool {
    /// nco-rs.
    Ours,
    /// NCO 5.1.4.
    Nco,
    /// CDO.
    Cdo,
}

impl Tool {
    /// Short label.
    pub fn label(self) -> &'static str {
        match self {
            Tool::Ours => "nco-rs",
            Tool::Nco => "NCO",
            Tool::Cdo => "CDO",
        }
    }
}

/// The operations of the wishlist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Kind {
    /// 1. ncwa averaging all variables to scalars.
    Ncwa,
    /// 2. ncra time-averaging N files.
    Ncra,
    /// 3. nces (ncea) averaging N files.
    Nces,
    /// 4. ncbo differencing two files.
    Ncbo,
    /// 5a. ncks extracting 50 station points (50 calls).
    Stations,
    /// 5b. ncks with many `-d` slabs in one call.
    MultiSlab,
    /// 5c. ncrcat `--list`: row 5a's stations cut from the multi-file inputs in one call
    /// (ours), against 50 separate calls (NCO's, and ours for the list-mode gain).
    StationsList,
    /// 6. ncap2 long algebraic operation.
    Ncap2,
    /// 6b. ncap2 with the language: a loop over levels into a RAM variable, `where`,
    /// methods (reductions over named dimensions, `reverse()`), hyperslabs.
    Ncap2Lang,
    /// 7. ncpdq packing the file.
    Pack,
    /// 8. ncpdq dimension-order reversal.
    Reverse,
    /// 9. ncks copying the file to netCDF-4 at deflate level 1 (`-4 -L 1`).
    Deflate,
    /// Row 10: ncks printing one large variable (CDL, then `--trd`) to a file, the
    /// text compared byte for byte.
    Print,
    /// Row 11: ncatted editing an attribute of the file in place, its header having
    /// room (a copy padded with `--hdr_pad`, made before each run, untimed).
    AttEdit,
    /// Row 11b: the same edit on a copy without room: the file is written anew.
    AttEditFull,
    /// Row 12: ncrename renaming a variable and a dimension in place, with room.
    Rename,
    /// Row 13: ncflint interpolating two files.
    Flint,
}

/// All kinds in wishlist order.
pub const ALL: [Kind; 17] = [
    Kind::Ncwa,
    Kind::Ncra,
    Kind::Nces,
    Kind::Ncbo,
    Kind::Stations,
    Kind::MultiSlab,
    Kind::StationsList,
    Kind::Ncap2,
    Kind::Ncap2Lang,
    Kind::Pack,
    Kind::Reverse,
    Kind::Deflate,
    Kind::Print,
    Kind::AttEdit,
    Kind::AttEditFull,
    Kind::Rename,
    Kind::Flint,
];

/// Header padding of the rows that edit a copy with room (11, 12), in bytes.
pub const EDIT_PAD: u64 = 65_536;

impl Kind {
    /// Row number ("1".."8", with "5a"/"5b"/"5c").
    pub fn id(self) -> &'static str {
        match self {
            Kind::Ncwa => "1",
            Kind::Ncra => "2",
            Kind::Nces => "3",
            Kind::Ncbo => "4",
            Kind::Stations => "5a",
            Kind::MultiSlab => "5b",
            Kind::StationsList => "5c",
            Kind::Ncap2 => "6",
            Kind::Ncap2Lang => "6b",
            Kind::Pack => "7",
            Kind::Reverse => "8",
            Kind::Deflate => "9",
            Kind::Print => "10",
            Kind::AttEdit => "11",
            Kind::AttEditFull => "11b",
            Kind::Rename => "12",
            Kind::Flint => "13",
        }
    }

    /// Operator binary name (NCO's primary name).
    pub fn operator(self) -> &'static str {
        match self {
            Kind::Ncwa => "ncwa",
            Kind::Ncra => "ncra",
            Kind::Nces => "nces",
            Kind::Ncbo => "ncbo",
            Kind::Stations | Kind::MultiSlab | Kind::Deflate | Kind::Print => "ncks",
            Kind::StationsList => "ncrcat",
            Kind::Ncap2 | Kind::Ncap2Lang => "ncap2",
            Kind::Pack | Kind::Reverse => "ncpdq",
            Kind::AttEdit | Kind::AttEditFull => "ncatted",
            Kind::Rename => "ncrename",
            Kind::Flint => "ncflint",
        }
    }

    /// Other names the same operator may be installed under.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Kind::Nces => &["ncea"],
            Kind::Ncbo => &["ncdiff"],
            _ => &[],
        }
    }

    /// Description for the table.
    pub fn title(self, files: usize) -> String {
        match self {
            Kind::Ncwa => "ncwa average all variables to scalars".into(),
            Kind::Ncra => format!("ncra time-average {files} files"),
            Kind::Nces => format!("nces ensemble-average {files} files"),
            Kind::Ncbo => "ncbo difference two files".into(),
            Kind::Stations => format!("ncks {STATIONS} station points ({STATIONS} calls)"),
            Kind::MultiSlab => "ncks multi-slab, one call, 16 -d slabs".into(),
            Kind::StationsList => {
                format!(
                    "ncrcat --list {STATIONS} stations from {files} files (1 call vs {STATIONS})"
                )
            }
            Kind::Ncap2 => "ncap2 long algebra (5 statements)".into(),
            Kind::Ncap2Lang => "ncap2 loop, RAM variable, where, methods".into(),
            Kind::Pack => "ncpdq pack the file (-P all_new)".into(),
            Kind::Reverse => "ncpdq reverse all dimensions".into(),
            Kind::Deflate => "ncks copy to netCDF-4, deflate 1 (-4 -L 1)".into(),
            Kind::Print => "ncks print a variable, CDL and --trd (2 calls)".into(),
            Kind::AttEdit => "ncatted one attribute in place, header with room".into(),
            Kind::AttEditFull => "ncatted one attribute in place, full header".into(),
            Kind::Rename => "ncrename a variable and a dimension in place".into(),
            Kind::Flint => "ncflint interpolate two files (-w 0.3,0.7)".into(),
        }
    }

    /// Parse `1`, `5a`, `5c`, `ncwa`, `stations`, `list`, ... .
    pub fn parse(s: &str) -> Option<Kind> {
        ALL.iter().copied().find(|k| {
            k.id() == s
                || match k {
                    Kind::Stations => s == "stations" || s == "5",
                    Kind::MultiSlab => s == "multislab" || s == "slabs",
                    Kind::StationsList => s == "list" || s == "stations-list" || s == "ncrcat",
                    Kind::Pack => s == "pack",
                    Kind::Reverse => s == "reverse" || s == "rev",
                    Kind::Deflate => s == "deflate" || s == "L1",
                    Kind::Print => s == "print" || s == "cdl",
                    Kind::Ncap2Lang => s == "ncap2-lang" || s == "lang",
                    Kind::Nces => s == "nces" || s == "ncea",
                    Kind::Ncbo => s == "ncbo" || s == "ncdiff",
                    Kind::AttEditFull => s == "ncatted-full",
                    _ => s == k.operator(),
                }
        })
    }

    /// Geometry NCO's own benchmark uses for this operation.
    pub fn natural_geometry(self) -> Geometry {
        match self {
            Kind::Nces => Geometry::Stl,
            _ => Geometry::Ipcc,
        }
    }

    /// Whether the operation makes sense on `geo` (ncra and ncrcat need a record
    /// dimension).
    pub fn applies_to(self, geo: Geometry) -> bool {
        !(matches!(
            self,
            Kind::Ncra
                | Kind::StationsList
                | Kind::Ncap2Lang
                | Kind::AttEdit
                | Kind::AttEditFull
                | Kind::Rename
        ) && geo == Geometry::Stl)
    }

    /// Whether an I/O floor (read all inputs + write the output) is meaningful.
    pub fn has_io_floor(self) -> bool {
        !matches!(
            self,
            Kind::Stations
                | Kind::MultiSlab
                | Kind::StationsList
                | Kind::Print
                | Kind::AttEdit
                | Kind::Rename
        )
    }

    /// Whether the row reads two files (the main one and its `_b` variant).
    pub fn two_inputs(self) -> bool {
        matches!(self, Kind::Ncbo | Kind::Flint)
    }

    /// The in-place rows: each run edits a fresh copy of the input (made untimed);
    /// `Some(true)` when the copy is padded (its header has room), `Some(false)` for
    /// a plain copy. Local inputs only.
    pub fn in_place(self) -> Option<bool> {
        match self {
            Kind::AttEdit | Kind::Rename => Some(true),
            Kind::AttEditFull => Some(false),
            _ => None,
        }
    }

    /// Whether the outputs are text (stdout), compared byte for byte instead of as
    /// netCDF files.
    pub fn text_output(self) -> bool {
        self == Kind::Print
    }

    /// Whether the row reads the `<stem>_NN.nc` links of the multi-file rows.
    pub fn multi_file(self) -> bool {
        matches!(self, Kind::Ncra | Kind::Nces | Kind::StationsList)
    }
}

/// Number of station points of rows 5a and 5c.
pub const STATIONS: usize = 50;

/// Row 5c outputs compared with NCO's (spread over the list: first, middle, last).
pub const LIST_CHECKED: usize = 3;

/// The targets of row 5c: list mode at least this much faster (wall) than 50
/// separate NCO ncrcat runs ...
pub const LIST_TARGET_VS_NCO: f64 = 20.0;
/// ... and than 50 separate runs of our own ncrcat.
pub const LIST_TARGET_VS_OURS: f64 = 10.0;

/// `k` indices spread evenly over `0..n` (first and last included), all of them when
/// `k >= n`.
pub fn spread(n: usize, k: usize) -> Vec<usize> {
    if k >= n {
        return (0..n).collect();
    }
    match k {
        0 => Vec::new(),
        1 => vec![0],
        _ => (0..k).map(|i| i * (n - 1) / (k - 1)).collect(),
    }
}

/// One word of a station list line: quoted when it holds blanks or quotes. A `#`
/// (comment) or both kinds of quote cannot be written.
pub fn list_word(w: &str) -> Result<String, String> {
    if w.contains('#') {
        return Err(format!(
            "'{w}' holds '#', which starts a comment in a station list"
        ));
    }
    let plain = !w.is_empty()
        && !w
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '"');
    if plain {
        Ok(w.to_string())
    } else if !w.contains('"') {
        Ok(format!("\"{w}\""))
    } else if !w.contains('\'') {
        Ok(format!("'{w}'"))
    } else {
        Err(format!("'{w}' holds both kinds of quote"))
    }
}

/// Where inputs come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// Local folder holding the generated files (and the `_NN` links).
    Dir(PathBuf),
    /// OPeNDAP base URL (no eviction, no generation).
    Url(String),
}

impl Source {
    /// Path or URL of `name`.
    pub fn locate(&self, name: &str) -> String {
        match self {
            Source::Dir(d) => d.join(name).to_string_lossy().into_owned(),
            Source::Url(u) => format!("{}/{}", u.trim_end_matches('/'), name),
        }
    }
}

/// A concrete row: operation on a geometry with its inputs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Operation.
    pub kind: Kind,
    /// Geometry.
    pub geo: Geometry,
    /// Multi-file count.
    pub files: usize,
    /// Grid (lat, lon) of the geometry at the chosen scale.
    pub grid: (usize, usize),
    /// Input paths or URLs, as passed to the operator.
    pub inputs: Vec<String>,
}

/// Names of the `n` multi-file inputs of `geo` (`<stem>_00.nc`...).
pub fn member_names(geo: Geometry, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("{}_{i:02}.nc", geo.stem()))
        .collect()
}

impl Plan {
    /// Build the row for `kind` on `geo`.
    pub fn new(kind: Kind, geo: Geometry, files: usize, scale: f64, src: &Source) -> Plan {
        let (_, _, nlat, nlon) = dims_for(geo, scale);
        let main = crate::gen::file_name(geo, 0);
        let inputs = match kind {
            // Local: links `<stem>_NN.nc` (distinct names, as NCO's benchmark); remote:
            // the same URL `files` times.
            Kind::Ncra | Kind::Nces | Kind::StationsList => match src {
                Source::Dir(_) => member_names(geo, files)
                    .iter()
                    .map(|n| src.locate(n))
                    .collect(),
                Source::Url(_) => vec![src.locate(&main); files],
            },
            Kind::Ncbo | Kind::Flint => vec![
                src.locate(&main),
                src.locate(&crate::gen::file_name(geo, 1)),
            ],
            _ => vec![src.locate(&main)],
        };
        Plan {
            kind,
            geo,
            files,
            grid: (nlat, nlon),
            inputs,
        }
    }

    /// The 50 station points `(lat index, lon index)`, deterministic.
    pub fn stations(&self) -> Vec<(usize, usize)> {
        let (nlat, nlon) = self.grid;
        let mut s: u64 = 0x2545_F491_4F6C_DD1D;
        (0..STATIONS)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let y = ((s >> 33) as usize) % nlat;
                let x = ((s >> 13) as usize) % nlon;
                (y, x)
            })
            .collect()
    }

    /// The station list of row 5c (many-files form): one line `-d lat,Y -d lon,X out_k`
    /// per station of [`Plan::stations`], `outs[k]` being station k's output.
    pub fn station_list(&self, outs: &[PathBuf]) -> Result<String, String> {
        let mut text = format!(
            "# nco-bench row 5c: {} stations, one output each\n",
            outs.len()
        );
        for ((y, x), o) in self.stations().into_iter().zip(outs) {
            text.push_str(&format!(
                "-d lat,{y} -d lon,{x} {}\n",
                list_word(&o.to_string_lossy())?
            ));
        }
        Ok(text)
    }

    /// Where row 5c's station list goes, beside the outputs with prefix `out`.
    pub fn list_file(out: &Path) -> PathBuf {
        PathBuf::from(format!("{}_stations.txt", out.display()))
    }

    /// Output files `<out>_00.nc` ... of the station rows.
    fn station_outputs(out: &Path) -> Vec<PathBuf> {
        (0..STATIONS)
            .map(|i| PathBuf::from(format!("{}_{i:02}.nc", out.display())))
            .collect()
    }

    /// The separate calls of the station rows, one per station: `prog -O [-t N] -d
    /// lat,Y -d lon,X <inputs> out_k` (row 5a: ncks on one file; row 5c: ncrcat on the
    /// multi-file inputs, for NCO and for our own separate-call baseline).
    pub fn separate_station_calls(
        &self,
        prog: &str,
        threads: Option<usize>,
        out: &Path,
    ) -> (Vec<Vec<String>>, Vec<PathBuf>) {
        let outs = Self::station_outputs(out);
        let cmds = self
            .stations()
            .into_iter()
            .zip(&outs)
            .map(|((y, x), o)| {
                let mut a = vec![prog.to_string(), "-O".to_string()];
                if let Some(t) = threads {
                    a.push("-t".into());
                    a.push(t.to_string());
                }
                a.extend([
                    "-d".to_string(),
                    format!("lat,{y}"),
                    "-d".to_string(),
                    format!("lon,{x}"),
                ]);
                a.extend(self.inputs.iter().cloned());
                a.push(o.to_string_lossy().into_owned());
                a
            })
            .collect();
        (cmds, outs)
    }

    /// Row 10's calls: `prog -H -C -v VAR in` (CDL) and the same with `--trd`, each
    /// with its standard output sent to `<out>_cdl.txt` / `<out>_trd.txt` by a shell
    /// that execs the program (the measured process is the program itself). VAR is the
    /// first 4-D variable (IPCC geometry: 2.1 million floats at the default scale) or
    /// the first 2-D one (STL).
    pub fn print_calls(&self, prog: &str, out: &Path) -> (Vec<Vec<String>>, Vec<PathBuf>) {
        let var = match self.geo {
            Geometry::Ipcc => "d4_00",
            Geometry::Stl => "d2_00",
        };
        let mut cmds = Vec::new();
        let mut outs = Vec::new();
        for (style, extra) in [("cdl", None), ("trd", Some("--trd"))] {
            let o = PathBuf::from(format!("{}_{style}.txt", out.display()));
            let mut a: Vec<String> = ["sh", "-c", "out=$1; shift; exec \"$@\" > \"$out\"", "sh"]
                .iter()
                .map(|x| x.to_string())
                .collect();
            a.push(o.to_string_lossy().into_owned());
            a.push(prog.to_string());
            a.extend(extra.map(String::from));
            a.extend(["-H", "-C", "-v", var].map(String::from));
            a.push(self.inputs[0].clone());
            cmds.push(a);
            outs.push(o);
        }
        (cmds, outs)
    }

    /// Indices of the outputs compared with NCO's: all of them, but only
    /// [`LIST_CHECKED`] spread over the list for row 5c.
    pub fn checked_outputs(&self, n: usize) -> Vec<usize> {
        match self.kind {
            Kind::StationsList => spread(n, LIST_CHECKED),
            _ => (0..n).collect(),
        }
    }

    /// The `-d` arguments of the multi-slab row: 8 disjoint ascending slabs on each of
    /// lat and lon, each about 1/32 of the axis.
    pub fn multislab_args(&self) -> Vec<String> {
        let (nlat, nlon) = self.grid;
        let mut a = Vec::new();
        for (name, n) in [("lat", nlat), ("lon", nlon)] {
            let w = (n / 32).max(1);
            let mut last_end: Option<usize> = None;
            for i in 0..8 {
                let start = (i * n / 8).max(last_end.map_or(0, |e| e + 1));
                if start >= n {
                    break;
                }
                let end = (start + w - 1).min(n - 1);
                a.push("-d".to_string());
                a.push(format!("{name},{start},{end}"));
                last_end = Some(end);
            }
        }
        a
    }

    /// The ncap2 script (several statements over the highest-rank variables).
    pub fn ncap2_script(&self) -> String {
        let v = |i: usize| match self.geo {
            Geometry::Ipcc => format!("d4_{i:02}"),
            Geometry::Stl => format!("d2_{:02}", i % 8),
        };
        format!(
            "a1={}*{}+{};a2=({}-{})/{};a3=sqrt({}*{}+{}*{});a4={}*{}*{}-{}/{};a5=(a1+a2)*a3-a4;",
            v(0),
            v(1),
            v(2),
            v(3),
            v(4),
            v(5),
            v(6),
            v(6),
            v(7),
            v(7),
            v(8),
            v(9),
            v(10),
            v(11),
            v(12)
        )
    }

    /// The ncap2 script of row 6b, from the user guide's examples over the 4-D
    /// variables: the vertical mean by a loop over levels into a RAM accumulator
    /// ("Loops", "RAM variables"), a 0/1 mask with `where`/`elsewhere` and its mean
    /// over `$lev`, the range over `$time` by methods, a reversed hyperslab.
    pub fn ncap2_lang_script(&self) -> String {
        "*sz=$lev.size;*acc[time,lat,lon]=0.0f;for(*k=0;k<sz;k++) acc+=d4_00(:,k,:,:);\
         vmean=acc/sz;msk=d4_01;where(msk > d4_01.avg()) msk=1.0f; elsewhere msk=0.0f;\
         frac=msk.avg($lev);rng=d4_02.max($time)-d4_02.min($time);\
         flip=d4_03(:,0,:,:).reverse($lat);"
            .to_string()
    }

    /// Command lines for `tool` run as program `prog`, writing under `out` (a path prefix);
    /// returns the commands (run in sequence) and the output files they produce.
    /// `None` when the tool has no equivalent.
    pub fn commands(
        &self,
        tool: Tool,
        prog: &str,
        threads: Option<usize>,
        out: &Path,
    ) -> Option<(Vec<Vec<String>>, Vec<PathBuf>)> {
        let s = |x: &str| x.to_string();
        let outp = |suffix: &str| PathBuf::from(format!("{}{suffix}.nc", out.display()));
        let o = outp("");
        let os = o.to_string_lossy().into_owned();
        let mut head = vec![s(prog)];
        if tool == Tool::Cdo {
            head.push(s("-O"));
            head.push(s("-s"));
            if let Some(t) = threads {
                head.push(s("-P"));
                head.push(t.to_string());
            }
        } else {
            head.push(s("-O"));
            // (ncatted's -t is its type match, and neither editor threads.)
            let threads = threads.filter(|_| self.kind.in_place().is_none());
            if let Some(t) = threads {
                head.push(s("-t"));
                head.push(t.to_string());
            }
        }
        let with = |mut h: Vec<String>, rest: Vec<String>| {
            h.extend(rest);
            h
        };
        let ins = self.inputs.clone();
        let one = |rest: Vec<String>| Some((vec![with(head.clone(), rest)], vec![o.clone()]));
        match (tool, self.kind) {
            // CDO's expr has no loops, RAM variables or where: no equivalent of 6b.
            (Tool::Cdo, Kind::MultiSlab | Kind::Reverse | Kind::StationsList | Kind::Ncap2Lang) => {
                None
            }
            // (CDO writes netCDF-4 with -f nc4 -z zip_1, without shuffle: not the same
            // file.)
            (Tool::Cdo, Kind::Deflate) => None,
            // (CDO prints with `cdo output`, in another layout: not the same text.)
            (Tool::Cdo, Kind::Print) => None,
            // CDO has no attribute or rename editor working in place; its `add` of two
            // `mulc` results is not one call.
            (Tool::Cdo, Kind::AttEdit | Kind::AttEditFull | Kind::Rename | Kind::Flint) => None,
            // CDO's counterpart of row 1: every field to one value per variable.
            (Tool::Cdo, Kind::Ncwa) => one(vec![
                s("fldmean"),
                s("-vertmean"),
                s("-timmean"),
                ins[0].clone(),
                os,
            ]),
            (Tool::Cdo, Kind::Ncra) => {
                // `cdo timmean -cat [ f1 f2 ... ] out`: the mean over all records of all files.
                let mut r = vec![s("timmean"), s("-cat"), s("[")];
                r.extend(ins);
                r.push(s("]"));
                r.push(os);
                one(r)
            }
            (Tool::Cdo, Kind::Nces) => {
                let mut r = vec![s("ensmean")];
                r.extend(ins);
                r.push(os);
                one(r)
            }
            (Tool::Cdo, Kind::Ncbo) => one(vec![s("sub"), ins[0].clone(), ins[1].clone(), os]),
            (Tool::Cdo, Kind::Ncap2) => one(vec![
                format!("expr,{}", self.ncap2_script()),
                ins[0].clone(),
                os,
            ]),
            (Tool::Cdo, Kind::Pack) => one(vec![s("pack"), ins[0].clone(), os]),
            (Tool::Cdo, Kind::Stations) => {
                let mut cmds = Vec::new();
                let mut outs = Vec::new();
                for (i, (y, x)) in self.stations().into_iter().enumerate() {
                    let oi = outp(&format!("_{i:02}"));
                    cmds.push(with(
                        head.clone(),
                        vec![
                            format!("selindexbox,{},{},{},{}", x + 1, x + 1, y + 1, y + 1),
                            ins[0].clone(),
                            oi.to_string_lossy().into_owned(),
                        ],
                    ));
                    outs.push(oi);
                }
                Some((cmds, outs))
            }
            (_, Kind::Ncwa) => one(vec![ins[0].clone(), os]),
            (_, Kind::Ncra | Kind::Nces) => {
                let mut r = ins;
                r.push(os);
                one(r)
            }
            (_, Kind::Ncbo) => one(vec![s("--op_typ=sbt"), ins[0].clone(), ins[1].clone(), os]),
            (_, Kind::Stations) | (Tool::Nco, Kind::StationsList) => {
                Some(self.separate_station_calls(prog, threads, out))
            }
            (_, Kind::StationsList) => {
                // Ours: one call; the list file (Plan::station_list) names the outputs.
                let mut r = vec![
                    s("--list"),
                    Self::list_file(out).to_string_lossy().into_owned(),
                ];
                r.extend(ins);
                Some((vec![with(head.clone(), r)], Self::station_outputs(out)))
            }
            (_, Kind::MultiSlab) => {
                let mut r = self.multislab_args();
                r.push(ins[0].clone());
                r.push(os);
                one(r)
            }
            (_, Kind::Ncap2) => one(vec![
                s("-v"),
                s("-s"),
                self.ncap2_script(),
                ins[0].clone(),
                os,
            ]),
            (_, Kind::Ncap2Lang) => one(vec![
                s("-v"),
                s("-s"),
                self.ncap2_lang_script(),
                ins[0].clone(),
                os,
            ]),
            (_, Kind::Pack) => one(vec![s("-P"), s("all_new"), ins[0].clone(), os]),
            (_, Kind::Deflate) => one(vec![s("-4"), s("-L"), s("1"), ins[0].clone(), os]),
            (_, Kind::Print) => Some(self.print_calls(prog, out)),
            // The in-place rows edit their output, a copy of the input made before
            // each run (run::run_row).
            (_, Kind::AttEdit | Kind::AttEditFull) => one(vec![
                s("-h"),
                s("-a"),
                s("long_name,d4_00,o,c,edited in place by nco-bench: a longer text"),
                os,
            ]),
            (_, Kind::Rename) => one(vec![
                s("-h"),
                s("-v"),
                s("d4_00,d4_00_renamed_by_nco_bench"),
                s("-d"),
                s("lat,latitude_renamed"),
                os,
            ]),
            (_, Kind::Flint) => one(vec![
                s("-w"),
                s("0.3,0.7"),
                ins[0].clone(),
                ins[1].clone(),
                os,
            ]),
            (_, Kind::Reverse) => {
                let spec = match self.geo {
                    Geometry::Ipcc => "-time,-lev,-lat,-lon",
                    Geometry::Stl => "-lat,-lon",
                };
                one(vec![s("-a"), s(spec), ins[0].clone(), os])
            }
        }
    }

    /// Attributes NCO writes and we leave out on purpose (root README, compatibility
    /// notes): NCO's ncrcat claims `cell_methods = "time: mean"` on concatenated
    /// variables; ours does not (concatenation is not a mean).
    pub fn waivers(&self) -> &'static [Waiver] {
        match self.kind {
            Kind::StationsList => &[Waiver {
                attr: "cell_methods",
                value: "time: mean",
            }],
            _ => &[],
        }
    }

    /// Tolerances for comparing our output with NCO's: (relative, absolute, integer
    /// absolute). Packing may round a short by one step.
    pub fn tolerance(&self) -> (f64, f64, f64) {
        match self.kind {
            Kind::Pack => (1e-5, 1e-6, 1.0),
            // Printed text: byte for byte.
            Kind::Print => (0.0, 0.0, 0.0),
            _ => (1e-5, 1e-6, 0.0),
        }
    }
}

/// Render an argv as a shell-like line for the report.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if a.chars().any(|c| " ;*()'\"$[]".contains(c)) {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(kind: Kind) -> Plan {
        Plan::new(kind, Geometry::Ipcc, 4, 1.0, &Source::Dir("/d".into()))
    }

    #[test]
    fn in_place_rows_edit_their_work_file_without_a_thread_count() {
        for k in [Kind::AttEdit, Kind::AttEditFull, Kind::Rename] {
            let p = plan(k);
            let (cmds, outs) = p
                .commands(Tool::Ours, k.operator(), Some(2), Path::new("/s/w"))
                .unwrap();
            assert_eq!(outs, [PathBuf::from("/s/w.nc")]);
            let c = &cmds[0];
            assert_eq!(c.last().map(String::as_str), Some("/s/w.nc"), "{c:?}");
            assert!(
                !c.iter().any(|a| a == "-t"),
                "ncatted's -t is a type match: {c:?}"
            );
            assert!(
                !c.iter().any(|a| a.starts_with("/d/")),
                "edits the copy only: {c:?}"
            );
            assert!(k.in_place().is_some() && !k.applies_to(Geometry::Stl));
            assert!(p.commands(Tool::Cdo, "cdo", None, Path::new("x")).is_none());
        }
        assert_eq!(Kind::AttEdit.in_place(), Some(true));
        assert_eq!(Kind::AttEditFull.in_place(), Some(false));
        let f = plan(Kind::Flint);
        assert_eq!(f.inputs.len(), 2);
        assert!(Kind::Flint.two_inputs() && Kind::Flint.in_place().is_none());
        assert_eq!(Kind::parse("11b"), Some(Kind::AttEditFull));
        assert_eq!(Kind::parse("ncflint"), Some(Kind::Flint));
    }

    #[test]
    fn parse_rows() {
        assert_eq!(Kind::parse("5a"), Some(Kind::Stations));
        assert_eq!(Kind::parse("ncea"), Some(Kind::Nces));
        assert_eq!(Kind::parse("8"), Some(Kind::Reverse));
        assert_eq!(Kind::parse("ncwa"), Some(Kind::Ncwa));
        assert_eq!(Kind::parse("nope"), None);
        assert_eq!(Kind::parse("5c"), Some(Kind::StationsList));
        assert_eq!(Kind::parse("list"), Some(Kind::StationsList));
        assert_eq!(Kind::parse("ncrcat"), Some(Kind::StationsList));
        assert_eq!(Kind::parse("5"), Some(Kind::Stations));
        assert_eq!(Kind::StationsList.id(), "5c");
        assert_eq!(Kind::StationsList.operator(), "ncrcat");
        assert!(Kind::StationsList.multi_file());
        assert!(!Kind::StationsList.has_io_floor());
        assert!(!Kind::StationsList.applies_to(Geometry::Stl));
        assert!(Kind::StationsList.applies_to(Geometry::Ipcc));
        // ids are unique, so --only 5c picks exactly one row
        let ids: std::collections::BTreeSet<&str> = ALL.iter().map(|k| k.id()).collect();
        assert_eq!(ids.len(), ALL.len());
    }

    #[test]
    fn list_row_one_call_for_us_fifty_for_nco_same_stations_as_5a() {
        let p = plan(Kind::StationsList);
        assert_eq!(p.inputs.len(), 4);
        assert_eq!(p.inputs[3], "/d/ipcc_dly_T85_03.nc");
        assert_eq!(p.stations(), plan(Kind::Stations).stations());
        let (ours, outs) = p
            .commands(Tool::Ours, "/b/ncrcat", None, Path::new("/s/o"))
            .unwrap();
        assert_eq!(ours.len(), 1);
        assert_eq!(
            ours[0],
            [
                "/b/ncrcat",
                "-O",
                "--list",
                "/s/o_stations.txt",
                "/d/ipcc_dly_T85_00.nc",
                "/d/ipcc_dly_T85_01.nc",
                "/d/ipcc_dly_T85_02.nc",
                "/d/ipcc_dly_T85_03.nc",
            ]
        );
        assert_eq!(outs.len(), 50);
        assert_eq!(outs[7], PathBuf::from("/s/o_07.nc"));
        let (nco, nouts) = p
            .commands(Tool::Nco, "ncrcat", Some(2), Path::new("/s/n"))
            .unwrap();
        assert_eq!(nco.len(), 50);
        assert_eq!(nouts.len(), 50);
        let (y, x) = p.stations()[7];
        assert_eq!(
            nco[7],
            [
                "ncrcat".to_string(),
                "-O".into(),
                "-t".into(),
                "2".into(),
                "-d".into(),
                format!("lat,{y}"),
                "-d".into(),
                format!("lon,{x}"),
                "/d/ipcc_dly_T85_00.nc".into(),
                "/d/ipcc_dly_T85_01.nc".into(),
                "/d/ipcc_dly_T85_02.nc".into(),
                "/d/ipcc_dly_T85_03.nc".into(),
                "/s/n_07.nc".into(),
            ]
        );
        // our separate baseline: the same calls with our program
        let (sep, _) = p.separate_station_calls("/b/ncrcat", Some(2), Path::new("/s/n"));
        assert_eq!(sep[7][1..], nco[7][1..]);
        assert!(p
            .commands(Tool::Cdo, "cdo", None, Path::new("/o"))
            .is_none());
        assert_eq!(p.checked_outputs(50), vec![0, 24, 49]);
        assert_eq!(plan(Kind::Stations).checked_outputs(50).len(), 50);
        assert_eq!(p.waivers()[0].attr, "cell_methods");
        assert!(plan(Kind::Ncra).waivers().is_empty());
    }

    #[test]
    fn station_list_file_parses_back_to_the_stations() {
        let p = plan(Kind::StationsList);
        let (_, outs) = p
            .commands(Tool::Ours, "ncrcat", None, Path::new("/scr atch/o"))
            .unwrap();
        assert_eq!(
            Plan::list_file(Path::new("/scr atch/o")),
            PathBuf::from("/scr atch/o_stations.txt")
        );
        let text = p.station_list(&outs).unwrap();
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 50);
        let (y, x) = p.stations()[0];
        let first = text.lines().nth(1).unwrap();
        assert_eq!(
            first,
            format!("-d lat,{y} -d lon,{x} \"/scr atch/o_00.nc\"")
        );
        // what ncrcat --list reads: 50 stations, lat and lon indices, our outputs
        let parsed = nco_core::stations::parse_list(&text).unwrap();
        assert_eq!(parsed.len(), 50);
        for (k, st) in parsed.iter().enumerate() {
            let (y, x) = p.stations()[k];
            assert_eq!(st.target, outs[k].to_string_lossy());
            assert_eq!(st.specs.len(), 2);
            assert_eq!(st.specs[0].text, format!("lat,{y}"));
            assert_eq!(st.specs[1].text, format!("lon,{x}"));
            assert!(st.vars.is_none());
        }
        assert!(p.station_list(&[PathBuf::from("/a#b/o.nc")]).is_err());
    }

    #[test]
    fn list_words_and_spread() {
        assert_eq!(list_word("/a/b.nc").unwrap(), "/a/b.nc");
        assert_eq!(list_word("/a b/c.nc").unwrap(), "\"/a b/c.nc\"");
        assert_eq!(list_word("it's").unwrap(), "\"it's\"");
        assert_eq!(list_word("say \"x\"").unwrap(), "'say \"x\"'");
        assert!(list_word("a'b\"c").is_err());
        assert!(list_word("a#b").is_err());
        assert_eq!(list_word("").unwrap(), "\"\"");
        assert_eq!(spread(50, 3), vec![0, 24, 49]);
        assert_eq!(spread(2, 3), vec![0, 1]);
        assert_eq!(spread(10, 1), vec![0]);
        assert_eq!(spread(10, 0), Vec::<usize>::new());
        assert_eq!(spread(10, 2), vec![0, 9]);
    }

    #[test]
    fn same_arguments_for_us_and_nco() {
        let p = plan(Kind::Ncra);
        let (a, _) = p
            .commands(Tool::Ours, "/bin/ncra", Some(2), Path::new("/s/o"))
            .unwrap();
        let (b, outs) = p
            .commands(Tool::Nco, "ncra", Some(2), Path::new("/s/o"))
            .unwrap();
        assert_eq!(a[0][1..], b[0][1..]);
        assert_eq!(
            b[0],
            [
                "ncra",
                "-O",
                "-t",
                "2",
                "/d/ipcc_dly_T85_00.nc",
                "/d/ipcc_dly_T85_01.nc",
                "/d/ipcc_dly_T85_02.nc",
                "/d/ipcc_dly_T85_03.nc",
                "/s/o.nc"
            ]
        );
        assert_eq!(outs, vec![PathBuf::from("/s/o.nc")]);
    }

    #[test]
    fn print_row_sends_each_style_to_its_own_file() {
        let p = plan(Kind::Print);
        assert_eq!(Kind::parse("10"), Some(Kind::Print));
        assert!(p
            .commands(Tool::Cdo, "cdo", None, Path::new("/s/o"))
            .is_none());
        let (cmds, outs) = p
            .commands(Tool::Nco, "ncks", None, Path::new("/s/o"))
            .expect("NCO runs row 10");
        assert_eq!(
            outs,
            vec![PathBuf::from("/s/o_cdl.txt"), PathBuf::from("/s/o_trd.txt")]
        );
        assert_eq!(cmds.len(), 2);
        assert_eq!(
            &cmds[0][..5],
            [
                "sh",
                "-c",
                "out=$1; shift; exec \"$@\" > \"$out\"",
                "sh",
                "/s/o_cdl.txt"
            ]
        );
        assert_eq!(
            &cmds[0][5..],
            ["ncks", "-H", "-C", "-v", "d4_00", "/d/ipcc_dly_T85.nc"]
        );
        assert_eq!(
            &cmds[1][5..],
            [
                "ncks",
                "--trd",
                "-H",
                "-C",
                "-v",
                "d4_00",
                "/d/ipcc_dly_T85.nc"
            ]
        );
        assert!(Kind::Print.text_output() && !Kind::Print.has_io_floor());
    }

    #[test]
    fn stations_are_fifty_distinct_calls_in_range() {
        let p = plan(Kind::Stations);
        let st = p.stations();
        assert_eq!(st.len(), 50);
        assert!(st.iter().all(|&(y, x)| y < 128 && x < 256));
        let (cmds, outs) = p
            .commands(Tool::Nco, "ncks", None, Path::new("/s/o"))
            .unwrap();
        assert_eq!(cmds.len(), 50);
        assert_eq!(outs.len(), 50);
        assert_eq!(cmds[0][3], format!("lat,{}", st[0].0));
    }

    #[test]
    fn multislab_is_ascending_and_disjoint() {
        let p = plan(Kind::MultiSlab);
        let a = p.multislab_args();
        assert_eq!(a.len(), 32);
        assert_eq!(a[1], "lat,0,3");
        assert_eq!(a[3], "lat,16,19");
        assert_eq!(a[17], "lon,0,7");
        // tiny grids still give valid, disjoint slabs
        let small = Plan::new(
            Kind::MultiSlab,
            Geometry::Ipcc,
            4,
            0.001,
            &Source::Dir("/d".into()),
        );
        let s = small.multislab_args();
        let lat: Vec<&String> = s.iter().filter(|x| x.starts_with("lat,")).collect();
        assert_eq!(lat.len(), 4); // lat = 4 rows: slabs 0, 1, 2, 3
        assert_eq!(lat[3], "lat,3,3");
    }

    #[test]
    fn ncap2_script_and_cdo_equivalents() {
        let p = plan(Kind::Ncap2);
        let sc = p.ncap2_script();
        assert!(sc.starts_with("a1=d4_00*d4_01+d4_02;"));
        assert_eq!(sc.matches(';').count(), 5);
        let (c, _) = p
            .commands(Tool::Cdo, "cdo", Some(2), Path::new("/s/o"))
            .unwrap();
        assert_eq!(&c[0][..5], &["cdo", "-O", "-s", "-P", "2"]);
        assert!(c[0][5].starts_with("expr,a1="));
        assert!(plan(Kind::Reverse)
            .commands(Tool::Cdo, "cdo", None, Path::new("/o"))
            .is_none());
        let (c, _) = plan(Kind::Ncwa)
            .commands(Tool::Cdo, "cdo", None, Path::new("/o"))
            .unwrap();
        assert_eq!(
            &c[0][3..],
            &[
                "fldmean",
                "-vertmean",
                "-timmean",
                "/d/ipcc_dly_T85.nc",
                "/o.nc"
            ]
        );
        assert!(!Kind::Ncra.applies_to(Geometry::Stl));
        let remote = Plan::new(
            Kind::Nces,
            Geometry::Stl,
            3,
            1.0,
            &Source::Url("http://h/dods/".into()),
        );
        assert_eq!(remote.inputs, vec!["http://h/dods/stl_5km.nc"; 3]);
    }
}
