//! `sstclim::events` against an independent scalar detector written from marineHeatWaves'
//! rules (tests/it/common/events.rs), on generated series with planted events: at the first and last
//! day of the series, gaps of exactly 2 and 3 days, short runs, missing days, events across
//! the new year, all-missing cells, land, and thresholds below the mean.

use crate::common::events::{ar1, block_average, close, detect as reference, seasonal, RefEvent, Rng};
use sstclim::calendar::Calendar;
use sstclim::events::summary::{block_average as sst_block, STATS};
use sstclim::events::{detect_cell, CellClim, Days, Event, Params, Scratch};

fn days() -> Days {
    Days::of_years(1990..=1993, Calendar::Hobday366)
}

/// The climatology per day of the series.
fn per_day(days: &Days, v: &[f64]) -> Vec<f64> {
    days.doy_index.iter().map(|&d| v[usize::from(d)]).collect()
}

fn ours(temp: &[f64], days: &Days, mean: &[f64], thresh: &[f64], params: &Params) -> Vec<Event> {
    let mut out = Vec::new();
    detect_cell(temp, days, CellClim { mean, thresh }, params, &mut Scratch::default(), &mut out);
    out
}

fn assert_same(what: &str, got: &[Event], want: &[RefEvent]) {
    assert_eq!(got.len(), want.len(), "{what}: {} events, the reference {}", got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!((g.index_start, g.index_end, g.index_peak), (w.start, w.end, w.peak), "{what} event {k}");
        assert_eq!(g.duration, w.duration, "{what} event {k}");
        let gd = [g.duration_moderate, g.duration_strong, g.duration_severe, g.duration_extreme];
        assert_eq!(gd, w.durations, "{what} event {k} durations");
        assert_eq!(g.category, w.category, "{what} event {k} category");
        for (i, (a, b)) in g.floats().iter().zip(w.floats.iter()).enumerate() {
            assert!(close(*a, *b), "{what} event {k} {}: {a} vs {b}", sstclim::events::metrics::FLOAT_FIELDS[i]);
        }
    }
}

fn check_summary(what: &str, got: &[Event], want: &[RefEvent], days: &Days) {
    let ny = days.n_years;
    let mut ours = vec![0.0; STATS.len() * ny];
    sst_block(got, days, &mut ours);
    let years: Vec<usize> = days.year_index.iter().map(|&y| usize::from(y)).collect();
    let theirs = block_average(want, &years, ny);
    for (s, name) in STATS.iter().enumerate() {
        for y in 0..ny {
            let (a, b) = (ours[s * ny + y], theirs[s][y]);
            assert!(close(a, b), "{what}: {name} of year {y}: {a} vs {b}");
        }
    }
}

/// A quiet series (well below the threshold) with runs of `amount` above it at `runs`.
fn planted(days: &Days, mean: &[f64], thresh: &[f64], runs: &[(usize, usize, f64)]) -> Vec<f64> {
    let m = per_day(days, mean);
    let t = per_day(days, thresh);
    let mut temp: Vec<f64> = m.iter().map(|x| x - 0.3).collect();
    for &(s, len, amount) in runs {
        for i in s..s + len {
            // a bump, so that peaks are inside the runs, not at their edges
            let k = (i - s) as f64;
            temp[i] = t[i] + amount * (1.0 + 0.2 * k - 0.01 * k * k);
        }
    }
    temp
}

#[test]
fn planted_events_equal_the_reference_field_by_field() {
    let days = days();
    let n = days.len();
    let (mean, thresh) = seasonal(15.0, 1.5);
    let runs = [
        (0, 7, 0.8),   // at the first day
        (100, 5, 0.5), // joined to the next across a gap of exactly 2
        (107, 6, 2.0),
        (200, 5, 0.4), // not joined: a gap of exactly 3
        (208, 5, 0.4),
        (300, 4, 3.0),  // too short: dropped before joining ...
        (306, 5, 0.6),  // ... so this one stands alone
        (360, 12, 5.0), // across the new year, strong to extreme
        (500, 5, 0.1),
        (n - 6, 6, 1.0), // at the last day
    ];
    let mut temp = planted(&days, &mean, &thresh, &runs);
    // the peak on the very last day (marineHeatWaves' decline rate is NaN there)
    temp[n - 1] = temp[n - 2] + 3.0;
    // three missing days inside a run break it (missing days take the mean)
    let th = per_day(&days, &thresh);
    for (t, h) in temp[700..714].iter_mut().zip(&th[700..714]) {
        *t = h + 0.7;
    }
    temp[705..708].fill(f64::NAN);
    let params = Params::default();
    let got = ours(&temp, &days, &mean, &thresh, &params);
    let want = reference(&temp, &per_day(&days, &mean), &per_day(&days, &thresh), 5, Some(2), false);
    assert_same("planted", &got, &want);
    check_summary("planted", &got, &want, &days);
    // the planted structure, stated: first day, joined pair, the 3-day gap kept, the short
    // run dropped, the new-year event, the broken run (5 + 6 days), the last day
    let spans: Vec<(usize, usize)> = got.iter().map(|e| (e.index_start, e.index_end)).collect();
    assert_eq!(
        spans,
        vec![
            (0, 6),
            (100, 112),
            (200, 204),
            (208, 212),
            (306, 310),
            (360, 371),
            (500, 504),
            (700, 704),
            (708, 713),
            (n - 6, n - 1)
        ]
    );
    assert!(got[0].rate_onset.is_finite() && got.last().unwrap().rate_decline.is_nan());
    assert!(got[5].category >= 3, "{:?}", got[5]);
}

#[test]
fn random_cells_heat_and_cold_equal_the_reference() {
    let days = days();
    let mut rng = Rng(0x5eed);
    let (mut joined, mut total) = (0, 0);
    for cell in 0..40 {
        let width = if cell % 5 == 4 { -0.4 } else { 0.8 + 0.05 * cell as f64 };
        let (mean, thresh) = seasonal(10.0 + cell as f64 * 0.1, width);
        let mut temp = ar1(&mut rng, &per_day(&days, &mean), 0.85, 0.7 + 0.02 * cell as f64);
        for t in temp.iter_mut() {
            if rng.uniform() < 0.03 {
                *t = f64::NAN;
            }
        }
        for cold in [false, true] {
            // cold spells: the low threshold mirrors the high one
            let thr: Vec<f64> =
                if cold { mean.iter().zip(&thresh).map(|(m, t)| 2.0 * m - t).collect() } else { thresh.clone() };
            for (min_duration, max_gap) in [(5, Some(2)), (3, Some(0)), (5, None)] {
                let params = Params { min_duration, max_gap, cold };
                let got = ours(&temp, &days, &mean, &thr, &params);
                let want = reference(&temp, &per_day(&days, &mean), &per_day(&days, &thr), min_duration, max_gap, cold);
                let what = format!("cell {cell} cold {cold} min {min_duration} gap {max_gap:?}");
                assert_same(&what, &got, &want);
                total += got.len();
                joined += got.iter().filter(|e| e.index_end - e.index_start + 1 > 2 * min_duration).count();
                check_summary(&what, &got, &want, &days);
                if cold && width > 0.0 {
                    assert!(got.iter().all(|e| e.intensity_max < 0.0 && e.intensity_var >= 0.0), "{what}");
                }
            }
        }
    }
    // the series are eventful enough to test something
    assert!(total > 1000 && joined > 100, "{total} events, {joined} long");
}

#[test]
fn threshold_below_the_mean_gives_category_none_not_extreme() {
    let days = days();
    // Arctic-like: the threshold 0.2 below the mean, so the series at the mean exceeds it
    let (mean, thresh) = seasonal(-1.0, -0.2);
    let temp = per_day(&days, &mean);
    let got = ours(&temp, &days, &mean, &thresh, &Params::default());
    let want = reference(&temp, &per_day(&days, &mean), &per_day(&days, &thresh), 5, Some(2), false);
    assert_same("below", &got, &want);
    // the whole series is one event with no defined category and no category days
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].index_start, got[0].index_end), (0, days.len() - 1));
    assert_eq!(got[0].category, 0);
    assert_eq!(got[0].duration_moderate + got[0].duration_strong + got[0].duration_severe + got[0].duration_extreme, 0);
}

#[test]
fn all_missing_and_land_cells_have_no_events() {
    let days = days();
    let (mean, thresh) = seasonal(15.0, 1.0);
    let temp = vec![f64::NAN; days.len()];
    let got = ours(&temp, &days, &mean, &thresh, &Params::default());
    assert!(got.is_empty());
    let mut s = vec![0.0; STATS.len() * days.n_years];
    sst_block(&got, &days, &mut s);
    // blockAverage: count and totals 0, means NaN
    assert!(s[..days.n_years].iter().all(|&c| c == 0.0));
    assert!(s[days.n_years..2 * days.n_years].iter().all(|d| d.is_nan()));
    // land: no climatology
    let nan = vec![f64::NAN; 366];
    let temp = ar1(&mut Rng(3), &per_day(&days, &mean), 0.9, 2.0);
    assert!(ours(&temp, &days, &nan, &nan, &Params::default()).is_empty());
    assert!(!CellClim { mean: &nan, thresh: &nan }.has_values());
}
