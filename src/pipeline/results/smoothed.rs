//! The writer of a tile whose written days are made from neighbouring computed days (Feb 29
//! filled, `--smooth W`: see [`crate::smooth`]), so that smoothing costs little beyond the
//! arithmetic:
//!
//! * each segment's result buffer is kept as it was computed (never copied together into one
//!   buffer of the whole year), and goes back to the compute loop as soon as no day still to
//!   be made reads it;
//! * a written day is made as soon as every computed day it reads is in (a sliding window
//!   over the segments: only the last segment's days, the days whose windows reach into it
//!   and those that wrap around the year to it wait for it, which is why that segment is
//!   short: [`crate::pipeline::segments::plan_segments_short_last`]);
//! * days are made on a thread pool of their own (a CPU engine's compute would otherwise hold
//!   them up until it is done) into a few reused batch buffers, while the batch before is
//!   written on a thread of its own.
//!
//! So making days overlaps writing, and writing overlaps computing, as without smoothing. The
//! order of the sums is [`crate::smooth`]'s, cell by cell: where a row comes from does not
//! change a bit.

use std::ops::Range;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::Finished;
use crate::error::Error;
use crate::pipeline::context::TileCtx;
use crate::pipeline::segments::Segment;
use crate::pipeline::sink::Sink;
use crate::smooth::{DayAxis, DayRows};
use crate::stats::TileResult;

/// Batch buffers the days are made into: one being written while the next is made.
const BATCH_BUFFERS: usize = 2;

/// The most days made into one batch buffer: small batches hold less memory and start the
/// first write after the last segment sooner; the products each batch makes for its window's
/// extra `W - 1` days cost little beside the sums (`W` additions a day).
const BATCH_DAYS: usize = 8;

/// What the writer does as each segment comes in, decided once from the day axis and the
/// segments (the compute loop reads `kept` from it too, so both agree on which buffers come
/// back).
pub(in crate::pipeline) struct Schedule {
    pub axis: DayAxis,
    /// Written days (indices into `axis.written`) made once segment k is in, in order.
    pub made: Vec<Vec<usize>>,
    /// Segments whose buffers go back once segment k is handled.
    pub released: Vec<Vec<usize>>,
    /// Buffers the writer keeps once segment k is handled.
    pub kept: Vec<usize>,
    /// The segment of each computed row, and the row's index in it.
    place: Vec<(usize, usize)>,
}

impl Schedule {
    pub fn new(axis: DayAxis, segments: &[Segment]) -> Schedule {
        let n_rows = axis.computed.len();
        let mut place = vec![(usize::MAX, 0); n_rows];
        for (k, s) in segments.iter().enumerate() {
            for (i, r) in s.targets.clone().enumerate() {
                place[r] = (k, i);
            }
        }
        let needs: Vec<Vec<usize>> = (0..axis.written.len()).map(|t| axis.needs(t)).collect();
        debug_assert!(needs.iter().flatten().all(|&r| r < n_rows && place[r].0 < segments.len()));
        let (mut ready, mut done, mut alive) =
            (vec![false; n_rows], vec![false; needs.len()], vec![false; segments.len()]);
        let (mut made, mut released, mut kept) = (Vec::new(), Vec::new(), Vec::new());
        for (k, s) in segments.iter().enumerate() {
            s.targets.clone().for_each(|r| ready[r] = true);
            alive[k] = true;
            let now: Vec<usize> =
                (0..needs.len()).filter(|&t| !done[t] && needs[t].iter().all(|&r| ready[r])).collect();
            now.iter().for_each(|&t| done[t] = true);
            let mut needed = vec![false; segments.len()];
            for t in (0..needs.len()).filter(|&t| !done[t]) {
                needs[t].iter().for_each(|&r| needed[place[r].0] = true);
            }
            let free: Vec<usize> = (0..=k).filter(|&j| alive[j] && !needed[j]).collect();
            free.iter().for_each(|&j| alive[j] = false);
            kept.push(alive.iter().filter(|&&a| a).count());
            made.push(now);
            released.push(free);
        }
        Schedule { axis, made, released, kept, place }
    }

    /// Days a batch buffer holds with `segments`: a segment's days at most, at most
    /// [`BATCH_DAYS`], and at least two batches of the whole axis (writing one overlaps making
    /// the next).
    fn batch_days(&self, segments: &[Segment]) -> usize {
        let most = segments.iter().map(|s| s.targets.len()).max().unwrap_or(1);
        most.min(BATCH_DAYS).min(self.axis.written.len().div_ceil(BATCH_BUFFERS)).max(1)
    }

    /// For each segment, the result rows (target days of every cell) the writer holds beside
    /// the compute loop's rotating buffers once it has handled it: the segment buffers it keeps
    /// (each as large as the largest segment: buffers are reused) and its batch buffers.
    pub fn held_rows(&self, segments: &[Segment]) -> Vec<usize> {
        let most = segments.iter().map(|s| s.targets.len()).max().unwrap_or(0);
        let batches = BATCH_BUFFERS * self.batch_days(segments);
        self.kept.iter().map(|k| k * most + batches).collect()
    }
}

/// The computed rows where they were computed: in the segments' result buffers.
struct SegmentRows<'a> {
    place: &'a [(usize, usize)],
    segments: &'a [Option<TileResult>],
}

impl SegmentRows<'_> {
    fn of(&self, row: usize) -> (&TileResult, usize) {
        let (k, i) = self.place[row];
        (self.segments[k].as_ref().expect("a row read is held until its days are made"), i)
    }
}

impl DayRows for SegmentRows<'_> {
    fn values(&self, stat: usize, row: usize) -> &[f64] {
        let (r, i) = self.of(row);
        r.row(stat, i)
    }

    fn counts(&self, row: usize) -> &[u32] {
        let (r, i) = self.of(row);
        &r.counts[i * r.n_cells..(i + 1) * r.n_cells]
    }
}

/// `days` (sorted) as runs of consecutive days, each cut into near-equal batches of at most
/// `cap` days.
fn batches(days: &[usize], cap: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < days.len() {
        let mut j = i + 1;
        while j < days.len() && days[j] == days[j - 1] + 1 {
            j += 1;
        }
        let (start, n) = (days[i], j - i);
        let parts = n.div_ceil(cap.max(1));
        out.extend((0..parts).map(|p| start + n * p / parts..start + n * (p + 1) / parts));
        i = j;
    }
    out
}

/// A batch of made days on its way to the writing thread: written targets, the segment whose
/// arrival made them (for the timeline), and their values.
type Batch = (Range<usize>, usize, TileResult);

/// Write the tile's days as its segments come in (see the module's header), handing each
/// segment's buffer `back` once no day still to be made reads it, and every buffer back at
/// the end whatever happened. Returns the outputs and the time spent making and writing days.
pub(in crate::pipeline) fn write_smoothed(
    ctx: &TileCtx<'_>,
    mut outputs: Sink,
    results: Receiver<Finished>,
    back: Sender<TileResult>,
) -> (Sink, Result<Duration, Error>) {
    let (trace, tile, region) = (ctx.trace, ctx.tile, ctx.region);
    let schedule = Schedule::new(ctx.plan.rules.axis(&ctx.plan.window), ctx.segments);
    debug_assert_eq!(schedule.axis.computed.len(), ctx.job.window.targets.len());
    let threads = ctx.plan.threads;
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("smooth-{i}")).build()
    {
        Ok(pool) => pool,
        Err(cause) => return (outputs, Err(Error::WorkerThreads { threads, cause })),
    };
    let (n_stats, n_cells) = (ctx.plan.stats.n_stats(), region.n_cells());
    let cap = schedule.batch_days(ctx.segments);
    let mut held: Vec<Option<TileResult>> = (0..ctx.segments.len()).map(|_| None).collect();
    let (batch_tx, batch_rx) = crossbeam_channel::bounded::<Batch>(1);
    let (free_tx, free_rx) = crossbeam_channel::unbounded::<TileResult>();
    let (mut making, mut arrived, mut stopped) = (Duration::ZERO, 0, false);
    let (writing, written) = std::thread::scope(|s| {
        let out = &mut outputs;
        let writer = std::thread::Builder::new()
            .name("write-days".into())
            .spawn_scoped(s, move || {
                // HDF5 reports errors per thread: this thread's writes probe attributes too
                crate::input::silence_hdf5();
                let mut spent = Duration::ZERO;
                for (days, k, values) in batch_rx {
                    let start = Instant::now();
                    let bytes = (values.values.len() * 4) as u64;
                    let r = trace.span("write", tile, Some(k), || (out.write_targets(region, days, &values), bytes));
                    spent += start.elapsed();
                    r?;
                    let _ = free_tx.send(values);
                }
                Ok(spent)
            })
            .expect("spawning the day-writing thread");
        let mut buffers = 0;
        for f in &results {
            let k = f.index;
            held[k] = Some(f.result);
            arrived += 1;
            for days in batches(&schedule.made[k], cap) {
                if stopped {
                    break;
                }
                let mut buf = match free_rx.try_recv() {
                    Ok(buf) => buf,
                    Err(_) if buffers < BATCH_BUFFERS => {
                        buffers += 1;
                        // every value is written before it is read (`apply_into`)
                        TileResult::zeroed(n_stats, cap, n_cells)
                    }
                    Err(_) => match free_rx.recv() {
                        Ok(buf) => buf,
                        Err(_) => {
                            stopped = true; // the writing thread failed: its error is returned
                            break;
                        }
                    },
                };
                let start = Instant::now();
                let rows = SegmentRows { place: &schedule.place, segments: &held };
                trace.span("smooth", tile, Some(k), || {
                    (schedule.axis.apply_into(&rows, days.clone(), &mut buf, &pool), 0)
                });
                making += start.elapsed();
                stopped = batch_tx.send((days, k, buf)).is_err();
            }
            for &j in &schedule.released[k] {
                if let Some(r) = held[j].take() {
                    let _ = back.send(r);
                }
            }
            if stopped {
                break;
            }
        }
        drop(batch_tx);
        let written: Result<Duration, crate::output::OutputError> = writer.join().expect("day-writing thread");
        (written.as_ref().map_or(Duration::ZERO, |d| *d), written)
    });
    // what is still held goes back (a job that stopped early): pinned buffers are unpinned
    // before they are freed, by the tile
    for r in held.iter_mut().filter_map(Option::take) {
        let _ = back.send(r);
    }
    debug_assert!(
        stopped
            || arrived < ctx.segments.len()
            || schedule.made.iter().map(Vec::len).sum::<usize>() == schedule.axis.written.len(),
        "every day is made once its inputs are in"
    );
    (outputs, written.map(|_| making + writing).map_err(Error::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::Calendar;
    use crate::smooth::DayRules;
    use crate::window::{WindowPlan, WindowSpec};

    fn schedule(doys: Vec<u16>, smooth: u16, n_segments: usize) -> Schedule {
        let spec = WindowSpec { years: 2001..=2003, doys, half_window: 2, calendar: Calendar::Hobday366 };
        let rules = DayRules { smooth, ..DayRules::default() };
        let plan = WindowPlan::build(&rules.computed_spec(&spec), |_| true);
        let segments = crate::pipeline::segments::plan_segments(&plan, n_segments);
        Schedule::new(rules.axis(&spec), &segments)
    }

    #[test]
    fn days_are_made_as_soon_as_their_window_is_in_and_buffers_go_back_after() {
        // 366 days in 16 segments of 22-23 days, smoothed over 31 days
        let s = schedule((1..=366).collect(), 31, 16);
        assert_eq!(s.made.len(), 16);
        // segment 0 (days 1-22) makes nothing: day 1-15 wait for December, 16-22 for segment 1
        assert!(s.made[0].is_empty());
        // segment 1 (days 23-45): days 16-30
        assert_eq!(s.made[1], (15..30).collect::<Vec<_>>());
        // the last segment makes the rest: days 1-15 and the days reading into it (329-366)
        assert_eq!(s.made[15], (0..15).chain(328..366).collect::<Vec<_>>());
        let mut all: Vec<usize> = s.made.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..366).collect::<Vec<_>>(), "every day once");
        // segments 0 and 1 are kept to the end (days 1-15 read days 1-30); the others go back
        // once no day left reads them: the next but one segment's days are made from the last
        // 15 days of the one before
        assert!(s.released[..4].iter().all(Vec::is_empty));
        for k in 4..15 {
            assert_eq!(s.released[k], [k - 2], "after segment {k}");
        }
        assert_eq!(s.released[15], [0, 1, 13, 14, 15]);
        assert_eq!(&s.kept[..], &[1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 0]);
        // one segment: everything at once
        let one = schedule((1..=366).collect(), 31, 1);
        assert_eq!((one.made[0].len(), one.released[0].clone(), one.kept[0]), (366, vec![0], 0));
        // short segments: a day waits for every segment its window reaches into
        let many = schedule((100..=130).collect(), 5, 40);
        let total: usize = many.made.iter().map(Vec::len).sum();
        assert_eq!(total, 31);
        // one day per segment: a day's 5 rows, less the one just made
        assert_eq!(many.kept.iter().max(), Some(&4), "{:?}", many.kept);
    }

    #[test]
    fn a_short_last_segment_leaves_its_own_days_and_their_neighbours_to_the_end() {
        let spec =
            WindowSpec { years: 2001..=2003, doys: (1..=366).collect(), half_window: 2, calendar: Calendar::Hobday366 };
        let rules = DayRules { smooth: 31, ..DayRules::default() };
        let plan = WindowPlan::build(&rules.computed_spec(&spec), |_| true);
        let equal = Schedule::new(rules.axis(&spec), &crate::pipeline::segments::plan_segments(&plan, 16));
        let segments = crate::pipeline::segments::plan_segments_short_last(&plan, 16);
        let short = Schedule::new(rules.axis(&spec), &segments);
        // equal segments: 53 days after the last (its 23, 15 before, days 1-15); a last
        // segment of 6 days (361-366): 36 (346-366, 1-15)
        assert_eq!(equal.made[15].len(), 53);
        assert_eq!(short.made[15], (0..15).chain(345..366).collect::<Vec<_>>());
        // the days before come as soon as their windows are in: after segment k (days
        // 24k+1..24k+24), days up to 24k+9
        assert_eq!(short.made[1], (15..33).collect::<Vec<_>>(), "days 10-15 wait for December");
        for k in 2..15 {
            assert_eq!(short.made[k], (24 * k - 15..24 * k + 9).collect::<Vec<_>>(), "segment {k}");
        }
        let mut all: Vec<usize> = short.made.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..366).collect::<Vec<_>>(), "every day once");
        // held beside the rotating buffers: 4 segments of 24 days kept at most (0 and 1 for
        // days 1-15, the last two for the days after) and two batches of 8 days
        assert_eq!(short.kept.iter().max(), Some(&4));
        assert_eq!(short.held_rows(&segments).iter().max(), Some(&(4 * 24 + 2 * 8)));
        assert_eq!(*short.held_rows(&segments).last().unwrap(), 2 * 8);
    }

    #[test]
    fn batches_are_runs_cut_evenly() {
        assert_eq!(batches(&[0, 1, 2, 3, 4, 7, 8, 20], 2), [0..1, 1..3, 3..5, 7..9, 20..21]);
        assert_eq!(batches(&(0..53).collect::<Vec<_>>(), 23), [0..17, 17..35, 35..53]);
        assert!(batches(&[], 4).is_empty());
    }
}
