//! Compiling the kernel for one CUDA device with NVRTC: only the instantiation asked for, to
//! machine code for the device's own architecture (no PTX left for the driver), with
//! floating-point contraction off, once per process and kept on disk between runs
//! ([`kcache`]). The measuring knobs that change the compiled code are applied
//! here.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::OnceLock;

use cudarc::nvrtc::{result as nvrtc_result, sys as nvrtc_sys};

use super::CudaDevice;
use crate::engine::gpu::{kcache, GpuError};

impl CudaDevice {
    /// Machine code (CUBIN) of kernel `name` for this device's architecture, compiled by NVRTC
    /// from the kernel source `file` (text from `source`) once per process (only that
    /// instantiation, so neither NVRTC nor the driver compiles the others; no PTX is left for
    /// the driver to translate at load).
    pub(super) fn cubin(
        &self,
        file: &str,
        source: &dyn Fn() -> String,
        name: &str,
        defines: &[String],
    ) -> Result<Vec<u8>, GpuError> {
        type Cache = std::sync::Mutex<HashMap<((i32, i32), String), Vec<u8>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
        let key = (self.arch, format!("{file}:{name} {}", defines.join(" ")));
        if let Some(image) = cache.get(&key) {
            return Ok(image.clone());
        }
        let nvrtc = |call: &'static str, detail: String| GpuError {
            api: "NVRTC",
            call,
            device: self.info.description.clone(),
            detail,
        };
        let arch = format!("sm_{}{}", self.arch.0, self.arch.1);
        let options = nvrtc_options(&arch, name, defines);
        let started = std::time::Instant::now();
        let text = source();
        // compiled by an earlier run (kcache.rs): keyed by the source, the options and versions
        let disk = kcache::resolve(crate::util::knobs::location_env);
        let disk_key = {
            let (mut major, mut minor) = (0, 0);
            // SAFETY: plain query into two integers.
            let _ = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
            let versions = format!("nvrtc {major}.{minor} sstclim {}", env!("CARGO_PKG_VERSION"));
            kcache::key(&[
                text.as_bytes(),
                file.as_bytes(),
                name.as_bytes(),
                options.join("\n").as_bytes(),
                versions.as_bytes(),
            ])
        };
        if let Some(image) = disk.as_deref().and_then(|d| kcache::load(d, &disk_key)) {
            tracing::info!("loaded {name} for {arch} from the kernel cache ({disk_key}) {defines:?}");
            cache.insert(key, image.clone());
            return Ok(image);
        }
        let src = CString::new(text).expect("the kernel source has no NUL");
        let file = CString::new(file).expect("no NUL");
        let prog =
            nvrtc_result::create_program(&src, Some(&file)).map_err(|e| nvrtc("nvrtcCreateProgram", e.to_string()))?;
        // SAFETY: `prog` is live until destroyed below; buffers are sized by NVRTC's answers.
        let image = unsafe {
            let compiled = nvrtc_result::compile_program(prog, &options);
            let outcome = match compiled {
                Err(e) => {
                    let log = nvrtc_result::get_program_log(prog)
                        .map(|l| l.iter().map(|&c| c as u8 as char).collect::<String>())
                        .unwrap_or_default();
                    Err(nvrtc("nvrtcCompileProgram", format!("{e}: {}", log.trim_end_matches('\0'))))
                }
                Ok(()) => {
                    let mut size = 0usize;
                    let r = nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size);
                    if r != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
                        Err(nvrtc("nvrtcGetCUBINSize", format!("{r:?}")))
                    } else {
                        let mut image = vec![0u8; size];
                        let r = nvrtc_sys::nvrtcGetCUBIN(prog, image.as_mut_ptr().cast());
                        if r != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
                            Err(nvrtc("nvrtcGetCUBIN", format!("{r:?}")))
                        } else {
                            Ok(image)
                        }
                    }
                }
            };
            let _ = nvrtc_result::destroy_program(prog);
            outcome?
        };
        tracing::info!("compiled {name} for {arch} in {:.2} s {defines:?}", started.elapsed().as_secs_f64());
        if let Some(dir) = disk.as_deref() {
            kcache::store(dir, &disk_key, &image);
        }
        cache.insert(key, image.clone());
        Ok(image)
    }
}

/// NVRTC's options for kernel `name` on architecture `arch` (`sm_90`): exact IEEE arithmetic,
/// only that instantiation, the launch constants `defines`, and the measuring knobs.
fn nvrtc_options(arch: &str, name: &str, defines: &[String]) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "--fmad=false".to_string(),
        "--prec-div=true".to_string(),
        "--ftz=false".to_string(),
        "--std=c++17".to_string(),
        "-DSC_SELECT".to_string(),
        format!("-DSC_WANT_{name}"),
    ];
    // launch constants compiled in (spec.rs)
    options.extend(defines.iter().map(|d| format!("-D{d}")));
    // a register cap trades registers for occupancy; for measuring
    if let Some(cap) = crate::util::knobs::cuda_maxrreg() {
        options.push(format!("--maxrregcount={cap}"));
    }
    // ... but launch bounds override that cap: this one sets their minimum blocks per
    // multiprocessor instead (registers <= 65536 / (256 x N))
    if let Some(n) = crate::util::knobs::cuda_min_blocks() {
        options.push(format!("-DSC_MIN_BLOCKS={n}"));
    }
    // extra preprocessor definitions (`SSTCLIM_CUDA_DEFINES="A B=1"`), for measuring
    // kernel variants kept behind #ifdef
    if let Some(defs) = crate::util::knobs::cuda_defines() {
        options.extend(defs.split_whitespace().map(|d| format!("-D{d}")));
    }
    // source lines in the machine code, for profilers (Nsight Compute's source view)
    if crate::util::knobs::cuda_lineinfo() {
        options.push("-lineinfo".to_string());
    }
    options
}
