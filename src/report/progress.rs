//! Progress for people and for batch jobs: bars on a terminal (one per stage of a run, with
//! files or segments, bytes, rate and ETA, cleared when the stage is done so no stale line is
//! left behind), or one JSON object per line on stderr with `--progress json` (what a batch
//! system's log can be parsed from), or nothing.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown (`--progress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ProgressMode {
    /// Bars where stderr is a terminal (and not `--quiet`), else nothing.
    #[default]
    Auto,
    /// Bars even where stderr is not a terminal.
    Bars,
    /// One JSON object per line on stderr (stage, done, total, bytes, rate, ETA).
    Json,
    /// No progress.
    Off,
}

/// How the run talks to the user.
#[derive(Clone, Copy, Debug)]
pub struct Ui {
    pub quiet: bool,
    pub bars: bool,
    /// Machine-readable progress lines instead of bars.
    pub json: bool,
}

impl Ui {
    /// Bars only on a terminal and not when quiet.
    pub fn new(quiet: bool) -> Ui {
        Ui::with_mode(quiet, ProgressMode::Auto)
    }

    /// The user interface `--quiet` and `--progress` ask for (`json` lines are not silenced by
    /// `--quiet`: a batch job asks for them explicitly).
    pub fn with_mode(quiet: bool, mode: ProgressMode) -> Ui {
        let terminal = std::io::stderr().is_terminal();
        Ui {
            quiet,
            bars: match mode {
                ProgressMode::Auto => !quiet && terminal,
                ProgressMode::Bars => !quiet,
                ProgressMode::Json | ProgressMode::Off => false,
            },
            json: mode == ProgressMode::Json,
        }
    }

    /// A progress bar over `len` items, or a hidden one.
    pub fn bar(&self, len: u64, message: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let style = ProgressStyle::with_template("{msg:>14} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        ProgressBar::new(len).with_style(style).with_message(message.to_string())
    }

    /// A ticking spinner for a stage without countable steps, or a hidden one.
    pub fn spinner(&self, message: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new_spinner().with_message(message.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// Progress of a run's stages (see [`Progress`]); inert when neither bars nor JSON lines
    /// are wanted.
    pub fn stages(&self, stages: &[(&'static str, &'static str, u64)]) -> Progress {
        Progress::new(*self, stages, Box::new(std::io::stderr()))
    }
}

/// One stage's counters.
struct StageState {
    name: &'static str,
    unit: &'static str,
    total: u64,
    done: u64,
    bytes: u64,
    started: Option<Instant>,
    bar: Option<ProgressBar>,
    /// When the last JSON line for this stage went out.
    last_line: Option<Instant>,
}

/// The progress of a run's stages (read, compute, write): each finished span of a stage adds
/// one to its count and its bytes. Shared by the pipeline's threads.
pub struct Progress {
    ui: Ui,
    multi: Option<MultiProgress>,
    state: Mutex<(Vec<StageState>, Box<dyn Write + Send>)>,
    t0: Instant,
}

/// The bars on the terminal now, for [`LogWriter`] to draw log lines around.
static ACTIVE: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Where log lines go: stderr, with any progress bars taken off the terminal while a line is
/// written and drawn again below it (a log line in the middle of a bar's redraw would leave a
/// stale copy of the bar behind). `tracing_subscriber`'s `with_writer(LogWriter::default)`.
#[derive(Default)]
pub struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let active = ACTIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match active {
            Some(m) => m.suspend(|| std::io::stderr().write_all(buf))?,
            None => std::io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Seconds between two JSON lines of one stage (its last line always goes out).
const JSON_INTERVAL: Duration = Duration::from_secs(1);

impl Progress {
    /// Progress over `stages` (name, unit counted, total), writing JSON lines (if asked for)
    /// to `out`.
    pub fn new(ui: Ui, stages: &[(&'static str, &'static str, u64)], out: Box<dyn Write + Send>) -> Progress {
        let multi = ui.bars.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        let style = ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg}, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let state = stages
            .iter()
            .map(|&(name, unit, total)| StageState {
                name,
                unit,
                total,
                done: 0,
                bytes: 0,
                started: None,
                bar: multi.as_ref().map(|m| {
                    let bar = m.add(ProgressBar::new(total).with_style(style.clone()).with_prefix(name));
                    bar.set_message(unit);
                    bar
                }),
                last_line: None,
            })
            .collect();
        if let Some(m) = &multi {
            *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some(m.clone());
        }
        Progress { ui, multi, state: Mutex::new((state, out)), t0: Instant::now() }
    }

    /// A finished span of `stage` that moved `bytes` (stages not tracked are ignored).
    pub fn step(&self, stage: &str, bytes: u64) {
        if !self.ui.bars && !self.ui.json {
            return;
        }
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (stages, out) = &mut *guard;
        let Some(s) = stages.iter_mut().find(|s| s.name == stage) else { return };
        let now = Instant::now();
        let started = *s.started.get_or_insert(now);
        s.done += 1;
        s.bytes += bytes;
        if let Some(bar) = &s.bar {
            bar.set_position(s.done.min(s.total));
            // indicatif's rates follow the position with four decimals: ours go in the message
            let secs = (now - started).as_secs_f64().max(1e-3);
            let rate = s.done as f64 / secs;
            let rate = if rate >= 10.0 { format!("{rate:.0}") } else { format!("{rate:.2}") };
            bar.set_message(format!("{}, {}, {rate} {}/s", s.unit, human_bytes(s.bytes), s.unit));
            bar.set_length(s.total.max(s.done));
            if s.done >= s.total {
                bar.finish_and_clear();
            }
        }
        let last = s.done >= s.total;
        if self.ui.json && (last || s.last_line.map_or(true, |t| now - t >= JSON_INTERVAL)) {
            s.last_line = Some(now);
            let line = json_line(s, now - started, self.t0.elapsed());
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }

    /// Clear every bar (a failed run leaves no half-drawn bars behind).
    pub fn clear(&self) {
        let guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for s in &guard.0 {
            if let Some(bar) = &s.bar {
                bar.finish_and_clear();
            }
        }
        if let Some(m) = &self.multi {
            let _ = m.clear();
            *ACTIVE.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// One JSON progress line of a stage.
fn json_line(s: &StageState, in_stage: Duration, elapsed: Duration) -> String {
    let secs = in_stage.as_secs_f64();
    let rate = if secs > 0.0 { s.done as f64 / secs } else { 0.0 };
    let eta = if rate > 0.0 { s.total.saturating_sub(s.done) as f64 / rate } else { 0.0 };
    serde_json::json!({
        "progress": s.name,
        "unit": s.unit,
        "done": s.done,
        "total": s.total,
        "bytes": s.bytes,
        "per_second": (rate * 100.0).round() / 100.0,
        "bytes_per_second": if secs > 0.0 { (s.bytes as f64 / secs).round() } else { 0.0 },
        "eta_seconds": (eta * 10.0).round() / 10.0,
        "elapsed_seconds": (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
    })
    .to_string()
}

/// Bytes as people read them (`1.2 GB`).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    match b {
        b if b >= 1e9 => format!("{:.2} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.0} kB", b / 1e3),
        _ => format!("{bytes} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_lines_parse_and_count_every_stage_to_its_total() {
        let out = Shared::default();
        let ui = Ui { quiet: false, bars: false, json: true };
        let p = Progress::new(ui, &[("read", "files", 3), ("write", "segments", 1)], Box::new(out.clone()));
        for _ in 0..3 {
            p.step("read", 100);
        }
        p.step("kernel", 5);
        p.step("write", 7);
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        // the first and the last line of each stage (the others fall inside one second)
        let read: Vec<_> = lines.iter().filter(|l| l["progress"] == "read").collect();
        assert_eq!(read.first().unwrap()["done"], 1);
        assert_eq!(read.last().unwrap()["done"], 3);
        assert_eq!(read.last().unwrap()["total"], 3);
        assert_eq!(read.last().unwrap()["bytes"], 300);
        assert_eq!(read.last().unwrap()["eta_seconds"], 0.0);
        let write: Vec<_> = lines.iter().filter(|l| l["progress"] == "write").collect();
        assert_eq!(write.len(), 1);
        assert_eq!(write[0]["bytes"], 7);
        assert!(lines.iter().all(|l| l["progress"] != "kernel"));
    }

    #[test]
    fn modes_choose_bars_or_lines() {
        let ui = Ui::with_mode(false, ProgressMode::Json);
        assert!(ui.json && !ui.bars);
        let ui = Ui::with_mode(true, ProgressMode::Bars);
        assert!(!ui.json && !ui.bars);
        let ui = Ui::with_mode(false, ProgressMode::Off);
        assert!(!ui.json && !ui.bars);
        assert_eq!(human_bytes(1_500_000_000), "1.50 GB");
        assert_eq!(human_bytes(999), "999 B");
    }
}
