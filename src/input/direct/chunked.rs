//! Reading a chunked (and usually deflated) variable on the direct path: the chunks that a
//! tile's band of lines needs are `pread`, unfiltered ([`super::filters`]) and copied into the
//! stored field's lines, then decoded into the pool's rows with the first file's rules, as
//! contiguous variables are.
//!
//! Why it exists: the products users download (OISST, OSTIA, MUR, ERA5, CMIP6) are deflated
//! NetCDF-4; read through libnetcdf they are serialized under its lock. Here every reader
//! thread decodes its own file's chunks. Each chunk is decompressed at most once per tile:
//! the band is assembled one row of chunks at a time (latitude-slow files, so the buffer is a
//! chunk row, not the field) or whole (transposed files). A chunk that is missing (never
//! written: the fill value) sends the file to libnetcdf; a corrupt one is an error naming the
//! file, variable and chunk.

use std::fs::File;
use std::os::unix::fs::FileExt;

use super::filters::Unfilter;
use super::ByteOrder;
use crate::input::h5meta::{ChunkLoc, Filter};
use crate::input::layout::VarLayout;
use crate::input::read::{decode_region, RawData, Region};
use crate::pool::Sample;

/// Where a located file's chunks are and how they are filtered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunked {
    /// Chunk lengths, one per dimension of the variable.
    pub chunk: Vec<u64>,
    /// The variable's dimension lengths.
    pub dims: Vec<u64>,
    pub pipeline: Vec<Filter>,
    /// Edge chunks the variable only partly covers are stored unfiltered.
    pub unfiltered_edges: bool,
    pub chunks: Vec<ChunkLoc>,
}

/// Why a chunked read failed.
#[derive(Debug)]
pub enum ChunkError {
    /// Reading the file failed, or a chunk the band needs was never written: libnetcdf
    /// reads the file instead.
    Fallback(String),
    /// A chunk is corrupt (libnetcdf fails on it too): an error naming it.
    Corrupt(String),
}

/// Per-thread buffers of chunked reads.
#[derive(Default)]
pub struct ChunkBuffers {
    stored: Vec<u8>,
    unfilter: Unfilter,
    band: Option<RawData>,
    /// A whole chunk unshuffled, where its shuffle's element is not the stored type's size.
    scratch: Vec<u8>,
}

impl ChunkBuffers {
    /// Bytes inflated so far on this thread.
    pub fn inflated(&self) -> u64 {
        self.unfilter.inflated
    }
}

impl Chunked {
    /// Stored bytes of the chunks that hold lines `slow` of the first step (for the run report).
    pub fn stored_bytes(&self, layout: &VarLayout, slow: &std::ops::Range<usize>) -> u64 {
        let s = layout.lat_axis.min(layout.lon_axis);
        self.chunks.iter().filter(|c| self.wanted(layout, c, s, slow, |o| o == 0)).map(|c| c.size).sum()
    }

    /// Whether chunk `c` holds some of lines `slow` at a step that `has_step` accepts (given
    /// the chunk's steps `first..first + n` along the time dimension; every other dimension
    /// besides latitude and longitude at 0).
    pub(super) fn wanted(
        &self,
        layout: &VarLayout,
        c: &ChunkLoc,
        s: usize,
        slow: &std::ops::Range<usize>,
        has_step: impl Fn(u64) -> bool,
    ) -> bool {
        let extra_at_zero = (0..self.dims.len())
            .all(|k| k == layout.lat_axis || k == layout.lon_axis || Some(k) == layout.time_axis || c.offset[k] == 0);
        let (lo, hi) = (c.offset[s], c.offset[s].saturating_add(self.chunk[s]));
        let at_step = match layout.time_axis {
            Some(t) => has_step(c.offset[t]),
            None => true,
        };
        extra_at_zero && at_step && lo < slow.end as u64 && hi > slow.start as u64
    }

    /// The chunk's strides, in elements, per dimension (row-major).
    fn strides(&self) -> Vec<usize> {
        let mut stride = vec![1usize; self.chunk.len()];
        for k in (0..self.chunk.len().saturating_sub(1)).rev() {
            stride[k] = stride[k + 1] * self.chunk[k + 1] as usize;
        }
        stride
    }

    /// Time steps per chunk (1 without a time dimension).
    pub(super) fn step_len(&self, layout: &VarLayout) -> u64 {
        layout.time_axis.and_then(|t| self.chunk.get(t)).map_or(1, |&n| n.max(1))
    }
}

/// Read `region` of a chunked variable from `file` and decode it into `dest`. Returns the
/// stored bytes read.
#[allow(clippy::too_many_arguments)]
pub fn read_chunked_into<T: Sample>(
    file: &File,
    ch: &Chunked,
    order: ByteOrder,
    layout: &VarLayout,
    region: &Region,
    buf: &mut ChunkBuffers,
    dest: &mut [T],
) -> Result<u64, ChunkError> {
    read_chunked_step_into(file, ch, order, layout, region, 0, buf, dest)
}

/// [`read_chunked_into`] of time step `step`: the chunks whose time extent covers it, each
/// inflated whole (chunks of many steps are better read by [`read_chunked_steps_into`] for
/// all the steps a job needs of them at once).
#[allow(clippy::too_many_arguments)]
pub fn read_chunked_step_into<T: Sample>(
    file: &File,
    ch: &Chunked,
    order: ByteOrder,
    layout: &VarLayout,
    region: &Region,
    step: usize,
    buf: &mut ChunkBuffers,
    dest: &mut [T],
) -> Result<u64, ChunkError> {
    let size = layout.storage.size();
    let (s, f) = (layout.lat_axis.min(layout.lon_axis), layout.lat_axis.max(layout.lon_axis));
    let (slow, fast_len) =
        if layout.lat_is_slow() { (region.rows.clone(), layout.nlon()) } else { (region.cols.clone(), layout.nlat()) };
    debug_assert_eq!(region.n_cells(), slow.len() * fast_len);
    let wanted = chunks_at_step(ch, layout, (s, f), &slow, step)?;
    let stride = ch.strides();
    // (the chunk index bounds this: see h5meta's chunks())
    let chunk_len = ch.chunk.iter().product::<u64>() as usize * size;
    let (cs, cf) = (ch.chunk[s] as usize, ch.chunk[f] as usize);
    // the step's place within its chunks
    let in_step = |c: &ChunkLoc| layout.time_axis.map_or(0, |t| (step - c.offset[t] as usize) * stride[t]);
    // latitude-slow files are assembled one row of chunks at a time; transposed ones whole
    let groups = if layout.lat_is_slow() { chunk_rows(&wanted, s) } else { vec![(0, wanted.len())] };
    // an int16 pool keeps a little-endian int16 file's values as stored: the chunks' lines are
    // unshuffled (or copied) straight into the pool's rows, with no band in between
    let into_dest = int16_in_place(layout, order, dest);
    let ChunkBuffers { stored, unfilter, band, scratch } = buf;
    let mut stored_total = 0u64;
    let mut done_lines = 0usize;
    for (gi, gj) in groups {
        let group = &wanted[gi..gj];
        let lines = if layout.lat_is_slow() {
            let lo = (group[0].offset[s] as usize).max(slow.start);
            lo..(group[0].offset[s] as usize).saturating_add(cs).min(slow.end)
        } else {
            slow.clone()
        };
        if lines.start != slow.start + done_lines {
            return Err(ChunkError::Fallback(format!("no chunk stored for line {}", slow.start + done_lines)));
        }
        let at = if layout.lat_is_slow() { done_lines * fast_len } else { 0 };
        let cells = lines.len() * fast_len;
        let band = band.get_or_insert_with(|| RawData::zeroed(layout.storage, 0));
        let bytes: &mut [u8] = if into_dest {
            let rows = T::as_int16_mut(&mut dest[at..at + cells]).expect("checked above");
            // SAFETY: i16 values are plain bytes (any pattern valid, u8 unaligned); the view
            // covers exactly the rows' bytes and is the only use of them while it lives.
            unsafe { std::slice::from_raw_parts_mut(rows.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(rows)) }
        } else {
            band.resize(layout.storage, cells);
            band.bytes_mut()
        };
        let mut covered = 0usize;
        for c in group {
            // contiguous lines are unshuffled one at a time straight into place
            let (mut data, mut shuffled) = read_chunk(file, ch, c, stored, unfilter, chunk_len, stride[f] == 1)?;
            if let Some(elem) = shuffled.filter(|&e| e != size) {
                // shuffled by another element size than the stored type's: undone whole
                super::filters::unshuffle(data, elem, scratch);
                (data, shuffled) = (&scratch[..], None);
            }
            stored_total += c.size;
            // the chunk's part of `lines`, into the band (or the rows)
            let (o_s, o_f) = (c.offset[s] as usize, c.offset[f] as usize);
            let n_f = cf.min(fast_len.saturating_sub(o_f));
            let first = lines.start.max(o_s);
            let last = lines.end.min(o_s.saturating_add(cs));
            let at_step = in_step(c);
            for line in first..last {
                let src = ((line - o_s) * stride[s] + at_step) * size;
                let dst = ((line - lines.start) * fast_len + o_f) * size;
                if shuffled.is_some() {
                    super::filters::unshuffle_range(data, size, src / size, n_f, &mut bytes[dst..dst + n_f * size]);
                } else if stride[f] == 1 {
                    bytes[dst..dst + n_f * size].copy_from_slice(&data[src..src + n_f * size]);
                } else {
                    for j in 0..n_f {
                        let at = src + j * stride[f] * size;
                        bytes[dst + j * size..dst + (j + 1) * size].copy_from_slice(&data[at..at + size]);
                    }
                }
                covered += n_f;
            }
        }
        if covered != cells {
            return Err(ChunkError::Fallback("a chunk the tile needs was never written (fill values)".into()));
        }
        if !into_dest {
            decode_lines(layout, order, region, &lines, band, &mut dest[at..at + cells]);
        }
        done_lines += lines.len();
    }
    if done_lines != slow.len() {
        return Err(ChunkError::Fallback(format!("no chunk stored for line {}", slow.start + done_lines)));
    }
    Ok(stored_total)
}

/// The chunks holding step `step` of the `slow` lines, sorted along (`s`, `f`); two at one
/// place is an index the direct reader does not trust.
fn chunks_at_step<'c>(
    ch: &'c Chunked,
    layout: &VarLayout,
    (s, f): (usize, usize),
    slow: &std::ops::Range<usize>,
    step: usize,
) -> Result<Vec<&'c ChunkLoc>, ChunkError> {
    let n_t = ch.step_len(layout);
    let covers = |o: u64| o <= step as u64 && (step as u64) < o.saturating_add(n_t);
    let mut wanted: Vec<&ChunkLoc> = ch.chunks.iter().filter(|c| ch.wanted(layout, c, s, slow, covers)).collect();
    wanted.sort_by_key(|c| (c.offset[s], c.offset[f]));
    if let Some(w) = wanted.windows(2).find(|w| (w[0].offset[s], w[0].offset[f]) == (w[1].offset[s], w[1].offset[f])) {
        return Err(ChunkError::Fallback(format!("two chunks at {:?} in the index", w[0].offset)));
    }
    Ok(wanted)
}

/// Whether an int16 pool (`dest`) keeps a little-endian int16 file's values as stored, so the
/// chunks' lines go straight into its rows.
fn int16_in_place<T: Sample>(layout: &VarLayout, order: ByteOrder, dest: &mut [T]) -> bool {
    layout.lat_is_slow()
        && matches!(layout.storage, crate::input::storage::Storage::I16)
        && order.is_native()
        && layout.packing.quantize.is_none()
        && T::as_int16_mut(&mut dest[..0]).is_some()
}

/// The runs of `wanted` (sorted by their offset along dimension `s`) that share one offset
/// along `s`: one row of chunks each, as (first, end) indices.
fn chunk_rows(wanted: &[&ChunkLoc], s: usize) -> Vec<(usize, usize)> {
    let mut g = Vec::new();
    let mut i = 0;
    while i < wanted.len() {
        let j = i + wanted[i..].iter().take_while(|c| c.offset[s] == wanted[i].offset[s]).count();
        g.push((i, j));
        i = j;
    }
    g
}

/// Decode the `lines` (along the slow dimension) of `region` held in `band`, in the file's byte
/// order, into `dest`.
fn decode_lines<T: Sample>(
    layout: &VarLayout,
    order: ByteOrder,
    region: &Region,
    lines: &std::ops::Range<usize>,
    band: &mut RawData,
    dest: &mut [T],
) {
    match order {
        ByteOrder::Big => band.swap_from_big_endian(),
        ByteOrder::Little => band.swap_from_little_endian(),
    }
    let piece = if layout.lat_is_slow() {
        Region { rows: lines.clone(), cols: region.cols.clone() }
    } else {
        Region { rows: region.rows.clone(), cols: lines.clone() }
    };
    decode_region(layout, &piece, band, dest);
}

/// Read `region` at each of `steps` (all in this file) into `dests` (one row per step), with
/// every chunk the steps need inflated once: a chunk of many steps (CMIP6's (365, 60, 60),
/// ERA5's) is scattered into the rows of all the steps it holds. Memory: one chunk and one
/// chunk's decoded piece, whatever the number of steps. Returns the stored bytes read.
#[allow(clippy::too_many_arguments)]
pub fn read_chunked_steps_into<T: Sample>(
    file: &File,
    ch: &Chunked,
    order: ByteOrder,
    layout: &VarLayout,
    region: &Region,
    steps: &[usize],
    buf: &mut ChunkBuffers,
    dests: &mut [&mut [T]],
) -> Result<u64, ChunkError> {
    assert_eq!(steps.len(), dests.len(), "one row per step");
    let size = layout.storage.size();
    let (s, f) = (layout.lat_axis.min(layout.lon_axis), layout.lat_axis.max(layout.lon_axis));
    let slow = if layout.lat_is_slow() { region.rows.clone() } else { region.cols.clone() };
    let fast_len = if layout.lat_is_slow() { layout.nlon() } else { layout.nlat() };
    debug_assert_eq!(region.n_cells(), slow.len() * fast_len);
    let n_t = ch.step_len(layout);
    let in_chunk = |o: u64, k: usize| o <= k as u64 && (k as u64) < o.saturating_add(n_t);
    let wanted = ch.chunks.iter().filter(|c| ch.wanted(layout, c, s, &slow, |o| steps.iter().any(|&k| in_chunk(o, k))));
    let stride = ch.strides();
    let chunk_len = ch.chunk.iter().product::<u64>() as usize * size;
    let (cs, cf) = (ch.chunk[s] as usize, ch.chunk[f] as usize);
    let mut covered = vec![0usize; steps.len()];
    let mut decoded: Vec<T> = Vec::new();
    let mut stored_total = 0u64;
    for c in wanted {
        let (data, _) = read_chunk(file, ch, c, &mut buf.stored, &mut buf.unfilter, chunk_len, false)?;
        stored_total += c.size;
        let (o_s, o_f) = (c.offset[s] as usize, c.offset[f] as usize);
        let n_f = cf.min(fast_len.saturating_sub(o_f));
        let lines = slow.start.max(o_s)..slow.end.min(o_s.saturating_add(cs));
        // the chunk's piece of the region, in (lat, lon) terms
        let piece = if layout.lat_is_slow() {
            Region { rows: lines.clone(), cols: o_f..o_f + n_f }
        } else {
            Region { rows: o_f..o_f + n_f, cols: lines.clone() }
        };
        let o_t = layout.time_axis.map_or(0, |t| c.offset[t]);
        for (i, &k) in steps.iter().enumerate() {
            if !in_chunk(o_t, k) {
                continue;
            }
            let at_step = layout.time_axis.map_or(0, |t| (k - o_t as usize) * stride[t]);
            // the step's lines of the chunk, as stored ([slow][fast])
            let raw = buf.band.get_or_insert_with(|| RawData::zeroed(layout.storage, 0));
            raw.resize(layout.storage, lines.len() * n_f);
            let bytes = raw.bytes_mut();
            for (j, line) in lines.clone().enumerate() {
                let src = ((line - o_s) * stride[s] + at_step) * size;
                let dst = j * n_f * size;
                if stride[f] == 1 {
                    bytes[dst..dst + n_f * size].copy_from_slice(&data[src..src + n_f * size]);
                } else {
                    for e in 0..n_f {
                        let at = src + e * stride[f] * size;
                        bytes[dst + e * size..dst + (e + 1) * size].copy_from_slice(&data[at..at + size]);
                    }
                }
            }
            match order {
                ByteOrder::Big => raw.swap_from_big_endian(),
                ByteOrder::Little => raw.swap_from_little_endian(),
            }
            decoded.resize(piece.n_cells(), T::from_f64(0.0));
            decode_region(layout, &piece, raw, &mut decoded);
            // into the row, region-shaped and (lat, lon) ordered
            let (width, pw) = (region.cols.len(), piece.cols.len());
            let dest = &mut *dests[i];
            for (j, r) in piece.rows.clone().enumerate() {
                let at = (r - region.rows.start) * width + (piece.cols.start - region.cols.start);
                dest[at..at + pw].copy_from_slice(&decoded[j * pw..(j + 1) * pw]);
            }
            covered[i] += piece.n_cells();
        }
    }
    if covered.iter().any(|&n| n != region.n_cells()) {
        return Err(ChunkError::Fallback("a chunk the tile needs was never written (fill values)".into()));
    }
    Ok(stored_total)
}

/// Read chunk `c` of `ch` from `file` and undo its filters (an edge chunk the writer left
/// unfiltered as it is): its `chunk_len` bytes as stored uncompressed, or, with `leave_shuffle`,
/// still shuffled where the shuffle is the last filter to undo (with its element size).
pub(super) fn read_chunk<'b>(
    file: &File,
    ch: &Chunked,
    c: &ChunkLoc,
    stored: &'b mut Vec<u8>,
    unfilter: &'b mut Unfilter,
    chunk_len: usize,
    leave_shuffle: bool,
) -> Result<(&'b [u8], Option<usize>), ChunkError> {
    let partial = (0..ch.dims.len()).any(|k| c.offset[k].saturating_add(ch.chunk[k]) > ch.dims[k]);
    stored.resize(c.size as usize, 0);
    file.read_exact_at(stored, c.addr).map_err(|e| {
        ChunkError::Fallback(format!("reading the chunk at {:?} ({} bytes at byte {}): {e}", c.offset, c.size, c.addr))
    })?;
    let pipeline: &[Filter] = if partial && ch.unfiltered_edges { &[] } else { &ch.pipeline };
    unfilter
        .run_leaving_shuffle(pipeline, c.mask, stored, chunk_len, leave_shuffle)
        .map_err(|why| ChunkError::Corrupt(format!("the chunk at {:?}: {why}", c.offset)))
}
