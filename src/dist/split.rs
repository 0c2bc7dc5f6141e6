//! The one split of both jobs' work across ranks: `n` items (the climatology job's target
//! days, the events job's latitude rows) cut into contiguous, balanced shares in rank order.
//! Contiguous, so that joining the ranks' parts in rank order ([`super::join`]) gives the
//! items in order and the outputs are the same at any number of ranks; balanced, so that no
//! rank waits on another for more than one item's work.

use std::ops::Range;

/// The share of `n_items` (indices) that `rank` of `n_ranks` owns: contiguous, sizes differ by
/// at most one (the first `n_items % n_ranks` ranks hold one more), in rank order, covering
/// every index once; empty for ranks past `n_items`.
pub fn share(n_items: usize, n_ranks: usize, rank: usize) -> Range<usize> {
    assert!(n_ranks > 0 && rank < n_ranks, "rank {rank} of {n_ranks}");
    let (base, extra) = (n_items / n_ranks, n_items % n_ranks);
    let start = rank * base + rank.min(extra);
    start..start + base + usize::from(rank < extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_contiguous_balanced_and_cover_everything() {
        for n in [0usize, 1, 2, 5, 7, 92, 366] {
            for ranks in 1..=(n + 3).min(40) {
                let shares: Vec<Range<usize>> = (0..ranks).map(|r| share(n, ranks, r)).collect();
                // contiguous and in rank order: each starts where the previous ended
                assert_eq!(shares[0].start, 0);
                assert_eq!(shares[ranks - 1].end, n);
                assert!(shares.windows(2).all(|w| w[0].end == w[1].start), "{n} items, {ranks} ranks: {shares:?}");
                let lens: Vec<usize> = shares.iter().map(|s| s.len()).collect();
                let (lo, hi) = (*lens.iter().min().unwrap(), *lens.iter().max().unwrap());
                assert!(hi - lo <= 1, "{n} items, {ranks} ranks: {lens:?}");
                // larger shares first; extra ranks idle
                assert!(lens.windows(2).all(|w| w[0] >= w[1]));
                assert_eq!(lens.iter().filter(|&&l| l > 0).count(), n.min(ranks));
            }
        }
        assert_eq!(share(92, 5, 0), 0..19);
        assert_eq!(share(92, 5, 4), 74..92);
        assert_eq!(share(3, 5, 3), 3..3);
        // 181 latitude rows on 3 ranks
        assert_eq!([share(181, 3, 0), share(181, 3, 1), share(181, 3, 2)], [0..61, 61..121, 121..181]);
    }
}
