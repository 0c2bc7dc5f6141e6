//! Writing `events.nc` through libnetcdf, appending band by band along an unlimited `event`
//! dimension: with several bands (or ranks) the count is known only band by band. A job of one
//! band writes the file through [`super::direct`] or [`super::compressed`] instead; all three
//! define it by [`super::schema`].

use std::path::{Path, PathBuf};

use super::schema::{define_events, fail, Meta, INT_FIELDS};
use crate::events::columns::{joined, EventColumns};
use crate::events::metrics::FLOAT_FIELDS;
use crate::events::{Days, EventsError};
use crate::input::Grid;

/// `events.nc`, being written.
pub struct EventsFile {
    path: PathBuf,
    file: netcdf::FileMut,
    written: usize,
    /// The float fields stored as float32.
    float32: bool,
}

impl EventsFile {
    pub fn create(path: &Path, meta: &Meta, grid: &Grid) -> Result<EventsFile, EventsError> {
        let file = define_events(path, meta, grid, None)?;
        Ok(EventsFile { path: path.into(), file, written: 0, float32: meta.store.float32 })
    }

    /// Append the events of `chunks` (columns, cell indices into the grid), in order.
    pub fn append(&mut self, chunks: &[EventColumns], grid: &Grid, days: &Days) -> Result<(), EventsError> {
        let n: usize = chunks.iter().map(|c| c.len()).sum();
        if n == 0 {
            return Ok(());
        }
        let r = self.written..self.written + n;
        let nlon = grid.nlon();
        let path = self.path.clone();
        let float32 = self.float32;
        let file = &mut self.file;
        let cells = joined(chunks, |c| &c.cell);
        let lat_index: Vec<i32> = cells.iter().map(|c| (c / nlon) as i32).collect();
        let lon_index: Vec<i32> = cells.iter().map(|c| (c % nlon) as i32).collect();
        drop(cells);
        let mut put_f = |name: &str, vals: Vec<f64>| {
            let mut v = file.variable_mut(name).expect("created");
            v.put_values(&vals, [r.clone()]).map_err(fail(&path, name))
        };
        // the cell's latitude and longitude (2-D on a curvilinear grid)
        let cell = |&r: &i32, &c: &i32| r as usize * nlon + c as usize;
        put_f("lat", lat_index.iter().zip(&lon_index).map(|(r, c)| grid.lat_at(cell(r, c))).collect())?;
        put_f("lon", lat_index.iter().zip(&lon_index).map(|(r, c)| grid.lon_at(cell(r, c))).collect())?;
        for (k, name) in FLOAT_FIELDS.iter().enumerate() {
            let vals = joined(chunks, |c| &c.floats[k]);
            if float32 {
                // rounded as the direct writer rounds them (the cast libnetcdf's conversion is)
                put_f(name, vals.iter().map(|&v| f64::from(v as f32)).collect())?;
            } else {
                put_f(name, vals)?;
            }
        }
        let mut put_i = |name: &str, vals: &[i32]| {
            let mut v = file.variable_mut(name).expect("created");
            v.put_values(vals, [r.clone()]).map_err(fail(&path, name))
        };
        put_i("lat_index", &lat_index)?;
        put_i("lon_index", &lon_index)?;
        drop((lat_index, lon_index));
        let day = |i: i32| days.epoch_days[i as usize] as i32;
        // index_start, index_end, index_peak give time_start, time_end, time_peak
        for (k, name) in ["time_start", "time_end", "time_peak"].iter().enumerate() {
            let index = joined(chunks, |c| &c.ints[k]);
            put_i(name, &index.iter().map(|&i| day(i)).collect::<Vec<i32>>())?;
        }
        for (k, name) in INT_FIELDS.iter().enumerate() {
            put_i(name, &joined(chunks, |c| &c.ints[k]))?;
        }
        let cats = joined(chunks, |c| &c.category);
        let mut v = file.variable_mut("category").expect("created");
        v.put_values(&cats, [r.clone()]).map_err(fail(&path, "category"))?;
        self.written = r.end;
        Ok(())
    }

    pub fn written(&self) -> usize {
        self.written
    }

    /// Append every event of `part` (an events file of the same job, e.g. another MPI rank's),
    /// variable by variable (read as float64, which holds every field exactly).
    pub fn append_file(&mut self, part: &Path) -> Result<(), EventsError> {
        let src = netcdf::open(part).map_err(|cause| EventsError::Open { path: part.into(), cause })?;
        let n = src.dimension("event").map_or(0, |d| d.len());
        if n == 0 {
            return Ok(());
        }
        let r = self.written..self.written + n;
        let names: Vec<String> = self.file.variables().map(|v| v.name()).collect();
        for name in names {
            let read = |cause| EventsError::Read { path: part.into(), var: name.clone(), cause };
            let v = src.variable(&name).ok_or_else(|| EventsError::BadVariable {
                path: part.into(),
                var: name.clone(),
                detail: "missing from the part".into(),
            })?;
            let vals: Vec<f64> = v.get_values(..).map_err(read)?;
            let mut w = self.file.variable_mut(&name).expect("listed");
            w.put_values(&vals, [r.clone()]).map_err(fail(&self.path, &name))?;
        }
        self.written = r.end;
        Ok(())
    }

    pub fn finish(self) -> Result<(), EventsError> {
        let path = self.path.clone();
        self.file.close().map_err(fail(&path, ""))
    }
}
