//! Helpers shared by the integration tests: run the real binary, generate datasets, read
//! outputs through the netcdf crate directly.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    // SSTCLIM_TEST_BIN: the binary to test where the build path does not exist (test binaries
    // carried to a GPU node)
    let exe = std::env::var_os("SSTCLIM_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_sstclim").into());
    let mut c = Command::new(exe);
    c.env_remove("RUST_LOG");
    // Tests run in parallel threads of one process: a file this process writes with libnetcdf
    // can be inherited (with its HDF5 flock) by a child another test spawns at that moment,
    // and a later reader would then find it locked. Readers in tests skip HDF5 file locking,
    // and the child closes every descriptor it inherited besides its standard streams (HDF5
    // opens files without close-on-exec), so this process's own next open of such a file
    // (`netcdf::append` in a test) does not find it locked by the child for as long as it runs.
    c.env("HDF5_USE_FILE_LOCKING", "FALSE");
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the forked child before exec and only makes one
        // async-signal-safe system call (close_range; its failure on an old kernel is ignored).
        unsafe {
            c.pre_exec(|| {
                libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
                Ok(())
            });
        }
    }
    // runs neither read nor record the user's measured rates (tests that want them name a
    // file with --rates), so segments do not depend on what ran before
    c.env("SSTCLIM_RATES", "none");
    c
}

fn show<S: AsRef<OsStr>>(args: &[S]) -> String {
    args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

/// Run sstclim with `args`; panics with its output unless it succeeds.
pub fn ok<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let out = bin().args(args).output().expect("run sstclim");
    assert!(
        out.status.success(),
        "sstclim {} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        show(args),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run sstclim with `args` expecting failure with exit status 2; returns stderr.
pub fn fails<S: AsRef<OsStr>>(args: &[S]) -> String {
    let out = bin().args(args).output().expect("run sstclim");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "expected exit 2 from sstclim {}:\n{stderr}", show(args));
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "sstclim panicked:\n{stderr}");
    stderr
}

/// Generate a dataset into `dir` with the given extra flags (1 process unless given).
pub fn generate(dir: &Path, extra: &[&str]) {
    let d = dir.to_str().unwrap();
    let mut args = vec!["-q", "generate", "--output", d];
    args.extend_from_slice(extra);
    ok(&args);
}

/// `sstclim -q run --input DATA --output OUT --baseline YEARS --doys DOYS`, to extend with flags.
pub fn run_args(data: &Path, out: &Path, years: &str, doys: &str) -> Vec<String> {
    let v = ["-q", "run", "--input", &s(data), "--output", &s(out), "--baseline", years, "--doys", doys];
    v.iter().map(|x| x.to_string()).collect()
}

/// `args` followed by `more`.
pub fn with(mut args: Vec<String>, more: &[&str]) -> Vec<String> {
    args.extend(more.iter().map(|x| x.to_string()));
    args
}

/// Files (not hidden or hidden) left in a directory.
pub fn entries(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    }
}

/// A variable's values and dimension names, straight from the netcdf crate.
pub fn read(path: &Path, var: &str) -> (Vec<f64>, Vec<(String, usize)>) {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v = f.variable(var).unwrap_or_else(|| panic!("{}: no {var}", path.display()));
    let dims = v.dimensions().iter().map(|d| (d.name(), d.len())).collect();
    (v.get_values::<f64, _>(..).unwrap(), dims)
}

/// The values and dimensions of statistic `stat` (`mean`, `p90`) in an output file: the
/// variable named `{input variable}_{stat}` (see `sstclim::output::names`).
pub fn read_stat(path: &Path, stat: &str) -> (Vec<f64>, Vec<(String, usize)>) {
    read(path, &stat_var(path, stat))
}

/// The name of statistic `stat`'s variable in `path`: the one variable named `*_{stat}`.
pub fn stat_var(path: &Path, stat: &str) -> String {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let found: Vec<String> = f.variables().map(|v| v.name()).filter(|n| n.ends_with(&format!("_{stat}"))).collect();
    assert_eq!(found.len(), 1, "{}: variables named *_{stat}: {found:?}", path.display());
    found[0].clone()
}

/// The `.nc` outputs in `dir`, sorted by name, with the bits of their statistic's values (the
/// `mean` variable of mean files, `p90` of the others), for bitwise comparisons of runs.
pub fn output_bits(dir: &Path) -> Vec<(String, Vec<u64>)> {
    let mut names: Vec<String> = entries(dir).into_iter().filter(|n| n.ends_with(".nc")).collect();
    names.sort();
    assert!(!names.is_empty(), "no outputs in {}", dir.display());
    names
        .into_iter()
        .map(|n| {
            let stat = if n.contains("mean") { "mean" } else { "p90" };
            let (v, _) = read_stat(&dir.join(&n), stat);
            (n, v.iter().map(|x| x.to_bits()).collect())
        })
        .collect()
}

pub fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

/// The metadata of a small output set for the output writer tests: index coordinates on an
/// `nlat` x `nlon` grid, P90 by method 5 within ±2 days over 2001-2003 (ordinal days), a
/// kelvin variable `sst`. Tests change the fields they are about.
pub fn output_meta(nlat: usize, nlon: usize, doys: &[u16]) -> sstclim::output::OutputMeta {
    use sstclim::input::{Coord, Grid, VarMeta};
    let coord = |dim: &str, n: usize| Coord::new(dim, (0..n).map(|i| i as f64).collect(), true);
    sstclim::output::OutputMeta {
        stats: sstclim::stats::StatSpec {
            percentiles: vec!["90".parse().unwrap()],
            method: sstclim::stats::percentile::Method::new(5).unwrap(),
            min_samples: 1,
        },
        window: sstclim::window::WindowSpec {
            years: 2001..=2003,
            doys: doys.to_vec(),
            half_window: 2,
            calendar: sstclim::calendar::Calendar::Ordinal,
        },
        rules: sstclim::smooth::DayRules::default(),
        grid: Grid::regular(coord("lat", nlat), coord("lon", nlon)),
        input_var: "sst".into(),
        var_meta: VarMeta { units: Some("K".into()), long_name: None, standard_name: None },
        input_template: "in".into(),
        missing_files: 0,
        history: "test".into(),
    }
}

pub mod events;
pub mod h5meta_fixtures;
