//! sstclim as a library: a Hobday climatology and the marine heatwaves and cold spells of an
//! array in memory, checked equal, bit for bit, to the command line on the same values written
//! to a NetCDF file.
//!
//! `cargo run --release --example library [WORK_DIR]` (the `sstclim` binary of the same build
//! runs the command-line half; `tests/it/library` runs [`check`] with the binary it tests).

use std::path::{Path, PathBuf};
use std::process::Command;

use sstclim::{grid_1d, memory_source, CfCalendar, Climatology, Compute, Date, Events};

const YEARS: (i32, i32) = (2001, 2010);
const NLAT: usize = 5;
const NLON: usize = 8;
const FILL: f32 = -999.0;

fn main() {
    let work = std::env::args().nth(1).map_or_else(|| std::env::temp_dir().join("sstclim-library"), PathBuf::from);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("a work directory");
    // the `sstclim` binary beside this example's directory
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(Path::parent).unwrap().join("sstclim");
    let (heatwaves, cold_spells, compared) = check(&work, &bin);
    println!("{heatwaves} heatwaves and {cold_spells} cold spells in memory and in {}", work.join("events").display());
    println!("library OK: {compared} values in memory equal the command line's files bit for bit");
}

/// The climatology and events of [`series`] in memory, then `sstclim` (`bin`) on the same
/// values in a file under `work`; panics at the first value that differs. Returns the
/// heatwaves, the cold spells and the number of values compared.
pub fn check(work: &Path, bin: &Path) -> (usize, usize, usize) {
    let (dates, values) = series();
    let (lat, lon) = coordinates();

    // the library: values in memory in, arrays in memory out
    let source = memory_source(
        "sst",
        values.clone(),
        dates.clone(),
        CfCalendar::Standard,
        grid_1d(lat.clone(), lon.clone()),
        Some(f64::from(FILL)),
        (1.0, 0.0),
        Some("degree_Celsius"),
    )
    .expect("a valid memory source");
    let clim = Climatology::hobday().baseline(YEARS.0..=YEARS.1).percentiles(&[10.0, 90.0]);
    let computed = clim.compute(&source, &Compute::cpu()).expect("the climatology");
    let events = Events::hobday().both().years(YEARS.0..=YEARS.1);
    let found = events.detect(&source, &computed, &Compute::cpu()).expect("the events");

    // the command line on the same values in a file
    let input = work.join("sst.nc");
    write_input(&input, &dates, &values, &lat, &lon);
    let years = format!("{}-{}", YEARS.0, YEARS.1);
    let clim_dir = work.join("climatology");
    sstclim(
        bin,
        &[
            "run",
            "--input",
            path(&input),
            "--output",
            path(&clim_dir),
            "--layout",
            "climatology",
            "--baseline",
            &years,
            "--calendar",
            "hobday366",
            "--window-edges",
            "extend",
            "--feb29",
            "interpolate",
            "--smooth",
            "31",
            "--method",
            "7",
            "--percentile",
            "10,90",
            "--backend",
            "cpu",
        ],
    );
    let events_dir = work.join("events");
    let clim_file = clim_dir.join("climatology.nc");
    sstclim(
        bin,
        &[
            "events",
            "--input",
            path(&input),
            "--output",
            path(&events_dir),
            "--climatology",
            path(&clim_file),
            "--both",
            "--years",
            &years,
        ],
    );

    // bit for bit
    let file = netcdf::open(&clim_file).expect("the climatology file");
    let mut compared = 0;
    for name in &computed.names {
        let in_file = read_f64(&file, &format!("sst_{name}"));
        let in_memory =
            &computed.values[computed.names.iter().position(|n| n == name).unwrap() * in_file.len()..][..in_file.len()];
        compared += same(&format!("climatology {name}"), in_memory, &in_file);
    }
    for (kind, suffix) in [(found.heat(), ""), (found.cold(), "_cold")] {
        let kind = kind.expect("both kinds detected");
        let file = netcdf::open(events_dir.join(format!("events{suffix}.nc"))).expect("events.nc");
        let lat_index = read_f64(&file, "lat_index");
        let lon_index = read_f64(&file, "lon_index");
        let cells: Vec<f64> = lat_index.iter().zip(&lon_index).map(|(a, b)| a * NLON as f64 + b).collect();
        let mine: Vec<f64> = kind.events.cell.iter().map(|&c| c as f64).collect();
        compared += same(&format!("events{suffix} cell"), &mine, &cells);
        for (k, name) in sstclim::EVENT_INT_FIELDS.iter().enumerate() {
            let mine: Vec<f64> = kind.events.ints[k].iter().map(|&v| f64::from(v)).collect();
            compared += same(&format!("events{suffix} {name}"), &mine, &read_f64(&file, name));
        }
        for (k, name) in sstclim::EVENT_FLOAT_FIELDS.iter().enumerate() {
            compared += same(&format!("events{suffix} {name}"), &kind.events.floats[k], &read_f64(&file, name));
        }
        let summary = netcdf::open(events_dir.join(format!("summary{suffix}.nc"))).expect("summary.nc");
        let per_stat = kind.summary.len() / sstclim::SUMMARY_STATS.len();
        for (k, name) in sstclim::SUMMARY_STATS.iter().enumerate() {
            let mine: Vec<f64> = kind.summary[k * per_stat..(k + 1) * per_stat].iter().map(|&v| f64::from(v)).collect();
            compared += same(&format!("summary{suffix} {name}"), &mine, &read_f64(&summary, name));
        }
    }
    let n = |cold: bool| found.kinds.iter().find(|k| k.cold == cold).map_or(0, |k| k.events.len());
    (n(false), n(true), compared)
}

/// Every day of [`YEARS`]: a seasonal cycle, a warming trend and a pseudo-random anomaly with
/// warm and cold spells, stored as float32 with a fill value; a cell with no value at all and
/// a few missing days.
fn series() -> (Vec<Date>, Vec<f32>) {
    let first = Date::new(YEARS.0, 1, 1).unwrap();
    let last = Date::new(YEARS.1, 12, 31).unwrap();
    let n = (last.to_days() - first.to_days() + 1) as usize;
    let dates: Vec<Date> = (0..n as i64).map(|i| first.add_days(i)).collect();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut anomaly = vec![0.0f64; NLAT * NLON];
    let mut values = Vec::with_capacity(n * NLAT * NLON);
    for (t, d) in dates.iter().enumerate() {
        let season = (2.0 * std::f64::consts::PI * f64::from(d.ordinal()) / 365.25).sin();
        for (c, a) in anomaly.iter_mut().enumerate() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            // a red-noise anomaly: persistent, so runs of warm and cold days form
            *a = 0.85 * *a + 0.9 * noise;
            let lat = (c / NLON) as f64;
            let v = 20.0 - 2.0 * lat + 4.0 * season + 0.0003 * t as f64 + *a;
            let missing = c == 7 || (c == 12 && t % 97 == 3);
            values.push(if missing { FILL } else { v as f32 });
        }
    }
    (dates, values)
}

fn coordinates() -> (Vec<f64>, Vec<f64>) {
    ((0..NLAT).map(|j| -10.0 + 2.5 * j as f64).collect(), (0..NLON).map(|i| 140.0 + 2.5 * i as f64).collect())
}

/// The values as a CF NetCDF-4 file `sst(time, lat, lon)` of every step.
fn write_input(path: &Path, dates: &[Date], values: &[f32], lat: &[f64], lon: &[f64]) {
    let mut f = netcdf::create(path).expect("creating the input");
    f.add_dimension("time", dates.len()).unwrap();
    f.add_dimension("lat", NLAT).unwrap();
    f.add_dimension("lon", NLON).unwrap();
    let first = dates[0].to_days();
    let days: Vec<f64> = dates.iter().map(|d| (d.to_days() - first) as f64).collect();
    let mut t = f.add_variable::<f64>("time", &["time"]).unwrap();
    t.put_attribute("units", format!("days since {}-01-01", YEARS.0)).unwrap();
    t.put_attribute("calendar", "standard").unwrap();
    t.put_values(&days, ..).unwrap();
    for (name, values, units) in [("lat", lat, "degrees_north"), ("lon", lon, "degrees_east")] {
        let mut v = f.add_variable::<f64>(name, &[name]).unwrap();
        v.put_attribute("units", units).unwrap();
        v.put_values(values, ..).unwrap();
    }
    let mut v = f.add_variable::<f32>("sst", &["time", "lat", "lon"]).unwrap();
    v.put_attribute("_FillValue", FILL).unwrap();
    v.put_attribute("units", "degree_Celsius").unwrap();
    v.put_values(values, ..).unwrap();
}

/// Run the `sstclim` binary `bin`.
fn sstclim(bin: &Path, args: &[&str]) {
    let status = Command::new(bin).args(args).arg("--quiet").output().expect("running sstclim").status;
    assert!(status.success(), "sstclim {} failed", args.join(" "));
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Variable `name` as float64, NaN where it holds its fill value.
fn read_f64(file: &netcdf::File, name: &str) -> Vec<f64> {
    let v = file.variable(name).unwrap_or_else(|| panic!("{name} in the file"));
    let fill = match v.attribute_value("_FillValue").and_then(|a| a.ok()) {
        Some(netcdf::AttributeValue::Double(x)) => Some(x),
        Some(netcdf::AttributeValue::Float(x)) => Some(f64::from(x)),
        _ => None,
    };
    let values: Vec<f64> = v.get_values(..).unwrap();
    values.into_iter().map(|x| if Some(x) == fill { f64::NAN } else { x }).collect()
}

/// Whether `a` and `b` are equal bit for bit (any NaN equals any NaN); panics naming the first
/// difference. Returns the number of values compared.
fn same(what: &str, a: &[f64], b: &[f64]) -> usize {
    assert_eq!(a.len(), b.len(), "{what}: {} values in memory, {} in the file", a.len(), b.len());
    let differs = |(x, y): (&f64, &f64)| !(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
    if let Some(i) = a.iter().zip(b).position(differs) {
        panic!("{what}[{i}]: {} in memory, {} in the file", a[i], b[i]);
    }
    a.len()
}
