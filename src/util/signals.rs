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
//!
//! Outputs being moved into place hold [`PUBLISHING`]; the watcher waits for it, and then does
//! and says what the publication's state calls for ([`published`], [`kept`],
//! [`unpublished`]): moved but not yet kept, it moves everything back (the previous outputs
//! are whole again); kept, the new set is complete and stays, and the message says so.

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

/// Where this process's publication of outputs stands (changed with [`PUBLISHING`] held).
static PUBLICATION: Mutex<Publication> = Mutex::new(Publication::Nothing);

enum Publication {
    /// Nothing published (or all of it moved back).
    Nothing,
    /// Every output moved into place but not kept yet: the moves (from, to) that put back
    /// what was there, in order.
    Movable(Vec<(PathBuf, PathBuf)>),
    /// Kept: `files` new outputs in `dir`, complete.
    Kept { files: usize, dir: PathBuf },
}

fn publication() -> std::sync::MutexGuard<'static, Publication> {
    PUBLICATION.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every output was moved into place; `undo` puts back what was there (call with
/// [`PUBLISHING`] held).
pub fn published(undo: Vec<(PathBuf, PathBuf)>) {
    *publication() = Publication::Movable(undo);
}

/// The publication was kept: `files` outputs in `dir` (call with [`PUBLISHING`] held).
pub fn kept(files: usize, dir: &Path) {
    let mut p = publication();
    if matches!(*p, Publication::Movable(_)) {
        *p = Publication::Kept { files, dir: dir.into() };
    }
}

/// The publication was moved back (call with [`PUBLISHING`] held).
pub fn unpublished() {
    *publication() = Publication::Nothing;
}

/// Whether a signal is being handled (the process is about to end).
pub fn interrupting() -> bool {
    INTERRUPTING.load(Ordering::SeqCst)
}

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
        wait_for_exit();
    }
}

/// Wait for the interruption in progress to end the process.
pub fn wait_for_exit() -> ! {
    loop {
        std::thread::park();
    }
}

/// Undo a publication not yet kept; what to say about the outputs, and whether the staging
/// directories must stay (they hold previous files that could not be moved back).
fn settle_publication() -> (String, bool) {
    match std::mem::replace(&mut *publication(), Publication::Nothing) {
        Publication::Nothing => {
            ("stopped, and removed this run's partial outputs and its lock of the output directory".to_string(), false)
        }
        Publication::Movable(undo) => {
            let left = undo.iter().filter(|(from, to)| std::fs::rename(from, to).is_err()).count();
            match left {
                0 => (
                    "stopped while moving its outputs into place, and moved them back: the output directory holds \
                     what it held before this run (this run's partial outputs and its lock removed)"
                        .to_string(),
                    false,
                ),
                // keep the staging directories: they hold the previous files that stayed there
                n => (
                    format!(
                        "stopped while moving its outputs into place; {n} file(s) could not be moved back: the \
                         previous files left are in the .previous directory of this run's hidden staging directory"
                    ),
                    true,
                ),
            }
        }
        Publication::Kept { files, dir } => (
            format!(
                "its {files} output file(s) in {} were already published, complete; stopped, and removed its lock of \
                 the output directory",
                dir.display()
            ),
            false,
        ),
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
    let (what, keep) = settle_publication();
    let paths = std::mem::take(&mut *CLEANUP.lock().unwrap_or_else(|e| e.into_inner()));
    // a thread may still create a file in a staging directory meanwhile: try a few times
    for p in paths.iter().rev().filter(|_| !keep) {
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
        eprintln!("error: interrupted by {}: {what}", name(sig));
    }
    // SAFETY: leaving at once, without the atexit handlers (HDF5's would close files other
    // threads are writing).
    unsafe { libc::_exit(128 + sig) }
}
