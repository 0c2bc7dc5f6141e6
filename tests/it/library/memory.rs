//! The library API without files: sources in memory, results in memory, checked against the
//! reference engine, a naive computation, and (through `examples/library.rs`) the command line.

#[path = "../../../examples/library.rs"]
#[allow(dead_code)] // its `main` (the example's entry point)
mod example;

use std::path::Path;

use sstclim::{grid_1d, memory_source, CfCalendar, Climatology, Compute, Date, Events, Source};

/// `years` of daily values on a 3 x 4 grid: a seasonal cycle plus a cell-dependent offset and a
/// deterministic wiggle, int16-packed (scale 0.01) with a fill value on a few days of cell 5.
fn source(years: (i32, i32), dates_from: Option<Vec<Date>>) -> (Source, Vec<Date>, Vec<i16>) {
    let first = Date::new(years.0, 1, 1).unwrap();
    let n = (Date::new(years.1, 12, 31).unwrap().to_days() - first.to_days() + 1) as usize;
    let dates = dates_from.unwrap_or_else(|| (0..n as i64).map(|i| first.add_days(i)).collect());
    let mut values = Vec::new();
    for (t, d) in dates.iter().enumerate() {
        for c in 0..12 {
            let season = (f64::from(d.ordinal()) * 0.0172).sin() * 300.0;
            let wiggle = ((t * 7 + c * 13) % 23) as f64 * 9.0;
            let v = 1500.0 + 40.0 * c as f64 + season + wiggle;
            values.push(if c == 5 && t % 50 == 7 { -32768 } else { v as i16 });
        }
    }
    let grid = grid_1d(vec![-1.0, 0.0, 1.0], vec![10.0, 11.0, 12.0, 13.0]);
    let src = memory_source(
        "sst",
        values.clone(),
        dates.clone(),
        CfCalendar::Standard,
        grid,
        Some(-32768.0),
        (0.01, 0.0),
        None,
    )
    .expect("a valid memory source");
    (src, dates, values)
}

#[test]
fn a_memory_climatology_equals_the_reference_engine_and_a_naive_mean() {
    let (src, dates, values) = source((2001, 2003), None);
    let clim = Climatology::reference().baseline(2001..=2003).doys(vec![100, 200]).percentiles(&[50.0, 90.0]);
    let fast = clim.compute(&src, &Compute::cpu()).unwrap();
    let reference = clim.compute(&src, &Compute { backend: sstclim::Backend::Reference, ..Compute::cpu() }).unwrap();
    assert_eq!(fast.names, ["mean", "p50", "p90"]);
    assert_eq!(fast.doys, [100, 200]);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&fast.values), bits(&reference.values), "the fast CPU engine equals the reference");
    // day 100's mean of cell 3: days 95-105 of every year (ordinal days, no leap year here)
    let window: Vec<f64> = dates
        .iter()
        .enumerate()
        .filter(|(_, d)| (95..=105).contains(&d.ordinal()))
        .map(|(t, _)| f64::from(values[t * 12 + 3]) * 0.01)
        .collect();
    assert_eq!(window.len(), 33);
    let naive = window.iter().sum::<f64>() / window.len() as f64;
    let mean = fast.day("mean", 100).unwrap()[3];
    assert!((mean - naive).abs() < 1e-12, "mean {mean}, naive {naive}");
    // the fill value is missing, not a temperature: cell 5's windows lose those days only
    assert!(fast.day("mean", 100).unwrap()[5] > 10.0);
}

#[test]
fn a_memory_source_is_checked_before_a_job() {
    let grid = || grid_1d(vec![0.0, 1.0], vec![0.0]);
    let d = |day| Date::new(2001, 1, day).unwrap();
    let e = memory_source("x", vec![1.0f32; 3], vec![d(1), d(2)], CfCalendar::Standard, grid(), None, (1.0, 0.0), None)
        .unwrap_err();
    assert_eq!(e.to_string(), "memory source 'x': 3 values are not 2 steps of 2 x 1 cells");
    let e = memory_source("x", vec![1.0f32; 4], vec![d(2), d(1)], CfCalendar::Standard, grid(), None, (1.0, 0.0), None)
        .unwrap_err();
    assert!(e.to_string().contains("the dates must increase"), "{e}");
    // days the job needs that the series lacks: an error unless missing days are allowed
    let (src, _, _) = source((2001, 2002), None);
    let clim = Climatology::reference().baseline(2001..=2003).doys(vec![100]);
    let e = clim.compute(&src, &Compute::cpu()).unwrap_err();
    assert!(e.to_string().starts_with("memory source 'sst': "), "{e}");
    let allowed = clim.compute(&src, &Compute { allow_missing: true, ..Compute::cpu() }).unwrap();
    assert!(allowed.day("mean", 100).unwrap().iter().all(|v| v.is_finite()));
}

#[test]
fn memory_events_need_a_climatology_of_the_whole_year() {
    let (src, _, _) = source((2001, 2003), None);
    let part = Climatology::hobday().baseline(2001..=2003).doys((1..=200).collect());
    let c = part.compute(&src, &Compute::cpu()).unwrap();
    let e = Events::hobday().years(2001..=2003).detect(&src, &c, &Compute::cpu()).unwrap_err().to_string();
    assert!(e.contains("days of year; events need all 366 in order"), "{e}");
}

/// `examples/library.rs` computes a Hobday climatology and the heatwaves and cold spells of an
/// array in memory, runs `sstclim run` and `sstclim events` on the same values in a file, and
/// panics unless every value is equal bit for bit: its `check`, with the binary under test.
#[test]
fn the_library_example_equals_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let bin = std::env::var_os("SSTCLIM_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_sstclim").into());
    let (heatwaves, cold_spells, compared) = example::check(dir.path(), Path::new(&bin));
    assert!(heatwaves > 100 && cold_spells > 100, "{heatwaves} heatwaves, {cold_spells} cold spells");
    // every statistic of every day, and every field of every event and summary
    assert!(compared > 50_000, "{compared} values compared");
}
