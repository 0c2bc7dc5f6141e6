//! The HDF5 metadata parser (`sstclim::input::h5meta`) against the official library: for every
//! dataset of files written by `sstclim generate`, by libnetcdf (through the netcdf crate) and
//! by libhdf5 directly (oldest and newest formats), the parser must find what libhdf5 reports:
//! layout class, filters, type class, size and byte order, dimensions, storage size and data
//! offset, and for one-dimensional datasets the values `H5Dread` converts to double. Truncated
//! and corrupted files must give errors, never panics. A run locating files with the parser must
//! equal, bit for bit, a run locating them through libhdf5.

use std::ffi::CString;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::common::h5meta_fixtures::{hdf5_fixture, netcdf_fixture, HDF5_DATASETS};
use crate::common::*;
use hdf5_metno_sys::{h5, h5d, h5f, h5p, h5s, h5t};
use serde_json::Value;
use sstclim::input::direct::{self, hdf5_storage};
use sstclim::input::h5meta::{Hdf5Meta, Layout, LinkStorage, MetaError, Structure, TypeClass};
use sstclim::input::{self, VarLayout};

/// One dataset's values as `H5Dread` to `H5T_NATIVE_DOUBLE` gives them.
fn library_values(path: &Path, name: &str) -> Option<Vec<f64>> {
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let cname = CString::new(format!("/{name}")).unwrap();
    input::silence_hdf5();
    let _lock = hdf5_metno_sys::LOCK.lock();
    // SAFETY: HDF5 calls on handles opened and closed here, under the library lock; the buffer
    // holds every value of the dataset.
    unsafe {
        h5::H5open();
        let f = h5f::H5Fopen(cpath.as_ptr(), h5f::H5F_ACC_RDONLY, h5p::H5P_DEFAULT);
        assert!(f >= 0, "libhdf5 cannot open {}", path.display());
        let d = h5d::H5Dopen2(f, cname.as_ptr(), h5p::H5P_DEFAULT);
        assert!(d >= 0);
        let space = h5d::H5Dget_space(d);
        let n = h5s::H5Sget_simple_extent_npoints(space) as usize;
        h5s::H5Sclose(space);
        let mut values = vec![0f64; n];
        let read = h5d::H5Dread(
            d,
            *h5t::H5T_NATIVE_DOUBLE,
            h5s::H5S_ALL,
            h5s::H5S_ALL,
            h5p::H5P_DEFAULT,
            values.as_mut_ptr().cast(),
        );
        h5d::H5Dclose(d);
        h5f::H5Fclose(f);
        (read >= 0).then_some(values)
    }
}

/// The parser and libhdf5 must agree on every dataset `names` of `path`; returns the file's
/// structure and how many datasets had their values compared.
fn agree(path: &Path, names: &[&str]) -> (Structure, usize) {
    let file = File::open(path).unwrap();
    let meta = Hdf5Meta::open(&file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut compared = 0;
    for &name in names {
        let what = format!("{} /{name}", path.display());
        let lib = hdf5_storage(path, name).unwrap().unwrap_or_else(|| panic!("{what}: libhdf5 finds no dataset"));
        let ds = meta.dataset(name).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(ds.layout.name(), format!("{:?}", lib.layout), "{what}: layout class");
        assert_eq!(ds.filters as i32, lib.filters, "{what}: filters");
        let class = match ds.dtype.class {
            TypeClass::Integer { .. } => h5t::H5T_class_t::H5T_INTEGER,
            TypeClass::Float => h5t::H5T_class_t::H5T_FLOAT,
            TypeClass::Other(c) => panic!("{what}: class {c}"),
        };
        assert_eq!(class, lib.class, "{what}: type class");
        assert_eq!(ds.dtype.size, lib.type_size, "{what}: type size");
        let order = match lib.order {
            h5t::H5T_order_t::H5T_ORDER_LE => Some(input::format::ByteOrder::Little),
            h5t::H5T_order_t::H5T_ORDER_BE => Some(input::format::ByteOrder::Big),
            _ => None,
        };
        assert_eq!(ds.dtype.order, order, "{what}: byte order");
        assert_eq!(ds.dims, lib.dims, "{what}: dimensions");
        let lib_offset = (lib.offset != h5::HADDR_UNDEF).then_some(lib.offset);
        assert_eq!(ds.offset(), lib_offset, "{what}: data offset");
        if matches!(ds.layout, Layout::Contiguous { .. } | Layout::Compact(_)) {
            assert_eq!(ds.storage_size(), Some(lib.stored), "{what}: storage size");
        }
        let allocated = ds.storage_size().is_some_and(|n| n > 0);
        if ds.dims.len() == 1 && allocated {
            let want = library_values(path, name).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            match meta.values_f64(&ds) {
                Ok(got) => {
                    assert_eq!(bits(&got), bits(&want), "{what}: values");
                    compared += 1;
                }
                // libhdf5 converts float32 of the other byte order in software, NaN to every
                // mantissa bit set: the parser leaves those to the library
                Err(MetaError::Unsupported(why)) if why.contains("NaN") => {
                    let all_ones = |x: &f64| x.to_bits() & !(1 << 63) == 0x7fff_ffff_ffff_ffff;
                    assert!(want.iter().any(all_ones), "{what}: {:x?}", bits(&want));
                }
                Err(e) => panic!("{what}: {e}"),
            }
        }
    }
    assert!(matches!(meta.dataset("no_such_variable"), Err(MetaError::NotFound(_))));
    (meta.structure().unwrap(), compared)
}

/// The datasets of a file, by libhdf5 (`H5Literate` would do; the tests know their names).
fn names_of(path: &Path) -> Vec<String> {
    let f = input::open(path).unwrap();
    f.variables().map(|v| v.name()).collect()
}

fn agree_all(path: &Path) -> (Structure, usize) {
    let names = names_of(path);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    agree(path, &refs)
}

#[test]
fn generated_files_parse_as_libhdf5_reads_them() {
    let dir = tmp();
    let mut structures = Vec::new();
    for (name, flags) in [
        ("f64", &["--storage", "f64"][..]),
        ("i16-time-lonlat", &["--storage", "i16", "--time-dim", "--dim-order", "lon-lat"][..]),
    ] {
        let data = dir.path().join(name);
        generate(&data, &[&["--grid", "13x7", "--years", "2001-2001", "--doys", "1-2"][..], flags].concat());
        for f in entries(&data).into_iter().filter(|n| n.ends_with(".nc")) {
            let (s, compared) = agree_all(&data.join(f));
            assert!(compared >= 2, "lat and lon values compared");
            structures.push(s);
        }
    }
    // libnetcdf writes superblock 2 and v2 object headers (HDF5 >= 1.10.2: libver bounds V18)
    assert!(structures.iter().all(|s| s.superblock >= 2 && s.root_header == 2), "{structures:?}");
    assert!(structures.iter().all(|s| s.links == LinkStorage::Compact), "{structures:?}");
}

/// Files written by HDF5 2.2 (netCDF4-python, `tests/fixtures/make_h5meta_fixtures.py`): the
/// library version the `netcdf-static` build links, so the structures the GPU node's files use.
#[test]
fn files_written_by_hdf5_2_parse_as_libhdf5_reads_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (name, var, links) in [
        ("h5meta_hdf5-2.2.0_generated.nc", "sst", LinkStorage::Compact),
        ("h5meta_hdf5-2.2.0_ostia.nc", "analysed_sst", LinkStorage::Dense { root_rows: 0, depth: 0 }),
    ] {
        let path = dir.join(name);
        let file = input::open(&path).unwrap();
        let props = match file.attribute("_NCProperties").unwrap().value().unwrap() {
            netcdf::AttributeValue::Str(s) => s,
            other => panic!("{other:?}"),
        };
        assert!(props.contains("hdf5=2.2.0"), "{name}: {props}");
        let layout = VarLayout::inspect(&file, &path, Some(var), false).unwrap();
        drop(file);
        let (s, compared) = agree_all(&path);
        assert_eq!((s.superblock, s.root_header, s.links), (2, 2, links), "{name}");
        assert!(compared >= 2, "{name}");
        let d = direct::probe(&path, &layout).unwrap();
        assert!(d.parsed, "{name}: located without the library");
        assert_eq!(d.offset, hdf5_storage(&path, var).unwrap().unwrap().offset, "{name}");
    }
}

#[test]
fn netcdf_files_parse_as_libhdf5_reads_them() {
    let dir = tmp();
    let mut structures = Vec::new();
    for (name, options, extra) in [
        ("few.nc", netcdf::Options::NETCDF4, 0),
        ("many.nc", netcdf::Options::NETCDF4, 12),
        ("very-many.nc", netcdf::Options::NETCDF4, 150),
        ("classic-model.nc", netcdf::Options::NETCDF4 | netcdf::Options::CLASSIC, 3),
        ("no-creation-order.nc", netcdf::Options::NETCDF4 | netcdf::Options::NOATTCREORD, 10),
    ] {
        let path = dir.path().join(name);
        netcdf_fixture(&path, options, extra);
        let (s, compared) = agree_all(&path);
        assert!(compared >= 4, "{name}: 1-D values compared: {compared}");
        structures.push((name, s));
    }
    let links: Vec<_> = structures.iter().map(|(n, s)| (*n, s.links)).collect();
    // past 8 links (all of these: 14 variables and more) the root group keeps them in dense
    // storage (generated files, of 3 or 4 variables, keep them in its header); the heap outgrows
    // its first direct block, and 160 links need internal name index nodes
    assert_eq!(links[0].1, LinkStorage::Dense { root_rows: 0, depth: 0 }, "{links:?}");
    assert!(matches!(links[1].1, LinkStorage::Dense { root_rows, .. } if root_rows > 0), "{links:?}");
    assert!(matches!(links[2].1, LinkStorage::Dense { root_rows, depth } if root_rows > 0 && depth > 0), "{links:?}");
    assert!(structures.iter().all(|(_, s)| s.superblock >= 2 && s.root_header == 2), "{structures:?}");
}
#[test]
fn hdf5_files_of_the_oldest_and_newest_formats_parse_as_libhdf5_reads_them() {
    let dir = tmp();
    let mut seen = Vec::new();
    for (latest, few, links) in
        [(false, false, 0), (false, false, 400), (true, true, 0), (true, false, 0), (true, false, 2500)]
    {
        let path = dir.path().join(format!("latest-{latest}-{few}-{links}.h5"));
        hdf5_fixture(&path, latest, few, links);
        let names = if few { &HDF5_DATASETS[..4] } else { &HDF5_DATASETS[..] };
        let (s, compared) = agree(&path, names);
        assert_eq!(compared, if few { 3 } else { 5 }, "x, y, compact (i64, u8) values");
        // the extra names lead to the same dataset
        let file = File::open(&path).unwrap();
        let meta = Hdf5Meta::open(&file).unwrap();
        let x = meta.dataset("x").unwrap();
        for i in [0, links / 2, links.saturating_sub(1)].into_iter().filter(|_| links > 0) {
            let name = format!("{}{i:05}", "another_name_for_x_".repeat(8));
            assert_eq!(meta.dataset(&name).unwrap(), x, "{name}");
        }
        seen.push(s);
    }
    let s = seen;
    let (mut major, mut minor, mut release) = (0, 0, 0);
    // SAFETY: plain query into three out-parameters.
    unsafe { h5::H5get_libversion(&mut major, &mut minor, &mut release) };
    if s[0].superblock != 0 && major >= 2 {
        // checked against libhdf5 above all the same; the structures below need a library that
        // still writes superblock 0 (Debian's 1.10 in CI does)
        eprintln!("NOTE: HDF5 {major}.{minor}.{release} wrote superblock {} for the oldest format", s[0].superblock);
    } else {
        assert_eq!((s[0].superblock, s[0].root_header, s[0].links), (0, 1, LinkStorage::SymbolTable { levels: 0 }));
        // 409 links in symbol nodes of at most 8: a B-tree of two levels at least
        assert!(matches!(s[1].links, LinkStorage::SymbolTable { levels } if levels >= 1), "{s:?}");
    }
    assert_eq!((s[2].superblock, s[2].root_header, s[2].links), (3, 2, LinkStorage::Compact));
    // more than 8 links: dense storage
    assert_eq!(s[3].links, LinkStorage::Dense { root_rows: 0, depth: 0 });
    // 2500 links of ~170 bytes: a name index of internal nodes, and a heap beyond the root
    // indirect block's direct rows (rows 0 to 8 of 512-byte to 64-KiB blocks)
    assert!(matches!(s[4].links, LinkStorage::Dense { root_rows, depth } if root_rows > 9 && depth >= 1), "{s:?}");
}

/// The probe of the job's first file checks the parser against libhdf5 and decides how every
/// file is located.
#[test]
fn the_first_file_is_checked_both_ways() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "13x7", "--years", "2001-2001", "--doys", "1-3"]);
    let path = data.join("sst_2001_001.nc");
    let file = input::open(&path).unwrap();
    let layout = VarLayout::inspect(&file, &path, None, false).unwrap();
    drop(file);
    let d = direct::probe(&path, &layout).unwrap();
    assert!(d.parsed, "generated files are parsed");
    let lib = hdf5_storage(&path, "sst").unwrap().unwrap();
    assert_eq!(d.offset, lib.offset);
    for p in entries(&data).into_iter().filter(|n| n.ends_with(".nc")).map(|n| data.join(n)) {
        let grid = {
            let f = input::open(&p).unwrap();
            input::Grid::read(&f, &p, &layout).unwrap()
        };
        let via = |v| direct::locate_via(&p, &d, &layout, Some(&grid), v).map(|(_, o)| o);
        let library = via(direct::Via::Library).unwrap();
        assert_eq!(via(direct::Via::ParserOnly), Ok(library.clone()));
        assert_eq!(via(direct::Via::Parser), Ok(library));
        // a grid that differs in one coordinate's last bit is refused both ways
        let mut other = grid.clone();
        other.lon.values[3] = f64::from_bits(other.lon.values[3].to_bits() ^ 1);
        let refused = |v| direct::locate_via(&p, &d, &layout, Some(&other), v).map(|(_, o)| o);
        assert!(refused(direct::Via::Library).unwrap_err().contains("coordinate lon differs"));
        assert!(refused(direct::Via::ParserOnly).unwrap_err().contains("coordinate lon differs"));
    }
}

/// A file the parser does not read (a shared datatype) is located through libhdf5.
#[test]
fn unsupported_structures_fall_back_to_the_library() {
    let dir = tmp();
    let path = dir.path().join("committed-type.h5");
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    input::silence_hdf5();
    {
        let _lock = hdf5_metno_sys::LOCK.lock();
        // SAFETY: HDF5 calls under the library lock on handles made and closed here; the
        // buffer holds the dataspace's values.
        unsafe {
            h5::H5open();
            let f = h5f::H5Fcreate(cpath.as_ptr(), h5f::H5F_ACC_TRUNC, h5p::H5P_DEFAULT, h5p::H5P_DEFAULT);
            let t = h5t::H5Tcopy(*h5t::H5T_IEEE_F64LE);
            let tname = CString::new("real").unwrap();
            assert!(h5t::H5Tcommit2(f, tname.as_ptr(), t, h5p::H5P_DEFAULT, h5p::H5P_DEFAULT, h5p::H5P_DEFAULT) >= 0);
            let space = h5s::H5Screate_simple(2, [3u64, 4].as_ptr(), std::ptr::null());
            let name = CString::new("v").unwrap();
            let d = h5d::H5Dcreate2(f, name.as_ptr(), t, space, h5p::H5P_DEFAULT, h5p::H5P_DEFAULT, h5p::H5P_DEFAULT);
            let values: Vec<f64> = (0..12).map(f64::from).collect();
            h5d::H5Dwrite(
                d,
                *h5t::H5T_NATIVE_DOUBLE,
                h5s::H5S_ALL,
                h5s::H5S_ALL,
                h5p::H5P_DEFAULT,
                values.as_ptr().cast(),
            );
            h5d::H5Dclose(d);
            h5s::H5Sclose(space);
            h5t::H5Tclose(t);
            h5f::H5Fclose(f);
        }
    }
    let file = File::open(&path).unwrap();
    let meta = Hdf5Meta::open(&file).unwrap();
    assert!(matches!(meta.dataset("v"), Err(MetaError::Unsupported(why)) if why.contains("shared")));
    let layout = VarLayout {
        name: "v".into(),
        storage: input::Storage::F64,
        dims: vec![("y".into(), 3), ("x".into(), 4)],
        lat_axis: 0,
        lon_axis: 1,
        time_axis: None,
        packing: input::Packing {
            scale: 1.0,
            offset: 0.0,
            // as libnetcdf inspects it: no _FillValue attribute, the type's default fill (the
            // direct path checks each file's own packing against this)
            fill: Some(input::Storage::F64.default_fill()),
            missing: Vec::new(),
            valid_min: None,
            valid_max: None,
            quantize: None,
        },
        meta: Default::default(),
    };
    let d = direct::probe(&path, &layout).unwrap();
    assert!(!d.parsed, "the probe leaves unsupported files to libhdf5");
    let lib = hdf5_storage(&path, "v").unwrap().unwrap();
    assert_eq!(d.offset, lib.offset);
    let via = |v| direct::locate_via(&path, &d, &layout, None, v).map(|(_, o)| o);
    assert_eq!(
        via(direct::Via::Parser),
        Ok(direct::Place::Contiguous(lib.offset)),
        "the parser falls back to the library"
    );
    assert!(via(direct::Via::ParserOnly).unwrap_err().contains("shared"));
}

/// Every truncation and many corruptions of real files give errors (or, where a changed byte
/// is not one the parser reads, the same answer), never a panic or a read out of range.
#[test]
fn truncated_and_corrupted_files_give_errors() {
    let dir = tmp();
    let v2 = dir.path().join("netcdf.nc");
    netcdf_fixture(&v2, netcdf::Options::NETCDF4, 12);
    let v0 = dir.path().join("old.h5");
    hdf5_fixture(&v0, false, false, 20);
    let v3 = dir.path().join("new.h5");
    hdf5_fixture(&v3, true, false, 40);
    for (path, names) in
        [(&v2, &["sst", "lat", "analysed_sst"][..]), (&v0, &["x", "field"][..]), (&v3, &["x", "y"][..])]
    {
        let bytes = std::fs::read(path).unwrap();
        let answer = |b: &[u8]| answer_of(Hdf5Meta::from_bytes(b), names);
        let good = answer(&bytes).unwrap();
        // the file read from disk gives the same
        let file = File::open(path).unwrap();
        assert_eq!(answer_of(Hdf5Meta::open(&file), names), Ok(good.clone()));
        let end_of_metadata = {
            let m = Hdf5Meta::from_bytes(&bytes).unwrap();
            names.iter().filter_map(|n| m.dataset(n).unwrap().offset()).min().unwrap() as usize
        };
        // truncations: the superblock's end-of-file address catches them at once
        for len in (0..bytes.len()).step_by(7) {
            let got = std::panic::catch_unwind(|| answer(&bytes[..len]));
            let got = got.unwrap_or_else(|_| panic!("{}: panic at length {len}", path.display()));
            assert!(got.is_err(), "{}: truncated to {len} bytes: {got:?}", path.display());
        }
        // corruptions of each byte of the metadata
        let mut errors = 0;
        for at in 0..end_of_metadata.min(bytes.len()) {
            for change in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= change;
                let got = std::panic::catch_unwind(|| answer(&b));
                let got = got.unwrap_or_else(|_| panic!("{}: panic with byte {at} ^ {change:#x}", path.display()));
                match got {
                    Err(_) => errors += 1,
                    Ok(a) if a == good => {}
                    // without checksums (superblock 0) a changed field can change the answer
                    Ok(_) if path == &v0 => {}
                    Ok(a) => panic!("{}: byte {at} ^ {change:#x} went unnoticed: {a:?}", path.display()),
                }
            }
        }
        eprintln!("{}: {errors} of {} corruptions detected", path.display(), 3 * end_of_metadata);
        assert!(errors > 100, "{}: {errors} errors", path.display());
    }
    // the superblock 0 file truncated with its end-of-file address set to match: the reads
    // past the end are caught one by one
    let bytes = std::fs::read(&v0).unwrap();
    let good_v0 = answer_of(Hdf5Meta::from_bytes(&bytes), &["x", "field"]).unwrap();
    for len in (0..bytes.len()).step_by(3) {
        let mut b = bytes[..len].to_vec();
        if b.len() >= 48 {
            b[40..48].copy_from_slice(&(len as u64).to_le_bytes()); // end-of-file address
        }
        let got = std::panic::catch_unwind(|| answer_of(Hdf5Meta::from_bytes(&b), &["x", "field"]));
        let got = got.unwrap_or_else(|_| panic!("panic at length {len}"));
        match got {
            Err(MetaError::Malformed(_)) => {}
            Ok(a) if a == good_v0 => {}
            other => panic!("truncated to {len} bytes: {other:?}"),
        }
    }
}

/// What the parser says of datasets `names` (and the values of 1-D ones).
fn answer_of(meta: Result<Hdf5Meta<'_>, MetaError>, names: &[&str]) -> Result<Vec<String>, MetaError> {
    let meta = meta?;
    let mut out = Vec::new();
    for &n in names {
        let ds = meta.dataset(n)?;
        let values = if ds.dims.len() == 1 { Some(meta.values_f64(&ds)?) } else { None };
        out.push(format!("{ds:?} {values:?}"));
    }
    Ok(out)
}

/// Output files and the bits of their values.
type Outputs = Vec<(String, Vec<u64>)>;

/// `sstclim run` on `data` with the parser on or off; the outputs, the run report and the
/// threads that located files.
fn run(data: &Path, root: &Path, name: &str, parser: bool) -> (Outputs, Value, Vec<String>) {
    let out = root.join(name);
    let report = root.join(format!("{name}.json"));
    let trace = root.join(format!("{name}-trace.json"));
    let mut args = run_args(data, &out, "2001-2003", "100-120");
    let more = ["--half-window", "3", "--segments", "2", "--threads", "3", "--timing-json", &s(&report)];
    args.extend(more.map(String::from));
    args.extend(["--trace-json".to_string(), s(&trace)]);
    let mut cmd = bin();
    cmd.args(&args);
    if !parser {
        cmd.env("SSTCLIM_H5META", "off");
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let mut threads: Vec<String> = trace["spans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["stage"] == "locate")
        .map(|s| s["thread"].as_str().unwrap().to_string())
        .collect();
    threads.sort();
    threads.dedup();
    (output_bits(&out), report, threads)
}

#[test]
fn runs_locating_with_the_parser_equal_runs_locating_through_libhdf5() {
    let dir = tmp();
    for (storage, order) in [("f64", "lat-lon"), ("i16", "lon-lat")] {
        let data: PathBuf = dir.path().join(format!("data-{storage}"));
        let gen = ["--grid", "29x17", "--years", "2001-2003", "--doys", "95-125", "--storage", storage];
        generate(&data, &[&gen[..], &["--dim-order", order]].concat());
        let root = dir.path().join(format!("runs-{storage}"));
        let (lib, lib_report, lib_threads) = run(&data, &root, "library", false);
        let (parsed, report, threads) = run(&data, &root, "parser", true);
        assert_eq!(parsed, lib, "{storage}: outputs differ");
        let files = report["files_read"].as_u64().unwrap();
        assert_eq!(report["files_direct"].as_u64(), Some(files), "{report}");
        assert_eq!(lib_report["files_direct"].as_u64(), Some(files), "{lib_report}");
        // with the parser the reader threads locate their files; else the locating processes'
        // collectors report them
        assert!(!threads.is_empty() && threads.iter().all(|t| t.starts_with("read-")), "{threads:?}");
        assert!(!lib_threads.is_empty() && lib_threads.iter().all(|t| t.starts_with("locate-")), "{lib_threads:?}");
    }
}

/// `sstclim bench-locate` locates every file each way and checks they agree.
#[cfg(feature = "bench")] // the bench subcommands are built only with this feature
#[test]
fn bench_locate_times_every_way() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "13x7", "--years", "2001-2002", "--doys", "95-105"]);
    let json = dir.path().join("locate.json");
    let input = s(&data);
    let args = ["bench-locate", "--input", &input, "--baseline", "2001-2002", "--doys", "100", "--repeats", "1"];
    ok(&[&args[..], &["--json", &s(&json)]].concat());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["files"].as_u64(), Some(22), "{r}");
    let ways: Vec<&str> = r["ways"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(ways, ["parser", "parser", "libhdf5 in-process", "libhdf5 forked"]);
}
