//! What only a device engine does, apart from [`super::Engine`]: page-locking host memory,
//! compiling its kernel ahead of the first tile, and holding a tile's pool in device memory that
//! reader threads fill row by row. The pipeline reaches it through [`super::Engine::device`], so
//! host engines implement none of it and the pipeline asks "is this a device?" in one way.

use super::{Engine, EngineError, EngineTimes, StagingError};
use crate::pool::{Decoding, PoolRef, PoolType, PoolView, Sample};
use crate::stats::{StatSpec, TileResult};
use crate::window::WindowPlan;

/// A pool as a device engine sees it before it holds one: its element type and, for int16
/// pools, the table that decodes the integers (`None`: a value is its integer). A pool carries
/// its table itself ([`crate::pool::Pool::decoding`]); this is that pool's description, for
/// the calls made before the pool exists.
#[derive(Clone, Copy, Debug)]
pub struct PoolKind<'a> {
    pub ty: PoolType,
    pub decoding: Option<&'a Decoding>,
}

impl<'a> PoolKind<'a> {
    /// A pool of `T` decoded through `decoding` (kept for int16 pools only: float pools hold
    /// decoded values).
    pub fn of<T: Sample>(decoding: Option<&'a Decoding>) -> PoolKind<'a> {
        let ty = pool_type(T::wrap(PoolView::new(&[], 0, 0, None)));
        PoolKind { ty, decoding: decoding.filter(|_| ty == PoolType::I16) }
    }

    /// The kind of the pool `pool` views.
    pub fn of_view(pool: PoolRef<'a>) -> PoolKind<'a> {
        let decoding = match pool {
            PoolRef::I16(p) => p.decoding(),
            _ => None,
        };
        PoolKind { ty: pool_type(pool), decoding }
    }

    /// The table as a slice (int16 pools that have one).
    pub fn table(&self) -> Option<&'a [f64]> {
        self.decoding.map(|d| &d[..])
    }
}

/// The element type of a pool view.
fn pool_type(pool: PoolRef<'_>) -> PoolType {
    match pool {
        PoolRef::F64(_) => PoolType::F64,
        PoolRef::F32(_) => PoolType::F32,
        PoolRef::I16(_) => PoolType::I16,
    }
}

/// The calls only device engines answer. The defaults are those of a device that keeps the
/// pool in host memory and pins nothing.
pub trait DeviceEngine: Engine {
    /// Wait until the device can compute (a device still starting, see [`super::Deferred`]),
    /// or say why it never will.
    fn ready(&self) -> Result<(), EngineError> {
        Ok(())
    }

    /// Get ready to compute `plan` on pools of kind `pool` and `n_cells` cells (compile the
    /// kernel, chosen by the pool's type and table), so that the first `compute` does not wait;
    /// runs while files are read.
    fn prepare(
        &self,
        pool: PoolKind<'_>,
        plan: &WindowPlan,
        stats: &StatSpec,
        n_cells: usize,
    ) -> Result<(), EngineError> {
        let _ = (pool, plan, stats, n_cells);
        Ok(())
    }

    /// Page-lock `len` bytes at `ptr` for DMA until [`DeviceEngine::unpin_host`]; `compute`
    /// calls on pools inside it then copy from pinned memory without pinning again. Returns
    /// whether the memory was pinned.
    ///
    /// # Safety
    /// The range must stay mapped until `unpin_host(ptr)` has returned.
    unsafe fn pin_host(&self, ptr: *const u8, len: usize) -> Result<bool, EngineError> {
        let _ = (ptr, len);
        Ok(false)
    }

    /// Undo [`DeviceEngine::pin_host`] (before the memory is unmapped).
    ///
    /// # Safety
    /// `ptr` must be an address given to `pin_host` whose memory is still mapped.
    unsafe fn unpin_host(&self, ptr: *const u8) -> Result<(), EngineError> {
        let _ = ptr;
        Ok(())
    }

    /// `len` bytes of page-locked host memory from the device's driver (contents unspecified),
    /// for rows copied to the device, until [`DeviceEngine::free_pinned`]; `None` where the
    /// engine has none (pin memory of your own with `pin_host` instead). The driver hands out
    /// memory it has locked already, where registering fresh memory first faults in every page.
    fn alloc_pinned(&self, len: usize) -> Result<Option<*mut u8>, EngineError> {
        let _ = len;
        Ok(None)
    }

    /// Give back memory from [`DeviceEngine::alloc_pinned`].
    ///
    /// # Safety
    /// `ptr` came from this engine's `alloc_pinned` and nothing uses it any more.
    unsafe fn free_pinned(&self, ptr: *mut u8) -> Result<(), EngineError> {
        let _ = ptr;
        Ok(())
    }

    /// Bytes of device memory the engine holds (`None`: not known, a device that never started).
    fn device_memory(&self) -> Option<u64> {
        None
    }

    /// Hold a whole tile's pool (`n_slots` rows of `n_cells`, of kind `pool`, whose table it
    /// keeps) in device memory, to be filled with [`DeviceEngine::upload_slot`] from any thread
    /// and computed on with [`DeviceEngine::compute_staged`], so no host pool is needed.
    /// Returns whether it did (backends without a second copy queue, or a pool that does not fit
    /// beside computing each of `plans` (the segments') in one chunk: no).
    fn stage_pool(
        &self,
        pool: PoolKind<'_>,
        n_slots: usize,
        n_cells: usize,
        plans: &[&WindowPlan],
        stats: &StatSpec,
    ) -> Result<bool, EngineError> {
        let _ = (pool, n_slots, n_cells, plans, stats);
        Ok(false)
    }

    /// Copy pool row `slot` (the staged pool's type, `n_cells` values at `src`) into the
    /// device-resident pool; returns when the copy is done. Callable from many threads.
    ///
    /// # Safety
    /// `src` is readable for one row of the staged pool's type.
    unsafe fn upload_slot(&self, slot: usize, src: *const u8) -> Result<(), EngineError> {
        let _ = (slot, src);
        Err(EngineError::Staging { engine: self.name(), cause: StagingError::NoPool })
    }

    /// [`Engine::compute`] on rows `slots` of the device-resident pool (int16 pools decode
    /// through the table given to `stage_pool`).
    fn compute_staged(
        &self,
        slots: std::ops::Range<usize>,
        plan: &WindowPlan,
        stats: &StatSpec,
        out: &mut TileResult,
    ) -> Result<EngineTimes, EngineError> {
        let _ = (slots, plan, stats, out);
        Err(EngineError::Staging { engine: self.name(), cause: StagingError::NoPool })
    }

    /// Let go of the device-resident pool's copy queue (its memory is reused by the next tile).
    fn unstage_pool(&self) {}

    /// The device's pinned host-to-device and device-to-device copy bandwidths, measured with
    /// `bytes` per copy (`None`: it cannot measure them).
    fn probe_bandwidth(&self, bytes: usize, repeats: usize) -> Option<Result<BandwidthProbe, EngineError>> {
        let _ = (bytes, repeats);
        None
    }
}

/// Measured copy bandwidths.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BandwidthProbe {
    pub bytes: u64,
    pub h2d_seconds: f64,
    pub h2d_gb_per_s: f64,
    pub d2d_seconds: f64,
    /// Bytes read plus bytes written per second.
    pub d2d_gb_per_s: f64,
}
