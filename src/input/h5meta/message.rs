//! The bodies of the HDF5 header messages that describe a dataset: dataspace (0x0001,
//! versions 1 and 2), datatype (0x0003; fixed-point and IEEE floating-point decoded, other
//! classes reported by class, string types of attributes read apart by [`string_type`]), filter pipeline (0x000B; the number of filters) and data layout
//! (0x0008, versions 1 to 5: compact, contiguous, chunked, virtual).
//!
//! Why it exists: these decide whether the direct read path may `pread` a variable and how to
//! decode it, read on any thread without libhdf5 (which is not thread-safe); libhdf5 stays the
//! oracle the tests compare every field with.

use super::cursor::{Cur, Sizes};
use super::datatype::{Datatype, TypeClass};
use super::{bad, unsupported, Result};
use crate::input::format::ByteOrder;

/// Dimension lengths and maximum lengths (None: not stored, the same as the lengths;
/// `u64::MAX` is unlimited) from a dataspace message.
pub(super) fn dataspace_max(data: &[u8], sizes: Sizes) -> Result<(Vec<u64>, Option<Vec<u64>>)> {
    let mut c = Cur::new(data, "dataspace message");
    let version = c.u8()?;
    let rank = c.u8()?;
    let flags = c.u8()?;
    match version {
        1 => c.skip(5)?,
        2 => {
            if c.u8()? == 2 {
                return Ok((Vec::new(), None)); // null dataspace
            }
        }
        v => return Err(unsupported(format!("dataspace message version {v}"))),
    }
    if rank > 32 {
        return Err(bad(format!("a dataspace of rank {rank}")));
    }
    let dims = (0..rank).map(|_| sizes.length(&mut c)).collect::<Result<Vec<u64>>>()?;
    let max = if flags & 1 != 0 {
        let all_ones = if sizes.len == 8 { u64::MAX } else { (1u64 << (8 * sizes.len)) - 1 };
        let max = (0..rank).map(|_| sizes.length(&mut c).map(|m| if m == all_ones { u64::MAX } else { m }));
        Some(max.collect::<Result<Vec<u64>>>()?)
    } else {
        None
    };
    Ok((dims, max))
}

/// A datatype message.
pub(super) fn datatype(data: &[u8]) -> Result<Datatype> {
    let mut c = Cur::new(data, "datatype message");
    let head = c.u8()?;
    let (class, version) = (head & 0x0F, head >> 4);
    if !(1..=5).contains(&version) {
        return Err(unsupported(format!("datatype message version {version}")));
    }
    let bits = c.take(3)?;
    let size = c.u32()? as usize;
    Ok(match class {
        0 => {
            let order = if bits[0] & 0x01 == 0 { ByteOrder::Little } else { ByteOrder::Big };
            let (offset, precision) = (c.u16()?, c.u16()?);
            Datatype {
                class: TypeClass::Integer { signed: bits[0] & 0x08 != 0 },
                size,
                order: Some(order),
                standard: offset == 0 && usize::from(precision) == 8 * size,
            }
        }
        1 => {
            let order = match (bits[0] & 0x01, bits[0] & 0x40) {
                (0, 0) => Some(ByteOrder::Little),
                (1, 0) => Some(ByteOrder::Big),
                _ => None, // VAX order
            };
            let norm = (bits[0] >> 4) & 0x03;
            let pads = bits[0] & 0x0E;
            let sign = bits[1];
            let (offset, precision) = (c.u16()?, c.u16()?);
            let fields = (c.u8()?, c.u8()?, c.u8()?, c.u8()?); // exponent and mantissa locations and sizes
            let bias = c.u32()?;
            let ieee = match size {
                4 => (offset, precision, fields, bias, sign) == (0, 32, (23, 8, 0, 23), 127, 31),
                8 => (offset, precision, fields, bias, sign) == (0, 64, (52, 11, 0, 52), 1023, 63),
                _ => false,
            };
            Datatype { class: TypeClass::Float, size, order, standard: ieee && norm == 2 && pads == 0 }
        }
        other => Datatype { class: TypeClass::Other(other), size, order: None, standard: false },
    })
}

/// A string datatype: the values of a text attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StringType {
    /// Fixed-length strings (class 3) of this many bytes each.
    Fixed(usize),
    /// Variable-length strings (class 9, string kind; netCDF-4's NC_STRING): each value is a
    /// length and the global heap ID of the text.
    Variable,
}

/// The string type a datatype message describes, None where it is not a string (another class,
/// or a variable-length sequence). Every padding (null-terminated, null-padded, space-padded) and
/// character set (ASCII, UTF-8) is read alike: the text up to the first NUL, as libnetcdf takes
/// it ([`crate::input::text_attr::hdf5_text`]); reserved values are left to libhdf5.
pub(super) fn string_type(data: &[u8]) -> Result<Option<StringType>> {
    let mut c = Cur::new(data, "datatype message");
    let class = c.u8()? & 0x0F;
    let bits = c.take(3)?;
    let size = c.u32()? as usize;
    let (kind, pad, charset) = match class {
        3 => (StringType::Fixed(size), bits[0] & 0x0F, bits[0] >> 4),
        // bits 0-3 the kind (1: string), 4-7 the padding, 8-11 the character set
        9 if bits[0] & 0x0F == 1 => (StringType::Variable, bits[0] >> 4, bits[1] & 0x0F),
        _ => return Ok(None),
    };
    if pad > 2 || charset > 1 {
        return Err(unsupported(format!("a string type of padding {pad} and character set {charset}")));
    }
    if kind == StringType::Fixed(0) {
        return Err(bad("a fixed-length string type of 0 bytes"));
    }
    Ok(Some(kind))
}

/// One filter of a dataset's filter pipeline, in the order they are applied on writing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The filter identifier (1 deflate, 2 shuffle, 3 fletcher32, 4 szip, 32015 zstd, ...).
    pub id: u16,
    /// Optional filters may have been skipped for a chunk (its filter mask says so).
    pub optional: bool,
    /// Client data values (deflate: the level; shuffle: the element size).
    pub params: Vec<u32>,
}

/// HDF5's identifiers of the filters the direct path decodes.
pub const FILTER_DEFLATE: u16 = 1;
pub const FILTER_SHUFFLE: u16 = 2;
pub const FILTER_FLETCHER32: u16 = 3;

/// The filters of a filter pipeline message (versions 1 and 2).
pub(super) fn pipeline(data: &[u8]) -> Result<Vec<Filter>> {
    let mut c = Cur::new(data, "filter pipeline message");
    let version = c.u8()?;
    if version != 1 && version != 2 {
        return Err(unsupported(format!("filter pipeline message version {version}")));
    }
    let n = usize::from(c.u8()?);
    if n > 32 {
        return Err(bad(format!("a filter pipeline of {n} filters")));
    }
    if version == 1 {
        c.skip(6)?;
    }
    let mut filters = Vec::with_capacity(n);
    for _ in 0..n {
        let id = c.u16()?;
        // version 2 leaves the name out for the library's own filters (ids below 256)
        let name_len = if version == 1 || id >= 256 { usize::from(c.u16()?) } else { 0 };
        let flags = c.u16()?;
        let nvalues = usize::from(c.u16()?);
        // version 1 pads the name to a multiple of 8 bytes
        c.skip(if version == 1 { name_len.div_ceil(8) * 8 } else { name_len })?;
        let params = (0..nvalues).map(|_| c.u32()).collect::<Result<Vec<u32>>>()?;
        if version == 1 && nvalues % 2 == 1 {
            c.skip(4)?;
        }
        filters.push(Filter { id, optional: flags & 1 != 0, params });
    }
    Ok(filters)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datatypes_decode() {
        // IEEE float64 little endian, as libhdf5 writes it
        let f64le = [0x11, 0x20, 0x3f, 0, 8, 0, 0, 0, 0, 0, 0x40, 0, 52, 11, 0, 52, 0xff, 3, 0, 0];
        let t = datatype(&f64le).unwrap();
        assert_eq!((t.class, t.size, t.order, t.standard), (TypeClass::Float, 8, Some(ByteOrder::Little), true));
        // int16 big endian, signed
        let i16be = [0x10, 0x09, 0, 0, 2, 0, 0, 0, 0, 0, 16, 0];
        let t = datatype(&i16be).unwrap();
        assert_eq!((t.class, t.size, t.order), (TypeClass::Integer { signed: true }, 2, Some(ByteOrder::Big)));
        assert!(t.standard);
        assert!(datatype(&i16be[..9]).is_err());
    }
}
