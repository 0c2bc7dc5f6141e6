//! `sstclim run` flags checked against the input's calendar once discovery knows it (not
//! against Gregorian year lengths), and a `360_day` job split over MPI ranks: the default
//! days 1-366 are the input year's days (1-360), so a rank's share past day 360 is idle and
//! the outputs are the same bits at 1, 2 and 3 ranks.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, fails, ok, s, tmp};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/timeseries").join(name)
}

fn job(input: &Path, out: &Path, more: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["-q", "run", "--input", &s(input), "--output", &s(out), "--baseline", "2001-2002"]
        .iter()
        .map(|x| x.to_string())
        .collect();
    v.extend(more.iter().map(|x| x.to_string()));
    v
}

#[test]
fn doys_past_the_input_calendars_year_are_refused_in_one_line() {
    let dir = tmp();
    let cases = [
        (
            "cmip6_360day",
            vec!["--doys", "1-366"],
            "--doys 1-366 asks for day 361 but a year of the input's 360_day calendar has 360 days",
        ),
        (
            "cmip6_360day",
            vec!["--doys", "300-361"],
            "--doys 300-361 asks for day 361 but a year of the input's 360_day calendar has 360 days",
        ),
        (
            "cmip6_noleap",
            vec!["--doys", "366"],
            "--doys 366-366 asks for day 366 but a year of the input's noleap calendar has 365 days",
        ),
        (
            "cmip6_360day",
            vec!["--doys", "1-365", "--layout", "climatology"],
            "--doys 1-365 asks for day 361 but a year of the input's 360_day calendar has 360 days",
        ),
        (
            "cmip6_noleap",
            vec!["--doys", "1-360", "--layout", "climatology"],
            "--doys 1-360, but a year of its noleap calendar has 365 days",
        ),
    ];
    for (i, (data, flags, expected)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        let err = fails(&job(&fixture(data), &out, flags));
        assert!(err.contains(expected), "{data} {flags:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(common::entries(&out).iter().all(|e| e.starts_with('.')), "{:?}", common::entries(&out));
    }
    // the year's own days pass: 1-360 of 360_day as a climatology, 1-365 of noleap, and the
    // default (every day of the input's year)
    for (i, (data, flags, n)) in [
        ("cmip6_360day", vec!["--doys", "1-360", "--layout", "climatology"], 360),
        ("cmip6_noleap", vec!["--doys", "1-365", "--layout", "climatology"], 365),
        ("cmip6_360day", vec!["--layout", "climatology"], 360),
    ]
    .into_iter()
    .enumerate()
    {
        let out = dir.path().join(format!("good{i}"));
        ok(&job(&fixture(data), &out, &flags));
        let f = netcdf::open(out.join("climatology.nc")).unwrap();
        assert_eq!(f.dimension("doy").unwrap().len(), n, "{data} {flags:?}");
    }
}

fn mpirun(np: usize, args: &[String]) {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-np", &np.to_string(), env!("CARGO_BIN_EXE_sstclim")]).args(args);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c.env("OMPI_MCA_rmaps_base_oversubscribe", "1").env("HDF5_USE_FILE_LOCKING", "FALSE").env_remove("RUST_LOG");
    c.env("SSTCLIM_RATES", "none");
    let out = c.output().unwrap_or_else(|e| panic!("cannot start mpirun: {e}"));
    assert!(
        out.status.success(),
        "mpirun -np {np} {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_360_day_job_is_the_same_bits_at_one_two_and_three_ranks() {
    let dir = tmp();
    let data = fixture("cmip6_360day");
    for layout in ["stacked", "climatology"] {
        let one = dir.path().join(format!("{layout}-1"));
        ok(&job(&data, &one, &["--layout", layout, "--threads", "1"]));
        for np in [2, 3] {
            let many = dir.path().join(format!("{layout}-{np}"));
            mpirun(np, &job(&data, &many, &["--layout", layout, "--threads", "1"]));
            ok(&["compare", "--tolerance", "0", &s(&one), &s(&many)]);
        }
        // every day of the 360-day year, none past it
        let name = if layout == "climatology" { "climatology.nc" } else { "mean.nc" };
        let dim = if layout == "climatology" { "doy" } else { "time" };
        let f = netcdf::open(one.join(name)).unwrap();
        assert_eq!(f.dimension(dim).unwrap().len(), 360, "{layout}");
    }
}
