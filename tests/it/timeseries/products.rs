//! Time-series input as the products ship it (`tests/fixtures/timeseries`, written by
//! `make_timeseries_fixtures.py` beside them; README.md there names the published headers each
//! copies): NOAA PSL yearly files, CMIP6 `tos_Oday` on a curvilinear `(time, j, i)` grid in
//! `noleap` and `360_day`, ERA5 from the new CDS (`valid_time`, descending latitude), OISST in
//! NCEI's `YYYYMM/` tree, and one dataset split into monthly files plus a yearly one.
//!
//! Real calendars: `sstclim run --input DIR` (and the glob, `@list` and path-by-path forms) must give the
//! same bits as the same job on the equivalent one-file-per-day dataset, which this test writes
//! from the fixtures' stored values and the dates `manifest.json` lists (so the comparison does
//! not lean on sstclim's time decoding). Model calendars have no one-file-per-day equivalent:
//! they are held to the numpy oracle `oracle_{noleap,360day}.json`: P90 bit for bit (the oracle
//! computes the README's exact positions), the mean within 2 ulps (the fixture values are
//! multiples of 1/32 below 2^9, so every sum of the <= 33 samples is exact and the mean is one
//! rounding of sum / n in both; 2 ulps leave room for a division done as a product).
//! Bad time-series input ends with exit 2, one line naming the file and the problem, and no
//! output.

use std::path::{Path, PathBuf};

use crate::common::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timeseries")
}

fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The files of `product` (paths relative to its directory) and their steps' dates.
fn files_of(product: &str) -> Vec<(String, Vec<String>)> {
    let m = manifest();
    m[product]
        .as_array()
        .unwrap_or_else(|| panic!("manifest has no {product}"))
        .iter()
        .map(|e| {
            let dates = e["dates"].as_array().unwrap().iter().map(|d| d.as_str().unwrap().to_string()).collect();
            (e["file"].as_str().unwrap().to_string(), dates)
        })
        .collect()
}

/// The attributes a decoder reads, copied from the product's variable to the daily file's.
const DECODING_ATTRS: [&str; 8] =
    ["_FillValue", "missing_value", "scale_factor", "add_offset", "valid_min", "valid_max", "valid_range", "units"];

/// Rewrite `product` as one file per day, `dst/sst_YYYYMMDD.nc` holding `sst(time = 1, Y, X)`
/// with the product's stored values (same type and decoding attributes) and its 1-D
/// coordinates under their own names: the layout sstclim has always read.
fn write_daily(product: &str, var: &str, dst: &Path) {
    sstclim::input::silence_hdf5();
    std::fs::create_dir_all(dst).unwrap();
    for (file, dates) in files_of(product) {
        let src = netcdf::open(fixtures().join(product).join(&file)).unwrap();
        let v = src.variable(var).unwrap_or_else(|| panic!("{file}: no {var}"));
        let dims: Vec<(String, usize)> = v.dimensions().iter().map(|d| (d.name(), d.len())).collect();
        let (ydim, ny) = dims[dims.len() - 2].clone();
        let (xdim, nx) = dims[dims.len() - 1].clone();
        let coord = |name: &str| -> (Vec<f64>, Option<netcdf::AttributeValue>) {
            let c = src.variable(name).unwrap_or_else(|| panic!("{file}: no {name}"));
            (c.get_values::<f64, _>(..).unwrap(), c.attribute("units").map(|a| a.value().unwrap()))
        };
        let (yv, yu) = coord(&ydim);
        let (xv, xu) = coord(&xdim);
        assert_eq!(dates.len(), dims[0].1, "{file}: manifest and time dimension disagree");
        for (k, date) in dates.iter().enumerate() {
            // every dimension before the grid is the time step or a level of 1
            let mut ext: Vec<std::ops::Range<usize>> = vec![k..k + 1];
            ext.extend(dims[1..dims.len() - 2].iter().map(|_| 0..1));
            ext.extend([0..ny, 0..nx]);
            let path = dst.join(format!("sst_{date}.nc"));
            let mut out = netcdf::create(&path).unwrap();
            out.add_dimension("time", 1).unwrap();
            out.add_dimension(&ydim, ny).unwrap();
            out.add_dimension(&xdim, nx).unwrap();
            for (name, vals, units) in [(&ydim, &yv, &yu), (&xdim, &xv, &xu)] {
                let mut c = out.add_variable::<f64>(name, &[name.as_str()]).unwrap();
                if let Some(u) = units {
                    c.put_attribute("units", u.clone()).unwrap();
                }
                c.put_values(vals, ..).unwrap();
            }
            let dims3 = ["time", ydim.as_str(), xdim.as_str()];
            match v.vartype() {
                netcdf::types::NcVariableType::Float(netcdf::types::FloatType::F32) => {
                    let vals = v.get_values::<f32, _>(ext).unwrap();
                    let mut o = out.add_variable::<f32>("sst", &dims3).unwrap();
                    copy_attrs(&v, &mut o);
                    o.put_values(&vals, ..).unwrap();
                }
                netcdf::types::NcVariableType::Int(netcdf::types::IntType::I16) => {
                    let vals = v.get_values::<i16, _>(ext).unwrap();
                    let mut o = out.add_variable::<i16>("sst", &dims3).unwrap();
                    copy_attrs(&v, &mut o);
                    o.put_values(&vals, ..).unwrap();
                }
                t => panic!("{file}: {var} stored as {t:?}, not a type the fixtures use"),
            }
            out.close().unwrap();
        }
    }
}

fn copy_attrs(src: &netcdf::Variable, dst: &mut netcdf::VariableMut) {
    for name in DECODING_ATTRS {
        if let Some(a) = src.attribute(name) {
            dst.put_attribute(name, a.value().unwrap()).unwrap();
        }
    }
}

/// The ways to name a product's files: its directory, a glob, `@list` and the paths one by
/// one (both in reverse order: the order of the files must not matter).
fn input_forms(product: &str, glob: &str, scratch: &Path) -> Vec<(&'static str, Vec<String>)> {
    let dir = fixtures().join(product);
    let list = scratch.join(format!("{product}.list"));
    let mut paths: Vec<String> = files_of(product).iter().map(|(f, _)| s(&dir.join(f))).collect();
    paths.reverse();
    std::fs::write(&list, paths.join("\n") + "\n").unwrap();
    vec![
        ("dir", vec![s(&dir)]),
        ("glob", vec![s(&dir.join(glob))]),
        ("list", vec![format!("@{}", s(&list))]),
        ("paths", paths),
    ]
}

/// `sstclim run` of the stacked job on `inputs` (each after its own `--input`) into `out`.
fn run_job(inputs: &[String], out: &Path, years: &str, doys: &str, extra: &[&str]) {
    let mut args = vec!["-q", "run", "--output", out.to_str().unwrap(), "--baseline", years];
    for input in inputs {
        args.extend(["--input", input.as_str()]);
    }
    args.extend(["--doys", doys, "--layout", "stacked"]);
    args.extend(extra);
    ok(&args);
}

/// A string attribute of a variable in an output.
fn text_attr(path: &Path, var: &str, attr: &str) -> Option<String> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap();
    let v = f.variable(var).unwrap_or_else(|| panic!("{}: no {var}", path.display()));
    let a = v.attribute(attr)?;
    match a.value().unwrap() {
        netcdf::AttributeValue::Str(s) => Some(s),
        other => panic!("{}: {var}:{attr} is {other:?}", path.display()),
    }
}

fn dim_names(dims: &[(String, usize)]) -> Vec<&str> {
    dims.iter().map(|d| d.0.as_str()).collect()
}

/// A real-calendar product: every input form equals the one-file-per-day job bitwise, and the
/// outputs keep the product's calendar, grid dimension names and latitude order.
fn equals_daily(product: &str, glob: &str, years: &str, doys: &str, extra: &[&str], want: Expect) {
    let dir = tmp();
    let daily = dir.path().join("daily");
    write_daily(product, want.var, &daily);
    let reference = dir.path().join("out-daily");
    run_job(&[s(&daily.join("sst_{year}{month}{day}.nc"))], &reference, years, doys, extra);
    let expected = output_bits(&reference);
    // a comparison of fill values with fill values would prove nothing: all but the land cells
    // and the polar cell in winter (4 of 64 cells at most) hold statistics
    let (means, _) = read_stat(&reference.join("mean.nc"), "mean");
    let valid = means.iter().filter(|v| v.abs() < 1e30).count();
    assert!(valid * 16 >= means.len() * 15, "{product}: only {valid} of {} daily-job means hold a value", means.len());
    for (form, input) in input_forms(product, glob, dir.path()) {
        let out = dir.path().join(format!("out-{form}"));
        run_job(&input, &out, years, doys, extra);
        assert_eq!(output_bits(&out), expected, "{product} --input {form} differs from the one-file-per-day job");
        let mean = out.join("mean.nc");
        let cal = text_attr(&mean, "time", "calendar").unwrap_or_default();
        assert!(
            want.calendars.contains(&cal.as_str()),
            "{product} ({form}): time:calendar = {cal:?}, want one of {:?}",
            want.calendars
        );
        let (_, dims) = read_stat(&mean, "mean");
        assert_eq!(dim_names(&dims), ["time", want.ydim, want.xdim], "{product} ({form})");
        let (lat_out, _) = read(&mean, want.ydim);
        let first = &files_of(product)[0].0;
        let (lat_in, _) = read(&fixtures().join(product).join(first), want.ydim);
        assert_eq!(lat_out, lat_in, "{product} ({form}): latitude not written as the input stores it");
    }
}

struct Expect {
    var: &'static str,
    calendars: &'static [&'static str],
    ydim: &'static str,
    xdim: &'static str,
}

const REAL_DOYS: &str = "1-3,58-61,363-365";

#[test]
fn psl_yearly_files_equal_the_daily_files() {
    // PSL's time has no calendar attribute: CF's default, the standard calendar
    let want = Expect { var: "sst", calendars: &["standard", "gregorian"], ydim: "lat", xdim: "lon" };
    equals_daily("psl", "sst.day.mean.*.nc", "2003-2004", REAL_DOYS, &[], want);
}

#[test]
fn era5_valid_time_and_descending_latitude_equal_the_daily_files() {
    let want = Expect { var: "sst", calendars: &["proleptic_gregorian"], ydim: "latitude", xdim: "longitude" };
    equals_daily("era5", "era5_sst_daily_*.nc", "2003-2004", REAL_DOYS, &[], want);
}

#[test]
fn oisst_ncei_month_tree_equals_the_daily_files() {
    // the fixture holds the days this job's windows need: Jan 1-5 and Dec 30-31
    let want = Expect { var: "sst", calendars: &["standard", "gregorian"], ydim: "lat", xdim: "lon" };
    equals_daily("oisst", "*/oisst-avhrr-v02r01.*.nc", "2003-2004", "1-3", &["--half-window", "2"], want);
}

#[test]
fn monthly_and_yearly_files_equal_the_daily_files() {
    let want = Expect { var: "sst", calendars: &["gregorian", "standard"], ydim: "lat", xdim: "lon" };
    equals_daily("monthly", "sst_2*.nc", "2003-2004", REAL_DOYS, &[], want);
}

/// A model-calendar product: every input form against the numpy oracle, the calendar kept,
/// `(time, j, i)` kept and the 2-D latitude/longitude written as CF auxiliary coordinates.
fn matches_oracle(product: &str, oracle: &str, calendar: &str) {
    let text = std::fs::read_to_string(fixtures().join(oracle)).unwrap();
    let want: serde_json::Value = serde_json::from_str(&text).unwrap();
    let doys: Vec<String> = want["doys"].as_array().unwrap().iter().map(|d| d.to_string()).collect();
    let years = want["years"].as_str().unwrap();
    let first = fixtures().join(product).join(&files_of(product)[0].0);
    let dir = tmp();
    for (form, input) in input_forms(product, "tos_Oday_*.nc", dir.path()) {
        let out = dir.path().join(format!("out-{form}"));
        run_job(&input, &out, years, &doys.join(","), &[]);
        let mean = out.join("mean.nc");
        let cal = text_attr(&mean, "time", "calendar");
        assert_eq!(cal.as_deref(), Some(calendar), "{product} ({form}): the outputs must carry the input's calendar");
        let (mut worst, mut compared) = (0.0f64, 0);
        for stat in ["mean", "p90"] {
            let path = out.join(format!("{stat}.nc"));
            let (got, dims) = read_stat(&path, stat);
            assert_eq!(dims, [("time".into(), doys.len()), ("j".into(), 8), ("i".into(), 16)], "{product} ({form})");
            let coords = text_attr(&path, &stat_var(&path, stat), "coordinates").unwrap_or_default();
            for c in ["latitude", "longitude"] {
                assert!(
                    coords.split_whitespace().any(|w| w == c),
                    "{product} ({form}) {stat}: coordinates = {coords:?}"
                );
                let (vin, din) = read(&first, c);
                let (vout, dout) = read(&path, c);
                assert_eq!((vout, dout), (vin, din), "{product} ({form}): 2-D {c} not copied");
            }
            for (d, row) in want[stat].as_array().unwrap().iter().enumerate() {
                for (cell, w) in row.as_array().unwrap().iter().enumerate() {
                    let g = got[d * 128 + cell];
                    let at = format!("{product} ({form}) {stat} doy {} cell {cell}", doys[d]);
                    match w.as_f64() {
                        None => assert!(g > 1e30, "{at}: {g}, the oracle has no samples"),
                        Some(e) if stat == "p90" => assert_eq!(g.to_bits(), e.to_bits(), "{at}: {g} vs oracle {e}"),
                        Some(e) => {
                            let ulp = f64::from_bits(e.to_bits() + 1) - e;
                            assert!((g - e).abs() <= 2.0 * ulp, "{at}: {g} vs oracle {e}");
                            worst = worst.max((g - e).abs() / ulp);
                        }
                    }
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 2 * doys.len() * 128);
        eprintln!("{product} ({form}): largest mean difference {worst} ulp");
    }
}

#[test]
fn cmip6_noleap_curvilinear_matches_the_numpy_oracle() {
    matches_oracle("cmip6_noleap", "oracle_noleap.json", "noleap");
}

#[test]
fn cmip6_360_day_matches_the_numpy_oracle() {
    matches_oracle("cmip6_360day", "oracle_360day.json", "360_day");
}

// ---- bad input -------------------------------------------------------------------------------

/// The job every bad case runs on `input` (January 1-5 of 2003 are needed).
fn bad_job(input: &str, out: &Path) -> Vec<String> {
    let v = ["-q", "run", "--input", input, "--output", out.to_str().unwrap(), "--baseline", "2003-2003"];
    let mut v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    v.extend(["--doys", "1-3", "--half-window", "2"].iter().map(|x| x.to_string()));
    v
}

/// Exit 2, one line starting "error: ", naming every one of `files`, and one of `problem`
/// (the words a message about that problem uses); nothing in the output directory.
fn refused(input: &str, files: &[&str], problem: &[&str]) -> String {
    let dir = tmp();
    let out = dir.path().join("out");
    let args = bad_job(input, &out);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    for f in files {
        assert!(err.contains(f), "the error must name {f}:\n{err}");
    }
    // (the words are looked for outside the input's path: the case directories are named
    // after their problem)
    let low = err.replace(input.trim_start_matches('@'), "").to_lowercase();
    assert!(problem.iter().any(|p| low.contains(p)), "the error must say the problem ({problem:?}):\n{err}");
    assert!(entries(&out).is_empty(), "no output expected, found {:?}", entries(&out));
    err
}

fn bad(case: &str) -> String {
    s(&fixtures().join("bad").join(case))
}

#[test]
fn several_steps_without_a_time_axis_are_refused() {
    refused(&bad("no_time_axis"), &["sst_2003.nc"], &["time axis", "time dimension", "time coordinate"]);
}

#[test]
fn an_unknown_calendar_is_named() {
    refused(&bad("unknown_calendar"), &["sst_2003.nc"], &["martian"]);
}

#[test]
fn unknown_time_units_are_named() {
    refused(&bad("bad_units"), &["sst_2003.nc"], &["fortnights"]);
}

#[test]
fn a_time_axis_that_goes_back_is_refused() {
    refused(&bad("non_monotonic"), &["sst_2003.nc"], &["monoton", "increas", "order", "decreas", "back"]);
}

#[test]
fn grids_that_differ_between_files_are_refused() {
    refused(&bad("grid_differs"), &["sst_2003_b.nc"], &["grid", "coordinate", "lon", "shape", "differ"]);
}

#[test]
fn grids_that_differ_between_classic_files_are_refused() {
    refused(&bad("grid_differs_classic"), &["sst_2003_b.nc"], &["grid", "coordinate", "lon", "shape", "differ"]);
}

#[test]
fn a_file_without_the_variable_is_refused() {
    let d = fixtures().join("bad/variable_missing");
    let dir = tmp();
    let list = dir.path().join("files.txt");
    std::fs::write(&list, format!("{}\n{}\n", s(&d.join("sst_2003_a.nc")), s(&d.join("sst_2003_b.nc")))).unwrap();
    refused(&format!("@{}", s(&list)), &["sst_2003_b.nc"], &["sst"]);
    // a directory scan may skip the file (it does not hold the variable): then its days are
    // missing, which is an error too
    let out = dir.path().join("out");
    let args = bad_job(&s(&d), &out);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(&argv);
    assert!(entries(&out).is_empty());
}

#[test]
fn a_date_in_two_files_names_both() {
    refused(
        &bad("overlap"),
        &["sst_2003_a.nc", "sst_2003_b.nc"],
        &["2003-01-03", "20030103", "overlap", "twice", "both"],
    );
}

#[test]
fn a_file_name_date_that_its_time_axis_contradicts_is_refused() {
    refused(&bad("name_mismatch"), &["sst_20030105.nc"], &["2003-01-06", "20030106", "time axis", "time value"]);
}
