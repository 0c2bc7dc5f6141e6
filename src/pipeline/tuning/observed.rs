//! What one run measured, taken from its timeline ([`crate::pipeline::trace`]): per tile the
//! read stage's bytes and seconds and the reader threads' processor share, per segment the
//! compute and write work. On a host engine reading and computing share the cores, so only the
//! part of an overlap that was each stage's own work counts ([`super::model::overlap_speeds`]).
//! The observations go into the rates file ([`super::rates`]).

use crate::pipeline::trace::Span;

use super::model::overlap_speeds;

/// What one run observed: read (stored bytes, seconds of read work) and the reader threads'
/// time (wall seconds, processor seconds) per tile; compute (cells × staged samples, seconds of
/// compute work) and write (output bytes, seconds) per segment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observed {
    pub read: Vec<(f64, f64)>,
    pub read_cpu: Vec<(f64, f64)>,
    pub compute: Vec<(f64, f64)>,
    pub write: Vec<(f64, f64)>,
}

impl Observed {
    /// Observations from a run's timeline: `cells[t]` cells in tile t, `staged[k]` samples per
    /// cell staged by segment k. With `shares_cores` (host engines) reading and computing took
    /// turns on the same cores: where they overlapped each ran at the model's shared speed
    /// ([`overlap_speeds`] of the readers' processor share, measured on the reads that ran
    /// alone), so only that part of each overlap counts as work.
    pub fn from_spans(spans: &[Span], cells: &[usize], staged: &[usize], shares_cores: bool) -> Observed {
        let mut obs = Observed::default();
        for (tile, &n_cells) in cells.iter().enumerate() {
            let of = |stage: &'static str| spans.iter().filter(move |s| s.tile == tile && s.stage == stage);
            let Some(start) = of("read").map(|s| s.start).reduce(f64::min) else { continue };
            let end = of("read").chain(of("upload")).map(|s| s.end).fold(start, f64::max);
            let bytes: u64 = of("read").map(|s| s.bytes).sum();
            let cpu = reader_cpu(of("read").chain(of("locate")), &of("compute").collect::<Vec<_>>());
            let (read_speed, compute_speed) = match (shares_cores, cpu) {
                (false, _) => (1.0, 1.0),
                (true, Some((wall, cpu))) => overlap_speeds(cpu / wall),
                (true, None) => overlap_speeds(1.0),
            };
            obs.read_cpu.extend(cpu);
            let mut overlaps = 0.0;
            for c in of("compute") {
                let overlap = (c.end.min(end) - c.start.max(start)).max(0.0);
                overlaps += overlap;
                let k = c.batch.unwrap_or(0);
                if let Some(&samples) = staged.get(k) {
                    let work = c.end - c.start - (1.0 - compute_speed) * overlap;
                    obs.compute.push(((n_cells * samples) as f64, work));
                }
            }
            obs.read.push((bytes as f64, end - start - (1.0 - read_speed) * overlaps));
            for w in of("write") {
                obs.write.push((w.bytes as f64, w.end - w.start));
            }
        }
        let positive = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0;
        obs.read.retain(positive);
        obs.read_cpu.retain(positive);
        obs.compute.retain(positive);
        obs.write.retain(positive);
        obs
    }

    pub(super) fn is_complete(&self) -> bool {
        !(self.read.is_empty() || self.compute.is_empty() || self.write.is_empty())
    }
}

/// The reader threads' (wall seconds, processor seconds) over the read spans that measured
/// their processor time, counting only those that ran while nothing was computed where there
/// are any (beside computing, a reader waits for a core, which is not its own cost).
fn reader_cpu<'a>(reads: impl Iterator<Item = &'a Span>, computes: &[&Span]) -> Option<(f64, f64)> {
    let measured: Vec<&Span> = reads.filter(|s| s.cpu.is_some() && s.end > s.start).collect();
    let alone: Vec<&Span> =
        measured.iter().copied().filter(|r| computes.iter().all(|c| c.end <= r.start || c.start >= r.end)).collect();
    let use_: &[&Span] = if alone.is_empty() { &measured } else { &alone };
    let wall: f64 = use_.iter().map(|s| s.end - s.start).sum();
    let cpu: f64 = use_.iter().filter_map(|s| s.cpu).sum();
    (wall > 0.0).then(|| (wall, cpu.min(wall)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::tuning::rates::{test_key as key, RatesFile};

    #[test]
    fn observations_from_a_timeline() {
        let span = |stage: &'static str, batch: usize, start: f64, end: f64, bytes: u64| Span {
            stage,
            tile: 0,
            batch: Some(batch),
            thread: "t".into(),
            start,
            end,
            bytes,
            cpu: None,
        };
        // reads 0-2 s (1000 bytes); segment 0 computed 1-1.5 (overlapping the reads by 0.5 s),
        // segment 1 2-3; writes of 40 bytes
        let spans = vec![
            span("read", 0, 0.0, 1.0, 600),
            span("read", 1, 0.5, 2.0, 400),
            span("compute", 0, 1.0, 1.5, 0),
            span("compute", 1, 2.0, 3.0, 0),
            span("write", 0, 1.5, 1.7, 40),
            span("write", 1, 3.0, 3.2, 40),
        ];
        let gpu = Observed::from_spans(&spans, &[10], &[5, 7], false);
        assert_eq!(gpu.read, [(1000.0, 2.0)]);
        assert_eq!(gpu.compute, [(50.0, 0.5), (70.0, 1.0)]);
        assert_eq!(gpu.write.len(), 2);
        assert!((gpu.write[0].1 - 0.2).abs() < 1e-12 && gpu.write[0].0 == 40.0);
        // sharing the cores: half of the 0.5 s overlap was the other stage's
        let cpu = Observed::from_spans(&spans, &[10], &[5, 7], true);
        assert_eq!(cpu.read, [(1000.0, 1.75)]);
        assert_eq!(cpu.compute, [(50.0, 0.25), (70.0, 1.0)]);
        // a tile without reads gives nothing
        assert_eq!(Observed::from_spans(&spans, &[10, 10], &[5, 7], true), cpu);
        assert_eq!(Observed::from_spans(&[], &[10], &[5], false), Observed::default());
        // readers that measured their processor time: read 0 ran alone (0.25 s of 1 s on a
        // processor), read 1 beside segment 0 (not used for the share); sharing the cores at
        // that share leaves reading at full speed and computing at 0.75 during the overlap
        let mut measured = spans.clone();
        measured[0].cpu = Some(0.25);
        measured[1].cpu = Some(1.5);
        let cold = Observed::from_spans(&measured, &[10], &[5, 7], true);
        assert_eq!(cold.read_cpu, [(1.0, 0.25)]);
        assert_eq!(cold.read, [(1000.0, 2.0)]);
        assert_eq!(cold.compute, [(50.0, 0.375), (70.0, 1.0)]);
        // recorded, the share is fitted with the rates; files without it read as 1
        let mut file = RatesFile::default();
        assert!(file.record(&key("cpu", 2), &cold, ("t".into(), 1)));
        let (rates, entry) = file.rates(&[key("cpu", 2)]).unwrap();
        assert!((rates.read_cpu_share - 0.25).abs() < 1e-12 && entry.read_cpu_share == rates.read_cpu_share);
        let mut old: serde_json::Value = serde_json::to_value(&file).unwrap();
        let e = old["entries"][0].as_object_mut().unwrap();
        e.remove("read_cpu");
        e.remove("read_cpu_share");
        let old: RatesFile = serde_json::from_value(old).unwrap();
        assert_eq!(old.rates(&[key("cpu", 2)]).unwrap().0.read_cpu_share, 1.0);
    }
}
