//! Where a run's wall time went, as parts that add up to the whole: the pipeline's stages
//! overlap (segment i is computed while segment i+1 is read and segment i-1 written), so their
//! busy times add up to more than the wall time. Here the timeline is cut at every span's
//! start and end, and each piece goes to the one stage that was running alone, to
//! "overlapped" where several ran at once (with which ones), or to "other" where none did
//! (allocation, engine start, waiting); start-up before the run and the device release and
//! publishing after it are parts of their own.

use std::collections::BTreeMap;

use serde::Serialize;

/// The groups of pipeline spans a run's time is shared among, in table order.
pub const GROUPS: [&str; 4] = ["read/decode", "compute", "verify", "write"];

/// The group of a span's stage (`None`: not a pipeline stage of its own, e.g. `alloc`).
pub fn group_of(stage: &str) -> Option<usize> {
    match stage {
        "read" | "locate" | "upload" | "wait-row" => Some(0),
        "compute" => Some(1),
        "verify" => Some(2),
        "write" | "smooth" | "create-outputs" | "sync-outputs" => Some(3),
        _ => None,
    }
}

/// A run's wall time cut into parts that add up to it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct WallShares {
    /// Seconds in which one group ran alone, by group name.
    pub alone: BTreeMap<String, f64>,
    /// Seconds in which several groups ran at once, by the groups joined with `+`
    /// (`read/decode+compute`).
    pub overlapped: BTreeMap<String, f64>,
    /// Seconds of the run in which no group ran (setup, allocation, engine start, waits).
    pub other: f64,
    pub startup: f64,
    pub device_release: f64,
    pub publish: f64,
}

impl WallShares {
    /// Cut `[0, wall]` by the `spans` (stage, start, end in seconds since the run started).
    pub fn from_spans<'a>(spans: impl IntoIterator<Item = (&'a str, f64, f64)>, wall: f64) -> WallShares {
        // every span's start (+1) and end (-1) for its group, in time order
        let mut events: Vec<(f64, usize, i32)> = Vec::new();
        for (stage, start, end) in spans {
            let Some(g) = group_of(stage) else { continue };
            let (a, b) = (start.clamp(0.0, wall), end.clamp(0.0, wall));
            if b > a {
                events.push((a, g, 1));
                events.push((b, g, -1));
            }
        }
        events.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.2.cmp(&y.2)));
        let mut active = [0i32; GROUPS.len()];
        let mut shares = WallShares::default();
        let mut last = 0.0;
        let take = |shares: &mut WallShares, active: &[i32; 4], from: f64, to: f64| {
            let dt = to - from;
            if dt <= 0.0 {
                return;
            }
            let running: Vec<&str> = (0..GROUPS.len()).filter(|&g| active[g] > 0).map(|g| GROUPS[g]).collect();
            match running.len() {
                0 => shares.other += dt,
                1 => *shares.alone.entry(running[0].into()).or_default() += dt,
                _ => *shares.overlapped.entry(running.join("+")).or_default() += dt,
            }
        };
        for (t, g, delta) in events {
            take(&mut shares, &active, last, t);
            active[g] += delta;
            last = t;
        }
        take(&mut shares, &active, last, wall);
        shares
    }

    /// The whole: the run, and the parts before and after it.
    pub fn total(&self) -> f64 {
        self.alone.values().sum::<f64>()
            + self.overlapped.values().sum::<f64>()
            + self.other
            + self.startup
            + self.device_release
            + self.publish
    }

    /// All overlapped seconds.
    pub fn overlapped_seconds(&self) -> f64 {
        self.overlapped.values().sum()
    }
}

/// `parts` as tenths of a percent of their sum, rounded so that they add up to exactly 1000
/// (largest remainders get the rounding), so a printed table's shares sum to 100.0 %.
pub fn tenths_of_percent(parts: &[f64]) -> Vec<i64> {
    let total: f64 = parts.iter().map(|p| p.max(0.0)).sum();
    if total <= 0.0 {
        return vec![0; parts.len()];
    }
    let exact: Vec<f64> = parts.iter().map(|p| 1000.0 * p.max(0.0) / total).collect();
    let mut out: Vec<i64> = exact.iter().map(|x| x.floor() as i64).collect();
    let short = 1000 - out.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().take(short.max(0) as usize) {
        out[i] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read 0-4 s, compute 3-6 s, write 5-7 s, nothing 7-8 s: read alone 3, overlapped
    /// read+compute 1 and compute+write 1, compute alone 1, write alone 1, other 1; the
    /// shares add up to 100 with the parts before and after.
    #[test]
    fn parts_add_up_to_the_wall_time() {
        let spans =
            [("read", 0.0, 2.0), ("read", 1.0, 4.0), ("compute", 3.0, 6.0), ("write", 5.0, 7.0), ("alloc", 0.0, 8.0)];
        let mut s = WallShares::from_spans(spans, 8.0);
        assert_eq!(s.alone["read/decode"], 3.0);
        assert_eq!(s.alone["compute"], 1.0);
        assert_eq!(s.alone["write"], 1.0);
        assert_eq!(s.overlapped["read/decode+compute"], 1.0);
        assert_eq!(s.overlapped["compute+write"], 1.0);
        assert_eq!(s.other, 1.0);
        s.startup = 0.5;
        s.device_release = 0.25;
        s.publish = 0.25;
        assert_eq!(s.total(), 9.0);
        assert_eq!(s.overlapped_seconds(), 2.0);
    }

    /// Rounded shares add up to exactly 100.0 %; the largest remainders take the rounding.
    #[test]
    fn rounded_shares_add_up() {
        let t = tenths_of_percent(&[1.0, 1.0, 1.0]);
        assert_eq!(t.iter().sum::<i64>(), 1000);
        assert_eq!(t, [334, 333, 333]);
        assert_eq!(tenths_of_percent(&[3.0, 0.0, 1.0]), [750, 0, 250]);
        assert_eq!(tenths_of_percent(&[0.0, 0.0]), [0, 0]);
        let many: Vec<f64> = (1..=11).map(|k| k as f64 * 0.37).collect();
        assert_eq!(tenths_of_percent(&many).iter().sum::<i64>(), 1000);
    }

    #[test]
    fn spans_past_the_run_are_clipped() {
        let s = WallShares::from_spans([("write", 1.0, 5.0)], 2.0);
        assert_eq!(s.alone["write"], 1.0);
        assert_eq!(s.other, 1.0);
        assert_eq!(s.total(), 2.0);
    }
}
