//! The rank-local pipeline of one tile of cells: readers fill the pool slot by slot (in date
//! order), the engine computes a segment of target days as soon as the slots its windows need
//! are in, and the writer thread writes each segment's results, so reading, computing and
//! writing overlap:
//!
//! ```text
//! read     [seg 0 files][seg 1 files][seg 2 files][seg 3 files]
//! compute              [seg 0]      [seg 1]      [seg 2]      [seg 3]
//! write                       [seg 0]      [seg 1]      [seg 2]      [seg 3]
//! ```
//!
//! With one segment (`--segments 1`) this is the sequential path: read everything, compute,
//! write; it stays as the reference the overlapped runs must equal bitwise.
//!
//! The number of segments R is `--segments` where given. Otherwise it is chosen per job
//! ([`choose`]): a model of this pipeline predicts the wall time of R = 1..=16 from the read,
//! compute and write rates earlier runs measured on this machine ([`rates`], recorded at the
//! end of every run), counting the days neighbouring segments both stage and, on the CPU, the
//! cores reading and computing share; the fastest R whose result buffers fit `--max-mem` (and
//! a device-resident pool's `--max-device-mem`) is taken. Tiles are planned for the leanest
//! candidate's buffers, so a tight limit means more segments rather than more tiles. Without
//! measured rates the defaults ([`choice::auto_segments`]) stand, raised to what the memory needs.
//!
//! GPU engines keep the pool in device memory (`--gpu-pool device`, see [`stage`]): readers
//! decode into a few pinned staging rows that one upload thread copies in, so there is no host
//! pool to commit, pin and unpin. Otherwise (`--gpu-pool host`, `--verify`, `--pack-scale`,
//! forked readers, or a pool too large for the device) the pool is committed in host memory
//! first, then pinned while the first files are read. Kernels compile while files are read.
//! Segments are written one after another, each by several threads with `pread`'s twin
//! `pwrite` where the outputs allow it (see [`crate::output`]).

pub mod choice;
pub mod choose;
pub mod locate;
pub mod rates;
pub mod readers;
pub mod segments;
pub mod stage;
pub mod trace;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tracing::info;

use choice::{choose_segments, record_rates, Chosen};
use choose::{Memory, SegShape};
use locate::Locating;
use rates::RatesKey;
pub use readers::ReadPath;
use readers::{read_all, ReadJob, ReadStats, Rows};
use segments::Segment;
use stage::Staging;
use trace::Trace;

use crate::cli::GpuPool;
use crate::engine::{check_gpu_limits, DeviceEngine, Engine, EngineTimes, PoolKind, ReferenceEngine, TileResult};
use crate::error::Error;
use crate::input::direct;
use crate::output::{utc_timestamp, OutputMeta, OutputSet};
use crate::plan::JobPlan;
use crate::pool::{Decoding, Pool, Sample};
use crate::report::progress::Ui;
use crate::report::timing::{peak_rss_bytes, RunReport, Stage, StageTimer};
use crate::run::Job;

/// Whether files are read by forked reader processes (into a shared pool).
fn reads_forked(path: ReadPath, direct: bool) -> bool {
    match path {
        ReadPath::Forked => true,
        ReadPath::Auto => !direct,
        ReadPath::Library => false,
    }
}

/// Whether a tile's pool may live in device memory (decided here only): a device engine, unless
/// `--gpu-pool host` or something needs a host pool (the checks of `--verify` and
/// `--pack-scale`, and forked readers, which fill a shared mapping). Whether it does also
/// depends on its fitting, which the engine says per tile ([`DeviceEngine::stage_pool`]).
fn device_pool_allowed(plan: &JobPlan, engine: &dyn Engine, forked: bool) -> bool {
    engine.is_device() && !forked && !plan.verify && plan.pack.is_none() && plan.gpu_pool == GpuPool::Device
}

/// A segment's results on their way to the writer.
struct Finished {
    index: usize,
    targets: std::ops::Range<usize>,
    result: TileResult,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run_tiles<T: Sample>(
    plan: &JobPlan,
    job: &Job,
    engine: &dyn Engine,
    decoding: Option<Decoding>,
    ui: &Ui,
    mut timer: StageTimer,
    wall: Instant,
) -> Result<Computed, Error> {
    let trace = Trace::new(wall);
    if engine.is_device() {
        // what the kernel cannot take on any device is refused before anything is read
        let window_days = job.window.targets.iter().map(|t| t.groups.len()).max().unwrap_or(1);
        check_gpu_limits(engine.name(), plan.stats.percentiles.len(), window_days)?;
    }
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .map_err(|e| Error::Failed(format!("cannot start {} worker threads: {e}", plan.threads)))?;
    let (n_slots, n_targets, n_stats) = (job.window.slots.len(), job.window.targets.len(), plan.stats.n_stats());
    let direct = match plan.read_path {
        ReadPath::Library | ReadPath::Forked => None,
        ReadPath::Auto => match crate::input::contain::probe_direct(&job.first, &job.layout)? {
            Ok(d) => Some(d),
            Err(why) => {
                info!("reading with libnetcdf: {} in {} {why}", job.layout.name, job.first.display());
                None
            }
        },
    };
    let forked = reads_forked(plan.read_path, direct.is_some());
    let reads = match (forked, &direct) {
        (true, _) => "forked",
        (false, Some(_)) => "direct",
        (false, None) => "library",
    };
    let device_pool = device_pool_allowed(plan, engine, forked);
    let pool_bytes = (n_slots * std::mem::size_of::<T>()) as u64;
    let memory = Memory {
        host_base: pool_bytes + (3 * plan.threads as u64 + 2) * job.layout.storage.size() as u64,
        result: (n_stats * 8 + 4) as u64,
        extra_results: usize::from(plan.verify),
        max_mem: plan.max_mem,
        device: plan.gpu.max_device_mem.filter(|_| device_pool).map(|max| (pool_bytes, max)),
    };
    let meta = OutputMeta {
        stats: plan.stats.clone(),
        window: plan.window.clone(),
        grid: job.grid.clone(),
        input_var: job.layout.name.clone(),
        var_meta: job.layout.meta.clone(),
        input_template: job.inputs.template.to_string(),
        missing_files: job.inputs.missing.len(),
        history: format!("{}: {} (sstclim {})", utc_timestamp(), plan.command_line, env!("CARGO_PKG_VERSION")),
    };
    // checked now, created by a forked process (before any pool exists, so none of its pages
    // are copied on write) while a device starts and the first files are read
    let mut outputs = OutputSet::plan(&plan.output, &meta)?;
    let mut creator = fork_output_creator(&mut outputs, &plan.output, &meta);
    let key = |location: &str| RatesKey {
        engine: engine.name().into(),
        device: engine.describe(),
        pool: T::NAME.into(),
        threads: plan.threads,
        pool_location: location.into(),
        reads: reads.into(),
    };
    let chosen = choose_segments(plan, job, engine, &memory, device_pool, &key)?;
    let Chosen { choice, segments, regions, reason } = chosen;
    let per_cell = memory.host_per_cell(&segments.iter().map(SegShape::of).collect::<Vec<_>>());
    info!("{} segment(s): {reason}", segments.len());
    info!(
        "{} tile(s) of up to {} cells ({:.2} GB each) within --max-mem {:.2} GB; {} engine, {} pool; {} segment(s); \
         {}",
        regions.len(),
        regions[0].n_cells(),
        (regions[0].n_cells() as u64 * per_cell) as f64 / 1e9,
        plan.max_mem as f64 / 1e9,
        engine.name(),
        T::NAME,
        segments.len(),
        match &direct {
            Some(d) => format!(
                "direct reads at byte {} ({:?}, files located {})",
                d.offset,
                d.format,
                if d.parsed { "by the reader threads" } else { "through libhdf5" }
            ),
            None => "reads through libnetcdf".into(),
        }
    );
    let mut totals = Totals::default();
    for (i, region) in regions.iter().enumerate() {
        let ctx = TileCtx {
            plan,
            job,
            engine,
            decoding: decoding.as_ref(),
            device_pool,
            region,
            tile: i,
            segments: &segments,
            direct: direct.as_ref(),
            trace: &trace,
            threads: &threads,
            meta: &meta,
        };
        let bar = ui.spinner(&format!("tile {}/{}: reading, computing, writing", i + 1, regions.len()));
        outputs = run_tile::<T>(&ctx, outputs, creator.take(), &mut totals)?;
        bar.finish_and_clear();
    }
    // made durable here (the write stage's cost), published by the caller once its reports are
    // written
    timer.time(Stage::Write, || trace.span("sync-outputs", 0, None, || (outputs.sync(), 0)))?;
    let paths = outputs.paths();
    timer.add(Stage::Read, Duration::from_secs_f64(trace.extent("read")));
    // copies into a device-resident pool run on the upload thread, one at a time
    timer.add(Stage::HostToDevice, totals.device.h2d + Duration::from_secs_f64(trace.total("upload")));
    timer.add(Stage::Kernel, totals.device.kernel);
    timer.add(Stage::DeviceToHost, totals.device.d2h);
    timer.add(
        Stage::Compute,
        totals.compute.saturating_sub(totals.device.h2d + totals.device.kernel + totals.device.d2h),
    );
    timer.add(Stage::Verify, totals.verify);
    timer.add(Stage::Write, totals.write);
    let report = RunReport {
        sstclim_version: env!("CARGO_PKG_VERSION"),
        backend: engine.name().into(),
        device: engine.describe(),
        bytes_h2d: totals.device.bytes_h2d,
        bytes_d2h: totals.device.bytes_d2h,
        pin_seconds: totals.pin.as_secs_f64() + totals.device.pin.as_secs_f64(),
        kernel_launches: totals.device.launches,
        pool: T::NAME.into(),
        threads: plan.threads,
        grid: [job.grid.nlon(), job.grid.nlat()],
        cells: job.grid.n_cells(),
        target_days: n_targets,
        tiles: regions.len(),
        segments: segments.len(),
        pool_location: if totals.device_pool { "device" } else { "host" },
        files_read: n_slots,
        files_missing: job.inputs.missing.len(),
        file_reads: n_slots * regions.len(),
        files_direct: totals.read.direct_files,
        files_library: totals.read.library_files,
        bytes_read: totals.read.bytes,
        outputs: paths.len(),
        verified: plan.verify,
        stage_seconds: RunReport::stage_seconds(&timer),
        wall_seconds: wall.elapsed().as_secs_f64(),
        peak_rss_bytes: peak_rss_bytes(),
        max_mem_bytes: plan.max_mem,
        device_memory_bytes: totals.device_memory,
        max_device_mem_bytes: plan.gpu.max_device_mem,
        teardown_seconds: 0.0,
        startup_seconds: 0.0,
        segments_source: choice.source.name(),
        segments_reason: reason,
        segments_memory_min: choice.memory_min,
        segments_predicted_seconds: choice.predicted.clone(),
        rates_file: plan.rates.as_ref().map(|p| p.display().to_string()),
        rates_recorded: false,
    };
    if let Some(path) = &plan.trace_json {
        trace.write_json(path, plan.rank.0, plan.rank.1).map_err(|cause| Error::Io { path: path.clone(), cause })?;
    }
    let mut report = report;
    if let (Some(path), false) = (&plan.rates, plan.verify) {
        // what this run measured, for the next one to choose its segments from
        let cells: Vec<usize> = regions.iter().map(|r| r.n_cells()).collect();
        let staged: Vec<usize> = segments.iter().map(|s| SegShape::of(s).staged).collect();
        let observed = rates::Observed::from_spans(&trace.spans(), &cells, &staged, !engine.is_device());
        let location = if totals.device_pool { "device" } else { "host" };
        report.rates_recorded = record_rates(path, &key(location), &observed);
    }
    Ok(Computed { report, outputs })
}

/// A run's report and its outputs, complete in their staging directory but not published.
pub(crate) struct Computed {
    pub report: RunReport,
    pub outputs: OutputSet,
}

/// Sums over tiles.
#[derive(Default)]
struct Totals {
    device: EngineTimes,
    read: ReadStats,
    compute: Duration,
    verify: Duration,
    write: Duration,
    pin: Duration,
    device_memory: Option<u64>,
    /// Some tile's pool lived in device memory.
    device_pool: bool,
}

/// Everything one tile needs.
struct TileCtx<'a> {
    plan: &'a JobPlan,
    job: &'a Job,
    engine: &'a dyn Engine,
    /// An int16 pool's table (every pool of the job gets it: see [`TileCtx::pool_kind`]).
    decoding: Option<&'a Decoding>,
    /// The pool may live in device memory ([`device_pool_allowed`]).
    device_pool: bool,
    region: &'a crate::input::Region,
    tile: usize,
    segments: &'a [Segment],
    direct: Option<&'a direct::DirectLayout>,
    trace: &'a Trace,
    threads: &'a rayon::ThreadPool,
    meta: &'a OutputMeta,
}

impl TileCtx<'_> {
    /// The kind of the tile's pool, for the device calls made before it exists.
    fn pool_kind<T: Sample>(&self) -> PoolKind<'_> {
        PoolKind::of::<T>(self.decoding)
    }
}

/// Memory page-locked for the device, unpinned when dropped (before the memory is freed).
struct PinGuard<'a> {
    device: Option<&'a dyn DeviceEngine>,
    /// The pool at `map` is pinned.
    pool: bool,
    map: *const u8,
    ptrs: Vec<*const u8>,
}

impl Drop for PinGuard<'_> {
    fn drop(&mut self) {
        let Some(device) = self.device else { return };
        let pool = self.pool.then_some(self.map);
        for &ptr in pool.iter().chain(&self.ptrs) {
            // SAFETY: pinned through pin_host; the memory is still allocated (the guard is
            // dropped before the pool and the result buffers).
            if let Err(e) = unsafe { device.unpin_host(ptr) } {
                tracing::warn!("{e}");
            }
        }
    }
}

/// Result buffers a tile reuses: the compute thread fills one while the writer writes
/// another. On device engines they are page-locked, so results come back at full speed.
const RESULT_BUFFERS: usize = 2;

/// Result buffers being committed on their own thread, with when that started and ended.
type Committing = std::thread::JoinHandle<(Vec<TileResult>, Instant, Instant)>;

/// Commit a device engine's result buffers on a thread of their own: they need no device, so
/// this runs while a device that is still starting comes up (their pinning waits for it).
fn commit_result_buffers(ctx: &TileCtx<'_>, n_cells: usize) -> Result<Committing, Error> {
    let max_targets = ctx.segments.iter().map(|s| s.targets.len()).max().unwrap_or(0);
    let (n_stats, count) = (ctx.plan.stats.n_stats(), RESULT_BUFFERS.min(ctx.segments.len()));
    let threads = (ctx.plan.threads / 2).max(1);
    std::thread::Builder::new()
        .name("result-buffers".into())
        .spawn(move || {
            let start = Instant::now();
            let buffers = result_buffers(n_stats, max_targets, n_cells, threads, count);
            (buffers, start, Instant::now())
        })
        .map_err(|e| Error::Failed(format!("cannot start a thread to commit the result buffers: {e}")))
}

/// `count` result buffers of `max_targets` targets, every page written (committed) from
/// `threads` threads.
fn result_buffers(n_stats: usize, max_targets: usize, n_cells: usize, threads: usize, count: usize) -> Vec<TileResult> {
    (0..count)
        .map(|_| {
            let (nv, nc) = (n_stats * max_targets * n_cells, max_targets * n_cells);
            let mut values: Vec<f64> = Vec::with_capacity(nv);
            let mut counts: Vec<u32> = Vec::with_capacity(nc);
            crate::pool::advise_huge_pages(values.as_ptr().cast::<u8>(), nv * 8);
            crate::pool::advise_huge_pages(counts.as_ptr().cast::<u8>(), nc * 4);
            std::thread::scope(|s| {
                let spare_values = &mut values.spare_capacity_mut()[..nv];
                for part in spare_values.chunks_mut(nv.div_ceil(threads).max(1)) {
                    s.spawn(move || part.iter_mut().for_each(|v| _ = v.write(f64::NAN)));
                }
                let spare_counts = &mut counts.spare_capacity_mut()[..nc];
                for part in spare_counts.chunks_mut(nc.div_ceil(threads).max(1)) {
                    s.spawn(move || part.iter_mut().for_each(|v| _ = v.write(0u32)));
                }
            });
            // SAFETY: every element up to these lengths was written above.
            unsafe {
                values.set_len(nv);
                counts.set_len(nc);
            }
            TileResult { n_stats, n_targets: max_targets, n_cells, values, counts }
        })
        .collect()
}

/// Pin result buffers for the device; returns the addresses pinned.
fn pin_results(device: &dyn DeviceEngine, buffers: &[TileResult]) -> Vec<*const u8> {
    let mut pinned = Vec::new();
    for r in buffers {
        for (ptr, len) in [
            (r.values.as_ptr().cast::<u8>(), std::mem::size_of_val(&r.values[..])),
            (r.counts.as_ptr().cast::<u8>(), std::mem::size_of_val(&r.counts[..])),
        ] {
            // SAFETY: the buffers are unpinned (in run_tile) before they are dropped, and their
            // heap memory does not move while they are passed around.
            if len > 0 && unsafe { device.pin_host(ptr, len) }.unwrap_or(false) {
                pinned.push(ptr);
            }
        }
    }
    pinned
}

/// Read, compute and write one tile; `creator` is the process creating the output files (first
/// tile), which the writer waits for before its first write.
fn run_tile<T: Sample>(
    ctx: &TileCtx<'_>,
    outputs: OutputSet,
    creator: Option<crate::input::child::Child>,
    totals: &mut Totals,
) -> Result<OutputSet, Error> {
    let (plan, job, trace, tile, engine) = (ctx.plan, ctx.job, ctx.trace, ctx.tile, ctx.engine);
    let n_slots = job.window.slots.len();
    let n_cells = ctx.region.n_cells();
    let bytes = n_slots * n_cells * std::mem::size_of::<T>();
    // forked readers fill a shared mapping; every other reader writes from this process
    let forked = reads_forked(plan.read_path, ctx.direct.is_some());
    // children that need no pool are forked before it exists (no copy-on-write of its pages):
    // the ones locating the variable in every file through libhdf5 (where the first file's
    // header could not be parsed as the library reads it; else the reader threads locate the
    // files themselves); the one creating outputs was forked before the first tile
    let locating = ctx.direct.filter(|dl| !dl.parsed).map(|dl| {
        trace.span("fork-locate", tile, None, || {
            let grid = (tile == 0).then_some(&job.grid);
            (Locating::spawn(&job.files, dl, &job.layout, grid, (plan.threads / 4).clamp(1, 4)), 0)
        })
    });
    let device = engine.device();
    let committing = match device {
        Some(_) => Some(commit_result_buffers(ctx, n_cells)?),
        None => None,
    };
    // a device still starting is waited for here: an engine that failed to start ends the job
    trace.span("device-start", tile, None, || (device.map_or(Ok(()), |d| d.ready()), 0))?;
    // a device engine takes the pool into device memory where it may and it fits: then there is
    // no host pool
    let staged = match device {
        Some(dev) if ctx.device_pool => trace.span("stage-pool", tile, None, || {
            let plans: Vec<&crate::window::WindowPlan> = ctx.segments.iter().map(|s| &s.plan).collect();
            let staged = dev.stage_pool(ctx.pool_kind::<T>(), n_slots, n_cells, &plans, &plan.stats);
            let staged = staged.unwrap_or_else(|e| {
                tracing::warn!("keeping the pool in host memory: {e}");
                false
            });
            (staged, bytes as u64)
        }),
        _ => false,
    };
    let mut pool = if staged {
        None
    } else {
        let new_pool = if forked { Pool::<T>::new_shared } else { Pool::<T>::new };
        let mut pool = trace
            .span("alloc", tile, None, || (new_pool(n_slots, n_cells), bytes as u64))
            .map_err(|cause| Error::Alloc { bytes, cause })?;
        pool.set_decoding(ctx.decoding.cloned());
        if device.is_some() {
            // registering pages that are not faulted in is slow: commit them first, from all
            // threads, before the readers start (committing them beside the readers contends)
            trace.span("touch", tile, None, || (pool.touch(plan.threads), bytes as u64));
        }
        Some(pool)
    };
    let (map_ptr, map_len) = pool.as_ref().map_or((std::ptr::null(), 0), |p| p.mapping());
    let map_addr = map_ptr as usize; // a plain number, to hand to the set-up thread

    // staging rows for a device-resident pool: a few per reading thread, so that readers
    // rarely wait for a copy (`SSTCLIM_STAGING_ROWS`: rows per thread, for measuring)
    let stage = device.filter(|_| staged).map(|dev| {
        let per_thread = std::env::var("SSTCLIM_STAGING_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
        trace.span("stage-rows", tile, None, || {
            (Staging::<T>::new(dev, n_cells, per_thread * plan.threads, trace, tile), 0)
        })
    });
    // declared before the rows borrow the pool, so it unpins before the pool is unmapped
    let mut guard = PinGuard { device, pool: false, map: map_ptr, ptrs: Vec::new() };
    let decoding = ctx.decoding.cloned();
    let rows = match (&stage, pool.as_mut()) {
        (Some(stage), _) => Rows::staged(n_slots, n_cells, stage),
        (None, Some(pool)) => Rows::new(pool),
        (None, None) => unreachable!("a tile has a host pool or a device-resident one"),
    };
    let read_job = ReadJob {
        files: &job.files,
        layout: &job.layout,
        first: &job.first,
        grid: &job.grid,
        region: ctx.region,
        check_grid: tile == 0,
        threads: plan.threads,
        direct: ctx.direct,
        forked,
        readers: plan.readers,
        tile,
    };
    let stop = AtomicBool::new(false);
    let mut spare: Vec<TileResult> = Vec::new();
    let outcome = std::thread::scope(|s| {
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<(usize, u64)>();
        let (rows, read_job, stop) = (&rows, &read_job, &stop);
        // a device-resident pool's rows reach the device through one upload thread, which
        // reports them finished
        let uploads = stage.as_ref().map(|stage| {
            let done_tx = done_tx.clone();
            std::thread::Builder::new()
                .name("upload".into())
                .spawn_scoped(s, move || stage.upload_all(&done_tx, stop))
                .expect("spawning the upload thread")
        });
        let stage_ref = stage.as_ref();
        let reader = std::thread::Builder::new()
            .name("readers".into())
            .spawn_scoped(s, move || {
                let read = read_all(read_job, locating, rows, trace, stop, &done_tx);
                drop(done_tx);
                if let Some(stage) = stage_ref {
                    stage.close();
                }
                read
            })
            .expect("spawning the reader thread");
        // device set-up beside the reads: pin the pool, compile the kernel, pin the result
        // buffers (committed since the tile began)
        // (pool pinned, result buffers' pinned addresses, time, result buffers)
        type SetUp = (bool, Vec<*const u8>, Duration, Vec<TileResult>);
        let setup = committing.zip(device).map(|(committing, dev)| {
            let first = &ctx.segments[0];
            std::thread::Builder::new()
                .name("device-setup".into())
                .spawn_scoped(s, move || -> Result<SendPtrs<SetUp>, Error> {
                    let start = Instant::now();
                    let (buffers, pinned, result) = {
                        let mut pinned = Vec::new();
                        let prepared = if tile == 0 {
                            trace.span("prepare", tile, None, || {
                                (dev.prepare(ctx.pool_kind::<T>(), &first.plan, &plan.stats, n_cells), 0)
                            })
                        } else {
                            Ok(())
                        };
                        // SAFETY: the pool stays mapped until the guard unpins it, after the scope.
                        let ok = match map_len {
                            0 => Ok(false), // no host pool
                            _ => trace.span("pin", tile, None, || {
                                (unsafe { dev.pin_host(map_addr as *const u8, map_len) }, map_len as u64)
                            }),
                        };
                        let pool_pinned = ok.as_ref().is_ok_and(|&p| p);
                        let (buffers, from, to) = committing.join().expect("result buffer thread");
                        trace.record_between("result-buffers", tile, None, "result-buffers", from, to, 0);
                        pinned.extend(trace.span("pin-results", tile, None, || (pin_results(dev, &buffers), 0)));
                        (buffers, (pool_pinned, pinned), prepared.and(ok.map(|_| ())))
                    };
                    // the pinned addresses go back even on failure, to be unpinned
                    let ((pool_pinned, pinned), took) = (pinned, start.elapsed());
                    Ok(SendPtrs((pool_pinned, pinned, took, buffers), result.err().map(Error::from)))
                })
                .expect("spawning the device set-up thread")
        });
        let (res_tx, res_rx) = crossbeam_channel::bounded::<Finished>(1);
        let (back_tx, back_rx) = crossbeam_channel::unbounded::<TileResult>();
        let writer = std::thread::Builder::new()
            .name("writer".into())
            .spawn_scoped(s, move || -> (OutputSet, Result<Duration, Error>) {
                crate::input::silence_hdf5();
                let mut outputs = outputs;
                let start = Instant::now();
                let created = trace.span("create-outputs", tile, None, || {
                    // the creating process's files, or (if it failed) made here, with the error
                    let forked_ok = creator.is_some_and(crate::input::child::Child::wait);
                    if forked_ok {
                        outputs.mark_created();
                    }
                    (outputs.create_files(&plan.output, ctx.meta), 0)
                });
                let mut spent = start.elapsed();
                if let Err(e) = created {
                    return (outputs, Err(e.into()));
                }
                for f in res_rx {
                    let start = Instant::now();
                    let bytes = (f.result.values.len() * 4) as u64;
                    let r = trace.span("write", tile, Some(f.index), || {
                        (outputs.write_targets(ctx.region, f.targets.clone(), &f.result), bytes)
                    });
                    spent += start.elapsed();
                    let _ = back_tx.send(f.result);
                    if let Err(e) = r {
                        return (outputs, Err(e.into()));
                    }
                }
                (outputs, Ok(spent))
            })
            .expect("spawning the writer thread");

        let mut setup = setup;
        let mut join_setup = |guard: &mut PinGuard<'_>, totals: &mut Totals, spare: &mut Vec<TileResult>| {
            let Some(handle) = setup.take() else { return Ok(()) };
            let SendPtrs((pool_pinned, pinned, pin, buffers), err) = handle.join().expect("device set-up thread")?;
            guard.pool = pool_pinned;
            guard.ptrs.extend(pinned);
            totals.pin += pin;
            spare.extend(buffers);
            err.map_or(Ok(()), Err)
        };
        let computed = (|| -> Result<(), Error> {
            let mut ready = vec![false; n_slots];
            let mut made = 0;
            for (k, seg) in ctx.segments.iter().enumerate() {
                while !ready[seg.slots.clone()].iter().all(|&r| r) {
                    match done_rx.recv() {
                        Ok((slot, _)) => ready[slot] = true,
                        // the readers stopped early: their error is reported below
                        Err(_) => return Ok(()),
                    }
                }
                join_setup(&mut guard, totals, &mut spare)?;
                // a result buffer: a spare one, a new one (host engines), or one the writer is done with
                let mut result = match spare.pop() {
                    Some(r) => r,
                    None if made < RESULT_BUFFERS && device.is_none() => {
                        made += 1;
                        TileResult::new(plan.stats.n_stats(), seg.targets.len(), n_cells)
                    }
                    None => match back_rx.recv() {
                        Ok(r) => r,
                        Err(_) => return Ok(()), // the writer failed: its error is reported below
                    },
                };
                result.reshape(seg.targets.len());
                let computed = if let (Some(dev), true) = (device, rows.is_staged()) {
                    compute_staged_segment(ctx, dev, k, seg, &mut result, totals)
                } else {
                    // SAFETY: every slot of the segment has been reported finished by its reader.
                    let view = unsafe { rows.view(seg.slots.clone(), decoding.as_ref()) };
                    if let Some(q) = plan.pack {
                        check_packed_range(ctx, &q, seg, view)?;
                    }
                    compute_segment::<T>(ctx, k, seg, view, &mut result, totals)
                };
                if let Err(e) = computed {
                    spare.push(result);
                    return Err(e);
                }
                if let Err(back) = res_tx.send(Finished { index: k, targets: seg.targets.clone(), result }) {
                    spare.push(back.into_inner().result);
                    return Ok(()); // the writer failed: its error is reported below
                }
            }
            Ok(())
        })();
        if computed.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        drop(done_rx);
        drop(res_tx);
        let set_up = join_setup(&mut guard, totals, &mut spare);
        let read = reader.join().expect("reader thread");
        let uploaded = uploads.map_or(Ok(()), |u| u.join().expect("upload thread"));
        if let (Some(dev), true) = (device, staged) {
            dev.unstage_pool();
            totals.device_pool = true;
            totals.device.bytes_h2d += bytes as u64;
        }
        // nothing reads the pool any more: unpin and unmap it while the writer finishes
        if let (Some(dev), true) = (device, std::mem::take(&mut guard.pool)) {
            // SAFETY: pinned by the set-up thread (joined); the pool is still mapped.
            let unpinned = trace.span("unpin", tile, None, || (unsafe { dev.unpin_host(map_ptr) }, map_len as u64));
            if let Err(e) = unpinned {
                tracing::warn!("{e}");
            }
        }
        trace.span("free", tile, None, || (drop(pool), map_len as u64));
        let (outputs, written) = writer.join().expect("writer thread");
        spare.extend(back_rx.try_iter());
        // the first failure in pipeline order
        let run = (|| -> Result<(), Error> {
            let stats = read?;
            uploaded?;
            set_up?;
            computed?;
            totals.write += written?;
            totals.read.bytes += stats.bytes;
            totals.read.direct_files += stats.direct_files;
            totals.read.library_files += stats.library_files;
            Ok(())
        })();
        (outputs, run)
    });
    let (outputs, run) = outcome;
    if let Some(bytes) = device.and_then(|d| d.device_memory()) {
        totals.device_memory = Some(totals.device_memory.unwrap_or(0).max(bytes));
    }
    trace.span("unpin-results", tile, None, || (drop(guard), 0));
    drop(spare);
    run.map(|()| outputs)
}

/// Fork a process that creates the output files (libhdf5 work that would otherwise hold the
/// library lock while files are read); its pid, or None where forking failed (the writer then
/// creates them itself).
fn fork_output_creator(
    outputs: &mut OutputSet,
    spec: &crate::output::OutputSpec,
    meta: &OutputMeta,
) -> Option<crate::input::child::Child> {
    // SAFETY: the body only creates the files through libnetcdf (under the library lock the
    // child holds).
    let forked = unsafe { crate::input::child::fork_child(|_| i32::from(outputs.create_files(spec, meta).is_err())) };
    forked.map(|(pid, _pipe)| crate::input::child::Child::new(pid)).ok()
}

/// Pinned host addresses handed between threads (plain addresses; the memory they name is
/// owned elsewhere), with whatever went wrong.
struct SendPtrs<T>(T, Option<Error>);
// SAFETY: the raw pointers inside are only addresses to unpin later; nothing is dereferenced.
unsafe impl<T> Send for SendPtrs<T> {}

/// A lossy int16 packing marks values outside its range: refuse them, naming the first file.
fn check_packed_range<T: Sample>(
    ctx: &TileCtx<'_>,
    q: &crate::pool::Quantize,
    seg: &Segment,
    view: crate::pool::PoolView<'_, T>,
) -> Result<(), Error> {
    use rayon::prelude::*;
    let n = view.n_cells().max(1);
    let bad = ctx
        .threads
        .install(|| view.as_slice().par_chunks(n).position_first(|row| row.iter().any(|v| v.pack_overflow())));
    match bad {
        Some(i) => {
            let (lo, hi) = q.range();
            Err(Error::PackRange { path: ctx.job.files[seg.slots.start + i].clone(), lo, hi })
        }
        None => Ok(()),
    }
}

/// Compute one segment on the device-resident pool.
fn compute_staged_segment(
    ctx: &TileCtx<'_>,
    device: &dyn DeviceEngine,
    k: usize,
    seg: &Segment,
    result: &mut TileResult,
    totals: &mut Totals,
) -> Result<(), Error> {
    let plan = ctx.plan;
    let start = Instant::now();
    let times = ctx.trace.span("compute", ctx.tile, Some(k), || {
        (device.compute_staged(seg.slots.clone(), &seg.plan, &plan.stats, result), 0)
    })?;
    totals.compute += start.elapsed();
    totals.device.add(&times);
    Ok(())
}

/// Compute one segment (and check it against the reference engine with `--verify`).
fn compute_segment<T: Sample>(
    ctx: &TileCtx<'_>,
    k: usize,
    seg: &Segment,
    view: crate::pool::PoolView<'_, T>,
    result: &mut TileResult,
    totals: &mut Totals,
) -> Result<(), Error> {
    let (plan, engine, tile) = (ctx.plan, ctx.engine, ctx.tile);
    let n_stats = plan.stats.n_stats();
    let start = Instant::now();
    let bytes = std::mem::size_of_val(view.as_slice()) as u64;
    let times = ctx.trace.span("compute", tile, Some(k), || {
        (ctx.threads.install(|| engine.compute(T::wrap(view), &seg.plan, &plan.stats, result)), bytes)
    })?;
    totals.compute += start.elapsed();
    totals.device.add(&times);
    if plan.verify {
        let start = Instant::now();
        let mut want = TileResult::new(n_stats, seg.targets.len(), view.n_cells());
        ctx.trace.span("verify", tile, Some(k), || {
            (ctx.threads.install(|| ReferenceEngine.compute(T::wrap(view), &seg.plan, &plan.stats, &mut want)), 0)
        })?;
        totals.verify += start.elapsed();
        let differences = result.count_differences(&want);
        if differences > 0 {
            return Err(Error::Verify { tile, differences, engine: engine.name() });
        }
    }
    Ok(())
}
