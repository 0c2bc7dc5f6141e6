//! The CUDA backend: [`Device`] over the CUDA driver API through cudarc, with the driver and
//! NVRTC loaded at run time (so the binary starts, and `--backend auto` falls back to the CPU,
//! where CUDA is absent). The kernel source is compiled by NVRTC straight to machine code for
//! the device's own architecture, one instantiation at a time, once per process, with
//! floating-point contraction off ([`nvrtc`]).

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::time::Duration;

use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{result, DriverError};

mod nvrtc;

use super::{
    kernel_source_inlined, DevPtr, Device, DeviceInfo, GpuEngine, GpuError, GpuOptions, KernelParams, KernelSpec,
    OpenError, Uploader,
};

/// A CUDA engine on device `ordinal`, or why there is none.
pub fn engine(ordinal: usize, opts: &GpuOptions) -> Result<GpuEngine<CudaDevice>, OpenError> {
    Ok(GpuEngine::new("cuda", CudaDevice::open(ordinal, opts.device_wraps)?, opts.clone()))
}

/// Whether the CUDA driver library can be loaded (checked before any call: cudarc panics
/// when a dynamically loaded library is missing).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

/// How host threads wait for device work (`SSTCLIM_CUDA_SCHED=spin|yield|blocking`, a
/// measuring knob; unset: the driver's default, which spins while there are idle cores). The
/// reader threads of a device-resident pool share the cores with the upload thread, which
/// waits for every row it copies.
fn sched_flags() -> Option<u32> {
    let flag = match crate::util::knobs::cuda_sched()?.as_str() {
        "spin" => sys::CUctx_flags::CU_CTX_SCHED_SPIN,
        "yield" => sys::CUctx_flags::CU_CTX_SCHED_YIELD,
        "blocking" => sys::CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC,
        other => {
            tracing::warn!("SSTCLIM_CUDA_SCHED={other} is not spin, yield or blocking: ignored");
            return None;
        }
    };
    Some(flag as u32)
}

fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// One CUDA device: its primary context, one stream, two timing events and the loaded module.
pub struct CudaDevice {
    info: DeviceInfo,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    start: sys::CUevent,
    stop: sys::CUevent,
    arch: (i32, i32),
    /// Per kernel: its module, function and the dynamic shared memory it may use.
    functions: HashMap<String, (sys::CUmodule, sys::CUfunction, usize)>,
}

// SAFETY: the handles are plain driver handles; the engine serializes all use behind a mutex
// and binds the context to whichever thread calls.
unsafe impl Send for CudaDevice {}

fn describe(e: DriverError) -> String {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    match e.error_string() {
        Ok(s) => format!("{name} ({})", s.to_string_lossy()),
        Err(_) => name,
    }
}

impl CudaDevice {
    fn err(&self, call: &'static str, e: DriverError) -> GpuError {
        GpuError { api: "CUDA", call, device: self.info.description.clone(), detail: describe(e) }
    }

    /// Open device `ordinal`, or say why not.
    pub fn open(ordinal: usize, wrap: bool) -> Result<CudaDevice, OpenError> {
        if !driver_present() {
            return Err(OpenError::NoDriver);
        }
        let at =
            |call: &'static str, e: DriverError| OpenError::Call { api: "CUDA", call, ordinal, detail: describe(e) };
        let started = std::time::Instant::now();
        result::init().map_err(|e| at("cuInit", e))?;
        let inited = started.elapsed();
        let count = result::device::get_count().map_err(|e| at("cuDeviceGetCount", e))?;
        let count = count.max(0) as usize;
        if count == 0 {
            return Err(OpenError::NoDevice { api: "CUDA" });
        }
        let ordinal = if wrap { ordinal % count } else { ordinal };
        if ordinal >= count {
            return Err(OpenError::NotVisible { api: "CUDA", ordinal, count });
        }
        let dev = result::device::get(ordinal as i32).map_err(|e| at("cuDeviceGet", e))?;
        if let Some(flags) = sched_flags() {
            // SAFETY: valid device; only sets how host threads wait for the context's work.
            let set = unsafe { sys::cuDevicePrimaryCtxSetFlags_v2(dev, flags) }.result();
            if let Err(e) = set {
                tracing::warn!("{}", at("cuDevicePrimaryCtxSetFlags", e));
            }
        }
        // SAFETY: `dev` is a valid device handle; the context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(|e| at("cuDevicePrimaryCtxRetain", e))?;
        let retained = started.elapsed();
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| at("cuCtxSetCurrent", e))?;
        let attr = |a: Attr| -> Result<i32, OpenError> {
            // SAFETY: valid device and attribute.
            unsafe { result::device::get_attribute(dev, a) }.map_err(|e| at("cuDeviceGetAttribute", e))
        };
        let name = result::device::get_name(dev).unwrap_or_else(|_| "unknown".into());
        // SAFETY: valid device.
        let total = unsafe { result::device::total_mem(dev) }.map_err(|e| at("cuDeviceTotalMem", e))?;
        let name = format!("{name}, {:.0} GB", total as f64 / 1e9);
        let info = DeviceInfo {
            description: format!("CUDA device {ordinal} ({name})"),
            wave: attr(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as usize,
            smem_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as usize,
            smem_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)? as usize,
            max_threads_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)? as usize,
        };
        let arch = (
            attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let stream =
            result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|e| at("cuStreamCreate", e))?;
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(|e| at("cuEventCreate", e));
        let (start, stop) = (event()?, event()?);
        let opened = started.elapsed();
        let nvrtc = nvrtc_present();
        tracing::debug!(
            "CUDA device {ordinal}: cuInit {:.3} s, primary context {:.3} s, queries and stream {:.3} s, NVRTC found \
             {:.3} s",
            inited.as_secs_f64(),
            (retained - inited).as_secs_f64(),
            (opened - retained).as_secs_f64(),
            (started.elapsed() - opened).as_secs_f64()
        );
        if !nvrtc {
            return Err(OpenError::NoNvrtc { device: info.description });
        }
        Ok(CudaDevice { info, dev, ctx, stream, start, stop, arch, functions: HashMap::new() })
    }

    /// Load kernel `name` (once) from the kernel source `file`, whose text `source` gives (asked
    /// only when this process has not compiled the kernel yet), and allow it `smem` bytes of
    /// dynamic shared memory. The source defines its entry points `extern "C"` and builds only
    /// the one asked for under `-DSC_SELECT -DSC_WANT_<name>`.
    pub fn prepare_source(
        &mut self,
        file: &str,
        source: &dyn Fn() -> String,
        name: &str,
        smem: usize,
    ) -> Result<(), GpuError> {
        self.prepare_compiled(file, source, name, name, &[], smem)
    }

    /// `prepare_source` for kernel `name` compiled with preprocessor `defines`, known to
    /// `launch_args` as `key`.
    fn prepare_compiled(
        &mut self,
        file: &str,
        source: &dyn Fn() -> String,
        name: &str,
        key: &str,
        defines: &[String],
        smem: usize,
    ) -> Result<(), GpuError> {
        let (module, func) = match self.functions.get(key) {
            Some(&(_, _, set)) if set >= smem => return Ok(()),
            Some(&(m, f, _)) => (m, f),
            None => {
                let image = self.cubin(file, source, name, defines)?;
                // SAFETY: `image` is a complete CUBIN that lives through the call.
                let module = unsafe { result::module::load_data(image.as_ptr() as *const c_void) }
                    .map_err(|e| self.err("cuModuleLoadData", e))?;
                // SAFETY: the module is loaded and holds kernel `name`.
                let func = unsafe {
                    result::module::get_function(module, CString::new(name).expect("kernel names have no NUL"))
                }
                .map_err(|e| self.err("cuModuleGetFunction", e))?;
                (module, func)
            }
        };
        // SAFETY: valid function; the value is within the device's opt-in limit (checked by
        // the launch plan).
        unsafe {
            result::function::set_function_attribute(
                func,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem as i32,
            )
        }
        .map_err(|e| self.err("cuFuncSetAttribute", e))?;
        self.functions.insert(key.to_string(), (module, func, smem));
        Ok(())
    }

    /// Split each multiprocessor's on-chip memory for `func` launched with `block` threads and
    /// `smem` bytes of shared memory a block: as little shared memory as the blocks resident
    /// at once need (the driver reserves 1 KB a block), the rest as L1 cache. With the ring in
    /// device memory, the searches' loads then hit L1 more often: 25.8 ms against 27.0 ms with
    /// the driver's default split for the reference job on an H200. `SSTCLIM_CUDA_CARVEOUT`
    /// (percent shared; a measuring knob) overrides it.
    fn prefer_l1(&self, func: sys::CUfunction, block: u32, smem: usize) -> Result<(), GpuError> {
        let carveout = match crate::util::knobs::cuda_carveout() {
            Some(c) => c,
            None => {
                // SAFETY: valid function; plain query.
                let blocks =
                    unsafe { result::occupancy::max_active_block_per_multiprocessor(func, block as i32, smem) }
                        .map_err(|e| self.err("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?;
                let need = blocks.max(1) as usize * (smem + 1024);
                (need * 100).div_ceil(self.info.smem_per_sm.max(1)).min(100) as i32
            }
        };
        // SAFETY: valid function; the driver takes the preference as a hint and still gives a
        // launch the shared memory it needs.
        unsafe {
            result::function::set_function_attribute(
                func,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                carveout,
            )
        }
        .map_err(|e| self.err("cuFuncSetAttribute (carveout)", e))
    }

    /// Launch prepared kernel `name` on a 3-D grid, with one pointer per kernel parameter (each
    /// at a value of that parameter's type).
    ///
    /// # Safety
    /// `args` match the kernel's parameters, and every address they hold is valid for what the
    /// kernel reads and writes.
    pub unsafe fn launch_args(
        &mut self,
        name: &str,
        grid: [u32; 3],
        block: [u32; 3],
        smem: usize,
        args: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        let Some(&(_, func, _)) = self.functions.get(name) else {
            return Err(GpuError {
                api: "CUDA",
                call: "cuLaunchKernel",
                device: self.info.description.clone(),
                detail: format!("kernel {name} was not prepared"),
            });
        };
        self.prefer_l1(func, block[0] * block[1] * block[2], smem)?;
        let (grid, block) = ((grid[0], grid[1], grid[2]), (block[0], block[1], block[2]));
        // SAFETY: `func` was loaded in this context; `args` match its parameters and hold valid
        // addresses (the caller's promise).
        unsafe { result::launch_kernel(func, grid, block, smem as u32, self.stream, args) }
            .map_err(|e| self.err("cuLaunchKernel", e))?;
        // launch errors (bad configuration) are reported here; faults at the next sync
        // SAFETY: the stream belongs to this context for the life of self.
        unsafe { sys::cuStreamQuery(self.stream) }.result().or_else(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_NOT_READY {
                Ok(())
            } else {
                Err(self.err("cuLaunchKernel", e))
            }
        })
    }
}

impl Device for CudaDevice {
    const API: &'static str = "CUDA";

    fn prepare_entry(&mut self, file: &str, source: &dyn Fn() -> String, name: &str) -> Result<(), GpuError> {
        self.prepare_source(file, source, name, 0)
    }

    unsafe fn launch_entry(&mut self, name: &str, grid: u32, block: u32, args: *mut c_void) -> Result<(), GpuError> {
        // SAFETY: the kernel takes one parameter, at `args` (the caller's promise).
        unsafe { self.launch_args(name, [grid, 1, 1], [block, 1, 1], 0, &mut [args]) }
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn bind(&mut self) -> Result<(), GpuError> {
        // SAFETY: the context is retained for the life of self.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(|e| self.err("cuCtxSetCurrent", e))
    }

    fn free_memory(&mut self) -> Result<u64, GpuError> {
        result::mem_get_info().map(|(free, _)| free as u64).map_err(|e| self.err("cuMemGetInfo", e))
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevPtr, GpuError> {
        // SAFETY: plain allocation in the current context.
        unsafe { result::malloc_sync(bytes) }.map_err(|e| self.err("cuMemAlloc", e))
    }

    unsafe fn free(&mut self, ptr: DevPtr) {
        // SAFETY: `ptr` came from `alloc` and no queued work uses it (the caller's promise).
        if let Err(e) = unsafe { result::free_sync(ptr) } {
            tracing::warn!("{}", self.err("cuMemFree", e));
        }
    }

    unsafe fn register(&mut self, host: *const u8, bytes: usize) -> Result<(), GpuError> {
        // SAFETY: `host..host+bytes` stays mapped until `unregister` (the caller's promise).
        unsafe { sys::cuMemHostRegister_v2(host as *mut c_void, bytes, 0) }
            .result()
            .map_err(|e| self.err("cuMemHostRegister", e))
    }

    unsafe fn unregister(&mut self, host: *const u8) -> Result<(), GpuError> {
        // SAFETY: `host` was registered and no queued copy uses it (the caller's promise).
        unsafe { sys::cuMemHostUnregister(host as *mut c_void) }
            .result()
            .map_err(|e| self.err("cuMemHostUnregister", e))
    }

    fn alloc_host(&mut self, bytes: usize) -> Result<Option<*mut u8>, GpuError> {
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the engine makes the context current before calling.
        unsafe { sys::cuMemHostAlloc(&mut host, bytes, 0) }.result().map_err(|e| self.err("cuMemHostAlloc", e))?;
        Ok(Some(host.cast()))
    }

    unsafe fn free_host(&mut self, host: *mut u8) -> Result<(), GpuError> {
        // SAFETY: allocated by cuMemHostAlloc (the caller's promise) and no longer in use.
        unsafe { sys::cuMemFreeHost(host.cast()) }.result().map_err(|e| self.err("cuMemFreeHost", e))
    }

    unsafe fn copy_h2d(
        &mut self,
        dst: DevPtr,
        dpitch: usize,
        src: *const u8,
        spitch: usize,
        width: usize,
        height: usize,
    ) -> Result<(), GpuError> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        if (width == spitch && width == dpitch) || height == 1 {
            // SAFETY: both ranges are valid for the copy until the stream is synchronized (the
            // caller's promise); the stream belongs to this context.
            return unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, width * height, self.stream) }
                .result()
                .map_err(|e| self.err("cuMemcpyHtoDAsync", e));
        }
        let copy = memcpy2d(
            (sys::CUmemorytype::CU_MEMORYTYPE_HOST, src as *const c_void, 0, spitch),
            (sys::CUmemorytype::CU_MEMORYTYPE_DEVICE, std::ptr::null_mut(), dst, dpitch),
            width,
            height,
        );
        // SAFETY: as above; `copy` describes the same ranges row by row.
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, self.stream) }
            .result()
            .map_err(|e| self.err("cuMemcpy2DAsync (to device)", e))
    }

    unsafe fn copy_d2h(
        &mut self,
        dst: *mut u8,
        dpitch: usize,
        src: DevPtr,
        spitch: usize,
        width: usize,
        height: usize,
    ) -> Result<(), GpuError> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        if (width == spitch && width == dpitch) || height == 1 {
            // SAFETY: both ranges are valid for the copy until the stream is synchronized (the
            // caller's promise); the stream belongs to this context.
            return unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, width * height, self.stream) }
                .result()
                .map_err(|e| self.err("cuMemcpyDtoHAsync", e));
        }
        let copy = memcpy2d(
            (sys::CUmemorytype::CU_MEMORYTYPE_DEVICE, std::ptr::null(), src, spitch),
            (sys::CUmemorytype::CU_MEMORYTYPE_HOST, dst as *mut c_void, 0, dpitch),
            width,
            height,
        );
        // SAFETY: as above; `copy` describes the same ranges row by row.
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, self.stream) }
            .result()
            .map_err(|e| self.err("cuMemcpy2DAsync (to host)", e))
    }

    unsafe fn copy_d2d(&mut self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<(), GpuError> {
        // SAFETY: both device ranges hold `bytes` (the caller's promise); the stream belongs to
        // this context.
        unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, self.stream) }
            .result()
            .map_err(|e| self.err("cuMemcpyDtoDAsync", e))
    }

    fn prepare(&mut self, kernel: &KernelSpec, smem: usize) -> Result<(), GpuError> {
        let defines = kernel.defines();
        self.prepare_compiled("climatology.hip", &kernel_source_inlined, &kernel.name, &kernel.key(), &defines, smem)
    }

    unsafe fn launch(
        &mut self,
        kernel: &KernelSpec,
        grid: u32,
        block: u32,
        smem: usize,
        params: &KernelParams,
    ) -> Result<(), GpuError> {
        let mut args = [params as *const KernelParams as *mut c_void];
        // SAFETY: `params` is the kernel's one parameter and holds valid addresses (the caller's
        // promise); it outlives the call, which copies it.
        unsafe { self.launch_args(&kernel.key(), [grid, 1, 1], [block, 1, 1], smem, &mut args) }
    }

    fn timer_start(&mut self) -> Result<(), GpuError> {
        // SAFETY: event and stream belong to this context.
        unsafe { result::event::record(self.start, self.stream) }.map_err(|e| self.err("cuEventRecord", e))
    }

    fn timer_stop(&mut self) -> Result<Duration, GpuError> {
        // SAFETY: as above.
        unsafe {
            result::event::record(self.stop, self.stream).map_err(|e| self.err("cuEventRecord", e))?;
            result::event::synchronize(self.stop).map_err(|e| self.err("cuEventSynchronize (stream work)", e))?;
            let ms = result::event::elapsed(self.start, self.stop).map_err(|e| self.err("cuEventElapsedTime", e))?;
            Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
        }
    }

    fn synchronize(&mut self) -> Result<(), GpuError> {
        // SAFETY: the stream belongs to this context.
        unsafe { result::stream::synchronize(self.stream) }.map_err(|e| self.err("cuStreamSynchronize", e))
    }

    fn uploader(&mut self) -> Result<Option<Box<dyn Uploader>>, GpuError> {
        self.bind()?;
        // SAFETY: `dev` is valid; the uploader releases its own reference to the context.
        let ctx =
            unsafe { result::primary_ctx::retain(self.dev) }.map_err(|e| self.err("cuDevicePrimaryCtxRetain", e))?;
        let stream = match result::stream::create(result::stream::StreamKind::NonBlocking) {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: retained just above.
                let _ = unsafe { result::primary_ctx::release(self.dev) };
                return Err(self.err("cuStreamCreate (copies)", e));
            }
        };
        Ok(Some(Box::new(CudaUploader { dev: self.dev, ctx, stream, device: self.info.description.clone() })))
    }
}

/// A second stream of the device's primary context, for copies from reader threads.
struct CudaUploader {
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    device: String,
}

// SAFETY: plain driver handles; the engine serializes uploads behind a mutex, and each call
// makes the context current on the calling thread.
unsafe impl Send for CudaUploader {}

impl CudaUploader {
    fn err(&self, call: &'static str, e: DriverError) -> GpuError {
        GpuError { api: "CUDA", call, device: self.device.clone(), detail: describe(e) }
    }
}

impl Uploader for CudaUploader {
    unsafe fn upload(&mut self, dst: DevPtr, src: *const u8, bytes: usize) -> Result<(), GpuError> {
        // SAFETY: the context is retained by self; the caller vouches for both ranges.
        unsafe {
            result::ctx::set_current(self.ctx).map_err(|e| self.err("cuCtxSetCurrent", e))?;
            sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, bytes, self.stream)
                .result()
                .map_err(|e| self.err("cuMemcpyHtoDAsync (pool row)", e))?;
            result::stream::synchronize(self.stream).map_err(|e| self.err("cuStreamSynchronize (pool row)", e))
        }
    }
}

impl Drop for CudaUploader {
    fn drop(&mut self) {
        // SAFETY: handles created in `uploader`, not used after.
        unsafe {
            let _ = result::ctx::set_current(self.ctx);
            let _ = result::stream::synchronize(self.stream);
            let _ = result::stream::destroy(self.stream);
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}

/// A 2-D copy descriptor: (memory type, host pointer, device pointer, pitch) for the source and
/// the destination (every field set: the struct holds enums, so it cannot be zeroed).
fn memcpy2d(
    src: (sys::CUmemorytype, *const c_void, DevPtr, usize),
    dst: (sys::CUmemorytype, *mut c_void, DevPtr, usize),
    width: usize,
    height: usize,
) -> sys::CUDA_MEMCPY2D {
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src.0,
        srcHost: src.1,
        srcDevice: src.2,
        srcArray: std::ptr::null_mut(),
        srcPitch: src.3,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst.0,
        dstHost: dst.1,
        dstDevice: dst.2,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst.3,
        WidthInBytes: width,
        Height: height,
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // SAFETY: all handles were created by `open` in this context and are not used after.
        unsafe {
            let _ = result::ctx::set_current(self.ctx);
            let _ = result::stream::synchronize(self.stream);
            for (_, (module, _, _)) in self.functions.drain() {
                let _ = result::module::unload(module);
            }
            let _ = result::event::destroy(self.start);
            let _ = result::event::destroy(self.stop);
            let _ = result::stream::destroy(self.stream);
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}
