//! `--write-path`: `sstclim run` writing its outputs directly (`pwrite` from several threads)
//! must give the files the library path gives, tiles and segments included, in both layouts
//! and dimension orders; compressed outputs still go through the library.

use std::path::Path;

use crate::common::*;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// `sstclim run` (logging at info level) into `out` with `extra` flags; returns stderr.
fn run(data: &Path, out: &Path, extra: &[&str]) -> String {
    let mut args = run_args(data, out, "2001-2003", "104-118");
    args.remove(0); // -q: the log says which files were written directly
    let args = with(with(args, &["--fill-value", "-999", "--percentile", "10,90"]), extra);
    String::from_utf8(ok(&args).stderr).unwrap()
}

/// `sstclim compare` says the two result sets are bitwise equal over `files` files.
fn equal(a: &Path, b: &Path, files: usize) {
    let out = ok(&["compare", &s(a), &s(b)]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("EQUAL"), "{text}");
    let all = text.lines().find(|l| l.starts_with("all")).unwrap();
    assert_eq!(all.split_whitespace().nth(1), Some(files.to_string().as_str()), "{text}");
    assert_eq!(all.split_whitespace().nth(5), Some("0"), "differing values: {text}");
}

/// Every file's statistic, raw (fill value as stored), and its `_FillValue` attribute.
fn raw(dir: &Path) -> Vec<(String, Vec<u64>, String)> {
    let mut names: Vec<String> = entries(dir);
    names.sort();
    assert!(names.iter().all(|n| !n.starts_with('.')), "temporary files left: {names:?}");
    sstclim::input::silence_hdf5();
    names
        .into_iter()
        .map(|n| {
            let f = netcdf::open(dir.join(&n)).unwrap();
            let stat = ["mean", "p10", "p90"].into_iter().find(|v| n.starts_with(v)).unwrap();
            let v = f.variable(&format!("sst_{stat}")).unwrap();
            let fill = format!("{:?}", v.attribute("_FillValue").map(|a| a.value().unwrap()));
            let bits = v.get_values::<f64, _>(..).unwrap().iter().map(|x| x.to_bits()).collect();
            (n, bits, fill)
        })
        .collect()
}

/// The per-doy and stacked layouts, in tiles and segments, either dimension order: `auto`
/// writes every file directly and equals `library` bitwise, fill values included.
#[test]
fn direct_writes_equal_library_writes() {
    for order in ["lat-lon", "lon-lat"] {
        let dir = tmp();
        let data = dir.path().join("data");
        generate(&data, &["--grid", "80x41", "--years", "2001-2003", "--doys", "97-125", "--dim-order", order]);
        // 1M of budget: several tiles of rows (lat-lon) or of columns (lon-lat)
        let tiled: &[&str] = &["--max-mem", "1M", "--segments", "3", "--pool", "f64"];
        for layout in ["per-doy", "stacked"] {
            let out = |name: &str| dir.path().join(format!("{name}-{layout}"));
            let lay = ["--layout", layout];
            let log = run(&data, &out("auto"), &[&lay[..], tiled, &["--write-threads", "3"]].concat());
            let files = if layout == "per-doy" { 45 } else { 3 };
            let line = format!("writing {files} of {files} output file(s) directly (3 thread(s))");
            assert!(log.contains(&line), "{order} {layout}: expected '{line}' in\n{log}");
            assert!(log.contains(" tile(s)") && !log.contains(" 1 tile(s)"), "not tiled:\n{log}");
            let log = run(&data, &out("library"), &[&lay[..], tiled, &["--write-path", "library"]].concat());
            assert!(!log.contains("directly"), "{log}");
            equal(&out("auto"), &out("library"), files);
            let (a, b) = (raw(&out("auto")), raw(&out("library")));
            assert_eq!(a.len(), files);
            assert_eq!(a, b, "{order} {layout}: raw values or _FillValue differ");
            assert!(a.iter().all(|(_, _, fill)| fill == "Some(Double(-999.0))"), "{:?}", a[0].2);
            let filled = a.iter().flat_map(|(_, bits, _)| bits).filter(|&&x| x == (-999f64).to_bits()).count();
            assert!(filled > 0, "the generated land cells are written as the fill value");
        }
    }
}

/// netCDF4-python (when installed) reads the direct outputs like the library ones: the same
/// masked values, `_FillValue` -999, contiguous and unfiltered.
#[test]
fn netcdf4_python_reads_direct_outputs() {
    let probe = std::process::Command::new("python3").args(["-c", "import netCDF4"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: python3 with netCDF4 is not available");
        return;
    }
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "24x13", "--years", "2001-2003", "--doys", "97-125"]);
    run(&data, &dir.path().join("auto"), &["--max-mem", "1M"]);
    run(&data, &dir.path().join("library"), &["--max-mem", "1M", "--write-path", "library"]);
    let script = r#"
import sys, os, netCDF4, numpy as np
a, b = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(a))
assert names == sorted(os.listdir(b)) and len(names) == 45, names
masked = 0
for n in names:
    fa, fb = netCDF4.Dataset(os.path.join(a, n)), netCDF4.Dataset(os.path.join(b, n))
    var = n.split('_')[0]
    va, vb = fa[var], fb[var]
    assert va._FillValue == -999.0 and vb._FillValue == -999.0, n
    assert va.chunking() == 'contiguous' and not va.filters()['zlib'], n
    xa, xb = va[:], vb[:]
    assert np.array_equal(np.ma.getmaskarray(xa), np.ma.getmaskarray(xb)), n
    assert np.array_equal(xa.filled(np.nan), xb.filled(np.nan), equal_nan=True), n
    masked += int(np.ma.count_masked(xa))
assert masked > 0
print("OK", len(names), masked)
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", script, &s(&dir.path().join("auto")), &s(&dir.path().join("library"))])
        .env("HDF5_USE_FILE_LOCKING", "FALSE")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.starts_with("OK 45"), "{stdout}\n{stderr}");
}

/// `--deflate` with the default write path: every file's chunks compressed on the write
/// threads and stored directly, equal to the uncompressed direct outputs.
#[test]
fn deflate_writes_compressed_chunks_directly() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "24x13", "--years", "2001-2003", "--doys", "97-125"]);
    let log = run(&data, &dir.path().join("deflate"), &["--deflate", "4", "--write-threads", "2"]);
    assert!(log.contains("directly") && log.contains("compressed chunks"), "{log}");
    run(&data, &dir.path().join("direct"), &[]);
    equal(&dir.path().join("deflate"), &dir.path().join("direct"), 45);
    sstclim::input::silence_hdf5();
    let f = netcdf::open(dir.path().join("deflate/p90_doy110.nc")).unwrap();
    assert_eq!(f.variable("sst_p90").unwrap().chunking().unwrap(), Some(vec![1, 13, 24]));
    let f = netcdf::open(dir.path().join("direct/p90_doy110.nc")).unwrap();
    assert_eq!(f.variable("sst_p90").unwrap().chunking().unwrap(), None);
}

#[test]
fn write_flags_are_checked() {
    let dir = tmp();
    let out = dir.path().join("out");
    let err = fails(&with(run_args(&dir.path().join("none"), &out, "2001-2003", "104-118"), &["--write-threads", "0"]));
    assert!(err.contains("--write-threads must be at least 1"), "{err}");
    let bad = bin().args(["run", "--write-path", "fast"]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("possible values: auto, library"));
}
