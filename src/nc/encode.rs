//! How a statistic's float64 values become the bytes stored in a file: the output type
//! (`--output-type f64|f32|i16`, i16 packed with CF `scale_factor`/`add_offset`), a unit
//! conversion (`--units degC` on kelvin input), and the fill value where a value is missing.
//! Every write path (direct `pwrite`, compressed chunks, libnetcdf) encodes through here, so
//! the three store the same bytes.

use std::str::FromStr;

/// The stored type of the statistics (`--output-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputType {
    /// float64: the computed values exactly.
    F64,
    /// float32: the computed values rounded to the nearest float32.
    F32,
    /// int16 packed with --output-scale S and --output-offset O: value = O + S x stored.
    I16,
}

impl OutputType {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OutputType::F64 => "float64",
            OutputType::F32 => "float32",
            OutputType::I16 => "int16",
        }
    }

    /// Bytes per stored value.
    pub fn size(self) -> usize {
        match self {
            OutputType::F64 => 8,
            OutputType::F32 => 4,
            OutputType::I16 => 2,
        }
    }
}

/// The stored int16 that marks a missing value (NetCDF's default int16 fill); packed values
/// use -32767..=32767.
pub const I16_FILL: i16 = i16::MIN;

/// Chunk shape of compressed outputs (`--chunks NLONxNLAT`; the time chunk is always one day).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkShape {
    pub nlon: usize,
    pub nlat: usize,
}

impl FromStr for ChunkShape {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("'{s}' is not a chunk shape like 1440x721 (longitudes x latitudes, each at least 1)");
        let (a, b) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let (nlon, nlat): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if nlon < 1 || nlat < 1 {
            return Err(bad());
        }
        Ok(ChunkShape { nlon, nlat })
    }
}

/// Uncompressed bytes of a default chunk at most: a whole day's field up to this size (the
/// 0.25° grid in float32, 4.2 MB, is one chunk), else bands of whole rows of about this size,
/// so that a reader of one day's map decompresses one or two chunks and a reader of one
/// region a few bands.
pub const CHUNK_BYTES: usize = 4 << 20;

/// The chunk shape (rows, columns) of a compressed output on an `nlat` x `nlon` grid.
pub fn chunk_shape(nlat: usize, nlon: usize, ty: OutputType, asked: Option<ChunkShape>) -> (usize, usize) {
    if let Some(c) = asked {
        return (c.nlat.min(nlat).max(1), c.nlon.min(nlon).max(1));
    }
    let row = nlon * ty.size();
    let rows = (CHUNK_BYTES / row.max(1)).max(1);
    if rows >= nlat {
        return (nlat, nlon);
    }
    // even bands: 721 rows of float64 in two bands of 361, not 520 + 201
    let bands = nlat.div_ceil(rows);
    (nlat.div_ceil(bands), nlon)
}

/// Everything that turns a computed value into stored bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Encoding {
    pub ty: OutputType,
    /// i16: value = offset + scale x stored.
    pub scale: f64,
    pub offset: f64,
    /// Added to every computed value first (-273.15 for kelvin to degrees Celsius).
    pub shift: f64,
    /// `_FillValue` of float outputs (the i16 fill is [`I16_FILL`]).
    pub fill: f64,
}

/// Why a value cannot be stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EncodeError {
    /// A computed value equals the fill value once stored.
    FillClash,
    /// A value outside what int16 packing holds (`value`: the computed value, after the unit
    /// conversion).
    OutOfRange { value: f64 },
}

impl Encoding {
    /// Plain float64, no conversion.
    pub fn f64(fill: f64) -> Encoding {
        Encoding { ty: OutputType::F64, scale: 1.0, offset: 0.0, shift: 0.0, fill }
    }

    /// The values int16 packing holds: `[offset - 32767 scale, offset + 32767 scale]`.
    pub fn packed_range(&self) -> (f64, f64) {
        (self.offset - 32767.0 * self.scale, self.offset + 32767.0 * self.scale)
    }

    /// `v` in the output units (without a conversion `v` itself: -0.0 + 0.0 would be +0.0).
    fn shifted(&self, v: f64) -> f64 {
        if self.shift == 0.0 {
            v
        } else {
            v + self.shift
        }
    }

    /// The stored bytes of a missing value.
    pub fn fill_bytes(&self, out: &mut Vec<u8>) {
        match self.ty {
            OutputType::F64 => out.extend_from_slice(&self.fill.to_le_bytes()),
            OutputType::F32 => out.extend_from_slice(&(self.fill as f32).to_le_bytes()),
            OutputType::I16 => out.extend_from_slice(&I16_FILL.to_le_bytes()),
        }
    }

    /// Little-endian stored bytes of `values` into `out` (whose length must be
    /// `values.len()` x the type's size), NaN as the fill value.
    pub fn encode_into(&self, values: &[f64], out: &mut [u8]) -> Result<(), EncodeError> {
        debug_assert_eq!(out.len(), values.len() * self.ty.size());
        let mut clash = false;
        match self.ty {
            OutputType::F64 => {
                for (o, &v) in out.chunks_exact_mut(8).zip(values) {
                    let s = if v.is_nan() {
                        self.fill
                    } else {
                        let s = self.shifted(v);
                        clash |= s == self.fill;
                        s
                    };
                    o.copy_from_slice(&s.to_le_bytes());
                }
            }
            OutputType::F32 => {
                let fill = self.fill as f32;
                for (o, &v) in out.chunks_exact_mut(4).zip(values) {
                    let s = if v.is_nan() {
                        fill
                    } else {
                        let s = self.shifted(v) as f32;
                        clash |= s == fill;
                        s
                    };
                    o.copy_from_slice(&s.to_le_bytes());
                }
            }
            OutputType::I16 => {
                for (o, &v) in out.chunks_exact_mut(2).zip(values) {
                    o.copy_from_slice(&self.pack_i16(v)?.to_le_bytes());
                }
            }
        }
        if clash {
            Err(EncodeError::FillClash)
        } else {
            Ok(())
        }
    }
}

impl Encoding {
    /// `v` packed into int16 (`_FillValue` for NaN), or the error for a value outside the
    /// packed range.
    #[inline]
    fn pack_i16(&self, v: f64) -> Result<i16, EncodeError> {
        if v.is_nan() {
            return Ok(I16_FILL);
        }
        let x = self.shifted(v);
        let r = ((x - self.offset) / self.scale).round();
        if !(-32767.0..=32767.0).contains(&r) {
            return Err(EncodeError::OutOfRange { value: x });
        }
        Ok(r as i16)
    }

    /// [`Encoding::encode_into`] then [`shuffle`] in one pass, without the unshuffled copy:
    /// `values`' stored bytes, byte `b` of every value together for each `b` in turn, into
    /// `out` (whose length must be `values.len()` x the type's size).
    pub fn encode_shuffled(&self, values: &[f64], out: &mut [u8]) -> Result<(), EncodeError> {
        debug_assert_eq!(out.len(), values.len() * self.ty.size());
        let mut clash = false;
        match self.ty {
            OutputType::F64 => planes_of::<8>(values, out, |v| {
                let s = if v.is_nan() {
                    self.fill
                } else {
                    let s = self.shifted(v);
                    clash |= s == self.fill;
                    s
                };
                Ok(s.to_bits())
            })?,
            OutputType::F32 => {
                let (fill, shift) = (self.fill as f32, self.shift);
                // without branches (`&`, `|`, selects): what `encode_into` stores
                let one = |v: f64, shifted: f64, clash: &mut bool| {
                    let (nan, s) = (v.is_nan(), shifted as f32);
                    *clash |= !nan & (s == fill);
                    Ok(u64::from(if nan { fill } else { s }.to_bits()))
                };
                if shift == 0.0 {
                    planes_of::<4>(values, out, |v| one(v, v, &mut clash))?
                } else {
                    planes_of::<4>(values, out, |v| one(v, v + shift, &mut clash))?
                }
            }
            OutputType::I16 => planes_of::<2>(values, out, |v| Ok(u64::from(self.pack_i16(v)? as u16)))?,
        }
        if clash {
            Err(EncodeError::FillClash)
        } else {
            Ok(())
        }
    }
}

/// The little-endian `N`-byte words `f` makes of `values`, shuffled into `out`: eight values
/// at a time, each plane's eight bytes gathered into one word and stored at once.
fn planes_of<const N: usize>(
    values: &[f64],
    out: &mut [u8],
    mut f: impl FnMut(f64) -> Result<u64, EncodeError>,
) -> Result<(), EncodeError> {
    let n = values.len();
    let mut planes: Vec<&mut [u8]> = out.chunks_exact_mut(n.max(1)).take(N).collect();
    let blocks = values.chunks_exact(8);
    let tail = blocks.remainder();
    for (i, block) in blocks.enumerate() {
        let mut x = [0u64; 8];
        for (xj, &v) in x.iter_mut().zip(block) {
            *xj = f(v)?;
        }
        let mut w = [0u64; N];
        for (b, wb) in w.iter_mut().enumerate() {
            for (j, xj) in x.iter().enumerate() {
                *wb |= ((xj >> (8 * b)) & 0xFF) << (8 * j);
            }
        }
        for (p, wb) in planes.iter_mut().zip(w) {
            p[8 * i..8 * i + 8].copy_from_slice(&wb.to_le_bytes());
        }
    }
    for (k, &v) in tail.iter().enumerate() {
        let x = f(v)?;
        for (b, p) in planes.iter_mut().enumerate() {
            p[n - tail.len() + k] = (x >> (8 * b)) as u8;
        }
    }
    Ok(())
}

/// A field's computed values: float64 (the climatologies), or float32 where the caller keeps
/// them so (the events' summaries), encoded through float64, which holds every float32.
#[derive(Clone, Copy)]
pub enum Values<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
}

impl Values<'_> {
    /// `values[from..from + out.len() / size]` encoded into `out`.
    pub(crate) fn encode(&self, enc: &Encoding, from: usize, out: &mut [u8]) -> Result<(), EncodeError> {
        let n = out.len() / enc.ty.size();
        match self {
            Values::F64(v) => enc.encode_into(&v[from..from + n], out),
            Values::F32(v) => {
                // through a small float64 buffer: float32 to float64 is exact
                let mut buf = [0f64; 512];
                let size = enc.ty.size();
                for (k, piece) in v[from..from + n].chunks(buf.len()).enumerate() {
                    for (b, &x) in buf.iter_mut().zip(piece) {
                        *b = f64::from(x);
                    }
                    let at = k * buf.len() * size;
                    enc.encode_into(&buf[..piece.len()], &mut out[at..at + piece.len() * size])?;
                }
                Ok(())
            }
        }
    }
}

/// HDF5's shuffle filter: byte `b` of every element together, for each `b` in turn
/// (`size`: bytes per element; a trailing partial element is copied as is).
pub fn shuffle(data: &[u8], size: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(data.len(), 0);
    let n = data.len() / size;
    match size {
        8 => shuffle_n::<8>(data, n, out),
        4 => shuffle_n::<4>(data, n, out),
        2 => shuffle_n::<2>(data, n, out),
        _ => {
            for b in 0..size {
                for (i, d) in out[b * n..(b + 1) * n].iter_mut().enumerate() {
                    *d = data[i * size + b];
                }
            }
        }
    }
    out[n * size..].copy_from_slice(&data[n * size..]);
}

/// [`shuffle`] for `N`-byte values: one pass over the values, `N` output streams.
fn shuffle_n<const N: usize>(data: &[u8], n: usize, out: &mut [u8]) {
    let (planes, _) = out.split_at_mut(n * N);
    let mut streams: Vec<&mut [u8]> = planes.chunks_exact_mut(n.max(1)).collect();
    for (i, v) in data[..n * N].chunks_exact(N).enumerate() {
        for (b, s) in streams.iter_mut().enumerate() {
            s[i] = v[b];
        }
    }
}

/// Bits per byte above which a shuffled byte plane is stored rather than compressed: deflate
/// could gain at most (8 - H) / 8 of it (1 % here) and spends most of its time on such planes
/// (the low mantissa bytes of measured values look random).
const STORE_ENTROPY: f64 = 7.92;

/// Bits per byte above which a shuffled byte plane is coded with runs and a Huffman code only
/// ([`super::rle_deflate`]) at levels above 1: such planes (low mantissa bytes of computed
/// values, runs of the fill value over land) give libdeflate's match finder little beyond the
/// runs, at most of a chunk's compression time; planes below it (sign, exponent and high
/// mantissa bytes) go to libdeflate at the level asked. At level 1 every plane that is not
/// stored is coded with runs: on climatology outputs that is both faster and smaller than
/// libdeflate's level 1 (docs/experiments.md, run 2026-12-02-vm-deflate-s36).
const RUNS_ENTROPY: f64 = 5.0;

/// How a leading byte plane of a shuffled chunk is coded.
#[derive(Clone, Copy, Debug, PartialEq)]
enum PlaneCoding {
    Stored,
    Runs,
}

/// The zlib stream (the HDF5 deflate filter's format) of `raw`, the shuffled bytes of a chunk of
/// `size`-byte values, for deflate level `level` (that of `c`): the leading byte planes that
/// look random (entropy above [`STORE_ENTROPY`]) as deflate's stored blocks, those of high
/// entropy (above [`RUNS_ENTROPY`]; at level 1 all) as run-and-Huffman blocks, the rest
/// compressed by libdeflate as one deflate stream after them (any inflater reads the
/// concatenation: the blocks before it end on a byte boundary and the compressed part refers
/// to nothing before it). Unshuffled data, small chunks, or data whose first plane is of low
/// entropy above level 1, are compressed whole by libdeflate.
pub fn zlib_planes(
    c: &mut libdeflater::Compressor,
    raw: &[u8],
    size: usize,
    shuffled: bool,
    level: u8,
    out: &mut Vec<u8>,
) {
    out.clear();
    let n = raw.len() / size.max(1);
    let mut kinds = Vec::new();
    if shuffled && size > 1 && n >= 4096 {
        // judged on a sample of each plane (64 Ki bytes spread over it): the histogram of a
        // whole plane costs as much as storing it
        while kinds.len() < size {
            let k = kinds.len();
            let h = entropy(&sample(&raw[k * n..(k + 1) * n]));
            match h {
                h if h > STORE_ENTROPY => kinds.push(PlaneCoding::Stored),
                h if level <= 1 || h > RUNS_ENTROPY => kinds.push(PlaneCoding::Runs),
                _ => break,
            }
        }
    }
    if kinds.is_empty() {
        out.resize(c.zlib_compress_bound(raw.len()), 0);
        let len = c.zlib_compress(raw, out).expect("the bound holds the compressed chunk");
        out.truncate(len);
        return;
    }
    let mut w = super::rle_deflate::BitWriter::new(std::mem::take(out));
    // zlib header: deflate, 32 KiB window, no dictionary, check bits (0x7801 % 31 == 0)
    w.out.extend_from_slice(&[0x78, 0x01]);
    let mut runs = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        let plane = &raw[k * n..(k + 1) * n];
        match kind {
            PlaneCoding::Stored => w.stored(plane),
            PlaneCoding::Runs => {
                w.plane(plane, &mut runs);
            }
        }
    }
    let rest = &raw[kinds.len() * n..];
    if rest.is_empty() {
        w.empty_stored(true);
    } else if !w.aligned() {
        w.empty_stored(false);
    }
    let mut out_bytes = w.out;
    if !rest.is_empty() {
        let at = out_bytes.len();
        out_bytes.resize(at + c.deflate_compress_bound(rest.len()), 0);
        let len = c.deflate_compress(rest, &mut out_bytes[at..]).expect("the bound holds the compressed planes");
        out_bytes.truncate(at + len);
    }
    out_bytes.extend_from_slice(&libdeflater::adler32(raw).to_be_bytes());
    *out = out_bytes;
}

/// Up to 64 Ki bytes of `plane`: runs of 4 Ki bytes evenly spread over it.
fn sample(plane: &[u8]) -> Vec<u8> {
    const RUN: usize = 4096;
    if plane.len() <= 16 * RUN {
        return plane.to_vec();
    }
    let step = plane.len() / 16;
    (0..16).flat_map(|k| &plane[k * step..k * step + RUN]).copied().collect()
}

/// Shannon entropy of `bytes` in bits per byte.
fn entropy(bytes: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| f64::from(c) / n).map(|p| -p * p.log2()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_stores_what_readers_decode() {
        let values = [1.5, f64::NAN, -2.25, 300.0];
        let mut e = Encoding::f64(-999.0);
        let mut out = vec![0; 32];
        e.encode_into(&values, &mut out).unwrap();
        let back: Vec<f64> = out.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(back, [1.5, -999.0, -2.25, 300.0]);
        e.ty = OutputType::F32;
        e.shift = -273.15;
        let mut out = vec![0; 16];
        e.encode_into(&values, &mut out).unwrap();
        let back: Vec<f32> = out.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(back, [(1.5f64 - 273.15) as f32, -999.0, (-2.25f64 - 273.15) as f32, (300.0f64 - 273.15) as f32]);
        let e = Encoding { ty: OutputType::I16, scale: 0.01, offset: 20.0, shift: 0.0, fill: f64::NAN };
        let mut out = vec![0; 8];
        e.encode_into(&[20.0, f64::NAN, 20.004, 19.996], &mut out).unwrap();
        let back: Vec<i16> = out.chunks_exact(2).map(|c| i16::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(back, [0, I16_FILL, 0, 0]);
        let (lo, hi) = e.packed_range();
        assert!((lo - (20.0 - 327.67)).abs() < 1e-9 && (hi - (20.0 + 327.67)).abs() < 1e-9);
        assert_eq!(e.encode_into(&[400.0], &mut [0; 2]), Err(EncodeError::OutOfRange { value: 400.0 }));
        assert_eq!(e.encode_into(&[-400.0], &mut [0; 2]), Err(EncodeError::OutOfRange { value: -400.0 }));
    }

    #[test]
    fn a_value_equal_to_the_fill_is_refused() {
        let e = Encoding::f64(5.0);
        assert_eq!(e.encode_into(&[f64::NAN, 5.0], &mut [0; 16]), Err(EncodeError::FillClash));
        assert_eq!(e.encode_into(&[f64::NAN, 4.0], &mut [0; 16]), Ok(()));
        let e = Encoding { ty: OutputType::F32, ..Encoding::f64(9.969_209_968_386_869e36) };
        // rounds to float32's fill
        assert_eq!(e.encode_into(&[9.969_21e36], &mut [0; 4]), Err(EncodeError::FillClash));
    }

    #[test]
    fn default_chunks_are_a_day_or_even_bands() {
        assert_eq!(chunk_shape(181, 360, OutputType::F64, None), (181, 360));
        assert_eq!(chunk_shape(721, 1440, OutputType::F32, None), (721, 1440));
        assert_eq!(chunk_shape(721, 1440, OutputType::F64, None), (361, 1440));
        assert_eq!(chunk_shape(721, 1440, OutputType::F64, Some(ChunkShape { nlon: 100, nlat: 2000 })), (721, 100));
        assert!("0x5".parse::<ChunkShape>().is_err());
    }

    /// Streams with stored random planes inflate (zlib, as HDF5's filter does) to the input.
    #[test]
    fn stored_planes_and_compressed_rest_inflate_to_the_chunk() {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(4).unwrap());
        let mut d = libdeflater::Decompressor::new();
        let n = 100_000usize;
        let values: Vec<f64> =
            (0..n).map(|i| 20.0 + (crate::util::rng::hash(&[i as u64]) % 1_000_000) as f64 * 1e-5).collect();
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut sh = Vec::new();
        shuffle(&raw, 8, &mut sh);
        let (mut out, mut back) = (Vec::new(), vec![0u8; sh.len()]);
        for shuffled in [true, false] {
            zlib_planes(&mut c, &sh, 8, shuffled, 4, &mut out);
            assert_eq!(d.zlib_decompress(&out, &mut back).unwrap(), sh.len());
            assert_eq!(back, sh);
        }
        // level 1: the planes that are not stored coded with runs, none left to libdeflate
        let mut c1 = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(1).unwrap());
        let mut whole = vec![0u8; c1.zlib_compress_bound(sh.len())];
        let whole_len = c1.zlib_compress(&sh, &mut whole).unwrap();
        zlib_planes(&mut c1, &sh, 8, true, 1, &mut out);
        assert_eq!(d.zlib_decompress(&out, &mut back).unwrap(), sh.len());
        assert_eq!(back, sh);
        // the high planes (sign, exponent: few values) are coded, far below their size
        assert!(out.len() < whole_len + whole_len / 10, "{} against libdeflate's {whole_len}", out.len());
        // the low mantissa planes are stored: about their size, and smaller than the chunk
        assert!(entropy(&sh[..n]) > STORE_ENTROPY && out.len() < sh.len(), "{}", out.len());
        // all planes random: every byte stored, an empty final block
        let noise: Vec<u8> = (0..8 * 5000u64).map(|i| crate::util::rng::hash(&[i]) as u8).collect();
        zlib_planes(&mut c, &noise, 8, true, 4, &mut out);
        assert_eq!(d.zlib_decompress(&out, &mut back[..noise.len()]).unwrap(), noise.len());
        assert_eq!(&back[..noise.len()], &noise[..]);
    }

    /// One pass of encoding and shuffling stores what the two passes store, errors included.
    #[test]
    fn encode_shuffled_is_encode_then_shuffle() {
        let h = |i: u64| crate::util::rng::hash(&[i]);
        for n in [0usize, 1, 7, 8, 9, 1001] {
            let values: Vec<f64> = (0..n as u64)
                .map(|i| if h(i) % 7 == 0 { f64::NAN } else { 270.0 + (h(i) % 100_000) as f64 * 3e-4 })
                .collect();
            for e in [
                Encoding::f64(-999.0),
                Encoding { ty: OutputType::F32, shift: -273.15, ..Encoding::f64(9.969_209_968_386_869e36) },
                Encoding { ty: OutputType::I16, scale: 0.01, offset: 280.0, shift: 0.0, fill: f64::NAN },
            ] {
                let size = e.ty.size();
                let (mut plain, mut one) = (vec![0u8; n * size], vec![0u8; n * size]);
                assert_eq!(e.encode_into(&values, &mut plain), Ok(()));
                assert_eq!(e.encode_shuffled(&values, &mut one), Ok(()));
                let mut want = Vec::new();
                shuffle(&plain, size, &mut want);
                assert_eq!(one, want, "{n} values of {:?}", e.ty);
            }
        }
        let e = Encoding { ty: OutputType::I16, scale: 0.01, offset: 20.0, shift: 0.0, fill: f64::NAN };
        let bad: Vec<f64> = (0..20).map(|i| if i == 13 { 400.0 } else { 20.0 }).collect();
        assert_eq!(e.encode_shuffled(&bad, &mut [0; 40]), Err(EncodeError::OutOfRange { value: 400.0 }));
        let e = Encoding::f64(5.0);
        assert_eq!(e.encode_shuffled(&[1.0, 5.0, f64::NAN], &mut [0; 24]), Err(EncodeError::FillClash));
    }

    #[test]
    fn shuffle_groups_bytes() {
        let mut out = Vec::new();
        shuffle(&[1, 2, 3, 4, 5, 6, 7], 2, &mut out);
        assert_eq!(out, [1, 3, 5, 2, 4, 6, 7]);
    }
}
