//! Small deterministic random numbers: the synthetic dataset and the randomized tests must
//! produce the same values on every machine and for any split of the work, so values are
//! hashes of their coordinates (SplitMix64), not draws from a shared stream.

/// SplitMix64 finalizer: a well-mixed 64-bit hash of `x`.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A hash of several coordinates.
#[inline]
pub fn hash(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5EED_u64, |h, &p| mix(h ^ p))
}

/// Uniform in [0, 1) from a hash.
#[inline]
pub fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A stream of values for tests and tools that just need "random" numbers.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
