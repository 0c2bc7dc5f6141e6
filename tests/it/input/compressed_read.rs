//! Chunked, compressed inputs read on the direct path bitwise equal to libnetcdf (the oracle):
//! the fixtures of `tests/fixtures/compressed/make_compressed_fixtures.py`, written by
//! netCDF4-python (version-1 B-tree index) and h5py in the HDF5 1.10 format (single chunk,
//! implicit, fixed array, extensible array, version-2 B-tree), with deflate 1 and 9, shuffle
//! on and off, fletcher32, chunks that do not divide the grid, one chunk per file, OISST's
//! (time, zlev, lat, lon), int16 with scale/offset/fill/valid range, float32 with NaN and
//! `_FillValue`, float64. Each is read whole and in bands (tiles) that cut through chunks.

use std::path::{Path, PathBuf};

use sstclim::input::direct::{self, ChunkBuffers, ChunkError, DirectLayout, Place};
use sstclim::input::h5meta::{ChunkIndex, Hdf5Meta, Layout};
use sstclim::input::{self, decode_region, read_region, Region, VarLayout};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compressed").join(name)
}

fn layout_of(path: &Path) -> VarLayout {
    let file = input::open(path).unwrap();
    VarLayout::inspect(&file, path, None, false).unwrap()
}

/// libnetcdf's values of `region`, decoded as the library path decodes them.
fn library(path: &Path, layout: &VarLayout, region: &Region) -> Vec<f64> {
    let file = input::open(path).unwrap();
    let raw = read_region(&file, path, layout, region).unwrap();
    let mut v = vec![0.0; region.n_cells()];
    decode_region(layout, region, &raw, &mut v);
    v
}

fn chunked_read(path: &Path, d: &DirectLayout, layout: &VarLayout, region: &Region) -> Result<Vec<f64>, ChunkError> {
    let (f, place) = direct::locate(path, d, layout, None).expect("located");
    let Place::Chunked(ch) = place else { panic!("{}: not chunked", path.display()) };
    let mut v = vec![0.0; region.n_cells()];
    let mut buf = ChunkBuffers::default();
    direct::read_chunked_into(&f, &ch, d.order, layout, region, &mut buf, &mut v)?;
    Ok(v)
}

fn same_bits(what: &str, a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{what}");
    if let Some(i) = (0..a.len()).find(|&i| a[i].to_bits() != b[i].to_bits()) {
        panic!("{what}: cell {i}: direct {} library {}", a[i], b[i]);
    }
}

/// The index kind of the fixture's variable, by name.
fn index_kind(path: &Path, var: &str) -> &'static str {
    let file = std::fs::File::open(path).unwrap();
    let meta = Hdf5Meta::open(&file).unwrap();
    match meta.dataset(var).unwrap().layout {
        Layout::Chunked(c) => match c.index {
            ChunkIndex::BTree1(_) => "btree1",
            ChunkIndex::Single { .. } => "single",
            ChunkIndex::Implicit(_) => "implicit",
            ChunkIndex::FixedArray(_) => "fixed array",
            ChunkIndex::ExtensibleArray(_) => "extensible array",
            ChunkIndex::BTree2(_) => "btree2",
        },
        other => panic!("{}: {}", path.display(), other.name()),
    }
}

#[test]
fn every_fixture_reads_bitwise_equal_to_libnetcdf() {
    let cases = [
        ("nc_i16_deflate1_c91x180.nc", "btree1"),
        ("nc_i16_deflate9_shuffle_c91x180.nc", "btree1"),
        ("nc_oisst_4d.nc", "btree1"),
        ("nc_i16_fletcher32_unlimited.nc", "btree1"),
        ("nc_f32_nan_fill_fletcher32.nc", "btree1"),
        ("nc_f64_one_chunk.nc", "btree1"),
        ("h5_fixed_array.nc", "fixed array"),
        ("h5_single_chunk.nc", "single"),
        ("h5_extensible_array.nc", "extensible array"),
        ("h5_btree2.nc", "btree2"),
        ("h5_implicit.nc", "implicit"),
    ];
    for (name, kind) in cases {
        let path = fixture(name);
        let layout = layout_of(&path);
        assert_eq!(index_kind(&path, &layout.name), kind, "{name}: the fixture's chunk index");
        // the parser finds the chunks libhdf5 lists (H5Dget_chunk_info), each field equal
        let mut parsed = {
            let file = std::fs::File::open(&path).unwrap();
            let meta = Hdf5Meta::open(&file).unwrap();
            meta.chunks(&meta.dataset(&layout.name).unwrap()).unwrap()
        };
        let mut listed = direct::hdf5_chunks(&path, &layout.name).unwrap();
        parsed.sort_by(|a, b| a.offset.cmp(&b.offset));
        listed.sort_by(|a, b| a.offset.cmp(&b.offset));
        assert!(!listed.is_empty(), "{name}");
        assert_eq!(parsed, listed, "{name}: chunks parsed vs libhdf5's");
        let d = direct::probe(&path, &layout).unwrap_or_else(|e| panic!("{name}: not direct: {e}"));
        assert!(d.chunked && d.parsed, "{name}: {d:?}");
        let (nlat, nlon) = (layout.nlat(), layout.nlon());
        let whole = Region { rows: 0..nlat, cols: 0..nlon };
        let want = library(&path, &layout, &whole);
        // not all missing: the fixture has values
        assert!(want.iter().filter(|v| v.is_finite()).count() > want.len() / 2, "{name}");
        same_bits(name, &chunked_read(&path, &d, &layout, &whole).unwrap(), &want);
        // tiles: bands of lines that start and end inside chunks
        for rows in [1..nlat - 1, 0..7, 7..nlat / 2 + 3, nlat / 2 + 3..nlat, nlat - 1..nlat] {
            let region = Region { rows: rows.clone(), cols: 0..nlon };
            let what = format!("{name} rows {rows:?}");
            same_bits(&what, &chunked_read(&path, &d, &layout, &region).unwrap(), &library(&path, &layout, &region));
        }
    }
}

#[test]
fn a_filter_not_decoded_here_goes_to_the_library_with_its_id() {
    let path = fixture("h5_lzf_unknown_filter.nc");
    let layout = layout_of(&path);
    let why = direct::probe(&path, &layout).unwrap_err();
    assert!(why.contains("filter 32000 (lzf)"), "{why}");
}

/// A copy of fixture `name` in `dir` with one byte of its first chunk's stored bytes flipped.
fn with_corrupt_chunk(dir: &Path, name: &str, var: &str, at: f64) -> (PathBuf, Vec<u64>) {
    let path = dir.join(name);
    std::fs::copy(fixture(name), &path).unwrap();
    let (addr, size, offset) = {
        let file = std::fs::File::open(&path).unwrap();
        let meta = Hdf5Meta::open(&file).unwrap();
        let ds = meta.dataset(var).unwrap();
        let c = meta.chunks(&ds).unwrap().into_iter().min_by_key(|c| c.offset.clone()).unwrap();
        (c.addr, c.size, c.offset)
    };
    let mut bytes = std::fs::read(&path).unwrap();
    let i = (addr + (size as f64 * at) as u64) as usize;
    bytes[i] ^= 0x5a;
    std::fs::write(&path, bytes).unwrap();
    (path, offset)
}

#[test]
fn a_corrupt_chunk_is_an_error_naming_the_chunk() {
    let dir = tempfile::tempdir().unwrap();
    for (name, at, problem) in [
        ("nc_i16_deflate9_shuffle_c91x180.nc", 0.5, "deflate"),
        // fletcher32 came first on writing (netCDF-C's order): the deflate stream breaks first
        ("nc_f32_nan_fill_fletcher32.nc", 0.5, "deflate"),
    ] {
        let layout = layout_of(&fixture(name));
        let d = direct::probe(&fixture(name), &layout).unwrap();
        let (path, offset) = with_corrupt_chunk(dir.path(), name, &layout.name, at);
        let whole = Region { rows: 0..layout.nlat(), cols: 0..layout.nlon() };
        match chunked_read(&path, &d, &layout, &whole) {
            Err(ChunkError::Corrupt(why)) => {
                assert!(why.contains(&format!("{offset:?}")) && why.contains(problem), "{name}: {why}")
            }
            other => panic!("{name}: {other:?}"),
        }
        // libnetcdf fails on it too (the direct path's verdict agrees with the oracle)
        let file = input::open(&path).unwrap();
        assert!(read_region(&file, &path, &layout, &whole).is_err(), "{name}: libnetcdf reads a corrupt chunk");
    }
}

#[test]
fn corrupt_chunk_indexes_never_panic() {
    // every fifth byte of each fixture's metadata and indexes flipped in turn (a few thousand
    // variants): the parser answers Ok or an error, never a panic or a read out of range
    for name in ["nc_i16_fletcher32_unlimited.nc", "h5_fixed_array.nc", "h5_extensible_array.nc", "h5_btree2.nc"] {
        let good = std::fs::read(fixture(name)).unwrap();
        let var = "sst";
        let file = std::fs::File::open(fixture(name)).unwrap();
        let meta = Hdf5Meta::open(&file).unwrap();
        let ds = meta.dataset(var).unwrap();
        let chunks = meta.chunks(&ds).unwrap();
        // the bytes before the first chunk: headers, B-tree nodes, array blocks
        let end = chunks.iter().map(|c| c.addr).min().unwrap() as usize;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in (0..end.min(good.len())).step_by(5) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut bytes = good.clone();
            bytes[i] ^= (state as u8) | 1;
            if let Ok(meta) = Hdf5Meta::from_bytes(&bytes) {
                if let Ok(ds) = meta.dataset(var) {
                    let _ = meta.chunks(&ds);
                }
            }
        }
    }
}
