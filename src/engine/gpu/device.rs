//! The calls a GPU backend provides, written once as the narrow [`Device`] trait so that the
//! driver (memory planning, launches, copies) is written once for both vendors: memory,
//! copies on one in-order stream, loading and launching the kernel, timing, and a second copy
//! queue for reader threads ([`Uploader`]). A failed call is a [`GpuError`] naming the call
//! and the device.

use std::time::Duration;

use super::launch::DeviceInfo;
pub use super::params::DevPtr;
use super::params::KernelParams;
use super::spec::KernelSpec;
pub use crate::engine::error::{GpuError, OpenError};

/// The calls a GPU backend provides: memory, copies, kernels, timing. Addresses are raw; the
/// driver keeps them valid. Work is issued in order on one stream.
pub trait Device: Send {
    const API: &'static str;
    fn info(&self) -> &DeviceInfo;
    /// Make the device current on the calling thread.
    fn bind(&mut self) -> Result<(), GpuError>;
    fn free_memory(&mut self) -> Result<u64, GpuError>;
    fn alloc(&mut self, bytes: usize) -> Result<DevPtr, GpuError>;
    /// # Safety
    /// `ptr` came from `alloc` and is no longer used by queued work.
    unsafe fn free(&mut self, ptr: DevPtr);
    /// Page-lock host memory for DMA.
    /// # Safety
    /// `host..host+bytes` stays mapped until `unregister`.
    unsafe fn register(&mut self, host: *const u8, bytes: usize) -> Result<(), GpuError>;
    /// # Safety
    /// `host` was registered and no queued copy uses it.
    unsafe fn unregister(&mut self, host: *const u8) -> Result<(), GpuError>;
    /// `bytes` of page-locked host memory from the driver (contents unspecified), or `None`
    /// where the backend does not offer it (callers then `register` memory of their own).
    fn alloc_host(&mut self, bytes: usize) -> Result<Option<*mut u8>, GpuError> {
        let _ = bytes;
        Ok(None)
    }
    /// # Safety
    /// `host` came from `alloc_host` and no queued copy uses it.
    unsafe fn free_host(&mut self, host: *mut u8) -> Result<(), GpuError> {
        let _ = host;
        Ok(())
    }
    /// Copy `height` rows of `width` bytes from host to device.
    /// # Safety
    /// Both ranges are valid for the copy and stay so until the stream is synchronized.
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_h2d(
        &mut self,
        dst: DevPtr,
        dpitch: usize,
        src: *const u8,
        spitch: usize,
        width: usize,
        height: usize,
    ) -> Result<(), GpuError>;
    /// Copy `height` rows of `width` bytes from device to host.
    /// # Safety
    /// As for `copy_h2d`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_d2h(
        &mut self,
        dst: *mut u8,
        dpitch: usize,
        src: DevPtr,
        spitch: usize,
        width: usize,
        height: usize,
    ) -> Result<(), GpuError>;
    /// # Safety
    /// Both ranges are device allocations of at least `bytes`.
    unsafe fn copy_d2d(&mut self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<(), GpuError>;
    /// Load `kernel` (once: compiled with its launch constants where the backend compiles at
    /// run time, else the generic instantiation of that name) and allow it `smem` bytes of
    /// dynamic shared memory.
    fn prepare(&mut self, kernel: &KernelSpec, smem: usize) -> Result<(), GpuError>;
    /// # Safety
    /// Every address in `params` is valid for what the kernel reads and writes, and `params`
    /// hold the launch constants `kernel` was prepared with.
    unsafe fn launch(
        &mut self,
        kernel: &KernelSpec,
        grid: u32,
        block: u32,
        smem: usize,
        params: &KernelParams,
    ) -> Result<(), GpuError>;
    /// Load entry point `name` of a kernel source other than the climatology's (`file`, whose
    /// text `source` gives where the backend compiles at run time; a backend that compiles
    /// ahead of time loads its code object of `file`). Used by kernels whose one argument is
    /// a block of their own (the event detection's, `kernels/events.hip`).
    fn prepare_entry(&mut self, file: &str, source: &dyn Fn() -> String, name: &str) -> Result<(), GpuError> {
        let _ = source;
        Err(GpuError {
            api: Self::API,
            call: "prepare_entry",
            device: self.info().description.clone(),
            detail: format!("this build has no code object of {file} (kernel {name})"),
        })
    }
    /// Launch entry point `name` (prepared by `prepare_entry`) on `grid` blocks of `block`
    /// threads, its one parameter read from `args`.
    /// # Safety
    /// `args` points at a value laid out as the kernel's parameter, valid through the call, and
    /// every address in it is valid for what the kernel reads and writes.
    unsafe fn launch_entry(
        &mut self,
        name: &str,
        grid: u32,
        block: u32,
        args: *mut std::ffi::c_void,
    ) -> Result<(), GpuError> {
        let _ = (grid, block, args);
        Err(GpuError {
            api: Self::API,
            call: "launch_entry",
            device: self.info().description.clone(),
            detail: format!("kernel {name} was not prepared"),
        })
    }
    /// Record the start of a timed region on the stream.
    fn timer_start(&mut self) -> Result<(), GpuError>;
    /// Record its end, wait for it and return the device time since `timer_start`.
    fn timer_stop(&mut self) -> Result<Duration, GpuError>;
    fn synchronize(&mut self) -> Result<(), GpuError>;
    /// A second queue for host-to-device copies issued from other threads while this one
    /// computes (`None` where the backend has none: the pool then stays on the host).
    fn uploader(&mut self) -> Result<Option<Box<dyn Uploader>>, GpuError> {
        Ok(None)
    }
}

/// Host-to-device copies on their own queue, usable from any thread: reader threads send each
/// decoded pool row straight into a device-resident pool through it.
pub trait Uploader: Send {
    /// Copy `bytes` from `src` to `dst` and wait until the copy is done.
    ///
    /// # Safety
    /// `src` is readable for `bytes` and `dst` is a device allocation holding at least `bytes`.
    unsafe fn upload(&mut self, dst: DevPtr, src: *const u8, bytes: usize) -> Result<(), GpuError>;
}
