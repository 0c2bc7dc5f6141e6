//! Writing one generated day's file: coordinates, the data variable (float64, or int16 packed
//! as OSTIA packs it) and, as compressed products store it, chunked, deflated and shuffled.
//!
//! Why it exists apart from the generator: the file's layout (dimensions, attributes,
//! storage) is what the read paths are tested and benchmarked on; the generator decides the
//! values and which process writes which file.

use std::path::Path;

use serde::Serialize;

use super::{Date, DimOrder, Field, GenStorage, GenerateOptions};

/// The storage of the generated data variable, as compressed products store it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Compression {
    /// Deflate level 1-9 (None: not deflated).
    pub deflate: Option<u8>,
    /// The shuffle filter before deflate.
    pub shuffle: bool,
    /// Chunk lengths of the two grid dimensions in the variable's order (leading dimensions
    /// get 1); None: one chunk of the whole field where filtered, else contiguous.
    pub chunks: Option<[usize; 2]>,
}

impl Compression {
    /// Whether the variable is stored contiguous (no filter, no chunks asked for).
    pub fn is_contiguous(&self) -> bool {
        self.deflate.is_none() && !self.shuffle && self.chunks.is_none()
    }
}

/// One day's file, written under a temporary name and renamed when complete.
pub(super) fn write_file(
    args: &GenerateOptions,
    field: &Field,
    date: Date,
    values: &[f64],
    path: &Path,
) -> Result<(), netcdf::Error> {
    let tmp = path.with_file_name(format!(
        ".{}.partial",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    let mut file = netcdf::create(&tmp)?;
    let lat_lon = args.dim_order == DimOrder::LatLon;
    let mut dims: Vec<&str> = Vec::new();
    if args.time_dim {
        file.add_dimension("time", 1)?;
        dims.push("time");
    }
    if args.zlev_dim {
        file.add_dimension("zlev", 1)?;
        dims.push("zlev");
    }
    file.add_dimension("lat", field.nlat)?;
    file.add_dimension("lon", field.nlon)?;
    dims.extend(if lat_lon { ["lat", "lon"] } else { ["lon", "lat"] });
    file.add_attribute("Conventions", "CF-1.8")?;
    file.add_attribute("title", "sstclim synthetic daily sea surface temperature")?;
    file.add_attribute("source", format!("sstclim {} generate (seed {})", env!("CARGO_PKG_VERSION"), args.seed))?;
    file.add_attribute("date", date.to_string())?;
    if args.time_dim {
        let mut t = file.add_variable::<i32>("time", &["time"])?;
        t.put_attribute("units", "days since 1970-01-01 00:00:00")?;
        t.put_attribute("standard_name", "time")?;
        t.put_values(&[date.to_days() as i32], ..)?;
    }
    if args.zlev_dim {
        let mut z = file.add_variable::<f32>("zlev", &["zlev"])?;
        z.put_attribute("units", "meters")?;
        z.put_attribute("positive", "down")?;
        z.put_values(&[0.0f32], ..)?;
    }
    for (name, coords, std_name, units) in
        [("lat", &field.lat, "latitude", "degrees_north"), ("lon", &field.lon, "longitude", "degrees_east")]
    {
        if args.storage == GenStorage::I16 {
            let mut v = file.add_variable::<f32>(name, &[name])?;
            v.put_attribute("standard_name", std_name)?;
            v.put_attribute("units", units)?;
            let c: Vec<f32> = coords.iter().map(|&x| x as f32).collect();
            v.put_values(&c, ..)?;
        } else {
            let mut v = file.add_variable::<f64>(name, &[name])?;
            v.put_attribute("standard_name", std_name)?;
            v.put_attribute("units", units)?;
            v.put_values(coords, ..)?;
        }
    }
    // values arrive in (lat, lon) order; the lon-lat layout stores their transpose
    let (nlat, nlon) = (field.nlat, field.nlon);
    let order = |c: usize| {
        if lat_lon {
            c
        } else {
            (c % nlat) * nlon + c / nlat
        }
    };
    match args.storage {
        GenStorage::F64 => {
            let mut v = file.add_variable::<f64>("sst", &dims)?;
            compress(&mut v, args.compression, &dims, [field.nlat, field.nlon], lat_lon)?;
            v.set_fill_value(f64::NAN)?;
            v.put_attribute("standard_name", "sea_surface_temperature")?;
            v.put_attribute("long_name", "sea surface temperature")?;
            v.put_attribute("units", "degree_Celsius")?;
            let data: Vec<f64> = (0..values.len()).map(|c| values[order(c)]).collect();
            v.put_values(&data, ..)?;
        }
        GenStorage::I16 => {
            let mut v = file.add_variable::<i16>("analysed_sst", &dims)?;
            compress(&mut v, args.compression, &dims, [field.nlat, field.nlon], lat_lon)?;
            v.set_fill_value(-32768i16)?;
            v.put_attribute("standard_name", "sea_surface_foundation_temperature")?;
            v.put_attribute("long_name", "analysed sea surface temperature")?;
            v.put_attribute("units", "kelvin")?;
            v.put_attribute("scale_factor", 0.01f32)?;
            v.put_attribute("add_offset", 273.15f32)?;
            v.put_attribute("valid_min", -300i16)?;
            v.put_attribute("valid_max", 4500i16)?;
            let data: Vec<i16> = (0..values.len())
                .map(|c| {
                    let x = values[order(c)];
                    if x.is_nan() {
                        -32768
                    } else {
                        (x * 100.0).round() as i16
                    }
                })
                .collect();
            v.put_values(&data, ..)?;
        }
    }
    file.close()?;
    std::fs::rename(&tmp, path).map_err(|e| netcdf::Error::Str(e.to_string()))
}

/// Store `v` (of dimensions `dims`, the last two the grid's) as `c` asks: chunked (leading
/// dimensions by 1, the grid's by `c.chunks`, else whole), deflated and shuffled.
fn compress(
    v: &mut netcdf::VariableMut<'_>,
    c: Compression,
    dims: &[&str],
    [nlat, nlon]: [usize; 2],
    lat_lon: bool,
) -> Result<(), netcdf::Error> {
    if c.is_contiguous() {
        return Ok(());
    }
    let grid = if lat_lon { [nlat, nlon] } else { [nlon, nlat] };
    let [a, b] = c.chunks.unwrap_or(grid);
    let mut chunks = vec![1usize; dims.len() - 2];
    chunks.extend([a.min(grid[0]), b.min(grid[1])]);
    v.set_chunking(&chunks)?;
    if c.deflate.is_some() || c.shuffle {
        // shuffle alone is written as deflate level 0 with shuffle (libnetcdf's only way)
        v.set_compression(c.deflate.map_or(0, i32::from), c.shuffle)?;
    }
    Ok(())
}
