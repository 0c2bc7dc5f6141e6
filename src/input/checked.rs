//! The checks every input file gets against the job's first file before its values reach the
//! pool: its variable's shape, units and (when asked) coordinates, then, for a pool that keeps
//! stored integers, its storage type and packing; and before libnetcdf reads a step, the
//! direct path's verdict on the chunks it needs (a damaged chunk index or chunk is an error
//! naming the file, never values libhdf5 made up).
//!
//! Why it exists: files of one product need not agree, and a file decoded with another file's
//! rules would give wrong values silently; every read path that goes through libnetcdf (the
//! library path in threads and the forked readers) calls these, so a file is refused the same
//! way whichever path reads it.

use std::cell::RefCell;
use std::path::Path;

use super::direct::ChunkVerdict;
use super::error::InputError;
use super::grid::Grid;
use super::layout::VarLayout;
use super::open::open;
use super::packing;
use super::read::{read_region_at, RawData, Region};

/// Open `path` and read `region` of the variable `expected` describes (in the file's own
/// storage), after the checks every input file gets against the first one (`first`): the
/// variable's shape, and its coordinates when `grid` is given. Returns the file's own layout
/// (its packing may differ from the first file's) and the stored values.
pub fn read_checked(
    path: &Path,
    expected: &VarLayout,
    first: &Path,
    grid: Option<&Grid>,
    region: &Region,
) -> Result<(VarLayout, RawData), InputError> {
    read_checked_at(path, expected, first, grid, region, 0)
}

/// [`read_checked`] of time step `step` of the file.
pub fn read_checked_at(
    path: &Path,
    expected: &VarLayout,
    first: &Path,
    grid: Option<&Grid>,
    region: &Region,
    step: usize,
) -> Result<(VarLayout, RawData), InputError> {
    let (file, layout) = open_checked(path, expected, first, grid)?;
    let raw = read_step(&file, path, &layout, region, step)?;
    Ok((layout, raw))
}

/// Open `path` and check it against the first file (see [`read_checked`]): the open file and
/// its own layout, for reading as many of its steps as the job needs ([`read_step`]) with
/// one open and one check.
pub fn open_checked(
    path: &Path,
    expected: &VarLayout,
    first: &Path,
    grid: Option<&Grid>,
) -> Result<(netcdf::File, VarLayout), InputError> {
    let file = open(path)?;
    // a file of many steps is read one step at a time: any number of them along its time
    // dimension (where the job's first file has several: a time series, whose dates discovery
    // mapped to steps), every other dimension besides latitude and longitude of length 1
    let mut layout = VarLayout::inspect(&file, path, Some(&expected.name), expected.steps() > 1)?;
    if let Some((dim, len)) = layout
        .dims
        .iter()
        .enumerate()
        .find(|&(i, d)| i != layout.lat_axis && i != layout.lon_axis && Some(i) != layout.time_axis && d.1 != 1)
        .map(|(_, d)| d.clone())
    {
        return Err(InputError::BadVariable {
            path: path.into(),
            var: layout.name.clone(),
            problem: format!(
                "dimension {dim} has length {len} and is not a time dimension; sstclim reads one \
                 latitude-longitude field per time step: select one {dim} (e.g. ncks -d {dim},0)"
            ),
        });
    }
    // a lossy int16 packing is the job's, not the file's
    layout.packing.quantize = expected.packing.quantize;
    if layout.nlat() != expected.nlat() || layout.nlon() != expected.nlon() {
        return Err(InputError::ShapeMismatch {
            path: path.into(),
            var: layout.name.clone(),
            found: layout.shape_text(),
            expected: expected.shape_text(),
            first: first.into(),
        });
    }
    if !packing::same_units(layout.meta.units.as_deref(), expected.meta.units.as_deref()) {
        return Err(InputError::UnitsMismatch {
            path: path.into(),
            var: layout.name.clone(),
            found: layout.meta.units.clone().unwrap_or_default(),
            expected: expected.meta.units.clone().unwrap_or_default(),
            first: first.into(),
        });
    }
    if let Some(grid) = grid {
        grid.check_same(&Grid::read(&file, path, &layout)?, path, first)?;
    }
    Ok((file, layout))
}

/// Read `region` at time step `step` of a file opened and checked by [`open_checked`] (`layout`:
/// its own layout), once the chunks libnetcdf will read for it passed the verdict of
/// [`ChunkVerdict`]: libhdf5 would read a damaged chunk index, or a chunk that inflates short,
/// as whatever its buffer held.
pub fn read_step(
    file: &netcdf::File,
    path: &Path,
    layout: &VarLayout,
    region: &Region,
    step: usize,
) -> Result<RawData, InputError> {
    chunk_verdict(path, layout, region, step).map_err(|problem| InputError::BadVariable {
        path: path.into(),
        var: layout.name.clone(),
        problem,
    })?;
    read_region_at(file, path, layout, region, step).map_err(|e| name_filters(e, path, &layout.name))
}

thread_local! {
    /// The verdict on the file this thread last read: the chunks of a file are decoded once
    /// for all the steps read from it in a row (a chunk of many steps would be once per step).
    static VERDICT: RefCell<Option<ChunkVerdict>> = const { RefCell::new(None) };
}

/// [`ChunkVerdict`] on `path`'s chunks that hold `region` at `step` (see [`read_step`]).
fn chunk_verdict(path: &Path, layout: &VarLayout, region: &Region, step: usize) -> Result<(), String> {
    VERDICT.with_borrow_mut(|verdict| {
        if !verdict.as_ref().is_some_and(|v| v.is_of(path)) {
            *verdict = None;
            *verdict = Some(ChunkVerdict::new(path, &layout.name)?);
        }
        verdict.as_mut().map_or(Ok(()), |v| v.check_step(layout, region, step))
    })
}

/// A failed read of a compressed variable names the filters sstclim does not decode (a
/// filter libnetcdf has no plugin for fails the same way): the user learns which filter to
/// install or convert away from, not just that the library failed.
fn name_filters(e: InputError, path: &Path, var: &str) -> InputError {
    let InputError::Read { cause, .. } = &e else { return e };
    let Ok(file) = std::fs::File::open(path) else { return e };
    let Ok(meta) = super::h5meta::Hdf5Meta::open(&file) else { return e };
    let Ok(ds) = meta.dataset(var) else { return e };
    let Some(id) = super::direct::unsupported_filter(&ds.pipeline) else { return e };
    InputError::BadVariable {
        path: path.into(),
        var: var.into(),
        problem: format!(
            "read failed ({cause}): it is compressed with filter {id} ({}), which sstclim does not decode and \
             this libnetcdf cannot either (no filter plugin)",
            super::direct::filter_name(id)
        ),
    }
}

/// Refuse a file that a pool keeping stored integers (`--pool i16` on int16 input) would
/// decode wrongly: such a pool decodes every file with one table built from the first file's
/// packing (`expected`), so a file stored another way or packed with other attributes (`file`:
/// its own layout) is an error naming the attribute, never a wrong value. Other pools decode
/// every file with its own packing and pass.
pub fn check_pool_packing<T: crate::pool::Sample>(
    path: &Path,
    file: &VarLayout,
    expected: &VarLayout,
    first: &Path,
) -> Result<(), InputError> {
    // a lossy packing (--pack-scale) decodes every file with its own rules before packing
    if !T::KEEPS_STORED || expected.packing.quantize.is_some() {
        return Ok(());
    }
    let detail = if file.storage != expected.storage {
        Some(format!("its storage type {} (not {})", file.storage.name(), expected.storage.name()))
    } else {
        file.packing.differs_from(&expected.packing).map(|a| format!("its attribute {a}"))
    };
    match detail {
        None => Ok(()),
        Some(detail) => {
            Err(InputError::PoolPacking { path: path.into(), var: file.name.clone(), detail, first: first.into() })
        }
    }
}
