//! What a user or a measurement can set on a GPU engine (`--gpu-ring`, `--gpu-block`,
//! `--max-device-mem`, hints, specialisation), in one struct the backends receive when they
//! start.

/// Where the kernel keeps its ring of staged groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RingPlace {
    /// Shared memory when a block of at least one wave fits, else global memory.
    Auto,
    /// Shared memory (LDS): the fast path.
    Shared,
    /// Device memory: for windows or year counts too large for shared memory.
    Global,
}

/// Settings of a GPU engine.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuOptions {
    /// Device memory budget (default: 90% of what is free).
    pub max_device_mem: Option<u64>,
    pub ring: RingPlace,
    /// Start each search from the previous day's value (on by default; off to measure it).
    pub hints: bool,
    /// Threads per block (default: chosen for occupancy).
    pub block: Option<usize>,
    /// The device ordinal came from the node-local rank: take it modulo the device count
    /// (an ordinal the user gave must exist).
    pub device_wraps: bool,
    /// Compile the kernel for its launch constants where the backend compiles at run time (on
    /// by default; `SSTCLIM_CUDA_SPECIALIZE=0` turns it off, to measure it).
    pub specialize: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions {
            max_device_mem: None,
            ring: RingPlace::Auto,
            hints: true,
            block: None,
            device_wraps: false,
            specialize: crate::util::knobs::cuda_specialize(),
        }
    }
}
