//! Text attributes as every reader takes them: NC_CHAR text, or one NC_STRING (an HDF5
//! variable-length string, which h5py, h5netcdf and `xarray.to_netcdf(engine="h5netcdf")`
//! write for every Python `str`), read alike through libnetcdf and the header parsers.
//!
//! Why it exists: libnetcdf gives NC_CHAR text as `AttributeValue::Str` and an NC_STRING as
//! `AttributeValue::Strs` of one element; readers that matched only the first took a noleap
//! `calendar` written by xarray for no calendar (dated in `standard`, 37 days off since 1850),
//! refused NC_STRING time `units` as missing and compared no NC_STRING `units` between files.
//! One function per question here, used by every reader, keeps them from diverging again.

use netcdf::AttributeValue;

/// An attribute's text: NC_CHAR, or an NC_STRING of one string (as netCDF4-python returns a
/// `str` for both). Numbers and lists of several strings are not text.
pub fn attr_text(value: &AttributeValue) -> Option<String> {
    match value {
        AttributeValue::Str(s) => Some(s.clone()),
        AttributeValue::Strs(v) if v.len() == 1 => Some(v[0].clone()),
        _ => None,
    }
}

/// Variable attribute `name` as text ([`attr_text`]); None where absent, unreadable or not text.
pub fn var_text(var: &netcdf::Variable<'_>, name: &str) -> Option<String> {
    attr_text(&var.attribute_value(name)?.ok()?)
}

/// Global attribute `name` of `file` as text ([`attr_text`]).
pub fn global_text(file: &netcdf::File, name: &str) -> Option<String> {
    attr_text(&file.attribute(name)?.value().ok()?)
}

/// An attribute to copy into an output: one NC_STRING as NC_CHAR text, so that the outputs
/// hold one text type whatever wrote the input (and a classic-format file could hold it);
/// everything else as it is.
pub fn as_char(value: AttributeValue) -> AttributeValue {
    match attr_text(&value) {
        Some(s) => AttributeValue::Str(s),
        None => value,
    }
}

/// The text of one stored HDF5 string (a fixed-length string's bytes, or a variable-length
/// string's), as libnetcdf returns it: up to the first NUL, trailing spaces of a space-padded
/// string kept (they are text to libnetcdf and netCDF4-python), invalid UTF-8 replaced.
pub fn hdf5_text(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nc_char_and_one_nc_string_are_text() {
        assert_eq!(attr_text(&AttributeValue::Str("degC".into())).as_deref(), Some("degC"));
        assert_eq!(attr_text(&AttributeValue::Strs(vec!["noleap".into()])).as_deref(), Some("noleap"));
        assert_eq!(attr_text(&AttributeValue::Strs(vec!["a".into(), "b".into()])), None);
        assert_eq!(attr_text(&AttributeValue::Strs(vec![])), None);
        assert_eq!(attr_text(&AttributeValue::Double(1.0)), None);
        assert_eq!(as_char(AttributeValue::Strs(vec!["K".into()])), AttributeValue::Str("K".into()));
        let two = AttributeValue::Strs(vec!["a".into(), "b".into()]);
        assert_eq!(as_char(two.clone()), two);
    }

    #[test]
    fn hdf5_strings_end_at_their_first_nul() {
        assert_eq!(hdf5_text(b"degC\0\0\0"), "degC");
        assert_eq!(hdf5_text(b"K  "), "K  ");
        assert_eq!(hdf5_text(b""), "");
        assert_eq!(hdf5_text("r\u{e9}analyse\0".as_bytes()), "r\u{e9}analyse");
        assert_eq!(hdf5_text(b"a\xffb"), "a\u{fffd}b");
    }
}
