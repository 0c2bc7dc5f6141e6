//! For the events tests: an independent scalar detector written from marineHeatWaves'
//! `detect()` and `blockAverage()` (the loops of the Python, not sstclim's code), series with
//! planted events, and a writer of `climatology.nc` files in the project's format.
#![allow(dead_code)]
// the reference is written as marineHeatWaves' Python loops are, index by index
#![allow(clippy::needless_range_loop)]

use std::path::Path;

/// One event as the reference computes it.
#[derive(Clone, Debug, PartialEq)]
pub struct RefEvent {
    pub start: usize,
    pub end: usize,
    pub peak: usize,
    pub duration: u32,
    pub durations: [u32; 4],
    /// intensity max, mean, var, cumulative; then relThresh; then abs; then rate_onset, rate_decline
    pub floats: [f64; 14],
    pub category: u8,
}

/// marineHeatWaves' detect() on a series with its climatology per day (`seas`, `thresh`),
/// sstclim's documented rule for categories where the threshold is not above the mean.
pub fn detect(
    temp: &[f64],
    seas: &[f64],
    thresh: &[f64],
    min_duration: usize,
    max_gap: Option<usize>,
    cold: bool,
) -> Vec<RefEvent> {
    let n = temp.len();
    let sign = if cold { -1.0 } else { 1.0 };
    let seas: Vec<f64> = seas.iter().map(|s| sign * s).collect();
    let thresh: Vec<f64> = thresh.iter().map(|s| sign * s).collect();
    // missing values take the climatology
    let t: Vec<f64> = (0..n).map(|i| if temp[i].is_nan() { seas[i] } else { sign * temp[i] }).collect();
    // label contiguous exceedances (ndimage.label), keep those of at least minDuration
    let exceed: Vec<bool> = (0..n).map(|i| t[i] - thresh[i] > 0.0).collect();
    let mut starts = Vec::new();
    let mut ends = Vec::new();
    let mut i = 0;
    while i < n {
        if exceed[i] {
            let mut j = i;
            while j + 1 < n && exceed[j + 1] {
                j += 1;
            }
            if j - i + 1 >= min_duration {
                starts.push(i);
                ends.push(j);
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    // join: the first short gap, repeatedly
    if let Some(max_gap) = max_gap {
        loop {
            let gaps: Vec<i64> = (1..starts.len()).map(|k| starts[k] as i64 - ends[k - 1] as i64 - 1).collect();
            let Some(ev) = gaps.iter().position(|&g| g <= max_gap as i64) else { break };
            ends[ev] = ends[ev + 1];
            starts.remove(ev + 1);
            ends.remove(ev + 1);
        }
    }
    let mut out = Vec::new();
    for (&s, &e) in starts.iter().zip(&ends) {
        let rel_seas: Vec<f64> = (s..=e).map(|i| t[i] - seas[i]).collect();
        let rel_thresh: Vec<f64> = (s..=e).map(|i| t[i] - thresh[i]).collect();
        let abs: Vec<f64> = (s..=e).map(|i| t[i]).collect();
        let mut peak = 0;
        for k in 0..rel_seas.len() {
            if rel_seas[k] > rel_seas[peak] {
                peak = k;
            }
        }
        let st = |x: &[f64]| {
            let m = x.iter().sum::<f64>() / x.len() as f64;
            let v = x.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / x.len() as f64;
            (x[peak], m, v.sqrt(), x.iter().sum::<f64>())
        };
        let (a, b, c, d) = st(&rel_seas);
        let (e1, f1, g1, h1) = st(&rel_thresh);
        let (i1, j1, k1, l1) = st(&abs);
        let mut durations = [0u32; 4];
        let mut best: Option<f64> = None;
        for i in s..=e {
            if thresh[i] > seas[i] {
                let norm = (t[i] - thresh[i]) / (thresh[i] - seas[i]);
                let cat = (1.0 + norm).floor();
                if cat == 1.0 {
                    durations[0] += 1;
                } else if cat == 2.0 {
                    durations[1] += 1;
                } else if cat == 3.0 {
                    durations[2] += 1;
                } else if cat >= 4.0 {
                    durations[3] += 1;
                }
                best = Some(match best {
                    Some(m) if m >= norm => m,
                    _ => norm,
                });
            }
        }
        let category = match best {
            Some(m) if (1.0 + m).floor() >= 1.0 => (1.0 + m).floor().min(4.0) as u8,
            _ => 0,
        };
        let onset = if s > 0 {
            let start = 0.5 * (rel_seas[0] + t[s - 1] - seas[s - 1]);
            (rel_seas[peak] - start) / (peak as f64 + 0.5)
        } else if peak == 0 {
            rel_seas[peak] - rel_seas[0]
        } else {
            (rel_seas[peak] - rel_seas[0]) / peak as f64
        };
        let last = *rel_seas.last().unwrap();
        let decline = if e < n - 1 {
            let end = 0.5 * (last + t[e + 1] - seas[e + 1]);
            (rel_seas[peak] - end) / ((e - s - peak) as f64 + 0.5)
        } else if peak == n - 1 {
            rel_seas[peak] - last
        } else {
            (rel_seas[peak] - last) / (e - s - peak) as f64
        };
        let f = sign;
        out.push(RefEvent {
            start: s,
            end: e,
            peak: s + peak,
            duration: (e - s + 1) as u32,
            durations,
            floats: [f * a, f * b, c, f * d, f * e1, f * f1, g1, f * h1, f * i1, f * j1, k1, f * l1, onset, decline],
            category,
        });
    }
    out
}

/// blockAverage() with one-year blocks: `[stat][year]` in sstclim's STATS order.
pub fn block_average(events: &[RefEvent], year_of_day: &[usize], n_years: usize) -> Vec<Vec<f64>> {
    let mut s = vec![vec![0.0; n_years]; 19];
    for ev in events {
        let mut ib = year_of_day[ev.start];
        s[0][ib] += 1.0;
        s[1][ib] += f64::from(ev.duration);
        s[2][ib] += ev.floats[0];
        let mm = s[3][ib];
        s[3][ib] = if mm.is_nan() || ev.floats[0].is_nan() { f64::NAN } else { mm.max(ev.floats[0]) };
        for k in 1..14 {
            s[3 + k][ib] += ev.floats[k];
        }
        if year_of_day[ev.start] == year_of_day[ev.end] {
            s[17][ib] += f64::from(ev.duration);
        } else {
            let mut years: Vec<usize> = (ev.start..=ev.end).map(|i| year_of_day[i]).collect();
            years.dedup();
            for y in years {
                ib = y;
                s[17][ib] += (ev.start..=ev.end).filter(|&i| year_of_day[i] == y).count() as f64;
            }
        }
        s[18][ib] += ev.floats[3];
    }
    for y in 0..n_years {
        let count = if s[0][y] == 0.0 { f64::NAN } else { s[0][y] };
        for k in 1..17 {
            if k != 3 {
                s[k][y] /= count;
            }
        }
        if s[2][y].is_nan() {
            s[3][y] = f64::NAN;
        }
    }
    s
}

/// Equal as the tests want: both NaN, or within a relative 1e-9 (numpy's pairwise sums and the
/// reference's sequential ones differ in the last bits).
pub fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A small deterministic generator (xorshift64*), and normal deviates from it.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// A climatology of 366 days: a seasonal mean and a threshold `width` above it (below it when
/// negative).
pub fn seasonal(base: f64, width: f64) -> (Vec<f64>, Vec<f64>) {
    let mean: Vec<f64> = (0..366).map(|d| base + 3.0 * (2.0 * std::f64::consts::PI * d as f64 / 366.0).sin()).collect();
    let thresh = mean.iter().map(|m| m + width).collect();
    (mean, thresh)
}

/// An AR(1) anomaly series (persistence `phi`, standard deviation `sd`) on a seasonal mean.
pub fn ar1(rng: &mut Rng, mean_of_day: &[f64], phi: f64, sd: f64) -> Vec<f64> {
    let mut a = 0.0;
    mean_of_day
        .iter()
        .map(|m| {
            a = phi * a + sd * (1.0 - phi * phi).sqrt() * rng.normal();
            m + a
        })
        .collect()
}

/// Write `path` in the climatology format of COMMON.md: `{var}_mean` and `{var}_{stat}` over
/// (doy, lat, lon), with `lat`/`lon` coordinates; values `[doy][cell]`.
#[allow(clippy::too_many_arguments)]
pub fn write_climatology(path: &Path, var: &str, lat: &[f64], lon: &[f64], calendar: &str, stats: &[(&str, &[f64])]) {
    write_climatology_in(path, var, lat, lon, calendar, None, 366, stats)
}

/// [`write_climatology`] of a climatology computed in the CF calendar `cf` (its `time`
/// variable's `calendar` attribute; none: CF's default, `standard`) with `n_doy` days of year
/// (360 for `360_day`, 365 for `noleap`).
#[allow(clippy::too_many_arguments)]
pub fn write_climatology_in(
    path: &Path,
    var: &str,
    lat: &[f64],
    lon: &[f64],
    calendar: &str,
    cf: Option<&str>,
    n_doy: usize,
    stats: &[(&str, &[f64])],
) {
    sstclim::input::silence_hdf5();
    let mut f = netcdf::create(path).unwrap();
    f.add_dimension("doy", n_doy).unwrap();
    f.add_dimension("nv", 2).unwrap();
    f.add_dimension("lat", lat.len()).unwrap();
    f.add_dimension("lon", lon.len()).unwrap();
    for (k, v) in [
        ("Conventions", "CF-1.8"),
        ("sstclim_layout", "climatology"),
        ("input_variable", var),
        ("climatology_years", "1983-2012"),
        ("calendar_mode", calendar),
        ("window_edges", "extend"),
        ("feb29", "interpolate"),
        ("percentile_method", "7 (linear)"),
    ] {
        f.add_attribute(k, v).unwrap();
    }
    f.add_attribute("window_half_width", 5i32).unwrap();
    f.add_attribute("smoothing_width", 31i32).unwrap();
    f.add_attribute("min_samples", 1i32).unwrap();
    f.add_attribute("percentiles", vec![10.0f64, 90.0]).unwrap();
    let mut d = f.add_variable::<i32>("doy", &["doy"]).unwrap();
    d.put_values(&(1..=n_doy as i32).collect::<Vec<_>>(), ..).unwrap();
    let mut t = f.add_variable::<f64>("time", &["doy"]).unwrap();
    t.put_attribute("units", "days since 2000-01-01").unwrap();
    if let Some(cf) = cf {
        t.put_attribute("calendar", cf).unwrap();
    }
    t.put_attribute("climatology", "climatology_bounds").unwrap();
    t.put_values(&(0..n_doy).map(|d| d as f64).collect::<Vec<_>>(), ..).unwrap();
    let mut b = f.add_variable::<f64>("climatology_bounds", &["doy", "nv"]).unwrap();
    b.put_values(&(0..2 * n_doy).map(|d| d as f64).collect::<Vec<_>>(), ..).unwrap();
    for (name, vals) in [("lat", lat), ("lon", lon)] {
        let mut v = f.add_variable::<f64>(name, &[name]).unwrap();
        v.put_values(vals, ..).unwrap();
    }
    for (stat, vals) in stats {
        let mut v = f.add_variable::<f32>(&format!("{var}_{stat}"), &["doy", "lat", "lon"]).unwrap();
        v.set_fill_value(f32::NAN).unwrap();
        let vals: Vec<f32> = vals.iter().map(|&x| x as f32).collect();
        v.put_values(&vals, ..).unwrap();
    }
}

/// A model calendar as the tests know it, independently of sstclim: its CF name and the
/// length of its year (every year alike).
#[derive(Clone, Copy, Debug)]
pub struct ModelCalendar {
    pub name: &'static str,
    pub year: usize,
}

pub const DAY360: ModelCalendar = ModelCalendar { name: "360_day", year: 360 };
pub const NOLEAP: ModelCalendar = ModelCalendar { name: "noleap", year: 365 };

impl ModelCalendar {
    /// The day of year (1-based) `ordinal` of `year` as days since 1970-01-01 in this calendar
    /// (what a CF time axis `days since 1970-01-01` with this calendar holds).
    pub fn days_since_1970(self, year: i32, ordinal: usize) -> i64 {
        (i64::from(year) - 1970) * self.year as i64 + ordinal as i64 - 1
    }

    /// Month and day of day of year `ordinal` (1-based): twelve 30-day months, or the months
    /// of a year without Feb 29.
    pub fn month_day(self, ordinal: usize) -> (usize, usize) {
        let months: Vec<usize> =
            if self.year == 360 { vec![30; 12] } else { vec![31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] };
        let mut left = ordinal;
        for (m, &len) in months.iter().enumerate() {
            if left <= len {
                return (m + 1, left);
            }
            left -= len;
        }
        panic!("day {ordinal} past the year");
    }
}

/// How [`write_series_as`] stores the values.
#[derive(Clone, Copy, Debug)]
pub enum Stored {
    /// float32, NaN as the fill 1e20.
    F32,
    /// float32 packed: stored (x - offset) / scale rounded to float32, with `scale_factor` and
    /// `add_offset` attributes (float64); decoded, a value is f64(stored) * scale + offset.
    F32Packed { scale: f64, offset: f64 },
    /// float64 holding exactly what `F32Packed { scale, offset }` decodes to (NaN as the fill).
    F64DecodedFrom { scale: f64, offset: f64 },
}

/// Write a time series in calendar `cal`, one file a year (`{var}_day_{year}.nc`, CMIP6-like:
/// `time` in "days since 1850-01-01" with the calendar's name, values at noon), of the years
/// from `first_year`; `series[cell][day of the series]` stored as float32 (NaN as the fill).
pub fn write_series(
    dir: &Path,
    var: &str,
    cal: ModelCalendar,
    first_year: i32,
    lat: &[f64],
    lon: &[f64],
    series: &[Vec<f64>],
) {
    write_series_as(dir, var, cal, first_year, lat, lon, series, Stored::F32);
}

/// [`write_series`], the values stored as `stored` says.
#[allow(clippy::too_many_arguments)]
pub fn write_series_as(
    dir: &Path,
    var: &str,
    cal: ModelCalendar,
    first_year: i32,
    lat: &[f64],
    lon: &[f64],
    series: &[Vec<f64>],
    stored: Stored,
) {
    sstclim::input::silence_hdf5();
    std::fs::create_dir_all(dir).unwrap();
    let n_days = series[0].len();
    assert_eq!(n_days % cal.year, 0, "whole years");
    for y in 0..n_days / cal.year {
        let year = first_year + y as i32;
        let mut f = netcdf::create(dir.join(format!("{var}_day_{year}.nc"))).unwrap();
        f.add_dimension("time", cal.year).unwrap();
        f.add_dimension("lat", lat.len()).unwrap();
        f.add_dimension("lon", lon.len()).unwrap();
        let mut t = f.add_variable::<f64>("time", &["time"]).unwrap();
        for (k, v) in [("standard_name", "time"), ("units", "days since 1850-01-01"), ("calendar", cal.name)] {
            t.put_attribute(k, v).unwrap();
        }
        let base = (i64::from(year) - 1850) * cal.year as i64;
        let times: Vec<f64> = (0..cal.year).map(|d| (base + d as i64) as f64 + 0.5).collect();
        t.put_values(&times, ..).unwrap();
        for (name, vals, units) in [("lat", lat, "degrees_north"), ("lon", lon, "degrees_east")] {
            let mut v = f.add_variable::<f64>(name, &[name]).unwrap();
            v.put_attribute("units", units).unwrap();
            v.put_values(vals, ..).unwrap();
        }
        let n = lat.len() * lon.len();
        let value = |k: usize| series[k % n][y * cal.year + k / n];
        match stored {
            Stored::F32 | Stored::F32Packed { .. } => {
                let (scale, offset) = match stored {
                    Stored::F32Packed { scale, offset } => (scale, offset),
                    _ => (1.0, 0.0),
                };
                let mut v = f.add_variable::<f32>(var, &["time", "lat", "lon"]).unwrap();
                v.set_fill_value(1e20f32).unwrap();
                v.put_attribute("units", "degC").unwrap();
                if let Stored::F32Packed { .. } = stored {
                    v.put_attribute("scale_factor", scale).unwrap();
                    v.put_attribute("add_offset", offset).unwrap();
                }
                let packed = |x: f64| if x.is_nan() { 1e20 } else { ((x - offset) / scale) as f32 };
                let vals: Vec<f32> = (0..cal.year * n).map(|k| packed(value(k))).collect();
                v.put_values(&vals, ..).unwrap();
            }
            Stored::F64DecodedFrom { scale, offset } => {
                let mut v = f.add_variable::<f64>(var, &["time", "lat", "lon"]).unwrap();
                v.set_fill_value(f64::NAN).unwrap();
                v.put_attribute("units", "degC").unwrap();
                let decoded = |x: f64| f64::from(((x - offset) / scale) as f32) * scale + offset;
                let vals: Vec<f64> = (0..cal.year * n).map(|k| decoded(value(k))).collect();
                v.put_values(&vals, ..).unwrap();
            }
        }
    }
}
