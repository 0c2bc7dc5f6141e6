//! Filling a tile's pool from its files, reporting each finished slot so computation can start
//! on the first days while later ones are read.
//!
//! Files whose variable is contiguous, or chunked with filters decoded here (deflate, shuffle,
//! fletcher32), take the direct path (`pread` and inflate from all threads, see
//! [`crate::input::direct`]): each reader thread locates the next file itself
//! where its header is parsed (NetCDF-3, and HDF5 through [`crate::input::h5meta`]), else
//! locating processes query libhdf5 and hand the located files to the readers (see
//! [`super::locate`]). The rest go through libnetcdf, which is not thread-safe: in one thread
//! with decoder threads beside it (`--read-path library`), or in forked reader processes.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crossbeam_channel::Sender;

use super::locate::Locating;
use super::stage::Staging;
use super::trace::Trace;
use crate::error::Error;
use crate::input::direct::{self, ChunkBuffers, ChunkError, DirectBuffer, DirectLayout, Place};
use crate::input::{
    self, decode_region, read_forked_into, Grid, InputError, RawData, ReaderOptions, Region, SharedRows, VarLayout,
};
use crate::pool::{Decoding, PoolView, Sample};

/// The rows of a pool being filled by readers while engines read finished rows: a host pool,
/// or (GPU engines) a device-resident pool reached through staging rows.
pub struct Rows<'s, T> {
    base: *mut T,
    n_slots: usize,
    n_cells: usize,
    /// The pool is a shared mapping (forked readers can fill it).
    shared: bool,
    /// Rows go to a device-resident pool (no host pool: `base` is null).
    stage: Option<&'s Staging<'s, T>>,
}

// SAFETY: `Rows` hands out each row to one writer (one reader per slot) and read-only views
// only of rows whose writer has finished (signalled through a channel, which orders memory).
unsafe impl<T: Send> Send for Rows<'_, T> {}
unsafe impl<T: Sync> Sync for Rows<'_, T> {}

impl<'s, T: Sample> Rows<'s, T> {
    pub fn new(pool: &mut crate::pool::Pool<T>) -> Rows<'s, T> {
        let (n_slots, n_cells, shared) = (pool.n_slots(), pool.n_cells(), pool.is_shared());
        Rows { base: pool.as_mut_slice().as_mut_ptr(), n_slots, n_cells, shared, stage: None }
    }

    /// Rows of a device-resident pool, filled through `stage`.
    pub fn staged(n_slots: usize, n_cells: usize, stage: &'s Staging<'s, T>) -> Rows<'s, T> {
        Rows { base: std::ptr::null_mut(), n_slots, n_cells, shared: false, stage: Some(stage) }
    }

    /// Whether rows go to a device-resident pool (whose upload thread, not the readers,
    /// reports finished rows).
    pub fn is_staged(&self) -> bool {
        self.stage.is_some()
    }

    /// Let `fill` write row `slot` (`bytes`: what was read for it). A host pool row is then
    /// finished and the caller reports it; a device-resident pool's row is queued for the
    /// device and its upload thread reports it (see [`Rows::is_staged`]).
    ///
    /// # Safety
    /// Each slot is filled by one caller, once.
    pub unsafe fn fill<R, E>(
        &self,
        slot: usize,
        bytes: u64,
        fill: impl FnOnce(&mut [T]) -> Result<R, E>,
    ) -> Result<R, E> {
        assert!(slot < self.n_slots);
        match self.stage {
            Some(stage) => stage.fill(slot, bytes, fill),
            // SAFETY: one filler per slot (the caller's promise).
            None => fill(unsafe { self.row(slot) }),
        }
    }

    /// Row `slot`, to write.
    ///
    /// # Safety
    /// No other reference to the row may exist while the returned one lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn row(&self, slot: usize) -> &mut [T] {
        assert!(slot < self.n_slots && !self.base.is_null(), "a host pool row");
        // SAFETY: in bounds; exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(slot * self.n_cells), self.n_cells) }
    }

    /// Slots `slots` as a pool view.
    ///
    /// # Safety
    /// Every row in `slots` must be finished: no writer may touch them while the view lives.
    pub unsafe fn view<'a>(&'a self, slots: std::ops::Range<usize>, decoding: Option<&'a Decoding>) -> PoolView<'a, T> {
        assert!(slots.end <= self.n_slots && !self.base.is_null(), "a host pool view");
        // SAFETY: in bounds; no writer touches these rows (the caller's promise).
        let data = unsafe {
            std::slice::from_raw_parts(self.base.add(slots.start * self.n_cells), slots.len() * self.n_cells)
        };
        PoolView::new(data, slots.len(), self.n_cells, decoding)
    }
}

/// What the readers of one tile do.
pub struct ReadJob<'a> {
    /// The input file of each pool slot.
    pub files: &'a [PathBuf],
    /// The time step of each pool slot within its file (as long as `files`; 0 for files of
    /// one step).
    pub steps: &'a [usize],
    pub layout: &'a VarLayout,
    pub first: &'a std::path::Path,
    pub grid: &'a Grid,
    pub region: &'a Region,
    /// Check every file's coordinates against the first file's (first tile only).
    pub check_grid: bool,
    pub threads: usize,
    pub direct: Option<&'a DirectLayout>,
    /// Send the files the direct path cannot read to forked reader processes (else to the
    /// library in this process).
    pub forked: bool,
    /// Reader processes at a time.
    pub readers: usize,
    pub tile: usize,
}

/// What the readers did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadStats {
    /// Stored bytes read (compressed bytes, for compressed chunks).
    pub bytes: u64,
    /// Bytes that compressed chunks inflated to on the direct path.
    pub inflated: u64,
    pub direct_files: usize,
    pub library_files: usize,
}

/// Read every slot of `job` into `rows`, sending `(slot, bytes)` on `done` as each finishes.
/// On the direct path, `locating` hands over the located files; without it the reader threads
/// locate them. Stops early (without error) when `stop` is set or `done` is disconnected.
///
/// The direct readers are as many as the cores; `SSTCLIM_READER_NICE=N` (a measuring knob)
/// lowers their scheduling priority by N, so that the threads they feed (the upload thread,
/// which copies every row they fill, and the compute and writer threads) run as soon as they
/// wake instead of waiting out a reader's time slice.
pub fn read_all<T: Sample>(
    job: &ReadJob<'_>,
    locating: Option<Locating>,
    rows: &Rows<'_, T>,
    trace: &Trace,
    stop: &AtomicBool,
    done: &Sender<(usize, u64)>,
) -> Result<ReadStats, Error> {
    let mut stats = ReadStats::default();
    let mut library: Vec<usize> = (0..job.files.len()).collect();
    if let Some(dl) = job.direct {
        // all threads read; each file is located by the reader itself (parsed headers) or by
        // the locating processes (through libhdf5)
        let fallback = Mutex::new(Vec::new());
        let corrupt: Mutex<Option<InputError>> = Mutex::new(None);
        let failed = |c: &Mutex<Option<InputError>>| c.lock().unwrap_or_else(|e| e.into_inner()).is_some();
        let inflated = AtomicU64::new(0);
        let bytes = AtomicUsize::new(0);
        let next = AtomicUsize::new(0);
        let (tx, rx) = crossbeam_channel::bounded::<(usize, std::fs::File, u64)>(4 * job.threads);
        let grid = job.check_grid.then_some(job.grid);
        std::thread::scope(|s| {
            let fallback_ref = &fallback;
            let in_thread = locating.is_none();
            match locating {
                Some(locating) => {
                    std::thread::Builder::new()
                        .name("locate".into())
                        .spawn_scoped(s, move || {
                            locating.collect(job.files, &tx, fallback_ref, trace, job.tile);
                            drop(tx);
                        })
                        .expect("spawning the locating thread");
                }
                None => drop(tx),
            }
            for t in 0..job.threads.max(1) {
                let (fallback, bytes, rx, next) = (&fallback, &bytes, rx.clone(), &next);
                let (corrupt, inflated, failed) = (&corrupt, &inflated, &failed);
                std::thread::Builder::new()
                    .name(format!("read-{t}"))
                    .spawn_scoped(s, move || {
                        lower_priority(reader_nice());
                        let mut buf = DirectBuffer::new();
                        let mut chunk_buf = ChunkBuffers::default();
                        // read one located file; false stops this reader
                        let mut read_one = |slot: usize, file: std::fs::File, place: Place| {
                            let read = trace.span_cpu("read", job.tile, Some(slot), || {
                                let bytes = direct::bytes_of(job.layout, job.region);
                                // SAFETY: each slot is handed to exactly one reader.
                                let r = unsafe {
                                    rows.fill(slot, bytes, |row| match &place {
                                        Place::Contiguous(offset) => direct::read_into(
                                            &file, *offset, dl.order, job.layout, job.region, &mut buf, row,
                                        )
                                        .map_err(|e| ChunkError::Fallback(e.to_string())),
                                        Place::Chunked(ch) => direct::read_chunked_into(
                                            &file,
                                            ch,
                                            dl.order,
                                            job.layout,
                                            job.region,
                                            &mut chunk_buf,
                                            row,
                                        ),
                                    })
                                };
                                let n = r.as_ref().map_or(0, |n| *n);
                                (r, n)
                            });
                            match read {
                                Ok(n) => {
                                    bytes.fetch_add(n as usize, Ordering::Relaxed);
                                    rows.is_staged() || done.send((slot, n)).is_ok()
                                }
                                Err(ChunkError::Fallback(_)) => {
                                    fallback.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
                                    true
                                }
                                Err(ChunkError::Corrupt(problem)) => {
                                    // libnetcdf fails on it too: the job stops with this error
                                    let e = InputError::BadVariable {
                                        path: job.files[slot].clone(),
                                        var: job.layout.name.clone(),
                                        problem,
                                    };
                                    corrupt.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                                    false
                                }
                            }
                        };
                        if in_thread {
                            // the next file in date order, located here
                            while !stop.load(Ordering::Relaxed) && !failed(corrupt) {
                                let slot = next.fetch_add(1, Ordering::Relaxed);
                                let Some(path) = job.files.get(slot) else { break };
                                let located = trace.span_cpu("locate", job.tile, Some(slot), || {
                                    (direct::locate(path, dl, job.layout, grid), 0)
                                });
                                let more = match located {
                                    Ok((file, place)) => read_one(slot, file, place),
                                    Err(_) => {
                                        fallback.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
                                        true
                                    }
                                };
                                if !more {
                                    break;
                                }
                            }
                        } else {
                            for (slot, file, offset) in rx {
                                if stop.load(Ordering::Relaxed)
                                    || failed(corrupt)
                                    || !read_one(slot, file, Place::Contiguous(offset))
                                {
                                    break;
                                }
                            }
                        }
                        inflated.fetch_add(chunk_buf.inflated(), Ordering::Relaxed);
                    })
                    .expect("spawning a reader thread");
            }
            drop(rx);
        });
        if let Some(e) = corrupt.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e.into());
        }
        stats.inflated = inflated.into_inner();
        library = fallback.into_inner().unwrap_or_else(|e| e.into_inner());
        library.sort_unstable();
        stats.bytes = bytes.into_inner() as u64;
        stats.direct_files = job.files.len() - library.len();
        if stop.load(Ordering::Relaxed) {
            return Ok(stats);
        }
    }
    if !library.is_empty() {
        if job.direct.is_some() {
            tracing::info!("{} file(s) not stored like the first file: reading them with libnetcdf", library.len());
        }
        // a pool in shared memory goes to the forked readers even on the direct path, so that a
        // file that crashes the library ends a child, not this process
        stats.bytes += if rows.shared && !rows.is_staged() {
            read_forked(job, &library, rows, trace, done)?
        } else {
            read_library(job, &library, rows, trace, stop, done)?
        };
        stats.library_files = library.len();
    }
    Ok(stats)
}

/// Read `slots` with libnetcdf in forked reader processes, straight into the shared pool.
fn read_forked<T: Sample>(
    job: &ReadJob<'_>,
    slots: &[usize],
    rows: &Rows<'_, T>,
    trace: &Trace,
    done: &Sender<(usize, u64)>,
) -> Result<u64, Error> {
    let files: Vec<(usize, PathBuf)> = slots.iter().map(|&s| (s, job.files[s].clone())).collect();
    // a few batches per reader, so that short-lived processes share the work evenly
    let per_child = files.len().div_ceil(4 * job.readers.max(1)).clamp(1, 64);
    let opts = ReaderOptions::new(job.readers, per_child).test_hook_from_env();
    let dest = SharedRows { base: rows.base, n_slots: rows.n_slots, n_cells: rows.n_cells, shared: rows.shared };
    let mut last = trace.now();
    let mut progress = |slot: usize, bytes: u64| {
        // completion intervals: reader processes report files as they finish them
        trace.record("read", job.tile, Some(slot), last, bytes);
        last = trace.now();
        let _ = done.send((slot, bytes));
    };
    let grid = job.check_grid.then_some(job.grid);
    // SAFETY: the rows of `slots` are untouched by anyone else until reported finished, and
    // the pool outlives this call.
    let bytes =
        unsafe { read_forked_into(&files, job.layout, job.first, grid, job.region, dest, &opts, &mut progress) }?;
    Ok(bytes)
}

/// Read `slots` with libnetcdf: this thread opens and reads (the library is not
/// thread-safe), decoder threads unpack and transpose. Returns the bytes of stored data read.
fn read_library<T: Sample>(
    job: &ReadJob<'_>,
    slots: &[usize],
    rows: &Rows<'_, T>,
    trace: &Trace,
    stop: &AtomicBool,
    done: &Sender<(usize, u64)>,
) -> Result<u64, Error> {
    let decoders = job.threads.saturating_sub(1).max(1);
    std::thread::scope(|scope| {
        let (tx, rx) = crossbeam_channel::bounded::<(usize, VarLayout, RawData, f64)>(2 * decoders);
        for d in 0..decoders {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("decode-{d}"))
                .spawn_scoped(scope, move || {
                    for (slot, layout, raw, start) in rx {
                        let n = raw.bytes() as u64;
                        // SAFETY: each slot is sent to one decoder once.
                        let filled = unsafe {
                            rows.fill(slot, n, |row| {
                                decode_region(&layout, job.region, &raw, row);
                                Ok::<(), std::convert::Infallible>(())
                            })
                        };
                        let _: Result<(), std::convert::Infallible> = filled;
                        trace.record("read", job.tile, Some(slot), start, n);
                        if !rows.is_staged() && done.send((slot, n)).is_err() {
                            break;
                        }
                    }
                })
                .expect("spawning a decoder thread");
        }
        drop(rx);
        let mut bytes = 0;
        for &slot in slots {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let start = trace.now();
            let path = &job.files[slot];
            let grid = job.check_grid.then_some(job.grid);
            if job.direct.is_some() {
                // files the direct path refused are read here, in this process: a child reads
                // each first, so that one that crashes the library is named instead (the pool
                // is private or on the device, where forked readers cannot write)
                input::contain::survives(path, "reading the variable", || {
                    let _ = input::read_checked(path, job.layout, job.first, grid, job.region);
                })?;
            }
            let (layout, raw) = input::read_checked(path, job.layout, job.first, grid, job.region)?;
            input::check_pool_packing::<T>(path, &layout, job.layout, job.first)?;
            bytes += raw.bytes() as u64;
            if tx.send((slot, layout, raw, start)).is_err() {
                return Err(Error::DecoderStopped);
            }
        }
        Ok(bytes)
    })
}

/// `SSTCLIM_READER_NICE` (0 when unset or not a number from 0 to 19).
fn reader_nice() -> i32 {
    crate::util::knobs::reader_nice()
}

/// Raise the calling thread's nice value by `by` (Linux: a thread's own priority; lowering
/// priority needs no privilege). Failure only leaves the priority as it was.
fn lower_priority(by: i32) {
    if by == 0 {
        return;
    }
    // SAFETY: plain system calls on the calling thread.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if libc::setpriority(libc::PRIO_PROCESS, tid, (now + by).min(19)) != 0 {
            tracing::debug!("could not lower reader thread {tid}'s priority");
        }
    }
}
