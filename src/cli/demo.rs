//! `sstclim demo`: the climatology job on its dataset ([`crate::tools::demo`]), then the
//! marine heatwaves and cold spells of a year-round dataset found by `sstclim events
//! --baseline`, run from the flags a user would type (so the demo shows the command, and runs
//! it through the same validation), and a map of the mean annual heatwave days.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, FromArgMatches};

use super::events::EventsArgs;
use super::tools::DemoArgs;
use crate::dist::comm::Comm;
use crate::report::progress::Ui;
use crate::tools::demo::{events_dataset, EVENT_YEARS};

/// Run the demo and print what it did.
pub fn demo(args: &DemoArgs, comm: &Comm, ui: &Ui) -> anyhow::Result<ExitCode> {
    let options = args.options();
    let outcome = crate::tools::demo::demo(&options, ui)?;
    print!("{}", outcome.run.report.table());
    println!("results: {} files in {}", outcome.run.outputs.len(), options.dir.join("results").display());
    for m in &outcome.maps {
        println!("map: {}", m.display());
    }
    println!("demo OK: the {} engine equals the reference engine bit for bit", outcome.run.report.backend);
    let data = events_dataset(&options, ui)?;
    let map = events(&data, &options.dir, comm, ui)?;
    println!("map: {}", map.display());
    Ok(ExitCode::SUCCESS)
}

/// `sstclim events --baseline` over the whole events dataset (heatwaves and cold spells from one
/// read) into `dir/events`, and the map of its mean annual heatwave days (`dir/mhw_days.png`).
fn events(data: &Path, dir: &Path, comm: &Comm, ui: &Ui) -> anyhow::Result<std::path::PathBuf> {
    let out = dir.join("events");
    let years = format!("{}-{}", EVENT_YEARS.0, EVENT_YEARS.1);
    let (input, output) = (data.display().to_string(), out.display().to_string());
    let argv = [
        "events",
        "--input",
        &input,
        "--output",
        &output,
        "--years",
        &years,
        "--baseline",
        &years,
        "--both",
        "--overwrite",
    ];
    let command_line = format!("sstclim {}", argv.join(" "));
    eprintln!("demo: {command_line}");
    let matches = EventsArgs::augment_args(clap::Command::new("events")).try_get_matches_from(argv)?;
    let flags = EventsArgs::from_arg_matches(&matches)?;
    let opts = flags.options(command_line.clone())?;
    let Some((plan, given)) = flags.baseline_plan(&command_line)? else {
        anyhow::bail!("the demo's events job has a baseline");
    };
    let done = crate::run_events::events_with_baseline(&opts, &plan, given, comm, ui)?;
    println!(
        "events: {} heatwaves and cold spells in {} cells, {years}, in {:.1} s (climatology {:.1} s); files in {}",
        done.events,
        done.cells,
        done.seconds,
        done.baseline_seconds,
        out.display()
    );
    let title = format!("Mean annual marine heatwave days, {years} (demo data)");
    Ok(crate::tools::summary_map::summary_map(
        &out.join("summary.nc"),
        "total_days",
        &title,
        &dir.join("mhw_days.png"),
    )?)
}
