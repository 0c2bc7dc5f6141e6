//! Why an engine failed, kept typed: a device call (which API call, on which device, what the
//! runtime said), a job beyond what the GPU kernel or device can take, a device-resident pool
//! that is not there, or a device that never started. The host engines cannot fail. Each
//! message reads `<engine> engine: <cause>` on one line.

use super::gpu::{GpuError, LaunchError};
use super::BackendError;

/// An engine failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A device call failed.
    #[error("{engine} engine: {cause}")]
    Gpu { engine: &'static str, cause: GpuError },
    /// The job asks more of the GPU kernel or the device than it can give.
    #[error("{engine} engine: {cause}")]
    Launch { engine: &'static str, cause: LaunchError },
    /// A call that needs the device-resident pool found none (or one too small).
    #[error("{engine} engine: {cause}")]
    Staging { engine: &'static str, cause: StagingError },
    /// The device was being started on its own thread and did not start (see
    /// [`super::Deferred`]).
    #[error("{engine} engine: {cause}")]
    Start { engine: &'static str, cause: StartError },
}

impl EngineError {
    /// The engine that failed.
    pub fn engine(&self) -> &'static str {
        match self {
            EngineError::Gpu { engine, .. }
            | EngineError::Launch { engine, .. }
            | EngineError::Staging { engine, .. }
            | EngineError::Start { engine, .. } => engine,
        }
    }
}

/// A device-resident pool that cannot serve a call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StagingError {
    #[error("no device-resident pool")]
    NoPool,
    #[error("no device-resident pool holds slot {slot}")]
    NoSlot { slot: usize },
    #[error("no device-resident pool holds slots {slots:?}")]
    NoSlots { slots: std::ops::Range<usize> },
    /// Computing on it would take more than one chunk of cells (the rows are in place only for
    /// a chunk of all cells).
    #[error("the device-resident pool leaves room for {room} of {n_cells} cells (use --gpu-pool host)")]
    TooLarge { room: usize, n_cells: usize },
}

/// Why a device being started on its own thread never started.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Backend(BackendError),
    #[error("the thread starting the device panicked")]
    Panicked,
    #[error("the device was already being started")]
    AlreadyStarting,
}
