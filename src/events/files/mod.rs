//! The events job's NetCDF files: `events.nc` (the catalogue, one record per event) and
//! `summary.nc` (blockAverage's statistics per year and cell). [`schema`] says what they hold;
//! [`store`] how they store it (`--output-type`, `--deflate`, `--shuffle`); the writers write
//! them through the project's writing kit ([`crate::nc`]), the one `run`'s outputs use.

pub mod catalogue;
pub mod compressed;
pub mod direct;
pub mod events_file;
pub mod schema;
pub mod store;
pub mod summary_file;
