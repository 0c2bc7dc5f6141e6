//! Output types through the output API, on every write path (direct `pwrite`, compressed
//! chunks, libnetcdf): float32 outputs hold the nearest float32 of each value, int16 outputs
//! unpack (through libnetcdf's scale_factor/add_offset, read by the netcdf crate) to within
//! scale/2; a value int16 packing cannot hold, and `--units degC` on input that is not a
//! temperature, are errors that leave nothing behind.

use std::path::Path;

use crate::common;
use sstclim::input::Region;
use sstclim::output::{
    OutputError, OutputFormat, OutputLayout, OutputMeta, OutputSet, OutputSpec, OutputType, TargetUnits, WritePath,
};
use sstclim::stats::TileResult;

const NLAT: usize = 9;
const NLON: usize = 14;
const DOYS: [u16; 4] = [59, 60, 61, 62];

fn meta(units: &str) -> OutputMeta {
    let mut meta = common::output_meta(NLAT, NLON, &DOYS);
    meta.window.years = 2001..=2004;
    meta.window.calendar = sstclim::calendar::Calendar::Hobday366;
    meta.input_var = "analysed_sst".into();
    meta.var_meta.units = Some(units.into());
    meta.var_meta.standard_name = Some("sea_surface_temperature".into());
    meta
}

fn value(s: usize, t: usize, cell: usize) -> f64 {
    if (s + t + cell) % 7 == 0 {
        return f64::NAN;
    }
    271.0 + ((s * 31 + t * 17 + cell * 13) % 3000) as f64 * 0.0123456789
}

fn result(region: &Region) -> TileResult {
    let mut r = TileResult::new(2, DOYS.len(), region.n_cells());
    let mut k = 0;
    for s in 0..2 {
        for t in 0..DOYS.len() {
            for row in region.rows.clone() {
                for col in region.cols.clone() {
                    r.values[k] = value(s, t, row * NLON + col);
                    k += 1;
                }
            }
        }
    }
    r
}

fn spec(dir: &Path, path: WritePath, deflate: Option<u8>, format: OutputFormat) -> OutputSpec {
    sstclim::output::prepare_dir(dir).unwrap();
    OutputSpec {
        dir: dir.into(),
        layout: OutputLayout::Stacked,
        deflate,
        fill_value: -999.0,
        overwrite: false,
        write_path: path,
        write_threads: Some(2),
        format,
    }
}

fn write(spec: &OutputSpec, meta: &OutputMeta) -> Result<Vec<std::path::PathBuf>, OutputError> {
    let mut set = OutputSet::plan(spec, meta)?;
    set.create_files(spec, meta)?;
    set.mark_created();
    for rows in [0..4, 4..NLAT] {
        let region = Region { rows, cols: 0..NLON };
        set.write_targets(&region, 0..DOYS.len(), &result(&region))?;
    }
    set.finish()
}

/// Unpacked values (NaN where the fill value is) of `var` in `path`.
fn read(path: &Path, var: &str) -> Vec<f64> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap();
    let v = f.variable(var).unwrap_or_else(|| panic!("{}: no {var}", path.display()));
    let attr = |n: &str| match v.attribute(n).map(|a| a.value().unwrap()) {
        Some(netcdf::AttributeValue::Double(x)) => Some(x),
        Some(netcdf::AttributeValue::Float(x)) => Some(f64::from(x)),
        Some(netcdf::AttributeValue::Short(x)) => Some(f64::from(x)),
        _ => None,
    };
    let (scale, offset, fill) =
        (attr("scale_factor").unwrap_or(1.0), attr("add_offset").unwrap_or(0.0), attr("_FillValue"));
    let raw: Vec<f64> = v.get_values::<f64, _>(..).unwrap();
    raw.iter().map(|&x| if Some(x) == fill { f64::NAN } else { offset + scale * x }).collect()
}

#[test]
fn float32_and_int16_outputs_on_every_write_path() {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta("K");
    for (ty, scale) in [(OutputType::F32, 1.0), (OutputType::I16, 0.01)] {
        for (k, (path, deflate)) in
            [(WritePath::Auto, None), (WritePath::Auto, Some(3)), (WritePath::Library, None)].into_iter().enumerate()
        {
            let format =
                OutputFormat { ty, scale, offset: 280.0, units: Some(TargetUnits::DegC), ..OutputFormat::default() };
            let format =
                if ty == OutputType::F32 { OutputFormat { scale: 1.0, offset: 0.0, ..format } } else { format };
            let s = spec(&tmp.path().join(format!("{ty:?}-{k}")), path, deflate, format);
            let paths = write(&s, &meta).unwrap();
            for (st, p) in paths.iter().enumerate() {
                let name = ["analysed_sst_mean", "analysed_sst_p90"][st];
                let got = read(p, name);
                assert_eq!(got.len(), DOYS.len() * NLAT * NLON);
                for (i, g) in got.iter().enumerate() {
                    let want = value(st, i / (NLAT * NLON), i % (NLAT * NLON)) - 273.15;
                    match ty {
                        _ if want.is_nan() => assert!(g.is_nan(), "{}: cell {i}: {g} not missing", p.display()),
                        OutputType::F32 => assert_eq!(*g, f64::from(want as f32), "{}: cell {i}", p.display()),
                        _ => {
                            assert!((g - want).abs() <= scale / 2.0 + 1e-9, "{}: cell {i}: {g} vs {want}", p.display())
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_value_int16_cannot_hold_is_an_error_and_nothing_is_published() {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta("K");
    for (k, (path, deflate)) in
        [(WritePath::Auto, None), (WritePath::Auto, Some(1)), (WritePath::Library, None)].into_iter().enumerate()
    {
        // values 271-308 K: far outside 0 +- 32767 x 0.001
        let format = OutputFormat { ty: OutputType::I16, scale: 0.001, ..OutputFormat::default() };
        let s = spec(&tmp.path().join(format!("range-{k}")), path, deflate, format);
        let err = write(&s, &meta).unwrap_err();
        assert!(matches!(err, OutputError::OutOfRange { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains("analysed_sst_") && text.contains(".nc") && text.contains("--output-scale"), "{text}");
        assert_eq!(std::fs::read_dir(&s.dir).unwrap().count(), 0, "left behind after: {text}");
    }
}

#[test]
fn units_degc_needs_a_temperature() {
    let tmp = tempfile::tempdir().unwrap();
    let format = OutputFormat { units: Some(TargetUnits::DegC), ..OutputFormat::default() };
    let s = spec(&tmp.path().join("units"), WritePath::Auto, None, format);
    let err = OutputSet::plan(&s, &meta("m s-1")).unwrap_err();
    assert!(err.to_string().contains("'m s-1'") && err.to_string().contains("kelvin"), "{err}");
    assert_eq!(std::fs::read_dir(&s.dir).unwrap().count(), 0);
    // Celsius input is kept as it is
    let paths = write(&s, &meta("degree_Celsius")).unwrap();
    let got = read(&paths[0], "analysed_sst_mean");
    assert_eq!(got[1], value(0, 0, 1));
}
