//! Which variable holds the data, its storage type, and which of its dimensions are latitude
//! and longitude (read from names and coordinate attributes, never assumed from order). On a
//! curvilinear grid (2-D latitude and longitude named by the variable's `coordinates`
//! attribute) the two dimensions those span are the horizontal ones, the first the row.

use std::ops::Range;
use std::path::Path;

use netcdf::types::{IntType, NcVariableType};
use netcdf::Extent;

use super::error::InputError;
use super::packing::{AttrValue, Packing};
use super::storage::{unread, Storage};
use super::text_attr::var_text;

/// The name of a libnetcdf type for messages.
fn nc_type_name(t: &NcVariableType) -> String {
    match t {
        NcVariableType::Int(IntType::I64) => "int64".into(),
        NcVariableType::Int(IntType::U64) => "uint64".into(),
        NcVariableType::Char => "char (text)".into(),
        NcVariableType::String => "string".into(),
        other => format!("{other:?}"),
    }
}

/// Descriptive attributes carried into the outputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VarMeta {
    pub units: Option<String>,
    pub long_name: Option<String>,
    pub standard_name: Option<String>,
}

/// How one file stores the data variable.
#[derive(Clone, Debug, PartialEq)]
pub struct VarLayout {
    pub name: String,
    pub storage: Storage,
    /// All dimensions of the variable, in file order: (name, length).
    pub dims: Vec<(String, usize)>,
    /// The grid's row dimension: latitude, or on a curvilinear grid the first of the two
    /// dimensions the 2-D latitude and longitude span (`j`, `nlat`, `y`).
    pub lat_axis: usize,
    /// The grid's column dimension: longitude, or the curvilinear grid's second (`i`, `x`).
    pub lon_axis: usize,
    /// The time dimension (an index into `dims`), when the variable has one: a dimension
    /// besides latitude and longitude that is named like time or whose coordinate variable has
    /// time units or `axis = "T"`. Files of many steps are read one step at a time along it.
    pub time_axis: Option<usize>,
    pub packing: Packing,
    pub meta: VarMeta,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    Lat,
    Lon,
}

/// Latitude or longitude, from the dimension's coordinate variable (standard_name, units,
/// axis), else from the dimension name.
fn axis_of(file: &netcdf::File, dim: &str) -> Option<Axis> {
    if let Some(coord) = file.variable(dim) {
        let standard = var_text(&coord, "standard_name").unwrap_or_default().to_ascii_lowercase();
        let units = var_text(&coord, "units").unwrap_or_default().to_ascii_lowercase().replace(['_', ' '], "");
        let axis = var_text(&coord, "axis").unwrap_or_default().to_ascii_uppercase();
        if standard.ends_with("latitude")
            || units.starts_with("degreen")
            || units.starts_with("degreesn")
            || axis == "Y"
        {
            return Some(Axis::Lat);
        }
        if standard.ends_with("longitude")
            || units.starts_with("degreee")
            || units.starts_with("degreese")
            || axis == "X"
        {
            return Some(Axis::Lon);
        }
    }
    let name = dim.to_ascii_lowercase();
    // the index dimensions of curvilinear ocean grids play latitude's (row) and longitude's
    // (column) roles: CMIP6 `j`/`i`, CESM `nlat`/`nlon`, NEMO `y`/`x`, GFDL `yh`/`xh`
    if name.starts_with("lat") || ["y", "nlat", "rlat", "j", "nj", "yh"].contains(&name.as_str()) {
        Some(Axis::Lat)
    } else if name.starts_with("lon") || ["x", "nlon", "rlon", "i", "ni", "xh"].contains(&name.as_str()) {
        Some(Axis::Lon)
    } else {
        None
    }
}

/// The names listed in the variable's `coordinates` attribute (CF 5: auxiliary coordinates).
pub(crate) fn coordinates_of(var: &netcdf::Variable<'_>) -> Vec<String> {
    var_text(var, "coordinates").map(|c| c.split_whitespace().map(String::from).collect()).unwrap_or_default()
}

/// Whether `var` holds latitudes (`Some(true)`) or longitudes (`Some(false)`) by its
/// standard_name, else its units (`degrees_north`, `degrees_east`).
fn lat_or_lon_by_attributes(var: &netcdf::Variable<'_>) -> Option<bool> {
    let standard = var_text(var, "standard_name").unwrap_or_default().to_ascii_lowercase();
    match standard.as_str() {
        "latitude" | "grid_latitude" => return Some(true),
        "longitude" | "grid_longitude" => return Some(false),
        _ => {}
    }
    let units = var_text(var, "units").unwrap_or_default().to_ascii_lowercase().replace(['_', ' '], "");
    if units.starts_with("degreen") || units.starts_with("degreesn") {
        return Some(true);
    }
    if units.starts_with("degreee") || units.starts_with("degreese") {
        return Some(false);
    }
    None
}

/// Whether `var` holds latitudes (`Some(true)`) or longitudes (`Some(false)`): by its
/// standard_name, else its units, else its name (`latitude`, `lat`, `nav_lat`, `TLAT`, ...).
pub(crate) fn lat_or_lon(var: &netcdf::Variable<'_>) -> Option<bool> {
    if let Some(kind) = lat_or_lon_by_attributes(var) {
        return Some(kind);
    }
    let name = var.name().to_ascii_lowercase();
    if name.contains("lat") {
        Some(true)
    } else if name.contains("lon") {
        Some(false)
    } else {
        None
    }
}

/// The 2-D latitude and longitude variables the data variable's `coordinates` attribute names
/// (a curvilinear grid), both over the same two of its dimensions: (latitude, longitude).
pub(crate) fn aux_lat_lon<'f>(
    file: &'f netcdf::File,
    var: &netcdf::Variable<'_>,
) -> Option<(netcdf::Variable<'f>, netcdf::Variable<'f>)> {
    let var_dims: Vec<String> = var.dimensions().iter().map(|d| d.name()).collect();
    let (mut lat, mut lon) = (None, None);
    for name in coordinates_of(var) {
        let Some(c) = file.variable(&name) else { continue };
        let dims: Vec<String> = c.dimensions().iter().map(|d| d.name()).collect();
        if dims.len() != 2 || dims[0] == dims[1] || !dims.iter().all(|d| var_dims.contains(d)) {
            continue;
        }
        match lat_or_lon(&c) {
            Some(true) if lat.is_none() => lat = Some(c),
            Some(false) if lon.is_none() => lon = Some(c),
            _ => {}
        }
    }
    let (lat, lon) = (lat?, lon?);
    let dims = |v: &netcdf::Variable<'_>| {
        let mut d: Vec<String> = v.dimensions().iter().map(|d| d.name()).collect();
        d.sort();
        d
    };
    (dims(&lat) == dims(&lon)).then_some((lat, lon))
}

/// The variable's horizontal dimensions (row, column): the two dimensions its 2-D auxiliary
/// latitude and longitude span (in the variable's order: the slower one is the row), else the
/// one dimension recognised as latitude and the one as longitude. Err: which one is unclear.
fn horizontal(file: &netcdf::File, var: &netcdf::Variable<'_>) -> Result<(usize, usize), Axis> {
    let dims: Vec<String> = var.dimensions().iter().map(|d| d.name()).collect();
    if let Some((lat, _)) = aux_lat_lon(file, var) {
        let spans: Vec<String> = lat.dimensions().iter().map(|d| d.name()).collect();
        let mut at: Vec<usize> = (0..dims.len()).filter(|&i| spans.contains(&dims[i])).collect();
        at.sort_unstable();
        if let [row, col] = at[..] {
            return Ok((row, col));
        }
    }
    let axes: Vec<Option<Axis>> = dims.iter().map(|n| axis_of(file, n)).collect();
    let find = |axis: Axis| -> Result<usize, Axis> {
        match (0..dims.len()).filter(|&i| axes[i] == Some(axis)).collect::<Vec<_>>()[..] {
            [i] => Ok(i),
            _ => Err(axis),
        }
    };
    Ok((find(Axis::Lat)?, find(Axis::Lon)?))
}

/// Whether `dim` is a time dimension: named like one, or its coordinate variable has time
/// units (`days since ...`) or `axis = "T"`.
fn is_time(file: &netcdf::File, dim: &str) -> bool {
    if let Some(coord) = file.variable(dim) {
        let units = var_text(&coord, "units").unwrap_or_default().to_ascii_lowercase();
        let axis = var_text(&coord, "axis").unwrap_or_default().to_ascii_uppercase();
        if units.contains(" since ") || axis == "T" {
            return true;
        }
    }
    let name = dim.to_ascii_lowercase();
    name.contains("time") || name == "t" || name == "date" || name == "day"
}

fn describe_dims(dims: &[(String, usize)]) -> String {
    let inner: Vec<String> = dims.iter().map(|(n, l)| format!("{n}={l}")).collect();
    format!("({})", inner.join(", "))
}

impl VarLayout {
    /// The layout of `var` (or the auto-detected data variable) in an open file.
    ///
    /// With `allow_extra`, dimensions besides latitude and longitude may be longer than 1 if
    /// they come first (e.g. a stacked `(time, lat, lon)` output); otherwise they must have
    /// length 1 (a leading time dimension of one step, as in OSTIA files).
    pub fn inspect(file: &netcdf::File, path: &Path, var: Option<&str>, allow_extra: bool) -> Result<Self, InputError> {
        let name = match var {
            Some(v) => v.to_string(),
            None => detect_variable(file, path)?,
        };
        let Some(variable) = file.variable(&name) else {
            return Err(InputError::NoSuchVariable { path: path.into(), var: name, available: variable_names(file) });
        };
        let bad = |problem: String| InputError::BadVariable { path: path.into(), var: name.clone(), problem };
        let vartype = variable.vartype();
        let storage = Storage::from_nc(&vartype).ok_or_else(|| bad(unread(&nc_type_name(&vartype))))?;
        let dims: Vec<(String, usize)> = variable.dimensions().iter().map(|d| (d.name(), d.len())).collect();
        // lat_axis and lon_axis are the grid's row and column dimensions: on a curvilinear
        // grid (2-D latitude and longitude) the first horizontal dimension plays latitude's role
        let (lat_axis, lon_axis) = horizontal(file, &variable).map_err(|axis| {
            bad(format!(
                "dimensions {}: cannot tell which is {} (neither by name, nor by a coordinate variable, nor by \
                 2-D latitude/longitude variables named in its coordinates attribute)",
                describe_dims(&dims),
                if axis == Axis::Lat { "latitude" } else { "longitude" }
            ))
        })?;
        let time_axis = (0..dims.len()).find(|&i| i != lat_axis && i != lon_axis && is_time(file, &dims[i].0));
        if dims[lat_axis].1 == 0 || dims[lon_axis].1 == 0 {
            return Err(bad(format!("dimensions {}: the grid has no cells", describe_dims(&dims))));
        }
        for (i, (dim, len)) in dims.iter().enumerate() {
            if i == lat_axis || i == lon_axis || *len == 1 {
                continue;
            }
            if Some(i) == time_axis {
                // a time series: read one step at a time along it (a step is a whole field
                // only when time varies slower than the grid)
                if i > lat_axis.min(lon_axis) {
                    return Err(bad(format!(
                        "the time dimension {dim} comes after latitude or longitude (dimensions {}): time must \
                         come first (e.g. ncpdq -a {dim},... to reorder)",
                        describe_dims(&dims)
                    )));
                }
                continue;
            }
            if !allow_extra {
                // a depth or level dimension: "one time step" would send the user looking for
                // the wrong thing
                return Err(bad(format!(
                    "dimension {dim} has length {len} (dimensions {}) and is not a time dimension; sstclim reads \
                     one latitude-longitude field per file: select one {dim} (e.g. ncks -d {dim},0)",
                    describe_dims(&dims)
                )));
            }
            if i > lat_axis.min(lon_axis) {
                return Err(bad(format!("dimension {dim} must come before latitude and longitude")));
            }
        }
        let packing = Packing::from_attributes(storage, |a| {
            variable.attribute_value(a).and_then(Result::ok).map(|v| AttrValue::from(&v))
        })
        .map_err(bad)?;
        let meta = VarMeta {
            units: var_text(&variable, "units"),
            long_name: var_text(&variable, "long_name"),
            standard_name: var_text(&variable, "standard_name"),
        };
        Ok(VarLayout { name, storage, dims, lat_axis, lon_axis, time_axis, packing, meta })
    }

    pub fn nlat(&self) -> usize {
        self.dims[self.lat_axis].1
    }

    pub fn nlon(&self) -> usize {
        self.dims[self.lon_axis].1
    }

    /// Product of the lengths of the dimensions other than latitude and longitude.
    pub fn extra_len(&self) -> usize {
        self.dims
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.lat_axis && *i != self.lon_axis)
            .map(|(_, (_, l))| *l)
            .product()
    }

    /// Number of time steps (1 without a time dimension).
    pub fn steps(&self) -> usize {
        self.time_axis.map_or(1, |t| self.dims[t].1)
    }

    /// Whether latitude varies slower than longitude in the file (C order `(lat, lon)`).
    pub fn lat_is_slow(&self) -> bool {
        self.lat_axis < self.lon_axis
    }

    /// The shape as `(lat=.., lon=..)` for messages.
    pub fn shape_text(&self) -> String {
        format!("lat={} x lon={}", self.nlat(), self.nlon())
    }

    /// Hyperslab of rows (latitude indices) and columns (longitude indices), in file order.
    pub(crate) fn extents(&self, rows: &Range<usize>, cols: &Range<usize>) -> Vec<Extent> {
        self.extents_at(0, rows, cols)
    }

    /// [`VarLayout::extents`] at time step `step` (along [`VarLayout::time_axis`]).
    pub(crate) fn extents_at(&self, step: usize, rows: &Range<usize>, cols: &Range<usize>) -> Vec<Extent> {
        (0..self.dims.len())
            .map(|i| {
                let (start, count) = if i == self.lat_axis {
                    (rows.start, rows.len())
                } else if i == self.lon_axis {
                    (cols.start, cols.len())
                } else if Some(i) == self.time_axis {
                    (step, 1)
                } else {
                    (0, 1)
                };
                Extent::SliceCount { start, count, stride: 1 }
            })
            .collect()
    }
}

fn variable_names(file: &netcdf::File) -> String {
    let names: Vec<String> = file.variables().map(|v| v.name()).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// `analysed_sst`, else `sst`, else the only numeric variable with latitude and longitude
/// dimensions that is not a coordinate variable.
fn detect_variable(file: &netcdf::File, path: &Path) -> Result<String, InputError> {
    for preferred in ["analysed_sst", "sst"] {
        if file.variable(preferred).is_some() {
            return Ok(preferred.into());
        }
    }
    // what other variables name as their coordinates, bounds or grid mapping (2-D latitude
    // and longitude, vertices) is not data
    let mut auxiliary: Vec<String> = Vec::new();
    for v in file.variables() {
        auxiliary.extend(coordinates_of(&v));
        for attr in ["bounds", "grid_mapping"] {
            if let Some(t) = var_text(&v, attr) {
                auxiliary.extend(t.split_whitespace().next().map(|n| n.trim_end_matches(':').to_string()));
            }
        }
    }
    let candidates: Vec<String> = file
        .variables()
        .filter(|v| {
            let dims = v.dimensions();
            let name = v.name();
            Storage::from_nc(&v.vartype()).is_some()
                && dims.len() >= 2
                && !dims.iter().any(|d| d.name() == name)
                && !auxiliary.contains(&name)
                // latitudes and longitudes no coordinates attribute names (CESM's ULAT, ULONG)
                && lat_or_lon_by_attributes(v).is_none()
                && (aux_lat_lon(file, v).is_some()
                    || dims.iter().any(|d| axis_of(file, &d.name()) == Some(Axis::Lat))
                        && dims.iter().any(|d| axis_of(file, &d.name()) == Some(Axis::Lon)))
        })
        .map(|v| v.name())
        .collect();
    match candidates.len() {
        1 => Ok(candidates[0].clone()),
        0 => Err(InputError::NoGriddedVariable { path: path.into(), available: variable_names(file) }),
        _ => Err(InputError::AmbiguousVariable { path: path.into(), candidates: candidates.join(", ") }),
    }
}
