//! The kernel's argument block, laid out as `ClimParams` in `kernels/climatology.hip`, so that
//! one launch hands the kernel every address and size it reads: kept apart so its layout can
//! be checked against the kernel's.

/// A device address (CUDA `CUdeviceptr`, HIP `hipDeviceptr_t`), as the kernel takes it.
pub type DevPtr = u64;

/// The kernel's argument block (`ClimParams` in kernels/climatology.hip: same order and sizes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelParams {
    pub pool: DevPtr,
    pub out_values: DevPtr,
    pub out_counts: DevPtr,
    pub load_start: DevPtr,
    pub loads: DevPtr,
    pub target_lists: DevPtr,
    pub target_nl: DevPtr,
    pub group_off: DevPtr,
    pub group_rows: DevPtr,
    pub group_first: DevPtr,
    pub pos_lo: DevPtr,
    pub pos_frac: DevPtr,
    pub ring_global: DevPtr,
    pub lut: DevPtr,
    pub pool_stride: i64,
    pub out_cell_stride: i64,
    pub n_cells: i32,
    pub out_cell0: i32,
    pub n_batch: i32,
    pub out_target0: i32,
    pub out_targets: i32,
    pub n_pct: i32,
    pub max_n: i32,
    pub min_samples: i32,
    pub rows: i32,
    pub ring: i32,
    pub use_hints: i32,
    pub pad: i32,
}
