//! Engines compute the statistics of one tile: a pool of samples plus a window plan in,
//! means and percentiles for every target day and cell out.
//!
//! All backends sit behind the narrow [`Engine`] trait. The `reference` engine is deliberately
//! naive (collect each window, sort it, pick) and is the oracle every other engine must equal
//! bit for bit on the same pool; `cpu` is the fast exact engine; `cuda` and `hip` run the
//! kernel in `kernels/` on a GPU (see [`gpu`]).

mod cpu;
pub mod deferred;
pub mod gpu;
mod reference;
mod sort_net;

use std::time::Duration;

pub use cpu::CpuEngine;
pub use deferred::Deferred;
pub use gpu::{GpuOptions, RingPlace};
pub use reference::ReferenceEngine;

use crate::percentile::{Method, Percentile, Position};
use crate::pool::{PoolRef, PoolType, Sample};
use crate::window::WindowPlan;

/// What to compute for every target day and cell.
#[derive(Clone, Debug)]
pub struct StatSpec {
    pub percentiles: Vec<Percentile>,
    pub method: Method,
    /// Cells with fewer valid samples get the fill value (at least 1).
    pub min_samples: usize,
}

impl StatSpec {
    /// Number of statistics: the mean, then one per percentile.
    pub fn n_stats(&self) -> usize {
        1 + self.percentiles.len()
    }

    /// Output names: `mean`, then `p90`, `p10`, ...
    pub fn names(&self) -> Vec<String> {
        std::iter::once("mean".to_string()).chain(self.percentiles.iter().map(Percentile::stat_name)).collect()
    }

    /// `positions(n)[i]`: where percentile `i` lies among `n` samples, for `n` up to `max_n`
    /// (entry 0 is empty: no samples, no percentile).
    pub fn position_table(&self, max_n: usize) -> Vec<Vec<Position>> {
        (0..=max_n).map(|n| self.percentiles.iter().filter_map(|p| self.method.position(p, n)).collect()).collect()
    }
}

/// Results of one tile: `values[stat][target][cell]` (NaN where a cell has no value) and
/// `counts[target][cell]`, the number of valid samples.
#[derive(Clone, Debug, PartialEq)]
pub struct TileResult {
    pub n_stats: usize,
    pub n_targets: usize,
    pub n_cells: usize,
    pub values: Vec<f64>,
    pub counts: Vec<u32>,
}

impl TileResult {
    pub fn new(n_stats: usize, n_targets: usize, n_cells: usize) -> Self {
        TileResult {
            n_stats,
            n_targets,
            n_cells,
            values: vec![f64::NAN; n_stats * n_targets * n_cells],
            counts: vec![0; n_targets * n_cells],
        }
    }

    /// Hold `n_targets` targets (contents unspecified: engines write every value), reusing the
    /// allocation, which never shrinks.
    pub fn reshape(&mut self, n_targets: usize) {
        self.n_targets = n_targets;
        self.values.resize(self.n_stats * n_targets * self.n_cells, f64::NAN);
        self.counts.resize(n_targets * self.n_cells, 0);
    }

    /// The values of one statistic for one target day, for all cells of the tile.
    pub fn row(&self, stat: usize, target: usize) -> &[f64] {
        let start = (stat * self.n_targets + target) * self.n_cells;
        &self.values[start..start + self.n_cells]
    }

    /// Number of values that differ bitwise from `other` (NaN equals NaN).
    pub fn count_differences(&self, other: &TileResult) -> usize {
        self.values.iter().zip(&other.values).filter(|(a, b)| a.to_bits() != b.to_bits()).count()
            + self.counts.iter().zip(&other.counts).filter(|(a, b)| a != b).count()
    }
}

/// Where a device engine spent its time in one `compute` call (zero for host engines).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineTimes {
    /// Page-locking the host pool.
    pub pin: Duration,
    pub h2d: Duration,
    pub kernel: Duration,
    pub d2h: Duration,
    pub bytes_h2d: u64,
    pub bytes_d2h: u64,
    pub launches: usize,
}

impl EngineTimes {
    pub fn add(&mut self, other: &EngineTimes) {
        self.pin += other.pin;
        self.h2d += other.h2d;
        self.kernel += other.kernel;
        self.d2h += other.d2h;
        self.bytes_h2d += other.bytes_h2d;
        self.bytes_d2h += other.bytes_d2h;
        self.launches += other.launches;
    }
}

/// An engine failed (device errors; the CPU engines cannot fail).
#[derive(Debug, thiserror::Error)]
#[error("{engine} engine: {message}")]
pub struct EngineError {
    pub engine: &'static str,
    pub message: String,
}

/// A way of computing a tile's statistics.
pub trait Engine: Sync {
    /// Short name for logs and reports.
    fn name(&self) -> &'static str;

    /// What it runs on, for reports (`cpu`, `CUDA device 0 (NVIDIA H200)`).
    fn describe(&self) -> String {
        "cpu".into()
    }

    /// Whether it computes on a device (GPU engines).
    fn is_device(&self) -> bool {
        false
    }

    /// Wait until the engine can compute (a device still starting, see [`Deferred`]), or say
    /// why it never will.
    fn ready(&self) -> Result<(), EngineError> {
        Ok(())
    }

    /// A device's pinned host-to-device and device-to-device copy bandwidths, measured with
    /// `bytes` per copy (`None` for host engines).
    fn probe_bandwidth(&self, _bytes: usize, _repeats: usize) -> Option<Result<gpu::BandwidthProbe, EngineError>> {
        None
    }

    /// Get ready to compute `plan` on pools of type `pool` and `n_cells` cells (GPU engines
    /// compile their kernel), so that the first `compute` does not wait; runs while files are
    /// read. Host engines have nothing to do. `decoding` is an int16 pool's table (GPU engines
    /// choose their kernel by it).
    fn prepare(
        &self,
        _pool: PoolType,
        _decoding: Option<&[f64]>,
        _plan: &WindowPlan,
        _stats: &StatSpec,
        _n_cells: usize,
    ) -> Result<(), EngineError> {
        Ok(())
    }

    /// Page-lock `len` bytes at `ptr` for DMA until [`Engine::unpin_host`]; `compute` calls
    /// on pools inside it then copy from pinned memory without pinning again. Returns whether
    /// the memory was pinned (host engines never pin).
    ///
    /// # Safety
    /// The range must stay mapped until `unpin_host(ptr)` has returned.
    unsafe fn pin_host(&self, _ptr: *const u8, _len: usize) -> Result<bool, EngineError> {
        Ok(false)
    }

    /// Undo [`Engine::pin_host`] (before the memory is unmapped).
    ///
    /// # Safety
    /// `ptr` must be an address given to `pin_host` whose memory is still mapped.
    unsafe fn unpin_host(&self, _ptr: *const u8) -> Result<(), EngineError> {
        Ok(())
    }

    /// Bytes of device memory the engine holds (`None` for host engines).
    fn device_memory(&self) -> Option<u64> {
        None
    }

    /// Hold a whole tile's pool (`n_slots` rows of `n_cells`) in device memory, to be filled
    /// with [`Engine::upload_slot`] from any thread and computed on with
    /// [`Engine::compute_staged`], so no host pool is needed. Returns whether it did (host
    /// engines, backends without a second copy queue, or a pool that does not fit beside
    /// computing each of `plans` (the segments') in one chunk: no).
    fn stage_pool(
        &self,
        _pool: PoolType,
        _n_slots: usize,
        _n_cells: usize,
        _plans: &[&WindowPlan],
        _stats: &StatSpec,
    ) -> Result<bool, EngineError> {
        Ok(false)
    }

    /// Copy pool row `slot` (the staged pool's type, `n_cells` values at `src`) into the
    /// device-resident pool; returns when the copy is done. Callable from many threads.
    ///
    /// # Safety
    /// `src` is readable for one row of the staged pool's type.
    unsafe fn upload_slot(&self, _slot: usize, _src: *const u8) -> Result<(), EngineError> {
        Err(EngineError { engine: self.name(), message: "no device-resident pool".into() })
    }

    /// [`Engine::compute`] on rows `slots` of the device-resident pool (int16 pools decode
    /// through `decoding`).
    fn compute_staged(
        &self,
        _slots: std::ops::Range<usize>,
        _decoding: Option<&[f64]>,
        _plan: &WindowPlan,
        _stats: &StatSpec,
        _out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        Err(EngineError { engine: self.name(), message: "no device-resident pool".into() })
    }

    /// Let go of the device-resident pool's copy queue (its memory is reused by the next tile).
    fn unstage_pool(&self) {}

    /// Fill `out` (sized for `plan` and `pool`) with the statistics of every target and cell:
    /// every value and count is written (NaN where a cell has no value), whatever `out` held.
    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError>;
}

/// A host engine written once, generically over the pool's element type, that cannot fail.
trait HostEngine: Sync {
    const NAME: &'static str;
    /// `decode` turns a pool value into the value computed with (NaN: missing).
    fn compute_typed<T: Sample, D: Fn(T) -> f64 + Sync>(
        pool: &[T],
        decode: D,
        n_cells: usize,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    );
}

/// An int16 pool's decoder: its table, or the integers themselves.
fn int16_decoder(pool: crate::pool::PoolView<'_, i16>) -> impl Fn(i16) -> f64 + Sync + '_ {
    let table = pool.decoding().map(|t| &t[..]);
    move |v: i16| match table {
        Some(t) => t[(i32::from(v) + 32768) as usize],
        None => f64::from(v),
    }
}

impl<E: HostEngine> Engine for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        match pool {
            PoolRef::F64(p) => E::compute_typed(p.as_slice(), |v| v, p.n_cells(), plan, stats, out),
            PoolRef::F32(p) => E::compute_typed(p.as_slice(), f64::from, p.n_cells(), plan, stats, out),
            PoolRef::I16(p) => E::compute_typed(p.as_slice(), int16_decoder(p), p.n_cells(), plan, stats, out),
        }
        Ok(EngineTimes::default())
    }
}

/// Which engine `--backend` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A GPU when one is usable (CUDA, then HIP), else the CPU.
    Auto,
    /// The fast exact CPU engine (multi-threaded).
    Cpu,
    /// NVIDIA GPUs through CUDA (driver and NVRTC loaded at run time).
    Cuda,
    /// AMD GPUs through HIP (needs a build with `--features hip`).
    Hip,
    /// The naive oracle: sort every window (slow; for checking).
    Reference,
}

/// A backend that cannot run here: a typed error, never a panic.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("the CUDA backend is unavailable: {0}")]
    CudaUnavailable(String),
    #[error("the HIP backend is unavailable: {0}")]
    HipUnavailable(String),
}

impl Backend {
    /// The engine for this backend on GPU `device` (ignored by host engines). `Auto` falls back
    /// to the CPU engine, logging why no GPU engine was taken.
    pub fn engine(self, device: usize, opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
        match self {
            Backend::Cpu => Ok(Box::new(CpuEngine)),
            Backend::Reference => Ok(Box::new(ReferenceEngine)),
            Backend::Cuda => Ok(Box::new(gpu::cuda::engine(device, opts).map_err(BackendError::CudaUnavailable)?)),
            Backend::Hip => hip_engine(device, opts),
            Backend::Auto => {
                let cuda = match gpu::cuda::engine(device, opts) {
                    Ok(e) => return Ok(Box::new(e)),
                    Err(e) => e,
                };
                let hip = match hip_engine(device, opts) {
                    Ok(e) => return Ok(e),
                    Err(e) => e,
                };
                tracing::info!("no GPU engine (CUDA: {cuda}; {hip}); using the CPU engine");
                Ok(Box::new(CpuEngine))
            }
        }
    }

    /// [`Backend::engine`], with an explicitly requested GPU brought up on its own thread (see
    /// [`Deferred`]): what can be checked at once (the driver library, a build with HIP) is,
    /// so a missing backend still fails here. `Auto` decides which engine it is by starting
    /// one, so it starts at once.
    pub fn start(self, device: usize, opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
        if let (Backend::Cpu, Some(mode)) = (self, crate::util::knobs::test_deferred_start()) {
            return Ok(Box::new(test_start(&mode)));
        }
        let name = match self {
            Backend::Cuda if !gpu::cuda::driver_present() => {
                return Err(BackendError::CudaUnavailable("the CUDA driver library (libcuda.so) was not found".into()))
            }
            Backend::Cuda => "cuda",
            Backend::Hip if cfg!(feature = "hip") => "hip",
            _ => return self.engine(device, opts),
        };
        let moved = opts.clone();
        match Deferred::spawn(name, move || self.engine(device, &moved)) {
            Ok(deferred) => Ok(Box::new(deferred)),
            // no thread to spare: start it here
            Err(_) => self.engine(device, opts),
        }
    }
}

/// A test hook (`SSTCLIM_TEST_DEFERRED_START` with `--backend cpu`): the CPU engine posing as a
/// device that takes 0.3 s to start (`cpu`), or a device that fails to start after 0.3 s
/// (`fail`), so the pipeline's handling of a starting device runs without a GPU.
fn test_start(mode: &str) -> Deferred {
    let failing = mode == "fail";
    let started = Deferred::spawn(if failing { "cuda" } else { "cpu" }, move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        match failing {
            true => Err(BackendError::CudaUnavailable("test: the device did not start".into())),
            false => Ok(Box::new(CpuEngine) as Box<dyn Engine + Send>),
        }
    });
    started.expect("a thread for the test hook")
}

#[cfg(feature = "hip")]
fn hip_engine(device: usize, opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
    Ok(Box::new(gpu::hip::engine(device, opts).map_err(BackendError::HipUnavailable)?))
}

#[cfg(not(feature = "hip"))]
fn hip_engine(_device: usize, _opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
    Err(BackendError::HipUnavailable("this sstclim was built without the `hip` cargo feature".into()))
}

#[cfg(test)]
mod tests;
