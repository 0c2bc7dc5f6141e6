//! Text attributes stored as HDF5 strings of every kind, read as netCDF4-python reads them:
//! variable-length strings (netCDF-4's NC_STRING: what h5py, h5netcdf and
//! `xarray.to_netcdf(engine="h5netcdf")` write for every `str`), ASCII and UTF-8, one, several
//! or none; fixed-length strings null-terminated, null-padded and space-padded; compact and dense
//! attribute storage. `tests/fixtures/strings/make_string_fixtures.py` wrote the files and
//! `expected.json`, netCDF4-python's reading of every attribute of every variable. Each reader
//! must agree with it: libnetcdf through the netcdf crate (`AttrValue::from`, `attr_text`), the
//! HDF5 metadata parser (the direct path's, without libhdf5), libhdf5 itself (the direct path's
//! oracle) and discovery's time reader (`header_facts`). A damaged global heap is an error, never
//! a panic.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sstclim::input::direct::hdf5_attribute_values;
use sstclim::input::h5meta::Hdf5Meta;
use sstclim::input::{attr_text, header_facts, AttrValue, TimeRead};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/strings")
}

/// expected.json's files: path -> variable ("/" for the root group) -> attribute -> value.
fn oracle() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(dir().join("expected.json")).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    json["files"].as_object().unwrap().clone()
}

/// What netCDF4-python read, as the decoding rules take it: a `str` is text, a list of strings
/// is described by its list, numbers are numbers ("nan" for NaN).
fn expected(v: &Value) -> AttrValue {
    match v {
        Value::String(s) => AttrValue::Text(s.clone()),
        Value::Object(o) if o.contains_key("strings") => {
            let list: Vec<String> =
                o["strings"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().into()).collect();
            AttrValue::Other(format!("{list:?}"))
        }
        Value::Object(o) => AttrValue::Numbers(
            o["numbers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap_or_else(|| x.as_str().unwrap().parse().unwrap()))
                .collect(),
        ),
        other => panic!("unexpected oracle value {other}"),
    }
}

/// Equal values, NaN equal to NaN.
fn same(a: &AttrValue, b: &AttrValue) -> bool {
    match (a, b) {
        (AttrValue::Numbers(x), AttrValue::Numbers(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p == q || (p.is_nan() && q.is_nan()))
        }
        _ => a == b,
    }
}

/// Every (file, variable, attributes) of the oracle, variables of the root group only.
fn cases() -> Vec<(PathBuf, String, Vec<(String, AttrValue)>)> {
    let mut out = Vec::new();
    for (file, vars) in oracle() {
        for (var, attrs) in vars.as_object().unwrap() {
            let attrs = attrs.as_object().unwrap().iter().map(|(k, v)| (k.clone(), expected(v))).collect();
            out.push((dir().join(&file), var.clone(), attrs));
        }
    }
    assert!(out.len() > 40, "{} variables in the oracle", out.len());
    out
}

fn check(reader: &str, path: &Path, var: &str, want: &[(String, AttrValue)], got: &[(String, AttrValue)]) {
    for (name, value) in want {
        let found = got.iter().find(|(n, _)| n == name).map(|(_, v)| v);
        assert!(
            found.is_some_and(|f| same(f, value)),
            "{reader}: {}:{var}:{name} is {found:?}, netCDF4-python reads {value:?}",
            path.display()
        );
    }
}

#[test]
fn libnetcdf_reads_every_string_attribute_as_netcdf4_python() {
    let mut strings = 0;
    for (path, var, want) in cases() {
        let file = netcdf::open(&path).unwrap();
        let raw: Vec<(String, netcdf::AttributeValue)> = match var.as_str() {
            "/" => file.attributes().map(|a| (a.name().to_string(), a.value().unwrap())).collect(),
            v => file.variable(v).unwrap().attributes().map(|a| (a.name().to_string(), a.value().unwrap())).collect(),
        };
        let got: Vec<(String, AttrValue)> = raw.iter().map(|(n, v)| (n.clone(), AttrValue::from(v))).collect();
        check("libnetcdf", &path, &var, &want, &got);
        // the one function every reader asks for text
        for ((name, value), (_, raw)) in
            want.iter().zip(want.iter().map(|(n, _)| raw.iter().find(|(r, _)| r == n).unwrap()))
        {
            let text = match value {
                AttrValue::Text(s) => Some(s.clone()),
                _ => None,
            };
            strings += usize::from(matches!(raw, netcdf::AttributeValue::Strs(_)));
            assert_eq!(attr_text(raw), text, "{}:{var}:{name}", path.display());
        }
    }
    assert!(strings > 60, "only {strings} NC_STRING attributes");
}

#[test]
fn the_header_parser_reads_every_string_attribute_as_netcdf4_python() {
    for (path, var, want) in cases().into_iter().filter(|(_, v, _)| v != "/") {
        let names: Vec<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
        let file = File::open(&path).unwrap();
        let meta = Hdf5Meta::open(&file).unwrap();
        let (_, got) = meta.dataset_with_attributes(&var, &names).unwrap();
        check("h5meta", &path, &var, &want, &got);
        assert_eq!(got.len(), want.len(), "{}:{var}: {got:?}", path.display());
    }
}

#[test]
fn libhdf5_reads_every_string_attribute_as_netcdf4_python() {
    for (path, var, want) in cases().into_iter().filter(|(_, v, _)| v != "/") {
        let names: Vec<&str> = want.iter().map(|(n, _)| n.as_str()).collect();
        let got = hdf5_attribute_values(&path, &var, &names).unwrap();
        check("libhdf5", &path, &var, &want, &got);
    }
}

/// Discovery's time reader (files named by date) reads NC_STRING `units` and `calendar` itself,
/// as netCDF4-python reads them, instead of leaving the file to the library.
#[test]
fn discovery_reads_string_time_units_and_calendars_without_the_library() {
    let oracle = oracle();
    let mut read = 0;
    for (file, vars) in &oracle {
        let var = if file.starts_with("noleap") {
            "tos"
        } else if file.starts_with("units") {
            "sst"
        } else {
            continue;
        };
        let path = dir().join(file);
        let facts = header_facts(&path, var, "time");
        let TimeRead::Found { units, calendar, climatology: false, values } = facts.time else {
            panic!("{file}: {:?}", facts.time)
        };
        let want = |name: &str| vars["time"][name].as_str().map(String::from);
        assert_eq!((units, calendar), (want("units"), want("calendar")), "{file}");
        assert!(!values.is_empty());
        read += 1;
    }
    assert_eq!(read, 11);
}

/// Every byte of the first 192 of the global heap collection changed: the parser gives an error
/// or some text, never a panic; a changed signature is an error (`sst` has variable-length text
/// in each of these files, all in one collection).
#[test]
fn damaged_global_heaps_are_errors_never_panics() {
    let wanted = ["units", "long_name", "standard_name", "calendar", "flag_meanings", "comment", "coverage"];
    for name in ["attributes_h5py.nc", "attributes_h5py_dense.nc", "attributes_xarray.nc"] {
        let bytes = std::fs::read(dir().join(name)).unwrap();
        let heaps: Vec<usize> = bytes.windows(4).enumerate().filter(|(_, w)| w == b"GCOL").map(|(i, _)| i).collect();
        let [at] = heaps[..] else { panic!("{name}: global heaps at {heaps:?}") };
        for k in 0..192 {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at + k] ^= x;
                let meta = Hdf5Meta::from_bytes(&b).unwrap();
                let sst = meta.dataset_with_attributes("sst", &wanted);
                let _ = meta.dataset_with_attributes("time", &wanted);
                assert!(k >= 4 || sst.is_err(), "{name}: GCOL signature byte {k} changed: {sst:?}");
            }
        }
    }
}
