//! A cheap look at an input file before the job starts: is it a NetCDF file at all, and (for
//! netCDF-4/HDF5) is it as long as its superblock says? One 48-byte read instead of a full
//! library open, so that a rank can check every file of its slice before the first collective
//! without paying an HDF5 open per file (about a millisecond here, more on Lustre). A file that
//! fails the look is then opened by the library, whose error names the problem; files the look
//! passes can still fail later (a damaged variable), which the ranks agree on after reading.

use std::io::Read;
use std::path::Path;

const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// What the first bytes of a file say.
#[derive(Debug, PartialEq, Eq)]
pub enum Look {
    /// HDF5 superblock at offset 0 whose end-of-file address fits the file; or netCDF classic.
    Plausible,
    /// Something is wrong (or unusual, like an HDF5 user block): open it properly to find out.
    Suspect,
}

/// Judge a file from its first bytes and its length.
pub fn look_at(head: &[u8], len: u64) -> Look {
    if head.len() >= 4 && &head[..3] == b"CDF" && matches!(head[3], 1 | 2 | 5) {
        return Look::Plausible;
    }
    if head.len() < 9 || &head[..8] != HDF5_SIGNATURE {
        return Look::Suspect;
    }
    // the superblock's end-of-file address (8-byte offsets), by superblock version
    let (at, size_of_offsets) = match head[8] {
        0 => (40, head.get(13)),
        1 => (44, head.get(13)),
        2 | 3 => (28, head.get(9)),
        _ => return Look::Suspect,
    };
    if size_of_offsets != Some(&8) || head.len() < at + 8 {
        return Look::Suspect;
    }
    let eof = u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    if eof <= len {
        Look::Plausible
    } else {
        Look::Suspect
    }
}

/// Read the first bytes of `path` and judge it (unreadable: suspect).
pub fn look(path: &Path) -> Look {
    let Ok(mut f) = std::fs::File::open(path) else { return Look::Suspect };
    let Ok(meta) = f.metadata() else { return Look::Suspect };
    let mut head = [0u8; 64];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(_) => return Look::Suspect,
        }
    }
    look_at(&head[..n], meta.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(eof: u64) -> Vec<u8> {
        let mut h = HDF5_SIGNATURE.to_vec();
        h.extend([2, 8, 8, 0]); // version 2, 8-byte offsets and lengths, flags
        h.extend(0u64.to_le_bytes()); // base address
        h.extend(u64::MAX.to_le_bytes()); // no superblock extension
        h.extend(eof.to_le_bytes());
        h.extend(48u64.to_le_bytes()); // root object header
        h
    }

    #[test]
    fn superblock_end_of_file_against_the_length() {
        assert_eq!(look_at(&v2(9839), 9839), Look::Plausible);
        assert_eq!(look_at(&v2(9839), 9239), Look::Suspect);
        assert_eq!(look_at(b"CDF\x01\0\0\0\0", 100), Look::Plausible);
        assert_eq!(look_at(b"this is not a NetCDF file", 25), Look::Suspect);
        assert_eq!(look_at(b"", 0), Look::Suspect);
        let mut v0 = HDF5_SIGNATURE.to_vec();
        v0.extend([0, 0, 0, 0, 0, 8, 8, 0, 4, 0, 16, 0, 0, 0, 0, 0]);
        v0.extend(0u64.to_le_bytes());
        v0.extend(u64::MAX.to_le_bytes());
        v0.extend(5000u64.to_le_bytes());
        assert_eq!(look_at(&v0, 5000), Look::Plausible);
        assert_eq!(look_at(&v0, 4999), Look::Suspect);
    }

    #[test]
    fn files_written_by_libnetcdf_look_plausible_until_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.nc");
        {
            let mut f = netcdf::create(&path).unwrap();
            f.add_dimension("x", 100).unwrap();
            let mut v = f.add_variable::<f64>("v", &["x"]).unwrap();
            v.put_values(&[1.5; 100], ..).unwrap();
        }
        assert_eq!(look(&path), Look::Plausible);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
        assert_eq!(look(&path), Look::Suspect);
        assert_eq!(look(&dir.path().join("absent.nc")), Look::Suspect);
    }
}
