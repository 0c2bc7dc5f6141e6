//! What the direct read path must know of a file before parsing it: its format (told by its
//! first bytes) and the byte order of its stored values, and the type of its reasons for
//! refusing a file.
//!
//! Why it exists: the header parsers ([`super::h5meta`], `netcdf3`) and the direct
//! read path above them ([`super::direct`]) all speak of these; kept here, below all three, the
//! parsers never import the path that uses them.

/// Byte order of stored values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    Little,
    Big,
}

impl ByteOrder {
    /// Whether values in this order are already in the host's.
    pub fn is_native(self) -> bool {
        match self {
            ByteOrder::Little => cfg!(target_endian = "little"),
            ByteOrder::Big => cfg!(target_endian = "big"),
        }
    }
}

/// The file formats the direct read path parses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Hdf5,
    NetCdf3,
}

impl Format {
    /// The format of a file whose first 8 bytes are `head`: HDF5 without a user block, or
    /// NetCDF-3 (classic, 64-bit offset, CDF-5); None for anything else.
    pub fn of(head: &[u8; 8]) -> Option<Format> {
        if head == HDF5_SIGNATURE {
            Some(Format::Hdf5)
        } else if &head[..3] == b"CDF" {
            Some(Format::NetCdf3)
        } else {
            None
        }
    }
}

/// The first bytes of an HDF5 file without a user block.
pub(crate) const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Why a file cannot take the fast path (for the log; the library path handles it).
pub type NotDirect = String;
