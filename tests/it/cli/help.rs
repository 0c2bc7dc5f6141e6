//! Help for people: every flag of every subcommand sits under one of the five headings, the
//! short help of `run` fits a screen with the common flags, the long help keeps every flag
//! and its details, and defaults read as numbers people write.

use crate::common::*;
use clap::CommandFactory;
use sstclim::cli::{headings, Cli};

fn stdout(args: &[&str]) -> String {
    String::from_utf8(ok(args).stdout).unwrap()
}

/// Every flag (not the positional arguments) of every subcommand has one of the headings.
#[test]
fn every_flag_has_a_heading() {
    let cli = Cli::command();
    let mut checked = 0;
    let mut commands = vec![cli];
    while let Some(cmd) = commands.pop() {
        for arg in cmd.get_arguments().filter(|a| !a.is_positional()) {
            let heading = arg.get_help_heading();
            assert!(
                heading.is_some_and(|h| headings::ALL.contains(&h)),
                "{} --{}: heading {heading:?}",
                cmd.get_name(),
                arg.get_id()
            );
            checked += 1;
        }
        // headings come in the order of `headings::ALL` (job first, diagnostics last)
        let mut seen: Vec<usize> = Vec::new();
        for arg in cmd.get_arguments().filter(|a| !a.is_positional()) {
            let at = arg.get_help_heading().and_then(|h| headings::ALL.iter().position(|x| *x == h));
            if let Some(at) = at.filter(|at| !seen.contains(at)) {
                seen.push(at);
            }
        }
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{}: headings in order {seen:?}", cmd.get_name());
        // the benchmark subcommands (feature `bench`) are measuring tools, not the user's
        commands.extend(cmd.get_subcommands().filter(|c| !c.get_name().starts_with("bench")).cloned());
    }
    assert!(checked > 60, "{checked} flags checked");
}

#[test]
fn run_short_help_fits_a_screen_with_the_headings_in_order() {
    let short = stdout(&["run", "-h"]);
    let lines: Vec<&str> = short.lines().collect();
    assert!(lines.len() <= 45, "{} lines:\n{short}", lines.len());
    // a line a terminal of 120 columns shows whole
    assert!(lines.iter().all(|l| l.chars().count() <= 120), "{short}");
    let at = |h: &str| lines.iter().position(|l| *l == format!("{h}:")).unwrap_or_else(|| panic!("{h}:\n{short}"));
    let order: Vec<usize> = headings::ALL.iter().map(|h| at(h)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{short}");
    for common in
        ["--input", "--output", "--baseline", "--doys", "--percentile", "--backend", "--quicklook", "--progress"]
    {
        assert!(short.contains(common), "{common} in the short help:\n{short}");
    }
    // the rarely needed flags are in the long help only
    for rare in ["--segments", "--read-path", "--gpu-ring", "--rates", "--trace-json"] {
        assert!(!short.contains(rare), "{rare} in the short help");
    }
    assert!(short.contains("sstclim run --help"), "the short help says where the rest is");
    assert!(short.contains("[default: 9.96921e36]"), "{short}");
    assert!(!short.contains("9969209968386869"), "{short}");
}

#[test]
fn run_long_help_keeps_every_flag_and_its_details() {
    let long = stdout(&["run", "--help"]);
    let short = stdout(&["run", "-h"]);
    assert!(long.lines().count() > 2 * short.lines().count());
    for flag in ["--segments", "--read-path", "--gpu-ring", "--rates", "--trace-json", "--write-path", "--fill-value"] {
        assert!(long.contains(flag), "{flag}");
    }
    assert!(long.contains("9.969209968386869e36"), "the long help gives the exact fill value");
    assert!(long.contains("RUST_LOG"), "--quiet's details");
    for h in headings::ALL {
        assert!(long.lines().any(|l| l == format!("{h}:")), "{h}");
    }
}

/// Leaving out --fill-value gives NetCDF's float fill value exactly; giving it still works.
#[test]
fn the_fill_value_default_is_netcdfs() {
    let dir = tmp();
    let data = dir.path().join("data");
    generate(&data, &["--grid", "8x5", "--years", "2001-2002", "--doys", "100-104"]);
    let out = dir.path().join("out");
    ok(&with(run_args(&data, &out, "2001-2002", "101-103"), &["--half-window", "1"]));
    let file = netcdf::open(out.join("p90_doy102.nc")).unwrap();
    // `p90` or `sst_p90` (the outputs' names are being renamed to `{var}_{stat}`)
    let var = file.variables().find(|v| v.name().ends_with("p90")).unwrap();
    let fill = var.attribute_value("_FillValue").unwrap().unwrap();
    assert_eq!(fill, netcdf::AttributeValue::Double(9.969_209_968_386_869e36));
}
