//! An anonymous `MAP_SHARED` memory mapping: memory that stays shared between this process and
//! the children it forks afterwards. Forked reader processes decode into the sample pool through
//! it; a private mapping (memmap2's `map_anon`) would be copied on write in each child and the
//! parent would never see the values.
//!
//! It belongs to the pool (whose backing it is); the input stage's forked readers reach it
//! through the pool they decode into.

use std::ptr::NonNull;

/// `len` bytes of zeroed, page-aligned memory shared with every process forked after it was
/// made. Unmapped on drop (in this process; forked children leave with `_exit`).
pub struct SharedMap {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; `&SharedMap` gives only shared reads
// and `&mut SharedMap` exclusive writes, as for a `Vec<u8>`.
unsafe impl Send for SharedMap {}
// SAFETY: as above.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// Map `len` bytes (at least one page).
    pub fn new(len: usize) -> std::io::Result<Self> {
        let len = len.max(1);
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing touches no
        // existing memory; the result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // Purely a hint (see `Pool::new`); shared anonymous memory gets huge pages only where
        // the kernel's shmem_enabled allows.
        #[cfg(target_os = "linux")]
        // SAFETY: advice on a mapping we own; failure is harmless and ignored.
        unsafe {
            libc::madvise(ptr, len, libc::MADV_HUGEPAGE);
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| std::io::Error::other("mmap returned null"))?;
        Ok(SharedMap { ptr, len })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` mapped, readable bytes (zero-initialised by the kernel) live as long as
        // `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`; `&mut self` gives exclusive access in this process.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing borrows any more.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_and_writable() {
        let mut m = SharedMap::new(10_000).unwrap();
        assert_eq!(m.len(), 10_000);
        assert!(m.as_slice().iter().all(|&b| b == 0));
        m.as_mut_slice()[9_999] = 7;
        assert_eq!(m.as_slice()[9_999], 7);
        assert_eq!(m.as_ptr() as usize % 4096, 0);
    }
}
