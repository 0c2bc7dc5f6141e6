//! A full disk while writing outputs (a 2 MiB tmpfs, mounted where the test runs as root;
//! skipped, saying so, elsewhere): the uncompressed direct path, the compressed chunk path and
//! libnetcdf all fail with an error naming the file (and, on the direct paths, how many bytes
//! were not written), and nothing that looks finished is left in the output directory.

use std::path::Path;
use std::process::Command;

use crate::common;
use sstclim::input::Region;
use sstclim::output::{OutputFormat, OutputLayout, OutputMeta, OutputSet, OutputSpec, OutputType, WritePath};
use sstclim::stats::TileResult;

const NLAT: usize = 181;
const NLON: usize = 360;
const DOYS: [u16; 3] = [100, 101, 102];

fn meta() -> OutputMeta {
    common::output_meta(NLAT, NLON, &DOYS)
}

/// A small tmpfs at `dir`, unmounted on drop; None where mounting is not allowed.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Tmpfs(dir.into()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Values that deflate poorly (so that compressed outputs fill the disk too).
fn result(region: &Region) -> TileResult {
    let n = region.n_cells();
    let mut r = TileResult::new(2, DOYS.len(), n);
    for (k, v) in r.values.iter_mut().enumerate() {
        *v = (sstclim::util::rng::hash(&[k as u64]) % 1_000_000) as f64 / 997.0;
    }
    r
}

#[test]
fn a_full_disk_names_the_file_and_leaves_nothing_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&tmp.path().join("small")) else {
        eprintln!("SKIPPED: cannot mount a tmpfs here (not root)");
        return;
    };
    sstclim::input::silence_hdf5();
    let meta = meta();
    for (name, deflate, path, ty) in [
        ("direct", None, WritePath::Auto, OutputType::F64),
        ("chunks", Some(1), WritePath::Auto, OutputType::F64),
        ("library", None, WritePath::Library, OutputType::F64),
    ] {
        let dir = fs.0.join(name);
        sstclim::output::prepare_dir(&dir).unwrap();
        let spec = OutputSpec {
            dir: dir.clone(),
            layout: OutputLayout::Stacked,
            deflate,
            fill_value: -999.0,
            overwrite: false,
            write_path: path,
            write_threads: Some(2),
            format: OutputFormat { ty, ..OutputFormat::default() },
        };
        let region = Region { rows: 0..NLAT, cols: 0..NLON };
        let outcome = (|| {
            let mut set = OutputSet::plan(&spec, &meta)?;
            set.create_files(&spec, &meta)?;
            set.mark_created();
            set.write_targets(&region, 0..DOYS.len(), &result(&region))?;
            set.sync()?;
            set.finish()
        })();
        let err = outcome.expect_err("2 MiB cannot hold 3 MB of outputs").to_string();
        eprintln!("{name}: {err}");
        assert!(err.contains(".nc"), "{name}: the error names no file: {err}");
        if name != "library" {
            assert!(err.contains("bytes"), "{name}: the error says nothing of the missing bytes: {err}");
        }
        let left: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(left.is_empty(), "{name}: left behind after '{err}': {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
