//! The GPU engine over any [`Device`]: one driver for both vendors that plans each tile's
//! launches, moves pool rows and results, and answers the device side of the engine
//! ([`DeviceEngine`]): pinning, kernel preparation, and a device-resident pool that reader
//! threads fill row by row.

use std::sync::Mutex;
use std::time::Duration;

use super::device::{DevPtr, Device, GpuError, Uploader};
use super::launch::{kernel_kind, plan_launch, plan_launch_kind, DeviceInfo, GpuSample, LaunchPlan};
use super::limits::LaunchError;
use super::memory::*;
use super::options::GpuOptions;
use super::params::KernelParams;
use super::schedule;
use super::spec::KernelSpec;
use crate::engine::{BandwidthProbe, DeviceEngine, Engine, EngineError, EngineTimes, PoolKind, StagingError};
use crate::pool::{Decoding, PoolRef, PoolType};
use crate::stats::{StatSpec, TileResult};
use crate::window::WindowPlan;

/// A pool that lives in device memory (buffer `B_POOL`), filled row by row through its own
/// copy queue while the engine computes on rows already there.
struct Staged {
    up: Box<dyn Uploader>,
    base: DevPtr,
    row_bytes: usize,
    n_slots: usize,
    n_cells: usize,
    pool: PoolType,
    /// An int16 pool's table (the pool's own, given to `stage_pool`).
    decoding: Option<Decoding>,
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
        pool: PoolKind<'_>,
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
        let row_bytes = n_cells * std::mem::size_of::<T>();
        let decoding = pool.decoding.cloned();
        *staged = Some(Staged { up, base, row_bytes, n_slots, n_cells, pool: pool.ty, decoding });
        Ok(true)
    }

    /// `compute_staged` on a staged pool of `T` at `base`, of `n_cells` cells, decoded through
    /// `decoding` (int16 pools).
    #[allow(clippy::too_many_arguments)]
    fn compute_staged_typed<T: GpuSample>(
        &self,
        base: DevPtr,
        n_cells: usize,
        decoding: Option<&[f64]>,
        slots: std::ops::Range<usize>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let mut times = EngineTimes::default();
        let (mut st, Some(lp)) = self.begin::<T>(plan, stats, n_cells, true, decoding)? else { return Ok(times) };
        if lp.chunk < n_cells {
            return Err(self.staging(StagingError::TooLarge { room: lp.chunk, n_cells }));
        }
        tracing::debug!("{} (device pool): {lp:?}", self.name);
        let src: PoolSrc<'_, T> = PoolSrc::Device { base, slot0: slots.start };
        self.run_plan(&mut st, src, decoding, n_cells, plan, stats, out, &lp, &mut times).map_err(|e| self.gpu(e))?;
        Ok(times)
    }

    pub fn info(&self) -> DeviceInfo {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).device.info().clone()
    }

    fn gpu(&self, cause: GpuError) -> EngineError {
        EngineError::Gpu { engine: self.name, cause }
    }

    fn launch(&self, cause: LaunchError) -> EngineError {
        EngineError::Launch { engine: self.name, cause }
    }

    fn staging(&self, cause: StagingError) -> EngineError {
        EngineError::Staging { engine: self.name, cause }
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
        st.device.bind().map_err(|e| self.gpu(e))?;
        if plan.targets.is_empty() || n_cells == 0 {
            return Ok((st, None));
        }
        let budget = self.budget(&mut st.device).map_err(|e| self.gpu(e))?;
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
        .map_err(|e| self.launch(e))?;
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
        result.map_err(|e| self.gpu(e))?;
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
        st.device.prepare(&kernel, lp.smem).map_err(|e| self.gpu(e))
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
        let (pos_lo, pos_frac) = position_tables(stats, max_n);
        let tables: Vec<_> = lp.batches.iter().map(|b| b.group_tables(plan)).collect();
        let kernel = self.kernel_spec(lp, plan, stats, n_cells, Some(&tables));
        st.device.prepare(&kernel, lp.smem)?;
        let d_pos_lo = st.upload(B_POS_LO, &pos_lo)?;
        let d_pos_frac = st.upload(B_POS_FRAC, &pos_frac)?;
        let d_lut = if T::KERNEL == "i16" { upload_lut(st, decoding)? } else { 0 };
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
                        upload_rows(st, pool, d_pool, (batch.slots.start, rows), (c0, width), n_cells, times)?;
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
            fetch_results(st, out, (d_values, d_counts), (c0, width), n_cells, (n_stats, n_targets), times)?;
        }
        Ok(())
    }

    /// Bandwidth ceilings measured on this device: pinned host-to-device and device-to-device
    /// copies of `bytes` (each the median of `repeats`).
    pub fn measure_bandwidth(&self, bytes: usize, repeats: usize) -> Result<BandwidthProbe, EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.gpu(e))?;
        let r = probe(&mut st, bytes, repeats.max(1));
        r.map_err(|e| self.gpu(e))
    }
}

impl<D: Device> Engine for GpuEngine<D> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self) -> String {
        self.info().description
    }

    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let table = PoolKind::of_view(pool).table();
        match pool {
            PoolRef::F64(p) => self.compute_typed(p.as_slice(), None, p.n_cells(), plan, stats, out),
            PoolRef::F32(p) => self.compute_typed(p.as_slice(), None, p.n_cells(), plan, stats, out),
            PoolRef::I16(p) => self.compute_typed(p.as_slice(), table, p.n_cells(), plan, stats, out),
        }
    }

    fn device(&self) -> Option<&dyn DeviceEngine> {
        Some(self)
    }
}

impl<D: Device> DeviceEngine for GpuEngine<D> {
    fn prepare(
        &self,
        pool: PoolKind<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
    ) -> Result<(), EngineError> {
        let table = pool.table();
        match pool.ty {
            PoolType::F64 => self.prepare_typed::<f64>(table, plan, stats, n_cells),
            PoolType::F32 => self.prepare_typed::<f32>(table, plan, stats, n_cells),
            PoolType::I16 => self.prepare_typed::<i16>(table, plan, stats, n_cells),
        }
    }

    unsafe fn pin_host(&self, ptr: *const u8, len: usize) -> Result<bool, EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.gpu(e))?;
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
        st.device.bind().map_err(|e| self.gpu(e))?;
        st.device.synchronize().map_err(|e| self.gpu(e))?;
        // SAFETY: registered by pin_host; the stream is idle, so no copy uses it.
        unsafe { st.device.unregister(ptr) }.map_err(|e| self.gpu(e))
    }

    fn alloc_pinned(&self, len: usize) -> Result<Option<*mut u8>, EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.gpu(e))?;
        Ok(st.device.alloc_host(len).unwrap_or_else(|e| {
            tracing::warn!("pinning heap memory instead: {e}");
            None
        }))
    }

    unsafe fn free_pinned(&self, ptr: *mut u8) -> Result<(), EngineError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.device.bind().map_err(|e| self.gpu(e))?;
        // SAFETY: from alloc_host (the caller's promise); copies from it are waited for.
        unsafe { st.device.free_host(ptr) }.map_err(|e| self.gpu(e))
    }

    fn device_memory(&self) -> Option<u64> {
        Some(self.state.lock().unwrap_or_else(|e| e.into_inner()).device_bytes())
    }

    fn stage_pool(
        &self,
        pool: PoolKind<'_>,
        n_slots: usize,
        n_cells: usize,
        plans: &[&WindowPlan],
        stats: &StatSpec,
    ) -> Result<bool, EngineError> {
        match pool.ty {
            PoolType::F64 => self.stage_typed::<f64>(pool, n_slots, n_cells, plans, stats),
            PoolType::F32 => self.stage_typed::<f32>(pool, n_slots, n_cells, plans, stats),
            PoolType::I16 => self.stage_typed::<i16>(pool, n_slots, n_cells, plans, stats),
        }
        .map_err(|e| self.gpu(e))
    }

    unsafe fn upload_slot(&self, slot: usize, src: *const u8) -> Result<(), EngineError> {
        let mut staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = staged.as_mut().filter(|s| slot < s.n_slots) else {
            return Err(self.staging(StagingError::NoSlot { slot }));
        };
        let dst = s.base + (slot * s.row_bytes) as DevPtr;
        // SAFETY: the caller's row holds `row_bytes`; the pool buffer holds `n_slots` rows.
        unsafe { s.up.upload(dst, src, s.row_bytes) }.map_err(|e| self.gpu(e))
    }

    fn compute_staged(
        &self,
        slots: std::ops::Range<usize>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let (pool, base, n_cells, decoding) = {
            let staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
            let Some(s) = staged.as_ref() else { return Err(self.staging(StagingError::NoPool)) };
            if slots.end > s.n_slots {
                return Err(self.staging(StagingError::NoSlots { slots }));
            }
            (s.pool, s.base, s.n_cells, s.decoding.clone())
        };
        let table = decoding.as_deref();
        match pool {
            PoolType::F64 => self.compute_staged_typed::<f64>(base, n_cells, None, slots, plan, stats, out),
            PoolType::F32 => self.compute_staged_typed::<f32>(base, n_cells, None, slots, plan, stats, out),
            PoolType::I16 => self.compute_staged_typed::<i16>(base, n_cells, table, slots, plan, stats, out),
        }
    }

    fn unstage_pool(&self) {
        *self.staged.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    fn probe_bandwidth(&self, bytes: usize, repeats: usize) -> Option<Result<BandwidthProbe, EngineError>> {
        Some(self.measure_bandwidth(bytes, repeats))
    }
}

/// The kernel's position tables, `[n][percentile]`: each order statistic's lower rank and the
/// fraction towards the next, for every sample count up to `max_n`.
fn position_tables(stats: &StatSpec, max_n: usize) -> (Vec<i32>, Vec<f64>) {
    let n_pct = stats.percentiles.len();
    let table = stats.position_table(max_n);
    let mut pos_lo = vec![0i32; (max_n + 1) * n_pct.max(1)];
    let mut pos_frac = vec![0f64; (max_n + 1) * n_pct.max(1)];
    for (n, row) in table.iter().enumerate() {
        for (i, p) in row.iter().enumerate() {
            pos_lo[n * n_pct + i] = p.lo as i32;
            pos_frac[n * n_pct + i] = p.frac;
        }
    }
    (pos_lo, pos_frac)
}

/// An int16 pool's decoding table on the device (without one, a value is its integer).
fn upload_lut<D: Device>(st: &mut State<D>, decoding: Option<&[f64]>) -> Result<DevPtr, GpuError> {
    let identity: Vec<f64>;
    let table = match decoding {
        Some(t) => t,
        None => {
            identity = (0..65536).map(|i| f64::from(i - 32768)).collect();
            &identity
        }
    };
    st.upload(B_LUT, table)
}

/// Copy pool rows `first_row..first_row + rows` of the host `pool` (rows of `n_cells` cells),
/// cells `c0..c0 + width`, into the device buffer `d_pool` (rows of `width`), timed.
fn upload_rows<D: Device, T>(
    st: &mut State<D>,
    pool: &[T],
    d_pool: DevPtr,
    (first_row, rows): (usize, usize),
    (c0, width): (usize, usize),
    n_cells: usize,
    times: &mut EngineTimes,
) -> Result<(), GpuError> {
    let sample = std::mem::size_of::<T>();
    st.device.timer_start()?;
    // SAFETY: the source rows lie inside `pool` (pinned or not) and the device
    // buffer holds `pool_rows * chunk` samples; we synchronize in timer_stop.
    unsafe {
        st.device.copy_h2d(
            d_pool,
            width * sample,
            pool.as_ptr().add(first_row * n_cells + c0).cast(),
            n_cells * sample,
            width * sample,
            rows,
        )?;
    }
    times.h2d += st.device.timer_stop()?;
    times.bytes_h2d += (rows * width * sample) as u64;
    Ok(())
}

/// The results of one chunk, cells `c0..c0 + width`, from the device buffers (rows (stat,
/// target) of `width` cells) into `out` (rows of `n_cells`), timed.
fn fetch_results<D: Device>(
    st: &mut State<D>,
    out: &mut TileResult,
    (d_values, d_counts): (DevPtr, DevPtr),
    (c0, width): (usize, usize),
    n_cells: usize,
    (n_stats, n_targets): (usize, usize),
    times: &mut EngineTimes,
) -> Result<(), GpuError> {
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
    Ok(())
}
