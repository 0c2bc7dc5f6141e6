//! Detecting the events of every cell of a band at once, day by day over the band's pool
//! (`[day slot][cell]`, as the readers fill it), for one or several kinds of event (heatwaves
//! and cold spells) from the same pass.
//!
//! Why not gather each cell's series and call [`super::detect_cell`]: turning the day-major
//! pool into cell-major float64 series writes the whole band a second time, eight bytes a day
//! and cell, strided; here a chunk of neighbouring cells is scanned one day row at a time
//! (their values, mean and thresholds are contiguous in the pool and in the climatology's own
//! `[doy][cell]` layout), keeping only each cell's open run, and the float64 series is built
//! for the few days around each event found. Every value compared and measured is computed by
//! the same expression as in `detect_cell` (missing days take the mean, the sign flips cold
//! spells), so the events are bit for bit those of `detect_cell` on the gathered series.

use rayon::prelude::*;

use super::codes::Codes;
use super::columns::EventColumns;
use super::metrics::measure_at;
use super::summary::{block_average, STATS};
use super::{Days, Event, Params};

/// A band's inputs: the pool's values, the day each slot holds, and the climatology in its
/// file's layout (`mean[doy * n_cells + cell]`).
pub struct BandInput<'a, T> {
    /// `data[slot * n_cells + cell]`.
    pub data: &'a [T],
    pub n_cells: usize,
    /// Pool slot of each day of the series (`None`: a missing day).
    pub slot_of_day: &'a [Option<usize>],
    pub days: &'a Days,
    /// `mean[doy * n_cells + cell]`, NaN where the climatology has none.
    pub mean: &'a [f64],
    /// For a pool of int16 values decoded by a table that orders them ([`Codes`]): the order
    /// and the pool's values as stored (`data` itself), compared without decoding.
    pub codes: Option<(&'a Codes, &'a [i16])>,
}

/// One kind of event searched for: its settings and its threshold (`[doy][cell]`, like the
/// mean).
pub struct Kind<'a> {
    pub params: Params,
    pub thresh: &'a [f64],
}

/// What one kind found in a band: its events as columns, chunk by chunk in cell order (cells
/// as global indices: `cell0` plus the band's), and the summaries as
/// `summary[(stat * n_years + year) * n_cells + cell]`.
pub struct Found {
    pub events: Vec<EventColumns>,
    pub summary: Vec<f32>,
}

impl Found {
    pub fn n_events(&self) -> usize {
        self.events.iter().map(|c| c.len()).sum()
    }
}

/// Cells a worker scans at a time: the chunk's climatology (the mean and a threshold per kind,
/// every day of the year) stays in the second-level cache while the scan goes through the
/// years, and its open runs and words of exceedances in the first.
const CHUNK: usize = 64;

/// Cells a worker scans at a time when the values are compared as stored ([`Codes`]): the
/// chunk's limits are 4 bytes a day of year and cell (the float64 climatology is not read
/// in the scan), so wider chunks fit the cache, and each day's row of the pool is read in
/// longer pieces (one page of the pool per chunk and day: fewer chunks, fewer TLB misses).
pub(super) const CODE_CHUNK: usize = 256;

/// How many days ahead the scan asks for a chunk's values: each day's row of the pool is far
/// from the previous one (a whole band's row apart), which no hardware prefetcher follows.
const PREFETCH: usize = 8;

/// Ask for the cache lines of `row` ahead of their use (a hint; nothing on other targets).
fn prefetch<T>(row: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = std::mem::size_of_val(row);
        let p = row.as_ptr().cast::<i8>();
        for off in (0..bytes).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults, and `off` stays within `row`.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Ask for the cache lines of `cell`'s value on each day of `days` (rows of `n_cells`).
fn prefetch_days<T>(input: &BandInput<'_, T>, (cell, n_cells): (usize, usize), days: std::ops::RangeInclusive<usize>) {
    for i in days {
        if let Some(Some(slot)) = input.slot_of_day.get(i) {
            let at = slot * n_cells + cell;
            prefetch(&input.data[at..at + 1]);
        }
    }
}

/// No open run.
const NONE: usize = usize::MAX;

/// One chunk's events, per kind (its statistics go straight into the band's [`Rows`]).
type ChunkOut = Vec<EventColumns>;

/// A kind's summary of the band (`[stat * n_years + year][cell]`, float32 as the file stores
/// it), filled by every chunk at once, each writing only its own cells of every row: no
/// per-chunk copy to gather afterwards (on a global grid that copy is gigabytes of fresh
/// pages and one more pass).
struct Rows {
    ptr: *mut f32,
    len: usize,
    n_cells: usize,
}

// SAFETY: `Rows` is only written through `put`, whose callers write disjoint cells (every
// cell belongs to one chunk, scanned by one worker), and read after every worker is done.
unsafe impl Sync for Rows {}

impl Rows {
    /// Write `vals` (cells `lo..lo + vals.len()`) into row `i`.
    ///
    /// # Safety
    /// No other thread writes these cells of this row meanwhile.
    unsafe fn put(&self, i: usize, lo: usize, vals: &[f32]) {
        let at = i * self.n_cells + lo;
        assert!(lo + vals.len() <= self.n_cells && at + vals.len() <= self.len);
        // SAFETY: in bounds (checked above) of the live allocation the band's `Found` owns;
        // the caller guarantees that nobody else writes these cells.
        unsafe { std::ptr::copy_nonoverlapping(vals.as_ptr(), self.ptr.add(at), vals.len()) };
    }
}

/// Detect, measure and summarise the events of every kind in every cell of the band, cells in
/// parallel (on the calling rayon pool).
pub fn detect_band<T: Copy + Sync>(
    input: &BandInput<'_, T>,
    value: impl Fn(T) -> f64 + Sync,
    kinds: &[Kind<'_>],
    cell0: usize,
) -> Vec<Found> {
    let n_cells = input.n_cells;
    let n_stats = STATS.len() * input.days.n_years;
    let width = if input.codes.is_some() { CODE_CHUNK } else { CHUNK };
    // zeroed by the allocator (pages mapped as the workers first write them), every value
    // then written by the chunk of its cell
    let mut found: Vec<Found> =
        kinds.iter().map(|_| Found { events: Vec::new(), summary: vec![0f32; n_stats * n_cells] }).collect();
    let rows: Vec<Rows> =
        found.iter_mut().map(|f| Rows { ptr: f.summary.as_mut_ptr(), len: f.summary.len(), n_cells }).collect();
    let chunks: Vec<ChunkOut> = (0..n_cells.div_ceil(width))
        .into_par_iter()
        .map_init(Scratch::default, |scratch, k| {
            let cells = k * width..((k + 1) * width).min(n_cells);
            scan_chunk(input, &value, kinds, cells, cell0, &rows, scratch)
        })
        .collect();
    drop(rows);
    for chunk in chunks {
        for (f, events) in found.iter_mut().zip(chunk) {
            f.events.push(events);
        }
    }
    found
}

/// A worker's buffers, reused from chunk to chunk.
#[derive(Default)]
struct Scratch {
    /// The day's values of the chunk's cells (NaN where missing).
    values: Vec<f64>,
    /// The chunk's mean (`[doy][cell]`) and thresholds (`[kind][doy][cell]`).
    cmean: Vec<f64>,
    cthresh: Vec<f64>,
    valid: Vec<bool>,
    /// Per kind and cell: whether each day of the current block of 64 exceeds (bit j: day
    /// `d0 + j`).
    bits: Vec<u64>,
    /// Per kind and cell: the first day of the open run (`NONE`: none open).
    start: Vec<usize>,
    /// Per kind and cell: the runs found, of at least the minimum duration.
    runs: Vec<Vec<(usize, usize)>>,
    joined: Vec<(usize, usize)>,
    /// The series around one event: temperature (filled, signed), mean and threshold.
    t: Vec<f64>,
    seas: Vec<f64>,
    thresh: Vec<f64>,
    events: Vec<Event>,
    stats: Vec<f64>,
    /// The chunk's statistics of one kind, `[stat * n_years + year][cell of the chunk]`.
    chunk_stats: Vec<f32>,
    /// Comparing as stored ([`Codes`]): the day's stored values and which are missing, and
    /// per kind, day of year and cell the limit and whether a missing day exceeds.
    xs: Vec<i32>,
    miss: Vec<i32>,
    limits: Vec<i32>,
    missing_exceeds: Vec<i32>,
}

/// Scan the chunk `cells` of the band for every kind of event: its climatology is loaded, its
/// days are compared in blocks of 64 and the runs followed, then each kind's events are
/// measured and summarised ([`chunk_events`]). Its steps are inlined into it (forced where the
/// compiler would otherwise call them), so the scan compiles as the one function it was.
fn scan_chunk<T: Copy>(
    input: &BandInput<'_, T>,
    value: &impl Fn(T) -> f64,
    kinds: &[Kind<'_>],
    cells: std::ops::Range<usize>,
    cell0: usize,
    rows: &[Rows],
    s: &mut Scratch,
) -> ChunkOut {
    let (n_cells, days) = (input.n_cells, input.days);
    let (lo, w) = (cells.start, cells.len());
    let n_days = days.len();
    let n_doy = input.mean.len() / n_cells.max(1);
    load_chunk(input, kinds, (lo, w, n_doy), s);
    // scan the days in blocks of 64: a cell's exceedances in a block are the bits of one word
    // (the comparisons of a day are one plain loop over the chunk's cells), then each word's
    // runs are followed a run at a time
    let cold: Vec<bool> = kinds.iter().map(|k| k.params.cold).collect();
    if let Some((codes, _)) = input.codes {
        codes.chunk_limits(&cold, (&s.cmean, &s.cthresh), (n_doy, w), (&mut s.limits, &mut s.missing_exceeds));
    }
    for d0 in (0..n_days).step_by(64) {
        let len = (n_days - d0).min(64);
        s.bits.fill(0);
        if let Some((codes, stored)) = input.codes {
            coded_block_bits(input, (codes, stored), &cold, (lo, w, n_doy), (d0, len), s);
        } else {
            block_bits(input, value, kinds, (lo, w, n_doy), (d0, len), s);
        }
        for (k, kind) in kinds.iter().enumerate() {
            let min = kind.params.min_duration;
            for c in 0..w {
                let (word, start) = (s.bits[k * w + c], &mut s.start[k * w + c]);
                if word == 0 && *start == NONE {
                    continue;
                }
                follow_runs(word, d0, len, start, &mut s.runs[k * w + c], min);
            }
        }
    }
    let mut out: ChunkOut = Vec::with_capacity(kinds.len());
    for (k, kind) in kinds.iter().enumerate() {
        out.push(chunk_events(input, value, (k, kind), (cell0, lo, w), &rows[k], s));
    }
    out
}

/// Set the scratch up for the chunk of `w` cells from `lo` (`n_doy` days of the year): its
/// climatology copied together, which of its cells have one, and no run open or found yet.
#[inline(always)]
fn load_chunk<T>(input: &BandInput<'_, T>, kinds: &[Kind<'_>], (lo, w, n_doy): (usize, usize, usize), s: &mut Scratch) {
    let n_cells = input.n_cells;
    // the chunk's climatology, copied together (`[doy][cell of the chunk]`): the scan reads it
    // once a year, so it stays in the cache instead of coming from the band's arrays again
    s.cmean.clear();
    s.cthresh.clear();
    for d in 0..n_doy {
        s.cmean.extend_from_slice(&input.mean[d * n_cells + lo..d * n_cells + lo + w]);
    }
    for kind in kinds {
        for d in 0..n_doy {
            s.cthresh.extend_from_slice(&kind.thresh[d * n_cells + lo..d * n_cells + lo + w]);
        }
    }
    // a cell without any mean (land) has no events and no statistics
    s.valid.clear();
    s.valid.resize(w, false);
    for row in s.cmean.chunks_exact(w) {
        for (v, m) in s.valid.iter_mut().zip(row) {
            *v |= !m.is_nan();
        }
    }
    s.start.clear();
    s.start.resize(kinds.len() * w, NONE);
    s.runs.resize_with(kinds.len() * w, Vec::new);
    for r in s.runs.iter_mut() {
        r.clear();
    }
    s.values.resize(w, f64::NAN);
    s.bits.resize(kinds.len() * w, 0);
}

/// The exceedance bits of the block of `len` days from `d0`, comparing the pool's values as
/// stored against the chunk's limits ([`Codes::day_bits`]).
#[inline(always)]
fn coded_block_bits<T>(
    input: &BandInput<'_, T>,
    (codes, stored): (&Codes, &[i16]),
    cold: &[bool],
    (lo, w, n_doy): (usize, usize, usize),
    (d0, len): (usize, usize),
    s: &mut Scratch,
) {
    let n_cells = input.n_cells;
    for j in 0..len {
        let i = d0 + j;
        if let Some(Some(ahead)) = input.slot_of_day.get(i + PREFETCH) {
            prefetch(&stored[ahead * n_cells + lo..ahead * n_cells + lo + w]);
        }
        let row = input.slot_of_day[i].map(|slot| &stored[slot * n_cells + lo..slot * n_cells + lo + w]);
        let at = (usize::from(input.days.doy_index[i]), n_doy, w);
        codes.day_bits(row, cold, (&s.limits, &s.missing_exceeds), at, j, &mut s.bits, (&mut s.xs, &mut s.miss));
    }
}

/// The exceedance bits of the block of `len` days from `d0`, comparing the decoded values
/// (the mean on missing days, the sign flipped for cold spells) with each kind's threshold.
#[inline]
fn block_bits<T: Copy>(
    input: &BandInput<'_, T>,
    value: &impl Fn(T) -> f64,
    kinds: &[Kind<'_>],
    (lo, w, n_doy): (usize, usize, usize),
    (d0, len): (usize, usize),
    s: &mut Scratch,
) {
    let n_cells = input.n_cells;
    for j in 0..len {
        let i = d0 + j;
        let d = usize::from(input.days.doy_index[i]);
        if let Some(Some(ahead)) = input.slot_of_day.get(i + PREFETCH) {
            prefetch(&input.data[ahead * n_cells + lo..ahead * n_cells + lo + w]);
        }
        match input.slot_of_day[i] {
            Some(slot) => {
                let row = &input.data[slot * n_cells + lo..slot * n_cells + lo + w];
                for (v, &x) in s.values.iter_mut().zip(row) {
                    *v = value(x);
                }
            }
            None => s.values.fill(f64::NAN),
        }
        let mean = &s.cmean[d * w..(d + 1) * w];
        for (k, kind) in kinds.iter().enumerate() {
            let sign = if kind.params.cold { -1.0 } else { 1.0 };
            let thresh = &s.cthresh[(k * n_doy + d) * w..(k * n_doy + d + 1) * w];
            let bits = &mut s.bits[k * w..(k + 1) * w];
            for c in 0..w {
                let m = sign * mean[c];
                let v = s.values[c];
                let t = if v.is_nan() { m } else { sign * v };
                bits[c] |= u64::from(t > sign * thresh[c]) << j;
            }
        }
    }
}

/// Kind `k`'s events in the chunk of `w` cells from `lo`, once its runs are followed to the end
/// of the series: runs closed and joined across short gaps, each event measured on the series
/// around it, and the chunk's statistics put into the band's `row` (cells as global indices,
/// `cell0` plus the band's).
#[inline]
fn chunk_events<T: Copy>(
    input: &BandInput<'_, T>,
    value: &impl Fn(T) -> f64,
    (k, kind): (usize, &Kind<'_>),
    (cell0, lo, w): (usize, usize, usize),
    row: &Rows,
    s: &mut Scratch,
) -> EventColumns {
    let (n_cells, days) = (input.n_cells, input.days);
    let n_days = days.len();
    let n_stats = STATS.len() * days.n_years;
    let mut columns = EventColumns::default();
    // NaN for cells without a climatology
    s.chunk_stats.clear();
    s.chunk_stats.resize(n_stats * w, f32::NAN);
    s.stats.resize(n_stats, 0.0);
    for c in 0..w {
        if !s.valid[c] {
            continue;
        }
        // a run still open at the end of the series
        let st = s.start[k * w + c];
        if st != NONE && n_days - st >= kind.params.min_duration {
            s.runs[k * w + c].push((st, n_days - 1));
        }
        // join across short gaps, as `detect_cell`
        let runs = &s.runs[k * w + c];
        s.joined.clear();
        match kind.params.max_gap {
            Some(max_gap) => {
                for &(a, b) in runs.iter() {
                    match s.joined.last_mut() {
                        Some(last) if a - last.1 - 1 <= max_gap => last.1 = b,
                        _ => s.joined.push((a, b)),
                    }
                }
            }
            None => s.joined.extend_from_slice(runs),
        }
        s.events.clear();
        for j in 0..s.joined.len() {
            let (a, b) = s.joined[j];
            let from = a.saturating_sub(1);
            let to = (b + 1).min(n_days - 1);
            // ask for the next event's days while this one is measured: each of its days is
            // a row of the pool away from the last, a cache miss each
            if let Some(&(na, nb)) = s.joined.get(j + 1) {
                prefetch_days(input, (lo + c, n_cells), na.saturating_sub(1)..=(nb + 1).min(n_days - 1));
            }
            fill_series(input, value, kind, k, (lo, c, w), from..=to, s);
            s.events.push(measure_at(&s.t, &s.seas, &s.thresh, from, n_days, a, b, kind.params.cold));
        }
        block_average(&s.events, days, &mut s.stats);
        for (i, v) in s.stats.iter().enumerate() {
            s.chunk_stats[i * w + c] = *v as f32;
        }
        for e in &s.events {
            columns.push(cell0 + lo + c, e);
        }
    }
    for (i, vals) in s.chunk_stats.chunks_exact(w).enumerate() {
        // SAFETY: cells `lo..lo + w` are this chunk's alone
        unsafe { row.put(i, lo, vals) };
    }
    columns
}

/// Follow the runs of exceeding days through one block's word (bit j: day `d0 + j` exceeds; `len`
/// days): `start` is the open run's first day (`NONE`: none), carried from block to block; a
/// run that ends (at a day that does not exceed) goes to `runs` if it lasted at least `min`
/// days, as `detect_cell` keeps them.
fn follow_runs(word: u64, d0: usize, len: usize, start: &mut usize, runs: &mut Vec<(usize, usize)>, min: usize) {
    let mut j = 0;
    while j < len {
        if *start == NONE {
            // the next exceeding day
            let rest = word >> j;
            if rest == 0 {
                return;
            }
            j += rest.trailing_zeros() as usize;
            if j >= len {
                return;
            }
            *start = d0 + j;
        } else {
            // the next day that does not exceed (the bits past `len` are clear: the run goes on
            // into the next block)
            let rest = !word >> j;
            j += if rest == 0 { 64 } else { rest.trailing_zeros() as usize };
            if j >= len {
                return;
            }
            let i = d0 + j;
            if i - *start >= min {
                runs.push((*start, i - 1));
            }
            *start = NONE;
        }
    }
}

/// The signed, filled series of cell `lo + c` of the band (cell `c` of a chunk of `w` cells)
/// over the days `range` for kind `k`, with its mean and threshold, into the scratch's `t`,
/// `seas` and `thresh` (as `detect_cell` builds them).
#[allow(clippy::too_many_arguments)]
fn fill_series<T: Copy>(
    input: &BandInput<'_, T>,
    value: &impl Fn(T) -> f64,
    kind: &Kind<'_>,
    k: usize,
    (lo, c, w): (usize, usize, usize),
    range: std::ops::RangeInclusive<usize>,
    s: &mut Scratch,
) {
    let n_cells = input.n_cells;
    let n_doy = s.cmean.len() / w;
    let sign = if kind.params.cold { -1.0 } else { 1.0 };
    s.t.clear();
    s.seas.clear();
    s.thresh.clear();
    for i in range {
        let d = usize::from(input.days.doy_index[i]);
        // the chunk's copies of the band's mean and threshold (the same values)
        let m = sign * s.cmean[d * w + c];
        let v = match input.slot_of_day[i] {
            Some(slot) => value(input.data[slot * n_cells + lo + c]),
            None => f64::NAN,
        };
        s.seas.push(m);
        s.thresh.push(sign * s.cthresh[(k * n_doy + d) * w + c]);
        s.t.push(if v.is_nan() { m } else { sign * v });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{detect_cell, CellClim, Scratch as CellScratch};

    /// A small deterministic generator (xorshift), so the test needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A random band's inputs (see the test below): which slot holds each day (a missing file
    /// every so often), the mean and both thresholds (`[doy][cell]`, land cells NaN, arctic
    /// cells with the threshold on the wrong side of the mean), each cell's series
    /// (`[cell][day]`, spells and missing values) and the pool (`[slot][cell]`).
    struct RandomBand {
        slot_of_day: Vec<Option<usize>>,
        mean: Vec<f64>,
        p90: Vec<f64>,
        p10: Vec<f64>,
        series: Vec<f64>,
        data: Vec<f64>,
    }

    fn random_band(days: &Days, n_cells: usize) -> RandomBand {
        let (n_days, n_doy) = (days.len(), 366);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // a missing file every so often
        let mut next = 0;
        let slot_of_day: Vec<Option<usize>> = (0..n_days)
            .map(|i| {
                (i % 97 != 13).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let mut mean = vec![f64::NAN; n_doy * n_cells];
        let (mut p90, mut p10) = (mean.clone(), mean.clone());
        for c in 0..n_cells {
            if c % 11 == 3 {
                continue; // land
            }
            let arctic = c % 13 == 5;
            for d in 0..n_doy {
                let m = 15.0 + 5.0 * (d as f64 / 58.0).sin() + c as f64 * 0.01;
                mean[d * n_cells + c] = m;
                p90[d * n_cells + c] = if arctic { m - 0.1 } else { m + 1.0 + 0.3 * rng.next() };
                p10[d * n_cells + c] = if arctic { m + 0.1 } else { m - 1.0 - 0.3 * rng.next() };
            }
        }
        // series: noise with spells of warm and cold days; missing values here and there
        let mut series = vec![f64::NAN; n_cells * n_days];
        for c in 0..n_cells {
            let mut spell = 0.0;
            for i in 0..n_days {
                if rng.next() < 0.02 {
                    spell = (rng.next() - 0.5) * 6.0;
                } else if rng.next() < 0.1 {
                    spell = 0.0;
                }
                let d = usize::from(days.doy_index[i]);
                let m = mean[d * n_cells + c];
                let base = if m.is_nan() { 15.0 } else { m };
                series[c * n_days + i] =
                    if rng.next() < 0.03 { f64::NAN } else { base + spell + (rng.next() - 0.5) * 1.2 };
            }
        }
        let n_slots = next;
        let mut data = vec![f64::NAN; n_slots * n_cells];
        for (i, slot) in slot_of_day.iter().enumerate() {
            if let Some(s) = slot {
                for c in 0..n_cells {
                    data[s * n_cells + c] = series[c * n_days + i];
                }
            }
        }
        RandomBand { slot_of_day, mean, p90, p10, series, data }
    }

    /// Every cell of a random band (warm spells, missing days and files, land cells, cells whose
    /// threshold sits below the mean, chunks cut mid-way) gives, for heat and cold at once,
    /// exactly the events and statistics of `detect_cell` and `block_average` on its gathered
    /// series.
    #[test]
    fn a_band_scanned_day_by_day_equals_detect_cell_on_each_series() {
        let days = Days::of_years(2001..=2004, crate::calendar::Calendar::Hobday366);
        let (n_days, n_doy) = (days.len(), 366);
        let n_cells = CHUNK * 2 + 37;
        let RandomBand { slot_of_day, mean, p90, p10, series, data } = random_band(&days, n_cells);
        for (min_duration, max_gap) in [(5, Some(2)), (3, None), (1, Some(0))] {
            let heat = Params { min_duration, max_gap, cold: false };
            let cold = Params { cold: true, ..heat };
            let kinds = [Kind { params: heat, thresh: &p90 }, Kind { params: cold, thresh: &p10 }];
            let input =
                BandInput { data: &data, n_cells, slot_of_day: &slot_of_day, days: &days, mean: &mean, codes: None };
            let cell0 = 1000;
            let found = detect_band(&input, |v| v, &kinds, cell0);
            let ny = days.n_years;
            for (kind, f) in kinds.iter().zip(&found) {
                let mut want = EventColumns::default();
                let mut want_summary = vec![f32::NAN; STATS.len() * ny * n_cells];
                let mut scratch = CellScratch::default();
                for c in 0..n_cells {
                    // the series as the missing files leave it
                    let temp: Vec<f64> = (0..n_days)
                        .map(|i| if slot_of_day[i].is_some() { series[c * n_days + i] } else { f64::NAN })
                        .collect();
                    let m: Vec<f64> = (0..n_doy).map(|d| mean[d * n_cells + c]).collect();
                    let t: Vec<f64> = (0..n_doy).map(|d| kind.thresh[d * n_cells + c]).collect();
                    let cc = CellClim { mean: &m, thresh: &t };
                    if !cc.has_values() {
                        continue;
                    }
                    let mut events = Vec::new();
                    detect_cell(&temp, &days, cc, &kind.params, &mut scratch, &mut events);
                    let mut stats = vec![0.0; STATS.len() * ny];
                    block_average(&events, &days, &mut stats);
                    for (i, v) in stats.iter().enumerate() {
                        want_summary[i * n_cells + c] = *v as f32;
                    }
                    for e in &events {
                        want.push(cell0 + c, e);
                    }
                }
                let got = EventColumns {
                    cell: crate::events::columns::joined(&f.events, |c| &c.cell),
                    ints: std::array::from_fn(|k| crate::events::columns::joined(&f.events, |c| &c.ints[k])),
                    floats: std::array::from_fn(|k| crate::events::columns::joined(&f.events, |c| &c.floats[k])),
                    category: crate::events::columns::joined(&f.events, |c| &c.category),
                };
                assert!(want.len() > 100, "the test plants events ({})", want.len());
                assert_eq!(got.cell, want.cell, "{:?}", kind.params);
                assert_eq!(got.ints, want.ints, "{:?}", kind.params);
                assert_eq!(got.category, want.category, "{:?}", kind.params);
                for (a, b) in got.floats.iter().zip(&want.floats) {
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(a), bits(b), "{:?}", kind.params);
                }
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&f.summary), bits(&want_summary), "{:?}", kind.params);
            }
        }
    }

    #[test]
    fn runs_are_followed_across_words() {
        // exceeding days 3-9, 60-70 (across the first word), 126-127 (to the end)
        let n = 128;
        let exceeds = |i: usize| (3..=9).contains(&i) || (60..=70).contains(&i) || i >= 126;
        let mut start = NONE;
        let mut runs = Vec::new();
        for d0 in (0..n).step_by(64) {
            let word = (0..64).filter(|&j| exceeds(d0 + j)).fold(0u64, |w, j| w | 1 << j);
            follow_runs(word, d0, 64, &mut start, &mut runs, 5);
        }
        assert_eq!(runs, [(3, 9), (60, 70)]);
        assert_eq!(start, 126, "the run still open at the end is closed by the caller");
    }
}
