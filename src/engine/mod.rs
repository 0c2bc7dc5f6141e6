//! Engines compute the statistics of one tile: a pool of samples plus a window plan in,
//! means and percentiles for every target day and cell out.
//!
//! All backends sit behind the narrow [`Engine`] trait. The `reference` engine is deliberately
//! naive (collect each window, sort it, pick) and is the oracle every other engine must equal
//! bit for bit on the same pool; `cpu` is the fast exact engine.

mod cpu;
mod reference;

pub use cpu::CpuEngine;
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

    /// Fill `out` (sized for `plan` and `pool`) with the statistics of every target and cell.
    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<(), EngineError>;
}

/// A host engine written once, generically over the pool's element type, that cannot fail.
trait HostEngine: Sync {
    const NAME: &'static str;
    fn compute_typed<T: Sample>(pool: &[T], n_cells: usize, plan: &WindowPlan, stats: &StatSpec, out: &mut TileResult);
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
    ) -> Result<(), EngineError> {
        match pool {
            PoolRef::F64(p) => E::compute_typed(p.as_slice(), p.n_cells(), plan, stats, out),
            PoolRef::F32(p) => E::compute_typed(p.as_slice(), p.n_cells(), plan, stats, out),
        }
        Ok(())
    }
}

/// Which engine `--backend` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The fast exact CPU engine (multi-threaded).
    Cpu,
    /// The naive oracle: sort every window (slow; for checking).
    Reference,
}

impl Backend {
    pub fn engine(self) -> Box<dyn Engine> {
        match self {
            Backend::Cpu => Box::new(CpuEngine),
            Backend::Reference => Box::new(ReferenceEngine),
        }
    }
}

#[cfg(test)]
mod tests;
