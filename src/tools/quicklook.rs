//! Quicklook maps of an output file (`sstclim quicklook`, `run --quicklook D`, the demo): one
//! statistic on one target day as a PNG drawn with `plotters` — a title naming the statistic,
//! day, years and percentile method, longitude/latitude axes with ticks, a colour bar with the
//! units, and cells without a value shown apart from the colour scale: never valid in the
//! climatology (land, ice) in grey, missing on this day only in white.
//!
//! Text is drawn with a small subset of DejaVu Sans embedded in the binary
//! (`assets/fonts/`), so that neither the build nor the run needs system fonts.

use std::path::{Path, PathBuf};

use netcdf::AttributeValue;

mod draw;

pub use draw::{draw_map, turbo};

/// The embedded font (DejaVu Sans, ASCII and a few symbols; licence beside it).
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf");

/// Why a quicklook could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum QuicklookError {
    #[error("{}: cannot open: {cause}", path.display())]
    Open { path: PathBuf, cause: netcdf::Error },
    #[error("{}: cannot read variable '{var}': {cause}", path.display())]
    Read { path: PathBuf, var: String, cause: netcdf::Error },
    #[error("{}: no statistic '{asked}' (the file holds: {found})", path.display())]
    NoStatistic { path: PathBuf, asked: String, found: String },
    #[error("{}: holds no gridded statistic (a variable with latitude and longitude dimensions)", path.display())]
    NoField { path: PathBuf },
    #[error("{}: no target day {day} (the file holds days {days})", path.display())]
    NoDay { path: PathBuf, day: u16, days: String },
    #[error("{}: cannot draw the map: {cause}", path.display())]
    Draw { path: PathBuf, cause: String },
}

/// What to draw and where (`sstclim quicklook`'s flags).
#[derive(Clone, Debug, Default)]
pub struct QuicklookOptions {
    pub file: PathBuf,
    /// Target day of year (default: the file's first).
    pub day: Option<u16>,
    /// Statistic: `mean`, `p90`, a variable name (default: the only one, else the first
    /// percentile).
    pub stat: Option<String>,
    /// The PNG (default: beside the file, `quicklook_{stat}_doy{D}.png`).
    pub output: Option<PathBuf>,
}

/// One statistic on one day, ready to draw: `values` in `(lat, lon)` order with NaN for no
/// value, `lat`/`lon` the cell centres (the indices on a curvilinear grid).
#[derive(Clone, Debug)]
pub struct Field {
    pub values: Vec<f64>,
    /// Cells without a value on any sampled day of the file (land, permanent ice).
    pub never_valid: Vec<bool>,
    pub lat: Vec<f64>,
    pub lon: Vec<f64>,
    /// `mean`, `p90`, ...
    pub stat: String,
    pub day: Option<u16>,
    pub title: String,
    pub subtitle: String,
    pub units: String,
    /// A curvilinear grid (2-D latitude and longitude) is drawn on its index space: `lat` and
    /// `lon` are then the row and column indices, and these the row and column dimensions.
    pub index_axes: Option<(String, String)>,
}

/// Draw the quicklook `options` ask for; returns the PNG written.
pub fn quicklook(options: &QuicklookOptions) -> Result<PathBuf, QuicklookError> {
    let field = read_field(&options.file, options.stat.as_deref(), options.day)?;
    let png = options.output.clone().unwrap_or_else(|| {
        let dir = options.file.parent().unwrap_or(Path::new("."));
        dir.join(default_name(&field))
    });
    draw_map(&png, &field).map_err(|cause| QuicklookError::Draw { path: png.clone(), cause })?;
    Ok(png)
}

/// `quicklook_p90_doy197.png`.
pub fn default_name(field: &Field) -> String {
    match field.day {
        Some(d) => format!("quicklook_{}_doy{d:03}.png", field.stat),
        None => format!("quicklook_{}.png", field.stat),
    }
}

/// Quicklooks of target day `day` for every statistic among `outputs` (a run's files), into
/// `dir`. Files that do not hold the day are skipped; none holding it is an error.
pub fn quicklooks_of_run(outputs: &[PathBuf], day: u16, dir: &Path) -> Result<Vec<PathBuf>, QuicklookError> {
    let mut drawn = Vec::new();
    let mut last_err = None;
    for file in outputs.iter().filter(|p| p.extension().is_some_and(|e| e == "nc")) {
        let stats = statistics(file)?;
        for (_, stat) in stats {
            match read_field(file, Some(&stat), Some(day)) {
                Ok(field) => {
                    let png = dir.join(default_name(&field));
                    draw_map(&png, &field).map_err(|cause| QuicklookError::Draw { path: png.clone(), cause })?;
                    drawn.push(png);
                }
                Err(e @ QuicklookError::NoDay { .. }) => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
    }
    match (drawn.is_empty(), last_err) {
        (true, Some(e)) => Err(e),
        _ => Ok(drawn),
    }
}

/// Quicklooks of target day `day` from the output files in `dir` (a run's output
/// directory): per-day files of that day, and files holding every day.
pub fn quicklooks_of_dir(dir: &Path, day: u16) -> Result<Vec<PathBuf>, QuicklookError> {
    let entries = std::fs::read_dir(dir).map_err(|cause| QuicklookError::Draw {
        path: dir.into(),
        cause: format!("cannot list the output directory: {cause}"),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".nc") && (!name.contains("_doy") || name.contains(&format!("_doy{day:03}")))
        })
        .collect();
    files.sort();
    quicklooks_of_run(&files, day, dir)
}

/// A variable attribute as text or number.
fn attr(var: &netcdf::Variable<'_>, name: &str) -> Option<AttributeValue> {
    var.attribute_value(name).and_then(Result::ok)
}

fn attr_text(value: Option<AttributeValue>) -> Option<String> {
    crate::input::attr_text(&value?)
}

fn attr_f64(value: Option<AttributeValue>) -> Option<f64> {
    match value? {
        AttributeValue::Double(x) => Some(x),
        AttributeValue::Float(x) => Some(f64::from(x)),
        AttributeValue::Int(x) => Some(f64::from(x)),
        AttributeValue::Short(x) => Some(f64::from(x)),
        AttributeValue::Doubles(v) => v.first().copied(),
        AttributeValue::Floats(v) => v.first().map(|&x| f64::from(x)),
        _ => None,
    }
}

/// A percentile as its statistic's name: 90 -> `p90`, 97.5 -> `p97.5`.
fn percentile_name(p: f64) -> String {
    format!("p{}", if p.fract() == 0.0 { format!("{p:.0}") } else { format!("{p}") })
}

/// Is `name` a latitude (`true`) or longitude (`false`) dimension, or neither?
fn axis_of(name: &str) -> Option<bool> {
    match name.to_ascii_lowercase().as_str() {
        "lat" | "latitude" | "y" | "nav_lat" | "nlat" | "rlat" | "j" | "nj" | "yh" => Some(true),
        "lon" | "longitude" | "x" | "nav_lon" | "nlon" | "rlon" | "i" | "ni" | "xh" => Some(false),
        _ => None,
    }
}

/// The 2-D auxiliary coordinate `var`'s `coordinates` attribute names over its last two
/// dimensions (a curvilinear grid's latitude or longitude), if any.
fn curvilinear(nc: &netcdf::File, var: &netcdf::Variable<'_>) -> Option<String> {
    let dims: Vec<String> = var.dimensions().iter().map(|d| d.name()).collect();
    let last = dims.get(dims.len().checked_sub(2)?..)?;
    let names = attr_text(attr(var, "coordinates"))?;
    names
        .split_whitespace()
        .find(|n| {
            nc.variable(n).is_some_and(|c| {
                let mut d: Vec<String> = c.dimensions().iter().map(|d| d.name()).collect();
                d.sort();
                let mut l = last.to_vec();
                l.sort();
                d == l
            })
        })
        .map(String::from)
}

/// The statistics of `file`: (variable name, statistic name). A statistic is a variable whose
/// last two dimensions are latitude and longitude; it is named by its `percentile`
/// attribute (`p90`), else by the name's suffix after the input variable (`sst_mean` and
/// `mean` are both `mean`), so files before and after the `{var}_{stat}` naming both work.
pub fn statistics(file: &Path) -> Result<Vec<(String, String)>, QuicklookError> {
    let nc = netcdf::open(file).map_err(|cause| QuicklookError::Open { path: file.into(), cause })?;
    let mut out = Vec::new();
    // a curvilinear grid's 2-D latitude and longitude are coordinates, not statistics
    let coordinates: Vec<String> = nc
        .variables()
        .filter_map(|v| attr_text(attr(&v, "coordinates")))
        .flat_map(|c| c.split_whitespace().map(String::from).collect::<Vec<_>>())
        .collect();
    for var in nc.variables() {
        if coordinates.contains(&var.name()) {
            continue;
        }
        let dims: Vec<String> = var.dimensions().iter().map(|d| d.name()).collect();
        let n = dims.len();
        let named = n >= 2 && axis_of(&dims[n - 2]) == Some(true) && axis_of(&dims[n - 1]) == Some(false);
        if !named && (n < 2 || curvilinear(&nc, &var).is_none()) {
            continue;
        }
        let name = var.name();
        let stat = match attr_f64(attr(&var, "percentile")) {
            Some(p) => percentile_name(p),
            None if name == "mean" || name.ends_with("_mean") => "mean".into(),
            None => name.rsplit('_').next().unwrap_or(&name).to_string(),
        };
        out.push((name, stat));
    }
    Ok(out)
}

/// Read statistic `stat` (default: the only one, else the first percentile) on target day
/// `day` (default: the first) of `file`.
pub fn read_field(file: &Path, stat: Option<&str>, day: Option<u16>) -> Result<Field, QuicklookError> {
    let (var_name, stat_name) = choose_statistic(file, stat)?;
    let nc = netcdf::open(file).map_err(|cause| QuicklookError::Open { path: file.into(), cause })?;
    let read_err = |var: &str| {
        let var = var.to_string();
        move |cause| QuicklookError::Read { path: file.into(), var: var.clone(), cause }
    };
    let var = nc.variable(&var_name).ok_or_else(|| QuicklookError::NoField { path: file.into() })?;
    let dims: Vec<(String, usize)> = var.dimensions().iter().map(|d| (d.name(), d.len())).collect();
    let (nlat, nlon) = (dims[dims.len() - 2].1, dims[dims.len() - 1].1);
    let coord = |name: &str, n: usize| -> Vec<f64> {
        nc.variable(name)
            .and_then(|v| v.get_values::<f64, _>(..).ok())
            .filter(|v| v.len() == n)
            .unwrap_or_else(|| (0..n).map(|i| i as f64).collect())
    };
    let (row, col) = (&dims[dims.len() - 2].0, &dims[dims.len() - 1].0);
    // 2-D latitude and longitude: drawn on the grid's index space, not reprojected
    let index_axes = curvilinear(&nc, &var).map(|_| (row.clone(), col.clone()));
    let index = |n: usize| (0..n).map(|i| i as f64).collect::<Vec<f64>>();
    let (lat, lon) = match index_axes {
        Some(_) => (index(nlat), index(nlon)),
        None => (coord(row, nlat), coord(col, nlon)),
    };
    // the target days along the leading dimension (`doy` names them; one step without it)
    let steps = if dims.len() == 3 { dims[0].1 } else { 1 };
    let doys: Option<Vec<i32>> = nc
        .variable("doy")
        .and_then(|v| v.get_values::<i32, _>(..).ok())
        .filter(|d| d.len() == steps)
        .or_else(|| doy_from_name(file).filter(|_| steps == 1).map(|d| vec![i32::from(d)]));
    let step = match (day, &doys) {
        (None, _) => 0,
        (Some(d), Some(doys)) => doys.iter().position(|&x| x == i32::from(d)).ok_or_else(|| QuicklookError::NoDay {
            path: file.into(),
            day: d,
            days: day_ranges(doys),
        })?,
        (Some(_), None) => 0,
    };
    let fill = attr_f64(attr(&var, "_FillValue"));
    let read_step = |t: usize| -> Result<Vec<f64>, QuicklookError> {
        let mut v = if dims.len() == 3 {
            var.get_values::<f64, _>((t, .., ..)).map_err(read_err(&var_name))?
        } else {
            var.get_values::<f64, _>(..).map_err(read_err(&var_name))?
        };
        for x in &mut v {
            if fill.is_some_and(|f| *x == f) || !x.is_finite() {
                *x = f64::NAN;
            }
        }
        Ok(v)
    };
    let values = read_step(step)?;
    // never valid: missing on every sampled day of the file (up to 16 spread over it), or of
    // the per-day files beside it
    let mut never_valid: Vec<bool> = values.iter().map(|v| v.is_nan()).collect();
    let mut sampled = 1;
    if steps > 1 {
        for t in sample(steps, 16).into_iter().filter(|&t| t != step) {
            let other = read_step(t)?;
            never_valid.iter_mut().zip(&other).for_each(|(n, v)| *n &= v.is_nan());
            sampled += 1;
        }
    } else {
        for sibling in siblings(file) {
            let Ok(other) = netcdf::open(&sibling) else { continue };
            let Some(v) = other.variable(&var_name) else { continue };
            let Ok(other) = v.get_values::<f64, _>(..) else { continue };
            if other.len() != values.len() {
                continue;
            }
            never_valid.iter_mut().zip(&other).for_each(|(n, &v)| *n &= fill.is_some_and(|f| v == f) || !v.is_finite());
            sampled += 1;
        }
    }
    if sampled == 1 {
        // one day alone cannot tell land from a gap: all are "no value"
        never_valid.iter_mut().for_each(|n| *n = false);
    }
    let day = doys.as_ref().map(|d| d[step]).and_then(|d| u16::try_from(d).ok());
    let (title, subtitle, units) = titles(&nc, &var, &stat_name, day);
    Ok(Field { values, never_valid, lat, lon, stat: stat_name, day, title, subtitle, units, index_axes })
}

/// The variable and statistic name of `stat` in `file` (default: the only one, else the first
/// percentile).
fn choose_statistic(file: &Path, stat: Option<&str>) -> Result<(String, String), QuicklookError> {
    let stats = statistics(file)?;
    if stats.is_empty() {
        return Err(QuicklookError::NoField { path: file.into() });
    }
    let chosen = match stat {
        Some(asked) => stats.iter().find(|(var, s)| s == asked || var == asked || var.ends_with(&format!("_{asked}"))),
        None if stats.len() == 1 => stats.first(),
        None => stats.iter().find(|(_, s)| s.starts_with('p')).or(stats.first()),
    };
    chosen.cloned().ok_or_else(|| {
        let found = stats.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join(", ");
        QuicklookError::NoStatistic { path: file.into(), asked: stat.unwrap_or("").into(), found }
    })
}

/// The map's title, subtitle and units, from the variable's and the file's attributes.
fn titles(
    nc: &netcdf::File,
    var: &netcdf::Variable<'_>,
    stat_name: &str,
    day: Option<u16>,
) -> (String, String, String) {
    let global = |name: &str| attr_text(nc.attribute(name).and_then(|a| a.value().ok()));
    let input_var = global("input_variable").unwrap_or_default();
    let what = attr_text(attr(var, "long_name")).unwrap_or_else(|| format!("{stat_name} of {input_var}"));
    let years = global("climatology_years").map(|y| format!("years {y}")).unwrap_or_default();
    let window = attr_f64(attr(var, "window_length_days")).map(|w| format!("{w:.0}-day window")).unwrap_or_default();
    let method = attr_text(attr(var, "percentile_method"))
        .or_else(|| global("percentile_method").filter(|_| stat_name.starts_with('p')))
        .map(|m| format!("method: {m}"))
        .unwrap_or_default();
    let day_text = day.map(|d| format!("day {d}")).unwrap_or_default();
    let title = [stat_name, &day_text].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(", ");
    let title = format!("{title}: {what}");
    // what the long name already says is not said again
    let said = |part: &str| !part.is_empty() && what.contains(part.trim_start_matches("years "));
    let subtitle =
        [years, window, method].into_iter().filter(|s| !s.is_empty() && !said(s)).collect::<Vec<_>>().join("; ");
    let units = attr_text(attr(var, "units")).unwrap_or_default();
    (title, subtitle, units)
}

/// Up to `k` indices spread evenly over `0..n`.
fn sample(n: usize, k: usize) -> Vec<usize> {
    let k = k.min(n).max(1);
    let mut v: Vec<usize> = (0..k).map(|i| i * (n - 1) / (k - 1).max(1)).collect();
    v.dedup();
    v
}

/// The target day a per-day file's name gives (`p90_doy197.nc` -> 197).
fn doy_from_name(file: &Path) -> Option<u16> {
    let name = file.file_name()?.to_str()?;
    let at = name.rfind("doy")? + 3;
    name.get(at..at + 3)?.parse().ok()
}

/// Up to 16 other per-day files of the same statistic beside `file` (`p90_doy*.nc`).
fn siblings(file: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else { return Vec::new() };
    let Some(at) = name.rfind("doy") else { return Vec::new() };
    let (head, tail) = (&name[..at + 3], name.get(at + 6..).unwrap_or(""));
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_str()?.to_string();
            let digits = n.strip_prefix(head)?.strip_suffix(tail)?;
            (digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit()) && n != name).then(|| e.path())
        })
        .collect();
    found.sort();
    let picks = sample(found.len().max(1), 16);
    if found.is_empty() {
        return found;
    }
    picks.into_iter().map(|i| found[i].clone()).collect()
}

/// Days as ranges: `152-243` or `1-59, 61-366`.
pub fn day_ranges(days: &[i32]) -> String {
    let mut sorted = days.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { sorted[i].to_string() } else { format!("{}-{}", sorted[i], sorted[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_are_named_by_percentile_or_suffix() {
        assert_eq!(percentile_name(90.0), "p90");
        assert_eq!(percentile_name(97.5), "p97.5");
        assert_eq!(day_ranges(&[3, 1, 2, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(sample(92, 4), [0, 30, 60, 91]);
        assert_eq!(sample(1, 16), [0]);
        assert_eq!(doy_from_name(Path::new("r/p90_doy197.nc")), Some(197));
        assert_eq!(doy_from_name(Path::new("r/p90.nc")), None);
    }
}
