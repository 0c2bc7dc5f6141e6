//! How a compressed output's chunks are stored ([`ChunkPlan`]), and the check that a file is
//! stored that way for the chunked writer ([`super::chunked`]): HDF5 (libnetcdf) made the
//! layout and the filter pipeline, and chunks handed over already filtered are only right if
//! both are what the plan says, so every file is checked once after creation and one that does
//! not qualify goes through libnetcdf instead.

use std::ffi::CString;
use std::path::Path;

use super::encode::OutputType;
use crate::input::direct::with_hdf5_file;
use crate::input::format::NotDirect;

/// How a compressed output's chunks are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Rows and columns of a chunk (its time extent is one day).
    pub rows: usize,
    pub cols: usize,
    pub level: u8,
    pub shuffle: bool,
}

impl ChunkPlan {
    /// Chunk bands along latitude and longitude of an `nlat` x `nlon` field.
    pub fn counts(&self, nlat: usize, nlon: usize) -> (usize, usize) {
        (nlat.div_ceil(self.rows), nlon.div_ceil(self.cols))
    }
}

/// Check that `var` of `path` is stored as `plan` says (chunked `[1, rows, cols]`, of
/// `ty`, little endian, filters shuffle (where asked) then deflate and nothing else), or why not.
pub fn locate(path: &Path, var: &str, shape: [usize; 3], ty: OutputType, plan: &ChunkPlan) -> Result<(), NotDirect> {
    let chunk = [1, plan.rows, plan.cols];
    let float = matches!(ty, OutputType::F64 | OutputType::F32);
    locate_chunked(path, var, (&shape, &chunk), (float, ty.size()), plan.shuffle)
}

/// Check that `var` of `path` has dimensions `shape` and is chunked `chunk`, of floats
/// (`float`) or integers of `size` bytes, little endian, with filters shuffle (where asked)
/// then deflate and nothing else, or why not: the checks of [`locate`] for any rank.
pub fn locate_chunked(
    path: &Path,
    var: &str,
    (shape, want_chunk): (&[usize], &[usize]),
    (float, want_size): (bool, usize),
    shuffle: bool,
) -> Result<(), NotDirect> {
    use hdf5_metno_sys::{h5d, h5p, h5t, h5z};
    let r = shape.len();
    if r > 3 || want_chunk.len() != r {
        return Err(format!("{r} dimensions and {} chunk extents", want_chunk.len()));
    }
    let name = CString::new(format!("/{var}")).map_err(|e| e.to_string())?;
    with_hdf5_file(path, |f| {
        // SAFETY: handles opened and closed here, on the open file, under the library lock.
        unsafe {
            let d = h5d::H5Dopen2(f, name.as_ptr(), h5p::H5P_DEFAULT);
            if d < 0 {
                return Err(format!("no HDF5 dataset /{var}"));
            }
            let plist = h5d::H5Dget_create_plist(d);
            let layout = h5p::H5Pget_layout(plist);
            let mut chunk = [0u64; 3];
            let rank = if layout == h5d::H5D_layout_t::H5D_CHUNKED {
                h5p::H5Pget_chunk(plist, r as i32, chunk.as_mut_ptr())
            } else {
                -1
            };
            let n = h5p::H5Pget_nfilters(plist);
            let mut filters = Vec::new();
            for i in 0..n.max(0) as u32 {
                let (mut flags, mut nelmts, mut cd, mut fc) = (0u32, 1usize, [0u32; 1], 0u32);
                let mut name = [0 as std::ffi::c_char; 32];
                let id = h5p::H5Pget_filter2(
                    plist,
                    i,
                    &mut flags,
                    &mut nelmts,
                    cd.as_mut_ptr(),
                    name.len(),
                    name.as_mut_ptr(),
                    &mut fc,
                );
                filters.push(id);
            }
            h5p::H5Pclose(plist);
            let dtype = h5d::H5Dget_type(d);
            let class = h5t::H5Tget_class(dtype);
            let size = h5t::H5Tget_size(dtype);
            let order = h5t::H5Tget_order(dtype);
            h5t::H5Tclose(dtype);
            let space = h5d::H5Dget_space(d);
            let mut dims = [0u64; 3];
            let ndims = hdf5_metno_sys::h5s::H5Sget_simple_extent_ndims(space);
            if ndims == r as i32 {
                hdf5_metno_sys::h5s::H5Sget_simple_extent_dims(space, dims.as_mut_ptr(), std::ptr::null_mut());
            }
            hdf5_metno_sys::h5s::H5Sclose(space);
            h5d::H5Dclose(d);
            if rank != r as i32 {
                return Err(format!("not chunked in {r} dimensions"));
            }
            if chunk[..r].iter().zip(want_chunk).any(|(&a, &b)| a != b as u64) {
                return Err(format!("chunks {:?}, expected {want_chunk:?}", &chunk[..r]));
            }
            let want: Vec<h5z::H5Z_filter_t> = if shuffle {
                vec![h5z::H5Z_FILTER_SHUFFLE, h5z::H5Z_FILTER_DEFLATE]
            } else {
                vec![h5z::H5Z_FILTER_DEFLATE]
            };
            if filters != want {
                return Err(format!("filters {filters:?}, expected {want:?}"));
            }
            let want_class = if float { h5t::H5T_class_t::H5T_FLOAT } else { h5t::H5T_class_t::H5T_INTEGER };
            // one byte has no order
            let order_ok = order == h5t::H5T_order_t::H5T_ORDER_LE || want_size == 1;
            if class != want_class || size != want_size || !order_ok {
                return Err(format!(
                    "HDF5 type {class:?} of {size} bytes ({order:?}), not {want_class:?} of {want_size} little endian"
                ));
            }
            if dims[..r].iter().zip(shape).any(|(&a, &b)| a != b as u64) {
                return Err(format!("dimensions {dims:?}, expected {shape:?}"));
            }
            Ok(())
        }
    })
}
