//! The binary as an MPI job under `mpirun --oversubscribe`: the same outputs, bit for bit, at
//! 1, 2, 3 and 5 ranks and as a singleton without mpirun (both layouts, idle ranks, missing
//! files); the gathered timing; and failures that end the whole job at once with one message
//! naming the rank and the file, exit status 2 and no outputs left behind.
#![cfg(feature = "mpi")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::*;

/// `mpirun -np N sstclim ARGS` (as root too), with the test's environment.
fn mpirun(np: usize, args: &[String]) -> Output {
    mpirun_env(np, args, &[])
}

/// [`mpirun`] with more environment variables for the ranks.
fn mpirun_env(np: usize, args: &[String], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("mpirun");
    c.envs(env.iter().copied());
    c.args(["--oversubscribe", "-np", &np.to_string(), env!("CARGO_BIN_EXE_sstclim")]).args(args);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.env("OMPI_MCA_rmaps_base_oversubscribe", "1").env("HDF5_USE_FILE_LOCKING", "FALSE").env_remove("RUST_LOG");
    c.env("SSTCLIM_RATES", "none");
    c.output().unwrap_or_else(|e| panic!("cannot start mpirun (install openmpi-bin): {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mpirun_ok(np: usize, args: &[String]) -> Output {
    let out = mpirun(np, args);
    assert!(
        out.status.success(),
        "mpirun -np {np} sstclim {} failed ({}):\n{}\n{}",
        args.join(" "),
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Every variable of every file in `dir`, as raw bits, and the global attributes that must not
/// depend on the number of ranks.
fn contents(dir: &Path) -> BTreeMap<String, BTreeMap<String, Vec<u64>>> {
    sstclim::input::silence_hdf5();
    let mut all = BTreeMap::new();
    for name in entries(dir) {
        let f = netcdf::open(dir.join(&name)).unwrap();
        let mut vars = BTreeMap::new();
        for v in f.variables() {
            let values: Vec<f64> = v.get_values(..).unwrap();
            vars.insert(v.name(), values.iter().map(|x| x.to_bits()).collect());
        }
        for att in ["missing_input_files", "window_half_width_days", "climatology_years"] {
            let value = format!("{:?}", f.attribute(att).unwrap().value().unwrap());
            vars.insert(format!(":{att}"), value.bytes().map(u64::from).collect());
        }
        all.insert(name, vars);
    }
    all
}

/// A 3-year dataset with gaps, land and one missing file (day 70 of 2004).
fn dataset(dir: &Path) -> std::path::PathBuf {
    let data = dir.join("data");
    generate(&data, &["--grid", "20x11", "--years", "2003-2005", "--doys", "50-80", "--missing-fraction", "0.2"]);
    std::fs::remove_file(data.join("sst_2004_070.nc")).unwrap();
    data
}

#[test]
fn same_answer_at_any_scale() {
    let dir = tmp();
    let data = dataset(dir.path());
    for (layout, doys) in [("per-doy", "55-75"), ("stacked", "55-75"), ("per-doy", "61-63")] {
        let args = |out: &Path| {
            let base = run_args(&data, out, "2003-2005", doys);
            let base =
                with(base, &["--half-window", "3", "--percentile", "10,90", "--layout", layout, "--allow-missing"]);
            // stacked slices are joined by rank 0, which must keep the compression
            if layout == "stacked" {
                with(base, &["--deflate", "4"])
            } else {
                base
            }
        };
        let single = dir.path().join(format!("single-{layout}-{doys}"));
        ok(&args(&single));
        let want = contents(&single);
        let n_days = if doys == "55-75" { 21 } else { 3 };
        assert_eq!(want.len(), if layout == "per-doy" { 3 * n_days } else { 3 }, "{want:?}");
        for np in [1, 2, 3, 5] {
            let out = dir.path().join(format!("np{np}-{layout}-{doys}"));
            let run = mpirun_ok(np, &args(&out));
            let got = contents(&out);
            assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{np} ranks, {layout}");
            for (file, vars) in &want {
                assert!(got[file] == *vars, "{np} ranks, {layout} {doys}: {file} differs from the singleton run");
            }
            // (compared above) the job's count of missing files, not a rank's: 2004-070 is in
            // the windows of days 55-75 (read by one rank of several), not in those of 61-63
            let missing = &got[want.keys().next().unwrap()][":missing_input_files"];
            let expected = if doys == "55-75" { "Int(1)" } else { "Int(0)" };
            assert_eq!(text(&missing.iter().map(|&b| b as u8).collect::<Vec<_>>()), expected);
            assert_eq!(text(&run.stdout).matches("wrote ").count(), 1, "rank 0 alone reports:\n{}", text(&run.stdout));
        }
    }
}

#[test]
fn timing_is_gathered_from_every_rank() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let json = dir.path().join("timing.json");
    let args = with(run_args(&data, &out, "2003-2005", "55-75"), &["--half-window", "3", "--allow-missing"]);
    let rates = dir.path().join("rates.json");
    let run = mpirun_ok(3, &with(args, &["--timing-json", &s(&json), "--rates", &s(&rates)]));
    let stdout = text(&run.stdout);
    for row in ["min", "median", "max", "total wall"] {
        assert_eq!(stdout.lines().filter(|l| l.starts_with(row)).count(), 1, "{row}:\n{stdout}");
    }
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["ranks"], 3);
    let ranks = j["per_rank"].as_array().unwrap();
    // 21 days over 3 ranks: 7 each, contiguous; a rank reads (7 + 2*3) days of 3 years,
    // less the missing 2004-070 where its window reaches day 70
    let mut next = 55;
    for (r, rank) in ranks.iter().enumerate() {
        assert_eq!(rank["rank"], r);
        let (a, b) = (rank["doys"][0].as_u64().unwrap(), rank["doys"][1].as_u64().unwrap());
        assert_eq!((a, b), (next, next + 6));
        next = b + 1;
        let reads_70 = (a - 3..=b + 3).contains(&70);
        assert_eq!(rank["files_read"].as_u64().unwrap(), 13 * 3 - u64::from(reads_70), "rank {r}");
        assert_eq!(rank["outputs"], 14);
        assert!(rank["stage_seconds"]["read"].as_f64().unwrap() > 0.0);
        assert_eq!(rank["binding"]["node_size"], 3);
    }
    let read: Vec<f64> = ranks.iter().map(|r| r["stage_seconds"]["read"].as_f64().unwrap()).collect();
    let (lo, hi) = (read.iter().cloned().fold(f64::MAX, f64::min), read.iter().cloned().fold(0.0, f64::max));
    assert_eq!((j["stages"]["read"]["min"].as_f64().unwrap(), j["stages"]["read"]["max"].as_f64().unwrap()), (lo, hi));
    // rank 0's job wall time ends after its own per-rank wall time (taken before the last agreement)
    assert!(j["total_wall_seconds"].as_f64().unwrap() >= ranks[0]["wall_seconds"].as_f64().unwrap());
    assert_eq!(j["files_read_total"], ranks.iter().map(|r| r["files_read"].as_u64().unwrap()).sum::<u64>());
    // every rank recorded its rates into the one file, replacing it whole each time (an update
    // read before another rank's rename may be lost, never torn)
    assert!(ranks.iter().all(|r| r["report"]["rates_recorded"] == true), "{j}");
    let rates: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&rates).unwrap()).unwrap();
    let kept = rates["entries"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "{rates}");
    assert!((1..=3).contains(&kept[0]["runs"].as_u64().unwrap()), "{rates}");
    let names = entries(dir.path());
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "temporary files left: {names:?}");
}

/// Run at 3 ranks expecting the job to fail; returns sstclim's error lines.
fn expect_job_failure(args: &[String], out: &Path) -> String {
    let start = Instant::now();
    let run = mpirun(3, args);
    let elapsed = start.elapsed();
    let stderr = text(&run.stderr);
    assert!(elapsed < Duration::from_secs(20), "the job took {elapsed:?} to fail:\n{stderr}");
    assert_eq!(run.status.code(), Some(2), "exit status of the job:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "rank 0 alone reports:\n{stderr}");
    let left = entries(out);
    assert!(left.is_empty(), "no outputs, staged or final, may remain: {left:?}");
    stderr
}

#[test]
fn corrupt_file_ends_the_job_within_seconds() {
    let dir = tmp();
    let data = dataset(dir.path());
    // days 55..=75 over 3 ranks with h = 3: rank 1 (days 62..=68) alone reads day 65
    let victim = data.join("sst_2004_065.nc");
    let mut bytes = std::fs::read(&victim).unwrap();
    for b in bytes.iter_mut().take(64) {
        *b ^= 0x5A;
    }
    std::fs::write(&victim, &bytes).unwrap();
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2003-2005", "55-75"), &["--half-window", "3", "--allow-missing"]);
    let err = expect_job_failure(&args, &out);
    assert!(err.contains("error: rank 1 of 3: ") && err.contains("sst_2004_065.nc: cannot open as NetCDF"), "{err}");
    // a halo file (day 60: ranks 0 and 1 both read it) names both ranks in one line
    std::fs::write(data.join("sst_2003_060.nc"), b"this is not a NetCDF file").unwrap();
    std::fs::write(&victim, std::fs::read(data.join("sst_2004_066.nc")).unwrap()).unwrap();
    let err = expect_job_failure(&args, &out);
    assert!(err.contains("error: ranks 0, 1 of 3: ") && err.contains("sst_2003_060.nc"), "{err}");
}

#[test]
fn failure_during_computation_is_agreed_and_rolled_back() {
    // a file whose header is fine but whose latitudes differ: found while reading, after the
    // validation agreement, on rank 2 only (days 69..=75 read 66..=78, rank 1 reads up to 71);
    // the others have staged
    // their outputs by then and must remove them
    let dir = tmp();
    let data = dataset(dir.path());
    {
        sstclim::input::silence_hdf5();
        let mut f = netcdf::append(data.join("sst_2003_074.nc")).unwrap();
        f.variable_mut("lat").unwrap().put_values(&[-89.5], 0..1).unwrap();
    }
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2003-2005", "55-75"), &["--half-window", "3", "--allow-missing"]);
    let err = expect_job_failure(&args, &out);
    assert!(
        err.contains("error: rank 2 of 3: ") && err.contains("sst_2003_074.nc: latitude coordinate differs"),
        "{err}"
    );
    // stacked: the same
    let err = expect_job_failure(&with(args, &["--layout", "stacked"]), &out);
    assert!(err.contains("rank 2 of 3"), "{err}");
}

#[test]
fn existing_outputs_are_refused_before_any_work() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2003-2005", "55-60"), &["--half-window", "3", "--allow-missing"]);
    mpirun_ok(2, &args);
    let before = entries(&out);
    assert_eq!(before.len(), 12);
    let run = mpirun(2, &args);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    // both ranks own existing files (their own, so two lines)
    assert!(stderr.contains("error: rank 0 of 2: ") && stderr.contains("\nrank 1 of 2: "), "{stderr}");
    assert!(stderr.contains("already exists (pass --overwrite"), "{stderr}");
    let mut after = entries(&out);
    after.sort();
    let mut before = before;
    before.sort();
    assert_eq!(after, before);
    mpirun_ok(2, &with(args, &["--overwrite"]));
    assert_eq!(entries(&out).len(), 12);
}

#[cfg(feature = "test-hooks")] // SSTCLIM_TEST_* hooks are read only with this feature
#[test]
fn a_rank_that_cannot_publish_rolls_every_rank_back() {
    // days 55..=74 over 3 ranks: 7, 7 and 6 target days, so 14, 14 and 12 files (mean and
    // P90): the 13th move into the output directory fails on ranks 0 and 1, while rank 2 has
    // published all 12 of its files, and must take them back
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2003-2005", "55-74"), &["--half-window", "3", "--allow-missing"]);
    mpirun_ok(3, &args);
    let snapshot = |dir: &Path| {
        let mut names = entries(dir);
        names.sort();
        names.into_iter().map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap())).collect::<Vec<_>>()
    };
    let before = snapshot(&out);
    assert_eq!(before.len(), 40);
    let run = mpirun_env(3, &with(args, &["--overwrite"]), &[("SSTCLIM_TEST_FAIL_RENAME", "13")]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: rank 0 of 3: ") && stderr.contains("\nrank 1 of 3: "), "{stderr}");
    assert!(stderr.contains("cannot move into place"), "{stderr}");
    assert!(!stderr.contains("rank 2 of 3"), "rank 2 published, then rolled back:\n{stderr}");
    assert_eq!(snapshot(&out), before, "every rank's previous outputs are back, byte for byte");
}

/// Every variable of the climatology file in `dir`, as raw bits.
fn climatology_bits(dir: &Path) -> BTreeMap<String, Vec<u64>> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(dir.join("climatology.nc")).unwrap();
    f.variables()
        .map(|v| (v.name(), v.get_values::<f64, _>(..).unwrap().iter().map(|x| x.to_bits()).collect()))
        .collect()
}

/// The Hobday climatology (windows into the years around, Feb 29 interpolated, 31-day periodic
/// smoothing) at 1, 2, 3 and 5 ranks equals the singleton bit for bit, as one climatology file
/// joined along `doy` and as a partial stacked range: each rank computes the halo days its own
/// days' smoothing needs (wrapping around the year) and writes only its own days.
#[test]
fn hobday_climatology_at_any_scale() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "9x7", "--years", "2002-2005", "--doys", "1-366", "--missing-fraction", "0.2"]);
    let args = |out: &Path, doys: &str, layout: &str| {
        let base = run_args(&data, out, "2003-2004", doys);
        let rules = ["--window-edges", "extend", "--feb29", "interpolate", "--smooth", "31", "--half-window", "3"];
        let rest = ["--calendar", "hobday366", "--method", "7", "--percentile", "10,90", "--layout", layout];
        with(with(base, &rules), &rest)
    };
    let single = dir.path().join("single");
    ok(&args(&single, "1-366", "climatology"));
    let want = climatology_bits(&single);
    assert_eq!(want["doy"].len(), 366);
    let partial = dir.path().join("single-partial");
    ok(&args(&partial, "1-4,58-62,362-366", "stacked"));
    let want_partial = contents(&partial);
    for np in [1, 2, 3, 5] {
        let out = dir.path().join(format!("np{np}"));
        mpirun_ok(np, &args(&out, "1-366", "climatology"));
        assert_eq!(entries(&out), ["climatology.nc"], "{np} ranks");
        let got = climatology_bits(&out);
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
        for (var, bits) in &want {
            assert!(got[var] == *bits, "{np} ranks: {var} differs from the singleton run");
        }
        if np > 1 {
            let out = dir.path().join(format!("np{np}-partial"));
            mpirun_ok(np, &args(&out, "1-4,58-62,362-366", "stacked"));
            assert!(contents(&out) == want_partial, "{np} ranks: the partial stacked range differs");
        }
    }
}
