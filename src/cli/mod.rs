//! Command-line syntax: the subcommands, their flags, and the small value types flags parse
//! into. Semantic checks that involve several flags happen later, in [`crate::plan`].

use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::calendar::Calendar;
use crate::engine::{Backend, RingPlace};
use crate::output::{OutputLayout, WritePath};
use crate::percentile::{Method, Percentile};
use crate::pipeline::ReadPath;
use crate::pool::PoolType;

/// Day-of-year climatologies (mean and exact percentile thresholds) of daily gridded NetCDF data.
#[derive(Parser, Debug)]
#[command(name = "sstclim", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// No progress bars and only warnings in the log (RUST_LOG overrides the log level).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compute the climatology: mean and percentiles for every target day and cell.
    Run(RunArgs),
    /// Write a synthetic OSTIA-like daily dataset (one NetCDF file per day).
    Generate(GenerateArgs),
    /// Compare two result sets (directories or files); exit 1 past --tolerance.
    Compare(CompareArgs),
    /// Generate a small dataset, run the job, check it against the reference engine and draw maps.
    Demo(DemoArgs),
    /// Time an engine on a synthetic pool in memory beside the device's copy bandwidths, and
    /// check it against the CPU engine.
    BenchKernel(crate::bench::kernel::BenchKernelArgs),
    /// Time reading every input file of a job whole with pread from all threads (no library,
    /// no decoding): the floor the pipeline is measured against.
    BenchRead(crate::bench::read::BenchReadArgs),
    /// Time writing a job's outputs through libnetcdf and directly (pwrite) on synthetic
    /// results.
    #[command(hide = true)]
    BenchWrite(crate::bench::write::BenchWriteArgs),
    /// Time locating the data variable in every input file: HDF5 metadata parsed here, or
    /// queried through libhdf5 (in this process or in forked processes).
    #[command(hide = true)]
    BenchLocate(crate::bench::locate::BenchLocateArgs),
    /// Time our GPU kernel against the source documents' GPU designs on the same synthetic
    /// pool, with their errors against our exact result (CUDA).
    BenchBaselines(crate::bench::baselines::BenchBaselinesArgs),
}

/// A year or an inclusive range of years: `1991-2020`, `2005`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YearRange(pub RangeInclusive<i32>);

impl FromStr for YearRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("'{s}' is not a year or a year range like 1991-2020");
        let (a, b) = s.split_once('-').unwrap_or((s, s));
        let (a, b): (i32, i32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
        if !(1..=9999).contains(&a) || !(1..=9999).contains(&b) || a > b {
            return Err(bad());
        }
        Ok(YearRange(a..=b))
    }
}

/// Days of year 1..=366 as ranges and single days: `152-243`, `1-59,61-366`, `200`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoyList(pub Vec<u16>);

impl FromStr for DoyList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |part: &str| format!("'{part}' is not a day of year (1-366) or a range like 152-243");
        let mut days = Vec::new();
        for part in s.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (u16, u16) =
                (a.trim().parse().map_err(|_| bad(part))?, b.trim().parse().map_err(|_| bad(part))?);
            if !(1..=366).contains(&a) || !(1..=366).contains(&b) || a > b {
                return Err(bad(part));
            }
            days.extend(a..=b);
        }
        days.sort_unstable();
        days.dedup();
        Ok(DoyList(days))
    }
}

/// A grid size `NLONxNLAT`: `1440x721`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSize {
    pub nlon: usize,
    pub nlat: usize,
}

impl FromStr for GridSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("'{s}' is not a grid size like 1440x721 (longitudes x latitudes)");
        let (a, b) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let (nlon, nlat): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if nlon < 1 || nlat < 2 || nlon > 100_000 || nlat > 100_000 {
            return Err(bad());
        }
        Ok(GridSize { nlon, nlat })
    }
}

/// A byte count with an optional binary unit: `8G`, `512M`, `1.5GiB`, `100000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num.parse().map_err(|_| format!("'{s}' is not a size like 8G or 512M"))?;
        let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "B" => 1,
            "K" | "KB" | "KIB" => 1 << 10,
            "M" | "MB" | "MIB" => 1 << 20,
            "G" | "GB" | "GIB" => 1 << 30,
            "T" | "TB" | "TIB" => 1 << 40,
            _ => return Err(format!("'{s}' has an unknown unit (use K, M, G or T)")),
        };
        let bytes = value * scale as f64;
        // `as u64` saturates: a size past 16 EiB would silently become 16 EiB
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(format!("'{s}' is larger than any memory (at most 16 EiB)"));
        }
        Ok(ByteSize(bytes as u64))
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

/// Flags of `sstclim run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Input files: a path template with {year}, {doy}, {month}, {day} (e.g.
    /// 'data/sst_{year}_{doy}.nc'), or a directory whose naming pattern is detected.
    #[arg(long, short)]
    pub input: String,

    /// Output directory (created if needed).
    #[arg(long, short)]
    pub output: PathBuf,

    /// Input variable (default: analysed_sst, sst, or the only gridded variable).
    #[arg(long)]
    pub var: Option<String>,

    /// Climatology years: 1991-2020.
    #[arg(long)]
    pub years: YearRange,

    /// Target days of year: 152-243, or a list like 1-59,61-366.
    #[arg(long, default_value = "1-366")]
    pub doys: DoyList,

    /// Days on each side of the target day: the window is 2h+1 days.
    #[arg(long, default_value_t = 5)]
    pub half_window: u16,

    /// Percentiles to compute (comma separated, 0-100): 90 or 10,90.
    #[arg(long, value_delimiter = ',', default_value = "90")]
    pub percentile: Vec<Percentile>,

    /// Percentile definition: Hyndman-Fan type 1-9 or its numpy name
    /// (5 = hazen = MATLAB prctile; 7 = linear = numpy default; 8 = median_unbiased = xclim).
    #[arg(long, default_value = "5")]
    pub method: Method,

    /// Which date a target day names in each year.
    #[arg(long, value_enum, default_value_t = Calendar::Ordinal)]
    pub calendar: Calendar,

    /// One file per statistic and day, or one file per statistic with a time dimension.
    #[arg(long, value_enum, default_value_t = OutputLayout::PerDoy)]
    pub layout: OutputLayout,

    /// Deflate level 1-9 for the outputs (default: uncompressed).
    #[arg(long)]
    pub deflate: Option<u8>,

    /// Skip missing input files instead of failing (the report counts them).
    #[arg(long)]
    pub allow_missing: bool,

    /// Cells with fewer valid samples in a window get the fill value.
    #[arg(long, default_value_t = 1)]
    pub min_samples: usize,

    /// Engine: auto (a GPU if one is usable, else cpu), cpu (fast, exact), cuda, hip, or
    /// reference (naive oracle, slow).
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,

    /// Sample pool element type: f64 (exact) or f32 (half the memory and bus traffic; values
    /// rounded to float32). Default: f32 on a GPU engine when the input is stored as floats,
    /// else f64.
    #[arg(long, value_enum)]
    pub pool: Option<PoolType>,

    /// Pack float input into the int16 pool (lossy, opt-in): a value v is stored as
    /// round((v - OFFSET) / SCALE), so results are within SCALE/2 of the float64 pool's, at a
    /// quarter of its bytes. Implies `--pool i16`; values outside OFFSET ± 32766·SCALE are an
    /// error. For int16-packed input the int16 pool is exact without it.
    #[arg(long, value_name = "SCALE")]
    pub pack_scale: Option<f64>,

    /// The value stored as 0 by `--pack-scale` (default 0).
    #[arg(long, value_name = "OFFSET", default_value_t = 0.0, allow_negative_numbers = true)]
    pub pack_offset: f64,

    /// GPU to use, an ordinal among the visible devices (default 0; under MPI each rank takes
    /// its node-local rank's device).
    #[arg(long)]
    pub device: Option<usize>,

    /// Device memory budget of GPU engines (default: 90% of what is free); beyond it the
    /// engine works in batches of days and chunks of cells.
    #[arg(long)]
    pub max_device_mem: Option<ByteSize>,

    /// Where the GPU kernel stages the window's groups: shared memory (LDS) when a block fits,
    /// else device memory.
    #[arg(long, value_enum, default_value_t = RingPlace::Auto)]
    pub gpu_ring: RingPlace,

    /// Threads per GPU block (default: chosen for occupancy).
    #[arg(long, hide = true)]
    pub gpu_block: Option<usize>,

    /// Where a GPU rank keeps its pool: `device` sends each decoded file from a small pinned
    /// staging row straight into device memory (no host pool to commit, pin and unpin);
    /// `host` holds the whole tile in pinned host memory and copies each segment in (the
    /// reference path; also used with --verify, --pack-scale, forked readers, or when the
    /// pool does not fit in device memory).
    #[arg(long, value_enum, default_value_t = GpuPool::Device)]
    pub gpu_pool: GpuPool,

    /// Start every percentile search at the nearer end instead of the previous day's value
    /// (for measuring the kernel).
    #[arg(long, hide = true)]
    pub gpu_no_hints: bool,

    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,

    /// Host memory budget for pools and results (default: half the available memory).
    #[arg(long, visible_alias = "max-host-mem")]
    pub max_mem: Option<ByteSize>,

    /// Also run the reference engine on every tile and fail unless results are bitwise equal.
    #[arg(long)]
    pub verify: bool,

    /// Replace existing output files.
    #[arg(long)]
    pub overwrite: bool,

    /// _FillValue of the outputs (NaN allowed).
    #[arg(long, default_value_t = 9.969_209_968_386_869e36, allow_negative_numbers = true)]
    pub fill_value: f64,

    /// Write the run report (stage times, bytes, peak memory) as JSON.
    #[arg(long)]
    pub timing_json: Option<PathBuf>,

    /// Write the timeline of every stage of every batch (stage, batch, thread, start, end,
    /// bytes) as JSON; under MPI each rank writes FILE with `.rankN` before the extension.
    /// `scripts/trace-gantt.py` draws it.
    #[arg(long, value_name = "FILE")]
    pub trace_json: Option<PathBuf>,

    /// How to read input files: `auto` reads contiguous uncompressed variables with `pread`
    /// from all threads (where the first file's variable is stored otherwise, every file goes
    /// through libnetcdf in forked reader processes; a file stored unlike the first, through
    /// libnetcdf in this process); `library` reads every file through libnetcdf in this process
    /// (the sequential reference); `forked` every file through libnetcdf in reader processes.
    #[arg(long, value_enum, default_value_t = ReadPath::Auto)]
    pub read_path: ReadPath,

    /// How output files are written: `auto` writes uncompressed outputs with `pwrite` from
    /// --write-threads threads (their storage allocated at creation, located through HDF5,
    /// never filled by it); compressed ones (--deflate) and any file stored otherwise through
    /// libnetcdf. `library` writes every file through libnetcdf, one at a time (the reference).
    #[arg(long, value_enum, default_value_t = WritePath::Auto)]
    pub write_path: WritePath,

    /// Threads writing output files directly (default: the cores, at most 8).
    #[arg(long)]
    pub write_threads: Option<usize>,

    /// Reader processes at a time for files read through libnetcdf (default: --threads).
    /// Each reads a batch of files and exits, so process limits (Slurm cgroups) hold.
    #[arg(long)]
    pub readers: Option<usize>,

    /// Segments of target days in the overlapped pipeline: segment i is computed while
    /// segment i+1's files are read and segment i-1's results are written. 1 runs the stages
    /// one after another (the reference). Default: chosen per job from the rates earlier runs
    /// measured on this machine (see --rates): of 1 to 16, the fastest a model of the pipeline
    /// predicts whose result buffers fit --max-mem (and, for a device-resident pool,
    /// --max-device-mem); without measured rates up to 16 on GPUs (at least 4 target days
    /// each) and 2 on the CPU, by the number of target days, raised where the memory limits
    /// need more.
    #[arg(long)]
    pub segments: Option<usize>,

    /// The file of measured pipeline rates (read, compute and write speeds of this machine,
    /// per engine, device, pool, threads and read path) that chooses --segments; every
    /// successful run adds its measurements (not with --verify). Default: $SSTCLIM_RATES, else
    /// $XDG_CACHE_HOME/sstclim/rates.json, else ~/.cache/sstclim/rates.json. `none` neither
    /// reads nor records rates (so does SSTCLIM_RATES=none).
    #[arg(long, value_name = "FILE")]
    pub rates: Option<String>,
}

/// Where a GPU rank keeps its pool (`--gpu-pool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuPool {
    /// In device memory, filled through small pinned staging rows.
    Device,
    /// In pinned host memory, copied to the device segment by segment.
    Host,
}

/// Storage of generated files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GenStorage {
    /// float64 degrees Celsius, NaN for missing (like the MATLAB-written reference files).
    F64,
    /// int16 kelvin with scale_factor 0.01 and add_offset 273.15 (like OSTIA).
    I16,
}

/// Dimension order of generated files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DimOrder {
    /// (lat, lon): longitude varies fastest (OSTIA, CF).
    LatLon,
    /// (lon, lat): latitude varies fastest (the MATLAB-written reference files).
    LonLat,
}

/// Flags of `sstclim generate`.
#[derive(Args, Debug, Clone)]
pub struct GenerateArgs {
    /// Output directory.
    #[arg(long, short)]
    pub output: PathBuf,

    /// Grid size, longitudes x latitudes.
    #[arg(long, default_value = "1440x721")]
    pub grid: GridSize,

    /// Years to write.
    #[arg(long, default_value = "1991-2020")]
    pub years: YearRange,

    /// Days of year (ordinal) to write in each year.
    #[arg(long, default_value = "147-248")]
    pub doys: DoyList,

    /// Value storage.
    #[arg(long, value_enum, default_value_t = GenStorage::F64)]
    pub storage: GenStorage,

    /// Dimension order of the data variable.
    #[arg(long, value_enum, default_value_t = DimOrder::LatLon)]
    pub dim_order: DimOrder,

    /// Add a leading time dimension of length 1 (as OSTIA files have).
    #[arg(long)]
    pub time_dim: bool,

    /// File name template inside the output directory.
    #[arg(long, default_value = "sst_{year}_{doy}.nc")]
    pub naming: String,

    /// Fraction of cells that are land (missing in every file).
    #[arg(long, default_value_t = 0.3)]
    pub land_fraction: f64,

    /// Probability that an ocean value is missing (clouds, gaps).
    #[arg(long, default_value_t = 0.02)]
    pub missing_fraction: f64,

    /// Ocean cells that are missing in every file.
    #[arg(long, default_value_t = 16)]
    pub all_missing_cells: usize,

    /// Probability that a value is missing poleward of 70 degrees (sea ice): gives windows
    /// with only a handful of valid samples.
    #[arg(long, default_value_t = 0.97)]
    pub ice_missing_fraction: f64,

    /// Round float64 values to this step (0.01 mimics data converted from OSTIA; 0 = no rounding).
    #[arg(long, default_value_t = 0.01)]
    pub quantum: f64,

    /// Seed of all random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Writer processes (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,

    /// Replace an existing dataset in the output directory.
    #[arg(long)]
    pub overwrite: bool,

    /// Internal: this process writes files index % count == index.
    #[arg(long, hide = true, requires = "worker_count")]
    pub worker_index: Option<usize>,

    /// Internal: number of writer processes.
    #[arg(long, hide = true)]
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
    #[arg(long, default_value_t = 0.0, value_parser = tolerance, allow_hyphen_values = true)]
    pub tolerance: f64,
    /// Also write the comparison as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Flags of `sstclim demo`.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Working directory for the dataset, the results and the maps.
    #[arg(long, default_value = "sstclim-demo")]
    pub dir: PathBuf,
    /// Grid of the generated dataset.
    #[arg(long, default_value = "144x73")]
    pub grid: GridSize,
    /// Day of year to draw.
    #[arg(long, default_value_t = 197)]
    pub map_doy: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_parsers() {
        assert_eq!("1991-2020".parse::<YearRange>().unwrap().0, 1991..=2020);
        assert_eq!("2005".parse::<YearRange>().unwrap().0, 2005..=2005);
        assert!("2020-1991".parse::<YearRange>().is_err());
        assert_eq!("152-154,1,153".parse::<DoyList>().unwrap().0, [1, 152, 153, 154]);
        assert!("0-5".parse::<DoyList>().is_err());
        assert!("360-367".parse::<DoyList>().is_err());
        assert_eq!("1440x721".parse::<GridSize>().unwrap(), GridSize { nlon: 1440, nlat: 721 });
        assert!("1440".parse::<GridSize>().is_err());
        assert_eq!("8G".parse::<ByteSize>().unwrap().0, 8 << 30);
        assert_eq!("1.5GiB".parse::<ByteSize>().unwrap().0, 3 << 29);
        assert_eq!("4096".parse::<ByteSize>().unwrap().0, 4096);
        assert!("8Q".parse::<ByteSize>().is_err());
        let e = "99999999999999999999G".parse::<ByteSize>().unwrap_err();
        assert!(e.contains("larger than any memory"), "{e}");
        assert!("16384P".parse::<ByteSize>().is_err());
        assert!("17179869184G".parse::<ByteSize>().is_err());
        assert_eq!("1T".parse::<ByteSize>().unwrap().0, 1 << 40);
        assert!(tolerance("-1").unwrap_err().contains("not negative"));
        assert!(tolerance("nan").is_err());
        assert!(tolerance("inf").is_err());
        assert_eq!(tolerance("1e-6").unwrap(), 1e-6);
        assert_eq!(tolerance("0").unwrap(), 0.0);
    }

    #[test]
    fn command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
