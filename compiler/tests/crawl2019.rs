//! The crawl2019 URL list of ../shared/realworld with its own robots.txt
//! files, compiled as a corpus of http and https records: every URL's verdict
//! through the artifact equals the per-rule oracle on its host's file, for
//! googlebot and mybot, in both URL modes; through one artifact and through
//! a shard set of 7.

use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build_bytes, build_shards, BuildPlan};
use robotsieve_compiler::conformance::shared_dir;
use robotsieve_compiler::corpus::Corpus;
use robotsieve_compiler::writer::ArtifactWriter;
use robotsieve_compiler::{Agent, Group, RobotsTxt};
use robotsieve_engine::artifact::{Artifact, ShardInfo};
use robotsieve_engine::classify::{AgentClassifier, Scratch};
use robotsieve_engine::filter::BATCH;
use robotsieve_engine::shards::{ShardSet, SHARD_SCHEME};
use robotsieve_engine::url::{KeyBuf, PathMode};
use robotsieve_engine::verdict::Verdict;
use std::collections::BTreeMap;

#[test]
fn crawl2019_verdicts_equal_the_oracle() {
    let Some(root) = shared_dir().map(|d| d.join("realworld")).filter(|d| d.join("urls").is_dir()) else {
        eprintln!("skipped: ../shared/realworld is absent");
        return;
    };
    let list = std::fs::read_to_string(root.join("urls/crawl2019-linkgraph.tsv")).unwrap();
    // host -> robots file, and the URLs in list order.
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut urls: Vec<(String, String)> = Vec::new();
    for line in list.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (host, url, file) = (cols[0], cols[1], cols[2]);
        if !file.is_empty() && !files.contains_key(host) {
            files.insert(host.to_string(), std::fs::read(root.join(file)).unwrap());
        }
        urls.push((host.to_string(), url.to_string()));
    }
    let mut records = String::new();
    for (host, body) in &files {
        for scheme in ["http", "https"] {
            let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, body);
            let record =
                serde_json::json!({"url": format!("{scheme}://{host}/robots.txt"), "status": 200, "body_b64": b64});
            records.push_str(&format!("{record}\n"));
        }
    }
    let mut corpus = Corpus::new();
    corpus.add_jsonl_from("crawl2019.jsonl".into(), records.as_bytes()).unwrap();
    let agents = [Agent::parse("googlebot").unwrap(), Agent::parse("mybot").unwrap()];
    let plan = BuildPlan::new(agents.to_vec(), BuildOptions::default());
    let resolved = corpus.resolve().origins;
    let whole = Artifact::from_bytes(&build_bytes(resolved.values().cloned(), &plan).unwrap().0).unwrap();
    let mut writers: Vec<ArtifactWriter> = (0..7)
        .map(|k| {
            let mut w = ArtifactWriter::in_memory(agents.iter().map(|a| a.to_string()).collect(), false).unwrap();
            w.set_shard(ShardInfo { index: k, count: 7, scheme: SHARD_SCHEME.into() });
            w
        })
        .collect();
    build_shards(resolved.into_values(), &plan, &mut writers, |_| {}).unwrap();
    let shards = writers.into_iter().map(|w| Artifact::from_bytes(&w.finish_bytes().unwrap()).unwrap()).collect();
    let sets = [ShardSet::single(whole), ShardSet::from_artifacts(shards).unwrap()];
    assert_eq!(sets[0].origins(), sets[1].origins());

    let groups: BTreeMap<(&str, usize), Group> = files
        .iter()
        .flat_map(|(host, body)| {
            let robots = RobotsTxt::parse(body);
            agents
                .iter()
                .enumerate()
                .map(move |(a, agent)| ((host.as_str(), a), Group::select(&robots, agent)))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut checked = [0usize; 4];
    for (set, (a, _)) in sets.iter().flat_map(|set| agents.iter().enumerate().map(move |a| (set, a))) {
        for mode in [PathMode::Escaped, PathMode::Raw] {
            let classifier = AgentClassifier::new(set, a, mode);
            let mut scratch = Scratch::default();
            let mut key = KeyBuf::new();
            // The filter's path: URLs in batches, each step of the lookup interleaved across a batch.
            let lines: Vec<&[u8]> = urls.iter().map(|(_, url)| url.as_bytes()).collect();
            let mut batched = vec![Verdict::Invalid; lines.len()];
            for (batch, verdicts) in lines.chunks(BATCH).zip(batched.chunks_mut(BATCH)) {
                classifier.verdicts(batch, &mut scratch, verdicts).unwrap();
            }
            for ((host, url), batched) in urls.iter().zip(batched) {
                let got = classifier.answer(url.as_bytes(), &mut scratch, false).unwrap().verdict;
                assert_eq!(batched, got, "{url}: batched and single verdicts differ for agent {a} ({mode:?})");
                checked[got.index()] += 1;
                let Some(group) = groups.get(&(host.as_str(), a)) else {
                    assert_eq!(got, Verdict::Unknown, "{url}: no robots.txt for {host}");
                    continue;
                };
                let Ok(origin) = key.parse(url.as_bytes()) else {
                    assert_eq!(got, Verdict::Invalid, "{url}");
                    continue;
                };
                let want = group.decide(&origin.path_for(mode)).allowed();
                let want = if want { Verdict::Allowed } else { Verdict::Disallowed };
                assert_eq!(got, want, "{url} for agent {a} ({mode:?}, {} shards)", set.shards().len());
            }
        }
    }
    eprintln!(
        "{} URLs x 2 agents x 2 modes x (1 artifact, 7 shards): {} allowed, {} disallowed, {} unknown, {} invalid",
        urls.len(),
        checked[0],
        checked[1],
        checked[2],
        checked[3]
    );
    assert!(checked[1] > 0 && checked[0] > 0, "both verdicts must be exercised");
}
