//! The user's subcommands besides `run`: synthetic datasets, comparing outputs, the demo and
//! its quicklook maps.

pub mod compare;
pub mod demo;
pub mod generate;
pub mod quicklook;
