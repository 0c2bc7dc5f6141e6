//! `sstclim compare A B`: how far apart two result sets are, and never a pass for what it
//! did not compare.
//!
//! Files are paired by name (every `.nc` file of two directories, or two files), and each is
//! compared as what it is: a gridded file (`run`'s outputs, `events`' summary.nc) cell by
//! cell ([`gridded`]), an event table (`events`' events.nc) event by event ([`events`]). Every
//! variable of a file is compared. A file on one side only, a file that is neither kind, a
//! pair of different kinds or with different variables is an error (exit 2), not a verdict.
//! The verdict covers values: largest absolute difference and RMSE over values valid in
//! both, values that differ at all, values beyond the tolerance, values that are fill in one
//! set only, and differences no value count shows (an event count, a coordinate).

mod events;
mod gridded;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Error;
use crate::input;

/// Why two result sets cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Job(#[from] Error),
    #[error(transparent)]
    Input(#[from] input::InputError),
    #[error("{}: {problem}", path.display())]
    Cannot { path: PathBuf, problem: String },
}

impl CompareError {
    fn cannot(path: &Path, problem: impl Into<String>) -> CompareError {
        CompareError::Cannot { path: path.into(), problem: problem.into() }
    }
}

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

impl VarDiff {
    /// `xa` against `xb` (as long), NaN being a fill value.
    fn of(file: &str, var: &str, xa: &[f64], xb: &[f64], tolerance: f64) -> VarDiff {
        let mut d = VarDiff {
            file: file.into(),
            var: var.into(),
            values: xa.len(),
            max_abs: 0.0,
            rmse: 0.0,
            differing: 0,
            beyond_tolerance: 0,
            fill_mismatch: 0,
        };
        let (mut sq, mut both) = (0.0, 0usize);
        for (&x, &y) in xa.iter().zip(xb) {
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
        d
    }
}

/// Whether `x` and `y` differ beyond `tolerance` (a fill value, NaN, in one of them only).
fn beyond(x: f64, y: f64, tolerance: f64) -> bool {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => false,
        (false, false) => (x - y).abs() > tolerance,
        _ => true,
    }
}

/// The whole comparison.
#[derive(Clone, Debug, Serialize, Default)]
pub struct Comparison {
    pub tolerance: f64,
    pub rows: Vec<VarDiff>,
    /// Differences beyond the values' counts: event counts, the first event that differs,
    /// coordinates, shapes.
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

    /// A table: one line per statistic (variable name), then the total and the verdict. A
    /// variable that files of several kinds hold (`duration` in events.nc and summary.nc) gets
    /// a line per kind, named `kind/variable`.
    pub fn table(&self) -> String {
        let mut by_label: Vec<(String, Comparison)> = Vec::new();
        for r in &self.rows {
            let label = self.label(r);
            match by_label.iter_mut().find(|(l, _)| *l == label) {
                Some((_, c)) => c.rows.push(r.clone()),
                None => by_label
                    .push((label, Comparison { tolerance: self.tolerance, rows: vec![r.clone()], problems: vec![] })),
            }
        }
        let width = by_label.iter().map(|(l, _)| l.len() + 1).max().unwrap_or(0).max(12);
        let mut out = format!(
            "{:<width$}{:>7}{:>12}{:>13}{:>13}{:>11}{:>11}{:>9}\n",
            "variable", "files", "values", "max |a-b|", "rmse", "differing", "> tol", "fill !="
        );
        let line = |name: &str, files: usize, d: &VarDiff| {
            format!(
                "{name:<width$}{files:>7}{:>12}{:>13.3e}{:>13.3e}{:>11}{:>11}{:>9}\n",
                d.values, d.max_abs, d.rmse, d.differing, d.beyond_tolerance, d.fill_mismatch
            )
        };
        for (label, c) in &by_label {
            out.push_str(&line(label, c.rows.len(), &c.total()));
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

impl Comparison {
    /// Row `r`'s line in the table: its variable, or `kind/variable` where files of another
    /// kind hold a variable of that name too.
    fn label(&self, r: &VarDiff) -> String {
        let kind = kind_of_name(&r.file);
        match self.rows.iter().any(|o| o.var == r.var && kind_of_name(&o.file) != kind) {
            true => format!("{kind}/{}", r.var),
            false => r.var.clone(),
        }
    }
}

/// A file's kind as its name says: the name without its extension and digits (`mean_doy152.nc`
/// and `mean_doy153.nc` are `mean_doy`, `summary_cold.nc` is `summary_cold`).
fn kind_of_name(file: &str) -> String {
    let stem = Path::new(file).file_stem().map_or(file.into(), |s| s.to_string_lossy());
    stem.chars().filter(|c| !c.is_ascii_digit()).collect()
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

/// What a file holds, as compare reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// Every variable along one `event` dimension.
    Events,
    /// Gridded variables (and their coordinates).
    Gridded,
}

impl Kind {
    fn of(file: &netcdf::File, path: &Path) -> Result<Kind, CompareError> {
        if file.dimension("event").is_some() {
            return match file.variables().find(|v| v.dimensions().iter().map(|d| d.name()).ne(["event".to_string()])) {
                Some(v) => Err(CompareError::cannot(
                    path,
                    format!("it has an event dimension, but variable '{}' is not a column along it", v.name()),
                )),
                None => Ok(Kind::Events),
            };
        }
        if gridded::variables(file, path).is_empty() {
            return Err(CompareError::cannot(
                path,
                "neither gridded variables nor an event table (variables along `event`): compare cannot compare it",
            ));
        }
        Ok(Kind::Gridded)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Events => "an event table",
            Kind::Gridded => "a gridded file",
        }
    }
}

/// The names of `file`'s variables, in its order; an error naming the first variable that
/// `a` and `b` do not both have.
fn same_variables(fa: &netcdf::File, a: &Path, fb: &netcdf::File, b: &Path) -> Result<Vec<String>, CompareError> {
    let names = |f: &netcdf::File| f.variables().map(|v| v.name()).collect::<Vec<String>>();
    let (na, nb) = (names(fa), names(fb));
    let only = |x: &[String], y: &[String]| x.iter().find(|v| !y.contains(v)).cloned();
    if let Some(v) = only(&na, &nb) {
        return Err(CompareError::cannot(b, format!("no variable '{v}', which {} has", a.display())));
    }
    if let Some(v) = only(&nb, &na) {
        return Err(CompareError::cannot(a, format!("no variable '{v}', which {} has", b.display())));
    }
    Ok(na)
}

/// Every value of variable `var` as stored (numeric types only), in float64.
fn values(file: &netcdf::File, path: &Path, var: &str) -> Result<Vec<f64>, CompareError> {
    let v = file.variable(var).ok_or_else(|| CompareError::cannot(path, format!("no variable '{var}'")))?;
    if v.len() == 0 {
        return Ok(Vec::new());
    }
    v.get_values::<f64, _>(..)
        .map_err(|e| CompareError::cannot(path, format!("variable '{var}' cannot be read as numbers: {e}")))
}

fn compare_files(a: &Path, b: &Path, tolerance: f64, out: &mut Comparison) -> Result<(), CompareError> {
    let name = a.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (fa, fb) = (input::open(a)?, input::open(b)?);
    let (ka, kb) = (Kind::of(&fa, a)?, Kind::of(&fb, b)?);
    if ka != kb {
        return Err(CompareError::cannot(a, format!("{} but {} is {}", ka.name(), b.display(), kb.name())));
    }
    let vars = same_variables(&fa, a, &fb, b)?;
    match ka {
        Kind::Events => events::compare(&name, (&fa, a), (&fb, b), &vars, tolerance, out),
        Kind::Gridded => gridded::compare(&name, (&fa, a), (&fb, b), &vars, tolerance, out),
    }
}

/// Compare result sets `a` and `b` (two directories or two files).
pub fn compare(a: &Path, b: &Path, tolerance: f64) -> Result<Comparison, CompareError> {
    let mut out = Comparison { tolerance, ..Comparison::default() };
    if a.is_file() || b.is_file() {
        compare_files(a, b, tolerance, &mut out)?;
        return Ok(out);
    }
    let (na, nb) = (list(a)?, list(b)?);
    // every file is compared: one on one side only is not a pass
    for (names, here, there, other) in [(&na, a, b, &nb), (&nb, b, a, &na)] {
        if let Some(n) = names.iter().find(|n| !other.contains(n)) {
            let problem = format!("not in {}, so it cannot be compared", there.display());
            return Err(CompareError::cannot(&here.join(n), problem));
        }
    }
    if na.is_empty() {
        return Err(CompareError::cannot(a, format!("no .nc files here or in {}", b.display())));
    }
    for n in &na {
        compare_files(&a.join(n), &b.join(n), tolerance, &mut out)?;
    }
    Ok(out)
}

/// Write the comparison as JSON.
pub fn write_json(c: &Comparison, path: &Path) -> Result<(), Error> {
    crate::report::write_json(c, path).map_err(|cause| Error::Io { path: path.to_path_buf(), cause })
}
