//! Planning one tile's launches: which kernel instantiation, where its ring of staged groups
//! lives (shared or device memory), the block size, and how the cells are cut into chunks and
//! the target days into batches so that everything fits the device memory budget. Pure: the
//! plans are unit-tested against hand-worked device figures.

use super::limits::{kernel_limits, LaunchError};
use super::options::{GpuOptions, RingPlace};
use super::ordered;
use super::schedule::Batch;
use crate::pool::Sample;
use crate::stats::StatSpec;
use crate::window::WindowPlan;

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
pub(super) fn kernel_kind<T: GpuSample>(decoding: Option<&[f64]>) -> (&'static str, usize) {
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
) -> Result<LaunchPlan, LaunchError> {
    let kind = (T::KERNEL, T::KEY_BYTES);
    plan_launch_kind(info, opts, plan, stats, n_cells, budget, pool_on_device, kind, std::mem::size_of::<T>())
}

/// Whether the ring of staged groups lives in shared memory (`ring` asks; `Auto` decides) for a
/// ring of `per_cell_min` bytes a cell at its smallest (`groups` groups of `rows` rows).
fn ring_in_shared(
    info: &DeviceInfo,
    ring: RingPlace,
    groups: usize,
    rows: usize,
    per_cell_min: usize,
) -> Result<bool, LaunchError> {
    let shared_ok = info.wave * per_cell_min <= info.smem_per_block;
    Ok(match ring {
        RingPlace::Shared if !shared_ok => {
            return Err(LaunchError::RingTooLarge { groups, rows, smem_per_block: info.smem_per_block })
        }
        RingPlace::Shared => true,
        RingPlace::Global => false,
        // shared memory only when it keeps enough cells resident to hide latency: on an H200
        // the reference job's ring (1.5 KB a cell) leaves 4 warps per multiprocessor, and the
        // device-memory ring (served mostly from L2) measured faster: 37 ms against 44 ms
        RingPlace::Auto => shared_ok && info.smem_per_sm / per_cell_min >= AUTO_SHARED_MIN_CELLS,
    })
}

/// Threads per block: `block` where asked (whole waves), else what keeps the most cells
/// resident for `smem_per_cell` bytes of shared memory a cell.
fn launch_block(
    info: &DeviceInfo,
    block: Option<usize>,
    in_shared: bool,
    smem_per_cell: usize,
    key: usize,
) -> Result<usize, LaunchError> {
    let ring_block =
        if info.wave >= 64 { 4 * info.wave } else { GLOBAL_RING_BLOCK[usize::from(key > 4)].max(info.wave) };
    Ok(match block {
        // whole waves: the kernel votes across a wave's lanes
        Some(b) if b == 0 || b > 1024 || b % info.wave != 0 => {
            return Err(LaunchError::BadBlock { block: b, wave: info.wave })
        }
        Some(b) => b,
        // keys in device memory: registers, not shared memory, bound residency. On the H200,
        // blocks of 64 threads measured best for float32 (13.87 ms against 14.1 ms with 128 for
        // the reference job) and 128 for float64 (30.0 ms against 31.1 ms with 64; see
        // docs/experiments.md, launch constants (commit 6858017)); 64-lane AMD waves keep the
        // four waves a block chosen before (not measured on AMD since)
        None if !in_shared && ring_block * smem_per_cell <= info.smem_per_block => ring_block,
        None => choose_block(info, smem_per_cell)
            .ok_or(LaunchError::NoBlock { wave: info.wave, bytes_per_cell: smem_per_cell })?,
    })
}

/// `plan_launch` for kernel family `kind` (name, key bytes) over pool samples of `sample` bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_launch_kind(
    info: &DeviceInfo,
    opts: &GpuOptions,
    plan: &WindowPlan,
    stats: &StatSpec,
    n_cells: usize,
    budget: u64,
    pool_on_device: bool,
    kind: (&str, usize),
    sample: usize,
) -> Result<LaunchPlan, LaunchError> {
    let maxl_needed = plan.targets.iter().map(|t| t.groups.len()).max().unwrap_or(1).max(1);
    let maxl = kernel_limits(stats.percentiles.len(), maxl_needed)?;
    if n_cells > i32::MAX as usize {
        // the kernel multiplies 32-bit rows by a 32-bit stride of at most this many cells
        return Err(LaunchError::TooManyCells { cells: n_cells, max: i32::MAX as usize });
    }
    let rows = plan.groups.iter().map(|g| g.slots.len()).max().unwrap_or(0) + 2;
    let n_pct = stats.percentiles.len();
    let whole = Batch::build(plan, 0..plan.targets.len(), maxl);
    let key = kind.1;
    // shared memory: the ring of the whole job if a block of one wave holds it, else batches
    // with the smallest ring (one target's groups)
    let per_cell_min = ring_bytes_per_cell(maxl_needed, rows, key, n_pct);
    let in_shared = ring_in_shared(info, opts.ring, maxl_needed, rows, per_cell_min)?;
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
    let block = launch_block(info, opts.block, in_shared, smem_per_cell, key)?;
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
            return Err(LaunchError::BudgetTooSmall { budget, cells: chunk });
        }
        chunk = chunk.div_ceil(2).div_ceil(block) * block;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::engine::gpu::{check_gpu_limits, LaunchError};
    use crate::engine::EngineError;
    use crate::stats::percentile::Method;
    use crate::window::WindowSpec;

    /// An H200 as the driver sees it (also used by `spec`'s tests).
    pub(in crate::engine::gpu) fn h200() -> DeviceInfo {
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
        assert!(too_many.unwrap_err().to_string().contains("exceed the GPU kernel"));
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

    /// What the kernel takes on no device is refused from plain parameters, with the messages
    /// and in the order the launch planning refuses it.
    #[test]
    fn gpu_limits_are_checked_from_plain_parameters() {
        assert!(check_gpu_limits("cuda", 8, 32).is_ok() && check_gpu_limits("cuda", 0, 0).is_ok());
        let e = check_gpu_limits("cuda", 9, 33).unwrap_err();
        assert_eq!(e.to_string(), "cuda engine: windows of 33 days exceed the GPU kernel's 32 (use --backend cpu)");
        let e = check_gpu_limits("hip", 9, 11).unwrap_err();
        assert!(matches!(
            e,
            EngineError::Launch { engine: "hip", cause: LaunchError::TooManyPercentiles { asked: 9, max: 8 } }
        ));
        assert_eq!(e.to_string(), "hip engine: the GPU kernel computes at most 8 percentiles per run");
        let (plan, stats) = job(1991..=2020, 16);
        let planned = plan_launch::<f32>(&h200(), &GpuOptions::default(), &plan, &stats, 1000, 1 << 30, false);
        assert_eq!(planned.unwrap_err(), LaunchError::WindowTooLong { days: 33, max: 32 });
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
        let err = with(48, &h200()).unwrap_err().to_string();
        assert!(err.contains("multiple of the wave width 32"), "{err}");
        assert!(with(96, &gfx906()).is_err(), "64-lane waves");
        assert_eq!(with(128, &gfx906()), Ok(128));
        assert!(with(0, &h200()).is_err() && with(1056, &h200()).is_err());
    }
}
