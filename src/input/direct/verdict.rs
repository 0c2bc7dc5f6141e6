//! The metadata parser's and the chunk decoder's verdict on a chunked variable that a read path
//! through libnetcdf is about to read (`--read-path library`, forked readers, and the files the
//! direct path leaves to them): its chunk index checked (h5meta's `chunk_keys`), and the chunks
//! each step read needs decoded here once, before libnetcdf reads them.
//!
//! Why it exists: libhdf5 trusts what it finds. A chunk key whose filter mask skips the
//! compression, or a deflate stream that ends before the chunk does, gives it fewer bytes than
//! a chunk holds, and it returns the rest of its buffer as values: uninitialised memory, other
//! on every run (issue 40). A chunk keyed outside the dataset is never looked up, and its place
//! reads as fill values. The direct path refuses such files; the library paths refuse them
//! too, with the same words, through this verdict. Storage the parser does not read (another
//! filter, a structure it does not know, headers it finds malformed) is the library's to judge,
//! and so is every file while `SSTCLIM_H5META=off`.

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::chunked::{read_chunk, ChunkError, Chunked};
use super::filters::{unsupported_filter, Unfilter};
use super::Format;
use crate::input::h5meta::{Hdf5Meta, Layout, MetaError};
use crate::input::layout::VarLayout;
use crate::input::read::Region;

/// What is wrong with a file whose chunk index the parser proves damaged (`why`), in the words
/// every read path uses.
pub(super) fn damaged_index(why: &str) -> String {
    format!("its chunk index is damaged: {why}")
}

/// A file as found on disk: a verdict holds for it while it is unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileId {
    path: PathBuf,
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl FileId {
    fn of(path: &Path) -> Option<FileId> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileId { path: path.into(), dev: m.dev(), ino: m.ino(), len: m.len(), mtime: (m.mtime(), m.mtime_nsec()) })
    }
}

/// The verdict on one file's variable: its chunk index passed (it is made only then), and the
/// chunks decoded so far.
pub struct ChunkVerdict {
    id: Option<FileId>,
    /// The file and its variable's chunks, where the parser read them and the decoder here
    /// undoes their filters (None: nothing to decode).
    chunks: Option<(File, Chunked)>,
    /// Bytes of one chunk before filtering.
    chunk_len: usize,
    /// Addresses of the chunks decoded.
    decoded: HashSet<u64>,
    stored: Vec<u8>,
    unfilter: Unfilter,
}

impl ChunkVerdict {
    /// The parser's verdict on the chunk index of variable `var` in `path`: `Err` with what is
    /// wrong where it proves the index damaged.
    pub fn new(path: &Path, var: &str) -> Result<ChunkVerdict, String> {
        let mut verdict = ChunkVerdict {
            id: FileId::of(path),
            chunks: None,
            chunk_len: 0,
            decoded: HashSet::new(),
            stored: Vec::new(),
            unfilter: Unfilter::default(),
        };
        if !super::parser_enabled() {
            return Ok(verdict);
        }
        let Ok(file) = File::open(path) else { return Ok(verdict) };
        let mut head = [0u8; 8];
        if file.read_exact_at(&mut head, 0).is_err() || Format::of(&head) != Some(Format::Hdf5) {
            return Ok(verdict);
        }
        let Ok(meta) = Hdf5Meta::open(&file) else { return Ok(verdict) };
        let Ok(ds) = meta.dataset(var) else { return Ok(verdict) };
        let Layout::Chunked(ch) = &ds.layout else { return Ok(verdict) };
        let chunks = match meta.chunks(&ds) {
            Ok(chunks) => chunks,
            Err(MetaError::Malformed(why)) => return Err(damaged_index(&why)),
            Err(_) => return Ok(verdict),
        };
        if unsupported_filter(&ds.pipeline).is_none() {
            // (chunks() bounds a chunk's bytes)
            verdict.chunk_len = ch.dims.iter().product::<u64>() as usize * ds.dtype.size;
            let chunked = Chunked {
                chunk: ch.dims.clone(),
                dims: ds.dims.clone(),
                pipeline: ds.pipeline.clone(),
                unfiltered_edges: ch.unfiltered_edges,
                chunks,
            };
            drop(meta);
            verdict.chunks = Some((file, chunked));
        }
        Ok(verdict)
    }

    /// Whether this is the verdict on the file now at `path` (the same file, unchanged).
    pub fn is_of(&self, path: &Path) -> bool {
        self.id.is_some() && self.id == FileId::of(path)
    }

    /// Decode the chunks that hold `region` of step `step` (`layout`: the file's own) and were
    /// not decoded yet: `Err` naming the first that does not decode (its filters fail, or it
    /// gives another number of bytes than a chunk holds). A chunk that cannot be read is left
    /// to libnetcdf, which reports it.
    pub fn check_step(&mut self, layout: &VarLayout, region: &Region, step: usize) -> Result<(), String> {
        let Some((file, ch)) = &self.chunks else { return Ok(()) };
        if layout.dims.len() != ch.dims.len() {
            return Ok(()); // not the variable the parser read: libnetcdf's to judge
        }
        let s = layout.lat_axis.min(layout.lon_axis);
        let slow = if layout.lat_is_slow() { region.rows.clone() } else { region.cols.clone() };
        let n_t = ch.step_len(layout);
        let covers = |o: u64| o <= step as u64 && (step as u64) < o.saturating_add(n_t);
        for c in ch.chunks.iter().filter(|c| ch.wanted(layout, c, s, &slow, covers)) {
            if self.decoded.contains(&c.addr) {
                continue;
            }
            match read_chunk(file, ch, c, &mut self.stored, &mut self.unfilter, self.chunk_len, true) {
                Err(ChunkError::Corrupt(why)) => return Err(why),
                Err(ChunkError::Fallback(_)) => {}
                Ok(_) => {
                    self.decoded.insert(c.addr);
                }
            }
        }
        Ok(())
    }
}
