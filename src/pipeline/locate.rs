//! Querying every input file's layout for the direct read path through libhdf5, in child
//! processes: HDF5 serializes all calls of a process under one lock, and the queries would
//! otherwise queue behind (and hold up) the output files being created and written. Used only
//! where the job's first file could not be located by parsing its header as libhdf5 does
//! (see [`crate::input::direct::probe`]); otherwise the reader threads locate their files
//! themselves, in parallel and without the library. Children are forked before the pool is
//! allocated, each takes every n-th file (so early days are located first), and reports
//! `(slot, offset)` records through a pipe.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Mutex;

use crossbeam_channel::Sender;

use super::trace::Trace;
use crate::input::child::{fork_child, kill, reap, write_all};
use crate::input::direct::{self, DirectLayout, Place};
use crate::input::{Grid, VarLayout};

const RECORD: usize = 17;

struct Kid {
    pid: libc::pid_t,
    pipe: Option<File>,
    slots: Vec<usize>,
}

/// Children locating the variable in every file.
pub struct Locating {
    kids: Vec<Kid>,
    /// Slots no child could take (fork failed): for the library path.
    orphans: Vec<usize>,
}

impl Locating {
    /// Start `n` children over `files`.
    pub fn spawn(files: &[PathBuf], dl: &DirectLayout, layout: &VarLayout, grid: Option<&Grid>, n: usize) -> Locating {
        let n = n.clamp(1, files.len().max(1));
        let mut kids = Vec::new();
        let mut orphans = Vec::new();
        for c in 0..n {
            let slots: Vec<usize> = (c..files.len()).step_by(n).collect();
            let body = |fd| {
                for &slot in &slots {
                    let mut rec = [0u8; RECORD];
                    rec[..8].copy_from_slice(&(slot as u64).to_le_bytes());
                    // libhdf5 locates contiguous variables only (chunked ones are parsed)
                    if let Ok((_, Place::Contiguous(offset))) = direct::locate(&files[slot], dl, layout, grid) {
                        rec[8] = 1;
                        rec[9..].copy_from_slice(&offset.to_le_bytes());
                    }
                    if !write_all(fd, &rec) {
                        return 1;
                    }
                }
                0
            };
            // SAFETY: the body only queries files through HDF5 (under the lock the child holds)
            // and writes to its pipe.
            match unsafe { fork_child(body) } {
                Ok((pid, fd)) => kids.push(Kid { pid, pipe: Some(File::from(fd)), slots }),
                Err(e) => {
                    tracing::warn!("cannot fork a locating process ({e}): those files go through libnetcdf");
                    orphans.extend(slots);
                }
            }
        }
        Locating { kids, orphans }
    }

    /// Forward each located file, opened, to `tx` as its record arrives; slots that cannot
    /// take the direct path go to `fallback`. Returns when every child is done and reaped.
    pub fn collect(
        mut self,
        files: &[PathBuf],
        tx: &Sender<(usize, File, u64)>,
        fallback: &Mutex<Vec<usize>>,
        trace: &Trace,
        tile: usize,
    ) {
        fallback.lock().unwrap_or_else(|e| e.into_inner()).append(&mut self.orphans);
        std::thread::scope(|s| {
            for (k, kid) in self.kids.iter_mut().enumerate() {
                let mut pipe = kid.pipe.take().expect("collected once");
                let (pid, slots) = (kid.pid, &kid.slots);
                let named = std::thread::Builder::new().name(format!("locate-{k}"));
                named
                    .spawn_scoped(s, move || {
                        let mut seen = vec![false; slots.len()];
                        let mut rec = [0u8; RECORD];
                        let mut last = trace.now();
                        let mut i = 0;
                        while pipe.read_exact(&mut rec).is_ok() {
                            let slot = u64::from_le_bytes(rec[..8].try_into().expect("8 bytes")) as usize;
                            let offset = u64::from_le_bytes(rec[9..].try_into().expect("8 bytes"));
                            trace.record("locate", tile, Some(slot), last, 0);
                            last = trace.now();
                            // records come in the order of the child's slots
                            if slots.get(i) != Some(&slot) {
                                break;
                            }
                            seen[i] = true;
                            i += 1;
                            let sent = rec[8] == 1
                                && match File::open(&files[slot]) {
                                    Ok(f) => tx.send((slot, f, offset)).is_ok(),
                                    Err(_) => false,
                                };
                            if !sent {
                                fallback.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
                            }
                        }
                        // a child that died early leaves its remaining files to the library path
                        let missed = slots.iter().zip(&seen).filter(|(_, &s)| !s).map(|(&slot, _)| slot);
                        fallback.lock().unwrap_or_else(|e| e.into_inner()).extend(missed);
                        reap(pid);
                    })
                    .expect("spawning a locate collector");
            }
        });
        self.kids.clear();
    }
}

impl Drop for Locating {
    /// Children not collected (the run stopped early) are killed and reaped.
    fn drop(&mut self) {
        for kid in self.kids.drain(..) {
            kill(kid.pid);
        }
    }
}
