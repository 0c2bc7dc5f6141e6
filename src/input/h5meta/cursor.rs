//! Checked byte reading for the HDF5 metadata parser: the file read through a buffer of its
//! first bytes, a little-endian cursor whose every read is bounds-checked, the superblock's
//! sizes of addresses and lengths, and the set of addresses already visited.
//!
//! Why it exists: the parser reads untrusted files on reader threads without libhdf5 (which is
//! not thread-safe), so a truncated or corrupted file must give [`super::MetaError::Malformed`], never
//! a panic or a read out of range; every structure above reads through these.

use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;

use super::{bad, unsupported, Result};

/// Bytes read from the start of the file at once: superblock, root group and the variables'
/// headers of a netCDF-4 file usually lie within them.
const HEAD: u64 = 16 << 10;
/// No metadata structure (or small dataset read here) is larger than this.
const MAX_READ: u64 = 64 << 20;

/// Addresses already visited: a tree node or header chunk met twice means a corrupted file.
#[derive(Default)]
pub(super) struct Visited(pub(super) std::collections::HashSet<u64>);

impl Visited {
    pub(super) fn first(&mut self, addr: u64, what: &str) -> Result<()> {
        if !self.0.insert(addr) {
            return Err(bad(format!("the {what} at byte {addr} is reached twice")));
        }
        Ok(())
    }
}

/// The file, read through a buffer of its first bytes (or a whole file in memory).
pub(super) struct Source<'f> {
    file: Option<&'f File>,
    pub(super) len: u64,
    head: Cow<'f, [u8]>,
}

impl<'f> Source<'f> {
    pub(super) fn new(file: &'f File) -> Result<Source<'f>> {
        let len = file.metadata().map_err(|e| bad(format!("cannot stat the file: {e}")))?.len();
        let mut head = vec![0u8; len.min(HEAD) as usize];
        file.read_exact_at(&mut head, 0).map_err(|e| bad(format!("reading the first {} bytes: {e}", head.len())))?;
        Ok(Source { file: Some(file), len, head: Cow::Owned(head) })
    }

    /// A whole file's bytes in memory.
    pub(super) fn from_bytes(bytes: &'f [u8]) -> Source<'f> {
        Source { file: None, len: bytes.len() as u64, head: Cow::Borrowed(bytes) }
    }

    /// `n` bytes at `addr`, which must lie inside the file.
    pub(super) fn read(&self, addr: u64, n: u64, what: &str) -> Result<Cow<'_, [u8]>> {
        let end = addr.checked_add(n).filter(|&e| e <= self.len).ok_or_else(|| {
            bad(format!("the {what} at byte {addr} ({n} bytes) passes the end of the file ({} bytes)", self.len))
        })?;
        if end <= self.head.len() as u64 {
            return Ok(Cow::Borrowed(&self.head[addr as usize..end as usize]));
        }
        if n > MAX_READ {
            return Err(unsupported(format!("a {what} of {n} bytes")));
        }
        let file = self.file.ok_or_else(|| bad("a file in memory read past its end"))?;
        let mut buf = vec![0u8; n as usize];
        file.read_exact_at(&mut buf, addr).map_err(|e| bad(format!("reading the {what} at byte {addr}: {e}")))?;
        Ok(Cow::Owned(buf))
    }

    /// Up to `n` bytes at `addr` (fewer at the end of the file).
    pub(super) fn read_upto(&self, addr: u64, n: u64, what: &str) -> Result<Cow<'_, [u8]>> {
        if addr >= self.len {
            return Err(bad(format!("the {what} at byte {addr} is past the end of the file ({} bytes)", self.len)));
        }
        self.read(addr, n.min(self.len - addr), what)
    }
}

/// A checked little-endian cursor over a byte slice.
pub(super) struct Cur<'a> {
    buf: &'a [u8],
    /// Bytes read so far.
    pub(super) at: usize,
    what: &'static str,
}

impl<'a> Cur<'a> {
    pub(super) fn new(buf: &'a [u8], what: &'static str) -> Cur<'a> {
        Cur { buf, at: 0, what }
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or_else(|| bad(format!("the {} is cut short", self.what)))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }

    pub(super) fn skip(&mut self, n: usize) -> Result<()> {
        self.take(n).map(|_| ())
    }

    pub(super) fn left(&self) -> usize {
        self.buf.len() - self.at
    }

    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u16(&mut self) -> Result<u16> {
        Ok(self.uint(2)? as u16)
    }

    pub(super) fn u32(&mut self) -> Result<u32> {
        Ok(self.uint(4)? as u32)
    }

    /// An unsigned little-endian integer of `n` (at most 8) bytes.
    pub(super) fn uint(&mut self, n: usize) -> Result<u64> {
        debug_assert!(n <= 8);
        Ok(self.take(n)?.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }

    pub(super) fn signature(&mut self, sig: &[u8; 4]) -> Result<()> {
        if self.take(4)? != sig {
            return Err(bad(format!(
                "no {} signature where the {} should be",
                String::from_utf8_lossy(sig),
                self.what
            )));
        }
        Ok(())
    }
}

/// Sizes of file addresses and lengths (from the superblock).
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizes {
    pub(super) addr: usize,
    pub(super) len: usize,
}

impl Sizes {
    /// An address; None where undefined (all bits set).
    pub(super) fn addr(&self, c: &mut Cur<'_>) -> Result<Option<u64>> {
        let v = c.uint(self.addr)?;
        let undefined = if self.addr == 8 { u64::MAX } else { (1u64 << (8 * self.addr)) - 1 };
        Ok((v != undefined).then_some(v))
    }

    pub(super) fn length(&self, c: &mut Cur<'_>) -> Result<u64> {
        c.uint(self.len)
    }
}

/// floor(log2(n)), 0 for 0 (`H5VM_log2_gen`).
pub(super) fn log2(n: u64) -> u32 {
    63 - (n | 1).leading_zeros()
}

/// Bytes to encode counts up to `limit` (`H5VM_limit_enc_size`).
pub(super) fn limit_enc_size(limit: u64) -> usize {
    (log2(limit) / 8 + 1) as usize
}

#[cfg(test)]
mod tests {
    use super::super::MetaError;
    use super::*;

    #[test]
    fn cursor_reads_are_checked() {
        let b = [1u8, 2, 3];
        let mut c = Cur::new(&b, "test");
        assert_eq!(c.u16().unwrap(), 0x0201);
        assert!(matches!(c.u16(), Err(MetaError::Malformed(_))));
        assert_eq!(c.u8().unwrap(), 3);
        assert!(c.take(usize::MAX).is_err());
    }
}
