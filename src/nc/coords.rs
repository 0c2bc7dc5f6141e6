//! The horizontal grid of every output file (per-day, stacked, climatology, events summary):
//! the input's horizontal dimensions, names and order kept, with its 1-D coordinate variables,
//! or for a curvilinear input its 2-D latitude and longitude as CF auxiliary coordinates (CF
//! 5.2, named by the statistics' `coordinates` attribute), and its grid-mapping variable (CF
//! 5.6) when it has one. Bounds (`lat_bnds`, `vertices_latitude`) are not carried.
//!
//! One function for every layout, so that a reader finds the same grid in each.

use netcdf::AttributeValue;

use crate::input::{attr_text, Coord, Grid};

/// Where writing the grid failed: the variable (or dimension) and libnetcdf's error.
pub type GridError = (String, netcdf::Error);

fn at(name: &str) -> impl Fn(netcdf::Error) -> GridError + '_ {
    move |e| (name.to_string(), e)
}

/// The output's names of the grid's row and column dimensions: the input's.
pub fn dims(grid: &Grid) -> [&str; 2] {
    [grid.lat.dim.as_str(), grid.lon.dim.as_str()]
}

/// The attributes of a 1-D coordinate variable in the outputs. A true latitude or longitude
/// of a regular grid gets CF's `standard_name`, `units` and `axis`; an index or projected
/// coordinate (a curvilinear grid's `j`/`i`, a rotated pole's `rlat`) keeps the input's.
fn coord_attrs(c: &Coord, std_name: &str, units: &str, axis: &str, curvilinear: bool) -> Vec<(String, AttributeValue)> {
    if !c.from_file {
        return vec![("long_name".into(), format!("{std_name} index (the input had no coordinate variable)").into())];
    }
    let input_std = c.attrs.iter().find(|(k, _)| k == "standard_name").map(|(_, v)| v);
    let geographic = match input_std {
        None => true,
        Some(v) => attr_text(v).is_some_and(|s| s == std_name),
    };
    if geographic && !curvilinear {
        vec![("standard_name".into(), std_name.into()), ("units".into(), units.into()), ("axis".into(), axis.into())]
    } else {
        c.attrs.clone()
    }
}

/// Add the grid's two dimensions and its coordinate variables (and grid mapping) to `file`.
/// Returns the dimension names, in the input's order, for the statistics' variables.
pub fn put_grid(file: &mut netcdf::FileMut, grid: &Grid) -> Result<[String; 2], GridError> {
    let [row, col] = dims(grid);
    file.add_dimension(row, grid.nlat()).map_err(at(row))?;
    file.add_dimension(col, grid.nlon()).map_err(at(col))?;
    let curvilinear = grid.is_curvilinear();
    for (coord, std_name, units, axis) in
        [(&grid.lat, "latitude", "degrees_north", "Y"), (&grid.lon, "longitude", "degrees_east", "X")]
    {
        if curvilinear && !coord.from_file {
            // index numbers say nothing the 2-D coordinates do not
            continue;
        }
        let dim = coord.dim.as_str();
        let mut v = file.add_variable::<f64>(dim, &[dim]).map_err(at(dim))?;
        for (k, value) in coord_attrs(coord, std_name, units, axis, curvilinear) {
            v.put_attribute(&k, value).map_err(at(dim))?;
        }
        v.put_values(&coord.values, ..).map_err(at(dim))?;
    }
    for aux in grid.aux.iter().flatten() {
        let name = aux.name.as_str();
        let mut v = file.add_variable::<f64>(name, &[aux.dims[0].as_str(), aux.dims[1].as_str()]).map_err(at(name))?;
        for (k, value) in &aux.attrs {
            match (k.as_str(), value) {
                ("_FillValue", AttributeValue::Double(x)) => v.set_fill_value(*x).map(|_| ()),
                _ => v.put_attribute(k, value.clone()).map(|_| ()),
            }
            .map_err(at(name))?;
        }
        v.put_values(&aux.values, ..).map_err(at(name))?;
    }
    if let Some(m) = &grid.mapping {
        let name = m.name.as_str();
        // a container of attributes (CF 5.6): its type and value mean nothing
        let mut v = file.add_variable::<i32>(name, &[]).map_err(at(name))?;
        for (k, value) in &m.attrs {
            v.put_attribute(k, value.clone()).map_err(at(name))?;
        }
    }
    Ok([row.to_string(), col.to_string()])
}

/// The `coordinates` attribute of a statistic: `first` (the time-like auxiliary coordinate,
/// `doy` or `time`) and the 2-D latitude and longitude of a curvilinear grid.
pub fn coordinates(grid: &Grid, first: &str) -> String {
    let mut names = vec![first.to_string()];
    names.extend(grid.aux.iter().flatten().map(|a| a.name.clone()));
    names.retain(|n| !n.is_empty());
    names.join(" ")
}

/// The `grid_mapping` attribute of a statistic, when the input has one.
pub fn grid_mapping(grid: &Grid) -> Option<&str> {
    grid.mapping.as_ref().map(|m| m.name.as_str())
}
