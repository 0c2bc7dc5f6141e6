//! Forked reading must fill the pool bit for bit as the library read path does, and must end
//! cleanly (a typed error, every child reaped) when a file is bad or a reader is killed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::input::child::serial;
use crate::input::open::{open, silence_hdf5};
use crate::input::read::{decode_region, read_region};

const NLAT: usize = 9;
const NLON: usize = 13;

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// float64 `(lat, lon)` with coordinate variables, NetCDF-4.
    F64LatLon,
    /// float32 `(lon, lat)`, chunked and deflated, NetCDF-4.
    F32LonLatChunked,
    /// int16 `(time, lat, lon)` with scale, offset and `_FillValue`, NetCDF-4.
    I16Packed,
    /// float64 record variable `(time, lat, lon)` with an unlimited time, NetCDF-3 classic.
    Classic3Record,
}

fn value(day: usize, r: usize, c: usize) -> f64 {
    10.0 + day as f64 * 0.37 + r as f64 * 1.25 - c as f64 * 0.5 + ((r * c) % 7) as f64 * 0.013
}

fn missing(day: usize, r: usize, c: usize) -> bool {
    (r * NLON + c + day) % 11 == 0
}

/// Values of `day` in `(lat, lon)` order (NaN where missing).
fn field(day: usize, nlat: usize) -> Vec<f64> {
    let mut v = Vec::new();
    for r in 0..nlat {
        for c in 0..NLON {
            v.push(if missing(day, r, c) { f64::NAN } else { value(day, r, c) });
        }
    }
    v
}

fn write(path: &Path, kind: Kind, day: usize, nlat: usize) {
    silence_hdf5();
    let values = field(day, nlat);
    let transposed: Vec<f64> = (0..values.len()).map(|i| values[(i % nlat) * NLON + i / nlat]).collect();
    let mut f = match kind {
        Kind::Classic3Record => netcdf::create_with(path, netcdf::Options::empty()).unwrap(),
        _ => netcdf::create(path).unwrap(),
    };
    match kind {
        Kind::F64LatLon => {
            f.add_dimension("lat", nlat).unwrap();
            f.add_dimension("lon", NLON).unwrap();
            let mut lat = f.add_variable::<f64>("lat", &["lat"]).unwrap();
            lat.put_attribute("units", "degrees_north").unwrap();
            lat.put_values(&(0..nlat).map(|i| -40.0 + 10.0 * i as f64).collect::<Vec<_>>(), ..).unwrap();
            let mut lon = f.add_variable::<f64>("lon", &["lon"]).unwrap();
            lon.put_attribute("units", "degrees_east").unwrap();
            lon.put_values(&(0..NLON).map(|i| 5.0 * i as f64).collect::<Vec<_>>(), ..).unwrap();
            let mut v = f.add_variable::<f64>("sst", &["lat", "lon"]).unwrap();
            v.set_fill_value(f64::NAN).unwrap();
            v.put_values(&values, ..).unwrap();
        }
        Kind::F32LonLatChunked => {
            f.add_dimension("lon", NLON).unwrap();
            f.add_dimension("lat", nlat).unwrap();
            let mut v = f.add_variable::<f32>("sst", &["lon", "lat"]).unwrap();
            v.set_chunking(&[5, 4]).unwrap();
            v.set_compression(4, true).unwrap();
            v.set_fill_value(f32::NAN).unwrap();
            v.put_values(&transposed.iter().map(|&x| x as f32).collect::<Vec<_>>(), ..).unwrap();
        }
        Kind::I16Packed => {
            f.add_dimension("time", 1).unwrap();
            f.add_dimension("lat", nlat).unwrap();
            f.add_dimension("lon", NLON).unwrap();
            let mut v = f.add_variable::<i16>("sst", &["time", "lat", "lon"]).unwrap();
            v.set_fill_value(-32768i16).unwrap();
            v.put_attribute("scale_factor", 0.01f32).unwrap();
            v.put_attribute("add_offset", 20.0f32).unwrap();
            let packed: Vec<i16> =
                values.iter().map(|&x| if x.is_nan() { -32768 } else { ((x - 20.0) / 0.01).round() as i16 }).collect();
            v.put_values(&packed, ..).unwrap();
        }
        Kind::Classic3Record => {
            f.add_unlimited_dimension("time").unwrap();
            f.add_dimension("lat", nlat).unwrap();
            f.add_dimension("lon", NLON).unwrap();
            f.add_variable::<f64>("sst", &["time", "lat", "lon"]).unwrap();
            f.enddef().unwrap();
            f.variable_mut("sst").unwrap().put_values(&values, [0..1, 0..nlat, 0..NLON]).unwrap();
        }
    }
    f.close().unwrap();
}

/// `n` files of `kind` in `dir`, file i in slot `(7 i) mod n` (n not a multiple of 7), and the
/// first file's layout and grid.
fn dataset(dir: &Path, kind: Kind, n: usize) -> (Vec<(usize, PathBuf)>, VarLayout, Grid) {
    let files: Vec<(usize, PathBuf)> = (0..n)
        .map(|i| {
            let path = dir.join(format!("day{i:02}.nc"));
            write(&path, kind, i, NLAT);
            ((7 * i) % n, path)
        })
        .collect();
    let file = open(&files[0].1).unwrap();
    let layout = VarLayout::inspect(&file, &files[0].1, None, false).unwrap();
    let grid = Grid::read(&file, &files[0].1, &layout).unwrap();
    (files, layout, grid)
}

/// The library read path (as `run::read_tile` does it): read each region, decode into its row.
fn library_read<T: Sample>(files: &[(usize, PathBuf)], region: &Region) -> Pool<T> {
    let mut pool = Pool::<T>::new(files.len(), region.n_cells()).unwrap();
    let mut rows = pool.slots_mut();
    for (slot, path) in files {
        let file = open(path).unwrap();
        let layout = VarLayout::inspect(&file, path, Some("sst"), false).unwrap();
        let raw = read_region(&file, path, &layout, region).unwrap();
        decode_region(&layout, region, &raw, rows[*slot]);
    }
    drop(rows);
    pool
}

struct Forked<T: Sample> {
    result: Result<u64, ReaderError>,
    pool: Pool<T>,
    reported: Vec<usize>,
    elapsed: Duration,
}

fn forked_read<T: Sample>(
    files: &[(usize, PathBuf)],
    layout: &VarLayout,
    grid: Option<&Grid>,
    region: &Region,
    opts: &ReaderOptions,
) -> Forked<T> {
    let mut pool = Pool::<T>::new_shared(files.len(), region.n_cells()).unwrap();
    let mut reported = Vec::new();
    let started = Instant::now();
    let first = files[0].1.clone();
    let result = read_forked(files, layout, &first, grid, region, &mut pool, opts, &mut |slot, bytes| {
        assert!(bytes > 0);
        reported.push(slot);
    });
    Forked { result, pool, reported, elapsed: started.elapsed() }
}

fn bytes_of<T: Sample>(s: &[T]) -> &[u8] {
    // SAFETY: the pool's sample types are plain numbers without padding.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
}

/// Forked reading of `kind` into a `T` pool equals the library path bit for bit.
fn equals_library<T: Sample>(kind: Kind, region: &Region, opts: &ReaderOptions, check_grid: bool) -> Pool<T> {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (files, layout, grid) = dataset(dir.path(), kind, 10);
    let want = library_read::<T>(&files, region);
    let got = forked_read::<T>(&files, &layout, check_grid.then_some(&grid), region, opts);
    let bytes = got.result.unwrap_or_else(|e| panic!("{kind:?} into {}: {e}", T::NAME));
    assert_eq!(bytes, (files.len() * region.n_cells() * layout.storage.size()) as u64, "{kind:?}");
    assert!(bytes_of(got.pool.as_slice()) == bytes_of(want.as_slice()), "{kind:?} into {}: pools differ", T::NAME);
    let mut reported = got.reported;
    reported.sort_unstable();
    assert_eq!(reported, (0..files.len()).collect::<Vec<_>>(), "each file reported once");
    no_children_left();
    got.pool
}

/// Every child of this process has been reaped (none running, no zombie). Other lib tests that
/// run at the same time in this process start children of their own (the output files'
/// creator, generate's writers), which their owners reap within moments, so the check waits a
/// while for the process to have none; a child the readers leaked stays a zombie forever and
/// still fails it.
fn no_children_left() {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        // SAFETY: siginfo_t is plain data; waitid only writes it. WNOWAIT leaves any child alone.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
        let err = std::io::Error::last_os_error();
        if r == -1 || std::time::Instant::now() > deadline {
            assert_eq!(r, -1, "this process still has children");
            assert_eq!(err.raw_os_error(), Some(libc::ECHILD), "{err}");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn full() -> Region {
    Region { rows: 0..NLAT, cols: 0..NLON }
}

#[test]
fn float64_lat_lon_files_with_the_grid_check() {
    let opts = ReaderOptions::new(2, 3);
    let pool = equals_library::<f64>(Kind::F64LatLon, &full(), &opts, true);
    assert!(pool.as_slice().iter().any(|v| v.is_nan()) && pool.as_slice().iter().any(|v| v.is_finite()));
    equals_library::<f32>(Kind::F64LatLon, &full(), &opts, true);
}

#[test]
fn transposed_chunked_compressed_files_in_a_band_of_rows() {
    let band = Region { rows: 2..6, cols: 0..NLON };
    equals_library::<f32>(Kind::F32LonLatChunked, &band, &ReaderOptions::new(3, 1), true);
    equals_library::<f64>(Kind::F32LonLatChunked, &band, &ReaderOptions::new(4, 4), false);
}

#[test]
fn packed_int16_with_scale_offset_and_fill() {
    let band = Region { rows: 0..4, cols: 0..NLON };
    let opts = ReaderOptions::new(2, 4);
    let ints = equals_library::<i16>(Kind::I16Packed, &band, &opts, false);
    assert!(ints.as_slice().contains(&-32768), "fill values are kept as stored");
    let floats = equals_library::<f64>(Kind::I16Packed, &band, &opts, false);
    assert!(floats.as_slice().iter().any(|v| v.is_nan()));
    let (d, r, c) = (0..10).flat_map(|d| (0..4).map(move |r| (d, r, 1))).find(|&(d, r, c)| !missing(d, r, c)).unwrap();
    let slot = (7 * d) % 10;
    let got = floats.slot(slot)[r * NLON + c];
    assert!((got - value(d, r, c)).abs() < 0.006, "{got} vs {}", value(d, r, c));
}

#[test]
fn netcdf3_record_variables() {
    equals_library::<f64>(Kind::Classic3Record, &full(), &ReaderOptions::new(1, 10), true);
    equals_library::<f32>(Kind::Classic3Record, &full(), &ReaderOptions::new(16, 1), false);
}

#[test]
fn corrupt_file_in_the_middle_is_named_and_every_reader_reaped() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (files, layout, grid) = dataset(dir.path(), Kind::F64LatLon, 12);
    let victim = files[6].1.clone();
    let mut bytes = std::fs::read(&victim).unwrap();
    for b in bytes.iter_mut().take(64) {
        *b ^= 0x5A; // wreck the HDF5 signature and superblock
    }
    std::fs::write(&victim, &bytes).unwrap();
    let got = forked_read::<f64>(&files, &layout, Some(&grid), &full(), &ReaderOptions::new(2, 2));
    match got.result {
        Err(ReaderError::File { ref path, slot, ref message }) => {
            assert_eq!(path, &victim);
            assert_eq!(slot, files[6].0);
            assert!(message.contains("day06.nc") && message.contains("cannot open as NetCDF"), "{message}");
            assert_eq!(got.result.as_ref().unwrap_err().to_string(), *message);
        }
        other => panic!("expected the corrupt file's error, got {other:?}"),
    }
    assert!(!got.reported.contains(&files[6].0));
    assert!(got.elapsed < Duration::from_secs(20), "took {:?}", got.elapsed);
    no_children_left();
}

#[test]
fn shape_mismatch_names_both_files() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (files, layout, grid) = dataset(dir.path(), Kind::F64LatLon, 8);
    write(&files[5].1, Kind::F64LatLon, 5, NLAT - 1);
    let got = forked_read::<f64>(&files, &layout, Some(&grid), &full(), &ReaderOptions::new(3, 1));
    let err = got.result.unwrap_err();
    assert!(matches!(err, ReaderError::File { ref path, .. } if *path == files[5].1), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("day05.nc") && text.contains("lat=8 x lon=13") && text.contains("day00.nc"), "{text}");
    no_children_left();
}

#[test]
fn reader_killed_by_a_signal_is_reported() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (files, layout, _) = dataset(dir.path(), Kind::F32LonLatChunked, 10);
    let mut opts = ReaderOptions::new(2, 3);
    opts.test_kill_slot = Some(files[4].0);
    let got = forked_read::<f32>(&files, &layout, None, &full(), &opts);
    let err = got.result.unwrap_err();
    match &err {
        ReaderError::Signal { signal, files: held, .. } => {
            assert_eq!(*signal, libc::SIGKILL);
            // files 3, 4, 5 went to that reader; file 3 was finished before it died
            assert_eq!(held, &[files[4].1.clone(), files[5].1.clone()]);
        }
        other => panic!("expected a signal error, got {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("signal 9 (SIGKILL)") && text.contains("day04.nc"), "{text}");
    assert!(got.elapsed < Duration::from_secs(20), "took {:?}", got.elapsed);
    no_children_left();
}

#[test]
fn private_pool_and_bad_slots_are_refused_before_any_fork() {
    let files = vec![(0, PathBuf::from("a.nc")), (1, PathBuf::from("b.nc"))];
    let layout = {
        let _serial = serial();
        let dir = tempfile::tempdir().unwrap();
        dataset(dir.path(), Kind::F64LatLon, 1).1
    };
    let region = full();
    let opts = ReaderOptions::default();
    let first = PathBuf::from("a.nc");
    let mut private = Pool::<f64>::new(2, region.n_cells()).unwrap();
    let err = read_forked(&files, &layout, &first, None, &region, &mut private, &opts, &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, ReaderError::PrivatePool), "{err:?}");
    assert!(err.to_string().contains("shared memory"), "{err}");
    let mut shared = Pool::<f64>::new_shared(2, region.n_cells()).unwrap();
    let twice = vec![(1, PathBuf::from("a.nc")), (1, PathBuf::from("b.nc"))];
    let err = read_forked(&twice, &layout, &first, None, &region, &mut shared, &opts, &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("b.nc: pool slot 1 is given to two files"), "{err}");
    let outside = vec![(2, PathBuf::from("c.nc"))];
    let err = read_forked(&outside, &layout, &first, None, &region, &mut shared, &opts, &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("c.nc: pool slot 2 is outside the pool (2 slots)"), "{err}");
    let band = Region { rows: 0..1, cols: 0..NLON };
    let err = read_forked(&files, &layout, &first, None, &band, &mut shared, &opts, &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, ReaderError::PoolShape { .. }), "{err:?}");
    assert_eq!(read_forked(&[], &layout, &first, None, &region, &mut shared, &opts, &mut |_, _| {}).unwrap(), 0);
}

#[test]
fn every_fork_and_every_file_of_a_child_reach_the_events() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (files, layout, _) = dataset(dir.path(), Kind::F32LonLatChunked, 10);
    let region = full();
    let mut pool = Pool::<f32>::new_shared(files.len(), region.n_cells()).unwrap();
    let dest =
        SharedRows { base: pool.as_mut_slice().as_mut_ptr(), n_slots: 10, n_cells: region.n_cells(), shared: true };
    let steps: Vec<SlotStep> = files.iter().map(|(s, p)| (*s, p.clone(), 0)).collect();
    let (mut forks, mut done) = (Vec::new(), Vec::new());
    let before = Instant::now();
    let opts = ReaderOptions::new(2, 3);
    // SAFETY: the pool is shared, lives to the end of the test and nothing else touches it.
    let bytes = unsafe {
        read_forked_steps_into(&steps, &layout, &files[0].1, None, &region, dest, &opts, &mut |_, _| {}, &mut |e| {
            match e {
                ReaderEvent::Forked { pid, files, start, end } => forks.push((pid, files, start, end)),
                ReaderEvent::File(f) => done.push(f),
            }
        })
    }
    .unwrap();
    let after = Instant::now();
    // batches of 3, 3, 3 and 1 files, one child each
    assert_eq!(forks.iter().map(|f| f.1).collect::<Vec<_>>(), [3, 3, 3, 1]);
    assert!(forks.iter().all(|&(pid, _, start, end)| pid > 0 && before <= start && start <= end && end <= after));
    let mut slots: Vec<usize> = done.iter().map(|f| f.slot).collect();
    slots.sort_unstable();
    assert_eq!(slots, (0..10).collect::<Vec<_>>(), "each file once");
    let per_file = (region.n_cells() * layout.storage.size()) as u64;
    assert_eq!(bytes, 10 * per_file);
    for f in &done {
        let fork = forks.iter().find(|k| k.0 == f.pid).expect("a file from a forked child");
        assert_eq!(f.bytes, per_file);
        assert!(fork.2 <= f.start && f.start <= f.end && f.end <= after, "{f:?}");
        // the splits are consecutive parts of the file's time (offsets are whole nanoseconds)
        let parts = f.open + f.read + f.decode;
        assert!(parts <= (f.end - f.start) + Duration::from_nanos(4), "{f:?}");
        assert!(f.read > Duration::ZERO && f.cpu > Duration::ZERO, "{f:?}");
    }
    // every file is its own: each child opened each of its files
    assert!(done.iter().all(|f| f.open > Duration::ZERO));
    no_children_left();
}
