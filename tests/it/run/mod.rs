//! `sstclim run`, the climatology job, through the real binary: values against oracles
//! written in the tests and against marineHeatWaves' numpy rules, engines and pools, the
//! pipeline's read paths and segments, the write paths, and the 360x181 acceptance check.

mod backends;
mod end_to_end;
mod hobday;
mod hobday_numpy;
mod pipeline;
mod reference_size;
mod write_path;
