//! Files of many time steps read one step per pool slot on every read path (direct `pread`
//! and chunk decoding, the library in this process, forked reader processes) bitwise equal to
//! libnetcdf's read of that step (the oracle), whatever the storage: contiguous, chunks of one
//! step (deflate + shuffle), chunks of five steps that do not divide the grid, int16 packed and
//! float32, a fixed and an unlimited time dimension, files of different lengths. The slot list
//! is built by hand: files repeated, steps in any order, several tiles whose rows cut chunks.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sstclim::input::direct::{self, Place};
use sstclim::input::{self, decode_region, read_region_at, Grid, Region, VarLayout};
use sstclim::pipeline::readers::{read_all, ReadJob, ReadStats, Rows};
use sstclim::pipeline::trace::Trace;
use sstclim::pool::Pool;

const NLAT: usize = 23;
const NLON: usize = 37;
const FILL_F32: f32 = 1e20;
const FILL_I16: i16 = -32768;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Store {
    F32,
    /// int16 with scale_factor 0.01, add_offset 20 and a `_FillValue`.
    I16,
}

/// How a fixture stores its variable.
#[derive(Clone, Debug)]
struct Spec {
    store: Store,
    /// None: contiguous; else chunk lengths (time, lat, lon), deflated and shuffled.
    chunks: Option<[usize; 3]>,
    unlimited: bool,
}

fn value(day: usize, r: usize, c: usize) -> f64 {
    15.0 + day as f64 * 0.37 + r as f64 * 0.25 - c as f64 * 0.125 + ((r * 7 + c * 3 + day) % 11) as f64 * 0.01
}

fn missing(day: usize, r: usize, c: usize) -> bool {
    (r * NLON + c + 3 * day) % 13 == 0
}

/// Write `steps` daily steps starting at day `first` (the day numbers are the time values).
fn write(path: &Path, spec: &Spec, first: usize, steps: usize) {
    input::silence_hdf5();
    let mut f = netcdf::create(path).unwrap();
    if spec.unlimited {
        f.add_unlimited_dimension("time").unwrap();
    } else {
        f.add_dimension("time", steps).unwrap();
    }
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    let mut t = f.add_variable::<f64>("time", &["time"]).unwrap();
    t.put_attribute("units", "days since 2000-01-01").unwrap();
    t.put_attribute("calendar", "standard").unwrap();
    t.put_attribute("axis", "T").unwrap();
    let days: Vec<f64> = (first..first + steps).map(|d| d as f64).collect();
    t.put_values(&days, [0..steps]).unwrap();
    let mut lat = f.add_variable::<f64>("lat", &["lat"]).unwrap();
    lat.put_attribute("units", "degrees_north").unwrap();
    lat.put_values(&(0..NLAT).map(|i| -55.0 + 5.0 * i as f64).collect::<Vec<_>>(), ..).unwrap();
    let mut lon = f.add_variable::<f64>("lon", &["lon"]).unwrap();
    lon.put_attribute("units", "degrees_east").unwrap();
    lon.put_values(&(0..NLON).map(|i| 2.5 + 5.0 * i as f64).collect::<Vec<_>>(), ..).unwrap();
    let mut cells = Vec::with_capacity(steps * NLAT * NLON);
    for d in first..first + steps {
        for r in 0..NLAT {
            for c in 0..NLON {
                cells.push((!missing(d, r, c)).then(|| value(d, r, c)));
            }
        }
    }
    let extents = [0..steps, 0..NLAT, 0..NLON];
    macro_rules! var {
        ($ty:ty, $fill:expr, $encode:expr) => {{
            let mut v = f.add_variable::<$ty>("sst", &["time", "lat", "lon"]).unwrap();
            if let Some(ch) = spec.chunks {
                v.set_chunking(&ch).unwrap();
                v.set_compression(4, true).unwrap();
            }
            v.put_attribute("_FillValue", $fill).unwrap();
            if spec.store == Store::I16 {
                v.put_attribute("scale_factor", 0.01f32).unwrap();
                v.put_attribute("add_offset", 20.0f32).unwrap();
            }
            v.put_attribute("units", "degC").unwrap();
            let data: Vec<$ty> = cells.iter().map(|x| x.map_or($fill, $encode)).collect();
            v.put_values(&data, extents).unwrap();
        }};
    }
    match spec.store {
        Store::F32 => var!(f32, FILL_F32, |x: f64| x as f32),
        Store::I16 => var!(i16, FILL_I16, |x: f64| ((x - 20.0) / 0.01).round() as i16),
    }
}

fn layout_of(path: &Path) -> (VarLayout, Grid) {
    let f = input::open(path).unwrap();
    // (discovery accepts files of many steps; here the layout is taken as a stacked one)
    let layout = VarLayout::inspect(&f, path, Some("sst"), true).unwrap();
    let grid = Grid::read(&f, path, &layout).unwrap();
    (layout, grid)
}

/// libnetcdf's read of `region` at `step` of `path`, decoded as every path decodes.
fn oracle(path: &Path, step: usize, region: &Region) -> Vec<f32> {
    let (layout, _) = layout_of(path);
    let f = input::open(path).unwrap();
    let raw = read_region_at(&f, path, &layout, region, step).unwrap();
    let mut v = vec![0f32; region.n_cells()];
    decode_region(&layout, region, &raw, &mut v);
    v
}

/// Files: three "years" of 10, 10 and 7 steps (days numbered on from 0).
fn dataset(dir: &Path, spec: &Spec) -> Vec<(PathBuf, usize, usize)> {
    std::fs::create_dir_all(dir).unwrap();
    let mut files = Vec::new();
    let mut first = 0;
    for (y, steps) in [10, 10, 7].into_iter().enumerate() {
        let path = dir.join(format!("series_{y}.nc"));
        write(&path, spec, first, steps);
        files.push((path, first, steps));
        first += steps;
    }
    files
}

/// Every (file, step) of the dataset, in a shuffled order (a fixed permutation): the slot list.
fn slots(files: &[(PathBuf, usize, usize)]) -> Vec<(PathBuf, usize, usize)> {
    let mut all: Vec<(PathBuf, usize, usize)> =
        files.iter().flat_map(|(p, first, n)| (0..*n).map(move |k| (p.clone(), k, first + k))).collect();
    let n = all.len();
    for i in (1..n).rev() {
        all.swap(i, (i * 7919 + 13) % (i + 1));
    }
    all
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Path_ {
    Direct,
    Library,
    Forked,
}

/// Read the slots through `read_all` on `path` and return the pool and the stats.
fn read(
    which: Path_,
    files: &[PathBuf],
    steps: &[usize],
    layout: &VarLayout,
    grid: &Grid,
    region: &Region,
) -> (Vec<f32>, ReadStats) {
    let dl = match which {
        Path_::Direct => Some(direct::probe(&files[0], layout).unwrap_or_else(|e| panic!("not direct: {e}"))),
        _ => None,
    };
    let mut pool: Pool<f32> = match which {
        Path_::Forked => Pool::new_shared(files.len(), region.n_cells()).unwrap(),
        _ => Pool::new(files.len(), region.n_cells()).unwrap(),
    };
    let stats = {
        let rows = Rows::new(&mut pool);
        let job = ReadJob {
            files,
            steps,
            layout,
            first: &files[0],
            grid,
            region,
            check_grid: true,
            threads: 3,
            direct: dl.as_ref(),
            forked: which == Path_::Forked,
            readers: 2,
            tile: 0,
            memory: None,
        };
        let (done, got) = crossbeam_channel::unbounded();
        let trace = Trace::new(Instant::now());
        let stats = read_all(&job, None, &rows, &trace, &AtomicBool::new(false), &done).unwrap();
        drop(done);
        let mut reported: Vec<usize> = got.into_iter().map(|(slot, _)| slot).collect();
        reported.sort_unstable();
        assert_eq!(reported, (0..files.len()).collect::<Vec<_>>(), "{which:?}: every slot reported once");
        stats
    };
    (pool.as_slice().to_vec(), stats)
}

/// The tests of this file one at a time: one test's forked readers inherit the descriptor of
/// a file another test is writing, and with it HDF5's lock on that file until they exit, so
/// that file's next open fails (NC_EHDFERR) now and then (sstclim's `main` turns the locking off
/// through the environment, and so does this test binary's, `tests/it/main.rs`, before its threads run).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn check(spec: Spec, name: &str) -> Vec<ReadStats> {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("sstclim-ts-{name}-{}", std::process::id()));
    let data = dataset(&dir, &spec);
    let list = slots(&data);
    let files: Vec<PathBuf> = list.iter().map(|s| s.0.clone()).collect();
    let steps: Vec<usize> = list.iter().map(|s| s.1).collect();
    let (layout, grid) = layout_of(&files[0]);
    assert_eq!(layout.time_axis, Some(0), "{name}");
    let mut all_stats = Vec::new();
    // tiles whose rows start and end inside chunks of 7 rows
    for rows in [0..NLAT, 3..11, 11..NLAT, 22..NLAT] {
        let region = Region { rows: rows.clone(), cols: 0..NLON };
        let n = region.n_cells();
        let want: Vec<Vec<f32>> = list.iter().map(|(p, k, _)| oracle(p, *k, &region)).collect();
        // the oracle reads the step asked for (values are a function of the day)
        for ((_, _, day), w) in list.iter().zip(&want) {
            let (r, c) = (rows.start, 1);
            let i = c;
            if !missing(*day, r, c) {
                assert!((f64::from(w[i]) - value(*day, r, c)).abs() < 0.006, "{name}: day {day}: {}", w[i]);
            }
        }
        for which in [Path_::Direct, Path_::Library, Path_::Forked] {
            let (pool, stats) = read(which, &files, &steps, &layout, &grid, &region);
            for (slot, w) in want.iter().enumerate() {
                let got = &pool[slot * n..(slot + 1) * n];
                if let Some(i) = (0..n).find(|&i| got[i].to_bits() != w[i].to_bits()) {
                    panic!(
                        "{name} {which:?} rows {rows:?}: slot {slot} ({} step {}): cell {i}: {} (libnetcdf {})",
                        list[slot].0.display(),
                        list[slot].1,
                        got[i],
                        w[i]
                    );
                }
            }
            if which == Path_::Direct {
                assert_eq!(stats.direct_files, files.len(), "{name} rows {rows:?}: every slot on the direct path");
                assert_eq!(stats.library_files, 0, "{name}");
                if rows == (0..NLAT) {
                    all_stats.push(stats);
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    all_stats
}

#[test]
fn contiguous_float32_steps_read_bitwise_equal_to_libnetcdf() {
    let spec = Spec { store: Store::F32, chunks: None, unlimited: false };
    // contiguous: located once per file, read at offset + step x field
    {
        let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = std::env::temp_dir().join(format!("sstclim-ts-place-{}", std::process::id()));
        let data = dataset(&dir, &spec);
        let (layout, _) = layout_of(&data[0].0);
        let dl = direct::probe(&data[0].0, &layout).unwrap();
        assert!(!dl.chunked && dl.step_block == 1, "{dl:?}");
        let (_, located) = direct::locate_file(&data[2].0, &dl, &layout, None).unwrap();
        assert!(matches!(located.place, Place::Contiguous(_)));
        assert_eq!(located.steps, 7, "the short file's own length");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    check(spec, "contiguous-f32");
}

#[test]
fn contiguous_int16_packed_steps_read_bitwise_equal_to_libnetcdf() {
    check(Spec { store: Store::I16, chunks: None, unlimited: false }, "contiguous-i16");
}

#[test]
fn chunks_of_one_step_deflated_read_bitwise_equal_to_libnetcdf() {
    check(Spec { store: Store::I16, chunks: Some([1, NLAT, NLON]), unlimited: true }, "c1-i16-unlimited");
    check(Spec { store: Store::F32, chunks: Some([1, 7, 10]), unlimited: false }, "c1-f32");
}

/// Chunks of five steps (and 7 x 10 cells, not dividing the 23 x 37 grid): every chunk of a
/// whole tile is inflated once for all five steps it holds, however the slots are ordered.
#[test]
fn chunks_of_five_steps_are_inflated_once_and_read_bitwise_equal_to_libnetcdf() {
    for (spec, name, size) in [
        (Spec { store: Store::I16, chunks: Some([5, 7, 10]), unlimited: true }, "c5-i16-unlimited", 2),
        (Spec { store: Store::F32, chunks: Some([5, 7, 10]), unlimited: false }, "c5-f32", 4),
    ] {
        let stats = check(spec, name);
        // 3 files x 2 blocks of steps x 4 x 4 chunks of 5 x 7 x 10 values, each inflated once
        let once = 3 * 2 * 16 * 5 * 7 * 10 * size;
        assert_eq!(stats[0].inflated, once as u64, "{name}: each chunk inflated once");
    }
}

/// The read stage alone (`read_all` on the direct path, pool i16, full grid) on a dataset of
/// daily files against the same days in yearly files, alternating, with wall and CPU time
/// (CPU time is what a loaded machine measures best). Run by hand:
/// `TIMESERIES_BENCH=DIR cargo test --release --test it -- timeseries::read::bench --ignored --nocapture`
/// where DIR holds `daily/sst_YYYY_DDD.nc` and yearly copies in `yearly-*/sst.day.mean.YYYY.nc`
/// (docs/experiments.md, run 2026-12-02-vm-timeseries-read).
#[test]
#[ignore]
fn bench_read_stage_daily_against_yearly() {
    let Ok(dir) = std::env::var("TIMESERIES_BENCH") else { return };
    let dir = PathBuf::from(dir);
    let repeats: usize = std::env::var("TIMESERIES_REPEATS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // the slots of the job in [day][year] order, as the window plan orders them
    let mut days: Vec<(u32, u32)> = std::fs::read_dir(dir.join("daily"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let rest = name.strip_prefix("sst_")?.strip_suffix(".nc")?;
            let (y, d) = rest.split_once('_')?;
            Some((d.parse().ok()?, y.parse().ok()?))
        })
        .collect();
    days.sort_unstable();
    let mut sets: Vec<(String, Vec<PathBuf>, Vec<usize>)> = vec![(
        "daily".into(),
        days.iter().map(|(d, y)| dir.join(format!("daily/sst_{y}_{d:03}.nc"))).collect(),
        vec![0; days.len()],
    )];
    let mut yearly: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("yearly"))
        .collect();
    yearly.sort();
    for y in yearly {
        let files = days.iter().map(|(_, year)| dir.join(format!("{y}/sst.day.mean.{year}.nc"))).collect();
        sets.push((y, files, days.iter().map(|(d, _)| *d as usize - 1).collect()));
    }
    let cpu = || {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    let mut results: Vec<Vec<(f64, f64)>> = vec![Vec::new(); sets.len()];
    for r in 0..=repeats {
        for (k, (name, files, steps)) in sets.iter().enumerate() {
            let (layout, grid) = {
                let f = input::open(&files[0]).unwrap();
                let layout = VarLayout::inspect(&f, &files[0], None, true).unwrap();
                let grid = Grid::read(&f, &files[0], &layout).unwrap();
                (layout, grid)
            };
            let region = Region { rows: 0..layout.nlat(), cols: 0..layout.nlon() };
            let dl = direct::probe(&files[0], &layout).unwrap();
            let mut pool: Pool<i16> = Pool::new(files.len(), region.n_cells()).unwrap();
            let rows = Rows::new(&mut pool);
            let job = ReadJob {
                files,
                steps,
                layout: &layout,
                first: &files[0],
                grid: &grid,
                region: &region,
                check_grid: true,
                threads,
                direct: Some(&dl),
                forked: false,
                readers: threads,
                tile: 0,
                memory: None,
            };
            let (done, _got) = crossbeam_channel::unbounded();
            let trace = Trace::new(Instant::now());
            let (t0, c0) = (Instant::now(), cpu());
            let stats = read_all(&job, None, &rows, &trace, &AtomicBool::new(false), &done).unwrap();
            let (wall, cpu_s) = (t0.elapsed().as_secs_f64(), cpu() - c0);
            assert_eq!(stats.direct_files, files.len());
            if r > 0 {
                // the first pass warms the page cache
                println!("pass {r} {name}: wall {wall:.3} s, cpu {cpu_s:.3} s, inflated {} B", stats.inflated);
                results[k].push((wall, cpu_s));
            }
        }
    }
    for ((name, files, _), res) in sets.iter().zip(&results) {
        let range = |f: fn(&(f64, f64)) -> f64| {
            let v: Vec<f64> = res.iter().map(f).collect();
            (v.iter().cloned().fold(f64::MAX, f64::min), v.iter().cloned().fold(0.0, f64::max))
        };
        let (w, c) = (range(|x| x.0), range(|x| x.1));
        println!("{name}: {} slots, wall {:.3}-{:.3} s, cpu {:.3}-{:.3} s", files.len(), w.0, w.1, c.0, c.1);
    }
}
