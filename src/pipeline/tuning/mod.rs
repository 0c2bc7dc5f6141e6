//! Tuning the pipeline to the machine: how many segments a job is cut into. `decide` applies
//! `--segments`, the rates file and the memory limits to a job; `model` is the pure model of
//! the pipeline that predicts each choice's wall time from measured rates; `rates` keeps those
//! rates per machine in a small JSON file; `observed` takes a run's measurements from its
//! timeline.

pub mod decide;
pub mod model;
pub mod observed;
pub mod rates;
