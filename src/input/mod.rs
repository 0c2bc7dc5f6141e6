//! Reading gridded variables from NetCDF input files: which variable, which dimension is
//! latitude, how values are packed, and decoding a region of cells into a pool row.
//!
//! Nothing here assumes a dimension order: latitude and longitude are recognised from
//! coordinate-variable attributes and dimension names, and a region is read in the file's own
//! order and transposed into the canonical `(lat, lon)` order while decoding.

pub mod child;
pub mod contain;
pub mod direct;
mod error;
mod forked;
pub mod format;
mod grid;
pub mod h5meta;
mod layout;
mod netcdf3;
mod packing;
mod read;
mod storage;

pub use error::InputError;
/// Tests that fork take this lock (see `forked::tests`: its zombie check sees every child).
#[cfg(test)]
pub(crate) use forked::tests::serial as fork_serial;
pub use forked::{read_forked, read_forked_into, ReaderError, ReaderOptions, SharedRows};
pub use grid::{Coord, Grid};
pub use layout::{VarLayout, VarMeta};
pub use packing::{AttrValue, Packing};
pub use read::{decode_region, read_canonical, read_region, RawData, Region};
pub use storage::Storage;

use std::path::Path;

/// Open `path` with libnetcdf, naming the file in the error.
pub fn open(path: &Path) -> Result<netcdf::File, InputError> {
    silence_hdf5();
    netcdf::open(path).map_err(|cause| InputError::Open { path: path.to_path_buf(), cause })
}

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
    let file = open(path)?;
    let mut layout = VarLayout::inspect(&file, path, Some(&expected.name), false)?;
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
    let raw = read_region(&file, path, &layout, region)?;
    Ok((layout, raw))
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

/// Stop libhdf5 from printing its error stack on stderr. libnetcdf probes for optional
/// attributes and handles the failures itself, but some HDF5 builds print each probe; our
/// errors carry the file and cause instead. Thread-safe HDF5 builds keep this setting per
/// thread, so it is made once per thread.
pub fn silence_hdf5() {
    thread_local!(static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if DONE.with(|d| d.replace(true)) {
        return;
    }
    {
        let _lock = hdf5_metno_sys::LOCK.lock();
        // SAFETY: H5Eset_auto2 with the default stack and no handler only changes HDF5's
        // global error-reporting setting; the library lock serializes it with other calls.
        unsafe {
            hdf5_metno_sys::h5e::H5Eset_auto2(hdf5_metno_sys::h5e::H5E_DEFAULT, None, std::ptr::null_mut());
        }
    }
}
