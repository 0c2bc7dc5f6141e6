//! The command line, the top layer below `main`: the subcommands and their flags as clap
//! declares them ([`run`], [`tools`]; the benchmarks' own in `crate::bench`, with the `bench`
//! feature), and their validation into what the layers below take ([`validate`]: `run`'s
//! flags into a [`crate::plan::JobPlan`]; the tools' into their option structs). Nothing below
//! this module imports it.

pub mod args;
pub(crate) mod entry;
pub mod demo;
pub mod events;
pub mod run;
pub mod tools;
mod usage;
pub mod validate;

use clap::{Parser, Subcommand};

use crate::report::progress::ProgressMode;
use events::EventsArgs;
use headings::DIAGNOSTICS;
use run::RunArgs;
use tools::{CompareArgs, DemoArgs, GenerateArgs, QuicklookArgs};

/// The help headings every flag sits under, in the order `--help` shows them (a flag's
/// heading says what it is about; the common flags come first within each).
pub mod headings {
    /// What is computed: years, days, window, statistics.
    pub const JOB: &str = "Job";
    /// Where the data comes from and how it is read.
    pub const INPUT: &str = "Input";
    /// What is written, where and how.
    pub const OUTPUT: &str = "Output";
    /// Engines, memory, threads and the pipeline's tuning.
    pub const PERFORMANCE: &str = "Performance";
    /// Checking, reports, progress and logging.
    pub const DIAGNOSTICS: &str = "Diagnostics";
    /// All of them, in order.
    pub const ALL: [&str; 5] = [JOB, INPUT, OUTPUT, PERFORMANCE, DIAGNOSTICS];
}

/// Day-of-year climatologies (mean and exact percentile thresholds) of daily gridded NetCDF data.
#[derive(Parser, Debug)]
#[command(
    name = "sstclim",
    version,
    about,
    propagate_version = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Cli {
    /// Print help (-h: the common flags; --help: all of them, with details).
    #[arg(short, long, action = clap::ArgAction::Help, global = true, help_heading = DIAGNOSTICS)]
    help: Option<bool>,

    /// Print the version.
    #[arg(short = 'V', long, action = clap::ArgAction::Version, help_heading = DIAGNOSTICS)]
    version: Option<bool>,

    #[command(subcommand)]
    pub command: Command,

    /// Only warnings in the log and no progress bars.
    ///
    /// RUST_LOG overrides the log level (RUST_LOG=sstclim=debug shows the pipeline's
    /// choices and predictions).
    #[arg(long, short, global = true, help_heading = DIAGNOSTICS)]
    pub quiet: bool,

    /// Progress: auto (bars on a terminal), bars, json (lines on stderr) or off.
    ///
    /// `json` lines carry the stage (read, compute, write), what is counted, done, total,
    /// bytes, the rate and the estimated seconds left; at most one a second per stage, and
    /// always the last.
    #[arg(long, global = true, value_enum, default_value_t = ProgressMode::Auto, help_heading = DIAGNOSTICS, hide_possible_values = true)]
    pub progress: ProgressMode,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compute the climatology: mean and percentiles for every target day and cell.
    #[command(
        disable_help_flag = true,
        after_help = "More flags (read and write paths, GPU, pipeline tuning, packing): sstclim run --help"
    )]
    Run(RunArgs),
    /// Detect marine heatwaves (or cold spells) in every cell against a climatology file:
    /// events.nc (one record per event) and summary.nc (per-year statistics).
    Events(EventsArgs),
    /// Write a synthetic OSTIA-like daily dataset (one NetCDF file per day).
    #[command(disable_help_flag = true)]
    Generate(GenerateArgs),
    /// Compare two result sets (directories or files); exit 1 past --tolerance, 2 where a file
    /// cannot be compared.
    #[command(disable_help_flag = true)]
    Compare(CompareArgs),
    /// Generate a small dataset, run the job, check it against the reference engine and draw maps.
    #[command(disable_help_flag = true)]
    Demo(DemoArgs),
    /// Draw a map (PNG) of one statistic and day of an output file.
    #[command(disable_help_flag = true)]
    Quicklook(QuicklookArgs),
    /// The benchmark subcommands (`bench-kernel`, `bench-read`, ...), in builds with the
    /// `bench` feature.
    #[cfg(feature = "bench")]
    #[command(flatten)]
    Bench(crate::bench::BenchCommand),
}

/// The command line, parsed; a flag renamed since an earlier version gets its new name in the
/// error (`run --years` is `run --baseline`: `--years` names only `events`' analysis years).
pub fn parse() -> Cli {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            if let Some(hint) = renamed(&argv) {
                eprintln!("error: {hint}");
                std::process::exit(2);
            }
            e.exit()
        }
    }
}

/// The message for a renamed flag in `argv`, if it has one.
fn renamed(argv: &[std::ffi::OsString]) -> Option<String> {
    let words: Vec<&str> = argv.iter().filter_map(|a| a.to_str()).collect();
    let sub = words.iter().skip(1).find(|w| !w.starts_with('-'))?;
    let years = words.iter().any(|w| *w == "--years" || w.starts_with("--years="));
    (*sub == "run" && years).then(|| {
        "sstclim run --years is now --baseline (the climatology's baseline years, as in `sstclim events --baseline`; \
         `sstclim events --years` names the analysis years)"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_flag_is_named_in_the_error() {
        let argv = |w: &[&str]| w.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        let hint = renamed(&argv(&["sstclim", "run", "-i", "x", "--years", "1991-2020"])).unwrap();
        assert!(hint.starts_with("sstclim run --years is now --baseline"), "{hint}");
        assert!(renamed(&argv(&["sstclim", "events", "-i", "x", "--years", "1991-2020"])).is_none());
        assert!(Cli::try_parse_from(["sstclim", "run", "-i", "x", "-o", "o", "--years", "1991-2020"]).is_err());
        assert!(Cli::try_parse_from(["sstclim", "run", "-i", "x", "-o", "o", "--baseline", "1991-2020"]).is_ok());
    }

    #[test]
    fn command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// The product's build offers the user's subcommands only.
    #[test]
    fn subcommands_are_the_users_without_the_bench_feature() {
        use clap::CommandFactory;
        let names: Vec<String> = Cli::command().get_subcommands().map(|c| c.get_name().to_string()).collect();
        let users = ["run", "events", "generate", "compare", "demo", "quicklook"];
        assert!(users.iter().all(|u| names.iter().any(|n| n == u)), "{names:?}");
        let bench = names.iter().filter(|n| n.starts_with("bench")).count();
        assert_eq!(bench, if cfg!(feature = "bench") { 7 } else { 0 }, "{names:?}");
    }
}
