//! What the GPU kernel cannot take on any device (more percentiles than it keeps, windows
//! longer than its largest instantiation) and the typed error for every job or tile the kernel
//! or a device refuses. The device-independent limits are checked from plain parameters
//! ([`check_gpu_limits`]), so a job is refused before anything is read.

pub use crate::engine::error::LaunchError;
use crate::engine::EngineError;

/// Most percentiles one launch handles (`SC_MAX_PCT` in the kernel).
pub const MAX_PERCENTILES: usize = 8;

/// The kernel instantiations: largest number of groups per target each handles.
const MAXL_VARIANTS: [usize; 3] = [11, 12, 32];

/// The limits of the GPU kernel that hold on every device, from plain parameters, so that a
/// job can be refused before any file is read: at most [`MAX_PERCENTILES`] percentiles, and
/// windows of at most as many days as the largest kernel instantiation handles. `window_days`
/// is the most days any target's window has: its groups (`WindowPlan::targets[i].groups.len()`),
/// at most `2 * half_window + 1`. `engine` names the engine in the error. What depends on the
/// device (shared memory, wave width, memory) is checked when the launches are planned.
pub fn check_gpu_limits(engine: &'static str, n_percentiles: usize, window_days: usize) -> Result<(), EngineError> {
    kernel_limits(n_percentiles, window_days).map(drop).map_err(|cause| EngineError::Launch { engine, cause })
}

/// [`check_gpu_limits`]; returns the kernel instantiation's groups per target (`maxl`).
pub(super) fn kernel_limits(n_percentiles: usize, window_days: usize) -> Result<usize, LaunchError> {
    let days = window_days.max(1);
    let max = MAXL_VARIANTS[MAXL_VARIANTS.len() - 1];
    let Some(&maxl) = MAXL_VARIANTS.iter().find(|&&m| m >= days) else {
        return Err(LaunchError::WindowTooLong { days, max });
    };
    if n_percentiles > MAX_PERCENTILES {
        return Err(LaunchError::TooManyPercentiles { asked: n_percentiles, max: MAX_PERCENTILES });
    }
    Ok(maxl)
}
