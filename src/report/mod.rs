//! What a run tells its user: the stage timings and run report, and progress on a terminal.

pub mod progress;
pub mod timing;
