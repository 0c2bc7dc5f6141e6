//! Whether an int16 pool's decoding table keeps the integers' order. Where it does (any
//! packing with a positive scale factor, the usual case: OSTIA's SST is int16 with scale 0.01),
//! the GPU kernel sorts and searches the integers themselves as 32-bit keys (`sstclim_clim_i16o_*`
//! in `kernels/climatology.hip`) and reads the table only for sums, validity and results,
//! instead of decoding every sample to float64 and sorting 64-bit keys. The check is exact:
//! every pair of integers the table decodes as valid must keep its order in the CPU engine's
//! total order of values (`f64::total_cmp`, so -0 before +0). Integers decoding to the same
//! value may come in any order, since the values at every rank are then the same.

/// True when the valid entries of `table` (finite values; 65,536 of them, integer i at
/// i + 32768) never decrease in the total order.
pub fn table_is_ordered(table: &[f64]) -> bool {
    let mut last: Option<f64> = None;
    for &v in table.iter().filter(|v| v.is_finite()) {
        if last.is_some_and(|l| l.total_cmp(&v).is_gt()) {
            return false;
        }
        last = Some(v);
    }
    true
}

/// Whether ordered int16 kernels may be used (`SSTCLIM_I16_ORDERED=0` turns them off, to
/// measure them against the float64-keyed kernels).
pub fn enabled() -> bool {
    crate::util::knobs::i16_ordered()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::int16_decoding;

    #[test]
    fn positive_scales_keep_the_order_and_negative_ones_do_not() {
        let ostia = int16_decoding(|raw| if raw == -32768.0 { f64::NAN } else { raw * 0.01 + 273.15 });
        assert!(table_is_ordered(&ostia));
        let reversed = int16_decoding(|raw| raw * -0.01 + 20.0);
        assert!(!table_is_ordered(&reversed));
        // holes (missing values, a valid range) do not matter; only the valid entries' order
        let holes = int16_decoding(|raw| if raw.abs() > 4500.0 || raw == 17.0 { f64::NAN } else { raw * 0.5 });
        assert!(table_is_ordered(&holes));
        // a reversal between two valid entries far apart is found
        let mut bent = ostia.to_vec();
        bent[40000] = bent[30000];
        assert!(!table_is_ordered(&bent));
        // equal values are fine (a huge offset rounds neighbours together)
        let flat = int16_decoding(|raw| raw * 1e-3 + 1e17);
        assert!(flat.windows(2).any(|w| w[0] == w[1]) && table_is_ordered(&flat));
    }

    #[test]
    fn signed_zeros_follow_the_total_order() {
        // -0 must come before +0, as the CPU engine orders them
        let mut t = int16_decoding(|raw| raw).to_vec();
        t[32768] = 0.0;
        t[32769] = -0.0; // +0 at integer 0, then -0 at integer 1: a reversal
        t[32770..].iter_mut().for_each(|v| *v = f64::NAN);
        assert!(!table_is_ordered(&t));
        t[32768] = -0.0;
        t[32769] = 0.0;
        assert!(table_is_ordered(&t));
    }
}
