//! Publishing a job's outputs all or nothing.
//!
//! A job writes its files under their final names inside a hidden staging directory of the
//! output directory (`.sstclim-job-<id>-<n>.partial/`, unique to the job, see
//! [`super::owner`]). Only
//! when every file is complete are they made durable (`fsync` of each file and of the staging
//! directory) and moved into place: an existing output is first moved aside into the staging
//! directory's `.previous/`, then the new file renamed over its name. If any step fails, what
//! was already moved is moved back, so the directory holds either the complete previous set or
//! the complete new set; the previous files are removed only once every new one is in place
//! ([`Published::commit`]). MPI ranks publish their own files this way and commit only after
//! every rank has published, rolling back ([`Published::rollback`]) if any rank failed.
//!
//! An interruption (SIGINT, SIGTERM, SIGHUP) waits while outputs are being moved, and then
//! finds what it must do and say in [`crate::util::signals`]: before the moves, nothing was
//! published; between the moves and the commit, it moves everything back (the previous set is
//! whole again); after the commit, the new set is complete and stays. `--overwrite` replaces
//! files only: an output name that is a directory is refused ([`check_replaceable`]).
//!
//! What is not promised: a power loss in the middle of the renames can leave a mix (each file
//! itself complete: every rename moves an fsynced file), with the previous files still in the
//! staging directory; file systems that ignore `fsync` promise nothing after a power loss.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::owner::{self, Kind};
use super::OutputError;
use crate::util::signals;

/// A new hidden directory name for this job to stage a set of outputs in, inside `dir`.
pub fn staging_dir(dir: &Path) -> PathBuf {
    static SETS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SETS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(owner::partial_name(Kind::Staging(n)))
}

/// Whether `path` lies in a hidden entry a job made ([`owner::owner_of`]): a staging directory,
/// or the directory `events --baseline` computes its climatology in.
fn in_partial(path: &Path) -> bool {
    path.parent().and_then(|d| d.file_name()).is_some_and(|n| owner::owner_of(&n.to_string_lossy()).is_some())
}

/// Refuse what an output may not replace: any existing target without `--overwrite`, and
/// anything but a file (or a link) with it: `--overwrite` replaces files this tool wrote, never
/// a directory. Checked before anything is read, and again as each output moves into place.
pub fn check_replaceable(targets: &[PathBuf], overwrite: bool) -> Result<(), OutputError> {
    let mut existing = Vec::new();
    for t in targets {
        match std::fs::symlink_metadata(t) {
            Ok(m) if !(m.is_file() || m.file_type().is_symlink()) => {
                return Err(OutputError::NotAFile { path: t.clone(), kind: kind_of(&m) })
            }
            Ok(_) => existing.push(t),
            Err(_) => {}
        }
    }
    match existing.first() {
        Some(first) if !overwrite => Err(OutputError::Exists { path: (*first).clone(), count: existing.len() }),
        _ => Ok(()),
    }
}

/// What an entry that is not a file is, for messages.
fn kind_of(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    match () {
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a named pipe",
        _ if t.is_socket() => "a socket",
        _ => "a device",
    }
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

/// The fault-injection hook of the tests, `SSTCLIM_TEST_FAIL_RENAME` (read once): `N`, the N-th
/// move of a new file into an output directory fails with EIO; `N:SIGINT` (or `SIGTERM`,
/// `SIGHUP`), that signal reaches the process at the N-th move, which goes on.
fn injected_failure() -> Option<std::io::Error> {
    static AT: OnceLock<Option<(usize, Option<i32>)>> = OnceLock::new();
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let (at, signal) = (*AT.get_or_init(|| {
        let text = crate::util::knobs::test_fail_rename()?;
        let (n, signal) = text.split_once(':').map_or((text.as_str(), None), |(n, s)| (n, Some(s)));
        let signal = match signal {
            None => None,
            Some("SIGINT") => Some(libc::SIGINT),
            Some("SIGTERM") => Some(libc::SIGTERM),
            Some("SIGHUP") => Some(libc::SIGHUP),
            Some(_) => return None,
        };
        Some((n.parse().ok().filter(|&n| n > 0)?, signal))
    }))?;
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    match signal {
        None => (n == at).then(|| std::io::Error::from_raw_os_error(libc::EIO)),
        Some(sig) if n == at => {
            // SAFETY: signalling this process; the watcher thread takes it (see util::signals)
            unsafe { libc::kill(libc::getpid(), sig) };
            // the watcher has it before this move completes, as a real signal may
            let since = std::time::Instant::now();
            while !signals::interrupting() && since.elapsed() < std::time::Duration::from_secs(5) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            None
        }
        Some(_) => None,
    }
}

/// Move a new file onto its target.
fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    // the hook counts moves into an output directory, not those between staging directories
    match if in_partial(to) { None } else { injected_failure() } {
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
    let _publishing = signals::PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
    let mut done = Published {
        placed: Vec::new(),
        saved: Vec::new(),
        previous: previous.into(),
        targets: pairs.iter().map(|(_, t)| t.clone()).collect(),
    };
    let mut targets: Vec<&Path> = pairs.iter().filter_map(|(_, t)| t.parent()).collect();
    targets.dedup();
    let placed = pairs.iter().try_for_each(|(src, target)| done.place(src, target));
    if let Err(e) = placed.and_then(|()| targets.iter().try_for_each(|d| sync_path(d))) {
        return Err(match done.undo() {
            Ok(()) => e,
            Err(left) => OutputError::Rollback { first: Box::new(e), previous: previous.into(), left },
        });
    }
    // a job's own outputs, not a climatology published into a hidden directory of `events`
    if !pairs.first().is_some_and(|(_, t)| in_partial(t)) {
        signals::published(done.undo_moves());
    }
    Ok(done)
}

impl Published {
    fn place(&mut self, src: &Path, target: &Path) -> Result<(), OutputError> {
        let fail = |cause| OutputError::Rename { path: target.into(), cause };
        match std::fs::symlink_metadata(target) {
            // it may have become one since the job checked (see `check_replaceable`)
            Ok(m) if !(m.is_file() || m.file_type().is_symlink()) => {
                return Err(OutputError::NotAFile { path: target.into(), kind: kind_of(&m) })
            }
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

    /// The moves that put back what was there, in order (what an interruption does).
    fn undo_moves(&self) -> Vec<(PathBuf, PathBuf)> {
        let back = self.placed.iter().rev().map(|(src, target)| (target.clone(), src.clone()));
        back.chain(self.saved.iter().rev().map(|(target, aside)| (aside.clone(), target.clone()))).collect()
    }

    /// Undo the publication (another rank failed): the previous set is back in place.
    pub fn rollback(mut self) -> Result<(), OutputError> {
        let _publishing = signals::PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
        signals::unpublished();
        self.undo().map_err(|left| OutputError::RolledBackPartly { previous: self.previous.clone(), left })
    }

    /// Keep the new files: the previous ones are deleted. Returns the published paths.
    pub fn commit(self) -> Vec<PathBuf> {
        let publishing = signals::PUBLISHING.lock().unwrap_or_else(|e| e.into_inner());
        if signals::interrupting() {
            // the interruption waiting for the lock moves everything back, and ends the process
            drop(publishing);
            signals::wait_for_exit();
        }
        let dir = self.targets.first().and_then(|t| t.parent()).unwrap_or(Path::new("."));
        signals::kept(self.targets.len(), dir);
        drop(publishing);
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
        // a target that cannot be moved aside, after two moved
        std::fs::remove_file(stage.join("missing.nc")).ok();
        std::fs::write(dir.path().join("z.nc"), "old").unwrap();
        std::fs::write(stage.join("z.nc"), "new").unwrap();
        let mut pairs: Vec<(PathBuf, PathBuf)> = pairs[..2].to_vec();
        pairs.push((stage.join("z.nc"), dir.path().join("z.nc")));
        std::fs::create_dir_all(stage.join(".previous")).unwrap();
        // make moving it aside fail: `.previous` not writable is not enough as root, so put a
        // directory where the aside name goes
        std::fs::create_dir_all(stage.join(".previous/2-z.nc/x")).unwrap();
        let e = publish(&pairs, &stage.join(".previous"), 1).unwrap_err();
        assert!(matches!(e, OutputError::Rename { .. }), "{e}");
        for n in ["a.nc", "b.nc", "z.nc"] {
            assert_eq!(std::fs::read_to_string(dir.path().join(n)).unwrap(), "old", "{n}");
            assert_eq!(std::fs::read_to_string(stage.join(n)).unwrap(), "new", "{n}");
        }
    }

    #[test]
    fn staging_directories_are_the_jobs_own() {
        let d = staging_dir(Path::new("out"));
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(".sstclim-job-"), "{name}");
        assert_eq!(owner::owner_of(&name).map(|o| o.pid), Some(std::process::id() as i32));
        assert!(in_partial(&d.join("a.nc")) && !in_partial(Path::new("out/a.nc")));
    }

    #[test]
    fn overwrite_replaces_files_and_links_never_directories() {
        let dir = tempfile::tempdir().unwrap();
        let [file, link, empty, full] = ["f.nc", "l.nc", "e.nc", "d.nc"].map(|n| dir.path().join(n));
        std::fs::write(&file, "x").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        std::fs::create_dir(&empty).unwrap();
        std::fs::create_dir_all(full.join("inside")).unwrap();
        let missing = dir.path().join("m.nc");
        assert!(check_replaceable(&[missing.clone(), file.clone(), link.clone()], true).is_ok());
        let e = check_replaceable(&[missing.clone(), file.clone()], false).unwrap_err();
        assert!(matches!(e, OutputError::Exists { count: 1, .. }), "{e}");
        for d in [&empty, &full] {
            for overwrite in [false, true] {
                let e = check_replaceable(&[file.clone(), d.clone()], overwrite).unwrap_err();
                assert!(e.to_string().contains("is a directory"), "{e}");
            }
        }
        // a directory appearing after the check: publishing refuses it and moves back the rest
        let stage = dir.path().join(".stage.partial");
        std::fs::create_dir(&stage).unwrap();
        let new = files(&stage, &["f.nc", "d.nc"], "new");
        let pairs: Vec<(PathBuf, PathBuf)> = new.iter().cloned().zip([file.clone(), full.clone()]).collect();
        let e = publish(&pairs, &stage.join(".previous"), 1).unwrap_err();
        assert!(matches!(e, OutputError::NotAFile { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        assert!(full.join("inside").is_dir());
    }
}
