//! Creating one output file: dimensions, CF metadata, the climatological time axis, the
//! coordinates, and the statistic's variable (deflated and chunked with `--deflate`; otherwise
//! contiguous, and for the direct write path allocated at creation and never filled).

use super::{OutFile, OutputError, OutputMeta, OutputSpec};
use crate::calendar::Date;

fn ordinal_suffix(p: &str) -> &'static str {
    let int: u64 = p.split('.').next().and_then(|i| i.parse().ok()).unwrap_or(0);
    if p.contains('.') {
        return "th";
    }
    match (int % 10, int % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// Days since `base` of a date.
fn days_since(base: Date, date: Date) -> f64 {
    (date.to_days() - base.to_days()) as f64
}

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
    let w = &meta.window;
    let (y0, y1) = (*w.years.start(), *w.years.end());
    let base = Date::new(y0, 1, 1).expect("valid year");
    let h = i64::from(w.half_window);
    let mut file = netcdf::create(&f.tmp).map_err(fail(""))?;
    let n_t = f.targets.len();
    let (nlat, nlon) = (meta.grid.nlat(), meta.grid.nlon());
    file.add_dimension("time", n_t).map_err(fail("time"))?;
    file.add_dimension("nv", 2).map_err(fail("nv"))?;
    file.add_dimension("lat", nlat).map_err(fail("lat"))?;
    file.add_dimension("lon", nlon).map_err(fail("lon"))?;

    // global attributes
    let stats = &meta.stats;
    let window_days = 2 * w.half_window + 1;
    let globals: Vec<(&str, netcdf::AttributeValue)> = vec![
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
    ];
    for (name, value) in globals {
        file.add_attribute(name, value).map_err(fail(name))?;
    }

    // time: a climatological axis, one step per target day
    let mut times = Vec::with_capacity(n_t);
    let mut bounds = Vec::with_capacity(2 * n_t);
    let mut doys = Vec::with_capacity(n_t);
    for t in f.targets.clone() {
        let doy = w.doys[t];
        let anchors: Vec<Date> = w.years.clone().filter_map(|y| w.calendar.anchor(y, doy)).collect();
        let first = anchors.first().copied().unwrap_or_else(|| base.add_days(i64::from(doy) - 1));
        let last = anchors.last().copied().unwrap_or(first);
        times.push(days_since(base, first));
        bounds.push(days_since(base, first.add_days(-h)));
        bounds.push(days_since(base, last.add_days(h + 1)));
        doys.push(i32::from(doy));
    }
    {
        let mut v = file.add_variable::<f64>("time", &["time"]).map_err(fail("time"))?;
        v.put_attribute("standard_name", "time").map_err(fail("time"))?;
        v.put_attribute("units", format!("days since {y0:04}-01-01 00:00:00")).map_err(fail("time"))?;
        v.put_attribute("calendar", "proleptic_gregorian").map_err(fail("time"))?;
        v.put_attribute("climatology", "climatology_bounds").map_err(fail("time"))?;
        v.put_attribute("axis", "T").map_err(fail("time"))?;
        v.put_values(&times, ..).map_err(fail("time"))?;
    }
    {
        let mut v =
            file.add_variable::<f64>("climatology_bounds", &["time", "nv"]).map_err(fail("climatology_bounds"))?;
        v.put_attribute("units", format!("days since {y0:04}-01-01 00:00:00")).map_err(fail("climatology_bounds"))?;
        v.put_values(&bounds, ..).map_err(fail("climatology_bounds"))?;
    }
    {
        let mut v = file.add_variable::<i32>("doy", &["time"]).map_err(fail("doy"))?;
        v.put_attribute("long_name", format!("target day of year ({} convention)", w.calendar.name()))
            .map_err(fail("doy"))?;
        v.put_values(&doys, ..).map_err(fail("doy"))?;
    }
    for (dim, coord, std_name, units, axis) in [
        ("lat", &meta.grid.lat, "latitude", "degrees_north", "Y"),
        ("lon", &meta.grid.lon, "longitude", "degrees_east", "X"),
    ] {
        let mut v = file.add_variable::<f64>(dim, &[dim]).map_err(fail(dim))?;
        if coord.from_file {
            v.put_attribute("standard_name", std_name).map_err(fail(dim))?;
            v.put_attribute("units", units).map_err(fail(dim))?;
            v.put_attribute("axis", axis).map_err(fail(dim))?;
        } else {
            v.put_attribute("long_name", format!("{std_name} index (the input had no coordinate variable)"))
                .map_err(fail(dim))?;
        }
        v.put_values(&coord.values, ..).map_err(fail(dim))?;
    }

    // the statistic
    let mut v = file.add_variable::<f64>(var_name, &["time", "lat", "lon"]).map_err(fail(var_name))?;
    if let Some(level) = spec.deflate {
        v.set_chunking(&[1, nlat, nlon]).map_err(fail(var_name))?;
        v.set_compression(i32::from(level), true).map_err(fail(var_name))?;
    }
    if preallocate {
        // SAFETY: every value is written before the file is finished (every cell of every
        // target, tile by tile); until then nothing reads the unfilled storage.
        unsafe { v.set_nofill() }.map_err(fail(var_name))?;
        // turning fill off drops the attribute: put back after (CF readers mask with it)
        v.put_attribute("_FillValue", spec.fill_value).map_err(fail(var_name))?;
    } else {
        v.set_fill_value(spec.fill_value).map_err(fail(var_name))?;
    }
    let what = if f.stat == 0 {
        "mean".to_string()
    } else {
        let p = stats.percentiles[f.stat - 1].text();
        format!("{p}{} percentile", ordinal_suffix(p))
    };
    v.put_attribute(
        "long_name",
        format!(
            "climatological {what} of {} ({window_days}-day window, {y0}-{y1})",
            meta.var_meta.long_name.as_deref().unwrap_or(&meta.input_var)
        ),
    )
    .map_err(fail(var_name))?;
    if let Some(units) = &meta.var_meta.units {
        v.put_attribute("units", units.as_str()).map_err(fail(var_name))?;
    }
    if f.stat == 0 {
        if let Some(sn) = &meta.var_meta.standard_name {
            v.put_attribute("standard_name", sn.as_str()).map_err(fail(var_name))?;
        }
        v.put_attribute("cell_methods", "time: mean over years").map_err(fail(var_name))?;
    } else {
        let p = &stats.percentiles[f.stat - 1];
        v.put_attribute("percentile", p.fraction() * 100.0).map_err(fail(var_name))?;
        v.put_attribute("percentile_method", stats.method.description()).map_err(fail(var_name))?;
    }
    v.put_attribute("window_length_days", i32::from(window_days)).map_err(fail(var_name))?;
    if preallocate {
        // allocates the whole contiguous storage (without filling it)
        v.put_value(spec.fill_value, [0, 0, 0]).map_err(fail(var_name))?;
    }
    file.close().map_err(fail(""))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinal_suffixes() {
        assert_eq!(ordinal_suffix("90"), "th");
        assert_eq!(ordinal_suffix("1"), "st");
        assert_eq!(ordinal_suffix("2"), "nd");
        assert_eq!(ordinal_suffix("13"), "th");
        assert_eq!(ordinal_suffix("97.5"), "th");
    }
}
