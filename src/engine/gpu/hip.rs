//! The HIP backend (cargo feature `hip`, links libamdhip64): [`Device`] over the HIP runtime
//! for AMD GPUs. The kernel source is compiled at build time by `hipcc --genco` for the
//! architectures in `SSTCLIM_HIP_ARCHS` (default gfx906 and gfx90a; see build.rs) and the code
//! object is embedded in the binary; so is the event kernel's (kernels/events.hip), loaded by
//! `prepare_entry`.

use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::time::Duration;

use hip_sys::hiprt as hip;

use super::{
    DevPtr, Device, DeviceInfo, GpuEngine, GpuError, GpuOptions, KernelParams, KernelSpec, OpenError, Uploader,
};

/// The code object built from kernels/climatology.hip by build.rs.
static CODE_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/climatology.hsaco"));

/// The code object built from kernels/events.hip by build.rs.
static EVENTS_CODE_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/events.hsaco"));

/// A HIP engine on device `ordinal`, or why there is none.
pub fn engine(ordinal: usize, opts: &GpuOptions) -> Result<GpuEngine<HipDevice>, OpenError> {
    Ok(GpuEngine::new("hip", HipDevice::open(ordinal, opts.device_wraps)?, opts.clone()))
}

/// One HIP device: a stream, two timing events and the loaded code object.
pub struct HipDevice {
    info: DeviceInfo,
    ordinal: i32,
    stream: hip::hipStream_t,
    start: hip::hipEvent_t,
    stop: hip::hipEvent_t,
    module: Option<hip::hipModule_t>,
    /// The event kernel's code object, once loaded.
    events_module: Option<hip::hipModule_t>,
    functions: HashMap<String, hip::hipFunction_t>,
}

// SAFETY: plain runtime handles; the engine serializes all use behind a mutex and sets the
// device on whichever thread calls.
unsafe impl Send for HipDevice {}

fn text(e: hip::hipError_t) -> String {
    // SAFETY: hipGetErrorString returns a static NUL-terminated string for any code.
    let s = unsafe { CStr::from_ptr(hip::hipGetErrorString(e)) };
    format!("{e:?} ({})", s.to_string_lossy())
}

fn check(e: hip::hipError_t) -> Result<(), hip::hipError_t> {
    if e == hip::hipError_t::hipSuccess {
        Ok(())
    } else {
        Err(e)
    }
}

impl HipDevice {
    fn err(&self, call: &'static str, e: hip::hipError_t) -> GpuError {
        GpuError { api: "HIP", call, device: self.info.description.clone(), detail: text(e) }
    }

    /// Open device `ordinal`, or say why not.
    pub fn open(ordinal: usize, wrap: bool) -> Result<HipDevice, OpenError> {
        let at =
            |call: &'static str, e: hip::hipError_t| OpenError::Call { api: "HIP", call, ordinal, detail: text(e) };
        // SAFETY: plain runtime queries with valid out-pointers.
        unsafe {
            check(hip::hipInit(0)).map_err(|e| at("hipInit", e))?;
            let mut count = 0;
            check(hip::hipGetDeviceCount(&mut count)).map_err(|e| at("hipGetDeviceCount", e))?;
            if count <= 0 {
                return Err(OpenError::NoDevice { api: "HIP" });
            }
            let ordinal = if wrap { ordinal % count as usize } else { ordinal };
            let dev = ordinal as i32;
            if dev >= count {
                return Err(OpenError::NotVisible { api: "HIP", ordinal, count: count as usize });
            }
            check(hip::hipSetDevice(dev)).map_err(|e| at("hipSetDevice", e))?;
            let attr = |a: hip::hipDeviceAttribute_t| -> Result<usize, OpenError> {
                let mut v = 0;
                check(hip::hipDeviceGetAttribute(&mut v, a, dev)).map_err(|e| at("hipDeviceGetAttribute", e))?;
                Ok(v.max(0) as usize)
            };
            let mut name = [0 as libc::c_char; 256];
            let _ = hip::hipDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev);
            let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
            let mut total = 0usize;
            check(hip::hipDeviceTotalMem(&mut total, dev)).map_err(|e| at("hipDeviceTotalMem", e))?;
            use hip::hipDeviceAttribute_t as A;
            let info = DeviceInfo {
                description: format!("HIP device {ordinal} ({name}, {:.0} GB)", total as f64 / 1e9),
                wave: attr(A::hipDeviceAttributeWarpSize)?,
                smem_per_block: attr(A::hipDeviceAttributeMaxSharedMemoryPerBlock)?,
                smem_per_sm: attr(A::hipDeviceAttributeMaxSharedMemoryPerMultiprocessor)?,
                max_threads_per_sm: attr(A::hipDeviceAttributeMaxThreadsPerMultiProcessor)?,
            };
            let mut stream = std::ptr::null_mut();
            check(hip::hipStreamCreateWithFlags(&mut stream, hip::hipStreamNonBlocking))
                .map_err(|e| at("hipStreamCreateWithFlags", e))?;
            let (mut start, mut stop) = (std::ptr::null_mut(), std::ptr::null_mut());
            check(hip::hipEventCreate(&mut start)).map_err(|e| at("hipEventCreate", e))?;
            check(hip::hipEventCreate(&mut stop)).map_err(|e| at("hipEventCreate", e))?;
            Ok(HipDevice {
                info,
                ordinal: dev,
                stream,
                start,
                stop,
                module: None,
                events_module: None,
                functions: HashMap::new(),
            })
        }
    }

    // the arguments of hipMemcpy2D, one for one
    #[allow(clippy::too_many_arguments)]
    fn copy_2d(
        &mut self,
        dst: *mut c_void,
        dpitch: usize,
        src: *const c_void,
        spitch: usize,
        width: usize,
        height: usize,
        kind: hip::hipMemcpyKind,
    ) -> Result<(), GpuError> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        // SAFETY: the caller guarantees both ranges (see the trait methods).
        unsafe {
            if (width == spitch && width == dpitch) || height == 1 {
                check(hip::hipMemcpyAsync(dst, src, width * height, kind, self.stream))
                    .map_err(|e| self.err("hipMemcpyAsync", e))
            } else {
                check(hip::hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, self.stream))
                    .map_err(|e| self.err("hipMemcpy2DAsync", e))
            }
        }
    }
}

impl Device for HipDevice {
    const API: &'static str = "HIP";

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn bind(&mut self) -> Result<(), GpuError> {
        // SAFETY: the ordinal was validated in open.
        check(unsafe { hip::hipSetDevice(self.ordinal) }).map_err(|e| self.err("hipSetDevice", e))
    }

    fn free_memory(&mut self) -> Result<u64, GpuError> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers.
        check(unsafe { hip::hipMemGetInfo(&mut free, &mut total) }).map_err(|e| self.err("hipMemGetInfo", e))?;
        Ok(free as u64)
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevPtr, GpuError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { hip::hipMalloc(&mut ptr, bytes) }).map_err(|e| self.err("hipMalloc", e))?;
        Ok(ptr as DevPtr)
    }

    unsafe fn free(&mut self, ptr: DevPtr) {
        // SAFETY: `ptr` came from `alloc` and no queued work uses it (the caller's promise).
        if let Err(e) = check(unsafe { hip::hipFree(ptr as *mut c_void) }) {
            tracing::warn!("{}", self.err("hipFree", e));
        }
    }

    unsafe fn register(&mut self, host: *const u8, bytes: usize) -> Result<(), GpuError> {
        // SAFETY: `host..host+bytes` stays mapped until `unregister` (the caller's promise).
        check(unsafe { hip::hipHostRegister(host as *mut c_void, bytes, 0) })
            .map_err(|e| self.err("hipHostRegister", e))
    }

    unsafe fn unregister(&mut self, host: *const u8) -> Result<(), GpuError> {
        // SAFETY: `host` was registered and no queued copy uses it (the caller's promise).
        check(unsafe { hip::hipHostUnregister(host as *mut c_void) }).map_err(|e| self.err("hipHostUnregister", e))
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
        let kind = hip::hipMemcpyKind::hipMemcpyHostToDevice;
        self.copy_2d(dst as *mut c_void, dpitch, src.cast(), spitch, width, height, kind)
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
        let kind = hip::hipMemcpyKind::hipMemcpyDeviceToHost;
        self.copy_2d(dst.cast(), dpitch, src as *const c_void, spitch, width, height, kind)
    }

    unsafe fn copy_d2d(&mut self, dst: DevPtr, src: DevPtr, bytes: usize) -> Result<(), GpuError> {
        let kind = hip::hipMemcpyKind::hipMemcpyDeviceToDevice;
        self.copy_2d(dst as *mut c_void, bytes, src as *const c_void, bytes, bytes, 1, kind)
    }

    // The code object holds the generic kernels (compiled ahead of time): launch constants
    // are read from the arguments.
    fn prepare(&mut self, kernel: &KernelSpec, _smem: usize) -> Result<(), GpuError> {
        self.load_function(false, kernel.name.as_str())
    }

    unsafe fn launch(
        &mut self,
        kernel: &KernelSpec,
        grid: u32,
        block: u32,
        smem: usize,
        params: &KernelParams,
    ) -> Result<(), GpuError> {
        let name = kernel.name.as_str();
        let Some(&f) = self.functions.get(name) else {
            return Err(GpuError {
                api: "HIP",
                call: "hipModuleLaunchKernel",
                device: self.info.description.clone(),
                detail: format!("kernel {name} was not prepared"),
            });
        };
        let mut args = [params as *const KernelParams as *mut c_void];
        // SAFETY: `f` was loaded on this device; `params` is the kernel's one parameter and holds
        // valid addresses (the caller's promise); the launch copies it.
        check(unsafe {
            hip::hipModuleLaunchKernel(
                f,
                grid,
                1,
                1,
                block,
                1,
                1,
                smem as u32,
                self.stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
        .map_err(|e| self.err("hipModuleLaunchKernel", e))?;
        // SAFETY: the stream belongs to this device for the life of self.
        match unsafe { hip::hipStreamQuery(self.stream) } {
            hip::hipError_t::hipSuccess | hip::hipError_t::hipErrorNotReady => Ok(()),
            e => Err(self.err("hipModuleLaunchKernel", e)),
        }
    }

    // The event kernel's code object, compiled ahead of time like the climatology's.
    fn prepare_entry(&mut self, file: &str, _source: &dyn Fn() -> String, name: &str) -> Result<(), GpuError> {
        if file != "events.hip" {
            return Err(GpuError {
                api: "HIP",
                call: "prepare_entry",
                device: self.info.description.clone(),
                detail: format!("this build has no code object of {file}"),
            });
        }
        self.load_function(true, name)
    }

    unsafe fn launch_entry(&mut self, name: &str, grid: u32, block: u32, args: *mut c_void) -> Result<(), GpuError> {
        let Some(&f) = self.functions.get(name) else {
            return Err(GpuError {
                api: "HIP",
                call: "hipModuleLaunchKernel",
                device: self.info.description.clone(),
                detail: format!("kernel {name} was not prepared"),
            });
        };
        let mut args = [args];
        // SAFETY: `f` was loaded on this device; `args` points at its one parameter, valid
        // through the call with valid addresses (the caller's promise); the launch copies it.
        check(unsafe {
            hip::hipModuleLaunchKernel(
                f,
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                self.stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
        .map_err(|e| self.err("hipModuleLaunchKernel", e))?;
        // SAFETY: the stream belongs to this device for the life of self.
        match unsafe { hip::hipStreamQuery(self.stream) } {
            hip::hipError_t::hipSuccess | hip::hipError_t::hipErrorNotReady => Ok(()),
            e => Err(self.err("hipModuleLaunchKernel", e)),
        }
    }

    fn timer_start(&mut self) -> Result<(), GpuError> {
        // SAFETY: event and stream belong to this device.
        check(unsafe { hip::hipEventRecord(self.start, self.stream) }).map_err(|e| self.err("hipEventRecord", e))
    }

    fn timer_stop(&mut self) -> Result<Duration, GpuError> {
        let mut ms = 0f32;
        // SAFETY: as above.
        unsafe {
            check(hip::hipEventRecord(self.stop, self.stream)).map_err(|e| self.err("hipEventRecord", e))?;
            check(hip::hipEventSynchronize(self.stop)).map_err(|e| self.err("hipEventSynchronize (stream work)", e))?;
            check(hip::hipEventElapsedTime(&mut ms, self.start, self.stop))
                .map_err(|e| self.err("hipEventElapsedTime", e))?;
        }
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }

    fn synchronize(&mut self) -> Result<(), GpuError> {
        // SAFETY: the stream belongs to this device.
        check(unsafe { hip::hipStreamSynchronize(self.stream) }).map_err(|e| self.err("hipStreamSynchronize", e))
    }

    fn uploader(&mut self) -> Result<Option<Box<dyn Uploader>>, GpuError> {
        let mut stream: hip::hipStream_t = std::ptr::null_mut();
        // SAFETY: plain runtime calls with a valid out-pointer; the uploader destroys the stream.
        unsafe {
            check(hip::hipSetDevice(self.ordinal)).map_err(|e| self.err("hipSetDevice", e))?;
            check(hip::hipStreamCreateWithFlags(&mut stream, hip::hipStreamNonBlocking))
                .map_err(|e| self.err("hipStreamCreateWithFlags (uploads)", e))?;
        }
        Ok(Some(Box::new(HipUploader { ordinal: self.ordinal, stream, device: self.info.description.clone() })))
    }
}

/// Host-to-device copies on a second stream of the device, from the upload thread (HIP has no
/// context to retain: the device is set on the calling thread before each copy).
struct HipUploader {
    ordinal: i32,
    stream: hip::hipStream_t,
    device: String,
}

// SAFETY: a plain runtime handle; the engine serializes uploads behind a mutex, and each call
// sets the device on the calling thread.
unsafe impl Send for HipUploader {}

impl Uploader for HipUploader {
    unsafe fn upload(&mut self, dst: DevPtr, src: *const u8, bytes: usize) -> Result<(), GpuError> {
        let err = |call: &'static str, e| GpuError { api: "HIP", call, device: self.device.clone(), detail: text(e) };
        // SAFETY: the stream lives as long as self; the caller vouches for both ranges.
        unsafe {
            check(hip::hipSetDevice(self.ordinal)).map_err(|e| err("hipSetDevice", e))?;
            let kind = hip::hipMemcpyKind::hipMemcpyHostToDevice;
            check(hip::hipMemcpyAsync(dst as *mut c_void, src.cast(), bytes, kind, self.stream))
                .map_err(|e| err("hipMemcpyAsync (pool row)", e))?;
            check(hip::hipStreamSynchronize(self.stream)).map_err(|e| err("hipStreamSynchronize (pool row)", e))
        }
    }
}

impl Drop for HipUploader {
    fn drop(&mut self) {
        // SAFETY: the stream was created in `uploader` and is not used after.
        unsafe {
            let _ = hip::hipSetDevice(self.ordinal);
            let _ = hip::hipStreamSynchronize(self.stream);
            let _ = hip::hipStreamDestroy(self.stream);
        }
    }
}

impl Drop for HipDevice {
    fn drop(&mut self) {
        // SAFETY: all handles were created in open and are not used after.
        unsafe {
            let _ = hip::hipSetDevice(self.ordinal);
            let _ = hip::hipStreamSynchronize(self.stream);
            for m in [self.module.take(), self.events_module.take()].into_iter().flatten() {
                let _ = hip::hipModuleUnload(m);
            }
            let _ = hip::hipEventDestroy(self.start);
            let _ = hip::hipEventDestroy(self.stop);
            let _ = hip::hipStreamDestroy(self.stream);
        }
    }
}

impl HipDevice {
    /// Function `name` of the climatology code object (`events`: of the events one), each code
    /// object loaded once and each function looked up once.
    fn load_function(&mut self, events: bool, name: &str) -> Result<(), GpuError> {
        let loaded = if events { self.events_module } else { self.module };
        let module = match loaded {
            Some(m) => m,
            None => {
                let code: &[u8] = if events { EVENTS_CODE_OBJECT } else { CODE_OBJECT };
                let mut m = std::ptr::null_mut();
                // SAFETY: both code objects are complete, embedded at build time.
                check(unsafe { hip::hipModuleLoadData(&mut m, code.as_ptr().cast()) })
                    .map_err(|e| self.err("hipModuleLoadData", e))?;
                if events {
                    self.events_module = Some(m);
                } else {
                    self.module = Some(m);
                }
                m
            }
        };
        if !self.functions.contains_key(name) {
            let mut f = std::ptr::null_mut();
            let cname = CString::new(name).expect("kernel names have no NUL");
            // SAFETY: loaded module, NUL-terminated name.
            check(unsafe { hip::hipModuleGetFunction(&mut f, module, cname.as_ptr()) })
                .map_err(|e| self.err("hipModuleGetFunction", e))?;
            self.functions.insert(name.to_string(), f);
        }
        Ok(())
    }
}
