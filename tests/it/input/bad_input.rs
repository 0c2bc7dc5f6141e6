//! Bad input never panics: every case ends with exit status 2, one line on stderr naming the
//! file (and variable) and what is wrong, and no output files, finished or partial.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// A 10-day, 2-year dataset of 12x7 cells in `dir/data`.
fn dataset(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    generate(&data, &["--grid", "12x7", "--years", "2001-2002", "--doys", "100-110"]);
    data
}

/// The job every case runs: days 102..=108 with a 2-day half window.
fn job(data: &Path, out: &Path) -> Vec<String> {
    with(run_args(data, out, "2001-2002", "102-108"), &["--half-window", "2"])
}

/// Run expecting failure; check the message is one line and mentions every `needles`,
/// and that `out` holds nothing.
fn expect_failure(args: &[String], out: &Path, needles: &[&str]) -> String {
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert_eq!(err.trim().lines().count(), 1, "one-line error expected:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "error should mention '{n}':\n{err}");
    }
    let left = entries(out);
    assert!(left.is_empty(), "output directory must stay empty, found {left:?}");
    err
}

#[test]
fn missing_file_lists_every_missing_file() {
    let dir = tmp();
    let data = dataset(dir.path());
    for f in ["sst_2001_104.nc", "sst_2002_100.nc", "sst_2002_110.nc"] {
        std::fs::remove_file(data.join(f)).unwrap();
    }
    let out = dir.path().join("out");
    let args = job(&data, &out);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    // windows of days 102..=108 with h = 2 need days 100..=110 of both years
    assert!(err.contains("3 of 22 input files are missing"), "{err}");
    for f in ["sst_2001_104.nc", "sst_2002_100.nc", "sst_2002_110.nc"] {
        assert!(err.lines().any(|l| l.trim().ends_with(f)), "{f} must be listed:\n{err}");
    }
    assert_eq!(err.trim().lines().count(), 4, "{err}");
    assert!(entries(&out).is_empty());
}

#[test]
fn truncated_file_is_named() {
    let dir = tmp();
    let data = dataset(dir.path());
    let victim = data.join("sst_2002_105.nc");
    let bytes = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();
    let out = dir.path().join("out");
    expect_failure(&job(&data, &out), &out, &["sst_2002_105.nc"]);
}

#[test]
fn corrupt_file_in_the_middle_of_the_stack_leaves_no_output() {
    let dir = tmp();
    let data = dataset(dir.path());
    let victim = data.join("sst_2001_106.nc");
    let mut bytes = std::fs::read(&victim).unwrap();
    for b in bytes.iter_mut().take(64) {
        *b ^= 0x5A; // wreck the HDF5 signature and superblock
    }
    std::fs::write(&victim, &bytes).unwrap();
    let out = dir.path().join("out");
    let err = expect_failure(&job(&data, &out), &out, &["sst_2001_106.nc", "cannot open as NetCDF"]);
    assert!(!err.contains("sst_2001_105"), "{err}");
    // not even temporary files: the outputs were created and must have been removed
    std::fs::write(data.join("sst_2001_106.nc"), b"this is not a NetCDF file").unwrap();
    expect_failure(&job(&data, &out), &out, &["sst_2001_106.nc"]);
}

#[test]
fn wrong_variable_names_the_variable_and_what_exists() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let mut args = job(&data, &out);
    args.extend(["--var".into(), "analysed_sst".into()]);
    expect_failure(&args, &out, &["sst_2001_100.nc", "no variable 'analysed_sst'", "variables: lat, lon, sst"]);
}

#[test]
fn wrong_shape_names_both_files() {
    let dir = tmp();
    let data = dataset(dir.path());
    let other = dir.path().join("other");
    generate(&other, &["--grid", "12x6", "--years", "2002", "--doys", "103"]);
    std::fs::copy(other.join("sst_2002_103.nc"), data.join("sst_2002_103.nc")).unwrap();
    let out = dir.path().join("out");
    expect_failure(
        &job(&data, &out),
        &out,
        &["sst_2002_103.nc", "'sst' is lat=6 x lon=12", "sst_2001_100.nc has lat=7 x lon=12"],
    );
}

#[test]
fn inconsistent_coordinates_are_reported() {
    let dir = tmp();
    let data = dataset(dir.path());
    {
        sstclim::input::silence_hdf5();
        let mut f = netcdf::append(data.join("sst_2002_107.nc")).unwrap();
        let mut lat = f.variable_mut("lat").unwrap();
        lat.put_values(&[-89.5], 0..1).unwrap();
    }
    let out = dir.path().join("out");
    expect_failure(
        &job(&data, &out),
        &out,
        &["sst_2002_107.nc", "latitude coordinate differs", "index 0: -89.5 vs -90"],
    );
}

#[test]
fn extra_time_steps_are_refused() {
    let dir = tmp();
    let data = dataset(dir.path());
    {
        sstclim::input::silence_hdf5();
        let path = data.join("sst_2001_103.nc");
        std::fs::remove_file(&path).unwrap();
        let mut f = netcdf::create(&path).unwrap();
        f.add_dimension("time", 2).unwrap();
        f.add_dimension("lat", 7).unwrap();
        f.add_dimension("lon", 12).unwrap();
        let mut v = f.add_variable::<f64>("sst", &["time", "lat", "lon"]).unwrap();
        v.put_values(&[1.0; 2 * 7 * 12], ..).unwrap();
    }
    let out = dir.path().join("out");
    expect_failure(&job(&data, &out), &out, &["sst_2001_103.nc", "variable 'sst'", "dimension time has length 2"]);
}

#[test]
fn empty_grid_is_refused() {
    let dir = tmp();
    let data = dataset(dir.path());
    {
        sstclim::input::silence_hdf5();
        let path = data.join("sst_2001_100.nc");
        std::fs::remove_file(&path).unwrap();
        let mut f = netcdf::create(&path).unwrap();
        f.add_unlimited_dimension("lat").unwrap();
        f.add_dimension("lon", 12).unwrap();
        f.add_variable::<f64>("sst", &["lat", "lon"]).unwrap();
    }
    let out = dir.path().join("out");
    expect_failure(&job(&data, &out), &out, &["sst_2001_100.nc", "variable 'sst'", "the grid has no cells"]);
}

#[test]
fn no_gridded_variable_or_ambiguous_dimensions() {
    let dir = tmp();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    sstclim::input::silence_hdf5();
    for d in 100..=104 {
        let mut f = netcdf::create(data.join(format!("x_2001_{d}.nc"))).unwrap();
        f.add_dimension("a", 3).unwrap();
        f.add_dimension("b", 4).unwrap();
        let mut v = f.add_variable::<f32>("field", &["a", "b"]).unwrap();
        v.put_values(&[0.0f32; 12], ..).unwrap();
    }
    let out = dir.path().join("out");
    let mut args = job(&data, &out);
    args[7] = "2001".into(); // --baseline
    args[9] = "102".into(); // --doys
    expect_failure(&args, &out, &["x_2001_100.nc", "no gridded numeric variable", "variables: field"]);
    args.extend(["--var".into(), "field".into()]);
    expect_failure(&args, &out, &["x_2001_100.nc", "variable 'field'", "cannot tell which is latitude"]);
}

#[test]
fn unreadable_directory_is_named() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for p in [dir.path(), &out] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o000)).unwrap();
    let args = job(&data, &out);
    // root reads any directory, so run as nobody when we are root
    // SAFETY: geteuid has no preconditions.
    let output = if unsafe { libc::geteuid() } == 0 {
        Command::new("setpriv")
            .env("HDF5_USE_FILE_LOCKING", "FALSE")
            .env("SSTCLIM_RATES", "none")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_sstclim")])
            .args(&args)
            .output()
            .expect("setpriv (util-linux) is needed to test permissions as root")
    } else {
        bin().args(&args).output().unwrap()
    };
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&s(&data)) && err.contains("cannot read directory") && err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn output_directory_not_writable() {
    let dir = tmp();
    let data = dataset(dir.path());
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, b"").unwrap();
    let out = blocker.join("out");
    expect_failure(&job(&data, &out), &out, &[&s(&out), "output directory is not writable"]);
}

#[test]
fn invalid_flags_are_rejected_before_any_work() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    for (flag, value, needle) in [
        ("--min-samples", "0", "--min-samples must be at least 1"),
        ("--percentile", "101", "outside 0..100"),
        ("--method", "10", "not a Hyndman-Fan type"),
        ("--calendar", "julian", "invalid value 'julian'"),
        ("--max-mem", "512K", "--max-mem 524288 bytes is too small"),
        ("--max-device-mem", "1", "--max-device-mem 1 bytes is too small"),
        ("--max-mem", "99999999999999999999G", "larger than any memory"),
    ] {
        let mut args = job(&data, &out);
        args.extend([flag.to_string(), value.to_string()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = bin().args(&argv).output().unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success() && err.contains(needle), "{flag} {value}: {err}");
        assert!(!out.exists() || entries(&out).is_empty());
    }
}

#[test]
fn max_device_mem_is_named_as_itself() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let err = expect_failure(&with(job(&data, &out), &["--max-device-mem", "1"]), &out, &["--max-device-mem 1 bytes"]);
    assert!(!err.contains("--max-mem "), "{err}");
}

#[test]
fn an_overflowing_max_mem_is_refused() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let args = with(job(&data, &out), &["--max-mem", "99999999999999999999G"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = bin().args(&argv).output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    // a value clap refuses: its usage error (status 2), naming the flag and why
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("--max-mem") && err.contains("larger than any memory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(entries(&out).is_empty());
}

#[test]
fn day_366_of_years_without_one_is_explained() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let args = run_args(&data, &out, "2001-2003", "366");
    let err = expect_failure(&args, &out, &["no year of 2001-2003 has day of year 366", "only leap years"]);
    assert!(!err.contains("none of the 0"), "{err}");
}

#[test]
fn a_level_dimension_is_not_called_time() {
    let dir = tmp();
    let data = dataset(dir.path());
    {
        sstclim::input::silence_hdf5();
        let path = data.join("sst_2001_100.nc");
        std::fs::remove_file(&path).unwrap();
        let mut f = netcdf::create(&path).unwrap();
        f.add_dimension("zlev", 2).unwrap();
        f.add_dimension("lat", 7).unwrap();
        f.add_dimension("lon", 12).unwrap();
        let mut z = f.add_variable::<f64>("zlev", &["zlev"]).unwrap();
        z.put_attribute("units", "m").unwrap();
        z.put_values(&[0.0, 10.0], ..).unwrap();
        let mut v = f.add_variable::<f64>("sst", &["zlev", "lat", "lon"]).unwrap();
        v.put_values(&[1.0; 2 * 7 * 12], ..).unwrap();
    }
    let out = dir.path().join("out");
    let err = expect_failure(
        &job(&data, &out),
        &out,
        &["sst_2001_100.nc", "variable 'sst'", "dimension zlev has length 2", "not a time dimension"],
    );
    assert!(!err.contains("time step"), "{err}");
}

#[test]
fn compare_refuses_a_negative_tolerance() {
    let dir = tmp();
    for flag in [&["--tolerance", "-1"][..], &["--tolerance=-1"][..], &["--tolerance", "-0.5e-3"][..]] {
        let out = bin().arg("compare").args(flag).args([&s(dir.path()), &s(dir.path())]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {err}");
        assert!(err.contains("--tolerance") && err.contains("is negative"), "{flag:?}: {err}");
    }
}

#[test]
fn a_directory_or_fifo_in_place_of_an_input_is_not_missing() {
    for kind in ["directory", "fifo"] {
        let dir = tmp();
        let data = dataset(dir.path());
        let path = data.join("sst_2002_105.nc");
        std::fs::remove_file(&path).unwrap();
        if kind == "directory" {
            std::fs::create_dir(&path).unwrap();
        } else {
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        let out = dir.path().join("out");
        let needle = if kind == "directory" { "is a directory" } else { "is a FIFO, not a regular file" };
        for extra in [&[][..], &["--allow-missing"][..]] {
            let err = expect_failure(&with(job(&data, &out), extra), &out, &["sst_2002_105.nc", needle]);
            assert!(!err.contains("missing"), "{kind} {extra:?}: {err}");
        }
    }
}

#[test]
fn an_address_space_limit_gives_tiles_or_one_line() {
    // 60 files of 720x361 float64 cells: a 125 MB pool, more than the budget a few hundred MB
    // of address space leave beside the program's own mappings
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "720x361", "--years", "2001-2003", "--doys", "1-20"]);
    let args = |out: &Path| with(run_args(&data, out, "2001-2003", "6-15"), &["--half-window", "5", "--threads", "2"]);
    let reference = dir.path().join("reference");
    ok(&args(&reference));
    let want = output_bits(&reference);
    let mut ran = Vec::new();
    for kib in [200_000, 330_000, 380_000, 450_000, 600_000, 900_000] {
        let out = dir.path().join(format!("out-{kib}"));
        let b = bin();
        let mut c = Command::new("bash");
        c.arg("-c").arg(format!("ulimit -v {kib}; exec \"$0\" \"$@\"")).arg(b.get_program()).args(args(&out));
        for (k, v) in b.get_envs() {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        let output = c.output().unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!err.contains("panicked") && !err.contains("memory allocation"), "ulimit -v {kib}: {err}");
        match output.status.code() {
            Some(0) => {
                assert_eq!(output_bits(&out), want, "ulimit -v {kib}: results differ");
                ran.push(kib);
            }
            Some(2) => {
                assert_eq!(err.trim().lines().count(), 1, "ulimit -v {kib}: {err}");
                assert!(err.contains("--max-mem") || err.contains("cannot allocate"), "ulimit -v {kib}: {err}");
                assert!(entries(&out).is_empty(), "ulimit -v {kib}: left {:?}", entries(&out));
            }
            _ => panic!("ulimit -v {kib}: {} (an abort or a signal)\n{err}", output.status),
        }
    }
    // 380-450 MB leave a budget of some 20 MB: the job runs in tiles (which of them runs
    // depends on what the process maps by then, which varies on a loaded machine)
    assert!(ran.contains(&900_000) && ran.iter().any(|&k| k <= 450_000), "ran under {ran:?}");
}

#[test]
fn a_name_that_is_not_utf8_is_one_line_not_a_panic() {
    for (what, name) in [("dimension", &b"lon"[..]), ("variable", &b"sst"[..])] {
        let dir = tmp();
        let data = dataset(dir.path());
        let path = data.join("sst_2001_100.nc");
        std::fs::remove_file(&path).unwrap();
        {
            sstclim::input::silence_hdf5();
            let mut f = netcdf::create_with(&path, netcdf::Options::CLASSIC).unwrap();
            f.add_dimension("lat", 7).unwrap();
            f.add_dimension("lon", 12).unwrap();
            f.add_variable::<f64>("sst", &["lat", "lon"]).unwrap();
            f.enddef().unwrap();
            f.variable_mut("sst").unwrap().put_values(&[1.0; 7 * 12], ..).unwrap();
        }
        // the name's middle byte becomes 0xff in the header (names are stored as counted bytes)
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.windows(3).position(|w| w == name).unwrap();
        bytes[at + 1] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let out = dir.path().join("out");
        let err = expect_failure(&job(&data, &out), &out, &["sst_2001_100.nc"]);
        assert!(!err.contains("backtrace"), "{what}: {err}");
        assert!(err.contains("reading the header failed"), "{what}: {err}");
    }
}

/// A long missing-file list (the windows reach past the days the dataset holds) is summarised:
/// the count, the days and years, the cause, and the first and last three files.
#[test]
fn a_long_missing_file_list_is_summarised_with_its_cause() {
    let dir = tmp();
    let data = dataset(dir.path());
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2001-2002", "100-110"), &["--half-window", "3"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    let lines: Vec<&str> = err.trim().lines().collect();
    assert!(lines[0].contains("12 of 34 input files are missing"), "{err}");
    assert!(lines[0].contains("days 97-99, 111-113 of years 2001-2002"), "{err}");
    assert!(lines[0].contains("the dataset holds days 100-110 and the windows need days 97-113"), "{err}");
    assert_eq!(lines.len(), 8, "{err}");
    assert!(lines[1].trim().ends_with("sst_2001_097.nc") && lines[7].trim().ends_with("sst_2002_113.nc"), "{err}");
    assert_eq!(lines[4].trim(), "... 6 more ...");
    assert!(entries(&out).is_empty());
}
