//! A device-resident pool's way in: reader threads decode each file into one of a few small
//! page-locked staging rows and hand it to one upload thread, which copies it into device
//! memory and only then reports the slot finished. A GPU rank then needs no host pool at all
//! (no 12.7 GB to commit, pin and unpin for the reference job: those steps cost more than
//! reading the files did), and a reader never waits for a copy unless every staging row is
//! in flight.

use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender};

use super::trace::Trace;
use crate::engine::{DeviceEngine, EngineError};
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
    engine: &'e dyn DeviceEngine,
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
    pub fn new(
        engine: &'e dyn DeviceEngine,
        n_cells: usize,
        count: usize,
        trace: &'e Trace,
        tile: usize,
    ) -> Staging<'e, T> {
        let count = count.max(1);
        // zeroed and untouched (a fresh mapping), so the pinning below commits huge pages
        let mut rows = vec![T::from_f64(0.0); count * n_cells];
        let base = rows.as_mut_ptr();
        let len = std::mem::size_of_val(&rows[..]);
        crate::pool::advise_huge_pages(base.cast::<u8>(), len);
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
        let row = match self.free_rx.try_recv() {
            Ok(row) => row,
            // every row is in flight: the wait shows in the timeline
            Err(_) => self.trace.span("wait-row", self.tile, Some(slot), || {
                (self.free_rx.recv().expect("the staging holds a sender"), 0)
            }),
        };
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;
    use crate::engine::gpu::GpuError;
    use crate::engine::{Engine, EngineTimes, StatSpec, TileResult};
    use crate::pool::PoolRef;
    use crate::window::WindowPlan;

    /// A device that keeps uploaded rows in a map, failing at one slot if asked.
    struct FakeDevice {
        n_cells: usize,
        rows: Mutex<Vec<Option<Vec<f32>>>>,
        fail_at: Option<usize>,
        /// Copies asked for after the failed one.
        late: std::sync::atomic::AtomicUsize,
        failed: AtomicBool,
    }

    fn fake(n_cells: usize, n_slots: usize, fail_at: Option<usize>) -> FakeDevice {
        FakeDevice {
            n_cells,
            rows: Mutex::new(vec![None; n_slots]),
            fail_at,
            late: Default::default(),
            failed: AtomicBool::new(false),
        }
    }

    impl Engine for FakeDevice {
        fn name(&self) -> &'static str {
            "fake"
        }

        fn compute(
            &self,
            _pool: PoolRef<'_>,
            _plan: &WindowPlan,
            _stats: &StatSpec,
            _out: &mut TileResult,
        ) -> Result<EngineTimes, EngineError> {
            unreachable!("not computed on")
        }

        fn device(&self) -> Option<&dyn DeviceEngine> {
            Some(self)
        }
    }

    impl DeviceEngine for FakeDevice {
        unsafe fn upload_slot(&self, slot: usize, src: *const u8) -> Result<(), EngineError> {
            if self.failed.load(Ordering::SeqCst) {
                self.late.fetch_add(1, Ordering::SeqCst);
            }
            if self.fail_at == Some(slot) {
                self.failed.store(true, Ordering::SeqCst);
                let cause = GpuError {
                    api: "fake",
                    call: "upload",
                    device: "a test device".into(),
                    detail: format!("copy of slot {slot} failed"),
                };
                return Err(EngineError::Gpu { engine: "fake", cause });
            }
            // SAFETY: the caller hands one row of n_cells f32.
            let row = unsafe { std::slice::from_raw_parts(src.cast::<f32>(), self.n_cells) }.to_vec();
            self.rows.lock().unwrap()[slot] = Some(row);
            Ok(())
        }
    }

    /// Fill `n_slots` rows (row s = s + cell / 1000) from 3 threads through 4 staging rows;
    /// returns the slots reported done and the upload thread's outcome.
    fn run(dev: &FakeDevice, n_slots: usize) -> (Vec<usize>, Result<(), EngineError>, bool) {
        let trace = Trace::new(Instant::now());
        let stage = Staging::<f32>::new(dev, dev.n_cells, 4, &trace, 0);
        let stop = AtomicBool::new(false);
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        let uploaded = std::thread::scope(|s| {
            let up = s.spawn(|| stage.upload_all(&done_tx, &stop));
            std::thread::scope(|fillers| {
                for t in 0..3 {
                    let stage = &stage;
                    fillers.spawn(move || {
                        for slot in (t..n_slots).step_by(3) {
                            let r: Result<(), ()> = stage.fill(slot, 8, |row| {
                                for (c, v) in row.iter_mut().enumerate() {
                                    *v = slot as f32 + c as f32 / 1000.0;
                                }
                                // a failed read is not uploaded
                                if slot == 7 {
                                    Err(())
                                } else {
                                    Ok(())
                                }
                            });
                            assert_eq!(r.is_err(), slot == 7);
                        }
                    });
                }
            });
            stage.close();
            up.join().unwrap()
        });
        drop(done_tx);
        let mut done: Vec<usize> = done_rx
            .iter()
            .map(|(slot, bytes)| {
                assert_eq!(bytes, 8);
                slot
            })
            .collect();
        done.sort_unstable();
        (done, uploaded, stop.load(Ordering::Relaxed))
    }

    #[test]
    fn every_filled_row_reaches_the_device_before_it_is_reported() {
        let dev = fake(5, 40, None);
        let (done, uploaded, stopped) = run(&dev, 40);
        assert!(uploaded.is_ok() && !stopped);
        let want: Vec<usize> = (0..40).filter(|&s| s != 7).collect();
        assert_eq!(done, want, "every slot but the failed read, once");
        let rows = dev.rows.lock().unwrap();
        for (slot, row) in rows.iter().enumerate() {
            match row {
                None => assert_eq!(slot, 7),
                Some(row) => {
                    let want: Vec<f32> = (0..5).map(|c| slot as f32 + c as f32 / 1000.0).collect();
                    assert_eq!(row, &want, "slot {slot}");
                }
            }
        }
    }

    #[test]
    fn a_failed_copy_stops_the_job_without_stranding_readers() {
        let dev = fake(3, 60, Some(10));
        let (done, uploaded, stopped) = run(&dev, 60);
        let err = uploaded.unwrap_err().to_string();
        assert!(err.contains("copy of slot 10 failed"), "{err}");
        assert!(stopped, "everyone is asked to stop");
        assert!(!done.contains(&10), "the failed slot is never reported");
        // nothing is copied after the failure, and the readers still finished (no staging row
        // was lost), so this returned at all
        assert_eq!(dev.late.load(Ordering::SeqCst), 0, "copies after the failure");
        assert!(done.len() < 59, "{done:?}");
        let copied = dev.rows.lock().unwrap().iter().filter(|r| r.is_some()).count();
        assert_eq!(copied, done.len(), "what was reported is what was copied");
    }
}
