//! `sstclim generate`: a synthetic, OSTIA-like daily SST dataset, one NetCDF-4 file per day.
//!
//! Values are a smooth climate (latitude profile, seasonal cycle by hemisphere, trend,
//! interannual pattern) plus daily noise; land cells are missing everywhere, ocean values go
//! missing at random (mostly poleward of 70 degrees, like sea ice), and a few ocean cells are
//! missing in every file. Every value is a pure function of (seed, cell, date), so any split of
//! the work gives the same files. libnetcdf is not thread-safe, so the files are written by
//! several processes (this binary re-run as hidden workers), each with its own library state.
//!
//! A finished dataset carries `.sstclim-dataset.json` (its parameters); it is removed before
//! writing starts, so an interrupted generation is recognisably incomplete.

use std::io::{BufRead, BufReader, Read};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;
use tracing::info;

use crate::calendar::Date;
use crate::plan::values::GridSize;
use crate::report::progress::Ui;
use crate::template::{Template, TemplateError};
use crate::util::rng::{hash, mix, unit};

mod file;
use file::write_file;
pub use file::Compression;

/// Name of the marker file of a complete dataset.
pub const MARKER: &str = ".sstclim-dataset.json";

/// Storage of generated files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GenStorage {
    /// float64 degrees Celsius, NaN for missing (like the MATLAB-written reference files).
    F64,
    /// int16 kelvin with scale_factor 0.01 and add_offset 273.15 (like OSTIA).
    I16,
}

/// Dimension order of generated files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DimOrder {
    /// (lat, lon): longitude varies fastest (OSTIA, CF).
    LatLon,
    /// (lon, lat): latitude varies fastest (the MATLAB-written reference files).
    LonLat,
}

/// Time steps per generated file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepsPerFile {
    /// One file per day (named by --naming).
    #[default]
    Day,
    /// One file per year, `sst.day.mean.YEAR.nc`, every day along its time dimension (NOAA
    /// PSL's layout).
    Year,
}

/// What to generate (`sstclim generate`'s flags; the command line checks none of them, this
/// module does).
#[derive(Clone, Debug, PartialEq)]
pub struct GenerateOptions {
    /// Output directory.
    pub output: PathBuf,
    pub grid: GridSize,
    pub years: RangeInclusive<i32>,
    /// Days of year (ordinal) written in each year.
    pub doys: Vec<u16>,
    pub storage: GenStorage,
    pub dim_order: DimOrder,
    /// A leading time dimension of length 1 (as OSTIA files have).
    pub time_dim: bool,
    /// File name template inside the output directory.
    pub naming: String,
    /// Fraction of cells that are land (missing in every file).
    pub land_fraction: f64,
    /// Probability that an ocean value is missing.
    pub missing_fraction: f64,
    /// Ocean cells missing in every file.
    pub all_missing_cells: usize,
    /// Probability that a value poleward of 70 degrees is missing (sea ice).
    pub ice_missing_fraction: f64,
    /// Step float64 values are rounded to (0: none).
    pub quantum: f64,
    pub seed: u64,
    /// Writer processes (`None`: all cores).
    pub jobs: Option<usize>,
    /// Replace another dataset in the output directory.
    pub overwrite: bool,
    /// This process is writer `index` of `count` (hidden worker processes).
    pub worker: Option<(usize, usize)>,
    /// How the data variable is stored: chunked, deflated, shuffled (default contiguous).
    pub compression: Compression,
    /// A `zlev` dimension of length 1 after `time`: OISST v2.1's `(time, zlev, lat, lon)`.
    pub zlev_dim: bool,
    /// One file per day or per year.
    pub steps_per_file: StepsPerFile,
    /// Chunk length along time of yearly files.
    pub time_chunk: usize,
}

impl Default for GenerateOptions {
    /// `sstclim generate`'s defaults (the command line's test holds its flags to them), into
    /// no directory.
    fn default() -> Self {
        GenerateOptions {
            output: PathBuf::new(),
            grid: GridSize { nlon: 1440, nlat: 721 },
            years: 1991..=2020,
            doys: (147..=248).collect(),
            storage: GenStorage::F64,
            dim_order: DimOrder::LatLon,
            time_dim: false,
            naming: "sst_{year}_{doy}.nc".into(),
            land_fraction: 0.3,
            missing_fraction: 0.02,
            all_missing_cells: 16,
            ice_missing_fraction: 0.97,
            quantum: 0.01,
            seed: 1,
            jobs: None,
            overwrite: false,
            worker: None,
            compression: Compression::default(),
            zlev_dim: false,
            steps_per_file: StepsPerFile::Day,
            time_chunk: 1,
        }
    }
}

/// Why a dataset could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{flag} must be between 0 and 1, got {value}")]
    Fraction { flag: &'static str, value: f64 },
    #[error("--quantum must be >= 0, got {0}")]
    Quantum(f64),
    #[error("{0}")]
    Storage(String),
    #[error("--naming '{0}' must be a plain file name")]
    NamingPath(String),
    #[error("--naming: {0}")]
    Naming(#[from] TemplateError),
    #[error("{} holds a different generated dataset; pass --overwrite to replace it", .0.display())]
    OtherDataset(PathBuf),
    #[error("generate worker {index} failed ({status}): {stderr}")]
    Worker { index: usize, status: std::process::ExitStatus, stderr: String },
    #[error("{}: writing failed: {cause}", path.display())]
    Write { path: PathBuf, cause: netcdf::Error },
    #[error("{}: {cause}", path.display())]
    Io { path: PathBuf, cause: std::io::Error },
}

/// The parameters that define a dataset (stored in the marker file).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DatasetSpec {
    pub grid: [usize; 2],
    pub years: [i32; 2],
    pub doys: Vec<u16>,
    pub storage: GenStorage,
    pub dim_order: DimOrder,
    pub time_dim: bool,
    pub naming: String,
    pub land_fraction: f64,
    pub missing_fraction: f64,
    pub all_missing_cells: usize,
    pub ice_missing_fraction: f64,
    pub quantum: f64,
    pub seed: u64,
    pub generator_version: u32,
    /// Left out for contiguous datasets (so their marker stays as before these existed).
    #[serde(skip_serializing_if = "Compression::is_contiguous")]
    pub compression: Compression,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub zlev_dim: bool,
    /// Left out for daily files (so their marker stays as before yearly ones existed).
    #[serde(skip_serializing_if = "is_daily")]
    pub steps_per_file: StepsPerFile,
    #[serde(skip_serializing_if = "is_one")]
    pub time_chunk: usize,
}

fn is_daily(s: &StepsPerFile) -> bool {
    *s == StepsPerFile::Day
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// Bumped whenever the generated values change.
const GENERATOR_VERSION: u32 = 1;

/// What `generate` did.
#[derive(Clone, Debug, Serialize)]
pub struct GenerateReport {
    pub files: usize,
    pub bytes: u64,
    pub seconds: f64,
    pub processes: usize,
    /// True when an identical dataset was already there and nothing was written.
    pub up_to_date: bool,
}

fn spec_of(args: &GenerateOptions) -> DatasetSpec {
    DatasetSpec {
        grid: [args.grid.nlon, args.grid.nlat],
        years: [*args.years.start(), *args.years.end()],
        doys: args.doys.clone(),
        storage: args.storage,
        dim_order: args.dim_order,
        time_dim: args.time_dim,
        naming: args.naming.clone(),
        land_fraction: args.land_fraction,
        missing_fraction: args.missing_fraction,
        all_missing_cells: args.all_missing_cells,
        ice_missing_fraction: args.ice_missing_fraction,
        quantum: args.quantum,
        seed: args.seed,
        generator_version: GENERATOR_VERSION,
        compression: args.compression,
        zlev_dim: args.zlev_dim,
        steps_per_file: args.steps_per_file,
        time_chunk: args.time_chunk,
    }
}

/// The dates of the dataset, in (year, day) order.
fn dates(args: &GenerateOptions) -> Vec<Date> {
    args.years.clone().flat_map(|y| args.doys.iter().filter_map(move |&d| Date::from_ordinal(y, d))).collect()
}

/// The dataset's files, each with its dates (one per day, or a year's for yearly files).
fn files(args: &GenerateOptions, template: &Template) -> Vec<(PathBuf, Vec<Date>)> {
    let all = dates(args);
    match args.steps_per_file {
        StepsPerFile::Day => all.into_iter().map(|d| (template.expand(d), vec![d])).collect(),
        StepsPerFile::Year => all
            .chunk_by(|a, b| a.year == b.year)
            .map(|year| (args.output.join(format!("sst.day.mean.{}.nc", year[0].year)), year.to_vec()))
            .collect(),
    }
}

fn validate(args: &GenerateOptions) -> Result<Template, GenerateError> {
    for (name, v) in [
        ("--land-fraction", args.land_fraction),
        ("--missing-fraction", args.missing_fraction),
        ("--ice-missing-fraction", args.ice_missing_fraction),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(GenerateError::Fraction { flag: name, value: v });
        }
    }
    if !(args.quantum >= 0.0 && args.quantum.is_finite()) {
        return Err(GenerateError::Quantum(args.quantum));
    }
    if let Some(level) = args.compression.deflate.filter(|l| !(1..=9).contains(l)) {
        return Err(GenerateError::Storage(format!("--deflate {level}: levels are 1 to 9")));
    }
    if args.compression.chunks.is_some_and(|c| c.contains(&0)) {
        return Err(GenerateError::Storage("--chunks: chunk lengths are at least 1".into()));
    }
    if args.zlev_dim && !args.time_dim {
        return Err(GenerateError::Storage("--zlev-dim needs --time-dim (OISST's (time, zlev, lat, lon))".into()));
    }
    if args.time_chunk == 0 {
        return Err(GenerateError::Storage("--time-chunk: chunk lengths are at least 1".into()));
    }
    if args.naming.contains('/') || args.naming.contains("..") {
        return Err(GenerateError::NamingPath(args.naming.clone()));
    }
    let template: Template = args.naming.parse()?;
    Ok(template.with_prefix(&format!("{}/", args.output.display())))
}

/// Generate the dataset `args` describes (or, as a hidden worker, one share of its files).
pub fn generate(args: &GenerateOptions, ui: &Ui) -> Result<GenerateReport, GenerateError> {
    let template = validate(args)?;
    if let Some((index, count)) = args.worker {
        return write_share(args, &template, index, count, |i| println!("{i}"));
    }
    let start = Instant::now();
    let dir = &args.output;
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| GenerateError::Io { path: path.clone(), cause }
    };
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let marker = dir.join(MARKER);
    let spec = spec_of(args);
    let wanted = serde_json::to_value(&spec).expect("a dataset's parameters are plain JSON");
    if let Ok(text) = std::fs::read_to_string(&marker) {
        let existing: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if existing == wanted {
            info!("{} already holds this dataset", dir.display());
            return Ok(GenerateReport { files: 0, bytes: 0, seconds: 0.0, processes: 0, up_to_date: true });
        }
        if !args.overwrite {
            return Err(GenerateError::OtherDataset(dir.clone()));
        }
    }
    let _ = std::fs::remove_file(&marker);
    let all = files(args, &template);
    let processes = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, all.len().max(1));
    info!(
        "writing {} files of {}x{} into {} with {processes} process(es)",
        all.len(),
        args.grid.nlon,
        args.grid.nlat,
        dir.display()
    );
    let bar = ui.bar(all.len() as u64, "generate");
    if processes == 1 {
        write_share(args, &template, 0, 1, |_| bar.inc(1))?;
    } else {
        run_workers(args, processes, &bar)?;
    }
    bar.finish_and_clear();
    let bytes = all.iter().map(|(path, _)| std::fs::metadata(path).map_or(0, |m| m.len())).sum();
    let text = serde_json::to_string_pretty(&spec).expect("a dataset's parameters are plain JSON");
    std::fs::write(&marker, text + "\n").map_err(io_err(&marker))?;
    Ok(GenerateReport { files: all.len(), bytes, seconds: start.elapsed().as_secs_f64(), processes, up_to_date: false })
}

/// The command line of worker `index` of `count`.
fn worker_args(args: &GenerateOptions, index: usize, count: usize) -> Vec<String> {
    let doys: Vec<String> = args.doys.iter().map(u16::to_string).collect();
    let mut v: Vec<String> = vec![
        "--quiet".into(),
        "generate".into(),
        "--output".into(),
        args.output.display().to_string(),
        "--grid".into(),
        format!("{}x{}", args.grid.nlon, args.grid.nlat),
        "--years".into(),
        format!("{}-{}", args.years.start(), args.years.end()),
        "--doys".into(),
        doys.join(","),
        "--storage".into(),
        format!("{:?}", args.storage).to_lowercase(),
        "--dim-order".into(),
        if args.dim_order == DimOrder::LatLon { "lat-lon" } else { "lon-lat" }.into(),
        "--naming".into(),
        args.naming.clone(),
        "--land-fraction".into(),
        args.land_fraction.to_string(),
        "--missing-fraction".into(),
        args.missing_fraction.to_string(),
        "--all-missing-cells".into(),
        args.all_missing_cells.to_string(),
        "--ice-missing-fraction".into(),
        args.ice_missing_fraction.to_string(),
        "--quantum".into(),
        args.quantum.to_string(),
        "--seed".into(),
        args.seed.to_string(),
        "--worker-index".into(),
        index.to_string(),
        "--worker-count".into(),
        count.to_string(),
    ];
    if args.time_dim {
        v.push("--time-dim".into());
    }
    if args.zlev_dim {
        v.push("--zlev-dim".into());
    }
    let c = args.compression;
    if let Some(level) = c.deflate {
        v.extend(["--deflate".into(), level.to_string()]);
    }
    if c.shuffle {
        v.push("--shuffle".into());
    }
    if let Some([a, b]) = c.chunks {
        v.extend(["--chunks".into(), format!("{a}x{b}")]);
    }
    if args.steps_per_file == StepsPerFile::Year {
        v.extend(["--steps-per-file".into(), "year".into(), "--time-chunk".into(), args.time_chunk.to_string()]);
    }
    v
}

/// Run `count` worker processes; each prints the index of every file it finishes.
fn run_workers(args: &GenerateOptions, count: usize, bar: &indicatif::ProgressBar) -> Result<(), GenerateError> {
    let exe =
        std::env::current_exe().map_err(|cause| GenerateError::Io { path: "current executable".into(), cause })?;
    let mut children = Vec::new();
    for index in 0..count {
        let child = Command::new(&exe)
            .args(worker_args(args, index, count))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|cause| GenerateError::Io { path: exe.clone(), cause })?;
        children.push(child);
    }
    let (tx, rx) = crossbeam_channel::unbounded::<()>();
    let mut readers = Vec::new();
    for child in &mut children {
        let stdout = child.stdout.take().expect("piped");
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for _ in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(());
            }
        }));
    }
    drop(tx);
    for () in rx {
        bar.inc(1);
    }
    let mut failure = None;
    for (index, mut child) in children.into_iter().enumerate() {
        let status = child.wait().map_err(|cause| GenerateError::Io { path: exe.clone(), cause })?;
        if !status.success() && failure.is_none() {
            let mut stderr = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut stderr);
            }
            failure = Some(GenerateError::Worker { index, status, stderr: stderr.trim().to_string() });
        }
    }
    for r in readers {
        let _ = r.join();
    }
    failure.map_or(Ok(()), Err)
}

/// The static part of the synthetic climate, per cell.
struct Field {
    nlat: usize,
    nlon: usize,
    lat: Vec<f64>,
    lon: Vec<f64>,
    /// 0 ocean, 1 land, 2 ocean missing in every file.
    kind: Vec<u8>,
    base: Vec<f64>,
    amplitude: Vec<f64>,
}

impl Field {
    fn new(args: &GenerateOptions) -> Field {
        let (nlat, nlon) = (args.grid.nlat, args.grid.nlon);
        let lat: Vec<f64> = (0..nlat).map(|j| -90.0 + 180.0 * j as f64 / (nlat - 1) as f64).collect();
        let lon: Vec<f64> = (0..nlon).map(|i| -180.0 + 360.0 * i as f64 / nlon as f64).collect();
        let phases: Vec<f64> = (0..8).map(|k| unit(hash(&[args.seed, 77, k])) * std::f64::consts::TAU).collect();
        let mut land_score = vec![0.0; nlat * nlon];
        let mut base = vec![0.0; nlat * nlon];
        let mut amplitude = vec![0.0; nlat * nlon];
        for (j, la) in lat.iter().enumerate() {
            let phi = la.to_radians();
            for (i, lo) in lon.iter().enumerate() {
                let lam = lo.to_radians();
                let c = j * nlon + i;
                land_score[c] = (2.0 * lam + phases[0]).sin() * (3.0 * phi + phases[1]).cos()
                    + 0.6 * (3.0 * lam + phases[2]).sin() * (2.0 * phi + phases[3]).sin()
                    + 0.4 * (5.0 * lam + phases[4]).cos() * (4.0 * phi + phases[5]).cos()
                    + if *la < -68.0 { 3.0 } else { 0.0 };
                base[c] = -1.0 + 29.5 * phi.cos().powi(2) + 1.2 * (2.0 * lam + phases[6]).sin() * phi.cos();
                amplitude[c] = 0.4 + 4.5 * (2.0 * phi).sin().abs() * (1.0 + 0.3 * (lam + phases[7]).cos());
            }
        }
        let mut kind = vec![0u8; nlat * nlon];
        if args.land_fraction > 0.0 {
            let mut sorted = land_score.clone();
            let k = (((1.0 - args.land_fraction) * sorted.len() as f64) as usize).min(sorted.len() - 1);
            let (_, threshold, _) = sorted.select_nth_unstable_by(k, f64::total_cmp);
            let threshold = *threshold;
            for (kd, s) in kind.iter_mut().zip(&land_score) {
                if *s >= threshold {
                    *kd = 1;
                }
            }
        }
        let ocean: Vec<usize> = (0..kind.len()).filter(|&c| kind[c] == 0).collect();
        let n_dead = args.all_missing_cells.min(ocean.len());
        for k in 0..n_dead {
            kind[ocean[k * ocean.len() / n_dead.max(1)]] = 2;
        }
        Field { nlat, nlon, lat, lon, kind, base, amplitude }
    }

    /// Values (degrees Celsius, NaN = missing) of every cell on `date`, `(lat, lon)` order.
    fn day(&self, args: &GenerateOptions, date: Date, out: &mut [f64]) {
        let doy = f64::from(date.ordinal());
        let season = |peak: f64| (std::f64::consts::TAU * (doy - peak) / 365.25).cos();
        let (north, south) = (season(227.0), season(46.0));
        let trend = 0.018 * f64::from(date.year - 2005);
        let year_phase = unit(hash(&[args.seed, 91, date.year as u64])) * std::f64::consts::TAU;
        let year_amp = 0.6 * (unit(hash(&[args.seed, 92, date.year as u64])) - 0.5);
        let lon_pattern: Vec<f64> = self.lon.iter().map(|l| (l.to_radians() * 2.0 + year_phase).sin()).collect();
        let day = date.to_days() as u64;
        for j in 0..self.nlat {
            let icy = self.lat[j].abs() >= 70.0;
            let hemi = if self.lat[j] >= 0.0 { north } else { south };
            let lat_pattern = year_amp * (self.lat[j].to_radians() * 3.0).cos();
            for (i, lon_term) in lon_pattern.iter().enumerate() {
                let c = j * self.nlon + i;
                let h = hash(&[args.seed, c as u64, day]);
                let missing_p = if icy { args.ice_missing_fraction } else { args.missing_fraction };
                if self.kind[c] != 0 || unit(mix(h)) < missing_p {
                    out[c] = f64::NAN;
                    continue;
                }
                let noise = 0.6 * (unit(h) + unit(mix(h ^ 0xA5A5)) - 1.0);
                let v = self.base[c] + self.amplitude[c] * hemi + trend + lat_pattern * lon_term + noise;
                let v = v.max(-1.8);
                out[c] = if args.quantum > 0.0 { (v / args.quantum).round() * args.quantum } else { v };
            }
        }
    }
}

/// Fill `pool` with the values `generate` would write for the dates `slots` (one per pool slot,
/// cells in (lat, lon) order), without files: for kernel benchmarks.
pub fn fill_pool<T: crate::pool::Sample>(args: &GenerateOptions, slots: &[Date], pool: &mut crate::pool::Pool<T>) {
    fill_pool_with(args, slots, pool, T::from_f64)
}

/// `fill_pool` with each value stored as `store` makes it (e.g. packed into integers).
pub fn fill_pool_with<T: crate::pool::Sample>(
    args: &GenerateOptions,
    slots: &[Date],
    pool: &mut crate::pool::Pool<T>,
    store: impl Fn(f64) -> T + Sync,
) {
    use rayon::prelude::*;
    let field = Field::new(args);
    let n = field.nlat * field.nlon;
    assert_eq!(pool.n_cells(), n, "pool sized for the grid");
    pool.slots_mut().into_par_iter().zip(slots.par_iter()).for_each_init(
        || vec![0.0; n],
        |buf, (row, &date)| {
            field.day(args, date, buf);
            for (d, v) in row.iter_mut().zip(buf.iter()) {
                *d = store(*v);
            }
        },
    );
}

/// Write the files `index`, `index + count`, ... calling `done(i)` after each.
fn write_share(
    args: &GenerateOptions,
    template: &Template,
    index: usize,
    count: usize,
    done: impl Fn(usize),
) -> Result<GenerateReport, GenerateError> {
    let start = Instant::now();
    let field = Field::new(args);
    let mut files = 0;
    for (i, (path, dates)) in self::files(args, template).into_iter().enumerate().filter(|(i, _)| i % count == index) {
        write_file(args, &field, &dates, &path).map_err(|cause| GenerateError::Write { path: path.clone(), cause })?;
        files += 1;
        done(i);
    }
    Ok(GenerateReport { files, bytes: 0, seconds: start.elapsed().as_secs_f64(), processes: 1, up_to_date: false })
}
