//! A device-resident pool's way in: reader threads decode each file into one of a few small
//! page-locked staging rows and hand it to one upload thread, which copies it into device
//! memory and only then reports the slot finished. A GPU rank then needs no host pool at all
//! (no 12.7 GB to commit, pin and unpin for the reference job: those steps cost more than
//! reading the files did), and a reader never waits for a copy unless every staging row is
//! in flight. The rows are page-locked memory the device's driver allocates where it can: on a
//! freshly started node, registering fresh heap memory (every page faulted in, then locked)
//! was the slow part of a first run's set-up.

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

/// Where the staging rows live.
enum Memory<T> {
    /// Page-locked memory from the device's driver, given back through it.
    Driver,
    /// Heap memory, registered with the device where `pinned` (engines that cannot allocate
    /// page-locked memory, or `SSTCLIM_STAGING_PIN=register`).
    Heap { _rows: Vec<T>, pinned: bool },
}

/// Staging rows shared by the reader threads of one tile, and the queue to the device. The
/// rows are one allocation, page-locked with one call (registering many small buffers costs
/// milliseconds each).
pub struct Staging<'e, T> {
    engine: &'e dyn DeviceEngine,
    n_cells: usize,
    /// `count` rows of `n_cells` values at `base` (`len` values in all); row i is used by one
    /// holder at a time (whoever took index i from `free_rx`), so it is only reached through
    /// `base`.
    len: usize,
    base: *mut T,
    memory: Memory<T>,
    free_tx: Sender<usize>,
    free_rx: Receiver<usize>,
    full_tx: Sender<Upload>,
    full_rx: Receiver<Upload>,
    trace: &'e Trace,
    tile: usize,
    /// Slots whose row holds a value the pool type could not hold ([`Sample::unheld`]), found
    /// by the reader that filled it: the compute stage refuses them ([`Staging::unheld_among`]).
    unheld: std::sync::Mutex<std::collections::BTreeSet<usize>>,
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
        let len = count * n_cells;
        let bytes = len * std::mem::size_of::<T>();
        let from_driver = (bytes > 0 && crate::util::knobs::staging_from_driver())
            .then(|| engine.alloc_pinned(bytes).ok().flatten())
            .flatten()
            .filter(|p| !p.is_null() && (*p as usize) % std::mem::align_of::<T>() == 0);
        let (base, memory) = match from_driver {
            Some(p) => {
                // SAFETY: the driver's allocation holds `bytes`; zeroed, so every row is valid
                // values (all-zero bits are 0 of every sample type) before a reader fills it.
                unsafe { std::ptr::write_bytes(p, 0, bytes) };
                (p.cast::<T>(), Memory::Driver)
            }
            None => {
                // zeroed and untouched (a fresh mapping), so the pinning below commits huge pages
                let mut rows = vec![T::from_f64(0.0); len];
                let base = rows.as_mut_ptr();
                crate::pool::advise_huge_pages(base.cast::<u8>(), bytes);
                // SAFETY: `rows` is dropped after Drop unpins it, and its heap memory never moves.
                let pinned = bytes > 0 && unsafe { engine.pin_host(base.cast::<u8>(), bytes) }.unwrap_or(false);
                (base, Memory::Heap { _rows: rows, pinned })
            }
        };
        let (free_tx, free_rx) = crossbeam_channel::unbounded();
        let (full_tx, full_rx) = crossbeam_channel::unbounded();
        for i in 0..count {
            let _ = free_tx.send(i);
        }
        let unheld = Default::default();
        Staging { engine, n_cells, len, base, memory, free_tx, free_rx, full_tx, full_rx, trace, tile, unheld }
    }

    /// Staging row `i`.
    ///
    /// # Safety
    /// The caller holds index `i` (took it from the free list and has not passed it on).
    #[allow(clippy::mut_from_ref)]
    unsafe fn row(&self, i: usize) -> &mut [T] {
        assert!((i + 1) * self.n_cells <= self.len);
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
        // checked here, where the row was just written (no host pool holds it for later)
        // SAFETY: this thread still holds `row`.
        if filled.is_ok() && T::may_not_hold(false) && crate::pool::any_unheld(unsafe { self.row(row) }) {
            self.unheld.lock().unwrap_or_else(|e| e.into_inner()).insert(slot);
        }
        let _ = match filled {
            Ok(_) => self.full_tx.send(Upload::Row { slot, row, bytes }).map_err(|_| ()),
            Err(_) => self.free_tx.send(row).map_err(|_| ()),
        };
        filled
    }

    /// The first of `slots` whose row holds a value the pool type could not hold.
    pub fn unheld_among(&self, slots: &[usize]) -> Option<usize> {
        let unheld = self.unheld.lock().unwrap_or_else(|e| e.into_inner());
        slots.iter().copied().find(|s| unheld.contains(s))
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
        let freed = match self.memory {
            // SAFETY: allocated in `new` by this engine; the upload thread has finished with it
            // (its copies wait until done) and no reader holds a row any more.
            Memory::Driver => unsafe { self.engine.free_pinned(self.base.cast::<u8>()) },
            // SAFETY: pinned in `new`; the rows are still allocated (fields drop after this).
            Memory::Heap { pinned: true, .. } => unsafe { self.engine.unpin_host(self.base.cast::<u8>()) },
            Memory::Heap { pinned: false, .. } => Ok(()),
        };
        if let Err(e) = freed {
            tracing::warn!("{e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;
    use crate::engine::gpu::GpuError;
    use crate::engine::{Engine, EngineTimes};
    use crate::pool::PoolRef;
    use crate::stats::{StatSpec, TileResult};
    use crate::window::WindowPlan;

    /// A device that keeps uploaded rows in a map, failing at one slot if asked.
    struct FakeDevice {
        n_cells: usize,
        rows: Mutex<Vec<Option<Vec<f32>>>>,
        fail_at: Option<usize>,
        /// Copies asked for after the failed one.
        late: std::sync::atomic::AtomicUsize,
        failed: AtomicBool,
        /// Whether it hands out host memory (`alloc_pinned`); what it handed out (address,
        /// bytes) and what came back.
        offers_memory: bool,
        allocated: Mutex<Vec<(usize, usize)>>,
        freed: Mutex<Vec<usize>>,
    }

    fn fake(n_cells: usize, n_slots: usize, fail_at: Option<usize>) -> FakeDevice {
        FakeDevice {
            n_cells,
            rows: Mutex::new(vec![None; n_slots]),
            fail_at,
            late: Default::default(),
            failed: AtomicBool::new(false),
            offers_memory: false,
            allocated: Mutex::new(Vec::new()),
            freed: Mutex::new(Vec::new()),
        }
    }

    fn layout(bytes: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(bytes, 4096).unwrap()
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
        fn alloc_pinned(&self, len: usize) -> Result<Option<*mut u8>, EngineError> {
            if !self.offers_memory {
                return Ok(None);
            }
            // SAFETY: a layout of non-zero size.
            let p = unsafe { std::alloc::alloc(layout(len)) };
            // garbage, as a driver's memory may hold: the staging must not read it as values
            // SAFETY: `p` holds `len` bytes.
            unsafe { std::ptr::write_bytes(p, 0xab, len) };
            self.allocated.lock().unwrap().push((p as usize, len));
            Ok(Some(p))
        }

        unsafe fn free_pinned(&self, ptr: *mut u8) -> Result<(), EngineError> {
            let len = self.allocated.lock().unwrap().iter().find(|a| a.0 == ptr as usize).expect("handed out").1;
            self.freed.lock().unwrap().push(ptr as usize);
            // SAFETY: allocated above with this layout.
            unsafe { std::alloc::dealloc(ptr, layout(len)) };
            Ok(())
        }

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
    fn rows_in_the_drivers_memory_are_zeroed_used_and_given_back_once() {
        let mut dev = fake(5, 40, None);
        dev.offers_memory = true;
        let (done, uploaded, _) = run(&dev, 40);
        assert!(uploaded.is_ok());
        assert_eq!(done.len(), 39);
        let rows = dev.rows.lock().unwrap();
        for (slot, row) in rows.iter().enumerate().filter(|(s, _)| *s != 7) {
            let want: Vec<f32> = (0..5).map(|c| slot as f32 + c as f32 / 1000.0).collect();
            assert_eq!(row.as_ref().unwrap(), &want, "slot {slot}");
        }
        let allocated = dev.allocated.lock().unwrap().clone();
        assert_eq!(allocated.len(), 1, "one allocation for all rows");
        assert_eq!(allocated[0].1, 4 * 5 * 4, "4 rows of 5 f32");
        assert_eq!(*dev.freed.lock().unwrap(), vec![allocated[0].0], "given back once, when the staging went");
        // a fresh staging reads as zeros before any fill
        let trace = Trace::new(Instant::now());
        let stage = Staging::<f32>::new(&dev, 5, 2, &trace, 0);
        // SAFETY: nobody else holds row 1.
        assert_eq!(unsafe { stage.row(1) }, &[0.0f32; 5]);
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

    /// A float32 row holding a value beyond float32's range (an infinity: decoded values are
    /// finite or NaN) is marked by the reader that filled it, for the compute stage to refuse:
    /// the GPU engines' default pool for float input never takes it for a missing value.
    #[test]
    fn a_row_with_a_value_beyond_float32_is_marked_for_refusal() {
        let dev = fake(3, 6, None);
        let trace = Trace::new(Instant::now());
        let stage = Staging::<f32>::new(&dev, 3, 2, &trace, 0);
        let (stop, (done_tx, _done_rx)) = (AtomicBool::new(false), crossbeam_channel::unbounded());
        std::thread::scope(|s| {
            let up = s.spawn(|| stage.upload_all(&done_tx, &stop));
            for slot in 0..6 {
                let wide = match slot {
                    2 => -1e39,
                    4 => 1e39,
                    _ => f64::from(f32::MAX),
                };
                let r: Result<(), ()> = stage.fill(slot, 12, |row| {
                    row.copy_from_slice(&[1.5, wide as f32, f32::NAN]);
                    Ok(())
                });
                assert!(r.is_ok());
            }
            stage.close();
            assert!(up.join().unwrap().is_ok());
        });
        assert_eq!(stage.unheld_among(&[0, 1, 3, 5]), None);
        assert_eq!(stage.unheld_among(&[5, 4, 3, 2]), Some(4));
        assert_eq!(stage.unheld_among(&[0, 1, 2, 3]), Some(2));
    }
}
