//! Library work on a user's file run in a forked child, so that a file that crashes
//! libnetcdf/libhdf5 (a segfault on a fuzzed header) or panics inside the `netcdf` crate (a
//! name that is not UTF-8) ends the job with one line naming the file, not with a signal or a
//! backtrace of this process.
//!
//! [`contained`] runs a closure in a child forked with [`super::child::fork_child`] (which holds
//! the library lock across the fork, as the forked readers do) and sends its
//! `Result<T, String>` back serialized as JSON over a pipe. A child killed by a signal, one
//! that exits without an answer, or one that makes no progress for
//! [`crate::util::knobs::reader_timeout`] (it is then killed) becomes a [`ContainError`] naming the
//! file. [`survives`] is the canary form for work whose results do not serialize (layouts that
//! hold other modules' types): the child does the work and the caller repeats it in this
//! process only once the child came through. Repeating is safe because the child ran the same
//! code on the same bytes with a copy of this process's library state.
//!
//! The fork happens in a process that may have other threads (a device starting): the child
//! only uses the library (whose lock it holds), the allocator (which glibc makes fork-safe)
//! and its pipe — the same risk the forked readers take.

use std::io;
use std::os::fd::AsRawFd;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::child::{fork_child, secs, signal_name, write_all};

/// Why contained work gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ContainError {
    #[error(
        "{}: {what} crashed the netCDF/HDF5 library (signal {signal}, {}): the file is damaged or not a file it can read",
        path.display(), signal_name(*signal)
    )]
    Signal { path: PathBuf, what: &'static str, signal: i32 },
    #[error("{}: {what} failed inside the netcdf library: {message}", path.display())]
    Panic { path: PathBuf, what: &'static str, message: String },
    #[error("{}: the process {what} exited with status {code} without an answer", path.display())]
    Exited { path: PathBuf, what: &'static str, code: i32 },
    #[error("{}: the process {what} (pid {pid}) made no progress for {} s: killed", path.display(), secs(*waited))]
    Stalled { path: PathBuf, what: &'static str, pid: i32, waited: Duration },
    #[error("{}: cannot {step} for the process {what}: {cause}", path.display())]
    System { path: PathBuf, what: &'static str, step: &'static str, cause: io::Error },
    /// The work itself failed (its message names the file).
    #[error("{message}")]
    Failed { message: String },
}

/// What the child sends back.
#[derive(Serialize, Deserialize)]
enum Answer<T> {
    Done(Result<T, String>),
    Panicked(String),
}

/// Run `work` on `path` in a forked child and return its answer. `what` says what the work
/// is, for messages ("reading the header").
pub fn contained<T, F>(path: &Path, what: &'static str, work: F) -> Result<T, ContainError>
where
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> Result<T, String>,
{
    contained_within(path, what, crate::util::knobs::reader_timeout(), work)
}

/// Run `work` in a forked child as a canary: `Ok(())` once the child finished it, whatever it
/// returned (the caller repeats it here for the typed result), or how the child died.
pub fn survives(path: &Path, what: &'static str, work: impl FnOnce()) -> Result<(), ContainError> {
    contained(path, what, || {
        work();
        Ok(())
    })
}

fn contained_within<T, F>(path: &Path, what: &'static str, timeout: Duration, work: F) -> Result<T, ContainError>
where
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> Result<T, String>,
{
    let system = |step, cause| ContainError::System { path: path.to_path_buf(), what, step, cause };
    let body = |fd| {
        // the default hook would print a panic (a backtrace hint) on stderr: the message goes
        // back to the parent instead, which reports it in its one line
        std::panic::set_hook(Box::new(|_| {}));
        let answer = match std::panic::catch_unwind(AssertUnwindSafe(work)) {
            Ok(result) => Answer::Done(result),
            Err(payload) => Answer::Panicked(panic_text(payload.as_ref())),
        };
        match serde_json::to_vec(&answer) {
            Ok(bytes) if write_all(fd, &bytes) => 0,
            _ => 3,
        }
    };
    // SAFETY: the body only runs `work` (library calls, under the lock the child holds), the
    // allocator and its pipe, and never returns into this process's code (fork_child _exits).
    let (pid, pipe) = unsafe { fork_child(body) }.map_err(|e| system("fork", e))?;
    let mut child = Reaped::new(pid);
    let mut got = Vec::new();
    let start = Instant::now();
    loop {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            // SIGKILL ends a stopped process too
            child.kill();
            return Err(ContainError::Stalled { path: path.to_path_buf(), what, pid, waited: timeout });
        }
        let mut fds = [libc::pollfd { fd: pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
        if n < 0 {
            let cause = io::Error::last_os_error();
            if cause.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(system("wait", cause));
        }
        if n == 0 {
            continue;
        }
        let mut chunk = [0u8; 8192];
        // SAFETY: reads at most `chunk.len()` bytes into `chunk` from our own pipe.
        let r = unsafe { libc::read(pipe.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
        if r < 0 {
            let cause = io::Error::last_os_error();
            if cause.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(system("read the answer", cause));
        }
        if r == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..r as usize]);
    }
    let status = child.wait();
    match status {
        Some(st) if libc::WIFSIGNALED(st) => {
            return Err(ContainError::Signal { path: path.to_path_buf(), what, signal: libc::WTERMSIG(st) })
        }
        Some(st) if libc::WIFEXITED(st) && libc::WEXITSTATUS(st) != 0 => {
            return Err(ContainError::Exited { path: path.to_path_buf(), what, code: libc::WEXITSTATUS(st) })
        }
        _ => {}
    }
    match serde_json::from_slice::<Answer<T>>(&got) {
        Ok(Answer::Done(Ok(t))) => Ok(t),
        Ok(Answer::Done(Err(message))) => Err(ContainError::Failed { message }),
        Ok(Answer::Panicked(message)) => Err(ContainError::Panic { path: path.to_path_buf(), what, message }),
        Err(_) => Err(ContainError::Exited { path: path.to_path_buf(), what, code: 0 }),
    }
}

/// A panic's message, when it has one.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "an unexplained failure".into())
}

/// A child that is killed and reaped when dropped unwaited (every path out of
/// [`contained_within`], panics included, leaves no process behind).
struct Reaped(libc::pid_t);

impl Reaped {
    fn new(pid: libc::pid_t) -> Self {
        Reaped(pid)
    }

    fn kill(&mut self) {
        if self.0 > 0 {
            super::child::kill(self.0);
            self.0 = 0;
        }
    }

    /// Its wait status (`None` when it cannot be waited for, e.g. SIGCHLD ignored).
    fn wait(&mut self) -> Option<libc::c_int> {
        let pid = std::mem::replace(&mut self.0, 0);
        loop {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                return Some(status);
            }
            if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        self.kill();
    }
}

/// [`super::direct::probe_first`] of the first file (its libhdf5 query) in a child first: the
/// probe is repeated here only once the child came through it. Storage the probe proves
/// damaged is [`ContainError::Failed`], naming the file and variable.
pub fn probe_direct(
    path: &Path,
    layout: &super::VarLayout,
) -> Result<Result<super::direct::DirectLayout, super::format::NotDirect>, ContainError> {
    survives(path, "probing the variable's storage", || {
        let _ = super::direct::probe_first(path, layout);
    })?;
    super::direct::probe_first(path, layout).map_err(|e| ContainError::Failed { message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_and_failures_are_named() {
        let _serial = crate::input::child::serial();
        let p = Path::new("/data/x.nc");
        let v: Vec<u32> = contained(p, "counting", || Ok(vec![1, 2, 3])).unwrap();
        assert_eq!(v, [1, 2, 3]);
        let e = contained::<u8, _>(p, "counting", || Err("x.nc: no".into())).unwrap_err();
        assert_eq!(e.to_string(), "x.nc: no");
        let e = contained::<u8, _>(p, "reading the header", || panic!("bad name")).unwrap_err();
        assert_eq!(e.to_string(), "/data/x.nc: reading the header failed inside the netcdf library: bad name");
        let e = contained::<u8, _>(p, "reading the header", || {
            // a real fault, as a library crash is (std's SIGSEGV handler lets a raised one
            // return; a fault re-executes under the default action)
            // SAFETY: deliberately not: the child dies of it.
            unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
            Ok(0)
        })
        .unwrap_err();
        assert!(matches!(e, ContainError::Signal { signal: libc::SIGSEGV, .. }), "{e}");
        assert!(e.to_string().starts_with("/data/x.nc: reading the header crashed"), "{e}");
        assert!(e.to_string().contains("SIGSEGV"), "{e}");
        let e = contained::<u8, _>(p, "reading", || {
            // SAFETY: leaving the child without an answer.
            unsafe { libc::_exit(7) }
        })
        .unwrap_err();
        assert!(matches!(e, ContainError::Exited { code: 7, .. }), "{e}");
    }

    #[test]
    fn a_stopped_child_is_killed_after_the_timeout() {
        let _serial = crate::input::child::serial();
        let start = Instant::now();
        let e = contained_within::<u8, _>(Path::new("f.nc"), "reading the header", Duration::from_millis(300), || {
            // SAFETY: the child stops itself.
            unsafe { libc::raise(libc::SIGSTOP) };
            Ok(0)
        })
        .unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5));
        let ContainError::Stalled { pid, .. } = e else { panic!("{e}") };
        assert!(e.to_string().contains("made no progress for 0.3 s: killed"), "{e}");
        // reaped: no such process (or child) is left
        // SAFETY: probing with signal 0.
        assert_ne!(unsafe { libc::kill(pid, 0) }, 0);
    }
}
