//! The values flags take (years, days of year, grid sizes, byte sizes) and the window flags
//! that name a job's days, declared once ([`WindowArgs`]) for `run` and the benchmarks that
//! read or model a job. Below the command line, so that the subcommands beside `run` (tools,
//! benchmarks) take them without importing it.

use std::ops::RangeInclusive;
use std::str::FromStr;

use crate::calendar::Calendar;
use crate::smooth::{DayRules, Feb29};
use crate::window::{WindowEdges, WindowSpec};

/// The window flags: which years, which target days, how wide a window, which calendar
/// (under the help heading "Job", the command line's `cli::headings::JOB`).
#[derive(clap::Args, Debug, Clone)]
pub struct WindowArgs {
    /// Baseline years of the climatology: 1991-2020 (`events --years` names analysis years).
    #[arg(long = "baseline", value_name = "YEARS", help_heading = "Job")]
    pub years: YearRange,

    /// Target days of year: 152-243, or 1-59,61-366 [default: every day of the input's year].
    ///
    /// 1-366 for the real calendars (1-365 under ordinal where none of --baseline is a leap
    /// year), 1-365 for noleap, 1-360 for 360_day; days past the input calendar's year are an
    /// error.
    #[arg(long, help_heading = "Job")]
    pub doys: Option<DoyList>,

    /// Days on each side of the target day (the window is 2h+1 days).
    #[arg(long, default_value_t = 5, help_heading = "Job")]
    pub half_window: u16,

    /// Which date a target day names each year: ordinal or hobday366.
    #[arg(long, value_enum, default_value_t = Calendar::Ordinal, help_heading = "Job", hide_possible_values = true)]
    pub calendar: Calendar,

    // The Hobday climatology's rules beyond each day's window (see `crate::smooth`).
    /// Windows at the ends of the years: clip, extend or wrap.
    ///
    /// clip (only dates inside the years), extend (the input's dates before and after them, as
    /// marineHeatWaves), wrap (the years as a circular series, as CDO's rm=c).
    #[arg(long, value_enum, value_name = "EDGES", default_value_t = WindowEdges::Clip, help_heading = "Job", hide_possible_values = true)]
    pub window_edges: WindowEdges,

    /// Day 60 under hobday366: window or interpolate.
    ///
    /// From its own window, or 0.5*day 59 + 0.5*day 61 for the mean and every percentile
    /// (interpolate, as marineHeatWaves).
    #[arg(long, value_enum, default_value_t = Feb29::Window, help_heading = "Job", hide_possible_values = true)]
    pub feb29: Feb29,

    /// Running mean of this odd width over the days of year (1 = none).
    ///
    /// Periodic, for the mean and every percentile, after Feb 29 is filled (31 as
    /// marineHeatWaves). Days outside --doys that it needs are computed but not written.
    #[arg(long, default_value_t = 1, value_name = "W", help_heading = "Job")]
    pub smooth: u16,
}

impl WindowArgs {
    /// The days of year asked for (all 366 unless `--doys` says).
    pub fn doys(&self) -> Vec<u16> {
        self.doys.as_ref().map_or_else(|| (1..=366).collect(), |d| d.0.clone())
    }

    /// The days these flags ask for.
    pub fn spec(&self) -> WindowSpec {
        WindowSpec {
            years: self.years.0.clone(),
            doys: self.doys(),
            half_window: self.half_window,
            calendar: self.calendar,
        }
    }

    /// The climatology's rules these flags ask for (checked by `cli::validate`).
    pub fn rules(&self) -> DayRules {
        DayRules { edges: self.window_edges, feb29: self.feb29, smooth: self.smooth, ..DayRules::default() }
    }
}

/// A year or an inclusive range of years: `1991-2020`, `2005`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YearRange(pub RangeInclusive<i32>);

impl FromStr for YearRange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("'{s}' is not a year or a year range like 1991-2020");
        let (a, b) = s.split_once('-').unwrap_or((s, s));
        let (a, b): (i32, i32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
        if !(1..=9999).contains(&a) || !(1..=9999).contains(&b) || a > b {
            return Err(bad());
        }
        Ok(YearRange(a..=b))
    }
}

/// Days of year 1..=366 as ranges and single days: `152-243`, `1-59,61-366`, `200`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoyList(pub Vec<u16>);

impl FromStr for DoyList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |part: &str| format!("'{part}' is not a day of year (1-366) or a range like 152-243");
        let mut days = Vec::new();
        for part in s.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (u16, u16) =
                (a.trim().parse().map_err(|_| bad(part))?, b.trim().parse().map_err(|_| bad(part))?);
            if !(1..=366).contains(&a) || !(1..=366).contains(&b) || a > b {
                return Err(bad(part));
            }
            days.extend(a..=b);
        }
        days.sort_unstable();
        days.dedup();
        Ok(DoyList(days))
    }
}

/// A grid size `NLONxNLAT`: `1440x721`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSize {
    pub nlon: usize,
    pub nlat: usize,
}

impl FromStr for GridSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("'{s}' is not a grid size like 1440x721 (longitudes x latitudes)");
        let (a, b) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let (nlon, nlat): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if nlon < 1 || nlat < 2 || nlon > 100_000 || nlat > 100_000 {
            return Err(bad());
        }
        Ok(GridSize { nlon, nlat })
    }
}

/// A byte count with an optional binary unit: `8G`, `512M`, `1.5GiB`, `100000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let value: f64 = num.parse().map_err(|_| format!("'{s}' is not a size like 8G or 512M"))?;
        let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
            "" | "B" => 1,
            "K" | "KB" | "KIB" => 1 << 10,
            "M" | "MB" | "MIB" => 1 << 20,
            "G" | "GB" | "GIB" => 1 << 30,
            "T" | "TB" | "TIB" => 1 << 40,
            _ => return Err(format!("'{s}' has an unknown unit (use K, M, G or T)")),
        };
        let bytes = value * scale as f64;
        // `as u64` saturates: a size past 16 EiB would silently become 16 EiB
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(format!("'{s}' is larger than any memory (at most 16 EiB)"));
        }
        Ok(ByteSize(bytes as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_parsers() {
        assert_eq!("1991-2020".parse::<YearRange>().unwrap().0, 1991..=2020);
        assert_eq!("2005".parse::<YearRange>().unwrap().0, 2005..=2005);
        assert!("2020-1991".parse::<YearRange>().is_err());
        assert_eq!("152-154,1,153".parse::<DoyList>().unwrap().0, [1, 152, 153, 154]);
        assert!("0-5".parse::<DoyList>().is_err());
        assert!("360-367".parse::<DoyList>().is_err());
        assert_eq!("1440x721".parse::<GridSize>().unwrap(), GridSize { nlon: 1440, nlat: 721 });
        assert!("1440".parse::<GridSize>().is_err());
        assert_eq!("8G".parse::<ByteSize>().unwrap().0, 8 << 30);
        assert_eq!("1.5GiB".parse::<ByteSize>().unwrap().0, 3 << 29);
        assert_eq!("4096".parse::<ByteSize>().unwrap().0, 4096);
        assert!("8Q".parse::<ByteSize>().is_err());
        let e = "99999999999999999999G".parse::<ByteSize>().unwrap_err();
        assert!(e.contains("larger than any memory"), "{e}");
        assert!("16384P".parse::<ByteSize>().is_err());
        assert!("17179869184G".parse::<ByteSize>().is_err());
        assert_eq!("1T".parse::<ByteSize>().unwrap().0, 1 << 40);
    }
}
