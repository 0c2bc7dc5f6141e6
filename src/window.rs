//! The window plan: which input dates (pool slots) each target day's samples come from.
//!
//! The samples of target day `D` are the valid values at the dates
//! `anchor(y, D) + o` for every year `y` of the climatology and every offset `o` in
//! `-h..=h`. Dates outside the climatology period are handled by [`WindowEdges`]: dropped
//! (`clip`, the default), kept (`extend`: the input's dates before and after the years, as
//! marineHeatWaves' index windows over the whole series take them), or wrapped around the
//! period (`wrap`: the period read as a circular series, as CDO's `rm=c`).
//! For each offset, the dates over all years form a *group* (in year order); neighbouring
//! target days share most of their groups (day `D` at offset `+1` is day `D+1` at offset `0`),
//! so groups are stored once and targets refer to them by index. Engines exploit this sharing
//! (the CPU engine sorts each group once per cell; the GPU kernel stages shared groups once).
//!
//! The mean is defined on this structure, so that every engine can reproduce it bit for bit:
//! each group's valid values are summed in year order (float64, starting at 0.0), the group sums
//! are added in offset order, and the total is divided by the number of valid samples.

use std::collections::HashMap;
use std::ops::RangeInclusive;

use crate::calendar::{add_days_in, day_number_in, Calendar, CfCalendar, CfDate, Date};

/// The days a job asks for: years, target days, half window and calendar convention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    pub years: RangeInclusive<i32>,
    pub doys: Vec<u16>,
    pub half_window: u16,
    pub calendar: Calendar,
}

/// What a window does at the ends of the climatology period (`--window-edges`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowEdges {
    /// Only dates inside the climatology years: Jan 1 of the first year has no Dec 27-31.
    #[default]
    Clip,
    /// The input's dates before and after the years too, where the input has them
    /// (marineHeatWaves): past the input's first or last date the windows stop at the series'
    /// end; a side the input has only in part is a gap, its absent files missing.
    Extend,
    /// The years read as a circular series (CDO's `rm=c`): the day before Jan 1 of the first
    /// year is Dec 31 of the last.
    Wrap,
}

impl WindowEdges {
    /// The name used on the command line and in output metadata.
    pub fn name(self) -> &'static str {
        match self {
            WindowEdges::Clip => "clip",
            WindowEdges::Extend => "extend",
            WindowEdges::Wrap => "wrap",
        }
    }
}

/// One group of samples: the pool slots of one window offset, over all years, in year order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub slots: Vec<u32>,
}

/// One target day: its day of year and its groups in offset order (`-h` first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub doy: u16,
    pub groups: Vec<u32>,
    /// Number of samples if every value were valid (330 for the reference job).
    pub capacity: usize,
}

/// Slots, groups and targets of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowPlan {
    /// The date held by each pool slot, ordered by (day of year, year): the `[day][year]`
    /// order of the pool.
    pub slots: Vec<Date>,
    pub groups: Vec<Group>,
    pub targets: Vec<Target>,
}

impl WindowSpec {
    /// The dates of target day `doy`'s window in `year`, in offset order, with the period's
    /// ends handled as `edges` says.
    ///
    /// Window arithmetic runs on the day numbers of the input's calendar `cf`: a window is a
    /// run of consecutive days of that calendar (Feb 30 follows Feb 29 in `360_day`; Feb 28 is
    /// followed by Mar 1 in every `noleap` year).
    fn window_dates(
        &self,
        edges: WindowEdges,
        cf: CfCalendar,
        year: i32,
        doy: u16,
    ) -> impl Iterator<Item = (i64, Date)> + '_ {
        let h = i64::from(self.half_window);
        let anchor = self.calendar.anchor_in(cf, year, doy);
        let first = cf.day_number(CfDate { year: *self.years.start(), month: 1, day: 1 });
        let period = cf.day_number(CfDate { year: *self.years.end() + 1, month: 1, day: 1 }) - first;
        (-h..=h).filter_map(move |o| {
            let date = add_days_in(cf, anchor?, o);
            match edges {
                _ if self.years.contains(&date.year) => Some((o, date)),
                WindowEdges::Clip => None,
                WindowEdges::Extend => Some((o, date)),
                WindowEdges::Wrap => {
                    let n = first + (day_number_in(cf, date) - first).rem_euclid(period);
                    Some((o, Date::from(cf.date_of(n))))
                }
            }
        })
    }

    /// Every date some window needs (windows clipped to the period), sorted by date.
    pub fn required_dates(&self) -> Vec<Date> {
        self.required_dates_with(WindowEdges::Clip)
    }

    /// Every date some window needs with the period's ends handled as `edges` says, sorted.
    pub fn required_dates_with(&self, edges: WindowEdges) -> Vec<Date> {
        self.required_dates_in(edges, CfCalendar::ProlepticGregorian)
    }

    /// [`WindowSpec::required_dates_with`] in the input's calendar `cf`.
    pub fn required_dates_in(&self, edges: WindowEdges, cf: CfCalendar) -> Vec<Date> {
        let mut dates: Vec<Date> = self
            .years
            .clone()
            .flat_map(|y| self.doys.iter().flat_map(move |&d| self.window_dates(edges, cf, y, d).map(|(_, date)| date)))
            .collect();
        dates.sort();
        dates.dedup();
        dates
    }
}

impl WindowPlan {
    /// The plan for `spec` with windows clipped to the period, using only the dates for which
    /// `available` is true (the others are missing input files, skipped under
    /// `--allow-missing`).
    pub fn build(spec: &WindowSpec, available: impl Fn(Date) -> bool) -> WindowPlan {
        WindowPlan::build_with(spec, WindowEdges::Clip, available)
    }

    /// [`WindowPlan::build`] with the period's ends handled as `edges` says.
    pub fn build_with(spec: &WindowSpec, edges: WindowEdges, available: impl Fn(Date) -> bool) -> WindowPlan {
        WindowPlan::build_in(spec, edges, CfCalendar::ProlepticGregorian, available)
    }

    /// [`WindowPlan::build_with`] in the input's calendar `cf`.
    pub fn build_in(
        spec: &WindowSpec,
        edges: WindowEdges,
        cf: CfCalendar,
        available: impl Fn(Date) -> bool,
    ) -> WindowPlan {
        let mut slots: Vec<Date> = spec.required_dates_in(edges, cf).into_iter().filter(|d| available(*d)).collect();
        slots.sort_by_key(|d| (cf.day_of_year((*d).into()), d.year));
        let slot_of: HashMap<Date, u32> = slots.iter().enumerate().map(|(i, d)| (*d, i as u32)).collect();

        let mut groups: Vec<Group> = Vec::new();
        let mut group_of: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut targets = Vec::with_capacity(spec.doys.len());
        for &doy in &spec.doys {
            let h = i64::from(spec.half_window);
            let mut per_offset: Vec<Vec<u32>> = vec![Vec::new(); (2 * h + 1) as usize];
            for year in spec.years.clone() {
                for (o, date) in spec.window_dates(edges, cf, year, doy) {
                    if let Some(&slot) = slot_of.get(&date) {
                        per_offset[(o + h) as usize].push(slot);
                    }
                }
            }
            let mut target = Target { doy, groups: Vec::new(), capacity: 0 };
            for group_slots in per_offset.into_iter().filter(|g| !g.is_empty()) {
                target.capacity += group_slots.len();
                let next = groups.len() as u32;
                let id = *group_of.entry(group_slots.clone()).or_insert_with(|| {
                    groups.push(Group { slots: group_slots });
                    next
                });
                target.groups.push(id);
            }
            targets.push(target);
        }
        WindowPlan { slots, groups, targets }
    }

    /// The largest number of samples any target can have.
    pub fn max_capacity(&self) -> usize {
        self.targets.iter().map(|t| t.capacity).max().unwrap_or(0)
    }

    /// Start of each group's values in a per-cell scratch array holding all groups back to back
    /// (one more entry at the end: the total length).
    pub fn group_offsets(&self) -> Vec<usize> {
        let mut offsets = Vec::with_capacity(self.groups.len() + 1);
        let mut at = 0;
        for g in &self.groups {
            offsets.push(at);
            at += g.slots.len();
        }
        offsets.push(at);
        offsets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(years: RangeInclusive<i32>, doys: RangeInclusive<u16>, h: u16, calendar: Calendar) -> WindowSpec {
        WindowSpec { years, doys: doys.collect(), half_window: h, calendar }
    }

    #[test]
    fn reference_job_needs_3060_files_and_330_samples() {
        let s = spec(1991..=2020, 152..=243, 5, Calendar::Ordinal);
        let dates = s.required_dates();
        assert_eq!(dates.len(), 3060);
        assert!(dates.iter().all(|d| (147..=248).contains(&d.ordinal())));
        let plan = WindowPlan::build(&s, |_| true);
        assert_eq!(plan.slots.len(), 3060);
        // one group per ordinal day 147..=248, shared by up to 11 targets
        assert_eq!(plan.groups.len(), 102);
        assert!(plan.targets.iter().all(|t| t.capacity == 330 && t.groups.len() == 11));
        // day 152 at offset -5 is day 147 in every year, in year order
        let g = &plan.groups[plan.targets[0].groups[0] as usize];
        let dates: Vec<Date> = g.slots.iter().map(|&s| plan.slots[s as usize]).collect();
        assert_eq!(dates.len(), 30);
        assert!(dates.iter().all(|d| d.ordinal() == 147));
        assert!(dates.windows(2).all(|w| w[0].year < w[1].year));
        // neighbouring targets share ten groups
        assert_eq!(plan.targets[0].groups[1..], plan.targets[1].groups[..10]);
        // slots are in [day][year] order
        assert!(plan.slots.windows(2).all(|w| (w[0].ordinal(), w[0].year) < (w[1].ordinal(), w[1].year)));
    }

    #[test]
    fn windows_cross_year_boundaries_but_not_the_period() {
        let s = spec(2001..=2003, 1..=1, 2, Calendar::Ordinal);
        let plan = WindowPlan::build(&s, |_| true);
        // 2001-01-01 has no Dec 30/31 2000 (outside the period); 2002 and 2003 do
        assert_eq!(plan.targets[0].capacity, 3 + 3 + 3 + 2 + 2);
        let first = &plan.groups[plan.targets[0].groups[0] as usize];
        let dates: Vec<String> = first.slots.iter().map(|&s| plan.slots[s as usize].to_string()).collect();
        assert_eq!(dates, ["2001-12-30", "2002-12-30"]);
    }

    #[test]
    fn hobday366_day60_only_in_leap_years() {
        let s = spec(2019..=2020, 60..=61, 0, Calendar::Hobday366);
        let plan = WindowPlan::build(&s, |_| true);
        assert_eq!(plan.targets[0].capacity, 1); // 2020-02-29 only
        assert_eq!(plan.targets[1].capacity, 2); // Mar 1 in both years
        let s = spec(2019..=2020, 62..=62, 2, Calendar::Hobday366);
        let plan = WindowPlan::build(&s, |_| true);
        let dates: Vec<Vec<String>> = plan.targets[0]
            .groups
            .iter()
            .map(|&g| plan.groups[g as usize].slots.iter().map(|&s| plan.slots[s as usize].to_string()).collect())
            .collect();
        assert_eq!(
            dates,
            [
                ["2019-02-28", "2020-02-29"],
                ["2019-03-01", "2020-03-01"],
                ["2019-03-02", "2020-03-02"],
                ["2019-03-03", "2020-03-03"],
                ["2019-03-04", "2020-03-04"],
            ]
        );
    }

    /// The dates of each group of target 0, as text.
    fn group_dates(plan: &WindowPlan) -> Vec<Vec<String>> {
        let t = &plan.targets[0];
        t.groups
            .iter()
            .map(|&g| plan.groups[g as usize].slots.iter().map(|&s| plan.slots[s as usize].to_string()).collect())
            .collect()
    }

    #[test]
    fn edges_extend_past_the_period_or_wrap_around_it() {
        let s = spec(2001..=2003, 1..=1, 2, Calendar::Ordinal);
        let extend = WindowPlan::build_with(&s, WindowEdges::Extend, |_| true);
        assert_eq!(extend.targets[0].capacity, 15);
        assert_eq!(group_dates(&extend)[0], ["2000-12-30", "2001-12-30", "2002-12-30"]);
        assert!(s.required_dates_with(WindowEdges::Extend).contains(&Date::new(2000, 12, 31).unwrap()));
        let wrap = WindowPlan::build_with(&s, WindowEdges::Wrap, |_| true);
        assert_eq!(wrap.targets[0].capacity, 15);
        // the day before 2001-01-01 is the period's last day; groups stay in year order of the
        // window's anchor
        assert_eq!(group_dates(&wrap)[0], ["2003-12-30", "2001-12-30", "2002-12-30"]);
        assert_eq!(group_dates(&wrap)[1], ["2003-12-31", "2001-12-31", "2002-12-31"]);
        assert!(s.required_dates_with(WindowEdges::Wrap).iter().all(|d| (2001..=2003).contains(&d.year)));
        // the last day of the period wraps to the first
        let s = spec(2001..=2003, 365..=365, 1, Calendar::Ordinal);
        let wrap = WindowPlan::build_with(&s, WindowEdges::Wrap, |_| true);
        assert_eq!(group_dates(&wrap)[2], ["2002-01-01", "2003-01-01", "2001-01-01"]);
        // a missing date outside the period shrinks an extended window like any other
        let s = spec(2001..=2003, 1..=1, 2, Calendar::Ordinal);
        let gone = Date::new(2000, 12, 31).unwrap();
        let extend = WindowPlan::build_with(&s, WindowEdges::Extend, |d| d != gone);
        assert_eq!(extend.targets[0].capacity, 14);
    }

    #[test]
    fn missing_dates_shrink_groups_and_capacity() {
        let s = spec(1991..=1993, 10..=10, 1, Calendar::Ordinal);
        let missing = Date::from_ordinal(1992, 10).unwrap();
        let plan = WindowPlan::build(&s, |d| d != missing);
        assert_eq!(plan.slots.len(), 8);
        assert_eq!(plan.targets[0].capacity, 8);
        let offsets = plan.group_offsets();
        assert_eq!(offsets, [0, 3, 5, 8]);
    }

    fn group_dates_in(plan: &WindowPlan, t: usize) -> Vec<Vec<String>> {
        plan.targets[t]
            .groups
            .iter()
            .map(|&g| plan.groups[g as usize].slots.iter().map(|&s| plan.slots[s as usize].to_string()).collect())
            .collect()
    }

    /// Windows are runs of the input calendar's days: noleap's across year ends and past
    /// Feb 28, 360_day's through Feb 29 and 30, all_leap's through every Feb 29.
    #[test]
    fn windows_run_over_the_inputs_calendar() {
        // noleap: day 1 of 2002 with h = 2 reaches back into 2001; day 59 (Feb 28) is followed
        // by Mar 1 in the leap year 2004 too
        let s = spec(2001..=2004, 1..=1, 2, Calendar::Hobday366);
        let plan = WindowPlan::build_in(&s, WindowEdges::Clip, CfCalendar::NoLeap, |_| true);
        assert_eq!(group_dates_in(&plan, 0)[0], ["2001-12-30", "2002-12-30", "2003-12-30"]);
        assert_eq!(plan.targets[0].capacity, 3 + 3 + 4 + 4 + 4);
        let s = spec(2004..=2004, 59..=60, 1, Calendar::Hobday366);
        let plan = WindowPlan::build_in(&s, WindowEdges::Clip, CfCalendar::NoLeap, |_| true);
        assert_eq!(group_dates_in(&plan, 0), [["2004-02-27"], ["2004-02-28"], ["2004-03-01"]]);
        assert_eq!(group_dates_in(&plan, 1), [["2004-02-28"], ["2004-03-01"], ["2004-03-02"]]);
        assert_eq!(plan.slots.len(), 4);
        // 360_day: Feb 30 exists, Mar 31 does not; wrap joins Dec 30 of the last year to
        // Jan 1 of the first
        let s = spec(2001..=2002, 60..=61, 1, Calendar::Ordinal);
        let plan = WindowPlan::build_in(&s, WindowEdges::Clip, CfCalendar::Day360, |_| true);
        assert_eq!(
            group_dates_in(&plan, 0),
            [["2001-02-29", "2002-02-29"], ["2001-02-30", "2002-02-30"], ["2001-03-01", "2002-03-01"]]
        );
        let s = spec(2001..=2002, 360..=360, 1, Calendar::Ordinal);
        let wrap = WindowPlan::build_in(&s, WindowEdges::Wrap, CfCalendar::Day360, |_| true);
        assert_eq!(group_dates_in(&wrap, 0)[2], ["2002-01-01", "2001-01-01"]);
        let need = s.required_dates_in(WindowEdges::Extend, CfCalendar::Day360);
        assert_eq!(need.last().map(|d| d.to_string()), Some("2003-01-01".into()));
        // all_leap: every year has Feb 29 (day 60) and a day 366
        let s = spec(2001..=2003, 60..=60, 0, Calendar::Hobday366);
        let plan = WindowPlan::build_in(&s, WindowEdges::Clip, CfCalendar::AllLeap, |_| true);
        assert_eq!(group_dates_in(&plan, 0), [["2001-02-29", "2002-02-29", "2003-02-29"]]);
        let s = spec(2001..=2002, 366..=366, 1, Calendar::Ordinal);
        let plan = WindowPlan::build_in(&s, WindowEdges::Clip, CfCalendar::AllLeap, |_| true);
        assert_eq!(group_dates_in(&plan, 0)[2], ["2002-01-01"]);
        // slots stay in [day][year] order of the calendar's days of year
        assert!(plan.slots.windows(2).all(|w| {
            let k = |d: Date| (CfCalendar::AllLeap.day_of_year(d.into()), d.year);
            k(w[0]) < k(w[1])
        }));
    }
}
