//! Running jobs as many MPI ranks (`mpirun -np N sstclim run ...`, `srun sstclim run ...`):
//! the MPI layer both jobs share, and the climatology job's use of it.
//!
//! Both jobs (`run` here, `events` in `crate::run_events`) use the same pieces: one
//! communicator ([`Comm`]), one agreement point ([`agree`]), one split of their items into
//! contiguous rank shares ([`split`]: target days here, latitude rows for events) and one join
//! of the ranks' parts in rank order ([`join`]).
//!
//! Each rank owns a contiguous slice of the target days ([`slices`]) and runs the ordinary
//! single-process pipeline ([`crate::run`]) on it, reading only its days and their half-window
//! halo and writing its own outputs; the results are identical to a single process because every
//! target day's computation only depends on its own window. The ranks meet at three agreement
//! points, each one all-gather of a status that every rank reaches unconditionally, so a failure
//! on one rank never leaves another waiting in a collective:
//!
//! 1. **validation**, before any other collective: the output directory, existing outputs, the
//!    rank's input files (discovered; the first opened for its variable and grid, every other
//!    one checked cheaply by [`precheck`] and opened only if that looks wrong), then a check
//!    that all ranks see the same variable, grid and coordinates;
//! 2. **computation**: each rank's run writes into its own hidden staging directory inside the
//!    output directory; any error (a file corrupt past its header, say) is reported here;
//! 3. **commit**: staged files are moved to their final names (stacked outputs are joined by
//!    rank 0, [`assemble`]); the gathered stage times go to rank 0 ([`gather`]).
//!
//! On failure at any point every rank removes what it staged (or committed), rank 0 prints one
//! message naming the failing rank(s) and file, and every rank exits non-zero. Between the
//! first two points the ranks bind to their node's devices and CPUs ([`binding`]).
//! A single rank (no `mpirun`, or `-np 1`) runs the pipeline directly, as before.

pub mod agree;
pub mod assemble;
pub mod binding;
pub mod comm;
pub mod gather;
pub mod join;
pub mod precheck;
pub mod slices;
pub mod split;

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tracing::info;

pub use agree::{describe_failures, RanksFailed};
pub use binding::Binding;
pub use comm::{Comm, World};

use crate::error::Error;
use crate::input::{self, Grid, InputError, VarLayout};
use crate::output::{self, OutputLayout};
use crate::plan::JobPlan;
use crate::report::progress::Ui;
use crate::window::WindowSpec;
use gather::{JobTiming, RankTiming};

#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// A single-process run's error.
    #[error(transparent)]
    Run(#[from] Error),
    /// What the ranks agreed went wrong: one line per failure, naming the rank(s).
    #[error("{0}")]
    Ranks(String),
}

impl From<RanksFailed> for DistError {
    fn from(e: RanksFailed) -> DistError {
        DistError::Ranks(e.0)
    }
}

/// Which resource flags the user gave (the others default per rank: a node's CPUs and memory
/// are shared among its ranks).
#[derive(Clone, Copy, Debug, Default)]
pub struct Given {
    pub threads: bool,
    pub max_mem: bool,
    /// `--device` was given: every rank uses that GPU ordinal.
    pub device: bool,
}

/// What rank 0 reports at the end of a successful job.
#[derive(Debug)]
pub struct Finished {
    /// The timing table to print.
    pub table: String,
    /// Output files written (by all ranks).
    pub outputs: usize,
}

/// The hidden directory a rank writes into before the commit (named for the rank's process,
/// see `output::owner`; rank 0 learns the others' at the first agreement).
pub fn staging_dir(out: &Path, rank: usize, size: usize) -> PathBuf {
    out.join(output::owner::partial_name(output::owner::Kind::Rank { rank, size }))
}

/// Run `plan` on every rank of `comm`. Collective: every rank calls it with the same plan.
pub fn run(plan: &JobPlan, given: Given, comm: &Comm, ui: &Ui) -> Result<Finished, DistError> {
    crate::util::knobs::log();
    if comm.size() == 1 {
        let outcome = crate::run::run(plan, ui)?;
        return Ok(Finished { table: outcome.report.table(), outputs: outcome.outputs.len() });
    }
    Ranks::new(plan, comm).run(given, ui)
}

/// What a rank found when it validated its slice (sent to every rank at the first agreement).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Checked {
    /// The first input file of the slice (none for an idle rank).
    first: Option<PathBuf>,
    var: String,
    shape: String,
    /// Hash of the latitude and longitude values.
    coords: u64,
    /// Needed files that do not exist (`--allow-missing`).
    missing: Vec<PathBuf>,
    /// The rank's staging directory.
    staging: PathBuf,
}

/// One rank's view of the job.
struct Ranks<'a> {
    plan: &'a JobPlan,
    comm: &'a Comm,
    rank: usize,
    size: usize,
    spec: WindowSpec,
    /// Every day of `spec` lies past the input calendar's year (found at validation): idle.
    past: std::cell::Cell<bool>,
    staging: PathBuf,
    wall: Instant,
}

impl<'a> Ranks<'a> {
    fn new(plan: &'a JobPlan, comm: &'a Comm) -> Ranks<'a> {
        let (rank, size) = (comm.rank(), comm.size());
        Ranks {
            plan,
            comm,
            rank,
            size,
            spec: slices::rank_spec(&plan.window, size, rank),
            past: std::cell::Cell::new(false),
            staging: staging_dir(&plan.output.dir, rank, size),
            wall: Instant::now(),
        }
    }

    fn busy(&self) -> bool {
        !self.spec.doys.is_empty() && !self.past.get()
    }

    fn run(&self, given: Given, ui: &Ui) -> Result<Finished, DistError> {
        // 1. validation: local checks, then the first collective
        let t = Instant::now();
        // rank 0 holds the output directory's lock for the job (see `output::lock`)
        let lock = match self.rank {
            0 => output::prepare_dir(&self.plan.output.dir)
                .and_then(|()| output::lock::JobLock::acquire(&self.plan.output.dir, &self.plan.command_line))
                .map(Some),
            _ => Ok(None),
        };
        let checked = match lock {
            Ok(lock) => self.validate().map(|c| (Checked { staging: self.staging.clone(), ..c }, lock)),
            Err(e) => Err(e.into()),
        };
        let validate_seconds = t.elapsed().as_secs_f64();
        let (checked, _lock) = match checked {
            Ok((c, lock)) => (Ok(c), lock),
            Err(e) => (Err(e.to_string()), None),
        };
        let all: Vec<Checked> = self.agree(checked, |_| ())?;
        self.cross_check(&all)?;
        crate::util::signals::on_interrupt_remove(&self.staging);
        let missing: BTreeSet<&PathBuf> = all.iter().flat_map(|c| &c.missing).collect();

        // binding (collective, reached by every rank)
        let binding = Binding::resolve(self.comm);
        if self.rank == 0 {
            info!("{} ranks; rank 0 on {}", self.size, binding.describe());
        }

        // 2. computation, into the staging directory
        let rank_plan = self.rank_plan(given, &binding);
        let outcome = if self.busy() { self.compute(&rank_plan, ui, missing.len()).map(Some) } else { Ok(None) };
        let computed = self.agree(outcome.as_ref().map(|_| ()).map_err(String::clone), |_| self.clean_staging());
        let outcome = match (computed, outcome) {
            (Ok(_), Ok(outcome)) => outcome,
            (Err(e), _) => return Err(e),
            (Ok(_), Err(_)) => unreachable!("a failed rank fails the agreement"),
        };

        // 3. commit, timing
        let t = Instant::now();
        let result = self.commit(outcome.as_ref().map_or(&[][..], |o| &o.outputs[..]), &all);
        let commit_seconds = t.elapsed().as_secs_f64();
        let (result, published) = match result {
            Ok(p) => (Ok(()), p),
            Err(e) => (Err(e), None),
        };
        let report = outcome.as_ref().map(|o| &o.report);
        let mut timing = RankTiming::new(
            self.rank,
            &binding,
            &self.spec.doys,
            report,
            &[("discover", validate_seconds), ("write", commit_seconds)],
        );
        timing.wall_seconds = self.wall.elapsed().as_secs_f64();
        let mut published = published;
        let mut rolled_back = Ok(());
        let per_rank = self.agree(result.map(|_| timing).map_err(|e| e.to_string()), |_| {
            if let Some(p) = published.take() {
                rolled_back = p.rollback();
            }
            self.clean_staging();
        });
        if let Some(p) = published {
            p.commit();
        }
        if rolled_back.is_ok() {
            self.clean_staging();
        }
        let per_rank = match (per_rank, rolled_back) {
            (Err(DistError::Ranks(m)), Err(e)) => {
                return Err(DistError::Ranks(format!("{m}\nrank {}: {e}", self.rank)))
            }
            (per_rank, _) => per_rank?,
        };
        self.finish(per_rank)
    }

    /// This rank's plan: its slice of the days, its staging directory as the output directory,
    /// and its share of the node's threads, memory and GPUs where the user did not give them.
    fn rank_plan(&self, given: Given, binding: &Binding) -> JobPlan {
        let mut rank_plan = self.plan.clone();
        rank_plan.window = self.spec.clone();
        rank_plan.output.dir = self.staging.clone();
        rank_plan.timing_json = None;
        rank_plan.rank = (self.rank, self.size);
        rank_plan.trace_json = self.plan.trace_json.as_deref().map(|p| crate::pipeline::trace::rank_path(p, self.rank));
        if !given.threads {
            rank_plan.threads = binding.threads;
        }
        if !given.max_mem {
            rank_plan.max_mem = (self.plan.max_mem / binding.node_size as u64).max(256 << 20);
        }
        if !given.device {
            // this rank's GPU: its node-local rank among the visible devices (wrapped modulo
            // the device count when no visible-device list says how many there are)
            rank_plan.device = binding.device_ordinal();
            rank_plan.gpu.device_wraps = true;
            if let Some(limit) = rank_plan.gpu.max_device_mem {
                // ranks of a node sharing its GPUs share the budget
                let sharing = binding.node_size.div_ceil(binding.visible_count().unwrap_or(binding.node_size).max(1));
                rank_plan.gpu.max_device_mem = Some(limit / sharing.max(1) as u64);
            }
        }
        rank_plan
    }

    /// Run this rank's slice (`rank_plan`) into its staging directory, setting its outputs'
    /// missing-file count to the whole job's `missing`. An error or a panic in the pipeline
    /// becomes this rank's failure message at the agreement, not a lost rank.
    fn compute(&self, rank_plan: &JobPlan, ui: &Ui, missing: usize) -> Result<crate::pipeline::RunOutcome, String> {
        let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::run::run(rank_plan, ui).and_then(|o| {
                if o.report.files_missing != missing {
                    for path in &o.outputs {
                        assemble::set_missing_count(path, missing)?;
                    }
                }
                Ok(o)
            })
        }));
        match attempt {
            Ok(Ok(o)) => Ok(o),
            Ok(Err(e)) => Err(e.to_string()),
            Err(panic) => Err(format!(
                "internal error: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or(panic.downcast_ref::<&str>().copied())
                    .unwrap_or("panic")
            )),
        }
    }

    /// The job's timing from every rank's (`per_rank`): written to `--timing-json` by rank 0,
    /// and the table and output count it reports.
    fn finish(&self, per_rank: Vec<RankTiming>) -> Result<Finished, DistError> {
        let outputs = match self.plan.output.layout {
            OutputLayout::PerDoy => per_rank.iter().map(|r| r.outputs).sum(),
            OutputLayout::Stacked => self.plan.stats.n_stats(),
            OutputLayout::Climatology => 1,
        };
        let job = JobTiming::new(
            self.plan.command_line.clone(),
            format!("{:?}", self.plan.output.layout),
            self.plan.rules.computed_spec(&self.plan.window).required_dates_with(self.plan.rules.edges).len(),
            outputs,
            self.wall.elapsed().as_secs_f64(),
            per_rank,
        );
        if let (0, Some(path)) = (self.rank, &self.plan.timing_json) {
            job.write_json(path).map_err(|cause| Error::Io { path: path.clone(), cause })?;
        }
        Ok(Finished { table: job.table(), outputs })
    }

    /// Everything that can fail before any collective: the output directory, outputs that
    /// exist already, and every input file of this rank's slice.
    fn validate(&self) -> Result<Checked, Error> {
        let plan = self.plan;
        output::prepare_dir(&plan.output.dir)?;
        let names = plan.stats.names();
        let mine = match plan.output.layout {
            OutputLayout::PerDoy => output::planned_paths(&plan.output, &names, &self.spec.doys),
            OutputLayout::Stacked | OutputLayout::Climatology if self.rank == 0 => {
                output::planned_paths(&plan.output, &names, &[])
            }
            OutputLayout::Stacked | OutputLayout::Climatology => Vec::new(),
        };
        output::publish::check_replaceable(&mine, plan.output.overwrite)?;
        if !self.busy() {
            return Ok(Checked::default());
        }
        let Some(found) = crate::run::find_inputs_or_past(plan, &self.spec)? else {
            // every day of this rank's share lies past the input calendar's year
            self.past.set(true);
            return Ok(Checked::default());
        };
        let crate::run::FoundInputs { inputs, first, layout, grid } = found;
        if let Some(trace) = &plan.trace_json {
            // every rank's timeline (`FILE.rankN`) on none of this rank's inputs
            let paths: Vec<_> =
                (0..self.size).map(|r| ("--trace-json", crate::pipeline::trace::rank_path(trace, r))).collect();
            let mut files: Vec<&Path> = inputs.files.values().map(|s| s.path.as_path()).collect();
            files.dedup();
            crate::plan::reports::check_inputs(&paths, &plan.source.describe(), &files)?;
        }
        for path in inputs.files.values().skip(1).map(|s| &s.path) {
            if precheck::look(path) == precheck::Look::Plausible {
                continue;
            }
            // in a child first: a damaged header can crash the library (see input::contain)
            let inspect = || -> Result<VarLayout, Error> {
                Ok(VarLayout::inspect(&input::open(path)?, path, Some(&layout.name), false)?)
            };
            input::contain::survives(path, "reading the header", || drop(inspect()))?;
            let other = inspect()?;
            if (other.nlat(), other.nlon()) != (layout.nlat(), layout.nlon()) {
                return Err(InputError::ShapeMismatch {
                    path: path.clone(),
                    var: other.name.clone(),
                    found: other.shape_text(),
                    expected: layout.shape_text(),
                    first: first.clone(),
                }
                .into());
            }
        }
        Ok(Checked {
            first: Some(first),
            var: layout.name.clone(),
            shape: layout.shape_text(),
            coords: coords_hash(&grid),
            missing: inputs.missing,
            staging: PathBuf::new(),
        })
    }

    /// Every busy rank must have found the same variable, shape and coordinates.
    fn cross_check(&self, all: &[Checked]) -> Result<(), DistError> {
        let busy: Vec<(usize, &Checked)> = all.iter().enumerate().filter(|(_, c)| c.first.is_some()).collect();
        let Some(&(r0, c0)) = busy.first() else { return Ok(()) };
        let failures: Vec<(usize, String)> = busy
            .iter()
            .filter(|(_, c)| (&c.var, &c.shape, c.coords) != (&c0.var, &c0.shape, c0.coords))
            .map(|&(r, c)| {
                let first = c.first.as_deref().unwrap_or(Path::new("?")).display();
                let first0 = c0.first.as_deref().unwrap_or(Path::new("?")).display();
                let what = if (&c.var, &c.shape) != (&c0.var, &c0.shape) {
                    format!(
                        "variable '{}' is {}, but {first0} (rank {r0}) has '{}' {}",
                        c.var, c.shape, c0.var, c0.shape
                    )
                } else {
                    format!("latitude/longitude coordinates differ from {first0} (rank {r0})")
                };
                (r, format!("{first}: {what}"))
            })
            .collect();
        if failures.is_empty() {
            Ok(())
        } else {
            if let Some(path) = &self.plan.timing_json.as_ref().filter(|_| self.rank == 0) {
                let _ = std::fs::remove_file(path);
            }
            Err(DistError::Ranks(describe_failures(&failures, self.size)))
        }
    }

    /// Publish this rank's staged outputs (per-doy), or join every rank's stacked slices and
    /// publish them (rank 0, stacked), all or nothing (see [`output::publish`]); kept undoable
    /// until every rank has published.
    fn commit(&self, staged: &[PathBuf], checked: &[Checked]) -> Result<Option<output::publish::Published>, Error> {
        let dir = &self.plan.output.dir;
        let mut pairs = Vec::new();
        match self.plan.output.layout {
            OutputLayout::PerDoy => {
                for path in staged {
                    pairs.push((path.clone(), dir.join(path.file_name().expect("output files have names"))));
                }
            }
            // one file per statistic along `time`, or the climatology's one file along `doy`
            OutputLayout::Stacked | OutputLayout::Climatology if self.rank == 0 => {
                let joined_dir = self.staging.join(".joined");
                std::fs::create_dir_all(&joined_dir).map_err(|cause| Error::Io { path: joined_dir.clone(), cause })?;
                let targets = output::planned_paths(&self.plan.output, &self.plan.stats.names(), &[]);
                let joined: Vec<PathBuf> =
                    targets.iter().map(|t| joined_dir.join(t.file_name().expect("output files have names"))).collect();
                // the ranks that wrote parts: those that found inputs for their days
                let staging = join::Staging {
                    n_items: self.plan.window.doys.len(),
                    size: self.size,
                    wrote: &|r| checked[r].first.is_some(),
                    part: &|r, name| checked[r].staging.join(name),
                };
                let along = match self.plan.output.layout {
                    OutputLayout::Climatology => "doy",
                    _ => "time",
                };
                join::join_each(&joined, &staging, |_, parts, out| {
                    let paths: Vec<PathBuf> = parts.iter().map(|p| p.path.clone()).collect();
                    assemble::concat_along(&paths, out, along, self.plan.output.deflate)
                })?;
                pairs.extend(joined.into_iter().zip(targets));
            }
            OutputLayout::Stacked | OutputLayout::Climatology => {}
        }
        if pairs.is_empty() {
            return Ok(None);
        }
        let threads = self.plan.output.write_threads.unwrap_or_else(output::default_write_threads);
        Ok(Some(output::publish::publish(&pairs, &self.staging.join(".previous"), threads)?))
    }

    fn clean_staging(&self) {
        let _ = std::fs::remove_dir_all(&self.staging);
    }

    /// An agreement point ([`agree::agree`]); on failure `cleanup` runs and rank 0 removes the
    /// timing report, before every rank returns the same error naming the failed ranks.
    fn agree<T: Serialize + DeserializeOwned>(
        &self,
        local: Result<T, String>,
        cleanup: impl FnOnce(()),
    ) -> Result<Vec<T>, DistError> {
        let agreed = agree::agree(self.comm, local.map_err(DistError::Ranks));
        if agreed.is_err() {
            cleanup(());
            if let Some(path) = self.plan.timing_json.as_ref().filter(|_| self.rank == 0) {
                let _ = std::fs::remove_file(path);
            }
        }
        agreed
    }
}

fn coords_hash(grid: &Grid) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for v in grid.all_values() {
        v.to_bits().hash(&mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_directories_are_hidden_and_per_rank() {
        let d = staging_dir(Path::new("out"), 2, 5);
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        assert!(d.starts_with("out") && name.starts_with(".sstclim-rank2-of-5-"), "{name}");
        let owner = output::owner::owner_of(&name).expect("a job's own name");
        assert_eq!(owner.pid, std::process::id() as i32);
    }
}
