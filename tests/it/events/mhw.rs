//! `sstclim::events` against marineHeatWaves itself: a few synthetic cells (heatwaves and cold
//! spells, with missing days) that scripts/events/mhw_fixture.py ran through marineHeatWaves'
//! `detect()` and `blockAverage()` (commit d7292bf, numpy 1.26). The climatology is the one
//! marineHeatWaves computed (stored per day of its 366-day year), so this tests detection and
//! the event and block statistics, field by field.

use crate::common::events::close;
use serde_json::Value;
use sstclim::calendar::Calendar;
use sstclim::events::summary::{block_average, STATS};
use sstclim::events::{detect_cell, CellClim, Days, Params, Scratch};

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect()
}

#[test]
fn cells_equal_marine_heat_waves_field_by_field() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/events/mhw_cells.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (y0, y1) = (fixture["first_year"].as_i64().unwrap() as i32, fixture["last_year"].as_i64().unwrap() as i32);
    let days = Days::of_years(y0..=y1, Calendar::Hobday366);
    let mut total = 0;
    for (k, cell) in fixture["cells"].as_array().unwrap().iter().enumerate() {
        let cold = cell["cold"].as_bool().unwrap();
        let temp = floats(&cell["temp"]);
        let (mean, thresh) = (floats(&cell["seas"]), floats(&cell["thresh"]));
        assert_eq!(temp.len(), days.len());
        let params = Params { cold, ..Params::default() };
        let mut got = Vec::new();
        detect_cell(
            &temp,
            &days,
            CellClim { mean: &mean, thresh: &thresh },
            &params,
            &mut Scratch::default(),
            &mut got,
        );
        let want = cell["events"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "cell {k}");
        total += got.len();
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let int = |name: &str| w[name].as_f64().unwrap() as i64;
            assert_eq!(
                (g.index_start as i64, g.index_end as i64, g.index_peak as i64),
                (int("index_start"), int("index_end"), int("index_peak")),
                "cell {k} event {i}"
            );
            let durations = [
                (g.duration, "duration"),
                (g.duration_moderate, "duration_moderate"),
                (g.duration_strong, "duration_strong"),
                (g.duration_severe, "duration_severe"),
                (g.duration_extreme, "duration_extreme"),
            ];
            for (d, name) in durations {
                assert_eq!(i64::from(d), int(name), "cell {k} event {i} {name}");
            }
            assert_eq!(i64::from(g.category), int("category"), "cell {k} event {i}");
            for (v, name) in g.floats().iter().zip(sstclim::events::metrics::FLOAT_FIELDS) {
                let theirs = w[name].as_f64().unwrap_or(f64::NAN);
                assert!(close(*v, theirs), "cell {k} event {i} {name}: {v} vs marineHeatWaves {theirs}");
            }
        }
        let ny = days.n_years;
        let mut block = vec![0.0; STATS.len() * ny];
        block_average(&got, &days, &mut block);
        for (s, name) in STATS.iter().enumerate() {
            let theirs = floats(&cell["block"][name]);
            for y in 0..ny {
                assert!(
                    close(block[s * ny + y], theirs[y]),
                    "cell {k} {name} year {}: {} vs marineHeatWaves {}",
                    y0 + y as i32,
                    block[s * ny + y],
                    theirs[y]
                );
            }
        }
    }
    assert!(total >= 80, "{total} events");
}
