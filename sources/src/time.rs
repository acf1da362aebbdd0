//! Time: [`Timestamp`], the time of a fetch record or a WARC record, and the
//! calendar arithmetic behind it and the dates of page-level rules (days since
//! 1970-01-01 and back, without a date crate).

use std::fmt;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date (year, month, day) `days` after 1970-01-01:
/// the inverse of [`days_from_civil`].
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// A time that is not RFC 3339 ([`Timestamp::parse_rfc3339`]): the text and
/// what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeError {
    /// The text as given.
    pub text: String,
    /// What is wrong (`no such date`, `digit expected`, ...).
    pub why: String,
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad RFC 3339 time {:?}: {}", self.text, self.why)
    }
}

impl std::error::Error for TimeError {}

/// A point in time, UTC, to the nanosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    unix_seconds: i64,
    nanos: u32,
}

impl Timestamp {
    /// The time `unix_seconds` after 1970-01-01T00:00:00Z.
    pub fn from_unix(unix_seconds: i64) -> Timestamp {
        Timestamp { unix_seconds, nanos: 0 }
    }

    /// The time `unix_seconds` and `nanos` (below 10^9) after 1970-01-01T00:00:00Z.
    pub fn from_unix_nanos(unix_seconds: i64, nanos: u32) -> Timestamp {
        Timestamp { unix_seconds, nanos: nanos.min(999_999_999) }
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    pub fn unix_seconds(self) -> i64 {
        self.unix_seconds
    }

    /// The nanoseconds past [`Timestamp::unix_seconds`] (0..1e9): with it,
    /// tools that order records elsewhere (robotsieve.spark) order them as
    /// `Corpus::resolve` does.
    pub fn subsec_nanos(self) -> u32 {
        self.nanos
    }

    /// Parses an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`
    /// (`t`, `z` and a space for `T` accepted, as RFC 3339 allows). WARC-Date
    /// uses the same form.
    pub fn parse_rfc3339(text: &str) -> Result<Timestamp, TimeError> {
        let bad = |why: &str| TimeError { text: text.to_owned(), why: why.to_owned() };
        let b = text.as_bytes();
        let digits = |range: std::ops::Range<usize>| -> Result<i64, TimeError> {
            let part = b.get(range).ok_or_else(|| bad("too short"))?;
            if part.iter().all(u8::is_ascii_digit) {
                Ok(part.iter().fold(0i64, |n, &d| n * 10 + i64::from(d - b'0')))
            } else {
                Err(bad("digit expected"))
            }
        };
        let expect = |at: usize, allowed: &[u8]| -> Result<(), TimeError> {
            match b.get(at) {
                Some(c) if allowed.contains(c) => Ok(()),
                _ => Err(bad(&format!("{:?} expected at byte {at}", allowed[0] as char))),
            }
        };
        let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        expect(4, b"-")?;
        expect(7, b"-")?;
        expect(10, b"Tt ")?;
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        expect(13, b":")?;
        expect(16, b":")?;
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return Err(bad("no such date"));
        }
        if hour > 23 || minute > 59 || second > 60 {
            return Err(bad("no such time of day"));
        }
        let mut at = 19;
        let mut nanos = 0u32;
        if b.get(at) == Some(&b'.') {
            let start = at + 1;
            at = start;
            while b.get(at).is_some_and(u8::is_ascii_digit) {
                if at - start < 9 {
                    nanos = nanos * 10 + u32::from(b[at] - b'0');
                }
                at += 1;
            }
            if at == start {
                return Err(bad("digits expected after '.'"));
            }
            nanos *= 10u32.pow(9u32.saturating_sub((at - start) as u32));
        }
        let offset = match b.get(at) {
            Some(b'Z' | b'z') if at + 1 == b.len() => 0,
            Some(&sign @ (b'+' | b'-')) if at + 6 == b.len() => {
                expect(at + 3, b":")?;
                let (oh, om) = (digits(at + 1..at + 3)?, digits(at + 4..at + 6)?);
                if oh > 23 || om > 59 {
                    return Err(bad("no such offset"));
                }
                let offset = oh * 3600 + om * 60;
                if sign == b'+' {
                    offset
                } else {
                    -offset
                }
            }
            _ => return Err(bad("time zone (Z or +HH:MM) expected at the end")),
        };
        let days = days_from_civil(year, month, day);
        let unix_seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
        Ok(Timestamp { unix_seconds, nanos })
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in UTC: `2026-11-01T12:00:00Z` (fraction only when non-zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.unix_seconds.div_euclid(86_400);
        let secs = self.unix_seconds.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(f, "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)?;
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        f.write_str("Z")
    }
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days of `month` (1 to 12) of `year`, proleptic Gregorian:
/// what checks a date of a fetch record, a WARC record or a page rule.
pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_print_as_iso_8601_and_round_trip() {
        for days in [-719_468, -1, 0, 1, 11_016, 19_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(Timestamp::from_unix(0).to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(Timestamp::from_unix(951_782_400).to_string(), "2000-02-29T00:00:00Z");
    }
}
