//! What a job does to its output directory, for `sstclim run` and `sstclim events`: the lock
//! under racing jobs (of several started together over a stale lock of a dead pid, or over
//! none, exactly one runs, the others are refused with a message naming it, and what is
//! published is the winner's); which hidden entries it removes (a dead job's own, nothing else:
//! not a user's `.notes.partial`, another program's download, a live job's claim); what
//! `--overwrite` replaces (files, never a directory); and what an interruption while the
//! outputs are moved into place leaves and says (the previous set, whole again).
//!
//! Making the race happen: each racer's stderr is a pipe filled to the brim, so the racer stops
//! at its first message. Over a stale lock that message is the warning that it removes the
//! stale lock, written between deciding the holder is dead and removing it: every racer that
//! decided so waits there, the window a lock that is not atomic leaves open, until the test
//! drains the pipes. The first racer the lock file then names is stopped (SIGSTOP) until every
//! other one has ended, so none can come after the winner released the lock.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use sstclim::output::lock::LOCK_NAME;
use sstclim::output::owner::{self, Kind};

/// A pipe whose write end is full: a child writing to it waits until the read end is read.
/// Returns the read end, the write end and how many bytes fill it.
fn full_pipe() -> (File, OwnedFd, usize) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors, owned from here on; fcntl and write on the write end.
    let (read, write) = unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0);
        (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    let mut filled = 0;
    // SAFETY: as above, on the descriptor `write` owns.
    unsafe {
        libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK);
        for size in [4096, 1] {
            let chunk = vec![b'.'; size];
            loop {
                let n = libc::write(fds[1], chunk.as_ptr().cast(), size);
                if n <= 0 {
                    break;
                }
                filled += n as usize;
            }
        }
        libc::fcntl(fds[1], libc::F_SETFL, 0);
    }
    (read, write, filled)
}

/// Whether a thread of process `pid` waits in `write` (its stderr pipe is full).
fn blocked_writing(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    let write = libc::SYS_write.to_string();
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("syscall"))
            .is_ok_and(|s| s.split_whitespace().next() == Some(write.as_str()))
    })
}

/// The pid the lock file of `out` names.
fn lock_pid(out: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(out.join(LOCK_NAME)).ok()?;
    text.lines().find_map(|l| l.strip_prefix("pid=")).and_then(|p| p.parse().ok())
}

fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: signalling a child of this test.
    unsafe { libc::kill(pid as i32, sig) };
}

struct Racer {
    child: Child,
    pipe: Option<(File, usize)>,
    drained: Option<std::thread::JoinHandle<String>>,
    code: Option<i32>,
}

/// How a racer ended: its pid, exit code and stderr.
type Ended = (u32, Option<i32>, String);

/// Start every job of `jobs` at once into `out`; returns how each ended, and the index of the
/// one the lock named first.
fn race(out: &Path, jobs: &[Vec<String>]) -> (Vec<Ended>, Option<usize>) {
    let mut racers: Vec<Racer> = jobs
        .iter()
        .map(|args| {
            let (read, write, filled) = full_pipe();
            let child = bin().args(args).stdout(Stdio::null()).stderr(Stdio::from(write)).spawn().unwrap();
            Racer { child, pipe: Some((read, filled)), drained: None, code: None }
        })
        .collect();
    let (start, mut blocked_at, mut held) = (Instant::now(), None, None);
    loop {
        if held.is_none() {
            held = lock_pid(out).and_then(|pid| racers.iter().position(|r| r.child.id() == pid));
            if let Some(k) = held {
                signal(racers[k].child.id(), libc::SIGSTOP);
            }
        }
        if blocked_at.is_none() && racers.iter().any(|r| blocked_writing(r.child.id())) {
            blocked_at = Some(Instant::now());
        }
        // the racers that reach the window meanwhile wait in it too; then let them all go
        let waited = blocked_at.is_some_and(|t| t.elapsed() > Duration::from_millis(150));
        if waited || start.elapsed() > Duration::from_secs(10) {
            for r in racers.iter_mut() {
                if let Some((mut read, filled)) = r.pipe.take() {
                    r.drained = Some(std::thread::spawn(move || {
                        let mut bytes = Vec::new();
                        read.read_to_end(&mut bytes).unwrap();
                        String::from_utf8_lossy(&bytes[filled.min(bytes.len())..]).into_owned()
                    }));
                }
            }
        }
        for (i, r) in racers.iter_mut().enumerate() {
            if Some(i) != held && r.code.is_none() {
                if let Some(status) = r.child.try_wait().unwrap() {
                    r.code = Some(status.code().unwrap_or(-1));
                }
            }
        }
        let others_done = racers.iter().enumerate().all(|(i, r)| Some(i) == held || r.code.is_some());
        if others_done && racers.iter().all(|r| r.pipe.is_none()) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "racers still running after 120 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    if let Some(k) = held {
        signal(racers[k].child.id(), libc::SIGCONT);
        racers[k].code = racers[k].child.wait().unwrap().code();
    }
    let ended = racers.into_iter().map(|r| (r.child.id(), r.code, r.drained.unwrap().join().unwrap())).collect();
    (ended, held)
}

/// A lock left by a process of this host that no longer runs.
fn stale_lock(out: &Path) {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let host = owner::hostname();
    let text = format!("pid={dead}\nhost={host}\nstarted=2026-12-01T00:00:00Z\ncommand=sstclim run --the-dead-job\n");
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join(LOCK_NAME), text).unwrap();
}

/// `trials` races of `jobs(out)` over a stale lock (the first `stale` of them) or none: one
/// winner, the others refused naming it, nothing hidden left; `check` gets the directory and
/// the winner's index.
fn races(
    dir: &Path,
    trials: usize,
    stale: usize,
    jobs: impl Fn(&Path) -> Vec<Vec<String>>,
    check: impl Fn(&Path, usize),
) {
    for trial in 0..trials {
        let out = dir.join(format!("race{trial}"));
        if trial < stale {
            stale_lock(&out);
        }
        let (ended, held) = race(&out, &jobs(&out));
        let won: Vec<usize> = (0..ended.len()).filter(|&i| ended[i].1 == Some(0)).collect();
        assert_eq!(won.len(), 1, "trial {trial} (stale lock: {}): {ended:#?}", trial < stale);
        assert_eq!(held, Some(won[0]), "trial {trial}: the winner is the one the lock named");
        let holder = format!("in use by another sstclim job (pid {} ", ended[won[0]].0);
        for (i, (_, code, err)) in ended.iter().enumerate().filter(|&(i, _)| i != won[0]) {
            assert_eq!(*code, Some(2), "trial {trial}, racer {i}: {err}");
            // (a racer may have removed the stale lock, and another linked its own first)
            let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
            assert!(errors.len() == 1 && errors[0].contains(&holder), "trial {trial}, racer {i}: {err}");
        }
        check(&out, won[0]);
        let hidden: Vec<String> = entries(&out).into_iter().filter(|n| n.starts_with('.')).collect();
        assert!(hidden.is_empty(), "trial {trial}: left {hidden:?}");
    }
}

fn history(path: &Path) -> String {
    sstclim::input::silence_hdf5();
    let f = netcdf::open(path).unwrap();
    match f.attribute("history").unwrap().value().unwrap() {
        netcdf::AttributeValue::Str(s) => s,
        other => panic!("{other:?}"),
    }
}

#[test]
fn racing_runs_one_wins_and_publishes_its_own_outputs() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "24x12", "--years", "2001-2003", "--doys", "100-120"]);
    let methods = ["4", "5", "6", "7"];
    let job = |out: &Path, k: usize| {
        let args = with(run_args(&data, out, "2001-2003", "103-117"), &["--half-window", "3", "--overwrite"]);
        with(args, &["--method", methods[k]])
    };
    let alone: Vec<_> = (0..methods.len())
        .map(|k| {
            let out = dir.path().join(format!("alone{k}"));
            ok(&job(&out, k));
            output_bits(&out)
        })
        .collect();
    for k in 1..alone.len() {
        assert_ne!(alone[k], alone[0], "the racers' outputs must differ");
    }
    let jobs = |out: &Path| (0..methods.len()).map(|k| job(out, k)).collect();
    races(dir.path(), 20, 12, jobs, |out, winner| assert!(output_bits(out) == alone[winner], "not the winner's"));
}

/// A year-round dataset (2001-2002) and its climatology, for `events`.
fn events_data(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("ev");
    generate(&data, &["--grid", "8x4", "--years", "2001-2002", "--doys", "1-366"]);
    let clim = dir.join("clim");
    ok(&with(run_args(&data, &clim, "2001-2002", "1-366"), &["--layout", "climatology", "--calendar", "hobday366"]));
    (data, clim.join("climatology.nc"))
}

/// The arguments of a job into an output directory.
type Job = dyn Fn(&Path) -> Vec<String>;

/// A `run` job (24x12 cells, 2001-2003, days 103-117) and an `events` job (its climatology
/// computed here), each on a dataset generated in `dir`.
fn run_and_events(dir: &Path) -> [Box<Job>; 2] {
    let data = dir.join("data");
    generate(&data, &["--grid", "24x12", "--years", "2001-2003", "--doys", "100-120"]);
    let (ev, clim) = events_data(dir);
    let run = move |out: &Path| with(run_args(&data, out, "2001-2003", "103-117"), &["--half-window", "3"]);
    let events = move |out: &Path| events_args(&ev, &clim, out, &[]);
    [Box::new(run), Box::new(events)]
}

fn events_args(data: &Path, clim: &Path, out: &Path, more: &[&str]) -> Vec<String> {
    let v = ["-q", "events", "--input", &s(data), "--years", "2002", "--climatology", &s(clim), "-o", &s(out)];
    with(v.iter().map(|x| x.to_string()).collect(), more)
}

#[test]
fn racing_events_jobs_one_wins_and_publishes_its_own_outputs() {
    let dir = tmp();
    let (data, clim) = events_data(dir.path());
    let durations = ["3", "4", "5", "6"];
    let job = |out: &Path, k: usize| events_args(&data, &clim, out, &["--overwrite", "--min-duration", durations[k]]);
    let jobs = |out: &Path| (0..durations.len()).map(|k| job(out, k)).collect();
    races(dir.path(), 10, 6, jobs, |out, winner| {
        for name in ["events.nc", "summary.nc"] {
            let h = history(&out.join(name));
            assert!(h.contains(&format!("--min-duration {}", durations[winner])), "{name}: not the winner's: {h}");
        }
    });
}

/// Hidden entries of an output directory: a user's, another program's, another host's and a
/// live job's stay byte for byte; a dead job's own go, with its stale lock.
#[test]
fn a_job_removes_only_a_dead_jobs_own_entries() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "24x12", "--years", "2001-2003", "--doys", "100-120"]);
    let (ev, clim) = events_data(dir.path());
    let mut live = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let elsewhere = format!(".sstclim-job-{dead}-{}-ff-0.partial", owner::host_tag("another-host"));
    assert_ne!(owner::host_tag("another-host"), owner::host_tag(&owner::hostname()));
    let kept_files = vec![
        (".notes.partial".to_string(), "my notes"),
        (".download.partial".into(), "half a download"),
        (".x.partial/inside".into(), "a directory of someone's"),
        (format!("{}/mean_doy103.nc", owner::partial_name_of(Kind::Staging(0), live.id())), "live job's"),
        (owner::partial_name_of(Kind::LockClaim(0), live.id()), "live job's claim"),
        (format!("{elsewhere}/mean_doy103.nc"), "another host's job"),
    ];
    let dead_entries = [
        format!("{}/mean_doy103.nc", owner::partial_name_of(Kind::Staging(1), dead)),
        format!("{}/climatology.nc", owner::partial_name_of(Kind::Baseline, dead)),
        format!("{}/p90_doy104.nc", owner::partial_name_of(Kind::Rank { rank: 1, size: 3 }, dead)),
        owner::partial_name_of(Kind::LockClaim(2), dead),
    ];
    let jobs: [(&str, Vec<String>); 2] = [
        ("run", with(run_args(&data, &dir.path().join("o-run"), "2001-2003", "103-117"), &["--half-window", "3"])),
        ("events", events_args(&ev, &clim, &dir.path().join("o-events"), &[])),
    ];
    for (what, args) in jobs {
        let out = dir.path().join(format!("o-{what}"));
        stale_lock(&out);
        for (name, text) in
            kept_files.iter().map(|(n, t)| (n.clone(), *t)).chain(dead_entries.iter().map(|n| (n.clone(), "dead")))
        {
            std::fs::create_dir_all(out.join(&name).parent().unwrap()).unwrap();
            std::fs::write(out.join(&name), text).unwrap();
        }
        let run = ok(&args);
        let log = String::from_utf8_lossy(&run.stderr);
        assert!(log.contains("removing the lock of job pid") && log.contains("--the-dead-job"), "{what}: {log}");
        for (name, text) in &kept_files {
            assert_eq!(std::fs::read_to_string(out.join(name)).ok().as_deref(), Some(*text), "{what}: {name}");
        }
        for name in &dead_entries {
            let top = Path::new(name).components().next().unwrap();
            assert!(!out.join(top).exists(), "{what}: {name} of a dead job left");
        }
        assert!(!out.join(LOCK_NAME).exists(), "{what}");
        assert!(entries(&out).iter().any(|n| n.ends_with(".nc")), "{what}: no outputs");
    }
    live.kill().unwrap();
    live.wait().unwrap();
}

/// Every entry of `dir` (recursively) with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().path()) {
            let name = e.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if e.is_dir() {
                all.push((format!("{name}/"), Vec::new()));
                todo.push(e);
            } else {
                all.push((name, std::fs::read(&e).unwrap()));
            }
        }
    }
    all.sort();
    all
}

/// `--overwrite` replaces output files, never a directory of an output's name (empty or not):
/// the job is refused before anything is written, and nothing is removed.
#[test]
fn overwrite_never_replaces_a_directory() {
    let dir = tmp();
    let [run, events] = run_and_events(dir.path());
    let cases: [(&Job, [&str; 2]); 2] =
        [(&*run, ["mean_doy105.nc", "p90_doy110.nc"]), (&*events, ["events.nc", "summary.nc"])];
    for (i, (job, [full, empty])) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("out{i}"));
        ok(&job(&out));
        std::fs::remove_file(out.join(full)).unwrap();
        std::fs::remove_file(out.join(empty)).unwrap();
        std::fs::create_dir_all(out.join(full).join("results")).unwrap();
        std::fs::write(out.join(full).join("results/keep.txt"), "a user's file").unwrap();
        std::fs::create_dir(out.join(empty)).unwrap();
        let before = snapshot(&out);
        for more in [&["--overwrite"][..], &[]] {
            let err = fails(&with(job(&out), more));
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("is a directory") && err.contains("--overwrite replaces output files only"), "{err}");
            assert!(err.contains(full) || err.contains(empty), "{err}");
            assert_eq!(snapshot(&out), before, "{full}: nothing may change");
        }
    }
}

/// A signal at a move into the output directory: the moves finish, then are undone; the
/// message says the directory holds what it held before, and it does, byte for byte.
#[cfg(feature = "test-hooks")] // SSTCLIM_TEST_* hooks are read only with this feature
#[test]
fn a_signal_while_publishing_leaves_the_previous_set_and_says_so() {
    let dir = tmp();
    let [run, events] = run_and_events(dir.path());
    // (job, its changed second run, the move to signal at, the signal, its exit code)
    let cases: [(&Job, &[&str], &str, i32); 2] =
        [(&*run, &["--percentile", "50,90"], "10:SIGINT", 130), (&*events, &["--min-duration", "3"], "2:SIGTERM", 143)];
    for (i, (job, changed, hook, code)) in cases.into_iter().enumerate() {
        for previous in [true, false] {
            let out = dir.path().join(format!("out{i}-{previous}"));
            if previous {
                ok(&job(&out));
            }
            let before = if previous { snapshot(&out) } else { Vec::new() };
            let args = with(with(job(&out), &["--overwrite"]), changed);
            let run = bin().args(&args).env("SSTCLIM_TEST_FAIL_RENAME", hook).output().unwrap();
            let err = String::from_utf8_lossy(&run.stderr);
            assert_eq!(run.status.code(), Some(code), "{hook}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains("interrupted by SIG") && err.contains("moved them back"), "{err}");
            assert!(err.contains("holds what it held before this run"), "{err}");
            assert_eq!(snapshot(&out), before, "{hook}: the previous set, byte for byte");
        }
    }
}
