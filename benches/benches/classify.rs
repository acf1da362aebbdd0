//! URL verdicts from a whole-corpus artifact: one URL at a time
//! (`AgentClassifier::answer`, each lookup waiting for the one before)
//! against the filter's batches (`AgentClassifier::verdicts`, every step
//! interleaved across `filter::BATCH` URLs), in the same run.
//!
//! Needs the artifact and frontier the peer comparison generates
//! (`cargo run --release -p robotsieve-benches --bin peers -- --workload
//! synthetic --synth 1000000 --agents mybot`): the first 200,000 URLs of
//! `target/peers-data/synthetic-n1000000-seed1.urls.txt` against
//! `target/peers-data/synthetic-n1000000/rules-mybot.rsv`. Skips when they are
//! absent or the artifact is of another format version.
//!
//! `cargo bench -p robotsieve-benches --bench classify`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use robotsieve_core::url::PathMode;
use robotsieve_core::Verdict;
use robotsieve_engine::Artifact;
use robotsieve_engine::{AgentClassifier, Scratch};
use robotsieve_filter::BATCH;
use std::io::BufRead;
use std::path::PathBuf;

const URLS: usize = 200_000;

fn inputs() -> Result<(Artifact, Vec<String>), String> {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/peers-data");
    let artifact = Artifact::open(&data.join("synthetic-n1000000/rules-mybot.rsv")).map_err(|e| e.to_string())?;
    let list = std::fs::File::open(data.join("synthetic-n1000000-seed1.urls.txt")).map_err(|e| e.to_string())?;
    let urls = std::io::BufReader::new(list).lines().take(URLS).map_while(Result::ok).collect();
    Ok((artifact, urls))
}

fn classify(c: &mut Criterion) {
    let (artifact, urls) = match inputs() {
        Ok(inputs) => inputs,
        Err(e) => {
            eprintln!("skipped: {e} (run the peer comparison's synthetic workload first)");
            return;
        }
    };
    let agent = artifact.agent_index("mybot").expect("the peer artifact is compiled for mybot");
    let set = robotsieve_engine::ShardSet::single(artifact);
    let classifier = AgentClassifier::new(&set, agent, PathMode::Escaped);
    let lines: Vec<&[u8]> = urls.iter().map(|u| u.as_bytes()).collect();
    let mut group = c.benchmark_group("classify_whole_corpus");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.sample_size(10);
    group.bench_function("one_by_one", |b| {
        let mut scratch = Scratch::default();
        b.iter(|| {
            lines
                .iter()
                .filter(|url| classifier.answer(url, &mut scratch, false).unwrap().verdict == Verdict::Allowed)
                .count()
        })
    });
    group.bench_function("batched", |b| {
        let mut scratch = Scratch::default();
        let mut verdicts = vec![Verdict::Invalid; BATCH];
        b.iter(|| {
            let mut allowed = 0;
            for batch in lines.chunks(BATCH) {
                let verdicts = &mut verdicts[..batch.len()];
                classifier.verdicts(batch, &mut scratch, verdicts).unwrap();
                allowed += verdicts.iter().filter(|&&v| v == Verdict::Allowed).count();
            }
            allowed
        })
    });
    group.finish();
}

criterion_group!(benches, classify);
criterion_main!(benches);
