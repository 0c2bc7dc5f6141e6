//! What a chunk index says of each chunk ([`ChunkLoc`]), and the checks every chunk an index
//! lists passes before anyone reads it: its offsets on the chunk grid and inside the dataset,
//! its stored bytes inside the file and apart from every other chunk's, its filter mask naming
//! only filters of the pipeline, its stored size what the filters it went through leave where
//! they fix it, and no two chunks at one place.
//!
//! Why it exists: a chunk index's keys are numbers read from the file, and both readers trust
//! them. libhdf5 reads a damaged key without noticing: a filter mask that skips the deflate
//! filter hands it the compressed bytes as the chunk, and the rest of the chunk is whatever
//! its buffer held (means from -305 to +346 °C in issue 40, different on every run); a chunk
//! outside the dataset is never looked up, its place reads as fill values. The direct path
//! indexes its buffers with these offsets. A key that fails here proves the index damaged
//! ([`super::MetaError::Malformed`]): an error naming the file on every read path, never a
//! reason to ask the library.

use super::message::{Filter, FILTER_FLETCHER32, FILTER_SHUFFLE};
use super::{bad, Result};

/// One allocated chunk, as its key in the chunk index says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkLoc {
    /// The chunk's first element, one coordinate per dimension of the dataset.
    pub offset: Vec<u64>,
    /// Byte address of its stored bytes.
    pub addr: u64,
    /// Stored (filtered) bytes.
    pub size: u64,
    /// Bit i set: filter i of the pipeline was not applied to this chunk.
    pub mask: u32,
}

/// What a dataset's chunks must agree with.
pub(super) struct Shape<'a> {
    /// The dataset's dimension lengths.
    pub(super) dims: &'a [u64],
    /// Chunk lengths, one per dimension.
    pub(super) chunk: &'a [u64],
    pub(super) pipeline: &'a [Filter],
    /// Edge chunks the dataset only partly covers are stored unfiltered (layout version 4).
    pub(super) unfiltered_edges: bool,
    /// Bytes of one chunk as stored before filtering.
    pub(super) unfiltered: u64,
    /// The file's length.
    pub(super) file_len: u64,
}

/// Check every chunk of `chunks` against `shape`.
pub(super) fn check_chunks(chunks: &[ChunkLoc], shape: &Shape<'_>) -> Result<()> {
    for c in chunks {
        check_key(c, shape).map_err(|why| bad(format!("the chunk at {:?} {why}", c.offset)))?;
    }
    let mut by_offset: Vec<&ChunkLoc> = chunks.iter().collect();
    by_offset.sort_unstable_by(|a, b| a.offset.cmp(&b.offset));
    if let Some(w) = by_offset.windows(2).find(|w| w[0].offset == w[1].offset) {
        return Err(bad(format!("two chunks at {:?} in the chunk index", w[0].offset)));
    }
    let mut by_addr = by_offset;
    by_addr.sort_unstable_by_key(|c| c.addr);
    // (each end is inside the file: checked above)
    if let Some(w) = by_addr.windows(2).find(|w| w[0].addr + w[0].size > w[1].addr) {
        return Err(bad(format!(
            "the chunks at {:?} ({} bytes at byte {}) and {:?} (at byte {}) share bytes of the file",
            w[0].offset, w[0].size, w[0].addr, w[1].offset, w[1].addr
        )));
    }
    Ok(())
}

/// What is wrong with one chunk's key, if anything (the caller names the chunk).
fn check_key(c: &ChunkLoc, shape: &Shape<'_>) -> std::result::Result<(), String> {
    let Shape { dims, chunk, pipeline, .. } = *shape;
    if c.offset.len() != dims.len() {
        return Err(format!("has {} offsets, the dataset {} dimensions", c.offset.len(), dims.len()));
    }
    if c.offset.iter().zip(chunk).any(|(o, n)| o % n != 0) {
        return Err(format!("is not on the chunk grid {chunk:?}"));
    }
    if c.offset.iter().zip(dims).any(|(o, d)| o >= d) {
        return Err(format!("lies outside the dataset's dimensions {dims:?}"));
    }
    if !c.addr.checked_add(c.size).is_some_and(|end| end <= shape.file_len) {
        return Err(format!(
            "({} bytes at byte {}) passes the end of the file ({} bytes): truncated or damaged",
            c.size, c.addr, shape.file_len
        ));
    }
    if c.size == 0 {
        return Err("holds no bytes".into());
    }
    // an edge chunk stored unfiltered went through no filter, whatever its mask says
    let edge = (0..dims.len()).any(|k| c.offset[k].saturating_add(chunk[k]) > dims[k]);
    let applied: Vec<&Filter> = if edge && shape.unfiltered_edges {
        Vec::new()
    } else {
        check_mask(c.mask, pipeline)?;
        pipeline.iter().enumerate().filter(|&(i, _)| !skipped(c.mask, i)).map(|(_, f)| f).collect()
    };
    // shuffle keeps the size and fletcher32 adds its sum: through those only, the size is known
    if applied.iter().all(|f| [FILTER_SHUFFLE, FILTER_FLETCHER32].contains(&f.id)) {
        let sums = applied.iter().filter(|f| f.id == FILTER_FLETCHER32).count() as u64;
        let want = shape.unfiltered + 4 * sums;
        if c.size != want {
            return Err(format!("stores {} bytes, where its filters leave {want}", c.size));
        }
    }
    Ok(())
}

/// A filter mask's bits (bit i: filter i of the pipeline was skipped for this chunk) must name
/// filters of the pipeline. (Which filters a chunk went through is checked by its size, here
/// where the filters fix it, else by decoding it.)
fn check_mask(mask: u32, pipeline: &[Filter]) -> std::result::Result<(), String> {
    let known = if pipeline.len() >= 32 { u32::MAX } else { (1u32 << pipeline.len()) - 1 };
    if mask & !known != 0 {
        return Err(format!(
            "has filter mask {mask:#x}, which names filters the pipeline of {} does not have",
            pipeline.len()
        ));
    }
    Ok(())
}

/// Whether `mask` says filter `i` was skipped (a mask has bits for the first 32 only).
fn skipped(mask: u32, i: usize) -> bool {
    i < 32 && mask & (1 << i) != 0
}

#[cfg(test)]
mod tests {
    use super::super::message::FILTER_DEFLATE;
    use super::*;

    fn filter(id: u16, optional: bool) -> Filter {
        Filter { id, optional, params: Vec::new() }
    }

    fn chunk(offset: &[u64], addr: u64, size: u64, mask: u32) -> ChunkLoc {
        ChunkLoc { offset: offset.to_vec(), addr, size, mask }
    }

    fn verdict(chunks: &[ChunkLoc], pipeline: &[Filter]) -> std::result::Result<(), String> {
        // a 10 x 10 dataset of 4-byte values in chunks of 4 x 6 (96 bytes), in a 1000-byte file
        let shape = Shape {
            dims: &[10, 10],
            chunk: &[4, 6],
            pipeline,
            unfiltered_edges: false,
            unfiltered: 96,
            file_len: 1000,
        };
        check_chunks(chunks, &shape).map_err(|e| e.to_string())
    }

    #[test]
    fn good_keys_pass() {
        let plain = [chunk(&[0, 0], 100, 96, 0), chunk(&[0, 6], 196, 96, 0), chunk(&[8, 6], 292, 96, 0)];
        assert_eq!(verdict(&plain, &[]), Ok(()));
        let deflated = [chunk(&[0, 0], 100, 30, 0), chunk(&[4, 0], 130, 96, 0b10)];
        let shuffle_deflate = [filter(FILTER_SHUFFLE, true), filter(FILTER_DEFLATE, true)];
        assert_eq!(verdict(&deflated, &shuffle_deflate), Ok(()), "deflate skipped: stored as it was");
        let summed = [chunk(&[0, 0], 100, 100, 0)];
        assert_eq!(verdict(&summed, &[filter(FILTER_FLETCHER32, false)]), Ok(()));
    }

    #[test]
    fn every_damaged_key_is_named() {
        let deflate = [filter(FILTER_FLETCHER32, false), filter(FILTER_DEFLATE, true)];
        let cases: [(&[ChunkLoc], &[Filter], &str); 11] = [
            (&[chunk(&[0, 7_999_998], 100, 96, 0)], &[], "the chunk at [0, 7999998] lies outside"),
            (&[chunk(&[0, 12], 100, 96, 0)], &[], "lies outside the dataset's dimensions [10, 10]"),
            (&[chunk(&[1, 0], 100, 96, 0)], &[], "is not on the chunk grid [4, 6]"),
            (&[chunk(&[0, 0], 950, 96, 0)], &[], "passes the end of the file (1000 bytes)"),
            (&[chunk(&[0, 0], u64::MAX, 96, 0)], &[], "passes the end of the file"),
            (&[chunk(&[0, 0], 100, 95, 0)], &[], "stores 95 bytes, where its filters leave 96"),
            (&[chunk(&[0, 0], 100, 50, u32::MAX)], &deflate, "filter mask 0xffffffff, which names filters"),
            (&[chunk(&[0, 0], 100, 50, 1 << 2)], &deflate, "filter mask 0x4, which names filters"),
            // fletcher32 skipped, so the sum is not stored: a whole chunk's bytes
            (&[chunk(&[0, 0], 100, 100, 1)], &deflate[..1], "stores 100 bytes, where its filters leave 96"),
            (&[chunk(&[0, 0], 100, 50, 0), chunk(&[0, 0], 150, 50, 0)], &deflate, "two chunks at [0, 0]"),
            (&[chunk(&[0, 0], 100, 50, 0), chunk(&[0, 6], 149, 50, 0)], &deflate, "share bytes of the file"),
        ];
        for (chunks, pipeline, needle) in cases {
            let got = verdict(chunks, pipeline).unwrap_err();
            assert!(got.contains(needle), "{chunks:?}: {got}");
        }
        // deflate skipped, but the stored bytes are not a whole chunk's
        let skipped = [chunk(&[0, 0], 100, 50, 0b10)];
        let got = verdict(&skipped, &[filter(FILTER_SHUFFLE, true), filter(FILTER_DEFLATE, true)]).unwrap_err();
        assert!(got.contains("stores 50 bytes, where its filters leave 96"), "{got}");
    }
}
