//! How stored numbers become physical values: `_FillValue`, `missing_value`, `valid_min`,
//! `valid_max` / `valid_range` (compared on the stored, packed numbers, as the NetCDF
//! conventions specify), then `value = stored * scale_factor + add_offset` in float64.
//!
//! These are the semantics of the official netCDF4-python library (our oracle in the fixture
//! tests), plus: NaN and infinite values are missing. Without a `_FillValue` attribute the
//! library's default fill value for the type marks missing data. `-0.0` decodes to `+0.0`, so
//! every engine sees the same bits for equal values.

use netcdf::AttributeValue;

use super::storage::Storage;

/// The decoding rules of one variable in one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing {
    pub scale: f64,
    pub offset: f64,
    pub fill: Option<f64>,
    pub missing: Vec<f64>,
    pub valid_min: Option<f64>,
    pub valid_max: Option<f64>,
    /// Packs decoded values into int16 (`--pack-scale`, lossy); never from the attributes.
    pub quantize: Option<crate::pool::Quantize>,
}

/// One attribute's value as the decoding rules see it, whoever read it (libnetcdf, or the
/// direct path's own header parsers): one function, [`Packing::from_attributes`], turns these
/// into rules, so that every read path decodes a file the same way.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// A numeric attribute's values as f64 (exact up to 32 bits; 64-bit integers round).
    Numbers(Vec<f64>),
    /// A text attribute whose text was read: NC_CHAR (NetCDF-3 `char`, an HDF5 fixed-length
    /// string) or one NC_STRING (an HDF5 variable-length string).
    Text(String),
    /// Another non-numeric attribute (several strings, say), described for messages.
    Other(String),
}

impl AttrValue {
    /// A string attribute's value, given its strings, as libnetcdf reads it: one string is text
    /// (NC_CHAR, or an NC_STRING of one), and so is no string where `empty_text` (a null
    /// dataspace of fixed-length strings: empty NC_CHAR); others are described by their list.
    pub fn from_strings(texts: Vec<String>, empty_text: bool) -> AttrValue {
        match &texts[..] {
            [] if empty_text => AttrValue::Text(String::new()),
            [one] => AttrValue::Text(one.clone()),
            _ => AttrValue::Other(format!("{texts:?}")),
        }
    }
}

impl From<&AttributeValue> for AttrValue {
    fn from(value: &AttributeValue) -> AttrValue {
        match (numbers(value), value) {
            (Some(v), _) => AttrValue::Numbers(v),
            (None, AttributeValue::Str(s)) => AttrValue::Text(s.clone()),
            // NC_STRING: one string is text, as the header parsers read it
            (None, AttributeValue::Strs(v)) => AttrValue::from_strings(v.clone(), false),
            (None, _) => AttrValue::Other(format!("{value:?}")),
        }
    }
}

/// The attributes [`Packing::from_attributes`] reads (the tests compare the parsers on these).
#[cfg(test)]
pub const DECODING_ATTRIBUTES: [&str; 7] =
    ["scale_factor", "add_offset", "_FillValue", "missing_value", "valid_min", "valid_max", "valid_range"];

/// The attributes the direct path compares with the first file's: the decoding ones and
/// `units` (files in kelvin and in degrees Celsius must not be averaged together).
pub const CHECKED_ATTRIBUTES: [&str; 8] =
    ["scale_factor", "add_offset", "_FillValue", "missing_value", "valid_min", "valid_max", "valid_range", "units"];

/// Whether two `units` attributes name the same unit: equal text (case and blanks aside), or
/// both one of the spellings of kelvin or of degrees Celsius. A file without the attribute
/// matches anything (nothing says it differs).
pub fn same_units(a: Option<&str>, b: Option<&str>) -> bool {
    let (Some(a), Some(b)) = (a, b) else { return true };
    let norm = |u: &str| u.trim().to_ascii_lowercase().replace([' ', '_', '-'], "").replace("°", "deg");
    let class = |u: &str| match u {
        "k" | "kelvin" | "kelvins" | "degk" | "degreek" | "degreesk" | "degreekelvin" | "degreeskelvin" => Some("K"),
        "c" | "degc" | "celsius" | "degreec" | "degreesc" | "degreecelsius" | "degreescelsius" | "degcelsius" => {
            Some("degC")
        }
        _ => None,
    };
    let (a, b) = (norm(a), norm(b));
    match (class(&a), class(&b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Numeric attribute values as f64 (exact for every NetCDF type up to 32 bits).
pub fn numbers(value: &AttributeValue) -> Option<Vec<f64>> {
    use AttributeValue as A;
    Some(match value {
        A::Uchar(x) => vec![f64::from(*x)],
        A::Uchars(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Schar(x) => vec![f64::from(*x)],
        A::Schars(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Ushort(x) => vec![f64::from(*x)],
        A::Ushorts(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Short(x) => vec![f64::from(*x)],
        A::Shorts(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Uint(x) => vec![f64::from(*x)],
        A::Uints(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Int(x) => vec![f64::from(*x)],
        A::Ints(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Ulonglong(x) => vec![*x as f64],
        A::Ulonglongs(x) => x.iter().map(|v| *v as f64).collect(),
        A::Longlong(x) => vec![*x as f64],
        A::Longlongs(x) => x.iter().map(|v| *v as f64).collect(),
        A::Float(x) => vec![f64::from(*x)],
        A::Floats(x) => x.iter().map(|v| f64::from(*v)).collect(),
        A::Double(x) => vec![*x],
        A::Doubles(x) => x.clone(),
        A::Str(_) | A::Strs(_) => return None,
    })
}

impl Packing {
    /// No packing at all: values as stored, nothing marked missing but NaN.
    pub fn none() -> Packing {
        Packing {
            scale: 1.0,
            offset: 0.0,
            fill: None,
            missing: vec![],
            valid_min: None,
            valid_max: None,
            quantize: None,
        }
    }

    /// Rules from a variable's attributes; `Err` describes an unusable attribute.
    pub fn from_attributes(storage: Storage, attr: impl Fn(&str) -> Option<AttrValue>) -> Result<Packing, String> {
        let scalar = |name: &str| -> Result<Option<f64>, String> {
            match attr(name) {
                None => Ok(None),
                Some(AttrValue::Numbers(v)) if v.len() == 1 => Ok(Some(v[0])),
                Some(AttrValue::Numbers(v)) => Err(format!("attribute {name} must be one number, found {v:?}")),
                Some(AttrValue::Other(v) | AttrValue::Text(v)) => {
                    Err(format!("attribute {name} must be one number, found {v}"))
                }
            }
        };
        let list = |name: &str| -> Result<Vec<f64>, String> {
            match attr(name) {
                None => Ok(Vec::new()),
                Some(AttrValue::Numbers(v)) => Ok(v),
                Some(AttrValue::Other(v) | AttrValue::Text(v)) => {
                    Err(format!("attribute {name} must be numeric, found {v}"))
                }
            }
        };
        let scale = scalar("scale_factor")?.unwrap_or(1.0);
        let offset = scalar("add_offset")?.unwrap_or(0.0);
        if !scale.is_finite() || !offset.is_finite() {
            return Err(format!("scale_factor {scale} / add_offset {offset} are not finite"));
        }
        let fill = match attr("_FillValue") {
            Some(_) => scalar("_FillValue")?,
            None => Some(storage.default_fill()),
        };
        let missing = list("missing_value")?;
        let (mut valid_min, mut valid_max) = (scalar("valid_min")?, scalar("valid_max")?);
        let range = list("valid_range")?;
        if !range.is_empty() {
            let [lo, hi] = range[..] else {
                return Err(format!("attribute valid_range must hold two numbers, found {range:?}"));
            };
            valid_min = Some(lo);
            valid_max = Some(hi);
        }
        Ok(Packing { scale, offset, fill, missing, valid_min, valid_max, quantize: None })
    }

    /// The first decoding attribute in which `self` and `other` differ (compared bit for bit,
    /// so that a NaN fill equals itself), or None where they decode every stored number alike.
    /// `quantize` is the job's, not a file's, and is not compared.
    pub fn differs_from(&self, other: &Packing) -> Option<&'static str> {
        let same = |a: Option<f64>, b: Option<f64>| a.map(f64::to_bits) == b.map(f64::to_bits);
        if self.scale.to_bits() != other.scale.to_bits() {
            Some("scale_factor")
        } else if self.offset.to_bits() != other.offset.to_bits() {
            Some("add_offset")
        } else if !same(self.fill, other.fill) {
            Some("_FillValue")
        } else if self.missing.len() != other.missing.len()
            || self.missing.iter().zip(&other.missing).any(|(a, b)| a.to_bits() != b.to_bits())
        {
            Some("missing_value")
        } else if !same(self.valid_min, other.valid_min) {
            Some("valid_min")
        } else if !same(self.valid_max, other.valid_max) {
            Some("valid_max")
        } else {
            None
        }
    }

    /// Whether only `_FillValue` (no `missing_value`, no valid range) marks missing values:
    /// then [`Packing::decode_simple`] gives the same results without branches.
    pub fn is_simple(&self) -> bool {
        self.missing.is_empty() && self.valid_min.is_none() && self.valid_max.is_none() && self.quantize.is_none()
    }

    /// [`Packing::decode`] for packings that are [`Packing::is_simple`], written so that loops
    /// over it vectorize.
    #[inline(always)]
    pub fn decode_simple(stored: f64, fill: f64, scale: f64, offset: f64) -> f64 {
        let value = stored * scale + offset;
        // NaN input gives a NaN value; a NaN fill never compares equal
        if stored == fill || !value.is_finite() {
            f64::NAN
        } else {
            value + 0.0
        }
    }

    /// Whether only `_FillValue` and a valid range (no `missing_value`) mark missing values, as
    /// in OSTIA's files: then [`Packing::decode_ranged`] gives the same results without branches.
    pub fn is_ranged(&self) -> bool {
        self.missing.is_empty() && self.quantize.is_none()
    }

    /// [`Packing::decode`] for packings that are [`Packing::is_ranged`] (`lo`/`hi`: the valid
    /// range, infinite where there is none; `fill` NaN where there is none), written so that
    /// loops over it vectorize.
    #[inline(always)]
    pub fn decode_ranged(stored: f64, fill: f64, lo: f64, hi: f64, scale: f64, offset: f64) -> f64 {
        let value = stored * scale + offset;
        // NaN input fails every comparison below and gives a NaN value
        if stored == fill || stored < lo || stored > hi || !value.is_finite() {
            f64::NAN
        } else {
            value + 0.0
        }
    }

    /// The arguments of [`Packing::decode_ranged`] after `stored`.
    pub fn ranged_args(&self) -> (f64, f64, f64, f64, f64) {
        let lo = self.valid_min.unwrap_or(f64::NEG_INFINITY);
        let hi = self.valid_max.unwrap_or(f64::INFINITY);
        (self.fill.unwrap_or(f64::NAN), lo, hi, self.scale, self.offset)
    }

    /// The physical value of a stored number, or NaN when it is missing.
    #[inline]
    pub fn decode(&self, stored: f64) -> f64 {
        if stored.is_nan()
            || self.fill == Some(stored)
            || self.missing.contains(&stored)
            || self.valid_min.is_some_and(|m| stored < m)
            || self.valid_max.is_some_and(|m| stored > m)
        {
            return f64::NAN;
        }
        let value = stored * self.scale + self.offset;
        if value.is_finite() {
            value + 0.0
        } else {
            f64::NAN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packing(attrs: &[(&str, AttributeValue)], storage: Storage) -> Packing {
        Packing::from_attributes(storage, |n| attrs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.into())).unwrap()
    }

    #[test]
    fn ostia_style_int16() {
        let p = packing(
            &[
                ("_FillValue", AttributeValue::Short(-32768)),
                ("scale_factor", AttributeValue::Float(0.01)),
                ("add_offset", AttributeValue::Float(273.15)),
                ("valid_min", AttributeValue::Short(-300)),
                ("valid_max", AttributeValue::Short(4500)),
            ],
            Storage::I16,
        );
        assert!(p.decode(-32768.0).is_nan());
        assert!(p.decode(-301.0).is_nan());
        assert!(p.decode(4501.0).is_nan());
        assert_eq!(p.decode(1000.0), 1000.0 * f64::from(0.01f32) + f64::from(273.15f32));
    }

    #[test]
    fn defaults_and_special_values() {
        let p = packing(&[], Storage::I16);
        assert!(p.decode(-32767.0).is_nan(), "default int16 fill is missing");
        assert_eq!(p.decode(-32768.0), -32768.0);
        let p = packing(&[], Storage::F64);
        assert!(p.decode(9.969209968386869e36).is_nan());
        assert!(p.decode(f64::NAN).is_nan());
        assert!(p.decode(f64::INFINITY).is_nan());
        assert_eq!(p.decode(-0.0).to_bits(), 0.0f64.to_bits());
        let simple = |p: &Packing, x: f64| Packing::decode_simple(x, p.fill.unwrap_or(f64::NAN), p.scale, p.offset);
        assert!(p.is_simple());
        for x in [9.969209968386869e36, f64::NAN, f64::INFINITY, -0.0, 1.5, -1e300, 1e308] {
            assert_eq!(simple(&p, x).to_bits(), p.decode(x).to_bits(), "{x}");
        }
        let p = packing(&[("scale_factor", AttributeValue::Double(1e306))], Storage::I16);
        assert!(p.is_simple() && simple(&p, 1000.0).is_nan() && p.decode(1000.0).is_nan());
        assert!(simple(&p, -32767.0).is_nan());
        let p = packing(&[("missing_value", AttributeValue::Doubles(vec![-999.0, -99.0]))], Storage::F64);
        assert!(!p.is_simple());
        assert!(p.decode(-99.0).is_nan() && p.decode(-999.0).is_nan());
        assert_eq!(p.decode(-98.0), -98.0);
        let p = packing(&[("valid_range", AttributeValue::Floats(vec![-2.0, 40.0]))], Storage::F32);
        assert!(p.decode(40.5).is_nan() && p.decode(-2.5).is_nan());
        assert_eq!(p.decode(40.0), 40.0);
    }

    #[test]
    fn bad_attributes_are_reported() {
        let err = Packing::from_attributes(Storage::F64, |n| {
            (n == "scale_factor").then(|| (&AttributeValue::Str("x".into())).into())
        });
        assert!(err.unwrap_err().contains("scale_factor"));
        let err = Packing::from_attributes(Storage::F64, |n| (n == "_FillValue").then(|| AttrValue::Numbers(vec![])));
        assert!(err.unwrap_err().contains("_FillValue"));
    }

    #[test]
    fn differences_are_named() {
        let base = packing(&[("_FillValue", AttributeValue::Float(f32::NAN))], Storage::F32);
        assert_eq!(base.differs_from(&base.clone()), None, "a NaN fill equals itself");
        let mut q = base.clone();
        q.quantize = Some(crate::pool::Quantize { scale: 0.01, offset: 0.0 });
        assert_eq!(base.differs_from(&q), None, "quantize is the job's");
        let other = packing(&[("_FillValue", AttributeValue::Float(-999.0))], Storage::F32);
        assert_eq!(base.differs_from(&other), Some("_FillValue"));
        let scaled = packing(&[("scale_factor", AttributeValue::Float(2.0))], Storage::I16);
        assert_eq!(packing(&[], Storage::I16).differs_from(&scaled), Some("scale_factor"));
        let ranged = packing(&[("valid_range", AttributeValue::Shorts(vec![0, 10]))], Storage::I16);
        assert_eq!(packing(&[], Storage::I16).differs_from(&ranged), Some("valid_min"));
    }
}
