//! The fast exact CPU engine.
//!
//! Cells are processed in chunks of [`CHUNK`] on all threads. A chunk's samples are first
//! transposed to `[cell][slot]` so each cell's values are contiguous. Per cell, every group
//! (one window offset over all years) is filtered and sorted once; each target day then merges
//! the sorted groups of its window from whichever end is nearer to the ranks it needs (for a
//! 90th percentile of 330 samples: 34 steps from the top), so neither the 330 samples nor the
//! overlapping windows are ever sorted again. Sums follow the window plan's canonical order,
//! making results bitwise equal to the reference engine.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::{HostEngine, StatSpec, TileResult};
use crate::disjoint::DisjointSlice;
use crate::percentile::Position;
use crate::pool::Sample;
use crate::window::WindowPlan;

/// Cells per parallel work item: one transposed chunk is `CHUNK x slots` float64 values.
const CHUNK: usize = 32;

/// The fast exact multi-threaded CPU engine.
pub struct CpuEngine;

impl HostEngine for CpuEngine {
    const NAME: &'static str = "cpu";

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

/// Per-thread working memory.
struct Scratch {
    /// The chunk's samples, `[cell][slot]`.
    local: Vec<f64>,
    /// One cell's valid values, all groups back to back, each group sorted ascending.
    vals: Vec<f64>,
    group_count: Vec<usize>,
    group_sum: Vec<f64>,
    /// (start, len) in `vals` of the groups of the current target.
    lists: Vec<(usize, usize)>,
    heads: Vec<(f64, usize, usize)>,
    ranks: Vec<usize>,
    rank_values: Vec<f64>,
}

fn compute<T: Sample, D: Fn(T) -> f64 + Sync>(
    pool: &[T],
    decode: &D,
    n_cells: usize,
    plan: &WindowPlan,
    stats: &StatSpec,
    out: &mut TileResult,
) {
    let n_slots = plan.slots.len();
    debug_assert_eq!(pool.len(), n_slots * n_cells);
    let offsets = plan.group_offsets();
    let positions = stats.position_table(plan.max_capacity());
    let n_targets = plan.targets.len();
    let values = DisjointSlice::new(&mut out.values);
    let counts = DisjointSlice::new(&mut out.counts);
    let new_scratch = || Scratch {
        local: vec![0.0; CHUNK * n_slots],
        vals: vec![0.0; offsets[plan.groups.len()]],
        group_count: vec![0; plan.groups.len()],
        group_sum: vec![0.0; plan.groups.len()],
        lists: Vec::new(),
        heads: Vec::new(),
        ranks: Vec::new(),
        rank_values: Vec::new(),
    };
    (0..n_cells.div_ceil(CHUNK)).into_par_iter().for_each_init(new_scratch, |s, chunk| {
        let c0 = chunk * CHUNK;
        let width = CHUNK.min(n_cells - c0);
        for slot in 0..n_slots {
            let row = &pool[slot * n_cells + c0..slot * n_cells + c0 + width];
            for (j, v) in row.iter().enumerate() {
                s.local[j * n_slots + slot] = decode(*v);
            }
        }
        for j in 0..width {
            let cell = c0 + j;
            sort_groups(s, j * n_slots, n_slots, plan, &offsets);
            for (t, target) in plan.targets.iter().enumerate() {
                let mut n = 0;
                let mut total = 0.0;
                for &g in &target.groups {
                    n += s.group_count[g as usize];
                    total += s.group_sum[g as usize];
                }
                // SAFETY: this work item alone owns cells c0..c0+width.
                unsafe { counts.write(t * n_cells + cell, n as u32) };
                let at = |stat: usize| (stat * n_targets + t) * n_cells + cell;
                if n == 0 || n < stats.min_samples {
                    for stat in 0..stats.n_stats() {
                        // SAFETY: this work item alone owns cells c0..c0+width.
                        unsafe { values.write(at(stat), f64::NAN) };
                    }
                    continue;
                }
                // SAFETY: as above.
                unsafe { values.write(at(0), total / n as f64) };
                if stats.percentiles.is_empty() {
                    continue;
                }
                s.lists.clear();
                for &g in &target.groups {
                    let g = g as usize;
                    s.lists.push((offsets[g], s.group_count[g]));
                }
                let pos = &positions[n];
                select_positions(s, n, pos);
                for (i, p) in pos.iter().enumerate() {
                    let (lo, hi) = p.ranks();
                    let value_at = |rank: usize| s.rank_values[s.ranks.binary_search(&rank).expect("rank selected")];
                    let v = p.value(value_at(lo), hi.map_or(0.0, value_at));
                    // SAFETY: as above.
                    unsafe { values.write(at(1 + i), v) };
                }
            }
        }
    });
}

/// Filter and sort every group of the cell whose samples start at `s.local[base..]`.
fn sort_groups(s: &mut Scratch, base: usize, n_slots: usize, plan: &WindowPlan, offsets: &[usize]) {
    let cell = &s.local[base..base + n_slots];
    for (g, group) in plan.groups.iter().enumerate() {
        let start = offsets[g];
        let mut n = 0;
        let mut sum = 0.0;
        for &slot in &group.slots {
            let v = cell[slot as usize];
            if v.is_finite() {
                s.vals[start + n] = v;
                n += 1;
                sum += v;
            }
        }
        sort_small(&mut s.vals[start..start + n]);
        s.group_count[g] = n;
        s.group_sum[g] = sum;
    }
}

/// Ascending sort in the total order of f64 (insertion sort for the usual 30 values).
fn sort_small(v: &mut [f64]) {
    if v.len() > 48 {
        v.sort_unstable_by(f64::total_cmp);
        return;
    }
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].total_cmp(&x) == Ordering::Greater {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Find the order statistics the positions need: fills `s.ranks` (sorted, unique, 1-based) and
/// `s.rank_values` by merging the sorted lists in `s.lists` from the nearer end.
fn select_positions(s: &mut Scratch, n: usize, positions: &[Position]) {
    s.ranks.clear();
    for p in positions {
        let (lo, hi) = p.ranks();
        s.ranks.push(lo);
        s.ranks.extend(hi);
    }
    s.ranks.sort_unstable();
    s.ranks.dedup();
    s.rank_values.clear();
    s.rank_values.resize(s.ranks.len(), 0.0);
    let split = s.ranks.partition_point(|&r| r <= n / 2);
    let (low, high) = s.ranks.split_at(split);
    let (low_out, high_out) = s.rank_values.split_at_mut(split);
    merge_from_bottom(&s.vals, &s.lists, low, low_out, &mut s.heads);
    merge_from_top(&s.vals, &s.lists, n, high, high_out, &mut s.heads);
}

/// Walk the merged ascending order of `lists` up to the largest of `ranks` (ascending).
///
/// The current head of every list is kept in `heads`, sorted so that the next value to take
/// is last; after taking it, the list's following value is inserted back from the end (a few
/// comparisons, as windows' lists interleave).
fn merge_from_bottom(
    vals: &[f64],
    lists: &[(usize, usize)],
    ranks: &[usize],
    out: &mut [f64],
    heads: &mut Vec<(f64, usize, usize)>,
) {
    // (value, next index, end index); sorted descending so the smallest is last
    let before = |a: f64, b: f64| a.total_cmp(&b) == Ordering::Greater;
    heads.clear();
    for &(start, len) in lists.iter().filter(|l| l.1 > 0) {
        insert_sorted(heads, (vals[start], start + 1, start + len), before);
    }
    let (mut rank, mut i) = (0, 0);
    while i < ranks.len() {
        let (v, next, end) = heads.pop().expect("enough samples for every rank");
        rank += 1;
        while i < ranks.len() && ranks[i] == rank {
            out[i] = v;
            i += 1;
        }
        if next < end {
            insert_sorted(heads, (vals[next], next + 1, end), before);
        }
    }
}

/// Walk the merged descending order of `lists` (holding `n` values) down to the smallest of
/// `ranks` (ascending 1-based ranks of the ascending order).
fn merge_from_top(
    vals: &[f64],
    lists: &[(usize, usize)],
    n: usize,
    ranks: &[usize],
    out: &mut [f64],
    heads: &mut Vec<(f64, usize, usize)>,
) {
    // (value, index, start index): the list's current largest is vals[index]; sorted
    // ascending so the largest is last
    let before = |a: f64, b: f64| a.total_cmp(&b) == Ordering::Less;
    heads.clear();
    for &(start, len) in lists.iter().filter(|l| l.1 > 0) {
        insert_sorted(heads, (vals[start + len - 1], start + len - 1, start), before);
    }
    let mut rank = n + 1;
    let mut i = ranks.len();
    while i > 0 {
        let (v, at, start) = heads.pop().expect("enough samples for every rank");
        rank -= 1;
        while i > 0 && ranks[i - 1] == rank {
            out[i - 1] = v;
            i -= 1;
        }
        if at > start {
            insert_sorted(heads, (vals[at - 1], at - 1, start), before);
        }
    }
}

/// Insert `item` into `heads`, which is ordered so that `before(x, y)` holds for x before y,
/// scanning from the end.
#[inline]
fn insert_sorted(
    heads: &mut Vec<(f64, usize, usize)>,
    item: (f64, usize, usize),
    before: impl Fn(f64, f64) -> bool + Copy,
) {
    let mut j = heads.len();
    heads.push(item);
    while j > 0 && !before(heads[j - 1].0, item.0) {
        heads[j] = heads[j - 1];
        j -= 1;
    }
    heads[j] = item;
}
