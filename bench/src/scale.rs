//! The scaling study (issue 22): ncra over N files (links to the benchmark's
//! `ipcc_dly_T85.nc`, as row 2) run as one process with one and two threads, under
//! `mpirun -np 1` and `-np 2` (one thread per rank; the `mpi` build in `target/mpi/`,
//! made by `scripts/mpi-build.sh`, when present), and as a job array of two parts run
//! at once plus the merge. Ours only: NCO has neither mode (row 2 compares us with
//! NCO). Every output is checked against the single process's (`-t 1`): the merged and
//! MPI ones within the regrouping of floating-point sums (rtol 1e-6), the MPI one
//! against the merged parts exactly.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::compare::{compare, Tol};
use crate::gen::Geometry;
use crate::proc::median;

/// What the study runs on.
pub struct ScaleOptions {
    /// The folder holding `ipcc_dly_T85.nc` (the run's data folder at its scale).
    pub dir: PathBuf,
    /// Number of input files (links).
    pub files: usize,
    /// Repeats per variant (the median is reported).
    pub repeats: usize,
    /// Our default binaries.
    pub bin_dir: PathBuf,
    /// Our MPI binaries (`target/mpi`); the MPI rows are skipped when absent.
    pub mpi_dir: PathBuf,
    /// Folder for the outputs and `scale.txt`.
    pub out: PathBuf,
}

/// One timed variant: its label and the commands it runs (those of one step run at
/// once; steps one after the other).
struct Variant {
    label: &'static str,
    steps: Vec<Vec<Vec<String>>>,
    output: PathBuf,
}

/// Wall seconds of the steps of `v` (each step's commands started together, waited
/// for together).
fn time_variant(v: &Variant) -> Result<f64> {
    let start = Instant::now();
    for step in &v.steps {
        let children = step
            .iter()
            .map(|argv| {
                Command::new(&argv[0])
                    .args(&argv[1..])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .with_context(|| format!("cannot start {}", argv[0]))
            })
            .collect::<Result<Vec<_>>>()?;
        for (c, argv) in children.into_iter().zip(step) {
            let out = c.wait_with_output()?;
            if !out.status.success() {
                bail!(
                    "{} failed: {}",
                    argv.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
        }
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Run the study; the table as text (also written to `<out>/scale.txt`).
///
/// Errors: the benchmark file is missing, a run fails, an output differs.
pub fn run(o: &ScaleOptions) -> Result<String> {
    let geo = Geometry::Ipcc;
    let main = o.dir.join(crate::gen::file_name(geo, 0));
    if !main.exists() {
        bail!(
            "{} missing: run `nco-bench gen --which ipcc` at the same scale (the bench's run makes it)",
            main.display()
        );
    }
    crate::run::make_links(&o.dir, geo, o.files)?;
    std::fs::create_dir_all(&o.out)?;
    let inputs: Vec<String> = crate::wishlist::member_names(geo, o.files)
        .iter()
        .map(|n| o.dir.join(n).display().to_string())
        .collect();
    let bin = |name: &str| o.bin_dir.join(name).display().to_string();
    let out = |name: &str| o.out.join(name);
    let ncra = |pre: &[String], extra: &[&str], output: &Path| -> Vec<String> {
        let mut v: Vec<String> = pre.to_vec();
        v.extend(extra.iter().map(|s| s.to_string()));
        v.extend(inputs.iter().cloned());
        v.push(output.display().to_string());
        v
    };
    let ours = vec![bin("ncra")];
    let mut variants = vec![
        Variant {
            label: "one process, -t 1",
            steps: vec![vec![ncra(&ours, &["-O", "-t", "1"], &out("scale_t1.nc"))]],
            output: out("scale_t1.nc"),
        },
        Variant {
            label: "one process, -t 2",
            steps: vec![vec![ncra(&ours, &["-O", "-t", "2"], &out("scale_t2.nc"))]],
            output: out("scale_t2.nc"),
        },
    ];
    let parts: Vec<PathBuf> = (1..=2)
        .map(|k| out(&format!("scale_part_{k}.nc")))
        .collect();
    let part = |k: usize| {
        let spec = format!("{k}/2");
        ncra(&ours, &["-O", "-t", "1", "--part", &spec], &parts[k - 1])
    };
    let merge = {
        let mut v = vec![
            bin("ncra"),
            "-O".into(),
            "-t".into(),
            "1".into(),
            "--merge".into(),
        ];
        v.extend(parts.iter().map(|p| p.display().to_string()));
        v.push(out("scale_merged.nc").display().to_string());
        v
    };
    variants.push(Variant {
        label: "--part 1/2 and 2/2 at once (-t 1 each), then --merge",
        steps: vec![vec![part(1), part(2)], vec![merge.clone()]],
        output: out("scale_merged.nc"),
    });
    variants.push(Variant {
        label: "--merge alone (2 parts)",
        steps: vec![vec![merge]],
        output: out("scale_merged.nc"),
    });
    let mpi_ncra = o.mpi_dir.join("ncra");
    let mpirun = Path::new("/usr/bin/mpirun");
    let with_mpi = mpi_ncra.is_file() && mpirun.exists();
    if with_mpi {
        for (np, label, name) in [
            (1, "mpirun -np 1 (-t 1)", "scale_np1.nc"),
            (2, "mpirun -np 2 (-t 1 per rank)", "scale_np2.nc"),
        ] {
            let pre: Vec<String> = [
                "/usr/bin/mpirun",
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "core",
                // One machine: shared memory only, and the ob1 messaging layer, whose
                // start-up takes 0.1 s here where the default's probing of network
                // layers takes 0.3 s.
                "--mca",
                "btl",
                "self,vader",
                "--mca",
                "pml",
                "ob1",
                "-np",
                &np.to_string(),
                &mpi_ncra.display().to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            variants.push(Variant {
                label,
                steps: vec![vec![ncra(&pre, &["-O", "-t", "1"], &out(name))]],
                output: out(name),
            });
        }
    }
    // Warm the page cache with one run, then interleave the variants' repeats.
    time_variant(&variants[0])?;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for _ in 0..o.repeats.max(1) {
        for (i, v) in variants.iter().enumerate() {
            times[i].push(time_variant(v)?);
        }
    }
    let t: Vec<f64> = times.iter().map(|ts| median(ts)).collect();
    // Checks: every output against the single process's; MPI's against the merge's.
    let reference = variants[0].output.display().to_string();
    let loose = Tol {
        rtol: 1e-6,
        atol: 0.0,
        atol_int: 0.0,
    };
    let exact = Tol { rtol: 0.0, ..loose };
    for v in &variants[1..] {
        let tol = if v.label.starts_with("one process") {
            exact
        } else {
            loose
        };
        if let Some(d) = compare(&v.output.display().to_string(), &reference, tol, &[])? {
            bail!("{}: the output differs from one process's: {d}", v.label);
        }
    }
    if with_mpi {
        let merged = out("scale_merged.nc").display().to_string();
        if let Some(d) = compare(
            &out("scale_np2.nc").display().to_string(),
            &merged,
            exact,
            &[],
        )? {
            bail!("mpirun -np 2: the output differs from the merged parts': {d}");
        }
    }
    let size = std::fs::metadata(&main)?.len() as f64 * o.files as f64;
    let mut s = format!(
        "Scaling (issue 22): ncra over {} files (links to {}, {:.0} MB read in all), median of {} (warm cache)\n\n",
        o.files,
        main.display(),
        size / 1e6,
        o.repeats.max(1)
    );
    s.push_str("| run | wall s | vs one process -t 1 |\n|---|---|---|\n");
    for (v, &w) in variants.iter().zip(&t) {
        s.push_str(&format!("| {} | {w:.3} | {:.2}x |\n", v.label, t[0] / w));
    }
    s.push('\n');
    s.push_str(&format!(
        "job array (2 parts + merge) vs one process -t 2: {:.2}x the time (goal: within 1.10x)\n",
        t[2] / t[1]
    ));
    if with_mpi {
        s.push_str(&format!(
            "mpirun -np 2 vs -np 1: {:.2}x faster (goal: 1.8x); vs one process -t 2: {:.2}x the time\n",
            t[4] / t[5],
            t[5] / t[1]
        ));
        s.push_str("outputs: each equal to one process's within rtol 1e-6 (sums regrouped), -np 2's equal to the merged parts' exactly\n");
    } else {
        s.push_str(&format!(
            "mpirun rows skipped: {} not built (bash scripts/mpi-build.sh)\n",
            mpi_ncra.display()
        ));
        s.push_str("outputs: each equal to one process's within rtol 1e-6 (sums regrouped)\n");
    }
    std::fs::write(o.out.join("scale.txt"), &s)?;
    Ok(s)
}
