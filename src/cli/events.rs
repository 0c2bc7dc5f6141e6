//! The flags of `sstclim events` as clap declares them, and their validation into
//! [`crate::run_events::EventsOptions`].

use std::path::PathBuf;

use clap::Args;

use crate::calendar::Calendar;
use crate::events::Params;
use crate::percentile::Percentile;
use crate::plan::values::{ByteSize, YearRange};
use crate::run_events::EventsOptions;

/// Flags of `sstclim events`.
#[derive(Args, Debug, Clone)]
pub struct EventsArgs {
    /// Input files: a path template with {year}, {doy}, {month}, {day}, or a directory whose
    /// naming pattern is detected (the same inputs `run` reads).
    #[arg(long, short, help_heading = "Input")]
    pub input: String,

    /// Input variable (default: analysed_sst, sst, or the only gridded variable).
    #[arg(long, help_heading = "Input")]
    pub var: Option<String>,

    /// Treat missing input files of the analysis years as missing values (they take the
    /// climatological mean, as marineHeatWaves fills gaps) instead of failing.
    #[arg(long, help_heading = "Input")]
    pub allow_missing: bool,

    /// Output directory: events.nc and summary.nc (events_cold.nc and summary_cold.nc with --cold).
    #[arg(long, short, help_heading = "Output")]
    pub output: PathBuf,

    /// Replace existing outputs.
    #[arg(long, help_heading = "Output")]
    pub overwrite: bool,

    /// Analysis years: every day of these years is searched for events.
    #[arg(long, default_value = "1982-2022", help_heading = "Job")]
    pub years: YearRange,

    /// The climatology: a climatology.nc written by `sstclim run --layout climatology` (checked
    /// against the input's variable, grid and calendar).
    #[arg(long, help_heading = "Job", required_unless_present = "baseline")]
    pub climatology: Option<PathBuf>,

    /// Compute the climatology over these years in the same run (not yet supported).
    #[arg(long, help_heading = "Job", conflicts_with = "climatology")]
    pub baseline: Option<YearRange>,

    /// The threshold's percentile, a variable of the climatology (default: 90, or 10 with --cold).
    #[arg(long, help_heading = "Job")]
    pub percentile: Option<Percentile>,

    /// Cold spells: days below the low threshold; intensities are reported negative.
    #[arg(long, help_heading = "Job")]
    pub cold: bool,

    /// Runs of exceeding days shorter than this are not events.
    #[arg(long, default_value_t = 5, help_heading = "Job")]
    pub min_duration: usize,

    /// Events separated by at most this many days are joined into one.
    #[arg(long, default_value_t = 2, help_heading = "Job")]
    pub max_gap: usize,

    /// Never join events across gaps (marineHeatWaves' joinAcrossGaps=False).
    #[arg(long, help_heading = "Job")]
    pub no_join: bool,

    /// How days of year are numbered; must be the climatology's calendar_mode.
    #[arg(long, value_enum, default_value_t = Calendar::Hobday366, help_heading = "Job")]
    pub calendar: Calendar,

    /// Memory budget for a band of cells' series (default: half the available memory).
    #[arg(long, help_heading = "Performance")]
    pub max_mem: Option<ByteSize>,

    /// Worker threads (default: every core).
    #[arg(long, help_heading = "Performance")]
    pub threads: Option<usize>,
}

impl EventsArgs {
    /// The job these flags ask for, or a one-line error.
    pub fn options(&self, command_line: String) -> anyhow::Result<EventsOptions> {
        if self.baseline.is_some() {
            anyhow::bail!("--baseline not yet supported; run `sstclim run --layout climatology` first");
        }
        if self.min_duration == 0 {
            anyhow::bail!("--min-duration must be at least 1");
        }
        let climatology = self.climatology.clone().expect("clap requires --climatology without --baseline");
        let percentile = match &self.percentile {
            Some(p) => p.clone(),
            None => (if self.cold { "10" } else { "90" }).parse().expect("a valid percentile"),
        };
        Ok(EventsOptions {
            input: self.input.clone(),
            output: self.output.clone(),
            var: self.var.clone(),
            years: self.years.0.clone(),
            climatology,
            percentile,
            params: Params {
                min_duration: self.min_duration,
                max_gap: (!self.no_join).then_some(self.max_gap),
                cold: self.cold,
            },
            calendar: self.calendar,
            max_mem: self.max_mem.as_ref().map(|m| m.0),
            threads: self.threads.unwrap_or_else(crate::plan::default_threads),
            allow_missing: self.allow_missing,
            overwrite: self.overwrite,
            command_line,
        })
    }
}
