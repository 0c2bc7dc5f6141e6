//! A GPU engine that is still starting. Bringing up a CUDA device (driver initialisation and
//! the primary context) takes 0.2-0.5 s, as long as reading the reference job's files; a run
//! hands the pipeline this stand-in at once and the device comes up on its own thread, so the
//! work that needs no device (forking the process that creates the outputs, committing the
//! result buffers) is done meanwhile instead of beside the reader threads. The first call that
//! needs the device waits for it; a device that failed to start fails that call, naming why.

use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use super::BandwidthProbe;
use super::{
    BackendError, DeviceEngine, Engine, EngineError, EngineTimes, PoolKind, StagingError, StartError, StatSpec,
    TileResult,
};
use crate::pool::PoolRef;
use crate::window::WindowPlan;

type Started = Result<Box<dyn Engine + Send>, BackendError>;

/// An engine being started on another thread. It is a device engine from the start (only GPU
/// engines are started this way, and the pipeline plans for a device before it is up); every
/// device call waits for it and goes to the started engine's device side.
pub struct Deferred {
    name: &'static str,
    pending: Mutex<Option<JoinHandle<Started>>>,
    engine: OnceLock<Result<Box<dyn Engine + Send>, StartError>>,
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
                Some(Ok(Err(e))) => Err(StartError::Backend(e)),
                Some(Err(_)) => Err(StartError::Panicked),
                None => Err(StartError::AlreadyStarting),
            }
        });
        match started {
            Ok(engine) => Ok(engine.as_ref()),
            Err(why) => Err(EngineError::Start { engine: self.name, cause: why.clone() }),
        }
    }

    /// The started engine's device side, waiting for it (`None`: a host engine posing as a
    /// device, the test hook of [`super::Backend::start`]: the defaults of a device that keeps
    /// the pool in host memory stand for it).
    fn device_side(&self) -> Result<Option<&dyn DeviceEngine>, EngineError> {
        Ok(self.wait()?.device())
    }

    /// The started engine's device side, if it started and has one (no waiting beyond the start).
    fn started_device(&self) -> Option<&dyn DeviceEngine> {
        self.wait().ok().and_then(|e| e.device())
    }
}

impl Engine for Deferred {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self) -> String {
        match self.wait() {
            Ok(e) => e.describe(),
            Err(EngineError::Start { cause, .. }) => format!("{} (not started: {cause})", self.name),
            Err(e) => format!("{} (not started: {e})", self.name),
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

    fn device(&self) -> Option<&dyn DeviceEngine> {
        Some(self)
    }
}

impl DeviceEngine for Deferred {
    fn ready(&self) -> Result<(), EngineError> {
        self.wait().map(|_| ())
    }

    fn prepare(
        &self,
        pool: PoolKind<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
    ) -> Result<(), EngineError> {
        match self.device_side()? {
            Some(d) => d.prepare(pool, plan, stats, n_cells),
            None => Ok(()),
        }
    }

    unsafe fn pin_host(&self, ptr: *const u8, len: usize) -> Result<bool, EngineError> {
        match self.device_side()? {
            // SAFETY: the caller's promise is passed on.
            Some(d) => unsafe { d.pin_host(ptr, len) },
            None => Ok(false),
        }
    }

    unsafe fn unpin_host(&self, ptr: *const u8) -> Result<(), EngineError> {
        // nothing was pinned if the device never started
        match self.started_device() {
            // SAFETY: the caller's promise is passed on.
            Some(d) => unsafe { d.unpin_host(ptr) },
            None => Ok(()),
        }
    }

    fn alloc_pinned(&self, len: usize) -> Result<Option<*mut u8>, EngineError> {
        match self.device_side()? {
            Some(d) => d.alloc_pinned(len),
            None => Ok(None),
        }
    }

    unsafe fn free_pinned(&self, ptr: *mut u8) -> Result<(), EngineError> {
        // nothing was allocated if the device never started
        match self.started_device() {
            // SAFETY: the caller's promise is passed on.
            Some(d) => unsafe { d.free_pinned(ptr) },
            None => Ok(()),
        }
    }

    fn device_memory(&self) -> Option<u64> {
        self.started_device().and_then(|d| d.device_memory())
    }

    fn stage_pool(
        &self,
        pool: PoolKind<'_>,
        n_slots: usize,
        n_cells: usize,
        plans: &[&WindowPlan],
        stats: &StatSpec,
    ) -> Result<bool, EngineError> {
        match self.device_side()? {
            Some(d) => d.stage_pool(pool, n_slots, n_cells, plans, stats),
            None => Ok(false),
        }
    }

    unsafe fn upload_slot(&self, slot: usize, src: *const u8) -> Result<(), EngineError> {
        match self.device_side()? {
            // SAFETY: the caller's promise is passed on.
            Some(d) => unsafe { d.upload_slot(slot, src) },
            None => Err(EngineError::Staging { engine: self.name, cause: StagingError::NoPool }),
        }
    }

    fn compute_staged(
        &self,
        slots: std::ops::Range<usize>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        match self.device_side()? {
            Some(d) => d.compute_staged(slots, plan, stats, out),
            None => Err(EngineError::Staging { engine: self.name, cause: StagingError::NoPool }),
        }
    }

    fn unstage_pool(&self) {
        if let Some(d) = self.started_device() {
            d.unstage_pool();
        }
    }

    fn probe_bandwidth(&self, bytes: usize, repeats: usize) -> Option<Result<BandwidthProbe, EngineError>> {
        match self.device_side() {
            Ok(d) => d.and_then(|d| d.probe_bandwidth(bytes, repeats)),
            Err(e) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gpu::OpenError;
    use crate::engine::CpuEngine;

    #[test]
    fn waits_for_the_engine_and_reports_a_failed_start() {
        let ok = Deferred::spawn("cpu", || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            Ok(Box::new(CpuEngine) as Box<dyn Engine + Send>)
        })
        .unwrap();
        assert_eq!(ok.name(), "cpu");
        assert!(ok.device().is_some(), "answered before the start finishes");
        assert_eq!(ok.wait().unwrap().name(), "cpu");
        assert_eq!(ok.describe(), "cpu");
        let failed =
            Deferred::spawn("cuda", || Err(BackendError::CudaUnavailable(OpenError::NoDevice { api: "CUDA" })))
                .unwrap();
        let err = failed.wait().err().expect("the start failed");
        assert_eq!(err.to_string(), "cuda engine: the CUDA backend is unavailable: no CUDA device is visible");
        // every later call fails the same way, none hangs or panics
        let plan = WindowPlan { slots: vec![], groups: vec![], targets: vec![] };
        let stats = StatSpec {
            percentiles: vec!["90".parse().unwrap()],
            method: crate::stats::percentile::Method::new(5).unwrap(),
            min_samples: 1,
        };
        let kind = PoolKind::of::<f32>(None);
        assert!(matches!(
            failed.stage_pool(kind, 1, 1, &[&plan], &stats),
            Err(EngineError::Start { engine: "cuda", cause: StartError::Backend(BackendError::CudaUnavailable(_)) })
        ));
        assert_eq!(failed.device_memory(), None);
        assert!(failed.describe().contains("not started: the CUDA backend is unavailable"));
        failed.unstage_pool();
        // SAFETY: nothing was pinned; the failed engine pins nothing.
        assert!(unsafe { failed.unpin_host(std::ptr::null()) }.is_ok());
    }
}
