//! `sstclim events` and the `sstclim::events` detector: against an independent scalar detector
//! (`common::events`) and marineHeatWaves' own output, end to end in one band and several,
//! and on model calendars.

mod calendars;
mod cli;
mod clim_forms;
mod detect;
mod mhw;
