//! sstclim: day-of-year climatologies (mean and exact percentile thresholds, Hobday et al.
//! 2016) and marine heatwaves and cold spells of daily gridded sea surface temperature, on
//! CPUs and GPUs.
//!
//! The library's API is what this page lists: the two jobs as typed options
//! ([`Climatology`], [`Events`]) with marineHeatWaves' defaults and ours as constructors, how
//! they compute ([`Compute`]), where their values come from ([`Source`]: files, or arrays in
//! memory through [`memory_source`]) and where results go (in memory: [`ClimatologyResult`],
//! [`EventsResult`]; or files: [`FilesOut`], [`EventsOut`]).
//!
//! ```no_run
//! use sstclim::{Climatology, Compute, Events, Source};
//! let source = Source::files("data/", Some("analysed_sst"));
//! let clim = Climatology::hobday().baseline(1983..=2012).percentiles(&[10.0, 90.0]);
//! let thresholds = clim.compute(&source, &Compute::auto())?;
//! let found = Events::hobday().both().years(1982..=2022).detect(&source, &thresholds, &Compute::auto())?;
//! println!("{} heatwaves", found.heat().map_or(0, |k| k.events.len()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The `sstclim` command is a client of the same options (`cli`). Inside, the stages run top to
//! bottom: `cli` parses flags into the options; `run` (one rank), `dist` (MPI ranks) and
//! `run_events` run the jobs; `pipeline` drives the climatology tile by tile; `discover` and
//! `input` find and decode files (or `source` a caller's array) into a `pool`; an `engine`
//! computes the statistics; `output` and `nc` write CF NetCDF; `util` and `report` serve them
//! all (docs/architecture.md).

// Without `internals` the helpers only the integration tests and benchmarks call (fixture
// readers, measuring variants, re-exports for them) are unused in the product's build; with it
// (CI's tests, clippy and docs) every module is public and checked.
#![cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]

mod api;

/// The crate's internal modules: private, except with the `internals` feature (turned on by
/// `test-hooks` and `bench`), where the integration tests and the benchmarks reach them. They
/// are no API: hidden from the docs, with no promise of stability.
macro_rules! internal {
    ($($(#[$attr:meta])* $name:ident),* $(,)?) => {$(
        $(#[$attr])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        mod $name;
    )*};
}

internal!(
    #[cfg(feature = "bench")]
    bench,
    calendar,
    cli,
    discover,
    dist,
    error,
    events,
    input,
    nc,
    output,
    pipeline,
    plan,
    pool,
    report,
    run,
    run_events,
    smooth,
    source,
    stats,
    template,
    tools,
    util,
    window,
);

// (declared by hand: its `test_each_backend!` is `#[macro_export]`, which a macro-declared
// module cannot give by its absolute path)
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod engine;
#[cfg(not(feature = "internals"))]
mod engine;

/// The `sstclim` command (src/main.rs): parse the command line, run the subcommand, report an
/// error in one line with a non-zero exit status.
#[doc(hidden)]
pub fn command_line_main() -> std::process::ExitCode {
    cli::entry::main()
}

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
