//! The compressed write path: outputs with `--deflate` are created chunked, shuffled and
//! deflated by libnetcdf (the declared filters every reader applies), but their chunks are
//! encoded, shuffled and deflated here, on every write thread (byte planes that look random
//! go into deflate's stored blocks, planes of high entropy, and at level 1 all the others, into
//! blocks of runs and a Huffman code, the rest through libdeflate: see
//! [`super::encode::zlib_planes`]), and handed to
//! HDF5 already filtered with its direct chunk write (`H5Dwrite_chunk`), one call at a time
//! under the library lock: HDF5 only files the bytes and indexes the chunk, it never
//! compresses.
//!
//! A chunk is one day of a band of rows (see [`super::encode::chunk_shape`]). A tile that
//! covers a chunk entirely compresses it at once; a chunk split between tiles (a job in bands
//! of rows that do not fall on chunk edges) is kept encoded until its last rows arrive.
//!
//! Every file's storage is checked through HDF5 once, after creation, like the direct path's
//! offsets: chunked with the planned chunk shape and type, filters exactly deflate (after
//! shuffle where asked). A file that does not qualify goes through libnetcdf.

use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use super::chunk_files::Files;
pub use super::chunk_layout::{locate, locate_chunked, ChunkPlan};
pub use super::encode::Values;
use super::encode::{shuffle, zlib_planes, EncodeError, Encoding};
use crate::input::direct::with_hdf5_file;
use crate::input::Region;

/// Where a chunk goes: file `file`, day `t` of it, chunk band `(crow, ccol)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChunkKey {
    pub file: usize,
    pub t: usize,
    pub crow: usize,
    pub ccol: usize,
}

impl ChunkKey {
    /// The chunk's first element (day, row, column) in its variable.
    fn offset(&self, plan: ChunkPlan) -> [u64; 3] {
        [self.t as u64, (self.crow * plan.rows) as u64, (self.ccol * plan.cols) as u64]
    }
}

/// One day of one file to write: the region's values of target `t`.
pub struct Field<'a> {
    pub file: usize,
    pub t: usize,
    pub values: Values<'a>,
}

/// A chunk split between tiles, encoded so far.
#[derive(Debug)]
struct Pending {
    bytes: Vec<u8>,
    cells: usize,
}

/// Partly written chunks of a set of files, kept between calls.
#[derive(Debug, Default)]
pub struct Partial {
    pending: HashMap<ChunkKey, Pending>,
}

impl Partial {
    /// Chunks still waiting for rows (none once every tile is written).
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }
}

/// What failed while writing chunks.
#[derive(Debug)]
pub enum ChunkFailure {
    /// Encoding file `.0`'s values.
    Encode(usize, EncodeError),
    /// HDF5 refused file `.0`'s chunk; `.1`: what was attempted, `.2`: bytes not written
    /// (this chunk and the file's chunks not yet written in this call).
    Write(usize, String, u64),
}

/// The shape and encoding shared by every file of a write.
pub struct ChunkGeometry<'a> {
    pub nlat: usize,
    pub nlon: usize,
    pub region: &'a Region,
    pub plan: ChunkPlan,
    pub enc: Encoding,
}

/// A chunk to compress: from a field's values, or already encoded.
enum Source<'a> {
    Field(Values<'a>),
    Encoded(Vec<u8>),
}

/// The rows and columns of chunk `(crow, ccol)` inside the field.
fn chunk_extent(g: &ChunkGeometry<'_>, crow: usize, ccol: usize) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
    let r0 = crow * g.plan.rows;
    let c0 = ccol * g.plan.cols;
    (r0..(r0 + g.plan.rows).min(g.nlat), c0..(c0 + g.plan.cols).min(g.nlon))
}

/// A chunk's bytes filled with the fill value (edge chunks keep it past the field's end).
fn blank(g: &ChunkGeometry<'_>) -> Vec<u8> {
    let mut one = Vec::new();
    g.enc.fill_bytes(&mut one);
    one.repeat(g.plan.rows * g.plan.cols)
}

/// Where chunk `(crow, ccol)` starts in the region's values when it is full size (not cut by
/// the field's edge) and spans whole rows of the region that lie inside it: its values are then
/// one contiguous slice.
fn contiguous(g: &ChunkGeometry<'_>, crow: usize, ccol: usize) -> Option<usize> {
    let (rows, cols) = chunk_extent(g, crow, ccol);
    let (rr, rc) = (&g.region.rows, &g.region.cols);
    let full = rows.len() == g.plan.rows && cols.len() == g.plan.cols;
    let inside = rr.start <= rows.start && rows.end <= rr.end;
    (full && inside && cols == *rc).then(|| (rows.start - rr.start) * rc.len())
}

/// The stored bytes of chunk `key` from `source`, shuffled where the plan says, in one of the
/// two scratch buffers: a whole chunk of whole region rows is encoded straight into its
/// shuffled planes, anything else encoded into place then shuffled.
fn chunk_bytes<'b>(
    g: &ChunkGeometry<'_>,
    key: &ChunkKey,
    source: &'b Source<'_>,
    encoded: &'b mut Vec<u8>,
    shuffled: &'b mut Vec<u8>,
) -> Result<&'b [u8], EncodeError> {
    let size = g.enc.ty.size();
    let cells = g.plan.rows * g.plan.cols;
    let bytes: &[u8] = match source {
        Source::Encoded(b) => b,
        Source::Field(values) => match (contiguous(g, key.crow, key.ccol), values) {
            (Some(at), Values::F64(values)) if g.plan.shuffle => {
                shuffled.clear();
                shuffled.resize(cells * size, 0);
                g.enc.encode_shuffled(&values[at..at + cells], shuffled)?;
                return Ok(shuffled);
            }
            _ => {
                encoded.clear();
                encoded.resize(cells * size, 0);
                let (rows, cols) = chunk_extent(g, key.crow, key.ccol);
                if rows.len() < g.plan.rows || cols.len() < g.plan.cols {
                    *encoded = blank(g);
                }
                encode_part(g, key.crow, key.ccol, *values, encoded)?;
                encoded
            }
        },
    };
    if !g.plan.shuffle {
        return Ok(bytes);
    }
    shuffle(bytes, size, shuffled);
    Ok(shuffled)
}

/// Encode the part of `values` (the region's cells of one day) that falls in chunk
/// `(crow, ccol)` into `bytes` (a whole chunk); the number of cells written.
fn encode_part(
    g: &ChunkGeometry<'_>,
    crow: usize,
    ccol: usize,
    values: Values<'_>,
    bytes: &mut [u8],
) -> Result<usize, EncodeError> {
    let (rows, cols) = chunk_extent(g, crow, ccol);
    let (rr, rc) = (&g.region.rows, &g.region.cols);
    let (lo_r, hi_r) = (rows.start.max(rr.start), rows.end.min(rr.end));
    let (lo_c, hi_c) = (cols.start.max(rc.start), cols.end.min(rc.end));
    if lo_r >= hi_r || lo_c >= hi_c {
        return Ok(0);
    }
    let size = g.enc.ty.size();
    let width = rc.len();
    for r in lo_r..hi_r {
        let (from, n) = ((r - rr.start) * width + (lo_c - rc.start), hi_c - lo_c);
        let at = ((r - rows.start) * g.plan.cols + (lo_c - cols.start)) * size;
        values.encode(&g.enc, from, &mut bytes[at..at + n * size])?;
    }
    Ok((hi_r - lo_r) * (hi_c - lo_c))
}

/// Write `fields` (each file's days of this region) as compressed chunks: chunks the region
/// covers are encoded and compressed on up to `threads` threads while this thread hands them
/// to HDF5; parts of chunks wait in `partial` until complete. `paths[f]` is file `f`'s
/// staged path, `vars[f]` its variable.
pub fn write_fields(
    fields: &[Field<'_>],
    g: &ChunkGeometry<'_>,
    paths: &[&Path],
    vars: &[&str],
    threads: usize,
    partial: &mut Partial,
) -> Result<(), ChunkFailure> {
    let tasks = chunk_tasks(fields, g, partial)?;
    if tasks.is_empty() {
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failed: Mutex<Option<ChunkFailure>> = Mutex::new(None);
    let n = threads.clamp(1, tasks.len());
    let (tx, rx) = mpsc::sync_channel::<(ChunkKey, Vec<u8>)>(2 * n);
    // where the call's time goes (debug log): encoding and compressing, summed over the
    // threads, against the HDF5 calls on this thread, which take the library lock one at a time
    let started = std::time::Instant::now();
    let (compress_ns, raw_bytes) = (AtomicU64::new(0), AtomicU64::new(0));
    let work = |tx: mpsc::SyncSender<(ChunkKey, Vec<u8>)>| {
        let mut compressor =
            libdeflater::Compressor::new(libdeflater::CompressionLvl::new(i32::from(g.plan.level)).unwrap_or_default());
        let (mut encoded, mut shuffled) = (Vec::new(), Vec::new());
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((key, source)) = tasks.get(i) else { return };
            let t = std::time::Instant::now();
            let raw = match chunk_bytes(g, key, source, &mut encoded, &mut shuffled) {
                Ok(raw) => raw,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    let mut failed = failed.lock().unwrap_or_else(|e| e.into_inner());
                    failed.get_or_insert(ChunkFailure::Encode(key.file, e));
                    return;
                }
            };
            let mut out = Vec::new();
            zlib_planes(&mut compressor, raw, g.enc.ty.size(), g.plan.shuffle, g.plan.level, &mut out);
            compress_ns.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            raw_bytes.fetch_add(raw.len() as u64, Ordering::Relaxed);
            if tx.send((*key, out)).is_err() {
                return;
            }
        }
    };
    let written = std::thread::scope(|s| {
        for k in 0..n {
            let tx = tx.clone();
            let work = &work;
            // a thread that cannot start leaves its share to the others
            let _ = std::thread::Builder::new().name(format!("deflate-{}", k + 1)).spawn_scoped(s, move || work(tx));
        }
        drop(tx);
        let mut files = Files::default();
        let mut result = Ok(());
        let (mut hdf5, mut stored, mut chunks) = (std::time::Duration::ZERO, 0u64, 0usize);
        for (key, bytes) in rx {
            if result.is_err() {
                continue;
            }
            let t = std::time::Instant::now();
            let wrote = files.write_at(paths[key.file], vars[key.file], &key.offset(g.plan), 0, &bytes);
            hdf5 += t.elapsed();
            stored += bytes.len() as u64;
            chunks += 1;
            if let Err(why) = wrote {
                stop.store(true, Ordering::Relaxed);
                let left: u64 = bytes.len() as u64;
                result = Err(ChunkFailure::Write(key.file, why, left));
            }
        }
        let t = std::time::Instant::now();
        let done = files.paths();
        let closed = files.close_all();
        if closed.is_ok() && result.is_ok() {
            start_writeback(done);
        }
        tracing::debug!(
            "compressed write: {chunks} chunks of {} files, {:.1} MB -> {:.1} MB; encode+compress {:.3} s summed over {n} threads, HDF5 open+write {:.3} s and close {:.3} s on the writer thread, call {:.3} s",
            paths.len(),
            raw_bytes.load(Ordering::Relaxed) as f64 / 1e6,
            stored as f64 / 1e6,
            compress_ns.load(Ordering::Relaxed) as f64 / 1e9,
            hdf5.as_secs_f64(),
            t.elapsed().as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
        result.and(closed.map_err(|(file, why)| ChunkFailure::Write(file_of(paths, &file), why, 0)))
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    written
}

/// The chunks of `fields` ready to compress: those the region covers whole (encoded from the
/// field by the workers), and those whose last part this region brings (encoded so far in
/// `partial`, where the parts of the others wait).
fn chunk_tasks<'a>(
    fields: &[Field<'a>],
    g: &ChunkGeometry<'_>,
    partial: &mut Partial,
) -> Result<Vec<(ChunkKey, Source<'a>)>, ChunkFailure> {
    let (nr, nc) = g.plan.counts(g.nlat, g.nlon);
    let mut tasks: Vec<(ChunkKey, Source<'a>)> = Vec::new();
    for field in fields {
        for crow in 0..nr {
            for ccol in 0..nc {
                let (rows, cols) = chunk_extent(g, crow, ccol);
                let (rr, rc) = (&g.region.rows, &g.region.cols);
                let overlaps = rows.start < rr.end && rr.start < rows.end && cols.start < rc.end && rc.start < cols.end;
                if !overlaps {
                    continue;
                }
                let key = ChunkKey { file: field.file, t: field.t, crow, ccol };
                let covered =
                    rr.start <= rows.start && rows.end <= rr.end && rc.start <= cols.start && cols.end <= rc.end;
                if covered && !partial.pending.contains_key(&key) {
                    tasks.push((key, Source::Field(field.values)));
                    continue;
                }
                let p = partial.pending.entry(key).or_insert_with(|| Pending { bytes: blank(g), cells: 0 });
                p.cells += encode_part(g, crow, ccol, field.values, &mut p.bytes)
                    .map_err(|e| ChunkFailure::Encode(field.file, e))?;
                if p.cells == rows.len() * cols.len() {
                    let done = partial.pending.remove(&key).expect("just filled");
                    tasks.push((key, Source::Encoded(done.bytes)));
                }
            }
        }
    }
    Ok(tasks)
}

/// Ask the kernel to start writing `done` (files whose chunks are all written) to disk now, on
/// a thread of its own, so that the disk works while later chunks are compressed and the write
/// stage's final `fsync` finds little left to write. Only a hint: durability still comes from
/// that `fsync`, and a file that cannot be opened (a failed job's, removed) is skipped.
fn start_writeback(done: Vec<std::path::PathBuf>) {
    #[cfg(target_os = "linux")]
    let _ = std::thread::Builder::new().name("writeback".into()).spawn(move || {
        use std::os::fd::AsRawFd;
        for p in done {
            if let Ok(f) = std::fs::File::open(&p) {
                // SAFETY: a plain system call on an open descriptor, whole file (0, 0).
                unsafe { libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
            }
        }
    });
    #[cfg(not(target_os = "linux"))]
    drop(done);
}

fn file_of(paths: &[&Path], p: &Path) -> usize {
    paths.iter().position(|q| *q == p).unwrap_or(0)
}

/// Copy every stored chunk of `var` in `src` into `var` of `dst` as stored (compressed), `t0`
/// days further along time: how rank 0 joins ranks' compressed slices of a stacked output
/// without inflating and deflating them again. `dst`'s variable must have the same chunk shape
/// and filters; returns the bytes copied.
pub fn copy_chunks(src: &Path, dst: &Path, var: &str, t0: usize) -> Result<u64, String> {
    use hdf5_metno_sys::{h5d, h5p};
    let cvar = CString::new(format!("/{var}")).map_err(|e| e.to_string())?;
    let mut out = Files::default();
    let mut copied = 0u64;
    with_hdf5_file(src, |f| {
        // SAFETY: handles opened and closed here, on the open file, under the library lock
        // (`with_hdf5_file` holds it; `Files::write` takes it again, reentrantly).
        unsafe {
            let d = h5d::H5Dopen2(f, cvar.as_ptr(), h5p::H5P_DEFAULT);
            if d < 0 {
                return Err(format!("no HDF5 dataset /{var} in {}", src.display()));
            }
            let mut n = 0u64;
            let space = h5d::H5Dget_space(d);
            h5d::H5Dget_num_chunks(d, space, &mut n);
            let mut buf = Vec::new();
            let mut result = Ok(());
            for i in 0..n {
                let (mut offset, mut mask, mut addr, mut size) = ([0u64; 3], 0u32, 0u64, 0u64);
                if h5d::H5Dget_chunk_info(d, space, i, offset.as_mut_ptr(), &mut mask, &mut addr, &mut size) < 0 {
                    result = Err(format!("{}: HDF5 cannot describe chunk {i} of /{var}", src.display()));
                    break;
                }
                buf.resize(size as usize, 0);
                let mut filters = 0u32;
                if h5d::H5Dread_chunk1(d, h5p::H5P_DEFAULT, offset.as_ptr(), &mut filters, buf.as_mut_ptr().cast()) < 0
                {
                    result = Err(format!("{}: HDF5 cannot read chunk {i} of /{var}", src.display()));
                    break;
                }
                // the chunk's own row and column offsets: bands of one row and column make
                // `ChunkKey::offset` give them as they are
                let key = ChunkKey {
                    file: 0,
                    t: offset[0] as usize + t0,
                    crow: offset[1] as usize,
                    ccol: offset[2] as usize,
                };
                let plan = ChunkPlan { rows: 1, cols: 1, level: 0, shuffle: false };
                if let Err(why) = out.write_at(dst, var, &key.offset(plan), filters, &buf) {
                    result = Err(format!("{}: {why}", dst.display()));
                    break;
                }
                copied += size;
            }
            hdf5_metno_sys::h5s::H5Sclose(space);
            h5d::H5Dclose(d);
            result
        }
    })?;
    out.close_all().map_err(|(p, why)| format!("{}: {why}", p.display()))?;
    Ok(copied)
}

/// Whether `var` of `path` is stored with the shuffle filter (for a copy to declare the same).
pub fn shuffled(path: &Path, var: &str) -> Result<bool, String> {
    use hdf5_metno_sys::{h5d, h5p, h5z};
    let cvar = CString::new(format!("/{var}")).map_err(|e| e.to_string())?;
    with_hdf5_file(path, |f| {
        // SAFETY: handles opened and closed here, on the open file, under the library lock.
        unsafe {
            let d = h5d::H5Dopen2(f, cvar.as_ptr(), h5p::H5P_DEFAULT);
            if d < 0 {
                return Err(format!("no HDF5 dataset /{var}"));
            }
            let plist = h5d::H5Dget_create_plist(d);
            let (mut flags, mut nelmts, mut cd, mut name, mut fc) = (0u32, 0usize, [0u32; 1], [0i8; 8], 0u32);
            let found = h5p::H5Pget_filter_by_id2(
                plist,
                h5z::H5Z_FILTER_SHUFFLE,
                &mut flags,
                &mut nelmts,
                cd.as_mut_ptr(),
                name.len(),
                name.as_mut_ptr().cast(),
                &mut fc,
            ) >= 0;
            h5p::H5Pclose(plist);
            h5d::H5Dclose(d);
            Ok(found)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nc::encode::OutputType;

    fn geometry(region: &Region, rows: usize, cols: usize) -> ChunkGeometry<'_> {
        ChunkGeometry {
            nlat: 5,
            nlon: 4,
            region,
            plan: ChunkPlan { rows, cols, level: 1, shuffle: true },
            enc: Encoding::f64(-1.0),
        }
    }

    /// Cells of a region land at their place in the chunk; edge chunks keep the fill.
    #[test]
    fn parts_land_in_their_chunk() {
        let region = Region { rows: 2..5, cols: 0..4 };
        let g = geometry(&region, 2, 4);
        let values: Vec<f64> = (0..12).map(f64::from).collect();
        // chunk band 1 holds rows 2-3: all of it from the region's first two rows
        let mut bytes = blank(&g);
        assert_eq!(encode_part(&g, 1, 0, Values::F64(&values), &mut bytes).unwrap(), 8);
        let got: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        // band 2 holds row 4 and one row past the field's end
        let mut bytes = blank(&g);
        assert_eq!(encode_part(&g, 2, 0, Values::F64(&values), &mut bytes).unwrap(), 4);
        let got: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got, [8.0, 9.0, 10.0, 11.0, -1.0, -1.0, -1.0, -1.0]);
        // band 0: no overlap
        assert_eq!(encode_part(&g, 0, 0, Values::F64(&values), &mut blank(&g)).unwrap(), 0);
        // float32 values (more than the encoder's buffer) stored as float32: the same bits
        let region = Region { rows: 0..1, cols: 0..1500 };
        let g = ChunkGeometry {
            nlat: 1,
            nlon: 1500,
            region: &region,
            plan: ChunkPlan { rows: 1, cols: 1500, level: 1, shuffle: false },
            enc: Encoding { ty: OutputType::F32, ..Encoding::f64(f64::NAN) },
        };
        let values: Vec<f32> = (0..1500).map(|i| if i % 7 == 3 { f32::NAN } else { i as f32 * 0.37 - 1e3 }).collect();
        let mut bytes = blank(&g);
        assert_eq!(encode_part(&g, 0, 0, Values::F32(&values), &mut bytes).unwrap(), 1500);
        let got: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(
            got,
            values.iter().map(|v| if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() }).collect::<Vec<_>>()
        );
    }
}
