//! `sstclim bench-write-floor`: the disk's floor for a job's write stage. It writes files of
//! the same names and sizes as a finished job's outputs (`--like DIR`: same count, same
//! bytes, compressed or not) with no HDF5 and no computation: created in a staging directory,
//! filled with `pwrite` in 8 MiB pieces from `--threads` threads, each made durable (`fsync`),
//! then renamed into place, as the job publishes. The write stage of the job, measured in the
//! same script, is compared with this.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::error::Error;

/// Flags of `sstclim bench-write-floor`.
#[derive(clap::Args, Debug)]
pub struct BenchWriteFloorArgs {
    /// A finished job's output directory: the files to imitate (every `*.nc`).
    #[arg(long)]
    pub like: PathBuf,
    /// Directory to write into (the imitations are deleted after each repeat, outside the
    /// timings).
    #[arg(long)]
    pub dir: PathBuf,
    /// Writing threads (default: the job's default, the cores up to 8).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Repeats (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Write the result as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// What `bench-write-floor` measured.
#[derive(Debug, Serialize)]
pub struct WriteFloor {
    pub files: usize,
    pub bytes: u64,
    pub threads: usize,
    pub seconds: Vec<f64>,
    pub median_seconds: f64,
    pub gb_per_s: f64,
}

impl WriteFloor {
    pub fn table(&self) -> String {
        format!(
            "write floor: {} files, {:.3} GB, {} thread(s): median {:.3} s ({:.2} GB/s); runs {:?}\n",
            self.files,
            self.bytes as f64 / 1e9,
            self.threads,
            self.median_seconds,
            self.gb_per_s,
            self.seconds.iter().map(|s| (s * 1000.0).round() / 1000.0).collect::<Vec<_>>()
        )
    }
}

pub fn bench_write_floor(args: &BenchWriteFloorArgs) -> Result<WriteFloor, Error> {
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |cause| Error::Io { path: path.clone(), cause }
    };
    let mut like: Vec<(String, u64)> = Vec::new();
    for e in std::fs::read_dir(&args.like).map_err(io(&args.like))? {
        let e = e.map_err(io(&args.like))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".nc") {
            like.push((name, e.metadata().map_err(io(&e.path()))?.len()));
        }
    }
    like.sort();
    let threads = args.threads.unwrap_or_else(crate::output::default_write_threads).max(1);
    crate::output::prepare_dir(&args.dir)?;
    // incompressible-looking bytes, so that no file system shortcut applies
    let piece: Vec<u8> = (0..8u64 << 20).map(|i| (crate::util::rng::hash(&[i]) >> 7) as u8).collect();
    let mut seconds = Vec::new();
    for _ in 0..args.repeats.max(1) {
        let staging = args.dir.join(".floor.partial");
        let start = Instant::now();
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        let next = AtomicUsize::new(0);
        let failed = std::sync::Mutex::new(None);
        std::thread::scope(|s| {
            for _ in 0..threads.min(like.len().max(1)) {
                s.spawn(|| {
                    while let Some((name, size)) = like.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let path = staging.join(name);
                        let write = || -> std::io::Result<()> {
                            let f = std::fs::File::create(&path)?;
                            let mut at = 0u64;
                            while at < *size {
                                let n = (piece.len() as u64).min(size - at) as usize;
                                f.write_all_at(&piece[..n], at)?;
                                at += n as u64;
                            }
                            f.sync_all()
                        };
                        if let Err(cause) = write() {
                            failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(Error::Io { path, cause });
                            return;
                        }
                    }
                });
            }
        });
        if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        std::fs::File::open(&staging).and_then(|d| d.sync_all()).map_err(io(&staging))?;
        for (name, _) in &like {
            std::fs::rename(staging.join(name), args.dir.join(name)).map_err(io(&args.dir.join(name)))?;
        }
        std::fs::File::open(&args.dir).and_then(|d| d.sync_all()).map_err(io(&args.dir))?;
        seconds.push(start.elapsed().as_secs_f64());
        for (name, _) in &like {
            let _ = std::fs::remove_file(args.dir.join(name));
        }
        let _ = std::fs::remove_dir(&staging);
        // SAFETY: sync has no preconditions; the next repeat starts with a clean page cache.
        unsafe { libc::sync() };
    }
    let bytes: u64 = like.iter().map(|(_, s)| s).sum();
    let median = crate::bench::kernel::median(&seconds);
    let floor = WriteFloor {
        files: like.len(),
        bytes,
        threads,
        seconds,
        median_seconds: median,
        gb_per_s: bytes as f64 / median / 1e9,
    };
    if let Some(path) = &args.json {
        super::write_record(&floor, path)?;
    }
    Ok(floor)
}
