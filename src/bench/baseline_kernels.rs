//! GPU baselines: the kernel designs of the project's source documents (`/work/shared/seeds`,
//! documents 003, 001 and 000), reimplemented in `kernels/bench/baselines.hip` so that
//! `sstclim bench-baselines` can time our kernel against them on the same pool and measure their
//! error against our exact result. This module holds the host side: the pool layout the
//! baselines read, their argument block, and a runner over the CUDA backend (the kernels are
//! portable, but only CUDA drives them from Rust; hipcc compile-checks them in CI).
//!
//! # Fidelity to the documents, and corrections
//!
//! **(a) register top-K (document 003, `compute_stats_kernel`).** As designed: 2-D grid (x:
//! cells in blocks of 256, y: target days), one thread per (cell, target) reading its 11 x 30
//! samples straight from device memory (coalesced: lanes are neighbouring cells), keeping the K
//! largest in a descending register array behind an `if (v > top[K-1])` guard, mean in the same
//! pass. K is a compile-time maximum (34 or 64 instantiated); the host derives the K the job
//! needs from the position table (34 for N = 330 at P90 type 5) and picks the smallest variant
//! that holds it. Corrections: the document's insertion loop writes `sorted[34]` (one past a
//! 34-element array) and does a compare-and-swap per slot; ours is the same insertion, branch-
//! free and in bounds. Its worked example ("P90 = v300 + 0.5 (v299 - v300)", descending) names
//! the wrong ranks: for N = 330, type 5 reads x(297) and x(298), the 34th and 33rd largest.
//! It summed in float32 and did not handle N < 330 or clamping; here the mean is summed in
//! float64 in the window plan's order and the position table handles every N.
//!
//! **(b) temporal blocking (document 001, `temporal_batch_kernel`).** As designed: a block is a
//! tile of cells (one thread each) and a batch of B = 10 consecutive target days; the batch's
//! B + 10 = 20 window days x all years are staged in shared memory once, then each thread
//! gathers each target's up to 330 valid samples and runs the document's iterative Hoare
//! quickselect (middle pivot). Corrections: (1) the document's staging loop
//! `for (i = tid; i < 600; i += T) smem[i*T + tid] = pool[i*N + c]` loads only every T-th row
//! of each cell; here each thread loads every row of its own cell (still coalesced across the
//! tile). (2) It indexed the staged rows as `[year][day]` while the pool is `[day][year]`.
//! (3) It returned early for cells past the end before `__syncthreads()` (a barrier not all
//! threads reach); with (1) no barrier is needed at all. (4) Its percentile was type 7
//! (`r = (N-1) 0.9`), described as MATLAB's, which is type 5; ours uses the job's method. (5)
//! It ran a second quickselect for x(lo+1); after the first, x(lo+1) is the minimum of the
//! upper part, found by one scan (same value, less work). Adaptations: the per-thread sample
//! array (`float samples[330]` in private memory, i.e. local memory with divergent indices)
//! lives in shared memory laid out `[i][thread]`, where lanes reading different entries never
//! share a bank; the tile is 32 cells (a warp) by default instead of 16, selectable with
//! `--tblock-tiles`. The document's tile of 16 was sized for gfx906's 64 KB of LDS (37.5 KB of
//! staging); an H200 block may use 227 KB.
//!
//! **(c) moments + Cornish-Fisher (document 000).** As designed: a per-day kernel sums
//! x^0..x^4 over the years for every (day, cell); a second kernel walks each cell's target days,
//! sliding the 11-day window sums (add the entering day, subtract the leaving one), and applies
//! the 4-moment Cornish-Fisher expansion with z = Phi^-1(p) (1.28155 for P90; the document
//! rounds to 1.2816). Its expansion is the standard third-order one and is kept. Corrections:
//! (1) its kurtosis numerator has `+ mean^4`; expanding E[(x-mean)^4] gives `+ 3 mean^4` (with
//! SST near 25 C the document's version is off by 2 mean^4 / var^2, i.e. by orders of
//! magnitude). (2) It accumulated float32 powers; the central third and fourth moments come from
//! raw ones by cancellation (x^4 ~ 4e5 against sigma^4 ~ 1e-2..1), which float32 cannot carry,
//! so the sums are float64. (3) Windows with N < 2 or zero variance (division by zero there)
//! return the mean. Per-day moments are stored as float64 (5 x 102 days x cells).

use std::ffi::c_void;
use std::time::Duration;

use crate::engine::gpu::cuda::CudaDevice;
use crate::engine::gpu::{DevPtr, Device, GpuError, PORT_HEADER};
use crate::stats::percentile::Position;
use crate::stats::{StatSpec, TileResult};
use crate::window::WindowPlan;

/// The baselines' kernel source.
pub const BASELINES_SOURCE: &str = include_str!("../../kernels/bench/baselines.hip");

/// The source with the portability header pasted in (NVRTC is given no include paths).
pub fn baselines_source_inlined() -> String {
    BASELINES_SOURCE.replace("#include \"sstclim_port.h\"", PORT_HEADER)
}

/// Register top-K variants compiled in `kernels/bench/baselines.hip`.
pub const TOPK_VARIANTS: [usize; 2] = [34, 64];

/// Why a baseline could not run.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("the GPU baselines need a CUDA device: {0}")]
    NoCuda(crate::engine::gpu::OpenError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("the GPU baselines need a regular [day][year] pool with every date present: {0}")]
    Layout(String),
    #[error("the register top-K baseline needs the {need} largest samples; its largest variant keeps {max}")]
    TopKTooSmall { need: usize, max: usize },
    #[error("the baselines compute one percentile, not {0}")]
    Percentiles(usize),
    #[error(
        "temporal blocking with a tile of {tile} cells needs {need} bytes of shared memory, the device allows {max}"
    )]
    SharedMemory { tile: usize, need: usize, max: usize },
}

/// The pool layout the baselines read: row = day * years + year, every window a run of
/// consecutive days.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub years: usize,
    pub n_days: usize,
    /// Days per window (2h + 1).
    pub window: usize,
    /// Per target: its window's first day.
    pub win_day0: Vec<i32>,
}

impl Layout {
    /// The layout of `plan`, or why the baselines cannot read its pool (a missing date, a
    /// window clipped at the period's ends).
    pub fn from_plan(plan: &WindowPlan) -> Result<Layout, BaselineError> {
        let bad = |m: String| Err(BaselineError::Layout(m));
        let Some(first) = plan.groups.first() else { return bad("no groups".into()) };
        let years = first.slots.len();
        if years == 0 || plan.slots.len() % years != 0 {
            return bad(format!("{} slots are not whole days of {years} years", plan.slots.len()));
        }
        let day_of = |g: usize| -> Option<usize> {
            let s = &plan.groups[g].slots;
            let d = s.first()? / years as u32;
            let whole = s.len() == years && s.iter().enumerate().all(|(y, &r)| r as usize == d as usize * years + y);
            whole.then_some(d as usize)
        };
        let window = plan.targets.first().map_or(0, |t| t.groups.len());
        let mut win_day0 = Vec::with_capacity(plan.targets.len());
        for t in &plan.targets {
            if t.groups.len() != window {
                return bad(format!("day {} has {} window days, not {window}", t.doy, t.groups.len()));
            }
            let days: Option<Vec<usize>> = t.groups.iter().map(|&g| day_of(g as usize)).collect();
            let Some(days) = days else { return bad(format!("day {}: a window day lacks some year", t.doy)) };
            if days.windows(2).any(|w| w[1] != w[0] + 1) {
                return bad(format!("day {}: window days are not consecutive", t.doy));
            }
            win_day0.push(days[0] as i32);
        }
        Ok(Layout { years, n_days: plan.slots.len() / years, window, win_day0 })
    }

    /// Per batch of `batch` consecutive targets: how many days its windows span.
    pub fn batch_spans(&self, batch: usize) -> Vec<usize> {
        self.win_day0
            .chunks(batch.max(1))
            .map(|c| {
                let lo = *c.iter().min().unwrap_or(&0);
                let hi = *c.iter().max().unwrap_or(&0);
                (hi - lo) as usize + self.window
            })
            .collect()
    }
}

/// How many of the largest samples the top-K design must keep so that every order statistic
/// the position table reads, for every N, is among them: max over N of N - lo + 1.
pub fn topk_needed(table: &[Vec<Position>]) -> usize {
    table.iter().enumerate().filter_map(|(n, row)| row.first().map(|p| n + 1 - p.lo)).max().unwrap_or(1)
}

/// The standard normal quantile Phi^-1(p) for 0 < p < 1 (Acklam's rational approximation,
/// relative error below 1.2e-9).
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// The three designs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// (a) document 003.
    TopK,
    /// (b) document 001, with this many cells per block.
    TemporalBlocking { tile: usize },
    /// (c) document 000.
    CornishFisher,
}

impl Baseline {
    /// Short label for tables.
    pub fn label(self) -> String {
        match self {
            Baseline::TopK => "a: register top-K (doc 003)".into(),
            Baseline::TemporalBlocking { tile } => format!("b: temporal blocking + quickselect, tile {tile} (doc 001)"),
            Baseline::CornishFisher => "c: moments + Cornish-Fisher (doc 000)".into(),
        }
    }

    /// Whether the design computes the exact percentile.
    pub fn exact(self) -> bool {
        !matches!(self, Baseline::CornishFisher)
    }
}

/// Target days per block of the temporal-blocking kernel (document 001's B).
pub const DEFAULT_BATCH: usize = 10;

/// The kernels' argument block (`BaseParams` in kernels/bench/baselines.hip: same order and sizes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct BaseParams {
    pool: DevPtr,
    out_mean: DevPtr,
    out_pct: DevPtr,
    out_count: DevPtr,
    win_day0: DevPtr,
    pos_lo: DevPtr,
    pos_frac: DevPtr,
    moments: DevPtr,
    n_cells: i64,
    z: f64,
    years: i32,
    window: i32,
    n_targets: i32,
    n_days: i32,
    max_n: i32,
    min_samples: i32,
    batch: i32,
    pad: i32,
}

/// The baselines on one CUDA device, over one float32 pool held in device memory.
pub struct BaselineRunner {
    dev: CudaDevice,
    layout: Layout,
    n_cells: usize,
    n_targets: usize,
    /// K the job needs (see [`topk_needed`]).
    topk_need: usize,
    params: BaseParams,
    /// Allocations, freed on drop.
    owned: Vec<DevPtr>,
    /// Targets per block of the temporal-blocking kernel.
    pub batch: usize,
}

impl BaselineRunner {
    /// Open CUDA device `ordinal`, upload `pool` (`[row][cell]`, `n_cells` cells a row) and the
    /// tables for `stats` (one percentile).
    pub fn new(
        ordinal: usize,
        pool: &[f32],
        n_cells: usize,
        plan: &WindowPlan,
        stats: &StatSpec,
    ) -> Result<BaselineRunner, BaselineError> {
        let layout = Layout::from_plan(plan)?;
        if stats.percentiles.len() != 1 {
            return Err(BaselineError::Percentiles(stats.percentiles.len()));
        }
        let rows = layout.n_days * layout.years;
        if pool.len() != rows * n_cells {
            return Err(BaselineError::Layout(format!(
                "the pool holds {} values, the plan needs {rows} rows of {n_cells}",
                pool.len()
            )));
        }
        let max_n = plan.max_capacity();
        let table = stats.position_table(max_n);
        let mut pos_lo = vec![0i32; max_n + 1];
        let mut pos_frac = vec![0f64; max_n + 1];
        for (n, row) in table.iter().enumerate() {
            if let Some(p) = row.first() {
                pos_lo[n] = p.lo as i32;
                pos_frac[n] = p.frac;
            }
        }
        let z = normal_quantile(stats.percentiles[0].fraction());
        let dev = CudaDevice::open(ordinal, false).map_err(BaselineError::NoCuda)?;
        let mut runner = BaselineRunner {
            dev,
            n_cells,
            n_targets: plan.targets.len(),
            topk_need: topk_needed(&table),
            params: BaseParams::default(),
            owned: Vec::new(),
            batch: DEFAULT_BATCH,
            layout,
        };
        runner.dev.bind()?;
        let n_targets = runner.n_targets;
        let p = BaseParams {
            pool: runner.upload(pool)?,
            out_mean: runner.alloc(2 * n_targets * n_cells * 8)?,
            out_pct: 0,
            out_count: runner.alloc(n_targets * n_cells * 4)?,
            win_day0: runner.upload(&runner.layout.win_day0.clone())?,
            pos_lo: runner.upload(&pos_lo)?,
            pos_frac: runner.upload(&pos_frac)?,
            moments: runner.alloc(5 * runner.layout.n_days * n_cells * 8)?,
            n_cells: n_cells as i64,
            z,
            years: runner.layout.years as i32,
            window: runner.layout.window as i32,
            n_targets: n_targets as i32,
            n_days: runner.layout.n_days as i32,
            max_n: max_n as i32,
            min_samples: stats.min_samples.max(1) as i32,
            batch: 0,
            pad: 0,
        };
        runner.params = BaseParams { out_pct: p.out_mean + (n_targets * n_cells * 8) as u64, ..p };
        Ok(runner)
    }

    /// The device, e.g. `CUDA device 0 (NVIDIA H200, 150 GB)`.
    pub fn describe(&self) -> String {
        self.dev.info().description.clone()
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevPtr, GpuError> {
        let ptr = self.dev.alloc(bytes.max(1))?;
        self.owned.push(ptr);
        Ok(ptr)
    }

    fn upload<V: Copy>(&mut self, data: &[V]) -> Result<DevPtr, GpuError> {
        let bytes = std::mem::size_of_val(data);
        let ptr = self.alloc(bytes)?;
        // SAFETY: `ptr` holds `bytes`; `data` outlives the copy, which is waited for below.
        unsafe { self.dev.copy_h2d(ptr, bytes, data.as_ptr().cast(), bytes, bytes, 1)? };
        self.dev.synchronize()?;
        Ok(ptr)
    }

    /// Fill the outputs with a value no kernel writes, so that a missed write shows.
    pub fn poison(&mut self) -> Result<(), GpuError> {
        let v = vec![-12345.0f64; 2 * self.n_targets * self.n_cells];
        let c = vec![u32::MAX; self.n_targets * self.n_cells];
        let (bv, bc) = (std::mem::size_of_val(&v[..]), std::mem::size_of_val(&c[..]));
        // SAFETY: the output buffers hold exactly these sizes; waited for below.
        unsafe {
            self.dev.copy_h2d(self.params.out_mean, bv, v.as_ptr().cast(), bv, bv, 1)?;
            self.dev.copy_h2d(self.params.out_count, bc, c.as_ptr().cast(), bc, bc, 1)?;
        }
        self.dev.synchronize()
    }

    /// The kernel name and shared memory `which` uses; checks what the device and job allow.
    fn config(&self, which: Baseline) -> Result<(String, usize), BaselineError> {
        Ok(match which {
            Baseline::TopK => {
                let k = TOPK_VARIANTS.iter().copied().find(|&k| k >= self.topk_need).ok_or(
                    BaselineError::TopKTooSmall { need: self.topk_need, max: TOPK_VARIANTS[TOPK_VARIANTS.len() - 1] },
                )?;
                (format!("sstclim_base_topk_f32_k{k}"), 0)
            }
            Baseline::TemporalBlocking { tile } => {
                let span = self.layout.batch_spans(self.batch).into_iter().max().unwrap_or(0);
                let need = (span * self.layout.years + self.params.max_n as usize) * tile * 4;
                let max = self.dev.info().smem_per_block;
                if need > max || tile == 0 || tile > 1024 {
                    return Err(BaselineError::SharedMemory { tile, need, max });
                }
                ("sstclim_base_tblock_f32".into(), need)
            }
            Baseline::CornishFisher => ("sstclim_base_moments_f32".into(), 0),
        })
    }

    /// Compile and load `which`'s kernels (outside any timed region).
    pub fn prepare(&mut self, which: Baseline) -> Result<(), BaselineError> {
        self.dev.bind()?;
        let (name, smem) = self.config(which)?;
        self.dev.prepare_source("baselines.hip", &baselines_source_inlined, &name, smem)?;
        if which == Baseline::CornishFisher {
            self.dev.prepare_source("baselines.hip", &baselines_source_inlined, "sstclim_base_cf_f32", 0)?;
        }
        Ok(())
    }

    /// Run `which` once over the whole pool; returns the device time between events recorded
    /// before the first and after the last launch (waited for before the clock stops).
    pub fn run(&mut self, which: Baseline) -> Result<Duration, BaselineError> {
        self.prepare(which)?;
        let (name, smem) = self.config(which)?;
        let mut p = self.params;
        let cells = self.n_cells as u32;
        let blocks = |b: u32| cells.div_ceil(b);
        self.dev.timer_start()?;
        match which {
            Baseline::TopK => {
                let mut args = [&mut p as *mut BaseParams as *mut c_void];
                // SAFETY: `p` mirrors BaseParams; every address is a live allocation sized for
                // this pool and these targets; the kernel writes only the outputs.
                unsafe {
                    self.dev.launch_args(&name, [blocks(256), self.n_targets as u32, 1], [256, 1, 1], 0, &mut args)?
                };
            }
            Baseline::TemporalBlocking { tile } => {
                p.batch = self.batch as i32;
                let batches = self.n_targets.div_ceil(self.batch) as u32;
                let mut args = [&mut p as *mut BaseParams as *mut c_void];
                // SAFETY: as above; `smem` holds the largest batch's staged rows plus max_n
                // samples per thread (checked in `config`).
                unsafe {
                    self.dev.launch_args(
                        &name,
                        [blocks(tile as u32), batches, 1],
                        [tile as u32, 1, 1],
                        smem,
                        &mut args,
                    )?
                };
            }
            Baseline::CornishFisher => {
                let mut args = [&mut p as *mut BaseParams as *mut c_void];
                // SAFETY: as above; the moments buffer holds 5 x days x cells float64.
                unsafe {
                    self.dev.launch_args(
                        &name,
                        [blocks(256), self.layout.n_days as u32, 1],
                        [256, 1, 1],
                        0,
                        &mut args,
                    )?
                };
                let mut args = [&mut p as *mut BaseParams as *mut c_void];
                // SAFETY: as above; reads the moments the previous launch wrote (same stream).
                unsafe { self.dev.launch_args("sstclim_base_cf_f32", [blocks(256), 1, 1], [256, 1, 1], 0, &mut args)? };
            }
        }
        Ok(self.dev.timer_stop()?)
    }

    /// The last run's results: statistics (mean, percentile) by target and cell, and counts.
    pub fn results(&mut self) -> Result<TileResult, BaselineError> {
        let mut out = TileResult::new(2, self.n_targets, self.n_cells);
        let bv = std::mem::size_of_val(&out.values[..]);
        let bc = std::mem::size_of_val(&out.counts[..]);
        // SAFETY: `out` is sized like the device buffers; waited for below.
        unsafe {
            self.dev.copy_d2h(out.values.as_mut_ptr().cast(), bv, self.params.out_mean, bv, bv, 1)?;
            self.dev.copy_d2h(out.counts.as_mut_ptr().cast(), bc, self.params.out_count, bc, bc, 1)?;
        }
        self.dev.synchronize()?;
        Ok(out)
    }
}

impl Drop for BaselineRunner {
    fn drop(&mut self) {
        let _ = self.dev.bind();
        let _ = self.dev.synchronize();
        for &ptr in &self.owned {
            // SAFETY: the stream is idle and nothing uses the buffers after the runner.
            unsafe { self.dev.free(ptr) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::engine::{CpuEngine, Engine};
    use crate::pool::{Pool, PoolRef};
    use crate::stats::percentile::Method;
    use crate::util::rng::SplitMix64;
    use crate::window::WindowSpec;

    fn spec(years: std::ops::RangeInclusive<i32>, doys: std::ops::RangeInclusive<u16>, h: u16) -> WindowSpec {
        WindowSpec { years, doys: doys.collect(), half_window: h, calendar: Calendar::Ordinal }
    }

    fn p90() -> StatSpec {
        StatSpec { percentiles: vec!["90".parse().unwrap()], method: Method::new(5).unwrap(), min_samples: 1 }
    }

    #[test]
    fn topk_for_the_reference_job_is_34() {
        let st = p90();
        assert_eq!(topk_needed(&st.position_table(330)), 34);
        // smaller windows need fewer; the table is monotone so the largest N decides
        assert_eq!(topk_needed(&st.position_table(10)), 2);
        assert_eq!(topk_needed(&st.position_table(1)), 1);
        let p50 = StatSpec { percentiles: vec!["50".parse().unwrap()], ..p90() };
        assert!(topk_needed(&p50.position_table(330)) > 64, "the median is not a top-K job");
    }

    #[test]
    fn normal_quantiles() {
        for (p, z) in [(0.9, 1.2815515655446004), (0.5, 0.0), (0.99, 2.3263478740408408), (0.01, -2.3263478740408408)] {
            assert!((normal_quantile(p) - z).abs() < 1e-8, "{p}: {} vs {z}", normal_quantile(p));
        }
    }

    #[test]
    fn layout_of_the_reference_job() {
        let plan = WindowPlan::build(&spec(1991..=2020, 152..=243, 5), |_| true);
        let l = Layout::from_plan(&plan).unwrap();
        assert_eq!((l.years, l.n_days, l.window), (30, 102, 11));
        assert_eq!(l.win_day0, (0..92).collect::<Vec<i32>>());
        let spans = l.batch_spans(10);
        assert_eq!(spans.len(), 10);
        assert_eq!((spans[0], spans[9]), (20, 12), "10 days of batches of 10, the last of 2");
        // the GPU test's job
        let plan = WindowPlan::build(&spec(2001..=2012, 150..=175, 5), |_| true);
        let l = Layout::from_plan(&plan).unwrap();
        assert_eq!((l.years, l.n_days, l.window, l.win_day0.len()), (12, 36, 11, 26));
        // a missing date makes the pool irregular
        let plan = WindowPlan::build(&spec(1991..=2020, 152..=243, 5), |d| !(d.year == 2000 && d.ordinal() == 160));
        assert!(matches!(Layout::from_plan(&plan), Err(BaselineError::Layout(_))));
    }

    /// A small seeded pool: missing values everywhere, some cells mostly or entirely missing
    /// (N from 0 up to the full window), values on a 0.01 grid with ties.
    fn seeded_pool(plan: &WindowPlan, n_cells: usize, seed: u64) -> Pool<f32> {
        let mut rng = SplitMix64::new(seed);
        let n_slots = plan.slots.len();
        let mut values = vec![f64::NAN; n_slots * n_cells];
        for cell in 0..n_cells {
            let keep = match cell % 7 {
                0 => 0.0,
                1 => 0.02,
                2 => 0.3,
                _ => 0.93,
            };
            let level = 10.0 + rng.below(20) as f64;
            for slot in 0..n_slots {
                if rng.next_f64() < keep {
                    values[slot * n_cells + cell] = level + rng.below(400) as f64 * 0.01;
                }
            }
        }
        Pool::<f32>::from_values(n_slots, n_cells, &values).unwrap()
    }

    fn skip_notice(message: &str) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "{message}");
    }

    /// (a) and (b) equal the CPU engine exactly (same order statistics, same interpolation,
    /// same summation order); (c)'s mean is the same up to the sliding sums' rounding, and its
    /// percentile is finite wherever there are values.
    #[test]
    fn baselines_on_a_gpu_match_the_cpu_engine() {
        let plan = WindowPlan::build(&spec(2001..=2012, 150..=175, 5), |_| true);
        let n_cells = 1001;
        let pool = seeded_pool(&plan, n_cells, 7);
        let st = p90();
        let mut want = TileResult::new(2, plan.targets.len(), n_cells);
        CpuEngine.compute(PoolRef::F32(pool.view()), &plan, &st, &mut want).unwrap();
        let mut runner = match BaselineRunner::new(0, pool.as_slice(), n_cells, &plan, &st) {
            Ok(r) => r,
            Err(BaselineError::NoCuda(e)) => {
                skip_notice(&format!("SKIPPED GPU baselines test: {e}"));
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert!(want.counts.contains(&0) && want.counts.iter().any(|&c| c > 0 && c < 20));
        for which in [Baseline::TopK, Baseline::TemporalBlocking { tile: 32 }, Baseline::TemporalBlocking { tile: 16 }]
        {
            runner.poison().unwrap();
            runner.run(which).unwrap();
            let got = runner.results().unwrap();
            assert_eq!(got.count_differences(&want), 0, "{} differs from the cpu engine", which.label());
        }
        runner.poison().unwrap();
        runner.run(Baseline::CornishFisher).unwrap();
        let got = runner.results().unwrap();
        assert_eq!(got.counts, want.counts);
        for t in 0..plan.targets.len() {
            for (c, (a, b)) in got.row(0, t).iter().zip(want.row(0, t)).enumerate() {
                assert!(a.is_nan() == b.is_nan() && (a.is_nan() || (a - b).abs() < 1e-9), "mean {t} {c}: {a} {b}");
            }
            for (a, b) in got.row(1, t).iter().zip(want.row(1, t)) {
                assert!(a.is_nan() == b.is_nan() && (a.is_nan() || a.is_finite()), "p90 {a} {b}");
            }
        }
    }
}
