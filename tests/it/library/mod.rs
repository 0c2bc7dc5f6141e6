//! The library API (`sstclim::Climatology`, `Events`, `Source`) called without files or a command line.

mod memory;
