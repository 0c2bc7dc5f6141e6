//! Reading gridded variables from NetCDF input files: which variable, which dimension is
//! latitude, how values are packed, and decoding a region of cells into a pool row.
//!
//! Nothing here assumes a dimension order: latitude and longitude are recognised from
//! coordinate-variable attributes and dimension names, and a region is read in the file's own
//! order and transposed into the canonical `(lat, lon)` order while decoding.
//!
//! The modules, bottom to top (each imports only those above it in this list, and the pool):
//! [`mod@format`] and `storage` (what a file and its values are), `text_attr` (an attribute's
//! text, NC_CHAR or NC_STRING), `error`, `packing` (decoding rules), `layout` and `grid` (the
//! variable and its coordinates, through libnetcdf), `open`, `read` (a region, decoded), `checked` (every file against the first), the header parsers
//! [`h5meta`] and `netcdf3`, `timeval` (a time coordinate read through them), [`direct`] (the
//! `pread` fast path), [`child`] and [`contain`] (forked children), `forked` (the forked
//! readers). This file only declares and re-exports.

mod checked;
pub mod child;
pub mod climatology;
pub mod contain;
pub mod direct;
mod error;
mod forked;
pub mod format;
mod grid;
pub mod h5meta;
mod layout;
mod netcdf3;
mod open;
mod packing;
mod read;
mod storage;
mod text_attr;
mod timeval;

pub use checked::{check_pool_packing, open_checked, read_checked, read_checked_at, read_step};
/// Tests that fork take this lock (see `child::serial`: the forked readers' zombie check sees
/// every child).
#[cfg(test)]
pub(crate) use child::serial as fork_serial;
pub use error::InputError;
pub use forked::{
    read_forked, read_forked_into, read_forked_steps_into, ChildFile, ReaderError, ReaderEvent, ReaderOptions,
    SharedRows, SlotStep,
};
pub use grid::{Attr, Aux, Coord, Grid};
pub use layout::{VarLayout, VarMeta};
pub use open::{open, silence_hdf5};
pub use packing::{AttrValue, Packing};
pub use read::{decode_region, decode_stored, read_canonical, read_region, read_region_at, RawData, Region};
pub use storage::Storage;
pub use text_attr::{as_char, attr_text, global_text, var_text};
pub use timeval::{header_facts, HeaderFacts, TimeRead};
