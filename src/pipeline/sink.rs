//! Where a tile's results go: the output files (`crate::output::OutputSet`), or arrays in
//! memory that a library caller takes ([`MemoryResults`]). The writer thread hands both the same
//! rows (after Feb 29 filling and smoothing), so the values in memory are those the files hold.

use std::path::PathBuf;

use crate::calendar::Calendar;
use crate::input::Region;
use crate::output::{OutputError, OutputMeta, OutputSet, OutputSpec};
use crate::stats::TileResult;
use crate::util::cftime::CfCalendar;

/// A climatology in memory: `values[stat][day][cell]` (NaN where a cell has no value), the
/// statistics named as the outputs name them (`mean`, `p90`, ...), the days of year in order,
/// cells in `[lat][lon]` order; the calendar of its days and the input's CF calendar.
#[derive(Clone, Debug)]
pub struct ClimatologyResult {
    pub names: Vec<String>,
    pub doys: Vec<u16>,
    pub nlat: usize,
    pub nlon: usize,
    pub values: Vec<f64>,
    pub calendar: crate::calendar::Calendar,
    pub cf: crate::util::cftime::CfCalendar,
}

impl ClimatologyResult {
    /// Statistic `name`'s values of day `doy`, one per cell.
    pub fn day(&self, name: &str, doy: u16) -> Option<&[f64]> {
        let s = self.names.iter().position(|n| n == name)?;
        let d = self.doys.iter().position(|&x| x == doy)?;
        let n = self.nlat * self.nlon;
        let at = (s * self.doys.len() + d) * n;
        Some(&self.values[at..at + n])
    }

    /// Statistic `name` of every day for latitude rows `rows`: `[day][cell of the rows]`, the
    /// layout the events job reads a climatology file in.
    pub fn rows(&self, name: &str, rows: std::ops::Range<usize>) -> Option<Vec<f64>> {
        let s = self.names.iter().position(|n| n == name)?;
        let n = self.nlat * self.nlon;
        let band = rows.start * self.nlon..rows.end * self.nlon;
        let mut out = Vec::with_capacity(self.doys.len() * band.len());
        for d in 0..self.doys.len() {
            let at = (s * self.doys.len() + d) * n;
            out.extend_from_slice(&self.values[at + band.start..at + band.end]);
        }
        Some(out)
    }
}

pub(crate) enum Sink {
    Files(OutputSet),
    Memory(ClimatologyResult),
}

impl Sink {
    /// Arrays for statistics `names` of `doys` over a grid of `nlat` x `nlon`.
    pub fn memory(names: Vec<String>, doys: Vec<u16>, grid: (usize, usize), calendars: (Calendar, CfCalendar)) -> Sink {
        let (nlat, nlon) = grid;
        let values = vec![f64::NAN; names.len() * doys.len() * nlat * nlon];
        let (calendar, cf) = calendars;
        Sink::Memory(ClimatologyResult { names, values, doys, nlat, nlon, calendar, cf })
    }

    /// Make the files (nothing to make in memory); `forked_ok`: processes made them already.
    pub fn create(&mut self, forked_ok: bool, spec: &OutputSpec, meta: &OutputMeta) -> Result<(), OutputError> {
        match self {
            Sink::Files(f) => {
                if forked_ok {
                    f.mark_created();
                }
                f.create_files(spec, meta)
            }
            Sink::Memory(_) => Ok(()),
        }
    }

    /// Results of targets `targets` (indices into the written days) of the cells of `region`.
    pub fn write_targets(
        &mut self,
        region: &Region,
        targets: std::ops::Range<usize>,
        result: &TileResult,
    ) -> Result<(), OutputError> {
        let m = match self {
            Sink::Files(f) => return f.write_targets(region, targets, result),
            Sink::Memory(m) => m,
        };
        let (n_days, n_cells, width) = (m.doys.len(), m.nlat * m.nlon, region.cols.len());
        for stat in 0..result.n_stats {
            for (i, t) in targets.clone().enumerate() {
                let row = result.row(stat, i);
                let day = &mut m.values[(stat * n_days + t) * n_cells..][..n_cells];
                for (r, lat) in region.rows.clone().enumerate() {
                    let at = lat * m.nlon + region.cols.start;
                    day[at..at + width].copy_from_slice(&row[r * width..(r + 1) * width]);
                }
            }
        }
        Ok(())
    }

    pub fn sync(&mut self) -> Result<(), OutputError> {
        match self {
            Sink::Files(f) => f.sync(),
            Sink::Memory(_) => Ok(()),
        }
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            Sink::Files(f) => f.paths(),
            Sink::Memory(_) => Vec::new(),
        }
    }
}
