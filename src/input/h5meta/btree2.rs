//! Version 2 B-tree headers (`BTHD`, checksummed): the record type, record size, depth and
//! root of a tree, and the sizes of the record counts in its internal nodes, computed as
//! `H5B2__hdr_init` computes them. The nodes themselves (`BTIN`, `BTLF`) are walked by the
//! dense link lookup ([`super::group`]) and the dense attribute reader
//! ([`super::attributes`]), each for its own record type.
//!
//! Why it exists: a group of many links (and a variable of more than 8 attributes, in netCDF-4)
//! is indexed by name hash in such a tree; the metadata parser reads it without libhdf5 (which
//! is not thread-safe), and libhdf5 stays the oracle the tests compare it with.

use super::checksum::verify;
use super::cursor::{limit_enc_size, Cur};
use super::{bad, unsupported, Hdf5Meta, Result, MAX_DEPTH};

/// A v2 B-tree header, with the field sizes of its internal nodes.
pub(super) struct BTree2 {
    pub(super) kind: u8,
    pub(super) rec_size: u16,
    pub(super) depth: u16,
    pub(super) root: Option<u64>,
    pub(super) root_nrec: u16,
    addr_size: usize,
    /// Bytes of a child's record count in internal nodes.
    pub(super) max_nrec_size: usize,
    /// Bytes of the total record count below a child, by the child's depth.
    pub(super) cum_sizes: Vec<usize>,
}

impl BTree2 {
    /// Bytes of one child pointer in an internal node at `depth` (>= 1).
    pub(super) fn pointer_size(&self, depth: u16) -> usize {
        self.addr_size + self.max_nrec_size + self.cum_sizes[usize::from(depth) - 1]
    }
}

impl Hdf5Meta<'_> {
    /// A v2 B-tree's header.
    pub(super) fn btree2(&self, addr: u64) -> Result<BTree2> {
        let (o, l) = (self.sizes.addr, self.sizes.len);
        let block = self.src.read(addr, (4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + o + 2 + l + 4) as u64, "v2 B-tree header")?;
        let mut c = Cur::new(&block, "v2 B-tree header");
        c.signature(b"BTHD")?;
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("v2 B-tree version {version}")));
        }
        verify(&block, "v2 B-tree header")?;
        let kind = c.u8()?;
        let node_size = u64::from(c.u32()?);
        let rec_size = c.u16()?;
        let depth = c.u16()?;
        c.skip(2)?; // split and merge percentages
        let root = self.sizes.addr(&mut c)?;
        let root_nrec = c.u16()?;
        if rec_size == 0 || usize::from(depth) > MAX_DEPTH || node_size < 10 + u64::from(rec_size) {
            return Err(bad("a v2 B-tree with impossible sizes"));
        }
        // the sizes of record counts in internal nodes (as `H5B2__hdr_init` computes them)
        let max_leaf = (node_size - 10) / u64::from(rec_size);
        let max_nrec_size = limit_enc_size(max_leaf);
        let (mut cum, mut cum_sizes) = (vec![max_leaf], vec![0usize]);
        for d in 1..=usize::from(depth) {
            let ptr = (o + max_nrec_size + cum_sizes[d - 1]) as u64;
            let fixed = 10 + ptr;
            let max = node_size.checked_sub(fixed).map(|n| n / (u64::from(rec_size) + ptr)).unwrap_or(0);
            let c = (max + 1).saturating_mul(cum[d - 1]).saturating_add(max);
            cum.push(c);
            cum_sizes.push(limit_enc_size(c));
        }
        Ok(BTree2 { kind, rec_size, depth, root, root_nrec, addr_size: o, max_nrec_size, cum_sizes })
    }
}
