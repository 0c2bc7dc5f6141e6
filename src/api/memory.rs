//! Building a [`Source`] from a caller's arrays: values of any numeric type `[time][y][x]`
//! (or `[time][cell]`), with their fill value, scale and offset as CF packs them, the date of
//! every step in its CF calendar, and the grid's coordinates, 1-D or 2-D.

use std::sync::Arc;

use crate::calendar::Date;
use crate::input::{Attr, Aux, Coord, Grid, Packing, RawData, VarMeta};
use crate::source::{MemorySeries, Source, SourceError};
use crate::util::cftime::CfCalendar;

/// Values a memory source takes: every numeric type a NetCDF variable stores.
pub trait Stored {
    fn into_raw(values: Vec<Self>) -> RawData
    where
        Self: Sized;
}

macro_rules! stored {
    ($($t:ty => $v:ident),*) => {$(
        impl Stored for $t {
            fn into_raw(values: Vec<$t>) -> RawData {
                RawData::$v(values)
            }
        }
    )*};
}
stored!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, f32 => F32, f64 => F64);

fn text(name: &str, value: &str) -> Attr {
    (name.into(), netcdf::AttributeValue::Str(value.into()))
}

/// A grid of 1-D latitudes (rows) and longitudes (columns), in degrees.
pub fn grid_1d(lat: Vec<f64>, lon: Vec<f64>) -> Grid {
    Grid::regular(Coord::new("lat", lat, true), Coord::new("lon", lon, true))
}

/// A curvilinear grid of `ny` rows and `nx` columns: the latitude and longitude of every cell,
/// `[y][x]`.
pub fn grid_2d(lat: Vec<f64>, lon: Vec<f64>, ny: usize, nx: usize) -> Grid {
    let index = |n: usize| (0..n).map(|i| i as f64).collect();
    let aux = |name: &str, values: Vec<f64>, units: &str| Aux {
        name: name.into(),
        dims: ["y".into(), "x".into()],
        values,
        attrs: vec![text("standard_name", name), text("units", units)],
    };
    Grid {
        lat: Coord::new("y", index(ny), false),
        lon: Coord::new("x", index(nx), false),
        aux: Some([aux("latitude", lat, "degrees_north"), aux("longitude", lon, "degrees_east")]),
        mapping: None,
    }
}

/// A source of daily values in memory: `values[step][y][x]` (row-major, `grid`'s rows and
/// columns), the date of each step in `calendar`, `fill` (a value meaning "missing"; NaN is
/// missing too) and the CF packing `value = offset + scale x stored`.
#[allow(clippy::too_many_arguments)]
pub fn memory_source<T: Stored>(
    name: &str,
    values: Vec<T>,
    dates: Vec<Date>,
    calendar: CfCalendar,
    grid: Grid,
    fill: Option<f64>,
    scale_offset: (f64, f64),
    units: Option<&str>,
) -> Result<Source, SourceError> {
    let packing = Packing { fill, scale: scale_offset.0, offset: scale_offset.1, ..Packing::none() };
    let meta = VarMeta { units: units.map(str::to_string), long_name: None, standard_name: None };
    let series = MemorySeries::new(name, T::into_raw(values), dates, calendar, grid, packing, meta)?;
    Ok(Source::Memory(Arc::new(series)))
}
