//! The per-rank timeline of a run: every stage of every batch as a span (stage, tile, batch,
//! thread, start, end, bytes), so overlap can be seen (`--trace-json`, drawn by
//! `scripts/trace-gantt.py`). Each span is also a `tracing` span for log subscribers.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::report::progress::Progress;
use crate::report::timing::SpanTotal;

/// One stage of one batch on one thread, in seconds since the run started.
#[derive(Clone, Debug, Serialize)]
pub struct Span {
    pub stage: &'static str,
    pub tile: usize,
    /// Segment of target days (or file slot, for reads); none for whole-run stages.
    pub batch: Option<usize>,
    pub thread: String,
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
    /// Processor seconds the thread used during the span, where measured (reads): how much of
    /// the span was work rather than waiting for a disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
}

/// Processor time this thread has used, in seconds (`CLOCK_THREAD_CPUTIME_ID`; 0 where the
/// clock cannot be read).
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which lives on this stack frame.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        0.0
    }
}

/// Collects spans from any thread.
pub struct Trace {
    t0: Instant,
    spans: Mutex<Vec<Span>>,
    /// The user's progress: every span recorded is a step of its stage.
    progress: std::sync::OnceLock<Progress>,
}

/// The timeline as written.
#[derive(Serialize)]
struct TraceFile<'a> {
    rank: usize,
    ranks: usize,
    spans: &'a [Span],
}

impl Trace {
    pub fn new(t0: Instant) -> Trace {
        Trace { t0, spans: Mutex::new(Vec::new()), progress: std::sync::OnceLock::new() }
    }

    /// Show the stages' progress (bars or JSON lines) from now on: every span recorded is a
    /// step of its stage. Once per run; a second call is ignored.
    pub fn show_progress(&self, progress: Progress) {
        let _ = self.progress.set(progress);
    }

    /// Run `f` as stage `stage` of `batch`; `f` returns its result and the bytes it moved.
    pub fn span<R>(&self, stage: &'static str, tile: usize, batch: Option<usize>, f: impl FnOnce() -> (R, u64)) -> R {
        let _entered = tracing::debug_span!("stage", stage, tile, batch).entered();
        let start = self.t0.elapsed().as_secs_f64();
        let (r, bytes) = f();
        self.record(stage, tile, batch, start, bytes);
        r
    }

    /// [`Trace::span`], also recording the processor time the calling thread spent in `f`.
    pub fn span_cpu<R>(
        &self,
        stage: &'static str,
        tile: usize,
        batch: Option<usize>,
        f: impl FnOnce() -> (R, u64),
    ) -> R {
        let _entered = tracing::debug_span!("stage", stage, tile, batch).entered();
        let (start, cpu0) = (self.t0.elapsed().as_secs_f64(), thread_cpu_seconds());
        let (r, bytes) = f();
        let cpu = (thread_cpu_seconds() - cpu0).max(0.0);
        self.push(stage, tile, batch, start, bytes, Some(cpu));
        r
    }

    /// Record a span that started at `start` (seconds since the run started) and ends now.
    pub fn record(&self, stage: &'static str, tile: usize, batch: Option<usize>, start: f64, bytes: u64) {
        self.push(stage, tile, batch, start, bytes, None);
    }

    fn push(&self, stage: &'static str, tile: usize, batch: Option<usize>, start: f64, bytes: u64, cpu: Option<f64>) {
        let end = self.t0.elapsed().as_secs_f64();
        let thread = std::thread::current().name().unwrap_or("worker").to_string();
        let span = Span { stage, tile, batch, thread, start, end, bytes, cpu };
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).push(span);
        if let Some(p) = self.progress.get() {
            p.step(stage, bytes);
        }
    }

    /// Record a span that ran from `start` to `end` on thread `thread`.
    #[allow(clippy::too_many_arguments)]
    pub fn record_between(
        &self,
        stage: &'static str,
        tile: usize,
        batch: Option<usize>,
        thread: &str,
        start: Instant,
        end: Instant,
        bytes: u64,
    ) {
        self.record_between_cpu(stage, tile, batch, thread, start, end, bytes, None);
    }

    /// [`Trace::record_between`] with the processor seconds used in the span, where known
    /// (e.g. a reader process's own clock).
    #[allow(clippy::too_many_arguments)]
    pub fn record_between_cpu(
        &self,
        stage: &'static str,
        tile: usize,
        batch: Option<usize>,
        thread: &str,
        start: Instant,
        end: Instant,
        bytes: u64,
        cpu: Option<f64>,
    ) {
        let at = |t: Instant| t.saturating_duration_since(self.t0).as_secs_f64();
        let span = Span { stage, tile, batch, thread: thread.to_string(), start: at(start), end: at(end), bytes, cpu };
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).push(span);
        if let Some(p) = self.progress.get() {
            p.step(stage, bytes);
        }
    }

    /// Seconds since the run started.
    pub fn now(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    /// Wall-clock extent of stage `stage` (first start to last end), in seconds.
    pub fn extent(&self, stage: &str) -> f64 {
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        let mut it = spans.iter().filter(|s| s.stage == stage);
        let Some(first) = it.next() else { return 0.0 };
        let (a, b) = it.fold((first.start, first.end), |(a, b), s| (a.min(s.start), b.max(s.end)));
        b - a
    }

    /// Summed duration of stage `stage`'s spans, in seconds.
    pub fn total(&self, stage: &str) -> f64 {
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        spans.iter().filter(|s| s.stage == stage).map(|s| s.end - s.start).sum()
    }

    /// Every kind of span recorded so far, summed (the run report's `span_totals`).
    pub fn totals(&self) -> std::collections::BTreeMap<&'static str, SpanTotal> {
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        let mut totals = std::collections::BTreeMap::<&'static str, SpanTotal>::new();
        for s in spans.iter() {
            let t = totals.entry(s.stage).or_default();
            t.count += 1;
            t.seconds += s.end - s.start;
            if let Some(cpu) = s.cpu {
                *t.cpu_seconds.get_or_insert(0.0) += cpu;
            }
        }
        totals
    }

    /// Every span recorded so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn write_json(&self, path: &Path, rank: usize, ranks: usize) -> std::io::Result<()> {
        let mut spans = self.spans.lock().unwrap_or_else(|e| e.into_inner()).clone();
        spans.sort_by(|a, b| a.start.total_cmp(&b.start));
        let text = serde_json::to_string_pretty(&TraceFile { rank, ranks, spans: &spans })?;
        std::fs::write(path, text)
    }
}

/// `FILE` with `.rankN` before its extension (`trace.json` -> `trace.rank3.json`).
pub fn rank_path(path: &Path, rank: usize) -> std::path::PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.rank{rank}.{}", ext.to_string_lossy()),
        None => format!("{stem}.rank{rank}"),
    };
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_files_keep_the_extension() {
        assert_eq!(rank_path(Path::new("/tmp/t.json"), 3), Path::new("/tmp/t.rank3.json"));
        assert_eq!(rank_path(Path::new("trace"), 0), Path::new("trace.rank0"));
    }

    #[test]
    fn spans_are_recorded_with_bytes_and_extents() {
        let trace = Trace::new(Instant::now());
        let x = trace.span("read", 0, Some(3), || {
            std::thread::sleep(std::time::Duration::from_millis(5));
            (7, 100)
        });
        assert_eq!(x, 7);
        std::thread::scope(|s| {
            s.spawn(|| trace.span("read", 0, Some(4), || ((), 50)));
        });
        trace.span("write", 0, None, || ((), 1));
        assert!(trace.extent("read") >= 0.005);
        assert_eq!(trace.extent("kernel"), 0.0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        trace.write_json(&path, 1, 2).unwrap();
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["rank"], 1);
        let spans = v["spans"].as_array().unwrap();
        assert_eq!(spans.len(), 3);
        assert_eq!(spans[0]["stage"], "read");
        assert_eq!(spans[0]["bytes"], 100);
        assert!(spans.iter().all(|s| s["end"].as_f64() >= s["start"].as_f64()));
    }
}
