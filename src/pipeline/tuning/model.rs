//! Choosing the number of pipeline segments R from measured rates: a small discrete-event model
//! of one tile's pipeline (reading in slot order, computing segment by segment, writing
//! segment by segment) predicts the wall time of every R from 1 to [`MAX_SEGMENTS`], and the
//! fastest R whose result buffers fit the memory limits is taken. Without measured rates the
//! defaults ([`super::decide::auto_segments`]) stand, raised to the memory minimum. Pure: no I/O, so
//! the model can be checked against hand calculations.
//!
//! The model, for a tile of `cells` cells and segments i = 0..R:
//!
//! ```text
//! read of slot j done      when  (j + 1) · cells · read_bytes / read_rate   of read work is done
//! segment i ready          when  its last slot is read (reading goes in slot order)
//! compute_i (seconds)      =     c_sample · cells · staged_i + c_segment
//! write_i (seconds)        =     targets_i · cells · write_bytes / write_rate + w_segment
//! compute i starts         at    max(ready_i, compute_{i-1} ends, write_{i-2} ends)   (2 result buffers)
//! write i starts           at    max(compute_i ends, write_{i-1} ends)
//! predicted                =     Σ over tiles of the last write's end
//! ```
//!
//! `staged_i` is the pool samples per cell segment i's plan stages (its groups' slots):
//! neighbouring segments both stage the `2 · half_window` days they share, so more segments
//! cost more computing. On a GPU the engine has its own processor and reading, computing and
//! writing run side by side. A host engine computes on the cores that read: while both run they
//! share the processors ([`overlap_speeds`]). How much they slow each other depends on how much
//! of reading is processor work, measured as the reader threads' CPU time over their wall time
//! (`read_cpu_share`): from a warm page cache reading is all copying (share 1), and each stage
//! progresses at half its rate, so overlapping them gains nothing and only the writes (on the
//! writer thread, taken as I/O) overlap for free; from a cold cache the readers mostly wait for
//! the disk, and computing goes on beside them at nearly full speed.

use std::collections::BTreeMap;

use crate::pipeline::results::RESULT_BUFFERS;
use crate::pipeline::segments::Segment;

/// Most segments the model considers (and the tiles are planned for, see [`Memory`]).
pub const MAX_SEGMENTS: usize = 16;

/// One segment, as the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegShape {
    /// Pool slots read before it can be computed (reading goes in slot order): its last slot + 1.
    pub ready_after: usize,
    pub targets: usize,
    /// Pool samples per cell its plan stages: every slot of every group it uses.
    pub staged: usize,
    /// Result rows (target days) the writer holds beside the rotating buffers once it has
    /// handled this segment: those whose written days are made from neighbouring days
    /// (`--smooth`, Feb 29 filled) are kept until those days are made, and made into batch
    /// buffers. 0 where written days are the computed ones.
    pub held: usize,
}

impl SegShape {
    pub fn of(seg: &Segment) -> SegShape {
        SegShape {
            ready_after: seg.slots.end,
            targets: seg.targets.len(),
            staged: seg.plan.groups.iter().map(|g| g.slots.len()).sum(),
            held: 0,
        }
    }
}

/// The job, as the model sees it.
#[derive(Clone, Debug)]
pub struct JobShape {
    pub n_slots: usize,
    /// Cells of each tile.
    pub tiles: Vec<usize>,
    /// Stored bytes read per slot and cell.
    pub read_bytes: f64,
    /// Output bytes written per target and cell.
    pub write_bytes: f64,
    /// The engine computes on the cores that read (host engines).
    pub shares_cores: bool,
    /// `candidates[r - 1]`: the segments of R = r.
    pub candidates: Vec<Vec<SegShape>>,
}

/// Measured costs (see [`super::rates`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// Stored input bytes per second of the read stage alone (all reading threads).
    pub read_bytes_per_s: f64,
    /// Compute seconds per cell and staged sample, and per segment.
    pub compute_s_per_sample: f64,
    pub compute_s_per_segment: f64,
    /// Output bytes per second of the writer, and its seconds per segment.
    pub write_bytes_per_s: f64,
    pub write_s_per_segment: f64,
    /// Share of the reader threads' time spent on a processor (1: reading is all processor
    /// work; 0.3: the readers wait for a disk 70 % of the time). Host engines only.
    pub read_cpu_share: f64,
}

impl Rates {
    /// Every rate positive and finite, every fixed cost non-negative and finite, the processor
    /// share within 0..=1.
    pub fn usable(&self) -> bool {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let fixed = |v: f64| v.is_finite() && v >= 0.0;
        positive(self.read_bytes_per_s)
            && positive(self.compute_s_per_sample)
            && positive(self.write_bytes_per_s)
            && fixed(self.compute_s_per_segment)
            && fixed(self.write_s_per_segment)
            && (0.0..=1.0).contains(&self.read_cpu_share)
    }
}

/// Speeds (as fractions of running alone) of reading and computing while a host engine does
/// both on the same cores, for readers that spend `read_cpu_share` of their time on a
/// processor. The reader threads and the compute threads are both as many as the cores, so a
/// fair scheduler gives a reader at most half a core: one that needs less (it mostly waits for
/// a disk) is not slowed; computing gets what the readers leave.
pub fn overlap_speeds(read_cpu_share: f64) -> (f64, f64) {
    let f = read_cpu_share.clamp(0.0, 1.0);
    let read = if f > 0.5 { 0.5 / f } else { 1.0 };
    (read, 1.0 - f * read)
}

/// What the result buffers of R segments take, and the limits they must fit.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Host bytes per cell besides the result buffers (pool, staging rows).
    pub host_base: u64,
    /// Result bytes per target and cell (`n_stats · 8 + 4`).
    pub result: u64,
    /// Result buffers of a segment's size held beside the rotating ones (1 with `--verify`).
    pub extra_results: usize,
    /// `--max-mem`.
    pub max_mem: u64,
    /// A device-resident pool's bytes per cell and `--max-device-mem`, where both apply: the
    /// pool and one segment's results must fit on the device together.
    pub device: Option<(u64, u64)>,
}

impl Memory {
    /// Host bytes per cell with `segs`: the rotating result buffers hold the largest segment;
    /// beside them, the most rows the writer holds (see [`SegShape::held`]).
    pub fn host_per_cell(&self, segs: &[SegShape]) -> u64 {
        let buffers = (RESULT_BUFFERS.min(segs.len()) + self.extra_results) as u64;
        let held = segs.iter().map(|s| s.held).max().unwrap_or(0) as u64;
        self.host_base + (buffers * max_targets(segs) as u64 + held) * self.result
    }

    fn host_fits(&self, segs: &[SegShape], cells: usize) -> bool {
        self.host_per_cell(segs).saturating_mul(cells as u64) <= self.max_mem
    }

    fn device_fits(&self, segs: &[SegShape], cells: usize) -> bool {
        match self.device {
            None => true,
            Some((pool, max)) => (pool + max_targets(segs) as u64 * self.result).saturating_mul(cells as u64) <= max,
        }
    }
}

fn max_targets(segs: &[SegShape]) -> usize {
    segs.iter().map(|s| s.targets).max().unwrap_or(0)
}

/// Where the number of segments came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `--segments N`.
    Option,
    /// The defaults ([`super::decide::auto_segments`]), no usable measured rates.
    Defaults,
    /// The model on measured rates.
    Measured,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Option => "option",
            Source::Defaults => "defaults",
            Source::Measured => "measured",
        }
    }
}

/// The number of segments and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub segments: usize,
    pub source: Source,
    /// Smallest R whose result buffers fit the memory limits (1 when all do).
    pub memory_min: usize,
    /// Some R below the chosen one did not fit (the memory limits raised it).
    pub memory_bound: bool,
    /// Predicted seconds of every R that fits (measured rates only).
    pub predicted: BTreeMap<usize, f64>,
}

impl Choice {
    /// `--segments n`.
    pub fn given(n: usize) -> Choice {
        Choice { segments: n, source: Source::Option, memory_min: 1, memory_bound: false, predicted: BTreeMap::new() }
    }

    /// The predictions, fastest first: `1.23 s with 4 segments, 1.40 s with 1, ...`.
    pub fn predictions_text(&self) -> String {
        let mut p: Vec<(usize, f64)> = self.predicted.iter().map(|(&r, &s)| (r, s)).collect();
        p.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        p.iter()
            .enumerate()
            .map(
                |(i, (r, s))| {
                    if i == 0 {
                        format!("{s:.3} s with {r} segment(s)")
                    } else {
                        format!("{s:.3} s with {r}")
                    }
                },
            )
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Choose R for `job`: the R with the smallest predicted time under `rates` among those whose
/// buffers fit `memory` (ties: fewer segments), or, without usable rates, `defaults` raised to
/// the smallest R that fits. The tiles of `job` must have been planned so that some candidate
/// fits (see [`Memory`]); if none does, every candidate is allowed.
pub fn choose(job: &JobShape, memory: &Memory, rates: Option<&Rates>, defaults: usize) -> Choice {
    let largest = job.tiles.iter().copied().max().unwrap_or(0);
    let n = job.candidates.len().max(1);
    let host: Vec<bool> =
        (1..=n).map(|r| job.candidates.get(r - 1).is_some_and(|s| memory.host_fits(s, largest))).collect();
    let both: Vec<bool> = (1..=n)
        .map(|r| host[r - 1] && job.candidates.get(r - 1).is_some_and(|s| memory.device_fits(s, largest)))
        .collect();
    // the device limit applies only where some R meets it (else the pool stays on the host)
    let fits = if both.iter().any(|&f| f) {
        both
    } else if host.iter().any(|&f| f) {
        host
    } else {
        vec![true; n]
    };
    let memory_min = fits.iter().position(|&f| f).map_or(1, |i| i + 1);
    let rates = rates.filter(|r| r.usable());
    let Some(rates) = rates else {
        let wanted = defaults.clamp(1, n);
        let segments = (wanted..=n).find(|&r| fits[r - 1]).unwrap_or(memory_min);
        return Choice {
            segments,
            source: Source::Defaults,
            memory_min,
            memory_bound: segments != wanted,
            predicted: BTreeMap::new(),
        };
    };
    let predicted: BTreeMap<usize, f64> =
        (1..=n).filter(|&r| fits[r - 1]).map(|r| (r, predict(job, &job.candidates[r - 1], rates))).collect();
    let best = predicted.iter().fold(None::<(usize, f64)>, |best, (&r, &s)| match best {
        Some((_, b)) if b <= s => best,
        _ => Some((r, s)),
    });
    let segments = best.map_or(memory_min, |(r, _)| r);
    // would a smaller R that does not fit have been faster?
    let memory_bound =
        (1..segments).any(|r| !fits[r - 1] && predict(job, &job.candidates[r - 1], rates) < predicted[&segments]);
    Choice { segments, source: Source::Measured, memory_min, memory_bound, predicted }
}

/// Predicted seconds of the whole job (every tile) with `segs`.
pub fn predict(job: &JobShape, segs: &[SegShape], rates: &Rates) -> f64 {
    job.tiles.iter().map(|&cells| simulate_tile(job, cells, segs, rates)).sum()
}

/// The discrete-event model of one tile (see the module header).
fn simulate_tile(job: &JobShape, cells: usize, segs: &[SegShape], rates: &Rates) -> f64 {
    let cells = cells as f64;
    let slot_s = cells * job.read_bytes / rates.read_bytes_per_s;
    let read_total = job.n_slots as f64 * slot_s;
    let ready: Vec<f64> = segs.iter().map(|s| s.ready_after.min(job.n_slots) as f64 * slot_s).collect();
    let work: Vec<f64> = segs
        .iter()
        .map(|s| rates.compute_s_per_sample * cells * s.staged as f64 + rates.compute_s_per_segment)
        .collect();
    let write: Vec<f64> = segs
        .iter()
        .map(|s| s.targets as f64 * cells * job.write_bytes / rates.write_bytes_per_s + rates.write_s_per_segment)
        .collect();
    let shared = overlap_speeds(rates.read_cpu_share);
    let n = segs.len();
    let mut write_end = vec![0.0f64; n];
    let (mut t, mut read_done) = (0.0f64, 0.0f64);
    let mut next = 0; // next segment to compute
    let mut running: Option<(usize, f64)> = None; // (segment, compute work left)
                                                  // every step ends at an event, so there are at most 3 per segment plus 1 per milestone
    for _ in 0..4 * (n + 1) + 4 {
        if running.is_none() && next < n {
            let buffer_free = if next >= RESULT_BUFFERS { write_end[next - RESULT_BUFFERS] } else { 0.0 };
            if read_done >= ready[next] && t >= buffer_free {
                running = Some((next, work[next]));
                next += 1;
            }
        }
        let reading = read_done < read_total;
        if running.is_none() && next >= n {
            break;
        }
        let (read_speed, compute_speed) =
            if job.shares_cores && reading && running.is_some() { shared } else { (1.0, 1.0) };
        // the next event: a read milestone (a segment becomes ready, or reading ends), a compute
        // ending, or a result buffer coming back from the writer
        let milestone = ready.iter().copied().filter(|&r| r > read_done).fold(read_total, f64::min);
        let to_read = if reading { (milestone - read_done) / read_speed } else { f64::INFINITY };
        let to_compute = running.map_or(f64::INFINITY, |(_, left)| left / compute_speed);
        let to_buffer = match running {
            None if next < n && next >= RESULT_BUFFERS && write_end[next - RESULT_BUFFERS] > t => {
                write_end[next - RESULT_BUFFERS] - t
            }
            _ => f64::INFINITY,
        };
        let dt = to_read.min(to_compute).min(to_buffer);
        if !dt.is_finite() {
            break; // nothing can happen (cannot occur with positive rates)
        }
        t = if dt == to_buffer { write_end[next - RESULT_BUFFERS] } else { t + dt };
        if reading {
            read_done = if dt == to_read { milestone } else { (read_done + dt * read_speed).min(read_total) };
        }
        if let Some((i, left)) = running {
            if dt == to_compute {
                let start = if i > 0 { t.max(write_end[i - 1]) } else { t };
                write_end[i] = start + write[i];
                running = None;
            } else {
                running = Some((i, left - dt * compute_speed));
            }
        }
    }
    write_end.last().copied().unwrap_or(t).max(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(ready_after: usize, targets: usize, staged: usize) -> SegShape {
        SegShape { ready_after, targets, staged, held: 0 }
    }

    /// 100 slots; R = 1: one segment staging 100 samples for 10 targets; R = 2: two of 5
    /// targets, each staging 60 (20 shared); R = 3: three staging 40, 40 and 40.
    fn job(shares_cores: bool) -> JobShape {
        JobShape {
            n_slots: 100,
            tiles: vec![1],
            read_bytes: 1.0,
            write_bytes: 1.0,
            shares_cores,
            candidates: vec![
                vec![seg(100, 10, 100)],
                vec![seg(60, 5, 60), seg(100, 5, 60)],
                vec![seg(40, 4, 40), seg(70, 3, 40), seg(100, 3, 40)],
            ],
        }
    }

    /// Reading 0.01 s a slot (1 s in all), writing 0.01 s a target.
    fn rates(compute_s_per_sample: f64) -> Rates {
        Rates {
            read_bytes_per_s: 100.0,
            compute_s_per_sample,
            compute_s_per_segment: 0.0,
            write_bytes_per_s: 100.0,
            write_s_per_segment: 0.0,
            read_cpu_share: 1.0,
        }
    }

    fn roomy() -> Memory {
        Memory { host_base: 8, result: 20, extra_results: 0, max_mem: u64::MAX, device: None }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_gpu_much_faster_than_reading_overlaps() {
        // compute 0.001 s a sample: R = 1: read 1.0, compute 0.1 (1.0-1.1), write 0.1 -> 1.2.
        // R = 2: seg 0 ready 0.6, computed 0.6-0.66, written 0.66-0.71; seg 1 ready 1.0,
        // computed 1.0-1.06, written 1.06-1.11.
        // R = 3: ready 0.4, 0.7, 1.0; computes 0.04 each: 1.0-1.04, written 1.04-1.07.
        let choice = choose(&job(false), &roomy(), Some(&rates(0.001)), 1);
        assert_eq!(choice.source, Source::Measured);
        assert!(close(choice.predicted[&1], 1.2), "{choice:?}");
        assert!(close(choice.predicted[&2], 1.11), "{choice:?}");
        assert!(close(choice.predicted[&3], 1.07), "{choice:?}");
        assert_eq!(choice.segments, 3);
        assert!(!choice.memory_bound);
        assert!(choice.predictions_text().starts_with("1.070 s with 3 segment(s), 1.110 s with 2, 1.200 s with 1"));
    }

    #[test]
    fn a_cpu_engine_sharing_the_cores_keeps_one_segment_when_restaging_costs_more() {
        // compute 0.01 s a sample. R = 1: read 0-1.0, compute 1.0-2.0, write 2.0-2.1 -> 2.1.
        // R = 2 on shared cores: read alone to 0.6; then read (0.4 left) and compute seg 0 (0.6)
        // at half speed: reading ends at 1.4 with 0.2 of compute left, done alone at 1.6;
        // write 1.6-1.65; seg 1 computed 1.6-2.2, written 2.2-2.25 -> 2.25.
        let choice = choose(&job(true), &roomy(), Some(&rates(0.01)), 2);
        assert!(close(choice.predicted[&1], 2.1), "{choice:?}");
        assert!(close(choice.predicted[&2], 2.25), "{choice:?}");
        assert_eq!(choice.segments, 1);
        // R = 3: read alone to 0.4; seg 0 (0.4) and reading at half speed: at 1.0 read 0.7 and
        // 0.1 left to compute, done at 1.2 (read 0.8), written 1.2-1.24; seg 1 (0.4) beside the
        // last 0.2 of reading: read done at 1.6, seg 1 at 1.8, written 1.8-1.83; seg 2 1.8-2.2,
        // written 2.2-2.23
        assert!(close(choice.predicted[&3], 2.23), "{choice:?}");
        // the same rates on a device of its own: R = 2: seg 0 computed 0.6-1.2, seg 1 1.2-1.8,
        // written 1.8-1.85; R = 3: computed 0.4-0.8, 0.8-1.2, 1.2-1.6, the last written 1.6-1.63
        let choice = choose(&job(false), &roomy(), Some(&rates(0.01)), 2);
        assert!(close(choice.predicted[&2], 1.85), "{choice:?}");
        assert!(close(choice.predicted[&3], 1.63), "{choice:?}");
        assert_eq!(choice.segments, 3);
    }

    #[test]
    fn readers_waiting_for_a_disk_leave_the_cores_to_computing() {
        assert_eq!(overlap_speeds(1.0), (0.5, 0.5));
        assert_eq!(overlap_speeds(0.25), (1.0, 0.75));
        assert_eq!(overlap_speeds(0.0), (1.0, 1.0));
        let (r, c) = overlap_speeds(0.8);
        assert!(close(r, 0.625) && close(c, 0.5), "{r} {c}");
        // the job of the test above with reading a quarter processor work (a cold page cache):
        // R = 1 is unchanged (2.1). R = 2: read alone to 0.6; then reading at full speed beside
        // seg 0 at 0.75: reading ends at 1.0 with 0.3 of seg 0 done, the other 0.3 alone to
        // 1.3, written 1.3-1.35; seg 1 computed 1.3-1.9, written 1.9-1.95.
        let cold = Rates { read_cpu_share: 0.25, ..rates(0.01) };
        let choice = choose(&job(true), &roomy(), Some(&cold), 1);
        assert!(close(choice.predicted[&1], 2.1), "{choice:?}");
        assert!(close(choice.predicted[&2], 1.95), "{choice:?}");
        // R = 3: read alone to 0.4; seg 0 (0.4) at 0.75 to 0.7 (0.225 done, read to 0.7), then
        // beside reading to 1.0 (0.45 done: 0.4 reached at 0.9333), written 0.9333-0.9733;
        // seg 1 ready at 0.7: starts 0.9333, 0.05 done by 1.0, 0.35 alone to 1.35; seg 2
        // 1.35-1.75, written 1.75-1.78
        assert!(close(choice.predicted[&3], 1.78), "{choice:?}");
        assert_eq!(choice.segments, 3);
        assert!(!Rates { read_cpu_share: 1.5, ..rates(0.01) }.usable());
    }

    #[test]
    fn a_tight_memory_limit_forces_more_segments() {
        // per cell: 8 + buffers x largest segment x 20 bytes: R = 1: 8 + 10 x 20 = 208;
        // R = 2: 8 + 2 x 5 x 20 = 208; R = 3: 8 + 2 x 4 x 20 = 168
        let mut memory = roomy();
        memory.max_mem = 200;
        assert_eq!(memory.host_per_cell(&job(true).candidates[0]), 208);
        assert_eq!(memory.host_per_cell(&job(true).candidates[2]), 168);
        let choice = choose(&job(true), &memory, Some(&rates(0.01)), 1);
        assert_eq!((choice.segments, choice.memory_min), (3, 3));
        assert!(choice.memory_bound, "R = 1 would have been faster: {choice:?}");
        assert_eq!(choice.predicted.keys().copied().collect::<Vec<_>>(), [3]);
        // the defaults are raised the same way
        let choice = choose(&job(true), &memory, None, 2);
        assert_eq!((choice.segments, choice.source, choice.memory_bound), (3, Source::Defaults, true));
        // a device-resident pool: 8 bytes a cell plus one segment's results within 120 bytes
        let memory = Memory { device: Some((8, 120)), ..roomy() };
        let choice = choose(&job(false), &memory, None, 1);
        assert_eq!((choice.segments, choice.memory_min, choice.memory_bound), (2, 2, true), "{choice:?}");
        let choice = choose(&job(false), &memory, Some(&rates(0.01)), 1);
        assert_eq!(choice.predicted.keys().copied().collect::<Vec<_>>(), [2, 3], "{choice:?}");
        // a device limit no R meets leaves the pool on the host: no constraint
        let memory = Memory { device: Some((8, 50)), ..roomy() };
        assert_eq!(choose(&job(false), &memory, None, 1).segments, 1);
    }

    #[test]
    fn without_rates_the_defaults_stand() {
        for defaults in [1, 2, 3] {
            let choice = choose(&job(false), &roomy(), None, defaults);
            assert_eq!((choice.segments, choice.source, choice.memory_min), (defaults, Source::Defaults, 1));
            assert!(choice.predicted.is_empty() && !choice.memory_bound);
        }
        // more than the candidates: the largest
        assert_eq!(choose(&job(false), &roomy(), None, 4).segments, 3);
        // unusable rates count as none
        let broken = Rates { read_bytes_per_s: 0.0, ..rates(0.01) };
        assert_eq!(choose(&job(false), &roomy(), Some(&broken), 2).source, Source::Defaults);
        let nan = Rates { write_s_per_segment: f64::NAN, ..rates(0.01) };
        assert!(!nan.usable());
    }

    #[test]
    fn fixed_costs_per_segment_and_tiles_add_up() {
        // R = 2 on a GPU with 0.05 s per segment to compute and to write: seg 0 computed
        // 0.6-0.71, written 0.71-0.81; seg 1 computed 1.0-1.11, written 1.11-1.21; two tiles
        let mut j = job(false);
        j.tiles = vec![1, 1];
        let r = Rates { compute_s_per_segment: 0.05, write_s_per_segment: 0.05, ..rates(0.001) };
        assert!(close(predict(&j, &j.candidates[1], &r), 2.0 * 1.21));
        // result buffers: with 3 segments and writes of 1 s each, seg 2 waits for seg 0's write
        let slow = Rates { write_s_per_segment: 1.0, ..rates(0.001) };
        // seg 0: ready 0.4, computed 0.4-0.44, written 0.44-1.48; seg 1: 0.7-0.74, written
        // 1.48-2.51; seg 2: ready 1.0, its buffer back at 1.48, computed 1.48-1.52, written
        // 2.51-3.54
        let j = job(false);
        assert!(close(predict(&j, &j.candidates[2], &slow), 3.54), "{}", predict(&j, &j.candidates[2], &slow));
    }

    #[test]
    fn shapes_of_real_segments() {
        use crate::calendar::Calendar;
        use crate::window::{WindowPlan, WindowSpec};
        let spec =
            WindowSpec { years: 1991..=2020, doys: (152..=243).collect(), half_window: 5, calendar: Calendar::Ordinal };
        let whole = WindowPlan::build(&spec, |_| true);
        let one: Vec<SegShape> = crate::pipeline::segments::plan_segments(&whole, 1).iter().map(SegShape::of).collect();
        assert_eq!(one, [seg(102 * 30, 92, 102 * 30)]);
        let four: Vec<SegShape> =
            crate::pipeline::segments::plan_segments(&whole, 4).iter().map(SegShape::of).collect();
        // 23 targets each staging 33 days of 30 years; 10 days shared with each neighbour
        assert_eq!(four[0], seg(33 * 30, 23, 33 * 30));
        assert_eq!(four[3], seg(102 * 30, 23, 33 * 30));
    }
}
