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

/// Cells a worker scans at a time: a day row of each of its inputs is a few cache lines, and
/// the chunk's open runs stay in the first-level cache.
const CHUNK: usize = 256;

/// No open run.
const NONE: usize = usize::MAX;

/// One chunk's results, per kind: events and statistics `[stat * n_years + year][cell of
/// the chunk]`.
type ChunkOut = Vec<(EventColumns, Vec<f64>)>;

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
    let chunks: Vec<ChunkOut> = (0..n_cells.div_ceil(CHUNK))
        .into_par_iter()
        .map_init(Scratch::default, |scratch, k| {
            let cells = k * CHUNK..((k + 1) * CHUNK).min(n_cells);
            scan_chunk(input, &value, kinds, cells, cell0, scratch)
        })
        .collect();
    // the summaries: each row (statistic, year) is the chunks' rows side by side
    let mut found: Vec<Found> = kinds
        .iter()
        .map(|_| Found { events: Vec::with_capacity(chunks.len()), summary: vec![f32::NAN; n_stats * n_cells] })
        .collect();
    for (kind, f) in found.iter_mut().enumerate() {
        f.summary.par_chunks_mut(n_cells).enumerate().for_each(|(i, row)| {
            for (k, chunk) in chunks.iter().enumerate() {
                let stats = &chunk[kind].1;
                let lo = k * CHUNK;
                let w = stats.len() / n_stats;
                for (dst, src) in row[lo..lo + w].iter_mut().zip(&stats[i * w..(i + 1) * w]) {
                    *dst = *src as f32;
                }
            }
        });
    }
    for chunk in chunks {
        for (f, (events, _)) in found.iter_mut().zip(chunk) {
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
    valid: Vec<bool>,
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
}

fn scan_chunk<T: Copy>(
    input: &BandInput<'_, T>,
    value: &impl Fn(T) -> f64,
    kinds: &[Kind<'_>],
    cells: std::ops::Range<usize>,
    cell0: usize,
    s: &mut Scratch,
) -> ChunkOut {
    let (n_cells, days) = (input.n_cells, input.days);
    let (lo, w) = (cells.start, cells.len());
    let n_days = days.len();
    let n_doy = input.mean.len() / n_cells.max(1);
    let n_stats = STATS.len() * days.n_years;
    // a cell without any mean (land) has no events and no statistics
    s.valid.clear();
    s.valid.resize(w, false);
    for d in 0..n_doy {
        for (v, m) in s.valid.iter_mut().zip(&input.mean[d * n_cells + lo..d * n_cells + lo + w]) {
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
    // scan the days: runs of exceeding days of at least the minimum duration
    for i in 0..n_days {
        let d = usize::from(days.doy_index[i]);
        let base = d * n_cells + lo;
        match input.slot_of_day[i] {
            Some(slot) => {
                let row = &input.data[slot * n_cells + lo..slot * n_cells + lo + w];
                for (v, &x) in s.values.iter_mut().zip(row) {
                    *v = value(x);
                }
            }
            None => s.values.fill(f64::NAN),
        }
        let mean = &input.mean[base..base + w];
        for (k, kind) in kinds.iter().enumerate() {
            let sign = if kind.params.cold { -1.0 } else { 1.0 };
            let min = kind.params.min_duration;
            let thresh = &kind.thresh[base..base + w];
            let start = &mut s.start[k * w..(k + 1) * w];
            let runs = &mut s.runs[k * w..(k + 1) * w];
            for c in 0..w {
                let m = sign * mean[c];
                let v = s.values[c];
                let t = if v.is_nan() { m } else { sign * v };
                if t > sign * thresh[c] {
                    if start[c] == NONE {
                        start[c] = i;
                    }
                } else if start[c] != NONE {
                    if i - start[c] >= min {
                        runs[c].push((start[c], i - 1));
                    }
                    start[c] = NONE;
                }
            }
        }
    }
    let mut out: ChunkOut = Vec::with_capacity(kinds.len());
    for (k, kind) in kinds.iter().enumerate() {
        let mut columns = EventColumns::default();
        let mut stats = vec![f64::NAN; n_stats * w];
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
                fill_series(input, value, kind, lo + c, from..=to, s);
                s.events.push(measure_at(&s.t, &s.seas, &s.thresh, from, n_days, a, b, kind.params.cold));
            }
            block_average(&s.events, days, &mut s.stats);
            for (i, v) in s.stats.iter().enumerate() {
                stats[i * w + c] = *v;
            }
            for e in &s.events {
                columns.push(cell0 + lo + c, e);
            }
        }
        out.push((columns, stats));
    }
    out
}

/// The signed, filled series of cell `cell` (of the band) over the days `range`, with its mean
/// and threshold, into the scratch's `t`, `seas` and `thresh` (as `detect_cell` builds them).
fn fill_series<T: Copy>(
    input: &BandInput<'_, T>,
    value: &impl Fn(T) -> f64,
    kind: &Kind<'_>,
    cell: usize,
    range: std::ops::RangeInclusive<usize>,
    s: &mut Scratch,
) {
    let n_cells = input.n_cells;
    let sign = if kind.params.cold { -1.0 } else { 1.0 };
    s.t.clear();
    s.seas.clear();
    s.thresh.clear();
    for i in range {
        let d = usize::from(input.days.doy_index[i]);
        let m = sign * input.mean[d * n_cells + cell];
        let v = match input.slot_of_day[i] {
            Some(slot) => value(input.data[slot * n_cells + cell]),
            None => f64::NAN,
        };
        s.seas.push(m);
        s.thresh.push(sign * kind.thresh[d * n_cells + cell]);
        s.t.push(if v.is_nan() { m } else { sign * v });
    }
}
