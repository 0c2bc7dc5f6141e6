//! Engines compute the statistics of one tile: a pool of samples plus a window plan in,
//! means and percentiles for every target day and cell out.
//!
//! All backends sit behind the narrow [`Engine`] trait (name, description, compute); device
//! engines answer the rest (pinning, a device-resident pool, ...) through [`DeviceEngine`],
//! reached by [`Engine::device`]. The `reference` engine is deliberately naive (collect each
//! window, sort it, pick) and is the oracle every other engine must equal bit for bit on the
//! same pool; `cpu` is the fast exact engine; `cuda` and `hip` run the kernel in `kernels/` on a
//! GPU (see [`gpu`]). [`Backend`] says which one a run gets.

mod backend;
mod cpu;
pub mod deferred;
mod device;
pub mod each_backend;
mod error;
pub mod gpu;
mod reference;
mod sort_net;

use std::time::Duration;

pub use backend::Backend;
pub use cpu::CpuEngine;
pub use deferred::Deferred;
pub use device::{BandwidthProbe, DeviceEngine, PoolKind};
pub use error::{BackendError, EngineError, StagingError, StartError};
pub use gpu::{check_gpu_limits, GpuOptions, RingPlace};
pub use reference::ReferenceEngine;

use crate::percentile::{Method, Percentile, Position};
use crate::pool::{PoolRef, Sample};
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

    /// Zeros, for results every value of which is written before it is read: the allocation
    /// is zeroed lazily by the kernel, where [`TileResult::new`]'s NaN fill writes every byte
    /// on one thread (gigabytes for a full-size year).
    pub fn zeroed(n_stats: usize, n_targets: usize, n_cells: usize) -> Self {
        TileResult {
            n_stats,
            n_targets,
            n_cells,
            values: vec![0.0; n_stats * n_targets * n_cells],
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

/// A way of computing a tile's statistics.
pub trait Engine: Sync {
    /// Short name for logs and reports.
    fn name(&self) -> &'static str;

    /// What it runs on, for reports (`cpu`, `CUDA device 0 (NVIDIA H200)`).
    fn describe(&self) -> String {
        "cpu".into()
    }

    /// Fill `out` (sized for `plan` and `pool`) with the statistics of every target and cell:
    /// every value and count is written (NaN where a cell has no value), whatever `out` held.
    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError>;

    /// The device side of a device engine (GPU engines, and one still starting); `None` for
    /// host engines. Answered at once, without waiting for a device to start.
    fn device(&self) -> Option<&dyn DeviceEngine> {
        None
    }
}

impl dyn Engine + '_ {
    /// Whether it computes on a device (see [`Engine::device`]).
    pub fn is_device(&self) -> bool {
        self.device().is_some()
    }
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

#[cfg(test)]
mod tests;
