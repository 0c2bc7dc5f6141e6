//! The one join of both jobs' rank parts: each rank stages its part of every output (its
//! target days of a stacked or climatology file, its latitude rows of the events and the
//! summaries), and rank 0 joins each output from the parts in rank order, which with the
//! contiguous shares of [`super::split`] puts the items in order, so that the outputs are the
//! same at any number of ranks. What a part holds and how it is appended is the output's
//! format's business (the joiner given to [`join_each`]); which parts there are, where, in
//! what order and with which items is decided here, once for both jobs.
//!
//! Parts are files: HDF5 is not written in parallel here, so rank 0 must be able to read the
//! other ranks' staging (the output directory on a shared file system, as on Lustre).

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::split::share;

/// One rank's part of one output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub rank: usize,
    /// Where the rank staged it.
    pub path: PathBuf,
    /// The items of the job's split (target days, latitude rows) the rank holds.
    pub items: Range<usize>,
}

/// Where the ranks of a job staged their parts.
pub struct Staging<'a> {
    /// The items split across the ranks ([`share`]).
    pub n_items: usize,
    pub size: usize,
    /// Whether rank `r` wrote parts (a rank with nothing to compute may write none).
    pub wrote: &'a dyn Fn(usize) -> bool,
    /// Where rank `r` staged its part of the output named `name`.
    pub part: &'a dyn Fn(usize, &str) -> PathBuf,
}

impl Staging<'_> {
    /// The parts of the output named `name`, in rank order.
    pub fn parts(&self, name: &str) -> Vec<Part> {
        (0..self.size)
            .filter(|&r| (self.wrote)(r))
            .map(|r| Part { rank: r, path: (self.part)(r, name), items: share(self.n_items, self.size, r) })
            .collect()
    }
}

/// Join each output `joined[k]` (named by its file name) from the ranks' parts, in rank
/// order: `join(k, parts, joined[k])` writes it (rank 0 only).
pub fn join_each<E>(
    joined: &[PathBuf],
    staging: &Staging,
    mut join: impl FnMut(usize, &[Part], &Path) -> Result<(), E>,
) -> Result<(), E> {
    for (k, out) in joined.iter().enumerate() {
        let name = out.file_name().expect("output files have names").to_string_lossy();
        join(k, &staging.parts(&name), out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_come_in_rank_order_with_their_shares() {
        let part = |r: usize, name: &str| PathBuf::from(format!("rank{r}")).join(name);
        let staging = Staging { n_items: 7, size: 3, wrote: &|r| r != 1, part: &part };
        let parts = staging.parts("a.nc");
        assert_eq!(
            parts,
            [
                Part { rank: 0, path: "rank0/a.nc".into(), items: 0..3 },
                Part { rank: 2, path: "rank2/a.nc".into(), items: 5..7 },
            ]
        );
        let mut seen = Vec::new();
        let joined = [PathBuf::from("out/a.nc"), PathBuf::from("out/b.nc")];
        join_each(&joined, &staging, |k, parts, out| {
            seen.push((k, parts.iter().map(|p| p.path.clone()).collect::<Vec<_>>(), out.to_path_buf()));
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(seen[1], (1, vec![PathBuf::from("rank0/b.nc"), "rank2/b.nc".into()], "out/b.nc".into()));
        // a joiner's failure stops the join
        let mut calls = 0;
        let failed = join_each(&joined, &staging, |_, _, _| {
            calls += 1;
            Err("full")
        });
        assert_eq!((failed, calls), (Err("full"), 1));
    }
}
