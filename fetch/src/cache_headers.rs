//! What an answer's headers say about keeping it: `max_age` from
//! `Cache-Control` or `Expires`, `retry_after` from `Retry-After`.

use http::header::{HeaderMap, CACHE_CONTROL, DATE, EXPIRES, RETRY_AFTER};
use robotsieve_sources::time::days_from_civil;

/// Seconds the copy may be kept: `s-maxage`, else `max-age`, else `Expires`
/// minus `Date` (or minus `now` without a `Date`); `no-store` or `no-cache`
/// give 0. `None` when the headers say nothing.
pub fn max_age(headers: &HeaderMap, now_unix: i64) -> Option<u64> {
    let mut s_maxage = None;
    let mut max_age = None;
    for value in headers.get_all(CACHE_CONTROL) {
        let Ok(value) = value.to_str() else { continue };
        for directive in value.split(',') {
            let (name, arg) = directive.split_once('=').map_or((directive, None), |(n, a)| (n, Some(a)));
            let name = name.trim().to_ascii_lowercase();
            let seconds = || arg.and_then(|a| a.trim().trim_matches('"').parse::<u64>().ok());
            match name.as_str() {
                "no-store" | "no-cache" => return Some(0),
                "s-maxage" => s_maxage = s_maxage.or_else(seconds),
                "max-age" => max_age = max_age.or_else(seconds),
                _ => {}
            }
        }
    }
    if let Some(seconds) = s_maxage.or(max_age) {
        return Some(seconds);
    }
    let expires = headers.get(EXPIRES)?.to_str().ok();
    // An Expires that is no date (`0`, `-1`) means already expired.
    let Some(expires) = expires.and_then(http_date) else { return Some(0) };
    let date = headers.get(DATE).and_then(|d| d.to_str().ok()).and_then(http_date).unwrap_or(now_unix);
    Some(expires.saturating_sub(date).max(0) as u64)
}

/// Seconds to wait from `Retry-After` (delta-seconds or an HTTP date).
pub fn retry_after(headers: &HeaderMap, now_unix: i64) -> Option<u64> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds);
    }
    let at = http_date(value)?;
    let date = headers.get(DATE).and_then(|d| d.to_str().ok()).and_then(http_date).unwrap_or(now_unix);
    Some(at.saturating_sub(date).max(0) as u64)
}

/// An HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`; the
/// obsolete RFC 850 and asctime forms too) as Unix seconds.
pub fn http_date(text: &str) -> Option<i64> {
    let words: Vec<&str> = text.split([' ', ',', '-']).filter(|w| !w.is_empty()).collect();
    let month_of = |m: &str| {
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
            .iter()
            .position(|name| m.eq_ignore_ascii_case(name))
            .map(|p| p as i64 + 1)
    };
    // IMF-fixdate and RFC 850: weekday day month year time GMT;
    // asctime: weekday month day time year.
    let (day, month, year, time) = match words.as_slice() {
        [_, day, month, year, time, ..] if month_of(month).is_some() => (*day, month_of(month)?, *year, *time),
        [_, month, day, time, year] => (*day, month_of(month)?, *year, *time),
        _ => return None,
    };
    let day: i64 = day.parse().ok()?;
    let mut year: i64 = year.parse().ok()?;
    if year < 100 {
        year += if year < 70 { 2000 } else { 1900 };
    }
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, http::HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn max_age_follows_the_order_of_precedence() {
        assert_eq!(max_age(&headers(&[("cache-control", "public, max-age=600, s-maxage=60")]), 0), Some(60));
        assert_eq!(max_age(&headers(&[("cache-control", "max-age=600")]), 0), Some(600));
        assert_eq!(max_age(&headers(&[("cache-control", "no-cache, max-age=600")]), 0), Some(0));
        let dated = headers(&[("date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("expires", "Sun, 06 Nov 1994 09:49:37 GMT")]);
        assert_eq!(max_age(&dated, 0), Some(3600));
        assert_eq!(max_age(&headers(&[("expires", "0")]), 0), Some(0));
        assert_eq!(max_age(&headers(&[]), 0), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(retry_after(&headers(&[("retry-after", "120")]), 0), Some(120));
        let at = headers(&[("retry-after", "Sunday, 06-Nov-94 08:50:37 GMT"), ("date", "Sun Nov  6 08:49:37 1994")]);
        assert_eq!(retry_after(&at, 0), Some(60));
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(784111777));
    }
}
