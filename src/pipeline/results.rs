//! A tile's result buffers and the writer thread. The compute thread fills one buffer while the
//! writer writes another, so each segment's results are written while the next segment is
//! computed; a buffer the writer is done with comes back to be filled again. A device engine's
//! buffers are committed on a thread of their own while the device starts (and are pinned
//! once it is up, see [`super::setup`]).

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::context::TileCtx;
use crate::engine::TileResult;
use crate::error::Error;
use crate::output::OutputSet;

/// Result buffers a tile reuses: the compute thread fills one while the writer writes
/// another. On device engines they are page-locked, so results come back at full speed.
pub(super) const RESULT_BUFFERS: usize = 2;

/// Result buffers being committed on their own thread, with when that started and ended.
pub(super) type Committing = std::thread::JoinHandle<(Vec<TileResult>, Instant, Instant)>;

/// Commit a device engine's result buffers on a thread of their own: they need no device, so
/// this runs while a device that is still starting comes up (their pinning waits for it).
pub(super) fn commit_result_buffers(ctx: &TileCtx<'_>, n_cells: usize) -> Result<Committing, Error> {
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

/// The writer thread of a tile: wait for the output files (created by `creator`, the process
/// forked before the first tile, or made here where it failed), then write each segment's
/// results as they arrive and hand each buffer `back`. Returns the outputs and the time spent.
pub(super) fn write_segments(
    ctx: &TileCtx<'_>,
    mut outputs: OutputSet,
    creator: Option<crate::input::child::Child>,
    results: Receiver<Finished>,
    back: Sender<TileResult>,
) -> (OutputSet, Result<Duration, Error>) {
    let (trace, tile) = (ctx.trace, ctx.tile);
    crate::input::silence_hdf5();
    let start = Instant::now();
    let created = trace.span("create-outputs", tile, None, || {
        // the creating process's files, or (if it failed) made here, with the error
        let forked_ok = creator.is_some_and(crate::input::child::Child::wait);
        if forked_ok {
            outputs.mark_created();
        }
        (outputs.create_files(&ctx.plan.output, ctx.meta), 0)
    });
    let mut spent = start.elapsed();
    if let Err(e) = created {
        return (outputs, Err(e.into()));
    }
    // Feb 29 filling and smoothing read neighbouring days: segments are held, and each day is
    // written as soon as the days it is made from are in (those whose windows wrap around the
    // year wait for the last segment)
    let (plan, n_cells) = (ctx.plan, ctx.region.n_cells());
    let mut held = plan.rules.holds(plan.window.calendar).then(|| Held::new(ctx, n_cells));
    for f in results {
        let start = Instant::now();
        let bytes = (f.result.values.len() * 4) as u64;
        let r = match held.as_mut() {
            Some(held) => {
                trace.span("hold", tile, Some(f.index), || (held.hold(f.targets.clone(), &f.result), bytes));
                held.write_ready(ctx, &mut outputs, f.index)
            }
            None => trace.span("write", tile, Some(f.index), || {
                (outputs.write_targets(ctx.region, f.targets.clone(), &f.result), bytes)
            }),
        };
        spent += start.elapsed();
        let _ = back.send(f.result);
        if let Err(e) = r {
            return (outputs, Err(e.into()));
        }
    }
    if let Some(held) = held.as_mut() {
        let start = Instant::now();
        let r = held.write_ready(ctx, &mut outputs, ctx.segments.len());
        spent += start.elapsed();
        if let Err(e) = r {
            return (outputs, Err(e.into()));
        }
        debug_assert!(held.written.iter().all(|&w| w), "every day is written once its inputs are in");
    }
    (outputs, Ok(spent))
}

/// A tile's computed days, held for Feb 29 filling and smoothing, and which written days are out.
struct Held {
    axis: crate::smooth::DayAxis,
    all: TileResult,
    /// Computed days that are in.
    ready: Vec<bool>,
    /// Written days that are written.
    written: Vec<bool>,
}

impl Held {
    fn new(ctx: &TileCtx<'_>, n_cells: usize) -> Held {
        let axis = ctx.plan.rules.axis(&ctx.plan.window);
        debug_assert_eq!(axis.computed.len(), ctx.job.window.targets.len());
        // every row is copied in (`hold`) before a day that reads it is made
        let all = TileResult::zeroed(ctx.plan.stats.n_stats(), axis.computed.len(), n_cells);
        Held { ready: vec![false; axis.computed.len()], written: vec![false; axis.written.len()], axis, all }
    }

    /// Copy a segment's results (targets `targets` of the tile) in.
    fn hold(&mut self, targets: std::ops::Range<usize>, seg: &TileResult) {
        hold(&mut self.all, targets.clone(), seg);
        self.ready[targets].iter_mut().for_each(|r| *r = true);
    }

    /// Make and write every written day whose inputs are all in, in runs of consecutive days.
    fn write_ready(
        &mut self,
        ctx: &TileCtx<'_>,
        outputs: &mut OutputSet,
        batch: usize,
    ) -> Result<(), crate::output::OutputError> {
        let ready: Vec<bool> = (0..self.written.len())
            .map(|t| !self.written[t] && self.axis.inputs(t).iter().all(|&r| self.ready[r]))
            .collect();
        let mut t = 0;
        while t < ready.len() {
            if !ready[t] {
                t += 1;
                continue;
            }
            let run = t..(t..ready.len()).find(|&u| !ready[u]).unwrap_or(ready.len());
            let days = ctx
                .trace
                .span("smooth", ctx.tile, Some(batch), || (self.axis.apply(&self.all, run.clone(), ctx.threads), 0));
            let bytes = (days.values.len() * 4) as u64;
            ctx.trace.span("write", ctx.tile, Some(batch), || {
                (outputs.write_targets(ctx.region, run.clone(), &days), bytes)
            })?;
            self.written[run.clone()].iter_mut().for_each(|w| *w = true);
            t = run.end;
        }
        Ok(())
    }
}

/// Copy a segment's results (targets `targets` of the tile) into the tile's held results.
fn hold(all: &mut TileResult, targets: std::ops::Range<usize>, seg: &TileResult) {
    let (n, n_targets) = (all.n_cells, all.n_targets);
    // a full-size segment is gigabytes: copied by a few threads of its own (the workers may be
    // computing the next segment)
    let rows: Vec<(&mut [f64], &[f64])> = all
        .values
        .chunks_mut(n.max(1))
        .enumerate()
        .filter(|(r, _)| targets.contains(&(r % n_targets)))
        .map(|(r, dst)| (dst, seg.row(r / n_targets, r % n_targets - targets.start)))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).clamp(1, 4);
    let per = rows.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let mut rows = rows;
        while !rows.is_empty() {
            let part: Vec<(&mut [f64], &[f64])> = rows.drain(..per.min(rows.len())).collect();
            s.spawn(move || part.into_iter().for_each(|(dst, src)| dst.copy_from_slice(src)));
        }
    });
    for (i, t) in targets.enumerate() {
        all.counts[t * n..(t + 1) * n].copy_from_slice(&seg.counts[i * n..(i + 1) * n]);
    }
}
