//! Short-lived child processes for library work that would otherwise serialize on the
//! libnetcdf/libhdf5 lock of this process: querying the layout of every input file (the direct
//! read path) and creating the output files, both while this process reads and computes.
//! Each child has its own copy of the library state, so children run in parallel with each
//! other and with this process's own library calls. The words for how a child ended
//! (`signal_name`, `secs`) are here too, for every kind of child's messages.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::panic::AssertUnwindSafe;

/// Fork a child that runs `body` with the write end of a pipe and leaves with `_exit` (status
/// `body`'s return value, 101 if it panics). Returns the child's pid and the pipe's read end.
///
/// Fork before allocating large private memory the parent then writes (pages shared
/// copy-on-write with a live child are copied on the parent's first write).
///
/// # Safety
/// `body` runs in a copy of this process with only the calling thread: it must not wait for
/// anything another thread of this process would do (locks other than the library lock, which
/// the child holds), and must not rely on destructors running.
pub unsafe fn fork_child(body: impl FnOnce(RawFd) -> i32) -> io::Result<(libc::pid_t, OwnedFd)> {
    // Holding the library lock across the fork: no other thread is inside libnetcdf/libhdf5, so
    // the child's copy of their state is consistent, and no concurrent fork inherits this pipe.
    let lock = hdf5_metno_sys::LOCK.lock();
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 just returned these descriptors, owned by nothing else.
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: the child runs `body` and `_exit`s; see the function's contract.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // the child's only thread owns the (reentrant) lock: its library calls re-enter it
        std::mem::forget(lock);
        crate::util::signals::reset_in_child();
        drop(read_end);
        let fd = std::os::fd::AsRawFd::as_raw_fd(&write_end);
        let code = std::panic::catch_unwind(AssertUnwindSafe(|| body(fd))).unwrap_or(101);
        // SAFETY: leaving without running the parent's destructors or atexit handlers.
        unsafe { libc::_exit(code) };
    }
    drop(write_end);
    drop(lock);
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((pid, read_end))
}

/// Wait for child `pid`; returns whether it exited with status 0.
pub fn reap(pid: libc::pid_t) -> bool {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// A child process that is killed and reaped if dropped before [`Child::wait`].
pub struct Child(Option<libc::pid_t>);

impl Child {
    pub fn new(pid: libc::pid_t) -> Child {
        Child(Some(pid))
    }

    /// Wait for the child; whether it exited with status 0.
    pub fn wait(mut self) -> bool {
        self.0.take().is_some_and(reap)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            kill(pid);
        }
    }
}

/// Kill child `pid` and reap it.
pub fn kill(pid: libc::pid_t) {
    // SAFETY: signalling and waiting for our own child.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    reap(pid);
}

/// Write all of `bytes` to `fd` (false if the reader is gone).
pub fn write_all(fd: RawFd, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: writing from a live buffer to a descriptor we own.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        bytes = &bytes[n as usize..];
    }
    true
}

/// The name of the signal that ended a child, for messages.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        _ => "unnamed",
    }
}

/// Seconds for messages: whole numbers as such, fractions with one decimal.
pub(crate) fn secs(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}

/// Forking tests run one at a time: the forked readers' zombie check looks at every child of
/// this process (every test in the crate that forks takes it).
#[cfg(test)]
static FORKS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The lock of [`FORKS`], for a test that forks.
#[cfg(test)]
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    FORKS.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_child_reports_through_its_pipe_and_exit_status() {
        let _serial = serial();
        // SAFETY: the body only writes to its pipe.
        let (pid, fd) = unsafe { fork_child(|w| i32::from(!write_all(w, b"hello"))) }.unwrap();
        let mut got = String::new();
        std::fs::File::from(fd).read_to_string(&mut got).unwrap();
        assert_eq!(got, "hello");
        assert!(reap(pid));
        // SAFETY: as above.
        let (pid, _fd) = unsafe { fork_child(|_| 3) }.unwrap();
        assert!(!reap(pid));
    }
}
