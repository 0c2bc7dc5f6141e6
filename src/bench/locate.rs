//! `sstclim bench-locate` (hidden): the time to locate the data variable in every input file of
//! a job, as the direct read path does on a job's first tile (coordinates compared), by each
//! way it can: parsing the HDF5 metadata ([`crate::input::h5meta`]) on one thread and on all
//! threads, through libhdf5 in this process (one thread: the library lock serializes it), and
//! through libhdf5 in forked locating processes as the pipeline did before the parser (and
//! still does where the first file needs the library). Every way must find the same offsets.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use super::BenchError;
use crate::input::direct::{self, Via};
use crate::input::{self, Grid, VarLayout};
use crate::pipeline::locate::Locating;
use crate::pipeline::trace::Trace;

/// Flags of `sstclim bench-locate`: the job's inputs as `sstclim run` names them.
#[derive(clap::Args, Debug)]
pub struct BenchLocateArgs {
    #[command(flatten)]
    pub job: crate::bench::read::JobInputs,
    /// Variable to locate (default: detected as `sstclim run` does).
    #[arg(long)]
    pub var: Option<String>,
    /// Threads of the parallel parser pass (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Timed passes of each way (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Only the ways whose name starts with this (`parser`, `libhdf5`, `libhdf5 forked`).
    #[arg(long)]
    pub only: Option<String>,
    /// Write the result as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One way of locating every file.
#[derive(Debug, Serialize)]
pub struct Way {
    pub name: String,
    pub threads: usize,
    /// Wall seconds of each pass.
    pub passes: Vec<f64>,
    pub median_seconds: f64,
    /// Median wall time per file, in microseconds.
    pub us_per_file: f64,
    /// CPU seconds of the median pass (this process and its children).
    pub cpu_seconds: f64,
}

/// What `bench-locate` measured.
#[derive(Debug, Serialize)]
pub struct LocateBench {
    pub files: usize,
    pub ways: Vec<Way>,
}

impl LocateBench {
    pub fn table(&self) -> String {
        let mut s = format!("locating the variable in {} files (median of passes):\n", self.files);
        for w in &self.ways {
            s += &format!(
                "  {:<22} {:>2} thread(s): {:8.3} s  {:8.1} us/file  cpu {:7.3} s  passes {:?}\n",
                w.name,
                w.threads,
                w.median_seconds,
                w.us_per_file,
                w.cpu_seconds,
                w.passes.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>()
            );
        }
        s
    }
}

/// CPU seconds used so far by this process and its reaped children.
fn cpu_seconds() -> f64 {
    let of = |who| {
        // SAFETY: a plain C struct, zeroed, which getrusage fills.
        let u = unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut u);
            u
        };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
        t(u.ru_utime) + t(u.ru_stime)
    };
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

/// Locating every file one way, checked against the offsets libhdf5 gives (`want`).
struct Check<'a> {
    files: &'a [PathBuf],
    dl: &'a direct::DirectLayout,
    layout: &'a VarLayout,
    grid: &'a Grid,
    want: &'a [u64],
}

impl Check<'_> {
    fn fail(path: &Path, why: String) -> BenchError {
        BenchError::Locate { path: path.to_path_buf(), why }
    }

    /// `n` threads of this process locating the files `via` one way.
    fn in_process(&self, via: Via, n: usize) -> Result<(), BenchError> {
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..n)
                .map(|_| {
                    s.spawn(|| -> Result<(), BenchError> {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(p) = self.files.get(i) else { return Ok(()) };
                            let (_, place) = direct::locate_via(p, self.dl, self.layout, Some(self.grid), via)
                                .map_err(|w| Self::fail(p, w))?;
                            let offset = place.offset().unwrap_or(0);
                            if offset != self.want[i] {
                                return Err(Self::fail(p, format!("offset {offset}, libhdf5 {}", self.want[i])));
                            }
                        }
                    })
                })
                .collect();
            workers.into_iter().try_for_each(|w| w.join().expect("locating thread"))
        })
    }

    /// `n` forked children querying libhdf5, as the pipeline runs them.
    fn forked(&self, n: usize) -> Result<(), BenchError> {
        let files = self.files;
        let trace = Trace::new(Instant::now());
        // the children query libhdf5, as where the first file needs the library
        let through_library = direct::DirectLayout { parsed: false, ..self.dl.clone() };
        let locating = Locating::spawn(files, &through_library, self.layout, Some(self.grid), n);
        let (tx, rx) = crossbeam_channel::unbounded();
        let fallback = Mutex::new(Vec::new());
        locating.collect(files, &tx, &fallback, &trace, 0);
        drop(tx);
        let found: Vec<(usize, u64)> = rx.into_iter().map(|l| (l.slot, l.offset)).collect();
        let missed = fallback.into_inner().unwrap_or_else(|e| e.into_inner());
        if !missed.is_empty() || found.len() != files.len() {
            return Err(BenchError::NotLocated(missed.len()));
        }
        match found.iter().find(|&&(slot, offset)| offset != self.want[slot]) {
            Some(&(slot, offset)) => {
                Err(Self::fail(&files[slot], format!("offset {offset}, libhdf5 {}", self.want[slot])))
            }
            None => Ok(()),
        }
    }
}

pub fn bench_locate(args: &BenchLocateArgs) -> Result<LocateBench, BenchError> {
    let files = args.job.files()?;
    let first = &files[0];
    let (layout, grid) = {
        let f = input::open(first)?;
        let layout = VarLayout::inspect(&f, first, args.var.as_deref(), false)?;
        let grid = Grid::read(&f, first, &layout)?;
        (layout, grid)
    };
    let dl = direct::probe(first, &layout).map_err(|why| BenchError::NotDirect { path: first.clone(), why })?;
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let fail = |path: &PathBuf, why: String| BenchError::Locate { path: path.clone(), why };

    // every file located by the library once: the offsets all ways must find
    let mut want = Vec::with_capacity(files.len());
    for p in &files {
        want.push(
            direct::locate_via(p, &dl, &layout, Some(&grid), Via::Library)
                .map_err(|w| fail(p, w))?
                .1
                .offset()
                .unwrap_or(0),
        );
    }
    let check = Check { files: &files, dl: &dl, layout: &layout, grid: &grid, want: &want };
    let n_forked = (threads / 4).clamp(1, 4); // as the pipeline forks them
    let mut ways = Vec::new();
    let plan: Vec<(&str, usize)> =
        vec![("parser", 1), ("parser", threads), ("libhdf5 in-process", 1), ("libhdf5 forked", n_forked)];
    let wanted = |name: &str| match &args.only {
        Some(prefix) => name.starts_with(prefix.as_str()),
        None => true,
    };
    for (name, n) in plan.into_iter().filter(|(name, _)| wanted(name)) {
        let mut passes = Vec::new();
        let mut cpus = Vec::new();
        for _ in 0..args.repeats.max(1) {
            let (c0, t0) = (cpu_seconds(), Instant::now());
            match name {
                "parser" => check.in_process(Via::ParserOnly, n)?,
                "libhdf5 in-process" => check.in_process(Via::Library, n)?,
                _ => check.forked(n)?,
            }
            passes.push(t0.elapsed().as_secs_f64());
            cpus.push(cpu_seconds() - c0);
        }
        let median = crate::bench::kernel::median(&passes);
        let at = passes.iter().position(|&p| p == median).unwrap_or(0);
        ways.push(Way {
            name: name.into(),
            threads: n,
            us_per_file: median / files.len() as f64 * 1e6,
            median_seconds: median,
            cpu_seconds: cpus[at],
            passes,
        });
    }
    let bench = LocateBench { files: files.len(), ways };
    if let Some(path) = &args.json {
        super::write_record(&bench, path)?;
    }
    Ok(bench)
}
