//! Pages per second for page-level rules (`robotsieve_compiler::page`): the
//! head scan plus combination for one crawler, on generated pages of
//! realistic shape, against a baseline measured in the same run: the same
//! tokenizer (html5gum) reading the whole page with its default token
//! emitter, which is what reading a page without stopping at the end of the
//! head costs.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robotsieve_compiler::page::PageRules;
use robotsieve_compiler::Agent;

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

criterion_group!(benches, pages);
criterion_main!(benches);
