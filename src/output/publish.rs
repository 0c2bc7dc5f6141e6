//! Publishing a job's outputs all or nothing.
//!
//! A job writes its files under their final names inside a hidden staging directory of the
//! output directory (`.sstclim-job-<id>.partial/`, unique to the job, see [`job_id`]). Only
//! when every file is complete are they made durable (`fsync` of each file and of the staging
//! directory) and moved into place: an existing output is first moved aside into the staging
//! directory's `.previous/`, then the new file renamed over its name. If any step fails, what
//! was already moved is moved back, so the directory holds either the complete previous set or
//! the complete new set; the previous files are removed only once every new one is in place
//! ([`Published::commit`]). MPI ranks publish their own files this way and commit only after
//! every rank has published, rolling back ([`Published::rollback`]) if any rank failed.
//!
//! What is not promised: a power loss in the middle of the renames can leave a mix (each file
//! itself complete: every rename moves an fsynced file), with the previous files still in the
//! staging directory; file systems that ignore `fsync` promise nothing after a power loss.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::OutputError;

/// An identifier unique to this job among the processes that may share an output directory:
/// the pid and the start time (so a reused pid gives another name).
pub fn job_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{}-{:x}", std::process::id(), nanos % (1 << 40))
    })
}

/// A new hidden directory name for this job to stage a set of outputs in, inside `dir`.
pub fn staging_dir(dir: &Path) -> PathBuf {
    static SETS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SETS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!(".sstclim-job-{}-{n}.partial", job_id()))
}

/// Whether `name` (an entry of an output directory) is something an sstclim job stages or
/// leaves while it runs: job and rank staging directories, and the `.NAME.partial` files of
/// earlier versions.
pub fn is_partial_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".partial")
}

/// `fsync` `path` (a file or a directory), naming it on failure.
pub fn sync_path(path: &Path) -> Result<(), OutputError> {
    let fail = |cause| OutputError::Sync { path: path.into(), cause };
    std::fs::File::open(path).map_err(fail)?.sync_all().map_err(fail)
}

/// `fsync` every file of `paths`, on up to `threads` threads (writeback of separate files
/// proceeds in parallel).
pub fn sync_all(paths: &[PathBuf], threads: usize) -> Result<(), OutputError> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, paths.len().max(1)) {
            s.spawn(|| {
                while let Some(p) = paths.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    if let Err(e) = sync_path(p) {
                        failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });
    match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What publishing did, to be undone until committed.
#[derive(Debug)]
pub struct Published {
    /// (staged, target) pairs moved into place, in order.
    placed: Vec<(PathBuf, PathBuf)>,
    /// (target, where the previous file went), in order.
    saved: Vec<(PathBuf, PathBuf)>,
    previous: PathBuf,
    targets: Vec<PathBuf>,
}

/// The `n`-th move of a new file into an output directory fails with EIO when `SSTCLIM_TEST_FAIL_RENAME=n` (a
/// fault-injection hook for the tests; read once).
fn injected_failure() -> Option<std::io::Error> {
    static AT: OnceLock<Option<usize>> = OnceLock::new();
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let at = (*AT.get_or_init(|| crate::util::knobs::test_fail_rename()))?;
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    (n == at).then(|| std::io::Error::from_raw_os_error(libc::EIO))
}

/// Move a new file onto its target.
fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    // the hook counts moves into an output directory, not those between staging directories
    let staged = to.parent().and_then(|d| d.file_name()).is_some_and(|n| is_partial_name(&n.to_string_lossy()));
    match if staged { None } else { injected_failure() } {
        Some(e) => Err(e),
        None => std::fs::rename(from, to),
    }
}

/// Move each staged file onto its target, all or nothing: every staged file is fsynced first;
/// existing targets are moved into `previous` (a directory created here when needed, on the
/// same file system); on any failure everything moved is moved back before the error returns.
/// The target directories are fsynced at the end.
pub fn publish(pairs: &[(PathBuf, PathBuf)], previous: &Path, threads: usize) -> Result<Published, OutputError> {
    publish_files(pairs, previous, threads, false)
}

/// [`publish`], where `synced` says that every staged file was fsynced after its last write
/// (the write stage's own sync): they are not fsynced a second time (their directories still
/// are, and the renames come after both).
pub fn publish_files(
    pairs: &[(PathBuf, PathBuf)],
    previous: &Path,
    threads: usize,
    synced: bool,
) -> Result<Published, OutputError> {
    if !synced {
        let staged: Vec<PathBuf> = pairs.iter().map(|(s, _)| s.clone()).collect();
        sync_all(&staged, threads)?;
    }
    let mut dirs: Vec<&Path> = pairs.iter().filter_map(|(s, _)| s.parent()).collect();
    dirs.dedup();
    for d in &dirs {
        sync_path(d)?;
    }
    let _publishing = crate::util::signals::PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    let mut done = Published {
        placed: Vec::new(),
        saved: Vec::new(),
        previous: previous.into(),
        targets: pairs.iter().map(|(_, t)| t.clone()).collect(),
    };
    for (src, target) in pairs {
        if let Err(e) = done.place(src, target) {
            return Err(match done.undo() {
                Ok(()) => e,
                Err(left) => OutputError::Rollback { first: Box::new(e), previous: previous.into(), left },
            });
        }
    }
    let mut targets: Vec<&Path> = pairs.iter().filter_map(|(_, t)| t.parent()).collect();
    targets.dedup();
    for d in targets {
        if let Err(e) = sync_path(d) {
            return Err(match done.undo() {
                Ok(()) => e,
                Err(left) => OutputError::Rollback { first: Box::new(e), previous: previous.into(), left },
            });
        }
    }
    Ok(done)
}

impl Published {
    fn place(&mut self, src: &Path, target: &Path) -> Result<(), OutputError> {
        let fail = |cause| OutputError::Rename { path: target.into(), cause };
        match std::fs::symlink_metadata(target) {
            Ok(_) => {
                std::fs::create_dir_all(&self.previous).map_err(fail)?;
                let name = target.file_name().expect("output files have names");
                let aside = self.previous.join(format!("{}-{}", self.saved.len(), name.to_string_lossy()));
                std::fs::rename(target, &aside).map_err(fail)?;
                self.saved.push((target.into(), aside));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(fail(e)),
        }
        rename(src, target).map_err(fail)?;
        self.placed.push((src.into(), target.into()));
        Ok(())
    }

    /// Move everything back: new files to their staged names, previous files to their names.
    /// Returns how many could not be moved back.
    fn undo(&mut self) -> Result<(), usize> {
        let mut left = 0;
        for (src, target) in self.placed.drain(..).rev() {
            if std::fs::rename(&target, &src).is_err() && std::fs::remove_file(&target).is_err() {
                left += 1;
            }
        }
        for (target, aside) in self.saved.drain(..).rev() {
            if std::fs::rename(&aside, &target).is_err() {
                left += 1;
            }
        }
        if left == 0 {
            Ok(())
        } else {
            Err(left)
        }
    }

    /// Undo the publication (another rank failed): the previous set is back in place.
    pub fn rollback(mut self) -> Result<(), OutputError> {
        let _publishing = crate::util::signals::PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
        self.undo().map_err(|left| OutputError::RolledBackPartly { previous: self.previous.clone(), left })
    }

    /// Keep the new files: the previous ones are deleted. Returns the published paths.
    pub fn commit(self) -> Vec<PathBuf> {
        if !self.saved.is_empty() {
            let _ = std::fs::remove_dir_all(&self.previous);
        }
        self.targets
    }
}

/// `" (the file system holding DIR is full: N bytes free)"` where that is so, else empty.
pub fn space_hint(path: &Path) -> String {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else { return String::new() };
    // SAFETY: statvfs fills the struct for a valid path string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return String::new();
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    if free < 4 << 20 {
        format!(" (no space left: the file system holding {} has {free} bytes free)", dir.display())
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path, names: &[&str], text: &str) -> Vec<PathBuf> {
        names
            .iter()
            .map(|n| {
                let p = dir.join(n);
                std::fs::write(&p, text).unwrap();
                p
            })
            .collect()
    }

    #[test]
    fn publishing_replaces_the_previous_set_and_rollback_restores_it() {
        let dir = tempfile::tempdir().unwrap();
        let stage = dir.path().join(".stage.partial");
        std::fs::create_dir(&stage).unwrap();
        let old = files(dir.path(), &["a.nc", "b.nc"], "old");
        let new = files(&stage, &["a.nc", "b.nc", "c.nc"], "new");
        let pairs: Vec<(PathBuf, PathBuf)> =
            new.iter().map(|s| (s.clone(), dir.path().join(s.file_name().unwrap()))).collect();
        let p = publish(&pairs, &stage.join(".previous"), 2).unwrap();
        for (_, t) in &pairs {
            assert_eq!(std::fs::read_to_string(t).unwrap(), "new");
        }
        p.rollback().unwrap();
        for t in &old {
            assert_eq!(std::fs::read_to_string(t).unwrap(), "old");
        }
        assert!(!dir.path().join("c.nc").exists());
        for s in &new {
            assert_eq!(std::fs::read_to_string(s).unwrap(), "new");
        }
        let p = publish(&pairs, &stage.join(".previous"), 2).unwrap();
        assert_eq!(p.commit().len(), 3);
        assert!(!stage.join(".previous").exists());
        assert_eq!(std::fs::read_to_string(dir.path().join("a.nc")).unwrap(), "new");
    }

    #[test]
    fn a_failed_move_leaves_the_previous_set() {
        let dir = tempfile::tempdir().unwrap();
        let stage = dir.path().join(".stage.partial");
        std::fs::create_dir(&stage).unwrap();
        files(dir.path(), &["a.nc", "b.nc"], "old");
        let mut new = files(&stage, &["a.nc", "b.nc"], "new");
        new.push(stage.join("missing.nc")); // cannot be synced: nothing moves
        let pairs: Vec<(PathBuf, PathBuf)> =
            new.iter().map(|s| (s.clone(), dir.path().join(s.file_name().unwrap()))).collect();
        assert!(matches!(publish(&pairs, &stage.join(".previous"), 1), Err(OutputError::Sync { .. })));
        // a target that cannot be replaced (a non-empty directory) after two moved
        std::fs::remove_file(stage.join("missing.nc")).ok();
        std::fs::create_dir_all(dir.path().join("z.nc/inside")).unwrap();
        std::fs::write(stage.join("z.nc"), "new").unwrap();
        let mut pairs: Vec<(PathBuf, PathBuf)> = pairs[..2].to_vec();
        pairs.push((stage.join("z.nc"), dir.path().join("z.nc")));
        std::fs::create_dir_all(stage.join(".previous")).unwrap();
        // make moving the directory aside fail: `.previous` not writable is not enough as root,
        // so put a file where the aside name goes
        std::fs::create_dir_all(stage.join(".previous/2-z.nc/x")).unwrap();
        let e = publish(&pairs, &stage.join(".previous"), 1).unwrap_err();
        assert!(matches!(e, OutputError::Rename { .. }), "{e}");
        for n in ["a.nc", "b.nc"] {
            assert_eq!(std::fs::read_to_string(dir.path().join(n)).unwrap(), "old", "{n}");
            assert_eq!(std::fs::read_to_string(stage.join(n)).unwrap(), "new", "{n}");
        }
    }

    #[test]
    fn partial_names_are_recognised() {
        assert!(is_partial_name(".sstclim-job-12-ab.partial"));
        assert!(is_partial_name(".mean_doy152.nc.partial"));
        assert!(is_partial_name(".sstclim-rank1-of-3.partial"));
        assert!(!is_partial_name("mean_doy152.nc"));
        assert!(staging_dir(Path::new("out")).to_string_lossy().starts_with("out/.sstclim-job-"));
    }
}
