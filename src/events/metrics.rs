//! The fields of one event, computed as marineHeatWaves' `detect()` computes them, in float64
//! and with numpy's summation order (pairwise, as `ndarray.sum`/`mean`/`var` add), so that the
//! values agree with marineHeatWaves' to the last bits or nearly.
//!
//! Two of its special cases are kept as it has them: at the start of the series the onset
//! rate is taken over `peak` days (1 when the peak is the first day), and at the end of the
//! series over `end - start - peak` days — which is zero when the peak is the last day, so the
//! decline rate is NaN there (marineHeatWaves meant 1 day, but compares the peak's index within
//! the event with the series' last index).
//!
//! Categories (where marineHeatWaves' formula breaks): a day's category is
//! `floor(1 + (T - thresh) / (thresh - mean))`, defined only where the threshold is above the
//! mean. Days where it is not (Arctic-like cells where the threshold sits at or below the mean)
//! count in no `duration_*`, and the event's category is that of its largest defined
//! normalised exceedance, capped at 4; an event with no defined day (or whose largest one gives
//! less than 1) has category 0 ("none"). marineHeatWaves instead divides by a zero or negative
//! width there and indexes its category names with the result (0 and below wrap around to
//! "Extreme"); where the threshold is above the mean on every day the two agree.

/// One event of one cell. Indices are days of the analysis series (0 = its first day).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Event {
    pub index_start: usize,
    pub index_end: usize,
    pub index_peak: usize,
    pub duration: u32,
    pub duration_moderate: u32,
    pub duration_strong: u32,
    pub duration_severe: u32,
    pub duration_extreme: u32,
    pub intensity_max: f64,
    pub intensity_mean: f64,
    pub intensity_var: f64,
    pub intensity_cumulative: f64,
    pub intensity_max_rel_thresh: f64,
    pub intensity_mean_rel_thresh: f64,
    pub intensity_var_rel_thresh: f64,
    pub intensity_cumulative_rel_thresh: f64,
    pub intensity_max_abs: f64,
    pub intensity_mean_abs: f64,
    pub intensity_var_abs: f64,
    pub intensity_cumulative_abs: f64,
    pub rate_onset: f64,
    pub rate_decline: f64,
    /// 1 moderate, 2 strong, 3 severe, 4 extreme; 0 none (see the module's note).
    pub category: u8,
}

/// The floating-point fields by their marineHeatWaves names, in output order.
pub const FLOAT_FIELDS: [&str; 14] = [
    "intensity_max",
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
];

impl Event {
    /// The values of [`FLOAT_FIELDS`], in that order.
    pub fn floats(&self) -> [f64; 14] {
        [
            self.intensity_max,
            self.intensity_mean,
            self.intensity_var,
            self.intensity_cumulative,
            self.intensity_max_rel_thresh,
            self.intensity_mean_rel_thresh,
            self.intensity_var_rel_thresh,
            self.intensity_cumulative_rel_thresh,
            self.intensity_max_abs,
            self.intensity_mean_abs,
            self.intensity_var_abs,
            self.intensity_cumulative_abs,
            self.rate_onset,
            self.rate_decline,
        ]
    }
}

/// numpy's pairwise summation of float64 (`pairwise_sum_DOUBLE`): blocks of up to 128 values
/// summed with 8 accumulators, halves (cut at a multiple of 8) summed recursively.
pub fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        numpy_sum(&a[..n2]) + numpy_sum(&a[n2..])
    }
}

/// max, mean, population standard deviation and sum of `x` at peak index `peak`, as numpy
/// computes them (`x.mean()`, `np.sqrt(x.var())`, `x.sum()`).
fn stats(x: &[f64], peak: usize, dev: &mut Vec<f64>) -> (f64, f64, f64, f64) {
    let n = x.len() as f64;
    let sum = 0.0 + numpy_sum(x);
    let mean = sum / n;
    dev.clear();
    dev.extend(x.iter().map(|v| (v - mean) * (v - mean)));
    let var = (0.0 + numpy_sum(dev)) / n;
    (x[peak], mean, var.sqrt(), sum)
}

/// Index of the largest value as `np.argmax` gives it: the first NaN if there is one, else the
/// first maximum.
fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v.is_nan() {
            return i;
        }
        if v > x[best] {
            best = i;
        }
    }
    best
}

/// The event spanning days `s..=e` of the (sign-adjusted, filled) series `t` with mean `seas`
/// and threshold `thresh`; `cold` flips the intensities back to negative.
pub fn measure(t: &[f64], seas: &[f64], thresh: &[f64], s: usize, e: usize, cold: bool) -> Event {
    measure_at(t, seas, thresh, 0, t.len(), s, e, cold)
}

/// [`measure`] on a piece of the series: `t[j]`, `seas[j]` and `thresh[j]` are day `base + j`
/// of a series of `n_series` days, and the piece holds the days `s - 1 ..= e + 1` that exist.
#[allow(clippy::too_many_arguments)]
pub fn measure_at(
    t: &[f64],
    seas: &[f64],
    thresh: &[f64],
    base: usize,
    n_series: usize,
    s: usize,
    e: usize,
    cold: bool,
) -> Event {
    let at = |i: usize| i - base;
    let rel_seas: Vec<f64> = (s..=e).map(|i| t[at(i)] - seas[at(i)]).collect();
    let rel_thresh: Vec<f64> = (s..=e).map(|i| t[at(i)] - thresh[at(i)]).collect();
    let abs = &t[at(s)..=at(e)];
    let peak = argmax(&rel_seas);
    let mut dev = Vec::with_capacity(rel_seas.len());
    let (i_max, i_mean, i_var, i_cum) = stats(&rel_seas, peak, &mut dev);
    let (r_max, r_mean, r_var, r_cum) = stats(&rel_thresh, peak, &mut dev);
    let (a_max, a_mean, a_var, a_cum) = stats(abs, peak, &mut dev);
    // categories, on the days where the threshold is above the mean
    let mut durations = [0u32; 4];
    let mut top: Option<f64> = None;
    for i in s..=e {
        let width = thresh[at(i)] - seas[at(i)];
        if width > 0.0 {
            let norm = (t[at(i)] - thresh[at(i)]) / width;
            let cat = (1.0 + norm).floor();
            if cat >= 1.0 {
                durations[(cat.min(4.0) as usize) - 1] += 1;
            }
            top = Some(top.map_or(norm, |m: f64| if norm > m { norm } else { m }));
        }
    }
    let category = match top.map(|m| (1.0 + m).floor()) {
        Some(c) if c >= 1.0 => c.min(4.0) as u8,
        _ => 0,
    };
    // rates: the event starts half a day before its first day and ends half a day after its last
    let last = rel_seas.len() - 1;
    let rate_onset = if s > 0 {
        let start = 0.5 * (rel_seas[0] + t[at(s - 1)] - seas[at(s - 1)]);
        (rel_seas[peak] - start) / (peak as f64 + 0.5)
    } else if peak == 0 {
        (rel_seas[peak] - rel_seas[0]) / 1.0
    } else {
        (rel_seas[peak] - rel_seas[0]) / peak as f64
    };
    let rate_decline = if e < n_series - 1 {
        let end = 0.5 * (rel_seas[last] + t[at(e + 1)] - seas[at(e + 1)]);
        (rel_seas[peak] - end) / ((e - s - peak) as f64 + 0.5)
    } else if peak == n_series - 1 {
        (rel_seas[peak] - rel_seas[last]) / 1.0
    } else {
        (rel_seas[peak] - rel_seas[last]) / (e - s - peak) as f64
    };
    let f = if cold { -1.0 } else { 1.0 };
    Event {
        index_start: s,
        index_end: e,
        index_peak: s + peak,
        duration: (e - s + 1) as u32,
        duration_moderate: durations[0],
        duration_strong: durations[1],
        duration_severe: durations[2],
        duration_extreme: durations[3],
        intensity_max: f * i_max,
        intensity_mean: f * i_mean,
        intensity_var: i_var,
        intensity_cumulative: f * i_cum,
        intensity_max_rel_thresh: f * r_max,
        intensity_mean_rel_thresh: f * r_mean,
        intensity_var_rel_thresh: r_var,
        intensity_cumulative_rel_thresh: f * r_cum,
        intensity_max_abs: f * a_max,
        intensity_mean_abs: f * a_mean,
        intensity_var_abs: a_var,
        intensity_cumulative_abs: f * a_cum,
        rate_onset,
        rate_decline,
        category,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_sum_adds_like_numpy_in_blocks() {
        // values where the order of addition shows: 1e16 swallows a lone 1.0 but not a 2.0
        let mut a = vec![1.0; 9];
        a[0] = 1e16;
        // 8 accumulators hold the first 8 values, the 9th is added to their total
        let want = (((1e16 + 1.0) + (1.0 + 1.0)) + ((1.0 + 1.0) + (1.0 + 1.0))) + 1.0;
        assert_eq!(numpy_sum(&a), want);
        assert_ne!(numpy_sum(&a), a.iter().sum::<f64>());
        let b: Vec<f64> = (0..1000).map(|i| i as f64 * 0.25).collect();
        assert_eq!(numpy_sum(&b), 999.0 * 1000.0 / 2.0 * 0.25);
        assert_eq!(numpy_sum(&[]), 0.0);
    }

    #[test]
    fn argmax_takes_the_first_maximum_and_a_nan_first() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[1.0, 3.0, f64::NAN, 5.0]), 2);
    }
}
