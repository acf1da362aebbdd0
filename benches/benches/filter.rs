//! The filter pipeline's own cost: a 100 MB list of real URLs streamed
//! through a trivial classifier, against the floor of reading the same mapped
//! file and counting its lines, measured in the same run, on 1 and 2 threads.
//!
//! - `floor_count_lines/1`: one thread counts newlines in the mapped file.
//! - `floor_count_lines/2`: two threads, one half each.
//! - `pipeline_counts/N`: the pipeline on N workers, no output (counts only).
//! - `pipeline_one_list/N`: plus the disallowed URLs written to a sink.
//! - `pipeline_all_lists/N`: plus every URL in the list of its verdict.
//! - `pipeline_verdicts/N`: plus a `VERDICT<TAB>URL` line per URL to a sink.
//!
//! Throughput is in URLs (lines); divide a pipeline's URLs/s by the floor's.
//! The target: the pipeline at 25% of the floor or better, and 2 threads
//! about twice as fast as 1.
//!
//! `cargo bench -p robotsieve-benches --bench filter`; the URL file is made
//! once in Cargo's bench temp dir from ../shared/realworld/urls, and the
//! bench skips when that is absent.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use robotsieve_core::Verdict;
use robotsieve_engine::ArtifactError;
use robotsieve_filter::Outputs;
use robotsieve_filter::{Classifier, Config, Input, Pipeline};
use robotsieve_testkit::shared_dir;
use std::io::Write;
use std::path::{Path, PathBuf};

const TARGET_BYTES: usize = 100 << 20;

/// The real URLs of the shared data: the crawl2019 link graph and kasztp.
fn real_urls(shared: &Path) -> Option<Vec<u8>> {
    let urls = shared.join("realworld/urls");
    let crawl = std::fs::read_to_string(urls.join("crawl2019-linkgraph.tsv")).ok()?;
    let kasztp = std::fs::read_to_string(urls.join("kasztp-urls.txt")).ok()?;
    let mut list = Vec::new();
    let crawl_urls = crawl.lines().skip(1).filter_map(|line| line.split('\t').nth(1));
    let kasztp_urls = kasztp.lines().map(|line| line.trim_start_matches('\u{feff}'));
    for url in crawl_urls.chain(kasztp_urls).filter(|url| !url.is_empty()) {
        list.extend_from_slice(url.as_bytes());
        list.push(b'\n');
    }
    Some(list)
}

/// A file of at least 100 MB of real URLs (the lists repeated), made once.
fn url_file() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("filter-bench-urls.txt");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= TARGET_BYTES as u64) {
        return Some(path);
    }
    let urls = real_urls(&shared_dir()?)?;
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).ok()?);
    let mut written = 0;
    while written < TARGET_BYTES {
        file.write_all(&urls).ok()?;
        written += urls.len();
    }
    file.flush().ok()?;
    Some(path)
}

/// A verdict from the URL's length: as cheap as a classifier can be, and
/// both verdicts are common.
struct LengthParity;

impl Classifier for LengthParity {
    type Scratch = ();
    type Error = ArtifactError;

    fn classify(&self, url: &[u8], _: &mut (), _: Option<&mut Vec<u8>>) -> Result<Verdict, ArtifactError> {
        Ok(if url.len() % 2 == 0 { Verdict::Allowed } else { Verdict::Disallowed })
    }
}

fn count_lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

fn filter(c: &mut Criterion) {
    let Some(path) = url_file() else {
        eprintln!("skipped: ../shared/realworld/urls is absent");
        return;
    };
    let floor_input = Input::open(&path).expect("the bench file opens");
    let bytes = floor_input.mapped_bytes().expect("a regular file is mapped");
    let mut input = Input::open(&path).expect("the bench file opens");
    let lines = count_lines(bytes) as u64;
    eprintln!("{}: {} MB, {lines} URLs", path.display(), bytes.len() >> 20);

    let mut group = c.benchmark_group("filter");
    group.throughput(Throughput::Elements(lines));
    group.sample_size(10);
    group.bench_with_input(BenchmarkId::new("floor_count_lines", 1), bytes, |b, bytes| {
        b.iter(|| count_lines(black_box(bytes)))
    });
    group.bench_with_input(BenchmarkId::new("floor_count_lines", 2), bytes, |b, bytes| {
        let middle = bytes.len() / 2;
        b.iter(|| {
            std::thread::scope(|scope| {
                let first = scope.spawn(|| count_lines(black_box(&bytes[..middle])));
                count_lines(black_box(&bytes[middle..])) + first.join().expect("no panic")
            })
        })
    });
    drop(group);

    let mut group = c.benchmark_group("filter");
    group.throughput(Throughput::Elements(lines));
    group.sample_size(10);
    for threads in [1, 2] {
        let pipeline = Pipeline::new(Config { threads, ..Config::default() }).expect("a pool");
        group.bench_function(BenchmarkId::new("pipeline_counts", threads), |b| {
            b.iter(|| {
                let report = pipeline.run(&LengthParity, &mut input, &mut Outputs::new(), None).expect("runs");
                assert_eq!(report.stats.urls(), lines);
            })
        });
        group.bench_function(BenchmarkId::new("pipeline_one_list", threads), |b| {
            let mut sink = std::io::sink();
            b.iter(|| {
                let mut outputs = Outputs::new().list(Verdict::Disallowed, "sink", &mut sink);
                pipeline.run(&LengthParity, &mut input, &mut outputs, None).expect("runs")
            })
        });
        group.bench_function(BenchmarkId::new("pipeline_all_lists", threads), |b| {
            let mut sinks: [std::io::Sink; 4] = Default::default();
            b.iter(|| {
                let [allowed, disallowed, unknown, invalid] = &mut sinks;
                let mut outputs = Outputs::new()
                    .list(Verdict::Allowed, "sink", allowed)
                    .list(Verdict::Disallowed, "sink", disallowed)
                    .list(Verdict::Unknown, "sink", unknown)
                    .list(Verdict::Invalid, "sink", invalid);
                pipeline.run(&LengthParity, &mut input, &mut outputs, None).expect("runs")
            })
        });
        group.bench_function(BenchmarkId::new("pipeline_verdicts", threads), |b| {
            let mut sink = std::io::sink();
            b.iter(|| {
                let mut outputs = Outputs::new().verdicts("sink", &mut sink);
                pipeline.run(&LengthParity, &mut input, &mut outputs, None).expect("runs")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, filter);
criterion_main!(benches);
