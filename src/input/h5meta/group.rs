//! The root group's links: which structures the group uses ([`Structure`]), and the object
//! header a link name leads to, through new-style link messages stored compactly in the
//! group's header or densely (a link info message pointing at a fractal heap of link messages
//! indexed by a v2 B-tree of name hashes), or through an old-style symbol table
//! ([`super::symbol_table`]). Hard links only: soft and external links are left to libhdf5.
//!
//! Why it exists: every input file's data variable is found by name in the root group, on any
//! reader thread, without libhdf5 (which is not thread-safe); libhdf5 stays the oracle the
//! tests compare each way of storing links with.

use super::checksum::{lookup3, verify};
use super::cursor::{Cur, Visited};
use super::header::{MSG_LINK, MSG_LINK_INFO, MSG_SYMBOL_TABLE};
use super::{bad, unsupported, Hdf5Meta, MetaError, Result};

/// The v2 B-tree type of a link name index.
const LINK_NAME_INDEX: u8 = 5;

/// How the root group stores its links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkStorage {
    /// Old-style group: v1 B-tree (`levels` above its leaves), local heap and symbol nodes.
    SymbolTable { levels: u8 },
    /// Link messages in the group's object header.
    Compact,
    /// A fractal heap of link messages indexed by a v2 B-tree of `depth` levels above its
    /// leaves; `root_rows` is 0 where the heap's root is a direct block, else the rows of its
    /// root indirect block.
    Dense { root_rows: u16, depth: u16 },
}

/// The structures a file uses (for tests and logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Structure {
    pub superblock: u8,
    /// Object header version of the root group.
    pub root_header: u8,
    pub links: LinkStorage,
}

/// The link info message's addresses (dense storage where `heap` is defined).
struct LinkInfo {
    heap: Option<u64>,
    names: Option<u64>,
}

impl Hdf5Meta<'_> {
    /// Which structures the file uses.
    pub fn structure(&self) -> Result<Structure> {
        let links = if let Some(m) = self.root.find(MSG_SYMBOL_TABLE) {
            let btree = self.sizes.addr(&mut Cur::new(m.body("symbol table message")?, "symbol table message"))?;
            let node = self.src.read(btree.ok_or_else(|| bad("a symbol table without a B-tree"))?, 6, "B-tree")?;
            LinkStorage::SymbolTable { levels: node[5] }
        } else {
            match self.link_info()? {
                Some(LinkInfo { heap: Some(heap), names }) => {
                    let depth = self.btree2(names.ok_or_else(|| bad("dense links without a name index"))?)?.depth;
                    LinkStorage::Dense { root_rows: self.heap(heap)?.root_rows, depth }
                }
                Some(_) => LinkStorage::Compact,
                None => return Err(bad("the root object is not a group")),
            }
        };
        Ok(Structure { superblock: self.superblock, root_header: self.root.version, links })
    }

    fn link_info(&self) -> Result<Option<LinkInfo>> {
        let Some(m) = self.root.find(MSG_LINK_INFO) else { return Ok(None) };
        let mut c = Cur::new(m.body("link info message")?, "link info message");
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("link info message version {version}")));
        }
        let flags = c.u8()?;
        if flags & 0x01 != 0 {
            c.skip(8)?; // maximum creation index
        }
        let heap = self.sizes.addr(&mut c)?;
        let names = self.sizes.addr(&mut c)?;
        Ok(Some(LinkInfo { heap, names }))
    }

    /// The object header address of link `name` of the root group.
    pub(super) fn find(&self, name: &str) -> Result<u64> {
        if let Some(m) = self.root.find(MSG_SYMBOL_TABLE) {
            return self.find_in_symbol_table(m.body("symbol table message")?, name);
        }
        let info = self.link_info()?;
        let mut any_link = false;
        for m in self.root.msgs.iter().filter(|m| m.kind == MSG_LINK) {
            any_link = true;
            if let Some(addr) = self.link_to(m.body("link message")?, name)? {
                return Ok(addr);
            }
        }
        match info {
            Some(LinkInfo { heap: Some(heap), names }) => {
                let names = names.ok_or_else(|| bad("dense link storage without a name index"))?;
                self.find_dense(heap, names, name)
            }
            Some(_) => Err(MetaError::NotFound(name.into())),
            None if any_link => Err(MetaError::NotFound(name.into())),
            None => Err(bad("the root object is not a group")),
        }
    }

    /// The target of link message `data` if it is named `name`.
    fn link_to(&self, data: &[u8], name: &str) -> Result<Option<u64>> {
        let mut c = Cur::new(data, "link message");
        let version = c.u8()?;
        if version != 1 {
            return Err(unsupported(format!("link message version {version}")));
        }
        let flags = c.u8()?;
        let kind = if flags & 0x08 != 0 { c.u8()? } else { 0 };
        if flags & 0x04 != 0 {
            c.skip(8)?; // creation order
        }
        if flags & 0x10 != 0 {
            c.skip(1)?; // character set
        }
        let n = c.uint(1 << (flags & 0x03))?;
        let link_name = c.take(usize::try_from(n).map_err(|_| bad("link name length"))?)?;
        if link_name != name.as_bytes() {
            return Ok(None);
        }
        match kind {
            0 => Ok(Some(self.sizes.addr(&mut c)?.ok_or_else(|| bad("a hard link to no address"))?)),
            1 => Err(unsupported(format!("/{name} is a soft link"))),
            64 => Err(unsupported(format!("/{name} is an external link"))),
            k => Err(unsupported(format!("/{name} is a link of type {k}"))),
        }
    }

    /// Look `name` up in dense link storage: the v2 B-tree name index gives the heap IDs of the
    /// link messages whose name has the same hash.
    fn find_dense(&self, heap: u64, index: u64, name: &str) -> Result<u64> {
        let heap = self.heap(heap)?;
        let tree = self.btree2(index)?;
        if tree.kind != LINK_NAME_INDEX {
            return Err(bad(format!("a v2 B-tree of type {} as a link name index", tree.kind)));
        }
        if tree.rec_size < 5 {
            return Err(bad("link name index records too small"));
        }
        let hash = lookup3(name.as_bytes(), 0);
        let Some(root) = tree.root else { return Err(MetaError::NotFound(name.into())) };
        let mut stack = vec![(root, tree.root_nrec, tree.depth)];
        let mut visited = Visited::default();
        while let Some((node, nrec, depth)) = stack.pop() {
            visited.first(node, "link name index node")?;
            let rec = usize::from(tree.rec_size);
            let nrec = usize::from(nrec);
            let ptr = if depth > 0 { tree.pointer_size(depth) } else { 0 };
            let n_ptr = if depth > 0 { nrec + 1 } else { 0 };
            let len = 6 + nrec * rec + n_ptr * ptr + 4;
            let block = self.src.read(node, len as u64, "link name index node")?;
            let mut c = Cur::new(&block, "link name index node");
            c.signature(if depth > 0 { b"BTIN" } else { b"BTLF" })?;
            let (version, kind) = (c.u8()?, c.u8()?);
            if version != 0 || kind != tree.kind {
                return Err(bad("a link name index node of another version or type"));
            }
            verify(&block, "link name index node")?;
            let records = c.take(nrec * rec)?;
            let hash_of = |i: usize| u32::from_le_bytes(records[i * rec..i * rec + 4].try_into().expect("4 bytes"));
            for i in 0..nrec {
                if hash_of(i) == hash {
                    let id = &records[i * rec + 4..(i + 1) * rec];
                    let link = heap.object(self, id)?;
                    if let Some(addr) = self.link_to(&link, name)? {
                        return Ok(addr);
                    }
                }
            }
            for i in 0..n_ptr {
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a B-tree child at no address"))?;
                let child_nrec = c.uint(tree.max_nrec_size)?;
                if depth > 1 {
                    c.skip(tree.cum_sizes[usize::from(depth) - 1])?;
                }
                // child i holds the records between records i - 1 and i
                let above = i == 0 || hash_of(i - 1) <= hash;
                let below = i == nrec || hash <= hash_of(i);
                if above && below {
                    let child_nrec = u16::try_from(child_nrec).map_err(|_| bad("B-tree node record count"))?;
                    stack.push((child, child_nrec, depth - 1));
                }
            }
        }
        Err(MetaError::NotFound(name.into()))
    }
}
