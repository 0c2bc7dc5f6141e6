//! The direct write path, the twin of the direct read path ([`crate::input::direct`]): an
//! uncompressed output's statistic is stored contiguous, allocated at creation and never
//! filled (see `create_file`), so its bytes are one run at a fixed offset of the file, and
//! threads write results into it with `pwrite`, no libnetcdf/libhdf5 in the loop (the library
//! is not thread-safe: through it one thread writes every file in turn).
//!
//! Every file's offset is queried through HDF5 itself, never assumed: `H5Dget_offset`, with
//! the storage checked to be contiguous and unfiltered, float64 little endian, of the planned
//! shape, allocated, and inside the file. The query holds the library lock, one file at a
//! time, and runs once, after the files are created. A file that does not qualify is written
//! through libnetcdf instead.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::encode::{EncodeError, Encoding, OutputType};
use crate::input::direct::{locate_as, Stored};
use crate::input::format::NotDirect;
use crate::input::Region;

/// Bytes encoded and written per `pwrite` at most (whole rows; a 1440x721 float64 field is
/// one write).
const PIECE_BYTES: usize = 8 << 20;

/// Byte offset of `var`'s values in the NetCDF-4 file `path`, after checking that HDF5 stores
/// them as `shape` little-endian values of `ty`, contiguous, unfiltered and allocated, inside
/// the file; or why not.
pub fn locate(path: &Path, var: &str, shape: [usize; 3], ty: OutputType) -> Result<u64, NotDirect> {
    let value = match ty {
        OutputType::F64 | OutputType::F32 => Stored::Float(ty.size()),
        OutputType::I16 => Stored::Int(ty.size()),
    };
    locate_as(path, var, &shape, value)
}

/// One field to write: target `t` (along the file's time dimension) of the file at `tmp`,
/// whose statistic starts at byte `offset`; `values` are the region's cells, row-major.
pub struct Piece<'a> {
    pub tmp: &'a Path,
    pub offset: u64,
    pub t: usize,
    pub values: &'a [f64],
}

/// The shape of every field and the region written.
#[derive(Clone, Copy)]
pub struct Geometry<'a> {
    pub nlat: usize,
    pub nlon: usize,
    pub region: &'a Region,
    /// How values are stored (NaN as the fill value).
    pub enc: Encoding,
}

/// Why a piece was not written.
#[derive(Debug)]
pub enum PieceError {
    /// A value cannot be stored (nothing of the piece's run was written).
    Encode(EncodeError),
    /// The system refused a write; `missing`: the piece's bytes not written.
    Io { cause: io::Error, missing: u64 },
}

/// Write one piece: one `pwrite` per run of whole rows (up to [`PIECE_BYTES`]) when the region
/// spans every longitude, else one per row.
fn write_piece(p: &Piece<'_>, g: &Geometry<'_>, buf: &mut Vec<u8>) -> Result<(), PieceError> {
    let size = g.enc.ty.size();
    let (rows, cols) = (&g.region.rows, &g.region.cols);
    let total = (p.values.len() * size) as u64;
    let file = OpenOptions::new().write(true).open(p.tmp).map_err(|cause| PieceError::Io { cause, missing: total })?;
    debug_assert_eq!(p.values.len(), rows.len() * cols.len());
    let field = p.offset + (p.t * g.nlat * g.nlon * size) as u64;
    let at = |row: usize, col: usize| field + ((row * g.nlon + col) * size) as u64;
    let width = cols.len();
    let rows_per_write = if width == g.nlon { (PIECE_BYTES / (width * size).max(1)).max(1) } else { 1 };
    let mut done = 0;
    while done < rows.len() {
        let n = rows_per_write.min(rows.len() - done);
        let values = &p.values[done * width..(done + n) * width];
        buf.resize(values.len() * size, 0);
        g.enc.encode_into(values, buf).map_err(PieceError::Encode)?;
        if let Err(cause) = write_all_at(&file, buf, at(rows.start + done, cols.start)) {
            let (cause, written) = cause;
            let missing = total - (done * width * size) as u64 - written as u64;
            return Err(PieceError::Io { cause, missing });
        }
        done += n;
    }
    if crate::util::knobs::early_writeback() && !rows.is_empty() {
        let end = at(rows.end - 1, cols.start) + (width * size) as u64;
        start_writeback(&file, at(rows.start, cols.start), end);
    }
    Ok(())
}

/// Start writing back bytes `from..to` of `file` (dirty pages just written) without waiting:
/// the disk works while the job computes and reads, and the final `fsync` that makes the
/// outputs durable only waits for what is left instead of for every byte of the job
/// (bench-results/runs/2026-12-02-h200-read-s37: that fsync was 0.8 s of a 2.0 s job). Advisory:
/// an error here shows again, and is reported, at that `fsync`.
fn start_writeback(file: &std::fs::File, from: u64, to: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let (Ok(off), Ok(len)) = (i64::try_from(from), i64::try_from(to.saturating_sub(from))) else { return };
        // SAFETY: sync_file_range only names a range of an open descriptor (kept open by
        // `file` for the call); no memory of ours is passed.
        unsafe { libc::sync_file_range(file.as_raw_fd(), off, len, libc::SYNC_FILE_RANGE_WRITE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, from, to);
}

/// `write_all_at` that says how many bytes went out before an error.
fn write_all_at(file: &std::fs::File, mut buf: &[u8], mut offset: u64) -> Result<(), (io::Error, usize)> {
    let mut written = 0;
    while !buf.is_empty() {
        match file.write_at(buf, offset) {
            Ok(0) => return Err((io::Error::from(io::ErrorKind::WriteZero), written)),
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
                written += n;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((e, written)),
        }
    }
    Ok(())
}

/// Write `pieces` from up to `threads` threads (the calling thread is one of them; it first
/// runs `before`, the files that go through the library). `buffers` are kept between calls,
/// one per thread. The first error in piece order is returned with its piece's index; after an
/// error no further pieces start.
pub fn write_pieces<E>(
    pieces: &[Piece<'_>],
    g: &Geometry<'_>,
    threads: usize,
    buffers: &mut Vec<Vec<u8>>,
    before: impl FnOnce() -> Result<(), E>,
) -> Result<(), WriteFailure<E>> {
    let n = threads.clamp(1, pieces.len().max(1));
    if buffers.len() < n {
        buffers.resize_with(n, Vec::new);
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let failed: Mutex<Option<(usize, PieceError)>> = Mutex::new(None);
    let work = |buf: &mut Vec<u8>| {
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = pieces.get(i) else { return };
            if let Err(e) = write_piece(p, g, buf) {
                stop.store(true, Ordering::Relaxed);
                let mut slot = failed.lock().unwrap_or_else(|e| e.into_inner());
                if slot.as_ref().map_or(true, |(j, _)| i < *j) {
                    *slot = Some((i, e));
                }
            }
        }
    };
    let (mine, others) = buffers[..n].split_first_mut().expect("at least one buffer");
    let library = std::thread::scope(|s| {
        for (k, buf) in others.iter_mut().enumerate() {
            let work = &work;
            // a thread that cannot start leaves its share to the others
            let _ = std::thread::Builder::new().name(format!("write-{}", k + 1)).spawn_scoped(s, move || work(buf));
        }
        let library = before();
        if library.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        work(mine);
        library
    });
    library.map_err(WriteFailure::Library)?;
    match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((i, e)) => Err(WriteFailure::Direct(i, e)),
        None => Ok(()),
    }
}

/// What failed in [`write_pieces`].
#[derive(Debug)]
pub enum WriteFailure<E> {
    /// The files written through the library.
    Library(E),
    /// Piece `.0`'s encoding or `pwrite`.
    Direct(usize, PieceError),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces land at their rows and columns of the right field, with full-width regions in
    /// runs and partial ones row by row, from several threads.
    #[test]
    fn pieces_land_where_the_geometry_says() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let (nlat, nlon, nt, offset) = (5usize, 4usize, 3usize, 16u64);
        std::fs::write(&path, vec![0xAAu8; offset as usize + nt * nlat * nlon * 8 + 8]).unwrap();
        let cell = |t: usize, r: usize, c: usize| (1000 * t + 10 * r + c) as f64;
        for region in [Region { rows: 1..4, cols: 0..4 }, Region { rows: 0..5, cols: 1..3 }] {
            let fields: Vec<Vec<f64>> = (0..nt)
                .map(|t| region.rows.clone().flat_map(|r| region.cols.clone().map(move |c| cell(t, r, c))).collect())
                .collect();
            let pieces: Vec<Piece> = (0..nt).map(|t| Piece { tmp: &path, offset, t, values: &fields[t] }).collect();
            let g = Geometry { nlat, nlon, region: &region, enc: Encoding::f64(-1.0) };
            write_pieces::<()>(&pieces, &g, 2, &mut Vec::new(), || Ok(())).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes[..offset as usize].iter().all(|&b| b == 0xAA), "bytes before the offset untouched");
        assert!(bytes[bytes.len() - 8..].iter().all(|&b| b == 0xAA), "bytes after the data untouched");
        for t in 0..nt {
            for r in 0..nlat {
                for c in 0..nlon {
                    let at = offset as usize + ((t * nlat + r) * nlon + c) * 8;
                    let got = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
                    let written = (1..4).contains(&r) || (1..3).contains(&c);
                    let want = if written { cell(t, r, c).to_bits() } else { 0xAAAA_AAAA_AAAA_AAAA };
                    assert_eq!(got, want, "t {t} row {r} col {c}");
                }
            }
        }
    }

    #[test]
    fn a_failed_write_names_its_piece() {
        let dir = tempfile::tempdir().unwrap();
        let region = Region { rows: 0..1, cols: 0..2 };
        let g = Geometry { nlat: 1, nlon: 2, region: &region, enc: Encoding::f64(0.0) };
        let missing = dir.path().join("gone");
        let present = dir.path().join("here");
        std::fs::write(&present, [0u8; 16]).unwrap();
        let values = [1.0, 2.0];
        let pieces = [
            Piece { tmp: &present, offset: 0, t: 0, values: &values },
            Piece { tmp: &missing, offset: 0, t: 0, values: &values },
        ];
        match write_pieces::<()>(&pieces, &g, 1, &mut Vec::new(), || Ok(())) {
            Err(WriteFailure::Direct(1, PieceError::Io { cause, missing })) => {
                assert_eq!(cause.kind(), io::ErrorKind::NotFound);
                assert_eq!(missing, 16);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            write_pieces(&pieces[..1], &g, 2, &mut Vec::new(), || Err("lib")),
            Err(WriteFailure::Library("lib"))
        ));
    }

    /// Offsets come from HDF5 and are refused unless the storage is what the writer expects.
    #[test]
    fn locate_checks_the_storage() {
        let dir = tempfile::tempdir().unwrap();
        crate::input::silence_hdf5();
        let make = |name: &str, f: &dyn Fn(&mut netcdf::FileMut)| {
            let path = dir.path().join(name);
            let mut file = netcdf::create(&path).unwrap();
            file.add_dimension("time", 1).unwrap();
            file.add_dimension("lat", 2).unwrap();
            file.add_dimension("lon", 3).unwrap();
            f(&mut file);
            file.close().unwrap();
            path
        };
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let good = make("good.nc", &|f| {
            let mut v = f.add_variable::<f64>("v", &["time", "lat", "lon"]).unwrap();
            v.put_values(&values, ..).unwrap();
        });
        let offset = locate(&good, "v", [1, 2, 3], OutputType::F64).unwrap();
        let bytes = std::fs::read(&good).unwrap();
        let at = offset as usize;
        let stored: Vec<f64> =
            bytes[at..at + 48].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(stored, values);
        assert!(locate(&good, "v", [1, 3, 2], OutputType::F64).unwrap_err().contains("dimensions"));
        assert!(locate(&good, "w", [1, 2, 3], OutputType::F64).unwrap_err().contains("no HDF5 dataset"));
        let unwritten = make("unwritten.nc", &|f| {
            f.add_variable::<f64>("v", &["time", "lat", "lon"]).unwrap();
        });
        assert!(locate(&unwritten, "v", [1, 2, 3], OutputType::F64).unwrap_err().contains("not allocated"));
        let deflated = make("deflated.nc", &|f| {
            let mut v = f.add_variable::<f64>("v", &["time", "lat", "lon"]).unwrap();
            v.set_chunking(&[1, 2, 3]).unwrap();
            v.set_compression(4, true).unwrap();
            v.put_values(&values, ..).unwrap();
        });
        assert!(locate(&deflated, "v", [1, 2, 3], OutputType::F64).unwrap_err().contains("not contiguous"));
        let single = make("f32.nc", &|f| {
            let mut v = f.add_variable::<f32>("v", &["time", "lat", "lon"]).unwrap();
            v.put_values(&[1f32; 6], ..).unwrap();
        });
        assert!(locate(&single, "v", [1, 2, 3], OutputType::F64).unwrap_err().contains("not float64"));
        let big = make("big-endian.nc", &|f| {
            let mut v = f.add_variable::<f64>("v", &["time", "lat", "lon"]).unwrap();
            v.set_endianness(netcdf::Endianness::Big).unwrap();
            v.put_values(&values, ..).unwrap();
        });
        assert!(locate(&big, "v", [1, 2, 3], OutputType::F64).unwrap_err().contains("not little endian"));
        let classic = dir.path().join("classic.nc");
        let mut opts = netcdf::Options::empty();
        opts.insert(netcdf::Options::CLASSIC);
        let mut file = netcdf::create_with(&classic, opts).unwrap();
        file.add_dimension("x", 1).unwrap();
        file.close().unwrap();
        assert!(locate(&classic, "v", [1, 2, 3], OutputType::F64).unwrap_err().contains("not an HDF5 file"));
    }
}
