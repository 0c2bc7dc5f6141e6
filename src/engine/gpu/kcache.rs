//! Compiled kernels kept on disk between runs. NVRTC takes 0.1-0.15 s to compile the
//! climatology kernel for a job's launch constants, and on the H200 node a run on int16 input
//! reads its files in 0.2 s: the compile, which starts once the device is up, gated the first
//! computation. The machine code is keyed by everything that makes it (the source text, the
//! entry point, every compiler option, the NVRTC version and this sstclim's version), so a
//! stale entry is never used; a cache that cannot be read or written is only a compile more.
//!
//! Location: `$SSTCLIM_KERNEL_CACHE` (`none` turns it off), else
//! `$XDG_CACHE_HOME/sstclim/kernels`, else `~/.cache/sstclim/kernels`. Entries are written
//! through a temporary file renamed over the final name, so processes compiling at once (ranks
//! of one node) never read a torn one.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The directory of compiled kernels from the environment (`None`: off).
pub fn resolve(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(v) = env("SSTCLIM_KERNEL_CACHE").filter(|v| !v.is_empty()) {
        return (v != "none").then(|| PathBuf::from(v));
    }
    let cache = env("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("sstclim").join("kernels"))
}

/// 64-bit FNV-1a over `parts` (each followed by a separator byte, so that parts do not run
/// into each other): stable across builds and platforms.
pub fn key(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(std::iter::once(&0xffu8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The entry `name` in `dir`, if there is one.
pub fn load(dir: &Path, name: &str) -> Option<Vec<u8>> {
    // machine code is an ELF image; anything else is not ours
    std::fs::read(dir.join(format!("{name}.cubin"))).ok().filter(|b| b.starts_with(b"\x7fELF"))
}

/// Keep `image` as entry `name` in `dir` (errors are ignored: the next run compiles again).
pub fn store(dir: &Path, name: &str, image: &[u8]) {
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, image)?;
        std::fs::rename(&tmp, dir.join(format!("{name}.cubin")))
    };
    if let Err(e) = write() {
        tracing::debug!("not caching a compiled kernel in {}: {e}", dir.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_directory_follows_the_environment() {
        let all = [("SSTCLIM_KERNEL_CACHE", "/k"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")];
        assert_eq!(resolve(env(&all)), Some(PathBuf::from("/k")));
        assert_eq!(resolve(env(&[("SSTCLIM_KERNEL_CACHE", "none"), ("HOME", "/h")])), None);
        assert_eq!(
            resolve(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/sstclim/kernels"))
        );
        assert_eq!(resolve(env(&[("HOME", "/h")])), Some(PathBuf::from("/h/.cache/sstclim/kernels")));
        assert_eq!(resolve(env(&[])), None);
    }

    #[test]
    fn keys_differ_with_any_part_and_entries_round_trip() {
        let k = key(&[b"source", b"--opt=1"]);
        assert_eq!(k.len(), 16);
        assert_eq!(k, key(&[b"source", b"--opt=1"]));
        assert_ne!(k, key(&[b"source", b"--opt=2"]));
        assert_ne!(k, key(&[b"sourc", b"e--opt=1"]), "parts are separated");
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("nested").join("kernels");
        assert_eq!(load(&d, &k), None);
        store(&d, &k, b"\x7fELF machine code");
        assert_eq!(load(&d, &k).as_deref(), Some(&b"\x7fELF machine code"[..]));
        // no temporary file is left behind
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }
}
