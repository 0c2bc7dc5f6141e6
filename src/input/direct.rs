//! The direct-read fast path: where the data variable is stored contiguous and uncompressed,
//! its bytes are one run at a fixed offset of the file, so threads read it with `pread` and
//! decode it without libnetcdf/libhdf5 in the loop (the library is not thread-safe and,
//! serialized, reads about 1 GB/s; `pread` from the page cache runs at memory speed).
//!
//! Every file's offset is queried, never assumed (it differs between HDF5 versions and
//! writers): through HDF5 itself for NetCDF-4 files (`H5Dget_offset`, with the storage layout,
//! filters, type, byte order and dimensions checked, and on a job's first tile the coordinate
//! variables compared with the first file's), from the header for NetCDF-3 files (non-record
//! variables only). This metadata query is serialized under the library lock but small beside
//! the data; the bulk `pread`s run on all threads. The packing attributes (scale, offset,
//! fill) are the first file's, as for every file of one product; `--read-path library` reads
//! each file's own. Any file that does not qualify or does not read cleanly goes to the
//! library path, which reports what is wrong with it.

use std::ffi::CString;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::grid::Grid;
use super::layout::VarLayout;
use super::read::{decode_region, RawData, Region};
use crate::pool::Sample;

/// Byte order of stored values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

/// The storage of a contiguous variable, as found in the first file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectLayout {
    pub format: Format,
    pub order: ByteOrder,
    /// Byte offset of the first value in the probed file.
    pub offset: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Hdf5,
    NetCdf3,
}

/// The first bytes of an HDF5 file without a user block.
pub(crate) const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Why a file cannot take the fast path (for the log; the library path handles it).
pub type NotDirect = String;

/// The direct layout of `layout`'s variable in `path`, or why it has none.
pub fn probe(path: &Path, layout: &VarLayout) -> Result<DirectLayout, NotDirect> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut head = [0u8; 8];
    file.read_exact_at(&mut head, 0).map_err(|e| format!("reading the header: {e}"))?;
    let format = if &head == HDF5_SIGNATURE {
        Format::Hdf5
    } else if &head[..3] == b"CDF" {
        Format::NetCdf3
    } else {
        return Err("neither an HDF5 file without user block nor NetCDF-3".into());
    };
    let (offset, order) = locate_in(&file, path, format, layout, None)?;
    Ok(DirectLayout { format, order, offset })
}

/// Where `layout`'s variable starts in `path`, after checking that the file stores it the way
/// `direct` says (same format and byte order, contiguous, unfiltered, same dimensions and
/// type) and, with `grid`, that its coordinate variables equal `grid`'s. HDF5 files are
/// inspected through HDF5 itself (taking the library lock), NetCDF-3 headers are parsed.
pub fn locate(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
) -> Result<(File, u64), NotDirect> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let (offset, order) = locate_in(&file, path, direct.format, layout, grid)?;
    if order != direct.order {
        return Err(format!("byte order {order:?}, the first file {:?}", direct.order));
    }
    Ok((file, offset))
}

fn locate_in(
    file: &File,
    path: &Path,
    format: Format,
    layout: &VarLayout,
    grid: Option<&Grid>,
) -> Result<(u64, ByteOrder), NotDirect> {
    if layout.extra_len() != 1 {
        return Err("the variable has more than one step".into());
    }
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let bytes = layout.storage.size() as u64 * (layout.nlat() * layout.nlon()) as u64;
    let (offset, order) = match format {
        Format::Hdf5 => locate_hdf5(path, layout, bytes, grid)?,
        Format::NetCdf3 => {
            let mut buf = vec![0u8; size.min(1 << 20) as usize];
            file.read_exact_at(&mut buf, 0).map_err(|e| e.to_string())?;
            let (offset, dims) = netcdf3_variable(&buf, &layout.name)?;
            let want: Vec<u64> = layout.dims.iter().map(|d| d.1 as u64).collect();
            if dims != want {
                return Err(format!("dimensions {dims:?}, expected {want:?}"));
            }
            (offset, ByteOrder::Big)
        }
    };
    if offset + bytes > size {
        return Err(format!("the variable's {bytes} bytes at offset {offset} pass the end of the file"));
    }
    Ok((offset, order))
}

fn locate_hdf5(
    path: &Path,
    layout: &VarLayout,
    bytes: u64,
    grid: Option<&Grid>,
) -> Result<(u64, ByteOrder), NotDirect> {
    use hdf5_metno_sys::{h5, h5d, h5p, h5s, h5t};
    let dataset = |name: &str| CString::new(format!("/{name}")).map_err(|e| e.to_string());
    let cvar = dataset(&layout.name)?;
    let storage = layout.storage;
    with_hdf5_file(path, |f| {
        // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
        let s = unsafe { dataset_storage(f, &cvar) }.ok_or_else(|| format!("no HDF5 dataset /{}", layout.name))?;
        let want: Vec<u64> = layout.dims.iter().map(|x| x.1 as u64).collect();
        if s.layout != h5d::H5D_layout_t::H5D_CONTIGUOUS {
            return Err(format!("stored {:?}, not contiguous", s.layout));
        }
        if s.filters != 0 {
            return Err(format!("{} filter(s) (compression)", s.filters));
        }
        if s.type_size != storage.size() {
            return Err(format!("HDF5 type of {} bytes for {}", s.type_size, storage.name()));
        }
        if s.dims != want {
            return Err(format!("dimensions {:?}, expected {want:?}", s.dims));
        }
        if s.stored != bytes || s.offset == h5::HADDR_UNDEF {
            return Err("storage not allocated (never written)".into());
        }
        let order = match s.order {
            h5t::H5T_order_t::H5T_ORDER_LE => ByteOrder::Little,
            h5t::H5T_order_t::H5T_ORDER_BE => ByteOrder::Big,
            _ if s.type_size == 1 => ByteOrder::Little, // single bytes have no order
            other => return Err(format!("byte order {other:?}")),
        };
        // the coordinates, compared with the first file's
        for coord in grid.iter().flat_map(|g| [&g.lat, &g.lon]) {
            if !coord.from_file {
                continue;
            }
            let name = dataset(&coord.dim)?;
            // SAFETY: HDF5 calls on the open file `f` and a dataset opened and closed here;
            // the buffer passed to H5Dread holds the dataset's values.
            let same = unsafe {
                let c = h5d::H5Dopen2(f, name.as_ptr(), h5p::H5P_DEFAULT);
                if c < 0 {
                    return Err(format!("no coordinate dataset /{}", coord.dim));
                }
                let ok = dims_of(c) == [coord.values.len() as u64];
                let mut values = vec![0f64; coord.values.len()];
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
                read && values.iter().zip(&coord.values).all(|(a, b)| a.to_bits() == b.to_bits())
            };
            if !same {
                return Err(format!("coordinate {} differs from the first file's", coord.dim));
            }
        }
        Ok((s.offset, order))
    })
}

/// Run `query` on `path` opened read-only through HDF5 itself, holding the library lock
/// that libnetcdf's calls also take (shared by the direct read and write paths).
pub(crate) fn with_hdf5_file<T>(
    path: &Path,
    query: impl FnOnce(hdf5_metno_sys::h5i::hid_t) -> Result<T, NotDirect>,
) -> Result<T, NotDirect> {
    use hdf5_metno_sys::{h5, h5f, h5p};
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    super::silence_hdf5();
    let _lock = hdf5_metno_sys::LOCK.lock();
    // SAFETY: plain HDF5 C calls on a file handle opened and closed here, under the lock.
    unsafe {
        h5::H5open();
        let f = h5f::H5Fopen(cpath.as_ptr(), h5f::H5F_ACC_RDONLY, h5p::H5P_DEFAULT);
        if f < 0 {
            return Err("HDF5 cannot open it".into());
        }
        let result = query(f);
        h5f::H5Fclose(f);
        result
    }
}

/// How HDF5 stores one dataset: what a direct path checks before trusting its offset.
#[derive(Clone, Debug)]
pub(crate) struct Hdf5Storage {
    pub layout: hdf5_metno_sys::h5d::H5D_layout_t,
    /// Number of filters (compression, shuffle, checksums).
    pub filters: i32,
    pub class: hdf5_metno_sys::h5t::H5T_class_t,
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
        h5t::H5Tclose(dtype);
        let stored = h5d::H5Dget_storage_size(d);
        let offset = h5d::H5Dget_offset(d);
        let dims = dims_of(d);
        h5d::H5Dclose(d);
        Some(Hdf5Storage { layout, filters, class, type_size, order, dims, stored, offset })
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

/// A NetCDF-3 header, read far enough to find one variable's data.
struct Nc3Reader<'a> {
    buf: &'a [u8],
    at: usize,
    /// CDF-5: 64-bit counts
    wide: bool,
}

impl Nc3Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], NotDirect> {
        let s = self.buf.get(self.at..self.at + n).ok_or("the NetCDF-3 header is cut short")?;
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u64, NotDirect> {
        Ok(u64::from(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes"))))
    }
    fn u64(&mut self) -> Result<u64, NotDirect> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn count(&mut self) -> Result<u64, NotDirect> {
        if self.wide {
            self.u64()
        } else {
            self.u32()
        }
    }
    fn name(&mut self) -> Result<String, NotDirect> {
        let n = self.count()? as usize;
        let s = String::from_utf8_lossy(self.take(n)?).into_owned();
        self.take((4 - n % 4) % 4)?;
        Ok(s)
    }
    fn skip_attributes(&mut self) -> Result<(), NotDirect> {
        let _tag = self.u32()?;
        let n = self.count()?;
        for _ in 0..n {
            self.name()?;
            let size = match self.u32()? {
                1 | 2 | 7 => 1,
                3 | 8 => 2,
                4 | 5 | 9 => 4,
                6 | 10 | 11 => 8,
                t => return Err(format!("unknown NetCDF-3 type {t}")),
            };
            let bytes = self.count()? * size;
            self.take(bytes.div_ceil(4) as usize * 4)?;
        }
        Ok(())
    }
}

/// The data offset and dimension lengths of non-record variable `var` in a NetCDF-3 file
/// whose header is `buf`.
fn netcdf3_variable(buf: &[u8], var: &str) -> Result<(u64, Vec<u64>), NotDirect> {
    let version = *buf.get(3).ok_or("not a NetCDF-3 file")?;
    let mut r = Nc3Reader { buf, at: 4, wide: version == 5 };
    if !matches!(version, 1 | 2 | 5) {
        return Err(format!("NetCDF-3 version {version}"));
    }
    r.count()?; // numrecs
    let _tag = r.u32()?;
    let n_dims = r.count()?;
    let mut dim_len = Vec::new();
    for _ in 0..n_dims {
        r.name()?;
        dim_len.push(r.count()?);
    }
    r.skip_attributes()?;
    let _tag = r.u32()?;
    let n_vars = r.count()?;
    for _ in 0..n_vars {
        let name = r.name()?;
        let rank = r.count()?;
        let mut dims = Vec::new();
        for _ in 0..rank {
            dims.push(r.count()? as usize);
        }
        r.skip_attributes()?;
        r.u32()?; // type
        r.count()?; // vsize
        let begin = if version == 1 { r.u32()? } else { r.u64()? };
        if name == var {
            if dims.first().is_some_and(|&d| dim_len.get(d) == Some(&0)) {
                return Err("a record variable (interleaved with the other record variables)".into());
            }
            let lens =
                dims.iter().map(|&d| dim_len.get(d).copied().ok_or("bad dimension id")).collect::<Result<_, _>>()?;
            return Ok((begin, lens));
        }
    }
    Err(format!("no variable '{var}' in the NetCDF-3 header"))
}

/// Per-thread buffer for direct reads.
pub struct DirectBuffer {
    raw: Option<RawData>,
}

impl DirectBuffer {
    pub fn new() -> Self {
        DirectBuffer { raw: None }
    }
}

impl Default for DirectBuffer {
    fn default() -> Self {
        Self::new()
    }
}

/// Rows of the stored 2-D field read per `pread` when latitude is the slow dimension (so a
/// piece is decoded while still in cache).
const PIECE_BYTES: usize = 1 << 20;

/// Bytes of stored data `read_into` reads for `region`.
pub fn bytes_of(layout: &VarLayout, region: &Region) -> u64 {
    (region.n_cells() * layout.storage.size()) as u64
}

/// Read `region` of the variable from `file` (data at `offset`) and decode it into `dest`.
/// Returns the bytes read.
pub fn read_into<T: Sample>(
    file: &File,
    offset: u64,
    order: ByteOrder,
    layout: &VarLayout,
    region: &Region,
    buf: &mut DirectBuffer,
    dest: &mut [T],
) -> std::io::Result<u64> {
    let size = layout.storage.size();
    let (nlat, nlon) = (layout.nlat(), layout.nlon());
    // the stored field is [slow][fast]; the region is a band of full lines along the slow axis
    let (slow, fast_len) = if layout.lat_is_slow() { (region.rows.clone(), nlon) } else { (region.cols.clone(), nlat) };
    debug_assert_eq!(region.n_cells(), slow.len() * fast_len);
    let line = fast_len * size;
    // lat-slow files decode in pieces of whole rows; transposed files need the whole band
    let lines_per_piece = if layout.lat_is_slow() { (PIECE_BYTES / line).max(1) } else { slow.len().max(1) };
    let mut done = 0;
    while done < slow.len() {
        let n = lines_per_piece.min(slow.len() - done);
        let lines: Range<usize> = slow.start + done..slow.start + done + n;
        let raw = buf.raw.get_or_insert_with(|| RawData::zeroed(layout.storage, 0));
        raw.resize(layout.storage, n * fast_len);
        file.read_exact_at(raw.bytes_mut(), offset + (lines.start * line) as u64)?;
        match order {
            ByteOrder::Big => raw.swap_from_big_endian(),
            ByteOrder::Little => raw.swap_from_little_endian(),
        }
        let piece = if layout.lat_is_slow() {
            Region { rows: lines.clone(), cols: region.cols.clone() }
        } else {
            Region { rows: region.rows.clone(), cols: lines.clone() }
        };
        let cells = piece.n_cells();
        let at = if layout.lat_is_slow() { done * fast_len } else { 0 };
        decode_region(layout, &piece, raw, &mut dest[at..at + cells]);
        done += n;
    }
    Ok((slow.len() * line) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netcdf3_header_gives_the_variable_offset() {
        // hand-made classic header: dims lat=2, lon=3; no attributes; vars lat(lat), v(lat,lon)
        let mut h = b"CDF\x01".to_vec();
        let be = |v: u32| v.to_be_bytes().to_vec();
        let name = |s: &str| {
            let mut b = be(s.len() as u32);
            b.extend(s.as_bytes());
            b.resize(b.len().div_ceil(4) * 4, 0);
            b
        };
        h.extend(be(0)); // numrecs
        h.extend(be(0x0A));
        h.extend(be(2));
        h.extend(name("lat"));
        h.extend(be(2));
        h.extend(name("lon"));
        h.extend(be(3));
        h.extend(be(0)); // no global attributes
        h.extend(be(0));
        h.extend(be(0x0B));
        h.extend(be(2));
        for (v, dims, begin) in [("lat", vec![0u32], 200u32), ("v", vec![0, 1], 216)] {
            h.extend(name(v));
            h.extend(be(dims.len() as u32));
            for d in dims {
                h.extend(be(d));
            }
            h.extend(be(0x0C)); // one attribute: units = "K"
            h.extend(be(1));
            h.extend(name("units"));
            h.extend(be(2));
            h.extend(be(1));
            h.extend(b"K\0\0\0");
            h.extend(be(6)); // double
            h.extend(be(48));
            h.extend(be(begin));
        }
        assert_eq!(netcdf3_variable(&h, "v"), Ok((216, vec![2, 3])));
        assert_eq!(netcdf3_variable(&h, "lat"), Ok((200, vec![2])));
        assert!(netcdf3_variable(&h, "w").unwrap_err().contains("no variable 'w'"));
        assert!(netcdf3_variable(&h[..60], "v").unwrap_err().contains("cut short"));
    }
}
