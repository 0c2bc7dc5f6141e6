//! The CF metadata every layout of the climatology job's outputs shares: the statistics'
//! attributes, the climatological time axis and the latitude/longitude coordinates. Both the
//! per-statistic files ([`super::create`]) and `climatology.nc` ([`super::climatology`]) are
//! defined with these, so the layouts say the same things the same way.

use netcdf::AttributeValue;

use super::{OutputError, OutputMeta, OutputSpec};
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

/// The year every target day's time is anchored in, where anchoring each day in the first
/// year that has it would not give an increasing axis: under `hobday366` day 60 (Feb 29) falls
/// in the first leap year, days 59 and 61 in the first year, so every day is placed in the
/// first leap year of the climatology (the `doy` coordinate keeps the target days). None:
/// each day at its first anchor (ordinal days increase within a year; day 366 exists in leap
/// years only and comes after day 365 of the first year).
pub(super) fn time_year(w: &crate::window::WindowSpec) -> Option<i32> {
    match w.calendar {
        crate::calendar::Calendar::Ordinal => None,
        crate::calendar::Calendar::Hobday366 => {
            let y0 = *w.years.start();
            (y0..y0 + 8).find(|&y| crate::calendar::is_leap(y))
        }
    }
}

/// Each target's time and climatology bounds, in days since Jan 1 of the first year of the
/// input's calendar (`meta.rules.cf`, whose name the time axis carries): a target's time is
/// its first anchor (under `hobday366` in a real calendar, its date in [`time_year`]), its
/// bounds the first window's start and the last window's end. Day numbers of that calendar,
/// so that a `360_day` or `noleap` axis decodes to the days the windows took.
pub(super) fn climatological_times(meta: &OutputMeta, targets: std::ops::Range<usize>) -> (Vec<f64>, Vec<f64>) {
    let (w, cf) = (&meta.window, meta.rules.cf);
    let y0 = *w.years.start();
    let base = cf.day_number(crate::calendar::CfDate { year: y0, month: 1, day: 1 });
    let h = i64::from(w.half_window);
    let leap =
        if crate::calendar::is_real(cf) { time_year(w).map(|_| (y0..y0 + 8).find(|&y| cf.is_leap(y))) } else { None };
    let number = |d: Date| crate::calendar::day_number_in(cf, d);
    let (mut times, mut bounds) = (Vec::new(), Vec::new());
    for t in targets {
        let doy = w.doys[t];
        let anchors: Vec<Date> = w.years.clone().filter_map(|y| w.calendar.anchor_in(cf, y, doy)).collect();
        let first = anchors.first().map_or(base + i64::from(doy) - 1, |&d| number(d));
        let last = anchors.last().map_or(first, |&d| number(d));
        let at = leap.flatten().and_then(|y| w.calendar.anchor_in(cf, y, doy)).map_or(first, number);
        times.push((at - base) as f64);
        bounds.push((first - h - base) as f64);
        bounds.push((last + h + 1 - base) as f64);
    }
    (times, bounds)
}

/// The `lat` and `lon` coordinate variables of an output file: the input's values with CF
/// attributes, or grid indices where the input had no coordinate variable.
///
/// With the input's dimension names and order, its 2-D coordinates and grid mapping (see
/// [`crate::nc::coords`]). Returns the dimension names for the statistics.
pub(super) fn put_lat_lon(
    file: &mut netcdf::FileMut,
    meta: &OutputMeta,
    path: &std::path::Path,
) -> Result<[String; 2], OutputError> {
    crate::nc::coords::put_grid(file, &meta.grid).map_err(|(var, e)| OutputError::write(path, &var, e))
}

/// The CF attributes of statistic `stat` (0: the mean, then the percentiles) of a job's
/// outputs, the same in every layout: `long_name`, `units` (the input's, or degrees Celsius
/// with `--units degC`), the input's `standard_name` (a climatological mean or percentile of
/// sea surface temperature is a sea surface temperature; `cell_methods` says which), CF 7.4
/// `cell_methods`, `coordinates` naming the `doy` auxiliary coordinate (and a curvilinear
/// grid's 2-D latitude and longitude), `grid_mapping` where the input has one, and the window.
pub fn stat_attributes(stat: usize, meta: &OutputMeta, spec: &OutputSpec) -> Vec<(&'static str, AttributeValue)> {
    let w = &meta.window;
    let stats = &meta.stats;
    let (y0, y1) = (*w.years.start(), *w.years.end());
    let window_days = 2 * w.half_window + 1;
    let what = if stat == 0 {
        "mean".to_string()
    } else {
        let p = stats.percentiles[stat - 1].text();
        format!("{p}{} percentile", ordinal_suffix(p))
    };
    let mut attrs: Vec<(&'static str, AttributeValue)> = vec![(
        "long_name",
        format!(
            "climatological {what} of {} ({window_days}-day window, {y0}-{y1})",
            meta.var_meta.long_name.as_deref().unwrap_or(&meta.input_var)
        )
        .into(),
    )];
    if let Some(units) = spec.output_units(meta) {
        attrs.push(("units", units.into()));
    }
    if let Some(sn) = &meta.var_meta.standard_name {
        attrs.push(("standard_name", sn.as_str().into()));
    }
    // CF 7.4: the samples of every year's window, then across years. CF has no percentile
    // method: a percentile is the pooled samples' order statistic, stated in the comment
    // (CF 7.3.3: free text in parentheses, without colons or parentheses inside)
    let cell_methods = if stat == 0 {
        format!(
            "time: mean within years time: mean over years (mean of the daily values within {} days of the target day over {y0}-{y1})",
            w.half_window
        )
    } else {
        format!(
            "time: point within years time: point over years ({what} of the pooled daily values within {} days of the target day over {y0}-{y1}, {})",
            w.half_window,
            stats.method.description().replace(['(', ')', ':'], "")
        )
    };
    attrs.push(("cell_methods", cell_methods.into()));
    // the day of year, and a curvilinear grid's 2-D latitude and longitude (CF 5.2)
    attrs.push(("coordinates", crate::nc::coords::coordinates(&meta.grid, "doy").into()));
    if let Some(mapping) = crate::nc::coords::grid_mapping(&meta.grid) {
        attrs.push(("grid_mapping", mapping.into()));
    }
    if stat > 0 {
        let p = &stats.percentiles[stat - 1];
        attrs.push(("percentile", (p.fraction() * 100.0).into()));
        attrs.push(("percentile_method", stats.method.description().into()));
    }
    attrs.push(("window_length_days", i32::from(window_days).into()));
    attrs
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
