//! Event tables (`events.nc`: one column per field along an `event` dimension, the events in
//! cell then start order): the counts first, then every field event by event, one row of the
//! table each. The first event that differs is named with its field, its cell and its start.
//! Where the counts differ that is all that is said: past that event the two tables are not
//! aligned, so their fields are not compared value by value.

use std::path::Path;

use super::{beyond, values, CompareError, Comparison, VarDiff};
use crate::input::var_text;
use crate::util::cftime::{CfCalendar, TimeUnits};

/// One side: its path and every column (in float64), in the file's order.
struct Table<'a> {
    path: &'a Path,
    columns: Vec<(String, Vec<f64>)>,
    /// `time_start`'s units and calendar, to show an event's start as a date.
    time: Option<TimeUnits>,
}

impl Table<'_> {
    fn len(&self) -> usize {
        self.columns.first().map_or(0, |c| c.1.len())
    }

    fn column(&self, var: &str) -> Option<&[f64]> {
        self.columns.iter().find(|c| c.0 == var).map(|c| &c.1[..])
    }

    /// Event `k` as a reader finds it: `event[k]` with its cell and start where the table has
    /// them (sstclim's events.nc does).
    fn describe(&self, k: usize) -> String {
        let at = |var: &str| self.column(var).and_then(|c| c.get(k).copied());
        let mut what = Vec::new();
        for var in ["lat_index", "lon_index"] {
            if let Some(v) = at(var) {
                what.push(format!("{var} {v}"));
            }
        }
        if let Some(t) = at("time_start") {
            match self.time.as_ref().and_then(|u| u.date_of(t).ok()) {
                Some(date) => what.push(format!("starting {date}")),
                None => what.push(format!("time_start {t}")),
            }
        }
        match what.is_empty() {
            true => format!("event[{k}]"),
            false => format!("event[{k}] ({})", what.join(", ")),
        }
    }
}

/// `file`'s columns `vars` and its time units.
fn table<'a>(file: &netcdf::File, path: &'a Path, vars: &[String]) -> Result<Table<'a>, CompareError> {
    let columns = vars.iter().map(|v| Ok((v.clone(), values(file, path, v)?))).collect::<Result<_, CompareError>>()?;
    let time = file.variable("time_start").and_then(|v| {
        let text = |name: &str| var_text(&v, name);
        let calendar = CfCalendar::parse(text("calendar").as_deref()).ok()?;
        TimeUnits::parse(&text("units")?, calendar).ok()
    });
    Ok(Table { path, columns, time })
}

/// The first event of the first `n` where some column differs beyond `tolerance`, and that
/// column (the first in the file's order).
fn first_difference<'t>(a: &'t Table<'_>, b: &Table<'_>, n: usize, tolerance: f64) -> Option<(usize, &'t str)> {
    (0..n).find_map(|k| {
        a.columns
            .iter()
            .zip(&b.columns)
            .find(|((_, xa), (_, xb))| beyond(xa[k], xb[k], tolerance))
            .map(|((var, _), _)| (k, var.as_str()))
    })
}

/// Compare event table `name` of both sides, whose columns are `vars` on both.
pub(super) fn compare(
    name: &str,
    (fa, a): (&netcdf::File, &Path),
    (fb, b): (&netcdf::File, &Path),
    vars: &[String],
    tolerance: f64,
    out: &mut Comparison,
) -> Result<(), CompareError> {
    let (ta, tb) = (table(fa, a, vars)?, table(fb, b, vars)?);
    let (na, nb) = (ta.len(), tb.len());
    let first = first_difference(&ta, &tb, na.min(nb), tolerance);
    let show = |k: usize, var: &str| {
        let (x, y) = (ta.column(var).unwrap_or(&[])[k], tb.column(var).unwrap_or(&[])[k]);
        format!("{}: {var} {x} vs {y}", ta.describe(k))
    };
    if na != nb {
        let (pa, pb) = (ta.path.display(), tb.path.display());
        let counts = format!("{name}: {na} events in {pa} but {nb} in {pb}");
        out.problems.push(match first {
            Some((k, var)) => format!("{counts}; the first that differs is {}", show(k, var)),
            None => {
                let (longer, extra) = if na > nb { (&ta, pa) } else { (&tb, pb) };
                let n = na.min(nb);
                format!("{counts}; the first {n} are equal, and {} is only in {extra}", longer.describe(n))
            }
        });
        return Ok(());
    }
    for (var, xa) in &ta.columns {
        out.rows.push(VarDiff::of(name, var, xa, tb.column(var).unwrap_or(&[]), tolerance));
    }
    if let Some((k, var)) = first {
        out.problems.push(format!("{name}: the first event that differs is {}", show(k, var)));
    }
    Ok(())
}
