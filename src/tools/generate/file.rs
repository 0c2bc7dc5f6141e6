//! Writing one generated file (a day's, or a year's of every day along its time dimension):
//! coordinates, the data variable (float64, or int16 packed as OSTIA packs it) and, as
//! compressed products store it, chunked, deflated and shuffled.
//!
//! Why it exists apart from the generator: the file's layout (dimensions, attributes,
//! storage) is what the read paths are tested and benchmarked on; the generator decides the
//! values and which process writes which file.

use std::path::Path;

use serde::Serialize;

use super::{Date, DimOrder, Field, GenStorage, GenerateOptions, StepsPerFile};

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

/// One file of `dates` (a day, or a year's days along time), written under a temporary name
/// and renamed when complete. A yearly file's values are computed and written a chunk's
/// steps at a time (the memory of one block of steps, each chunk written whole).
pub(super) fn write_file(
    args: &GenerateOptions,
    field: &Field,
    dates: &[Date],
    path: &Path,
) -> Result<(), netcdf::Error> {
    let tmp = path.with_file_name(format!(
        ".{}.partial",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    ));
    let mut file = netcdf::create(&tmp)?;
    let dims = define_coords(&mut file, args, field, dates)?;
    let time_chunk = if args.steps_per_file == StepsPerFile::Year { args.time_chunk.clamp(1, dates.len()) } else { 1 };
    let name = define_values(&mut file, args, field, &dims, time_chunk)?;
    write_values(&mut file, args, field, dates, &dims, name, time_chunk)?;
    file.close()?;
    std::fs::rename(&tmp, path).map_err(|e| netcdf::Error::Str(e.to_string()))
}

/// The dimensions, the global attributes and the coordinate variables (time, zlev, lat, lon) of
/// a file of `dates`; returns the values' dimensions in their order.
fn define_coords(
    file: &mut netcdf::FileMut,
    args: &GenerateOptions,
    field: &Field,
    dates: &[Date],
) -> Result<Vec<&'static str>, netcdf::Error> {
    let yearly = args.steps_per_file == StepsPerFile::Year;
    let time_dim = args.time_dim || yearly;
    let date = dates[0];
    let lat_lon = args.dim_order == DimOrder::LatLon;
    let mut dims: Vec<&'static str> = Vec::new();
    if time_dim {
        file.add_dimension("time", dates.len())?;
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
    if !yearly {
        file.add_attribute("date", date.to_string())?;
    }
    if time_dim {
        let mut t = file.add_variable::<i32>("time", &["time"])?;
        t.put_attribute("units", "days since 1970-01-01 00:00:00")?;
        t.put_attribute("standard_name", "time")?;
        if yearly {
            t.put_attribute("calendar", "standard")?;
            t.put_attribute("axis", "T")?;
        }
        let days: Vec<i32> = dates.iter().map(|d| d.to_days() as i32).collect();
        t.put_values(&days, ..)?;
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
    Ok(dims)
}

/// The values' variable (f64 `sst`, or OSTIA's packed i16 `analysed_sst`) with its storage and
/// attributes; returns its name.
fn define_values(
    file: &mut netcdf::FileMut,
    args: &GenerateOptions,
    field: &Field,
    dims: &[&str],
    time_chunk: usize,
) -> Result<&'static str, netcdf::Error> {
    let lat_lon = args.dim_order == DimOrder::LatLon;
    let name = if args.storage == GenStorage::I16 { "analysed_sst" } else { "sst" };
    match args.storage {
        GenStorage::F64 => {
            let mut v = file.add_variable::<f64>(name, dims)?;
            compress(&mut v, args.compression, dims, [field.nlat, field.nlon], lat_lon, time_chunk)?;
            v.set_fill_value(f64::NAN)?;
            v.put_attribute("standard_name", "sea_surface_temperature")?;
            v.put_attribute("long_name", "sea surface temperature")?;
            v.put_attribute("units", "degree_Celsius")?;
        }
        GenStorage::I16 => {
            let mut v = file.add_variable::<i16>(name, dims)?;
            compress(&mut v, args.compression, dims, [field.nlat, field.nlon], lat_lon, time_chunk)?;
            v.set_fill_value(-32768i16)?;
            v.put_attribute("standard_name", "sea_surface_foundation_temperature")?;
            v.put_attribute("long_name", "analysed sea surface temperature")?;
            v.put_attribute("units", "kelvin")?;
            v.put_attribute("scale_factor", 0.01f32)?;
            v.put_attribute("add_offset", 273.15f32)?;
            v.put_attribute("valid_min", -300i16)?;
            v.put_attribute("valid_max", 4500i16)?;
        }
    }
    Ok(name)
}

/// The values of `dates` into variable `name`, `time_chunk` steps at a time.
fn write_values(
    file: &mut netcdf::FileMut,
    args: &GenerateOptions,
    field: &Field,
    dates: &[Date],
    dims: &[&str],
    name: &str,
    time_chunk: usize,
) -> Result<(), netcdf::Error> {
    let lat_lon = args.dim_order == DimOrder::LatLon;
    // values arrive in (lat, lon) order; the lon-lat layout stores their transpose
    let (nlat, nlon) = (field.nlat, field.nlon);
    let order = |c: usize| {
        if lat_lon {
            c
        } else {
            (c % nlat) * nlon + c / nlat
        }
    };
    let cells = nlat * nlon;
    let mut values = vec![0.0; cells];
    let mut v = file.variable_mut(name).expect("just added");
    for (b, block) in dates.chunks(time_chunk).enumerate() {
        let mut f64s = Vec::new();
        let mut i16s = Vec::new();
        for &d in block {
            field.day(args, d, &mut values);
            match args.storage {
                GenStorage::F64 => f64s.extend((0..cells).map(|c| values[order(c)])),
                GenStorage::I16 => i16s.extend((0..cells).map(|c| {
                    let x = values[order(c)];
                    if x.is_nan() {
                        -32768
                    } else {
                        (x * 100.0).round() as i16
                    }
                })),
            }
        }
        // the block's steps, every other dimension whole
        let first = b * time_chunk;
        let extents: Vec<std::ops::Range<usize>> = dims
            .iter()
            .map(|&d| match d {
                "time" => first..first + block.len(),
                "zlev" => 0..1,
                "lat" => 0..nlat,
                _ => 0..nlon,
            })
            .collect();
        match args.storage {
            GenStorage::F64 => v.put_values(&f64s, extents)?,
            GenStorage::I16 => v.put_values(&i16s, extents)?,
        }
    }
    Ok(())
}

/// Store `v` (of dimensions `dims`, the last two the grid's) as `c` asks: chunked (time by
/// `time_chunk`, zlev by 1, the grid's by `c.chunks`, else whole), deflated and shuffled.
fn compress(
    v: &mut netcdf::VariableMut<'_>,
    c: Compression,
    dims: &[&str],
    [nlat, nlon]: [usize; 2],
    lat_lon: bool,
    time_chunk: usize,
) -> Result<(), netcdf::Error> {
    if c.is_contiguous() {
        return Ok(());
    }
    let grid = if lat_lon { [nlat, nlon] } else { [nlon, nlat] };
    let [a, b] = c.chunks.unwrap_or(grid);
    // time by `time_chunk` steps, zlev by 1
    let mut chunks: Vec<usize> =
        dims[..dims.len() - 2].iter().map(|&d| if d == "time" { time_chunk } else { 1 }).collect();
    chunks.extend([a.min(grid[0]), b.min(grid[1])]);
    v.set_chunking(&chunks)?;
    if c.deflate.is_some() || c.shuffle {
        // shuffle alone is written as deflate level 0 with shuffle (libnetcdf's only way)
        v.set_compression(c.deflate.map_or(0, i32::from), c.shuffle)?;
    }
    Ok(())
}
