//! Choosing an engine: `--backend` and what each choice starts, failing with a typed error
//! (never a panic) where a backend cannot run here. An explicitly requested GPU is brought up on
//! its own thread ([`Deferred`]) so the run prepares what needs no device meanwhile.

use super::gpu::{self, OpenError};
use super::{BackendError, CpuEngine, Deferred, Engine, GpuOptions, ReferenceEngine};

/// Which engine `--backend` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A GPU when one is usable (CUDA, then HIP), else the CPU.
    Auto,
    /// The fast exact CPU engine (multi-threaded).
    Cpu,
    /// NVIDIA GPUs through CUDA (driver and NVRTC loaded at run time).
    Cuda,
    /// AMD GPUs through HIP (needs a build with `--features hip`).
    Hip,
    /// The naive oracle: sort every window (slow; for checking).
    Reference,
}

impl Backend {
    /// The engine for this backend on GPU `device` (ignored by host engines). `Auto` falls back
    /// to the CPU engine, logging why no GPU engine was taken.
    pub fn engine(self, device: usize, opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
        match self {
            Backend::Cpu => Ok(Box::new(CpuEngine)),
            Backend::Reference => Ok(Box::new(ReferenceEngine)),
            Backend::Cuda => Ok(Box::new(gpu::cuda::engine(device, opts).map_err(BackendError::CudaUnavailable)?)),
            Backend::Hip => hip_engine(device, opts),
            Backend::Auto => {
                let cuda = match gpu::cuda::engine(device, opts) {
                    Ok(e) => return Ok(Box::new(e)),
                    Err(e) => e,
                };
                let hip = match hip_engine(device, opts) {
                    Ok(e) => return Ok(e),
                    Err(e) => e,
                };
                tracing::debug!("no GPU engine (CUDA: {cuda}; {hip}); using the CPU engine");
                Ok(Box::new(CpuEngine))
            }
        }
    }

    /// [`Backend::engine`], with an explicitly requested GPU brought up on its own thread (see
    /// [`Deferred`]): what can be checked at once (the driver library, a build with HIP) is,
    /// so a missing backend still fails here. `Auto` decides which engine it is by starting
    /// one, so it starts at once.
    pub fn start(self, device: usize, opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
        if let (Backend::Cpu, Some(mode)) = (self, crate::util::knobs::test_deferred_start()) {
            return Ok(Box::new(test_start(&mode)));
        }
        let name = match self {
            Backend::Cuda if !gpu::cuda::driver_present() => {
                return Err(BackendError::CudaUnavailable(OpenError::NoDriver))
            }
            Backend::Cuda => "cuda",
            Backend::Hip if cfg!(feature = "hip") => "hip",
            _ => return self.engine(device, opts),
        };
        let moved = opts.clone();
        match Deferred::spawn(name, move || self.engine(device, &moved)) {
            Ok(deferred) => Ok(Box::new(deferred)),
            // no thread to spare: start it here
            Err(_) => self.engine(device, opts),
        }
    }
}

/// A test hook (`SSTCLIM_TEST_DEFERRED_START` with `--backend cpu`): the CPU engine posing as a
/// device that takes 1.5 s to start (`cpu`), or a device that fails to start after 1.5 s
/// (`fail`), so the pipeline's handling of a starting device runs without a GPU. (Long enough
/// that the pipeline reaches its wait first even on a loaded 2-core machine: at 0.3 s it did
/// not always, and the test saw no wait.)
fn test_start(mode: &str) -> Deferred {
    let failing = mode == "fail";
    let started = Deferred::spawn(if failing { "cuda" } else { "cpu" }, move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        match failing {
            true => Err(BackendError::CudaUnavailable(OpenError::TestHook)),
            false => Ok(Box::new(CpuEngine) as Box<dyn Engine + Send>),
        }
    });
    started.expect("a thread for the test hook")
}

#[cfg(feature = "hip")]
fn hip_engine(device: usize, opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
    Ok(Box::new(gpu::hip::engine(device, opts).map_err(BackendError::HipUnavailable)?))
}

#[cfg(not(feature = "hip"))]
fn hip_engine(_device: usize, _opts: &GpuOptions) -> Result<Box<dyn Engine + Send>, BackendError> {
    Err(BackendError::HipUnavailable(OpenError::NotBuilt))
}
