//! Marine heatwaves and cold spells of every cell, as marineHeatWaves' `detect()` and
//! `blockAverage()` define them (Hobday et al. 2016; github.com/ecjoliver/marineHeatWaves).
//!
//! Why a stage of its own: the climatology stages compute the threshold for a day of year;
//! events need a cell's whole series at once (every day of every analysis year) and a
//! climatology for it, so they work on bands of cells instead of slices of days. This stage
//! takes a band's series and its climatology as plain arrays and knows nothing of how they were
//! read; the job (`crate::run_events`) reads them.
//!
//! The modules: [`detect`] (exceedances, runs, joining), [`metrics`] (the per-event fields),
//! [`summary`] (per-year block statistics), [`scan`] (every cell of a band at once, from its
//! day-major pool, for several kinds of event in one pass), [`gpu`] (the same on a GPU, bit for
//! bit), [`columns`] (events held field by field), [`files`] (events.nc and summary.nc),
//! [`band`] (cutting the grid within `--max-mem`).
//! The climatology file is read by `crate::input::climatology`.

pub mod band;
pub mod codes;
pub mod columns;
pub mod detect;
mod error;
pub mod files;
pub mod gpu;
pub mod metrics;
pub mod scan;
pub mod summary;

pub use detect::{detect_cell, Scratch};
pub use error::EventsError;
pub use metrics::Event;

/// Detection settings (marineHeatWaves' `minDuration`, `maxGap`, `coldSpells`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Runs of exceeding days shorter than this are dropped (before joining).
    pub min_duration: usize,
    /// Events separated by at most this many days are joined (`None`: never joined).
    pub max_gap: Option<usize>,
    /// Cold spells: days below the (low) threshold, intensities reported negative.
    pub cold: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params { min_duration: 5, max_gap: Some(2), cold: false }
    }
}

/// One cell's climatology: the mean and the threshold of each day of the climatological year
/// (index = day of year - 1), NaN where the climatology has none.
#[derive(Clone, Copy, Debug)]
pub struct CellClim<'a> {
    pub mean: &'a [f64],
    pub thresh: &'a [f64],
}

impl CellClim<'_> {
    /// Whether the climatology has any value for this cell (land has none).
    pub fn has_values(&self) -> bool {
        self.mean.iter().any(|m| !m.is_nan())
    }
}

/// The days of an analysis series: for each day, its index into the climatological year and
/// its year's index (0 = first analysis year).
#[derive(Clone, Debug, Default)]
pub struct Days {
    pub doy_index: Vec<u16>,
    pub year_index: Vec<u16>,
    /// Each day's value on the outputs' time axes: days since 1970-01-01, counted in the
    /// input's calendar.
    pub epoch_days: Vec<i64>,
    pub n_years: usize,
    pub first_year: i32,
}

impl Days {
    /// Every day of the years `years` of the proleptic Gregorian calendar, days of year by
    /// `calendar`.
    pub fn of_years(years: std::ops::RangeInclusive<i32>, calendar: crate::calendar::Calendar) -> Days {
        Days::of_years_in(years, calendar, crate::calendar::CfCalendar::ProlepticGregorian)
    }

    /// Every day of the years `years` of the input's calendar `cf` (360 a year in `360_day`,
    /// 365 in `noleap`), days of year by `calendar` in that calendar (the day-of-year logic
    /// of `run`, [`crate::calendar::Calendar::day_of_year_in`]), and each day's value on the
    /// outputs' time axis (days since 1970-01-01 counted in `cf`).
    pub fn of_years_in(
        years: std::ops::RangeInclusive<i32>,
        calendar: crate::calendar::Calendar,
        cf: crate::calendar::CfCalendar,
    ) -> Days {
        use crate::calendar::{dates_of_years_in, days_since_1970_in};
        let first_year = *years.start();
        let mut d = Days { first_year, n_years: years.clone().count(), ..Days::default() };
        for date in dates_of_years_in(cf, years) {
            d.doy_index.push(calendar.day_of_year_in(cf, date) - 1);
            d.year_index.push((date.year - first_year) as u16);
            d.epoch_days.push(days_since_1970_in(cf, date));
        }
        d
    }

    pub fn len(&self) -> usize {
        self.doy_index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doy_index.is_empty()
    }
}
