//! Damaged chunk indexes and chunks (issue 40, items 2 and 7). The fixtures of
//! `tests/fixtures/chunk_keys/make_chunk_key_fixtures.py` (netCDF4-python: float64 chunked
//! without filters, float32 with fletcher32 only, big-endian float32 shuffled and deflated in
//! column chunks, a transposed deflated float32) are copied to every day of a small job, and
//! one field of one chunk key (version-1 B-tree: stored size, filter mask, offsets, address) or
//! one chunk of one copy is damaged here, at run time:
//!
//! - in the first, a middle or the last file, on the default, library and forked read paths,
//!   the job ends with exit 2, one line naming the file, the variable and the damage, and no
//!   outputs, never values libhdf5 made up (a filter mask that skips the compression, a chunk
//!   that inflates short: libhdf5 returns uninitialised memory for them) and never a panic
//!   (offsets outside the grid);
//! - every field of every key of every fixture, changed in several ways, is refused alike by
//!   the first file's probe, the direct readers and the library path, or read alike by them
//!   (and equal to the undamaged file, except where the change is one the format allows: an
//!   optional filter skipped, a chunk moved to other bytes of the file).

use std::path::{Path, PathBuf};

use crate::common::*;
use sstclim::input::direct::{self, ChunkBuffers, ChunkError, DirectLayout, Place};
use sstclim::input::h5meta::{ChunkLoc, Hdf5Meta, Layout, FILTER_DEFLATE, FILTER_SHUFFLE};
use sstclim::input::{self, decode_region, Region, VarLayout};

const VARIANTS: [&str; 4] =
    ["f8_chunked.nc", "f4_fletcher32.nc", "f4be_shuffle_deflate_columns.nc", "f4_deflate_lonlat.nc"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chunk_keys").join(name)
}

/// One chunk's key in a version-1 B-tree node: where it starts in the file (its stored size,
/// filter mask, offsets, the element offset 0, then the chunk's address), and what it says.
struct Key {
    at: usize,
    loc: ChunkLoc,
}

impl Key {
    const SIZE: usize = 0;
    const MASK: usize = 4;
    fn offset(k: usize) -> usize {
        8 + 8 * k
    }
}

/// What the test needs of a fixture's variable: its keys, chunk shape and filters.
struct Chunks {
    keys: Vec<Key>,
    rank: usize,
    chunk: Vec<u64>,
    /// The pipeline's filter ids, in order.
    filters: Vec<u16>,
}

fn chunks_of(bytes: &[u8]) -> Chunks {
    let meta = Hdf5Meta::from_bytes(bytes).unwrap();
    let ds = meta.dataset("sst").unwrap();
    let Layout::Chunked(ch) = &ds.layout else { panic!("not chunked") };
    let rank = ds.dims.len();
    let mut locs = meta.chunks(&ds).unwrap();
    locs.sort_by(|a, b| a.offset.cmp(&b.offset));
    let keys = locs
        .into_iter()
        .map(|loc| {
            let mut pattern = Vec::new();
            pattern.extend((loc.size as u32).to_le_bytes());
            pattern.extend(loc.mask.to_le_bytes());
            loc.offset.iter().chain([&0]).for_each(|o| pattern.extend(o.to_le_bytes()));
            pattern.extend(loc.addr.to_le_bytes());
            Key { at: find_once(bytes, &pattern), loc }
        })
        .collect();
    Chunks { keys, rank, chunk: ch.dims.clone(), filters: ds.pipeline.iter().map(|f| f.id).collect() }
}

/// Where `pattern` occurs in `bytes`: once, or the test cannot say which occurrence it means.
fn find_once(bytes: &[u8], pattern: &[u8]) -> usize {
    let hits: Vec<usize> =
        bytes.windows(pattern.len()).enumerate().filter(|(_, w)| *w == pattern).map(|(i, _)| i).collect();
    assert_eq!(hits.len(), 1, "{} bytes found {} times", pattern.len(), hits.len());
    hits[0]
}

fn put(bytes: &mut [u8], at: usize, value: &[u8]) {
    bytes[at..at + value.len()].copy_from_slice(value);
}

/// The days of the job: 2001-2002, days 1 to 5 (`--doys 3 --half-window 2`), with their
/// times in the fixtures' units (days since 1981-01-01).
fn days() -> Vec<(String, f64)> {
    let mut v = Vec::new();
    for (year, jan1) in [(2001, 7305.0), (2002, 7670.0)] {
        for doy in 1..=5 {
            v.push((format!("sst_{year}_{doy:03}.nc"), jan1 + f64::from(doy - 1)));
        }
    }
    v
}

const FIRST: &str = "sst_2001_001.nc";
const MIDDLE: &str = "sst_2001_004.nc";
const LAST: &str = "sst_2002_005.nc";

/// `fixture` copied to every day of the job in `dir` (each copy's time set to its day), with
/// `damage` done to the copy named `victim`.
fn dataset(dir: &Path, fixture_name: &str, victim: &str, damage: &dyn Fn(&mut Vec<u8>)) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let clean = std::fs::read(fixture(fixture_name)).unwrap();
    let time_at = find_once(&clean, &7305.0f64.to_le_bytes());
    for (name, time) in days() {
        let mut bytes = clean.clone();
        put(&mut bytes, time_at, &time.to_le_bytes());
        if name == victim {
            damage(&mut bytes);
        }
        std::fs::write(data.join(name), bytes).unwrap();
    }
    data
}

/// The job on `data` with `extra` flags must end with exit 2, one line naming `victim`, the
/// variable and every needle, and leave no outputs.
fn refused(data: &Path, out: &Path, extra: &[&str], victim: &str, needles: &[&str]) {
    let args = with(run_args(data, out, "2001-2002", "3"), &[&["--half-window", "2"][..], extra].concat());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = fails(&argv);
    let what = format!("{extra:?}, {victim} damaged");
    assert_eq!(err.trim().lines().count(), 1, "{what}: one line expected:\n{err}");
    for n in [victim, "variable 'sst'"].iter().chain(needles) {
        assert!(err.contains(n), "{what}: the error should say '{n}':\n{err}");
    }
    assert!(entries(out).is_empty(), "{what}: outputs left: {:?}", entries(out));
}

const PATHS: [&[&str]; 3] = [&[], &["--read-path", "library"], &["--read-path", "forked"]];

/// Issue 40 item 2: damage the parser proves in the first file used to send the whole job to
/// libnetcdf, which read it as uninitialised memory (exit 0, means of -305 to +346 °C); in a
/// later file it was an error. Now it is an error wherever the file is and whichever path
/// reads it.
#[test]
fn damage_in_the_first_middle_or_last_file_is_named_on_every_read_path() {
    let name = "f4be_shuffle_deflate_columns.nc";
    let Chunks { keys, .. } = chunks_of(&std::fs::read(fixture(name)).unwrap());
    let first = &keys[0];
    // a filter mask that skips every filter: libhdf5 takes the deflated bytes for the chunk
    let mask = |b: &mut Vec<u8>| put(b, first.at + Key::MASK, &u32::MAX.to_le_bytes());
    // a whole zlib stream shorter than the chunk (its key's size to match): libhdf5 inflates it
    // and returns the rest of the chunk from its buffer
    let short = |b: &mut Vec<u8>| {
        let mut z = vec![0u8; 256];
        let n = libdeflater::Compressor::new(libdeflater::CompressionLvl::default())
            .zlib_compress(&[7u8; 64], &mut z)
            .unwrap();
        put(b, first.loc.addr as usize, &z[..n]);
        put(b, first.at + Key::SIZE, &(n as u32).to_le_bytes());
    };
    let cases: [(&str, &dyn Fn(&mut Vec<u8>), &str); 2] = [
        ("mask", &mask, "the chunk at [0, 0, 0] has filter mask 0xffffffff"),
        ("short", &short, "the chunk at [0, 0, 0]: 64 bytes after the filters, the chunk holds 288"),
    ];
    let dir = tmp();
    for (what, damage, needle) in cases {
        for victim in [FIRST, MIDDLE, LAST] {
            let case = dir.path().join(format!("{what}-{victim}"));
            let data = dataset(&case, name, victim, damage);
            for (i, extra) in PATHS.iter().enumerate() {
                refused(&data, &case.join(format!("out{i}")), extra, victim, &[needle]);
            }
        }
    }
}

/// Issue 40 item 7: chunk keys outside the grid used to panic in the direct reader ("range
/// start index 8000000 out of range", naming no file). Each kind of bad key, on every storage
/// variant, is one line naming the file and what is wrong with the key.
#[test]
fn bad_chunk_keys_are_named_on_every_storage_variant() {
    let dir = tmp();
    for name in VARIANTS {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let Chunks { keys, rank, chunk, filters } = chunks_of(&bytes);
        let (k0, k1) = (&keys[0], &keys[1]);
        let last = rank - 1;
        let file_len = bytes.len() as u64;
        let off = |k: &Key, d: usize, v: u64| {
            let at = k.at + Key::offset(d);
            move |b: &mut Vec<u8>| put(b, at, &v.to_le_bytes())
        };
        let beyond = off(k0, last, chunk[last] * 1_000_000);
        let off_grid = off(k0, last, 1);
        let size = |b: &mut Vec<u8>| put(b, k0.at + Key::SIZE, &u32::MAX.to_le_bytes());
        let addr = |b: &mut Vec<u8>| put(b, k0.at + Key::offset(rank + 1), &file_len.to_le_bytes());
        let mask = |b: &mut Vec<u8>| put(b, k0.at + Key::MASK, &(1u32 << filters.len()).to_le_bytes());
        let twice = |b: &mut Vec<u8>| {
            for (d, o) in k0.loc.offset.iter().enumerate() {
                put(b, k1.at + Key::offset(d), &o.to_le_bytes());
            }
        };
        let damages: [(&str, &dyn Fn(&mut Vec<u8>), String); 6] = [
            ("beyond", &beyond, "lies outside the dataset's dimensions".to_string()),
            ("off-grid", &off_grid, format!("is not on the chunk grid {chunk:?}")),
            ("size", &size, format!("({} bytes at byte {}) passes the end of the file", u32::MAX, k0.loc.addr)),
            ("addr", &addr, format!("bytes at byte {file_len}) passes the end of the file")),
            ("mask", &mask, format!("which names filters the pipeline of {} does not have", filters.len())),
            ("twice", &twice, format!("two chunks at {:?}", k0.loc.offset)),
        ];
        for (what, damage, needle) in damages {
            for (victim, extra) in [(FIRST, PATHS[0]), (FIRST, PATHS[2]), (MIDDLE, PATHS[0])] {
                let case = dir.path().join(format!("{name}-{what}-{victim}-{}", extra.len()));
                let data = dataset(&case, name, victim, &damage);
                let needles = ["its chunk index is damaged", needle.as_str()];
                refused(&data, &case.join("out"), extra, victim, &needles);
            }
        }
    }
}

/// What one way of reading a file gave.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// An error (the damage found).
    Refused(String),
    /// The field, bit for bit.
    Values(Vec<u64>),
    /// Not read here: the job reads the file through libnetcdf.
    Library,
}

fn layout_of(path: &Path) -> VarLayout {
    let file = input::open(path).unwrap();
    VarLayout::inspect(&file, path, None, false).unwrap()
}

fn whole(layout: &VarLayout) -> Region {
    Region { rows: 0..layout.nlat(), cols: 0..layout.nlon() }
}

/// The direct readers' way (`d`: the layout the job's first file gave).
fn direct_read(path: &Path, d: &DirectLayout, layout: &VarLayout) -> Outcome {
    let Ok((file, place)) = direct::locate(path, d, layout, None) else { return Outcome::Library };
    let Place::Chunked(ch) = place else { panic!("{}: not chunked", path.display()) };
    let mut v = vec![0f64; layout.nlat() * layout.nlon()];
    match direct::read_chunked_into(&file, &ch, d.order, layout, &whole(layout), &mut ChunkBuffers::default(), &mut v) {
        Ok(_) => Outcome::Values(v.iter().map(|x| x.to_bits()).collect()),
        Err(ChunkError::Corrupt(why)) => Outcome::Refused(why),
        Err(ChunkError::Fallback(_)) => Outcome::Library,
    }
}

/// The way of the first file: the probe, then the direct readers.
fn first_read(path: &Path, layout: &VarLayout) -> Outcome {
    match direct::probe_first(path, layout) {
        Err(damaged) => Outcome::Refused(damaged.to_string()),
        Ok(Ok(d)) => direct_read(path, &d, layout),
        Ok(Err(_)) => Outcome::Library,
    }
}

/// The library path's way: its checks, then libnetcdf.
fn library_read(path: &Path, layout: &VarLayout, first: &Path) -> Outcome {
    let region = whole(layout);
    match input::read_checked(path, layout, first, None, &region) {
        Err(e) => Outcome::Refused(e.to_string()),
        Ok((own, raw)) => {
            let mut v = vec![0f64; region.n_cells()];
            decode_region(&own, &region, &raw, &mut v);
            Outcome::Values(v.iter().map(|x| x.to_bits()).collect())
        }
    }
}

/// A change to one key: what it is, whether every reader must refuse it (else it may be one
/// the format allows, read alike by every path), and the bytes it writes where.
struct Change {
    what: String,
    refused: bool,
    at: usize,
    value: Vec<u8>,
}

/// Every change made to every field of key `k` of `c` (in a file of `len` bytes).
fn changes(c: &Chunks, k: usize, len: u64) -> Vec<Change> {
    let key = &c.keys[k];
    let (loc, at) = (&key.loc, key.at);
    let mut v = Vec::new();
    let mut add = |what: String, refused: bool, field: usize, value: Vec<u8>| {
        v.push(Change { what: format!("key {k} {:?}: {what}", loc.offset), refused, at: at + field, value })
    };
    let compressed = c.filters.contains(&FILTER_DEFLATE);
    for (size, refused) in [(0, true), (loc.size - 1, true), (loc.size + 1, !compressed), (u64::from(u32::MAX), true)] {
        add(format!("size {size}"), refused, Key::SIZE, (size as u32).to_le_bytes().to_vec());
    }
    let mut masks = vec![(u32::MAX, true), (1u32 << c.filters.len(), true)];
    // a skipped shuffle is a key the format allows (the chunk is then stored unshuffled)
    masks.extend(c.filters.iter().enumerate().map(|(i, &f)| (1u32 << i, f != FILTER_SHUFFLE)));
    for (mask, refused) in masks {
        add(format!("mask {mask:#x}"), refused, Key::MASK, mask.to_le_bytes().to_vec());
    }
    for d in 0..c.rank {
        let o = loc.offset[d];
        for value in [o + c.chunk[d], o + 1, c.chunk[d] * 1_000_000, u64::MAX] {
            add(format!("offset {d} = {value}"), true, Key::offset(d), value.to_le_bytes().to_vec());
        }
    }
    add("element offset 1".into(), true, Key::offset(c.rank), 1u64.to_le_bytes().to_vec());
    let other = c.keys[(k + 1) % c.keys.len()].loc.addr;
    // an address inside the file, apart from the other chunks, is one the format allows
    for (addr, refused) in [(loc.addr + 1, false), (0, false), (len, true), (u64::MAX, true), (other, true)] {
        add(format!("address {addr}"), refused, Key::offset(c.rank + 1), addr.to_le_bytes().to_vec());
    }
    v
}

/// Every field of every key of every variant changed in several ways (about 700 files): the
/// first file's probe, the direct readers and the library path each refuse the file or read
/// it, never panic, and agree: a file one refuses, every one that reads it refuses; values
/// read are equal everywhere, and equal to the undamaged file's unless the change is one the
/// format allows. Every change of an offset, a size the filters fix, an address outside the
/// file or another chunk's bytes, and a filter mask naming filters absent or mandatory is
/// refused by all three.
#[test]
fn every_changed_chunk_key_is_refused_or_read_alike_by_every_path() {
    sstclim::input::silence_hdf5();
    let dir = tmp();
    let mut counts = [0usize; 3];
    for name in VARIANTS {
        let clean = fixture(name);
        let bytes = std::fs::read(&clean).unwrap();
        let c = chunks_of(&bytes);
        let layout = layout_of(&clean);
        let d = direct::probe(&clean, &layout).unwrap();
        let want = library_read(&clean, &layout, &clean);
        assert!(matches!(want, Outcome::Values(_)), "{name}: {want:?}");
        assert_eq!(direct_read(&clean, &d, &layout), want, "{name}: direct and library paths differ");
        for k in 0..c.keys.len() {
            for (i, change) in changes(&c, k, bytes.len() as u64).into_iter().enumerate() {
                let what = format!("{name} {}", change.what);
                let mut b = bytes.clone();
                put(&mut b, change.at, &change.value);
                let path = dir.path().join(format!("{k}-{i}-{name}"));
                std::fs::write(&path, &b).unwrap();
                let got = std::panic::catch_unwind(|| {
                    (first_read(&path, &layout), direct_read(&path, &d, &layout), library_read(&path, &layout, &clean))
                });
                let (first, later, library) = got.unwrap_or_else(|_| panic!("{what}: a panic"));
                for (way, o) in [("the probe", &first), ("the direct readers", &later)] {
                    match (o, &library) {
                        (Outcome::Library, _) | (Outcome::Refused(_), Outcome::Refused(_)) => {}
                        (Outcome::Values(a), Outcome::Values(b)) if a == b => {}
                        _ => panic!("{what}: {way} gave {o:?}, the library path {library:?}"),
                    }
                }
                assert!(library != Outcome::Library, "{what}");
                if change.refused {
                    for o in [&first, &library] {
                        assert!(matches!(o, Outcome::Refused(_)), "{what}: not refused: {o:?}");
                    }
                }
                counts[match library {
                    Outcome::Refused(_) => 0,
                    ref v if *v == want => 1,
                    _ => 2,
                }] += 1;
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    eprintln!(
        "{} changes refused, {} read as the undamaged file, {} read otherwise alike",
        counts[0], counts[1], counts[2]
    );
    assert!(counts[0] > 500, "{counts:?}");
}
