//! `sstclim events` end to end: a small dataset and climatology written here, the binary run
//! in several bands and in one, events.nc and summary.nc read back and compared field by field
//! with the independent reference detector (tests/it/common/events.rs); bad inputs refused in one
//! line with exit status 2 and no outputs.

use std::path::{Path, PathBuf};

use crate::common::events::{ar1, block_average, close, detect as reference, Rng};
use crate::common::{self, entries, fails, ok, read, s, tmp};
use sstclim::calendar::{Calendar, Date};
use sstclim::events::Days;

const NLAT: usize = 5;
const NLON: usize = 4;
const YEARS: (i32, i32) = (1990, 1991);

fn lat() -> Vec<f64> {
    (0..NLAT).map(|i| -60.0 + 30.0 * i as f64).collect()
}

fn lon() -> Vec<f64> {
    (0..NLON).map(|i| 10.0 + 90.0 * i as f64).collect()
}

/// The test's world: per cell its series (values float32 can hold, NaN missing) and its climatology
/// per day of year (mean, p10, p90; float32 as stored).
struct World {
    series: Vec<Vec<f64>>,
    mean: Vec<Vec<f32>>,
    p10: Vec<Vec<f32>>,
    p90: Vec<Vec<f32>>,
}

fn world(days: &Days) -> World {
    let mut rng = Rng(77);
    let n = NLAT * NLON;
    let mut w = World { series: vec![], mean: vec![], p10: vec![], p90: vec![] };
    for c in 0..n {
        let base = 5.0 + c as f64;
        let mean: Vec<f64> =
            (0..366).map(|d| base + 4.0 * (2.0 * std::f64::consts::PI * d as f64 / 366.0).cos()).collect();
        // cell 7: an Arctic-like threshold below the mean
        let width = if c == 7 { -0.3 } else { 0.9 + 0.05 * c as f64 };
        let p90: Vec<f64> = mean.iter().map(|m| m + width).collect();
        let p10: Vec<f64> = mean.iter().map(|m| m - width.abs()).collect();
        let per_day: Vec<f64> = days.doy_index.iter().map(|&d| mean[usize::from(d)]).collect();
        let mut series: Vec<f64> = ar1(&mut rng, &per_day, 0.9, 1.0).iter().map(|&x| f64::from(x as f32)).collect();
        for v in series.iter_mut() {
            if rng.uniform() < 0.02 {
                *v = f64::NAN;
            }
        }
        let (mut mean, mut p10, mut p90): (Vec<f32>, Vec<f32>, Vec<f32>) = (
            mean.iter().map(|&x| x as f32).collect(),
            p10.iter().map(|&x| x as f32).collect(),
            p90.iter().map(|&x| x as f32).collect(),
        );
        if c == 0 {
            // land: no data, no climatology
            series.fill(f64::NAN);
            for v in [&mut mean, &mut p10, &mut p90] {
                v.fill(f32::NAN);
            }
        }
        if c == 5 {
            // an ocean cell missing in every file
            series.fill(f64::NAN);
        }
        w.series.push(series);
        w.mean.push(mean);
        w.p10.push(p10);
        w.p90.push(p90);
    }
    w
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Files {
    Plain,
    /// float64, chunked and compressed: read by the forked readers into a float64 pool.
    Deflated,
    /// int16, packed as [`pack`]: kept as stored in an int16 pool.
    Packed,
}

/// The stored integer of a value in the packed files (scale 0.01, offset 20, fill -32768).
fn pack(v: f64) -> i16 {
    if v.is_nan() {
        i16::MIN
    } else {
        ((v - 20.0) / 0.01).round() as i16
    }
}

/// The world whose series are what the packed files decode to (float64, as `run` decodes).
fn unpacked(w: &World) -> World {
    let decode = |s: i16| if s == i16::MIN { f64::NAN } else { f64::from(s) * 0.01 + 20.0 };
    World {
        series: w.series.iter().map(|c| c.iter().map(|&v| decode(pack(v))).collect()).collect(),
        mean: w.mean.clone(),
        p10: w.p10.clone(),
        p90: w.p90.clone(),
    }
}

/// The inputs, one file a day.
fn write_inputs(dir: &Path, days: &Days, w: &World, files: Files) -> PathBuf {
    let data = dir.join(match files {
        Files::Plain => "data",
        Files::Deflated => "deflated",
        Files::Packed => "packed",
    });
    std::fs::create_dir_all(&data).unwrap();
    sstclim::input::silence_hdf5();
    for (i, &epoch) in days.epoch_days.iter().enumerate() {
        let date = Date::from_days(epoch);
        let mut f = netcdf::create(data.join(format!("sst_{}_{:03}.nc", date.year, date.ordinal()))).unwrap();
        f.add_dimension("lat", NLAT).unwrap();
        f.add_dimension("lon", NLON).unwrap();
        for (name, vals, units) in [("lat", lat(), "degrees_north"), ("lon", lon(), "degrees_east")] {
            let mut v = f.add_variable::<f64>(name, &[name]).unwrap();
            v.put_attribute("units", units).unwrap();
            v.put_values(&vals, ..).unwrap();
        }
        let vals: Vec<f32> = (0..NLAT * NLON).map(|c| w.series[c][i] as f32).collect();
        if files == Files::Packed {
            let mut v = f.add_variable::<i16>("sst", &["lat", "lon"]).unwrap();
            v.set_fill_value(i16::MIN).unwrap();
            v.put_attribute("scale_factor", 0.01f64).unwrap();
            v.put_attribute("add_offset", 20.0f64).unwrap();
            v.put_attribute("units", "degC").unwrap();
            v.put_values(&vals.iter().map(|&x| pack(f64::from(x))).collect::<Vec<_>>(), ..).unwrap();
            continue;
        }
        if files == Files::Deflated {
            // float64, chunked and compressed
            let mut v = f.add_variable::<f64>("sst", &["lat", "lon"]).unwrap();
            v.set_chunking(&[2, NLON]).unwrap();
            v.set_compression(4, true).unwrap();
            v.put_attribute("units", "degC").unwrap();
            v.put_values(&vals.iter().map(|&x| f64::from(x)).collect::<Vec<_>>(), ..).unwrap();
            continue;
        }
        let mut v = f.add_variable::<f32>("sst", &["lat", "lon"]).unwrap();
        v.put_attribute("units", "degC").unwrap();
        v.put_values(&vals, ..).unwrap();
    }
    data
}

fn write_clim(path: &Path, w: &World, lat: &[f64], calendar: &str) {
    let by_doy = |per_cell: &[Vec<f32>]| -> Vec<f64> {
        let n = per_cell.len();
        (0..366 * n).map(|k| f64::from(per_cell[k % n][k / n])).collect()
    };
    let (mean, p10, p90) = (by_doy(&w.mean), by_doy(&w.p10), by_doy(&w.p90));
    // a grid of another size repeats the first cells' values
    let n = lat.len() * NLON;
    let fit =
        |v: &[f64]| -> Vec<f64> { (0..366 * n).map(|k| v[(k / n) * NLAT * NLON + (k % n) % (NLAT * NLON)]).collect() };
    crate::common::events::write_climatology(
        path,
        "sst",
        lat,
        &lon(),
        calendar,
        &[("mean", &fit(&mean)), ("p10", &fit(&p10)), ("p90", &fit(&p90))],
    );
}

/// The plain (float) inputs of the test world over `YEARS` and its climatology file: the days,
/// the world, the input directory and the climatology's path.
fn plain_job(dir: &Path) -> (Days, World, PathBuf, PathBuf) {
    let days = Days::of_years(YEARS.0..=YEARS.1, Calendar::Hobday366);
    let w = world(&days);
    let data = write_inputs(dir, &days, &w, Files::Plain);
    let clim = dir.join("climatology.nc");
    write_clim(&clim, &w, &lat(), "hobday366");
    (days, w, data, clim)
}

fn events_args(data: &Path, clim: &Path, out: &Path, more: &[&str]) -> Vec<String> {
    let years = format!("{}-{}", YEARS.0, YEARS.1);
    let mut v: Vec<String> =
        ["-q", "events", "-i", &s(data), "-o", &s(out), "--years", &years, "--climatology", &s(clim)]
            .iter()
            .map(|x| x.to_string())
            .collect();
    v.extend(more.iter().map(|x| x.to_string()));
    v
}

/// Compare an events file and a summary file with the reference on the world's cells.
fn check_outputs(out: &Path, w: &World, days: &Days, cold: bool) {
    let (ev_name, sum_name) = if cold { ("events_cold.nc", "summary_cold.nc") } else { ("events.nc", "summary.nc") };
    let ev = |var: &str| read(&out.join(ev_name), var).0;
    let (lat_i, lon_i, start) = (ev("lat_index"), ev("lon_index"), ev("index_start"));
    let mut want_all = Vec::new();
    let ny = days.n_years;
    let years: Vec<usize> = days.year_index.iter().map(|&y| usize::from(y)).collect();
    let (summary_count, dims) = read(&out.join(sum_name), "count");
    assert_eq!(dims.iter().map(|d| d.1).collect::<Vec<_>>(), [ny, NLAT, NLON]);
    for c in 0..NLAT * NLON {
        let temp = w.series[c].clone();
        let per_day =
            |v: &[f32]| -> Vec<f64> { days.doy_index.iter().map(|&d| f64::from(v[usize::from(d)])).collect() };
        let thresh = if cold { &w.p10[c] } else { &w.p90[c] };
        let want =
            if c == 0 { vec![] } else { reference(&temp, &per_day(&w.mean[c]), &per_day(thresh), 5, Some(2), cold) };
        let block = block_average(&want, &years, ny);
        for (k, stat) in sstclim::events::summary::STATS.iter().enumerate() {
            let (vals, _) = read(&out.join(sum_name), stat);
            for y in 0..ny {
                let got = vals[y * NLAT * NLON + c];
                let expect = if c == 0 { f64::NAN } else { f64::from(block[k][y] as f32) };
                assert!(close(got, expect), "cell {c} {stat} year {y}: {got} vs {expect}");
            }
        }
        want_all.extend(want.into_iter().map(|e| (c, e)));
    }
    assert_eq!(start.len(), want_all.len(), "events");
    assert!(want_all.len() > 50, "{} events", want_all.len());
    assert_eq!(summary_count[5], 0.0, "the all-missing cell has a climatology and no events");
    let floats: Vec<Vec<f64>> = sstclim::events::metrics::FLOAT_FIELDS.iter().map(|f| ev(f)).collect();
    let (cat, dur, t_start, t_peak) = (ev("category"), ev("duration"), ev("time_start"), ev("time_peak"));
    let (lat_v, lon_v) = (ev("lat"), ev("lon"));
    for (k, (c, e)) in want_all.iter().enumerate() {
        assert_eq!((lat_i[k] as usize, lon_i[k] as usize), (c / NLON, c % NLON), "event {k}");
        assert_eq!((lat_v[k], lon_v[k]), (lat()[c / NLON], lon()[c % NLON]));
        assert_eq!(start[k] as usize, e.start, "event {k}");
        assert_eq!(dur[k] as u32, e.duration);
        assert_eq!(cat[k] as u8, e.category, "event {k}");
        assert_eq!(t_start[k] as i64, days.epoch_days[e.start]);
        assert_eq!(t_peak[k] as i64, days.epoch_days[e.peak]);
        for (f, vals) in floats.iter().enumerate() {
            assert!(close(vals[k], e.floats[f]), "event {k} field {f}: {} vs {}", vals[k], e.floats[f]);
        }
    }
    // the Arctic-like cell's events carry category 0 (none)
    assert!(want_all.iter().any(|(c, e)| *c == 7 && e.category == 0) || cold);
}

#[test]
fn events_in_bands_equal_the_reference_and_one_band() {
    let dir = tmp();
    let (days, w, data, clim) = plain_job(dir.path());
    // three bands of rows (about 52 kB a row)
    let banded = dir.path().join("banded");
    ok(&events_args(&data, &clim, &banded, &["--max-mem", "120000", "--threads", "2"]));
    check_outputs(&banded, &w, &days, false);
    // one band, one thread: the same files' values, bit for bit; events.nc (written at once
    // through its contiguous columns, however many bands) with every variable and attribute
    let whole = dir.path().join("whole");
    ok(&events_args(&data, &clim, &whole, &["--threads", "1"]));
    let (direct, appended) =
        (netcdf::open(whole.join("events.nc")).unwrap(), netcdf::open(banded.join("events.nc")).unwrap());
    assert!(!direct.dimension("event").unwrap().is_unlimited() && !appended.dimension("event").unwrap().is_unlimited());
    let names = |f: &netcdf::File| f.variables().map(|v| v.name()).collect::<Vec<_>>();
    assert_eq!(names(&direct), names(&appended));
    assert_eq!(names(&direct).len(), 30);
    for v in direct.variables() {
        let w = appended.variable(&v.name()).unwrap();
        assert_eq!(v.vartype(), w.vartype(), "{}", v.name());
        let attrs = |v: &netcdf::Variable| {
            v.attributes().map(|a| format!("{}={:?}", a.name(), a.value().unwrap())).collect::<Vec<_>>()
        };
        assert_eq!(attrs(&v), attrs(&w), "{}", v.name());
        let bits = |d: &Path| read(&d.join("events.nc"), &v.name()).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&whole), bits(&banded), "events.nc {}", v.name());
    }
    for (file, vars) in [
        ("events.nc", vec!["lat_index", "time_start", "intensity_cumulative", "rate_decline", "category"]),
        ("summary.nc", vec!["count", "intensity_max_max", "total_icum"]),
    ] {
        for var in vars {
            let bits = |d: &Path| read(&d.join(file), var).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&banded), bits(&whole), "{file} {var}");
        }
    }
    // deflated float64 inputs (forked readers, a shared float64 pool): the same values
    let deflated = write_inputs(dir.path(), &days, &w, Files::Deflated);
    let forked = dir.path().join("forked");
    ok(&events_args(&deflated, &clim, &forked, &["--max-mem", "120000"]));
    for var in ["time_peak", "intensity_max", "intensity_var_abs", "rate_onset"] {
        let bits = |d: &Path| read(&d.join("events.nc"), var).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&forked), bits(&whole), "{var}");
    }
    // int16 files (an int16 pool, decoded when gathered) against the reference on the decoded
    // values, in bands
    let packed = write_inputs(dir.path(), &days, &w, Files::Packed);
    let from_ints = dir.path().join("from_ints");
    ok(&events_args(&packed, &clim, &from_ints, &["--max-mem", "80000"]));
    check_outputs(&from_ints, &unpacked(&w), &days, false);
    // cold spells against p10, beside the heatwaves
    ok(&events_args(&data, &clim, &whole, &["--cold"]));
    check_outputs(&whole, &w, &days, true);
    let mut names = entries(&whole);
    names.sort();
    assert_eq!(names, ["events.nc", "events_cold.nc", "summary.nc", "summary_cold.nc"]);
    // --both: heatwaves and cold spells from one read, in bands: the reference's, and bit for
    // bit the files of the two runs above
    let both = dir.path().join("both");
    ok(&events_args(&data, &clim, &both, &["--both", "--max-mem", "250000"]));
    check_outputs(&both, &w, &days, false);
    check_outputs(&both, &w, &days, true);
    for (file, vars) in [
        ("events.nc", vec!["lon_index", "time_end", "intensity_mean_relThresh", "rate_onset", "category"]),
        ("events_cold.nc", vec!["lat_index", "index_peak", "intensity_max_abs", "rate_decline", "category"]),
        ("summary.nc", vec!["count", "duration", "total_days"]),
        ("summary_cold.nc", vec!["count", "intensity_max_max", "total_icum"]),
    ] {
        for var in vars {
            let bits = |d: &Path| read(&d.join(file), var).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&both), bits(&whole), "--both {file} {var}");
        }
    }
    let e = fails(&events_args(&data, &clim, &both, &["--both", "--cold", "--overwrite"]));
    assert!(e.contains("--cold") && e.contains("--both"), "{e}");
    // an existing output is not replaced without --overwrite
    let e = fails(&events_args(&data, &clim, &whole, &[]));
    assert!(e.contains("events.nc") && e.contains("--overwrite"), "{e}");
}

/// Several bands write the files one band writes: every variable of the four outputs with its
/// type, attributes, storage (the `event` dimension fixed, contiguous or chunked alike) and
/// values bit for bit, and the global attributes but the history's time, in every output form
/// (float64 or float32 events, uncompressed or deflated).
#[test]
fn bands_write_the_files_of_one_band() {
    let dir = tmp();
    let (_, _, data, clim) = plain_job(dir.path());
    let all = ["events.nc", "summary.nc", "events_cold.nc", "summary_cold.nc"];
    let forms: [&[&str]; 4] =
        [&[], &["--deflate", "1"], &["--output-type", "f32"], &["--output-type", "f32", "--deflate", "1"]];
    for (k, form) in forms.iter().enumerate() {
        let flags = |more: &[&'static str]| [&["--both"][..], form, more].concat();
        let one = dir.path().join(format!("one{k}"));
        let out = crate::common::bin()
            .env("SSTCLIM_EVENTS_MIN_BANDS", "1")
            .args(events_args(&data, &clim, &one, &flags(&[])))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains(" 1 band(s))"), "{text}{}", String::from_utf8_lossy(&out.stderr));
        // one row a band (about 144 kB: two rows' series, the next band read while one is
        // detected with 4 threads, and every cell's events)
        let many = dir.path().join(format!("many{k}"));
        let out = ok(&events_args(&data, &clim, &many, &flags(&["--max-mem", "150000", "--threads", "4"])));
        assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("{NLAT} band(s)")), "{form:?}");
        for name in all {
            let (a, b) = (netcdf::open(one.join(name)).unwrap(), netcdf::open(many.join(name)).unwrap());
            let globals = |f: &netcdf::File| {
                f.attributes()
                    .filter(|a| a.name() != "history")
                    .map(|a| format!("{}={:?}", a.name(), a.value().unwrap()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(globals(&a), globals(&b), "{name} {form:?}");
            let dims =
                |f: &netcdf::File| f.dimensions().map(|d| (d.name(), d.len(), d.is_unlimited())).collect::<Vec<_>>();
            assert_eq!(dims(&a), dims(&b), "{name} {form:?}");
            assert!(dims(&a).iter().all(|d| !d.2), "{name}: {:?}", dims(&a));
            assert_eq!(a.variables().count(), b.variables().count());
            for v in a.variables() {
                let w = b.variable(&v.name()).unwrap();
                assert_eq!(v.vartype(), w.vartype(), "{name} {}", v.name());
                assert_eq!(v.chunking().unwrap(), w.chunking().unwrap(), "{name} {}", v.name());
                let attrs = |v: &netcdf::Variable| {
                    v.attributes().map(|a| format!("{}={:?}", a.name(), a.value().unwrap())).collect::<Vec<_>>()
                };
                assert_eq!(attrs(&v), attrs(&w), "{name} {}", v.name());
                let bits = |d: &Path| read(&d.join(name), &v.name()).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&one), bits(&many), "{name} {} {form:?}", v.name());
            }
        }
        assert!(read(&one.join("events.nc"), "duration").0.len() > 10, "too few events to compare");
    }
}

/// Every variable of the files in `a` and `b` (`names`), read back through libnetcdf: values
/// bit for bit equal, or (`rounded`) those of `a` rounded to float32 where `b` stores float32.
fn same_values(a: &Path, b: &Path, names: &[&str], rounded: bool) {
    for name in names {
        let (fa, fb) = (netcdf::open(a.join(name)).unwrap(), netcdf::open(b.join(name)).unwrap());
        assert_eq!(fa.variables().count(), fb.variables().count(), "{name}");
        for v in fa.variables() {
            let w = fb.variable(&v.name()).unwrap();
            let float32 = w.vartype() != v.vartype();
            assert!(!float32 || rounded, "{name} {}: {:?} vs {:?}", v.name(), v.vartype(), w.vartype());
            let want: Vec<u64> = read(&a.join(name), &v.name())
                .0
                .iter()
                .map(|&x| if float32 { f64::from(x as f32) } else { x }.to_bits())
                .collect();
            let got: Vec<u64> = read(&b.join(name), &v.name()).0.iter().map(|x| x.to_bits()).collect();
            assert_eq!(got, want, "{name} {}", v.name());
        }
    }
}

/// `--output-type f32` and `--deflate`: the outputs read back through libnetcdf hold the
/// default outputs' values (exactly; the event catalogue's float fields rounded to float32
/// with f32), the summaries (and with one band events.nc) chunked, shuffled where asked and
/// deflated as declared, in one band and in several (which append events.nc through
/// libnetcdf).
#[test]
fn float32_and_deflated_outputs_hold_the_same_values() {
    let dir = tmp();
    let (_, _, data, clim) = plain_job(dir.path());
    let all = ["events.nc", "summary.nc", "events_cold.nc", "summary_cold.nc"];
    let plain = dir.path().join("plain");
    ok(&events_args(&data, &clim, &plain, &["--both"]));
    let deflated = dir.path().join("deflated");
    ok(&events_args(&data, &clim, &deflated, &["--both", "--deflate", "4", "--shuffle", "false"]));
    same_values(&plain, &deflated, &all, false);
    let small = dir.path().join("small");
    ok(&events_args(&data, &clim, &small, &["--both", "--output-type", "f32", "--deflate", "1"]));
    same_values(&plain, &small, &all, true);
    let f32_only = dir.path().join("f32");
    ok(&events_args(&data, &clim, &f32_only, &["--both", "--output-type", "f32"]));
    same_values(&small, &f32_only, &all, false);
    let banded = dir.path().join("banded");
    ok(&events_args(
        &data,
        &clim,
        &banded,
        &["--both", "--output-type", "f32", "--deflate", "1", "--max-mem", "250000"],
    ));
    same_values(&small, &banded, &all, false);
    // the storage HDF5 reports
    use sstclim::nc::chunked::locate_chunked;
    for (dir, shuffle) in [(&deflated, false), (&small, true), (&banded, true)] {
        let f = dir.join("summary.nc");
        locate_chunked(&f, "total_days", (&[2, NLAT, NLON], &[1, NLAT, NLON]), (true, 4), shuffle).unwrap();
        assert!(locate_chunked(&f, "total_days", (&[2, NLAT, NLON], &[1, NLAT, NLON]), (true, 4), !shuffle).is_err());
    }
    let n = read(&small.join("events.nc"), "duration").0.len();
    let ev = small.join("events.nc");
    locate_chunked(&ev, "rate_onset", (&[n], &[n]), (true, 4), true).unwrap();
    locate_chunked(&ev, "category", (&[n], &[n]), (false, 1), true).unwrap();
    locate_chunked(&deflated.join("events.nc"), "rate_onset", (&[n], &[n]), (true, 8), false).unwrap();
    assert!(locate_chunked(&plain.join("summary.nc"), "count", (&[2, NLAT, NLON], &[1, NLAT, NLON]), (true, 4), true)
        .is_err());
    // float32 is smaller (deflate is not, on files this small: HDF5's chunk indexes outweigh
    // what it saves; see bench-results/runs/2026-12-02-vm-events-s37 for a real grid)
    let size = |d: &Path| all.iter().map(|n| std::fs::metadata(d.join(n)).unwrap().len()).sum::<u64>();
    assert!(size(&f32_only) < size(&plain), "{} {}", size(&f32_only), size(&plain));
    // refused: int16 events, --shuffle without --deflate, a level past 9
    for (flags, expect) in [
        (vec!["--output-type", "i16"], "f64 or f32"),
        (vec!["--shuffle"], "needs --deflate"),
        (vec!["--deflate", "10"], "1-9"),
    ] {
        let out = dir.path().join("refused");
        one_line_error(&events_args(&data, &clim, &out, &flags), &out, &[expect]);
    }
}

fn one_line_error(args: &[String], out: &Path, expect: &[&str]) {
    let e = fails(args);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    for x in expect {
        assert!(e.contains(x), "{x:?} not in {e}");
    }
    let left: Vec<String> = entries(out).into_iter().filter(|n| n.ends_with(".nc") || n.contains("partial")).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn bad_inputs_give_one_line_and_no_outputs() {
    let dir = tmp();
    let (_, w, data, clim) = plain_job(dir.path());
    let out = dir.path().join("out");
    // analysis years outside the input
    let mut args = events_args(&data, &clim, &out, &[]);
    args[7] = "1989-1991".into();
    one_line_error(&args, &out, &["--years 1989-1991", "do not exist", "sst_1989_001.nc"]);
    // a climatology of another grid
    let other = dir.path().join("other_grid.nc");
    write_clim(&other, &w, &lat()[..4], "hobday366");
    one_line_error(&events_args(&data, &other, &out, &[]), &out, &["other_grid.nc", "grid", "4x4", "4x5"]);
    // shifted coordinates
    let shifted = dir.path().join("shifted.nc");
    write_clim(&shifted, &w, &lat().iter().map(|x| x + 0.25).collect::<Vec<_>>(), "hobday366");
    one_line_error(&events_args(&data, &shifted, &out, &[]), &out, &["shifted.nc", "lat[0]"]);
    // a climatology of another calendar
    let ordinal = dir.path().join("ordinal.nc");
    write_clim(&ordinal, &w, &lat(), "ordinal");
    one_line_error(&events_args(&data, &ordinal, &out, &[]), &out, &["ordinal.nc", "calendar"]);
    // not a climatology at all: an input file
    let input = data.join("sst_1990_001.nc");
    one_line_error(&events_args(&data, &input, &out, &[]), &out, &["sst_1990_001.nc", "not a climatology"]);
    // a threshold the file does not have
    one_line_error(&events_args(&data, &clim, &out, &["--percentile", "95"]), &out, &["sst_p95", "not in the file"]);
    // neither a climatology nor a baseline
    let args: Vec<String> = ["-q", "events", "-i", &s(&data), "-o", &s(&out), "--years", "1990-1991"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    one_line_error(&args, &out, &["--climatology FILE", "--baseline YEARS"]);
    // a climatology flag of --baseline beside a climatology file
    one_line_error(&events_args(&data, &clim, &out, &["--smooth", "5"]), &out, &["--smooth", "--baseline only"]);
}

/// `events --baseline` computes the climatology in the same run: its outputs are bit for bit
/// those of `run --layout climatology` with marineHeatWaves' settings followed by `events
/// --climatology`, and nothing of the climatology is left behind. A baseline outside the input
/// fails in one line with no outputs.
#[test]
fn baseline_in_the_same_run_equals_run_then_events() {
    let dir = tmp();
    let data = dir.path().join("data");
    // the windows extend into the years around the baseline (--window-edges extend)
    let gen = ["--grid", "3x2", "--years", "1990-1993", "--doys", "1-366", "--land-fraction", "0"];
    common::generate(
        &data,
        &[&gen[..], &["--all-missing-cells", "0", "--ice-missing-fraction", "0", "--seed", "5"]].concat(),
    );
    // the generated days are independent from day to day: runs of a day make events to compare
    let base = |out: &Path| -> Vec<String> {
        ["-q", "events", "-i", &s(&data), "-o", &s(out), "--years", "1990-1993", "--min-duration", "1"]
            .iter()
            .map(|x| x.to_string())
            .collect()
    };
    let with = |mut v: Vec<String>, more: &[&str]| {
        v.extend(more.iter().map(|x| x.to_string()));
        v
    };
    // the climatology first, with marineHeatWaves' settings spelled out
    let clim = dir.path().join("clim");
    let settings = ["--calendar", "hobday366", "--half-window", "5", "--method", "7", "--window-edges", "extend"];
    let run = common::run_args(&data, &clim, "1991-1992", "1-366");
    ok(&with(with(run, &settings), &["--feb29", "interpolate", "--smooth", "31", "--layout", "climatology"]));
    let two_steps = dir.path().join("two_steps");
    ok(&with(base(&two_steps), &["--climatology", &s(&clim.join("climatology.nc"))]));
    let one_step = dir.path().join("one_step");
    ok(&with(base(&one_step), &["--baseline", "1991-1992"]));
    let mut names = entries(&one_step);
    names.sort();
    assert_eq!(names, ["events.nc", "summary.nc"], "the baseline's directory and the lock are gone");
    let (count, _) = read(&one_step.join("events.nc"), "duration");
    assert!(!count.is_empty(), "no events to compare");
    for file in ["events.nc", "summary.nc"] {
        let vars: Vec<String> = netcdf::open(two_steps.join(file)).unwrap().variables().map(|v| v.name()).collect();
        assert!(vars.len() > 10, "{file}: {vars:?}");
        for var in vars {
            let bits = |d: &Path| read(&d.join(file), &var).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one_step), bits(&two_steps), "{file} {var}");
        }
    }
    // the same provenance (the climatology kept in memory repeats what the file says), the
    // climatology's path and the command aside
    let globals = |d: &Path| -> Vec<(String, String)> {
        let f = netcdf::open(d.join("events.nc")).unwrap();
        let all: Vec<(String, String)> = f
            .attributes()
            .filter(|a| !["climatology_file", "history"].contains(&a.name()))
            .map(|a| (a.name().to_string(), format!("{:?}", a.value().unwrap())))
            .collect();
        all
    };
    let attrs = globals(&one_step);
    assert!(attrs.iter().any(|(n, v)| n == "climatology_smoothing_width" && v.contains("31")), "{attrs:?}");
    assert_eq!(attrs, globals(&two_steps));
    // another threshold's computation differs (the comparison above can fail)
    let p80 = dir.path().join("p80");
    ok(&with(base(&p80), &["--baseline", "1991-1992", "--percentile", "80"]));
    let (more, _) = read(&p80.join("events.nc"), "duration");
    assert!(more.len() > count.len(), "{} events at p80, {} at p90", more.len(), count.len());
    // a baseline outside the input: one line, exit 2, nothing left
    let bad = dir.path().join("bad");
    one_line_error(
        &with(base(&bad), &["--baseline", "1985-1992"]),
        &bad,
        &["--baseline 1985-1992", "missing", "sst_1985_", "asks for 1985-"],
    );
    assert!(entries(&bad).is_empty(), "{:?}", entries(&bad));
}

/// `--backend auto` (a GPU where one starts: on the GPU node, the event kernel) writes the
/// outputs `--backend cpu` (the CPU scan) writes: float32, float64 and int16 inputs, heatwaves
/// and cold spells, in one band and in several, compared by `sstclim compare --tolerance 0`
/// (values bit for bit, NaN as the fill value it is: its payload may differ between devices).
#[test]
fn every_backend_writes_the_outputs_of_the_cpu_scan() {
    let dir = tmp();
    let days = Days::of_years(YEARS.0..=YEARS.1, Calendar::Hobday366);
    let w = world(&days);
    let clim = dir.path().join("climatology.nc");
    write_clim(&clim, &w, &lat(), "hobday366");
    for files in [Files::Plain, Files::Deflated, Files::Packed] {
        let data = write_inputs(dir.path(), &days, &w, files);
        for (bands, more) in [("one", &[][..]), ("three", &["--max-mem", "120000"][..])] {
            let out = |backend: &str| dir.path().join(format!("{files:?}-{bands}-{backend}"));
            for backend in ["auto", "cpu"] {
                let args = [&["--both", "--backend", backend][..], more].concat();
                ok(&events_args(&data, &clim, &out(backend), &args));
            }
            assert!(!read(&out("cpu").join("events.nc"), "duration").0.is_empty(), "the world has heatwaves");
            assert!(!read(&out("cpu").join("events_cold.nc"), "duration").0.is_empty(), "and cold spells");
            let same = common::bin()
                .args(["compare", &s(&out("auto")), &s(&out("cpu")), "--tolerance", "0"])
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&same.stdout);
            assert!(
                same.status.success() && said.contains("EQUAL"),
                "{files:?} inputs, {bands} band(s): {said}{}",
                String::from_utf8_lossy(&same.stderr)
            );
        }
    }
}
