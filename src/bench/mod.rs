//! Benchmarks of the engines, the read and write paths and the GPU baseline kernels of the
//! source documents, with their subcommands' flags ([`BenchCommand`]). Built only with the
//! `bench` cargo feature: they measure the product, they are not part of it (the GPU node's
//! measuring builds turn the feature on, as do the tests).

pub mod baseline_kernels;
pub mod baselines;
pub mod detect;
pub mod kernel;
pub mod locate;
pub mod read;
pub mod write;
pub mod write_floor;

use std::path::PathBuf;

use crate::error::Error;

/// The benchmark subcommands (flattened into `sstclim`'s subcommands).
#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Time an engine on a synthetic pool in memory beside the device's copy bandwidths, and
    /// check it against the CPU engine.
    BenchKernel(kernel::BenchKernelArgs),
    /// Time reading every input file of a job whole with pread from all threads (no library,
    /// no decoding): the floor the pipeline is measured against.
    BenchRead(read::BenchReadArgs),
    /// Time writing a job's outputs through libnetcdf and directly (pwrite) on synthetic
    /// results.
    #[command(hide = true)]
    BenchWrite(write::BenchWriteArgs),
    /// Time writing files of the same names and sizes as a job's outputs with pwrite and
    /// fsync from several threads (no HDF5, no computation): the write stage's floor.
    #[command(hide = true)]
    BenchWriteFloor(write_floor::BenchWriteFloorArgs),
    /// Time locating the data variable in every input file: HDF5 metadata parsed here, or
    /// queried through libhdf5 (in this process or in forked processes).
    #[command(hide = true)]
    BenchLocate(locate::BenchLocateArgs),
    /// Time our GPU kernel against the source documents' GPU designs on the same synthetic
    /// pool, with their errors against our exact result (CUDA).
    BenchBaselines(baselines::BenchBaselinesArgs),
    /// Time event detection alone (heatwaves and cold spells) on a synthetic int16 band in
    /// memory, of any size: no input files.
    #[command(hide = true)]
    BenchDetect(detect::BenchDetectArgs),
}

impl BenchCommand {
    /// Run the benchmark and print its table; `Ok(false)` when its check found differences.
    pub fn run(&self) -> Result<bool, BenchError> {
        match self {
            BenchCommand::BenchRead(args) => print!("{}", read::bench_read(args)?.table()),
            BenchCommand::BenchLocate(args) => print!("{}", locate::bench_locate(args)?.table()),
            BenchCommand::BenchWrite(args) => print!("{}", write::bench_write(args)?.table()),
            BenchCommand::BenchDetect(args) => print!("{}", detect::bench_detect(args)?.table()),
            BenchCommand::BenchWriteFloor(args) => print!("{}", write_floor::bench_write_floor(args)?.table()),
            BenchCommand::BenchKernel(args) => {
                let record = kernel::bench_kernel(args)?;
                print!("{}", record.table());
                return Ok(!record.differences.is_some_and(|d| d > 0));
            }
            BenchCommand::BenchBaselines(args) => {
                let record = baselines::bench_baselines(args)?;
                print!("{}", record.markdown());
                return Ok(record.ours_check.differences == 0);
            }
        }
        Ok(true)
    }
}

/// Why a benchmark failed: the job's own errors, and what only a benchmark checks.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Job(#[from] Error),
    #[error("{}: no direct path: {why}", path.display())]
    NotDirect { path: PathBuf, why: String },
    #[error("{}: {why}", path.display())]
    Locate { path: PathBuf, why: String },
    #[error("{0} file(s) not located by the forked processes")]
    NotLocated(usize),
    #[error(transparent)]
    Baselines(#[from] baseline_kernels::BaselineError),
    #[error("{label}: {cause}")]
    Baseline { label: String, cause: baseline_kernels::BaselineError },
    #[error("{label}: {cause}")]
    Other { label: String, cause: String },
}

/// The stages' errors reach a benchmark as the job's.
macro_rules! as_job_error {
    ($($t:ty),*) => {
        $(impl From<$t> for BenchError {
            fn from(e: $t) -> Self {
                BenchError::Job(e.into())
            }
        })*
    };
}
as_job_error!(crate::input::InputError, crate::engine::EngineError, crate::engine::BackendError);

/// Write a benchmark's record as JSON, with the `SSTCLIM_*` knobs it ran under.
pub(crate) fn write_record<T: serde::Serialize>(record: &T, path: &std::path::Path) -> Result<(), Error> {
    crate::report::timing::write_report_json(record, path).map_err(|cause| Error::Io { path: path.into(), cause })
}
