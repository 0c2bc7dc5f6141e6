//! `sstclim bench-read`: the pure read floor of a job, the yardstick for the pipeline. Every
//! input file the job needs is read whole with `pread` from all threads into per-thread
//! buffers, with no library and no decoding; the time is what reading alone costs on this
//! machine (warm page cache after the first repeat). The hidden `--decode` also converts every
//! value to float32 as the direct read path does, to tell reading and decoding from the rest of
//! a run. `--inflate` is the floor of compressed inputs: every chunk of the data variable is
//! located (HDF5 metadata parsed), `pread` and unfiltered (inflated, unshuffled, checksums
//! checked) on all threads, with no decoding into a pool.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::discover::discover;
use crate::error::Error;
use crate::input::direct::Unfilter;
use crate::input::h5meta::{Hdf5Meta, Layout};
use crate::plan::values::WindowArgs;
use crate::window::WindowEdges;

/// The input files of a job, named as `sstclim run` names them (shared by the benchmarks that
/// read a job's inputs).
#[derive(clap::Args, Debug)]
pub struct JobInputs {
    /// Input files (template or directory), as for `sstclim run`.
    #[arg(long, short)]
    pub input: String,
    #[command(flatten)]
    pub window: WindowArgs,
}

impl JobInputs {
    /// Every input file the job reads, in date order (an error where there is none).
    pub fn files(&self) -> Result<Vec<PathBuf>, Error> {
        let spec = self.window.spec();
        let inputs = discover(&self.input, None, &|cf| spec.required_dates_in(WindowEdges::Clip, cf), true)?;
        let files: Vec<PathBuf> = inputs.files.values().map(|s| s.path.clone()).collect();
        if files.is_empty() {
            return Err(Error::NoInputs(spec.required_dates().len()));
        }
        Ok(files)
    }
}

/// Flags of `sstclim bench-read`.
#[derive(clap::Args, Debug)]
pub struct BenchReadArgs {
    #[command(flatten)]
    pub job: JobInputs,
    /// Reading threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Timed passes over all files (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Write the result as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also convert every float64 value to float32 as the read path does (1 MiB pieces, into a
    /// reused per-thread row): what reading and decoding cost without the rest of a run.
    #[arg(long, hide = true)]
    pub decode: bool,
    /// The floor of compressed (chunked NetCDF-4) inputs: locate, `pread` and inflate every
    /// chunk of the data variable on all threads, no decoding into a pool.
    #[arg(long, conflicts_with = "decode")]
    pub inflate: bool,
    /// The data variable, for --inflate (default: analysed_sst, else sst).
    #[arg(long)]
    pub var: Option<String>,
}

/// What `bench-read` measured.
#[derive(Debug, Serialize)]
pub struct ReadFloor {
    pub files: usize,
    pub bytes: u64,
    pub threads: usize,
    /// Seconds of each pass, in order.
    pub passes: Vec<f64>,
    pub median_seconds: f64,
    pub gb_per_s: f64,
    /// Bytes the chunks inflated to (--inflate; `bytes` are then the chunks' stored bytes).
    pub inflated_bytes: u64,
}

impl ReadFloor {
    pub fn table(&self) -> String {
        if self.inflated_bytes > 0 {
            return format!(
                "inflate floor: {} files, {:.3} GB stored -> {:.3} GB inflated, {} threads: median {:.3} s \
                 ({:.2} GB/s out); passes {:?}\n",
                self.files,
                self.bytes as f64 / 1e9,
                self.inflated_bytes as f64 / 1e9,
                self.threads,
                self.median_seconds,
                self.inflated_bytes as f64 / self.median_seconds / 1e9,
                self.passes.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>()
            );
        }
        format!(
            "read floor: {} files, {:.2} GB, {} threads: median {:.3} s ({:.1} GB/s); passes {:?}\n",
            self.files,
            self.bytes as f64 / 1e9,
            self.threads,
            self.median_seconds,
            self.gb_per_s,
            self.passes.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>()
        )
    }
}

pub fn bench_read(args: &BenchReadArgs) -> Result<ReadFloor, Error> {
    let files = args.job.files()?;
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let mut passes = Vec::new();
    let (mut bytes, mut inflated_bytes) = (0, 0);
    for _ in 0..args.repeats.max(1) {
        let (secs, n) = if args.inflate {
            let (secs, stored, out) = inflate_pass(&files, threads, args.var.as_deref())?;
            inflated_bytes = out;
            (secs, stored)
        } else if args.decode {
            decode_pass(&files, threads)?
        } else {
            one_pass(&files, threads)?
        };
        passes.push(secs);
        bytes = n;
    }
    let median = crate::bench::kernel::median(&passes);
    let floor = ReadFloor {
        files: files.len(),
        bytes,
        threads,
        passes,
        median_seconds: median,
        gb_per_s: bytes as f64 / median / 1e9,
        inflated_bytes,
    };
    if let Some(path) = &args.json {
        super::write_record(&floor, path)?;
    }
    Ok(floor)
}

/// Read every file once whole; returns seconds and bytes.
fn one_pass(files: &[PathBuf], threads: usize) -> Result<(f64, u64), Error> {
    each_file(files, threads, Vec::new, |f, len, buf: &mut Vec<u8>| {
        buf.resize(len, 0u8);
        f.read_exact_at(buf, 0).map(|_| len as u64)
    })
}

/// Read every file in 1 MiB pieces and convert its values (taken as float64) to float32 in a
/// reused row, as the direct read path does for a float32 pool; returns seconds and bytes.
fn decode_pass(files: &[PathBuf], threads: usize) -> Result<(f64, u64), Error> {
    const PIECE: usize = 1 << 20;
    let scratch = || (vec![0f64; PIECE / 8], Vec::<f32>::new());
    each_file(files, threads, scratch, |f, len, (piece, row)| {
        row.resize(len / 8, 0.0);
        let mut at = 0;
        while at + 8 <= len {
            let n = (PIECE / 8).min((len - at) / 8);
            // SAFETY: f64 has no invalid bit patterns; the byte view covers `n` values.
            let bytes = unsafe { std::slice::from_raw_parts_mut(piece.as_mut_ptr().cast::<u8>(), n * 8) };
            f.read_exact_at(bytes, at as u64)?;
            for (d, v) in row[at / 8..at / 8 + n].iter_mut().zip(&piece[..n]) {
                *d = *v as f32;
            }
            at += n * 8;
        }
        std::hint::black_box(&row);
        Ok(len as u64)
    })
}

/// Locate, read and unfilter every chunk of the data variable of every file; returns seconds,
/// stored bytes and inflated bytes.
fn inflate_pass(files: &[PathBuf], threads: usize, var: Option<&str>) -> Result<(f64, u64, u64), Error> {
    let inflated = AtomicU64::new(0);
    let scratch = || (Unfilter::default(), Vec::<u8>::new());
    let (secs, stored) = each_file(files, threads, scratch, |f, _, (unfilter, stored)| {
        let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
        let meta = Hdf5Meta::open(f).map_err(|e| bad(e.to_string()))?;
        let names: Vec<&str> = var.map_or(vec!["analysed_sst", "sst"], |v| vec![v]);
        let ds = names
            .iter()
            .find_map(|n| meta.dataset(n).ok())
            .ok_or_else(|| bad(format!("no dataset {}", names.join(" or "))))?;
        let Layout::Chunked(ch) = &ds.layout else { return Err(bad(format!("{} storage", ds.layout.name()))) };
        let chunk_len = ch.dims.iter().product::<u64>() as usize * ds.dtype.size;
        let before = unfilter.inflated;
        let mut stored_bytes = 0;
        for c in meta.chunks(&ds).map_err(|e| bad(e.to_string()))? {
            stored.resize(c.size as usize, 0);
            f.read_exact_at(stored, c.addr)?;
            stored_bytes += c.size;
            std::hint::black_box(unfilter.run(&ds.pipeline, c.mask, stored, chunk_len).map_err(bad)?);
        }
        inflated.fetch_add(unfilter.inflated - before, Ordering::Relaxed);
        Ok(stored_bytes)
    })?;
    Ok((secs, stored, inflated.into_inner()))
}

/// Open every file on `threads` threads (each with its own `scratch()`) and hand it to `work`
/// with its length (it returns the bytes it counts); returns seconds and bytes.
fn each_file<S>(
    files: &[PathBuf],
    threads: usize,
    scratch: impl Fn() -> S + Sync,
    work: impl Fn(&File, usize, &mut S) -> std::io::Result<u64> + Sync,
) -> Result<(f64, u64), Error> {
    let next = AtomicUsize::new(0);
    let total = AtomicU64::new(0);
    let start = Instant::now();
    std::thread::scope(|s| -> Result<(), Error> {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<(), Error> {
                    let mut state = scratch();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(path) = files.get(i) else { return Ok(()) };
                        let io = |cause| Error::Io { path: path.clone(), cause };
                        let f = File::open(path).map_err(io)?;
                        let len = f.metadata().map_err(io)?.len() as usize;
                        let n = work(&f, len, &mut state).map_err(io)?;
                        total.fetch_add(n, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().expect("reader thread"))
    })?;
    Ok((start.elapsed().as_secs_f64(), total.into_inner()))
}
