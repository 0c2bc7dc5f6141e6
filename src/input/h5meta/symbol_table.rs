//! Old-style HDF5 groups (superblock versions 0 and 1): a symbol table message pointing at a
//! version 1 B-tree of group nodes (`TREE`, type 0) whose leaves are symbol table nodes
//! (`SNOD`), with the link names in a local heap (`HEAP`).
//!
//! Why it exists: files written with libhdf5's oldest format settings keep their root group
//! this way; the metadata parser finds a variable in them without libhdf5 (which is not
//! thread-safe), and libhdf5 stays the oracle the tests compare it with.

use super::cursor::{Cur, Visited};
use super::{bad, unsupported, Hdf5Meta, MetaError, Result, MAX_DEPTH};

impl Hdf5Meta<'_> {
    /// Look `name` up in an old-style group (v1 B-tree of symbol nodes, names in a local heap).
    pub(super) fn find_in_symbol_table(&self, data: &[u8], name: &str) -> Result<u64> {
        let mut c = Cur::new(data, "symbol table message");
        let btree = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a symbol table without a B-tree"))?;
        let heap = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a symbol table without a local heap"))?;
        // the local heap holding the names
        let h = self.src.read(heap, 8 + 2 * self.sizes.len as u64 + self.sizes.addr as u64, "local heap")?;
        let mut c = Cur::new(&h, "local heap");
        c.signature(b"HEAP")?;
        c.skip(4)?; // version, reserved
        let size = self.sizes.length(&mut c)?;
        let _free = self.sizes.length(&mut c)?;
        let at = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a local heap without data"))?;
        let names = self.src.read(at, size, "local heap data")?;
        let name_at = |offset: u64| -> Result<&[u8]> {
            let rest = usize::try_from(offset).ok().and_then(|o| names.get(o..));
            let rest = rest.ok_or_else(|| bad("a link name outside the local heap"))?;
            let end = rest.iter().position(|&b| b == 0).ok_or_else(|| bad("an unterminated link name"))?;
            Ok(&rest[..end])
        };
        let entry = self.sizes.len + self.sizes.addr + 24;
        let mut stack = vec![(btree, 0usize)];
        let mut visited = Visited::default();
        while let Some((node, depth)) = stack.pop() {
            visited.first(node, "group B-tree node")?;
            if depth > MAX_DEPTH {
                return Err(bad("the group B-tree is too deep"));
            }
            let pre = 8 + 2 * self.sizes.addr as u64;
            let head = self.src.read(node, pre, "group B-tree node")?;
            let mut c = Cur::new(&head, "group B-tree node");
            c.signature(b"TREE")?;
            let (kind, level, used) = (c.u8()?, c.u8()?, c.u16()?);
            if kind != 0 {
                return Err(bad(format!("a B-tree node of type {kind} in a group")));
            }
            let body = u64::from(used) * (self.sizes.len + self.sizes.addr) as u64 + self.sizes.len as u64;
            let whole = self.src.read(node, pre + body, "group B-tree node")?;
            let mut c = Cur::new(&whole, "group B-tree node");
            c.skip(pre as usize)?;
            for _ in 0..used {
                let _key = self.sizes.length(&mut c)?;
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a B-tree child at no address"))?;
                if level > 0 {
                    stack.push((child, depth + 1));
                    continue;
                }
                // a symbol table node
                let head = self.src.read(child, 8, "symbol table node")?;
                let mut s = Cur::new(&head, "symbol table node");
                s.signature(b"SNOD")?;
                let version = s.u8()?;
                if version != 1 {
                    return Err(unsupported(format!("symbol table node version {version}")));
                }
                s.skip(1)?;
                let n = u64::from(s.u16()?);
                let syms = self.src.read(child + 8, n * entry as u64, "symbol table node")?;
                for e in syms.chunks_exact(entry) {
                    let mut e = Cur::new(e, "symbol table entry");
                    let offset = self.sizes.length(&mut e)?;
                    let header = self.sizes.addr(&mut e)?;
                    if name_at(offset)? == name.as_bytes() {
                        return header.ok_or_else(|| bad("a symbol at no address"));
                    }
                }
            }
        }
        Err(MetaError::NotFound(name.into()))
    }
}
