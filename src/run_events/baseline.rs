//! `sstclim events --baseline YEARS`: the climatology computed in the same run, then the events
//! detected against it exactly as with `--climatology FILE`.
//!
//! The climatology is the `run` job's (`--layout climatology`), with every engine and tile path
//! it has. On a single rank it stays in memory (`run`'s memory results, the rows the file would
//! hold, as float64) and the events are detected against it there, with the provenance the
//! file's attributes would give: nothing is written and read back, and `events --baseline`
//! still equals `run --layout climatology` followed by `events --climatology` bit for bit.
//!
//! Under MPI it goes through a file: the climatology job splits the days among the ranks, the
//! events job the rows, so each rank needs the others' days of its rows; the file (written as
//! fast as the other layouts, joined along `doy` by rank 0) is how they meet. It lives in a
//! hidden directory of the output directory (shared by the ranks, named for this job
//! (`crate::output::owner`) so that a dead job's is cleaned with its other staged files), made
//! while rank 0 holds the output directory's lock and removed whatever happens.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tracing::info;

use super::{check_targets, events_locked, find_analysis, EventsJobError, EventsOptions, EventsOutcome, Staged};
use crate::dist::agree::{agree, agree_ok};
use crate::dist::comm::Comm;
use crate::dist::Given;
use crate::error::Error;
use crate::output::lock::JobLock;
use crate::output::owner;
use crate::plan::{JobPlan, Results};
use crate::report::progress::Ui;

/// Run `plan` (a `run --layout climatology` job over the baseline years; its output directory
/// is replaced here) into a temporary directory, then [`super::events`] against its
/// climatology.nc. Everything that can be checked before the climatology is computed (the
/// analysis years' files, the outputs) is checked first.
pub fn events_with_baseline(
    opts: &EventsOptions,
    plan: &JobPlan,
    given: Given,
    comm: &Comm,
    ui: &Ui,
) -> Result<EventsOutcome, EventsJobError> {
    let t0 = Instant::now();
    agree_ok(comm, find_analysis(opts).and_then(|(_, _, inputs)| check_year(plan, inputs.calendar)))?;
    if comm.size() == 1 {
        return in_memory(opts, plan, comm, ui, t0);
    }
    // rank 0: the outputs checked, the lock taken for the whole job, the directory made
    let (mut lock, mut guard) = (None, None);
    let made = if comm.rank() == 0 {
        (|| {
            check_targets(opts)?;
            let held = JobLock::acquire(&opts.output, &opts.command_line).map_err(Error::from)?;
            let dir = opts.output.join(owner::partial_name(owner::Kind::Baseline));
            crate::util::signals::on_interrupt_remove(&dir);
            std::fs::create_dir_all(&dir).map_err(|cause| Error::Io { path: dir.clone(), cause })?;
            lock = Some(held);
            guard = Some(Staged(dir.clone()));
            Ok::<PathBuf, EventsJobError>(dir)
        })()
    } else {
        Ok(PathBuf::new())
    };
    let dir = agree(comm, made)?.swap_remove(0);
    let mut plan = plan.clone();
    plan.output.dir = dir.clone();
    let years = format!("{}-{}", plan.window.years.start(), plan.window.years.end());
    crate::dist::run(&plan, given, comm, ui)
        .map_err(|e| EventsJobError::Baseline { years: years.clone(), message: one_line(&e.to_string()) })?;
    let baseline_seconds = t0.elapsed().as_secs_f64();
    info!("the climatology of --baseline {years} computed in {baseline_seconds:.1} s");
    let opts = EventsOptions { climatology: dir.join(crate::input::climatology::FILE_NAME), ..opts.clone() };
    let outcome = events_locked(&opts, comm, ui, lock.take());
    // every rank has passed the events job's last agreement: nobody reads the file any more
    drop(guard);
    outcome.map(|o| EventsOutcome { baseline_seconds, seconds: t0.elapsed().as_secs_f64(), ..o })
}

/// [`events_with_baseline`] on a single rank: the outputs checked and the lock taken, the
/// climatology computed into memory, the events detected against it.
fn in_memory(
    opts: &EventsOptions,
    plan: &JobPlan,
    comm: &Comm,
    ui: &Ui,
    t0: Instant,
) -> Result<EventsOutcome, EventsJobError> {
    check_targets(opts)?;
    let lock = JobLock::acquire(&opts.output, &opts.command_line).map_err(Error::from)?;
    let years = format!("{}-{}", plan.window.years.start(), plan.window.years.end());
    let failed = |message: String| EventsJobError::Baseline { years: years.clone(), message: one_line(&message) };
    let plan = JobPlan { results: Results::Memory, ..plan.clone() };
    let values = crate::run::run(&plan, ui).map_err(|e| failed(e.to_string()))?.memory;
    let values = values.ok_or_else(|| failed("the climatology job kept no results in memory".into()))?;
    let baseline_seconds = t0.elapsed().as_secs_f64();
    info!("the climatology of --baseline {years} computed in {baseline_seconds:.1} s (kept in memory)");
    let attrs = crate::output::climatology::provenance(&plan.window, &plan.rules, &plan.stats);
    let opts = EventsOptions {
        clim_memory: Some(Arc::new(values)),
        clim_provenance: crate::input::climatology::provenance_text(&attrs),
        ..opts.clone()
    };
    let outcome = events_locked(&opts, comm, ui, Some(lock));
    outcome.map(|o| EventsOutcome { baseline_seconds, seconds: t0.elapsed().as_secs_f64(), ..o })
}

/// Events read a climatology of every day of the input calendar's year, day 366 of a real
/// calendar's leap years included: an `ordinal` climatology of baseline years none of which is
/// a leap year has no day 366 (`run` leaves it out), so it is refused before it is computed.
fn check_year(plan: &JobPlan, cf: crate::calendar::CfCalendar) -> Result<(), EventsJobError> {
    let (w, years) = (&plan.window, format!("{}-{}", plan.window.years.start(), plan.window.years.end()));
    if w.calendar == crate::calendar::Calendar::Ordinal
        && crate::calendar::is_real(cf)
        && !w.years.clone().any(|y| cf.is_leap(y))
    {
        let message = format!(
            "no year of {years} is a leap year, so an ordinal climatology of them has no day 366, which events \
             need; use --calendar hobday366 (marineHeatWaves') or baseline years with a leap year"
        );
        return Err(EventsJobError::Baseline { years, message });
    }
    Ok(())
}

/// `run`'s message in one line: its first line and the first of the lines under it (`run`
/// lists the missing files one a line), with how many more there were.
fn one_line(message: &str) -> String {
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut text = lines.next().unwrap_or_default().to_string();
    if let Some(next) = lines.next() {
        text.push_str(&format!("; {next}"));
    }
    match lines.count() {
        0 => {}
        n => text.push_str(&format!(" and {n} more")),
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_message_of_several_lines_becomes_one() {
        assert_eq!(super::one_line("a: b"), "a: b");
        assert_eq!(super::one_line("missing:\n  f1\n  f2\n  f3\n"), "missing:; f1 and 2 more");
    }
}
