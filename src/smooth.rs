//! The climatology along its day-of-year axis, after every target day is computed: Feb 29
//! filled from its neighbours (`--feb29 interpolate`) and the periodic running mean
//! (`--smooth W`), as marineHeatWaves makes its climatology. Both need days the job was not
//! asked to write (day 59 and 61 for day 60, `(W-1)/2` days on each side for smoothing): the
//! job computes those *halo* days too ([`DayRules::computed_doys`]) and writes only the days
//! asked for, each as soon as the days it is made from are computed ([`DayAxis`]).
//!
//! The arithmetic is fixed here once, so that every rank count, segment count and tile split
//! gives the same bits (each cell's day series is processed on its own, in this order):
//!
//! * Feb 29: `0.5 * v[59] + 0.5 * v[61]`, as marineHeatWaves writes it (each product is exact,
//!   so this is the correctly rounded mean of the two).
//! * smoothing of day `d` over a year of `N` days: `c = 1.0 / W` rounded once, then
//!   `s = 0.0; for k in -(W-1)/2 ..= (W-1)/2 { s += v[(d + k) mod N] * c }`, each product
//!   rounded before it is added (no fused multiply-add). This is marineHeatWaves' `runavg`
//!   (`np.convolve` of the three-fold periodic series with `np.ones(W)/W`) summed in window
//!   order; numpy hands that dot product to BLAS, whose order (and use of FMA) depends on the
//!   build, so numpy's own result may differ from this one in the last bits: see the README.
//! * a missing value (NaN) spreads over every day whose window holds it, as in `runavg`.

use std::collections::BTreeSet;
use std::ops::Range;

use rayon::prelude::*;

use crate::util::disjoint::DisjointSlice;

use crate::calendar::{is_real, Calendar, CfCalendar, Date};
use crate::stats::TileResult;
use crate::window::{WindowEdges, WindowSpec};

/// How day 60 (Feb 29 under `hobday366`) is made (`--feb29`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Feb29 {
    /// From its own window, like every other day (only leap years have a Feb 29).
    #[default]
    Window,
    /// `0.5 * day 59 + 0.5 * day 61`, for the mean and every percentile (marineHeatWaves).
    Interpolate,
}

impl Feb29 {
    /// The name used on the command line and in output metadata.
    pub fn name(self) -> &'static str {
        match self {
            Feb29::Window => "window",
            Feb29::Interpolate => "interpolate",
        }
    }
}

/// The climatology's rules beyond each day's window: the window's ends, Feb 29 and smoothing
/// (the default: clipped windows, Feb 29 from its window, no smoothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DayRules {
    pub edges: WindowEdges,
    pub feb29: Feb29,
    /// Width of the periodic running mean (odd; 1 = no smoothing).
    pub smooth: u16,
    /// The input's CF calendar (found with the inputs; proleptic Gregorian until then and for
    /// inputs without a time axis): the days windows run over, the year's length.
    #[serde(skip)]
    pub cf: CfCalendar,
}

impl Default for DayRules {
    fn default() -> Self {
        DayRules { edges: WindowEdges::Clip, feb29: Feb29::Window, smooth: 1, cf: CfCalendar::ProlepticGregorian }
    }
}

/// The day of Feb 29 under `hobday366`.
const FEB29: u16 = 60;

/// Length of the day-of-year axis: 366 under `hobday366`; under `ordinal`, 366 where some
/// climatology year is a leap year (day 366 exists only in those), else 365.
pub fn year_length(calendar: Calendar, years: &std::ops::RangeInclusive<i32>) -> u16 {
    year_length_in(calendar, CfCalendar::ProlepticGregorian, years)
}

/// [`year_length`] in the input's calendar `cf`: the real calendars as there (leap years as
/// `cf` has them); `noleap` 365, `all_leap` 366 and `360_day` 360 under either convention.
pub fn year_length_in(calendar: Calendar, cf: CfCalendar, years: &std::ops::RangeInclusive<i32>) -> u16 {
    match calendar {
        _ if !is_real(cf) => cf.days_in_year(*years.start()),
        Calendar::Hobday366 => 366,
        Calendar::Ordinal if years.clone().any(|y| cf.is_leap(y)) => 366,
        Calendar::Ordinal => 365,
    }
}

impl DayRules {
    /// Whether results need the whole tile's days before any is written.
    pub fn holds(&self, calendar: Calendar) -> bool {
        self.smooth > 1 || self.interpolates(calendar)
    }

    /// Day 60 is filled from days 59 and 61 where it is Feb 29 of a 366-day year: under
    /// `hobday366` in the real calendars, and in `all_leap` (every year has one); `noleap` and
    /// `360_day` have no such day.
    fn interpolates(&self, calendar: Calendar) -> bool {
        self.feb29 == Feb29::Interpolate
            && match self.cf {
                CfCalendar::AllLeap => true,
                cf if is_real(cf) => calendar == Calendar::Hobday366,
                _ => false,
            }
    }

    /// Every date the job reads: the windows of [`DayRules::computed_spec`] of `spec`, with
    /// the period's ends as [`DayRules::edges`] says, in the input's calendar.
    pub fn required_dates(&self, spec: &WindowSpec) -> Vec<Date> {
        self.computed_spec(spec).required_dates_in(self.edges, self.cf)
    }

    /// The days to compute for the days `spec` asks for: those, the smoothing's halo around
    /// them (periodic over the year), and days 59 and 61 where day 60 is interpolated; sorted.
    pub fn computed_doys(&self, spec: &WindowSpec) -> Vec<u16> {
        let n = i32::from(year_length_in(spec.calendar, self.cf, &spec.years));
        let s = i32::from(self.smooth.max(1) / 2);
        let mut days: BTreeSet<u16> = BTreeSet::new();
        for &d in &spec.doys {
            // the day itself as asked (day 366 of an ordinal job without leap years stays an
            // error of its own), and its halo around the year
            days.insert(d);
            for k in (-s..=s).filter(|&k| k != 0) {
                days.insert(((i32::from(d) - 1 + k).rem_euclid(n) + 1) as u16);
            }
        }
        if self.interpolates(spec.calendar) && days.contains(&FEB29) {
            days.extend([FEB29 - 1, FEB29 + 1]);
        }
        days.into_iter().collect()
    }

    /// The spec the job computes: `spec` with [`DayRules::computed_doys`].
    pub fn computed_spec(&self, spec: &WindowSpec) -> WindowSpec {
        WindowSpec { doys: self.computed_doys(spec), ..spec.clone() }
    }

    /// The day-of-year axis of `spec`'s job under these rules: which days are computed, and
    /// how each day written is made from them.
    pub fn axis(&self, spec: &WindowSpec) -> DayAxis {
        let computed = self.computed_doys(spec);
        let n = year_length_in(spec.calendar, self.cf, &spec.years) as usize;
        // row of each day of the year among the computed days (usize::MAX: not computed)
        let mut row = vec![usize::MAX; n + 1];
        for (i, &d) in computed.iter().enumerate() {
            row[d as usize] = i;
        }
        let width = self.smooth.max(1);
        DayAxis {
            written: spec.doys.clone(),
            computed,
            row,
            n,
            half: usize::from(width / 2),
            weight: 1.0 / f64::from(width),
            interpolate: self.interpolates(spec.calendar),
        }
    }

    /// The results of the days `spec` asks for, from `computed` (every day of
    /// [`DayRules::computed_doys`] in order): Feb 29 filled, then smoothed, cell by cell on
    /// `threads`.
    pub fn apply(&self, spec: &WindowSpec, computed: &TileResult, threads: &rayon::ThreadPool) -> TileResult {
        let axis = self.axis(spec);
        axis.apply(computed, 0..spec.doys.len(), threads)
    }
}

/// The day-of-year axis of a job: the days computed, the days written, and how the second
/// are made from the first ([`DayRules::axis`]).
#[derive(Clone, Debug)]
pub struct DayAxis {
    /// Days of year written, in order (the job's `--doys`, or a rank's slice).
    pub written: Vec<u16>,
    /// Days of year computed, in order: the written ones and their halo.
    pub computed: Vec<u16>,
    /// Index among `computed` of each day of the year (`usize::MAX`: not computed).
    row: Vec<usize>,
    /// Days in the year.
    n: usize,
    /// `(W - 1) / 2`.
    half: usize,
    /// `1 / W`, rounded once.
    weight: f64,
    interpolate: bool,
}

impl DayAxis {
    /// The day of the year `k` days after `d` (negative: before), around the year.
    fn around(&self, d: usize, k: isize) -> usize {
        ((d as isize - 1 + k).rem_euclid(self.n as isize) + 1) as usize
    }

    /// The computed rows written target `t` is made from.
    pub fn inputs(&self, t: usize) -> Vec<usize> {
        let d = self.written[t] as usize;
        let h = self.half as isize;
        let mut rows = Vec::new();
        for k in -h..=h {
            match self.around(d, k) {
                FEB29_USIZE if self.interpolate => rows.extend([self.row[FEB29_USIZE - 1], self.row[FEB29_USIZE + 1]]),
                e => rows.push(self.row[e]),
            }
        }
        rows
    }

    /// Written targets `targets`, made from `computed` (every computed day, in order; only the
    /// rows [`DayAxis::inputs`] names are read): Feb 29 filled, then smoothed, cell by cell
    /// on `threads`. Counts (not written) are those of the day itself.
    pub fn apply(&self, computed: &TileResult, targets: Range<usize>, threads: &rayon::ThreadPool) -> TileResult {
        debug_assert_eq!(self.computed.len(), computed.n_targets);
        // every value and count is written by `apply_into`
        let mut out = TileResult::zeroed(computed.n_stats, targets.len(), computed.n_cells);
        self.apply_into(computed, targets, &mut out, threads);
        out
    }

    /// [`DayAxis::apply`] into `out` (reshaped to the targets; its allocation is reused), from
    /// computed rows wherever they are (`rows`: the tile's segments as they were computed,
    /// without copying them together).
    pub fn apply_into(
        &self,
        rows: &impl DayRows,
        targets: Range<usize>,
        out: &mut TileResult,
        threads: &rayon::ThreadPool,
    ) {
        let (n_stats, n_cells, n_out) = (out.n_stats, out.n_cells, targets.len());
        out.reshape(n_out);
        // the days these targets read, once each
        let mut needed: Vec<usize> = Vec::new();
        for t in targets.clone() {
            let d = self.written[t] as usize;
            for k in -(self.half as isize)..=self.half as isize {
                needed.push(self.around(d, k));
            }
        }
        needed.sort_unstable();
        needed.dedup();
        let interpolate = self.interpolate && needed.contains(&FEB29_USIZE);
        threads.install(|| {
            let dst = DisjointSlice::new(&mut out.values);
            // each statistic and chunk of cells on its own: the same arithmetic whatever the split
            let chunks: Vec<(usize, usize)> =
                (0..n_stats).flat_map(|st| (0..n_cells).step_by(CHUNK).map(move |c0| (st, c0))).collect();
            chunks.par_iter().for_each(|&(st, c0)| {
                let w = CHUNK.min(n_cells - c0);
                let src = |d: usize| &rows.values(st, self.row[d])[c0..c0 + w];
                let mut filled: Vec<&[f64]> = vec![&[]; self.n + 1];
                for &d in &needed {
                    if !(interpolate && d == FEB29_USIZE) {
                        filled[d] = src(d);
                    }
                }
                let feb29: Vec<f64> = match interpolate {
                    true => {
                        let (a, b) = (src(FEB29_USIZE - 1), src(FEB29_USIZE + 1));
                        a.iter().zip(b).map(|(&a, &b)| 0.5 * a + 0.5 * b).collect()
                    }
                    false => Vec::new(),
                };
                if interpolate {
                    filled[FEB29_USIZE] = &feb29;
                }
                // each needed day's products v * (1/W), rounded once and the same for every day
                // whose window holds it, rows padded so that a window's rows do not share cache
                // sets
                let stride = w + LANES;
                let mut at = vec![usize::MAX; self.n + 1];
                let mut products = vec![0.0; if self.half == 0 { 0 } else { needed.len() * stride }];
                if self.half > 0 {
                    for (j, &d) in needed.iter().enumerate() {
                        at[d] = j * stride;
                        for (p, &v) in products[j * stride..j * stride + w].iter_mut().zip(filled[d]) {
                            *p = v * self.weight;
                        }
                    }
                }
                let mut acc = vec![0.0; w];
                let mut window: Vec<&[f64]> = Vec::with_capacity(2 * self.half + 1);
                for (i, t) in targets.clone().enumerate() {
                    let d = self.written[t] as usize;
                    if self.half == 0 {
                        acc.copy_from_slice(filled[d]);
                    } else {
                        // runavg in window order: s = 0; s += v * (1/W), each product rounded
                        window.clear();
                        for k in -(self.half as isize)..=self.half as isize {
                            let o = at[self.around(d, k)];
                            window.push(&products[o..o + w]);
                        }
                        sum_in_order(&window, &mut acc);
                    }
                    // SAFETY: chunk (st, c0) alone writes columns c0..c0+w of statistic st's
                    // rows, and nothing reads `out.values` until the wrapper is dropped.
                    unsafe { dst.write_slice((st * n_out + i) * n_cells + c0, &acc) };
                }
            });
            out.counts.par_chunks_mut(n_cells.max(1)).zip(targets.clone()).for_each(|(row, t)| {
                row.copy_from_slice(rows.counts(self.row[self.written[t] as usize]));
            });
        });
    }

    /// The computed rows written target `t` is made from: [`DayAxis::inputs`], and its own
    /// row, whose counts it keeps.
    pub fn needs(&self, t: usize) -> Vec<usize> {
        let mut rows = self.inputs(t);
        rows.push(self.row[self.written[t] as usize]);
        rows.sort_unstable();
        rows.dedup();
        rows
    }
}

/// Where the computed days' results are, row by row (row: a day's index among
/// [`DayAxis::computed`]): one [`TileResult`] of every computed day, or the segments they
/// were computed in.
pub trait DayRows: Sync {
    /// The values of statistic `stat` of computed row `row`, every cell.
    fn values(&self, stat: usize, row: usize) -> &[f64];
    /// The counts of computed row `row`, every cell.
    fn counts(&self, row: usize) -> &[u32];
}

impl DayRows for TileResult {
    fn values(&self, stat: usize, row: usize) -> &[f64] {
        self.row(stat, row)
    }

    fn counts(&self, row: usize) -> &[u32] {
        &self.counts[row * self.n_cells..(row + 1) * self.n_cells]
    }
}

const FEB29_USIZE: usize = FEB29 as usize;

/// Cells processed together: a chunk's year of rows stays in cache while it is summed.
const CHUNK: usize = 512;

/// Cells summed together in registers.
const LANES: usize = 8;

/// `out[i] = ((0 + rows[0][i]) + rows[1][i]) + ...`, in that order for every cell (the sums
/// of [`DayAxis::apply_into`]), `LANES` cells at a time so that the partial sums stay in
/// registers.
fn sum_in_order(rows: &[&[f64]], out: &mut [f64]) {
    let done = out.len() - out.len() % LANES;
    for (b, block) in out.chunks_exact_mut(LANES).enumerate() {
        let mut s = [0.0f64; LANES];
        for row in rows {
            let row: &[f64; LANES] = row[b * LANES..(b + 1) * LANES].try_into().expect("LANES values");
            for (s, &v) in s.iter_mut().zip(row) {
                *s += v;
            }
        }
        block.copy_from_slice(&s);
    }
    for (i, o) in out.iter_mut().enumerate().skip(done) {
        let mut s = 0.0;
        for row in rows {
            s += row[i];
        }
        *o = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(doys: Vec<u16>, calendar: Calendar) -> WindowSpec {
        WindowSpec { years: 2001..=2004, doys, half_window: 5, calendar }
    }

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap()
    }

    #[test]
    fn halo_days_wrap_around_the_year() {
        let rules = DayRules { smooth: 5, ..DayRules::default() };
        let s = spec(vec![1, 2, 200], Calendar::Hobday366);
        assert_eq!(rules.computed_doys(&s), [1, 2, 3, 4, 198, 199, 200, 201, 202, 365, 366]);
        let rules = DayRules { smooth: 3, feb29: Feb29::Interpolate, ..DayRules::default() };
        assert_eq!(rules.computed_doys(&spec(vec![61], Calendar::Hobday366)), [59, 60, 61, 62]);
        assert_eq!(rules.computed_doys(&spec(vec![61], Calendar::Ordinal)), [60, 61, 62]);
        // 2001-2003 have no leap year: the ordinal year has 365 days
        let s = WindowSpec { years: 2001..=2003, ..spec(vec![365], Calendar::Ordinal) };
        assert_eq!(rules.computed_doys(&s), [1, 364, 365]);
        assert_eq!(DayRules::default().computed_doys(&WindowSpec { doys: vec![366], ..s.clone() }), [366]);
        assert!(!DayRules::default().holds(Calendar::Hobday366));
        assert!(!DayRules { feb29: Feb29::Interpolate, ..DayRules::default() }.holds(Calendar::Ordinal));
    }

    /// One cell per day value `v(d)`, one stat.
    fn computed(doys: &[u16], v: impl Fn(u16) -> f64) -> TileResult {
        let mut r = TileResult::new(1, doys.len(), 1);
        for (t, &d) in doys.iter().enumerate() {
            r.values[t] = v(d);
        }
        r
    }

    #[test]
    fn every_cell_is_summed_in_window_order() {
        // 21 cells: two blocks of LANES and a remainder, values of mixed magnitude (so the order
        // of the sums shows in the bits), a cell that is -0.0 every day (0 + -0 is +0)
        let rules = DayRules { smooth: 31, ..DayRules::default() };
        let full = spec((1..=366).collect(), Calendar::Hobday366);
        let n = 21;
        let v = |d: usize, c: usize| match c {
            20 => -0.0,
            _ => (d as f64 * 0.37 + c as f64).sin() * 10f64.powi((d % 7) as i32 - 3) + 280.0,
        };
        let mut computed = TileResult::new(2, 366, n);
        for st in 0..2 {
            for d in 1..=366 {
                for c in 0..n {
                    computed.values[(st * 366 + d - 1) * n + c] = v(d, c) * (st + 1) as f64;
                }
            }
        }
        let out = rules.apply(&full, &computed, &pool());
        for st in 0..2 {
            for d in 1..=366usize {
                for c in 0..n {
                    let mut s = 0.0;
                    for k in -15i64..=15 {
                        let e = (d as i64 - 1 + k).rem_euclid(366) as usize + 1;
                        s += v(e, c) * (st + 1) as f64 * (1.0 / 31.0);
                    }
                    let got = out.values[(st * 366 + d - 1) * n + c];
                    assert_eq!(got.to_bits(), s.to_bits(), "stat {st} day {d} cell {c}");
                }
            }
        }
    }

    #[test]
    fn smoothing_is_runavg_in_window_order() {
        let rules = DayRules { smooth: 5, feb29: Feb29::Interpolate, ..DayRules::default() };
        let full = spec((1..=366).collect(), Calendar::Hobday366);
        let v = |d: u16| f64::from(d).sin() * 3.0 + 20.0;
        let out = rules.apply(&full, &computed(&rules.computed_doys(&full), v), &pool());
        let filled = |d: u16| if d == 60 { 0.5 * v(59) + 0.5 * v(61) } else { v(d) };
        for d in 1..=366u16 {
            let mut s = 0.0;
            for k in -2i32..=2 {
                s += filled(((i32::from(d) - 1 + k).rem_euclid(366) + 1) as u16) * (1.0 / 5.0);
            }
            assert_eq!(out.values[d as usize - 1].to_bits(), s.to_bits(), "day {d}");
        }
        // a partial range equals the same days of the whole year
        let part = spec(vec![1, 2, 59, 60, 366], Calendar::Hobday366);
        let p = rules.apply(&part, &computed(&rules.computed_doys(&part), v), &pool());
        for (t, &d) in part.doys.iter().enumerate() {
            assert_eq!(p.values[t].to_bits(), out.values[d as usize - 1].to_bits(), "day {d}");
        }
        // a missing day spreads over its neighbours' windows only
        let gap = |d: u16| if d == 100 { f64::NAN } else { v(d) };
        let g = rules.apply(&full, &computed(&rules.computed_doys(&full), gap), &pool());
        let nan: Vec<u16> = (1..=366).filter(|&d| g.values[d as usize - 1].is_nan()).collect();
        assert_eq!(nan, [98, 99, 100, 101, 102]);
    }

    /// Smoothing is periodic over the calendar's year (360 days of 360_day, 365 of noleap);
    /// Feb 29 is interpolated only where day 60 is Feb 29 of a 366-day year.
    #[test]
    fn year_lengths_follow_the_inputs_calendar() {
        let years = 2001..=2004;
        assert_eq!(year_length_in(Calendar::Hobday366, CfCalendar::Day360, &years), 360);
        assert_eq!(year_length_in(Calendar::Hobday366, CfCalendar::NoLeap, &years), 365);
        assert_eq!(year_length_in(Calendar::Ordinal, CfCalendar::AllLeap, &(2001..=2001)), 366);
        assert_eq!(year_length_in(Calendar::Ordinal, CfCalendar::Julian, &(1900..=1900)), 366);
        assert_eq!(year_length(Calendar::Ordinal, &(1900..=1900)), 365);
        let day360 = DayRules { smooth: 5, cf: CfCalendar::Day360, ..DayRules::default() };
        let s = spec(vec![1, 360], Calendar::Hobday366);
        assert_eq!(day360.computed_doys(&s), [1, 2, 3, 358, 359, 360]);
        let feb29 = |cf| DayRules { feb29: Feb29::Interpolate, cf, ..DayRules::default() };
        let s = spec(vec![60], Calendar::Hobday366);
        assert_eq!(feb29(CfCalendar::AllLeap).computed_doys(&s), [59, 60, 61]);
        assert_eq!(feb29(CfCalendar::NoLeap).computed_doys(&s), [60]);
        assert_eq!(feb29(CfCalendar::Day360).computed_doys(&s), [60]);
        assert!(!feb29(CfCalendar::NoLeap).holds(Calendar::Hobday366));
        // a 360-day axis smooths around its own year: day 1's mean takes days 359, 360, 1, 2, 3
        let axis = day360.axis(&spec((1..=360).collect(), Calendar::Hobday366));
        let rows = axis.inputs(0);
        assert_eq!(rows, [358, 359, 0, 1, 2]);
    }
}
