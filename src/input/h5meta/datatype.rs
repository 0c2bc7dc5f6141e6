//! HDF5 datatypes as sstclim reads them: the class, size and byte order of a dataset's or an
//! attribute's values, and one stored value converted to f64 as libhdf5 converts it to
//! `H5T_NATIVE_DOUBLE`.
//!
//! Why it exists: datasets ([`super::dataset`]) and attributes ([`super::attributes`]) both
//! decode values of a datatype; the type lives below both so that neither imports the other's
//! module for it.

use crate::input::format::ByteOrder;

/// Datatype classes (`H5T_class_t` numbering for the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    Integer { signed: bool },
    Float,
    Other(u8),
}

/// A dataset's datatype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datatype {
    pub class: TypeClass,
    /// Bytes per value.
    pub size: usize,
    /// None for VAX-ordered floats and classes without a byte order.
    pub order: Option<ByteOrder>,
    /// Values take all `size` bytes the standard way: IEEE 754 binary32/binary64, or integers of
    /// full precision at bit 0 (what [`super::Hdf5Meta::values_f64`] decodes).
    pub standard: bool,
}

/// One stored value of type `t` (fixed-point or IEEE float of 1 to 8 bytes, `b` its bytes) as
/// f64, as libhdf5 converts it to `H5T_NATIVE_DOUBLE`.
pub(super) fn value_f64(b: &[u8], t: Datatype, order: ByteOrder) -> f64 {
    let mut w = [0u8; 8];
    match order {
        ByteOrder::Little => w[..b.len()].copy_from_slice(b),
        ByteOrder::Big => b.iter().rev().enumerate().for_each(|(i, &x)| w[i] = x),
    }
    let bits = u64::from_le_bytes(w);
    match (t.class, t.size) {
        (TypeClass::Float, 4) => f64::from(f32::from_bits(bits as u32)),
        (TypeClass::Float, _) => f64::from_bits(bits),
        (TypeClass::Integer { signed: true }, s) => {
            let shift = 64 - 8 * s as u32;
            (((bits << shift) as i64) >> shift) as f64
        }
        (_, _) => bits as f64,
    }
}
