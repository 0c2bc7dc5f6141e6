//! The reader process's side of forked reading: the body each child runs (open, check, read,
//! decode into its pool rows), and the messages it sends the parent on its pipe. Every file's
//! report carries where the child's time went (opening and checking, `nc_get_vara`, decoding
//! into the pool, processor time), so a run's trace shows whether the children work or wait.

use std::io;
use std::os::fd::RawFd;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Job, SlotStep};
use crate::input::error::InputError;
use crate::input::layout::VarLayout;
use crate::input::read::decode_region;
use crate::pool::Sample;

/// Messages from a reader: `DONE slot:u64 bytes:u64 times:[u64; 6]` (see [`Times`]) and
/// `FAILED slot:u64 len:u64 message`.
pub(super) const DONE: u8 = b'D';
pub(super) const DONE_LEN: usize = 17 + 8 * TIMES;
pub(super) const FAILED: u8 = b'E';
pub(super) const FAILED_HEAD: usize = 17;
/// Longest error message sent (longer ones are cut).
const MAX_MESSAGE: usize = 16 << 10;
/// Fields of [`Times`] in a `DONE` message.
const TIMES: usize = 6;

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Where a reader process's time on one file went, in nanoseconds; `start` and `end` are
/// counted from the moment the parent began forking it (one monotonic clock for both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Times {
    /// The file's work began (for a process's first file: how long the fork and the child's
    /// start took).
    pub start: u64,
    /// Opening and checking the file (0 for further steps of a file already open).
    pub open: u64,
    /// Reading the region through the library (`nc_get_vara`: chunk reads and inflating).
    pub read: u64,
    /// Decoding into the pool row (unpacking, transposing; first touch of the row's pages).
    pub decode: u64,
    /// Processor time the child used on the file.
    pub cpu: u64,
    /// The file was complete in the pool.
    pub end: u64,
}

impl Times {
    fn to_words(self) -> [u64; TIMES] {
        [self.start, self.open, self.read, self.decode, self.cpu, self.end]
    }

    /// The times in a `DONE` message (whose fields start at byte 17).
    pub(super) fn from_message(msg: &[u8]) -> Times {
        let w = |i: usize| u64_at(msg, 17 + 8 * i);
        Times { start: w(0), open: w(1), read: w(2), decode: w(3), cpu: w(4), end: w(5) }
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// Processor time of this process (the child has one thread), in nanoseconds.
fn cpu_nanos() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which lives on this stack frame.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The body of a reader process: read, check and decode each file into its pool row, report
/// it, and leave with `_exit` (never returning into the parent's code, never unwinding).
/// `forked` is when the parent began forking it.
pub(super) fn reader_main<T: Sample>(
    batch: &[SlotStep],
    fd: RawFd,
    base: *mut T,
    n_cells: usize,
    job: &Job<'_>,
    forked: Instant,
) -> ! {
    let current = std::cell::Cell::new(None);
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| -> Result<(), (usize, String)> {
        // the file last opened and checked, kept for the next entries naming it
        let mut open: Option<(&Path, netcdf::File, VarLayout)> = None;
        for (slot, path, step) in batch {
            current.set(Some(*slot));
            if job.kill_slot == Some(*slot) {
                // SAFETY: raising a signal on ourselves (the test hook).
                unsafe {
                    libc::raise(if job.stop { libc::SIGSTOP } else { libc::SIGKILL });
                }
            }
            let (t0, cpu0) = (Instant::now(), cpu_nanos());
            // SAFETY: the slot was checked to lie inside the pool and to belong to this file
            // only, so this row is written by this process alone; the parent does not touch it
            // until the report below.
            let dest = unsafe { std::slice::from_raw_parts_mut(base.add(slot * n_cells), n_cells) };
            if open.as_ref().map_or(true, |(p, _, _)| *p != path.as_path()) {
                drop(open.take()); // closed before the next one opens
                let (file, layout) = open_checked::<T>(path, job).map_err(|e| (*slot, e.to_string()))?;
                open = Some((path.as_path(), file, layout));
            }
            let t1 = Instant::now();
            let (_, file, layout) = open.as_ref().expect("opened just above");
            let raw = crate::input::checked::read_step(file, path, layout, job.region, *step)
                .map_err(|e| (*slot, e.to_string()))?;
            let t2 = Instant::now();
            decode_region(layout, job.region, &raw, dest);
            let t3 = Instant::now();
            let times = Times {
                start: nanos(t0.saturating_duration_since(forked)),
                open: nanos(t1 - t0),
                read: nanos(t2 - t1),
                decode: nanos(t3 - t2),
                cpu: cpu_nanos().saturating_sub(cpu0),
                end: nanos(t3.saturating_duration_since(forked)),
            };
            let mut msg = [0u8; DONE_LEN];
            msg[0] = DONE;
            msg[1..9].copy_from_slice(&(*slot as u64).to_le_bytes());
            msg[9..17].copy_from_slice(&(raw.bytes() as u64).to_le_bytes());
            for (i, w) in times.to_words().into_iter().enumerate() {
                msg[17 + 8 * i..25 + 8 * i].copy_from_slice(&w.to_le_bytes());
            }
            if !send(fd, &msg) {
                return Err((*slot, String::new())); // the parent is gone
            }
        }
        Ok(())
    }));
    let failed = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(failure)) => Some((failure, 2)),
        Err(_) => Some(((current.get().unwrap_or(0), "a reader process panicked".to_string()), 3)),
    };
    let code = match failed {
        None => 0,
        Some(((slot, mut message), code)) => {
            if !message.is_empty() {
                if message.len() > MAX_MESSAGE {
                    let mut end = MAX_MESSAGE;
                    while !message.is_char_boundary(end) {
                        end -= 1;
                    }
                    message.truncate(end);
                }
                let mut msg = Vec::with_capacity(FAILED_HEAD + message.len());
                msg.push(FAILED);
                msg.extend_from_slice(&(slot as u64).to_le_bytes());
                msg.extend_from_slice(&(message.len() as u64).to_le_bytes());
                msg.extend_from_slice(message.as_bytes());
                send(fd, &msg);
            }
            code
        }
    };
    // SAFETY: ends this process at once: no destructors, atexit handlers or stdio flushing,
    // which belong to the parent (its open output files, MPI, buffered output).
    unsafe { libc::_exit(code) }
}

/// Write all of `msg` to `fd`; false when the parent is gone.
fn send(fd: RawFd, msg: &[u8]) -> bool {
    let mut at = 0;
    while at < msg.len() {
        // SAFETY: writes from a valid buffer to our own pipe.
        let n = unsafe { libc::write(fd, msg[at..].as_ptr().cast(), msg.len() - at) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        at += n as usize;
    }
    true
}

/// Open `path` and check it like the first file (the variable's shape, and the grid when
/// asked; the pool's packing).
fn open_checked<T: Sample>(path: &Path, job: &Job<'_>) -> Result<(netcdf::File, VarLayout), InputError> {
    let (file, layout) = crate::input::checked::open_checked(path, job.expected, job.first, job.check_grid)?;
    crate::input::checked::check_pool_packing::<T>(path, &layout, job.expected, job.first)?;
    Ok((file, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_survive_the_message() {
        let t = Times { start: 1, open: 2 << 40, read: 3, decode: 4, cpu: 5, end: u64::MAX };
        let mut msg = [0u8; DONE_LEN];
        for (i, w) in t.to_words().into_iter().enumerate() {
            msg[17 + 8 * i..25 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        assert_eq!(Times::from_message(&msg), t);
    }
}
