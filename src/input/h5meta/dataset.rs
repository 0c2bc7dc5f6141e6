//! What HDF5 metadata says about one dataset of the root group (its storage layout, filters,
//! datatype and dimensions, from the messages of its object header) and the values of small
//! compact or contiguous datasets (coordinates), converted to f64 as libhdf5 converts them.
//!
//! Why it exists: this is what the direct read path asks of every input file to trust a data
//! offset and compare coordinates, answered on any thread without libhdf5 (which is not
//! thread-safe); libhdf5 stays the oracle (`H5Dget_offset`, `H5Dread` to
//! `H5T_NATIVE_DOUBLE`) that the job's first file and the tests are checked against.

use std::borrow::Cow;

use super::cursor::{Cur, Sizes};
use super::datatype::{value_f64, Datatype, TypeClass};
use super::header::{Header, MSG_DATASPACE, MSG_DATATYPE, MSG_EXTERNAL, MSG_LAYOUT, MSG_PIPELINE};
use super::message::{dataspace_max, datatype, pipeline, Filter};
use super::{bad, unsupported, Attributes, Hdf5Meta, MetaError, Result};
use crate::input::format::ByteOrder;

/// The byte order of this machine.
const NATIVE: ByteOrder = if cfg!(target_endian = "little") { ByteOrder::Little } else { ByteOrder::Big };

/// Storage layout of a dataset (the data layout message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Values stored in the layout message itself.
    Compact(Vec<u8>),
    /// One run of `size` bytes at `address` (None: not allocated, never written).
    Contiguous {
        address: Option<u64>,
        size: u64,
    },
    /// Chunks of the given shape, found through an index.
    Chunked(Chunking),
    Virtual,
}

/// How a chunked dataset's chunks are shaped and indexed (the data layout message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunking {
    /// Chunk lengths, one per dimension of the dataset.
    pub dims: Vec<u64>,
    /// Layout version 4 flag: edge chunks that the dataset only partly covers are stored
    /// unfiltered.
    pub unfiltered_edges: bool,
    pub index: ChunkIndex,
}

/// The structure that finds a chunked dataset's chunks (None addresses: nothing allocated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkIndex {
    /// Version-1 B-tree of raw data chunks (layout versions 1 to 3).
    BTree1(Option<u64>),
    /// One chunk; its stored size and filter mask where it is filtered.
    Single { addr: Option<u64>, filtered: Option<(u64, u32)> },
    /// Unfiltered chunks stored one after the other, in chunk order.
    Implicit(Option<u64>),
    /// Fixed array (`FAHD`).
    FixedArray(Option<u64>),
    /// Extensible array (`EAHD`).
    ExtensibleArray(Option<u64>),
    /// Version-2 B-tree of chunk records (`BTHD`, record types 10 and 11).
    BTree2(Option<u64>),
}

impl Layout {
    /// libhdf5's name of the layout class.
    pub fn name(&self) -> &'static str {
        match self {
            Layout::Compact(_) => "H5D_COMPACT",
            Layout::Contiguous { .. } => "H5D_CONTIGUOUS",
            Layout::Chunked(_) => "H5D_CHUNKED",
            Layout::Virtual => "H5D_VIRTUAL",
        }
    }
}

/// What the metadata says about one dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    pub layout: Layout,
    /// Filters in the pipeline (compression, shuffle, checksums).
    pub filters: usize,
    /// The pipeline's filters, in the order they were applied on writing.
    pub pipeline: Vec<Filter>,
    pub dtype: Datatype,
    /// Dimension lengths (empty for scalar and null dataspaces).
    pub dims: Vec<u64>,
    /// Maximum dimension lengths where the dataspace stores them (`u64::MAX`: unlimited).
    pub max_dims: Option<Vec<u64>>,
}

impl Dataset {
    /// Bytes allocated for the data, as `H5Dget_storage_size` gives them (None for chunked and
    /// virtual storage, which this reader does not measure).
    pub fn storage_size(&self) -> Option<u64> {
        match &self.layout {
            Layout::Compact(b) => Some(b.len() as u64),
            Layout::Contiguous { address: Some(_), size } => Some(*size),
            Layout::Contiguous { address: None, .. } => Some(0),
            Layout::Chunked(_) | Layout::Virtual => None,
        }
    }

    /// The byte offset of contiguous data, as `H5Dget_offset` gives it.
    pub fn offset(&self) -> Option<u64> {
        match self.layout {
            Layout::Contiguous { address, .. } => address,
            _ => None,
        }
    }

    pub(super) fn n_values(&self) -> Result<u64> {
        self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).ok_or_else(|| bad("the dataspace overflows"))
    }
}

impl Hdf5Meta<'_> {
    /// Dataset `name` of the root group.
    pub fn dataset(&self, name: &str) -> Result<Dataset> {
        self.parse_dataset(name, &self.header(self.find(name)?)?)
    }

    /// Dataset `name` of the root group and those of its attributes named in `wanted` (numeric
    /// ones as numbers, one string, fixed- or variable-length, as [`crate::input::AttrValue::Text`]),
    /// from one read of its header.
    pub fn dataset_with_attributes(&self, name: &str, wanted: &[&str]) -> Result<(Dataset, Attributes)> {
        let header = self.header(self.find(name)?)?;
        let ds = self.parse_dataset(name, &header)?;
        Ok((ds, self.attributes(&header, wanted)?))
    }

    fn parse_dataset(&self, name: &str, header: &Header) -> Result<Dataset> {
        let Some(layout) = header.find(MSG_LAYOUT) else {
            return Err(MetaError::NotFound(name.into())); // a group or a named datatype
        };
        if header.find(MSG_EXTERNAL).is_some() {
            return Err(unsupported("external data files"));
        }
        let space = header.find(MSG_DATASPACE).ok_or_else(|| bad("a dataset without a dataspace"))?;
        let (dims, max_dims) = dataspace_max(space.body("dataspace")?, self.sizes)?;
        let dtype = header.find(MSG_DATATYPE).ok_or_else(|| bad("a dataset without a datatype"))?;
        let dtype = datatype(dtype.body("datatype")?)?;
        let filters = match header.find(MSG_PIPELINE) {
            Some(m) => pipeline(m.body("filter pipeline")?)?,
            None => Vec::new(),
        };
        let mut ds =
            Dataset { layout: Layout::Virtual, filters: filters.len(), pipeline: filters, dtype, dims, max_dims };
        ds.layout = data_layout(layout.body("data layout")?, self.sizes, &ds)?;
        Ok(ds)
    }

    /// The stored bytes of a compact or contiguous dataset, or of one held whole in one
    /// unfiltered chunk (small ones: coordinates).
    pub fn raw<'a>(&'a self, ds: &'a Dataset) -> Result<Cow<'a, [u8]>> {
        match &ds.layout {
            Layout::Compact(bytes) => Ok(Cow::Borrowed(bytes)),
            Layout::Contiguous { address: Some(a), size } => self.src.read(*a, *size, "dataset"),
            Layout::Contiguous { address: None, .. } => Err(unsupported("a dataset never written (its fill value)")),
            // one unfiltered chunk holding every value (a time coordinate along an unlimited
            // dimension in a file of one or a few steps)
            Layout::Chunked(ch) if ds.filters == 0 && ch.dims.iter().zip(&ds.dims).all(|(c, d)| c >= d) => {
                let need = ds.n_values()?.checked_mul(ds.dtype.size as u64).ok_or_else(|| bad("dataset size"))?;
                match self.chunks(ds)?.as_slice() {
                    [one] if one.offset.iter().all(|&o| o == 0) && one.size >= need => {
                        self.src.read(one.addr, need, "dataset chunk")
                    }
                    _ => Err(unsupported("reading a chunked dataset stored otherwise than in one chunk")),
                }
            }
            other => Err(unsupported(format!("reading {} storage", other.name()))),
        }
    }

    /// A compact or contiguous dataset's values converted to f64, as `H5Dread` to
    /// `H5T_NATIVE_DOUBLE` gives them (exact for these types; 64-bit integers round to nearest).
    pub fn values_f64(&self, ds: &Dataset) -> Result<Vec<f64>> {
        let t = ds.dtype;
        let order = match t.order {
            Some(o) => o,
            None if t.size == 1 => ByteOrder::Little,
            None => return Err(unsupported("values without a byte order")),
        };
        if !t.standard || ds.filters != 0 {
            return Err(unsupported(format!("converting {:?} of {} bytes", t.class, t.size)));
        }
        let n = ds.n_values()?;
        let raw = self.raw(ds)?;
        let need = n.checked_mul(t.size as u64).filter(|&b| b <= raw.len() as u64);
        need.ok_or_else(|| bad(format!("{} bytes stored for {n} values of {} bytes", raw.len(), t.size)))?;
        let raw = &raw[..n as usize * t.size];
        if t.class == TypeClass::Float && t.size == 4 && order != NATIVE {
            // libhdf5 converts these in software, NaN to all mantissa bits set (not as the FPU)
            let nan = |b: &[u8]| {
                let v = u32::from_be_bytes(b.try_into().expect("4 bytes"));
                f32::from_bits(if order == ByteOrder::Little { v.swap_bytes() } else { v }).is_nan()
            };
            if raw.chunks_exact(4).any(nan) {
                return Err(unsupported("NaN among float32 values of the other byte order"));
            }
        }
        let value = |b: &[u8]| value_f64(b, t, order);
        match (t.class, t.size) {
            (TypeClass::Float, 4 | 8) | (TypeClass::Integer { .. }, 1 | 2 | 4 | 8) => {
                Ok(raw.chunks_exact(t.size).map(value).collect())
            }
            _ => Err(unsupported(format!("converting {:?} of {} bytes", t.class, t.size))),
        }
    }
}

/// A data layout message (`ds` gives the dataspace and type, for version 1 and 2 sizes).
pub(super) fn data_layout(data: &[u8], sizes: Sizes, ds: &Dataset) -> Result<Layout> {
    let mut c = Cur::new(data, "data layout message");
    let version = c.u8()?;
    match version {
        1 | 2 => {
            let rank = usize::from(c.u8()?);
            let class = c.u8()?;
            c.skip(5)?;
            let address = if class == 1 || class == 2 { sizes.addr(&mut c)? } else { None };
            let dims = (0..rank).map(|_| c.u32().map(u64::from)).collect::<Result<Vec<u64>>>()?;
            match class {
                0 => {
                    let n = c.u32()? as usize;
                    Ok(Layout::Compact(c.take(n)?.to_vec()))
                }
                1 => {
                    // stored sizes could be truncated: HDF5 computes the size from the dataspace
                    let size = ds.n_values()?.checked_mul(ds.dtype.size as u64).ok_or_else(|| bad("dataset size"))?;
                    Ok(Layout::Contiguous { address, size })
                }
                2 => chunking(dims, ds, false, ChunkIndex::BTree1(address)),
                k => Err(bad(format!("layout class {k}"))),
            }
        }
        3..=5 => match c.u8()? {
            0 => {
                let n = usize::from(c.u16()?);
                Ok(Layout::Compact(c.take(n)?.to_vec()))
            }
            1 => {
                let address = sizes.addr(&mut c)?;
                let size = sizes.length(&mut c)?;
                Ok(Layout::Contiguous { address, size })
            }
            2 if version == 3 => {
                let ndims = usize::from(c.u8()?);
                let address = sizes.addr(&mut c)?;
                let dims = (0..ndims).map(|_| c.u32().map(u64::from)).collect::<Result<Vec<u64>>>()?;
                chunking(dims, ds, false, ChunkIndex::BTree1(address))
            }
            2 => {
                let flags = c.u8()?;
                let ndims = usize::from(c.u8()?);
                let enc = usize::from(c.u8()?);
                if !(1..=8).contains(&enc) {
                    return Err(bad(format!("chunk dimensions of {enc} bytes")));
                }
                let dims = (0..ndims).map(|_| c.uint(enc)).collect::<Result<Vec<u64>>>()?;
                let kind = c.u8()?;
                let filtered = match kind {
                    1 if flags & 2 != 0 => Some((sizes.length(&mut c)?, c.u32()?)),
                    1 | 2 => None,
                    3 => c.skip(1).map(|_| None)?,
                    4 => c.skip(5).map(|_| None)?,
                    5 => c.skip(6).map(|_| None)?,
                    k => return Err(unsupported(format!("chunk index type {k}"))),
                };
                let addr = sizes.addr(&mut c)?;
                let index = match kind {
                    1 => ChunkIndex::Single { addr, filtered },
                    2 => ChunkIndex::Implicit(addr),
                    3 => ChunkIndex::FixedArray(addr),
                    4 => ChunkIndex::ExtensibleArray(addr),
                    _ => ChunkIndex::BTree2(addr),
                };
                chunking(dims, ds, flags & 1 != 0, index)
            }
            3 if version >= 4 => Ok(Layout::Virtual),
            k => Err(bad(format!("layout class {k}"))),
        },
        v => Err(unsupported(format!("data layout message version {v}"))),
    }
}

/// A chunked layout: `dims` are the message's chunk dimensions, the dataset's then the
/// element size.
fn chunking(mut dims: Vec<u64>, ds: &Dataset, unfiltered_edges: bool, index: ChunkIndex) -> Result<Layout> {
    if dims.len() != ds.dims.len() + 1 || dims.contains(&0) {
        return Err(bad(format!("chunk dimensions {dims:?} for a dataset of dimensions {:?}", ds.dims)));
    }
    let element = dims.pop().unwrap_or(0);
    if element != ds.dtype.size as u64 {
        return Err(bad(format!("chunks of {element}-byte elements for a {}-byte type", ds.dtype.size)));
    }
    Ok(Layout::Chunked(Chunking { dims, unfiltered_edges, index }))
}
