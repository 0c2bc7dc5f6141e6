//! The direct write path (`pwrite` into located storage) against the libnetcdf path, through
//! the output API the pipeline uses: several tiles of cells (bands of rows and bands of
//! columns) and segments of target days, both layouts, NaN cells; files read back with the
//! netcdf crate must hold exactly the expected values and the same dimensions and attributes.

use std::path::{Path, PathBuf};

use crate::common;
use sstclim::input::{Coord, Grid, Region};
use sstclim::output::{OutputError, OutputFormat, OutputLayout, OutputMeta, OutputSet, OutputSpec, WritePath};
use sstclim::stats::TileResult;

const NLAT: usize = 7;
const NLON: usize = 12;
const DOYS: [u16; 5] = [100, 101, 102, 103, 104];

fn meta() -> OutputMeta {
    let mut meta = common::output_meta(NLAT, NLON, &DOYS);
    let coord =
        |dim: &str, n: usize, step: f64| Coord::new(dim, (0..n).map(|i| i as f64 * step - 10.0).collect(), true);
    meta.grid = Grid::regular(coord("lat", NLAT, 2.5), coord("lon", NLON, 1.5));
    meta.stats.percentiles.push("10".parse().unwrap());
    meta.var_meta.long_name = Some("sea surface temperature".into());
    meta.input_template = "in_{year}_{doy}.nc".into();
    meta
}

fn spec(dir: &Path, layout: OutputLayout, path: WritePath, threads: usize, fill: f64) -> OutputSpec {
    sstclim::output::prepare_dir(dir).unwrap();
    OutputSpec {
        dir: dir.into(),
        layout,
        deflate: None,
        fill_value: fill,
        overwrite: false,
        write_path: path,
        write_threads: Some(threads),
        format: OutputFormat::default(),
    }
}

/// The value of statistic `s`, target `t`, cell (`row`, `col`): about a quarter missing, with
/// negative zeros and values whose bits matter.
fn value(s: usize, t: usize, row: usize, col: usize) -> f64 {
    let k = (s * 1000 + t * 100 + row * NLON + col) as u64;
    match k.wrapping_mul(2_654_435_761) % 8 {
        0 | 1 => f64::NAN,
        2 => -0.0,
        _ => (k as f64).sqrt() * if k % 3 == 0 { -1.0 } else { 1.0 } + 1e-300,
    }
}

/// The results of `targets` over `region`.
fn result(n_stats: usize, targets: std::ops::Range<usize>, region: &Region) -> TileResult {
    let mut r = TileResult::new(n_stats, targets.len(), region.n_cells());
    let mut k = 0;
    for s in 0..n_stats {
        for t in targets.clone() {
            for row in region.rows.clone() {
                for col in region.cols.clone() {
                    r.values[k] = value(s, t, row, col);
                    k += 1;
                }
            }
        }
    }
    r
}

/// Bands of rows (whole-width: one run per target) or of columns (one run per row).
fn tiles(by_columns: bool) -> Vec<Region> {
    if by_columns {
        vec![Region { rows: 0..NLAT, cols: 0..5 }, Region { rows: 0..NLAT, cols: 5..NLON }]
    } else {
        vec![Region { rows: 0..3, cols: 0..NLON }, Region { rows: 3..NLAT, cols: 0..NLON }]
    }
}

/// Write every tile and segment of the job to `spec.dir`; returns the final paths and how many
/// files took the direct path.
fn write_all(spec: &OutputSpec, by_columns: bool) -> (Vec<PathBuf>, usize) {
    let meta = meta();
    let mut set = OutputSet::plan(spec, &meta).unwrap();
    set.create_files(spec, &meta).unwrap();
    set.mark_created();
    let direct = set.direct_files();
    let n_stats = meta.stats.n_stats();
    for region in tiles(by_columns) {
        for seg in [0..2, 2..3, 3..5] {
            set.write_targets(&region, seg.clone(), &result(n_stats, seg, &region)).unwrap();
        }
    }
    (set.finish().unwrap(), direct)
}

/// Everything libnetcdf reports about a file: dimensions, attributes (with their values) and
/// every variable's values as bits.
fn describe(path: &Path) -> String {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = String::new();
    for d in f.dimensions() {
        out += &format!("dim {} = {}\n", d.name(), d.len());
    }
    for a in f.attributes() {
        out += &format!("global {} = {:?}\n", a.name(), a.value().unwrap());
    }
    for v in f.variables() {
        let dims: Vec<String> = v.dimensions().iter().map(|d| d.name()).collect();
        out += &format!("var {}({})\n", v.name(), dims.join(","));
        for a in v.attributes() {
            out += &format!("  {} = {:?}\n", a.name(), a.value().unwrap());
        }
        let values: Vec<f64> = v.get_values(..).unwrap();
        out += &format!("  values {:x?}\n", values.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }
    out
}

/// The statistic `var`'s values in `path`, as bits.
fn stat_bits(path: &Path, var: &str) -> Vec<u64> {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap();
    let v = f.variable(var).unwrap();
    assert_eq!(v.attribute("_FillValue").map(|a| format!("{:?}", a.value().unwrap())), Some(fill_text(path)));
    v.get_values::<f64, _>(..).unwrap().iter().map(|x| x.to_bits()).collect()
}

/// The fill value the test wrote into the files under `path`'s directory (named after it).
fn fill_text(path: &Path) -> String {
    format!("Double({:?})", fill_of(path))
}

fn fill_of(path: &Path) -> f64 {
    if path.parent().unwrap().to_string_lossy().contains("nanfill") {
        f64::NAN
    } else {
        -999.0
    }
}

/// What a file must hold: statistic `s`, its targets, every cell, NaN as the fill value.
fn expected(s: usize, targets: std::ops::Range<usize>, fill: f64) -> Vec<u64> {
    let mut out = Vec::new();
    for t in targets {
        for row in 0..NLAT {
            for col in 0..NLON {
                let v = value(s, t, row, col);
                out.push(if v.is_nan() { fill } else { v }.to_bits());
            }
        }
    }
    out
}

fn check_layout(layout: OutputLayout, by_columns: bool, fill_name: &str, fill: f64) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(format!("{name}-{fill_name}"));
    let (lib, n_lib) = write_all(&spec(&dir("library"), layout, WritePath::Library, 1, fill), by_columns);
    let (one, n_one) = write_all(&spec(&dir("direct1"), layout, WritePath::Auto, 1, fill), by_columns);
    let (many, n_many) = write_all(&spec(&dir("direct3"), layout, WritePath::Auto, 3, fill), by_columns);
    let files = match layout {
        OutputLayout::PerDoy => 3 * DOYS.len(),
        OutputLayout::Stacked => 3,
        OutputLayout::Climatology => unreachable!("one file of every statistic: tests/it/run/hobday.rs"),
    };
    assert_eq!((lib.len(), one.len(), many.len()), (files, files, files));
    assert_eq!((n_lib, n_one, n_many), (0, files, files), "files written directly");
    let names = ["sst_mean", "sst_p90", "sst_p10"];
    for (i, ((a, b), c)) in lib.iter().zip(&one).zip(&many).enumerate() {
        assert_eq!(a.file_name(), b.file_name());
        let (want, text) = (describe(a), describe(b));
        assert_eq!(text, want, "{} direct (1 thread) vs library", b.display());
        assert_eq!(describe(c), want, "{} direct (3 threads) vs library", c.display());
        // and both hold the expected values (not just the same ones)
        let (s, targets) = match layout {
            OutputLayout::PerDoy => (i / DOYS.len(), i % DOYS.len()..i % DOYS.len() + 1),
            OutputLayout::Stacked => (i, 0..DOYS.len()),
            OutputLayout::Climatology => unreachable!(),
        };
        for path in [a, b, c] {
            assert_eq!(stat_bits(path, names[s]), expected(s, targets.clone(), fill), "{}", path.display());
        }
    }
    assert!(std::fs::read_dir(dir("direct3")).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with('.')));
}

#[test]
fn direct_equals_library_per_doy_row_tiles() {
    check_layout(OutputLayout::PerDoy, false, "fill", -999.0);
}

#[test]
fn direct_equals_library_per_doy_column_tiles_nan_fill() {
    check_layout(OutputLayout::PerDoy, true, "nanfill", f64::NAN);
}

#[test]
fn direct_equals_library_stacked_row_and_column_tiles() {
    check_layout(OutputLayout::Stacked, false, "fill", -999.0);
    check_layout(OutputLayout::Stacked, true, "nanfill", f64::NAN);
}

/// Compressed outputs: chunks deflated on the write threads and stored with HDF5's direct
/// chunk write read back (through libnetcdf, which inflates them) exactly as the values, with
/// or without shuffle, in both layouts and with tiles of rows or columns (chunks split between
/// tiles wait for their last part).
#[test]
fn compressed_outputs_are_written_in_chunks_directly() {
    let tmp = tempfile::tempdir().unwrap();
    for (k, (layout, by_columns, shuffle)) in [
        (OutputLayout::PerDoy, false, true),
        (OutputLayout::PerDoy, true, false),
        (OutputLayout::Stacked, false, true),
        (OutputLayout::Stacked, true, true),
    ]
    .into_iter()
    .enumerate()
    {
        let mut s = spec(&tmp.path().join(format!("deflate{k}")), layout, WritePath::Auto, 2, -999.0);
        s.deflate = Some(4);
        s.format.shuffle = shuffle;
        // bands of 3 rows and 5 columns: edge chunks past the field, chunks split by tiles
        let small = k == 3;
        if small {
            s.format.chunks = Some(sstclim::output::ChunkShape { nlon: 5, nlat: 3 });
        }
        let (paths, direct) = write_all(&s, by_columns);
        assert_eq!(direct, paths.len(), "every file's chunks written directly");
        sstclim::input::silence_hdf5();
        let f = netcdf::open(&paths[0]).unwrap();
        let chunk = if small { vec![1, 3, 5] } else { vec![1, NLAT, NLON] };
        assert_eq!(f.variable("sst_mean").unwrap().chunking().unwrap(), Some(chunk));
        let n = if layout == OutputLayout::PerDoy { DOYS.len() } else { 1 };
        for (i, p) in paths.iter().enumerate() {
            let (st, targets) = match layout {
                OutputLayout::PerDoy => (i / n, i % n..i % n + 1),
                OutputLayout::Stacked => (i, 0..DOYS.len()),
                OutputLayout::Climatology => unreachable!("one file of every statistic: tests/it/run/hobday.rs"),
            };
            let name = ["sst_mean", "sst_p90", "sst_p10"][st];
            assert_eq!(stat_bits(p, name), expected(st, targets, -999.0), "{}", p.display());
        }
    }
}

/// A file whose storage does not qualify (here: created by the library path, never
/// allocated) is written through libnetcdf beside the direct ones, with the same values.
#[test]
fn a_file_that_does_not_qualify_goes_through_the_library() {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta();
    let fill = -999.0;
    let auto = spec(&tmp.path().join("mixed"), OutputLayout::PerDoy, WritePath::Auto, 2, fill);
    let lib = spec(&tmp.path().join("lib"), OutputLayout::PerDoy, WritePath::Library, 1, fill);
    let mut set = OutputSet::plan(&auto, &meta).unwrap();
    set.create_files(&auto, &meta).unwrap();
    {
        let mut other = OutputSet::plan(&lib, &meta).unwrap();
        other.create_files(&lib, &meta).unwrap();
        let name = "p90_doy102.nc";
        std::fs::copy(other.staging().join(name), set.staging().join(name)).unwrap();
    }
    set.mark_created();
    assert_eq!(set.direct_files(), 3 * DOYS.len() - 1);
    for region in tiles(false) {
        set.write_targets(&region, 0..DOYS.len(), &result(3, 0..DOYS.len(), &region)).unwrap();
    }
    let paths = set.finish().unwrap();
    for (i, p) in paths.iter().enumerate() {
        let (s, t) = (i / DOYS.len(), i % DOYS.len());
        assert_eq!(stat_bits(p, ["sst_mean", "sst_p90", "sst_p10"][s]), expected(s, t..t + 1, fill), "{}", p.display());
    }
}

/// A failed direct write is an error naming the file, and leaves no finished-looking file.
#[test]
fn a_failed_direct_write_names_the_file_and_leaves_nothing_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let meta = meta();
    let s = spec(&tmp.path().join("fail"), OutputLayout::PerDoy, WritePath::Auto, 2, -999.0);
    let mut set = OutputSet::plan(&s, &meta).unwrap();
    set.create_files(&s, &meta).unwrap();
    set.mark_created();
    assert_eq!(set.direct_files(), 3 * DOYS.len());
    std::fs::remove_file(set.staging().join("p10_doy103.nc")).unwrap();
    let region = Region { rows: 0..NLAT, cols: 0..NLON };
    let err = set.write_targets(&region, 0..DOYS.len(), &result(3, 0..DOYS.len(), &region)).unwrap_err();
    assert!(
        matches!(&err, OutputError::DirectWrite { path, var, .. } if path.ends_with("p10_doy103.nc") && var == "sst_p10")
    );
    assert!(err.to_string().contains("p10_doy103.nc"), "{err}");
    drop(set);
    let left: Vec<String> =
        std::fs::read_dir(&s.dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
