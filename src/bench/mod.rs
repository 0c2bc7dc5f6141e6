//! Benchmarks of the engines, the read and write paths and the GPU baseline kernels of the
//! source documents, with their subcommands' arguments.

pub mod baseline_kernels;
pub mod baselines;
pub mod kernel;
pub mod locate;
pub mod read;
pub mod write;
