//! The answers text attributes stored as NC_STRING (HDF5 variable-length strings, as h5py and
//! `xarray.to_netcdf(engine="h5netcdf")` write every `str`) used to get wrong, end to end, on the
//! fixtures of `tests/fixtures/strings/make_string_fixtures.py`:
//! - a noleap series whose `time:calendar` (rewritten by h5py) or whose every text attribute
//!   (xarray) is NC_STRING gives `run --layout stacked --doys 1-365` and `events --baseline`
//!   (over part of the series, over all of it, and over all of it with `--allow-missing`) outputs
//!   bit for bit equal to those of the same data with NC_CHAR text, in the noleap calendar (it was
//!   dated in `standard`, 37 days early: wrong values, files reported missing that exist, or
//!   refused for "no units attribute");
//! - one kelvin file among degree-Celsius files whose `units` are NC_STRING is refused in one
//!   line naming it (it was averaged in), on the parser's and libhdf5's direct paths; the others
//!   give outputs that say `units = "degC"`;
//! - a climatology whose attributes are NC_STRING (xarray) is read by `events --climatology` as
//!   its NC_CHAR twin (it was refused as "not a climatology file").

use std::path::{Path, PathBuf};

use crate::common::*;
use sstclim::input::{global_text, var_text};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/strings").join(name)
}

/// Every variable of `path` (sorted by name) with the bits of its values as float64.
fn all_bits(path: &Path) -> Vec<(String, Vec<u64>)> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut names: Vec<String> = f.variables().map(|v| v.name()).collect();
    names.sort();
    names.into_iter().map(|n| (n.clone(), read(path, &n).0.iter().map(|x| x.to_bits()).collect())).collect()
}

/// Variable attribute `var:name` of `path` as text.
fn text(path: &Path, var: &str, name: &str) -> Option<String> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap();
    let v = f.variable(var).unwrap_or_else(|| panic!("{}: no {var}", path.display()));
    var_text(&v, name)
}

/// `run --layout stacked --doys 1-365` over 2001-2002 (the series holds 2003 too: dated 37 days
/// early, as the `standard` calendar would date it, it still covers these years).
fn stacked(input: &Path, out: &Path) {
    ok(&with(run_args(input, out, "2001-2002", "1-365"), &["--layout", "stacked"]));
}

#[test]
fn a_noleap_series_with_string_attributes_is_dated_in_noleap() {
    let t = tmp();
    let base = t.path().join("char");
    stacked(&fixture("noleap_char"), &base);
    let want: Vec<_> = ["mean.nc", "p90.nc"].iter().map(|f| all_bits(&base.join(f))).collect();
    for src in ["noleap_calendar_h5py", "noleap_xarray"] {
        let out = t.path().join(src);
        stacked(&fixture(src), &out);
        for (f, want) in ["mean.nc", "p90.nc"].iter().zip(&want) {
            let path = out.join(f);
            assert_eq!(text(&path, "time", "calendar").as_deref(), Some("noleap"), "{src}/{f}");
            assert_eq!(&all_bits(&path), want, "{src}/{f}");
            let stat = stat_var(&path, if *f == "mean.nc" { "mean" } else { "p90" });
            assert_eq!(text(&path, &stat, "units").as_deref(), Some("degC"), "{src}/{f}");
            assert_eq!(text(&path, &stat, "standard_name").as_deref(), Some("sea_surface_temperature"));
            // NC_STRING `standard_name = "latitude"`: a geographic latitude, given CF's axis
            assert_eq!(text(&path, "lat", "axis").as_deref(), Some("Y"), "{src}/{f}");
        }
    }
}

/// `sstclim events` of the years `years` on `input` into `out` with `more` flags: the bits of
/// every variable of events.nc and summary.nc, after checking that the times are noleap.
fn events(input: &Path, out: &Path, years: &str, more: &[&str]) -> [Vec<(String, Vec<u64>)>; 2] {
    let mut args = vec!["-q", "events", "-i", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend(["--years", years]);
    args.extend(more);
    ok(&args);
    let start = text(&out.join("events.nc"), "time_start", "calendar");
    assert_eq!(start.as_deref(), Some("noleap"), "{}", out.display());
    [all_bits(&out.join("events.nc")), all_bits(&out.join("summary.nc"))]
}

/// `events --baseline` of the series' years `years` (with `more` flags) on the NC_STRING series
/// equal, bit for bit, those on the NC_CHAR one.
fn events_equal(years: &str, more: &[&str]) {
    let t = tmp();
    let flags: Vec<&str> = ["--baseline", years].iter().copied().chain(more.iter().copied()).collect();
    let want = events(&fixture("noleap_char"), &t.path().join("char"), years, &flags);
    assert!(want[0].iter().any(|(n, v)| n == "time_start" && v.len() >= 2), "the planted heatwaves are found");
    for src in ["noleap_calendar_h5py", "noleap_xarray"] {
        assert_eq!(events(&fixture(src), &t.path().join(src), years, &flags), want, "{src} {flags:?}");
    }
}

#[test]
fn events_on_a_noleap_series_with_string_attributes_equal_those_of_nc_char() {
    events_equal("2001-2002", &[]);
}

#[test]
fn events_over_a_whole_noleap_series_with_string_attributes_find_no_file_missing() {
    events_equal("2001-2003", &[]);
}

#[test]
fn events_allowing_missing_files_on_a_noleap_series_with_string_attributes_equal_those_of_nc_char() {
    events_equal("2001-2003", &["--allow-missing"]);
}

#[test]
fn a_climatology_with_string_attributes_is_read_as_its_nc_char_twin() {
    let t = tmp();
    let series = fixture("noleap_char");
    let clim = |kind: &str| fixture(&format!("clim_{kind}/climatology.nc")).to_str().unwrap().to_string();
    let base = t.path().join("char");
    let want = events(&series, &base, "2001-2003", &["--climatology", &clim("char"), "--calendar", "ordinal"]);
    // (read as `standard`, its NC_STRING `time:calendar` would refuse the noleap input)
    let out = t.path().join("xarray");
    let got = events(&series, &out, "2001-2003", &["--climatology", &clim("xarray"), "--calendar", "ordinal"]);
    assert_eq!(got, want);
    let nc = |dir: &Path| netcdf::open(dir.join("events.nc")).unwrap();
    for name in ["climatology_years", "climatology_window_edges", "climatology_feb29", "climatology_percentile_method"]
    {
        let (a, b) = (global_text(&nc(&base), name), global_text(&nc(&out), name));
        assert!(a.is_some() && a == b, "{name}: {a:?} from NC_CHAR, {b:?} from NC_STRING");
    }
}

/// `sstclim run` on `input` (the daily fixtures, Jan 1-2 of 2001-2002) with `SSTCLIM_H5META`
/// set as given; returns the exit status and stderr.
fn run_daily(input: &Path, out: &Path, doys: &str, h5meta: &str) -> (Option<i32>, String) {
    let args = with(run_args(input, out, "2001-2002", doys), &["--half-window", "0"]);
    let o = bin().env("SSTCLIM_H5META", h5meta).args(&args).output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_kelvin_file_among_celsius_files_with_string_units_is_refused() {
    let t = tmp();
    for src in ["units_h5py", "units_xarray"] {
        let input = fixture(src);
        for h5meta in ["on", "off"] {
            let out = t.path().join(format!("{src}-{h5meta}"));
            let (code, err) = run_daily(&input, &out, "1-2", h5meta);
            assert_eq!(code, Some(2), "{src}, SSTCLIM_H5META={h5meta}: {err}");
            let odd = input.join("sst_20020101.nc");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!("{}: variable 'sst' has units 'K'", odd.display())) && err.contains("'degC'"),
                "{src}, SSTCLIM_H5META={h5meta}: {err}"
            );
            assert!(entries(&out).is_empty(), "{:?}", entries(&out));
        }
        // Jan 2 (every file in degC): the mean of the two years, and the outputs' units
        let out = t.path().join(format!("{src}-jan2"));
        let (code, err) = run_daily(&input, &out, "2", "on");
        assert_eq!(code, Some(0), "{err}");
        let a = read(&input.join("sst_20010102.nc"), "sst").0;
        let b = read(&input.join("sst_20020102.nc"), "sst").0;
        let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (x + y) / 2.0).collect();
        let path = out.join("mean_doy002.nc");
        assert_eq!(read_stat(&path, "mean").0, want, "{src}");
        assert_eq!(text(&path, &stat_var(&path, "mean"), "units").as_deref(), Some("degC"), "{src}");
    }
}
