//! Utilities the stages share: disjoint mutable slices for parallel writers, the seeded
//! generator, the `SSTCLIM_*` environment variables, and signal handling.

pub mod disjoint;
pub mod knobs;
pub mod rng;
pub mod signals;
