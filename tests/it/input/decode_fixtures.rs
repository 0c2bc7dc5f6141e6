//! Decoding against the official library: `tests/fixtures/make_fixtures.py` wrote each fixture
//! with netCDF4-python and recorded what that library reads back (auto mask and scale).
//! sstclim must give the same mask and the same values, through both of its read paths.

use std::path::Path;

use serde_json::Value;
use sstclim::input::direct::{self, ChunkBuffers, DirectBuffer, Place};
use sstclim::input::{self, decode_region, read_canonical, read_region, Region, VarLayout};

fn expected_value(v: &Value) -> f64 {
    match v {
        Value::Null => f64::NAN,
        Value::String(s) if s == "inf" || s == "-inf" => f64::NAN, // sstclim: non-finite is missing
        Value::Number(n) => n.as_f64().unwrap(),
        other => panic!("bad expected value {other}"),
    }
}

fn check(name: &str, got: &[f64], want: &[f64], float64: bool) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() || g.is_nan() {
            assert!(w.is_nan() && g.is_nan(), "{name}[{i}]: mask differs: got {g}, library {w}");
        } else if float64 {
            assert_eq!(g, w, "{name}[{i}]");
        } else {
            // the library returned float32; we decode in float64
            let tol = 2.0 * f64::from(f32::EPSILON) * w.abs().max(1.0);
            assert!((g - w).abs() <= tol, "{name}[{i}]: got {g}, library {w}");
        }
    }
}

#[test]
fn decoding_matches_netcdf4_python() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut checked = 0;
    let (mut direct_read, mut not_direct) = (Vec::new(), Vec::new());
    for (name, e) in expected.as_object().unwrap() {
        if name.starts_with('_') {
            continue;
        }
        let path = dir.join(name);
        let file = input::open(&path).unwrap();
        let layout = VarLayout::inspect(&file, &path, None, false).unwrap();
        assert_eq!(layout.name, e["var"].as_str().unwrap(), "{name}: detected variable");
        let want: Vec<f64> = e["values"].as_array().unwrap().iter().map(expected_value).collect();
        let float64 = e["float64"].as_bool().unwrap();
        check(name, &read_canonical(&file, &path, &layout).unwrap(), &want, float64);

        // the tile path: a sub-rectangle, read in file order and decoded into a pool row
        let (nlat, nlon) = (layout.nlat(), layout.nlon());
        let region = Region { rows: 1..nlat - 1, cols: 2..nlon };
        let raw = read_region(&file, &path, &layout, &region).unwrap();
        let mut dest = vec![0.0f64; region.n_cells()];
        decode_region(&layout, &region, &raw, &mut dest);
        let sub: Vec<f64> =
            region.rows.clone().flat_map(|r| region.cols.clone().map(move |c| r * nlon + c)).map(|i| want[i]).collect();
        check(&format!("{name} region"), &dest, &sub, float64);

        // the direct path, where the variable is contiguous: a band of whole lines along the
        // slow dimension, read with pread and decoded without the library
        match direct::probe(&path, &layout) {
            Ok(d) => {
                let region = if layout.lat_is_slow() {
                    Region { rows: 1..nlat, cols: 0..nlon }
                } else {
                    Region { rows: 0..nlat, cols: 1..nlon }
                };
                // located by parsing the header, as libhdf5 locates it (the probe compares them)
                assert!(d.parsed, "{name}: the metadata parser disagrees with libhdf5");
                let (f, place) = direct::locate(&path, &d, &layout, None).expect("the probed file qualifies");
                let mut dest = vec![0.0f64; region.n_cells()];
                match place {
                    Place::Contiguous(offset) => {
                        assert!(!d.chunked);
                        assert_eq!(offset, d.offset);
                        let n = direct::read_into(
                            &f,
                            offset,
                            d.order,
                            &layout,
                            &region,
                            &mut DirectBuffer::new(),
                            &mut dest,
                        )
                        .unwrap();
                        assert_eq!(n as usize, region.n_cells() * layout.storage.size());
                    }
                    Place::Chunked(ch) => {
                        assert!(d.chunked, "{name}");
                        let mut buf = ChunkBuffers::default();
                        let n =
                            direct::read_chunked_into(&f, &ch, d.order, &layout, &region, &mut buf, &mut dest).unwrap();
                        // the band's chunks, inflated to whole chunks (tiny ones may store more)
                        let band = (region.n_cells() * layout.storage.size()) as u64;
                        assert!(
                            n > 0 && buf.inflated() >= band,
                            "{name}: {n} bytes stored, {} inflated",
                            buf.inflated()
                        );
                    }
                }
                let sub: Vec<f64> = region
                    .rows
                    .clone()
                    .flat_map(|r| region.cols.clone().map(move |c| r * nlon + c))
                    .map(|i| want[i])
                    .collect();
                check(&format!("{name} direct"), &dest, &sub, float64);
                direct_read.push((name.clone(), d.format));
            }
            Err(why) => not_direct.push((name.clone(), why)),
        }
        checked += 1;
    }
    assert_eq!(checked, 8);
    // every fixture takes the direct path: NetCDF-3, contiguous HDF5 and chunked, deflated
    // HDF5 (its chunks decoded here)
    assert!(not_direct.is_empty(), "{not_direct:?}");
    assert!(
        direct_read.iter().any(|(n, f)| n.starts_with("chunked_deflate") && *f == input::format::Format::Hdf5),
        "{direct_read:?}"
    );
    assert!(
        direct_read.iter().any(|(n, f)| n.starts_with("nc3_") && *f == input::format::Format::NetCdf3),
        "{direct_read:?}"
    );
    assert!(
        direct_read.iter().filter(|(_, f)| *f == input::format::Format::Hdf5).count() >= 5,
        "{direct_read:?} {not_direct:?}"
    );
}

#[test]
fn infinities_and_negative_zero_are_normalised() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/f64_latlon_nan.nc");
    let file = input::open(&path).unwrap();
    let layout = VarLayout::inspect(&file, &path, None, false).unwrap();
    let values = read_canonical(&file, &path, &layout).unwrap();
    let nlon = layout.nlon();
    assert!(values[nlon + 2].is_nan(), "inf is missing");
    assert_eq!(values[2 * nlon + 3].to_bits(), 0.0f64.to_bits(), "-0.0 decodes to +0.0");
}
