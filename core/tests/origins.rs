//! Origins: which robots.txt governs a URL. The shared conformance cases of
//! `origins.jsonl`, agreement with `path_params_query` on real URLs, and the
//! corner cases of URL syntax.

use robotsieve_core::url::{origin_hash, path_params_query, KeyBuf, OriginKey, Scheme, UrlError};
use robotsieve_testkit::shared_dir;
use std::collections::HashMap;

fn key(url: &str) -> Result<String, UrlError> {
    OriginKey::of_url(url).map(|k| k.to_string())
}

fn path(url: &str) -> String {
    let mut buf = KeyBuf::new();
    let origin = buf.parse(url.as_bytes()).unwrap();
    String::from_utf8(origin.path.to_vec()).unwrap()
}

#[test]
fn conformance_origins_jsonl() {
    let Some(file) = shared_dir().map(|d| d.join("conformance/origins.jsonl")).filter(|p| p.is_file()) else {
        eprintln!("skipped: ../shared/conformance/origins.jsonl is absent");
        return;
    };
    let text = std::fs::read_to_string(&file).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        let robots_url = case["robots_url"].as_str().unwrap();
        let url = case["url"].as_str().unwrap();
        let expected = case["applies"].as_bool().unwrap();
        let governed = OriginKey::of_url(url).unwrap();
        let got = OriginKey::of_robots_url(robots_url).is_ok_and(|k| k == governed);
        if got != expected {
            failures.push(format!("line {}: {robots_url} governs {url}: expected {expected}, got {got}", i + 1));
        }
        count += 1;
    }
    assert!(count > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("origins.jsonl: {count} cases passed");
}

/// On the real URL lists, every URL the origin parser accepts has the path
/// Google's `path_params_query` gives as its raw path, and nearly every URL is
/// accepted. (The default path is checked against the `url` crate in
/// testkit's `url_oracle` tests.)
#[test]
fn path_agrees_with_path_params_query_on_real_urls() {
    let Some(dir) = shared_dir() else {
        eprintln!("skipped: ../shared is absent");
        return;
    };
    let mut urls = Vec::new();
    if let Ok(text) = std::fs::read_to_string(dir.join("realworld/urls/crawl2019-linkgraph.tsv")) {
        urls.extend(text.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).map(str::to_owned));
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("realworld/urls/kasztp-urls.txt")) {
        urls.extend(text.lines().map(str::to_owned));
    }
    if urls.is_empty() {
        eprintln!("skipped: the URL lists of ../shared/realworld/urls are absent");
        return;
    }
    let mut buf = KeyBuf::new();
    let (mut accepted, mut normalised, mut disagreements) = (0usize, 0usize, Vec::new());
    let mut rejected: HashMap<UrlError, usize> = HashMap::new();
    for url in &urls {
        match buf.parse(url.as_bytes()) {
            Ok(origin) => {
                accepted += 1;
                let google = path_params_query(url.trim().as_bytes());
                if origin.google_path() != google {
                    disagreements.push(format!(
                        "{url}: {} vs {}",
                        String::from_utf8_lossy(&origin.google_path()),
                        String::from_utf8_lossy(&google)
                    ));
                }
                if origin.path != &*robotsieve_core::pattern::escape(&google) {
                    normalised += 1;
                }
            }
            Err(e) => *rejected.entry(e).or_default() += 1,
        }
    }
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.join("\n"));
    let rejected_total: usize = rejected.values().sum();
    eprintln!(
        "{accepted} of {} real URLs accepted, raw paths agree, {normalised} default paths differ from the escaped raw path; rejected: {rejected:?}",
        urls.len()
    );
    assert!(rejected_total * 100 < urls.len(), "more than 1% of real URLs rejected: {rejected:?}");
}

#[test]
fn origin_hash_is_pinned() {
    // These values are part of the artifact format: they must never change.
    assert_eq!(origin_hash(b""), PIN_EMPTY);
    assert_eq!(origin_hash(b"http://example.com"), PIN_EXAMPLE);
    assert_eq!(origin_hash(b"https://www.xn--mnchen-3ya.de:8443"), PIN_MUNCHEN);
    assert_eq!(OriginKey::of_url("HTTP://Example.COM:80/x").unwrap().hash64(), PIN_EXAMPLE);
}
// Computed from the documented definition by an independent Python script.
const PIN_EMPTY: u64 = 0x3836_f068_1055_a942;
const PIN_EXAMPLE: u64 = 0x9606_af6b_300e_f0ed;
const PIN_MUNCHEN: u64 = 0x7c22_9628_76e4_a4a1;

#[test]
fn origin_hash_has_no_collisions_on_near_keys() {
    // Keys that differ in one byte, in length, or in word alignment.
    let mut seen = HashMap::new();
    for i in 0..20_000u32 {
        for k in [
            format!("http://h{i}.example.com"),
            format!("https://h{i}.example.com:{}", i % 65_536),
            format!("ftp://{i}"),
        ] {
            if let Some(other) = seen.insert(origin_hash(k.as_bytes()), k.clone()) {
                panic!("{k} and {other} collide");
            }
        }
    }
}

#[test]
fn scheme_and_host_ignore_case() {
    assert_eq!(key("HTTP://WWW.Example.COM/Path").unwrap(), "http://www.example.com");
    assert_eq!(key("HtTpS://example.com").unwrap(), "https://example.com");
    assert_eq!(key("FTP://Files.Example.com/x").unwrap(), "ftp://files.example.com");
    // The path keeps its case.
    assert_eq!(path("HTTP://WWW.Example.COM/Path"), "/Path");
}

#[test]
fn user_info_is_dropped() {
    assert_eq!(key("http://user:pass@example.com/x").unwrap(), "http://example.com");
    assert_eq!(key("http://user@example.com:8080/").unwrap(), "http://example.com:8080");
    // The last `@` ends the user info.
    assert_eq!(key("http://a@b@example.com/").unwrap(), "http://example.com");
    assert_eq!(path("http://user:pass@example.com/x?y"), "/x?y");
    // An `@` in the path is not user info.
    assert_eq!(key("http://example.com/a@b").unwrap(), "http://example.com");
}

#[test]
fn ports() {
    assert_eq!(key("http://example.com:80/").unwrap(), "http://example.com");
    assert_eq!(key("https://example.com:443/").unwrap(), "https://example.com");
    assert_eq!(key("ftp://example.com:21/").unwrap(), "ftp://example.com");
    assert_eq!(key("http://example.com:443/").unwrap(), "http://example.com:443");
    assert_eq!(key("https://example.com:80/").unwrap(), "https://example.com:80");
    assert_eq!(key("http://example.com:8080").unwrap(), "http://example.com:8080");
    assert_eq!(key("http://example.com:0080/").unwrap(), "http://example.com", "leading zeros");
    assert_eq!(key("http://example.com:08080/").unwrap(), "http://example.com:8080");
    assert_eq!(key("http://example.com:/").unwrap(), "http://example.com", "an empty port is no port");
    assert_eq!(key("http://example.com:65535/").unwrap(), "http://example.com:65535");
    assert_eq!(key("http://example.com:0/").unwrap(), "http://example.com:0");
    assert_eq!(key("http://example.com:65536/"), Err(UrlError::InvalidPort));
    assert_eq!(key("http://example.com:99999999999999999999/"), Err(UrlError::InvalidPort));
    assert_eq!(key("http://example.com:8o/"), Err(UrlError::InvalidPort));
    assert_eq!(key("http://example.com:-1/"), Err(UrlError::InvalidPort));
    assert_eq!(key("http://example.com:+80/"), Err(UrlError::InvalidPort));
    let mut buf = KeyBuf::new();
    let o = buf.parse(b"https://example.com:8443/a").unwrap();
    assert_eq!((o.scheme, o.port, o.host()), (Scheme::Https, Some(8443), &b"example.com"[..]));
    let o = buf.parse(b"https://example.com:443/a").unwrap();
    assert_eq!(o.port, None);
}

#[test]
fn internationalised_hosts_become_punycode() {
    assert_eq!(key("http://münchen.de/").unwrap(), "http://xn--mnchen-3ya.de");
    assert_eq!(OriginKey::of_url("http://münchen.de/"), OriginKey::of_url("http://xn--mnchen-3ya.de/a"));
    assert_eq!(key("https://MÜNCHEN.de:8443/").unwrap(), "https://xn--mnchen-3ya.de:8443");
    assert_eq!(key("http://例え.テスト/").unwrap(), "http://xn--r8jz45g.xn--zckzah");
    // Upper-case punycode is lower-cased like any ASCII host.
    assert_eq!(key("http://XN--MNCHEN-3YA.DE/").unwrap(), "http://xn--mnchen-3ya.de");
    // The path is percent-encoded as the fetcher sends it; raw mode keeps it as written.
    assert_eq!(path("http://münchen.de/straße"), "/stra%C3%9Fe");
    assert_eq!(KeyBuf::new().parse("http://münchen.de/straße".as_bytes()).unwrap().google_path(), "/straße".as_bytes());
    // Not UTF-8, or IDNA-invalid.
    assert_eq!(OriginKey::of_url(b"http://m\xfcnchen.de/"), Err(UrlError::HostNotUtf8));
    assert_eq!(key("http://exa mple.ü/"), Err(UrlError::ForbiddenHostCodePoint(b' ')));
    assert_eq!(key("http://a\u{fe0f}\u{200c}.ü/"), Err(UrlError::InvalidIdn));
}

#[test]
fn ipv6_literals_keep_brackets_in_canonical_form() {
    assert_eq!(key("http://[::1]/").unwrap(), "http://[::1]");
    assert_eq!(key("http://[::1]:8080/x").unwrap(), "http://[::1]:8080");
    assert_eq!(key("http://[2001:DB8:0:0:0:0:0:1]:80/").unwrap(), "http://[2001:db8::1]");
    assert_eq!(key("http://[2001:db8::1]").unwrap(), "http://[2001:db8::1]");
    assert_eq!(path("http://[2001:db8::1]:81?q"), "/?q");
    assert_eq!(key("http://[::1/"), Err(UrlError::InvalidIpv6));
    assert_eq!(key("http://[example.com]/"), Err(UrlError::InvalidIpv6));
    assert_eq!(key("http://[fe80::1%25eth0]/"), Err(UrlError::InvalidIpv6));
    assert_eq!(key("http://[::1]x/"), Err(UrlError::InvalidIpv6));
    assert_eq!(key("http://[::ffff:192.0.2.1]/").unwrap(), "http://[::ffff:c000:201]");
    assert_eq!(key("http://[::1]:x/"), Err(UrlError::InvalidPort));
    assert_eq!(key("http://[]/"), Err(UrlError::InvalidIpv6));
    assert_eq!(key("http://212.96.82.21:80/").unwrap(), "http://212.96.82.21");
}

#[test]
fn paths_and_fragments() {
    assert_eq!(path("http://example.com"), "/");
    assert_eq!(path("http://example.com/"), "/");
    assert_eq!(path("http://example.com?a=b"), "/?a=b");
    assert_eq!(path("http://example.com#frag"), "/");
    assert_eq!(path("http://example.com#frag/x"), "/");
    assert_eq!(path("http://example.com/a/b?c=d#e?f"), "/a/b?c=d");
    assert_eq!(path("http://example.com:8080?x#y"), "/?x");
    // A `;` is a host code point for the standard: it does not end the authority.
    assert_eq!(path("http://example.com;jsessionid=1"), "/");
    assert_eq!(key("http://example.com;jsessionid=1").unwrap(), "http://example.com;jsessionid=1");
    let mut buf = KeyBuf::new();
    assert_eq!(buf.parse(b"http://example.com;jsessionid=1").unwrap().google_path(), &b"/;jsessionid=1"[..]);
    assert_eq!(path("http://example.com/a?next=http://other.org/b"), "/a?next=http://other.org/b");
    assert_eq!(key("http://example.com?next=http://other.org/b").unwrap(), "http://example.com");
    assert_eq!(key("http://example.com#@evil.org/").unwrap(), "http://example.com");
    // White space around the URL (a line of a URL list) is ignored.
    assert_eq!(path("  http://example.com/a \r\n"), "/a");
    assert_eq!(key("\thttp://example.com/a\r").unwrap(), "http://example.com");
}

#[test]
fn robots_urls() {
    assert_eq!(OriginKey::of_robots_url("https://Example.com:443/robots.txt").unwrap().as_str(), "https://example.com");
    assert_eq!(
        OriginKey::of_robots_url("http://example.com:8181/robots.txt#x").unwrap().as_str(),
        "http://example.com:8181"
    );
    for not_robots in [
        "http://example.com/folder/robots.txt",
        "http://example.com/robots.txt?x=1",
        "http://example.com/ROBOTS.TXT",
        "http://example.com/",
        "http://example.com/robots.txt/",
    ] {
        assert_eq!(OriginKey::of_robots_url(not_robots), Err(UrlError::NotRobotsTxt), "{not_robots}");
    }
    let key = OriginKey::of_robots_url("http://example.com/robots.txt").unwrap();
    assert_eq!(key.robots_url(), "http://example.com/robots.txt");
}

#[test]
fn garbage_is_rejected_with_a_reason() {
    assert_eq!(key(""), Err(UrlError::NotAbsolute));
    assert_eq!(key("/relative/path"), Err(UrlError::NotAbsolute));
    assert_eq!(key("example.com/a"), Err(UrlError::NotAbsolute));
    assert_eq!(key("//example.com/a"), Err(UrlError::NotAbsolute));
    assert_eq!(key("http:/example.com/"), Err(UrlError::MissingSlashes));
    assert_eq!(key("http:example.com"), Err(UrlError::MissingSlashes));
    assert_eq!(key("1http://example.com"), Err(UrlError::NotAbsolute));
    assert_eq!(key("mailto:someone@example.com"), Err(UrlError::UnsupportedScheme));
    assert_eq!(key("javascript://comment"), Err(UrlError::UnsupportedScheme));
    assert_eq!(key("file:///etc/passwd"), Err(UrlError::UnsupportedScheme));
    assert_eq!(key("ws://example.com/"), Err(UrlError::UnsupportedScheme));
    // More slashes are skipped, as the standard skips them: the host is "path".
    assert_eq!(key("http:///path").unwrap(), "http://path");
    assert_eq!(key("http:///"), Err(UrlError::EmptyHost));
    assert_eq!(key("http://"), Err(UrlError::EmptyHost));
    assert_eq!(key("http://:80/"), Err(UrlError::EmptyHost));
    assert_eq!(key("http://user@/"), Err(UrlError::EmptyHost));
    assert_eq!(key("http://exa mple.com/"), Err(UrlError::ForbiddenHostCodePoint(b' ')));
    assert_eq!(key("http://exa<mple.com/"), Err(UrlError::ForbiddenHostCodePoint(b'<')));
    assert_eq!(key("http://example.com\x00/"), Err(UrlError::ForbiddenHostCodePoint(0)));
    assert_eq!(key("http://ex%00ample.com/"), Err(UrlError::ForbiddenHostCodePoint(0)));
    assert_eq!(key("http://ex%ff.com/"), Err(UrlError::HostNotUtf8));
    assert!(UrlError::ForbiddenHostCodePoint(b'<').to_string().contains("'<'"));
    // Percent-escapes in hosts are decoded, as fetchers decode them.
    assert_eq!(key("http://ex%61mple.com/").unwrap(), "http://example.com");
    // A backslash ends the authority (and the path gets a slash).
    assert_eq!(key("http://example.com\\path").unwrap(), "http://example.com");
    assert_eq!(path("http://example.com\\path"), "/path");
}

#[test]
fn very_long_lines_are_handled() {
    let long_path = format!("http://example.com/{}", "a".repeat(1 << 20));
    assert_eq!(key(&long_path).unwrap(), "http://example.com");
    assert_eq!(path(&long_path).len(), (1 << 20) + 1);
    let long_host = format!("http://{}.com/x", "h".repeat(100_000));
    assert_eq!(key(&long_host).unwrap().len(), "http://".len() + 100_000 + 4);
    let long_port = format!("http://example.com:{}/", "1".repeat(100_000));
    assert_eq!(key(&long_port), Err(UrlError::InvalidPort));
    let garbage: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    assert!(OriginKey::of_url(&garbage).is_err());
}

#[test]
fn key_buffer_is_reused() {
    let mut buf = KeyBuf::new();
    let first = buf.parse(b"https://a-much-longer-host-name.example.com:8443/x").unwrap().key.to_vec();
    assert_eq!(first, b"https://a-much-longer-host-name.example.com:8443");
    let o = buf.parse(b"http://b.org?q").unwrap();
    assert_eq!((o.key, o.path), (&b"http://b.org"[..], &b"/?q"[..]));
    let o = buf.parse(b"http://c.org/p").unwrap();
    assert_eq!((o.key, o.path), (&b"http://c.org"[..], &b"/p"[..]));
}

#[test]
fn owned_keys_order_and_borrow_as_bytes() {
    let mut map = std::collections::BTreeMap::new();
    map.insert(OriginKey::of_url("https://b.org/").unwrap(), 2);
    map.insert(OriginKey::of_url("http://a.org/").unwrap(), 1);
    assert_eq!(map.get(&b"http://a.org"[..]), Some(&1));
    let keys: Vec<String> = map.keys().map(ToString::to_string).collect();
    assert_eq!(keys, ["http://a.org", "https://b.org"]);
}

mod generated {
    use super::*;
    use proptest::prelude::*;

    fn scheme() -> impl Strategy<Value = (&'static str, u16)> {
        prop_oneof![Just(("http", 80)), Just(("https", 443)), Just(("ftp", 21))]
    }

    fn mixed_case(s: String, flips: Vec<bool>) -> String {
        s.chars()
            .zip(flips.into_iter().chain(std::iter::repeat(false)))
            .map(|(c, f)| if f { c.to_ascii_uppercase() } else { c })
            .collect()
    }

    proptest! {
        /// Any ordinary URL built from parts gives the key built independently
        /// from the same parts, the key is a fixpoint, and the raw path agrees
        /// with Google's `path_params_query`.
        #[test]
        fn keys_from_parts(
            (scheme, default_port) in scheme(),
            scheme_flips in proptest::collection::vec(any::<bool>(), 5),
            // No label starts with `x` (`xn--`) or a digit (an IPv4 number).
            labels in proptest::collection::vec("[a-wyz][a-z0-9-]{0,10}", 1..4),
            host_flips in proptest::collection::vec(any::<bool>(), 40),
            user in proptest::option::of("[a-z0-9]{1,5}(:[a-z0-9]{0,5})?"),
            port in proptest::option::of(0u16..),
            path in "(/[a-zA-Z0-9._~%;=&@:-]{0,8}){0,4}(\\?[a-zA-Z0-9=&/:@?-]{0,12})?(#[a-zA-Z0-9/#?]{0,6})?",
        ) {
            let host = labels.join(".");
            let url = format!(
                "{}://{}{}{}{path}",
                mixed_case(scheme.to_owned(), scheme_flips),
                user.map(|u| format!("{u}@")).unwrap_or_default(),
                mixed_case(host.clone(), host_flips),
                port.map(|p| format!(":{p}")).unwrap_or_default(),
            );
            let expected = match port {
                Some(p) if p != default_port => format!("{scheme}://{host}:{p}"),
                _ => format!("{scheme}://{host}"),
            };
            let mut buf = KeyBuf::new();
            let origin = buf.parse(url.as_bytes()).unwrap();
            prop_assert_eq!(std::str::from_utf8(origin.key).unwrap(), expected.as_str());
            prop_assert_eq!(origin.host(), host.as_bytes());
            prop_assert_eq!(origin.google_path(), path_params_query(url.as_bytes()));
            let key = origin.key.to_vec();
            let again = buf.parse(&key).unwrap();
            prop_assert_eq!(again.key, &key[..]);
            prop_assert_eq!(origin_hash(&key), OriginKey::of_url(&url).unwrap().hash64());
        }

        /// Arbitrary bytes never panic, and whatever is accepted has an ASCII
        /// key that is a fixpoint and a path starting with `/`.
        #[test]
        fn arbitrary_bytes(prefix in prop_oneof![Just(""), Just("http://"), Just("HTTPS://"), Just("ftp://u@")], tail in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut url = prefix.as_bytes().to_vec();
            url.extend_from_slice(&tail);
            let mut buf = KeyBuf::new();
            if let Ok(origin) = buf.parse(&url) {
                prop_assert!(origin.key.is_ascii());
                prop_assert!(origin.path.starts_with(b"/"));
                let key = origin.key.to_vec();
                prop_assert_eq!(buf.parse(&key).unwrap().key, &key[..]);
            }
        }
    }
}
