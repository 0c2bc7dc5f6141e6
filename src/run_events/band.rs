//! One rank's share of `sstclim events`: its latitude rows cut into bands within `--max-mem`,
//! each band's files read into a pool by the pipeline's readers, every cell's series gathered
//! from it and its events detected and summarised in parallel, and the results appended to the
//! (staged) output files.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tracing::info;

use super::{EventsJobError, Prepared};
use crate::error::Error;
use crate::events::band::{bytes_per_cell, plan_bands};
use crate::events::climfile::BandClim;
use crate::events::summary::{block_average, STATS};
use crate::events::write::{EventsFile, SummaryFile};
use crate::events::{detect_cell, Days, Event, Params, Scratch};
use crate::input::direct::DirectLayout;
use crate::input::{Grid, Region, Storage, VarLayout};
use crate::pipeline::readers::{read_all, ReadJob, Rows};
use crate::pipeline::trace::Trace;
use crate::pool::{int16_decoding, Pool, Sample};
use crate::report::progress::Ui;

/// What a rank's share took.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Share {
    pub events: usize,
    pub bands: usize,
    pub read_seconds: f64,
    pub detect_seconds: f64,
    pub write_seconds: f64,
}

/// Detect and measure the events of latitude rows `rows`, writing them to `parts` (events,
/// summary) band by band.
pub fn compute_share(
    opts: &super::EventsOptions,
    p: &Prepared,
    rows: Range<usize>,
    parts: &[PathBuf],
    ui: &Ui,
) -> Result<Share, EventsJobError> {
    let (layout, grid, days) = (&p.layout, &p.grid, &p.days);
    let mut events_file = EventsFile::create(&parts[0], &p.meta, grid)?;
    let mut summary_file = SummaryFile::create(&parts[1], &p.meta, grid)?;
    let direct = match crate::input::contain::probe_direct(&p.first, layout).map_err(Error::from)? {
        Ok(d) => Some(d),
        Err(why) => {
            info!("reading with libnetcdf in forked readers: {} in {} {why}", layout.name, p.first.display());
            None
        }
    };
    let forked = direct.is_none();
    // the series in float64, decoded as `run`'s float64 pool decodes them (the climatology's
    // precision): int16 files keep their integers in the pool (2 bytes a day) and decode through
    // one float64 table when gathered, float32 files stay float32 (exact in float64), the rest
    // are held as float64
    let table = (layout.storage == Storage::I16 && layout.packing.quantize.is_none())
        .then(|| int16_decoding(|stored| layout.packing.decode(stored)));
    let value_bytes = match (&table, layout.storage) {
        (Some(_), _) => 2,
        (None, Storage::F32) => 4,
        _ => 8,
    };
    let budget = opts.max_mem.unwrap_or_else(crate::plan::memory::default_max_mem);
    let per_cell = bytes_per_cell(days.len(), value_bytes, p.clim.n_doy, days.n_years);
    let nlon = grid.nlon();
    let bands: Vec<Range<usize>> = if rows.is_empty() {
        Vec::new()
    } else {
        plan_bands(rows.len(), nlon, per_cell, budget)
            .ok_or(EventsJobError::Memory { budget, need: per_cell * nlon as u64 })?
            .into_iter()
            .map(|b| b.start + rows.start..b.end + rows.start)
            .collect()
    };
    info!(
        "rows {rows:?} of {} x {nlon} cells, {} days ({} files), {} band(s) of up to {} rows within {} MB",
        grid.nlat(),
        days.len(),
        p.files.len(),
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
    let mut share = Share { bands: bands.len(), ..Share::default() };
    let reading = Reading {
        files: &p.files,
        steps: &p.steps,
        layout,
        first: &p.first,
        grid,
        direct: direct.as_ref(),
        forked,
        threads,
        trace: &trace,
    };
    for (b, band) in bands.iter().enumerate() {
        let region = Region { rows: band.clone(), cols: 0..nlon };
        let t = Instant::now();
        let band_clim = p.clim.read_band(band.clone(), nlon)?;
        let cell0 = band.start * nlon;
        let mut read_s = 0.0;
        let detect = |t: Instant, read_s: &mut f64| {
            *read_s += t.elapsed().as_secs_f64();
            Instant::now()
        };
        let params = &opts.params;
        let (events, summary, t_detect) = match (&table, value_bytes) {
            (Some(table), _) => {
                let pool = reading.pool::<i16>(b, &region)?;
                let t = detect(t, &mut read_s);
                let value = |v: i16| table[(i32::from(v) + 32768) as usize];
                let (e, s) =
                    workers.install(|| detect_band(&pool, value, &p.slot_of_day, days, &band_clim, params, cell0));
                (e, s, t)
            }
            (None, 4) => {
                let pool = reading.pool::<f32>(b, &region)?;
                let t = detect(t, &mut read_s);
                let value = |v: f32| f64::from(v);
                let (e, s) =
                    workers.install(|| detect_band(&pool, value, &p.slot_of_day, days, &band_clim, params, cell0));
                (e, s, t)
            }
            _ => {
                let pool = reading.pool::<f64>(b, &region)?;
                let t = detect(t, &mut read_s);
                let (e, s) =
                    workers.install(|| detect_band(&pool, |v: f64| v, &p.slot_of_day, days, &band_clim, params, cell0));
                (e, s, t)
            }
        };
        share.read_seconds += read_s;
        share.detect_seconds += t_detect.elapsed().as_secs_f64();
        let t = Instant::now();
        events_file.append(&events, grid, days)?;
        summary_file.write_band(band.clone(), &summary)?;
        share.events += events.len();
        share.write_seconds += t.elapsed().as_secs_f64();
        progress.inc(1);
    }
    progress.finish_and_clear();
    let t = Instant::now();
    events_file.finish()?;
    summary_file.finish()?;
    share.write_seconds += t.elapsed().as_secs_f64();
    Ok(share)
}

/// How a band's files are read (the same for every band).
struct Reading<'a> {
    files: &'a [PathBuf],
    /// The time step of each file's day (0 for files of one step).
    steps: &'a [usize],
    layout: &'a VarLayout,
    first: &'a Path,
    grid: &'a Grid,
    direct: Option<&'a DirectLayout>,
    forked: bool,
    threads: usize,
    trace: &'a Trace,
}

impl Reading<'_> {
    /// Band `b`'s pool: one row per file (day), the cells of `region`.
    fn pool<T: Sample>(&self, b: usize, region: &Region) -> Result<Pool<T>, Error> {
        let n_cells = region.n_cells();
        let pool_bytes = self.files.len() * n_cells * std::mem::size_of::<T>();
        let alloc = |cause| Error::Alloc { bytes: pool_bytes, cause };
        // forked readers write into a mapping shared with them
        let mut pool: Pool<T> = if self.forked {
            Pool::new_shared(self.files.len(), n_cells).map_err(alloc)?
        } else {
            Pool::new(self.files.len(), n_cells).map_err(alloc)?
        };
        let rows = Rows::new(&mut pool);
        let job = ReadJob {
            files: self.files,
            steps: self.steps,
            layout: self.layout,
            first: self.first,
            grid: self.grid,
            region,
            check_grid: b == 0,
            threads: self.threads,
            direct: self.direct,
            forked: self.forked,
            readers: self.threads,
            tile: b,
        };
        // the readers stop when nobody listens: keep the receiver until they are done
        let (done, _listening) = crossbeam_channel::unbounded();
        let stop = AtomicBool::new(false);
        read_all(&job, None, &rows, self.trace, &stop, &done)?;
        drop(rows);
        Ok(pool)
    }
}

/// A chunk's events (global cell, event) and summaries (`[cell][stat][year]`).
type ChunkOut = (Vec<(usize, Event)>, Vec<f64>);

/// Cells a worker takes at a time: their series are gathered from the pool's rows (one row per
/// day) a few cache lines per day.
const CHUNK: usize = 64;

/// Detect and summarise every cell of a band: the events (global cell index, event) in cell
/// then time order, and the summaries as `[stat][year][cell of the band]`.
fn detect_band<T: Sample>(
    pool: &Pool<T>,
    value: impl Fn(T) -> f64 + Sync,
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
                series.resize(w * n_days, f64::NAN);
                for (d, slot) in slot_of_day.iter().enumerate() {
                    if let Some(s) = slot {
                        let row = &data[s * n_cells + cells.start..s * n_cells + cells.end];
                        for (c, v) in row.iter().enumerate() {
                            series[c * n_days + d] = value(*v);
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
