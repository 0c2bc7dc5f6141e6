//! The direct-read fast path: where the data variable is stored contiguous and uncompressed,
//! its bytes are one run at a fixed offset of the file, so threads read it with `pread` and
//! decode it without libnetcdf/libhdf5 in the loop (the library is not thread-safe and,
//! serialized, reads about 1 GB/s; `pread` from the page cache runs at memory speed).
//!
//! Every file's offset is queried, never assumed (it differs between HDF5 versions and
//! writers), with the storage layout, filters, type, byte order and dimensions checked, and on
//! a job's first tile the coordinate variables compared with the first file's. NetCDF-4 files
//! are inspected by parsing their HDF5 metadata ([`super::h5meta`], no library, any thread);
//! where that parser meets a structure it does not read, through HDF5 itself (`H5Dget_offset`
//! etc., serialized under the library lock). The job's first file is inspected both ways
//! ([`probe`]): if they disagree, every file of the job is inspected through the library (and a
//! warning says so). `SSTCLIM_H5META=off` forces the library for every file. NetCDF-3 headers
//! are parsed here (non-record variables only). Every file's own storage type and decoding
//! attributes (`_FillValue`, `missing_value`, `scale_factor`, `add_offset`, valid range) are
//! read the same way (parsed, or through libhdf5) and must equal the first file's, with which
//! the direct path decodes: a file of another type or packing is never decoded with the first
//! file's rules but goes to the library path, which decodes it with its own. Any file that
//! does not qualify or does not read cleanly goes to the library path, which reports what is
//! wrong with it.

use std::ffi::CString;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::OnceLock;

use super::grid::Grid;
use super::h5meta::{self, Hdf5Meta, MetaError};
use super::layout::{Storage, VarLayout};
use super::netcdf3::netcdf3_variable;
use super::packing::{same_units, AttrValue, Packing, CHECKED_ATTRIBUTES};
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
    /// Files are located by parsing their headers, with no library: any thread may locate
    /// them (NetCDF-3, and HDF5 where [`super::h5meta`] read the first file as libhdf5 did).
    pub parsed: bool,
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

/// Whether HDF5 metadata is parsed here (else read through libhdf5): `SSTCLIM_H5META=off`
/// (or `0`, `false`, `library`) turns the parser off.
pub fn parser_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| crate::util::knobs::h5meta_parser())
}

/// How an HDF5 file is inspected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// Through libhdf5, under the library lock.
    Library,
    /// Parsed ([`super::h5meta`]); through libhdf5 where the parser meets a structure it does
    /// not read.
    Parser,
    /// Parsed only: such structures are an error (for tests and the first file's check).
    ParserOnly,
}

/// Why an inspection gave no offset.
enum Refused {
    /// The parser does not read this file's structures (the library may).
    Unsupported(String),
    /// The file does not qualify (or is malformed).
    Not(NotDirect),
}

impl From<NotDirect> for Refused {
    fn from(why: NotDirect) -> Refused {
        Refused::Not(why)
    }
}

impl Refused {
    fn text(self) -> NotDirect {
        match self {
            Refused::Unsupported(why) => format!("not read without libhdf5: {why}"),
            Refused::Not(why) => why,
        }
    }
}

/// The direct layout of `layout`'s variable in `path`, or why it has none. An HDF5 file is
/// inspected through libhdf5 (whose verdict stands) and parsed: the parser locates the job's
/// files only where it gives the same offset, byte order and dimensions.
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
    let (offset, order) = locate_in(&file, path, format, layout, None, Via::Library).map_err(Refused::text)?;
    let parsed = match format {
        Format::NetCdf3 => true,
        Format::Hdf5 if !parser_enabled() => false,
        // both check the dimensions against `layout`'s: agreeing on them is succeeding
        Format::Hdf5 => match locate_in(&file, path, format, layout, None, Via::ParserOnly) {
            Ok(found) if found == (offset, order) => true,
            Ok((o, ord)) => {
                tracing::warn!(
                    "{}: the HDF5 metadata parser finds {} at byte {o} ({ord:?}), libhdf5 at byte {offset} \
                     ({order:?}): locating every file through libhdf5",
                    path.display(),
                    layout.name
                );
                false
            }
            Err(Refused::Unsupported(why)) => {
                tracing::info!("{}: {why}: locating every file through libhdf5", path.display());
                false
            }
            Err(Refused::Not(why)) => {
                tracing::warn!(
                    "{}: the HDF5 metadata parser refuses it ({why}), libhdf5 does not: locating every file \
                     through libhdf5",
                    path.display()
                );
                false
            }
        },
    };
    Ok(DirectLayout { format, order, offset, parsed })
}

/// Where `layout`'s variable starts in `path`, after checking that the file stores it the way
/// `direct` says (same format and byte order, contiguous, unfiltered, same dimensions and
/// type) and, with `grid`, that its coordinate variables equal `grid`'s. HDF5 files are parsed
/// where `direct.parsed` (else, and where the parser does not read them, inspected through
/// HDF5 itself, taking the library lock); NetCDF-3 headers are parsed.
pub fn locate(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
) -> Result<(File, u64), NotDirect> {
    locate_via(path, direct, layout, grid, if direct.parsed { Via::Parser } else { Via::Library })
}

/// [`locate`] with the way HDF5 files are inspected chosen (NetCDF-3 files are always parsed).
pub fn locate_via(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
    via: Via,
) -> Result<(File, u64), NotDirect> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let (offset, order) = locate_in(&file, path, direct.format, layout, grid, via).map_err(Refused::text)?;
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
    via: Via,
) -> Result<(u64, ByteOrder), Refused> {
    if layout.extra_len() != 1 {
        return Err("the variable has more than one step".to_string().into());
    }
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    let bytes = layout.storage.size() as u64 * (layout.nlat() * layout.nlon()) as u64;
    let (offset, order) = match (format, via) {
        (Format::Hdf5, Via::Library) => locate_hdf5(path, layout, bytes, grid)?,
        (Format::Hdf5, Via::ParserOnly) => locate_parsed(file, layout, bytes, grid)?,
        (Format::Hdf5, Via::Parser) => match locate_parsed(file, layout, bytes, grid) {
            Err(Refused::Unsupported(why)) => {
                tracing::debug!("{}: {why}: asking libhdf5", path.display());
                locate_hdf5(path, layout, bytes, grid)?
            }
            other => other?,
        },
        (Format::NetCdf3, _) => {
            let mut buf = vec![0u8; size.min(1 << 20) as usize];
            file.read_exact_at(&mut buf, 0).map_err(|e| e.to_string())?;
            let v = netcdf3_variable(&buf, &layout.name)?;
            let want: Vec<u64> = layout.dims.iter().map(|d| d.1 as u64).collect();
            if v.dims != want {
                return Err(format!("dimensions {:?}, expected {want:?}", v.dims).into());
            }
            match v.storage {
                Ok(found) if found == layout.storage => {}
                Ok(found) => {
                    return Err(
                        format!("stored as {}, the first file as {}", found.name(), layout.storage.name()).into()
                    )
                }
                Err(why) => return Err(format!("the variable {why}").into()),
            }
            check_packing(layout.storage, |n| lookup(&v.attrs, n), layout)?;
            (v.begin, ByteOrder::Big)
        }
    };
    if !matches!(offset.checked_add(bytes), Some(end) if end <= size) {
        return Err(format!("the variable's {bytes} bytes at offset {offset} pass the end of the file").into());
    }
    Ok((offset, order))
}

/// What either way of inspecting an HDF5 dataset reports, for the same checks.
struct Found {
    /// libhdf5's name of the layout class.
    layout: String,
    contiguous: bool,
    filters: usize,
    type_size: usize,
    /// The storage type, or why sstclim does not read the type.
    storage: Result<Storage, String>,
    /// The byte order, or the name of one the direct path cannot read (none, for single
    /// bytes; VAX).
    order: Result<ByteOrder, String>,
    dims: Vec<u64>,
    /// Bytes allocated for the data.
    stored: u64,
    /// Byte offset of the data (None where not allocated).
    offset: Option<u64>,
}

/// The checks every located HDF5 variable passes: its offset and byte order.
fn check_found(s: &Found, layout: &VarLayout, bytes: u64) -> Result<(u64, ByteOrder), NotDirect> {
    let want: Vec<u64> = layout.dims.iter().map(|x| x.1 as u64).collect();
    let storage = layout.storage;
    if !s.contiguous {
        return Err(format!("stored {}, not contiguous", s.layout));
    }
    if s.filters != 0 {
        return Err(format!("{} filter(s) (compression)", s.filters));
    }
    match &s.storage {
        Ok(found) if *found == storage => {}
        Ok(found) => return Err(format!("stored as {}, the first file as {}", found.name(), storage.name())),
        Err(why) => return Err(format!("the variable {why}")),
    }
    if s.dims != want {
        return Err(format!("dimensions {:?}, expected {want:?}", s.dims));
    }
    let Some(offset) = s.offset.filter(|_| s.stored == bytes) else {
        return Err("storage not allocated (never written)".into());
    };
    let order = match &s.order {
        Ok(order) => *order,
        Err(_) if s.type_size == 1 => ByteOrder::Little, // single bytes have no order
        Err(other) => return Err(format!("byte order {other}")),
    };
    Ok((offset, order))
}

/// Check that a file's own decoding attributes (`attr`, for a variable stored as `storage`)
/// give the rules the direct path decodes with (`layout`'s, the first file's): the same
/// function builds both, so a file passes exactly when it would decode alike. `quantize` is the
/// job's and not compared.
fn check_packing(
    storage: Storage,
    attr: impl Fn(&str) -> Option<AttrValue>,
    layout: &VarLayout,
) -> Result<(), NotDirect> {
    let units = match attr("units") {
        None => None,
        Some(AttrValue::Text(t)) => Some(t),
        // text the parsers do not read: libnetcdf compares it
        Some(_) => return Err("its units are not read here".into()),
    };
    if !same_units(units.as_deref(), layout.meta.units.as_deref()) {
        return Err("its units differ from the first file's".into());
    }
    let own = Packing::from_attributes(storage, attr).map_err(|e| format!("its decoding attributes: {e}"))?;
    match own.differs_from(&layout.packing) {
        Some(name) => Err(format!("its own {name} differs from the first file's: decoded with its own")),
        None => Ok(()),
    }
}

/// The value of attribute `name` in a list of attributes read from a file.
fn lookup(attrs: &[(String, AttrValue)], name: &str) -> Option<AttrValue> {
    attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

/// [`locate_hdf5`] without the library: the HDF5 metadata parsed from `file`.
fn locate_parsed(
    file: &File,
    layout: &VarLayout,
    bytes: u64,
    grid: Option<&Grid>,
) -> Result<(u64, ByteOrder), Refused> {
    let refused = |e: MetaError| match e {
        MetaError::Unsupported(why) => Refused::Unsupported(why),
        other => Refused::Not(other.to_string()),
    };
    let meta = Hdf5Meta::open(file).map_err(refused)?;
    let (ds, attrs) = meta.dataset_with_attributes(&layout.name, &CHECKED_ATTRIBUTES).map_err(refused)?;
    let storage = match ds.dtype.class {
        h5meta::TypeClass::Integer { signed } => Storage::from_parts(false, signed, ds.dtype.size),
        h5meta::TypeClass::Float => Storage::from_parts(true, true, ds.dtype.size),
        other => return Err(Refused::Unsupported(format!("a variable of HDF5 class {other:?}"))),
    };
    if !ds.dtype.standard {
        return Err(Refused::Not("a number type of partial precision or not IEEE".into()));
    }
    let found = Found {
        layout: ds.layout.name().into(),
        contiguous: matches!(ds.layout, h5meta::Layout::Contiguous { .. }),
        filters: ds.filters,
        type_size: ds.dtype.size,
        storage,
        order: ds.dtype.order.ok_or_else(|| "VAX".to_string()),
        dims: ds.dims.clone(),
        stored: ds.storage_size().unwrap_or(0),
        offset: ds.offset(),
    };
    let located = check_found(&found, layout, bytes)?;
    check_packing(layout.storage, |n| lookup(&attrs, n), layout)?;
    // the coordinates, compared with the first file's
    for coord in grid.iter().flat_map(|g| [&g.lat, &g.lon]) {
        if !coord.from_file {
            continue;
        }
        let c = match meta.dataset(&coord.dim) {
            Err(MetaError::NotFound(_)) => return Err(format!("no coordinate dataset /{}", coord.dim).into()),
            other => other.map_err(refused)?,
        };
        let same = c.dims == [coord.values.len() as u64] && {
            let values = meta.values_f64(&c).map_err(refused)?;
            values.iter().zip(&coord.values).all(|(a, b)| a.to_bits() == b.to_bits())
        };
        if !same {
            return Err(format!("coordinate {} differs from the first file's", coord.dim).into());
        }
    }
    Ok(located)
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
        let (offset, order) = check_found(&found, layout, bytes)?;
        // SAFETY: `f` is open, under the library lock (see `with_hdf5_file`).
        let attrs = unsafe { hdf5_attributes(f, &cvar) }?;
        check_packing(layout.storage, |n| lookup(&attrs, n), layout)?;
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
        Ok((offset, order))
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

/// The compared attributes ([`CHECKED_ATTRIBUTES`]) of dataset `name` (an absolute path) of
/// the open file `f`, read through libhdf5: numbers converted to double by the library, text
/// reported as text.
///
/// # Safety
/// `f` is an open HDF5 file and the caller holds the library lock.
unsafe fn hdf5_attributes(
    f: hdf5_metno_sys::h5i::hid_t,
    name: &std::ffi::CStr,
) -> Result<Vec<(String, AttrValue)>, NotDirect> {
    use hdf5_metno_sys::{h5a, h5d, h5p, h5s, h5t};
    let mut found = Vec::new();
    // SAFETY: handles opened and closed here, on the caller's open file, under its lock; the
    // buffer given to H5Aread holds the attribute's values as doubles.
    unsafe {
        let d = h5d::H5Dopen2(f, name.as_ptr(), h5p::H5P_DEFAULT);
        if d < 0 {
            return Err(format!("no HDF5 dataset {}", name.to_string_lossy()));
        }
        let mut result = Ok(());
        for attr in CHECKED_ATTRIBUTES {
            let cname = CString::new(attr).expect("no NUL in the names");
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
            let fixed_text = (class == h5t::H5T_class_t::H5T_STRING && h5t::H5Tis_variable_str(dtype) == 0)
                .then(|| h5t::H5Tget_size(dtype));
            let space = h5a::H5Aget_space(a);
            let n = h5s::H5Sget_simple_extent_npoints(space).max(0) as usize;
            h5s::H5Sclose(space);
            // fixed-length text: read in the file's own string type
            let text = fixed_text.map(|size| {
                let mut buf = vec![0u8; size * n.max(1)];
                match h5a::H5Aread(a, dtype, buf.as_mut_ptr().cast()) >= 0 {
                    true => {
                        let t = buf.split(|&b| b == 0).next().unwrap_or_default();
                        AttrValue::Text(String::from_utf8_lossy(t).trim_end().to_string())
                    }
                    false => AttrValue::Other("unreadable text".into()),
                }
            });
            h5t::H5Tclose(dtype);
            let value = match class {
                _ if text.is_some() => Ok(text.expect("just checked")),
                h5t::H5T_class_t::H5T_INTEGER | h5t::H5T_class_t::H5T_FLOAT => {
                    let mut v = vec![0f64; n];
                    if n > 0 && h5a::H5Aread(a, *h5t::H5T_NATIVE_DOUBLE, v.as_mut_ptr().cast()) < 0 {
                        Err(format!("libhdf5 cannot read attribute {attr}"))
                    } else {
                        Ok(AttrValue::Numbers(v))
                    }
                }
                h5t::H5T_class_t::H5T_STRING => Ok(AttrValue::Other("text".into())),
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
