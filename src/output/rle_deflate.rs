//! Deflate blocks coded with runs and a Huffman code only (what zlib calls the `Z_RLE`
//! strategy), for the byte planes of a shuffled chunk that are neither random (those are
//! stored) nor repetitive: the low mantissa bytes of computed values. On such planes
//! libdeflate's match finder, even at level 1, spends most of a chunk's compression time and
//! finds little beyond runs (of the fill value over land); a per-plane Huffman code with runs
//! coded as matches at distance 1 gets most of its size several times faster (see
//! bench-results/runs/2026-12-02-vm-deflate-s36).
//!
//! [`BitWriter`] writes a raw deflate stream (RFC 1951) block by block: stored blocks, these
//! run-and-Huffman blocks, and a byte-aligning empty stored block before bytes from elsewhere
//! (libdeflate's own stream) are appended.

/// Longest match deflate codes.
const MAX_MATCH: usize = 258;
/// Shortest run coded as a match (a literal then a match of at least 3 repeats).
const MIN_RUN: usize = 4;
/// Symbols of the literal/length alphabet used (0-255, end of block, lengths 257-285).
const NLIT: usize = 286;
const END_OF_BLOCK: usize = 256;

/// First length of each length symbol 257..=285, and its extra bits.
const LEN_BASE: [u16; 29] =
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA: [u8; 29] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
/// The order code-length code lengths are sent in.
const CL_ORDER: [usize; 19] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/// The length symbol's index (0-28) of each match length 3..=258.
fn len_index(len: usize) -> usize {
    debug_assert!((3..=MAX_MATCH).contains(&len));
    // the last base not above `len` (258 has its own symbol)
    LEN_BASE.partition_point(|&b| usize::from(b) <= len) - 1
}

/// A raw deflate stream being written, least significant bit first.
#[derive(Default)]
pub struct BitWriter {
    pub out: Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl BitWriter {
    /// A stream appended to `out`.
    pub fn new(out: Vec<u8>) -> BitWriter {
        BitWriter { out, acc: 0, nbits: 0 }
    }

    /// The low `n` (at most 32) bits of `bits`.
    #[inline]
    fn put(&mut self, bits: u32, n: u32) {
        self.acc |= u64::from(bits) << self.nbits;
        self.nbits += n;
        if self.nbits >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.nbits -= 32;
        }
    }

    /// Pad with zero bits to a byte boundary.
    fn align(&mut self) {
        while self.nbits > 0 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.nbits = self.nbits.saturating_sub(8);
        }
        self.acc = 0;
    }

    /// Whether the stream ends on a byte boundary now.
    pub fn aligned(&self) -> bool {
        self.nbits == 0
    }

    /// `data` as stored blocks (none final).
    pub fn stored(&mut self, data: &[u8]) {
        for block in data.chunks(65_535) {
            self.put(0, 3); // not final, stored
            self.align();
            let len = block.len() as u16;
            self.out.extend_from_slice(&len.to_le_bytes());
            self.out.extend_from_slice(&(!len).to_le_bytes());
            self.out.extend_from_slice(block);
        }
    }

    /// An empty stored block: ends the stream on a byte boundary (`last`: as its final block).
    pub fn empty_stored(&mut self, last: bool) {
        self.put(u32::from(last), 3);
        self.align();
        self.out.extend_from_slice(&[0, 0, 0xFF, 0xFF]);
    }

    /// `data` as one dynamic-Huffman block (not final) of literals and runs (matches at
    /// distance 1).
    pub fn runs_and_huffman(&mut self, data: &[u8], tokens: &mut Vec<u32>) {
        // tokens: a literal byte, or a match length (bit 16 set, length in the low bits)
        tokens.clear();
        let mut freq = [0u32; NLIT];
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            tokens.push(u32::from(b));
            freq[usize::from(b)] += 1;
            let mut run = 1;
            while i + run < data.len() && data[i + run] == b {
                run += 1;
            }
            if run >= MIN_RUN {
                let mut left = run - 1;
                while left >= 3 {
                    let len = left.min(MAX_MATCH);
                    // a remainder of 1 or 2 would not make a match: leave 3 for the next one
                    let len = if left - len > 0 && left - len < 3 { len - 3 } else { len };
                    tokens.push((1 << 16) | len as u32);
                    freq[257 + len_index(len)] += 1;
                    left -= len;
                }
                for _ in 0..left {
                    tokens.push(u32::from(b));
                    freq[usize::from(b)] += 1;
                }
                i += run;
            } else {
                i += 1;
            }
        }
        freq[END_OF_BLOCK] = 1;
        let lit_len = code_lengths(&freq, 15);
        let nlit = 257 + lit_len[257..].iter().rposition(|&l| l > 0).map_or(0, |p| p + 1);
        // one distance code (distance 1) of one bit: zlib and libdeflate accept that single code
        let dist_len = [1u8];
        // the code-length code: every length sent as itself (symbols 0-15, no repeats)
        let mut cl_freq = [0u32; 19];
        lit_len[..nlit].iter().chain(&dist_len).for_each(|&l| cl_freq[usize::from(l)] += 1);
        let cl_len = code_lengths(&cl_freq, 7);
        let ncl = 4.max(CL_ORDER.iter().rposition(|&s| cl_len[s] > 0).map_or(0, |p| p + 1));
        self.put(0b100, 3); // not final, dynamic Huffman (BTYPE 2)
        self.put((nlit - 257) as u32, 5);
        self.put(0, 5); // one distance code
        self.put((ncl - 4) as u32, 4);
        for &s in &CL_ORDER[..ncl] {
            self.put(u32::from(cl_len[s]), 3);
        }
        let cl_code = canonical(&cl_len);
        for &l in lit_len[..nlit].iter().chain(&dist_len) {
            let (c, n) = cl_code[usize::from(l)];
            self.put(c, n);
        }
        let code = canonical(&lit_len);
        // a length symbol's code with its extra bits, then distance code 0 (one bit, 0)
        let mut len_code = [(0u32, 0u32); MAX_MATCH + 1];
        for (len, slot) in len_code.iter_mut().enumerate().skip(3) {
            let k = len_index(len);
            let (c, n) = code[257 + k];
            if n > 0 {
                let extra = (len - usize::from(LEN_BASE[k])) as u32;
                *slot = (c | extra << n, n + u32::from(LEN_EXTRA[k]) + 1);
            }
        }
        for &t in tokens.iter() {
            let (c, n) = if t >> 16 == 0 { code[t as usize] } else { len_code[(t & 0xFFFF) as usize] };
            self.put(c, n);
        }
        let (c, n) = code[END_OF_BLOCK];
        self.put(c, n);
    }
}

/// Huffman code lengths (at most `limit` bits) of symbols with frequencies `freq` (0: unused);
/// where a code would be longer, frequencies are flattened until it is not. A lone used symbol
/// gets a partner so that the code is complete.
fn code_lengths<const N: usize>(freq: &[u32; N], limit: u8) -> [u8; N] {
    let mut f = *freq;
    let used = f.iter().filter(|&&x| x > 0).count();
    if used < 2 {
        // a complete code needs two symbols: give symbol 0 or 1 a count
        let spare = if f[0] == 0 { 0 } else { 1 };
        f[spare] = f[spare].max(1);
        if used == 0 {
            f[1] = 1;
        }
    }
    loop {
        let lens = huffman_lengths(&f);
        if lens.iter().all(|&l| l <= limit) {
            return lens;
        }
        f.iter_mut().filter(|x| **x > 0).for_each(|x| *x = (*x >> 1).max(1));
    }
}

/// Unlimited Huffman code lengths (the tree's depths) of the symbols with non-zero `f`.
fn huffman_lengths<const N: usize>(f: &[u32; N]) -> [u8; N] {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut parent = vec![usize::MAX; 2 * N];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        f.iter().enumerate().filter(|(_, &x)| x > 0).map(|(s, &x)| Reverse((u64::from(x), s))).collect();
    let mut next = N;
    while heap.len() > 1 {
        let Reverse((fa, a)) = heap.pop().expect("two nodes");
        let Reverse((fb, b)) = heap.pop().expect("two nodes");
        parent[a] = next;
        parent[b] = next;
        heap.push(Reverse((fa + fb, next)));
        next += 1;
    }
    let mut lens = [0u8; N];
    for (s, l) in lens.iter_mut().enumerate() {
        if f[s] > 0 {
            let (mut n, mut d) = (s, 0u32);
            while parent[n] != usize::MAX {
                n = parent[n];
                d += 1;
            }
            *l = d.min(255) as u8;
        }
    }
    lens
}

/// The canonical codes (RFC 1951 3.2.2) of `lens`, bit-reversed for writing least significant
/// bit first, with their lengths.
fn canonical<const N: usize>(lens: &[u8; N]) -> [(u32, u32); N] {
    let mut count = [0u32; 16];
    lens.iter().for_each(|&l| count[usize::from(l)] += 1);
    count[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0;
    for bits in 1..16 {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    let mut out = [(0u32, 0u32); N];
    for (s, &l) in lens.iter().enumerate() {
        if l > 0 {
            let c = next[usize::from(l)];
            next[usize::from(l)] += 1;
            out[s] = (c.reverse_bits() >> (32 - u32::from(l)), u32::from(l));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inflate a raw deflate stream with libdeflate (as strict as zlib about block headers).
    fn inflate(stream: &[u8], n: usize) -> Vec<u8> {
        let mut d = libdeflater::Decompressor::new();
        let mut out = vec![0u8; n];
        let got = d.deflate_decompress(stream, &mut out).expect("a valid deflate stream");
        assert_eq!(got, n);
        out
    }

    /// Planes with runs of every length around the match limits, one value, skewed
    /// distributions: each block inflates to its bytes, and runs make it small.
    #[test]
    fn blocks_inflate_to_their_bytes() {
        let mut cases: Vec<Vec<u8>> = vec![vec![], vec![7], vec![7; 100_000], (0..=255).collect()];
        for run in [3, 4, 5, 257, 258, 259, 260, 261, 262, 516, 517, 518, 1000] {
            let mut v = vec![1u8, 2, 3];
            v.extend(vec![9u8; run]);
            v.push(4);
            cases.push(v);
        }
        // skewed noise with runs of a fill byte (a low mantissa plane over land and sea)
        let h = |i: u64| crate::util::rng::hash(&[i]);
        cases.push((0..300_000u64).map(|i| if (i / 700) % 3 == 0 { 0xAB } else { (h(i) % 97) as u8 }).collect());
        // a distribution so skewed that the unlimited code is longer than 15 bits
        cases.push((0..200_000u64).map(|i| (h(i) as u32).trailing_zeros().min(40) as u8 * 5).collect());
        let mut tokens = Vec::new();
        for data in &cases {
            let mut w = BitWriter::default();
            w.runs_and_huffman(data, &mut tokens);
            w.stored(&data[..data.len().min(10)]);
            w.runs_and_huffman(data, &mut tokens);
            w.empty_stored(true);
            let mut want = data.clone();
            want.extend_from_slice(&data[..data.len().min(10)]);
            want.extend_from_slice(data);
            assert_eq!(inflate(&w.out, want.len()), want, "case of {} bytes", data.len());
        }
        let mut w = BitWriter::default();
        w.runs_and_huffman(&cases[2], &mut tokens);
        assert!(w.out.len() < 1000, "a run of 100,000 bytes took {} bytes", w.out.len());
    }

    #[test]
    fn lengths_are_limited_and_complete() {
        let mut f = [0u32; 286];
        for (i, x) in f.iter_mut().enumerate() {
            *x = 1 << (i % 30);
        }
        let l = code_lengths(&f, 15);
        assert!(l.iter().all(|&x| (1..=15).contains(&x)));
        let kraft: f64 = l.iter().map(|&x| 0.5f64.powi(i32::from(x))).sum();
        assert!((kraft - 1.0).abs() < 1e-12, "{kraft}");
        assert_eq!(len_index(3), 0);
        assert_eq!(len_index(10), 7);
        assert_eq!(len_index(11), 8);
        assert_eq!(len_index(12), 8);
        assert_eq!(len_index(257), 27);
        assert_eq!(len_index(258), 28);
    }
}
