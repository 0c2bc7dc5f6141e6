//! Reports that add up and progress a batch job can read: the end-of-run table's wall-time
//! shares sum to 100 % (and the JSON's parts to the wall time), `--progress json` lines parse
//! and count every stage to its total, the default output carries no predictions and no GPU
//! probe, and int16-packed input takes the exact int16 pool on the CPU by default.

use crate::common::*;

/// A small int16-packed (OSTIA-like) dataset: 16x9 cells, 2001-2003, days 100-112.
fn packed(dir: &std::path::Path) -> std::path::PathBuf {
    let data = dir.join("packed");
    generate(&data, &["--grid", "16x9", "--years", "2001-2003", "--doys", "100-112", "--storage", "i16"]);
    data
}

fn job(data: &std::path::Path, out: &std::path::Path, more: &[&str]) -> Vec<String> {
    with(run_args(data, out, "2001-2003", "102-110"), &[&["--half-window", "2", "--backend", "cpu"], more].concat())
}

#[test]
fn the_tables_shares_add_up_to_100_and_json_lines_count_every_stage() {
    let dir = tmp();
    let data = packed(dir.path());
    let out = dir.path().join("out");
    let json = dir.path().join("t.json");
    let args = job(&data, &out, &["--segments", "3", "--timing-json", &s(&json), "--progress", "json"]);
    let done = ok(&args);
    let table = String::from_utf8(done.stdout).unwrap();
    // every share the table prints, up to the total row
    let shares: Vec<f64> = table
        .lines()
        .take_while(|l| !l.starts_with("total"))
        .filter_map(|l| l.split_whitespace().find(|w| w.ends_with('%')))
        .map(|w| w.trim_end_matches('%').parse().unwrap())
        .collect();
    assert!(shares.len() >= 6, "{table}");
    let sum: f64 = shares.iter().sum();
    assert!((sum - 100.0).abs() <= 0.1, "shares sum to {sum}:\n{table}");
    for part in ["start-up", "other", "device release", "publish", "total (wall)"] {
        assert!(table.lines().any(|l| l.starts_with(part)), "{part}:\n{table}");
    }
    // no predictions or rate-file details in the default output
    assert!(!table.contains("predicted") && !table.contains("rates"), "{table}");
    // the JSON's parts add up to its wall time with start-up, release and publish
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let w = &r["wall_shares"];
    let sum_map = |v: &serde_json::Value| v.as_object().unwrap().values().map(|x| x.as_f64().unwrap()).sum::<f64>();
    let run_parts = sum_map(&w["alone"]) + sum_map(&w["overlapped"]) + w["other"].as_f64().unwrap();
    let wall = r["wall_seconds"].as_f64().unwrap();
    assert!((run_parts - wall).abs() < 1e-6, "{run_parts} vs {wall}");
    assert!(w["overlapped"].as_object().unwrap().keys().all(|k| k.contains('+')), "{w}");
    // the table has an "overlapped" row exactly when stages ran at once: how much they did
    // in a job this small depends on the scheduler (CI once saw every stage alone)
    let overlapped = !w["overlapped"].as_object().unwrap().is_empty();
    assert_eq!(table.lines().any(|l| l.starts_with("overlapped")), overlapped, "{w}\n{table}");
    // progress lines: read counts every file, compute and write every segment
    let stderr = String::from_utf8(done.stderr).unwrap();
    let lines: Vec<serde_json::Value> =
        stderr.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = |stage: &str| lines.iter().rev().find(|l| l["progress"] == stage).cloned().unwrap();
    let files = r["files_read"].as_u64().unwrap();
    assert_eq!(last("read")["done"].as_u64(), Some(files));
    assert_eq!(last("read")["total"].as_u64(), Some(files));
    assert!(last("read")["bytes"].as_u64().unwrap() > 0);
    for stage in ["compute", "write"] {
        assert_eq!(last(stage)["done"].as_u64(), Some(3), "{stage}");
        assert_eq!(last(stage)["total"].as_u64(), Some(3), "{stage}");
    }
    assert!(lines.iter().all(|l| l["eta_seconds"].as_f64().is_some() && l["per_second"].as_f64().is_some()));
}

/// Without --backend, a machine without a GPU says nothing about it at the default log level.
#[test]
fn a_missing_gpu_is_not_reported_at_the_default_log_level() {
    let dir = tmp();
    let data = packed(dir.path());
    let out = dir.path().join("out");
    let args: Vec<String> = with(run_args(&data, &out, "2001-2003", "102-110"), &["--half-window", "2"])
        .into_iter()
        .filter(|a| a != "-q")
        .collect();
    let done = ok(&args);
    let stderr = String::from_utf8(done.stderr).unwrap();
    assert!(!stderr.contains("no GPU engine") && !stderr.contains("CUDA:"), "{stderr}");
    assert!(!stderr.contains("predicted"), "{stderr}");
}

/// int16-packed input: the CPU takes the int16 pool by default, bitwise equal to float64's.
#[test]
fn int16_input_defaults_to_the_exact_int16_pool_on_the_cpu() {
    let dir = tmp();
    let data = packed(dir.path());
    let (a, b) = (dir.path().join("default"), dir.path().join("f64"));
    let (ja, jb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    ok(&job(&data, &a, &["--timing-json", &s(&ja)]));
    ok(&job(&data, &b, &["--pool", "f64", "--timing-json", &s(&jb)]));
    let pool = |p: &std::path::Path| {
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        r["pool"].as_str().unwrap().to_string()
    };
    assert_eq!((pool(&ja), pool(&jb)), ("i16".to_string(), "f64".to_string()));
    ok(&["compare", &s(&a), &s(&b)]);
    // float input stays on the exact float64 pool
    let floats = dir.path().join("floats");
    generate(&floats, &["--grid", "16x9", "--years", "2001-2003", "--doys", "100-112"]);
    let (c, jc) = (dir.path().join("c"), dir.path().join("c.json"));
    ok(&job(&floats, &c, &["--timing-json", &s(&jc)]));
    assert_eq!(pool(&jc), "f64");
}

/// `sstclim events --baseline` in several bands (4 threads: the next band read while one is
/// detected): the table and `--timing-json` report every
/// stage (climatology, read, detect, write, overlapped); the JSON's wall parts add up to its
/// wall time, and no stage's part of the wall time exceeds its busy time.
#[test]
fn events_report_their_stages() {
    let dir = tmp();
    let data = dir.path().join("year");
    generate(&data, &["--grid", "16x9", "--years", "1990-1991", "--doys", "1-366", "--storage", "i16"]);
    let (out, json) = (dir.path().join("out"), dir.path().join("events.json"));
    let args = [
        "events",
        "-i",
        &s(&data),
        "-o",
        &s(&out),
        "--years",
        "1990-1991",
        "--baseline",
        "1990-1991",
        "--both",
        "--threads",
        "4",
        "--timing-json",
        &s(&json),
    ];
    let table = String::from_utf8(ok(&args).stdout).unwrap();
    for stage in ["climatology", "read", "detect", "write", "overlapped", "other", "total (wall)"] {
        assert!(table.lines().any(|l| l.starts_with(stage)), "{stage}:\n{table}");
    }
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["command"], "events");
    assert_eq!(r["bands"], 4, "{r}");
    let busy = &r["stage_seconds"];
    let stage = |k: &str| busy[k].as_f64().unwrap_or_else(|| panic!("{k} in {busy}"));
    let (clim, read, detect, write, overlapped) =
        (stage("climatology"), stage("read"), stage("detect"), stage("write"), stage("overlapped"));
    assert!(clim > 0.0 && read > 0.0 && detect > 0.0 && write > 0.0, "{busy}");
    assert!(overlapped <= read.min(detect + write), "{busy}");
    let w = &r["wall_shares"];
    let sum_map = |v: &serde_json::Value| v.as_object().unwrap().values().map(|x| x.as_f64().unwrap()).sum::<f64>();
    let parts = sum_map(&w["alone"]) + sum_map(&w["overlapped"]) + w["other"].as_f64().unwrap();
    let wall = r["wall_seconds"].as_f64().unwrap();
    assert!((parts - wall).abs() < 1e-6, "{parts} vs {wall}");
    assert!(wall >= clim + read + detect + write - overlapped - 1e-6, "{r}");
    assert_eq!(w["alone"]["climatology"].as_f64().unwrap(), clim);
    for (k, busy) in [("read", read), ("detect", detect), ("write", write)] {
        assert!(w["alone"][k].as_f64().unwrap_or(0.0) <= busy + 1e-9, "{k}: {w}");
    }
    assert!((sum_map(&w["overlapped"]) - overlapped).abs() < 1e-6, "{w} vs {busy}");
}
