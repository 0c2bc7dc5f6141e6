//! A map of an events summary (`summary.nc` of `sstclim events`): one statistic averaged over
//! the file's years, such as the mean annual marine-heatwave days (`total_days`), drawn like a
//! quicklook (the demo's last map, and what users look at first after a catalogue).
//!
//! Cells without a climatology (land) are NaN in every year and drawn grey, apart from the
//! colour scale; ocean cells without any event count 0 days, as marineHeatWaves'
//! `blockAverage` counts them.

use std::path::{Path, PathBuf};

use super::quicklook::{draw_map, Field, QuicklookError, QuicklookOptions};
use crate::input::var_text;

/// `sstclim quicklook FILE`: an events summary (a `year` axis and marineHeatWaves'
/// `total_days`) drawn as its statistic (`--stat`, default `total_days`) averaged over the
/// years; any other file as a statistic of one target day ([`super::quicklook::quicklook`]).
pub fn quicklook_any(options: &QuicklookOptions) -> Result<PathBuf, QuicklookError> {
    if !is_summary(&options.file) {
        return super::quicklook::quicklook(options);
    }
    let stat = options.stat.as_deref().unwrap_or("total_days");
    let png = options.output.clone().unwrap_or_else(|| {
        let dir = options.file.parent().unwrap_or(Path::new("."));
        dir.join(format!("quicklook_{stat}_mean.png"))
    });
    let nc = netcdf::open(&options.file).map_err(|cause| QuicklookError::Open { path: options.file.clone(), cause })?;
    let long_name = nc.variable(stat).and_then(|v| var_text(&v, "long_name")).unwrap_or_else(|| stat.to_string());
    drop(nc);
    summary_map(&options.file, stat, &format!("{stat}: {long_name}, mean over the years"), &png)
}

/// Whether `file` is a summary of `sstclim events` (per-year statistics).
fn is_summary(file: &Path) -> bool {
    netcdf::open(file).is_ok_and(|nc| nc.variable("year").is_some() && nc.variable("total_days").is_some())
}

/// Average statistic `stat` of `summary` over its years (NaN years left out) and draw it into
/// `png`, titled `title`.
pub fn summary_map(summary: &Path, stat: &str, title: &str, png: &Path) -> Result<PathBuf, QuicklookError> {
    let field = mean_over_years(summary, stat, title)?;
    draw_map(png, &field).map_err(|cause| QuicklookError::Draw { path: png.into(), cause })?;
    Ok(png.to_path_buf())
}

/// Statistic `stat` (`[year][lat][lon]`) of `summary` averaged over its years.
pub fn mean_over_years(summary: &Path, stat: &str, title: &str) -> Result<Field, QuicklookError> {
    let nc = netcdf::open(summary).map_err(|cause| QuicklookError::Open { path: summary.into(), cause })?;
    let read_err = |var: &str| {
        let var = var.to_string();
        move |cause| QuicklookError::Read { path: summary.into(), var: var.clone(), cause }
    };
    let var = nc.variable(stat).ok_or_else(|| QuicklookError::NoStatistic {
        path: summary.into(),
        asked: stat.into(),
        found: nc.variables().map(|v| v.name()).collect::<Vec<_>>().join(", "),
    })?;
    let dims: Vec<(String, usize)> = var.dimensions().iter().map(|d| (d.name(), d.len())).collect();
    let [(_, ny), (lat_dim, nlat), (lon_dim, nlon)] = &dims[..] else {
        return Err(QuicklookError::NoField { path: summary.into() });
    };
    let values: Vec<f32> = var.get_values(..).map_err(read_err(stat))?;
    let coord = |name: &str| -> Result<Vec<f64>, QuicklookError> {
        match nc.variable(name) {
            Some(v) => v.get_values(..).map_err(read_err(name)),
            // a curvilinear grid's index dimensions: drawn on the indices
            None => Ok((0..if name == lat_dim { *nlat } else { *nlon }).map(|i| i as f64).collect()),
        }
    };
    let (lat, lon) = (coord(lat_dim)?, coord(lon_dim)?);
    let n = nlat * nlon;
    let mut mean = vec![f64::NAN; n];
    let mut never_valid = vec![true; n];
    for c in 0..n {
        let (mut sum, mut count) = (0.0f64, 0usize);
        for y in 0..*ny {
            let v = values[y * n + c];
            if !v.is_nan() {
                sum += f64::from(v);
                count += 1;
            }
        }
        if count > 0 {
            mean[c] = sum / count as f64;
            never_valid[c] = false;
        }
    }
    // the colour scale ends at the 99.5th percentile of the cells (a few sea-ice cells, with few
    // values, can count many times the days of the rest); the cells above it take its colour
    let mut sorted: Vec<f64> = mean.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let cap = sorted.get((sorted.len() * 995 / 1000).min(sorted.len().saturating_sub(1))).copied();
    let capped = match (cap, sorted.last()) {
        (Some(cap), Some(&max)) if max > cap => {
            mean.iter_mut().filter(|v| **v > cap).for_each(|v| *v = cap);
            format!("; colours end at {cap:.3} (99.5% of cells; the largest is {max:.3})")
        }
        _ => String::new(),
    };
    let years: Vec<i32> = nc.variable("year").and_then(|v| v.get_values(..).ok()).unwrap_or_default();
    let span = match (years.first(), years.last()) {
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => format!("{ny} years"),
    };
    let units = var_text(&var, "units").unwrap_or_default();
    Ok(Field {
        values: mean,
        never_valid,
        lat,
        lon,
        stat: stat.to_string(),
        day: None,
        title: title.to_string(),
        subtitle: format!(
            "{stat} of {} averaged over {span}{capped}",
            summary.file_name().unwrap_or_default().to_string_lossy()
        ),
        units,
        index_axes: None,
    })
}
