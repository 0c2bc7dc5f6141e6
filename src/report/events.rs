//! What `sstclim events` tells its user at the end, as `run` does: each stage's busy time
//! (the climatology of `--baseline`, read, detect, write) and the wall time in parts that add
//! up to it, in a table and in `--timing-json`.
//!
//! Why its own report: the events job has no segments, devices or rates, but its stages
//! overlap (the next band is read while one is detected and written), so busy times alone
//! add up to more than the wall time; the wall time is cut as `run`'s is ([`WallShares`]).

use std::path::Path;

use serde::Serialize;

use super::shares::{tenths_of_percent, WallShares};

/// Busy seconds of each stage (stages that ran at once count in each).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct EventsStages {
    /// Computing the climatology of `--baseline` (0 with `--climatology`).
    pub climatology: f64,
    pub read: f64,
    pub detect: f64,
    /// The summaries band by band, the catalogue at the end, and the MPI ranks' parts joined
    /// and the outputs published.
    pub write: f64,
    /// Reading while detecting or writing.
    pub overlapped: f64,
}

/// The report of one events job (rank 0's stages under MPI).
#[derive(Clone, Debug, Serialize)]
pub struct EventsReport {
    pub command: &'static str,
    pub wall_seconds: f64,
    pub stage_seconds: EventsStages,
    /// The wall time in parts that add up to it: `climatology`, `read`, `detect` and `write`
    /// alone, the stages `overlapped` (by the stages joined with `+`), and `other` (opening and
    /// checking the inputs, allocation, waits).
    pub wall_shares: WallShares,
    pub events: usize,
    pub cells: usize,
    pub bands: usize,
    pub files_read: usize,
    pub peak_rss_bytes: u64,
}

/// The report's stage names for the run report's span groups.
fn stage_name(group: &str) -> String {
    group.replace("read/decode", "read").replace("compute", "detect")
}

impl EventsReport {
    /// The wall time `wall` cut by `spans` ((stage, start, end): `read`, `compute` for
    /// detection, `write`; seconds since the events job started, `climatology` seconds after
    /// the whole job started).
    pub fn wall_shares(spans: &[(String, f64, f64)], climatology: f64, wall: f64) -> WallShares {
        let events_wall = (wall - climatology).max(0.0);
        let cut = WallShares::from_spans(spans.iter().map(|(s, a, b)| (s.as_str(), *a, *b)), events_wall);
        let mut shares = WallShares { other: cut.other, ..WallShares::default() };
        shares.alone = cut.alone.into_iter().map(|(k, v)| (stage_name(&k), v)).collect();
        shares.overlapped = cut.overlapped.into_iter().map(|(k, v)| (stage_name(&k), v)).collect();
        if climatology > 0.0 {
            shares.alone.insert("climatology".into(), climatology);
        }
        shares
    }

    /// The table printed at the end: each stage's busy time and its part of the wall time
    /// (the parts add up to 100 %).
    pub fn table(&self) -> String {
        let (s, w) = (&self.stage_seconds, &self.wall_shares);
        let alone = |g: &str| w.alone.get(g).copied().unwrap_or(0.0);
        let mut rows: Vec<(&str, Option<f64>, f64, String)> = Vec::new();
        if s.climatology > 0.0 {
            rows.push(("climatology", Some(s.climatology), alone("climatology"), String::new()));
        }
        rows.push(("read", Some(s.read), alone("read"), "alone".into()));
        rows.push(("detect", Some(s.detect), alone("detect"), "alone".into()));
        rows.push(("write", Some(s.write), alone("write"), "alone".into()));
        let parts: Vec<String> = w.overlapped.iter().map(|(k, v)| format!("{k} {v:.2} s")).collect();
        // (+ 0.0: an empty sum is -0.0)
        rows.push(("overlapped", Some(s.overlapped), w.overlapped_seconds() + 0.0, parts.join(", ")));
        rows.push(("other", None, w.other, "opening and checking the inputs, allocation, waits".into()));
        let walls: Vec<f64> = rows.iter().map(|r| r.2).collect();
        let tenths = tenths_of_percent(&walls);
        let mut out = format!("{:<16}{:>9}{:>9}{:>8}\n", "stage", "busy s", "wall s", "share");
        for ((name, busy, wall, note), t) in rows.into_iter().zip(tenths) {
            let busy = busy.map_or(String::new(), |b| format!("{b:.3}"));
            let note = if note.is_empty() { String::new() } else { format!("  {note}") };
            let line = format!("{name:<16}{busy:>9}{wall:>9.3}{:>8}{note}", format!("{:.1}%", t as f64 / 10.0));
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push_str(&format!("{:<16}{:>9}{:>9.3}{:>8}\n", "total (wall)", "", w.total(), "100.0%"));
        out
    }

    /// `--timing-json`: the report and the `SSTCLIM_*` variables the job ran under.
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        super::timing::write_report_json(self, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read 0-4 s and 6-8 s, detect 4-6 s and 8-9 s, write 6-7 s and 9-10 s, after a 5 s
    /// climatology, in a 16 s job: every stage alone, read and write overlapped 1 s, the parts
    /// adding up to the wall time.
    #[test]
    fn the_wall_time_is_cut_into_the_stages() {
        let spans: Vec<(String, f64, f64)> = [
            ("read", 0.0, 4.0),
            ("read", 6.0, 8.0),
            ("compute", 4.0, 6.0),
            ("compute", 8.0, 9.0),
            ("write", 6.0, 7.0),
            ("write", 9.0, 10.0),
        ]
        .iter()
        .map(|(s, a, b)| (s.to_string(), *a, *b))
        .collect();
        let w = EventsReport::wall_shares(&spans, 5.0, 16.0);
        assert_eq!(w.alone["climatology"], 5.0);
        assert_eq!(w.alone["read"], 5.0);
        assert_eq!(w.alone["detect"], 3.0);
        assert_eq!(w.alone["write"], 1.0);
        assert_eq!(w.overlapped["read+write"], 1.0);
        assert_eq!(w.other, 1.0);
        assert_eq!(w.total(), 16.0);
        let report = EventsReport {
            command: "events",
            wall_seconds: 16.0,
            stage_seconds: EventsStages { climatology: 5.0, read: 6.0, detect: 3.0, write: 2.0, overlapped: 1.0 },
            wall_shares: w,
            events: 1,
            cells: 1,
            bands: 2,
            files_read: 1,
            peak_rss_bytes: 0,
        };
        let table = report.table();
        let row = |name: &str| -> Vec<String> {
            let line = table.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}: {table}"));
            line[name.len()..].split_whitespace().map(String::from).collect()
        };
        // 1 s of 16: 6.2 or 6.3 %, as the rounding to 100.0 % falls
        let overlapped = row("overlapped");
        assert_eq!(overlapped[..2], ["1.000", "1.000"], "{table}");
        assert!(overlapped[2] == "6.2%" || overlapped[2] == "6.3%", "{table}");
        assert_eq!(overlapped[3..], ["read+write", "1.00", "s"], "{table}");
        assert_eq!(row("climatology"), ["5.000", "5.000", "31.3%"], "{table}");
        assert_eq!(row("total (wall)"), ["16.000", "100.0%"], "{table}");
    }
}
