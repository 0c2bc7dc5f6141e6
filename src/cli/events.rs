//! The flags of `sstclim events` as clap declares them, and their validation into
//! [`crate::run_events::EventsOptions`] and, with `--baseline`, into the `run` job that
//! computes the climatology first (the flags `run` has, by the same names, with
//! marineHeatWaves' defaults).

use std::path::PathBuf;

use clap::{Args, FromArgMatches};

use super::headings::{INPUT, JOB, OUTPUT, PERFORMANCE};
use super::run::RunArgs;
use crate::calendar::Calendar;
use crate::dist::Given;
use crate::events::files::store::Store;
use crate::events::Params;
use crate::output::OutputType;
use crate::plan::values::{ByteSize, YearRange};
use crate::plan::JobPlan;
use crate::run_events::EventsOptions;
use crate::smooth::Feb29;
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
    /// marineHeatWaves' defaults unless the flags below say otherwise: the same job as `sstclim run --layout climatology --years BASELINE --calendar hobday366
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

    /// Input: a directory, files, a glob, @list.txt, or a template (as for `run`).
    #[arg(long, short, required = true, num_args = 1.., help_heading = INPUT)]
    pub input: Vec<String>,

    /// Input variable (default: analysed_sst, sst, or the only gridded variable).
    #[arg(long, help_heading = INPUT)]
    pub var: Option<String>,

    /// Treat missing input files of the analysis years as missing values (they take the
    /// climatological mean, as marineHeatWaves fills gaps) instead of failing.
    #[arg(long, help_heading = INPUT)]
    pub allow_missing: bool,

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

    /// Memory budget for a band of cells' series (default: half the available memory).
    #[arg(long, help_heading = PERFORMANCE)]
    pub max_mem: Option<ByteSize>,

    /// Worker threads (default: every core).
    #[arg(long, help_heading = PERFORMANCE)]
    pub threads: Option<usize>,
}

impl EventsArgs {
    /// The job these flags ask for, or a one-line error. With --baseline the climatology is
    /// still to be computed ([`EventsArgs::baseline_plan`]); `climatology` is then empty.
    pub fn options(&self, command_line: String) -> anyhow::Result<EventsOptions> {
        if self.min_duration == 0 {
            anyhow::bail!("--min-duration must be at least 1");
        }
        let store = self.store()?;
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
        let (climatology, computed_from) = match (&self.climatology, &self.baseline) {
            (Some(path), _) => (path.clone(), None),
            (None, Some(years)) => {
                (PathBuf::new(), Some(format!("computed in this run from --baseline {}", year_text(years))))
            }
            (None, None) => anyhow::bail!(
                "events need a climatology: --climatology FILE (written by `sstclim run --layout climatology`) or --baseline YEARS to compute it in this run"
            ),
        };
        Ok(EventsOptions {
            input: self.input.join("\n"),
            output: self.output.clone(),
            var: self.var.clone(),
            years: self.years.0.clone(),
            climatology,
            computed_from,
            percentile: self.threshold(),
            params: Params {
                min_duration: self.min_duration,
                max_gap: (!self.no_join).then_some(self.max_gap),
                cold: self.cold,
            },
            both: self.both,
            calendar: self.calendar,
            max_mem: self.max_mem.as_ref().map(|m| m.0),
            threads: self.threads.unwrap_or_else(crate::plan::default_threads),
            allow_missing: self.allow_missing,
            overwrite: self.overwrite,
            store,
            command_line,
        })
    }

    /// How the outputs are stored: --output-type (f64 or f32), --deflate and --shuffle.
    fn store(&self) -> anyhow::Result<Store> {
        let float32 = match self.output_type {
            OutputType::F64 => false,
            OutputType::F32 => true,
            OutputType::I16 => anyhow::bail!("--output-type of events is f64 or f32 (int16 packing is for `run`)"),
        };
        if let Some(level) = self.deflate {
            if !(1..=9).contains(&level) {
                anyhow::bail!("--deflate must be 1-9, got {level}");
            }
        } else if self.shuffle.is_some() {
            anyhow::bail!("--shuffle shapes compressed outputs: it needs --deflate");
        }
        Ok(Store { float32, deflate: self.deflate, shuffle: self.shuffle.unwrap_or(true) })
    }

    /// The threshold's percentile: --percentile, else 90 (10 with --cold).
    fn threshold(&self) -> Percentile {
        match &self.percentile {
            Some(p) => p.clone(),
            None => (if self.cold { "10" } else { "90" }).parse().expect("a valid percentile"),
        }
    }

    /// With --baseline, the `run --layout climatology` job that computes the climatology (its
    /// output directory is set by the events job: a hidden directory it removes), validated as
    /// `run`'s flags are, with marineHeatWaves' defaults for the flags not given; `None` without.
    pub fn baseline_plan(&self, command_line: &str) -> anyhow::Result<Option<(JobPlan, Given)>> {
        let Some(years) = &self.baseline else { return Ok(None) };
        // `run`'s own defaults for everything events has no flag for (engine, pool, output type)
        let argv = [
            "run".to_string(),
            "--input=-".into(),
            "--output=.".into(),
            format!("--years={}", year_text(years)),
            "--layout=climatology".into(),
        ];
        let matches = RunArgs::augment_args(clap::Command::new("run")).try_get_matches_from(argv)?;
        let mut run = RunArgs::from_arg_matches(&matches)?;
        run.input = self.input.clone();
        run.var = self.var.clone();
        run.allow_missing = self.allow_missing;
        run.window.calendar = self.calendar;
        run.window.half_window = self.half_window.unwrap_or(5);
        run.window.window_edges = self.window_edges.unwrap_or(WindowEdges::Extend);
        run.window.feb29 = self.feb29.unwrap_or(Feb29::Interpolate);
        run.window.smooth = self.smooth.unwrap_or(31);
        run.percentile = if self.both {
            // the cold spells' threshold, then the heatwaves' (both computed in one job)
            vec!["10".parse().expect("a valid percentile"), "90".parse().expect("a valid percentile")]
        } else {
            vec![self.threshold()]
        };
        run.method = self.method.unwrap_or(Method::LINEAR);
        run.min_samples = self.min_samples.unwrap_or(1);
        run.threads = self.threads;
        run.max_mem = self.max_mem;
        let given = Given { threads: run.threads.is_some(), max_mem: run.max_mem.is_some(), device: false };
        let plan = super::validate::plan(&run, format!("{command_line} (the climatology of --baseline)"))?;
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
