//! Jobs on compressed inputs: a dataset written by `sstclim generate --deflate --shuffle
//! --chunks` (chunks that do not divide the grid, tiles that cut through chunks, OISST's 4-D
//! layout) gives outputs bitwise equal to the same job on contiguous copies of its files, read
//! on the direct path; a corrupt chunk, a truncated file and a filter libnetcdf cannot read
//! either end the run with one line naming the file, exit 2 and no outputs.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const GRID: &[&str] = &["--grid", "120x61", "--years", "2001-2003", "--doys", "95-125", "--storage", "i16"];

/// Run the job with `flags`; returns the outputs and the run report.
fn job(data: &Path, root: &Path, name: &str, flags: &[&str]) -> (Vec<(String, Vec<u64>)>, Value) {
    let out = root.join(name);
    let report = root.join(format!("{name}.json"));
    let mut args = run_args(data, &out, "2001-2003", "100-120");
    args.extend(["--half-window", "3", "--timing-json", &s(&report)].map(String::from));
    ok(&with(args, flags));
    (output_bits(&out), json(&report))
}

#[test]
fn a_deflated_dataset_gives_the_outputs_of_its_contiguous_copy() {
    let dir = tmp();
    let plain = dir.path().join("plain");
    generate(&plain, GRID);
    let root = dir.path().join("runs");
    let (want, r) = job(&plain, &root, "plain", &["--segments", "1"]);
    assert_eq!(r["bytes_decompressed"].as_u64(), Some(0));
    for (name, extra) in [
        ("deflate4-shuffle", &["--deflate", "4", "--shuffle", "--chunks", "9x25"][..]),
        ("deflate1-one-chunk", &["--deflate", "1"][..]),
        ("oisst-4d", &["--deflate", "4", "--shuffle", "--time-dim", "--zlev-dim"][..]),
    ] {
        let data = dir.path().join(name);
        generate(&data, &[GRID, extra].concat());
        // the int16 pool takes the chunks' values straight into its rows; a float64 pool
        // decodes them from a band
        for (run, flags) in [
            ("whole", &["--segments", "1"][..]),
            ("tiles", &["--segments", "2", "--max-mem", "1M"][..]),
            ("tiles-f64", &["--segments", "2", "--max-mem", "1M", "--pool", "f64"][..]),
        ] {
            let (got, r) = job(&data, &root, &format!("{name}-{run}"), flags);
            assert_eq!(got, want, "{name} {run}: outputs differ from the contiguous files'");
            let files = r["files_read"].as_u64().unwrap();
            let tiles = r["tiles"].as_u64().unwrap();
            assert_eq!(r["files_direct"].as_u64(), Some(files * tiles), "{name} {run}: {r}");
            let (stored, inflated) = (r["bytes_read"].as_u64().unwrap(), r["bytes_decompressed"].as_u64().unwrap());
            assert!(stored > 0 && inflated > stored, "{name} {run}: {stored} stored, {inflated} inflated");
            if run != "whole" {
                assert!(tiles > 1, "{name}: one tile");
            }
        }
    }
}

/// A deflated dataset of one chunk per file and the job that reads it, for the failure cases.
fn deflated(dir: &Path) -> std::path::PathBuf {
    let data = dir.join("data");
    generate(&data, &[GRID, &["--deflate", "4", "--shuffle", "--chunks", "31x120"]].concat());
    data
}

fn expect_failure(data: &Path, out: &Path, needles: &[&str]) {
    let mut args = run_args(data, out, "2001-2003", "100-120");
    args.extend(["--half-window", "3"].map(String::from));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected:\n{err}");
    for n in needles {
        assert!(err.contains(n), "error should mention '{n}':\n{err}");
    }
    assert!(entries(out).is_empty(), "no outputs expected, found {:?}", entries(out));
}

#[test]
fn a_corrupt_chunk_is_named_and_nothing_is_written() {
    let dir = tmp();
    let data = deflated(dir.path());
    let victim = data.join("sst_2002_110.nc");
    // the second chunk's stored bytes, found by the metadata parser
    let (addr, size) = {
        let f = std::fs::File::open(&victim).unwrap();
        let meta = sstclim::input::h5meta::Hdf5Meta::open(&f).unwrap();
        let ds = meta.dataset("analysed_sst").unwrap();
        let c = meta.chunks(&ds).unwrap().into_iter().max_by_key(|c| c.offset.clone()).unwrap();
        (c.addr, c.size)
    };
    let mut bytes = std::fs::read(&victim).unwrap();
    for i in 0..8 {
        bytes[(addr + size / 2) as usize + i] ^= 0xff;
    }
    std::fs::write(&victim, bytes).unwrap();
    expect_failure(&data, &dir.path().join("out"), &["sst_2002_110.nc", "analysed_sst", "chunk at [31, 0]"]);
}

#[test]
fn a_truncated_compressed_file_is_named_and_nothing_is_written() {
    let dir = tmp();
    let data = deflated(dir.path());
    let victim = data.join("sst_2001_117.nc");
    let len = std::fs::metadata(&victim).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&victim).unwrap();
    f.set_len(len - 700).unwrap();
    expect_failure(&data, &dir.path().join("out"), &["sst_2001_117.nc"]);
}

#[test]
fn a_filter_libnetcdf_cannot_read_is_named_with_its_id() {
    let dir = tmp();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // every file of the job: the fixture whose chunks are lzf-compressed (filter 32000), which
    // neither sstclim nor libnetcdf (no filter plugin) decodes
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compressed/h5_lzf_unknown_filter.nc");
    for year in 2001..=2002 {
        for doy in 97..=103 {
            std::fs::copy(&fixture, data.join(format!("sst_{year}_{doy:03}.nc"))).unwrap();
        }
    }
    let out = dir.path().join("out");
    let mut args = run_args(&data, &out, "2001-2002", "100");
    args.extend(["--half-window", "3"].map(String::from));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected:\n{err}");
    for n in ["sst_200", "'sst'", "filter 32000 (lzf)"] {
        assert!(err.contains(n), "error should mention '{n}':\n{err}");
    }
    assert!(entries(&out).is_empty());
}
