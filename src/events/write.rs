//! Writing `events.nc` (one `event` dimension, marineHeatWaves' field names, sorted by cell
//! then start) and `summary.nc` (blockAverage's statistics per year and cell), CF-1.8.
//!
//! Both are written band by band into a staging path the job chooses and renames into place
//! when everything is written (`crate::output::publish`). Here the event dimension is
//! unlimited because, with several bands, the count is known only band by band; a job of one
//! band writes `events.nc` through [`super::write_direct`] instead.

use std::path::{Path, PathBuf};

use super::columns::{joined, EventColumns};
use super::metrics::FLOAT_FIELDS;
use super::store::{self, Store};
use super::summary::{stat_units, STATS};
use super::{Days, EventsError, Params};
use crate::calendar::{days_since_1970_in, CfCalendar, Date};
use crate::input::Grid;
use crate::nc::chunked::{ChunkPlan, Partial};
use crate::nc::encode::OutputType;

/// What both files say of the job.
#[derive(Clone, Debug)]
pub struct Meta {
    pub input_var: String,
    pub units: String,
    pub years: (i32, i32),
    pub params: Params,
    /// The threshold's statistic (e.g. `p90`).
    pub threshold: String,
    pub climatology: String,
    pub provenance: Vec<(String, String)>,
    pub history: String,
    /// The input's calendar: the time axes count days since 1970-01-01 in it and carry its
    /// name.
    pub calendar: CfCalendar,
    /// How the files store their values (`--output-type`, `--deflate`, `--shuffle`).
    pub store: Store,
}

impl Meta {
    fn kind(&self) -> &'static str {
        if self.params.cold {
            "marine cold spells"
        } else {
            "marine heatwaves"
        }
    }

    fn globals(&self, file: &mut netcdf::FileMut, path: &Path, title: String) -> Result<(), EventsError> {
        let fail = |var: &str| {
            let (path, var) = (path.to_path_buf(), var.to_string());
            move |cause| EventsError::Write { path, var, cause }
        };
        let mut attrs: Vec<(String, netcdf::AttributeValue)> = vec![
            ("Conventions".into(), "CF-1.8".into()),
            ("title".into(), title.into()),
            ("source".into(), format!("sstclim {}", env!("CARGO_PKG_VERSION")).into()),
            ("history".into(), self.history.clone().into()),
            (
                "references".into(),
                "Hobday et al. 2016, Prog. Oceanogr. 141:227-238; marineHeatWaves detect() and blockAverage() \
                 (github.com/ecjoliver/marineHeatWaves)"
                    .into(),
            ),
            ("event_type".into(), if self.params.cold { "cold_spell" } else { "heatwave" }.into()),
            ("input_variable".into(), self.input_var.clone().into()),
            ("analysis_years".into(), format!("{}-{}", self.years.0, self.years.1).into()),
            ("threshold".into(), self.threshold.clone().into()),
            ("climatology_file".into(), self.climatology.clone().into()),
            ("min_duration".into(), (self.params.min_duration as i32).into()),
            ("max_gap".into(), self.params.max_gap.map_or(-1, |g| g as i32).into()),
        ];
        for (k, v) in &self.provenance {
            attrs.push((format!("climatology_{}", k.trim_start_matches("climatology_")), v.clone().into()));
        }
        for (k, v) in attrs {
            file.add_attribute(&k, v).map_err(fail(&k))?;
        }
        Ok(())
    }
}

fn fail(path: &Path, var: &str) -> impl FnOnce(netcdf::Error) -> EventsError {
    let (path, var) = (path.to_path_buf(), var.to_string());
    move |cause| EventsError::Write { path, var, cause }
}

/// Create `path` and define every variable of `events.nc` along `event`: unlimited and
/// chunked (`fixed = None`: the count is not known yet), or `fixed` events long (at least 1),
/// contiguous and unfilled, for [`super::write_direct`] to write with `pwrite` (every value is
/// written before the file is published).
pub(super) fn define_events(
    path: &Path,
    meta: &Meta,
    grid: &Grid,
    fixed: Option<usize>,
) -> Result<netcdf::FileMut, EventsError> {
    let mut file = netcdf::create(path).map_err(fail(path, ""))?;
    match fixed {
        Some(n) => file.add_dimension("event", n),
        None => file.add_unlimited_dimension("event"),
    }
    .map_err(fail(path, "event"))?;
    meta.globals(
        &mut file,
        path,
        format!("{} of {} ({}-{}), one record per event", meta.kind(), meta.input_var, meta.years.0, meta.years.1),
    )?;
    let mut add = |name: &str, kind: char, attrs: Vec<(&str, netcdf::AttributeValue)>| {
        let mut v = match kind {
            'd' => file.add_variable::<f64>(name, &["event"]),
            'f' => file.add_variable::<f32>(name, &["event"]),
            'i' => file.add_variable::<i32>(name, &["event"]),
            _ => file.add_variable::<i8>(name, &["event"]),
        }
        .map_err(fail(path, name))?;
        match (fixed, meta.store.deflate) {
            (Some(n), Some(level)) => {
                // the compressed direct writer writes every chunk
                v.set_chunking(&[n.min(super::write_compressed::EVENT_CHUNK)]).map_err(fail(path, name))?;
                v.set_compression(i32::from(level), meta.store.shuffle).map_err(fail(path, name))?;
            }
            // SAFETY: the direct writer writes every value before the file is published
            (Some(_), None) => unsafe { v.set_nofill() }.map_err(fail(path, name))?,
            (None, deflate) => {
                v.set_chunking(&[CHUNK]).map_err(fail(path, name))?;
                if let Some(level) = deflate {
                    // several bands or ranks: appended through libnetcdf, which compresses
                    v.set_compression(i32::from(level), meta.store.shuffle).map_err(fail(path, name))?;
                }
            }
        }
        for (k, val) in attrs {
            v.put_attribute(k, val).map_err(fail(path, name))?;
        }
        Ok::<(), EventsError>(())
    };
    let units_of = |c: &str| if c == "lat" { "degrees_north" } else { "degrees_east" };
    for (name, std) in [("lat", "latitude"), ("lon", "longitude")] {
        let dim = if name == "lat" { &grid.lat.dim } else { &grid.lon.dim };
        add(
            name,
            'd',
            vec![
                ("standard_name", std.into()),
                ("units", units_of(name).into()),
                ("long_name", format!("{std} of the event's cell (input dimension {dim})").into()),
            ],
        )?;
        add(
            &format!("{name}_index"),
            'i',
            vec![("long_name", format!("index of the event's cell along the input's {dim} (0-based)").into())],
        )?;
    }
    for (name, what) in [("time_start", "first day"), ("time_end", "last day"), ("time_peak", "peak day")] {
        add(
            name,
            'i',
            vec![
                ("standard_name", "time".into()),
                ("long_name", format!("{what} of the event").into()),
                ("units", "days since 1970-01-01 00:00:00".into()),
                ("calendar", meta.calendar.cf_name().into()),
            ],
        )?;
    }
    for name in INT_FIELDS {
        let attrs: Vec<(&str, netcdf::AttributeValue)> = if name.starts_with("index_") {
            vec![("long_name", format!("{name}: day of the analysis series (0 = {}-01-01)", meta.years.0).into())]
        } else {
            vec![("units", "days".into())]
        };
        add(name, 'i', attrs)?;
    }
    for name in FLOAT_FIELDS {
        let units = if name.starts_with("intensity_cumulative") {
            format!("{} days", meta.units)
        } else if name.starts_with("rate_") {
            format!("{} day-1", meta.units)
        } else {
            meta.units.clone()
        };
        let kind = if meta.store.float32 { 'f' } else { 'd' };
        add(name, kind, vec![("units", units.into())])?;
    }
    add(
        "category",
        'b',
        vec![
            ("long_name", "category at the event's largest normalised exceedance".into()),
            ("flag_values", vec![0i8, 1, 2, 3, 4].into()),
            ("flag_meanings", "none moderate strong severe extreme".into()),
        ],
    )?;
    Ok(file)
}

/// `events.nc`, being written.
pub struct EventsFile {
    path: PathBuf,
    file: netcdf::FileMut,
    written: usize,
    /// The float fields stored as float32.
    float32: bool,
}

/// The integer fields, in the order of [`EventColumns::ints`].
pub(super) const INT_FIELDS: [&str; 8] = [
    "index_start",
    "index_end",
    "index_peak",
    "duration",
    "duration_moderate",
    "duration_strong",
    "duration_severe",
    "duration_extreme",
];

/// Events a chunk of the event dimension holds.
const CHUNK: usize = 1 << 14;

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
        // the input's horizontal dimensions and coordinates (2-D ones and grid mapping too)
        let [lat_dim, lon_dim] =
            crate::nc::coords::put_grid(&mut file, grid).map_err(|(var, cause)| fail(path, &var)(cause))?;
        let coordinates = crate::nc::coords::coordinates(grid, "");
        let plan = meta.store.summary_plan(grid.nlat(), grid.nlon());
        for stat in STATS {
            let mut v = file
                .add_variable::<f32>(stat, &["time", lat_dim.as_str(), lon_dim.as_str()])
                .map_err(fail(path, stat))?;
            if let Some(plan) = &plan {
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
