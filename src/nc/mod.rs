//! The NetCDF-4 writing kit both jobs use: the climatology job's files (`crate::output`) and
//! the events job's (`crate::events::files`) are defined by their own schemas and written
//! through these stages, so each way of writing exists once.
//!
//! - [`encode`]: how a value is stored (`--output-type`, scale and fill) and the chunk coder
//!   (shuffle, deflate; `rle_deflate` for planes of long runs), bit for bit what HDF5's
//!   filters would write.
//! - [`direct`]: the direct write path: storage allocated at creation, located once through
//!   HDF5, written with `pwrite` from several threads.
//! - [`chunked`]: the compressed write path: chunks coded on every thread and handed to HDF5
//!   already filtered ([`chunk_files`] keeps the files open for it; `chunk_layout` checks
//!   the chunk layout before anything is written).
//! - [`coords`]: the input grid's coordinates (1-D or 2-D, with its grid mapping) in an output.

pub mod chunk_files;
mod chunk_layout;
pub mod chunked;
pub mod coords;
pub mod direct;
pub mod encode;
mod rle_deflate;
