//! Per-year statistics of a cell's events, as marineHeatWaves' `blockAverage()` gives them
//! with one-year blocks (its defaults: no temperature series, missing values kept).
//!
//! An event counts in the year it starts (its sums and means there); `total_days` splits its
//! days among the years they fall in; `total_icum` goes to the start year of an event within
//! one year and, as blockAverage's loop leaves it, to the last year of an event spanning years.
//! `intensity_max_max` is the largest `intensity_max` or 0, whichever is larger (blockAverage
//! starts it at 0, so for cold spells, whose intensities are negative, it stays 0); it is NaN
//! in a year without events, like every mean; `count`, `total_days` and `total_icum` are 0.

use super::metrics::Event;
use super::Days;

/// The statistics by blockAverage's names, in output order.
pub const STATS: [&str; 19] = [
    "count",
    "duration",
    "intensity_max",
    "intensity_max_max",
    "intensity_mean",
    "intensity_var",
    "intensity_cumulative",
    "intensity_max_relThresh",
    "intensity_mean_relThresh",
    "intensity_var_relThresh",
    "intensity_cumulative_relThresh",
    "intensity_max_abs",
    "intensity_mean_abs",
    "intensity_var_abs",
    "intensity_cumulative_abs",
    "rate_onset",
    "rate_decline",
    "total_days",
    "total_icum",
];

/// Units of each statistic (`{u}`: the input's units).
pub fn stat_units(stat: &str, units: &str) -> String {
    match stat {
        "count" => "1".into(),
        "duration" | "total_days" => "days".into(),
        s if s.starts_with("intensity_cumulative") || s == "total_icum" => format!("{units} days"),
        s if s.starts_with("rate_") => format!("{units} day-1"),
        _ => units.into(),
    }
}

const COUNT: usize = 0;
const MAX: usize = 2;
const MAX_MAX: usize = 3;
const TOTAL_DAYS: usize = 17;
const TOTAL_ICUM: usize = 18;

/// The statistics of `events` (one cell's, in time order) over the years of `days`, into
/// `out[stat * n_years + year]` (`STATS.len() * days.n_years` values).
pub fn block_average(events: &[Event], days: &Days, out: &mut [f64]) {
    let ny = days.n_years;
    assert_eq!(out.len(), STATS.len() * ny);
    out.fill(0.0);
    let at = |stat: usize, year: usize| stat * ny + year;
    for ev in events {
        let y0 = usize::from(days.year_index[ev.index_start]);
        let y1 = usize::from(days.year_index[ev.index_end]);
        out[at(COUNT, y0)] += 1.0;
        out[at(1, y0)] += f64::from(ev.duration);
        out[at(MAX, y0)] += ev.intensity_max;
        out[at(MAX_MAX, y0)] = np_max(out[at(MAX_MAX, y0)], ev.intensity_max);
        let rest = [
            ev.intensity_mean,
            ev.intensity_var,
            ev.intensity_cumulative,
            ev.intensity_max_rel_thresh,
            ev.intensity_mean_rel_thresh,
            ev.intensity_var_rel_thresh,
            ev.intensity_cumulative_rel_thresh,
            ev.intensity_max_abs,
            ev.intensity_mean_abs,
            ev.intensity_var_abs,
            ev.intensity_cumulative_abs,
            ev.rate_onset,
            ev.rate_decline,
        ];
        for (k, v) in rest.iter().enumerate() {
            out[at(4 + k, y0)] += v;
        }
        let mut last = y0;
        if y0 == y1 {
            out[at(TOTAL_DAYS, y0)] += f64::from(ev.duration);
        } else {
            for i in ev.index_start..=ev.index_end {
                last = usize::from(days.year_index[i]);
                out[at(TOTAL_DAYS, last)] += 1.0;
            }
        }
        out[at(TOTAL_ICUM, last)] += ev.intensity_cumulative;
    }
    for y in 0..ny {
        let count = out[at(COUNT, y)];
        let count = if count == 0.0 { f64::NAN } else { count };
        for stat in (1..TOTAL_DAYS).filter(|&s| s != MAX_MAX) {
            out[at(stat, y)] /= count;
        }
        if out[at(MAX, y)].is_nan() {
            out[at(MAX_MAX, y)] = f64::NAN;
        }
    }
}

/// `np.max([a, b])`: NaN if either is.
fn np_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}
