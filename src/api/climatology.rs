//! The climatology job as a library call: [`Climatology`] holds what is computed (the science:
//! baseline, days, window, calendar rules, statistics), [`Compute`] how (engine, threads,
//! memory), [`FilesOut`] where files go; [`Climatology::compute`] returns the statistics in
//! memory and [`Climatology::write`] writes them as `sstclim run` does. `sstclim run` builds
//! the same three from its flags (`cli::validate`), so the command line and a library caller
//! run one validated plan ([`crate::plan::JobPlan`]).

use std::ops::RangeInclusive;
use std::path::PathBuf;

use super::Dest;
use super::{quiet, Compute, FilesOut};
use crate::calendar::Calendar;
use crate::error::Error;
use crate::pipeline::sink::ClimatologyResult;
use crate::plan::{JobPlan, PlanError, Results};
use crate::smooth::{DayRules, Feb29};
use crate::source::Source;
use crate::stats::percentile::{Method, Percentile};
use crate::stats::StatSpec;
use crate::window::{WindowEdges, WindowSpec};

/// What a day-of-year climatology is: its baseline years and days, each day's window and the
/// calendar rules (Hobday et al. 2016), and the statistics (the mean, then each percentile).
#[derive(Clone, Debug, PartialEq)]
pub struct Climatology {
    /// The baseline years (every day of them enters the windows).
    pub baseline: RangeInclusive<i32>,
    /// The days of year computed (`None`: every day of the input calendar's year).
    pub doys: Option<Vec<u16>>,
    /// Days on each side of a day of year in its window (the window is 2h+1 days).
    pub half_window: u16,
    pub calendar: Calendar,
    pub window_edges: WindowEdges,
    pub feb29: Feb29,
    /// Width of the running mean over the days of year (1: none).
    pub smooth: u16,
    pub percentiles: Vec<Percentile>,
    /// Hyndman and Fan's sample quantile definition (1-9).
    pub method: Method,
    /// Cells with fewer valid samples in a window get no value.
    pub min_samples: usize,
}

fn percentiles(list: &[&str]) -> Vec<Percentile> {
    list.iter().map(|p| p.parse().expect("a valid percentile")).collect()
}

impl Climatology {
    /// marineHeatWaves' climatology (`detect()`'s defaults): the 366-day Hobday calendar, an
    /// 11-day window extended into the years beside the baseline where the input has them,
    /// Feb 29 interpolated, a 31-day running mean, percentiles by method 7 (numpy's linear),
    /// the 90th percentile, baseline 1983-2012.
    pub fn hobday() -> Climatology {
        Climatology {
            baseline: 1983..=2012,
            doys: None,
            half_window: 5,
            calendar: Calendar::Hobday366,
            window_edges: WindowEdges::Extend,
            feb29: Feb29::Interpolate,
            smooth: 31,
            percentiles: percentiles(&["90"]),
            method: Method::LINEAR,
            min_samples: 1,
        }
    }

    /// `sstclim run`'s defaults: the exact reference definition (ordinal days, an 11-day
    /// window clipped to the baseline, no smoothing, method 5, the 90th percentile), baseline
    /// 1983-2012.
    pub fn reference() -> Climatology {
        Climatology {
            calendar: Calendar::Ordinal,
            window_edges: WindowEdges::Clip,
            feb29: Feb29::Window,
            smooth: 1,
            method: "5".parse().expect("method 5 exists"),
            ..Climatology::hobday()
        }
    }

    pub fn baseline(mut self, years: RangeInclusive<i32>) -> Climatology {
        self.baseline = years;
        self
    }

    /// The percentiles, e.g. `&["10", "90"]` (an invalid one is refused by `validate`).
    pub fn percentiles(mut self, list: &[f64]) -> Climatology {
        self.percentiles = list.iter().filter_map(|p| format!("{p}").parse().ok()).collect();
        self
    }

    pub fn doys(mut self, doys: Vec<u16>) -> Climatology {
        self.doys = Some(doys);
        self
    }

    pub(crate) fn spec(&self) -> WindowSpec {
        WindowSpec {
            years: self.baseline.clone(),
            doys: self.doys.clone().unwrap_or_else(|| (1..=366).collect()),
            half_window: self.half_window,
            calendar: self.calendar,
        }
    }

    pub(crate) fn rules(&self) -> DayRules {
        DayRules { edges: self.window_edges, feb29: self.feb29, smooth: self.smooth, ..DayRules::default() }
    }

    pub(crate) fn stats(&self) -> StatSpec {
        StatSpec { percentiles: self.percentiles.clone(), method: self.method, min_samples: self.min_samples }
    }

    /// What can be refused before any input is read: the window, the calendar rules, the
    /// percentiles, the samples (errors name the `sstclim run` flag of the option).
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.half_window > 182 {
            return Err(PlanError::HalfWindow(self.half_window));
        }
        let n = crate::smooth::year_length(self.calendar, &self.baseline);
        if self.smooth % 2 == 0 || self.smooth > n {
            return Err(PlanError::Smooth(self.smooth, n));
        }
        if self.feb29 == Feb29::Interpolate && self.calendar != Calendar::Hobday366 {
            return Err(PlanError::Feb29Calendar);
        }
        // (without days given the job takes the days its years have: 1-365 here)
        if self.smooth > 1 && n == 365 && self.doys.as_ref().is_some_and(|d| d.contains(&366)) {
            return Err(PlanError::SmoothDay366(self.smooth));
        }
        for (i, p) in self.percentiles.iter().enumerate() {
            if self.percentiles[..i].contains(p) {
                return Err(PlanError::DuplicatePercentile(p.to_string()));
            }
        }
        if self.min_samples == 0 {
            return Err(PlanError::MinSamples);
        }
        Ok(())
    }

    /// The validated job: this climatology of `source`, computed as `compute` says, its
    /// results in memory or written as `results` says.
    pub(crate) fn plan(&self, source: Source, compute: &Compute, dest: Dest<'_>) -> Result<JobPlan, PlanError> {
        self.validate()?;
        let (output, reports, command_line, results) = match dest {
            Dest::Files(out) => {
                out.validate(self)?;
                let reports = (out.timing_json.clone(), out.trace_json.clone());
                (out.spec(), reports, out.command_line.clone(), Results::Files)
            }
            Dest::Memory => (FilesOut::new(PathBuf::new()).spec(), (None, None), String::new(), Results::Memory),
        };
        let c = compute.resolve()?;
        let plan = JobPlan {
            source,
            window: self.spec(),
            doys_given: self.doys.is_some(),
            rules: self.rules(),
            stats: self.stats(),
            output,
            results,
            allow_missing: compute.allow_missing,
            backend: compute.backend,
            pool: c.pool,
            pack: compute.pack,
            device: compute.device,
            gpu: c.gpu,
            threads: c.threads,
            max_mem: c.max_mem,
            verify: compute.verify,
            timing_json: reports.0,
            trace_json: reports.1,
            rank: (0, 1),
            read_path: compute.read_path,
            readers: c.readers,
            segments: compute.segments,
            rates: compute.rates.clone(),
            gpu_pool: compute.gpu_pool,
            command_line,
        };
        super::check_plan(&plan)?;
        Ok(plan)
    }

    /// The climatology of `source`, in memory: every statistic of every day of year and cell
    /// (one MPI rank: the caller's process).
    pub fn compute(&self, source: &Source, compute: &Compute) -> Result<ClimatologyResult, Error> {
        let plan = self.plan(source.clone(), compute, Dest::Memory)?;
        let outcome = crate::run::run(&plan, &quiet())?;
        outcome.memory.ok_or(Error::NoMemoryResults)
    }

    /// The climatology of `source`, written as `sstclim run` writes it (its layouts, publishing
    /// rules and speed); returns the files written.
    pub fn write(&self, source: &Source, out: &FilesOut, compute: &Compute) -> Result<Vec<PathBuf>, Error> {
        let plan = self.plan(source.clone(), compute, Dest::Files(out))?;
        Ok(crate::run::run(&plan, &quiet())?.outputs)
    }
}
