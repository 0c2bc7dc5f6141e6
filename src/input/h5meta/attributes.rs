//! Attributes of an HDF5 object, read by the metadata parser ([`super`]) without libhdf5.
//!
//! Why it exists: the direct read path decodes each file with that file's own `_FillValue`,
//! `scale_factor`, valid range etc. (files of one product need not agree), so it must read
//! them for every file, on any thread, as cheaply as it reads the data offset; libhdf5 is not
//! thread-safe, and stays the oracle (the job's first file is read both ways, and the tests
//! compare the two). Only the attributes asked for are decoded; all others are skipped unread.
//!
//! Supported: attribute messages (type 0x000C) versions 1 (name, datatype and dataspace padded
//! to 8 bytes), 2 and 3 (with a character set byte), stored compactly in the object header or
//! densely (an attribute info message, 0x0015, pointing at a fractal heap of attribute messages
//! indexed by a v2 B-tree of names, type 8: netCDF-4 variables with more than 8 attributes).
//! Values: fixed-point and IEEE float scalars and 1-D arrays of either byte order; strings,
//! fixed-length (NC_CHAR to libnetcdf) and variable-length (NC_STRING, their text in a global
//! heap collection, [`super::global_heap`]), of any padding and character set: one string is
//! [`AttrValue::Text`], as libnetcdf reads it; several are described as [`AttrValue::Other`].
//! Shared datatypes or dataspaces, shared attribute messages and other classes of a wanted
//! attribute are [`super::MetaError::Unsupported`] (the caller then asks libhdf5).

use super::checksum::{lookup3, verify};
use super::cursor::{Cur, Sizes, Visited};
use super::datatype::{value_f64, TypeClass};
use super::header::{Header, MSG_ATTRIBUTE, MSG_ATTRIBUTE_INFO};
use super::message::{datatype, string_type, StringType};
use super::{bad, unsupported, Attributes, Hdf5Meta, Result};
use crate::input::format::ByteOrder;
use crate::input::packing::AttrValue;
use crate::input::text_attr::hdf5_text;

/// Reads the object a global heap ID names (collection address, object index).
type HeapRead<'a> = &'a dyn Fn(u64, u32) -> Result<Vec<u8>>;

/// The v2 B-tree type of an attribute name index.
const ATTRIBUTE_NAME_INDEX: u8 = 8;

impl Hdf5Meta<'_> {
    /// The attributes of the object with header `header` whose names are in `wanted`.
    pub(super) fn attributes(&self, header: &Header, wanted: &[&str]) -> Result<Attributes> {
        let heap = |addr, index| self.global_heap_object(addr, index);
        let mut found = Attributes::new();
        for m in header.msgs.iter().filter(|m| m.kind == MSG_ATTRIBUTE) {
            // a shared attribute message is only a problem if it is one we want: its name is
            // elsewhere, so it might be
            let body = m.body("attribute message")?;
            if let Some(a) = attribute(body, self.sizes, wanted, &heap)? {
                found.push(a);
            }
        }
        if let Some(m) = header.msgs.iter().find(|m| m.kind == MSG_ATTRIBUTE_INFO) {
            self.dense_attributes(m.body("attribute info message")?, wanted, &mut found)?;
        }
        Ok(found)
    }

    /// The wanted attributes in dense storage: every record of the name index whose hash is a
    /// wanted name's leads to an attribute message in the fractal heap.
    fn dense_attributes(&self, info: &[u8], wanted: &[&str], found: &mut Attributes) -> Result<()> {
        let mut c = Cur::new(info, "attribute info message");
        let version = c.u8()?;
        if version != 0 {
            return Err(unsupported(format!("attribute info message version {version}")));
        }
        let flags = c.u8()?;
        if flags & 0x01 != 0 {
            c.skip(2)?; // maximum creation index
        }
        let Some(heap) = self.sizes.addr(&mut c)? else { return Ok(()) }; // compact storage
        let index = self.sizes.addr(&mut c)?.ok_or_else(|| bad("dense attributes without a name index"))?;
        let heap = self.heap(heap)?;
        let tree = self.btree2(index)?;
        if tree.kind != ATTRIBUTE_NAME_INDEX {
            return Err(bad(format!("a v2 B-tree of type {} as an attribute name index", tree.kind)));
        }
        // heap ID, message flags (1), creation order (4), name hash (4)
        let rec = usize::from(tree.rec_size);
        if rec < 9 + 1 {
            return Err(bad("attribute name index records too small"));
        }
        let hashes: Vec<u32> = wanted.iter().map(|n| lookup3(n.as_bytes(), 0)).collect();
        let global = |addr, index| self.global_heap_object(addr, index);
        let Some(root) = tree.root else { return Ok(()) };
        let mut stack = vec![(root, tree.root_nrec, tree.depth)];
        let mut visited = Visited::default();
        while let Some((node, nrec, depth)) = stack.pop() {
            visited.first(node, "attribute name index node")?;
            let nrec = usize::from(nrec);
            let (ptr, n_ptr) = if depth > 0 { (tree.pointer_size(depth), nrec + 1) } else { (0, 0) };
            let len = 6 + nrec * rec + n_ptr * ptr + 4;
            let block = self.src.read(node, len as u64, "attribute name index node")?;
            let mut c = Cur::new(&block, "attribute name index node");
            c.signature(if depth > 0 { b"BTIN" } else { b"BTLF" })?;
            let (version, kind) = (c.u8()?, c.u8()?);
            if version != 0 || kind != tree.kind {
                return Err(bad("an attribute name index node of another version or type"));
            }
            verify(&block, "attribute name index node")?;
            for r in c.take(nrec * rec)?.chunks_exact(rec) {
                let hash = u32::from_le_bytes(r[rec - 4..].try_into().expect("4 bytes"));
                if !hashes.contains(&hash) {
                    continue;
                }
                if r[rec - 9] & 0x02 != 0 {
                    return Err(unsupported("a shared attribute message in dense storage"));
                }
                let message = heap.object(self, &r[..rec - 9])?;
                if let Some(a) = attribute(&message, self.sizes, wanted, &global)? {
                    found.push(a);
                }
            }
            // every child: the wanted hashes may lie anywhere in the tree
            for _ in 0..n_ptr {
                let child = self.sizes.addr(&mut c)?.ok_or_else(|| bad("a B-tree child at no address"))?;
                let child_nrec = c.uint(tree.max_nrec_size)?;
                if depth > 1 {
                    c.skip(tree.cum_sizes[usize::from(depth) - 1])?;
                }
                let child_nrec = u16::try_from(child_nrec).map_err(|_| bad("B-tree node record count"))?;
                stack.push((child, child_nrec, depth - 1));
            }
        }
        Ok(())
    }
}

/// Round `n` up to a multiple of 8 (version 1 attribute messages pad their fields).
fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// An attribute message, decoded if its name is in `wanted` (else None, its value unread);
/// `heap` reads variable-length strings' text.
fn attribute(data: &[u8], sizes: Sizes, wanted: &[&str], heap: HeapRead<'_>) -> Result<Option<(String, AttrValue)>> {
    let mut c = Cur::new(data, "attribute message");
    let version = c.u8()?;
    let flags = c.u8()?; // reserved in version 1
    let (name_len, type_len, space_len) = (usize::from(c.u16()?), usize::from(c.u16()?), usize::from(c.u16()?));
    let pad = |n: usize| if version == 1 { pad8(n) } else { n };
    match version {
        1 | 2 => {}
        3 => c.skip(1)?, // character set of the name
        v => return Err(unsupported(format!("attribute message version {v}"))),
    }
    let name = c.take(pad(name_len))?;
    let name = &name[..name_len.min(name.len())];
    let name = name.split(|&b| b == 0).next().unwrap_or_default();
    let Some(name) = wanted.iter().find(|w| w.as_bytes() == name) else { return Ok(None) };
    if version > 1 && flags & 0x03 != 0 {
        return Err(unsupported(format!("attribute {name} with a shared datatype or dataspace")));
    }
    let type_msg = c.take(pad(type_len))?.get(..type_len).unwrap_or_default();
    let dtype = datatype(type_msg)?;
    let space = attribute_space(c.take(pad(space_len))?.get(..space_len).unwrap_or_default(), sizes)?;
    let count = space.unwrap_or(0);
    let value = match dtype.class {
        TypeClass::Integer { .. } | TypeClass::Float => {
            let order = match dtype.order {
                Some(o) => o,
                None if dtype.size == 1 => ByteOrder::Little,
                None => return Err(unsupported(format!("attribute {name} without a byte order"))),
            };
            if !dtype.standard || !matches!(dtype.size, 1 | 2 | 4 | 8) {
                return Err(unsupported(format!("attribute {name} of a non-standard number type")));
            }
            let bytes = count.checked_mul(dtype.size as u64).filter(|&n| n <= c.left() as u64);
            let bytes = bytes.ok_or_else(|| bad(format!("attribute {name}: its values pass the message's end")))?;
            let raw = c.take(bytes as usize)?;
            AttrValue::Numbers(raw.chunks_exact(dtype.size).map(|b| value_f64(b, dtype, order)).collect())
        }
        // fixed-length strings, and variable-length ones (netCDF-4's NC_STRING)
        TypeClass::Other(3 | 9) => match string_type(type_msg)? {
            Some(kind) => strings(name, kind, dtype.size, space, &mut c, sizes, heap)?,
            None => AttrValue::Other("a variable-length sequence".into()),
        },
        TypeClass::Other(k) => return Err(unsupported(format!("attribute {name} of HDF5 type class {k}"))),
    };
    Ok(Some((name.to_string(), value)))
}

/// The values of a string attribute of `count` (None: a null dataspace) values of `size` bytes
/// each, from `c`: as libnetcdf reads them, one string is text (NC_CHAR, or an NC_STRING of one),
/// so is a null dataspace of fixed-length strings (empty NC_CHAR text); others (several strings,
/// or none) are described by their list.
fn strings(
    name: &str,
    kind: StringType,
    size: usize,
    count: Option<u64>,
    c: &mut Cur<'_>,
    sizes: Sizes,
    heap: HeapRead<'_>,
) -> Result<AttrValue> {
    if kind == StringType::Variable && size != 4 + sizes.addr + 4 {
        return Err(bad(format!("attribute {name}: variable-length strings of {size} bytes")));
    }
    let bytes = count.unwrap_or(0).checked_mul(size as u64).filter(|&n| n <= c.left() as u64);
    let bytes = bytes.ok_or_else(|| bad(format!("attribute {name}: its text passes the message's end")))?;
    let raw = c.take(bytes as usize)?;
    let texts = raw
        .chunks_exact(size)
        .map(|v| match kind {
            StringType::Fixed(_) => Ok(hdf5_text(v)),
            StringType::Variable => variable_string(v, sizes, heap),
        })
        .collect::<Result<Vec<String>>>()?;
    Ok(AttrValue::from_strings(texts, count.is_none() && kind != StringType::Variable))
}

/// One variable-length string: its length, then the global heap ID of its bytes.
fn variable_string(value: &[u8], sizes: Sizes, heap: HeapRead<'_>) -> Result<String> {
    let mut c = Cur::new(value, "variable-length string");
    let len = c.u32()? as usize;
    let addr = sizes.addr(&mut c)?;
    let index = c.u32()?;
    if len == 0 {
        return Ok(String::new()); // empty (or NULL) strings have no heap object
    }
    let addr = addr.ok_or_else(|| bad("a variable-length string at no address"))?;
    let object = heap(addr, index)?;
    let text = object.get(..len).ok_or_else(|| bad("a variable-length string longer than its heap object"))?;
    Ok(hdf5_text(text))
}

/// The number of values of an attribute's dataspace (scalar: 1), None for a null dataspace.
fn attribute_space(data: &[u8], sizes: Sizes) -> Result<Option<u64>> {
    let mut c = Cur::new(data, "attribute dataspace");
    let version = c.u8()?;
    let rank = c.u8()?;
    let _flags = c.u8()?;
    match version {
        1 => c.skip(5)?,
        2 => match c.u8()? {
            0 => return Ok(Some(1)),
            2 => return Ok(None),
            _ => {}
        },
        v => return Err(unsupported(format!("dataspace message version {v}"))),
    }
    if rank > 32 {
        return Err(bad(format!("an attribute dataspace of rank {rank}")));
    }
    let count = (0..rank).try_fold(1u64, |n, _| {
        let d = sizes.length(&mut c)?;
        n.checked_mul(d).ok_or_else(|| bad("an attribute dataspace overflows"))
    })?;
    Ok(Some(count))
}

#[cfg(test)]
mod tests {
    use super::super::MetaError;
    use super::*;

    /// A version 1 attribute message: name, datatype and dataspace padded to 8 bytes.
    fn message_v1(name: &str, dtype: &[u8], dims: &[u64], data: &[u8]) -> Vec<u8> {
        let mut space = vec![1u8, dims.len() as u8, 0, 0, 0, 0, 0, 0];
        for d in dims {
            space.extend(d.to_le_bytes());
        }
        let mut m = vec![1u8, 0];
        let name_len = name.len() + 1;
        for n in [name_len, dtype.len(), space.len()] {
            m.extend((n as u16).to_le_bytes());
        }
        for (field, len) in [(name.as_bytes(), name_len), (dtype, dtype.len()), (&space[..], space.len())] {
            let at = m.len();
            m.extend(field);
            m.resize(at + pad8(len), 0);
        }
        m.extend(data);
        m
    }

    const SIZES: Sizes = Sizes { addr: 8, len: 8 };

    fn no_heap(_: u64, _: u32) -> Result<Vec<u8>> {
        Err(super::super::bad("no global heap here"))
    }

    /// A string datatype message: class 3 (fixed, `size` bytes) or 9 (variable-length string),
    /// padding `pad`, character set `cset`.
    fn string_dtype(variable: bool, size: u32, pad: u8, cset: u8) -> Vec<u8> {
        let mut t = if variable { vec![0x19, 0x01 | pad << 4, cset, 0] } else { vec![0x13, pad | cset << 4, 0, 0] };
        t.extend(size.to_le_bytes());
        if variable {
            // the base type: 1-byte characters (class 3, as libhdf5 writes it)
            t.extend([0x13, pad | cset << 4, 0, 0, 1, 0, 0, 0]);
        }
        t
    }

    #[test]
    fn strings_of_every_padding_and_character_set_are_text() {
        let text = |m: &[u8], heap: HeapRead<'_>| attribute(m, SIZES, &["units"], heap).map(|a| a.map(|(_, v)| v));
        let one = |s: &str| Ok(Some(AttrValue::Text(s.into())));
        // fixed-length: null-terminated, null-padded (UTF-8), space-padded (spaces are text)
        for (pad, cset, stored, want) in
            [(0, 0, &b"degC\0"[..], "degC"), (1, 1, "\u{b0}C\0\0".as_bytes(), "\u{b0}C"), (2, 0, b"K   ", "K   ")]
        {
            let m = message_v1("units", &string_dtype(false, stored.len() as u32, pad, cset), &[], stored);
            assert_eq!(text(&m, &no_heap), one(want), "padding {pad}");
            for n in 0..m.len() {
                assert!(text(&m[..n], &no_heap).is_err(), "{n} bytes");
            }
        }
        let two = message_v1("units", &string_dtype(false, 2, 1, 0), &[2], b"abcd");
        assert_eq!(text(&two, &no_heap), Ok(Some(AttrValue::Other(r#"["ab", "cd"]"#.into()))));
        assert!(text(&message_v1("units", &string_dtype(false, 3, 5, 0), &[], b"abc"), &no_heap).is_err());
        // variable-length: length, collection address, object index; the heap holds the bytes
        let heap = |addr: u64, index: u32| match (addr, index) {
            (4096, 1) => Ok(b"noleap".to_vec()),
            (4096, 2) => Ok(b"degC\0".to_vec()),
            _ => Err(super::super::bad("no such object")),
        };
        let id = |len: u32, index: u32| [&len.to_le_bytes()[..], &4096u64.to_le_bytes(), &index.to_le_bytes()].concat();
        let vlen = string_dtype(true, 16, 0, 1);
        assert_eq!(text(&message_v1("units", &vlen, &[], &id(6, 1)), &heap), one("noleap"));
        assert_eq!(text(&message_v1("units", &vlen, &[1], &id(4, 2)), &heap), one("degC"));
        assert_eq!(text(&message_v1("units", &vlen, &[], &id(0, 9)), &heap), one(""), "empty: no object");
        let list = message_v1("units", &vlen, &[2], &[id(6, 1), id(4, 2)].concat());
        assert_eq!(text(&list, &heap), Ok(Some(AttrValue::Other(r#"["noleap", "degC"]"#.into()))));
        // an object shorter than the string, a missing object, a value of the wrong size
        assert!(text(&message_v1("units", &vlen, &[], &id(7, 1)), &heap).is_err());
        assert!(text(&message_v1("units", &vlen, &[], &id(6, 3)), &heap).is_err());
        assert!(text(&message_v1("units", &string_dtype(true, 12, 0, 0), &[], &id(6, 1)), &heap).is_err());
    }

    #[test]
    fn version_1_messages_decode_numbers_of_either_byte_order() {
        // int16 big endian, signed: -300 and 4500
        let i16be = [0x10, 0x09, 0, 0, 2, 0, 0, 0, 0, 0, 16, 0];
        let data = [(-300i16).to_be_bytes(), 4500i16.to_be_bytes()].concat();
        let m = message_v1("valid_range", &i16be, &[2], &data);
        let got = attribute(&m, SIZES, &["valid_range"], &no_heap).unwrap();
        assert_eq!(got, Some(("valid_range".into(), AttrValue::Numbers(vec![-300.0, 4500.0]))));
        assert_eq!(attribute(&m, SIZES, &["_FillValue"], &no_heap).unwrap(), None, "others are skipped");
        // float64 little endian scalar
        let f64le = [0x11, 0x20, 0x3f, 0, 8, 0, 0, 0, 0, 0, 0x40, 0, 52, 11, 0, 52, 0xff, 3, 0, 0];
        let m = message_v1("scale_factor", &f64le, &[], &0.01f64.to_le_bytes());
        let got = attribute(&m, SIZES, &["scale_factor"], &no_heap).unwrap();
        assert_eq!(got, Some(("scale_factor".into(), AttrValue::Numbers(vec![0.01]))));
        // cut short: never a panic
        for n in 0..m.len() {
            assert!(attribute(&m[..n], SIZES, &["scale_factor"], &no_heap).is_err(), "{n} bytes");
        }
        // a shared datatype (version 2) is for libhdf5
        let mut v2 = vec![2u8, 0x01, 13, 0, 0, 0, 0, 0];
        v2.extend(b"scale_factor\0");
        assert!(matches!(attribute(&v2, SIZES, &["scale_factor"], &no_heap), Err(MetaError::Unsupported(_))));
    }

    /// Attributes of variables written by libnetcdf, compact (6 attributes) and dense (18: past
    /// 8, netCDF-4 keeps them in a fractal heap), parse as libnetcdf reads them.
    #[test]
    fn netcdf4_attributes_parse_as_libnetcdf_reads_them() {
        use crate::input::packing::DECODING_ATTRIBUTES;
        use netcdf::AttributeValue as A;
        let dir = tempfile::tempdir().unwrap();
        for padding in [0usize, 12] {
            let path = dir.path().join(format!("attrs-{padding}.nc"));
            // no test forks while the file is open for writing: a child would inherit its HDF5
            // lock and the reads below would be refused
            let _serial = crate::input::child::serial();
            crate::input::open::silence_hdf5();
            {
                let mut f = netcdf::create(&path).unwrap();
                f.add_dimension("x", 3).unwrap();
                let mut v = f.add_variable::<i16>("v", &["x"]).unwrap();
                v.put_attribute("_FillValue", A::Short(-32768)).unwrap();
                v.put_attribute("scale_factor", A::Double(0.01)).unwrap();
                v.put_attribute("add_offset", A::Float(273.15)).unwrap();
                v.put_attribute("valid_range", A::Shorts(vec![-300, 4500])).unwrap();
                v.put_attribute("missing_value", A::Doubles(vec![1e20, -1e20])).unwrap();
                v.put_attribute("valid_min", A::Str("text".into())).unwrap();
                for i in 0..padding {
                    v.put_attribute(&format!("comment_{i}"), format!("comment {i}")).unwrap();
                }
                v.put_values(&[1i16, 2, 3], ..).unwrap();
            }
            let file = std::fs::File::open(&path).unwrap();
            let meta = Hdf5Meta::open(&file).unwrap();
            let header = meta.header(meta.find("v").unwrap()).unwrap();
            let compact = header.msgs.iter().filter(|m| m.kind == MSG_ATTRIBUTE).count();
            // (libnetcdf adds hidden attributes of its own, such as DIMENSION_LIST)
            assert!(if padding == 0 { compact >= 6 } else { compact == 0 }, "{compact} compact, {padding} more");
            let (_, parsed) = meta.dataset_with_attributes("v", &DECODING_ATTRIBUTES).unwrap();
            let nc = netcdf::open(&path).unwrap();
            let var = nc.variable("v").unwrap();
            for name in DECODING_ATTRIBUTES {
                let library = var.attribute_value(name).map(|v| AttrValue::from(&v.unwrap()));
                let ours = parsed.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
                match (&library, &ours) {
                    (Some(AttrValue::Other(_)), Some(AttrValue::Other(_))) => {}
                    _ => assert_eq!(ours, library, "{name}, {padding} more attributes"),
                }
            }
            assert_eq!(parsed.len(), 6);
        }
    }
}
