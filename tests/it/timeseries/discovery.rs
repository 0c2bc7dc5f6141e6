//! Time-series inputs found by the real binary: directories, globs, lists and several paths;
//! each date mapped to its file and step (the debug log lists every pool slot's); outputs in
//! the input's calendar; bad time axes refused with one line and no outputs.

use std::path::Path;

use crate::common::{self, fails, ok, s, tmp};

const NLAT: usize = 3;
const NLON: usize = 4;

/// A deterministic field for day number `n` (values differ by day and cell).
fn field(n: i64) -> Vec<f32> {
    (0..NLAT * NLON).map(|c| 10.0 + ((n * 7 + c as i64 * 13) % 31) as f32 * 0.25).collect()
}

/// `sst(time, lat, lon)` holding the days `first..first + n` (day numbers of `calendar`,
/// with time values `day - origin` in "days since ..." `units`).
fn series(path: &Path, days: std::ops::Range<i64>, units: &str, origin: i64, calendar: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = netcdf::create(path).unwrap();
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    f.add_unlimited_dimension("time").unwrap();
    let lat: Vec<f64> = (0..NLAT).map(|i| -10.0 + 10.0 * i as f64).collect();
    let lon: Vec<f64> = (0..NLON).map(|i| 10.0 * i as f64).collect();
    let mut v = f.add_variable::<f64>("lat", &["lat"]).unwrap();
    v.put_attribute("units", "degrees_north").unwrap();
    v.put_values(&lat, ..).unwrap();
    let mut v = f.add_variable::<f64>("lon", &["lon"]).unwrap();
    v.put_attribute("units", "degrees_east").unwrap();
    v.put_values(&lon, ..).unwrap();
    let times: Vec<f64> = days.clone().map(|d| (d - origin) as f64 + 0.5).collect();
    let mut t = f.add_variable::<f64>("valid_time", &["time"]).unwrap();
    t.put_attribute("standard_name", "time").unwrap();
    t.put_attribute("units", units).unwrap();
    t.put_attribute("calendar", calendar).unwrap();
    t.put_values(&times, ..).unwrap();
    let values: Vec<f32> = days.clone().flat_map(field).collect();
    let mut v = f.add_variable::<f32>("sst", &["time", "lat", "lon"]).unwrap();
    v.put_attribute("units", "degC").unwrap();
    v.put_values(&values, (0..(days.end - days.start) as usize, .., ..)).unwrap();
}

/// The (date, file name, step) of every pool slot, from the debug log.
fn slots(stderr: &str) -> Vec<(String, String, usize)> {
    stderr
        .lines()
        .filter_map(|l| l.split_once("input slot ").map(|(_, r)| r))
        .map(|r| {
            let (_, r) = r.split_once(": ").unwrap();
            let (date, r) = r.split_once(" = ").unwrap();
            let (file, step) = r.rsplit_once(" step ").unwrap();
            let name = Path::new(file).file_name().unwrap().to_string_lossy().into_owned();
            (date.to_string(), name, step.parse().unwrap())
        })
        .collect()
}

fn run_logged(args: &[String]) -> String {
    let out = common::bin().args(args).env("RUST_LOG", "sstclim=debug").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}\n{stderr}");
    stderr
}

fn args(input: &[String], out: &Path, years: &str, doys: &str, more: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["run".into(), "--input".into()];
    v.extend(input.iter().cloned());
    v.extend(["--output".into(), s(out), "--baseline".into(), years.into(), "--doys".into(), doys.into()]);
    v.extend(more.iter().map(|m| m.to_string()));
    v
}

/// Day number of Jan 1 of `year` in a calendar of `len`-day years (noleap: 365).
fn jan1(year: i64, len: i64) -> i64 {
    year * len
}

/// A noleap series in a monthly file and a yearly one (names not by day, ERA5's
/// `valid_time`), in a directory: each date is mapped to its file and step, windows run over
/// noleap days, day 366 is left out, and the outputs say `noleap`.
#[test]
fn a_noleap_directory_of_mixed_files_maps_dates_to_steps() {
    let dir = tmp();
    let data = dir.path().join("data");
    let units = "days since 2000-01-01";
    let origin = jan1(2000, 365);
    // December 2000 (days 334..365 of the noleap year), then the whole of 2001
    series(&data.join("sst_200012.nc"), jan1(2000, 365) + 334..jan1(2001, 365), units, origin, "noleap");
    series(&data.join("sst_2001.nc"), jan1(2001, 365)..jan1(2002, 365), units, origin, "365_day");
    let out = dir.path().join("out");
    let log =
        run_logged(&args(&[s(&data)], &out, "2001-2001", "1-1", &["--half-window", "2", "--window-edges", "extend"]));
    let got = slots(&log);
    let want = [
        ("2000-12-30", "sst_200012.nc", 29),
        ("2000-12-31", "sst_200012.nc", 30),
        ("2001-01-01", "sst_2001.nc", 0),
        ("2001-01-02", "sst_2001.nc", 1),
        ("2001-01-03", "sst_2001.nc", 2),
    ];
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, want.map(|(d, f, k)| (d.to_string(), f.to_string(), k)), "{log}");
    // Feb 28 is followed by Mar 1; noleap has no day 366: asked for, it is an error naming
    // the calendar (tests/it/timeseries/model_calendar_cli.rs), so day 365 is the year's last
    let out2 = dir.path().join("out2");
    let log = run_logged(&args(&[s(&data)], &out2, "2001-2001", "59-60,365", &["--half-window", "1"]));
    let mut got = slots(&log);
    got.sort();
    let dates: Vec<&str> = got.iter().map(|(d, _, _)| d.as_str()).collect();
    assert_eq!(dates, ["2001-02-27", "2001-02-28", "2001-03-01", "2001-03-02", "2001-12-30", "2001-12-31"]);
    assert!(got.iter().any(|(d, f, k)| d == "2001-03-01" && f == "sst_2001.nc" && *k == 59));
    let mut names = common::entries(&out2);
    names.sort();
    assert_eq!(
        names,
        ["mean_doy059.nc", "mean_doy060.nc", "mean_doy365.nc", "p90_doy059.nc", "p90_doy060.nc", "p90_doy365.nc"]
    );
    let f = netcdf::open(out2.join("mean_doy060.nc")).unwrap();
    let cal = f.variable("time").unwrap().attribute_value("calendar").unwrap().unwrap();
    assert_eq!(cal, netcdf::AttributeValue::Str("noleap".into()));
    // day 60 of noleap is Mar 1: the time axis says so (days since 2001-01-01)
    let t: Vec<f64> = f.variable("time").unwrap().get_values::<f64, _>(..).unwrap();
    assert_eq!(t, [59.0]);
}

/// The same daily files by directory, glob, @list and several paths: the same slots.
#[test]
fn globs_lists_and_several_paths_find_the_same_files() {
    let dir = tmp();
    let data = dir.path().join("data");
    common::generate(&data, &["--grid", "8x6", "--years", "2001-2002", "--doys", "1-6"]);
    let run = |input: &[String], name: &str| {
        let log = run_logged(&args(input, &dir.path().join(name), "2001-2002", "2-4", &["--half-window", "1"]));
        let mut got = slots(&log);
        got.sort();
        got
    };
    let by_dir = run(&[s(&data)], "a");
    assert_eq!(by_dir.len(), 10);
    assert!(by_dir.iter().all(|(_, _, k)| *k == 0));
    assert_eq!(run(&[format!("{}/sst_*.nc", data.display())], "b"), by_dir);
    let list = dir.path().join("list.txt");
    let files: Vec<String> =
        (1..=6).flat_map(|d| [2001, 2002].map(|y| s(&data.join(format!("sst_{y}_{d:03}.nc"))))).collect();
    std::fs::write(&list, files.join("\n")).unwrap();
    assert_eq!(run(&[format!("@{}", list.display())], "c"), by_dir);
    assert_eq!(run(&files, "d"), by_dir);
    assert_eq!(common::output_bits(&dir.path().join("a")), common::output_bits(&dir.path().join("d")));
}

/// Bad time series: one line naming the file and the problem, exit 2, no outputs.
#[test]
fn bad_time_series_are_refused_with_one_line() {
    let dir = tmp();
    let units = "days since 2000-01-01";
    let g = |y: i64| jan1(y, 365);
    let cases: Vec<(&str, Box<dyn Fn(&Path)>, &str)> = vec![
        (
            "overlap",
            Box::new(move |d: &Path| {
                series(&d.join("a.nc"), g(2001)..g(2001) + 40, units, g(2000), "noleap");
                series(&d.join("b.nc"), g(2001) + 30..g(2002), units, g(2000), "noleap");
            }),
            "2001-01-31 is in two input files",
        ),
        (
            "calendars",
            Box::new(move |d: &Path| {
                series(&d.join("a.nc"), g(2001)..g(2001) + 40, units, g(2000), "noleap");
                series(&d.join("b.nc"), 2001 * 360 + 40..2002 * 360, units, 2000 * 360, "360_day");
            }),
            "calendar '360_day' but",
        ),
        (
            "units",
            Box::new(move |d: &Path| {
                series(&d.join("a.nc"), g(2001)..g(2002), "days after 2000-01-01", g(2000), "noleap")
            }),
            "time units 'days after 2000-01-01'",
        ),
        (
            "calendar",
            Box::new(move |d: &Path| series(&d.join("a.nc"), g(2001)..g(2002), units, g(2000), "mayan")),
            "unknown calendar 'mayan'",
        ),
    ];
    for (name, make, expected) in cases {
        let data = dir.path().join(name);
        make(&data);
        let out = dir.path().join(format!("out_{name}"));
        let err = fails(&args(&[s(&data)], &out, "2001-2001", "1-365", &["-q"]));
        assert!(err.contains(expected), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(common::entries(&out).iter().all(|e| e.starts_with('.')), "{name}: {:?}", common::entries(&out));
    }
}

/// A yearly series equals the same days as one file per day, bit for bit.
#[test]
fn yearly_files_equal_daily_files() {
    let dir = tmp();
    let (yearly, daily) = (dir.path().join("yearly"), dir.path().join("daily"));
    let base = 2001 * 365;
    for y in 2001..=2002 {
        series(
            &yearly.join(format!("sst.day.mean.{y}.nc")),
            y * 365..(y + 1) * 365,
            "days since 2001-01-01",
            base,
            "noleap",
        );
        // the days the windows of days 1-40 take (h = 3; the last days of the year reach into
        // the next year's first days)
        for k in (0..45).chain(360..365) {
            let n = y * 365 + k;
            series(&daily.join(format!("sst_{y}{:03}.nc", k + 1)), n..n + 1, "days since 2001-01-01", base, "noleap");
        }
    }
    let more = ["-q", "--half-window", "3"];
    ok(&args(&[s(&yearly)], &dir.path().join("a"), "2001-2002", "1-40", &more));
    ok(&args(&[s(&daily)], &dir.path().join("b"), "2001-2002", "1-40", &more));
    assert_eq!(common::output_bits(&dir.path().join("a")), common::output_bits(&dir.path().join("b")));
}

/// A 360_day series makes a 360-day climatology: `--doys 1-366` is the whole year, day 60 is
/// Feb 30, and the time axis and its bounds count 360-day years.
#[test]
fn a_360_day_series_makes_a_360_day_climatology() {
    let dir = tmp();
    let data = dir.path().join("data");
    for y in 2001..=2002 {
        series(
            &data.join(format!("tos_day_{y}.nc")),
            y * 360..(y + 1) * 360,
            "days since 2001-01-01",
            2001 * 360,
            "360_day",
        );
    }
    let out = dir.path().join("out");
    // the whole 360-day year: --doys 1-360, or no --doys (every day of the input's year)
    ok(&args(&[s(&data)], &out, "2001-2002", "1-360", &["-q", "--layout", "climatology", "--calendar", "hobday366"]));
    let f = netcdf::open(out.join("climatology.nc")).unwrap();
    assert_eq!(f.dimension("doy").unwrap().len(), 360);
    let time = f.variable("time").unwrap();
    assert_eq!(time.attribute_value("calendar").unwrap().unwrap(), netcdf::AttributeValue::Str("360_day".into()));
    let t: Vec<f64> = time.get_values::<f64, _>(..).unwrap();
    // each day at its first anchor: day 60 (Feb 30) is 59 days after Jan 1, day 360 is 359
    assert_eq!((t[0], t[59], t[359]), (0.0, 59.0, 359.0));
    let b: Vec<f64> = f.variable("climatology_bounds").unwrap().get_values::<f64, _>(..).unwrap();
    // the first window starts 5 days before 2001-01-01; the last ends after 2002-01-01 + 5
    assert_eq!((b[0], b[1]), (-5.0, 366.0));
}
