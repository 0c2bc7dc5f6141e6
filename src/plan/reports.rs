//! Where a job's reports go (`--timing-json`, `--trace-json`, and the rates file `--rates`
//! names): never onto a file the job reads or writes, and only where they can be written.
//!
//! Why: a report naming an input would replace that input with JSON (and a run that fails
//! removes its reports: the input would be gone); one naming an output would be replaced by
//! that output when the outputs are published, or replace it; one that cannot be written would
//! fail the job only after it computed. So every report path is checked before any input is
//! read, with the flags ([`check_writable`], [`check_before_reading`]): not onto an output, the
//! lock, another report or an `@list` of inputs, nor onto an existing NetCDF or HDF5 file (any
//! input is one, by whatever name or link: discovery itself opens a sample of the inputs, so
//! this is how an input is known before it is read). Once the inputs are found, [`check_inputs`]
//! checks the report paths against them again (one damaged past its signature, say).
//!
//! Two paths are the same file when they are the same directory entry once every link of the
//! directories above them is resolved, or when they are the same inode: a hard link or a
//! symbolic link to an input is that input. Inodes are compared for every input only where the
//! report exists and holds a NetCDF or HDF5 signature, so a job whose report is last run's JSON
//! stats no input file a second time.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::{JobPlan, PlanError};

/// The job's report paths with the flag that names each (the rates file as `--rates`, where
/// the environment may have chosen it).
pub fn reports(plan: &JobPlan) -> Vec<(&'static str, PathBuf)> {
    let flags = [("--timing-json", &plan.timing_json), ("--trace-json", &plan.trace_json), ("--rates", &plan.rates)];
    flags.into_iter().filter_map(|(flag, p)| Some((flag, p.clone()?))).collect()
}

/// Whether a report can be written at `path`: not a directory, in a directory (created if
/// missing, as the output directory is) where files can be created (checked with a probe file,
/// removed at once), and replaceable where it exists.
pub fn check_writable(flag: &'static str, path: &Path) -> Result<(), PlanError> {
    let bad = |problem: String| PlanError::ReportPath { flag, path: path.into(), problem };
    if path.is_dir() {
        return Err(bad("is a directory".into()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(|e| bad(format!("cannot create directory {}: {e}", parent.display())))?;
    let probe = parent.join(format!(".sstclim-report-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| bad(format!("cannot create files in {}: {e}", parent.display())))?;
    let _ = std::fs::remove_file(&probe);
    if path.exists() {
        std::fs::OpenOptions::new().append(true).open(path).map_err(|e| bad(format!("cannot be replaced: {e}")))?;
    }
    Ok(())
}

/// A tool's own report (`compare --json`, `quicklook -o`): writable as [`check_writable`]
/// says, and never onto a NetCDF or HDF5 file (one of the files the tool reads, or any other).
pub fn check_tool_report(flag: &'static str, path: &Path) -> Result<(), PlanError> {
    check_writable(flag, path)?;
    if looks_like_input(path) {
        let problem = "is a NetCDF/HDF5 file: the report would overwrite it".into();
        return Err(PlanError::ReportPath { flag, path: path.into(), problem });
    }
    Ok(())
}

/// No report path names another report, an output this job may write (any of its days), the
/// output directory's lock, a list of inputs, or an existing NetCDF or HDF5 file.
pub fn check_before_reading(plan: &JobPlan) -> Result<(), PlanError> {
    let reports = reports(plan);
    let outputs = crate::output::planned_paths(&plan.output, &plan.stats.names(), &plan.window.doys);
    for (i, (flag, path)) in reports.iter().enumerate() {
        let bad = |problem: String| PlanError::ReportPath { flag, path: path.clone(), problem };
        if let Some((other, _)) = reports[..i].iter().find(|(_, p)| same_file(p, path)) {
            return Err(bad(format!("is the file {other} names too")));
        }
        if same_file(&plan.output.dir.join(crate::output::lock::LOCK_NAME), path) {
            return Err(bad("is the lock of the output directory".into()));
        }
        if let Some(out) = outputs.iter().find(|o| same_file(o, path)) {
            let which = if out == path { String::new() } else { format!(" {}", out.display()) };
            return Err(bad(format!("is{which} an output of this job")));
        }
        if looks_like_input(path) {
            return Err(bad("is a NetCDF/HDF5 file: the report would overwrite it".into()));
        }
    }
    check_inputs(&reports, &plan.source.describe(), &[])
}

/// No report path names an input of the job: a file of `inputs`, or a list of inputs of
/// `input` (the `--input` lines, `@list` files).
pub fn check_inputs(reports: &[(&'static str, PathBuf)], input: &str, inputs: &[&Path]) -> Result<(), PlanError> {
    let lists: Vec<&Path> = input.lines().filter_map(|l| l.strip_prefix('@')).map(Path::new).collect();
    for (flag, path) in reports {
        let bad = |what: &Path| {
            let which = if what == path { String::new() } else { format!(" {}", what.display()) };
            let problem = format!("is{which} an input of this job: the report would overwrite it");
            PlanError::ReportPath { flag, path: path.clone(), problem }
        };
        if let Some(list) = lists.iter().find(|l| same_file(l, path)) {
            return Err(bad(list));
        }
        let here = entry(path);
        if let Some(found) = inputs.iter().find(|i| i.file_name() == here.file_name() && entry(i) == here) {
            return Err(bad(found));
        }
        if let Some(id) = std::fs::metadata(path).ok().filter(|_| looks_like_input(path)).map(|m| (m.dev(), m.ino())) {
            let same = |i: &&&Path| std::fs::metadata(i).is_ok_and(|m| (m.dev(), m.ino()) == id);
            if let Some(found) = inputs.iter().find(same) {
                return Err(bad(found));
            }
        }
    }
    Ok(())
}

/// Whether `a` and `b` are the same file: the same entry, or the same inode where both exist.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => entry(a) == entry(b),
    }
}

/// `path` as an absolute directory entry: the directories above it with every link resolved
/// as far as they exist, and its own name.
fn entry(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.into());
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => resolved(dir).join(name),
        _ => abs,
    }
}

fn resolved(dir: &Path) -> PathBuf {
    if let Ok(real) = dir.canonicalize() {
        return real;
    }
    // what does not exist is taken as written, `..` lexically
    match dir.components().next_back() {
        Some(Component::ParentDir) => dir.parent().and_then(Path::parent).map_or_else(|| dir.into(), resolved),
        Some(Component::Normal(name)) => dir.parent().map_or_else(|| dir.into(), |up| resolved(up).join(name)),
        _ => dir.into(),
    }
}

/// Whether the file at `path` starts as a NetCDF classic or an HDF5 file does (HDF5's
/// signature may follow a user block of 512, 1024, 2048 or 4096 bytes); false where there is
/// no such file.
fn looks_like_input(path: &Path) -> bool {
    let mut head = Vec::with_capacity(4104);
    let read = std::fs::File::open(path).and_then(|f| f.take(4104).read_to_end(&mut head));
    let hdf5 = |at: usize| head.get(at..at + 8) == Some(b"\x89HDF\r\n\x1a\n");
    read.is_ok() && (head.starts_with(b"CDF") || [0, 512, 1024, 2048, 4096].into_iter().any(hdf5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_refused_on_an_input_by_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("data/sst_2001_100.nc");
        std::fs::create_dir_all(input.parent().unwrap()).unwrap();
        std::fs::write(&input, b"\x89HDF\r\n\x1a\n and the rest").unwrap();
        std::fs::write(dir.path().join("list.txt"), "data/sst_2001_100.nc\n").unwrap();
        let hard = dir.path().join("hard.nc");
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = dir.path().join("soft.nc");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        std::os::unix::fs::symlink(dir.path().join("data"), dir.path().join("via")).unwrap();
        let lists = format!("{}\n@{}", dir.path().join("data").display(), dir.path().join("list.txt").display());
        let inputs = [input.as_path()];
        let refused = |p: PathBuf| check_inputs(&[("--timing-json", p)], &lists, &inputs).is_err();
        for p in [input.clone(), hard, soft, dir.path().join("via/sst_2001_100.nc"), dir.path().join("list.txt")] {
            assert!(refused(p.clone()), "{}", p.display());
        }
        assert!(!refused(dir.path().join("data/t.json")));
        assert!(!refused(dir.path().join("data/new/sst_2001_100.nc")));
        let e = check_inputs(&[("--trace-json", input.clone())], &lists, &inputs).unwrap_err();
        assert!(e.to_string().starts_with(&format!("--trace-json {}: is ", input.display())), "{e}");
    }

    #[test]
    fn entries_resolve_the_directories_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(entry(&dir.path().join("x/../a.json")), real.join("a.json"));
        assert_eq!(entry(&dir.path().join("new/a.json")), real.join("new/a.json"));
        assert!(same_file(&dir.path().join("o/mean.nc"), &real.join("o/mean.nc")));
        assert!(!same_file(&dir.path().join("o/mean.nc"), &real.join("o/p90.nc")));
    }
}
