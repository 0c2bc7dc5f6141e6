//! Cutting a tile's target days into segments for the overlapped pipeline: each segment is a
//! run of consecutive targets with the consecutive pool slots their windows need, as a window
//! plan of its own, so any engine computes it from a view of just those slots while later
//! slots are still being read.

use std::collections::HashMap;
use std::ops::Range;

use crate::window::{Group, Target, WindowPlan};

/// Consecutive targets and the slots they need.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// Indices into the tile's targets.
    pub targets: Range<usize>,
    /// Pool slots the targets' windows use (the smallest range holding them all).
    pub slots: Range<usize>,
    /// The segment's own plan: its targets, with slot numbers relative to `slots.start`.
    pub plan: WindowPlan,
}

/// `n` segments of `plan`'s targets, as equal as possible (fewer when there are fewer targets).
pub fn plan_segments(plan: &WindowPlan, n: usize) -> Vec<Segment> {
    let total = plan.targets.len();
    let n = n.clamp(1, total.max(1));
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let end = total * (i + 1) / n;
        if end > start {
            out.push(segment(plan, start..end));
        }
        start = end;
    }
    out
}

/// `n` segments of `plan`'s targets for a writer that makes each written day from its
/// neighbours (`--smooth W`, Feb 29 filled): the last segment is a quarter of the others
/// (rounded up), which share the rest as equally as possible. The days written after the last
/// segment is computed are its own and those whose windows reach into it (`W - 1` more, the
/// year's first days among them: their windows wrap around to its last days), so a short last
/// segment leaves the least to make and write after the last compute; which segment comes
/// last does not change that (any order has one segment last). A row's values do not depend
/// on how the days are cut, so neither do the outputs.
pub fn plan_segments_short_last(plan: &WindowPlan, n: usize) -> Vec<Segment> {
    let total = plan.targets.len();
    let n = n.clamp(1, total.max(1));
    if n < 2 {
        return plan_segments(plan, n);
    }
    let last = total.div_ceil(4 * n).max(1);
    let rest = total - last;
    let mut out: Vec<Segment> = (0..n - 1)
        .map(|i| rest * i / (n - 1)..rest * (i + 1) / (n - 1))
        .filter(|r| !r.is_empty())
        .map(|r| segment(plan, r))
        .collect();
    out.push(segment(plan, rest..total));
    out
}

fn segment(plan: &WindowPlan, targets: Range<usize>) -> Segment {
    let used: Vec<u32> = plan.targets[targets.clone()].iter().flat_map(|t| t.groups.iter().copied()).collect();
    let slots_of = |g: &u32| plan.groups[*g as usize].slots.iter().map(|&s| s as usize);
    let lo = used.iter().flat_map(slots_of).min().unwrap_or(0);
    let hi = used.iter().flat_map(slots_of).max().map_or(lo, |m| m + 1);
    let mut groups = Vec::new();
    let mut renumber: HashMap<u32, u32> = HashMap::new();
    let mut sub_targets = Vec::with_capacity(targets.len());
    for t in &plan.targets[targets.clone()] {
        let ids = t
            .groups
            .iter()
            .map(|&g| {
                *renumber.entry(g).or_insert_with(|| {
                    let slots = plan.groups[g as usize].slots.iter().map(|&s| s - lo as u32).collect();
                    groups.push(Group { slots });
                    (groups.len() - 1) as u32
                })
            })
            .collect();
        sub_targets.push(Target { doy: t.doy, groups: ids, capacity: t.capacity });
    }
    Segment {
        targets,
        slots: lo..hi,
        plan: WindowPlan { slots: plan.slots[lo..hi].to_vec(), groups, targets: sub_targets },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::window::WindowSpec;

    fn plan(years: std::ops::RangeInclusive<i32>, doys: std::ops::RangeInclusive<u16>, h: u16) -> WindowPlan {
        let spec = WindowSpec { years, doys: doys.collect(), half_window: h, calendar: Calendar::Ordinal };
        WindowPlan::build(&spec, |_| true)
    }

    /// The dates each target of a plan reads, group by group.
    fn dates(p: &WindowPlan, t: usize) -> Vec<Vec<String>> {
        p.targets[t]
            .groups
            .iter()
            .map(|&g| p.groups[g as usize].slots.iter().map(|&s| p.slots[s as usize].to_string()).collect())
            .collect()
    }

    #[test]
    fn reference_job_in_four_segments() {
        let whole = plan(1991..=2020, 152..=243, 5);
        let segs = plan_segments(&whole, 4);
        assert_eq!(segs.iter().map(|s| s.targets.clone()).collect::<Vec<_>>(), [0..23, 23..46, 46..69, 69..92]);
        // 23 targets need 33 days of 30 years; neighbours share 10 days
        assert_eq!(segs[0].slots, 0..33 * 30);
        assert_eq!(segs[1].slots, 23 * 30..56 * 30);
        assert_eq!(segs[3].slots, 69 * 30..102 * 30);
        for s in &segs {
            assert_eq!(s.plan.groups.len(), s.targets.len() + 10);
            for (i, t) in s.targets.clone().enumerate() {
                assert_eq!(dates(&s.plan, i), dates(&whole, t), "target {t}");
                assert_eq!(s.plan.targets[i].capacity, 330);
            }
        }
        assert_eq!(plan_segments(&whole, 1)[0].plan, whole);
        assert_eq!(plan_segments(&whole, 500).len(), 92);
    }

    #[test]
    fn a_short_last_segment_for_writers_that_make_days_from_neighbours() {
        let whole = plan(2001..=2003, 1..=366, 2);
        let segs = plan_segments_short_last(&whole, 16);
        let lens: Vec<usize> = segs.iter().map(|s| s.targets.len()).collect();
        assert_eq!(lens, [24; 15].into_iter().chain([6]).collect::<Vec<_>>());
        assert_eq!(segs.last().unwrap().targets, 360..366);
        // consecutive, every target once, each segment's plan the whole plan's
        assert!(segs.windows(2).all(|w| w[0].targets.end == w[1].targets.start));
        for s in &segs {
            for (i, t) in s.targets.clone().enumerate() {
                assert_eq!(dates(&s.plan, i), dates(&whole, t));
            }
        }
        assert_eq!(plan_segments_short_last(&whole, 1), plan_segments(&whole, 1));
        // two segments: 320 and 46 days; as many segments as targets: one each
        let two: Vec<usize> = plan_segments_short_last(&whole, 2).iter().map(|s| s.targets.len()).collect();
        assert_eq!(two, [320, 46]);
        let few = plan(2001..=2001, 10..=14, 1);
        let each: Vec<usize> = plan_segments_short_last(&few, 9).iter().map(|s| s.targets.len()).collect();
        assert_eq!(each, [1; 5]);
    }

    #[test]
    fn windows_crossing_the_year_take_the_slots_between() {
        // day 1 needs Dec 30/31 of the previous year, which sort last: the segment spans all
        let whole = plan(2001..=2003, 1..=3, 2);
        let segs = plan_segments(&whole, 3);
        assert_eq!(segs.len(), 3);
        for s in &segs {
            for (i, t) in s.targets.clone().enumerate() {
                assert_eq!(dates(&s.plan, i), dates(&whole, t));
            }
        }
        assert_eq!(segs[0].slots.end, whole.slots.len());
        let none = WindowSpec { years: 2001..=2001, doys: vec![], half_window: 2, calendar: Calendar::Ordinal };
        assert!(plan_segments(&WindowPlan::build(&none, |_| true), 4).is_empty());
    }
}
