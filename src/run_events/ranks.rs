//! `sstclim events`' side of the MPI layer both jobs share ([`crate::dist`]): its error takes
//! in the ranks' agreement ([`crate::dist::agree`]), and its outputs are joined from the
//! ranks' parts ([`crate::dist::join`]) by appending each part's events and copying each
//! part's summary rows. The ranks take the shared split's contiguous shares of the latitude
//! rows ([`crate::dist::split`]); every cell's events and summaries depend on its own series
//! only, so the joined outputs are the same at any number of ranks.

use std::path::{Path, PathBuf};

use super::EventsJobError;
use crate::dist::join::{self, Part};
use crate::dist::RanksFailed;
use crate::events::files::events_file::EventsFile;
use crate::events::files::schema::Meta;
use crate::events::files::summary_file::SummaryFile;
use crate::input::Grid;

impl From<RanksFailed> for EventsJobError {
    fn from(e: RanksFailed) -> EventsJobError {
        EventsJobError::Ranks(e.0)
    }
}

/// Where rank `rank` stages its part of the output named `name`: beside the others' in the
/// job's one staging directory.
pub fn part_path(staging: &Path, rank: usize, name: &str) -> PathBuf {
    staging.join(format!("rank{rank}-{name}"))
}

/// Join the ranks' parts (every rank's part of every output, in `staging`, two outputs per
/// kind of event: events, summary) into the staged outputs `staged` (in that order; `metas`
/// per kind), removing each part once joined.
pub fn join_parts(
    staging: &Path,
    size: usize,
    staged: &[PathBuf],
    metas: &[Meta],
    grid: &Grid,
) -> Result<(), EventsJobError> {
    let part = |r: usize, name: &str| part_path(staging, r, name);
    let ranks = join::Staging { n_items: grid.nlat(), size, wrote: &|_| true, part: &part };
    join::join_each(staged, &ranks, |k, parts, out| {
        let joined = join_one(&metas[k / 2], k % 2 == 1, parts, out, grid);
        for p in parts {
            let _ = std::fs::remove_file(&p.path);
        }
        joined
    })
}

/// One output from its parts: the events appended, or the summaries' rows copied.
fn join_one(meta: &Meta, summary: bool, parts: &[Part], out: &Path, grid: &Grid) -> Result<(), EventsJobError> {
    if summary {
        let mut file = SummaryFile::create(out, meta, grid, true)?;
        for p in parts.iter().filter(|p| !p.items.is_empty()) {
            file.copy_rows(&p.path, p.items.clone())?;
        }
        file.finish()?;
    } else {
        let mut file = EventsFile::create(out, meta, grid)?;
        for p in parts {
            file.append_file(&p.path)?;
        }
        file.finish()?;
    }
    Ok(())
}
