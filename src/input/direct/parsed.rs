//! Inspecting an HDF5 input file for the direct path through the metadata parser
//! ([`crate::input::h5meta`]): its variable's layout, type, dimensions and offset, its decoding
//! attributes and its coordinates, put through the same checks as libhdf5's answers.
//!
//! Why it exists: parsed, every reader thread locates its own file with no library lock and no
//! child process (libhdf5 is not thread-safe); a structure the parser does not read is
//! reported as [`Refused::Unsupported`] so that the caller asks libhdf5
//! ([`super::library`]), which stays the oracle; a chunk index it proves damaged is
//! [`Refused::Damaged`], which no library is asked to read ([`super::ChunkVerdict`] is that
//! verdict for the paths that read through libnetcdf).

use std::fs::File;

use super::chunked::Chunked;
use super::filters::{filter_name, unsupported_filter};
use super::verdict::damaged_index;
use super::{check_found, check_packing, lookup, ByteOrder, Found, Place, Refused};
use crate::input::grid::Grid;
use crate::input::h5meta::{Hdf5Meta, Layout, MetaError, TypeClass};
use crate::input::layout::VarLayout;
use crate::input::packing::CHECKED_ATTRIBUTES;
use crate::input::storage::Storage;

/// [`super::library::locate_hdf5`] without the library: the HDF5 metadata parsed from `file`.
pub(super) fn locate_parsed(
    file: &File,
    layout: &VarLayout,
    bytes: u64,
    grid: Option<&Grid>,
) -> Result<(Place, ByteOrder, usize), Refused> {
    let refused = |e: MetaError| match e {
        MetaError::Unsupported(why) => Refused::Unsupported(why),
        other => Refused::Not(other.to_string()),
    };
    let meta = Hdf5Meta::open(file).map_err(refused)?;
    let (ds, attrs) = meta.dataset_with_attributes(&layout.name, &CHECKED_ATTRIBUTES).map_err(refused)?;
    let storage = match ds.dtype.class {
        TypeClass::Integer { signed } => Storage::from_parts(false, signed, ds.dtype.size),
        TypeClass::Float => Storage::from_parts(true, true, ds.dtype.size),
        other => return Err(Refused::Unsupported(format!("a variable of HDF5 class {other:?}"))),
    };
    if !ds.dtype.standard {
        return Err(Refused::Not("a number type of partial precision or not IEEE".into()));
    }
    let chunked = match &ds.layout {
        Layout::Chunked(ch) => {
            if let Some(id) = unsupported_filter(&ds.pipeline) {
                return Err(Refused::Unsupported(format!("filter {id} ({}) is not decoded here", filter_name(id))));
            }
            let chunks = meta.chunks(&ds).map_err(|e| match e {
                MetaError::Malformed(why) => Refused::Damaged(damaged_index(&why)),
                other => refused(other),
            })?;
            Some(Chunked {
                chunk: ch.dims.clone(),
                dims: ds.dims.clone(),
                pipeline: ds.pipeline.clone(),
                unfiltered_edges: ch.unfiltered_edges,
                chunks,
            })
        }
        _ => None,
    };
    let found = Found {
        layout: ds.layout.name().into(),
        contiguous: matches!(ds.layout, Layout::Contiguous { .. }) || chunked.is_some(),
        // a chunked variable's filters are undone by the chunked reader
        filters: if chunked.is_some() { 0 } else { ds.filters },
        type_size: ds.dtype.size,
        storage,
        order: ds.dtype.order.ok_or_else(|| "VAX".to_string()),
        dims: ds.dims.clone(),
        // (a chunked variable's bytes are counted by its chunks)
        stored: match chunked {
            Some(_) => bytes.saturating_mul(layout.time_axis.and_then(|t| ds.dims.get(t)).copied().unwrap_or(1)),
            None => ds.storage_size().unwrap_or(0),
        },
        offset: if chunked.is_some() { Some(0) } else { ds.offset() },
    };
    let (offset, order, steps) = check_found(&found, layout, bytes)?;
    let located = match chunked {
        Some(ch) => (Place::Chunked(Box::new(ch)), order, steps),
        None => (Place::Contiguous(offset), order, steps),
    };
    check_packing(layout.storage, |n| lookup(&attrs, n), layout)?;
    // the coordinates, compared with the first file's
    for (name, shape, expected) in grid.iter().flat_map(|g| g.checked()) {
        let c = match meta.dataset(name) {
            Err(MetaError::NotFound(_)) => return Err(format!("no coordinate dataset /{name}").into()),
            other => other.map_err(refused)?,
        };
        let same = c.dims == shape && {
            let values = meta.values_f64(&c).map_err(refused)?;
            values.iter().zip(expected).all(|(a, b)| a.to_bits() == b.to_bits())
        };
        if !same {
            return Err(format!("coordinate {name} differs from the first file's").into());
        }
    }
    Ok(located)
}
