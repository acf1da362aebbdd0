//! robotsieve's URL parser against the `url` crate, and its fast path
//! against its complete parser: on generated URLs that hit every rare form
//! the WHATWG reading has (backslashes, tabs and newlines, percent-encoded
//! hosts, every IPv4 form, IDN and `xn--` labels, dot segments, user info
//! holding `;`, `@` or `\`, bytes the fetcher percent-encodes), and on every
//! URL of `shared/realworld/urls/`.

use proptest::prelude::*;
use robotsieve_core::url::{trim_c0_and_space, KeyBuf, UrlError};
use robotsieve_testkit::url_oracle::{check_against_url_crate, check_fast_path};
use std::collections::BTreeMap;

/// Both checks on one input.
fn check(url: &[u8]) -> Result<(), String> {
    check_against_url_crate(url)?;
    check_fast_path(url)
}

/// One URL assembled from parts chosen to hit every branch of the
/// fast path and every way out of it: scheme case and near misses,
/// slashes and backslashes, user info, hosts of every kind, ports in
/// and out of range, paths with stop bytes and dot segments, query,
/// fragment, white space.
fn url_parts() -> impl Strategy<Value = Vec<u8>> {
    let space = prop::sample::select(vec!["", "", "", " ", "\t", "\r\n", " \x0c", "\x00"]);
    let scheme = prop::sample::select(vec![
        "http", "https", "ftp", "HTTP", "HtTpS", "FTP", "ftps", "htt", "httpss", "mailto", "h", "", "1http", "ht+tp",
        "ht~tp", "http ", "xn--http", "ht\ttp",
    ]);
    let separator = prop::sample::select(vec![
        "://", "://", "://", "://", ":/", ":", "//", ":///", "", ":\\\\", ":/\\", ":\\/", "://\\", ":/\t/",
    ]);
    let user_info = prop_oneof![
        3 => Just(String::new()),
        1 => "[a-zA-Z:;%@\\\\]{0,6}@",
    ];
    let host = prop_oneof![
        4 => "[a-z0-9.\\-]{0,14}",
        2 => "[A-Za-z0-9._~\\-]{0,14}",
        1 => "[a-zA-Z0-9.%!$&'()*+,;=\\\\^`{|}<> \\x00-\\x1f\\x7f]{0,8}",
        1 => "(0x[0-9a-f]{0,3}|0[0-7]{0,4}|[0-9]{1,11})(\\.(0x[0-9a-f]{0,3}|[0-9]{1,4})){0,4}\\.?",
        1 => "[a-z]{0,3}(%[0-9a-fA-F]{2}|%|xn--[a-z0-9]{0,4}|[xX]){1,3}[a-z.]{0,3}",
        1 => prop::sample::select(vec![
            "München.de", "bücher.example", "例え.テスト", "xn--mnchen-3ya.de", "ß.de", "a\u{200d}b.com",
            "\u{fffd}", "exa\u{ff0e}mple.com", "ab\u{0301}.com", "xn--", "xn--a.com", "a.xn--ab", ".", "..",
            "example.com.", "ex%61mple.com", "%65xample.com", "1.2.3.4", "0x7f.1", "a.0x", "256.1.1.1",
        ]).prop_map(str::to_owned),
        1 => prop::sample::select(vec![
            "[::1]", "[2001:DB8::1]", "[2001:db8:0:0:0:0:0:1]", "[::ffff:192.0.2.1]", "[fe80::1%25eth0]",
            "[]", "[::1", "[::1]x", "[1.2.3.4]", "[::1]]", "[[::1]", "[0:0:1::]", "[1:0:0:2::]",
        ]).prop_map(str::to_owned),
        1 => "\\[[0-9a-fA-F:.%]{0,10}\\]?",
    ];
    let port = prop_oneof![
        3 => Just(String::new()),
        1 => prop::sample::select(vec![
            ":", ":80", ":443", ":21", ":8080", ":0", ":00080", ":65535", ":65536", ":99999",
            ":4294967376", ":12a", ":-1", ": 80", "::80", ":80:", ":8\t0",
        ]).prop_map(str::to_owned),
        1 => ":[0-9]{0,7}",
    ];
    let params = prop_oneof![3 => Just(String::new()), 1 => ";[a-z=:@;]{0,5}"];
    let rest = prop_oneof![
        2 => Just(String::new()),
        4 => "/[a-zA-Z0-9/.;:@%~]{0,12}",
        2 => "([/\\\\](\\.|\\.\\.|%2[eE]|\\.%2[eE]|[a-z]{1,3})){0,5}[/\\\\]?",
        1 => "[/?#;@:\\\\]{1,3}[a-zA-Z0-9/?#;@:]{0,8}",
        1 => "/[\\x00-\\x7f]{0,10}",
        1 => "/[a-z/]{0,20}[ \"'<>`{}|^\\\\\\x7f\\t\\u{e9}%][a-z/.]{0,20}",
    ];
    let query = prop_oneof![3 => Just(String::new()), 1 => "\\?[a-z=&/#@:;' <>.\\\\]{0,8}"];
    let fragment = prop_oneof![3 => Just(String::new()), 1 => "#[a-z/?#;@:]{0,6}"];
    ((space.clone(), scheme, separator, user_info, host), (port, params, rest, query, fragment, space)).prop_map(
        |((lead, scheme, sep, user, host), (port, params, rest, query, fragment, trail))| {
            [lead, scheme, sep, &user, &host, &port, &params, &rest, &query, &fragment, trail].concat().into_bytes()
        },
    )
}

/// Bytes drawn from the characters the parser acts on, in any order.
fn url_soup() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<u8> = b"hHtTpPsSfFxX:/\\@;?#[]%.-_~09aZ \t\x00\xc3\xa9\xff".to_vec();
    let prefix = prop::sample::select(vec!["", "http://", "HTTPS://", "ftp://", "http:/", "https:", "http:\\\\"]);
    (prefix, prop::collection::vec(prop::sample::select(alphabet), 0..40))
        .prop_map(|(prefix, tail)| [prefix.as_bytes(), &tail].concat())
}

/// A plain URL (lower-case scheme and host, a port that is not the
/// default, a plain path: its key is its first bytes) with up to three edits
/// that each may or may not take it off the fastest path: an upper-case
/// letter, a default or zero-padded port, `\`, `@`, `%`, a number as the
/// last label (IPv4 forms), a trailing dot, an `xn--` or `0x` label, a tab
/// or a newline, inserted anywhere.
fn plain_url_near_misses() -> impl Strategy<Value = Vec<u8>> {
    let host = "[a-z0-9][a-z0-9\\-]{0,8}(\\.[a-z0-9\\-]{1,8}){0,3}[a-z]";
    let port = prop_oneof![4 => Just(String::new()), 1 => ":[1-9][0-9]{0,4}", 1 => Just(":0".to_owned())];
    let path = prop_oneof![1 => Just(String::new()), 4 => "[/?#][a-z0-9/._?=&#-]{0,16}"];
    let edits = vec![
        "A", "Z", "X", "N", "\\", "@", "u@", "%", "%41", "%2e", ".", "..", ".1", ".0x", ".0x7f", ".255", ":", ":80",
        ":443", ":21", ":080", ":00", "xn--", "xn--a", "0x", "\t", "\n", "\r", " ", "\x00", "\x7f", "\u{e9}", "_", "~",
        ";", "[", "]", "/", "?", "#",
    ];
    plain_url_with_edits(host, port, path, edits)
}

/// A plain URL with a host of up to about 50 bytes and a path of up to 90
/// (so that the authority ends before, inside and after the fast path's
/// 32-byte block, and the path spans several of its vector blocks), with up
/// to three edits: every delimiter the authority scan looks for, upper case,
/// `x` labels, and bytes of 0x80 and above.
fn long_plain_url_near_misses() -> impl Strategy<Value = Vec<u8>> {
    let host = "[a-z0-9]{1,12}(\\.[a-z0-9\\-]{1,12}){0,3}[a-z]";
    let port = prop_oneof![4 => Just(String::new()), 1 => ":[1-9][0-9]{0,4}"];
    let path = prop_oneof![1 => Just(String::new()), 4 => "[/?#][a-zA-Z0-9/._?=&#%-]{0,90}"];
    let edits = vec![
        "/",
        "?",
        "#",
        "@",
        "\\",
        "%",
        ":",
        ";",
        "A",
        "X",
        "x",
        "xn--",
        "0x",
        ".",
        "/.",
        "%2E",
        "%41",
        "\u{e9}",
        "\x7f",
        "\x00",
        " ",
        "\t",
        "[",
        "]",
        "\u{10000}",
        "|",
        "~",
        "^",
        "`",
        "{",
        "}",
    ];
    plain_url_with_edits(host, port, path, edits)
}

/// `scheme://` (http, https or ftp), a host, a port and a path from the
/// strategies given, with up to three of `edits` inserted anywhere.
fn plain_url_with_edits(
    host: &'static str,
    port: impl Strategy<Value = String>,
    path: impl Strategy<Value = String>,
    edits: Vec<&'static str>,
) -> impl Strategy<Value = Vec<u8>> {
    let scheme = prop::sample::select(vec!["http://", "https://", "ftp://"]);
    let edits = prop::collection::vec((prop::sample::select(edits), any::<prop::sample::Index>()), 0..=3);
    (scheme, host, port, path, edits).prop_map(|(scheme, host, port, path, edits)| {
        let mut url = [scheme, &host, &port, &path].concat().into_bytes();
        for (edit, at) in edits {
            let at = at.index(url.len() + 1);
            url.splice(at..at, edit.bytes());
        }
        url
    })
}

/// Every byte the fast path's vector scans act on, at every position of
/// their blocks: in URLs shorter than a block, ending inside one, and
/// longer, each byte replacing one of the URL's or inserted before it.
#[test]
fn every_delimiter_at_every_position() {
    let bases = [
        "http://a.bc/",
        "https://www.example.com",
        "https://www.example.com/a/b?c=d",
        "http://a-much-longer-host-name.example.com/a/path/of/some/length/to/cross/blocks?q=1",
        "ftp://host.with.a.port.example:8080/p",
    ];
    let bytes = b"/?#@\\%:;AXxn-0.\x80\xc3\xff\x7f\x00 \t[]_~|^`{}<>\"'";
    for base in bases {
        for at in 0..=base.len() {
            for &b in bytes {
                let mut replaced = base.as_bytes().to_vec();
                let mut inserted = replaced.clone();
                inserted.insert(at, b);
                if at < replaced.len() {
                    replaced[at] = b;
                }
                for url in [replaced, inserted] {
                    if let Err(e) = check(&url) {
                        panic!("{e}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn on_long_plain_urls_and_near_misses(url in long_plain_url_near_misses()) {
        check(&url).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn on_assembled_urls(url in url_parts()) {
        check(&url).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn on_plain_urls_and_near_misses(url in plain_url_near_misses()) {
        check(&url).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn on_delimiter_soup(url in url_soup()) {
        check(&url).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn on_arbitrary_bytes(url in prop::collection::vec(any::<u8>(), 0..40)) {
        check(&url).map_err(TestCaseError::fail)?;
    }
}

/// The forms the issue names, each with the origin a WHATWG fetcher uses.
#[test]
fn named_forms() {
    let cases: &[(&str, Result<&str, UrlError>)] = &[
        (r"http://evil.com\@good.com/", Ok("http://evil.com")),
        ("http://0x7f.1/", Ok("http://127.0.0.1")),
        ("http://127.1/", Ok("http://127.0.0.1")),
        ("http://2130706433/", Ok("http://127.0.0.1")),
        ("http://0177.0.0.1/", Ok("http://127.0.0.1")),
        ("http://127.0.0.1./", Ok("http://127.0.0.1")),
        ("http://256.256.256.256/", Err(UrlError::InvalidIpv4)),
        ("http://example.256/", Err(UrlError::InvalidIpv4)),
        ("http://xn--/", Err(UrlError::InvalidPunycode)),
        ("http://ex%61mple.com/", Ok("http://example.com")),
        ("http://ex%2fample.com/", Err(UrlError::ForbiddenHostCodePoint(b'/'))),
        ("  \thttp://exa\nmple.com/\r\n", Ok("http://example.com")),
        ("http:example.com", Err(UrlError::MissingSlashes)),
        ("http:/x.com", Err(UrlError::MissingSlashes)),
        (r"http:\\x.com", Ok("http://x.com")),
        ("http:///x.com", Ok("http://x.com")),
        ("http://[::ffff:192.0.2.1]:8080/", Ok("http://[::ffff:c000:201]:8080")),
    ];
    let mut buf = KeyBuf::new();
    for (url, expected) in cases {
        let got = buf.parse(url.as_bytes()).map(|o| String::from_utf8_lossy(o.key).into_owned());
        assert_eq!(got.as_deref().map_err(|e| *e), *expected, "{url}");
        check(url.as_bytes()).unwrap();
    }
    // Every refusal says what is wrong.
    assert_eq!(UrlError::ForbiddenHostCodePoint(b'<').to_string(), "host contains '<', which no host may hold");
    assert_eq!(UrlError::ForbiddenHostCodePoint(0).to_string(), "host contains byte 0x00, which no host may hold");
}

/// Paths through `..`, `\` and `%2e` are the paths the fetcher requests.
#[test]
fn default_paths_are_the_fetchers() {
    let mut buf = KeyBuf::new();
    for (url, path) in [
        ("http://a.com/x/../private", "/private"),
        ("http://a.com/x/%2E%2e/private", "/private"),
        (r"http://a.com\x\..\private?q", "/private?q"),
        ("http://a.com/a b/%7e?c d'", "/a%20b/%7E?c%20d%27"),
        ("http://a.com/caf\u{e9}", "/caf%C3%A9"),
        ("https://u;x@example.com/ab/", "/ab/"),
    ] {
        assert_eq!(buf.parse(url.as_bytes()).unwrap().path, path.as_bytes(), "{url}");
        check(url.as_bytes()).unwrap();
    }
}

/// Every URL of the real-world lists: both checks, and how many the oracle
/// and robotsieve accept.
#[test]
fn real_urls() {
    let Some(dir) = robotsieve_testkit::shared_path("realworld/urls") else {
        eprintln!("skipped: shared/realworld/urls is absent");
        return;
    };
    let mut urls: Vec<Vec<u8>> = Vec::new();
    let tsv = std::fs::read(dir.join("crawl2019-linkgraph.tsv")).expect("crawl2019-linkgraph.tsv");
    urls.extend(tsv.split(|&b| b == b'\n').skip(1).filter_map(|l| l.split(|&b| b == b'\t').nth(1)).map(<[u8]>::to_vec));
    let text = std::fs::read(dir.join("kasztp-urls.txt")).expect("kasztp-urls.txt");
    urls.extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    assert!(urls.len() > 150_000, "only {} real URLs under {}", urls.len(), dir.display());
    let mut failures = Vec::new();
    let mut rejected: BTreeMap<String, usize> = BTreeMap::new();
    let mut buf = KeyBuf::new();
    // URLs whose key the fast path took as the URL's own first bytes: the
    // comparison above covers that path only if real URLs take it.
    let mut borrowed = 0;
    for url in &urls {
        if let Err(e) = check(url) {
            failures.push(e);
        }
        match buf.parse(url) {
            Ok(origin) => borrowed += usize::from(origin.key.as_ptr() == trim_c0_and_space(url).as_ptr()),
            Err(e) => *rejected.entry(format!("{e:?}")).or_default() += 1,
        }
    }
    robotsieve_testkit::assert_none_disagree(&failures, urls.len(), 20, format_args!("real URLs"));
    assert!(borrowed > urls.len() / 2, "only {borrowed} of {} real URLs have their key as written", urls.len());
    eprintln!(
        "{} real URLs agree with the url crate ({borrowed} keys as written); robotsieve refuses {rejected:?}",
        urls.len()
    );
}
