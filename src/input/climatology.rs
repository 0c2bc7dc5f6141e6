//! Our climatology file, `climatology.nc` (the `--layout climatology` file of `sstclim run`):
//! its schema, which the writer (`crate::output::climatology`) and this reader share, and the
//! reader: its header, checked against the events job (layout, calendar, variable, grid, the
//! threshold asked for), then the mean and thresholds of a band of latitude rows.
//!
//! The format (fixed for the project): dims `doy` then the input's lat and lon dims (row and
//! column dims, with 2-D latitude and longitude variables, on a curvilinear grid);
//! `{var}_mean(doy,lat,lon)` and `{var}_p{P}(doy,lat,lon)`; global attributes
//! `sstclim_layout = "climatology"`, `input_variable`, `calendar_mode` and the rest. Values may
//! be float64, float32 or packed integers (`scale_factor`, `add_offset`), missing
//! (`_FillValue`, `missing_value`, NaN), contiguous or chunked and deflated: every form `run
//! --layout climatology` writes. They are decoded to float64 by the input's rules
//! ([`super::decode_region`]: the value times the scale plus the offset, missing as NaN).
//!
//! Units: the statistics' `units` must name the input's unit (the same text, or both one of
//! the spellings of kelvin, or of degrees Celsius: [`super::packing::same_units`]); a
//! climatology of `run --units degC` against kelvin input is refused, not converted, since
//! adding 273.15 back would not give the values a climatology of the kelvin input has, and
//! events compare the series with the threshold exactly.
//!
//! Reading is the input's direct path ([`super::direct`]): each variable probed once when the
//! file is opened (contiguous: its offset; chunked: its chunk index, the first day decoded here
//! and checked against libnetcdf), then a band's rows read on every thread of the calling
//! rayon pool, one day of year (or one chunk's days) per task: `pread` of contiguous storage,
//! the project's own chunk reader for deflated data. Storage that path does not read goes
//! through libnetcdf.

use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::direct::{self, ChunkBuffers, ChunkError, DirectBuffer, DirectLayout, Place};
use super::{attr_text, var_text, Grid, Region, VarLayout};
use crate::calendar::{is_real, Calendar, CfCalendar};

/// The file's name in the output directory.
pub const FILE_NAME: &str = "climatology.nc";
/// The global attribute naming the layout, and its value in this file.
pub const LAYOUT_ATTR: &str = "sstclim_layout";
pub const LAYOUT: &str = "climatology";
/// The day-of-year dimension and coordinate variable.
pub const DOY: &str = "doy";
/// The global attributes saying of which variable, and in which day-of-year convention.
pub const INPUT_VARIABLE: &str = "input_variable";
pub const CALENDAR_MODE: &str = "calendar_mode";
/// The global attributes that say how the climatology was made, which the events' outputs
/// repeat (as `climatology_*`).
pub const PROVENANCE: [&str; 6] =
    ["climatology_years", "window_half_width", "window_edges", "feb29", "smoothing_width", "percentile_method"];

/// The data variable of statistic `stat` (`mean`, `p90`) of input variable `input_var`:
/// `sst_mean`, `sst_p90`.
pub fn stat_var(input_var: &str, stat: &str) -> String {
    format!("{input_var}_{stat}")
}

/// What can be wrong with a climatology file for a job. Every message is one line naming the
/// file (and the variable).
#[derive(Debug, thiserror::Error)]
pub enum ClimatologyError {
    #[error("{}: cannot open the climatology: {cause}", path.display())]
    Open { path: PathBuf, cause: netcdf::Error },
    #[error("{}: not a climatology file: {detail} (write one with `sstclim run --layout climatology`)", path.display())]
    NotClimatology { path: PathBuf, detail: String },
    #[error("{}: variable {var}: {detail}", path.display())]
    BadVariable { path: PathBuf, var: String, detail: String },
    #[error("{}: the climatology's {what} does not match the input's ({detail})", path.display())]
    Mismatch { path: PathBuf, what: &'static str, detail: String },
    #[error("{}: cannot read {var}: {cause}", path.display())]
    Read { path: PathBuf, var: String, cause: netcdf::Error },
}

/// What a climatology file holds, once checked against the job.
#[derive(Debug)]
pub struct ClimFile {
    pub path: PathBuf,
    file: netcdf::File,
    pub calendar: Calendar,
    pub n_doy: usize,
    /// How the mean and the threshold are stored, and where the direct path reads them.
    stored: Vec<StoredVar>,
    pub mean_var: String,
    pub thresh_var: String,
    /// The global attributes worth repeating in the outputs (`climatology_years` and such).
    pub provenance: Vec<(String, String)>,
}

/// One statistic variable's storage: its layout (the day of year as the time axis) and, where
/// the direct path reads it, the probe's findings.
#[derive(Debug)]
struct StoredVar {
    layout: VarLayout,
    direct: Option<DirectLayout>,
}

/// Global attribute `name` as text (NC_CHAR or NC_STRING), else as the value it is (the
/// provenance's numbers, a layout named by a number).
fn text_attr(file: &netcdf::File, name: &str) -> Option<String> {
    Some(value_text(&file.attribute(name)?.value().ok()?))
}

fn value_text(value: &netcdf::AttributeValue) -> String {
    attr_text(value).unwrap_or_else(|| format!("{value:?}"))
}

/// Of a climatology's global attributes `attrs`, those the events' outputs repeat
/// ([`PROVENANCE`], in its order), as text: what [`ClimFile::open`] finds in a file holding them.
pub fn provenance_text(attrs: &[(&str, netcdf::AttributeValue)]) -> Vec<(String, String)> {
    PROVENANCE
        .iter()
        .filter_map(|a| attrs.iter().find(|(n, _)| n == a).map(|(_, v)| (a.to_string(), value_text(v))))
        .collect()
}

/// The calendar the climatology was computed in (its `time` variable's `calendar`, CF's
/// `standard` where it has none) against the input's `cf`: the same, or both Gregorian
/// (`standard` and `proleptic_gregorian` have the same days since 1582-10-15).
fn check_calendar(file: &netcdf::File, path: &Path, cf: CfCalendar) -> Result<(), ClimatologyError> {
    let attr = file.variable("time").and_then(|t| var_text(&t, "calendar"));
    let gregorian = |c: CfCalendar| matches!(c, CfCalendar::Standard | CfCalendar::ProlepticGregorian);
    let theirs = CfCalendar::parse(attr.as_deref()).map_err(|e| ClimatologyError::NotClimatology {
        path: path.into(),
        detail: format!("its time variable's calendar: {e}"),
    })?;
    if theirs == cf || (gregorian(theirs) && gregorian(cf)) {
        return Ok(());
    }
    Err(ClimatologyError::Mismatch {
        path: path.into(),
        what: "calendar",
        detail: format!(
            "a climatology of the {} calendar (its time variable's calendar), the input's calendar is {}",
            theirs.cf_name(),
            cf.cf_name()
        ),
    })
}

/// Check the global attributes of the climatology `file` (at `path`) against the job: written
/// as sstclim's climatology, by `calendar` (its days of year) in the input's calendar `cf`,
/// of the input's variable `var` (where it says).
fn check_header(
    file: &netcdf::File,
    path: &Path,
    var: &str,
    calendar: Calendar,
    cf: CfCalendar,
) -> Result<(), ClimatologyError> {
    let not = |detail: String| ClimatologyError::NotClimatology { path: path.into(), detail };
    match text_attr(file, LAYOUT_ATTR) {
        Some(l) if l == LAYOUT => {}
        Some(l) => return Err(not(format!("its sstclim_layout is '{l}', not 'climatology'"))),
        None => return Err(not("it has no global attribute sstclim_layout".into())),
    }
    let mode = text_attr(file, CALENDAR_MODE).ok_or_else(|| not("it has no calendar_mode".into()))?;
    let file_calendar = match mode.as_str() {
        "hobday366" => Calendar::Hobday366,
        "ordinal" => Calendar::Ordinal,
        other => return Err(not(format!("its calendar_mode '{other}' is not hobday366 or ordinal"))),
    };
    if file_calendar != calendar {
        return Err(ClimatologyError::Mismatch {
            path: path.into(),
            what: "calendar",
            detail: format!("calendar_mode {mode}, the job asks for {}", calendar.name()),
        });
    }
    check_calendar(file, path, cf)?;
    if let Some(v) = text_attr(file, INPUT_VARIABLE) {
        if v != var {
            return Err(ClimatologyError::Mismatch {
                path: path.into(),
                what: "variable",
                detail: format!("a climatology of {v}, the input's variable is {var} (pass --var {v}?)"),
            });
        }
    }
    Ok(())
}

/// Check the coordinates of the climatology `file` (at `path`) against the input's `grid`:
/// the 1-D latitude and longitude along its `dims` where it has them, and the 2-D ones of a
/// curvilinear grid, each within a relative 1e-4.
fn check_coords(file: &netcdf::File, path: &Path, grid: &Grid, dims: [&String; 2]) -> Result<(), ClimatologyError> {
    for (dim, mine) in [(dims[0], &grid.lat.values), (dims[1], &grid.lon.values)] {
        let Some(v) = file.variable(dim) else { continue };
        let theirs: Vec<f64> =
            v.get_values(..).map_err(|cause| ClimatologyError::Read { path: path.into(), var: dim.clone(), cause })?;
        if let Some(i) = (0..mine.len()).find(|&i| (theirs[i] - mine[i]).abs() > 1e-4 * mine[i].abs().max(1.0)) {
            return Err(ClimatologyError::Mismatch {
                path: path.into(),
                what: "grid",
                detail: format!("{dim}[{i}] is {} in the climatology, {} in the input", theirs[i], mine[i]),
            });
        }
    }
    // a curvilinear grid: the 2-D latitude and longitude, stored as the input stores them
    for aux in grid.aux.iter().flatten() {
        let mismatch = |detail: String| ClimatologyError::Mismatch { path: path.into(), what: "grid", detail };
        let Some(v) = file.variable(&aux.name) else {
            return Err(mismatch(format!("the input's 2-D {} is not in the climatology", aux.name)));
        };
        let theirs: Vec<f64> = v.get_values(..).map_err(|cause| ClimatologyError::Read {
            path: path.into(),
            var: aux.name.clone(),
            cause,
        })?;
        let mine = &aux.values;
        let differs = |i: usize| (theirs[i] - mine[i]).abs() > 1e-4 * mine[i].abs().max(1.0);
        if theirs.len() != mine.len() {
            return Err(mismatch(format!("{} has {} values, {} in the input", aux.name, theirs.len(), mine.len())));
        }
        if let Some(i) = (0..mine.len()).find(|&i| differs(i)) {
            return Err(mismatch(format!(
                "{}[{i}] is {} in the climatology, {} in the input",
                aux.name, theirs[i], mine[i]
            )));
        }
    }
    Ok(())
}

impl ClimFile {
    /// Open `path` and check it against the job: input variable `var` on `grid`, days of year
    /// by `calendar` in the input's calendar `cf` (the file's `time` says which calendar it
    /// was computed in, and it has every day of that calendar's year), threshold `stat` (e.g.
    /// `p90`), in the input's `units`.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        path: &Path,
        var: &str,
        units: Option<&str>,
        grid: &Grid,
        calendar: Calendar,
        cf: CfCalendar,
        stat: &str,
    ) -> Result<ClimFile, ClimatologyError> {
        let file = netcdf::open(path).map_err(|cause| ClimatologyError::Open { path: path.into(), cause })?;
        check_header(&file, path, var, calendar, cf)?;
        let mean_var = stat_var(var, "mean");
        let thresh_var = stat_var(var, stat);
        let mut lat_lon = None;
        for name in [&mean_var, &thresh_var] {
            let v = file.variable(name).ok_or_else(|| ClimatologyError::BadVariable {
                path: path.into(),
                var: name.clone(),
                detail: format!(
                    "not in the file (it has {})",
                    file.variables().map(|v| v.name()).collect::<Vec<_>>().join(", ")
                ),
            })?;
            let dims: Vec<(String, usize)> = v.dimensions().iter().map(|d| (d.name(), d.len())).collect();
            if dims.len() != 3 || dims[0].0 != DOY {
                return Err(ClimatologyError::BadVariable {
                    path: path.into(),
                    var: name.clone(),
                    detail: format!("dimensions {dims:?}, not (doy, lat, lon)"),
                });
            }
            lat_lon = Some((dims[0].1, dims[1].clone(), dims[2].clone()));
        }
        let (n_doy, (lat_dim, nlat), (lon_dim, nlon)) = lat_lon.expect("two variables checked");
        // every day of the year, in order: position d holds day of year d + 1
        let doys: Option<Vec<i32>> = match file.variable(DOY) {
            Some(v) => Some(v.get_values(..).map_err(|cause| ClimatologyError::Read {
                path: path.into(),
                var: DOY.into(),
                cause,
            })?),
            None => None,
        };
        let in_order = doys.as_ref().map_or(true, |d| d.iter().enumerate().all(|(i, &x)| x == i as i32 + 1));
        // the year of the input's calendar: 366 days in the real calendars (day 366 of
        // leap years, or day 60 under hobday366), 360 in `360_day`, 365 in `noleap`
        let year = if is_real(cf) { 366 } else { usize::from(cf.days_in_year(2001)) };
        if n_doy < year || (!is_real(cf) && n_doy != year) || !in_order {
            return Err(ClimatologyError::BadVariable {
                path: path.into(),
                var: mean_var,
                detail: format!(
                    "{n_doy} days of year{}; events need all {year} of the {} calendar in order (run with --doys 1-{year})",
                    if in_order { "" } else { ", not 1, 2, 3, ..." },
                    if is_real(cf) { calendar.name() } else { cf.cf_name() }
                ),
            });
        }
        if (nlat, nlon) != (grid.nlat(), grid.nlon()) {
            return Err(ClimatologyError::Mismatch {
                path: path.into(),
                what: "grid",
                detail: format!("{nlon}x{nlat} cells, the input has {}x{}", grid.nlon(), grid.nlat()),
            });
        }
        check_coords(&file, path, grid, [&lat_dim, &lon_dim])?;
        let provenance = PROVENANCE.iter().filter_map(|a| text_attr(&file, a).map(|v| (a.to_string(), v))).collect();
        let stored = [&mean_var, &thresh_var]
            .into_iter()
            .map(|name| probe_var(&file, path, name, units))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ClimFile { path: path.into(), file, calendar, n_doy, stored, mean_var, thresh_var, provenance })
    }

    /// Variable `name` (the mean or a threshold) of latitude rows `rows` (all longitudes), in the
    /// file's layout `[doy][cell of the band]`, unpacked, NaN where missing.
    pub fn read_rows(&self, name: &str, rows: Range<usize>, nlon: usize) -> Result<Vec<f64>, ClimatologyError> {
        if let Some(v) = self.stored.iter().find(|v| v.layout.name == name) {
            if let Some(values) = self.read_direct(v, rows.clone(), nlon)? {
                return Ok(values);
            }
        }
        let v = self.file.variable(name).expect("checked when opened");
        let err = |cause| ClimatologyError::Read { path: self.path.clone(), var: name.to_string(), cause };
        let mut raw: Vec<f64> = v.get_values([0..self.n_doy, rows, 0..nlon]).map_err(err)?;
        let num = |a: &str| match v.attribute_value(a) {
            Some(Ok(netcdf::AttributeValue::Double(x))) => Some(x),
            Some(Ok(netcdf::AttributeValue::Float(x))) => Some(f64::from(x)),
            Some(Ok(netcdf::AttributeValue::Short(x))) => Some(f64::from(x)),
            Some(Ok(netcdf::AttributeValue::Int(x))) => Some(f64::from(x)),
            _ => None,
        };
        let (fill, missing) = (num("_FillValue"), num("missing_value"));
        let (scale, offset) = (num("scale_factor").unwrap_or(1.0), num("add_offset").unwrap_or(0.0));
        raw.par_chunks_mut(1 << 16).for_each(|part| {
            for x in part {
                let gone = x.is_nan() || Some(*x) == fill || Some(*x) == missing;
                *x = if gone { f64::NAN } else { *x * scale + offset };
            }
        });
        Ok(raw)
    }

    /// [`ClimFile::read_rows`]' values through the direct path where the probe found it reads
    /// the variable: contiguous storage with `pread`, one day of year per task; chunks
    /// inflated here, each once, one chunk's days per task; on every thread of the calling
    /// rayon pool. `None`: read it through libnetcdf instead (a file that is not what the
    /// probe found, a chunk never written); a corrupt chunk is an error.
    fn read_direct(&self, v: &StoredVar, rows: Range<usize>, nlon: usize) -> Result<Option<Vec<f64>>, ClimatologyError> {
        let Some(d) = &v.direct else { return Ok(None) };
        let Ok((file, located)) = direct::locate_file(&self.path, d, &v.layout, None) else { return Ok(None) };
        let region = Region { rows, cols: 0..nlon };
        let per_doy = region.n_cells().max(1);
        let mut out = vec![0f64; self.n_doy * region.n_cells()];
        match &located.place {
            Place::Contiguous(offset) => {
                let read = out.par_chunks_mut(per_doy).enumerate().try_for_each_init(DirectBuffer::new, |buf, (t, dst)| {
                    direct::read_step_into(&file, *offset, t, d.order, &v.layout, &region, buf, dst).map(drop)
                });
                Ok(read.ok().map(|()| out))
            }
            Place::Chunked(ch) => {
                // the days of one chunk along doy together, so that each chunk is inflated once
                let block = located.step_block(&v.layout).max(1);
                let read = out.par_chunks_mut(per_doy * block).enumerate().try_for_each_init(
                    ChunkBuffers::default,
                    |buf, (k, dst)| {
                        let steps: Vec<usize> = (k * block..k * block + dst.len() / per_doy).collect();
                        let mut dests: Vec<&mut [f64]> = dst.chunks_mut(per_doy).collect();
                        direct::read_chunked_steps_into(&file, ch, d.order, &v.layout, &region, &steps, buf, &mut dests)
                            .map(drop)
                    },
                );
                match read {
                    Ok(()) => Ok(Some(out)),
                    Err(ChunkError::Fallback(why)) => {
                        tracing::debug!("{}: {}: {why}: read through libnetcdf", self.path.display(), v.layout.name);
                        Ok(None)
                    }
                    Err(ChunkError::Corrupt(detail)) => Err(ClimatologyError::BadVariable {
                        path: self.path.clone(),
                        var: v.layout.name.clone(),
                        detail,
                    }),
                }
            }
        }
    }
}

/// How variable `name` of the climatology `file` (at `path`) is stored, checked against the
/// input's `units`, and where the direct path reads it (`None`: through libnetcdf).
fn probe_var(file: &netcdf::File, path: &Path, name: &str, units: Option<&str>) -> Result<StoredVar, ClimatologyError> {
    let bad = |detail: String| ClimatologyError::BadVariable { path: path.into(), var: name.into(), detail };
    let mut layout = VarLayout::inspect(file, path, Some(name), true).map_err(|e| bad(e.to_string()))?;
    // (checked when opened: doy, then the grid's rows and columns)
    layout.time_axis = Some(0);
    let theirs = layout.meta.units.as_deref();
    if !super::packing::same_units(theirs, units) {
        return Err(ClimatologyError::Mismatch {
            path: path.into(),
            what: "units",
            detail: format!(
                "{name} is in {}, the input in {}: events compare the series with the threshold in one unit, so \
                 compute the climatology in the input's units (without --units)",
                theirs.unwrap_or("?"),
                units.unwrap_or("?")
            ),
        });
    }
    let direct = match direct::probe_first(path, &layout) {
        Ok(Ok(d)) => Some(d),
        Ok(Err(why)) => {
            tracing::debug!("{}: {name}: {why}: read through libnetcdf", path.display());
            None
        }
        Err(damaged) => return Err(bad(damaged.to_string())),
    };
    Ok(StoredVar { layout, direct })
}
