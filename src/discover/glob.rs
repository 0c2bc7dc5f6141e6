//! Inputs given as files: paths, globs (`'data/*.nc'`, quoted so that the shell leaves them,
//! and long lists stay within the command-line limit), directories and `@list.txt` files, each
//! expanded to the NetCDF files it names, in sorted order without repeats.
//!
//! Globs match `*` (any run of characters but `/`), `?` (one character) and `[abc]`/`[a-z]`
//! (one of a set) per path component; hidden entries match only a pattern starting with `.`.

use std::path::{Path, PathBuf};

use super::{pattern, DiscoverError};

/// Every file `specs` name.
pub(super) fn expand(specs: &[&str]) -> Result<Vec<PathBuf>, DiscoverError> {
    let mut files = Vec::new();
    for spec in specs {
        expand_one(spec, &mut files, 0)?;
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn expand_one(spec: &str, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), DiscoverError> {
    if let Some(list) = spec.strip_prefix('@') {
        let path = PathBuf::from(list);
        let text = std::fs::read_to_string(&path).map_err(|cause| DiscoverError::List { path: path.clone(), cause })?;
        // a list of lists is fine; a list naming itself is not
        if depth > 4 {
            return Err(DiscoverError::NotFound(spec.into()));
        }
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            expand_one(line, out, depth + 1)?;
        }
        return Ok(());
    }
    if spec.contains('{') {
        // a template among several inputs: it cannot be expanded without the job's dates
        return Err(DiscoverError::NotFound(spec.into()));
    }
    if spec.contains(['*', '?', '[']) {
        let found = glob(spec)?;
        if found.is_empty() {
            return Err(DiscoverError::NoMatch(spec.into()));
        }
        out.extend(found);
        return Ok(());
    }
    let path = Path::new(spec);
    if path.is_dir() {
        out.extend(pattern::scan(path)?.iter().map(|n| path.join(n)));
    } else if path.is_file() {
        out.push(path.to_path_buf());
    } else {
        return Err(DiscoverError::NotFound(spec.into()));
    }
    Ok(())
}

/// The files matching `pattern`.
fn glob(pattern: &str) -> Result<Vec<PathBuf>, DiscoverError> {
    let absolute = pattern.starts_with('/');
    let mut current = vec![PathBuf::from(if absolute { "/" } else { "" })];
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for base in &current {
            if !part.contains(['*', '?', '[']) {
                next.push(base.join(part));
                continue;
            }
            let dir = if base.as_os_str().is_empty() { Path::new(".") } else { base.as_path() };
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !part.starts_with('.') {
                    continue;
                }
                if matches(part.as_bytes(), name.as_bytes()) {
                    next.push(base.join(&name));
                }
            }
        }
        next.retain(|p| if last { p.is_file() } else { p.is_dir() });
        current = next;
    }
    current.sort();
    Ok(current)
}

/// Whether `name` matches the glob component `pat`.
fn matches(pat: &[u8], name: &[u8]) -> bool {
    match pat.first() {
        None => name.is_empty(),
        Some(b'*') => (0..=name.len()).any(|k| matches(&pat[1..], &name[k..])),
        Some(b'?') => !name.is_empty() && matches(&pat[1..], &name[1..]),
        Some(b'[') => {
            let Some(close) = pat.iter().skip(1).position(|&c| c == b']').map(|p| p + 1) else {
                return name.first() == Some(&b'[') && matches(&pat[1..], &name[1..]);
            };
            let Some(&c) = name.first() else { return false };
            let set = &pat[1..close];
            let (negate, set) = match set.first() {
                Some(b'!' | b'^') => (true, &set[1..]),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= (set[i]..=set[i + 2]).contains(&c);
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != negate && matches(&pat[close + 1..], &name[1..])
        }
        Some(&p) => name.first() == Some(&p) && matches(&pat[1..], &name[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_components_match_as_the_shell_does() {
        assert!(matches(b"*.nc", b"sst_1991.nc"));
        assert!(!matches(b"*.nc", b"sst_1991.nc4"));
        assert!(matches(b"sst_199?.nc", b"sst_1991.nc"));
        assert!(matches(b"sst_19[89]?.nc", b"sst_1991.nc"));
        assert!(!matches(b"sst_19[!9]?.nc", b"sst_1991.nc"));
        assert!(matches(b"a[0-9]b", b"a5b"));
        assert!(!matches(b"a[0-9]b", b"axb"));
    }

    #[test]
    fn globs_lists_and_directories_expand_to_sorted_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("1991")).unwrap();
        std::fs::create_dir_all(d.join("1992")).unwrap();
        for f in ["1991/a.nc", "1992/b.nc", "1992/c.txt", "top.nc"] {
            std::fs::write(d.join(f), b"").unwrap();
        }
        let g = format!("{}/199*/*.nc", d.display());
        assert_eq!(expand(&[&g]).unwrap(), [d.join("1991/a.nc"), d.join("1992/b.nc")]);
        let list = d.join("list.txt");
        std::fs::write(&list, format!("# inputs\n{}\n\n{}\n", d.join("top.nc").display(), g)).unwrap();
        let from_list = expand(&[&format!("@{}", list.display())]).unwrap();
        assert_eq!(from_list, [d.join("1991/a.nc"), d.join("1992/b.nc"), d.join("top.nc")]);
        let top = d.join("top.nc");
        let both = expand(&[top.to_str().unwrap(), d.join("1991").to_str().unwrap(), top.to_str().unwrap()]).unwrap();
        assert_eq!(both, [d.join("1991").join("a.nc"), top.clone()]);
        assert!(matches!(expand(&[&format!("{}/*.grib", d.display())]), Err(DiscoverError::NoMatch(_))));
        assert!(matches!(expand(&["/nonexistent/x.nc"]), Err(DiscoverError::NotFound(_))));
    }
}
