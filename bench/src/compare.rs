//! Is our output NCO's? Structure (dimensions, variables, types, shapes), values within a
//! stated tolerance (`|a−b| ≤ atol + rtol·|b|`, equal fill values and NaNs pass), and
//! attributes, ignoring the provenance attributes that differ by design (`history`, `NCO`,
//! thread and input-list attributes). Reads one variable at a time.

use anyhow::{Context, Result};
use nco_core::dataset::Dataset;
use nco_core::types::Values;

/// Global attributes that carry provenance, not content.
const IGNORED_GLOBAL: &[&str] = &[
    "history",
    "NCO",
    "history_of_appended_files",
    "nco_openmp_thread_number",
    "nco_input_file_number",
    "nco_input_file_list",
];

/// Tolerances.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Tol {
    /// Relative tolerance for floating-point values.
    pub rtol: f64,
    /// Absolute tolerance for floating-point values.
    pub atol: f64,
    /// Absolute tolerance for integer values (packed data may round one step apart).
    pub atol_int: f64,
}

fn close(a: f64, b: f64, tol: f64, rtol: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol + rtol * b.abs()
}

fn values_close(a: &Values, b: &Values, t: Tol) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} values vs {}", a.len(), b.len()));
    }
    let is_int = !matches!(b, Values::Float(_) | Values::Double(_));
    let (atol, rtol) = if is_int {
        (t.atol_int, 0.0)
    } else {
        (t.atol, t.rtol)
    };
    match (a.to_f64_vec(), b.to_f64_vec()) {
        (Some(x), Some(y)) => {
            let mut worst: Option<(usize, f64)> = None;
            for (i, (&p, &q)) in x.iter().zip(&y).enumerate() {
                if !close(p, q, atol, rtol) {
                    let d = (p - q).abs();
                    if worst.is_none_or(|(_, w)| d > w || w.is_nan()) {
                        worst = Some((i, d));
                    }
                }
            }
            worst.map(|(i, d)| format!("max |diff| {d:.3e} at element {i}: {} vs {}", x[i], y[i]))
        }
        _ => (a != b).then(|| "text values differ".to_string()),
    }
}

/// A variable attribute that NCO writes and we leave out on purpose (a compatibility
/// note of the root README): NCO's output may have `attr` with exactly the text `value`
/// where ours has no such attribute. A different value, or ours having it, still counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiver {
    /// Attribute name.
    pub attr: &'static str,
    /// NCO's text value.
    pub value: &'static str,
}

/// [`compare`] in a child process (`nco-bench compare-probe`), so that the runner's own
/// resident memory stays small: Linux keeps a process's peak resident size across fork
/// and execve, so every operator the runner starts afterwards would report it.
pub fn compare_in_child(
    ours: &str,
    reference: &str,
    tol: Tol,
    waived: &[Waiver],
) -> Result<Option<String>> {
    let exe = std::env::current_exe().context("path of nco-bench")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("compare-probe")
        .arg(ours)
        .arg(reference)
        .arg(tol.rtol.to_string())
        .arg(tol.atol.to_string())
        .arg(tol.atol_int.to_string());
    for w in waived {
        cmd.arg(format!("{}={}", w.attr, w.value));
    }
    let out = cmd.output().context("running nco-bench compare-probe")?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        anyhow::bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
    }
    match text.trim_end().strip_prefix("DIFF ") {
        Some(d) => Ok(Some(d.to_string())),
        None if text.trim() == "EQUAL" => Ok(None),
        None => anyhow::bail!("unexpected compare output: {text}"),
    }
}

/// Compare `ours` against `reference`; `Ok(None)` when equal within `tol`, else the first
/// differences (up to 5), one per line. The `waived` attributes may be missing from ours.
pub fn compare(ours: &str, reference: &str, tol: Tol, waived: &[Waiver]) -> Result<Option<String>> {
    let a = Dataset::open(ours).with_context(|| format!("cannot open our output {ours}"))?;
    let b = Dataset::open(reference)
        .with_context(|| format!("cannot open NCO's output {reference}"))?;
    let (ma, mb) = (a.meta(), b.meta());
    let mut diffs: Vec<String> = Vec::new();
    let dims = |m: &nco_core::model::Meta| {
        let mut d: Vec<(String, usize, bool)> = m
            .dims
            .iter()
            .map(|d| (d.name.clone(), d.len, d.unlimited))
            .collect();
        d.sort();
        d
    };
    if dims(ma) != dims(mb) {
        diffs.push(format!("dimensions {:?} vs NCO {:?}", dims(ma), dims(mb)));
    }
    for at in &mb.attrs {
        if IGNORED_GLOBAL.contains(&at.name.as_str()) {
            continue;
        }
        match ma.attr(&at.name) {
            None => diffs.push(format!("global attribute {} missing", at.name)),
            Some(x) => {
                if let Some(d) = values_close(&x.value, &at.value, tol) {
                    diffs.push(format!("global attribute {}: {d}", at.name));
                }
            }
        }
    }
    let extra: Vec<&str> = ma
        .vars
        .iter()
        .filter(|v| mb.var(&v.name).is_none())
        .map(|v| v.name.as_str())
        .collect();
    if !extra.is_empty() {
        diffs.push(format!(
            "variables not in NCO's output: {}",
            extra.join(", ")
        ));
    }
    for (ib, vb) in mb.vars.iter().enumerate() {
        let Some(ia) = ma.var_id(&vb.name) else {
            diffs.push(format!("variable {} missing", vb.name));
            continue;
        };
        let va = &ma.vars[ia];
        let names = |m: &nco_core::model::Meta, v: &nco_core::model::Var| {
            v.dims
                .iter()
                .map(|&d| m.dims[d].name.clone())
                .collect::<Vec<_>>()
        };
        if va.ty != vb.ty {
            diffs.push(format!("{}: type {} vs NCO {}", vb.name, va.ty, vb.ty));
            continue;
        }
        if names(ma, va) != names(mb, vb) || ma.shape(va) != mb.shape(vb) {
            diffs.push(format!(
                "{}: dimensions {:?}{:?} vs NCO {:?}{:?}",
                vb.name,
                names(ma, va),
                ma.shape(va),
                names(mb, vb),
                mb.shape(vb)
            ));
            continue;
        }
        for at in &vb.attrs {
            let is_waived = || {
                let text = at.value.as_text();
                let text = text.as_deref().map(|t| t.trim_end_matches('\0'));
                waived
                    .iter()
                    .any(|w| w.attr == at.name && Some(w.value) == text)
            };
            match va.attr(&at.name) {
                None if is_waived() => {}
                None => diffs.push(format!("{}@{} missing", vb.name, at.name)),
                Some(x) => {
                    if let Some(d) = values_close(&x.value, &at.value, tol) {
                        diffs.push(format!("{}@{}: {d}", vb.name, at.name));
                    }
                }
            }
        }
        let xa = a
            .read_all(ia)
            .with_context(|| format!("reading {} from {ours}", vb.name))?;
        let xb = b
            .read_all(ib)
            .with_context(|| format!("reading {} from {reference}", vb.name))?;
        if let Some(d) = values_close(&xa, &xb, tol) {
            diffs.push(format!("{}: values differ, {d}", vb.name));
        }
        if diffs.len() >= 5 {
            break;
        }
    }
    Ok(if diffs.is_empty() {
        None
    } else {
        diffs.truncate(5);
        Some(diffs.join("\n"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::{generate, GenOptions, Geometry};

    #[test]
    fn equal_copy_passes_and_the_partner_file_fails() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = GenOptions::new(dir.path().to_path_buf());
        o.scale = 0.001;
        o.sync = false;
        let a = generate(Geometry::Stl, 0, &o).unwrap().path;
        let b = generate(Geometry::Stl, 1, &o).unwrap().path;
        let c = dir.path().join("copy.nc");
        std::fs::copy(&a, &c).unwrap();
        let tol = Tol {
            rtol: 1e-5,
            atol: 1e-6,
            atol_int: 0.0,
        };
        let (a, b, c) = (
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            c.to_str().unwrap(),
        );
        assert_eq!(compare(c, a, tol, &[]).unwrap(), None);
        let d = compare(b, a, tol, &[])
            .unwrap()
            .expect("the partner file differs");
        assert!(d.contains("d2_00: values differ, max |diff|"), "{d}");
        // a loose tolerance accepts it
        let loose = Tol {
            rtol: 1.0,
            atol: 10.0,
            atol_int: 0.0,
        };
        let d2 = compare(b, a, loose, &[]).unwrap().unwrap_or_default();
        assert!(!d2.contains("d2_0"), "{d2}");
        assert_eq!(d2, "global attribute source: text values differ"); // variant 1 says so
                                                                       // a missing output is an error that names the file
        let e = compare("/nonexistent.nc", a, tol, &[]).unwrap_err();
        assert!(format!("{e:#}").contains("cannot open our output /nonexistent.nc"));
    }

    /// Add a text attribute to variable `var` of the classic file `path`.
    fn put_text_attr(path: &str, var: &str, name: &str, value: &str) {
        use std::ffi::CString;
        let (p, v, n) = (
            CString::new(path).unwrap(),
            CString::new(var).unwrap(),
            CString::new(name).unwrap(),
        );
        // SAFETY: plain netCDF C calls on a file we own, with NUL-terminated names and
        // a buffer of the length passed.
        unsafe {
            let mut nc = 0;
            assert_eq!(
                netcdf_sys::nc_open(p.as_ptr(), netcdf_sys::NC_WRITE, &mut nc),
                0
            );
            assert_eq!(netcdf_sys::nc_redef(nc), 0);
            let mut id = 0;
            assert_eq!(netcdf_sys::nc_inq_varid(nc, v.as_ptr(), &mut id), 0);
            assert_eq!(
                netcdf_sys::nc_put_att_text(nc, id, n.as_ptr(), value.len(), value.as_ptr().cast()),
                0
            );
            assert_eq!(netcdf_sys::nc_close(nc), 0);
        }
    }

    #[test]
    fn waived_attributes_may_be_missing_but_not_different() {
        let _g = crate::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let mut o = GenOptions::new(dir.path().to_path_buf());
        o.scale = 0.001;
        o.sync = false;
        let ours = generate(Geometry::Stl, 0, &o).unwrap().path;
        let nco = dir.path().join("nco.nc");
        std::fs::copy(&ours, &nco).unwrap();
        let (ours, nco) = (ours.to_str().unwrap(), nco.to_str().unwrap());
        put_text_attr(nco, "d2_00", "cell_methods", "time: mean");
        let tol = Tol {
            rtol: 1e-5,
            atol: 1e-6,
            atol_int: 0.0,
        };
        let w = Waiver {
            attr: "cell_methods",
            value: "time: mean",
        };
        let d = compare(ours, nco, tol, &[]).unwrap().unwrap();
        assert_eq!(d, "d2_00@cell_methods missing");
        assert_eq!(compare(ours, nco, tol, &[w]).unwrap(), None);
        // another value of the attribute is not waived
        let other = Waiver {
            attr: "cell_methods",
            value: "time: sum",
        };
        assert!(compare(ours, nco, tol, &[other]).unwrap().is_some());
        // ours writing a different value is a difference even when waived
        put_text_attr(ours, "d2_00", "cell_methods", "lat: mean");
        let d = compare(ours, nco, tol, &[w]).unwrap().unwrap();
        assert!(d.starts_with("d2_00@cell_methods: "), "{d}");
    }
}
