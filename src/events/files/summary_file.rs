//! Writing `summary.nc` (blockAverage's statistics per year and cell, CF-1.8) band by band
//! into the staging path the job chooses: through libnetcdf, with `pwrite` on contiguous
//! storage (the direct path), or compressed by the project's chunk coder ([`super::store`]).

use std::path::{Path, PathBuf};

use super::schema::{fail, Meta};
use super::store;
use crate::calendar::{days_since_1970_in, Date};
use crate::events::summary::{stat_units, STATS};
use crate::events::EventsError;
use crate::input::Grid;
use crate::nc::chunked::{ChunkPlan, Partial};
use crate::nc::encode::OutputType;

/// `summary.nc`, being written.
pub struct SummaryFile {
    path: PathBuf,
    /// The file open in libnetcdf, or (the direct path) closed, with every statistic's byte
    /// offset: its storage is contiguous and allocated, and bands are written with `pwrite`
    /// from every thread.
    file: Option<netcdf::FileMut>,
    offsets: Vec<u64>,
    /// Compressed (`--deflate`): closed like the direct path, written in chunks coded here;
    /// chunks that a band covers only partly wait in `partial` for the next band's rows.
    chunked: Option<(ChunkPlan, Partial)>,
    n_years: usize,
    nlat: usize,
    nlon: usize,
}

impl SummaryFile {
    /// Create `path`. `direct`: store every statistic contiguous and unfilled (every value is
    /// written before the file is published) and write bands with `pwrite` from every thread
    /// where HDF5 confirms the layout (else through libnetcdf, like `direct = false`).
    pub fn create(path: &Path, meta: &Meta, grid: &Grid, direct: bool) -> Result<SummaryFile, EventsError> {
        let mut file = netcdf::create(path).map_err(fail(path, ""))?;
        let (y0, y1) = meta.years;
        let ny = (y1 - y0 + 1) as usize;
        for (name, len) in [("time", ny), ("nv", 2)] {
            file.add_dimension(name, len).map_err(fail(path, name))?;
        }
        meta.globals(
            &mut file,
            path,
            format!("{} of {} per year ({y0}-{y1}): blockAverage statistics", meta.kind(), meta.input_var),
        )?;
        define_years(&mut file, path, meta)?;
        let plan = meta.store.summary_plan(grid.nlat(), grid.nlon());
        define_stats(&mut file, path, meta, grid, plan.as_ref(), direct)?;
        let (nlat, nlon) = (grid.nlat(), grid.nlon());
        let mut summary = SummaryFile {
            path: path.into(),
            file: Some(file),
            offsets: Vec::new(),
            chunked: None,
            n_years: ny,
            nlat,
            nlon,
        };
        if let Some(plan) = plan {
            summary.file.take().expect("open").close().map_err(fail(path, ""))?;
            match store::locate(path, [ny, nlat, nlon], &plan) {
                Ok(()) => summary.chunked = Some((plan, Partial::default())),
                Err(why) => {
                    tracing::info!("{}: compressed through libnetcdf: {why}", path.display());
                    summary.file = Some(netcdf::append(path).map_err(fail(path, ""))?);
                }
            }
        } else if direct {
            summary.file.take().expect("open").close().map_err(fail(path, ""))?;
            let located: Result<Vec<u64>, _> = STATS
                .iter()
                .map(|stat| crate::nc::direct::locate(path, stat, [ny, nlat, nlon], OutputType::F32))
                .collect();
            match located {
                Ok(offsets) => summary.offsets = offsets,
                Err(why) => {
                    tracing::info!("{}: written through libnetcdf: {why}", path.display());
                    summary.file = Some(netcdf::append(path).map_err(fail(path, ""))?);
                }
            }
        }
        Ok(summary)
    }

    /// Write latitude rows `rows`: `values[stat][year][cell of the band]`.
    pub fn write_band(&mut self, rows: std::ops::Range<usize>, values: &[f32]) -> Result<(), EventsError> {
        let per_stat = self.n_years * rows.len() * self.nlon;
        if let Some((plan, partial)) = self.chunked.as_mut() {
            let shape = (self.nlat, self.nlon, self.n_years);
            let threads = rayon::current_num_threads();
            return store::write_rows(&self.path, *plan, shape, rows, values, threads, partial);
        }
        let Some(file) = self.file.as_mut() else {
            return self.pwrite_band(rows, values);
        };
        for (k, stat) in STATS.iter().enumerate() {
            let mut v = file.variable_mut(stat).expect("created");
            v.put_values(&values[k * per_stat..(k + 1) * per_stat], [0..self.n_years, rows.clone(), 0..self.nlon])
                .map_err(fail(&self.path, stat))?;
        }
        Ok(())
    }

    /// [`SummaryFile::write_band`] on the direct path: one `pwrite` per statistic and year (the
    /// band's rows are contiguous in each), from the calling rayon pool's threads.
    fn pwrite_band(&self, rows: std::ops::Range<usize>, values: &[f32]) -> Result<(), EventsError> {
        use rayon::prelude::*;
        use std::os::unix::fs::FileExt;
        let io = |var: &str| {
            let (path, var) = (self.path.clone(), var.to_string());
            move |cause| EventsError::WriteIo { path, var, cause }
        };
        let file = std::fs::OpenOptions::new().write(true).open(&self.path).map_err(io(""))?;
        let per_year = rows.len() * self.nlon;
        let n = STATS.len() * self.n_years;
        (0..n).into_par_iter().try_for_each_init(Vec::new, |buf: &mut Vec<u8>, i| {
            let (k, year) = (i / self.n_years, i % self.n_years);
            buf.clear();
            buf.extend(values[i * per_year..(i + 1) * per_year].iter().flat_map(|v| v.to_le_bytes()));
            let at = self.offsets[k] + (((year * self.nlat + rows.start) * self.nlon) * 4) as u64;
            file.write_all_at(buf, at).map_err(io(STATS[k]))
        })
    }

    /// Copy latitude rows `rows` of every statistic from `part` (a summary file of the same
    /// job that wrote those rows, e.g. another MPI rank's).
    pub fn copy_rows(&mut self, part: &Path, rows: std::ops::Range<usize>) -> Result<(), EventsError> {
        let src = netcdf::open(part).map_err(|cause| EventsError::Open { path: part.into(), cause })?;
        // the direct path writes every statistic's rows at once: `[stat][year][cell]`
        let mut all: Vec<f32> = Vec::new();
        for stat in STATS {
            let read = |cause| EventsError::Read { path: part.into(), var: stat.into(), cause };
            let v = src.variable(stat).ok_or_else(|| EventsError::BadVariable {
                path: part.into(),
                var: stat.into(),
                detail: "missing from the part".into(),
            })?;
            let extents = [0..self.n_years, rows.clone(), 0..self.nlon];
            let vals: Vec<f32> = v.get_values(extents.clone()).map_err(read)?;
            match self.file.as_mut() {
                Some(file) => {
                    let mut w = file.variable_mut(stat).expect("created");
                    w.put_values(&vals, extents).map_err(fail(&self.path, stat))?;
                }
                None => all.extend_from_slice(&vals),
            }
        }
        if self.file.is_none() {
            self.write_band(rows, &all)?;
        }
        Ok(())
    }

    pub fn finish(self) -> Result<(), EventsError> {
        match self.file {
            Some(file) => file.close().map_err(fail(&self.path, "")),
            None => Ok(()),
        }
    }
}

/// The time axis of `summary.nc`: one step per year of the analysis (`time` the middle of the
/// year, `time_bnds` the year) in the input's calendar, and the `year` itself.
fn define_years(file: &mut netcdf::FileMut, path: &Path, meta: &Meta) -> Result<(), EventsError> {
    let (y0, y1) = meta.years;
    // the years of the input's calendar (360 days in `360_day`)
    let jan1 = |year: i32| days_since_1970_in(meta.calendar, Date { year, month: 1, day: 1 }) as f64;
    {
        let mut t = file.add_variable::<f64>("time", &["time"]).map_err(fail(path, "time"))?;
        for (k, v) in [
            ("standard_name", "time"),
            ("units", "days since 1970-01-01 00:00:00"),
            ("calendar", meta.calendar.cf_name()),
            ("bounds", "time_bnds"),
            ("long_name", "year of the events' start (middle of the year; bounds: the year)"),
        ] {
            t.put_attribute(k, v).map_err(fail(path, "time"))?;
        }
        let mid: Vec<f64> = (y0..=y1).map(|y| 0.5 * (jan1(y) + jan1(y + 1))).collect();
        t.put_values(&mid, ..).map_err(fail(path, "time"))?;
    }
    {
        let mut b = file.add_variable::<f64>("time_bnds", &["time", "nv"]).map_err(fail(path, "time_bnds"))?;
        let bounds: Vec<f64> = (y0..=y1).flat_map(|y| [jan1(y), jan1(y + 1)]).collect();
        b.put_values(&bounds, ..).map_err(fail(path, "time_bnds"))?;
    }
    {
        let mut v = file.add_variable::<i32>("year", &["time"]).map_err(fail(path, "year"))?;
        v.put_values(&(y0..=y1).collect::<Vec<i32>>(), ..).map_err(fail(path, "year"))?;
    }
    Ok(())
}

/// The statistics' variables of `summary.nc` on the input's grid (whose coordinates are put
/// here too), with their units and names: chunked by `plan` (`--deflate`), contiguous and
/// allocated without fill (`direct`), or filled with NaN.
fn define_stats(
    file: &mut netcdf::FileMut,
    path: &Path,
    meta: &Meta,
    grid: &Grid,
    plan: Option<&ChunkPlan>,
    direct: bool,
) -> Result<(), EventsError> {
    // the input's horizontal dimensions and coordinates (2-D ones and grid mapping too)
    let [lat_dim, lon_dim] = crate::nc::coords::put_grid(file, grid).map_err(|(var, cause)| fail(path, &var)(cause))?;
    let coordinates = crate::nc::coords::coordinates(grid, "");
    for stat in STATS {
        let mut v =
            file.add_variable::<f32>(stat, &["time", lat_dim.as_str(), lon_dim.as_str()]).map_err(fail(path, stat))?;
        if let Some(plan) = plan {
            store::define_chunked(&mut v, plan).map_err(fail(path, stat))?;
        } else if direct {
            // SAFETY: every value of the file is written (every band of rows, every
            // statistic and year) before it is published; nothing reads it before.
            unsafe { v.set_nofill() }.map_err(fail(path, stat))?;
            // `set_nofill` drops the attribute: put after it (CF readers mask with it)
            v.put_attribute("_FillValue", f32::NAN).map_err(fail(path, stat))?;
        } else {
            v.set_fill_value(f32::NAN).map_err(fail(path, stat))?;
        }
        v.put_attribute("units", stat_units(stat, &meta.units)).map_err(fail(path, stat))?;
        let what = match stat {
            "count" => "number of events starting in the year".to_string(),
            "total_days" => "days of events in the year".to_string(),
            "total_icum" => "sum of the events' cumulative intensity".to_string(),
            "intensity_max_max" => "largest intensity_max of the year's events (at least 0)".to_string(),
            s => format!("mean {s} of the events starting in the year"),
        };
        v.put_attribute("long_name", what).map_err(fail(path, stat))?;
        if !coordinates.is_empty() {
            v.put_attribute("coordinates", coordinates.as_str()).map_err(fail(path, stat))?;
        }
        if let Some(mapping) = crate::nc::coords::grid_mapping(grid) {
            v.put_attribute("grid_mapping", mapping).map_err(fail(path, stat))?;
        }
        if direct && plan.is_none() {
            // allocates the whole contiguous storage (without filling it)
            v.put_value(f32::NAN, [0, 0, 0]).map_err(fail(path, stat))?;
        }
    }
    Ok(())
}
