//! Calendar arithmetic: civil dates, and which calendar date a target day of year names.
//!
//! A climatology is indexed by *target day of year* (1..=366). Which date that is in a given
//! year depends on the calendar convention (`--calendar`):
//!
//! * [`Calendar::Ordinal`]: day `D` is the `D`-th day of the year (Jan 1 = 1). In leap years day
//!   152 is May 31, otherwise June 1. Day 366 exists only in leap years. This is the
//!   convention of the reference job (files named by year and ordinal day).
//! * [`Calendar::Hobday366`]: a 366-day year in which Feb 29 is day 60 and Mar 1 is day 61 in
//!   every year (the convention of marineHeatWaves / m_mhw). Day 60 exists only in leap years.
//!
//! Under both conventions the window of a target day is the run of consecutive calendar dates
//! `anchor - h ..= anchor + h` around the anchor date, so windows cross month and year
//! boundaries naturally.

use std::fmt;

pub use crate::util::cftime::{CfCalendar, CfDate};

/// A proleptic Gregorian calendar date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    pub year: i32,
    pub month: u8,
    pub day: u8,
}

/// Whether `year` is a Gregorian leap year.
pub fn is_leap(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Number of days in `year` (365 or 366).
pub fn days_in_year(year: i32) -> u16 {
    if is_leap(year) {
        366
    } else {
        365
    }
}

/// Number of days in `month` (1-12) of `year`.
pub fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

impl Date {
    /// A checked constructor: `None` when the month or day does not exist.
    pub fn new(year: i32, month: u8, day: u8) -> Option<Date> {
        if (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month) {
            Some(Date { year, month, day })
        } else {
            None
        }
    }

    /// The `ordinal`-th day (1-based) of `year`, if it exists.
    pub fn from_ordinal(year: i32, ordinal: u16) -> Option<Date> {
        if ordinal == 0 || ordinal > days_in_year(year) {
            return None;
        }
        Some(Date::from_days(days_from_civil(year, 1, 1) + i64::from(ordinal) - 1))
    }

    /// Day number within the year (Jan 1 = 1).
    pub fn ordinal(self) -> u16 {
        (self.to_days() - days_from_civil(self.year, 1, 1) + 1) as u16
    }

    /// Days since 1970-01-01.
    pub fn to_days(self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// The date `days` days after 1970-01-01.
    pub fn from_days(days: i64) -> Date {
        let (year, month, day) = civil_from_days(days);
        Date { year, month, day }
    }

    /// This date shifted by `delta` days.
    pub fn add_days(self, delta: i64) -> Date {
        Date::from_days(self.to_days() + delta)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm, exact for all i32 years).
pub fn days_from_civil(year: i32, month: u8, day: u8) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
pub fn civil_from_days(days: i64) -> (i32, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    (year, month, day)
}

/// How a target day of year maps to a calendar date in each year.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Calendar {
    /// Day number within each year (Jan 1 = 1; day 152 is May 31 in leap years).
    Ordinal,
    /// 366-day year: Feb 29 is day 60 and Mar 1 day 61 in every year (marineHeatWaves).
    Hobday366,
}

impl Calendar {
    /// The date in `year` that target day `doy` (1..=366) names, if that year has one.
    pub fn anchor(self, year: i32, doy: u16) -> Option<Date> {
        match self {
            Calendar::Ordinal => Date::from_ordinal(year, doy),
            Calendar::Hobday366 => {
                if is_leap(year) || doy < 60 {
                    Date::from_ordinal(year, doy)
                } else if doy == 60 {
                    None
                } else {
                    Date::from_ordinal(year, doy - 1)
                }
            }
        }
    }

    /// The target day of year this calendar gives `date` (inverse of [`Calendar::anchor`]).
    pub fn day_of_year(self, date: Date) -> u16 {
        let ordinal = date.ordinal();
        match self {
            Calendar::Ordinal => ordinal,
            Calendar::Hobday366 if !is_leap(date.year) && ordinal >= 60 => ordinal + 1,
            Calendar::Hobday366 => ordinal,
        }
    }

    /// [`Calendar::anchor`] in the input's CF calendar `cf`. The real calendars (standard,
    /// proleptic_gregorian, julian) keep both conventions as documented; the model calendars
    /// have one: the day of the year (1-365 for noleap, 1-366 for all_leap, 1-360 for
    /// 360_day), with no day-60 shift under `hobday366` (their years all have one length).
    pub fn anchor_in(self, cf: CfCalendar, year: i32, doy: u16) -> Option<Date> {
        let ordinal = |doy: u16| {
            (doy >= 1 && doy <= cf.days_in_year(year))
                .then(|| Date::from(cf.date_of(cf.day_number(CfDate { year, month: 1, day: 1 }) + i64::from(doy) - 1)))
        };
        match self {
            Calendar::Hobday366 if is_real(cf) && !cf.is_leap(year) && doy == 60 => None,
            Calendar::Hobday366 if is_real(cf) && !cf.is_leap(year) && doy > 60 => ordinal(doy - 1),
            _ => ordinal(doy),
        }
    }

    /// [`Calendar::day_of_year`] in the input's CF calendar `cf` (inverse of
    /// [`Calendar::anchor_in`]).
    pub fn day_of_year_in(self, cf: CfCalendar, date: Date) -> u16 {
        let ordinal = cf.day_of_year(date.into());
        match self {
            Calendar::Hobday366 if is_real(cf) && !cf.is_leap(date.year) && ordinal >= 60 => ordinal + 1,
            _ => ordinal,
        }
    }

    /// The longest year of this convention in `cf` (the largest day of year it can name).
    pub fn max_doy(self, cf: CfCalendar) -> u16 {
        match cf {
            CfCalendar::Day360 => 360,
            CfCalendar::NoLeap => 365,
            _ => 366,
        }
    }

    /// The name used on the command line and in output metadata.
    pub fn name(self) -> &'static str {
        match self {
            Calendar::Ordinal => "ordinal",
            Calendar::Hobday366 => "hobday366",
        }
    }
}

/// Whether `cf` is a calendar of real dates (with leap years), where `ordinal` and
/// `hobday366` differ.
pub fn is_real(cf: CfCalendar) -> bool {
    matches!(cf, CfCalendar::Standard | CfCalendar::ProlepticGregorian | CfCalendar::Julian)
}

/// Dates of a CF calendar carried as [`Date`]s (the same fields; a [`Date`] of a model
/// calendar, such as Feb 30 of `360_day`, is built only from here).
impl From<CfDate> for Date {
    fn from(d: CfDate) -> Date {
        Date { year: d.year, month: d.month, day: d.day }
    }
}

impl From<Date> for CfDate {
    fn from(d: Date) -> CfDate {
        CfDate { year: d.year, month: d.month, day: d.day }
    }
}

/// `date` moved by `delta` days of calendar `cf` (runs of consecutive days of that calendar).
pub fn add_days_in(cf: CfCalendar, date: Date, delta: i64) -> Date {
    Date::from(cf.date_of(cf.day_number(date.into()) + delta))
}

/// The day number ([`CfCalendar::day_number`]) of `date` in `cf`.
pub fn day_number_in(cf: CfCalendar, date: Date) -> i64 {
    cf.day_number(date.into())
}

/// Days from 1970-01-01 to `date`, counted in calendar `cf`: the value of `date` on a CF time
/// axis `days since 1970-01-01` whose `calendar` is `cf` (equal to [`Date::to_days`] in the
/// Gregorian calendars from 1582-10-15 on).
pub fn days_since_1970_in(cf: CfCalendar, date: Date) -> i64 {
    cf.day_number(date.into()) - cf.day_number(CfDate { year: 1970, month: 1, day: 1 })
}

/// Every date of the years `years` in calendar `cf`, in order (360 a year in `360_day`, 365 in
/// `noleap`, the real calendars' leap years as `cf` has them).
pub fn dates_of_years_in(cf: CfCalendar, years: std::ops::RangeInclusive<i32>) -> Vec<Date> {
    if years.is_empty() {
        return Vec::new();
    }
    let a = cf.day_number(CfDate { year: *years.start(), month: 1, day: 1 });
    let b = cf.day_number(CfDate { year: years.end() + 1, month: 1, day: 1 });
    (a..b).map(|n| Date::from(cf.date_of(n))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip_over_four_centuries() {
        let start = days_from_civil(1900, 1, 1);
        let mut expected = Date { year: 1900, month: 1, day: 1 };
        for days in start..start + 146_097 {
            let date = Date::from_days(days);
            assert_eq!(date, expected, "days {days}");
            assert_eq!(date.to_days(), days);
            // advance `expected` by hand
            expected = if expected.day < days_in_month(expected.year, expected.month) {
                Date { day: expected.day + 1, ..expected }
            } else if expected.month < 12 {
                Date { month: expected.month + 1, day: 1, ..expected }
            } else {
                Date { year: expected.year + 1, month: 1, day: 1 }
            };
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }

    #[test]
    fn ordinal_days() {
        assert_eq!(Date::from_ordinal(2020, 152), Date::new(2020, 5, 31));
        assert_eq!(Date::from_ordinal(2019, 152), Date::new(2019, 6, 1));
        assert_eq!(Date::from_ordinal(2019, 366), None);
        assert_eq!(Date::from_ordinal(2020, 366), Date::new(2020, 12, 31));
        assert_eq!(Date::new(2021, 12, 31).unwrap().ordinal(), 365);
        assert_eq!(Date::new(2019, 2, 29), None);
    }

    #[test]
    fn hobday366_puts_feb29_at_60_and_mar1_at_61() {
        let c = Calendar::Hobday366;
        assert_eq!(c.anchor(2019, 59), Date::new(2019, 2, 28));
        assert_eq!(c.anchor(2019, 60), None);
        assert_eq!(c.anchor(2019, 61), Date::new(2019, 3, 1));
        assert_eq!(c.anchor(2020, 60), Date::new(2020, 2, 29));
        assert_eq!(c.anchor(2020, 61), Date::new(2020, 3, 1));
        assert_eq!(c.anchor(2019, 366), Date::new(2019, 12, 31));
        assert_eq!(c.anchor(2020, 366), Date::new(2020, 12, 31));
        for year in [2019, 2020] {
            for doy in 1..=366 {
                if let Some(d) = c.anchor(year, doy) {
                    assert_eq!(c.day_of_year(d), doy);
                }
                if let Some(d) = Calendar::Ordinal.anchor(year, doy) {
                    assert_eq!(Calendar::Ordinal.day_of_year(d), doy);
                }
            }
        }
    }

    /// The model calendars' days of year: noleap 1-365 with no day-60 shift under either
    /// convention, all_leap 1-366, 360_day 1-360 in 30-day months; the real calendars as
    /// documented (julian's 1900 is a leap year).
    #[test]
    fn days_of_year_per_calendar() {
        let d = |year, month, day| Date { year, month, day };
        for conv in [Calendar::Ordinal, Calendar::Hobday366] {
            let noleap = CfCalendar::NoLeap;
            assert_eq!(conv.anchor_in(noleap, 2020, 59), Some(d(2020, 2, 28)));
            assert_eq!(conv.anchor_in(noleap, 2020, 60), Some(d(2020, 3, 1)));
            assert_eq!(conv.anchor_in(noleap, 2020, 365), Some(d(2020, 12, 31)));
            assert_eq!(conv.anchor_in(noleap, 2020, 366), None);
            let leap = CfCalendar::AllLeap;
            assert_eq!(conv.anchor_in(leap, 2019, 60), Some(d(2019, 2, 29)));
            assert_eq!(conv.anchor_in(leap, 2019, 366), Some(d(2019, 12, 31)));
            let c360 = CfCalendar::Day360;
            assert_eq!(conv.anchor_in(c360, 2019, 60), Some(d(2019, 2, 30)));
            assert_eq!(conv.anchor_in(c360, 2019, 360), Some(d(2019, 12, 30)));
            assert_eq!(conv.anchor_in(c360, 2019, 361), None);
            assert_eq!(conv.max_doy(c360), 360);
            assert_eq!(conv.max_doy(noleap), 365);
            for cf in [noleap, leap, c360] {
                for doy in 1..=conv.max_doy(cf) {
                    let date = conv.anchor_in(cf, 2001, doy).unwrap();
                    assert_eq!(conv.day_of_year_in(cf, date), doy, "{cf:?} {doy}");
                }
            }
        }
        // the real calendars keep both conventions; proleptic_gregorian is `anchor` itself
        for year in [1999, 2000, 2019, 2020] {
            for doy in 1..=366 {
                for conv in [Calendar::Ordinal, Calendar::Hobday366] {
                    assert_eq!(conv.anchor_in(CfCalendar::ProlepticGregorian, year, doy), conv.anchor(year, doy));
                    assert_eq!(conv.anchor_in(CfCalendar::Standard, year, doy), conv.anchor(year, doy));
                }
            }
        }
        let julian = CfCalendar::Julian;
        assert_eq!(Calendar::Hobday366.anchor_in(julian, 1900, 60), Some(d(1900, 2, 29)));
        assert_eq!(Calendar::Hobday366.anchor(1900, 60), None);
        assert_eq!(Calendar::Hobday366.anchor_in(julian, 1901, 61), Some(d(1901, 3, 1)));
        assert_eq!(add_days_in(CfCalendar::Day360, d(2019, 2, 28), 2), d(2019, 2, 30));
        assert_eq!(add_days_in(CfCalendar::Day360, d(2019, 12, 30), 1), d(2020, 1, 1));
        assert_eq!(add_days_in(CfCalendar::NoLeap, d(2020, 2, 28), 1), d(2020, 3, 1));
    }

    /// The time values of the events' outputs: days since 1970-01-01 counted in the input's
    /// calendar (360 a year in `360_day`, 365 in `noleap`); the Gregorian ones are `to_days`.
    #[test]
    fn days_since_1970_and_the_dates_of_years_per_calendar() {
        let d = |year, month, day| Date { year, month, day };
        assert_eq!(days_since_1970_in(CfCalendar::Day360, d(2001, 1, 1)), 31 * 360);
        assert_eq!(days_since_1970_in(CfCalendar::Day360, d(2001, 2, 30)), 31 * 360 + 59);
        assert_eq!(days_since_1970_in(CfCalendar::NoLeap, d(2001, 3, 1)), 31 * 365 + 59);
        assert_eq!(days_since_1970_in(CfCalendar::AllLeap, d(1971, 1, 1)), 366);
        assert_eq!(days_since_1970_in(CfCalendar::Day360, d(1969, 12, 30)), -1);
        for cf in [CfCalendar::Standard, CfCalendar::ProlepticGregorian] {
            for date in [d(1970, 1, 1), d(2000, 2, 29), d(2024, 12, 31), d(1901, 3, 1)] {
                assert_eq!(days_since_1970_in(cf, date), date.to_days(), "{cf:?} {date}");
            }
        }
        let c360 = dates_of_years_in(CfCalendar::Day360, 2001..=2002);
        assert_eq!((c360.len(), c360[59], c360[359], c360[360]), (720, d(2001, 2, 30), d(2001, 12, 30), d(2002, 1, 1)));
        let noleap = dates_of_years_in(CfCalendar::NoLeap, 2000..=2000);
        assert_eq!((noleap.len(), noleap[59]), (365, d(2000, 3, 1)));
        assert_eq!(dates_of_years_in(CfCalendar::AllLeap, 2001..=2001).len(), 366);
        assert_eq!(dates_of_years_in(CfCalendar::Julian, 1900..=1900).len(), 366);
        let greg = dates_of_years_in(CfCalendar::ProlepticGregorian, 1999..=2000);
        let by_ordinal: Vec<Date> =
            (1999..=2000).flat_map(|y| (1..=days_in_year(y)).map(move |o| Date::from_ordinal(y, o).unwrap())).collect();
        assert_eq!(greg, by_ordinal);
    }
}
