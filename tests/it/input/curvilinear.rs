//! Curvilinear and named grids, through the real binary: CMIP6 `(time, j, i)` with 2-D
//! `latitude`/`longitude` named by `coordinates`, CESM `(time, nlat, nlon)` with `TLAT`/`TLONG`,
//! NEMO/IPSL `(time_counter, y, x)` with `nav_lat`/`nav_lon`, a rotated-pole grid with a
//! grid-mapping variable, and ERA5's descending latitude. Each job's values must equal, bit for
//! bit, the same job on a regular `(time, lat, lon)` copy of the same numbers; the outputs must
//! keep the input's dimensions, its 1-D or 2-D coordinates and its grid mapping.

use std::path::{Path, PathBuf};

use crate::common::*;

const NROW: usize = 5;
const NCOL: usize = 6;
const YEARS: [i32; 2] = [2001, 2002];
const DOYS: std::ops::RangeInclusive<i32> = 100..=110;
const FILL: f32 = 1e20;

/// The field of one day: a few decimals of spread, land (fill) in two cells.
fn field(year: i32, doy: i32) -> Vec<f32> {
    (0..NROW * NCOL)
        .map(|c| {
            if c == 7 || c == 22 {
                FILL
            } else {
                let k = (year as usize * 7 + doy as usize * 13 + c * 31) % 97;
                15.0 + k as f32 * 0.137 + (c / NCOL) as f32
            }
        })
        .collect()
}

/// Latitude and longitude of cell (r, c) of the curvilinear grid (a skewed, rotated mesh).
fn lat2(r: usize, c: usize) -> f64 {
    -30.0 + 12.5 * r as f64 + 0.75 * c as f64
}
fn lon2(r: usize, c: usize) -> f64 {
    100.0 + 20.0 * c as f64 - 1.5 * r as f64
}

fn grid2(f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
    (0..NROW).flat_map(|r| (0..NCOL).map(move |c| (r, c))).map(|(r, c)| f(r, c)).collect()
}

/// One file per day (`{prefix}_{year}_{doy}.nc`, a time axis of one step) of variable `var`
/// over (`time_dim`, `row`, `col`); `header` adds the grid's variables and the data variable's
/// attributes; `values` gives each day's field in (row, col) order.
fn write_set(
    dir: &Path,
    var: &str,
    [time_dim, row, col]: [&str; 3],
    header: &dyn Fn(&mut netcdf::FileMut),
    var_attrs: &[(&str, &str)],
    values: &dyn Fn(i32, i32) -> Vec<f32>,
) -> PathBuf {
    let days: Vec<(i32, i32)> = YEARS.iter().flat_map(|&y| DOYS.map(move |d| (y, d))).collect();
    write_days(dir, var, [time_dim, row, col], header, var_attrs, values, &days)
}

/// [`write_set`] of the days `days` (year, day of year).
fn write_days(
    dir: &Path,
    var: &str,
    [time_dim, row, col]: [&str; 3],
    header: &dyn Fn(&mut netcdf::FileMut),
    var_attrs: &[(&str, &str)],
    values: &dyn Fn(i32, i32) -> Vec<f32>,
    days: &[(i32, i32)],
) -> PathBuf {
    sstclim::input::silence_hdf5();
    std::fs::create_dir_all(dir).unwrap();
    for &(y, d) in days {
        {
            let mut f = netcdf::create(dir.join(format!("{var}_{y}_{d:03}.nc"))).unwrap();
            f.add_unlimited_dimension(time_dim).unwrap();
            f.add_dimension(row, NROW).unwrap();
            f.add_dimension(col, NCOL).unwrap();
            {
                let mut t = f.add_variable::<f64>(time_dim, &[time_dim]).unwrap();
                t.put_attribute("standard_name", "time").unwrap();
                t.put_attribute("units", format!("days since {y}-01-01")).unwrap();
                t.put_attribute("calendar", "standard").unwrap();
                t.put_attribute("axis", "T").unwrap();
                t.put_values(&[f64::from(d - 1) + 0.5], [0..1]).unwrap();
            }
            header(&mut f);
            let mut v = f.add_variable::<f32>(var, &[time_dim, row, col]).unwrap();
            v.set_fill_value(FILL).unwrap();
            v.put_attribute("missing_value", FILL).unwrap();
            v.put_attribute("units", "degC").unwrap();
            v.put_attribute("standard_name", "sea_surface_temperature").unwrap();
            for (k, val) in var_attrs {
                v.put_attribute(k, *val).unwrap();
            }
            v.put_values(&values(y, d), [0..1, 0..NROW, 0..NCOL]).unwrap();
        }
    }
    dir.to_path_buf()
}

/// A 2-D coordinate variable over (`row`, `col`).
fn put_2d(f: &mut netcdf::FileMut, name: &str, dims: [&str; 2], values: &[f64], attrs: &[(&str, &str)]) {
    let mut v = f.add_variable::<f64>(name, &dims).unwrap();
    for (k, val) in attrs {
        v.put_attribute(k, *val).unwrap();
    }
    v.put_values(values, ..).unwrap();
}

/// A 1-D coordinate variable.
fn put_1d(f: &mut netcdf::FileMut, name: &str, values: &[f64], attrs: &[(&str, &str)]) {
    let mut v = f.add_variable::<f64>(name, &[name]).unwrap();
    for (k, val) in attrs {
        v.put_attribute(k, *val).unwrap();
    }
    v.put_values(values, ..).unwrap();
}

/// The regular copy: `(time, lat, lon)` with 1-D coordinates, the same numbers.
fn regular(dir: &Path, var: &str, values: &dyn Fn(i32, i32) -> Vec<f32>) -> PathBuf {
    let header = |f: &mut netcdf::FileMut| {
        put_1d(f, "lat", &(0..NROW).map(|r| r as f64).collect::<Vec<_>>(), &[("units", "degrees_north")]);
        put_1d(f, "lon", &(0..NCOL).map(|c| c as f64).collect::<Vec<_>>(), &[("units", "degrees_east")]);
    };
    write_set(dir, var, ["time", "lat", "lon"], &header, &[], values)
}

/// CMIP6 `tos(time, j, i)`: int `j`/`i` index variables, 2-D latitude/longitude with bounds.
fn cmip6_header(f: &mut netcdf::FileMut) {
    f.add_dimension("vertices", 4).unwrap();
    for (name, n) in [("j", NROW), ("i", NCOL)] {
        let mut v = f.add_variable::<i32>(name, &[name]).unwrap();
        v.put_attribute("units", "1").unwrap();
        v.put_attribute(
            "long_name",
            format!("cell index along {} dimension", if name == "j" { "second" } else { "first" }),
        )
        .unwrap();
        v.put_values(&(0..n as i32).collect::<Vec<_>>(), ..).unwrap();
    }
    put_2d(
        f,
        "latitude",
        ["j", "i"],
        &grid2(lat2),
        &[("standard_name", "latitude"), ("units", "degrees_north"), ("bounds", "vertices_latitude")],
    );
    put_2d(
        f,
        "longitude",
        ["j", "i"],
        &grid2(lon2),
        &[("standard_name", "longitude"), ("units", "degrees_east"), ("bounds", "vertices_longitude")],
    );
    for name in ["vertices_latitude", "vertices_longitude"] {
        let mut v = f.add_variable::<f64>(name, &["j", "i", "vertices"]).unwrap();
        v.put_values(&vec![0.0; NROW * NCOL * 4], ..).unwrap();
    }
}

/// `sstclim run` of days 102..=108 (2-day half window), mean and p90, in `layout`.
fn run(data: &Path, out: &Path, layout: &str, extra: &[&str]) {
    let args = with(run_args(data, out, "2001-2002", "102-108"), &["--half-window", "2", "--layout", layout]);
    let mut args = with(args, &["--percentile", "90"]);
    args.extend(extra.iter().map(|s| s.to_string()));
    ok(&args);
}

fn text(path: &Path, var: &str, attr: &str) -> Option<String> {
    let f = netcdf::open(path).unwrap();
    let v = f.variable(var)?;
    match v.attribute_value(attr)?.ok()? {
        netcdf::AttributeValue::Str(s) => Some(s),
        other => Some(format!("{other:?}")),
    }
}

fn var_names(path: &Path) -> Vec<String> {
    netcdf::open(path).unwrap().variables().map(|v| v.name()).collect()
}

fn nc_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = entries(dir).into_iter().filter(|n| n.ends_with(".nc")).map(|n| dir.join(n)).collect();
    v.sort();
    v
}

/// Every statistic of every output in `out` equals the regular job's in `reference` bit for
/// bit, and holds (time, `row`, `col`).
fn same_values(out: &Path, reference: &Path, row: &str, col: &str) {
    let (a, b) = (output_bits(out), output_bits(reference));
    assert_eq!(a.len(), b.len());
    assert!(a.iter().map(|(n, _)| n).eq(b.iter().map(|(n, _)| n)), "{a:?} vs {b:?}");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert_eq!(x, y, "{name}: values differ from the regular grid's");
        assert!(x.iter().any(|&v| f64::from_bits(v) > 10.0), "{name}: no real values");
    }
    for file in nc_files(out) {
        let (_, dims) = read_stat(&file, stat_of(&file));
        let names: Vec<&str> = dims.iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(names[1..], [row, col], "{}", file.display());
        assert_eq!((dims[1].1, dims[2].1), (NROW, NCOL));
    }
}

/// The statistic an output file holds (`mean` files hold the mean).
fn stat_of(file: &Path) -> &'static str {
    if s(file).contains("mean") {
        "mean"
    } else {
        "p90"
    }
}

#[test]
fn cmip6_curvilinear_j_i_equals_the_regular_grid() {
    let dir = tmp();
    let data = write_set(
        &dir.path().join("cmip6"),
        "tos",
        ["time", "j", "i"],
        &cmip6_header,
        &[("coordinates", "latitude longitude")],
        &field,
    );
    let reference = regular(&dir.path().join("regular"), "tos", &field);
    for layout in ["per-doy", "stacked"] {
        let (out, ref_out) = (dir.path().join(format!("out-{layout}")), dir.path().join(format!("ref-{layout}")));
        // the data variable is found among latitude, longitude and the vertices
        run(&data, &out, layout, &[]);
        run(&reference, &ref_out, layout, &[]);
        same_values(&out, &ref_out, "j", "i");
        for file in nc_files(&out) {
            let names = var_names(&file);
            assert!(!names.contains(&"lat".to_string()) && !names.contains(&"lon".to_string()), "{names:?}");
            assert!(!names.iter().any(|n| n.starts_with("vertices")), "bounds are not carried: {names:?}");
            let (lat, dims) = read(&file, "latitude");
            assert_eq!(lat, grid2(lat2));
            assert_eq!(dims, [("j".to_string(), NROW), ("i".to_string(), NCOL)]);
            assert_eq!(read(&file, "longitude").0, grid2(lon2));
            assert_eq!(text(&file, "latitude", "standard_name").as_deref(), Some("latitude"));
            assert_eq!(text(&file, "longitude", "units").as_deref(), Some("degrees_east"));
            assert_eq!(text(&file, "latitude", "bounds"), None);
            // the index variables keep the input's attributes, not latitude's
            assert_eq!(read(&file, "j").0, [0.0, 1.0, 2.0, 3.0, 4.0]);
            assert_eq!(text(&file, "j", "units").as_deref(), Some("1"));
            assert_eq!(text(&file, "j", "standard_name"), None);
            let stat = stat_var(&file, stat_of(&file));
            assert_eq!(text(&file, &stat, "coordinates").as_deref(), Some("doy latitude longitude"));
            assert_eq!(text(&file, &stat, "grid_mapping"), None);
        }
    }
    // the quicklook draws a curvilinear output on its index space
    let file = nc_files(&dir.path().join("out-stacked")).into_iter().find(|f| s(f).contains("p90")).unwrap();
    let png = dir.path().join("q.png");
    ok(&["quicklook", &s(&file), "--output", &s(&png)]);
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn cesm_nlat_nlon_and_nemo_y_x_equal_the_regular_grid() {
    let dir = tmp();
    let reference = regular(&dir.path().join("regular"), "SST", &field);
    let ref_out = dir.path().join("ref");
    run(&reference, &ref_out, "per-doy", &[]);
    // CESM POP: TLAT/TLONG (no standard_name, units only) named among others by coordinates;
    // ULAT/ULONG beside them are not
    let cesm = |f: &mut netcdf::FileMut| {
        put_2d(
            f,
            "TLAT",
            ["nlat", "nlon"],
            &grid2(lat2),
            &[("units", "degrees_north"), ("long_name", "array of t-grid latitudes")],
        );
        put_2d(
            f,
            "TLONG",
            ["nlat", "nlon"],
            &grid2(lon2),
            &[("units", "degrees_east"), ("long_name", "array of t-grid longitudes")],
        );
        put_2d(f, "ULAT", ["nlat", "nlon"], &grid2(|r, c| lat2(r, c) + 0.5), &[("units", "degrees_north")]);
        put_2d(f, "ULONG", ["nlat", "nlon"], &grid2(|r, c| lon2(r, c) + 0.5), &[("units", "degrees_east")]);
    };
    let data = write_set(
        &dir.path().join("cesm"),
        "SST",
        ["time", "nlat", "nlon"],
        &cesm,
        &[("coordinates", "TLONG TLAT time")],
        &field,
    );
    let out = dir.path().join("out-cesm");
    // the data variable is found beside TLAT, TLONG, ULAT, ULONG
    run(&data, &out, "per-doy", &[]);
    same_values(&out, &ref_out, "nlat", "nlon");
    for file in nc_files(&out) {
        assert_eq!(read(&file, "TLAT").0, grid2(lat2));
        assert_eq!(read(&file, "TLONG").0, grid2(lon2));
        assert!(!var_names(&file).contains(&"ULAT".to_string()));
        let stat = stat_var(&file, stat_of(&file));
        assert_eq!(text(&file, &stat, "coordinates").as_deref(), Some("doy TLAT TLONG"));
    }
    // NEMO/IPSL: (time_counter, y, x), nav_lat/nav_lon, no index variables
    let nemo = |f: &mut netcdf::FileMut| {
        put_2d(f, "nav_lat", ["y", "x"], &grid2(lat2), &[("standard_name", "latitude"), ("units", "degrees_north")]);
        put_2d(f, "nav_lon", ["y", "x"], &grid2(lon2), &[("standard_name", "longitude"), ("units", "degrees_east")]);
    };
    let data = write_set(
        &dir.path().join("nemo"),
        "SST",
        ["time_counter", "y", "x"],
        &nemo,
        &[("coordinates", "time_counter nav_lat nav_lon")],
        &field,
    );
    let out = dir.path().join("out-nemo");
    run(&data, &out, "per-doy", &[]);
    same_values(&out, &ref_out, "y", "x");
    for file in nc_files(&out) {
        let names = var_names(&file);
        assert!(!names.contains(&"x".to_string()) && !names.contains(&"y".to_string()), "{names:?}");
        assert_eq!(read(&file, "nav_lon").0, grid2(lon2));
    }
}

#[test]
fn rotated_pole_grid_mapping_is_carried() {
    let dir = tmp();
    let rlat: Vec<f64> = (0..NROW).map(|r| -4.0 + 0.44 * r as f64).collect();
    let rlon: Vec<f64> = (0..NCOL).map(|c| 10.0 + 0.44 * c as f64).collect();
    let header = |f: &mut netcdf::FileMut| {
        put_1d(f, "rlat", &rlat, &[("standard_name", "grid_latitude"), ("units", "degrees"), ("axis", "Y")]);
        put_1d(f, "rlon", &rlon, &[("standard_name", "grid_longitude"), ("units", "degrees"), ("axis", "X")]);
        put_2d(f, "lat", ["rlat", "rlon"], &grid2(lat2), &[("standard_name", "latitude"), ("units", "degrees_north")]);
        put_2d(f, "lon", ["rlat", "rlon"], &grid2(lon2), &[("standard_name", "longitude"), ("units", "degrees_east")]);
        let mut m = f.add_variable::<i8>("rotated_pole", &[]).unwrap();
        m.put_attribute("grid_mapping_name", "rotated_latitude_longitude").unwrap();
        m.put_attribute("grid_north_pole_latitude", 39.25).unwrap();
        m.put_attribute("grid_north_pole_longitude", -162.0).unwrap();
    };
    let data = write_set(
        &dir.path().join("cordex"),
        "tos",
        ["time", "rlat", "rlon"],
        &header,
        &[("coordinates", "lat lon"), ("grid_mapping", "rotated_pole")],
        &field,
    );
    let reference = regular(&dir.path().join("regular"), "tos", &field);
    let (out, ref_out) = (dir.path().join("out"), dir.path().join("ref"));
    run(&data, &out, "stacked", &[]);
    run(&reference, &ref_out, "stacked", &[]);
    same_values(&out, &ref_out, "rlat", "rlon");
    for file in nc_files(&out) {
        assert_eq!(read(&file, "rlat").0, rlat);
        assert_eq!(text(&file, "rlat", "standard_name").as_deref(), Some("grid_latitude"));
        assert_eq!(text(&file, "rlon", "units").as_deref(), Some("degrees"));
        assert_eq!(read(&file, "lat").1, [("rlat".to_string(), NROW), ("rlon".to_string(), NCOL)]);
        assert_eq!(read(&file, "lat").0, grid2(lat2));
        assert_eq!(text(&file, "rotated_pole", "grid_mapping_name").as_deref(), Some("rotated_latitude_longitude"));
        assert_eq!(text(&file, "rotated_pole", "grid_north_pole_latitude").as_deref(), Some("Double(39.25)"));
        let stat = stat_var(&file, stat_of(&file));
        assert_eq!(text(&file, &stat, "grid_mapping").as_deref(), Some("rotated_pole"));
        assert_eq!(text(&file, &stat, "coordinates").as_deref(), Some("doy lat lon"));
    }
}

#[test]
fn descending_latitude_is_kept_with_its_values() {
    // ERA5: (valid_time, latitude, longitude), latitude from 90 to -90
    let dir = tmp();
    let lats: Vec<f64> = (0..NROW).map(|r| 90.0 - 45.0 * r as f64).collect();
    let lons: Vec<f64> = (0..NCOL).map(|c| 60.0 * c as f64).collect();
    let header = |lat: Vec<f64>| {
        let lons = lons.clone();
        move |f: &mut netcdf::FileMut| {
            put_1d(f, "latitude", &lat, &[("standard_name", "latitude"), ("units", "degrees_north")]);
            put_1d(f, "longitude", &lons, &[("standard_name", "longitude"), ("units", "degrees_east")]);
        }
    };
    let desc = write_set(
        &dir.path().join("era5"),
        "sst",
        ["valid_time", "latitude", "longitude"],
        &header(lats.clone()),
        &[],
        &field,
    );
    // the same field stored south to north
    let flipped = |y: i32, d: i32| -> Vec<f32> {
        let f = field(y, d);
        (0..NROW).rev().flat_map(|r| f[r * NCOL..(r + 1) * NCOL].to_vec()).collect()
    };
    let asc_lats: Vec<f64> = lats.iter().rev().copied().collect();
    let asc = write_set(
        &dir.path().join("asc"),
        "sst",
        ["valid_time", "latitude", "longitude"],
        &header(asc_lats),
        &[],
        &flipped,
    );
    let (out, asc_out) = (dir.path().join("out"), dir.path().join("asc-out"));
    run(&desc, &out, "stacked", &[]);
    run(&asc, &asc_out, "stacked", &[]);
    for (a, b) in nc_files(&out).iter().zip(nc_files(&asc_out)) {
        assert_eq!(read(a, "latitude").0, lats, "{}: latitude as the input stores it", a.display());
        assert_eq!(read(a, "longitude").0, lons);
        let stat = stat_of(a);
        let (x, dims) = read_stat(a, stat);
        let (y, _) = read_stat(&b, stat);
        assert_eq!(dims[1..], [("latitude".to_string(), NROW), ("longitude".to_string(), NCOL)]);
        let plane = NROW * NCOL;
        let mut checked = 0;
        for t in 0..dims[0].1 {
            for r in 0..NROW {
                for c in 0..NCOL {
                    let (u, v) = (x[t * plane + r * NCOL + c], y[t * plane + (NROW - 1 - r) * NCOL + c]);
                    assert_eq!(u.to_bits(), v.to_bits(), "{}: day {t}, row {r}, column {c}", a.display());
                    checked += usize::from(u < 1e19);
                }
            }
        }
        assert!(checked > plane, "{}: too few values", a.display());
    }
}

#[test]
fn a_file_with_other_2d_coordinates_is_refused() {
    let dir = tmp();
    let data = write_set(
        &dir.path().join("cmip6"),
        "tos",
        ["time", "j", "i"],
        &cmip6_header,
        &[("coordinates", "latitude longitude")],
        &field,
    );
    // one file of the job whose longitudes differ
    let odd = data.join("tos_2002_105.nc");
    {
        let mut f = netcdf::append(&odd).unwrap();
        let mut v = f.variable_mut("longitude").unwrap();
        v.put_values(&[123.25], [2, 3]).unwrap();
    }
    let out = dir.path().join("out");
    let args = with(run_args(&data, &out, "2001-2002", "102-108"), &["--half-window", "2"]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("tos_2002_105.nc") && err.contains("longitude") && err.contains("differs"), "{err}");
    assert!(entries(&out).is_empty(), "{:?}", entries(&out));
}

#[test]
fn events_on_a_curvilinear_grid_carry_its_coordinates() {
    let dir = tmp();
    let leap = |y: i32| y % 4 == 0;
    let days: Vec<(i32, i32)> =
        (2003..=2005).flat_map(|y| (1..=if leap(y) { 366 } else { 365 }).map(move |d| (y, d))).collect();
    // a heatwave in 2005 in cells (1, 2) and (4, 3): 20 degrees above the usual for 10 days
    let values = |y: i32, d: i32| -> Vec<f32> {
        let mut f = field(y, d);
        if y == 2005 && (200..210).contains(&d) {
            f[NCOL + 2] += 20.0;
            f[4 * NCOL + 3] += 20.0;
        }
        f
    };
    let data = write_days(
        &dir.path().join("cmip6"),
        "tos",
        ["time", "j", "i"],
        &cmip6_header,
        &[("coordinates", "latitude longitude")],
        &values,
        &days,
    );
    let clim = dir.path().join("clim");
    let run =
        with(run_args(&data, &clim, "2003-2004", "1-366"), &["--layout", "climatology", "--calendar", "hobday366"]);
    ok(&run);
    let clim_file = clim.join("climatology.nc");
    assert_eq!(read(&clim_file, "latitude").0, grid2(lat2));
    assert_eq!(text(&clim_file, "tos_p90", "coordinates").as_deref(), Some("time latitude longitude"));
    let out = dir.path().join("events");
    let events = |out: &Path| -> Vec<String> {
        ["-q", "events", "-i", &s(&data), "-o", &s(out), "--years", "2005", "--climatology", &s(&clim_file)]
            .iter()
            .map(|x| x.to_string())
            .collect()
    };
    ok(&events(&out));
    // each event's latitude and longitude: the 2-D coordinates at its cell
    let ev = out.join("events.nc");
    let (rows, cols) = (read(&ev, "lat_index").0, read(&ev, "lon_index").0);
    let (lat, lon) = (read(&ev, "lat").0, read(&ev, "lon").0);
    assert!(!rows.is_empty());
    for k in 0..rows.len() {
        let (r, c) = (rows[k] as usize, cols[k] as usize);
        assert_eq!((lat[k], lon[k]), (lat2(r, c), lon2(r, c)), "event {k} at ({r}, {c})");
    }
    for cell in [(1.0, 2.0), (4.0, 3.0)] {
        assert!((0..rows.len()).any(|k| (rows[k], cols[k]) == cell), "no event at {cell:?}");
    }
    let summary = out.join("summary.nc");
    let (_, dims) = read(&summary, "count");
    assert_eq!(dims[1..], [("j".to_string(), NROW), ("i".to_string(), NCOL)]);
    assert_eq!(read(&summary, "longitude").0, grid2(lon2));
    assert_eq!(text(&summary, "count", "coordinates").as_deref(), Some("latitude longitude"));
    // a climatology of another grid is refused
    {
        let mut f = netcdf::append(&clim_file).unwrap();
        f.variable_mut("latitude").unwrap().put_values(&[-89.5], [3, 1]).unwrap();
    }
    let bad = dir.path().join("bad");
    let argv = events(&bad);
    let err = fails(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(err.contains("climatology.nc") && err.contains("latitude") && err.contains("-89.5"), "{err}");
    assert!(entries(&bad).is_empty());
}
