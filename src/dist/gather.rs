//! The job's timing: every rank's stage times, gathered to rank 0, printed as one table (one
//! row per rank, then min/median/max across the busy ranks and the job's wall time) and
//! written as JSON with `--timing-json`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::binding::Binding;
use crate::report::timing::RunReport;

/// The stages as the per-rank report names them (`RunReport::stage_seconds`), with table headings.
pub const STAGES: [(&str, &str); 8] = [
    ("discover", "discover"),
    ("read", "read/decode"),
    ("h2d", "h2d"),
    ("kernel", "kernel"),
    ("d2h", "d2h"),
    ("compute", "compute"),
    ("verify", "verify"),
    ("write", "write"),
];

/// What one rank did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankTiming {
    pub rank: usize,
    pub binding: Binding,
    pub device_ordinal: usize,
    /// First and last target day of the slice (none for an idle rank).
    pub doys: Option<(u16, u16)>,
    pub target_days: usize,
    pub files_read: usize,
    pub file_reads: usize,
    pub files_missing: usize,
    pub bytes_read: u64,
    pub outputs: usize,
    /// Seconds per stage, keyed as in [`STAGES`]; validation counts as `discover`, moving the
    /// rank's files into place as `write`.
    pub stage_seconds: serde_json::Map<String, serde_json::Value>,
    /// From the start of the job to the rank's last agreement.
    pub wall_seconds: f64,
    pub peak_rss_bytes: u64,
    /// The rank's own run report (none for an idle rank).
    pub report: Option<serde_json::Value>,
}

impl RankTiming {
    pub fn stage(&self, key: &str) -> f64 {
        self.stage_seconds.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0)
    }

    /// A rank's timing from its run report (or an idle rank's, from `None`), adding `extra`
    /// seconds per stage spent outside the run (validation, commit).
    pub fn new(
        rank: usize,
        binding: &Binding,
        doys: &[u16],
        report: Option<&RunReport>,
        extra: &[(&str, f64)],
    ) -> RankTiming {
        let mut stage_seconds = serde_json::Map::new();
        let from_report = report.and_then(|r| serde_json::to_value(&r.stage_seconds).ok());
        for (key, _) in STAGES {
            let base = from_report.as_ref().and_then(|v| v.get(key)).and_then(|v| v.as_f64()).unwrap_or(0.0);
            let more: f64 = extra.iter().filter(|(k, _)| *k == key).map(|(_, s)| s).sum();
            stage_seconds.insert(key.to_string(), (base + more).into());
        }
        RankTiming {
            rank,
            binding: binding.clone(),
            device_ordinal: binding.device_ordinal(),
            doys: doys.first().zip(doys.last()).map(|(a, b)| (*a, *b)),
            target_days: doys.len(),
            files_read: report.map_or(0, |r| r.files_read),
            file_reads: report.map_or(0, |r| r.file_reads),
            files_missing: report.map_or(0, |r| r.files_missing),
            bytes_read: report.map_or(0, |r| r.bytes_read),
            outputs: report.map_or(0, |r| r.outputs),
            stage_seconds,
            wall_seconds: 0.0,
            peak_rss_bytes: crate::report::timing::peak_rss_bytes(),
            report: report.and_then(|r| serde_json::to_value(r).ok()),
        }
    }
}

/// Minimum, median and maximum of some values (the median of an even count is the mean of the
/// middle two).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.to_vec();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return Spread { min: 0.0, median: 0.0, max: 0.0 };
        }
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Spread { min: v[0], median, max: v[n - 1] }
    }
}

/// The whole job's timing, as rank 0 writes it.
#[derive(Clone, Debug, Serialize)]
pub struct JobTiming {
    pub sstclim_version: &'static str,
    pub command: String,
    pub ranks: usize,
    pub busy_ranks: usize,
    pub layout: String,
    pub target_days: usize,
    pub outputs: usize,
    pub files_read_total: usize,
    pub distinct_files: usize,
    pub bytes_read_total: u64,
    /// Rank 0's wall time from start to the last agreement (outputs in place).
    pub total_wall_seconds: f64,
    /// Per stage (and `wall`): spread across the busy ranks.
    pub stages: serde_json::Map<String, serde_json::Value>,
    pub per_rank: Vec<RankTiming>,
}

impl JobTiming {
    pub fn new(
        command: String,
        layout: String,
        distinct_files: usize,
        outputs: usize,
        total_wall_seconds: f64,
        per_rank: Vec<RankTiming>,
    ) -> JobTiming {
        let busy: Vec<&RankTiming> = per_rank.iter().filter(|r| r.target_days > 0).collect();
        let mut stages = serde_json::Map::new();
        for (key, _) in STAGES {
            let spread = Spread::of(&busy.iter().map(|r| r.stage(key)).collect::<Vec<_>>());
            stages.insert(key.into(), serde_json::to_value(spread).expect("plain numbers"));
        }
        let wall = Spread::of(&busy.iter().map(|r| r.wall_seconds).collect::<Vec<_>>());
        stages.insert("wall".into(), serde_json::to_value(wall).expect("plain numbers"));
        JobTiming {
            sstclim_version: env!("CARGO_PKG_VERSION"),
            command,
            ranks: per_rank.len(),
            busy_ranks: busy.len(),
            layout,
            target_days: per_rank.iter().map(|r| r.target_days).sum(),
            outputs,
            files_read_total: per_rank.iter().map(|r| r.files_read).sum(),
            distinct_files,
            bytes_read_total: per_rank.iter().map(|r| r.bytes_read).sum(),
            total_wall_seconds,
            stages,
            per_rank,
        }
    }

    fn spread(&self, key: &str) -> Spread {
        let v = &self.stages[key];
        let f = |k: &str| v.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
        Spread { min: f("min"), median: f("median"), max: f("max") }
    }

    /// The table rank 0 prints: one row per rank, the spread across busy ranks, the wall time.
    pub fn table(&self) -> String {
        // stages that took no time anywhere (GPU stages on the CPU backend, verify) are left out
        let shown: Vec<(&str, &str)> =
            STAGES.iter().copied().filter(|(k, _)| self.per_rank.iter().any(|r| r.stage(k) > 0.0)).collect();
        let mut out = format!("{:<7}{:<14}{:>9}{:>7}{:>8}{:>8}", "rank", "host", "days", "files", "GB", "thr");
        for (_, head) in &shown {
            out.push_str(&format!("{head:>12}"));
        }
        out.push_str(&format!("{:>10}\n", "wall"));
        for r in &self.per_rank {
            let days = match r.doys {
                Some((a, b)) => format!("{a}-{b}"),
                None => "idle".into(),
            };
            let host: String = r.binding.host.chars().take(13).collect();
            out.push_str(&format!(
                "{:<7}{host:<14}{days:>9}{:>7}{:>8.2}{:>8}",
                r.rank,
                r.files_read,
                r.bytes_read as f64 / 1e9,
                r.binding.threads
            ));
            for (k, _) in &shown {
                out.push_str(&format!("{:>12.3}", r.stage(k)));
            }
            out.push_str(&format!("{:>10.3}\n", r.wall_seconds));
        }
        for (label, pick) in [("min", 0), ("median", 1), ("max", 2)] {
            let get = |s: Spread| [s.min, s.median, s.max][pick];
            out.push_str(&format!("{label:<7}{:<14}{:>9}{:>7}{:>8}{:>8}", "", "", "", "", ""));
            for (k, _) in &shown {
                out.push_str(&format!("{:>12.3}", get(self.spread(k))));
            }
            out.push_str(&format!("{:>10.3}\n", get(self.spread("wall"))));
        }
        out.push_str(&format!(
            "total wall {:.3} s on {} ranks ({} busy); {} files read by all ranks ({} distinct, {:+.1}% halo), {:.2} GB; {} output files\n",
            self.total_wall_seconds,
            self.ranks,
            self.busy_ranks,
            self.files_read_total,
            self.distinct_files,
            100.0 * (self.files_read_total as f64 / self.distinct_files.max(1) as f64 - 1.0),
            self.bytes_read_total as f64 / 1e9,
            self.outputs
        ));
        out
    }

    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        crate::report::timing::write_report_json(self, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(r: usize, days: usize, read: f64, wall: f64) -> RankTiming {
        let b =
            Binding { host: "n1".into(), node_rank: r, node_size: 3, visible_devices: None, cpus: vec![0], threads: 1 };
        let doys: Vec<u16> = (0..days as u16).map(|d| 100 + d).collect();
        let mut t = RankTiming::new(r, &b, &doys, None, &[("read", read), ("write", 0.5)]);
        t.wall_seconds = wall;
        t.files_read = 10 * days;
        t
    }

    #[test]
    fn spread_of_odd_even_and_empty() {
        assert_eq!(Spread::of(&[3.0, 1.0, 2.0]), Spread { min: 1.0, median: 2.0, max: 3.0 });
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 8.0]), Spread { min: 1.0, median: 3.0, max: 8.0 });
        assert_eq!(Spread::of(&[]), Spread { min: 0.0, median: 0.0, max: 0.0 });
    }

    #[test]
    fn job_timing_spreads_over_busy_ranks_only() {
        let ranks = vec![rank(0, 2, 1.0, 4.0), rank(1, 2, 3.0, 6.0), rank(2, 0, 0.0, 1.0)];
        let job = JobTiming::new("sstclim run".into(), "per-doy".into(), 30, 8, 6.5, ranks);
        assert_eq!((job.ranks, job.busy_ranks, job.files_read_total, job.target_days), (3, 2, 40, 4));
        assert_eq!(job.spread("read"), Spread { min: 1.0, median: 2.0, max: 3.0 });
        assert_eq!(job.spread("wall"), Spread { min: 4.0, median: 5.0, max: 6.0 });
        let table = job.table();
        assert!(table.contains("idle"), "{table}");
        assert!(table.contains("read/decode") && !table.contains("kernel"), "{table}");
        assert!(table.contains("total wall 6.500 s on 3 ranks (2 busy)"), "{table}");
        let median = table.lines().find(|l| l.starts_with("median")).unwrap();
        assert!(median.contains("2.000") && median.trim_end().ends_with("5.000"), "{median}");
        let json: serde_json::Value = serde_json::to_value(&job).unwrap();
        assert_eq!(json["stages"]["write"]["max"], 0.5);
        assert_eq!(json["per_rank"][1]["stage_seconds"]["read"], 3.0);
    }
}
