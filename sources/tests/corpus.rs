//! Corpus readers and the fetch-status rules: status.jsonl, redirects, the
//! 30-day rule, newest-wins, skipped and malformed records, robots
//! directories and WARC files.

use flate2::write::GzEncoder;
use robotsieve_core::url::{OriginKey, PathMode};
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_sources::corpus::{Corpus, CorpusProblem, Place, Reason, RecordError, Resolution, Robots};
use robotsieve_sources::http::{self, HttpError, HttpResponse};
use robotsieve_sources::time::Timestamp;
use robotsieve_sources::warc;
use robotsieve_testkit::conformance::{conformance_file, read_status_cases};
use robotsieve_testkit::shared_dir;
use serde_json::{json, Value};
use std::io::{Cursor, Write};

const NAME: &str = "test.jsonl";
const PRIVATE: &str = "User-agent: *\nDisallow: /private\n";

fn read_jsonl(lines: &[Value]) -> Result<Resolution, String> {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut corpus = Corpus::new();
    corpus.add_jsonl_from(NAME.into(), Cursor::new(text)).map_err(|e| e.to_string())?;
    Ok(corpus.resolve())
}

fn resolve(lines: &[Value]) -> Resolution {
    read_jsonl(lines).unwrap()
}

/// The verdict for `url` under what governs its origin; `None` without one.
fn verdict(resolution: &Resolution, url: &str, agents: &[&str], mode: PathMode) -> Option<bool> {
    let governing = resolution.origins.get(&OriginKey::of_url(url).unwrap())?;
    Some(match &governing.robots {
        Robots::Body(body) => {
            let robots = RobotsTxt::parse(body);
            Group::select(&robots, &Agent::from_raw_tokens(agents)).decide(&mode.path_of(url.as_bytes())).allowed()
        }
        Robots::Unrestricted => true,
        Robots::Blocked => false,
    })
}

fn allowed(resolution: &Resolution, url: &str) -> bool {
    verdict(resolution, url, &["anybot"], PathMode::Escaped).expect("origin governed")
}

fn reason(resolution: &Resolution, url: &str) -> Reason {
    resolution.origins[&OriginKey::of_url(url).unwrap()].provenance.reason
}

fn day(n: i64) -> String {
    Timestamp::from_unix(1_790_000_000 + n * 86_400).to_string()
}

#[test]
fn status_jsonl_cases() {
    let Some(path) = conformance_file("status.jsonl") else {
        eprintln!("skipped: ../shared/conformance/status.jsonl is absent");
        return;
    };
    let cases = read_status_cases(&path).unwrap();
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for case in &cases {
        let origin = OriginKey::of_url(&case.url).unwrap();
        let mut record = json!({"url": origin.robots_url(), "status": case.status, "body": case.robots});
        if case.status == 0 {
            record["error"] = json!("timeout");
        }
        let resolution = resolve(&[record]);
        assert!(resolution.warnings.is_empty(), "{:?}", resolution.warnings);
        let agents: Vec<&str> = case.agents.iter().map(String::as_str).collect();
        for mode in [PathMode::Raw, PathMode::Escaped] {
            let got = verdict(&resolution, &case.url, &agents, mode);
            if got != Some(case.allowed) {
                failures.push(format!(
                    "status {} {} ({mode:?}): expected {}, got {got:?}",
                    case.status, case.url, case.allowed
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("status.jsonl: {} cases passed", cases.len());
}

#[test]
fn status_classes() {
    for (status, expected, why) in [
        (200, Some(false), Reason::Success),
        (204, Some(false), Reason::Success),
        (404, None, Reason::ClientError),
        (451, None, Reason::ClientError),
        (429, Some(true), Reason::Unreachable),
        (500, Some(true), Reason::Unreachable),
        (599, Some(true), Reason::Unreachable),
        (0, Some(true), Reason::Unreachable),
        (100, Some(true), Reason::Unreachable),
        (600, Some(true), Reason::Unreachable),
    ] {
        let r = resolve(&[json!({"url": "https://a.org/robots.txt", "status": status, "body": PRIVATE})]);
        // Some(true): even /public is disallowed; Some(false): only /private; None: nothing.
        let public = allowed(&r, "https://a.org/public");
        let private = allowed(&r, "https://a.org/private");
        match expected {
            Some(true) => assert!(!public && !private, "{status}"),
            Some(false) => assert!(public && !private, "{status}"),
            None => assert!(public && private, "{status}"),
        }
        assert_eq!(reason(&r, "https://a.org/"), why, "{status}");
    }
}

/// A chain of `hops` redirects from a.org's robots.txt, ending in a 200 with PRIVATE.
fn chain(hops: usize) -> Vec<Value> {
    let mut lines = Vec::new();
    for i in 0..hops {
        let from = if i == 0 { "https://a.org/robots.txt".to_owned() } else { format!("https://a.org/r{i}.txt") };
        lines.push(json!({"url": from, "status": 301, "location": format!("/r{}.txt", i + 1)}));
    }
    lines.push(json!({"url": format!("https://a.org/r{hops}.txt"), "status": 200, "body": PRIVATE}));
    lines
}

#[test]
fn redirects_are_followed_for_five_hops() {
    for hops in 1..=5 {
        let r = resolve(&chain(hops));
        assert!(!allowed(&r, "https://a.org/private/x"), "{hops} hops");
        assert!(allowed(&r, "https://a.org/public"), "{hops} hops");
        let provenance = &r.origins[&OriginKey::of_url("https://a.org/").unwrap()].provenance;
        assert_eq!((provenance.reason, provenance.redirects, provenance.status), (Reason::Success, hops, 301));
        assert!(provenance.explanation.contains(&format!("after {hops} redirect")), "{}", provenance.explanation);
        // The redirect targets are used, so they draw no "not at the root" warning.
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        // Only the robots.txt at the root makes an origin.
        assert_eq!(r.origins.len(), 1);
    }
}

#[test]
fn six_redirects_count_as_404() {
    let r = resolve(&chain(6));
    assert!(allowed(&r, "https://a.org/private/x"));
    assert_eq!(reason(&r, "https://a.org/"), Reason::RedirectFailed);
    let explanation = &r.origins[&OriginKey::of_url("https://a.org/").unwrap()].provenance.explanation;
    assert!(explanation.contains("more than 5 redirects"), "{explanation}");
}

#[test]
fn redirect_loops_missing_targets_and_missing_locations_count_as_404() {
    let looping = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 301, "location": "https://a.org/b.txt"}),
        json!({"url": "https://a.org/b.txt", "status": 302, "location": "/robots.txt"}),
    ]);
    assert_eq!(reason(&looping, "https://a.org/"), Reason::RedirectFailed);
    assert!(allowed(&looping, "https://a.org/private"));
    let to_self = resolve(&[json!({"url": "https://a.org/robots.txt", "status": 301, "location": "/robots.txt"})]);
    assert_eq!(reason(&to_self, "https://a.org/"), Reason::RedirectFailed);
    let missing =
        resolve(&[json!({"url": "https://a.org/robots.txt", "status": 301, "location": "https://b.org/robots.txt"})]);
    assert_eq!(reason(&missing, "https://a.org/"), Reason::RedirectFailed);
    let no_location = resolve(&[json!({"url": "https://a.org/robots.txt", "status": 307})]);
    assert_eq!(reason(&no_location, "https://a.org/"), Reason::RedirectFailed);
    let not_modified = resolve(&[json!({"url": "https://a.org/robots.txt", "status": 304})]);
    assert!(allowed(&not_modified, "https://a.org/private"));
}

#[test]
fn redirects_to_other_hosts_carry_the_target_rules() {
    let r = resolve(&[
        json!({"url": "http://a.org/robots.txt", "status": 301, "location": "https://www.a.org/robots.txt"}),
        json!({"url": "https://www.a.org/robots.txt", "status": 200, "body": PRIVATE}),
        json!({"url": "http://b.org/robots.txt", "status": 302, "location": "//cdn.b.org/robots.txt"}),
        json!({"url": "http://cdn.b.org/robots.txt", "status": 503}),
        json!({"url": "http://c.org/robots.txt", "status": 301, "location": "https://c.org/gone.txt"}),
        json!({"url": "https://c.org/gone.txt", "status": 410}),
    ]);
    assert!(!allowed(&r, "http://a.org/private"));
    assert!(allowed(&r, "http://a.org/public"));
    assert!(!allowed(&r, "https://www.a.org/private"));
    // A redirect to a server error blocks; to a 410, no restrictions.
    assert!(!allowed(&r, "http://b.org/public"));
    assert_eq!(reason(&r, "http://b.org/"), Reason::Unreachable);
    assert!(allowed(&r, "http://c.org/private"));
    assert_eq!(reason(&r, "http://c.org/"), Reason::ClientError);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

/// Locations are resolved as a WHATWG fetcher resolves them: backslashes are
/// slashes, `\\\\host` keeps only the scheme, dot segments go.
#[test]
fn redirect_locations_resolve_as_fetchers_resolve_them() {
    let r = resolve(&[
        json!({"url": "http://a.org/robots.txt", "status": 301, "location": "\\\\cdn.a.org\\robots.txt"}),
        json!({"url": "http://cdn.a.org/robots.txt", "status": 200, "body": PRIVATE}),
        json!({"url": "http://b.org/robots.txt", "status": 301, "location": "/x/../r\ta.txt"}),
        json!({"url": "http://b.org/ra.txt", "status": 200, "body": PRIVATE}),
        json!({"url": "http://c.org/robots.txt", "status": 301, "location": "http:elsewhere.txt"}),
        json!({"url": "http://c.org/elsewhere.txt", "status": 200, "body": PRIVATE}),
        json!({"url": "http://d.org/robots.txt", "status": 301, "location": "mailto:x@d.org"}),
    ]);
    for host in ["a.org", "b.org", "c.org"] {
        assert!(!allowed(&r, &format!("http://{host}/private")), "{host}");
        assert!(allowed(&r, &format!("http://{host}/public")), "{host}");
    }
    assert_eq!(reason(&r, "http://d.org/"), Reason::RedirectFailed);
}

#[test]
fn newest_fetch_wins_whatever_the_line_order() {
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /new\n", "fetched_at": day(5)}),
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /old\n", "fetched_at": day(1)}),
        json!({"url": "https://a.org/robots.txt", "status": 404, "fetched_at": day(3)}),
    ]);
    assert!(!allowed(&r, "https://a.org/new"));
    assert!(allowed(&r, "https://a.org/old"));
    let provenance = &r.origins[&OriginKey::of_url("https://a.org/").unwrap()].provenance;
    assert_eq!(provenance.source.place, Place::Line(1));
    // A newer 404 beats an older 200.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": day(1)}),
        json!({"url": "https://a.org/robots.txt", "status": 404, "fetched_at": day(2)}),
    ]);
    assert!(allowed(&r, "https://a.org/private"));
    // A newer 200 ends an outage.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 503, "fetched_at": day(2)}),
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": day(3)}),
    ]);
    assert!(allowed(&r, "https://a.org/public"));
    // Undated records are older than dated ones; among undated, the last read wins.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": day(0)}),
        json!({"url": "https://a.org/robots.txt", "status": 404}),
        json!({"url": "https://b.org/robots.txt", "status": 404}),
        json!({"url": "https://b.org/robots.txt", "status": 200, "body": PRIVATE}),
    ]);
    assert!(!allowed(&r, "https://a.org/private"));
    assert!(!allowed(&r, "https://b.org/private"));
    // Time zones count.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 404, "fetched_at": "2026-11-01T10:00:00+02:00"}),
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": "2026-11-01T09:00:00Z"}),
    ]);
    assert!(!allowed(&r, "https://a.org/private"), "09:00Z is later than 10:00+02:00");
}

#[test]
fn server_errors_within_30_days_keep_the_site_blocked() {
    for error_day in [1, 10, 29, 30] {
        let r = resolve(&[
            json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": day(0)}),
            json!({"url": "https://a.org/robots.txt", "status": 503, "fetched_at": day(error_day)}),
        ]);
        assert!(!allowed(&r, "https://a.org/public"), "day {error_day}");
        assert_eq!(reason(&r, "https://a.org/"), Reason::Unreachable);
    }
    // Time unknown: the outage cannot be shown to be longer than 30 days.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE}),
        json!({"url": "https://a.org/robots.txt", "status": 0, "error": "dns", "fetched_at": day(100)}),
    ]);
    assert!(!allowed(&r, "https://a.org/public"));
}

#[test]
fn outages_over_30_days_fall_back_to_the_last_good_copy() {
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": day(0)}),
        json!({"url": "https://a.org/robots.txt", "status": 503, "fetched_at": day(20)}),
        json!({"url": "https://a.org/robots.txt", "status": 0, "error": "timeout", "fetched_at": day(31)}),
    ]);
    assert!(allowed(&r, "https://a.org/public"));
    assert!(!allowed(&r, "https://a.org/private"));
    let provenance = &r.origins[&OriginKey::of_url("https://a.org/").unwrap()].provenance;
    assert_eq!((provenance.reason, provenance.source.place), (Reason::OutageFallback, Place::Line(1)));
    assert!(provenance.explanation.contains("timeout"), "{}", provenance.explanation);
    // The last reachable fetch was a 404: no restrictions.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE, "fetched_at": day(0)}),
        json!({"url": "https://a.org/robots.txt", "status": 404, "fetched_at": day(5)}),
        json!({"url": "https://a.org/robots.txt", "status": 500, "fetched_at": day(40)}),
    ]);
    assert!(allowed(&r, "https://a.org/private"));
    assert_eq!(reason(&r, "https://a.org/"), Reason::OutageFallback);
    // Never reachable, for more than 30 days: no restrictions.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 503, "fetched_at": day(0)}),
        json!({"url": "https://a.org/robots.txt", "status": 429, "fetched_at": day(31)}),
    ]);
    assert!(allowed(&r, "https://a.org/private"));
    assert_eq!(reason(&r, "https://a.org/"), Reason::OutageExpired);
    // Never reachable, for 30 days or less: blocked.
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 503, "fetched_at": day(0)}),
        json!({"url": "https://a.org/robots.txt", "status": 503, "fetched_at": day(30)}),
    ]);
    assert!(!allowed(&r, "https://a.org/public"));
}

#[test]
fn records_off_the_root_are_skipped_with_a_warning() {
    let r = resolve(&[
        json!({"url": "https://a.org/robots.txt", "status": 200, "body": PRIVATE}),
        json!({"url": "https://b.org/folder/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /\n"}),
        json!({"url": "https://c.org/robots.txt?x=1", "status": 503}),
        json!({"url": "mailto:x@example.com", "status": 200}),
    ]);
    assert_eq!(r.origins.len(), 1);
    let warnings: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings[0].starts_with("test.jsonl:4: skipped: mailto:x@example.com: scheme is not http, https or ftp"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with("test.jsonl:2: skipped: https://b.org/folder/robots.txt is not /robots.txt"),
        "{warnings:?}"
    );
    assert!(warnings[2].starts_with("test.jsonl:3: "), "{warnings:?}");
}

#[test]
fn malformed_lines_are_errors_with_their_line_number() {
    let good = json!({"url": "https://a.org/robots.txt", "status": 200, "body": ""}).to_string();
    for (bad, needle) in [
        ("{\"url\": \"https://a.org/robots.txt\", \"status\": 200", "EOF"),
        ("not json", "expected"),
        ("{\"url\": \"https://a.org/robots.txt\"}", "missing field `status`"),
        ("{\"status\": 200}", "missing field `url`"),
        ("{\"url\": \"https://a.org/robots.txt\", \"status\": \"200\"}", "invalid type"),
        ("{\"url\": \"https://a.org/robots.txt\", \"status\": 1000}", "not an HTTP status"),
        ("{\"url\": \"https://a.org/robots.txt\", \"status\": -1}", "invalid value"),
        (
            "{\"url\": \"https://a.org/robots.txt\", \"status\": 200, \"body\": \"\", \"body_b64\": \"\"}",
            "both body and body_b64",
        ),
        ("{\"url\": \"https://a.org/robots.txt\", \"status\": 200, \"body_b64\": \"@@@\"}", "body_b64"),
        (
            "{\"url\": \"https://a.org/robots.txt\", \"status\": 200, \"fetched_at\": \"2026-13-01T00:00:00Z\"}",
            "no such date",
        ),
        ("{\"url\": \"https://a.org/robots.txt\", \"status\": 200, \"fetched_at\": \"yesterday\"}", "RFC 3339"),
    ] {
        let text = format!("{good}\n\n{bad}\n{good}\n");
        let mut corpus = Corpus::new();
        let error = corpus.add_jsonl_from(NAME.into(), Cursor::new(text)).unwrap_err();
        assert_eq!(error.source.place, Place::Line(3), "{bad}");
        let message = error.to_string();
        assert!(message.starts_with("test.jsonl:3: ") && message.contains(needle), "{bad}: {message}");
    }
    // Not UTF-8.
    let mut corpus = Corpus::new();
    let error = corpus
        .add_jsonl_from(NAME.into(), Cursor::new(b"{\"url\": \"\xff\", \"status\": 200}\n".to_vec()))
        .unwrap_err();
    assert_eq!(error.source.place, Place::Line(1));
}

#[test]
fn body_b64_carries_exact_bytes_and_crlf_lines_are_read() {
    use base64::Engine as _;
    let body: &[u8] = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /caf\xe9\r\n";
    let b64 = base64::engine::general_purpose::STANDARD.encode(body);
    let text =
        format!("{}\r\n", json!({"url": "https://a.org/robots.txt", "status": 200, "body_b64": b64, "extra": 1}));
    let mut corpus = Corpus::new();
    assert_eq!(corpus.add_jsonl_from(NAME.into(), Cursor::new(text)).unwrap(), 1);
    let r = corpus.resolve();
    match &r.origins[&OriginKey::of_url("https://a.org/").unwrap()].robots {
        Robots::Body(b) => assert_eq!(&b[..], body),
        other => panic!("{other:?}"),
    }
    assert!(!allowed(&r, "https://a.org/caf%E9"));
    assert!(allowed(&r, "https://a.org/cafe"));
}

#[test]
fn robots_file_with_origin() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.txt");
    std::fs::write(&path, PRIVATE).unwrap();
    let mut corpus = Corpus::new();
    let origin = corpus.add_robots_file(&path, "HTTPS://Example.com:443/anything").unwrap();
    assert_eq!(origin.as_str(), "https://example.com");
    let error = corpus.add_robots_file(&path, "example.com").unwrap_err();
    assert!(error.to_string().contains("not an absolute URL"), "{error}");
    let error = corpus.add_robots_file(&dir.path().join("missing.txt"), "https://b.org/").unwrap_err();
    assert!(error.to_string().contains("missing.txt"), "{error}");
    let r = corpus.resolve();
    assert!(!allowed(&r, "https://example.com/private"));
    assert!(!r.origins.contains_key(&OriginKey::of_url("http://example.com/").unwrap()));
}

#[test]
fn robots_dir_layout() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("example.com.txt"), PRIVATE).unwrap();
    std::fs::write(dir.path().join("münchen.de.txt"), "User-agent: *\nDisallow: /\n").unwrap();
    std::fs::write(dir.path().join("bad host.txt"), PRIVATE).unwrap();
    std::fs::write(dir.path().join("index.tsv"), "file\thost\n").unwrap();
    std::fs::write(dir.path().join("notes.md"), "hello").unwrap();
    std::fs::create_dir(dir.path().join("sub.txt")).unwrap();
    let mut corpus = Corpus::new();
    assert_eq!(corpus.add_robots_dir(dir.path()).unwrap(), 2);
    let r = corpus.resolve();
    assert_eq!(r.origins.len(), 4);
    for url in ["http://example.com/private", "https://EXAMPLE.com:443/private"] {
        assert!(!allowed(&r, url), "{url}");
    }
    assert!(allowed(&r, "http://example.com/public"));
    assert!(!allowed(&r, "https://xn--mnchen-3ya.de/public"));
    assert!(!r.origins.contains_key(&OriginKey::of_url("http://example.com:8080/").unwrap()));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].to_string().contains("bad host.txt"), "{}", r.warnings[0]);
}

/// A robots directory of [`PRIVATE`] under each of `names`, resolved after
/// checking that `used` of its files were taken.
fn robots_dir_of_private(names: &[&str], used: usize) -> Resolution {
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        std::fs::write(dir.path().join(name), PRIVATE).unwrap();
    }
    let mut corpus = Corpus::new();
    assert_eq!(corpus.add_robots_dir(dir.path()).unwrap(), used, "{names:?}");
    corpus.resolve()
}

/// File names are hosts read by the URL parser: every IPv4 form is the
/// address, and user info is no host name.
#[test]
fn robots_dir_names_are_hosts_as_urls_read_them() {
    let names = ["0x7f.1.txt", "EXAMPLE.org.txt", "evil.com\\@good.com.txt", "256.256.256.256.txt"];
    let r = robots_dir_of_private(&names, 2);
    assert!(!allowed(&r, "http://127.0.0.1/private"));
    assert!(!allowed(&r, "https://example.org/private"));
    assert!(!r.origins.contains_key(&OriginKey::of_url("http://good.com/").unwrap()));
    assert!(!r.origins.contains_key(&OriginKey::of_url("http://evil.com/").unwrap()));
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
}

/// What a robots directory of real origins can hold: percent-escapes
/// decoded (a colon escaped as `%3A` is a port's), a `;` (a host character
/// to the URL reader), IPv6 literals in brackets with or without a port;
/// user info (`@`, escaped or not), an escaped `/` and brackets that are no
/// IPv6 literal stay refused, so that a file never governs another host.
#[test]
fn robots_dir_names_of_real_origins() {
    use robotsieve_sources::corpus::robots_dir_host;
    let accepted = [
        ("ex%61mple.org", "example.org"),
        ("example.net%3A8080", "example.net:8080"),
        ("a;b.example", "a;b.example"),
        ("[2001:db8::1]", "[2001:db8::1]"),
        ("[::1]_8443", "[::1]:8443"),
        ("m%C3%BCnchen.de", "münchen.de"),
    ];
    for (stem, host) in accepted {
        assert_eq!(robots_dir_host(stem).as_deref(), Some(host), "{stem}");
    }
    for stem in [
        "evil.example@good.example",
        "evil.example%40good.example",
        "evil.example%2Fgood.example",
        "a%2",
        "a%zz.example",
        "%FF.example",
        "a[b].example",
        "[not-ipv6]",
        "",
    ] {
        assert_eq!(robots_dir_host(stem), None, "{stem}");
    }
    let names: Vec<String> = accepted.iter().map(|(stem, _)| format!("{stem}.txt")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = robots_dir_of_private(&[&names[..], &["evil.example%40good.example.txt"]].concat(), accepted.len());
    for url in [
        "http://example.org/private",
        "https://example.net:8080/private",
        "http://a;b.example/private",
        "http://[2001:db8::1]/private",
        "https://[::1]:8443/private",
        "https://xn--mnchen-3ya.de/private",
    ] {
        assert!(!allowed(&r, url), "{url}");
    }
    assert!(!r.origins.contains_key(&OriginKey::of_url("http://good.example/").unwrap()));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
}

#[test]
fn robots_dir_ports_in_file_names() {
    let r = robots_dir_of_private(&["example.org_8443.txt", "example.net_443.txt", "under_score.example.txt"], 3);
    assert!(!allowed(&r, "https://example.org:8443/private"));
    assert!(!allowed(&r, "https://example.net/private"), "_443 is https on the default port");
    assert!(!allowed(&r, "http://under_score.example/private"), "an underscore without digits is part of the host");
    assert!(!r.origins.contains_key(&OriginKey::of_url("https://example.org/").unwrap()));
}

#[test]
fn realworld_robots_dir() {
    let Some(dir) = shared_dir().map(|d| d.join("realworld/robots")).filter(|d| d.is_dir()) else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "txt"))
        .count();
    let mut corpus = Corpus::new();
    let used = corpus.add_robots_dir(&dir).unwrap();
    let r = corpus.resolve();
    eprintln!("{used} of {files} files used, {} origins, {} warnings", r.origins.len(), r.warnings.len());
    assert_eq!(used + r.warnings.len(), files);
    // `host_443.txt` is https://host, the same origin as `host.txt` gives
    // (likewise `host_80.txt` and http): where both files exist, one origin
    // is shared.
    let shared_origins = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter_map(|name| {
            let stem = name.strip_suffix("_443.txt").or_else(|| name.strip_suffix("_80.txt"))?.to_string();
            Some(stem)
        })
        .filter(|stem| dir.join(format!("{stem}.txt")).is_file())
        .count();
    assert_eq!(r.origins.len(), 2 * used - shared_origins);
    assert!(r.origins.values().all(|g| matches!(g.robots, Robots::Body(_))));
}

// --- WARC ---------------------------------------------------------------

fn warc_record(kind: &str, uri: &str, date: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut record = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{kind}-{}>\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        block.len(),
        block.len()
    )
    .into_bytes();
    record.extend_from_slice(block);
    record.extend_from_slice(b"\r\n\r\n");
    record
}

fn http_record(uri: &str, date: &str, head: &str, body: &[u8]) -> Vec<u8> {
    let mut block = head.replace('\n', "\r\n").into_bytes();
    block.extend_from_slice(b"\r\n");
    block.extend_from_slice(body);
    warc_record("response", uri, date, "application/http; msgtype=response", &block)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A Common Crawl-shaped capture: warcinfo, then request/response/metadata triples.
fn sample_records() -> Vec<Vec<u8>> {
    let chunked_body = b"14\r\nUser-agent: *\nDisall\r\nb\r\now: /chunky\r\n0\r\n\r\n";
    vec![
        warc_record("warcinfo", "", "2026-11-01T00:00:00Z", "application/warc-fields", b"software: test\r\n"),
        warc_record(
            "request",
            "https://a.org/robots.txt",
            "2026-11-01T00:00:01Z",
            "application/http; msgtype=request",
            b"GET /robots.txt HTTP/1.1\r\nHost: a.org\r\n\r\n",
        ),
        http_record(
            "https://a.org/robots.txt",
            "2026-11-01T00:00:01Z",
            "HTTP/1.1 200 OK\nContent-Type: text/plain\nX-Crawler-Content-Encoding: gzip\nContent-Length: 34\n",
            PRIVATE.as_bytes(),
        ),
        warc_record(
            "metadata",
            "https://a.org/robots.txt",
            "2026-11-01T00:00:01Z",
            "application/warc-fields",
            b"fetchTimeMs: 12\r\n",
        ),
        http_record(
            "http://b.org/robots.txt",
            "2026-11-01T00:00:02Z",
            "HTTP/1.1 301 Moved Permanently\nLocation: https://b.org/robots.txt\n",
            b"",
        ),
        http_record(
            "https://b.org/robots.txt",
            "2026-11-01T00:00:03Z",
            "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n",
            chunked_body,
        ),
        http_record(
            "https://c.org/robots.txt",
            "2026-11-01T00:00:04Z",
            "HTTP/1.0 200 OK\nContent-Encoding: gzip\n",
            &gzip(b"User-agent: *\nDisallow: /zipped\n"),
        ),
        http_record("https://d.org/robots.txt", "2026-11-01T00:00:05Z", "HTTP/1.1 503 Service Unavailable\n", b"busy"),
        // An older capture of d.org: the newer 503 (within 30 days) keeps it blocked.
        http_record("https://d.org/robots.txt", "2026-10-20T00:00:00Z", "HTTP/1.1 200 OK\n", b""),
        http_record("https://e.org/robots.txt", "2026-11-01T00:00:06Z", "garbage status line\n", b""),
    ]
}

fn check_sample_resolution(r: &Resolution, name: &str) {
    assert!(!allowed(r, "https://a.org/private"));
    assert!(allowed(r, "https://a.org/public"));
    assert!(!allowed(r, "http://b.org/chunky"));
    assert!(allowed(r, "http://b.org/private"));
    assert_eq!(r.origins[&OriginKey::of_url("http://b.org/").unwrap()].provenance.redirects, 1);
    assert!(!allowed(r, "https://c.org/zipped"));
    assert!(!allowed(r, "https://d.org/anything"));
    let d = &r.origins[&OriginKey::of_url("https://d.org/").unwrap()].provenance;
    assert_eq!(d.copy.fetched_at.unwrap().to_string(), "2026-11-01T00:00:05Z");
    assert_eq!(d.source.to_string(), format!("{name}: record 8"));
    assert!(!r.origins.contains_key(&OriginKey::of_url("https://e.org/").unwrap()));
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert_eq!(r.warnings[0].source.place, Place::Record(10));
    assert!(r.warnings[0].message.contains("not an HTTP status line"), "{}", r.warnings[0]);
}

fn read_warc(name: &str, bytes: Vec<u8>) -> Resolution {
    let mut corpus = Corpus::new();
    assert_eq!(corpus.add_warc_from(name.into(), Cursor::new(bytes)).unwrap(), 6);
    corpus.resolve()
}

/// The status cases again, as WARC responses (status 0 has no HTTP response to record).
#[test]
fn status_cases_through_warc() {
    let Some(path) = conformance_file("status.jsonl") else {
        eprintln!("skipped: ../shared/conformance/status.jsonl is absent");
        return;
    };
    let mut checked = 0;
    for case in read_status_cases(&path).unwrap().iter().filter(|c| c.status != 0) {
        let robots_url = OriginKey::of_url(&case.url).unwrap().robots_url();
        let head = format!("HTTP/1.1 {} Whatever\nContent-Type: text/plain\n", case.status);
        let record = http_record(&robots_url, "2026-11-01T00:00:00Z", &head, case.robots.as_bytes());
        let mut corpus = Corpus::new();
        assert_eq!(corpus.add_warc_from("s.warc".into(), Cursor::new(gzip(&record))).unwrap(), 1);
        let r = corpus.resolve();
        let agents: Vec<&str> = case.agents.iter().map(String::as_str).collect();
        assert_eq!(verdict(&r, &case.url, &agents, PathMode::Raw), Some(case.allowed), "status {}", case.status);
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn warc_plain() {
    let r = read_warc("plain.warc", sample_records().concat());
    check_sample_resolution(&r, "plain.warc");
}

#[test]
fn warc_gzip_per_record_and_whole_file() {
    let per_record: Vec<u8> = sample_records().iter().flat_map(|r| gzip(r)).collect();
    check_sample_resolution(&read_warc("a.warc.gz", per_record), "a.warc.gz");
    let whole = gzip(&sample_records().concat());
    check_sample_resolution(&read_warc("b.warc.gz", whole), "b.warc.gz");
    // Through a file on disk, too.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.warc.gz");
    std::fs::write(&path, sample_records().iter().flat_map(|r| gzip(r)).collect::<Vec<u8>>()).unwrap();
    let mut corpus = Corpus::new();
    assert_eq!(corpus.add_warc(&path).unwrap(), 6);
}

#[test]
fn warc_generic_record_iterator() {
    let bytes = sample_records().concat();
    let records: Vec<_> = warc::reader(Cursor::new(bytes.clone())).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 10);
    let types: Vec<_> = records.iter().map(|r| r.record_type().unwrap()).collect();
    assert_eq!(&types[..4], ["warcinfo", "request", "response", "metadata"]);
    assert_eq!(records[2].target_uri(), Some("https://a.org/robots.txt"));
    assert_eq!(records[2].date().unwrap().unwrap().to_string(), "2026-11-01T00:00:01Z");
    assert_eq!(records[2].version, "WARC/1.0");
    assert!(records[2].is_http());
    assert!(!records[3].is_http());
    // Without a Content-Type, a block that starts like an HTTP response is one.
    let mut untyped = records[2].clone();
    untyped.headers.retain(|(name, _)| name != "Content-Type");
    assert!(untyped.is_http());
    untyped.block = b"dns answer".to_vec();
    assert!(!untyped.is_http());
    // Offsets point at each record's version line.
    for record in &records {
        assert!(bytes[record.offset as usize..].starts_with(b"WARC/1.0\r\n"), "record {}", record.number);
    }
    let response = records[2].http_response().unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some(&b"text/plain"[..]));
    assert_eq!(response.body, PRIVATE.as_bytes());
    let chunked = records[5].http_response().unwrap();
    assert_eq!(&*chunked.decoded_body().unwrap(), b"User-agent: *\nDisallow: /chunky");
}

#[test]
fn warc_errors_name_the_record() {
    let mut bytes = sample_records()[..3].concat();
    bytes.truncate(bytes.len() - 10);
    let mut corpus = Corpus::new();
    let error = corpus.add_warc_from("t.warc".into(), Cursor::new(bytes)).unwrap_err();
    assert_eq!(error.source.place, Place::Record(3));
    assert!(error.to_string().contains("the file ends inside the record"), "{error}");
    assert!(error.to_string().contains(&format!("at offset {}", sample_records()[..2].concat().len())), "{error}");
    let mut bytes = sample_records()[..2].concat();
    bytes.extend_from_slice(b"HTTP/1.1 200 OK\r\n\r\n");
    let error = Corpus::new().add_warc_from("t.warc".into(), Cursor::new(bytes)).unwrap_err();
    assert_eq!(error.source.place, Place::Record(3));
    assert!(error.to_string().contains("WARC/ version line"), "{error}");
    let no_length = b"WARC/1.0\r\nWARC-Type: response\r\n\r\nabc".to_vec();
    let error = Corpus::new().add_warc_from("t.warc".into(), Cursor::new(no_length)).unwrap_err();
    assert!(error.to_string().contains("Content-Length"), "{error}");
    let mut corrupt_gzip = gzip(&sample_records().concat());
    corrupt_gzip.truncate(corrupt_gzip.len() / 2);
    assert!(Corpus::new().add_warc_from("t.warc.gz".into(), Cursor::new(corrupt_gzip)).is_err());
}

#[test]
fn bad_records_are_skipped_when_asked_and_named() {
    // A JSON Lines file with a broken record in the middle: an error naming
    // its line, or skipped and listed; the records around it are read.
    let jsonl = "{\"url\": \"http://a.example/robots.txt\", \"status\": 404}\n\
                 {\"url\": \"http://b.example/robots.txt\", \"status\n\
                 {\"url\": \"http://c.example/robots.txt\", \"status\": 404}\n";
    let error = Corpus::new().add_jsonl_from("c.jsonl".into(), Cursor::new(jsonl)).unwrap_err();
    assert_eq!(error.source.place, Place::Line(2));
    assert!(
        matches!(&error.problem, CorpusProblem::Record(RecordError::Json { what: "the record is cut short", .. })),
        "{error:?}"
    );
    assert!(error.to_string().starts_with("c.jsonl:2: the record is cut short"), "{error}");
    let mut corpus = Corpus::new();
    corpus.skip_bad_records();
    assert_eq!(corpus.add_jsonl_from("c.jsonl".into(), Cursor::new(jsonl)).unwrap(), 2);
    assert_eq!(corpus.skipped().iter().map(|e| e.source.place).collect::<Vec<_>>(), [Place::Line(2)]);

    // A line longer than a record may be: named with its length, never held.
    let long = format!(
        "{}\n{}\n",
        "x".repeat(robotsieve_sources::corpus::MAX_RECORD_LINE + 10),
        r#"{"url": "http://a.example/robots.txt", "status": 404}"#
    );
    let error = Corpus::new().add_jsonl_from("l.jsonl".into(), Cursor::new(long.clone())).unwrap_err();
    let limit = robotsieve_sources::corpus::MAX_RECORD_LINE;
    assert_eq!(error.problem, CorpusProblem::Record(RecordError::TooLong { length: limit + 10 }));
    assert_eq!(
        error.to_string(),
        format!("l.jsonl:1: a line of {} bytes, longer than the {limit} a record may have", limit + 10)
    );
    let mut corpus = Corpus::new();
    corpus.skip_bad_records();
    assert_eq!(corpus.add_jsonl_from("l.jsonl".into(), Cursor::new(long)).unwrap(), 1);
    assert_eq!(corpus.records()[0].source.place, Place::Line(2));

    // A WARC record whose header is broken (no Content-Length) between two
    // good ones: skipping resyncs at the next record.
    let records = sample_records();
    let mut bytes = records[..3].concat();
    bytes.extend_from_slice(b"WARC/1.0\r\nWARC-Type: response\r\n\r\nHTTP/1.1 200 OK\r\n\r\nbody\r\n\r\n");
    bytes.extend(records[2].iter());
    let error = Corpus::new().add_warc_from("t.warc".into(), Cursor::new(bytes.clone())).unwrap_err();
    assert_eq!(error.source.place, Place::Record(4));
    assert!(matches!(error.problem, CorpusProblem::Warc { offset: Some(_), .. }), "{error:?}");
    let mut whole = Corpus::new();
    let good = whole.add_warc_from("t.warc".into(), Cursor::new(records[..3].concat())).unwrap();
    let mut corpus = Corpus::new();
    corpus.skip_bad_records();
    assert_eq!(corpus.add_warc_from("t.warc".into(), Cursor::new(bytes)).unwrap(), good + 1);
    assert_eq!(corpus.skipped().len(), 1);
    assert!(corpus.skipped()[0].to_string().contains("record 4: at offset"), "{}", corpus.skipped()[0]);

    // Cut inside the last record: that record is skipped, the rest is read.
    let mut cut = records[..3].concat();
    cut.truncate(cut.len() - 10);
    let mut corpus = Corpus::new();
    corpus.skip_bad_records();
    let before = Corpus::new().add_warc_from("t.warc".into(), Cursor::new(records[..2].concat())).unwrap();
    assert_eq!(corpus.add_warc_from("t.warc".into(), Cursor::new(cut)).unwrap(), before);
    assert_eq!(corpus.skipped()[0].source.place, Place::Record(3));
}

#[test]
fn warc_blocks_and_decoded_bodies_are_held_to_a_bounded_size() {
    // A block longer than MAX_BLOCK, then a good record: the first is cut,
    // the second read from the right place.
    let big = vec![b'v'; http::MAX_BLOCK as usize + 1000];
    let mut bytes = warc_record("resource", "https://example.com/video", "2026-11-01T00:00:00Z", "video/mp4", &big);
    let second = bytes.len() as u64;
    bytes.extend(sample_records()[2].iter());
    let records: Vec<_> = warc::reader(Cursor::new(bytes)).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!((records[0].block.len() as u64, records[0].length), (http::MAX_BLOCK, big.len() as u64));
    assert_eq!(records[1].offset, second);
    assert_eq!(records[1].block.len() as u64, records[1].length);
    // A gzip body of 100 MiB of zeros (a bomb of 100 KiB) decodes to MAX_BLOCK.
    let bomb = gzip(&vec![0u8; 100 << 20]);
    let mut block = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
    block.extend_from_slice(&bomb);
    let response = HttpResponse::parse(&block).unwrap();
    assert_eq!(response.decoded_body().unwrap().len() as u64, http::MAX_BLOCK);
}

#[test]
fn http_responses() {
    let r = HttpResponse::parse(b"HTTP/1.1 404 Not Found\nX-Long: a\n  b\n\nbody\r\n").unwrap();
    assert_eq!((r.status, r.header("x-long"), &r.body[..]), (404, Some(&b"a b"[..]), &b"body\r\n"[..]));
    assert_eq!(HttpResponse::parse(b"HTTP/1.1 2000 OK\r\n\r\n"), Err(HttpError::BadStatusCode { code: "2000".into() }));
    assert_eq!(HttpResponse::parse(b""), Err(HttpError::Empty));
    let no_reason = HttpResponse::parse(b"HTTP/1.1 200\r\n\r\n").unwrap();
    assert_eq!(no_reason.status, 200);
    let bad_chunk = HttpResponse::parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").unwrap();
    assert_eq!(bad_chunk.decoded_body(), Err(HttpError::BadChunkSize { size: "zz".into() }));
    let brotli = HttpResponse::parse(b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\nxx").unwrap();
    let error = brotli.decoded_body().unwrap_err();
    assert_eq!(error, HttpError::UnsupportedContentEncoding { coding: "br".into() });
    assert_eq!(error.to_string(), "unsupported Content-Encoding \"br\"");
}

#[test]
fn rfc3339_times() {
    let t = |s: &str| Timestamp::parse_rfc3339(s).map(|t| t.unix_seconds());
    assert_eq!(t("1970-01-01T00:00:00Z"), Ok(0));
    assert_eq!(t("2000-03-01T00:00:00Z"), Ok(951_868_800));
    assert_eq!(t("2026-11-01T12:00:00Z"), Ok(1_793_534_400));
    assert_eq!(t("2026-11-01T14:30:00+02:30"), Ok(1_793_534_400));
    assert_eq!(t("2026-11-01t12:00:00.123456789z"), Ok(1_793_534_400));
    assert_eq!(t("2026-11-01 06:00:00-06:00"), Ok(1_793_534_400));
    assert_eq!(t("1969-12-31T23:59:59Z"), Ok(-1));
    assert_eq!(t("2024-02-29T00:00:00Z"), Ok(1_709_164_800));
    for bad in [
        "2023-02-29T00:00:00Z",
        "2026-11-01T24:00:00Z",
        "2026-11-01T12:00:00",
        "2026-11-01",
        "2026-11-01T12:00:00.Z",
        "2026-11-01T12:00:00+0200",
        "",
        "2026-11-01T12:00:00Zjunk",
    ] {
        assert!(t(bad).is_err(), "{bad}");
    }
    let fractional = Timestamp::parse_rfc3339("2026-11-01T12:00:00.5Z").unwrap();
    assert!(fractional > Timestamp::parse_rfc3339("2026-11-01T12:00:00Z").unwrap());
    assert_eq!(fractional.to_string(), "2026-11-01T12:00:00.5Z");
    for s in ["2026-11-01T12:00:00Z", "1900-02-28T23:59:59Z", "2400-02-29T00:00:00Z"] {
        assert_eq!(Timestamp::parse_rfc3339(s).unwrap().to_string(), s);
    }
}

/// `copies` fetch records as JSON Lines, each of its own host and body.
fn jsonl_of(copies: usize) -> Vec<u8> {
    let mut text = String::new();
    for i in 0..copies {
        let body = format!("user-agent: *\ndisallow: /private-{i}\n");
        let record = json!({"url": format!("https://h{i}.example/robots.txt"), "status": 200, "body": body});
        text.push_str(&format!("{record}\n"));
    }
    text.into_bytes()
}

#[test]
fn gzip_and_zstd_json_lines_read_as_the_plain_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let plain = jsonl_of(300);
    let files = [
        ("plain.jsonl", plain.clone()),
        // Named to mislead: the magic bytes decide.
        ("fetches.jsonl.gz", gzip(&plain)),
        ("fetches.txt", zstd::encode_all(&plain[..], 3).unwrap()),
    ];
    let mut resolved = Vec::new();
    for (name, bytes) in &files {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let mut corpus = Corpus::new();
        assert_eq!(corpus.add_jsonl(&path).unwrap(), 300, "{name}");
        resolved.push(corpus.resolve().origins.into_values().map(|g| (g.origin, g.robots)).collect::<Vec<_>>());
    }
    assert_eq!(resolved[0].len(), 300);
    assert_eq!(resolved[1], resolved[0]);
    assert_eq!(resolved[2], resolved[0]);
}

#[test]
fn cut_short_compressed_json_lines_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // Big enough for many zstd blocks (128 KiB each): a block cut short
    // yields nothing, the ones before it their lines.
    let plain = jsonl_of(20_000);
    for (name, whole) in [("cut.jsonl.gz", gzip(&plain)), ("cut.jsonl.zst", zstd::encode_all(&plain[..], 3).unwrap())] {
        let path = dir.path().join(name);
        std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
        let mut corpus = Corpus::new();
        let err = corpus.add_jsonl(&path).expect_err(name);
        let Place::Line(line) = err.source.place else { panic!("{name}: {err}") };
        assert!(line > 1 && line < 20_000, "{name}: line {line}");
        let message = err.to_string();
        assert!(message.starts_with(&format!("{}:{line}: cannot read", path.display())), "{message}");
        assert!(message.contains("cut short or damaged"), "{message}");
    }
}
