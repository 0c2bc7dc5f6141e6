//! The output files a job plans, by layout.

use super::*;

#[test]
fn file_names_of_both_layouts() {
    let mut spec = OutputSpec {
        dir: PathBuf::from("out"),
        layout: OutputLayout::PerDoy,
        deflate: None,
        fill_value: f64::NAN,
        overwrite: false,
        write_path: WritePath::Auto,
        write_threads: None,
        format: OutputFormat::default(),
    };
    let names = vec!["mean".to_string(), "p90".to_string()];
    let files = plan_files(&spec, &names, &[152, 153]);
    let paths: Vec<String> = files.iter().map(|(p, _, _)| p.display().to_string()).collect();
    assert_eq!(paths, ["out/mean_doy152.nc", "out/mean_doy153.nc", "out/p90_doy152.nc", "out/p90_doy153.nc"]);
    spec.layout = OutputLayout::Stacked;
    let files = plan_files(&spec, &names, &[152, 153]);
    assert_eq!(files[1], (PathBuf::from("out/p90.nc"), 1, 0..2));
}

#[test]
fn timestamps_look_like_iso8601() {
    let t = utc_timestamp();
    assert_eq!(t.len(), 20);
    assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T');
}
