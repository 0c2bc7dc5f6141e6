//! One rank's share of `sstclim events`: its latitude rows cut into bands within `--max-mem`,
//! each band's files read into a pool by the pipeline's readers (a reader thread one band
//! ahead of the detection), every cell's series gathered from it and its events detected and
//! summarised in parallel; the summaries written band by band, the events kept until the last
//! band and then written at once (the staged output files, or an MPI rank's parts).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tracing::info;

use super::{EventsJobError, KindValues, Prepared};
use crate::error::Error;
use crate::events::band::{cell_cost, plan_bands};
use crate::events::codes::Codes;
use crate::events::files::compressed::write_events as write_compressed;
use crate::events::files::direct::write_events;
use crate::events::columns::EventColumns;
use crate::events::files::schema::Meta;
use crate::events::EventsError;
use crate::events::files::summary_file::SummaryFile;
use crate::events::gpu::{self, Detector};
use crate::events::scan::{BandInput, Found, Kind};
use crate::input::direct::DirectLayout;
use crate::input::{Grid, Region, Storage, VarLayout};
use crate::pipeline::readers::{read_all, ReadJob, Rows};
use crate::pipeline::trace::Trace;
use crate::pool::{any_unheld, int16_decoding, Decoding, Pool, Sample};
use crate::report::progress::Ui;

/// What a rank's share took.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Share {
    pub events: usize,
    pub bands: usize,
    pub read_seconds: f64,
    pub detect_seconds: f64,
    pub write_seconds: f64,
    /// Time reading and detecting or writing at once (the next band read while one is
    /// detected and written).
    pub overlap_seconds: f64,
    /// Every read, detection and write as (stage, start, end), seconds since the job started.
    pub spans: Vec<(String, f64, f64)>,
}

/// When the reader, the detection and the writing were busy: each band's reading, detection
/// and writing (and the events' at the end).
#[derive(Default)]
struct Busy {
    read: Vec<(Instant, Instant)>,
    detect: Vec<(Instant, Instant)>,
    write: Vec<(Instant, Instant)>,
}

impl Busy {
    fn seconds(spans: &[(Instant, Instant)]) -> f64 {
        spans.iter().map(|(a, b)| (*b - *a).as_secs_f64()).sum()
    }

    /// Seconds the reader was busy while the detection or the writing was: the intervals'
    /// intersections (each list's intervals are disjoint, and a band's detection ends where its
    /// writing starts).
    fn overlapped(&self) -> f64 {
        let mut both = 0.0;
        for &(r0, r1) in &self.read {
            for &(w0, w1) in self.detect.iter().chain(&self.write) {
                let (a, b) = (r0.max(w0), r1.min(w1));
                if a < b {
                    both += (b - a).as_secs_f64();
                }
            }
        }
        both
    }

    /// Every span as (stage, start, end), seconds since `t0`; the stages as the run report's
    /// groups name them (detection is `compute`).
    fn spans(&self, t0: Instant) -> Vec<(String, f64, f64)> {
        let at = |t: Instant| t.saturating_duration_since(t0).as_secs_f64();
        let mut spans = Vec::new();
        for (stage, list) in [("read", &self.read), ("compute", &self.detect), ("write", &self.write)] {
            spans.extend(list.iter().map(|&(a, b)| (stage.to_string(), at(a), at(b))));
        }
        spans
    }
}

/// Where a share's events and summaries go: files (events, summary; two per kind), or each
/// kind's arrays in memory.
pub enum Into<'a> {
    /// `part`: an MPI rank's parts, which rank 0 joins ([`super::ranks`]): stored uncompressed
    /// and contiguous whatever the job asks, so that it reads them back raw.
    Files { paths: &'a [PathBuf], part: bool },
    Memory(&'a mut Vec<KindValues>),
}

/// Detect and measure the events of latitude rows `rows`, of every kind the job asks for,
/// into files or memory: the summaries band by band, the events (kept in memory across the
/// bands) at the end, so that events.nc is written at once, as one band writes it. Each
/// stage's spans are measured from `t0`, the job's start.
pub fn compute_share(
    opts: &super::EventsOptions,
    p: &Prepared,
    rows: Range<usize>,
    into: Into<'_>,
    (ui, t0): (&Ui, Instant),
) -> Result<Share, EventsJobError> {
    let memory = opts.source.memory();
    let direct = match memory {
        Some(_) => None,
        None => read_directly(p)?,
    };
    let held = Held::of(&p.layout);
    // a band of a chunked file (or one libnetcdf reads) inflates every chunk it touches
    // whole: one chunk a map (OISST's layout) is inflated again for every band
    let whole_chunks = direct.as_ref().map_or(memory.is_none(), |d| d.chunked);
    let bands = share_bands(opts, p, rows, (held.value_bytes, whole_chunks))?;
    let mut into = match into {
        Into::Files { paths, part } => Sink::Files(Outputs::create(p, paths, part)?),
        Into::Memory(kept) => Sink::Memory(kept),
    };
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
        layout: &p.layout,
        first: &p.first,
        grid: &p.grid,
        direct: direct.as_ref(),
        forked: direct.is_none() && memory.is_none(),
        threads,
        trace: &trace,
        memory,
    };
    let (backend, device) = opts.backend;
    let detector = Detector::start(backend, device).map_err(|e| EventsJobError::Options(e.to_string()))?;
    info!("events detected on {}", detector.name());
    let ctx = BandCtx { p, reading: &reading, held: &held, workers: &workers, detector: &detector };
    let mut busy = Busy::default();
    let run = run_bands(&ctx, (&bands, overlaps(threads)), &mut into, &mut share, &mut busy, &progress);
    progress.finish_and_clear();
    run?;
    let t = Instant::now();
    if let Sink::Files(outputs) = into {
        outputs.finish(p, &workers)?;
    }
    busy.write.push((t, Instant::now()));
    share.read_seconds = Busy::seconds(&busy.read);
    share.detect_seconds = Busy::seconds(&busy.detect);
    share.write_seconds = Busy::seconds(&busy.write);
    share.overlap_seconds = busy.overlapped();
    share.spans = busy.spans(t0);
    Ok(share)
}

/// Every band read, detected and its results put `into` files or memory. With `overlap`, a
/// reader thread reads band b + 1 while band b is detected and written, and waits to hand it
/// over (two bands at most are held); else one after the other.
fn run_bands(
    ctx: &BandCtx<'_>,
    (bands, overlap): (&[Range<usize>], bool),
    into: &mut Sink<'_>,
    share: &mut Share,
    busy: &mut Busy,
    progress: &indicatif::ProgressBar,
) -> Result<(), EventsJobError> {
    let mut done = |loaded: Loaded| -> Result<(), EventsJobError> {
        let (p, workers) = (ctx.p, ctx.workers);
        let t = Instant::now();
        let found = ctx.detect(&loaded)?;
        let band = loaded.band.clone();
        busy.read.push(loaded.read);
        drop(loaded);
        let detected = Instant::now();
        busy.detect.push((t, detected));
        share.events += found.iter().map(|f| f.n_events()).sum::<usize>();
        match into {
            Sink::Memory(kept) => keep_band(kept, &found, band, p.days.n_years),
            Sink::Files(outputs) => outputs.write_band(workers, found, band)?,
        }
        busy.write.push((detected, Instant::now()));
        progress.inc(1);
        Ok(())
    };
    if !overlap {
        return bands.iter().enumerate().try_for_each(|(b, band)| done(ctx.load(b, band.clone())?));
    }
    std::thread::scope(|s| -> Result<(), EventsJobError> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Loaded, EventsJobError>>(0);
        s.spawn(move || {
            for (b, band) in bands.iter().enumerate() {
                let loaded = ctx.load(b, band.clone());
                let failed = loaded.is_err();
                if tx.send(loaded).is_err() || failed {
                    break;
                }
            }
        });
        rx.iter().take(bands.len()).try_for_each(|loaded| done(loaded?))
    })
}

/// Where the bands' results go.
enum Sink<'a> {
    Files(Outputs<'a>),
    Memory(&'a mut Vec<KindValues>),
}

/// A share's files: each kind's summary, written band by band, and its events, kept until
/// every band is done and then written at once.
struct Outputs<'a> {
    paths: &'a [PathBuf],
    part: bool,
    summaries: Vec<SummaryFile>,
    events: Vec<Vec<EventColumns>>,
}

impl<'a> Outputs<'a> {
    fn create(p: &Prepared, paths: &'a [PathBuf], part: bool) -> Result<Outputs<'a>, EventsJobError> {
        let mut summaries = Vec::new();
        for (k, meta) in p.metas.iter().enumerate() {
            summaries.push(SummaryFile::create(&paths[2 * k + 1], &stored_as(meta, part), &p.grid, true)?);
        }
        Ok(Outputs { paths, part, summaries, events: vec![Vec::new(); p.metas.len()] })
    }

    /// A band's summaries into the files (every kind at once, each from every thread: pwrite
    /// or the chunk coder) and its events kept.
    fn write_band(&mut self, workers: &rayon::ThreadPool, found: Vec<Found>, band: Range<usize>) -> Result<(), EventsJobError> {
        use rayon::prelude::*;
        let written: Vec<Result<(), EventsError>> = workers.install(|| {
            found.par_iter().zip(self.summaries.par_iter_mut()).map(|(f, file)| file.write_band(band.clone(), &f.summary)).collect()
        });
        written.into_iter().collect::<Result<Vec<()>, _>>()?;
        for (kept, f) in self.events.iter_mut().zip(found) {
            kept.extend(f.events);
        }
        Ok(())
    }

    /// Every kind's events written at once (directly, or compressed with `--deflate`; a part
    /// always directly), and the summaries closed.
    fn finish(self, p: &Prepared, workers: &rayon::ThreadPool) -> Result<(), EventsJobError> {
        for file in self.summaries {
            file.finish()?;
        }
        let (grid, days) = (&p.grid, &p.days);
        let written: Vec<Result<(), EventsError>> = workers.install(|| {
            use rayon::prelude::*;
            self.events
                .par_iter()
                .enumerate()
                .map(|(k, chunks)| {
                    let (path, meta) = (&self.paths[2 * k], &stored_as(&p.metas[k], self.part));
                    match meta.store.deflate {
                        Some(level) => write_compressed(path, meta, (grid, days), chunks, level),
                        None => write_events(path, meta, grid, days, chunks),
                    }
                })
                .collect()
        });
        written.into_iter().collect::<Result<Vec<()>, _>>()?;
        Ok(())
    }
}

/// How a file of `meta` is stored: as the job asks, or uncompressed for an MPI rank's `part`.
pub fn stored_as(meta: &Meta, part: bool) -> Meta {
    let mut meta = meta.clone();
    if part {
        meta.store.deflate = None;
    }
    meta
}

/// The direct read path's layout where the first file allows it, else `None` (forked
/// libnetcdf readers).
fn read_directly(p: &Prepared) -> Result<Option<DirectLayout>, EventsJobError> {
    Ok(match crate::input::contain::probe_direct(&p.first, &p.layout).map_err(Error::from)? {
        Ok(d) => Some(d),
        Err(why) => {
            info!("reading with libnetcdf in forked readers: {} in {} {why}", p.layout.name, p.first.display());
            None
        }
    })
}

/// How the series are held: in float64, decoded as `run`'s float64 pool decodes them (the
/// climatology's precision). int16 files keep their integers in the pool (2 bytes a day) and
/// decode through one float64 table when scanned, unpacked float32 files stay float32 (exact in
/// float64), the rest (float32 with a scale or offset, whose decoded values need not be
/// float32) are held as float64.
struct Held {
    table: Option<Decoding>,
    codes: Option<Codes>,
    value_bytes: usize,
}

impl Held {
    fn of(layout: &VarLayout) -> Held {
        let table = (layout.storage == Storage::I16 && layout.packing.quantize.is_none())
            .then(|| int16_decoding(|stored| layout.packing.decode(stored)));
        let codes = table.as_deref().and_then(Codes::of);
        let unpacked = layout.packing.scale == 1.0 && layout.packing.offset == 0.0;
        let value_bytes = match (&table, layout.storage) {
            (Some(_), _) => 2,
            (None, Storage::F32) if unpacked => 4,
            _ => 8,
        };
        Held { table, codes, value_bytes }
    }
}

/// Threads from which the next band is read while one is detected: with fewer, reading
/// (inflating) and the scan only share the same cores, and on the 2-core VM 4 overlapped bands
/// took 1.35x one band where 4 bands in turn took about one band's time
/// (bench-results/runs/2026-12-08-vm-events-bands-s42).
const OVERLAP_THREADS: usize = 4;

/// Whether a job of `threads` threads reads the next band while one is detected.
fn overlaps(threads: usize) -> bool {
    threads >= OVERLAP_THREADS
}

/// Bands a share is cut into at least (where it has rows enough) when bands overlap, even
/// when it fits one: the first band's read is the only one not overlapped with detection, and
/// several bands cost no more writing than one. Not for chunked inputs, whose chunks each
/// band inflates again: on one-chunk-a-map files 4 bands read 2x as long as one
/// (bench-results/runs/2026-12-08-vm-events-bands-s42).
const MIN_BANDS: usize = 4;

/// Latitude rows `rows` cut into bands, two of which (and every band's events) fit `--max-mem`.
fn share_bands(
    opts: &super::EventsOptions,
    p: &Prepared,
    rows: Range<usize>,
    (value_bytes, whole_chunks): (usize, bool),
) -> Result<Vec<Range<usize>>, EventsJobError> {
    let (grid, days) = (&p.grid, &p.days);
    let budget = opts.max_mem.unwrap_or_else(crate::plan::memory::default_max_mem);
    let cost = cell_cost(days.len(), value_bytes, p.clims[0].n_doy(), days.n_years, p.kinds.len());
    let nlon = grid.nlon();
    let bands: Vec<Range<usize>> = if rows.is_empty() {
        Vec::new()
    } else {
        // two bands held at once where the next is read while one is detected
        let (pools, min_bands) = match overlaps(opts.threads.max(1)) {
            true if !whole_chunks => (2, MIN_BANDS),
            true => (2, 1),
            false => (1, 1),
        };
        let min_bands = crate::util::knobs::events_min_bands().unwrap_or(min_bands);
        let need = (pools as u64 * cost.band + rows.len() as u64 * cost.kept) * nlon as u64;
        plan_bands(rows.len(), nlon, cost, budget, pools, min_bands)
            .ok_or(EventsJobError::Memory { budget, need })?
            .into_iter()
            .map(|b| b.start + rows.start..b.end + rows.start)
            .collect()
    };
    info!(
        "rows {rows:?} of {} x {nlon} cells, {} days ({} files), {} kind(s) of event, {} band(s) of up to {} rows within {} MB",
        grid.nlat(),
        days.len(),
        p.files.len(),
        p.kinds.len(),
        bands.len(),
        bands.iter().map(|b| b.len()).max().unwrap_or(0),
        budget >> 20
    );
    Ok(bands)
}

/// What every band of a share reads, detects and writes with.
struct BandCtx<'a> {
    p: &'a Prepared,
    reading: &'a Reading<'a>,
    held: &'a Held,
    workers: &'a rayon::ThreadPool,
    /// The CPU scan or a GPU (`--backend`).
    detector: &'a Detector,
}

impl BandCtx<'_> {
    /// Band `b` (latitude rows `band`) read: its pool and its climatology rows.
    fn load(&self, b: usize, band: Range<usize>) -> Result<Loaded, EventsJobError> {
        let (p, workers) = (self.p, self.workers);
        let nlon = p.grid.nlon();
        let region = Region { rows: band.clone(), cols: 0..nlon };
        let started = Instant::now();
        // the climatology in its file's layout: the mean once, a threshold per kind
        let (mean, thresholds) = workers.install(|| -> Result<_, EventsJobError> {
            let mean = p.clims[0].mean_rows(band.clone(), nlon)?;
            let thresholds =
                p.clims.iter().map(|c| c.thresh_rows(band.clone(), nlon)).collect::<Result<Vec<_>, _>>()?;
            Ok((mean, thresholds))
        })?;
        let pool = match (&self.held.table, self.held.value_bytes) {
            (Some(_), _) => HeldPool::I16(self.reading.pool(b, &region)?),
            (None, 4) => HeldPool::F32(self.reading.pool(b, &region)?),
            _ => HeldPool::F64(self.reading.pool(b, &region)?),
        };
        Ok(Loaded { band, pool, mean, thresholds, read: (started, Instant::now()) })
    }

    /// Every kind's events detected in a band read by [`BandCtx::load`], on the job's
    /// detector (the CPU scan or a GPU): the one place detection is called.
    fn detect(&self, loaded: &Loaded) -> Result<Vec<Found>, EventsError> {
        let (p, workers) = (self.p, self.workers);
        let kinds: Vec<Kind> =
            p.kinds.iter().zip(&loaded.thresholds).map(|(params, thresh)| Kind { params: *params, thresh }).collect();
        let cell0 = loaded.band.start * p.grid.nlon();
        fn input<'a, T>(data: &'a [T], p: &'a Prepared, mean: &'a [f64]) -> BandInput<'a, T> {
            BandInput {
                data,
                n_cells: data.len() / p.files.len().max(1),
                slot_of_day: &p.slot_of_day,
                days: &p.days,
                mean,
                codes: None,
            }
        }
        let mean = &loaded.mean;
        match &loaded.pool {
            HeldPool::I16(pool) => {
                let table = self.held.table.as_ref().expect("int16 pools are decoded by the table");
                let value = |v: i16| table[(i32::from(v) + 32768) as usize];
                // compared as stored where the table orders the values
                let band = BandInput {
                    codes: self.held.codes.as_ref().map(|c| (c, pool.as_slice())),
                    ..input(pool.as_slice(), p, mean)
                };
                workers.install(|| gpu::detect(self.detector, &band, value, Some(&table[..]), &kinds, cell0))
            }
            HeldPool::F32(pool) => workers
                .install(|| gpu::detect(self.detector, &input(pool.as_slice(), p, mean), f64::from, None, &kinds, cell0)),
            HeldPool::F64(pool) => workers
                .install(|| gpu::detect(self.detector, &input(pool.as_slice(), p, mean), |v: f64| v, None, &kinds, cell0)),
        }
    }
}

/// A band's series as held ([`Held`]).
enum HeldPool {
    I16(Pool<i16>),
    F32(Pool<f32>),
    F64(Pool<f64>),
}

/// A band read: its rows, series and climatology rows (`[doy][cell of the band]`), and when
/// its reading started and ended.
struct Loaded {
    band: Range<usize>,
    pool: HeldPool,
    mean: Vec<f64>,
    thresholds: Vec<Vec<f64>>,
    read: (Instant, Instant),
}

/// A band's events and summaries into each kind's arrays in memory (bands come in row order,
/// so the catalogue is in the order the files hold it).
fn keep_band(kept: &mut [KindValues], found: &[Found], rows: Range<usize>, n_years: usize) {
    for (k, f) in kept.iter_mut().zip(found) {
        for chunk in &f.events {
            k.events.append(chunk);
        }
        // the band's `[stat][year][cell of the band]` into `[stat][year][cell]`
        let (n_cells, band) = (k.nlat * k.nlon, rows.start * k.nlon..rows.end * k.nlon);
        for (i, part) in f.summary.chunks(band.len()).enumerate() {
            let at = i * n_cells + band.start;
            k.summary[at..at + band.len()].copy_from_slice(part);
        }
        debug_assert_eq!(f.summary.len(), crate::events::summary::STATS.len() * n_years * band.len());
    }
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
    memory: Option<&'a crate::source::MemorySeries>,
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
            memory: self.memory,
        };
        // the readers stop when nobody listens: keep the receiver until they are done
        let (done, _listening) = crossbeam_channel::unbounded();
        let stop = AtomicBool::new(false);
        read_all(&job, None, &rows, self.trace, &stop, &done)?;
        self.check_held(&pool)?;
        Ok(pool)
    }

    /// A file packed unlike the first (its own scale or offset) whose decoded value is beyond
    /// the float32 series' range is refused, never taken for a missing day.
    fn check_held<T: Sample>(&self, pool: &Pool<T>) -> Result<(), Error> {
        if !T::may_not_hold(false) {
            return Ok(());
        }
        match (0..self.files.len()).find(|&s| any_unheld(pool.slot(s))) {
            None => Ok(()),
            Some(s) => Err(Error::PoolRange {
                path: self.files[s].clone(),
                var: self.layout.name.clone(),
                value: "a value".into(),
                pool: "the float32 series events keep for float32 input unpacked like the first file",
                remedy: "store it unpacked, or packed as the first file is",
            }),
        }
    }
}
