//! Locating a variable stored contiguous, unfiltered and allocated in a NetCDF-4 file, through
//! HDF5 itself (`H5Dget_offset`), so that its values can be read or written at that byte offset
//! with `pread`/`pwrite`: the direct write paths (`crate::nc::direct`) and the reader of our own
//! climatology file (`crate::input::climatology`) check a file the same way.

use std::ffi::CString;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::library::{dataset_storage, with_hdf5_file};
use crate::input::format::{NotDirect, HDF5_SIGNATURE};

/// How a located variable's values are stored: IEEE floats or signed standard integers of so
/// many bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stored {
    Float(usize),
    Int(usize),
}

/// Byte offset of `var`'s values in the NetCDF-4 file `path`, after checking that HDF5 stores
/// them as `shape` little-endian values of type `value`, contiguous, unfiltered and allocated,
/// inside the file; or why not. Any shape, any float or signed integer type (a climatology's
/// statistics, the event catalogue's 1-D columns).
pub fn locate_as(path: &Path, var: &str, shape: &[usize], value: Stored) -> Result<u64, NotDirect> {
    use hdf5_metno_sys::{h5, h5d, h5t};
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut head = [0u8; 8];
    file.read_exact_at(&mut head, 0).map_err(|e| format!("reading the header: {e}"))?;
    if &head != HDF5_SIGNATURE {
        return Err("not an HDF5 file without user block".into());
    }
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let name = CString::new(format!("/{var}")).map_err(|e| e.to_string())?;
    // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
    let s = with_hdf5_file(path, |f| unsafe { dataset_storage(f, &name) }.ok_or(format!("no HDF5 dataset /{var}")))?;
    let (float, width) = match value {
        Stored::Float(n) => (true, n),
        Stored::Int(n) => (false, n),
    };
    let bytes = (shape.iter().product::<usize>() * width) as u64;
    let want: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
    if s.layout != h5d::H5D_layout_t::H5D_CONTIGUOUS {
        return Err(format!("stored {:?}, not contiguous", s.layout));
    }
    if s.filters != 0 {
        return Err(format!("{} filter(s) (compression)", s.filters));
    }
    let class_ok = if float {
        s.class == h5t::H5T_class_t::H5T_FLOAT
    } else {
        s.class == h5t::H5T_class_t::H5T_INTEGER && s.signed && s.standard
    };
    if !class_ok || s.type_size != width {
        let want = match value {
            Stored::Float(4) => "float32".to_string(),
            Stored::Float(8) => "float64".to_string(),
            Stored::Float(n) => format!("a float of {n} bytes"),
            Stored::Int(n) => format!("int{}", 8 * n),
        };
        return Err(format!("HDF5 type {:?} of {} bytes, not {want}", s.class, s.type_size));
    }
    if s.order != h5t::H5T_order_t::H5T_ORDER_LE {
        return Err(format!("byte order {:?}, not little endian", s.order));
    }
    if s.dims != want {
        return Err(format!("dimensions {:?}, expected {want:?}", s.dims));
    }
    if s.stored != bytes || s.offset == h5::HADDR_UNDEF {
        return Err("storage not allocated".into());
    }
    if s.offset.checked_add(bytes).map_or(true, |end| end > size) {
        return Err(format!("the variable's {bytes} bytes at offset {} pass the end of the file", s.offset));
    }
    Ok(s.offset)
}
