//! The climatology along its day-of-year axis, after every target day is computed: Feb 29
//! filled from its neighbours (`--feb29 interpolate`) and the periodic running mean
//! (`--smooth W`), as marineHeatWaves makes its climatology. Both need days the job was not
//! asked to write (day 59 and 61 for day 60, `(W-1)/2` days on each side for smoothing): the
//! job computes those *halo* days too ([`DayRules::computed_doys`]) and writes only the days
//! asked for ([`DayRules::apply`]).
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

use rayon::prelude::*;

use crate::calendar::{is_leap, Calendar};
use crate::engine::TileResult;
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
}

impl Default for DayRules {
    fn default() -> Self {
        DayRules { edges: WindowEdges::Clip, feb29: Feb29::Window, smooth: 1 }
    }
}

/// The day of Feb 29 under `hobday366`.
const FEB29: u16 = 60;

/// Length of the day-of-year axis: 366 under `hobday366`; under `ordinal`, 366 where some
/// climatology year is a leap year (day 366 exists only in those), else 365.
pub fn year_length(calendar: Calendar, years: &std::ops::RangeInclusive<i32>) -> u16 {
    match calendar {
        Calendar::Hobday366 => 366,
        Calendar::Ordinal if years.clone().any(is_leap) => 366,
        Calendar::Ordinal => 365,
    }
}

impl DayRules {
    /// Whether results need the whole tile's days before any is written.
    pub fn holds(&self, calendar: Calendar) -> bool {
        self.smooth > 1 || self.interpolates(calendar)
    }

    fn interpolates(&self, calendar: Calendar) -> bool {
        self.feb29 == Feb29::Interpolate && calendar == Calendar::Hobday366
    }

    /// The days to compute for the days `spec` asks for: those, the smoothing's halo around
    /// them (periodic over the year), and days 59 and 61 where day 60 is interpolated; sorted.
    pub fn computed_doys(&self, spec: &WindowSpec) -> Vec<u16> {
        let n = i32::from(year_length(spec.calendar, &spec.years));
        let s = i32::from(self.smooth.max(1) / 2);
        let mut days: BTreeSet<u16> = BTreeSet::new();
        for &d in &spec.doys {
            for k in -s..=s {
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

    /// The results of the days `spec` asks for, from `computed` (every day of
    /// [`DayRules::computed_doys`] in order): Feb 29 filled, then smoothed, cell by cell on
    /// `threads`.
    pub fn apply(&self, spec: &WindowSpec, computed: &TileResult, threads: &rayon::ThreadPool) -> TileResult {
        let doys = self.computed_doys(spec);
        debug_assert_eq!(doys.len(), computed.n_targets);
        let n = year_length(spec.calendar, &spec.years) as usize;
        // row of each day of the year in `computed` (usize::MAX: not computed)
        let mut row = vec![usize::MAX; n + 1];
        for (i, &d) in doys.iter().enumerate() {
            row[d as usize] = i;
        }
        let (n_stats, n_cells) = (computed.n_stats, computed.n_cells);
        let mut out = TileResult::new(n_stats, spec.doys.len(), n_cells);
        let interpolate = self.interpolates(spec.calendar) && row[FEB29 as usize] != usize::MAX;
        let s = (self.smooth.max(1) / 2) as usize;
        let c = 1.0 / f64::from(self.smooth.max(1));
        let out_targets = spec.doys.len();
        threads.install(|| {
            // each stat and chunk of cells on its own: the same arithmetic whatever the split
            let chunks: Vec<(usize, usize)> =
                (0..n_stats).flat_map(|st| (0..n_cells).step_by(CHUNK).map(move |c0| (st, c0))).collect();
            let pieces: Vec<Vec<f64>> = chunks
                .par_iter()
                .map(|&(st, c0)| {
                    let w = CHUNK.min(n_cells - c0);
                    let src = |d: usize| &computed.row(st, row[d])[c0..c0 + w];
                    // the filled series, only the computed days (others stay empty)
                    let mut filled: Vec<Vec<f64>> = vec![Vec::new(); n + 1];
                    for &d in &doys {
                        filled[d as usize] = src(d as usize).to_vec();
                    }
                    if interpolate {
                        let (a, b) = (src(FEB29 as usize - 1), src(FEB29 as usize + 1));
                        filled[FEB29 as usize] = a.iter().zip(b).map(|(&a, &b)| 0.5 * a + 0.5 * b).collect();
                    }
                    let mut piece = vec![0.0; out_targets * w];
                    for (t, &d) in spec.doys.iter().enumerate() {
                        let acc = &mut piece[t * w..(t + 1) * w];
                        if s == 0 {
                            acc.copy_from_slice(&filled[d as usize]);
                            continue;
                        }
                        for k in 0..=2 * s {
                            let day = (d as usize - 1 + n + k - s) % n + 1;
                            for (a, &v) in acc.iter_mut().zip(&filled[day]) {
                                *a += v * c;
                            }
                        }
                    }
                    piece
                })
                .collect();
            for (&(st, c0), piece) in chunks.iter().zip(pieces) {
                let w = CHUNK.min(n_cells - c0);
                for t in 0..out_targets {
                    let start = (st * out_targets + t) * n_cells + c0;
                    out.values[start..start + w].copy_from_slice(&piece[t * w..(t + 1) * w]);
                }
            }
        });
        // counts are not written; those of the days asked for are kept for completeness
        for (t, &d) in spec.doys.iter().enumerate() {
            let src = row[d as usize] * n_cells;
            out.counts[t * n_cells..(t + 1) * n_cells].copy_from_slice(&computed.counts[src..src + n_cells]);
        }
        out
    }
}

/// Cells processed together: a chunk's year of rows stays in cache while it is summed.
const CHUNK: usize = 512;

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
}
