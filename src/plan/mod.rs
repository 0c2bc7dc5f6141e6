//! What a job is: [`JobPlan`], the validated form of `sstclim run`'s flags, and the types the
//! stages take from it ([`ReadPath`], [`GpuPool`]), with the values flags parse into
//! ([`values`]) and the default memory budget ([`memory`]). The command line validates its
//! flags into a plan (`cli::validate`); the job, the pipeline and the stages read the plan and
//! never the command line.

pub mod memory;
pub mod reports;
pub mod values;

use std::path::PathBuf;

use crate::engine::{Backend, GpuOptions};
use crate::input::Storage;
use crate::output::OutputSpec;
use crate::pool::{PoolType, Quantize};
use crate::smooth::DayRules;
use crate::source::Source;
use crate::stats::StatSpec;
use crate::window::WindowSpec;

/// A validated `run` job: what the job layer (`run`, `dist`) and the pipeline take.
#[derive(Clone, Debug)]
pub struct JobPlan {
    /// Where the values come from: files or memory.
    pub source: Source,
    pub window: WindowSpec,
    /// `--doys` was given (not its default 1-366, every day of the input's year): days past
    /// the input calendar's year are an error rather than left out.
    pub doys_given: bool,
    /// Window edges, Feb 29 and smoothing (the days computed are
    /// [`DayRules::computed_spec`] of `window`; those of `window` are written).
    pub rules: DayRules,
    pub stats: StatSpec,
    pub output: OutputSpec,
    /// Whether the results are written (`output`) or kept in memory.
    pub results: Results,
    pub allow_missing: bool,
    pub backend: Backend,
    /// `None`: chosen once the engine and the input's storage are known.
    pub pool: Option<PoolType>,
    /// Lossy int16 packing of float input (`--pack-scale`).
    pub pack: Option<Quantize>,
    /// GPU ordinal for GPU engines.
    pub device: usize,
    pub gpu: GpuOptions,
    pub threads: usize,
    /// Budget for the pool and results of one tile, in bytes.
    pub max_mem: u64,
    pub verify: bool,
    pub timing_json: Option<PathBuf>,
    /// Where to write the per-rank timeline of stages.
    pub trace_json: Option<PathBuf>,
    /// This process's rank and the number of ranks (for the timeline; (0, 1) when alone).
    pub rank: (usize, usize),
    /// How input files are read.
    pub read_path: ReadPath,
    /// Reader processes at a time for files read through libnetcdf.
    pub readers: usize,
    /// Segments of target days in the overlapped pipeline (`None`: chosen per job).
    pub segments: Option<usize>,
    /// The measured rates file (`None`: off; the pipeline's tuning reads and records it).
    pub rates: Option<PathBuf>,
    /// Where a GPU engine's pool lives.
    pub gpu_pool: GpuPool,
    /// The command line, for the outputs' `history` attribute.
    pub command_line: String,
}

/// Where a job's results go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Results {
    /// Files, as the plan's `OutputSpec` says, published when complete.
    Files,
    /// Arrays in memory, returned to the caller (a library call).
    Memory,
}

/// How input files are read (`--read-path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadPath {
    /// `pread` where the variable is contiguous and uncompressed; otherwise libnetcdf (in
    /// reader processes when the first file is not read directly, else in this process).
    Auto,
    /// libnetcdf for every file, in this process (one reading thread, decoding on the
    /// others): the sequential reference.
    Library,
    /// libnetcdf for every file, in forked reader processes (`--readers` at a time).
    Forked,
}

/// Where a GPU rank keeps its pool (`--gpu-pool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuPool {
    /// In device memory, filled through small pinned staging rows.
    Device,
    /// In pinned host memory, copied to the device segment by segment.
    Host,
}

/// The outputs' `_FillValue` when not given (`--fill-value`): NetCDF's default fill value of
/// float.
pub const DEFAULT_FILL_VALUE: f64 = 9.969_209_968_386_869e36;

/// The pool type when `--pool` is not given: the input's own int16 integers for int16-packed
/// input on every engine (exact, a quarter of float64's bytes; on the CPU of the dev VM 1.2-2x
/// faster with a third of the peak memory and bitwise equal results, see
/// bench-results/runs/2026-12-02-vm-pool-default), float32 on GPU engines for inputs stored as
/// floats (half the bytes; results equal the CPU engine on the same pool), else float64 (exact).
pub fn default_pool(on_device: bool, storage: Storage) -> PoolType {
    match storage {
        Storage::I16 => PoolType::I16,
        Storage::F32 | Storage::F64 if on_device => PoolType::F32,
        _ => PoolType::F64,
    }
}

/// Every worker thread the machine offers (the default of `--threads`).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("--half-window {0} is too large (at most 182 days on each side)")]
    HalfWindow(u16),
    #[error("--smooth {0}: the width must be odd and between 1 and the year's {1} days")]
    Smooth(u16, u16),
    #[error("--feb29 interpolate fills day 60 of --calendar hobday366; the ordinal calendar has no fixed Feb 29 day")]
    Feb29Calendar,
    #[error("--smooth {0} over an ordinal year without leap years (365 days): --doys cannot ask for day 366")]
    SmoothDay366(u16),
    #[error("--layout climatology writes the days of the whole year: --doys {0} leaves some out (use the per-doy or stacked layout for part of the year)")]
    ClimatologyDoys(String),
    #[error("--percentile lists {0} twice")]
    DuplicatePercentile(String),
    #[error("--min-samples must be at least 1")]
    MinSamples,
    #[error("--deflate must be 1-9, got {0}")]
    Deflate(u8),
    #[error("--output-type i16 needs --output-scale S (value = O + S x stored, with --output-offset O)")]
    OutputScaleMissing,
    #[error("--output-scale {0} / --output-offset {1}: the scale must be positive and both finite")]
    OutputScale(String, String),
    #[error("--output-scale and --output-offset pack into int16: they go with --output-type i16 only")]
    OutputScaleType,
    #[error("--output-type {0}: the fill value {1} (--fill-value) is not finite or NaN in that type")]
    OutputFill(&'static str, String),
    #[error("--chunks and --shuffle shape compressed outputs: they need --deflate")]
    ChunksWithoutDeflate,
    #[error("--pack-scale packs into the int16 pool: it does not go with another --pool")]
    PackPool,
    #[error("--pack-scale {0} / --pack-offset {1}: the scale must be positive and both finite")]
    PackScale(String, String),
    #[error("--readers must be at least 1")]
    Readers,
    #[error("--segments must be at least 1")]
    Segments,
    #[error("--threads must be at least 1")]
    Threads,
    #[error("--write-threads must be at least 1")]
    WriteThreads,
    #[error("--max-mem {0} bytes is too small (at least 1M)")]
    MaxMem(u64),
    #[error("{flag} {}: {problem}", path.display())]
    ReportPath { flag: &'static str, path: PathBuf, problem: String },
    #[error("--max-device-mem {0} bytes is too small (at least 1M)")]
    MaxDeviceMem(u64),
    #[error("--quicklook {day}: not a target day of this job (--doys {doys})")]
    QuicklookDay { day: u16, doys: String },
    /// `--backend cuda|hip` asked for a job the GPU kernel cannot take on any device.
    #[error("--backend {backend}: {cause}")]
    GpuLimits { backend: &'static str, cause: crate::engine::gpu::LaunchError },
}
