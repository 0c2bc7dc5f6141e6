//! Deciding which days exceed the threshold on the int16 values as stored, without decoding
//! them: the scan's comparisons become integer comparisons of the pool's own values.
//!
//! Why: the scan compares every day of every cell with the threshold (twice with `--both`);
//! decoding each int16 through the float64 table first is a dependent load per value and
//! keeps the loop scalar. Where decoding is nondecreasing in the stored value (a positive
//! scale factor), "the decoded value is above the threshold" is "the stored value is above
//! one stored value", found once per day of year and cell from the same table; the values that
//! decode to NaN (missing) take the mean, as in `detect_cell`, whose result per day of year and
//! cell is computed once too. The decision is the same comparison of the same float64 values,
//! so the runs, and therefore the events, are bit for bit those of the decoding scan (tested
//! against it in `scan`).

/// A decoding table (`table[stored + 32768]`) read as an order on the stored values.
#[derive(Clone, Debug)]
pub struct Codes {
    /// The stored values that decode to a number, increasing, and their decoded values
    /// (nondecreasing).
    codes: Vec<i32>,
    vals: Vec<f64>,
    /// The stored values that decode to NaN: below `lo`, above `hi`, and `fill` (`lo - 1` when
    /// there is none between them).
    lo: i32,
    hi: i32,
    fill: i32,
}

/// No stored value exceeds: `x > NEVER` is false for every `x` (an `i32` from an `i16`).
const NEVER: i32 = i32::MAX;

impl Codes {
    /// The order of `table`, where decoding is nondecreasing in the stored value and at most
    /// one stored value between the smallest and largest valid ones decodes to NaN (a fill
    /// value inside a valid range); `None` otherwise (the scan then decodes every value).
    pub fn of(table: &[f64]) -> Option<Codes> {
        assert_eq!(table.len(), 65536);
        let code = |i: usize| i as i32 - 32768;
        let first = table.iter().position(|v| !v.is_nan())?;
        let last = table.iter().rposition(|v| !v.is_nan())?;
        let inside: Vec<usize> = (first..=last).filter(|&i| table[i].is_nan()).collect();
        if inside.len() > 1 {
            return None;
        }
        let fill = inside.first().map_or(code(first) - 1, |&i| code(i));
        let (mut codes, mut vals) = (Vec::new(), Vec::new());
        for i in first..=last {
            if !table[i].is_nan() {
                if vals.last().is_some_and(|&p: &f64| table[i] < p) {
                    return None;
                }
                codes.push(code(i));
                vals.push(table[i]);
            }
        }
        Some(Codes { codes, vals, lo: code(first), hi: code(last), fill })
    }

    /// Whether stored value `x` decodes to NaN (a missing value).
    #[inline(always)]
    pub fn missing(&self, x: i32) -> bool {
        x < self.lo || x > self.hi || x == self.fill
    }

    /// The limit of threshold `thr`: a stored value `x` that decodes to a number exceeds it
    /// (`value > thr` for heatwaves, `-value > -thr` for cold spells, as `detect_cell`
    /// compares the signed series) exactly when `x > limit` (heatwaves) or `-x > limit` (cold
    /// spells). `hint`: where the previous search ended (`usize::MAX`: none), as the threshold
    /// moves little from one day of the year to the next.
    pub fn limit(&self, thr: f64, cold: bool, hint: &mut usize) -> i32 {
        if thr.is_nan() {
            return NEVER;
        }
        // p: how many decoded values do not exceed (heatwaves: value <= thr) or exceed (cold
        // spells: value < thr); in both cases a prefix of `vals`
        let below = |v: f64| if cold { v < thr } else { v <= thr };
        let n = self.vals.len();
        let mut p = if *hint > n { self.vals.partition_point(|&v| below(v)) } else { *hint };
        while p < n && below(self.vals[p]) {
            p += 1;
        }
        while p > 0 && !below(self.vals[p - 1]) {
            p -= 1;
        }
        *hint = p;
        match (cold, p) {
            // every number exceeds
            (false, 0) => i32::MIN,
            // x exceeds when it is above the largest that does not
            (false, p) => self.codes[p - 1],
            (true, 0) => NEVER,
            // x exceeds when x <= codes[p - 1], i.e. -x > -codes[p - 1] - 1
            (true, p) => -self.codes[p - 1] - 1,
        }
    }

    /// A chunk's limits and missing days' decisions (-1: a missing day exceeds, 0: not),
    /// `[kind][doy][cell of the chunk]` (`w` cells), from its mean and thresholds in the same
    /// layout (`cold`: per kind).
    pub fn chunk_limits(
        &self,
        cold: &[bool],
        (mean, thresh): (&[f64], &[f64]),
        (n_doy, w): (usize, usize),
        (limits, missing_exceeds): (&mut Vec<i32>, &mut Vec<i32>),
    ) {
        let n = cold.len() * n_doy * w;
        limits.resize(n, NEVER);
        missing_exceeds.resize(n, 0);
        for (k, &cold) in cold.iter().enumerate() {
            let sign = if cold { -1.0 } else { 1.0 };
            for c in 0..w {
                let mut hint = usize::MAX;
                for d in 0..n_doy {
                    let i = (k * n_doy + d) * w + c;
                    limits[i] = self.limit(thresh[i], cold, &mut hint);
                    // a missing day takes the mean (`detect_cell`'s expressions)
                    missing_exceeds[i] = -i32::from(sign * mean[d * w + c] > sign * thresh[i]);
                }
            }
        }
    }

    /// Set bit `j` of each kind's word of each cell (`bits[kind * w + cell]`) where the
    /// chunk's stored values of the day (`row`; `None`: no file that day) exceed; `at`: the
    /// day of year, the number of them, and the chunk's width. `xs`, `miss`: scratch.
    #[allow(clippy::too_many_arguments)]
    pub fn day_bits(
        &self,
        row: Option<&[i16]>,
        cold: &[bool],
        (limits, missing_exceeds): (&[i32], &[i32]),
        (d, n_doy, w): (usize, usize, usize),
        j: usize,
        bits: &mut [u64],
        (xs, miss): (&mut Vec<i32>, &mut Vec<i32>),
    ) {
        xs.resize(w, 0);
        miss.resize(w, -1);
        match row {
            Some(row) => {
                for ((x, m), &v) in xs.iter_mut().zip(miss.iter_mut()).zip(row) {
                    *x = i32::from(v);
                    *m = -i32::from(self.missing(*x));
                }
            }
            None => miss.fill(-1),
        }
        for (k, &cold) in cold.iter().enumerate() {
            let at = (k * n_doy + d) * w;
            let (limit, fill) = (&limits[at..at + w], &missing_exceeds[at..at + w]);
            let bits = &mut bits[k * w..(k + 1) * w];
            // two copies of one branch-free loop (the compiler keeps them vectorised)
            if cold {
                or_bits::<true>(xs, miss, limit, fill, bits, j);
            } else {
                or_bits::<false>(xs, miss, limit, fill, bits, j);
            }
        }
    }
}

/// `bits[c] |= 1 << j` where cell `c` exceeds: a stored value above its limit (`NEG`: its
/// negation), or a missing one (`miss[c] == -1`) where the mean exceeds (`fill[c] == -1`).
#[inline(always)]
fn or_bits<const NEG: bool>(xs: &[i32], miss: &[i32], limit: &[i32], fill: &[i32], bits: &mut [u64], j: usize) {
    let bit = 1u64 << j;
    let n = bits.len();
    let (xs, miss, limit, fill) = (&xs[..n], &miss[..n], &limit[..n], &fill[..n]);
    for c in 0..n {
        let x = if NEG { -xs[c] } else { xs[c] };
        let above = -i32::from(x > limit[c]);
        let e = (above & !miss[c]) | (fill[c] & miss[c]);
        bits[c] |= (i64::from(e) as u64) & bit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::columns::EventColumns;
    use crate::events::scan::{detect_band, BandInput, Found, Kind};
    use crate::events::{Days, Params};

    /// Every stored value's decision equals the float64 comparison `detect_cell` makes, for
    /// thresholds on, between and beyond the decoded values, NaN, and in both directions.
    #[test]
    fn limits_decide_as_the_decoded_comparison() {
        let decode = |x: i32| {
            if x == -999 || !(-5000..=5000).contains(&x) {
                f64::NAN
            } else {
                f64::from(x) * 0.01 + 0.5
            }
        };
        let table: Vec<f64> = (0..65536).map(|i| decode(i - 32768)).collect();
        let codes = Codes::of(&table).expect("nondecreasing, one fill inside");
        let mut hint = usize::MAX;
        for thr in [-60.0, -49.5, -9.49, -9.485, 0.0, 0.5, 0.51, 12.345, 50.5, 51.0, f64::NAN, f64::INFINITY] {
            for cold in [false, true] {
                let limit = codes.limit(thr, cold, &mut hint);
                for x in -6000..=6000 {
                    if codes.missing(x) {
                        assert!(decode(x).is_nan(), "{x}");
                        continue;
                    }
                    let sign = if cold { -1.0 } else { 1.0 };
                    let want = sign * decode(x) > sign * thr;
                    let got = if cold { -x > limit } else { x > limit };
                    assert_eq!(got, want, "x {x} thr {thr} cold {cold}");
                }
            }
        }
        // decreasing decoding, or several missing values inside: not an order
        let flipped: Vec<f64> = (0..65536).map(|i| -f64::from(i)).collect();
        assert!(Codes::of(&flipped).is_none());
        let mut holes = table.clone();
        holes[32768 + 7] = f64::NAN;
        assert!(Codes::of(&holes).is_none());
        assert!(Codes::of(&vec![f64::NAN; 65536]).is_none());
    }

    /// int16 values compared as stored ([`Codes`]) give bit for bit the events and statistics
    /// of the decoding scan (itself `detect_cell`'s, above): thresholds exactly on decoded
    /// values, between them and below the mean, missing values and files, land, heat and cold.
    #[test]
    fn stored_int16_comparisons_equal_the_decoding_scan() {
        let days = Days::of_years(2001..=2003, crate::calendar::Calendar::Hobday366);
        let (n_days, n_doy, n_cells) = (days.len(), 366, crate::events::scan::CODE_CHUNK + 45);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next_f64 = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 11) as f64 / (1u64 << 53) as f64
        };
        let decode = |x: i16| if x == -32768 { f64::NAN } else { f64::from(x) * 0.01 + 0.3 };
        let table: Vec<f64> = (0..65536).map(|i| decode((i - 32768) as i16)).collect();
        let code = |v: f64| ((v - 0.3) / 0.01).round() as i16;
        let mut next = 0;
        let slot_of_day: Vec<Option<usize>> = (0..n_days)
            .map(|i| {
                (i % 89 != 7).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let mut mean = vec![f64::NAN; n_doy * n_cells];
        let (mut p90, mut p10) = (mean.clone(), mean.clone());
        for c in (0..n_cells).filter(|c| c % 17 != 3) {
            for d in 0..n_doy {
                let i = d * n_cells + c;
                mean[i] = 15.0 + 4.0 * (d as f64 / 40.0).sin() + c as f64 * 0.003;
                let (hi, lo) = match c % 3 {
                    // exactly a decoded value: equal is not above
                    0 => (decode(code(mean[i] + 0.8)), decode(code(mean[i] - 0.8))),
                    1 => (mean[i] + 0.5 + next_f64(), mean[i] - 0.5 - next_f64()),
                    _ => (mean[i] - 0.2, mean[i] + 0.2),
                };
                (p90[i], p10[i]) = (hi, lo);
            }
        }
        let mut data = vec![0i16; next * n_cells];
        for c in 0..n_cells {
            let mut spell = 0.0;
            for (i, slot) in slot_of_day.iter().enumerate() {
                if next_f64() < 0.03 {
                    spell = (next_f64() - 0.5) * 5.0;
                }
                let m = mean[usize::from(days.doy_index[i]) * n_cells + c];
                let v = if m.is_nan() { 15.0 } else { m } + spell + (next_f64() - 0.5);
                if let Some(s) = slot {
                    data[s * n_cells + c] = if next_f64() < 0.03 { -32768 } else { code(v) };
                }
            }
        }
        let codes = Codes::of(&table).expect("an order");
        let value = |v: i16| table[(i32::from(v) + 32768) as usize];
        for (min_duration, max_gap) in [(5, Some(2)), (1, None)] {
            let heat = Params { min_duration, max_gap, cold: false };
            let kinds =
                [Kind { params: heat, thresh: &p90 }, Kind { params: Params { cold: true, ..heat }, thresh: &p10 }];
            let input =
                |codes| BandInput { data: &data, n_cells, slot_of_day: &slot_of_day, days: &days, mean: &mean, codes };
            let want = detect_band(&input(None), value, &kinds, 3);
            let got = detect_band(&input(Some((&codes, &data))), value, &kinds, 3);
            for (g, w) in got.iter().zip(&want) {
                let all = |f: &Found| {
                    let j =
                        |pick: &dyn Fn(&EventColumns) -> Vec<u64>| f.events.iter().flat_map(pick).collect::<Vec<_>>();
                    let mut v = j(&|c| c.cell.iter().map(|&x| x as u64).collect());
                    for k in 0..crate::events::columns::N_INTS {
                        v.extend(j(&|c| c.ints[k].iter().map(|&x| x as u64).collect()));
                    }
                    for k in 0..14 {
                        v.extend(j(&|c| c.floats[k].iter().map(|x| x.to_bits()).collect()));
                    }
                    v.extend(j(&|c| c.category.iter().map(|&x| x as u64).collect()));
                    v.extend(f.summary.iter().map(|x| u64::from(x.to_bits())));
                    v
                };
                assert!(w.n_events() > 100, "the test plants events ({})", w.n_events());
                assert_eq!(g.n_events(), w.n_events());
                assert!(all(g) == all(w), "{min_duration} {max_gap:?}");
            }
        }
    }
}
