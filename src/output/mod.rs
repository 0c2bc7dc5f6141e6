//! Writing results as CF-1.8 NetCDF-4 files.
//!
//! Layouts: `per-doy` writes one file per statistic and target day (`mean_doy152.nc`,
//! `p90_doy152.nc`: the reference job's 184 files); `stacked` writes one file per statistic
//! (`mean.nc`, `p90.nc`) with all target days along `time`; `climatology` writes one file
//! with every statistic over `doy` ([`climatology`]), each of its variables written as a
//! stacked file's. Every data variable is `(time, lat, lon)` (float64 unless `--output-type`
//! says otherwise) with a climatological time axis (`climatology_bounds`), the input's
//! latitude/longitude values, and provenance attributes.
//!
//! Files are created in the job's hidden staging directory (`.sstclim-job-<id>.partial/`),
//! filled tile by tile, and published all or nothing only when the whole job has succeeded
//! ([`publish`]); dropping an unfinished set deletes the staging directory, so a failed or
//! interrupted run never leaves a file that looks finished. One job at a time holds an output
//! directory ([`lock`]).
//!
//! Two ways to write (`--write-path`): uncompressed outputs are created with their statistic's
//! storage allocated and never filled by HDF5, located once through HDF5, and written with
//! `pwrite` from several threads ([`crate::nc::direct`]); compressed outputs, files that do not qualify,
//! and `--write-path library` go through libnetcdf, one file at a time (the library is not
//! thread-safe). The library path creates files as libnetcdf does by default (HDF5 writes the
//! fill value into the whole variable before the first values), and is the reference the
//! direct path must equal.

mod cf;
pub mod climatology;
mod create;
mod format;
pub mod lock;
pub mod owner;
pub mod publish;
pub use publish::space_hint;

pub use crate::nc::encode::{ChunkShape, Encoding, OutputType};
pub use cf::stat_attributes;
pub use format::{names, OutputFormat, TargetUnits};

use std::ops::Range;
use std::path::{Path, PathBuf};

use netcdf::Extent;
use tracing::{info, warn};

use crate::calendar::Date;
use crate::input::{Grid, Region, VarMeta};
use crate::nc::{chunked, direct, encode};
use crate::stats::{StatSpec, TileResult};
use crate::window::WindowSpec;

/// How results are split into files (`--layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputLayout {
    /// One file per statistic and target day: `mean_doy152.nc`, `p90_doy152.nc`.
    PerDoy,
    /// One file per statistic with every target day along time: `mean.nc`, `p90.nc`.
    Stacked,
    /// One file, `climatology.nc`, every statistic over the whole year's `doy` axis, with the
    /// attributes that describe it (see [`climatology`]).
    Climatology,
}

/// How results reach the files (`--write-path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WritePath {
    /// `pwrite` from several threads into uncompressed outputs (allocated at creation, never
    /// filled); libnetcdf for compressed ones and any file whose storage does not qualify.
    Auto,
    /// libnetcdf for every file, one at a time, created with HDF5's fill: the reference.
    Library,
}

/// Where and how to write.
#[derive(Clone, Debug)]
pub struct OutputSpec {
    pub dir: PathBuf,
    pub layout: OutputLayout,
    pub deflate: Option<u8>,
    pub fill_value: f64,
    pub overwrite: bool,
    pub write_path: WritePath,
    /// Threads writing files directly (`None`: [`default_write_threads`]).
    pub write_threads: Option<usize>,
    /// Stored type, chunks, shuffle and units.
    pub format: OutputFormat,
}

/// Direct-writing threads when not given: up to 8 (page-cache writes stop scaling before
/// that), no more than the cores this process may use.
pub fn default_write_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

/// What the files describe (for metadata).
#[derive(Clone, Debug)]
pub struct OutputMeta {
    pub stats: StatSpec,
    pub window: WindowSpec,
    /// Window edges, Feb 29 and smoothing (for the climatology layout's attributes).
    pub rules: crate::smooth::DayRules,
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
    #[error("{}: {}{cause}{hint}", path.display(), if var.is_empty() { String::new() } else { format!("writing variable '{var}' failed: ") })]
    Write { path: PathBuf, var: String, cause: netcdf::Error, hint: String },
    #[error("{}: cannot move into place: {cause}; no output was published (the previous ones, if any, are unchanged)", path.display())]
    Rename { path: PathBuf, cause: std::io::Error },
    #[error(
        "{}: a computed value of '{var}' equals the output fill value {fill} (--fill-value): readers would take it for missing; choose a --fill-value outside the data's range",
        path.display()
    )]
    FillClash { path: PathBuf, var: String, fill: f64 },
    #[error("{}: cannot flush to disk (fsync): {cause}; no output was published", path.display())]
    Sync { path: PathBuf, cause: std::io::Error },
    #[error("{first}; moving back what was already published failed for {left} file(s): the previous files are in {}", previous.display())]
    Rollback { first: Box<OutputError>, previous: PathBuf, left: usize },
    #[error("another rank failed, and {left} of this rank's published files could not be moved back: the previous files are in {}", previous.display())]
    RolledBackPartly { previous: PathBuf, left: usize },
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    #[error("{}: is {kind}, not an output file; --overwrite replaces output files only: move or remove it", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("{}: writing variable '{var}' directly (pwrite into {}) failed: {cause}; {missing} bytes of that day's field not written (nor the fields after it){hint}", path.display(), tmp.display())]
    DirectWrite { path: PathBuf, tmp: PathBuf, var: String, cause: std::io::Error, missing: u64, hint: String },
    #[error("{}: writing compressed variable '{var}' into {} failed: {what}; that chunk's {missing} compressed bytes not written (nor the chunks after it){hint}", path.display(), tmp.display())]
    ChunkWrite { path: PathBuf, tmp: PathBuf, var: String, what: String, missing: u64, hint: String },
    #[error(
        "{}: a computed value {value} of '{var}' is outside what --output-type i16 holds with --output-scale {scale} --output-offset {offset} ({lo} to {hi}); choose a larger scale or another offset",
        path.display()
    )]
    OutOfRange { path: PathBuf, var: String, value: f64, scale: f64, offset: f64, lo: f64, hi: f64 },
    #[error("--units degC: input variable '{var}' has {units}, not kelvin or degrees Celsius")]
    Units { var: String, units: String },
}

impl OutputError {
    /// A libnetcdf write error on `path` (variable `var`, empty while creating the file), with
    /// the file system's state where that explains it (HDF5 reports a full disk as some other
    /// error).
    pub fn write(path: &Path, var: &str, cause: netcdf::Error) -> OutputError {
        OutputError::Write { path: path.into(), var: var.into(), cause, hint: space_hint(path) }
    }
}

/// One file being written.
#[derive(Debug)]
struct OutFile {
    tmp: PathBuf,
    path: PathBuf,
    stat: usize,
    /// Target days (indices into the window spec's doys) held by this file.
    targets: Range<usize>,
    /// Byte offset of the statistic's values, where they are written directly.
    direct: Option<u64>,
    /// Whether its compressed chunks are written directly ([`chunked`]).
    chunked: bool,
}

/// A set of output files in progress.
#[derive(Debug)]
pub struct OutputSet {
    files: Vec<OutFile>,
    /// The job's hidden staging directory, where the files are written.
    staging: PathBuf,
    /// Variable names in the files ([`names`]).
    var_names: Vec<String>,
    enc: Encoding,
    /// Chunks of compressed outputs written directly (`--deflate`, `--write-path auto`).
    chunks: Option<chunked::ChunkPlan>,
    /// Chunks waiting for rows of later tiles.
    partial: chunked::Partial,
    finished: bool,
    synced: bool, // every file fsynced by `sync` since the last write: `finish` skips that

    /// Whether the files exist yet (see [`OutputSet::plan`]).
    created: bool,
    /// Create the files for the direct path (uncompressed, `--write-path auto`).
    preallocate: bool,
    /// Whether each file's storage has been looked up (once, after creation).
    located: bool,
    /// Direct-writing threads.
    threads: usize,
    /// Threads compressing chunks (`--deflate`): every core unless `--write-threads` says
    /// otherwise, since compressing scales with cores where page-cache writes stop scaling.
    compress_threads: usize,
    nlat: usize,
    nlon: usize,
    /// Encoding buffers of the direct-writing threads, kept between segments.
    buffers: Vec<Vec<u8>>,
    /// `--layout climatology`: `files` has an entry per statistic, all of one file (created
    /// once, by [`climatology::create_file`]).
    climatology: bool,
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
            // one file holds every statistic: an entry per statistic, one after another, all of
            // that file (each its own variable, written as the stacked layout's files are)
            OutputLayout::Climatology => {
                files.push((spec.dir.join(crate::input::climatology::FILE_NAME), stat, 0..doys.len()))
            }
        }
    }
    files
}

/// The final paths of the files a job writes for the target days `doys` (stacked: one per
/// statistic, whatever `doys` holds).
pub fn planned_paths(spec: &OutputSpec, stat_names: &[String], doys: &[u16]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = plan_files(spec, stat_names, doys).into_iter().map(|(p, _, _)| p).collect();
    // (the climatology's statistics share one file, planned one after another)
    paths.dedup();
    paths
}

/// The current UTC time as ISO 8601 (`2026-11-30T12:00:00Z`).
pub fn utc_timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let date = Date::from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!("{date}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
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
        spec.unit_shift(meta)?;
        let planned = plan_files(spec, &stat_names, &meta.window.doys);
        let mut paths: Vec<PathBuf> = planned.iter().map(|(p, _, _)| p.clone()).collect();
        paths.dedup();
        publish::check_replaceable(&paths, spec.overwrite)?;
        let staging = publish::staging_dir(&spec.dir);
        // registered first, so that no interruption falls between creating and registering
        crate::util::signals::on_interrupt_remove(&staging);
        std::fs::create_dir(&staging).map_err(|cause| OutputError::NotWritable { dir: spec.dir.clone(), cause })?;
        let files = planned
            .into_iter()
            .map(|(path, stat, targets)| {
                let tmp = staging.join(path.file_name().expect("output files have names"));
                OutFile { tmp, path, stat, targets, direct: None, chunked: false }
            })
            .collect();
        let (nlat, nlon) = (meta.grid.nlat(), meta.grid.nlon());
        let chunks = match (spec.deflate, spec.write_path) {
            (Some(level), WritePath::Auto) => {
                let (rows, cols) = encode::chunk_shape(nlat, nlon, spec.format.ty, spec.format.chunks);
                Some(chunked::ChunkPlan { rows, cols, level, shuffle: spec.format.shuffle })
            }
            _ => None,
        };
        Ok(OutputSet {
            files,
            staging,
            var_names: names(&meta.input_var, &meta.stats),
            enc: spec.encoding(meta),
            chunks,
            partial: chunked::Partial::default(),
            finished: false,
            synced: false,
            created: false,
            preallocate: spec.deflate.is_none() && spec.write_path == WritePath::Auto,
            located: false,
            threads: spec.write_threads.unwrap_or_else(default_write_threads).max(1),
            compress_threads: spec
                .write_threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
                .max(1),
            nlat: meta.grid.nlat(),
            nlon: meta.grid.nlon(),
            buffers: Vec::new(),
            climatology: spec.layout == OutputLayout::Climatology,
        })
    }

    /// Record that the planned files were created (by a child process), and find where their
    /// values go.
    pub fn mark_created(&mut self) {
        self.created = true;
        self.locate();
    }

    /// Create the planned files (once; later calls do nothing). Where their values go is looked
    /// up by the process that writes them ([`OutputSet::mark_created`] or the first write).
    pub fn create_files(&mut self, spec: &OutputSpec, meta: &OutputMeta) -> Result<(), OutputError> {
        self.synced = false;
        if !self.created {
            self.created = true;
            self.create_share(spec, meta, 0, 1)?;
        }
        Ok(())
    }

    /// Look up, once, the storage of every file created for the direct path; files that do
    /// not qualify are written through libnetcdf.
    fn locate(&mut self) {
        if self.located || !self.created {
            return;
        }
        self.located = true;
        if !self.preallocate && self.chunks.is_none() {
            return;
        }
        let (nlat, nlon, ty) = (self.nlat, self.nlon, self.enc.ty);
        let mut refused = 0;
        for f in &mut self.files {
            let var = &self.var_names[f.stat];
            let shape = [f.targets.len(), nlat, nlon];
            let found = match &self.chunks {
                Some(plan) => chunked::locate(&f.tmp, var, shape, ty, plan).map(|()| f.chunked = true),
                None => direct::locate(&f.tmp, var, shape, ty).map(|offset| f.direct = Some(offset)),
            };
            if let Err(why) = found {
                if refused == 0 {
                    warn!("writing {} through libnetcdf: {var} in {} {why}", f.path.display(), f.tmp.display());
                }
                refused += 1;
            }
        }
        info!(
            "writing {} of {} output file(s) directly ({} thread(s){}){}",
            self.files.len() - refused,
            self.files.len(),
            self.threads,
            if self.chunks.is_some() { ", compressed chunks" } else { "" },
            if refused > 0 { format!(", {refused} through libnetcdf") } else { String::new() }
        );
    }

    /// Write every file through libnetcdf from now on (for measuring the library path on
    /// files created for the direct one).
    #[doc(hidden)]
    pub fn disable_direct(&mut self) {
        self.located = true;
        self.files.iter_mut().for_each(|f| {
            f.direct = None;
            f.chunked = false;
        });
    }

    /// How many files take the direct path (uncompressed or compressed).
    pub fn direct_files(&self) -> usize {
        self.files.iter().filter(|f| f.direct.is_some() || f.chunked).count()
    }

    /// Write the results of targets `targets` (indices into the job's targets) of one tile of
    /// cells; `result` holds just those targets, in order. Files located for the direct path
    /// are written with `pwrite` from the write threads (one piece per file and target) while
    /// this thread writes the others through libnetcdf.
    pub fn write_targets(
        &mut self,
        region: &Region,
        targets: std::ops::Range<usize>,
        result: &TileResult,
    ) -> Result<(), OutputError> {
        debug_assert_eq!(result.n_targets, targets.len());
        self.synced = false;
        self.locate();
        let mut buffers = std::mem::take(&mut self.buffers);
        let overlap = |f: &OutFile| {
            let (lo, hi) = (f.targets.start.max(targets.start), f.targets.end.min(targets.end));
            (lo < hi).then_some(lo..hi)
        };
        let mut pieces = Vec::new();
        let mut owners = Vec::new();
        let mut fields = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            if let Some(ts) = overlap(f).filter(|_| f.direct.is_some() || f.chunked) {
                for t in ts {
                    let values = result.row(f.stat, t - targets.start);
                    match f.direct {
                        Some(offset) => {
                            pieces.push(direct::Piece { tmp: &f.tmp, offset, t: t - f.targets.start, values });
                            owners.push(f);
                        }
                        None => fields.push(chunked::Field {
                            file: i,
                            t: t - f.targets.start,
                            values: chunked::Values::F64(values),
                        }),
                    }
                }
            }
        }
        let library = || -> Result<(), OutputError> {
            let mut buf = Vec::new();
            for f in self.files.iter().filter(|f| f.direct.is_none() && !f.chunked) {
                if let Some(ts) = overlap(f) {
                    self.write_library(f, region, ts, targets.start, result, &mut buf)?;
                }
            }
            Ok(())
        };
        let g = direct::Geometry { nlat: self.nlat, nlon: self.nlon, region, enc: self.enc };
        let written = direct::write_pieces(&pieces, &g, self.threads, &mut buffers, library);
        self.buffers = buffers;
        written.map_err(|failure| match failure {
            direct::WriteFailure::Library(e) => e,
            direct::WriteFailure::Direct(i, direct::PieceError::Encode(e)) => self.encode_error(owners[i], e),
            direct::WriteFailure::Direct(i, direct::PieceError::Io { cause, missing }) => {
                let f = owners[i];
                let var = self.var_names[f.stat].clone();
                // the file system's state now, before the staging directory is removed
                let hint = space_hint(&f.tmp);
                OutputError::DirectWrite { path: f.path.clone(), tmp: f.tmp.clone(), var, cause, missing, hint }
            }
        })?;
        if let (Some(plan), false) = (self.chunks, fields.is_empty()) {
            let g = chunked::ChunkGeometry { nlat: self.nlat, nlon: self.nlon, region, plan, enc: self.enc };
            let paths: Vec<&Path> = self.files.iter().map(|f| f.tmp.as_path()).collect();
            let vars: Vec<&str> = self.files.iter().map(|f| self.var_names[f.stat].as_str()).collect();
            let mut partial = std::mem::take(&mut self.partial);
            let done = chunked::write_fields(&fields, &g, &paths, &vars, self.compress_threads, &mut partial);
            self.partial = partial;
            done.map_err(|failure| match failure {
                chunked::ChunkFailure::Encode(i, e) => self.encode_error(&self.files[i], e),
                chunked::ChunkFailure::Write(i, what, missing) => {
                    let f = &self.files[i];
                    OutputError::ChunkWrite {
                        path: f.path.clone(),
                        tmp: f.tmp.clone(),
                        var: self.var_names[f.stat].clone(),
                        what,
                        missing,
                        hint: space_hint(&f.tmp),
                    }
                }
            })?;
        }
        Ok(())
    }

    /// The error for a value of file `f` that cannot be stored.
    fn encode_error(&self, f: &OutFile, e: encode::EncodeError) -> OutputError {
        let var = self.var_names[f.stat].clone();
        match e {
            encode::EncodeError::FillClash => OutputError::FillClash { path: f.path.clone(), var, fill: self.enc.fill },
            encode::EncodeError::OutOfRange { value } => {
                let (lo, hi) = self.enc.packed_range();
                OutputError::OutOfRange {
                    path: f.path.clone(),
                    var,
                    value,
                    scale: self.enc.scale,
                    offset: self.enc.offset,
                    lo,
                    hi,
                }
            }
        }
    }

    /// Write targets `ts` of file `f` through libnetcdf (`first`: the job target `result`
    /// starts at).
    fn write_library(
        &self,
        f: &OutFile,
        region: &Region,
        ts: Range<usize>,
        first: usize,
        result: &TileResult,
        buf: &mut Vec<u8>,
    ) -> Result<(), OutputError> {
        let var_name = &self.var_names[f.stat];
        let fail = |cause| OutputError::write(&f.path, var_name, cause);
        let size = self.enc.ty.size();
        buf.clear();
        for t in ts.clone() {
            let row = result.row(f.stat, t - first);
            let at = buf.len();
            buf.resize(at + row.len() * size, 0);
            self.enc.encode_into(row, &mut buf[at..]).map_err(|e| self.encode_error(f, e))?;
        }
        let mut file = netcdf::append(&f.tmp).map_err(fail)?;
        let mut var = file.variable_mut(var_name).ok_or(netcdf::Error::NotFound(var_name.clone())).map_err(fail)?;
        let extents = vec![
            Extent::SliceCount { start: ts.start - f.targets.start, count: ts.len(), stride: 1 },
            Extent::SliceCount { start: region.rows.start, count: region.rows.len(), stride: 1 },
            Extent::SliceCount { start: region.cols.start, count: region.cols.len(), stride: 1 },
        ];
        match self.enc.ty {
            OutputType::F64 => {
                let v: Vec<f64> =
                    buf.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
                var.put_values(&v, extents)
            }
            OutputType::F32 => {
                let v: Vec<f32> =
                    buf.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
                var.put_values(&v, extents)
            }
            OutputType::I16 => {
                let v: Vec<i16> =
                    buf.chunks_exact(2).map(|c| i16::from_le_bytes(c.try_into().expect("2 bytes"))).collect();
                var.put_values(&v, extents)
            }
        }
        .map_err(fail)?;
        file.close().map_err(fail)
    }

    /// The hidden directory the files are staged in (under their final names).
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// The final paths of the files.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.unique_files().map(|f| f.path.clone()).collect()
    }

    /// Each file once (the climatology's entries, one per statistic, are of one file, one
    /// after another).
    fn unique_files(&self) -> impl Iterator<Item = &OutFile> {
        self.files.iter().enumerate().filter(|(i, f)| *i == 0 || self.files[i - 1].tmp != f.tmp).map(|(_, f)| f)
    }

    /// Flush every file to disk (`fsync`), ahead of [`OutputSet::finish`].
    pub fn sync(&mut self) -> Result<(), OutputError> {
        let staged: Vec<PathBuf> = self.unique_files().map(|f| f.tmp.clone()).collect();
        publish::sync_all(&staged, self.threads).map(|()| self.synced = true)
    }

    /// Publish every file under its final name, all or nothing (see [`publish`]); returns the
    /// final paths.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, OutputError> {
        let pairs: Vec<(PathBuf, PathBuf)> = self.unique_files().map(|f| (f.tmp.clone(), f.path.clone())).collect();
        let published = publish::publish_files(&pairs, &self.staging.join(".previous"), self.threads, self.synced)?;
        self.finished = true;
        let paths = published.commit();
        let _ = std::fs::remove_dir_all(&self.staging);
        crate::util::signals::forget(&self.staging);
        Ok(paths)
    }
}

impl Drop for OutputSet {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_dir_all(&self.staging);
            crate::util::signals::forget(&self.staging);
        }
    }
}

#[cfg(test)]
mod tests;
