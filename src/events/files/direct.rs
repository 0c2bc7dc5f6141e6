//! Writing `events.nc` at the disk's speed once the whole catalogue is found (every band of
//! cells kept in memory until the end, or every MPI rank's part written).
//!
//! Why: through libnetcdf the catalogue is written one variable at a time, on one thread, along
//! an unlimited (chunked) dimension. Once every event is found the count is known, so the file
//! is created with a fixed `event` dimension and every column contiguous, allocated at creation
//! and never filled (as `crate::nc::direct` does for climatologies); each column's offset is
//! checked through HDF5 once, and the columns are written with `pwrite` from every thread. The
//! variables, attributes and values are those of [`super::events_file::EventsFile`] (only the
//! dimension is fixed and the storage contiguous); a file HDF5 does not confirm is written
//! through libnetcdf instead. The events come from memory or from the MPI ranks' parts
//! ([`super::catalogue`]).

use std::os::unix::fs::FileExt;
use std::path::Path;

use rayon::prelude::*;

use super::catalogue::{Catalogue, InMemory};
use super::events_file::EventsFile;
use super::schema::{define_events, Column, Meta};
use crate::events::columns::EventColumns;
use crate::events::{Days, EventsError};
use crate::input::direct::{locate_as, Stored};
use crate::input::Grid;

/// Events per `pwrite` at most (a float64 column's 8 MB).
const PIECE: usize = 1 << 20;

/// Write `events.nc` at `path` holding the events of `chunks` (in order), on the calling
/// rayon pool: directly where there is an event and HDF5 confirms the layout, else through
/// libnetcdf.
pub fn write_events(
    path: &Path,
    meta: &Meta,
    grid: &Grid,
    days: &Days,
    chunks: &[EventColumns],
) -> Result<(), EventsError> {
    write_catalogue(path, meta, grid, &InMemory::new(chunks, grid, days))
}

/// [`write_events`] for any catalogue: the events of memory or of the ranks' parts.
pub(crate) fn write_catalogue(path: &Path, meta: &Meta, grid: &Grid, events: &dyn Catalogue) -> Result<(), EventsError> {
    let n = events.len();
    let columns = Column::all();
    let float32 = meta.store.float32;
    let offsets = if n == 0 {
        Err("no events (a fixed dimension of length 0 is unlimited)".into())
    } else {
        create_allocated(path, meta, grid, n, &columns)
    };
    let offsets = match offsets {
        Ok(offsets) => offsets,
        Err(why) => {
            tracing::info!("{}: written through libnetcdf: {why}", path.display());
            let mut file = EventsFile::create(path, meta, grid)?;
            events.append_to(&mut file)?;
            return file.finish();
        }
    };
    let io = |var: String| {
        let path = path.to_path_buf();
        move |cause| EventsError::WriteIo { path, var, cause }
    };
    let file = std::fs::OpenOptions::new().write(true).open(path).map_err(io(String::new()))?;
    // pieces of at most PIECE events
    let n_pieces = n.div_ceil(PIECE);
    let tasks: Vec<(usize, usize)> = (0..columns.len()).flat_map(|k| (0..n_pieces).map(move |p| (k, p))).collect();
    tasks.into_par_iter().try_for_each_init(Vec::new, |buf: &mut Vec<u8>, (k, p)| {
        let (col, first) = (columns[k], p * PIECE);
        buf.clear();
        events.encode(col, first..(first + PIECE).min(n), float32, buf)?;
        file.write_all_at(buf, offsets[k] + (first * col.size(float32)) as u64).map_err(io(col.name()))
    })
}

/// Create `path` with `n` events' room in every column (contiguous, allocated, unfilled) and
/// return each column's byte offset, or why the direct path cannot write it.
fn create_allocated(path: &Path, meta: &Meta, grid: &Grid, n: usize, columns: &[Column]) -> Result<Vec<u64>, String> {
    let mut file = define_events(path, meta, grid, Some(n)).map_err(|e| e.to_string())?;
    for col in columns {
        let name = col.name();
        let mut v = file.variable_mut(&name).ok_or(format!("{name} not defined"))?;
        // one value allocates the contiguous storage (without filling it); the real one is
        // written over it
        match col.stored(meta.store.float32) {
            Stored::Float(4) => v.put_value(0f32, [0]),
            Stored::Float(_) => v.put_value(0f64, [0]),
            Stored::Int(1) => v.put_value(0i8, [0]),
            Stored::Int(_) => v.put_value(0i32, [0]),
        }
        .map_err(|e| format!("allocating {name}: {e}"))?;
    }
    file.close().map_err(|e| e.to_string())?;
    columns.iter().map(|col| locate_as(path, &col.name(), &[n], col.stored(meta.store.float32))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::columns::N_INTS;
    use crate::events::metrics::FLOAT_FIELDS;

    /// Every column of the catalogue has a variable of the same name and type in the file the
    /// libnetcdf path defines, and nothing else is there.
    #[test]
    fn columns_are_the_variables_of_the_catalogue() {
        let names: Vec<String> = Column::all().iter().map(|c| c.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len());
        assert_eq!(names.len(), 4 + 3 + N_INTS + FLOAT_FIELDS.len() + 1);
    }
}
