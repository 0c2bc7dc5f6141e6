//! sstclim: day-of-year climatologies (mean and exact percentile thresholds) of daily
//! gridded NetCDF data.
//!
//! The layers, top to bottom (each uses only those below it): [`cli`] parses the command line
//! and validates it into a [`plan`]; [`run`] (one rank) and [`dist`] (across MPI ranks) run the
//! job, beside the user's [`tools`] (and, with the `bench` feature, the benchmarks); the
//! [`pipeline`] drives the stages tile by tile within a memory budget: [`discover`] finds the
//! input files, [`window`] works out which dates each target day's samples come from,
//! [`input`] decodes files into a [`pool`], an [`engine`] computes the statistics, and
//! [`output`] writes CF NetCDF; [`util`] and [`report`] serve them all.

mod api;
#[cfg(feature = "bench")]
pub mod bench;
pub mod calendar;
pub mod cli;
pub mod discover;
pub mod dist;
pub mod engine;
pub mod error;
pub mod events;
pub mod input;
pub mod nc;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod pool;
pub mod report;
pub mod run;
pub mod run_events;
pub mod smooth;
pub mod source;
pub mod stats;
pub mod template;
pub mod tools;
pub mod util;
pub mod window;

pub use api::{
    grid_1d, grid_2d, memory_source, Against, Climatology, ClimatologyResult, Compute, EventKind, Events,
    EventsJobError, EventsOut, EventsResult, FilesOut, KindResult, Stored, EVENT_FLOAT_FIELDS, EVENT_INT_FIELDS,
    SUMMARY_STATS,
};
pub use calendar::{Calendar, Date};
pub use engine::Backend;
pub use error::Error;
pub use source::{MemorySeries, Source};
pub use stats::percentile::{Method, Percentile};
pub use util::cftime::CfCalendar;
