//! The whole Hobday climatology (`--window-edges`, `--feb29`, `--smooth`, `--layout
//! climatology`) against an oracle written here from marineHeatWaves' rules (its `detect()`
//! climatology and `runavg`), on generated data with gaps, sea-ice rows with few samples and
//! all-missing cells: every edge rule, both Feb 29 rules, W = 1, 5, 31, bit for bit. Also:
//! a partial `--doys` equals the same days of the whole year, segment counts and tile splits
//! give the same bits, the file's format, and the flags' refusals. The oracle shares nothing
//! with sstclim but the input files: its own calendar, windows as index offsets into the
//! daily series (as marineHeatWaves builds them), its own percentile.
//!
//! Equality is bitwise because the oracle sums in the order sstclim documents: the mean is the
//! sum over window offsets of each offset's sum over years (marineHeatWaves' `np.nanmean`
//! sums the same values pairwise, so its mean may differ in the last bits), and the smoothing
//! is `runavg`'s products `v * (1/W)` added in window order. `hobday_numpy` checks the same
//! rules against numpy itself (a committed fixture) within a stated bound.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::*;

const GRID: (usize, usize) = (12, 10); // lon x lat
const CLIM: (i32, i32) = (2003, 2006);
const HALF: i64 = 5;

/// One day of the input series.
struct Day {
    year: i32,
    /// marineHeatWaves' day of year: Feb 29 is 60 and Mar 1 is 61 in every year.
    doy: u16,
    values: Vec<f64>,
}

struct Data {
    _dir: tempfile::TempDir,
    input: PathBuf,
    series: Vec<Day>,
}

fn leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// The generated dataset (2002-2007, every day) and its series, made once per test binary.
fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = tmp();
        let input = dir.path().join("in");
        let grid = format!("{}x{}", GRID.0, GRID.1);
        let flags = ["--grid", &grid, "--years", "2002-2007", "--doys", "1-366", "--seed", "29"];
        generate(&input, &[&flags[..], &["--missing-fraction", "0.15", "--all-missing-cells", "3"]].concat());
        let mut series = Vec::new();
        for year in 2002..=2007 {
            let len = if leap(year) { 366 } else { 365 };
            for ordinal in 1..=len {
                let path = input.join(format!("sst_{year}_{ordinal:03}.nc"));
                let (values, _) = read(&path, "sst");
                let doy = if leap(year) || ordinal < 60 { ordinal } else { ordinal + 1 };
                series.push(Day { year, doy, values });
            }
        }
        Data { _dir: dir, input, series }
    })
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Edges {
    Clip,
    Extend,
    Wrap,
}

/// The oracle's climatology: `[stat][doy - 1][cell]`, stats mean, p10, p90 (NaN: no value).
fn oracle(series: &[Day], edges: Edges, interpolate: bool, w: usize) -> Vec<Vec<Vec<f64>>> {
    oracle_of(series, CLIM, edges, interpolate, w)
}

/// [`oracle`] over the climatology years `years`.
fn oracle_of(series: &[Day], years: (i32, i32), edges: Edges, interpolate: bool, w: usize) -> Vec<Vec<Vec<f64>>> {
    let n_cells = series[0].values.len();
    let first = series.iter().position(|d| d.year == years.0).unwrap() as i64;
    let last = series.iter().rposition(|d| d.year == years.1).unwrap() as i64;
    let mut clim = vec![vec![vec![f64::NAN; n_cells]; 366]; 3];
    for d in 1..=366u16 {
        if interpolate && d == 60 {
            continue;
        }
        // the anchors, in year order; then each window offset's dates (a group)
        let tt0: Vec<i64> = (first..=last).filter(|&i| series[i as usize].doy == d).collect();
        let groups: Vec<Vec<usize>> = (-HALF..=HALF)
            .map(|o| {
                tt0.iter()
                    .filter_map(|&i| {
                        let j = i + o;
                        match edges {
                            Edges::Clip => (first..=last).contains(&j).then_some(j),
                            Edges::Extend => (0..series.len() as i64).contains(&j).then_some(j),
                            Edges::Wrap => Some(first + (j - first).rem_euclid(last - first + 1)),
                        }
                    })
                    .map(|j| j as usize)
                    .collect()
            })
            .collect();
        for c in 0..n_cells {
            let mut total = 0.0;
            let mut all = Vec::new();
            for g in &groups {
                let mut sum = 0.0;
                for &j in g {
                    let v = series[j].values[c];
                    if !v.is_nan() {
                        sum += v;
                        all.push(v);
                    }
                }
                total += sum;
            }
            if all.is_empty() {
                continue;
            }
            all.sort_by(f64::total_cmp);
            clim[0][d as usize - 1][c] = total / all.len() as f64;
            clim[1][d as usize - 1][c] = percentile(&all, 10);
            clim[2][d as usize - 1][c] = percentile(&all, 90);
        }
    }
    for stat in &mut clim {
        if interpolate {
            for c in 0..n_cells {
                stat[59][c] = 0.5 * stat[58][c] + 0.5 * stat[60][c];
            }
        }
        *stat = runavg(stat, w);
    }
    clim
}

/// numpy's `linear` percentile (Hyndman-Fan 7) of sorted values, the position found exactly:
/// `(n - 1) p / 100 = j + g / 100`, interpolated as numpy's `_lerp` does.
fn percentile(sorted: &[f64], p: u64) -> f64 {
    let n = sorted.len() as u64;
    let (j, g) = (((n - 1) * p / 100) as usize, (n - 1) * p % 100);
    if g == 0 {
        return sorted[j];
    }
    let (lo, hi, t) = (sorted[j], sorted[j + 1], g as f64 / 100.0);
    let diff = hi - lo;
    if t < 0.5 {
        lo + diff * t
    } else {
        hi - diff * (1.0 - t)
    }
}

/// marineHeatWaves' `runavg`: the series made three-fold periodic, convolved with `W` weights
/// `1/W`, the middle third kept; the dot product summed in window order.
fn runavg(days: &[Vec<f64>], w: usize) -> Vec<Vec<f64>> {
    let n = days.len();
    let tripled: Vec<&Vec<f64>> = days.iter().chain(days).chain(days).collect();
    let weight = 1.0 / w as f64;
    (n..2 * n)
        .map(|i| {
            (0..days[0].len())
                .map(|c| {
                    let mut s = 0.0;
                    for k in 0..w {
                        s += tripled[i + k - (w - 1) / 2][c] * weight;
                    }
                    s
                })
                .collect()
        })
        .collect()
}

fn run(out: &Path, doys: &str, extra: &[&str]) {
    let years = format!("{}-{}", CLIM.0, CLIM.1);
    let template = s(&data().input.join("sst_{year}_{doy}.nc"));
    let args = with(
        run_args(Path::new(&template), out, &years, doys),
        &[&["--calendar", "hobday366", "--method", "7", "--percentile", "10,90"], extra].concat(),
    );
    // libhdf5's error stacks of expected probes (absent attributes) stay silent on every
    // thread, the smoothing writer's too (it printed hundreds of HDF5-DIAG lines once)
    let stderr = String::from_utf8(ok(&args).stderr).unwrap();
    assert!(!stderr.contains("HDF5-DIAG"), "{stderr}");
}

/// A climatology file's statistic, `[doy - 1][cell]`, fill values as NaN.
fn stat(path: &Path, var: &str) -> Vec<Vec<f64>> {
    let (values, dims) = read(path, var);
    assert_eq!(dims.iter().map(|d| d.0.as_str()).collect::<Vec<_>>(), ["doy", "lat", "lon"]);
    let n_cells = GRID.0 * GRID.1;
    values.chunks(n_cells).map(|r| r.iter().map(|&v| if v > 1e30 { f64::NAN } else { v }).collect()).collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn every_rule_matches_the_oracle() {
    let series = &data().series;
    let dir = tmp();
    for (edges, name) in [(Edges::Clip, "clip"), (Edges::Extend, "extend"), (Edges::Wrap, "wrap")] {
        for (interpolate, feb29) in [(false, "window"), (true, "interpolate")] {
            for w in [1usize, 5, 31] {
                let out = dir.path().join(format!("{name}-{feb29}-{w}"));
                let ws = w.to_string();
                let flags = ["--window-edges", name, "--feb29", feb29, "--smooth", &ws, "--layout", "climatology"];
                run(&out, "1-366", &flags);
                let want = oracle(series, edges, interpolate, w);
                let file = out.join("climatology.nc");
                let mut valued = 0;
                for (s, var) in ["sst_mean", "sst_p10", "sst_p90"].iter().enumerate() {
                    let got = stat(&file, var);
                    assert_eq!(got.len(), 366);
                    for (d, (g, e)) in got.iter().zip(&want[s]).enumerate() {
                        for (c, (&g, &e)) in g.iter().zip(e).enumerate() {
                            assert!(same(g, e), "{name} {feb29} W={w} {var} day {} cell {c}: {g} vs {e}", d + 1);
                            valued += usize::from(!g.is_nan());
                        }
                    }
                }
                // the data are not all missing, and the all-missing cells stay so
                assert!(valued > 3 * 366 * (GRID.0 * GRID.1 / 2), "{name} {feb29} {w}: {valued}");
            }
        }
    }
}

#[test]
fn edges_and_feb29_change_what_they_should() {
    // the rules differ exactly where they say they do: edges near the year's ends only, Feb 29
    // at day 60 only (unsmoothed)
    let series = &data().series;
    let clip = oracle(series, Edges::Clip, false, 1);
    let extend = oracle(series, Edges::Extend, false, 1);
    let wrap = oracle(series, Edges::Wrap, false, 1);
    let interp = oracle(series, Edges::Clip, true, 1);
    let differs = |a: &[Vec<f64>], b: &[Vec<f64>]| -> Vec<usize> {
        (0..366).filter(|&d| a[d].iter().zip(&b[d]).any(|(x, y)| !same(*x, *y))).map(|d| d + 1).collect()
    };
    let near_ends = |days: &[usize]| days.iter().all(|&d| d <= 5 || d >= 362);
    let e = differs(&clip[0], &extend[0]);
    assert!(!e.is_empty() && near_ends(&e), "{e:?}");
    let w = differs(&clip[0], &wrap[0]);
    assert!(!w.is_empty() && near_ends(&w), "{w:?}");
    assert_eq!(differs(&clip[2], &interp[2]), [60]);
}

#[test]
fn partial_doys_equal_the_whole_year() {
    let dir = tmp();
    let flags = ["--window-edges", "extend", "--feb29", "interpolate", "--smooth", "31"];
    let full = dir.path().join("full");
    run(&full, "1-366", &[&flags[..], &["--layout", "climatology"]].concat());
    let part = dir.path().join("part");
    let doys = [1u16, 2, 3, 58, 59, 60, 61, 62, 200, 364, 365, 366];
    run(&part, "1-3,58-62,200,364-366", &[&flags[..], &["--layout", "stacked"]].concat());
    for (var, file) in [("sst_mean", "mean.nc"), ("sst_p10", "p10.nc"), ("sst_p90", "p90.nc")] {
        let whole = stat(&full.join("climatology.nc"), var);
        // stacked files keep the statistic's name; their variable is named like the climatology's
        let (values, dims) = read(&part.join(file), var);
        assert_eq!(dims[0].1, doys.len());
        let n_cells = GRID.0 * GRID.1;
        for (t, &d) in doys.iter().enumerate() {
            for c in 0..n_cells {
                let v = values[t * n_cells + c];
                let v = if v > 1e30 { f64::NAN } else { v };
                assert!(same(v, whole[d as usize - 1][c]), "{var} day {d} cell {c}");
            }
        }
    }
}

#[test]
fn segments_and_tiles_give_the_same_bits() {
    let dir = tmp();
    let flags = ["--window-edges", "wrap", "--feb29", "interpolate", "--smooth", "31", "--layout", "climatology"];
    let mut runs = Vec::new();
    for (name, more) in [
        ("one", &["--segments", "1"][..]),
        ("three", &["--segments", "3"]),
        ("seven", &["--segments", "7", "--threads", "1"]),
        // the last segment is short (a quarter of the others): 6 days of 366 at 16 segments
        ("sixteen", &["--segments", "16"]),
        ("default", &[]),
        ("tiles", &["--segments", "2", "--max-mem", "1M"]),
    ] {
        let out = dir.path().join(name);
        run(&out, "1-366", &[&flags[..], more].concat());
        let bits: Vec<Vec<u64>> = ["sst_mean", "sst_p10", "sst_p90"]
            .iter()
            .map(|v| read(&out.join("climatology.nc"), v).0.iter().map(|x| x.to_bits()).collect())
            .collect();
        runs.push((name, bits));
    }
    for (name, bits) in &runs[1..] {
        assert!(bits == &runs[0].1, "{name} differs from one segment");
    }
}

#[test]
fn the_climatology_file_says_how_it_was_made() {
    let dir = tmp();
    let out = dir.path().join("c");
    let flags = ["--window-edges", "extend", "--feb29", "interpolate", "--smooth", "31", "--layout", "climatology"];
    run(&out, "1-366", &flags);
    assert_eq!(entries(&out), ["climatology.nc"]);
    let path = out.join("climatology.nc");
    sstclim::input::silence_hdf5();
    let f = netcdf::open(&path).unwrap();
    let text = |name: &str| match f.attribute(name).unwrap().value().unwrap() {
        netcdf::AttributeValue::Str(s) => s,
        other => panic!("{name}: {other:?}"),
    };
    let int = |name: &str| match f.attribute(name).unwrap().value().unwrap() {
        netcdf::AttributeValue::Int(i) => i,
        other => panic!("{name}: {other:?}"),
    };
    assert_eq!(text("sstclim_layout"), "climatology");
    assert_eq!(text("input_variable"), "sst");
    assert_eq!(text("climatology_years"), "2003-2006");
    assert_eq!(text("calendar_mode"), "hobday366");
    assert_eq!(text("window_edges"), "extend");
    assert_eq!(text("feb29"), "interpolate");
    assert_eq!((int("window_half_width"), int("smoothing_width"), int("min_samples")), (5, 31, 1));
    assert!(text("percentile_method").contains("linear"), "{}", text("percentile_method"));
    match f.attribute("percentiles").unwrap().value().unwrap() {
        netcdf::AttributeValue::Doubles(p) => assert_eq!(p, [10.0, 90.0]),
        other => panic!("percentiles: {other:?}"),
    }
    let doy: Vec<i32> = f.variable("doy").unwrap().get_values(..).unwrap();
    assert_eq!(doy, (1..=366).collect::<Vec<i32>>());
    let time = f.variable("time").unwrap();
    assert_eq!(time.dimensions()[0].name(), "doy");
    match time.attribute("climatology").unwrap().value().unwrap() {
        netcdf::AttributeValue::Str(s) => assert_eq!(s, "climatology_bounds"),
        other => panic!("{other:?}"),
    }
    let bounds = f.variable("climatology_bounds").unwrap();
    let dims: Vec<(String, usize)> = bounds.dimensions().iter().map(|d| (d.name(), d.len())).collect();
    assert_eq!(dims, [("doy".to_string(), 366), ("nv".to_string(), 2)]);
    // day 1's bounds: 5 days before Jan 1 of the first year to 6 days after Jan 1 of the last
    let b: Vec<f64> = bounds.get_values(..).unwrap();
    assert_eq!(&b[..2], [-5.0, (365 + 366 + 365 + 6) as f64]);
}

#[test]
fn the_flags_refuse_what_they_cannot_do() {
    let dir = tmp();
    let out = dir.path().join("x");
    let years = format!("{}-{}", CLIM.0, CLIM.1);
    let template = s(&data().input.join("sst_{year}_{doy}.nc"));
    let base = run_args(Path::new(&template), &out, &years, "1-366");
    let e = fails(&with(base.clone(), &["--calendar", "hobday366", "--smooth", "4"]));
    assert!(e.contains("--smooth 4") && e.contains("odd"), "{e}");
    let e = fails(&with(base.clone(), &["--calendar", "hobday366", "--smooth", "367"]));
    assert!(e.contains("--smooth 367"), "{e}");
    let e = fails(&with(base.clone(), &["--feb29", "interpolate"]));
    assert!(e.contains("--feb29 interpolate") && e.contains("hobday366"), "{e}");
    let part = run_args(Path::new(&template), &out, &years, "1-100");
    let e = fails(&with(part, &["--calendar", "hobday366", "--layout", "climatology"]));
    assert!(e.contains("--layout climatology") && e.contains("1-100"), "{e}");
    let e = fails(&with(base, &["--window-edges", "sideways"]));
    assert!(e.contains("sideways"), "{e}");
    assert!(!out.exists() || entries(&out).is_empty());
}

/// marineHeatWaves extends a window into the series only where the series has the days: over
/// years that are the input's whole record (2002-2007), `extend` has nothing past them and
/// gives bit for bit `clip`'s climatology (no file is "missing" before 2002 or after 2007),
/// while over 2003-2006 it reads the neighbouring years and differs near the years' ends.
#[test]
fn extended_windows_stop_at_the_input_series_ends() {
    let dir = tmp();
    let template = s(&data().input.join("sst_{year}_{doy}.nc"));
    let climatology = |edges: &str, years: &str| {
        let out = dir.path().join(format!("{edges}-{years}"));
        let flags = ["--calendar", "hobday366", "--method", "7", "--percentile", "90", "--window-edges", edges];
        ok(&with(
            run_args(Path::new(&template), &out, years, "1-366"),
            &[&flags[..], &["--layout", "climatology"]].concat(),
        ));
        stat(&out.join("climatology.nc"), "sst_p90")
    };
    let (extend, clip) = (climatology("extend", "2002-2007"), climatology("clip", "2002-2007"));
    let bits = |v: &Vec<Vec<f64>>| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&extend), bits(&clip));
    assert!(extend.iter().flatten().filter(|v| !v.is_nan()).count() > 366 * GRID.0 * GRID.1 / 2);
    // inside the record, the extension reads 2002 and 2007 and changes the first and last days
    let (extend, clip) = (climatology("extend", "2003-2006"), climatology("clip", "2003-2006"));
    assert_ne!(bits(&extend[..3].to_vec()), bits(&clip[..3].to_vec()));
    assert_eq!(bits(&extend[100..200].to_vec()), bits(&clip[100..200].to_vec()));
}

/// Years without a leap year (2005-2007) and no `--doys`: the climatology is every day of
/// their year. Under `ordinal` that is days 1-365 (Dec 31 is day 365; once refused as "pass
/// --doys 1-365 or leave it out"), the oracle's days with its empty day 60 taken out and then
/// smoothed over 365 days; under `hobday366` days 1-366, day 60 (Feb 29, in none of the
/// years) made by `--feb29 interpolate` from days 59 and 61, or left with no value by `--feb29
/// window` (its window holds no date: missing in every cell, and a warning says so).
#[test]
fn a_climatology_of_years_without_a_leap_year_needs_no_doys() {
    let (series, dir) = (&data().series, tmp());
    let years = (2005, 2007);
    let template = s(&data().input.join("sst_{year}_{doy}.nc"));
    let run = |out: &Path, flags: &[&str]| -> String {
        let mut args: Vec<String> = ["-q", "run", "--input", &template, "--output", &s(out), "--baseline", "2005-2007"]
            .iter()
            .map(|x| x.to_string())
            .collect();
        args.extend(["--method", "7", "--percentile", "10,90", "--layout", "climatology"].map(String::from));
        String::from_utf8(ok(&with(args, flags)).stderr).unwrap()
    };
    let check = |file: &Path, want: &[Vec<Vec<f64>>], what: &str| {
        for (s, var) in ["sst_mean", "sst_p10", "sst_p90"].iter().enumerate() {
            let got = stat(file, var);
            assert_eq!(got.len(), want[s].len(), "{what} {var}");
            for (d, (g, e)) in got.iter().zip(&want[s]).enumerate() {
                for (c, (&g, &e)) in g.iter().zip(e).enumerate() {
                    assert!(same(g, e), "{what} {var} day {} cell {c}: {g} vs {e}", d + 1);
                }
            }
        }
        let valued = stat(file, "sst_p90").iter().flatten().filter(|v| !v.is_nan()).count();
        assert!(valued > want[0].len() * GRID.0 * GRID.1 / 2, "{what}: {valued} values");
    };
    for w in [1usize, 31] {
        let ws = w.to_string();
        // ordinal: the hobday366 oracle's days but day 60 (the same dates in these years)
        let out = dir.path().join(format!("ordinal-{w}"));
        run(&out, &["--calendar", "ordinal", "--smooth", &ws]);
        let file = out.join("climatology.nc");
        let want: Vec<Vec<Vec<f64>>> = oracle_of(series, years, Edges::Clip, false, 1)
            .into_iter()
            .map(|mut days| {
                assert!(days[59].iter().all(|v| v.is_nan()), "day 60 has no date in 2005-2007");
                days.remove(59);
                runavg(&days, w)
            })
            .collect();
        check(&file, &want, &format!("ordinal W={w}"));
        let (doy, _) = read(&file, "doy");
        assert_eq!(doy, (1..=365).map(f64::from).collect::<Vec<_>>());
        // hobday366, day 60 interpolated: the mean of days 59 and 61 before smoothing
        let out = dir.path().join(format!("interpolate-{w}"));
        let stderr = run(&out, &["--calendar", "hobday366", "--feb29", "interpolate", "--smooth", &ws]);
        assert!(!stderr.contains("Feb 29"), "{stderr}");
        let want = oracle_of(series, years, Edges::Clip, true, w);
        check(&out.join("climatology.nc"), &want, &format!("interpolate W={w}"));
        if w == 1 {
            let p90 = stat(&out.join("climatology.nc"), "sst_p90");
            let valued = (0..GRID.0 * GRID.1).filter(|&c| !p90[59][c].is_nan()).count();
            assert!(valued > GRID.0 * GRID.1 / 2, "{valued}");
            for c in 0..GRID.0 * GRID.1 {
                assert!(same(p90[59][c], 0.5 * p90[58][c] + 0.5 * p90[60][c]), "cell {c}");
            }
        }
    }
    // hobday366, day 60 from its window: no value anywhere (and, smoothed, none in the days
    // whose running mean takes it in), as marineHeatWaves' rules without its interpolation
    for w in [1usize, 5] {
        let out = dir.path().join(format!("window-{w}"));
        let stderr = run(&out, &["--calendar", "hobday366", "--feb29", "window", "--smooth", &w.to_string()]);
        assert!(stderr.contains("no year of 2005-2007 has a Feb 29") && stderr.contains("--feb29 interpolate"));
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        let want = oracle_of(series, years, Edges::Clip, false, w);
        check(&out.join("climatology.nc"), &want, &format!("window W={w}"));
        let mean = stat(&out.join("climatology.nc"), "sst_mean");
        let empty: Vec<usize> = (0..366).filter(|&d| mean[d].iter().all(|v| v.is_nan())).map(|d| d + 1).collect();
        assert_eq!(empty, if w == 1 { vec![60] } else { (58..=62).collect() });
    }
    // the other layouts take the same days: 365 under ordinal
    let out = dir.path().join("stacked");
    ok(&["-q", "run", "--input", &template, "--output", &s(&out), "--baseline", "2005-2007", "--layout", "stacked"]);
    assert_eq!(read(&out.join("mean.nc"), "sst_mean").1[0], ("time".to_string(), 365));
}

/// `events --baseline` reads a climatology of every day of the year, day 366 included where
/// the input's calendar has leap years: an `ordinal` one of years without a leap year has no
/// day 366, so it is refused before anything is computed, in one line saying what would work.
#[test]
fn an_ordinal_baseline_without_a_leap_year_is_refused_by_events() {
    let dir = tmp();
    let out = dir.path().join("events");
    let input = s(&data().input);
    let args = ["-q", "events", "-i", &input, "-o", &s(&out), "--years", "2004-2007", "--baseline", "2005-2007"];
    let err = fails(&[&args[..], &["--calendar", "ordinal", "--feb29", "window"]].concat());
    assert!(err.contains("no year of 2005-2007 is a leap year") && err.contains("--calendar hobday366"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!out.exists(), "{:?}", entries(&out));
}
