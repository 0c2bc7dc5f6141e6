//! Sample percentiles by the nine definitions of Hyndman & Fan (1996), computed exactly.
//!
//! Every definition picks one or two order statistics `x(k)`, `x(k+1)` of the `n` sorted
//! samples and a weight `f` between them. We derive `k` and `f` with integer arithmetic from
//! the percentile written as an exact decimal fraction, so the choice of order statistics never
//! depends on floating-point rounding (e.g. `0.9 * 330` is exactly 297 here), and every engine
//! (CPU, reference, GPU) computes the same `f` bit for bit: it is one correctly rounded
//! division of two integers.
//!
//! Interpolation uses `lerp(lo, hi, f)`: `lo + (hi - lo) * f` for `f < 0.5`, otherwise
//! `hi - (hi - lo) * (1 - f)` (the form numpy uses; exact at both ends and monotone).

use std::fmt;
use std::str::FromStr;

/// A percentile `p` in `[0, 100]`, held as the exact fraction `num / den` of 1.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Percentile {
    num: u64,
    den: u64,
    text: String,
}

/// Why a percentile or method argument was rejected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PercentileError {
    #[error("percentile '{0}' is not a decimal number between 0 and 100")]
    NotANumber(String),
    #[error("percentile '{0}' is outside 0..100")]
    OutOfRange(String),
    #[error("percentile '{0}' has more than 6 decimal places")]
    TooPrecise(String),
    #[error("method '{0}' is not a Hyndman-Fan type 1-9 (or one of: inverted_cdf, averaged_inverted_cdf, closest_observation, interpolated_inverted_cdf, hazen, weibull, linear, median_unbiased, normal_unbiased)")]
    BadMethod(String),
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl FromStr for Percentile {
    type Err = PercentileError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let bad = || PercentileError::NotANumber(text.to_string());
        let (int_part, frac_part) = match text.split_once('.') {
            Some((i, f)) => (i, f),
            None => (text, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad());
        }
        if !int_part.chars().all(|c| c.is_ascii_digit()) || !frac_part.chars().all(|c| c.is_ascii_digit()) {
            return Err(if text.starts_with('-') { PercentileError::OutOfRange(text.into()) } else { bad() });
        }
        let frac_part = frac_part.trim_end_matches('0');
        if frac_part.len() > 6 {
            return Err(PercentileError::TooPrecise(text.into()));
        }
        if int_part.len() > 3 {
            return Err(PercentileError::OutOfRange(text.into()));
        }
        let scale = 10u64.pow(frac_part.len() as u32);
        let int_value: u64 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| bad())? };
        let frac_value: u64 = if frac_part.is_empty() { 0 } else { frac_part.parse().map_err(|_| bad())? };
        let num = int_value * scale + frac_value;
        let den = 100 * scale;
        if num > den {
            return Err(PercentileError::OutOfRange(text.into()));
        }
        let g = gcd(num, den).max(1);
        let canonical = if frac_part.is_empty() { int_value.to_string() } else { format!("{int_value}.{frac_part}") };
        Ok(Percentile { num: num / g, den: den / g, text: canonical })
    }
}

impl Percentile {
    /// `p` as a fraction of 1 (0.9 for the 90th percentile), rounded to f64.
    pub fn fraction(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The percentile as written, canonical decimal form ("90", "97.5").
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The statistic's name in output files: `p90`, `p97_5`.
    pub fn stat_name(&self) -> String {
        format!("p{}", self.text.replace('.', "_"))
    }
}

impl fmt::Display for Percentile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A Hyndman & Fan (1996) sample quantile definition, type 1..=9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Method(u8);

const METHOD_NAMES: [&str; 9] = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
];

impl FromStr for Method {
    type Err = PercentileError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        if let Ok(n) = t.parse::<u8>() {
            return Method::new(n).ok_or(PercentileError::BadMethod(s.into()));
        }
        METHOD_NAMES
            .iter()
            .position(|name| *name == t)
            .map(|i| Method(i as u8 + 1))
            .ok_or(PercentileError::BadMethod(s.into()))
    }
}

impl Method {
    /// MATLAB `prctile` (the reference job's definition).
    pub const HAZEN: Method = Method(5);
    /// numpy's and R's default.
    pub const LINEAR: Method = Method(7);

    /// Type `n`, if `1 <= n <= 9`.
    pub fn new(n: u8) -> Option<Method> {
        (1..=9).contains(&n).then_some(Method(n))
    }

    /// The Hyndman-Fan type number.
    pub fn number(self) -> u8 {
        self.0
    }

    /// The numpy name of this definition ("hazen" for type 5).
    pub fn numpy_name(self) -> &'static str {
        METHOD_NAMES[usize::from(self.0 - 1)]
    }

    /// A human description for output metadata.
    pub fn description(self) -> String {
        let known = match self.0 {
            5 => " = MATLAB prctile",
            7 => " = numpy/R default",
            8 => " = xclim default",
            _ => "",
        };
        format!("Hyndman-Fan type {} ({}{known})", self.0, self.numpy_name())
    }

    /// Where the `p` percentile of `n` sorted samples lies; `None` when `n == 0`.
    pub fn position(self, p: &Percentile, n: usize) -> Option<Position> {
        if n == 0 {
            return None;
        }
        let n_i = n as i128;
        let (a, b) = (i128::from(p.num), i128::from(p.den));
        let clamp = |rank: i128| -> Position { Position { lo: rank.clamp(1, n_i) as usize, frac: 0.0 } };
        let pos = match self.0 {
            1 | 2 => {
                // n p = j + g
                let j = (n_i * a).div_euclid(b);
                let g = (n_i * a).rem_euclid(b);
                if g > 0 {
                    clamp(j + 1)
                } else if self.0 == 1 || j == 0 || j >= n_i {
                    clamp(j)
                } else {
                    Position { lo: j as usize, frac: 0.5 }
                }
            }
            3 => {
                // n p - 1/2 = (2 n a - b) / (2 b) = j + g; x(j) when g == 0 and j even
                let t = 2 * n_i * a - b;
                let j = t.div_euclid(2 * b);
                let g = t.rem_euclid(2 * b);
                if g == 0 && j.rem_euclid(2) == 0 {
                    clamp(j)
                } else {
                    clamp(j + 1)
                }
            }
            _ => {
                // r = p (n + 1 - alpha - beta) + alpha, with alpha and beta in 24ths
                let (alpha, beta): (i128, i128) = match self.0 {
                    4 => (0, 24),
                    5 => (12, 12),
                    6 => (0, 0),
                    7 => (24, 24),
                    8 => (8, 8),
                    _ => (9, 9),
                };
                let num = a * (24 * (n_i + 1) - alpha - beta) + alpha * b;
                let den = 24 * b;
                let k = num.div_euclid(den);
                let rem = num.rem_euclid(den);
                if k < 1 {
                    clamp(1)
                } else if k >= n_i || rem == 0 {
                    clamp(k)
                } else {
                    Position { lo: k as usize, frac: rem as f64 / den as f64 }
                }
            }
        };
        Some(pos)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a percentile lies among `n` sorted samples: at the 1-based rank `lo`, plus `frac`
/// of the way to rank `lo + 1` (`frac == 0` means exactly `x(lo)`; then `lo + 1` is not read).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub lo: usize,
    pub frac: f64,
}

impl Position {
    /// The 1-based ranks this position reads: `lo`, and `lo + 1` when interpolating.
    pub fn ranks(self) -> (usize, Option<usize>) {
        (self.lo, (self.frac != 0.0).then_some(self.lo + 1))
    }

    /// The value from the order statistics `x(lo)` and `x(lo + 1)` (ignored when `frac == 0`).
    pub fn value(self, x_lo: f64, x_hi: f64) -> f64 {
        if self.frac == 0.0 {
            x_lo
        } else {
            lerp(x_lo, x_hi, self.frac)
        }
    }

    /// The value from an ascending sorted slice of all `n` samples.
    pub fn pick(self, sorted: &[f64]) -> f64 {
        let lo = sorted[self.lo - 1];
        let hi = if self.frac == 0.0 { lo } else { sorted[self.lo] };
        self.value(lo, hi)
    }
}

/// Linear interpolation, exact at both ends: the formula every engine must use.
#[inline]
pub fn lerp(lo: f64, hi: f64, frac: f64) -> f64 {
    let diff = hi - lo;
    if frac < 0.5 {
        lo + diff * frac
    } else {
        hi - diff * (1.0 - frac)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pct(s: &str) -> Percentile {
        s.parse().unwrap()
    }

    fn q(method: u8, p: &str, data: &[f64]) -> f64 {
        let mut sorted = data.to_vec();
        sorted.sort_by(f64::total_cmp);
        Method::new(method).unwrap().position(&pct(p), sorted.len()).unwrap().pick(&sorted)
    }

    const PRIMES: [f64; 10] = [2.0, 3.0, 5.0, 7.0, 11.0, 13.0, 17.0, 19.0, 23.0, 29.0];

    /// Hand-worked (see the derivations beside each row) for x = the first ten primes.
    #[test]
    fn all_nine_types_hand_worked() {
        // p = 25: n p = 2.5
        //  1: j=2, g>0 -> x3 = 5           2: g>0 -> x3 = 5
        //  3: np-0.5 = 2, g=0, j even -> x2 = 3
        //  4: r=2.5 -> 3+0.5*2 = 4         5: r=3 -> x3 = 5
        //  6: r=2.75 -> 3+0.75*2 = 4.5     7: r=3.25 -> 5+0.25*2 = 5.5
        //  8: r=35/12 -> 3+11/12*2         9: r=2.9375 -> 3+0.9375*2 = 4.875
        let p25 = [5.0, 5.0, 3.0, 4.0, 5.0, 4.5, 5.5, 3.0 + 22.0 / 12.0, 4.875];
        // p = 90: n p = 9
        //  1: g=0 -> x9 = 23               2: g=0 -> (x9+x10)/2 = 26
        //  3: np-0.5 = 8.5 -> x9 = 23      4: r=9 -> x9 = 23
        //  5: r=9.5 -> 26                  6: r=9.9 -> 23+0.9*6 = 28.4
        //  7: r=9.1 -> 23.6                8: r=9+19/30 -> 23+19/30*6 = 26.8
        //  9: r=9.6 -> 26.6
        let p90 = [23.0, 26.0, 23.0, 23.0, 26.0, 28.4, 23.6, 26.8, 26.6];
        // p = 5: n p = 0.5; everything clamps to x1 except type 7 (r = 1.45 -> 2.45)
        let p5 = [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.45, 2.0, 2.0];
        // p = 35: type 3 has np-0.5 = 3 with j odd -> x4 = 7; type 4: r=3.5 -> 6
        let p35 = [7.0, 7.0, 7.0, 6.0, 7.0, 6.7, 7.6, 6.9, 6.925];
        // p = 30: n p = 3 exactly: type 1 -> x3 = 5, type 2 -> (5+7)/2 = 6
        let p30 = [5.0, 6.0, 5.0, 5.0, 6.0, 5.6, 6.4, 5.0 + 13.0 / 15.0, 5.9];
        for (p, expected) in [("25", p25), ("90", p90), ("5", p5), ("35", p35), ("30", p30)] {
            for (i, want) in expected.iter().enumerate() {
                let got = q(i as u8 + 1, p, &PRIMES);
                assert!((got - want).abs() < 1e-12, "type {} p{p}: got {got}, want {want}", i + 1);
            }
        }
        for t in 1..=9 {
            assert_eq!(q(t, "0", &PRIMES), 2.0, "type {t} p0");
            assert_eq!(q(t, "100", &PRIMES), 29.0, "type {t} p100");
        }
    }

    /// numpy.percentile documentation: a = [[10, 7, 4], [3, 2, 1]] (type 7, "linear").
    #[test]
    fn numpy_documentation_examples_type7() {
        assert_eq!(q(7, "50", &[10.0, 7.0, 4.0, 3.0, 2.0, 1.0]), 3.5);
        // axis=0 -> [6.5, 4.5, 2.5]; axis=1 -> [7., 2.]
        assert_eq!(q(7, "50", &[10.0, 3.0]), 6.5);
        assert_eq!(q(7, "50", &[7.0, 2.0]), 4.5);
        assert_eq!(q(7, "50", &[4.0, 1.0]), 2.5);
        assert_eq!(q(7, "50", &[10.0, 7.0, 4.0]), 7.0);
        assert_eq!(q(7, "50", &[3.0, 2.0, 1.0]), 2.0);
    }

    /// MATLAB prctile documentation and MATLAB Answers 1861198 (type 5).
    #[test]
    fn matlab_documentation_examples_type5() {
        // mathworks.com/help/matlab/ref/prctile.html: rng default; A = randn(1,7);
        // prctile(A,42) = -0.1026
        let a = [
            0.537667139546100,
            1.833885014595086,
            -2.258846861003648,
            0.862173320368121,
            0.318765239858981,
            -1.307688296305273,
            -0.433592022305684,
        ];
        assert!((q(5, "42", &a) - -0.1026).abs() < 5e-5);
        // MATLAB Answers: data = 1:5; prctile(data,20:20:100) = 1.5 2.5 3.5 4.5 5
        let data = [1.0, 2.0, 3.0, 4.0, 5.0];
        let got: Vec<f64> = ["20", "40", "60", "80", "100"].iter().map(|p| q(5, p, &data)).collect();
        assert_eq!(got, [1.5, 2.5, 3.5, 4.5, 5.0]);
        // prctile(data,[0 10:20:90 100]) = 1 1 2 3 4 5 5
        let got: Vec<f64> = ["0", "10", "30", "50", "70", "90", "100"].iter().map(|p| q(5, p, &data)).collect();
        assert_eq!(got, [1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 5.0]);
        // x = (1:5)'*(1:5); prctile(x,[25 50 75]) first column = 1.75 3 4.25
        let got: Vec<f64> = ["25", "50", "75"].iter().map(|p| q(5, p, &data)).collect();
        assert_eq!(got, [1.75, 3.0, 4.25]);
    }

    /// Wikipedia "Percentile", nearest-rank method (= type 1): {15, 20, 35, 40, 50}.
    #[test]
    fn wikipedia_nearest_rank_type1() {
        let x = [15.0, 20.0, 35.0, 40.0, 50.0];
        assert_eq!(q(1, "5", &x), 15.0);
        assert_eq!(q(1, "30", &x), 20.0);
        assert_eq!(q(1, "40", &x), 20.0);
        assert_eq!(q(1, "50", &x), 35.0);
        assert_eq!(q(1, "100", &x), 50.0);
    }

    /// The reference job: N = 330, p90. Type 5: r = 297.5; type 7: r = 297.1 (digest 4.1).
    #[test]
    fn reference_job_positions() {
        let p = pct("90");
        assert_eq!(Method::HAZEN.position(&p, 330), Some(Position { lo: 297, frac: 0.5 }));
        let t7 = Method::LINEAR.position(&p, 330).unwrap();
        assert_eq!(t7.lo, 297);
        assert_eq!(t7.frac, 0.1); // 1/10 correctly rounded: no 0.0999999999999659
        assert_eq!(Method::HAZEN.position(&p, 0), None);
        assert_eq!(Method::HAZEN.position(&p, 1), Some(Position { lo: 1, frac: 0.0 }));
        // n = 2: r = 2.3 -> clamps to x2; n = 3: r = 3.2 -> x3
        assert_eq!(Method::HAZEN.position(&p, 2), Some(Position { lo: 2, frac: 0.0 }));
        assert_eq!(Method::HAZEN.position(&p, 3), Some(Position { lo: 3, frac: 0.0 }));
        // n = 11: r = 10.4
        let p11 = Method::HAZEN.position(&p, 11).unwrap();
        assert_eq!(p11.lo, 10);
        assert_eq!(p11.frac, 0.4);
    }

    #[test]
    fn interpolation_is_exact_at_the_ends_and_on_ties() {
        assert_eq!(lerp(1.0, 2.0, 0.5), 1.5);
        assert_eq!(lerp(0.1, 0.7, 0.999_999), 0.7 - (0.7 - 0.1) * (1.0 - 0.999_999));
        assert_eq!(lerp(3.3, 3.3, 0.37), 3.3);
        assert_eq!(Position { lo: 2, frac: 0.0 }.pick(&[1.0, 2.0]), 2.0);
    }

    #[test]
    fn parsing_percentiles_and_methods() {
        assert_eq!(pct("90").stat_name(), "p90");
        assert_eq!(pct("97.50").stat_name(), "p97_5");
        assert_eq!(pct("0.1").text(), "0.1");
        assert_eq!(pct("90").fraction(), 0.9);
        assert!(matches!("101".parse::<Percentile>(), Err(PercentileError::OutOfRange(_))));
        assert!(matches!("-1".parse::<Percentile>(), Err(PercentileError::OutOfRange(_))));
        assert!(matches!("abc".parse::<Percentile>(), Err(PercentileError::NotANumber(_))));
        assert!(matches!("1.1234567".parse::<Percentile>(), Err(PercentileError::TooPrecise(_))));
        assert!("".parse::<Percentile>().is_err());
        assert_eq!("hazen".parse::<Method>(), Ok(Method::HAZEN));
        assert_eq!("7".parse::<Method>(), Ok(Method::LINEAR));
        assert!("10".parse::<Method>().is_err());
        assert!("0".parse::<Method>().is_err());
    }
}
