//! Validating `sstclim run`'s flags into a [`JobPlan`] (ripgrep's low-level arguments into
//! high-level ones): everything that can be rejected without reading an input is rejected
//! here, with a message naming the flag (report paths are checked here too, against the
//! outputs and for writing, so that a bad one stops the job before it reads anything; see
//! `plan::reports`).

use crate::cli::run::RunArgs;
use crate::engine::{self, Backend, EngineError, GpuOptions};
use crate::output::{OutputFormat, OutputSpec, OutputType};
use crate::plan::{default_threads, memory, reports, JobPlan, PlanError};
use crate::pool::{PoolType, Quantize};
use crate::stats::StatSpec;
use crate::window::WindowPlan;

/// The job `args` describe; `command_line` goes into the outputs' `history` attribute.
pub fn plan(args: &RunArgs, command_line: String) -> Result<JobPlan, PlanError> {
    memory::fit_allocator_to_address_limit();
    if args.window.half_window > 182 {
        return Err(PlanError::HalfWindow(args.window.half_window));
    }
    check_rules(args)?;
    for (i, p) in args.percentile.iter().enumerate() {
        if args.percentile[..i].contains(p) {
            return Err(PlanError::DuplicatePercentile(p.to_string()));
        }
    }
    if let Some(day) = args.quicklook {
        let doys = &args.window.doys();
        if !doys.contains(&day) {
            let doys: Vec<i32> = doys.iter().map(|&d| i32::from(d)).collect();
            return Err(PlanError::QuicklookDay { day, doys: crate::tools::quicklook::day_ranges(&doys) });
        }
    }
    if args.min_samples == 0 {
        return Err(PlanError::MinSamples);
    }
    if let Some(level) = args.deflate {
        if !(1..=9).contains(&level) {
            return Err(PlanError::Deflate(level));
        }
    }
    let format = output_format(args)?;
    let threads = match args.threads {
        Some(0) => return Err(PlanError::Threads),
        Some(n) => n,
        None => default_threads(),
    };
    let max_mem = match args.max_mem {
        Some(m) if m.0 < 1 << 20 => return Err(PlanError::MaxMem(m.0)),
        Some(m) => m.0,
        None => memory::default_max_mem(),
    };
    let plan = JobPlan {
        // one input per line (see discover)
        input: args.input.join("\n"),
        var: args.var.clone(),
        window: args.window.spec(),
        doys_given: args.window.doys.is_some(),
        rules: args.window.rules(),
        stats: StatSpec { percentiles: args.percentile.clone(), method: args.method, min_samples: args.min_samples },
        output: OutputSpec {
            dir: args.output.clone(),
            layout: args.layout,
            deflate: args.deflate,
            fill_value: args.fill_value.unwrap_or(crate::plan::DEFAULT_FILL_VALUE),
            overwrite: args.overwrite,
            write_path: args.write_path,
            write_threads: match args.write_threads {
                Some(0) => return Err(PlanError::WriteThreads),
                n => n,
            },
            format,
        },
        allow_missing: args.allow_missing,
        backend: args.backend,
        pool: match (args.pack_scale, args.pool) {
            (Some(_), None) => Some(PoolType::I16),
            (Some(_), Some(p)) if p != PoolType::I16 => return Err(PlanError::PackPool),
            (_, p) => p,
        },
        pack: match args.pack_scale {
            Some(scale) if !(scale > 0.0 && scale.is_finite() && args.pack_offset.is_finite()) => {
                return Err(PlanError::PackScale(scale.to_string(), args.pack_offset.to_string()))
            }
            Some(scale) => Some(Quantize { scale, offset: args.pack_offset }),
            None => None,
        },
        device: args.device.unwrap_or(0),
        gpu: GpuOptions {
            max_device_mem: match args.max_device_mem {
                Some(m) if m.0 < 1 << 20 => return Err(PlanError::MaxDeviceMem(m.0)),
                m => m.map(|m| m.0),
            },
            ring: args.gpu_ring,
            hints: !args.gpu_no_hints,
            block: args.gpu_block,
            device_wraps: false,
            ..GpuOptions::default()
        },
        threads,
        max_mem,
        verify: args.verify,
        timing_json: args.timing_json.clone(),
        trace_json: args.trace_json.clone(),
        rank: (0, 1),
        read_path: args.read_path,
        readers: match args.readers {
            Some(0) => return Err(PlanError::Readers),
            Some(n) => n,
            None => threads,
        },
        segments: match args.segments {
            Some(0) => return Err(PlanError::Segments),
            n => n,
        },
        rates: crate::pipeline::tuning::rates::resolve(args.rates.as_deref(), crate::util::knobs::location_env),
        gpu_pool: args.gpu_pool,
        command_line,
    };
    // reports: onto no file of the job nor each other, then writable (see `plan::reports`)
    reports::check_before_reading(&plan)?;
    for (flag, path) in [("--timing-json", &plan.timing_json), ("--trace-json", &plan.trace_json)] {
        if let Some(path) = path {
            reports::check_writable(flag, path)?;
        }
    }
    check_gpu_limits(&plan)?;
    Ok(plan)
}

/// The Hobday climatology's flags (`--smooth`, `--feb29`, `--layout climatology`) against the
/// calendar and the days asked for.
fn check_rules(args: &RunArgs) -> Result<(), PlanError> {
    let w = &args.window;
    let n = crate::smooth::year_length(w.calendar, &w.years.0);
    if w.smooth % 2 == 0 || w.smooth > n {
        return Err(PlanError::Smooth(w.smooth, n));
    }
    if w.feb29 == crate::smooth::Feb29::Interpolate && w.calendar != crate::calendar::Calendar::Hobday366 {
        return Err(PlanError::Feb29Calendar);
    }
    // (without --doys the job takes the days its years have: 1-365 here)
    if w.smooth > 1 && n == 365 && w.doys.as_ref().is_some_and(|d| d.0.contains(&366)) {
        return Err(PlanError::SmoothDay366(w.smooth));
    }
    // a climatology holds every day of the input's year: 1-360, 1-365 or 1-366 by its calendar
    // (checked against it once the inputs are found, see `run::find_inputs`)
    let whole_year = |d: &[u16]| [360, 365, 366].iter().any(|&k| d.iter().copied().eq(1..=k));
    if args.layout == crate::output::OutputLayout::Climatology
        && args.window.doys.is_some()
        && !(w.doys().iter().copied().eq(1..=n) || whole_year(&w.doys()))
    {
        let doys = w.doys();
        let (first, last) = (doys.first().copied().unwrap_or(0), doys.last().copied().unwrap_or(0));
        let doys = if doys.len() == usize::from(last - first + 1) {
            format!("{first}-{last}")
        } else {
            format!("({} days)", doys.len())
        };
        return Err(PlanError::ClimatologyDoys(format!("{doys}, not 1-{n}")));
    }
    Ok(())
}

/// How the statistics are stored: `--output-type`, its packing, the chunks and shuffle of
/// compressed outputs, the units.
fn output_format(args: &RunArgs) -> Result<OutputFormat, PlanError> {
    let mut format = OutputFormat { units: args.units, chunks: args.chunks, ..OutputFormat::default() };
    if args.deflate.is_none() && (args.chunks.is_some() || args.shuffle.is_some()) {
        return Err(PlanError::ChunksWithoutDeflate);
    }
    if args.layout == crate::output::OutputLayout::Climatology {
        let flag = match () {
            _ if args.output_type != OutputType::F64 => Some("--output-type"),
            _ if args.deflate.is_some() => Some("--deflate"),
            _ if args.units.is_some() => Some("--units"),
            _ => None,
        };
        if let Some(flag) = flag {
            return Err(PlanError::ClimatologyFormat(flag));
        }
    }
    format.shuffle = args.shuffle.unwrap_or(true);
    format.ty = args.output_type;
    match args.output_type {
        OutputType::I16 => {
            let scale = args.output_scale.ok_or(PlanError::OutputScaleMissing)?;
            let offset = args.output_offset.unwrap_or(0.0);
            if !(scale > 0.0 && scale.is_finite() && offset.is_finite()) {
                return Err(PlanError::OutputScale(scale.to_string(), offset.to_string()));
            }
            (format.scale, format.offset) = (scale, offset);
        }
        _ if args.output_scale.is_some() || args.output_offset.is_some() => return Err(PlanError::OutputScaleType),
        OutputType::F32 => {
            let fill = args.fill_value.unwrap_or(crate::plan::DEFAULT_FILL_VALUE);
            if !fill.is_nan() && !(fill as f32).is_finite() {
                return Err(PlanError::OutputFill("f32", fill.to_string()));
            }
        }
        OutputType::F64 => {}
    }
    Ok(format)
}

/// A job that asks for a GPU backend by name and exceeds what its kernel takes on any device
/// (percentiles, window length) is refused here, before anything is read. `auto` may fall
/// back to the CPU engine, which has no such limits, so it is checked when the engine starts.
fn check_gpu_limits(plan: &JobPlan) -> Result<(), PlanError> {
    let backend = match plan.backend {
        Backend::Cuda => "cuda",
        Backend::Hip => "hip",
        _ => return Ok(()),
    };
    // missing files (--allow-missing) only shorten windows: every date present is the bound
    let windows = WindowPlan::build(&plan.window, |_| true);
    let window_days = windows.targets.iter().map(|t| t.groups.len()).max().unwrap_or(0);
    match engine::check_gpu_limits(backend, plan.stats.percentiles.len(), window_days) {
        Err(EngineError::Launch { cause, .. }) => Err(PlanError::GpuLimits { backend, cause }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::output::WritePath;
    use clap::Parser;

    fn run_args(extra: &[&str]) -> RunArgs {
        let mut argv = vec!["sstclim", "run", "--input", "x_{year}_{doy}.nc", "--output", "o", "--years", "1991-2020"];
        argv.extend_from_slice(extra);
        let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!() };
        args
    }

    fn plan(extra: &[&str]) -> Result<JobPlan, PlanError> {
        super::plan(&run_args(extra), String::new())
    }

    /// `JobPlan::new` (the demo's plan) has the defaults of the flags left out.
    #[test]
    fn the_plans_defaults_are_the_flags_defaults() {
        let args = run_args(&["--max-mem", "1G"]);
        let mut validated = super::plan(&args, "c".into()).unwrap();
        validated.rates = None;
        let mut new = JobPlan::new(
            args.input.join("\n"),
            args.output.clone(),
            args.window.spec(),
            validated.stats.clone(),
            "c".into(),
        );
        new.max_mem = 1 << 30;
        assert_eq!(format!("{validated:?}"), format!("{new:?}"));
    }

    /// The output flags: int16 needs a scale (positive, finite) and takes an offset; scale and
    /// offset go with int16 only; chunks and shuffle shape compressed outputs only.
    #[test]
    fn output_flags_are_checked_together() {
        let p = plan(&["--output-type", "i16", "--output-scale", "0.01", "--output-offset", "-5"]).unwrap();
        assert_eq!((p.output.format.ty, p.output.format.scale, p.output.format.offset), (OutputType::I16, 0.01, -5.0));
        assert_eq!(plan(&["--output-type", "i16"]).unwrap_err(), PlanError::OutputScaleMissing);
        assert!(matches!(plan(&["--output-type", "i16", "--output-scale", "0"]), Err(PlanError::OutputScale(..))));
        assert_eq!(plan(&["--output-type", "f32", "--output-scale", "2"]).unwrap_err(), PlanError::OutputScaleType);
        assert_eq!(plan(&["--chunks", "10x10"]).unwrap_err(), PlanError::ChunksWithoutDeflate);
        assert_eq!(plan(&["--shuffle", "false"]).unwrap_err(), PlanError::ChunksWithoutDeflate);
        let p = plan(&["--deflate", "1", "--shuffle", "false", "--chunks", "360x90", "--units", "degC"]).unwrap();
        let f = &p.output.format;
        assert!(!f.shuffle && f.chunks == Some(crate::output::ChunkShape { nlon: 360, nlat: 90 }));
        assert_eq!(f.units, Some(crate::output::TargetUnits::DegC));
        assert!(plan(&["--deflate", "1"]).unwrap().output.format.shuffle, "shuffle on by default");
    }

    /// A named GPU backend is held to the kernel's limits before anything is read; the CPU
    /// and `auto` (which may fall back to the CPU) are not.
    #[test]
    fn a_named_gpu_backend_is_held_to_the_kernels_limits() {
        use crate::engine::gpu::LaunchError;
        let long = ["--doys", "152-243", "--half-window", "16"];
        let err = plan(&[&long[..], &["--backend", "cuda"]].concat()).unwrap_err();
        assert_eq!(
            err,
            PlanError::GpuLimits { backend: "cuda", cause: LaunchError::WindowTooLong { days: 33, max: 32 } }
        );
        assert!(err.to_string().starts_with("--backend cuda: windows of 33 days exceed"), "{err}");
        // 31 days fit the largest instantiation
        assert!(plan(&["--doys", "152-243", "--half-window", "15", "--backend", "hip"]).is_ok());
        let many = ["--doys", "152-243", "--percentile", "10,20,30,40,50,60,70,80,90"];
        let err = plan(&[&many[..], &["--backend", "hip"]].concat()).unwrap_err();
        assert_eq!(
            err,
            PlanError::GpuLimits { backend: "hip", cause: LaunchError::TooManyPercentiles { asked: 9, max: 8 } }
        );
        for backend in ["cpu", "auto"] {
            assert!(plan(&[&long[..], &["--backend", backend]].concat()).is_ok(), "{backend}");
            assert!(plan(&[&many[..], &["--backend", backend]].concat()).is_ok(), "{backend}");
        }
    }

    #[test]
    fn defaults_are_the_reference_definition() {
        let p = plan(&["--doys", "152-243"]).unwrap();
        assert_eq!(p.window.half_window, 5);
        assert_eq!(p.window.doys.len(), 92);
        assert_eq!(p.stats.method.number(), 5);
        assert_eq!(p.stats.names(), ["mean", "p90"]);
        assert_eq!((p.output.write_path, p.output.write_threads), (WritePath::Auto, None));
        let p = plan(&["--write-path", "library", "--write-threads", "3"]).unwrap();
        assert_eq!((p.output.write_path, p.output.write_threads), (WritePath::Library, Some(3)));
    }

    #[test]
    fn rejects_inconsistent_flags() {
        assert_eq!(plan(&["--half-window", "200"]).unwrap_err(), PlanError::HalfWindow(200));
        assert_eq!(plan(&["--percentile", "90,90"]).unwrap_err(), PlanError::DuplicatePercentile("90".into()));
        assert_eq!(plan(&["--min-samples", "0"]).unwrap_err(), PlanError::MinSamples);
        assert_eq!(plan(&["--deflate", "12"]).unwrap_err(), PlanError::Deflate(12));
        assert_eq!(plan(&["--threads", "0"]).unwrap_err(), PlanError::Threads);
        assert_eq!(plan(&["--write-threads", "0"]).unwrap_err(), PlanError::WriteThreads);
        assert!(matches!(plan(&["--pack-scale", "0"]).unwrap_err(), PlanError::PackScale(..)));
        assert!(matches!(
            plan(&["--pack-scale", "0.01", "--pack-offset", "inf"]).unwrap_err(),
            PlanError::PackScale(..)
        ));
        assert_eq!(plan(&["--pack-scale", "0.01", "--pool", "f64"]).unwrap_err(), PlanError::PackPool);
        let p = plan(&["--pack-scale", "0.01", "--pack-offset", "-2"]).unwrap();
        assert_eq!((p.pool, p.pack), (Some(PoolType::I16), Some(Quantize { scale: 0.01, offset: -2.0 })));
        assert_eq!(plan(&["--max-mem", "512K"]).unwrap_err(), PlanError::MaxMem(512 << 10));
        // the host budget under the name the device budget pairs with
        assert_eq!(plan(&["--max-host-mem", "512K"]).unwrap_err(), PlanError::MaxMem(512 << 10));
        let e = plan(&["--max-device-mem", "1"]).unwrap_err();
        assert_eq!(e, PlanError::MaxDeviceMem(1));
        assert_eq!(e.to_string(), "--max-device-mem 1 bytes is too small (at least 1M)");
    }
}
