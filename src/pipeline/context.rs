//! What one tile of the pipeline works with ([`TileCtx`]) and what the tiles add up to
//! ([`Totals`]): shared by the tile's steps ([`super::tile`]) and its compute loop
//! ([`super::compute`]), so neither imports the other for them.

use std::time::Duration;

use super::job::Job;
use super::readers::ReadStats;
use super::segments::Segment;
use super::trace::Trace;
use crate::engine::{Engine, EngineTimes, PoolKind};
use crate::input::direct;
use crate::output::OutputMeta;
use crate::plan::JobPlan;
use crate::pool::{Decoding, Sample};

/// Everything one tile needs.
pub(super) struct TileCtx<'a> {
    pub plan: &'a JobPlan,
    pub job: &'a Job,
    pub engine: &'a dyn Engine,
    /// An int16 pool's table (every pool of the job gets it: see [`TileCtx::pool_kind`]).
    pub decoding: Option<&'a Decoding>,
    /// The pool may live in device memory (see `device_pool_allowed`).
    pub device_pool: bool,
    pub region: &'a crate::input::Region,
    pub tile: usize,
    pub segments: &'a [Segment],
    pub direct: Option<&'a direct::DirectLayout>,
    pub trace: &'a Trace,
    pub threads: &'a rayon::ThreadPool,
    pub meta: &'a OutputMeta,
}

impl TileCtx<'_> {
    /// The kind of the tile's pool, for the device calls made before it exists.
    pub fn pool_kind<T: Sample>(&self) -> PoolKind<'_> {
        PoolKind::of::<T>(self.decoding)
    }
}

/// Sums over tiles.
#[derive(Default)]
pub(super) struct Totals {
    pub device: EngineTimes,
    pub read: ReadStats,
    pub compute: Duration,
    pub verify: Duration,
    pub write: Duration,
    pub pin: Duration,
    pub device_memory: Option<u64>,
    /// Some tile's pool lived in device memory.
    pub device_pool: bool,
}
