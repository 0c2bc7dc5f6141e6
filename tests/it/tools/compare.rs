//! `sstclim compare` on what `sstclim events` writes: event tables compared event by event (the
//! count first, then every field), directories of events.nc and summary.nc compared file by
//! file, and what cannot be compared (a file on one side only, a file of no known layout,
//! files of different kinds or variables) an error, never a pass. The catalogues are real:
//! events of a generated dataset against one climatology, and of the same dataset with one
//! event's days erased (missing values take the climatology, so exactly that event goes).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use crate::common::{self, bin, fails, ok, read, s, tmp};

const NLON: usize = 4;

struct Runs {
    _dir: tempfile::TempDir,
    root: PathBuf,
    /// The events directories: the dataset's, again (equal), and without one event.
    a: PathBuf,
    again: PathBuf,
    fewer: PathBuf,
    /// The index of the erased event in `a`'s table.
    erased: usize,
}

fn events(data: &Path, clim: &Path, out: &Path) {
    let clim = s(&clim.join("climatology.nc"));
    let years = ["--years", "2001-2002", "--min-duration", "1"];
    ok(&[&["-q", "events", "-i", &s(data), "-o", &s(out), "--climatology", &clim][..], &years[..]].concat());
}

/// The three event runs, made once per test binary.
fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = tmp();
        let root = dir.path().to_path_buf();
        let data = root.join("data");
        let gen = ["--grid", "4x3", "--years", "2001-2002", "--doys", "1-366", "--land-fraction", "0"];
        let more = ["--all-missing-cells", "0", "--ice-missing-fraction", "0", "--seed", "5"];
        common::generate(&data, &[&gen[..], &more[..]].concat());
        let clim = root.join("clim");
        let run = common::run_args(&data, &clim, "2001-2002", "1-366");
        let flags = ["--calendar", "hobday366", "--method", "7", "--smooth", "31", "--layout", "climatology"];
        ok(&common::with(run, &[&flags[..], &["--feb29", "interpolate"]].concat()));
        let (a, again, fewer) = (root.join("a"), root.join("again"), root.join("fewer"));
        events(&data, &clim, &a);
        events(&data, &clim, &again);
        // the same data with the middle event's days missing at its cell
        let events_nc = a.join("events.nc");
        let col = |var: &str| read(&events_nc, var).0;
        let erased = col("duration").len() / 2;
        let (row, lon) = (col("lat_index")[erased] as usize, col("lon_index")[erased] as usize);
        let erased_data = root.join("erased");
        std::fs::create_dir(&erased_data).unwrap();
        for e in std::fs::read_dir(&data).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), erased_data.join(e.file_name())).unwrap();
        }
        for day in col("time_start")[erased] as i64..=col("time_end")[erased] as i64 {
            let date = sstclim::calendar::Date::from_days(day);
            let path = erased_data.join(format!("sst_{}_{:03}.nc", date.year, date.ordinal()));
            let mut f = netcdf::append(&path).unwrap();
            f.variable_mut("sst").unwrap().put_values(&[f64::NAN], [row..row + 1, lon..lon + 1]).unwrap();
        }
        assert!(row * NLON + lon < 12);
        events(&erased_data, &clim, &fewer);
        Runs { _dir: dir, root, a, again, fewer, erased }
    })
}

fn compare(args: &[&Path], flags: &[&str]) -> Output {
    let paths: Vec<String> = args.iter().map(|p| s(p)).collect();
    bin().arg("compare").args(flags).args(&paths).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The variables of `path`, in its order.
fn variables(path: &Path) -> Vec<String> {
    netcdf::open(path).unwrap().variables().map(|v| v.name()).collect()
}

#[test]
fn equal_catalogues_are_equal_field_by_field() {
    let r = runs();
    let (a, b) = (r.a.join("events.nc"), r.again.join("events.nc"));
    let n = read(&a, "duration").0.len();
    assert!(n > 20, "{n} events");
    for flags in [&[][..], &["--tolerance", "0"], &["--tolerance", "1e-9"]] {
        let out = compare(&[&a, &b], flags);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {text}");
        assert!(text.contains("EQUAL within tolerance"), "{text}");
        // every field compared, every event of it
        for var in variables(&a) {
            let row = text.lines().find(|l| l.split_whitespace().next() == Some(var.as_str()));
            let row = row.unwrap_or_else(|| panic!("no row for {var}: {text}"));
            assert_eq!(row.split_whitespace().nth(2), Some(n.to_string().as_str()), "{row}");
        }
    }
}

#[test]
fn one_event_more_is_different_naming_the_first_differing_event() {
    let r = runs();
    let (a, b) = (r.a.join("events.nc"), r.fewer.join("events.nc"));
    let n = read(&a, "duration").0.len();
    assert_eq!(read(&b, "duration").0.len(), n - 1, "exactly one event erased");
    // the oracle: from the erased event on, b's events are a's next ones; the first field
    // (in the file's order) where a's erased event and its successor differ is named
    let k = r.erased;
    let differ = |x: f64, y: f64| x != y && !(x.is_nan() && y.is_nan());
    let var = variables(&a).into_iter().find(|v| differ(read(&a, v).0[k], read(&a, v).0[k + 1])).unwrap();
    for (x, y) in [(&a, &b), (&b, &a)] {
        let out = compare(&[x, y], &[]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains("DIFFERENT"), "{text}");
        let len = |p: &Path| read(p, "duration").0.len();
        let counts = format!("{} events in {} but {} in {}", len(x), s(x), len(y), s(y));
        assert!(text.contains(&counts), "{text}");
        assert!(text.contains(&format!("the first that differs is event[{k}] (")), "{text}");
        assert!(text.contains(&format!(": {var} ")), "{var}: {text}");
    }
}

#[test]
fn one_value_in_one_field_is_different_naming_the_field_and_event() {
    let r = runs();
    let changed = r.root.join("changed");
    std::fs::create_dir_all(&changed).unwrap();
    let file = changed.join("events.nc");
    std::fs::copy(r.a.join("events.nc"), &file).unwrap();
    let k = 7;
    let before = read(&file, "intensity_max").0[k];
    {
        let mut f = netcdf::append(&file).unwrap();
        f.variable_mut("intensity_max").unwrap().put_values(&[before + 0.5], [k..k + 1]).unwrap();
    }
    let out = compare(&[&r.a.join("events.nc"), &file], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("DIFFERENT"), "{text}");
    let row = text.lines().find(|l| l.starts_with("intensity_max ")).unwrap();
    // one value differs, by 0.5
    let fields: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((fields[3], fields[5], fields[6]), ("5.000e-1", "1", "1"), "{row}");
    assert!(text.contains(&format!("the first event that differs is event[{k}] (")), "{text}");
    assert!(text.contains(&format!(": intensity_max {before} vs {}", before + 0.5)), "{text}");
    // within a tolerance that covers it: equal
    assert_eq!(compare(&[&r.a.join("events.nc"), &file], &["--tolerance", "0.6"]).status.code(), Some(0));
}

#[test]
fn directories_compare_every_file() {
    let r = runs();
    let out = compare(&[&r.a, &r.again], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    // events.nc's fields and summary.nc's statistics: one row per variable and file
    let rows = variables(&r.a.join("events.nc")).len() + common_rows(&r.a.join("summary.nc"));
    let all = text.lines().find(|l| l.starts_with("all ")).unwrap();
    assert_eq!(all.split_whitespace().nth(1), Some(rows.to_string().as_str()), "{text}");
    // a field both files hold has a row per file, each over its own values
    let n = read(&r.a.join("events.nc"), "duration").0.len();
    let values = |label: &str| {
        let row = text.lines().find(|l| l.split_whitespace().next() == Some(label));
        row.unwrap_or_else(|| panic!("no row {label}: {text}")).split_whitespace().nth(2).unwrap().to_string()
    };
    assert_eq!(values("events/duration"), n.to_string(), "{text}");
    assert_eq!(values("summary/duration"), read(&r.a.join("summary.nc"), "duration").0.len().to_string(), "{text}");
    // one event fewer: both files differ, and the count says so
    let out = compare(&[&r.a, &r.fewer], &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("events.nc: ") && text.contains(" events in "), "{text}");
    let total = text.lines().find(|l| l.starts_with("total_days ")).unwrap();
    assert_ne!(total.split_whitespace().nth(6), Some("0"), "summary.nc differs too: {text}");
    // a file on one side only is an error naming it
    let partial = r.root.join("partial");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::copy(r.a.join("events.nc"), partial.join("events.nc")).unwrap();
    for (x, y) in [(&r.a, &partial), (&partial, &r.a)] {
        let err = fails(&["compare", &s(x), &s(y)]);
        assert!(err.contains("summary.nc: not in"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

/// summary.nc's gridded statistics (its coordinates are checked, not rows).
fn common_rows(path: &Path) -> usize {
    let f = netcdf::open(path).unwrap();
    let n = f.variables().filter(|v| v.dimensions().len() == 3).count();
    assert!(n > 5, "{n}");
    n
}

#[test]
fn what_cannot_be_compared_is_an_error() {
    let r = runs();
    let dir = tmp();
    let events = r.a.join("events.nc");
    // an event table against a gridded file
    let err = fails(&["compare", &s(&events), &s(&r.a.join("summary.nc"))]);
    assert!(err.contains("an event table but") && err.contains("is a gridded file"), "{err}");
    // a column one side has and the other has not
    let extra = dir.path().join("events.nc");
    std::fs::copy(&events, &extra).unwrap();
    {
        let mut f = netcdf::append(&extra).unwrap();
        let n = read(&events, "duration").0.len();
        f.add_variable::<f64>("extra", &["event"]).unwrap().put_values(&vec![1.0; n], ..).unwrap();
    }
    for (x, y) in [(&events, &extra), (&extra, &events)] {
        let err = fails(&["compare", &s(x), &s(y)]);
        assert!(err.contains("no variable 'extra'"), "{err}");
    }
    // a file with neither gridded variables nor an event table, even against itself
    let odd = dir.path().join("odd.nc");
    {
        let mut f = netcdf::create(&odd).unwrap();
        f.add_dimension("station", 3).unwrap();
        f.add_variable::<f64>("height", &["station"]).unwrap().put_values(&[1.0, 2.0, 3.0], ..).unwrap();
    }
    let err = fails(&["compare", &s(&odd), &s(&odd)]);
    assert!(err.contains("odd.nc: neither gridded variables nor an event table"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
