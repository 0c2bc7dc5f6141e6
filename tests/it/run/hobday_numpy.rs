//! sstclim's Hobday climatology against marineHeatWaves itself: numpy running its rules
//! (`tests/python/hobday_oracle.py`, kept beside this test; its output is the committed
//! fixture `tests/fixtures/hobday_numpy.json`) on a series this test writes as NetCDF files from
//! the same integer formula (a gappy cell, an all-missing one, a mostly-missing one).
//!
//! The days marineHeatWaves computes differently from sstclim's documented order agree within
//! a bound, not bit for bit: numpy's `nanmean` sums pairwise, `nanpercentile` finds the
//! position `(n - 1) * 0.9` in floating point (sstclim: exactly), and `np.convolve` hands
//! `runavg`'s dot products to BLAS (OpenBLAS sums 16 terms in vector lanes with fused
//! multiply-adds). Each is a few rounding errors of values near 30 (seen: at most 2.2e-14, 6
//! ulps; 89 % of the unsmoothed values and 49 % of the smoothed ones are bitwise equal), so the
//! bound is 1e-13 (28 ulps at 30); `tests/it/run/hobday.rs` holds sstclim to those rules bit for bit.

use std::path::Path;

use crate::common::*;

const FIXTURE: &str = include_str!("../../fixtures/hobday_numpy.json");

fn leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// `value(t, c)` of hobday_oracle.py: the same integers, one division.
fn value(t: i64, c: i64) -> f64 {
    if c == 1 || (c == 0 && (t * 31 + 17) % 13 == 0) || (c == 2 && (t * 7 + 3) % 5 != 0) {
        return f64::NAN;
    }
    let o = t % 365;
    let season = ((o * 2) % 366 - 183).abs();
    (1500 + 8 * season + (t * 7919 + c * 104729) % 613) as f64 / 100.0
}

/// The series 1982-1985 as one file per day, `sst(lat, lon)` on a 1 x 3 grid.
fn write_series(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut t = 0i64;
    for year in 1982..=1985 {
        for ordinal in 1..=(if leap(year) { 366 } else { 365 }) {
            let path = dir.join(format!("sst_{year}_{ordinal:03}.nc"));
            let mut f = netcdf::create(&path).unwrap();
            f.add_dimension("lat", 1).unwrap();
            f.add_dimension("lon", 3).unwrap();
            let mut lat = f.add_variable::<f64>("lat", &["lat"]).unwrap();
            lat.put_attribute("units", "degrees_north").unwrap();
            lat.put_values(&[10.0], ..).unwrap();
            let mut lon = f.add_variable::<f64>("lon", &["lon"]).unwrap();
            lon.put_attribute("units", "degrees_east").unwrap();
            lon.put_values(&[100.0, 101.0, 102.0], ..).unwrap();
            let mut v = f.add_variable::<f64>("sst", &["lat", "lon"]).unwrap();
            v.set_fill_value(f64::NAN).unwrap();
            let values: Vec<f64> = (0..3).map(|c| value(t, c)).collect();
            v.put_values(&values, ..).unwrap();
            f.close().unwrap();
            t += 1;
        }
    }
}

#[test]
fn marine_heat_waves_rules_within_1e_13() {
    let fixture: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    let dir = tmp();
    let input = dir.path().join("in");
    write_series(&input);
    for width in [1, 31] {
        let out = dir.path().join(format!("w{width}"));
        let ws = width.to_string();
        let flags = [
            "--calendar",
            "hobday366",
            "--method",
            "7",
            "--percentile",
            "10,90",
            "--window-edges",
            "extend",
            "--feb29",
            "interpolate",
            "--smooth",
            &ws,
            "--layout",
            "climatology",
        ];
        ok(&with(run_args(&input.join("sst_{year}_{doy}.nc"), &out, "1983-1984", "1-366"), &flags));
        let (mut worst, mut bitwise, mut compared) = (0.0f64, 0, 0);
        for stat in ["mean", "p10", "p90"] {
            let (got, dims) = read(&out.join("climatology.nc"), &format!("sst_{stat}"));
            assert_eq!(dims.iter().map(|d| d.1).collect::<Vec<_>>(), [366, 1, 3]);
            let want = &fixture["runs"][format!("smooth{width}")][stat];
            for c in 0..3 {
                for d in 0..366 {
                    let g = got[d * 3 + c];
                    match want[c][d].as_f64() {
                        None => assert!(g > 1e30, "W={width} {stat} cell {c} day {}: {g}, numpy has none", d + 1),
                        Some(e) => {
                            let diff = (g - e).abs();
                            assert!(diff <= 1e-13, "W={width} {stat} cell {c} day {}: {g} vs numpy {e}", d + 1);
                            worst = worst.max(diff);
                            bitwise += usize::from(g.to_bits() == e.to_bits());
                            compared += 1;
                        }
                    }
                }
            }
        }
        // two cells of values; the all-missing one has none
        assert_eq!(compared, 3 * 2 * 366, "W={width}");
        eprintln!("W={width}: {bitwise} of {compared} values equal numpy's bit for bit; largest difference {worst:e}");
    }
}
