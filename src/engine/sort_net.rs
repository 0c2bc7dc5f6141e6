//! Batcher's odd-even merge sort networks for the CPU engine's groups, written out as
//! straight-line code by scripts/gen-sort-network.py (do not edit; CI checks the two agree).
//!
//! Every compare-exchange names its two keys by constant index, so the keys stay in registers
//! or fixed stack slots and each exchange is a comparison and two conditional moves.

/// Order keys `a` < `b` of `k`.
#[inline(always)]
fn cx<const N: usize>(k: &mut [i64; N], a: usize, b: usize) {
    let (x, y) = (k[a], k[b]);
    k[a] = x.min(y);
    k[b] = x.max(y);
}

/// Ascending sort of 8 keys: 19 compare-exchanges.
#[inline(always)]
pub fn sort8(k: &mut [i64; 8]) {
    cx(k, 0, 1);
    cx(k, 2, 3);
    cx(k, 4, 5);
    cx(k, 6, 7);
    cx(k, 0, 2);
    cx(k, 1, 3);
    cx(k, 4, 6);
    cx(k, 5, 7);
    cx(k, 1, 2);
    cx(k, 5, 6);
    cx(k, 0, 4);
    cx(k, 1, 5);
    cx(k, 2, 6);
    cx(k, 3, 7);
    cx(k, 2, 4);
    cx(k, 3, 5);
    cx(k, 1, 2);
    cx(k, 3, 4);
    cx(k, 5, 6);
}

/// Ascending sort of 16 keys: 63 compare-exchanges.
#[inline(always)]
pub fn sort16(k: &mut [i64; 16]) {
    cx(k, 0, 1);
    cx(k, 2, 3);
    cx(k, 4, 5);
    cx(k, 6, 7);
    cx(k, 8, 9);
    cx(k, 10, 11);
    cx(k, 12, 13);
    cx(k, 14, 15);
    cx(k, 0, 2);
    cx(k, 1, 3);
    cx(k, 4, 6);
    cx(k, 5, 7);
    cx(k, 8, 10);
    cx(k, 9, 11);
    cx(k, 12, 14);
    cx(k, 13, 15);
    cx(k, 1, 2);
    cx(k, 5, 6);
    cx(k, 9, 10);
    cx(k, 13, 14);
    cx(k, 0, 4);
    cx(k, 1, 5);
    cx(k, 2, 6);
    cx(k, 3, 7);
    cx(k, 8, 12);
    cx(k, 9, 13);
    cx(k, 10, 14);
    cx(k, 11, 15);
    cx(k, 2, 4);
    cx(k, 3, 5);
    cx(k, 10, 12);
    cx(k, 11, 13);
    cx(k, 1, 2);
    cx(k, 3, 4);
    cx(k, 5, 6);
    cx(k, 9, 10);
    cx(k, 11, 12);
    cx(k, 13, 14);
    cx(k, 0, 8);
    cx(k, 1, 9);
    cx(k, 2, 10);
    cx(k, 3, 11);
    cx(k, 4, 12);
    cx(k, 5, 13);
    cx(k, 6, 14);
    cx(k, 7, 15);
    cx(k, 4, 8);
    cx(k, 5, 9);
    cx(k, 6, 10);
    cx(k, 7, 11);
    cx(k, 2, 4);
    cx(k, 3, 5);
    cx(k, 6, 8);
    cx(k, 7, 9);
    cx(k, 10, 12);
    cx(k, 11, 13);
    cx(k, 1, 2);
    cx(k, 3, 4);
    cx(k, 5, 6);
    cx(k, 7, 8);
    cx(k, 9, 10);
    cx(k, 11, 12);
    cx(k, 13, 14);
}

/// Ascending sort of 32 keys: 191 compare-exchanges.
#[inline(always)]
pub fn sort32(k: &mut [i64; 32]) {
    cx(k, 0, 1);
    cx(k, 2, 3);
    cx(k, 4, 5);
    cx(k, 6, 7);
    cx(k, 8, 9);
    cx(k, 10, 11);
    cx(k, 12, 13);
    cx(k, 14, 15);
    cx(k, 16, 17);
    cx(k, 18, 19);
    cx(k, 20, 21);
    cx(k, 22, 23);
    cx(k, 24, 25);
    cx(k, 26, 27);
    cx(k, 28, 29);
    cx(k, 30, 31);
    cx(k, 0, 2);
    cx(k, 1, 3);
    cx(k, 4, 6);
    cx(k, 5, 7);
    cx(k, 8, 10);
    cx(k, 9, 11);
    cx(k, 12, 14);
    cx(k, 13, 15);
    cx(k, 16, 18);
    cx(k, 17, 19);
    cx(k, 20, 22);
    cx(k, 21, 23);
    cx(k, 24, 26);
    cx(k, 25, 27);
    cx(k, 28, 30);
    cx(k, 29, 31);
    cx(k, 1, 2);
    cx(k, 5, 6);
    cx(k, 9, 10);
    cx(k, 13, 14);
    cx(k, 17, 18);
    cx(k, 21, 22);
    cx(k, 25, 26);
    cx(k, 29, 30);
    cx(k, 0, 4);
    cx(k, 1, 5);
    cx(k, 2, 6);
    cx(k, 3, 7);
    cx(k, 8, 12);
    cx(k, 9, 13);
    cx(k, 10, 14);
    cx(k, 11, 15);
    cx(k, 16, 20);
    cx(k, 17, 21);
    cx(k, 18, 22);
    cx(k, 19, 23);
    cx(k, 24, 28);
    cx(k, 25, 29);
    cx(k, 26, 30);
    cx(k, 27, 31);
    cx(k, 2, 4);
    cx(k, 3, 5);
    cx(k, 10, 12);
    cx(k, 11, 13);
    cx(k, 18, 20);
    cx(k, 19, 21);
    cx(k, 26, 28);
    cx(k, 27, 29);
    cx(k, 1, 2);
    cx(k, 3, 4);
    cx(k, 5, 6);
    cx(k, 9, 10);
    cx(k, 11, 12);
    cx(k, 13, 14);
    cx(k, 17, 18);
    cx(k, 19, 20);
    cx(k, 21, 22);
    cx(k, 25, 26);
    cx(k, 27, 28);
    cx(k, 29, 30);
    cx(k, 0, 8);
    cx(k, 1, 9);
    cx(k, 2, 10);
    cx(k, 3, 11);
    cx(k, 4, 12);
    cx(k, 5, 13);
    cx(k, 6, 14);
    cx(k, 7, 15);
    cx(k, 16, 24);
    cx(k, 17, 25);
    cx(k, 18, 26);
    cx(k, 19, 27);
    cx(k, 20, 28);
    cx(k, 21, 29);
    cx(k, 22, 30);
    cx(k, 23, 31);
    cx(k, 4, 8);
    cx(k, 5, 9);
    cx(k, 6, 10);
    cx(k, 7, 11);
    cx(k, 20, 24);
    cx(k, 21, 25);
    cx(k, 22, 26);
    cx(k, 23, 27);
    cx(k, 2, 4);
    cx(k, 3, 5);
    cx(k, 6, 8);
    cx(k, 7, 9);
    cx(k, 10, 12);
    cx(k, 11, 13);
    cx(k, 18, 20);
    cx(k, 19, 21);
    cx(k, 22, 24);
    cx(k, 23, 25);
    cx(k, 26, 28);
    cx(k, 27, 29);
    cx(k, 1, 2);
    cx(k, 3, 4);
    cx(k, 5, 6);
    cx(k, 7, 8);
    cx(k, 9, 10);
    cx(k, 11, 12);
    cx(k, 13, 14);
    cx(k, 17, 18);
    cx(k, 19, 20);
    cx(k, 21, 22);
    cx(k, 23, 24);
    cx(k, 25, 26);
    cx(k, 27, 28);
    cx(k, 29, 30);
    cx(k, 0, 16);
    cx(k, 1, 17);
    cx(k, 2, 18);
    cx(k, 3, 19);
    cx(k, 4, 20);
    cx(k, 5, 21);
    cx(k, 6, 22);
    cx(k, 7, 23);
    cx(k, 8, 24);
    cx(k, 9, 25);
    cx(k, 10, 26);
    cx(k, 11, 27);
    cx(k, 12, 28);
    cx(k, 13, 29);
    cx(k, 14, 30);
    cx(k, 15, 31);
    cx(k, 8, 16);
    cx(k, 9, 17);
    cx(k, 10, 18);
    cx(k, 11, 19);
    cx(k, 12, 20);
    cx(k, 13, 21);
    cx(k, 14, 22);
    cx(k, 15, 23);
    cx(k, 4, 8);
    cx(k, 5, 9);
    cx(k, 6, 10);
    cx(k, 7, 11);
    cx(k, 12, 16);
    cx(k, 13, 17);
    cx(k, 14, 18);
    cx(k, 15, 19);
    cx(k, 20, 24);
    cx(k, 21, 25);
    cx(k, 22, 26);
    cx(k, 23, 27);
    cx(k, 2, 4);
    cx(k, 3, 5);
    cx(k, 6, 8);
    cx(k, 7, 9);
    cx(k, 10, 12);
    cx(k, 11, 13);
    cx(k, 14, 16);
    cx(k, 15, 17);
    cx(k, 18, 20);
    cx(k, 19, 21);
    cx(k, 22, 24);
    cx(k, 23, 25);
    cx(k, 26, 28);
    cx(k, 27, 29);
    cx(k, 1, 2);
    cx(k, 3, 4);
    cx(k, 5, 6);
    cx(k, 7, 8);
    cx(k, 9, 10);
    cx(k, 11, 12);
    cx(k, 13, 14);
    cx(k, 15, 16);
    cx(k, 17, 18);
    cx(k, 19, 20);
    cx(k, 21, 22);
    cx(k, 23, 24);
    cx(k, 25, 26);
    cx(k, 27, 28);
    cx(k, 29, 30);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 0/1 input (the 0-1 principle: a network that sorts them sorts everything) for 8
    /// and 16 keys; random inputs with many ties for 32.
    #[test]
    fn the_networks_sort() {
        for bits in 0u32..1 << 16 {
            let mut k16 = [0i64; 16];
            for (i, k) in k16.iter_mut().enumerate() {
                *k = (bits >> i & 1) as i64;
            }
            let mut k8 = [0i64; 8];
            k8.copy_from_slice(&k16[..8]);
            sort16(&mut k16);
            sort8(&mut k8);
            assert!(k16.windows(2).all(|w| w[0] <= w[1]), "{bits:#x}: {k16:?}");
            assert!(k8.windows(2).all(|w| w[0] <= w[1]), "{bits:#x}: {k8:?}");
            assert_eq!(k16.iter().sum::<i64>(), bits.count_ones() as i64);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut k = [0i64; 32];
            for x in k.iter_mut() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // ties, and the extremes the engine pads with
                *x = match state & 7 {
                    0 => i64::MIN,
                    1 => i64::MAX,
                    _ => (state >> 61) as i64 - 4,
                };
            }
            let mut want = k;
            want.sort_unstable();
            sort32(&mut k);
            assert_eq!(k, want);
        }
    }
}
