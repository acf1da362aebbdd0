//! From robots.txt fetch results for many origins to one artifact, streamed.
//!
//! Origins are taken in batches. In each batch, every distinct body is parsed
//! once, and every group not seen before is compiled, encoded as a blob and
//! appended to the artifact at once, on every core (rayon), so that no
//! automaton outlives its batch. A group shared by many origins, in any
//! batch, is compiled and stored once: each shard remembers the id it gave a
//! group's 128-bit content hash (`KnownIds`) in memory that does not grow
//! with the number of distinct groups: a fixed table of recently first-seen
//! hashes, and a map of the hashes seen at least twice (about 48 bytes each,
//! forgotten at once beyond a quarter of the memory budget). A group seen
//! again after its table slot was taken by another, or after the map was
//! forgotten, is stored again, which costs bytes, never a verdict. Distinct
//! lists of preference lines (`Content-Signal`, `Content-Usage`) are shared
//! the same way, a hash and a set id each, and written at once; so are each
//! body's `sitemap` URLs and each crawler's `crawl-delay` (kept for the crawl
//! loop, never used for a verdict).
//!
//! What the builds of a batch hold at once is bounded, not estimated: a
//! build past [`automaton::LARGE_BUILD_BYTES`] of subset construction waits
//! until no other large build runs ([`LargeBuilds`]), and after a batch that
//! had one, the freed memory is given back to the system, so the peak
//! resident size does not depend on which large groups happen to meet.

use crate::automaton::{self, BuildGate, BuildOptions, LargeBuilds};
use rayon::prelude::*;
use robotsieve_core::preference::PreferenceLine;
use robotsieve_engine::shard_of_hash;
use robotsieve_engine::{encode_group, CrawlRefs, RuleText, Selection};
use robotsieve_engine::{ArtifactWriter, WriteError, DEFAULT_MEMORY};
use robotsieve_engine::{FetchFacts, FetchInfo, FetchKind};
use robotsieve_robotstxt::group::{Agent, Group, Rule, Source, Verb};
use robotsieve_robotstxt::parse::RobotsTxt;
use robotsieve_sources::corpus::{CopyFacts, OriginRobots, Robots};
use robotsieve_sources::Timestamp;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// Origins per batch: enough that every core has many groups to compile,
/// few enough that a batch's bodies and blobs are a few tens of megabytes.
pub const BATCH_ORIGINS: usize = 4096;

/// Bytes of memory one entry of the map of groups seen twice takes (hash,
/// id, the map's own overhead), for the memory budget.
pub const GROUP_MAP_BYTES_PER_GROUP: usize = 48;

/// Bytes of one entry of the table of recently first-seen hashes (hash, id).
pub const RECENT_BYTES_PER_SLOT: usize = 20;

/// Entries per bucket of the table of recently first-seen hashes.
const RECENT_WAYS: usize = 4;

/// The ids one shard has given to content hashes (of groups, or of lists of
/// preference lines), in memory bounded whatever the number of distinct
/// ones: a hash seen for the first time goes into a fixed table, in a bucket
/// of [`RECENT_WAYS`] entries chosen by its low bits (taking the entry of
/// the oldest hash there when the bucket is full), and one seen again there
/// moves into a map of repeated hashes, which is forgotten at once when it
/// reaches its limit. A web crawl's shared groups (the empty file,
/// `Disallow: /`, a CMS's default) recur soon and often, so they stay; the
/// long tail of files seen once costs the fixed table only. What is kept
/// depends only on the sequence of hashes the shard sees, so `--shard K/N`
/// and `--shards N` give shard K the same ids.
struct KnownIds {
    /// Hashes seen at least twice, and their ids.
    repeated: HashMap<u128, u32>,
    /// Most entries of `repeated` before it is forgotten.
    limit: usize,
    /// Per entry: a hash first seen, and its id (`u32::MAX`: none). Ids
    /// grow in the order hashes are first seen, so the smallest id of a
    /// bucket is its oldest entry.
    recent_hashes: Vec<u128>,
    recent_ids: Vec<u32>,
}

impl KnownIds {
    /// Ids for a shard of a build with this memory budget split over
    /// `shards` shards: a quarter of its share for the repeated hashes, a
    /// sixty-fourth for the table (a power of two of entries, 1,024 to 2^20).
    fn new(memory: usize, shards: usize) -> KnownIds {
        let share = memory / shards.max(1);
        let entries = (share / 64 / RECENT_BYTES_PER_SLOT).clamp(1024, 1 << 20);
        let entries = if entries.is_power_of_two() { entries } else { entries.next_power_of_two() / 2 };
        KnownIds {
            repeated: HashMap::new(),
            limit: (share / 4 / GROUP_MAP_BYTES_PER_GROUP).max(1024),
            recent_hashes: vec![0; entries],
            recent_ids: vec![u32::MAX; entries],
        }
    }

    /// The entries of the bucket of `hash`.
    fn bucket(&self, hash: u128) -> std::ops::Range<usize> {
        let first = (hash as usize & (self.recent_ids.len() / RECENT_WAYS - 1)) * RECENT_WAYS;
        first..first + RECENT_WAYS
    }

    /// The id given to `hash`, if it is still remembered.
    fn get(&mut self, hash: u128) -> Option<u32> {
        if let Some(&id) = self.repeated.get(&hash) {
            return Some(id);
        }
        let at = self.bucket(hash).find(|&i| self.recent_ids[i] != u32::MAX && self.recent_hashes[i] == hash)?;
        let id = self.recent_ids[at];
        // Known from now on as a repeated hash: its entry is free for another.
        self.recent_ids[at] = u32::MAX;
        if self.repeated.len() >= self.limit {
            self.repeated.clear();
        }
        self.repeated.insert(hash, id);
        Some(id)
    }

    /// The id of `hash` if it is still remembered, else the id `store`
    /// gives it (writing the value it hashes), remembered from now on: how
    /// preference sets and the CRAWL section's string lists are stored once
    /// per shard.
    fn id_or_store<E>(&mut self, hash: u128, store: impl FnOnce() -> Result<u32, E>) -> Result<u32, E> {
        if let Some(id) = self.get(hash) {
            return Ok(id);
        }
        let id = store()?;
        self.insert(hash, id);
        Ok(id)
    }

    /// Remembers the id of a hash [`KnownIds::get`] did not know, in place
    /// of the oldest entry of its bucket (an empty one has the largest id).
    fn insert(&mut self, hash: u128, id: u32) {
        let at = self.bucket(hash).min_by_key(|&i| self.recent_ids[i].wrapping_add(1)).expect("a bucket has entries");
        self.recent_hashes[at] = hash;
        self.recent_ids[at] = id;
    }
}

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildPlan {
    /// The crawlers, one group per origin each.
    pub agents: Vec<Agent>,
    /// Automaton options (explain mode, budget).
    pub options: BuildOptions,
    /// The memory budget in bytes (see the module documentation and
    /// [`ArtifactWriter::create`]).
    pub memory: usize,
}

impl BuildPlan {
    /// A plan for these crawlers with the given options and the default memory budget.
    pub fn new(agents: Vec<Agent>, options: BuildOptions) -> BuildPlan {
        BuildPlan { agents, options, memory: DEFAULT_MEMORY }
    }
}

/// Figures about a build, for the user and `inspect`.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    /// Origins in the artifact.
    pub origins: usize,
    /// Distinct bodies parsed (distinct within each batch).
    pub bodies: usize,
    /// Distinct groups compiled.
    pub groups: usize,
    /// States over all automata.
    pub states: usize,
    /// Groups whose build went over budget and was split.
    pub split_groups: usize,
    /// The slowest group builds: (time, number of rules, an origin using it).
    pub slowest: Vec<(Duration, usize, String)>,
    /// Wall time of parsing, compiling and writing the groups and origins.
    pub elapsed: Duration,
}

/// A compiled group: its blob, its figures, how long it took.
type Encoded = Result<(Vec<u8>, automaton::BuildStats, Duration), WriteError>;

/// A 128-bit hash of a group in its sharing form (or of a list of
/// preference lines): two SipHash runs of different prefixes. Equal values
/// hash equal; two different ones of a build collide with a chance of about
/// n^2 / 2^129.
fn content_hash(value: &impl Hash) -> u128 {
    let half = |prefix: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        prefix.hash(&mut h);
        value.hash(&mut h);
        h.finish()
    };
    u128::from(half(0)) << 64 | u128::from(half(1))
}

/// Parses, selects, deduplicates, compiles and writes every origin of
/// `origins` into `writer`, a batch at a time; `on_batch` is told the
/// figures so far after each batch (for a progress bar).
pub fn build(
    origins: impl IntoIterator<Item = impl Into<OriginRobots>>,
    plan: &BuildPlan,
    writer: &mut ArtifactWriter,
    on_batch: impl FnMut(&BuildReport),
) -> Result<BuildReport, WriteError> {
    build_shards(origins, plan, std::slice::from_mut(writer), on_batch)
}

/// [`build`] into a shard set: each origin goes to `writers[shard_of_hash(key
/// hash, writers.len())]` (see `robotsieve_engine::shards`). A group is
/// compiled once per batch and appended to every shard that uses it.
pub fn build_shards(
    origins: impl IntoIterator<Item = impl Into<OriginRobots>>,
    plan: &BuildPlan,
    writers: &mut [ArtifactWriter],
    mut on_batch: impl FnMut(&BuildReport),
) -> Result<BuildReport, WriteError> {
    let shards = writers.len();
    let shard_of = |origin: &OriginRobots| {
        if shards == 1 {
            0
        } else {
            shard_of_hash(origin.origin.hash64(), shards as u32) as usize
        }
    };
    let started = Instant::now();
    let explain = plan.options.explain;
    let unrestricted =
        Group { source: Source::Nothing, agent_lines: Vec::new(), rules: Vec::new(), preferences: Vec::new() };
    let blocked = Group {
        source: Source::Nothing,
        agent_lines: Vec::new(),
        rules: vec![Rule { verb: Verb::Disallow, pattern: b"/".to_vec(), line: 0, index_directory: false }],
        preferences: Vec::new(),
    };
    let constant_hashes = (content_hash(&unrestricted), content_hash(&blocked));
    // Every shard of a set remembers the same amount, however many of the
    // set's shards this build writes (one with `--shard K/N`).
    let set_size = writers.first().and_then(|w| w.shard()).map_or(shards, |s| s.count as usize);
    // Per shard: the id of each group hash it holds.
    let mut known: Vec<KnownIds> = (0..shards).map(|_| KnownIds::new(plan.memory, set_size)).collect();
    // Per shard: the id of each preference set (by content hash) it holds.
    let mut known_sets: Vec<KnownIds> = (0..shards).map(|_| KnownIds::new(plan.memory / 8, set_size)).collect();
    // Per shard: the id of each sitemap or crawl-delay list (by content hash) it holds.
    let mut known_lists: Vec<KnownIds> = (0..shards).map(|_| KnownIds::new(plan.memory / 8, set_size)).collect();
    // Builds past this many bytes run one at a time (see `LargeBuilds`).
    let large_builds = LargeBuilds::default();
    let mut report = BuildReport::default();
    let mut selections: Vec<Selection> = Vec::with_capacity(plan.agents.len());
    let mut origins = origins.into_iter().map(Into::into);
    loop {
        let batch: Vec<OriginRobots> = origins.by_ref().take(BATCH_ORIGINS).collect();
        let large_before = large_builds.large_builds();
        if batch.is_empty() {
            break;
        }
        // Distinct bodies of the batch, parsed once each.
        let mut body_ids: HashMap<&[u8], usize> = HashMap::new();
        let mut bodies: Vec<&[u8]> = Vec::new();
        let origin_body: Vec<Option<usize>> = batch
            .iter()
            .map(|o| match &o.robots {
                Robots::Body(body) => Some(*body_ids.entry(body).or_insert_with(|| {
                    bodies.push(body);
                    bodies.len() - 1
                })),
                Robots::Unrestricted | Robots::Blocked => None,
            })
            .collect();
        // Per body: each crawler's group, and the sitemaps (if any) with their hash.
        type BodySelection = (Vec<(u128, Selected)>, Option<(Vec<Vec<u8>>, u128)>);
        let body_groups: Vec<BodySelection> = bodies
            .par_iter()
            .map(|body| {
                let robots = RobotsTxt::parse(body);
                let sitemaps: Vec<Vec<u8>> = robots.sitemaps().into_iter().map(<[u8]>::to_vec).collect();
                let sitemaps = (!sitemaps.is_empty()).then(|| {
                    let hash = content_hash(&sitemaps);
                    (sitemaps, hash)
                });
                let selected = plan
                    .agents
                    .iter()
                    .map(|agent| {
                        let delays: Vec<Vec<u8>> =
                            Group::crawl_delays(&robots, agent).into_iter().map(<[u8]>::to_vec).collect();
                        let crawl_delay = (!delays.is_empty()).then(|| {
                            let hash = content_hash(&delays);
                            (delays, hash)
                        });
                        let mut group = Group::select(&robots, agent);
                        let mut preferences = std::mem::take(&mut group.preferences);
                        if !explain {
                            preferences.iter_mut().for_each(|p| p.line = 0);
                        }
                        let named = group.source == Source::Specific;
                        let group = dedup_form(group, explain);
                        let preferences_hash = content_hash(&preferences);
                        let hash = content_hash(&group);
                        (hash, Selected { group, preferences, preferences_hash, named, crawl_delay })
                    })
                    .collect();
                (selected, sitemaps)
            })
            .collect();
        report.bodies += bodies.len();

        // Each origin's groups: known ones by id, new ones numbered in order
        // of first use (the order they are appended in).
        // New groups of the batch, compiled once each; and per shard, which
        // of them it appends, in order of first use there.
        let mut new_groups: Vec<(&Group, usize)> = Vec::new();
        let mut batch_new: HashMap<u128, usize> = HashMap::new();
        let mut appended: Vec<Vec<usize>> = vec![Vec::new(); shards];
        let mut origin_groups: Vec<u32> = Vec::with_capacity(batch.len() * plan.agents.len());
        let origin_shards: Vec<usize> = batch.iter().map(shard_of).collect();
        for (i, (origin, body)) in batch.iter().zip(&origin_body).enumerate() {
            let k = origin_shards[i];
            let choices: Vec<(u128, &Group)> = match (&origin.robots, body) {
                (Robots::Body(_), Some(b)) => body_groups[*b].0.iter().map(|(hash, s)| (*hash, &s.group)).collect(),
                (Robots::Blocked, _) => vec![(constant_hashes.1, &blocked); plan.agents.len()],
                _ => vec![(constant_hashes.0, &unrestricted); plan.agents.len()],
            };
            for (hash, group) in choices {
                let first_new = writers[k].groups() as u32;
                let id = match known[k].get(hash) {
                    Some(id) => id,
                    None => {
                        let slot = *batch_new.entry(hash).or_insert_with(|| {
                            new_groups.push((group, i));
                            new_groups.len() - 1
                        });
                        appended[k].push(slot);
                        let id = first_new + appended[k].len() as u32 - 1;
                        known[k].insert(hash, id);
                        id
                    }
                };
                origin_groups.push(id);
            }
        }

        let encoded: Vec<Encoded> = new_groups
            .par_iter()
            .map(|&(group, _)| {
                let t = Instant::now();
                // A large build holds the token to the end of its encoding.
                let mut gate = BuildGate::on(&large_builds);
                let compiled = automaton::compile_gated(group, &plan.options, &mut gate);
                let rules: Vec<RuleText<'_>> =
                    if explain { group.rules.iter().map(rule_text).collect() } else { Vec::new() };
                let blob = encode_group(&compiled.matcher, explain, &rules)
                    .map_err(|e| WriteError::BadGroup(e.to_string()))?;
                Ok((blob, compiled.stats, t.elapsed()))
            })
            .collect();
        let mut blobs = Vec::with_capacity(encoded.len());
        for (result, &(group, first_user)) in encoded.into_iter().zip(&new_groups) {
            let (blob, stats, took) = result?;
            blobs.push(blob);
            report.groups += 1;
            report.states += stats.states();
            report.split_groups += usize::from(stats.split);
            let slow_enough = report.slowest.len() < 10 || report.slowest.last().is_some_and(|s| s.0 < took);
            if slow_enough {
                report.slowest.push((took, group.rules.len(), batch[first_user].origin.to_string()));
                report.slowest.sort_by_key(|t| std::cmp::Reverse(t.0));
                report.slowest.truncate(10);
            }
        }
        for (writer, slots) in writers.iter_mut().zip(&appended) {
            for &slot in slots {
                writer.add_group(&blobs[slot])?;
            }
        }
        drop(blobs);
        for (i, ((origin, groups), &k)) in
            batch.iter().zip(origin_groups.chunks_exact(plan.agents.len())).zip(&origin_shards).enumerate()
        {
            let info = fetch_info(&origin.robots, origin.status);
            // The preference lines of each crawler's group, stored once per shard like groups.
            let (selected, sitemaps): (&[(u128, Selected)], _) = match (&origin.robots, origin_body[i]) {
                (Robots::Body(_), Some(b)) => (&body_groups[b].0, &body_groups[b].1),
                _ => (&[], &None),
            };
            selections.clear();
            for (_, s) in selected {
                let set = if s.preferences.is_empty() {
                    None
                } else {
                    let writer = &mut writers[k];
                    Some(known_sets[k].id_or_store(s.preferences_hash, || writer.add_preference_set(&s.preferences))?)
                };
                selections.push(Selection { set, named: s.named });
            }
            // No body (unrestricted, blocked): no lines, no crawler named.
            selections.resize(plan.agents.len(), Selection::default());
            // Sitemaps and crawl-delays, each distinct list stored once per shard.
            let mut crawl = CrawlRefs { sitemaps: None, delays: vec![None; plan.agents.len()] };
            if let Some(list) = sitemaps {
                crawl.sitemaps = Some(string_list_id(&mut writers[k], &mut known_lists[k], list)?);
            }
            for (delay, (_, s)) in crawl.delays.iter_mut().zip(selected) {
                if let Some(list) = &s.crawl_delay {
                    *delay = Some(string_list_id(&mut writers[k], &mut known_lists[k], list)?);
                }
            }
            let facts = fetch_facts(&origin.copy);
            writers[k].add_origin_with_extras(&origin.origin, info, groups, &selections, &crawl, facts)?;
        }
        report.origins += batch.len();
        report.elapsed = started.elapsed();
        drop(batch);
        // Only large builds leave enough freed memory to be worth the
        // trim (and the page faults of touching it again): trimming after
        // every batch cost the whole real corpus, whose batches compile
        // little, 6% more CPU time.
        if large_builds.large_builds() > large_before {
            return_freed_memory();
        }
        on_batch(&report);
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// What the artifact keeps of an origin's governing copy for the cache
/// policy: its time in whole seconds, its `max_age` (at most what the
/// format holds), its failures in a row.
pub fn fetch_facts(copy: &CopyFacts) -> FetchFacts {
    FetchFacts {
        fetched_at: copy.fetched_at.map(|t| t.unix_seconds()),
        max_age: copy.max_age.map(|a| u32::try_from(a).unwrap_or(u32::MAX)),
        failures_in_a_row: copy.failures_in_a_row,
    }
}

/// The copy's facts an artifact kept ([`fetch_facts`]), as the cache policy
/// reads them (`CachePolicy::freshness_of`): the inverse of
/// [`fetch_facts`] but for what the artifact does not keep (the time's
/// fraction of a second, a max-age past what [`FetchFacts`] holds).
pub fn copy_facts(facts: &FetchFacts) -> CopyFacts {
    CopyFacts {
        fetched_at: facts.fetched_at.map(|t| Timestamp::from_unix_nanos(t, 0)),
        max_age: facts.max_age.map(u64::from),
        failures_in_a_row: facts.failures_in_a_row,
    }
}

/// Gives the memory freed by a batch back to the system (glibc's
/// `malloc_trim`: every free page of every arena, not only the top of the
/// heap), after a batch that had a large build. Without it, the pages a batch's builds used and freed stay
/// resident, scattered between live blocks, and the resident size grows
/// well past what is live (`compile_scale`'s trace shows it), and the next
/// batch's peak comes on top of what fragmentation left. Elsewhere a no-op.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it may be called at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Builds an artifact in memory: [`build`] into an in-memory writer
/// (tests, and tools that hold small artifacts).
pub fn build_bytes(
    origins: impl IntoIterator<Item = impl Into<OriginRobots>>,
    plan: &BuildPlan,
) -> Result<(Vec<u8>, BuildReport), WriteError> {
    let agent_names = plan.agents.iter().map(|a| a.to_string()).collect();
    let mut writer = ArtifactWriter::in_memory(agent_names, plan.options.explain)?;
    let report = build(origins, plan, &mut writer, |_| {})?;
    Ok((writer.finish_bytes()?, report))
}

fn rule_text(rule: &Rule) -> RuleText<'_> {
    RuleText {
        line: rule.line,
        allow: rule.verb == Verb::Allow,
        index_directory: rule.index_directory,
        pattern: &rule.pattern,
    }
}

/// One crawler's group of one body: in the form groups are shared in, and
/// what the preferences section keeps beside it.
struct Selected {
    group: Group,
    /// Its preference lines (line numbers 0 without explanations).
    preferences: Vec<PreferenceLine>,
    /// [`content_hash`] of `preferences`.
    preferences_hash: u128,
    /// Whether a group of the body names the crawler.
    named: bool,
    /// The group's `crawl-delay` values in file order (none: `None`), and
    /// their [`content_hash`].
    crawl_delay: Option<(Vec<Vec<u8>>, u128)>,
}

/// A list of strings for the CRAWL section (sitemaps, a crawl-delay), once
/// per shard: the id of a list already written there (by content hash), or
/// the id of the list written now.
fn string_list_id(
    writer: &mut ArtifactWriter,
    known: &mut KnownIds,
    (list, hash): &(Vec<Vec<u8>>, u128),
) -> Result<u32, WriteError> {
    known.id_or_store(*hash, || {
        let strings: Vec<&[u8]> = list.iter().map(Vec::as_slice).collect();
        writer.add_string_list(&strings)
    })
}

/// What the artifact records of an origin's fetch.
pub fn fetch_info(robots: &Robots, status: u16) -> FetchInfo {
    let kind = match robots {
        Robots::Body(_) => FetchKind::Rules,
        Robots::Unrestricted => FetchKind::Unrestricted,
        Robots::Blocked => FetchKind::Blocked,
    };
    FetchInfo { kind, status }
}

/// The form in which groups are compared for sharing. With explanations,
/// lines matter, so the group is kept whole. Without, only the set of
/// (verb, pattern) pairs decides a verdict, so the rules are sorted and
/// deduplicated and the rest dropped: more origins share one automaton.
/// Preferences never change a verdict, so they are no part of it either.
fn dedup_form(mut group: Group, explain: bool) -> Group {
    group.preferences.clear();
    if explain {
        return group;
    }
    group.agent_lines.clear();
    group.source = Source::Nothing;
    for rule in &mut group.rules {
        rule.line = 0;
        rule.index_directory = false;
    }
    group.rules.sort_by(|a, b| (&a.pattern, a.verb == Verb::Allow).cmp(&(&b.pattern, b.verb == Verb::Allow)));
    group.rules.dedup();
    group
}

#[cfg(test)]
mod tests {
    use super::*;
    use robotsieve_core::url::{OriginKey, PathMode};
    use robotsieve_engine::Artifact;

    /// What the artifact keeps of a copy reads back as the copy, but for
    /// the parts it does not keep.
    #[test]
    fn copy_facts_read_back_what_fetch_facts_kept() {
        let whole = CopyFacts {
            fetched_at: Some(Timestamp::from_unix_nanos(1_796_000_000, 0)),
            max_age: Some(86_400),
            failures_in_a_row: Some(3),
        };
        for copy in [whole, CopyFacts::default(), CopyFacts { failures_in_a_row: None, ..whole }] {
            assert_eq!(copy_facts(&fetch_facts(&copy)), copy);
        }
        let lossy = CopyFacts {
            fetched_at: Some(Timestamp::from_unix_nanos(1_796_000_000, 500)),
            max_age: Some(u64::MAX),
            failures_in_a_row: None,
        };
        let kept = copy_facts(&fetch_facts(&lossy));
        assert_eq!(kept.fetched_at, Some(Timestamp::from_unix_nanos(1_796_000_000, 0)));
        assert_eq!(kept.max_age, Some(u64::from(u32::MAX)));
    }

    /// Resolves one fetch record per origin, as `compile --corpus` would.
    pub(crate) fn resolve(records: &[(&str, u16, &str)]) -> Vec<robotsieve_sources::corpus::Governing> {
        let mut corpus = robotsieve_sources::corpus::Corpus::new();
        let lines: String = records
            .iter()
            .map(|(origin, status, body)| {
                let record = serde_json::json!({"url": format!("{origin}/robots.txt"), "status": status, "body": body});
                format!("{record}\n")
            })
            .collect();
        corpus.add_jsonl_from("test.jsonl".into(), lines.as_bytes()).unwrap();
        corpus.resolve().origins.into_values().collect()
    }

    fn artifact(explain: bool) -> Artifact {
        let body = "user-agent: *\ndisallow: /private\nallow: /private/ok\n\nuser-agent: mybot\ndisallow: /\n";
        let origins = resolve(&[
            ("https://a.example", 200, body),
            ("http://a.example", 200, body),
            ("https://b.example:8443", 200, "user-agent: *\ndisallow: /b$\n"),
            ("https://down.example", 503, ""),
            ("https://gone.example", 404, ""),
        ]);
        let agents = vec![Agent::parse("otherbot").unwrap(), Agent::parse("mybot").unwrap()];
        let plan = BuildPlan::new(agents, BuildOptions { explain, ..BuildOptions::default() });
        let (bytes, report) = build_bytes(origins, &plan).unwrap();
        assert_eq!(report.origins, 5);
        assert_eq!(report.bodies, 2);
        Artifact::from_bytes(&bytes).unwrap()
    }

    fn allowed(a: &Artifact, agent: usize, key: &str, path: &str) -> Option<bool> {
        let key = OriginKey::of_url(key).unwrap();
        let origin = a.find_origin(key.as_bytes(), key.hash64())?;
        let path = PathMode::Escaped.path_of(path.as_bytes());
        Some(a.decide(a.group_of(origin, agent), &path).unwrap().allowed())
    }

    #[test]
    fn round_trip_through_the_artifact() {
        for explain in [false, true] {
            let a = artifact(explain);
            assert_eq!(a.origins(), 5);
            assert_eq!(allowed(&a, 0, "https://a.example", "/private/x"), Some(false));
            assert_eq!(allowed(&a, 0, "https://a.example", "/private/ok"), Some(true));
            assert_eq!(allowed(&a, 1, "http://a.example", "/anything"), Some(false));
            assert_eq!(allowed(&a, 0, "https://b.example:8443", "/b"), Some(false));
            assert_eq!(allowed(&a, 0, "https://b.example:8443", "/bb"), Some(true));
            assert_eq!(allowed(&a, 0, "https://down.example", "/"), Some(false));
            assert_eq!(allowed(&a, 1, "https://gone.example", "/x"), Some(true));
            assert_eq!(allowed(&a, 0, "https://c.example", "/x"), None);
            assert_eq!(allowed(&a, 0, "https://b.example", "/b"), None, "other port, other origin");
        }
    }

    #[test]
    fn explanations_name_the_line() {
        let a = artifact(true);
        assert!(a.explains());
        let key = OriginKey::of_url("https://a.example").unwrap();
        let origin = a.find_origin(key.as_bytes(), key.hash64()).unwrap();
        let outcome = a.decide(a.group_of(origin, 0), b"/private/ok/x").unwrap();
        let rule = a.explain(&outcome).unwrap().unwrap();
        assert_eq!((rule.line, rule.allow, rule.pattern), (3, true, &b"/private/ok"[..]));
        assert_eq!(rule.to_string(), "allow: /private/ok");
    }

    #[test]
    fn identical_groups_are_shared() {
        // Without explanations: otherbot on a.example (both schemes) shares one
        // group; mybot's `disallow: /` there is the very group a blocked origin
        // gets; b.example (both agents) and the unrestricted origin one each.
        assert_eq!(artifact(false).groups(), 4);
        // With explanations lines matter: mybot's line-6 rule is not the
        // blocked origin's synthetic rule.
        assert_eq!(artifact(true).groups(), 5);
    }

    #[test]
    fn known_ids_keep_repeated_hashes_in_bounded_memory() {
        let mut known = KnownIds::new(0, 1);
        assert_eq!(known.recent_ids.len(), 1024, "the smallest table");
        let buckets = (1024 / RECENT_WAYS) as u128;
        assert_eq!(known.get(7), None);
        known.insert(7, 0);
        assert_eq!(known.get(7), Some(0), "found in the table, and now repeated");
        // Hashes of 7's bucket: while it has room (7's entry was freed when
        // it became a repeated hash), each is kept; then the oldest goes.
        for k in 1..=RECENT_WAYS as u128 {
            known.insert(7 + k * buckets, k as u32);
        }
        assert_eq!(known.get(7), Some(0));
        assert_eq!(known.get(7 + buckets), Some(1), "kept: the bucket had room");
        known.insert(7 + 9 * buckets, 9);
        known.insert(7 + 10 * buckets, 10);
        assert_eq!(known.get(7 + 2 * buckets), None, "seen once, the oldest of a full bucket");
        assert_eq!(known.get(7 + 3 * buckets), Some(3));
        assert_eq!(known.get(7 + 10 * buckets), Some(10));
        // A million hashes seen once each leave the table its size and the
        // repeated map as it was.
        for h in 0..1_000_000u128 {
            if known.get(h << 20 | 3).is_none() {
                known.insert(h << 20 | 3, h as u32);
            }
        }
        assert_eq!(known.recent_ids.len(), 1024);
        assert_eq!(known.repeated.len(), 4);
        // Past its limit the repeated map is forgotten at once, never grown.
        for h in 0..3000u128 {
            known.insert(h << 40, 5);
            known.get(h << 40);
        }
        assert!(known.repeated.len() <= known.limit, "{} > {}", known.repeated.len(), known.limit);
    }
}
