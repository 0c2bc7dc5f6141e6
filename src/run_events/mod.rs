//! `sstclim events`: read the analysis series of the inputs band by band of cells, detect and
//! measure every cell's marine heatwaves (or cold spells) against a climatology, and write the
//! event catalogue and the per-year summaries ([`crate::events`]).
//!
//! Why a job of its own beside `run`: `run` cuts the days into segments and needs only a
//! window of days at a time; events need each cell's whole series, so the grid is cut into
//! bands of latitude rows within `--max-mem`, and each band's pool holds every day of every
//! analysis year. The files are read by the pipeline's readers (the direct path, or libnetcdf
//! in forked processes), the same as `run` reads them. Both outputs are staged and renamed into
//! place only once complete (`crate::output::publish`).
//!
//! Under MPI the ranks take contiguous shares of the latitude rows instead of slices of days
//! (the split, agreement and join both jobs share, [`crate::dist`]; [`ranks`] joins events'
//! parts); `band` is one rank's share. With `--baseline` the climatology is computed first,
//! by the `run` job, into a hidden directory of the output directory ([`baseline`]).

mod band;
mod baseline;
mod clim;
mod ranks;

pub use baseline::events_with_baseline;

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::calendar::{dates_of_years_in, Calendar, Date};
use crate::discover::discover;
use crate::dist::agree::{agree, agree_ok};
use crate::dist::comm::Comm;
use crate::dist::split;
use crate::error::Error;
use crate::events::files::schema::Meta;
use crate::events::{Days, EventsError, Params};
use crate::input::climatology::{ClimFile, ClimatologyError};
use crate::input::{self, Grid, VarLayout};
use crate::output::lock::JobLock;
use crate::output::publish;
use crate::pipeline::sink::ClimatologyResult;
use crate::plan::Results;
use crate::report::progress::Ui;
use crate::source::Source;
use crate::stats::percentile::Percentile;
use clim::Clim;
use std::sync::Arc;

/// What `sstclim events` was asked to do.
#[derive(Clone, Debug)]
pub struct EventsOptions {
    /// Where the values come from: files or memory.
    pub source: Source,
    pub output: PathBuf,
    pub years: RangeInclusive<i32>,
    pub climatology: PathBuf,
    /// The climatology already in memory (a library caller's, or the one `--baseline` computed
    /// on a single rank; `climatology` is then unused).
    pub clim_memory: Option<Arc<ClimatologyResult>>,
    /// What the outputs repeat of how `clim_memory` was made (as a climatology file's global
    /// attributes say it: [`crate::input::climatology::provenance_text`]); empty for a library
    /// caller's.
    pub clim_provenance: Vec<(String, String)>,
    /// Whether the events and summaries are written (to `output`) or kept in memory.
    pub results: Results,
    /// Where the climatology came from when this run computed it (`--baseline`): what the
    /// outputs' `climatology_file` attribute says instead of the temporary file's path.
    pub computed_from: Option<String>,
    /// The threshold's percentile (90 for heatwaves, 10 for cold spells by default).
    pub percentile: Percentile,
    pub params: Params,
    /// Heatwaves (`params`, `percentile`) and cold spells (the same rules, `params.cold`, the
    /// 10th percentile) detected from one read of the inputs, each into its own files.
    pub both: bool,
    pub calendar: Calendar,
    pub max_mem: Option<u64>,
    pub threads: usize,
    pub allow_missing: bool,
    /// Where events are detected (`--backend`) and on which GPU (`events::gpu::Detector`).
    pub backend: (crate::engine::Backend, usize),
    pub overwrite: bool,
    /// How the outputs store their values (`--output-type`, `--deflate`, `--shuffle`).
    pub store: crate::events::files::store::Store,
    pub command_line: String,
}

/// What the job did.
#[derive(Debug)]
pub struct EventsOutcome {
    pub events: usize,
    pub cells: usize,
    pub bands: usize,
    pub files_read: usize,
    pub outputs: Vec<PathBuf>,
    /// Computing the climatology of `--baseline` (0 with `--climatology`).
    pub baseline_seconds: f64,
    pub read_seconds: f64,
    pub detect_seconds: f64,
    pub write_seconds: f64,
    /// Reading (the next band) while detecting or writing (this one): part of both the read
    /// and the detect and write seconds, once in the wall time.
    pub overlap_seconds: f64,
    /// This rank's reads, detections and writes as (stage, start, end), seconds since its
    /// events job started (after the climatology of `--baseline`).
    pub spans: Vec<(String, f64, f64)>,
    pub seconds: f64,
    pub peak_rss: u64,
    /// Each kind's events and summaries, where the job kept them in memory ([`kinds`]' order).
    pub memory: Option<Vec<KindValues>>,
}

impl EventsOutcome {
    /// The job's report: each stage's busy seconds and the wall time cut into them.
    pub fn report(&self) -> crate::report::events::EventsReport {
        use crate::report::events::{EventsReport, EventsStages};
        EventsReport {
            command: "events",
            wall_seconds: self.seconds,
            stage_seconds: EventsStages {
                climatology: self.baseline_seconds,
                read: self.read_seconds,
                detect: self.detect_seconds,
                write: self.write_seconds,
                overlapped: self.overlap_seconds,
            },
            wall_shares: EventsReport::wall_shares(&self.spans, self.baseline_seconds, self.seconds),
            events: self.events,
            cells: self.cells,
            bands: self.bands,
            files_read: self.files_read,
            peak_rss_bytes: self.peak_rss,
        }
    }
}

/// One kind of event's results in memory: its catalogue and `summary[stat][year][cell]`
/// (statistics as `summary.nc` names them, [`crate::events::summary::STATS`]; NaN where a cell
/// has no value).
#[derive(Clone, Debug)]
pub struct KindValues {
    pub cold: bool,
    pub events: crate::events::columns::EventColumns,
    pub summary: Vec<f32>,
    pub years: RangeInclusive<i32>,
    pub nlat: usize,
    pub nlon: usize,
}

/// The job's errors: the shared stages' and the events stage's, and the few of its own.
#[derive(Debug, thiserror::Error)]
pub enum EventsJobError {
    #[error(transparent)]
    Job(#[from] Error),
    #[error(transparent)]
    Events(#[from] EventsError),
    #[error(transparent)]
    Climatology(#[from] ClimatologyError),
    #[error("{missing} of the {total} input files of --years {years} do not exist (first: {}); the analysis years must lie within the input's (--allow-missing treats missing days as missing values)", first.display())]
    YearsOutsideInput { missing: usize, total: usize, years: String, first: PathBuf },
    #[error("{}: exists; pass --overwrite to replace it", path.display())]
    Exists { path: PathBuf },
    #[error("{0}")]
    Ranks(String),
    #[error("{0}")]
    Options(String),
    #[error("computing the climatology of --baseline {years}: {message}")]
    Baseline { years: String, message: String },
    #[error("--max-mem {budget} bytes cannot hold a row of cells (every day of every analysis year; two where the next band is read while one is detected) beside the events of every cell ({need} bytes); raise --max-mem or shorten --years")]
    Memory { budget: u64, need: u64 },
}

/// The output file names (`--cold` writes its own, so both can share a directory).
pub fn output_names(cold: bool) -> [&'static str; 2] {
    if cold {
        ["events_cold.nc", "summary_cold.nc"]
    } else {
        ["events.nc", "summary.nc"]
    }
}

/// The kinds of event the job looks for: their rules and threshold percentile (heatwaves then
/// cold spells with `--both`).
pub fn kinds(opts: &EventsOptions) -> Vec<(Params, Percentile)> {
    if opts.both {
        let p = |s: &str| s.parse().expect("a valid percentile");
        vec![(Params { cold: false, ..opts.params }, p("90")), (Params { cold: true, ..opts.params }, p("10"))]
    } else {
        vec![(opts.params, opts.percentile.clone())]
    }
}

/// Every output's file name, two per kind of event (events, summary), in [`kinds`]' order.
fn all_output_names(opts: &EventsOptions) -> Vec<&'static str> {
    kinds(opts).iter().flat_map(|(p, _)| output_names(p.cold)).collect()
}

/// Removes the staging directory (what is left in it once the outputs were published).
struct Staged(PathBuf);

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What every rank finds before anything is read: the days, the files, the variable, the
/// grid and the climatology, all checked.
pub(crate) struct Prepared {
    days: Days,
    /// Pool slot of each day of the series (`None`: no file, a missing day).
    slot_of_day: Vec<Option<usize>>,
    files: Vec<PathBuf>,
    /// The time step within its file of each day read (0 for files of one step).
    steps: Vec<usize>,
    first: PathBuf,
    layout: VarLayout,
    grid: Grid,
    /// Per kind of event ([`kinds`]): its rules, climatology (mean and threshold) and the
    /// outputs' metadata.
    kinds: Vec<Params>,
    clims: Vec<Clim>,
    metas: Vec<Meta>,
    /// The outputs' final paths, two per kind (events, summary).
    targets: Vec<PathBuf>,
}

/// Discover the analysis period's files, inspect the first, open the climatology and check
/// it against them, and check the outputs: every failure of the job's inputs happens here.
fn prepare(opts: &EventsOptions) -> Result<Prepared, EventsJobError> {
    let (days, dates, inputs) = find_analysis(opts)?;
    let (first, layout, grid) = match &opts.source {
        Source::Memory(series) => (series.path(), series.layout(), series.grid().clone()),
        Source::Files { var, .. } => {
            let Some(first) = inputs.first().map(PathBuf::from) else {
                return Err(Error::NoInputs(dates.len()).into());
            };
            // a damaged header can crash the libraries: a child reads it first
            input::contain::survives(&first, "reading the header", || {
                let _ = inspect(&first, var.as_deref());
            })
            .map_err(Error::from)?;
            let (layout, grid) = inspect(&first, var.as_deref())?;
            (first, layout, grid)
        }
    };
    let mut clims = Vec::new();
    for (_, percentile) in kinds(opts) {
        let stat = percentile.stat_name();
        clims.push(match &opts.clim_memory {
            Some(values) => Clim::memory(values, &opts.clim_provenance, &grid, opts.calendar, inputs.calendar, &stat)?,
            None => Clim::File(ClimFile::open(
                &opts.climatology,
                &layout.name,
                layout.meta.units.as_deref(),
                &grid,
                opts.calendar,
                inputs.calendar,
                &stat,
            )?),
        });
    }
    // outputs: refuse to replace unless asked, before anything is read
    let targets = match opts.results {
        Results::Files => check_targets(opts)?,
        Results::Memory => Vec::new(),
    };
    let slot_of_day: Vec<Option<usize>> = {
        let mut next = 0;
        dates
            .iter()
            .map(|d| {
                inputs.files.contains_key(d).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    };
    let history = format!("{} {}", crate::output::utc_timestamp(), opts.command_line);
    let metas: Vec<Meta> = kinds(opts)
        .into_iter()
        .zip(&clims)
        .map(|((params, percentile), clim)| Meta {
            input_var: layout.name.clone(),
            units: layout.meta.units.clone().unwrap_or_default(),
            years: (*opts.years.start(), *opts.years.end()),
            params,
            threshold: percentile.stat_name(),
            climatology: opts.computed_from.clone().unwrap_or_else(|| opts.climatology.display().to_string()),
            provenance: clim.provenance(),
            history: history.clone(),
            calendar: inputs.calendar,
            store: opts.store,
        })
        .collect();
    let kinds = kinds(opts).into_iter().map(|(p, _)| p).collect();
    // each day read: its file and time step within it
    let steps: Vec<usize> = inputs.files.values().map(|s| s.step).collect();
    let files: Vec<PathBuf> = inputs.files.into_values().map(|s| s.path).collect();
    Ok(Prepared { days, slot_of_day, files, steps, first, layout, grid, kinds, clims, metas, targets })
}

/// The analysis period's days, their dates and files; an error unless every file exists
/// (or --allow-missing). The days are those of the input's calendar (found by discovery): 360 a
/// year in `360_day`, 365 in `noleap`, with days of year as `run` numbers them there.
fn find_analysis(opts: &EventsOptions) -> Result<(Days, Vec<Date>, crate::discover::Inputs), EventsJobError> {
    let years = opts.years.clone();
    let inputs = match &opts.source {
        Source::Files { input, var } => {
            discover(input, var.as_deref(), &|cf| dates_of_years_in(cf, years.clone()), true).map_err(Error::from)?
        }
        Source::Memory(series) => {
            let mut inputs = series.inputs(&dates_of_years_in(series.calendar(), years.clone()));
            // (a path per missing date: its date, as for a series of files)
            inputs.missing.iter_mut().for_each(|d| *d = series.path().join(&*d));
            inputs
        }
    };
    let days = Days::of_years_in(opts.years.clone(), opts.calendar, inputs.calendar);
    let dates = dates_of_years_in(inputs.calendar, opts.years.clone());
    if !inputs.missing.is_empty() && !opts.allow_missing {
        return Err(EventsJobError::YearsOutsideInput {
            missing: inputs.missing.len(),
            total: dates.len(),
            years: format!("{}-{}", opts.years.start(), opts.years.end()),
            first: inputs.missing[0].clone(),
        });
    }
    Ok((days, dates, inputs))
}

/// The outputs' final paths, once the output directory is writable, none of them is a
/// directory, and (without --overwrite) none of them exists.
fn check_targets(opts: &EventsOptions) -> Result<Vec<PathBuf>, EventsJobError> {
    crate::output::prepare_dir(&opts.output).map_err(Error::from)?;
    let targets: Vec<PathBuf> = all_output_names(opts).iter().map(|n| opts.output.join(n)).collect();
    match publish::check_replaceable(&targets, opts.overwrite) {
        Err(crate::output::OutputError::Exists { path, .. }) => Err(EventsJobError::Exists { path }),
        checked => checked.map(|()| targets).map_err(|e| Error::from(e).into()),
    }
}

/// Run `sstclim events` as rank `comm.rank()` of `comm.size()`: each rank takes a contiguous
/// share of the latitude rows and writes its events and summaries into parts in the staging
/// directory; rank 0 joins the parts in rank order (so the files are the same at any number of
/// ranks) and publishes them. A single rank writes the staged outputs directly.
pub fn events(opts: &EventsOptions, comm: &Comm, ui: &Ui) -> Result<EventsOutcome, EventsJobError> {
    events_locked(opts, comm, ui, None)
}

/// The events of `opts` with their results kept in memory, in this process alone (a library
/// call): nothing is written, so there is no output directory, lock or staging.
pub fn events_in_memory(opts: &EventsOptions, ui: &Ui) -> Result<EventsOutcome, EventsJobError> {
    let t0 = Instant::now();
    let prepared = prepare(opts)?;
    let (nlat, nlon) = (prepared.grid.nlat(), prepared.grid.nlon());
    let n_summary = crate::events::summary::STATS.len() * prepared.days.n_years * nlat * nlon;
    let mut kept: Vec<KindValues> = prepared
        .kinds
        .iter()
        .map(|k| KindValues {
            cold: k.cold,
            events: crate::events::columns::EventColumns::default(),
            summary: vec![f32::NAN; n_summary],
            years: opts.years.clone(),
            nlat,
            nlon,
        })
        .collect();
    let share = band::compute_share(opts, &prepared, 0..nlat, band::Into::Memory(&mut kept), (ui, t0))?;
    Ok(EventsOutcome {
        events: share.events,
        cells: prepared.grid.n_cells(),
        bands: share.bands,
        files_read: prepared.files.len(),
        outputs: Vec::new(),
        baseline_seconds: 0.0,
        read_seconds: share.read_seconds,
        detect_seconds: share.detect_seconds,
        write_seconds: share.write_seconds,
        overlap_seconds: share.overlap_seconds,
        spans: share.spans,
        seconds: t0.elapsed().as_secs_f64(),
        peak_rss: crate::report::timing::peak_rss_bytes(),
        memory: Some(kept),
    })
}

/// [`events`], with the output directory's lock already held by rank 0 when `lock` is given
/// (the `--baseline` job takes it before it computes the climatology).
fn events_locked(
    opts: &EventsOptions,
    comm: &Comm,
    ui: &Ui,
    lock: Option<JobLock>,
) -> Result<EventsOutcome, EventsJobError> {
    let t0 = Instant::now();
    let (rank, size) = (comm.rank(), comm.size());
    let prepared = agree_ok(comm, prepare(opts))?;
    // rank 0 holds the output directory's lock and makes the staging directory
    let mut held = None;
    let staging = if rank == 0 {
        let made = (|| {
            let lock = match lock {
                Some(held) => held,
                None => JobLock::acquire(&opts.output, &opts.command_line).map_err(Error::from)?,
            };
            let staging = publish::staging_dir(&opts.output);
            crate::util::signals::on_interrupt_remove(&staging);
            std::fs::create_dir_all(&staging).map_err(|cause| Error::Io { path: staging.clone(), cause })?;
            held = Some((lock, Staged(staging.clone())));
            Ok::<PathBuf, EventsJobError>(staging)
        })();
        agree(comm, made)?.swap_remove(0)
    } else {
        agree(comm, Ok::<_, EventsJobError>(PathBuf::new()))?.swap_remove(0)
    };
    let names = all_output_names(opts);
    let staged: Vec<PathBuf> = names.iter().map(|n| staging.join(n)).collect();
    let parts = |r: usize| -> Vec<PathBuf> {
        if size == 1 {
            staged.clone()
        } else {
            names.iter().map(|n| ranks::part_path(&staging, r, n)).collect()
        }
    };
    let rows = split::share(prepared.grid.nlat(), size, rank);
    let share =
        band::compute_share(opts, &prepared, rows, band::Into::Files { paths: &parts(rank), part: size > 1 }, (ui, t0));
    let shares = agree(comm, share)?;
    let published = if rank == 0 {
        (|| {
            let t = Instant::now();
            let from = (t - t0).as_secs_f64();
            if size > 1 {
                ranks::join_parts(&staging, size, &staged, &prepared.metas, (&prepared.grid, opts.threads))?;
            }
            let pairs: Vec<(PathBuf, PathBuf)> = staged.iter().cloned().zip(prepared.targets.iter().cloned()).collect();
            let published =
                publish::publish(&pairs, &staging.join(".previous"), opts.threads.max(1)).map_err(Error::from)?;
            Ok::<_, EventsJobError>((published.commit(), (from, t.elapsed().as_secs_f64())))
        })()
    } else {
        Ok((Vec::new(), (0.0, 0.0)))
    };
    let (outputs, (from, join_s)) = agree(comm, published)?.swap_remove(0);
    drop(held);
    let mut mine = shares[rank].clone();
    if rank == 0 {
        mine.spans.push(("write".into(), from, from + join_s));
    }
    Ok(EventsOutcome {
        events: shares.iter().map(|s| s.events).sum(),
        cells: prepared.grid.n_cells(),
        bands: shares.iter().map(|s| s.bands).sum(),
        files_read: prepared.files.len(),
        outputs,
        baseline_seconds: 0.0,
        read_seconds: mine.read_seconds,
        detect_seconds: mine.detect_seconds,
        write_seconds: mine.write_seconds + join_s,
        overlap_seconds: mine.overlap_seconds,
        spans: mine.spans,
        seconds: t0.elapsed().as_secs_f64(),
        peak_rss: crate::report::timing::peak_rss_bytes(),
        memory: None,
    })
}

/// Open the first file and read the variable's layout and grid from it.
fn inspect(first: &Path, var: Option<&str>) -> Result<(VarLayout, Grid), Error> {
    let file = input::open(first)?;
    let layout = VarLayout::inspect(&file, first, var, false)?;
    let grid = Grid::read(&file, first, &layout)?;
    Ok((layout, grid))
}
