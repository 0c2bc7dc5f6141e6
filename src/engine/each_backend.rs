//! Tests named by backend (candle's `test_device!`): one test body stamped out as one test per
//! backend ([`crate::test_each_backend!`]), so a failure on one backend does not hide another's
//! result and each backend's result shows by name. A backend that cannot run on this machine is
//! skipped with a notice, unless `SSTCLIM_REQUIRE_BACKENDS` names it (the GPU node sets
//! `cuda`): then its tests fail, so a missing GPU cannot pass for a green run.

use super::{Backend, BackendError, GpuOptions};

/// The backend a test is named for (`cpu`, `reference`, `auto`, `cuda`, `hip`).
pub fn backend(name: &str) -> Backend {
    match name {
        "cpu" => Backend::Cpu,
        "reference" => Backend::Reference,
        "auto" => Backend::Auto,
        "cuda" => Backend::Cuda,
        "hip" => Backend::Hip,
        other => panic!("no backend is named {other}"),
    }
}

/// The name `--backend` takes for `backend`.
pub fn name(backend: Backend) -> &'static str {
    match backend {
        Backend::Cpu => "cpu",
        Backend::Reference => "reference",
        Backend::Auto => "auto",
        Backend::Cuda => "cuda",
        Backend::Hip => "hip",
    }
}

/// Whether `backend` can run here: host engines (and `auto`, which falls back to one) always,
/// a GPU backend where an engine starts on device 0.
pub fn available(backend: Backend) -> Result<(), BackendError> {
    match backend {
        Backend::Cpu | Backend::Reference | Backend::Auto => Ok(()),
        Backend::Cuda | Backend::Hip => backend.engine(0, &GpuOptions::default()).map(drop),
    }
}

/// Whether the tests of `backend` run here: yes where it is [`available`]; otherwise they are
/// skipped (said once per test process) or, where `SSTCLIM_REQUIRE_BACKENDS` names it, fail.
pub fn runs_here(backend: Backend) -> bool {
    let Err(why) = available(backend) else { return true };
    let name = name(backend);
    if crate::util::knobs::backend_required(name) {
        panic!(
            "the {name} backend is required here ({}) but cannot run: {why}",
            crate::util::knobs::REQUIRE_BACKENDS.name
        );
    }
    skip_notice(&format!("SKIPPED {name} tests: {why}"));
    false
}

/// Say once per test process, on the real stderr (not captured by the test harness), that a
/// backend's tests were skipped.
fn skip_notice(message: &str) {
    use std::io::Write;
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|m| m == message) {
        seen.push(message.to_string());
        let _ = writeln!(std::io::stderr().lock(), "{message}");
    }
}

/// One test body, one test per backend: `test_each_backend!(name, [cpu, cuda, hip], |backend:
/// Backend| { ... })` makes the tests `name::cpu`, `name::cuda` and `name::hip`, each running
/// the body with its [`Backend`](crate::engine::Backend) where that backend can run (see
/// [`runs_here`]). The module `name` sees its parent's items.
#[macro_export]
macro_rules! test_each_backend {
    ($(#[$meta:meta])* $name:ident, [$($backend:ident),+ $(,)?], $body:expr) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $(
                #[test]
                fn $backend() {
                    let backend = $crate::engine::each_backend::backend(stringify!($backend));
                    if $crate::engine::each_backend::runs_here(backend) {
                        let body: &dyn Fn($crate::engine::Backend) = &$body;
                        body(backend);
                    }
                }
            )+
        }
    };
}
