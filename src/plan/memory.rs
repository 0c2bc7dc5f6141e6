//! The default memory budget of a job (`--max-mem` left out): what the machine, the cgroup
//! and `ulimit -v` leave this process, read from /proc and /sys. Part of the plan because the
//! budget is fixed before anything is read, and a budget that cannot work is refused there.

use std::path::Path;

/// Available memory from /proc/meminfo (bytes), if known.
pub fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The default `--max-mem`: half of the smallest of the available memory (at least 256 MiB),
/// the room left under this process's cgroup memory limit, and the room left under
/// `RLIMIT_AS` (what `ulimit -v` sets) beside what it already maps; the other half is for the
/// libraries, buffers and page cache. 4 GiB when none is known. The hard limits are not
/// rounded up: a budget that cannot hold one band of the grid is refused with one line
/// instead of an allocation failing mid-run.
pub fn default_max_mem() -> u64 {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let soft = available_memory().map(|m| (m / 2).max(256 << 20));
    let hard = [cgroup_room(&read), address_space_room()].into_iter().flatten().min().map(|m| m / 2);
    [soft, hard].into_iter().flatten().min().unwrap_or(4 << 30)
}

/// Under an address-space limit (`ulimit -v`), every glibc malloc arena a new thread opens
/// reserves 64 MiB of it: a dozen threads reserve more than the pool and the job's small
/// allocations then fail (an abort, measured under `ulimit -v 380000` on a 720x361 job). Two
/// arenas are plenty for this program's few allocating threads. Without a limit nothing
/// changes.
pub fn fit_allocator_to_address_limit() {
    if address_space_limit().is_none() {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a malloc tuning parameter.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// The soft `RLIMIT_AS` in bytes, if there is one.
fn address_space_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into `lim`.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(lim.rlim_cur)
}

/// Room under `RLIMIT_AS`: the limit less the address space this process maps now, less
/// headroom for what every run maps later besides the pool and results (thread stacks,
/// allocator arenas, the libraries' buffers). The limit is per process: forked children count
/// against their own copy of it.
fn address_space_room() -> Option<u64> {
    let limit = address_space_limit()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status.lines().find(|l| l.starts_with("VmSize:"))?.split_whitespace().nth(1)?.parse().ok()?;
    let headroom = 256 << 20;
    Some(limit.saturating_sub(kib * 1024).saturating_sub(headroom))
}

/// Room under this process's cgroup memory limits (v2 `memory.max` less `memory.current`, v1
/// `memory.limit_in_bytes` less `memory.usage_in_bytes`), the smallest over the cgroup and its
/// ancestors; `read` reads a file.
fn cgroup_room(read: &dyn Fn(&Path) -> Option<String>) -> Option<u64> {
    let own = read(Path::new("/proc/self/cgroup"))?;
    let mut room: Option<u64> = None;
    let mut take = |dir: &Path, limit: &str, usage: &str| {
        let num = |name: &str| read(&dir.join(name)).and_then(|t| t.trim().parse::<u64>().ok());
        // "max" (v2) or a huge number (v1) parse as no limit
        if let (Some(l), Some(u)) = (num(limit), num(usage)) {
            if l < 1 << 60 {
                let r = l.saturating_sub(u);
                room = Some(room.map_or(r, |x| x.min(r)));
            }
        }
    };
    for line in own.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else { continue };
        let (roots, limit, usage): (&[&str], _, _) = if controllers.is_empty() {
            (&["/sys/fs/cgroup", "/sys/fs/cgroup/unified"], "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (&["/sys/fs/cgroup/memory"], "memory.limit_in_bytes", "memory.usage_in_bytes")
        } else {
            continue;
        };
        for root in roots {
            // the cgroup and its ancestors (inside a cgroup namespace the path may not exist
            // below the mount: the mount itself is then this process's cgroup)
            let mut dir = Path::new(root).join(path.trim_start_matches('/'));
            loop {
                take(&dir, limit, usage);
                if dir == Path::new(root) || !dir.pop() {
                    break;
                }
            }
        }
    }
    room
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_limits_are_read_from_the_cgroup_and_its_ancestors() {
        let files = |entries: &'static [(&'static str, &'static str)]| {
            move |p: &Path| entries.iter().find(|(k, _)| Path::new(k) == p).map(|(_, v)| v.to_string())
        };
        let v2 = files(&[
            ("/proc/self/cgroup", "0::/job/step\n"),
            ("/sys/fs/cgroup/job/step/memory.max", "max\n"),
            ("/sys/fs/cgroup/job/step/memory.current", "100\n"),
            ("/sys/fs/cgroup/job/memory.max", "1000000\n"),
            ("/sys/fs/cgroup/job/memory.current", "400000\n"),
        ]);
        assert_eq!(cgroup_room(&v2), Some(600_000));
        let v1 = files(&[
            ("/proc/self/cgroup", "5:cpu:/\n4:memory:/slurm/job7\n0::/\n"),
            ("/sys/fs/cgroup/memory/slurm/job7/memory.limit_in_bytes", "2000\n"),
            ("/sys/fs/cgroup/memory/slurm/job7/memory.usage_in_bytes", "500\n"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "5000\n"),
        ]);
        assert_eq!(cgroup_room(&v1), Some(1500));
        let none = files(&[("/proc/self/cgroup", "0::/\n"), ("/sys/fs/cgroup/memory.max", "max\n")]);
        assert_eq!(cgroup_room(&none), None);
    }

    #[test]
    fn the_default_budget_stays_under_an_address_space_limit() {
        // in a child, so this process keeps its limits
        let _serial = crate::input::fork_serial();
        // SAFETY: the child only calls setrlimit, reads /proc and exits.
        let (pid, fd) = unsafe {
            crate::input::child::fork_child(|w| {
                let lim = libc::rlimit { rlim_cur: 3 << 30, rlim_max: libc::RLIM_INFINITY };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                let m = default_max_mem();
                i32::from(!crate::input::child::write_all(w, &m.to_le_bytes()))
            })
        }
        .unwrap();
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut std::fs::File::from(fd), &mut got).unwrap();
        assert!(crate::input::child::reap(pid));
        let m = u64::from_le_bytes(got[..8].try_into().unwrap());
        assert!(m < 3 << 29, "{m} bytes under a 3 GiB address space limit");
    }
}
