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

use crate::pool::{PoolRef, Sample};
use crate::stats::{StatSpec, TileResult};
use crate::window::WindowPlan;

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
