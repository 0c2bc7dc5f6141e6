//! Why an engine failed, kept typed: a device call (which API call, on which device, what the
//! runtime said), a job beyond what the GPU kernel or device can take, a device-resident pool
//! that is not there, or a device that never started. The host engines cannot fail. Each
//! message reads `<engine> engine: <cause>` on one line.

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

/// A backend that cannot run here: a typed error, never a panic.
#[derive(Clone, Debug, thiserror::Error)]
pub enum BackendError {
    #[error("the CUDA backend is unavailable: {0}")]
    CudaUnavailable(OpenError),
    #[error("the HIP backend is unavailable: {0}")]
    HipUnavailable(OpenError),
}

/// A failed device call: which API call, on which device, and what the runtime said.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{api} {call} failed on {device}: {detail}")]
pub struct GpuError {
    pub api: &'static str,
    pub call: &'static str,
    pub device: String,
    pub detail: String,
}

/// Why a GPU device cannot be opened (the backend is then unavailable): which API call on which
/// device failed, or what is missing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("the CUDA driver library (libcuda.so) was not found")]
    NoDriver,
    #[error("no {api} device is visible")]
    NoDevice { api: &'static str },
    #[error("{api} device {ordinal} requested, {count} visible")]
    NotVisible { api: &'static str, ordinal: usize, count: usize },
    #[error("{call} on {api} device {ordinal}: {detail}")]
    Call { api: &'static str, call: &'static str, ordinal: usize, detail: String },
    #[error("{device}: NVRTC (libnvrtc.so) is not on the library path (add CUDA's lib64 to LD_LIBRARY_PATH)")]
    NoNvrtc { device: String },
    #[error("this sstclim was built without the `hip` cargo feature")]
    NotBuilt,
    /// The test hook's device that fails to start (`SSTCLIM_TEST_DEFERRED_START=fail`).
    #[error("test: the device did not start")]
    TestHook,
}

/// A job (or a tile of it) that the GPU kernel or the device cannot take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    #[error("windows of {days} days exceed the GPU kernel's {max} (use --backend cpu)")]
    WindowTooLong { days: usize, max: usize },
    #[error("the GPU kernel computes at most {max} percentiles per run")]
    TooManyPercentiles { asked: usize, max: usize },
    /// The kernel multiplies 32-bit rows by a 32-bit stride of at most this many cells.
    #[error("{cells} cells in one tile exceed the GPU kernel's {max}")]
    TooManyCells { cells: usize, max: usize },
    #[error("a ring of {groups} x {rows} keys per cell does not fit shared memory ({smem_per_block} bytes per block)")]
    RingTooLarge { groups: usize, rows: usize, smem_per_block: usize },
    #[error("--gpu-block {block} is not a multiple of the wave width {wave} within 1..=1024")]
    BadBlock { block: usize, wave: usize },
    #[error("no block of {wave} threads fits {bytes_per_cell} bytes of shared memory")]
    NoBlock { wave: usize, bytes_per_cell: usize },
    #[error("device memory budget of {:.2} GB is too small even for {cells} cells", *budget as f64 / 1e9)]
    BudgetTooSmall { budget: u64, cells: usize },
}
