//! robotsieve's URL parser against the `url` crate (servo's implementation of
//! the WHATWG URL Standard), which real fetchers agree with: the checks that
//! the property tests, the real-URL test and the URL fuzz target all run.
//!
//! Both functions are total: they never panic, on any bytes, and say what
//! disagrees in their `Err`.

use robotsieve_core::pattern;
use robotsieve_core::url::{origin_hash, path_params_query, trim_c0_and_space, KeyBuf, UrlError};
use std::fmt::Write as _;

/// Checks [`KeyBuf::parse`] on `input` against `url::Url::parse`:
///
/// - where both accept, the origin keys are equal, and robotsieve's default
///   path ([`Origin::path`](robotsieve_core::url::Origin::path)) is the
///   oracle's path and query (`url[BeforePath..AfterQuery]`) escaped as
///   robots.txt patterns are ([`pattern::escape`]: upper-case hex);
/// - where the oracle refuses, robotsieve calls the URL invalid;
/// - where the oracle accepts and robotsieve refuses, the refusal is one of
///   the deliberate exceptions: a scheme other than http, https or ftp
///   ([`UrlError::UnsupportedScheme`]), or no two slashes after the scheme
///   ([`UrlError::MissingSlashes`], checked here on the input itself).
///
/// The oracle takes text: bytes of `input` that are not UTF-8 are handed to
/// it percent-encoded (`%FF`), which is what robotsieve does with them in a
/// path (it escapes each such byte on its own) and in a host (a
/// percent-decoded host that is not UTF-8 is invalid either way).
pub fn check_against_url_crate(input: &[u8]) -> Result<(), String> {
    let text = oracle_text(input);
    let oracle = url::Url::parse(&text);
    let mut buf = KeyBuf::new();
    let ours = buf.parse(input);
    let shown = || format!("{:?}", String::from_utf8_lossy(input));
    match (oracle, ours) {
        (Err(_), Err(_)) => Ok(()),
        (Err(e), Ok(origin)) => Err(format!(
            "{}: the url crate refuses it ({e}), robotsieve gives origin {:?}",
            shown(),
            String::from_utf8_lossy(origin.key)
        )),
        (Ok(url), Err(e)) => match e {
            UrlError::UnsupportedScheme if !matches!(url.scheme(), "http" | "https" | "ftp") => Ok(()),
            UrlError::MissingSlashes if !has_two_slashes_after_scheme(input) => Ok(()),
            _ => Err(format!("{}: the url crate reads {url}, robotsieve refuses it: {e}", shown())),
        },
        (Ok(url), Ok(origin)) => {
            let mut key = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
            if let Some(port) = url.port() {
                let _ = write!(key, ":{port}");
            }
            let path =
                pattern::escape(url[url::Position::BeforePath..url::Position::AfterQuery].as_bytes()).into_owned();
            let paths_differ = origin.path != path && !url_crate_keeps_drive_letter(&text);
            if origin.key != key.as_bytes() || paths_differ {
                return Err(format!(
                    "{}: the url crate gives origin {key:?} and path {:?}, robotsieve {:?} and {:?}",
                    shown(),
                    String::from_utf8_lossy(&path),
                    String::from_utf8_lossy(origin.key),
                    String::from_utf8_lossy(origin.path)
                ));
            }
            Ok(())
        }
    }
}

/// Checks that [`KeyBuf::parse`] (fast path first, whose key may be the
/// URL's own first bytes) and [`KeyBuf::parse_complete`] (the complete
/// parser alone, which always builds the key) give the same answer on
/// `input`: key, its [`origin_hash`], path, scheme, port and host, and that the Google path both give is
/// [`path_params_query`] of the trimmed URL; and that [`KeyBuf::locate`]
/// places the same key and path as [`KeyBuf::parse`].
pub fn check_fast_path(input: &[u8]) -> Result<(), String> {
    let (mut fast, mut complete) = (KeyBuf::new(), KeyBuf::new());
    let shown = || format!("{:?}", String::from_utf8_lossy(input));
    check_locate(input).map_err(|e| format!("{}: {e}", shown()))?;
    match (fast.parse(input), complete.parse_complete(input)) {
        (Ok(f), Ok(c)) => {
            let parts = |o: &robotsieve_core::url::Origin<'_>| {
                (o.key.to_vec(), origin_hash(o.key), o.path.to_vec(), o.scheme, o.port, o.host().to_vec())
            };
            if parts(&f) != parts(&c) {
                return Err(format!(
                    "{}: the fast path gives {:?}, the complete parser {:?}",
                    shown(),
                    parts(&f),
                    parts(&c)
                ));
            }
            let google = path_params_query(trim_c0_and_space(input));
            if f.google_path() != google || c.google_path() != google {
                return Err(format!(
                    "{}: Google's path is {:?}, the fast path gives {:?}, the complete parser {:?}",
                    shown(),
                    String::from_utf8_lossy(&google),
                    String::from_utf8_lossy(&f.google_path()),
                    String::from_utf8_lossy(&c.google_path())
                ));
            }
            Ok(())
        }
        (Err(f), Err(c)) if f == c => Ok(()),
        (f, c) => Err(format!(
            "{}: the fast path gives {:?}, the complete parser {:?}",
            shown(),
            f.map(|o| String::from_utf8_lossy(o.key).into_owned()),
            c.map(|o| String::from_utf8_lossy(o.key).into_owned())
        )),
    }
}

/// Whether [`KeyBuf::locate`] places the key and the default-mode path
/// [`KeyBuf::parse`] gives (the bytes its spans name, in the URL or in the
/// buffer), or fails with the same error: the filter's grouped path reads
/// URLs through `locate`, everything else through `parse`.
fn check_locate(input: &[u8]) -> Result<(), String> {
    let (mut parsing, mut locating) = (KeyBuf::new(), KeyBuf::new());
    let parsed = parsing.parse(input).map(|o| (o.key.to_vec(), o.path.to_vec()));
    let located = locating.locate(input).map(|spans| {
        let key = spans.key.map_or(locating.key(), |range| &input[range]);
        let path = spans.path.map_or(locating.path(), |range| &input[range]);
        (key.to_vec(), path.to_vec())
    });
    if parsed != located {
        return Err(format!("parse gives {parsed:?}, locate {located:?}"));
    }
    Ok(())
}

/// Whether `text` has a path segment that is a Windows drive letter (`c:`,
/// `c|`) with a dot-dot segment after it. The url crate (2.5.8) then keeps
/// the drive letter that the standard's "shorten a URL's path" removes for
/// every scheme but `file` (its `last_slash_can_be_removed` looks for drive
/// letters whatever the scheme): it reads `https://a.com/x/c:/../y` as path
/// `/x/c:/y` where the standard, browsers and robotsieve give `/x/y`. The
/// paths of such inputs are not compared (their origins still are). Found by
/// the `url` fuzz target (fuzz/regressions/url/).
fn url_crate_keeps_drive_letter(text: &str) -> bool {
    // Read as the standard reads it: outer C0 controls and spaces stripped
    // (so `/..\0` ends in a dot-dot segment), tabs and newlines removed.
    let trimmed = text.trim_matches(|c: char| c <= ' ');
    let clean: String = trimmed.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let path = clean.split(['?', '#']).next().unwrap_or_default();
    let mut drive_letter_seen = false;
    for segment in path.split(['/', '\\']) {
        let bytes = segment.as_bytes();
        if drive_letter_seen && matches!(segment.to_ascii_lowercase().as_str(), ".." | ".%2e" | "%2e." | "%2e%2e") {
            return true;
        }
        drive_letter_seen |= bytes.len() == 2 && bytes[0].is_ascii_alphabetic() && matches!(bytes[1], b':' | b'|');
    }
    false
}

/// `input` as text for the oracle: UTF-8 as it is, each other byte as `%XX`.
fn oracle_text(input: &[u8]) -> String {
    let mut text = String::with_capacity(input.len());
    for chunk in input.utf8_chunks() {
        text.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(text, "%{b:02X}");
        }
    }
    text
}

/// Whether the scheme of `input` is followed by two slashes (`/` or `\`),
/// read as the standard reads it: outer C0 controls and spaces stripped,
/// tabs and newlines removed.
fn has_two_slashes_after_scheme(input: &[u8]) -> bool {
    let clean: Vec<u8> =
        trim_c0_and_space(input).iter().copied().filter(|b| !matches!(b, b'\t' | b'\n' | b'\r')).collect();
    let Some(colon) = clean.iter().position(|&b| b == b':') else { return false };
    matches!(clean.get(colon + 1..colon + 3), Some([a, b]) if matches!(a, b'/' | b'\\') && matches!(b, b'/' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_drive_letters_before_a_dot_dot_escape_the_path_comparison() {
        // The url crate keeps `w:` here; the standard removes it, as robotsieve does.
        let mut buf = KeyBuf::new();
        assert_eq!(buf.parse(b"https://a.com/x/w:/../y").unwrap().path, b"/x/y");
        for input in ["https://a.com/x/w:/../y", r"https://a.com/w|\%2E./y", "https://a.com/a/b/W:/x/../y"] {
            assert!(url_crate_keeps_drive_letter(input), "{input}");
            assert_eq!(check_against_url_crate(input.as_bytes()), Ok(()), "{input}");
        }
        for input in ["https://a.com/x/ww:/../y", "https://a.com/../w:/y", "https://a.com/x/w:/y?/../"] {
            assert!(!url_crate_keeps_drive_letter(input), "{input}");
        }
        assert!(check_against_url_crate(b"https://a.com/x/ww:/../y").is_ok());
    }

    #[test]
    fn origin_confusion_examples() {
        // The origin-confusion hole: the backslash ends the authority.
        let mut buf = KeyBuf::new();
        let origin = buf.parse(br"http://evil.com\@good.com/").unwrap();
        assert_eq!(origin.key, b"http://evil.com");
        assert_eq!(origin.path, b"/@good.com/");
        for url in
            [&br"http://evil.com\@good.com/"[..], b"https://u;x@example.com/ab/", b"http://0x7f.1/", b"http://xn--/"]
        {
            check_against_url_crate(url).unwrap();
            check_fast_path(url).unwrap();
        }
    }

    #[test]
    fn deliberate_exceptions_pass() {
        // The deliberate exception is accepted, a made-up one is not.
        assert!(check_against_url_crate(b"http:example.com").is_ok());
        assert!(has_two_slashes_after_scheme(b" ht\ttp:/\\x"));
        assert!(!has_two_slashes_after_scheme(b"http:/x"));
        assert_eq!(oracle_text(b"a\xffb\xc3\xa9"), "a%FFb\u{e9}");
    }
}
