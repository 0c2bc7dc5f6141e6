//! `sstclim demo`: the main job end to end on a small generated dataset. It generates the data
//! (once), runs the reference-job definition on it with bitwise verification against the
//! reference engine, prints the stage timing table, and draws quicklook maps. Its second part,
//! events, needs every day of the year: [`events_dataset`] makes that dataset (the `events` job
//! itself is run by the command line's layer, from the flags a user would type).

use std::path::PathBuf;

use crate::api::{Climatology, Compute, Dest, FilesOut};
use crate::error::Error;
use crate::pipeline::RunOutcome;
use crate::plan::values::GridSize;
use crate::report::progress::Ui;
use crate::run::run;
use crate::source::Source;
use crate::tools::generate::{DimOrder, GenerateError, GenerateOptions};

/// Where and how big the demo is (`sstclim demo`'s flags).
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Working directory for the dataset, the results and the maps.
    pub dir: PathBuf,
    /// Grid of the generated dataset.
    pub grid: GridSize,
    /// Day of year to draw.
    pub map_doy: u16,
}

/// What the demo produced.
#[derive(Debug)]
pub struct DemoOutcome {
    pub run: RunOutcome,
    pub maps: Vec<PathBuf>,
}

/// Why the demo failed: generating its dataset, the job, or its maps.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Generate(#[from] GenerateError),
    #[error(transparent)]
    Job(#[from] Error),
    #[error(transparent)]
    Quicklook(#[from] crate::tools::quicklook::QuicklookError),
}

impl From<crate::input::InputError> for DemoError {
    fn from(e: crate::input::InputError) -> Self {
        DemoError::Job(e.into())
    }
}

/// Run the demo in `args.dir`.
pub fn demo(args: &DemoOptions, ui: &Ui) -> Result<DemoOutcome, DemoError> {
    let data = args.dir.join("data");
    let results = args.dir.join("results");
    let gen = GenerateOptions {
        output: data.clone(),
        grid: args.grid,
        years: 1991..=2020,
        doys: (147..=248).collect(),
        dim_order: DimOrder::LonLat,
        ..GenerateOptions::default()
    };
    generate_once(&gen, "dataset", "1991-2020, days 147-248, float64, lon-lat order", ui)?;
    // the reference job's definition, verified against the reference engine; the command line
    // that would run it goes into the outputs' history
    let clim = Climatology::reference().baseline(1991..=2020).doys((152..=243).collect());
    let command_line = format!(
        "sstclim run --input {} --output {} --baseline 1991-2020 --doys 152-243 --half-window 5 --percentile 90 --method 5 \
         --verify --overwrite",
        data.display(),
        results.display()
    );
    let compute = Compute {
        verify: true,
        rates: crate::pipeline::tuning::rates::resolve(None, crate::util::knobs::location_env),
        ..Compute::auto()
    };
    let out = FilesOut { overwrite: true, command_line, ..FilesOut::new(results.clone()) };
    let plan =
        clim.plan(Source::files(data.display().to_string(), None), &compute, Dest::Files(&out)).map_err(Error::from)?;
    eprintln!("demo: {}", plan.command_line);
    let mut outcome = run(&plan, ui)?;
    // the time before the job was the demo's dataset, not the job's start-up
    outcome.report.wall_shares.startup = 0.0;
    // the quicklooks of the map day (every statistic), drawn from the files as written
    let maps = crate::tools::quicklook::quicklooks_of_run(&outcome.outputs, args.map_doy, &args.dir)?;
    Ok(DemoOutcome { run: outcome, maps })
}

/// The years of the demo's events dataset: its baseline and its analysis period at once, so
/// that the windows stop at the series' ends as marineHeatWaves' do there.
pub const EVENT_YEARS: (i32, i32) = (2001, 2020);

/// Generate (once) the demo's year-round dataset for `sstclim events` in `args.dir/events-data`:
/// every day of [`EVENT_YEARS`] on the demo's grid, stored as OSTIA-like int16.
pub fn events_dataset(args: &DemoOptions, ui: &Ui) -> Result<PathBuf, DemoError> {
    let data = args.dir.join("events-data");
    let (y0, y1) = EVENT_YEARS;
    let gen = GenerateOptions {
        output: data.clone(),
        grid: args.grid,
        years: y0..=y1,
        doys: (1..=366).collect(),
        storage: crate::tools::generate::GenStorage::I16,
        ..GenerateOptions::default()
    };
    generate_once(&gen, "events dataset", &format!("every day of {y0}-{y1}, int16"), ui)?;
    Ok(data)
}

/// Generate the dataset `gen` describes unless it is there already, saying which.
fn generate_once(gen: &GenerateOptions, what: &str, about: &str, ui: &Ui) -> Result<(), DemoError> {
    let (dir, grid) = (gen.output.display(), gen.grid);
    eprintln!("demo: {what} {dir} ({}x{}, {about})", grid.nlon, grid.nlat);
    let g = crate::tools::generate::generate(gen, ui)?;
    if g.up_to_date {
        eprintln!("demo: {what} already generated");
    } else {
        eprintln!("demo: generated {} files ({:.1} MB) in {:.1} s", g.files, g.bytes as f64 / 1e6, g.seconds);
    }
    Ok(())
}
