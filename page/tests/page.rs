//! Page-level rules: the documented examples, combination per crawler,
//! conflicts, headers, malformed markup and non-UTF-8 pages.

use proptest::prelude::*;
use robotsieve_page::{parse_directives, scan_head, Directive, Field, ImagePreview, MetaTag, Origin, PageRules};
use robotsieve_robotstxt::Agent;
use robotsieve_sources::Timestamp;

fn agent(spec: &str) -> Agent {
    Agent::parse(spec).unwrap()
}

fn rules(spec: &str, html: &str) -> PageRules {
    PageRules::evaluate(&agent(spec), html.as_bytes(), &[])
}

fn with_headers(spec: &str, html: &str, headers: &[&str]) -> PageRules {
    let pairs: Vec<(&[u8], &[u8])> = headers
        .iter()
        .map(|h| {
            let (name, value) = h.split_once(':').unwrap();
            (name.as_bytes(), value.trim().as_bytes())
        })
        .collect();
    PageRules::evaluate(&agent(spec), html.as_bytes(), &pairs)
}

fn page(meta: &str) -> String {
    format!("<!DOCTYPE html>\n<html>\n<head>\n<title>x</title>\n{meta}\n</head>\n<body><p>text</p></body>\n</html>\n")
}

#[test]
fn documented_index_follow_combinations() {
    for (content, index, follow) in [
        ("INDEX,FOLLOW", true, true),
        ("NOINDEX,FOLLOW", false, true),
        ("INDEX,NOFOLLOW", true, false),
        ("NOINDEX,NOFOLLOW", false, false),
        ("ALL", true, true),
        ("NONE", false, false),
    ] {
        let r = rules("googlebot", &page(&format!(r#"<meta name="ROBOTS" content="{content}">"#)));
        assert_eq!((r.index, r.follow), (index, follow), "{content}");
        // Nothing else is touched by these.
        assert!(r.archive && r.snippet && r.image_index && r.translate, "{content}");
        assert_eq!(r.problems().count(), 0, "{content}");
    }
}

#[test]
fn googlebot_specific_noarchive_applies_to_googlebot_only() {
    let html = page("<meta name=\"robots\" content=\"nofollow\">\n<meta name=\"googlebot\" content=\"noarchive\">");
    let google = rules("googlebot", &html);
    assert!(google.index && !google.follow && !google.archive);
    assert_eq!(google.decided_by(Field::Archive).unwrap().origin, Origin::Meta { line: 6, name: "googlebot".into() });
    assert_eq!(google.decided_by(Field::Follow).unwrap().origin, Origin::Meta { line: 5, name: "robots".into() });
    let other = rules("bingbot", &html);
    assert!(other.index && !other.follow && other.archive);
    assert_eq!(other.decided_by(Field::Archive), None);
}

#[test]
fn defaults_without_any_tag() {
    let r = rules("googlebot", &page("<meta name=description content=\"noindex\">"));
    assert_eq!(r, PageRules::default());
    assert_eq!(
        r.to_string(),
        "index=true follow=true archive=true snippet=true imageindex=true translate=true indexifembedded=false \
         max-snippet=-1 max-image-preview=default max-video-preview=-1 unavailable_after=none"
    );
}

#[test]
fn every_directive_has_its_effect() {
    let r = rules(
        "googlebot",
        &page(
            "<meta name=robots content=\"noarchive, nosnippet, noimageindex, notranslate, indexifembedded, \
             max-snippet:30, max-image-preview:none, max-video-preview:0, unavailable_after: 2030-01-01\">",
        ),
    );
    assert!(r.index && r.follow && !r.archive && !r.snippet && !r.image_index && !r.translate && r.index_if_embedded);
    assert_eq!(r.max_snippet, Some(30));
    assert_eq!(r.max_image_preview, Some(ImagePreview::None));
    assert_eq!(r.max_video_preview, Some(0));
    assert_eq!(r.unavailable_after.map(|t| t.to_string()).as_deref(), Some("2030-01-01T00:00:00Z"));
    assert!(!rules("x", &page("<meta name=robots content=nocache>")).archive);
    assert!(!rules("x", &page("<meta name=robots content=max-snippet:0>")).snippet);
}

#[test]
fn a_crawler_with_several_tokens_reads_tags_for_each() {
    let html = page(
        "<meta name=googlebot-news content=nosnippet><meta name=googlebot content=noindex><meta name=otherbot content=nofollow>",
    );
    let r = rules("googlebot-news,googlebot", &html);
    assert!(!r.snippet && !r.index && r.follow);
    let news_only = rules("googlebot-news", &html);
    assert!(!news_only.snippet && news_only.index);
}

#[test]
fn conflicts_resolve_to_the_more_restrictive_in_any_order() {
    for html in [
        page("<meta name=robots content=index><meta name=googlebot content=noindex>"),
        page("<meta name=googlebot content=noindex><meta name=robots content=index>"),
        page("<meta name=robots content=\"noindex, index, all\">"),
    ] {
        assert!(!rules("googlebot", &html).index, "{html}");
    }
    let r = rules(
        "googlebot",
        &page(
            "<meta name=robots content=\"max-snippet:-1, max-video-preview:10, max-image-preview:large, \
             unavailable_after: 2031-05-01\"><meta name=googlebot content=\"max-snippet:100, max-video-preview:-1, \
             max-image-preview:standard, unavailable_after: 2030-05-01\">",
        ),
    );
    assert_eq!((r.max_snippet, r.max_video_preview), (Some(100), Some(10)));
    assert_eq!(r.max_image_preview, Some(ImagePreview::Standard));
    assert_eq!(r.unavailable_after.unwrap().to_string(), "2030-05-01T00:00:00Z");
    assert_eq!(r.decided_by(Field::MaxVideoPreview).unwrap().origin, Origin::Meta { line: 5, name: "robots".into() });
}

#[test]
fn headers_with_and_without_agent_prefixes() {
    let html = page("");
    let r = with_headers(
        "googlebot",
        &html,
        &["X-Robots-Tag: noarchive", "x-robots-tag: googlebot: noindex, nofollow", "X-ROBOTS-TAG: otherbot: nosnippet"],
    );
    assert!(!r.archive && !r.index && !r.follow && r.snippet);
    assert_eq!(
        r.decided_by(Field::Index).unwrap().origin,
        Origin::Header { number: 2, agent: Some("googlebot".into()) }
    );
    assert_eq!(r.decided_by(Field::Archive).unwrap().origin, Origin::Header { number: 1, agent: None });
    let other =
        with_headers("otherbot", &html, &["X-Robots-Tag: googlebot: noindex", "X-Robots-Tag: otherbot: nosnippet"]);
    assert!(other.index && !other.snippet);
    // Other headers are not read; a header date with a comma stays whole.
    let r = with_headers(
        "googlebot",
        &html,
        &["Content-Type: noindex", "X-Robots-Tag: unavailable_after: Fri, 25 Jun 2010 15:00:00 PST"],
    );
    assert!(r.index);
    assert_eq!(r.unavailable_after, Some(Timestamp::from_unix(1_277_506_800)));
    // Headers and tags combine.
    let r = with_headers("googlebot", &page("<meta name=robots content=nofollow>"), &["X-Robots-Tag: noindex"]);
    assert!(!r.index && !r.follow);
}

#[test]
fn unknown_directives_are_reported_not_fatal() {
    let r = rules("googlebot", &page("<meta name=robots content=\"noodp, noindex, max-snippet:lots\">"));
    assert!(!r.index);
    let problems: Vec<String> = r.problems().map(|(s, d)| format!("{}: {d}", s.origin)).collect();
    assert_eq!(
        problems,
        vec![
            "line 5 <meta name=\"robots\">: unknown directive \"noodp\"".to_string(),
            "line 5 <meta name=\"robots\">: invalid directive \"max-snippet:lots\": value is not -1 or a whole number"
                .to_string(),
        ]
    );
}

#[test]
fn markup_variants_uppercase_quoting_order_and_entities() {
    for tag in [
        r#"<META NAME="ROBOTS" CONTENT="NOINDEX">"#,
        r#"<meta content='noindex' name='robots'>"#,
        r#"<meta content=noindex name=robots />"#,
        r#"<meta name = " Robots " content = "noindex" >"#,
        r#"<meta name="robots" content="no&#105;ndex">"#,
        r#"<meta name="robots" content="&#x6E;oindex&comma;nofollow">"#,
        "<meta\nname=robots\ncontent=noindex>",
        // The first of duplicate attributes counts.
        r#"<meta name="robots" name="description" content="noindex" content="index">"#,
    ] {
        assert!(!rules("googlebot", &page(tag)).index, "{tag}");
    }
    assert!(!rules("googlebot", &page(r#"<meta name="robots" content="&#x6E;oindex&comma;nofollow">"#)).follow);
    // Not robots tags: no name, no content, empty content, other names.
    for tag in [
        r#"<meta content="noindex">"#,
        r#"<meta name="robots">"#,
        r#"<meta name="robots" content="">"#,
        r#"<meta name="robotsx" content="noindex">"#,
        r#"<meta http-equiv="robots" content="noindex">"#,
        r#"<link name="robots" content="noindex">"#,
    ] {
        assert!(rules("googlebot", &page(tag)).index, "{tag}");
    }
}

/// Decision: only tags the HTML parser puts in the head count; the scan
/// stops where the head ends.
#[test]
fn where_the_head_ends() {
    let noindexed = |html: &str| !rules("googlebot", html).index;
    // In the body: ignored.
    assert!(!noindexed("<html><head></head><body><meta name=robots content=noindex></body></html>"));
    assert!(!noindexed("<head><title>t</title></head><div>x</div><meta name=robots content=noindex>"));
    // Body content before a meta ends an implied head: ignored.
    assert!(!noindexed("<html><head><p>para</p><meta name=robots content=noindex></head>"));
    assert!(!noindexed("<head>Hello<meta name=robots content=noindex></head>"));
    assert!(!noindexed("<head></body><meta name=robots content=noindex>"));
    // Between </head> and <body>: the parser moves it into the head, so it counts.
    assert!(noindexed("<html><head></head>\n<meta name=robots content=noindex><body></body>"));
    // No head element at all: the head is implied, so it counts.
    assert!(noindexed("<meta name=robots content=noindex><p>hello</p>"));
    assert!(noindexed("<!doctype html><html><meta name=robots content=noindex><body>"));
    assert!(noindexed("  <!-- comment -->\n<meta name=robots content=noindex>"));
    // Unclosed head and html: read to the end.
    assert!(noindexed("<html><head><title>x</title><meta name=robots content=noindex>"));
    // Stray end tags in the head are ignored, as by the parser.
    assert!(noindexed("<head></div></p><meta name=robots content=noindex></head>"));
    // A meta cut off by the end of the file is not a tag.
    assert!(!noindexed("<head><meta name=robots content=noindex"));
    // Unclosed quotes swallow the rest of the tag soup, but do not fail.
    assert!(!noindexed("<head><meta name=\"robots content=noindex></head><body>"));
    // Text-only and binary pages: defaults.
    assert!(!noindexed("just some text <meta name=robots content=noindex>"));
    assert_eq!(
        PageRules::evaluate(&agent("googlebot"), &[0u8, 159, 146, 150, 255, 0, 60, 62], &[]),
        PageRules::default()
    );
}

#[test]
fn scanning_stops_at_the_end_of_the_head() {
    let html = format!("<head><meta name=robots content=noindex></head><body>{}</body>", "<p>x</p>".repeat(10_000));
    let scan = scan_head(html.as_bytes());
    assert_eq!(scan.tags.len(), 1);
    assert_eq!(scan.bytes_read, html.find("<body>").unwrap());
    let no_head = "<div>body first</div><meta name=robots content=noindex>";
    assert_eq!(scan_head(no_head.as_bytes()).bytes_read, 0);
}

#[test]
fn non_utf8_pages() {
    // Latin-1 in the title, the content and the name of another meta.
    let mut latin1 = b"<head><title>Caf\xe9</title><meta name=\"descr\xe9\" content=\"\xe9t\xe9\">".to_vec();
    latin1.extend_from_slice(b"\n<meta name=robots content=\"noindex, \xe9\"></head>");
    let r = PageRules::evaluate(&agent("googlebot"), &latin1, &[]);
    assert!(!r.index);
    assert_eq!(r.decided_by(Field::Index).unwrap().origin, Origin::Meta { line: 2, name: "robots".into() });
    assert_eq!(r.problems().map(|(_, d)| d.clone()).collect::<Vec<_>>(), vec![Directive::Unknown("\u{fffd}".into())]);
    // Shift_JIS title.
    let sjis = b"<head><title>\x93\xfa\x96\x7b\x8c\xea</title><meta name=robots content=nofollow></head>";
    assert!(!PageRules::evaluate(&agent("googlebot"), sjis, &[]).follow);
    // UTF-16 with a byte order mark, both byte orders; UTF-8 with one.
    let text = "<head>\n<meta name=robots content=noarchive></head>";
    let mut le = vec![0xff, 0xfe];
    let mut be = vec![0xfe, 0xff];
    for unit in text.encode_utf16() {
        le.extend_from_slice(&unit.to_le_bytes());
        be.extend_from_slice(&unit.to_be_bytes());
    }
    for bytes in [le, be, [&[0xef, 0xbb, 0xbf][..], text.as_bytes()].concat()] {
        let r = PageRules::evaluate(&agent("googlebot"), &bytes, &[]);
        assert!(!r.archive);
        assert_eq!(r.decided_by(Field::Archive).unwrap().origin, Origin::Meta { line: 2, name: "robots".into() });
    }
    // A non-UTF-8 header value.
    let r = PageRules::evaluate(&agent("googlebot"), b"", &[(b"X-Robots-Tag", b"noindex, \xff")]);
    assert!(!r.index);
}

#[test]
fn real_html_pages_from_the_corpus_scan_without_failing() {
    let Some(shared) = robotsieve_testkit::shared_dir() else {
        eprintln!("shared/ is absent: skipping the real-page scan");
        return;
    };
    let robots = shared.join("realworld/robots");
    let Ok(entries) = std::fs::read_dir(&robots) else {
        eprintln!("{} is absent: skipping", robots.display());
        return;
    };
    let mut html_pages = 0;
    for entry in entries.flatten() {
        let body = std::fs::read(entry.path()).unwrap();
        let head = &body[..body.len().min(512)];
        if !head.windows(5).any(|w| w.eq_ignore_ascii_case(b"<html")) {
            continue;
        }
        html_pages += 1;
        let scan = scan_head(&body);
        assert!(scan.bytes_read <= body.len());
        let r = PageRules::combine(&agent("googlebot"), &scan.tags, &[] as &[&str]);
        // Every statement read is a robots or googlebot tag from the head.
        assert!(r
            .statements
            .iter()
            .all(|s| matches!(&s.origin, Origin::Meta { name, .. } if name == "robots" || name == "googlebot")));
    }
    assert!(html_pages > 50, "only {html_pages} HTML pages found in {}", robots.display());
}

/// A directive for the property test, as written, and its effect on the
/// oracle below.
fn directive_text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "all",
        "none",
        "index",
        "noindex",
        "follow",
        "nofollow",
        "noarchive",
        "nocache",
        "nosnippet",
        "max-snippet:0",
        "max-snippet:15",
        "max-snippet:-1",
        "max-image-preview:standard",
        "max-image-preview:large",
        "noimageindex",
        "bogus",
    ])
}

proptest! {
    /// Combination against a direct reading of the rules: each field is
    /// restricted if any applicable tag or header restricts it, whatever the
    /// order, and tags for other crawlers change nothing.
    #[test]
    fn combination_matches_the_rules(
        statements in prop::collection::vec((0usize..4, prop::collection::vec(directive_text(), 0..4)), 0..6),
    ) {
        let names = ["robots", "googlebot", "otherbot", "header"];
        let mut tags = Vec::new();
        let mut headers = Vec::new();
        let mut applicable: Vec<&str> = Vec::new();
        for (i, (who, directives)) in statements.iter().enumerate() {
            let content = directives.join(", ");
            if *who == 3 {
                headers.push(content);
            } else {
                tags.push(MetaTag { line: i + 1, name: names[*who].to_string(), content });
            }
            if *who != 2 {
                applicable.extend(directives.iter());
            }
        }
        let r = PageRules::combine(&agent("googlebot"), &tags, &headers);
        let any = |set: &[&str]| applicable.iter().any(|d| set.contains(d));
        prop_assert_eq!(r.index, !any(&["noindex", "none"]));
        prop_assert_eq!(r.follow, !any(&["nofollow", "none"]));
        prop_assert_eq!(r.archive, !any(&["noarchive", "nocache"]));
        prop_assert_eq!(r.snippet, !any(&["nosnippet", "max-snippet:0"]));
        prop_assert_eq!(r.image_index, !any(&["noimageindex"]));
        let snippet_limit = if any(&["max-snippet:0"]) { Some(0) } else if any(&["max-snippet:15"]) { Some(15) } else { None };
        prop_assert_eq!(r.max_snippet, snippet_limit);
        let preview = if any(&["max-image-preview:standard"]) {
            Some(ImagePreview::Standard)
        } else if any(&["max-image-preview:large"]) {
            Some(ImagePreview::Large)
        } else {
            None
        };
        prop_assert_eq!(r.max_image_preview, preview);
        prop_assert_eq!(r.problems().count(), applicable.iter().filter(|d| **d == "bogus").count());
        // The same statements in reverse give the same values.
        tags.reverse();
        headers.reverse();
        let reversed = PageRules::combine(&agent("googlebot"), &tags, &headers);
        prop_assert_eq!(reversed.to_string(), r.to_string());
    }
}

#[test]
fn directive_parser_is_shared_by_tags_and_headers() {
    let content = "noindex, max-snippet:5, unavailable_after: 2020-09-21";
    let from_tag = parse_directives(content);
    let from_header = robotsieve_page::parse_x_robots_tag(content);
    assert_eq!(from_header, vec![(None, from_tag)]);
}

#[test]
fn http_responses_headers_html_and_encoded_bodies() {
    use robotsieve_sources::http::HttpResponse;
    use std::io::Write;
    let googlebot = agent("googlebot");
    let html = b"<html><head><meta name=robots content=nofollow></head><body></body></html>";
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped.write_all(html).unwrap();
    let mut block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nX-Robots-Tag: googlebot: noarchive\r\n\r\n".to_vec();
    block.extend(gzipped.finish().unwrap());
    let r = PageRules::evaluate_response(&googlebot, &HttpResponse::parse(&block).unwrap()).unwrap();
    assert!(r.index && !r.follow && !r.archive);
    // A PDF: only its headers count, and its body is not read as HTML.
    let pdf = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nX-Robots-Tag: noindex\r\n\r\n<meta name=robots content=nofollow>";
    let r = PageRules::evaluate_response(&googlebot, &HttpResponse::parse(pdf).unwrap()).unwrap();
    assert!(!r.index && r.follow);
    // No Content-Type: read as HTML. A body that does not decode: an error.
    let bare = b"HTTP/1.0 200 OK\r\n\r\n<meta name=robots content=none>";
    assert!(!PageRules::evaluate_response(&googlebot, &HttpResponse::parse(bare).unwrap()).unwrap().follow);
    let bad = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\nnot gzip";
    assert!(PageRules::evaluate_response(&googlebot, &HttpResponse::parse(bad).unwrap()).is_err());
}

#[test]
fn directives_need_commas_between_them() {
    let r = rules("googlebot", &page("<meta name=robots content=\"noindex nofollow\">"));
    assert!(r.index && r.follow);
    assert_eq!(
        r.problems().map(|(_, d)| d.clone()).collect::<Vec<_>>(),
        vec![Directive::Unknown("noindex nofollow".into())]
    );
}
