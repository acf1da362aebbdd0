//! The dates of `unavailable_after`.

use robotsieve_sources::time::{days_from_civil, days_in_month, Timestamp};

fn number(text: &str, digits: std::ops::RangeInclusive<usize>) -> Option<i64> {
    (digits.contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok())?
}

/// Seconds since the epoch of a calendar date and time, checked.
fn instant(y: i64, m: i64, d: i64, (hh, mm, ss): (i64, i64, i64), offset: i64) -> Option<Timestamp> {
    let valid = (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m) && hh < 24 && mm < 60 && ss <= 60;
    valid.then(|| Timestamp::from_unix(days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss.min(59) - offset))
}

/// `HH:MM` or `HH:MM:SS` (fractions of a second dropped).
fn time_of_day(text: &str) -> Option<(i64, i64, i64)> {
    let mut parts = text.split(':');
    let hh = number(parts.next()?, 1..=2)?;
    let mm = number(parts.next()?, 2..=2)?;
    let ss = match parts.next() {
        Some(s) => number(s.split('.').next()?, 2..=2)?,
        None => 0,
    };
    parts.next().is_none().then_some((hh, mm, ss))
}

/// A zone as an offset east of UTC in seconds: `Z`, `GMT`, `UT`, `UTC`, the
/// US zones of RFC 822, `+HHMM`, `+HH:MM`.
fn zone_offset(text: &str) -> Option<i64> {
    let named = match text.to_ascii_uppercase().as_str() {
        "Z" | "GMT" | "UT" | "UTC" => Some(0),
        "EDT" => Some(-4),
        "EST" | "CDT" => Some(-5),
        "CST" | "MDT" => Some(-6),
        "MST" | "PDT" => Some(-7),
        "PST" => Some(-8),
        _ => None,
    };
    if let Some(hours) = named {
        return Some(hours * 3600);
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|&c| c != ':').collect();
    let hh = number(digits.get(..2)?, 2..=2)?;
    let mm = if digits.len() == 4 {
        number(&digits[2..], 2..=2)?
    } else if digits.len() == 2 {
        0
    } else {
        return None;
    };
    Some(sign * (hh * 3600 + mm * 60))
}

/// Reads an `unavailable_after` date: ISO 8601 (`2020-09-21`,
/// `2020-09-21T15:00:00+02:00`, `2020-09-21 15:00Z`), RFC 822/1123
/// (`Wed, 25 Jun 2010 15:00:00 PST`, the weekday optional) or RFC 850
/// (`Wednesday, 25-Jun-10 15:00:00 GMT`). A date without a zone is UTC.
pub fn parse_date(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    if let Some(date) = text.get(..10).filter(|d| d.as_bytes().get(4) == Some(&b'-')) {
        let mut parts = date.split('-');
        let y = number(parts.next()?, 4..=4)?;
        let m = number(parts.next()?, 2..=2)?;
        let d = number(parts.next()?, 2..=2)?;
        let rest = text[10..].trim_start_matches(['T', 't', ' ']);
        if rest.is_empty() {
            return instant(y, m, d, (0, 0, 0), 0);
        }
        let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
        let time = time_of_day(rest[..zone_at].trim())?;
        let zone = rest[zone_at..].trim();
        let offset = if zone.is_empty() { 0 } else { zone_offset(zone)? };
        return instant(y, m, d, time, offset);
    }
    // RFC 822 / 850: drop the weekday, then `DD Mon YYYY` or `DD-Mon-YY`.
    let text = match text.split_once(',') {
        Some((weekday, rest)) if weekday.trim().bytes().all(|b| b.is_ascii_alphabetic()) => rest,
        _ => text,
    };
    let mut words = text.split_ascii_whitespace();
    let first = words.next()?;
    let (day, month, year) = if first.contains('-') {
        let mut parts = first.split('-');
        let date = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        date
    } else {
        (first, words.next()?, words.next()?)
    };
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month = month.get(..3).filter(|_| month.len() >= 3)?.to_ascii_lowercase();
    let m = MONTHS.iter().position(|&name| name == month)? as i64 + 1;
    let d = number(day, 1..=2)?;
    let y = match year.len() {
        2 => number(year, 2..=2).map(|y| if y < 50 { 2000 + y } else { 1900 + y })?,
        _ => number(year, 4..=4)?,
    };
    let time = match words.next() {
        Some(t) => time_of_day(t)?,
        None => (0, 0, 0),
    };
    let offset = match words.next() {
        Some(z) => zone_offset(z)?,
        None => 0,
    };
    if words.next().is_some() {
        return None;
    }
    instant(y, m, d, time, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_the_documented_formats() {
        // 2010-06-25 23:00:00 UTC, written every way.
        let utc = Timestamp::from_unix(1_277_506_800);
        for text in [
            "25 Jun 2010 15:00:00 PST",
            "Friday, 25-Jun-10 23:00:00 GMT",
            "Fri, 25 Jun 2010 23:00:00 +0000",
            "2010-06-25T23:00:00Z",
            "2010-06-25T16:00:00-07:00",
            "2010-06-25 23:00",
        ] {
            assert_eq!(parse_date(text), Some(utc), "{text}");
        }
        assert_eq!(parse_date("2020-09-21").map(|t| t.to_string()), Some("2020-09-21T00:00:00Z".into()));
        for bad in ["2010-02-30", "2010-13-01", "tomorrow", "25 Foo 2010", "2010-06-25T25:00", ""] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }
}
