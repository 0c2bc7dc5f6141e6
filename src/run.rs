//! `sstclim run`: find the inputs, then for each tile of cells read every needed file into the
//! pool, compute the statistics, optionally verify them against the reference engine, and write
//! them; the outputs are moved into place only after the last tile.
//!
//! Memory stays within `--max-mem`: the grid is cut into bands along the files' slowest
//! horizontal dimension (so each read is one contiguous hyperslab), as many cells per band as
//! the pool and results allow. A band costs one open of every input file.

use std::path::PathBuf;
use std::time::Instant;

use tracing::info;

use crate::discover::{discover, Inputs};
use crate::engine::{Engine, EngineTimes, ReferenceEngine, TileResult};
use crate::error::Error;
use crate::input::{
    self, decode_region, read_forked, read_region, Grid, InputError, RawData, ReaderOptions, Region, Storage, VarLayout,
};
use crate::output::{self, utc_timestamp, OutputMeta, OutputSet};
use crate::plan::JobPlan;
use crate::pool::{int16_decoding, Decoding, Pool, PoolType, Sample};
use crate::progress::Ui;
use crate::timing::{peak_rss_bytes, RunReport, Stage, StageTimer};
use crate::window::{WindowPlan, WindowSpec};

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub report: RunReport,
    pub outputs: Vec<PathBuf>,
}

/// The resolved job: files, their layout and grid, and the window plan.
struct Job {
    inputs: Inputs,
    first: PathBuf,
    layout: VarLayout,
    grid: Grid,
    window: WindowPlan,
    /// The input file of each pool slot.
    files: Vec<PathBuf>,
}

/// A job's input files, and the variable's layout and grid as the first file has them.
pub struct FoundInputs {
    pub inputs: Inputs,
    pub first: PathBuf,
    pub layout: VarLayout,
    pub grid: Grid,
}

/// Discover the files `spec` needs and inspect the first one (shared with the MPI validation).
pub fn find_inputs(plan: &JobPlan, spec: &WindowSpec) -> Result<FoundInputs, Error> {
    let required = spec.required_dates();
    let inputs = discover(&plan.input, &required, plan.allow_missing)?;
    let Some(first) = inputs.files.values().next().cloned() else {
        return Err(Error::NoInputs(required.len()));
    };
    let file = input::open(&first)?;
    let layout = VarLayout::inspect(&file, &first, plan.var.as_deref(), false)?;
    let grid = Grid::read(&file, &first, &layout)?;
    Ok(FoundInputs { inputs, first, layout, grid })
}

impl Job {
    fn prepare(plan: &JobPlan) -> Result<Job, Error> {
        let FoundInputs { inputs, first, layout, grid } = find_inputs(plan, &plan.window)?;
        let window = WindowPlan::build(&plan.window, |d| inputs.files.contains_key(&d));
        let files = window.slots.iter().map(|d| inputs.files[d].clone()).collect();
        Ok(Job { inputs, first, layout, grid, window, files })
    }
}

/// Run the job `plan` describes.
pub fn run(plan: &JobPlan, ui: &Ui) -> Result<RunOutcome, Error> {
    let wall = Instant::now();
    let mut timer = StageTimer::default();
    output::prepare_dir(&plan.output.dir)?;
    let job = timer.time(Stage::Discover, || Job::prepare(plan))?;
    info!(
        "{} input files ({} missing) of {} '{}' ({}, {}), {} target days, {} pool slots",
        job.inputs.files.len(),
        job.inputs.missing.len(),
        job.layout.storage.name(),
        job.layout.name,
        job.layout.shape_text(),
        if job.layout.lat_is_slow() { "lat-lon order" } else { "lon-lat order" },
        job.window.targets.len(),
        job.window.slots.len()
    );
    let engine = plan.backend.engine(plan.device, &plan.gpu)?;
    let pool = plan.pool.unwrap_or_else(|| default_pool(engine.as_ref(), job.layout.storage));
    match pool {
        PoolType::F64 => run_tiles::<f64>(plan, &job, engine.as_ref(), None, ui, timer, wall),
        PoolType::F32 => run_tiles::<f32>(plan, &job, engine.as_ref(), None, ui, timer, wall),
        PoolType::I16 => {
            if !matches!(job.layout.storage, Storage::I16 | Storage::I8 | Storage::U8) {
                return Err(Error::Failed(format!(
                    "--pool i16 keeps the input's packed integers, but '{}' in {} is stored as {}; use f32 or f64 \
                     (packing float input into int16 is not implemented)",
                    job.layout.name,
                    job.first.display(),
                    job.layout.storage.name()
                )));
            }
            let packing = &job.layout.packing;
            let decoding = int16_decoding(|stored| packing.decode(stored));
            run_tiles::<i16>(plan, &job, engine.as_ref(), Some(decoding), ui, timer, wall)
        }
    }
}

/// The pool type when `--pool` is not given: on GPU engines, the input's own int16 integers
/// for int16-packed input (exact, a quarter of float64's bytes) and float32 for inputs stored
/// as floats (half the bytes; results equal the CPU engine on the same pool); float64 (exact)
/// on host engines.
fn default_pool(engine: &dyn Engine, storage: Storage) -> PoolType {
    match storage {
        Storage::I16 if engine.is_device() => PoolType::I16,
        Storage::F32 | Storage::F64 if engine.is_device() => PoolType::F32,
        _ => PoolType::F64,
    }
}

/// Bands of the grid along the files' slowest horizontal dimension, each within `budget` bytes
/// at `per_cell` bytes per cell.
fn plan_tiles(layout: &VarLayout, per_cell: u64, budget: u64) -> Result<Vec<Region>, Error> {
    let (nlat, nlon) = (layout.nlat(), layout.nlon());
    let (along, across, unit) =
        if layout.lat_is_slow() { (nlat, nlon, "latitude row") } else { (nlon, nlat, "longitude column") };
    let per_line = per_cell * across as u64;
    let lines = (budget / per_line.max(1)) as usize;
    if lines == 0 {
        return Err(Error::Memory { budget, need: per_line, unit });
    }
    let n_tiles = along.div_ceil(lines);
    let lines = along.div_ceil(n_tiles); // balanced bands
    Ok((0..along)
        .step_by(lines)
        .map(|start| {
            let band = start..(start + lines).min(along);
            if layout.lat_is_slow() {
                Region { rows: band, cols: 0..nlon }
            } else {
                Region { rows: 0..nlat, cols: band }
            }
        })
        .collect())
}

fn run_tiles<T: Sample>(
    plan: &JobPlan,
    job: &Job,
    engine: &dyn Engine,
    decoding: Option<Decoding>,
    ui: &Ui,
    mut timer: StageTimer,
    wall: Instant,
) -> Result<RunOutcome, Error> {
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.threads)
        .build()
        .map_err(|e| Error::Failed(format!("cannot start {} worker threads: {e}", plan.threads)))?;
    let (n_slots, n_targets, n_stats) = (job.window.slots.len(), job.window.targets.len(), plan.stats.n_stats());
    let copies = 1 + u64::from(plan.verify);
    let in_flight = 3 * plan.threads as u64 + 2;
    let per_cell = (n_slots * std::mem::size_of::<T>()) as u64
        + copies * (n_stats * n_targets * 8 + n_targets * 4) as u64
        + in_flight * job.layout.storage.size() as u64;
    let regions = plan_tiles(&job.layout, per_cell, plan.max_mem)?;
    info!(
        "{} tile(s) of up to {} cells ({:.2} GB each) within --max-mem {:.2} GB; {} engine, {} pool",
        regions.len(),
        regions[0].n_cells(),
        (regions[0].n_cells() as u64 * per_cell) as f64 / 1e9,
        plan.max_mem as f64 / 1e9,
        engine.name(),
        T::NAME
    );
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
    let mut outputs = timer.time(Stage::Write, || OutputSet::create(&plan.output, &meta))?;
    let mut bytes_read = 0;
    let mut device_times = EngineTimes::default();
    for (i, region) in regions.iter().enumerate() {
        let new_pool = if forked_reads() { Pool::<T>::new_shared } else { Pool::<T>::new };
        let mut pool = new_pool(n_slots, region.n_cells())
            .map_err(|cause| Error::Alloc { bytes: n_slots * region.n_cells() * std::mem::size_of::<T>(), cause })?;
        pool.set_decoding(decoding.clone());
        let bar = ui.bar(n_slots as u64, &format!("read {}/{}", i + 1, regions.len()));
        bytes_read += timer.time(Stage::Read, || read_tile(job, region, i == 0, plan.threads, &mut pool, &bar))?;
        bar.finish_and_clear();

        let mut result = TileResult::new(n_stats, n_targets, region.n_cells());
        let spinner = ui.spinner(&format!("computing tile {}/{}", i + 1, regions.len()));
        let started = Instant::now();
        let times = threads.install(|| engine.compute(T::wrap(&pool), &job.window, &plan.stats, &mut result))?;
        let elapsed = started.elapsed();
        timer.add(Stage::HostToDevice, times.h2d);
        timer.add(Stage::Kernel, times.kernel);
        timer.add(Stage::DeviceToHost, times.d2h);
        timer.add(Stage::Compute, elapsed.saturating_sub(times.h2d + times.kernel + times.d2h));
        device_times.add(&times);
        spinner.finish_and_clear();
        if plan.verify {
            let mut want = TileResult::new(n_stats, n_targets, region.n_cells());
            timer.time(Stage::Verify, || {
                threads.install(|| ReferenceEngine.compute(T::wrap(&pool), &job.window, &plan.stats, &mut want))
            })?;
            let differences = result.count_differences(&want);
            if differences > 0 {
                return Err(Error::Verify { tile: i, differences, engine: engine.name() });
            }
        }
        drop(pool);
        timer.time(Stage::Write, || outputs.write_tile(region, &result))?;
    }
    let paths = timer.time(Stage::Write, || outputs.finish())?;
    let report = RunReport {
        sstclim_version: env!("CARGO_PKG_VERSION"),
        backend: engine.name().into(),
        device: engine.describe(),
        bytes_h2d: device_times.bytes_h2d,
        bytes_d2h: device_times.bytes_d2h,
        pin_seconds: device_times.pin.as_secs_f64(),
        kernel_launches: device_times.launches,
        pool: T::NAME.into(),
        threads: plan.threads,
        grid: [job.grid.nlon(), job.grid.nlat()],
        cells: job.grid.n_cells(),
        target_days: n_targets,
        tiles: regions.len(),
        files_read: n_slots,
        files_missing: job.inputs.missing.len(),
        file_reads: n_slots * regions.len(),
        bytes_read,
        outputs: paths.len(),
        verified: plan.verify,
        stage_seconds: RunReport::stage_seconds(&timer),
        wall_seconds: wall.elapsed().as_secs_f64(),
        peak_rss_bytes: peak_rss_bytes(),
    };
    if let Some(path) = &plan.timing_json {
        report.write_json(path).map_err(|cause| Error::Io { path: path.clone(), cause })?;
    }
    Ok(RunOutcome { report, outputs: paths })
}

/// Read `region` of every input file into `pool` (one file per slot). libnetcdf is not
/// thread-safe, so this thread opens and reads; decoder threads unpack and transpose.
/// Returns the bytes of stored data read.
fn read_tile<T: Sample>(
    job: &Job,
    region: &Region,
    check_grid: bool,
    threads: usize,
    pool: &mut Pool<T>,
    bar: &indicatif::ProgressBar,
) -> Result<u64, Error> {
    if forked_reads() {
        return read_tile_forked(job, region, check_grid, threads, pool, bar);
    }
    let mut rows: Vec<Option<&mut [T]>> = pool.slots_mut().into_iter().map(Some).collect();
    let decoders = threads.saturating_sub(1).max(1);
    std::thread::scope(|scope| {
        let (tx, rx) = crossbeam_channel::bounded::<(&mut [T], VarLayout, RawData)>(2 * decoders);
        for _ in 0..decoders {
            let rx = rx.clone();
            scope.spawn(move || {
                for (dest, layout, raw) in rx {
                    decode_region(&layout, region, &raw, dest);
                    bar.inc(1);
                }
            });
        }
        drop(rx);
        let mut bytes = 0;
        for (slot, path) in job.files.iter().enumerate() {
            let file = input::open(path)?;
            let layout = VarLayout::inspect(&file, path, Some(&job.layout.name), false)?;
            if layout.nlat() != job.layout.nlat() || layout.nlon() != job.layout.nlon() {
                return Err(InputError::ShapeMismatch {
                    path: path.clone(),
                    var: layout.name.clone(),
                    found: layout.shape_text(),
                    expected: job.layout.shape_text(),
                    first: job.first.clone(),
                }
                .into());
            }
            if check_grid {
                job.grid.check_same(&Grid::read(&file, path, &layout)?, path, &job.first)?;
            }
            let raw = read_region(&file, path, &layout, region)?;
            drop(file);
            bytes += raw.bytes() as u64;
            let dest = rows[slot].take().expect("every slot is read once");
            if tx.send((dest, layout, raw)).is_err() {
                return Err(Error::Failed("a decoder thread stopped".into()));
            }
        }
        Ok(bytes)
    })
}

/// Whether files are read by forked reader processes (`SSTCLIM_READ_FORKED=1`; a stand-in
/// for the run option that will choose the read path).
fn forked_reads() -> bool {
    std::env::var_os("SSTCLIM_READ_FORKED").is_some_and(|v| v == "1")
}

/// [`read_tile`] through forked reader processes (`input::read_forked`), `threads` of them at
/// a time, into a pool made with [`Pool::new_shared`].
fn read_tile_forked<T: Sample>(
    job: &Job,
    region: &Region,
    check_grid: bool,
    threads: usize,
    pool: &mut Pool<T>,
    bar: &indicatif::ProgressBar,
) -> Result<u64, Error> {
    let files: Vec<(usize, PathBuf)> = job.files.iter().cloned().enumerate().collect();
    // several batches per reader keep the readers busy to the end; each process is short-lived
    let per_child = files.len().div_ceil(4 * threads.max(1)).clamp(1, 64);
    let opts = ReaderOptions::new(threads, per_child).test_hook_from_env();
    let grid = check_grid.then_some(&job.grid);
    Ok(read_forked(&files, &job.layout, &job.first, grid, region, pool, &opts, &mut |_, _| bar.inc(1))?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Packing, Storage, VarMeta};

    fn layout(lat_first: bool, nlat: usize, nlon: usize) -> VarLayout {
        let dims = if lat_first {
            vec![("lat".to_string(), nlat), ("lon".to_string(), nlon)]
        } else {
            vec![("lon".to_string(), nlon), ("lat".to_string(), nlat)]
        };
        VarLayout {
            name: "sst".into(),
            storage: Storage::F64,
            lat_axis: usize::from(!lat_first),
            lon_axis: usize::from(lat_first),
            dims,
            packing: Packing { scale: 1.0, offset: 0.0, fill: None, missing: vec![], valid_min: None, valid_max: None },
            meta: VarMeta::default(),
        }
    }

    #[test]
    fn tiles_are_balanced_bands_along_the_slow_dimension() {
        // 10 rows of 100 cells at 10 bytes: 1000 bytes a row
        let t = plan_tiles(&layout(true, 10, 100), 10, 4000).unwrap();
        assert_eq!(t.iter().map(|r| r.rows.clone()).collect::<Vec<_>>(), [0..4, 4..8, 8..10]);
        assert!(t.iter().all(|r| r.cols == (0..100)));
        let t = plan_tiles(&layout(false, 10, 100), 10, 10 * 10 * 50).unwrap();
        assert_eq!(t.iter().map(|r| r.cols.clone()).collect::<Vec<_>>(), [0..50, 50..100]);
        let t = plan_tiles(&layout(true, 10, 100), 10, 1 << 30).unwrap();
        assert_eq!(t, [Region { rows: 0..10, cols: 0..100 }]);
        assert!(matches!(plan_tiles(&layout(true, 10, 100), 10, 999), Err(Error::Memory { .. })));
    }
}
