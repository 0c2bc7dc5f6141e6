//! Validating `sstclim run` flags into a job plan: everything that can be rejected without
//! reading an input is rejected here, with a message naming the flag (report paths are checked
//! for writing here too, so that an unwritable one stops the job before it computes).

use std::path::{Path, PathBuf};

use crate::cli::RunArgs;
use crate::engine::{Backend, GpuOptions, StatSpec};
use crate::output::OutputSpec;
use crate::pipeline::ReadPath;
use crate::pool::{PoolType, Quantize};
use crate::window::WindowSpec;

/// A validated `run` job.
#[derive(Clone, Debug)]
pub struct JobPlan {
    pub input: String,
    pub var: Option<String>,
    pub window: WindowSpec,
    pub stats: StatSpec,
    pub output: OutputSpec,
    pub allow_missing: bool,
    pub backend: Backend,
    /// `None`: chosen once the engine and the input's storage are known.
    pub pool: Option<PoolType>,
    /// Lossy int16 packing of float input (`--pack-scale`).
    pub pack: Option<Quantize>,
    /// GPU ordinal for GPU engines.
    pub device: usize,
    pub gpu: GpuOptions,
    pub threads: usize,
    /// Budget for the pool and results of one tile, in bytes.
    pub max_mem: u64,
    pub verify: bool,
    pub timing_json: Option<PathBuf>,
    /// Where to write the per-rank timeline of stages.
    pub trace_json: Option<PathBuf>,
    /// This process's rank and the number of ranks (for the timeline; (0, 1) when alone).
    pub rank: (usize, usize),
    /// How input files are read.
    pub read_path: ReadPath,
    /// Reader processes at a time for files read through libnetcdf.
    pub readers: usize,
    /// Segments of target days in the overlapped pipeline (`None`: chosen per job).
    pub segments: Option<usize>,
    /// The measured rates file (`None`: off), see [`crate::pipeline::rates`].
    pub rates: Option<PathBuf>,
    /// Where a GPU engine's pool lives.
    pub gpu_pool: crate::cli::GpuPool,
    /// The command line, for the outputs' `history` attribute.
    pub command_line: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("--half-window {0} is too large (at most 182 days on each side)")]
    HalfWindow(u16),
    #[error("--percentile lists {0} twice")]
    DuplicatePercentile(String),
    #[error("--min-samples must be at least 1")]
    MinSamples,
    #[error("--deflate must be 1-9, got {0}")]
    Deflate(u8),
    #[error("--pack-scale packs into the int16 pool: it does not go with another --pool")]
    PackPool,
    #[error("--pack-scale {0} / --pack-offset {1}: the scale must be positive and both finite")]
    PackScale(String, String),
    #[error("--readers must be at least 1")]
    Readers,
    #[error("--segments must be at least 1")]
    Segments,
    #[error("--threads must be at least 1")]
    Threads,
    #[error("--write-threads must be at least 1")]
    WriteThreads,
    #[error("--max-mem {0} bytes is too small (at least 1M)")]
    MaxMem(u64),
    #[error("{flag} {}: {problem}", path.display())]
    ReportPath { flag: &'static str, path: PathBuf, problem: String },
    #[error("--max-device-mem {0} bytes is too small (at least 1M)")]
    MaxDeviceMem(u64),
}

/// Available memory from /proc/meminfo (bytes), if known.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Whether a report can be written at `path`: not a directory, in a directory (created if
/// missing) where files can be created (checked with a probe file, removed at once).
fn check_report_path(flag: &'static str, path: &std::path::Path) -> Result<(), PlanError> {
    let bad = |problem: String| PlanError::ReportPath { flag, path: path.into(), problem };
    if path.is_dir() {
        return Err(bad("is a directory".into()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    // created where missing, as the output directory is
    std::fs::create_dir_all(parent).map_err(|e| bad(format!("cannot create directory {}: {e}", parent.display())))?;
    let probe = parent.join(format!(".sstclim-report-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| bad(format!("cannot create files in {}: {e}", parent.display())))?;
    let _ = std::fs::remove_file(&probe);
    if path.exists() {
        std::fs::OpenOptions::new().append(true).open(path).map_err(|e| bad(format!("cannot be replaced: {e}")))?;
    }
    Ok(())
}

/// The default `--max-mem`: half of the smallest of the available memory (at least 256 MiB),
/// the room left under this process's cgroup memory limit, and the room left under
/// `RLIMIT_AS` (what `ulimit -v` sets) beside what it already maps; the other half is for the
/// libraries, buffers and page cache. 4 GiB when none is known. The hard limits are not
/// rounded up: a budget that cannot hold one band of the grid is refused with one line
/// instead of an allocation failing mid-run.
pub fn default_max_mem() -> u64 {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let soft = available_memory().map(|m| (m / 2).max(256 << 20));
    let hard = [cgroup_room(&read), address_space_room()].into_iter().flatten().min().map(|m| m / 2);
    [soft, hard].into_iter().flatten().min().unwrap_or(4 << 30)
}

/// Under an address-space limit (`ulimit -v`), every glibc malloc arena a new thread opens
/// reserves 64 MiB of it: a dozen threads reserve more than the pool and the job's small
/// allocations then fail (an abort, measured under `ulimit -v 380000` on a 720x361 job). Two
/// arenas are plenty for this program's few allocating threads. Without a limit nothing
/// changes.
pub fn fit_allocator_to_address_limit() {
    if address_space_limit().is_none() {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a malloc tuning parameter.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// The soft `RLIMIT_AS` in bytes, if there is one.
fn address_space_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into `lim`.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(lim.rlim_cur as u64)
}

/// Room under `RLIMIT_AS`: the limit less the address space this process maps now, less
/// headroom for what every run maps later besides the pool and results (thread stacks,
/// allocator arenas, the libraries' buffers). The limit is per process: forked children count
/// against their own copy of it.
fn address_space_room() -> Option<u64> {
    let limit = address_space_limit()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status.lines().find(|l| l.starts_with("VmSize:"))?.split_whitespace().nth(1)?.parse().ok()?;
    let headroom = 256 << 20;
    Some(limit.saturating_sub(kib * 1024).saturating_sub(headroom))
}

/// Room under this process's cgroup memory limits (v2 `memory.max` less `memory.current`, v1
/// `memory.limit_in_bytes` less `memory.usage_in_bytes`), the smallest over the cgroup and its
/// ancestors; `read` reads a file.
fn cgroup_room(read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let own = read(Path::new("/proc/self/cgroup"))?;
    let mut room: Option<u64> = None;
    let mut take = |dir: &Path, limit: &str, usage: &str| {
        let num = |name: &str| read(&dir.join(name)).and_then(|t| t.trim().parse::<u64>().ok());
        // "max" (v2) or a huge number (v1) parse as no limit
        if let (Some(l), Some(u)) = (num(limit), num(usage)) {
            if l < 1 << 60 {
                let r = l.saturating_sub(u);
                room = Some(room.map_or(r, |x| x.min(r)));
            }
        }
    };
    for line in own.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else { continue };
        let (roots, limit, usage): (&[&str], _, _) = if controllers.is_empty() {
            (&["/sys/fs/cgroup", "/sys/fs/cgroup/unified"], "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (&["/sys/fs/cgroup/memory"], "memory.limit_in_bytes", "memory.usage_in_bytes")
        } else {
            continue;
        };
        for root in roots {
            // the cgroup and its ancestors (inside a cgroup namespace the path may not exist
            // below the mount: the mount itself is then this process's cgroup)
            let mut dir = Path::new(root).join(path.trim_start_matches('/'));
            loop {
                take(&dir, limit, usage);
                if dir == Path::new(root) || !dir.pop() {
                    break;
                }
            }
        }
    }
    room
}

impl JobPlan {
    pub fn from_args(args: &RunArgs, command_line: String) -> Result<JobPlan, PlanError> {
        fit_allocator_to_address_limit();
        for (flag, path) in [("--timing-json", &args.timing_json), ("--trace-json", &args.trace_json)] {
            if let Some(path) = path {
                check_report_path(flag, path)?;
            }
        }
        if args.half_window > 182 {
            return Err(PlanError::HalfWindow(args.half_window));
        }
        for (i, p) in args.percentile.iter().enumerate() {
            if args.percentile[..i].contains(p) {
                return Err(PlanError::DuplicatePercentile(p.to_string()));
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
        let threads = match args.threads {
            Some(0) => return Err(PlanError::Threads),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let max_mem = match args.max_mem {
            Some(m) if m.0 < 1 << 20 => return Err(PlanError::MaxMem(m.0)),
            Some(m) => m.0,
            None => default_max_mem(),
        };
        Ok(JobPlan {
            input: args.input.clone(),
            var: args.var.clone(),
            window: WindowSpec {
                years: args.years.0.clone(),
                doys: args.doys.0.clone(),
                half_window: args.half_window,
                calendar: args.calendar,
            },
            stats: StatSpec {
                percentiles: args.percentile.clone(),
                method: args.method,
                min_samples: args.min_samples,
            },
            output: OutputSpec {
                dir: args.output.clone(),
                layout: args.layout,
                deflate: args.deflate,
                fill_value: args.fill_value,
                overwrite: args.overwrite,
                write_path: args.write_path,
                write_threads: match args.write_threads {
                    Some(0) => return Err(PlanError::WriteThreads),
                    n => n,
                },
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
            rates: crate::pipeline::rates::resolve(args.rates.as_deref(), crate::util::knobs::location_env),
            gpu_pool: args.gpu_pool,
            command_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::output::WritePath;
    use clap::Parser;

    fn plan(extra: &[&str]) -> Result<JobPlan, PlanError> {
        let mut argv = vec!["sstclim", "run", "--input", "x_{year}_{doy}.nc", "--output", "o", "--years", "1991-2020"];
        argv.extend_from_slice(extra);
        let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!() };
        JobPlan::from_args(&args, String::new())
    }

    #[test]
    fn cgroup_limits_are_read_from_the_cgroup_and_its_ancestors() {
        let files = |entries: &'static [(&'static str, &'static str)]| {
            move |p: &Path| entries.iter().find(|(k, _)| Path::new(k) == p).map(|(_, v)| v.to_string())
        };
        let v2 = files(&[
            ("/proc/self/cgroup", "0::/job/step\n"),
            ("/sys/fs/cgroup/job/step/memory.max", "max\n"),
            ("/sys/fs/cgroup/job/step/memory.current", "100\n"),
            ("/sys/fs/cgroup/job/memory.max", "1000000\n"),
            ("/sys/fs/cgroup/job/memory.current", "400000\n"),
        ]);
        assert_eq!(cgroup_room(&v2), Some(600_000));
        let v1 = files(&[
            ("/proc/self/cgroup", "5:cpu:/\n4:memory:/slurm/job7\n0::/\n"),
            ("/sys/fs/cgroup/memory/slurm/job7/memory.limit_in_bytes", "2000\n"),
            ("/sys/fs/cgroup/memory/slurm/job7/memory.usage_in_bytes", "500\n"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "5000\n"),
        ]);
        assert_eq!(cgroup_room(&v1), Some(1500));
        let none = files(&[("/proc/self/cgroup", "0::/\n"), ("/sys/fs/cgroup/memory.max", "max\n")]);
        assert_eq!(cgroup_room(&none), None);
    }

    #[test]
    fn the_default_budget_stays_under_an_address_space_limit() {
        // in a child, so this process keeps its limits
        let _serial = crate::input::fork_serial();
        // SAFETY: the child only calls setrlimit, reads /proc and exits.
        let (pid, fd) = unsafe {
            crate::input::child::fork_child(|w| {
                let lim = libc::rlimit { rlim_cur: 3 << 30, rlim_max: libc::RLIM_INFINITY };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                let m = default_max_mem();
                i32::from(!crate::input::child::write_all(w, &m.to_le_bytes()))
            })
        }
        .unwrap();
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(fd), &mut got).unwrap();
        assert!(crate::input::child::reap(pid));
        let m = u64::from_le_bytes(got[..8].try_into().unwrap());
        assert!(m < 3 << 29, "{m} bytes under a 3 GiB address space limit");
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
