//! Origin parsing per URL on the real crawl2019 URL list: `KeyBuf::parse` plus
//! `origin_hash` (what the filter does per URL before the artifact lookup),
//! against Google's path extraction alone (`path_params_query`) measured in
//! the same run as the baseline.
//!
//! `cargo bench -p robotsieve-benches --bench origin`; skips when
//! ../shared/realworld is absent.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robotsieve_engine::url::{origin_hash, path_params_query, KeyBuf};
use std::path::PathBuf;

fn urls() -> Option<Vec<String>> {
    let shared = std::env::var_os("ROBOTSIEVE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    let text = std::fs::read_to_string(shared.join("realworld/urls/crawl2019-linkgraph.tsv")).ok()?;
    Some(text.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).map(str::to_owned).collect())
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
        b.iter(|| {
            let mut acc = 0usize;
            for url in &urls {
                if let Ok(o) = buf.parse(black_box(url.as_bytes())) {
                    acc += o.key.len() + o.path.len();
                }
            }
            acc
        })
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

criterion_group!(benches, origin);
criterion_main!(benches);
