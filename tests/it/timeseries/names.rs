//! Every file named by date is checked against its own time axis, not only a sample: a
//! mislabelled file in the middle of a hundred (none of the sixteen sampled through libnetcdf)
//! is refused with one line naming it and both dates, exit 2, no outputs; a correct dataset
//! with times at 12:00 (an offset of .5) runs. NetCDF-4 files with an unlimited time (one
//! unfiltered chunk) and classic files (a record variable) alike: both read by the header
//! parsers, whose reading is compared with libnetcdf's here.

use std::path::Path;

use crate::common::{self, fails, ok, s, tmp};
use sstclim::input::{header_facts, TimeRead};

const NLAT: usize = 3;
const NLON: usize = 4;
/// Days since 1990-01-01 of 1991-01-01.
const JAN1_1991: i64 = 365;

/// `sst_YYYYMMDD.nc`: `sst(time, lat, lon)` of one step, time `value` in days since 1990-01-01
/// (standard calendar).
fn daily(path: &Path, value: f64, classic: bool) {
    let mut f = if classic {
        netcdf::create_with(path, netcdf::Options::CLASSIC).unwrap()
    } else {
        netcdf::create(path).unwrap()
    };
    f.add_unlimited_dimension("time").unwrap();
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    // everything defined first, then the values (a classic file leaves define mode once)
    f.add_variable::<f64>("lat", &["lat"]).unwrap().put_attribute("units", "degrees_north").unwrap();
    f.add_variable::<f64>("lon", &["lon"]).unwrap().put_attribute("units", "degrees_east").unwrap();
    let mut t = f.add_variable::<f64>("time", &["time"]).unwrap();
    t.put_attribute("standard_name", "time").unwrap();
    t.put_attribute("units", "days since 1990-01-01 00:00:00").unwrap();
    t.put_attribute("calendar", "standard").unwrap();
    f.add_variable::<f32>("sst", &["time", "lat", "lon"]).unwrap().put_attribute("units", "degC").unwrap();
    if classic {
        f.enddef().unwrap();
    }
    f.variable_mut("lat").unwrap().put_values(&[-10.0, 0.0, 10.0], ..).unwrap();
    f.variable_mut("lon").unwrap().put_values(&[0.0, 10.0, 20.0, 30.0], ..).unwrap();
    f.variable_mut("time").unwrap().put_values(&[value], ..).unwrap();
    let field: Vec<f32> = (0..NLAT * NLON).map(|c| 10.0 + (value as f32) * 0.01 + c as f32 * 0.1).collect();
    f.variable_mut("sst").unwrap().put_values(&field, (0..1, .., ..)).unwrap();
}

/// 100 files of 1991-01-01 onwards, times at 12:00; the file of 1991-02-20 (the 51st: the
/// sample takes files 0, 6, 13, ..., 46, 52, ...) dated `wrong` days later on its axis.
fn dataset(dir: &Path, classic: bool, wrong: i64) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..100i64 {
        let date = sstclim::calendar::Date::from_days(sstclim::calendar::Date::new(1991, 1, 1).unwrap().to_days() + i);
        let name = format!("sst_{:04}{:02}{:02}.nc", date.year, date.month, date.day);
        let off = if i == 50 { wrong } else { 0 };
        daily(&dir.join(name), (JAN1_1991 + i + off) as f64 + 0.5, classic);
    }
}

fn run(data: &Path, out: &Path) -> Vec<String> {
    let v = ["-q", "run", "--input", &s(data), "--output", &s(out), "--baseline", "1991", "--doys", "6-95"];
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn the_header_parsers_read_the_time_coordinate_as_libnetcdf_does() {
    let dir = tmp();
    for classic in [false, true] {
        let p = dir.path().join(format!("one_{classic}.nc"));
        daily(&p, 400.5, classic);
        let facts = header_facts(&p, "sst", "time");
        assert_eq!(facts.var_values, Some((NLAT * NLON) as u64), "classic {classic}");
        let f = netcdf::open(&p).unwrap();
        let lib: Vec<f64> = f.variable("time").unwrap().get_values::<f64, _>(..).unwrap();
        assert_eq!(lib, vec![400.5]);
        match facts.time {
            TimeRead::Found { units, calendar, climatology, values } => {
                assert_eq!(units.as_deref(), Some("days since 1990-01-01 00:00:00"), "classic {classic}");
                assert_eq!(calendar.as_deref(), Some("standard"));
                assert!(!climatology);
                assert_eq!(values, lib);
            }
            other => panic!("classic {classic}: {other:?}"),
        }
        assert_eq!(header_facts(&p, "sst", "valid_time").time, TimeRead::Absent);
    }
}

#[test]
fn a_mislabelled_file_among_a_hundred_is_refused_and_noon_times_pass() {
    let dir = tmp();
    for classic in [false, true] {
        // right: times at 12:00 name their day
        let good = dir.path().join(format!("good_{classic}"));
        dataset(&good, classic, 0);
        let out = dir.path().join(format!("out_good_{classic}"));
        ok(&run(&good, &out));
        assert!(common::entries(&out).iter().any(|e| !e.starts_with('.')), "{:?}", common::entries(&out));
        // wrong: the 51st file's axis says a day later
        let bad = dir.path().join(format!("bad_{classic}"));
        dataset(&bad, classic, 1);
        let out = dir.path().join(format!("out_bad_{classic}"));
        let err = fails(&run(&bad, &out));
        assert!(
            err.contains("sst_19910220.nc: named for 1991-02-20 but its time axis says 1991-02-21"),
            "classic {classic}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(common::entries(&out).iter().all(|e| e.starts_with('.')), "{:?}", common::entries(&out));
        // a day earlier, 300 days later: the same
        for (k, wrong) in [(2, -1), (3, 300)] {
            let bad = dir.path().join(format!("bad{k}_{classic}"));
            dataset(&bad, classic, wrong);
            let err = fails(&run(&bad, &dir.path().join(format!("out{k}_{classic}"))));
            assert!(err.contains("sst_19910220.nc: named for 1991-02-20 but its time axis says"), "{err}");
        }
    }
}
