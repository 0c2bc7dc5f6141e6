//! Jenkins' lookup3 hash as HDF5 uses it (`H5_checksum_lookup3`): the checksum of every
//! version-2 metadata structure (superblock v2/v3, `OHDR`, `OCHK`, `FRHP`, `FHIB`, `BTHD`,
//! `BTIN`, `BTLF`) and the hash by which v2 B-trees index link and attribute names.
//!
//! Why it exists: the metadata parser reads files without libhdf5 (which is not thread-safe),
//! so it verifies each structure's checksum itself before trusting a field of it, and finds a
//! name in a dense group by its hash as the library does.

use super::{bad, Result};

/// Jenkins' lookup3 hash (`H5_checksum_lookup3`): HDF5's metadata checksum and link-name hash.
pub fn lookup3(data: &[u8], init: u32) -> u32 {
    let rot = |x: u32, k: u32| x.rotate_left(k);
    let word = |k: &[u8]| {
        let mut w = [0u8; 4];
        w[..k.len()].copy_from_slice(k);
        u32::from_le_bytes(w)
    };
    let mut a = 0xdead_beefu32.wrapping_add(data.len() as u32).wrapping_add(init);
    let (mut b, mut c) = (a, a);
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        a = a.wrapping_sub(c) ^ rot(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ rot(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ rot(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c) ^ rot(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a) ^ rot(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b) ^ rot(b, 4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    if k.len() > 4 {
        b = b.wrapping_add(word(&k[4..k.len().min(8)]));
    }
    if k.len() > 8 {
        c = c.wrapping_add(word(&k[8..]));
    }
    c ^= b;
    c = c.wrapping_sub(rot(b, 14));
    a ^= c;
    a = a.wrapping_sub(rot(c, 11));
    b ^= a;
    b = b.wrapping_sub(rot(a, 25));
    c ^= b;
    c = c.wrapping_sub(rot(b, 16));
    a ^= c;
    a = a.wrapping_sub(rot(c, 4));
    b ^= a;
    b = b.wrapping_sub(rot(a, 14));
    c ^= b;
    c.wrapping_sub(rot(b, 24))
}

/// Check a structure whose last 4 bytes are the lookup3 checksum of the rest.
pub(super) fn verify(block: &[u8], what: &str) -> Result<()> {
    let n = block.len().checked_sub(4).ok_or_else(|| bad(format!("the {what} is cut short")))?;
    let stored = u32::from_le_bytes(block[n..].try_into().expect("4 bytes"));
    if lookup3(&block[..n], 0) != stored {
        return Err(bad(format!("the {what}'s checksum does not match")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup3_matches_the_reference_values() {
        // Bob Jenkins' published hashlittle() check values
        assert_eq!(lookup3(b"", 0), 0xdeadbeef);
        assert_eq!(lookup3(b"Four score and seven years ago", 0), 0x17770551);
        assert_eq!(lookup3(b"Four score and seven years ago", 1), 0xcd628161);
    }
}
