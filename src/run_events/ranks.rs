//! `sstclim events`' side of the MPI layer both jobs share ([`crate::dist`]): its error takes
//! in the ranks' agreement ([`crate::dist::agree`]), and its outputs are joined from the
//! ranks' parts ([`crate::dist::join`]): each part's events read raw and written at once as a
//! job of one rank writes them, each part's summary rows copied. The ranks take the shared split's contiguous shares of the latitude
//! rows ([`crate::dist::split`]); every cell's events and summaries depend on its own series
//! only, so the joined outputs are the same at any number of ranks.

use std::path::{Path, PathBuf};

use super::EventsJobError;
use crate::dist::join::{self, Part};
use crate::dist::RanksFailed;
use crate::error::Error;
use crate::events::files::catalogue::Parts;
use crate::events::files::events_file::EventsFile;
use crate::events::files::{compressed, direct};
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
/// per kind), removing each part once joined, on `threads` threads.
pub fn join_parts(
    staging: &Path,
    size: usize,
    staged: &[PathBuf],
    metas: &[Meta],
    (grid, threads): (&Grid, usize),
) -> Result<(), EventsJobError> {
    let workers = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| Error::Io { path: staging.into(), cause: std::io::Error::other(e) })?;
    workers.install(|| {
        let part = |r: usize, name: &str| part_path(staging, r, name);
        let ranks = join::Staging { n_items: grid.nlat(), size, wrote: &|_| true, part: &part };
        join::join_each(staged, &ranks, |k, parts, out| {
            let joined = join_one(&metas[k / 2], k % 2 == 1, parts, out, grid);
            for p in parts {
                let _ = std::fs::remove_file(&p.path);
            }
            joined
        })
    })
}

/// One output from its parts: the events written at once from the parts' columns (read raw,
/// on every thread: directly, or by the chunk coder), or the summaries' rows copied (pwrite or
/// the chunk coder). The parts are uncompressed ([`super::band::stored_as`]).
fn join_one(meta: &Meta, summary: bool, parts: &[Part], out: &Path, grid: &Grid) -> Result<(), EventsJobError> {
    if summary {
        let mut file = SummaryFile::create(out, meta, grid, true)?;
        for p in parts.iter().filter(|p| !p.items.is_empty()) {
            file.copy_rows(&p.path, p.items.clone())?;
        }
        file.finish()?;
    } else {
        let paths: Vec<PathBuf> = parts.iter().map(|p| p.path.clone()).collect();
        match Parts::open(&paths, meta.store.float32)? {
            Ok(events) => match meta.store.deflate {
                Some(level) => compressed::write_catalogue(out, meta, grid, &events, level)?,
                None => direct::write_catalogue(out, meta, grid, &events)?,
            },
            Err(why) => {
                tracing::info!("{}: joined through libnetcdf: {why}", out.display());
                let mut file = EventsFile::create(out, meta, grid)?;
                for p in parts {
                    file.append_file(&p.path)?;
                }
                file.finish()?;
            }
        }
    }
    Ok(())
}
