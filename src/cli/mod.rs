//! The command line, the top layer below `main`: the subcommands and their flags as clap
//! declares them ([`run`], [`tools`]; the benchmarks' own in `crate::bench`, with the `bench`
//! feature), and their validation into what the layers below take ([`validate`]: `run`'s
//! flags into a [`crate::plan::JobPlan`]; the tools' into their option structs). Nothing below
//! this module imports it.

pub mod run;
pub mod tools;
pub mod validate;

use clap::{Parser, Subcommand};

use run::RunArgs;
use tools::{CompareArgs, DemoArgs, GenerateArgs};

/// Day-of-year climatologies (mean and exact percentile thresholds) of daily gridded NetCDF data.
#[derive(Parser, Debug)]
#[command(name = "sstclim", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// No progress bars and only warnings in the log (RUST_LOG overrides the log level).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compute the climatology: mean and percentiles for every target day and cell.
    Run(RunArgs),
    /// Write a synthetic OSTIA-like daily dataset (one NetCDF file per day).
    Generate(GenerateArgs),
    /// Compare two result sets (directories or files); exit 1 past --tolerance.
    Compare(CompareArgs),
    /// Generate a small dataset, run the job, check it against the reference engine and draw maps.
    Demo(DemoArgs),
    /// The benchmark subcommands (`bench-kernel`, `bench-read`, ...), in builds with the
    /// `bench` feature.
    #[cfg(feature = "bench")]
    #[command(flatten)]
    Bench(crate::bench::BenchCommand),
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let users = ["run", "generate", "compare", "demo"];
        assert!(users.iter().all(|u| names.iter().any(|n| n == u)), "{names:?}");
        let bench = names.iter().filter(|n| n.starts_with("bench")).count();
        assert_eq!(bench, if cfg!(feature = "bench") { 6 } else { 0 }, "{names:?}");
    }
}
