//! A device-resident pool's way in: reader threads decode each file into one of a few small
//! page-locked staging rows and hand it to one upload thread, which copies it into device
//! memory and only then reports the slot finished. A GPU rank then needs no host pool at all
//! (no 12.7 GB to commit, pin and unpin for the reference job: those steps cost more than
//! reading the files did), and a reader never waits for a copy unless every staging row is
//! in flight.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender};

use super::trace::Trace;
use crate::engine::{Engine, EngineError};
use crate::pool::Sample;

/// What goes to the upload thread: a filled row, or the end of the reads.
enum Upload<T> {
    Row { slot: usize, row: Vec<T>, bytes: u64 },
    End,
}

/// Staging rows shared by the reader threads of one tile, and the queue to the device.
pub struct Staging<'e, T> {
    engine: &'e dyn Engine,
    n_cells: usize,
    free_tx: Sender<Vec<T>>,
    free_rx: Receiver<Vec<T>>,
    full_tx: Sender<Upload<T>>,
    full_rx: Receiver<Upload<T>>,
    /// Rows page-locked for the engine (unpinned on drop, before the rows are freed).
    pinned: Mutex<Vec<usize>>,
    trace: &'e Trace,
    tile: usize,
}

impl<'e, T: Sample> Staging<'e, T> {
    /// `count` staging rows of `n_cells` values, every page written and page-locked where the
    /// engine can.
    pub fn new(engine: &'e dyn Engine, n_cells: usize, count: usize, trace: &'e Trace, tile: usize) -> Staging<'e, T> {
        let (free_tx, free_rx) = crossbeam_channel::unbounded();
        let (full_tx, full_rx) = crossbeam_channel::unbounded();
        let stage = Staging {
            engine,
            n_cells,
            free_tx,
            free_rx,
            full_tx,
            full_rx,
            pinned: Mutex::new(Vec::new()),
            trace,
            tile,
        };
        stage.grow(count.max(1));
        stage
    }

    /// Add `count` staging rows (the upload thread adds most of them while the first files
    /// are read).
    pub fn grow(&self, count: usize) {
        for _ in 0..count {
            let row = vec![T::from_f64(0.0); self.n_cells];
            let (ptr, len) = (row.as_ptr().cast::<u8>(), std::mem::size_of_val(&row[..]));
            // SAFETY: the rows live in the staging's channels until it is dropped, and it
            // unpins them first; their heap memory never moves (only the Vec handles move).
            if len > 0 && unsafe { self.engine.pin_host(ptr, len) }.unwrap_or(false) {
                self.pinned.lock().unwrap_or_else(|e| e.into_inner()).push(ptr as usize);
            }
            let _ = self.free_tx.send(row);
        }
    }

    /// Let `fill` write pool row `slot` into a free staging row (waiting for one if all are in
    /// flight) and queue it for the device when it succeeds; the upload thread reports the
    /// slot finished once it is in device memory.
    pub fn fill<R, E>(&self, slot: usize, bytes: u64, fill: impl FnOnce(&mut [T]) -> Result<R, E>) -> Result<R, E> {
        let mut row = self.free_rx.recv().expect("the staging holds a sender");
        let filled = fill(&mut row);
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
    /// slot on `done`. After a failed copy it only frees rows (so no reader waits forever) and
    /// returns the first error once the reads are over.
    pub fn upload_all(&self, done: &Sender<(usize, u64)>, stop: &AtomicBool, grow: usize) -> Result<(), EngineError> {
        self.trace.span("stage-rows", self.tile, None, || (self.grow(grow), 0));
        let mut failed = None;
        for item in self.full_rx.iter() {
            let Upload::Row { slot, row, bytes } = item else { break };
            if failed.is_none() {
                let sent = self.trace.span("upload", self.tile, Some(slot), || {
                    // SAFETY: `row` holds one pool row of the staged type.
                    let r = unsafe { self.engine.upload_slot(slot, row.as_ptr().cast()) };
                    (r, std::mem::size_of_val(&row[..]) as u64)
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
        for &ptr in self.pinned.get_mut().unwrap_or_else(|e| e.into_inner()).iter() {
            // SAFETY: pinned in `grow`; the rows are still allocated (the channels holding them
            // are dropped after this).
            if let Err(e) = unsafe { self.engine.unpin_host(ptr as *const u8) } {
                tracing::warn!("{e}");
            }
        }
    }
}
