//! The GPU kernel's launch schedule: which target days one launch (a batch) covers, which
//! groups it stages into which shared-memory ring slots and when, and which pool rows it reads.
//!
//! A group (one window day over all years) is staged when the first target of the batch needs
//! it and its ring slot is reused once the last target needing it is done, so each group is
//! read from device memory once per batch. Batches are cut so that the ring and the pool rows
//! fit the device; this is pure and unit-tested.

use std::ops::Range;

use crate::window::WindowPlan;

/// One launch: a run of consecutive targets and everything the kernel needs to walk them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Indices into the plan's targets.
    pub targets: Range<usize>,
    /// Ring slots in use at most.
    pub ring: usize,
    /// Per target: its first entry in `loads` (one more entry at the end).
    pub load_start: Vec<i32>,
    /// (group, ring slot) pairs, flattened, in the order the kernel stages them.
    pub loads: Vec<i32>,
    /// Per target: `maxl` ring slots (its groups in offset order, then -1).
    pub target_lists: Vec<i32>,
    /// Per target: number of groups.
    pub target_nl: Vec<i32>,
    /// The pool slots (rows) the batch reads: the device pool holds these rows.
    pub slots: Range<usize>,
    /// Longest group of the batch.
    pub longest_group: usize,
}

impl Batch {
    /// The schedule of `targets` for a kernel handling up to `maxl` groups per target.
    pub fn build(plan: &WindowPlan, targets: Range<usize>, maxl: usize) -> Batch {
        let n_groups = plan.groups.len();
        let mut last_use = vec![usize::MAX; n_groups];
        for t in targets.clone() {
            for &g in &plan.targets[t].groups {
                last_use[g as usize] = t;
            }
        }
        let mut slot_of = vec![usize::MAX; n_groups];
        let mut free: Vec<usize> = Vec::new(); // kept sorted descending: pop gives the smallest
        let mut in_use = 0usize;
        let mut ring = 0usize;
        let mut batch = Batch {
            targets: targets.clone(),
            ring: 0,
            load_start: Vec::with_capacity(targets.len() + 1),
            loads: Vec::new(),
            target_lists: Vec::with_capacity(targets.len() * maxl),
            target_nl: Vec::with_capacity(targets.len()),
            slots: 0..0,
            longest_group: 0,
        };
        let (mut lo, mut hi) = (usize::MAX, 0usize);
        let mut live: Vec<usize> = Vec::new();
        for t in targets.clone() {
            // free the slots of groups no target from `t` on needs
            live.retain(|&g| {
                if last_use[g] < t {
                    free.push(slot_of[g]);
                    slot_of[g] = usize::MAX;
                    in_use -= 1;
                    false
                } else {
                    true
                }
            });
            free.sort_unstable_by(|a, b| b.cmp(a));
            batch.load_start.push((batch.loads.len() / 2) as i32);
            let groups = &plan.targets[t].groups;
            assert!(groups.len() <= maxl, "target with {} groups for a kernel of {maxl}", groups.len());
            for &g in groups {
                let g = g as usize;
                if slot_of[g] == usize::MAX {
                    let slot = free.pop().unwrap_or(ring);
                    if slot == ring {
                        ring += 1;
                    }
                    slot_of[g] = slot;
                    in_use += 1;
                    live.push(g);
                    batch.loads.extend([g as i32, slot as i32]);
                    let slots = &plan.groups[g].slots;
                    batch.longest_group = batch.longest_group.max(slots.len());
                    for &s in slots {
                        lo = lo.min(s as usize);
                        hi = hi.max(s as usize + 1);
                    }
                }
                batch.target_lists.push(slot_of[g] as i32);
            }
            batch.target_lists.extend(std::iter::repeat(-1).take(maxl - groups.len()));
            batch.target_nl.push(groups.len() as i32);
            debug_assert!(in_use <= ring);
        }
        batch.load_start.push((batch.loads.len() / 2) as i32);
        batch.ring = ring;
        batch.slots = if lo == usize::MAX { 0..0 } else { lo..hi };
        batch
    }

    /// The batches covering all targets, each as long as possible with at most `max_ring` ring
    /// slots and `max_rows` pool rows (a single target always forms a batch).
    pub fn plan(plan: &WindowPlan, maxl: usize, max_ring: usize, max_rows: usize) -> Vec<Batch> {
        let n = plan.targets.len();
        let mut batches = Vec::new();
        let mut t0 = 0;
        while t0 < n {
            let mut best = Batch::build(plan, t0..t0 + 1, maxl);
            // grow by doubling, then bisect the last step
            let (mut ok, mut step) = (t0 + 1, 1);
            let fits = |b: &Batch| b.ring <= max_ring && b.slots.len() <= max_rows;
            loop {
                let end = (ok + step).min(n);
                if end == ok {
                    break;
                }
                let b = Batch::build(plan, t0..end, maxl);
                if fits(&b) {
                    ok = end;
                    best = b;
                    step *= 2;
                } else if step == 1 {
                    break;
                } else {
                    step /= 2;
                }
            }
            t0 = ok;
            batches.push(best);
        }
        batches
    }

    /// The kernel's group tables: the pool row of every sample of every group, relative to this
    /// batch's first row; where each group starts in them (one more entry at the end); and each
    /// group's first row where its rows are consecutive (the kernel then steps through them),
    /// else -1. Groups outside the batch are left empty.
    pub fn group_tables(&self, plan: &WindowPlan) -> GroupTables {
        let mut used = vec![false; plan.groups.len()];
        for pair in self.loads.chunks(2) {
            used[pair[0] as usize] = true;
        }
        let mut t = GroupTables::default();
        for (g, group) in plan.groups.iter().enumerate() {
            let start = t.rows.len();
            t.off.push(start as i32);
            if used[g] {
                t.rows.extend(group.slots.iter().map(|&s| (s as usize - self.slots.start) as i32));
            }
            let rows = &t.rows[start..];
            let consecutive = !rows.is_empty() && rows.iter().zip(rows[0]..).all(|(&r, want)| r == want);
            t.first.push(if consecutive { rows[0] } else { -1 });
        }
        t.off.push(t.rows.len() as i32);
        t
    }
}

/// A batch's group tables for the kernel (`group_off`, `group_rows`, `group_first`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupTables {
    pub off: Vec<i32>,
    pub rows: Vec<i32>,
    pub first: Vec<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::window::WindowSpec;

    fn reference_plan() -> WindowPlan {
        let spec =
            WindowSpec { years: 1991..=2020, doys: (152..=243).collect(), half_window: 5, calendar: Calendar::Ordinal };
        WindowPlan::build(&spec, |_| true)
    }

    /// Replays a batch the way the kernel does and checks every target finds its groups.
    fn replay(plan: &WindowPlan, b: &Batch, maxl: usize) {
        let mut ring: Vec<Option<usize>> = vec![None; b.ring];
        for (i, t) in b.targets.clone().enumerate() {
            for l in b.load_start[i]..b.load_start[i + 1] {
                let (g, s) = (b.loads[2 * l as usize] as usize, b.loads[2 * l as usize + 1] as usize);
                ring[s] = Some(g);
            }
            let groups = &plan.targets[t].groups;
            assert_eq!(b.target_nl[i] as usize, groups.len());
            for (j, &g) in groups.iter().enumerate() {
                let slot = b.target_lists[i * maxl + j] as usize;
                assert_eq!(ring[slot], Some(g as usize), "target {t} group {j}");
            }
        }
    }

    #[test]
    fn reference_job_stages_each_group_once_in_eleven_slots() {
        let plan = reference_plan();
        let b = Batch::build(&plan, 0..92, 12);
        assert_eq!(b.ring, 11);
        assert_eq!(b.loads.len() / 2, 102, "every group loaded once");
        assert_eq!(b.slots, 0..3060);
        assert_eq!(b.longest_group, 30);
        // the first target loads its 11 groups, each later one a single new group
        assert_eq!(b.load_start[1], 11);
        assert!(b.load_start.windows(2).skip(1).all(|w| w[1] - w[0] == 1));
        replay(&plan, &b, 12);
    }

    #[test]
    fn batches_respect_ring_and_row_limits() {
        let plan = reference_plan();
        // rows for 20 target days: (20 + 10) days x 30 years
        let batches = Batch::plan(&plan, 12, 11, 30 * 30);
        assert_eq!(batches.iter().map(|b| b.targets.len()).sum::<usize>(), 92);
        assert!(batches.iter().all(|b| b.slots.len() <= 900 && b.ring <= 11));
        assert_eq!(batches[0].targets, 0..20);
        assert_eq!(batches[1].targets, 20..40);
        for b in &batches {
            replay(&plan, b, 12);
            let t = b.group_tables(&plan);
            assert_eq!(t.off.len(), plan.groups.len() + 1);
            assert!(t.rows.iter().all(|&r| (r as usize) < b.slots.len()));
            // every year present: each loaded group's 30 rows are consecutive
            for pair in b.loads.chunks(2) {
                let g = pair[0] as usize;
                let rows = &t.rows[t.off[g] as usize..t.off[g + 1] as usize];
                assert_eq!(rows.len(), 30);
                assert_eq!(t.first[g], rows[0]);
                assert_eq!(rows[29], rows[0] + 29);
            }
        }
        // one target per batch when rows allow only one window
        let single = Batch::plan(&plan, 12, 11, 330);
        assert_eq!(single.len(), 92);
        // the whole job when everything fits
        assert_eq!(Batch::plan(&plan, 12, 64, usize::MAX).len(), 1);
    }

    #[test]
    fn missing_days_and_hobday_calendar_replay() {
        let spec =
            WindowSpec { years: 2000..=2004, doys: (1..=366).collect(), half_window: 3, calendar: Calendar::Hobday366 };
        let plan = WindowPlan::build(&spec, |d| d.ordinal() % 7 != 3);
        let maxl = plan.targets.iter().map(|t| t.groups.len()).max().unwrap();
        let (mut stepped, mut listed) = (0, 0);
        for b in Batch::plan(&plan, maxl, 12, 400) {
            assert!(b.ring <= 12);
            replay(&plan, &b, maxl);
            // a group's first row is given exactly when its rows are consecutive
            let t = b.group_tables(&plan);
            for g in 0..plan.groups.len() {
                let rows = &t.rows[t.off[g] as usize..t.off[g + 1] as usize];
                if t.first[g] >= 0 {
                    stepped += 1;
                    assert!(rows.iter().enumerate().all(|(y, &r)| r == t.first[g] + y as i32), "group {g}");
                } else if rows.len() > 1 {
                    listed += 1;
                    assert!(rows.windows(2).any(|w| w[1] != w[0] + 1), "group {g}: {rows:?}");
                }
            }
        }
        // missing days leave gaps in some groups and not in others
        assert!(stepped > 0 && listed > 0, "{stepped} stepped, {listed} listed");
    }
}
