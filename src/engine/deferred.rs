//! A GPU engine that is still starting. Bringing up a CUDA device (driver initialisation and
//! the primary context) takes 0.2-0.5 s, as long as reading the reference job's files; a run
//! hands the pipeline this stand-in at once and the device comes up on its own thread, so the
//! work that needs no device (forking the process that creates the outputs, committing the
//! result buffers) is done meanwhile instead of beside the reader threads. The first call that
//! needs the device waits for it; a device that failed to start fails that call, naming why.

use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use super::gpu::BandwidthProbe;
use super::{BackendError, Engine, EngineError, EngineTimes, StatSpec, TileResult};
use crate::pool::{PoolRef, PoolType};
use crate::window::WindowPlan;

type Started = Result<Box<dyn Engine + Send>, BackendError>;

/// An engine being started on another thread.
pub struct Deferred {
    name: &'static str,
    pending: Mutex<Option<JoinHandle<Started>>>,
    engine: OnceLock<Result<Box<dyn Engine + Send>, String>>,
}

impl Deferred {
    /// Start `start` on its own thread; `name` is the engine's name (known before it starts).
    pub fn spawn(name: &'static str, start: impl FnOnce() -> Started + Send + 'static) -> std::io::Result<Deferred> {
        let handle = std::thread::Builder::new().name("device-start".into()).spawn(start)?;
        Ok(Deferred { name, pending: Mutex::new(Some(handle)), engine: OnceLock::new() })
    }

    /// The started engine, waiting for it if need be, or why it could not start.
    pub fn wait(&self) -> Result<&dyn Engine, EngineError> {
        let started = self.engine.get_or_init(|| {
            let handle = self.pending.lock().unwrap_or_else(|e| e.into_inner()).take();
            match handle.map(JoinHandle::join) {
                Some(Ok(Ok(engine))) => Ok(engine),
                Some(Ok(Err(e))) => Err(e.to_string()),
                Some(Err(_)) => Err("the thread starting the device panicked".into()),
                None => Err("the device was already being started".into()),
            }
        });
        match started {
            Ok(engine) => Ok(engine.as_ref()),
            Err(why) => Err(EngineError { engine: self.name, message: why.clone() }),
        }
    }

    /// The engine once started, or None (the start failed: [`Deferred::wait`] says why).
    fn get(&self) -> Option<&dyn Engine> {
        self.wait().ok()
    }
}

impl Engine for Deferred {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self) -> String {
        match self.wait() {
            Ok(e) => e.describe(),
            Err(e) => format!("{} (not started: {})", self.name, e.message),
        }
    }

    /// Only GPU engines are started this way.
    fn is_device(&self) -> bool {
        true
    }

    fn ready(&self) -> Result<(), EngineError> {
        self.wait().map(|_| ())
    }

    fn probe_bandwidth(&self, bytes: usize, repeats: usize) -> Option<Result<BandwidthProbe, EngineError>> {
        match self.wait() {
            Ok(e) => e.probe_bandwidth(bytes, repeats),
            Err(e) => Some(Err(e)),
        }
    }

    fn prepare(
        &self,
        pool: PoolType,
        decoding: Option<&[f64]>,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
    ) -> Result<(), EngineError> {
        self.wait()?.prepare(pool, decoding, plan, stats, n_cells)
    }

    unsafe fn pin_host(&self, ptr: *const u8, len: usize) -> Result<bool, EngineError> {
        // SAFETY: the caller's promise is passed on.
        unsafe { self.wait()?.pin_host(ptr, len) }
    }

    unsafe fn unpin_host(&self, ptr: *const u8) -> Result<(), EngineError> {
        // SAFETY: as above (nothing was pinned if the device never started).
        match self.get() {
            Some(e) => unsafe { e.unpin_host(ptr) },
            None => Ok(()),
        }
    }

    fn device_memory(&self) -> Option<u64> {
        self.get().and_then(|e| e.device_memory())
    }

    fn stage_pool(
        &self,
        pool: PoolType,
        n_slots: usize,
        n_cells: usize,
        plans: &[&WindowPlan],
        stats: &StatSpec,
    ) -> Result<bool, EngineError> {
        self.wait()?.stage_pool(pool, n_slots, n_cells, plans, stats)
    }

    unsafe fn upload_slot(&self, slot: usize, src: *const u8) -> Result<(), EngineError> {
        // SAFETY: the caller's promise is passed on.
        unsafe { self.wait()?.upload_slot(slot, src) }
    }

    fn compute_staged(
        &self,
        slots: std::ops::Range<usize>,
        decoding: Option<&[f64]>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        self.wait()?.compute_staged(slots, decoding, plan, stats, out)
    }

    fn unstage_pool(&self) {
        if let Some(e) = self.get() {
            e.unstage_pool();
        }
    }

    fn compute(
        &self,
        pool: PoolRef<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        self.wait()?.compute(pool, plan, stats, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CpuEngine;

    #[test]
    fn waits_for_the_engine_and_reports_a_failed_start() {
        let ok = Deferred::spawn("cpu", || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok(Box::new(CpuEngine) as Box<dyn Engine + Send>)
        })
        .unwrap();
        assert_eq!(ok.name(), "cpu");
        assert!(ok.is_device(), "answered before the start finishes");
        assert_eq!(ok.wait().unwrap().name(), "cpu");
        assert_eq!(ok.describe(), "cpu");
        let failed =
            Deferred::spawn("cuda", || Err(BackendError::CudaUnavailable("no CUDA device is visible".into()))).unwrap();
        let err = failed.wait().err().expect("the start failed");
        assert_eq!(err.to_string(), "cuda engine: the CUDA backend is unavailable: no CUDA device is visible");
        // every later call fails the same way, none hangs or panics
        let plan = WindowPlan { slots: vec![], groups: vec![], targets: vec![] };
        let stats = StatSpec {
            percentiles: vec!["90".parse().unwrap()],
            method: crate::percentile::Method::new(5).unwrap(),
            min_samples: 1,
        };
        assert!(failed.stage_pool(PoolType::F32, 1, 1, &[&plan], &stats).is_err());
        assert_eq!(failed.device_memory(), None);
        assert!(failed.describe().contains("not started: the CUDA backend is unavailable"));
        failed.unstage_pool();
        // SAFETY: nothing was pinned; the failed engine pins nothing.
        assert!(unsafe { failed.unpin_host(std::ptr::null()) }.is_ok());
    }
}
