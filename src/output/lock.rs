//! One job at a time in an output directory.
//!
//! Two jobs writing into one directory would publish each other's files (or half of each), so
//! a job takes `.sstclim.lock` in the output directory before it stages anything and releases
//! it when it ends. The lock file holds the owner's pid, host, start time and command. A lock
//! held by a live process, or by another host (whose processes cannot be checked from here),
//! refuses the job with a message naming the holder.
//!
//! Taking it is atomic, over no lock and over a stale one alike:
//! - a job writes its lock complete under a name of its own ([`Kind::LockClaim`]) and
//!   hard-links it to `.sstclim.lock`; `link` fails where the name exists, so of jobs racing
//!   for a free lock exactly one succeeds, and no reader ever sees half a lock. `link` is
//!   atomic on the server for NFS and Lustre too.
//! - a lock whose holder is a process of this host that no longer runs is stale, and must be
//!   removed exactly once: "read, see it is dead, remove" alone lets a second job that read the
//!   same stale lock remove the first one's new lock. So a job opens the lock file, reads the
//!   holder from that open file, takes an exclusive `flock` on it, checks that the name still
//!   refers to that same file, and only then removes it and claims again by `link`. A second
//!   job either fails the `flock` (it waits and looks again), or gets it only once the file is
//!   unlinked, and its check then finds another file or none: it can never remove a lock it
//!   has not read.
//!
//! Why `flock` on the lock file rather than for the lock itself: only jobs of the holder's own
//! host ever remove a lock, so the `flock` needs to be coherent only among the processes of one
//! host, which it is on local file systems, NFS, and Lustre mounted with `flock` or
//! `localflock` (the latter is not coherent across nodes, so a lock that is only a `flock`
//! would let jobs on two nodes in at once). Where `flock` is refused (Lustre mounted without
//! it: ENOSYS; ENOLCK, EOPNOTSUPP), a stale lock is not removed: the job is refused, naming the
//! dead holder and the file to remove, which is slower to recover from but never wrong.
//!
//! With the lock held, the entries of [`super::owner`]'s patterns whose job is dead are
//! removed (what a job that died left); nothing else is.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::owner::{self, Kind};
use super::OutputError;
use crate::util::signals;

/// The lock file's name in an output directory.
pub const LOCK_NAME: &str = ".sstclim.lock";

/// How long a job waits for another that is removing a stale lock (microseconds, normally).
const TAKEOVER_WAIT: Duration = Duration::from_secs(10);

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct JobLock {
    path: PathBuf,
    /// The lock file's device and inode: released only while the name is still this file.
    id: (u64, u64),
}

/// Who holds a lock, as its file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holder {
    pub pid: i32,
    pub host: String,
    pub started: String,
    pub command: String,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{}: in use by another sstclim job (pid {} on {}, started {}: {}); wait for it to end, or remove {}/{} if that job is gone",
        dir.display(), holder.pid, holder.host, holder.started, holder.command, dir.display(), LOCK_NAME
    )]
    Locked { dir: PathBuf, holder: Holder },
    #[error(
        "{}: the lock of job pid {} (started {}: {}) is left by a job that no longer runs, but this file system cannot lock files (flock: {cause}) to remove it safely; remove {}/{} if no sstclim job writes there",
        dir.display(), holder.pid, holder.started, holder.command, dir.display(), LOCK_NAME
    )]
    Stale { dir: PathBuf, holder: Holder, cause: std::io::Error },
}

impl Holder {
    fn this_process(command: &str) -> Holder {
        Holder {
            pid: std::process::id() as i32,
            host: owner::hostname(),
            started: super::utc_timestamp(),
            command: command.replace('\n', " "),
        }
    }

    fn text(&self) -> String {
        format!("pid={}\nhost={}\nstarted={}\ncommand={}\n", self.pid, self.host, self.started, self.command)
    }

    fn parse(text: &str) -> Option<Holder> {
        let mut h = Holder::default();
        for line in text.lines() {
            let (key, value) = line.split_once('=')?;
            match key {
                "pid" => h.pid = value.parse().ok()?,
                "host" => h.host = value.into(),
                "started" => h.started = value.into(),
                "command" => h.command = value.into(),
                _ => {}
            }
        }
        (h.pid > 0).then_some(h)
    }

    /// Whether the holder is a process of this host that no longer exists.
    fn is_dead_here(&self) -> bool {
        self.host == owner::hostname() && owner::is_dead(self.pid)
    }
}

/// What looking at an existing lock found.
enum Found {
    /// It is gone (removed here as stale, or released): claim again.
    Gone,
    /// Another job is removing it as stale: look again shortly.
    Busy,
}

impl JobLock {
    /// Take the lock of output directory `dir` (which exists) for the job `command`; remove
    /// what dead jobs left there (a stale lock, their staged entries).
    pub fn acquire(dir: &Path, command: &str) -> Result<JobLock, OutputError> {
        let path = dir.join(LOCK_NAME);
        let me = Holder::this_process(command);
        // one name per call: threads of one process may race too (the tests' do)
        static CLAIMS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = CLAIMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let claim = dir.join(owner::partial_name(Kind::LockClaim(n)));
        // registered before it exists, so an interruption from here on removes it
        signals::on_interrupt_remove(&claim);
        let result = std::fs::write(&claim, me.text())
            .map_err(|cause| OutputError::NotWritable { dir: dir.into(), cause })
            .and_then(|()| claim_lock(dir, &path, &claim));
        let _ = std::fs::remove_file(&claim);
        signals::forget(&claim);
        let lock = result?;
        remove_stale_partials(dir);
        Ok(lock)
    }
}

/// Link `claim` to `path` until it succeeds or a live holder refuses the job.
fn claim_lock(dir: &Path, path: &Path, claim: &Path) -> Result<JobLock, OutputError> {
    let fail = |cause| OutputError::NotWritable { dir: dir.into(), cause };
    let since = Instant::now();
    loop {
        match std::fs::hard_link(claim, path) {
            Ok(()) => {
                signals::on_interrupt_remove(path);
                let m = std::fs::metadata(claim).map_err(fail)?;
                return Ok(JobLock { path: path.into(), id: (m.dev(), m.ino()) });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fail(e)),
        }
        match look_at_lock(dir, path)? {
            Found::Gone => {}
            Found::Busy if since.elapsed() < TAKEOVER_WAIT => std::thread::sleep(Duration::from_millis(2)),
            Found::Busy => {
                let holder = Holder { command: "another job is taking over a stale lock".into(), ..Holder::default() };
                return Err(LockError::Locked { dir: dir.into(), holder }.into());
            }
        }
    }
}

/// The lock `path` exists: refuse the job if its holder lives (or cannot be checked), else
/// remove it, once (see the module's header).
fn look_at_lock(dir: &Path, path: &Path) -> Result<Found, OutputError> {
    let fail = |cause| OutputError::NotWritable { dir: dir.into(), cause };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Gone),
        Err(e) => return Err(fail(e)),
    };
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    let holder = match Holder::parse(&text) {
        Some(h) if h.is_dead_here() => h,
        Some(holder) => return Err(LockError::Locked { dir: dir.into(), holder }.into()),
        None => {
            let holder = Holder { command: "unreadable lock file".into(), ..Holder::default() };
            return Err(LockError::Locked { dir: dir.into(), holder }.into());
        }
    };
    // SAFETY: flock on a descriptor this function owns; released when `file` closes.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let cause = std::io::Error::last_os_error();
        return match cause.raw_os_error() {
            Some(libc::EWOULDBLOCK | libc::EINTR) => Ok(Found::Busy),
            _ => Err(LockError::Stale { dir: dir.into(), holder, cause }.into()),
        };
    }
    // still the file read here? Another job may have removed it and claimed the name since
    let here = file.metadata().map_err(fail)?;
    match std::fs::metadata(path) {
        Ok(m) if (m.dev(), m.ino()) == (here.dev(), here.ino()) => {}
        _ => return Ok(Found::Gone),
    }
    tracing::warn!(
        "{}: removing the lock of job pid {} (started {}: {}), which is no longer running",
        dir.display(),
        holder.pid,
        holder.started,
        holder.command
    );
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(fail(e)),
        _ => Ok(Found::Gone),
    }
}

impl Drop for JobLock {
    fn drop(&mut self) {
        // only our own lock (a user may have removed it, and another job taken the name)
        if std::fs::metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id) {
            let _ = std::fs::remove_file(&self.path);
        }
        signals::forget(&self.path);
    }
}

/// Remove the entries of `dir` that jobs of this host which no longer run left (their staging
/// directories, lock claims, MPI ranks' directories: [`owner::owner_of`]'s names). Any other
/// name is not this tool's, or is a live job's, and stays; those of jobs of other hosts are
/// named in the log, for the user to remove once those jobs are gone.
fn remove_stale_partials(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let (mut removed, mut elsewhere) = (0, Vec::new());
    let here = owner::host_tag(&owner::hostname());
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        match owner::owner_of(&name) {
            Some(o) if o.is_dead_here() => {}
            Some(o) if o.host != here => {
                elsewhere.push(name);
                continue;
            }
            _ => continue,
        }
        let p = entry.path();
        let gone = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&p),
            _ => std::fs::remove_file(&p),
        };
        if gone.is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::warn!("{}: removed {removed} partial output(s) left by a job that did not finish", dir.display());
    }
    if let Some(first) = elsewhere.first() {
        tracing::warn!(
            "{}: {} hidden entries of sstclim jobs on other hosts (such as {first}) left as they are: remove them once \
             those jobs have ended",
            dir.display(),
            elsewhere.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_live_holder_refuses_and_a_dead_one_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let lock = JobLock::acquire(dir.path(), "sstclim run a").unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK_NAME)).unwrap();
        let h = Holder::parse(&text).unwrap();
        assert_eq!(h.pid, std::process::id() as i32);
        assert_eq!(h.command, "sstclim run a");
        let e = JobLock::acquire(dir.path(), "sstclim run b").unwrap_err();
        assert!(e.to_string().contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(e.to_string().contains("sstclim run a"), "{e}");
        drop(lock);
        assert!(!dir.path().join(LOCK_NAME).exists());

        // a dead process's lock and staged entries go; a live one's, and names not ours, stay
        let dead = dead_pid();
        let stale = Holder { pid: dead as i32, host: owner::hostname(), started: "x".into(), command: "old".into() };
        std::fs::write(dir.path().join(LOCK_NAME), stale.text()).unwrap();
        let staged = owner::partial_name_of(Kind::Staging(0), dead);
        std::fs::create_dir_all(dir.path().join(&staged).join("x")).unwrap();
        std::fs::write(dir.path().join(owner::partial_name_of(Kind::LockClaim(0), dead)), "").unwrap();
        let live = owner::partial_name_of(Kind::LockClaim(0), std::process::id());
        let kept = [".mean_doy001.nc.partial", ".notes.partial", "mean_doy001.nc", live.as_str()];
        for name in kept {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let lock = JobLock::acquire(dir.path(), "new").unwrap();
        let mut names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        names.sort();
        let mut expected: Vec<String> = kept.iter().map(|s| s.to_string()).chain([LOCK_NAME.to_string()]).collect();
        expected.sort();
        assert_eq!(names, expected);
        drop(lock);

        // another host's lock cannot be checked: refused
        let other = Holder { pid: 1, host: "elsewhere".into(), started: "x".into(), command: "c".into() };
        std::fs::write(dir.path().join(LOCK_NAME), other.text()).unwrap();
        let e = JobLock::acquire(dir.path(), "new").unwrap_err();
        assert!(e.to_string().contains("elsewhere"), "{e}");
    }

    /// Threads of one process race as jobs do (each `acquire` opens the lock file anew, and a
    /// `flock` belongs to the open file): over a stale lock, exactly one takes it each round.
    #[test]
    fn racing_over_a_stale_lock_exactly_one_wins() {
        let dir = tempfile::tempdir().unwrap();
        for _ in 0..20 {
            let dead = dead_pid();
            let stale =
                Holder { pid: dead as i32, host: owner::hostname(), started: "x".into(), command: "old".into() };
            std::fs::write(dir.path().join(LOCK_NAME), stale.text()).unwrap();
            let barrier = std::sync::Barrier::new(6);
            let won: Vec<Option<JobLock>> = std::thread::scope(|s| {
                let racers: Vec<_> = (0..6)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            JobLock::acquire(dir.path(), "racer").ok()
                        })
                    })
                    .collect();
                racers.into_iter().map(|r| r.join().unwrap()).collect()
            });
            // (one process: the others see a live holder, this one)
            assert_eq!(won.iter().filter(|w| w.is_some()).count(), 1);
        }
    }
}
