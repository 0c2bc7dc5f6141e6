//! Device memory as the engine holds it between tiles: numbered buffers that only grow, host
//! ranges page-locked for DMA, the host pool pinned for one compute call, and the measurement
//! of the copy bandwidths a device reaches.

use std::time::Duration;

use super::device::{DevPtr, Device, GpuError};
use crate::engine::BandwidthProbe;

/// A device buffer that remembers its size; freed explicitly by the engine.
#[derive(Default)]
pub(super) struct Buffer {
    ptr: DevPtr,
    pub(super) bytes: usize,
}

/// What stays allocated on the device between tiles.
pub(super) struct State<D: Device> {
    pub(super) device: D,
    pub(super) buffers: Vec<Buffer>,
    /// Host ranges pinned through `DeviceEngine::pin_host`: (start address, bytes).
    pub(super) pinned: Vec<(usize, usize)>,
}

impl<D: Device> State<D> {
    /// Whether `pool` lies inside a range pinned through `DeviceEngine::pin_host`.
    pub(super) fn contains_pinned<T>(&self, pool: &[T]) -> bool {
        let (a, n) = (pool.as_ptr() as usize, std::mem::size_of_val(pool));
        self.pinned.iter().any(|&(p, len)| a >= p && a + n <= p + len)
    }

    /// Bytes of device memory held.
    pub(super) fn device_bytes(&self) -> u64 {
        self.buffers.iter().filter(|b| b.ptr != 0).map(|b| b.bytes as u64).sum()
    }

    /// Buffer `i` with room for at least `bytes` (reallocated only to grow).
    pub(super) fn buffer(&mut self, i: usize, bytes: usize) -> Result<DevPtr, GpuError> {
        if self.buffers.len() <= i {
            self.buffers.resize_with(i + 1, Buffer::default);
        }
        if self.buffers[i].bytes < bytes.max(1) {
            if self.buffers[i].ptr != 0 {
                self.device.synchronize()?;
                // SAFETY: the stream is idle, so no queued work uses the old buffer.
                unsafe { self.device.free(self.buffers[i].ptr) };
                self.buffers[i] = Buffer::default();
            }
            let ptr = self.device.alloc(bytes.max(1))?;
            self.buffers[i] = Buffer { ptr, bytes: bytes.max(1) };
        }
        Ok(self.buffers[i].ptr)
    }

    /// Upload a small table into buffer `i`.
    pub(super) fn upload<V: Copy>(&mut self, i: usize, data: &[V]) -> Result<DevPtr, GpuError> {
        let bytes = std::mem::size_of_val(data);
        let ptr = self.buffer(i, bytes)?;
        if bytes > 0 {
            // SAFETY: `data` outlives the copy: we synchronize before returning from compute,
            // and the buffer holds at least `bytes`.
            unsafe { self.device.copy_h2d(ptr, bytes, data.as_ptr().cast(), bytes, bytes, 1)? };
            // small pageable copies are synchronous with respect to the host data
            self.device.synchronize()?;
        }
        Ok(ptr)
    }
}

impl<D: Device> Drop for State<D> {
    fn drop(&mut self) {
        let _ = self.device.synchronize();
        for &(ptr, _) in &self.pinned {
            // SAFETY: pinned by pin_host and still mapped (its caller unpins before unmapping;
            // this only runs when the engine goes first).
            let _ = unsafe { self.device.unregister(ptr as *const u8) };
        }
        for b in &self.buffers {
            if b.ptr != 0 {
                // SAFETY: the stream is idle.
                unsafe { self.device.free(b.ptr) };
            }
        }
    }
}

// buffer indices
pub(super) const B_POOL: usize = 0;
pub(super) const B_VALUES: usize = 1;
pub(super) const B_COUNTS: usize = 2;
pub(super) const B_RING: usize = 3;
pub(super) const B_POS_LO: usize = 4;
pub(super) const B_POS_FRAC: usize = 5;
pub(super) const B_LOAD_START: usize = 6;
pub(super) const B_LOADS: usize = 7;
pub(super) const B_LISTS: usize = 8;
pub(super) const B_NL: usize = 9;
pub(super) const B_GROUP_OFF: usize = 10;
pub(super) const B_GROUP_ROWS: usize = 11;
pub(super) const B_LUT: usize = 12;
pub(super) const B_GROUP_FIRST: usize = 13;

pub(super) fn probe<D: Device>(st: &mut State<D>, bytes: usize, repeats: usize) -> Result<BandwidthProbe, GpuError> {
    let host = crate::pool::Pool::<f64>::new(1, bytes / 8).map_err(|e| GpuError {
        api: D::API,
        call: "mmap",
        device: "host".into(),
        detail: e.to_string(),
    })?;
    let src = host.as_slice();
    let n = src.len() * 8;
    // touch every page before pinning
    let ptr = src.as_ptr() as *mut f64;
    for i in (0..src.len()).step_by(512) {
        // SAFETY: i < len; the pool is ours and not yet shared with the device.
        unsafe { ptr.add(i).write(i as f64) };
    }
    // SAFETY: `host` stays mapped until after unregister below.
    unsafe { st.device.register(src.as_ptr().cast(), n)? };
    let a = st.buffer(B_POOL, 2 * n)?;
    let mut h2d = Vec::new();
    let mut d2d = Vec::new();
    let run = (|| -> Result<(), GpuError> {
        for _ in 0..repeats + 1 {
            st.device.timer_start()?;
            // SAFETY: `src` is pinned and `a` holds 2n bytes.
            unsafe { st.device.copy_h2d(a, n, src.as_ptr().cast(), n, n, 1)? };
            h2d.push(st.device.timer_stop()?);
            st.device.timer_start()?;
            // SAFETY: both halves of `a` are n bytes.
            unsafe { st.device.copy_d2d(a + n as u64, a, n)? };
            d2d.push(st.device.timer_stop()?);
        }
        Ok(())
    })();
    // SAFETY: the stream was synchronized by timer_stop (or is drained here).
    let _ = st.device.synchronize();
    unsafe { st.device.unregister(src.as_ptr().cast())? };
    run?;
    let median = |v: &mut Vec<Duration>| {
        v.remove(0); // warm-up
        v.sort();
        v[v.len() / 2].as_secs_f64()
    };
    let (h, d) = (median(&mut h2d), median(&mut d2d));
    Ok(BandwidthProbe {
        bytes: n as u64,
        h2d_seconds: h,
        h2d_gb_per_s: n as f64 / h / 1e9,
        d2d_seconds: d,
        // a copy reads and writes every byte
        d2d_gb_per_s: 2.0 * n as f64 / d / 1e9,
    })
}

/// The host pool, page-locked for the duration of one compute call when the device allows it.
pub(super) struct Pinned {
    ptr: *const u8,
    ok: bool,
    pub(super) seconds: f64,
}

impl Pinned {
    pub(super) fn new<D: Device, T>(device: &mut D, pool: &[T]) -> Pinned {
        let start = std::time::Instant::now();
        let bytes = std::mem::size_of_val(pool);
        // SAFETY: the pool outlives this compute call, and `release` runs before it returns.
        let ok = match unsafe { device.register(pool.as_ptr().cast(), bytes) } {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("copying from pageable memory: {e}");
                false
            }
        };
        Pinned { ptr: pool.as_ptr().cast(), ok, seconds: start.elapsed().as_secs_f64() }
    }

    /// For a pool inside memory the caller pinned already.
    pub(super) fn already() -> Pinned {
        Pinned { ptr: std::ptr::null(), ok: false, seconds: 0.0 }
    }

    pub(super) fn release<D: Device>(self, device: &mut D) {
        if self.ok {
            let _ = device.synchronize();
            // SAFETY: registered in `new`; the stream is idle.
            if let Err(e) = unsafe { device.unregister(self.ptr) } {
                tracing::warn!("{e}");
            }
        }
    }
}
