//! The horizontal grid: latitude and longitude coordinate values as the input files give them
//! (index numbers where a file has no coordinate variable). Every input file must carry the
//! same grid as the first one.

use std::path::Path;

use super::error::InputError;
use super::layout::VarLayout;

/// One horizontal coordinate.
#[derive(Clone, Debug, PartialEq)]
pub struct Coord {
    /// Name of the dimension in the input.
    pub dim: String,
    pub values: Vec<f64>,
    /// False when the file had no coordinate variable and `values` are indices.
    pub from_file: bool,
}

/// Latitude and longitude of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub lat: Coord,
    pub lon: Coord,
}

fn read_coord(file: &netcdf::File, path: &Path, dim: &str, len: usize) -> Result<Coord, InputError> {
    if let Some(var) = file.variable(dim) {
        if var.dimensions().len() == 1 && var.len() == len {
            let values = var.get_values::<f64, _>(..).map_err(|cause| InputError::Read {
                path: path.into(),
                var: dim.into(),
                cause,
            })?;
            return Ok(Coord { dim: dim.into(), values, from_file: true });
        }
    }
    Ok(Coord { dim: dim.into(), values: (0..len).map(|i| i as f64).collect(), from_file: false })
}

impl Grid {
    /// The grid of the variable described by `layout` in `file`.
    pub fn read(file: &netcdf::File, path: &Path, layout: &VarLayout) -> Result<Grid, InputError> {
        let lat = read_coord(file, path, &layout.dims[layout.lat_axis].0, layout.nlat())?;
        let lon = read_coord(file, path, &layout.dims[layout.lon_axis].0, layout.nlon())?;
        Ok(Grid { lat, lon })
    }

    pub fn nlat(&self) -> usize {
        self.lat.values.len()
    }

    pub fn nlon(&self) -> usize {
        self.lon.values.len()
    }

    pub fn n_cells(&self) -> usize {
        self.nlat() * self.nlon()
    }

    /// `Ok` when `other` (read from `path`) has exactly this grid (read from `first`).
    pub fn check_same(&self, other: &Grid, path: &Path, first: &Path) -> Result<(), InputError> {
        for (name, mine, theirs) in [("latitude", &self.lat, &other.lat), ("longitude", &self.lon, &other.lon)] {
            let same = |a: &f64, b: &f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            if let Some(i) = (0..mine.values.len()).find(|&i| !same(&mine.values[i], &theirs.values[i])) {
                return Err(InputError::CoordMismatch {
                    path: path.into(),
                    coord: name.into(),
                    first: first.into(),
                    detail: format!("index {i}: {} vs {}", theirs.values[i], mine.values[i]),
                });
            }
        }
        Ok(())
    }
}
