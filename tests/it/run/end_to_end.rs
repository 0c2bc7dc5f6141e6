//! The real binary on generated NetCDF: both storage types, both dimension orders, both
//! calendars, both layouts, memory-bounded tiling and missing files. Expected values come from
//! an oracle written here, independently of the crate: it reads the input files through the
//! netcdf crate, does its own date arithmetic, and applies the percentile formula by hand.

use std::collections::HashMap;
use std::path::Path;

use crate::common::*;

/// Days since 1970-01-01 (the oracle's own calendar arithmetic: count days year by year).
fn leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}
fn jan1(y: i32) -> i64 {
    let mut d = 0i64;
    if y >= 1970 {
        for yy in 1970..y {
            d += if leap(yy) { 366 } else { 365 };
        }
    } else {
        for yy in y..1970 {
            d -= if leap(yy) { 366 } else { 365 };
        }
    }
    d
}
/// (year, ordinal day) of a day number.
fn ymd_of(days: i64) -> (i32, i64) {
    let mut y = 1970;
    while days < jan1(y) {
        y -= 1;
    }
    while days >= jan1(y + 1) {
        y += 1;
    }
    (y, days - jan1(y) + 1)
}

/// The anchor day number of target `doy` in `year`, by the calendar's definition.
fn anchor(calendar: &str, year: i32, doy: i64) -> Option<i64> {
    let len = if leap(year) { 366 } else { 365 };
    let ordinal = match calendar {
        "ordinal" => doy,
        _ if leap(year) || doy < 60 => doy,
        _ if doy == 60 => return None,
        _ => doy - 1,
    };
    (ordinal <= len).then(|| jan1(year) + ordinal - 1)
}

/// Decoded 2-D field of a generated file, (lat, lon) order.
fn field(path: &Path) -> Vec<f64> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap();
    let (name, packed) = if f.variable("sst").is_some() { ("sst", false) } else { ("analysed_sst", true) };
    let v = f.variable(name).unwrap();
    let dims: Vec<String> = v.dimensions().iter().map(|d| d.name()).collect();
    let nlat = f.dimension_len("lat").unwrap();
    let nlon = f.dimension_len("lon").unwrap();
    let raw: Vec<f64> = v.get_values::<f64, _>(..).unwrap();
    let att = |n: &str| match v.attribute_value(n).unwrap().unwrap() {
        netcdf::AttributeValue::Float(x) => f64::from(x),
        netcdf::AttributeValue::Short(x) => f64::from(x),
        other => panic!("{n}: {other:?}"),
    };
    let lat_first = dims.iter().position(|d| d == "lat") < dims.iter().position(|d| d == "lon");
    let mut out = vec![f64::NAN; nlat * nlon];
    for j in 0..nlat {
        for i in 0..nlon {
            let r = if lat_first { raw[j * nlon + i] } else { raw[i * nlat + j] };
            out[j * nlon + i] = if packed {
                if r == att("_FillValue") || r < att("valid_min") || r > att("valid_max") {
                    f64::NAN
                } else {
                    r * att("scale_factor") + att("add_offset")
                }
            } else {
                r
            };
        }
    }
    out
}

/// Percentile by Hyndman-Fan type 5 or 7, straight from the definitions.
fn percentile(sorted: &[f64], p: f64, method: u8) -> f64 {
    let n = sorted.len() as f64;
    let r = if method == 5 { p * n + 0.5 } else { p * (n - 1.0) + 1.0 };
    let k = r.floor();
    if k < 1.0 {
        return sorted[0];
    }
    if k >= n {
        return sorted[sorted.len() - 1];
    }
    let (lo, hi) = (sorted[k as usize - 1], sorted[k as usize]);
    lo + (r - k) * (hi - lo)
}

struct Case<'a> {
    generate: &'a [&'a str],
    calendar: &'a str,
    method: u8,
    layout: &'a str,
}

/// Generate, run, and check every output value against the oracle.
fn check_against_oracle(case: &Case) {
    let dir = tmp();
    let (data, out) = (dir.path().join("data"), dir.path().join("out"));
    let mut g = vec!["--grid", "20x11", "--years", "2003-2005", "--doys", "50-80", "--missing-fraction", "0.2"];
    g.extend_from_slice(case.generate);
    generate(&data, &g);
    let (years, doys, h) = ((2003, 2005), (55i64, 75i64), 3i64);
    let method = case.method.to_string();
    ok(&with(
        run_args(&data, &out, "2003-2005", "55-75"),
        &["--half-window", "3", "--calendar", case.calendar, "--method", &method, "--layout", case.layout],
    ));
    let mut cache: HashMap<i64, Vec<f64>> = HashMap::new();
    let naming = if case.generate.contains(&"--naming") { "ostia" } else { "plain" };
    let file_of = |day: i64| {
        let (y, o) = ymd_of(day);
        if naming == "ostia" {
            let mut md = (1u32, o);
            let months = [31, if leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
            while md.1 > months[md.0 as usize - 1] {
                md.1 -= months[md.0 as usize - 1];
                md.0 += 1;
            }
            data.join(format!("{y}{:02}{:02}-ostia-like.nc", md.0, md.1))
        } else {
            data.join(format!("sst_{y}_{o:03}.nc"))
        }
    };
    let (nlat, nlon) = (11, 20);
    let mut checked = 0;
    for (t, doy) in (doys.0..=doys.1).enumerate() {
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); nlat * nlon];
        for y in years.0..=years.1 {
            let Some(a) = anchor(case.calendar, y, doy) else {
                continue;
            };
            for o in -h..=h {
                let day = a + o;
                if !(years.0..=years.1).contains(&ymd_of(day).0) {
                    continue;
                }
                let f = cache.entry(day).or_insert_with(|| field(&file_of(day)));
                for c in 0..nlat * nlon {
                    if !f[c].is_nan() {
                        samples[c].push(f[c]);
                    }
                }
            }
        }
        let (mean_file, p90_file, slot) = match case.layout {
            "stacked" => (out.join("mean.nc"), out.join("p90.nc"), t),
            _ => (out.join(format!("mean_doy{doy:03}.nc")), out.join(format!("p90_doy{doy:03}.nc")), 0),
        };
        let (mean, dims) = read_stat(&mean_file, "mean");
        assert_eq!(dims.iter().map(|d| d.0.as_str()).collect::<Vec<_>>(), ["time", "lat", "lon"]);
        let (p90, _) = read_stat(&p90_file, "p90");
        for c in 0..nlat * nlon {
            let (m, p) = (mean[slot * nlat * nlon + c], p90[slot * nlat * nlon + c]);
            let s = &mut samples[c];
            if s.is_empty() {
                assert!(m > 9e36 && p > 9e36, "doy {doy} cell {c}: no samples must give the fill value, got {m} {p}");
                continue;
            }
            s.sort_by(f64::total_cmp);
            let want_mean = s.iter().sum::<f64>() / s.len() as f64;
            let want_p90 = percentile(s, 0.9, case.method);
            assert!((m - want_mean).abs() < 1e-9, "doy {doy} cell {c}: mean {m} vs oracle {want_mean} (n {})", s.len());
            assert!((p - want_p90).abs() < 1e-9, "doy {doy} cell {c}: p90 {p} vs oracle {want_p90} (n {})", s.len());
            checked += 1;
        }
    }
    assert!(checked > 21 * 50, "only {checked} values checked");
}

#[test]
fn f64_lat_lon_ordinal_type5_per_doy() {
    check_against_oracle(&Case { generate: &[], calendar: "ordinal", method: 5, layout: "per-doy" });
}

#[test]
fn f64_lon_lat_hobday366_type7_stacked() {
    check_against_oracle(&Case {
        generate: &["--dim-order", "lon-lat"],
        calendar: "hobday366",
        method: 7,
        layout: "stacked",
    });
}

#[test]
fn i16_ostia_time_dim_hobday366_type5() {
    check_against_oracle(&Case {
        generate: &["--storage", "i16", "--time-dim", "--naming", "{year}{month}{day}-ostia-like.nc"],
        calendar: "hobday366",
        method: 5,
        layout: "per-doy",
    });
}

#[test]
fn i16_lon_lat_ordinal_type7_stacked() {
    check_against_oracle(&Case {
        generate: &["--storage", "i16", "--dim-order", "lon-lat"],
        calendar: "ordinal",
        method: 7,
        layout: "stacked",
    });
}

/// The fast engine equals the reference engine bit for bit through the whole program, and
/// cutting the grid into tiles (either dimension order) changes nothing.
#[test]
fn cpu_equals_reference_and_tiling_is_invisible() {
    for order in ["lat-lon", "lon-lat"] {
        let dir = tmp();
        let data = dir.path().join("data");
        generate(&data, &["--grid", "64x33", "--years", "1991-2000", "--doys", "140-170", "--dim-order", order]);
        let run = |out: &str, extra: &[&str]| {
            let a = run_args(&data, &dir.path().join(out), "1991-2000", "145-165");
            let a = with(with(a, &["--percentile", "10,90,99.5", "--method", "8"]), extra);
            String::from_utf8(ok(&a).stdout).unwrap()
        };
        run("cpu", &[]);
        run("reference", &["--backend", "reference"]);
        // 1M of budget holds about 4 latitude rows (or 9 longitude columns) at a time
        let tiled = run("tiled", &["--max-mem", "1M", "--pool", "f64"]);
        assert!(tiled.contains(" tile(s)") && !tiled.contains(" in 1 tile(s)"), "{tiled}");
        let d = dir.path();
        for other in ["reference", "tiled"] {
            let out = ok(&["compare", &s(&d.join("cpu")), &s(&d.join(other))]);
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(text.contains("EQUAL"), "{text}");
            // mean, p10, p90, p99_5 for 21 days
            let all = text.lines().find(|l| l.starts_with("all")).unwrap();
            assert_eq!(all.split_whitespace().nth(1), Some("84"), "{text}");
        }
    }
}

/// A float32 pool changes values by float32 rounding only, and compare reports it.
#[test]
fn f32_pool_stays_within_float32_rounding() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "30x16", "--years", "1991-1995", "--doys", "100-120", "--quantum", "0"]);
    for pool in ["f64", "f32"] {
        ok(&with(run_args(&data, &dir.path().join(pool), "1991-1995", "105-115"), &["--pool", pool]));
    }
    let (a, b) = (s(&dir.path().join("f64")), s(&dir.path().join("f32")));
    let strict = bin().args(["compare", &a, &b]).output().unwrap();
    assert_eq!(strict.status.code(), Some(1), "float32 rounding must show at tolerance 0");
    ok(&["compare", &a, &b, "--tolerance", "1e-5"]);
}

#[test]
fn missing_files_are_listed_or_skipped() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "12x7", "--years", "2001-2002", "--doys", "10-30"]);
    std::fs::remove_file(data.join("sst_2001_015.nc")).unwrap();
    std::fs::remove_file(data.join("sst_2002_020.nc")).unwrap();
    let out = dir.path().join("out");
    let base = run_args(&data, &out, "2001-2002", "15-25");
    let err = fails(&base);
    assert!(err.contains("2 of 42 input files are missing"), "{err}");
    assert!(err.contains("sst_2001_015.nc") && err.contains("sst_2002_020.nc"), "{err}");
    assert!(entries(&out).is_empty(), "no output after a failed run: {:?}", entries(&out));
    let json = dir.path().join("t.json");
    ok(&with(base, &["--allow-missing", "--timing-json", &s(&json)]));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["files_missing"], 2);
    assert_eq!(report["files_read"], 40);
    assert_eq!(report["outputs"], 22);
    let (_, dims) = read_stat(&out.join("p90_doy015.nc"), "p90");
    assert_eq!(dims[1..], [("lat".to_string(), 7), ("lon".to_string(), 12)]);
    sstclim::input::silence_hdf5();
    let f = netcdf::open(out.join("mean_doy015.nc")).unwrap();
    assert_eq!(f.attribute("missing_input_files").unwrap().value().unwrap(), netcdf::AttributeValue::Int(2));
}

#[test]
fn outputs_are_cf_with_provenance_and_refuse_to_clobber() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "12x7", "--years", "2001-2003", "--doys", "100-110", "--dim-order", "lon-lat"]);
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2001-2003", "103-107"), &["--deflate", "4", "--half-window", "2"]);
    ok(&args);
    sstclim::input::silence_hdf5();
    let f = netcdf::open(out.join("p90_doy105.nc")).unwrap();
    let text = |a: netcdf::Attribute| match a.value().unwrap() {
        netcdf::AttributeValue::Str(s) => s,
        other => panic!("{other:?}"),
    };
    assert_eq!(text(f.attribute("Conventions").unwrap()), "CF-1.8");
    assert!(text(f.attribute("history").unwrap()).contains("sstclim -q run --input"));
    assert_eq!(text(f.attribute("calendar_convention").unwrap()), "ordinal");
    assert_eq!(text(f.variable("time").unwrap().attribute("climatology").unwrap()), "climatology_bounds");
    // window 2001-04-13 .. 2003-04-17 inclusive: bounds [2001-04-13, 2003-04-18) in days since 2001-01-01
    let b: Vec<f64> = f.variable("climatology_bounds").unwrap().get_values(..).unwrap();
    assert_eq!(b, [102.0, 837.0]);
    let lat: Vec<f64> = f.variable("lat").unwrap().get_values(..).unwrap();
    assert_eq!((lat[0], lat[6]), (-90.0, 90.0));
    let p90 = f.variable("sst_p90").unwrap();
    assert_eq!(p90.dimensions().iter().map(|d| d.name()).collect::<Vec<_>>(), ["time", "lat", "lon"]);
    assert_eq!(p90.chunking().unwrap(), Some(vec![1, 7, 12]));
    assert!(entries(&out).iter().all(|n| !n.starts_with('.')), "no temporary files left: {:?}", entries(&out));
    assert_eq!(entries(&out).len(), 10);
    let err = fails(&args);
    assert!(err.contains("already exists") && err.contains("--overwrite"), "{err}");
    ok(&with(args, &["--overwrite"]));
}

#[test]
fn generate_is_deterministic_and_parallel_split_invariant() {
    let dir = tmp();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let g = ["--grid", "16x9", "--years", "2000-2001", "--doys", "58-62", "--storage", "i16"];
    let mut one = g.to_vec();
    one.extend(["--jobs", "1"]);
    let mut three = g.to_vec();
    three.extend(["--jobs", "3"]);
    generate(&a, &one);
    generate(&b, &three);
    let names = entries(&a);
    assert_eq!(names.len(), 10 + 1, "10 files and the marker: {names:?}");
    for n in names.iter().filter(|n| n.ends_with(".nc")) {
        let (x, _) = read(&a.join(n), "analysed_sst");
        let (y, _) = read(&b.join(n), "analysed_sst");
        assert_eq!(x, y, "{n}");
    }
    // land, random gaps and the all-missing cells are there
    let (v, _) = read(&a.join("sst_2000_060.nc"), "analysed_sst");
    let missing = v.iter().filter(|&&x| x == -32768.0).count();
    assert!(missing > 16 * 9 / 5 && missing < 16 * 9 * 3 / 4, "missing {missing} of 144");
    // a second call finds the dataset complete
    let out = ok(&[
        "generate",
        "--output",
        a.to_str().unwrap(),
        "--grid",
        "16x9",
        "--years",
        "2000-2001",
        "--doys",
        "58-62",
        "--storage",
        "i16",
    ]);
    assert!(String::from_utf8(out.stdout).unwrap().contains("already holds this dataset"));
}

#[test]
fn demo_runs_end_to_end() {
    let dir = tmp();
    let out = ok(&["demo", "--dir", dir.path().to_str().unwrap(), "--grid", "24x13"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("demo OK") && text.contains("184 output files"), "{text}");
    for stat in ["mean", "p90"] {
        let png = dir.path().join(format!("quicklook_{stat}_doy197.png"));
        assert!(std::fs::metadata(&png).unwrap().len() > 1000, "{}", png.display());
    }
    // the events part: `events --baseline` over its year-round dataset, and the map of the mean
    // annual heatwave days, which is summary.nc's total_days averaged over the years
    assert!(text.contains("heatwaves and cold spells"), "{text}");
    let png = dir.path().join("mhw_days.png");
    assert!(std::fs::metadata(&png).unwrap().len() > 1000, "{}", png.display());
    let summary = dir.path().join("events/summary.nc");
    let (days, dims) = read(&summary, "total_days");
    let (ny, n) = (dims[0].1, dims[1].1 * dims[2].1);
    assert_eq!((ny, n), (20, 24 * 13));
    let field = sstclim::tools::summary_map::mean_over_years(&summary, "total_days", "t").unwrap();
    let cap = field.values.iter().copied().filter(|v| !v.is_nan()).fold(f64::MIN, f64::max);
    let (mut ocean, mut with_events) = (0, 0);
    for c in 0..n {
        let valid: Vec<f64> = (0..ny).map(|y| days[y * n + c]).filter(|v| !v.is_nan() && *v < 1e30).collect();
        if valid.is_empty() {
            assert!(field.values[c].is_nan() && field.never_valid[c], "cell {c}");
            continue;
        }
        ocean += 1;
        let mean = valid.iter().sum::<f64>() / valid.len() as f64;
        with_events += usize::from(mean > 0.0);
        assert!((field.values[c] - mean.min(cap)).abs() < 1e-9, "cell {c}: {} vs {mean}", field.values[c]);
    }
    assert!(ocean > n / 2 && with_events > ocean / 4, "{ocean} ocean cells, {with_events} with events");
    // `sstclim quicklook` draws a summary as its years' mean too (not its first year)
    let drawn = dir.path().join("count.png");
    ok(&["quicklook", &s(&summary), "--stat", "count", "-o", &s(&drawn)]);
    assert!(std::fs::metadata(&drawn).unwrap().len() > 1000);
}
