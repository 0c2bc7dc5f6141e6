//! What a climatology computes and what it gives, apart from how: [`StatSpec`] (the mean and
//! which percentiles, by which definition) and [`TileResult`] (a tile's statistics per target
//! day and cell), with the exact percentile definitions in [`percentile`]. Engines fill a
//! `TileResult`; smoothing, the output writers and the job read it, so these types sit below
//! all of them instead of inside `engine`.

pub mod percentile;

use percentile::{Method, Percentile, Position};

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
