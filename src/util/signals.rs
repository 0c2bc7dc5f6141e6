//! Ending a run cleanly on SIGINT, SIGTERM and SIGHUP (Ctrl-C, `scancel`, a closed terminal).
//!
//! A run stages its outputs in a hidden directory and holds the output directory's lock; killed
//! outright, it would leave both behind. [`install`] blocks the three signals in the calling
//! thread before any other starts (threads inherit the mask) and leaves them to one watcher
//! thread: on a signal it kills this process's child processes (reader and locating
//! processes), removes every path registered with [`on_interrupt_remove`] (staging
//! directories, the lock), prints one line and exits with 128 + the signal's number (130, 143,
//! 129), without waiting for the pipeline's threads: nothing they would still write matters
//! once the staging directory is gone. Forked children unblock the signals again
//! ([`reset_in_child`]) so that they die of them as before.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static CLEANUP: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static INSTALLED: AtomicBool = AtomicBool::new(false);
static QUIET: AtomicBool = AtomicBool::new(false);
/// Set once a signal is being handled: the watcher kills the children and will exit.
static INTERRUPTING: AtomicBool = AtomicBool::new(false);

/// Held while outputs are moved into place: an interruption waits for the moves to finish (or
/// roll back), so the directory holds one complete set either way.
pub static PUBLISHING: Mutex<()> = Mutex::new(());

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn signal_set() -> libc::sigset_t {
    // SAFETY: a sigset_t is plain data, initialised by sigemptyset before use.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Take over SIGINT, SIGTERM and SIGHUP for this process (call before other threads start).
pub fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let set = signal_set();
    // SAFETY: changing the calling thread's signal mask with a valid set.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: waiting on a valid set of signals blocked in every thread.
            if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                interrupted(sig);
            }
        })
        .expect("spawning the signal thread");
}

/// Whether an interruption is reported: not by MPI ranks other than 0, nor once the run has
/// reported its own error (`mpirun` then stops the other ranks with SIGTERM).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::SeqCst);
}

/// In a forked child: the signals end it by default again.
pub fn reset_in_child() {
    if !INSTALLED.load(Ordering::Relaxed) {
        return;
    }
    let set = signal_set();
    // SAFETY: async-signal-safe calls on this (the child's only) thread.
    unsafe {
        for s in SIGNALS {
            libc::signal(s, libc::SIG_DFL);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Remove `path` (a file, or a directory with everything in it) if the run is interrupted.
pub fn on_interrupt_remove(path: &Path) {
    CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).push(path.into());
}

/// `path` needs no removal any more.
pub fn forget(path: &Path) {
    CLEANUP.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != path);
}

fn name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// This process's children, from /proc (reader processes are forked from several threads, so
/// no one list holds them all).
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // the fields after the command (which may hold spaces) start at the last ')'
                stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)) == Some(me.as_str())
            })
        })
        .collect()
}

/// Wait for the exit of an interruption in progress, if one is: a child the watcher killed
/// makes the thread waiting for it fail (a header read "crashed" by SIGKILL), and that error
/// must not be reported in place of the interruption, nor its exit code returned. Returns at
/// once when no signal arrived.
pub fn settle() {
    if INTERRUPTING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

fn interrupted(sig: libc::c_int) -> ! {
    INTERRUPTING.store(true, Ordering::SeqCst);
    let _publishing = PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    for pid in children() {
        // SAFETY: killing and reaping our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
    let paths = std::mem::take(&mut *CLEANUP.lock().unwrap_or_else(|e| e.into_inner()));
    // a thread may still create a file in a staging directory meanwhile: try a few times
    for p in paths.iter().rev() {
        for _ in 0..5 {
            let gone = match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
                Ok(_) => std::fs::remove_file(p),
                Err(_) => Ok(()),
            };
            if gone.is_ok() && !p.exists() {
                break;
            }
        }
    }
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!(
            "error: interrupted by {}: stopped, and removed this run's partial outputs and its lock of the output \
             directory",
            name(sig)
        );
    }
    // SAFETY: leaving at once, without the atexit handlers (HDF5's would close files other
    // threads are writing).
    unsafe { libc::_exit(128 + sig) }
}
