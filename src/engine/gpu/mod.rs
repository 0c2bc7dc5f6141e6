//! GPU engines: the device-independent half. One driver, written once over the narrow
//! [`Device`] trait, plans device memory, schedules launches of the kernel in `kernels/` and
//! moves data; `cuda` (cudarc, loaded at run time) and `hip` (hip-sys, a cargo feature)
//! implement the trait. The kernel source is shared by both vendors.

pub mod cuda;
#[cfg(feature = "hip")]
pub mod hip;
pub mod kcache;
pub mod ordered;
pub mod schedule;
pub mod source;
pub mod spec;

use std::sync::Mutex;
use std::time::Duration;

use self::schedule::Batch;
pub use self::spec::KernelSpec;
use super::{EngineError, EngineTimes, StatSpec, TileResult};
use crate::pool::{PoolRef, PoolType, Sample};
use crate::window::WindowPlan;

/// The kernel source, shared by HIP and CUDA, and its headers (source.rs).
pub use self::source::{kernel_source_inlined, PORT_HEADER, SORT_NETWORK};

/// Most percentiles one launch handles (`SC_MAX_PCT` in the kernel).
pub const MAX_PERCENTILES: usize = 8;

/// A device address.
pub type DevPtr = u64;

/// A failed device call: which API call, on which device, and what the runtime said.
#[derive(Debug, thiserror::Error)]
#[error("{api} {call} failed on {device}: {detail}")]
pub struct GpuError {
    pub api: &'static str,
    pub call: &'static str,
    pub device: String,
    pub detail: String,
}

/// What the driver needs to know of a device to size launches.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// e.g. `CUDA device 0 (NVIDIA H200)`.
    pub description: String,
    /// Lanes per warp / wavefront.
    pub wave: usize,
    /// Largest dynamic shared memory one block may use (after opting in).
    pub smem_per_block: usize,
    /// Shared memory per multiprocessor (all resident blocks together).
    pub smem_per_sm: usize,
    pub max_threads_per_sm: usize,
}

/// The calls a GPU backend provides: memory, copies, kernels, timing. Addresses are raw; the
/// driver keeps them valid. Work is issued in order on one stream.
pub trait Device: Send {
    const API: &'static str;
    fn info(&self) -> &DeviceInfo;
    /// Make the device current on the calling thread.
    fn bind(&mut self) -> Result<(), GpuError>;
    fn free_memory(&mut self) -> Result<u64, GpuError>;
    fn alloc(&mut self, bytes: usize) -> Result<DevPtr, GpuError>;
    /// # Safety
    /// `ptr` came from `alloc` and is no longer used by queued work.
    unsafe fn free(&mut self, ptr: DevPtr);
    /// Page-lock host memory for DMA.
    /// # Safety
    /// `host..host+bytes` stays mapped until `unregister`.
    unsafe fn register(&mut self, host: *const u8, bytes: usize) -> Result<(), GpuError>;
    /// # Safety
    /// `host` was registered and no queued copy uses it.
    unsafe fn unregister(&mut self, host: *const u8) -> Result<(), GpuError>;
    /// Copy `height` rows of `width` bytes from host to device.
    /// # Safety
    /// Both ranges are valid for the copy and stay so until the stream is synchronized.
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_h2d(
        &mut self,
        dst: DevPtr,
        dpitch: usize,
        src: *const u8,
        spitch: usize,
        width: usize,
        height: usize,
    ) -> Result<(), GpuError>;
    /// Copy `height` rows of `width` bytes from device to host.
    /// # Safety
    /// As for `copy_h2d`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_d2h(
        &mut self,
        dst: *mut u8,
        dpitch: usize,
        src: DevPtr,
        spitch: usize,
        width: usize,
        height: usize,
    ) -> Result<(), GpuError>;
    /// # Safety
    /// Both ranges are device allocations of at least `bytes`.
    unsafe fn copy_d2d(&mut self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<(), GpuError>;
    /// Load `kernel` (once: compiled with its launch constants where the backend compiles at
    /// run time, else the generic instantiation of that name) and allow it `smem` bytes of
    /// dynamic shared memory.
    fn prepare(&mut self, kernel: &KernelSpec, smem: usize) -> Result<(), GpuError>;
    /// # Safety
    /// Every address in `params` is valid for what the kernel reads and writes, and `params`
    /// hold the launch constants `kernel` was prepared with.
    unsafe fn launch(
        &mut self,
        kernel: &KernelSpec,
        grid: u32,
        block: u32,
        smem: usize,
        params: &KernelParams,
    ) -> Result<(), GpuError>;
    /// Record the start of a timed region on the stream.
    fn timer_start(&mut self) -> Result<(), GpuError>;
    /// Record its end, wait for it and return the device time since `timer_start`.
    fn timer_stop(&mut self) -> Result<Duration, GpuError>;
    fn synchronize(&mut self) -> Result<(), GpuError>;
    /// A second queue for host-to-device copies issued from other threads while this one
    /// computes (`None` where the backend has none: the pool then stays on the host).
    fn uploader(&mut self) -> Result<Option<Box<dyn Uploader>>, GpuError> {
        Ok(None)
    }
}

/// Host-to-device copies on their own queue, usable from any thread: reader threads send each
/// decoded pool row straight into a device-resident pool through it.
pub trait Uploader: Send {
    /// Copy `bytes` from `src` to `dst` and wait until the copy is done.
    ///
    /// # Safety
    /// `src` is readable for `bytes` and `dst` is a device allocation holding at least `bytes`.
    unsafe fn upload(&mut self, dst: DevPtr, src: *const u8, bytes: usize) -> Result<(), GpuError>;
}

/// The kernel's argument block (`ClimParams` in kernels/climatology.hip: same order and sizes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelParams {
    pub pool: DevPtr,
    pub out_values: DevPtr,
    pub out_counts: DevPtr,
    pub load_start: DevPtr,
    pub loads: DevPtr,
    pub target_lists: DevPtr,
    pub target_nl: DevPtr,
    pub group_off: DevPtr,
    pub group_rows: DevPtr,
    pub group_first: DevPtr,
    pub pos_lo: DevPtr,
    pub pos_frac: DevPtr,
    pub ring_global: DevPtr,
    pub lut: DevPtr,
    pub pool_stride: i64,
    pub out_cell_stride: i64,
    pub n_cells: i32,
    pub out_cell0: i32,
    pub n_batch: i32,
    pub out_target0: i32,
    pub out_targets: i32,
    pub n_pct: i32,
    pub max_n: i32,
    pub min_samples: i32,
    pub rows: i32,
    pub ring: i32,
    pub use_hints: i32,
    pub pad: i32,
}

/// Where the kernel keeps its ring of staged groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RingPlace {
    /// Shared memory when a block of at least one wave fits, else global memory.
    Auto,
    /// Shared memory (LDS): the fast path.
    Shared,
    /// Device memory: for windows or year counts too large for shared memory.
    Global,
}

/// Settings of a GPU engine.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Device memory budget (default: 90% of what is free).
    pub max_device_mem: Option<u64>,
    pub ring: RingPlace,
    /// Start each search from the previous day's value (on by default; off to measure it).
    pub hints: bool,
    /// Threads per block (default: chosen for occupancy).
    pub block: Option<usize>,
    /// The device ordinal came from the node-local rank: take it modulo the device count
    /// (an ordinal the user gave must exist).
    pub device_wraps: bool,
    /// Compile the kernel for its launch constants where the backend compiles at run time (on
    /// by default; `SSTCLIM_CUDA_SPECIALIZE=0` turns it off, to measure it).
    pub specialize: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            max_device_mem: None,
            ring: RingPlace::Auto,
            hints: true,
            block: None,
            device_wraps: false,
            specialize: std::env::var("SSTCLIM_CUDA_SPECIALIZE").map_or(true, |v| v != "0"),
        }
    }
}

/// Sample types the kernel is instantiated for.
pub trait GpuSample: Sample {
    /// Kernel name suffix (`f32`, `f64`).
    const KERNEL: &'static str;
    /// Bytes of one sort key.
    const KEY_BYTES: usize;
}

impl GpuSample for f32 {
    const KERNEL: &'static str = "f32";
    const KEY_BYTES: usize = 4;
}

impl GpuSample for f64 {
    const KERNEL: &'static str = "f64";
    const KEY_BYTES: usize = 8;
}

/// Int16 pools are decoded through their table into float64 on the device.
impl GpuSample for i16 {
    const KERNEL: &'static str = "i16";
    const KEY_BYTES: usize = 8;
}

/// The kernel family (`f32`, `f64`, `i16`, `i16o`) and its key bytes for a pool of `T` decoded
/// through `decoding`: int16 pools whose table keeps the integers' order sort the integers
/// themselves (`ordered.rs`), with 4-byte keys.
fn kernel_kind<T: GpuSample>(decoding: Option<&[f64]>) -> (&'static str, usize) {
    if T::KERNEL == "i16" && ordered::enabled() && decoding.map_or(true, ordered::table_is_ordered) {
        ("i16o", 4)
    } else {
        (T::KERNEL, T::KEY_BYTES)
    }
}

/// Resident blocks per multiprocessor at most (32 on NVIDIA since Maxwell and on AMD CDNA).
const MAX_BLOCKS_PER_SM: usize = 32;

/// Threads a block with the ring's keys in device memory on 32-lane devices (NVIDIA), for
/// 4-byte keys (float32 pools) and 8-byte keys (float64 and int16 pools).
const GLOBAL_RING_BLOCK: [usize; 2] = [64, 128];

/// `--gpu-ring auto` stages in shared memory only if a multiprocessor holds this many cells.
const AUTO_SHARED_MIN_CELLS: usize = 256;

/// The kernel instantiations: largest number of groups per target each handles.
const MAXL_VARIANTS: [usize; 3] = [11, 12, 32];

/// How one `compute` call uses the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    pub kernel: String,
    /// Bytes of one sort key of that kernel.
    pub key_bytes: usize,
    pub maxl: usize,
    pub block: usize,
    pub smem: usize,
    pub ring_in_shared: bool,
    /// Ring slots (the largest batch's).
    pub ring: usize,
    /// Rows per ring slot: the longest group plus two sentinels.
    pub rows: usize,
    /// Cells per chunk (all cells when the tile fits).
    pub chunk: usize,
    pub batches: Vec<Batch>,
    /// Pool rows the device buffer holds.
    pub pool_rows: usize,
    pub device_bytes: u64,
}

/// Bytes of ring storage per cell: per slot a float64 sum, `rows` keys and a count; then per
/// percentile a key (the previous day's value) and a byte per slot (a position).
fn ring_bytes_per_cell(ring: usize, rows: usize, key: usize, n_pct: usize) -> usize {
    ring * rows * key + small_bytes_per_cell(ring, key, n_pct)
}

/// The part of the ring besides the keys (sums, counts, hints, positions): always in shared
/// memory, also when the keys live in device memory.
fn small_bytes_per_cell(ring: usize, key: usize, n_pct: usize) -> usize {
    ring * (8 + 4) + n_pct * (key + ring)
}

/// Choose the block size: as many resident cells per multiprocessor as shared memory allows
/// (ties: the smaller block), in whole waves.
fn choose_block(info: &DeviceInfo, per_cell: usize) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for waves in 1..=(256 / info.wave).max(1) {
        let bc = waves * info.wave;
        if bc > 256 {
            break;
        }
        let smem = bc * per_cell;
        if smem > info.smem_per_block {
            break;
        }
        let blocks = (info.smem_per_sm / (smem + 1024)).min(info.max_threads_per_sm / bc).min(MAX_BLOCKS_PER_SM);
        let resident = blocks * bc;
        if resident > 0 && best.map_or(true, |(r, _)| resident > r) {
            best = Some((resident, bc));
        }
    }
    best.map(|(_, bc)| bc)
}

/// Plan the launches of one tile: kernel variant, ring placement, block size, chunks of cells
/// and batches of days within `budget` bytes of device memory.
pub fn plan_launch<T: GpuSample>(
    info: &DeviceInfo,
    opts: &GpuOptions,
    plan: &WindowPlan,
    stats: &StatSpec,
    n_cells: usize,
    budget: u64,
    pool_on_device: bool,
) -> Result<LaunchPlan, String> {
    let kind = (T::KERNEL, T::KEY_BYTES);
    plan_launch_kind(info, opts, plan, stats, n_cells, budget, pool_on_device, kind, std::mem::size_of::<T>())
}

/// `plan_launch` for kernel family `kind` (name, key bytes) over pool samples of `sample` bytes.
#[allow(clippy::too_many_arguments)]
fn plan_launch_kind(
    info: &DeviceInfo,
    opts: &GpuOptions,
    plan: &WindowPlan,
    stats: &StatSpec,
    n_cells: usize,
    budget: u64,
    pool_on_device: bool,
    kind: (&str, usize),
    sample: usize,
) -> Result<LaunchPlan, String> {
    let maxl_needed = plan.targets.iter().map(|t| t.groups.len()).max().unwrap_or(1).max(1);
    let Some(&maxl) = MAXL_VARIANTS.iter().find(|&&m| m >= maxl_needed) else {
        return Err(format!(
            "windows of {maxl_needed} days exceed the GPU kernel's {} (use --backend cpu)",
            MAXL_VARIANTS[MAXL_VARIANTS.len() - 1]
        ));
    };
    if stats.percentiles.len() > MAX_PERCENTILES {
        return Err(format!("the GPU kernel computes at most {MAX_PERCENTILES} percentiles per run"));
    }
    if n_cells > i32::MAX as usize {
        // the kernel multiplies 32-bit rows by a 32-bit stride of at most this many cells
        return Err(format!("{n_cells} cells in one tile exceed the GPU kernel's {}", i32::MAX));
    }
    let rows = plan.groups.iter().map(|g| g.slots.len()).max().unwrap_or(0) + 2;
    let n_pct = stats.percentiles.len();
    let whole = Batch::build(plan, 0..plan.targets.len(), maxl);
    let key = kind.1;
    // shared memory: the ring of the whole job if a block of one wave holds it, else batches
    // with the smallest ring (one target's groups)
    let per_cell_min = ring_bytes_per_cell(maxl_needed, rows, key, n_pct);
    let shared_ok = info.wave * per_cell_min <= info.smem_per_block;
    let in_shared = match opts.ring {
        RingPlace::Shared if !shared_ok => {
            return Err(format!(
                "a ring of {maxl_needed} x {rows} keys per cell does not fit shared memory ({} bytes per block)",
                info.smem_per_block
            ))
        }
        RingPlace::Shared => true,
        RingPlace::Global => false,
        // shared memory only when it keeps enough cells resident to hide latency: on an H200
        // the reference job's ring (1.5 KB a cell) leaves 4 warps per multiprocessor, and the
        // device-memory ring (served mostly from L2) measured faster: 37 ms against 44 ms
        RingPlace::Auto => shared_ok && info.smem_per_sm / per_cell_min >= AUTO_SHARED_MIN_CELLS,
    };
    let max_ring = if in_shared && whole.ring > maxl_needed {
        // the largest ring a one-wave block fits
        ((info.smem_per_block / info.wave).saturating_sub(n_pct * key) / (ring_bytes_per_cell(1, rows, key, 0) + n_pct))
            .max(maxl_needed)
    } else {
        whole.ring.max(maxl_needed)
    };
    let ring_max = max_ring.min(whole.ring.max(maxl_needed));
    let per_cell = ring_bytes_per_cell(ring_max, rows, key, n_pct);
    // shared memory per cell: the whole ring, or without its keys when they live in device memory
    let smem_per_cell = if in_shared { per_cell } else { small_bytes_per_cell(ring_max, key, n_pct) };
    let ring_block =
        if info.wave >= 64 { 4 * info.wave } else { GLOBAL_RING_BLOCK[usize::from(key > 4)].max(info.wave) };
    let block = match opts.block {
        // whole waves: the kernel votes across a wave's lanes
        Some(b) if b == 0 || b > 1024 || b % info.wave != 0 => {
            return Err(format!("--gpu-block {b} is not a multiple of the wave width {} within 1..=1024", info.wave))
        }
        Some(b) => b,
        // keys in device memory: registers, not shared memory, bound residency. On the H200,
        // blocks of 64 threads measured best for float32 (13.87 ms against 14.1 ms with 128 for
        // the reference job) and 128 for float64 (30.0 ms against 31.1 ms with 64; see
        // bench-results/kernel-launch-constants-2026-12-01-h200); 64-lane AMD waves keep the
        // four waves a block chosen before (not measured on AMD since)
        None if !in_shared && ring_block * smem_per_cell <= info.smem_per_block => ring_block,
        None => choose_block(info, smem_per_cell).ok_or_else(|| {
            format!("no block of {} threads fits {} bytes of shared memory", info.wave, smem_per_cell)
        })?,
    };
    let n_targets = plan.targets.len();
    let n_stats = stats.n_stats();
    let max_n = plan.max_capacity();
    // schedules, group and position tables, with room to spare
    let tables = (1 << 20)
        + (max_n + 1) * stats.percentiles.len() * 12
        + plan.slots.len() * 8
        + n_targets * (maxl + 2) * 4
        + plan.groups.len() * 8;
    // device bytes for `chunk` cells and `rows_held` pool rows (none when the whole pool
    // already lives on the device)
    let rows_bytes = if pool_on_device { 0 } else { sample };
    let need = |chunk: usize, rows_held: usize| -> u64 {
        let results = chunk * n_targets * (n_stats * 8 + 4);
        let ring = if in_shared { 0 } else { chunk.div_ceil(block) * block * ring_max * rows * key };
        (rows_held * chunk * rows_bytes + results + ring + tables) as u64
    };
    let mut chunk = n_cells.max(1);
    loop {
        // pool rows that fit beside the results for this chunk
        let fixed = need(chunk, 0);
        if fixed < budget {
            let max_rows = if pool_on_device {
                plan.slots.len().max(1)
            } else {
                ((budget - fixed) / (chunk * sample) as u64) as usize
            };
            let batches = Batch::plan(plan, maxl, max_ring, max_rows.max(1));
            let pool_rows = batches.iter().map(|b| b.slots.len()).max().unwrap_or(0);
            if pool_rows <= max_rows {
                let ring = batches.iter().map(|b| b.ring).max().unwrap_or(1).max(1);
                let smem = block
                    * if in_shared {
                        ring_bytes_per_cell(ring, rows, key, n_pct)
                    } else {
                        small_bytes_per_cell(ring, key, n_pct)
                    };
                return Ok(LaunchPlan {
                    kernel: format!("sstclim_clim_{}_l{maxl}", kind.0),
                    key_bytes: key,
                    maxl,
                    block,
                    smem,
                    ring_in_shared: in_shared,
                    ring,
                    rows,
                    chunk,
                    batches,
                    pool_rows,
                    device_bytes: need(chunk, pool_rows),
                });
            }
        }
        if chunk <= block {
            return Err(format!(
                "device memory budget of {:.2} GB is too small even for {chunk} cells",
                budget as f64 / 1e9
            ));
        }
        chunk = chunk.div_ceil(2).div_ceil(block) * block;
    }
}

/// A device buffer that remembers its size; freed explicitly by the engine.
#[derive(Default)]
struct Buffer {
    ptr: DevPtr,
    bytes: usize,
}

/// What stays allocated on the device between tiles.
struct State<D: Device> {
    device: D,
    buffers: Vec<Buffer>,
    /// Host ranges pinned through `Engine::pin_host`: (start address, bytes).
    pinned: Vec<(usize, usize)>,
}

impl<D: Device> State<D> {
    /// Whether `pool` lies inside a range pinned through `Engine::pin_host`.
    fn contains_pinned<T>(&self, pool: &[T]) -> bool {
        let (a, n) = (pool.as_ptr() as usize, std::mem::size_of_val(pool));
        self.pinned.iter().any(|&(p, len)| a >= p && a + n <= p + len)
    }

    /// Bytes of device memory held.
    fn device_bytes(&self) -> u64 {
        self.buffers.iter().filter(|b| b.ptr != 0).map(|b| b.bytes as u64).sum()
    }

    /// Buffer `i` with room for at least `bytes` (reallocated only to grow).
    fn buffer(&mut self, i: usize, bytes: usize) -> Result<DevPtr, GpuError> {
        if self.buffers.len() <= i {
            self.buffers.resize_with(i + 1, Buffer::default);
        }
        if self.buffers[i].bytes < bytes.max(1) {
            if self.buffers[i].ptr != 0 {
                self.device.synchronize()?;
                // SAFETY: the stream is idle, so no queued work uses the old buffer.
                unsafe { self.device.free(self.buffers[i].ptr) };
                self.buffers[i] = Buffer::default();
            }
            let ptr = self.device.alloc(bytes.max(1))?;
            self.buffers[i] = Buffer { ptr, bytes: bytes.max(1) };
        }
        Ok(self.buffers[i].ptr)
    }

    /// Upload a small table into buffer `i`.
    fn upload<V: Copy>(&mut self, i: usize, data: &[V]) -> Result<DevPtr, GpuError> {
        let bytes = std::mem::size_of_val(data);
        let ptr = self.buffer(i, bytes)?;
        if bytes > 0 {
            // SAFETY: `data` outlives the copy: we synchronize before returning from compute,
            // and the buffer holds at least `bytes`.
            unsafe { self.device.copy_h2d(ptr, bytes, data.as_ptr().cast(), bytes, bytes, 1)? };
            // small pageable copies are synchronous with respect to the host data
            self.device.synchronize()?;
        }
        Ok(ptr)
    }
}

impl<D: Device> Drop for State<D> {
    fn drop(&mut self) {
        let _ = self.device.synchronize();
        for &(ptr, _) in &self.pinned {
            // SAFETY: pinned by pin_host and still mapped (its caller unpins before unmapping;
            // this only runs when the engine goes first).
            let _ = unsafe { self.device.unregister(ptr as *const u8) };
        }
        for b in &self.buffers {
            if b.ptr != 0 {
                // SAFETY: the stream is idle.
                unsafe { self.device.free(b.ptr) };
            }
        }
    }
}

// buffer indices
const B_POOL: usize = 0;
const B_VALUES: usize = 1;
const B_COUNTS: usize = 2;
const B_RING: usize = 3;
const B_POS_LO: usize = 4;
const B_POS_FRAC: usize = 5;
const B_LOAD_START: usize = 6;
const B_LOADS: usize = 7;
const B_LISTS: usize = 8;
const B_NL: usize = 9;
const B_GROUP_OFF: usize = 10;
const B_GROUP_ROWS: usize = 11;
const B_LUT: usize = 12;
const B_GROUP_FIRST: usize = 13;

/// A pool that lives in device memory (buffer `B_POOL`), filled row by row through its own
/// copy queue while the engine computes on rows already there.
struct Staged {
    up: Box<dyn Uploader>,
    base: DevPtr,
    row_bytes: usize,
    n_slots: usize,
    n_cells: usize,
    pool: PoolType,
}

/// Where a compute call's pool rows are.
#[derive(Clone, Copy)]
enum PoolSrc<'a, T> {
    /// In host memory (pinned or not): each batch's rows are copied in first.
    Host(&'a [T]),
    /// Already in device memory: rows `slot0..` of the staged pool.
    Device { base: DevPtr, slot0: usize },
}

/// A GPU engine over any [`Device`].
pub struct GpuEngine<D: Device> {
    name: &'static str,
    opts: GpuOptions,
    /// Declared before `state`: its copy queue goes before the device's context.
    staged: Mutex<Option<Staged>>,
    state: Mutex<State<D>>,
}

impl<D: Device> GpuEngine<D> {
    pub fn new(name: &'static str, device: D, opts: GpuOptions) -> Self {
        GpuEngine {
            name,
            opts,
            staged: Mutex::new(None),
            state: Mutex::new(State { device, buffers: Vec::new(), pinned: Vec::new() }),
        }
    }

    /// Make room for a tile's whole pool in device memory, if it fits beside what computing
    /// each of `plans` (the segments') needs in one chunk and the backend can copy from other
    /// threads.
    fn stage_typed<T: GpuSample>(
        &self,
        pool: PoolType,
        n_slots: usize,
        n_cells: usize,
        plans: &[&WindowPlan],
        stats: &StatSpec,
    ) -> Result<bool, GpuError> {
        let mut staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        *staged = None;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind()?;
        let bytes = n_slots * n_cells * std::mem::size_of::<T>();
        let held = st.buffers.get(B_POOL).map_or(0, |b| b.bytes) as u64;
        let budget = self.budget(&mut st.device)? + held;
        if bytes as u64 >= budget {
            return Ok(false);
        }
        let info = st.device.info();
        let one_chunk = |plan: &&WindowPlan| {
            plan_launch::<T>(info, &self.opts, plan, stats, n_cells, budget - bytes as u64, true)
                .is_ok_and(|lp| lp.chunk >= n_cells)
        };
        if !plans.iter().all(one_chunk) {
            return Ok(false);
        }
        let Some(up) = st.device.uploader()? else { return Ok(false) };
        let base = st.buffer(B_POOL, bytes)?;
        *staged = Some(Staged { up, base, row_bytes: n_cells * std::mem::size_of::<T>(), n_slots, n_cells, pool });
        Ok(true)
    }

    fn compute_staged_typed<T: GpuSample>(
        &self,
        slots: std::ops::Range<usize>,
        decoding: Option<&[f64]>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let (base, n_cells) = {
            let staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
            let Some(s) = staged.as_ref().filter(|s| slots.end <= s.n_slots) else {
                return Err(self.error(format!("no device-resident pool holds slots {slots:?}")));
            };
            (s.base, s.n_cells)
        };
        let mut times = EngineTimes::default();
        let (mut st, Some(lp)) = self.begin::<T>(plan, stats, n_cells, true, decoding)? else { return Ok(times) };
        if lp.chunk < n_cells {
            return Err(self.error(format!(
                "the device-resident pool leaves room for {} of {n_cells} cells (use --gpu-pool host)",
                lp.chunk
            )));
        }
        tracing::debug!("{} (device pool): {lp:?}", self.name);
        let src: PoolSrc<'_, T> = PoolSrc::Device { base, slot0: slots.start };
        self.run_plan(&mut st, src, decoding, n_cells, plan, stats, out, &lp, &mut times).map_err(|e| self.error(e))?;
        Ok(times)
    }

    pub fn info(&self) -> DeviceInfo {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).device.info().clone()
    }

    fn error(&self, e: impl std::fmt::Display) -> EngineError {
        EngineError { engine: self.name, message: e.to_string() }
    }

    fn budget(&self, device: &mut D) -> Result<u64, GpuError> {
        let free = device.free_memory()?;
        Ok(match self.opts.max_device_mem {
            Some(limit) => limit.min(free),
            None => free / 10 * 9,
        })
    }

    /// The device state, locked and made current, and the launch plan of `n_cells` cells
    /// (`None` when there is nothing to compute).
    fn begin<T: GpuSample>(
        &self,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
        pool_on_device: bool,
        decoding: Option<&[f64]>,
    ) -> Result<(std::sync::MutexGuard<'_, State<D>>, Option<LaunchPlan>), EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.error(e))?;
        if plan.targets.is_empty() || n_cells == 0 {
            return Ok((st, None));
        }
        let budget = self.budget(&mut st.device).map_err(|e| self.error(e))?;
        let kind = kernel_kind::<T>(decoding);
        let lp = plan_launch_kind(
            st.device.info(),
            &self.opts,
            plan,
            stats,
            n_cells,
            budget,
            pool_on_device,
            kind,
            std::mem::size_of::<T>(),
        )
        .map_err(|e| self.error(e))?;
        Ok((st, Some(lp)))
    }

    fn compute_typed<T: GpuSample>(
        &self,
        pool: &[T],
        decoding: Option<&[f64]>,
        n_cells: usize,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let mut times = EngineTimes::default();
        let (mut st, Some(lp)) = self.begin::<T>(plan, stats, n_cells, false, decoding)? else { return Ok(times) };
        tracing::debug!("{}: {lp:?}", self.name);
        let pinned = if st.contains_pinned(pool) { Pinned::already() } else { Pinned::new(&mut st.device, pool) };
        times.pin = Duration::from_secs_f64(pinned.seconds);
        let result = self.run_plan(&mut st, PoolSrc::Host(pool), decoding, n_cells, plan, stats, out, &lp, &mut times);
        pinned.release(&mut st.device);
        result.map_err(|e| self.error(e))?;
        Ok(times)
    }

    /// The kernel `run_plan` launches for `lp`: compiled for its launch constants where every
    /// launch shares them (one chunk of all cells: the pool stride is `n_cells` whether the pool
    /// rows are on the device or copied in), else the generic one.
    fn kernel_spec(
        &self,
        lp: &LaunchPlan,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
        tables: Option<&[schedule::GroupTables]>,
    ) -> KernelSpec {
        if !self.opts.specialize || lp.chunk < n_cells {
            return KernelSpec::generic(&lp.kernel);
        }
        let built;
        let tables = match tables {
            Some(t) => t,
            None => {
                built = lp.batches.iter().map(|b| b.group_tables(plan)).collect::<Vec<_>>();
                &built
            }
        };
        let fractions: Vec<f64> = stats.percentiles.iter().map(|p| p.fraction()).collect();
        KernelSpec::for_launches(lp, plan, tables, &fractions, n_cells, self.opts.hints)
    }

    /// Compile (and load) the kernel `compute` will launch for this job.
    fn prepare_typed<T: GpuSample>(
        &self,
        decoding: Option<&[f64]>,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
    ) -> Result<(), EngineError> {
        let (mut st, Some(lp)) = self.begin::<T>(plan, stats, n_cells, false, decoding)? else { return Ok(()) };
        let kernel = self.kernel_spec(&lp, plan, stats, n_cells, None);
        st.device.prepare(&kernel, lp.smem).map_err(|e| self.error(e))
    }

    #[allow(clippy::too_many_arguments)]
    fn run_plan<T: GpuSample>(
        &self,
        st: &mut State<D>,
        pool: PoolSrc<'_, T>,
        decoding: Option<&[f64]>,
        n_cells: usize,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
        lp: &LaunchPlan,
        times: &mut EngineTimes,
    ) -> Result<(), GpuError> {
        let sample = std::mem::size_of::<T>();
        let n_targets = plan.targets.len();
        let n_stats = stats.n_stats();
        let n_pct = stats.percentiles.len();
        let max_n = plan.max_capacity();
        // positions [n][percentile]
        let table = stats.position_table(max_n);
        let mut pos_lo = vec![0i32; (max_n + 1) * n_pct.max(1)];
        let mut pos_frac = vec![0f64; (max_n + 1) * n_pct.max(1)];
        for (n, row) in table.iter().enumerate() {
            for (i, p) in row.iter().enumerate() {
                pos_lo[n * n_pct + i] = p.lo as i32;
                pos_frac[n * n_pct + i] = p.frac;
            }
        }
        let tables: Vec<_> = lp.batches.iter().map(|b| b.group_tables(plan)).collect();
        let kernel = self.kernel_spec(lp, plan, stats, n_cells, Some(&tables));
        st.device.prepare(&kernel, lp.smem)?;
        let d_pos_lo = st.upload(B_POS_LO, &pos_lo)?;
        let d_pos_frac = st.upload(B_POS_FRAC, &pos_frac)?;
        // int16 pools: the decoding table (without one, a value is its integer)
        let d_lut = if T::KERNEL == "i16" {
            let identity: Vec<f64>;
            let table = match decoding {
                Some(t) => t,
                None => {
                    identity = (0..65536).map(|i| f64::from(i - 32768)).collect();
                    &identity
                }
            };
            st.upload(B_LUT, table)?
        } else {
            0
        };
        let d_pool = match pool {
            PoolSrc::Host(_) => st.buffer(B_POOL, lp.pool_rows * lp.chunk * sample)?,
            PoolSrc::Device { .. } => 0,
        };
        let d_values = st.buffer(B_VALUES, n_stats * n_targets * lp.chunk * 8)?;
        let d_counts = st.buffer(B_COUNTS, n_targets * lp.chunk * 4)?;
        let d_ring = if lp.ring_in_shared {
            0
        } else {
            let blocks = lp.chunk.div_ceil(lp.block);
            st.buffer(B_RING, blocks * lp.block * lp.ring * lp.rows * lp.key_bytes)?
        };
        for c0 in (0..n_cells).step_by(lp.chunk) {
            let width = lp.chunk.min(n_cells - c0);
            for (batch, groups) in lp.batches.iter().zip(&tables) {
                // the batch's pool rows, this chunk's cells
                let rows = batch.slots.len();
                let (batch_pool, stride) = match pool {
                    PoolSrc::Host(pool) => {
                        st.device.timer_start()?;
                        // SAFETY: the source rows lie inside `pool` (pinned or not) and the device
                        // buffer holds `pool_rows * chunk` samples; we synchronize in timer_stop.
                        unsafe {
                            st.device.copy_h2d(
                                d_pool,
                                width * sample,
                                pool.as_ptr().add(batch.slots.start * n_cells + c0).cast(),
                                n_cells * sample,
                                width * sample,
                                rows,
                            )?;
                        }
                        times.h2d += st.device.timer_stop()?;
                        times.bytes_h2d += (rows * width * sample) as u64;
                        (d_pool, width)
                    }
                    // one chunk of all cells (checked by the caller): the rows are in place
                    PoolSrc::Device { base, slot0 } => {
                        (base + ((slot0 + batch.slots.start) * n_cells * sample) as DevPtr, n_cells)
                    }
                };
                let params = KernelParams {
                    pool: batch_pool,
                    out_values: d_values,
                    out_counts: d_counts,
                    load_start: st.upload(B_LOAD_START, &batch.load_start)?,
                    loads: st.upload(B_LOADS, &batch.loads)?,
                    target_lists: st.upload(B_LISTS, &batch.target_lists)?,
                    target_nl: st.upload(B_NL, &batch.target_nl)?,
                    group_off: st.upload(B_GROUP_OFF, &groups.off)?,
                    group_rows: st.upload(B_GROUP_ROWS, &groups.rows)?,
                    group_first: st.upload(B_GROUP_FIRST, &groups.first)?,
                    pos_lo: d_pos_lo,
                    pos_frac: d_pos_frac,
                    ring_global: d_ring,
                    lut: d_lut,
                    pool_stride: stride as i64,
                    out_cell_stride: width as i64,
                    n_cells: width as i32,
                    out_cell0: 0,
                    n_batch: batch.targets.len() as i32,
                    out_target0: batch.targets.start as i32,
                    out_targets: n_targets as i32,
                    n_pct: n_pct as i32,
                    max_n: max_n as i32,
                    min_samples: stats.min_samples.max(1) as i32,
                    rows: lp.rows as i32,
                    ring: lp.ring as i32,
                    use_hints: i32::from(self.opts.hints),
                    pad: 0,
                };
                st.device.timer_start()?;
                // SAFETY: every address in `params` is a live allocation sized by the plan for
                // this chunk and batch; the kernel writes only `out_*` and the ring.
                unsafe {
                    st.device.launch(&kernel, width.div_ceil(lp.block) as u32, lp.block as u32, lp.smem, &params)?
                };
                times.kernel += st.device.timer_stop()?;
                times.launches += 1;
            }
            // results of the chunk: rows (stat, target) of `width` cells
            st.device.timer_start()?;
            // SAFETY: `out` is sized n_stats x n_targets x n_cells (and n_targets x n_cells
            // counts); the device buffers hold the chunk's rows; synchronized in timer_stop.
            unsafe {
                st.device.copy_d2h(
                    out.values.as_mut_ptr().add(c0).cast(),
                    n_cells * 8,
                    d_values,
                    width * 8,
                    width * 8,
                    n_stats * n_targets,
                )?;
                st.device.copy_d2h(
                    out.counts.as_mut_ptr().add(c0).cast(),
                    n_cells * 4,
                    d_counts,
                    width * 4,
                    width * 4,
                    n_targets,
                )?;
            }
            times.d2h += st.device.timer_stop()?;
            times.bytes_d2h += (width * n_targets * (n_stats * 8 + 4)) as u64;
        }
        Ok(())
    }

    /// Bandwidth ceilings measured on this device: pinned host-to-device and device-to-device
    /// copies of `bytes` (each the median of `repeats`).
    pub fn measure_bandwidth(&self, bytes: usize, repeats: usize) -> Result<BandwidthProbe, EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.error(e))?;
        let r = probe(&mut st, bytes, repeats.max(1));
        r.map_err(|e| self.error(e))
    }
}

fn probe<D: Device>(st: &mut State<D>, bytes: usize, repeats: usize) -> Result<BandwidthProbe, GpuError> {
    let host = crate::pool::Pool::<f64>::new(1, bytes / 8).map_err(|e| GpuError {
        api: D::API,
        call: "mmap",
        device: "host".into(),
        detail: e.to_string(),
    })?;
    let src = host.as_slice();
    let n = src.len() * 8;
    // touch every page before pinning
    let ptr = src.as_ptr() as *mut f64;
    for i in (0..src.len()).step_by(512) {
        // SAFETY: i < len; the pool is ours and not yet shared with the device.
        unsafe { ptr.add(i).write(i as f64) };
    }
    // SAFETY: `host` stays mapped until after unregister below.
    unsafe { st.device.register(src.as_ptr().cast(), n)? };
    let a = st.buffer(B_POOL, 2 * n)?;
    let mut h2d = Vec::new();
    let mut d2d = Vec::new();
    let run = (|| -> Result<(), GpuError> {
        for _ in 0..repeats + 1 {
            st.device.timer_start()?;
            // SAFETY: `src` is pinned and `a` holds 2n bytes.
            unsafe { st.device.copy_h2d(a, n, src.as_ptr().cast(), n, n, 1)? };
            h2d.push(st.device.timer_stop()?);
            st.device.timer_start()?;
            // SAFETY: both halves of `a` are n bytes.
            unsafe { st.device.copy_d2d(a + n as u64, a, n)? };
            d2d.push(st.device.timer_stop()?);
        }
        Ok(())
    })();
    // SAFETY: the stream was synchronized by timer_stop (or is drained here).
    let _ = st.device.synchronize();
    unsafe { st.device.unregister(src.as_ptr().cast())? };
    run?;
    let median = |v: &mut Vec<Duration>| {
        v.remove(0); // warm-up
        v.sort();
        v[v.len() / 2].as_secs_f64()
    };
    let (h, d) = (median(&mut h2d), median(&mut d2d));
    Ok(BandwidthProbe {
        bytes: n as u64,
        h2d_seconds: h,
        h2d_gb_per_s: n as f64 / h / 1e9,
        d2d_seconds: d,
        // a copy reads and writes every byte
        d2d_gb_per_s: 2.0 * n as f64 / d / 1e9,
    })
}

/// Measured copy bandwidths.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BandwidthProbe {
    pub bytes: u64,
    pub h2d_seconds: f64,
    pub h2d_gb_per_s: f64,
    pub d2d_seconds: f64,
    /// Bytes read plus bytes written per second.
    pub d2d_gb_per_s: f64,
}

/// The host pool, page-locked for the duration of one compute call when the device allows it.
struct Pinned {
    ptr: *const u8,
    ok: bool,
    seconds: f64,
}

impl Pinned {
    fn new<D: Device, T>(device: &mut D, pool: &[T]) -> Pinned {
        let start = std::time::Instant::now();
        let bytes = std::mem::size_of_val(pool);
        // SAFETY: the pool outlives this compute call, and `release` runs before it returns.
        let ok = match unsafe { device.register(pool.as_ptr().cast(), bytes) } {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("copying from pageable memory: {e}");
                false
            }
        };
        Pinned { ptr: pool.as_ptr().cast(), ok, seconds: start.elapsed().as_secs_f64() }
    }

    /// For a pool inside memory the caller pinned already.
    fn already() -> Pinned {
        Pinned { ptr: std::ptr::null(), ok: false, seconds: 0.0 }
    }

    fn release<D: Device>(self, device: &mut D) {
        if self.ok {
            let _ = device.synchronize();
            // SAFETY: registered in `new`; the stream is idle.
            if let Err(e) = unsafe { device.unregister(self.ptr) } {
                tracing::warn!("{e}");
            }
        }
    }
}

impl<D: Device> super::Engine for GpuEngine<D> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self) -> String {
        self.info().description
    }

    fn is_device(&self) -> bool {
        true
    }

    fn probe_bandwidth(&self, bytes: usize, repeats: usize) -> Option<Result<BandwidthProbe, EngineError>> {
        Some(self.measure_bandwidth(bytes, repeats))
    }

    fn prepare(
        &self,
        pool: PoolType,
        decoding: Option<&[f64]>,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
    ) -> Result<(), EngineError> {
        match pool {
            PoolType::F64 => self.prepare_typed::<f64>(decoding, plan, stats, n_cells),
            PoolType::F32 => self.prepare_typed::<f32>(decoding, plan, stats, n_cells),
            PoolType::I16 => self.prepare_typed::<i16>(decoding, plan, stats, n_cells),
        }
    }

    unsafe fn pin_host(&self, ptr: *const u8, len: usize) -> Result<bool, EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.error(e))?;
        // SAFETY: the caller keeps the range mapped until unpin_host.
        match unsafe { st.device.register(ptr, len) } {
            Ok(()) => {
                st.pinned.push((ptr as usize, len));
                Ok(true)
            }
            Err(e) => {
                tracing::warn!("copying from pageable memory: {e}");
                Ok(false)
            }
        }
    }

    unsafe fn unpin_host(&self, ptr: *const u8) -> Result<(), EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = st.pinned.iter().position(|&(p, _)| p == ptr as usize) else {
            return Ok(());
        };
        st.pinned.swap_remove(i);
        st.device.bind().map_err(|e| self.error(e))?;
        st.device.synchronize().map_err(|e| self.error(e))?;
        // SAFETY: registered by pin_host; the stream is idle, so no copy uses it.
        unsafe { st.device.unregister(ptr) }.map_err(|e| self.error(e))
    }

    fn device_memory(&self) -> Option<u64> {
        Some(self.state.lock().unwrap_or_else(|e| e.into_inner()).device_bytes())
    }

    fn stage_pool(
        &self,
        pool: PoolType,
        n_slots: usize,
        n_cells: usize,
        plans: &[&WindowPlan],
        stats: &StatSpec,
    ) -> Result<bool, EngineError> {
        match pool {
            PoolType::F64 => self.stage_typed::<f64>(pool, n_slots, n_cells, plans, stats),
            PoolType::F32 => self.stage_typed::<f32>(pool, n_slots, n_cells, plans, stats),
            PoolType::I16 => self.stage_typed::<i16>(pool, n_slots, n_cells, plans, stats),
        }
        .map_err(|e| self.error(e))
    }

    unsafe fn upload_slot(&self, slot: usize, src: *const u8) -> Result<(), EngineError> {
        let mut staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = staged.as_mut().filter(|s| slot < s.n_slots) else {
            return Err(self.error(format!("no device-resident pool holds slot {slot}")));
        };
        let dst = s.base + (slot * s.row_bytes) as DevPtr;
        // SAFETY: the caller's row holds `row_bytes`; the pool buffer holds `n_slots` rows.
        unsafe { s.up.upload(dst, src, s.row_bytes) }.map_err(|e| self.error(e))
    }

    fn compute_staged(
        &self,
        slots: std::ops::Range<usize>,
        decoding: Option<&[f64]>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let pool = self.staged.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|s| s.pool);
        match pool {
            Some(PoolType::F64) => self.compute_staged_typed::<f64>(slots, None, plan, stats, out),
            Some(PoolType::F32) => self.compute_staged_typed::<f32>(slots, None, plan, stats, out),
            Some(PoolType::I16) => self.compute_staged_typed::<i16>(slots, decoding, plan, stats, out),
            None => Err(self.error("no device-resident pool")),
        }
    }

    fn unstage_pool(&self) {
        *self.staged.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        match pool {
            PoolRef::F64(p) => self.compute_typed(p.as_slice(), None, p.n_cells(), plan, stats, out),
            PoolRef::F32(p) => self.compute_typed(p.as_slice(), None, p.n_cells(), plan, stats, out),
            PoolRef::I16(p) => {
                self.compute_typed(p.as_slice(), p.decoding().map(|t| &t[..]), p.n_cells(), plan, stats, out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::percentile::Method;
    use crate::window::WindowSpec;

    /// The kernel's sort networks (generated by scripts/gen-sort-network.py) sort 32 keys (a
    /// group's samples) and 11 and 12 (a target's group heads): checked on their text, by the
    /// 0-1 principle on random 0-1 inputs and on random keys with many ties.
    #[test]
    fn kernel_sort_networks_sort() {
        for (n, count) in [(11usize, 38usize), (12, 42), (32, 191)] {
            let define = format!("#define SC_SORT{n}_NETWORK(SC_CX)");
            let text = SORT_NETWORK.split(define.as_str()).nth(1).expect("network in the kernel");
            // up to the next comment line (the next network's, or the end marker)
            let text = text.split("\n//").next().unwrap();
            let pairs: Vec<(usize, usize)> = text
                .split("SC_CX(")
                .skip(1)
                .map(|t| {
                    let (a, b) = t.split_once(')').unwrap().0.split_once(',').unwrap();
                    (a.trim().parse().unwrap(), b.trim().parse().unwrap())
                })
                .collect();
            assert_eq!(pairs.len(), count, "Batcher's network for {n} keys");
            assert!(pairs.iter().all(|&(a, b)| a < b && b < n));
            let mut rng = crate::util::rng::SplitMix64::new(5);
            for trial in 0..50_000 {
                let mut x: Vec<u64> =
                    (0..n).map(|_| if trial % 2 == 0 { rng.below(2) } else { rng.below(1 + trial % 40) }).collect();
                for &(a, b) in &pairs {
                    if x[a] > x[b] {
                        x.swap(a, b);
                    }
                }
                assert!(x.windows(2).all(|w| w[0] <= w[1]), "{n} keys, trial {trial}: {x:?}");
            }
        }
    }

    /// An H200 as the driver sees it (also used by `spec`'s tests).
    pub(super) fn h200() -> DeviceInfo {
        DeviceInfo {
            description: "test H200".into(),
            wave: 32,
            smem_per_block: 232_448,
            smem_per_sm: 233_472,
            max_threads_per_sm: 2048,
        }
    }

    fn gfx906() -> DeviceInfo {
        DeviceInfo {
            description: "test gfx906".into(),
            wave: 64,
            smem_per_block: 65_536,
            smem_per_sm: 65_536,
            max_threads_per_sm: 2560,
        }
    }

    fn job(years: std::ops::RangeInclusive<i32>, h: u16) -> (WindowPlan, StatSpec) {
        let spec = WindowSpec { years, doys: (152..=243).collect(), half_window: h, calendar: Calendar::Ordinal };
        let stats =
            StatSpec { percentiles: vec!["90".parse().unwrap()], method: Method::new(5).unwrap(), min_samples: 1 };
        (WindowPlan::build(&spec, |_| true), stats)
    }

    #[test]
    fn int16_pools_with_ordered_tables_sort_their_integers() {
        let ostia = crate::pool::int16_decoding(|r| if r == -32768.0 { f64::NAN } else { r * 0.01 + 273.15 });
        let reversed = crate::pool::int16_decoding(|r| r * -0.01);
        assert_eq!(kernel_kind::<i16>(Some(&ostia)), ("i16o", 4));
        assert_eq!(kernel_kind::<i16>(None), ("i16o", 4), "no table: the integers are the values");
        assert_eq!(kernel_kind::<i16>(Some(&reversed)), ("i16", 8));
        assert_eq!(kernel_kind::<f32>(Some(&ostia)), ("f32", 4));
        assert_eq!(kernel_kind::<f64>(None), ("f64", 8));
        // the ring is sized by the kernel's keys: the reference job's int16 pool as float32's
        let (plan, stats) = job(1991..=2020, 5);
        let (info, opts) = (h200(), GpuOptions::default());
        let lp = plan_launch_kind(&info, &opts, &plan, &stats, 1440 * 721, 120 << 30, false, ("i16o", 4), 2).unwrap();
        let lp32 = plan_launch::<f32>(&info, &opts, &plan, &stats, 1440 * 721, 120 << 30, false).unwrap();
        assert_eq!((lp.kernel.as_str(), lp.key_bytes, lp.block, lp.smem), ("sstclim_clim_i16o_l11", 4, 64, 64 * 147));
        assert_eq!(lp32.device_bytes - lp.device_bytes, 3060 * 1440 * 721 * 2, "the pool rows alone differ");
        let wide = plan_launch::<i16>(&info, &opts, &plan, &stats, 1440 * 721, 120 << 30, false).unwrap();
        assert_eq!((wide.kernel.as_str(), wide.key_bytes, wide.block), ("sstclim_clim_i16_l11", 8, 128));
    }

    #[test]
    fn reference_job_on_an_h200_is_one_launch() {
        let (plan, stats) = job(1991..=2020, 5);
        let lp =
            plan_launch::<f32>(&h200(), &GpuOptions::default(), &plan, &stats, 1440 * 721, 120 << 30, false).unwrap();
        assert_eq!(lp.kernel, "sstclim_clim_f32_l11");
        assert!(!lp.ring_in_shared, "auto: 148 cells a multiprocessor are too few for shared memory");
        assert_eq!((lp.ring, lp.rows, lp.chunk, lp.batches.len(), lp.pool_rows), (11, 32, 1440 * 721, 1, 3060));
        // the ring's keys in device memory (1408 bytes a cell), the rest (147 bytes) in shared
        assert_eq!(lp.device_bytes as usize - 3060 * 1440 * 721 * 4 - 1440 * 721 * 92 * 20, {
            let cells = (1440 * 721usize).div_ceil(lp.block) * lp.block;
            cells * 1408 + (1 << 20) + 331 * 12 + 3060 * 8 + 92 * 13 * 4 + 102 * 8
        });
        assert_eq!((lp.block, lp.smem), (64, 64 * 147));
        // float64 keys: blocks of 128 (measured best for them)
        let lp =
            plan_launch::<f64>(&h200(), &GpuOptions::default(), &plan, &stats, 1440 * 721, 120 << 30, false).unwrap();
        assert_eq!((lp.kernel.as_str(), lp.block), ("sstclim_clim_f64_l11", 128));
        // the kernel's row offsets are 32-bit row x 32-bit stride
        let too_many = plan_launch::<f32>(&h200(), &GpuOptions::default(), &plan, &stats, 1 << 31, 1 << 50, false);
        assert!(too_many.unwrap_err().contains("exceed the GPU kernel"));
        let opts = GpuOptions { ring: RingPlace::Shared, ..GpuOptions::default() };
        let lp = plan_launch::<f32>(&h200(), &opts, &plan, &stats, 1440 * 721, 120 << 30, false).unwrap();
        assert!(lp.ring_in_shared);
        assert_eq!((lp.ring, lp.rows, lp.chunk, lp.batches.len()), (11, 32, 1440 * 721, 1));
        assert_eq!(lp.pool_rows, 3060);
        assert!(lp.smem <= 232_448 && lp.block % 32 == 0, "{lp:?}");
        // 128 cells resident per multiprocessor: 11 slots x (32 keys x 4 + 12) bytes each
        assert_eq!(lp.block * ((233_472 / (lp.smem + 1024)).min(2048 / lp.block)), 128);
    }

    #[test]
    fn small_lds_falls_back_to_a_global_ring_and_small_budgets_batch() {
        let (plan, stats) = job(1991..=2020, 5);
        // 64 lanes x 1540 bytes exceed 64 KB of LDS
        let lp =
            plan_launch::<f32>(&gfx906(), &GpuOptions::default(), &plan, &stats, 1440 * 721, 12 << 30, false).unwrap();
        assert!(!lp.ring_in_shared);
        assert_eq!(lp.smem, lp.block * 147, "sums, counts, hints and positions stay in LDS");
        assert!(lp.device_bytes <= 12 << 30);
        assert!(lp.batches.len() > 1, "12 GB cannot hold the 12.7 GB pool: batches of days");
        let covered: usize = lp.batches.iter().map(|b| b.targets.len()).sum();
        assert_eq!(covered, 92);
        // fewer years fit shared memory
        let (plan, stats) = job(2011..=2020, 5);
        let opts = GpuOptions { ring: RingPlace::Shared, ..GpuOptions::default() };
        let lp = plan_launch::<f32>(&gfx906(), &opts, &plan, &stats, 1000, 1 << 30, false).unwrap();
        assert!(lp.ring_in_shared && lp.smem <= 65_536 && lp.block == 64, "{lp:?}");
        // a tiny budget splits cells into chunks
        let (plan, stats) = job(1991..=2020, 5);
        let lp = plan_launch::<f64>(&h200(), &GpuOptions::default(), &plan, &stats, 100_000, 200 << 20, false).unwrap();
        assert!(lp.chunk < 100_000 && lp.device_bytes <= 200 << 20, "{lp:?}");
        assert_eq!(lp.kernel, "sstclim_clim_f64_l11");
        // wide windows take the larger kernel, too wide ones are refused
        let (plan, stats) = job(1991..=2020, 15);
        let lp = plan_launch::<f32>(&h200(), &GpuOptions::default(), &plan, &stats, 1000, 1 << 30, false).unwrap();
        assert_eq!(lp.maxl, 32);
        let (plan, stats) = job(1991..=2020, 16);
        assert!(plan_launch::<f32>(&h200(), &GpuOptions::default(), &plan, &stats, 1000, 1 << 30, false).is_err());
    }

    /// Blocks are whole waves (the kernel votes across a wave): a block size that is not a
    /// multiple of the wave width is refused.
    #[test]
    fn block_sizes_are_whole_waves() {
        let (plan, stats) = job(1991..=2020, 5);
        let with = |block: usize, info: &DeviceInfo| {
            let opts = GpuOptions { block: Some(block), ..GpuOptions::default() };
            plan_launch::<f32>(info, &opts, &plan, &stats, 1000, 1 << 30, false).map(|lp| lp.block)
        };
        assert_eq!(with(96, &h200()), Ok(96));
        let err = with(48, &h200()).unwrap_err();
        assert!(err.contains("multiple of the wave width 32"), "{err}");
        assert!(with(96, &gfx906()).is_err(), "64-lane waves");
        assert_eq!(with(128, &gfx906()), Ok(128));
        assert!(with(0, &h200()).is_err() && with(1056, &h200()).is_err());
    }
}
