//! `sstclim events`: read the analysis series of the inputs band by band of cells, detect and
//! measure every cell's marine heatwaves (or cold spells) against a climatology, and write the
//! event catalogue and the per-year summaries ([`crate::events`]).
//!
//! Why a job of its own beside `run`: `run` cuts the days into segments and needs only a
//! window of days at a time; events need each cell's whole series, so the grid is cut into
//! bands of latitude rows within `--max-mem`, and each band's pool holds every day of every
//! analysis year. The files are read by the pipeline's readers (the direct path, or libnetcdf
//! in forked processes), the same as `run` reads them. Both outputs are staged and renamed into
//! place only once complete (`crate::output::publish`).

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rayon::prelude::*;
use tracing::info;

use crate::calendar::{Calendar, Date};
use crate::discover::discover;
use crate::error::Error;
use crate::events::band::{bytes_per_cell, plan_bands};
use crate::events::climfile::{BandClim, ClimFile};
use crate::events::summary::{block_average, STATS};
use crate::events::write::{EventsFile, Meta, SummaryFile};
use crate::events::{detect_cell, Days, Event, EventsError, Params, Scratch};
use crate::input::{self, Grid, Region, VarLayout};
use crate::output::publish;
use crate::percentile::Percentile;
use crate::pipeline::readers::{read_all, ReadJob, Rows};
use crate::pipeline::trace::Trace;
use crate::pool::Pool;
use crate::report::progress::Ui;

/// What `sstclim events` was asked to do.
#[derive(Clone, Debug)]
pub struct EventsOptions {
    pub input: String,
    pub output: PathBuf,
    pub var: Option<String>,
    pub years: RangeInclusive<i32>,
    pub climatology: PathBuf,
    /// The threshold's percentile (90 for heatwaves, 10 for cold spells by default).
    pub percentile: Percentile,
    pub params: Params,
    pub calendar: Calendar,
    pub max_mem: Option<u64>,
    pub threads: usize,
    pub allow_missing: bool,
    pub overwrite: bool,
    pub command_line: String,
}

/// What the job did.
#[derive(Debug)]
pub struct EventsOutcome {
    pub events: usize,
    pub cells: usize,
    pub bands: usize,
    pub files_read: usize,
    pub outputs: Vec<PathBuf>,
    pub read_seconds: f64,
    pub detect_seconds: f64,
    pub write_seconds: f64,
    pub seconds: f64,
    pub peak_rss: u64,
}

/// The job's errors: the shared stages' and the events stage's, and the few of its own.
#[derive(Debug, thiserror::Error)]
pub enum EventsJobError {
    #[error(transparent)]
    Job(#[from] Error),
    #[error(transparent)]
    Events(#[from] EventsError),
    #[error("{missing} of the {total} input files of --years {years} do not exist (first: {}); the analysis years must lie within the input's (--allow-missing treats missing days as missing values)", first.display())]
    YearsOutsideInput { missing: usize, total: usize, years: String, first: PathBuf },
    #[error("{}: exists; pass --overwrite to replace it", path.display())]
    Exists { path: PathBuf },
    #[error("--max-mem {budget} bytes cannot hold one row of cells ({need} bytes: every day of every analysis year); raise --max-mem or shorten --years")]
    Memory { budget: u64, need: u64 },
}

/// The output file names (`--cold` writes its own, so both can share a directory).
pub fn output_names(cold: bool) -> [&'static str; 2] {
    if cold {
        ["events_cold.nc", "summary_cold.nc"]
    } else {
        ["events.nc", "summary.nc"]
    }
}

/// Removes the staging directory unless the outputs were published.
struct Staged(PathBuf);

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `sstclim events`.
pub fn events(opts: &EventsOptions, ui: &Ui) -> Result<EventsOutcome, EventsJobError> {
    let t0 = Instant::now();
    let days = Days::of_years(opts.years.clone(), opts.calendar);
    let dates: Vec<Date> = days.epoch_days.iter().map(|&d| Date::from_days(d)).collect();
    let inputs = discover(&opts.input, &dates, true).map_err(Error::from)?;
    if !inputs.missing.is_empty() && !opts.allow_missing {
        return Err(EventsJobError::YearsOutsideInput {
            missing: inputs.missing.len(),
            total: dates.len(),
            years: format!("{}-{}", opts.years.start(), opts.years.end()),
            first: inputs.missing[0].clone(),
        });
    }
    let Some(first) = inputs.files.values().next().cloned() else {
        return Err(Error::NoInputs(dates.len()).into());
    };
    // a damaged header can crash the libraries: a child reads it first
    input::contain::survives(&first, "reading the header", || {
        let _ = inspect(&first, opts.var.as_deref());
    })
    .map_err(Error::from)?;
    let (layout, grid) = inspect(&first, opts.var.as_deref())?;
    let stat = opts.percentile.stat_name();
    let clim = ClimFile::open(&opts.climatology, &layout.name, &grid, opts.calendar, &stat)?;

    // outputs: refuse to replace unless asked, before anything is read
    crate::output::prepare_dir(&opts.output).map_err(Error::from)?;
    let names = output_names(opts.params.cold);
    let targets: Vec<PathBuf> = names.iter().map(|n| opts.output.join(n)).collect();
    if !opts.overwrite {
        if let Some(t) = targets.iter().find(|t| t.exists()) {
            return Err(EventsJobError::Exists { path: t.clone() });
        }
    }
    let _lock = crate::output::lock::JobLock::acquire(&opts.output, &opts.command_line).map_err(Error::from)?;
    let staging = publish::staging_dir(&opts.output);
    let staged = Staged(staging.clone());
    std::fs::create_dir_all(&staging).map_err(|cause| Error::Io { path: staging.clone(), cause })?;
    crate::util::signals::on_interrupt_remove(&staging);
    let staged_paths: Vec<PathBuf> = names.iter().map(|n| staging.join(n)).collect();

    let meta = Meta {
        input_var: layout.name.clone(),
        units: layout.meta.units.clone().unwrap_or_default(),
        years: (*opts.years.start(), *opts.years.end()),
        params: opts.params,
        threshold: stat.clone(),
        climatology: opts.climatology.display().to_string(),
        provenance: clim.provenance.clone(),
        history: format!("{} {}", crate::output::utc_timestamp(), opts.command_line),
    };
    let mut events_file = EventsFile::create(&staged_paths[0], &meta, &grid)?;
    let mut summary_file = SummaryFile::create(&staged_paths[1], &meta, &grid)?;

    // the days with a file, in date order: pool slot -> day
    let slot_of_day: Vec<Option<usize>> = {
        let mut next = 0;
        dates
            .iter()
            .map(|d| {
                inputs.files.contains_key(d).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    };
    let files: Vec<PathBuf> = inputs.files.values().cloned().collect();
    let direct = match input::contain::probe_direct(&first, &layout).map_err(Error::from)? {
        Ok(d) => Some(d),
        Err(why) => {
            info!("reading with libnetcdf in forked readers: {} in {} {why}", layout.name, first.display());
            None
        }
    };
    let forked = direct.is_none();

    let budget = opts.max_mem.unwrap_or_else(crate::plan::memory::default_max_mem);
    let per_cell = bytes_per_cell(days.len(), clim.n_doy, days.n_years);
    let (nlat, nlon) = (grid.nlat(), grid.nlon());
    let bands = plan_bands(nlat, nlon, per_cell, budget)
        .ok_or(EventsJobError::Memory { budget, need: per_cell * nlon as u64 })?;
    info!(
        "{} cells, {} days ({} files), {} band(s) of up to {} rows within {} MB",
        nlat * nlon,
        days.len(),
        files.len(),
        bands.len(),
        bands.iter().map(|b| b.len()).max().unwrap_or(0),
        budget >> 20
    );
    let threads = opts.threads.max(1);
    let workers = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Io { path: opts.output.clone(), cause: std::io::Error::other(e) })?;
    let trace = Trace::new(Instant::now());
    let progress = ui.bar(bands.len() as u64, "bands");
    let (mut read_s, mut detect_s, mut write_s, mut n_events) = (0.0, 0.0, 0.0, 0);
    for (b, rows) in bands.iter().enumerate() {
        let region = Region { rows: rows.clone(), cols: 0..nlon };
        let n_cells = region.n_cells();
        let t = Instant::now();
        let pool_bytes = files.len() * n_cells * 4;
        let alloc = |cause| Error::Alloc { bytes: pool_bytes, cause };
        let mut pool: Pool<f32> = if forked {
            Pool::new_shared(files.len(), n_cells).map_err(alloc)?
        } else {
            Pool::new(files.len(), n_cells).map_err(alloc)?
        };
        {
            let rows_of_pool = Rows::new(&mut pool);
            let job = ReadJob {
                files: &files,
                layout: &layout,
                first: &first,
                grid: &grid,
                region: &region,
                check_grid: b == 0,
                threads,
                direct: direct.as_ref(),
                forked,
                readers: threads,
                tile: b,
            };
            let (done, _keep) = crossbeam_channel::unbounded();
            let stop = AtomicBool::new(false);
            read_all(&job, None, &rows_of_pool, &trace, &stop, &done)?;
        }
        let band_clim = clim.read_band(rows.clone(), nlon)?;
        read_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        let cell0 = rows.start * nlon;
        let (events, summary) =
            workers.install(|| detect_band(&pool, &slot_of_day, &days, &band_clim, &opts.params, cell0));
        drop(pool);
        detect_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        events_file.append(&events, &grid, &days)?;
        summary_file.write_band(rows.clone(), &summary)?;
        n_events += events.len();
        write_s += t.elapsed().as_secs_f64();
        progress.inc(1);
    }
    progress.finish_and_clear();
    let t = Instant::now();
    events_file.finish()?;
    summary_file.finish()?;
    let pairs: Vec<(PathBuf, PathBuf)> = staged_paths.into_iter().zip(targets.iter().cloned()).collect();
    let published = publish::publish(&pairs, &staging.join(".previous"), 2).map_err(Error::from)?;
    let outputs = published.commit();
    drop(staged);
    write_s += t.elapsed().as_secs_f64();
    Ok(EventsOutcome {
        events: n_events,
        cells: nlat * nlon,
        bands: bands.len(),
        files_read: files.len(),
        outputs,
        read_seconds: read_s,
        detect_seconds: detect_s,
        write_seconds: write_s,
        seconds: t0.elapsed().as_secs_f64(),
        peak_rss: crate::report::timing::peak_rss_bytes(),
    })
}

/// Open the first file and read the variable's layout and grid from it.
fn inspect(first: &Path, var: Option<&str>) -> Result<(VarLayout, Grid), Error> {
    let file = input::open(first)?;
    let layout = VarLayout::inspect(&file, first, var, false)?;
    let grid = Grid::read(&file, first, &layout)?;
    Ok((layout, grid))
}

/// A chunk's events (global cell, event) and summaries (`[cell][stat][year]`).
type ChunkOut = (Vec<(usize, Event)>, Vec<f64>);

/// Cells a worker takes at a time: their series are gathered from the pool's rows (one row per
/// day) a few cache lines per day.
const CHUNK: usize = 64;

/// Detect and summarise every cell of a band: the events (global cell index, event) in cell
/// then time order, and the summaries as `[stat][year][cell of the band]`.
fn detect_band(
    pool: &Pool<f32>,
    slot_of_day: &[Option<usize>],
    days: &Days,
    clim: &BandClim,
    params: &Params,
    cell0: usize,
) -> (Vec<(usize, Event)>, Vec<f32>) {
    let n_cells = pool.n_cells();
    let data = pool.as_slice();
    let ny = days.n_years;
    let n_days = days.len();
    let chunks: Vec<ChunkOut> = (0..n_cells.div_ceil(CHUNK))
        .into_par_iter()
        .map_init(
            || (Scratch::default(), Vec::new(), Vec::new()),
            |(scratch, series, found), k| {
                let cells = k * CHUNK..((k + 1) * CHUNK).min(n_cells);
                let w = cells.len();
                // gather: series[c][day], reusing the worker's buffer
                series.clear();
                series.resize(w * n_days, f32::NAN);
                for (d, slot) in slot_of_day.iter().enumerate() {
                    if let Some(s) = slot {
                        let row = &data[s * n_cells + cells.start..s * n_cells + cells.end];
                        for (c, v) in row.iter().enumerate() {
                            series[c * n_days + d] = *v;
                        }
                    }
                }
                let mut events = Vec::new();
                let mut stats = vec![f64::NAN; w * STATS.len() * ny];
                for (c, cell) in cells.clone().enumerate() {
                    let cc = clim.cell(cell);
                    if !cc.has_values() {
                        continue;
                    }
                    found.clear();
                    detect_cell(&series[c * n_days..(c + 1) * n_days], days, cc, params, scratch, found);
                    block_average(found, days, &mut stats[c * STATS.len() * ny..(c + 1) * STATS.len() * ny]);
                    events.extend(found.drain(..).map(|e| (cell0 + cell, e)));
                }
                (events, stats)
            },
        )
        .collect();
    let mut events = Vec::new();
    let mut summary = vec![f32::NAN; STATS.len() * ny * n_cells];
    for (k, (ev, stats)) in chunks.into_iter().enumerate() {
        events.extend(ev);
        for (c, per_cell) in stats.chunks_exact(STATS.len() * ny).enumerate() {
            let cell = k * CHUNK + c;
            for (i, v) in per_cell.iter().enumerate() {
                // per_cell[stat * ny + year] -> summary[(stat * ny + year) * n_cells + cell]
                summary[i * n_cells + cell] = *v as f32;
            }
        }
    }
    (events, summary)
}
