//! The flags of `sstclim run` as clap declares them; [`super::validate`] turns them into a
//! [`crate::plan::JobPlan`].

use std::path::PathBuf;

use clap::Args;

use crate::engine::{Backend, RingPlace};
use crate::output::{ChunkShape, OutputLayout, OutputType, TargetUnits, WritePath};
use crate::percentile::{Method, Percentile};
use crate::plan::values::{ByteSize, WindowArgs};
use crate::plan::{GpuPool, ReadPath, DEFAULT_FILL_VALUE};
use crate::pool::PoolType;

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

    #[command(flatten)]
    pub window: WindowArgs,

    /// Percentiles to compute (comma separated, 0-100): 90 or 10,90.
    #[arg(long, value_delimiter = ',', default_value = "90")]
    pub percentile: Vec<Percentile>,

    /// Percentile definition: Hyndman-Fan type 1-9 or its numpy name
    /// (5 = hazen = MATLAB prctile; 7 = linear = numpy default; 8 = median_unbiased = xclim).
    #[arg(long, default_value = "5")]
    pub method: Method,

    /// One file per statistic and day, or one file per statistic with a time dimension.
    #[arg(long, value_enum, default_value_t = OutputLayout::PerDoy)]
    pub layout: OutputLayout,

    /// Deflate level 1-9 for the outputs (default: uncompressed). Chunks are compressed with
    /// libdeflate on every write thread and stored with HDF5's direct chunk write.
    #[arg(long)]
    pub deflate: Option<u8>,

    /// Stored type of the statistics: f64 (exact), f32 (rounded to float32), or i16 packed
    /// with --output-scale S and --output-offset O (CF scale_factor/add_offset: value = O + S x
    /// stored, stored within -32767..32767, -32768 the fill value).
    #[arg(long, value_enum, default_value_t = OutputType::F64, help_heading = "Output")]
    pub output_type: OutputType,

    /// Scale of --output-type i16 packing (the resolution: values are within S/2).
    #[arg(long, value_name = "S", help_heading = "Output")]
    pub output_scale: Option<f64>,

    /// Offset of --output-type i16 packing (default 0).
    #[arg(long, value_name = "O", allow_negative_numbers = true, help_heading = "Output")]
    pub output_offset: Option<f64>,

    /// HDF5's shuffle filter before deflate (default: on with --deflate; `--shuffle false`
    /// turns it off).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", help_heading = "Output")]
    pub shuffle: Option<bool>,

    /// Chunk shape of compressed outputs, NLONxNLAT (one day each; default: a whole day's
    /// field up to 4 MiB, else even bands of rows of about 4 MiB).
    #[arg(long, value_name = "NLONxNLAT", help_heading = "Output")]
    pub chunks: Option<ChunkShape>,

    /// Convert the statistics' units: `degC` turns kelvin input into degrees Celsius
    /// (value - 273.15; input already in Celsius is kept as is).
    #[arg(long, value_enum, help_heading = "Output")]
    pub units: Option<TargetUnits>,

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
    #[arg(long, default_value_t = DEFAULT_FILL_VALUE, allow_negative_numbers = true)]
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
