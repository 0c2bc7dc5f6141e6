//! The reference engine: the oracle. For every cell and target day it collects the window's
//! valid samples, sorts them, and picks the percentile positions; nothing is shared between
//! targets or cells. Parallel over cells only so that checking large jobs stays practical.

use rayon::prelude::*;

use super::HostEngine;
use crate::pool::Sample;
use crate::stats::{StatSpec, TileResult};
use crate::util::disjoint::DisjointSlice;
use crate::window::WindowPlan;

/// The naive, obviously-correct engine.
pub struct ReferenceEngine;

impl HostEngine for ReferenceEngine {
    const NAME: &'static str = "reference";

    fn compute_typed<T: Sample, D: Fn(T) -> f64 + Sync>(
        pool: &[T],
        decode: D,
        n_cells: usize,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) {
        compute(pool, &decode, n_cells, plan, stats, out);
    }
}

fn compute<T: Sample, D: Fn(T) -> f64 + Sync>(
    pool: &[T],
    decode: &D,
    n_cells: usize,
    plan: &WindowPlan,
    stats: &StatSpec,
    out: &mut TileResult,
) {
    let n_targets = plan.targets.len();
    let values = DisjointSlice::new(&mut out.values);
    let counts = DisjointSlice::new(&mut out.counts);
    (0..n_cells).into_par_iter().for_each_init(Vec::new, |samples, cell| {
        for (t, target) in plan.targets.iter().enumerate() {
            samples.clear();
            let mut total = 0.0;
            for &g in &target.groups {
                let mut part = 0.0;
                for &slot in &plan.groups[g as usize].slots {
                    let v = decode(pool[slot as usize * n_cells + cell]);
                    if v.is_finite() {
                        part += v;
                        samples.push(v);
                    }
                }
                total += part;
            }
            let n = samples.len();
            // SAFETY: only this iteration writes cell `cell`; indices of different cells differ.
            unsafe { counts.write(t * n_cells + cell, n as u32) };
            let at = |stat: usize| (stat * n_targets + t) * n_cells + cell;
            if n == 0 || n < stats.min_samples {
                for stat in 0..stats.n_stats() {
                    // SAFETY: as above.
                    unsafe { values.write(at(stat), f64::NAN) };
                }
                continue;
            }
            samples.sort_by(f64::total_cmp);
            // SAFETY: as above.
            unsafe { values.write(at(0), total / n as f64) };
            for (i, p) in stats.percentiles.iter().enumerate() {
                let position = stats.method.position(p, n).expect("n > 0");
                // SAFETY: as above.
                unsafe { values.write(at(1 + i), position.pick(samples)) };
            }
        }
    });
}
