//! How `sstclim events` stores its outputs: `--output-type f64|f32` (the event catalogue's
//! float fields in float64 or float32; the summaries are float32 either way) and `--deflate L`
//! / `--shuffle` (the summaries chunked and compressed).
//!
//! Why: on a global grid the outputs are several times the size of what the job reads (the
//! summaries are mostly NaN: a cell has an event in few years), and writing them took longer
//! than reading the inputs (docs/experiments.md, run 2026-12-02-h200-events-s36). Compressed
//! summaries go through the project's own chunk coder, the one `run`'s compressed outputs use
//! ([`crate::nc::chunked`]: chunks encoded, shuffled and deflated on every thread, handed
//! to HDF5 already filtered), never through libnetcdf's compressor.

use std::path::Path;

use crate::events::summary::STATS;
use crate::events::EventsError;
use crate::input::Region;
use crate::nc::chunked::{self, ChunkFailure, ChunkGeometry, ChunkPlan, Field, Partial, Values};
use crate::nc::encode::{chunk_shape, Encoding, OutputType};

/// The outputs' storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Store {
    /// The event catalogue's float fields (intensities, rates) as float32 instead of float64.
    pub float32: bool,
    /// Deflate level of the summaries (None: uncompressed, contiguous).
    pub deflate: Option<u8>,
    /// HDF5's shuffle filter before deflate.
    pub shuffle: bool,
}

impl Default for Store {
    fn default() -> Self {
        Store { float32: false, deflate: None, shuffle: true }
    }
}

impl Store {
    /// The summaries' chunks when compressed: one year of a statistic, a whole map up to
    /// `run`'s chunk size (the 0.25° grid's float32 map is one chunk), else bands of rows.
    pub fn summary_plan(&self, nlat: usize, nlon: usize) -> Option<ChunkPlan> {
        let level = self.deflate?;
        let (rows, cols) = chunk_shape(nlat, nlon, OutputType::F32, None);
        Some(ChunkPlan { rows, cols, level, shuffle: self.shuffle })
    }

    /// The stored type of the catalogue's float fields.
    pub fn event_float(&self) -> OutputType {
        if self.float32 {
            OutputType::F32
        } else {
            OutputType::F64
        }
    }
}

/// The summary's float32 encoding: NaN stored as NaN (its `_FillValue`).
fn encoding() -> Encoding {
    Encoding { ty: OutputType::F32, ..Encoding::f64(f64::NAN) }
}

/// Declare `stat` (time, lat, lon) of a summary chunked and deflated as `plan` says.
pub(super) fn define_chunked(v: &mut netcdf::VariableMut<'_>, plan: &ChunkPlan) -> Result<(), netcdf::Error> {
    v.set_chunking(&[1, plan.rows, plan.cols])?;
    v.set_compression(i32::from(plan.level), plan.shuffle)?;
    v.set_fill_value(f32::NAN)
}

/// Check that every statistic of the summary at `path` is stored as `plan` says.
pub(super) fn locate(path: &Path, shape: [usize; 3], plan: &ChunkPlan) -> Result<(), String> {
    STATS.iter().try_for_each(|stat| chunked::locate(path, stat, shape, OutputType::F32, plan))
}

/// Write latitude rows `rows` of every statistic (`values[stat][year][cell of the rows]`) into
/// the compressed summary at `path` (closed by libnetcdf), on `threads` threads; chunks the
/// rows only partly cover wait in `partial` for the next rows.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_rows(
    path: &Path,
    plan: ChunkPlan,
    (nlat, nlon, n_years): (usize, usize, usize),
    rows: std::ops::Range<usize>,
    values: &[f32],
    threads: usize,
    partial: &mut Partial,
) -> Result<(), EventsError> {
    let per_year = rows.len() * nlon;
    let fields: Vec<Field> = (0..STATS.len() * n_years)
        .map(|i| Field {
            file: i / n_years,
            t: i % n_years,
            values: Values::F32(&values[i * per_year..(i + 1) * per_year]),
        })
        .collect();
    let region = Region { rows, cols: 0..nlon };
    let g = ChunkGeometry { nlat, nlon, region: &region, plan, enc: encoding() };
    let paths = vec![path; STATS.len()];
    chunked::write_fields(&fields, &g, &paths, &STATS, threads, partial).map_err(|failure| {
        let (stat, cause) = match failure {
            // NaN is the fill: no value clashes with it, nothing is out of range in float32
            ChunkFailure::Encode(k, e) => (k, format!("{e:?}")),
            ChunkFailure::Write(k, why, _) => (k, why),
        };
        EventsError::WriteIo { path: path.into(), var: STATS[stat].into(), cause: std::io::Error::other(cause) }
    })
}
