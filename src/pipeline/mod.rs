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
//! ([`tuning::model`]): a model of this pipeline predicts the wall time of R = 1..=16 from the
//! read, compute and write rates earlier runs measured on this machine ([`tuning::rates`],
//! recorded at the end of every run), counting the days neighbouring segments both stage and, on the CPU, the
//! cores reading and computing share; the fastest R whose result buffers fit `--max-mem` (and
//! a device-resident pool's `--max-device-mem`) is taken. Tiles are planned for the leanest
//! candidate's buffers, so a tight limit means more segments rather than more tiles. Without
//! measured rates the defaults ([`tuning::decide::auto_segments`]) stand, raised to what the
//! memory needs.
//!
//! GPU engines keep the pool in device memory (`--gpu-pool device`, see [`stage`]): readers
//! decode into a few pinned staging rows that one upload thread copies in, so there is no host
//! pool to commit, pin and unpin. Otherwise (`--gpu-pool host`, `--verify`, `--pack-scale`,
//! forked readers, or a pool too large for the device) the pool is committed in host memory
//! first, then pinned while the first files are read. Kernels compile while files are read.
//! Segments are written one after another, each by several threads with `pread`'s twin
//! `pwrite` where the outputs allow it (see [`crate::output`]).
//!
//! This module runs a job tile by tile and reports it; [`job`] is the job it is handed and its
//! tiles, `tile` the steps of one tile, and the stages are `readers` (with `locate` and
//! [`stage`]), `setup` (a device's pinning and kernel), `compute` and `results` (the buffers
//! and the writer); [`tuning`] chooses the segments ([`segments`]); [`trace`] records the
//! timeline.

mod compute;
mod context;
mod held;
pub mod job;
pub mod locate;
pub mod readers;
mod results;
pub mod segments;
mod setup;
pub(crate) mod sink;
pub mod stage;
mod tile;
pub mod trace;
pub mod tuning;
mod units;

use std::time::{Duration, Instant};

use tracing::info;

use context::{TileCtx, Totals};
pub(crate) use job::Job;
pub use job::RunOutcome;
use tile::run_tile;
use trace::Trace;
use tuning::decide::{choose_segments, record_rates, Chosen};
use tuning::model::{Memory, SegShape};
use tuning::rates::RatesKey;

use crate::engine::{check_gpu_limits, Engine};
use crate::error::Error;
use crate::input::direct::DirectLayout;
use crate::output::{utc_timestamp, OutputMeta, OutputSet};
use crate::plan::JobPlan;
use crate::plan::Results;
use crate::plan::{GpuPool, ReadPath};
use crate::pool::{Decoding, Sample};
use crate::report::progress::Ui;
use crate::report::shares::WallShares;
use crate::report::timing::{peak_rss_bytes, RunReport, Stage, StageTimer};
use sink::Sink;

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
/// depends on its fitting, which the engine says per tile
/// ([`crate::engine::DeviceEngine::stage_pool`]).
fn device_pool_allowed(plan: &JobPlan, on_device: bool, forked: bool) -> bool {
    on_device && !forked && !plan.verify && plan.pack.is_none() && plan.gpu_pool == GpuPool::Device
}

/// How a job's files are read: the direct path's layout where the first file allows it, whether
/// forked processes read (the rest), and the name of the path for reports and rates.
fn read_path(plan: &JobPlan, job: &Job) -> Result<(Option<DirectLayout>, bool, &'static str), Error> {
    if plan.source.memory().is_some() {
        return Ok((None, false, "memory"));
    }
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
    Ok((direct, forked, reads))
}

/// What every output file says of the job.
fn output_meta(plan: &JobPlan, job: &Job) -> OutputMeta {
    OutputMeta {
        stats: plan.stats.clone(),
        window: plan.window.clone(),
        rules: plan.rules,
        grid: job.grid.clone(),
        input_var: job.layout.name.clone(),
        var_meta: job.layout.meta.clone(),
        input_template: job.inputs.template.to_string(),
        missing_files: job.inputs.missing.len(),
        history: format!("{}: {} (sstclim {})", utc_timestamp(), plan.command_line, env!("CARGO_PKG_VERSION")),
    }
}

/// Run the job tile by tile: refuse what a GPU kernel cannot take, choose the segments and
/// tiles, create the outputs beside the first reads, run every tile, make the outputs durable,
/// and report (recording the measured rates for the next run).
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
    let on_device = engine.is_device();
    if on_device {
        // what the kernel cannot take on any device is refused before anything is read
        let window_days = job.window.targets.iter().map(|t| t.groups.len()).max().unwrap_or(1);
        check_gpu_limits(engine.name(), plan.stats.percentiles.len(), window_days)?;
    }
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .map_err(|cause| Error::WorkerThreads { threads: plan.threads, cause })?;
    let (n_slots, n_stats) = (job.window.slots.len(), plan.stats.n_stats());
    let (direct, forked, reads) = read_path(plan, job)?;
    let device_pool = device_pool_allowed(plan, on_device, forked);
    let pool_bytes = (n_slots * std::mem::size_of::<T>()) as u64;
    // what Feb 29 filling and smoothing hold beside the rotating result buffers (segments
    // kept for days still to be made, the days being made) depends on the segments: see
    // `SegShape::held`
    let memory = Memory {
        host_base: pool_bytes + (3 * plan.threads as u64 + 2) * job.layout.storage.size() as u64,
        result: (n_stats * 8 + 4) as u64,
        extra_results: usize::from(plan.verify),
        max_mem: plan.max_mem,
        device: plan.gpu.max_device_mem.filter(|_| device_pool).map(|max| (pool_bytes, max)),
    };
    let meta = output_meta(plan, job);
    let (mut outputs, mut creators) = sink(plan, job, &meta)?;
    let key = |location: &str| RatesKey {
        engine: engine.name().into(),
        device: engine.describe(),
        pool: T::NAME.into(),
        threads: plan.threads,
        pool_location: location.into(),
        reads: reads.into(),
    };
    let chosen = choose_segments(plan, job, engine, &memory, device_pool, &key)?;
    log_plan::<T>(plan, engine, &chosen, &memory, direct.as_ref());
    let Chosen { choice, segments, regions, reason } = chosen;
    let per_tile = |n: usize| (n * regions.len()) as u64;
    trace.show_progress(ui.stages(&[
        ("read", "files", per_tile(n_slots)),
        ("compute", "segments", per_tile(segments.len())),
        ("write", "segments", per_tile(segments.len())),
    ]));
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
        outputs = run_tile::<T>(&ctx, outputs, std::mem::take(&mut creators), &mut totals)?;
    }
    // made durable here (the write stage's cost), published by the caller once its reports are
    // written
    timer.time(Stage::Write, || trace.span("sync-outputs", 0, None, || (outputs.sync(), 0)))?;
    let paths = outputs.paths();
    add_stage_times(&mut timer, &trace, &totals);
    let facts = Facts { plan, job, engine, totals: &totals, timer: &timer, trace: &trace, wall };
    let report = run_report::<T>(&facts, &choice, reason, (regions.len(), segments.len()), paths.len());
    if let Some(path) = &plan.trace_json {
        trace.write_json(path, plan.rank.0, plan.rank.1).map_err(|cause| Error::Io { path: path.clone(), cause })?;
    }
    let mut report = report;
    if let (Some(path), false) = (&plan.rates, plan.verify) {
        // what this run measured, for the next one to choose its segments from
        let cells: Vec<usize> = regions.iter().map(|r| r.n_cells()).collect();
        let staged: Vec<usize> = segments.iter().map(|s| SegShape::of(s).staged).collect();
        let observed = tuning::observed::Observed::from_spans(&trace.spans(), &cells, &staged, !on_device);
        let location = if totals.device_pool { "device" } else { "host" };
        report.rates_recorded = record_rates(path, &key(location), &observed);
    }
    Ok(Computed { report, outputs })
}

/// Where the results go: the output files, checked now and created by forked processes (before
/// any pool exists, so none of its pages are copied on write) while a device starts and the
/// first files are read; or arrays in memory.
fn sink(
    plan: &JobPlan,
    job: &Job,
    meta: &OutputMeta,
) -> Result<(Sink, Vec<crate::input::child::Child>), Error> {
    Ok(match plan.results {
        Results::Files => {
            let mut files = OutputSet::plan(&plan.output, meta)?;
            let creators = fork_output_creators(&mut files, &plan.output, meta);
            (Sink::Files(files), creators)
        }
        Results::Memory => {
            let (doys, grid) = (plan.window.doys.clone(), (job.grid.nlat(), job.grid.nlon()));
            let calendars = (plan.window.calendar, job.inputs.calendar);
            (Sink::memory(plan.stats.names(), doys, grid, calendars), Vec::new())
        }
    })
}

/// What a run's report is made from.
struct Facts<'a> {
    plan: &'a JobPlan,
    job: &'a Job,
    engine: &'a dyn Engine,
    totals: &'a Totals,
    timer: &'a StageTimer,
    trace: &'a Trace,
    wall: Instant,
}

/// The run's report: what it read, computed and wrote, and where the time went (`shape`: its
/// tiles and segments).
fn run_report<T: Sample>(
    f: &Facts<'_>,
    choice: &tuning::model::Choice,
    reason: String,
    shape: (usize, usize),
    outputs: usize,
) -> RunReport {
    let Facts { plan, job, engine, totals, timer, trace, wall } = *f;
    let ((tiles, segments), n_slots) = (shape, job.window.slots.len());
    let wall_seconds = wall.elapsed().as_secs_f64();
    RunReport {
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
        target_days: job.window.targets.len(),
        tiles,
        segments,
        pool_location: if totals.device_pool { "device" } else { "host" },
        files_read: n_slots,
        files_missing: job.inputs.missing.len(),
        file_reads: n_slots * tiles,
        files_direct: totals.read.direct_files,
        files_library: totals.read.library_files,
        bytes_read: totals.read.bytes,
        bytes_decompressed: totals.read.inflated,
        outputs,
        verified: plan.verify,
        stage_seconds: RunReport::stage_seconds(timer),
        wall_seconds,
        wall_shares: WallShares::from_spans(trace.spans().iter().map(|s| (s.stage, s.start, s.end)), wall_seconds),
        span_totals: trace.totals(),
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
    }
}

/// Log the segments and tiles chosen, and how files will be read.
fn log_plan<T: Sample>(
    plan: &JobPlan,
    engine: &dyn Engine,
    chosen: &Chosen,
    memory: &Memory,
    direct: Option<&DirectLayout>,
) {
    let Chosen { segments, regions, reason, .. } = chosen;
    let per_cell = memory.host_per_cell(&tuning::decide::shapes(plan, segments));
    tracing::debug!("{} segment(s): {reason}", segments.len());
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
        match direct {
            Some(d) => format!(
                "direct reads at byte {} ({:?}, files located {})",
                d.offset,
                d.format,
                if d.parsed { "by the reader threads" } else { "through libhdf5" }
            ),
            None => "reads through libnetcdf".into(),
        }
    );
}

/// The stages' times over all tiles, as the run report gives them.
fn add_stage_times(timer: &mut StageTimer, trace: &Trace, totals: &Totals) {
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
}

/// A run's report and its outputs, complete in their staging directory but not published.
pub(crate) struct Computed {
    pub report: RunReport,
    pub outputs: Sink,
}

/// Fork the processes that create the output files (libhdf5 work that would otherwise hold the
/// library lock while files are read), each every `n`-th file: creating a file is HDF5's
/// metadata work on one core, and a full year's per-doy outputs are over a thousand files.
/// None where a fork failed (the writer then creates every file itself).
fn fork_output_creators(
    outputs: &mut OutputSet,
    spec: &crate::output::OutputSpec,
    meta: &OutputMeta,
) -> Vec<crate::input::child::Child> {
    let n = creator_processes(outputs.file_count());
    let mut children = Vec::with_capacity(n);
    for k in 0..n {
        // SAFETY: the body only creates files through libnetcdf (under the library lock the
        // child holds).
        let forked =
            unsafe { crate::input::child::fork_child(|_| i32::from(outputs.create_share(spec, meta, k, n).is_err())) };
        match forked {
            Ok((pid, _pipe)) => children.push(crate::input::child::Child::new(pid)),
            // dropping the others ends them: the writer makes every file
            Err(_) => return Vec::new(),
        }
    }
    children
}

/// Processes creating `files` output files: one per 64 files, up to half the cores (the
/// readers run meanwhile) and at most 8.
fn creator_processes(files: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    files.div_ceil(64).min(cores / 2).clamp(1, 8)
}
