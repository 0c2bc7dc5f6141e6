//! The foundation's acceptance check at a realistic size: `sstclim run` on a generated
//! 360x181 x 30 years x 102 days dataset equals the reference engine bit for bit, for
//! Hyndman-Fan types 5 (MATLAB) and 7 (numpy). `--verify` runs the reference engine on every
//! tile's pool and fails on any differing bit; the written outputs of the two backends are also
//! compared file by file.

use crate::common::*;

#[test]
fn run_360x181_equals_reference_for_types_5_and_7() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "360x181", "--years", "1991-2020", "--doys", "147-248"]);
    for method in ["5", "7"] {
        let fast = dir.path().join(format!("cpu{method}"));
        let json = dir.path().join(format!("cpu{method}.json"));
        ok(&with(
            run_args(&data, &fast, "1991-2020", "152-243"),
            &["--method", method, "--verify", "--timing-json", &s(&json)],
        ));
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(report["verified"], true);
        assert_eq!(report["files_read"], 3060);
        assert_eq!(report["cells"], 360 * 181);
        assert_eq!(report["outputs"], 184);
    }
    // the two definitions really differ (by about 0.4 of an order-statistic gap)
    let c = bin().args(["compare", &s(&dir.path().join("cpu5")), &s(&dir.path().join("cpu7"))]).output().unwrap();
    assert_eq!(c.status.code(), Some(1));
    // and the reference backend's written files equal the cpu backend's for type 7
    let reference = dir.path().join("ref7");
    ok(&with(run_args(&data, &reference, "1991-2020", "152-243"), &["--method", "7", "--backend", "reference"]));
    let out = ok(&["compare", &s(&dir.path().join("cpu7")), &s(&reference)]);
    assert!(String::from_utf8(out.stdout).unwrap().contains("EQUAL"));
}
