//! Every file named by date checked against its own time axis (where it has one): a file
//! whose name says one day and whose time coordinate another is an error naming both, before
//! anything is read.
//!
//! Why it exists: the sample [`super::series`] reads through libnetcdf gives the input's
//! calendar, but a mislabelled file among ten thousand would otherwise be read as the day its
//! name says. Each file's header and time value are read by the header parsers on every core
//! ([`crate::input::header_facts`], no library, no child process); the few files they cannot
//! read (a compressed time chunk, a structure left to libhdf5) are dated through libnetcdf in
//! forked children, as the sample is, never guessed.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{series, DiscoverError};
use crate::calendar::{CfCalendar, Date};
use crate::input::{header_facts, TimeRead};
use crate::util::cftime::TimeUnits;

/// What the sample said of the files: the variable, the values of one field, the time
/// coordinate's name (none where the sampled files have no time axis) and the calendar.
pub(super) struct Sampled {
    pub var: String,
    pub field: u64,
    pub time_var: Option<String>,
    /// The sample's calendar, where a sampled file had one.
    pub cf: Option<(CfCalendar, PathBuf)>,
}

/// One file, from its header.
enum Verdict {
    /// One step, dated as named (or without a time axis).
    Fine,
    /// More values than a field (a time series named by date, or another grid).
    Larger,
    /// Its time axis says this other date.
    Mismatch(Date),
    /// Not read by the header parsers: the library dates it.
    Library,
}

fn verdict(path: &Path, named: Date, s: &Sampled) -> Verdict {
    let facts = header_facts(path, &s.var, s.time_var.as_deref().unwrap_or("time"));
    if facts.var_values.is_some_and(|n| n > s.field) {
        return Verdict::Larger;
    }
    let (units, calendar, values) = match facts.time {
        // no time coordinate where the sample had none: nothing to check; where the sample had
        // one, the library says whether this file really has none
        TimeRead::Absent if s.time_var.is_none() => return Verdict::Fine,
        TimeRead::Absent | TimeRead::Unread(_) => return Verdict::Library,
        // a climatology's axis dates no day (the sample's reading leaves it undated too)
        TimeRead::Found { climatology: true, .. } => return Verdict::Fine,
        TimeRead::Found { units: Some(u), calendar, values, .. } => (u, calendar, values),
        TimeRead::Found { units: None, .. } => return Verdict::Library,
    };
    let Ok(cf) = CfCalendar::parse(calendar.as_deref()) else { return Verdict::Library };
    if s.cf.as_ref().is_some_and(|(c, _)| *c != cf) {
        return Verdict::Library; // the library's reading names both calendars
    }
    let [value] = values[..] else { return Verdict::Library };
    let Ok(day) = TimeUnits::parse(&units, cf).and_then(|u| u.day_number_of(value)) else {
        return Verdict::Library;
    };
    let axis = Date::from(cf.date_of(day));
    if axis == named {
        Verdict::Fine
    } else {
        Verdict::Mismatch(axis)
    }
}

/// Check every file of `named` (date from its name, path) against its header: one step of
/// `s.var` each, and where it has a time axis, the date its name says.
pub(super) fn check_every(named: &[(Date, PathBuf)], s: &Sampled) -> Result<(), DiscoverError> {
    let verdicts: Vec<Verdict> = named.par_iter().map(|(d, p)| verdict(p, *d, s)).collect();
    let mut library = Vec::new();
    for ((name, path), v) in named.iter().zip(verdicts) {
        match v {
            Verdict::Fine => {}
            Verdict::Mismatch(axis) => {
                return Err(DiscoverError::NameDate { path: path.clone(), name: *name, axis });
            }
            Verdict::Larger | Verdict::Library => library.push((*name, path.clone())),
        }
    }
    if library.is_empty() {
        return Ok(());
    }
    let paths: Vec<PathBuf> = library.iter().map(|(_, p)| p.clone()).collect();
    let times = series::read_all(&paths, Some(&s.var)).map_err(DiscoverError::Dating)?;
    for ((name, path), t) in library.iter().zip(&times) {
        // a file without the variable is the readers' to report, with the rest of its checks
        if !t.has_var {
            continue;
        }
        if t.steps > 1 {
            let dim = t.time_dim.as_ref().map_or(String::new(), |d| d.1.clone());
            let (var, steps) = (t.var.clone(), t.steps as u64);
            return Err(DiscoverError::NamedSeries { path: path.clone(), var, dim, steps });
        }
        let Some(this) = t.cf() else { continue };
        if let Some((cf, first)) = &s.cf {
            if *cf != this {
                return Err(DiscoverError::CalendarsDiffer {
                    path: path.clone(),
                    calendar: this.cf_name(),
                    first: first.clone(),
                    first_calendar: cf.cf_name(),
                });
            }
        }
        if let Some(&axis) = t.dates().first() {
            if axis != *name {
                return Err(DiscoverError::NameDate { path: path.clone(), name: *name, axis });
            }
        }
    }
    Ok(())
}
