//! Global heap collections (`GCOL`): where HDF5 keeps variable-length data, here the text of
//! variable-length string attributes (netCDF-4's NC_STRING, which h5py, h5netcdf and xarray's
//! h5netcdf engine write for every text attribute). A value names its text by a global heap ID:
//! the collection's address and the object's index in it.
//!
//! Why it exists: a `units`, `calendar` or time `units` stored so must be read like NC_CHAR
//! text by the direct path and by discovery's time reader, on any thread, without libhdf5
//! (which is not thread-safe); libhdf5 and libnetcdf stay the oracles the tests compare with.
//! Every size and index read from the file is checked: a corrupted collection is an error.

use super::cursor::Cur;
use super::{bad, unsupported, Hdf5Meta, Result};

impl Hdf5Meta<'_> {
    /// The bytes of object `index` of the global heap collection at `addr`.
    pub(super) fn global_heap_object(&self, addr: u64, index: u32) -> Result<Vec<u8>> {
        let head_len = 8 + self.sizes.len;
        let head = self.src.read(addr, head_len as u64, "global heap collection")?;
        let mut c = Cur::new(&head, "global heap collection");
        c.signature(b"GCOL")?;
        let version = c.u8()?;
        if version != 1 {
            return Err(unsupported(format!("global heap collection version {version}")));
        }
        c.skip(3)?;
        // the collection's size counts its header
        let size = self.sizes.length(&mut c)?;
        if size < head_len as u64 {
            return Err(bad(format!("a global heap collection of {size} bytes")));
        }
        let block = self.src.read(addr, size, "global heap collection")?;
        let mut c = Cur::new(&block, "global heap collection");
        c.skip(head_len)?;
        // each object: index (2), reference count (2), reserved (4), size, data padded to 8 bytes
        while c.left() >= 8 + self.sizes.len {
            let id = c.u16()?;
            c.skip(6)?;
            let len = self.sizes.length(&mut c)?;
            if id == 0 {
                break; // free space: the rest of the collection
            }
            let len = usize::try_from(len).map_err(|_| bad("a global heap object's size"))?;
            let data = c.take(len)?;
            if u32::from(id) == index {
                return Ok(data.to_vec());
            }
            c.skip((len.next_multiple_of(8) - len).min(c.left()))?;
        }
        Err(bad(format!("no object {index} in the global heap collection at byte {addr}")))
    }
}
