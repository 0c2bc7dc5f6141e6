//! Cutting the grid into bands of latitude rows whose series, climatology, summaries and
//! events fit the memory budget: a cell's whole analysis series is needed at once, so the
//! grid is cut by cells (each band costs one read of every input file), never by days.

use std::ops::Range;

/// Bytes one cell of a band needs, for `kinds` kinds of event searched at once: its series
/// (`value_bytes` a day: 8 for float64, 4 for float32 files, 2 for int16 files kept as stored),
/// its climatology (the mean and a threshold per kind, float64), its summaries per kind
/// (float32, every statistic and year, and their float64 values before) and room for its
/// events per kind (a generous 3 a year, about 160 bytes each as columns).
pub fn bytes_per_cell(n_days: usize, value_bytes: usize, n_doy: usize, n_years: usize, kinds: usize) -> u64 {
    let series = value_bytes * n_days;
    let clim = (1 + kinds) * 8 * n_doy;
    let summary = kinds * (4 + 8) * super::summary::STATS.len() * n_years;
    let events = kinds * 3 * n_years * 160;
    (series + clim + summary + events) as u64
}

/// Bands of whole latitude rows of `nlon` cells, each within `budget` bytes at `per_cell`
/// bytes a cell; `None` when not even one row fits.
pub fn plan_bands(nlat: usize, nlon: usize, per_cell: u64, budget: u64) -> Option<Vec<Range<usize>>> {
    let per_row = per_cell * nlon.max(1) as u64;
    let rows = (budget / per_row.max(1)) as usize;
    if rows == 0 {
        return None;
    }
    let rows = rows.min(nlat.max(1));
    // bands of nearly equal size
    let n = nlat.div_ceil(rows).max(1);
    let size = nlat.div_ceil(n);
    Some((0..n).map(|b| b * size..((b + 1) * size).min(nlat)).filter(|r| !r.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_rows_within_the_budget() {
        for (nlat, budget_rows) in [(181, 1), (181, 50), (181, 181), (181, 1000), (7, 3)] {
            let bands = plan_bands(nlat, 10, 100, budget_rows * 10 * 100).unwrap();
            assert_eq!(bands[0].start, 0);
            assert_eq!(bands.last().unwrap().end, nlat);
            for w in bands.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
            assert!(bands.iter().all(|b| b.len() as u64 <= budget_rows), "{bands:?}");
        }
        assert_eq!(plan_bands(181, 10, 100, 999), None);
    }
}
