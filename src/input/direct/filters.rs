//! Undoing HDF5's filters on a stored chunk: the fletcher32 checksum checked and removed,
//! deflate (zlib streams) inflated with libdeflate, shuffled bytes put back in order.
//!
//! Why it exists: the direct read path decodes compressed chunks on every reader thread
//! without libhdf5 (not thread-safe). libdeflate inflates about 3x faster than zlib
//! (docs/experiments.md, run 2026-12-02-vm-inflate), and a corrupt chunk is reported, never
//! decoded into wrong values: the zlib stream's Adler-32, its length and fletcher32 sums are
//! all checked, as libhdf5 checks them.

use libdeflater::{DecompressionError, Decompressor};

use crate::input::h5meta::{Filter, FILTER_DEFLATE, FILTER_FLETCHER32, FILTER_SHUFFLE};

/// Whether the direct path undoes every filter of `pipeline`; else the first it does not
/// (its id).
pub fn unsupported_filter(pipeline: &[Filter]) -> Option<u16> {
    pipeline.iter().map(|f| f.id).find(|id| ![FILTER_DEFLATE, FILTER_SHUFFLE, FILTER_FLETCHER32].contains(id))
}

/// A filter's usual name, for messages.
pub fn filter_name(id: u16) -> &'static str {
    match id {
        1 => "deflate",
        2 => "shuffle",
        3 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32004 => "lz4",
        32008 => "bitshuffle",
        32013 => "zfp",
        32015 => "zstd",
        32017 => "sz",
        _ => "unknown",
    }
}

/// Per-thread state of the filters: the inflater and two scratch buffers.
#[derive(Default)]
pub struct Unfilter {
    inflater: Option<Decompressor>,
    a: Vec<u8>,
    b: Vec<u8>,
    /// Bytes inflated so far (for the run report).
    pub inflated: u64,
}

impl Unfilter {
    /// Undo `pipeline` (filters whose bit is set in `mask` were skipped for this chunk) on
    /// `stored`, which must give `out_len` bytes; returns them.
    pub fn run<'s>(
        &'s mut self,
        pipeline: &[Filter],
        mask: u32,
        stored: &'s mut Vec<u8>,
        out_len: usize,
    ) -> Result<&'s [u8], String> {
        self.run_leaving_shuffle(pipeline, mask, stored, out_len, false).map(|(data, _)| data)
    }

    /// [`Unfilter::run`], except that where the last filter to undo is the shuffle and
    /// `leave_shuffle` is set, it is left undone and its element size returned with the
    /// shuffled bytes: the caller unshuffles them straight to where they go (the tile's rows),
    /// saving a pass over every chunk.
    pub fn run_leaving_shuffle<'s>(
        &'s mut self,
        pipeline: &[Filter],
        mask: u32,
        stored: &'s mut Vec<u8>,
        out_len: usize,
        leave_shuffle: bool,
    ) -> Result<(&'s [u8], Option<usize>), String> {
        // the first filter applied (the last undone) that this chunk went through
        let last = (0..pipeline.len()).find(|&i| i >= 32 || mask & (1 << i) == 0);
        let mut cur: &mut Vec<u8> = stored;
        let (mut spare_a, mut spare_b) = (&mut self.a, &mut self.b);
        for (i, f) in pipeline.iter().enumerate().rev() {
            if i < 32 && mask & (1 << i) != 0 {
                continue;
            }
            match f.id {
                FILTER_FLETCHER32 => {
                    let n = cur.len().checked_sub(4).ok_or("a fletcher32 chunk shorter than its checksum")?;
                    let stored_sum = u32::from_le_bytes(cur[n..].try_into().expect("4 bytes"));
                    let sum = fletcher32(&cur[..n]);
                    // libhdf5 also accepts the byte-swapped sum that 1.6.0-1.6.2 wrote
                    if stored_sum != sum && stored_sum != sum.swap_bytes() {
                        return Err(format!(
                            "fletcher32 checksum mismatch (stored {stored_sum:#010x}, computed {sum:#010x})"
                        ));
                    }
                    cur.truncate(n);
                }
                FILTER_DEFLATE => {
                    let out = spare_a;
                    // the stream inflates to the chunk's size, plus fletcher32's 4 bytes where
                    // that filter came first on writing (netCDF-C puts it first)
                    out.resize(out_len + 4 * pipeline.len(), 0);
                    let inflater = self.inflater.get_or_insert_with(Decompressor::new);
                    let n = inflater.zlib_decompress(cur, out).map_err(|e| match e {
                        DecompressionError::BadData => "corrupt deflate stream".to_string(),
                        DecompressionError::InsufficientSpace => {
                            format!("the deflate stream inflates to more than the chunk's {out_len} bytes")
                        }
                    })?;
                    out.truncate(n);
                    self.inflated += n as u64;
                    spare_a = std::mem::replace(&mut cur, out);
                }
                FILTER_SHUFFLE => {
                    let elem = f.params.first().map_or(1, |&e| e as usize);
                    if leave_shuffle && Some(i) == last && elem > 1 {
                        if cur.len() != out_len {
                            return Err(format!("{} bytes after the filters, the chunk holds {out_len}", cur.len()));
                        }
                        return Ok((cur.as_slice(), Some(elem)));
                    }
                    let out = spare_b;
                    unshuffle(cur, elem, out);
                    spare_b = std::mem::replace(&mut cur, out);
                }
                id => return Err(format!("filter {id} ({}) is not decoded here", filter_name(id))),
            }
        }
        let _ = (spare_a, spare_b);
        if cur.len() != out_len {
            return Err(format!("{} bytes after the filters, the chunk holds {out_len}", cur.len()));
        }
        Ok((cur.as_slice(), None))
    }
}

/// HDF5's shuffle filter undone: byte `b` of element `i` was stored at `b * n + i`; bytes
/// past the last whole element are stored as they were.
pub fn unshuffle(src: &[u8], elem: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(src.len(), 0);
    if elem <= 1 || src.len() < elem {
        out.copy_from_slice(src);
        return;
    }
    let n = src.len() / elem;
    match elem {
        2 => unshuffle_fixed::<2>(src, n, out),
        4 => unshuffle_fixed::<4>(src, n, out),
        8 => unshuffle_fixed::<8>(src, n, out),
        _ => {
            for b in 0..elem {
                let plane = &src[b * n..(b + 1) * n];
                for (i, &v) in plane.iter().enumerate() {
                    out[i * elem + b] = v;
                }
            }
        }
    }
    out[n * elem..].copy_from_slice(&src[n * elem..]);
}

/// The unshuffle of `E`-byte elements, written so that the compiler vectorises it (one
/// output element from `E` planes at a time).
fn unshuffle_fixed<const E: usize>(src: &[u8], n: usize, out: &mut [u8]) {
    let planes: [&[u8]; E] = std::array::from_fn(|b| &src[b * n..(b + 1) * n]);
    for (i, o) in out[..n * E].chunks_exact_mut(E).enumerate() {
        for b in 0..E {
            o[b] = planes[b][i];
        }
    }
}

/// Elements `first..first + count` of a shuffled buffer (`src`: `elem` planes of `n` bytes,
/// then the bytes past the last whole element) unshuffled into `out` (`count * elem` bytes):
/// a piece of [`unshuffle`]'s output, made without the rest.
pub fn unshuffle_range(src: &[u8], elem: usize, first: usize, count: usize, out: &mut [u8]) {
    let n = src.len() / elem;
    debug_assert!(first + count <= n && out.len() == count * elem);
    match elem {
        2 => unshuffle_range_fixed::<2>(src, n, first, out),
        4 => unshuffle_range_fixed::<4>(src, n, first, out),
        8 => unshuffle_range_fixed::<8>(src, n, first, out),
        _ => {
            for b in 0..elem {
                let plane = &src[b * n + first..b * n + first + count];
                for (i, &v) in plane.iter().enumerate() {
                    out[i * elem + b] = v;
                }
            }
        }
    }
}

fn unshuffle_range_fixed<const E: usize>(src: &[u8], n: usize, first: usize, out: &mut [u8]) {
    let count = out.len() / E;
    let planes: [&[u8]; E] = std::array::from_fn(|b| &src[b * n + first..b * n + first + count]);
    for (i, o) in out.chunks_exact_mut(E).enumerate() {
        for b in 0..E {
            o[b] = planes[b][i];
        }
    }
}

/// HDF5's fletcher32 (`H5_checksum_fletcher32`): 16-bit big-endian words, an odd last byte as
/// the high byte of a word.
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let mut words = data.chunks_exact(2);
    let mut left = data.len() / 2;
    while left > 0 {
        let n = left.min(360);
        left -= n;
        for w in words.by_ref().take(n) {
            sum1 += (u32::from(w[0]) << 8) | u32::from(w[1]);
            sum2 += sum1;
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if data.len() % 2 == 1 {
        sum1 += u32::from(data[data.len() - 1]) << 8;
        sum2 += sum1;
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshuffle_inverts_shuffle() {
        for elem in [1usize, 2, 3, 4, 8] {
            let n = 37;
            let orig: Vec<u8> = (0..n * elem + elem / 2).map(|i| (i * 7 + 3) as u8).collect();
            let whole = (orig.len() / elem) * elem;
            let mut shuffled = vec![0u8; orig.len()];
            for i in 0..whole / elem {
                for b in 0..elem {
                    shuffled[b * (whole / elem) + i] = orig[i * elem + b];
                }
            }
            shuffled[whole..].copy_from_slice(&orig[whole..]);
            let mut out = Vec::new();
            unshuffle(&shuffled, elem, &mut out);
            assert_eq!(out, orig, "element size {elem}");
            // any piece of it, made alone
            for (first, count) in [(0, 1), (5, 11), (0, whole / elem), (36, 1)] {
                let mut piece = vec![0u8; count * elem];
                unshuffle_range(&shuffled, elem, first, count, &mut piece);
                assert_eq!(piece, orig[first * elem..(first + count) * elem], "element size {elem}, {first}+{count}");
            }
        }
    }

    #[test]
    fn fletcher32_matches_the_reference() {
        // the classic Fletcher-32 check values for "abcde" and "abcdef" (16-bit words taken
        // big-endian here, as HDF5 takes them, so the bytes are swapped pairwise)
        assert_eq!(fletcher32(b"ba"), (0x6261 << 16) | 0x6261);
        assert_eq!(fletcher32(&[0x01, 0x02, 0x03]), {
            let s1 = 0x0102u32;
            let s2 = s1;
            let s1b = s1 + 0x0300;
            ((s2 + s1b) << 16) | s1b
        });
    }

    #[test]
    fn a_wrong_fletcher32_sum_is_an_error() {
        let mut u = Unfilter::default();
        let f = [Filter { id: FILTER_FLETCHER32, optional: false, params: vec![] }];
        let data: Vec<u8> = (0..101u32).map(|i| (i * 31) as u8).collect();
        let mut good = data.clone();
        good.extend(fletcher32(&data).to_le_bytes());
        assert_eq!(u.run(&f, 0, &mut good.clone(), 101).unwrap(), &data[..]);
        // the byte-swapped sum of HDF5 1.6.0-1.6.2 is accepted, as libhdf5 accepts it
        let mut swapped = data.clone();
        swapped.extend(fletcher32(&data).swap_bytes().to_le_bytes());
        assert_eq!(u.run(&f, 0, &mut swapped, 101).unwrap(), &data[..]);
        let mut bad = good.clone();
        bad[7] ^= 1;
        assert!(u.run(&f, 0, &mut bad, 101).unwrap_err().contains("fletcher32"));
    }

    #[test]
    fn a_corrupt_stream_is_an_error() {
        let mut u = Unfilter::default();
        let deflate = [Filter { id: FILTER_DEFLATE, optional: false, params: vec![4] }];
        let mut junk = vec![0x78, 0x9c, 1, 2, 3, 4, 5];
        assert!(u.run(&deflate, 0, &mut junk, 100).is_err());
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::default());
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 13) as u8).collect();
        let mut z = vec![0u8; c.zlib_compress_bound(data.len())];
        let n = c.zlib_compress(&data, &mut z).unwrap();
        z.truncate(n);
        let mut good = z.clone();
        assert_eq!(u.run(&deflate, 0, &mut good, 1000).unwrap(), &data[..]);
        let mut bad = z.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1; // the Adler-32
        assert!(u.run(&deflate, 0, &mut bad, 1000).is_err());
        // skipped by the mask: the bytes as stored
        let mut raw = data.clone();
        assert_eq!(u.run(&deflate, 1, &mut raw, 1000).unwrap(), &data[..]);
    }
}
