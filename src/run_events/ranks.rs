//! `sstclim events` across MPI ranks: each rank takes a contiguous share of the latitude rows,
//! the ranks agree on every step's outcome (one all-gather of a status each rank reaches
//! whatever happened, so a failure on one never leaves another waiting), and rank 0 joins the
//! ranks' parts in rank order, which makes the outputs the same at any number of ranks: every
//! cell's events and summaries depend on its own series only.

use std::ops::Range;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::EventsJobError;
use crate::dist::comm::Comm;
use crate::events::files::events_file::EventsFile;
use crate::events::files::schema::Meta;
use crate::events::files::summary_file::SummaryFile;
use crate::input::Grid;

/// Rank `rank`'s rows of `nlat` among `size` ranks (empty for ranks beyond the rows).
pub fn rows_of(nlat: usize, rank: usize, size: usize) -> Range<usize> {
    nlat * rank / size..nlat * (rank + 1) / size
}

/// Every rank's `local` outcome on every rank: the values in rank order, or one error naming
/// the failing ranks. A single rank keeps its own error as it is.
pub fn agree<T: Serialize + DeserializeOwned>(
    comm: &Comm,
    local: Result<T, EventsJobError>,
) -> Result<Vec<T>, EventsJobError> {
    if comm.size() == 1 {
        return local.map(|v| vec![v]);
    }
    let status: Result<T, String> = local.map_err(|e| e.to_string());
    let bytes = serde_json::to_vec(&status).unwrap_or_else(|e| {
        serde_json::to_vec(&Err::<(), String>(format!("cannot encode status: {e}"))).expect("text")
    });
    let mut values = Vec::with_capacity(comm.size());
    let mut failures = Vec::new();
    for (r, b) in comm.all_gather_bytes(&bytes).iter().enumerate() {
        match serde_json::from_slice::<Result<T, String>>(b) {
            Ok(Ok(v)) => values.push(v),
            Ok(Err(message)) => failures.push((r, message)),
            Err(e) => failures.push((r, format!("unreadable status: {e}"))),
        }
    }
    if failures.is_empty() {
        Ok(values)
    } else {
        Err(EventsJobError::Ranks(crate::dist::describe_failures(&failures, comm.size())))
    }
}

/// [`agree`] on whether every rank succeeded, keeping this rank's value.
pub fn agree_ok<T>(comm: &Comm, local: Result<T, EventsJobError>) -> Result<T, EventsJobError> {
    if comm.size() == 1 {
        return local;
    }
    let (value, status) = match local {
        Ok(v) => (Some(v), Ok(())),
        Err(e) => (None, Err(e)),
    };
    agree(comm, status)?;
    Ok(value.expect("this rank succeeded"))
}

/// Join the ranks' parts (per rank: the part of every output, two per kind of event (events,
/// summary), and its rows, in rank order) into the staged outputs `staged` (in the same order;
/// `metas` per kind).
pub fn join_parts(
    parts: &[(Vec<PathBuf>, Range<usize>)],
    staged: &[PathBuf],
    metas: &[Meta],
    grid: &Grid,
) -> Result<(), EventsJobError> {
    for (k, meta) in metas.iter().enumerate() {
        let mut events = EventsFile::create(&staged[2 * k], meta, grid)?;
        let mut summary = SummaryFile::create(&staged[2 * k + 1], meta, grid, true)?;
        for (files, rows) in parts {
            events.append_file(&files[2 * k])?;
            if !rows.is_empty() {
                summary.copy_rows(&files[2 * k + 1], rows.clone())?;
            }
            for f in &files[2 * k..2 * k + 2] {
                let _ = std::fs::remove_file(f);
            }
        }
        events.finish()?;
        summary.finish()?;
    }
    Ok(())
}
