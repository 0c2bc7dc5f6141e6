//! A device-resident pool's way in: reader threads decode each file into one of a few small
//! page-locked staging rows and hand it to one upload thread, which copies it into device
//! memory and only then reports the slot finished. A GPU rank then needs no host pool at all
//! (no 12.7 GB to commit, pin and unpin for the reference job: those steps cost more than
//! reading the files did), and a reader never waits for a copy unless every staging row is
//! in flight.

use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender};

use super::trace::Trace;
use crate::engine::{Engine, EngineError};
use crate::pool::Sample;

/// What goes to the upload thread: a filled row, or the end of the reads.
enum Upload {
    Row { slot: usize, row: usize, bytes: u64 },
    End,
}

/// Staging rows shared by the reader threads of one tile, and the queue to the device. The
/// rows are one allocation, page-locked with one call (registering many small buffers costs
/// milliseconds each).
pub struct Staging<'e, T> {
    engine: &'e dyn Engine,
    n_cells: usize,
    /// `count` rows of `n_cells` values; row i is used by one holder at a time (whoever took
    /// index i from `free_rx`), so it is only reached through `base`.
    rows: Vec<T>,
    base: *mut T,
    pinned: bool,
    free_tx: Sender<usize>,
    free_rx: Receiver<usize>,
    full_tx: Sender<Upload>,
    full_rx: Receiver<Upload>,
    trace: &'e Trace,
    tile: usize,
}

// SAFETY: each row index is held by one thread at a time (handed over through channels, which
// order memory); the engine reference is Sync.
unsafe impl<T: Send> Send for Staging<'_, T> {}
unsafe impl<T: Send> Sync for Staging<'_, T> {}

impl<'e, T: Sample> Staging<'e, T> {
    /// `count` staging rows of `n_cells` values, every page written and page-locked where the
    /// engine can.
    pub fn new(engine: &'e dyn Engine, n_cells: usize, count: usize, trace: &'e Trace, tile: usize) -> Staging<'e, T> {
        let count = count.max(1);
        let mut rows = vec![T::from_f64(0.0); count * n_cells];
        let base = rows.as_mut_ptr();
        let len = std::mem::size_of_val(&rows[..]);
        // SAFETY: `rows` is dropped after Drop unpins it, and its heap memory never moves.
        let pinned = len > 0 && unsafe { engine.pin_host(base.cast::<u8>(), len) }.unwrap_or(false);
        let (free_tx, free_rx) = crossbeam_channel::unbounded();
        let (full_tx, full_rx) = crossbeam_channel::unbounded();
        for i in 0..count {
            let _ = free_tx.send(i);
        }
        Staging { engine, n_cells, rows, base, pinned, free_tx, free_rx, full_tx, full_rx, trace, tile }
    }

    /// Staging row `i`.
    ///
    /// # Safety
    /// The caller holds index `i` (took it from the free list and has not passed it on).
    #[allow(clippy::mut_from_ref)]
    unsafe fn row(&self, i: usize) -> &mut [T] {
        assert!((i + 1) * self.n_cells <= self.rows.len());
        // SAFETY: in bounds; exclusive by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(i * self.n_cells), self.n_cells) }
    }

    /// Let `fill` write pool row `slot` into a free staging row (waiting for one if all are in
    /// flight) and queue it for the device when it succeeds; the upload thread reports the
    /// slot finished once it is in device memory.
    pub fn fill<R, E>(&self, slot: usize, bytes: u64, fill: impl FnOnce(&mut [T]) -> Result<R, E>) -> Result<R, E> {
        let row = self.free_rx.recv().expect("the staging holds a sender");
        // SAFETY: `row` was just taken from the free list.
        let filled = fill(unsafe { self.row(row) });
        let _ = match filled {
            Ok(_) => self.full_tx.send(Upload::Row { slot, row, bytes }).map_err(|_| ()),
            Err(_) => self.free_tx.send(row).map_err(|_| ()),
        };
        filled
    }

    /// No more rows will be filled: the upload thread stops after the queued ones.
    pub fn close(&self) {
        let _ = self.full_tx.send(Upload::End);
    }

    /// The upload thread's loop: copy each queued row to the device, free it, and report its
    /// slot on `done`. After a failed copy it only frees rows (so no reader waits forever),
    /// asks everyone to `stop`, and returns the first error once the reads are over.
    pub fn upload_all(&self, done: &Sender<(usize, u64)>, stop: &AtomicBool) -> Result<(), EngineError> {
        let mut failed = None;
        for item in self.full_rx.iter() {
            let Upload::Row { slot, row, bytes } = item else { break };
            if failed.is_none() {
                let sent = self.trace.span("upload", self.tile, Some(slot), || {
                    // SAFETY: the upload thread holds `row` until it frees it below.
                    let data = unsafe { self.row(row) };
                    let r = unsafe { self.engine.upload_slot(slot, data.as_ptr().cast()) };
                    (r, std::mem::size_of_val(data) as u64)
                });
                match sent {
                    Ok(()) => {
                        let _ = done.send((slot, bytes));
                    }
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        failed = Some(e);
                    }
                }
            }
            let _ = self.free_tx.send(row);
        }
        failed.map_or(Ok(()), Err)
    }
}

impl<T> Drop for Staging<'_, T> {
    fn drop(&mut self) {
        if self.pinned {
            // SAFETY: pinned in `new`; `rows` is still allocated (fields drop after this).
            if let Err(e) = unsafe { self.engine.unpin_host(self.base.cast::<u8>()) } {
                tracing::warn!("{e}");
            }
        }
    }
}
