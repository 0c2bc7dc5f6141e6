//! The numeric types sstclim reads input values as ([`Storage`]), and the one wording for a
//! type it refuses.
//!
//! Why it exists apart: every reader of the input stage names a variable's storage type (the
//! library path's layout, both header parsers of the direct path, the decoding rules); kept
//! below all of them, none imports another for it.

use netcdf::types::{FloatType, IntType, NcVariableType};

/// Numeric storage types of input variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Storage {
    pub(super) fn from_nc(t: &NcVariableType) -> Option<Storage> {
        Some(match t {
            NcVariableType::Int(IntType::I8) => Storage::I8,
            NcVariableType::Int(IntType::U8) => Storage::U8,
            NcVariableType::Int(IntType::I16) => Storage::I16,
            NcVariableType::Int(IntType::U16) => Storage::U16,
            NcVariableType::Int(IntType::I32) => Storage::I32,
            NcVariableType::Int(IntType::U32) => Storage::U32,
            NcVariableType::Float(FloatType::F32) => Storage::F32,
            NcVariableType::Float(FloatType::F64) => Storage::F64,
            _ => return None,
        })
    }

    /// The storage of a type described by its class, sign and size in bytes, as the header
    /// parsers of the direct path find it; `Err` names a type sstclim does not read (the same
    /// words as [`super::VarLayout::inspect`] uses for it).
    pub fn from_parts(float: bool, signed: bool, size: usize) -> Result<Storage, String> {
        Ok(match (float, signed, size) {
            (true, _, 4) => Storage::F32,
            (true, _, 8) => Storage::F64,
            (false, true, 1) => Storage::I8,
            (false, false, 1) => Storage::U8,
            (false, true, 2) => Storage::I16,
            (false, false, 2) => Storage::U16,
            (false, true, 4) => Storage::I32,
            (false, false, 4) => Storage::U32,
            (false, true, 8) => return Err(unread("int64")),
            (false, false, 8) => return Err(unread("uint64")),
            (true, _, n) => return Err(unread(&format!("a float of {n} bytes"))),
            (false, _, n) => return Err(unread(&format!("an integer of {n} bytes"))),
        })
    }

    /// libnetcdf's default fill value for the type (marks missing data without `_FillValue`).
    pub fn default_fill(self) -> f64 {
        match self {
            Storage::I8 => -127.0,
            Storage::U8 => 255.0,
            Storage::I16 => -32767.0,
            Storage::U16 => 65535.0,
            Storage::I32 => -2_147_483_647.0,
            Storage::U32 => 4_294_967_295.0,
            Storage::F32 => f64::from(9.969_21e36_f32),
            Storage::F64 => 9.969_209_968_386_869e36,
        }
    }

    /// Bytes per stored value.
    pub fn size(self) -> usize {
        match self {
            Storage::I8 | Storage::U8 => 1,
            Storage::I16 | Storage::U16 => 2,
            Storage::I32 | Storage::U32 | Storage::F32 => 4,
            Storage::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Storage::I8 => "int8",
            Storage::U8 => "uint8",
            Storage::I16 => "int16",
            Storage::U16 => "uint16",
            Storage::I32 => "int32",
            Storage::U32 => "uint32",
            Storage::F32 => "float32",
            Storage::F64 => "float64",
        }
    }
}

/// Why a variable's type is refused, naming it: one wording for every read path.
pub(crate) fn unread(type_name: &str) -> String {
    format!("is stored as {type_name}, which sstclim does not read (int8..uint32, float, double)")
}
