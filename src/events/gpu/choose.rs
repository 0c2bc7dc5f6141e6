//! Where a band's events are detected, chosen once per job from `events --backend` (as `run
//! --backend` chooses its engine: `auto` takes a GPU when one starts, CUDA then HIP, else the
//! CPU), and the one call the events job makes per band and pool type ([`detect`]).

use std::sync::Mutex;

use super::super::scan::{detect_band, BandInput, Found, Kind};
use super::super::EventsError;
use super::on_device::{detect_band_on, GpuValue};
use crate::engine::gpu::cuda::CudaDevice;
use crate::engine::gpu::OpenError;
use crate::engine::{Backend, BackendError};

/// The device a job's bands are detected on.
pub enum Detector {
    /// The CPU scan ([`detect_band`], the reference).
    Cpu,
    Cuda(Mutex<CudaDevice>),
    #[cfg(feature = "hip")]
    Hip(Mutex<crate::engine::gpu::hip::HipDevice>),
}

impl Detector {
    /// The detector `backend` selects, on GPU `device`, or why that GPU cannot be used
    /// (`reference` is the CPU scan: there is one detection).
    pub fn start(backend: Backend, device: usize) -> Result<Detector, BackendError> {
        match backend {
            Backend::Cpu | Backend::Reference => Ok(Detector::Cpu),
            Backend::Cuda => cuda(device).map_err(BackendError::CudaUnavailable),
            Backend::Hip => hip(device).map_err(BackendError::HipUnavailable),
            Backend::Auto => {
                let cuda = match cuda(device) {
                    Ok(d) => return Ok(d),
                    Err(e) => e,
                };
                let hip = match hip(device) {
                    Ok(d) => return Ok(d),
                    Err(e) => e,
                };
                tracing::debug!("no GPU for events (CUDA: {cuda}; HIP: {hip}); detecting on the CPU");
                Ok(Detector::Cpu)
            }
        }
    }

    /// The name `--backend` gives what was chosen.
    pub fn name(&self) -> &'static str {
        match self {
            Detector::Cpu => "cpu",
            Detector::Cuda(_) => "cuda",
            #[cfg(feature = "hip")]
            Detector::Hip(_) => "hip",
        }
    }
}

fn cuda(device: usize) -> Result<Detector, OpenError> {
    if !crate::engine::gpu::cuda::driver_present() {
        return Err(OpenError::NoDriver);
    }
    Ok(Detector::Cuda(Mutex::new(CudaDevice::open(device, true)?)))
}

#[cfg(feature = "hip")]
fn hip(device: usize) -> Result<Detector, OpenError> {
    Ok(Detector::Hip(Mutex::new(crate::engine::gpu::hip::HipDevice::open(device, true)?)))
}

#[cfg(not(feature = "hip"))]
fn hip(_device: usize) -> Result<Detector, OpenError> {
    Err(OpenError::NotBuilt)
}

/// Every kind's events in the band, on `detector`: the CPU scan, or the same on a device
/// (`value` decodes the pool's values on the CPU; `table` is the int16 pool's decoding,
/// `value = table[v + 32768]`, for the device). Called on the job's rayon pool.
pub fn detect<T: GpuValue>(
    detector: &Detector,
    input: &BandInput<'_, T>,
    value: impl Fn(T) -> f64 + Sync,
    table: Option<&[f64]>,
    kinds: &[Kind<'_>],
    cell0: usize,
) -> Result<Vec<Found>, EventsError> {
    let found = match detector {
        Detector::Cpu => detect_band(input, value, kinds, cell0),
        Detector::Cuda(dev) => {
            let mut dev = dev.lock().unwrap_or_else(|e| e.into_inner());
            detect_band_on(&mut *dev, input, table, kinds, cell0)?
        }
        #[cfg(feature = "hip")]
        Detector::Hip(dev) => {
            let mut dev = dev.lock().unwrap_or_else(|e| e.into_inner());
            detect_band_on(&mut *dev, input, table, kinds, cell0)?
        }
    };
    Ok(found)
}
