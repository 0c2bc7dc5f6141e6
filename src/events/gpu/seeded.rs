//! Seeded bands for the tests that hold GPU detection to the CPU scan ([`super::super::scan`]):
//! every case the kernel must get right is planted in a small band, and
//! [`assert_same_found`] compares two detections bit for bit.
//!
//! Cells, by `cell % 9`: ordinary noise with spells (the mean missing on one day of the year
//! in odd cells); land (no mean); a threshold on the wrong side of the mean (category-0 rules);
//! the same with every value missing (one event over the whole series: its first and last days,
//! longer than numpy's 128-value blocks; in odd cells the last day warmer, its peak); the threshold equal to the mean; spells of 150 to 400
//! days; a warm spike on the series' first days and a cold one on its last (and the mirror
//! image); runs split by one- and two-day gaps (joined) with many missing values. Every 97th
//! day's file is missing.

use super::super::codes::Codes;
use super::super::columns::{joined, EventColumns};
use super::super::scan::{detect_band, BandInput, Found, Kind};
use super::super::{Days, EventsError, Params};
use super::choose::{detect_in_parts, Detector};
use crate::calendar::{Calendar, CfCalendar};
use crate::util::rng::SplitMix64;

/// Days of the climatological year the climatology has (`[doy][cell]` rows).
pub const N_DOY: usize = 366;

/// How a seeded band stores its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolType {
    F32,
    F64,
    I16,
}

/// A seeded band: its days, pool and climatology (`[doy][cell]`).
pub struct SeededBand {
    pub days: Days,
    pub n_cells: usize,
    pub slot_of_day: Vec<Option<usize>>,
    pub mean: Vec<f64>,
    pub p90: Vec<f64>,
    pub p10: Vec<f64>,
    pub f32s: Vec<f32>,
    pub f64s: Vec<f64>,
    pub i16s: Vec<i16>,
    /// int16 decoding: `value = table[v + 32768]` (NaN for the missing value, -32768).
    pub table: Vec<f64>,
    pub ty: PoolType,
}

/// int16 values are hundredths of a degree from 15 degrees.
fn encode(x: f64) -> i16 {
    if x.is_nan() {
        i16::MIN
    } else {
        ((x - 15.0) / 0.01).round().clamp(-32767.0, 32767.0) as i16
    }
}

impl SeededBand {
    /// A band of `n_cells` cells over `years` of calendar `cf`, values stored as `ty`.
    pub fn new(years: std::ops::RangeInclusive<i32>, cf: CfCalendar, n_cells: usize, ty: PoolType, seed: u64) -> Self {
        let days = Days::of_years_in(years, Calendar::Hobday366, cf);
        let n_days = days.len();
        let mut rng = SplitMix64::new(seed);
        let mut next = 0;
        let slot_of_day: Vec<Option<usize>> = (0..n_days)
            .map(|i| {
                (i % 97 != 13).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let (mean, p90, p10) = climatology(n_cells, &mut rng);
        let mut series = vec![f64::NAN; n_cells * n_days];
        for c in 0..n_cells {
            let cell = &mut series[c * n_days..(c + 1) * n_days];
            fill_cell(cell, c, &days, |d| mean[d * n_cells + c], &mut rng);
        }
        let table: Vec<f64> =
            (0..65536).map(|i: i32| if i == 0 { f64::NAN } else { 15.0 + f64::from(i - 32768) * 0.01 }).collect();
        let n_slots = next;
        let mut f64s = vec![f64::NAN; n_slots * n_cells];
        for (i, slot) in slot_of_day.iter().enumerate() {
            if let Some(s) = slot {
                for c in 0..n_cells {
                    f64s[s * n_cells + c] = series[c * n_days + i];
                }
            }
        }
        let f32s: Vec<f32> = f64s.iter().map(|&x| x as f32).collect();
        let i16s: Vec<i16> = f64s.iter().map(|&x| encode(x)).collect();
        SeededBand { days, n_cells, slot_of_day, mean, p90, p10, f32s, f64s, i16s, table, ty }
    }

    /// Heatwaves and cold spells under the same rules.
    pub fn kinds(&self, min_duration: usize, max_gap: Option<usize>) -> Vec<Kind<'_>> {
        let heat = Params { min_duration, max_gap, cold: false };
        vec![Kind { params: heat, thresh: &self.p90 }, Kind { params: Params { cold: true, ..heat }, thresh: &self.p10 }]
    }

    /// What the CPU scan finds (int16 pools compared as stored where the table orders them, as
    /// the events job does).
    pub fn cpu(&self, kinds: &[Kind<'_>], cell0: usize) -> Vec<Found> {
        match self.ty {
            PoolType::F32 => detect_band(&input(self, &self.f32s), f64::from, kinds, cell0),
            PoolType::F64 => detect_band(&input(self, &self.f64s), |v: f64| v, kinds, cell0),
            PoolType::I16 => {
                let codes = Codes::of(&self.table);
                let band = BandInput { codes: codes.as_ref().map(|c| (c, &self.i16s[..])), ..input(self, &self.i16s) };
                detect_band(&band, |v: i16| self.table[(i32::from(v) + 32768) as usize], kinds, cell0)
            }
        }
    }

    /// What `detector` finds (sub-bands of at most `max_cells` cells on a device).
    pub fn detect_with(
        &self,
        detector: &Detector,
        kinds: &[Kind<'_>],
        cell0: usize,
        max_cells: usize,
    ) -> Result<Vec<Found>, EventsError> {
        match self.ty {
            PoolType::F32 => detect_in_parts(detector, &input(self, &self.f32s), f64::from, None, kinds, cell0, max_cells),
            PoolType::F64 => detect_in_parts(detector, &input(self, &self.f64s), |v: f64| v, None, kinds, cell0, max_cells),
            PoolType::I16 => {
                let value = |v: i16| self.table[(i32::from(v) + 32768) as usize];
                detect_in_parts(detector, &input(self, &self.i16s), value, Some(&self.table), kinds, cell0, max_cells)
            }
        }
    }
}

/// The band's inputs with `data` as its pool (values compared decoded).
fn input<'a, T>(b: &'a SeededBand, data: &'a [T]) -> BandInput<'a, T> {
    BandInput { data, n_cells: b.n_cells, slot_of_day: &b.slot_of_day, days: &b.days, mean: &b.mean, codes: None }
}

/// The mean and both thresholds (`[doy][cell]`) of the cells' classes (see the module).
fn climatology(n_cells: usize, rng: &mut SplitMix64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut mean = vec![f64::NAN; N_DOY * n_cells];
    let (mut p90, mut p10) = (mean.clone(), mean.clone());
    for c in 0..n_cells {
        let class = c % 9;
        if class == 1 {
            continue; // land
        }
        for d in 0..N_DOY {
            let at = d * n_cells + c;
            let m = 15.0 + 5.0 * (d as f64 / 58.0).sin() + c as f64 * 0.01;
            if class == 0 && c % 2 == 1 && d == 59 {
                continue; // no mean on one day of the year
            }
            mean[at] = m;
            (p90[at], p10[at]) = match class {
                2 | 3 => (m - 0.1, m + 0.1),
                4 => (m, m),
                _ => (m + 1.0 + 0.3 * rng.next_f64(), m - 1.0 - 0.3 * rng.next_f64()),
            };
        }
    }
    (mean, p90, p10)
}

/// Cell `c`'s series (NaN where missing) by its class (see the module); `mean(doy)`.
fn fill_cell(cell: &mut [f64], c: usize, days: &Days, mean: impl Fn(usize) -> f64, rng: &mut SplitMix64) {
    let n = cell.len();
    let class = c % 9;
    if class == 3 {
        // every value missing; in odd cells but the last, warmer than the mean (an event over
        // the whole series peaking on its last day)
        if c % 2 == 1 {
            cell[n - 1] = mean(usize::from(days.doy_index[n - 1])) + 1.0;
        }
        return;
    }
    let mut spell = 0.0;
    let mut left = 0usize;
    for (i, v) in cell.iter_mut().enumerate() {
        let m = mean(usize::from(days.doy_index[i]));
        let base = if m.is_nan() { 15.0 } else { m };
        spell = match class {
            5 if left == 0 && rng.next_f64() < 0.01 => {
                left = 150 + rng.below(250) as usize;
                if rng.next_f64() < 0.5 {
                    2.5
                } else {
                    -2.5
                }
            }
            5 if left == 0 => 0.0,
            5 => spell,
            6 | 7 => {
                let warm_first = class == 6;
                let at_start = i < 7;
                let at_end = i + 6 >= n;
                match (at_start, at_end) {
                    (true, _) => 3.0 * if warm_first { 1.0 } else { -1.0 },
                    (_, true) => 3.0 * if warm_first { -1.0 } else { 1.0 },
                    _ => 0.0,
                }
            }
            8 => {
                // 6 days on, 1 or 2 off
                if i % 8 < 6 || (i / 8) % 2 == 0 && i % 8 == 6 {
                    2.5
                } else {
                    0.0
                }
            }
            _ if rng.next_f64() < 0.02 => (rng.next_f64() - 0.5) * 6.0,
            _ if rng.next_f64() < 0.1 => 0.0,
            _ => spell,
        };
        left = left.saturating_sub(1);
        let missing = match class {
            8 => 0.3,
            6 | 7 => 0.0,
            _ => 0.03,
        };
        *v = if rng.next_f64() < missing { f64::NAN } else { base + spell + (rng.next_f64() - 0.5) * 1.2 };
    }
}

/// One kind's events as one set of columns (its chunks joined).
pub fn columns(f: &Found) -> EventColumns {
    EventColumns {
        cell: joined(&f.events, |c| &c.cell),
        ints: std::array::from_fn(|k| joined(&f.events, |c| &c.ints[k])),
        floats: std::array::from_fn(|k| joined(&f.events, |c| &c.floats[k])),
        category: joined(&f.events, |c| &c.category),
    }
}

/// Bits of a float64, every NaN the same (NaN payloads differ between devices; the outputs
/// take NaN as a fill value).
fn bits64(x: f64) -> u64 {
    if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

fn bits32(x: f32) -> u32 {
    if x.is_nan() {
        f32::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

/// `got` and `want` hold the same events and summaries, bit for bit (NaN as one value); `what`
/// names the case. Returns the number of events.
pub fn assert_same_found(got: &[Found], want: &[Found], what: &str) -> usize {
    assert_eq!(got.len(), want.len(), "{what}: kinds");
    let mut n = 0;
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w, sg, sw) = (columns(g), columns(w), &g.summary, &w.summary);
        assert_eq!(g.cell, w.cell, "{what}, kind {k}: event cells");
        for (j, (a, b)) in g.ints.iter().zip(&w.ints).enumerate() {
            assert_eq!(a, b, "{what}, kind {k}: integer field {j}");
        }
        assert_eq!(g.category, w.category, "{what}, kind {k}: categories");
        for (j, (a, b)) in g.floats.iter().zip(&w.floats).enumerate() {
            let (a, b): (Vec<u64>, Vec<u64>) = (a.iter().map(|&x| bits64(x)).collect(), b.iter().map(|&x| bits64(x)).collect());
            if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
                panic!("{what}, kind {k}: float field {j}, event {i} (cell {}): {:e} against {:e}", g.cell[i], f64::from_bits(a[i]), f64::from_bits(b[i]));
            }
        }
        assert_eq!(sg.len(), sw.len(), "{what}, kind {k}: summary size");
        if let Some(i) = (0..sg.len()).find(|&i| bits32(sg[i]) != bits32(sw[i])) {
            panic!("{what}, kind {k}: summary value {i}: {:e} against {:e}", sg[i], sw[i]);
        }
        n += g.cell.len();
    }
    n
}
