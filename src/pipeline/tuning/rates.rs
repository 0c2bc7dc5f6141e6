//! Measured pipeline rates, kept per machine in a small JSON file, so that the next run can
//! choose its number of segments from what this machine did ([`super::model`]): the read
//! stage's throughput, the engine's compute cost per cell and staged sample (and per segment),
//! and the writer's throughput (and cost per segment).
//!
//! Entries are keyed by what makes runs comparable: engine and device, pool type, threads,
//! where the pool lived and how files were read. Each entry keeps exponentially decayed sums of
//! its observations (every run weighs as much as all runs before it together, so the last few
//! runs dominate), from which the rates are fitted again after every run. The file is replaced
//! atomically (a temporary file renamed over it), so ranks writing at once never leave a torn
//! file (one rank's update may be lost); an unreadable or corrupt file is ignored with a
//! warning, and failing to write it never fails a run.
//!
//! Location: `--rates FILE`, else `$SSTCLIM_RATES`, else `$XDG_CACHE_HOME/sstclim/rates.json`,
//! else `$HOME/.cache/sstclim/rates.json`; `none` (flag or variable) turns it off.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::model::Rates;
use super::observed::Observed;

/// The environment variable naming the rates file.
pub const RATES_ENV: &str = "SSTCLIM_RATES";

/// The value of `--rates` or `$SSTCLIM_RATES` that turns the rates file off.
pub const OFF: &str = "none";

/// The format version written; files of other versions are ignored (and replaced).
const VERSION: u32 = 1;

/// Weight of all earlier runs against the newest one.
const DECAY: f64 = 0.5;

/// Entries kept (the least recently updated go first).
const MAX_ENTRIES: usize = 64;

/// A fitted line's intercept is trusted only where the observations' sizes spread this much
/// (coefficient of variation); otherwise all the time is taken as proportional.
const MIN_SPREAD: f64 = 0.2;

/// Nor where it exceeds this share of the mean observation: a "fixed" cost that large comes from
/// timing noise between runs (the 2-core VM's run times vary by 40 %), and extrapolated over
/// many segments it would rule out every R but 1.
const MAX_FIXED_SHARE: f64 = 0.25;

/// A failure with the rates file (reported as a warning, never failing a run).
#[derive(Debug, thiserror::Error)]
pub enum RatesError {
    #[error("cannot read the rates file {}: {cause}", path.display())]
    Read { path: PathBuf, cause: std::io::Error },
    #[error("ignoring the rates file {}: not a rates file ({cause})", path.display())]
    Parse { path: PathBuf, cause: serde_json::Error },
    #[error("ignoring the rates file {}: format version {found}, this sstclim writes {VERSION}", path.display())]
    Version { path: PathBuf, found: u32 },
    #[error("cannot write the rates file {}: {cause}", path.display())]
    Write { path: PathBuf, cause: std::io::Error },
}

/// Where the rates file is, from `--rates` and the environment (`None`: off).
pub fn resolve(flag: Option<&str>, env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let given = flag.map(OsString::from).or_else(|| env(RATES_ENV)).filter(|v| !v.is_empty());
    if let Some(v) = given {
        return (v != OFF).then(|| PathBuf::from(v));
    }
    let cache = env("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("sstclim").join("rates.json"))
}

/// What makes measurements comparable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatesKey {
    /// `engine.name()`.
    pub engine: String,
    /// `engine.describe()`: `cpu`, `CUDA device 0 (NVIDIA H200)`.
    pub device: String,
    /// Pool element type.
    pub pool: String,
    pub threads: usize,
    /// `host` or `device` (a device-resident pool).
    pub pool_location: String,
    /// `direct`, `library` or `forked`.
    pub reads: String,
}

/// Exponentially decayed sums of weighted observations (x, y), for a least-squares line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub w: f64,
    pub x: f64,
    pub y: f64,
    pub xx: f64,
    pub xy: f64,
}

impl Fit {
    fn add(&mut self, x: f64, y: f64, w: f64) {
        self.w += w;
        self.x += w * x;
        self.y += w * y;
        self.xx += w * x * x;
        self.xy += w * x * y;
    }

    fn decay(&mut self, f: f64) {
        for v in [&mut self.w, &mut self.x, &mut self.y, &mut self.xx, &mut self.xy] {
            *v *= f;
        }
    }

    fn valid(&self) -> bool {
        [self.w, self.x, self.y, self.xx, self.xy].iter().all(|v| v.is_finite() && *v >= 0.0)
            && self.w > 0.0
            && self.x > 0.0
            && self.y > 0.0
    }

    /// y per x over everything observed (`None` without observations).
    pub fn ratio(&self) -> Option<f64> {
        self.valid().then(|| self.y / self.x)
    }

    /// y = slope · x + intercept: least squares where the sizes x spread enough to tell a
    /// fixed cost from a proportional one and both come out non-negative, else through the
    /// origin (slope = Σy / Σx).
    pub fn line(&self) -> Option<(f64, f64)> {
        let ratio = self.ratio()?;
        let (mx, my) = (self.x / self.w, self.y / self.w);
        let var = self.xx / self.w - mx * mx;
        let cov = self.xy / self.w - mx * my;
        if var > (MIN_SPREAD * mx).powi(2) {
            let slope = cov / var;
            let intercept = my - slope * mx;
            if slope > 0.0 && intercept >= 0.0 && intercept <= MAX_FIXED_SHARE * my {
                return Some((slope, intercept));
            }
        }
        Some((ratio, 0.0))
    }
}

/// One key's measurements. The named rates are fitted from the sums after every run (and
/// fitted again when read: the sums are what counts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub key: RatesKey,
    pub runs: u64,
    /// When it was last updated (UTC), and the same in seconds since 1970.
    pub updated: String,
    pub updated_unix: u64,
    pub read_bytes_per_second: f64,
    pub compute_seconds_per_cell_sample: f64,
    pub compute_seconds_per_segment: f64,
    pub write_bytes_per_second: f64,
    pub write_seconds_per_segment: f64,
    /// Share of the reader threads' time on a processor (1 where never measured).
    #[serde(default = "one")]
    pub read_cpu_share: f64,
    pub read: Fit,
    /// (wall seconds, processor seconds) of the reader threads; absent in older files.
    #[serde(default)]
    pub read_cpu: Fit,
    pub compute: Fit,
    pub write: Fit,
}

fn one() -> f64 {
    1.0
}

impl Entry {
    /// The rates its sums give (`None` where they are incomplete or not positive).
    pub fn rates(&self) -> Option<Rates> {
        let read = self.read.ratio()?; // seconds per byte
        let (compute, compute_fixed) = self.compute.line()?;
        let (write, write_fixed) = self.write.line()?;
        let rates = Rates {
            read_bytes_per_s: 1.0 / read,
            compute_s_per_sample: compute,
            compute_s_per_segment: compute_fixed,
            write_bytes_per_s: 1.0 / write,
            write_s_per_segment: write_fixed,
            read_cpu_share: self.read_cpu.ratio().map_or(1.0, |r| r.clamp(0.0, 1.0)),
        };
        rates.usable().then_some(rates)
    }

    fn refresh(&mut self) {
        let r = self.rates();
        self.read_bytes_per_second = r.map_or(0.0, |r| r.read_bytes_per_s);
        self.compute_seconds_per_cell_sample = r.map_or(0.0, |r| r.compute_s_per_sample);
        self.compute_seconds_per_segment = r.map_or(0.0, |r| r.compute_s_per_segment);
        self.write_bytes_per_second = r.map_or(0.0, |r| r.write_bytes_per_s);
        self.write_seconds_per_segment = r.map_or(0.0, |r| r.write_s_per_segment);
        self.read_cpu_share = r.map_or(1.0, |r| r.read_cpu_share);
    }
}

/// The rates file's contents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatesFile {
    pub version: u32,
    pub entries: Vec<Entry>,
}

impl Default for RatesFile {
    fn default() -> Self {
        RatesFile { version: VERSION, entries: Vec::new() }
    }
}

impl RatesFile {
    /// The file at `path`; a file that does not exist is empty.
    pub fn load(path: &Path) -> Result<RatesFile, RatesError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RatesFile::default()),
            Err(cause) => return Err(RatesError::Read { path: path.into(), cause }),
        };
        let file: RatesFile =
            serde_json::from_str(&text).map_err(|cause| RatesError::Parse { path: path.into(), cause })?;
        if file.version != VERSION {
            return Err(RatesError::Version { path: path.into(), found: file.version });
        }
        Ok(file)
    }

    /// The rates of the first of `keys` that has usable ones.
    pub fn rates(&self, keys: &[RatesKey]) -> Option<(Rates, &Entry)> {
        keys.iter().find_map(|k| self.entries.iter().find(|e| &e.key == k).and_then(|e| Some((e.rates()?, e))))
    }

    /// Add one run's observations under `key` (each run weighs 1 in all, earlier runs decay by
    /// half); returns false (and changes nothing) where a stage has no observation.
    pub fn record(&mut self, key: &RatesKey, observed: &Observed, now: (String, u64)) -> bool {
        if !observed.is_complete() {
            return false;
        }
        let i = match self.entries.iter().position(|e| &e.key == key) {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    key: key.clone(),
                    runs: 0,
                    updated: String::new(),
                    updated_unix: 0,
                    read_bytes_per_second: 0.0,
                    compute_seconds_per_cell_sample: 0.0,
                    compute_seconds_per_segment: 0.0,
                    write_bytes_per_second: 0.0,
                    write_seconds_per_segment: 0.0,
                    read_cpu_share: 1.0,
                    read: Fit::default(),
                    read_cpu: Fit::default(),
                    compute: Fit::default(),
                    write: Fit::default(),
                });
                self.entries.len() - 1
            }
        };
        let e = &mut self.entries[i];
        // the reader threads' processor time is measured on the direct path only: without it
        // the history stands
        for (fit, obs) in [
            (&mut e.read, &observed.read),
            (&mut e.compute, &observed.compute),
            (&mut e.write, &observed.write),
            (&mut e.read_cpu, &observed.read_cpu),
        ] {
            if obs.is_empty() {
                continue;
            }
            if !fit.valid() {
                *fit = Fit::default(); // a corrupt or empty history starts over
            }
            fit.decay(DECAY);
            let w = 1.0 / obs.len() as f64;
            for &(x, y) in obs {
                fit.add(x, y, w);
            }
        }
        e.runs += 1;
        (e.updated, e.updated_unix) = now;
        e.refresh();
        if self.entries.len() > MAX_ENTRIES {
            self.entries.sort_by_key(|e| std::cmp::Reverse(e.updated_unix));
            self.entries.truncate(MAX_ENTRIES);
        }
        true
    }

    /// Write the file atomically: a temporary file beside it, renamed over it.
    pub fn store(&self, path: &Path) -> Result<(), RatesError> {
        let err = |cause| RatesError::Write { path: path.into(), cause };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(err)?;
        let text = serde_json::to_string_pretty(self).map_err(|e| err(std::io::Error::other(e)))? + "\n";
        let name = path.file_name().map_or("rates.json".into(), |n| n.to_string_lossy().into_owned());
        // unique among processes (pid) and among threads of one process (count)
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{count}.tmp", std::process::id()));
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(err)
    }
}

/// Now, as written into entries.
pub fn now() -> (String, u64) {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    (crate::output::utc_timestamp(), secs)
}

/// A CPU machine's key for the tests of the rates file and of what is recorded in it.
#[cfg(test)]
pub(crate) fn test_key(engine: &str, threads: usize) -> RatesKey {
    RatesKey {
        engine: engine.into(),
        device: "cpu".into(),
        pool: "f64".into(),
        threads,
        pool_location: "host".into(),
        reads: "direct".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::test_key as key;
    use super::*;

    /// A run reading 1000 bytes in 2 s, computing two segments of 100 and 300 (cells x
    /// samples) in 1 s and 3 s, writing two of 50 bytes in 0.5 s each.
    fn observed(scale: f64) -> Observed {
        Observed {
            read: vec![(1000.0, 2.0 * scale)],
            read_cpu: Vec::new(),
            compute: vec![(100.0, 1.0 * scale), (300.0, 3.0 * scale)],
            write: vec![(50.0, 0.5 * scale), (50.0, 0.5 * scale)],
        }
    }

    #[test]
    fn the_location_follows_flag_environment_and_cache() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
        };
        let all = env(&[("SSTCLIM_RATES", "/e/r.json"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(resolve(Some("/f.json"), all), Some(PathBuf::from("/f.json")));
        assert_eq!(resolve(None, all), Some(PathBuf::from("/e/r.json")));
        assert_eq!(resolve(Some("none"), all), None);
        assert_eq!(resolve(None, env(&[("SSTCLIM_RATES", "none"), ("HOME", "/h")])), None);
        // the flag wins over the variable, even to turn it on
        let off = env(&[("SSTCLIM_RATES", "none")]);
        assert_eq!(resolve(Some("/f.json"), off), Some(PathBuf::from("/f.json")));
        let cache = Some(PathBuf::from("/x/sstclim/rates.json"));
        assert_eq!(resolve(None, env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])), cache);
        let home = Some(PathBuf::from("/h/.cache/sstclim/rates.json"));
        assert_eq!(resolve(None, env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])), home);
        assert_eq!(resolve(None, env(&[])), None);
    }

    #[test]
    fn fits_tell_fixed_from_proportional_costs_only_with_spread() {
        let mut f = Fit::default();
        // y = 2x + 5 at x = 10, 30
        f.add(10.0, 25.0, 0.5);
        f.add(30.0, 65.0, 0.5);
        let (slope, intercept) = f.line().unwrap();
        assert!((slope - 2.0).abs() < 1e-9 && (intercept - 5.0).abs() < 1e-9, "{slope} {intercept}");
        assert!((f.ratio().unwrap() - 90.0 / 40.0).abs() < 1e-12);
        // sizes within 5%: all proportional
        let mut g = Fit::default();
        g.add(100.0, 10.0, 0.5);
        g.add(105.0, 12.0, 0.5);
        assert_eq!(g.line(), Some((22.0 / 205.0, 0.0)));
        // a negative intercept is not believed either
        let mut h = Fit::default();
        h.add(10.0, 1.0, 0.5);
        h.add(30.0, 10.0, 0.5);
        assert_eq!(h.line(), Some((11.0 / 40.0, 0.0)));
        // nor one that is most of the time: noise (3.3 s for a whole job, 2.5 s for half of it)
        let mut n = Fit::default();
        n.add(100.0, 3.3, 0.5);
        n.add(55.0, 2.5, 0.5);
        assert_eq!(n.line(), Some((5.8 / 155.0, 0.0)));
        assert_eq!(Fit::default().line(), None);
    }

    #[test]
    fn a_rates_file_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("rates.json");
        let mut file = RatesFile::default();
        assert!(file.record(&key("cpu", 2), &observed(1.0), ("2026-01-01T00:00:00Z".into(), 7)));
        file.store(&path).unwrap();
        let back = RatesFile::load(&path).unwrap();
        assert_eq!(back, file);
        let (r, e) = back.rates(&[key("cpu", 2)]).unwrap();
        assert_eq!((e.runs, e.updated_unix), (1, 7));
        assert!((r.read_bytes_per_s - 500.0).abs() < 1e-9);
        // compute: 1 s at 100, 3 s at 300: 0.01 s each, nothing fixed
        assert!((r.compute_s_per_sample - 0.01).abs() < 1e-12 && r.compute_s_per_segment.abs() < 1e-12, "{r:?}");
        assert!((r.write_bytes_per_s - 100.0).abs() < 1e-9 && r.write_s_per_segment == 0.0, "{r:?}");
        assert_eq!(e.read_bytes_per_second, r.read_bytes_per_s);
        // a missing file is empty; no entry, no rates
        let none = RatesFile::load(&dir.path().join("absent.json")).unwrap();
        assert!(none.entries.is_empty() && none.rates(&[key("cpu", 2)]).is_none());
    }

    #[test]
    fn repeated_runs_are_smoothed() {
        let mut file = RatesFile::default();
        file.record(&key("cpu", 2), &observed(1.0), now());
        // a second run twice as slow: the newest weighs as much as all before it
        file.record(&key("cpu", 2), &observed(2.0), now());
        let (r, e) = file.rates(&[key("cpu", 2)]).unwrap();
        assert_eq!(e.runs, 2);
        // read seconds per byte: (0.5 * 2 + 4) / (0.5 * 1000 + 1000) = 5 / 1500
        assert!((r.read_bytes_per_s - 300.0).abs() < 1e-9, "{r:?}");
        // compute: 0.01 s a unit weighted 1/2, 0.02 weighted 1
        assert!((r.compute_s_per_sample - 1.0 / 60.0).abs() < 1e-12, "{r:?}");
        file.record(&key("cpu", 2), &observed(2.0), now());
        let (r, _) = file.rates(&[key("cpu", 2)]).unwrap();
        // (0.25 * 2 + 0.5 * 4 + 4) / (0.25 * 1000 + 0.5 * 1000 + 1000) = 6.5 / 1750
        assert!((r.read_bytes_per_s - 1750.0 / 6.5).abs() < 1e-9, "{r:?}");
        // an incomplete run records nothing
        let partial = Observed { write: Vec::new(), ..observed(1.0) };
        assert!(!file.record(&key("cpu", 2), &partial, now()));
        assert_eq!(file.entries[0].runs, 3);
    }

    #[test]
    fn keys_keep_measurements_apart() {
        let mut file = RatesFile::default();
        file.record(&key("cpu", 2), &observed(1.0), now());
        file.record(&key("cpu", 4), &observed(4.0), now());
        assert_eq!(file.entries.len(), 2);
        let two = file.rates(&[key("cpu", 2)]).unwrap().0;
        let four = file.rates(&[key("cpu", 4)]).unwrap().0;
        assert!((two.read_bytes_per_s - 500.0).abs() < 1e-9 && (four.read_bytes_per_s - 125.0).abs() < 1e-9);
        assert!(file.rates(&[key("reference", 2)]).is_none());
        let other_location = RatesKey { pool_location: "device".into(), ..key("cpu", 2) };
        assert!(file.rates(std::slice::from_ref(&other_location)).is_none());
        // the first key with rates wins
        assert_eq!(file.rates(&[other_location, key("cpu", 4)]).unwrap().0, four);
    }

    #[test]
    fn a_corrupt_file_is_an_error_to_warn_about_and_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rates.json");
        std::fs::write(&path, "{ not json").unwrap();
        let e = RatesFile::load(&path).unwrap_err();
        assert!(matches!(e, RatesError::Parse { .. }) && e.to_string().contains("rates.json"), "{e}");
        std::fs::write(&path, r#"{"version": 99, "entries": []}"#).unwrap();
        assert!(matches!(RatesFile::load(&path), Err(RatesError::Version { found: 99, .. })));
        // a directory where the file should be: unreadable
        let d = dir.path().join("dir.json");
        std::fs::create_dir(&d).unwrap();
        assert!(matches!(RatesFile::load(&d), Err(RatesError::Read { .. })));
        // a history with poisoned sums starts over
        let mut file = RatesFile::default();
        file.record(&key("cpu", 2), &observed(1.0), now());
        file.entries[0].read.y = f64::NAN;
        assert!(file.rates(&[key("cpu", 2)]).is_none());
        file.record(&key("cpu", 2), &observed(1.0), now());
        assert!((file.rates(&[key("cpu", 2)]).unwrap().0.read_bytes_per_s - 500.0).abs() < 1e-9);
    }

    #[test]
    fn writes_are_atomic_renames() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rates.json");
        let mut file = RatesFile::default();
        file.record(&key("cpu", 2), &observed(1.0), now());
        // writers at once: every file seen is whole, no temporary file is left
        std::thread::scope(|s| {
            for i in 0..4 {
                let (file, path) = (&file, &path);
                s.spawn(move || {
                    for _ in 0..20 {
                        let mut mine = file.clone();
                        mine.record(&key("cpu", 3 + i), &observed(1.0), now());
                        mine.store(path).unwrap();
                        let read = RatesFile::load(path).unwrap();
                        assert_eq!(read.entries.len(), 2);
                    }
                });
            }
        });
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["rates.json"]);
        // an unwritable place is an error, not a panic
        let blocked = dir.path().join("rates.json").join("inside.json");
        assert!(matches!(file.store(&blocked), Err(RatesError::Write { .. })));
    }
}
