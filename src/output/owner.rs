//! Which job an entry of an output directory belongs to, and whether that job still runs.
//!
//! A job stages its outputs, claims the lock and (under MPI, with `events --baseline`) keeps
//! working files in hidden entries of the output directory. A job that dies leaves them
//! behind, and the next job to hold the lock removes them; it must never remove an entry it
//! did not make (a user's `.notes.partial`, another program's download) nor one of a job that
//! still runs (a job racing for the lock has its claim there). So every such entry is named by
//! one of the full patterns below, carrying its job's identifier, and [`owner_of`] reads the
//! owner back from a name: only names of these patterns are ever removed, and only once their
//! owner is found dead ([`Owner::is_dead_here`]).
//!
//! A job identifier is `<pid>-<host tag>-<start time>`: the pid and the host (a hash of its
//! name) say whether the process runs, the start time keeps a reused pid's names apart. Only a
//! process of this host can be checked; entries of another host's jobs are left alone.

use std::sync::OnceLock;

/// What a hidden entry is for; its name is `.sstclim-<kind>-<job id>[...].partial`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A set of outputs being staged (`.sstclim-job-<id>-<n>.partial/`, the n-th of the job).
    Staging(usize),
    /// The climatology `events --baseline` computes (`.sstclim-baseline-<id>.partial/`).
    Baseline,
    /// A claim of the lock, written then hard-linked into place (`.sstclim-lock-<id>-<n>.partial`,
    /// the n-th of the process).
    LockClaim(usize),
    /// An MPI rank's staging directory (`.sstclim-rank<r>-of-<n>-<id>.partial/`).
    Rank { rank: usize, size: usize },
}

/// The process a hidden entry's name says made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    pub pid: i32,
    /// [`host_tag`] of the owner's host.
    pub host: String,
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

/// A host name as 8 hex digits (FNV-1a): short, and only characters a file name may hold.
pub fn host_tag(host: &str) -> String {
    let hash = host.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    format!("{hash:08x}")
}

/// Whether process `pid` of this host no longer exists.
pub fn is_dead(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// This job's identifier (see the module's header).
pub fn job_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{}-{}-{:x}", std::process::id(), host_tag(&hostname()), nanos % (1 << 40))
    })
}

/// The name of this job's hidden entry of kind `kind`.
pub fn partial_name(kind: Kind) -> String {
    name_with(kind, job_id())
}

/// The name an entry of kind `kind` has when process `pid` of this host made it (for tests that
/// stage a dead or a live job's entries).
#[doc(hidden)]
pub fn partial_name_of(kind: Kind, pid: u32) -> String {
    name_with(kind, &format!("{pid}-{}-0", host_tag(&hostname())))
}

fn name_with(kind: Kind, id: &str) -> String {
    match kind {
        Kind::Staging(n) => format!(".sstclim-job-{id}-{n}.partial"),
        Kind::Baseline => format!(".sstclim-baseline-{id}.partial"),
        Kind::LockClaim(n) => format!(".sstclim-lock-{id}-{n}.partial"),
        Kind::Rank { rank, size } => format!(".sstclim-rank{rank}-of-{size}-{id}.partial"),
    }
}

/// The owner of the entry named `name`, where the name is of one of [`Kind`]'s patterns.
pub fn owner_of(name: &str) -> Option<Owner> {
    let body = name.strip_prefix(".sstclim-")?.strip_suffix(".partial")?;
    let (kind, rest) = body.split_once('-')?;
    let parts: Vec<&str> = rest.split('-').collect();
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let id = match (kind, parts.as_slice()) {
        ("job" | "lock", [id @ .., n]) if number(n) => id,
        ("baseline", id) => id,
        (rank, [of, size, id @ ..]) if *of == "of" && number(size) => {
            number(rank.strip_prefix("rank")?).then_some(id)?
        }
        _ => return None,
    };
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
    match id {
        [pid, host, time] if number(pid) && host.len() == 8 && hex(host) && hex(time) => {
            Some(Owner { pid: pid.parse().ok()?, host: host.to_string() })
        }
        _ => None,
    }
}

impl Owner {
    /// Whether the owner is a process of this host that no longer exists.
    pub fn is_dead_here(&self) -> bool {
        self.host == host_tag(&hostname()) && is_dead(self.pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_owner_and_nothing_else_has_one() {
        let me = Owner { pid: std::process::id() as i32, host: host_tag(&hostname()) };
        for kind in [Kind::Staging(3), Kind::Baseline, Kind::LockClaim(1), Kind::Rank { rank: 2, size: 5 }] {
            let name = partial_name(kind);
            assert_eq!(owner_of(&name), Some(me.clone()), "{name}");
            assert!(!owner_of(&name).unwrap().is_dead_here());
            assert_eq!(owner_of(&partial_name_of(kind, 7)).map(|o| o.pid), Some(7));
        }
        assert_eq!(partial_name(Kind::Rank { rank: 2, size: 5 }), format!(".sstclim-rank2-of-5-{}.partial", job_id()));
        // names of other programs, of the user, and of earlier versions (no host): not ours
        for name in [
            ".notes.partial",
            ".download.partial",
            ".mean_doy104.nc.partial",
            ".sstclim-job-1-dead-0.partial",
            ".sstclim-job-12-ab.partial",
            ".sstclim-rank1-of-3.partial",
            ".sstclim.lock",
            ".sstclim-job-12-0123abcd-ff-0.partial.x",
            ".sstclim-job-12-0123ABCD-ff-0.partial",
            ".sstclim-other-12-0123abcd-ff.partial",
        ] {
            assert_eq!(owner_of(name), None, "{name}");
        }
        let other_host = ".sstclim-job-12-0123abcd-ff-0.partial";
        assert_eq!(owner_of(other_host), Some(Owner { pid: 12, host: "0123abcd".into() }));
    }
}
