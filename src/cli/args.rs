//! The flag groups `run` and `events` share (ripgrep's low-level arguments): where the values
//! come from and what missing days mean, and the threads and memory a job takes. Declared once,
//! flattened into both subcommands, so a flag means one thing wherever it appears.

use clap::Args;

use super::headings::{INPUT, PERFORMANCE};
use crate::plan::values::ByteSize;
use crate::source::Source;

/// Where a job's values come from.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Input: a directory, files, a glob, @list.txt, or a {year}{doy} template.
    ///
    /// A directory is scanned (a few levels deep) for NetCDF files named by date or holding
    /// time series (dates from their CF time axes); a glob such as 'data/*.nc' (quoted);
    /// several paths (`-i a.nc b.nc`, or --input repeated); `@list.txt` names one input per
    /// line; a template such as 'data/sst_{year}_{doy}.nc' names one file per day.
    #[arg(long, short, required = true, num_args = 1.., help_heading = INPUT)]
    pub input: Vec<String>,

    /// Input variable (default: analysed_sst, sst, or the only gridded one).
    #[arg(long, help_heading = INPUT)]
    pub var: Option<String>,

    /// Missing input files (days) are missing values instead of an error.
    ///
    /// A missing day leaves the climatology's windows (fewer samples) and, in events, takes
    /// the climatological mean as marineHeatWaves fills gaps; the reports count them.
    #[arg(long, help_heading = INPUT)]
    pub allow_missing: bool,
}

impl InputArgs {
    /// The files (one input per line, see discover).
    pub fn source(&self) -> Source {
        Source::files(self.input.join("\n"), self.var.as_deref())
    }
}

/// The threads and memory a job takes.
#[derive(Args, Debug, Clone)]
pub struct ResourceArgs {
    /// Worker threads (default: every core).
    #[arg(long, help_heading = PERFORMANCE)]
    pub threads: Option<usize>,

    /// Host memory budget (default: half the free memory).
    ///
    /// For the pools and results of a tile (`run`) or the series of a band of cells
    /// (`events`); a job that needs more is split into tiles or bands of cells.
    #[arg(long, visible_alias = "max-host-mem", help_heading = PERFORMANCE)]
    pub max_mem: Option<ByteSize>,
}
