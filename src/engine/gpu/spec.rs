//! Launch constants compiled into a kernel. A backend that compiles the kernel at run time
//! (CUDA, through NVRTC) builds it for the launches it will serve: the block size, the ring's
//! geometry, the percentile count, the pool's row stride and, where every group has the same
//! number of consecutive pool rows and every target the same number of groups, those numbers
//! become `-DSC_K_<NAME>=<value>` definitions, so strides, loop bounds and the padding of short
//! groups fold into the machine code. A backend that compiles ahead of time (HIP) runs the
//! generic kernel, which reads the same values from its arguments; the kernel traps if it is
//! launched with other values than it was compiled for. Pure and unit-tested.

use super::schedule::{Batch, GroupTables};
use super::LaunchPlan;
use crate::window::WindowPlan;

/// Most rows a group may have to be staged from registers (`SC_SORT_MAX` in the kernel).
const SORT_MAX: usize = 32;

/// A kernel instantiation and the launch constants it is compiled with (none: the generic one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KernelSpec {
    /// Entry point, e.g. `sstclim_clim_f32_l11`.
    pub name: String,
    /// `(NAME, value)` pairs, compiled in as `-DSC_K_<NAME>=<value>`, in a fixed order.
    pub consts: Vec<(&'static str, i64)>,
}

impl KernelSpec {
    /// The generic kernel `name`.
    pub fn generic(name: &str) -> KernelSpec {
        KernelSpec { name: name.to_string(), consts: Vec::new() }
    }

    /// The kernel of launch plan `lp` specialised for its launches over `n_cells` cells of a
    /// pool whose rows lie `pool_stride` samples apart (the same in every launch), starting
    /// searches from the previous day's value where `hints`.
    pub fn for_launches(
        lp: &LaunchPlan,
        plan: &WindowPlan,
        tables: &[GroupTables],
        fractions: &[f64],
        pool_stride: usize,
        hints: bool,
    ) -> KernelSpec {
        let mut consts = vec![
            ("BC", lp.block as i64),
            ("ROWS", lp.rows as i64),
            ("RING", lp.ring as i64),
            ("NPCT", fractions.len() as i64),
            ("RING_GLOBAL", i64::from(!lp.ring_in_shared)),
            ("HINTS", i64::from(hints)),
            ("POOL_STRIDE", pool_stride as i64),
        ];
        if let Some(len) = uniform_group_len(&lp.batches, tables) {
            consts.push(("GLEN", len as i64));
            if !lp.ring_in_shared && !fractions.is_empty() {
                let (lo, hi) = hot_rows(fractions, len, lp.rows);
                consts.extend([("HOT_LO", lo as i64), ("HOT_HI", hi as i64)]);
            }
        }
        if !plan.targets.is_empty() && plan.targets.iter().all(|t| t.groups.len() == lp.maxl) {
            consts.push(("NL", lp.maxl as i64));
        }
        KernelSpec { name: lp.kernel.clone(), consts }
    }

    /// Value of launch constant `name`, if compiled in.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.consts.iter().find(|(k, _)| *k == name).map(|&(_, v)| v)
    }

    /// The preprocessor definitions that compile it.
    pub fn defines(&self) -> Vec<String> {
        self.consts.iter().map(|(k, v)| format!("SC_K_{k}={v}")).collect()
    }

    /// A name for caches and logs: the entry point and its constants.
    pub fn key(&self) -> String {
        let mut key = self.name.clone();
        for (k, v) in &self.consts {
            key.push_str(&format!(" {k}={v}"));
        }
        key
    }
}

/// Rows of the ring a search of percentiles `fractions` reads in full groups of `len` samples
/// (`rows` rows a slot with the sentinels): the percentiles' rows, `HOT_MARGIN` either side.
/// Only a hint for the caches: a search may read any row.
fn hot_rows(fractions: &[f64], len: usize, rows: usize) -> (usize, usize) {
    let row = |p: f64| (p * len as f64).round() as usize + 1;
    let lo = fractions.iter().map(|&p| row(p)).min().unwrap_or(0).saturating_sub(HOT_MARGIN);
    let hi = fractions.iter().map(|&p| row(p)).max().unwrap_or(rows) + HOT_MARGIN;
    (lo, hi.min(rows - 1))
}

/// Rows around a percentile's row that count as read by the searches (a walk moves a few rows a
/// day).
const HOT_MARGIN: usize = 4;

/// The length every group staged by `batches` has, where they all have the same (1 to
/// `SORT_MAX` rows) and each group's rows are consecutive in the pool.
fn uniform_group_len(batches: &[Batch], tables: &[GroupTables]) -> Option<usize> {
    let mut len = None;
    for (batch, t) in batches.iter().zip(tables) {
        for pair in batch.loads.chunks(2) {
            let g = pair[0] as usize;
            let n = (t.off[g + 1] - t.off[g]) as usize;
            if t.first[g] < 0 || n == 0 || n > SORT_MAX || len.is_some_and(|l| l != n) {
                return None;
            }
            len = Some(n);
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::engine::gpu::launch::tests::h200;
    use crate::engine::gpu::{plan_launch, GpuOptions};
    use crate::stats::percentile::Method;
    use crate::stats::StatSpec;
    use crate::window::WindowSpec;

    /// The window plan of `years` x target days 152..=243 with day `missing` absent in every year.
    fn plan_of(years: std::ops::RangeInclusive<i32>, missing: u16) -> WindowPlan {
        let spec = WindowSpec { years, doys: (152..=243).collect(), half_window: 5, calendar: Calendar::Ordinal };
        WindowPlan::build(&spec, |d| d.ordinal() != missing)
    }

    fn spec_of(plan: &WindowPlan, pcts: &[&str]) -> KernelSpec {
        let stats = StatSpec {
            percentiles: pcts.iter().map(|p| p.parse().unwrap()).collect(),
            method: Method::new(5).unwrap(),
            min_samples: 1,
        };
        let lp = plan_launch::<f32>(&h200(), &GpuOptions::default(), plan, &stats, 10_000, 1 << 34, true).unwrap();
        let tables: Vec<_> = lp.batches.iter().map(|b| b.group_tables(plan)).collect();
        let fractions: Vec<f64> = stats.percentiles.iter().map(|p| p.fraction()).collect();
        KernelSpec::for_launches(&lp, plan, &tables, &fractions, 10_000, true)
    }

    #[test]
    fn reference_job_compiles_every_constant() {
        let plan = plan_of(1991..=2020, 0);
        let spec = spec_of(&plan, &["90"]);
        assert_eq!(spec.name, "sstclim_clim_f32_l11");
        let get = |k: &str| spec.get(k);
        assert_eq!(get("GLEN"), Some(30));
        assert_eq!(get("NL"), Some(11));
        assert_eq!(get("NPCT"), Some(1));
        assert_eq!(get("POOL_STRIDE"), Some(10_000));
        assert_eq!(get("RING_GLOBAL"), Some(1));
        // P90 of 30 samples lies at row 28 (row 0 is a sentinel): rows 24-31 are read
        assert_eq!((get("HOT_LO"), get("HOT_HI")), (Some(24), Some(31)));
        assert!(spec.defines().contains(&"SC_K_BC=64".to_string()), "{spec:?}");
        assert!(spec.key().starts_with("sstclim_clim_f32_l11 BC=64"), "{}", spec.key());
    }

    #[test]
    fn uneven_groups_and_windows_stay_generic() {
        // a day missing in every year shortens the windows around it: not every target has 11
        // groups; the groups still have 30 consecutive rows
        let plan = plan_of(1991..=2020, 200);
        let spec = spec_of(&plan, &["10", "90"]);
        assert!(spec.consts.iter().all(|(k, _)| *k != "NL"), "{spec:?}");
        assert!(spec.consts.contains(&("GLEN", 30)), "{spec:?}");
        assert!(spec.consts.contains(&("NPCT", 2)), "{spec:?}");
        // more than 32 years: groups are staged from the ring, not from registers
        let plan = plan_of(1981..=2020, 0);
        let spec = spec_of(&plan, &["90"]);
        assert!(spec.consts.iter().all(|(k, _)| *k != "GLEN"), "{spec:?}");
        assert_eq!(KernelSpec::generic("k").key(), "k");
    }
}
