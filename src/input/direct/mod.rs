//! The direct-read fast path: where the data variable is stored contiguous and uncompressed,
//! its bytes are one run at a fixed offset of the file, so threads read it with `pread` and
//! decode it without libnetcdf/libhdf5 in the loop (the library is not thread-safe and,
//! serialized, reads about 1 GB/s; `pread` from the page cache runs at memory speed).
//!
//! Every file's offset is queried, never assumed (it differs between HDF5 versions and
//! writers), with the storage layout, filters, type, byte order and dimensions checked, and on
//! a job's first tile the coordinate variables compared with the first file's. NetCDF-4 files
//! are inspected by parsing their HDF5 metadata ([`super::h5meta`], no library, any thread);
//! where that parser meets a structure it does not read, through HDF5 itself (`H5Dget_offset`
//! etc., serialized under the library lock). The job's first file is inspected both ways
//! ([`probe`]): if they disagree, every file of the job is inspected through the library (and a
//! warning says so). `SSTCLIM_H5META=off` forces the library for every file. NetCDF-3 headers
//! are parsed here (non-record variables only). Every file's own storage type and decoding
//! attributes (`_FillValue`, `missing_value`, `scale_factor`, `add_offset`, valid range) are
//! read the same way (parsed, or through libhdf5) and must equal the first file's, with which
//! the direct path decodes: a file of another type or packing is never decoded with the first
//! file's rules but goes to the library path, which decodes it with its own. Any file that
//! does not qualify or does not read cleanly goes to the library path, which reports what is
//! wrong with it.
//!
//! Chunked variables (deflated, shuffled, fletcher32-checked: what OISST, OSTIA, MUR, ERA5
//! and CMIP6 files store) are read here too where the metadata parser reads their chunk
//! index: libhdf5 cannot be asked for their chunks on a reader thread, so the first file is
//! checked against libnetcdf instead (its whole field decoded both ways, bitwise equal), and
//! a file whose chunks the parser does not read, or whose filters are not decoded here, goes
//! to libnetcdf.
//!
//! Storage the parser does not understand goes to the library; storage it proves broken never
//! does, because libhdf5 trusts a chunk index as it finds it (a key whose filter mask skips the
//! compression makes it return uninitialised memory for the chunk, a key outside the dataset
//! fill values). A damaged chunk index (h5meta's `chunk_keys`: keys outside the dataset or the
//! file, impossible filter masks or sizes, two chunks at one place) or a chunk that does not
//! decode in the first file stops the job at [`probe_first`], naming the file; in any later
//! file the direct readers stop on a corrupt chunk, and a damaged index sends the file to the
//! library path. Every read through libnetcdf ([`crate::input::checked`]'s `read_step`) first
//! asks the same verdict ([`ChunkVerdict`]: the chunk index checked, the chunks the step needs
//! decoded here), so `--read-path library` and forked readers refuse the same files, naming
//! them.
//!
//! The modules: this one probes the first file and locates each file (the checks both ways
//! of inspecting an HDF5 file share); `parsed` inspects one through the metadata parser,
//! `library` through libhdf5; `pread` reads and decodes a located contiguous variable,
//! `chunked` a chunked one through `filters`; `verdict` judges a chunked one for the library
//! paths.

mod chunked;
mod contiguous;
mod filters;
mod library;
mod parsed;
mod pread;
mod verdict;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::OnceLock;

use super::error::InputError;
use super::grid::Grid;
use super::layout::VarLayout;
use super::netcdf3::netcdf3_variable;
use super::packing::{same_units, AttrValue, Packing};
use super::storage::Storage;
use library::locate_hdf5;
use parsed::locate_parsed;

// the types this path's results carry, defined below it (the header parsers use them too)
use super::format::{ByteOrder, Format, NotDirect};
pub use chunked::{
    read_chunked_into, read_chunked_step_into, read_chunked_steps_into, ChunkBuffers, ChunkError, Chunked,
};
pub use contiguous::{locate_as, Stored};
pub use filters::{filter_name, fletcher32, unshuffle, unsupported_filter, Unfilter};
pub(crate) use library::with_hdf5_file;
pub use library::{hdf5_attribute_values, hdf5_chunks, hdf5_storage, Hdf5Storage};
pub use pread::{bytes_of, read_into, read_step_into, DirectBuffer};
pub use verdict::ChunkVerdict;

/// Where a located file keeps its variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// One run of bytes at this offset.
    Contiguous(u64),
    /// Chunks (compressed or not), found through the file's chunk index.
    Chunked(Box<Chunked>),
}

/// A located file: where its variable is and how many time steps it holds (files of one
/// product may hold different numbers: monthly files, a short last year).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub place: Place,
    /// The length of the file's own time dimension (1 without one).
    pub steps: usize,
}

impl Located {
    /// Steps of the file that one decompressed chunk holds (1 for contiguous variables and
    /// chunks of one step): slots whose steps share such a block are read together.
    pub fn step_block(&self, layout: &VarLayout) -> usize {
        match (&self.place, layout.time_axis) {
            (Place::Chunked(ch), Some(t)) => ch.chunk.get(t).map_or(1, |&n| n.max(1) as usize),
            _ => 1,
        }
    }
}

impl Place {
    /// The byte offset of a contiguous variable.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Place::Contiguous(o) => Some(*o),
            Place::Chunked(_) => None,
        }
    }
}

/// The storage of a contiguous variable, as found in the first file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectLayout {
    pub format: Format,
    pub order: ByteOrder,
    /// Byte offset of the first value in the probed file.
    pub offset: u64,
    /// Files are located by parsing their headers, with no library: any thread may locate
    /// them (NetCDF-3, and HDF5 where [`super::h5meta`] read the first file as libhdf5 did).
    pub parsed: bool,
    /// The first file's variable is chunked (its chunks decoded here; `offset` is 0).
    pub chunked: bool,
    /// Time steps per decompressed chunk in the first file (1 for contiguous variables, files
    /// of one step and chunks of one step): the readers group the slots of a file by blocks of
    /// this many steps, so that each chunk is inflated once for all the steps it holds.
    pub step_block: usize,
}

/// Whether HDF5 metadata is parsed here (else read through libhdf5): `SSTCLIM_H5META=off`
/// (or `0`, `false`, `library`) turns the parser off.
pub fn parser_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(crate::util::knobs::h5meta_parser)
}

/// How an HDF5 file is inspected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// Through libhdf5, under the library lock.
    Library,
    /// Parsed ([`super::h5meta`]); through libhdf5 where the parser meets a structure it does
    /// not read.
    Parser,
    /// Parsed only: such structures are an error (for tests and the first file's check).
    ParserOnly,
}

/// Why an inspection gave no offset.
pub(super) enum Refused {
    /// The parser does not read this file's structures (the library may).
    Unsupported(String),
    /// The file does not qualify (or is malformed where the library reads it with its own
    /// checks: its headers).
    Not(NotDirect),
    /// The parser proved the variable's chunk index damaged (what is wrong): the library would
    /// read it without noticing, so it is an error naming the file, whichever path reads it.
    Damaged(String),
}

impl From<NotDirect> for Refused {
    fn from(why: NotDirect) -> Refused {
        Refused::Not(why)
    }
}

impl Refused {
    fn text(self) -> NotDirect {
        match self {
            Refused::Unsupported(why) => format!("not read without libhdf5: {why}"),
            Refused::Not(why) | Refused::Damaged(why) => why,
        }
    }
}

/// [`probe_first`], with damage one more reason for the library path (for the tools and tests
/// that only ask whether the direct path reads a file).
pub fn probe(path: &Path, layout: &VarLayout) -> Result<DirectLayout, NotDirect> {
    probe_first(path, layout).unwrap_or_else(|damaged| Err(damaged.to_string()))
}

/// The direct layout of `layout`'s variable in the job's first file `path`, or why it has none
/// (the job then reads through libnetcdf). An HDF5 file is inspected through libhdf5 (whose
/// verdict stands) and parsed: the parser locates the job's files only where it gives the same
/// offset, byte order and dimensions. A chunked variable whose chunk index or chunks the parser
/// proves damaged is the outer error: the library would read them wrong (it trusts the index),
/// so the job stops, naming the file, instead of falling back.
pub fn probe_first(path: &Path, layout: &VarLayout) -> Result<Result<DirectLayout, NotDirect>, InputError> {
    let damaged = |problem| InputError::BadVariable { path: path.into(), var: layout.name.clone(), problem };
    match probe_parts(path, layout) {
        Err(Refused::Damaged(problem)) => Err(damaged(problem)),
        other => Ok(other.map_err(Refused::text)),
    }
}

fn probe_parts(path: &Path, layout: &VarLayout) -> Result<DirectLayout, Refused> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let mut head = [0u8; 8];
    file.read_exact_at(&mut head, 0).map_err(|e| format!("reading the header: {e}"))?;
    let Some(format) = Format::of(&head) else {
        return Err(Refused::Not("neither an HDF5 file without user block nor NetCDF-3".into()));
    };
    let (offset, order) = match locate_in(&file, path, format, layout, None, Via::Library) {
        Ok((located, order)) => (located.place.offset().unwrap_or(0), order),
        Err(why) if format == Format::Hdf5 && parser_enabled() => return probe_chunked(&file, path, layout, why),
        Err(why) => return Err(why),
    };
    let parsed = match format {
        Format::NetCdf3 => true,
        Format::Hdf5 if !parser_enabled() => false,
        // both check the dimensions against `layout`'s: agreeing on them is succeeding
        Format::Hdf5 => match locate_in(&file, path, format, layout, None, Via::ParserOnly) {
            Ok((Located { place: Place::Contiguous(o), .. }, ord)) if (o, ord) == (offset, order) => true,
            Ok((located, ord)) => {
                let o = located.place.offset().map_or("chunks".to_string(), |o| format!("byte {o}"));
                tracing::warn!(
                    "{}: the HDF5 metadata parser finds {} at {o} ({ord:?}), libhdf5 at byte {offset} \
                     ({order:?}): locating every file through libhdf5",
                    path.display(),
                    layout.name
                );
                false
            }
            Err(Refused::Unsupported(why)) => {
                tracing::info!("{}: {why}: locating every file through libhdf5", path.display());
                false
            }
            // (the parser reads no chunk index of a variable libhdf5 finds contiguous)
            Err(Refused::Not(why) | Refused::Damaged(why)) => {
                tracing::warn!(
                    "{}: the HDF5 metadata parser refuses it ({why}), libhdf5 does not: locating every file \
                     through libhdf5",
                    path.display()
                );
                false
            }
        },
    };
    Ok(DirectLayout { format, order, offset, parsed, chunked: false, step_block: 1 })
}

/// The first file's variable is not contiguous for libhdf5 (`refused` says why): it takes
/// the direct path where the parser reads its chunks and decodes its whole field bitwise
/// equal to libnetcdf's read of it (libnetcdf stays the oracle). A chunk index or chunk the
/// parser proves damaged is [`Refused::Damaged`], before libnetcdf reads anything.
fn probe_chunked(file: &File, path: &Path, layout: &VarLayout, refused: Refused) -> Result<DirectLayout, Refused> {
    let (located, order) = match locate_in(file, path, Format::Hdf5, layout, None, Via::ParserOnly) {
        Ok(found @ (Located { place: Place::Chunked(_), .. }, _)) => found,
        // the library's verdict stands
        Ok((Located { place: Place::Contiguous(_), .. }, _)) => return Err(refused),
        Err(damaged @ Refused::Damaged(_)) => return Err(damaged),
        // the library's reason, with the parser's where it read further
        Err(Refused::Unsupported(why) | Refused::Not(why)) => return Err(format!("{} ({why})", refused.text()).into()),
    };
    let step_block = located.step_block(layout);
    let Place::Chunked(ch) = located.place else { unreachable!("matched above") };
    let region = super::read::Region { rows: 0..layout.nlat(), cols: 0..layout.nlon() };
    let mut ours = vec![0f32; region.n_cells()];
    let mut theirs = vec![0f32; region.n_cells()];
    let mut buf = ChunkBuffers::default();
    read_chunked_into(file, &ch, order, layout, &region, &mut buf, &mut ours).map_err(|e| match e {
        ChunkError::Fallback(why) => Refused::Not(format!("stored in chunks: {why}")),
        ChunkError::Corrupt(why) => Refused::Damaged(why),
    })?;
    let nc = super::open::open(path).map_err(|e| Refused::Not(e.to_string()))?;
    let raw = super::read::read_region(&nc, path, layout, &region).map_err(|e| Refused::Not(e.to_string()))?;
    super::read::decode_region(layout, &region, &raw, &mut theirs);
    if ours.iter().zip(&theirs).any(|(a, b)| a.to_bits() != b.to_bits()) {
        tracing::warn!(
            "{}: its chunks decoded here differ from libnetcdf's values: reading every file through libnetcdf",
            path.display()
        );
        return Err(Refused::Not("stored in chunks whose values decoded here differ from libnetcdf's".into()));
    }
    Ok(DirectLayout { format: Format::Hdf5, order, offset: 0, parsed: true, chunked: true, step_block })
}

/// Where `layout`'s variable starts in `path`, after checking that the file stores it the way
/// `direct` says (same format and byte order, contiguous, unfiltered, same dimensions and
/// type) and, with `grid`, that its coordinate variables equal `grid`'s. HDF5 files are parsed
/// where `direct.parsed` (else, and where the parser does not read them, inspected through
/// HDF5 itself, taking the library lock); NetCDF-3 headers are parsed.
pub fn locate(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
) -> Result<(File, Place), NotDirect> {
    locate_file(path, direct, layout, grid).map(|(f, l)| (f, l.place))
}

/// [`locate`], with the number of time steps the file holds.
pub fn locate_file(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
) -> Result<(File, Located), NotDirect> {
    locate_file_via(path, direct, layout, grid, if direct.parsed { Via::Parser } else { Via::Library })
}

/// [`locate`] with the way HDF5 files are inspected chosen (NetCDF-3 files are always parsed).
pub fn locate_via(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
    via: Via,
) -> Result<(File, Place), NotDirect> {
    locate_file_via(path, direct, layout, grid, via).map(|(f, l)| (f, l.place))
}

/// [`locate_via`], with the number of time steps the file holds.
pub fn locate_file_via(
    path: &Path,
    direct: &DirectLayout,
    layout: &VarLayout,
    grid: Option<&Grid>,
    via: Via,
) -> Result<(File, Located), NotDirect> {
    let file = File::open(path).map_err(|e| e.to_string())?;
    let (located, order) = locate_in(&file, path, direct.format, layout, grid, via).map_err(Refused::text)?;
    if order != direct.order {
        return Err(format!("byte order {order:?}, the first file {:?}", direct.order));
    }
    Ok((file, located))
}

/// The coordinates of a NetCDF-3 file whose header is `head`, compared bit for bit with the
/// first file's (`grid`), as the HDF5 parser and the library paths compare them.
fn netcdf3_same_grid(file: &File, head: &[u8], grid: &Grid) -> Result<(), Refused> {
    for (name, shape, expected) in grid.checked() {
        let c = netcdf3_variable(head, name).map_err(|why| format!("coordinate {name}: {why}"))?;
        let storage = c.storage.map_err(|why| format!("coordinate {name}: {why}"))?;
        if c.dims != shape {
            return Err(format!("coordinate {name} differs from the first file's (its shape)").into());
        }
        let mut bytes = vec![0u8; expected.len() * storage.size()];
        file.read_exact_at(&mut bytes, c.begin).map_err(|e| format!("reading coordinate {name}: {e}"))?;
        let same = bytes.chunks_exact(storage.size()).zip(expected).all(|(b, e)| {
            let v = match storage {
                Storage::I8 => f64::from(b[0] as i8),
                Storage::U8 => f64::from(b[0]),
                Storage::I16 => f64::from(i16::from_be_bytes([b[0], b[1]])),
                Storage::U16 => f64::from(u16::from_be_bytes([b[0], b[1]])),
                Storage::I32 => f64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
                Storage::U32 => f64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
                Storage::F32 => f64::from(f32::from_be_bytes([b[0], b[1], b[2], b[3]])),
                Storage::F64 => f64::from_be_bytes(b.try_into().expect("8 bytes")),
            };
            v.to_bits() == e.to_bits()
        });
        if !same {
            return Err(format!("coordinate {name} differs from the first file's").into());
        }
    }
    Ok(())
}

fn locate_in(
    file: &File,
    path: &Path,
    format: Format,
    layout: &VarLayout,
    grid: Option<&Grid>,
    via: Via,
) -> Result<(Located, ByteOrder), Refused> {
    one_field_per_step(layout)?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    // bytes of one step's field
    let bytes = layout.storage.size() as u64 * (layout.nlat() * layout.nlon()) as u64;
    let (place, order, steps) = match (format, via) {
        (Format::Hdf5, Via::Library) => contiguous(locate_hdf5(path, layout, bytes, grid)?),
        (Format::Hdf5, Via::ParserOnly) => locate_parsed(file, layout, bytes, grid)?,
        (Format::Hdf5, Via::Parser) => match locate_parsed(file, layout, bytes, grid) {
            Err(Refused::Unsupported(why)) => {
                tracing::debug!("{}: {why}: asking libhdf5", path.display());
                contiguous(locate_hdf5(path, layout, bytes, grid)?)
            }
            other => other?,
        },
        (Format::NetCdf3, _) => {
            let mut buf = vec![0u8; size.min(1 << 20) as usize];
            file.read_exact_at(&mut buf, 0).map_err(|e| e.to_string())?;
            let v = netcdf3_variable(&buf, &layout.name)?;
            let steps = steps_of(&v.dims, layout)?;
            match v.storage {
                Ok(found) if found == layout.storage => {}
                Ok(found) => {
                    return Err(
                        format!("stored as {}, the first file as {}", found.name(), layout.storage.name()).into()
                    )
                }
                Err(why) => return Err(format!("the variable {why}").into()),
            }
            check_packing(layout.storage, |n| lookup(&v.attrs, n), layout)?;
            if let Some(grid) = grid {
                netcdf3_same_grid(file, &buf, grid)?;
            }
            (Place::Contiguous(v.begin), ByteOrder::Big, steps)
        }
    };
    match &place {
        Place::Contiguous(offset) => {
            if steps > 1 && layout.time_axis.is_some_and(|t| t > layout.lat_axis.min(layout.lon_axis)) {
                return Err("its time dimension comes after latitude or longitude: a step is not one run of bytes"
                    .to_string()
                    .into());
            }
            let all = bytes.checked_mul(steps as u64);
            if !matches!(all.and_then(|all| offset.checked_add(all)), Some(end) if end <= size) {
                return Err(format!(
                    "the variable's {steps} step(s) of {bytes} bytes at offset {offset} pass the end of the file"
                )
                .into());
            }
        }
        // (every chunk lies inside the file: see h5meta's chunk_keys)
        Place::Chunked(_) => {}
    }
    Ok((Located { place, steps }, order))
}

/// Files of many steps are read one step per pool slot along the time dimension: every other
/// dimension besides latitude and longitude must have length 1.
fn one_field_per_step(layout: &VarLayout) -> Result<(), NotDirect> {
    let extra = layout
        .dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != layout.lat_axis && i != layout.lon_axis && Some(i) != layout.time_axis);
    match extra.map(|(_, d)| d).find(|(_, len)| *len != 1) {
        Some((name, len)) => Err(format!("dimension {name} has length {len}: more than one field per time step")),
        None => Ok(()),
    }
}

/// A file's dimension lengths `found` against the first file's: equal, except the time
/// dimension, whose length (the file's number of steps) is returned.
pub(super) fn steps_of(found: &[u64], layout: &VarLayout) -> Result<usize, NotDirect> {
    let want: Vec<u64> = layout.dims.iter().map(|x| x.1 as u64).collect();
    let same = found.len() == want.len() && (0..want.len()).all(|i| Some(i) == layout.time_axis || found[i] == want[i]);
    if !same {
        return Err(format!("dimensions {found:?}, expected {want:?}"));
    }
    Ok(layout.time_axis.map_or(1, |t| found[t] as usize))
}

fn contiguous((offset, order, steps): (u64, ByteOrder, usize)) -> (Place, ByteOrder, usize) {
    (Place::Contiguous(offset), order, steps)
}

/// What either way of inspecting an HDF5 dataset reports, for the same checks.
pub(super) struct Found {
    /// libhdf5's name of the layout class.
    pub(super) layout: String,
    pub(super) contiguous: bool,
    pub(super) filters: usize,
    pub(super) type_size: usize,
    /// The storage type, or why sstclim does not read the type.
    pub(super) storage: Result<Storage, String>,
    /// The byte order, or the name of one the direct path cannot read (none, for single
    /// bytes; VAX).
    pub(super) order: Result<ByteOrder, String>,
    pub(super) dims: Vec<u64>,
    /// Bytes allocated for the data.
    pub(super) stored: u64,
    /// Byte offset of the data (None where not allocated).
    pub(super) offset: Option<u64>,
}

/// The checks every located HDF5 variable passes (`bytes`: one step's field): its offset,
/// byte order and number of time steps.
pub(super) fn check_found(s: &Found, layout: &VarLayout, bytes: u64) -> Result<(u64, ByteOrder, usize), NotDirect> {
    let storage = layout.storage;
    if !s.contiguous {
        return Err(format!("stored {}, not contiguous", s.layout));
    }
    if s.filters != 0 {
        return Err(format!("{} filter(s) (compression)", s.filters));
    }
    match &s.storage {
        Ok(found) if *found == storage => {}
        Ok(found) => return Err(format!("stored as {}, the first file as {}", found.name(), storage.name())),
        Err(why) => return Err(format!("the variable {why}")),
    }
    let steps = steps_of(&s.dims, layout)?;
    let Some(offset) = s.offset.filter(|_| Some(s.stored) == bytes.checked_mul(steps as u64)) else {
        return Err("storage not allocated (never written)".into());
    };
    let order = match &s.order {
        Ok(order) => *order,
        Err(_) if s.type_size == 1 => ByteOrder::Little, // single bytes have no order
        Err(other) => return Err(format!("byte order {other}")),
    };
    Ok((offset, order, steps))
}

/// Check that a file's own decoding attributes (`attr`, for a variable stored as `storage`)
/// give the rules the direct path decodes with (`layout`'s, the first file's): the same
/// function builds both, so a file passes exactly when it would decode alike. `quantize` is the
/// job's and not compared.
pub(super) fn check_packing(
    storage: Storage,
    attr: impl Fn(&str) -> Option<AttrValue>,
    layout: &VarLayout,
) -> Result<(), NotDirect> {
    let units = match attr("units") {
        None => None,
        Some(AttrValue::Text(t)) => Some(t),
        // text the parsers do not read: libnetcdf compares it
        Some(_) => return Err("its units are not read here".into()),
    };
    if !same_units(units.as_deref(), layout.meta.units.as_deref()) {
        return Err("its units differ from the first file's".into());
    }
    let own = Packing::from_attributes(storage, attr).map_err(|e| format!("its decoding attributes: {e}"))?;
    match own.differs_from(&layout.packing) {
        Some(name) => Err(format!("its own {name} differs from the first file's: decoded with its own")),
        None => Ok(()),
    }
}

/// The value of attribute `name` in a list of attributes read from a file.
pub(super) fn lookup(attrs: &[(String, AttrValue)], name: &str) -> Option<AttrValue> {
    attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}
