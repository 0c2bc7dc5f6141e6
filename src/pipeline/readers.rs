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
//!
//! Every slot is read at its time step within its file (`ReadJob::steps`). On the direct path
//! the slots are read in units ([`super::units`]): one slot each for files of one step or
//! chunks of one step, else the slots of a file whose steps share chunks, every chunk inflated
//! once for all of them; a file is located once for all its slots. The library paths open a
//! file once for the steps they read from it in a row.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crossbeam_channel::Sender;

use super::locate::{LocatedSlot, Locating};
use super::stage::Staging;
use super::trace::Trace;
use super::units::{library_order, Units};
use crate::error::Error;
use crate::input::direct::{self, ChunkBuffers, ChunkError, DirectBuffer, DirectLayout, Located, Place};
use crate::input::{
    self, decode_region, read_forked_steps_into, Grid, InputError, RawData, ReaderEvent, ReaderOptions, Region,
    SharedRows, SlotStep, VarLayout,
};
use crate::pool::{Decoding, PoolView, Sample};
use crate::source::MemorySeries;

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

    /// The staging of a device-resident pool.
    pub fn stage(&self) -> Option<&Staging<'s, T>> {
        self.stage
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
    /// The values are a caller's array in memory (`files` then name its steps).
    pub memory: Option<&'a MemorySeries>,
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
    if let Some(series) = job.memory {
        return Ok(read_memory(job, series, rows, trace, stop, done));
    }
    let (mut stats, library) = match job.direct {
        Some(dl) => {
            let (stats, library) = read_direct(job, dl, locating, rows, trace, stop, done)?;
            if stop.load(Ordering::Relaxed) {
                return Ok(stats);
            }
            (stats, library)
        }
        None => (ReadStats::default(), (0..job.files.len()).collect()),
    };
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

/// The direct path: all threads read; each file is located by the reader itself (parsed
/// headers) or by the locating processes (through libhdf5); slots of one file that share chunks
/// are read together, and a file of many steps is located once (see `super::units`). Returns
/// what was read and the slots left to libnetcdf (files not stored like the first).
fn read_direct<T: Sample>(
    job: &ReadJob<'_>,
    dl: &DirectLayout,
    locating: Option<Locating>,
    rows: &Rows<'_, T>,
    trace: &Trace,
    stop: &AtomicBool,
    done: &Sender<(usize, u64)>,
) -> Result<(ReadStats, Vec<usize>), Error> {
    let units = match locating {
        None => Units::plan(job.files, job.steps, dl.step_block),
        Some(_) => Units::plan(&[], &[], 1),
    };
    let d = Direct {
        job,
        dl,
        rows,
        trace,
        stop,
        done,
        grid: job.check_grid.then_some(job.grid),
        units,
        next: AtomicUsize::new(0),
        fallback: Mutex::new(Vec::new()),
        corrupt: Mutex::new(None),
        inflated: AtomicU64::new(0),
        bytes: AtomicUsize::new(0),
    };
    let (tx, rx) = crossbeam_channel::bounded::<LocatedSlot>(4 * job.threads);
    let in_thread = locating.is_none();
    std::thread::scope(|s| {
        let fallback = &d.fallback;
        match locating {
            Some(locating) => {
                std::thread::Builder::new()
                    .name("locate".into())
                    .spawn_scoped(s, move || {
                        locating.collect(job.files, &tx, fallback, trace, job.tile);
                        drop(tx);
                    })
                    .expect("spawning the locating thread");
            }
            None => drop(tx),
        }
        for t in 0..job.threads.max(1) {
            let (d, rx) = (&d, rx.clone());
            std::thread::Builder::new()
                .name(format!("read-{t}"))
                .spawn_scoped(s, move || d.reader(in_thread, rx))
                .expect("spawning a reader thread");
        }
        drop(rx);
    });
    if let Some(e) = d.corrupt.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e.into());
    }
    let mut library = d.fallback.into_inner().unwrap_or_else(|e| e.into_inner());
    library.sort_unstable();
    let stats = ReadStats {
        bytes: d.bytes.into_inner() as u64,
        inflated: d.inflated.into_inner(),
        direct_files: job.files.len() - library.len(),
        library_files: 0,
    };
    Ok((stats, library))
}

/// What the direct path's reader threads share.
struct Direct<'a, 'r, T> {
    job: &'a ReadJob<'a>,
    dl: &'a DirectLayout,
    rows: &'a Rows<'r, T>,
    trace: &'a Trace,
    stop: &'a AtomicBool,
    done: &'a Sender<(usize, u64)>,
    /// The grid every file is checked against (first tile only).
    grid: Option<&'a Grid>,
    units: Units<'a>,
    /// The next unit to read (readers that locate their files).
    next: AtomicUsize,
    /// Slots left to libnetcdf.
    fallback: Mutex<Vec<usize>>,
    /// Damage found: the job stops with it.
    corrupt: Mutex<Option<InputError>>,
    inflated: AtomicU64,
    bytes: AtomicUsize,
}

impl<T: Sample> Direct<'_, '_, T> {
    /// One reader thread: units in date order, located here (`in_thread`), or files the
    /// locating processes hand over on `rx`.
    fn reader(&self, in_thread: bool, rx: crossbeam_channel::Receiver<LocatedSlot>) {
        let (job, stop) = (self.job, self.stop);
        lower_priority(reader_nice());
        let mut bufs = Buffers::<T>::default();
        if in_thread {
            // the next unit in date order, its file located here (or by another unit of the file)
            while !stop.load(Ordering::Relaxed) && !self.failed() {
                let Some(unit) = self.units.units.get(self.next.fetch_add(1, Ordering::Relaxed)) else { break };
                let path = self.units.paths[unit.file];
                let located = self.units.locate(unit, || {
                    self.trace.span_cpu("locate", job.tile, Some(unit.slots[0].0), || {
                        (direct::locate_file(path, self.dl, job.layout, self.grid), 0)
                    })
                });
                let more = match located {
                    Ok((file, located)) => self.read_one(&unit.slots, &file, &located, &mut bufs),
                    Err(_) => {
                        self.to_library(&mut unit.slots.iter().map(|s| s.0));
                        true
                    }
                };
                if !more {
                    break;
                }
            }
        } else {
            for l in rx {
                let located = Located { place: Place::Contiguous(l.offset), steps: l.steps };
                let step = job.steps.get(l.slot).copied().unwrap_or(0);
                if stop.load(Ordering::Relaxed)
                    || self.failed()
                    || !self.read_one(&[(l.slot, step)], &l.file, &located, &mut bufs)
                {
                    break;
                }
            }
        }
        self.inflated.fetch_add(bufs.chunks.inflated(), Ordering::Relaxed);
    }

    /// Read one located unit; false stops this reader.
    fn read_one(&self, slots: &[(usize, usize)], file: &File, located: &Located, bufs: &mut Buffers<T>) -> bool {
        let job = self.job;
        let mut report = |slot: usize, n: u64| self.done.send((slot, n)).is_ok();
        let read = self.trace.span_cpu("read", job.tile, Some(slots[0].0), || {
            let r = read_unit(job, self.dl, self.rows, slots, file, located, bufs, &mut report);
            let n = r.as_ref().map_or(0, |r| r.0);
            (r, n)
        });
        match read {
            Ok((n, more)) => {
                self.bytes.fetch_add(n as usize, Ordering::Relaxed);
                more
            }
            Err((ChunkError::Fallback(_), finished)) => {
                self.to_library(&mut slots[finished..].iter().map(|s| s.0));
                true
            }
            Err((ChunkError::Corrupt(problem), _)) => {
                // libnetcdf fails on it too: the job stops with this error
                let e = InputError::BadVariable {
                    path: job.files[slots[0].0].clone(),
                    var: job.layout.name.clone(),
                    problem,
                };
                self.corrupt.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                false
            }
        }
    }

    fn to_library(&self, slots: &mut dyn Iterator<Item = usize>) {
        self.fallback.lock().unwrap_or_else(|e| e.into_inner()).extend(slots);
    }

    fn failed(&self) -> bool {
        self.corrupt.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}

/// Read `slots` with libnetcdf in forked reader processes, straight into the shared pool.
fn read_forked<T: Sample>(
    job: &ReadJob<'_>,
    slots: &[usize],
    rows: &Rows<'_, T>,
    trace: &Trace,
    done: &Sender<(usize, u64)>,
) -> Result<u64, Error> {
    // a few batches per reader, so that short-lived processes share the work evenly
    let per_child = slots.len().div_ceil(4 * job.readers.max(1)).clamp(1, 64);
    // consecutive steps of a file in one batch: the reader opens it once for them
    let order = library_order(job.files, job.steps, slots, per_child);
    let files: Vec<SlotStep> = order.into_iter().map(|(s, step)| (s, job.files[s].clone(), step)).collect();
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
    let mut events = |event: ReaderEvent| record_child(trace, job.tile, event);
    // SAFETY: the rows of `slots` are untouched by anyone else until reported finished, and
    // the pool outlives this call.
    let bytes = unsafe {
        read_forked_steps_into(&files, job.layout, job.first, grid, job.region, dest, &opts, &mut progress, &mut events)
    }?;
    Ok(bytes)
}

/// The reader processes in the trace: each fork as a `fork` span of this thread (its bytes:
/// the files given to the child), and each file a child read as a `child-file` span (with
/// the child's processor time) split into `child-open`, `child-read` (the library's read:
/// chunk reads and inflating) and `child-decode` (into the pool), on a thread named after the
/// child. A child's time not in its files is spent starting or waiting.
fn record_child(trace: &Trace, tile: usize, event: ReaderEvent) {
    match event {
        ReaderEvent::Forked { files, start, end, .. } => {
            trace.record_between("fork", tile, None, "readers", start, end, files as u64)
        }
        ReaderEvent::File(f) => {
            let thread = format!("reader-{}", f.pid);
            let cpu = Some(f.cpu.as_secs_f64());
            trace.record_between_cpu("child-file", tile, Some(f.slot), &thread, f.start, f.end, f.bytes, cpu);
            let opened = f.start + f.open;
            let read = opened + f.read;
            trace.record_between("child-open", tile, Some(f.slot), &thread, f.start, opened, 0);
            trace.record_between("child-read", tile, Some(f.slot), &thread, opened, read, f.bytes);
            trace.record_between("child-decode", tile, Some(f.slot), &thread, read, read + f.decode, 0);
        }
    }
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
        let grid = job.check_grid.then_some(job.grid);
        // each file opened and checked once for the steps read from it in a row
        let order = library_order(job.files, job.steps, slots, LIBRARY_BLOCK);
        for run in order.chunk_by(|a, b| job.files[a.0] == job.files[b.0]) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let path = &job.files[run[0].0];
            if job.direct.is_some() {
                // files the direct path refused are read here, in this process: a child reads
                // each first, so that one that crashes the library is named instead (the pool
                // is private or on the device, where forked readers cannot write)
                input::contain::survives(path, "reading the variable", || {
                    let _ = input::read_checked_at(path, job.layout, job.first, grid, job.region, run[0].1);
                })?;
            }
            let start = trace.now();
            let (file, layout) = input::open_checked(path, job.layout, job.first, grid)?;
            input::check_pool_packing::<T>(path, &layout, job.layout, job.first)?;
            for (i, &(slot, step)) in run.iter().enumerate() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let start = if i == 0 { start } else { trace.now() };
                let raw = input::read_step(&file, path, &layout, job.region, step)?;
                bytes += raw.bytes() as u64;
                if tx.send((slot, layout.clone(), raw, start)).is_err() {
                    return Err(Error::DecoderStopped);
                }
            }
        }
        Ok(bytes)
    })
}

/// Steps of one file the library path reads in a row (one open) before going on to the next
/// file's.
const LIBRARY_BLOCK: usize = 32;

/// Per-thread buffers of the direct readers.
struct Buffers<T> {
    pub direct: DirectBuffer,
    pub chunks: ChunkBuffers,
    /// Rows decoded here before they go to a device-resident pool's staging rows.
    staged: Vec<T>,
}

impl<T> Default for Buffers<T> {
    fn default() -> Self {
        Buffers { direct: DirectBuffer::new(), chunks: ChunkBuffers::default(), staged: Vec::new() }
    }
}

/// At most so many bytes of rows a reader thread decodes at once for a device-resident pool,
/// whose staging rows are too few to hold every step of a chunk: a unit of more is cut into
/// the fewest equal batches, and its chunks are inflated once per batch. Large enough for a
/// 30-step chunk of a global 0.25-degree int16 field in one batch (a smaller cap read every
/// such chunk twice: bench-results/runs/2026-12-02-h200-timeseries); the buffer grows only to
/// the units a thread meets.
const STAGED_BATCH_BYTES: usize = 256 << 20;

/// Why a unit was not read: the error, and how many of its slots (the first ones) were filled
/// and reported before it.
type Failed = (ChunkError, usize);

/// Read unit `slots` of `file` (located at `located`) into `rows`, calling `report(slot,
/// bytes)` as each slot is finished (host pools; a device-resident pool's upload thread
/// reports its rows); `report` answers false when nobody listens any more. Returns the stored
/// bytes read and whether to go on.
/// Fill every slot from a caller's array in memory, on every thread, decoding as a file's
/// values are decoded (see [`crate::source`]).
fn read_memory<T: Sample>(
    job: &ReadJob<'_>,
    series: &MemorySeries,
    rows: &Rows<'_, T>,
    trace: &Trace,
    stop: &AtomicBool,
    done: &Sender<(usize, u64)>,
) -> ReadStats {
    let next = AtomicUsize::new(0);
    let bytes = (job.region.n_cells() * job.layout.storage.size()) as u64;
    std::thread::scope(|s| {
        for t in 0..job.threads.max(1) {
            let next = &next;
            std::thread::Builder::new()
                .name(format!("read-{t}"))
                .spawn_scoped(s, move || loop {
                    let slot = next.fetch_add(1, Ordering::Relaxed);
                    if slot >= job.files.len() || stop.load(Ordering::Relaxed) {
                        return;
                    }
                    trace
                        .span_cpu("read", job.tile, Some(slot), || {
                            let step = job.steps[slot];
                            // SAFETY: each slot is taken by one thread (the counter), once.
                            let filled = unsafe {
                                rows.fill(slot, bytes, |row| {
                                    series.decode_into(step, job.region, &job.layout.packing, row);
                                    Ok::<(), std::convert::Infallible>(())
                                })
                            };
                            (filled, bytes)
                        })
                        .unwrap_or_else(|never| match never {});
                    if !rows.is_staged() && done.send((slot, bytes)).is_err() {
                        return;
                    }
                })
                .expect("spawning a reader thread");
        }
    });
    let n = job.files.len();
    ReadStats { bytes: bytes * n as u64, inflated: 0, direct_files: n, library_files: 0 }
}

#[allow(clippy::too_many_arguments)]
fn read_unit<T: Sample>(
    job: &ReadJob<'_>,
    dl: &DirectLayout,
    rows: &Rows<'_, T>,
    slots: &[(usize, usize)],
    file: &File,
    located: &Located,
    bufs: &mut Buffers<T>,
    report: &mut dyn FnMut(usize, u64) -> bool,
) -> Result<(u64, bool), Failed> {
    let (layout, region) = (job.layout, job.region);
    if let Some(&(_, step)) = slots.iter().find(|s| s.1 >= located.steps) {
        // libnetcdf reads the file instead, and says what is wrong
        return Err((ChunkError::Fallback(format!("no step {step} (the file holds {})", located.steps)), 0));
    }
    let one_bytes = direct::bytes_of(layout, region);
    let mut total = 0;
    let mut finished = 0;
    // one slot at a time: each row filled and reported on its own
    let mut each = |fill: &mut dyn FnMut(usize, &mut [T], &mut Buffers<T>) -> Result<u64, ChunkError>| {
        for &(slot, step) in slots {
            // SAFETY: each slot belongs to one unit, read by one thread.
            let n = unsafe { rows.fill(slot, one_bytes, |row| fill(step, row, bufs)) }.map_err(|e| (e, finished))?;
            total += n;
            finished += 1;
            if !rows.is_staged() && !report(slot, n) {
                return Ok((total, false));
            }
        }
        Ok((total, true))
    };
    let ch = match &located.place {
        Place::Contiguous(offset) => {
            return each(&mut |step, row, b| {
                direct::read_step_into(file, *offset, step, dl.order, layout, region, &mut b.direct, row)
                    .map_err(|e| ChunkError::Fallback(e.to_string()))
            })
        }
        Place::Chunked(ch) if slots.len() == 1 => {
            return each(&mut |step, row, b| {
                direct::read_chunked_step_into(file, ch, dl.order, layout, region, step, &mut b.chunks, row)
            })
        }
        Place::Chunked(ch) => ch,
    };
    // several steps of chunks that hold them all: each chunk inflated once for all
    let steps: Vec<usize> = slots.iter().map(|s| s.1).collect();
    if !rows.is_staged() {
        // SAFETY: each slot belongs to one unit, read by one thread; the rows are distinct.
        let mut dests: Vec<&mut [T]> = slots.iter().map(|&(slot, _)| unsafe { rows.row(slot) }).collect();
        let stored =
            direct::read_chunked_steps_into(file, ch, dl.order, layout, region, &steps, &mut bufs.chunks, &mut dests)
                .map_err(|e| (e, 0))?;
        drop(dests);
        let share = stored / slots.len() as u64;
        for &(slot, _) in slots {
            if !report(slot, share) {
                return Ok((stored, false));
            }
        }
        return Ok((stored, true));
    }
    // a device-resident pool: batches of rows decoded here, then copied to staging rows
    let n_cells = region.n_cells();
    let most = (STAGED_BATCH_BYTES / (n_cells * std::mem::size_of::<T>()).max(1)).max(1);
    let per_batch = slots.len().div_ceil(slots.len().div_ceil(most).max(1));
    for (batch, batch_steps) in slots.chunks(per_batch).zip(steps.chunks(per_batch)) {
        bufs.staged.resize(batch.len() * n_cells, T::from_f64(0.0));
        let mut dests: Vec<&mut [T]> = bufs.staged.chunks_mut(n_cells).collect();
        let stored = direct::read_chunked_steps_into(
            file,
            ch,
            dl.order,
            layout,
            region,
            batch_steps,
            &mut bufs.chunks,
            &mut dests,
        )
        .map_err(|e| (e, finished))?;
        drop(dests);
        let share = stored / batch.len() as u64;
        for (i, &(slot, _)) in batch.iter().enumerate() {
            let decoded = &bufs.staged[i * n_cells..(i + 1) * n_cells];
            // SAFETY: each slot belongs to one unit, read by one thread.
            let copied = unsafe {
                rows.fill(slot, share, |row| {
                    row.copy_from_slice(decoded);
                    Ok::<(), ChunkError>(())
                })
            };
            copied.map_err(|e| (e, finished))?;
            finished += 1;
        }
        total += stored;
    }
    Ok((total, true))
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
