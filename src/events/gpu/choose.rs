//! Where a band's events are detected, chosen once per job from `events --backend` (as `run
//! --backend` chooses its engine: `auto` takes a GPU when one starts, CUDA then HIP, else the
//! CPU), and the one call the events job makes per band and pool type ([`detect`]).

use std::sync::Mutex;

use super::super::scan::{detect_band, BandInput, Found, Kind};
use super::super::EventsError;
use super::on_device::{detect_band_in_parts, GpuValue};
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
    detect_in_parts(detector, input, value, table, kinds, cell0, usize::MAX)
}

/// [`detect`], a device cutting the band into sub-bands of at most `max_cells` cells.
pub(crate) fn detect_in_parts<T: GpuValue>(
    detector: &Detector,
    input: &BandInput<'_, T>,
    value: impl Fn(T) -> f64 + Sync,
    table: Option<&[f64]>,
    kinds: &[Kind<'_>],
    cell0: usize,
    max_cells: usize,
) -> Result<Vec<Found>, EventsError> {
    let found = match detector {
        Detector::Cpu => detect_band(input, value, kinds, cell0),
        Detector::Cuda(dev) => {
            let mut dev = dev.lock().unwrap_or_else(|e| e.into_inner());
            detect_band_in_parts(&mut *dev, input, table, kinds, cell0, max_cells)?
        }
        #[cfg(feature = "hip")]
        Detector::Hip(dev) => {
            let mut dev = dev.lock().unwrap_or_else(|e| e.into_inner());
            detect_band_in_parts(&mut *dev, input, table, kinds, cell0, max_cells)?
        }
    };
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::super::seeded::{assert_same_found, PoolType, SeededBand};
    use super::*;
    use crate::calendar::CfCalendar;

    // Every backend's detection of seeded bands (every pool type and calendar, heatwaves and
    // cold spells, joined or not; more cells than a block, whole and cut into sub-bands of
    // 100 cells) is the CPU scan's, bit for bit. On the CPU this is the scan against itself;
    // on a GPU (SSTCLIM_REQUIRE_BACKENDS=cuda on the GPU node) it is the kernel against it.
    crate::test_each_backend!(
        detection_equals_the_cpu_scan,
        [cpu, reference, auto, cuda, hip],
        |backend: Backend| {
            let detector = Detector::start(backend, 0).unwrap();
            let calendars = [
                (2001..=2004, CfCalendar::ProlepticGregorian),
                (1990..=1993, CfCalendar::Day360),
                (1995..=1998, CfCalendar::NoLeap),
            ];
            let mut total = 0;
            for (years, cf) in calendars {
                for ty in [PoolType::F32, PoolType::F64, PoolType::I16] {
                    let band = SeededBand::new(years.clone(), cf, 9 * 61 + 4, ty, 7);
                    for (min_duration, max_gap) in [(5, Some(2)), (3, None)] {
                        let kinds = band.kinds(min_duration, max_gap);
                        let want = band.cpu(&kinds, 1000);
                        for max_cells in [usize::MAX, 100] {
                            let what = format!("{} {cf:?} {ty:?} min {min_duration} gap {max_gap:?} parts of {max_cells}", detector.name());
                            let got = band.detect_with(&detector, &kinds, 1000, max_cells).unwrap();
                            total += assert_same_found(&got, &want, &what);
                        }
                    }
                }
            }
            assert!(total > 10_000, "the bands plant events ({total})");
        }
    );
}
