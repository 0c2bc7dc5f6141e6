//! The `sstclim` command's body (src/main.rs calls [`main`]): parse the command line, run the
//! subcommand, report errors in one line with a non-zero exit status.

use std::process::ExitCode;

use anyhow::Context;
use crate::cli::Command;
use crate::dist::{Comm, Given, World};
use crate::report::progress::Ui;

fn init_logging(quiet: bool) {
    let default = if quiet { "warn" } else { "sstclim=info" };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default.into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(crate::report::progress::LogWriter::default)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}

pub(crate) fn main() -> ExitCode {
    let _ = crate::report::timing::PROCESS_START.set(std::time::Instant::now());
    // HDF5's flock on every open costs a third of the per-file metadata query of the direct
    // read path; sstclim only reads its inputs and writes its own temporary outputs, so it
    // does without (unless the user sets the variable). Set before any thread starts.
    if std::env::var_os("HDF5_USE_FILE_LOCKING").is_none() {
        std::env::set_var("HDF5_USE_FILE_LOCKING", "FALSE");
    }
    let cli = crate::cli::parse();
    let is_run = matches!(cli.command, Command::Run(_) | Command::Events(_));
    if is_run {
        // before any thread starts (MPI's included), so that every thread inherits the mask
        crate::util::signals::install();
    }
    // `run` and `events` are MPI jobs (a single rank without mpirun); rank 0 speaks for them, the other
    // ranks log warnings only. MPI is finalised when `world` drops, after the last output.
    let world = is_run.then(World::init).unwrap_or_else(World::single);
    let rank = world.comm().rank();
    crate::util::signals::set_quiet(rank > 0);
    init_logging(cli.quiet || rank > 0);
    let progress = if rank > 0 { crate::report::progress::ProgressMode::Off } else { cli.progress };
    let ui = Ui::with_mode(cli.quiet || rank > 0, progress);
    crate::input::silence_hdf5();
    // a bug is one line too, and unwinding still removes what the run staged
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let what = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or(info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("panic");
        eprintln!("error: internal error (a bug in sstclim; please report it): {what}{at}");
    }));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli.command, world.comm(), &ui)));
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            // an error caused by an interruption (its children killed) leaves the report to it
            crate::util::signals::settle();
            if rank == 0 {
                eprintln!("error: {e:#}");
            }
            crate::util::signals::set_quiet(true);
            drop(world);
            leave(2)
        }
        Err(_) => {
            crate::util::signals::set_quiet(true);
            drop(world);
            leave(2)
        }
    }
}

/// Exit with `code` after a failure without running the libraries' exit handlers: HDF5's
/// closes the files it still has open, and a file it failed to write (a full disk) crashes it.
fn leave(code: i32) -> ExitCode {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: ends the process; nothing else runs after it.
    unsafe { libc::_exit(code) }
}

fn dispatch(command: Command, comm: &Comm, ui: &Ui) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) => {
            let command_line =
                std::iter::once("sstclim".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
            let plan = crate::cli::validate::plan(&args, command_line)?;
            let given = Given {
                threads: args.resources.threads.is_some(),
                max_mem: args.resources.max_mem.is_some(),
                device: args.device.is_some(),
            };
            let finished = crate::dist::run(&plan, given, comm, ui)?;
            if comm.rank() == 0 {
                print!("{}", finished.table);
                println!("wrote {} files to {}", finished.outputs, plan.output.dir.display());
                if let Some(day) = args.quicklook {
                    for png in crate::tools::quicklook::quicklooks_of_dir(&plan.output.dir, day)? {
                        println!("quicklook: {}", png.display());
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Events(args) => {
            let command_line =
                std::iter::once("sstclim".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
            let opts = args.options(command_line.clone())?;
            let done = match args.baseline_plan(&command_line)? {
                Some((plan, given)) => crate::run_events::events_with_baseline(&opts, &plan, given, comm, ui)?,
                None => crate::run_events::events(&opts, comm, ui)?,
            };
            if comm.rank() > 0 {
                return Ok(ExitCode::SUCCESS);
            }
            let report = done.report();
            if let Some(path) = &args.timing_json {
                report.write_json(path).map_err(|cause| crate::error::Error::Io { path: path.clone(), cause })?;
            }
            print!("{}", report.table());
            println!(
                "{} events in {} cells ({} files, {} band(s)) in {:.1} s; peak memory {:.2} GB",
                done.events,
                done.cells,
                done.files_read,
                done.bands,
                done.seconds,
                done.peak_rss as f64 / 1e9
            );
            for p in &done.outputs {
                println!("wrote {}", p.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Generate(args) => {
            let options = args.options();
            let report = crate::tools::generate::generate(&options, ui)?;
            if options.worker.is_none() {
                if report.up_to_date {
                    println!("{} already holds this dataset; nothing written", options.output.display());
                } else {
                    println!(
                        "wrote {} files ({:.2} GB) to {} in {:.1} s ({} processes, {:.2} GB/s)",
                        report.files,
                        report.bytes as f64 / 1e9,
                        options.output.display(),
                        report.seconds,
                        report.processes,
                        report.bytes as f64 / 1e9 / report.seconds.max(1e-9)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(args) => {
            if let Some(path) = &args.json {
                crate::plan::reports::check_tool_report("--json", path)?;
            }
            let c = crate::tools::compare::compare(&args.a, &args.b, args.tolerance)
                .with_context(|| format!("comparing {} with {}", args.a.display(), args.b.display()))?;
            print!("{}", c.table());
            if let Some(path) = &args.json {
                crate::tools::compare::write_json(&c, path)?;
            }
            Ok(if c.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Demo(args) => crate::cli::demo::demo(&args, comm, ui),
        Command::Quicklook(args) => {
            if let Some(path) = &args.output {
                crate::plan::reports::check_tool_report("--output", path)?;
            }
            println!("wrote {}", crate::tools::summary_map::quicklook_any(&args.options())?.display());
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "bench")]
        Command::Bench(bench) => Ok(if bench.run()? { ExitCode::SUCCESS } else { ExitCode::from(1) }),
    }
}
