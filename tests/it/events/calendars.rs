//! `sstclim events` on model calendars (`360_day`, `noleap`): yearly CMIP6-like files written
//! here with planted events (one across the year's end, one at the last day of the series),
//! a climatology of that calendar's days of year, and the outputs compared field by field with
//! the independent reference detector (tests/it/common/events.rs), with the day of the series as the
//! calendar counts it (360 or 365 a year). `time_*` are checked as CF times of the input's
//! calendar, `--baseline` against `run --layout climatology` then `events --climatology`, and a
//! climatology of another calendar is refused in one line.

use std::path::{Path, PathBuf};

use crate::common::events::{
    ar1, block_average, close, detect as reference, ModelCalendar, Rng, Stored, DAY360, NOLEAP,
};
use crate::common::{self, entries, fails, ok, read, s, tmp};

const NLAT: usize = 3;
const NLON: usize = 2;
const NCELL: usize = NLAT * NLON;
const FIRST: i32 = 2001;
const YEARS: usize = 3;

fn lat() -> Vec<f64> {
    (0..NLAT).map(|i| -30.0 + 30.0 * i as f64).collect()
}

fn lon() -> Vec<f64> {
    (0..NLON).map(|i| 20.0 + 100.0 * i as f64).collect()
}

/// The climatology of cell `c` per day of the calendar's year: mean, p10, p90 (as float32
/// stores them).
fn clim_of(cal: ModelCalendar, c: usize) -> [Vec<f64>; 3] {
    let n = cal.year as f64;
    let mean: Vec<f64> = (0..cal.year)
        .map(|d| f64::from((10.0 + c as f64 + 3.0 * (2.0 * std::f64::consts::PI * d as f64 / n).sin()) as f32))
        .collect();
    let w = 1.0 + 0.1 * c as f64;
    let p90 = mean.iter().map(|m| f64::from((m + w) as f32)).collect();
    let p10 = mean.iter().map(|m| f64::from((m - w) as f32)).collect();
    [mean, p10, p90]
}

/// The series of cell `c` (float32 values, NaN missing): cell 0 quiet with planted heatwaves
/// and a cold spell, cell 1 all missing, the others AR(1) noise on the mean.
fn series(cal: ModelCalendar, c: usize, rng: &mut Rng) -> Vec<f64> {
    let [mean, p10, p90] = clim_of(cal, c);
    let n = cal.year * YEARS;
    let day = |v: &[f64], i: usize| v[i % cal.year];
    let f32_ = |x: f64| f64::from(x as f32);
    match c {
        0 => {
            let mut t: Vec<f64> = (0..n).map(|i| f32_(day(&mean, i) - 0.3)).collect();
            let y = cal.year;
            let runs: [(usize, usize, f64); 8] = [
                (0, 6, 0.8),     // at the first day
                (100, 5, 0.5),   // joined to the next across a gap of exactly 2
                (107, 6, 2.0),   //
                (200, 5, 0.4),   // not joined: a gap of exactly 3
                (208, 5, 0.4),   //
                (y - 3, 7, 1.5), // across the year's end: the last 3 days, then days 1-4
                (y + 150, 5, -2.5),
                (n - 6, 6, 1.0), // at the last day
            ];
            for (start, len, amount) in runs {
                for i in start..start + len {
                    let k = (i - start) as f64;
                    let bump = amount.abs() * (1.0 + 0.2 * k - 0.01 * k * k);
                    t[i] = f32_(if amount > 0.0 { day(&p90, i) + bump } else { day(&p10, i) - bump });
                }
            }
            // missing days in quiet stretches (they take the mean)
            t[150] = f64::NAN;
            t[300] = f64::NAN;
            t
        }
        1 => vec![f64::NAN; n],
        _ => {
            let per_day: Vec<f64> = (0..n).map(|i| day(&mean, i)).collect();
            ar1(rng, &per_day, 0.9, 1.0).into_iter().map(f32_).collect()
        }
    }
}

/// The dataset (one file a year) and its climatology file, in `cal`.
fn world(dir: &Path, cal: ModelCalendar) -> (PathBuf, PathBuf, Vec<Vec<f64>>) {
    let mut rng = Rng(31);
    let all: Vec<Vec<f64>> = (0..NCELL).map(|c| series(cal, c, &mut rng)).collect();
    let data = dir.join(format!("data-{}", cal.name));
    crate::common::events::write_series(&data, "tos", cal, FIRST, &lat(), &lon(), &all);
    let clim = dir.join(format!("clim-{}.nc", cal.name));
    write_clim(&clim, cal, Some(cal.name), cal.year);
    (data, clim, all)
}

/// A climatology file of `cal`'s values, its time axis in calendar `cf`, with `n_doy` days.
fn write_clim(path: &Path, cal: ModelCalendar, cf: Option<&str>, n_doy: usize) {
    let by_doy = |k: usize| -> Vec<f64> {
        let per_cell: Vec<[Vec<f64>; 3]> = (0..NCELL).map(|c| clim_of(cal, c)).collect();
        (0..n_doy * NCELL).map(|i| per_cell[i % NCELL][k][(i / NCELL) % cal.year]).collect()
    };
    let (mean, p10, p90) = (by_doy(0), by_doy(1), by_doy(2));
    let stats: [(&str, &[f64]); 3] = [("mean", &mean), ("p10", &p10), ("p90", &p90)];
    crate::common::events::write_climatology_in(path, "tos", &lat(), &lon(), "hobday366", cf, n_doy, &stats);
}

fn events_args(data: &Path, out: &Path, more: &[&str]) -> Vec<String> {
    let years = format!("{FIRST}-{}", FIRST + YEARS as i32 - 1);
    let v = ["-q", "events", "-i", &s(data), "-o", &s(out), "--years", &years];
    v.iter().chain(more).map(|x| x.to_string()).collect()
}

/// A text attribute of `var` in `path`.
fn attr(path: &Path, var: &str, name: &str) -> String {
    let f = netcdf::open(path).unwrap();
    let v = f.variable(var).unwrap();
    match v.attribute_value(name).unwrap().unwrap() {
        netcdf::AttributeValue::Str(s) => s,
        other => panic!("{var}:{name} = {other:?}"),
    }
}

/// events.nc / summary.nc (or the cold ones) of `out` against the reference on every cell, the
/// climatology `clim[cell] = [mean, p10, p90]` per day of `cal`'s year; returns the events of
/// cell 0 as (start, end) days of the series.
fn check(out: &Path, cal: ModelCalendar, all: &[Vec<f64>], clim: &[[Vec<f64>; 3]], cold: bool) -> Vec<(usize, usize)> {
    let (ev_name, sum_name) = if cold { ("events_cold.nc", "summary_cold.nc") } else { ("events.nc", "summary.nc") };
    let (events, summary) = (out.join(ev_name), out.join(sum_name));
    let ev = |var: &str| read(&events, var).0;
    let n = cal.year * YEARS;
    // the series' years as the calendar has them
    let year_of: Vec<usize> = (0..n).map(|i| i / cal.year).collect();
    let mut want = Vec::new();
    for c in 0..NCELL {
        let per_day = |k: usize| (0..n).map(|i| clim[c][k][i % cal.year]).collect::<Vec<f64>>();
        let thresh = per_day(if cold { 1 } else { 2 });
        let found = reference(&all[c], &per_day(0), &thresh, 5, Some(2), cold);
        let block = block_average(&found, &year_of, YEARS);
        // a cell without a climatology (all missing in the baseline) has no statistics
        let land = clim[c][0].iter().all(|m| m.is_nan());
        for (k, stat) in sstclim::events::summary::STATS.iter().enumerate() {
            let (vals, dims) = read(&summary, stat);
            assert_eq!(dims.iter().map(|d| d.1).collect::<Vec<_>>(), [YEARS, NLAT, NLON]);
            for y in 0..YEARS {
                let expect = if land { f64::NAN } else { f64::from(block[k][y] as f32) };
                let got = vals[y * NCELL + c];
                assert!(close(got, expect), "{} cell {c} {stat} year {y}: {got} vs {expect}", cal.name);
            }
        }
        want.extend(found.into_iter().map(|e| (c, e)));
    }
    let (start, lat_i, lon_i) = (ev("index_start"), ev("lat_index"), ev("lon_index"));
    assert_eq!(start.len(), want.len(), "{} events", cal.name);
    assert!(want.len() > 20, "{} events", want.len());
    let floats: Vec<Vec<f64>> = sstclim::events::metrics::FLOAT_FIELDS.iter().map(|f| ev(f)).collect();
    let (end, dur, cat) = (ev("index_end"), ev("duration"), ev("category"));
    let times = [ev("time_start"), ev("time_end"), ev("time_peak")];
    // CF times of the input's calendar: days since 1970-01-01 counted in it
    let epoch = |i: usize| cal.days_since_1970(FIRST + (i / cal.year) as i32, i % cal.year + 1);
    for (k, (c, e)) in want.iter().enumerate() {
        assert_eq!((lat_i[k] as usize * NLON + lon_i[k] as usize), *c, "event {k}");
        assert_eq!((start[k] as usize, end[k] as usize), (e.start, e.end), "{} event {k}", cal.name);
        assert_eq!(dur[k] as u32, e.duration, "event {k}");
        assert_eq!(cat[k] as u8, e.category, "event {k}");
        for (t, day) in times.iter().zip([e.start, e.end, e.peak]) {
            assert_eq!(t[k] as i64, epoch(day), "{} event {k}", cal.name);
        }
        for (f, vals) in floats.iter().enumerate() {
            assert!(close(vals[k], e.floats[f]), "event {k} field {f}: {} vs {}", vals[k], e.floats[f]);
        }
    }
    for var in ["time_start", "time_end", "time_peak"] {
        assert_eq!(attr(&events, var, "units"), "days since 1970-01-01 00:00:00");
        assert_eq!(attr(&events, var, "calendar"), cal.name);
    }
    // the summary's years are the calendar's: their middles and bounds in its days
    assert_eq!(attr(&summary, "time", "calendar"), cal.name);
    let jan1 = |y: usize| cal.days_since_1970(FIRST + y as i32, 1) as f64;
    let mid: Vec<f64> = (0..YEARS).map(|y| 0.5 * (jan1(y) + jan1(y + 1))).collect();
    assert_eq!(read(&summary, "time").0, mid);
    let bounds: Vec<f64> = (0..YEARS).flat_map(|y| [jan1(y), jan1(y + 1)]).collect();
    assert_eq!(read(&summary, "time_bnds").0, bounds);
    want.iter().filter(|(c, _)| *c == 0).map(|(_, e)| (e.start, e.end)).collect()
}

#[test]
fn model_calendar_events_equal_the_reference_with_cf_times_of_that_calendar() {
    let dir = tmp();
    for cal in [DAY360, NOLEAP] {
        let (data, clim, all) = world(dir.path(), cal);
        let out = dir.path().join(format!("out-{}", cal.name));
        // --both in bands of one row: heatwaves against p90, cold spells against p10
        ok(&events_args(&data, &out, &["--climatology", &s(&clim), "--both", "--max-mem", "100000"]));
        let clims: Vec<[Vec<f64>; 3]> = (0..NCELL).map(|c| clim_of(cal, c)).collect();
        let heat = check(&out, cal, &all, &clims, false);
        let cold = check(&out, cal, &all, &clims, true);
        // the planted structure of cell 0, stated: first day, the joined pair, the 3-day gap
        // kept, across the year's end, the last day
        let (y, n) = (cal.year, cal.year * YEARS);
        assert_eq!(heat, [(0, 5), (100, 112), (200, 204), (208, 212), (y - 3, y + 3), (n - 6, n - 1)], "{}", cal.name);
        assert_eq!(cold, [(y + 150, y + 154)], "{}", cal.name);
        // the year-end event in CF time: it starts 3 days before the year's end and has 7 days
        let ev = |var: &str| read(&out.join("events.nc"), var).0;
        let at = ev("index_start").iter().position(|&s| s as usize == y - 3).unwrap();
        let t0 = ev("time_start")[at] as i64;
        assert_eq!(t0, cal.days_since_1970(FIRST, y - 2));
        assert_eq!(cal.month_day(y - 2), if y == 360 { (12, 28) } else { (12, 29) });
        assert_eq!((ev("time_end")[at] as i64 - t0, ev("duration")[at]), (6, 7.0));
        // the summary counts it in the year it starts in, its days in both years
        let days = |y: usize| read(&out.join("summary.nc"), "total_days").0[y * NCELL];
        assert_eq!((days(0), days(1)), (6.0 + 13.0 + 5.0 + 5.0 + 3.0, 4.0), "{}", cal.name);
    }
}

/// A 360_day climatology computed in the same run (`--baseline`): 360 days of year, bit for
/// bit the outputs of `run --layout climatology` then `events --climatology`, and the events
/// the reference finds against the climatology that run wrote.
#[test]
fn baseline_in_a_360_day_calendar_equals_run_then_events() {
    let dir = tmp();
    let (data, _, all) = world(dir.path(), DAY360);
    let clim_dir = dir.path().join("clim");
    let run: Vec<String> = [
        "-q",
        "run",
        "-i",
        &s(&data),
        "-o",
        &s(&clim_dir),
        "--baseline",
        "2002-2002",
        "--layout",
        "climatology",
        "--calendar",
        "hobday366",
        "--half-window",
        "5",
        "--method",
        "7",
        "--window-edges",
        "extend",
        "--feb29",
        "interpolate",
        "--smooth",
        "31",
        "--percentile",
        "90",
    ]
    .iter()
    .map(|x| x.to_string())
    .collect();
    ok(&run);
    let file = clim_dir.join("climatology.nc");
    let f = netcdf::open(&file).unwrap();
    assert_eq!(f.dimension("doy").unwrap().len(), 360);
    drop(f);
    assert_eq!(attr(&file, "time", "calendar"), "360_day");
    let two_steps = dir.path().join("two_steps");
    ok(&events_args(&data, &two_steps, &["--climatology", &s(&file)]));
    let one_step = dir.path().join("one_step");
    ok(&events_args(&data, &one_step, &["--baseline", "2002"]));
    let mut names = entries(&one_step);
    names.sort();
    assert_eq!(names, ["events.nc", "summary.nc"]);
    for name in ["events.nc", "summary.nc"] {
        let vars: Vec<String> = netcdf::open(two_steps.join(name)).unwrap().variables().map(|v| v.name()).collect();
        for var in vars {
            let bits = |d: &Path| read(&d.join(name), &var).0.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one_step), bits(&two_steps), "{name} {var}");
        }
    }
    // the reference on the climatology `run` wrote ([doy][cell], 360 days)
    // (the all-missing cell has none: its values are the fill value)
    let unfilled = |var: &str| {
        // (the attribute: the variables are written unfilled, so libnetcdf's fill mode is off)
        let fill = match netcdf::open(&file).unwrap().variable(var).unwrap().attribute_value("_FillValue") {
            Some(Ok(netcdf::AttributeValue::Double(f))) => Some(f),
            other => panic!("{var}: _FillValue {other:?}"),
        };
        read(&file, var).0.into_iter().map(|x| if Some(x) == fill { f64::NAN } else { x }).collect::<Vec<f64>>()
    };
    let (mean, p90) = (unfilled("tos_mean"), unfilled("tos_p90"));
    assert!(mean[1].is_nan() && !mean[0].is_nan() && !p90[NCELL + 2].is_nan());
    let clims: Vec<[Vec<f64>; 3]> = (0..NCELL)
        .map(|c| {
            let col = |v: &[f64]| (0..360).map(|d| v[d * NCELL + c]).collect::<Vec<f64>>();
            [col(&mean), vec![f64::NAN; 360], col(&p90)]
        })
        .collect();
    check(&one_step, DAY360, &all, &clims, false);
}

/// A climatology of another calendar (its time axis says so) is refused in one line naming
/// the file, with exit status 2 and no outputs; so is one with the wrong number of days.
#[test]
fn a_climatology_of_another_calendar_is_refused_in_one_line() {
    let dir = tmp();
    let (data, _, _) = world(dir.path(), DAY360);
    let out = dir.path().join("out");
    let cases: [(&str, Option<&str>, usize, &[&str]); 4] = [
        ("noleap.nc", Some("noleap"), 365, &["noleap.nc", "calendar", "noleap", "360_day"]),
        ("gregorian.nc", None, 366, &["gregorian.nc", "calendar", "standard", "360_day"]),
        ("proleptic.nc", Some("proleptic_gregorian"), 366, &["proleptic.nc", "proleptic_gregorian", "360_day"]),
        ("short.nc", Some("360_day"), 300, &["short.nc", "300 days of year", "all 360 of the 360_day calendar"]),
    ];
    for (name, cf, n_doy, expect) in cases {
        let clim = dir.path().join(name);
        write_clim(&clim, DAY360, cf, n_doy);
        let e = fails(&events_args(&data, &out, &["--climatology", &s(&clim)]));
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        for x in expect {
            assert!(e.contains(x), "{x:?} not in {e}");
        }
        let left: Vec<String> =
            entries(&out).into_iter().filter(|n| n.ends_with(".nc") || n.contains("partial")).collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // and a 360_day climatology for noleap input
    let (noleap, _, _) = world(dir.path(), NOLEAP);
    let c360 = dir.path().join("c360.nc");
    write_clim(&c360, DAY360, Some("360_day"), 360);
    let e = fails(&events_args(&noleap, &out, &["--climatology", &s(&c360)]));
    assert!(
        e.trim().lines().count() == 1 && e.contains("c360.nc") && e.contains("the input's calendar is noleap"),
        "{e}"
    );
}

/// float32 input with a scale and offset is detected in float64, as its values decode (and as
/// `run`'s float64 pool holds them), not rounded to float32: equal, field by field and bit for
/// bit, to the events of float64 files holding the decoded values.
#[test]
fn packed_float32_input_is_detected_as_its_float64_values() {
    let dir = tmp();
    let (_, clim, all) = world(dir.path(), NOLEAP);
    let (scale, offset) = (0.001, 20.0);
    let packed = dir.path().join("packed");
    let wide = dir.path().join("wide");
    let write =
        |d: &Path, how| crate::common::events::write_series_as(d, "tos", NOLEAP, FIRST, &lat(), &lon(), &all, how);
    write(&packed, Stored::F32Packed { scale, offset });
    write(&wide, Stored::F64DecodedFrom { scale, offset });
    let (a, b) = (dir.path().join("out-packed"), dir.path().join("out-wide"));
    for (data, out) in [(&packed, &a), (&wide, &b)] {
        ok(&events_args(data, out, &["--climatology", &s(&clim), "--both"]));
    }
    assert!(read(&a.join("events.nc"), "duration").0.len() >= 6, "the planted heatwaves are found");
    let same = common::bin().args(["compare", &s(&a), &s(&b), "--tolerance", "0"]).output().unwrap();
    let said = String::from_utf8_lossy(&same.stdout);
    assert!(same.status.success() && said.contains("EQUAL"), "{said}{}", String::from_utf8_lossy(&same.stderr));
}

/// A file packed unlike the first whose decoded value lies beyond float32's range, in the
/// float32 series events keep for unpacked float32 input: refused in one line naming the file,
/// never taken for a missing day.
#[test]
fn a_decoded_value_beyond_float32_in_a_float32_series_is_refused() {
    let dir = tmp();
    let (data, clim, mut all) = world(dir.path(), NOLEAP);
    // day 10 of the last year in cell 0 decodes to 1e39 in a file packed with a scale of 1e30
    all[0][(YEARS - 1) * NOLEAP.year + 10] = 1e39;
    let other = dir.path().join("other");
    crate::common::events::write_series_as(
        &other,
        "tos",
        NOLEAP,
        FIRST,
        &lat(),
        &lon(),
        &all,
        Stored::F32Packed { scale: 1e30, offset: 0.0 },
    );
    let last = format!("tos_day_{}.nc", FIRST + YEARS as i32 - 1);
    std::fs::copy(other.join(&last), data.join(&last)).unwrap();
    let out = dir.path().join("out");
    let e = fails(&events_args(&data, &out, &["--climatology", &s(&clim)]));
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains(&last) && e.contains("'tos'") && e.contains("beyond float32's range"), "{e}");
    let left: Vec<String> = entries(&out).into_iter().filter(|n| n.ends_with(".nc")).collect();
    assert!(left.is_empty(), "{left:?}");
}
