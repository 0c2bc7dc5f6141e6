//! A tile's result buffers and the writer thread. The compute thread fills one buffer while the
//! writer writes another, so each segment's results are written while the next segment is
//! computed; a buffer the writer is done with comes back to be filled again. A device engine's
//! buffers are committed on a thread of their own while the device starts (and are pinned
//! once it is up, see [`super::setup`]). Where written days are made from neighbouring
//! computed days (Feb 29 filled, `--smooth W`), [`smoothed`] writes instead.

mod smoothed;

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::context::TileCtx;
use super::segments::Segment;
use super::sink::Sink;
use crate::error::Error;
use crate::stats::TileResult;

/// Result buffers a tile reuses: the compute thread fills one while the writer writes
/// another. On device engines they are page-locked, so results come back at full speed.
pub(super) const RESULT_BUFFERS: usize = 2;

/// Result buffers being committed on their own thread, with when that started and ended.
pub(super) type Committing = std::thread::JoinHandle<(Vec<TileResult>, Instant, Instant)>;

/// Commit a device engine's result buffers on a thread of their own: they need no device, so
/// this runs while a device that is still starting comes up (their pinning waits for it).
pub(super) fn commit_result_buffers(ctx: &TileCtx<'_>, n_cells: usize) -> Result<Committing, Error> {
    let max_targets = ctx.segments.iter().map(|s| s.targets.len()).max().unwrap_or(0);
    // the smoothing writer keeps some buffers for days still to be made: as many more again
    let kept = kept_after(ctx).into_iter().max().unwrap_or(0);
    let (n_stats, count) = (ctx.plan.stats.n_stats(), (RESULT_BUFFERS + kept).min(ctx.segments.len()));
    let threads = (ctx.plan.threads / 2).max(1);
    std::thread::Builder::new()
        .name("result-buffers".into())
        .spawn(move || {
            let start = Instant::now();
            let buffers = result_buffers(n_stats, max_targets, n_cells, threads, count);
            (buffers, start, Instant::now())
        })
        .map_err(|cause| Error::Thread { what: "commit the result buffers", cause })
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
            // forked readers and other children never touch them, and forking a process with
            // them pinned for a GPU copied them at every fork (see the function)
            crate::pool::keep_from_children(values.as_ptr().cast::<u8>(), nv * 8);
            crate::pool::keep_from_children(counts.as_ptr().cast::<u8>(), nc * 4);
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

/// A segment's results on their way to the writer.
pub(super) struct Finished {
    pub index: usize,
    pub targets: std::ops::Range<usize>,
    pub result: TileResult,
}

/// The writer thread of a tile: wait for the output files (created by `creators`, the processes
/// forked before the first tile, or made here where one failed), then write each segment's
/// results as they arrive and hand each buffer `back`. Returns the outputs and the time spent.
pub(super) fn write_segments(
    ctx: &TileCtx<'_>,
    mut outputs: Sink,
    creators: Vec<crate::input::child::Child>,
    results: Receiver<Finished>,
    back: Sender<TileResult>,
) -> (Sink, Result<Duration, Error>) {
    let (trace, tile) = (ctx.trace, ctx.tile);
    crate::input::silence_hdf5();
    let start = Instant::now();
    let created = trace.span("create-outputs", tile, None, || {
        // the creating processes' files, or (if one failed) made here, with the error; every
        // one is waited for (none is left writing a file this thread may make again)
        let forked_ok = !creators.is_empty()
            && creators.into_iter().map(crate::input::child::Child::wait).fold(true, |all, ok| all & ok);
        (outputs.create(forked_ok, &ctx.plan.output, ctx.meta), 0)
    });
    let mut spent = start.elapsed();
    if let Err(e) = created {
        return (outputs, Err(e.into()));
    }
    if ctx.plan.rules.holds(ctx.plan.window.calendar) {
        let (outputs, written) = smoothed::write_smoothed(ctx, outputs, results, back);
        return (outputs, written.map(|w| spent + w));
    }
    for f in results {
        let start = Instant::now();
        let bytes = (f.result.values.len() * 4) as u64;
        let r = trace.span("write", tile, Some(f.index), || {
            (outputs.write_targets(ctx.region, f.targets.clone(), &f.result), bytes)
        });
        spent += start.elapsed();
        let _ = back.send(f.result);
        if let Err(e) = r {
            return (outputs, Err(e.into()));
        }
    }
    (outputs, Ok(spent))
}

/// For each of `segments`, the result rows (target days of every cell) the writer holds beside
/// the rotating buffers once it has handled it (see [`smoothed`]); 0 where written days are
/// the computed ones.
pub(super) fn held_rows(plan: &crate::plan::JobPlan, segments: &[Segment]) -> Vec<usize> {
    match plan.rules.holds(plan.window.calendar) {
        true => smoothed::Schedule::new(plan.rules.axis(&plan.window), segments).held_rows(segments),
        false => vec![0; segments.len()],
    }
}

/// For each segment of the tile, how many result buffers the writer keeps once it has handled
/// it (those with days still to be made from them: see [`smoothed`]); all 0 where written days
/// are the computed ones. The compute loop makes a buffer rather than wait for one of these.
pub(super) fn kept_after(ctx: &TileCtx<'_>) -> Vec<usize> {
    match ctx.plan.rules.holds(ctx.plan.window.calendar) {
        true => smoothed::Schedule::new(ctx.plan.rules.axis(&ctx.plan.window), ctx.segments).kept,
        false => vec![0; ctx.segments.len()],
    }
}
