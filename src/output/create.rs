//! Creating one output file: dimensions, CF metadata, the climatological time axis, the
//! coordinates, and the statistic's variable (deflated and chunked with `--deflate`; otherwise
//! contiguous, and for the direct write path allocated at creation and never filled).

use super::cf::{climatological_times, put_lat_lon, stat_attributes};
use super::{climatology, OutFile, OutputError, OutputMeta, OutputSpec};
use crate::nc::encode::{chunk_shape, OutputType, I16_FILL};

/// Create `f` with its metadata and coordinates. With `preallocate` (uncompressed outputs on the
/// direct write path) the statistic's contiguous storage is allocated now and never filled: its
/// `_FillValue` attribute stays (missing cells are written as that value), but HDF5's fill
/// writes are off (`NC_NOFILL`, HDF5 fill time "never"), and one value (the fill value, at the
/// first cell) is written so the storage, and with it the data's byte offset, exists.
pub(super) fn create_file(
    f: &OutFile,
    var_name: &str,
    spec: &OutputSpec,
    meta: &OutputMeta,
    preallocate: bool,
) -> Result<(), OutputError> {
    let fail = |var: &str| {
        let path = f.path.clone();
        let var = var.to_string();
        move |cause| OutputError::write(&path, &var, cause)
    };
    let mut file = netcdf::create(&f.tmp).map_err(fail(""))?;
    let n_t = f.targets.len();
    file.add_dimension("time", n_t).map_err(fail("time"))?;
    file.add_dimension("nv", 2).map_err(fail("nv"))?;
    for (name, value) in globals(meta) {
        file.add_attribute(name, value).map_err(fail(name))?;
    }
    put_time(&mut file, f, meta)?;
    let [row, col] = put_lat_lon(&mut file, meta, &f.path)?;

    let dims = ["time", row.as_str(), col.as_str()];
    let attributes = stat_attributes(f.stat, meta, spec);
    add_stat_variable(&mut file, &f.path, var_name, &dims, spec, meta, preallocate, attributes)?;
    file.close().map_err(fail(""))?;
    Ok(())
}

/// Add a statistic's variable `var_name` over `dims` (the days, then the grid's row and column)
/// to `file` (to become `path`), stored as `spec` says: its type, `_FillValue` and int16
/// packing, chunked and deflated with `--deflate`; with `preallocate` its contiguous storage is
/// allocated now and never filled (see [`create_file`]). `attributes` follow (units, CF).
#[allow(clippy::too_many_arguments)]
pub(super) fn add_stat_variable(
    file: &mut netcdf::FileMut,
    path: &std::path::Path,
    var_name: &str,
    dims: &[&str],
    spec: &OutputSpec,
    meta: &OutputMeta,
    preallocate: bool,
    attributes: Vec<(&'static str, netcdf::AttributeValue)>,
) -> Result<(), OutputError> {
    let fail = |cause| OutputError::write(path, var_name, cause);
    let (nlat, nlon) = (meta.grid.nlat(), meta.grid.nlon());
    let enc = spec.encoding(meta);
    let mut v = match enc.ty {
        OutputType::F64 => file.add_variable::<f64>(var_name, dims),
        OutputType::F32 => file.add_variable::<f32>(var_name, dims),
        OutputType::I16 => file.add_variable::<i16>(var_name, dims),
    }
    .map_err(fail)?;
    if let Some(level) = spec.deflate {
        let (rows, cols) = chunk_shape(nlat, nlon, enc.ty, spec.format.chunks);
        v.set_chunking(&[1, rows, cols]).map_err(fail)?;
        v.set_compression(i32::from(level), spec.format.shuffle).map_err(fail)?;
    }
    if preallocate || spec.deflate.is_some() {
        // SAFETY: every value is written before the file is finished (every cell of every
        // target, tile by tile, or every chunk); until then nothing reads the unfilled storage.
        unsafe { v.set_nofill() }.map_err(fail)?;
    }
    // `set_nofill` drops the attribute: put after it (CF readers mask with it)
    match enc.ty {
        OutputType::F64 => v.put_attribute("_FillValue", enc.fill),
        OutputType::F32 => v.put_attribute("_FillValue", enc.fill as f32),
        OutputType::I16 => v.put_attribute("_FillValue", I16_FILL),
    }
    .map_err(fail)?;
    if enc.ty == OutputType::I16 {
        // the unpacked type is float64 (CF 8.1: scale_factor and add_offset of that type)
        v.put_attribute("scale_factor", enc.scale).map_err(fail)?;
        v.put_attribute("add_offset", enc.offset).map_err(fail)?;
    }
    for (name, value) in attributes {
        v.put_attribute(name, value).map_err(fail)?;
    }
    if preallocate {
        // allocates the whole contiguous storage (without filling it)
        match enc.ty {
            OutputType::F64 => v.put_value(enc.fill, [0, 0, 0]),
            OutputType::F32 => v.put_value(enc.fill as f32, [0, 0, 0]),
            OutputType::I16 => v.put_value(I16_FILL, [0, 0, 0]),
        }
        .map_err(fail)?;
    }
    Ok(())
}

/// The global attributes of an output file: CF, provenance, and how the statistics were
/// computed (years, window, calendar, edges, Feb 29, smoothing, percentile method).
fn globals(meta: &OutputMeta) -> Vec<(&'static str, netcdf::AttributeValue)> {
    let w = &meta.window;
    let (y0, y1) = (*w.years.start(), *w.years.end());
    let stats = &meta.stats;
    let window_days = 2 * w.half_window + 1;
    vec![
        ("Conventions", "CF-1.8".into()),
        ("title", format!("Day-of-year climatology of {} ({y0}-{y1}, {window_days}-day window)", meta.input_var).into()),
        ("source", format!("sstclim {}", env!("CARGO_PKG_VERSION")).into()),
        ("history", meta.history.clone().into()),
        (
            "references",
            "Hobday et al. 2016, Prog. Oceanogr. 141:227-238 (marine heatwave threshold); Hyndman & Fan 1996, Am. Stat. 50:361-365 (sample quantiles)".into(),
        ),
        (
            "comment",
            format!(
                "For each target day D and cell: the valid samples at dates anchor(year, D) + o, o = -{0}..+{0}, for every year {y0}-{y1} (window edges: {edges}; then Feb 29 and smoothing as the feb29 and smoothing_width attributes say). mean = sum of samples / number of valid samples; percentiles by {1}.",
                w.half_window,
                stats.method.description(),
                edges = meta.rules.edges.name()
            )
            .into(),
        ),
        ("climatology_years", format!("{y0}-{y1}").into()),
        ("window_half_width_days", i32::from(w.half_window).into()),
        ("calendar_convention", w.calendar.name().into()),
        ("window_edges", meta.rules.edges.name().into()),
        ("feb29", meta.rules.feb29.name().into()),
        ("smoothing_width", i32::from(meta.rules.smooth).into()),
        ("percentile_method", stats.method.description().into()),
        ("min_samples", (stats.min_samples as i32).into()),
        ("input_variable", meta.input_var.clone().into()),
        ("input_files", meta.input_template.clone().into()),
        ("missing_input_files", (meta.missing_files as i32).into()),
    ]
}

/// The time axis of file `f`: a climatological axis, one step per target day, increasing
/// under every calendar, with its `climatology_bounds` and the target's day of year.
fn put_time(file: &mut netcdf::FileMut, f: &OutFile, meta: &OutputMeta) -> Result<(), OutputError> {
    let fail = |var: &str| {
        let path = f.path.clone();
        let var = var.to_string();
        move |cause| OutputError::write(&path, &var, cause)
    };
    let w = &meta.window;
    let y0 = *w.years.start();
    let calendar = meta.rules.cf.cf_name();
    let (times, bounds) = climatological_times(meta, f.targets.clone());
    let doys: Vec<i32> = f.targets.clone().map(|t| i32::from(w.doys[t])).collect();
    let time_units = format!("days since {y0:04}-01-01 00:00:00");
    {
        let mut v = file.add_variable::<f64>("time", &["time"]).map_err(fail("time"))?;
        v.put_attribute("standard_name", "time").map_err(fail("time"))?;
        v.put_attribute("long_name", "time").map_err(fail("time"))?;
        v.put_attribute("units", time_units.as_str()).map_err(fail("time"))?;
        v.put_attribute("calendar", calendar).map_err(fail("time"))?;
        v.put_attribute("climatology", "climatology_bounds").map_err(fail("time"))?;
        v.put_attribute("axis", "T").map_err(fail("time"))?;
        v.put_values(&times, ..).map_err(fail("time"))?;
    }
    {
        let mut v =
            file.add_variable::<f64>("climatology_bounds", &["time", "nv"]).map_err(fail("climatology_bounds"))?;
        // the same units and calendar as time (CF 7.1), so that both decode alike
        v.put_attribute("units", time_units.as_str()).map_err(fail("climatology_bounds"))?;
        v.put_attribute("calendar", calendar).map_err(fail("climatology_bounds"))?;
        v.put_values(&bounds, ..).map_err(fail("climatology_bounds"))?;
    }
    {
        let mut v = file.add_variable::<i32>("doy", &["time"]).map_err(fail("doy"))?;
        v.put_attribute("long_name", format!("target day of year ({} convention)", w.calendar.name()))
            .map_err(fail("doy"))?;
        v.put_attribute("units", "1").map_err(fail("doy"))?;
        v.put_values(&doys, ..).map_err(fail("doy"))?;
    }
    Ok(())
}

impl super::OutputSet {
    /// Create share `k` of `n` of the planned files (every `n`-th from the `k`-th): what one of
    /// several creating processes does; the files exist once every share is made.
    pub fn create_share(&self, spec: &OutputSpec, meta: &OutputMeta, k: usize, n: usize) -> Result<(), OutputError> {
        for f in self.unique_files().skip(k).step_by(n.max(1)) {
            match self.climatology {
                true => climatology::create_file(f, spec, meta, self.preallocate)?,
                false => create_file(f, &self.var_names[f.stat], spec, meta, self.preallocate)?,
            }
        }
        Ok(())
    }

    /// How many files the set writes.
    pub fn file_count(&self) -> usize {
        self.unique_files().count()
    }
}
