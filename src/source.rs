//! Where a job's values come from: files (found by [`crate::discover`] and read by
//! [`crate::input`]'s readers) or a caller's array already in memory.
//!
//! Why a module of its own: both jobs take their values through the pipeline's readers
//! (`pipeline::readers::read_all`), one pool row per day. A memory source answers the same
//! questions files do (which dates, which variable layout, which grid) and fills a row by
//! decoding its step with the same code a file's values take (`input::decode_stored`), so a
//! job over values in memory equals the job over the same values written to files, bit for
//! bit, on every engine.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use crate::calendar::Date;
use crate::discover::{Inputs, Origin};
use crate::input::{decode_stored, Grid, Packing, RawData, Region, Storage, VarLayout, VarMeta};
use crate::pool::Sample;
use crate::util::cftime::CfCalendar;

/// Where a job reads its values.
#[derive(Clone, Debug)]
pub enum Source {
    /// Input files: a directory, glob, `@list`, template or list of files (one per line), and
    /// the variable (`None`: `analysed_sst`, `sst`, or the only gridded one).
    Files { input: String, var: Option<String> },
    /// A caller's array in memory.
    Memory(Arc<MemorySeries>),
}

impl Source {
    /// Files named as `sstclim run --input` names them (several: one per line).
    pub fn files(input: impl Into<String>, var: Option<&str>) -> Source {
        Source::Files { input: input.into(), var: var.map(str::to_string) }
    }

    /// The memory series, if the values are in memory.
    pub fn memory(&self) -> Option<&MemorySeries> {
        match self {
            Source::Memory(m) => Some(m),
            Source::Files { .. } => None,
        }
    }

    /// What `--input` was (the text a report or message names).
    pub fn describe(&self) -> String {
        match self {
            Source::Files { input, .. } => input.clone(),
            Source::Memory(m) => format!("memory:{}", m.name),
        }
    }
}

/// Daily values held in memory: `values[step][row][col]` of a grid of `grid.nlat()` rows and
/// `grid.nlon()` columns (a list of cells is one row), the date of every step in `calendar`,
/// decoded with `packing` (fill value, scale and offset) as a file's values are.
#[derive(Debug)]
pub struct MemorySeries {
    pub name: String,
    values: RawData,
    dates: Vec<Date>,
    calendar: CfCalendar,
    grid: Grid,
    packing: Packing,
    meta: VarMeta,
}

/// Why a memory series cannot be a job's source.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SourceError {
    #[error("memory source '{name}': {values} values are not {steps} steps of {rows} x {cols} cells")]
    Shape { name: String, values: usize, steps: usize, rows: usize, cols: usize },
    #[error("memory source '{name}': the dates must increase, one step a date ({date} follows {before})")]
    Dates { name: String, date: String, before: String },
    #[error("memory source '{name}': no step")]
    Empty { name: String },
}

impl MemorySeries {
    /// Values `[step][row][col]` (see [`MemorySeries`]); checked against the dates and grid.
    pub fn new(
        name: &str,
        values: RawData,
        dates: Vec<Date>,
        calendar: CfCalendar,
        grid: Grid,
        packing: Packing,
        meta: VarMeta,
    ) -> Result<MemorySeries, SourceError> {
        let name = name.to_string();
        let (rows, cols, steps) = (grid.nlat(), grid.nlon(), dates.len());
        if steps == 0 {
            return Err(SourceError::Empty { name });
        }
        let n = values.bytes() / values_size(&values);
        if n != steps * rows * cols {
            return Err(SourceError::Shape { name, values: n, steps, rows, cols });
        }
        if let Some(w) = dates.windows(2).find(|w| w[1] <= w[0]) {
            let (date, before) = (w[1].to_string(), w[0].to_string());
            return Err(SourceError::Dates { name, date, before });
        }
        Ok(MemorySeries { name, values, dates, calendar, grid, packing, meta })
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    pub fn calendar(&self) -> CfCalendar {
        self.calendar
    }

    pub fn dates(&self) -> &[Date] {
        &self.dates
    }

    /// The variable as a file of every step would hold it: `(time, lat, lon)`.
    pub fn layout(&self) -> VarLayout {
        VarLayout {
            name: self.name.clone(),
            storage: storage_of(&self.values),
            dims: vec![
                ("time".into(), self.dates.len()),
                (self.grid.lat.dim.clone(), self.grid.nlat()),
                (self.grid.lon.dim.clone(), self.grid.nlon()),
            ],
            lat_axis: 1,
            lon_axis: 2,
            time_axis: Some(0),
            packing: self.packing.clone(),
            meta: self.meta.clone(),
        }
    }

    /// The dates `wanted` asks for, each at its step ("missing" lists those the series lacks).
    pub fn inputs(&self, wanted: &[Date]) -> Inputs {
        let steps: BTreeMap<Date, usize> = self.dates.iter().enumerate().map(|(i, d)| (*d, i)).collect();
        let mut files = BTreeMap::new();
        let mut missing = Vec::new();
        for d in wanted {
            match steps.get(d) {
                Some(&step) => {
                    files.insert(*d, crate::discover::Source { path: self.path(), step });
                }
                None => missing.push(PathBuf::from(d.to_string())),
            }
        }
        let template = Origin::Memory { name: self.name.clone(), steps: self.dates.len() };
        Inputs { template, calendar: self.calendar, files, missing }
    }

    /// The name reports and messages give the series in place of a file's path.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("memory:{}", self.name))
    }

    /// Decode step `step`'s cells of `region` into `dest` (`[row][col]`, as a pool row).
    pub fn decode_into<T: Sample>(&self, step: usize, region: &Region, packing: &Packing, dest: &mut [T]) {
        let (nlon, n_cells) = (self.grid.nlon(), self.grid.n_cells());
        let base = step * n_cells;
        let width = region.cols.len();
        if width == nlon {
            // whole rows: one contiguous slab
            let at: Range<usize> = base + region.rows.start * nlon..base + region.rows.end * nlon;
            return decode_stored(&self.values, at, packing, region.rows.len(), width, dest);
        }
        for (i, row) in region.rows.clone().enumerate() {
            let at = base + row * nlon + region.cols.start..base + row * nlon + region.cols.end;
            decode_stored(&self.values, at, packing, 1, width, &mut dest[i * width..(i + 1) * width]);
        }
    }
}

fn storage_of(values: &RawData) -> Storage {
    match values {
        RawData::I8(_) => Storage::I8,
        RawData::U8(_) => Storage::U8,
        RawData::I16(_) => Storage::I16,
        RawData::U16(_) => Storage::U16,
        RawData::I32(_) => Storage::I32,
        RawData::U32(_) => Storage::U32,
        RawData::F32(_) => Storage::F32,
        RawData::F64(_) => Storage::F64,
    }
}

fn values_size(values: &RawData) -> usize {
    storage_of(values).size()
}
