//! CF time coordinates decoded to calendar days, for every calendar CF-1.8 names.
//!
//! Time-series inputs (one file per year, per decade, a whole CMIP6 experiment) carry their
//! dates only as numbers on a time axis: `units = "days since 1800-01-01"` and a `calendar`
//! attribute. Placing a time step in the pool needs the calendar day that number falls in,
//! decoded the way cftime (and so xarray, xclim, CDO) decodes it:
//!
//! * `standard`/`gregorian`: Julian before 1582-10-15, Gregorian from then on (the ten days
//!   1582-10-05..14 do not exist); `proleptic_gregorian`; `julian`;
//! * `noleap`/`365_day`, `all_leap`/`366_day`: every year 365 or 366 days;
//! * `360_day`: twelve 30-day months.
//!
//! A value names the calendar day it falls in (floor): `0.5 days since 2000-01-01` and
//! `12 hours since 2000-01-01` are both 2000-01-01. Values are floating point in the file, so
//! the instant is rounded to the millisecond before flooring: `23.999999999` hours (one
//! float rounding below a whole day) names the next day, as cftime's microsecond rounding
//! does. Nothing here depends on the rest of the crate.

use std::fmt;

/// A calendar of the CF conventions (the `calendar` attribute of a time coordinate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CfCalendar {
    /// `standard` or `gregorian` (the default when the attribute is absent): mixed
    /// Julian/Gregorian with the 1582 reform.
    Standard,
    ProlepticGregorian,
    Julian,
    /// `noleap` or `365_day`.
    NoLeap,
    /// `all_leap` or `366_day`.
    AllLeap,
    /// `360_day`.
    Day360,
}

/// A date in some [`CfCalendar`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CfDate {
    pub year: i32,
    pub month: u8,
    pub day: u8,
}

impl fmt::Display for CfDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Why a time axis cannot be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CfTimeError {
    #[error("unknown calendar '{0}' (CF-1.8 names standard, gregorian, proleptic_gregorian, julian, noleap, 365_day, all_leap, 366_day, 360_day)")]
    UnknownCalendar(String),
    #[error("time units '{0}' are not 'UNIT since DATE' with UNIT days, hours, minutes or seconds")]
    BadUnits(String),
    #[error("reference date '{date}' in units '{units}' does not exist in the {calendar} calendar")]
    BadReference { units: String, date: String, calendar: &'static str },
    #[error("time value {0} is not a finite number")]
    NotFinite(f64),
    #[error("time value {0} is outside the years this decoder handles (-100000..100000)")]
    OutOfRange(f64),
}

impl CfCalendar {
    /// Parses a `calendar` attribute (case-insensitive, surrounding blanks ignored). `None`
    /// (no attribute) is the CF default, `standard`.
    pub fn parse(attr: Option<&str>) -> Result<CfCalendar, CfTimeError> {
        let Some(raw) = attr else { return Ok(CfCalendar::Standard) };
        Ok(match raw.trim().to_ascii_lowercase().as_str() {
            "standard" | "gregorian" => CfCalendar::Standard,
            "proleptic_gregorian" => CfCalendar::ProlepticGregorian,
            "julian" => CfCalendar::Julian,
            "noleap" | "365_day" => CfCalendar::NoLeap,
            "all_leap" | "366_day" => CfCalendar::AllLeap,
            "360_day" => CfCalendar::Day360,
            _ => return Err(CfTimeError::UnknownCalendar(raw.to_string())),
        })
    }

    /// The name written to outputs' `calendar` attributes.
    pub fn cf_name(self) -> &'static str {
        match self {
            CfCalendar::Standard => "standard",
            CfCalendar::ProlepticGregorian => "proleptic_gregorian",
            CfCalendar::Julian => "julian",
            CfCalendar::NoLeap => "noleap",
            CfCalendar::AllLeap => "all_leap",
            CfCalendar::Day360 => "360_day",
        }
    }

    /// Whether `year` has a Feb 29 (Day360 has Feb 29 and Feb 30 in every year).
    pub fn is_leap(self, year: i32) -> bool {
        match self {
            CfCalendar::ProlepticGregorian => gregorian_leap(year),
            CfCalendar::Julian => year.rem_euclid(4) == 0,
            // the reform year 1582 is a Julian common year either way
            CfCalendar::Standard => {
                if year < 1582 {
                    year.rem_euclid(4) == 0
                } else {
                    gregorian_leap(year)
                }
            }
            CfCalendar::NoLeap => false,
            CfCalendar::AllLeap | CfCalendar::Day360 => true,
        }
    }

    /// Days in `month` (1-12) of `year`.
    pub fn days_in_month(self, year: i32, month: u8) -> u8 {
        if self == CfCalendar::Day360 {
            return 30;
        }
        match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if self.is_leap(year) => 29,
            2 => 28,
            _ => 0,
        }
    }

    /// Days in `year`: 360, 365 or 366 (355 for 1582 in the standard calendar).
    pub fn days_in_year(self, year: i32) -> u16 {
        match self {
            CfCalendar::Day360 => 360,
            CfCalendar::Standard if year == 1582 => 355,
            _ if self.is_leap(year) => 366,
            _ => 365,
        }
    }

    /// The day of the year of `date` (Jan 1 = 1) from its month and day, as cftime's
    /// `dayofyr` and xarray's `dayofyear` give it (so 1582-10-15 is day 288 in `standard`,
    /// although ten days before it do not exist).
    pub fn day_of_year(self, date: CfDate) -> u16 {
        (1..date.month).map(|m| self.days_in_month(date.year, m) as u16).sum::<u16>() + date.day as u16
    }

    /// Whether `date` exists in this calendar.
    pub fn is_valid(self, date: CfDate) -> bool {
        let exists =
            (1..=12).contains(&date.month) && date.day >= 1 && date.day <= self.days_in_month(date.year, date.month);
        let in_reform_gap =
            self == CfCalendar::Standard && date.year == 1582 && date.month == 10 && (5..=14).contains(&date.day);
        exists && !in_reform_gap
    }

    /// A count of days with consecutive dates consecutive (a Julian day number for the real
    /// calendars; a plain count from year 0 for the model calendars).
    pub fn day_number(self, d: CfDate) -> i64 {
        let (y, m, day) = (d.year as i64, d.month as i64, d.day as i64);
        match self {
            CfCalendar::ProlepticGregorian => gregorian_jdn(y, m, day),
            CfCalendar::Julian => julian_jdn(y, m, day),
            CfCalendar::Standard => {
                if (y, m, day) >= (1582, 10, 15) {
                    gregorian_jdn(y, m, day)
                } else {
                    julian_jdn(y, m, day)
                }
            }
            CfCalendar::Day360 => y * 360 + (m - 1) * 30 + (day - 1),
            CfCalendar::NoLeap | CfCalendar::AllLeap => {
                let len = if self == CfCalendar::NoLeap { 365 } else { 366 };
                let mut n = y * len;
                for mm in 1..m {
                    n += self.days_in_month(d.year, mm as u8) as i64;
                }
                n + day - 1
            }
        }
    }

    /// The date of a [`CfCalendar::day_number`].
    pub fn date_of(self, n: i64) -> CfDate {
        match self {
            CfCalendar::ProlepticGregorian => gregorian_from_jdn(n),
            CfCalendar::Julian => julian_from_jdn(n),
            // JDN 2299161 is 1582-10-15 Gregorian; the day before is 1582-10-04 Julian
            CfCalendar::Standard if n >= 2_299_161 => gregorian_from_jdn(n),
            CfCalendar::Standard => julian_from_jdn(n),
            CfCalendar::Day360 => {
                let year = n.div_euclid(360);
                let r = n.rem_euclid(360);
                CfDate { year: year as i32, month: (r / 30 + 1) as u8, day: (r % 30 + 1) as u8 }
            }
            CfCalendar::NoLeap | CfCalendar::AllLeap => {
                let len = if self == CfCalendar::NoLeap { 365 } else { 366 };
                let year = n.div_euclid(len) as i32;
                let mut r = n.rem_euclid(len);
                let mut month = 1u8;
                while r >= self.days_in_month(year, month) as i64 {
                    r -= self.days_in_month(year, month) as i64;
                    month += 1;
                }
                CfDate { year, month, day: (r + 1) as u8 }
            }
        }
    }
}

fn gregorian_leap(year: i32) -> bool {
    (year.rem_euclid(4) == 0 && year.rem_euclid(100) != 0) || year.rem_euclid(400) == 0
}

// Julian day numbers (noon-based day count) after Fliegel & Van Flandern, with Euclidean
// division so that negative years work too.
fn gregorian_jdn(y: i64, m: i64, d: i64) -> i64 {
    let a = (14 - m).div_euclid(12);
    let yy = y + 4800 - a;
    let mm = m + 12 * a - 3;
    d + (153 * mm + 2).div_euclid(5) + 365 * yy + yy.div_euclid(4) - yy.div_euclid(100) + yy.div_euclid(400) - 32045
}

fn julian_jdn(y: i64, m: i64, d: i64) -> i64 {
    let a = (14 - m).div_euclid(12);
    let yy = y + 4800 - a;
    let mm = m + 12 * a - 3;
    d + (153 * mm + 2).div_euclid(5) + 365 * yy + yy.div_euclid(4) - 32083
}

fn gregorian_from_jdn(j: i64) -> CfDate {
    let a = j + 32044;
    let b = (4 * a + 3).div_euclid(146_097);
    let c = a - (146_097 * b).div_euclid(4);
    finish_from_jdn(b * 100, c)
}

fn julian_from_jdn(j: i64) -> CfDate {
    finish_from_jdn(0, j + 32082)
}

fn finish_from_jdn(century_years: i64, c: i64) -> CfDate {
    let d = (4 * c + 3).div_euclid(1461);
    let e = c - (1461 * d).div_euclid(4);
    let m = (5 * e + 2).div_euclid(153);
    let day = e - (153 * m + 2).div_euclid(5) + 1;
    let month = m + 3 - 12 * m.div_euclid(10);
    let year = century_years + d - 4800 + m.div_euclid(10);
    CfDate { year: year as i32, month: month as u8, day: day as u8 }
}

/// The `units` of a time coordinate: seconds per unit and the reference instant.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeUnits {
    /// Seconds in one unit (86400 for days).
    pub unit_seconds: i64,
    /// The reference date's day number in the calendar, and the seconds after its midnight
    /// (time of day and time-zone offset applied).
    pub reference_day: i64,
    pub reference_second: i64,
    pub calendar: CfCalendar,
}

impl TimeUnits {
    /// Parses `UNIT since YYYY-M-D[( |T)hh:mm[:ss[.f]]][Z| UTC| ±hh[:mm]]`.
    pub fn parse(units: &str, calendar: CfCalendar) -> Result<TimeUnits, CfTimeError> {
        let bad = || CfTimeError::BadUnits(units.to_string());
        let lower = units.trim().to_ascii_lowercase();
        let (unit, rest) = lower.split_once(" since ").ok_or_else(bad)?;
        let unit_seconds = match unit.trim() {
            "days" | "day" | "d" => 86_400,
            "hours" | "hour" | "hr" | "h" => 3_600,
            "minutes" | "minute" | "min" => 60,
            "seconds" | "second" | "sec" | "s" => 1,
            _ => return Err(bad()),
        };
        let rest = rest.trim();
        let (date_part, time_part) = match rest.find(['T', 't', ' ']) {
            Some(i) => (&rest[..i], rest[i + 1..].trim()),
            None => (rest, ""),
        };
        let mut fields = date_part.splitn(3, '-').collect::<Vec<_>>();
        // a leading minus sign belongs to the year
        if date_part.starts_with('-') {
            return Err(bad());
        }
        if fields.len() == 2 {
            fields.push("1");
        }
        if fields.len() != 3 {
            return Err(bad());
        }
        let year: i32 = fields[0].parse().map_err(|_| bad())?;
        let month: u8 = fields[1].parse().map_err(|_| bad())?;
        let day: u8 = fields[2].parse().map_err(|_| bad())?;
        let date = CfDate { year, month, day };
        if !calendar.is_valid(date) {
            return Err(CfTimeError::BadReference {
                units: units.to_string(),
                date: date.to_string(),
                calendar: calendar.cf_name(),
            });
        }
        let reference_second = parse_time_of_day(time_part).ok_or_else(bad)?;
        Ok(TimeUnits { unit_seconds, reference_day: calendar.day_number(date), reference_second, calendar })
    }

    /// The calendar day a time value falls in.
    pub fn date_of(&self, value: f64) -> Result<CfDate, CfTimeError> {
        Ok(self.calendar.date_of(self.day_number_of(value)?))
    }

    /// The calendar's day number (see [`CfCalendar::day_number`]) of the day a value falls in.
    pub fn day_number_of(&self, value: f64) -> Result<i64, CfTimeError> {
        if !value.is_finite() {
            return Err(CfTimeError::NotFinite(value));
        }
        // milliseconds since the reference instant, rounded (see the module header)
        let ms = value * self.unit_seconds as f64 * 1000.0;
        if ms.abs() > 3.0e18 {
            return Err(CfTimeError::OutOfRange(value));
        }
        let ms = ms.round() as i64 + self.reference_second * 1000;
        let day = self.reference_day + ms.div_euclid(86_400_000);
        let year = self.calendar.date_of(day).year;
        if !(-100_000..100_000).contains(&year) {
            return Err(CfTimeError::OutOfRange(value));
        }
        Ok(day)
    }
}

/// Seconds after midnight of `hh:mm[:ss[.fff]]` plus an optional zone (`Z`, `UTC`, `+hh`,
/// `-hh:mm`), converted to UTC. An empty string is midnight.
fn parse_time_of_day(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() {
        return Some(0);
    }
    let s = s.trim_end_matches("utc").trim_end_matches('z').trim();
    // the zone starts at a sign after the clock
    let (clock, zone) = match s.char_indices().skip(1).find(|&(_, c)| c == '+' || c == '-') {
        Some((i, _)) => (s[..i].trim(), Some(s[i..].trim())),
        None => (s, None),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let h: i64 = parts[0].parse().ok()?;
    let m: i64 = parts.get(1).map_or(Some(0), |p| p.parse().ok())?;
    let sec: f64 = parts.get(2).map_or(Some(0.0), |p| p.parse().ok())?;
    if !(0..24).contains(&h) || !(0..60).contains(&m) || !(0.0..61.0).contains(&sec) {
        return None;
    }
    let mut total = h * 3600 + m * 60 + sec.floor() as i64;
    if let Some(z) = zone {
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let z = &z[1..];
        let (zh, zm) = match z.split_once(':') {
            Some((a, b)) => (a.parse::<i64>().ok()?, b.parse::<i64>().ok()?),
            None if z.len() == 4 => (z[..2].parse().ok()?, z[2..].parse().ok()?),
            None => (z.parse().ok()?, 0),
        };
        // local = UTC + offset, so UTC = local - offset
        total -= sign * (zh * 3600 + zm * 60);
    }
    Some(total)
}

#[cfg(test)]
mod tests;
