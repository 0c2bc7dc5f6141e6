//! The user's subcommands besides `run`: synthetic datasets, comparing outputs, the demo and
//! its quicklook maps (of climatologies and of events summaries).

pub mod compare;
pub mod demo;
pub mod generate;
pub mod quicklook;
pub mod summary_map;
