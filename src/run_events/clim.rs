//! The climatology an events job detects against: a climatology file (`run --layout
//! climatology`, read by [`ClimFile`]) or one already in memory (a library caller's
//! [`ClimatologyResult`]). Both give a band's mean and threshold in the file's layout
//! `[doy][cell of the band]`, NaN where missing, so detection cannot tell them apart.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use super::EventsJobError;
use crate::calendar::{is_real, Calendar, CfCalendar};
use crate::input::climatology::{ClimFile, ClimatologyError};
use crate::input::Grid;
use crate::pipeline::sink::ClimatologyResult;

/// One kind of event's climatology: the mean and its threshold statistic.
pub(crate) enum Clim {
    File(ClimFile),
    /// `provenance`: what the outputs repeat of how it was made (`--baseline`'s; none for a
    /// library caller's).
    Memory { values: Arc<ClimatologyResult>, thresh: String, provenance: Vec<(String, String)> },
}

impl Clim {
    /// `values`' mean and statistic `stat` for a job over `grid` in `calendar` (input in `cf`),
    /// checked as a climatology file is: every day of the year in order, the same grid and
    /// calendars; `provenance` as [`Clim::Memory`] has it.
    pub fn memory(
        values: &Arc<ClimatologyResult>,
        provenance: &[(String, String)],
        grid: &Grid,
        calendar: Calendar,
        cf: CfCalendar,
        stat: &str,
    ) -> Result<Clim, EventsJobError> {
        let path = PathBuf::from("memory:climatology");
        let bad = |detail: String| ClimatologyError::BadVariable { path: path.clone(), var: stat.into(), detail };
        let mismatch = |what, detail| ClimatologyError::Mismatch { path: path.clone(), what, detail };
        if values.calendar != calendar {
            let detail = format!("computed in {}, the job asks for {}", values.calendar.name(), calendar.name());
            return Err(mismatch("calendar", detail).into());
        }
        if values.cf != cf {
            let detail = format!("of input in {}, this input is in {}", values.cf.cf_name(), cf.cf_name());
            return Err(mismatch("calendar", detail).into());
        }
        let year = if is_real(cf) { 366 } else { usize::from(cf.days_in_year(2001)) };
        if !values.doys.iter().copied().eq(1..=year as u16) {
            return Err(bad(format!("{} days of year; events need all {year} in order", values.doys.len())).into());
        }
        if (values.nlat, values.nlon) != (grid.nlat(), grid.nlon()) {
            let detail =
                format!("{}x{} cells, the input has {}x{}", values.nlon, values.nlat, grid.nlon(), grid.nlat());
            return Err(mismatch("grid", detail).into());
        }
        for name in ["mean", stat] {
            if !values.names.iter().any(|n| n == name) {
                return Err(bad(format!("no statistic {name} (it has {})", values.names.join(", "))).into());
            }
        }
        Ok(Clim::Memory { values: values.clone(), thresh: stat.into(), provenance: provenance.to_vec() })
    }

    /// Days of year the climatology holds.
    pub fn n_doy(&self) -> usize {
        match self {
            Clim::File(f) => f.n_doy,
            Clim::Memory { values, .. } => values.doys.len(),
        }
    }

    /// What the outputs repeat of where the climatology came from.
    pub fn provenance(&self) -> Vec<(String, String)> {
        match self {
            Clim::File(f) => f.provenance.clone(),
            Clim::Memory { provenance, .. } => provenance.clone(),
        }
    }

    /// The mean of latitude rows `rows` (all `nlon` longitudes), `[doy][cell of the band]`.
    pub fn mean_rows(&self, rows: Range<usize>, nlon: usize) -> Result<Vec<f64>, ClimatologyError> {
        match self {
            Clim::File(f) => f.read_rows(&f.mean_var, rows, nlon),
            Clim::Memory { values, .. } => Ok(values.rows("mean", rows).expect("checked when made")),
        }
    }

    /// The threshold of latitude rows `rows`, as [`Clim::mean_rows`].
    pub fn thresh_rows(&self, rows: Range<usize>, nlon: usize) -> Result<Vec<f64>, ClimatologyError> {
        match self {
            Clim::File(f) => f.read_rows(&f.thresh_var, rows, nlon),
            Clim::Memory { values, thresh, .. } => Ok(values.rows(thresh, rows).expect("checked when made")),
        }
    }
}
