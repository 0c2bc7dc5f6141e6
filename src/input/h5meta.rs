//! A reader of just enough HDF5 metadata to find where a dataset of the root group keeps its
//! values, without libhdf5 (in the manner of hidefix): the superblock, the root group's links
//! and the dataset's object header are read with `pread` (one read of the file's first 16 KiB
//! serves most files) and parsed here, with every read and every field checked.
//!
//! Why it exists: the direct read path ([`super::direct`]) needs each input file's data offset,
//! storage layout, filters, type and dimensions. Through libhdf5 that query is serialized under
//! the library lock (libhdf5 is not thread-safe), so it ran in forked child processes and still
//! bounded the read stage (2.8 s of CPU for 3060 files on the GPU node; on 2 cores one locating
//! process set the pace). Parsed here, every reader thread locates its own file: no library, no
//! lock, no child process.
//!
//! Supported:
//! - superblock versions 0 and 1 (root group as a symbol table: object header v1, symbol table
//!   message, v1 B-tree group nodes, local heap, `SNOD` symbol nodes) and 2 and 3 (checksummed;
//!   object headers v2 `OHDR` with `OCHK` continuation blocks);
//! - object headers v1 and v2 with continuation messages, anywhere in the file;
//! - new-style groups: link messages stored compactly in the group's header, and dense link
//!   storage (link info message → fractal heap of link messages, found through the v2 B-tree
//!   name index by the Jenkins lookup3 hash of the name; direct and indirect heap blocks);
//! - messages: dataspace (1, versions 1 and 2), link info (2), datatype (3; fixed-point and
//!   floating-point classes decoded, others reported by class), link (6), data layout (8,
//!   versions 1 to 5: compact, contiguous, chunked, virtual), filter pipeline (11; the number of
//!   filters), object header continuation (16), symbol table (17); all others are skipped;
//! - checksums of every checksummed structure read (superblock v2/v3, `OHDR`, `OCHK`, `FRHP`,
//!   `FHIB`, `BTHD`, `BTIN`, `BTLF`) are verified.
//!
//! Unsupported, reported as [`MetaError::Unsupported`] so the caller asks libhdf5 instead:
//! a nonzero base address, a file driver block (family/multi files), addresses or lengths other
//! than 2, 4 or 8 bytes, a needed message stored as a shared message, external data files, soft
//! or external links, fractal heaps with I/O filters, "huge" heap objects, and unknown versions of
//! the structures above. A truncated or corrupted file gives [`MetaError::Malformed`], never a
//! panic or a read out of range.
//!
//! `SSTCLIM_H5META=off` (or `0`, `false`, `library`) makes the direct read path locate every file
//! through libhdf5 instead, as before this reader existed (for tests and benchmarks).

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::os::unix::fs::FileExt;

use super::direct::{ByteOrder, HDF5_SIGNATURE};

// attribute messages and dense attribute storage (a child module: it walks this reader's heaps
// and B-trees)
#[path = "h5meta_attrs.rs"]
mod attrs;
pub use attrs::Attributes;

/// Why the metadata could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetaError {
    /// A structure this reader does not handle (libhdf5 may): ask the library.
    Unsupported(String),
    /// The root group has no link of this name, or it does not lead to a dataset.
    NotFound(String),
    /// The file is not well-formed HDF5 (truncated, corrupt, inconsistent) or cannot be read.
    Malformed(String),
}

impl fmt::Display for MetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaError::Unsupported(why) => write!(f, "not read without libhdf5: {why}"),
            MetaError::NotFound(name) => write!(f, "no HDF5 dataset /{name}"),
            MetaError::Malformed(why) => write!(f, "malformed HDF5 metadata: {why}"),
        }
    }
}

impl std::error::Error for MetaError {}

pub type Result<T> = std::result::Result<T, MetaError>;

fn bad(why: impl Into<String>) -> MetaError {
    MetaError::Malformed(why.into())
}

fn unsupported(why: impl Into<String>) -> MetaError {
    MetaError::Unsupported(why.into())
}

/// Bytes read from the start of the file at once: superblock, root group and the variables'
/// headers of a netCDF-4 file usually lie within them.
const HEAD: u64 = 16 << 10;
/// No metadata structure (or small dataset read here) is larger than this.
const MAX_READ: u64 = 64 << 20;
/// Object header chunks followed per header (a loop of continuations is corruption).
const MAX_CHUNKS: usize = 1024;
/// B-tree and heap depth, against corrupted trees (each node is also visited once at most).
const MAX_DEPTH: usize = 32;

/// Addresses already visited: a tree node or header chunk met twice means a corrupted file.
#[derive(Default)]
struct Visited(std::collections::HashSet<u64>);

impl Visited {
    fn first(&mut self, addr: u64, what: &str) -> Result<()> {
        if !self.0.insert(addr) {
            return Err(bad(format!("the {what} at byte {addr} is reached twice")));
        }
        Ok(())
    }
}

/// The file, read through a buffer of its first bytes (or a whole file in memory).
struct Source<'f> {
    file: Option<&'f File>,
    len: u64,
    head: Cow<'f, [u8]>,
}

impl<'f> Source<'f> {
    fn new(file: &'f File) -> Result<Source<'f>> {
        let len = file.metadata().map_err(|e| bad(format!("cannot stat the file: {e}")))?.len();
        let mut head = vec![0u8; len.min(HEAD) as usize];
        file.read_exact_at(&mut head, 0).map_err(|e| bad(format!("reading the first {} bytes: {e}", head.len())))?;
        Ok(Source { file: Some(file), len, head: Cow::Owned(head) })
    }

    /// `n` bytes at `addr`, which must lie inside the file.
    fn read(&self, addr: u64, n: u64, what: &str) -> Result<Cow<'_, [u8]>> {
        let end = addr.checked_add(n).filter(|&e| e <= self.len).ok_or_else(|| {
            bad(format!("the {what} at byte {addr} ({n} bytes) passes the end of the file ({} bytes)", self.len))
        })?;
        if end <= self.head.len() as u64 {
            return Ok(Cow::Borrowed(&self.head[addr as usize..end as usize]));
        }
        if n > MAX_READ {
            return Err(unsupported(format!("a {what} of {n} bytes")));
        }
        let file = self.file.ok_or_else(|| bad("a file in memory read past its end"))?;
        let mut buf = vec![0u8; n as usize];
        file.read_exact_at(&mut buf, addr).map_err(|e| bad(format!("reading the {what} at byte {addr}: {e}")))?;
        Ok(Cow::Owned(buf))
    }

    /// Up to `n` bytes at `addr` (fewer at the end of the file).
    fn read_upto(&self, addr: u64, n: u64, what: &str) -> Result<Cow<'_, [u8]>> {
        if addr >= self.len {
            return Err(bad(format!("the {what} at byte {addr} is past the end of the file ({} bytes)", self.len)));
        }
        self.read(addr, n.min(self.len - addr), what)
    }
}

/// A checked little-endian cursor over a byte slice.
struct Cur<'a> {
    buf: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Cur<'a> {
    fn new(buf: &'a [u8], what: &'static str) -> Cur<'a> {
        Cur { buf, at: 0, what }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| bad(format!("the {} is cut short", self.what)))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn skip(&mut self, n: usize) -> Result<()> {
        self.take(n).map(|_| ())
    }

    fn left(&self) -> usize {
        self.buf.len() - self.at
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        Ok(self.uint(2)? as u16)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(self.uint(4)? as u32)
    }

    /// An unsigned little-endian integer of `n` (at most 8) bytes.
    fn uint(&mut self, n: usize) -> Result<u64> {
        debug_assert!(n <= 8);
        Ok(self.take(n)?.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    fn signature(&mut self, sig: &[u8; 4]) -> Result<()> {
        if self.take(4)? != sig {
            return Err(bad(format!(
                "no {} signature where the {} should be",
                String::from_utf8_lossy(sig),
                self.what
            )));
        }
        Ok(())
    }
}

/// Sizes of file addresses and lengths (from the superblock).
#[derive(Clone, Copy, Debug)]
struct Sizes {
    addr: usize,
    len: usize,
}

impl Sizes {
    /// An address; None where undefined (all bits set).
    fn addr(&self, c: &mut Cur<'_>) -> Result<Option<u64>> {
        let v = c.uint(self.addr)?;
        let undefined = if self.addr == 8 { u64::MAX } else { (1u64 << (8 * self.addr)) - 1 };
        Ok((v != undefined).then_some(v))
    }

    fn length(&self, c: &mut Cur<'_>) -> Result<u64> {
        c.uint(self.len)
    }
}

/// Jenkins' lookup3 hash (`H5_checksum_lookup3`): HDF5's metadata checksum and link-name hash.
pub fn lookup3(data: &[u8], init: u32) -> u32 {
    let rot = |x: u32, k: u32| x.rotate_left(k);
    let word = |k: &[u8]| {
        let mut w = [0u8; 4];
        w[..k.len()].copy_from_slice(k);
        u32::from_le_bytes(w)
    };
    let mut a = 0xdead_beefu32.wrapping_add(data.len() as u32).wrapping_add(init);
    let (mut b, mut c) = (a, a);
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        a = a.wrapping_sub(c) ^ rot(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ rot(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ rot(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ rot(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ rot(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ rot(b, 4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    if k.len() > 4 {
        b = b.wrapping_add(word(&k[4..k.len().min(8)]));
    }
    if k.len() > 8 {
        c = c.wrapping_add(word(&k[8..]));
    }
    c ^= b;
    c = c.wrapping_sub(rot(b, 14));
    a ^= c;
    a = a.wrapping_sub(rot(c, 11));
    b ^= a;
    b = b.wrapping_sub(rot(a, 25));
    c ^= b;
    c = c.wrapping_sub(rot(b, 16));
    a ^= c;
    a = a.wrapping_sub(rot(c, 4));
    b ^= a;
    b = b.wrapping_sub(rot(a, 14));
    c ^= b;
    c.wrapping_sub(rot(b, 24))
}

/// Check a structure whose last 4 bytes are the lookup3 checksum of the rest.
fn verify(block: &[u8], what: &str) -> Result<()> {
    let n = block.len().checked_sub(4).ok_or_else(|| bad(format!("the {what} is cut short")))?;
    let stored = u32::from_le_bytes(block[n..].try_into().expect("4 bytes"));
    if lookup3(&block[..n], 0) != stored {
        return Err(bad(format!("the {what}'s checksum does not match")));
    }
    Ok(())
}

/// The byte order of this machine.
const NATIVE: ByteOrder = if cfg!(target_endian = "little") { ByteOrder::Little } else { ByteOrder::Big };

/// floor(log2(n)), 0 for 0 (`H5VM_log2_gen`).
fn log2(n: u64) -> u32 {
    63 - (n | 1).leading_zeros()
}

/// Bytes to encode counts up to `limit` (`H5VM_limit_enc_size`).
fn limit_enc_size(limit: u64) -> usize {
    (log2(limit) / 8 + 1) as usize
}

/// One header message kept for interpretation.
#[derive(Clone, Debug)]
struct Msg {
    kind: u16,
    flags: u8,
    data: Vec<u8>,
}

impl Msg {
    /// Its data, unless it is stored as a shared message (this reader does not follow those).
    fn body(&self, what: &str) -> Result<&[u8]> {
        if self.flags & 0x02 != 0 {
            return Err(unsupported(format!("the {what} is a shared message")));
        }
        Ok(&self.data)
    }
}

const MSG_DATASPACE: u16 = 0x01;
const MSG_LINK_INFO: u16 = 0x02;
const MSG_DATATYPE: u16 = 0x03;
const MSG_LINK: u16 = 0x06;
const MSG_EXTERNAL: u16 = 0x07;
const MSG_LAYOUT: u16 = 0x08;
const MSG_PIPELINE: u16 = 0x0B;
const MSG_ATTRIBUTE: u16 = 0x0C;
const MSG_CONTINUATION: u16 = 0x10;
const MSG_SYMBOL_TABLE: u16 = 0x11;
const MSG_ATTRIBUTE_INFO: u16 = 0x15;
/// The highest message type HDF5 defines.
const MSG_LAST_KNOWN: u16 = 0x18;

/// An object header: its version and the messages this reader needs.
struct Header {
    version: u8,
    msgs: Vec<Msg>,
}

impl Header {
    fn find(&self, kind: u16) -> Option<&Msg> {
        self.msgs.iter().find(|m| m.kind == kind)
    }
}

/// How the root group stores its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkStorage {
    /// Old-style group: v1 B-tree (`levels` above its leaves), local heap and symbol nodes.
    SymbolTable { levels: u8 },
    /// Link messages in the group's object header.
    Compact,
    /// A fractal heap of link messages indexed by a v2 B-tree of `depth` levels above its
    /// leaves; `root_rows` is 0 where the heap's root is a direct block, else the rows of its
    /// root indirect block.
    Dense { root_rows: u16, depth: u16 },
}

/// The structures a file uses (for tests and logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Structure {
    pub superblock: u8,
    /// Object header version of the root group.
    pub root_header: u8,
    pub links: LinkStorage,
}

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
    Chunked,
    Virtual,
}

impl Layout {
    /// libhdf5's name of the layout class.
    pub fn name(&self) -> &'static str {
        match self {
            Layout::Compact(_) => "H5D_COMPACT",
            Layout::Contiguous { .. } => "H5D_CONTIGUOUS",
            Layout::Chunked => "H5D_CHUNKED",
            Layout::Virtual => "H5D_VIRTUAL",
        }
    }
}

/// Datatype classes (`H5T_class_t` numbering for the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    Integer { signed: bool },
    Float,
    Other(u8),
}

/// A dataset's datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datatype {
    pub class: TypeClass,
    /// Bytes per value.
    pub size: usize,
    /// None for VAX-ordered floats and classes without a byte order.
    pub order: Option<ByteOrder>,
    /// Values take all `size` bytes the standard way: IEEE 754 binary32/binary64, or integers of
    /// full precision at bit 0 (what [`Hdf5Meta::values_f64`] decodes).
    pub standard: bool,
}

/// What the metadata says about one dataset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    pub layout: Layout,
    /// Filters in the pipeline (compression, shuffle, checksums).
    pub filters: usize,
    pub dtype: Datatype,
    /// Dimension lengths (empty for scalar and null dataspaces).
    pub dims: Vec<u64>,
}

impl Dataset {
    /// Bytes allocated for the data, as `H5Dget_storage_size` gives them (None for chunked and
    /// virtual storage, which this reader does not measure).
    pub fn storage_size(&self) -> Option<u64> {
        match &self.layout {
            Layout::Compact(b) => Some(b.len() as u64),
            Layout::Contiguous { address: Some(_), size } => Some(*size),
            Layout::Contiguous { address: None, .. } => Some(0),
            Layout::Chunked | Layout::Virtual => None,
        }
    }

    /// The byte offset of contiguous data, as `H5Dget_offset` gives it.
    pub fn offset(&self) -> Option<u64> {
        match self.layout {
            Layout::Contiguous { address, .. } => address,
            _ => None,
        }
    }

    fn n_values(&self) -> Result<u64> {
        self.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).ok_or_else(|| bad("the dataspace overflows"))
    }
}

/// One HDF5 file's superblock and root group, to look datasets up in.
pub struct Hdf5Meta<'f> {
    src: Source<'f>,
    sizes: Sizes,
    superblock: u8,
    root: Header,
}

impl<'f> Hdf5Meta<'f> {
    /// Read the superblock (which must be at byte 0) and the root group's object header.
    pub fn open(file: &'f File) -> Result<Hdf5Meta<'f>> {
        Hdf5Meta::read(Source::new(file)?)
    }

    /// [`Hdf5Meta::open`] on a whole file's bytes in memory.
    pub fn from_bytes(bytes: &'f [u8]) -> Result<Hdf5Meta<'f>> {
        Hdf5Meta::read(Source { file: None, len: bytes.len() as u64, head: Cow::Borrowed(bytes) })
    }

    fn read(src: Source<'f>) -> Result<Hdf5Meta<'f>> {
        let sb = src.read_upto(0, 256, "superblock")?;
        let mut c = Cur::new(&sb, "superblock");
        if c.take(8)? != HDF5_SIGNATURE {
            return Err(bad("no HDF5 signature at byte 0"));
        }
        let version = c.u8()?;
        let (sizes, eof, root) = match version {
            0 | 1 => {
                c.skip(4)?; // free-space, root symbol table entry, reserved, shared header versions
                let sizes = Sizes { addr: c.u8()? as usize, len: c.u8()? as usize };
                check_sizes(sizes)?;
                c.skip(1 + 2 + 2 + 4)?; // reserved, group leaf and internal node K, flags
                if version == 1 {
                    c.skip(4)?; // indexed storage K, reserved
                }
                let base = sizes.addr(&mut c)?;
                let _free_space = sizes.addr(&mut c)?;
                let eof = sizes.addr(&mut c)?;
                let driver = sizes.addr(&mut c)?;
                check_base(base)?;
                if driver.is_some() {
                    return Err(unsupported("a file driver information block (family or multi files)"));
                }
                // the root group's symbol table entry
                let _name = sizes.length(&mut c)?;
                let root = sizes.addr(&mut c)?;
                (sizes, eof, root)
            }
            2 | 3 => {
                let sizes = Sizes { addr: c.u8()? as usize, len: c.u8()? as usize };
                check_sizes(sizes)?;
                c.skip(1)?; // flags
                let base = sizes.addr(&mut c)?;
                let _extension = sizes.addr(&mut c)?;
                let eof = sizes.addr(&mut c)?;
                let root = sizes.addr(&mut c)?;
                let end = c.at + 4;
                verify(sb.get(..end).ok_or_else(|| bad("the superblock is cut short"))?, "superblock")?;
                check_base(base)?;
                (sizes, eof, root)
            }
            v => return Err(unsupported(format!("superblock version {v}"))),
        };
        let eof = eof.ok_or_else(|| bad("the superblock has no end-of-file address"))?;
        if src.len < eof {
            return Err(bad(format!("truncated file: {} bytes, the superblock says {eof}", src.len)));
        }
        let root = root.ok_or_else(|| bad("the superblock has no root group"))?;
        let mut meta = Hdf5Meta { src, sizes, superblock: version, root: Header { version: 0, msgs: Vec::new() } };
        meta.root = meta.header(root)?;
        Ok(meta)
    }

    /// Which structures the file uses.
    pub fn structure(&self) -> Result<Structure> {
        let links = if let Some(m) = self.root.find(MSG_SYMBOL_TABLE) {
            let btree = self.sizes.addr(&mut Cur::new(m.body("symbol table message")?, "symbol table message"))?;
            let node = self.src.read(btree.ok_or_else(|| bad("a symbol table without a B-tree"))?, 6, "B-tree")?;
            LinkStorage::SymbolTable { levels: node[5] }
        } else {
            match self.link_info()? {
                Some(LinkInfo { heap: Some(heap), names }) => {
                    let depth = self.btree2(names.ok_or_else(|| bad("dense links without a name index"))?)?.depth;
                    LinkStorage::Dense { root_rows: self.heap(heap)?.root_rows, depth }
                }
                Some(_) => LinkStorage::Compact,
                None => return Err(bad("the root object is not a group")),
            }
        };
        Ok(Structure { superblock: self.superblock, root_header: self.root.version, links })
    }

    /// Dataset `name` of the root group.
    pub fn dataset(&self, name: &str) -> Result<Dataset> {
        self.parse_dataset(name, &self.header(self.find(name)?)?)
    }

    /// Dataset `name` of the root group and those of its attributes named in `wanted` (numeric
    /// ones as numbers, text ones as [`super::packing::AttrValue::Other`]), from one read of
    /// its header.
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
        let dims = dataspace(space.body("dataspace")?, self.sizes)?;
        let dtype = header.find(MSG_DATATYPE).ok_or_else(|| bad("a dataset without a datatype"))?;
        let dtype = datatype(dtype.body("datatype")?)?;
        let filters = match header.find(MSG_PIPELINE) {
            Some(m) => pipeline(m.body("filter pipeline")?)?,
            None => 0,
        };
        let mut ds = Dataset { layout: Layout::Chunked, filters, dtype, dims };
        ds.layout = data_layout(layout.body("data layout")?, self.sizes, &ds)?;
        Ok(ds)
    }

    /// The stored bytes of a compact or contiguous dataset (small ones: coordinates).
    pub fn raw<'a>(&'a self, ds: &'a Dataset) -> Result<Cow<'a, [u8]>> {
        match &ds.layout {
            Layout::Compact(bytes) => Ok(Cow::Borrowed(bytes)),
            Layout::Contiguous { address: Some(a), size } => self.src.read(*a, *size, "dataset"),
            Layout::Contiguous { address: None, .. } => Err(unsupported("a dataset never written (its fill value)")),
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

    /// The object header at `addr`, with the messages this reader needs.
    fn header(&self, addr: u64) -> Result<Header> {
        let pre = self.src.read_upto(addr, 64, "object header")?;
        let mut chunks = std::collections::VecDeque::new();
        let mut header = Header { version: 0, msgs: Vec::new() };
        let creation_order;
        if pre.starts_with(b"OHDR") {
            let mut c = Cur::new(&pre, "object header");
            c.skip(4)?;
            header.version = c.u8()?;
            if header.version != 2 {
                return Err(unsupported(format!("object header version {}", header.version)));
            }
            let flags = c.u8()?;
            creation_order = flags & 0x04 != 0;
            if flags & 0x20 != 0 {
                c.skip(16)?; // times
            }
            if flags & 0x10 != 0 {
                c.skip(4)?; // attribute storage phase change values
            }
            let size = c.uint(1 << (flags & 0x03))?;
            let total = (c.at as u64).checked_add(size).and_then(|n| n.checked_add(4));
            let whole = self.src.read(addr, total.ok_or_else(|| bad("object header size"))?, "object header")?;
            verify(&whole, "object header")?;
            self.messages(&whole[c.at..whole.len() - 4], 2, creation_order, &mut header.msgs, &mut chunks)?;
        } else if pre.first() == Some(&1) {
            header.version = 1;
            let mut c = Cur::new(&pre, "object header");
            c.skip(8)?; // version, reserved, message count, reference count
            let size = u64::from(c.u32()?);
            creation_order = false;
            // messages start 8-byte aligned after the 12-byte prefix
            let first = addr.checked_add(16).ok_or_else(|| bad("object header address"))?;
            chunks.push_back((first, size));
        } else {
            return Err(bad(format!("no object header at byte {addr}")));
        }
        let mut visited = Visited::default();
        visited.first(addr, "object header")?;
        while let Some((at, len)) = chunks.pop_front() {
            visited.first(at, "object header continuation block")?;
            if visited.0.len() > MAX_CHUNKS {
                return Err(bad("too many object header continuation blocks"));
            }
            let chunk = self.src.read(at, len, "object header continuation block")?;
            if header.version == 1 {
                self.messages(&chunk, 1, false, &mut header.msgs, &mut chunks)?;
            } else {
                let mut c = Cur::new(&chunk, "object header continuation block");
                c.signature(b"OCHK")?;
                if chunk.len() < 8 {
                    return Err(bad("the object header continuation block is cut short"));
                }
                verify(&chunk, "object header continuation block")?;
                self.messages(&chunk[4..chunk.len() - 4], 2, creation_order, &mut header.msgs, &mut chunks)?;
            }
        }
        Ok(header)
    }

    /// Parse the messages of one header chunk: keep the needed ones, queue continuations.
    fn messages(
        &self,
        chunk: &[u8],
        version: u8,
        creation_order: bool,
        msgs: &mut Vec<Msg>,
        chunks: &mut std::collections::VecDeque<(u64, u64)>,
    ) -> Result<()> {
        let mut c = Cur::new(chunk, "object header message");
        let prefix = match (version, creation_order) {
            (1, _) => 8,
            (_, true) => 6,
            (_, false) => 4,
        };
        // (in v2 headers, a gap shorter than a message prefix may end the chunk)
        while c.left() >= prefix {
            let (kind, size, flags) = if version == 1 {
                let kind = c.u16()?;
                let size = c.u16()?;
                let flags = c.u8()?;
                c.skip(3)?;
                (kind, size, flags)
            } else {
                let kind = u16::from(c.u8()?);
                let size = c.u16()?;
                let flags = c.u8()?;
                if creation_order {
                    c.skip(2)?;
                }
                (kind, size, flags)
            };
            let data = c.take(usize::from(size))?;
            match kind {
                MSG_CONTINUATION => {
                    let mut d = Cur::new(data, "continuation message");
                    let at = self.sizes.addr(&mut d)?.ok_or_else(|| bad("a continuation to no address"))?;
                    let len = self.sizes.length(&mut d)?;
                    chunks.push_back((at, len));
                }
                MSG_DATASPACE | MSG_LINK_INFO | MSG_DATATYPE | MSG_LINK | MSG_EXTERNAL | MSG_LAYOUT | MSG_PIPELINE
                | MSG_SYMBOL_TABLE | MSG_ATTRIBUTE | MSG_ATTRIBUTE_INFO => {
                    msgs.push(Msg { kind, flags, data: data.to_vec() })
                }
                k if k > MSG_LAST_KNOWN && flags & 0x80 != 0 => {
                    return Err(unsupported(format!("header message type {k}, marked 'fail if unknown'")))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn link_info(&self) -> Result<Option<LinkInfo>> {
        let Some(m) = self.root.find(MSG_LINK_INFO) else { return Ok(None) };
        let mut c = Cur::new(m.body("link info message")?, "link info message");
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("link info message version {version}")));
        }
        let flags = c.u8()?;
        if flags & 0x01 != 0 {
            c.skip(8)?; // maximum creation index
        }
        let heap = self.sizes.addr(&mut c)?;
        let names = self.sizes.addr(&mut c)?;
        Ok(Some(LinkInfo { heap, names }))
    }

    /// The object header address of link `name` of the root group.
    fn find(&self, name: &str) -> Result<u64> {
        if let Some(m) = self.root.find(MSG_SYMBOL_TABLE) {
            return self.find_in_symbol_table(m.body("symbol table message")?, name);
        }
        let info = self.link_info()?;
        let mut any_link = false;
        for m in self.root.msgs.iter().filter(|m| m.kind == MSG_LINK) {
            any_link = true;
            if let Some(addr) = self.link_to(m.body("link message")?, name)? {
                return Ok(addr);
            }
        }
        match info {
            Some(LinkInfo { heap: Some(heap), names }) => {
                let names = names.ok_or_else(|| bad("dense link storage without a name index"))?;
                self.find_dense(heap, names, name)
            }
            Some(_) => Err(MetaError::NotFound(name.into())),
            None if any_link => Err(MetaError::NotFound(name.into())),
            None => Err(bad("the root object is not a group")),
        }
    }

    /// The target of link message `data` if it is named `name`.
    fn link_to(&self, data: &[u8], name: &str) -> Result<Option<u64>> {
        let mut c = Cur::new(data, "link message");
        let version = c.u8()?;
        if version != 1 {
            return Err(unsupported(format!("link message version {version}")));
        }
        let flags = c.u8()?;
        let kind = if flags & 0x08 != 0 { c.u8()? } else { 0 };
        if flags & 0x04 != 0 {
            c.skip(8)?; // creation order
        }
        if flags & 0x10 != 0 {
            c.skip(1)?; // character set
        }
        let n = c.uint(1 << (flags & 0x03))?;
        let link_name = c.take(usize::try_from(n).map_err(|_| bad("link name length"))?)?;
        if link_name != name.as_bytes() {
            return Ok(None);
        }
        match kind {
            0 => Ok(Some(self.sizes.addr(&mut c)?.ok_or_else(|| bad("a hard link to no address"))?)),
            1 => Err(unsupported(format!("/{name} is a soft link"))),
            64 => Err(unsupported(format!("/{name} is an external link"))),
            k => Err(unsupported(format!("/{name} is a link of type {k}"))),
        }
    }

    /// Look `name` up in an old-style group (v1 B-tree of symbol nodes, names in a local heap).
    fn find_in_symbol_table(&self, data: &[u8], name: &str) -> Result<u64> {
        let mut c = Cur::new(data, "symbol table message");
        let btree = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a symbol table without a B-tree"))?;
        let heap = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a symbol table without a local heap"))?;
        // the local heap holding the names
        let h = self.src.read(heap, 8 + 2 * self.sizes.len as u64 + self.sizes.addr as u64, "local heap")?;
        let mut c = Cur::new(&h, "local heap");
        c.signature(b"HEAP")?;
        c.skip(4)?; // version, reserved
        let size = self.sizes.length(&mut c)?;
        let _free = self.sizes.length(&mut c)?;
        let at = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a local heap without data"))?;
        let names = self.src.read(at, size, "local heap data")?;
        let name_at = |offset: u64| -> Result<&[u8]> {
            let rest = usize::try_from(offset).ok().and_then(|o| names.get(o..));
            let rest = rest.ok_or_else(|| bad("a link name outside the local heap"))?;
            let end = rest.iter().position(|&b| b == 0).ok_or_else(|| bad("an unterminated link name"))?;
            Ok(&rest[..end])
        };
        let entry = self.sizes.len + self.sizes.addr + 24;
        let mut stack = vec![(btree, 0usize)];
        let mut visited = Visited::default();
        while let Some((node, depth)) = stack.pop() {
            visited.first(node, "group B-tree node")?;
            if depth > MAX_DEPTH {
                return Err(bad("the group B-tree is too deep"));
            }
            let pre = 8 + 2 * self.sizes.addr as u64;
            let head = self.src.read(node, pre, "group B-tree node")?;
            let mut c = Cur::new(&head, "group B-tree node");
            c.signature(b"TREE")?;
            let (kind, level, used) = (c.u8()?, c.u8()?, c.u16()?);
            if kind != 0 {
                return Err(bad(format!("a B-tree node of type {kind} in a group")));
            }
            let body = u64::from(used) * (self.sizes.len + self.sizes.addr) as u64 + self.sizes.len as u64;
            let whole = self.src.read(node, pre + body, "group B-tree node")?;
            let mut c = Cur::new(&whole, "group B-tree node");
            c.skip(pre as usize)?;
            for _ in 0..used {
                let _key = self.sizes.length(&mut c)?;
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a B-tree child at no address"))?;
                if level > 0 {
                    stack.push((child, depth + 1));
                    continue;
                }
                // a symbol table node
                let head = self.src.read(child, 8, "symbol table node")?;
                let mut s = Cur::new(&head, "symbol table node");
                s.signature(b"SNOD")?;
                let version = s.u8()?;
                if version != 1 {
                    return Err(unsupported(format!("symbol table node version {version}")));
                }
                s.skip(1)?;
                let n = u64::from(s.u16()?);
                let syms = self.src.read(child + 8, n * entry as u64, "symbol table node")?;
                for e in syms.chunks_exact(entry) {
                    let mut e = Cur::new(e, "symbol table entry");
                    let offset = self.sizes.length(&mut e)?;
                    let header = self.sizes.addr(&mut e)?;
                    if name_at(offset)? == name.as_bytes() {
                        return header.ok_or_else(|| bad("a symbol at no address"));
                    }
                }
            }
        }
        Err(MetaError::NotFound(name.into()))
    }

    /// Look `name` up in dense link storage: the v2 B-tree name index gives the heap IDs of the
    /// link messages whose name has the same hash.
    fn find_dense(&self, heap: u64, index: u64, name: &str) -> Result<u64> {
        let heap = self.heap(heap)?;
        let tree = self.btree2(index)?;
        if tree.kind != 5 {
            return Err(bad(format!("a v2 B-tree of type {} as a link name index", tree.kind)));
        }
        if tree.rec_size < 5 {
            return Err(bad("link name index records too small"));
        }
        let hash = lookup3(name.as_bytes(), 0);
        let Some(root) = tree.root else { return Err(MetaError::NotFound(name.into())) };
        let mut stack = vec![(root, tree.root_nrec, tree.depth)];
        let mut visited = Visited::default();
        while let Some((node, nrec, depth)) = stack.pop() {
            visited.first(node, "link name index node")?;
            let rec = usize::from(tree.rec_size);
            let nrec = usize::from(nrec);
            let ptr = if depth > 0 { tree.pointer_size(depth) } else { 0 };
            let n_ptr = if depth > 0 { nrec + 1 } else { 0 };
            let len = 6 + nrec * rec + n_ptr * ptr + 4;
            let block = self.src.read(node, len as u64, "link name index node")?;
            let mut c = Cur::new(&block, "link name index node");
            c.signature(if depth > 0 { b"BTIN" } else { b"BTLF" })?;
            let (version, kind) = (c.u8()?, c.u8()?);
            if version != 0 || kind != tree.kind {
                return Err(bad("a link name index node of another version or type"));
            }
            verify(&block, "link name index node")?;
            let records = c.take(nrec * rec)?;
            let hash_of = |i: usize| u32::from_le_bytes(records[i * rec..i * rec + 4].try_into().expect("4 bytes"));
            for i in 0..nrec {
                if hash_of(i) == hash {
                    let id = &records[i * rec + 4..(i + 1) * rec];
                    let link = heap.object(self, id)?;
                    if let Some(addr) = self.link_to(&link, name)? {
                        return Ok(addr);
                    }
                }
            }
            for i in 0..n_ptr {
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a B-tree child at no address"))?;
                let child_nrec = c.uint(tree.max_nrec_size)?;
                if depth > 1 {
                    c.skip(tree.cum_sizes[usize::from(depth) - 1])?;
                }
                // child i holds the records between records i - 1 and i
                let above = i == 0 || hash_of(i - 1) <= hash;
                let below = i == nrec || hash <= hash_of(i);
                if above && below {
                    let child_nrec = u16::try_from(child_nrec).map_err(|_| bad("B-tree node record count"))?;
                    stack.push((child, child_nrec, depth - 1));
                }
            }
        }
        Err(MetaError::NotFound(name.into()))
    }

    /// A fractal heap's header.
    fn heap(&self, addr: u64) -> Result<FractalHeap> {
        let (o, l) = (self.sizes.addr, self.sizes.len);
        let len = 4 + 1 + 2 + 2 + 1 + 4 + (l + o + l + o + 8 * l) + 2 + l + l + 2 + 2 + o + 2 + 4;
        let block = self.src.read(addr, len as u64, "fractal heap header")?;
        let mut c = Cur::new(&block, "fractal heap header");
        c.signature(b"FRHP")?;
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("fractal heap version {version}")));
        }
        let id_len = usize::from(c.u16()?);
        let filter_len = c.u16()?;
        if filter_len > 0 {
            return Err(unsupported("a fractal heap with I/O filters"));
        }
        verify(&block, "fractal heap header")?;
        c.skip(1)?; // flags
        let max_managed = u64::from(c.u32()?);
        c.skip(l + o + l + o + 8 * l)?; // huge objects, free space, statistics
        let width = u64::from(c.u16()?);
        let start = self.sizes.length(&mut c)?;
        let max_direct = self.sizes.length(&mut c)?;
        let max_bits = u32::from(c.u16()?);
        let _start_rows = c.u16()?;
        let root = self.sizes.addr(&mut c)?;
        let root_rows = c.u16()?;
        let pow2 = |v: u64| v > 0 && v.is_power_of_two();
        if !pow2(width) || !pow2(start) || !pow2(max_direct) || max_direct < start || !(1..=64).contains(&max_bits) {
            return Err(bad("a fractal heap with an impossible doubling table"));
        }
        let off_size = max_bits.div_ceil(8) as usize;
        let len_size = (log2(max_direct).div_ceil(8) as usize).min(limit_enc_size(max_managed));
        if 1 + off_size + len_size > id_len {
            return Err(bad("fractal heap IDs too short"));
        }
        Ok(FractalHeap {
            addr,
            id_len,
            width,
            start,
            first_row_bits: log2(start) + log2(width),
            max_direct_rows: log2(max_direct) - log2(start) + 2,
            root,
            root_rows,
            off_size,
            len_size,
        })
    }

    /// A v2 B-tree's header.
    fn btree2(&self, addr: u64) -> Result<BTree2> {
        let (o, l) = (self.sizes.addr, self.sizes.len);
        let block = self.src.read(addr, (4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + o + 2 + l + 4) as u64, "v2 B-tree header")?;
        let mut c = Cur::new(&block, "v2 B-tree header");
        c.signature(b"BTHD")?;
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("v2 B-tree version {version}")));
        }
        verify(&block, "v2 B-tree header")?;
        let kind = c.u8()?;
        let node_size = u64::from(c.u32()?);
        let rec_size = c.u16()?;
        let depth = c.u16()?;
        c.skip(2)?; // split and merge percentages
        let root = self.sizes.addr(&mut c)?;
        let root_nrec = c.u16()?;
        if rec_size == 0 || usize::from(depth) > MAX_DEPTH || node_size < 10 + u64::from(rec_size) {
            return Err(bad("a v2 B-tree with impossible sizes"));
        }
        // the sizes of record counts in internal nodes (as `H5B2__hdr_init` computes them)
        let max_leaf = (node_size - 10) / u64::from(rec_size);
        let max_nrec_size = limit_enc_size(max_leaf);
        let (mut cum, mut cum_sizes) = (vec![max_leaf], vec![0usize]);
        for d in 1..=usize::from(depth) {
            let ptr = (o + max_nrec_size + cum_sizes[d - 1]) as u64;
            let fixed = 10 + ptr;
            let max = node_size.checked_sub(fixed).map(|n| n / (u64::from(rec_size) + ptr)).unwrap_or(0);
            let c = (max + 1).saturating_mul(cum[d - 1]).saturating_add(max);
            cum.push(c);
            cum_sizes.push(limit_enc_size(c));
        }
        Ok(BTree2 { kind, rec_size, depth, root, root_nrec, addr_size: o, max_nrec_size, cum_sizes })
    }
}

fn check_sizes(s: Sizes) -> Result<()> {
    if ![2, 4, 8].contains(&s.addr) || ![2, 4, 8].contains(&s.len) {
        return Err(unsupported(format!("{}-byte addresses and {}-byte lengths", s.addr, s.len)));
    }
    Ok(())
}

fn check_base(base: Option<u64>) -> Result<()> {
    match base {
        Some(0) => Ok(()),
        Some(b) => Err(unsupported(format!("base address {b}"))),
        None => Err(bad("the superblock has no base address")),
    }
}

/// The link info message's addresses (dense storage where `heap` is defined).
struct LinkInfo {
    heap: Option<u64>,
    names: Option<u64>,
}

/// A v2 B-tree header, with the field sizes of its internal nodes.
struct BTree2 {
    kind: u8,
    rec_size: u16,
    depth: u16,
    root: Option<u64>,
    root_nrec: u16,
    addr_size: usize,
    /// Bytes of a child's record count in internal nodes.
    max_nrec_size: usize,
    /// Bytes of the total record count below a child, by the child's depth.
    cum_sizes: Vec<usize>,
}

impl BTree2 {
    /// Bytes of one child pointer in an internal node at `depth` (>= 1).
    fn pointer_size(&self, depth: u16) -> usize {
        self.addr_size + self.max_nrec_size + self.cum_sizes[usize::from(depth) - 1]
    }
}

/// A fractal heap header: the doubling table of its managed objects.
struct FractalHeap {
    addr: u64,
    id_len: usize,
    width: u64,
    start: u64,
    first_row_bits: u32,
    max_direct_rows: u32,
    root: Option<u64>,
    root_rows: u16,
    off_size: usize,
    len_size: usize,
}

impl FractalHeap {
    /// Block size of row `r` of the doubling table.
    fn row_size(&self, r: u32) -> Option<u64> {
        if r == 0 {
            Some(self.start)
        } else {
            self.start.checked_shl(r - 1).filter(|&s| s >> (r - 1) == self.start)
        }
    }

    /// Offset of row `r` from its indirect block's start.
    fn row_offset(&self, r: u32) -> Option<u64> {
        if r == 0 {
            Some(0)
        } else {
            self.row_size(r)?.checked_mul(self.width)
        }
    }

    /// The object a heap ID names.
    fn object(&self, meta: &Hdf5Meta<'_>, id: &[u8]) -> Result<Vec<u8>> {
        let id = id.get(..self.id_len).ok_or_else(|| bad("a heap ID shorter than the heap's"))?;
        let flags = id[0];
        if flags >> 6 != 0 {
            return Err(unsupported(format!("heap ID version {}", flags >> 6)));
        }
        match (flags >> 4) & 0x03 {
            0 => {}
            1 => return Err(unsupported("a 'huge' fractal heap object")),
            2 => {
                // tiny: the object is in the ID
                let (len, at) = if self.id_len <= 18 {
                    (usize::from(flags & 0x0F) + 1, 1)
                } else {
                    let hi = usize::from(flags & 0x0F) << 8;
                    (hi + usize::from(*id.get(1).ok_or_else(|| bad("heap ID"))?) + 1, 2)
                };
                return id.get(at..at + len).map(<[u8]>::to_vec).ok_or_else(|| bad("a tiny heap object too long"));
            }
            t => return Err(bad(format!("heap ID type {t}"))),
        }
        let mut c = Cur::new(&id[1..], "heap ID");
        let offset = c.uint(self.off_size)?;
        let len = c.uint(self.len_size)?;
        let root = self.root.ok_or_else(|| bad("an object of an empty fractal heap"))?;
        let (sizes, o) = (meta.sizes, meta.sizes.addr);
        let dblock_prefix = (4 + 1 + o + self.off_size) as u64;
        // the direct block holding `offset`: (its address, its size, the object's offset in it)
        let (block, size, inner) = if self.root_rows == 0 {
            (root, self.start, offset)
        } else {
            let (mut iblock, mut rows, mut block_off) = (root, u32::from(self.root_rows), 0u64);
            let mut depth = 0;
            loop {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(bad("fractal heap indirect blocks nest too deep"));
                }
                let entries = u64::from(rows) * self.width;
                let len = dblock_prefix + entries * o as u64 + 4;
                let b = meta.src.read(iblock, len, "fractal heap indirect block")?;
                let mut c = Cur::new(&b, "fractal heap indirect block");
                c.signature(b"FHIB")?;
                c.skip(1)?;
                verify(&b, "fractal heap indirect block")?;
                if sizes.addr(&mut c)? != Some(self.addr) {
                    return Err(bad("a fractal heap indirect block of another heap"));
                }
                if c.uint(self.off_size)? != block_off {
                    return Err(bad("a fractal heap indirect block at the wrong offset"));
                }
                let rel = offset.checked_sub(block_off).ok_or_else(|| bad("heap offset before its block"))?;
                // the row and column of `rel` in this block
                let row = (0..rows)
                    .find(|&r| {
                        let (start, size) = (self.row_offset(r), self.row_size(r));
                        matches!((start, size), (Some(s), Some(z)) if rel >= s && rel - s < z.saturating_mul(self.width))
                    })
                    .ok_or_else(|| bad("a heap offset outside the heap"))?;
                let size = self.row_size(row).expect("found above");
                let within = rel - self.row_offset(row).expect("found above");
                let col = within / size;
                c.skip(((u64::from(row) * self.width + col) as usize) * o)?;
                let child = sizes.addr(&mut c)?.ok_or_else(|| bad("a heap offset in an unallocated block"))?;
                if row < self.max_direct_rows {
                    break (child, size, within - col * size);
                }
                // an indirect block of its own rows (`H5HF__dtable_size_to_rows`)
                rows = (log2(size) + 1)
                    .checked_sub(self.first_row_bits)
                    .filter(|&r| r > 0)
                    .ok_or_else(|| bad("a fractal heap indirect block too small for a row"))?;
                iblock = child;
                block_off += self.row_offset(row).expect("found above") + col * size;
            }
        };
        if inner < dblock_prefix || !matches!(inner.checked_add(len), Some(end) if end <= size) {
            return Err(bad("a heap object outside its block"));
        }
        let head = meta.src.read(block, 5, "fractal heap direct block")?;
        let mut c = Cur::new(&head, "fractal heap direct block");
        c.signature(b"FHDB")?;
        Ok(meta.src.read(block + inner, len, "fractal heap object")?.into_owned())
    }
}

/// One stored value of type `t` (fixed-point or IEEE float of 1 to 8 bytes, `b` its bytes) as
/// f64, as libhdf5 converts it to `H5T_NATIVE_DOUBLE`.
fn value_f64(b: &[u8], t: Datatype, order: ByteOrder) -> f64 {
    let mut w = [0u8; 8];
    match order {
        ByteOrder::Little => w[..b.len()].copy_from_slice(b),
        ByteOrder::Big => b.iter().rev().enumerate().for_each(|(i, &x)| w[i] = x),
    }
    let bits = u64::from_le_bytes(w);
    match (t.class, t.size) {
        (TypeClass::Float, 4) => f64::from(f32::from_bits(bits as u32)),
        (TypeClass::Float, _) => f64::from_bits(bits),
        (TypeClass::Integer { signed: true }, s) => {
            let shift = 64 - 8 * s as u32;
            (((bits << shift) as i64) >> shift) as f64
        }
        (_, _) => bits as f64,
    }
}

/// Dimension lengths from a dataspace message.
fn dataspace(data: &[u8], sizes: Sizes) -> Result<Vec<u64>> {
    let mut c = Cur::new(data, "dataspace message");
    let version = c.u8()?;
    let rank = c.u8()?;
    let _flags = c.u8()?;
    match version {
        1 => c.skip(5)?,
        2 => {
            if c.u8()? == 2 {
                return Ok(Vec::new()); // null dataspace
            }
        }
        v => return Err(unsupported(format!("dataspace message version {v}"))),
    }
    if rank > 32 {
        return Err(bad(format!("a dataspace of rank {rank}")));
    }
    (0..rank).map(|_| sizes.length(&mut c)).collect()
}

/// A datatype message.
fn datatype(data: &[u8]) -> Result<Datatype> {
    let mut c = Cur::new(data, "datatype message");
    let head = c.u8()?;
    let (class, version) = (head & 0x0F, head >> 4);
    if !(1..=5).contains(&version) {
        return Err(unsupported(format!("datatype message version {version}")));
    }
    let bits = c.take(3)?;
    let size = c.u32()? as usize;
    Ok(match class {
        0 => {
            let order = if bits[0] & 0x01 == 0 { ByteOrder::Little } else { ByteOrder::Big };
            let (offset, precision) = (c.u16()?, c.u16()?);
            Datatype {
                class: TypeClass::Integer { signed: bits[0] & 0x08 != 0 },
                size,
                order: Some(order),
                standard: offset == 0 && usize::from(precision) == 8 * size,
            }
        }
        1 => {
            let order = match (bits[0] & 0x01, bits[0] & 0x40) {
                (0, 0) => Some(ByteOrder::Little),
                (1, 0) => Some(ByteOrder::Big),
                _ => None, // VAX order
            };
            let norm = (bits[0] >> 4) & 0x03;
            let pads = bits[0] & 0x0E;
            let sign = bits[1];
            let (offset, precision) = (c.u16()?, c.u16()?);
            let fields = (c.u8()?, c.u8()?, c.u8()?, c.u8()?); // exponent and mantissa locations and sizes
            let bias = c.u32()?;
            let ieee = match size {
                4 => (offset, precision, fields, bias, sign) == (0, 32, (23, 8, 0, 23), 127, 31),
                8 => (offset, precision, fields, bias, sign) == (0, 64, (52, 11, 0, 52), 1023, 63),
                _ => false,
            };
            Datatype { class: TypeClass::Float, size, order, standard: ieee && norm == 2 && pads == 0 }
        }
        other => Datatype { class: TypeClass::Other(other), size, order: None, standard: false },
    })
}

/// The number of filters of a filter pipeline message.
fn pipeline(data: &[u8]) -> Result<usize> {
    let mut c = Cur::new(data, "filter pipeline message");
    let version = c.u8()?;
    if version != 1 && version != 2 {
        return Err(unsupported(format!("filter pipeline message version {version}")));
    }
    Ok(usize::from(c.u8()?))
}

/// A data layout message (`ds` gives the dataspace and type, for version 1 and 2 sizes).
fn data_layout(data: &[u8], sizes: Sizes, ds: &Dataset) -> Result<Layout> {
    let mut c = Cur::new(data, "data layout message");
    let version = c.u8()?;
    match version {
        1 | 2 => {
            let rank = usize::from(c.u8()?);
            let class = c.u8()?;
            c.skip(5)?;
            let address = if class == 1 || class == 2 { sizes.addr(&mut c)? } else { None };
            c.skip(4 * rank)?;
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
                2 => Ok(Layout::Chunked),
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
            2 => Ok(Layout::Chunked),
            3 if version >= 4 => Ok(Layout::Virtual),
            k => Err(bad(format!("layout class {k}"))),
        },
        v => Err(unsupported(format!("data layout message version {v}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup3_matches_the_reference_values() {
        // Bob Jenkins' published hashlittle() check values
        assert_eq!(lookup3(b"", 0), 0xdeadbeef);
        assert_eq!(lookup3(b"Four score and seven years ago", 0), 0x17770551);
        assert_eq!(lookup3(b"Four score and seven years ago", 1), 0xcd628161);
    }

    #[test]
    fn cursor_reads_are_checked() {
        let b = [1u8, 2, 3];
        let mut c = Cur::new(&b, "test");
        assert_eq!(c.u16().unwrap(), 0x0201);
        assert!(matches!(c.u16(), Err(MetaError::Malformed(_))));
        assert_eq!(c.u8().unwrap(), 3);
        assert!(c.take(usize::MAX).is_err());
    }

    #[test]
    fn datatypes_decode() {
        // IEEE float64 little endian, as libhdf5 writes it
        let f64le = [0x11, 0x20, 0x3f, 0, 8, 0, 0, 0, 0, 0, 0x40, 0, 52, 11, 0, 52, 0xff, 3, 0, 0];
        let t = datatype(&f64le).unwrap();
        assert_eq!((t.class, t.size, t.order, t.standard), (TypeClass::Float, 8, Some(ByteOrder::Little), true));
        // int16 big endian, signed
        let i16be = [0x10, 0x09, 0, 0, 2, 0, 0, 0, 0, 0, 16, 0];
        let t = datatype(&i16be).unwrap();
        assert_eq!((t.class, t.size, t.order), (TypeClass::Integer { signed: true }, 2, Some(ByteOrder::Big)));
        assert!(t.standard);
        assert!(datatype(&i16be[..9]).is_err());
    }
}
