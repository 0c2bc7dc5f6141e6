//! The NetCDF-3 (classic, 64-bit offset, CDF-5) header parser of the direct read path: where a
//! non-record variable's data starts, its dimensions, its type and its decoding attributes.
//!
//! Why it exists: a classic file keeps each variable's data in one run at an offset the header
//! gives, so the direct path reads it with `pread` without libnetcdf (which is not
//! thread-safe); it needs each file's own type and attributes too, so that no file is decoded
//! with another file's rules ([`super::direct`]).

use super::format::NotDirect;
use super::packing::{AttrValue, CHECKED_ATTRIBUTES};
use super::storage::Storage;

/// A NetCDF-3 header, read far enough to find one variable's data.
struct Nc3Reader<'a> {
    buf: &'a [u8],
    at: usize,
    /// CDF-5: 64-bit counts
    wide: bool,
}

impl Nc3Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], NotDirect> {
        let s = self.buf.get(self.at..self.at + n).ok_or("the NetCDF-3 header is cut short")?;
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u64, NotDirect> {
        Ok(u64::from(u32::from_be_bytes(self.take(4)?.try_into().expect("4 bytes"))))
    }
    fn u64(&mut self) -> Result<u64, NotDirect> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    fn count(&mut self) -> Result<u64, NotDirect> {
        if self.wide {
            self.u64()
        } else {
            self.u32()
        }
    }
    fn name(&mut self) -> Result<String, NotDirect> {
        let n = self.count()? as usize;
        let s = String::from_utf8_lossy(self.take(n)?).into_owned();
        self.take((4 - n % 4) % 4)?;
        Ok(s)
    }

    /// An attribute list: those named in `wanted` decoded, the others skipped.
    fn attributes_named(&mut self, wanted: &[&str]) -> Result<Vec<(String, AttrValue)>, NotDirect> {
        let _tag = self.u32()?;
        let n = self.count()?;
        let mut found = Vec::new();
        for _ in 0..n {
            let name = self.name()?;
            let kind = self.u32()?;
            let size = nc3_type_size(kind)?;
            let count = self.count()?;
            let bytes = count.checked_mul(size as u64).ok_or("the NetCDF-3 header is malformed")?;
            let data = self.take(bytes.div_ceil(4) as usize * 4)?;
            if !wanted.contains(&name.as_str()) {
                continue;
            }
            let values = data[..bytes as usize].chunks_exact(size);
            let value = match kind {
                2 => {
                    let text = data[..bytes as usize].split(|&b| b == 0).next().unwrap_or_default();
                    AttrValue::Text(String::from_utf8_lossy(text).into_owned())
                }
                _ => AttrValue::Numbers(values.map(|b| nc3_value(kind, b)).collect()),
            };
            found.push((name, value));
        }
        Ok(found)
    }
}

/// Bytes per value of a NetCDF-3 (CDF-5) type.
fn nc3_type_size(kind: u64) -> Result<usize, NotDirect> {
    Ok(match kind {
        1 | 2 | 7 => 1,
        3 | 8 => 2,
        4 | 5 | 9 => 4,
        6 | 10 | 11 => 8,
        t => return Err(format!("unknown NetCDF-3 type {t}")),
    })
}

/// The storage of a NetCDF-3 variable type, or why sstclim does not read it.
fn nc3_storage(kind: u64) -> Result<Storage, String> {
    Ok(match kind {
        1 => Storage::I8,
        3 => Storage::I16,
        4 => Storage::I32,
        5 => Storage::F32,
        6 => Storage::F64,
        7 => Storage::U8,
        8 => Storage::U16,
        9 => Storage::U32,
        10 => return Err(super::storage::unread("int64")),
        11 => return Err(super::storage::unread("uint64")),
        _ => return Err(super::storage::unread("char (text)")),
    })
}

/// One big-endian value of NetCDF-3 numeric type `kind` as f64 (as libnetcdf gives it).
fn nc3_value(kind: u64, b: &[u8]) -> f64 {
    let mut w = [0u8; 8];
    w[8 - b.len()..].copy_from_slice(b);
    let bits = u64::from_be_bytes(w);
    match kind {
        1 => f64::from(bits as u8 as i8),
        3 => f64::from(bits as u16 as i16),
        4 => f64::from(bits as u32 as i32),
        5 => f64::from(f32::from_bits(bits as u32)),
        6 => f64::from_bits(bits),
        10 => bits as i64 as f64,
        _ => bits as f64, // unsigned
    }
}

/// A non-record variable of a NetCDF-3 header.
#[derive(Debug, PartialEq)]
pub(super) struct Nc3Variable {
    /// Byte offset of its data.
    pub begin: u64,
    pub dims: Vec<u64>,
    /// Its type, or why sstclim does not read it.
    pub storage: Result<Storage, String>,
    /// Its decoding attributes.
    pub attrs: Vec<(String, AttrValue)>,
}

/// Variable `var` of a NetCDF-3 header as the header states it: where its data begins, its
/// dimension lengths (0 for the record dimension), its type code and the attributes named in
/// `wanted`, with the file's record count; `Ok(None)` where the header has no such variable.
struct RawVar {
    begin: u64,
    lens: Vec<u64>,
    kind: u64,
    attrs: Vec<(String, AttrValue)>,
    numrecs: u64,
}

fn raw_variable(buf: &[u8], var: &str, wanted: &[&str]) -> Result<Option<RawVar>, NotDirect> {
    let version = *buf.get(3).ok_or("not a NetCDF-3 file")?;
    let mut r = Nc3Reader { buf, at: 4, wide: version == 5 };
    if !matches!(version, 1 | 2 | 5) {
        return Err(format!("NetCDF-3 version {version}"));
    }
    let numrecs = r.count()?;
    let _tag = r.u32()?;
    let n_dims = r.count()?;
    let mut dim_len = Vec::new();
    for _ in 0..n_dims {
        r.name()?;
        dim_len.push(r.count()?);
    }
    r.attributes_named(&[])?;
    let _tag = r.u32()?;
    let n_vars = r.count()?;
    for _ in 0..n_vars {
        let name = r.name()?;
        let rank = r.count()?;
        let mut dims = Vec::new();
        for _ in 0..rank {
            dims.push(r.count()? as usize);
        }
        let attrs = r.attributes_named(wanted)?;
        let kind = r.u32()?;
        r.count()?; // vsize
        let begin = if version == 1 { r.u32()? } else { r.u64()? };
        if name == var {
            let lens =
                dims.iter().map(|&d| dim_len.get(d).copied().ok_or("bad dimension id")).collect::<Result<_, _>>()?;
            return Ok(Some(RawVar { begin, lens, kind, attrs, numrecs }));
        }
    }
    Ok(None)
}

/// The data offset, dimension lengths, type and decoding attributes of non-record variable
/// `var` in a NetCDF-3 file whose header is `buf`.
pub(super) fn netcdf3_variable(buf: &[u8], var: &str) -> Result<Nc3Variable, NotDirect> {
    let v =
        raw_variable(buf, var, &CHECKED_ATTRIBUTES)?.ok_or(format!("no variable '{var}' in the NetCDF-3 header"))?;
    if v.lens.first() == Some(&0) {
        return Err("a record variable (interleaved with the other record variables)".into());
    }
    Ok(Nc3Variable { begin: v.begin, dims: v.lens, storage: nc3_storage(v.kind), attrs: v.attrs })
}

/// A small variable of a NetCDF-3 header read for its values (a time coordinate): where its
/// values start, how many there are and of which type, and the attributes asked for.
#[derive(Debug, PartialEq)]
pub(super) struct Nc3Small {
    pub begin: u64,
    pub count: u64,
    /// NetCDF-3 type code (see [`nc3_numbers`]).
    pub kind: u64,
    pub attrs: Vec<(String, AttrValue)>,
}

/// Variable `var` of a NetCDF-3 header `buf`, with its attributes named in `wanted`; `Ok(None)`
/// where the file has no such variable. A record variable is read only where the file holds
/// one record (its values are then one run at its offset, whatever the other record
/// variables).
pub(super) fn netcdf3_small(buf: &[u8], var: &str, wanted: &[&str]) -> Result<Option<Nc3Small>, NotDirect> {
    let Some(v) = raw_variable(buf, var, wanted)? else { return Ok(None) };
    if v.lens.first() == Some(&0) && v.numrecs > 1 {
        return Err("a record variable of several records".into());
    }
    let count = v.lens.iter().map(|&l| if l == 0 { v.numrecs } else { l }).product();
    nc3_type_size(v.kind)?;
    Ok(Some(Nc3Small { begin: v.begin, count, kind: v.kind, attrs: v.attrs }))
}

/// Big-endian values of NetCDF-3 numeric type `kind` as f64; `None` for text.
pub(super) fn nc3_numbers(kind: u64, bytes: &[u8]) -> Option<Vec<f64>> {
    let size = nc3_type_size(kind).ok()?;
    (kind != 2).then(|| bytes.chunks_exact(size).map(|b| nc3_value(kind, b)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netcdf3_header_gives_the_variable_offset() {
        // hand-made classic header: dims lat=2, lon=3; no attributes; vars lat(lat), v(lat,lon)
        let mut h = b"CDF\x01".to_vec();
        let be = |v: u32| v.to_be_bytes().to_vec();
        let name = |s: &str| {
            let mut b = be(s.len() as u32);
            b.extend(s.as_bytes());
            b.resize(b.len().div_ceil(4) * 4, 0);
            b
        };
        h.extend(be(0)); // numrecs
        h.extend(be(0x0A));
        h.extend(be(2));
        h.extend(name("lat"));
        h.extend(be(2));
        h.extend(name("lon"));
        h.extend(be(3));
        h.extend(be(0)); // no global attributes
        h.extend(be(0));
        h.extend(be(0x0B));
        h.extend(be(2));
        for (v, dims, begin) in [("lat", vec![0u32], 200u32), ("v", vec![0, 1], 216)] {
            h.extend(name(v));
            h.extend(be(dims.len() as u32));
            for d in dims {
                h.extend(be(d));
            }
            h.extend(be(0x0C)); // two attributes: units = "K", valid_range = [-5s, 40s]
            h.extend(be(2));
            h.extend(name("units"));
            h.extend(be(2));
            h.extend(be(1));
            h.extend(b"K\0\0\0");
            h.extend(name("valid_range"));
            h.extend(be(3));
            h.extend(be(2));
            h.extend((-5i16).to_be_bytes());
            h.extend(40i16.to_be_bytes());
            h.extend(be(6)); // double
            h.extend(be(48));
            h.extend(be(begin));
        }
        let v = netcdf3_variable(&h, "v").unwrap();
        let range = vec![
            ("units".to_string(), AttrValue::Text("K".into())),
            ("valid_range".to_string(), AttrValue::Numbers(vec![-5.0, 40.0])),
        ];
        assert_eq!((v.begin, v.dims, v.storage, v.attrs), (216, vec![2, 3], Ok(Storage::F64), range));
        let lat = netcdf3_variable(&h, "lat").unwrap();
        assert_eq!((lat.begin, lat.dims), (200, vec![2]));
        assert!(netcdf3_variable(&h, "w").unwrap_err().contains("no variable 'w'"));
        assert!(netcdf3_variable(&h[..60], "v").unwrap_err().contains("cut short"));
    }
}
