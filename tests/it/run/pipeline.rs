//! The rank-local pipeline: the direct `pread` path and the overlapped segments must give the
//! same outputs, bit for bit, as the sequential path through libnetcdf (the reference), and
//! the timeline must show every stage of every batch.

use std::path::Path;

use crate::common::*;
use serde_json::Value;
use sstclim::engine::each_backend::name;
use sstclim::engine::Backend;

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Run the job with `flags`; returns the outputs and the run report.
fn job(data: &Path, root: &Path, name: &str, flags: &[&str]) -> (Vec<(String, Vec<u64>)>, Value) {
    let out = root.join(name);
    let report = root.join(format!("{name}.json"));
    let mut args = run_args(data, &out, "2001-2004", "100-130");
    args.extend(["--half-window", "3", "--allow-missing", "--timing-json", &s(&report)].map(String::from));
    ok(&with(args, flags));
    (output_bits(&out), json(&report))
}

#[test]
fn direct_and_overlapped_runs_equal_the_sequential_library_run() {
    let dir = tmp();
    for (storage, order) in [("f64", "lon-lat"), ("i16", "lat-lon")] {
        let data = dir.path().join(format!("data-{storage}"));
        generate(
            &data,
            &[
                "--grid",
                "37x23",
                "--years",
                "2001-2004",
                "--doys",
                "95-135",
                "--storage",
                storage,
                "--dim-order",
                order,
            ],
        );
        let _ = std::fs::remove_file(data.join(if storage == "f64" { "sst_2002_110.nc" } else { "sst_2003_101.nc" }));
        let root = dir.path().join(format!("runs-{storage}"));
        let (want, r) = job(&data, &root, "seq", &["--read-path", "library", "--segments", "1"]);
        assert_eq!((r["files_direct"].as_u64(), r["segments"].as_u64()), (Some(0), Some(1)));
        let files = r["files_read"].as_u64().unwrap();
        assert_eq!(r["files_library"].as_u64(), Some(files));
        for (name, flags) in [
            ("direct", &["--segments", "1"][..]),
            ("overlap3", &["--segments", "3"][..]),
            ("overlap31", &["--segments", "31", "--threads", "3"][..]),
            ("library-overlap", &["--read-path", "library", "--segments", "4"][..]),
            ("library-forked", &["--read-path", "forked", "--segments", "3", "--readers", "3"][..]),
            ("tiles", &["--segments", "2", "--max-mem", "1M"][..]),
        ] {
            let (got, r) = job(&data, &root, name, flags);
            assert_eq!(got, want, "{storage} {name}: outputs differ from the sequential library run");
            let direct = if name.starts_with("library") { 0 } else { files * r["tiles"].as_u64().unwrap() };
            assert_eq!(r["files_direct"].as_u64(), Some(direct), "{storage} {name}: {r}");
        }
    }
}

#[test]
fn a_file_with_another_layout_goes_through_the_library() {
    let dir = tmp();
    let data = dir.path().join("data");
    let other = dir.path().join("other");
    let common = ["--grid", "30x20", "--years", "2001-2004", "--doys", "95-135"];
    generate(&data, &common);
    generate(&other, &[&common[..], &["--time-dim", "--seed", "7"]].concat());
    // same name, other structure (a time dimension), other values
    std::fs::copy(other.join("sst_2003_112.nc"), data.join("sst_2003_112.nc")).unwrap();
    let root = dir.path().join("runs");
    let (want, _) = job(&data, &root, "seq", &["--read-path", "library", "--segments", "1"]);
    let (got, r) = job(&data, &root, "auto", &["--segments", "3"]);
    assert_eq!(got, want);
    assert_eq!(r["files_library"].as_u64(), Some(1), "{r}");
    assert_eq!(r["files_direct"].as_u64().unwrap() + 1, r["files_read"].as_u64().unwrap());
}

#[test]
fn the_timeline_has_every_stage_of_every_batch() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "30x20", "--years", "2001-2004", "--doys", "95-135"]);
    let trace = dir.path().join("trace.json");
    let (_, r) = job(&data, dir.path(), "run", &["--segments", "3", "--trace-json", &s(&trace)]);
    let t = json(&trace);
    assert_eq!((t["rank"].as_u64(), t["ranks"].as_u64()), (Some(0), Some(1)));
    let spans = t["spans"].as_array().unwrap();
    let of = |stage: &str| spans.iter().filter(|s| s["stage"] == stage).collect::<Vec<_>>();
    let files = r["files_read"].as_u64().unwrap() as usize;
    assert_eq!(of("read").len(), files);
    let read_bytes: u64 = of("read").iter().map(|s| s["bytes"].as_u64().unwrap()).sum();
    assert_eq!(read_bytes, r["bytes_read"].as_u64().unwrap());
    for stage in ["compute", "write"] {
        let batches: Vec<u64> = of(stage).iter().map(|s| s["batch"].as_u64().unwrap()).collect();
        assert_eq!(batches, [0, 1, 2], "{stage}");
    }
    // the pool: allocated in host memory, or (GPU engines) made room for in device memory
    let pool = if r["pool_location"] == "device" { "stage-pool" } else { "alloc" };
    assert_eq!(of(pool).len(), 1, "{pool}");
    if r["pool_location"] == "device" {
        assert_eq!(of("upload").len(), files, "every row goes to the device once");
    }
    for s in spans {
        let (a, b) = (s["start"].as_f64().unwrap(), s["end"].as_f64().unwrap());
        assert!(0.0 <= a && a <= b && b <= r["wall_seconds"].as_f64().unwrap() + 1.0, "{s}");
    }
    // a segment is computed only once its files are in, and written after it is computed
    let last_read_of = |slots_needed: usize| {
        let mut ends: Vec<f64> = of("read").iter().map(|s| s["end"].as_f64().unwrap()).collect();
        ends.sort_by(f64::total_cmp);
        ends[slots_needed - 1]
    };
    let compute = of("compute");
    let write = of("write");
    assert!(compute[0]["start"].as_f64().unwrap() >= last_read_of(1));
    for k in 0..3 {
        assert!(write[k]["start"].as_f64().unwrap() >= compute[k]["end"].as_f64().unwrap());
    }
    let reads_before_last_compute = compute[2]["start"].as_f64().unwrap() >= last_read_of(files);
    assert!(reads_before_last_compute, "the last segment needs the last files");
}

/// Without `--segments` the number of segments comes from the rates earlier runs measured: the
/// first run takes the defaults and records its rates, the second chooses from them with the
/// pipeline model; either way the outputs equal the sequential run's bit for bit. A corrupt
/// rates file is ignored and replaced; `--rates none` neither reads nor records.
#[test]
fn segments_are_chosen_from_measured_rates() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "30x20", "--years", "2001-2004", "--doys", "95-135"]);
    let rates = dir.path().join("cache").join("rates.json");
    let root = dir.path().join("runs");
    let (want, r) = job(&data, &root, "seq", &["--segments", "1"]);
    assert_eq!((r["segments_source"].as_str(), r["rates_recorded"].as_bool()), (Some("option"), Some(false)));
    let with_rates = ["--rates", &s(&rates)];
    let (first, r1) = job(&data, &root, "first", &with_rates);
    assert_eq!(first, want, "the defaults' outputs differ from the sequential run");
    assert_eq!(r1["segments_source"], "defaults", "{r1}");
    assert!(r1["segments_reason"].as_str().unwrap().contains("no measured rates in"), "{r1}");
    assert_eq!(r1["rates_recorded"], true, "{r1}");
    let file = json(&rates);
    let entries = file["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{file}");
    let e = &entries[0];
    assert_eq!((e["runs"].as_u64(), &e["key"]["engine"], &e["key"]["pool"]), (Some(1), &r1["backend"], &r1["pool"]));
    assert_eq!(e["key"]["threads"], r1["threads"]);
    assert_eq!(e["key"]["reads"], "direct");
    for rate in ["read_bytes_per_second", "compute_seconds_per_cell_sample", "write_bytes_per_second"] {
        let v = e[rate].as_f64().unwrap();
        assert!(v.is_finite() && v > 0.0, "{rate} {v}: {file}");
    }
    // stored bytes over seconds: below the bytes read in a microsecond, above a byte a second
    let read = e["read_bytes_per_second"].as_f64().unwrap();
    assert!(read > 1.0 && read < r1["bytes_read"].as_f64().unwrap() * 1e6, "{read}");

    let share = e["read_cpu_share"].as_f64().unwrap();
    let (second, r2) = job(&data, &root, "second", &with_rates);
    assert_eq!(second, want, "the measured choice's outputs differ from the sequential run");
    assert_eq!(r2["segments_source"], "measured", "{r2}");
    let reason = r2["segments_reason"].as_str().unwrap();
    assert!(reason.starts_with(&format!("measured rates from {} (1 run(s)", s(&rates))), "{reason}");
    assert!(reason.contains("): predicted "), "{reason}");
    // the CPU engine's direct readers measured their processor time (a share in 0..=1, as the
    // first run left it), named in the reason
    assert!(share > 0.0 && share <= 1.0, "{share}");
    if r2["backend"] == "cpu" {
        assert!(reason.contains(&format!("readers {:.0} % on a processor", 100.0 * share)), "{reason}");
    }
    let predicted = r2["segments_predicted_seconds"].as_object().unwrap();
    let mut rs: Vec<usize> = predicted.keys().map(|k| k.parse().unwrap()).collect();
    rs.sort_unstable();
    assert_eq!(rs, (1..=16).collect::<Vec<_>>(), "every R up to 16 (the job has 31 target days)");
    assert!(predicted.values().all(|v| v.as_f64().is_some_and(|v| v > 0.0)), "{r2}");
    let chosen = r2["segments"].as_u64().unwrap();
    let fastest = predicted.values().map(|v| v.as_f64().unwrap()).fold(f64::INFINITY, f64::min);
    assert_eq!(predicted[&chosen.to_string()].as_f64(), Some(fastest), "{r2}");
    assert_eq!(json(&rates)["entries"][0]["runs"].as_u64(), Some(2));

    // off: the defaults, nothing recorded
    let (off, r3) = job(&data, &root, "off", &["--rates", "none"]);
    assert_eq!(off, want);
    assert_eq!((r3["segments_source"].as_str(), r3["rates_recorded"].as_bool()), (Some("defaults"), Some(false)));
    assert!(r3["rates_file"].is_null(), "{r3}");
    assert_eq!(json(&rates)["entries"][0]["runs"].as_u64(), Some(2));

    // a corrupt file: ignored (the defaults) and replaced by this run's measurements
    std::fs::write(&rates, "{\"version\": 1, \"entries\": [").unwrap();
    let (again, r4) = job(&data, &root, "corrupt", &with_rates);
    assert_eq!(again, want);
    assert_eq!((r4["segments_source"].as_str(), r4["rates_recorded"].as_bool()), (Some("defaults"), Some(true)));
    assert!(r4["segments_reason"].as_str().unwrap().contains("not a rates file"), "{r4}");
    assert_eq!(json(&rates)["entries"][0]["runs"].as_u64(), Some(1));
}

// GPU engines keep the pool in device memory (filled from staging rows by the reader threads)
// unless told otherwise: same outputs as the host pool and the CPU engine on the same pool, bit
// for bit. One test per GPU backend, run where it is present (the GPU node).
sstclim::test_each_backend!(
    a_device_resident_pool_equals_the_host_pool_and_the_cpu,
    [cuda, hip],
    |backend: Backend| {
        let gpu = name(backend);
        let dir = tmp();
        for (storage, pool) in [("f64", "f32"), ("f64", "f64"), ("i16", "i16")] {
            let data = dir.path().join(format!("data-{storage}"));
            if !data.exists() {
                generate(&data, &["--grid", "61x29", "--years", "2001-2004", "--doys", "95-135", "--storage", storage]);
            }
            let root = dir.path().join(format!("runs-{storage}-{pool}"));
            let (want, _) = job(&data, &root, "cpu", &["--backend", "cpu", "--pool", pool, "--segments", "1"]);
            for (name, flags) in [
                ("device", &["--backend", gpu, "--pool", pool][..]),
                ("device-seq", &["--backend", gpu, "--pool", pool, "--segments", "1"][..]),
                (
                    "device-library",
                    &["--backend", gpu, "--pool", pool, "--read-path", "library", "--segments", "3"][..],
                ),
                ("host", &["--backend", gpu, "--pool", pool, "--gpu-pool", "host"][..]),
                ("device-tiles", &["--backend", gpu, "--pool", pool, "--max-mem", "1M", "--segments", "2"][..]),
            ] {
                let (got, r) = job(&data, &root, name, flags);
                assert_eq!(got, want, "{storage} {pool} {name}: outputs differ from the CPU engine");
                let want_place = if name == "host" { "host" } else { "device" };
                assert_eq!(r["pool_location"].as_str(), Some(want_place), "{storage} {pool} {name}: {r}");
            }
        }
    }
);

/// A GPU is brought up on its own thread while the pipeline prepares what needs no device
/// (`SSTCLIM_TEST_DEFERRED_START` makes the CPU engine pose as a device taking 1.5 s to start):
/// the result buffers are committed during the start, the outputs equal those of the engine
/// started at once, and a device that never starts ends the job cleanly.
#[cfg(feature = "test-hooks")] // SSTCLIM_TEST_* hooks are read only with this feature
#[test]
fn a_device_still_starting_is_waited_for_and_a_failed_start_ends_the_job() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "31x17", "--years", "2001-2004", "--doys", "95-135"]);
    let root = dir.path().join("runs");
    let (want, _) = job(&data, &root, "at-once", &["--backend", "cpu", "--pool", "f32", "--segments", "3"]);
    let trace = root.join("trace.json");
    let out = root.join("deferred");
    let mut args = run_args(&data, &out, "2001-2004", "100-130");
    args.extend(
        ["--half-window", "3", "--backend", "cpu", "--pool", "f32", "--segments", "3", "--trace-json"]
            .map(String::from),
    );
    args.push(s(&trace));
    let run = bin().env("SSTCLIM_TEST_DEFERRED_START", "cpu").args(&args).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(output_bits(&out), want, "outputs of the engine started beside the pipeline");
    let spans = json(&trace)["spans"].as_array().unwrap().clone();
    let span = |stage: &str| {
        let s = spans.iter().find(|s| s["stage"] == stage).unwrap_or_else(|| panic!("no {stage} span"));
        (s["start"].as_f64().unwrap(), s["end"].as_f64().unwrap())
    };
    let (start, started) = span("device-start");
    assert!(started - start > 0.2, "the pipeline waited for the device: {start}..{started}");
    let (commit, _) = span("result-buffers");
    assert!(commit < started, "result buffers committed while the device started: {commit} vs {started}");

    let out = root.join("failed");
    let mut args = run_args(&data, &out, "2001-2004", "100-130");
    args.extend(["--half-window", "3", "--backend", "cpu"].map(String::from));
    let begun = std::time::Instant::now();
    let run = bin().env("SSTCLIM_TEST_DEFERRED_START", "fail").args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "a device that never started must fail the job");
    assert!(stderr.contains("the device did not start"), "{stderr}");
    assert!(begun.elapsed().as_secs() < 30, "the job ends promptly");
    assert!(entries(&out).is_empty(), "no outputs, not even temporary ones: {:?}", entries(&out));
}
