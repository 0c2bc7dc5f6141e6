//! A file's variable size and time coordinate from its header, without libnetcdf: what
//! discovery checks of every file named by date (one step each, dated as its name says).
//!
//! Why it exists: the readers trust a file named by date to hold that date's field, and a
//! product's mislabelled file would otherwise be averaged in as another day. Opening ten
//! thousand files through libnetcdf (not thread-safe, so forked children) would multiply the
//! time discovery takes; the header parsers ([`super::h5meta`], [`super::netcdf3`]) read the
//! few bytes needed on every core, text attributes NC_CHAR or NC_STRING alike. What they cannot
//! read (compressed time chunks, a structure left to libhdf5) is reported as
//! [`TimeRead::Unread`], for the caller to ask the library, never guessed.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::format::Format;
use super::h5meta::{Hdf5Meta, MetaError};
use super::netcdf3::{nc3_numbers, netcdf3_small};
use super::packing::AttrValue;

/// What a file's header says of its time coordinate.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeRead {
    /// The file has no variable of that name.
    Absent,
    /// Its `units`, `calendar` (absent: `None`), whether it has a `climatology` attribute,
    /// and its values.
    Found { units: Option<String>, calendar: Option<String>, climatology: bool, values: Vec<f64> },
    /// Not read here (the library may): why.
    Unread(String),
}

/// What [`header_facts`] read of one file.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderFacts {
    /// Values of the data variable (the product of its dimensions), where read.
    pub var_values: Option<u64>,
    pub time: TimeRead,
}

const WANTED: [&str; 3] = ["units", "calendar", "climatology"];
/// Bytes of a NetCDF-3 header read at once (a longer header is left to the library).
const NC3_HEAD: usize = 64 << 10;

/// The number of values of variable `var` of `path` and its time coordinate `time_var`.
pub fn header_facts(path: &Path, var: &str, time_var: &str) -> HeaderFacts {
    let unread = |why: String| HeaderFacts { var_values: None, time: TimeRead::Unread(why) };
    let Ok(mut file) = File::open(path) else { return unread("cannot open".into()) };
    let mut head = [0u8; 8];
    if file.read_exact(&mut head).is_err() {
        return unread("shorter than a header".into());
    }
    match Format::of(&head) {
        Some(Format::Hdf5) => hdf5_facts(&file, var, time_var),
        Some(Format::NetCdf3) => netcdf3_facts(&file, var, time_var),
        None => unread("not NetCDF-3 or HDF5 without a user block".into()),
    }
}

fn text(attrs: &[(String, AttrValue)], name: &str) -> Result<Option<String>, String> {
    match attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
        None => Ok(None),
        Some(AttrValue::Text(s)) => Ok(Some(s.trim_end_matches('\0').to_string())),
        Some(other) => Err(format!("attribute {name} is {other:?}")),
    }
}

fn found(attrs: &[(String, AttrValue)], values: Vec<f64>) -> TimeRead {
    let climatology = attrs.iter().any(|(n, _)| n == "climatology");
    match (text(attrs, "units"), text(attrs, "calendar")) {
        (Ok(units), Ok(calendar)) => TimeRead::Found { units, calendar, climatology, values },
        (Err(why), _) | (_, Err(why)) => TimeRead::Unread(why),
    }
}

fn hdf5_facts(file: &File, var: &str, time_var: &str) -> HeaderFacts {
    let meta = match Hdf5Meta::open(file) {
        Ok(m) => m,
        Err(e) => return HeaderFacts { var_values: None, time: TimeRead::Unread(e.to_string()) },
    };
    let var_values = meta.dataset(var).ok().and_then(|d| d.dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)));
    let time = match meta.dataset_with_attributes(time_var, &WANTED) {
        Err(MetaError::NotFound(_)) => TimeRead::Absent,
        Err(e) => TimeRead::Unread(e.to_string()),
        Ok((ds, attrs)) => match meta.values_f64(&ds) {
            Ok(values) => found(&attrs, values),
            Err(e) => TimeRead::Unread(e.to_string()),
        },
    };
    HeaderFacts { var_values, time }
}

fn netcdf3_facts(file: &File, var: &str, time_var: &str) -> HeaderFacts {
    let mut buf = vec![0u8; NC3_HEAD];
    let n = match file.read_at(&mut buf, 0) {
        Ok(n) => n,
        Err(e) => return HeaderFacts { var_values: None, time: TimeRead::Unread(e.to_string()) },
    };
    buf.truncate(n);
    let var_values = netcdf3_small(&buf, var, &[]).ok().flatten().map(|v| v.count);
    let time = match netcdf3_small(&buf, time_var, &WANTED) {
        Ok(None) => TimeRead::Absent,
        Err(why) => TimeRead::Unread(why),
        Ok(Some(t)) => {
            let size = t.count.saturating_mul(8).min(1 << 20) as usize;
            let mut raw = vec![0u8; size];
            // at most 8 bytes a value: the read may stop short at the end of the file
            match file.read_at(&mut raw, t.begin) {
                Err(e) => TimeRead::Unread(e.to_string()),
                Ok(got) => match nc3_numbers(t.kind, &raw[..got]) {
                    None => TimeRead::Unread("a text time coordinate".into()),
                    Some(v) if v.len() < t.count as usize => {
                        TimeRead::Unread("the values pass the end of the file".into())
                    }
                    Some(mut v) => {
                        v.truncate(t.count as usize);
                        found(&t.attrs, v)
                    }
                },
            }
        }
    };
    HeaderFacts { var_values, time }
}
