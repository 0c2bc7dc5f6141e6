//! `bench-detect`: event detection alone (`events::scan::detect_band`) on a synthetic int16
//! band in memory, at any size, with no input files, so that the detection stage of a global
//! `events` job can be timed on a machine without its 11 GB dataset (the GPU node starts bare),
//! and so that layouts and chunk widths can be compared on the same band.
//!
//! The band is OISST-like: int16 values of 0.01 °C, fill -999 on land (a third of the cells),
//! a seasonal mean, thresholds 1 °C either side of it, and red noise (AR(1), lag-one
//! correlation 0.95, standard deviation 0.8 °C) around the mean, so that about a tenth of the
//! days exceed each threshold and events are as dense as in real series. Everything is seeded:
//! the same flags give the same band and the same events on every machine.

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use crate::calendar::Calendar;
use crate::events::codes::Codes;
use crate::events::scan::{detect_band, BandInput, Kind};
use crate::events::{Days, Params};

/// Flags of `bench-detect`.
#[derive(clap::Args, Debug)]
pub struct BenchDetectArgs {
    /// Cells of the band (a global 0.25° grid is 1038240).
    #[arg(long, default_value_t = 65160)]
    pub cells: usize,
    /// Years of daily values, from 1982.
    #[arg(long, default_value_t = 41)]
    pub years: usize,
    /// Heatwaves only (default: heatwaves and cold spells from one pass, as `--both`).
    #[arg(long)]
    pub heat_only: bool,
    /// The thresholds' distance from the mean, °C (the noise's standard deviation is 0.8 °C):
    /// larger gives fewer events, to time the scan apart from measuring events.
    #[arg(long, default_value_t = 1.0)]
    pub threshold_offset: f64,
    /// Threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Timed passes (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Write the result as JSON.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// What `bench-detect` measured.
#[derive(Debug, Serialize)]
pub struct DetectRecord {
    pub cells: usize,
    pub days: usize,
    pub kinds: usize,
    pub threads: usize,
    /// Seconds to make the band (not timed below).
    pub generate_seconds: f64,
    /// Every timed pass, and their median.
    pub seconds: Vec<f64>,
    pub median_seconds: f64,
    /// Nanoseconds of one thread per value and kind (median pass).
    pub thread_ns_per_value: f64,
    /// Events found per kind (the same in every pass, checked).
    pub events: Vec<usize>,
    /// A checksum of every event's cell, start and duration (equal across layouts and
    /// machines for the same flags).
    pub checksum: u64,
}

impl DetectRecord {
    pub fn table(&self) -> String {
        let passes: Vec<String> = self.seconds.iter().map(|s| format!("{s:.3}")).collect();
        format!(
            "cells {} x days {} x kinds {} ({:.2} G values), {} threads (band made in {:.2} s)\n\
             detect: {:.3} s median of [{}]; {:.2} thread-ns per value and kind\n\
             events {:?}, checksum {:016x}\n",
            self.cells,
            self.days,
            self.kinds,
            (self.cells * self.days) as f64 / 1e9,
            self.threads,
            self.generate_seconds,
            self.median_seconds,
            passes.join(", "),
            self.thread_ns_per_value,
            self.events,
            self.checksum,
        )
    }
}

/// A xorshift generator per cell (no crate, the same numbers everywhere).
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

const SCALE: f64 = 0.01;
/// Red noise: lag-one correlation, and the uniform step that gives it a standard deviation of
/// 0.8 °C (`0.8 * sqrt(1 - PHI^2) * sqrt(12)`), so that about a tenth of the days lie beyond
/// each threshold, in runs long enough for about one event a year, as in OISST's series.
const PHI: f64 = 0.98;
const STEP: f64 = 0.8 * 0.198_997_487_421_324 * 3.464_101_615_137_754_5;
const FILL: i16 = -999;

/// The band: values `[day][cell]` as stored, the mean and the two thresholds `[doy][cell]`.
struct Band {
    data: Vec<i16>,
    mean: Vec<f64>,
    p90: Vec<f64>,
    p10: Vec<f64>,
}

fn make_band(n_cells: usize, days: &Days, offset: f64) -> Band {
    let (n_days, n_doy) = (days.len(), 366);
    let land = |c: usize| c % 3 == 1;
    let season: Vec<f64> = (0..n_doy).map(|d| 4.0 * (d as f64 / 58.1).sin()).collect();
    let clim = |c: usize, d: usize| 15.0 + 8.0 * (c as f64 / n_cells as f64 - 0.5) + season[d];
    let doy_rows = |sign: f64| -> Vec<f64> {
        let mut v = vec![f64::NAN; n_doy * n_cells];
        v.par_chunks_mut(n_cells).enumerate().for_each(|(d, row)| {
            for (c, x) in row.iter_mut().enumerate() {
                if !land(c) {
                    *x = clim(c, d) + sign * (offset + 0.05 * ((c * 7 + d) % 5) as f64);
                }
            }
        });
        v
    };
    let (mean, p90, p10) = (doy_rows(0.0), doy_rows(1.0), doy_rows(-1.0));
    // each worker makes a block of cells' whole series (red noise is sequential in time) and
    // writes them into the day-major rows
    let mut data = vec![0i16; n_days * n_cells];
    let block = 1024;
    let ptr = data.as_mut_ptr() as usize;
    (0..n_cells.div_ceil(block)).into_par_iter().for_each(|b| {
        let cells = b * block..((b + 1) * block).min(n_cells);
        // each cell's own generator and noise, advanced a day at a time for the whole block,
        // so that the block's rows are written in pieces of contiguous cells
        let mut rngs: Vec<Rng> = cells
            .clone()
            .map(|c| Rng(0x9e37_79b9_7f4a_7c15 ^ (c as u64).wrapping_mul(0x2545_f491_4f6c_dd1d) | 1))
            .collect();
        let mut xs = vec![0.0f64; cells.len()];
        for i in 0..n_days {
            let d = usize::from(days.doy_index[i]);
            for (k, c) in cells.clone().enumerate() {
                xs[k] = PHI * xs[k] + STEP * (rngs[k].uniform() - 0.5);
                let v = if land(c) { FILL } else { ((clim(c, d) + xs[k]) / SCALE).round() as i16 };
                // SAFETY: cell `c` belongs to this worker's block alone, and `i * n_cells + c`
                // is inside `data` (`n_days * n_cells` values), which outlives the workers.
                unsafe { *(ptr as *mut i16).add(i * n_cells + c) = v };
            }
        }
    });
    Band { data, mean, p90, p10 }
}

/// Make the band, then time `detect_band` on it `repeats` times.
pub fn bench_detect(args: &BenchDetectArgs) -> Result<DetectRecord, super::BenchError> {
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| super::BenchError::Other { label: "threads".into(), cause: e.to_string() })?;
    let days = Days::of_years(1982..=1981 + args.years.max(1) as i32, Calendar::Hobday366);
    let t = Instant::now();
    let band = pool.install(|| make_band(args.cells, &days, args.threshold_offset));
    let generate_seconds = t.elapsed().as_secs_f64();
    let table: Vec<f64> = (0..65536)
        .map(|i: i32| if i - 32768 == i32::from(FILL) { f64::NAN } else { f64::from(i - 32768) * SCALE })
        .collect();
    let codes = Codes::of(&table).expect("a scale factor orders the values");
    let slot_of_day: Vec<Option<usize>> = (0..days.len()).map(Some).collect();
    let input = BandInput {
        data: &band.data,
        n_cells: args.cells,
        slot_of_day: &slot_of_day,
        days: &days,
        mean: &band.mean,
        codes: Some((&codes, &band.data)),
    };
    let heat = Params::default();
    let mut kinds = vec![Kind { params: heat, thresh: &band.p90 }];
    if !args.heat_only {
        kinds.push(Kind { params: Params { cold: true, ..heat }, thresh: &band.p10 });
    }
    let value = |v: i16| table[(i32::from(v) + 32768) as usize];
    let (mut seconds, mut first): (Vec<f64>, Option<(Vec<usize>, u64)>) = (Vec::new(), None);
    for _ in 0..args.repeats.max(1) {
        let t = Instant::now();
        let found = pool.install(|| detect_band(&input, value, &kinds, 0));
        seconds.push(t.elapsed().as_secs_f64());
        let counts: Vec<usize> = found.iter().map(|f| f.n_events()).collect();
        let mut sum = 0u64;
        for f in &found {
            for cols in &f.events {
                for (i, &c) in cols.cell.iter().enumerate() {
                    // cell, start, duration and intensity_max
                    let key = (c as u64) << 32 ^ (cols.ints[0][i] as u64) << 8 ^ cols.ints[3][i] as u64;
                    let key = key ^ cols.floats[0][i].to_bits().rotate_left(17);
                    sum = sum.wrapping_mul(0x100_0000_01b3).wrapping_add(key);
                }
            }
        }
        match &first {
            Some(f) if *f != (counts.clone(), sum) => {
                return Err(super::BenchError::Other { label: "detect".into(), cause: "passes differ".into() })
            }
            Some(_) => {}
            None => first = Some((counts, sum)),
        }
        drop(found);
    }
    let mut sorted = seconds.clone();
    sorted.sort_by(f64::total_cmp);
    let median_seconds = sorted[sorted.len() / 2];
    let (events, checksum) = first.expect("one pass at least");
    let values = (args.cells * days.len() * kinds.len()) as f64;
    let record = DetectRecord {
        cells: args.cells,
        days: days.len(),
        kinds: kinds.len(),
        threads,
        generate_seconds,
        seconds,
        median_seconds,
        thread_ns_per_value: median_seconds * threads as f64 / values * 1e9,
        events,
        checksum,
    };
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&record).expect("plain numbers");
        std::fs::write(path, text)
            .map_err(|e| super::BenchError::Other { label: path.display().to_string(), cause: e.to_string() })?;
    }
    Ok(record)
}
