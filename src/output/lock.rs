//! One job at a time in an output directory.
//!
//! Two jobs writing into one directory would publish each other's files (or half of each), so
//! a job takes `.sstclim.lock` in the output directory before it stages anything and releases
//! it when it ends. The lock file holds the owner's pid, host, start time and command; it is
//! created complete (written under a unique name, then hard-linked into place, which fails if
//! a lock exists), so a reader never sees half a lock. A lock whose owner is a process of this
//! host that no longer runs is stale: it is removed, with the partial files that job left, and
//! named in the log. A lock held by a live process, or by another host (whose processes cannot
//! be checked from here), refuses the job with a message naming the holder.

use std::path::{Path, PathBuf};

use super::publish::is_partial_name;
use super::OutputError;

/// The lock file's name in an output directory.
pub const LOCK_NAME: &str = ".sstclim.lock";

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct JobLock {
    path: PathBuf,
}

/// Who holds a lock, as its file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holder {
    pub pid: i32,
    pub host: String,
    pub started: String,
    pub command: String,
}

impl Holder {
    fn this_process(command: &str) -> Holder {
        Holder {
            pid: std::process::id() as i32,
            host: hostname(),
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
        if self.host != hostname() {
            return false;
        }
        // SAFETY: signal 0 only checks that the process exists.
        let r = unsafe { libc::kill(self.pid, 0) };
        r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
}

/// This host's name (empty where unknown).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl JobLock {
    /// Take the lock of output directory `dir` (which exists) for the job `command`; remove
    /// what a dead job left there (its stale lock and partial files).
    pub fn acquire(dir: &Path, command: &str) -> Result<JobLock, OutputError> {
        let path = dir.join(LOCK_NAME);
        let me = Holder::this_process(command);
        let fail = |cause| OutputError::NotWritable { dir: dir.into(), cause };
        let tmp = dir.join(format!("{LOCK_NAME}.{}.partial", super::publish::job_id()));
        // registered before it exists, so an interruption from here on removes it
        crate::util::signals::on_interrupt_remove(&tmp);
        std::fs::write(&tmp, me.text()).map_err(fail)?;
        let result = (|| {
            for _ in 0..8 {
                match std::fs::hard_link(&tmp, &path) {
                    Ok(()) => {
                        crate::util::signals::on_interrupt_remove(&path);
                        return Ok(JobLock { path: path.clone() });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    // the job holding the lock removed our claim with the partial files it
                    // clears (its name is a partial's): write it again and try again
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir.is_dir() => {
                        std::fs::write(&tmp, me.text()).map_err(fail)?;
                        continue;
                    }
                    Err(e) => return Err(fail(e)),
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                match Holder::parse(&text) {
                    Some(h) if h.is_dead_here() => {
                        tracing::warn!(
                            "{}: removing the lock of job pid {} (started {}: {}), which is no longer running",
                            dir.display(),
                            h.pid,
                            h.started,
                            h.command
                        );
                        let _ = std::fs::remove_file(&path);
                    }
                    Some(h) => return Err(OutputError::Locked { dir: dir.into(), holder: h }),
                    // vanished meanwhile: try again; unreadable: someone else's file
                    None if !path.exists() => {}
                    None => {
                        return Err(OutputError::Locked {
                            dir: dir.into(),
                            holder: Holder { command: "unreadable lock file".into(), ..Holder::default() },
                        })
                    }
                }
            }
            Err(OutputError::Locked {
                dir: dir.into(),
                holder: Holder { command: "another job took the lock meanwhile".into(), ..Holder::default() },
            })
        })();
        let _ = std::fs::remove_file(&tmp);
        crate::util::signals::forget(&tmp);
        let lock = result?;
        remove_stale_partials(dir);
        Ok(lock)
    }
}

impl Drop for JobLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        crate::util::signals::forget(&self.path);
    }
}

/// Remove the partial files and staging directories in `dir`: with the lock held no other job
/// is writing there, so they are what jobs that died left behind.
fn remove_stale_partials(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !is_partial_name(&name) {
            continue;
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
}

#[cfg(test)]
mod tests {
    use super::*;

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

        // a dead process's lock and partials
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id() as i32;
        child.wait().unwrap();
        let stale = Holder { pid: dead, host: hostname(), started: "x".into(), command: "old".into() };
        std::fs::write(dir.path().join(LOCK_NAME), stale.text()).unwrap();
        std::fs::create_dir_all(dir.path().join(".sstclim-job-1-a.partial/x")).unwrap();
        std::fs::write(dir.path().join(".mean_doy001.nc.partial"), "").unwrap();
        std::fs::write(dir.path().join("mean_doy001.nc"), "").unwrap();
        let lock = JobLock::acquire(dir.path(), "new").unwrap();
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        assert!(names.contains(&"mean_doy001.nc".to_string()));
        assert!(!names.iter().any(|n| n.ends_with(".partial")), "{names:?}");
        drop(lock);

        // another host's lock cannot be checked: refused
        let other = Holder { pid: 1, host: "elsewhere".into(), started: "x".into(), command: "c".into() };
        std::fs::write(dir.path().join(LOCK_NAME), other.text()).unwrap();
        let e = JobLock::acquire(dir.path(), "new").unwrap_err();
        assert!(e.to_string().contains("elsewhere"), "{e}");
    }
}
