//! The event kernel (`kernels/events.hip`) run on the host against the CPU scan, bit for bit,
//! for machines without a GPU: `tests/kernels/events_host_check.cpp` compiles the kernel as
//! plain C++ (`tests/kernels/host_cuda_shims.h` in place of a CUDA compiler, `-ffp-contract=off`
//! as the device compilers are told) and runs each thread in turn over a band this test writes
//! to files; its events and summaries come back in files and are compared with
//! [`detect_band`](super::super::scan::detect_band)'s on seeded bands ([`super::seeded`]) of
//! every pool type and calendar, heatwaves and cold spells, joined or not. Skipped with a notice
//! where there is no C++ compiler (`${CXX:-g++}`); `tests/kernels/events-host-check.sh` runs it
//! for CI.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::super::columns::EventColumns;
use super::super::scan::{Found, Kind};
use super::seeded::{assert_same_found, columns, PoolType, SeededBand, N_DOY};
use super::params::N_STATS;
use crate::calendar::CfCalendar;

/// The harness, compiled once per test process (`None`: no C++ compiler here).
fn harness() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let dir = tempfile::tempdir().unwrap().keep();
            let exe = dir.join("events_host_check");
            let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".into());
            let built = std::process::Command::new(&cxx)
                .current_dir(root)
                .args(["-std=c++17", "-O1", "-ffp-contract=off", "-Wno-unknown-pragmas", "-Ikernels", "-Itests/kernels"])
                .arg("-o")
                .arg(&exe)
                .arg("tests/kernels/events_host_check.cpp")
                .output();
            match built {
                Err(e) => {
                    eprintln!("SKIPPED the event kernel's host check: no C++ compiler ({cxx}: {e})");
                    None
                }
                Ok(out) => {
                    assert!(out.status.success(), "{cxx} failed:\n{}", String::from_utf8_lossy(&out.stderr));
                    Some(exe)
                }
            }
        })
        .as_deref()
}

fn write<T: Copy>(path: &Path, vals: &[T], bytes: impl Fn(T) -> Vec<u8>) {
    std::fs::write(path, vals.iter().flat_map(|&v| bytes(v)).collect::<Vec<u8>>()).unwrap();
}

fn read<T>(path: &Path, size: usize, of: impl Fn(&[u8]) -> T) -> Vec<T> {
    std::fs::read(path).unwrap().chunks_exact(size).map(of).collect()
}

/// What the kernel finds in `band` for `kinds`, run on the host by the harness `exe`.
fn kernel_on_host(exe: &Path, band: &SeededBand, kinds: &[Kind<'_>], cell0: usize) -> Vec<Found> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (days, n) = (&band.days, band.n_cells);
    let ty = match band.ty {
        PoolType::F32 => "f32",
        PoolType::F64 => "f64",
        PoolType::I16 => "i16",
    };
    let n_slots = band.slot_of_day.iter().flatten().count();
    let mut meta = format!("{ty} {n} {} {N_DOY} {} {n_slots} {}\n", days.len(), days.n_years, kinds.len());
    for k in kinds {
        let p = k.params;
        meta += &format!("{} {} {}\n", p.min_duration, p.max_gap.map_or(-1, |g| g as i64), i64::from(p.cold));
    }
    std::fs::write(d.join("meta.txt"), meta).unwrap();
    match band.ty {
        PoolType::F32 => write(&d.join("pool.bin"), &band.f32s, |v| v.to_ne_bytes().to_vec()),
        PoolType::F64 => write(&d.join("pool.bin"), &band.f64s, |v| v.to_ne_bytes().to_vec()),
        PoolType::I16 => write(&d.join("pool.bin"), &band.i16s, |v| v.to_ne_bytes().to_vec()),
    }
    write(&d.join("table.bin"), &band.table, |v| v.to_ne_bytes().to_vec());
    let slots: Vec<i64> = band.slot_of_day.iter().map(|s| s.map_or(-1, |s| s as i64)).collect();
    write(&d.join("slot.bin"), &slots, |v| v.to_ne_bytes().to_vec());
    write(&d.join("doy.bin"), &days.doy_index, |v| v.to_ne_bytes().to_vec());
    write(&d.join("year.bin"), &days.year_index, |v| v.to_ne_bytes().to_vec());
    write(&d.join("mean.bin"), &band.mean, |v| v.to_ne_bytes().to_vec());
    for (k, kind) in kinds.iter().enumerate() {
        write(&d.join(format!("thresh{k}.bin")), kind.thresh, |v| v.to_ne_bytes().to_vec());
    }
    let run = std::process::Command::new(exe).arg(d).output().unwrap();
    assert!(run.status.success(), "events_host_check: {}", String::from_utf8_lossy(&run.stderr));
    (0..kinds.len())
        .map(|k| {
            let file = |name: &str| d.join(format!("{name}{k}.bin"));
            let counts = read(&file("counts"), 4, |b| i32::from_ne_bytes(b.try_into().unwrap()));
            let mut cols = EventColumns::default();
            for (c, &m) in counts.iter().enumerate() {
                cols.cell.extend(std::iter::repeat(cell0 + c).take(m as usize));
            }
            let m = cols.cell.len();
            let ints = read(&file("ints"), 4, |b| i32::from_ne_bytes(b.try_into().unwrap()));
            let floats = read(&file("floats"), 8, |b| f64::from_ne_bytes(b.try_into().unwrap()));
            cols.category = read(&file("category"), 1, |b| b[0] as i8);
            for j in 0..8 {
                cols.ints[j] = ints[j * m..(j + 1) * m].to_vec();
            }
            for j in 0..14 {
                cols.floats[j] = floats[j * m..(j + 1) * m].to_vec();
            }
            let summary = read(&file("summary"), 4, |b| f32::from_ne_bytes(b.try_into().unwrap()));
            assert_eq!(summary.len(), N_STATS * days.n_years * n);
            Found { events: vec![cols], summary }
        })
        .collect()
}

/// The band's first cell in the grid.
const CELL0: usize = 500;

/// Every pool type, calendar and rule: the kernel's events and summaries are the CPU scan's.
#[test]
fn the_event_kernel_on_the_host_finds_what_the_cpu_scan_finds() {
    // its compiler and harness are children of this process, as the forked readers' are
    let _serial = crate::input::child::serial();
    let Some(exe) = harness() else { return };
    let calendars = [
        (2001..=2004, CfCalendar::ProlepticGregorian),
        (1990..=1993, CfCalendar::Day360),
        (1995..=1998, CfCalendar::NoLeap),
    ];
    let (mut total, mut planted) = (0, Planted::default());
    for (years, cf) in calendars {
        for ty in [PoolType::F32, PoolType::F64, PoolType::I16] {
            let band = SeededBand::new(years.clone(), cf, 9 * 7 + 4, ty, 42);
            for (min_duration, max_gap) in [(5, Some(2)), (3, None), (1, Some(0))] {
                let kinds = band.kinds(min_duration, max_gap);
                let what = format!("{cf:?} {ty:?} min {min_duration} gap {max_gap:?}");
                let want = band.cpu(&kinds, CELL0);
                let got = kernel_on_host(exe, &band, &kinds, CELL0);
                total += assert_same_found(&got, &want, &what);
                for f in &want {
                    planted.see(&columns(f), band.days.len());
                }
            }
        }
    }
    // more cells than a block of threads
    let band = SeededBand::new(2001..=2003, CfCalendar::ProlepticGregorian, 9 * 61 + 4, PoolType::I16, 3);
    let kinds = band.kinds(5, Some(2));
    total += assert_same_found(&kernel_on_host(exe, &band, &kinds, CELL0), &band.cpu(&kinds, CELL0), "549 cells");
    assert!(total > 5000, "the bands plant events ({total})");
    assert!(planted.all(), "the cases the kernel must meet are planted: {planted:?}");
}

/// Which of the cases the kernel must meet the seeded bands' events hold.
#[derive(Debug, Default)]
struct Planted {
    longer_than_128: bool,
    at_first_day: bool,
    at_last_day: bool,
    /// The whole series, peaking on its last day (marineHeatWaves' decline-rate quirk).
    peak_at_series_end: bool,
    category_0: bool,
    nan_rate: bool,
    joined: bool,
}

impl Planted {
    fn see(&mut self, c: &EventColumns, n_days: usize) {
        let [start, end, peak, duration, ..] = &c.ints;
        for i in 0..c.len() {
            self.longer_than_128 |= duration[i] > 128;
            self.at_first_day |= start[i] == 0;
            self.at_last_day |= end[i] as usize == n_days - 1;
            self.peak_at_series_end |= start[i] == 0 && peak[i] as usize == n_days - 1;
            self.category_0 |= c.category[i] == 0;
            self.nan_rate |= c.floats[13][i].is_nan();
            // a joined event holds days under its threshold, which count in no category: in
            // the cells of runs split by short gaps (threshold above the mean every day), an
            // event with fewer days in categories than days is one
            let in_categories: i32 = (4..8).map(|k| c.ints[k][i]).sum();
            self.joined |= (c.cell[i] - CELL0) % 9 == 8 && in_categories < duration[i];
        }
    }

    fn all(&self) -> bool {
        let Planted { longer_than_128, at_first_day, at_last_day, peak_at_series_end, category_0, nan_rate, joined } =
            *self;
        longer_than_128 && at_first_day && at_last_day && peak_at_series_end && category_0 && nan_rate && joined
    }
}
