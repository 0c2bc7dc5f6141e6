//! Stage timing and the end-of-run report: a table for people, JSON for scripts.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::shares::WallShares;

/// The stages of a run, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Discover,
    Read,
    /// Copying the pool to the device (GPU engines).
    HostToDevice,
    /// Device kernels (GPU engines), synchronized before the clock stops.
    Kernel,
    /// Copying results back from the device (GPU engines).
    DeviceToHost,
    /// Host engines' computation, and a GPU engine's host-side work around its launches.
    Compute,
    Verify,
    Write,
}

impl Stage {
    pub const ALL: [Stage; 8] = [
        Stage::Discover,
        Stage::Read,
        Stage::HostToDevice,
        Stage::Kernel,
        Stage::DeviceToHost,
        Stage::Compute,
        Stage::Verify,
        Stage::Write,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Discover => "discover",
            Stage::Read => "read/decode",
            Stage::HostToDevice => "host-to-device",
            Stage::Kernel => "kernel",
            Stage::DeviceToHost => "device-to-host",
            Stage::Compute => "compute",
            Stage::Verify => "verify",
            Stage::Write => "write",
        }
    }
}

/// Accumulated time per stage.
#[derive(Clone, Debug, Default)]
pub struct StageTimer {
    totals: [Duration; 8],
}

impl StageTimer {
    /// Run `f`, adding its duration to `stage`.
    pub fn time<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        self.totals[stage as usize] += start.elapsed();
        r
    }

    /// Add a duration measured elsewhere (device events, say) to `stage`.
    pub fn add(&mut self, stage: Stage, elapsed: Duration) {
        self.totals[stage as usize] += elapsed;
    }

    pub fn seconds(&self, stage: Stage) -> f64 {
        self.totals[stage as usize].as_secs_f64()
    }
}

/// Seconds per stage, as reported.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StageSeconds {
    pub discover: f64,
    pub read: f64,
    pub h2d: f64,
    pub kernel: f64,
    pub d2h: f64,
    pub compute: f64,
    pub verify: f64,
    pub write: f64,
}

/// What a run did and how long it took.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub sstclim_version: &'static str,
    pub backend: String,
    /// The device a GPU engine ran on (`cpu` for host engines).
    pub device: String,
    pub pool: String,
    pub threads: usize,
    pub grid: [usize; 2],
    pub cells: usize,
    pub target_days: usize,
    pub tiles: usize,
    /// Segments of target days per tile in the overlapped pipeline (1: sequential).
    pub segments: usize,
    /// Where the pool lived: `host` (engines on the CPU, or pinned host memory copied in per
    /// segment) or `device` (GPU engines: files went from staging rows into device memory).
    pub pool_location: &'static str,
    pub files_read: usize,
    pub files_missing: usize,
    /// File opens including re-reads of every file per tile.
    pub file_reads: usize,
    /// File reads that took the direct `pread` path, and those that went through libnetcdf.
    pub files_direct: usize,
    pub files_library: usize,
    pub bytes_read: u64,
    /// Bytes compressed chunks inflated to on the direct path (0: no compressed input).
    pub bytes_decompressed: u64,
    /// Bytes copied to and from the device by GPU engines.
    pub bytes_h2d: u64,
    pub bytes_d2h: u64,
    /// The device set-up threads' time (compiling the kernel on the first tile, waiting for the
    /// result buffers to be committed, page-locking the host pool and the result buffers) plus
    /// pinning inside compute calls; `span_totals` splits it (`prepare`, `result-buffers`,
    /// `pin`, `pin-results`). The staging rows' allocation is the `stage-rows` span.
    pub pin_seconds: f64,
    pub kernel_launches: usize,
    pub outputs: usize,
    pub verified: bool,
    pub stage_seconds: StageSeconds,
    pub wall_seconds: f64,
    pub peak_rss_bytes: u64,
    /// The host memory budget (`--max-mem`) the tiles were planned within.
    pub max_mem_bytes: u64,
    /// Device memory the engine held at its peak (GPU engines), and its budget if given.
    pub device_memory_bytes: Option<u64>,
    pub max_device_mem_bytes: Option<u64>,
    /// Releasing the engine after the run (device memory and context), not in `wall_seconds`.
    pub teardown_seconds: f64,
    /// From the start of `main` to the start of the run (MPI start-up, argument parsing).
    pub startup_seconds: f64,
    /// Where `segments` came from: `option` (`--segments`), `defaults` (no measured rates) or
    /// `measured` (the pipeline model on the rates file's measurements), and why.
    pub segments_source: &'static str,
    pub segments_reason: String,
    /// Fewest segments whose result buffers fit the memory limits.
    pub segments_memory_min: usize,
    /// The model's predicted seconds (all tiles) by number of segments (measured rates only).
    pub segments_predicted_seconds: std::collections::BTreeMap<usize, f64>,
    /// The rates file read and recorded into (`None`: `--rates none`), and whether this run's
    /// measurements were recorded (not with `--verify`, nor where the file could not be written).
    pub rates_file: Option<String>,
    pub rates_recorded: bool,
    /// Where the wall time went, in parts that add up to it (start-up, each stage alone,
    /// overlapped stages, other, device release, publish; publish is 0 in the JSON, which is
    /// written before the outputs are published).
    pub wall_shares: WallShares,
    /// Every kind of span in the run's timeline, summed over threads and tiles: the split the
    /// stage times hide (how long the reader threads were busy and on a processor, how long
    /// they waited for a staging row, the uploads, and the device set-up's steps: compiling,
    /// committing and pinning the result buffers, the staging rows).
    pub span_totals: std::collections::BTreeMap<&'static str, SpanTotal>,
}

/// One kind of span summed over the run: how many, their seconds (summed, so threads working
/// at once count each), and the processor seconds where measured (reads).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpanTotal {
    pub count: usize,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
}

impl RunReport {
    pub fn stage_seconds(timer: &StageTimer) -> StageSeconds {
        StageSeconds {
            discover: timer.seconds(Stage::Discover),
            read: timer.seconds(Stage::Read),
            h2d: timer.seconds(Stage::HostToDevice),
            kernel: timer.seconds(Stage::Kernel),
            d2h: timer.seconds(Stage::DeviceToHost),
            compute: timer.seconds(Stage::Compute),
            verify: timer.seconds(Stage::Verify),
            write: timer.seconds(Stage::Write),
        }
    }

    /// The summary table printed at the end of a run: each stage's busy time, and the wall
    /// time in parts that add up to 100 % (stages alone, overlapped, other, and the parts
    /// before and after the pipeline).
    pub fn table(&self) -> String {
        let rows = self.stage_rows();
        let walls: Vec<f64> = rows.iter().filter_map(|r| r.2).collect();
        let mut tenths = super::shares::tenths_of_percent(&walls).into_iter();
        let mut out = format!("{:<16}{:>9}{:>9}{:>8}\n", "stage", "busy s", "wall s", "share");
        for (name, busy, wall, note) in rows {
            let busy = busy.map_or(String::new(), |b| format!("{b:.3}"));
            let (wall_s, share) = match wall {
                Some(x) => (format!("{x:.3}"), format!("{:.1}%", tenths.next().unwrap_or(0) as f64 / 10.0)),
                None => (String::new(), String::new()),
            };
            let note = if note.is_empty() { String::new() } else { format!("  {note}") };
            let line = format!("{name:<16}{busy:>9}{wall_s:>9}{share:>8}{note}");
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push_str(&format!("{:<16}{:>9}{:>9.3}{:>8}\n", "total (wall)", "", self.wall_shares.total(), "100.0%"));
        out.push_str(&self.facts());
        out
    }

    /// The table's rows: (name, busy seconds, wall seconds, note); the wall parts add up to the
    /// total.
    fn stage_rows(&self) -> Vec<(String, Option<f64>, Option<f64>, String)> {
        let s = &self.stage_seconds;
        let w = &self.wall_shares;
        let mut rows: Vec<(String, Option<f64>, Option<f64>, String)> = Vec::new();
        let mut row = |name: &str, busy: Option<f64>, wall: Option<f64>, note: &str| {
            rows.push((name.to_string(), busy, wall, note.to_string()));
        };
        row("start-up", None, Some(w.startup), "");
        row("discover", Some(s.discover), None, "");
        let alone = |g: &str| w.alone.get(g).copied().unwrap_or(0.0);
        row("read/decode", Some(s.read), Some(alone("read/decode")), "alone");
        for (name, secs) in [("host-to-device", s.h2d), ("kernel", s.kernel), ("device-to-host", s.d2h)] {
            if secs > 0.0 {
                row(&format!("  {name}"), Some(secs), None, "");
            }
        }
        row("compute", Some(s.compute), Some(alone("compute")), "alone");
        if s.verify > 0.0 {
            row("verify", Some(s.verify), Some(alone("verify")), "alone");
        }
        row("write", Some(s.write), Some(alone("write")), "alone");
        if !w.overlapped.is_empty() {
            let mut parts: Vec<(&String, &f64)> = w.overlapped.iter().collect();
            parts.sort_by(|a, b| b.1.total_cmp(a.1));
            // the three longest combinations (all of them are in --timing-json)
            let mut note = parts.iter().take(3).map(|(k, v)| format!("{k} {v:.2} s")).collect::<Vec<_>>().join(", ");
            if parts.len() > 3 {
                note += ", ...";
            }
            row("overlapped", None, Some(w.overlapped_seconds()), &note);
        }
        row("other", None, Some(w.other), "engine start, allocation, waits");
        row("device release", None, Some(w.device_release), "");
        row("publish", None, Some(w.publish), "");
        rows
    }

    /// The lines under the table: segments, files and bytes read, the job's size and engine,
    /// device traffic, memory.
    fn facts(&self) -> String {
        let s = &self.stage_seconds;
        let mut out = String::new();
        if self.segments > 1 {
            out.push_str(&format!(
                "{} segments of target days: reading, computing and writing overlap (busy times add up to more than the wall time)\n",
                self.segments
            ));
        }
        let gb = self.bytes_read as f64 / 1e9;
        out.push_str(&format!(
            "files {} read ({} missing, {} opens: {} direct, {} through libnetcdf), {:.2} GB stored data ({:.2} GB/s while reading)\n",
            self.files_read,
            self.files_missing,
            self.file_reads,
            self.files_direct,
            self.files_library,
            gb,
            if s.read > 0.0 { gb / s.read } else { 0.0 }
        ));
        if self.bytes_decompressed > 0 {
            let (gb_out, secs) = (self.bytes_decompressed as f64 / 1e9, s.read.max(1e-9));
            out.push_str(&format!(
                "compressed input: {gb:.3} GB stored inflated to {gb_out:.3} GB ({:.2} GB/s decompressed while reading)\n",
                gb_out / secs
            ));
        }
        out.push_str(&format!(
            "cells {} ({} x {}) x {} target days in {} tile(s); backend {}, pool {}, {} threads; {} output files{}\n",
            self.cells,
            self.grid[0],
            self.grid[1],
            self.target_days,
            self.tiles,
            self.backend,
            self.pool,
            self.threads,
            self.outputs,
            if self.verified { "; verified bitwise against the reference engine" } else { "" }
        ));
        if self.bytes_h2d > 0 {
            let rate = |bytes: u64, secs: f64| if secs > 0.0 { bytes as f64 / secs / 1e9 } else { 0.0 };
            out.push_str(&format!(
                "device {}: {:.2} GB to the device ({:.1} GB/s), {:.2} GB back ({:.1} GB/s), {} launch(es), pinning {:.3} s\n",
                self.device,
                self.bytes_h2d as f64 / 1e9,
                rate(self.bytes_h2d, s.h2d),
                self.bytes_d2h as f64 / 1e9,
                rate(self.bytes_d2h, s.d2h),
                self.kernel_launches,
                self.pin_seconds
            ));
        }
        out.push_str(&format!(
            "peak RSS {:.2} GB (--max-mem {:.2} GB for pools and results)",
            self.peak_rss_bytes as f64 / 1e9,
            self.max_mem_bytes as f64 / 1e9
        ));
        if let Some(dev) = self.device_memory_bytes {
            out.push_str(&format!("; device memory {:.2} GB", dev as f64 / 1e9));
            if let Some(max) = self.max_device_mem_bytes {
                out.push_str(&format!(" (--max-device-mem {:.2} GB)", max as f64 / 1e9));
            }
        }
        out.push('\n');
        out
    }

    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        write_report_json(self, path)
    }
}

/// A report as written: its own fields, then `environment`, the `SSTCLIM_*` variables the
/// run took from the environment ([`crate::util::knobs::set_knobs`]), so that a measurement
/// names the knobs it ran under.
#[derive(Serialize)]
struct WithEnvironment<'a, T: Serialize> {
    #[serde(flatten)]
    report: &'a T,
    environment: std::collections::BTreeMap<&'static str, String>,
}

/// Write `report` as pretty JSON with the run's environment knobs added (see
/// [`WithEnvironment`]).
pub fn write_report_json<T: Serialize>(report: &T, path: &Path) -> std::io::Result<()> {
    let environment = crate::util::knobs::set_knobs().into_iter().collect();
    super::write_json(&WithEnvironment { report, environment }, path)
}

/// When `main` started (set first thing in `main`), to report start-up time.
pub static PROCESS_START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Seconds from `main`'s start to now (0 where `main` did not record its start).
pub fn since_process_start() -> f64 {
    PROCESS_START.get().map_or(0.0, |t| t.elapsed().as_secs_f64())
}

/// Peak resident set size of this process so far, in bytes.
pub fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage writes into the zeroed struct we pass; RUSAGE_SELF is always valid.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0 {
            (usage.ru_maxrss as u64) * 1024
        } else {
            0
        }
    }
}
