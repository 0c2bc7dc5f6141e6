//! Writing `events.nc` compressed (`--deflate`) once the whole catalogue is found (in memory,
//! or in the MPI ranks' parts, [`super::catalogue`]): every column chunked along `event`, each chunk encoded, shuffled and deflated on
//! every thread by the project's chunk coder (`crate::nc::encode::zlib_planes`, as `run`'s
//! compressed outputs and the compressed summaries) and handed to HDF5 already filtered
//! (`H5Dwrite_chunk`) by one writer thread.
//!
//! Why: the catalogue is most of the outputs once the summaries are compressed, and its columns
//! compress well (sorted by cell: the coordinates and indices are long runs; days and durations
//! are small integers): about 2.4x on the VM's job (bench-results/runs/2026-12-02-vm-events-s37).
//! The variables, attributes and values are those of [`super::direct`]'s file; only the
//! storage differs. A file HDF5 does not confirm is written through libnetcdf instead.

use std::path::Path;
use std::sync::mpsc;

use rayon::prelude::*;

use super::catalogue::{Catalogue, InMemory};
use super::events_file::EventsFile;
use super::schema::{define_events, Column, Meta, EVENT_CHUNK};
use crate::events::columns::EventColumns;
use crate::events::{Days, EventsError};
use crate::input::direct::Stored;
use crate::input::Grid;
use crate::nc::chunk_files::Files;
use crate::nc::chunked::locate_chunked;
use crate::nc::encode::{shuffle, zlib_planes};

/// Write `events.nc` at `path`, compressed at deflate level `level` (shuffled where the job
/// asks), holding the events of `chunks` in order, on the calling rayon pool.
pub fn write_events(
    path: &Path,
    meta: &Meta,
    (grid, days): (&Grid, &Days),
    chunks: &[EventColumns],
    level: u8,
) -> Result<(), EventsError> {
    write_catalogue(path, meta, grid, &InMemory::new(chunks, grid, days), level)
}

/// [`write_events`] for any catalogue: the events of memory or of the ranks' parts.
pub(crate) fn write_catalogue(
    path: &Path,
    meta: &Meta,
    grid: &Grid,
    events: &dyn Catalogue,
    level: u8,
) -> Result<(), EventsError> {
    let n = events.len();
    let columns = Column::all();
    let float32 = meta.store.float32;
    let shuffled = meta.store.shuffle;
    if n == 0 {
        // a fixed dimension of length 0 is unlimited: through libnetcdf, like the direct writer
        let mut file = EventsFile::create(path, meta, grid)?;
        events.append_to(&mut file)?;
        return file.finish();
    }
    let ch = n.min(EVENT_CHUNK);
    let created = define_events(path, meta, grid, Some(n)).and_then(|file| {
        let path = path.to_path_buf();
        file.close().map_err(|cause| EventsError::Write { path, var: String::new(), cause })
    });
    created?;
    let located: Result<(), String> = columns.iter().try_for_each(|col| {
        let (float, size) = match col.stored(float32) {
            Stored::Float(s) => (true, s),
            Stored::Int(s) => (false, s),
        };
        locate_chunked(path, &col.name(), (&[n], &[ch]), (float, size), shuffled)
    });
    if let Err(why) = located {
        tracing::info!("{}: written through libnetcdf: {why}", path.display());
        let mut file = EventsFile::create(path, meta, grid)?;
        events.append_to(&mut file)?;
        return file.finish();
    }
    let n_chunks = n.div_ceil(ch);
    let tasks: Vec<(usize, usize)> = (0..columns.len()).flat_map(|k| (0..n_chunks).map(move |j| (k, j))).collect();
    let threads = rayon::current_num_threads().max(1);
    let (tx, rx) = mpsc::sync_channel::<(usize, usize, Vec<u8>)>(2 * threads);
    let io = |var: String, why: String| EventsError::WriteIo {
        path: path.to_path_buf(),
        var,
        cause: std::io::Error::other(why),
    };
    std::thread::scope(|s| {
        // one thread hands the compressed chunks to HDF5 (under its library lock, one at a time)
        let writer = s.spawn(|| {
            let mut files = Files::default();
            let mut result = Ok(());
            for (k, j, bytes) in rx {
                if result.is_ok() {
                    let name = columns[k].name();
                    result = files.write_at(path, &name, &[(j * ch) as u64], 0, &bytes).map_err(|why| io(name, why));
                }
            }
            let closed = files.close_all().map_err(|(_, why)| io(String::new(), why));
            result.and(closed)
        });
        let coded = tasks.into_par_iter().try_for_each_init(
            || {
                let level = libdeflater::CompressionLvl::new(i32::from(level)).unwrap_or_default();
                (libdeflater::Compressor::new(level), Vec::new(), Vec::new())
            },
            |(compressor, raw, planes), (k, j)| {
                let col = columns[k];
                let size = col.size(float32);
                raw.clear();
                events.encode(col, j * ch..((j + 1) * ch).min(n), float32, raw)?;
                // the last chunk is stored whole, past the end of the column
                raw.resize(ch * size, 0);
                let data = if shuffled && size > 1 {
                    shuffle(raw, size, planes);
                    &planes[..]
                } else {
                    &raw[..]
                };
                let mut out = Vec::new();
                zlib_planes(compressor, data, size, shuffled && size > 1, level, &mut out);
                tx.send((k, j, out)).map_err(|_| io(col.name(), "the writer thread stopped".into()))
            },
        );
        drop(tx);
        let written = writer.join().unwrap_or_else(|_| Err(io(String::new(), "the writer thread panicked".into())));
        // the writer's error first: a send fails only once the writer stopped
        written.and(coded)
    })
}
