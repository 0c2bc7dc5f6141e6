//! The flags of the user's tools beside `run` (`generate`, `compare`, `demo`) and their
//! conversion into the plain option structs the tools take.

use std::path::PathBuf;

use clap::Args;

use super::headings::{JOB, OUTPUT, PERFORMANCE};
use crate::plan::values::{DoyList, GridSize, YearRange};
use crate::tools::demo::DemoOptions;
use crate::tools::generate::{Compression, DimOrder, GenStorage, GenerateOptions, StepsPerFile};
use crate::tools::quicklook::QuicklookOptions;

/// Flags of `sstclim generate`.
#[derive(Args, Debug, Clone)]
pub struct GenerateArgs {
    /// Grid size, longitudes x latitudes.
    #[arg(long, default_value = "1440x721", help_heading = JOB)]
    pub grid: GridSize,

    /// Years to write.
    #[arg(long, default_value = "1991-2020", help_heading = JOB)]
    pub years: YearRange,

    /// Days of year (ordinal) to write in each year.
    #[arg(long, default_value = "147-248", help_heading = JOB)]
    pub doys: DoyList,

    /// Output directory.
    #[arg(long, short, help_heading = OUTPUT)]
    pub output: PathBuf,

    /// Value storage.
    #[arg(long, value_enum, default_value_t = GenStorage::F64, help_heading = OUTPUT)]
    pub storage: GenStorage,

    /// Dimension order of the data variable.
    #[arg(long, value_enum, default_value_t = DimOrder::LatLon, help_heading = OUTPUT)]
    pub dim_order: DimOrder,

    /// Add a leading time dimension of length 1 (as OSTIA files have).
    #[arg(long, help_heading = OUTPUT)]
    pub time_dim: bool,

    /// File name template inside the output directory.
    #[arg(long, default_value = "sst_{year}_{doy}.nc", help_heading = OUTPUT)]
    pub naming: String,

    /// Fraction of cells that are land (missing in every file).
    #[arg(long, default_value_t = 0.3, help_heading = JOB)]
    pub land_fraction: f64,

    /// Probability that an ocean value is missing (clouds, gaps).
    #[arg(long, default_value_t = 0.02, help_heading = JOB)]
    pub missing_fraction: f64,

    /// Ocean cells that are missing in every file.
    #[arg(long, default_value_t = 16, help_heading = JOB)]
    pub all_missing_cells: usize,

    /// Probability that a value is missing poleward of 70 degrees (sea ice): gives windows
    /// with only a handful of valid samples.
    #[arg(long, default_value_t = 0.97, help_heading = JOB)]
    pub ice_missing_fraction: f64,

    /// Round float64 values to this step (0.01 mimics data converted from OSTIA; 0 = no rounding).
    #[arg(long, default_value_t = 0.01, help_heading = JOB)]
    pub quantum: f64,

    /// Seed of all random choices.
    #[arg(long, default_value_t = 1, help_heading = JOB)]
    pub seed: u64,

    /// Writer processes (default: all cores).
    #[arg(long, help_heading = PERFORMANCE)]
    pub jobs: Option<usize>,

    /// Replace an existing dataset in the output directory.
    #[arg(long, help_heading = OUTPUT)]
    pub overwrite: bool,

    /// Deflate the data variable at this level (1-9), as compressed products are stored.
    #[arg(long, value_name = "L", help_heading = OUTPUT)]
    pub deflate: Option<u8>,

    /// Shuffle the data variable's bytes before deflating them (as OISST and OSTIA do).
    #[arg(long, help_heading = OUTPUT)]
    pub shuffle: bool,

    /// Chunk lengths of the grid's two dimensions in the variable's order (lat x lon for
    /// --dim-order lat-lon), e.g. 361x720 (4 chunks of a 1440x721 grid); default with
    /// --deflate or --shuffle: one chunk of the whole field.
    #[arg(long, value_name = "AxB", value_parser = chunk_lengths, help_heading = OUTPUT)]
    pub chunks: Option<[usize; 2]>,

    /// Add a zlev dimension of length 1 after time (needs --time-dim): OISST v2.1's
    /// (time, zlev, lat, lon) layout.
    #[arg(long, requires = "time_dim", help_heading = OUTPUT)]
    pub zlev_dim: bool,

    /// Time steps per file: one file per day, or per year (sst.day.mean.YEAR.nc, every day of
    /// --doys along its time dimension, as NOAA PSL ships them).
    #[arg(long, value_enum, default_value_t = StepsPerFile::Day, help_heading = OUTPUT)]
    pub steps_per_file: StepsPerFile,

    /// Chunk length along time of yearly files (--steps-per-file year), e.g. 30.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "steps_per_file", help_heading = OUTPUT)]
    pub time_chunk: usize,

    /// Internal: this process writes files index % count == index.
    #[arg(long, hide = true, requires = "worker_count", help_heading = PERFORMANCE)]
    pub worker_index: Option<usize>,

    /// Internal: number of writer processes.
    #[arg(long, hide = true, help_heading = PERFORMANCE)]
    pub worker_count: Option<usize>,
}

/// Flags of `sstclim compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// First result set: a directory of outputs or one file.
    pub a: PathBuf,
    /// Second result set.
    pub b: PathBuf,
    /// Largest acceptable absolute difference (0 = bitwise equal values).
    #[arg(long, default_value_t = 0.0, value_parser = tolerance, allow_hyphen_values = true, help_heading = JOB)]
    pub tolerance: f64,
    /// Also write the comparison as JSON.
    #[arg(long, help_heading = OUTPUT)]
    pub json: Option<PathBuf>,
}

/// Flags of `sstclim demo`.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Grid of the generated dataset.
    #[arg(long, default_value = "144x73", help_heading = JOB)]
    pub grid: GridSize,
    /// Working directory for the dataset, the results and the maps.
    #[arg(long, default_value = "sstclim-demo", help_heading = OUTPUT)]
    pub dir: PathBuf,
    /// Day of year to draw.
    #[arg(long, default_value_t = 197, help_heading = OUTPUT)]
    pub map_doy: u16,
}

/// Flags of `sstclim quicklook`.
#[derive(Args, Debug, Clone)]
pub struct QuicklookArgs {
    /// An output file of `sstclim run` (any layout).
    pub file: PathBuf,
    /// Target day of year to draw (default: the file's first).
    #[arg(long, value_name = "D", help_heading = JOB)]
    pub day: Option<u16>,
    /// Statistic to draw: mean, p90, ... (default: the file's only one, else its first
    /// percentile).
    #[arg(long, help_heading = JOB)]
    pub stat: Option<String>,
    /// The PNG to write (default: beside FILE, named for its statistic and day).
    #[arg(long, short, help_heading = OUTPUT)]
    pub output: Option<PathBuf>,
}

impl GenerateArgs {
    /// The generator's options these flags give.
    pub fn options(&self) -> GenerateOptions {
        GenerateOptions {
            output: self.output.clone(),
            grid: self.grid,
            years: self.years.0.clone(),
            doys: self.doys.0.clone(),
            storage: self.storage,
            dim_order: self.dim_order,
            time_dim: self.time_dim,
            naming: self.naming.clone(),
            land_fraction: self.land_fraction,
            missing_fraction: self.missing_fraction,
            all_missing_cells: self.all_missing_cells,
            ice_missing_fraction: self.ice_missing_fraction,
            quantum: self.quantum,
            seed: self.seed,
            jobs: self.jobs,
            overwrite: self.overwrite,
            worker: self.worker_index.zip(self.worker_count),
            compression: Compression { deflate: self.deflate, shuffle: self.shuffle, chunks: self.chunks },
            zlev_dim: self.zlev_dim,
            steps_per_file: self.steps_per_file,
            time_chunk: self.time_chunk,
        }
    }
}

impl QuicklookArgs {
    /// The quicklook's options these flags give.
    pub fn options(&self) -> QuicklookOptions {
        QuicklookOptions {
            file: self.file.clone(),
            day: self.day,
            stat: self.stat.clone(),
            output: self.output.clone(),
        }
    }
}

impl DemoArgs {
    /// The demo's options these flags give.
    pub fn options(&self) -> DemoOptions {
        DemoOptions { dir: self.dir.clone(), grid: self.grid, map_doy: self.map_doy }
    }
}

/// `--chunks AxB`: two chunk lengths of at least 1.
fn chunk_lengths(s: &str) -> Result<[usize; 2], String> {
    let (a, b) = s.split_once(['x', 'X']).ok_or_else(|| format!("'{s}': expected AxB, e.g. 361x720"))?;
    let n = |t: &str| t.trim().parse::<usize>().ok().filter(|&n| n >= 1);
    match (n(a), n(b)) {
        (Some(a), Some(b)) => Ok([a, b]),
        _ => Err(format!("'{s}': chunk lengths are whole numbers of at least 1")),
    }
}

/// `--tolerance`: an absolute difference, so finite and not negative (a negative one would fail
/// every comparison, equal values included).
fn tolerance(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        Ok(t) if t < 0.0 => Err(format!("'{s}' is negative: the tolerance is an absolute difference, not negative")),
        _ => Err(format!("'{s}' is not a finite number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn tolerance_is_finite_and_not_negative() {
        assert!(tolerance("-1").unwrap_err().contains("not negative"));
        assert!(tolerance("nan").is_err());
        assert!(tolerance("inf").is_err());
        assert_eq!(tolerance("1e-6").unwrap(), 1e-6);
        assert_eq!(tolerance("0").unwrap(), 0.0);
    }

    /// The flags' defaults are the generator's (the benchmarks and the demo start from
    /// `GenerateOptions::default()`).
    #[test]
    fn generate_defaults_are_the_generators() {
        let Command::Generate(args) = Cli::parse_from(["sstclim", "generate", "--output", "d"]).command else {
            unreachable!()
        };
        assert_eq!(args.options(), GenerateOptions { output: "d".into(), ..GenerateOptions::default() });
        let Command::Generate(args) =
            Cli::parse_from(["sstclim", "generate", "-o", "d", "--worker-index", "1", "--worker-count", "3"]).command
        else {
            unreachable!()
        };
        assert_eq!(args.options().worker, Some((1, 3)));
    }
}
