//! `--layout climatology`: ONE file, `climatology.nc`, holding every statistic over a `doy`
//! dimension, with the attributes that say how it was made, so that a later step (event
//! detection) reads a climatology back without repeating the flags. The format:
//!
//! * dimensions `doy` (the days written: 1..N, N = 366 under `hobday366`), `nv = 2`, and the
//!   input's two horizontal dimensions (`lat`, `lon`; `j`, `i` on a curvilinear grid);
//! * `doy(doy)` int32 1..N; `time(doy)` a CF climatological time (`climatology =
//!   "climatology_bounds"`) with `climatology_bounds(doy, nv)`; `lat(lat)`, `lon(lon)` (or the
//!   input's 2-D latitude and longitude, and its grid mapping: `super::coords`);
//! * `{var}_mean(doy, lat, lon)` and `{var}_p{P}(doy, lat, lon)`, `_FillValue` where a cell has
//!   no value: float64 by default, or as `--output-type f32|i16` (int16 packed with
//!   `scale_factor`/`add_offset`), `--deflate`/`--shuffle` and `--units degC` store them, as
//!   for the other layouts;
//! * global attributes `sstclim_layout = "climatology"`, `input_variable`,
//!   `climatology_years = "Y0-Y1"`, `calendar_mode`, `window_half_width`, `window_edges`,
//!   `feb29`, `smoothing_width` (1 = none), `percentile_method`, `percentiles` (float64),
//!   `min_samples`, beside the provenance every output has.
//!
//! Created here through libnetcdf; its values are written as the stacked layout's are (one
//! statistic variable after another of the one file: `pwrite` from every write thread where
//! uncompressed, chunks compressed on every thread where deflated, see `super`), so a
//! climatology is written at the speed of the other layouts. MPI ranks each write their slice
//! of the days, which rank 0 joins along `doy`.

use super::{OutFile, OutputError, OutputMeta, OutputSpec};
use crate::input::climatology as schema;

/// The data variable of each statistic: `{input_var}_{stat}` (`sst_mean`, `sst_p90`), as the
/// reader names them.
pub fn var_names(meta: &OutputMeta) -> Vec<String> {
    meta.stats.names().iter().map(|s| schema::stat_var(&meta.input_var, s)).collect()
}

/// The global attributes that say how the climatology was made (those events repeat, see
/// [`schema::PROVENANCE`], among them), as the file holds them: what `events --baseline`
/// repeats from a climatology it keeps in memory.
pub fn provenance(
    w: &crate::window::WindowSpec,
    rules: &crate::smooth::DayRules,
    stats: &crate::stats::StatSpec,
) -> Vec<(&'static str, netcdf::AttributeValue)> {
    let (y0, y1) = (*w.years.start(), *w.years.end());
    let percentiles: Vec<f64> = stats.percentiles.iter().map(|p| p.fraction() * 100.0).collect();
    vec![
        ("climatology_years", format!("{y0}-{y1}").into()),
        (schema::CALENDAR_MODE, w.calendar.name().into()),
        ("window_half_width", i32::from(w.half_window).into()),
        ("window_edges", rules.edges.name().into()),
        ("feb29", rules.feb29.name().into()),
        ("smoothing_width", i32::from(rules.smooth).into()),
        ("percentile_method", stats.method.description().into()),
        ("percentiles", netcdf::AttributeValue::Doubles(percentiles)),
        ("min_samples", (stats.min_samples as i32).into()),
    ]
}

/// Create `f` (targets `f.targets` of the job's days) with its axes, coordinates, attributes
/// and one variable per statistic, stored as `spec` says (`preallocate`: contiguous storage
/// allocated for the direct write path, see `super::create`).
pub(super) fn create_file(
    f: &OutFile,
    spec: &OutputSpec,
    meta: &OutputMeta,
    preallocate: bool,
) -> Result<(), OutputError> {
    let fail = |var: &str| {
        let (path, var) = (f.path.clone(), var.to_string());
        move |cause| OutputError::write(&path, &var, cause)
    };
    let (w, rules, stats) = (&meta.window, &meta.rules, &meta.stats);
    let (y0, y1) = (*w.years.start(), *w.years.end());
    let h = i64::from(w.half_window);
    let n_t = f.targets.len();
    let mut file = netcdf::create(&f.tmp).map_err(fail(""))?;
    for (name, len) in [(schema::DOY, n_t), ("nv", 2)] {
        file.add_dimension(name, len).map_err(fail(name))?;
    }
    let globals: Vec<(&str, netcdf::AttributeValue)> = vec![
        ("Conventions", "CF-1.8".into()),
        ("title", format!("Day-of-year climatology of {} ({y0}-{y1})", meta.input_var).into()),
        ("source", format!("sstclim {}", env!("CARGO_PKG_VERSION")).into()),
        ("history", meta.history.clone().into()),
        (
            "references",
            "Hobday et al. 2016, Prog. Oceanogr. 141:227-238 (marine heatwave threshold); Hyndman & Fan 1996, Am. Stat. 50:361-365 (sample quantiles)".into(),
        ),
        (
            "comment",
            format!(
                "For each day of year D and cell: the valid samples at dates anchor(year, D) + o, o = -{h}..+{h}, for every year {y0}-{y1} (window edges: {}); mean = sum / number of valid samples; percentiles by {}; Feb 29: {}; then a periodic running mean of width {} over the day-of-year axis (1 = none).",
                rules.edges.name(),
                stats.method.description(),
                rules.feb29.name(),
                rules.smooth
            )
            .into(),
        ),
        (schema::LAYOUT_ATTR, schema::LAYOUT.into()),
        (schema::INPUT_VARIABLE, meta.input_var.clone().into()),
        ("input_files", meta.input_template.clone().into()),
        ("missing_input_files", (meta.missing_files as i32).into()),
    ];
    for (name, value) in globals.into_iter().chain(provenance(w, rules, stats)) {
        file.add_attribute(name, value).map_err(fail(name))?;
    }
    // an increasing time axis under every calendar, as the other layouts have it
    let (times, bounds) = super::cf::climatological_times(meta, f.targets.clone());
    let doys: Vec<i32> = f.targets.clone().map(|t| i32::from(w.doys[t])).collect();
    let units = format!("days since {y0:04}-01-01 00:00:00");
    {
        let mut v = file.add_variable::<i32>(schema::DOY, &[schema::DOY]).map_err(fail(schema::DOY))?;
        v.put_attribute("long_name", format!("day of year ({} convention)", w.calendar.name()))
            .map_err(fail(schema::DOY))?;
        v.put_values(&doys, ..).map_err(fail(schema::DOY))?;
    }
    {
        let mut v = file.add_variable::<f64>("time", &[schema::DOY]).map_err(fail("time"))?;
        for (k, val) in [
            ("standard_name", "time"),
            ("units", units.as_str()),
            ("calendar", meta.rules.cf.cf_name()),
            ("climatology", "climatology_bounds"),
            ("axis", "T"),
        ] {
            v.put_attribute(k, val).map_err(fail("time"))?;
        }
        v.put_values(&times, ..).map_err(fail("time"))?;
    }
    {
        let mut v =
            file.add_variable::<f64>("climatology_bounds", &[schema::DOY, "nv"]).map_err(fail("climatology_bounds"))?;
        // the same units and calendar as time (CF 7.1), so that both decode alike
        v.put_attribute("units", units.as_str()).map_err(fail("climatology_bounds"))?;
        v.put_attribute("calendar", meta.rules.cf.cf_name()).map_err(fail("climatology_bounds"))?;
        v.put_values(&bounds, ..).map_err(fail("climatology_bounds"))?;
    }
    let [row, col] = super::cf::put_lat_lon(&mut file, meta, &f.path)?;
    let dims = [schema::DOY, row.as_str(), col.as_str()];
    for (stat, name) in var_names(meta).iter().enumerate() {
        // the other layouts' attributes (units, standard_name, CF 7.4 cell_methods, the
        // percentile), with time, not doy, the auxiliary coordinate: doy is the dimension here
        let attributes = super::cf::stat_attributes(stat, meta, spec)
            .into_iter()
            .map(|(k, v)| match k {
                "coordinates" => (k, crate::nc::coords::coordinates(&meta.grid, "time").into()),
                _ => (k, v),
            })
            .collect();
        super::create::add_stat_variable(&mut file, &f.path, name, &dims, spec, meta, preallocate, attributes)?;
    }
    file.close().map_err(fail(""))
}
