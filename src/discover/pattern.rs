//! Naming patterns: a template read from file names (`sst_{year}_{doy}.nc`,
//! `{year}{month}/oisst-avhrr-v02r01.{year}{month}{day}.nc`), so that a directory of files
//! named by date is resolved from the names alone, without opening a file.
//!
//! Names are split into digit and non-digit runs, files with the same shape of name form a
//! candidate pattern, and digit runs are read as dates (`YYYYMMDD[hhmmss]`, `YYYYMM`,
//! `YYYYDDD`, `YYYY`, `DDD`, `MM`/`DD`). A pattern is accepted only if it names every one of
//! its files back exactly.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::DiscoverError;
use crate::calendar::Date;
use crate::template::{Piece, Template};

/// What a file that is not a regular file is, for messages.
pub(super) fn kind_of(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "is a directory"
    } else if t.is_fifo() {
        "is a FIFO, not a regular file"
    } else if t.is_socket() {
        "is a socket, not a regular file"
    } else if t.is_block_device() || t.is_char_device() {
        "is a device, not a regular file"
    } else {
        "is not a regular file"
    }
}

/// Relative paths of the NetCDF files under `dir` (hidden entries skipped, 4 levels deep).
pub(super) fn scan(dir: &Path) -> Result<Vec<String>, DiscoverError> {
    let mut found = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new(), 0)];
    while let Some((abs, rel, depth)) = stack.pop() {
        let entries =
            std::fs::read_dir(&abs).map_err(|cause| DiscoverError::UnreadableDir { dir: abs.clone(), cause })?;
        for entry in entries {
            let entry = entry.map_err(|cause| DiscoverError::UnreadableDir { dir: abs.clone(), cause })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let child_rel = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            let file_type =
                entry.file_type().map_err(|cause| DiscoverError::UnreadableDir { dir: abs.clone(), cause })?;
            let is_dir = file_type.is_dir() || (file_type.is_symlink() && entry.path().is_dir());
            if is_dir && depth < 4 {
                stack.push((entry.path(), child_rel, depth + 1));
            } else if !is_dir {
                let lower = name.to_ascii_lowercase();
                if lower.ends_with(".nc") || lower.ends_with(".nc4") {
                    found.push(child_rel);
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A name split into runs: `(true, "1991")`, `(false, "sst_")`.
fn runs(name: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = name.as_bytes();
    for i in 1..=bytes.len() {
        if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
            out.push((bytes[start].is_ascii_digit(), &name[start..i]));
            start = i;
        }
    }
    out
}

/// The shape of a name: non-digit text kept, digit runs reduced to their length.
fn signature(name: &str) -> String {
    runs(name).iter().map(|&(digit, text)| if digit { format!("<{}>", text.len()) } else { text.to_string() }).collect()
}

fn ymd(s: &str) -> Option<Date> {
    let year = s.get(0..4)?.parse().ok()?;
    let date = Date::new(year, s.get(4..6)?.parse().ok()?, s.get(6..8)?.parse().ok()?)?;
    (1800..=2300).contains(&date.year).then_some(date)
}

/// `YYYYMM`: a year and month.
fn ym(s: &str) -> Option<(i32, u8)> {
    let year: i32 = s.get(0..4)?.parse().ok()?;
    let month: u8 = s.get(4..6)?.parse().ok()?;
    ((1800..=2300).contains(&year) && (1..=12).contains(&month)).then_some((year, month))
}

/// A template for the files of one name shape, if their digit runs read as dates that name
/// every file back exactly.
pub(super) fn interpret(names: &[&str]) -> Option<Template> {
    let split: Vec<Vec<(bool, &str)>> = names.iter().map(|n| runs(n)).collect();
    let first = &split[0];
    let column = |i: usize| split.iter().map(move |r| r[i].1);
    let varying = |i: usize| column(i).any(|v| v != first[i].1);
    let mut pieces = Vec::new();
    // two-digit runs: (piece index, varying); each may be literal text, a month or a day
    let mut two_digit = Vec::new();
    for (i, &(digit, text)) in first.iter().enumerate() {
        let all = |f: &dyn Fn(&str) -> bool| column(i).all(f);
        if !digit {
            pieces.push(Piece::Text(text.into()));
        } else if matches!(text.len(), 8 | 10 | 12 | 14)
            && all(&|v| ymd(v).is_some())
            && column(i).all(|v| v[8..] == text[8..])
        {
            pieces.extend([Piece::Year, Piece::Month, Piece::Day]);
            if text.len() > 8 {
                pieces.push(Piece::Text(text[8..].into()));
            }
        } else if text.len() == 6
            && (varying(i) || first.get(i + 1).is_some_and(|r| r.1.starts_with('/')))
            && all(&|v| ym(v).is_some())
        {
            // a month's directory, `199101/` (NCEI's OISST tree)
            pieces.extend([Piece::Year, Piece::Month]);
        } else if text.len() == 7
            && varying(i)
            && all(&|v| {
                v[..4].parse::<i32>().is_ok_and(|y| Date::from_ordinal(y, v[4..].parse().unwrap_or(0)).is_some())
            })
        {
            pieces.extend([Piece::Year, Piece::Doy]);
        } else if text.len() == 4 && all(&|v| v.parse::<i32>().is_ok_and(|y| (1800..=2300).contains(&y))) {
            pieces.push(Piece::Year);
        } else if text.len() == 3
            && (varying(i) || names.len() == 1)
            && all(&|v| v.parse::<u16>().is_ok_and(|d| (1..=366).contains(&d)))
        {
            pieces.push(Piece::Doy);
        } else if text.len() == 2 && two_digit.len() < 6 {
            two_digit.push((pieces.len(), varying(i)));
            pieces.push(Piece::Text(text.into()));
        } else if varying(i) {
            return None;
        } else {
            pieces.push(Piece::Text(text.into()));
        }
    }
    // Try every reading of the two-digit runs (text, month or day; varying runs cannot be
    // text), preferring readings that take constant runs as date fields too (a January-only
    // directory `1999/01/...`), and keep the first that names every file back.
    let mut candidates = Vec::new();
    for code in 0..3usize.pow(two_digit.len() as u32) {
        let mut p = pieces.clone();
        let (mut c, mut constants_used, mut ok) = (code, 0, true);
        for &(at, vary) in &two_digit {
            match c % 3 {
                0 => ok &= !vary,
                1 => p[at] = Piece::Month,
                _ => p[at] = Piece::Day,
            }
            constants_used += usize::from(c % 3 != 0 && !vary);
            c /= 3;
        }
        if let Some(t) = ok.then(|| Template::from_pieces(p)).flatten() {
            candidates.push((constants_used, code, t));
        }
    }
    candidates.sort_by_key(|(used, code, _)| (std::cmp::Reverse(*used), *code));
    candidates.into_iter().map(|(_, _, t)| t).find(|t| names.iter().all(|n| date_of(t, n).is_some()))
}

/// The date a template gives a name, if the name is exactly what the template makes of it.
pub(super) fn date_of(t: &Template, name: &str) -> Option<Date> {
    // read fields positionally by rendering a probe and walking both strings
    let probe = t.to_string();
    let (mut year, mut doy, mut month, mut day) = (None, None, None, None);
    let mut rest = name;
    let mut pattern = probe.as_str();
    while !pattern.is_empty() {
        let (field, width) = [("{year}", 4), ("{doy}", 3), ("{month}", 2), ("{day}", 2)]
            .into_iter()
            .find(|(f, _)| pattern.starts_with(f))
            .unwrap_or(("", 0));
        if width == 0 {
            let c = pattern.chars().next()?;
            rest = rest.strip_prefix(c)?;
            pattern = &pattern[c.len_utf8()..];
            continue;
        }
        let digits = rest.get(..width)?;
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let value: i32 = digits.parse().ok()?;
        let slot = match field {
            "{year}" => &mut year,
            "{doy}" => &mut doy,
            "{month}" => &mut month,
            _ => &mut day,
        };
        if slot.is_some_and(|v| v != value) {
            return None;
        }
        *slot = Some(value);
        rest = &rest[width..];
        pattern = &pattern[field.len()..];
    }
    if !rest.is_empty() {
        return None;
    }
    let year = year?;
    let date = match (month, day) {
        (Some(m), Some(d)) => Date::new(year, u8::try_from(m).ok()?, u8::try_from(d).ok()?)?,
        _ => Date::from_ordinal(year, u16::try_from(doy?).ok()?)?,
    };
    if doy.is_some_and(|d| d != i32::from(date.ordinal())) {
        return None;
    }
    (t.expand(date).to_str()? == name).then_some(date)
}

/// A template made from one file's name: its digit runs that read as dates become fields
/// (`20200101` -> `{year}{month}{day}`, `2020001` -> `{year}{doy}`, a year, a day of year),
/// with `{year}` added where the name has none (a file per day of year must say which year);
/// `None` where nothing in the name reads as a date.
pub(super) fn suggest_template(name: &str) -> Option<String> {
    let mut out = String::new();
    let mut has_year = false;
    for (digit, text) in runs(name) {
        let field = match (digit, text.len()) {
            (true, 8) if ymd(text).is_some() => Some("{year}{month}{day}"),
            (true, 6) if ym(text).is_some() => Some("{year}{month}"),
            (true, 7) if text[..4].parse::<i32>().is_ok_and(|y| (1800..=2300).contains(&y)) => Some("{year}{doy}"),
            (true, 4) if text.parse::<i32>().is_ok_and(|y| (1800..=2300).contains(&y)) => Some("{year}"),
            (true, 3) if text.parse::<u16>().is_ok_and(|d| (1..=366).contains(&d)) => Some("{doy}"),
            _ => None,
        };
        has_year |= field.is_some_and(|f| f.contains("{year}"));
        out.push_str(field.unwrap_or(text));
    }
    match (has_year, out.contains("{doy}")) {
        (true, _) => Some(out),
        (false, true) => Some(out.replacen("{doy}", "{year}_{doy}", 1)),
        // nothing in the name reads as a date: the generic example
        (false, false) => None,
    }
}

/// The one naming pattern of the NetCDF files under `dir`.
pub fn infer_template(dir: &Path) -> Result<Template, DiscoverError> {
    infer_template_from(dir, &scan(dir)?)
}

/// [`infer_template`] of the files `names` (relative to `dir`).
pub(super) fn infer_template_from(dir: &Path, names: &[String]) -> Result<Template, DiscoverError> {
    // the directory as the user wrote it, without a trailing slash (no `data//sst...`)
    let shown = dir.display().to_string();
    let shown = match shown.trim_end_matches('/') {
        "" => "/".to_string(),
        s => s.to_string(),
    };
    let join = |name: &str| if shown.ends_with('/') { format!("{shown}{name}") } else { format!("{shown}/{name}") };
    if names.is_empty() {
        return Err(DiscoverError::NoPattern {
            dir: dir.into(),
            detail: "no .nc files".into(),
            hint: join("sst_{year}_{doy}.nc"),
        });
    }
    let mut by_shape: HashMap<String, Vec<&str>> = HashMap::new();
    for n in names {
        by_shape.entry(signature(n)).or_default().push(n);
    }
    let mut found: Vec<(Template, usize)> =
        by_shape.values().filter_map(|group| Some((interpret(group)?, group.len()))).collect();
    found.sort_by_key(|(t, _)| t.to_string());
    let prefix = join("");
    match found.len() {
        1 => Ok(found[0].0.with_prefix(&prefix)),
        0 => Err(DiscoverError::NoPattern {
            dir: dir.into(),
            detail: format!("{} .nc files, e.g. {}", names.len(), names[0]),
            hint: join(&suggest_template(&names[0]).unwrap_or_else(|| "sst_{year}_{doy}.nc".into())),
        }),
        _ => Err(DiscoverError::AmbiguousPattern {
            dir: dir.into(),
            patterns: found.iter().map(|(t, n)| format!("{t}: {n} files")).collect::<Vec<_>>().join("; "),
        }),
    }
}

/// The dates of files named by date (a glob's or a list's): `None` unless their paths follow
/// one naming pattern that names every one of them back.
pub(super) fn dates_of_names(files: &[PathBuf]) -> Option<(Template, BTreeMap<Date, PathBuf>)> {
    let names: Vec<&str> = files.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
    let shape = signature(names.first()?);
    if names.iter().any(|n| signature(n) != shape) {
        return None;
    }
    let t = interpret(&names)?;
    let mut dates = BTreeMap::new();
    for (name, path) in names.iter().zip(files) {
        dates.insert(date_of(&t, name)?, path.clone());
    }
    (dates.len() == files.len()).then_some((t, dates))
}
