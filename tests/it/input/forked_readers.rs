//! Reading through forked reader processes (`--read-path forked`): the same results as the
//! library read path, and on bad input or a killed reader the same clean failure as every bad
//! input case (exit status 2, one line naming the file or signal, no output files).

use std::path::Path;
use std::process::Output;

use crate::common::*;

fn run_forked(args: &[String], envs: &[(&str, &str)]) -> Output {
    let args = with(args.to_vec(), &["--read-path", "forked", "--readers", "3"]);
    bin().envs(envs.iter().copied()).args(&args).output().expect("run sstclim")
}

/// Expect exit status 2, one `error:` line mentioning every `needles`, and nothing in `out`.
fn expect_failure(output: &Output, out: &Path, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "expected exit 2:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "error should mention '{n}':\n{err}");
    }
    assert!(entries(out).is_empty(), "output directory must stay empty, found {:?}", entries(out));
    err
}

/// A 2-year, 11-day dataset of 12x7 cells; the job reads 22 files.
fn small(dir: &Path) -> (std::path::PathBuf, Vec<String>) {
    let data = dir.join("data");
    generate(&data, &["--grid", "12x7", "--years", "2001-2002", "--doys", "100-110"]);
    let out = dir.join("out");
    let args = with(run_args(&data, &out, "2001-2002", "102-108"), &["--half-window", "2", "--threads", "2"]);
    (data, args)
}

#[test]
fn forked_readers_give_the_library_results() {
    let dir = tmp();
    let data = dir.path().join("data");
    let shape = ["--grid", "100x60", "--years", "2001-2003", "--doys", "100-106"];
    generate(&data, &[&shape[..], &["--storage", "i16", "--dim-order", "lon-lat"]].concat());
    let job = |out: &Path| {
        let args = run_args(&data, out, "2001-2003", "101-105");
        with(args, &["--half-window", "1", "--max-mem", "1M", "--threads", "2", "--pool", "f64"])
    };
    let (lib, forked) = (dir.path().join("lib"), dir.path().join("forked"));
    ok(&with(job(&lib), &["--read-path", "library", "--segments", "1"]));
    let output = run_forked(&job(&forked), &[]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let mut names = entries(&lib);
    names.sort();
    assert_eq!(names, {
        let mut n = entries(&forked);
        n.sort();
        n
    });
    assert!(names.len() >= 10, "{names:?}");
    for name in names.iter().filter(|n| n.ends_with(".nc")) {
        let stat = if name.starts_with("mean") { "mean" } else { "p90" };
        let (a, _) = read_stat(&lib.join(name), stat);
        let (b, _) = read_stat(&forked.join(name), stat);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()) && a.len() == b.len(), "{name} differs");
    }
}

#[test]
fn corrupt_file_in_the_middle_of_the_stack() {
    let dir = tmp();
    let (data, args) = small(dir.path());
    let victim = data.join("sst_2001_106.nc");
    let mut bytes = std::fs::read(&victim).unwrap();
    for b in bytes.iter_mut().take(64) {
        *b ^= 0x5A;
    }
    std::fs::write(&victim, &bytes).unwrap();
    let out = dir.path().join("out");
    let err = expect_failure(&run_forked(&args, &[]), &out, &["sst_2001_106.nc", "cannot open as NetCDF"]);
    assert!(!err.contains("sst_2001_105"), "{err}");
}

#[cfg(feature = "test-hooks")] // SSTCLIM_TEST_* hooks are read only with this feature
#[test]
fn reader_killed_by_a_signal() {
    let dir = tmp();
    let (_, args) = small(dir.path());
    let out = dir.path().join("out");
    let output = run_forked(&args, &[("SSTCLIM_TEST_READER_SIGNAL", "9")]);
    expect_failure(&output, &out, &["reader process", "killed by signal 9 (SIGKILL)", ".nc"]);
}

#[cfg(feature = "test-hooks")] // SSTCLIM_TEST_* hooks are read only with this feature
#[test]
fn a_stopped_reader_is_killed_and_named() {
    let dir = tmp();
    let (_, args) = small(dir.path());
    let out = dir.path().join("out");
    let start = std::time::Instant::now();
    let output = run_forked(&args, &[("SSTCLIM_TEST_READER_SIGNAL", "9:stop"), ("SSTCLIM_READER_TIMEOUT", "2")]);
    let took = start.elapsed();
    let err =
        expect_failure(&output, &out, &["reader process", "made no progress for 2 s while reading", ".nc: killed"]);
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}: {err}");
    // the stopped reader is gone (killed and reaped), not left stopped behind the job
    let pid: i32 = err.split("reader process ").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse().unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "reader {pid} still exists: {err}");
}
