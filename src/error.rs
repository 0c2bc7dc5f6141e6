//! The job's error: every stage's error, plus the few that belong to a whole run. The tools
//! and the benchmarks beside the job wrap it in their own (generate's, demo's, bench's).
//! Messages are one line (missing-file lists excepted) and name the file, variable or flag.

use std::path::PathBuf;

use crate::discover::DiscoverError;
use crate::engine::{BackendError, EngineError};
use crate::input::contain::ContainError;
use crate::input::{InputError, ReaderError};
use crate::output::OutputError;
use crate::plan::PlanError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Reader(#[from] ReaderError),
    #[error(transparent)]
    Contain(#[from] ContainError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("none of the {0} input files the job needs exist")]
    NoInputs(usize),
    #[error("memory source '{name}': {missing} of the days the job needs are not in the series (first: {}); allow missing days to treat them as missing values", first.display())]
    MemoryDates { name: String, missing: usize, first: std::path::PathBuf },
    #[error("the job kept no results in memory (a bug in sstclim)")]
    NoMemoryResults,
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    #[error(
        "no year of {years} has day of year {doys} in the {calendar} calendar, so the job needs no input file{hint}"
    )]
    NoDays { years: String, doys: String, calendar: String, hint: &'static str },
    #[error("--doys {doys} asks for day {day} but a year of the input's {calendar} calendar has {max} days: pass days 1-{max}")]
    DoysPastYear { doys: String, day: u16, calendar: &'static str, max: u16 },
    #[error("--layout climatology holds every day of the input's year: --doys {doys}, but a year of its {calendar} calendar has {n} days (pass --doys 1-{n} or leave it out)")]
    ClimatologyYear { doys: String, calendar: &'static str, n: u16 },
    #[error(
        "--max-mem {budget} bytes cannot hold the samples of one {unit} ({need} bytes); raise --max-mem (by default \
         half of what the available memory, the cgroup's memory limit and ulimit -v leave)"
    )]
    Memory { budget: u64, need: u64, unit: &'static str },
    #[error("cannot allocate {bytes} bytes for the sample pool: {cause}")]
    Alloc { bytes: usize, cause: std::io::Error },
    #[error(
        "verification failed in tile {tile}: {differences} values differ between the {engine} and reference engines"
    )]
    Verify { tile: usize, differences: usize, engine: &'static str },
    #[error("{}: {cause}", path.display())]
    Io { path: PathBuf, cause: std::io::Error },
    #[error(
        "{}: '{var}' holds {value}, outside the int16 packing range {lo}..{hi} of --pack-scale/--pack-offset; choose a \
         larger scale or another offset",
        path.display()
    )]
    PackRange { path: PathBuf, var: String, value: String, lo: f64, hi: f64 },
    #[error("{}: '{var}' holds {value}, beyond float32's range (±3.4028235e38) of {pool}; {remedy}", path.display())]
    PoolRange { path: PathBuf, var: String, value: String, pool: &'static str, remedy: &'static str },
    #[error(
        "--pack-scale packs float input, but '{var}' in {} is already stored as {storage}: --pool i16 keeps its \
         integers exactly",
        path.display()
    )]
    PackStored { var: String, path: PathBuf, storage: &'static str },
    #[error(
        "--pool i16 keeps the input's packed integers, but '{var}' in {} is stored as {storage}; use f32 or f64, or \
         pack it (lossy) with --pack-scale",
        path.display()
    )]
    PoolNeedsIntegers { var: String, path: PathBuf, storage: &'static str },
    #[error("cannot start {threads} worker threads: {cause}")]
    WorkerThreads { threads: usize, cause: rayon::ThreadPoolBuildError },
    #[error("cannot start a thread to {what}: {cause}")]
    Thread { what: &'static str, cause: std::io::Error },
    #[error("a decoder thread stopped")]
    DecoderStopped,
}
