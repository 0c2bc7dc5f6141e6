//! sstclim's public API: the two jobs as typed options that validate into plans without a
//! command line, over a [`Source`] of files or values in memory, giving results in memory or
//! written to files.
//!
//! ```no_run
//! use sstclim::{Climatology, Compute, Events, Source};
//! let source = Source::files("data/sst_{year}_{doy}.nc", Some("sst"));
//! let clim = Climatology::hobday().baseline(1983..=2012).percentiles(&[10.0, 90.0]);
//! let thresholds = clim.compute(&source, &Compute::auto())?;
//! let events = Events::hobday().both().years(1982..=2022).detect(&source, &thresholds, &Compute::auto())?;
//! # Ok::<(), sstclim::Error>(())
//! ```
//!
//! Why the options are split in three: [`Climatology`]/[`Events`] say what is computed (what a
//! paper's methods section states), [`Compute`] how (which engine, threads, memory: never a
//! different answer), [`FilesOut`] where files go. The command line builds the same structs
//! from its flag groups (`cli`), so the CLI and a library caller run one validated plan.

mod climatology;
mod events;
mod memory;

use std::path::PathBuf;

pub use crate::pipeline::sink::ClimatologyResult;
pub use crate::run_events::{EventsJobError, KindValues as KindResult};
pub use climatology::Climatology;
pub use events::{Against, EventKind, Events, EventsOut, EventsResult};
pub use memory::{grid_1d, grid_2d, memory_source, Stored};

/// The integer fields of an event, in [`KindResult::events`]' `ints` order (`events.nc`'s names).
pub use crate::events::files::schema::INT_FIELDS as EVENT_INT_FIELDS;
/// The float fields of an event, in `floats` order (`events.nc`'s names).
pub use crate::events::metrics::FLOAT_FIELDS as EVENT_FLOAT_FIELDS;
/// The per-year statistics of [`KindResult::summary`], in order (`summary.nc`'s names).
pub use crate::events::summary::STATS as SUMMARY_STATS;

use crate::engine::{Backend, EngineError, GpuOptions};
use crate::output::{OutputFormat, OutputLayout, OutputSpec, WritePath};
use crate::plan::{default_threads, memory as budget, reports, GpuPool, JobPlan, PlanError, ReadPath};
use crate::pool::{PoolType, Quantize};
use crate::report::progress::{ProgressMode, Ui};
use crate::window::WindowPlan;

/// Where a job's results go: files (as `FilesOut` says) or memory.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Dest<'a> {
    Files(&'a FilesOut),
    Memory,
}

/// How a job computes (never what it computes: every choice gives the same values, or
/// values within the documented bound of a float32 or int16 pool).
#[derive(Clone, Debug, PartialEq)]
pub struct Compute {
    pub backend: Backend,
    /// GPU ordinal for GPU engines.
    pub device: usize,
    /// Worker threads (`None`: every core).
    pub threads: Option<usize>,
    /// Memory budget for a tile's pool and results, in bytes (`None`: the default budget).
    pub max_mem: Option<u64>,
    /// The pool's type (`None`: chosen by engine and input).
    pub pool: Option<PoolType>,
    /// Lossy int16 packing of float input.
    pub pack: Option<Quantize>,
    pub gpu: GpuOptions,
    pub gpu_pool: GpuPool,
    /// Missing days are missing values instead of an error.
    pub allow_missing: bool,
    pub read_path: ReadPath,
    /// Reader processes for files read through libnetcdf (`None`: as many as threads).
    pub readers: Option<usize>,
    /// Segments of the overlapped pipeline (`None`: chosen per job).
    pub segments: Option<usize>,
    /// The measured rates file the pipeline's tuning reads and records (`None`: off).
    pub rates: Option<PathBuf>,
    /// Recompute every tile with the reference engine and compare.
    pub verify: bool,
}

/// [`Compute`] with every knob resolved to its default.
pub(crate) struct Resolved {
    pub threads: usize,
    pub max_mem: u64,
    pub readers: usize,
    pub pool: Option<PoolType>,
    pub gpu: GpuOptions,
}

impl Compute {
    /// A GPU where one is usable, else the CPU; every core; the default memory budget.
    pub fn auto() -> Compute {
        Compute {
            backend: Backend::Auto,
            device: 0,
            threads: None,
            max_mem: None,
            pool: None,
            pack: None,
            gpu: GpuOptions::default(),
            gpu_pool: GpuPool::Device,
            allow_missing: false,
            read_path: ReadPath::Auto,
            readers: None,
            segments: None,
            rates: None,
            verify: false,
        }
    }

    /// The CPU engine.
    pub fn cpu() -> Compute {
        Compute { backend: Backend::Cpu, ..Compute::auto() }
    }

    pub fn threads(mut self, n: usize) -> Compute {
        self.threads = Some(n);
        self
    }

    pub(crate) fn resolve(&self) -> Result<Resolved, PlanError> {
        budget::fit_allocator_to_address_limit();
        let threads = match self.threads {
            Some(0) => return Err(PlanError::Threads),
            Some(n) => n,
            None => default_threads(),
        };
        let max_mem = match self.max_mem {
            Some(m) if m < 1 << 20 => return Err(PlanError::MaxMem(m)),
            Some(m) => m,
            None => budget::default_max_mem(),
        };
        let readers = match self.readers {
            Some(0) => return Err(PlanError::Readers),
            Some(n) => n,
            None => threads,
        };
        if self.segments == Some(0) {
            return Err(PlanError::Segments);
        }
        if let Some(m) = self.gpu.max_device_mem.filter(|&m| m < 1 << 20) {
            return Err(PlanError::MaxDeviceMem(m));
        }
        let pool = match (self.pack, self.pool) {
            (Some(q), _) if !(q.scale > 0.0 && q.scale.is_finite() && q.offset.is_finite()) => {
                return Err(PlanError::PackScale(q.scale.to_string(), q.offset.to_string()))
            }
            (Some(_), None) => Some(PoolType::I16),
            (Some(_), Some(p)) if p != PoolType::I16 => return Err(PlanError::PackPool),
            (_, p) => p,
        };
        Ok(Resolved { threads, max_mem, readers, pool, gpu: self.gpu.clone() })
    }
}

/// Where and how a job's files are written (the layouts and storage of `sstclim run`'s
/// outputs), with the reports beside them.
#[derive(Clone, Debug, PartialEq)]
pub struct FilesOut {
    pub dir: PathBuf,
    pub layout: OutputLayout,
    /// Deflate level 1-9 (`None`: uncompressed).
    pub deflate: Option<u8>,
    pub fill_value: f64,
    /// Replace outputs that exist.
    pub overwrite: bool,
    pub write_path: WritePath,
    pub write_threads: Option<usize>,
    pub format: OutputFormat,
    pub timing_json: Option<PathBuf>,
    pub trace_json: Option<PathBuf>,
    /// What the outputs' `history` attribute records as the command.
    pub command_line: String,
}

impl FilesOut {
    /// One file per statistic and day in `dir` (`run`'s default layout), float64.
    pub fn new(dir: impl Into<PathBuf>) -> FilesOut {
        FilesOut {
            dir: dir.into(),
            layout: OutputLayout::PerDoy,
            deflate: None,
            fill_value: crate::plan::DEFAULT_FILL_VALUE,
            overwrite: false,
            write_path: WritePath::Auto,
            write_threads: None,
            format: OutputFormat::default(),
            timing_json: None,
            trace_json: None,
            command_line: "sstclim (library)".into(),
        }
    }

    /// The one climatology file `sstclim events` reads (`--layout climatology`).
    pub fn climatology(dir: impl Into<PathBuf>) -> FilesOut {
        FilesOut { layout: OutputLayout::Climatology, ..FilesOut::new(dir) }
    }

    pub(crate) fn spec(&self) -> OutputSpec {
        OutputSpec {
            dir: self.dir.clone(),
            layout: self.layout,
            deflate: self.deflate,
            fill_value: self.fill_value,
            overwrite: self.overwrite,
            write_path: self.write_path,
            write_threads: self.write_threads,
            format: self.format.clone(),
        }
    }

    /// The storage against itself and the climatology's days.
    pub(crate) fn validate(&self, clim: &Climatology) -> Result<(), PlanError> {
        if let Some(level) = self.deflate.filter(|l| !(1..=9).contains(l)) {
            return Err(PlanError::Deflate(level));
        }
        if self.write_threads == Some(0) {
            return Err(PlanError::WriteThreads);
        }
        if self.layout != OutputLayout::Climatology {
            return Ok(());
        }
        // a climatology holds every day of the input's year: 1-360, 1-365 or 1-366 by its
        // calendar (checked against it once the inputs are found, see `run::find_inputs`)
        let n = crate::smooth::year_length(clim.calendar, &clim.baseline);
        let whole_year = |d: &[u16]| [360, 365, 366, n].iter().any(|&k| d.iter().copied().eq(1..=k));
        match &clim.doys {
            Some(doys) if !whole_year(doys) => {
                let (first, last) = (doys.first().copied().unwrap_or(0), doys.last().copied().unwrap_or(0));
                let doys = if doys.len() == usize::from(last - first + 1) {
                    format!("{first}-{last}")
                } else {
                    format!("({} days)", doys.len())
                };
                Err(PlanError::ClimatologyDoys(format!("{doys}, not 1-{n}")))
            }
            _ => Ok(()),
        }
    }
}

/// The checks of a whole plan: its report paths (onto no file of the job nor each other, then
/// writable) and a named GPU backend's limits.
fn check_plan(plan: &JobPlan) -> Result<(), PlanError> {
    if plan.source.memory().is_none() {
        reports::check_before_reading(plan)?;
    }
    for (flag, path) in [("--timing-json", &plan.timing_json), ("--trace-json", &plan.trace_json)] {
        if let Some(path) = path {
            reports::check_writable(flag, path)?;
        }
    }
    check_gpu_limits(plan)
}

/// A job that asks for a GPU backend by name and exceeds what its kernel takes on any device
/// (percentiles, window length) is refused here, before anything is read. `auto` may fall
/// back to the CPU engine, which has no such limits, so it is checked when the engine starts.
fn check_gpu_limits(plan: &JobPlan) -> Result<(), PlanError> {
    let backend = match plan.backend {
        Backend::Cuda => "cuda",
        Backend::Hip => "hip",
        _ => return Ok(()),
    };
    // missing files (--allow-missing) only shorten windows: every date present is the bound
    let windows = WindowPlan::build(&plan.window, |_| true);
    let window_days = windows.targets.iter().map(|t| t.groups.len()).max().unwrap_or(0);
    match crate::engine::check_gpu_limits(backend, plan.stats.percentiles.len(), window_days) {
        Err(EngineError::Launch { cause, .. }) => Err(PlanError::GpuLimits { backend, cause }),
        _ => Ok(()),
    }
}

/// A library call reports nothing on the terminal.
fn quiet() -> Ui {
    Ui::with_mode(true, ProgressMode::Off)
}
