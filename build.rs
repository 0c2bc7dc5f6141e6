//! Build script: with the `hip` feature, compile kernels/climatology.hip and kernels/events.hip
//! into code objects with `hipcc --genco` for the AMD architectures in `SSTCLIM_HIP_ARCHS`
//! (comma separated; default gfx906,gfx90a). The CUDA backend needs nothing here: NVRTC compiles the same source
//! at run time. The headers the kernel includes lie beside it in kernels/, where hipcc finds them.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    // the kernel and every header beside it (kernels/bench/ is compiled at run time only)
    let mut files: Vec<PathBuf> = std::fs::read_dir("kernels")
        .expect("kernels/ beside Cargo.toml")
        .map(|e| e.expect("a readable kernels/").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "hip" || x == "h" || x == "inc"))
        .collect();
    files.sort();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    println!("cargo:rerun-if-env-changed=SSTCLIM_HIP_ARCHS");
    println!("cargo:rerun-if-env-changed=HIPCC");
    if std::env::var_os("CARGO_FEATURE_HIP").is_none() {
        return;
    }
    for kernel in ["climatology", "events"] {
        compile(kernel);
    }
}

/// kernels/`kernel`.hip into `$OUT_DIR/kernel.hsaco`.
fn compile(kernel: &str) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join(format!("{kernel}.hsaco"));
    let archs = std::env::var("SSTCLIM_HIP_ARCHS").unwrap_or_else(|_| "gfx906,gfx90a".into());
    let hipcc = std::env::var("HIPCC").unwrap_or_else(|_| "hipcc".into());
    let mut cmd = Command::new(&hipcc);
    cmd.args(["--genco", "-O3", "-ffp-contract=off", "-std=c++17"]);
    for arch in archs.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        cmd.arg(format!("--offload-arch={arch}"));
    }
    cmd.arg("-o").arg(&out).arg(format!("kernels/{kernel}.hip"));
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run {hipcc} (the hip feature needs hipcc): {e}"));
    assert!(status.success(), "{hipcc} failed to compile kernels/{kernel}.hip for {archs}");
}
