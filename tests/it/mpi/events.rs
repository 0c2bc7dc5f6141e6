//! `sstclim events` as an MPI job under `mpirun --oversubscribe`: ranks take bands of cells,
//! rank 0 joins their parts, and the outputs are bitwise the same at 1, 2 and 3 ranks and as a
//! singleton without mpirun; a rank's failure ends the job with one message and no outputs.
#![cfg(feature = "mpi")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;

fn mpirun(np: usize, args: &[String]) -> Output {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np.to_string(), env!("CARGO_BIN_EXE_sstclim")]).args(args);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.env("OMPI_MCA_rmaps_base_oversubscribe", "1").env("HDF5_USE_FILE_LOCKING", "FALSE").env_remove("RUST_LOG");
    c.output().unwrap_or_else(|e| panic!("cannot start mpirun (install openmpi-bin): {e}"))
}

/// Every variable of every file in `dir`, as raw bits.
fn contents(dir: &Path) -> BTreeMap<String, BTreeMap<String, Vec<u64>>> {
    sstclim::input::silence_hdf5();
    let mut all = BTreeMap::new();
    for name in entries(dir) {
        let f = netcdf::open(dir.join(&name)).unwrap();
        let vars = f
            .variables()
            .map(|v| (v.name(), v.get_values::<f64, _>(..).unwrap().iter().map(|x| x.to_bits()).collect()))
            .collect();
        all.insert(name, vars);
    }
    all
}

/// A generated int16 dataset (kelvin) and a climatology for it.
fn dataset(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let data = dir.join("data");
    generate(&data, &["--grid", "16x9", "--years", "1990-1991", "--doys", "1-366", "--storage", "i16"]);
    let (lat, _) = read(&data.join("sst_1990_001.nc"), "lat");
    let (lon, _) = read(&data.join("sst_1990_001.nc"), "lon");
    let n = lat.len() * lon.len();
    // a seasonal mean by latitude and a threshold 1.5 K above it (10th percentile 1.5 below)
    let mean: Vec<f64> = (0..366 * n)
        .map(|k| {
            let (d, c) = (k / n, k % n);
            288.0
                + 10.0 * (lat[c / lon.len()] / 90.0).cos()
                + 2.0 * (2.0 * std::f64::consts::PI * d as f64 / 366.0).sin()
        })
        .collect();
    let p90: Vec<f64> = mean.iter().map(|m| m + 1.5).collect();
    let p10: Vec<f64> = mean.iter().map(|m| m - 1.5).collect();
    let clim = dir.join("climatology.nc");
    crate::common::events::write_climatology(
        &clim,
        "analysed_sst",
        &lat,
        &lon,
        "hobday366",
        &[("mean", &mean), ("p90", &p90), ("p10", &p10)],
    );
    (data, clim)
}

fn args(data: &Path, clim: &Path, out: &Path, more: &[&str]) -> Vec<String> {
    let v = ["-q", "events", "-i", &s(data), "-o", &s(out), "--years", "1990-1991", "--climatology", &s(clim)];
    v.iter().chain(more).map(|x| x.to_string()).collect()
}

#[test]
fn same_events_at_any_number_of_ranks() {
    let dir = tmp();
    let (data, clim) = dataset(dir.path());
    let single = dir.path().join("single");
    ok(&args(&data, &clim, &single, &["--max-mem", "600000"]));
    let want = contents(&single);
    assert!(want["events.nc"]["duration"].len() > 20, "too few events to compare");
    for np in [1, 2, 3] {
        for cold in [false, true] {
            let out = dir.path().join(format!("np{np}-{cold}"));
            let mut a = args(&data, &clim, &out, &["--max-mem", "600000"]);
            if cold {
                a.push("--cold".into());
            }
            let o = mpirun(np, &a);
            assert!(o.status.success(), "np {np}: {}", String::from_utf8_lossy(&o.stderr));
            if cold {
                let mut names = entries(&out);
                names.sort();
                assert_eq!(names, ["events_cold.nc", "summary_cold.nc"], "np {np}");
                continue;
            }
            assert_eq!(contents(&out), want, "np {np}");
        }
    }
}

/// `--both --output-type f32 --deflate 1`: the ranks' parts (contiguous, uncompressed) joined
/// into the outputs a singleton writes, compressed alike, at 2 and 3 ranks.
#[test]
fn same_compressed_events_at_any_number_of_ranks() {
    let dir = tmp();
    let (data, clim) = dataset(dir.path());
    let form = ["--both", "--output-type", "f32", "--deflate", "1", "--max-mem", "900000"];
    let single = dir.path().join("single");
    ok(&args(&data, &clim, &single, &form));
    let want = contents(&single);
    assert!(want["events_cold.nc"]["duration"].len() > 20, "too few events to compare");
    let chunking = |d: &Path, name: &str, var: &str| {
        netcdf::open(d.join(name)).unwrap().variable(var).unwrap().chunking().unwrap()
    };
    for np in [2, 3] {
        let out = dir.path().join(format!("np{np}"));
        let o = mpirun(np, &args(&data, &clim, &out, &form));
        assert!(o.status.success(), "np {np}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(contents(&out), want, "np {np}");
        for (name, var) in [("events.nc", "rate_onset"), ("events_cold.nc", "category"), ("summary.nc", "count")] {
            let c = chunking(&out, name, var);
            assert!(c.is_some(), "{name} {var} not chunked");
            assert_eq!(c, chunking(&single, name, var), "np {np} {name} {var}");
        }
    }
}

#[test]
fn a_failing_rank_ends_the_job_with_one_line() {
    let dir = tmp();
    let (data, clim) = dataset(dir.path());
    // a file of the analysis years missing: every rank refuses the same way
    std::fs::remove_file(data.join("sst_1991_200.nc")).unwrap();
    let out = dir.path().join("out");
    let o = mpirun(3, &args(&data, &clim, &out, &[]));
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("sst_1991_200.nc"), "{err}");
    assert!(entries(&out).iter().all(|n| !n.ends_with(".nc") && !n.contains("partial")), "{:?}", entries(&out));
}

/// A `360_day` job (yearly files, 360 days a year, a climatology of 360 days): the same bits
/// at 1 and 2 ranks and as a singleton, and events found to compare.
#[test]
fn a_360_day_job_is_the_same_bits_at_one_and_two_ranks() {
    use crate::common::events::{ar1, Rng, DAY360};
    let dir = tmp();
    let (lat, lon): (Vec<f64>, Vec<f64>) =
        ((0..5).map(|i| -40.0 + 20.0 * f64::from(i)).collect(), vec![0.0, 90.0, 180.0]);
    let n = lat.len() * lon.len();
    let mean: Vec<f64> = (0..360 * n)
        .map(|k| 15.0 + (k % n) as f64 + 2.0 * (2.0 * std::f64::consts::PI * (k / n) as f64 / 360.0).sin())
        .collect();
    let mut rng = Rng(9);
    let series: Vec<Vec<f64>> = (0..n)
        .map(|c| {
            let per_day: Vec<f64> = (0..720).map(|i| mean[(i % 360) * n + c]).collect();
            ar1(&mut rng, &per_day, 0.9, 1.0)
        })
        .collect();
    let data = dir.path().join("data");
    crate::common::events::write_series(&data, "tos", DAY360, 2001, &lat, &lon, &series);
    let p90: Vec<f64> = mean.iter().map(|m| m + 1.0).collect();
    let clim = dir.path().join("clim.nc");
    crate::common::events::write_climatology_in(
        &clim,
        "tos",
        &lat,
        &lon,
        "hobday366",
        Some("360_day"),
        360,
        &[("mean", &mean), ("p90", &p90)],
    );
    let args = |out: &Path| -> Vec<String> {
        let v = ["-q", "events", "-i", &s(&data), "-o", &s(out), "--years", "2001-2002", "--climatology", &s(&clim)];
        v.iter().chain(&["--max-mem", "100000"]).map(|x| x.to_string()).collect()
    };
    let single = dir.path().join("single");
    ok(&args(&single));
    let want = contents(&single);
    assert!(want["events.nc"]["duration"].len() > 20, "too few events to compare");
    for np in [1, 2] {
        let out = dir.path().join(format!("np{np}"));
        let o = mpirun(np, &args(&out));
        assert!(o.status.success(), "np {np}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(contents(&out), want, "np {np}");
    }
}
