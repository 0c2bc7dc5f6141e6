//! Utilities the stages share: CF time decoding, disjoint mutable slices for parallel writers, the seeded
//! generator, the `SSTCLIM_*` environment variables, and signal handling.

pub mod cftime;
pub mod disjoint;
pub mod knobs;
pub mod rng;
pub mod signals;
