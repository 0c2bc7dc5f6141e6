//! The events job as a library call: [`Events`] holds what is detected (marineHeatWaves'
//! rules: analysis years, heatwaves and/or cold spells, their threshold, minimum duration and
//! gap joining), against a climatology in memory ([`Events::detect`], results in memory) or a
//! climatology file ([`Events::write`], results written as `sstclim events` writes them).
//! `sstclim events` builds the same options from its flags.

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::Arc;

use super::{quiet, Climatology, ClimatologyResult, Compute, Dest, FilesOut};
use crate::calendar::Calendar;
use crate::events::files::store::Store;
use crate::events::Params;
use crate::plan::Results;
use crate::plan::{JobPlan, PlanError};
use crate::run_events::{EventsJobError, EventsOptions, KindValues};
use crate::source::Source;
use crate::stats::percentile::Percentile;

/// Heatwaves, cold spells, or both from one read of the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Heat,
    Cold,
    Both,
}

/// What events are (Hobday et al. 2016): days past a day-of-year threshold, in runs of at
/// least `min_duration` days, runs at most `max_gap` days apart joined.
#[derive(Clone, Debug, PartialEq)]
pub struct Events {
    /// The analysis years: every day of them is searched.
    pub years: RangeInclusive<i32>,
    pub kind: EventKind,
    /// The threshold's percentile (`None`: 90 for heatwaves, 10 for cold spells).
    pub percentile: Option<Percentile>,
    pub min_duration: usize,
    /// Events at most this many days apart are joined (`None`: never).
    pub max_gap: Option<usize>,
    /// The calendar of the climatology's days.
    pub calendar: Calendar,
}

/// Where and how `sstclim events` writes: `events.nc` and `summary.nc` (and their `_cold`
/// twins) in `dir`.
#[derive(Clone, Debug, PartialEq)]
pub struct EventsOut {
    pub dir: PathBuf,
    pub overwrite: bool,
    /// How the outputs store their values (float32 event fields, deflate, shuffle).
    pub store: Store,
    /// What the outputs' `history` attribute records as the command.
    pub command_line: String,
}

impl EventsOut {
    pub fn new(dir: impl Into<PathBuf>) -> EventsOut {
        EventsOut {
            dir: dir.into(),
            overwrite: false,
            store: Store { float32: false, deflate: None, shuffle: true },
            command_line: "sstclim (library)".into(),
        }
    }
}

/// The climatology events are detected against.
#[derive(Clone, Debug)]
pub enum Against {
    /// A climatology file (`run --layout climatology`).
    File(PathBuf),
    /// A climatology in memory.
    Memory(Arc<ClimatologyResult>),
    /// Computed in the same job (`--baseline`): the path's text says so in the outputs.
    Computed { file: PathBuf, from: String },
}

/// Each kind's events and summaries in memory.
#[derive(Clone, Debug)]
pub struct EventsResult {
    pub kinds: Vec<KindValues>,
}

impl EventsResult {
    /// The heatwaves' results (if detected).
    pub fn heat(&self) -> Option<&KindValues> {
        self.kinds.iter().find(|k| !k.cold)
    }

    /// The cold spells' results (if detected).
    pub fn cold(&self) -> Option<&KindValues> {
        self.kinds.iter().find(|k| k.cold)
    }
}

impl Events {
    /// marineHeatWaves' `detect()` defaults: heatwaves over the 90th percentile, at least 5
    /// days, gaps of at most 2 days joined; the 366-day Hobday calendar; analysis years
    /// 1982-2022 (`sstclim events`' default).
    pub fn hobday() -> Events {
        Events {
            years: 1982..=2022,
            kind: EventKind::Heat,
            percentile: None,
            min_duration: 5,
            max_gap: Some(2),
            calendar: Calendar::Hobday366,
        }
    }

    pub fn both(mut self) -> Events {
        self.kind = EventKind::Both;
        self
    }

    pub fn cold(mut self) -> Events {
        self.kind = EventKind::Cold;
        self
    }

    pub fn years(mut self, years: RangeInclusive<i32>) -> Events {
        self.years = years;
        self
    }

    /// The threshold's percentile: the one asked for, else 90 (10 for cold spells).
    pub fn threshold(&self) -> Percentile {
        match &self.percentile {
            Some(p) => p.clone(),
            None => (if self.kind == EventKind::Cold { "10" } else { "90" }).parse().expect("a valid percentile"),
        }
    }

    /// The climatology `--baseline` computes for these events: `clim`'s rules, with the
    /// thresholds the kinds need (the cold spells' then the heatwaves' with both).
    pub fn baseline_climatology(&self, clim: Climatology) -> Climatology {
        let percentiles = match self.kind {
            EventKind::Both => vec!["10".parse().expect("valid"), "90".parse().expect("valid")],
            _ => vec![self.threshold()],
        };
        Climatology { calendar: self.calendar, percentiles, ..clim }
    }

    /// The `run --layout climatology` job that computes the climatology of `--baseline`:
    /// `clim` with the thresholds these events need ([`Events::baseline_climatology`]),
    /// written into a directory the events job sets (`command_line`: what the job was).
    pub(crate) fn baseline_plan(
        &self,
        source: &Source,
        clim: Climatology,
        compute: &Compute,
        command_line: &str,
    ) -> Result<JobPlan, PlanError> {
        let out = FilesOut {
            command_line: format!("{command_line} (the climatology of --baseline)"),
            ..FilesOut::climatology(".")
        };
        self.baseline_climatology(clim).plan(source.clone(), compute, Dest::Files(&out))
    }

    /// The validated job (errors name `sstclim events`' flags).
    pub(crate) fn options(
        &self,
        source: Source,
        against: Against,
        out: Option<&EventsOut>,
        compute: &Compute,
    ) -> Result<EventsOptions, EventsJobError> {
        let bad = |m: String| EventsJobError::Options(m);
        if self.min_duration == 0 {
            return Err(bad("--min-duration must be at least 1".into()));
        }
        if self.kind == EventKind::Both && self.percentile.is_some() {
            return Err(bad("--percentile goes with one kind of event, not --both".into()));
        }
        let (climatology, clim_memory, computed_from) = match against {
            Against::File(path) => (path, None, None),
            Against::Memory(values) => (PathBuf::new(), Some(values), None),
            Against::Computed { file, from } => (file, None, Some(from)),
        };
        let (output, overwrite, store, command_line, results) = match out {
            Some(o) => {
                if let Some(level) = o.store.deflate.filter(|l| !(1..=9).contains(l)) {
                    return Err(bad(format!("--deflate must be 1-9, got {level}")));
                }
                (o.dir.clone(), o.overwrite, o.store, o.command_line.clone(), Results::Files)
            }
            None => (PathBuf::new(), false, EventsOut::new("").store, String::new(), Results::Memory),
        };
        Ok(EventsOptions {
            source,
            output,
            years: self.years.clone(),
            climatology,
            clim_memory,
            clim_provenance: Vec::new(),
            results,
            computed_from,
            percentile: self.threshold(),
            params: Params {
                min_duration: self.min_duration,
                max_gap: self.max_gap,
                cold: self.kind == EventKind::Cold,
            },
            both: self.kind == EventKind::Both,
            calendar: self.calendar,
            max_mem: compute.max_mem,
            // (any budget and thread count, as `sstclim events` has always taken them)
            threads: compute.threads.unwrap_or_else(crate::plan::default_threads),
            allow_missing: compute.allow_missing,
            backend: (compute.backend, compute.device),
            overwrite,
            store,
            command_line,
        })
    }

    /// The events of `source` against a climatology in memory, kept in memory (this process
    /// alone).
    pub fn detect(
        &self,
        source: &Source,
        climatology: &ClimatologyResult,
        compute: &Compute,
    ) -> Result<EventsResult, EventsJobError> {
        let against = Against::Memory(Arc::new(climatology.clone()));
        let opts = self.options(source.clone(), against, None, compute)?;
        let done = crate::run_events::events_in_memory(&opts, &quiet())?;
        Ok(EventsResult { kinds: done.memory.unwrap_or_default() })
    }

    /// The events of `source` against the climatology file `climatology`, written as
    /// `sstclim events` writes them (one process); returns the files written.
    pub fn write(
        &self,
        source: &Source,
        climatology: PathBuf,
        out: &EventsOut,
        compute: &Compute,
    ) -> Result<Vec<PathBuf>, EventsJobError> {
        let opts = self.options(source.clone(), Against::File(climatology), Some(out), compute)?;
        let world = crate::dist::World::single();
        Ok(crate::run_events::events(&opts, world.comm(), &quiet())?.outputs)
    }
}
