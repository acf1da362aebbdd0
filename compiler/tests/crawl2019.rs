//! The crawl2019 URL list of ../shared/realworld with its own robots.txt
//! files, compiled as a corpus of http and https records: every URL's verdict
//! through the artifact equals the per-rule oracle on its host's file, for
//! googlebot and mybot, in both URL modes; through one artifact and through
//! a shard set of 7.

use robotsieve_compiler::automaton::BuildOptions;
use robotsieve_compiler::build::{build_bytes, build_shards, BuildPlan};
use robotsieve_core::url::{KeyBuf, PathMode};
use robotsieve_core::Verdict;
use robotsieve_engine::testing::GroupHead;
use robotsieve_engine::testing::GROUPS_START;
use robotsieve_engine::ArtifactWriter;
use robotsieve_engine::{AgentClassifier, Scratch};
use robotsieve_engine::{Artifact, ArtifactError, ShardInfo};
use robotsieve_engine::{ShardSet, SHARD_SCHEME};
use robotsieve_filter::BATCH;
use robotsieve_robotstxt::{Agent, Group, RobotsTxt};
use robotsieve_sources::corpus::Corpus;
use robotsieve_testkit::differential::Rng;
use robotsieve_testkit::shared_dir;
use std::collections::BTreeMap;

/// The crawl2019 list: its hosts' robots.txt files, the URLs in list order
/// (with their hosts), and the corpus of an http and an https record per
/// host; `None` when ../shared/realworld is absent.
struct Crawl2019 {
    files: BTreeMap<String, Vec<u8>>,
    urls: Vec<(String, String)>,
    corpus: Corpus,
}

fn crawl2019() -> Option<Crawl2019> {
    let root = shared_dir().map(|d| d.join("realworld")).filter(|d| d.join("urls").is_dir())?;
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
    Some(Crawl2019 { files, urls, corpus })
}

#[test]
fn crawl2019_verdicts_equal_the_oracle() {
    let Some(Crawl2019 { files, urls, corpus }) = crawl2019() else {
        eprintln!("skipped: ../shared/realworld is absent");
        return;
    };
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
            // The grouped path over a window of many origins in no order:
            // the whole list permuted, in one batch, the verdicts put back.
            let n = lines.len();
            let step = (n / 3..).find(|s| gcd(*s, n) == 1).expect("a step prime to the length");
            let order: Vec<usize> = (0..n).map(|i| i * step % n).collect();
            let permuted: Vec<&[u8]> = order.iter().map(|&i| lines[i]).collect();
            let mut grouped = vec![Verdict::Invalid; n];
            classifier.verdicts(&permuted, &mut scratch, &mut grouped).unwrap();
            for (&i, &verdict) in order.iter().zip(&grouped) {
                assert_eq!(verdict, batched[i], "{}: permuted and in order verdicts differ ({mode:?})", urls[i].1);
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

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Every verdict of `set` on `lines` for each agent (escaped paths), in
/// batches as the filter asks them; the first error instead, if any.
fn verdicts_of(set: &ShardSet, lines: &[&[u8]]) -> Result<Vec<Vec<Verdict>>, ArtifactError> {
    (0..set.meta().agents.len())
        .map(|a| {
            let classifier = AgentClassifier::new(set, a, PathMode::Escaped);
            let mut scratch = Scratch::default();
            let mut verdicts = vec![Verdict::Invalid; lines.len()];
            for (batch, out) in lines.chunks(BATCH).zip(verdicts.chunks_mut(BATCH)) {
                classifier.verdicts(batch, &mut scratch, out)?;
            }
            Ok(verdicts)
        })
        .collect()
}

/// 150 copies of the crawl2019 artifact, each with one to four random bytes
/// changed (checksums as they were): opening checks only the header and the
/// index, and each group is checked on its first use, so each copy is
/// refused at open, or answers crawl2019's URLs with a typed error naming
/// the damaged group, or (when no URL reaches the damage) with exactly the
/// undamaged verdicts; and `verify`, which checks every byte, refuses every
/// copy that opens.
#[test]
fn damaged_copies_of_the_crawl2019_artifact_fail_or_answer_as_the_original() {
    let Some(Crawl2019 { urls, corpus, .. }) = crawl2019() else {
        eprintln!("skipped: ../shared/realworld is absent");
        return;
    };
    let agents = vec![Agent::parse("googlebot").unwrap(), Agent::parse("mybot").unwrap()];
    let plan = BuildPlan::new(agents, BuildOptions::default());
    let bytes = build_bytes(corpus.resolve().origins.into_values(), &plan).unwrap().0;
    let lines: Vec<&[u8]> = urls.iter().map(|(_, url)| url.as_bytes()).collect();
    let sound = ShardSet::single(Artifact::from_bytes(&bytes).unwrap());
    let original = verdicts_of(&sound, &lines).unwrap();
    // The bytes of the group blobs the URLs reach: damage there must fail a lookup.
    let mut key = KeyBuf::new();
    let mut reached = vec![false; sound.groups()];
    for url in &lines {
        let Ok(origin) = key.parse(url) else { continue };
        let Some(o) = sound.find_origin(origin.key, robotsieve_core::url::origin_hash(origin.key)) else { continue };
        for a in 0..2 {
            reached[sound.group_of(o, a)] = true;
        }
    }
    let mut blobs = Vec::new();
    let mut at = GROUPS_START;
    for _ in 0..sound.groups() {
        let len = GroupHead::decode(&bytes[at..]).len as usize;
        blobs.push(at..at + len);
        at += len;
    }
    let in_reached_group = |byte: usize| blobs.iter().zip(&reached).any(|(blob, &r)| r && blob.contains(&byte));
    let mut rng = Rng(0x5eed_2019_dead_beef);
    let (mut at_open, mut at_lookup, mut unreached) = (0, 0, 0);
    for copy in 0..150 {
        let mut damaged = bytes.clone();
        let mut changed = Vec::new();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(damaged.len());
            damaged[at] ^= 1 + rng.below(255) as u8;
            changed.push(at);
        }
        let artifact = match Artifact::from_bytes(&damaged) {
            Err(e) => {
                assert!(e.to_string().contains("not a valid robotsieve artifact"), "copy {copy}: {e}");
                at_open += 1;
                continue;
            }
            Ok(artifact) => artifact,
        };
        let set = ShardSet::single(artifact);
        match verdicts_of(&set, &lines) {
            Err(e) => {
                let shown = e.to_string();
                assert!(
                    matches!(e, ArtifactError::DamagedGroup { origin: Some(_), .. }) && shown.contains("(the rules of"),
                    "copy {copy} (bytes {changed:?}): {shown}"
                );
                at_lookup += 1;
            }
            Ok(got) => {
                assert!(got == original, "copy {copy} (bytes {changed:?}) answers differently");
                assert!(
                    !changed.iter().any(|&b| in_reached_group(b)),
                    "copy {copy}: damage a URL reaches went unnoticed"
                );
                unreached += 1;
            }
        }
        assert!(set.verify().is_err(), "copy {copy} (bytes {changed:?}) passes verify");
    }
    eprintln!(
        "150 damaged copies of the {}-byte artifact: {at_open} refused at open, {at_lookup} failed at a lookup, {unreached} answered as the original (damage no URL reached)",
        bytes.len()
    );
    assert_eq!(at_open + at_lookup + unreached, 150);
}
