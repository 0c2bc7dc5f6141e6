//! `sstclim demo`: the climatology job on its dataset ([`crate::tools::demo`]), then the
//! marine heatwaves and cold spells of a year-round dataset found by `sstclim events
//! --baseline`, run through the library's options that command's flags build (the demo shows the
//! command), and a map of the mean annual heatwave days.

use std::path::Path;
use std::process::ExitCode;

use std::path::PathBuf;

use super::tools::DemoArgs;
use crate::api::{Against, Climatology, Compute, Events, EventsOut};
use crate::dist::comm::Comm;
use crate::report::progress::Ui;
use crate::source::Source;
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
    let (y0, y1) = EVENT_YEARS;
    let years = format!("{y0}-{y1}");
    let command_line = format!(
        "sstclim events --input {} --output {} --years {years} --baseline {years} --both --overwrite",
        data.display(),
        out.display()
    );
    eprintln!("demo: {command_line}");
    // the library's options, as `sstclim events` builds them from those flags
    let events = Events::hobday().both().years(y0..=y1);
    let source = Source::files(data.display().to_string(), None);
    let compute = Compute {
        rates: crate::pipeline::tuning::rates::resolve(None, crate::util::knobs::location_env),
        ..Compute::auto()
    };
    let plan = events.baseline_plan(&source, Climatology::hobday().baseline(y0..=y1), &compute, &command_line)?;
    let against =
        Against::Computed { file: PathBuf::new(), from: format!("computed in this run from --baseline {years}") };
    let written = EventsOut { overwrite: true, command_line, ..EventsOut::new(out.clone()) };
    let opts = events.options(source, against, Some(&written), &Compute::auto())?;
    let given = crate::dist::Given { threads: false, max_mem: false, device: false };
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
