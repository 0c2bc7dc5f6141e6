//! Reading a located variable: one `pread` per piece of whole lines of the stored field, the
//! bytes put in this machine's order, then decoded into the pool's rows with the first file's
//! rules (which every located file was checked to share).
//!
//! Why it exists: this is the fast path's inner loop, run by every reader thread at once with
//! no library (libnetcdf and libhdf5 are not thread-safe); reads from the page cache run at
//! memory speed.

use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;

use super::ByteOrder;
use crate::input::layout::VarLayout;
use crate::input::read::{decode_region, RawData, Region};
use crate::pool::Sample;

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
    read_step_into(file, offset, 0, order, layout, region, buf, dest)
}

/// [`read_into`] of time step `step`: the steps of a contiguous variable whose time dimension
/// is the outer one follow each other, one field's bytes apart (the locating checked that
/// the file holds them all).
#[allow(clippy::too_many_arguments)]
pub fn read_step_into<T: Sample>(
    file: &File,
    offset: u64,
    step: usize,
    order: ByteOrder,
    layout: &VarLayout,
    region: &Region,
    buf: &mut DirectBuffer,
    dest: &mut [T],
) -> std::io::Result<u64> {
    let size = layout.storage.size();
    let offset = offset + (step * layout.nlat() * layout.nlon() * size) as u64;
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
