//! `sstclim compare A B`: how far apart two result sets are.
//!
//! Files are paired by name; in each pair every gridded variable is read through the same
//! decoding as inputs (so dimension order and packing do not matter) and compared cell by cell:
//! largest absolute difference and RMSE over cells valid in both, cells whose values differ at
//! all, cells beyond the tolerance, and cells that are fill in one set only.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Error;
use crate::input::{self, read_canonical, VarLayout};

/// Differences of one variable in one file pair.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct VarDiff {
    pub file: String,
    pub var: String,
    pub values: usize,
    pub max_abs: f64,
    pub rmse: f64,
    pub differing: usize,
    pub beyond_tolerance: usize,
    pub fill_mismatch: usize,
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize, Default)]
pub struct Comparison {
    pub tolerance: f64,
    pub rows: Vec<VarDiff>,
    /// Files or variables present on one side only, or of different shapes.
    pub problems: Vec<String>,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.problems.is_empty() && self.rows.iter().all(|r| r.beyond_tolerance == 0 && r.fill_mismatch == 0)
    }

    fn total(&self) -> VarDiff {
        let values: usize = self.rows.iter().map(|r| r.values).sum();
        let sq: f64 = self.rows.iter().map(|r| r.rmse * r.rmse * r.values as f64).sum();
        VarDiff {
            file: format!("{} files", self.rows.len()),
            var: "all".into(),
            values,
            max_abs: self.rows.iter().map(|r| r.max_abs).fold(0.0, f64::max),
            rmse: if values > 0 { (sq / values as f64).sqrt() } else { 0.0 },
            differing: self.rows.iter().map(|r| r.differing).sum(),
            beyond_tolerance: self.rows.iter().map(|r| r.beyond_tolerance).sum(),
            fill_mismatch: self.rows.iter().map(|r| r.fill_mismatch).sum(),
        }
    }

    /// A table: one line per statistic (variable name), then the total and the verdict.
    pub fn table(&self) -> String {
        let mut by_var: Vec<Comparison> = Vec::new();
        for r in &self.rows {
            match by_var.iter_mut().find(|c| c.rows[0].var == r.var) {
                Some(c) => c.rows.push(r.clone()),
                None => by_var.push(Comparison { tolerance: self.tolerance, rows: vec![r.clone()], problems: vec![] }),
            }
        }
        let mut out = format!(
            "{:<12}{:>7}{:>12}{:>13}{:>13}{:>11}{:>11}{:>9}\n",
            "variable", "files", "values", "max |a-b|", "rmse", "differing", "> tol", "fill !="
        );
        let line = |name: &str, files: usize, d: &VarDiff| {
            format!(
                "{name:<12}{files:>7}{:>12}{:>13.3e}{:>13.3e}{:>11}{:>11}{:>9}\n",
                d.values, d.max_abs, d.rmse, d.differing, d.beyond_tolerance, d.fill_mismatch
            )
        };
        for c in &by_var {
            out.push_str(&line(&c.rows[0].var, c.rows.len(), &c.total()));
        }
        out.push_str(&line("all", self.rows.len(), &self.total()));
        for p in &self.problems {
            out.push_str(&format!("problem: {p}\n"));
        }
        out.push_str(&format!(
            "{} (tolerance {:e})\n",
            if self.passed() { "EQUAL within tolerance" } else { "DIFFERENT" },
            self.tolerance
        ));
        out
    }
}

/// The `.nc` files directly in `dir` (not hidden), by name.
fn list(dir: &Path) -> Result<Vec<String>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|cause| Error::Io { path: dir.into(), cause })?;
    let mut names = Vec::new();
    for e in entries {
        let e = e.map_err(|cause| Error::Io { path: dir.into(), cause })?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with('.') && name.ends_with(".nc") {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Gridded variables of an open file, with their layouts.
fn gridded(file: &netcdf::File, path: &Path) -> Vec<VarLayout> {
    file.variables()
        .filter_map(|v| VarLayout::inspect(file, path, Some(&v.name()), true).ok())
        .filter(|l| !l.dims.iter().any(|(d, _)| *d == l.name))
        .collect()
}

fn compare_files(a: &Path, b: &Path, tolerance: f64, out: &mut Comparison) -> Result<(), Error> {
    let name = a.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (fa, fb) = (input::open(a)?, input::open(b)?);
    let (va, vb) = (gridded(&fa, a), gridded(&fb, b));
    for la in &va {
        let Some(lb) = vb.iter().find(|l| l.name == la.name) else {
            out.problems.push(format!("{name}: variable {} only in {}", la.name, a.display()));
            continue;
        };
        if (la.nlat(), la.nlon(), la.extra_len()) != (lb.nlat(), lb.nlon(), lb.extra_len()) {
            out.problems.push(format!("{name}: variable {}: {} vs {}", la.name, la.shape_text(), lb.shape_text()));
            continue;
        }
        let (xa, xb) = (read_canonical(&fa, a, la)?, read_canonical(&fb, b, lb)?);
        let mut d = VarDiff {
            file: name.clone(),
            var: la.name.clone(),
            values: xa.len(),
            max_abs: 0.0,
            rmse: 0.0,
            differing: 0,
            beyond_tolerance: 0,
            fill_mismatch: 0,
        };
        let (mut sq, mut both) = (0.0, 0usize);
        for (&x, &y) in xa.iter().zip(&xb) {
            match (x.is_nan(), y.is_nan()) {
                (true, true) => {}
                (false, false) => {
                    let diff = (x - y).abs();
                    d.max_abs = d.max_abs.max(diff);
                    sq += diff * diff;
                    both += 1;
                    d.differing += usize::from(x.to_bits() != y.to_bits());
                    d.beyond_tolerance += usize::from(diff > tolerance);
                }
                _ => d.fill_mismatch += 1,
            }
        }
        d.rmse = if both > 0 { (sq / both as f64).sqrt() } else { 0.0 };
        out.rows.push(d);
    }
    for lb in &vb {
        if !va.iter().any(|l| l.name == lb.name) {
            out.problems.push(format!("{name}: variable {} only in {}", lb.name, b.display()));
        }
    }
    Ok(())
}

/// Compare result sets `a` and `b` (two directories or two files).
pub fn compare(a: &Path, b: &Path, tolerance: f64) -> Result<Comparison, Error> {
    let mut out = Comparison { tolerance, ..Comparison::default() };
    if a.is_file() || b.is_file() {
        compare_files(a, b, tolerance, &mut out)?;
        return Ok(out);
    }
    let (na, nb) = (list(a)?, list(b)?);
    for n in &na {
        if nb.contains(n) {
            compare_files(&a.join(n), &b.join(n), tolerance, &mut out)?;
        } else {
            out.problems.push(format!("{n} only in {}", a.display()));
        }
    }
    for n in nb.iter().filter(|n| !na.contains(n)) {
        out.problems.push(format!("{n} only in {}", b.display()));
    }
    if na.is_empty() && nb.is_empty() {
        out.problems.push(format!("no .nc files in {} or {}", a.display(), b.display()));
    }
    Ok(out)
}

/// Write the comparison as JSON.
pub fn write_json(c: &Comparison, path: &PathBuf) -> Result<(), Error> {
    crate::report::write_json(c, path).map_err(|cause| Error::Io { path: path.clone(), cause })
}
