//! A device engine's set-up of one tile, on its own thread beside the reads: compile the
//! kernel (first tile), pin the host pool, and pin the result buffers committed since the tile
//! began; and the guard that unpins all of it before that memory is freed. Pinning a pool of
//! gigabytes takes a noticeable part of a second, which the reads hide.

use std::thread::ScopedJoinHandle;
use std::time::{Duration, Instant};

use super::context::{TileCtx, Totals};
use super::results::Committing;
use crate::engine::DeviceEngine;
use crate::error::Error;
use crate::pool::Sample;
use crate::stats::TileResult;

/// Memory page-locked for the device, unpinned when dropped (before the memory is freed).
pub(super) struct PinGuard<'a> {
    device: Option<&'a dyn DeviceEngine>,
    /// The pool at `map` is pinned.
    pub pool: bool,
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

/// What a tile holds for the engine: what is pinned, and the result buffers not in use. The
/// guard goes first (fields drop in order), so buffers are unpinned before they are freed.
pub(super) struct Held<'a> {
    pub guard: PinGuard<'a>,
    pub spare: Vec<TileResult>,
}

impl<'a> Held<'a> {
    /// Nothing pinned yet, for a tile whose host pool (if any) is mapped at `map`.
    pub fn new(device: Option<&'a dyn DeviceEngine>, map: *const u8) -> Held<'a> {
        Held { guard: PinGuard { device, pool: false, map, ptrs: Vec::new() }, spare: Vec::new() }
    }
}

/// Pinned host addresses handed between threads (plain addresses; the memory they name is
/// owned elsewhere), with whatever went wrong.
pub(super) struct SendPtrs<T>(T, Option<Error>);
// SAFETY: the raw pointers inside are only addresses to unpin later; nothing is dereferenced.
unsafe impl<T> Send for SendPtrs<T> {}

/// What the set-up thread did: whether the pool was pinned, the result buffers' pinned
/// addresses, the time it took, and the result buffers.
type SetUp = (bool, Vec<*const u8>, Duration, Vec<TileResult>);

/// The set-up thread's outcome.
pub(super) type SetUpDone = Result<SendPtrs<SetUp>, Error>;

/// The set-up thread's body: compile the kernel for the first segment (first tile only), pin
/// the host pool (`map_len` bytes at address `map_addr`; none when 0), take the committed
/// result buffers and pin them. The pinned addresses come back even on failure, to be unpinned.
pub(super) fn device_setup<T: Sample>(
    ctx: &TileCtx<'_>,
    dev: &dyn DeviceEngine,
    committing: Committing,
    map_addr: usize,
    map_len: usize,
) -> SetUpDone {
    let (plan, trace, tile) = (ctx.plan, ctx.trace, ctx.tile);
    let n_cells = ctx.region.n_cells();
    let first = &ctx.segments[0];
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
            _ => trace
                .span("pin", tile, None, || (unsafe { dev.pin_host(map_addr as *const u8, map_len) }, map_len as u64)),
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
}

/// The set-up thread of a tile (device engines), joined once: before the first segment is
/// computed, or at the end of the tile where none was.
pub(super) struct SetUpThread<'scope>(pub Option<ScopedJoinHandle<'scope, SetUpDone>>);

impl SetUpThread<'_> {
    /// Wait for the set-up (once): what it pinned goes to `held`'s guard, its buffers to the
    /// spare ones, its time to the totals; then its error, if any.
    pub fn join(&mut self, held: &mut Held<'_>, totals: &mut Totals) -> Result<(), Error> {
        let Some(handle) = self.0.take() else { return Ok(()) };
        let SendPtrs((pool_pinned, pinned, pin, buffers), err) = handle.join().expect("device set-up thread")?;
        held.guard.pool = pool_pinned;
        held.guard.ptrs.extend(pinned);
        totals.pin += pin;
        held.spare.extend(buffers);
        err.map_or(Ok(()), Err)
    }
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
