//! Cutting the grid into bands of latitude rows whose series, climatology, summaries and
//! events fit the memory budget: a cell's whole analysis series is needed at once, so the
//! grid is cut by cells (each band costs one read of every input file), never by days. Every
//! band's events stay in memory until the job ends (events.nc is written at once), and two
//! bands are held at once (the next one read while one is detected).

use std::ops::Range;

/// Events a year and kind the plan reserves room for, for every cell of the job: the bound
/// the budget assumes (the events found stay in memory until the job ends, and their number
/// is known only then). Hobday et al.'s global means are 1-3 heatwaves a year (fewer cold
/// spells), over all the sea; a job whose events exceed it uses more than `--max-mem` by the
/// excess (about 150 bytes an event).
pub const EVENTS_PER_YEAR: usize = 2;

/// Bytes of one event held as columns ([`super::columns::EventColumns`]): its cell (8), the
/// integer fields (4 each), the float fields (8 each) and its category (1).
pub const EVENT_BYTES: usize = 8 + 4 * super::columns::N_INTS + 8 * super::metrics::FLOAT_FIELDS.len() + 1;

/// What one cell costs, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellCost {
    /// Held while its band is read and detected: its series, its climatology rows and its
    /// band's summaries.
    pub band: u64,
    /// Kept until the job ends: its events ([`EVENTS_PER_YEAR`]).
    pub kept: u64,
}

/// What one cell costs for `kinds` kinds of event searched at once: its series (`value_bytes`
/// a day: 8 for float64, 4 for float32 files, 2 for int16 files kept as stored), its
/// climatology rows (the mean and a threshold per kind, float64, `n_doy` days), its summaries
/// per kind (float32, every statistic and year: the float64 values before them are a chunk's,
/// not the band's), and its events per kind.
pub fn cell_cost(n_days: usize, value_bytes: usize, n_doy: usize, n_years: usize, kinds: usize) -> CellCost {
    let series = value_bytes * n_days;
    let clim = (1 + kinds) * 8 * n_doy;
    let summary = kinds * 4 * super::summary::STATS.len() * n_years;
    let events = kinds * EVENTS_PER_YEAR * n_years * EVENT_BYTES;
    CellCost { band: (series + clim + summary) as u64, kept: events as u64 }
}

/// Bands of whole latitude rows of `nlon` cells, at least `min_bands` of them (where there are
/// rows enough), such that `pools` bands at once (2 when the next band is read while one is
/// detected) and every cell's kept events fit `budget`; `None` when not even one row fits.
pub fn plan_bands(nlat: usize, nlon: usize, cost: CellCost, budget: u64, pools: usize, min_bands: usize) -> Option<Vec<Range<usize>>> {
    let kept = cost.kept * (nlat * nlon.max(1)) as u64;
    let per_row = cost.band * nlon.max(1) as u64 * pools.max(1) as u64;
    let rows = (budget.checked_sub(kept)? / per_row.max(1)) as usize;
    if rows == 0 {
        return None;
    }
    let rows = rows.min(nlat.max(1));
    // n bands of nearly equal size (at most one row apart, none over `rows`)
    let n = nlat.div_ceil(rows).max(min_bands.min(nlat)).max(1);
    Some((0..n).map(|b| b * nlat / n..(b + 1) * nlat / n).filter(|r| !r.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_rows_within_the_budget() {
        for (nlat, budget_rows) in [(181, 1), (181, 50), (181, 181), (181, 1000), (7, 3)] {
            let cost = CellCost { band: 100, kept: 0 };
            let bands = plan_bands(nlat, 10, cost, budget_rows * 10 * 100, 1, 1).unwrap();
            assert_eq!(bands[0].start, 0);
            assert_eq!(bands.last().unwrap().end, nlat);
            for w in bands.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
            assert!(bands.iter().all(|b| b.len() as u64 <= budget_rows), "{bands:?}");
        }
        assert_eq!(plan_bands(181, 10, CellCost { band: 100, kept: 0 }, 999, 1, 1), None);
        // at least the bands asked for, where there are rows enough
        let cost = CellCost { band: 100, kept: 0 };
        assert_eq!(plan_bands(9, 10, cost, 1 << 30, 2, 4).unwrap(), [0..2, 2..4, 4..6, 6..9]);
        assert_eq!(plan_bands(3, 10, cost, 1 << 30, 2, 4).unwrap(), [0..1, 1..2, 2..3]);
    }

    /// A global 41-year int16 job of both kinds (1440x721 cells, 14,975 days, 1982-2022)
    /// under the default `--max-mem` of a 125 GB node (half the memory available: 60 GB):
    /// read once, in the fewest bands that overlap reading with detection (two bands' series at
    /// once), with every event kept.
    #[test]
    fn a_global_job_is_read_once_on_a_large_node() {
        let cost = cell_cost(14_975, 2, 366, 41, 2);
        // the series 29,950 bytes, the climatology 3 x 366 float64, the summaries 2 x 19 x 41
        // float32; 2 events a year of each kind kept
        assert_eq!(cost.band, 29_950 + 8_784 + 6_232);
        assert_eq!(cost.kept, 2 * 2 * 41 * 153);
        let budget = 60_000_000_000;
        let bands = plan_bands(721, 1440, cost, budget, 2, 4).unwrap();
        assert_eq!(bands.len(), 4, "{bands:?}");
        let biggest = bands.iter().map(|b| b.len()).max().unwrap() as u64;
        assert!(2 * biggest * 1440 * cost.band + 721 * 1440 * cost.kept <= budget);
        // less memory: more bands, each still read once
        let bands = plan_bands(721, 1440, cost, 40_000_000_000, 2, 4).unwrap();
        assert_eq!(bands.len(), 7, "{bands:?}");
        // events alone beyond the budget: nothing fits
        assert_eq!(plan_bands(721, 1440, cost, 721 * 1440 * cost.kept, 2, 4), None);
    }
}
