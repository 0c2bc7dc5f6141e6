//! The HDF5 superblock, the file's entry point: its version, the sizes of addresses and
//! lengths every later structure uses, the end-of-file address and the root group's object
//! header. Versions 0 and 1 (the root group's symbol table entry) and 2 and 3 (checksummed)
//! are read; a nonzero base address or a file driver block (family/multi files) is left to
//! libhdf5.
//!
//! Why it exists: [`Hdf5Meta::open`] starts here on any reader thread, without libhdf5 (which
//! is not thread-safe); libhdf5 stays the oracle the tests compare it with.

use std::fs::File;

use super::cursor::{Cur, Sizes, Source};
use super::header::Header;
use super::{bad, checksum::verify, unsupported, Hdf5Meta, Result};
use crate::input::format::HDF5_SIGNATURE;

impl<'f> Hdf5Meta<'f> {
    /// Read the superblock (which must be at byte 0) and the root group's object header.
    pub fn open(file: &'f File) -> Result<Hdf5Meta<'f>> {
        Hdf5Meta::read(Source::new(file)?)
    }

    /// [`Hdf5Meta::open`] on a whole file's bytes in memory.
    pub fn from_bytes(bytes: &'f [u8]) -> Result<Hdf5Meta<'f>> {
        Hdf5Meta::read(Source::from_bytes(bytes))
    }

    fn read(src: Source<'f>) -> Result<Hdf5Meta<'f>> {
        let sb = src.read_upto(0, 256, "superblock")?;
        let mut c = Cur::new(&sb, "superblock");
        if c.take(8)? != HDF5_SIGNATURE {
            return Err(bad("no HDF5 signature at byte 0"));
        }
        let version = c.u8()?;
        let (sizes, eof, root) = match version {
            0 | 1 => {
                c.skip(4)?; // free-space, root symbol table entry, reserved, shared header versions
                let sizes = Sizes { addr: c.u8()? as usize, len: c.u8()? as usize };
                check_sizes(sizes)?;
                c.skip(1 + 2 + 2 + 4)?; // reserved, group leaf and internal node K, flags
                if version == 1 {
                    c.skip(4)?; // indexed storage K, reserved
                }
                let base = sizes.addr(&mut c)?;
                let _free_space = sizes.addr(&mut c)?;
                let eof = sizes.addr(&mut c)?;
                let driver = sizes.addr(&mut c)?;
                check_base(base)?;
                if driver.is_some() {
                    return Err(unsupported("a file driver information block (family or multi files)"));
                }
                // the root group's symbol table entry
                let _name = sizes.length(&mut c)?;
                let root = sizes.addr(&mut c)?;
                (sizes, eof, root)
            }
            2 | 3 => {
                let sizes = Sizes { addr: c.u8()? as usize, len: c.u8()? as usize };
                check_sizes(sizes)?;
                c.skip(1)?; // flags
                let base = sizes.addr(&mut c)?;
                let _extension = sizes.addr(&mut c)?;
                let eof = sizes.addr(&mut c)?;
                let root = sizes.addr(&mut c)?;
                let end = c.at + 4;
                verify(sb.get(..end).ok_or_else(|| bad("the superblock is cut short"))?, "superblock")?;
                check_base(base)?;
                (sizes, eof, root)
            }
            v => return Err(unsupported(format!("superblock version {v}"))),
        };
        let eof = eof.ok_or_else(|| bad("the superblock has no end-of-file address"))?;
        if src.len < eof {
            return Err(bad(format!("truncated file: {} bytes, the superblock says {eof}", src.len)));
        }
        let root = root.ok_or_else(|| bad("the superblock has no root group"))?;
        let mut meta = Hdf5Meta { src, sizes, superblock: version, root: Header { version: 0, msgs: Vec::new() } };
        meta.root = meta.header(root)?;
        Ok(meta)
    }
}

fn check_sizes(s: Sizes) -> Result<()> {
    if ![2, 4, 8].contains(&s.addr) || ![2, 4, 8].contains(&s.len) {
        return Err(unsupported(format!("{}-byte addresses and {}-byte lengths", s.addr, s.len)));
    }
    Ok(())
}

fn check_base(base: Option<u64>) -> Result<()> {
    match base {
        Some(0) => Ok(()),
        Some(b) => Err(unsupported(format!("base address {b}"))),
        None => Err(bad("the superblock has no base address")),
    }
}
