//! Discovery: naming patterns, templates, directory trees, globs and lists, time series.

use super::pattern::{interpret, suggest_template};
use super::*;
use std::path::Path;

fn infer(names: &[&str]) -> Option<String> {
    interpret(names).map(|t| t.to_string())
}

#[test]
fn infers_common_naming_schemes() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    assert_eq!(infer(&["sst_1991_147.nc", "sst_1991_148.nc", "sst_1992_147.nc"]).unwrap(), "sst_{year}_{doy}.nc");
    let ostia = [
        "20200101120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc",
        "20200102120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc",
    ];
    assert_eq!(infer(&ostia).unwrap(), "{year}{month}{day}120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc");
    assert_eq!(infer(&["2020/001/a.nc", "2020/002/a.nc"]).unwrap(), "{year}/{doy}/a.nc");
    assert_eq!(infer(&["sst.2019.01.31.nc", "sst.2019.02.01.nc"]).unwrap(), "sst.{year}.{month}.{day}.nc");
    assert_eq!(infer(&["sst.31.01.2019.nc", "sst.01.02.2019.nc"]).unwrap(), "sst.{day}.{month}.{year}.nc");
    assert_eq!(infer(&["d2019032.nc", "d2019033.nc"]).unwrap(), "d{year}{doy}.nc");
    assert_eq!(infer(&["2020/20200101.nc", "2021/20210101.nc"]).unwrap(), "{year}/{year}{month}{day}.nc");
    assert_eq!(
        infer(&["1999/01/a_1999_01_30.nc", "1999/01/a_1999_01_31.nc"]).unwrap(),
        "{year}/{month}/a_{year}_{month}_{day}.nc"
    );
    assert_eq!(infer(&["2020/02/20200201.nc", "2020/03/20200301.nc"]).unwrap(), "{year}/{month}/{year}{month}{day}.nc");
}

#[test]
fn refuses_names_that_are_not_dates() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    assert_eq!(infer(&["mean_doy152.nc", "mean_doy153.nc"]), None);
    assert_eq!(infer(&["run_17.nc", "run_18.nc"]), None);
    // doy 366 in a non-leap year cannot be named back
    assert_eq!(infer(&["sst_2019_366.nc", "sst_2019_365.nc"]), None);
}

#[test]
fn finds_files_and_reports_missing_ones() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    for d in 147..=149 {
        nc(&dir.path().join(format!("sst_1991_{d}.nc")), &[]);
    }
    std::fs::write(dir.path().join("mean_doy152.nc"), b"").unwrap(); // not a date pattern
    std::fs::write(dir.path().join(".hidden_1991_150.nc"), b"").unwrap();
    let required: Vec<Date> = (147..=150).map(|d| Date::from_ordinal(1991, d).unwrap()).collect();
    let input = dir.path().to_str().unwrap();
    match discover(input, None, &|_| required.clone(), false) {
        Err(DiscoverError::MissingFiles { missing, total, .. }) => {
            assert_eq!(total, 4);
            assert_eq!(missing, [dir.path().join("sst_1991_150.nc")]);
        }
        other => panic!("expected missing files, got {other:?}"),
    }
    let inputs = discover(input, None, &|_| required.clone(), true).unwrap();
    assert_eq!(inputs.files.len(), 3);
    assert_eq!(inputs.missing.len(), 1);
    std::fs::write(dir.path().join("other_1991_01_01.nc"), b"").unwrap();
    std::fs::write(dir.path().join("other_1991_01_02.nc"), b"").unwrap();
    assert!(matches!(infer_template(dir.path()), Err(DiscoverError::AmbiguousPattern { .. })));
    assert!(matches!(
        discover("/nonexistent/dir", None, &|_| required.clone(), false),
        Err(DiscoverError::NotFound(_))
    ));
}

/// A long list is summarised: the count, the days and years, the cause (the windows
/// reach past the days the dataset holds), the first and last three files.
#[test]
fn a_long_missing_list_is_summarised_with_its_cause() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    for y in 1991..=1993 {
        for d in 121..=273 {
            nc(&dir.path().join(format!("sst_{y}_{d}.nc")), &[]);
        }
    }
    let required: Vec<Date> =
        (1991..=1993).flat_map(|y| (116..=278).map(move |d| Date::from_ordinal(y, d).unwrap())).collect();
    let err =
        discover(&format!("{}/", dir.path().display()), None, &|_| required.clone(), false).unwrap_err().to_string();
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].starts_with("30 of 489 input files are missing"), "{err}");
    assert!(lines[0].contains("days 116-120, 274-278 of years 1991-1993"), "{err}");
    assert!(lines[0].contains("the dataset holds days 121-273 and the windows need days 116-278"), "{err}");
    assert_eq!(lines.len(), 8, "{err}");
    assert!(lines[1].ends_with("/sst_1991_116.nc") && !lines[1].contains("//"), "{err}");
    assert_eq!(lines[4].trim(), "... 24 more ...");
    assert!(lines[7].ends_with("sst_1993_278.nc"), "{err}");
    // a whole year absent names --years; nothing at all names --input
    let later: Vec<Date> =
        (1994..=1994).flat_map(|y| (121..=130).map(move |d| Date::from_ordinal(y, d).unwrap())).collect();
    let both = [&required[5..10], &later[..]].concat();
    let err = discover(dir.path().to_str().unwrap(), None, &|_| both.clone(), false).unwrap_err().to_string();
    assert!(err.contains("the dataset holds years 1991 and the job asks for 1991, 1994: check the years asked for (run's --baseline, events' --years)"), "{err}");
    let err = discover(dir.path().join("x_{year}_{doy}.nc").to_str().unwrap(), None, &|_| later.clone(), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no file the job needs exists: check --input"), "{err}");
}

#[test]
fn directory_hints_are_made_from_the_files_found() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    assert_eq!(suggest_template("sst.20200101.v2.nc").unwrap(), "sst.{year}{month}{day}.v2.nc");
    assert_eq!(suggest_template("A2019032.L3m.nc").unwrap(), "A{year}{doy}.L3m.nc");
    assert_eq!(suggest_template("clim_doy152.nc").unwrap(), "clim_doy{year}_{doy}.nc");
    assert_eq!(suggest_template("run_17.nc"), None);
    let dir = tempfile::tempdir().unwrap();
    for d in ["clim_doy152.nc", "clim_doy153.nc"] {
        std::fs::write(dir.path().join(d), b"").unwrap();
    }
    let with_slash = format!("{}/", dir.path().display());
    let err = infer_template(Path::new(&with_slash)).unwrap_err().to_string();
    assert!(err.contains(&format!("'{}/clim_doy{{year}}_{{doy}}.nc'", dir.path().display())), "{err}");
    assert!(!err.contains("//"), "{err}");
    let other = tempfile::tempdir().unwrap();
    for d in ["run_17.nc", "run_18.nc"] {
        std::fs::write(other.path().join(d), b"").unwrap();
    }
    let err = infer_template(other.path()).unwrap_err().to_string();
    assert!(err.contains(&format!("'{}/sst_{{year}}_{{doy}}.nc'", other.path().display())), "{err}");
}

/// A small NetCDF file: `sst(time, lat, lon)` with these time values in `units` and
/// `calendar`, or `sst(lat, lon)` without a time axis where `times` is empty.
fn nc_in(path: &Path, times: &[f64], units: &str, calendar: Option<&str>) {
    // absent attributes (no calendar) are asked for: libhdf5 need not print about them
    crate::input::silence_hdf5();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = netcdf::create(path).unwrap();
    f.add_dimension("lat", 2).unwrap();
    f.add_dimension("lon", 3).unwrap();
    let dims: &[&str] = if times.is_empty() { &["lat", "lon"] } else { &["time", "lat", "lon"] };
    if !times.is_empty() {
        f.add_dimension("time", times.len()).unwrap();
        let mut t = f.add_variable::<f64>("time", &["time"]).unwrap();
        t.put_attribute("units", units).unwrap();
        t.put_attribute("standard_name", "time").unwrap();
        if let Some(c) = calendar {
            t.put_attribute("calendar", c).unwrap();
        }
        t.put_values(times, ..).unwrap();
    }
    let mut v = f.add_variable::<f32>("sst", dims).unwrap();
    v.put_values(&vec![1.0f32; 6 * times.len().max(1)], ..).unwrap();
}

fn nc(path: &Path, times: &[f64]) {
    nc_in(path, times, "days since 1990-01-01", None);
}

/// Days since 1990-01-01 of a Gregorian date.
fn since1990(y: i32, m: u8, d: u8) -> f64 {
    (Date::new(y, m, d).unwrap().to_days() - Date::new(1990, 1, 1).unwrap().to_days()) as f64
}

fn days(from: Date, n: i64) -> Vec<Date> {
    (0..n).map(|k| from.add_days(k)).collect()
}

fn d(y: i32, m: u8, day: u8) -> Date {
    Date::new(y, m, day).unwrap()
}

#[test]
fn product_trees_are_named_by_date() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let ncei = ["199101/oisst-avhrr-v02r01.19910131.nc", "199102/oisst-avhrr-v02r01.19910201.nc"];
    assert_eq!(infer(&ncei).unwrap(), "{year}{month}/oisst-avhrr-v02r01.{year}{month}{day}.nc");
    let ostia = [
        "2020/01/20200131120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc",
        "2020/02/20200201120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc",
    ];
    assert_eq!(
        infer(&ostia).unwrap(),
        "{year}/{month}/{year}{month}{day}120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc"
    );
    assert_eq!(suggest_template("sst_199101.nc").unwrap(), "sst_{year}{month}.nc");
}

/// NCEI's tree, with OISST's time axis ("days since 1978-01-01 12:00:00", standard calendar):
/// found from the names, the calendar from the files, names checked against the axes.
#[test]
fn ncei_tree_is_found_and_checked_against_time_axes() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    let base = Date::new(1978, 1, 1).unwrap().to_days();
    let dates = days(d(1991, 1, 30), 4);
    for day in &dates {
        let name = format!(
            "{:04}{:02}/oisst-avhrr-v02r01.{:04}{:02}{:02}.nc",
            day.year, day.month, day.year, day.month, day.day
        );
        let t = (day.to_days() - base) as f64;
        nc_in(&dir.path().join(name), &[t], "days since 1978-01-01 12:00:00", Some("standard"));
    }
    let input = dir.path().to_str().unwrap();
    let inputs = discover(input, None, &|_| dates.clone(), false).unwrap();
    assert_eq!(inputs.calendar, CfCalendar::Standard);
    assert_eq!(inputs.files.len(), 4);
    assert!(inputs.files[&d(1991, 2, 2)].path.ends_with("199102/oisst-avhrr-v02r01.19910202.nc"));
    assert!(inputs.files.values().all(|s| s.step == 0));
    // a file whose axis says another day than its name
    let wrong = dir.path().join("199102/oisst-avhrr-v02r01.19910203.nc");
    nc_in(&wrong, &[(d(1991, 2, 4).to_days() - base) as f64], "days since 1978-01-01 12:00:00", Some("standard"));
    let more = days(d(1991, 1, 30), 5);
    let err = discover(input, None, &|_| more.clone(), false).unwrap_err().to_string();
    assert!(
        err.contains("oisst-avhrr-v02r01.19910203.nc: named for 1991-02-03 but its time axis says 1991-02-04"),
        "{err}"
    );
}

/// Monthly and yearly files mixed in one directory (names not by day): every step dated from
/// its axis, each date mapped to its file and step.
#[test]
fn a_time_series_of_mixed_files_maps_dates_to_steps() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    let dec: Vec<f64> = (1..=31).map(|k| since1990(1990, 12, k)).collect();
    nc(&dir.path().join("sst_199012.nc"), &dec);
    let y1991: Vec<f64> = (0..365).map(|k| since1990(1991, 1, 1) + f64::from(k) + 0.5).collect();
    nc(&dir.path().join("sst_1991.nc"), &y1991);
    std::fs::write(dir.path().join("notes.txt"), b"not NetCDF").unwrap();
    let want = days(d(1990, 12, 30), 5);
    let inputs = discover(dir.path().to_str().unwrap(), None, &|_| want.clone(), false).unwrap();
    assert_eq!(inputs.calendar, CfCalendar::Standard);
    let at = |y, m, day| {
        let s = &inputs.files[&d(y, m, day)];
        (s.path.file_name().unwrap().to_str().unwrap().to_string(), s.step)
    };
    assert_eq!(at(1990, 12, 30), ("sst_199012.nc".into(), 29));
    assert_eq!(at(1990, 12, 31), ("sst_199012.nc".into(), 30));
    assert_eq!(at(1991, 1, 1), ("sst_1991.nc".into(), 0));
    assert_eq!(at(1991, 1, 3), ("sst_1991.nc".into(), 2));
    assert_eq!(inputs.template.to_string(), format!("{} and 1 more files", dir.path().join("sst_199012.nc").display()));
    // the same files as a glob, and as a list
    let glob = format!("{}/sst_*.nc", dir.path().display());
    let by_glob = discover(&glob, None, &|_| want.clone(), false).unwrap();
    assert_eq!(by_glob.files, inputs.files);
    let list = dir.path().join("inputs.txt");
    std::fs::write(
        &list,
        format!("{}\n{}\n", dir.path().join("sst_1991.nc").display(), dir.path().join("sst_199012.nc").display()),
    )
    .unwrap();
    let by_list = discover(&format!("@{}", list.display()), None, &|_| want.clone(), false).unwrap();
    assert_eq!(by_list.files, inputs.files);
    // several inputs, one per line (repeated --input)
    let two = format!("{}\n{}", dir.path().join("sst_199012.nc").display(), dir.path().join("sst_1991.nc").display());
    assert_eq!(discover(&two, None, &|_| want.clone(), false).unwrap().files, inputs.files);
    // dates past the series: listed, or skipped with --allow-missing
    let past = days(d(1991, 12, 30), 4);
    let err = discover(&glob, None, &|_| past.clone(), false).unwrap_err().to_string();
    assert!(err.starts_with("2 of 4 days the job needs are in no input file"), "{err}");
    assert!(err.contains("1992-01-01") && err.contains("1992-01-02"), "{err}");
    let skipped = discover(&glob, None, &|_| past.clone(), true).unwrap();
    assert_eq!(skipped.files.len(), 2);
    assert_eq!(skipped.missing, [PathBuf::from("1992-01-01"), PathBuf::from("1992-01-02")]);
}

#[test]
fn overlapping_files_are_an_error_naming_both() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    nc(&dir.path().join("a.nc"), &[since1990(1991, 1, 1), since1990(1991, 1, 2)]);
    nc(&dir.path().join("b.nc"), &[since1990(1991, 1, 2), since1990(1991, 1, 3)]);
    let want = days(d(1991, 1, 1), 3);
    let err = discover(dir.path().to_str().unwrap(), None, &|_| want.clone(), false).unwrap_err().to_string();
    let (a, b) = (dir.path().join("a.nc"), dir.path().join("b.nc"));
    assert_eq!(
        err,
        format!(
            "1991-01-02 is in two input files: {} and {} (overlapping time series: pass each date once)",
            a.display(),
            b.display()
        )
    );
}

/// Bad time axes: one line naming the file and the problem.
#[test]
fn bad_time_axes_are_refused_naming_the_file() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    let want = days(d(1991, 1, 1), 2);
    let one = |name: &str, times: &[f64], units: &str, cal: Option<&str>| {
        let path = dir.path().join(name);
        nc_in(&path, times, units, cal);
        let err = discover(path.to_str().unwrap(), None, &|_| want.clone(), false).unwrap_err().to_string();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    };
    let t = [since1990(1991, 1, 2), since1990(1991, 1, 1)];
    assert!(one("back.nc", &t, "days since 1990-01-01", None).contains("time is not increasing"));
    let t = [since1990(1991, 1, 1), since1990(1991, 1, 1) + 0.25];
    assert!(one("hourly.nc", &t, "days since 1990-01-01", None).contains("both fall on 1991-01-01"));
    let t = [since1990(1991, 1, 1), since1990(1991, 1, 2)];
    assert!(one("cal.nc", &t, "days since 1990-01-01", Some("lunar")).contains("unknown calendar 'lunar'"));
    assert!(one("units.nc", &t, "fortnights since 1990-01-01", None).contains("units 'fortnights since 1990-01-01'"));
    // calendars differing between files
    let (a, b) = (dir.path().join("s/a.nc"), dir.path().join("s/b.nc"));
    nc_in(&a, &[0.0], "days since 1991-01-01", Some("noleap"));
    nc_in(&b, &[1.0], "days since 1991-01-01", Some("360_day"));
    let err = discover(dir.path().join("s").to_str().unwrap(), None, &|_| want.clone(), false).unwrap_err().to_string();
    assert!(err.contains("calendar '360_day' but") && err.contains("has 'noleap'"), "{err}");
    // a variable missing from a file given explicitly
    let other = dir.path().join("other.nc");
    {
        let mut f = netcdf::create(&other).unwrap();
        f.add_dimension("lat", 2).unwrap();
        f.add_dimension("lon", 3).unwrap();
        f.add_variable::<f32>("ice", &["lat", "lon"]).unwrap();
    }
    let two = format!("{}\n{}", a.display(), other.display());
    let err = discover(&two, Some("sst"), &|_| want.clone(), false).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}: no variable 'sst'", other.display())), "{err}");
}

/// A model calendar's days: the dates asked for are those of the files' calendar.
#[test]
fn the_required_dates_follow_the_inputs_calendar() {
    // discovery forks children: one forking test at a time (see input::child::serial)
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    // 360_day: 1991-02-29 and 02-30 exist
    let t: Vec<f64> = (0..360).map(f64::from).collect();
    nc_in(&dir.path().join("tos_day360_1991.nc"), &t, "days since 1991-01-01", Some("360_day"));
    let asked = std::cell::Cell::new(None);
    let want = |cf: CfCalendar| {
        asked.set(Some(cf));
        vec![Date { year: 1991, month: 2, day: 29 }, Date { year: 1991, month: 2, day: 30 }]
    };
    let inputs = discover(dir.path().to_str().unwrap(), None, &want, false).unwrap();
    assert_eq!(asked.get(), Some(CfCalendar::Day360));
    assert_eq!(inputs.calendar, CfCalendar::Day360);
    assert_eq!(inputs.files[&Date { year: 1991, month: 2, day: 30 }].step, 59);
}

/// Extended windows (marineHeatWaves'): dates past the years on a side where the input has
/// none are left out (the series ends there); a side the input has in part is a gap, missing.
#[test]
fn extended_windows_stop_where_the_input_ends_and_gaps_stay_missing() {
    let _serial = crate::input::child::serial();
    let dir = tempfile::tempdir().unwrap();
    for y in 2001..=2002 {
        for d in [1, 2, 364, 365] {
            nc(&dir.path().join(format!("sst_{y}_{d:03}.nc")), &[]);
        }
    }
    let date = |y, d| Date::from_ordinal(y, d).unwrap();
    // windows of days 1-2 and 364-365 of 2001-2002, two days each side
    let required = vec![
        date(2000, 365),
        date(2000, 366),
        date(2001, 1),
        date(2001, 2),
        date(2001, 364),
        date(2001, 365),
        date(2002, 1),
        date(2002, 2),
        date(2002, 364),
        date(2002, 365),
        date(2003, 1),
        date(2003, 2),
    ];
    let input = dir.path().join("sst_{year}_{doy}.nc");
    let input = input.to_str().unwrap();
    let found = discover_extending(input, None, &|_| required.clone(), false, Some(2001..=2002)).unwrap();
    assert_eq!(found.files.len(), 8);
    assert!(found.missing.is_empty());
    // without extending (or with --allow-missing only), the same dates are missing files
    match discover(input, None, &|_| required.clone(), false) {
        Err(DiscoverError::MissingFiles { missing, .. }) => assert_eq!(missing.len(), 4),
        other => panic!("expected missing files, got {other:?}"),
    }
    // the input has 2000-12-31 but not 2000-12-30: a gap before the years, reported; the
    // side after the years is still past the input's end
    nc(&dir.path().join("sst_2000_366.nc"), &[]);
    match discover_extending(input, None, &|_| required.clone(), false, Some(2001..=2002)) {
        Err(DiscoverError::MissingFiles { missing, .. }) => {
            assert_eq!(missing, [dir.path().join("sst_2000_365.nc")]);
        }
        other => panic!("expected the gap as missing, got {other:?}"),
    }
}
