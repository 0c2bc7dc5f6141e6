//! The flags of `sstclim run` as clap declares them; [`super::validate`] turns them into a
//! [`crate::plan::JobPlan`]. Every flag sits under one of the help headings of
//! [`super::headings`], the common ones first; the first paragraph of a flag's doc comment
//! is its one-line short help (`-h`), the whole comment its long help (`--help`), and the
//! flags few jobs need are left out of the short help.

use std::path::PathBuf;

use clap::Args;

use super::args::{InputArgs, ResourceArgs};
use super::headings::{DIAGNOSTICS, INPUT, JOB, OUTPUT, PERFORMANCE};
use crate::engine::{Backend, RingPlace};
use crate::output::{ChunkShape, OutputLayout, OutputType, TargetUnits, WritePath};
use crate::plan::values::{ByteSize, WindowArgs};
use crate::plan::{GpuPool, ReadPath};
use crate::pool::PoolType;
use crate::stats::percentile::{Method, Percentile};

/// Flags of `sstclim run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub window: WindowArgs,

    /// Percentiles (comma separated, 0-100): 90 or 10,90.
    #[arg(long, value_delimiter = ',', default_value = "90", help_heading = JOB)]
    pub percentile: Vec<Percentile>,

    /// Percentile definition: Hyndman-Fan type 1-9 or numpy's name (5 = hazen).
    ///
    /// 5 = hazen = MATLAB prctile; 7 = linear = numpy's default; 8 = median_unbiased = xclim.
    #[arg(long, default_value = "5", help_heading = JOB)]
    pub method: Method,

    /// Cells with fewer valid samples in a window get the fill value.
    #[arg(long, default_value_t = 1, help_heading = JOB)]
    pub min_samples: usize,

    #[command(flatten)]
    pub inputs: InputArgs,

    /// How input files are read.
    ///
    /// `auto` reads contiguous uncompressed variables with `pread` from all threads (where the
    /// first file's variable is stored otherwise, every file goes through libnetcdf in forked
    /// reader processes; a file stored unlike the first, through libnetcdf in this process);
    /// `library` reads every file through libnetcdf in this process (the sequential
    /// reference); `forked` every file through libnetcdf in reader processes.
    #[arg(long, value_enum, default_value_t = ReadPath::Auto, help_heading = INPUT, hide_short_help = true)]
    pub read_path: ReadPath,

    /// Reader processes at a time for files read through libnetcdf (default: --threads).
    ///
    /// Each reads a batch of files and exits, so process limits (Slurm cgroups) hold.
    #[arg(long, help_heading = INPUT, hide_short_help = true)]
    pub readers: Option<usize>,

    /// Output directory (created if needed).
    #[arg(long, short, help_heading = OUTPUT)]
    pub output: PathBuf,

    /// per-doy (a file per statistic and day), stacked, or climatology.
    ///
    /// `stacked`: a file per statistic holding every target day along its time dimension;
    /// `climatology`: one climatology.nc with the mean and every percentile (what `sstclim
    /// events` reads).
    #[arg(long, value_enum, default_value_t = OutputLayout::PerDoy, help_heading = OUTPUT, hide_possible_values = true)]
    pub layout: OutputLayout,

    /// Replace existing output files.
    #[arg(long, help_heading = OUTPUT)]
    pub overwrite: bool,

    /// Deflate level 1-9 (default: uncompressed).
    ///
    /// Chunks are compressed with libdeflate on every write thread and stored with HDF5's
    /// direct chunk write.
    #[arg(long, help_heading = OUTPUT)]
    pub deflate: Option<u8>,

    /// Stored type of the statistics: f64 (exact), f32, or i16 (packed).
    ///
    /// f32 rounds to float32; i16 packs with --output-scale S and --output-offset O (CF
    /// scale_factor/add_offset: value = O + S x stored, stored within -32767..32767, -32768 the
    /// fill value).
    #[arg(long, value_enum, default_value_t = OutputType::F64, help_heading = OUTPUT, hide_possible_values = true)]
    pub output_type: OutputType,

    /// Scale of --output-type i16 packing (the resolution: values are within S/2).
    #[arg(long, value_name = "S", help_heading = OUTPUT, hide_short_help = true)]
    pub output_scale: Option<f64>,

    /// Offset of --output-type i16 packing (default 0).
    #[arg(long, value_name = "O", allow_negative_numbers = true, help_heading = OUTPUT, hide_short_help = true)]
    pub output_offset: Option<f64>,

    /// HDF5's shuffle filter before deflate (default: on with --deflate).
    ///
    /// `--shuffle false` turns it off.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", help_heading = OUTPUT, hide_short_help = true)]
    pub shuffle: Option<bool>,

    /// Chunk shape of compressed outputs, NLONxNLAT (one day each).
    ///
    /// Default: a whole day's field up to 4 MiB, else even bands of rows of about 4 MiB.
    #[arg(long, value_name = "NLONxNLAT", help_heading = OUTPUT, hide_short_help = true)]
    pub chunks: Option<ChunkShape>,

    /// `degC`: kelvin input written in degrees Celsius (value - 273.15).
    ///
    /// Input already in Celsius is kept as is; other units are refused.
    #[arg(long, value_enum, help_heading = OUTPUT, hide_short_help = true)]
    pub units: Option<TargetUnits>,

    /// _FillValue of the outputs, NaN allowed [default: 9.96921e36].
    ///
    /// The default is NetCDF's default fill value of float (9.969209968386869e36).
    #[arg(long, allow_negative_numbers = true, help_heading = OUTPUT)]
    pub fill_value: Option<f64>,

    /// Draw PNG maps of every statistic of target day D (into the output directory).
    #[arg(long, value_name = "D", help_heading = OUTPUT)]
    pub quicklook: Option<u16>,

    /// How output files are written.
    ///
    /// `auto` writes uncompressed outputs with `pwrite` from --write-threads threads (their
    /// storage allocated at creation, located through HDF5, never filled by it); compressed
    /// ones (--deflate) and any file stored otherwise through libnetcdf. `library` writes every
    /// file through libnetcdf, one at a time (the reference).
    #[arg(long, value_enum, default_value_t = WritePath::Auto, help_heading = OUTPUT, hide_short_help = true)]
    pub write_path: WritePath,

    /// Threads writing output files directly (default: the cores, at most 8), and compressing
    /// chunks with --deflate (default: every core).
    #[arg(long, help_heading = OUTPUT, hide_short_help = true)]
    pub write_threads: Option<usize>,

    /// Engine: auto (a GPU if usable, else cpu), cpu, cuda, hip or reference.
    ///
    /// `cpu` is fast and exact; `reference` is the naive oracle the others are checked
    /// against (slow). Asking for `cuda` or `hip` by name makes a missing device an error.
    #[arg(long, value_enum, default_value_t = Backend::Auto, help_heading = PERFORMANCE, hide_possible_values = true)]
    pub backend: Backend,

    /// Pool type: f64 (exact), f32, or i16 (exact for int16-packed input).
    ///
    /// f32 halves the memory and bus traffic with values rounded to float32 (a finite value
    /// beyond its range is an error naming it). Default: i16 for int16-packed input (exact:
    /// the stored integers), f32 on a GPU engine when the input is stored as floats, else f64.
    #[arg(long, value_enum, help_heading = PERFORMANCE, hide_possible_values = true)]
    pub pool: Option<PoolType>,

    #[command(flatten)]
    pub resources: ResourceArgs,

    /// Pack float input into the int16 pool (lossy, opt-in), with step SCALE.
    ///
    /// A value v is stored as round((v - OFFSET) / SCALE), so results are within SCALE/2 of
    /// the float64 pool's, at a quarter of its bytes. Implies `--pool i16`; values outside
    /// OFFSET ± 32766·SCALE are an error. For int16-packed input the int16 pool is exact
    /// without it.
    #[arg(long, value_name = "SCALE", help_heading = PERFORMANCE, hide_short_help = true)]
    pub pack_scale: Option<f64>,

    /// The value stored as 0 by `--pack-scale`.
    #[arg(
        long,
        value_name = "OFFSET",
        default_value_t = 0.0,
        allow_negative_numbers = true,
        help_heading = PERFORMANCE,
        hide_short_help = true
    )]
    pub pack_offset: f64,

    /// GPU to use, an ordinal among the visible devices (default 0).
    ///
    /// Under MPI each rank takes its node-local rank's device.
    #[arg(long, help_heading = PERFORMANCE, hide_short_help = true)]
    pub device: Option<usize>,

    /// Device memory budget of GPU engines (default: 90% of what is free).
    ///
    /// Beyond it the engine works in batches of days and chunks of cells.
    #[arg(long, help_heading = PERFORMANCE, hide_short_help = true)]
    pub max_device_mem: Option<ByteSize>,

    /// Where the GPU kernel stages the window's groups.
    ///
    /// Shared memory (LDS) when a block fits, else device memory.
    #[arg(long, value_enum, default_value_t = RingPlace::Auto, help_heading = PERFORMANCE, hide_short_help = true)]
    pub gpu_ring: RingPlace,

    /// Threads per GPU block (default: chosen for occupancy).
    #[arg(long, hide = true, help_heading = PERFORMANCE)]
    pub gpu_block: Option<usize>,

    /// Where a GPU rank keeps its pool.
    ///
    /// `device` sends each decoded file from a small pinned staging row straight into device
    /// memory (no host pool to commit, pin and unpin); `host` holds the whole tile in pinned
    /// host memory and copies each segment in (the reference path; also used with --verify,
    /// --pack-scale, forked readers, or when the pool does not fit in device memory).
    #[arg(long, value_enum, default_value_t = GpuPool::Device, help_heading = PERFORMANCE, hide_short_help = true)]
    pub gpu_pool: GpuPool,

    /// Start every percentile search at the nearer end instead of the previous day's value
    /// (for measuring the kernel).
    #[arg(long, hide = true, help_heading = PERFORMANCE)]
    pub gpu_no_hints: bool,

    /// Segments of target days in the overlapped pipeline (default: chosen per job).
    ///
    /// Segment i is computed while segment i+1's files are read and segment i-1's results are
    /// written. 1 runs the stages one after another (the reference). Default: chosen per job
    /// from the rates earlier runs measured on this machine (see --rates): of 1 to 16, the
    /// fastest a model of the pipeline predicts whose result buffers fit --max-mem (and, for a
    /// device-resident pool, --max-device-mem); without measured rates up to 16 on GPUs (at
    /// least 4 target days each) and 2 on the CPU, by the number of target days, raised where
    /// the memory limits need more.
    #[arg(long, help_heading = PERFORMANCE, hide_short_help = true)]
    pub segments: Option<usize>,

    /// The file of measured pipeline rates that chooses --segments (`none`: off).
    ///
    /// Read, compute and write speeds of this machine, per engine, device, pool, threads and
    /// read path; every successful run adds its measurements (not with --verify). Default:
    /// $SSTCLIM_RATES, else $XDG_CACHE_HOME/sstclim/rates.json, else
    /// ~/.cache/sstclim/rates.json. `none` neither reads nor records rates (so does
    /// SSTCLIM_RATES=none).
    #[arg(long, value_name = "FILE", help_heading = PERFORMANCE, hide_short_help = true)]
    pub rates: Option<String>,

    /// Check every tile bitwise against the reference engine.
    ///
    /// Runs the reference engine on every tile too and fails unless the results are bitwise
    /// equal.
    #[arg(long, help_heading = DIAGNOSTICS)]
    pub verify: bool,

    /// Write the run report as JSON (stages, bytes, memory, segment model).
    #[arg(long, value_name = "FILE", help_heading = DIAGNOSTICS)]
    pub timing_json: Option<PathBuf>,

    /// Write the timeline of every stage of every batch as JSON.
    ///
    /// Stage, batch, thread, start, end, bytes; under MPI each rank writes FILE with `.rankN`
    /// before the extension. `scripts/trace-gantt.py` draws it.
    #[arg(long, value_name = "FILE", help_heading = DIAGNOSTICS, hide_short_help = true)]
    pub trace_json: Option<PathBuf>,
}
