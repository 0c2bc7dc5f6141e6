//! Finding the input files: expand the template (or infer one from a directory), then check
//! that every file the job needs exists before anything is read.
//!
//! A directory is scanned (a few levels deep) for NetCDF files; names are split into digit and
//! non-digit runs, files with the same shape of name form a candidate pattern, and digit runs
//! are read as dates (`YYYYMMDD[hhmmss]`, `YYYYDDD`, `YYYY`, `DDD`, `MM`/`DD`). A pattern is
//! accepted only if it names every one of its files back exactly; the directory must hold one
//! such pattern, or the user is asked for a template.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::calendar::Date;
use crate::template::{Piece, Template, TemplateError};

/// The resolved input files of a job.
#[derive(Clone, Debug)]
pub struct Inputs {
    pub template: Template,
    /// Existing files of the needed dates.
    pub files: BTreeMap<Date, PathBuf>,
    /// Needed files that do not exist (only with `--allow-missing`).
    pub missing: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("input '{0}' is neither a directory nor a template with {{year}} and {{doy}} (or {{month}} and {{day}})")]
    NotFound(String),
    #[error("{}: cannot read directory: {cause}", dir.display())]
    UnreadableDir { dir: PathBuf, cause: std::io::Error },
    #[error("{}: found no NetCDF files named by date ({detail}); pass --input with a template such as '{hint}'", dir.display())]
    NoPattern { dir: PathBuf, detail: String, hint: String },
    #[error("{}: files follow several naming patterns ({patterns}); pass --input with one template", dir.display())]
    AmbiguousPattern { dir: PathBuf, patterns: String },
    #[error("{}: input file {kind}", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("{}: cannot read input file: {cause}", path.display())]
    Unreadable { path: PathBuf, cause: std::io::Error },
    #[error("{} of {total} input files are missing (--allow-missing skips them){summary}", missing.len())]
    MissingFiles { missing: Vec<PathBuf>, total: usize, summary: MissingSummary },
}

/// Resolve `input` (a template or a directory) for the `required` dates.
pub fn discover(input: &str, required: &[Date], allow_missing: bool) -> Result<Inputs, DiscoverError> {
    let path = Path::new(input);
    let template = if path.is_dir() {
        infer_template(path)?
    } else if input.contains('{') {
        input.parse::<Template>()?
    } else {
        return Err(DiscoverError::NotFound(input.into()));
    };
    let mut files = BTreeMap::new();
    let mut missing = Vec::new();
    let mut missing_dates = Vec::new();
    for &date in required {
        let file = template.expand(date);
        // only a file that is not there is missing (what --allow-missing skips): a directory
        // or a FIFO in its place is a mistake to report, not a gap in the record
        match std::fs::metadata(&file) {
            Ok(m) if m.is_file() => {
                files.insert(date, file);
            }
            Ok(m) => return Err(DiscoverError::NotAFile { kind: kind_of(&m.file_type()), path: file }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                missing.push(file);
                missing_dates.push(date);
            }
            Err(cause) => return Err(DiscoverError::Unreadable { path: file, cause }),
        }
    }
    if !missing.is_empty() && !allow_missing {
        let summary = MissingSummary::new(&missing, &missing_dates, &files, required);
        return Err(DiscoverError::MissingFiles { missing, total: required.len(), summary });
    }
    Ok(Inputs { template, files, missing })
}

/// Missing files listed up to this many; a longer list is summarised.
const LIST_ALL: usize = 10;

/// What the missing-file error says beyond the count: the days and years missing, the likely
/// cause, and the files (all of a short list; the first and last few of a long one).
#[derive(Clone, Debug)]
pub struct MissingSummary {
    text: String,
}

impl std::fmt::Display for MissingSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Numbers as ranges: `116-120, 274-278`.
fn ranges(values: impl IntoIterator<Item = i32>) -> String {
    let mut v: Vec<i32> = values.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { v[i].to_string() } else { format!("{}-{}", v[i], v[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

impl MissingSummary {
    fn new(missing: &[PathBuf], dates: &[Date], found: &BTreeMap<Date, PathBuf>, required: &[Date]) -> MissingSummary {
        let doy = |d: &Date| i32::from(d.ordinal());
        let missing_days = ranges(dates.iter().map(doy));
        let missing_years = ranges(dates.iter().map(|d| d.year));
        let needed_days = ranges(required.iter().map(doy));
        let found_days = ranges(found.keys().map(doy));
        let found_years: std::collections::BTreeSet<i32> = found.keys().map(|d| d.year).collect();
        let found_doys: std::collections::BTreeSet<i32> = found.keys().map(doy).collect();
        // the likely cause: no file at all, whole years absent, days outside what the dataset
        // holds, or gaps in the record
        let cause = if found.is_empty() {
            format!(
                "no file the job needs exists: check --input (the first one expected is {})",
                missing.first().map_or(String::new(), |p| p.display().to_string())
            )
        } else if dates.iter().all(|d| !found_years.contains(&d.year)) {
            format!(
                "the dataset holds years {} and the job asks for {}: check --years",
                ranges(found_years.iter().copied()),
                ranges(required.iter().map(|d| d.year))
            )
        } else if dates.iter().all(|d| !found_doys.contains(&doy(d))) {
            format!(
                "the dataset holds days {found_days} and the windows need days {needed_days} (target days and \
                 --half-window): narrow --doys or --half-window to the data, or pass --allow-missing"
            )
        } else {
            "gaps in the record: --allow-missing skips them (the report counts them)".to_string()
        };
        let mut text = format!(": days {missing_days} of years {missing_years}; {cause}");
        let line = |p: &PathBuf| format!("\n  {}", p.display());
        if missing.len() <= LIST_ALL {
            text.extend(missing.iter().map(line));
        } else {
            text.extend(missing[..3].iter().map(line));
            text.push_str(&format!("\n  ... {} more ...", missing.len() - 6));
            text.extend(missing[missing.len() - 3..].iter().map(line));
        }
        MissingSummary { text }
    }
}

/// What a file that is not a regular file is, for messages.
fn kind_of(t: &std::fs::FileType) -> &'static str {
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
fn scan(dir: &Path) -> Result<Vec<String>, DiscoverError> {
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

/// A template for the files of one name shape, if their digit runs read as dates that name
/// every file back exactly.
fn interpret(names: &[&str]) -> Option<Template> {
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
fn date_of(t: &Template, name: &str) -> Option<Date> {
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
fn suggest_template(name: &str) -> Option<String> {
    let mut out = String::new();
    let mut has_year = false;
    for (digit, text) in runs(name) {
        let field = match (digit, text.len()) {
            (true, 8) if ymd(text).is_some() => Some("{year}{month}{day}"),
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
    let names = scan(dir)?;
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
    for n in &names {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn infer(names: &[&str]) -> Option<String> {
        interpret(names).map(|t| t.to_string())
    }

    #[test]
    fn infers_common_naming_schemes() {
        assert_eq!(infer(&["sst_1991_147.nc", "sst_1991_148.nc", "sst_1992_147.nc"]).unwrap(), "sst_{year}_{doy}.nc");
        let ostia = [
            "20200101120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc",
            "20200102120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc",
        ];
        assert_eq!(infer(&ostia).unwrap(), "{year}{month}{day}120000-UKMO-L4_GHRSST-SSTfnd-OSTIA-GLOB-v02.0-fv02.0.nc");
        assert_eq!(infer(&["2020/001/a.nc", "2020/002/a.nc"]).unwrap(), "{year}/{doy}/a.nc");
        assert_eq!(infer(&["sst.2019.01.31.nc", "sst.2019.02.01.nc"]).unwrap(), "sst.{year}.{month}.{day}.nc");
        assert_eq!(infer(&["sst.31.01.2019.nc", "sst.01.02.2019.nc"]).unwrap(), "sst.{day}.{month}.{year}.nc");
        assert_eq!(infer(&["d2019032.nc", "d2019033.nc"]).unwrap(), "d{year}{doy}.nc");
        assert_eq!(infer(&["2020/20200101.nc", "2021/20210101.nc"]).unwrap(), "{year}/{year}{month}{day}.nc");
        assert_eq!(
            infer(&["1999/01/a_1999_01_30.nc", "1999/01/a_1999_01_31.nc"]).unwrap(),
            "{year}/{month}/a_{year}_{month}_{day}.nc"
        );
        assert_eq!(
            infer(&["2020/02/20200201.nc", "2020/03/20200301.nc"]).unwrap(),
            "{year}/{month}/{year}{month}{day}.nc"
        );
    }

    #[test]
    fn refuses_names_that_are_not_dates() {
        assert_eq!(infer(&["mean_doy152.nc", "mean_doy153.nc"]), None);
        assert_eq!(infer(&["run_17.nc", "run_18.nc"]), None);
        // doy 366 in a non-leap year cannot be named back
        assert_eq!(infer(&["sst_2019_366.nc", "sst_2019_365.nc"]), None);
    }

    #[test]
    fn finds_files_and_reports_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        for d in 147..=149 {
            std::fs::write(dir.path().join(format!("sst_1991_{d}.nc")), b"").unwrap();
        }
        std::fs::write(dir.path().join("mean_doy152.nc"), b"").unwrap(); // not a date pattern
        std::fs::write(dir.path().join(".hidden_1991_150.nc"), b"").unwrap();
        let required: Vec<Date> = (147..=150).map(|d| Date::from_ordinal(1991, d).unwrap()).collect();
        let input = dir.path().to_str().unwrap();
        match discover(input, &required, false) {
            Err(DiscoverError::MissingFiles { missing, total, .. }) => {
                assert_eq!(total, 4);
                assert_eq!(missing, [dir.path().join("sst_1991_150.nc")]);
            }
            other => panic!("expected missing files, got {other:?}"),
        }
        let inputs = discover(input, &required, true).unwrap();
        assert_eq!(inputs.files.len(), 3);
        assert_eq!(inputs.missing.len(), 1);
        std::fs::write(dir.path().join("other_1991_01_01.nc"), b"").unwrap();
        std::fs::write(dir.path().join("other_1991_01_02.nc"), b"").unwrap();
        assert!(matches!(infer_template(dir.path()), Err(DiscoverError::AmbiguousPattern { .. })));
        assert!(matches!(discover("/nonexistent/dir", &required, false), Err(DiscoverError::NotFound(_))));
    }

    /// A long list is summarised: the count, the days and years, the cause (the windows
    /// reach past the days the dataset holds), the first and last three files.
    #[test]
    fn a_long_missing_list_is_summarised_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        for y in 1991..=1993 {
            for d in 121..=273 {
                std::fs::write(dir.path().join(format!("sst_{y}_{d}.nc")), b"").unwrap();
            }
        }
        let required: Vec<Date> =
            (1991..=1993).flat_map(|y| (116..=278).map(move |d| Date::from_ordinal(y, d).unwrap())).collect();
        let err = discover(&format!("{}/", dir.path().display()), &required, false).unwrap_err().to_string();
        let lines: Vec<&str> = err.lines().collect();
        assert!(lines[0].starts_with("30 of 489 input files are missing"), "{err}");
        assert!(lines[0].contains("days 116-120, 274-278 of years 1991-1993"), "{err}");
        assert!(lines[0].contains("the dataset holds days 121-273 and the windows need days 116-278"), "{err}");
        assert_eq!(lines.len(), 8, "{err}");
        assert!(lines[1].ends_with("/sst_1991_116.nc") && !lines[1].contains("//"), "{err}");
        assert_eq!(lines[4].trim(), "... 24 more ...");
        assert!(lines[7].ends_with("sst_1993_278.nc"), "{err}");
        // a whole year absent names --years; nothing at all names --input
        let later: Vec<Date> =
            (1994..=1994).flat_map(|y| (121..=130).map(move |d| Date::from_ordinal(y, d).unwrap())).collect();
        let both = [&required[5..10], &later[..]].concat();
        let err = discover(dir.path().to_str().unwrap(), &both, false).unwrap_err().to_string();
        assert!(err.contains("the dataset holds years 1991 and the job asks for 1991, 1994: check --years"), "{err}");
        let err =
            discover(dir.path().join("x_{year}_{doy}.nc").to_str().unwrap(), &later, false).unwrap_err().to_string();
        assert!(err.contains("no file the job needs exists: check --input"), "{err}");
    }

    #[test]
    fn directory_hints_are_made_from_the_files_found() {
        assert_eq!(suggest_template("sst.20200101.v2.nc").unwrap(), "sst.{year}{month}{day}.v2.nc");
        assert_eq!(suggest_template("A2019032.L3m.nc").unwrap(), "A{year}{doy}.L3m.nc");
        assert_eq!(suggest_template("clim_doy152.nc").unwrap(), "clim_doy{year}_{doy}.nc");
        assert_eq!(suggest_template("run_17.nc"), None);
        let dir = tempfile::tempdir().unwrap();
        for d in ["clim_doy152.nc", "clim_doy153.nc"] {
            std::fs::write(dir.path().join(d), b"").unwrap();
        }
        let with_slash = format!("{}/", dir.path().display());
        let err = infer_template(Path::new(&with_slash)).unwrap_err().to_string();
        assert!(err.contains(&format!("'{}/clim_doy{{year}}_{{doy}}.nc'", dir.path().display())), "{err}");
        assert!(!err.contains("//"), "{err}");
        let other = tempfile::tempdir().unwrap();
        for d in ["run_17.nc", "run_18.nc"] {
            std::fs::write(other.path().join(d), b"").unwrap();
        }
        let err = infer_template(other.path()).unwrap_err().to_string();
        assert!(err.contains(&format!("'{}/sst_{{year}}_{{doy}}.nc'", other.path().display())), "{err}");
    }
}
