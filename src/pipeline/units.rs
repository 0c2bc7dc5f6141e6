//! The direct readers' units of work: the pool slots grouped by file, and a file of many
//! steps located once for all its slots.
//!
//! Why it exists: a yearly file holds 365 pool slots (one per time step). Read one slot at a
//! time as daily files are, every slot would parse the file's header and chunk index again
//! (30 yearly files: 10,950 parses of the same 30 headers), and a chunk holding many steps
//! (CMIP6's (365, 60, 60), ERA5's) would be inflated once per step. Here slots of one file
//! whose steps share a chunk's block of steps ([`DirectLayout::step_block`]) form one unit,
//! read by one thread with every chunk inflated once, and each file is located once (its
//! place kept while some of its units are left). Daily files make one unit per slot, in slot
//! order, as before. A unit's slots are still filled by that one thread only, each once.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::input::direct::Located;
use crate::input::format::NotDirect;

/// Slots of one file read together: `(slot, step)`, by step.
pub(super) struct Unit {
    /// Index into [`Units::paths`].
    pub file: usize,
    pub slots: Vec<(usize, usize)>,
}

/// What a file's units share: its place once located, and how many units are left.
struct Shared {
    located: Option<Result<Arc<Located>, NotDirect>>,
    left: usize,
}

/// The units of a tile's slots, in the order of their first slot (early days first).
pub(super) struct Units<'a> {
    pub paths: Vec<&'a Path>,
    pub units: Vec<Unit>,
    files: Vec<Mutex<Shared>>,
}

impl<'a> Units<'a> {
    /// Group the slots of `files` (the file of each slot; `steps`, its step there) by file
    /// and block of `block` steps.
    pub fn plan(files: &'a [PathBuf], steps: &[usize], block: usize) -> Units<'a> {
        let block = block.max(1);
        let mut index: HashMap<&Path, usize> = HashMap::new();
        let mut paths = Vec::new();
        let mut of_file: Vec<Vec<(usize, usize)>> = Vec::new();
        for (slot, path) in files.iter().enumerate() {
            let i = *index.entry(path.as_path()).or_insert_with(|| {
                paths.push(path.as_path());
                of_file.push(Vec::new());
                paths.len() - 1
            });
            of_file[i].push((slot, steps.get(slot).copied().unwrap_or(0)));
        }
        let mut units = Vec::new();
        let mut left = vec![0; paths.len()];
        for (file, mut slots) in of_file.into_iter().enumerate() {
            slots.sort_by_key(|&(slot, step)| (step, slot));
            for run in slots.chunk_by(|a, b| a.1 / block == b.1 / block) {
                units.push(Unit { file, slots: run.to_vec() });
                left[file] += 1;
            }
        }
        units.sort_by_key(|u| u.slots.iter().map(|s| s.0).min());
        let files = left.into_iter().map(|left| Mutex::new(Shared { located: None, left })).collect();
        Units { paths, units, files }
    }

    /// Unit `u`'s file, opened, and where its variable is: located by `locate` where no other
    /// unit of the file has located it yet (its place is dropped after the file's last unit).
    pub fn locate(
        &self,
        u: &Unit,
        locate: impl FnOnce() -> Result<(File, Located), NotDirect>,
    ) -> Result<(File, Arc<Located>), NotDirect> {
        let mut shared = self.files[u.file].lock().unwrap_or_else(|e| e.into_inner());
        shared.left = shared.left.saturating_sub(1);
        if shared.left == 0 && shared.located.is_none() {
            // the file's only unit (daily files): nothing to keep
            drop(shared);
            return locate().map(|(f, l)| (f, Arc::new(l)));
        }
        let (opened, located) = match shared.located.clone() {
            Some(r) => (None, r),
            None => {
                // the other units of this file wait for it here (a header takes a millisecond)
                let (file, r) = match locate() {
                    Ok((f, l)) => (Some(f), Ok(Arc::new(l))),
                    Err(why) => (None, Err(why)),
                };
                shared.located = Some(r.clone());
                (file, r)
            }
        };
        if shared.left == 0 {
            shared.located = None;
        }
        drop(shared);
        let located = located?;
        let file = match opened {
            Some(f) => f,
            None => File::open(self.paths[u.file]).map_err(|e| e.to_string())?,
        };
        Ok((file, located))
    }
}

/// `slots` (of `files`, at `steps`) in the order the library paths read them: blocks of
/// `block` steps, in each the files in order of their first slot and each file's steps in
/// order, so that a file is opened once for consecutive steps while early days still come
/// first (daily files: slot order).
pub(super) fn library_order(files: &[PathBuf], steps: &[usize], slots: &[usize], block: usize) -> Vec<(usize, usize)> {
    let block = block.max(1);
    let mut first: HashMap<&Path, usize> = HashMap::new();
    for &slot in slots {
        let f = first.entry(files[slot].as_path()).or_insert(slot);
        *f = (*f).min(slot);
    }
    let mut order: Vec<(usize, usize)> = slots.iter().map(|&s| (s, steps.get(s).copied().unwrap_or(0))).collect();
    order.sort_by_key(|&(slot, step)| (step / block, first[files[slot].as_path()], step, slot));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::direct::Place;

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn daily_files_make_one_unit_per_slot_in_slot_order() {
        let files = paths(&["a", "b", "c", "d"]);
        let u = Units::plan(&files, &[0, 0, 0, 0], 1);
        let got: Vec<Vec<(usize, usize)>> = u.units.iter().map(|u| u.slots.clone()).collect();
        assert_eq!(got, [vec![(0, 0)], vec![(1, 0)], vec![(2, 0)], vec![(3, 0)]]);
        assert_eq!(library_order(&files, &[0; 4], &[3, 1, 2], 32), [(1, 0), (2, 0), (3, 0)]);
    }

    #[test]
    fn slots_of_a_file_group_by_blocks_of_steps() {
        // slots in [day][year] order: two yearly files y1, y2, days 0..5
        let files = paths(&["y1", "y2", "y1", "y2", "y1", "y2", "y1", "y2", "y1", "y2"]);
        let steps = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4];
        let u = Units::plan(&files, &steps, 2);
        let got: Vec<(usize, Vec<(usize, usize)>)> = u.units.iter().map(|u| (u.file, u.slots.clone())).collect();
        assert_eq!(
            got,
            [
                (0, vec![(0, 0), (2, 1)]),
                (1, vec![(1, 0), (3, 1)]),
                (0, vec![(4, 2), (6, 3)]),
                (1, vec![(5, 2), (7, 3)]),
                (0, vec![(8, 4)]),
                (1, vec![(9, 4)]),
            ]
        );
        // one step per unit with blocks of 1; a file is located once for all its units
        assert_eq!(Units::plan(&files, &steps, 1).units.len(), 10);
        let u = Units::plan(&files, &steps, 1);
        let calls = std::cell::Cell::new(0);
        let dir = std::env::temp_dir().join(format!("sstclim-units-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let real: Vec<PathBuf> = files.iter().map(|p| dir.join(p)).collect();
        for p in &real {
            std::fs::write(p, b"x").unwrap();
        }
        let u2 = Units::plan(&real, &steps, 1);
        for unit in &u2.units {
            let got = u2.locate(unit, || {
                calls.set(calls.get() + 1);
                let f = File::open(u2.paths[unit.file]).unwrap();
                Ok((f, Located { place: Place::Contiguous(7), steps: 5 }))
            });
            assert_eq!(got.unwrap().1.place, Place::Contiguous(7));
        }
        assert_eq!(calls.get(), 2, "two files, located once each");
        assert!(u2.files.iter().all(|f| f.lock().unwrap().located.is_none()), "dropped after the last unit");
        drop(u);
        std::fs::remove_dir_all(&dir).unwrap();
        // the library paths: blocks of steps, files by first slot, steps in order
        let order = library_order(&files, &steps, &(0..10).collect::<Vec<_>>(), 2);
        assert_eq!(order, [(0, 0), (2, 1), (1, 0), (3, 1), (4, 2), (6, 3), (5, 2), (7, 3), (8, 4), (9, 4)]);
    }
}
