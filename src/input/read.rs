//! Reading a region of the data variable in the file's own storage type and order, and
//! decoding it (packing rules, then transposition to `(lat, lon)`) into pool rows.
//!
//! Reading takes libnetcdf (one call, serialized by the library's global lock); decoding is
//! plain Rust and runs on any thread, so callers read on one thread and decode on others.

use std::ops::Range;
use std::path::Path;

use super::error::InputError;
use super::layout::VarLayout;
use super::packing::Packing;
use super::storage::Storage;
use crate::pool::Sample;

/// A rectangle of the canonical grid: latitude rows x longitude columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub rows: Range<usize>,
    pub cols: Range<usize>,
}

impl Region {
    pub fn n_cells(&self) -> usize {
        self.rows.len() * self.cols.len()
    }
}

/// Values as stored, in the file's dimension order.
#[derive(Debug)]
pub enum RawData {
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl RawData {
    /// Bytes of stored data.
    pub fn bytes(&self) -> usize {
        match self {
            RawData::I8(v) => v.len(),
            RawData::U8(v) => v.len(),
            RawData::I16(v) => v.len() * 2,
            RawData::U16(v) => v.len() * 2,
            RawData::I32(v) => v.len() * 4,
            RawData::U32(v) => v.len() * 4,
            RawData::F32(v) => v.len() * 4,
            RawData::F64(v) => v.len() * 8,
        }
    }
}

/// Apply `$body` to the typed vector inside a [`RawData`].
macro_rules! each_raw {
    ($raw:expr, $v:ident => $body:expr) => {
        match $raw {
            RawData::I8($v) => $body,
            RawData::U8($v) => $body,
            RawData::I16($v) => $body,
            RawData::U16($v) => $body,
            RawData::I32($v) => $body,
            RawData::U32($v) => $body,
            RawData::F32($v) => $body,
            RawData::F64($v) => $body,
        }
    };
}

impl RawData {
    /// `n` zero values of type `storage`.
    pub fn zeroed(storage: Storage, n: usize) -> RawData {
        match storage {
            Storage::I8 => RawData::I8(vec![0; n]),
            Storage::U8 => RawData::U8(vec![0; n]),
            Storage::I16 => RawData::I16(vec![0; n]),
            Storage::U16 => RawData::U16(vec![0; n]),
            Storage::I32 => RawData::I32(vec![0; n]),
            Storage::U32 => RawData::U32(vec![0; n]),
            Storage::F32 => RawData::F32(vec![0.0; n]),
            Storage::F64 => RawData::F64(vec![0.0; n]),
        }
    }

    /// Hold `n` values of type `storage` (contents unspecified), reusing the allocation.
    pub fn resize(&mut self, storage: Storage, n: usize) {
        let same = matches!(
            (&*self, storage),
            (RawData::I8(_), Storage::I8)
                | (RawData::U8(_), Storage::U8)
                | (RawData::I16(_), Storage::I16)
                | (RawData::U16(_), Storage::U16)
                | (RawData::I32(_), Storage::I32)
                | (RawData::U32(_), Storage::U32)
                | (RawData::F32(_), Storage::F32)
                | (RawData::F64(_), Storage::F64)
        );
        if !same {
            *self = RawData::zeroed(storage, n);
        }
        each_raw!(self, v => v.resize(n, Default::default()));
    }

    /// The values' bytes, to read into.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: every variant is a Vec of plain numbers; any byte pattern is a valid value
        // and u8 has no alignment requirement.
        each_raw!(self, v => unsafe {
            std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(&v[..]))
        })
    }

    /// Values read as big-endian bytes, into native order.
    pub fn swap_from_big_endian(&mut self) {
        if cfg!(target_endian = "little") {
            self.swap_bytes();
        }
    }

    /// Values read as little-endian bytes, into native order.
    pub fn swap_from_little_endian(&mut self) {
        if cfg!(target_endian = "big") {
            self.swap_bytes();
        }
    }

    /// Reverse the bytes of every value.
    fn swap_bytes(&mut self) {
        macro_rules! swap {
            ($v:expr, $int:ty, $t:ty) => {
                for x in $v.iter_mut() {
                    *x = <$t>::from_ne_bytes(<$int>::from_ne_bytes(x.to_ne_bytes()).swap_bytes().to_ne_bytes());
                }
            };
        }
        match self {
            RawData::I8(_) | RawData::U8(_) => {}
            RawData::I16(v) => swap!(v, i16, i16),
            RawData::U16(v) => swap!(v, u16, u16),
            RawData::I32(v) => swap!(v, i32, i32),
            RawData::U32(v) => swap!(v, u32, u32),
            RawData::F32(v) => swap!(v, u32, f32),
            RawData::F64(v) => swap!(v, u64, f64),
        }
    }
}

/// Read `region` of the variable `layout` describes from `file` (opened from `path`).
pub fn read_region(
    file: &netcdf::File,
    path: &Path,
    layout: &VarLayout,
    region: &Region,
) -> Result<RawData, InputError> {
    read_extents(file, path, layout, layout.extents(&region.rows, &region.cols))
}

/// [`read_region`] at time step `step` of the file (along [`VarLayout::time_axis`]).
pub fn read_region_at(
    file: &netcdf::File,
    path: &Path,
    layout: &VarLayout,
    region: &Region,
    step: usize,
) -> Result<RawData, InputError> {
    read_extents(file, path, layout, layout.extents_at(step, &region.rows, &region.cols))
}

/// The hyperslab `ext` of the variable, in its storage type.
fn read_extents(
    file: &netcdf::File,
    path: &Path,
    layout: &VarLayout,
    ext: Vec<netcdf::Extent>,
) -> Result<RawData, InputError> {
    let read_err = |cause| InputError::Read { path: path.into(), var: layout.name.clone(), cause };
    let var = file.variable(&layout.name).ok_or_else(|| InputError::NoSuchVariable {
        path: path.into(),
        var: layout.name.clone(),
        available: String::new(),
    })?;
    Ok(match layout.storage {
        Storage::I8 => RawData::I8(var.get_values(ext).map_err(read_err)?),
        Storage::U8 => RawData::U8(var.get_values(ext).map_err(read_err)?),
        Storage::I16 => RawData::I16(var.get_values(ext).map_err(read_err)?),
        Storage::U16 => RawData::U16(var.get_values(ext).map_err(read_err)?),
        Storage::I32 => RawData::I32(var.get_values(ext).map_err(read_err)?),
        Storage::U32 => RawData::U32(var.get_values(ext).map_err(read_err)?),
        Storage::F32 => RawData::F32(var.get_values(ext).map_err(read_err)?),
        Storage::F64 => RawData::F64(var.get_values(ext).map_err(read_err)?),
    })
}

/// Decode `raw` (as read for `region` with `layout`) into `dest`, in `(lat, lon)` order.
pub fn decode_region<T: Sample>(layout: &VarLayout, region: &Region, raw: &RawData, dest: &mut [T]) {
    let (nr, nc) = (region.rows.len(), region.cols.len());
    let transpose = !layout.lat_is_slow();
    let p = &layout.packing;
    match raw {
        RawData::I8(v) => decode_slab(v, p, transpose, nr, nc, dest),
        RawData::U8(v) => decode_slab(v, p, transpose, nr, nc, dest),
        // an int16 pool keeps int16 files' integers as they are (its table decodes them)
        RawData::I16(v) if !transpose && p.quantize.is_none() && T::copy_int16(v, dest) => {}
        RawData::I16(v) => decode_slab(v, p, transpose, nr, nc, dest),
        RawData::U16(v) => decode_slab(v, p, transpose, nr, nc, dest),
        RawData::I32(v) => decode_slab(v, p, transpose, nr, nc, dest),
        RawData::U32(v) => decode_slab(v, p, transpose, nr, nc, dest),
        RawData::F32(v) => decode_slab(v, p, transpose, nr, nc, dest),
        RawData::F64(v) => decode_slab(v, p, transpose, nr, nc, dest),
    }
}

/// Decode the values `at` of `raw` (a caller's array held in memory, `[row][col]` order, a
/// memory source's step) into `dest` with `packing`: the same decoding a file's values take, so
/// that a job over values in memory equals the job over the same values in files.
pub fn decode_stored<T: Sample>(
    raw: &RawData,
    at: Range<usize>,
    packing: &Packing,
    nr: usize,
    nc: usize,
    dest: &mut [T],
) {
    match raw {
        // an int16 pool keeps int16 values as they are (its table decodes them)
        RawData::I16(v) if packing.quantize.is_none() && T::copy_int16(&v[at.clone()], dest) => {}
        _ => each_raw!(raw, v => decode_slab(&v[at], packing, false, nr, nc, dest)),
    }
}

/// Decode one 2-D slab. Stored order is `[nr][nc]`, or `[nc][nr]` when `transpose`.
fn decode_slab<R: Copy + Into<f64>, T: Sample>(
    raw: &[R],
    packing: &Packing,
    transpose: bool,
    nr: usize,
    nc: usize,
    dest: &mut [T],
) {
    debug_assert_eq!(raw.len(), nr * nc);
    debug_assert_eq!(dest.len(), nr * nc);
    if let Some(q) = packing.quantize {
        return slab_with(raw, transpose, nr, nc, dest, |stored| {
            let decoded = packing.decode(stored);
            T::from_packed(q.encode(decoded), decoded)
        });
    }
    if packing.is_simple() {
        let (fill, scale, offset) = (packing.fill.unwrap_or(f64::NAN), packing.scale, packing.offset);
        #[cfg(target_arch = "x86_64")]
        if !transpose && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { simple_avx2(raw, fill, scale, offset, dest) };
        }
        return slab_with(raw, transpose, nr, nc, dest, |stored| {
            T::from_stored(stored, Packing::decode_simple(stored, fill, scale, offset))
        });
    }
    if packing.is_ranged() {
        // a valid range besides the fill value (OSTIA's int16 files): branch-free as well (a
        // full-size int16 field into a float32 and an int16 pool: 3.0 ms against 3.9 ms per file
        // on the dev VM, bench-results/runs/2026-12-01-h200-int16-read)
        let (fill, lo, hi, scale, offset) = packing.ranged_args();
        #[cfg(target_arch = "x86_64")]
        if !transpose && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { ranged_avx2(raw, fill, lo, hi, scale, offset, dest) };
        }
        return slab_with(raw, transpose, nr, nc, dest, |stored| {
            T::from_stored(stored, Packing::decode_ranged(stored, fill, lo, hi, scale, offset))
        });
    }
    slab_with(raw, transpose, nr, nc, dest, |stored| T::from_stored(stored, packing.decode(stored)));
}

/// [`simple_avx2`] for packings with a valid range.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ranged_avx2<R: Copy + Into<f64>, T: Sample>(
    raw: &[R],
    fill: f64,
    lo: f64,
    hi: f64,
    scale: f64,
    offset: f64,
    dest: &mut [T],
) {
    for (d, r) in dest.iter_mut().zip(raw) {
        let stored: f64 = (*r).into();
        *d = T::from_stored(stored, Packing::decode_ranged(stored, fill, lo, hi, scale, offset));
    }
}

/// The simple decoding of an untransposed slab, compiled for AVX2: the same IEEE operations
/// (never fused) four values at a time, which keeps a reader thread's decoding about as fast
/// as its `pread` (2.6x the baseline x86-64 build on the dev VM).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn simple_avx2<R: Copy + Into<f64>, T: Sample>(raw: &[R], fill: f64, scale: f64, offset: f64, dest: &mut [T]) {
    for (d, r) in dest.iter_mut().zip(raw) {
        let stored: f64 = (*r).into();
        *d = T::from_stored(stored, Packing::decode_simple(stored, fill, scale, offset));
    }
}

/// Store `f(stored value)` for every value of a slab, transposing when asked.
#[inline(always)]
fn slab_with<R: Copy + Into<f64>, T: Sample>(
    raw: &[R],
    transpose: bool,
    nr: usize,
    nc: usize,
    dest: &mut [T],
    f: impl Fn(f64) -> T,
) {
    if !transpose {
        for (d, r) in dest.iter_mut().zip(raw) {
            *d = f((*r).into());
        }
        return;
    }
    const B: usize = 32;
    for c0 in (0..nc).step_by(B) {
        for r0 in (0..nr).step_by(B) {
            for c in c0..(c0 + B).min(nc) {
                for r in r0..(r0 + B).min(nr) {
                    dest[r * nc + c] = f(raw[c * nr + r].into());
                }
            }
        }
    }
}

/// Every value of the variable, decoded, as `[extra][lat][lon]` where `extra` runs over the
/// leading non-horizontal dimensions (length [`VarLayout::extra_len`]).
pub fn read_canonical(file: &netcdf::File, path: &Path, layout: &VarLayout) -> Result<Vec<f64>, InputError> {
    let var = file.variable(&layout.name).ok_or_else(|| InputError::NoSuchVariable {
        path: path.into(),
        var: layout.name.clone(),
        available: String::new(),
    })?;
    let raw: Vec<f64> =
        var.get_values(..).map_err(|cause| InputError::Read { path: path.into(), var: layout.name.clone(), cause })?;
    let (nr, nc) = (layout.nlat(), layout.nlon());
    let slab = nr * nc;
    let mut out = vec![0.0; raw.len()];
    for (src, dst) in raw.chunks(slab.max(1)).zip(out.chunks_mut(slab.max(1))) {
        decode_slab(src, &layout.packing, !layout.lat_is_slow(), nr, nc, dst);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_decoding_equals_the_portable_one_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("SKIPPED: this CPU has no AVX2");
            return;
        }
        let mut raw: Vec<f64> = (0..1003).map(|i| (i as f64 * 0.37).sin() * 1e3 - 0.5).collect();
        raw.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, -999.0, 1e308, -1e308, 5e-324]);
        for (fill, scale, offset) in [(f64::NAN, 1.0, 0.0), (-999.0, 0.01, 273.15), (-999.0, 1e10, -3.0)] {
            let mut portable = vec![0f32; raw.len()];
            slab_with(&raw, false, 1, raw.len(), &mut portable, |v| {
                f32::from_stored(v, Packing::decode_simple(v, fill, scale, offset))
            });
            let mut fast = vec![0f32; raw.len()];
            // SAFETY: checked above.
            unsafe { simple_avx2(&raw, fill, scale, offset, &mut fast) };
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&portable), "fill {fill} scale {scale} offset {offset}");
            let mut wide = vec![0f64; raw.len()];
            // SAFETY: checked above.
            unsafe { simple_avx2(&raw, fill, scale, offset, &mut wide) };
            for (w, r) in wide.iter().zip(&raw) {
                let want = Packing::decode_simple(*r, fill, scale, offset);
                assert_eq!(w.to_bits(), want.to_bits(), "{r}");
            }
        }
    }

    /// Packings with a valid range (OSTIA's int16 files) decode branch-free, with or without
    /// AVX2, transposed or not, exactly as `Packing::decode` decodes each value.
    #[test]
    fn ranged_decoding_equals_the_per_value_rules() {
        let raw: Vec<i16> =
            (i16::MIN..=i16::MAX).step_by(7).chain([-32768, -301, -300, 4500, 4501, 0, 32767]).collect();
        let wide: Vec<f64> = raw.iter().map(|&r| f64::from(r)).chain([f64::NAN, f64::INFINITY, -0.0]).collect();
        let packings = [
            (Some(-32768.0), Some(-300.0), Some(4500.0), 0.01, 273.15),
            (None, Some(-300.0), None, 0.01, 273.15),
            (Some(17.0), None, Some(1000.0), -2.5, 0.0),
            (None, Some(-1e300), Some(1e300), 1e305, 0.0),
        ];
        for (fill, valid_min, valid_max, scale, offset) in packings {
            let p = Packing { scale, offset, fill, missing: vec![], valid_min, valid_max, quantize: None };
            assert!(p.is_ranged() && !p.is_simple());
            for transpose in [false, true] {
                let mut got = vec![0f64; raw.len()];
                decode_slab(&raw, &p, transpose, 1, raw.len(), &mut got);
                for (g, r) in got.iter().zip(&raw) {
                    assert_eq!(g.to_bits(), p.decode(f64::from(*r)).to_bits(), "{r} {p:?}");
                }
                let mut got = vec![0f32; wide.len()];
                decode_slab(&wide, &p, transpose, 1, wide.len(), &mut got);
                for (g, r) in got.iter().zip(&wide) {
                    assert_eq!(g.to_bits(), f32::from_stored(*r, p.decode(*r)).to_bits(), "{r} {p:?}");
                }
                // an int16 pool keeps the integers whatever the packing
                let mut ints = vec![0i16; raw.len()];
                decode_slab(&raw, &p, transpose, 1, raw.len(), &mut ints);
                assert_eq!(ints, raw);
            }
        }
    }

    #[test]
    fn transposed_slab_lands_in_lat_lon_order() {
        let packing = Packing::none();
        // stored (lon=3, lat=2): lon-major; value = 10*lon + lat
        let raw: Vec<i16> = vec![0, 1, 10, 11, 20, 21];
        let mut dest = vec![0.0f64; 6];
        decode_slab(&raw, &packing, true, 2, 3, &mut dest);
        assert_eq!(dest, [0.0, 10.0, 20.0, 1.0, 11.0, 21.0]);
        // a big odd-sized transpose exercises the blocking
        let (nr, nc) = (37, 70);
        let raw: Vec<f64> = (0..nr * nc).map(|i| i as f64).collect();
        let mut dest = vec![0.0f32; nr * nc];
        decode_slab(&raw, &packing, true, nr, nc, &mut dest);
        for r in 0..nr {
            for c in 0..nc {
                assert_eq!(dest[r * nc + c], (c * nr + r) as f32);
            }
        }
    }
}
