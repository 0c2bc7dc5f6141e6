//! Deciding a job's segments and tiles (and keeping what a run measured for the next one):
//! `--segments N` as given; otherwise the segments the pipeline model ([`super::model`])
//! predicts fastest from the rates earlier runs recorded ([`super::rates`]), or the defaults
//! ([`auto_segments`]), within the memory limits.

use super::model::{self, Choice, JobShape, Memory, SegShape, MAX_SEGMENTS};
use super::observed::Observed;
use super::rates::{self, RatesFile, RatesKey};
use crate::engine::Engine;
use crate::error::Error;
use crate::pipeline::job::{plan_tiles, Job};
use crate::pipeline::segments::{plan_segments, plan_segments_short_last, Segment};
use crate::plan::JobPlan;

/// Segments when `--segments` is not given and no rates were measured for this engine (see
/// [`super::model`]). A device engine computes a segment in milliseconds, so short segments (4
/// target days or more, up to 16) leave the least work after the last read: on the H200 16
/// segments ran the reference job in 0.84 s against 0.95 s with 4
/// (`bench-results/runs/2026-11-30-h200-auto-segments`). The CPU engine sorts the days
/// neighbouring segments share again in each, which on a few cores costs about what the
/// overlap gains: at most 2, each at least twice the window long.
pub fn auto_segments(n_targets: usize, half_window: u16, device: bool) -> usize {
    let span = 2 * usize::from(half_window) + 1;
    match device {
        true => (n_targets / 4).clamp(1, MAX_SEGMENTS),
        false => (n_targets / (2 * span)).clamp(1, 2),
    }
}

/// The number of segments, the segments, the tiles they fit in, and why.
pub(crate) struct Chosen {
    pub choice: Choice,
    pub segments: Vec<Segment>,
    pub regions: Vec<crate::input::Region>,
    pub reason: String,
}

/// Cut the grid into tiles and the target days into segments: `--segments N` as given;
/// otherwise tiles as large as the leanest candidate's result buffers allow (each tile reads
/// every file again), then the segments [`model::choose`] picks from the measured rates in
/// the rates file (or the defaults) among those that fit.
pub(crate) fn choose_segments(
    plan: &JobPlan,
    job: &Job,
    engine: &dyn Engine,
    memory: &Memory,
    device_pool: bool,
    key: &dyn Fn(&str) -> RatesKey,
) -> Result<Chosen, Error> {
    // a writer that makes days from their neighbours (smoothing) ends on a short segment
    let cut = |n: usize| match plan.rules.holds(plan.window.calendar) {
        true => plan_segments_short_last(&job.window, n),
        false => plan_segments(&job.window, n),
    };
    if let Some(n) = plan.segments {
        let segments = cut(n);
        let shapes = shapes(plan, &segments);
        let regions = plan_tiles(&job.layout, memory.host_per_cell(&shapes), plan.max_mem)?;
        return Ok(Chosen { choice: Choice::given(n), segments, regions, reason: format!("--segments {n}") });
    }
    let on_device = engine.is_device();
    let n_targets = job.window.targets.len();
    let mut candidates: Vec<Vec<Segment>> = (1..=MAX_SEGMENTS.min(n_targets.max(1))).map(cut).collect();
    let shapes: Vec<Vec<SegShape>> = candidates.iter().map(|c| shapes(plan, c)).collect();
    let leanest = shapes.iter().map(|s| memory.host_per_cell(s)).min().unwrap_or(memory.host_base);
    let regions = plan_tiles(&job.layout, leanest, plan.max_mem)?;
    let shape = JobShape {
        n_slots: job.window.slots.len(),
        tiles: regions.iter().map(|r| r.n_cells()).collect(),
        read_bytes: job.layout.storage.size() as f64,
        write_bytes: (plan.stats.n_stats() * 4) as f64,
        shares_cores: !on_device,
        candidates: shapes,
    };
    // a device-resident pool's rates, else (it may not have fit before) the host pool's; made
    // only when there is a file to look in, as the key names the device, which a GPU that is
    // still starting has yet to tell
    let keys = || -> Vec<RatesKey> {
        if device_pool {
            vec![key("device"), key("host")]
        } else {
            vec![key("host")]
        }
    };
    let (rates, why) = match &plan.rates {
        None => (None, "defaults: no rates file (--rates none, SSTCLIM_RATES=none, or no cache directory)".to_string()),
        Some(path) => match RatesFile::load(path) {
            Err(e) => {
                tracing::warn!("{e}");
                (None, format!("defaults: {e}"))
            }
            Ok(file) if !file.entries.iter().any(|e| e.key.engine == engine.name()) => {
                (None, format!("defaults: no measured rates in {} for the {} engine", path.display(), engine.name()))
            }
            Ok(file) => match file.rates(&keys()) {
                Some((rates, entry)) => {
                    let cpu = if on_device {
                        String::new()
                    } else {
                        format!("; readers {:.0} % on a processor", 100.0 * rates.read_cpu_share)
                    };
                    (Some(rates), format!("measured rates from {} ({} run(s){cpu})", path.display(), entry.runs))
                }
                None => {
                    let key = &keys()[0];
                    let why = format!(
                        "defaults: no measured rates in {} for the {} engine on {}, {} pool, {} threads, {} reads",
                        path.display(),
                        engine.name(),
                        key.device,
                        key.pool,
                        key.threads,
                        key.reads
                    );
                    (None, why)
                }
            },
        },
    };
    let defaults = auto_segments(n_targets, plan.window.half_window, on_device);
    let choice = model::choose(&shape, memory, rates.as_ref(), defaults);
    let mut reason = why;
    match (choice.source, choice.memory_bound) {
        (model::Source::Measured, bound) => {
            reason = format!("{reason}: predicted {}", choice.predictions_text());
            if bound {
                reason += "; faster ones with fewer segments do not fit the memory limits";
            }
        }
        (_, true) => reason = format!("{reason}, raised from {defaults} to fit the memory limits"),
        (_, false) => {}
    }
    let segments = candidates.swap_remove(choice.segments - 1);
    Ok(Chosen { choice, segments, regions, reason })
}

/// The segments as the model sees them, with the result rows the writer holds beside the
/// rotating buffers once it has handled each ([`SegShape::held`]).
pub(crate) fn shapes(plan: &JobPlan, segments: &[Segment]) -> Vec<SegShape> {
    let held = crate::pipeline::results::held_rows(plan, segments);
    segments.iter().zip(held).map(|(s, held)| SegShape { held, ..SegShape::of(s) }).collect()
}

/// Add this run's observations to the rates file (a warning where it cannot be read or
/// written; a corrupt file is replaced). Returns whether they were recorded.
pub(crate) fn record_rates(path: &std::path::Path, key: &RatesKey, observed: &Observed) -> bool {
    let mut file = RatesFile::load(path).unwrap_or_else(|e| {
        tracing::warn!("{e}; starting it afresh");
        RatesFile::default()
    });
    if !file.record(key, observed, rates::now()) {
        tracing::debug!("nothing measured to record in {}", path.display());
        return false;
    }
    match file.store(path) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("{e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn auto_segments_by_engine_and_job() {
        assert_eq!(super::auto_segments(92, 5, true), 16);
        assert_eq!(super::auto_segments(92, 5, false), 2);
        assert_eq!(super::auto_segments(20, 5, true), 5);
        assert_eq!(super::auto_segments(20, 5, false), 1);
        assert_eq!(super::auto_segments(3, 5, true), 1);
        assert_eq!(super::auto_segments(366, 15, true), 16);
    }
}
