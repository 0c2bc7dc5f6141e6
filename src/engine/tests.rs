//! Every engine against the reference on the same seeded inputs (Ginkgo's IsEquivalentToRef),
//! plus hand-worked values so the reference itself is checked.

use super::*;
use crate::calendar::Calendar;
use crate::pool::Pool;
use crate::stats::percentile::Method;
use crate::util::rng::SplitMix64;
use crate::window::{WindowPlan, WindowSpec};

fn stats(pcts: &[&str], method: u8, min_samples: usize) -> StatSpec {
    StatSpec {
        percentiles: pcts.iter().map(|p| p.parse().unwrap()).collect(),
        method: Method::new(method).unwrap(),
        min_samples,
    }
}

/// Compute into a poisoned result, so an engine that leaves any value unwritten fails.
fn run(engine: &dyn Engine, pool: PoolRef<'_>, plan: &WindowPlan, stats: &StatSpec) -> TileResult {
    let mut out = TileResult::new(stats.n_stats(), plan.targets.len(), pool.n_cells());
    out.values.fill(-98765.0);
    out.counts.fill(u32::MAX);
    engine.compute(pool, plan, stats, &mut out).unwrap();
    out
}

/// Random samples with ties (values on a 0.1 grid, so sums depend on their order), missing
/// values, and cells that are
/// entirely missing or have only 1-3 valid samples per window.
fn random_values(plan: &WindowPlan, n_cells: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    let n_slots = plan.slots.len();
    let mut values = vec![f64::NAN; n_slots * n_cells];
    for cell in 0..n_cells {
        // cell kinds: 0 all missing, 1..=3 about that many valid samples per window, others
        // dense with some gaps
        let kind = cell % 9;
        let keep = match kind {
            0..=3 => kind as f64 / plan.max_capacity() as f64,
            _ => 0.85,
        };
        let level = rng.below(40) as f64;
        for slot in 0..n_slots {
            if rng.next_f64() < keep {
                values[slot * n_cells + cell] = level + (rng.below(24) as f64) * 0.1 - 3.0;
            }
        }
    }
    values
}

/// GPU engine configurations every test body runs on: the default, the ring in shared memory
/// (where the test sizes fit it: NVIDIA's opt-in shared memory) and in device memory, searches
/// without hints, and a device memory budget small enough to force chunks of cells and batches
/// of days.
fn gpu_variants(backend: Backend) -> Vec<(&'static str, GpuOptions)> {
    let d = GpuOptions::default();
    let mut v = vec![
        ("default", d.clone()),
        ("global-ring", GpuOptions { ring: RingPlace::Global, ..d.clone() }),
        ("no-hints", GpuOptions { hints: false, ..d.clone() }),
        ("small-memory", GpuOptions { max_device_mem: Some(1_500_000), block: Some(64), ..d.clone() }),
    ];
    if backend == Backend::Cuda {
        v.push(("shared-ring", GpuOptions { ring: RingPlace::Shared, ..d.clone() }));
        // the CUDA backend compiles the kernel for its launch constants unless told not to
        v.push(("generic-kernel", GpuOptions { specialize: !d.specialize, ..d }));
    }
    v
}

/// The engines a test of `backend` runs on: the host engine, or the GPU engine in each
/// configuration of [`gpu_variants`] (the backend started once already: see
/// [`crate::test_each_backend!`]).
fn engines(backend: Backend) -> Vec<(String, Box<dyn Engine>)> {
    let variants = match backend {
        Backend::Cuda | Backend::Hip => gpu_variants(backend),
        _ => vec![("", GpuOptions::default())],
    };
    variants
        .into_iter()
        .map(|(label, opts)| {
            let engine = backend.engine(0, &opts).unwrap_or_else(|e| panic!("{backend:?}/{label}: {e}"));
            (format!("{backend:?}/{label}"), engine as Box<dyn Engine>)
        })
        .collect()
}

/// The same body for every engine, one test per backend (candle's test_device!): the test
/// `$name::cpu` runs `$body(engine)` on the CPU engine, `$name::cuda` on the CUDA engine in every
/// configuration, and so on.
macro_rules! test_every_engine {
    ($name:ident, $body:expr) => {
        crate::test_each_backend!($name, [cpu, reference, cuda, hip], |backend: Backend| {
            for (label, engine) in engines(backend) {
                eprintln!("{}: {label}", stringify!($name));
                ($body)(engine.as_ref());
            }
        });
    };
}

fn assert_equivalent_to_reference(engine: &dyn Engine, spec: &WindowSpec, n_cells: usize, st: &StatSpec, seed: u64) {
    let plan = WindowPlan::build(spec, |d| (d.ordinal() * 7 + d.year as u16) % 23 != 0);
    let values = random_values(&plan, n_cells, seed);
    let pool = Pool::<f64>::from_values(plan.slots.len(), n_cells, &values).unwrap();
    let want = run(&ReferenceEngine, PoolRef::F64(pool.view()), &plan, st);
    let got = run(engine, PoolRef::F64(pool.view()), &plan, st);
    assert_eq!(got.count_differences(&want), 0, "{} differs from reference (f64 pool)", engine.name());
    let pool32 = Pool::<f32>::from_values(plan.slots.len(), n_cells, &values).unwrap();
    let want = run(&ReferenceEngine, PoolRef::F32(pool32.view()), &plan, st);
    let got = run(engine, PoolRef::F32(pool32.view()), &plan, st);
    assert_eq!(got.count_differences(&want), 0, "{} differs from reference (f32 pool)", engine.name());
    // the inputs really do cover empty and tiny windows
    let mut seen = [false; 4];
    for &c in &want.counts {
        if (c as usize) < 4 {
            seen[c as usize] = true;
        }
    }
    assert!(seen.iter().all(|&s| s), "random input must produce N = 0, 1, 2 and 3: {seen:?}");
}

test_every_engine!(equivalent_on_reference_like_job, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 1991..=2020, doys: (152..=170).collect(), half_window: 5, calendar: Calendar::Ordinal };
    for method in [5, 7] {
        assert_equivalent_to_reference(engine, &spec, 101, &stats(&["90"], method, 1), 1);
    }
});

test_every_engine!(equivalent_for_every_method_and_several_percentiles, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 2000..=2007, doys: (58..=64).collect(), half_window: 3, calendar: Calendar::Hobday366 };
    for method in 1..=9 {
        let st = stats(&["0", "10", "50", "90", "97.5", "100"], method, 1);
        assert_equivalent_to_reference(engine, &spec, 67, &st, u64::from(method));
    }
});

test_every_engine!(equivalent_across_year_boundaries_and_min_samples, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 2001..=2004, doys: vec![1, 2, 364, 365, 366], half_window: 4, calendar: Calendar::Ordinal };
    assert_equivalent_to_reference(engine, &spec, 45, &stats(&["90", "5"], 8, 3), 7);
});

test_every_engine!(equivalent_with_mean_only_and_wide_window, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 1990..=1992, doys: (100..=102).collect(), half_window: 15, calendar: Calendar::Ordinal };
    assert_equivalent_to_reference(engine, &spec, 33, &stats(&[], 5, 1), 11);
    assert_equivalent_to_reference(engine, &spec, 33, &stats(&["50"], 6, 1), 12);
});

// More years than the GPU kernel's register sort holds (32): the in-place sort path.
test_every_engine!(equivalent_with_41_years, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 1950..=1990, doys: (200..=209).collect(), half_window: 2, calendar: Calendar::Ordinal };
    assert_equivalent_to_reference(engine, &spec, 70, &stats(&["90", "2.5"], 5, 1), 13);
});

// A grid that fills no block evenly, large enough for several chunks under a small budget.
test_every_engine!(equivalent_on_an_odd_grid_of_1037_cells, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 2001..=2020, doys: (150..=175).collect(), half_window: 5, calendar: Calendar::Ordinal };
    assert_equivalent_to_reference(engine, &spec, 1037, &stats(&["90"], 5, 1), 17);
});

// An int16 pool (packed integers plus a decoding table, some integers decoding as missing)
// equals the reference on that pool and, being exact, the float64 pool of the decoded values.
// Values at the edges of the key order: signed zeros, infinities and NaNs with other payloads
// (missing, like NaN), the largest finite and subnormal values of both pool types, often
// enough that order statistics land on them.
test_every_engine!(equivalent_with_special_values, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 1991..=2020, doys: (152..=158).collect(), half_window: 5, calendar: Calendar::Ordinal };
    let plan = WindowPlan::build(&spec, |_| true);
    let n_cells = 45;
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::from_bits(0xfff8_0000_0000_0000),
        f64::from(f32::MAX),
        -f64::from(f32::MAX),
        f64::MAX,
        -f64::MAX,
        1e-40,
        -1e-40,
        5e-324,
        -5e-324,
    ];
    let mut rng = SplitMix64::new(41);
    let values: Vec<f64> = random_values(&plan, n_cells, 43)
        .into_iter()
        .map(|v| if !v.is_nan() && rng.below(3) == 0 { specials[rng.below(specials.len() as u64) as usize] } else { v })
        .collect();
    let st = stats(&["0", "10", "50", "90", "100"], 5, 1);
    let pool = Pool::<f64>::from_values(plan.slots.len(), n_cells, &values).unwrap();
    let want = run(&ReferenceEngine, PoolRef::F64(pool.view()), &plan, &st);
    let got = run(engine, PoolRef::F64(pool.view()), &plan, &st);
    assert_eq!(got.count_differences(&want), 0, "{} with special values (f64 pool)", engine.name());
    // the extremes are really selected: the 0th and 100th percentiles reach +-f64::MAX
    assert!(want.values.contains(&f64::MAX) && want.values.contains(&-f64::MAX), "extremes selected");
    let pool32 = Pool::<f32>::from_values(plan.slots.len(), n_cells, &values).unwrap();
    let want = run(&ReferenceEngine, PoolRef::F32(pool32.view()), &plan, &st);
    let got = run(engine, PoolRef::F32(pool32.view()), &plan, &st);
    assert_eq!(got.count_differences(&want), 0, "{} with special values (f32 pool)", engine.name());
    assert!(want.values.contains(&f64::from(f32::MAX)), "f32::MAX selected");
});

// Tables of both kinds: OSTIA-like (a positive scale keeps the integers' order: GPU engines
// sort the integers themselves) and reversed (a negative scale: they sort decoded values),
// each with a valid range that leaves holes among the integers.
test_every_engine!(equivalent_on_an_int16_pool, |engine: &dyn Engine| {
    let spec =
        WindowSpec { years: 1991..=2020, doys: (152..=160).collect(), half_window: 5, calendar: Calendar::Ordinal };
    let plan = WindowPlan::build(&spec, |_| true);
    let n_cells = 77;
    let ostia = crate::pool::int16_decoding(|raw| if raw == -32768.0 { f64::NAN } else { raw * 0.01 + 273.15 });
    let reversed =
        crate::pool::int16_decoding(|raw| if raw == -32768.0 || raw > 9000.0 { f64::NAN } else { raw * -0.01 + 300.0 });
    assert!(super::gpu::ordered::table_is_ordered(&ostia) && !super::gpu::ordered::table_is_ordered(&reversed));
    let mut rng = SplitMix64::new(23);
    let values: Vec<f64> = random_values(&plan, n_cells, 29)
        .into_iter()
        .map(|v| if v.is_nan() { -32768.0 } else { (v * 10.0).round() * 7.0 + f64::from(rng.below(3) as u16) })
        .collect();
    for (name, decoding) in [("ordered", ostia), ("reversed", reversed)] {
        let mut pool = Pool::<i16>::from_values(plan.slots.len(), n_cells, &values).unwrap();
        pool.set_decoding(Some(decoding.clone()));
        let decoded: Vec<f64> = pool.as_slice().iter().map(|&r| decoding[(i32::from(r) + 32768) as usize]).collect();
        let pool64 = Pool::<f64>::from_values(plan.slots.len(), n_cells, &decoded).unwrap();
        for st in [stats(&["90"], 5, 1), stats(&["10", "50", "99"], 7, 2)] {
            let want = run(&ReferenceEngine, PoolRef::F64(pool64.view()), &plan, &st);
            assert_eq!(run(&ReferenceEngine, PoolRef::I16(pool.view()), &plan, &st).count_differences(&want), 0);
            let got = run(engine, PoolRef::I16(pool.view()), &plan, &st);
            assert_eq!(got.count_differences(&want), 0, "{} on an int16 pool, {name} table", engine.name());
            assert!(want.counts.contains(&0) && want.counts.iter().any(|&c| c >= 250), "empty and dense cells");
        }
    }
});

// One cell, two years, three-day windows, values worked by hand.
test_every_engine!(hand_worked_values, |engine: &dyn Engine| {
    let spec = WindowSpec { years: 2001..=2002, doys: vec![11, 12], half_window: 1, calendar: Calendar::Ordinal };
    let plan = WindowPlan::build(&spec, |_| true);
    // slots in [day][year] order: days 10..=13 of 2001 and 2002
    assert_eq!(plan.slots.len(), 8);
    let by_date = |ordinal: u16, year: i32| -> f64 {
        match (ordinal, year) {
            (10, 2001) => 1.0,
            (10, 2002) => 2.0,
            (11, 2001) => 3.0,
            (11, 2002) => f64::NAN,
            (12, 2001) => 10.0,
            (12, 2002) => 4.0,
            (13, 2001) => 4.0,
            _ => 6.0,
        }
    };
    let values: Vec<f64> = plan.slots.iter().map(|d| by_date(d.ordinal(), d.year)).collect();
    let pool = Pool::<f64>::from_values(plan.slots.len(), 1, &values).unwrap();
    let out = run(engine, PoolRef::F64(pool.view()), &plan, &stats(&["90", "50"], 5, 1));
    // day 11: {1, 2, 3, 10, 4} -> n 5, mean 4, sorted 1 2 3 4 10
    //   p90: r = 4.5 + 0.5 = 5 -> 10;  p50: r = 3 -> 3
    // day 12: {3, 10, 4, 4, 6} -> n 5, mean 27/5, sorted 3 4 4 6 10 -> p90 10, p50 4
    assert_eq!(out.counts, [5, 5]);
    assert_eq!(out.row(0, 0), [4.0]);
    assert_eq!(out.row(0, 1), [27.0 / 5.0]);
    assert_eq!(out.row(1, 0), [10.0]);
    assert_eq!(out.row(1, 1), [10.0]);
    assert_eq!(out.row(2, 0), [3.0]);
    assert_eq!(out.row(2, 1), [4.0]);
    // type 7: p90 of 1 2 3 4 10: r = 0.9*4 + 1 = 4.6 -> 4 + 0.6*6 = 7.6
    let out = run(engine, PoolRef::F64(pool.view()), &plan, &stats(&["90"], 7, 6));
    assert!(out.row(1, 0)[0].is_nan(), "min-samples 6 must fill a 5-sample window");
    let out = run(engine, PoolRef::F64(pool.view()), &plan, &stats(&["90"], 7, 1));
    assert!((out.row(1, 0)[0] - 7.6).abs() < 1e-12);
});
