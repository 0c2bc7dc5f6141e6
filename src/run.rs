//! `sstclim run`: find the inputs, choose the engine and pool type, cut the grid into tiles
//! within the memory budget, and hand each tile to the overlapped pipeline
//! ([`crate::pipeline`]); the outputs are moved into place only after the last tile.
//!
//! Memory stays within `--max-mem`: the grid is cut into bands along the files' slowest
//! horizontal dimension (so each read is one contiguous hyperslab), as many cells per band as
//! the pool and results allow. A band costs one open of every input file.

use std::path::PathBuf;
use std::time::Instant;

use tracing::{debug, info};

use crate::calendar::CfCalendar;
use crate::discover::{discover_extending, Inputs};
use crate::engine::Engine;
use crate::error::Error;
use crate::input::{self, Grid, Storage, VarLayout};
use crate::output;
use crate::pipeline::sink::Sink;
use crate::pipeline::{run_tiles, Job, RunOutcome};
use crate::plan::{JobPlan, Results};
use crate::pool::{int16_decoding, PoolType};
use crate::report::progress::Ui;
use crate::report::timing::{Stage, StageTimer};
use crate::smooth::DayRules;
use crate::source::{MemorySeries, Source};
use crate::window::{WindowPlan, WindowSpec};

/// A job's input files, and the variable's layout and grid as the first file has them.
pub struct FoundInputs {
    pub inputs: Inputs,
    pub first: PathBuf,
    pub layout: VarLayout,
    pub grid: Grid,
}

/// Discover the files `spec` needs and inspect the first one (shared with the MPI validation).
pub fn find_inputs(plan: &JobPlan, spec: &WindowSpec) -> Result<FoundInputs, Error> {
    find_inputs_or_past(plan, spec)?.ok_or_else(|| no_days(spec))
}

/// [`find_inputs`], or `None` where every day of `spec` lies past the input calendar's year
/// (an MPI rank's share of the default days 1-366 over `360_day` input: that rank is idle).
pub fn find_inputs_or_past(plan: &JobPlan, spec: &WindowSpec) -> Result<Option<FoundInputs>, Error> {
    // the days computed: those asked for and the halo days smoothing and Feb 29 need, in the
    // inputs' calendar
    let required = |cf: CfCalendar| DayRules { cf, ..plan.rules }.required_dates(spec);
    // extended windows reach into the input where it has the days (marineHeatWaves')
    let extended = (plan.rules.edges == crate::window::WindowEdges::Extend).then(|| plan.window.years.clone());
    let (input, var) = match &plan.source {
        Source::Files { input, var } => (input, var.as_deref()),
        Source::Memory(series) => return in_memory(plan, spec, series, &required).map(Some),
    };
    let inputs = discover_extending(input, var, &required, plan.allow_missing, extended)?;
    // no report onto an input, before any is opened
    let mut files: Vec<&std::path::Path> = inputs.files.values().map(|s| s.path.as_path()).collect();
    files.dedup();
    crate::plan::reports::check_inputs(&crate::plan::reports::reports(plan), input, &files)?;
    // days asked for that the input's year does not have (the default 1-366 is trimmed)
    let max = plan.window.calendar.max_doy(inputs.calendar);
    if let Some(&day) = plan.window.doys.iter().find(|&&d| d > max).filter(|_| plan.doys_given) {
        let d = &plan.window.doys;
        let (a, b) = (d[0], d[d.len() - 1]);
        let doys = if d.len() == usize::from(b - a + 1) {
            format!("{a}-{b}")
        } else {
            format!("({} days, {a} to {b})", d.len())
        };
        return Err(Error::DoysPastYear { doys, day, calendar: inputs.calendar.cf_name(), max });
    }
    let n = crate::smooth::year_length_in(plan.window.calendar, inputs.calendar, &plan.window.years);
    let climatology = plan.output.layout == crate::output::OutputLayout::Climatology;
    // the days the job takes: without --doys, those of 1-366 the years have (1-365 of an
    // ordinal year over years without a leap year)
    let d: Vec<u16> = plan.window.doys.iter().copied().filter(|&d| plan.doys_given || d <= n).collect();
    // (an MPI rank's share of the days is checked as the whole job, by `dist`, not here)
    if climatology && plan.rank.1 == 1 && !d.iter().copied().eq(1..=n) && !d.is_empty() {
        let doys = format!("{}-{}", d[0], d[d.len() - 1]);
        return Err(Error::ClimatologyYear { doys, calendar: inputs.calendar.cf_name(), n });
    }
    let Some(first) = inputs.first().map(PathBuf::from) else {
        let needed = required(inputs.calendar).len();
        if needed == 0 && spec.doys.iter().all(|&d| d > if plan.doys_given { max } else { n }) {
            return Ok(None);
        }
        return Err(if needed == 0 { no_days(spec) } else { Error::NoInputs(needed) });
    };
    // a damaged header can crash libnetcdf/libhdf5 or panic in the netcdf crate: a child
    // reads it first, and only a header it came through is read again here
    input::contain::survives(&first, "reading the header", || {
        let _ = inspect_first(&first, var);
    })?;
    let (layout, grid) = inspect_first(&first, var)?;
    Ok(Some(FoundInputs { inputs, first, layout, grid }))
}

/// The days of `spec` a memory series holds, as discovery finds files: every date the windows
/// may take (those of `required`, and the series' other dates, which extended windows reach);
/// a required date the series lacks is an error unless missing days are allowed.
fn in_memory(
    plan: &JobPlan,
    spec: &WindowSpec,
    series: &MemorySeries,
    required: &dyn Fn(CfCalendar) -> Vec<crate::calendar::Date>,
) -> Result<FoundInputs, Error> {
    let cf = series.calendar();
    let mut wanted = required(cf);
    wanted.extend_from_slice(series.dates());
    wanted.sort_unstable();
    wanted.dedup();
    let mut inputs = series.inputs(&wanted);
    let held: std::collections::BTreeSet<_> = series.dates().iter().collect();
    let mut lacking: Vec<crate::calendar::Date> = required(cf).into_iter().filter(|d| !held.contains(d)).collect();
    if plan.rules.edges == crate::window::WindowEdges::Extend {
        // as discovery does (`discover_extending`): windows that extend past the years stop at
        // the series' end where it has none of that side's days
        let years = &plan.window.years;
        let required = required(cf);
        for before in [true, false] {
            let beyond =
                |d: &crate::calendar::Date| if before { d.year < *years.start() } else { d.year > *years.end() };
            let side: Vec<_> = required.iter().filter(|d| beyond(d)).collect();
            if !side.is_empty() && side.iter().all(|d| !held.contains(d)) {
                lacking.retain(|d| !beyond(d));
            }
        }
    }
    let lacking: Vec<PathBuf> = lacking.iter().map(|d| PathBuf::from(d.to_string())).collect();
    if !lacking.is_empty() && !plan.allow_missing {
        return Err(Error::MemoryDates {
            name: series.name.clone(),
            missing: lacking.len(),
            first: lacking[0].clone(),
        });
    }
    inputs.missing = lacking;
    if inputs.files.is_empty() {
        return Err(no_days(spec));
    }
    Ok(FoundInputs { inputs, first: series.path(), layout: series.layout(), grid: series.grid().clone() })
}

/// `plan` for inputs in calendar `cf`: windows and smoothing run over its days, and the days
/// of year it does not have (361-366 of `360_day`, 366 of `noleap`) are left out of the job,
/// as is day 366 of the default days under `ordinal` where no year of the job is a leap year.
pub fn in_calendar(plan: &JobPlan, cf: CfCalendar) -> JobPlan {
    let mut plan = plan.clone();
    plan.rules.cf = cf;
    let last = match plan.doys_given {
        true => plan.window.calendar.max_doy(cf),
        false => crate::smooth::year_length_in(plan.window.calendar, cf, &plan.window.years),
    };
    let before = plan.window.doys.len();
    plan.window.doys.retain(|&d| d <= last);
    if plan.window.doys.len() < before {
        let (a, b) = (plan.window.years.start(), plan.window.years.end());
        info!("the years {a}-{b} of the {} calendar have {last} days: days {}-366 left out", cf.cf_name(), last + 1);
    }
    plan
}

/// The error for a job none of whose target days exists in its years (day 366 of years that
/// are not leap years).
fn no_days(spec: &WindowSpec) -> Error {
    let (a, b) = (*spec.years.start(), *spec.years.end());
    let years = if a == b { a.to_string() } else { format!("{a}-{b}") };
    let mut doys: Vec<String> = spec.doys.iter().take(6).map(|d| d.to_string()).collect();
    if spec.doys.len() > 6 {
        doys.push(format!("and {} more", spec.doys.len() - 6));
    }
    let calendar = clap::ValueEnum::to_possible_value(&spec.calendar)
        .map_or_else(|| format!("{:?}", spec.calendar), |v| v.get_name().to_string());
    // the only target days a year can lack are leap days (366, or 60 of hobday366)
    let hint = match spec.calendar {
        crate::calendar::Calendar::Ordinal => {
            " (only leap years have it; --calendar hobday366 gives every year a day 366)"
        }
        crate::calendar::Calendar::Hobday366 => " (only leap years have it)",
    };
    Error::NoDays { years, doys: doys.join(", "), calendar, hint }
}

/// Under `hobday366` in a real calendar, day 60 is Feb 29: with `--feb29 window` over years
/// none of which is a leap year its window holds no date, so it is missing in every cell (and
/// smoothing spreads that over the days around it), as marineHeatWaves' rules without its
/// interpolation give. Not an error (the days asked for are computed as defined), but said.
fn warn_empty_feb29(plan: &JobPlan) {
    let (w, cf) = (&plan.window, plan.rules.cf);
    if w.calendar == crate::calendar::Calendar::Hobday366
        && crate::calendar::is_real(cf)
        && plan.rules.feb29 == crate::smooth::Feb29::Window
        && !w.years.clone().any(|y| cf.is_leap(y))
        && plan.rules.computed_doys(w).contains(&60)
    {
        let (a, b) = (w.years.start(), w.years.end());
        tracing::warn!(
            "no year of {a}-{b} has a Feb 29, so day 60 (hobday366) is missing in every cell{}; \
             --feb29 interpolate makes it from days 59 and 61",
            if plan.rules.smooth > 1 { ", and so is every day --smooth takes it into" } else { "" }
        );
    }
}

/// Open the first file and read the variable's layout and grid from it.
fn inspect_first(first: &std::path::Path, var: Option<&str>) -> Result<(VarLayout, Grid), Error> {
    let file = input::open(first)?;
    let layout = VarLayout::inspect(&file, first, var, false)?;
    let grid = Grid::read(&file, first, &layout)?;
    Ok((layout, grid))
}

impl Job {
    fn prepare(plan: &JobPlan) -> Result<Job, Error> {
        let FoundInputs { inputs, first, layout, grid } = find_inputs(plan, &plan.window)?;
        let plan = &in_calendar(plan, inputs.calendar);
        if plan.window.doys.is_empty() {
            return Err(no_days(&plan.window));
        }
        warn_empty_feb29(plan);
        let computed = plan.rules.computed_spec(&plan.window);
        let window =
            WindowPlan::build_in(&computed, plan.rules.edges, plan.rules.cf, |d| inputs.files.contains_key(&d));
        // each pool slot's file and time step within it
        let files: Vec<PathBuf> = window.slots.iter().map(|d| inputs.files[d].path.clone()).collect();
        let steps: Vec<usize> = window.slots.iter().map(|d| inputs.files[d].step).collect();
        if tracing::enabled!(tracing::Level::DEBUG) {
            for (i, d) in window.slots.iter().enumerate() {
                debug!("input slot {i}: {d} = {} step {}", files[i].display(), steps[i]);
            }
        }
        Ok(Job { inputs, first, layout, grid, window, files, steps })
    }
}

/// Run the job `plan` describes.
pub fn run(plan: &JobPlan, ui: &Ui) -> Result<RunOutcome, Error> {
    let wall = Instant::now();
    let startup = crate::report::timing::since_process_start();
    let mut timer = StageTimer::default();
    let to_files = plan.results == Results::Files;
    if to_files {
        output::prepare_dir(&plan.output.dir)?;
    }
    // one job at a time in an output directory (MPI ranks: rank 0 holds it for the job, see
    // `dist`); taken before anything is staged
    let _lock = match plan.rank.1 {
        1 if to_files => Some(output::lock::JobLock::acquire(&plan.output.dir, &plan.command_line)?),
        _ => None,
    };
    // the engine starts (a GPU context takes a good part of a second) while inputs are found,
    // and an explicitly requested GPU goes on starting while the pipeline prepares what needs no
    // device (`SSTCLIM_DEFER_START=off`, a measuring knob: start it here)
    let (job, engine) = std::thread::scope(|s| {
        let found = s.spawn(|| {
            let start = Instant::now();
            (Job::prepare(plan), start.elapsed())
        });
        let engine = match crate::util::knobs::defer_start() {
            false => plan.backend.engine(plan.device, &plan.gpu),
            true => plan.backend.start(plan.device, &plan.gpu),
        };
        let (job, took) = found.join().expect("input discovery thread");
        timer.add(Stage::Discover, took);
        (job, engine)
    });
    let mut job = job?;
    let engine = engine?;
    // from here on the job runs in its inputs' calendar
    let plan = &in_calendar(plan, job.inputs.calendar);
    info!(
        "{} input files ({} missing) of {} '{}' ({}, {}), {} target days, {} pool slots",
        job.inputs.files.len(),
        job.inputs.missing.len(),
        job.layout.storage.name(),
        job.layout.name,
        job.layout.shape_text(),
        if job.layout.lat_is_slow() { "lat-lon order" } else { "lon-lat order" },
        job.window.targets.len(),
        job.window.slots.len()
    );
    let computed = compute_in_pool(plan, &mut job, engine.as_ref(), ui, timer, wall)?;
    let crate::pipeline::Computed { mut report, outputs } = computed;
    // releasing a device (its memory and context) takes a noticeable part of a short run
    let released = Instant::now();
    drop(engine);
    report.teardown_seconds = released.elapsed().as_secs_f64();
    report.startup_seconds = startup;
    (report.wall_shares.device_release, report.wall_shares.startup) = (report.teardown_seconds, startup);
    // the reports go first, so that a failure writing one publishes nothing; a failure to
    // publish takes them back
    let remove_reports = || {
        for path in plan.timing_json.iter().chain(&plan.trace_json) {
            let _ = std::fs::remove_file(path);
        }
    };
    if let Some(path) = &plan.timing_json {
        if let Err(cause) = report.write_json(path) {
            remove_reports();
            return Err(Error::Io { path: path.clone(), cause });
        }
    }
    let publishing = Instant::now();
    let files = match outputs {
        Sink::Files(files) => files,
        Sink::Memory(values) => return Ok(RunOutcome { report, outputs: Vec::new(), memory: Some(values) }),
    };
    match files.finish() {
        Ok(outputs) => {
            report.wall_shares.publish = publishing.elapsed().as_secs_f64();
            Ok(RunOutcome { report, outputs, memory: None })
        }
        Err(e) => {
            remove_reports();
            Err(e.into())
        }
    }
}

/// Run the tiles in the pool type the plan or the defaults choose: an int16 pool decodes the
/// input's integers (or `--pack-scale`'s), and gives way to a float pool where files are packed
/// unlike the first.
fn compute_in_pool(
    plan: &JobPlan,
    job: &mut Job,
    engine: &dyn Engine,
    ui: &Ui,
    timer: StageTimer,
    wall: Instant,
) -> Result<crate::pipeline::Computed, Error> {
    let on_device = engine.is_device();
    let pool = plan.pool.unwrap_or_else(|| crate::plan::default_pool(on_device, job.layout.storage));
    match pool {
        PoolType::F64 => run_tiles::<f64>(plan, job, engine, None, ui, timer, wall),
        PoolType::F32 => run_tiles::<f32>(plan, job, engine, None, ui, timer, wall),
        PoolType::I16 => {
            let decoding = match (plan.pack, job.layout.storage) {
                (Some(_), Storage::I16 | Storage::I8 | Storage::U8) => {
                    return Err(Error::PackStored {
                        var: job.layout.name.clone(),
                        path: job.first.clone(),
                        storage: job.layout.storage.name(),
                    });
                }
                (Some(q), _) => {
                    job.layout.packing.quantize = Some(q);
                    q.decoding()
                }
                (None, Storage::I16 | Storage::I8 | Storage::U8) => {
                    let packing = &job.layout.packing;
                    int16_decoding(|stored| packing.decode(stored))
                }
                (None, storage) => {
                    return Err(Error::PoolNeedsIntegers {
                        var: job.layout.name.clone(),
                        path: job.first.clone(),
                        storage: storage.name(),
                    });
                }
            };
            let again = timer.clone();
            match run_tiles::<i16>(plan, job, engine, Some(decoding), ui, timer, wall) {
                // the int16 pool decodes every file with the first file's packing: where files
                // are packed differently, the default gives way to a float pool
                Err(e) if plan.pool.is_none() && packing_differs(&e) => {
                    info!("{e}: using a float pool instead");
                    match on_device {
                        true => run_tiles::<f32>(plan, job, engine, None, ui, again, wall),
                        false => run_tiles::<f64>(plan, job, engine, None, ui, again, wall),
                    }
                }
                r => r,
            }
        }
    }
}

/// Whether `e` is the int16 pool's refusal of a file packed unlike the first.
fn packing_differs(e: &Error) -> bool {
    matches!(e, Error::Input(input::InputError::PoolPacking { .. }))
        || e.to_string().contains("decodes every file with the first file's packing")
}
