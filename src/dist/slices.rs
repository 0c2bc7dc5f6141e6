//! The decomposition: which target days each rank computes, and what that costs in reading.
//!
//! Ranks own contiguous, balanced slices of the target days (the jobs' one split,
//! [`super::split`]), so a rank's windows overlap and it reads each of its input files once. A
//! rank reads the files of its own days plus a halo of `h` days on each side, which its
//! neighbours read too: [`halo_table`] measures that overhead for a job. Pure functions only,
//! so the planner is tested without MPI.

use super::split::share;
use crate::window::WindowSpec;

/// The job `rank` computes: the same years, window and calendar, its slice of the target days.
pub fn rank_spec(spec: &WindowSpec, n_ranks: usize, rank: usize) -> WindowSpec {
    WindowSpec { doys: spec.doys[share(spec.doys.len(), n_ranks, rank)].to_vec(), ..spec.clone() }
}

/// The read cost of running `spec` on some number of ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloRow {
    pub ranks: usize,
    /// Ranks with at least one target day.
    pub busy: usize,
    /// Distinct input files the job needs (what one rank reads).
    pub distinct_files: usize,
    /// Files read summed over ranks (halo files are read by two or more ranks).
    pub files_read: usize,
    /// Most files any one rank reads.
    pub max_rank_files: usize,
    /// Most target days any one rank computes.
    pub max_rank_days: usize,
}

impl HaloRow {
    /// Extra reading over a single rank, in percent.
    pub fn overhead_percent(&self) -> f64 {
        100.0 * (self.files_read as f64 / self.distinct_files.max(1) as f64 - 1.0)
    }
}

/// The read cost of `spec` for each of `rank_counts`.
pub fn halo_table(spec: &WindowSpec, rank_counts: impl IntoIterator<Item = usize>) -> Vec<HaloRow> {
    let distinct_files = spec.required_dates().len();
    rank_counts
        .into_iter()
        .map(|ranks| {
            let per_rank: Vec<(usize, usize)> = (0..ranks)
                .map(|r| {
                    let s = rank_spec(spec, ranks, r);
                    (s.doys.len(), if s.doys.is_empty() { 0 } else { s.required_dates().len() })
                })
                .collect();
            HaloRow {
                ranks,
                busy: per_rank.iter().filter(|(d, _)| *d > 0).count(),
                distinct_files,
                files_read: per_rank.iter().map(|(_, f)| f).sum(),
                max_rank_files: per_rank.iter().map(|(_, f)| *f).max().unwrap_or(0),
                max_rank_days: per_rank.iter().map(|(d, _)| *d).max().unwrap_or(0),
            }
        })
        .collect()
}

/// [`halo_table`] as a markdown table.
pub fn halo_markdown(rows: &[HaloRow]) -> String {
    let mut out = String::from(
        "| ranks | days per rank (max) | files per rank (max) | files read (all ranks) | overhead vs 1 rank | \
         read speedup bound |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} % | {:.2} |\n",
            r.ranks,
            r.max_rank_days,
            r.max_rank_files,
            r.files_read,
            r.overhead_percent(),
            r.distinct_files as f64 / r.max_rank_files.max(1) as f64
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;

    fn reference() -> WindowSpec {
        WindowSpec { years: 1991..=2020, doys: (152..=243).collect(), half_window: 5, calendar: Calendar::Ordinal }
    }

    #[test]
    fn rank_specs_partition_the_target_days() {
        let spec = reference();
        for ranks in [1, 3, 8, 100] {
            let joined: Vec<u16> = (0..ranks).flat_map(|r| rank_spec(&spec, ranks, r).doys).collect();
            assert_eq!(joined, spec.doys);
        }
    }

    #[test]
    fn halo_overhead_matches_the_window_arithmetic() {
        // The reference job's windows stay inside each year, so a rank with d days reads
        // (d + 2h) days of each year: the sum over k busy ranks is (92 + 2hk) * 30.
        let spec = reference();
        let rows = halo_table(&spec, 1..=16);
        for row in &rows {
            assert_eq!(row.distinct_files, (92 + 10) * 30);
            assert_eq!(row.busy, row.ranks);
            assert_eq!(row.files_read, (92 + 10 * row.ranks) * 30, "{row:?}");
            assert_eq!(row.max_rank_days, 92usize.div_ceil(row.ranks));
            assert_eq!(row.max_rank_files, (row.max_rank_days + 10) * 30);
        }
        assert_eq!(rows[0].overhead_percent(), 0.0);
        // more ranks than days: the idle ranks read nothing
        let small = WindowSpec { doys: vec![100, 101, 102], ..spec };
        let row = &halo_table(&small, [5])[0];
        assert_eq!((row.busy, row.files_read, row.max_rank_days), (3, (3 * 11) * 30, 1));
        assert!(halo_markdown(&rows).lines().count() == 18);
    }
}
