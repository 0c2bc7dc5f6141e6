//! The sample pool: decoded values of one tile of cells for every input date, laid out
//! `[slot][cell]` with slots in `[day][year]` order, so neighbouring cells are neighbouring
//! addresses (coalesced on GPUs, streaming on CPUs).
//!
//! The pool lives in an anonymous memory mapping rather than a `Vec`: pages are committed only
//! when decoded into, and the mapping can be pinned for DMA. [`Pool::new_shared`] makes it a
//! `MAP_SHARED` mapping ([`SharedMap`], owned here: the input stage decodes into the pool, so it
//! imports the pool, never the reverse) that reader processes forked afterwards decode into.
//! Missing values are NaN.

mod shared;

use std::marker::PhantomData;

use memmap2::MmapMut;

pub use shared::SharedMap;

/// A value type a pool can hold. Decoding always happens in float64; a narrower pool rounds.
pub trait Sample: Copy + Send + Sync + 'static {
    /// Name in reports (`f64`, `f32`).
    const NAME: &'static str;
    /// The stored form of a decoded value (NaN for missing).
    fn from_f64(v: f64) -> Self;
    /// The value engines compute with (NaN for missing).
    fn to_f64(self) -> f64;
    /// A view of a pool (or of some of its slots) as engines receive it.
    fn wrap(pool: PoolView<'_, Self>) -> PoolRef<'_>;
    /// What a decoder stores for a file value: `stored` as in the file, `decoded` after
    /// unpacking (NaN when missing). Float pools keep the decoded value.
    #[inline]
    fn from_stored(_stored: f64, decoded: f64) -> Self {
        Self::from_f64(decoded)
    }
    /// Whether this pool keeps a file's stored integers (decoded later by one table built from
    /// the first file's packing) instead of decoded values: then every file must be packed
    /// like the first (the input stage's `check_pool_packing` refuses any other).
    const KEEPS_STORED: bool = false;
    /// Store a file's int16 values as they are, where this pool keeps stored integers whatever
    /// the packing (`from_stored` ignores the decoded value): a copy instead of decoding.
    /// Returns false (nothing written) for pools that decode.
    #[inline]
    fn copy_int16(raw: &[i16], dest: &mut [Self]) -> bool {
        let _ = (raw, dest);
        false
    }
    /// `dest` as the int16 values this pool keeps, for decoders that write a file's int16
    /// values straight into it (as [`Sample::copy_int16`] would copy them); `None` for pools
    /// that decode.
    #[inline]
    fn as_int16_mut(dest: &mut [Self]) -> Option<&mut [i16]> {
        let _ = dest;
        None
    }
    /// Whether this stored value stands for a decoded one the pool could not hold: a float32
    /// infinity (decoded values are finite or NaN, so it was a finite value beyond float32's
    /// range: taken for a missing one, it would be a wrong answer) or a lossy int16 packing's
    /// out-of-range mark (see [`Quantize`]). Found before computing, and refused.
    #[inline]
    fn unheld(self) -> bool {
        false
    }
    /// Whether [`Sample::unheld`] can be true of this pool's values (`packed`: the pool is
    /// filled by a lossy int16 packing; otherwise an int16 pool's integers are all values).
    #[inline]
    fn may_not_hold(packed: bool) -> bool {
        let _ = packed;
        false
    }
    /// What a decoder stores for a decoded value packed into `i` by a lossy int16 packing:
    /// the integer in an int16 pool (float pools never get a packing).
    #[inline]
    fn from_packed(i: i16, decoded: f64) -> Self {
        let _ = i;
        Self::from_f64(decoded)
    }
}

impl Sample for f64 {
    const NAME: &'static str = "f64";
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    fn wrap(pool: PoolView<'_, Self>) -> PoolRef<'_> {
        PoolRef::F64(pool)
    }
}

impl Sample for f32 {
    const NAME: &'static str = "f32";
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn wrap(pool: PoolView<'_, Self>) -> PoolRef<'_> {
        PoolRef::F32(pool)
    }
    #[inline]
    fn unheld(self) -> bool {
        self.is_infinite()
    }
    #[inline]
    fn may_not_hold(_packed: bool) -> bool {
        true
    }
}

/// Packed int16 as stored in the input: the pool holds the file's integers and a table
/// ([`Pool::decoding`]) gives each one's decoded value (NaN when missing), so the pool is exact
/// for int16-packed input at a quarter of the float64 pool's bytes. Without a table a value is
/// its integer.
impl Sample for i16 {
    const NAME: &'static str = "i16";
    const KEEPS_STORED: bool = true;
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as i16
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn wrap(pool: PoolView<'_, Self>) -> PoolRef<'_> {
        PoolRef::I16(pool)
    }
    #[inline]
    fn from_stored(stored: f64, _decoded: f64) -> Self {
        stored as i16
    }
    #[inline]
    fn copy_int16(raw: &[i16], dest: &mut [Self]) -> bool {
        dest.copy_from_slice(raw);
        true
    }
    #[inline]
    fn as_int16_mut(dest: &mut [Self]) -> Option<&mut [i16]> {
        Some(dest)
    }
    #[inline]
    fn from_packed(i: i16, _decoded: f64) -> Self {
        i
    }
    #[inline]
    fn unheld(self) -> bool {
        Quantize::out_of_range(self)
    }
    #[inline]
    fn may_not_hold(packed: bool) -> bool {
        packed
    }
}

/// Whether any of `values` is [`Sample::unheld`]: folded without branches in blocks (so the
/// loop vectorizes), stopping at the first block that has one.
pub fn any_unheld<T: Sample>(values: &[T]) -> bool {
    values.chunks(4096).any(|block| block.iter().fold(false, |any, v| any | v.unheld()))
}

/// Decoded value of every int16 (index: the integer + 32768).
pub type Decoding = std::sync::Arc<[f64]>;

/// Lossy packing of float input into an int16 pool (`--pool i16 --pack-scale S
/// [--pack-offset O]`): a value v is stored as round((v - O) / S); -32768 marks a missing value
/// and ±32767 a value outside the representable range (found before computing, and refused).
/// Decoded values are O + S·i, within S/2 of the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quantize {
    pub scale: f64,
    pub offset: f64,
}

impl Quantize {
    /// Largest integer that stands for a value (beyond it: the out-of-range marks).
    pub const MAX: i16 = 32766;

    /// The stored integer of a decoded value (NaN: missing).
    #[inline]
    pub fn encode(&self, v: f64) -> i16 {
        if v.is_nan() {
            return i16::MIN;
        }
        let r = ((v - self.offset) / self.scale).round();
        if r > f64::from(Self::MAX) {
            Self::MAX + 1
        } else if r < -f64::from(Self::MAX) {
            -Self::MAX - 1
        } else {
            r as i16
        }
    }

    /// Whether `i` marks a value outside the range.
    pub fn out_of_range(i: i16) -> bool {
        i == Self::MAX + 1 || i == -Self::MAX - 1
    }

    /// The decoding table of the pool.
    pub fn decoding(&self) -> Decoding {
        int16_decoding(|i| if i.abs() > f64::from(Self::MAX) { f64::NAN } else { self.offset + self.scale * i + 0.0 })
    }

    /// The range of values that can be stored.
    pub fn range(&self) -> (f64, f64) {
        let m = f64::from(Self::MAX);
        (self.offset - self.scale * m, self.offset + self.scale * m)
    }
}

/// The decoding table of an int16 pool from a decoder of stored values.
pub fn int16_decoding(decode: impl Fn(f64) -> f64) -> Decoding {
    (0..65536).map(|i: i32| decode(f64::from(i - 32768))).collect()
}

/// The memory under a pool.
enum Backing {
    /// Private to this process (copied on write in forked children).
    Private(MmapMut),
    /// Shared with processes forked after it was made.
    Shared(SharedMap),
}

impl Backing {
    fn as_ptr(&self) -> *const u8 {
        match self {
            Backing::Private(m) => m.as_ptr(),
            Backing::Shared(m) => m.as_ptr(),
        }
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Backing::Private(m) => m.as_mut_ptr(),
            Backing::Shared(m) => m.as_mut_ptr(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Backing::Private(m) => m.len(),
            Backing::Shared(m) => m.len(),
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        // SAFETY: the mapping is `len` bytes, readable and writable, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.as_mut_ptr(), len) }
    }
}

/// `n_slots x n_cells` values of type `T` in one anonymous mapping.
/// Ask for transparent huge pages on the 2 MiB-aligned part of `[ptr, ptr + len)` of a large
/// heap buffer before its pages are first touched: committing (and page-locking) gigabytes of
/// 4 KiB pages costs hundreds of thousands of page faults, which contend with the reader
/// threads (1.5 GB of result buffers took 8 threads 0.2 s on the H200 node). Purely a hint;
/// the kernel may decline.
pub fn advise_huge_pages(ptr: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: madvise with MADV_HUGEPAGE changes no contents and only applies to pages
            // inside the caller's allocation (the aligned interior of [ptr, ptr + len)).
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Smallest allocation [`keep_from_children`] marks: the C allocator maps every block this
/// large on its own (glibc's mmap threshold stops growing at 32 MiB on 64-bit systems;
/// musl's is far lower), so the marked pages belong to this block alone and leave with it.
const KEEP_FROM_CHILDREN_MIN: usize = 64 << 20;

/// Leave the aligned interior of the heap block `[ptr, ptr + len)` out of forked children
/// (`MADV_DONTFORK`), for large private buffers no child touches (the result buffers).
///
/// Why: a fork copies the page tables of every private mapping, and since Linux 5.8 copies at
/// once every page pinned for DMA (the result buffers a GPU engine registers with the driver):
/// with gigabytes pinned, each forked reader cost the parent a copy of them, with the memory
/// map locked. Blocks under [`KEEP_FROM_CHILDREN_MIN`] are left alone (they may share pages
/// with other blocks). A child that touched a marked page anyway would die of SIGSEGV, which
/// its parent reports as an error, never as a value.
pub fn keep_from_children(ptr: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        if len < KEEP_FROM_CHILDREN_MIN {
            return;
        }
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let start = (ptr as usize).next_multiple_of(page);
        let end = (ptr as usize + len) / page * page;
        if end > start {
            // SAFETY: MADV_DONTFORK changes no contents and applies only to whole pages inside
            // the caller's block, which the allocator mapped for it alone (see above).
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTFORK) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

pub struct Pool<T: Sample> {
    map: Backing,
    n_slots: usize,
    n_cells: usize,
    decoding: Option<Decoding>,
    _type: PhantomData<T>,
}

impl<T: Sample> Pool<T> {
    /// A pool for `n_slots` dates of `n_cells` cells (contents unspecified until written).
    pub fn new(n_slots: usize, n_cells: usize) -> std::io::Result<Self> {
        let bytes = (n_slots * n_cells * std::mem::size_of::<T>()).max(1);
        let map = MmapMut::map_anon(bytes)?;
        // Engines read a few cells from every slot row (thousands of rows, megabytes apart):
        // with 4 KiB pages nearly every access misses the TLB. Huge pages, where the kernel
        // grants them, also cut page-fault work while decoding. Purely a hint.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        Ok(Pool { map: Backing::Private(map), n_slots, n_cells, decoding: None, _type: PhantomData })
    }

    /// A pool (zeroed) in an anonymous `MAP_SHARED` mapping: processes forked after this call
    /// write into the same memory (see `input::read_forked`).
    pub fn new_shared(n_slots: usize, n_cells: usize) -> std::io::Result<Self> {
        let map = SharedMap::new(n_slots * n_cells * std::mem::size_of::<T>())?;
        Ok(Pool { map: Backing::Shared(map), n_slots, n_cells, decoding: None, _type: PhantomData })
    }

    /// Whether the pool's memory is shared with forked children ([`Pool::new_shared`]).
    pub fn is_shared(&self) -> bool {
        matches!(self.map, Backing::Shared(_))
    }

    /// A pool filled from `values` laid out `[slot][cell]` (tests and tools).
    pub fn from_values(n_slots: usize, n_cells: usize, values: &[f64]) -> std::io::Result<Self> {
        assert_eq!(values.len(), n_slots * n_cells, "pool values must be n_slots x n_cells");
        let mut pool = Pool::new(n_slots, n_cells)?;
        for (dst, src) in pool.as_mut_slice().iter_mut().zip(values) {
            *dst = T::from_f64(*src);
        }
        Ok(pool)
    }

    /// Set the table that decodes an int16 pool's values (see `impl Sample for i16`).
    pub fn set_decoding(&mut self, decoding: Option<Decoding>) {
        self.decoding = decoding;
    }

    pub fn decoding(&self) -> Option<&Decoding> {
        self.decoding.as_ref()
    }

    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    pub fn n_cells(&self) -> usize {
        self.n_cells
    }

    /// Size of the pool in bytes.
    pub fn bytes(&self) -> usize {
        self.n_slots * self.n_cells * std::mem::size_of::<T>()
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the mapping is page aligned (so aligned for T), at least
        // n_slots * n_cells * size_of::<T>() bytes long, and every bit pattern is a valid T.
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<T>(), self.n_slots * self.n_cells) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.map.as_mut_ptr().cast::<T>(), self.n_slots * self.n_cells) }
    }

    /// The values of one slot (one input date) for all cells of the tile.
    pub fn slot(&self, slot: usize) -> &[T] {
        &self.as_slice()[slot * self.n_cells..(slot + 1) * self.n_cells]
    }

    /// Commit every page now, from `threads` threads (before pinning: registering memory that
    /// is not yet faulted in is slow). Contents become zero.
    pub fn touch(&mut self, threads: usize) {
        let bytes = self.map.len();
        let chunk = bytes.div_ceil(threads.max(1)).next_multiple_of(4096).max(4096);
        std::thread::scope(|s| {
            for part in self.map.bytes_mut().chunks_mut(chunk) {
                s.spawn(move || {
                    for page in part.chunks_mut(4096) {
                        page[0] = 0;
                    }
                });
            }
        });
    }

    /// Start and length of the mapping, for pinning.
    pub fn mapping(&self) -> (*const u8, usize) {
        (self.map.as_ptr(), self.map.len())
    }

    /// The whole pool as engines receive it.
    pub fn view(&self) -> PoolView<'_, T> {
        self.view_slots(0..self.n_slots)
    }

    /// Slots `slots` (consecutive dates in pool order) as a pool of their own.
    pub fn view_slots(&self, slots: std::ops::Range<usize>) -> PoolView<'_, T> {
        let data = &self.as_slice()[slots.start * self.n_cells..slots.end * self.n_cells];
        PoolView { data, n_slots: slots.len(), n_cells: self.n_cells, decoding: self.decoding.as_ref() }
    }

    /// The rows of all slots, each mutable on its own (for decoding files in parallel).
    pub fn slots_mut(&mut self) -> Vec<&mut [T]> {
        let n = self.n_cells.max(1);
        self.as_mut_slice().chunks_mut(n).collect()
    }
}

/// Consecutive slots of a pool, read-only: what engines compute from. The pipeline hands
/// engines the slots one batch of target days needs while later slots are still being read.
#[derive(Clone, Copy)]
pub struct PoolView<'a, T: Sample> {
    data: &'a [T],
    n_slots: usize,
    n_cells: usize,
    decoding: Option<&'a Decoding>,
}

impl<'a, T: Sample> PoolView<'a, T> {
    /// `data` as `n_slots` rows of `n_cells` values.
    pub fn new(data: &'a [T], n_slots: usize, n_cells: usize, decoding: Option<&'a Decoding>) -> Self {
        assert_eq!(data.len(), n_slots * n_cells, "a pool view is n_slots x n_cells");
        PoolView { data, n_slots, n_cells, decoding }
    }

    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }

    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    pub fn n_cells(&self) -> usize {
        self.n_cells
    }

    pub fn decoding(&self) -> Option<&'a Decoding> {
        self.decoding
    }
}

/// A pool view of either element type, as engines receive it.
#[derive(Clone, Copy)]
pub enum PoolRef<'a> {
    F64(PoolView<'a, f64>),
    F32(PoolView<'a, f32>),
    I16(PoolView<'a, i16>),
}

impl PoolRef<'_> {
    pub fn n_slots(&self) -> usize {
        match self {
            PoolRef::F64(p) => p.n_slots(),
            PoolRef::F32(p) => p.n_slots(),
            PoolRef::I16(p) => p.n_slots(),
        }
    }

    pub fn n_cells(&self) -> usize {
        match self {
            PoolRef::F64(p) => p.n_cells(),
            PoolRef::F32(p) => p.n_cells(),
            PoolRef::I16(p) => p.n_cells(),
        }
    }
}

/// Which element type a run's pool uses (`--pool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolType {
    /// Exact: the decoded float64 values.
    F64,
    /// Half the memory; values rounded to float32 after decoding.
    F32,
    /// A quarter of the memory: int16-packed input's integers as stored, decoded through the
    /// file's scale, offset and missing values (exact); float input only with --pack-scale
    /// (lossy).
    I16,
}

impl PoolType {
    pub fn bytes_per_value(self) -> usize {
        match self {
            PoolType::F64 => 8,
            PoolType::F32 => 4,
            PoolType::I16 => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_packing_rounds_marks_and_decodes() {
        let q = Quantize { scale: 0.001, offset: 15.0 };
        assert_eq!(q.encode(15.0), 0);
        assert_eq!(q.encode(20.1234), 5123);
        assert_eq!(q.encode(f64::NAN), i16::MIN);
        assert_eq!(q.encode(15.0 + 32.7664), 32766);
        assert!(Quantize::out_of_range(q.encode(15.0 + 32.7666)));
        assert!(Quantize::out_of_range(q.encode(-1e9)));
        assert!(!Quantize::out_of_range(q.encode(-17.7)));
        let table = q.decoding();
        let dec = |i: i16| table[(i32::from(i) + 32768) as usize];
        assert!((dec(5123) - 20.123).abs() < 1e-12);
        assert!(dec(i16::MIN).is_nan() && dec(32767).is_nan() && dec(-32767).is_nan());
        for v in [-1.8, 0.0, 12.3456, 29.9999, 47.76] {
            assert!((dec(q.encode(v)) - v).abs() <= 0.0005 + 1e-12, "{v}");
        }
        let (lo, hi) = q.range();
        assert!((lo + 17.766).abs() < 1e-9 && (hi - 47.766).abs() < 1e-9);
    }

    #[test]
    fn pool_rows_are_slots() {
        let values: Vec<f64> = (0..12).map(f64::from).collect();
        let pool = Pool::<f32>::from_values(3, 4, &values).unwrap();
        assert_eq!(pool.slot(1), &[4.0, 5.0, 6.0, 7.0]);
        assert_eq!(pool.bytes(), 48);
        let mut pool = Pool::<f64>::new(2, 3).unwrap();
        pool.slots_mut()[1].copy_from_slice(&[1.0, 2.0, 3.0]);
        assert_eq!(pool.slot(1), &[1.0, 2.0, 3.0]);
        let v = pool.view_slots(1..2);
        assert_eq!((v.n_slots(), v.n_cells(), v.as_slice()), (1, 3, &[1.0, 2.0, 3.0][..]));
        assert_eq!(pool.view().as_slice().len(), 6);
        assert!(!pool.is_shared());
        let mut shared = Pool::<i16>::new_shared(2, 3).unwrap();
        assert!(shared.is_shared());
        shared.slots_mut()[1].copy_from_slice(&[1, 2, 3]);
        assert_eq!(shared.slot(1), &[1, 2, 3]);
        assert_eq!(shared.slot(0), &[0, 0, 0]);
    }

    /// Fork a child that reads the byte at `at` and exits with it; its wait status.
    fn child_reads(at: *const u8) -> libc::c_int {
        // SAFETY: the child only reads one byte and leaves with _exit (async-signal-safe).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: `at` points into a live block of the parent, copied into the child unless
            // it was marked; a marked page is not mapped and the read ends the child (SIGSEGV).
            unsafe { libc::_exit(i32::from(std::ptr::read_volatile(at))) };
        }
        assert!(pid > 0);
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        status
    }

    #[test]
    fn large_blocks_kept_from_children_are_not_in_them_small_ones_are() {
        let _serial = crate::input::fork_serial();
        let big = vec![7u8; 80 << 20];
        let small = vec![9u8; 1 << 20];
        keep_from_children(big.as_ptr(), big.len());
        keep_from_children(small.as_ptr(), small.len()); // too small: left alone
        let st = child_reads(&big[40 << 20]);
        assert!(libc::WIFSIGNALED(st) && libc::WTERMSIG(st) == libc::SIGSEGV, "status {st:#x}");
        let st = child_reads(&small[1000]);
        assert!(libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 9, "status {st:#x}");
        // this process still has every byte
        assert!(big[40 << 20] == 7 && big[(80 << 20) - 1] == 7);
    }
}
