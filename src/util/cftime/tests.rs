//! The decoder against cftime (tests/fixtures/cftime/cases.json, written by make_cases.py
//! beside it), and the rules cftime does not cover: units parsing and bad input.

use super::*;

#[derive(serde::Deserialize)]
struct Cases {
    calendars: Vec<String>,
    units: Vec<String>,
    cases: Vec<(usize, usize, f64, i32, u8, u8, u16)>,
}

#[test]
fn every_calendar_decodes_as_cftime_does() {
    let cases: Cases = serde_json::from_str(include_str!("../../../tests/fixtures/cftime/cases.json")).unwrap();
    assert!(cases.cases.len() > 6000, "the fixture lost its cases");
    let mut failures = Vec::new();
    for &(c, u, value, y, m, d, doy) in &cases.cases {
        let cal = CfCalendar::parse(Some(&cases.calendars[c])).unwrap();
        let units = TimeUnits::parse(&cases.units[u], cal).unwrap();
        let got = units.date_of(value).unwrap();
        let want = CfDate { year: y, month: m, day: d };
        if got != want || cal.day_of_year(got) != doy {
            failures.push(format!(
                "{} / {} / {value}: got {got} (doy {}), cftime {want} (doy {doy})",
                cases.calendars[c],
                cases.units[u],
                cal.day_of_year(got)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ, first: {:#?}",
        failures.len(),
        cases.cases.len(),
        &failures[..failures.len().min(8)]
    );
}

#[test]
fn calendars_round_trip_every_day_over_centuries() {
    for cal in [
        CfCalendar::Standard,
        CfCalendar::ProlepticGregorian,
        CfCalendar::Julian,
        CfCalendar::NoLeap,
        CfCalendar::AllLeap,
        CfCalendar::Day360,
    ] {
        let start = cal.day_number(CfDate { year: 1500, month: 1, day: 1 });
        let mut prev = cal.date_of(start);
        for n in start + 1..start + 365 * 700 {
            let date = cal.date_of(n);
            assert!(cal.is_valid(date), "{cal:?}: {date} from {n}");
            assert_eq!(cal.day_number(date), n, "{cal:?}: {date}");
            assert!(date > prev, "{cal:?}: {date} after {prev}");
            if date.year != prev.year {
                let nominal =
                    if cal == CfCalendar::Standard && prev.year == 1582 { 365 } else { cal.days_in_year(prev.year) };
                assert_eq!(cal.day_of_year(prev), nominal, "{cal:?} {prev}");
            }
            prev = date;
        }
    }
}

#[test]
fn the_reform_skips_ten_days_in_the_standard_calendar_only() {
    let std = CfCalendar::Standard;
    let oct4 = std.day_number(CfDate { year: 1582, month: 10, day: 4 });
    assert_eq!(std.date_of(oct4 + 1), CfDate { year: 1582, month: 10, day: 15 });
    assert!(!std.is_valid(CfDate { year: 1582, month: 10, day: 10 }));
    assert_eq!(std.days_in_year(1582), 355);
    assert!(std.is_leap(1500) && !CfCalendar::ProlepticGregorian.is_leap(1500));
    assert!(CfCalendar::Julian.is_leap(1900) && !std.is_leap(1900));
    let pg = CfCalendar::ProlepticGregorian;
    let d = pg.day_number(CfDate { year: 1582, month: 10, day: 4 });
    assert_eq!(pg.date_of(d + 1), CfDate { year: 1582, month: 10, day: 5 });
}

#[test]
fn units_parse_the_forms_products_write() {
    let pg = CfCalendar::ProlepticGregorian;
    let at = |u: &str, v: f64| TimeUnits::parse(u, pg).unwrap().date_of(v).unwrap().to_string();
    // NOAA PSL, ERA5 (new CDS), OISST, CMIP6
    assert_eq!(at("days since 1800-01-01 00:00:00", 69396.0), "1990-01-01");
    assert_eq!(at("seconds since 1970-01-01", 631152000.0), "1990-01-01");
    assert_eq!(at("days since 1978-01-01 12:00:00", 0.0), "1978-01-01");
    assert_eq!(at("days since 1978-01-01 12:00:00", 0.5), "1978-01-02");
    assert_eq!(at("hours since 1900-01-01 00:00:0.0", 24.0 * 365.0), "1901-01-01");
    assert_eq!(at("Days since 1850-1-1", 0.5), "1850-01-01");
    assert_eq!(at("days since 2000-01", 31.0), "2000-02-01");
    assert_eq!(at("days since 2000-01-01T06:00:00Z", 0.75), "2000-01-02");
    assert_eq!(at("days since 2000-01-01 00:00:00 UTC", -0.25), "1999-12-31");
    // a zone ahead of UTC moves the reference instant back
    assert_eq!(at("hours since 2000-01-01 02:00 +03:00", 0.5), "1999-12-31");
    // one float rounding below a whole day names the next day, as cftime does
    assert_eq!(at("days since 2000-01-01", 0.9999999999999), "2000-01-02");
    assert_eq!(at("days since 2000-01-01", 0.999), "2000-01-01");
}

#[test]
fn bad_units_calendars_and_values_are_errors() {
    let pg = CfCalendar::ProlepticGregorian;
    for units in [
        "days",
        "fortnights since 2000-01-01",
        "days since",
        "days since 2000-13-01",
        "days since 2000-01-01 25:00",
        "days after 2000-01-01",
    ] {
        assert!(TimeUnits::parse(units, pg).is_err(), "{units}");
    }
    assert!(matches!(
        TimeUnits::parse("days since 2001-02-29", CfCalendar::NoLeap),
        Err(CfTimeError::BadReference { .. })
    ));
    assert!(TimeUnits::parse("days since 2001-02-30", CfCalendar::Day360).is_ok());
    assert!(matches!(CfCalendar::parse(Some("lunar")), Err(CfTimeError::UnknownCalendar(_))));
    assert_eq!(CfCalendar::parse(None).unwrap(), CfCalendar::Standard);
    assert_eq!(CfCalendar::parse(Some(" NOLEAP ")).unwrap(), CfCalendar::NoLeap);
    let u = TimeUnits::parse("days since 2000-01-01", pg).unwrap();
    assert!(matches!(u.date_of(f64::NAN), Err(CfTimeError::NotFinite(_))));
    assert!(matches!(u.date_of(1e300), Err(CfTimeError::OutOfRange(_))));
    assert!(matches!(u.date_of(1e9), Err(CfTimeError::OutOfRange(_))));
}

#[test]
fn day_of_year_follows_each_calendar() {
    let d = |y, m, dd| CfDate { year: y, month: m, day: dd };
    assert_eq!(CfCalendar::NoLeap.day_of_year(d(2000, 3, 1)), 60);
    assert_eq!(CfCalendar::AllLeap.day_of_year(d(2001, 3, 1)), 61);
    assert_eq!(CfCalendar::Day360.day_of_year(d(2001, 12, 30)), 360);
    assert_eq!(CfCalendar::Day360.day_of_year(d(2001, 2, 30)), 60);
    assert_eq!(CfCalendar::Standard.day_of_year(d(1582, 10, 15)), 288);
    assert_eq!(CfCalendar::ProlepticGregorian.day_of_year(d(2000, 12, 31)), 366);
}
