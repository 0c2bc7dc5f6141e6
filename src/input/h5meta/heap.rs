//! Fractal heaps (`FRHP` headers, `FHIB` indirect and `FHDB` direct blocks): the header's
//! doubling table, and the object a heap ID names, "managed" (found by walking the doubling
//! table down through indirect blocks) or "tiny" (stored in the ID itself). Heaps with I/O
//! filters and "huge" objects are left to libhdf5.
//!
//! Why it exists: dense groups keep their link messages, and netCDF-4 variables of more than 8
//! attributes their attribute messages, in a fractal heap; the metadata parser reads them
//! without libhdf5 (which is not thread-safe), and libhdf5 stays the oracle the tests compare
//! it with.

use super::checksum::verify;
use super::cursor::{limit_enc_size, log2, Cur};
use super::{bad, unsupported, Hdf5Meta, Result, MAX_DEPTH};

/// A fractal heap header: the doubling table of its managed objects.
pub(super) struct FractalHeap {
    addr: u64,
    id_len: usize,
    width: u64,
    start: u64,
    first_row_bits: u32,
    max_direct_rows: u32,
    root: Option<u64>,
    pub(super) root_rows: u16,
    off_size: usize,
    len_size: usize,
}

impl FractalHeap {
    /// Block size of row `r` of the doubling table.
    fn row_size(&self, r: u32) -> Option<u64> {
        if r == 0 {
            Some(self.start)
        } else {
            self.start.checked_shl(r - 1).filter(|&s| s >> (r - 1) == self.start)
        }
    }

    /// Offset of row `r` from its indirect block's start.
    fn row_offset(&self, r: u32) -> Option<u64> {
        if r == 0 {
            Some(0)
        } else {
            self.row_size(r)?.checked_mul(self.width)
        }
    }

    /// The object a heap ID names.
    pub(super) fn object(&self, meta: &Hdf5Meta<'_>, id: &[u8]) -> Result<Vec<u8>> {
        let id = id.get(..self.id_len).ok_or_else(|| bad("a heap ID shorter than the heap's"))?;
        let flags = id[0];
        if flags >> 6 != 0 {
            return Err(unsupported(format!("heap ID version {}", flags >> 6)));
        }
        match (flags >> 4) & 0x03 {
            0 => {}
            1 => return Err(unsupported("a 'huge' fractal heap object")),
            2 => {
                // tiny: the object is in the ID
                let (len, at) = if self.id_len <= 18 {
                    (usize::from(flags & 0x0F) + 1, 1)
                } else {
                    let hi = usize::from(flags & 0x0F) << 8;
                    (hi + usize::from(*id.get(1).ok_or_else(|| bad("heap ID"))?) + 1, 2)
                };
                return id.get(at..at + len).map(<[u8]>::to_vec).ok_or_else(|| bad("a tiny heap object too long"));
            }
            t => return Err(bad(format!("heap ID type {t}"))),
        }
        let mut c = Cur::new(&id[1..], "heap ID");
        let offset = c.uint(self.off_size)?;
        let len = c.uint(self.len_size)?;
        let root = self.root.ok_or_else(|| bad("an object of an empty fractal heap"))?;
        let (sizes, o) = (meta.sizes, meta.sizes.addr);
        let dblock_prefix = (4 + 1 + o + self.off_size) as u64;
        // the direct block holding `offset`: (its address, its size, the object's offset in it)
        let (block, size, inner) = if self.root_rows == 0 {
            (root, self.start, offset)
        } else {
            let (mut iblock, mut rows, mut block_off) = (root, u32::from(self.root_rows), 0u64);
            let mut depth = 0;
            loop {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(bad("fractal heap indirect blocks nest too deep"));
                }
                let entries = u64::from(rows) * self.width;
                let len = dblock_prefix + entries * o as u64 + 4;
                let b = meta.src.read(iblock, len, "fractal heap indirect block")?;
                let mut c = Cur::new(&b, "fractal heap indirect block");
                c.signature(b"FHIB")?;
                c.skip(1)?;
                verify(&b, "fractal heap indirect block")?;
                if sizes.addr(&mut c)? != Some(self.addr) {
                    return Err(bad("a fractal heap indirect block of another heap"));
                }
                if c.uint(self.off_size)? != block_off {
                    return Err(bad("a fractal heap indirect block at the wrong offset"));
                }
                let rel = offset.checked_sub(block_off).ok_or_else(|| bad("heap offset before its block"))?;
                // the row and column of `rel` in this block
                let row = (0..rows)
                    .find(|&r| {
                        let (start, size) = (self.row_offset(r), self.row_size(r));
                        matches!((start, size), (Some(s), Some(z)) if rel >= s && rel - s < z.saturating_mul(self.width))
                    })
                    .ok_or_else(|| bad("a heap offset outside the heap"))?;
                let size = self.row_size(row).expect("found above");
                let within = rel - self.row_offset(row).expect("found above");
                let col = within / size;
                c.skip(((u64::from(row) * self.width + col) as usize) * o)?;
                let child = sizes.addr(&mut c)?.ok_or_else(|| bad("a heap offset in an unallocated block"))?;
                if row < self.max_direct_rows {
                    break (child, size, within - col * size);
                }
                // an indirect block of its own rows (`H5HF__dtable_size_to_rows`)
                rows = (log2(size) + 1)
                    .checked_sub(self.first_row_bits)
                    .filter(|&r| r > 0)
                    .ok_or_else(|| bad("a fractal heap indirect block too small for a row"))?;
                iblock = child;
                block_off += self.row_offset(row).expect("found above") + col * size;
            }
        };
        if inner < dblock_prefix || !matches!(inner.checked_add(len), Some(end) if end <= size) {
            return Err(bad("a heap object outside its block"));
        }
        let head = meta.src.read(block, 5, "fractal heap direct block")?;
        let mut c = Cur::new(&head, "fractal heap direct block");
        c.signature(b"FHDB")?;
        Ok(meta.src.read(block + inner, len, "fractal heap object")?.into_owned())
    }
}

impl Hdf5Meta<'_> {
    /// A fractal heap's header.
    pub(super) fn heap(&self, addr: u64) -> Result<FractalHeap> {
        let (o, l) = (self.sizes.addr, self.sizes.len);
        let len = 4 + 1 + 2 + 2 + 1 + 4 + (l + o + l + o + 8 * l) + 2 + l + l + 2 + 2 + o + 2 + 4;
        let block = self.src.read(addr, len as u64, "fractal heap header")?;
        let mut c = Cur::new(&block, "fractal heap header");
        c.signature(b"FRHP")?;
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("fractal heap version {version}")));
        }
        let id_len = usize::from(c.u16()?);
        let filter_len = c.u16()?;
        if filter_len > 0 {
            return Err(unsupported("a fractal heap with I/O filters"));
        }
        verify(&block, "fractal heap header")?;
        c.skip(1)?; // flags
        let max_managed = u64::from(c.u32()?);
        c.skip(l + o + l + o + 8 * l)?; // huge objects, free space, statistics
        let width = u64::from(c.u16()?);
        let start = self.sizes.length(&mut c)?;
        let max_direct = self.sizes.length(&mut c)?;
        let max_bits = u32::from(c.u16()?);
        let _start_rows = c.u16()?;
        let root = self.sizes.addr(&mut c)?;
        let root_rows = c.u16()?;
        let pow2 = |v: u64| v > 0 && v.is_power_of_two();
        if !pow2(width) || !pow2(start) || !pow2(max_direct) || max_direct < start || !(1..=64).contains(&max_bits) {
            return Err(bad("a fractal heap with an impossible doubling table"));
        }
        let off_size = max_bits.div_ceil(8) as usize;
        let len_size = (log2(max_direct).div_ceil(8) as usize).min(limit_enc_size(max_managed));
        if 1 + off_size + len_size > id_len {
            return Err(bad("fractal heap IDs too short"));
        }
        Ok(FractalHeap {
            addr,
            id_len,
            width,
            start,
            first_row_bits: log2(start) + log2(width),
            max_direct_rows: log2(max_direct) - log2(start) + 2,
            root,
            root_rows,
            off_size,
            len_size,
        })
    }
}
