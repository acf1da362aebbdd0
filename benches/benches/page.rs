//! Pages per second for page-level rules (`robotsieve_page`): the
//! head scan plus combination for one crawler, on generated pages of
//! realistic shape, against a baseline measured in the same run: the same
//! tokenizer (html5gum) reading the whole page with its default token
//! emitter, which is what reading a page without stopping at the end of the
//! head costs.
//!
//! Bulk: an in-memory WARC of HTTP responses (the three page shapes, with
//! `X-Robots-Tag` headers on some), read with `robotsieve_sources::warc` and
//! evaluated per record, on one thread and split over all cores; the baseline
//! is reading the records alone.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robotsieve_page::PageRules;
use robotsieve_robotstxt::Agent;
use robotsieve_sources::warc::{self, WarcRecord};

/// About 30 KB with a big head (about 17 KB: metadata, preloads, JSON-LD, an
/// inline stylesheet and script) and the robots tags at its end, then a body.
fn big_head_page() -> Vec<u8> {
    let mut page = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>A news article &amp; its title</title>\n");
    for i in 0..40 {
        page.push_str(&format!(
            "<meta property=\"og:tag{i}\" content=\"Open Graph value number {i} with some words\">\n\
             <link rel=\"preload\" href=\"/static/asset-{i}.woff2\" as=\"font\" crossorigin>\n"
        ));
    }
    page.push_str(
        "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":\"NewsArticle\",",
    );
    page.push_str(&"\"keywords\":\"<meta name=robots content=noindex>\",".repeat(40));
    page.push_str("\"x\":1}</script>\n<style>\n");
    page.push_str(&".c{margin:0 auto;padding:4px 8px;font:14px/1.4 sans-serif}\n".repeat(80));
    page.push_str(
        "</style>\n<script>window.dataLayer=window.dataLayer||[];function g(){dataLayer.push(arguments)}</script>\n",
    );
    page.push_str("<meta name=\"robots\" content=\"max-snippet:-1, max-image-preview:large, max-video-preview:-1\">\n");
    page.push_str("<meta name=\"googlebot\" content=\"noarchive\">\n</head>\n<body>\n");
    while page.len() < 30_000 {
        page.push_str(
            "<div class=\"c\"><p>Body text of the article, with <a href=\"/x\">a link</a> and more words.</p></div>\n",
        );
    }
    page.push_str("</body>\n</html>\n");
    page.into_bytes()
}

/// About 30 KB with no head element: body content from the first tag.
fn no_head_page() -> Vec<u8> {
    let mut page = String::from("<!DOCTYPE html>\n<html>\n<body>\n");
    while page.len() < 30_000 {
        page.push_str(
            "<div class=\"c\"><p>Body text of the page, with <a href=\"/x\">a link</a> and more words.</p></div>\n",
        );
    }
    page.push_str("<meta name=\"robots\" content=\"noindex\">\n</body>\n</html>\n");
    page.into_bytes()
}

/// The baseline: html5gum's default tokenizer over the whole page, counting
/// `<meta>` start tags.
fn tokenize_whole_page(page: &[u8]) -> usize {
    html5gum::Tokenizer::new(page)
        .filter(|t| matches!(t, Ok(html5gum::Token::StartTag(tag)) if tag.name.as_slice() == b"meta"))
        .count()
}

fn pages(c: &mut Criterion) {
    let agent = Agent::parse("googlebot").unwrap();
    let headers: [(&[u8], &[u8]); 2] = [(b"Content-Type", b"text/html"), (b"X-Robots-Tag", b"otherbot: noindex")];
    for (name, page) in [("big_head_30k", big_head_page()), ("no_head_30k", no_head_page())] {
        let rules = PageRules::evaluate(&agent, &page, &headers);
        assert!(rules.index, "{name}: the generated page is meant to be indexable");
        let mut group = c.benchmark_group(format!("page/{name}"));
        group.throughput(Throughput::Elements(1));
        group.bench_function("robotsieve_head_scan", |b| {
            b.iter(|| PageRules::evaluate(&agent, black_box(&page), &headers))
        });
        group.bench_function("baseline_tokenize_whole_page", |b| b.iter(|| tokenize_whole_page(black_box(&page))));
        group.finish();
    }
}

/// About 45 KB: a typical 3 KB head, then a long body.
fn typical_page() -> Vec<u8> {
    let mut page = String::from("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Typical</title>\n");
    for i in 0..20 {
        page.push_str(&format!(
            "<link rel=\"stylesheet\" href=\"/css/part-{i}.css\">\n<meta property=\"og:x{i}\" content=\"v\">\n"
        ));
    }
    page.push_str("<meta name=\"robots\" content=\"index, follow\">\n</head>\n<body>\n");
    while page.len() < 45_000 {
        page.push_str("<div><p>Paragraph of body text with <a href=\"/y\">links</a>.</p></div>\n");
    }
    page.push_str("</body>\n</html>\n");
    page.into_bytes()
}

/// A WARC of `count` HTTP responses cycling through the page shapes, every
/// fourth with an `X-Robots-Tag` header, with request records between them.
fn warc_bytes(count: usize) -> Vec<u8> {
    let shapes = [big_head_page(), no_head_page(), typical_page()];
    let mut warc = Vec::new();
    let mut record = |kind: &str, uri: &str, block: &[u8]| {
        let head = format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n\
             Content-Type: application/http; msgtype={kind}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        );
        warc.extend_from_slice(head.as_bytes());
        warc.extend_from_slice(block);
        warc.extend_from_slice(b"\r\n\r\n");
    };
    for i in 0..count {
        let uri = format!("https://site{}.example/page/{i}", i % 50);
        record("request", &uri, format!("GET /page/{i} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
        let header = if i % 4 == 0 { "X-Robots-Tag: googlebot: noindex\r\n" } else { "" };
        let mut block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{header}\r\n").into_bytes();
        block.extend_from_slice(&shapes[i % shapes.len()]);
        record("response", &uri, &block);
    }
    warc
}

fn read_records(warc: &[u8]) -> Vec<WarcRecord> {
    warc::reader(warc).unwrap().map(Result::unwrap).collect()
}

/// Evaluates the HTTP response records; returns how many are noindex.
fn evaluate(agent: &Agent, records: &[WarcRecord]) -> usize {
    records
        .iter()
        .filter(|r| r.record_type() == Some("response"))
        .map(|r| PageRules::evaluate_response(agent, &r.http_response().unwrap()).unwrap())
        .filter(|rules| !rules.index)
        .count()
}

fn bulk(c: &mut Criterion) {
    const PAGES: usize = 300;
    let agent = Agent::parse("googlebot").unwrap();
    let warc = warc_bytes(PAGES);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(evaluate(&agent, &read_records(&warc)), PAGES / 4);
    let mut group = c.benchmark_group("page/bulk_warc_300");
    group.throughput(Throughput::Elements(PAGES as u64));
    group.sample_size(20);
    group.bench_function("baseline_read_records", |b| b.iter(|| read_records(black_box(&warc)).len()));
    group
        .bench_function("read_and_evaluate_1_thread", |b| b.iter(|| evaluate(&agent, &read_records(black_box(&warc)))));
    group.bench_function(format!("read_and_evaluate_{threads}_threads"), |b| {
        b.iter(|| {
            let records = read_records(black_box(&warc));
            let chunk = records.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let workers: Vec<_> =
                    records.chunks(chunk).map(|part| scope.spawn(|| evaluate(&agent, part))).collect();
                workers.into_iter().map(|w| w.join().unwrap()).sum::<usize>()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, pages, bulk);
criterion_main!(benches);
