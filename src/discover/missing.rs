//! The missing-input error's text: what is missing, the likely cause, and a short list.

use std::collections::BTreeMap;

use crate::calendar::{CfCalendar, Date};

/// Missing files listed up to this many; a longer list is summarised.
const LIST_ALL: usize = 10;

/// What the missing-file error says beyond the count: the days and years missing, the likely
/// cause, and the files (all of a short list; the first and last few of a long one).
#[derive(Clone, Debug)]
pub struct MissingSummary {
    pub(super) text: String,
}

impl std::fmt::Display for MissingSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Numbers as ranges: `116-120, 274-278`.
fn ranges(values: impl IntoIterator<Item = i32>) -> String {
    let mut v: Vec<i32> = values.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { v[i].to_string() } else { format!("{}-{}", v[i], v[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

impl MissingSummary {
    /// `missing` names what is missing (the expected files, or a time series' dates), of
    /// `dates`; `found` are the dates present; `cf` the input's calendar (for days of year).
    pub(super) fn new(
        missing: &[String],
        dates: &[Date],
        found: &BTreeMap<Date, super::Source>,
        required: &[Date],
        cf: CfCalendar,
    ) -> MissingSummary {
        let doy = |d: &Date| i32::from(cf.day_of_year((*d).into()));
        let missing_days = ranges(dates.iter().map(doy));
        let missing_years = ranges(dates.iter().map(|d| d.year));
        let needed_days = ranges(required.iter().map(doy));
        let found_days = ranges(found.keys().map(doy));
        let found_years: std::collections::BTreeSet<i32> = found.keys().map(|d| d.year).collect();
        let found_doys: std::collections::BTreeSet<i32> = found.keys().map(doy).collect();
        // the likely cause: no file at all, whole years absent, days outside what the dataset
        // holds, or gaps in the record
        let cause = if found.is_empty() {
            format!(
                "no file the job needs exists: check --input (the first one expected is {})",
                missing.first().map_or("", |p| p.as_str())
            )
        } else if dates.iter().all(|d| !found_years.contains(&d.year)) {
            format!(
                "the dataset holds years {} and the job asks for {}: check the years asked for (run's --baseline, events' --years)",
                ranges(found_years.iter().copied()),
                ranges(required.iter().map(|d| d.year))
            )
        } else if dates.iter().all(|d| !found_doys.contains(&doy(d))) {
            format!(
                "the dataset holds days {found_days} and the windows need days {needed_days} (target days and \
                 --half-window): narrow --doys or --half-window to the data, or pass --allow-missing"
            )
        } else {
            "gaps in the record: --allow-missing skips them (the report counts them)".to_string()
        };
        let mut text = format!(": days {missing_days} of years {missing_years}; {cause}");
        let line = |p: &String| format!("\n  {p}");
        if missing.len() <= LIST_ALL {
            text.extend(missing.iter().map(line));
        } else {
            text.extend(missing[..3].iter().map(line));
            text.push_str(&format!("\n  ... {} more ...", missing.len() - 6));
            text.extend(missing[missing.len() - 3..].iter().map(line));
        }
        MissingSummary { text }
    }
}
