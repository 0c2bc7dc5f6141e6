//! Inspecting an HDF5 input file through libhdf5 itself, under the library lock: the direct
//! path's oracle for the first file of a job, its fallback where the metadata parser meets a
//! structure it does not read, and its only way with `SSTCLIM_H5META=off`. Also the query
//! helpers the direct write path shares ([`with_hdf5_file`], [`dataset_storage`]).
//!
//! Why it exists apart: every call here is serialized under `hdf5_metno_sys::LOCK` (libhdf5
//! is not thread-safe) and runs C code, so it is kept in one place with a `// SAFETY:` note
//! on each block.

use std::ffi::CString;
use std::path::Path;

use super::{check_found, check_packing, lookup, ByteOrder, Found, NotDirect};
use crate::input::grid::Grid;
use crate::input::layout::VarLayout;
use crate::input::packing::{AttrValue, CHECKED_ATTRIBUTES};
use crate::input::storage::Storage;
use crate::input::text_attr::hdf5_text;
use hdf5_metno_sys::h5i::hid_t;

/// Where `layout`'s variable starts in `path`, its byte order and its number of time steps, as
/// libhdf5 reports them, after the checks every located HDF5 variable passes (with `grid`, its
/// coordinates too).
pub(super) fn locate_hdf5(
    path: &Path,
    layout: &VarLayout,
    bytes: u64,
    grid: Option<&Grid>,
) -> Result<(u64, ByteOrder, usize), NotDirect> {
    use hdf5_metno_sys::{h5, h5d, h5p, h5s, h5t};
    let dataset = |name: &str| CString::new(format!("/{name}")).map_err(|e| e.to_string());
    let cvar = dataset(&layout.name)?;
    with_hdf5_file(path, |f| {
        // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
        let s = unsafe { dataset_storage(f, &cvar) }.ok_or_else(|| format!("no HDF5 dataset /{}", layout.name))?;
        let found = Found {
            layout: format!("{:?}", s.layout),
            contiguous: s.layout == h5d::H5D_layout_t::H5D_CONTIGUOUS,
            filters: usize::try_from(s.filters).unwrap_or(usize::MAX),
            type_size: s.type_size,
            storage: hdf5_type(&s),
            order: match s.order {
                h5t::H5T_order_t::H5T_ORDER_LE => Ok(ByteOrder::Little),
                h5t::H5T_order_t::H5T_ORDER_BE => Ok(ByteOrder::Big),
                other => Err(format!("{other:?}")),
            },
            dims: s.dims.clone(),
            stored: s.stored,
            offset: (s.offset != h5::HADDR_UNDEF).then_some(s.offset),
        };
        let (offset, order, steps) = check_found(&found, layout, bytes)?;
        // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
        let attrs = unsafe { hdf5_attributes(f, &cvar, &CHECKED_ATTRIBUTES) }?;
        check_packing(layout.storage, |n| lookup(&attrs, n), layout)?;
        // the coordinates, compared with the first file's
        for (coord, shape, expected) in grid.iter().flat_map(|g| g.checked()) {
            let name = dataset(coord)?;
            // SAFETY: HDF5 calls on the open file `f` and a dataset opened and closed here;
            // the buffer passed to H5Dread holds the dataset's values.
            let same = unsafe {
                let c = h5d::H5Dopen2(f, name.as_ptr(), h5p::H5P_DEFAULT);
                if c < 0 {
                    return Err(format!("no coordinate dataset /{coord}"));
                }
                let ok = dims_of(c) == shape;
                let mut values = vec![0f64; expected.len()];
                let read = ok
                    && h5d::H5Dread(
                        c,
                        *h5t::H5T_NATIVE_DOUBLE,
                        h5s::H5S_ALL,
                        h5s::H5S_ALL,
                        h5p::H5P_DEFAULT,
                        values.as_mut_ptr().cast(),
                    ) >= 0;
                h5d::H5Dclose(c);
                read && values.iter().zip(expected).all(|(a, b)| a.to_bits() == b.to_bits())
            };
            if !same {
                return Err(format!("coordinate {coord} differs from the first file's"));
            }
        }
        Ok((offset, order, steps))
    })
}

/// The storage type of a dataset as libhdf5 describes it, or why sstclim does not read it.
fn hdf5_type(s: &Hdf5Storage) -> Result<Storage, String> {
    use hdf5_metno_sys::h5t::H5T_class_t;
    if !s.standard {
        return Err("has a number type of partial precision".into());
    }
    match s.class {
        H5T_class_t::H5T_INTEGER => Storage::from_parts(false, s.signed, s.type_size),
        H5T_class_t::H5T_FLOAT => Storage::from_parts(true, true, s.type_size),
        other => Err(format!("is of HDF5 class {other:?}, not a number")),
    }
}

/// The attributes named in `wanted` (the direct path's: [`CHECKED_ATTRIBUTES`]) of dataset
/// `name` (an absolute path) of the open file `f` that exist, read through libhdf5: numbers
/// converted to double by the library, strings (fixed- or variable-length) as libnetcdf reads
/// them ([`AttrValue::from_strings`]).
///
/// # Safety
/// `f` is an open HDF5 file and the caller holds the library lock.
unsafe fn hdf5_attributes(
    f: hid_t,
    name: &std::ffi::CStr,
    wanted: &[&str],
) -> Result<Vec<(String, AttrValue)>, NotDirect> {
    use hdf5_metno_sys::{h5a, h5d, h5p, h5s, h5t};
    let cnames = wanted.iter().map(|&a| CString::new(a)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    // SAFETY: handles opened and closed here, on the caller's open file, under its lock; the
    // buffer given to H5Aread holds the attribute's values as doubles.
    unsafe {
        let d = h5d::H5Dopen2(f, name.as_ptr(), h5p::H5P_DEFAULT);
        if d < 0 {
            return Err(format!("no HDF5 dataset {}", name.to_string_lossy()));
        }
        let mut result = Ok(());
        for (&attr, cname) in wanted.iter().zip(&cnames) {
            match h5a::H5Aexists(d, cname.as_ptr()) {
                0 => continue,
                e if e < 0 => {
                    result = Err(format!("libhdf5 cannot tell whether attribute {attr} exists"));
                    break;
                }
                _ => {}
            }
            let a = h5a::H5Aopen(d, cname.as_ptr(), h5p::H5P_DEFAULT);
            if a < 0 {
                result = Err(format!("libhdf5 cannot open attribute {attr}"));
                break;
            }
            let dtype = h5a::H5Aget_type(a);
            let class = h5t::H5Tget_class(dtype);
            let space = h5a::H5Aget_space(a);
            let n = h5s::H5Sget_simple_extent_npoints(space).max(0) as usize;
            let null = h5s::H5Sget_simple_extent_type(space) == h5s::H5S_class_t::H5S_NULL;
            h5s::H5Sclose(space);
            let text = (class == h5t::H5T_class_t::H5T_STRING).then(|| match read_strings(a, dtype, n) {
                Ok(texts) => Ok(AttrValue::from_strings(texts, null && h5t::H5Tis_variable_str(dtype) == 0)),
                Err(why) => Err(format!("libhdf5 cannot read attribute {attr}: {why}")),
            });
            h5t::H5Tclose(dtype);
            let value = match class {
                _ if text.is_some() => text.expect("just checked"),
                h5t::H5T_class_t::H5T_INTEGER | h5t::H5T_class_t::H5T_FLOAT => {
                    let mut v = vec![0f64; n];
                    if n > 0 && h5a::H5Aread(a, *h5t::H5T_NATIVE_DOUBLE, v.as_mut_ptr().cast()) < 0 {
                        Err(format!("libhdf5 cannot read attribute {attr}"))
                    } else {
                        Ok(AttrValue::Numbers(v))
                    }
                }
                other => Err(format!("attribute {attr} of HDF5 class {other:?}")),
            };
            h5a::H5Aclose(a);
            match value {
                Ok(v) => found.push((attr.to_string(), v)),
                Err(why) => {
                    result = Err(why);
                    break;
                }
            }
        }
        h5d::H5Dclose(d);
        result.map(|()| found)
    }
}

/// The `n` strings of string attribute `a` of file type `dtype`, each as libnetcdf reads it
/// ([`hdf5_text`]): fixed-length ones read in the file's own type, variable-length ones as C
/// strings the library allocates (and this function frees).
///
/// # Safety
/// `a` is an open attribute of string type `dtype`, and the caller holds the library lock.
unsafe fn read_strings(a: hid_t, dtype: hid_t, n: usize) -> Result<Vec<String>, String> {
    use hdf5_metno_sys::{h5, h5a, h5t};
    // SAFETY: the buffers hold `n` values of the memory type read; the memory type is closed
    // and every string libhdf5 allocated is freed with H5free_memory, under the caller's lock.
    unsafe {
        if h5t::H5Tis_variable_str(dtype) <= 0 {
            let size = h5t::H5Tget_size(dtype);
            let mut buf = vec![0u8; size * n];
            if n > 0 && (size == 0 || h5a::H5Aread(a, dtype, buf.as_mut_ptr().cast()) < 0) {
                return Err("fixed-length strings".into());
            }
            return Ok(buf.chunks_exact(size.max(1)).map(hdf5_text).collect());
        }
        let mem = h5t::H5Tcopy(*h5t::H5T_C_S1);
        if mem < 0 || h5t::H5Tset_size(mem, h5t::H5T_VARIABLE) < 0 || h5t::H5Tset_cset(mem, h5t::H5Tget_cset(dtype)) < 0
        {
            if mem >= 0 {
                h5t::H5Tclose(mem);
            }
            return Err("a variable-length string type".into());
        }
        let mut ptrs: Vec<*mut std::ffi::c_char> = vec![std::ptr::null_mut(); n];
        let read = n == 0 || h5a::H5Aread(a, mem, ptrs.as_mut_ptr().cast()) >= 0;
        h5t::H5Tclose(mem);
        let texts = ptrs
            .iter()
            .map(|&p| if p.is_null() { String::new() } else { hdf5_text(std::ffi::CStr::from_ptr(p).to_bytes()) })
            .collect();
        for p in ptrs.into_iter().filter(|p| !p.is_null()) {
            h5::H5free_memory(p.cast());
        }
        if read {
            Ok(texts)
        } else {
            Err("variable-length strings".into())
        }
    }
}

/// Run `query` on `path` opened read-only through HDF5 itself, holding the library lock
/// that libnetcdf's calls also take (shared by the direct read and write paths).
pub(crate) fn with_hdf5_file<T>(
    path: &Path,
    query: impl FnOnce(hdf5_metno_sys::h5i::hid_t) -> Result<T, NotDirect>,
) -> Result<T, NotDirect> {
    use hdf5_metno_sys::{h5, h5f, h5p};
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    crate::input::open::silence_hdf5();
    let _lock = hdf5_metno_sys::LOCK.lock();
    // SAFETY: plain HDF5 C calls on a property list and a file handle created and closed here,
    // under the lock.
    unsafe {
        h5::H5open();
        // First without a file lock: a reader child forked meanwhile inherits a writer's
        // descriptor, and with it the writer's lock, until it exits, and HDF5 would refuse the
        // open (`main` turns locking off through the environment; library callers and unit tests
        // do not run it). A file this process already has open (through libnetcdf) must be
        // opened with the same settings as there: then the default ones.
        let fapl = h5p::H5Pcreate(*h5p::H5P_CLS_FILE_ACCESS);
        let mut f = -1;
        if fapl >= 0 {
            h5p::H5Pset_file_locking(fapl, 0, 1);
            f = h5f::H5Fopen(cpath.as_ptr(), h5f::H5F_ACC_RDONLY, fapl);
            h5p::H5Pclose(fapl);
        }
        if f < 0 {
            f = h5f::H5Fopen(cpath.as_ptr(), h5f::H5F_ACC_RDONLY, h5p::H5P_DEFAULT);
        }
        if f < 0 {
            return Err("HDF5 cannot open it".into());
        }
        let result = query(f);
        h5f::H5Fclose(f);
        result
    }
}

/// Dataset `name` (without the leading `/`) of the root group of `path`, as libhdf5 reports it
/// (the oracle the metadata parser is tested against); None where there is no such dataset.
pub fn hdf5_storage(path: &Path, name: &str) -> Result<Option<Hdf5Storage>, NotDirect> {
    let cname = CString::new(format!("/{name}")).map_err(|e| e.to_string())?;
    // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
    with_hdf5_file(path, |f| Ok(unsafe { dataset_storage(f, &cname) }))
}

/// The attributes named in `wanted` of dataset `name` (without the leading `/`) of the root
/// group of `path` that exist, as libhdf5 reads them (the direct path's oracle for its first
/// file; the tests compare the metadata parser and libnetcdf with it).
pub fn hdf5_attribute_values(path: &Path, name: &str, wanted: &[&str]) -> Result<Vec<(String, AttrValue)>, NotDirect> {
    let cname = CString::new(format!("/{name}")).map_err(|e| e.to_string())?;
    // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
    with_hdf5_file(path, |f| unsafe { hdf5_attributes(f, &cname, wanted) })
}

/// How HDF5 stores one dataset: what a direct path checks before trusting its offset.
#[derive(Clone, Debug)]
pub struct Hdf5Storage {
    pub layout: hdf5_metno_sys::h5d::H5D_layout_t,
    /// Number of filters (compression, shuffle, checksums).
    pub filters: i32,
    pub class: hdf5_metno_sys::h5t::H5T_class_t,
    /// Integers: signed (two's complement).
    pub signed: bool,
    /// Values take all `type_size` bytes from bit 0 (precision 8 x size, offset 0).
    pub standard: bool,
    pub type_size: usize,
    pub order: hdf5_metno_sys::h5t::H5T_order_t,
    pub dims: Vec<u64>,
    /// Bytes allocated for the data.
    pub stored: u64,
    /// Byte offset of the data in the file (`HADDR_UNDEF` where not allocated).
    pub offset: u64,
}

/// The storage of dataset `name` (an absolute path like `/sst`) of the open file `f`, or
/// None where there is no such dataset.
///
/// # Safety
/// `f` is an open HDF5 file and the caller holds the library lock.
pub(crate) unsafe fn dataset_storage(f: hdf5_metno_sys::h5i::hid_t, name: &std::ffi::CStr) -> Option<Hdf5Storage> {
    use hdf5_metno_sys::{h5d, h5p, h5t};
    // SAFETY: handles opened and closed here, on the caller's open file, under its lock.
    unsafe {
        let d = h5d::H5Dopen2(f, name.as_ptr(), h5p::H5P_DEFAULT);
        if d < 0 {
            return None;
        }
        let plist = h5d::H5Dget_create_plist(d);
        let layout = h5p::H5Pget_layout(plist);
        let filters = h5p::H5Pget_nfilters(plist);
        h5p::H5Pclose(plist);
        let dtype = h5d::H5Dget_type(d);
        let class = h5t::H5Tget_class(dtype);
        let order = h5t::H5Tget_order(dtype);
        let type_size = h5t::H5Tget_size(dtype);
        let signed = h5t::H5Tget_sign(dtype) == h5t::H5T_sign_t::H5T_SGN_2;
        let standard = h5t::H5Tget_precision(dtype) == 8 * type_size && h5t::H5Tget_offset(dtype) == 0;
        h5t::H5Tclose(dtype);
        let stored = h5d::H5Dget_storage_size(d);
        let offset = h5d::H5Dget_offset(d);
        let dims = dims_of(d);
        h5d::H5Dclose(d);
        Some(Hdf5Storage { layout, filters, class, signed, standard, type_size, order, dims, stored, offset })
    }
}

/// The dimension lengths of open dataset `d`.
///
/// # Safety
/// `d` is an open dataset and the caller holds the library lock.
unsafe fn dims_of(d: hdf5_metno_sys::h5i::hid_t) -> Vec<u64> {
    use hdf5_metno_sys::{h5d, h5s};
    // SAFETY: a dataspace opened and closed here; `dims` has room for its rank.
    unsafe {
        let space = h5d::H5Dget_space(d);
        let n = h5s::H5Sget_simple_extent_ndims(space).max(0) as usize;
        let mut dims = vec![0; n];
        h5s::H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), std::ptr::null_mut());
        h5s::H5Sclose(space);
        dims
    }
}

/// Every allocated chunk of dataset `name` of `path` as libhdf5 lists them
/// (`H5Dget_chunk_info`): the oracle the metadata parser's chunk indexes are tested against.
pub fn hdf5_chunks(path: &Path, name: &str) -> Result<Vec<crate::input::h5meta::ChunkLoc>, NotDirect> {
    use hdf5_metno_sys::{h5d, h5p, h5s};
    let cname = CString::new(format!("/{name}")).map_err(|e| e.to_string())?;
    with_hdf5_file(path, |f| {
        // SAFETY: handles opened and closed here, on the open file, under the library lock;
        // `offset` has room for the dataset's rank.
        unsafe {
            let d = h5d::H5Dopen2(f, cname.as_ptr(), h5p::H5P_DEFAULT);
            if d < 0 {
                return Err(format!("no dataset /{name}"));
            }
            let rank = dims_of(d).len();
            let space = h5d::H5Dget_space(d);
            let mut n = 0;
            let mut out = Vec::new();
            if h5d::H5Dget_num_chunks(d, space, &mut n) >= 0 {
                for i in 0..n {
                    let (mut offset, mut mask, mut addr, mut size) = (vec![0u64; rank], 0u32, 0u64, 0u64);
                    if h5d::H5Dget_chunk_info(d, space, i, offset.as_mut_ptr(), &mut mask, &mut addr, &mut size) >= 0 {
                        out.push(crate::input::h5meta::ChunkLoc { offset, addr, size, mask });
                    }
                }
            }
            h5s::H5Sclose(space);
            h5d::H5Dclose(d);
            Ok(out)
        }
    })
}
