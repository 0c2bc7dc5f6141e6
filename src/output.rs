//! Writing results as CF-1.8 NetCDF-4 files.
//!
//! Layouts: `per-doy` writes one file per statistic and target day (`mean_doy152.nc`,
//! `p90_doy152.nc`: the reference job's 184 files); `stacked` writes one file per statistic
//! (`mean.nc`, `p90.nc`) with all target days along `time`. Every data variable is
//! `(time, lat, lon)` float64 with a climatological time axis (`climatology_bounds`), the
//! input's latitude/longitude values, and provenance attributes.
//!
//! Files are created under a hidden temporary name (`.mean_doy152.nc.partial`), filled tile by
//! tile, and renamed only when the whole job has succeeded; dropping an unfinished set deletes
//! the temporary files, so a failed or interrupted run never leaves a file that looks finished.

use std::ops::Range;
use std::path::{Path, PathBuf};

use netcdf::Extent;

use crate::calendar::Date;
use crate::engine::{StatSpec, TileResult};
use crate::input::{Grid, Region, VarMeta};
use crate::window::WindowSpec;

/// How results are split into files (`--layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputLayout {
    /// One file per statistic and target day: `mean_doy152.nc`, `p90_doy152.nc`.
    PerDoy,
    /// One file per statistic with every target day along time: `mean.nc`, `p90.nc`.
    Stacked,
}

/// Where and how to write.
#[derive(Clone, Debug)]
pub struct OutputSpec {
    pub dir: PathBuf,
    pub layout: OutputLayout,
    pub deflate: Option<u8>,
    pub fill_value: f64,
    pub overwrite: bool,
}

/// What the files describe (for metadata).
#[derive(Clone, Debug)]
pub struct OutputMeta {
    pub stats: StatSpec,
    pub window: WindowSpec,
    pub grid: Grid,
    pub input_var: String,
    pub var_meta: VarMeta,
    pub input_template: String,
    pub missing_files: usize,
    pub history: String,
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{}: output directory is not writable: {cause}", dir.display())]
    NotWritable { dir: PathBuf, cause: std::io::Error },
    #[error("{}: already exists (pass --overwrite to replace {count} existing output file(s))", path.display())]
    Exists { path: PathBuf, count: usize },
    #[error("{}: writing variable '{var}' failed: {cause}", path.display())]
    Write { path: PathBuf, var: String, cause: netcdf::Error },
    #[error("{}: cannot move into place: {cause}", path.display())]
    Rename { path: PathBuf, cause: std::io::Error },
}

/// One file being written.
#[derive(Debug)]
struct OutFile {
    tmp: PathBuf,
    path: PathBuf,
    stat: usize,
    /// Target days (indices into the window spec's doys) held by this file.
    targets: Range<usize>,
}

/// A set of output files in progress.
#[derive(Debug)]
pub struct OutputSet {
    files: Vec<OutFile>,
    stat_names: Vec<String>,
    fill: f64,
    finished: bool,
    /// Whether the files exist yet (see [`OutputSet::plan`]).
    created: bool,
}

/// Create `dir` if needed and check that files can be created in it.
pub fn prepare_dir(dir: &Path) -> Result<(), OutputError> {
    let fail = |cause| OutputError::NotWritable { dir: dir.into(), cause };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let probe = dir.join(format!(".sstclim-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(fail)?;
    std::fs::remove_file(&probe).map_err(fail)
}

/// The final names of the files a job writes, with the statistic and targets of each.
fn plan_files(spec: &OutputSpec, stat_names: &[String], doys: &[u16]) -> Vec<(PathBuf, usize, Range<usize>)> {
    let mut files = Vec::new();
    for (stat, name) in stat_names.iter().enumerate() {
        match spec.layout {
            OutputLayout::PerDoy => {
                for (t, doy) in doys.iter().enumerate() {
                    files.push((spec.dir.join(format!("{name}_doy{doy:03}.nc")), stat, t..t + 1));
                }
            }
            OutputLayout::Stacked => files.push((spec.dir.join(format!("{name}.nc")), stat, 0..doys.len())),
        }
    }
    files
}

/// The final paths of the files a job writes for the target days `doys` (stacked: one per
/// statistic, whatever `doys` holds).
pub fn planned_paths(spec: &OutputSpec, stat_names: &[String], doys: &[u16]) -> Vec<PathBuf> {
    plan_files(spec, stat_names, doys).into_iter().map(|(p, _, _)| p).collect()
}

/// The current UTC time as ISO 8601 (`2026-11-30T12:00:00Z`).
pub fn utc_timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let date = Date::from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!("{date}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

fn ordinal_suffix(p: &str) -> &'static str {
    let int: u64 = p.split('.').next().and_then(|i| i.parse().ok()).unwrap_or(0);
    if p.contains('.') {
        return "th";
    }
    match (int % 10, int % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

impl OutputSet {
    /// Create every output file (under temporary names) with its metadata and coordinates.
    pub fn create(spec: &OutputSpec, meta: &OutputMeta) -> Result<OutputSet, OutputError> {
        let mut set = OutputSet::plan(spec, meta)?;
        set.create_files(spec, meta)?;
        Ok(set)
    }

    /// The output files a job will write, checked against existing files (without
    /// `--overwrite`), but not created yet: [`OutputSet::create_files`] does that, on the
    /// writer thread while the inputs are read.
    pub fn plan(spec: &OutputSpec, meta: &OutputMeta) -> Result<OutputSet, OutputError> {
        let stat_names = meta.stats.names();
        let planned = plan_files(spec, &stat_names, &meta.window.doys);
        if !spec.overwrite {
            let existing: Vec<&PathBuf> = planned.iter().map(|(p, _, _)| p).filter(|p| p.exists()).collect();
            if let Some(first) = existing.first() {
                return Err(OutputError::Exists { path: (*first).clone(), count: existing.len() });
            }
        }
        let files = planned
            .into_iter()
            .map(|(path, stat, targets)| {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let tmp = spec.dir.join(format!(".{name}.partial"));
                OutFile { tmp, path, stat, targets }
            })
            .collect();
        Ok(OutputSet { files, stat_names, fill: spec.fill_value, finished: false, created: false })
    }

    /// Record that the planned files were created (by a child process).
    pub fn mark_created(&mut self) {
        self.created = true;
    }

    /// Create the planned files (once; later calls do nothing).
    pub fn create_files(&mut self, spec: &OutputSpec, meta: &OutputMeta) -> Result<(), OutputError> {
        if !self.created {
            self.created = true;
            for f in &self.files {
                create_file(f, &self.stat_names[f.stat], spec, meta)?;
            }
        }
        Ok(())
    }

    /// Write the results of targets `targets` (indices into the job's targets) of one tile of
    /// cells; `result` holds just those targets, in order.
    pub fn write_targets(
        &mut self,
        region: &Region,
        targets: std::ops::Range<usize>,
        result: &TileResult,
    ) -> Result<(), OutputError> {
        debug_assert_eq!(result.n_targets, targets.len());
        let mut buf = Vec::new();
        for f in &self.files {
            let (lo, hi) = (f.targets.start.max(targets.start), f.targets.end.min(targets.end));
            if lo >= hi {
                continue;
            }
            let var_name = &self.stat_names[f.stat];
            let fail = |cause| OutputError::Write { path: f.path.clone(), var: var_name.clone(), cause };
            buf.clear();
            for t in lo..hi {
                buf.extend(
                    result.row(f.stat, t - targets.start).iter().map(|&v| if v.is_nan() { self.fill } else { v }),
                );
            }
            let mut file = netcdf::append(&f.tmp).map_err(fail)?;
            let mut var = file.variable_mut(var_name).ok_or(netcdf::Error::NotFound(var_name.clone())).map_err(fail)?;
            let extents = vec![
                Extent::SliceCount { start: lo - f.targets.start, count: hi - lo, stride: 1 },
                Extent::SliceCount { start: region.rows.start, count: region.rows.len(), stride: 1 },
                Extent::SliceCount { start: region.cols.start, count: region.cols.len(), stride: 1 },
            ];
            var.put_values(&buf, extents).map_err(fail)?;
            file.close().map_err(fail)?;
        }
        Ok(())
    }

    /// Move every file to its final name; returns the final paths.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, OutputError> {
        for f in &self.files {
            std::fs::rename(&f.tmp, &f.path).map_err(|cause| OutputError::Rename { path: f.path.clone(), cause })?;
        }
        self.finished = true;
        Ok(self.files.iter().map(|f| f.path.clone()).collect())
    }
}

impl Drop for OutputSet {
    fn drop(&mut self) {
        if !self.finished {
            for f in &self.files {
                let _ = std::fs::remove_file(&f.tmp);
            }
        }
    }
}

/// Days since `base` of a date.
fn days_since(base: Date, date: Date) -> f64 {
    (date.to_days() - base.to_days()) as f64
}

fn create_file(f: &OutFile, var_name: &str, spec: &OutputSpec, meta: &OutputMeta) -> Result<(), OutputError> {
    let fail = |var: &str| {
        let path = f.path.clone();
        let var = var.to_string();
        move |cause| OutputError::Write { path: path.clone(), var: var.clone(), cause }
    };
    let w = &meta.window;
    let (y0, y1) = (*w.years.start(), *w.years.end());
    let base = Date::new(y0, 1, 1).expect("valid year");
    let h = i64::from(w.half_window);
    let mut file = netcdf::create(&f.tmp).map_err(fail(""))?;
    let n_t = f.targets.len();
    let (nlat, nlon) = (meta.grid.nlat(), meta.grid.nlon());
    file.add_dimension("time", n_t).map_err(fail("time"))?;
    file.add_dimension("nv", 2).map_err(fail("nv"))?;
    file.add_dimension("lat", nlat).map_err(fail("lat"))?;
    file.add_dimension("lon", nlon).map_err(fail("lon"))?;

    // global attributes
    let stats = &meta.stats;
    let window_days = 2 * w.half_window + 1;
    let globals: Vec<(&str, netcdf::AttributeValue)> = vec![
        ("Conventions", "CF-1.8".into()),
        ("title", format!("Day-of-year climatology of {} ({y0}-{y1}, {window_days}-day window)", meta.input_var).into()),
        ("source", format!("sstclim {}", env!("CARGO_PKG_VERSION")).into()),
        ("history", meta.history.clone().into()),
        (
            "references",
            "Hobday et al. 2016, Prog. Oceanogr. 141:227-238 (marine heatwave threshold); Hyndman & Fan 1996, Am. Stat. 50:361-365 (sample quantiles)".into(),
        ),
        (
            "comment",
            format!(
                "For each target day D and cell: the valid samples at dates anchor(year, D) + o, o = -{0}..+{0}, for every year {y0}-{y1} (dates outside the period excluded). mean = sum of samples / number of valid samples; percentiles by {1}.",
                w.half_window,
                stats.method.description()
            )
            .into(),
        ),
        ("climatology_years", format!("{y0}-{y1}").into()),
        ("window_half_width_days", i32::from(w.half_window).into()),
        ("calendar_convention", w.calendar.name().into()),
        ("percentile_method", stats.method.description().into()),
        ("min_samples", (stats.min_samples as i32).into()),
        ("input_variable", meta.input_var.clone().into()),
        ("input_files", meta.input_template.clone().into()),
        ("missing_input_files", (meta.missing_files as i32).into()),
    ];
    for (name, value) in globals {
        file.add_attribute(name, value).map_err(fail(name))?;
    }

    // time: a climatological axis, one step per target day
    let mut times = Vec::with_capacity(n_t);
    let mut bounds = Vec::with_capacity(2 * n_t);
    let mut doys = Vec::with_capacity(n_t);
    for t in f.targets.clone() {
        let doy = w.doys[t];
        let anchors: Vec<Date> = w.years.clone().filter_map(|y| w.calendar.anchor(y, doy)).collect();
        let first = anchors.first().copied().unwrap_or_else(|| base.add_days(i64::from(doy) - 1));
        let last = anchors.last().copied().unwrap_or(first);
        times.push(days_since(base, first));
        bounds.push(days_since(base, first.add_days(-h)));
        bounds.push(days_since(base, last.add_days(h + 1)));
        doys.push(i32::from(doy));
    }
    {
        let mut v = file.add_variable::<f64>("time", &["time"]).map_err(fail("time"))?;
        v.put_attribute("standard_name", "time").map_err(fail("time"))?;
        v.put_attribute("units", format!("days since {y0:04}-01-01 00:00:00")).map_err(fail("time"))?;
        v.put_attribute("calendar", "proleptic_gregorian").map_err(fail("time"))?;
        v.put_attribute("climatology", "climatology_bounds").map_err(fail("time"))?;
        v.put_attribute("axis", "T").map_err(fail("time"))?;
        v.put_values(&times, ..).map_err(fail("time"))?;
    }
    {
        let mut v =
            file.add_variable::<f64>("climatology_bounds", &["time", "nv"]).map_err(fail("climatology_bounds"))?;
        v.put_attribute("units", format!("days since {y0:04}-01-01 00:00:00")).map_err(fail("climatology_bounds"))?;
        v.put_values(&bounds, ..).map_err(fail("climatology_bounds"))?;
    }
    {
        let mut v = file.add_variable::<i32>("doy", &["time"]).map_err(fail("doy"))?;
        v.put_attribute("long_name", format!("target day of year ({} convention)", w.calendar.name()))
            .map_err(fail("doy"))?;
        v.put_values(&doys, ..).map_err(fail("doy"))?;
    }
    for (dim, coord, std_name, units, axis) in [
        ("lat", &meta.grid.lat, "latitude", "degrees_north", "Y"),
        ("lon", &meta.grid.lon, "longitude", "degrees_east", "X"),
    ] {
        let mut v = file.add_variable::<f64>(dim, &[dim]).map_err(fail(dim))?;
        if coord.from_file {
            v.put_attribute("standard_name", std_name).map_err(fail(dim))?;
            v.put_attribute("units", units).map_err(fail(dim))?;
            v.put_attribute("axis", axis).map_err(fail(dim))?;
        } else {
            v.put_attribute("long_name", format!("{std_name} index (the input had no coordinate variable)"))
                .map_err(fail(dim))?;
        }
        v.put_values(&coord.values, ..).map_err(fail(dim))?;
    }

    // the statistic
    let mut v = file.add_variable::<f64>(var_name, &["time", "lat", "lon"]).map_err(fail(var_name))?;
    if let Some(level) = spec.deflate {
        v.set_chunking(&[1, nlat, nlon]).map_err(fail(var_name))?;
        v.set_compression(i32::from(level), true).map_err(fail(var_name))?;
    }
    v.set_fill_value(spec.fill_value).map_err(fail(var_name))?;
    let what = if f.stat == 0 {
        "mean".to_string()
    } else {
        let p = stats.percentiles[f.stat - 1].text();
        format!("{p}{} percentile", ordinal_suffix(p))
    };
    v.put_attribute(
        "long_name",
        format!(
            "climatological {what} of {} ({window_days}-day window, {y0}-{y1})",
            meta.var_meta.long_name.as_deref().unwrap_or(&meta.input_var)
        ),
    )
    .map_err(fail(var_name))?;
    if let Some(units) = &meta.var_meta.units {
        v.put_attribute("units", units.as_str()).map_err(fail(var_name))?;
    }
    if f.stat == 0 {
        if let Some(sn) = &meta.var_meta.standard_name {
            v.put_attribute("standard_name", sn.as_str()).map_err(fail(var_name))?;
        }
        v.put_attribute("cell_methods", "time: mean over years").map_err(fail(var_name))?;
    } else {
        let p = &stats.percentiles[f.stat - 1];
        v.put_attribute("percentile", p.fraction() * 100.0).map_err(fail(var_name))?;
        v.put_attribute("percentile_method", stats.method.description()).map_err(fail(var_name))?;
    }
    v.put_attribute("window_length_days", i32::from(window_days)).map_err(fail(var_name))?;
    file.close().map_err(fail(""))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_of_both_layouts() {
        let mut spec = OutputSpec {
            dir: PathBuf::from("out"),
            layout: OutputLayout::PerDoy,
            deflate: None,
            fill_value: f64::NAN,
            overwrite: false,
        };
        let names = vec!["mean".to_string(), "p90".to_string()];
        let files = plan_files(&spec, &names, &[152, 153]);
        let paths: Vec<String> = files.iter().map(|(p, _, _)| p.display().to_string()).collect();
        assert_eq!(paths, ["out/mean_doy152.nc", "out/mean_doy153.nc", "out/p90_doy152.nc", "out/p90_doy153.nc"]);
        spec.layout = OutputLayout::Stacked;
        let files = plan_files(&spec, &names, &[152, 153]);
        assert_eq!(files[1], (PathBuf::from("out/p90.nc"), 1, 0..2));
    }

    #[test]
    fn ordinal_suffixes() {
        assert_eq!(ordinal_suffix("90"), "th");
        assert_eq!(ordinal_suffix("1"), "st");
        assert_eq!(ordinal_suffix("2"), "nd");
        assert_eq!(ordinal_suffix("13"), "th");
        assert_eq!(ordinal_suffix("97.5"), "th");
    }

    #[test]
    fn timestamps_look_like_iso8601() {
        let t = utc_timestamp();
        assert_eq!(t.len(), 20);
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T');
    }
}
