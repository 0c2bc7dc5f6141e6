//! Writes from several threads into disjoint elements of one slice.
//!
//! Engines compute cells in parallel chunks, and each chunk owns a set of cells whose results
//! are strided through a `[stat][target][cell]` array. Splitting that array into `&mut` pieces
//! is awkward, so writers go through this wrapper instead; callers promise disjointness.

use std::marker::PhantomData;

/// A slice that several threads may write to, each at indices no other thread touches.
pub struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: sharing is sound because `write` is unsafe and callers guarantee that no index is
// written by two threads and that nobody reads the slice while the wrapper exists.
unsafe impl<T: Send> Sync for DisjointSlice<'_, T> {}
unsafe impl<T: Send> Send for DisjointSlice<'_, T> {}

impl<'a, T> DisjointSlice<'a, T> {
    pub fn new(slice: &'a mut [T]) -> Self {
        DisjointSlice { ptr: slice.as_mut_ptr(), len: slice.len(), _borrow: PhantomData }
    }

    /// Stores `value` at `index`.
    ///
    /// # Safety
    /// No other thread may write or read `index` while this wrapper is alive.
    #[inline]
    pub unsafe fn write(&self, index: usize, value: T) {
        assert!(index < self.len, "index {index} out of bounds for length {}", self.len);
        // SAFETY: in bounds (checked above); exclusivity is the caller's promise.
        unsafe { self.ptr.add(index).write(value) }
    }

    /// Copies `values` to `start..start + values.len()`.
    ///
    /// # Safety
    /// No other thread may write or read that range while this wrapper is alive.
    #[inline]
    pub unsafe fn write_slice(&self, start: usize, values: &[T])
    where
        T: Copy,
    {
        assert!(
            start <= self.len && values.len() <= self.len - start,
            "range {start}+{} out of bounds for length {}",
            values.len(),
            self.len
        );
        // SAFETY: in bounds (checked above); the source is a distinct borrow, so the ranges do
        // not overlap; exclusivity of the destination is the caller's promise.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.ptr.add(start), values.len()) }
    }
}
