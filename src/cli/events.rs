//! The flags of `sstclim events` as clap declares them, and their validation into
//! [`crate::run_events::EventsOptions`] and, with `--baseline`, into the `run` job that
//! computes the climatology first (the flags `run` has, by the same names, with
//! marineHeatWaves' defaults).

use std::path::PathBuf;

use clap::Args;

use super::args::{InputArgs, ResourceArgs};
use super::headings::{DIAGNOSTICS, JOB, OUTPUT, PERFORMANCE};
use crate::api::{Against, Climatology, Compute, EventKind, Events, EventsOut};
use crate::calendar::Calendar;
use crate::engine::Backend;
use crate::dist::Given;
use crate::events::files::store::Store;
use crate::output::OutputType;
use crate::plan::values::YearRange;
use crate::plan::JobPlan;
use crate::run_events::EventsOptions;
use crate::smooth::Feb29;
use crate::source::Source;
use crate::stats::percentile::{Method, Percentile};
use crate::window::WindowEdges;

/// Flags of `sstclim events`.
#[derive(Args, Debug, Clone)]
pub struct EventsArgs {
    /// Analysis years: every day of these years is searched for events.
    #[arg(long, default_value = "1982-2022", help_heading = JOB)]
    pub years: YearRange,

    /// The climatology: a climatology.nc written by `sstclim run --layout climatology` (checked
    /// against the input's variable, grid and calendar: a climatology of another CF calendar is
    /// refused).
    #[arg(long, help_heading = JOB, conflicts_with = "baseline")]
    pub climatology: Option<PathBuf>,

    /// Compute the climatology of these years (1983-2012) in this run, as marineHeatWaves.
    ///
    /// marineHeatWaves' defaults unless the flags below say otherwise: the same job as `sstclim run --layout climatology --baseline BASELINE --calendar hobday366
    /// --half-window 5 --method 7 --window-edges extend --feb29 interpolate --smooth 31
    /// --percentile P` (P the threshold's), written into a hidden directory of the output
    /// directory and removed once the events are written.
    #[arg(long, value_name = "YEARS", help_heading = JOB)]
    pub baseline: Option<YearRange>,

    /// The threshold's percentile, a variable of the climatology (default: 90, or 10 with --cold).
    #[arg(long, help_heading = JOB)]
    pub percentile: Option<Percentile>,

    /// Cold spells: days below the low threshold; intensities are reported negative.
    #[arg(long, help_heading = JOB)]
    pub cold: bool,

    /// Heatwaves (P90) and cold spells (P10) from one read of the inputs: both pairs of files.
    #[arg(long, help_heading = JOB, conflicts_with_all = ["cold", "percentile"])]
    pub both: bool,

    /// Runs of exceeding days shorter than this are not events.
    #[arg(long, default_value_t = 5, help_heading = JOB)]
    pub min_duration: usize,

    /// Events separated by at most this many days are joined into one.
    #[arg(long, default_value_t = 2, help_heading = JOB)]
    pub max_gap: usize,

    /// Never join events across gaps (marineHeatWaves' joinAcrossGaps=False).
    #[arg(long, help_heading = JOB)]
    pub no_join: bool,

    /// How days of year are numbered; must be the climatology's calendar_mode.
    ///
    /// Events run in the input's CF calendar, every one of them: in noleap/365_day,
    /// all_leap/366_day and 360_day the days of year are that calendar's (1-365, 1-366, 1-360;
    /// no day-60 shift), window and smoothing wrap around its year, and time_start, time_end,
    /// time_peak are days since 1970-01-01 in it, with its name as their calendar.
    #[arg(long, value_enum, default_value_t = Calendar::Hobday366, help_heading = JOB)]
    pub calendar: Calendar,

    /// With --baseline: days on each side of the target day [default: 5].
    #[arg(long, requires = "baseline", help_heading = JOB)]
    pub half_window: Option<u16>,

    /// With --baseline: percentile definition, type 1-9 or numpy's name [default: 7].
    ///
    /// Hyndman-Fan's types; 7 = linear = numpy's default, as marineHeatWaves.
    #[arg(long, requires = "baseline", help_heading = JOB)]
    pub method: Option<Method>,

    /// With --baseline: windows at the ends of the years: clip, extend or wrap [default: extend].
    ///
    /// extend (as marineHeatWaves) takes the input's days before and after the baseline years.
    #[arg(long, value_enum, value_name = "EDGES", requires = "baseline", help_heading = JOB, hide_possible_values = true)]
    pub window_edges: Option<WindowEdges>,

    /// With --baseline: day 60 under hobday366: window or interpolate [default: interpolate].
    #[arg(long, value_enum, requires = "baseline", help_heading = JOB, hide_possible_values = true)]
    pub feb29: Option<Feb29>,

    /// With --baseline: running mean of this odd width over the days of year [default: 31].
    ///
    /// 31 as marineHeatWaves; 1 = none.
    #[arg(long, value_name = "W", requires = "baseline", help_heading = JOB)]
    pub smooth: Option<u16>,

    /// With --baseline: cells with fewer valid samples in a window get none [default: 1].
    #[arg(long, requires = "baseline", help_heading = JOB)]
    pub min_samples: Option<usize>,

    #[command(flatten)]
    pub inputs: InputArgs,

    /// Output directory: events.nc and summary.nc (events_cold.nc and summary_cold.nc with --cold;
    /// all four with --both).
    #[arg(long, short, help_heading = OUTPUT)]
    pub output: PathBuf,

    /// Replace existing outputs.
    #[arg(long, help_heading = OUTPUT)]
    pub overwrite: bool,

    /// Stored type of the events' float fields (intensities, rates): f64 (exact) or f32.
    ///
    /// The summaries are float32 either way.
    #[arg(long, value_enum, default_value_t = OutputType::F64, help_heading = OUTPUT, hide_possible_values = true)]
    pub output_type: OutputType,

    /// Deflate level 1-9 of the summaries (default: uncompressed).
    ///
    /// Chunks are compressed on every write thread, as `run`'s compressed outputs.
    #[arg(long, help_heading = OUTPUT)]
    pub deflate: Option<u8>,

    /// HDF5's shuffle filter before deflate (default: on with --deflate).
    ///
    /// `--shuffle false` turns it off.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", help_heading = OUTPUT, hide_short_help = true)]
    pub shuffle: Option<bool>,

    /// Where events are detected: auto (a GPU if usable, else cpu), cpu, cuda or hip.
    ///
    /// Every backend finds the same events and summaries, bit for bit; the CPU scan is the
    /// reference (`reference` names it too). Asking for `cuda` or `hip` by name makes a
    /// missing device an error. With --baseline, the climatology is computed on it as well.
    #[arg(long, value_enum, default_value_t = Backend::Auto, help_heading = PERFORMANCE, hide_possible_values = true)]
    pub backend: Backend,

    #[command(flatten)]
    pub resources: ResourceArgs,

    /// Write the job's report as JSON: each stage's busy seconds (climatology, read, detect,
    /// write, overlapped) and the wall time in parts that add up to it.
    #[arg(long, value_name = "FILE", help_heading = DIAGNOSTICS)]
    pub timing_json: Option<PathBuf>,
}

impl EventsArgs {
    /// The library's events options these flags ask for.
    pub fn events(&self) -> Events {
        let kind = match (self.both, self.cold) {
            (true, _) => EventKind::Both,
            (false, true) => EventKind::Cold,
            (false, false) => EventKind::Heat,
        };
        Events {
            years: self.years.0.clone(),
            kind,
            percentile: self.percentile.clone(),
            min_duration: self.min_duration,
            max_gap: (!self.no_join).then_some(self.max_gap),
            calendar: self.calendar,
        }
    }

    /// Where the values come from (one input per line, see discover).
    pub fn source(&self) -> Source {
        self.inputs.source()
    }

    /// How the job computes: the threads, memory and missing days these flags give.
    pub fn compute(&self) -> Compute {
        Compute {
            backend: self.backend,
            threads: self.resources.threads,
            max_mem: self.resources.max_mem.as_ref().map(|m| m.0),
            allow_missing: self.inputs.allow_missing,
            ..Compute::auto()
        }
    }

    /// The job's options: the library's [`Events`] from these flags against the climatology
    /// file, or (with --baseline) against the one still to be computed
    /// ([`EventsArgs::baseline_plan`]; its path is set once it exists).
    pub fn options(&self, command_line: String) -> anyhow::Result<EventsOptions> {
        // clap lets a flag's `requires` go when the required flag conflicts with a given one
        if self.baseline.is_none() {
            let given = [
                ("--half-window", self.half_window.is_some()),
                ("--method", self.method.is_some()),
                ("--window-edges", self.window_edges.is_some()),
                ("--feb29", self.feb29.is_some()),
                ("--smooth", self.smooth.is_some()),
                ("--min-samples", self.min_samples.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
                anyhow::bail!("{flag} applies to --baseline only (a climatology file was computed with its own)");
            }
        }
        let against = match (&self.climatology, &self.baseline) {
            (Some(path), _) => Against::File(path.clone()),
            (None, Some(years)) => Against::Computed {
                file: PathBuf::new(),
                from: format!("computed in this run from --baseline {}", year_text(years)),
            },
            (None, None) => anyhow::bail!(
                "events need a climatology: --climatology FILE (written by `sstclim run --layout climatology`) or --baseline YEARS to compute it in this run"
            ),
        };
        let out = EventsOut { dir: self.output.clone(), overwrite: self.overwrite, store: self.store()?, command_line };
        Ok(self.events().options(self.source(), against, Some(&out), &self.compute())?)
    }

    /// How the outputs are stored: --output-type (f64 or f32), --deflate and --shuffle.
    fn store(&self) -> anyhow::Result<Store> {
        let float32 = match self.output_type {
            OutputType::F64 => false,
            OutputType::F32 => true,
            OutputType::I16 => anyhow::bail!("--output-type of events is f64 or f32 (int16 packing is for `run`)"),
        };
        if self.deflate.is_none() && self.shuffle.is_some() {
            anyhow::bail!("--shuffle shapes compressed outputs: it needs --deflate");
        }
        Ok(Store { float32, deflate: self.deflate, shuffle: self.shuffle.unwrap_or(true) })
    }

    /// With --baseline, the `run --layout climatology` job that computes the climatology (its
    /// output directory is set by the events job: a hidden directory it removes): the
    /// library's [`Climatology::hobday`] with the flags given, validated as `run`'s flags are;
    /// `None` without.
    pub fn baseline_plan(&self, command_line: &str) -> anyhow::Result<Option<(JobPlan, Given)>> {
        let Some(years) = &self.baseline else { return Ok(None) };
        let hobday = Climatology::hobday();
        let clim = Climatology {
            baseline: years.0.clone(),
            half_window: self.half_window.unwrap_or(hobday.half_window),
            window_edges: self.window_edges.unwrap_or(hobday.window_edges),
            feb29: self.feb29.unwrap_or(hobday.feb29),
            smooth: self.smooth.unwrap_or(hobday.smooth),
            method: self.method.unwrap_or(hobday.method),
            min_samples: self.min_samples.unwrap_or(hobday.min_samples),
            ..hobday
        };
        // `run`'s own defaults for everything events has no flag for (pool, rates)
        let compute = Compute {
            rates: crate::pipeline::tuning::rates::resolve(None, crate::util::knobs::location_env),
            ..self.compute()
        };
        let plan = self.events().baseline_plan(&self.source(), clim, &compute, command_line)?;
        let given = Given {
            threads: self.resources.threads.is_some(),
            max_mem: self.resources.max_mem.is_some(),
            device: false,
        };
        Ok(Some((plan, given)))
    }
}

/// `1983-2012` (or `2005` for one year), as the flag is written.
fn year_text(years: &YearRange) -> String {
    let (a, b) = (years.0.start(), years.0.end());
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}
