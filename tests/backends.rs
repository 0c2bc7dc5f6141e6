//! Backend and pool selection from the command line: a GPU backend that cannot run here is a
//! one-line error (exit 2, no output), never a panic; `--backend auto` falls back to the CPU
//! engine and gives its results; GPU engines default to a float32 pool for float input; the
//! int16 pool is exact for int16-packed input and refused for float input.

mod common;

use std::path::{Path, PathBuf};

use common::*;

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
fn unavailable_gpu_backends_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dataset(dir.path());
    if sstclim::engine::gpu::cuda::driver_present() {
        eprintln!("SKIPPED the CUDA-unavailable case: this machine has a CUDA driver");
    } else {
        let out = dir.path().join("cuda");
        let args = with(job(&data, &out), &["--backend", "cuda"]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = fails(&argv);
        assert!(err.contains("CUDA backend is unavailable") && err.contains("libcuda"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(entries(&out).is_empty(), "no outputs after a refused backend");
    }
    if cfg!(feature = "hip") {
        eprintln!("SKIPPED the HIP-unavailable case: built with the hip feature");
    } else {
        let out = dir.path().join("hip");
        let args = with(job(&data, &out), &["--backend", "hip"]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = fails(&argv);
        assert!(err.contains("HIP backend is unavailable") && err.contains("`hip` cargo feature"), "{err}");
    }
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

#[test]
fn int16_pool_is_exact_for_packed_input_and_refused_for_floats() {
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("packed");
    generate(&packed, &["--grid", "16x9", "--years", "2001-2003", "--doys", "100-112", "--storage", "i16"]);
    let f64_out = dir.path().join("f64");
    let r = report(&f64_out, with(job(&packed, &f64_out), &["--backend", "cpu", "--pool", "f64"]));
    assert_eq!(r["pool"], "f64");
    for backend in ["cpu", "reference"] {
        let out = dir.path().join(format!("i16-{backend}"));
        let r = report(&out, with(job(&packed, &out), &["--backend", backend, "--pool", "i16"]));
        assert_eq!(r["pool"], "i16");
        ok(&["compare", &s(&f64_out), &s(&out)]);
    }
    let floats = dataset(dir.path());
    let out = dir.path().join("refused");
    let args = with(job(&floats, &out), &["--backend", "cpu", "--pool", "i16"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert!(err.contains("--pool i16") && err.contains("float64"), "{err}");
    assert!(entries(&out).is_empty());
}
