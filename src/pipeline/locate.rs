//! Querying every input file's layout for the direct read path through libhdf5, in child
//! processes: HDF5 serializes all calls of a process under one lock, and the queries would
//! otherwise queue behind (and hold up) the output files being created and written. Used only
//! where the job's first file could not be located by parsing its header as libhdf5 does
//! (see [`crate::input::direct::probe`]); otherwise the reader threads locate their files
//! themselves, in parallel and without the library. Children are forked before the pool is
//! allocated, each takes every n-th file (so early days are located first), and reports
//! `(file, offset, steps)` records through a pipe. A file of many steps (a yearly file holds
//! 365 pool slots) is located once, and handed to the readers once per slot.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crossbeam_channel::Sender;

use super::trace::Trace;
use crate::input::child::{fork_child, kill, reap, write_all};
use crate::input::direct::{self, DirectLayout, Place};
use crate::input::{Grid, VarLayout};

/// file index (u64), located (u8), offset (u64), steps (u64)
const RECORD: usize = 25;

/// A slot whose file a locating process located: its file opened, the variable's offset and
/// the file's number of time steps.
pub struct LocatedSlot {
    pub slot: usize,
    pub file: Arc<File>,
    pub offset: u64,
    pub steps: usize,
}

struct Kid {
    pid: libc::pid_t,
    pipe: Option<File>,
    /// Indexes into the distinct files.
    files: Vec<usize>,
}

/// The distinct files of `files` (the pool slots' files) in order of first use, and the slots
/// of each.
fn distinct(files: &[PathBuf]) -> (Vec<&Path>, Vec<Vec<usize>>) {
    let mut index: HashMap<&Path, usize> = HashMap::new();
    let (mut paths, mut slots) = (Vec::new(), Vec::<Vec<usize>>::new());
    for (slot, path) in files.iter().enumerate() {
        let i = *index.entry(path.as_path()).or_insert_with(|| {
            paths.push(path.as_path());
            slots.push(Vec::new());
            paths.len() - 1
        });
        slots[i].push(slot);
    }
    (paths, slots)
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
        let (paths, slots_of) = distinct(files);
        let n = n.clamp(1, paths.len().max(1));
        let mut kids = Vec::new();
        let mut orphans = Vec::new();
        for c in 0..n {
            let mine: Vec<usize> = (c..paths.len()).step_by(n).collect();
            let body = |fd| {
                for &i in &mine {
                    let mut rec = [0u8; RECORD];
                    rec[..8].copy_from_slice(&(i as u64).to_le_bytes());
                    // libhdf5 locates contiguous variables only (chunked ones are parsed)
                    if let Ok((_, l)) = direct::locate_file(paths[i], dl, layout, grid) {
                        if let Place::Contiguous(offset) = l.place {
                            rec[8] = 1;
                            rec[9..17].copy_from_slice(&offset.to_le_bytes());
                            rec[17..].copy_from_slice(&(l.steps as u64).to_le_bytes());
                        }
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
                Ok((pid, fd)) => kids.push(Kid { pid, pipe: Some(File::from(fd)), files: mine }),
                Err(e) => {
                    tracing::warn!("cannot fork a locating process ({e}): those files go through libnetcdf");
                    orphans.extend(mine.iter().flat_map(|&i| slots_of[i].iter().copied()));
                }
            }
        }
        Locating { kids, orphans }
    }

    /// Forward each slot of each located file (opened once) to `tx` as its record arrives;
    /// slots that cannot take the direct path go to `fallback`. Returns when every child is
    /// done and reaped.
    pub fn collect(
        mut self,
        files: &[PathBuf],
        tx: &Sender<LocatedSlot>,
        fallback: &Mutex<Vec<usize>>,
        trace: &Trace,
        tile: usize,
    ) {
        fallback.lock().unwrap_or_else(|e| e.into_inner()).append(&mut self.orphans);
        let (paths, slots_of) = distinct(files);
        let (paths, slots_of) = (&paths, &slots_of);
        std::thread::scope(|s| {
            for (k, kid) in self.kids.iter_mut().enumerate() {
                let mut pipe = kid.pipe.take().expect("collected once");
                let (pid, mine) = (kid.pid, &kid.files);
                let named = std::thread::Builder::new().name(format!("locate-{k}"));
                named
                    .spawn_scoped(s, move || {
                        let mut seen = vec![false; mine.len()];
                        let mut rec = [0u8; RECORD];
                        let mut last = trace.now();
                        let mut i = 0;
                        while pipe.read_exact(&mut rec).is_ok() {
                            let at = u64::from_le_bytes(rec[..8].try_into().expect("8 bytes")) as usize;
                            let offset = u64::from_le_bytes(rec[9..17].try_into().expect("8 bytes"));
                            let steps = u64::from_le_bytes(rec[17..].try_into().expect("8 bytes")) as usize;
                            // records come in the order of the child's files
                            if mine.get(i) != Some(&at) {
                                break;
                            }
                            let slots = &slots_of[at];
                            trace.record("locate", tile, slots.first().copied(), last, 0);
                            last = trace.now();
                            seen[i] = true;
                            i += 1;
                            let file = match rec[8] {
                                1 => File::open(paths[at]).ok().map(Arc::new),
                                _ => None,
                            };
                            let mut slots = slots.iter();
                            if let Some(file) = file {
                                let more = slots.by_ref().all(|&slot| {
                                    tx.send(LocatedSlot { slot, file: file.clone(), offset, steps }).is_ok()
                                });
                                if !more {
                                    break; // the readers are gone
                                }
                            }
                            fallback.lock().unwrap_or_else(|e| e.into_inner()).extend(slots);
                        }
                        // a child that died early leaves its remaining files to the library path
                        let missed = mine.iter().zip(&seen).filter(|(_, &s)| !s);
                        let missed = missed.flat_map(|(&at, _)| slots_of[at].iter().copied());
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
