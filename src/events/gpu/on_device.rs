//! One band's events on a device: the pool, the climatology rows, the days and the decoding
//! table uploaded, each kind counted (pass 0), its offsets scanned here in cell order (the
//! CPU's order), measured and summarised (pass 1), and only the event columns and the summary
//! brought back.
//!
//! A band that does not fit the device's free memory is cut into sub-bands of cells (the pool's
//! rows copied with a pitch, no host copy): a global int16 band of 41 years is about 31 GB of
//! pool, which fits an 80 GB card whole with its climatology and scratch.

use super::super::columns::EventColumns;
use super::super::scan::{BandInput, Found, Kind};
use super::params::{EventParams, BLOCK, N_STATS};
use crate::engine::gpu::source::events_source_inlined;
use crate::engine::gpu::{DevPtr, Device, GpuError};

/// A pool value type the kernel has an entry point for.
pub trait GpuValue: Copy + Sync {
    /// The kernel's entry point for this pool type.
    const KERNEL: &'static str;
}

impl GpuValue for f32 {
    const KERNEL: &'static str = "sstclim_events_f32";
}
impl GpuValue for f64 {
    const KERNEL: &'static str = "sstclim_events_f64";
}
impl GpuValue for i16 {
    const KERNEL: &'static str = "sstclim_events_i16";
}

/// Bytes of device memory a cell may take beyond its pool, climatology and summaries: its
/// events (145 bytes each), planned for one event every 64 days of series.
const EVENT_BYTES: usize = 8 * 4 + 14 * 8 + 1;

/// Device memory left free for the driver and the days' arrays.
const RESERVE: u64 = 512 << 20;

/// Device allocations freed together when dropped (on success and on error).
struct Buffers<'d, D: Device> {
    dev: &'d mut D,
    held: Vec<DevPtr>,
}

impl<D: Device> Buffers<'_, D> {
    fn alloc(&mut self, bytes: usize) -> Result<DevPtr, GpuError> {
        let p = self.dev.alloc(bytes.max(8))?;
        self.held.push(p);
        Ok(p)
    }

    /// `data` uploaded into a new allocation.
    fn upload<T: Copy>(&mut self, data: &[T]) -> Result<DevPtr, GpuError> {
        let bytes = std::mem::size_of_val(data);
        let p = self.alloc(bytes)?;
        if bytes > 0 {
            // SAFETY: `data` is readable for `bytes` and lives until the stream is synchronized
            // (before this function's caller returns); `p` holds `bytes`.
            unsafe { self.dev.copy_h2d(p, bytes, data.as_ptr().cast(), bytes, bytes, 1)? };
        }
        Ok(p)
    }

    /// Columns `lo..lo + w` of the `rows` rows of `data` (`n` values a row) into a new
    /// allocation of `rows` rows of `w` values.
    fn upload_cols<T: Copy>(&mut self, data: &[T], n: usize, (lo, w): (usize, usize)) -> Result<DevPtr, GpuError> {
        let size = std::mem::size_of::<T>();
        let rows = data.len() / n.max(1);
        assert!(lo + w <= n && rows * n == data.len());
        let p = self.alloc(rows * w * size)?;
        if rows > 0 && w > 0 {
            // SAFETY: every row's piece `lo..lo + w` lies within `data` (checked above), which
            // lives until the stream is synchronized; `p` holds `rows * w` values.
            unsafe { self.dev.copy_h2d(p, w * size, data[lo..].as_ptr().cast(), n * size, w * size, rows)? };
        }
        Ok(p)
    }

    /// `out.len()` values from `src` (synchronized before returning).
    fn download<T: Copy>(&mut self, out: &mut [T], src: DevPtr) -> Result<(), GpuError> {
        let bytes = std::mem::size_of_val(out);
        if bytes > 0 {
            // SAFETY: `out` is writable for `bytes`; `src` holds them; synchronized below.
            unsafe { self.dev.copy_d2h(out.as_mut_ptr().cast(), bytes, src, bytes, bytes, 1)? };
        }
        self.dev.synchronize()
    }
}

impl<D: Device> Drop for Buffers<'_, D> {
    fn drop(&mut self) {
        let _ = self.dev.synchronize();
        for p in self.held.drain(..) {
            // SAFETY: allocated by `alloc`; the stream is synchronized, no queued work uses it.
            unsafe { self.dev.free(p) };
        }
    }
}

/// What [`detect_band_on`] uploads once for the whole band: the days and the decoding table.
struct Shared {
    slot_of_day: DevPtr,
    doy: DevPtr,
    year: DevPtr,
    table: DevPtr,
}

/// Detect, measure and summarise every kind's events in every cell of the band on `dev`:
/// [`super::super::scan::detect_band`]'s result (`table`: the int16 pool's decoding, `value =
/// table[v + 32768]`; ignored for float pools).
pub fn detect_band_on<D: Device, T: GpuValue>(
    dev: &mut D,
    input: &BandInput<'_, T>,
    table: Option<&[f64]>,
    kinds: &[Kind<'_>],
    cell0: usize,
) -> Result<Vec<Found>, GpuError> {
    detect_band_in_parts(dev, input, table, kinds, cell0, usize::MAX)
}

/// [`detect_band_on`] in sub-bands of at most `max_cells` cells (fewer where the device's
/// memory asks for it): tests cut small bands as the device cuts large ones.
pub(crate) fn detect_band_in_parts<D: Device, T: GpuValue>(
    dev: &mut D,
    input: &BandInput<'_, T>,
    table: Option<&[f64]>,
    kinds: &[Kind<'_>],
    cell0: usize,
    max_cells: usize,
) -> Result<Vec<Found>, GpuError> {
    dev.bind()?;
    dev.prepare_entry("events.hip", &events_source_inlined, T::KERNEL)?;
    let n_cells = input.n_cells;
    let days = input.days;
    let n_stats = N_STATS * days.n_years;
    let mut found: Vec<Found> =
        kinds.iter().map(|_| Found { events: Vec::new(), summary: vec![f32::NAN; n_stats * n_cells] }).collect();
    if n_cells == 0 || kinds.is_empty() {
        return Ok(found);
    }
    let width = sub_band_cells(dev, input, kinds.len())?.min(max_cells.max(1));
    let mut bufs = Buffers { dev, held: Vec::new() };
    let slots: Vec<i64> = input.slot_of_day.iter().map(|s| s.map_or(-1, |s| s as i64)).collect();
    let shared = Shared {
        slot_of_day: bufs.upload(&slots)?,
        doy: bufs.upload(&days.doy_index)?,
        year: bufs.upload(&days.year_index)?,
        table: bufs.upload(table.unwrap_or(&[]))?,
    };
    for lo in (0..n_cells).step_by(width) {
        let w = width.min(n_cells - lo);
        let mut sub = Buffers { dev: &mut *bufs.dev, held: Vec::new() };
        sub_band(&mut sub, &shared, input, kinds, (lo, w), cell0, &mut found)?;
    }
    Ok(found)
}

/// Cells a sub-band holds so that its pool, climatology, scratch and events fit the device's
/// free memory (the whole band where it fits).
fn sub_band_cells<D: Device, T>(dev: &mut D, input: &BandInput<'_, T>, n_kinds: usize) -> Result<usize, GpuError> {
    let n_cells = input.n_cells;
    let n_slots = input.data.len() / n_cells.max(1);
    let n_doy = input.mean.len() / n_cells.max(1);
    let n_days = input.days.len();
    let n_stats = N_STATS * input.days.n_years;
    let per_cell = n_slots * std::mem::size_of::<T>()
        + n_doy * 8 * (1 + n_kinds)
        + 4
        + 8
        + n_stats * (8 + 4)
        + n_days.div_ceil(64) * EVENT_BYTES;
    let free = dev.free_memory()?.saturating_sub(RESERVE) as usize;
    let fits = free / per_cell.max(1);
    if fits == 0 {
        return Err(GpuError {
            api: D::API,
            call: "plan",
            device: dev.info().description.clone(),
            detail: format!("one cell's series and climatology ({per_cell} bytes) do not fit the free memory ({free} bytes)"),
        });
    }
    if fits < n_cells {
        tracing::info!("events on the device: {n_cells} cells in sub-bands of {fits} ({per_cell} bytes a cell)");
    }
    Ok(fits.min(n_cells))
}

/// Cells `lo..lo + w` of the band: uploaded, every kind detected, its events appended to
/// `found` and its summary written into the band's.
fn sub_band<D: Device, T: GpuValue>(
    bufs: &mut Buffers<'_, D>,
    shared: &Shared,
    input: &BandInput<'_, T>,
    kinds: &[Kind<'_>],
    (lo, w): (usize, usize),
    cell0: usize,
    found: &mut [Found],
) -> Result<(), GpuError> {
    let n_cells = input.n_cells;
    let days = input.days;
    let n_stats = N_STATS * days.n_years;
    let mut p = EventParams {
        pool: bufs.upload_cols(input.data, n_cells, (lo, w))?,
        table: shared.table,
        slot_of_day: shared.slot_of_day,
        doy: shared.doy,
        year: shared.year,
        mean: bufs.upload_cols(input.mean, n_cells, (lo, w))?,
        counts: bufs.alloc(w * 4)?,
        offsets: bufs.alloc(w * 8)?,
        acc: bufs.alloc(n_stats * w * 8)?,
        summary: bufs.alloc(n_stats * w * 4)?,
        pool_stride: w as i64,
        clim_stride: w as i64,
        n_cells: w as i64,
        n_days: days.len() as i64,
        n_doy: (input.mean.len() / n_cells) as i64,
        n_years: days.n_years as i64,
        ..EventParams::default()
    };
    for (kind, f) in kinds.iter().zip(found.iter_mut()) {
        p.thresh = bufs.upload_cols(kind.thresh, n_cells, (lo, w))?;
        p.min_duration = kind.params.min_duration as i64;
        p.max_gap = kind.params.max_gap.map_or(-1, |g| g as i64);
        p.cold = i64::from(kind.params.cold);
        let (events, summary) = kind_on_device(bufs, &mut p, T::KERNEL, cell0 + lo)?;
        f.events.push(events);
        for (i, row) in summary.chunks_exact(w).enumerate() {
            f.summary[i * n_cells + lo..i * n_cells + lo + w].copy_from_slice(row);
        }
    }
    Ok(())
}

/// One kind's two passes over the sub-band `p` describes (its threshold set): its events
/// (cells numbered from `first_cell`) and its summary (`[stat * n_years + year][cell]`).
fn kind_on_device<D: Device>(
    bufs: &mut Buffers<'_, D>,
    p: &mut EventParams,
    kernel: &str,
    first_cell: usize,
) -> Result<(EventColumns, Vec<f32>), GpuError> {
    let w = p.n_cells as usize;
    let grid = w.div_ceil(BLOCK as usize) as u32;
    p.pass = 0;
    launch(bufs.dev, kernel, grid, p)?;
    let mut counts = vec![0i32; w];
    bufs.download(&mut counts, p.counts)?;
    // each cell's first event: the events in cell order, as the CPU scan gives them
    let mut offsets = Vec::with_capacity(w);
    let mut cells = Vec::new();
    for (c, &n) in counts.iter().enumerate() {
        offsets.push(cells.len() as i64);
        cells.extend(std::iter::repeat(first_cell + c).take(n as usize));
    }
    let n = cells.len();
    // SAFETY: `offsets` holds `w` values and `p.offsets` `w * 8` bytes; synchronized before
    // `offsets` is dropped (by the download below).
    unsafe { bufs.dev.copy_h2d(p.offsets, w * 8, offsets.as_ptr().cast(), w * 8, w * 8, 1)? };
    let mut events = Buffers { dev: &mut *bufs.dev, held: Vec::new() };
    p.ints = events.alloc(8 * n * 4)?;
    p.floats = events.alloc(14 * n * 8)?;
    p.category = events.alloc(n)?;
    p.n_events = n as i64;
    p.pass = 1;
    launch(events.dev, kernel, grid, p)?;
    let mut cols = EventColumns { cell: cells, ..EventColumns::default() };
    let mut ints = vec![0i32; 8 * n];
    let mut floats = vec![0f64; 14 * n];
    cols.category = vec![0i8; n];
    events.download(&mut ints, p.ints)?;
    events.download(&mut floats, p.floats)?;
    events.download(&mut cols.category, p.category)?;
    let mut summary = vec![0f32; N_STATS * p.n_years as usize * w];
    events.download(&mut summary, p.summary)?;
    drop(offsets);
    if n > 0 {
        for (col, vals) in cols.ints.iter_mut().zip(ints.chunks_exact(n)) {
            *col = vals.to_vec();
        }
        for (col, vals) in cols.floats.iter_mut().zip(floats.chunks_exact(n)) {
            *col = vals.to_vec();
        }
    }
    Ok((cols, summary))
}

/// One launch of the kernel over the sub-band.
fn launch<D: Device>(dev: &mut D, kernel: &str, grid: u32, p: &EventParams) -> Result<(), GpuError> {
    let mut block = *p;
    // SAFETY: `block` is laid out as the kernel's `EventParams` (params.rs) and lives through
    // the call (the launch copies it); its addresses are this sub-band's live allocations,
    // sized for the cells, days and events it describes.
    unsafe { dev.launch_entry(kernel, grid, BLOCK, (&mut block as *mut EventParams).cast()) }
}
