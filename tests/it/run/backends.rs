//! Backend and pool selection from the command line: a GPU backend that cannot run here is a
//! one-line error (exit 2, no output), never a panic; `--backend auto` falls back to the CPU
//! engine and gives its results; GPU engines default to a float32 pool for float input; the
//! int16 pool is exact for int16-packed input, and packs float input only when asked (lossy),
//! within half a packing step of the float64 results. Tests that run on a backend are named by
//! it (`name::cpu`, `name::cuda`, ...; see `sstclim::test_each_backend!`).

use std::path::{Path, PathBuf};

use crate::common::*;
use sstclim::engine::each_backend::name;
use sstclim::engine::Backend;

fn dataset(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    generate(&data, &["--grid", "16x9", "--years", "2001-2003", "--doys", "100-112"]);
    data
}

fn job(data: &Path, out: &Path) -> Vec<String> {
    with(run_args(data, out, "2001-2003", "103-109"), &["--half-window", "3"])
}

fn report(out: &Path, args: Vec<String>) -> serde_json::Value {
    let json = out.with_extension("json");
    let args = with(args, &["--timing-json", &s(&json)]);
    ok(&args);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

#[test]
fn an_unavailable_gpu_backend_is_a_clear_error_cuda() {
    if sstclim::engine::gpu::cuda::driver_present() {
        eprintln!("SKIPPED the CUDA-unavailable case: this machine has a CUDA driver");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let out = dir.path().join("cuda");
    let args = with(job(&data, &out), &["--backend", "cuda"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert!(err.contains("CUDA backend is unavailable") && err.contains("libcuda"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(entries(&out).is_empty(), "no outputs after a refused backend");
}

#[test]
fn an_unavailable_gpu_backend_is_a_clear_error_hip() {
    if cfg!(feature = "hip") {
        eprintln!("SKIPPED the HIP-unavailable case: built with the hip feature");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let out = dir.path().join("hip");
    let args = with(job(&data, &out), &["--backend", "hip"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert!(err.contains("HIP backend is unavailable") && err.contains("`hip` cargo feature"), "{err}");
}

#[test]
fn auto_backend_equals_the_cpu_engine_and_pools_follow_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let cpu = dir.path().join("cpu");
    let r = report(&cpu, with(job(&data, &cpu), &["--backend", "cpu"]));
    assert_eq!(r["backend"], "cpu");
    assert_eq!(r["pool"], "f64", "host engines default to the exact float64 pool");
    let auto = dir.path().join("auto");
    let r = report(&auto, job(&data, &auto));
    if r["backend"] == "cpu" {
        assert_eq!(r["pool"], "f64");
        ok(&["compare", &s(&cpu), &s(&auto)]);
    } else {
        // a GPU was found: float32 pool by default, equal to the CPU engine on that pool
        assert_eq!(r["pool"], "f32");
        let cpu32 = dir.path().join("cpu32");
        report(&cpu32, with(job(&data, &cpu32), &["--backend", "cpu", "--pool", "f32"]));
        ok(&["compare", &s(&cpu32), &s(&auto)]);
    }
}

sstclim::test_each_backend!(int16_pool_is_exact_for_packed_input, [cpu, reference, cuda, hip], |backend: Backend| {
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("packed");
    generate(&packed, &["--grid", "16x9", "--years", "2001-2003", "--doys", "100-112", "--storage", "i16"]);
    let f64_out = dir.path().join("f64");
    let r = report(&f64_out, with(job(&packed, &f64_out), &["--backend", "cpu", "--pool", "f64"]));
    assert_eq!(r["pool"], "f64");
    let out = dir.path().join(format!("i16-{}", name(backend)));
    let r = report(&out, with(job(&packed, &out), &["--backend", name(backend), "--pool", "i16"]));
    assert_eq!(r["pool"], "i16");
    ok(&["compare", &s(&f64_out), &s(&out)]);
});

#[test]
fn int16_pool_is_refused_for_float_input() {
    let dir = tempfile::tempdir().unwrap();
    let floats = dataset(dir.path());
    let out = dir.path().join("refused");
    let args = with(job(&floats, &out), &["--backend", "cpu", "--pool", "i16"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert!(err.contains("--pool i16") && err.contains("float64"), "{err}");
    assert!(entries(&out).is_empty());
}

/// Outputs of a run as (file name, values), read with the netcdf crate.
fn outputs(dir: &Path) -> Vec<(String, Vec<f64>)> {
    let mut names: Vec<String> = entries(dir).into_iter().filter(|n| n.ends_with(".nc")).collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let stat = if n.contains("mean") { "mean" } else { "p90" };
            let values = read_stat(&dir.join(&n), stat).0;
            (n, values)
        })
        .collect()
}

// The host engines at a fine packing step, and whatever --backend auto finds (a GPU where
// present) and the GPU engines at a coarser one; every one equals the reference engine on the
// same packed pool, bit for bit.
sstclim::test_each_backend!(
    lossy_int16_packing_of_floats_is_within_half_a_step,
    [cpu, reference, auto, cuda, hip],
    |backend: Backend| {
        let dir = tempfile::tempdir().unwrap();
        let floats = dataset(dir.path());
        let exact = dir.path().join("f64");
        report(&exact, with(job(&floats, &exact), &["--backend", "cpu", "--pool", "f64", "--fill-value", "NaN"]));
        let want = outputs(&exact);
        assert_eq!(want.len(), 14);
        let name = name(backend);
        let scale = if matches!(backend, Backend::Cpu | Backend::Reference) { "0.001" } else { "0.01" };
        let packed = |backend: &str| {
            let out = dir.path().join(format!("packed-{backend}"));
            let flags = ["--backend", backend, "--pack-scale", scale, "--pack-offset", "15", "--fill-value", "NaN"];
            let r = report(&out, with(job(&floats, &out), &flags));
            assert_eq!(r["pool"], "i16", "{backend}");
            out
        };
        let out = packed(name);
        let half: f64 = scale.parse::<f64>().unwrap() / 2.0 + 1e-9;
        let (mut worst, mut compared) = (0.0f64, 0);
        for ((n, a), (m, b)) in want.iter().zip(outputs(&out)) {
            assert_eq!(n, &m);
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.is_nan(), y.is_nan(), "{name} {n}: missing cells differ");
                if !x.is_nan() {
                    worst = worst.max((x - y).abs());
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "{compared}");
        assert!(worst <= half, "{name}: {worst} > {half}");
        assert!(worst > 0.0, "{name}: packing at {scale} cannot be exact for these values");
        // equal to the reference engine on the same pool
        if backend != Backend::Reference {
            ok(&["compare", &s(&packed("reference")), &s(&out)]);
        }
    }
);

#[test]
fn lossy_int16_packing_is_refused_where_it_cannot_hold_the_values() {
    let dir = tempfile::tempdir().unwrap();
    let floats = dataset(dir.path());
    // a range too small for the data: refused, naming a file
    let out = dir.path().join("narrow");
    let args = with(job(&floats, &out), &["--backend", "cpu", "--pack-scale", "0.0001", "--pack-offset", "15"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert!(err.contains("outside the int16 packing range") && err.contains("sst_200"), "{err}");
    // naming the variable and a value of that file outside 15 ± 32766 x 0.0001
    let value: f64 = err.split("'sst' holds ").nth(1).and_then(|r| r.split(',').next()).unwrap().parse().unwrap();
    assert!((value - 15.0).abs() > 3.2766, "{err}");
    assert!(entries(&out).is_empty());
    // with another pool, or on input that is int16-packed already: refused
    let err =
        fails(&["run", "-i", "x", "--baseline", "2001", "--output", "o", "--pack-scale", "0.01", "--pool", "f32"]);
    assert!(err.contains("does not go with another --pool"), "{err}");
    let packed = dir.path().join("packed-input");
    generate(&packed, &["--grid", "16x9", "--years", "2001-2003", "--doys", "100-112", "--storage", "i16"]);
    let out = dir.path().join("repacked");
    let args = with(job(&packed, &out), &["--backend", "cpu", "--pack-scale", "0.01"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert!(err.contains("already stored as int16"), "{err}");
}

/// A finite value beyond float32's range in one float64 file: a float32 pool would round it to
/// infinity and take it for a missing value (a wrong answer), so `--pool f32` refuses it on
/// every read path, in one line naming the file, the variable and the value, writing nothing.
/// The float64 pool holds it: the mean of a window that holds it is the oracle's.
#[test]
fn a_value_beyond_the_float32_pool_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    let file = data.join("sst_2002_105.nc");
    // an ocean cell of that file (lat x lon = 9 x 16)
    let cell = read(&file, "sst").0.iter().position(|v| !v.is_nan()).unwrap();
    let set = |value: f64| {
        let mut f = netcdf::append(&file).unwrap();
        f.variable_mut("sst")
            .unwrap()
            .put_values(&[value], [cell / 16..cell / 16 + 1, cell % 16..cell % 16 + 1])
            .unwrap();
    };
    for (i, (value, shown, read_path)) in
        [(1e39, "1e39", "auto"), (-3.5e38, "-3.5e38", "library"), (1e300, "1e300", "forked")].into_iter().enumerate()
    {
        set(value);
        let out = dir.path().join(format!("f32-{i}"));
        let flags = ["--backend", "cpu", "--pool", "f32", "--read-path", read_path];
        let err = fails(&with(job(&data, &out), &flags));
        assert!(err.contains(&format!("{}: 'sst' holds {shown}, beyond float32's range", s(&file))), "{err}");
        assert!(err.contains("--pool f32") && err.contains("--pool f64"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(entries(&out).is_empty(), "{read_path}: {:?}", entries(&out));
    }
    set(1e39);
    let out = dir.path().join("f64");
    ok(&with(job(&data, &out), &["--backend", "cpu", "--pool", "f64"]));
    // day 105's window: days 102-108 of 2001-2003 (--half-window 3)
    let window: Vec<f64> = (2001..=2003)
        .flat_map(|y| (102..=108).map(move |d| (y, d)))
        .map(|(y, d)| read(&data.join(format!("sst_{y}_{d:03}.nc")), "sst").0[cell])
        .filter(|v| !v.is_nan())
        .collect();
    let want = window.iter().sum::<f64>() / window.len() as f64;
    let got = read_stat(&out.join("mean_doy105.nc"), "mean").0[cell];
    assert!(want > 1e37 && ((got - want) / want).abs() < 1e-12, "{got} vs {want}");
}
