//! Origin parsing per URL on the real crawl2019 URL list: `KeyBuf::parse` plus
//! `origin_hash` (what the filter does per URL before the artifact lookup),
//! against Google's path extraction alone (`path_params_query`) measured in
//! the same run as the baseline.
//!
//! `parse_mix` times `KeyBuf::parse` alone on the URL mix the filter sees: the
//! crawl2019 URLs plus the first 20,000 URLs of the synthetic frontier made by
//! the peer comparison (`target/peers-data/synthetic-n1000000-seed1.urls.txt`,
//! or `$ROBOTSIEVE_SYNTH_URLS`; left out when absent). Divide the time by the
//! element count for ns per URL.
//!
//! `cargo bench -p robotsieve-benches --bench origin`; skips when
//! ../shared/realworld is absent.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robotsieve_core::url::{origin_hash, path_params_query, KeyBuf};
use std::path::PathBuf;

fn urls() -> Option<Vec<String>> {
    let shared = robotsieve_testkit::shared_dir()?;
    let text = std::fs::read_to_string(shared.join("realworld/urls/crawl2019-linkgraph.tsv")).ok()?;
    Some(text.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).map(str::to_owned).collect())
}

/// The first 20,000 URLs of the synthetic frontier, if it has been generated.
fn synthetic_urls() -> Option<Vec<String>> {
    const NAME: &str = "target/peers-data/synthetic-n1000000-seed1.urls.txt";
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [std::env::var_os("ROBOTSIEVE_SYNTH_URLS").map(PathBuf::from), Some(workspace.join(NAME))];
    // A git worktree has no target/ of its own: also look in the main checkout's.
    let main_checkout = workspace.join("../main").join(NAME);
    let path = candidates.into_iter().flatten().chain([main_checkout]).find(|p| p.is_file())?;
    let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    use std::io::BufRead as _;
    Some(file.lines().take(20_000).map_while(Result::ok).collect())
}

/// Parses every URL (the timed work of `keybuf_parse`), returning a sum of
/// key and path lengths so that nothing is optimised away.
fn parse_all(buf: &mut KeyBuf, urls: &[String]) -> usize {
    let mut acc = 0usize;
    for url in urls {
        if let Ok(o) = buf.parse(black_box(url.as_bytes())) {
            acc += o.key.len() + o.path.len();
        }
    }
    acc
}

fn parse_mix(c: &mut Criterion) {
    let Some(mut urls) = urls() else {
        eprintln!("skipped: ../shared/realworld/urls/crawl2019-linkgraph.tsv is absent");
        return;
    };
    match synthetic_urls() {
        Some(synthetic) => urls.extend(synthetic),
        None => eprintln!("parse_mix: the synthetic frontier is absent; crawl2019 URLs only"),
    }
    let mut group = c.benchmark_group("parse_mix");
    group.throughput(Throughput::Elements(urls.len() as u64));
    group.sample_size(30);
    group.bench_function(format!("keybuf_parse_{}_urls", urls.len()), |b| {
        let mut buf = KeyBuf::new();
        b.iter(|| parse_all(&mut buf, &urls))
    });
    group.finish();
}

fn origin(c: &mut Criterion) {
    let Some(urls) = urls() else {
        eprintln!("skipped: ../shared/realworld/urls/crawl2019-linkgraph.tsv is absent");
        return;
    };
    let mut group = c.benchmark_group("origin");
    group.throughput(Throughput::Elements(urls.len() as u64));
    group.sample_size(20);
    group.bench_function("keybuf_parse_and_hash", |b| {
        let mut buf = KeyBuf::new();
        b.iter(|| {
            let mut acc = 0u64;
            for url in &urls {
                if let Ok(o) = buf.parse(black_box(url.as_bytes())) {
                    acc ^= origin_hash(o.key) ^ o.path.len() as u64;
                }
            }
            acc
        })
    });
    group.bench_function("keybuf_parse", |b| {
        let mut buf = KeyBuf::new();
        b.iter(|| parse_all(&mut buf, &urls))
    });
    group.bench_function("baseline_path_params_query", |b| {
        b.iter(|| {
            let mut acc = 0usize;
            for url in &urls {
                acc += path_params_query(black_box(url.as_bytes())).len();
            }
            acc
        })
    });
    group.finish();
}

criterion_group!(benches, parse_mix, origin);
criterion_main!(benches);
