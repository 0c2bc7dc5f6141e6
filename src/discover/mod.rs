//! Finding the inputs: which file, and which time step of it, holds each date the job needs,
//! decided before anything is read.
//!
//! `--input` is a template (`sst_{year}_{doy}.nc`), a directory, a glob (`'data/*.nc'`), a
//! file, or `@list.txt` (one of these per line); several are given one per line of the
//! plan's input (repeated on the command line). Two kinds of inputs come out of them:
//!
//! * files named by date, one step each (the daily products): their dates come from their
//!   names ([`pattern`]) without opening them, so that ten thousand files are found in
//!   milliseconds; a sample of them is opened to read the input's calendar, and every one's
//!   header to check that its name agrees with its time axis ([`names`]);
//! * time series (a file per month, year or decade; a whole model run): every file's CF time
//!   axis is read and each step becomes a date ([`series`]); a date in two files is an error
//!   naming both, and the files must agree on variable, grid and calendar.
//!
//! The dates the job needs depend on the input's calendar (a `360_day` year has no Mar 31), so
//! the caller passes them as a function of it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use tracing::info;

use crate::calendar::{CfCalendar, Date};
use crate::template::{Template, TemplateError};

mod glob;
mod missing;
mod names;
mod pattern;
mod series;

pub use missing::MissingSummary;
use names::Sampled;
pub use pattern::infer_template;

/// Where one date's field is: a file and the time step within it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub step: usize,
}

/// How the inputs were found (written to the outputs' `input_files` attribute).
#[derive(Clone, Debug)]
pub enum Origin {
    /// Files named by date, as this template names them.
    Template(Template),
    /// Files whose dates are on their time axes.
    Series { first: PathBuf, count: usize },
    /// A caller's array in memory (`crate::source::MemorySeries`) of `steps` steps.
    Memory { name: String, steps: usize },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Template(t) => t.fmt(f),
            Origin::Series { first, count: 1 } => write!(f, "{}", first.display()),
            Origin::Series { first, count } => write!(f, "{} and {} more files", first.display(), count - 1),
            Origin::Memory { name, steps } => write!(f, "memory:{name} ({steps} steps)"),
        }
    }
}

/// The resolved inputs of a job.
#[derive(Clone, Debug)]
pub struct Inputs {
    pub template: Origin,
    /// The inputs' CF calendar (proleptic Gregorian for files without a time axis).
    pub calendar: CfCalendar,
    /// Where each needed date is.
    pub files: BTreeMap<Date, Source>,
    /// What is missing (only with `--allow-missing`): the files a template expects, or for a
    /// time series the dates no file holds (as text).
    pub missing: Vec<PathBuf>,
}

impl Inputs {
    /// The first file, in date order.
    pub fn first(&self) -> Option<&Path> {
        self.files.values().next().map(|s| s.path.as_path())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("input '{0}' is neither a file, a directory, a glob, an @list nor a template with {{year}} and {{doy}} (or {{month}} and {{day}})")]
    NotFound(String),
    #[error("input '{0}' matches no file")]
    NoMatch(String),
    #[error("{}: cannot read the list of inputs: {cause}", path.display())]
    List { path: PathBuf, cause: std::io::Error },
    #[error("{}: cannot read directory: {cause}", dir.display())]
    UnreadableDir { dir: PathBuf, cause: std::io::Error },
    #[error("{}: found no NetCDF files named by date or with a time axis ({detail}); pass --input with a template such as '{hint}'", dir.display())]
    NoPattern { dir: PathBuf, detail: String, hint: String },
    #[error("{}: files follow several naming patterns ({patterns}); pass --input with one template", dir.display())]
    AmbiguousPattern { dir: PathBuf, patterns: String },
    #[error("{}: input file {kind}", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("{}: cannot read input file: {cause}", path.display())]
    Unreadable { path: PathBuf, cause: std::io::Error },
    #[error("{} of {total} input files are missing (--allow-missing skips them){summary}", missing.len())]
    MissingFiles { missing: Vec<PathBuf>, total: usize, summary: MissingSummary },
    #[error("{} of {total} days the job needs are in no input file (--allow-missing skips them){summary}", missing.len())]
    MissingDates { missing: Vec<PathBuf>, total: usize, summary: MissingSummary },
    /// Reading a file's header or time axis failed (the message names the file).
    #[error("{0}")]
    Dating(String),
    #[error("{}: no variable '{var}' (variables: {available})", path.display())]
    NoVariable { path: PathBuf, var: String, available: String },
    #[error("{}: '{var}' has a grid of {found} but {} has {expected}: every input file must have the same grid", path.display(), first.display())]
    Shape { path: PathBuf, var: String, found: String, expected: String, first: PathBuf },
    #[error("{}: calendar '{calendar}' but {} has '{first_calendar}': every input file must use one calendar", path.display(), first.display())]
    CalendarsDiffer { path: PathBuf, calendar: &'static str, first: PathBuf, first_calendar: &'static str },
    #[error("{date} is in two input files: {} and {} (overlapping time series: pass each date once)", first.display(), second.display())]
    Overlap { date: Date, first: PathBuf, second: PathBuf },
    #[error("{}: named for {name} but its time axis says {axis}", path.display())]
    NameDate { path: PathBuf, name: Date, axis: Date },
    #[error("{}: variable '{var}': dimension {dim} has length {steps}, but a file named by date holds one step (pass time series by directory, glob or list, with names not by day)", path.display())]
    NamedSeries { path: PathBuf, var: String, dim: String, steps: u64 },
    #[error("{} ({count} such files): not named by date and no time axis: its date is unknown", path.display())]
    NotDated { path: PathBuf, count: usize },
}

/// Resolve `input` (one input per line: template, directory, glob, file or `@list`) for the
/// dates `required` gives in the inputs' calendar, for variable `var` (detected if `None`).
pub fn discover(
    input: &str,
    var: Option<&str>,
    required: &dyn Fn(CfCalendar) -> Vec<Date>,
    allow_missing: bool,
) -> Result<Inputs, DiscoverError> {
    discover_extending(input, var, required, allow_missing, None)
}

/// [`discover`] for windows that extend past the climatology years `years` (`--window-edges
/// extend`) into the input where it has the days, as marineHeatWaves' do: the required dates
/// before (after) `years` are left out, not missing, where the input has none of them (the
/// series starts with the years, or ends with them), so those windows stop at the series' end.
/// A side that the input has in part is a gap in the record: its absent dates are missing.
pub fn discover_extending(
    input: &str,
    var: Option<&str>,
    required: &dyn Fn(CfCalendar) -> Vec<Date>,
    allow_missing: bool,
    years: Option<std::ops::RangeInclusive<i32>>,
) -> Result<Inputs, DiscoverError> {
    let specs: Vec<&str> = input.lines().map(str::trim).filter(|s| !s.is_empty()).collect();
    let want = Want { var, required, allow_missing, years };
    match specs[..] {
        [] => Err(DiscoverError::NotFound(input.into())),
        [one] if one.contains('{') => want.by_template(one.parse()?, None),
        [one] if Path::new(one).is_dir() => {
            let dir = Path::new(one);
            let names = pattern::scan(dir)?;
            match pattern::infer_template_from(dir, &names) {
                // the files named by date, from their names (no stat, no open but a sample)
                Ok(t) => {
                    let named = names
                        .iter()
                        .map(|n| dir.join(n))
                        .filter_map(|p| Some((pattern::date_of(&t, p.to_str()?)?, p)))
                        .collect();
                    want.by_names(t, named)
                }
                Err(e @ (DiscoverError::NoPattern { .. } | DiscoverError::AmbiguousPattern { .. })) => {
                    let files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
                    if files.is_empty() {
                        return Err(e);
                    }
                    // not named by date: a time series, or the hint to name them
                    match want.by_series(&files, true) {
                        Err(DiscoverError::NotDated { .. }) => Err(e),
                        r => r,
                    }
                }
                Err(e) => Err(e),
            }
        }
        _ => {
            let files = glob::expand(&specs)?;
            match pattern::dates_of_names(&files) {
                Some((t, named)) => want.by_names(t, named),
                None => want.by_series(&files, false),
            }
        }
    }
}

/// What the caller asks of discovery.
struct Want<'a> {
    var: Option<&'a str>,
    required: &'a dyn Fn(CfCalendar) -> Vec<Date>,
    allow_missing: bool,
    /// Windows extend past these years where the input has the days ([`discover_extending`]).
    years: Option<std::ops::RangeInclusive<i32>>,
}

/// Files named by date sampled for their calendar and a check of names against time axes.
const NAME_SAMPLE: usize = 16;

impl Want<'_> {
    /// Leave out of `missing` (and `missing_dates`, in step) the required dates past the
    /// extended years on a side where every one of them is missing: the input ends there.
    /// Returns the required dates that are left (what a report of missing files counts).
    fn past_the_series(
        &self,
        required: &[Date],
        missing: &mut Vec<PathBuf>,
        missing_dates: &mut Vec<Date>,
    ) -> Vec<Date> {
        let Some(years) = &self.years else { return required.to_vec() };
        let mut left = required.to_vec();
        let absent: std::collections::BTreeSet<Date> = missing_dates.iter().copied().collect();
        let beyond =
            |before: bool| move |d: &Date| if before { d.year < *years.start() } else { d.year > *years.end() };
        for before in [true, false] {
            let side: Vec<Date> = required.iter().copied().filter(beyond(before)).collect();
            if side.is_empty() || !side.iter().all(|d| absent.contains(d)) {
                continue;
            }
            info!(
                "the input has no day {} {}: the windows there stop at the series' end, as marineHeatWaves' do",
                if before { "before" } else { "after" },
                if before { years.start() } else { years.end() }
            );
            let keep: Vec<bool> = missing_dates.iter().map(|d| !beyond(before)(d)).collect();
            let mut k = keep.iter();
            missing.retain(|_| *k.next().unwrap_or(&true));
            let mut k = keep.iter();
            missing_dates.retain(|_| *k.next().unwrap_or(&true));
            left.retain(|d| !beyond(before)(d));
        }
        left
    }

    /// Files a template names: the required dates' files must exist (a stat each).
    fn by_template(
        &self,
        template: Template,
        known: Option<(CfCalendar, Option<Sampled>)>,
    ) -> Result<Inputs, DiscoverError> {
        let cf = known.as_ref().map_or(CfCalendar::ProlepticGregorian, |k| k.0);
        let required = (self.required)(cf);
        let mut files = BTreeMap::new();
        let mut missing = Vec::new();
        let mut missing_dates = Vec::new();
        for &date in &required {
            let file = template.expand(date);
            // only a file that is not there is missing (what --allow-missing skips): a
            // directory or a FIFO in its place is a mistake to report, not a gap in the record
            match std::fs::metadata(&file) {
                Ok(m) if m.is_file() => {
                    files.insert(date, Source { path: file, step: 0 });
                }
                Ok(m) => return Err(DiscoverError::NotAFile { kind: pattern::kind_of(&m.file_type()), path: file }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    missing.push(file);
                    missing_dates.push(date);
                }
                Err(cause) => return Err(DiscoverError::Unreadable { path: file, cause }),
            }
        }
        let named: Vec<(Date, PathBuf)> = files.iter().map(|(d, s)| (*d, s.path.clone())).collect();
        let (cf, sampled) = match known {
            Some(k) => k,
            None => {
                let (found, sampled) = self.check_names(&named)?;
                // another calendar may need other dates (a 360_day job has Feb 30): again in it
                if (self.required)(found) != required {
                    return self.by_template(template, Some((found, sampled)));
                }
                (found, sampled)
            }
        };
        if let Some(s) = &sampled {
            names::check_every(&named, s)?;
        }
        self.finish_template(template, files, missing, missing_dates, &required, cf)
    }

    fn finish_template(
        &self,
        template: Template,
        files: BTreeMap<Date, Source>,
        mut missing: Vec<PathBuf>,
        mut missing_dates: Vec<Date>,
        required: &[Date],
        cf: CfCalendar,
    ) -> Result<Inputs, DiscoverError> {
        let required = self.past_the_series(required, &mut missing, &mut missing_dates);
        if !missing.is_empty() && !self.allow_missing {
            let labels: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
            let summary = MissingSummary::new(&labels, &missing_dates, &files, &required, cf);
            return Err(DiscoverError::MissingFiles { missing, total: required.len(), summary });
        }
        Ok(Inputs { template: Origin::Template(template), calendar: cf, files, missing })
    }

    /// Files named by date found by a glob or list: their dates are their names'.
    fn by_names(&self, template: Template, named: BTreeMap<Date, PathBuf>) -> Result<Inputs, DiscoverError> {
        // a FIFO or a device in a file's place is a mistake to report (and would block the
        // opens below)
        for p in named.values() {
            match std::fs::metadata(p) {
                Ok(m) if m.is_file() => {}
                Ok(m) => {
                    return Err(DiscoverError::NotAFile { kind: pattern::kind_of(&m.file_type()), path: p.clone() })
                }
                Err(cause) => return Err(DiscoverError::Unreadable { path: p.clone(), cause }),
            }
        }
        let all: Vec<(Date, PathBuf)> = named.iter().map(|(d, p)| (*d, p.clone())).collect();
        let checked = self.check_names(&all).and_then(|(cf, sampled)| {
            // the files the job reads (another file of the directory, damaged or not, is not
            // the job's concern)
            if let Some(s) = &sampled {
                let needed: std::collections::BTreeSet<Date> = (self.required)(cf).into_iter().collect();
                let used: Vec<(Date, PathBuf)> = all.iter().filter(|(d, _)| needed.contains(d)).cloned().collect();
                names::check_every(&used, s)?;
            }
            Ok(cf)
        });
        let cf = match checked {
            Err(DiscoverError::NamedSeries { .. }) => {
                return self.by_series(&named.into_values().collect::<Vec<_>>(), false)
            }
            r => r?,
        };
        let required = (self.required)(cf);
        let (mut files, mut missing, mut missing_dates) = (BTreeMap::new(), Vec::new(), Vec::new());
        for &date in &required {
            match named.get(&date) {
                Some(p) => drop(files.insert(date, Source { path: p.clone(), step: 0 })),
                None => {
                    let expected = template.expand(date);
                    // a directory or FIFO in a file's place is a mistake, not a gap
                    if let Ok(m) = std::fs::metadata(&expected) {
                        if !m.is_file() {
                            return Err(DiscoverError::NotAFile {
                                kind: pattern::kind_of(&m.file_type()),
                                path: expected,
                            });
                        }
                    }
                    missing.push(expected);
                    missing_dates.push(date);
                }
            }
        }
        let mut inputs = self.finish_template(template, files, missing, missing_dates, &required, cf)?;
        inputs.calendar = cf;
        Ok(inputs)
    }

    /// The calendar of files named by date, from a sample of them (the first, the last and
    /// some between) read through libnetcdf: each must hold the variable in one step, dated
    /// (where it has a time axis) as its name says. Every file is then checked from its header
    /// ([`names::check_every`], with what the sample says); opening each of ten thousand
    /// daily files through the library would multiply the time discovery takes by a thousand.
    fn check_names(&self, named: &[(Date, PathBuf)]) -> Result<(CfCalendar, Option<Sampled>), DiscoverError> {
        if named.is_empty() {
            return Ok((CfCalendar::ProlepticGregorian, None));
        }
        let n = named.len();
        let mut picks: Vec<usize> =
            (0..NAME_SAMPLE.min(n)).map(|i| i * (n - 1) / (NAME_SAMPLE.min(n) - 1).max(1)).collect();
        picks.dedup();
        let sample: Vec<PathBuf> = picks.iter().map(|&i| named[i].1.clone()).collect();
        let first = series::read_all(&sample[..1], self.var).map_err(DiscoverError::Dating)?.remove(0);
        let times = series::read_all(&sample, Some(&first.var)).map_err(DiscoverError::Dating)?;
        let mut cf: Option<(CfCalendar, &PathBuf)> = None;
        for (&i, t) in picks.iter().zip(&times) {
            let (name_date, path) = &named[i];
            if !t.has_var {
                return Err(DiscoverError::NoVariable {
                    path: path.clone(),
                    var: t.var.clone(),
                    available: t.available.clone(),
                });
            }
            if t.steps > 1 {
                let dim = t.time_dim.as_ref().map_or(String::new(), |d| d.1.clone());
                let (var, steps) = (t.var.clone(), t.steps as u64);
                return Err(DiscoverError::NamedSeries { path: path.clone(), var, dim, steps });
            }
            let Some(this) = t.cf() else { continue };
            match cf {
                Some((c, p)) if c != this => {
                    return Err(DiscoverError::CalendarsDiffer {
                        path: path.clone(),
                        calendar: this.cf_name(),
                        first: p.clone(),
                        first_calendar: c.cf_name(),
                    })
                }
                _ => cf = Some((this, path)),
            }
            if let Some(&axis) = t.dates().first() {
                if axis != *name_date {
                    return Err(DiscoverError::NameDate { path: path.clone(), name: *name_date, axis });
                }
            }
        }
        let field = (first.shape.0 * first.shape.1) as u64;
        let time_var = times.iter().find_map(|t| t.time_var.clone());
        let cf = cf.map(|(c, p)| (c, p.clone()));
        let sampled = Sampled { var: first.var.clone(), field, time_var, cf: cf.clone() };
        Ok((cf.map_or(CfCalendar::ProlepticGregorian, |(c, _)| c), Some(sampled)))
    }

    /// A time series: every step of every file dated from its time axis. In a directory scan
    /// (`skip_others`), files without the variable are left out (a land mask beside the data).
    fn by_series(&self, files: &[PathBuf], skip_others: bool) -> Result<Inputs, DiscoverError> {
        let head = series::read_all(&files[..1], self.var).map_err(DiscoverError::Dating)?.remove(0);
        let var = head.var.clone();
        let times = series::read_all(files, Some(&var)).map_err(DiscoverError::Dating)?;
        let mut at: BTreeMap<Date, Source> = BTreeMap::new();
        let mut first: Option<(&PathBuf, &series::FileTimes, Option<CfCalendar>)> = None;
        let (mut undated, mut skipped) = (Vec::new(), 0usize);
        for (path, t) in files.iter().zip(&times) {
            if !t.has_var {
                if skip_others {
                    skipped += 1;
                    continue;
                }
                let available = t.available.clone();
                return Err(DiscoverError::NoVariable { path: path.clone(), var: var.clone(), available });
            }
            let Some(cf) = t.cf() else {
                undated.push(path);
                continue;
            };
            match first {
                None => first = Some((path, t, Some(cf))),
                Some((p0, t0, c0)) => {
                    if t.shape != t0.shape {
                        let text = |s: (usize, usize)| format!("lat={} x lon={}", s.0, s.1);
                        return Err(DiscoverError::Shape {
                            path: path.clone(),
                            var: var.clone(),
                            found: text(t.shape),
                            expected: text(t0.shape),
                            first: p0.clone(),
                        });
                    }
                    if c0 != Some(cf) {
                        return Err(DiscoverError::CalendarsDiffer {
                            path: path.clone(),
                            calendar: cf.cf_name(),
                            first: p0.clone(),
                            first_calendar: c0.map_or("none", CfCalendar::cf_name),
                        });
                    }
                }
            }
            for (step, date) in t.dates().into_iter().enumerate() {
                if let Some(before) = at.get(&date) {
                    return Err(DiscoverError::Overlap { date, first: before.path.clone(), second: path.clone() });
                }
                at.insert(date, Source { path: path.clone(), step });
            }
        }
        if let Some(path) = undated.first() {
            return Err(DiscoverError::NotDated { path: (*path).clone(), count: undated.len() });
        }
        let Some((p0, _, Some(cf))) = first else {
            let available = times.first().map_or(String::new(), |t| t.available.clone());
            return Err(DiscoverError::NoVariable { path: files[0].clone(), var, available });
        };
        if skipped > 0 {
            info!("{skipped} files without variable '{var}' left out of the time series");
        }
        let required = (self.required)(cf);
        let mut files_of = BTreeMap::new();
        let mut missing_dates = Vec::new();
        for &date in &required {
            match at.get(&date) {
                Some(s) => drop(files_of.insert(date, s.clone())),
                None => missing_dates.push(date),
            }
        }
        let mut missing: Vec<PathBuf> = missing_dates.iter().map(|d| PathBuf::from(d.to_string())).collect();
        let required = self.past_the_series(&required, &mut missing, &mut missing_dates);
        if !missing.is_empty() && !self.allow_missing {
            let labels: Vec<String> = missing_dates.iter().map(|d| d.to_string()).collect();
            let summary = MissingSummary::new(&labels, &missing_dates, &files_of, &required, cf);
            return Err(DiscoverError::MissingDates { missing, total: required.len(), summary });
        }
        let count = times.iter().filter(|t| t.has_var).count();
        // the file of the series' first date
        let first = at.values().next().map_or_else(|| p0.clone(), |s| s.path.clone());
        Ok(Inputs { template: Origin::Series { first, count }, calendar: cf, files: files_of, missing })
    }
}

#[cfg(test)]
mod tests;
