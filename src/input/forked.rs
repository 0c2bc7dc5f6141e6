//! Forked reader processes: the fallback read path for files libnetcdf must decode itself
//! (chunked or compressed variables, NetCDF-3 record variables).
//!
//! libnetcdf and libhdf5 are not thread-safe, so reading in threads serializes on one global
//! lock. Here each batch of files is read by a short-lived child process forked from the
//! calling thread: the child opens each file with its own copy of the library, checks it like
//! the first file (shape, and grid when asked), reads the region and decodes it straight into
//! its rows of the pool, an anonymous `MAP_SHARED` mapping made before the fork
//! ([`Pool::new_shared`]). It reports every finished file on a pipe and leaves with `_exit`
//! (no destructors, no atexit handlers, no flushing of the parent's open files).
//!
//! At most [`ReaderOptions::readers`] children live at once, each for
//! [`ReaderOptions::files_per_child`] files, so a rank stays within Slurm's cgroup process
//! limits. The first failure ends the read: the child's message (file, variable, cause) comes
//! back as [`ReaderError::File`]; a child that dies without a message (a signal, an exit) is
//! noticed by the end of its pipe and `waitpid`. Every other child is then killed and every
//! child is reaped, on every path out of [`read_forked`] (errors and panics included).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

use self::reader::{reader_main, u64_at, Times, DONE, DONE_LEN, FAILED, FAILED_HEAD};
use super::child::{secs, signal_name};
use super::grid::Grid;
use super::layout::VarLayout;
use super::read::Region;
use crate::pool::{Pool, Sample};

mod reader;

/// How many reader processes, and how many files each reads before it exits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Reader processes alive at once (at least 1).
    pub readers: usize,
    /// Files one process reads before it exits (at least 1).
    pub files_per_child: usize,
    /// Test hook (see [`crate::util::knobs::TEST_READER_SIGNAL`]): the reader given this slot kills itself.
    #[doc(hidden)]
    pub test_kill_slot: Option<usize>,
    /// Test hook: that reader stops itself (SIGSTOP) instead.
    #[doc(hidden)]
    pub test_stop: bool,
    /// A reader that reports nothing for this long is killed ([`ReaderError::Stalled`]).
    pub timeout: std::time::Duration,
}

impl ReaderOptions {
    pub fn new(readers: usize, files_per_child: usize) -> Self {
        ReaderOptions {
            readers: readers.max(1),
            files_per_child: files_per_child.max(1),
            test_kill_slot: None,
            test_stop: false,
            timeout: crate::util::knobs::reader_timeout(),
        }
    }

    /// These options with the test hook [`crate::util::knobs::TEST_READER_SIGNAL`] applied when it is set.
    pub fn test_hook_from_env(mut self) -> Self {
        let value = crate::util::knobs::test_reader_signal().unwrap_or_default();
        let (slot, how) = value.trim().split_once(':').unwrap_or((value.trim(), ""));
        self.test_kill_slot = slot.parse().ok();
        self.test_stop = how.eq_ignore_ascii_case("stop");
        self
    }
}

impl Default for ReaderOptions {
    /// One reader per core available to this process, 32 files each.
    fn default() -> Self {
        ReaderOptions::new(std::thread::available_parallelism().map_or(1, |n| n.get()), 32)
    }
}

/// Why forked reading failed.
#[derive(Debug, thiserror::Error)]
pub enum ReaderError {
    /// A reader could not read or check a file; `message` is the input error as the reader
    /// wrote it (it names the file and the variable).
    #[error("{message}")]
    File { path: PathBuf, slot: usize, message: String },
    #[error("reader process {pid} was killed by signal {signal} ({}) while reading {}", signal_name(*signal), list(files))]
    Signal { pid: i32, signal: i32, files: Vec<PathBuf> },
    #[error("reader process {pid} made no progress for {} s while reading {}: killed", secs(*waited), file.display())]
    Stalled { pid: i32, waited: std::time::Duration, file: PathBuf },
    #[error("reader process {pid} exited with status {code} before finishing {}", list(files))]
    Exited { pid: i32, code: i32, files: Vec<PathBuf> },
    #[error("reader process {pid} sent a malformed report ({detail}) while reading {}", list(files))]
    Protocol { pid: i32, detail: String, files: Vec<PathBuf> },
    #[error("forked readers need a pool in shared memory (Pool::new_shared); this pool is private to the process")]
    PrivatePool,
    #[error("the pool has {pool_cells} cells per slot but the region has {region_cells}")]
    PoolShape { pool_cells: usize, region_cells: usize },
    #[error("{}: pool slot {slot} {problem}", path.display())]
    BadSlot { path: PathBuf, slot: usize, problem: String },
    #[error("cannot {what} for a reader process: {cause}")]
    System { what: &'static str, cause: io::Error },
}

/// Up to four file names, then how many more.
fn list(files: &[PathBuf]) -> String {
    let mut s: Vec<String> = files.iter().take(4).map(|p| p.display().to_string()).collect();
    if files.len() > 4 {
        s.push(format!("and {} more", files.len() - 4));
    }
    if s.is_empty() {
        "no file".into()
    } else {
        s.join(", ")
    }
}

/// What every reader needs to know about the job.
struct Job<'a> {
    expected: &'a VarLayout,
    first: &'a Path,
    check_grid: Option<&'a Grid>,
    region: &'a Region,
    kill_slot: Option<usize>,
    stop: bool,
}

/// A pool slot, the file it is read from and the time step within that file.
pub type SlotStep = (usize, PathBuf, usize);

/// Read `region` of every file in `files` (each with its pool slot) into `pool` using forked
/// reader processes. Each file gets the checks of the library read path: the variable
/// `expected.name` with the shape of `expected` (from `first`), and the grid `check_grid` when
/// given. `progress(slot, bytes)` is called in this process as each file is complete in the
/// pool, in no particular order. Returns the bytes of stored data read.
///
/// Call it from the thread that owns the work: the fork happens on the calling thread, while it
/// holds the libnetcdf/libhdf5 lock (so no other thread is inside the library at that moment).
#[allow(clippy::too_many_arguments)]
pub fn read_forked<T: Sample>(
    files: &[(usize, PathBuf)],
    expected: &VarLayout,
    first: &Path,
    check_grid: Option<&Grid>,
    region: &Region,
    pool: &mut Pool<T>,
    opts: &ReaderOptions,
    progress: &mut dyn FnMut(usize, u64),
) -> Result<u64, ReaderError> {
    let dest = SharedRows {
        base: pool.as_mut_slice().as_mut_ptr(),
        n_slots: pool.n_slots(),
        n_cells: pool.n_cells(),
        shared: pool.is_shared(),
    };
    // SAFETY: `pool` is borrowed mutably for the call, so nothing else touches its rows.
    unsafe { read_forked_into(files, expected, first, check_grid, region, dest, opts, progress) }
}

/// Pool rows that forked readers write: `n_slots` rows of `n_cells` values at `base`.
#[derive(Clone, Copy)]
pub struct SharedRows<T> {
    pub base: *mut T,
    pub n_slots: usize,
    pub n_cells: usize,
    /// Whether the memory is a `MAP_SHARED` mapping (writes by children reach this process).
    pub shared: bool,
}

/// [`read_forked`] into rows given by address, for callers that read other rows of the same
/// pool while files are being read (the overlapped pipeline).
///
/// # Safety
/// `dest` must describe live memory (shared when `dest.shared`) that stays mapped for the
/// call, and no other code may access the rows of `files`' slots until each is reported
/// through `progress`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn read_forked_into<T: Sample>(
    files: &[(usize, PathBuf)],
    expected: &VarLayout,
    first: &Path,
    check_grid: Option<&Grid>,
    region: &Region,
    dest: SharedRows<T>,
    opts: &ReaderOptions,
    progress: &mut dyn FnMut(usize, u64),
) -> Result<u64, ReaderError> {
    let files: Vec<SlotStep> = files.iter().map(|(slot, path)| (*slot, path.clone(), 0)).collect();
    // SAFETY: the caller's promise, passed on.
    unsafe { read_forked_steps_into(&files, expected, first, check_grid, region, dest, opts, progress, &mut |_| {}) }
}

/// [`read_forked_into`] of time step `step` of each `(slot, path, step)`. A reader process
/// opens and checks a file once for consecutive entries of its batch that name it, so a
/// batch of several steps of one file (a yearly file's days) costs one open. `events` hears of
/// each fork and of where each child's time went on each file (for the run's trace).
///
/// # Safety
/// As [`read_forked_into`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn read_forked_steps_into<T: Sample>(
    files: &[SlotStep],
    expected: &VarLayout,
    first: &Path,
    check_grid: Option<&Grid>,
    region: &Region,
    dest: SharedRows<T>,
    opts: &ReaderOptions,
    progress: &mut dyn FnMut(usize, u64),
    events: &mut dyn FnMut(ReaderEvent),
) -> Result<u64, ReaderError> {
    if !dest.shared {
        return Err(ReaderError::PrivatePool);
    }
    if dest.n_cells != region.n_cells() {
        return Err(ReaderError::PoolShape { pool_cells: dest.n_cells, region_cells: region.n_cells() });
    }
    let mut taken = vec![false; dest.n_slots];
    for (slot, path, _) in files {
        let problem = match taken.get_mut(*slot) {
            None => format!("is outside the pool ({} slots)", dest.n_slots),
            Some(true) => "is given to two files".into(),
            Some(t) => {
                *t = true;
                continue;
            }
        };
        return Err(ReaderError::BadSlot { path: path.clone(), slot: *slot, problem });
    }
    let (n_cells, base) = (dest.n_cells, dest.base);
    let job = Job { expected, first, check_grid, region, kill_slot: opts.test_kill_slot, stop: opts.test_stop };
    let mut batches = files.chunks(opts.files_per_child.max(1));
    let mut readers = Readers { live: Vec::new(), timeout: opts.timeout };
    let mut bytes = 0;
    loop {
        while readers.live.len() < opts.readers.max(1) {
            let Some(batch) = batches.next() else { break };
            let reader = spawn(batch, base, n_cells, &job)?;
            events(ReaderEvent::Forked {
                pid: reader.pid,
                files: batch.len(),
                start: reader.forked,
                end: Instant::now(),
            });
            readers.live.push(reader);
        }
        if readers.live.is_empty() {
            return Ok(bytes);
        }
        readers.step(&mut |file| {
            bytes += file.bytes;
            progress(file.slot, file.bytes);
            events(ReaderEvent::File(file));
        })?;
    }
}

/// What [`read_forked_steps_into`] tells its caller about the reader processes.
#[derive(Clone, Debug)]
pub enum ReaderEvent {
    /// A reader for `files` files was forked: the parent's `fork` ran from `start` to `end`.
    Forked { pid: i32, files: usize, start: Instant, end: Instant },
    /// A reader finished a file.
    File(ChildFile),
}

/// Where a reader process's time on one file went.
#[derive(Clone, Debug)]
pub struct ChildFile {
    pub slot: usize,
    pub pid: i32,
    /// Bytes of stored data read.
    pub bytes: u64,
    /// The child began the file.
    pub start: Instant,
    /// Opening and checking it (zero for further steps of a file already open).
    pub open: Duration,
    /// The library's read of the region (`nc_get_vara`: chunk reads, inflating).
    pub read: Duration,
    /// Decoding into the pool row.
    pub decode: Duration,
    /// The child's processor time on the file.
    pub cpu: Duration,
    /// The file was complete in the pool.
    pub end: Instant,
}

/// One reader process and what it has reported.
struct Reader<'a> {
    pid: libc::pid_t,
    /// When the parent began forking it (the child's times count from here).
    forked: Instant,
    pipe: OwnedFd,
    files: &'a [SlotStep],
    done: Vec<bool>,
    buf: Vec<u8>,
    /// When it last reported (or started).
    last: std::time::Instant,
}

impl Reader<'_> {
    fn unfinished(&self) -> Vec<PathBuf> {
        self.files.iter().zip(&self.done).filter(|(_, d)| !**d).map(|((_, p, _), _)| p.clone()).collect()
    }

    fn protocol(&self, detail: &str) -> ReaderError {
        ReaderError::Protocol { pid: self.pid, detail: detail.into(), files: self.unfinished() }
    }

    /// Handle every complete message in the buffer.
    fn parse(&mut self, on_done: &mut dyn FnMut(ChildFile)) -> Result<(), ReaderError> {
        let mut at = 0;
        let result = loop {
            let rest = &self.buf[at..];
            match rest.first() {
                None => break Ok(()),
                Some(&DONE) if rest.len() >= DONE_LEN => {
                    let slot = u64_at(rest, 1) as usize;
                    let bytes = u64_at(rest, 9);
                    let t = Times::from_message(rest);
                    at += DONE_LEN;
                    match self.files.iter().position(|(s, _, _)| *s == slot) {
                        Some(i) if !self.done[i] => {
                            self.done[i] = true;
                            let at = |ns: u64| self.forked + Duration::from_nanos(ns);
                            on_done(ChildFile {
                                slot,
                                pid: self.pid,
                                bytes,
                                start: at(t.start),
                                open: Duration::from_nanos(t.open),
                                read: Duration::from_nanos(t.read),
                                decode: Duration::from_nanos(t.decode),
                                cpu: Duration::from_nanos(t.cpu),
                                end: at(t.end),
                            });
                        }
                        _ => break Err(self.protocol(&format!("slot {slot} is not one of its files"))),
                    }
                }
                Some(&FAILED) if rest.len() >= FAILED_HEAD => {
                    let slot = u64_at(rest, 1) as usize;
                    let len = u64_at(rest, 9) as usize;
                    if rest.len() < FAILED_HEAD + len {
                        break Ok(());
                    }
                    let message = String::from_utf8_lossy(&rest[FAILED_HEAD..FAILED_HEAD + len]).into_owned();
                    let path = match self.files.iter().find(|(s, _, _)| *s == slot) {
                        Some((_, p, _)) => p.clone(),
                        None => break Err(self.protocol(&format!("slot {slot} is not one of its files"))),
                    };
                    break Err(ReaderError::File { path, slot, message });
                }
                Some(&DONE) | Some(&FAILED) => break Ok(()),
                Some(other) => break Err(self.protocol(&format!("unknown message type {other}"))),
            }
        };
        self.buf.drain(..at);
        result
    }

    /// The reader's pipe is closed: reap it and judge how it ended.
    fn finish(&mut self) -> Result<(), ReaderError> {
        let pid = self.pid;
        let status = reap(pid);
        self.pid = 0; // reaped: nothing left to kill
        let files = self.unfinished();
        match status {
            Some((_, st)) if libc::WIFSIGNALED(st) => {
                Err(ReaderError::Signal { pid, signal: libc::WTERMSIG(st), files: self.files_or_all(files) })
            }
            Some((_, st)) if libc::WIFEXITED(st) && libc::WEXITSTATUS(st) != 0 => {
                Err(ReaderError::Exited { pid, code: libc::WEXITSTATUS(st), files: self.files_or_all(files) })
            }
            _ if !self.buf.is_empty() => Err(ReaderError::Protocol {
                pid,
                detail: "an incomplete message".into(),
                files: self.files_or_all(files),
            }),
            // exit status 0, or unknown (SIGCHLD ignored): complete only if every file came in
            _ if files.is_empty() => Ok(()),
            Some(_) => Err(ReaderError::Exited { pid, code: 0, files }),
            None => Err(ReaderError::Exited { pid, code: -1, files }),
        }
    }

    /// `files`, or every file the reader held when it had reported them all.
    fn files_or_all(&self, files: Vec<PathBuf>) -> Vec<PathBuf> {
        if files.is_empty() {
            self.files.iter().map(|(_, p, _)| p.clone()).collect()
        } else {
            files
        }
    }
}

/// The live readers. Dropping it kills and reaps every one still running, so no path out of
/// [`read_forked`] (error or panic) leaves a child running or a zombie behind.
struct Readers<'a> {
    live: Vec<Reader<'a>>,
    /// How long a reader may report nothing before it is killed.
    timeout: std::time::Duration,
}

impl Readers<'_> {
    /// Wait for news from any reader and handle it.
    fn step(&mut self, on_done: &mut dyn FnMut(ChildFile)) -> Result<(), ReaderError> {
        let mut fds: Vec<libc::pollfd> = self
            .live
            .iter()
            .map(|r| libc::pollfd { fd: r.pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        // a reader that stopped (SIGSTOP, a hung file system) would otherwise be waited for
        // forever: wake by the time the quietest one runs out of time
        let now = std::time::Instant::now();
        if let Some(r) = self.live.iter().find(|r| now.duration_since(r.last) >= self.timeout) {
            let file = r.unfinished().into_iter().next().unwrap_or_else(|| r.files[0].1.clone());
            // the reader is killed and reaped as `self` drops on the way out
            return Err(ReaderError::Stalled { pid: r.pid, waited: self.timeout, file });
        }
        let wait = self.live.iter().map(|r| self.timeout.saturating_sub(now.duration_since(r.last))).min();
        let ms = wait.map_or(-1, |w| (w.as_millis() + 1).min(i32::MAX as u128) as i32);
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            let cause = io::Error::last_os_error();
            return if cause.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(ReaderError::System { what: "wait", cause })
            };
        }
        // backwards, so `swap_remove` only moves readers already handled
        for k in (0..fds.len()).rev() {
            if fds[k].revents == 0 {
                continue;
            }
            let mut chunk = [0u8; 8192];
            // SAFETY: reads at most `chunk.len()` bytes into `chunk` from a pipe we own.
            let got = unsafe { libc::read(fds[k].fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            if got < 0 {
                let cause = io::Error::last_os_error();
                if matches!(cause.kind(), io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock) {
                    continue;
                }
                return Err(ReaderError::System { what: "read the report", cause });
            }
            let reader = &mut self.live[k];
            if got > 0 {
                reader.last = std::time::Instant::now();
                reader.buf.extend_from_slice(&chunk[..got as usize]);
                reader.parse(on_done)?;
            } else {
                let result = reader.finish();
                self.live.swap_remove(k);
                result?;
            }
        }
        Ok(())
    }
}

impl Drop for Readers<'_> {
    fn drop(&mut self) {
        for r in self.live.iter().filter(|r| r.pid > 0) {
            // SAFETY: `pid` is our child and not yet reaped, so it cannot be another process.
            unsafe {
                libc::kill(r.pid, libc::SIGKILL);
            }
        }
        for r in self.live.iter_mut().filter(|r| r.pid > 0) {
            reap(r.pid);
            r.pid = 0;
        }
    }
}

/// Wait for the child `pid` to end: its pid and wait status, or `None` when it cannot be
/// waited for (already reaped, e.g. with SIGCHLD ignored).
fn reap(pid: libc::pid_t) -> Option<(libc::pid_t, libc::c_int)> {
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child; `status` is a valid out pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Some((pid, status));
        }
        if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return None;
    }
}

/// Fork a reader for `batch`.
fn spawn<'a, T: Sample>(
    batch: &'a [SlotStep],
    base: *mut T,
    n_cells: usize,
    job: &Job<'_>,
) -> Result<Reader<'a>, ReaderError> {
    // Holding the libnetcdf/libhdf5 lock across the fork: no other thread of this process is
    // inside the library (its state is consistent in the child), and pipes and forks of
    // concurrent callers do not interleave (no child inherits another reader's write end).
    let lock = hdf5_metno_sys::LOCK.lock();
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(ReaderError::System { what: "create a pipe", cause: io::Error::last_os_error() });
    }
    // SAFETY: pipe2 just returned these two descriptors, owned by nothing else.
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let forked = Instant::now();
    // SAFETY: the child only runs `reader_main`, which ends in `_exit`; see there.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // The child owns the (reentrant) lock through this thread: keep it locked, so its own
        // library calls re-enter it and never touch the parked-thread queue of the parent.
        std::mem::forget(lock);
        crate::util::signals::reset_in_child();
        drop(read_end);
        reader_main(batch, write_end.as_raw_fd(), base, n_cells, job, forked);
    }
    drop(write_end);
    drop(lock);
    if pid < 0 {
        return Err(ReaderError::System { what: "fork", cause: io::Error::last_os_error() });
    }
    Ok(Reader {
        pid,
        forked,
        pipe: read_end,
        files: batch,
        done: vec![false; batch.len()],
        buf: Vec::new(),
        last: std::time::Instant::now(),
    })
}

#[cfg(test)]
pub(crate) mod tests;
