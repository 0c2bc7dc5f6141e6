//! Event detection on a GPU: the band's pool, climatology and days uploaded once, every kind
//! of event detected, measured and summarised there by `kernels/events.hip` (one thread a
//! cell), and only the events and per-year summaries brought back — bit for bit what the CPU
//! scan ([`super::scan::detect_band`]) finds, NaN payloads aside (the outputs take NaN as a
//! fill value).
//!
//! Why a module of its own: the CPU scan stays the reference and the only path without a GPU;
//! this one only moves a band to a device and back. [`params`] is the kernel's argument block,
//! [`on_device`] the upload, launches and download of one band, [`choose`] the one place the
//! events job picks the CPU scan or a device (`events --backend`).

pub mod choose;
pub mod on_device;
pub mod params;
#[cfg(test)]
mod host_check;
#[cfg(test)]
pub(crate) mod seeded;

pub use choose::{detect, Detector};
pub use on_device::{detect_band_on, GpuValue};
