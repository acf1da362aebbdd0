//! Matching cost per URL path: the compiled matcher (`Matcher::matcher`,
//! `MatcherRef::decide`) against the per-rule oracle `Group::decide`, measured in
//! the same run, on real robots.txt files of four sizes (googlebot's group):
//! the first corpus file with about 10 rules, the first with about 200, and
//! the two largest (docs.oracle.com, www.xuexi.cn). Paths are drawn from each
//! file's own rules (stars filled, `$` honoured or broken, near misses),
//! padded toward 80 bytes like real paths.
//!
//! `cargo bench -p robotsieve-benches --bench matcher`; skips when
//! ../shared/realworld is absent. Compile throughput over the whole corpus is
//! `src/bin/compile_corpus.rs`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use robotsieve_compiler::automaton::{compile, BuildOptions};
use robotsieve_core::pattern;
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_testkit::shared_dir;
use std::path::{Path, PathBuf};

/// Paths per file.
const PATHS: usize = 2000;

fn corpus_dir() -> Option<PathBuf> {
    shared_dir().map(|d| d.join("realworld/robots")).filter(|d| d.is_dir())
}

fn group_of(file: &Path) -> Option<Group> {
    let body = std::fs::read(file).ok()?;
    Some(Group::select(&RobotsTxt::parse(&body), &Agent::parse("googlebot").expect("valid token")))
}

/// The first file (in name order) whose googlebot group has `lo..=hi` rules.
fn file_with_rules(dir: &Path, lo: usize, hi: usize) -> Option<(String, Group)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "txt")).find_map(|p| {
        let group = group_of(&p)?;
        let name = p.file_name()?.to_string_lossy().into_owned();
        (lo..=hi).contains(&group.rules.len()).then_some((name, group))
    })
}

/// Deterministic paths built from the group's rules.
fn paths_of(group: &Group) -> Vec<Vec<u8>> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let fills: [&[u8]; 6] = [b"", b"x", b"a/b/c", b".html", b"?id=12345&page=2", b"/2024/05/some-article-title"];
    (0..PATHS)
        .map(|_| {
            let rule = &group.rules[next(group.rules.len())];
            let (body, anchored) = pattern::split_anchor(&rule.pattern);
            let mut path = Vec::with_capacity(96);
            for &b in body {
                if b == b'*' {
                    path.extend_from_slice(fills[next(fills.len())]);
                } else {
                    path.push(b);
                }
            }
            match next(4) {
                // A near miss: one byte dropped.
                0 if path.len() > 1 => {
                    let at = next(path.len());
                    path.remove(at);
                }
                // The `$` honoured: the path ends there.
                1 if anchored => {}
                // Extended toward a realistic 80 bytes.
                _ => {
                    while path.len() < 80 {
                        path.extend_from_slice(fills[1 + next(fills.len() - 1)]);
                    }
                }
            }
            path
        })
        .collect()
}

fn matcher(c: &mut Criterion) {
    let Some(dir) = corpus_dir() else {
        eprintln!("skipped: ../shared/realworld/robots is absent");
        return;
    };
    let mut files: Vec<(String, Group)> = Vec::new();
    files.extend(file_with_rules(&dir, 9, 11));
    files.extend(file_with_rules(&dir, 190, 210));
    for name in ["docs.oracle.com.txt", "www.xuexi.cn.txt"] {
        files.extend(group_of(&dir.join(name)).map(|g| (name.to_string(), g)));
    }
    for (name, group) in &files {
        if group.rules.is_empty() {
            continue;
        }
        let compiled = compile(group, &BuildOptions::default());
        eprintln!("{name}: {}", compiled.stats);
        let matcher = compiled.matcher.matcher();
        let paths = paths_of(group);
        let mean_len = paths.iter().map(Vec::len).sum::<usize>() / paths.len();
        let mut bench =
            c.benchmark_group(format!("matcher/{name} ({} rules, paths of {mean_len} bytes)", group.rules.len()));
        bench.throughput(Throughput::Elements(paths.len() as u64));
        bench.sample_size(20);
        bench.bench_function("compiled", |b| {
            b.iter(|| paths.iter().filter(|p| matcher.decide(black_box(p)).allowed()).count())
        });
        bench.bench_function("oracle_group_decide", |b| {
            b.iter(|| paths.iter().filter(|p| group.decide(black_box(p)).allowed()).count())
        });
        bench.finish();
    }
}

criterion_group!(benches, matcher);
criterion_main!(benches);
