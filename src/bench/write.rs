//! `sstclim bench-write` (hidden): what writing a job's outputs costs, through libnetcdf and
//! through the direct path with several thread counts, on synthetic results (30% missing
//! cells) for a grid and target days like the reference job's (184 per-doy files of
//! 1440x721 float64). Each case creates the files in this process, locates them, writes every
//! tile and segment of target days, and moves them into place; each stage is timed and the
//! files are deleted (after a `sync`, outside the timings) before the next repeat.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use crate::calendar::Calendar;
use crate::error::Error;
use crate::input::{Coord, Grid, Region, VarMeta};
use crate::output::{OutputLayout, OutputMeta, OutputSet, OutputSpec, WritePath};
use crate::plan::values::{DoyList, GridSize};
use crate::stats::percentile::{Method, Percentile};
use crate::stats::{StatSpec, TileResult};
use crate::window::WindowSpec;

/// Flags of `sstclim bench-write`.
#[derive(clap::Args, Debug)]
pub struct BenchWriteArgs {
    /// Directory to write into (emptied of this benchmark's files after each repeat).
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long, default_value = "1440x721")]
    pub grid: GridSize,
    /// Target days: with the mean and P90, 2 files per day in the per-doy layout.
    #[arg(long, default_value = "152-243")]
    pub doys: DoyList,
    #[arg(long, value_enum, default_value_t = OutputLayout::PerDoy)]
    pub layout: OutputLayout,
    /// Bands of latitude rows written one after another (as tiles are).
    #[arg(long, default_value_t = 1)]
    pub tiles: usize,
    /// Segments of target days written one after another (as the pipeline does).
    #[arg(long, default_value_t = 2)]
    pub segments: usize,
    /// Thread counts of the direct path to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub threads: Vec<usize>,
    /// Deflate level of the outputs (compressed chunks on the write threads; default none).
    #[arg(long)]
    pub deflate: Option<u8>,
    /// Stored type of the outputs.
    #[arg(long, value_enum, default_value_t = crate::output::OutputType::F64)]
    pub output_type: crate::output::OutputType,
    /// Repeats of every case (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Write the result as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One way of writing, measured.
#[derive(Debug, Serialize)]
pub struct WriteCase {
    pub name: String,
    pub write_path: WritePath,
    /// Whether the files were created for the direct path (allocated, never filled).
    pub preallocated: bool,
    /// Direct-writing threads (0: none, every file through libnetcdf).
    pub threads: usize,
    pub direct_files: usize,
    pub create_seconds: Vec<f64>,
    pub locate_seconds: Vec<f64>,
    pub write_seconds: Vec<f64>,
    pub finish_seconds: Vec<f64>,
    pub median_create: f64,
    pub median_locate: f64,
    pub median_write: f64,
    pub median_finish: f64,
    /// Data bytes over the median write time.
    pub write_gb_per_s: f64,
}

/// What `bench-write` measured.
#[derive(Debug, Serialize)]
pub struct WriteBench {
    pub grid: [usize; 2],
    pub layout: OutputLayout,
    pub files: usize,
    pub target_days: usize,
    pub tiles: usize,
    pub segments: usize,
    /// Bytes of statistic values written (every file's data variable).
    pub data_bytes: u64,
    pub repeats: usize,
    pub cases: Vec<WriteCase>,
}

impl WriteBench {
    pub fn table(&self) -> String {
        let mut out = format!(
            "{} files, {}x{} grid, {} target days, {:.2} GB of values; {} tile(s) x {} segment(s); median of {}\n\
             {:<16}{:>8}{:>11}{:>11}{:>11}{:>11}{:>10}\n",
            self.files,
            self.grid[0],
            self.grid[1],
            self.target_days,
            self.data_bytes as f64 / 1e9,
            self.tiles,
            self.segments,
            self.repeats,
            "case",
            "direct",
            "create s",
            "locate s",
            "write s",
            "finish s",
            "GB/s"
        );
        for c in &self.cases {
            out.push_str(&format!(
                "{:<16}{:>8}{:>11.3}{:>11.4}{:>11.3}{:>11.4}{:>10.2}\n",
                c.name,
                c.direct_files,
                c.median_create,
                c.median_locate,
                c.median_write,
                c.median_finish,
                c.write_gb_per_s
            ));
        }
        out
    }
}

/// The synthetic results of one tile and segment: stat s, target t, cell i; 30% missing.
fn synthetic(n_stats: usize, targets: std::ops::Range<usize>, region: &Region, nlon: usize) -> TileResult {
    let mut r = TileResult::new(n_stats, targets.len(), region.n_cells());
    let mut k = 0;
    for s in 0..n_stats {
        for t in targets.clone() {
            for row in region.rows.clone() {
                for col in region.cols.clone() {
                    let h = crate::util::rng::hash(&[s as u64, t as u64, (row * nlon + col) as u64]);
                    r.values[k] = if h % 10 < 3 { f64::NAN } else { crate::util::rng::unit(h) * 30.0 };
                    k += 1;
                }
            }
        }
    }
    r
}

impl WriteCase {
    /// A case before its first repeat: no times yet.
    fn new(name: String, write_path: WritePath, threads: usize) -> WriteCase {
        WriteCase {
            name,
            write_path,
            preallocated: write_path == WritePath::Auto,
            threads,
            direct_files: 0,
            create_seconds: vec![],
            locate_seconds: vec![],
            write_seconds: vec![],
            finish_seconds: vec![],
            median_create: 0.0,
            median_locate: 0.0,
            median_write: 0.0,
            median_finish: 0.0,
            write_gb_per_s: 0.0,
        }
    }
}

/// Even splits of `0..n` into `parts`.
fn bands(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts).map(|i| i * n / parts..(i + 1) * n / parts).collect()
}

/// The output metadata of the synthetic job: 90th percentile, 1991-2020, on a regular grid.
fn synthetic_meta(args: &BenchWriteArgs) -> OutputMeta {
    let nlat = args.grid.nlat;
    let nlon = args.grid.nlon;
    let coord = |dim: &str, n: usize, span: f64| {
        Coord::new(dim, (0..n).map(|i| -span / 2.0 + span * i as f64 / (n - 1).max(1) as f64).collect(), true)
    };
    let p90 = "90".parse::<Percentile>().expect("90 is a percentile");
    let method = Method::new(5).expect("method 5 exists");
    let stats = StatSpec { percentiles: vec![p90], method, min_samples: 1 };
    OutputMeta {
        stats,
        window: WindowSpec {
            years: 1991..=2020,
            doys: args.doys.0.clone(),
            half_window: 5,
            calendar: Calendar::Ordinal,
        },
        rules: crate::smooth::DayRules::default(),
        grid: Grid::regular(coord("lat", nlat, 180.0), coord("lon", nlon, 360.0)),
        input_var: "sst".into(),
        var_meta: VarMeta { units: Some("degree_Celsius".into()), long_name: None, standard_name: None },
        input_template: "synthetic".into(),
        missing_files: 0,
        history: "sstclim bench-write".into(),
    }
}

pub fn bench_write(args: &BenchWriteArgs) -> Result<WriteBench, Error> {
    let (nlat, nlon) = (args.grid.nlat, args.grid.nlon);
    let meta = synthetic_meta(args);
    let stats = meta.stats.clone();
    let n_targets = args.doys.0.len();
    let regions: Vec<Region> = bands(nlat, args.tiles).into_iter().map(|rows| Region { rows, cols: 0..nlon }).collect();
    let segments = bands(n_targets, args.segments);
    let results: Vec<Vec<TileResult>> = regions
        .iter()
        .map(|region| segments.iter().map(|seg| synthetic(stats.n_stats(), seg.clone(), region, nlon)).collect())
        .collect();
    let spec = |write_path, threads| OutputSpec {
        dir: args.dir.clone(),
        layout: args.layout,
        deflate: args.deflate,
        fill_value: 9.969_209_968_386_869e36,
        overwrite: true,
        write_path,
        write_threads: Some(threads),
        format: crate::output::OutputFormat {
            ty: args.output_type,
            // int16 packing of the synthetic values (0-30)
            scale: if args.output_type == crate::output::OutputType::I16 { 0.001 } else { 1.0 },
            ..crate::output::OutputFormat::default()
        },
    };
    crate::output::prepare_dir(&args.dir)?;
    // (name, path, threads, write the preallocated files through the library)
    let mut cases: Vec<(String, WritePath, usize, bool)> =
        vec![("library".into(), WritePath::Library, 1, false), ("library-nofill".into(), WritePath::Auto, 1, true)];
    cases.extend(args.threads.iter().map(|&t| (format!("direct-{t}"), WritePath::Auto, t.max(1), false)));
    let mut out = Vec::new();
    let mut files = 0;
    for (name, path, threads, library) in cases {
        let spec = spec(path, threads);
        let mut case = WriteCase::new(name, path, if library || path == WritePath::Library { 0 } else { threads });
        for _ in 0..args.repeats.max(1) {
            let start = Instant::now();
            let mut set = OutputSet::plan(&spec, &meta)?;
            set.create_files(&spec, &meta)?;
            case.create_seconds.push(start.elapsed().as_secs_f64());
            let start = Instant::now();
            if library {
                set.disable_direct();
            }
            set.mark_created();
            case.locate_seconds.push(start.elapsed().as_secs_f64());
            case.direct_files = set.direct_files();
            let start = Instant::now();
            for (region, per_segment) in regions.iter().zip(&results) {
                for (seg, result) in segments.iter().zip(per_segment) {
                    set.write_targets(region, seg.clone(), result)?;
                }
            }
            case.write_seconds.push(start.elapsed().as_secs_f64());
            let start = Instant::now();
            let paths = set.finish()?;
            case.finish_seconds.push(start.elapsed().as_secs_f64());
            files = paths.len();
            // SAFETY: sync has no preconditions; the written pages go to disk before the next repeat.
            unsafe { libc::sync() };
            for p in paths {
                std::fs::remove_file(&p).map_err(|cause| Error::Io { path: p.clone(), cause })?;
            }
        }
        let m = crate::bench::kernel::median;
        case.median_create = m(&case.create_seconds);
        case.median_locate = m(&case.locate_seconds);
        case.median_write = m(&case.write_seconds);
        case.median_finish = m(&case.finish_seconds);
        case.write_gb_per_s =
            (stats.n_stats() * n_targets * nlat * nlon * args.output_type.size()) as f64 / case.median_write / 1e9;
        out.push(case);
    }
    let bench = WriteBench {
        grid: [nlon, nlat],
        layout: args.layout,
        files,
        target_days: n_targets,
        tiles: regions.len(),
        segments: segments.len(),
        data_bytes: (stats.n_stats() * n_targets * nlat * nlon * args.output_type.size()) as u64,
        repeats: args.repeats.max(1),
        cases: out,
    };
    if let Some(path) = &args.json {
        super::write_record(&bench, path)?;
    }
    Ok(bench)
}
