//! What a job does to its outputs and output directory: the write paths and output types
//! through the output API, a full disk, all-or-nothing publishing, the lock, and report paths.

mod dir;
mod direct;
mod full_disk;
mod publish;
mod report_paths;
mod types;
