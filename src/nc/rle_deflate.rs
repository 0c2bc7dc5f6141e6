//! Deflate blocks coded with runs and a Huffman code only (what zlib calls the `Z_RLE`
//! strategy), for the byte planes of a shuffled chunk that are neither random (those are
//! stored) nor repetitive: the low mantissa bytes of computed values. On such planes
//! libdeflate's match finder, even at level 1, spends most of a chunk's compression time and
//! finds little beyond runs (of the fill value over land); a per-plane Huffman code with runs
//! coded as matches at distance 1 gets most of its size several times faster (see
//! docs/experiments.md, run 2026-12-02-vm-deflate-s36).
//!
//! [`BitWriter`] writes a raw deflate stream (RFC 1951) block by block: stored blocks, these
//! run-and-Huffman blocks, and a byte-aligning empty stored block before bytes from elsewhere
//! (libdeflate's own stream) are appended.
//!
//! A plane is coded in two passes: the first finds its runs (eight positions tested at a time
//! on words) and counts the literals left between them, which gives the code and the block's
//! exact size, so that a plane the code would not shrink by [`MIN_GAIN`] is stored instead and
//! the second pass writes into room sized beforehand, eight bytes at a time.

/// Longest match deflate codes.
const MAX_MATCH: usize = 258;
/// Shortest run coded as a match (a literal then a match of at least 3 repeats).
const MIN_RUN: usize = 4;
/// Symbols of the literal/length alphabet used (0-255, end of block, lengths 257-285).
const NLIT: usize = 286;
const END_OF_BLOCK: usize = 256;
/// Longest literal/length code: four literals (56 bits) then fit the 64-bit bit buffer after a
/// flush, which leaves at most 7 bits (deflate allows 15; one bit less costs next to nothing).
const MAX_CODE: u8 = 14;
/// One distance code (distance 1) of one bit: zlib and libdeflate accept that single code.
const DIST_LEN: [u8; 1] = [1];
/// Least fraction of a plane's bytes a Huffman block must save, else the plane is stored:
/// coding a byte costs about ten times copying it, and on a node whose cores code several
/// times faster than its disk writes, saving less than this costs more core time than it saves
/// disk time (docs/experiments.md, run 2026-12-02-vm-deflate-s37).
pub const MIN_GAIN: f64 = 0.1;

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
    /// distance 1), or as stored blocks where that block would not be at least
    /// [`MIN_GAIN`] smaller; whether it was coded. `runs`: scratch kept between calls.
    pub fn plane(&mut self, data: &[u8], runs: &mut Vec<Run>) -> bool {
        let block = Block::plan(data, runs);
        let stored_bits = 8 * (data.len() + 5 * data.len().div_ceil(65_535)) as u64;
        if block.bits as f64 > (1.0 - MIN_GAIN) * stored_bits as f64 {
            self.stored(data);
            return false;
        }
        self.emit(&block, data, runs);
        true
    }

    /// `data` as one dynamic-Huffman block (not final) of literals and runs, whatever its size.
    #[cfg(test)]
    pub fn runs_and_huffman(&mut self, data: &[u8], runs: &mut Vec<Run>) {
        let block = Block::plan(data, runs);
        self.emit(&block, data, runs);
    }

    /// Write `block` (planned from `data` and `runs`).
    fn emit(&mut self, block: &Block, data: &[u8], runs: &[Run]) {
        self.put(0b100, 3); // not final, dynamic Huffman (BTYPE 2)
        self.put((block.nlit - 257) as u32, 5);
        self.put(0, 5); // one distance code
        self.put((block.ncl - 4) as u32, 4);
        for &s in &CL_ORDER[..block.ncl] {
            self.put(u32::from(block.cl_len[s]), 3);
        }
        let cl_code = canonical(&block.cl_len);
        for &l in block.lit_len[..block.nlit].iter().chain(&DIST_LEN) {
            let (c, n) = cl_code[usize::from(l)];
            self.put(c, n);
        }
        let code = canonical(&block.lit_len);
        // literal codes with their lengths in bits 16 and up
        let mut lit = [0u32; 256];
        for (e, &(c, n)) in lit.iter_mut().zip(&code[..256]) {
            *e = c | n << 16;
        }
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
        // the body: written 8 bytes at a time into room sized from the planned bit count
        let at = self.out.len();
        self.out.resize(at + (block.bits / 8) as usize + 16, 0);
        let mut s = Sink { out: &mut self.out[..], p: at, acc: self.acc, n: self.nbits };
        s.flush();
        let mut from = 0;
        for r in runs {
            let (start, len) = (r.start as usize, r.len as usize);
            s.literals(&data[from..=start], &lit);
            let left = split_run(len - 1, |m| {
                let (c, n) = len_code[m];
                s.add(c, n);
                s.flush();
            });
            s.literals(&data[start..start + left], &lit);
            from = start + len;
        }
        s.literals(&data[from..], &lit);
        let (c, n) = code[END_OF_BLOCK];
        s.add(c, n);
        s.flush();
        let (p, acc, n) = (s.p, s.acc, s.n);
        self.out.truncate(p);
        self.acc = acc;
        self.nbits = n;
    }
}

/// A run of at least [`MIN_RUN`] equal bytes of a plane: coded as its first byte then matches
/// at distance 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run {
    start: u32,
    len: u32,
}

/// The Huffman code of one block and its size in bits.
struct Block {
    lit_len: [u8; NLIT],
    nlit: usize,
    cl_len: [u8; 19],
    ncl: usize,
    /// The whole block, header included.
    bits: u64,
}

impl Block {
    /// Find `data`'s runs (into `runs`), count its symbols and build the block's codes.
    fn plan(data: &[u8], runs: &mut Vec<Run>) -> Block {
        find_runs(data, runs);
        let mut freq = [0u32; NLIT];
        // the literals' histogram (the bytes between runs, and each run's first byte and
        // leftover), four tables to keep increments of equal bytes apart
        let mut h = [[0u32; 256]; 4];
        let mut count = |bytes: &[u8]| {
            let mut q = bytes.chunks_exact(4);
            for c in &mut q {
                let w = u32::from_le_bytes(c.try_into().expect("4 bytes"));
                for (k, t) in h.iter_mut().enumerate() {
                    t[(w >> (8 * k)) as usize & 0xFF] += 1;
                }
            }
            q.remainder().iter().for_each(|&b| h[0][usize::from(b)] += 1);
        };
        let mut extra = 0u64;
        let mut from = 0;
        for r in runs.iter() {
            let (start, len) = (r.start as usize, r.len as usize);
            count(&data[from..=start]);
            let left = split_run(len - 1, |m| {
                let k = len_index(m);
                freq[257 + k] += 1;
                extra += u64::from(LEN_EXTRA[k]) + 1;
            });
            freq[usize::from(data[start])] += left as u32;
            from = start + len;
        }
        count(&data[from..]);
        for (b, f) in freq[..256].iter_mut().enumerate() {
            *f += h[0][b] + h[1][b] + h[2][b] + h[3][b];
        }
        freq[END_OF_BLOCK] = 1;
        let lit_len = code_lengths(&freq, MAX_CODE);
        let nlit = 257 + lit_len[257..].iter().rposition(|&l| l > 0).map_or(0, |p| p + 1);
        // the code-length code: every length sent as itself (symbols 0-15, no repeats)
        let mut cl_freq = [0u32; 19];
        lit_len[..nlit].iter().chain(&DIST_LEN).for_each(|&l| cl_freq[usize::from(l)] += 1);
        let cl_len = code_lengths(&cl_freq, 7);
        let ncl = 4.max(CL_ORDER.iter().rposition(|&s| cl_len[s] > 0).map_or(0, |p| p + 1));
        let header = 17 + 3 * ncl as u64;
        let lengths: u64 = lit_len[..nlit].iter().chain(&DIST_LEN).map(|&l| u64::from(cl_len[usize::from(l)])).sum();
        let body: u64 = freq.iter().zip(&lit_len).map(|(&f, &l)| u64::from(f) * u64::from(l)).sum();
        Block { lit_len, nlit, cl_len, ncl, bits: header + lengths + body + extra }
    }
}

/// Split the `left` repeats of a run's first byte into matches (each handed to `f`, 3 to
/// [`MAX_MATCH`] long); the repeats left over (0-2), coded as literals.
#[inline]
fn split_run(mut left: usize, mut f: impl FnMut(usize)) -> usize {
    while left >= 3 {
        let len = left.min(MAX_MATCH);
        // a remainder of 1 or 2 would not make a match: leave 3 for the next one
        let len = if left - len > 0 && left - len < 3 { len - 3 } else { len };
        f(len);
        left -= len;
    }
    left
}

/// The eight bytes of `data` from `i`, as a little-endian word.
#[inline(always)]
fn word(data: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(data[i..i + 8].try_into().expect("8 bytes"))
}

/// Every run of at least [`MIN_RUN`] equal bytes of `data`, in order, into `runs`: eight
/// starting positions tested at a time by comparing words shifted by one to three bytes.
fn find_runs(data: &[u8], runs: &mut Vec<Run>) {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    runs.clear();
    let n = data.len();
    let mut i = 0;
    // the run starting at `s` (at least MIN_RUN bytes long) and where it ends
    let extend = |s: usize| {
        let b = data[s];
        let bb = u64::from(b) * 0x0101_0101_0101_0101;
        let mut e = s + MIN_RUN;
        loop {
            if e + 8 > n {
                while e < n && data[e] == b {
                    e += 1;
                }
                return e;
            }
            let x = word(data, e) ^ bb;
            if x != 0 {
                return e + (x.trailing_zeros() / 8) as usize;
            }
            e += 8;
        }
    };
    while i + 11 <= n {
        let a = word(data, i);
        // byte j of t is zero where bytes i+j .. i+j+3 are equal
        let t = (a ^ word(data, i + 1)) | (a ^ word(data, i + 2)) | (a ^ word(data, i + 3));
        let zero = !(((t & LOW7).wrapping_add(LOW7)) | t) & HIGH;
        if zero == 0 {
            i += 8;
            continue;
        }
        let s = i + (zero.trailing_zeros() / 8) as usize;
        let e = extend(s);
        runs.push(Run { start: s as u32, len: (e - s) as u32 });
        i = e;
    }
    while i + MIN_RUN <= n {
        if data[i + 1..i + MIN_RUN].iter().all(|&x| x == data[i]) {
            let e = extend(i);
            runs.push(Run { start: i as u32, len: (e - i) as u32 });
            i = e;
        } else {
            i += 1;
        }
    }
}

/// The body of a block being written: a 64-bit buffer flushed 8 bytes at a time into room
/// sized beforehand (each flush leaves at most 7 bits, so four codes of at most
/// [`MAX_CODE`] bits fit before the next).
struct Sink<'a> {
    out: &'a mut [u8],
    p: usize,
    acc: u64,
    n: u32,
}

impl Sink<'_> {
    #[inline(always)]
    fn add(&mut self, code: u32, len: u32) {
        self.acc |= u64::from(code) << self.n;
        self.n += len;
    }

    #[inline(always)]
    fn flush(&mut self) {
        self.out[self.p..self.p + 8].copy_from_slice(&self.acc.to_le_bytes());
        let k = self.n >> 3;
        self.p += k as usize;
        // k is at most 7: the buffer never holds 64 bits
        self.acc >>= 8 * k;
        self.n &= 7;
    }

    /// `bytes` as literals (`lit`: code, and length in bits 16 and up).
    #[inline(always)]
    fn literals(&mut self, bytes: &[u8], lit: &[u32; 256]) {
        let mut q = bytes.chunks_exact(4);
        for c in &mut q {
            // the four codes joined first: only the join's length waits for the buffer
            let (mut codes, mut len) = (0u64, 0u32);
            for &b in c {
                let e = lit[usize::from(b)];
                codes |= u64::from(e & 0xFFFF) << len;
                len += e >> 16;
            }
            self.acc |= codes << self.n;
            self.n += len;
            self.flush();
        }
        for &b in q.remainder() {
            let e = lit[usize::from(b)];
            self.add(e & 0xFFFF, e >> 16);
        }
        self.flush();
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
        let mut runs = Vec::new();
        for data in &cases {
            let mut w = BitWriter::default();
            w.runs_and_huffman(data, &mut runs);
            w.stored(&data[..data.len().min(10)]);
            w.runs_and_huffman(data, &mut runs);
            w.empty_stored(true);
            let mut want = data.clone();
            want.extend_from_slice(&data[..data.len().min(10)]);
            want.extend_from_slice(data);
            assert_eq!(inflate(&w.out, want.len()), want, "case of {} bytes", data.len());
        }
        let mut w = BitWriter::default();
        w.runs_and_huffman(&cases[2], &mut runs);
        assert!(w.out.len() < 1000, "a run of 100,000 bytes took {} bytes", w.out.len());
    }

    /// The word-wise run finder finds exactly the runs a byte-by-byte scan finds.
    #[test]
    fn runs_are_found_as_a_plain_scan_finds_them() {
        let h = |i: u64| crate::util::rng::hash(&[i]);
        for n in [0usize, 3, 4, 10, 11, 12, 19, 1000, 5000] {
            // runs of every length from 1 to 12 at every alignment, then a long one at the end
            let mut data = Vec::new();
            let mut k = 0u64;
            while data.len() < n {
                let len = 1 + (h(k) % 12) as usize;
                data.extend(std::iter::repeat((h(k + 1000) % 3) as u8).take(len.min(n - data.len())));
                k += 1;
            }
            let mut want = Vec::new();
            let mut i = 0;
            while i < n {
                let mut e = i + 1;
                while e < n && data[e] == data[i] {
                    e += 1;
                }
                if e - i >= MIN_RUN {
                    want.push(Run { start: i as u32, len: (e - i) as u32 });
                }
                i = e;
            }
            let mut runs = Vec::new();
            find_runs(&data, &mut runs);
            assert_eq!(runs, want, "{n} bytes");
        }
    }

    /// Random bytes are stored (a code cannot shrink them), skewed ones coded, both inflate.
    #[test]
    fn planes_the_code_would_not_shrink_are_stored() {
        let h = |i: u64| crate::util::rng::hash(&[i]);
        let noise: Vec<u8> = (0..100_000u64).map(|i| h(i) as u8).collect();
        let skewed: Vec<u8> = (0..100_000u64).map(|i| (h(i) % 16) as u8).collect();
        let mut runs = Vec::new();
        let mut w = BitWriter::default();
        assert!(!w.plane(&noise, &mut runs));
        assert!(w.plane(&skewed, &mut runs));
        w.empty_stored(true);
        // stored: its bytes and 5 bytes a block; coded: about 4 bits a byte (a few literals
        // take 5 bits next to the rare runs' length codes)
        assert!(w.out.len() < noise.len() + 10 + skewed.len() / 2 + 2000, "{}", w.out.len());
        let want: Vec<u8> = noise.iter().chain(&skewed).copied().collect();
        assert_eq!(inflate(&w.out, want.len()), want);
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
