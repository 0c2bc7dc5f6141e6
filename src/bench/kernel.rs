//! `sstclim bench-kernel`: time an engine on a synthetic full-size pool held in memory (no
//! files), beside the device's own copy ceilings measured in the same run, and check the
//! results against the CPU engine on the same pool (and, optionally, the float32 pool's error
//! against a float64 pool). Writes a JSON record for bench-results/.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::engine::gpu::BandwidthProbe;
use crate::engine::{Backend, CpuEngine, Engine, GpuOptions, RingPlace};
use crate::error::Error;
use crate::output::utc_timestamp;
use crate::plan::values::{ByteSize, GridSize, WindowArgs};
use crate::pool::{Pool, PoolType, Sample};
use crate::stats::percentile::{Method, Percentile};
use crate::stats::{StatSpec, TileResult};
use crate::tools::generate::GenerateOptions;
use crate::window::WindowPlan;

/// The synthetic job the benchmarks time: a pool generated in memory for `grid` cells and the
/// windows of the window flags (by default the reference job's: days 152-243 of 1991-2020), on
/// device `device`.
#[derive(Args, Debug, Clone)]
#[command(
    mut_arg("years", |a| a.required(false).default_value("1991-2020")),
    mut_arg("doys", |a| a.default_value("152-243"))
)]
pub struct SyntheticJob {
    /// Device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    #[arg(long, default_value = "1440x721")]
    pub grid: GridSize,
    #[command(flatten)]
    pub window: WindowArgs,
}

impl SyntheticJob {
    /// The job's window plan (every date present).
    pub fn plan(&self) -> WindowPlan {
        WindowPlan::build(&self.window.spec(), |_| true)
    }

    pub fn n_cells(&self) -> usize {
        self.grid.nlon * self.grid.nlat
    }

    /// The `generate` settings whose field the pool holds.
    pub fn generate_options(&self) -> GenerateOptions {
        GenerateOptions { output: "/nonexistent".into(), grid: self.grid, ..GenerateOptions::default() }
    }
}

/// Flags of `sstclim bench-kernel`.
#[derive(Args, Debug, Clone)]
pub struct BenchKernelArgs {
    /// Engine to time.
    #[arg(long, value_enum, default_value_t = Backend::Cuda)]
    pub backend: Backend,
    #[command(flatten)]
    pub job: SyntheticJob,
    #[arg(long, value_delimiter = ',', default_value = "90")]
    pub percentile: Vec<Percentile>,
    #[arg(long, default_value = "5")]
    pub method: Method,
    /// Pool type (`i16`: the values packed as OSTIA packs SST, hundredths of a degree, and
    /// decoded through a table)
    #[arg(long, value_enum, default_value_t = PoolType::F32)]
    pub pool: PoolType,
    /// Timed repetitions after one warm-up (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Check every value against the CPU engine on the same pool (bitwise).
    #[arg(long)]
    pub verify: bool,
    /// Also compute the CPU engine on a float64 pool and report the pool's error against it.
    #[arg(long)]
    pub f64_error: bool,
    /// Bytes for the copy-bandwidth probes (default: the pool's size, at most 8 GB).
    #[arg(long)]
    pub probe_bytes: Option<ByteSize>,
    #[arg(long, value_enum, default_value_t = RingPlace::Auto)]
    pub gpu_ring: RingPlace,
    #[arg(long)]
    pub gpu_block: Option<usize>,
    #[arg(long)]
    pub gpu_no_hints: bool,
    #[arg(long)]
    pub max_device_mem: Option<ByteSize>,
    /// Compute the mean only (no percentiles): isolates the staging cost.
    #[arg(long)]
    pub mean_only: bool,
    /// Write the record here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Error of one statistic against a reference.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ErrorStats {
    pub stat: String,
    pub values: usize,
    pub max_abs: f64,
    pub rms: f64,
    /// Cells valid in one result and not the other.
    pub validity_mismatches: usize,
}

/// The benchmark record.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRecord {
    pub date: String,
    pub command: String,
    pub device: String,
    pub host_threads: usize,
    pub grid: [usize; 2],
    pub years: usize,
    pub target_days: usize,
    pub pool: String,
    pub pool_bytes: u64,
    pub fill_seconds: f64,
    pub first_call_seconds: f64,
    /// Device engines: the kernel's device time per repeat; host engines (no kernel): the wall
    /// time of each repeat's whole `compute`.
    pub kernel_ms: Vec<f64>,
    pub kernel_ms_median: f64,
    pub h2d_seconds_median: f64,
    pub h2d_gb_per_s: f64,
    pub d2h_seconds_median: f64,
    pub pin_seconds_median: f64,
    pub launches: usize,
    pub probe: Option<BandwidthProbe>,
    /// Time to read the pool once at the device-to-device copy's bandwidth (bytes read plus
    /// written per second).
    pub read_floor_ms: Option<f64>,
    pub kernel_over_floor: Option<f64>,
    pub h2d_over_pinned: Option<f64>,
    pub verified_values: Option<usize>,
    pub differences: Option<usize>,
    pub cpu_seconds: Option<f64>,
    pub f64_error: Vec<ErrorStats>,
}

/// The median (upper middle for an even count) of `v`, 0 when empty.
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        0.0
    } else {
        s[s.len() / 2]
    }
}

/// Run the benchmark.
pub fn bench_kernel(args: &BenchKernelArgs) -> Result<BenchRecord, Error> {
    match args.pool {
        PoolType::F32 => bench::<f32>(args),
        PoolType::F64 => bench::<f64>(args),
        PoolType::I16 => bench::<i16>(args),
    }
}

fn bench<T: Sample>(args: &BenchKernelArgs) -> Result<BenchRecord, Error> {
    let plan = args.job.plan();
    let percentiles = if args.mean_only { Vec::new() } else { args.percentile.clone() };
    let stats = StatSpec { percentiles, method: args.method, min_samples: 1 };
    let n_cells = args.job.n_cells();
    let gen = args.job.generate_options();
    let (pool, fill_seconds) = filled_pool::<T>(&gen, &plan, n_cells)?;
    let engine = args.backend.engine(args.job.device, &gpu_options(args))?;
    let mut out = TileResult::new(stats.n_stats(), plan.targets.len(), n_cells);
    let started = Instant::now();
    let first = engine.compute(T::wrap(pool.view()), &plan, &stats, &mut out)?;
    let first_call_seconds = started.elapsed().as_secs_f64();
    eprintln!("bench: first call {first_call_seconds:.2} s (kernel {:.3} ms)", first.kernel.as_secs_f64() * 1e3);
    let (mut kernel, mut h2d, mut d2h, mut pin) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut launches = first.launches;
    for i in 0..args.repeats {
        // poison the results so every repeat must write every value
        out.values.fill(-12345.0);
        out.counts.fill(u32::MAX);
        let started = Instant::now();
        let mut t = engine.compute(T::wrap(pool.view()), &plan, &stats, &mut out)?;
        if t.kernel.is_zero() {
            // a host engine: its compute is the kernel
            t.kernel = started.elapsed();
        }
        eprintln!(
            "bench: repeat {}: kernel {:.3} ms, h2d {:.3} s",
            i + 1,
            t.kernel.as_secs_f64() * 1e3,
            t.h2d.as_secs_f64()
        );
        kernel.push(t.kernel.as_secs_f64() * 1e3);
        h2d.push(t.h2d.as_secs_f64());
        d2h.push(t.d2h.as_secs_f64());
        pin.push(t.pin.as_secs_f64());
        launches = t.launches;
    }
    let pool_bytes = pool.bytes() as u64;
    let probe_bytes = args.probe_bytes.map_or(pool_bytes.min(8_000_000_000), |b| b.0) as usize;
    let probe = engine.device().and_then(|d| d.probe_bandwidth(probe_bytes, 5)).transpose()?;
    let kernel_ms_median = median(&kernel);
    let h2d_median = median(&h2d);
    let read_floor_ms = probe.as_ref().map(|p| pool_bytes as f64 / (p.d2d_gb_per_s * 1e9) * 1e3);
    let mut record = BenchRecord {
        date: utc_timestamp(),
        command: std::iter::once("sstclim".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" "),
        device: engine.describe(),
        host_threads: rayon::current_num_threads(),
        grid: [args.job.grid.nlon, args.job.grid.nlat],
        years: args.job.window.years.0.clone().count(),
        target_days: plan.targets.len(),
        pool: T::NAME.into(),
        pool_bytes,
        fill_seconds,
        first_call_seconds,
        kernel_ms: kernel,
        kernel_ms_median,
        h2d_seconds_median: h2d_median,
        h2d_gb_per_s: if h2d_median > 0.0 { pool_bytes as f64 / h2d_median / 1e9 } else { 0.0 },
        d2h_seconds_median: median(&d2h),
        pin_seconds_median: median(&pin),
        launches,
        kernel_over_floor: read_floor_ms.map(|f| kernel_ms_median / f),
        h2d_over_pinned: probe.as_ref().map(|p| h2d_median / (pool_bytes as f64 / (p.h2d_gb_per_s * 1e9))),
        read_floor_ms,
        probe,
        verified_values: None,
        differences: None,
        cpu_seconds: None,
        f64_error: Vec::new(),
    };
    if args.verify || args.f64_error {
        let mut want = TileResult::new(stats.n_stats(), plan.targets.len(), n_cells);
        let started = Instant::now();
        CpuEngine.compute(T::wrap(pool.view()), &plan, &stats, &mut want)?;
        record.cpu_seconds = Some(started.elapsed().as_secs_f64());
        if args.verify {
            record.verified_values = Some(want.values.len() + want.counts.len());
            record.differences = Some(out.count_differences(&want));
            eprintln!(
                "bench: {} of {} values differ from the cpu engine",
                record.differences.unwrap(),
                record.verified_values.unwrap()
            );
        }
    }
    if args.f64_error && T::NAME != "f64" {
        drop(pool);
        record.f64_error = f64_errors(&gen, &plan, &stats, &out, n_cells)?;
    }
    if let Some(path) = &args.json {
        super::write_record(&record, path)?;
    }
    Ok(record)
}

/// The GPU engine's options from the flags.
fn gpu_options(args: &BenchKernelArgs) -> GpuOptions {
    GpuOptions {
        max_device_mem: args.max_device_mem.map(|m| m.0),
        ring: args.gpu_ring,
        hints: !args.gpu_no_hints,
        block: args.gpu_block,
        device_wraps: false,
        ..GpuOptions::default()
    }
}

/// The job's pool of `T`, filled with the generated values (an int16 pool as OSTIA packs SST),
/// and the seconds filling it took.
fn filled_pool<T: Sample>(gen: &GenerateOptions, plan: &WindowPlan, n_cells: usize) -> Result<(Pool<T>, f64), Error> {
    let started = Instant::now();
    let alloc = |n: usize| Error::Alloc { bytes: n, cause: std::io::Error::other("mmap") };
    let mut pool = Pool::<T>::new(plan.slots.len(), n_cells).map_err(|_| alloc(plan.slots.len() * n_cells))?;
    if T::NAME == "i16" {
        // an int16 pool as OSTIA packs SST: hundredths of a degree, -32768 missing, decoded
        // through the table v = i * 0.01 (the generated values lie on that grid)
        crate::tools::generate::fill_pool_with(gen, &plan.slots, &mut pool, |v| {
            T::from_f64(if v.is_finite() { (v / 0.01).round().clamp(-32767.0, 32767.0) } else { -32768.0 })
        });
        pool.set_decoding(Some(crate::pool::int16_decoding(|raw| if raw == -32768.0 { f64::NAN } else { raw * 0.01 })));
    } else {
        crate::tools::generate::fill_pool(gen, &plan.slots, &mut pool);
    }
    let fill_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "bench: pool {} x {} {} ({:.2} GB) filled in {fill_seconds:.1} s",
        plan.slots.len(),
        n_cells,
        T::NAME,
        pool.bytes() as f64 / 1e9
    );
    Ok((pool, fill_seconds))
}

/// The error of each statistic of `out` against the same job on an f64 pool (CPU engine).
fn f64_errors(
    gen: &GenerateOptions,
    plan: &WindowPlan,
    stats: &StatSpec,
    out: &TileResult,
    n_cells: usize,
) -> Result<Vec<ErrorStats>, Error> {
    let alloc = |n: usize| Error::Alloc { bytes: n, cause: std::io::Error::other("mmap") };
    let mut pool64 = Pool::<f64>::new(plan.slots.len(), n_cells).map_err(|_| alloc(plan.slots.len() * n_cells * 8))?;
    crate::tools::generate::fill_pool(gen, &plan.slots, &mut pool64);
    let mut exact = TileResult::new(stats.n_stats(), plan.targets.len(), n_cells);
    CpuEngine.compute(<f64 as Sample>::wrap(pool64.view()), plan, stats, &mut exact)?;
    Ok(stats.names().iter().enumerate().map(|(s, name)| error_stats(name, out, &exact, s)).collect())
}

/// Error of statistic `stat` of `got` against `want`.
pub fn error_stats(name: &str, got: &TileResult, want: &TileResult, stat: usize) -> ErrorStats {
    let mut e = ErrorStats { stat: name.into(), ..Default::default() };
    let mut sq = 0.0;
    for t in 0..got.n_targets {
        for (a, b) in got.row(stat, t).iter().zip(want.row(stat, t)) {
            match (a.is_nan(), b.is_nan()) {
                (false, false) => {
                    let d = (a - b).abs();
                    e.max_abs = e.max_abs.max(d);
                    sq += d * d;
                    e.values += 1;
                }
                (true, true) => {}
                _ => e.validity_mismatches += 1,
            }
        }
    }
    e.rms = if e.values > 0 { (sq / e.values as f64).sqrt() } else { 0.0 };
    e
}

impl BenchRecord {
    /// A short table for the terminal.
    pub fn table(&self) -> String {
        let mut s = format!(
            "device {}\npool {} ({:.2} GB), {} target days, {} launch(es)\nkernel median {:.3} ms (repeats {:?})\n",
            self.device,
            self.pool,
            self.pool_bytes as f64 / 1e9,
            self.target_days,
            self.launches,
            self.kernel_ms_median,
            self.kernel_ms.iter().map(|k| (k * 1000.0).round() / 1000.0).collect::<Vec<_>>()
        );
        s += &format!(
            "host-to-device median {:.3} s ({:.1} GB/s), pinning {:.3} s, device-to-host {:.3} s\n",
            self.h2d_seconds_median, self.h2d_gb_per_s, self.pin_seconds_median, self.d2h_seconds_median
        );
        if let Some(p) = &self.probe {
            s += &format!(
                "probe: pinned h2d {:.1} GB/s, d2d copy {:.0} GB/s (read+write); pool read floor {:.3} ms\n",
                p.h2d_gb_per_s,
                p.d2d_gb_per_s,
                self.read_floor_ms.unwrap_or(0.0)
            );
            s += &format!(
                "kernel / read floor = {:.2} (target <= 3); h2d / pinned rate = {:.2} (target <= 1.2)\n",
                self.kernel_over_floor.unwrap_or(0.0),
                self.h2d_over_pinned.unwrap_or(0.0)
            );
        }
        if let (Some(d), Some(n)) = (self.differences, self.verified_values) {
            s += &format!(
                "verify: {d} of {n} values differ from the cpu engine ({:.1} s)\n",
                self.cpu_seconds.unwrap_or(0.0)
            );
        }
        for e in &self.f64_error {
            s += &format!(
                "{} vs float64 pool: max abs {:.3e}, rms {:.3e} over {} values, {} validity mismatches\n",
                e.stat, e.max_abs, e.rms, e.values, e.validity_mismatches
            );
        }
        s
    }
}
