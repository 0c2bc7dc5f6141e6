//! Finding a cell's events as marineHeatWaves' `detect()` does: missing days take the
//! climatological mean; a day exceeds when its temperature is strictly above the threshold
//! (never when either is NaN); runs of exceeding days shorter than the minimum duration are
//! dropped, then events separated by at most `max_gap` days are joined.
//!
//! Cold spells are heatwaves of the negated series against the negated low threshold and
//! mean, exactly as marineHeatWaves flips `temp` (its threshold is the 90th percentile of the
//! negated series, which for the linear percentile is the negated 10th percentile).
//!
//! Joining: marineHeatWaves joins the first short gap and recomputes the gaps until none is
//! short; joining two events leaves every other gap as it was, so this is the same as joining
//! every short gap in one pass from left to right.

use super::metrics::{measure, Event};
use super::{CellClim, Days, Params};

/// Buffers reused from cell to cell.
#[derive(Default)]
pub struct Scratch {
    /// Temperature (negated for cold spells), missing days filled with the mean.
    pub(super) t: Vec<f64>,
    pub(super) seas: Vec<f64>,
    pub(super) thresh: Vec<f64>,
    runs: Vec<(usize, usize)>,
}

/// Append the events of one cell (series `temp`, NaN where missing, one value per day of
/// `days`) to `out`, in time order.
pub fn detect_cell<T: Copy + Into<f64>>(
    temp: &[T],
    days: &Days,
    clim: CellClim<'_>,
    params: &Params,
    scratch: &mut Scratch,
    out: &mut Vec<Event>,
) {
    let n = temp.len();
    debug_assert_eq!(n, days.len());
    let sign = if params.cold { -1.0 } else { 1.0 };
    let Scratch { t, seas, thresh, runs } = scratch;
    t.clear();
    seas.clear();
    thresh.clear();
    runs.clear();
    for (i, &v) in temp.iter().enumerate() {
        let d = usize::from(days.doy_index[i]);
        let s = sign * clim.mean[d];
        let v: f64 = v.into();
        seas.push(s);
        thresh.push(sign * clim.thresh[d]);
        t.push(if v.is_nan() { s } else { sign * v });
    }
    // runs of exceeding days of at least the minimum duration
    let mut i = 0;
    while i < n {
        if t[i] > thresh[i] {
            let start = i;
            while i < n && t[i] > thresh[i] {
                i += 1;
            }
            if i - start >= params.min_duration {
                runs.push((start, i - 1));
            }
        } else {
            i += 1;
        }
    }
    // join across short gaps
    if let Some(max_gap) = params.max_gap {
        let mut joined: Vec<(usize, usize)> = Vec::with_capacity(runs.len());
        for &(s, e) in runs.iter() {
            match joined.last_mut() {
                Some(last) if s - last.1 - 1 <= max_gap => last.1 = e,
                _ => joined.push((s, e)),
            }
        }
        *runs = joined;
    }
    for &(s, e) in runs.iter() {
        out.push(measure(t, seas, thresh, s, e, params.cold));
    }
}
