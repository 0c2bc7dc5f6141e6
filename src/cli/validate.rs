//! Validating `sstclim run`'s flags into a [`JobPlan`] (ripgrep's low-level arguments into
//! high-level ones): everything that can be rejected without reading an input is rejected
//! here, with a message naming the flag (report paths are checked here too, against the
//! outputs and for writing, so that a bad one stops the job before it reads anything; see
//! `plan::reports`).

use crate::api::{Climatology, Compute, Dest, FilesOut};
use crate::cli::run::RunArgs;
use crate::engine::GpuOptions;
use crate::output::{OutputFormat, OutputType};
use crate::plan::{JobPlan, PlanError};
use crate::pool::Quantize;
use crate::source::Source;

/// The job `args` describe; `command_line` goes into the outputs' `history` attribute. The
/// flags become the library's options ([`Climatology`], [`Compute`], [`FilesOut`]), which
/// validate into the plan a library caller gets for the same options.
pub fn plan(args: &RunArgs, command_line: String) -> Result<JobPlan, PlanError> {
    if let Some(day) = args.quicklook {
        let doys = &args.window.doys();
        if !doys.contains(&day) {
            let doys: Vec<i32> = doys.iter().map(|&d| i32::from(d)).collect();
            return Err(PlanError::QuicklookDay { day, doys: crate::tools::quicklook::day_ranges(&doys) });
        }
    }
    let out = files_out(args, command_line)?;
    climatology(args).plan(source(args), &compute(args), Dest::Files(&out))
}

/// Where `run` reads (one input per line, see discover).
pub fn source(args: &RunArgs) -> Source {
    args.inputs.source()
}

/// What `run` computes.
pub fn climatology(args: &RunArgs) -> Climatology {
    let w = &args.window;
    Climatology {
        baseline: w.years.0.clone(),
        doys: w.doys.as_ref().map(|d| d.0.clone()),
        half_window: w.half_window,
        calendar: w.calendar,
        window_edges: w.window_edges,
        feb29: w.feb29,
        smooth: w.smooth,
        percentiles: args.percentile.clone(),
        method: args.method,
        min_samples: args.min_samples,
    }
}

/// How `run` computes.
pub fn compute(args: &RunArgs) -> Compute {
    Compute {
        backend: args.backend,
        device: args.device.unwrap_or(0),
        threads: args.resources.threads,
        max_mem: args.resources.max_mem.as_ref().map(|m| m.0),
        pool: args.pool,
        pack: args.pack_scale.map(|scale| Quantize { scale, offset: args.pack_offset }),
        gpu: GpuOptions {
            max_device_mem: args.max_device_mem.as_ref().map(|m| m.0),
            ring: args.gpu_ring,
            hints: !args.gpu_no_hints,
            block: args.gpu_block,
            device_wraps: false,
            ..GpuOptions::default()
        },
        gpu_pool: args.gpu_pool,
        allow_missing: args.inputs.allow_missing,
        read_path: args.read_path,
        readers: args.readers,
        segments: args.segments,
        rates: crate::pipeline::tuning::rates::resolve(args.rates.as_deref(), crate::util::knobs::location_env),
        verify: args.verify,
    }
}

/// Where and how `run` writes.
pub fn files_out(args: &RunArgs, command_line: String) -> Result<FilesOut, PlanError> {
    Ok(FilesOut {
        dir: args.output.clone(),
        layout: args.layout,
        deflate: args.deflate,
        fill_value: args.fill_value.unwrap_or(crate::plan::DEFAULT_FILL_VALUE),
        overwrite: args.overwrite,
        write_path: args.write_path,
        write_threads: args.write_threads,
        format: output_format(args)?,
        timing_json: args.timing_json.clone(),
        trace_json: args.trace_json.clone(),
        command_line,
    })
}

/// How the statistics are stored: `--output-type`, its packing, the chunks and shuffle of
/// compressed outputs, the units.
fn output_format(args: &RunArgs) -> Result<OutputFormat, PlanError> {
    let mut format = OutputFormat { units: args.units, chunks: args.chunks, ..OutputFormat::default() };
    if args.deflate.is_none() && (args.chunks.is_some() || args.shuffle.is_some()) {
        return Err(PlanError::ChunksWithoutDeflate);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::output::WritePath;
    use crate::pool::PoolType;
    use clap::Parser;

    fn run_args(extra: &[&str]) -> RunArgs {
        let mut argv =
            vec!["sstclim", "run", "--input", "x_{year}_{doy}.nc", "--output", "o", "--baseline", "1991-2020"];
        argv.extend_from_slice(extra);
        let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!() };
        args
    }

    fn plan(extra: &[&str]) -> Result<JobPlan, PlanError> {
        super::plan(&run_args(extra), String::new())
    }

    /// The flags left out are the library's defaults: `run` with only its required flags
    /// is [`Climatology::reference`] (over the years given), [`Compute::auto`] and
    /// [`FilesOut::new`].
    #[test]
    fn the_flags_defaults_are_the_librarys() {
        let args = run_args(&[]);
        assert_eq!(climatology(&args), Climatology::reference().baseline(1991..=2020));
        let mut c = compute(&args);
        c.rates = None;
        assert_eq!(c, Compute::auto());
        assert_eq!(files_out(&args, "c".into()).unwrap(), FilesOut { command_line: "c".into(), ..FilesOut::new("o") });
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
