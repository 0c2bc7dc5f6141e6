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
//! lock, no child process. libhdf5 stays the oracle: the job's first file is read both ways
//! and `tests/h5meta.rs` compares the two on every structure below.
//!
//! The modules follow the format's layers, bottom to top:
//! - `cursor`: checked byte reading (the file through a buffer of its head, a cursor, the
//!   superblock's address and length sizes, visited-address sets);
//! - `checksum`: Jenkins' lookup3, HDF5's metadata checksum and link-name hash;
//! - `superblock`: the file's entry point, versions 0 to 3;
//! - `header`: object headers v1 and v2 with their continuation blocks, and which messages
//!   are kept;
//! - `message`: the bodies of the dataspace, datatype, filter pipeline and data layout
//!   messages;
//! - `btree2` and `heap`: v2 B-tree headers and fractal heaps (dense links, dense
//!   attributes);
//! - `group` and `symbol_table`: finding a link of the root group (new-style link messages,
//!   compact or dense; old-style symbol tables);
//! - `dataset`: what a dataset's header says, and reading small datasets' values;
//! - `chunks`: where a chunked dataset's chunks are, from its chunk index, and `chunk_keys`:
//!   the checks every chunk it lists passes;
//! - `attributes`: attribute messages, compact and dense;
//! - `global_heap`: global heap collections, where variable-length strings keep their text.
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
//!   floating-point classes decoded, fixed- and variable-length strings for attributes, others
//!   reported by class), link (6), data layout (8,
//!   versions 1 to 5: compact, contiguous, chunked with its chunk dimensions and index, virtual),
//!   filter pipeline (11, versions 1 and 2: each filter's id, flags and parameters), object
//!   header continuation (16), symbol table (17); all others are skipped;
//! - chunk indexes (`chunks`): version-1 B-trees (layout versions 1 to 3), and for layout
//!   version 4 single chunk, implicit, fixed array (paged or not), extensible array (index,
//!   secondary and unpaged data blocks) and version-2 B-trees (record types 10 and 11);
//! - attribute values: numbers, and strings fixed-length or variable-length (their text in a
//!   global heap collection, `GCOL` version 1), one string read as libnetcdf reads NC_CHAR;
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

use std::fmt;

mod attributes;
mod btree2;
mod checksum;
mod chunk_keys;
mod chunks;
mod cursor;
mod dataset;
mod datatype;
mod global_heap;
mod group;
mod header;
mod heap;
mod message;
mod superblock;
mod symbol_table;

pub use checksum::lookup3;
pub use chunk_keys::ChunkLoc;
pub use dataset::{ChunkIndex, Chunking, Dataset, Layout};
pub use datatype::{Datatype, TypeClass};
pub use group::{LinkStorage, Structure};
pub use message::{Filter, FILTER_DEFLATE, FILTER_FLETCHER32, FILTER_SHUFFLE};

use cursor::{Sizes, Source};

/// Attributes by name, in the order they were found (defined here, beside the parser, because
/// datasets carry them and the attribute reader fills them).
pub type Attributes = Vec<(String, crate::input::packing::AttrValue)>;
use header::Header;

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

/// B-tree and heap depth, against corrupted trees (each node is also visited once at most).
const MAX_DEPTH: usize = 32;

/// One HDF5 file's superblock and root group, to look datasets up in. Opened by
/// [`Hdf5Meta::open`] (`superblock`); its methods are spread over the modules of the
/// structures they read.
pub struct Hdf5Meta<'f> {
    src: Source<'f>,
    sizes: Sizes,
    superblock: u8,
    root: Header,
}
