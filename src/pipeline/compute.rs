//! The compute stage of a tile: each segment is computed as soon as the slots its windows need
//! are in (on the host pool, or on the device-resident one), checked against the reference
//! engine with `--verify`, and handed to the writer; values the pool could not hold are
//! refused first ([`super::held`]).

use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};

use super::context::{TileCtx, Totals};
use super::readers::Rows;
use super::results::{Finished, RESULT_BUFFERS};
use super::segments::Segment;
use super::setup::{Held, SetUpThread};
use crate::engine::{DeviceEngine, Engine, ReferenceEngine};
use crate::error::Error;
use crate::pool::Sample;
use crate::stats::TileResult;

/// How the compute loop hears from the other threads of a tile: slots finished (readers or
/// the upload thread), result buffers the writer is done with, and the way to the writer.
pub(super) struct Links<'a> {
    pub done: &'a Receiver<(usize, u64)>,
    pub back: &'a Receiver<TileResult>,
    pub results: &'a Sender<Finished>,
}

/// Compute the tile's segments in order, each once its slots are in, and send each result to
/// the writer. Returns early without error where the readers or the writer stopped (their
/// errors are reported by the caller).
pub(super) fn compute_segments<T: Sample>(
    ctx: &TileCtx<'_>,
    rows: &Rows<'_, T>,
    links: &Links<'_>,
    setup: &mut SetUpThread<'_>,
    held: &mut Held<'_>,
    totals: &mut Totals,
) -> Result<(), Error> {
    let device = ctx.engine.device();
    let (n_slots, n_cells) = (ctx.job.window.slots.len(), ctx.region.n_cells());
    let mut ready = vec![false; n_slots];
    // slots looked at for values the pool could not hold (see `super::held`)
    let mut checked = vec![false; n_slots];
    let mut made = 0;
    // buffers the writer keeps for days still to be made from them (smoothing), and those it
    // has handed back: it hands back all the others once it has handled their segments
    let kept = super::results::kept_after(ctx);
    let mut received = 0;
    for (k, seg) in ctx.segments.iter().enumerate() {
        while !ready[seg.slots.clone()].iter().all(|&r| r) {
            match links.done.recv() {
                Ok((slot, _)) => ready[slot] = true,
                // the readers stopped early: their error is reported below
                Err(_) => return Ok(()),
            }
        }
        setup.join(held, totals)?;
        // a result buffer: a spare one, a new one (host engines), or one the writer is done with
        let mut result = match held.spare.pop() {
            Some(r) => r,
            None if made < RESULT_BUFFERS && device.is_none() => {
                made += 1;
                TileResult::new(ctx.plan.stats.n_stats(), seg.targets.len(), n_cells)
            }
            None if k > 0 && received >= k - kept[k - 1] => {
                // every buffer out is kept by the writer: a new one (every value is written
                // by the engine)
                TileResult::zeroed(ctx.plan.stats.n_stats(), seg.targets.len(), n_cells)
            }
            None => match links.back.recv() {
                Ok(r) => {
                    received += 1;
                    r
                }
                Err(_) => return Ok(()), // the writer failed: its error is reported below
            },
        };
        result.reshape(seg.targets.len());
        if let Err(e) = super::held::check_segment(ctx, rows, seg, &mut checked) {
            held.spare.push(result);
            return Err(e);
        }
        let computed = if let (Some(dev), true) = (device, rows.is_staged()) {
            compute_staged_segment(ctx, dev, k, seg, &mut result, totals)
        } else {
            // SAFETY: every slot of the segment has been reported finished by its reader.
            let view = unsafe { rows.view(seg.slots.clone(), ctx.decoding) };
            compute_segment::<T>(ctx, k, seg, view, &mut result, totals)
        };
        if let Err(e) = computed {
            held.spare.push(result);
            return Err(e);
        }
        if let Err(back) = links.results.send(Finished { index: k, targets: seg.targets.clone(), result }) {
            held.spare.push(back.into_inner().result);
            return Ok(()); // the writer failed: its error is reported below
        }
    }
    Ok(())
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
