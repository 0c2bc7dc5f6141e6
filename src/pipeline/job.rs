//! The job as the pipeline takes it: the input files resolved to pool slots with the variable's
//! layout and grid, the grid cut into tiles within the memory budget, and what a run produced.
//!
//! Memory stays within `--max-mem`: the grid is cut into bands along the files' slowest
//! horizontal dimension (so each read is one contiguous hyperslab), as many cells per band as
//! the pool and results allow. A band costs one open of every input file.

use std::path::PathBuf;

use crate::discover::Inputs;
use crate::error::Error;
use crate::input::{Grid, Region, VarLayout};
use crate::report::timing::RunReport;
use crate::window::WindowPlan;

/// What a run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub report: RunReport,
    pub outputs: Vec<PathBuf>,
    /// The results, where the job kept them in memory (a library call).
    pub memory: Option<super::sink::ClimatologyResult>,
}

/// The resolved job: files, their layout and grid, and the window plan.
pub(crate) struct Job {
    pub inputs: Inputs,
    pub first: PathBuf,
    pub layout: VarLayout,
    pub grid: Grid,
    pub window: WindowPlan,
    /// The input file of each pool slot.
    pub files: Vec<PathBuf>,
    /// The time step within its file of each pool slot (0 for files of one step).
    pub steps: Vec<usize>,
}

/// Bands of the grid along the files' slowest horizontal dimension, each within `budget` bytes
/// at `per_cell` bytes per cell.
pub(crate) fn plan_tiles(layout: &VarLayout, per_cell: u64, budget: u64) -> Result<Vec<Region>, Error> {
    let (nlat, nlon) = (layout.nlat(), layout.nlon());
    let (along, across, unit) =
        if layout.lat_is_slow() { (nlat, nlon, "latitude row") } else { (nlon, nlat, "longitude column") };
    let per_line = per_cell * across as u64;
    let lines = (budget / per_line.max(1)) as usize;
    if lines == 0 {
        return Err(Error::Memory { budget, need: per_line, unit });
    }
    let n_tiles = along.div_ceil(lines);
    let lines = along.div_ceil(n_tiles); // balanced bands
    Ok((0..along)
        .step_by(lines)
        .map(|start| {
            let band = start..(start + lines).min(along);
            if layout.lat_is_slow() {
                Region { rows: band, cols: 0..nlon }
            } else {
                Region { rows: 0..nlat, cols: band }
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Packing, Storage, VarMeta};

    fn layout(lat_first: bool, nlat: usize, nlon: usize) -> VarLayout {
        let dims = if lat_first {
            vec![("lat".to_string(), nlat), ("lon".to_string(), nlon)]
        } else {
            vec![("lon".to_string(), nlon), ("lat".to_string(), nlat)]
        };
        VarLayout {
            name: "sst".into(),
            storage: Storage::F64,
            lat_axis: usize::from(!lat_first),
            lon_axis: usize::from(lat_first),
            time_axis: None,
            dims,
            packing: Packing::none(),
            meta: VarMeta::default(),
        }
    }

    #[test]
    fn tiles_are_balanced_bands_along_the_slow_dimension() {
        // 10 rows of 100 cells at 10 bytes: 1000 bytes a row
        let t = plan_tiles(&layout(true, 10, 100), 10, 4000).unwrap();
        assert_eq!(t.iter().map(|r| r.rows.clone()).collect::<Vec<_>>(), [0..4, 4..8, 8..10]);
        assert!(t.iter().all(|r| r.cols == (0..100)));
        let t = plan_tiles(&layout(false, 10, 100), 10, 10 * 10 * 50).unwrap();
        assert_eq!(t.iter().map(|r| r.cols.clone()).collect::<Vec<_>>(), [0..50, 50..100]);
        let t = plan_tiles(&layout(true, 10, 100), 10, 1 << 30).unwrap();
        assert_eq!(t, [Region { rows: 0..10, cols: 0..100 }]);
        assert!(matches!(plan_tiles(&layout(true, 10, 100), 10, 999), Err(Error::Memory { .. })));
    }
}
