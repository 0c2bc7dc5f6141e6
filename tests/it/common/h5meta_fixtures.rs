//! The files tests/h5meta.rs checks the parser on, written here by the official libraries: a
//! netCDF-4 file through libnetcdf with every storage sstclim meets, and files written by
//! libhdf5 directly in its oldest and newest formats.

use std::ffi::CString;
use std::path::Path;

use hdf5_metno_sys::h5i::hid_t;
use hdf5_metno_sys::{h5, h5d, h5f, h5l, h5p, h5s, h5t};
use sstclim::input;

const NLAT: usize = 5;
const NLON: usize = 7;

/// Write variable `name` (leaving define mode for it in a classic-model file).
fn put<T: netcdf::NcTypeDescriptor>(f: &mut netcdf::FileMut, classic: bool, name: &str, values: &[T]) {
    if classic {
        f.enddef().unwrap();
    }
    f.variable_mut(name).unwrap().put_values(values, ..).unwrap();
    if classic {
        f.redef().unwrap();
    }
}

/// A netCDF-4 file with every storage sstclim meets: contiguous, chunked, deflated; float64,
/// float32, integers of 1 to 8 bytes; both byte orders; (time, lat, lon) and (lon, lat); and
/// `extra` more variables (over 8 links the root group keeps them in dense storage).
pub fn netcdf_fixture(path: &Path, options: netcdf::Options, extra: usize) {
    input::silence_hdf5();
    let classic = options.contains(netcdf::Options::CLASSIC);
    let mut f = netcdf::create_with(path, options).unwrap();
    f.add_dimension("time", 1).unwrap();
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    f.add_dimension("depth", 3).unwrap();
    for i in 0..10 {
        f.add_attribute(&format!("global_attribute_{i}"), format!("value {i}")).unwrap();
    }
    let lat: Vec<f64> = (0..NLAT).map(|i| -60.0 + 30.0 * i as f64).collect();
    let lon: Vec<f64> = (0..NLON).map(|i| 0.5 + 50.0 * i as f64).collect();
    let field = |k: usize| (0..NLAT * NLON).map(|i| (i * 7 + k) as f64 * 0.25 - 3.0).collect::<Vec<f64>>();
    let mut v = f.add_variable::<f64>("lat", &["lat"]).unwrap();
    v.put_attribute("units", "degrees_north").unwrap();
    put(&mut f, classic, "lat", &lat);
    let mut v = f.add_variable::<f64>("lon", &["lon"]).unwrap();
    v.put_attribute("units", "degrees_east").unwrap();
    put(&mut f, classic, "lon", &lon);
    let mut v = f.add_variable::<f32>("depth", &["depth"]).unwrap();
    v.set_endianness(netcdf::Endianness::Big).unwrap();
    put(&mut f, classic, "depth", &[0.5f32, 1.25, f32::NAN]);
    // the same in this machine's order: converted by the FPU, in libhdf5 as here
    f.add_variable::<f32>("depth_bounds", &["depth"]).unwrap();
    put(&mut f, classic, "depth_bounds", &[-0.0f32, 1e-40, f32::NAN]);
    f.add_variable::<i32>("time", &["time"]).unwrap();
    put(&mut f, classic, "time", &[11_000i32]);
    let mut v = f.add_variable::<f64>("sst", &["time", "lat", "lon"]).unwrap();
    v.set_fill_value(f64::NAN).unwrap();
    put(&mut f, classic, "sst", &field(0));
    f.add_variable::<f32>("sst_lonlat", &["lon", "lat"]).unwrap();
    put(&mut f, classic, "sst_lonlat", &field(1).iter().map(|&x| x as f32).collect::<Vec<_>>());
    let mut v = f.add_variable::<i16>("analysed_sst", &["time", "lat", "lon"]).unwrap();
    v.set_endianness(netcdf::Endianness::Big).unwrap();
    v.put_attribute("scale_factor", 0.01f32).unwrap();
    put(&mut f, classic, "analysed_sst", &field(2).iter().map(|&x| (x * 10.0) as i16).collect::<Vec<_>>());
    let mut v = f.add_variable::<f32>("chunked", &["lat", "lon"]).unwrap();
    v.set_chunking(&[2, 3]).unwrap();
    put(&mut f, classic, "chunked", &field(3).iter().map(|&x| x as f32).collect::<Vec<_>>());
    let mut v = f.add_variable::<f64>("deflated", &["time", "lat", "lon"]).unwrap();
    v.set_compression(4, true).unwrap();
    put(&mut f, classic, "deflated", &field(4));
    f.add_variable::<i8>("mask", &["lat", "lon"]).unwrap();
    put(&mut f, classic, "mask", &field(5).iter().map(|&x| x as i8).collect::<Vec<_>>());
    if !classic {
        f.add_variable::<u8>("flags", &["lat", "lon"]).unwrap();
        put(&mut f, classic, "flags", &field(6).iter().map(|&x| x.abs() as u8).collect::<Vec<_>>());
        f.add_variable::<i64>("count", &["lon"]).unwrap();
        put(&mut f, classic, "count", &[i64::MAX, i64::MIN, (1 << 53) + 1, -5, 0, 7, 9]);
        f.add_variable::<u16>("level", &["depth"]).unwrap();
        put(&mut f, classic, "level", &[1u16, 65535, 300]);
    }
    for i in 0..extra {
        f.add_variable::<f64>(&format!("extra_variable_with_a_longer_name_{i:03}"), &["lat", "lon"]).unwrap();
        put(&mut f, classic, &format!("extra_variable_with_a_longer_name_{i:03}"), &field(10 + i));
    }
    f.close().unwrap();
}

/// A file written by libhdf5 directly: `latest` sets the newest format (superblock 3, object
/// header 2, layout message 4), else the library's default (superblock 0, symbol tables);
/// `few` writes only the first 4 of [`HDF5_DATASETS`]; `links` more names for dataset `x` (long
/// ones, to grow the group's B-tree and heap).
pub fn hdf5_fixture(path: &Path, latest: bool, few: bool, links: usize) {
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let c = |s: &str| CString::new(s).unwrap();
    input::silence_hdf5();
    let _lock = hdf5_metno_sys::LOCK.lock();
    // SAFETY: HDF5 calls under the library lock on handles made and closed here; every buffer
    // passed to H5Dwrite holds the dataspace's values in the memory type given.
    unsafe {
        h5::H5open();
        let fapl = h5p::H5Pcreate(*h5p::H5P_CLS_FILE_ACCESS);
        // the oldest format explicitly: HDF5 2.x no longer writes it by default
        let low = if latest { h5f::H5F_LIBVER_LATEST } else { h5f::H5F_LIBVER_EARLIEST };
        assert!(h5p::H5Pset_libver_bounds(fapl, low, h5f::H5F_LIBVER_LATEST) >= 0);
        let f = h5f::H5Fcreate(cpath.as_ptr(), h5f::H5F_ACC_TRUNC, h5p::H5P_DEFAULT, fapl);
        assert!(f >= 0);
        h5p::H5Pclose(fapl);
        let dataset = |name: &str, ftype: hid_t, dims: &[u64], dcpl: hid_t, mtype: hid_t, data: *const u8| {
            if few && !HDF5_DATASETS[..4].contains(&name) {
                return;
            }
            let space = h5s::H5Screate_simple(dims.len() as i32, dims.as_ptr(), std::ptr::null());
            let d = h5d::H5Dcreate2(f, c(name).as_ptr(), ftype, space, h5p::H5P_DEFAULT, dcpl, h5p::H5P_DEFAULT);
            assert!(d >= 0, "creating {name}");
            if !data.is_null() {
                let w = h5d::H5Dwrite(d, mtype, h5s::H5S_ALL, h5s::H5S_ALL, h5p::H5P_DEFAULT, data.cast());
                assert!(w >= 0, "writing {name}");
            }
            h5d::H5Dclose(d);
            h5s::H5Sclose(space);
        };
        let dflt = h5p::H5P_DEFAULT;
        let x: Vec<f64> = (0..40).map(|i| f64::from(i) * 0.1 - 1.0).collect();
        dataset("x", *h5t::H5T_IEEE_F64LE, &[40], dflt, *h5t::H5T_NATIVE_DOUBLE, x.as_ptr().cast());
        let y: Vec<f32> = vec![1.5, -2.25, f32::INFINITY, 1e-40, 3.0];
        dataset("y", *h5t::H5T_IEEE_F32BE, &[5], dflt, *h5t::H5T_NATIVE_FLOAT, y.as_ptr().cast());
        let field: Vec<i16> = (0..6 * 4).map(|i| i * 100 - 900).collect();
        dataset("field", *h5t::H5T_STD_I16BE, &[6, 4], dflt, *h5t::H5T_NATIVE_SHORT, field.as_ptr().cast());
        let big: Vec<i64> = vec![i64::MAX, -3, (1 << 53) + 1];
        dataset("i64", *h5t::H5T_STD_I64LE, &[3], dflt, *h5t::H5T_NATIVE_LLONG, big.as_ptr().cast());
        let bytes: Vec<u8> = vec![0, 1, 255];
        dataset("u8", *h5t::H5T_STD_U8LE, &[3], dflt, *h5t::H5T_NATIVE_UCHAR, bytes.as_ptr());
        let compact = h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE);
        h5p::H5Pset_layout(compact, h5d::H5D_layout_t::H5D_COMPACT);
        dataset("compact", *h5t::H5T_IEEE_F64BE, &[4], compact, *h5t::H5T_NATIVE_DOUBLE, x.as_ptr().cast());
        h5p::H5Pclose(compact);
        let chunked = h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE);
        h5p::H5Pset_chunk(chunked, 2, [3u64, 2].as_ptr());
        dataset("chunked", *h5t::H5T_STD_I16LE, &[6, 4], chunked, *h5t::H5T_NATIVE_SHORT, field.as_ptr().cast());
        h5p::H5Pset_shuffle(chunked);
        h5p::H5Pset_deflate(chunked, 6);
        dataset("deflated", *h5t::H5T_STD_I16LE, &[6, 4], chunked, *h5t::H5T_NATIVE_SHORT, field.as_ptr().cast());
        h5p::H5Pclose(chunked);
        // never written: no storage allocated
        let late = h5p::H5Pcreate(*h5p::H5P_CLS_DATASET_CREATE);
        h5p::H5Pset_alloc_time(late, h5d::H5D_alloc_time_t::H5D_ALLOC_TIME_LATE);
        dataset("unwritten", *h5t::H5T_IEEE_F64LE, &[8, 2], late, 0, std::ptr::null());
        h5p::H5Pclose(late);
        for i in 0..links {
            let name = c(&format!("{}{i:05}", "another_name_for_x_".repeat(8)));
            assert!(h5l::H5Lcreate_hard(f, c("x").as_ptr(), f, name.as_ptr(), dflt, dflt) >= 0);
        }
        h5f::H5Fclose(f);
    }
}

pub const HDF5_DATASETS: [&str; 9] = ["x", "y", "field", "compact", "i64", "u8", "chunked", "deflated", "unwritten"];
