//! HDF5 object headers: version 1 (a prefix, then messages 8-byte aligned) and version 2
//! (`OHDR`, checksummed), each followed through its continuation blocks (`OCHK` for v2)
//! anywhere in the file. Of the messages, only those the parser interprets are kept (see
//! [`Header`]); others are skipped, and an unknown one marked "fail if unknown" is left to
//! libhdf5.
//!
//! Why it exists: a dataset's layout, type, dimensions and attributes and a group's links are
//! all messages of an object header, read here without libhdf5 (which is not thread-safe);
//! libhdf5 stays the oracle the tests compare the results with.

use std::collections::VecDeque;

use super::checksum::verify;
use super::cursor::{Cur, Visited};
use super::{bad, unsupported, Hdf5Meta, Result};

/// Object header chunks followed per header (a loop of continuations is corruption).
const MAX_CHUNKS: usize = 1024;

pub(super) const MSG_DATASPACE: u16 = 0x01;
pub(super) const MSG_LINK_INFO: u16 = 0x02;
pub(super) const MSG_DATATYPE: u16 = 0x03;
pub(super) const MSG_LINK: u16 = 0x06;
pub(super) const MSG_EXTERNAL: u16 = 0x07;
pub(super) const MSG_LAYOUT: u16 = 0x08;
pub(super) const MSG_PIPELINE: u16 = 0x0B;
pub(super) const MSG_ATTRIBUTE: u16 = 0x0C;
const MSG_CONTINUATION: u16 = 0x10;
pub(super) const MSG_SYMBOL_TABLE: u16 = 0x11;
pub(super) const MSG_ATTRIBUTE_INFO: u16 = 0x15;
/// The highest message type HDF5 defines.
const MSG_LAST_KNOWN: u16 = 0x18;

/// One header message kept for interpretation.
#[derive(Clone, Debug)]
pub(super) struct Msg {
    pub(super) kind: u16,
    flags: u8,
    data: Vec<u8>,
}

impl Msg {
    /// Its data, unless it is stored as a shared message (this reader does not follow those).
    pub(super) fn body(&self, what: &str) -> Result<&[u8]> {
        if self.flags & 0x02 != 0 {
            return Err(unsupported(format!("the {what} is a shared message")));
        }
        Ok(&self.data)
    }
}

/// An object header: its version and the messages this reader needs.
pub(super) struct Header {
    pub(super) version: u8,
    pub(super) msgs: Vec<Msg>,
}

impl Header {
    pub(super) fn find(&self, kind: u16) -> Option<&Msg> {
        self.msgs.iter().find(|m| m.kind == kind)
    }
}

impl Hdf5Meta<'_> {
    /// The object header at `addr`, with the messages this reader needs.
    pub(super) fn header(&self, addr: u64) -> Result<Header> {
        let pre = self.src.read_upto(addr, 64, "object header")?;
        let mut chunks = VecDeque::new();
        let mut header = Header { version: 0, msgs: Vec::new() };
        let creation_order;
        if pre.starts_with(b"OHDR") {
            let mut c = Cur::new(&pre, "object header");
            c.skip(4)?;
            header.version = c.u8()?;
            if header.version != 2 {
                return Err(unsupported(format!("object header version {}", header.version)));
            }
            let flags = c.u8()?;
            creation_order = flags & 0x04 != 0;
            if flags & 0x20 != 0 {
                c.skip(16)?; // times
            }
            if flags & 0x10 != 0 {
                c.skip(4)?; // attribute storage phase change values
            }
            let size = c.uint(1 << (flags & 0x03))?;
            let total = (c.at as u64).checked_add(size).and_then(|n| n.checked_add(4));
            let whole = self.src.read(addr, total.ok_or_else(|| bad("object header size"))?, "object header")?;
            verify(&whole, "object header")?;
            self.messages(&whole[c.at..whole.len() - 4], 2, creation_order, &mut header.msgs, &mut chunks)?;
        } else if pre.first() == Some(&1) {
            header.version = 1;
            let mut c = Cur::new(&pre, "object header");
            c.skip(8)?; // version, reserved, message count, reference count
            let size = u64::from(c.u32()?);
            creation_order = false;
            // messages start 8-byte aligned after the 12-byte prefix
            let first = addr.checked_add(16).ok_or_else(|| bad("object header address"))?;
            chunks.push_back((first, size));
        } else {
            return Err(bad(format!("no object header at byte {addr}")));
        }
        let mut visited = Visited::default();
        visited.first(addr, "object header")?;
        while let Some((at, len)) = chunks.pop_front() {
            visited.first(at, "object header continuation block")?;
            if visited.0.len() > MAX_CHUNKS {
                return Err(bad("too many object header continuation blocks"));
            }
            let chunk = self.src.read(at, len, "object header continuation block")?;
            if header.version == 1 {
                self.messages(&chunk, 1, false, &mut header.msgs, &mut chunks)?;
            } else {
                let mut c = Cur::new(&chunk, "object header continuation block");
                c.signature(b"OCHK")?;
                if chunk.len() < 8 {
                    return Err(bad("the object header continuation block is cut short"));
                }
                verify(&chunk, "object header continuation block")?;
                self.messages(&chunk[4..chunk.len() - 4], 2, creation_order, &mut header.msgs, &mut chunks)?;
            }
        }
        Ok(header)
    }

    /// Parse the messages of one header chunk: keep the needed ones, queue continuations.
    fn messages(
        &self,
        chunk: &[u8],
        version: u8,
        creation_order: bool,
        msgs: &mut Vec<Msg>,
        chunks: &mut VecDeque<(u64, u64)>,
    ) -> Result<()> {
        let mut c = Cur::new(chunk, "object header message");
        let prefix = match (version, creation_order) {
            (1, _) => 8,
            (_, true) => 6,
            (_, false) => 4,
        };
        // (in v2 headers, a gap shorter than a message prefix may end the chunk)
        while c.left() >= prefix {
            let (kind, size, flags) = if version == 1 {
                let kind = c.u16()?;
                let size = c.u16()?;
                let flags = c.u8()?;
                c.skip(3)?;
                (kind, size, flags)
            } else {
                let kind = u16::from(c.u8()?);
                let size = c.u16()?;
                let flags = c.u8()?;
                if creation_order {
                    c.skip(2)?;
                }
                (kind, size, flags)
            };
            let data = c.take(usize::from(size))?;
            match kind {
                MSG_CONTINUATION => {
                    let mut d = Cur::new(data, "continuation message");
                    let at = self.sizes.addr(&mut d)?.ok_or_else(|| bad("a continuation to no address"))?;
                    let len = self.sizes.length(&mut d)?;
                    chunks.push_back((at, len));
                }
                MSG_DATASPACE | MSG_LINK_INFO | MSG_DATATYPE | MSG_LINK | MSG_EXTERNAL | MSG_LAYOUT | MSG_PIPELINE
                | MSG_SYMBOL_TABLE | MSG_ATTRIBUTE | MSG_ATTRIBUTE_INFO => {
                    msgs.push(Msg { kind, flags, data: data.to_vec() })
                }
                k if k > MSG_LAST_KNOWN && flags & 0x80 != 0 => {
                    return Err(unsupported(format!("header message type {k}, marked 'fail if unknown'")))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
