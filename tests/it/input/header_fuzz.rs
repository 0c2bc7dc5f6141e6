//! Header fuzzing: mutants of small valid NetCDF-4 and NetCDF-3 inputs (bytes flipped or
//! overwritten in the first 2 KB, files truncated), each the first file of a tiny job (some a
//! middle file). Whatever the damage, the binary ends with status 0 and its outputs, or status
//! 2 with one error line and nothing in the output directory: never a panic, never a signal
//! (a library crash on a damaged header is contained in a child process), never a hang.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;

/// Mutants per source dataset (two datasets: NetCDF-4 and NetCDF-3).
const MUTANTS: usize = 150;
/// Longest a run of the tiny job may take (a hang fails the test instead of blocking CI).
const RUN_LIMIT: Duration = Duration::from_secs(60);
const DAYS: u16 = 5;

/// splitmix64: a fixed seed gives the same mutants on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn name(doy: u16) -> String {
    format!("sst_2001_{doy:03}.nc")
}

/// A NetCDF-3 (classic) dataset of `DAYS` files of 6x4 cells with a time dimension of one.
fn classic_dataset(dir: &Path) {
    sstclim::input::silence_hdf5();
    std::fs::create_dir_all(dir).unwrap();
    for doy in 1..=DAYS {
        let mut f = netcdf::create_with(dir.join(name(doy)), netcdf::Options::CLASSIC).unwrap();
        f.add_dimension("time", 1).unwrap();
        f.add_dimension("lat", 4).unwrap();
        f.add_dimension("lon", 6).unwrap();
        f.add_variable::<f64>("lat", &["lat"]).unwrap().put_attribute("units", "degrees_north").unwrap();
        f.add_variable::<f64>("lon", &["lon"]).unwrap().put_attribute("units", "degrees_east").unwrap();
        let mut v = f.add_variable::<f32>("sst", &["time", "lat", "lon"]).unwrap();
        v.put_attribute("units", "degC").unwrap();
        v.put_attribute("_FillValue", -999f32).unwrap();
        f.enddef().unwrap();
        f.variable_mut("lat").unwrap().put_values(&[-45.0, -15.0, 15.0, 45.0], ..).unwrap();
        f.variable_mut("lon").unwrap().put_values(&[0.0, 60.0, 120.0, 180.0, 240.0, 300.0], ..).unwrap();
        let values: Vec<f32> = (0..24).map(|i| 10.0 + i as f32 * 0.5 + f32::from(doy) * 0.1).collect();
        f.variable_mut("sst").unwrap().put_values(&values, ..).unwrap();
    }
}

/// `bytes` damaged in one of a few ways.
fn mutate(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut m = bytes.to_vec();
    let head = m.len().min(2048);
    match rng.below(5) {
        // flip a few bits
        0 => {
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(head);
                m[at] ^= 1 << rng.below(8);
            }
        }
        // overwrite single bytes with interesting values
        1 => {
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(head);
                m[at] = [0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe][rng.below(6)];
            }
        }
        // overwrite a run with random bytes
        2 => {
            let at = rng.below(head);
            let len = (1 + rng.below(32)).min(m.len() - at);
            for b in &mut m[at..at + len] {
                *b = rng.next() as u8;
            }
        }
        // overwrite a 4- or 8-byte field with a huge or negative count
        3 => {
            let at = rng.below(head.saturating_sub(8).max(1));
            let value: [u8; 8] = [0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff];
            let len = if rng.below(2) == 0 { 4 } else { 8 }.min(m.len() - at);
            m[at..at + len].copy_from_slice(&value[..len]);
        }
        // truncate
        _ => {
            let at = if rng.below(2) == 0 { rng.below(head) } else { rng.below(m.len()) };
            m.truncate(at);
        }
    }
    m
}

struct Case {
    id: usize,
    source: PathBuf,
    doy: u16,
    bytes: Vec<u8>,
}

/// Run the tiny job with `case`'s mutant in place; panics with what went wrong, else returns
/// the exit status and the error line.
fn check(case: &Case, work: &Path) -> (i32, String) {
    let dir = work.join(format!("case-{}", case.id));
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    for doy in 1..=DAYS {
        let to = data.join(name(doy));
        if doy == case.doy {
            std::fs::write(&to, &case.bytes).unwrap();
        } else {
            std::fs::copy(case.source.join(name(doy)), &to).unwrap();
        }
    }
    let out = dir.join("out");
    // days 2..=4 with a 1-day half window read days 1..=5: day 1 is the first file
    let args = with(run_args(&data, &out, "2001", "2-4"), &["--half-window", "1", "--threads", "1"]);
    let mut child = bin()
        .env("SSTCLIM_READER_TIMEOUT", "20")
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mutant {} (day {}) hung for {RUN_LIMIT:?}; kept in {}", case.id, case.doy, dir.display());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    let what = format!("mutant {} (day {} of {}): {status}\n{err}", case.id, case.doy, case.source.display());
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{what}");
    let left = entries(&out);
    match status.code() {
        Some(0) => {
            // per-doy outputs: mean and p90 for days 2..=4, all finished
            let nc = left.iter().filter(|n| n.ends_with(".nc")).count();
            assert_eq!(nc, 6, "{what}: outputs {left:?}");
            assert_eq!(nc, left.len(), "{what}: stray files {left:?}");
        }
        Some(2) => {
            assert!(left.is_empty(), "{what}: left {left:?}");
            assert_eq!(err.trim().lines().count(), 1, "{what}");
            assert!(err.starts_with("error: "), "{what}");
        }
        _ => panic!("{what}: neither status 0 nor 2 (a signal or another status)"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
    (status.code().unwrap_or(-1), err.trim().to_string())
}

#[test]
fn damaged_headers_end_cleanly() {
    let root = tmp();
    let nc4 = root.path().join("nc4");
    generate(&nc4, &["--grid", "6x4", "--years", "2001", "--doys", &format!("1-{DAYS}")]);
    let nc3 = root.path().join("nc3");
    classic_dataset(&nc3);
    // both sources are good: the job runs on them as they are
    for source in [&nc4, &nc3] {
        let out = root.path().join("good-out");
        ok(&with(run_args(source, &out, "2001", "2-4"), &["--half-window", "1", "--threads", "1"]));
        std::fs::remove_dir_all(&out).unwrap();
    }
    let mut rng = Rng(0x005e_ed0f_c11a);
    let mut cases = Vec::new();
    for source in [&nc4, &nc3] {
        for _ in 0..MUTANTS {
            // mostly the first file (inspected for the job's layout), some a middle one
            let doy = if rng.below(4) == 0 { 3 } else { 1 };
            let original = std::fs::read(source.join(name(doy))).unwrap();
            let bytes = mutate(&original, &mut rng);
            cases.push(Case { id: cases.len(), source: source.clone(), doy, bytes });
        }
    }
    let work = root.path().join("work");
    let failures = std::sync::Mutex::new(Vec::new());
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..2 {
            let (cases, work, failures, results) = (&cases, &work, &failures, &results);
            s.spawn(move || {
                for case in cases.iter().skip(t).step_by(2) {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(case, work)));
                    if let Ok(r) = &r {
                        results.lock().unwrap().push(r.clone());
                    }
                    if let Err(e) = r {
                        let msg = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        failures.lock().unwrap().push(msg);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let results = results.into_inner().unwrap();
    // what the mutants did, for whoever reads the test's output
    let count = |f: &dyn Fn(&(i32, String)) -> bool| results.iter().filter(|r| f(r)).count();
    let ran = count(&|r| r.0 == 0);
    let contained = count(&|r| r.1.contains("crashed the netCDF/HDF5 library") || r.1.contains("inside the netcdf"));
    eprintln!(
        "{} mutants: {ran} ran, {} refused ({contained} contained crashes or panics)",
        results.len(),
        results.len() - ran
    );
    assert!(failures.is_empty(), "{} of {} mutants failed:\n{}", failures.len(), cases.len(), failures.join("\n---\n"));
    // the mutants are not all harmless nor all fatal: the test sees both ends
    assert!(ran > 0 && ran < results.len(), "{ran} of {} ran", results.len());
}
