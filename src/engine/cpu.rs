//! The fast exact CPU engine.
//!
//! Cells are processed in chunks of [`CHUNK`] on all threads. A chunk's samples are first
//! transposed to `[cell][slot]` so each cell's values are contiguous. Per cell, every group
//! (one window offset over all years) is filtered and sorted once (a branch-free network for up
//! to 32 years); each target day then merges the sorted groups of its window from the
//! percentile's value at the previous target day, which is a few ranks away (or, for a cell's
//! first target, from whichever end is nearer: for a 90th percentile of 330 samples, 34 steps
//! from the top), so neither the 330 samples nor the overlapping windows are ever sorted again.
//! Sums follow the window plan's canonical order, making results bitwise equal to the reference
//! engine.

use rayon::prelude::*;

use super::{sort_net, HostEngine};
use crate::pool::Sample;
use crate::stats::percentile::Position;
use crate::stats::{StatSpec, TileResult};
use crate::util::disjoint::DisjointSlice;
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
    /// Per percentile, its value at the previous target of this cell (`None`: no target yet).
    hints: Vec<Option<f64>>,
    /// Per percentile and group: how many of the group's values lay at or below that
    /// percentile's hint when the group was last used, a start for the next count.
    pos: Vec<usize>,
    /// Per group of the current target: its values at or below the hint.
    split: Vec<usize>,
    /// Cursors of a walk that must leave `split` as it is.
    cursor: Vec<usize>,
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
        hints: vec![None; stats.percentiles.len()],
        pos: vec![0; stats.percentiles.len() * plan.groups.len()],
        split: Vec::new(),
        cursor: Vec::new(),
    };
    let n_groups = plan.groups.len();
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
            s.hints.iter_mut().for_each(|h| *h = None);
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
                for (i, p) in positions[n].iter().enumerate() {
                    let (x_lo, x_hi) = select_ranks(s, n, i * n_groups, i, *p, &target.groups);
                    // SAFETY: as above.
                    unsafe { values.write(at(1 + i), p.value(x_lo, x_hi)) };
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

/// Ascending sort in the total order of f64. Up to 32 values (a group of up to 32 years) go
/// through Batcher's odd-even merge network for 8, 16 or 32 keys (`super::sort_net`), padded
/// with the largest key, on integer keys with the same order as `f64::total_cmp`: every
/// compare-exchange is a branch-free min/max, where an insertion sort of 30 random values
/// mispredicts about half of its 200-odd comparisons.
fn sort_small(v: &mut [f64]) {
    match v.len() {
        0..=8 => sort_padded::<8>(v, sort_net::sort8),
        9..=16 => sort_padded::<16>(v, sort_net::sort16),
        17..=32 => sort_padded::<32>(v, sort_net::sort32),
        _ => v.sort_unstable_by(f64::total_cmp),
    }
}

/// Sort `v` (at most `N` values) with the `N`-key network `net`.
#[inline(always)]
fn sort_padded<const N: usize>(v: &mut [f64], net: fn(&mut [i64; N])) {
    let mut keys = [i64::MAX; N];
    for (k, x) in keys.iter_mut().zip(v.iter()) {
        *k = total_key(*x);
    }
    net(&mut keys);
    for (x, k) in v.iter_mut().zip(keys) {
        *x = f64::from_bits(total_key_bits(k));
    }
}

/// An integer with the order of `f64::total_cmp` (the transform the standard library uses).
#[inline(always)]
fn total_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ ((((b >> 63) as u64) >> 1) as i64)
}

/// The bits of the value `total_key` made `k` from (the transform is its own inverse).
#[inline(always)]
fn total_key_bits(k: i64) -> u64 {
    (k ^ ((((k >> 63) as u64) >> 1) as i64)) as u64
}

/// The order statistics `x(lo)` and (when interpolating) `x(lo + 1)` of percentile `i` among
/// the `n` values of the sorted lists in `s.lists` (the target's groups, `groups`).
///
/// The lists are cut at a split value: the values at or below it (`below` of them) and those
/// above. A rank at or below `below` is then found walking down from the top of the lower
/// parts, a higher one walking up from the bottom of the upper parts. The split is this
/// percentile's value at the previous target day (days are close, so it is a few ranks away),
/// with each group's count at or below it moved from where it was last; or, without one or when
/// an end is nearer, the nearer end (as for a first target).
fn select_ranks(s: &mut Scratch, n: usize, pos_at: usize, i: usize, p: Position, groups: &[u32]) -> (f64, f64) {
    let (lo, hi) = p.ranks();
    let top = hi.unwrap_or(lo);
    let mut below = 0;
    s.split.clear();
    if let Some(h) = s.hints[i] {
        let hk = total_key(h);
        for (&(start, cnt), &g) in s.lists.iter().zip(groups) {
            let vals = &s.vals[start..start + cnt];
            let mut q = s.pos[pos_at + g as usize].min(cnt);
            while q < cnt && total_key(vals[q]) <= hk {
                q += 1;
            }
            while q > 0 && total_key(vals[q - 1]) > hk {
                q -= 1;
            }
            s.split.push(q);
            below += q;
        }
    }
    // walk lengths: from the split, or from the nearer end
    let steps = |below: usize| (if lo <= below { below + 1 - lo } else { 0 }) + top.saturating_sub(below);
    let from_end = lo.max(top).min(n + 1 - lo.min(top));
    if s.hints[i].is_none() || steps(below) >= from_end {
        let from_top = n + 1 - lo < top;
        s.split.clear();
        s.split.extend(s.lists.iter().map(|&(_, cnt)| if from_top { cnt } else { 0 }));
        below = if from_top { n } else { 0 };
    }
    for (&q, &g) in s.split.iter().zip(groups) {
        s.pos[pos_at + g as usize] = q;
    }
    // walk from the split: down through the values at or below it, up through those above
    let (x_lo, x_hi) = if top <= below {
        let (last, before) = walk(&s.vals, &s.lists, &mut s.split, below + 1 - lo, false);
        (last, before)
    } else if lo <= below {
        s.cursor.clear();
        s.cursor.extend_from_slice(&s.split);
        let (x_lo, _) = walk(&s.vals, &s.lists, &mut s.cursor, below + 1 - lo, false);
        (x_lo, walk(&s.vals, &s.lists, &mut s.split, 1, true).0)
    } else {
        let (last, before) = walk(&s.vals, &s.lists, &mut s.split, top - below, true);
        if hi.is_some() {
            (before, last)
        } else {
            (last, 0.0)
        }
    };
    s.hints[i] = Some(x_lo);
    (x_lo, if hi.is_some() { x_hi } else { 0.0 })
}

/// Take `steps` values (at least one) off the sorted lists in merged order, starting at the
/// cursors (`cursor[j]` values of list j lie at or below the start): the largest values at or
/// below the start first when walking down, the smallest above it first when walking up.
/// Returns the last value taken and the one taken before it (NaN after a single step); the
/// cursors move past the values taken. Each step scans every list's head: windows hold a few
/// lists and the walks from the previous day's value take a few steps.
fn walk(vals: &[f64], lists: &[(usize, usize)], cursor: &mut [usize], steps: usize, up: bool) -> (f64, f64) {
    let (mut last, mut before) = (f64::NAN, f64::NAN);
    for _ in 0..steps {
        let mut best: Option<(i64, usize)> = None;
        for (j, (&(start, cnt), &c)) in lists.iter().zip(cursor.iter()).enumerate() {
            let head = if up {
                (c < cnt).then(|| total_key(vals[start + c]))
            } else {
                (c > 0).then(|| total_key(vals[start + c - 1]))
            };
            if let Some(key) = head {
                let better = match best {
                    None => true,
                    Some((b, _)) => {
                        if up {
                            key < b
                        } else {
                            key > b
                        }
                    }
                };
                if better {
                    best = Some((key, j));
                }
            }
        }
        let (key, j) = best.expect("enough samples for every rank");
        if up {
            cursor[j] += 1;
        } else {
            cursor[j] -= 1;
        }
        before = last;
        last = f64::from_bits(total_key_bits(key));
    }
    (last, before)
}
