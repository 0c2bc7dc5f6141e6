//! Where the bytes of `events.nc`'s columns come from when the file is written at once
//! ([`super::direct`], [`super::compressed`]): the events found, in memory (every band of a
//! rank's share), or the MPI ranks' parts, each written contiguous by the direct writer and read
//! back raw.
//!
//! Why one interface: the writers take any range of events of a column and need not know
//! whether the events are columns in memory or bytes in files, so the file a job of several
//! ranks joins is written by the same code, with the same bytes, as a job of one rank writes.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use super::events_file::EventsFile;
use super::schema::Column;
use crate::events::columns::EventColumns;
use crate::events::{Days, EventsError};
use crate::input::direct::locate_as;
use crate::input::Grid;

/// The events of a catalogue, column by column.
pub(crate) trait Catalogue: Sync {
    /// How many events.
    fn len(&self) -> usize;

    /// Append the little-endian bytes of column `col` for the events `r` (as stored with
    /// `float32` float fields).
    fn encode(&self, col: Column, r: Range<usize>, float32: bool, out: &mut Vec<u8>) -> Result<(), EventsError>;

    /// Every event appended to `file` through libnetcdf (where the direct writers cannot write).
    fn append_to(&self, file: &mut EventsFile) -> Result<(), EventsError>;
}

/// Events in memory: chunks of columns, in order, with their grid and days.
pub(crate) struct InMemory<'a> {
    chunks: &'a [EventColumns],
    /// `starts[i]`: the first event of `chunks[i]` (and the count last).
    starts: Vec<usize>,
    at: (&'a Grid, &'a Days),
}

impl<'a> InMemory<'a> {
    pub fn new(chunks: &'a [EventColumns], grid: &'a Grid, days: &'a Days) -> InMemory<'a> {
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        starts.push(0);
        for c in chunks {
            starts.push(starts.last().expect("one") + c.len());
        }
        InMemory { chunks, starts, at: (grid, days) }
    }
}

impl Catalogue for InMemory<'_> {
    fn len(&self) -> usize {
        *self.starts.last().expect("one")
    }

    fn encode(&self, col: Column, r: Range<usize>, float32: bool, out: &mut Vec<u8>) -> Result<(), EventsError> {
        let (chunks, starts) = (self.chunks, &self.starts);
        // the chunk holding event r.start: the last that starts at or before it
        let mut i = starts.partition_point(|&s| s <= r.start) - 1;
        while i < chunks.len() && starts[i] < r.end {
            let (lo, hi) = (r.start.max(starts[i]) - starts[i], r.end.min(starts[i + 1]) - starts[i]);
            if lo < hi {
                col.encode(&chunks[i], lo..hi, self.at, float32, out);
            }
            i += 1;
        }
        Ok(())
    }

    fn append_to(&self, file: &mut EventsFile) -> Result<(), EventsError> {
        file.append(self.chunks, self.at.0, self.at.1)
    }
}

/// One part: an events file of the same job with `n` events, each column contiguous at its
/// byte offset.
struct Part {
    path: PathBuf,
    file: File,
    offsets: Vec<u64>,
}

/// The ranks' parts, in rank order: every column read raw (`pread`) where it lies.
pub(crate) struct Parts {
    parts: Vec<Part>,
    starts: Vec<usize>,
    paths: Vec<PathBuf>,
    columns: Vec<Column>,
}

impl Parts {
    /// The parts at `paths` (events files written by [`super::direct::write_events`], their
    /// float fields as float32 when `float32`); parts without events are skipped. `Ok(Err(why))`
    /// where a part's columns are not contiguous (written through libnetcdf): then
    /// [`Catalogue::append_to`] is the way.
    pub fn open(paths: &[PathBuf], float32: bool) -> Result<Result<Parts, String>, EventsError> {
        let columns = Column::all();
        let mut parts = Vec::new();
        let mut starts = vec![0];
        for path in paths {
            let src = netcdf::open(path).map_err(|cause| EventsError::Open { path: path.clone(), cause })?;
            let n = src.dimension("event").map_or(0, |d| d.len());
            drop(src);
            if n == 0 {
                continue;
            }
            let located: Result<Vec<u64>, _> =
                columns.iter().map(|c| locate_as(path, &c.name(), &[n], c.stored(float32))).collect();
            let offsets = match located {
                Ok(offsets) => offsets,
                Err(why) => return Ok(Err(format!("{}: {why}", path.display()))),
            };
            let file = File::open(path).map_err(|cause| EventsError::WriteIo {
                path: path.clone(),
                var: String::new(),
                cause,
            })?;
            parts.push(Part { path: path.clone(), file, offsets });
            starts.push(starts.last().expect("one") + n);
        }
        Ok(Ok(Parts { parts, starts, paths: paths.to_vec(), columns }))
    }
}

impl Catalogue for Parts {
    fn len(&self) -> usize {
        *self.starts.last().expect("one")
    }

    fn encode(&self, col: Column, r: Range<usize>, float32: bool, out: &mut Vec<u8>) -> Result<(), EventsError> {
        let k = self.columns.iter().position(|c| c.name() == col.name()).expect("every column");
        let size = col.size(float32);
        let starts = &self.starts;
        let mut i = starts.partition_point(|&s| s <= r.start) - 1;
        while i < self.parts.len() && starts[i] < r.end {
            let (lo, hi) = (r.start.max(starts[i]) - starts[i], r.end.min(starts[i + 1]) - starts[i]);
            let part = &self.parts[i];
            let at = out.len();
            out.resize(at + (hi - lo) * size, 0);
            part.file.read_exact_at(&mut out[at..], part.offsets[k] + (lo * size) as u64).map_err(|cause| {
                EventsError::WriteIo { path: part.path.clone(), var: col.name(), cause }
            })?;
            i += 1;
        }
        Ok(())
    }

    fn append_to(&self, file: &mut EventsFile) -> Result<(), EventsError> {
        for path in &self.paths {
            file.append_file(path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Coord;

    /// The pieces of a column, cut at any event across the catalogue's chunks of columns, join
    /// into the column's bytes as each chunk encodes them.
    #[test]
    fn ranges_across_chunks_join_into_the_column() {
        let grid =
            Grid::regular(Coord::new("lat", vec![0.0, 1.0, 2.0], false), Coord::new("lon", vec![5.0, 6.0], false));
        let days = crate::events::Days::of_years(2001..=2001, crate::calendar::Calendar::Hobday366);
        // chunks of 0, 3, 1, 0 and 7 events
        let chunks: Vec<EventColumns> = [0usize, 3, 1, 0, 7]
            .iter()
            .enumerate()
            .map(|(k, &len)| {
                let mut c = EventColumns::default();
                for i in 0..len {
                    c.cell.push((k + i) % 6);
                    c.ints.iter_mut().enumerate().for_each(|(j, v)| v.push((10 * k + i + j) as i32));
                    c.floats.iter_mut().enumerate().for_each(|(j, v)| v.push(0.1 * (k * i + j) as f64));
                    c.category.push((i % 5) as i8);
                }
                c
            })
            .collect();
        let catalogue = InMemory::new(&chunks, &grid, &days);
        let n = catalogue.len();
        for col in Column::all() {
            for float32 in [false, true] {
                let mut whole = Vec::new();
                for c in &chunks {
                    col.encode(c, 0..c.len(), (&grid, &days), float32, &mut whole);
                }
                for ch in [1, 2, 4, 5, n] {
                    let mut joined = Vec::new();
                    for j in 0..n.div_ceil(ch) {
                        let r = j * ch..((j + 1) * ch).min(n);
                        let mut piece = Vec::new();
                        catalogue.encode(col, r.clone(), float32, &mut piece).unwrap();
                        assert_eq!(piece.len(), r.len() * col.size(float32), "{}", col.name());
                        joined.extend(piece);
                    }
                    assert_eq!(joined, whole, "{} in chunks of {ch}", col.name());
                }
            }
        }
    }
}
