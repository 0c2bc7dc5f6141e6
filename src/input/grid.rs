//! The horizontal grid: latitude and longitude as the input files give them, so that the
//! outputs carry the same grid. A regular grid has 1-D coordinate variables (index numbers
//! where a file has none); a curvilinear one (CMIP6 `(j, i)`, CESM `(nlat, nlon)`, NEMO
//! `(y, x)`) has 2-D latitude and longitude variables named by the data variable's
//! `coordinates` attribute, and may name a grid-mapping variable (`grid_mapping`). Values are
//! kept in the order the file stores them (a descending latitude stays descending). Every
//! input file must carry the same grid as the first one.

use std::path::Path;

use netcdf::AttributeValue;

use super::error::InputError;
use super::layout::{aux_lat_lon, VarLayout};
use super::text_attr::{as_char, var_text};

/// An attribute carried from the input into the outputs.
pub type Attr = (String, AttributeValue);

/// One horizontal coordinate.
#[derive(Clone, Debug, PartialEq)]
pub struct Coord {
    /// Name of the dimension in the input.
    pub dim: String,
    pub values: Vec<f64>,
    /// False when the file had no coordinate variable and `values` are indices.
    pub from_file: bool,
    /// The coordinate variable's `standard_name`, `long_name`, `units` and `axis` in the input
    /// (empty without a coordinate variable).
    pub attrs: Vec<Attr>,
}

impl Coord {
    /// A coordinate of `values` along `dim`, without attributes.
    pub fn new(dim: &str, values: Vec<f64>, from_file: bool) -> Coord {
        Coord { dim: dim.into(), values, from_file, attrs: Vec::new() }
    }
}

/// A 2-D auxiliary coordinate (CF 5.2): latitude or longitude of every cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Aux {
    /// The variable's name in the input (`latitude`, `nav_lat`, `TLAT`).
    pub name: String,
    /// Its dimensions, in the input's order (the grid's row and column dimensions, either way).
    pub dims: [String; 2],
    /// Its values in the input's order.
    pub values: Vec<f64>,
    /// Its descriptive attributes in the input (`standard_name`, `long_name`, `units`), and its
    /// `_FillValue`/`missing_value` as float64.
    pub attrs: Vec<Attr>,
}

/// The grid-mapping variable (CF 5.6) the data variable names: its name and attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    pub name: String,
    pub attrs: Vec<Attr>,
}

/// Latitude and longitude of the grid: `lat` along the row dimension, `lon` along the column
/// dimension (on a curvilinear grid these are the index dimensions, and `aux` holds the 2-D
/// latitude and longitude).
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    pub lat: Coord,
    pub lon: Coord,
    /// 2-D latitude and longitude (curvilinear grids).
    pub aux: Option<[Aux; 2]>,
    pub mapping: Option<Mapping>,
}

fn read_err(path: &Path, var: &str) -> impl FnOnce(netcdf::Error) -> InputError {
    let (path, var) = (path.to_path_buf(), var.to_string());
    move |cause| InputError::Read { path, var, cause }
}

/// The attributes of `var` named in `keep` that exist and are not empty text, NC_STRING text as
/// NC_CHAR ([`as_char`]).
fn attrs_of(var: &netcdf::Variable<'_>, keep: &[&str]) -> Vec<Attr> {
    keep.iter()
        .filter_map(|&name| Some((name.to_string(), as_char(var.attribute_value(name)?.ok()?))))
        .filter(|(_, v)| !matches!(v, AttributeValue::Str(s) if s.is_empty()))
        .collect()
}

/// A numeric attribute as float64.
fn as_f64(value: &AttributeValue) -> Option<f64> {
    Some(match value {
        AttributeValue::Double(x) => *x,
        AttributeValue::Float(x) => f64::from(*x),
        AttributeValue::Int(x) => f64::from(*x),
        AttributeValue::Short(x) => f64::from(*x),
        AttributeValue::Schar(x) => f64::from(*x),
        AttributeValue::Uchar(x) => f64::from(*x),
        AttributeValue::Ushort(x) => f64::from(*x),
        AttributeValue::Uint(x) => f64::from(*x),
        _ => return None,
    })
}

fn read_coord(file: &netcdf::File, path: &Path, dim: &str, len: usize) -> Result<Coord, InputError> {
    if let Some(var) = file.variable(dim) {
        if var.dimensions().len() == 1 && var.len() == len {
            let values = var.get_values::<f64, _>(..).map_err(read_err(path, dim))?;
            let attrs = attrs_of(&var, &["standard_name", "long_name", "units", "axis"]);
            return Ok(Coord { dim: dim.into(), values, from_file: true, attrs });
        }
    }
    Ok(Coord::new(dim, (0..len).map(|i| i as f64).collect(), false))
}

fn read_aux(var: &netcdf::Variable<'_>, path: &Path) -> Result<Aux, InputError> {
    let name = var.name();
    let dims: Vec<String> = var.dimensions().iter().map(|d| d.name()).collect();
    let values = var.get_values::<f64, _>(..).map_err(read_err(path, &name))?;
    let mut attrs = attrs_of(var, &["standard_name", "long_name", "units"]);
    for fill in ["_FillValue", "missing_value"] {
        if let Some(x) = var.attribute_value(fill).and_then(Result::ok).as_ref().and_then(as_f64) {
            attrs.push((fill.to_string(), AttributeValue::Double(x)));
        }
    }
    Ok(Aux { name, dims: [dims[0].clone(), dims[1].clone()], values, attrs })
}

/// The grid-mapping variable `data` names (`grid_mapping = "crs"`, or CF's extended form
/// `"crs: x y"`, of which the first is taken), if it exists.
fn read_mapping(file: &netcdf::File, data: &netcdf::Variable<'_>) -> Option<Mapping> {
    let text = var_text(data, "grid_mapping")?;
    let name = text.split_whitespace().next()?.trim_end_matches(':').to_string();
    let var = file.variable(&name)?;
    let attrs = var
        .attributes()
        .filter(|a| !a.name().starts_with('_'))
        .filter_map(|a| Some((a.name().to_string(), as_char(a.value().ok()?))))
        .collect();
    Some(Mapping { name, attrs })
}

impl Grid {
    /// A grid of 1-D coordinates only.
    pub fn regular(lat: Coord, lon: Coord) -> Grid {
        Grid { lat, lon, aux: None, mapping: None }
    }

    /// The grid of the variable described by `layout` in `file`.
    pub fn read(file: &netcdf::File, path: &Path, layout: &VarLayout) -> Result<Grid, InputError> {
        let lat = read_coord(file, path, &layout.dims[layout.lat_axis].0, layout.nlat())?;
        let lon = read_coord(file, path, &layout.dims[layout.lon_axis].0, layout.nlon())?;
        let mut grid = Grid::regular(lat, lon);
        if let Some(data) = file.variable(&layout.name) {
            if let Some((la, lo)) = aux_lat_lon(file, &data) {
                let spans = |v: &netcdf::Variable<'_>| {
                    v.dimensions().iter().all(|d| d.name() == grid.lat.dim || d.name() == grid.lon.dim)
                };
                if spans(&la) && spans(&lo) {
                    grid.aux = Some([read_aux(&la, path)?, read_aux(&lo, path)?]);
                }
            }
            grid.mapping = read_mapping(file, &data);
        }
        Ok(grid)
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

    /// Whether the grid has 2-D latitude and longitude (a curvilinear grid).
    pub fn is_curvilinear(&self) -> bool {
        self.aux.is_some()
    }

    /// Latitude (`which = 0`) or longitude (1) of cell `cell` (row-major over rows and columns).
    fn at(&self, which: usize, cell: usize) -> f64 {
        let (row, col) = (cell / self.nlon(), cell % self.nlon());
        match &self.aux {
            Some(aux) => {
                let a = &aux[which];
                // the input may store it (column, row)
                let k = if a.dims[0] == self.lat.dim { row * self.nlon() + col } else { col * self.nlat() + row };
                a.values[k]
            }
            None if which == 0 => self.lat.values[row],
            None => self.lon.values[col],
        }
    }

    /// The latitude of cell `cell` (row-major over rows and columns).
    pub fn lat_at(&self, cell: usize) -> f64 {
        self.at(0, cell)
    }

    /// The longitude of cell `cell`.
    pub fn lon_at(&self, cell: usize) -> f64 {
        self.at(1, cell)
    }

    /// The coordinate variables every input file must hold alike: (variable name, its shape,
    /// its values in the file's order). 1-D coordinates the first file had, then the 2-D ones.
    pub fn checked(&self) -> Vec<(&str, Vec<u64>, &[f64])> {
        let mut out: Vec<(&str, Vec<u64>, &[f64])> = [&self.lat, &self.lon]
            .into_iter()
            .filter(|c| c.from_file)
            .map(|c| (c.dim.as_str(), vec![c.values.len() as u64], c.values.as_slice()))
            .collect();
        for a in self.aux.iter().flatten() {
            let len = |d: &str| if d == self.lat.dim { self.nlat() } else { self.nlon() } as u64;
            out.push((a.name.as_str(), vec![len(&a.dims[0]), len(&a.dims[1])], a.values.as_slice()));
        }
        out
    }

    /// Every coordinate value, for comparing grids across processes.
    pub fn all_values(&self) -> impl Iterator<Item = &f64> {
        self.lat.values.iter().chain(&self.lon.values).chain(self.aux.iter().flatten().flat_map(|a| &a.values))
    }

    /// `Ok` when `other` (read from `path`) has exactly this grid (read from `first`).
    pub fn check_same(&self, other: &Grid, path: &Path, first: &Path) -> Result<(), InputError> {
        let mismatch = |coord: &str, detail: String| InputError::CoordMismatch {
            path: path.into(),
            coord: coord.into(),
            first: first.into(),
            detail,
        };
        let same = |a: &f64, b: &f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let compare = |name: &str, mine: &[f64], theirs: &[f64]| -> Result<(), InputError> {
            if mine.len() != theirs.len() {
                return Err(mismatch(name, format!("{} values vs {}", theirs.len(), mine.len())));
            }
            match (0..mine.len()).find(|&i| !same(&mine[i], &theirs[i])) {
                Some(i) => Err(mismatch(name, format!("index {i}: {} vs {}", theirs[i], mine[i]))),
                None => Ok(()),
            }
        };
        compare("latitude", &self.lat.values, &other.lat.values)?;
        compare("longitude", &self.lon.values, &other.lon.values)?;
        match (&self.aux, &other.aux) {
            (None, None) => {}
            (Some(mine), Some(theirs)) => {
                for (m, t) in mine.iter().zip(theirs) {
                    if m.name != t.name || m.dims != t.dims {
                        return Err(mismatch(
                            &m.name,
                            format!(
                                "2-D coordinate {}({}) vs {}({})",
                                t.name,
                                t.dims.join(", "),
                                m.name,
                                m.dims.join(", ")
                            ),
                        ));
                    }
                    compare(&format!("2-D {}", m.name), &m.values, &t.values)?;
                }
            }
            (Some(mine), None) => {
                return Err(mismatch(
                    &mine[0].name,
                    "it has no 2-D latitude and longitude (coordinates attribute)".into(),
                ))
            }
            (None, Some(theirs)) => {
                return Err(mismatch(
                    &theirs[0].name,
                    format!("it has 2-D {} and {}, the first file has none", theirs[0].name, theirs[1].name),
                ))
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curvilinear(transposed: bool) -> Grid {
        // 2 rows (j) x 3 columns (i); latitude = 10 * row + col, longitude = 100 + ...
        let (nj, ni) = (2, 3);
        let value = |base: f64, r: usize, c: usize| base + 10.0 * r as f64 + c as f64;
        let aux = |name: &str, base: f64| {
            let (dims, values) = if transposed {
                (
                    ["i".to_string(), "j".to_string()],
                    (0..ni).flat_map(|c| (0..nj).map(move |r| value(base, r, c))).collect(),
                )
            } else {
                (
                    ["j".to_string(), "i".to_string()],
                    (0..nj).flat_map(|r| (0..ni).map(move |c| value(base, r, c))).collect(),
                )
            };
            Aux { name: name.into(), dims, values, attrs: Vec::new() }
        };
        Grid {
            lat: Coord::new("j", vec![0.0, 1.0], false),
            lon: Coord::new("i", vec![0.0, 1.0, 2.0], false),
            aux: Some([aux("latitude", 0.0), aux("longitude", 100.0)]),
            mapping: None,
        }
    }

    #[test]
    fn cell_coordinates_follow_the_stored_order() {
        for transposed in [false, true] {
            let g = curvilinear(transposed);
            // cell 4: row 1, column 1
            assert_eq!((g.lat_at(4), g.lon_at(4)), (11.0, 111.0));
            assert_eq!((g.lat_at(2), g.lon_at(2)), (2.0, 102.0));
            assert_eq!(g.checked()[0].1, if transposed { [3, 2] } else { [2, 3] });
        }
        let r =
            Grid::regular(Coord::new("lat", vec![90.0, 0.0, -90.0], true), Coord::new("lon", vec![0.0, 180.0], true));
        assert_eq!((r.lat_at(5), r.lon_at(5)), (-90.0, 180.0));
    }

    #[test]
    fn differing_2d_coordinates_are_refused() {
        let (a, mut b) = (curvilinear(false), curvilinear(false));
        assert!(a.check_same(&b, Path::new("b.nc"), Path::new("a.nc")).is_ok());
        b.aux.as_mut().unwrap()[1].values[5] += 0.5;
        let e = a.check_same(&b, Path::new("b.nc"), Path::new("a.nc")).unwrap_err().to_string();
        assert!(e.contains("b.nc") && e.contains("longitude") && e.contains("index 5"), "{e}");
        let e = a.check_same(&Grid { aux: None, ..a.clone() }, Path::new("b.nc"), Path::new("a.nc")).unwrap_err();
        assert!(e.to_string().contains("no 2-D latitude"), "{e}");
    }
}
