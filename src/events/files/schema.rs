//! The schema of `events.nc` (one `event` dimension, marineHeatWaves' field names, sorted by
//! cell then start) and what both it and `summary.nc` say of the job (CF-1.8): the variables,
//! their types and attributes, and how each column of the catalogue is encoded. Every writer
//! of `events.nc` ([`super::events_file`] through libnetcdf, [`super::direct`] with `pwrite`,
//! [`super::compressed`] with the project's chunk coder) defines the file here, so they all
//! write the same variables.

use std::path::Path;

use super::store::Store;
use crate::calendar::CfCalendar;
use crate::events::columns::{EventColumns, N_INTS};
use crate::events::metrics::FLOAT_FIELDS;
use crate::events::{Days, EventsError, Params};
use crate::input::direct::Stored;
use crate::input::Grid;

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
    pub(super) fn kind(&self) -> &'static str {
        if self.params.cold {
            "marine cold spells"
        } else {
            "marine heatwaves"
        }
    }

    pub(super) fn globals(&self, file: &mut netcdf::FileMut, path: &Path, title: String) -> Result<(), EventsError> {
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
            file.add_attribute(&k, v).map_err(fail(path, &k))?;
        }
        Ok(())
    }
}

pub(super) fn fail(path: &Path, var: &str) -> impl FnOnce(netcdf::Error) -> EventsError {
    let (path, var) = (path.to_path_buf(), var.to_string());
    move |cause| EventsError::Write { path, var, cause }
}

/// Create `path` and define every variable of `events.nc` along `event`: unlimited and
/// chunked (`fixed = None`: the count is not known yet), or `fixed` events long (at least 1),
/// contiguous and unfilled, for [`super::direct`] to write with `pwrite` (every value is
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
        add_event_var(&mut file, path, meta, fixed, name, kind, attrs)
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

/// Add the variable `name` along `event` to `file` with its attributes: of type `kind` (`d`
/// f64, `f` f32, `i` i32, else i8), stored as [`define_events`] says for `fixed` and the job's
/// `--deflate` and `--shuffle`.
fn add_event_var(
    file: &mut netcdf::FileMut,
    path: &Path,
    meta: &Meta,
    fixed: Option<usize>,
    name: &str,
    kind: char,
    attrs: Vec<(&str, netcdf::AttributeValue)>,
) -> Result<(), EventsError> {
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
            v.set_chunking(&[n.min(EVENT_CHUNK)]).map_err(fail(path, name))?;
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
    Ok(())
}

/// The integer fields, in the order of [`EventColumns::ints`].
pub const INT_FIELDS: [&str; 8] = [
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
pub(super) const CHUNK: usize = 1 << 14;

/// Events per chunk of a column (1 MB of a float32 or int32 column): many chunks to share
/// among threads, each large enough for deflate.
pub(super) const EVENT_CHUNK: usize = 1 << 18;

/// One variable of `events.nc` and where its values come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Column {
    Lat,
    Lon,
    LatIndex,
    LonIndex,
    /// `time_start`, `time_end`, `time_peak`: the epoch day of `index_start/end/peak`.
    Time(usize),
    Int(usize),
    Float(usize),
    Category,
}

impl Column {
    pub(crate) fn all() -> Vec<Column> {
        let mut all = vec![Column::Lat, Column::Lon, Column::LatIndex, Column::LonIndex];
        all.extend((0..3).map(Column::Time));
        all.extend((0..N_INTS).map(Column::Int));
        all.extend((0..FLOAT_FIELDS.len()).map(Column::Float));
        all.push(Column::Category);
        all
    }

    pub(crate) fn name(self) -> String {
        match self {
            Column::Lat => "lat".into(),
            Column::Lon => "lon".into(),
            Column::LatIndex => "lat_index".into(),
            Column::LonIndex => "lon_index".into(),
            Column::Time(k) => ["time_start", "time_end", "time_peak"][k].into(),
            Column::Int(k) => INT_FIELDS[k].into(),
            Column::Float(k) => FLOAT_FIELDS[k].into(),
            Column::Category => "category".into(),
        }
    }

    /// How the column is stored (`float32`: the float fields as float32, `--output-type f32`).
    pub(crate) fn stored(self, float32: bool) -> Stored {
        match self {
            Column::Float(_) if float32 => Stored::Float(4),
            Column::Lat | Column::Lon | Column::Float(_) => Stored::Float(8),
            Column::Category => Stored::Int(1),
            _ => Stored::Int(4),
        }
    }

    pub(crate) fn size(self, float32: bool) -> usize {
        match self.stored(float32) {
            Stored::Float(n) | Stored::Int(n) => n,
        }
    }

    /// Append the little-endian bytes of this column's values for the events `r` of `c`, as
    /// [`super::events_file::EventsFile::append`] computes them.
    pub(crate) fn encode(
        self,
        c: &EventColumns,
        r: std::ops::Range<usize>,
        (grid, days): (&Grid, &Days),
        float32: bool,
        out: &mut Vec<u8>,
    ) {
        let nlon = grid.nlon();
        let cell = &c.cell[r.clone()];
        match self {
            Column::Lat => out.extend(cell.iter().flat_map(|&i| grid.lat_at(i).to_le_bytes())),
            Column::Lon => out.extend(cell.iter().flat_map(|&i| grid.lon_at(i).to_le_bytes())),
            Column::LatIndex => out.extend(cell.iter().flat_map(|&i| ((i / nlon) as i32).to_le_bytes())),
            Column::LonIndex => out.extend(cell.iter().flat_map(|&i| ((i % nlon) as i32).to_le_bytes())),
            Column::Time(k) => out
                .extend(c.ints[k][r.clone()].iter().flat_map(|&i| (days.epoch_days[i as usize] as i32).to_le_bytes())),
            Column::Int(k) => out.extend(c.ints[k][r.clone()].iter().flat_map(|v| v.to_le_bytes())),
            Column::Float(k) if float32 => {
                out.extend(c.floats[k][r.clone()].iter().flat_map(|&v| (v as f32).to_le_bytes()))
            }
            Column::Float(k) => out.extend(c.floats[k][r.clone()].iter().flat_map(|v| v.to_le_bytes())),
            Column::Category => out.extend(c.category[r].iter().flat_map(|v| v.to_le_bytes())),
        }
    }
}
