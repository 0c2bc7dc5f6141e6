//! One tile through the pipeline: the steps that set it up (locating processes, the device,
//! where the pool lives, staging rows), the threads that run side by side (readers, uploads,
//! the device's set-up, the compute loop, the writer), and the tear-down that frees the pool
//! as soon as nothing reads it. The steps each tile takes are named here; the stages live in
//! [`super::readers`], [`super::stage`], [`super::setup`], [`super::compute`] and
//! [`super::results`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::compute::{compute_segments, Links};
use super::context::{TileCtx, Totals};
use super::locate::Locating;
use super::readers::{read_all, ReadJob, ReadStats, Rows};
use super::results::{commit_result_buffers, write_segments, Finished};
use super::setup::{device_setup, Held, SetUpThread};
use super::sink::Sink;
use super::stage::Staging;
use crate::engine::{DeviceEngine, EngineError};
use crate::error::Error;
use crate::pool::{Pool, Sample};
use crate::stats::TileResult;

/// Read, compute and write one tile; `creators` are the processes creating the output files
/// (first tile), which the writer waits for before its first write.
pub(super) fn run_tile<T: Sample>(
    ctx: &TileCtx<'_>,
    outputs: Sink,
    creators: Vec<crate::input::child::Child>,
    totals: &mut Totals,
) -> Result<Sink, Error> {
    let (trace, tile) = (ctx.trace, ctx.tile);
    let n_cells = ctx.region.n_cells();
    // forked readers fill a shared mapping; every other reader writes from this process
    let forked = super::reads_forked(ctx.plan.read_path, ctx.direct.is_some());
    let locating = fork_locators(ctx);
    let device = ctx.engine.device();
    let committing = match device {
        Some(_) => Some(commit_result_buffers(ctx, n_cells)?),
        None => None,
    };
    // a device still starting is waited for here: an engine that failed to start ends the job
    trace.span("device-start", tile, None, || (device.map_or(Ok(()), |d| d.ready()), 0))?;
    let staged = match device {
        Some(dev) if ctx.device_pool => stage_pool::<T>(ctx, dev),
        _ => false,
    };
    let mut pool = if staged { None } else { Some(host_pool::<T>(ctx, device.is_some(), forked)?) };
    let (map_ptr, map_len) = pool.as_ref().map_or((std::ptr::null(), 0), |p| p.mapping());
    let map_addr = map_ptr as usize; // a plain number, to hand to the set-up thread
    let stage = device.filter(|_| staged).map(|dev| staging_rows::<T>(ctx, dev));
    // declared before the rows borrow the pool, so it unpins before the pool is unmapped
    let mut held = Held::new(device, map_ptr);
    let rows = match (&stage, pool.as_mut()) {
        (Some(stage), _) => Rows::staged(ctx.job.window.slots.len(), n_cells, stage),
        (None, Some(pool)) => Rows::new(pool),
        (None, None) => unreachable!("a tile has a host pool or a device-resident one"),
    };
    let read_job = read_job(ctx, forked);
    let stop = AtomicBool::new(false);
    let (outputs, run) = std::thread::scope(|s| {
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
        let setup = committing.zip(device).map(|(committing, dev)| {
            std::thread::Builder::new()
                .name("device-setup".into())
                .spawn_scoped(s, move || device_setup::<T>(ctx, dev, committing, map_addr, map_len))
                .expect("spawning the device set-up thread")
        });
        let (res_tx, res_rx) = crossbeam_channel::bounded::<Finished>(1);
        let (back_tx, back_rx) = crossbeam_channel::unbounded::<TileResult>();
        let writer = std::thread::Builder::new()
            .name("writer".into())
            .spawn_scoped(s, move || write_segments(ctx, outputs, creators, res_rx, back_tx))
            .expect("spawning the writer thread");

        let mut setup = SetUpThread(setup);
        let links = Links { done: &done_rx, back: &back_rx, results: &res_tx };
        let computed = compute_segments::<T>(ctx, rows, &links, &mut setup, &mut held, totals);
        if computed.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        drop(done_rx);
        drop(res_tx);
        let set_up = setup.join(&mut held, totals);
        let read = reader.join().expect("reader thread");
        let uploaded = uploads.map_or(Ok(()), |u| u.join().expect("upload thread"));
        if let (Some(dev), true) = (device, staged) {
            dev.unstage_pool();
            totals.device_pool = true;
            totals.device.bytes_h2d += (ctx.job.window.slots.len() * n_cells * std::mem::size_of::<T>()) as u64;
        }
        // nothing reads the pool any more: unpin and unmap it while the writer finishes
        free_host_pool(ctx, &mut held, pool, map_len);
        let (outputs, written) = writer.join().expect("writer thread");
        held.spare.extend(back_rx.try_iter());
        (outputs, first_failure(read, uploaded, set_up, computed, written, totals))
    });
    release(ctx, held, totals);
    run.map(|()| outputs)
}

/// After a tile: the device memory it took noted, its result buffers unpinned and freed.
fn release(ctx: &TileCtx<'_>, held: Held<'_>, totals: &mut Totals) {
    if let Some(bytes) = ctx.engine.device().and_then(|d| d.device_memory()) {
        totals.device_memory = Some(totals.device_memory.unwrap_or(0).max(bytes));
    }
    let Held { guard, spare } = held;
    ctx.trace.span("unpin-results", ctx.tile, None, || (drop(guard), 0));
    drop(spare);
}

/// Children that need no pool are forked before it exists (no copy-on-write of its pages):
/// the ones locating the variable in every file through libhdf5 (where the first file's header
/// could not be parsed as the library reads it; else the reader threads locate the files
/// themselves); those creating outputs were forked before the first tile.
fn fork_locators(ctx: &TileCtx<'_>) -> Option<Locating> {
    let (plan, job, tile) = (ctx.plan, ctx.job, ctx.tile);
    ctx.direct.filter(|dl| !dl.parsed).map(|dl| {
        ctx.trace.span("fork-locate", tile, None, || {
            let grid = (tile == 0).then_some(&job.grid);
            (Locating::spawn(&job.files, dl, &job.layout, grid, (plan.threads / 4).clamp(1, 4)), 0)
        })
    })
}

/// Bytes of the tile's pool.
fn pool_bytes<T>(ctx: &TileCtx<'_>) -> usize {
    ctx.job.window.slots.len() * ctx.region.n_cells() * std::mem::size_of::<T>()
}

/// Ask the device to hold the tile's pool (where the pool may live there): whether it does.
/// One that cannot is no failure: the pool then lives in host memory.
fn stage_pool<T: Sample>(ctx: &TileCtx<'_>, dev: &dyn DeviceEngine) -> bool {
    let (n_slots, n_cells) = (ctx.job.window.slots.len(), ctx.region.n_cells());
    ctx.trace.span("stage-pool", ctx.tile, None, || {
        let plans: Vec<&crate::window::WindowPlan> = ctx.segments.iter().map(|s| &s.plan).collect();
        let staged = dev.stage_pool(ctx.pool_kind::<T>(), n_slots, n_cells, &plans, &ctx.plan.stats);
        let staged = staged.unwrap_or_else(|e| {
            tracing::warn!("keeping the pool in host memory: {e}");
            false
        });
        (staged, pool_bytes::<T>(ctx) as u64)
    })
}

/// The tile's pool in host memory (a shared mapping for forked readers), carrying the job's
/// int16 table; for a device, every page committed before the readers start.
fn host_pool<T: Sample>(ctx: &TileCtx<'_>, device: bool, forked: bool) -> Result<Pool<T>, Error> {
    let (trace, tile) = (ctx.trace, ctx.tile);
    let (n_slots, n_cells, bytes) = (ctx.job.window.slots.len(), ctx.region.n_cells(), pool_bytes::<T>(ctx));
    let new_pool = if forked { Pool::<T>::new_shared } else { Pool::<T>::new };
    let mut pool = trace
        .span("alloc", tile, None, || (new_pool(n_slots, n_cells), bytes as u64))
        .map_err(|cause| Error::Alloc { bytes, cause })?;
    pool.set_decoding(ctx.decoding.cloned());
    if device {
        // registering pages that are not faulted in is slow: commit them first, from all
        // threads, before the readers start (committing them beside the readers contends)
        trace.span("touch", tile, None, || (pool.touch(ctx.plan.threads), bytes as u64));
    }
    Ok(pool)
}

/// Staging rows for a device-resident pool: a few per reading thread, so that readers rarely
/// wait for a copy.
fn staging_rows<'a, T: Sample>(ctx: &TileCtx<'a>, dev: &'a dyn DeviceEngine) -> Staging<'a, T> {
    let (plan, trace, tile, n_cells) = (ctx.plan, ctx.trace, ctx.tile, ctx.region.n_cells());
    // (`SSTCLIM_STAGING_ROWS`: rows per thread, for measuring)
    let per_thread = crate::util::knobs::staging_rows().unwrap_or(3);
    trace
        .span("stage-rows", tile, None, || (Staging::<T>::new(dev, n_cells, per_thread * plan.threads, trace, tile), 0))
}

/// What the readers of the tile do.
fn read_job<'a>(ctx: &TileCtx<'a>, forked: bool) -> ReadJob<'a> {
    let (plan, job) = (ctx.plan, ctx.job);
    ReadJob {
        files: &job.files,
        steps: &job.steps,
        layout: &job.layout,
        first: &job.first,
        grid: &job.grid,
        region: ctx.region,
        check_grid: ctx.tile == 0,
        threads: plan.threads,
        direct: ctx.direct,
        forked,
        readers: plan.readers,
        tile: ctx.tile,
        memory: plan.source.memory(),
    }
}

/// Unpin (where the set-up pinned it) and unmap the host pool, if the tile has one.
fn free_host_pool<T: Sample>(ctx: &TileCtx<'_>, held: &mut Held<'_>, pool: Option<Pool<T>>, map_len: usize) {
    let (trace, tile) = (ctx.trace, ctx.tile);
    if let (Some(dev), true) = (ctx.engine.device(), std::mem::take(&mut held.guard.pool)) {
        let map_ptr = pool.as_ref().map_or(std::ptr::null(), |p| p.mapping().0);
        // SAFETY: pinned by the set-up thread (joined); the pool is still mapped.
        let unpinned = trace.span("unpin", tile, None, || (unsafe { dev.unpin_host(map_ptr) }, map_len as u64));
        if let Err(e) = unpinned {
            tracing::warn!("{e}");
        }
    }
    trace.span("free", tile, None, || (drop(pool), map_len as u64));
}

/// The tile's outcome: the first failure in pipeline order, else what was read and the time
/// spent writing, added to the totals.
fn first_failure(
    read: Result<ReadStats, Error>,
    uploaded: Result<(), EngineError>,
    set_up: Result<(), Error>,
    computed: Result<(), Error>,
    written: Result<Duration, Error>,
    totals: &mut Totals,
) -> Result<(), Error> {
    let stats = read?;
    uploaded?;
    set_up?;
    computed?;
    totals.write += written?;
    totals.read.bytes += stats.bytes;
    totals.read.inflated += stats.inflated;
    totals.read.direct_files += stats.direct_files;
    totals.read.library_files += stats.library_files;
    Ok(())
}
