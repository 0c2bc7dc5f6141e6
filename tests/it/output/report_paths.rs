//! Report paths (`--timing-json`, `--trace-json`, `--rates`) that name a file of the job or
//! cannot be written are refused before any input is read: exit 2, one line naming the flag,
//! the file untouched byte for byte, nothing in the output directory.
//!
//! "Before any input is read" is seen from the first input file: it is damaged here, so a job
//! that opened it (discovery samples it for its calendar) would fail naming it instead.

use std::path::{Path, PathBuf};

use crate::common::{self, *};

/// A 21-day, 3-year dataset of 24x12 cells whose first needed file (day 100 of 2001) is
/// damaged past its signature.
fn dataset(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    generate(&data, &["--grid", "24x12", "--years", "2001-2003", "--doys", "100-120"]);
    let first = data.join("sst_2001_100.nc");
    let mut bytes = std::fs::read(&first).unwrap();
    bytes.truncate(600);
    std::fs::write(&first, bytes).unwrap();
    data
}

fn job(input: &str, out: &Path, more: &[&str]) -> Vec<String> {
    let v = ["-q", "run", "--input", input, "--output", &s(out), "--baseline", "2001-2003", "--doys", "103-117"];
    with(with(v.iter().map(|x| x.to_string()).collect(), &["--half-window", "3"]), more)
}

/// `job` is refused for `flag` naming `path`, with `problem` in its one line; `path` (where it
/// exists) is unchanged and the output directory holds nothing.
fn refused(args: Vec<String>, out: &Path, flag: &str, path: &Path, problem: &str) {
    let before = std::fs::read(path).ok();
    let err = fails(&args);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("{flag} {}", path.display())) && err.contains(problem), "{err}");
    assert!(!err.contains("sst_2001_100.nc:"), "the damaged first input was read: {err}");
    assert_eq!(std::fs::read(path).ok(), before, "{} changed", path.display());
    assert!(entries(out).is_empty(), "{:?}", entries(out));
}

#[test]
fn a_report_on_an_input_or_an_output_is_refused_before_reading() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let input = data.join("sst_2002_110.nc");
    let list = dir.path().join("inputs.txt");
    let names: Vec<String> = entries(&data).iter().map(|n| s(&data.join(n))).collect();
    std::fs::write(&list, names.join("\n")).unwrap();
    let linked = dir.path().join("linked.nc");
    std::fs::hard_link(&input, &linked).unwrap();
    let data_dir = s(&data);
    let from_list = format!("@{}", list.display());
    for flag in ["--timing-json", "--trace-json", "--rates"] {
        for (given, path) in [(&data_dir, &input), (&data_dir, &linked), (&from_list, &list), (&from_list, &input)] {
            refused(job(given, &out, &[flag, &s(path)]), &out, flag, path, "the report would overwrite it");
        }
        // an output of this job (any of its days), and the lock of its directory
        for (name, problem) in
            [("p90_doy110.nc", "an output"), ("mean_doy117.nc", "an output"), (".sstclim.lock", "lock")]
        {
            refused(job(&data_dir, &out, &[flag, &s(&out.join(name))]), &out, flag, &out.join(name), problem);
        }
    }
    // two reports into one file
    let t = dir.path().join("t.json");
    let args = job(&data_dir, &out, &["--timing-json", &s(&t), "--trace-json", &s(&t)]);
    refused(args, &out, "--trace-json", &t, "is the file --timing-json names too");
}

#[test]
fn an_unwritable_report_path_is_refused_before_reading() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    std::fs::write(dir.path().join("file"), b"").unwrap();
    // (as root every directory is writable: /proc refuses new entries to everyone)
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    let unwritable =
        if unsafe { libc::geteuid() } == 0 { PathBuf::from("/proc/sstclim/t.json") } else { locked.join("t.json") };
    for flag in ["--timing-json", "--trace-json"] {
        for (path, problem) in [
            (unwritable.clone(), "cannot"),
            (dir.path().join("file/t.json"), "cannot create directory"),
            (dir.path().to_path_buf(), "is a directory"),
        ] {
            refused(job(&s(&data), &out, &[flag, &s(&path)]), &out, flag, &path, problem);
        }
    }
}

/// The tools' own reports: `compare --json` onto one of the files it compares and
/// `quicklook -o` onto the file it draws are refused before reading, the file unchanged; a
/// JSON path that is a directory too.
#[test]
fn a_tool_report_on_a_netcdf_file_is_refused() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "24x12", "--years", "2001-2002", "--doys", "100-110"]);
    let out = dir.path().join("out");
    ok(&with(run_args(&data, &out, "2001-2002", "103-105"), &["--half-window", "3"]));
    let (a, b) = (out.join("mean_doy103.nc"), out.join("mean_doy104.nc"));
    let cases: [(Vec<String>, &str, &Path, &str); 4] = [
        (vec!["compare".into(), s(&a), s(&b), "--json".into(), s(&b)], "--json", &b, "would overwrite it"),
        (vec!["compare".into(), s(&a), s(&b), "--json".into(), s(&data)], "--json", &data, "is a directory"),
        (vec!["quicklook".into(), s(&a), "-o".into(), s(&a)], "--output", &a, "would overwrite it"),
        (vec!["quicklook".into(), s(&a), "-o".into(), s(&b)], "--output", &b, "would overwrite it"),
    ];
    for (args, flag, path, problem) in cases {
        let before = std::fs::read(path).ok();
        let err = fails(&args);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("{flag} {}", path.display())) && err.contains(problem), "{err}");
        assert_eq!(std::fs::read(path).ok(), before, "{} changed", path.display());
    }
    // where it can write, both write
    let json = dir.path().join("c.json");
    let same = common::bin().args(["compare", &s(&a), &s(&a), "--json", &s(&json)]).output().unwrap();
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
    assert!(std::fs::read_to_string(&json).unwrap().contains("mean"));
}
