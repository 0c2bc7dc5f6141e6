//! Every input file is decoded with its own attributes, on every read path: one file among
//! others with its own `_FillValue`, `scale_factor`, `valid_max` or `missing_value` (NetCDF-4
//! with compact and dense attribute storage, and NetCDF-3) gives the same outputs, bit for bit,
//! on the default (direct `pread`), library and forked paths, and the mean the test computes
//! from the values it wrote. A 64-bit integer variable among float64 files, and an int16 file
//! packed otherwise under `--pool i16`, are errors naming the file (exit 2, no outputs), never
//! values decoded with another file's rules.

use std::path::{Path, PathBuf};

use crate::common::*;
use netcdf::AttributeValue as A;

const NLAT: usize = 8;
const NLON: usize = 12;
const YEARS: [i32; 2] = [2001, 2002];
const DOYS: [u32; 3] = [100, 101, 102];
/// The file that differs (not the first: the job's layout comes from the first).
const ODD: (i32, u32) = (2002, 101);

/// What one file stores.
enum Stored {
    F64(Vec<f64>),
    I16(Vec<i16>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}

/// Write one input file: coordinates, the variable `sst` (lat, lon) and its attributes, plus
/// `padding` text attributes (over 8 attributes in all, netCDF-4 keeps them in dense storage).
fn write(path: &Path, classic: bool, stored: &Stored, attrs: &[(&str, A)], padding: usize) {
    sstclim::input::silence_hdf5();
    let options = if classic { netcdf::Options::empty() } else { netcdf::Options::NETCDF4 };
    let mut f = netcdf::create_with(path, options).unwrap();
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    let mut v = f.add_variable::<f64>("lat", &["lat"]).unwrap();
    v.put_attribute("units", "degrees_north").unwrap();
    let mut v = f.add_variable::<f64>("lon", &["lon"]).unwrap();
    v.put_attribute("units", "degrees_east").unwrap();
    let mut v = match stored {
        Stored::F64(_) => f.add_variable::<f64>("sst", &["lat", "lon"]).unwrap(),
        Stored::I16(_) => f.add_variable::<i16>("sst", &["lat", "lon"]).unwrap(),
        Stored::I64(_) => f.add_variable::<i64>("sst", &["lat", "lon"]).unwrap(),
        Stored::U64(_) => f.add_variable::<u64>("sst", &["lat", "lon"]).unwrap(),
    };
    for (name, value) in attrs {
        v.put_attribute(name, value.clone()).unwrap();
    }
    if !attrs.iter().any(|(n, _)| *n == "units") {
        v.put_attribute("units", "K").unwrap();
    }
    for i in 0..padding {
        v.put_attribute(&format!("comment_{i}"), format!("a text attribute, number {i}")).unwrap();
    }
    if classic {
        f.enddef().unwrap();
    }
    let lat: Vec<f64> = (0..NLAT).map(|j| -70.0 + 20.0 * j as f64).collect();
    let lon: Vec<f64> = (0..NLON).map(|i| 15.0 + 30.0 * i as f64).collect();
    f.variable_mut("lat").unwrap().put_values(&lat, ..).unwrap();
    f.variable_mut("lon").unwrap().put_values(&lon, ..).unwrap();
    let mut v = f.variable_mut("sst").unwrap();
    match stored {
        Stored::F64(x) => v.put_values(x, ..).unwrap(),
        Stored::I16(x) => v.put_values(x, ..).unwrap(),
        Stored::I64(x) => v.put_values(x, ..).unwrap(),
        Stored::U64(x) => v.put_values(x, ..).unwrap(),
    }
    f.close().unwrap();
}

/// The input files in date order (the first is the job's first file).
fn files(data: &Path) -> Vec<((i32, u32), PathBuf)> {
    let mut v = Vec::new();
    for y in YEARS {
        for d in DOYS {
            v.push(((y, d), data.join(format!("sst_{y}_{d:03}.nc"))));
        }
    }
    v
}

/// A case: how the usual files and the odd one are written, and each one's decoded values
/// (None: missing) as the test's own oracle sees them.
struct Case {
    name: &'static str,
    classic: bool,
    padding: usize,
    /// (stored, attributes, decoded) of file `k` (0-based in date order), odd or not.
    file: fn(k: usize, odd: bool) -> (Stored, Vec<(&'static str, A)>, Vec<Option<f64>>),
}

fn cells() -> impl Iterator<Item = usize> {
    0..NLAT * NLON
}

/// Float64 values: `value(k, c)`, with `marked` cells replaced by `mark` (and decoded missing).
fn floats(k: usize, marked: &[usize], mark: f64) -> (Stored, Vec<Option<f64>>) {
    let value = |c: usize| 10.0 + 0.25 * k as f64 + 0.125 * c as f64;
    let stored: Vec<f64> = cells().map(|c| if marked.contains(&c) { mark } else { value(c) }).collect();
    let decoded = cells().map(|c| (!marked.contains(&c)).then(|| value(c))).collect();
    (Stored::F64(stored), decoded)
}

fn fill_case(k: usize, odd: bool) -> (Stored, Vec<(&'static str, A)>, Vec<Option<f64>>) {
    if odd {
        // "land" cells marked -999 by this file's own _FillValue
        let (s, d) = floats(k, &[0, 1, 2, 13, 14], -999.0);
        (s, vec![("_FillValue", A::Double(-999.0))], d)
    } else {
        let (s, d) = floats(k, &[], 0.0);
        (s, vec![("_FillValue", A::Double(1e20))], d)
    }
}

fn scale_case(k: usize, odd: bool) -> (Stored, Vec<(&'static str, A)>, Vec<Option<f64>>) {
    let (scale, offset) = if odd { (2.0f32, 10.0f32) } else { (0.5f32, 10.0f32) };
    let stored: Vec<i16> = cells().map(|c| if c == 5 { -32768 } else { ((k * 3 + c) % 50) as i16 }).collect();
    let decoded =
        stored.iter().map(|&s| (s != -32768).then(|| f64::from(s) * f64::from(scale) + f64::from(offset))).collect();
    let attrs =
        vec![("_FillValue", A::Short(-32768)), ("scale_factor", A::Float(scale)), ("add_offset", A::Float(offset))];
    (Stored::I16(stored), attrs, decoded)
}

fn valid_max_case(k: usize, odd: bool) -> (Stored, Vec<(&'static str, A)>, Vec<Option<f64>>) {
    let (s, mut d) = floats(k, &[], 0.0);
    let max = if odd { 14.0 } else { 1000.0 };
    for x in d.iter_mut() {
        if x.is_some_and(|v| v > max) {
            *x = None;
        }
    }
    (s, vec![("valid_max", A::Double(max))], d)
}

fn missing_case(k: usize, odd: bool) -> (Stored, Vec<(&'static str, A)>, Vec<Option<f64>>) {
    if odd {
        let (s, d) = floats(k, &[3, 40, 41], -5.0);
        (s, vec![("missing_value", A::Double(-5.0))], d)
    } else {
        let (s, d) = floats(k, &[], 0.0);
        (s, vec![], d)
    }
}

/// Write the dataset of `case` into `data`; returns each file's decoded values.
fn dataset(data: &Path, case: &Case) -> Vec<Vec<Option<f64>>> {
    std::fs::create_dir_all(data).unwrap();
    files(data)
        .into_iter()
        .enumerate()
        .map(|(k, (date, path))| {
            let (stored, attrs, decoded) = (case.file)(k, date == ODD);
            write(&path, case.classic, &stored, &attrs, case.padding);
            decoded
        })
        .collect()
}

/// The job: target day 101 with a 1-day half window, so every file is in its window.
fn job(data: &Path, out: &Path, path: &str) -> Vec<String> {
    with(run_args(data, out, "2001-2002", "101"), &["--half-window", "1", "--min-samples", "1", "--read-path", path])
}

fn check(case: &Case) {
    let dir = tmp();
    let data = dir.path().join("data");
    let decoded = dataset(&data, case);
    let mut runs = Vec::new();
    for path in ["auto", "library", "forked"] {
        let out = dir.path().join(format!("out-{path}"));
        let json = dir.path().join(format!("{path}.json"));
        ok(&with(job(&data, &out, path), &["--timing-json", &s(&json)]));
        runs.push((path, output_bits(&out)));
    }
    for (path, bits) in &runs[1..] {
        assert_eq!(bits, &runs[0].1, "{}: --read-path {path} differs from the default path", case.name);
    }
    // the mean of what was written, cell by cell
    let (mean, dims) = read_stat(&dir.path().join("out-auto/mean_doy101.nc"), "mean");
    assert_eq!(dims[dims.len() - 2..], [("lat".to_string(), NLAT), ("lon".to_string(), NLON)]);
    for c in cells() {
        let valid: Vec<f64> = decoded.iter().filter_map(|f| f[c]).collect();
        if valid.is_empty() {
            // missing in every file: the output's fill value
            assert!(mean[c].is_nan() || mean[c] > 9e36, "{}: cell {c}: {}", case.name, mean[c]);
            continue;
        }
        let want = valid.iter().sum::<f64>() / valid.len() as f64;
        assert!((mean[c] - want).abs() <= 1e-9 * want.abs(), "{}: cell {c}: mean {} != {want}", case.name, mean[c]);
    }
    // on the default path the odd file, and only it, went through the library
    let json = std::fs::read_to_string(dir.path().join("auto.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["files_library"], 1, "{}: {report}", case.name);
    assert_eq!(report["files_direct"], 5, "{}: {report}", case.name);
}

#[test]
fn own_fill_value_netcdf4_dense_attributes() {
    check(&Case { name: "fill, netCDF-4, 12 attributes", classic: false, padding: 10, file: fill_case });
}

#[test]
fn own_fill_value_netcdf3() {
    check(&Case { name: "fill, NetCDF-3", classic: true, padding: 0, file: fill_case });
}

#[test]
fn own_scale_factor_int16() {
    check(&Case { name: "scale, netCDF-4", classic: false, padding: 0, file: scale_case });
    check(&Case { name: "scale, NetCDF-3", classic: true, padding: 10, file: scale_case });
}

#[test]
fn own_valid_max() {
    check(&Case { name: "valid_max, netCDF-4, 12 attributes", classic: false, padding: 10, file: valid_max_case });
    check(&Case { name: "valid_max, NetCDF-3", classic: true, padding: 0, file: valid_max_case });
}

#[test]
fn own_missing_value() {
    check(&Case { name: "missing_value, netCDF-4", classic: false, padding: 0, file: missing_case });
    check(&Case { name: "missing_value, NetCDF-3", classic: true, padding: 0, file: missing_case });
}

/// Run expecting exit 2 with one line naming every `needles`, and no outputs.
fn expect_failure(args: &[String], out: &Path, needles: &[&str]) {
    let err = fails(args);
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected:\n{err}");
    for n in needles {
        assert!(err.contains(n), "error should mention '{n}':\n{err}");
    }
    assert!(entries(out).is_empty(), "no outputs expected, found {:?}", entries(out));
}

#[test]
fn sixty_four_bit_integers_are_refused_on_every_path() {
    for (type_name, odd) in [
        ("int64", Stored::I64((0..(NLAT * NLON) as i64).map(|c| c * 3).collect())),
        ("uint64", Stored::U64((0..(NLAT * NLON) as u64).map(|c| c * 3).collect())),
    ] {
        let dir = tmp();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        for (k, (date, path)) in files(&data).into_iter().enumerate() {
            if date == ODD {
                write(&path, false, &odd, &[], 0);
            } else {
                write(&path, false, &floats(k, &[], 0.0).0, &[], 0);
            }
        }
        for path in ["auto", "library", "forked"] {
            let out = dir.path().join(format!("out-{path}"));
            let needles = ["sst_2002_101.nc", "variable 'sst'", &format!("is stored as {type_name}")];
            expect_failure(&job(&data, &out, path), &out, &needles);
        }
    }
}

#[test]
fn int16_pool_refuses_a_file_packed_otherwise() {
    let dir = tmp();
    let data = dir.path().join("data");
    dataset(&data, &Case { name: "scale", classic: false, padding: 0, file: scale_case });
    for path in ["auto", "library", "forked"] {
        let out = dir.path().join(format!("out-{path}"));
        let args = with(job(&data, &out, path), &["--pool", "i16"]);
        expect_failure(&args, &out, &["sst_2002_101.nc", "variable 'sst'", "scale_factor", "--pool f32"]);
    }
    // files packed alike are read exactly by the int16 pool, equal to the float64 pool
    let same = dir.path().join("same");
    std::fs::create_dir_all(&same).unwrap();
    for (k, (_, path)) in files(&same).into_iter().enumerate() {
        let (stored, attrs, _) = scale_case(k, false);
        write(&path, false, &stored, &attrs, 0);
    }
    let (a, b) = (dir.path().join("i16"), dir.path().join("f64"));
    ok(&with(job(&same, &a, "auto"), &["--pool", "i16"]));
    ok(&with(job(&same, &b, "auto"), &["--pool", "f64"]));
    assert_eq!(output_bits(&a), output_bits(&b));
}

#[test]
fn files_in_other_units_are_refused_and_other_spellings_accepted() {
    for (classic, padding) in [(false, 0), (false, 10), (true, 0)] {
        let dir = tmp();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let write_all = |odd_units: &str| {
            for (k, (date, path)) in files(&data).into_iter().enumerate() {
                let units = if date == ODD { odd_units } else { "K" };
                write(&path, classic, &floats(k, &[], 0.0).0, &[("units", A::from(units))], padding);
            }
        };
        // degrees Celsius among kelvin files: an error on every path
        write_all("degree_Celsius");
        for path in ["auto", "library", "forked"] {
            let out = dir.path().join(format!("out-{path}"));
            let needles = ["sst_2002_101.nc", "variable 'sst'", "units 'degree_Celsius'", "'K'"];
            expect_failure(&job(&data, &out, path), &out, &needles);
        }
        // another spelling of kelvin is the same unit, on the direct path too
        write_all("kelvin");
        let out = dir.path().join("kelvin");
        let json = dir.path().join("kelvin.json");
        ok(&with(job(&data, &out, "auto"), &["--timing-json", &s(&json)]));
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(report["files_direct"], 6, "classic {classic}, padding {padding}: {report}");
    }
}
