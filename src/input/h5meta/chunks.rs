//! The chunk indexes of chunked datasets: where each chunk is stored, its stored size and its
//! filter mask, read from the version-1 B-tree (layout messages 1 to 3: what netCDF-C and
//! netCDF4-python write with HDF5 1.10-1.14's default format), and, for files of the newer
//! format (layout message 4), the single-chunk, implicit, fixed-array, extensible-array and
//! version-2 B-tree indexes.
//!
//! Why it exists: the direct read path `pread`s and decodes a compressed file's chunks on
//! every reader thread, which needs their addresses without libhdf5 (not thread-safe). Every
//! checksummed structure is verified; what is not read here (paged extensible-array data
//! blocks, an unlimited dimension other than the first) is [`super::MetaError::Unsupported`],
//! so that the caller asks the library, and a corrupt index is `Malformed`, as is a chunk
//! whose key fails `chunk_keys`' checks (outside the dataset or the file, an impossible filter
//! mask or size, two chunks at one place).

use super::checksum::verify;
use super::chunk_keys::{check_chunks, ChunkLoc, Shape};
use super::cursor::{log2, Cur, Visited};
use super::dataset::{ChunkIndex, Chunking, Dataset, Layout};
use super::{bad, unsupported, Hdf5Meta, Result, MAX_DEPTH};

/// No chunk index holds more chunks than this (against corrupt counts; more are left to the
/// library).
const MAX_CHUNKS: u64 = 1 << 22;
/// Chunks larger than this (uncompressed) are left to the library (HDF5's own limit is 4 GiB).
const MAX_CHUNK_BYTES: u64 = 1 << 31;

impl Hdf5Meta<'_> {
    /// Every allocated chunk of a chunked dataset, in no particular order.
    pub fn chunks(&self, ds: &Dataset) -> Result<Vec<ChunkLoc>> {
        let Layout::Chunked(ch) = &ds.layout else {
            return Err(bad(format!("chunks of {} storage", ds.layout.name())));
        };
        let unfiltered = ch
            .dims
            .iter()
            .try_fold(ds.dtype.size as u64, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= MAX_CHUNK_BYTES)
            .ok_or_else(|| unsupported(format!("chunks of {:?} values of {} bytes", ch.dims, ds.dtype.size)))?;
        // array indexes number chunks on the grid (the B-trees hold their offsets)
        let grid = || Grid::new(ds, ch);
        let mut out = Vec::new();
        match ch.index {
            ChunkIndex::BTree1(None)
            | ChunkIndex::Single { addr: None, .. }
            | ChunkIndex::Implicit(None)
            | ChunkIndex::FixedArray(None)
            | ChunkIndex::ExtensibleArray(None)
            | ChunkIndex::BTree2(None) => {}
            ChunkIndex::BTree1(Some(a)) => self.btree1_chunks(a, ds.dims.len(), &mut out)?,
            ChunkIndex::Single { addr: Some(a), filtered } => {
                let (size, mask) = filtered.unwrap_or((unfiltered, 0));
                out.push(ChunkLoc { offset: vec![0; ds.dims.len()], addr: a, size, mask });
            }
            ChunkIndex::Implicit(Some(a)) => {
                let grid = grid()?;
                if grid.n_linear() > MAX_CHUNKS {
                    return Err(unsupported("more than 4 Mi chunks"));
                }
                for i in 0..grid.n_linear() {
                    let addr =
                        i.checked_mul(unfiltered).and_then(|o| o.checked_add(a)).ok_or_else(|| bad("chunk address"))?;
                    if let Some(offset) = grid.offset_of(i) {
                        out.push(ChunkLoc { offset, addr, size: unfiltered, mask: 0 });
                    }
                }
            }
            ChunkIndex::FixedArray(Some(a)) => {
                let grid = grid()?;
                for (i, e) in self.fixed_array(a, ds.pipeline.is_empty())?.got {
                    grid.push(i, e, unfiltered, &mut out);
                }
            }
            ChunkIndex::ExtensibleArray(Some(a)) => {
                let grid = grid()?;
                for (i, e) in self.extensible_array(a, ds.pipeline.is_empty())?.got {
                    grid.push(i, e, unfiltered, &mut out);
                }
            }
            ChunkIndex::BTree2(Some(a)) => self.btree2_chunks(a, ch, unfiltered, &mut out)?,
        }
        let shape = Shape {
            dims: &ds.dims,
            chunk: &ch.dims,
            pipeline: &ds.pipeline,
            unfiltered_edges: ch.unfiltered_edges,
            unfiltered,
            file_len: self.src.len,
        };
        check_chunks(&out, &shape)?;
        Ok(out)
    }

    /// Raw data chunk nodes of a version-1 B-tree (`TREE`, node type 1): each key holds the
    /// chunk's stored size, filter mask and element offsets; the child after it, the chunk.
    fn btree1_chunks(&self, root: u64, rank: usize, out: &mut Vec<ChunkLoc>) -> Result<()> {
        let o = self.sizes.addr;
        let key = 8 + 8 * (rank + 1);
        let mut stack = vec![(root, None::<u8>)];
        let mut visited = Visited::default();
        while let Some((node, parent_level)) = stack.pop() {
            visited.first(node, "chunk B-tree node")?;
            let head = self.src.read(node, (8 + 2 * o) as u64, "chunk B-tree node")?;
            let mut c = Cur::new(&head, "chunk B-tree node");
            c.signature(b"TREE")?;
            let (kind, level, used) = (c.u8()?, c.u8()?, usize::from(c.u16()?));
            if kind != 1 {
                return Err(bad(format!("a B-tree node of type {kind} as a chunk index")));
            }
            if parent_level.is_some_and(|p| level.checked_add(1) != Some(p)) || usize::from(level) > MAX_DEPTH {
                return Err(bad("a chunk B-tree node at the wrong level"));
            }
            let len = 8 + 2 * o + used * (key + o) + key;
            let block = self.src.read(node, len as u64, "chunk B-tree node")?;
            let mut c = Cur::new(&block, "chunk B-tree node");
            c.skip(8 + 2 * o)?;
            for _ in 0..used {
                let size = u64::from(c.u32()?);
                let mask = c.u32()?;
                let offset = (0..rank).map(|_| c.uint(8)).collect::<Result<Vec<u64>>>()?;
                // the element-size dimension's offset (libhdf5 compares it when it looks a chunk up)
                match c.uint(8)? {
                    0 => {}
                    e => return Err(bad(format!("the chunk at {offset:?} has element offset {e} (always 0)"))),
                }
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a chunk B-tree child at no address"))?;
                if level == 0 {
                    out.push(ChunkLoc { offset, addr: child, size, mask });
                    if out.len() as u64 > MAX_CHUNKS {
                        return Err(unsupported("more than 4 Mi chunks"));
                    }
                } else {
                    stack.push((child, Some(level)));
                }
            }
        }
        Ok(())
    }

    /// The elements of a fixed array (`FAHD` header, `FADB` data block, paged or not).
    fn fixed_array(&self, addr: u64, unfiltered: bool) -> Result<Elements> {
        let (o, l) = (self.sizes.addr, self.sizes.len);
        let block = self.src.read(addr, (4 + 4 + l + o + 4) as u64, "fixed array header")?;
        let mut c = Cur::new(&block, "fixed array header");
        c.signature(b"FAHD")?;
        if c.u8()? != 0 {
            return Err(unsupported("a fixed array of another version"));
        }
        verify(&block, "fixed array header")?;
        let client = c.u8()?;
        let elem = usize::from(c.u8()?);
        let page_bits = c.u8()?;
        let n = self.sizes.length(&mut c)?;
        let data = self.sizes.addr(&mut c)?;
        let format = ElementFormat::new(client, elem, o, unfiltered)?;
        if n > MAX_CHUNKS || page_bits > 32 {
            return Err(bad(format!("a fixed array of {n} elements")));
        }
        let mut out = Elements::default();
        let Some(data) = data else { return Ok(out) };
        let prefix = 4 + 1 + 1 + o;
        let page = 1u64 << page_bits;
        if n <= page {
            let len = prefix + n as usize * elem + 4;
            let block = self.src.read(data, len as u64, "fixed array data block")?;
            let mut c = Cur::new(&block, "fixed array data block");
            c.signature(b"FADB")?;
            verify(&block, "fixed array data block")?;
            c.skip(prefix - 4)?;
            for _ in 0..n {
                out.push(format.read(&mut c, o)?)?;
            }
            return Ok(out);
        }
        // paged: a bitmap of initialised pages, then the pages after the block
        let pages = n.div_ceil(page);
        let bitmap = pages.div_ceil(8) as usize;
        let len = prefix + bitmap + 4;
        let block = self.src.read(data, len as u64, "fixed array data block")?;
        let mut c = Cur::new(&block, "fixed array data block");
        c.signature(b"FADB")?;
        verify(&block, "fixed array data block")?;
        c.skip(prefix - 4)?;
        let bits = c.take(bitmap)?.to_vec();
        let page_len = page * elem as u64 + 4;
        for p in 0..pages {
            let count = page.min(n - p * page);
            if bits[(p / 8) as usize] & (0x80 >> (p % 8)) == 0 {
                out.skip(count)?;
                continue;
            }
            let at = data + len as u64 + p * page_len;
            let block = self.src.read(at, count * elem as u64 + 4, "fixed array page")?;
            verify(&block, "fixed array page")?;
            let mut c = Cur::new(&block, "fixed array page");
            for _ in 0..count {
                out.push(format.read(&mut c, o)?)?;
            }
        }
        Ok(out)
    }

    /// The elements of an extensible array (`EAHD` header, `EAIB` index block, `EASB`
    /// secondary blocks, `EADB` data blocks; paged data blocks are not read here).
    fn extensible_array(&self, addr: u64, unfiltered: bool) -> Result<Elements> {
        let (o, l) = (self.sizes.addr, self.sizes.len);
        let block = self.src.read(addr, (4 + 1 + 1 + 6 + 6 * l + o + 4) as u64, "extensible array header")?;
        let mut c = Cur::new(&block, "extensible array header");
        c.signature(b"EAHD")?;
        if c.u8()? != 0 {
            return Err(unsupported("an extensible array of another version"));
        }
        verify(&block, "extensible array header")?;
        let client = c.u8()?;
        let elem = usize::from(c.u8()?);
        let (max_bits, iblock_elmts, min_elmts_dblk, min_ptrs, page_bits) =
            (c.u8()?, c.u8()?, c.u8()?, c.u8()?, c.u8()?);
        // (order of the fields: max bits, index block elements, data block minimum elements,
        // secondary block minimum data block pointers, data block page bits)
        c.skip(5 * l)?; // statistics
        let max_index = self.sizes.length(&mut c)?;
        let _ = max_index;
        let iblock = self.sizes.addr(&mut c)?;
        let format = ElementFormat::new(client, elem, o, unfiltered)?;
        if max_bits == 0 || max_bits > 64 || min_elmts_dblk == 0 || min_ptrs == 0 || page_bits > 32 {
            return Err(bad("an extensible array of impossible parameters"));
        }
        if !min_elmts_dblk.is_power_of_two() || !min_ptrs.is_power_of_two() {
            return Err(bad("an extensible array of impossible block sizes"));
        }
        let mut out = Elements::default();
        let Some(iblock) = iblock else { return Ok(out) };
        // super block sizes (`H5EA__hdr_init`)
        let nsblks = 1 + usize::from(max_bits).saturating_sub(log2(u64::from(min_elmts_dblk)) as usize);
        let sblk = |u: usize| -> (u64, u64) { (1u64 << (u / 2), (1u64 << u.div_ceil(2)) * u64::from(min_elmts_dblk)) };
        let iblk_nsblks = 2 * log2(u64::from(min_ptrs)) as usize;
        let ndblk_addrs = 2 * (usize::from(min_ptrs) - 1);
        let nsblk_addrs = nsblks.saturating_sub(iblk_nsblks);
        let arr_off = usize::from(max_bits).div_ceil(8);
        let page = 1u64 << page_bits;
        let prefix = 4 + 1 + 1 + o;
        let len = prefix + usize::from(iblock_elmts) * elem + (ndblk_addrs + nsblk_addrs) * o + 4;
        let block = self.src.read(iblock, len as u64, "extensible array index block")?;
        let mut c = Cur::new(&block, "extensible array index block");
        c.signature(b"EAIB")?;
        verify(&block, "extensible array index block")?;
        c.skip(prefix - 4)?;
        for _ in 0..iblock_elmts {
            out.push(format.read(&mut c, o)?)?;
        }
        let dblks = (0..ndblk_addrs).map(|_| self.sizes.addr(&mut c)).collect::<Result<Vec<_>>>()?;
        let sblks = (0..nsblk_addrs).map(|_| self.sizes.addr(&mut c)).collect::<Result<Vec<_>>>()?;
        // a data block of `n` elements (None: never allocated)
        let data_block = |at: Option<u64>, n: u64, out: &mut Elements| -> Result<()> {
            let Some(at) = at else { return out.skip(n) };
            if n > page {
                return Err(unsupported("paged extensible array data blocks"));
            }
            let len = prefix + arr_off + n as usize * elem + 4;
            let block = self.src.read(at, len as u64, "extensible array data block")?;
            let mut c = Cur::new(&block, "extensible array data block");
            c.signature(b"EADB")?;
            verify(&block, "extensible array data block")?;
            c.skip(prefix - 4 + arr_off)?;
            for _ in 0..n {
                out.push(format.read(&mut c, o)?)?;
            }
            Ok(())
        };
        // data blocks of the super blocks the index block points to directly, in order
        let mut d = 0;
        for u in 0..iblk_nsblks.min(nsblks) {
            let (ndblks, nelmts) = sblk(u);
            for _ in 0..ndblks {
                data_block(dblks.get(d).copied().flatten(), nelmts, &mut out)?;
                d += 1;
            }
        }
        // then the secondary blocks, each pointing to its data blocks
        for (k, sb) in sblks.iter().enumerate() {
            let (ndblks, nelmts) = sblk(iblk_nsblks + k);
            let Some(sb) = *sb else {
                // an unallocated secondary block: no chunks (nor any after it past the limit)
                if out.skip(ndblks.saturating_mul(nelmts)).is_err() {
                    return Ok(out);
                }
                continue;
            };
            if nelmts > page {
                return Err(unsupported("paged extensible array data blocks"));
            }
            let len = prefix + arr_off + ndblks as usize * o + 4;
            let block = self.src.read(sb, len as u64, "extensible array secondary block")?;
            let mut c = Cur::new(&block, "extensible array secondary block");
            c.signature(b"EASB")?;
            verify(&block, "extensible array secondary block")?;
            c.skip(prefix - 4 + arr_off)?;
            for _ in 0..ndblks {
                let at = self.sizes.addr(&mut c)?;
                data_block(at, nelmts, &mut out)?;
            }
        }
        Ok(out)
    }

    /// Chunk records of a version-2 B-tree (types 10, unfiltered, and 11, filtered): the
    /// chunk's address, stored size and filter mask, and its scaled offsets.
    fn btree2_chunks(&self, addr: u64, ch: &Chunking, unfiltered: u64, out: &mut Vec<ChunkLoc>) -> Result<()> {
        let tree = self.btree2(addr)?;
        let o = self.sizes.addr;
        let rank = ch.dims.len();
        let rec = usize::from(tree.rec_size);
        let size_len = match tree.kind {
            10 if rec == o + 8 * rank => 0,
            11 if rec > o + 4 + 8 * rank && rec <= o + 12 + 8 * rank => rec - o - 4 - 8 * rank,
            k => return Err(bad(format!("a v2 B-tree of type {k} and {rec}-byte records as a chunk index"))),
        };
        let Some(root) = tree.root else { return Ok(()) };
        let mut stack = vec![(root, tree.root_nrec, tree.depth)];
        let mut visited = Visited::default();
        while let Some((node, nrec, depth)) = stack.pop() {
            visited.first(node, "chunk index node")?;
            let nrec = usize::from(nrec);
            let ptr = if depth > 0 { tree.pointer_size(depth) } else { 0 };
            let n_ptr = if depth > 0 { nrec + 1 } else { 0 };
            let len = 6 + nrec * rec + n_ptr * ptr + 4;
            let block = self.src.read(node, len as u64, "chunk index node")?;
            let mut c = Cur::new(&block, "chunk index node");
            c.signature(if depth > 0 { b"BTIN" } else { b"BTLF" })?;
            let (version, kind) = (c.u8()?, c.u8()?);
            if version != 0 || kind != tree.kind {
                return Err(bad("a chunk index node of another version or type"));
            }
            verify(&block, "chunk index node")?;
            for _ in 0..nrec {
                let addr = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a chunk record at no address"))?;
                let (size, mask) = if size_len > 0 { (c.uint(size_len)?, c.u32()?) } else { (unfiltered, 0) };
                let mut offset = Vec::with_capacity(rank);
                for d in &ch.dims {
                    offset.push(c.uint(8)?.checked_mul(*d).ok_or_else(|| bad("a chunk offset overflows"))?);
                }
                out.push(ChunkLoc { offset, addr, size, mask });
            }
            if out.len() as u64 > MAX_CHUNKS {
                return Err(unsupported("more than 4 Mi chunks"));
            }
            for _ in 0..n_ptr {
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a B-tree child at no address"))?;
                let child_nrec = c.uint(tree.max_nrec_size)?;
                if depth > 1 {
                    c.skip(tree.cum_sizes[usize::from(depth) - 1])?;
                }
                let child_nrec = u16::try_from(child_nrec).map_err(|_| bad("B-tree node record count"))?;
                stack.push((child, child_nrec, depth - 1));
            }
        }
        Ok(())
    }
}

/// The allocated elements of an array index, by their index in the array.
#[derive(Default)]
struct Elements {
    next: u64,
    got: Vec<(u64, Element)>,
}

impl Elements {
    fn push(&mut self, e: Element) -> Result<()> {
        if e.addr.is_some() {
            self.got.push((self.next, e));
        }
        self.skip(1)
    }

    /// `n` elements never allocated.
    fn skip(&mut self, n: u64) -> Result<()> {
        self.next = self.next.saturating_add(n);
        if self.next > MAX_CHUNKS {
            return Err(unsupported("more than 4 Mi chunks"));
        }
        Ok(())
    }
}

/// An array index's element: a chunk's address (None: not allocated), stored size and mask.
#[derive(Clone, Copy, Debug, Default)]
struct Element {
    addr: Option<u64>,
    filtered: Option<(u64, u32)>,
}

/// How array elements are encoded: the address, then for filtered chunks the stored size in
/// `size_len` bytes and the filter mask.
struct ElementFormat {
    size_len: usize,
}

impl ElementFormat {
    fn new(client: u8, elem: usize, addr: usize, unfiltered: bool) -> Result<ElementFormat> {
        match client {
            0 if elem == addr => Ok(ElementFormat { size_len: 0 }),
            1 if elem > addr + 4 && elem <= addr + 12 && !unfiltered => Ok(ElementFormat { size_len: elem - addr - 4 }),
            _ => Err(bad(format!("array elements of client {client} and {elem} bytes as a chunk index"))),
        }
    }

    fn read(&self, c: &mut Cur<'_>, addr: usize) -> Result<Element> {
        let v = c.uint(addr)?;
        let undefined = if addr == 8 { u64::MAX } else { (1u64 << (8 * addr)) - 1 };
        let filtered = if self.size_len > 0 { Some((c.uint(self.size_len)?, c.u32()?)) } else { None };
        Ok(Element { addr: (v != undefined).then_some(v), filtered })
    }
}

/// The chunk grid over the dataset's maximum dimensions, which array indexes number their
/// elements by (`max_down_chunks`, row-major; an unlimited first dimension by its current
/// length).
struct Grid {
    chunk: Vec<u64>,
    dims: Vec<u64>,
    /// Chunks along each dimension of the numbering.
    counts: Vec<u64>,
}

impl Grid {
    fn new(ds: &Dataset, ch: &Chunking) -> Result<Grid> {
        let max = ds.max_dims.clone().unwrap_or_else(|| ds.dims.clone());
        if max.len() != ds.dims.len() {
            return Err(bad("maximum dimensions of another rank"));
        }
        let mut counts = Vec::with_capacity(max.len());
        for (i, ((&m, &d), &c)) in max.iter().zip(&ds.dims).zip(&ch.dims).enumerate() {
            counts.push(if m == u64::MAX {
                if i != 0 {
                    // libhdf5 numbers such chunks with the unlimited dimension moved first
                    return Err(unsupported("an unlimited dimension other than the first"));
                }
                d.div_ceil(c)
            } else {
                m.max(d).div_ceil(c)
            });
        }
        Ok(Grid { chunk: ch.dims.clone(), dims: ds.dims.clone(), counts })
    }

    fn n_linear(&self) -> u64 {
        self.counts.iter().fold(1u64, |n, &c| n.saturating_mul(c))
    }

    /// The element offset of linear chunk `i`, or None where it lies outside the dataset.
    fn offset_of(&self, mut i: u64) -> Option<Vec<u64>> {
        let mut offset = vec![0; self.counts.len()];
        for k in (0..self.counts.len()).rev() {
            let n = self.counts[k].max(1);
            offset[k] = (i % n) * self.chunk[k];
            i /= n;
        }
        (i == 0 && offset.iter().zip(&self.dims).all(|(o, d)| o < d)).then_some(offset)
    }

    fn push(&self, i: u64, e: Element, unfiltered: u64, out: &mut Vec<ChunkLoc>) {
        if let (Some(addr), Some(offset)) = (e.addr, self.offset_of(i)) {
            let (size, mask) = e.filtered.unwrap_or((unfiltered, 0));
            out.push(ChunkLoc { offset, addr, size, mask });
        }
    }
}
