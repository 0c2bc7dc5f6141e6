//! The dates of files that carry them on a CF time axis: every step of every file of a time
//! series, and a sample of the files named by date (whose names must agree with their axes).
//!
//! Each file's header and time coordinate are read through libnetcdf in a forked child
//! ([`crate::input::contain`]): a damaged file ends the job with one line naming it, and the
//! children of several files run at once (the library lock is held only across each fork), so
//! a directory of many files is dated in parallel although libnetcdf is not thread-safe.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::calendar::{CfCalendar, Date};
use crate::input::{self, var_text, VarLayout};
use crate::util::cftime::TimeUnits;

/// What one file says of the job's variable and its time axis.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct FileTimes {
    /// The variable read (the one asked for, or the one detected).
    pub var: String,
    /// Whether the file holds that variable (the other fields are empty where not).
    pub has_var: bool,
    /// The file's variables, where it lacks the one asked for (for the message).
    pub available: String,
    /// The variable's time dimension (index, name), where it has one.
    pub time_dim: Option<(usize, String)>,
    /// Latitude and longitude lengths.
    pub shape: (usize, usize),
    /// Time steps of the variable (1 without a time dimension).
    pub steps: usize,
    /// The time coordinate variable's name, where the file has one.
    pub time_var: Option<String>,
    /// The time coordinate's calendar (CF name), where the file has a time coordinate.
    pub calendar: Option<String>,
    /// Each step's day number in that calendar ([`CfCalendar::day_number`]), increasing.
    pub days: Vec<i64>,
}

impl FileTimes {
    pub fn cf(&self) -> Option<CfCalendar> {
        self.calendar.as_deref().map(|c| CfCalendar::parse(Some(c)).expect("a name this module wrote"))
    }

    /// The date of each step.
    pub fn dates(&self) -> Vec<Date> {
        match self.cf() {
            Some(cf) => self.days.iter().map(|&n| Date::from(cf.date_of(n))).collect(),
            None => Vec::new(),
        }
    }
}

/// The coordinate variable of time dimension `dim`: the variable of that name, else a 1-D
/// variable along it with units `UNIT since DATE`, `standard_name = "time"` or `axis = "T"`
/// (a time coordinate named otherwise, as ERA5's `valid_time`).
fn time_coordinate<'f>(file: &'f netcdf::File, dim: &str) -> Option<netcdf::Variable<'f>> {
    let along = |v: &netcdf::Variable<'_>| {
        let dims = v.dimensions();
        dims.len() == 1 && dims[0].name() == dim
    };
    if let Some(v) = file.variable(dim).filter(along) {
        return Some(v);
    }
    let timelike = |v: &netcdf::Variable<'_>| {
        var_text(v, "units").is_some_and(|u| u.to_lowercase().contains(" since "))
            || var_text(v, "standard_name").is_some_and(|s| s == "time")
            || var_text(v, "axis").is_some_and(|a| a.eq_ignore_ascii_case("T"))
    };
    file.variables().find(|v| along(v) && timelike(v))
}

/// Reads `path`'s variable `var` (detected where `None`) and its time axis, in this process.
pub(super) fn read_file(path: &Path, var: Option<&str>) -> Result<FileTimes, String> {
    let shown = path.display();
    let file = input::open(path).map_err(|e| e.to_string())?;
    if let Some(v) = var {
        if file.variable(v).is_none() {
            let names: Vec<String> = file.variables().map(|v| v.name()).collect();
            let empty = FileTimes {
                var: v.into(),
                has_var: false,
                available: if names.is_empty() { "none".into() } else { names.join(", ") },
                time_dim: None,
                shape: (0, 0),
                steps: 0,
                time_var: None,
                calendar: None,
                days: Vec::new(),
            };
            return Ok(empty);
        }
    }
    let layout = VarLayout::inspect(&file, path, var, false).map_err(|e| e.to_string())?;
    let mut found = FileTimes {
        var: layout.name.clone(),
        has_var: true,
        available: String::new(),
        time_dim: layout.time_axis.map(|t| (t, layout.dims[t].0.clone())),
        shape: (layout.nlat(), layout.nlon()),
        steps: layout.steps(),
        time_var: None,
        calendar: None,
        days: Vec::new(),
    };
    let Some(t) = layout.time_axis else { return Ok(found) };
    let dim = &layout.dims[t].0;
    let Some(coord) = time_coordinate(&file, dim) else {
        if found.steps > 1 {
            return Err(format!(
                "{shown}: variable '{}': dimension {dim} has length {} but no time coordinate variable (units \
                 'UNIT since DATE') dates its steps",
                layout.name, found.steps
            ));
        }
        return Ok(found);
    };
    let name = coord.name();
    found.time_var = Some(name.clone());
    // a climatology's time axis (CF 7.4: `climatology` bounds) dates no day of a series:
    // left undated, so that an output directory given as input is refused as such
    if coord.attribute("climatology").is_some() {
        return Ok(found);
    }
    let problem = |what: String| format!("{shown}: time coordinate '{name}': {what}");
    let units = var_text(&coord, "units").ok_or_else(|| problem("has no units attribute".into()))?;
    let cf = CfCalendar::parse(var_text(&coord, "calendar").as_deref()).map_err(|e| problem(e.to_string()))?;
    let units = TimeUnits::parse(&units, cf).map_err(|e| problem(e.to_string()))?;
    let values = coord.get_values::<f64, _>(..).map_err(|e| problem(format!("cannot read its values: {e}")))?;
    if values.len() != found.steps {
        return Err(problem(format!("{} values for {} steps of '{}'", values.len(), found.steps, layout.name)));
    }
    let days: Vec<i64> =
        values.iter().map(|&v| units.day_number_of(v)).collect::<Result<_, _>>().map_err(|e| problem(e.to_string()))?;
    for (i, w) in days.windows(2).enumerate() {
        let (a, b) = (cf.date_of(w[0]), cf.date_of(w[1]));
        if w[1] == w[0] {
            return Err(problem(format!(
                "steps {i} and {} both fall on {a}: sstclim takes one value per day (average sub-daily data \
                 first, e.g. cdo daymean)",
                i + 1
            )));
        }
        if w[1] < w[0] {
            return Err(problem(format!("time is not increasing: step {} ({b}) comes after step {i} ({a})", i + 1)));
        }
    }
    found.calendar = Some(cf.cf_name().to_string());
    found.days = days;
    Ok(found)
}

/// [`read_file`] of every file in a forked child each, several at once; in `files` order.
pub(super) fn read_all(files: &[PathBuf], var: Option<&str>) -> Result<Vec<FileTimes>, String> {
    let one = |path: &PathBuf| {
        input::contain::contained(path, "reading the header", || read_file(path, var)).map_err(|e| e.to_string())
    };
    if files.len() <= 1 {
        return files.iter().map(one).collect();
    }
    // children do the work: more of them than cores only helps while they wait on the disk
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 16);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| e.to_string())?;
    pool.install(|| files.par_iter().map(one).collect())
}
